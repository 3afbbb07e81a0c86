//! Metadata locks over the wire, with two or more real connections (the `mysql`
//! crate): DDL waits behind open transactions that used the table (TRUNCATE no longer
//! lets a rolled-back row come back, DROP TABLE no longer pulls a table from under a
//! reader), `lock_wait_timeout` ends the wait with 1205 and the connection stays
//! usable, ROLLBACK TO SAVEPOINT keeps the locks, a wait cycle is a deadlock (1213)
//! that rolls the victim back, FLUSH TABLES WITH READ LOCK holds writers off until
//! UNLOCK TABLES, and a stress run of writers, a reader and CREATE/DROP INDEX on both
//! engines loses no acknowledged row and returns no internal error.
//!
//! Runs against MariaDB too (`STRATA_TEST_ORACLE=mariadb`).

use crate::common;

use mysql::prelude::Queryable;
use mysql::Conn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// A server with `d.t (id, v)` holding (1, 1) and (2, 2) in `engine`.
fn server_with_table(engine: &str) -> common::TestServer {
    let server = common::TestServer::start(&[]);
    let mut setup = common::connect(server.port, None);
    setup.query_drop("CREATE DATABASE d").unwrap();
    setup
        .query_drop(format!(
            "CREATE TABLE d.t (id INT PRIMARY KEY, v INT) ENGINE={engine}"
        ))
        .unwrap();
    setup
        .query_drop("INSERT INTO d.t VALUES (1, 1), (2, 2)")
        .unwrap();
    server
}

fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// Runs `sql` on a new connection in another thread; the receiver gets its result
/// (the error code, or 0) when it finishes.
fn in_background(port: u16, sql: &'static str) -> mpsc::Receiver<u16> {
    let (tx, rx) = mpsc::channel();
    let mut c = common::connect(port, Some("d"));
    thread::spawn(move || {
        let r = match c.query_drop(sql) {
            Ok(()) => 0,
            Err(mysql::Error::MySqlError(e)) => e.code,
            Err(e) => panic!("{sql}: {e}"),
        };
        let _ = tx.send(r);
    });
    rx
}

/// True when the background statement is still running after `d`.
fn still_waiting(rx: &mpsc::Receiver<u16>, d: Duration) -> bool {
    matches!(rx.recv_timeout(d), Err(mpsc::RecvTimeoutError::Timeout))
}

fn count(c: &mut Conn, sql: &str) -> i64 {
    c.query_first(sql).unwrap().unwrap()
}

#[test]
fn truncate_waits_for_an_open_updating_transaction_and_its_rollback_brings_nothing_back() {
    let s = server_with_table("InnoDB");
    let mut a = common::connect(s.port, Some("d"));
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE t SET v = 10 WHERE id = 1").unwrap();
    let truncate = in_background(s.port, "TRUNCATE TABLE t");
    assert!(still_waiting(&truncate, Duration::from_millis(700)));
    // The transaction still sees its own change while TRUNCATE waits.
    assert_eq!(count(&mut a, "SELECT v FROM t WHERE id = 1"), 10);
    a.query_drop("ROLLBACK").unwrap();
    assert_eq!(truncate.recv_timeout(Duration::from_secs(10)), Ok(0));
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 0);
}

#[test]
fn drop_table_waits_for_a_readers_transaction() {
    for engine in ["InnoDB", "MyISAM"] {
        let s = server_with_table(engine);
        let mut a = common::connect(s.port, Some("d"));
        a.query_drop("BEGIN").unwrap();
        assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 2);
        let drop = in_background(s.port, "DROP TABLE t");
        assert!(still_waiting(&drop, Duration::from_millis(700)), "{engine}");
        assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 2, "{engine}");
        a.query_drop("COMMIT").unwrap();
        assert_eq!(drop.recv_timeout(Duration::from_secs(10)), Ok(0));
        assert_eq!(code(a.query_drop("SELECT * FROM t")), 1146);
    }
}

#[test]
fn lock_wait_timeout_gives_1205_and_the_connection_stays_usable() {
    let s = server_with_table("InnoDB");
    let mut a = common::connect(s.port, Some("d"));
    let mut b = common::connect(s.port, Some("d"));
    a.query_drop("BEGIN").unwrap();
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 2);
    b.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    assert_eq!(count(&mut b, "SELECT @@session.lock_wait_timeout"), 1);
    let started = Instant::now();
    assert_eq!(code(b.query_drop("TRUNCATE TABLE t")), 1205);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert_eq!(count(&mut b, "SELECT COUNT(*) FROM t"), 2);
    b.query_drop("INSERT INTO t VALUES (3, 3)").unwrap();
    // The DML statement that timed out behind nothing else left the reader's
    // transaction alone; it ends normally and the DDL goes through.
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 2);
    a.query_drop("COMMIT").unwrap();
    b.query_drop("TRUNCATE TABLE t").unwrap();
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 0);
}

/// MySQL 8 keeps the locks (its binary log is on by default, and the transaction
/// still holds the row lock the UPDATE took); MariaDB without a binary log releases
/// the locks taken after the savepoint, so the oracle run skips this.
#[test]
fn rollback_to_savepoint_keeps_the_metadata_locks() {
    if common::Flavor::from_env() == common::Flavor::MariaDb {
        return;
    }
    let s = server_with_table("InnoDB");
    let mut a = common::connect(s.port, Some("d"));
    let mut b = common::connect(s.port, Some("d"));
    a.query_drop("BEGIN").unwrap();
    a.query_drop("SAVEPOINT sp").unwrap();
    a.query_drop("UPDATE t SET v = 5 WHERE id = 2").unwrap();
    a.query_drop("ROLLBACK TO SAVEPOINT sp").unwrap();
    b.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    assert_eq!(code(b.query_drop("DROP TABLE t")), 1205);
    a.query_drop("COMMIT").unwrap();
    b.query_drop("DROP TABLE t").unwrap();
}

#[test]
fn a_metadata_lock_cycle_is_a_deadlock_that_rolls_the_victim_back() {
    let s = server_with_table("InnoDB");
    let mut a = common::connect(s.port, Some("d"));
    a.query_drop("CREATE TABLE u (id INT PRIMARY KEY) ENGINE=InnoDB")
        .unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("INSERT INTO u VALUES (1)").unwrap();
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 2);
    let truncate = in_background(s.port, "TRUNCATE TABLE t");
    assert!(still_waiting(&truncate, Duration::from_millis(500)));
    // Writing now would queue behind TRUNCATE, which waits for this transaction.
    let started = Instant::now();
    assert_eq!(code(a.query_drop("INSERT INTO t VALUES (7, 7)")), 1213);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(truncate.recv_timeout(Duration::from_secs(10)), Ok(0));
    // The whole transaction was rolled back, its insert into u too.
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM u"), 0);
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 0);
}

#[test]
fn flush_tables_with_read_lock_holds_writers_off_until_unlock_tables() {
    let s = server_with_table("InnoDB");
    let mut a = common::connect(s.port, Some("d"));
    a.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    let insert = in_background(s.port, "INSERT INTO t VALUES (3, 3)");
    let ddl = in_background(s.port, "CREATE INDEX v ON t (v)");
    assert!(still_waiting(&insert, Duration::from_millis(700)));
    assert!(still_waiting(&ddl, Duration::from_millis(10)));
    // Reads go on; the lock's own session may not write (1223) nor lock for writing.
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 2);
    assert_eq!(code(a.query_drop("INSERT INTO t VALUES (4, 4)")), 1223);
    assert_eq!(code(a.query_drop("LOCK TABLES t WRITE")), 1223);
    a.query_drop("UNLOCK TABLES").unwrap();
    assert_eq!(insert.recv_timeout(Duration::from_secs(10)), Ok(0));
    assert_eq!(ddl.recv_timeout(Duration::from_secs(10)), Ok(0));
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 3);
    // Not under LOCK TABLES (1192).
    a.query_drop("LOCK TABLES t READ").unwrap();
    assert_eq!(code(a.query_drop("FLUSH TABLES WITH READ LOCK")), 1192);
    a.query_drop("UNLOCK TABLES").unwrap();
}

#[test]
fn flush_tables_with_read_lock_holds_off_the_commit_of_a_transaction_that_wrote() {
    let s = server_with_table("InnoDB");
    let mut a = common::connect(s.port, Some("d"));
    let mut b = common::connect(s.port, Some("d"));
    b.query_drop("BEGIN").unwrap();
    b.query_drop("INSERT INTO t VALUES (3, 3)").unwrap();
    a.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    b.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    assert_eq!(code(b.query_drop("COMMIT")), 1205);
    // A COMMIT that could not get the commit lock rolled the transaction back.
    a.query_drop("UNLOCK TABLES").unwrap();
    b.query_drop("COMMIT").unwrap();
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 2);
    // Without a timeout, the COMMIT waits and then goes through.
    b.query_drop("BEGIN").unwrap();
    b.query_drop("INSERT INTO t VALUES (3, 3)").unwrap();
    a.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    b.query_drop("SET SESSION lock_wait_timeout = 30").unwrap();
    let waiter = thread::spawn(move || b.query_drop("COMMIT").map(|_| Instant::now()));
    thread::sleep(Duration::from_millis(700));
    let unlocked = Instant::now();
    a.query_drop("UNLOCK TABLES").unwrap();
    assert!(waiter.join().unwrap().unwrap() >= unlocked);
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM t"), 3);
}

#[test]
fn ddl_under_lock_tables_needs_a_write_lock() {
    let s = server_with_table("InnoDB");
    let mut a = common::connect(s.port, Some("d"));
    a.query_drop("CREATE TABLE u (id INT PRIMARY KEY)").unwrap();
    a.query_drop("LOCK TABLES t WRITE").unwrap();
    assert_eq!(code(a.query_drop("DROP TABLE u")), 1100);
    assert_eq!(code(a.query_drop("DROP DATABASE d")), 1192);
    a.query_drop("LOCK TABLES t READ").unwrap();
    assert_eq!(code(a.query_drop("TRUNCATE TABLE t")), 1099);
    // Another session cannot write a table locked READ, nor read one locked WRITE.
    let mut b = common::connect(s.port, Some("d"));
    b.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    assert_eq!(code(b.query_drop("INSERT INTO t VALUES (9, 9)")), 1205);
    a.query_drop("UNLOCK TABLES").unwrap();
    b.query_drop("INSERT INTO t VALUES (9, 9)").unwrap();
}

/// Errors the stress clients met: (who, code, message).
type Errors = Arc<Mutex<Vec<(String, u16, String)>>>;

/// Error codes that mean the server broke, not that the client asked for something
/// wrong: an engine error (1030), a "crashed" table (1194), an internal error (1105).
const INTERNAL: [u16; 3] = [1030, 1194, 1105];

/// 4 autocommit writers, a reader, and a connection looping CREATE INDEX / DROP INDEX
/// on the same table for a few seconds (`STRATA_MDL_STRESS_SECS`, default 3).
fn stress(engine: &str) {
    let secs: u64 = std::env::var("STRATA_MDL_STRESS_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let server = common::TestServer::start(&[]);
    let port = server.port;
    let mut setup = common::connect(port, None);
    setup.query_drop("CREATE DATABASE d").unwrap();
    setup
        .query_drop(format!(
            "CREATE TABLE d.s (id INT PRIMARY KEY, w INT, v INT) ENGINE={engine}"
        ))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let errors: Errors = Arc::new(Mutex::new(Vec::new()));
    let note = |errors: &Errors, who: &str, e: mysql::Error| {
        let (code, msg) = match e {
            mysql::Error::MySqlError(e) => (e.code, e.message),
            other => (0, other.to_string()),
        };
        errors.lock().unwrap().push((who.to_string(), code, msg));
    };
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (stop, errors) = (stop.clone(), errors.clone());
            let mut c = common::connect(port, Some("d"));
            thread::spawn(move || {
                let mut acked = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    let id = w * 10_000_000 + i;
                    match c.exec_drop("INSERT INTO s VALUES (?, ?, ?)", (id, w, i % 97)) {
                        Ok(()) => acked.push(id),
                        Err(e) => note(&errors, "writer", e),
                    }
                }
                acked
            })
        })
        .collect();
    let reader = {
        let (stop, errors) = (stop.clone(), errors.clone());
        let mut c = common::connect(port, Some("d"));
        thread::spawn(move || {
            let mut reads = 0u64;
            while !stop.load(Ordering::Relaxed) {
                match c.query_first::<i64, _>("SELECT COUNT(*) FROM s WHERE v = 5") {
                    Ok(_) => reads += 1,
                    Err(e) => note(&errors, "reader", e),
                }
            }
            reads
        })
    };
    let mut ddl = common::connect(port, Some("d"));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut rounds = 0;
    while Instant::now() < deadline {
        rounds += 1;
        for sql in [
            format!("CREATE INDEX ix{rounds} ON s (v)"),
            format!("DROP INDEX ix{rounds} ON s"),
        ] {
            if let Err(e) = ddl.query_drop(&sql) {
                note(&errors, "ddl", e);
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let mut acked: Vec<i64> = writers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let reads = reader.join().unwrap();
    let errors = errors.lock().unwrap().clone();
    let internal: Vec<_> = errors
        .iter()
        .filter(|(_, c, _)| INTERNAL.contains(c) || *c == 0)
        .take(5)
        .collect();
    assert!(
        internal.is_empty(),
        "{engine}: internal errors {internal:?}"
    );
    assert!(
        errors.is_empty(),
        "{engine}: errors {:?}",
        &errors[..errors.len().min(5)]
    );
    let mut present: Vec<i64> = setup.query("SELECT id FROM d.s ORDER BY id").unwrap();
    acked.sort_unstable();
    present.sort_unstable();
    assert_eq!(
        acked.len(),
        present.len(),
        "{engine}: acknowledged {} rows, {} present",
        acked.len(),
        present.len()
    );
    assert_eq!(acked, present, "{engine}: the rows differ");
    // The secondary index agrees with the table, and CHECK TABLE passes.
    setup.query_drop("CREATE INDEX v ON d.s (v)").unwrap();
    let by_index: i64 = setup
        .query_first("SELECT COUNT(*) FROM d.s FORCE INDEX (v) WHERE v >= 0")
        .unwrap()
        .unwrap();
    assert_eq!(by_index as usize, acked.len(), "{engine}");
    let check: Vec<(String, String, String, String)> = setup.query("CHECK TABLE d.s").unwrap();
    assert_eq!(check.last().map(|r| r.3.as_str()), Some("OK"), "{check:?}");
    assert!(
        rounds >= 2 && reads > 0,
        "{engine}: {rounds} DDL rounds, {reads} reads"
    );
    eprintln!(
        "{engine}: {} acknowledged inserts, all present; {rounds} CREATE/DROP INDEX rounds; {reads} reads",
        acked.len()
    );
}

#[test]
fn writers_and_index_ddl_on_innodb_lose_nothing() {
    stress("InnoDB");
}

#[test]
fn writers_and_index_ddl_on_myisam_lose_nothing() {
    stress("MyISAM");
}
