#!/usr/bin/env python3
"""Issue 18 item 5: Strata and MariaDB 10.11 side by side in one run, same work, same client.

Starts both servers (each on a private data directory, 128 MiB buffer pool, 8 MiB key
cache, 2 MiB sort buffer; Strata with an explicit --max-memory), loads the same
sysbench table into each, then, one server at a time:

  1. RSS with 1000 idle connections (each connected and ran `SELECT 1`), and the
     increment per connection from the RSS before they connected;
  2. peak RSS while 300 connections each run
     `SELECT id, pad FROM t ORDER BY pad DESC, id LIMIT 5 OFFSET 50000` at once, and the
     RSS once they have ended and disconnected (the 300 answers must all be the same;
     across servers they differ, sysbench prepare drawing other rows on each);
  3. peak RSS during `sysbench oltp_read_write --threads=256 --time=60`.

RSS is VmRSS of /proc/PID/status, sampled every 20 ms; the peak is the larger of the
samples and VmHWM, which is reset (clear_refs 5) before each step so it holds that
step's peak. For Strata, `information_schema.STRATA_MEMORY` is read every 250 ms during
steps 2 and 3 and the reading nearest the peak is printed, so an excess can be
attributed to a component.

usage: tests/memory/side_by_side.py --strata BIN [--max-memory 1G] [--port-base 6250]
       [--rows 100000] [--sb-time 60] [--sb-threads 256] [--idle 1000] [--sorts 300]
       [--workdir DIR] [--only strata|mariadb]
Needs: pymysql, sysbench, mariadb-install-db and mariadbd (Debian's mariadb-server).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pymysql

SORT_QUERY = "SELECT id, pad FROM sbtest1 ORDER BY pad DESC, id LIMIT 5 OFFSET 50000"
DB = "mem5"


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_hwm(pid):
    # Writing 5 to clear_refs resets the peak RSS (VmHWM) to the current RSS.
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def connect(port, db=None):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           database=db, autocommit=True, connect_timeout=60,
                           read_timeout=600, write_timeout=600)


def wait_for(port, proc, what):
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{what} exited with {proc.returncode} while starting")
        try:
            connect(port).close()
            return
        except pymysql.err.OperationalError:
            time.sleep(0.3)
    sys.exit(f"{what} did not accept connections on {port}")


class Sampler:
    """Samples VmRSS every 20 ms (and, for Strata, STRATA_MEMORY every 250 ms)."""

    def __init__(self, pid, port=None):
        self.pid, self.port = pid, port
        self.peak, self.peak_at = 0, 0.0
        self.readings = []  # (time, rss KiB, {event: (current, high)})
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.rss, daemon=True)]
        # Connected before the work starts: a connection opened while the statements
        # hold the working memory may wait for its charge and be refused (3170).
        self.monitor = connect(port) if port is not None else None
        if port is not None:
            self.threads.append(threading.Thread(target=self.components, daemon=True))

    def __enter__(self):
        reset_hwm(self.pid)
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        for t in self.threads:
            t.join()
        self.peak = max(self.peak, status_kib(self.pid, "VmHWM"))

    def rss(self):
        while not self.stop.is_set():
            r = status_kib(self.pid, "VmRSS")
            if r > self.peak:
                self.peak, self.peak_at = r, time.time()
            time.sleep(0.02)

    def components(self):
        with self.monitor as c:
            while not self.stop.is_set():
                with c.cursor() as cur:
                    cur.execute("SELECT EVENT_NAME, CURRENT_NUMBER_OF_BYTES_USED, "
                                "HIGH_NUMBER_OF_BYTES_USED FROM information_schema.STRATA_MEMORY")
                    rows = {r[0]: (int(r[1]), int(r[2])) for r in cur.fetchall()}
                self.readings.append((time.time(), status_kib(self.pid, "VmRSS"), rows))
                self.stop.wait(0.25)

    def at_peak(self):
        if not self.readings:
            return None
        return min(self.readings, key=lambda r: abs(r[0] - self.peak_at))


def sysbench(port, *args, log):
    cmd = ["sysbench", "oltp_read_write", "--db-driver=mysql", "--mysql-host=127.0.0.1",
           f"--mysql-port={port}", "--mysql-user=root", "--mysql-password=",
           f"--mysql-db={DB}", "--tables=1", "--rand-seed=1", *args]
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit(f"sysbench failed ({' '.join(args)}), see {log}")


def sysbench_figures(log):
    tps = qps = errors = None
    with open(log) as f:
        for line in f:
            s = line.strip()
            if s.startswith("transactions:"):
                tps = float(s.split("(")[1].split()[0])
            elif s.startswith("queries:"):
                qps = float(s.split("(")[1].split()[0])
            elif s.startswith("ignored errors:"):
                errors = int(s.split()[2])
    return tps, qps, errors


def step_idle(pid, port, n):
    time.sleep(2)
    before = status_kib(pid, "VmRSS")
    conns = []
    for _ in range(n):
        c = connect(port)
        with c.cursor() as cur:
            cur.execute("SELECT 1")
            cur.fetchall()
        conns.append(c)
    time.sleep(3)  # idle: Strata gives back a connection's stack pages after 1 s
    with_conns = status_kib(pid, "VmRSS")
    for c in conns:
        c.close()
    return before, with_conns


def step_sorts(pid, port, n):
    conns = [connect(port, DB) for _ in range(n)]
    results, errors = [None] * n, []
    barrier = threading.Barrier(n)

    def run(i):
        try:
            barrier.wait()
            with conns[i].cursor() as cur:
                cur.execute(SORT_QUERY)
                results[i] = cur.fetchall()
        except Exception as e:  # reported below, not hidden
            errors.append(f"connection {i}: {e!r}")

    sampler = Sampler(pid, port if pid_is_strata(pid) else None)
    with sampler as s:
        t0 = time.time()
        threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.time() - t0
    for c in conns:
        c.close()
    time.sleep(3)
    after = status_kib(pid, "VmRSS")
    if errors:
        sys.exit("sorts failed:\n" + "\n".join(errors[:10]))
    if any(r != results[0] for r in results):
        sys.exit("the 300 sorts did not all return the same rows")
    return s, after, took, results[0]


STRATA_PIDS = set()


def pid_is_strata(pid):
    return pid in STRATA_PIDS


def step_sysbench(pid, port, threads, secs, log):
    with Sampler(pid, port if pid_is_strata(pid) else None) as s:
        sysbench(port, f"--threads={threads}", f"--time={secs}", "--report-interval=0",
                 "--db-ps-mode=auto", "run", log=log)
    time.sleep(3)
    after = status_kib(pid, "VmRSS")
    return s, after, sysbench_figures(log)


def start_strata(binary, port, work, max_memory):
    datadir = os.path.join(work, "strata-data")
    log = open(os.path.join(work, "strata.log"), "w")
    cmd = [binary, "server", "--port", str(port), "--datadir", datadir,
           "--max-memory", max_memory, "--innodb-buffer-pool-size", "128M",
           "--key-buffer-size", "8M", "--sort-buffer-size", "2M",
           "--max-connections", "2000", "--tmpdir", work]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    STRATA_PIDS.add(p.pid)
    wait_for(port, p, "strata")
    return p, " ".join(cmd[1:]).replace(work, "$WORK")


def start_mariadb(port, work):
    datadir = os.path.join(work, "mariadb-data")
    sock = os.path.join(work, "mariadb.sock")
    with open(os.path.join(work, "mariadb-install.log"), "w") as log:
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={datadir}",
                        "--user=root", "--auth-root-authentication-method=normal",
                        "--skip-test-db"], stdout=log, stderr=subprocess.STDOUT, check=True)
    log = open(os.path.join(work, "mariadb.log"), "w")
    cmd = ["mariadbd", "--no-defaults", f"--datadir={datadir}", f"--port={port}",
           f"--socket={sock}", "--bind-address=127.0.0.1", "--user=root",
           "--max-connections=2000", "--innodb-buffer-pool-size=128M",
           "--sort-buffer-size=2M", "--key-buffer-size=8M", f"--tmpdir={work}",
           f"--pid-file={os.path.join(work, 'mariadb.pid')}"]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    wait_for(port, p, "mariadbd")
    return p, " ".join(cmd[1:]).replace(work, "$WORK")


def mib(kib):
    return f"{kib / 1024:,.0f} MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strata", required=True, help="the strata binary")
    ap.add_argument("--max-memory", default="1G")
    ap.add_argument("--port-base", type=int, default=6250)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--idle", type=int, default=1000)
    ap.add_argument("--sorts", type=int, default=300)
    ap.add_argument("--sb-threads", type=int, default=256)
    ap.add_argument("--sb-time", type=int, default=60)
    ap.add_argument("--workdir")
    ap.add_argument("--only", choices=["strata", "mariadb"])
    a = ap.parse_args()

    work = a.workdir or tempfile.mkdtemp(prefix="strata-mem-")
    os.makedirs(work, exist_ok=True)
    print(f"work directory {work}", flush=True)
    servers = []
    procs = []
    try:
        if a.only != "mariadb":
            p, cmd = start_strata(a.strata, a.port_base, work, a.max_memory)
            procs.append(p)
            servers.append(("Strata", p, a.port_base, cmd))
        if a.only != "strata":
            p, cmd = start_mariadb(a.port_base + 1, work)
            procs.append(p)
            servers.append(("MariaDB", p, a.port_base + 1, cmd))
        for name, p, port, cmd in servers:
            print(f"{name}: {cmd}", flush=True)

        rows = {}
        for name, p, port, _ in servers:
            log = os.path.join(work, f"sysbench-{name}.log")
            c = connect(port)
            with c.cursor() as cur:
                cur.execute(f"DROP DATABASE IF EXISTS {DB}")
                cur.execute(f"CREATE DATABASE {DB}")
            c.close()
            sysbench(port, f"--table-size={a.rows}", "prepare", log=log)
            base = status_kib(p.pid, "VmRSS")
            print(f"{name}: loaded {a.rows} rows; RSS {mib(base)}", flush=True)

            before, idle = step_idle(p.pid, port, a.idle)
            per = (idle - before) / a.idle
            print(f"{name}: {a.idle} idle connections: RSS {mib(before)} -> {mib(idle)} "
                  f"(+{per:.1f} KiB each)", flush=True)

            s2, after2, took2, _ = step_sorts(p.pid, port, a.sorts)
            print(f"{name}: {a.sorts} sorts in {took2:.1f} s: peak {mib(s2.peak)}, "
                  f"after {mib(after2)}", flush=True)
            at = s2.at_peak()
            if at:
                print(f"  STRATA_MEMORY nearest the peak (RSS {mib(at[1])}): "
                      + ", ".join(f"{k.split('/')[-1]}={v[0] >> 10} KiB"
                                  for k, v in at[2].items() if v[0]), flush=True)

            open(log, "a").close()
            sb_log = os.path.join(work, f"sysbench-run-{name}.log")
            s3, after3, (tps, qps, errs) = step_sysbench(p.pid, port, a.sb_threads,
                                                         a.sb_time, sb_log)
            print(f"{name}: sysbench oltp_read_write {a.sb_threads} threads {a.sb_time} s: "
                  f"peak {mib(s3.peak)}, after {mib(after3)}, {tps} tps, {qps} qps, "
                  f"{errs} ignored errors", flush=True)
            at = s3.at_peak()
            if at:
                print(f"  STRATA_MEMORY nearest the peak (RSS {mib(at[1])}): "
                      + ", ".join(f"{k.split('/')[-1]}={v[0] >> 10} KiB"
                                  for k, v in at[2].items() if v[0]), flush=True)
            rows[name] = (before, idle, per, s2.peak, after2, took2, s3.peak, after3, tps)

        # Not compared across the servers: sysbench prepare draws other random rows on
        # each (with the same --rand-seed), so their sorts' answers differ. Each server's
        # 300 answers are compared with each other in step_sorts.

        budget = a.max_memory
        print()
        print(f"| server | RSS before idle | {a.idle} idle | per idle connection "
              f"| {a.sorts} sorts: peak | after | time "
              f"| sysbench rw {a.sb_threads} thr: peak | after | tps |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for name, r in rows.items():
            label = f"Strata (--max-memory {budget})" if name == "Strata" else "MariaDB 10.11"
            print(f"| {label} | {mib(r[0])} | {mib(r[1])} | +{r[2]:.1f} KiB | {mib(r[3])} "
                  f"| {mib(r[4])} | {r[5]:.1f} s | {mib(r[6])} | {mib(r[7])} | {r[8]} |")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        if not a.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
