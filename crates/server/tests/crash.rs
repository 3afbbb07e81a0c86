//! Crash recovery of the `btree` engine under durable settings: concurrent writers run
//! money transfers (two account updates and a ledger insert per transaction), the server
//! is killed with SIGKILL at a random moment, restarted, and checked:
//!
//! * every transaction whose COMMIT was acknowledged is present (its ledger row exists);
//! * no transaction is half applied (the balances still sum to the starting total, and
//!   each account's balance equals its start plus its ledger entries);
//! * CHECK TABLE finds every secondary index in agreement with its clustered index.
//!
//! CI runs 20 cycles; `STRATA_CRASH_CYCLES=500` runs a longer soak by hand, and
//! `STRATA_CRASH_SNAPSHOT=DIR` keeps a copy of each crashed data directory (before
//! recovery) in `DIR/cycleN` for diagnosis.

use crate::common;

use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ACCOUNTS: i64 = 50;
const START: i64 = 1000;
const WRITERS: usize = 4;

fn setup(port: u16) {
    let mut c = common::connect(port, None);
    c.query_drop("CREATE DATABASE bank").unwrap();
    c.query_drop("USE bank").unwrap();
    c.query_drop(
        "CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL, moves INT NOT NULL, \
         note VARCHAR(200), KEY by_moves (moves)) ENGINE=InnoDB",
    )
    .unwrap();
    c.query_drop(
        "CREATE TABLE ledger (id BIGINT PRIMARY KEY, writer INT NOT NULL, seq INT NOT NULL, \
         src INT NOT NULL, dst INT NOT NULL, amount INT NOT NULL, \
         UNIQUE KEY ws (writer, seq), KEY by_src (src)) ENGINE=InnoDB",
    )
    .unwrap();
    for i in 0..ACCOUNTS {
        c.query_drop(format!(
            "INSERT INTO acct VALUES ({i}, {START}, 0, '{}')",
            "n".repeat((i * 3) as usize)
        ))
        .unwrap();
    }
}

/// One writer: transfers until `stop`; returns the sequence numbers whose COMMIT
/// returned OK.
fn writer(port: u16, w: usize, first_seq: i64, stop: Arc<AtomicBool>) -> Vec<i64> {
    let mut acked = Vec::new();
    let Ok(mut c) = mysql::Conn::new(common::opts(port, Some("bank"))) else {
        return acked;
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(w as u64 * 7919 + first_seq as u64);
    let mut seq = first_seq;
    while !stop.load(Ordering::Relaxed) {
        let src = rng.gen_range(0..ACCOUNTS);
        let dst = (src + rng.gen_range(1..ACCOUNTS)) % ACCOUNTS;
        let amount = rng.gen_range(1..50);
        let id = (w as i64) << 40 | seq;
        let pad = "x".repeat(rng.gen_range(0..150));
        let r = (|| -> mysql::Result<()> {
            c.query_drop("BEGIN")?;
            c.exec_drop(
                "UPDATE acct SET bal = bal - ?, moves = moves + 1, note = ? WHERE id = ?",
                (amount, &pad, src),
            )?;
            c.exec_drop(
                "UPDATE acct SET bal = bal + ?, moves = moves + 1 WHERE id = ?",
                (amount, dst),
            )?;
            c.exec_drop(
                "INSERT INTO ledger VALUES (?, ?, ?, ?, ?, ?)",
                (id, w as i64, seq, src, dst, amount),
            )?;
            c.query_drop("COMMIT")
        })();
        match r {
            Ok(()) => acked.push(seq),
            Err(mysql::Error::MySqlError(e)) if e.code == 1213 || e.code == 1205 => {
                let _ = c.query_drop("ROLLBACK");
            }
            // The server died under us: stop; what was acknowledged is recorded.
            Err(_) => return acked,
        }
        seq += 1;
    }
    acked
}

fn check(port: u16, acked: &HashMap<usize, BTreeSet<i64>>, cycle: usize) {
    let mut c = common::connect(port, Some("bank"));
    let total: i64 = c.query_first("SELECT SUM(bal) FROM acct").unwrap().unwrap();
    assert_eq!(
        total,
        ACCOUNTS * START,
        "cycle {cycle}: money was created or lost"
    );
    let rows: Vec<(i64, i64, i64, i64, i64)> = c
        .query("SELECT writer, seq, src, dst, amount FROM ledger")
        .unwrap();
    let present: BTreeSet<(usize, i64)> = rows.iter().map(|r| (r.0 as usize, r.1)).collect();
    for (w, seqs) in acked {
        for s in seqs {
            assert!(
                present.contains(&(*w, *s)),
                "cycle {cycle}: acknowledged commit writer {w} seq {s} is missing"
            );
        }
    }
    // Each account = start + what the ledger says moved in and out of it: a transfer
    // whose ledger row exists must have moved the money, and one without must not.
    let mut expect: HashMap<i64, i64> = (0..ACCOUNTS).map(|i| (i, START)).collect();
    for (_, _, src, dst, amount) in &rows {
        *expect.get_mut(src).unwrap() -= amount;
        *expect.get_mut(dst).unwrap() += amount;
    }
    let bals: Vec<(i64, i64)> = c.query("SELECT id, bal FROM acct").unwrap();
    assert_eq!(bals.len() as i64, ACCOUNTS);
    for (id, bal) in bals {
        assert_eq!(
            bal, expect[&id],
            "cycle {cycle}: account {id} disagrees with the ledger"
        );
    }
    for t in ["acct", "ledger"] {
        let rows: Vec<(String, String, String, String)> =
            c.query(format!("CHECK TABLE {t}")).unwrap();
        let last = rows.last().unwrap();
        assert_eq!(
            (last.2.as_str(), last.3.as_str()),
            ("status", "OK"),
            "cycle {cycle}: CHECK TABLE {t}: {rows:?}"
        );
    }
}

#[test]
fn kill_9_at_random_moments_loses_no_acknowledged_commit() {
    let cycles: usize = std::env::var("STRATA_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    // A small pool and log, so evictions, checkpoints and log wrap-around happen often.
    let mut server = common::TestServer::start(&[
        "--innodb-buffer-pool-size",
        "8M",
        "--innodb-log-file-size",
        "2M",
        "--innodb-flush-log-at-trx-commit",
        "1",
    ]);
    setup(server.port);
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    let mut acked: HashMap<usize, BTreeSet<i64>> = HashMap::new();
    let mut next_seq = 0i64;
    for cycle in 0..cycles {
        let stop = Arc::new(AtomicBool::new(false));
        let port = server.port;
        let results = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let stop = stop.clone();
                let results = results.clone();
                let first = next_seq;
                std::thread::spawn(move || {
                    let a = writer(port, w, first, stop);
                    results.lock().unwrap().push((w, a));
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(rng.gen_range(150..900)));
        server.crash();
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().unwrap();
        }
        let mut n = 0;
        for (w, a) in results.lock().unwrap().drain(..) {
            n += a.len();
            acked.entry(w).or_default().extend(a);
        }
        next_seq += 1_000_000;
        // For diagnosis: keep the data directory as the crash left it, before recovery.
        if let Ok(dir) = std::env::var("STRATA_CRASH_SNAPSHOT") {
            let to = std::path::Path::new(&dir).join(format!("cycle{cycle}"));
            let _ = std::fs::remove_dir_all(&to);
            std::fs::create_dir_all(&dir).unwrap();
            let ok = std::process::Command::new("cp")
                .arg("-a")
                .arg(&server.datadir)
                .arg(&to)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "could not copy the data directory to {}", to.display());
        }
        server.start_again();
        check(server.port, &acked, cycle);
        eprintln!("crash cycle {cycle}: {n} commits acknowledged before SIGKILL; all present");
    }
}
