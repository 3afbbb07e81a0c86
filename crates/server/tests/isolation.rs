//! What one connection sees of another's work, through a real driver (the `mysql`
//! crate) on two connections: START TRANSACTION WITH CONSISTENT SNAPSHOT takes its view
//! at START, READ COMMITTED reads a fresh view per statement, REPEATABLE READ keeps
//! one, READ UNCOMMITTED reads uncommitted rows, SERIALIZABLE share-locks plain reads
//! inside a transaction (not an autocommitted SELECT), and ROLLBACK TO SAVEPOINT keeps
//! the row locks it took. Runs against MariaDB too (`STRATA_TEST_ORACLE=mariadb`).

use crate::common;

use mysql::prelude::Queryable;
use mysql::Conn;

/// A server with table `d.t (id, v)` holding (1, 1), and two connections to it.
fn two_connections() -> (common::TestServer, Conn, Conn) {
    let server = common::TestServer::start(&[]);
    let mut setup = common::connect(server.port, None);
    setup.query_drop("CREATE DATABASE d").unwrap();
    setup
        .query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
        .unwrap();
    setup.query_drop("INSERT INTO d.t VALUES (1, 1)").unwrap();
    let a = common::connect(server.port, Some("d"));
    let b = common::connect(server.port, Some("d"));
    (server, a, b)
}

fn count(c: &mut Conn) -> i64 {
    c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap()
}

fn v1(c: &mut Conn) -> i64 {
    c.query_first("SELECT v FROM t WHERE id = 1")
        .unwrap()
        .unwrap()
}

/// The error number of a statement that must fail. A SELECT's error can come after its
/// column definitions, so read its rows: `query_drop` would discard it with them.
fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[test]
fn a_consistent_snapshot_is_taken_at_start() {
    let (_s, mut a, mut b) = two_connections();
    a.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    let mut lazy = common::connect(_s.port, Some("d"));
    lazy.query_drop("START TRANSACTION").unwrap();
    b.query_drop("INSERT INTO t VALUES (2, 2)").unwrap();
    // Committed after START: invisible to the snapshot...
    assert_eq!(count(&mut a), 1);
    // ... but a plain START TRANSACTION takes its view at the first read.
    assert_eq!(count(&mut lazy), 2);
    b.query_drop("INSERT INTO t VALUES (3, 3)").unwrap();
    assert_eq!(count(&mut a), 1);
    assert_eq!(count(&mut lazy), 2);
    a.query_drop("COMMIT").unwrap();
    lazy.query_drop("COMMIT").unwrap();
    assert_eq!(count(&mut a), 3);
}

#[test]
fn read_committed_reads_a_fresh_view_per_statement_repeatable_read_does_not() {
    let (_s, mut a, mut b) = two_connections();
    a.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        .unwrap();
    a.query_drop("BEGIN").unwrap();
    assert_eq!(v1(&mut a), 1);
    b.query_drop("UPDATE t SET v = 2 WHERE id = 1").unwrap();
    assert_eq!(v1(&mut a), 2);
    a.query_drop("COMMIT").unwrap();

    // SET TRANSACTION without a scope: the next transaction only.
    a.query_drop("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .unwrap();
    a.query_drop("BEGIN").unwrap();
    assert_eq!(v1(&mut a), 2);
    b.query_drop("UPDATE t SET v = 3 WHERE id = 1").unwrap();
    assert_eq!(v1(&mut a), 2);
    a.query_drop("COMMIT").unwrap();

    // Back to the session's READ COMMITTED.
    a.query_drop("BEGIN").unwrap();
    assert_eq!(v1(&mut a), 3);
    b.query_drop("UPDATE t SET v = 4 WHERE id = 1").unwrap();
    assert_eq!(v1(&mut a), 4);
    a.query_drop("COMMIT").unwrap();
}

#[test]
fn read_uncommitted_sees_uncommitted_rows() {
    let (_s, mut a, mut b) = two_connections();
    a.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
        .unwrap();
    b.query_drop("BEGIN").unwrap();
    b.query_drop("UPDATE t SET v = 9 WHERE id = 1").unwrap();
    assert_eq!(v1(&mut a), 9);
    b.query_drop("ROLLBACK").unwrap();
    assert_eq!(v1(&mut a), 1);
}

#[test]
fn serializable_share_locks_plain_reads_inside_a_transaction_only() {
    let (_s, mut a, mut b) = two_connections();
    a.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
        .unwrap();
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    a.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    // Autocommitted SELECT: a consistent read, no lock left behind.
    assert_eq!(v1(&mut a), 1);
    b.query_drop("UPDATE t SET v = 2 WHERE id = 1").unwrap();
    // Inside a transaction (autocommit=0) the SELECT share-locks the row.
    a.query_drop("SET autocommit = 0").unwrap();
    assert_eq!(v1(&mut a), 2);
    assert_eq!(code(b.query_drop("UPDATE t SET v = 3 WHERE id = 1")), 1205);
    a.query_drop("COMMIT").unwrap();
    b.query_drop("UPDATE t SET v = 3 WHERE id = 1").unwrap();
    // An autocommitted SELECT does not wait for a writer's lock either.
    a.query_drop("SET autocommit = 1").unwrap();
    b.query_drop("BEGIN").unwrap();
    b.query_drop("UPDATE t SET v = 4 WHERE id = 1").unwrap();
    assert_eq!(v1(&mut a), 3);
    // But one in BEGIN does.
    a.query_drop("BEGIN").unwrap();
    assert_eq!(
        code(a.query::<i64, _>("SELECT v FROM t WHERE id = 1")),
        1205
    );
    a.query_drop("ROLLBACK").unwrap();
    b.query_drop("ROLLBACK").unwrap();
}

#[test]
fn rollback_to_savepoint_keeps_the_row_locks_it_took() {
    let (_s, mut a, mut b) = two_connections();
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("SAVEPOINT s").unwrap();
    a.query_drop("UPDATE t SET v = 5 WHERE id = 1").unwrap();
    a.query_drop("ROLLBACK TO SAVEPOINT s").unwrap();
    assert_eq!(v1(&mut a), 1);
    // MySQL 8's InnoDB keeps them (its manual says so); MariaDB 10.11 releases them.
    if common::Flavor::from_env() == common::Flavor::Strata {
        assert_eq!(code(b.query_drop("UPDATE t SET v = 6 WHERE id = 1")), 1205);
    }
    a.query_drop("COMMIT").unwrap();
    b.query_drop("UPDATE t SET v = 6 WHERE id = 1").unwrap();
    assert_eq!(v1(&mut a), 6);
}

#[test]
fn sql_prepared_statements_over_the_wire() {
    let (_s, mut a, _b) = two_connections();
    a.query_drop("PREPARE ins FROM 'INSERT INTO t VALUES (?, ?)'")
        .unwrap();
    a.query_drop("SET @i = 7, @v = 70").unwrap();
    a.query_drop("EXECUTE ins USING @i, @v").unwrap();
    assert_eq!(a.affected_rows(), 1);
    a.query_drop("PREPARE sel FROM 'SELECT v FROM t WHERE id = ?'")
        .unwrap();
    let v: Option<i64> = a.query_first("EXECUTE sel USING @i").unwrap();
    assert_eq!(v, Some(70));
    a.query_drop("DEALLOCATE PREPARE sel").unwrap();
    assert_eq!(code(a.query_drop("EXECUTE sel USING @i")), 1243);
}

/// A snapshot older than a rebuild (ALTER … MODIFY of a column's type) or a TRUNCATE
/// cannot read the table: 1412, as MySQL and MariaDB, never a table that looks empty
/// to it (the copied rows are all newer than the snapshot). An instant ADD COLUMN
/// rewrites no row: the snapshot reads on. After COMMIT a new snapshot reads the table.
#[test]
fn a_snapshot_older_than_a_rebuild_gets_1412() {
    let (_s, mut a, mut b) = two_connections();
    b.query_drop("CREATE TABLE other (id INT) ENGINE=InnoDB")
        .unwrap();
    for (ddl, after) in [
        ("ALTER TABLE t MODIFY v BIGINT", 1),
        ("ALTER TABLE t ADD COLUMN z INT, ALGORITHM=COPY", 1),
        ("TRUNCATE TABLE t", 0),
    ] {
        a.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            .unwrap();
        // The snapshot exists (it read another table), t's metadata lock is not held.
        let _: Option<i64> = a.query_first("SELECT COUNT(*) FROM other").unwrap();
        b.query_drop(ddl).unwrap();
        assert_eq!(
            code(a.query::<mysql::Row, _>("SELECT * FROM t")),
            1412,
            "{ddl}"
        );
        a.query_drop("COMMIT").unwrap();
        assert_eq!(count(&mut a), after, "{ddl}");
    }
    b.query_drop("INSERT INTO t (id, v) VALUES (1, 1)").unwrap();
    a.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    let _: Option<i64> = a.query_first("SELECT COUNT(*) FROM other").unwrap();
    b.query_drop("ALTER TABLE t ADD COLUMN w INT, ALGORITHM=INSTANT")
        .unwrap();
    assert_eq!(count(&mut a), 1);
    a.query_drop("COMMIT").unwrap();
}
