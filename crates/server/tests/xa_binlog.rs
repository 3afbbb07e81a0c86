//! XA transactions of an external coordinator with the binary log on (`--log-bin`), as
//! MySQL 8 logs them (docs/format/binlog.md, "An XA transaction"):
//!
//! * XA PREPARE writes the prepare group (GTID, `XA START`, rows, `XA END`, XA_PREPARE)
//!   and XA COMMIT / XA ROLLBACK of a prepared transaction their own group; ONE PHASE is
//!   an ordinary transaction; `mariadb-binlog` reads the files and `mariadb-binlog … |
//!   mariadb` replays them into a private MariaDB 10.11 the test starts (`mariadbd`
//!   from the Debian package) to the same rows;
//! * a transaction prepared without the log blocks a start with it (a clear refusal);
//! * SIGKILL at random moments while clients run XA START … PREPARE … COMMIT/ROLLBACK:
//!   after each restart XA RECOVER, the tables and what the clients were told agree,
//!   and at the end the binary log replayed into MariaDB gives the same tables and the
//!   same prepared transactions;
//! * a Strata replica of a Strata source applies the groups: the prepare group leaves a
//!   prepared transaction on the replica (also across a crash of the replica), the
//!   commit or rollback group finishes it.
//!
//! Without `mariadbd`, `mariadb-binlog` or `mariadb` the replays are skipped (a failure in CI).

use crate::common;

use common::dump::text_rows;
use common::{connect, have_program, Flavor, TestServer};
use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn code<T>(r: mysql::Result<T>) -> Option<u16> {
    match r {
        Ok(_) => None,
        Err(mysql::Error::MySqlError(e)) => Some(e.code),
        Err(e) => panic!("not a server error: {e}"),
    }
}

/// A private MariaDB for the replays, or None (with a note) when its programs are missing
/// outside CI.
fn private_maria(test: &str) -> Option<TestServer> {
    let ok = [
        "mariadbd",
        "mariadb-install-db",
        "mariadb-binlog",
        "mariadb",
    ]
    .iter()
    .all(|p| have_program(p));
    if !ok {
        assert!(
            !common::in_ci(),
            "{test}: mariadbd, mariadb-binlog and mariadb are needed in CI"
        );
        eprintln!("NOTE: {test}: no mariadbd or mariadb-binlog here: replay skipped");
        return None;
    }
    Some(TestServer::start_flavor(Flavor::MariaDb, &[]))
}

/// XA RECOVER's xids whose gtrid starts with `prefix`, as (formatID, gtrid, bqual).
fn recovered(port: u16, prefix: &str) -> BTreeSet<(i64, Vec<u8>, Vec<u8>)> {
    let rows: Vec<(i64, i64, i64, Vec<u8>)> = connect(port, None).query("XA RECOVER").unwrap();
    rows.into_iter()
        .map(|(f, g, _, d)| (f, d[..g as usize].to_vec(), d[g as usize..].to_vec()))
        .filter(|(_, g, _)| g.starts_with(prefix.as_bytes()))
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

fn xid_sql(x: &(i64, Vec<u8>, Vec<u8>)) -> String {
    format!("X'{}',X'{}',{}", hex(&x.1), hex(&x.2), x.0)
}

/// Every file of the server's binary log, decoded by `mariadb-binlog` and fed to the
/// `mariadb` client connected to MariaDB.
fn replay(strata: &TestServer, maria: u16) {
    let files: Vec<String> = text_rows(&mut connect(strata.port, None), "SHOW BINARY LOGS")
        .into_iter()
        .map(|r| strata.datadir.join(&r[0]).display().to_string())
        .collect();
    let decoded = Command::new("mariadb-binlog")
        .args(&files)
        .output()
        .expect("run mariadb-binlog");
    assert!(
        decoded.status.success(),
        "mariadb-binlog: {}",
        String::from_utf8_lossy(&decoded.stderr)
    );
    let text = String::from_utf8_lossy(&decoded.stdout);
    assert!(
        text.contains("XA PREPARE X'"),
        "mariadb-binlog printed no XA PREPARE"
    );
    let mut load = Command::new("mariadb")
        .args(["--no-defaults", "--protocol=TCP", "-h127.0.0.1", "-uroot"])
        .arg(format!("-P{maria}"))
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

fn events(port: u16) -> Vec<(String, String)> {
    let mut c = connect(port, None);
    let mut out = Vec::new();
    for f in text_rows(&mut c, "SHOW BINARY LOGS") {
        for r in text_rows(&mut c, &format!("SHOW BINLOG EVENTS IN '{}'", f[0])) {
            out.push((r[2].clone(), r[5].clone()));
        }
    }
    out
}

fn table(port: u16, sql: &str) -> Vec<Vec<String>> {
    text_rows(&mut connect(port, None), sql)
}

/// Prepares `xid` on a new connection after running `stmts` in it; returns it.
fn prepare(port: u16, xid: &str, stmts: &[&str]) -> mysql::Conn {
    let mut c = connect(port, Some("xab_replay"));
    c.query_drop(format!("XA START {xid}")).unwrap();
    for s in stmts {
        c.query_drop(*s).unwrap();
    }
    c.query_drop(format!("XA END {xid}")).unwrap();
    c.query_drop(format!("XA PREPARE {xid}")).unwrap();
    c
}

#[test]
fn xa_groups_are_logged_read_by_mariadb_binlog_and_replayed() {
    // A small max_binlog_size: the groups of one XA transaction land in different files.
    let mut server = TestServer::start_flavor(
        Flavor::Strata,
        &["--log-bin", "--max-binlog-size=4096", "--sync-binlog=1"],
    );
    let port = server.port;
    {
        let mut c = connect(port, None);
        c.query_drop("CREATE DATABASE xab_replay").unwrap();
        c.query_drop(
            "CREATE TABLE xab_replay.t (id INT PRIMARY KEY, v VARCHAR(40), n INT) ENGINE=InnoDB",
        )
        .unwrap();
        c.query_drop(
            "INSERT INTO xab_replay.t VALUES (1,'a',1),(2,'b',2),(3,'c',3),(4,'d',4),(5,'e',5)",
        )
        .unwrap();
    }
    // Prepared and committed by its own connection.
    let mut c = prepare(
        port,
        "'xab-c1'",
        &[
            "INSERT INTO t VALUES (10, 'ten', 10)",
            "UPDATE t SET v = 'a2' WHERE id = 1",
            "DELETE FROM t WHERE id = 2",
        ],
    );
    c.query_drop("XA COMMIT 'xab-c1'").unwrap();
    // Prepared, then rolled back.
    let mut c = prepare(
        port,
        "'xab-r1','q',3",
        &["INSERT INTO t VALUES (11, 'x', 0)", "UPDATE t SET n = 0"],
    );
    c.query_drop("XA ROLLBACK 'xab-r1','q',3").unwrap();
    drop(c);
    // Prepared, its connection gone; ordinary transactions go on; another connection
    // commits it.
    drop(prepare(
        port,
        "X'7861622D6431',X'00FF',0",
        &["UPDATE t SET n = n + 100 WHERE id = 4"],
    ));
    let mut o = connect(port, Some("xab_replay"));
    for i in 12..40 {
        o.query_drop(format!(
            "INSERT INTO t VALUES ({i}, '{}', {i})",
            "p".repeat(30)
        ))
        .unwrap();
    }
    assert_eq!(recovered(port, "xab-").len(), 1);
    o.query_drop("XA COMMIT X'7861622D6431',X'00FF',0").unwrap();
    // Never prepared: nothing logged.
    o.query_drop("XA START 'xab-idle'").unwrap();
    o.query_drop("INSERT INTO t VALUES (50, 'idle', 0)")
        .unwrap();
    o.query_drop("XA END 'xab-idle'").unwrap();
    o.query_drop("XA ROLLBACK 'xab-idle'").unwrap();
    // ONE PHASE: an ordinary transaction.
    o.query_drop("XA START 'xab-one'").unwrap();
    o.query_drop("INSERT INTO t VALUES (51, 'one', 0)").unwrap();
    o.query_drop("XA END 'xab-one'").unwrap();
    o.query_drop("XA COMMIT 'xab-one' ONE PHASE").unwrap();
    // A session that keeps its changes out of the log cannot prepare (1235); the
    // branch stays IDLE for XA ROLLBACK (or ONE PHASE).
    o.query_drop("SET sql_log_bin = 0").unwrap();
    o.query_drop("XA START 'xab-s'").unwrap();
    o.query_drop("INSERT INTO t VALUES (52, 's', 0)").unwrap();
    o.query_drop("XA END 'xab-s'").unwrap();
    assert_eq!(code(o.query_drop("XA PREPARE 'xab-s'")), Some(1235));
    assert!(recovered(port, "xab-s").is_empty());
    o.query_drop("XA ROLLBACK 'xab-s'").unwrap();
    o.query_drop("SET sql_log_bin = 1").unwrap();
    drop(o);
    // Prepared across a clean restart, then committed; another rolled back.
    drop(prepare(
        port,
        "'xab-after'",
        &["INSERT INTO t VALUES (60, 'after', 60)"],
    ));
    drop(prepare(
        port,
        "'xab-after-r'",
        &["UPDATE t SET v = 'no' WHERE id = 3"],
    ));
    server.restart();
    let port = server.port;
    assert_eq!(recovered(port, "xab-after").len(), 2);
    let mut c = connect(port, Some("xab_replay"));
    c.query_drop("XA COMMIT 'xab-after'").unwrap();
    c.query_drop("XA ROLLBACK 'xab-after-r'").unwrap();
    assert!(recovered(port, "xab-").is_empty());

    let ev = events(port);
    let count = |kind: &str, prefix: &str| {
        ev.iter()
            .filter(|(k, i)| k == kind && i.starts_with(prefix))
            .count()
    };
    assert_eq!(count("XA_prepare", "XA PREPARE"), 5, "{ev:?}");
    assert_eq!(count("Query", "XA START"), 5);
    assert_eq!(count("Query", "XA END"), 5);
    assert_eq!(count("Query", "XA COMMIT"), 3);
    assert_eq!(count("Query", "XA ROLLBACK"), 2);
    // The first group, event by event.
    let at = ev
        .iter()
        .position(|(_, i)| i == "XA START X'7861622D6331',X'',1")
        .expect("the first XA START");
    let kinds: Vec<&str> = ev[at - 1..at + 9].iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "Gtid",
            "Query",
            "Table_map",
            "Write_rows",
            "Table_map",
            "Update_rows",
            "Table_map",
            "Delete_rows",
            "Query",
            "XA_prepare"
        ]
    );
    assert_eq!(ev[at + 7].1, "XA END X'7861622D6331',X'',1");
    assert_eq!(ev[at + 8].1, "XA PREPARE X'7861622D6331',X'',1");
    assert!(ev
        .iter()
        .any(|(k, i)| k == "Query" && i == "XA ROLLBACK X'7861622D7231',X'71',3"));
    assert!(!ev.iter().any(|(_, i)| i.contains("7861622D69646C65")));

    let sql = "SELECT * FROM xab_replay.t ORDER BY id";
    let want = table(port, sql);
    assert!(want.contains(&vec!["60".into(), "after".into(), "60".into()]));
    assert!(want.contains(&vec!["4".into(), "d".into(), "104".into()]));
    let Some(maria) = private_maria("xa_binlog") else {
        return;
    };
    replay(&server, maria.port);
    assert_eq!(table(maria.port, sql), want, "MariaDB after the replay");
    assert!(recovered(maria.port, "xab-").is_empty());
}

#[test]
fn a_transaction_prepared_without_the_log_blocks_a_start_with_it() {
    let mut server = TestServer::start_flavor(Flavor::Strata, &[]);
    {
        let mut c = connect(server.port, None);
        c.query_drop("CREATE DATABASE xab_nolog").unwrap();
        c.query_drop("CREATE TABLE xab_nolog.t (id INT PRIMARY KEY) ENGINE=InnoDB")
            .unwrap();
        c.query_drop("XA START 'xab-nolog'").unwrap();
        c.query_drop("INSERT INTO xab_nolog.t VALUES (1)").unwrap();
        c.query_drop("XA END 'xab-nolog'").unwrap();
        c.query_drop("XA PREPARE 'xab-nolog'").unwrap();
    }
    let status = server.stop();
    assert!(status.success());
    // The binary log would never hold its rows: the start with --log-bin is refused.
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([
            "server",
            "--port",
            "5849",
            "--bind",
            "127.0.0.1",
            "--log-bin",
        ])
        .arg("--datadir")
        .arg(&server.datadir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("prepared without the binary log") && text.contains("X'7861622D6E6F6C6F67'"),
        "{text}"
    );
    // Without the log it is still prepared; once finished, the log can be turned on.
    server.start_again();
    assert_eq!(recovered(server.port, "xab-").len(), 1);
    connect(server.port, None)
        .query_drop("XA COMMIT 'xab-nolog'")
        .unwrap();
    server.stop();
    let logged = TestServer::start_at(&server.datadir, &["--log-bin"]);
    assert_eq!(
        table(logged.port, "SELECT id FROM xab_nolog.t"),
        vec![vec!["1".to_string()]]
    );
}

const ACCOUNTS: i64 = 30;
const START: i64 = 1000;
const WRITERS: usize = 4;

/// What a client was told about one XA transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Told {
    /// XA PREPARE succeeded; nothing sent after it.
    Prepared,
    /// XA COMMIT (`true`) or XA ROLLBACK was sent; no answer came.
    Finishing(bool),
    /// XA COMMIT (`true`) or XA ROLLBACK succeeded.
    Finished(bool),
}

type Book = Arc<Mutex<BTreeMap<String, Told>>>;

/// One client: transfers as XA transactions (prepare, then commit 3 times in 4, roll
/// back otherwise) until `stop` or the server's death.
fn xa_writer(port: u16, w: usize, first_seq: i64, stop: Arc<AtomicBool>, book: Book) {
    let Ok(mut c) = mysql::Conn::new(common::opts(port, Some("xab_crash"))) else {
        return;
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(w as u64 * 7919 + first_seq as u64);
    let mut seq = first_seq;
    while !stop.load(Ordering::Relaxed) {
        let src = rng.gen_range(0..ACCOUNTS);
        let dst = (src + rng.gen_range(1..ACCOUNTS)) % ACCOUNTS;
        let amount = rng.gen_range(1..50);
        let name = format!("xabk-{w}-{seq}");
        let xid = format!("'{name}'");
        seq += 1;
        let r = (|| -> mysql::Result<()> {
            c.query_drop(format!("XA START {xid}"))?;
            c.exec_drop("UPDATE acct SET bal = bal - ? WHERE id = ?", (amount, src))?;
            c.exec_drop("UPDATE acct SET bal = bal + ? WHERE id = ?", (amount, dst))?;
            c.exec_drop(
                "INSERT INTO ledger VALUES (?, ?, ?, ?)",
                (&name, src, dst, amount),
            )?;
            c.query_drop(format!("XA END {xid}"))?;
            c.query_drop(format!("XA PREPARE {xid}"))
        })();
        match r {
            Ok(()) => {}
            Err(mysql::Error::MySqlError(e)) if matches!(e.code, 1213 | 1205 | 1614) => {
                let _ = c.query_drop(format!("XA END {xid}"));
                let _ = c.query_drop(format!("XA ROLLBACK {xid}"));
                continue;
            }
            Err(_) => return,
        }
        book.lock().unwrap().insert(name.clone(), Told::Prepared);
        let commit = rng.gen_range(0..4) != 0;
        book.lock()
            .unwrap()
            .insert(name.clone(), Told::Finishing(commit));
        let verb = if commit { "COMMIT" } else { "ROLLBACK" };
        if c.query_drop(format!("XA {verb} {xid}")).is_err() {
            return;
        }
        book.lock().unwrap().insert(name, Told::Finished(commit));
    }
}

/// After a restart: XA RECOVER, the tables and what the clients were told agree.
/// Returns the prepared transactions' gtrids.
fn check_after_restart(port: u16, book: &BTreeMap<String, Told>, cycle: usize) -> Vec<String> {
    let prepared: BTreeSet<String> = recovered(port, "xabk-")
        .into_iter()
        .map(|(_, g, _)| String::from_utf8(g).unwrap())
        .collect();
    let mut c = connect(port, Some("xab_crash"));
    let total: i64 = c.query_first("SELECT SUM(bal) FROM acct").unwrap().unwrap();
    assert_eq!(total, ACCOUNTS * START, "cycle {cycle}: money made or lost");
    let ledger: BTreeSet<String> = c
        .query::<String, _>("SELECT xid FROM ledger")
        .unwrap()
        .into_iter()
        .collect();
    for x in &prepared {
        assert!(
            !ledger.contains(x),
            "cycle {cycle}: {x} is prepared and committed"
        );
        assert!(
            matches!(
                book.get(x),
                None | Some(Told::Prepared | Told::Finishing(_))
            ),
            "cycle {cycle}: {x} is prepared, the client was told {:?}",
            book.get(x)
        );
    }
    for (x, told) in book {
        let (p, l) = (prepared.contains(x), ledger.contains(x));
        match told {
            Told::Prepared => assert!(p, "cycle {cycle}: {x}: prepared, now gone ({l})"),
            Told::Finished(true) => assert!(l && !p, "cycle {cycle}: {x} committed, lost"),
            Told::Finished(false) => assert!(!l && !p, "cycle {cycle}: {x} rolled back, is here"),
            Told::Finishing(true) => assert!(p || l, "cycle {cycle}: {x} vanished"),
            Told::Finishing(false) => assert!(!l, "cycle {cycle}: {x} rolled back, committed"),
        }
    }
    for x in &ledger {
        assert!(
            matches!(
                book.get(x),
                Some(Told::Finishing(true) | Told::Finished(true))
            ),
            "cycle {cycle}: {x} committed, no client committed it: {:?}",
            book.get(x)
        );
    }
    // Every balance follows from the committed ledger.
    let rows: Vec<(i64, i64, i64)> = c.query("SELECT src, dst, amount FROM ledger").unwrap();
    let mut expect: BTreeMap<i64, i64> = (0..ACCOUNTS).map(|i| (i, START)).collect();
    for (s, d, a) in rows {
        *expect.get_mut(&s).unwrap() -= a;
        *expect.get_mut(&d).unwrap() += a;
    }
    let bals: BTreeMap<i64, i64> = c
        .query::<(i64, i64), _>("SELECT id, bal FROM acct")
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(bals, expect, "cycle {cycle}: balances vs the ledger");
    prepared.into_iter().collect()
}

#[test]
fn kill_9_during_xa_keeps_recover_tables_and_binlog_agreeing() {
    let cycles: usize = std::env::var("STRATA_XA_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let mut server = TestServer::start_flavor(
        Flavor::Strata,
        &[
            "--log-bin",
            "--sync-binlog=1",
            "--max-binlog-size=65536",
            "--innodb-flush-log-at-trx-commit",
            "1",
        ],
    );
    {
        let mut c = connect(server.port, None);
        for s in [
            "CREATE DATABASE xab_crash",
            "CREATE TABLE xab_crash.acct (id INT PRIMARY KEY, bal INT NOT NULL) ENGINE=InnoDB",
            "CREATE TABLE xab_crash.ledger (xid VARCHAR(40) PRIMARY KEY, src INT NOT NULL, \
             dst INT NOT NULL, amount INT NOT NULL) ENGINE=InnoDB",
        ] {
            c.query_drop(s).unwrap();
        }
        for i in 0..ACCOUNTS {
            c.query_drop(format!("INSERT INTO xab_crash.acct VALUES ({i}, {START})"))
                .unwrap();
        }
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(38);
    let book: Book = Arc::default();
    let mut left_prepared = 0;
    let mut prepared = Vec::new();
    for cycle in 0..cycles {
        let stop = Arc::new(AtomicBool::new(false));
        let port = server.port;
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (stop, book) = (stop.clone(), book.clone());
                let first = cycle as i64 * 1_000_000;
                std::thread::spawn(move || xa_writer(port, w, first, stop, book))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(rng.gen_range(150..800)));
        server.crash();
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().unwrap();
        }
        server.start_again();
        let snapshot = book.lock().unwrap().clone();
        prepared = check_after_restart(server.port, &snapshot, cycle);
        left_prepared += prepared.len();
        if cycle + 1 == cycles {
            break;
        }
        // The coordinator decides the prepared ones (logged as any XA COMMIT/ROLLBACK).
        let mut c = connect(server.port, None);
        for x in &prepared {
            let commit = rng.gen_bool(0.5);
            let verb = if commit { "COMMIT" } else { "ROLLBACK" };
            c.query_drop(format!("XA {verb} '{x}'")).unwrap();
            book.lock()
                .unwrap()
                .insert(x.clone(), Told::Finished(commit));
        }
    }
    let n = book.lock().unwrap().len();
    eprintln!(
        "xa_binlog: {cycles} kills, {n} XA transactions prepared, {left_prepared} found \
         prepared after restarts, {} at the end",
        prepared.len()
    );
    assert!(n > 0);
    let Some(maria) = private_maria("xa_binlog crash") else {
        return;
    };
    replay(&server, maria.port);
    let same = |what: &str| {
        for t in ["acct", "ledger"] {
            let sql = format!("SELECT * FROM xab_crash.{t} ORDER BY 1");
            assert_eq!(
                table(server.port, &sql),
                table(maria.port, &sql),
                "{what}: {t} differs between Strata and the replayed log"
            );
        }
        assert_eq!(
            recovered(server.port, "xabk-"),
            recovered(maria.port, "xabk-"),
            "{what}: the prepared transactions differ"
        );
    };
    same("after the replay");
    // Both finish the last restart's prepared transactions the same way.
    for x in recovered(server.port, "xabk-") {
        for port in [server.port, maria.port] {
            connect(port, None)
                .query_drop(format!("XA COMMIT {}", xid_sql(&x)))
                .unwrap();
        }
    }
    same("after committing the prepared ones");
}

fn replica_status(port: u16) -> BTreeMap<String, String> {
    let rows: Vec<mysql::Row> = connect(port, None).query("SHOW REPLICA STATUS").unwrap();
    let Some(row) = rows.into_iter().next() else {
        return Default::default();
    };
    let cols = row.columns();
    (0..row.len())
        .map(|i| {
            let v: Option<String> = row.get_opt(i).and_then(|r| r.ok()).unwrap_or(None);
            (
                cols[i].name_str().to_string(),
                v.unwrap_or_else(|| "NULL".into()),
            )
        })
        .collect()
}

/// Waits until the replica applied everything the source logged.
fn caught_up(source: u16, replica: u16) {
    let st = table(source, "SHOW MASTER STATUS");
    let (file, pos) = (st[0][0].clone(), st[0][1].clone());
    let start = Instant::now();
    loop {
        let rs = replica_status(replica);
        if rs.get("Relay_Source_Log_File") == Some(&file)
            && rs.get("Exec_Source_Log_Pos") == Some(&pos)
        {
            return;
        }
        if start.elapsed() > Duration::from_secs(60)
            || rs.get("Last_SQL_Errno").is_some_and(|e| e != "0")
            || rs
                .get("Last_IO_Errno")
                .is_some_and(|e| e != "0" && e != "2013")
        {
            panic!("the replica did not catch up to {file}:{pos}: {rs:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_strata_replica_applies_xa_groups() {
    let source = TestServer::start_flavor(Flavor::Strata, &["--log-bin", "--server-id=1"]);
    let mut replica = TestServer::start_flavor(Flavor::Strata, &["--log-bin", "--server-id=2"]);
    let sp = source.port;
    {
        let mut c = connect(sp, None);
        c.query_drop("CREATE DATABASE xab_rp").unwrap();
        c.query_drop("CREATE TABLE xab_rp.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
            .unwrap();
        c.query_drop("INSERT INTO xab_rp.t VALUES (1, 1), (2, 2)")
            .unwrap();
    }
    connect(replica.port, None)
        .query_drop(format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={sp}, \
             SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_LOG_FILE='binlog.000001', \
             SOURCE_LOG_POS=4, SOURCE_CONNECT_RETRY=1"
        ))
        .unwrap();
    connect(replica.port, None)
        .query_drop("START REPLICA")
        .unwrap();
    let rows = "SELECT id, v FROM xab_rp.t ORDER BY id";
    let t = |port: u16| -> Vec<(i64, i64)> { connect(port, None).query(rows).unwrap() };
    // Prepared on the source, an ordinary transaction after it.
    let mut a = connect(sp, Some("xab_rp"));
    a.query_drop("XA START 'xab-p1', 'b', 5").unwrap();
    a.query_drop("UPDATE t SET v = 10 WHERE id = 1").unwrap();
    a.query_drop("INSERT INTO t VALUES (3, 3)").unwrap();
    a.query_drop("XA END 'xab-p1', 'b', 5").unwrap();
    a.query_drop("XA PREPARE 'xab-p1', 'b', 5").unwrap();
    connect(sp, None)
        .query_drop("INSERT INTO xab_rp.t VALUES (4, 4)")
        .unwrap();
    caught_up(sp, replica.port);
    let p1 = (5, b"xab-p1".to_vec(), b"b".to_vec());
    assert_eq!(
        recovered(replica.port, "xab-"),
        BTreeSet::from([p1.clone()])
    );
    assert_eq!(t(replica.port), vec![(1, 1), (2, 2), (4, 4)]);
    // Its rows are locked on the replica too.
    let mut r = connect(replica.port, None);
    r.query_drop("SET innodb_lock_wait_timeout = 1").unwrap();
    assert_eq!(
        code(r.query_drop("UPDATE xab_rp.t SET v = 0 WHERE id = 1")),
        Some(1205)
    );
    a.query_drop("XA COMMIT 'xab-p1', 'b', 5").unwrap();
    // Prepared and rolled back.
    a.query_drop("XA START 'xab-p2'").unwrap();
    a.query_drop("UPDATE t SET v = 20 WHERE id = 2").unwrap();
    a.query_drop("XA END 'xab-p2'").unwrap();
    a.query_drop("XA PREPARE 'xab-p2'").unwrap();
    a.query_drop("XA ROLLBACK 'xab-p2'").unwrap();
    caught_up(sp, replica.port);
    assert!(recovered(replica.port, "xab-").is_empty());
    assert_eq!(t(replica.port), vec![(1, 10), (2, 2), (3, 3), (4, 4)]);
    // The replica's own log holds the groups too (log_replica_updates).
    let kinds = events(replica.port);
    assert_eq!(
        kinds.iter().filter(|(k, _)| k == "XA_prepare").count(),
        2,
        "{kinds:?}"
    );
    // Prepared on the replica when it crashes: still prepared after its restart, and
    // the source's XA COMMIT finishes it.
    a.query_drop("XA START 'xab-p3'").unwrap();
    a.query_drop("UPDATE t SET v = 30 WHERE id = 3").unwrap();
    a.query_drop("XA END 'xab-p3'").unwrap();
    a.query_drop("XA PREPARE 'xab-p3'").unwrap();
    caught_up(sp, replica.port);
    replica.crash();
    replica.start_again();
    assert_eq!(recovered(replica.port, "xab-").len(), 1);
    a.query_drop("XA COMMIT 'xab-p3'").unwrap();
    caught_up(sp, replica.port);
    assert!(recovered(replica.port, "xab-").is_empty());
    assert_eq!(t(replica.port), t(sp));
    assert_eq!(t(sp), vec![(1, 10), (2, 2), (3, 30), (4, 4)]);
}
