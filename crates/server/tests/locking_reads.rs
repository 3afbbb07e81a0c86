//! `FOR UPDATE NOWAIT` and `FOR UPDATE SKIP LOCKED` / `FOR SHARE …` (issue #14 item 1): a
//! locking read that meets a row another transaction holds fails at once with 3572
//! (NOWAIT) or leaves the row out (SKIP LOCKED), instead of waiting for
//! innodb_lock_wait_timeout. Runs against MariaDB too (`STRATA_TEST_ORACLE=mariadb`),
//! which answers NOWAIT with 1205 instead of MySQL 8's 3572.

use crate::common;

use common::Flavor;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::time::{Duration, Instant};

/// `d.t` holding ids 1..=5, a connection holding id 1 and 3 locked, and another one.
fn setup() -> (common::TestServer, Conn, Conn) {
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO d.t VALUES (1,1),(2,2),(3,3),(4,4),(5,5)")
        .unwrap();
    let mut holder = common::connect(server.port, Some("d"));
    holder.query_drop("BEGIN").unwrap();
    // Point lookups on the primary key: InnoDB then locks just those records (a scan
    // would lock every row it reads).
    for id in [1, 3] {
        let _: Vec<i64> = holder
            .query(format!("SELECT id FROM t WHERE id = {id} FOR UPDATE"))
            .unwrap();
    }
    let mut other = common::connect(server.port, Some("d"));
    other
        .query_drop("SET SESSION innodb_lock_wait_timeout = 30")
        .unwrap();
    other.query_drop("BEGIN").unwrap();
    (server, holder, other)
}

#[test]
fn nowait_fails_at_once_on_a_locked_row_and_reads_a_free_one() {
    let (_server, _holder, mut other) = setup();
    let asked = Instant::now();
    let r: mysql::Result<Vec<i64>> = other.query("SELECT v FROM t WHERE id = 1 FOR UPDATE NOWAIT");
    let code = match r {
        Err(mysql::Error::MySqlError(e)) => Some(e.code),
        other => panic!("expected an error, got {other:?}"),
    };
    let want = match Flavor::from_env() {
        Flavor::Strata => 3572,
        Flavor::MariaDb => 1205,
    };
    assert_eq!(code, Some(want));
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "took {:?}",
        asked.elapsed()
    );
    let v: Vec<i64> = other
        .query("SELECT v FROM t WHERE id = 2 FOR UPDATE NOWAIT")
        .unwrap();
    assert_eq!(v, vec![2]);
    if Flavor::from_env() == Flavor::Strata {
        // MySQL 8's FOR SHARE (MariaDB 10.11 has only LOCK IN SHARE MODE).
        let v: Vec<i64> = other
            .query("SELECT v FROM t WHERE id = 4 FOR SHARE NOWAIT")
            .unwrap();
        assert_eq!(v, vec![4]);
        let r: mysql::Result<Vec<i64>> =
            other.query("SELECT v FROM t WHERE id = 3 FOR SHARE NOWAIT");
        assert!(matches!(r, Err(mysql::Error::MySqlError(e)) if e.code == 3572));
    }
}

#[test]
fn skip_locked_leaves_locked_rows_out() {
    let (_server, mut holder, mut other) = setup();
    let asked = Instant::now();
    let ids: Vec<i64> = other
        .query("SELECT id FROM t ORDER BY id FOR UPDATE SKIP LOCKED")
        .unwrap();
    assert_eq!(ids, vec![2, 4, 5]);
    assert!(asked.elapsed() < Duration::from_secs(2));
    // The queue pattern: each worker takes the first row nobody holds.
    let first: Option<i64> = other
        .query_first("SELECT id FROM t ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")
        .unwrap();
    assert_eq!(first, Some(2));
    holder.query_drop("COMMIT").unwrap();
    // Once released, the rows are there again (2, 4, 5 are this transaction's own).
    let ids: Vec<i64> = other
        .query("SELECT id FROM t ORDER BY id FOR UPDATE SKIP LOCKED")
        .unwrap();
    assert_eq!(ids, vec![1, 2, 3, 4, 5]);
}
