//! A full disk, for real: the server's data directory is a small tmpfs, and clients
//! write until it is full. What must hold (issue 3, item 9):
//!
//! * the statement that meets the full disk gets a MySQL error (1114 "The table 't' is
//!   full" for a table that cannot grow), and only that statement is undone: earlier
//!   statements of its transaction stay and can still commit;
//! * the connection stays usable, every acknowledged commit is readable, CHECK TABLE
//!   passes, and once space is freed writes succeed again;
//! * SIGKILL while the disk is full, and a restart on that full disk, lose nothing
//!   acknowledged.
//!
//! Mounting needs root (CAP_SYS_ADMIN). Outside CI a machine that cannot mount skips
//! with a note; under CI that is a failure, so the test cannot silently not run.

use crate::common;

use common::TestServer;
use mysql::prelude::Queryable;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of a fixed size mounted on a fresh directory; unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(mib: u64, test: &str) -> Option<Tmpfs> {
        let dir = tempfile::Builder::new()
            .prefix("strata-diskfull-")
            .tempdir()
            .expect("create mount point");
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={mib}m"),
                "strata-diskfull",
            ])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                    Err(e) => e.to_string(),
                };
                if common::in_ci() {
                    panic!("{test}: cannot mount a tmpfs ({why}); CI must run this test as root");
                }
                eprintln!("NOTE: {test} skipped: cannot mount a tmpfs ({why})");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(self.dir.path())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

/// A file of `mib` MiB that holds space until removed.
fn ballast(at: &Path, mib: usize) -> PathBuf {
    let p = at.join("ballast");
    std::fs::write(&p, vec![7u8; mib << 20]).expect("write ballast");
    p
}

fn blob(i: u64) -> Vec<u8> {
    // Not constant, so nothing along the way could shrink it.
    (0..48_000u64).map(|j| (i * 31 + j * 7) as u8).collect()
}

/// Inserts rows of ~48 KB (overflow pages in btree) until the server says the disk is
/// full; returns the acknowledged ids and the error.
fn fill(c: &mut mysql::Conn, from: u64) -> (Vec<u64>, mysql::error::MySqlError) {
    let mut acked = Vec::new();
    for i in from..from + 5000 {
        match c.exec_drop(
            "INSERT INTO t (id, k, b) VALUES (?, ?, ?)",
            (i, i % 7, blob(i)),
        ) {
            Ok(()) => acked.push(i),
            Err(mysql::Error::MySqlError(e)) => return (acked, e),
            Err(e) => panic!("insert {i}: not a server error: {e}"),
        }
    }
    panic!("5000 rows of 48 KB fit on a small tmpfs: the disk never filled");
}

fn count(c: &mut mysql::Conn) -> u64 {
    c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap()
}

fn ids(c: &mut mysql::Conn) -> Vec<u64> {
    c.query("SELECT id FROM t ORDER BY id").unwrap()
}

fn check_table(c: &mut mysql::Conn) -> String {
    let rows: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
    rows.last().map(|r| r.3.clone()).unwrap_or_default()
}

fn run(engine: &str, test: &str) {
    let Some(fs) = Tmpfs::mount(48, test) else {
        return;
    };
    let datadir = fs.path().join("data");
    let args = [
        "--innodb-log-file-size",
        "4M",
        "--innodb-buffer-pool-size",
        "8M",
    ];
    let mut server = TestServer::start_at(&datadir, &args);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop(format!(
        "CREATE TABLE t (id BIGINT PRIMARY KEY, k INT NOT NULL, b MEDIUMBLOB, \
         n INT NOT NULL DEFAULT 0, KEY by_k (k)) ENGINE={engine}"
    ))
    .unwrap();
    // A small row (no blob) that step 3 updates in place.
    c.query_drop("INSERT INTO t (id, k) VALUES (0, 0)").unwrap();
    let spare = ballast(fs.path(), 6);

    // 1. Fill the disk: the statement that does not fit gets 1114 and nothing else.
    let (filled, e) = fill(&mut c, 1);
    let mut acked = vec![0];
    acked.extend(filled);
    assert!(
        acked.len() > 50,
        "only {} rows fit before {e:?}",
        acked.len()
    );
    assert_eq!(
        (e.code, e.state.as_str(), e.message.as_str()),
        (1114, "HY000", "The table 't' is full"),
        "after {} rows",
        acked.len()
    );
    eprintln!("{test}: {} rows of 48 KB, then: {}", acked.len(), e.message);

    // 2. The connection is usable, everything acknowledged is there, the table checks.
    assert_eq!(c.query_first::<u64, _>("SELECT 1").unwrap(), Some(1));
    assert_eq!(ids(&mut c), acked);
    assert_eq!(check_table(&mut c), "OK");

    // 3. Only the failing statement is undone: a transaction's earlier change (one that
    // needs no new space: a fixed-size column of a small row rewritten in place) stays.
    let first = 0;
    c.query_drop("BEGIN").unwrap();
    c.exec_drop("UPDATE t SET n = 100 WHERE id = ?", (first,))
        .unwrap();
    let big = acked.last().copied().unwrap_or(0) + 1;
    let mut failed = false;
    for i in big..big + 200 {
        if let Err(mysql::Error::MySqlError(e)) =
            c.exec_drop("INSERT INTO t (id, k, b) VALUES (?, ?, ?)", (i, 1, blob(i)))
        {
            assert_eq!(e.code, 1114, "{e:?}");
            failed = true;
            break;
        }
        // A row that still fit in a page's free space is part of this transaction.
        acked.push(i);
    }
    assert!(failed, "the disk stayed writable inside the transaction");
    c.query_drop("COMMIT").unwrap();
    let n: u32 = c
        .exec_first("SELECT n FROM t WHERE id = ?", (first,))
        .unwrap()
        .unwrap();
    assert_eq!(n, 100, "the transaction's earlier update was lost");
    assert_eq!(ids(&mut c), acked);

    // 4. SIGKILL on the full disk, restart on it: nothing acknowledged is lost.
    server.crash();
    server.start_again();
    let mut c = common::connect(server.port, Some("d"));
    assert_eq!(ids(&mut c), acked, "after a crash on a full disk");
    assert_eq!(check_table(&mut c), "OK");

    // 5. Freeing space makes writes succeed again.
    std::fs::remove_file(&spare).unwrap();
    let next = acked.last().copied().unwrap_or(0) + 1;
    let (more, e) = fill(&mut c, next);
    assert!(
        more.len() >= 20,
        "only {} rows fit after freeing 6 MiB ({e:?})",
        more.len()
    );
    assert_eq!(e.code, 1114, "{e:?}");
    eprintln!(
        "{test}: {} more rows after freeing 6 MiB, then 1114 again",
        more.len()
    );
    acked.extend(more);
    assert_eq!(count(&mut c), acked.len() as u64);
    assert_eq!(check_table(&mut c), "OK");

    // 6. A clean shutdown and restart on the full disk keep it all.
    server.restart();
    let mut c = common::connect(server.port, Some("d"));
    assert_eq!(ids(&mut c), acked, "after a clean restart on a full disk");
    assert_eq!(check_table(&mut c), "OK");
    drop(c);
    drop(server);
    drop(fs);
}

#[test]
fn btree_full_disk_fails_the_statement_and_keeps_every_commit() {
    run(
        "InnoDB",
        "btree_full_disk_fails_the_statement_and_keeps_every_commit",
    );
}

#[test]
fn heap_full_disk_fails_the_statement_and_keeps_every_row() {
    run(
        "MyISAM",
        "heap_full_disk_fails_the_statement_and_keeps_every_row",
    );
}

/// Fills the disk with ballast files of 1 MiB until one cannot be written (a few KiB
/// may stay free); returns them, so a test can free space file by file.
fn fill_with_ballast(at: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for i in 0..10_000 {
        let p = at.join(format!("ballast-{i}"));
        if std::fs::write(&p, vec![7u8; 1 << 20]).is_err() {
            let _ = std::fs::remove_file(&p);
            break;
        }
        files.push(p);
    }
    files
}

/// Fills what MiB files left, in 4 KiB files, so not one block is free.
fn top_up_ballast(at: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for i in 0..100_000 {
        let p = at.join(format!("ballast-small-{i}"));
        if std::fs::write(&p, vec![7u8; 4096]).is_err() {
            let _ = std::fs::remove_file(&p);
            break;
        }
        files.push(p);
    }
    files
}

/// The error of a statement that must fail, with its rows collected (an error after the
/// column definitions would otherwise be swallowed).
fn must_fail(c: &mut mysql::Conn, sql: &str) -> mysql::error::MySqlError {
    match c.query::<mysql::Row, _>(sql) {
        Ok(rows) => panic!("{sql}: succeeded ({} rows) on a full disk", rows.len()),
        Err(mysql::Error::MySqlError(e)) => e,
        Err(e) => panic!("{sql}: not a server error: {e}"),
    }
}

/// A full disk is 1114 "The table 't' is full" where a table cannot grow, and 1030
/// naming the file and the OS error where another file (sort run, binary log) cannot.
fn assert_disk_full(e: &mysql::error::MySqlError, what: &str) {
    let table_full = e.code == 1114 && e.message.ends_with("is full");
    let file_full = e.code == 1030 && e.message.contains("No space left on device");
    assert!(
        e.state == "HY000" && (table_full || file_full),
        "{what}: not a disk-full error: {e:?}"
    );
}

/// The rest of the disk-full list (issue #16 item 8) on one btree server with the binary
/// log on and tmpdir on the same small disk: an ALTER TABLE rebuild, an ADD INDEX, a
/// sort that spills, and commits that must reach the binary log each meet a full disk.
/// Each gets an error, the server keeps answering, the table is unchanged and checks,
/// and after space is freed the same statements succeed without a restart.
#[test]
fn full_disk_during_ddl_sort_and_binlog_leaves_everything_usable() {
    let test = "full_disk_during_ddl_sort_and_binlog_leaves_everything_usable";
    let Some(fs) = Tmpfs::mount(64, test) else {
        return;
    };
    let datadir = fs.path().join("data");
    let tmpdir = fs.path().join("tmp");
    std::fs::create_dir_all(&tmpdir).unwrap();
    let tmp_arg = tmpdir.display().to_string();
    let args = [
        "--innodb-log-file-size",
        "4M",
        "--innodb-buffer-pool-size",
        "8M",
        "--log-bin",
        "--tmpdir",
        &tmp_arg,
        "--sort-buffer-size",
        "32K",
        "--innodb-sort-buffer-size",
        "64K",
    ];
    let mut server = TestServer::start_at(&datadir, &args);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop(
        "CREATE TABLE t (id BIGINT PRIMARY KEY, k INT NOT NULL, s VARCHAR(200) NOT NULL, \
         b MEDIUMBLOB) ENGINE=InnoDB",
    )
    .unwrap();
    // ~6 MiB of rows: a rebuild or an index over s needs a few MiB free.
    for i in 0..3000u64 {
        c.exec_drop(
            "INSERT INTO t VALUES (?, ?, ?, ?)",
            (
                i,
                i % 13,
                format!("{:0>190}", i * 7919 % 100_003),
                vec![(i % 251) as u8; 1500],
            ),
        )
        .unwrap();
    }
    let before: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    let create_before: (String, String) = c.query_first("SHOW CREATE TABLE t").unwrap().unwrap();
    let sorted_query = "SELECT id, s FROM t ORDER BY s DESC, id";
    let expected_sorted: Vec<(u64, String)> = c.query(sorted_query).unwrap();

    let mut ballast = fill_with_ballast(fs.path());
    assert!(!ballast.is_empty(), "the disk was full before the ballast");

    // 1. A rebuild (a column's type) and an online index build each fail with an error.
    let mut failures = Vec::new();
    for sql in [
        "ALTER TABLE t MODIFY k BIGINT NOT NULL",
        "ALTER TABLE t ADD INDEX by_s (s)",
        "CREATE TABLE t2 AS SELECT * FROM t",
    ] {
        let e = must_fail(&mut c, sql);
        eprintln!("{test}: {sql}: {} ({}) {}", e.code, e.state, e.message);
        assert_disk_full(&e, sql);
        failures.push((sql, e.code));
    }
    // 2. A sort larger than sort_buffer_size spills to the full tmpdir: an error too.
    let e = must_fail(&mut c, sorted_query);
    eprintln!("{test}: sort: {} ({}) {}", e.code, e.state, e.message);
    assert_disk_full(&e, "the sort");
    // 3. Commits whose rows the binary log cannot take fail; none is half there.
    let mut acked = Vec::new();
    let mut commit_error = None;
    for i in 10_000..12_000u64 {
        match c.exec_drop(
            "INSERT INTO t VALUES (?, 1, 'x', ?)",
            (i, vec![1u8; 40_000]),
        ) {
            Ok(()) => acked.push(i),
            Err(mysql::Error::MySqlError(e)) => {
                commit_error = Some(e);
                break;
            }
            Err(e) => panic!("insert {i}: not a server error: {e}"),
        }
    }
    let e = commit_error.expect("2,000 rows of 40 KB fit on a full disk");
    assert_disk_full(&e, "a commit");
    eprintln!(
        "{test}: after {} more rows: {} ({}) {}",
        acked.len(),
        e.code,
        e.state,
        e.message
    );

    // The server answers, the table is as it was plus the acknowledged rows, and checks.
    assert_eq!(c.query_first::<u64, _>("SELECT 1").unwrap(), Some(1));
    let count: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(count, before + acked.len() as u64);
    let create_now: (String, String) = c.query_first("SHOW CREATE TABLE t").unwrap().unwrap();
    assert_eq!(
        create_now, create_before,
        "a failed ALTER changed the table"
    );
    let check: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
    assert_eq!(check.last().map(|r| r.3.as_str()), Some("OK"));
    let t2: Option<String> = c
        .query_first("SELECT table_name FROM information_schema.tables WHERE table_name = 't2'")
        .unwrap();
    assert_eq!(t2, None, "a failed CREATE TABLE … SELECT left a table");

    // A crash on the full disk loses nothing acknowledged. The restart gets three free
    // 4 KiB blocks: room for the new binary log file and its index (a start that cannot
    // open the binary log refuses, as MySQL's does), but maybe not for the rewritten
    // catalog and space directory that removing the failed CREATE TABLE … SELECT's files
    // needs: those then wait for the next start, with a warning, instead of stopping
    // this one (CI once failed here on a disk left that full by chance).
    drop(c);
    ballast.extend(top_up_ballast(fs.path()));
    server.crash();
    for _ in 0..3 {
        let freed = ballast.pop().expect("the top-up wrote blocks");
        std::fs::remove_file(freed).unwrap();
    }
    server.start_again();
    for line in server
        .log_tail()
        .lines()
        .filter(|l| l.contains("[Warning]"))
    {
        eprintln!("{test}: restart: {line}");
    }
    let mut c = common::connect(server.port, Some("d"));
    let count: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(
        count,
        before + acked.len() as u64,
        "after a crash on a full disk"
    );

    // 4. With space again, the same statements succeed without a restart.
    for p in ballast.drain(..) {
        std::fs::remove_file(p).unwrap();
    }
    c.query_drop("DELETE FROM t WHERE id >= 10000").unwrap();
    let got: Vec<(u64, String)> = c.query(sorted_query).unwrap();
    assert!(
        got == expected_sorted,
        "the sort's rows differ after space came back"
    );
    for (sql, _) in &failures {
        c.query_drop(*sql)
            .unwrap_or_else(|e| panic!("{sql} with space again: {e}"));
    }
    let check: Vec<(String, String, String, String)> = c.query("CHECK TABLE t").unwrap();
    assert_eq!(check.last().map(|r| r.3.as_str()), Some("OK"));
    let n2: u64 = c.query_first("SELECT COUNT(*) FROM t2").unwrap().unwrap();
    assert_eq!(n2, before);
    drop(c);
    drop(server);
    drop(fs);
}
