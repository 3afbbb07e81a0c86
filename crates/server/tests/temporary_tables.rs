//! CREATE TEMPORARY TABLE across sessions and server lifetimes (what one-connection slt
//! files cannot show): two sessions use the same temporary name at once, each seeing its
//! own rows; a temporary table hides the base table for its session only; prepared
//! statements and the plan cache notice one appearing and going; disconnect,
//! COM_RESET_CONNECTION and COM_CHANGE_USER drop the session's tables and their files;
//! the files a killed server left in `<datadir>/#tmp/` are gone after a restart and
//! nothing of them reached the catalog; SHOW CREATE TABLE says TEMPORARY; with the binary
//! log on, nothing about a temporary table is logged.

use crate::common;

use mysql::prelude::Queryable;
use std::path::Path;
use std::time::{Duration, Instant};

fn tmp_files(datadir: &Path) -> Vec<String> {
    match std::fs::read_dir(datadir.join("#tmp")) {
        Ok(d) => d
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Waits (the server ends a session after the client's socket closes) until `#tmp`
/// holds no files, or panics after 10 s.
fn wait_no_tmp_files(datadir: &Path) {
    let start = Instant::now();
    while !tmp_files(datadir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "temporary table files left: {:?}",
            tmp_files(datadir)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn ints(c: &mut mysql::Conn, sql: &str) -> Vec<i64> {
    c.query(sql).unwrap()
}

#[test]
fn temporary_tables_belong_to_their_session() {
    let mut server = common::TestServer::start(&["--log-bin"]);
    let port = server.port;
    let mut admin = common::connect(port, None);
    admin.query_drop("CREATE DATABASE d").unwrap();
    admin.query_drop("CREATE TABLE d.t (a INT)").unwrap();
    admin.query_drop("INSERT INTO d.t VALUES (1), (2)").unwrap();

    // Two sessions, one name: each its own table; the base table is hidden from each.
    let mut a = common::connect(port, Some("d"));
    let mut b = common::connect(port, Some("d"));
    a.query_drop("CREATE TEMPORARY TABLE t (a INT) ENGINE=InnoDB")
        .unwrap();
    b.query_drop("CREATE TEMPORARY TABLE t (a INT) ENGINE=MyISAM")
        .unwrap();
    a.query_drop("INSERT INTO t VALUES (100)").unwrap();
    b.query_drop("INSERT INTO t VALUES (200), (201)").unwrap();
    assert_eq!(ints(&mut a, "SELECT a FROM t ORDER BY a"), vec![100]);
    assert_eq!(ints(&mut b, "SELECT a FROM t ORDER BY a"), vec![200, 201]);
    assert_eq!(ints(&mut admin, "SELECT a FROM d.t ORDER BY a"), vec![1, 2]);
    let text: (String, String) = a.query_first("SHOW CREATE TABLE t").unwrap().unwrap();
    assert!(
        text.1.starts_with("CREATE TEMPORARY TABLE `t`"),
        "{}",
        text.1
    );
    let text: (String, String) = admin.query_first("SHOW CREATE TABLE d.t").unwrap().unwrap();
    assert!(text.1.starts_with("CREATE TABLE `t`"), "{}", text.1);

    // A prepared statement bound before the temporary table existed reads it after,
    // and the base table again once it is dropped; so does a cached plan.
    let mut c = common::connect(port, Some("d"));
    let stmt = c.prep("SELECT COUNT(*) FROM t WHERE a > ?").unwrap();
    let count = |c: &mut mysql::Conn| -> i64 { c.exec_first(&stmt, (0,)).unwrap().unwrap() };
    assert_eq!(count(&mut c), 2);
    assert_eq!(ints(&mut c, "SELECT COUNT(*) FROM t WHERE a > 0"), vec![2]);
    c.query_drop("CREATE TEMPORARY TABLE t (a INT)").unwrap();
    assert_eq!(count(&mut c), 0);
    assert_eq!(ints(&mut c, "SELECT COUNT(*) FROM t WHERE a > 0"), vec![0]);
    c.query_drop("INSERT INTO t VALUES (5), (6), (7)").unwrap();
    assert_eq!(count(&mut c), 3);
    c.query_drop("DROP TEMPORARY TABLE t").unwrap();
    assert_eq!(count(&mut c), 2);
    assert_eq!(ints(&mut c, "SELECT COUNT(*) FROM t WHERE a > 0"), vec![2]);

    // COM_RESET_CONNECTION and COM_CHANGE_USER drop the session's temporary tables.
    c.query_drop("CREATE TEMPORARY TABLE r (a INT)").unwrap();
    c.reset().unwrap();
    c.query_drop("USE d").unwrap();
    assert!(c.query_drop("SELECT * FROM r").is_err());
    c.query_drop("CREATE TEMPORARY TABLE r (a INT)").unwrap();
    c.change_user(mysql::ChangeUserOpts::default().with_db_name(Some("d".into())))
        .unwrap();
    assert!(c.query_drop("SELECT * FROM r").is_err());
    drop(c);

    // Disconnect drops them, files and all; the other session's table stays.
    assert!(!tmp_files(&server.datadir).is_empty());
    drop(b);
    assert_eq!(ints(&mut a, "SELECT a FROM t"), vec![100]);
    drop(a);
    wait_no_tmp_files(&server.datadir);
    let mut d = common::connect(port, Some("d"));
    assert_eq!(ints(&mut d, "SELECT a FROM t ORDER BY a"), vec![1, 2]);

    // The binary log holds the base table's DDL and rows only.
    let events: Vec<mysql::Row> = d.query("SHOW BINLOG EVENTS").unwrap();
    let info: Vec<String> = events
        .iter()
        .map(|r| r.get::<String, _>(5).unwrap_or_default())
        .collect();
    assert!(
        info.iter().any(|i| i.contains("CREATE TABLE d.t")),
        "{info:?}"
    );
    assert!(
        !info
            .iter()
            .any(|i| i.to_ascii_uppercase().contains("TEMPORARY")),
        "{info:?}"
    );

    // A killed server's temporary tables (both engines) are gone after a restart, and
    // the catalog never knew them.
    d.query_drop("CREATE TEMPORARY TABLE k1 (a INT) ENGINE=InnoDB")
        .unwrap();
    d.query_drop("CREATE TEMPORARY TABLE k2 (a INT) ENGINE=MyISAM")
        .unwrap();
    d.query_drop("INSERT INTO k1 VALUES (1)").unwrap();
    d.query_drop("INSERT INTO k2 VALUES (1)").unwrap();
    assert!(tmp_files(&server.datadir).len() >= 3);
    let catalog = std::fs::read_to_string(server.datadir.join("catalog.json")).unwrap();
    assert!(
        !catalog.contains("k1") && !catalog.contains("k2"),
        "{catalog}"
    );
    server.crash();
    server.start_again();
    assert!(tmp_files(&server.datadir).is_empty());
    let spaces = std::fs::read_to_string(server.datadir.join("btree-spaces.json")).unwrap();
    assert!(!spaces.contains("#tmp"), "{spaces}");
    let mut e = common::connect(server.port, Some("d"));
    assert!(e.query_drop("SELECT * FROM k1").is_err());
    assert_eq!(ints(&mut e, "SELECT a FROM t ORDER BY a"), vec![1, 2]);
    // And the name is free for a new temporary table.
    e.query_drop("CREATE TEMPORARY TABLE k1 (a INT)").unwrap();
    assert_eq!(ints(&mut e, "SELECT COUNT(*) FROM k1"), vec![0]);
}
