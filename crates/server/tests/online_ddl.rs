//! Online ADD INDEX on the btree engine, over the wire with real connections: while
//! `ALTER TABLE … ADD INDEX` builds an index on a table of 200,000 rows, four connections
//! insert, update and delete rows and count what the server acknowledged. Afterwards
//! every acknowledged change is in the table, CHECK TABLE passes, and the new index
//! agrees with the table (the same count and sums read through it with FORCE INDEX as
//! through the primary key, and each changed row found by its new key); the writers
//! kept committing while the index was built. Also: a new UNIQUE index over duplicate
//! values fails with MySQL's 1062 and leaves the table as it was; `LOCK=NONE` is
//! accepted for ADD INDEX on InnoDB and refused (1846) where it cannot be honoured.

use crate::common;

use mysql::prelude::Queryable;
use mysql::Conn;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const ROWS: i64 = 200_000;
const WRITERS: i64 = 4;

fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// `d.t` with `ROWS` rows: k = id % 9973 (so k repeats), c a 60-byte string.
fn load(c: &mut Conn, engine: &str) {
    c.query_drop("CREATE DATABASE IF NOT EXISTS d").unwrap();
    c.query_drop(format!(
        "CREATE TABLE d.t (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(60) NOT NULL) ENGINE={engine}"
    ))
    .unwrap();
    let mut id = 1;
    while id <= ROWS {
        let end = (id + 2000).min(ROWS + 1);
        let values: Vec<String> = (id..end)
            .map(|i| format!("({i},{},'{:0>60}')", i % 9973, i))
            .collect();
        c.query_drop(format!("INSERT INTO d.t VALUES {}", values.join(",")))
            .unwrap();
        id = end;
    }
}

/// What one writer's acknowledged statements left: id → k (None: deleted).
type Model = HashMap<i64, Option<i64>>;

/// Writer `w` changes only rows whose id ≡ w + 1 (mod WRITERS) and inserts new ids of
/// that class above `ROWS`, so the writers never conflict and the model is exact. Runs until
/// `stop`; every statement is autocommitted and recorded once acknowledged.
fn writer(port: u16, w: i64, stop: Arc<AtomicBool>, acks: Arc<AtomicU64>) -> Model {
    let mut c = common::connect(port, Some("d"));
    let mut rng = rand::rngs::StdRng::seed_from_u64(w as u64 + 7);
    let mut model: Model = HashMap::new();
    let mut next_new = ROWS + 1 + w;
    while !stop.load(Ordering::Relaxed) {
        let pick =
            |rng: &mut rand::rngs::StdRng| rng.gen_range(0..ROWS / WRITERS) * WRITERS + w + 1;
        let r = match rng.gen_range(0..10) {
            0..=3 => {
                let id = next_new;
                next_new += WRITERS;
                let k = rng.gen_range(0..1_000_000);
                c.exec_drop("INSERT INTO t VALUES (?, ?, 'new')", (id, k))
                    .map(|()| {
                        model.insert(id, Some(k));
                    })
            }
            4..=7 => {
                let id = pick(&mut rng);
                let k = rng.gen_range(0..1_000_000);
                // A row this writer deleted stays deleted: UPDATE changes nothing then.
                let gone = matches!(model.get(&id), Some(None));
                c.exec_drop("UPDATE t SET k = ? WHERE id = ?", (k, id))
                    .map(|()| {
                        if !gone {
                            model.insert(id, Some(k));
                        }
                    })
            }
            _ => {
                let id = pick(&mut rng);
                c.exec_drop("DELETE FROM t WHERE id = ?", (id,)).map(|()| {
                    model.insert(id, None);
                })
            }
        };
        match r {
            Ok(()) => {
                acks.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => panic!("writer {w}: {e}"),
        }
    }
    model
}

fn one_row(c: &mut Conn, sql: &str) -> (i64, i64, i64) {
    let r: Option<(i64, Option<i64>, Option<i64>)> = c.query_first(sql).unwrap();
    let (n, a, b) = r.unwrap();
    (n, a.unwrap_or(0), b.unwrap_or(0))
}

#[test]
fn add_index_while_four_connections_write_loses_nothing() {
    let s = common::TestServer::start(&[]);
    let mut c = common::connect(s.port, None);
    load(&mut c, "InnoDB");
    c.query_drop("USE d").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let acks = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (stop, acks) = (stop.clone(), acks.clone());
            let port = s.port;
            thread::spawn(move || writer(port, w, stop, acks))
        })
        .collect();
    thread::sleep(Duration::from_millis(300));
    let before = acks.load(Ordering::Relaxed);
    let started = Instant::now();
    c.query_drop("ALTER TABLE t ADD INDEX k_idx (k), ALGORITHM=INPLACE, LOCK=NONE")
        .unwrap();
    let took = started.elapsed();
    let during = acks.load(Ordering::Relaxed) - before;
    thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let mut model: Model = HashMap::new();
    for h in writers {
        model.extend(h.join().unwrap());
    }
    eprintln!(
        "ADD INDEX on {ROWS} rows took {took:?}; {during} writes acknowledged meanwhile \
         ({:.0}/s)",
        during as f64 / took.as_secs_f64()
    );
    assert!(during > 0, "no write was acknowledged during the build");

    // Every acknowledged change is there, read through the primary key and the new
    // index alike.
    let mut want_rows = ROWS;
    let mut want_k: i64 = (1..=ROWS).map(|i| i % 9973).sum();
    let mut want_id: i64 = (1..=ROWS).sum();
    for (&id, v) in &model {
        let was = (id <= ROWS).then_some(id % 9973);
        match (was, v) {
            (Some(old), Some(k)) => want_k += k - old,
            (Some(old), None) => {
                want_rows -= 1;
                want_k -= old;
                want_id -= id;
            }
            (None, Some(k)) => {
                want_rows += 1;
                want_k += k;
                want_id += id;
            }
            (None, None) => {}
        }
    }
    let want = (want_rows, want_k, want_id);
    let by_pk = one_row(
        &mut c,
        "SELECT COUNT(*), SUM(k), SUM(id) FROM t FORCE INDEX (PRIMARY) WHERE id > -1",
    );
    let by_k = one_row(
        &mut c,
        "SELECT COUNT(*), SUM(k), SUM(id) FROM t FORCE INDEX (k_idx) WHERE k > -1",
    );
    assert_eq!(by_pk, want, "through the primary key");
    assert_eq!(by_k, want, "through the new index");
    let plan: Vec<mysql::Row> = c
        .query("EXPLAIN SELECT COUNT(*) FROM t FORCE INDEX (k_idx) WHERE k > -1")
        .unwrap();
    let key: Option<String> = plan[0].get("key").unwrap();
    assert_eq!(key.as_deref(), Some("k_idx"));
    // Each changed row by its final key, through the index.
    let mut checked = 0;
    for (&id, v) in model.iter().take(3000) {
        let found: Vec<i64> = match v {
            Some(k) => c
                .exec("SELECT id FROM t FORCE INDEX (k_idx) WHERE k = ?", (k,))
                .unwrap(),
            None => c
                .exec("SELECT id FROM t FORCE INDEX (PRIMARY) WHERE id = ?", (id,))
                .unwrap(),
        };
        match v {
            Some(_) => assert!(found.contains(&id), "row {id} not found by its new key"),
            None => assert!(found.is_empty(), "deleted row {id} is back"),
        }
        checked += 1;
    }
    assert!(checked > 100, "the writers did too little: {checked}");
    let check: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
    assert_eq!(check.last().unwrap().3, "OK", "{check:?}");
    // The index is part of the table from now on: SHOW and further writes see it.
    let ct: (String, String) = c.query_first("SHOW CREATE TABLE t").unwrap().unwrap();
    assert!(ct.1.contains("KEY `k_idx` (`k`)"), "{}", ct.1);
    c.query_drop("INSERT INTO t VALUES (-5, -5, 'x')").unwrap();
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM t FORCE INDEX (k_idx) WHERE k = -5")
        .unwrap()
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn a_unique_index_over_duplicates_fails_with_1062_and_leaves_the_table_alone() {
    let s = common::TestServer::start(&[]);
    let mut c = common::connect(s.port, None);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT) ENGINE=InnoDB")
        .unwrap();
    let values: Vec<String> = (1..=20_000)
        .map(|i| format!("({i},{},{})", if i == 17_000 { 5 } else { i }, i % 7))
        .collect();
    c.query_drop(format!("INSERT INTO t VALUES {}", values.join(",")))
        .unwrap();
    // Small sort runs: the duplicate is found in the merge of spilled runs.
    let e = c
        .query_drop("ALTER TABLE t ADD UNIQUE INDEX uk (k)")
        .unwrap_err();
    match e {
        mysql::Error::MySqlError(e) => {
            assert_eq!(e.code, 1062);
            assert_eq!(e.message, "Duplicate entry '5' for key 't.uk'");
        }
        other => panic!("{other}"),
    }
    let ct: (String, String) = c.query_first("SHOW CREATE TABLE t").unwrap().unwrap();
    assert!(!ct.1.contains("uk"), "{}", ct.1);
    // NULLs are never duplicates; the index over them builds, and then holds.
    c.query_drop("UPDATE t SET k = NULL WHERE id IN (5, 17000, 9)")
        .unwrap();
    c.query_drop("CREATE UNIQUE INDEX uk ON t (k)").unwrap();
    assert_eq!(code(c.query_drop("INSERT INTO t VALUES (0, 6, 0)")), 1062);
    c.query_drop("INSERT INTO t VALUES (0, NULL, 0)").unwrap();
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM t FORCE INDEX (uk) WHERE k IS NULL")
        .unwrap()
        .unwrap();
    assert_eq!(n, 4);
    // A multi-column index built in the same statement as a second one.
    c.query_drop("ALTER TABLE t ADD INDEX kv (v, k), ADD INDEX v1 (v)")
        .unwrap();
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM t FORCE INDEX (kv) WHERE v = 3")
        .unwrap()
        .unwrap();
    let m: i64 = c
        .query_first("SELECT COUNT(*) FROM t FORCE INDEX (PRIMARY) WHERE v = 3")
        .unwrap()
        .unwrap();
    assert_eq!(n, m);
    let check: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
    assert_eq!(check.last().unwrap().3, "OK", "{check:?}");
}

#[test]
fn lock_none_is_honoured_for_add_index_and_refused_where_it_cannot_be() {
    let s = common::TestServer::start(&[]);
    let mut c = common::connect(s.port, None);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE i (id INT PRIMARY KEY, k INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("CREATE TABLE m (id INT PRIMARY KEY, k INT) ENGINE=MyISAM")
        .unwrap();
    c.query_drop("INSERT INTO i VALUES (1, 1), (2, 2)").unwrap();
    c.query_drop("INSERT INTO m VALUES (1, 1), (2, 2)").unwrap();
    c.query_drop("ALTER TABLE i ADD INDEX k (k), LOCK=NONE")
        .unwrap();
    c.query_drop("ALTER TABLE i ADD INDEX k2 (k, id), ALGORITHM=INPLACE, LOCK=SHARED")
        .unwrap();
    c.query_drop("ALTER TABLE i ADD INDEX k3 (id, k), LOCK=EXCLUSIVE")
        .unwrap();
    assert_eq!(
        code(c.query_drop("ALTER TABLE m ADD INDEX k (k), LOCK=NONE")),
        1846
    );
    // A change InnoDB rebuilds the table for cannot run with LOCK=NONE here either.
    assert_eq!(
        code(c.query_drop("ALTER TABLE i MODIFY k BIGINT, LOCK=NONE")),
        1846
    );
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM i FORCE INDEX (k2) WHERE k > 0")
        .unwrap()
        .unwrap();
    assert_eq!(n, 2);
}
