//! XA transactions end to end, over real connections to a real server: a prepared XA
//! transaction outlives the connection that prepared it (XA RECOVER lists it, another
//! connection commits it) and survives SIGKILL of the server (after the restart it is
//! still prepared, its changes invisible to others and its rows locked until XA COMMIT
//! or XA ROLLBACK from any connection). With the binary log on, XA COMMIT … ONE PHASE
//! is logged as an ordinary transaction (the two-phase groups: `xa_binlog.rs`).

use crate::common;

use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

fn code<T>(r: mysql::Result<T>) -> Option<u16> {
    match r {
        Ok(_) => None,
        Err(mysql::Error::MySqlError(e)) => Some(e.code),
        Err(e) => panic!("not a server error: {e}"),
    }
}

fn rows(c: &mut mysql::Conn) -> Vec<(i64, i64)> {
    c.query("SELECT id, v FROM t ORDER BY id").unwrap()
}

fn recover(c: &mut mysql::Conn) -> Vec<(i64, i64, i64, Vec<u8>)> {
    c.query("XA RECOVER").unwrap()
}

/// A fresh `xa.t` with rows (1, 10), (2, 20), (3, 30).
fn setup(port: u16) {
    let mut c = common::connect(port, None);
    c.query_drop("CREATE DATABASE xa").unwrap();
    c.query_drop("CREATE TABLE xa.t (id INT PRIMARY KEY, v INT, KEY kv (v)) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO xa.t VALUES (1, 10), (2, 20), (3, 30)")
        .unwrap();
}

/// Prepares XA transaction `xid` on its own connection (update id 1, delete id 2,
/// insert id `new`) and returns the connection.
fn prepare(port: u16, xid: &str, new: i64) -> mysql::Conn {
    let mut c = common::connect(port, Some("xa"));
    c.query_drop(format!("XA START {xid}")).unwrap();
    c.query_drop("UPDATE t SET v = v + 100 WHERE id = 1")
        .unwrap();
    c.query_drop("DELETE FROM t WHERE id = 2").unwrap();
    c.query_drop(format!("INSERT INTO t VALUES ({new}, {new})"))
        .unwrap();
    c.query_drop(format!("XA END {xid}")).unwrap();
    c.query_drop(format!("XA PREPARE {xid}")).unwrap();
    c
}

/// Others see the committed rows only, and wait for (then time out on) its rows.
fn assert_prepared_and_locked(c: &mut mysql::Conn, new: i64) {
    assert_eq!(rows(c), vec![(1, 10), (2, 20), (3, 30)]);
    let by_v: Vec<i64> = c.query("SELECT id FROM t WHERE v = 110").unwrap();
    assert!(
        by_v.is_empty(),
        "its update is invisible through the index too"
    );
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    let t = Instant::now();
    assert_eq!(
        code(c.query_drop("UPDATE t SET v = 0 WHERE id = 1")),
        Some(1205)
    );
    assert!(t.elapsed() >= Duration::from_millis(900), "it waited");
    assert_eq!(code(c.query_drop("DELETE FROM t WHERE id = 2")), Some(1205));
    assert_eq!(
        code(c.query_drop(format!("INSERT INTO t VALUES ({new}, 0)"))),
        Some(1205)
    );
    // A row it did not touch is free.
    c.query_drop("UPDATE t SET v = 31 WHERE id = 3").unwrap();
    c.query_drop("UPDATE t SET v = 30 WHERE id = 3").unwrap();
}

#[test]
fn a_prepared_xa_transaction_outlives_its_connection() {
    let server = common::TestServer::start(&[]);
    setup(server.port);
    let owner = prepare(server.port, "'g1', 'b1', 5", 4);
    let mut other = common::connect(server.port, Some("xa"));
    assert_eq!(recover(&mut other), vec![(5, 2, 2, b"g1b1".to_vec())]);
    // Still its connection's: not another's to finish, nor to start again.
    assert_eq!(
        code(other.query_drop("XA COMMIT 'g1', 'b1', 5")),
        Some(1397)
    );
    assert_eq!(code(other.query_drop("XA START 'g1', 'b1', 5")), Some(1440));
    assert_prepared_and_locked(&mut other, 4);
    drop(owner);
    // The disconnect is handled by the server's connection thread: wait for it.
    let start = Instant::now();
    loop {
        match code(other.query_drop("XA COMMIT 'g1', 'b1', 5")) {
            None => break,
            Some(1397) if start.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Some(e) => panic!("XA COMMIT from another connection: {e}"),
        }
    }
    assert_eq!(rows(&mut other), vec![(1, 110), (3, 30), (4, 4)]);
    assert!(recover(&mut other).is_empty());
    assert_eq!(
        code(other.query_drop("XA COMMIT 'g1', 'b1', 5")),
        Some(1397)
    );
    // A connection that goes while its XA transaction is not prepared rolls it back.
    let mut c = common::connect(server.port, Some("xa"));
    c.query_drop("XA START 'g2'").unwrap();
    c.query_drop("UPDATE t SET v = 0").unwrap();
    c.query_drop("XA END 'g2'").unwrap();
    drop(c);
    let start = Instant::now();
    while code(other.query_drop("XA START 'g2'")) == Some(1440) {
        assert!(start.elapsed() < Duration::from_secs(10), "xid never freed");
        std::thread::sleep(Duration::from_millis(50));
    }
    other.query_drop("XA END 'g2'").unwrap();
    other.query_drop("XA ROLLBACK 'g2'").unwrap();
    assert_eq!(rows(&mut other), vec![(1, 110), (3, 30), (4, 4)]);
}

#[test]
fn a_prepared_xa_transaction_survives_sigkill() {
    let mut server = common::TestServer::start(&[]);
    setup(server.port);
    let a = prepare(server.port, "'commit-me'", 4);
    // A second one, on other rows, to roll back.
    let mut b = common::connect(server.port, Some("xa"));
    b.query_drop("XA START 'roll-me', 'x', 2").unwrap();
    b.query_drop("UPDATE t SET v = 0 WHERE id = 3").unwrap();
    b.query_drop("INSERT INTO t VALUES (9, 9)").unwrap();
    b.query_drop("XA END 'roll-me', 'x', 2").unwrap();
    b.query_drop("XA PREPARE 'roll-me', 'x', 2").unwrap();
    server.crash();
    drop((a, b));
    server.start_again();
    let mut c = common::connect(server.port, Some("xa"));
    let mut listed = recover(&mut c);
    listed.sort();
    assert_eq!(
        listed,
        vec![
            (1, 9, 0, b"commit-me".to_vec()),
            (2, 7, 1, b"roll-mex".to_vec())
        ]
    );
    // Both are prepared: row 3 is the second's, so only the first's rows are checked
    // by the helper; the second's row and key are locked too.
    assert_eq!(rows(&mut c), vec![(1, 10), (2, 20), (3, 30)]);
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    assert_eq!(
        code(c.query_drop("UPDATE t SET v = 1 WHERE id = 1")),
        Some(1205)
    );
    assert_eq!(
        code(c.query_drop("UPDATE t SET v = 1 WHERE id = 3")),
        Some(1205)
    );
    assert_eq!(
        code(c.query_drop("INSERT INTO t VALUES (9, 0)")),
        Some(1205)
    );
    assert_eq!(
        code(c.query_drop("INSERT INTO t VALUES (4, 0)")),
        Some(1205)
    );
    // A second crash before the decision changes nothing.
    server.crash();
    server.start_again();
    let mut c = common::connect(server.port, Some("xa"));
    assert_eq!(recover(&mut c).len(), 2);
    assert_prepared_and_locked_first(&mut c);
    c.query_drop("XA COMMIT 'commit-me'").unwrap();
    c.query_drop("XA ROLLBACK 'roll-me', 'x', 2").unwrap();
    assert!(recover(&mut c).is_empty());
    assert_eq!(rows(&mut c), vec![(1, 110), (3, 30), (4, 4)]);
    // Its rows are free, and the decisions durable.
    c.query_drop("UPDATE t SET v = 111 WHERE id = 1").unwrap();
    server.crash();
    server.start_again();
    let mut c = common::connect(server.port, Some("xa"));
    assert!(recover(&mut c).is_empty());
    assert_eq!(rows(&mut c), vec![(1, 111), (3, 30), (4, 4)]);
    let check: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
    assert_eq!(check[0].3, "OK", "{check:?}");
}

/// What [`assert_prepared_and_locked`] checks, with the second transaction's row 3
/// locked as well (its row is not updated here).
fn assert_prepared_and_locked_first(c: &mut mysql::Conn) {
    assert_eq!(rows(c), vec![(1, 10), (2, 20), (3, 30)]);
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    assert_eq!(code(c.query_drop("DELETE FROM t WHERE id = 2")), Some(1205));
    assert_eq!(
        code(c.query_drop("UPDATE t SET v = 0 WHERE id = 3")),
        Some(1205)
    );
}

#[test]
fn with_the_binary_log_one_phase_is_an_ordinary_transaction() {
    let server = common::TestServer::start(&["--log-bin"]);
    setup(server.port);
    let mut c = common::connect(server.port, Some("xa"));
    c.query_drop("XA START 'p'").unwrap();
    c.query_drop("UPDATE t SET v = 11 WHERE id = 1").unwrap();
    c.query_drop("XA END 'p'").unwrap();
    assert!(recover(&mut c).is_empty());
    c.query_drop("XA COMMIT 'p' ONE PHASE").unwrap();
    assert_eq!(rows(&mut c), vec![(1, 11), (2, 20), (3, 30)]);
    let events: Vec<mysql::Row> = c.query("SHOW BINLOG EVENTS").unwrap();
    let kinds: Vec<String> = events
        .iter()
        .map(|r| r.get::<String, _>(2).unwrap_or_default())
        .collect();
    assert!(
        kinds.iter().filter(|k| *k == "Update_rows").count() == 1,
        "{kinds:?}"
    );
    assert!(
        kinds.iter().filter(|k| *k == "Xid").count() == 2
            && !kinds.iter().any(|k| k == "XA_prepare"),
        "{kinds:?}"
    );
}
