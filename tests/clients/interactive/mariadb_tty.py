#!/usr/bin/env python3
"""Drives the `mariadb` command-line client interactively, through a real terminal, against a
running Strata server (port in STRATA_PORT): tmux gives the client a tty, keys are typed at its
prompt and the screen is read back with capture-pane. Checks what a person would see: the
welcome banner, `Query OK` lines, boxed tables, the ERROR line of a syntax error, the prompt
following USE, continuation prompts of a multi-line statement, `\\s` status, `\\G` vertical
output, and `exit`. Run by crates/server/tests/drivers.rs; exits non-zero with the screen
contents on the first failed check."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

PORT = os.environ.get("STRATA_PORT")
HOST = os.environ.get("STRATA_HOST", "127.0.0.1")
TIMEOUT = 15.0
# With STRATA_TEST_ORACLE=mariadb the harness runs a real MariaDB server instead, to check
# that these expectations are MariaDB's own; only the version string differs.
SERVER_MARK = "MariaDB" if os.environ.get("STRATA_TEST_ORACLE") in ("mariadb", "mariadbd") else "Strata"


class Tty:
    """One tmux server on a private socket, holding one window that runs the client."""

    def __init__(self, workdir):
        self.sock = os.path.join(workdir, "tmux.sock")
        conf = os.path.join(workdir, "tmux.conf")
        with open(conf, "w") as f:
            # Keep the pane (and its text) after the client exits; keep all history.
            f.write("set -g remain-on-exit on\nset -g history-limit 50000\n")
        self.conf = conf
        self.consumed = 0  # screen lines already matched by earlier waits

    def tmux(self, *args, check=True):
        r = subprocess.run(
            ["tmux", "-S", self.sock, "-f", self.conf, *args],
            capture_output=True, text=True, timeout=30,
        )
        if check and r.returncode != 0:
            raise RuntimeError(f"tmux {args}: {r.stderr.strip()}")
        return r.stdout

    def start(self, argv, env):
        # The shell records the client's exit status in a file: tmux's own pane status is
        # not always there in time.
        self.status_file = os.path.join(os.path.dirname(self.sock), "exit-status")
        cmd = " ".join(shlex_quote(a) for a in argv)
        cmd += f"; echo $? > {shlex_quote(self.status_file)}"
        self.tmux("new-session", "-d", "-s", "cli", "-x", "150", "-y", "50",
                  "env", *[f"{k}={v}" for k, v in env.items()], "sh", "-c", cmd)

    def screen(self):
        """Every line the client has written so far (scrollback included), wrapped lines joined."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "cli")

    def send_line(self, text):
        # -l: literal text (no key-name lookup); Enter separately. tmux reads an argument
        # ending in `;` as its own command separator unless the `;` is escaped.
        if text.endswith(";"):
            text = text[:-1] + "\\;"
        self.tmux("send-keys", "-t", "cli", "-l", text)
        self.tmux("send-keys", "-t", "cli", "Enter")

    def wait_for(self, pattern, what):
        """Waits until `pattern` appears in the output after what earlier waits consumed;
        returns that new output (from the end of the previous match to the end of this one)."""
        deadline = time.time() + TIMEOUT
        rx = re.compile(pattern, re.M)
        while True:
            text = self.screen()
            tail = text[self.consumed:]
            m = rx.search(tail)
            if m:
                chunk = tail[: m.end()]
                self.consumed += m.end()
                return chunk
            if time.time() > deadline:
                fail(f"timed out waiting for {what} (/{pattern}/)", text)
            time.sleep(0.05)

    def exit_status(self):
        """The client's exit status once it has ended, else None."""
        try:
            with open(self.status_file) as f:
                text = f.read()
        except FileNotFoundError:
            return None
        return text.strip() if text.endswith("\n") else None

    def kill(self):
        self.tmux("kill-server", check=False)


def shlex_quote(s):
    if re.fullmatch(r"[A-Za-z0-9_./=:@%+-]+", s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def fail(msg, screen):
    sys.stderr.write(f"FAIL: {msg}\n----- screen -----\n{screen}\n------------------\n")
    sys.exit(1)


CHECKS = 0


def check(cond, msg, screen):
    global CHECKS
    if not cond:
        fail(msg, screen)
    CHECKS += 1


def main():
    if not PORT:
        sys.stderr.write("STRATA_PORT is not set (run through crates/server/tests/drivers.rs)\n")
        return 2
    for prog in ("tmux", "mariadb"):
        if shutil.which(prog) is None:
            sys.stderr.write(f"{prog} is not installed\n")
            return 2
    work = tempfile.mkdtemp(prefix="strata-tty-")
    t = Tty(work)
    env = {
        "HOME": work,  # no ~/.my.cnf, history file in the scratch directory
        "MYSQL_HISTFILE": os.path.join(work, "history"),
        "TERM": "xterm",
        "LANG": "C.UTF-8",
    }
    try:
        t.start(["mariadb", "--no-defaults", "--protocol=TCP", f"-h{HOST}", f"-P{PORT}",
                 "-uroot", "--default-character-set=utf8mb4"], env)
        run(t)
    finally:
        t.kill()
        shutil.rmtree(work, ignore_errors=True)
    print(f"interactive mariadb client: {CHECKS} passed, 0 failed")
    return 0


# The prompt: `\N [\d]> ` where \N is "MariaDB" or "MySQL" by the server's version string
# (capture-pane trims the trailing space).
PROMPT = r"^(MariaDB|MySQL) \[([^\]]*)\]> ?$"


def run(t):
    out = t.wait_for(PROMPT, "the first prompt")
    check("Welcome to the MariaDB monitor" in out, "no welcome banner", out)
    m = re.search(r"Your \S+ connection id is (\d+)", out)
    check(m is not None, "banner lacks the connection id", out)
    m = re.search(r"Server version: (\S+)", out)
    check(m is not None and SERVER_MARK in m.group(1), "banner lacks the server version", out)
    check(re.search(r"\[\(none\)\]> ?$", out, re.M) is not None, "prompt without (none)", out)

    t.send_line("DROP DATABASE IF EXISTS tty_db;")
    out = t.wait_for(PROMPT, "DROP DATABASE")
    check(re.search(r"^Query OK, \d+ rows? affected", out, re.M) is not None,
          "DROP DATABASE IF EXISTS: no 'Query OK'", out)

    t.send_line("CREATE DATABASE tty_db;")
    out = t.wait_for(PROMPT, "CREATE DATABASE")
    check(re.search(r"^Query OK, 1 row affected \(\d+\.\d+ sec\)$", out, re.M) is not None,
          "CREATE DATABASE: no 'Query OK, 1 row affected'", out)

    t.send_line("USE tty_db")
    out = t.wait_for(PROMPT, "USE")
    check("Database changed" in out, "USE: no 'Database changed'", out)
    check(re.search(r"\[tty_db\]> ?$", out, re.M) is not None,
          "prompt does not show the new database", out)

    t.send_line("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), score DECIMAL(5,2));")
    out = t.wait_for(PROMPT, "CREATE TABLE")
    check(re.search(r"^Query OK, 0 rows affected", out, re.M) is not None,
          "CREATE TABLE: no 'Query OK, 0 rows affected'", out)

    t.send_line("INSERT INTO t VALUES (1, 'alpha', 1.5), (2, 'beta', NULL), (3, 'gamma-long', 99.25);")
    out = t.wait_for(PROMPT, "INSERT")
    check(re.search(r"^Query OK, 3 rows affected", out, re.M) is not None,
          "INSERT: no 'Query OK, 3 rows affected'", out)
    check(re.search(r"^Records: 3  Duplicates: 0  Warnings: 0$", out, re.M) is not None,
          "INSERT: no 'Records: 3  Duplicates: 0  Warnings: 0'", out)

    t.send_line("SELECT * FROM t ORDER BY id;")
    out = t.wait_for(PROMPT, "SELECT")
    table = "\n".join([
        "+----+------------+-------+",
        "| id | name       | score |",
        "+----+------------+-------+",
        "|  1 | alpha      |  1.50 |",
        "|  2 | beta       |  NULL |",
        "|  3 | gamma-long | 99.25 |",
        "+----+------------+-------+",
    ])
    check(table in out, "SELECT: boxed table differs from\n" + table, out)
    check(re.search(r"^3 rows in set \(\d+\.\d+ sec\)$", out, re.M) is not None,
          "SELECT: no '3 rows in set'", out)

    t.send_line("SELEC 1;")
    out = t.wait_for(PROMPT, "the syntax error")
    check(re.search(r"^ERROR 1064 \(42000\)( at line \d+)?: You have an error in your SQL syntax",
                    out, re.M) is not None, "no 'ERROR 1064 (42000)' line", out)
    check(re.search(r"\[tty_db\]> ?$", out, re.M) is not None,
          "prompt lost the database after an error", out)

    t.send_line("SELECT * FROM nope;")
    out = t.wait_for(PROMPT, "the unknown table error")
    check(re.search(r"^ERROR 1146 \(42S02\): Table 'tty_db\.nope' doesn't exist$", out, re.M)
          is not None, "no 'ERROR 1146 (42S02)' line", out)

    # A statement typed over several lines: continuation prompts, then one result.
    t.send_line("SELECT name,")
    t.wait_for(r"^\s+-> ?$", "the continuation prompt")
    t.send_line("  score * 2 AS twice")
    t.wait_for(r"^\s+-> ?$", "the second continuation prompt")
    t.send_line("FROM t WHERE id >= 2 ORDER BY id;")
    out = t.wait_for(PROMPT, "the multi-line SELECT")
    table = "\n".join([
        "+------------+--------+",
        "| name       | twice  |",
        "+------------+--------+",
        "| beta       |   NULL |",
        "| gamma-long | 198.50 |",
        "+------------+--------+",
    ])
    check(table in out, "multi-line SELECT: boxed table differs from\n" + table, out)
    check(re.search(r"^2 rows in set", out, re.M) is not None, "no '2 rows in set'", out)

    # A string open across lines keeps its newline.
    t.send_line("SELECT CONCAT('a")
    t.wait_for(r"^\s+'> ?$", "the open-quote prompt")
    t.send_line("b') AS s\\G")
    out = t.wait_for(PROMPT, "the vertical output")
    check(re.search(r"^\*+ 1\. row \*+\n\s*s: a\nb$", out, re.M) is not None,
          "\\G: vertical row with 'a<newline>b' not shown", out)

    t.send_line("SELECT id FROM t WHERE id > 100;")
    out = t.wait_for(PROMPT, "the empty result")
    check(re.search(r"^Empty set \(\d+\.\d+ sec\)$", out, re.M) is not None, "no 'Empty set'", out)

    t.send_line("UPDATE t SET score = 0 WHERE id = 1;")
    out = t.wait_for(PROMPT, "UPDATE")
    check(re.search(r"^Query OK, 1 row affected", out, re.M) is not None,
          "UPDATE: no 'Query OK, 1 row affected'", out)
    check(re.search(r"^Rows matched: 1  Changed: 1  Warnings: 0$", out, re.M) is not None,
          "UPDATE: no 'Rows matched: 1  Changed: 1  Warnings: 0'", out)

    t.send_line("\\s")
    out = t.wait_for(PROMPT, "the status command")
    check(re.search(r"^Current database:\s+tty_db$", out, re.M) is not None,
          "\\s: no 'Current database: tty_db'", out)
    check(re.search(r"^Current user:\s+root@", out, re.M) is not None,
          "\\s: no 'Current user: root@...'", out)
    check(re.search(r"^Server version:\s+\S*" + SERVER_MARK, out, re.M) is not None,
          "\\s: no server version", out)
    check(re.search(r"^Connection:\s+127\.0\.0\.1 via TCP/IP$", out, re.M) is not None,
          "\\s: no TCP connection line", out)
    check(re.search(r"^Uptime:\s+", out, re.M) is not None, "\\s: no uptime line", out)
    check(re.search(r"^Threads: [1-9]\d*  Questions: [1-9]\d*  ", out, re.M) is not None,
          "\\s: no 'Threads: N  Questions: N' line", out)

    # Switching to another database by `\u`.
    t.send_line("\\u information_schema")
    out = t.wait_for(PROMPT, "\\u")
    check(re.search(r"\[information_schema\]> ?$", out, re.M) is not None,
          "prompt does not follow \\u", out)

    if os.environ.get("STRATA_TTY_SHOW"):
        print(t.screen())
    t.send_line("exit")
    t.wait_for(r"^Bye$", "Bye")
    deadline = time.time() + TIMEOUT
    while (status := t.exit_status()) is None:
        if time.time() > deadline:
            fail("client still running after exit", t.screen())
        time.sleep(0.05)
    check(status == "0", f"client exit status {status}", t.screen())


if __name__ == "__main__":
    sys.exit(main())
