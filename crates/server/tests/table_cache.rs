//! The table cache (issue #16 item 9): a server started with a 1024-descriptor limit
//! (`RLIMIT_NOFILE` soft and hard, as `ulimit -n 1024` sets) sizes itself as MySQL 8
//! does (open_files_limit 1024, max_connections 214, table_open_cache 400), keeps
//! thousands of tables of both engines usable through create, insert, select, restart
//! and select again, never holds more descriptors than the limit, and when 1030
//! connections exhaust its descriptors the accept loop backs off instead of spinning.
//!
//! `STRATA_TABLE_CACHE_TABLES` sets the tables per engine (default 1500: 3000 tables,
//! 4500 table files, five times what the cache may keep open).

use crate::common;

use mysql::prelude::Queryable;
use std::io::Read;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const FD_LIMIT: u64 = 1024;

fn tables_per_engine() -> usize {
    std::env::var("STRATA_TABLE_CACHE_TABLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500)
}

/// Starts the server with RLIMIT_NOFILE set to `FD_LIMIT` (soft and hard) in the child.
fn spawn_limited(datadir: &Path, port: u16, log: &Path) -> Child {
    let log = std::fs::File::create(log).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.arg("server")
        .arg("--port")
        .arg(port.to_string())
        .arg("--bind")
        .arg("127.0.0.1")
        .arg("--datadir")
        .arg(datadir)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log);
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        c.pre_exec(|| {
            let rl = libc::rlimit {
                rlim_cur: FD_LIMIT as libc::rlim_t,
                rlim_max: FD_LIMIT as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the server exited during startup"
        );
        assert!(start.elapsed() < Duration::from_secs(60), "not listening");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

fn stop(child: &mut Child) {
    // SAFETY: kill(2) on the PID of the child this test spawned and has not reaped.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            assert!(s.success(), "exit status {s}");
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no exit within 60 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// User + system CPU seconds the process has used (/proc/<pid>/stat, clock ticks).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf only reads its argument.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz
}

fn status(c: &mut mysql::Conn, name: &str) -> u64 {
    let row: Option<(String, String)> = c
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap();
    row.unwrap_or_else(|| panic!("no status {name}"))
        .1
        .parse()
        .unwrap()
}

fn select_each(c: &mut mysql::Conn, n: usize) {
    for i in 0..n {
        for p in ["h", "b"] {
            let v: Option<i64> = c
                .query_first(format!("SELECT v FROM many.{p}{i} WHERE id = 1"))
                .unwrap_or_else(|e| panic!("{p}{i}: {e}"));
            assert_eq!(v, Some(i as i64), "{p}{i}");
        }
    }
}

#[test]
fn thousands_of_tables_under_a_1024_descriptor_limit() {
    if common::Flavor::from_env() == common::Flavor::MariaDb {
        return;
    }
    let n = tables_per_engine();
    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().join("data");
    let log = dir.path().join("server.log");
    let port = common::free_port();
    let mut child = spawn_limited(&datadir, port, &log);
    let pid = child.id();
    let mut text = String::new();
    std::fs::File::open(&log)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert!(
        text.contains("open_files_limit 1024, table_open_cache 400"),
        "the startup lines say what was sized: {text}"
    );
    assert!(
        text.contains("Changed limits: max_connections: 214 (requested 1024)"),
        "{text}"
    );

    let started = Instant::now();
    let mut c = common::connect(port, None);
    let sized: Option<(u64, u64, u64)> = c
        .query_first("SELECT @@open_files_limit, @@table_open_cache, @@max_connections")
        .unwrap();
    assert_eq!(sized, Some((1024, 400, 214)));
    let e = c
        .query_drop("SET GLOBAL table_open_cache = 10")
        .unwrap_err();
    assert!(e.to_string().contains("1238"), "read-only: {e}");
    c.query_drop("CREATE DATABASE many").unwrap();
    let mut most_fds = 0;
    for i in 0..n {
        c.query_drop(format!(
            "CREATE TABLE many.h{i} (id INT PRIMARY KEY, v INT) ENGINE=MyISAM"
        ))
        .unwrap_or_else(|e| panic!("h{i}: {e}"));
        c.query_drop(format!("INSERT INTO many.h{i} VALUES (1, {i})"))
            .unwrap();
        c.query_drop(format!(
            "CREATE TABLE many.b{i} (id INT PRIMARY KEY, v INT) ENGINE=InnoDB"
        ))
        .unwrap_or_else(|e| panic!("b{i}: {e}"));
        c.query_drop(format!("INSERT INTO many.b{i} VALUES (1, {i})"))
            .unwrap();
        if i % 100 == 0 {
            most_fds = most_fds.max(open_fds(pid));
        }
    }
    eprintln!(
        "{} tables created and filled in {:?}",
        2 * n,
        started.elapsed()
    );
    select_each(&mut c, n);
    most_fds = most_fds.max(open_fds(pid));
    let open_files = status(&mut c, "Open_files");
    assert!(open_files <= 800, "Open_files {open_files}");
    assert!(status(&mut c, "Open_tables") <= 800);
    let misses = status(&mut c, "Table_open_cache_misses");
    assert!(misses as usize >= n, "reopened on demand: {misses} misses");
    assert!(status(&mut c, "Table_open_cache_hits") > 0);
    assert!(status(&mut c, "Opened_tables") as usize > 2 * n);
    assert!(
        most_fds < 900,
        "descriptors in use peaked at {most_fds} (cache 800 + the server's own)"
    );

    // Accept pressure: 1030 connections that never log in, on top of a full table
    // cache, exhaust the descriptors. The accept loop must wait, not spin.
    let mut held = Vec::new();
    for _ in 0..1030 {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => held.push(s),
            Err(_) => break,
        }
    }
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(3));
    let used = cpu_seconds(pid) - before;
    assert!(
        used < 1.0,
        "the server used {used:.2} s of CPU in 3 s while out of descriptors"
    );
    drop(held);
    // Handshakes it did accept time out or see the close; then logins work again.
    let start = Instant::now();
    let mut c2 = loop {
        match mysql::Conn::new(common::opts(port, None)) {
            Ok(c) => break c,
            Err(e) => {
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "no login after the pressure: {e}"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    let one: Option<i64> = c2
        .query_first("SELECT v FROM many.h1 WHERE id = 1")
        .unwrap();
    assert_eq!(one, Some(1));
    drop(c2);
    drop(c);

    stop(&mut child);
    let mut child = spawn_limited(&datadir, port, &log);
    let mut c = common::connect(port, None);
    select_each(&mut c, n);
    let open_files = status(&mut c, "Open_files");
    assert!(open_files <= 800, "Open_files {open_files}");
    drop(c);
    stop(&mut child);
}
