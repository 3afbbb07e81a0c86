//! Two-phase commit between the binary log and the `btree` engine, under SIGKILL:
//! concurrent writers run money transfers (two account updates and a ledger insert per
//! transaction) on a server with `--log-bin`, `sync_binlog=1` and
//! `innodb_flush_log_at_trx_commit=1`; the server is killed at random moments and
//! restarted, 20 times (`STRATA_BINLOG_CRASH_CYCLES` for more). After every restart:
//!
//! * every acknowledged commit is in the tables, no transfer is half applied;
//!
//! and at the end the whole binary log (every file, across the crashes; a small
//! `max_binlog_size` makes it rotate within runs too) is decoded by `mariadb-binlog`
//! and replayed by `mariadb` into an empty MariaDB 10.11 started by the test, whose
//! tables must equal Strata's recovered tables row for row. A transaction the binary
//! log holds but the tables lack (or the reverse) — what a crash between the two logs
//! left before the two-phase commit — makes them differ: the ledger row is extra or
//! missing, and the balances disagree.
//!
//! A missing `mariadbd`, `mariadb-binlog` or `mariadb` skips the replay (a failure in
//! CI); the per-cycle checks run anyway.

use crate::common;

use common::dump::text_rows;
use common::{connect, have_program, Flavor, TestServer};
use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeSet, HashMap};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ACCOUNTS: i64 = 40;
const START: i64 = 1000;
const WRITERS: usize = 6;

fn setup(port: u16) {
    let mut c = connect(port, None);
    for s in [
        "CREATE DATABASE bank",
        "USE bank",
        "CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL, moves INT NOT NULL, \
         note VARCHAR(200), KEY by_moves (moves)) ENGINE=InnoDB",
        "CREATE TABLE ledger (id BIGINT PRIMARY KEY, writer INT NOT NULL, seq INT NOT NULL, \
         src INT NOT NULL, dst INT NOT NULL, amount INT NOT NULL, \
         UNIQUE KEY ws (writer, seq)) ENGINE=InnoDB",
    ] {
        c.query_drop(s).unwrap();
    }
    for i in 0..ACCOUNTS {
        c.query_drop(format!("INSERT INTO acct VALUES ({i}, {START}, 0, '')"))
            .unwrap();
    }
}

/// One writer: transfers until `stop` or the server's death; returns the sequence
/// numbers whose COMMIT returned OK.
fn writer(port: u16, w: usize, first_seq: i64, stop: Arc<AtomicBool>) -> Vec<i64> {
    let mut acked = Vec::new();
    let Ok(mut c) = mysql::Conn::new(common::opts(port, Some("bank"))) else {
        return acked;
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(w as u64 * 104_729 + first_seq as u64);
    let mut seq = first_seq;
    while !stop.load(Ordering::Relaxed) {
        let src = rng.gen_range(0..ACCOUNTS);
        let dst = (src + rng.gen_range(1..ACCOUNTS)) % ACCOUNTS;
        let amount = rng.gen_range(1..50);
        let id = (w as i64) << 40 | seq;
        let pad = "y".repeat(rng.gen_range(0..120));
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
            Err(_) => return acked,
        }
        seq += 1;
    }
    acked
}

fn check(port: u16, acked: &HashMap<usize, BTreeSet<i64>>, cycle: usize) {
    let mut c = connect(port, Some("bank"));
    let total: i64 = c.query_first("SELECT SUM(bal) FROM acct").unwrap().unwrap();
    assert_eq!(
        total,
        ACCOUNTS * START,
        "cycle {cycle}: money created or lost"
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
    let mut expect: HashMap<i64, i64> = (0..ACCOUNTS).map(|i| (i, START)).collect();
    for (_, _, src, dst, amount) in &rows {
        *expect.get_mut(src).unwrap() -= amount;
        *expect.get_mut(dst).unwrap() += amount;
    }
    let bals: Vec<(i64, i64)> = c.query("SELECT id, bal FROM acct").unwrap();
    for (id, bal) in bals {
        assert_eq!(
            bal, expect[&id],
            "cycle {cycle}: account {id} vs the ledger"
        );
    }
}

/// Decodes every file of the log with `mariadb-binlog` and replays it into `maria`.
fn replay(strata: &TestServer, maria_port: u16) {
    let files: Vec<String> = {
        let mut c = connect(strata.port, None);
        text_rows(&mut c, "SHOW BINARY LOGS")
            .into_iter()
            .map(|r| strata.datadir.join(&r[0]).display().to_string())
            .collect()
    };
    let decoded = Command::new("mariadb-binlog")
        .args(&files)
        .output()
        .expect("run mariadb-binlog");
    assert!(
        decoded.status.success(),
        "mariadb-binlog: {}",
        String::from_utf8_lossy(&decoded.stderr)
    );
    let mut load = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{maria_port}"), "-uroot"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mariadb");
    {
        use std::io::Write;
        let mut stdin = load.stdin.take().unwrap();
        stdin.write_all(&decoded.stdout).unwrap();
    }
    let out = load.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "replay: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn kill_9_during_commits_keeps_binlog_and_tables_equal() {
    let cycles: usize = std::env::var("STRATA_BINLOG_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let replay_possible = ["mariadbd", "mariadb-binlog", "mariadb"]
        .iter()
        .all(|p| have_program(p));
    if !replay_possible {
        assert!(
            !common::in_ci(),
            "mariadbd, mariadb-binlog and mariadb are needed in CI"
        );
        eprintln!("binlog_crash: MariaDB programs missing, the replay is skipped");
    }
    // A small log and pool (checkpoints relog open and prepared transactions) and a
    // small max_binlog_size (rotation within a run: xids found in a later file).
    let mut server = TestServer::start_flavor(
        Flavor::Strata,
        &[
            "--log-bin",
            "--sync-binlog=1",
            "--max-binlog-size=65536",
            "--innodb-buffer-pool-size",
            "8M",
            "--innodb-log-file-size",
            "2M",
            "--innodb-flush-log-at-trx-commit",
            "1",
        ],
    );
    setup(server.port);
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let mut acked: HashMap<usize, BTreeSet<i64>> = HashMap::new();
    let mut next_seq = 0i64;
    let mut total_acked = 0;
    for cycle in 0..cycles {
        let stop = Arc::new(AtomicBool::new(false));
        let port = server.port;
        let results = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (stop, results) = (stop.clone(), results.clone());
                let first = next_seq;
                std::thread::spawn(move || {
                    let a = writer(port, w, first, stop);
                    results.lock().unwrap().push((w, a));
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(rng.gen_range(100..700)));
        server.crash();
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().unwrap();
        }
        for (w, a) in results.lock().unwrap().drain(..) {
            total_acked += a.len();
            acked.entry(w).or_default().extend(a);
        }
        next_seq += 1_000_000;
        server.start_again();
        check(server.port, &acked, cycle);
    }
    let log = std::fs::read_to_string(server.datadir.parent().unwrap().join("server.log"))
        .unwrap_or_default();
    let resolved = log
        .lines()
        .filter(|l| l.contains("prepared transaction(s) committed"))
        .count();
    eprintln!(
        "binlog_crash: {cycles} kills, {total_acked} acknowledged commits, \
         {resolved} restart(s) resolved prepared transactions"
    );
    if !replay_possible {
        return;
    }
    let maria = TestServer::start_flavor(Flavor::MariaDb, &[]);
    replay(&server, maria.port);
    for (t, order) in [("acct", "id"), ("ledger", "id")] {
        let sql = format!("SELECT * FROM bank.{t} ORDER BY {order}");
        let a = text_rows(&mut connect(server.port, None), &sql);
        let b = text_rows(&mut connect(maria.port, None), &sql);
        assert!(!a.is_empty());
        assert_eq!(
            a.len(),
            b.len(),
            "{t}: the binary log replayed has {} rows, the recovered table {}",
            b.len(),
            a.len()
        );
        assert!(
            a == b,
            "{t}: the replayed binary log differs from the table"
        );
    }
}
