//! The server can be operated safely (issue #16 item 10): SIGTERM shuts it down cleanly
//! even when its stdout and stderr are closed pipes; a data directory whose catalog is
//! missing is refused at startup with a message saying what to do, never opened empty;
//! and CREATE TABLE never overwrites a table file the catalog does not know (1050).

use crate::common;

use mysql::prelude::Queryable;
use std::io::Read;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn strata(datadir: &Path, port: u16) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.arg("server")
        .arg("--port")
        .arg(port.to_string())
        .arg("--datadir")
        .arg(datadir);
    c
}

/// Waits for the child to exit, up to `limit`; kills it (and returns None) otherwise.
fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_listening(child: &mut Child, port: u16) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the server exited during startup"
        );
        assert!(start.elapsed() < Duration::from_secs(20), "not listening");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_shuts_down_cleanly_with_stdout_and_stderr_closed() {
    if common::Flavor::from_env() == common::Flavor::MariaDb {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let mut child = strata(&dir.path().join("data"), port)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_listening(&mut child, port);
    // The reader of both pipes goes away: every write the server makes now fails.
    drop(child.stdout.take());
    drop(child.stderr.take());
    {
        let mut c = common::connect(port, None);
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY)")
            .unwrap();
        c.query_drop("INSERT INTO d.t VALUES (1), (2)").unwrap();
    }
    // SAFETY: kill(2) on the PID of the child this test spawned and has not reaped.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = wait_exit(&mut child, Duration::from_secs(20))
        .expect("the server did not exit within 20 s of SIGTERM");
    assert!(status.success(), "exit status {status}");
    // It flushed: the table is there after a restart.
    let mut child = strata(&dir.path().join("data"), port)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(&mut child, port);
    let n: Option<i64> = common::connect(port, None)
        .query_first("SELECT COUNT(*) FROM d.t")
        .unwrap();
    assert_eq!(n, Some(2));
    // SAFETY: as above.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let status = wait_exit(&mut child, Duration::from_secs(20)).expect("exit on SIGINT");
    assert!(status.success(), "exit status {status}");
}

/// Starts a server on `datadir` that is expected to refuse it: its exit status and what
/// it wrote to stderr.
fn refused_start(datadir: &Path, what: &str) -> (std::process::ExitStatus, String) {
    let mut child = strata(datadir, common::free_port())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_exit(&mut child, Duration::from_secs(20))
        .unwrap_or_else(|| panic!("the server started on {what}"));
    let mut text = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut text);
    }
    (status, text)
}

#[test]
fn a_missing_catalog_is_refused_with_what_to_do() {
    let mut server = common::TestServer::start(&[]);
    if server.flavor == common::Flavor::MariaDb {
        return;
    }
    {
        let mut c = common::connect(server.port, None);
        c.query_drop("CREATE DATABASE shop").unwrap();
        c.query_drop("CREATE TABLE shop.orders (id INT PRIMARY KEY)")
            .unwrap();
        c.query_drop("INSERT INTO shop.orders VALUES (7)").unwrap();
    }
    let status = server.stop();
    assert!(status.success());
    let datadir = server.datadir.clone();
    let catalog = datadir.join("catalog.json");
    let saved = catalog.with_extension("json.saved");
    std::fs::rename(&catalog, &saved).unwrap();

    let (status, text) = refused_start(&datadir, "a data directory without its catalog");
    assert!(!status.success(), "refused: {text}");
    assert!(
        text.contains("no catalog.json") && text.contains("shop/orders.ibd"),
        "the message says what is wrong and where: {text}"
    );
    assert!(
        text.contains("Restore catalog.json"),
        "and what to do: {text}"
    );

    // Put back, it starts with the table.
    std::fs::rename(&saved, &catalog).unwrap();
    server.start_again();
    let n: Option<i64> = common::connect(server.port, None)
        .query_first("SELECT id FROM shop.orders")
        .unwrap();
    assert_eq!(n, Some(7));
}

#[test]
fn create_table_never_overwrites_an_orphaned_file() {
    let mut server = common::TestServer::start(&[]);
    let flavor = server.flavor;
    {
        let mut c = common::connect(server.port, None);
        c.query_drop("CREATE DATABASE o").unwrap();
        c.query_drop("CREATE TABLE o.t (id INT PRIMARY KEY) ENGINE=InnoDB")
            .unwrap();
        c.query_drop("INSERT INTO o.t VALUES (1)").unwrap();
        c.query_drop("CREATE TABLE o.m (id INT PRIMARY KEY) ENGINE=MyISAM")
            .unwrap();
        c.query_drop("INSERT INTO o.m VALUES (1)").unwrap();
    }
    server.stop();
    // Files no table owns, under the names of tables that do not exist.
    let db = server.datadir.join("o");
    let copies: Vec<(std::path::PathBuf, Vec<u8>)> = if flavor == common::Flavor::Strata {
        [
            ("t.ibd", "t2.ibd"),
            ("m.hdat", "m2.hdat"),
            ("m.hidx", "m2.hidx"),
        ]
        .into_iter()
        .map(|(from, to)| {
            let bytes = std::fs::read(db.join(from)).unwrap();
            std::fs::write(db.join(to), &bytes).unwrap();
            (db.join(to), bytes)
        })
        .collect()
    } else {
        // MariaDB: an orphaned MyISAM data file.
        let bytes = std::fs::read(db.join("m.MYD")).unwrap();
        std::fs::write(db.join("m2.MYD"), &bytes).unwrap();
        vec![(db.join("m2.MYD"), bytes)]
    };
    server.start_again();
    let mut c = common::connect(server.port, None);
    for (sql, engine) in [
        (
            "CREATE TABLE o.t2 (id INT PRIMARY KEY) ENGINE=InnoDB",
            "InnoDB",
        ),
        (
            "CREATE TABLE o.m2 (id INT PRIMARY KEY) ENGINE=MyISAM",
            "MyISAM",
        ),
    ] {
        if flavor == common::Flavor::MariaDb && engine == "InnoDB" {
            continue; // MariaDB answers an orphaned .ibd with its own error (1813)
        }
        match c.query_drop(sql) {
            Err(mysql::Error::MySqlError(e)) => {
                assert_eq!(
                    (e.code, e.state.as_str()),
                    (1050, "42S01"),
                    "{sql}: {}",
                    e.message
                )
            }
            other => panic!("{sql}: expected 1050, got {other:?}"),
        }
    }
    for (path, bytes) in &copies {
        assert_eq!(
            &std::fs::read(path).unwrap(),
            bytes,
            "{} was changed",
            path.display()
        );
    }
    // Other tables are unaffected, and a new name still works.
    c.query_drop("CREATE TABLE o.fresh (id INT PRIMARY KEY)")
        .unwrap();
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM o.t").unwrap();
    assert_eq!(n, Some(1));
    if flavor == common::Flavor::Strata {
        let log = server.log_tail();
        assert!(
            log.contains("belong to no table") && log.contains("o/t2.ibd"),
            "the orphans are reported at startup: {log}"
        );
    }
}

#[test]
fn a_second_server_on_the_same_data_directory_is_refused() {
    let mut server = common::TestServer::start(&[]);
    if server.flavor == common::Flavor::MariaDb {
        return;
    }
    common::connect(server.port, None)
        .query_drop("CREATE DATABASE kept")
        .unwrap();
    let datadir = server.datadir.clone();
    let (status, text) = refused_start(&datadir, "a data directory in use");
    assert!(!status.success(), "refused: {text}");
    assert!(
        text.contains("is in use by the process with pid") && text.contains("strata.lock"),
        "the message names the holder: {text}"
    );
    // The first server is untouched, and after it stops (its lock goes with it) the
    // directory opens again.
    let dbs: Vec<String> = common::connect(server.port, None)
        .query("SHOW DATABASES LIKE 'kept'")
        .unwrap();
    assert_eq!(dbs, vec!["kept".to_string()]);
    assert!(server.stop().success());
    server.start_again();
    let dbs: Vec<String> = common::connect(server.port, None)
        .query("SHOW DATABASES LIKE 'kept'")
        .unwrap();
    assert_eq!(dbs, vec!["kept".to_string()]);
}
