//! Row locks of large transactions (issue 16, item 2): rows a transaction inserted,
//! updated or deleted are held by the transaction id in their records (InnoDB's
//! implicit lock, `crates/btree/src/lock.rs`), so a transaction of many rows holds no
//! lock entry per row — yet every other transaction that wants one of them, to lock,
//! change or insert it, still waits for it to end. And concurrent upserts of the same
//! keys, which meet each other's implicit locks all the time, lose no increment.

use crate::common;

use common::TestServer;
use mysql::prelude::Queryable;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn row_locks(c: &mut mysql::Conn) -> u64 {
    let row: Option<(String, u64)> = c
        .query_first("SHOW GLOBAL STATUS LIKE 'Strata_btree_row_locks'")
        .unwrap();
    row.map(|r| r.1).unwrap_or(0)
}

#[test]
fn a_large_transaction_holds_no_lock_entry_per_row_yet_others_wait_for_its_rows() {
    let server = TestServer::start(&[]);
    let strata = server.flavor == common::Flavor::Strata;
    let mut a = common::connect(server.port, None);
    a.query_drop("CREATE DATABASE d").unwrap();
    a.query_drop("USE d").unwrap();
    a.query_drop("CREATE TABLE t (id INT PRIMARY KEY, u INT, v INT, UNIQUE KEY (u)) ENGINE=InnoDB")
        .unwrap();
    a.query_drop("INSERT INTO t VALUES (1000000, 1000000, 0)")
        .unwrap();
    let mut b = common::connect(server.port, Some("d"));
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();

    a.query_drop("BEGIN").unwrap();
    for chunk in (1..=40_000).collect::<Vec<u32>>().chunks(2000) {
        let values: Vec<String> = chunk.iter().map(|i| format!("({i}, {i}, 0)")).collect();
        a.query_drop(format!("INSERT INTO t VALUES {}", values.join(",")))
            .unwrap();
    }
    a.query_drop("UPDATE t SET v = 1 WHERE id <= 20000")
        .unwrap();
    a.query_drop("DELETE FROM t WHERE id > 30000 AND id <= 40000")
        .unwrap();
    a.query_drop("UPDATE t SET v = 7 WHERE id = 1000000")
        .unwrap();
    if strata {
        // Before, one entry per inserted row and one per unique value: 80,000 here.
        assert!(row_locks(&mut b) <= 2, "{}", row_locks(&mut b));
    }

    // Each way to reach one of a's rows waits for a (1205 after b's one second).
    for sql in [
        "SELECT v FROM t WHERE id = 5 FOR UPDATE",
        "SELECT v FROM t WHERE id = 25000 LOCK IN SHARE MODE",
        "UPDATE t SET v = 9 WHERE id = 15000",
        "DELETE FROM t WHERE id = 1000000",
        "INSERT INTO t VALUES (7, 999999, 0)",
        "INSERT INTO t VALUES (999999, 8, 0)",
        "INSERT INTO t VALUES (35000, 35000, 0)",
    ] {
        b.query_drop("BEGIN").unwrap();
        // Read as rows: a locking read's error comes after its column definitions,
        // which `query_drop` does not look past.
        match b.query::<mysql::Row, _>(sql) {
            Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1205, "{sql}"),
            other => panic!("{sql}: {other:?}"),
        }
        b.query_drop("ROLLBACK").unwrap();
    }
    // A consistent read does not wait, and does not see a's rows.
    let n: u64 = b.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 1);

    a.query_drop("COMMIT").unwrap();
    b.query_drop("UPDATE t SET v = 9 WHERE id = 15000").unwrap();
    assert_eq!(
        code(b.query_drop("INSERT INTO t VALUES (7, 999999, 0)")),
        1062
    );
    b.query_drop("INSERT INTO t VALUES (35000, 35000, 0)")
        .unwrap();
    let sums: (u64, u64, u64) = b
        .query_first("SELECT COUNT(*), SUM(v), SUM(id = 15000 AND v = 9) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(sums, (30_002, 20_000 - 1 + 9 + 7, 1));
    let check: Vec<(String, String, String, String)> = b.query("CHECK TABLE t").unwrap();
    assert_eq!(check.last().unwrap().3, "OK", "{check:?}");
}

/// Four connections upsert 20 keys (primary and unique secondary) in transactions of
/// two statements, retrying deadlocks: every committed increment is in the table.
#[test]
fn concurrent_upserts_lose_no_increment() {
    let server = TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop(
        "CREATE TABLE d.c (id INT PRIMARY KEY, u INT, n INT, UNIQUE KEY (u)) ENGINE=InnoDB",
    )
    .unwrap();
    let committed = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (port, committed) = (server.port, committed.clone());
            std::thread::spawn(move || {
                let mut c = common::connect(port, Some("d"));
                let mut seed = t * 7919 + 1;
                let mut next = move || {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (seed >> 33) % 20 + 1
                };
                let mut done = 0;
                while done < 150 {
                    let (k1, k2) = (next(), next());
                    let r = c.query_drop("BEGIN").and_then(|_| {
                        for k in [k1, k2] {
                            c.query_drop(format!(
                                "INSERT INTO c VALUES ({k}, {k}, 1) ON DUPLICATE KEY UPDATE n = n + 1"
                            ))?;
                        }
                        c.query_drop("COMMIT")
                    });
                    match r {
                        Ok(()) => {
                            done += 1;
                            committed.fetch_add(2, Ordering::SeqCst);
                        }
                        Err(mysql::Error::MySqlError(e)) if e.code == 1213 || e.code == 1205 => {
                            c.query_drop("ROLLBACK").unwrap();
                        }
                        Err(e) => panic!("{e:?}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let (rows, sum): (u64, u64) = c
        .query_first("SELECT COUNT(*), SUM(n) FROM d.c")
        .unwrap()
        .unwrap();
    assert_eq!(sum, committed.load(Ordering::SeqCst));
    assert!(rows <= 20);
    let check: Vec<(String, String, String, String)> = c.query("CHECK TABLE d.c").unwrap();
    assert_eq!(check.last().unwrap().3, "OK", "{check:?}");
    if server.flavor == common::Flavor::Strata {
        assert_eq!(row_locks(&mut c), 0);
    }
}
