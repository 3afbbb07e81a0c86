//! One large transaction's list of changes stays bounded in memory (issue 16, "one
//! large transaction hurts everyone"; `crates/btree/src/change_list.rs`,
//! docs/format/undo.md part 3), end to end through a real server and client: a
//! 300,000-row INSERT … SELECT in one transaction keeps only the newest changes of its
//! list in memory and the rest in its change-list file, the server's RSS does not grow
//! by the list's size, ROLLBACK restores the table exactly, and a committed one is
//! purged from the file.

use crate::common;

use common::TestServer;
use mysql::prelude::Queryable;
use std::time::Instant;

fn digest(c: &mut mysql::Conn) -> (u64, i64, u64) {
    let r: Option<(u64, i64, u64)> = c
        .query_first("SELECT COUNT(*), COALESCE(SUM(k), 0), COALESCE(SUM(CRC32(c)), 0) FROM t")
        .unwrap();
    r.unwrap()
}

fn status(c: &mut mysql::Conn, name: &str) -> u64 {
    let r: Option<(String, u64)> = c
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap();
    r.map(|(_, v)| v).unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn a_large_transactions_change_list_spills_and_rolls_back() {
    if common::Flavor::from_env() != common::Flavor::Strata {
        return; // the change-list file and its variable are Strata's own
    }
    let server = TestServer::start(&[]);
    let pid = server.pid().expect("pid");
    let mut w = common::connect(server.port, None);
    w.query_drop("CREATE DATABASE d").unwrap();
    w.query_drop("USE d").unwrap();
    let tail: Option<u64> = w
        .query_first("SELECT @@GLOBAL.strata_change_list_tail")
        .unwrap();
    assert_eq!(tail, Some(4096));
    w.query_drop("CREATE TABLE src (id INT PRIMARY KEY, k INT, c CHAR(20))")
        .unwrap();
    w.query_drop("CREATE TABLE t (id INT PRIMARY KEY, k INT, c CHAR(20), KEY (k))")
        .unwrap();
    const ROWS: i64 = 300_000;
    for chunk in (1..=ROWS).collect::<Vec<_>>().chunks(10_000) {
        let values: Vec<String> = chunk
            .iter()
            .map(|i| format!("({i}, {}, 'r{i}')", i % 1000))
            .collect();
        w.query_drop(format!("INSERT INTO src VALUES {}", values.join(",")))
            .unwrap();
    }
    w.query_drop("INSERT INTO t SELECT id, k, c FROM src WHERE id <= 1000")
        .unwrap();
    let before = digest(&mut w);
    let fill = |w: &mut mysql::Conn| {
        w.query_drop("BEGIN").unwrap();
        w.query_drop("INSERT INTO t SELECT id + 1000000, k, c FROM src")
            .unwrap();
    };
    // A first round brings the buffer pool's pages, the version store's memory bound
    // (strata_undo_memory_size, 8 MiB here) and the statement's buffers to the
    // high-water mark the work needs; the second then shows what the list adds.
    fill(&mut w);
    w.query_drop("ROLLBACK").unwrap();
    assert_eq!(digest(&mut w), before);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let rss0 = common::rss_kib(pid);
    let written0 = status(&mut w, "Strata_change_list_segments_written");
    fill(&mut w);
    let rss1 = common::rss_kib(pid);
    let segs = status(&mut w, "Strata_change_list_segments_written") - written0;
    std::thread::sleep(std::time::Duration::from_millis(100));
    let held: Option<u64> = w
        .query_first(
            "SELECT CURRENT_NUMBER_OF_BYTES_USED FROM information_schema.STRATA_MEMORY \
             WHERE EVENT_NAME = 'memory/btree/undo_change_lists'",
        )
        .unwrap();
    let held = held.expect("undo_change_lists in STRATA_MEMORY");
    eprintln!(
        "{ROWS} changes in one transaction: RSS {rss0} -> {rss1} KiB (+{} KiB), {segs} segments written, list in memory {held} bytes",
        rss1.saturating_sub(rss0)
    );
    // 300,000 changes are 146 segments of 2,048; the list in memory is its 4,096-change
    // tail at most (~350 KB for these 5-byte keys).
    assert!(segs >= 140, "segments written: {segs}");
    assert!(held > 0 && held < 1 << 20, "change list in memory: {held}");
    // What else a second round adds is the transaction's 300,000 row locks (its list
    // of lock keys and the lock table's entries, ~9 MiB: measured +9.2, +9.2, +10.2 MiB
    // on this binary, the same with strata_undo_memory_size at 1 MiB or a 32 MiB
    // pool). As vectors the change list added ~12 MiB more (300,000 × 40-byte items
    // touched; the keys' blocks reuse what the first round freed): the binary before
    // the change list measured +20.6, +21.0, +21.9 MiB here. 15 MiB tells them apart.
    assert!(
        rss1.saturating_sub(rss0) < 15 * 1024,
        "RSS grew by {} KiB for {ROWS} changes",
        rss1.saturating_sub(rss0)
    );
    let t0 = Instant::now();
    w.query_drop("ROLLBACK").unwrap();
    eprintln!("rollback of {ROWS} changes: {:?}", t0.elapsed());
    assert_eq!(digest(&mut w), before, "rollback restored every row");
    let by_k: Option<u64> = w.query_first("SELECT COUNT(*) FROM t WHERE k = 7").unwrap();
    assert_eq!(by_k, Some(1), "the secondary index restored too");

    // A savepoint in the middle, rolled back to across the file, then COMMIT: purge
    // walks the committed list from its file.
    w.query_drop("BEGIN").unwrap();
    w.query_drop("INSERT INTO t SELECT id + 1000000, k, c FROM src WHERE id <= 150000")
        .unwrap();
    w.query_drop("SAVEPOINT a").unwrap();
    w.query_drop("UPDATE t SET k = k + 5000 WHERE id <= 1000")
        .unwrap();
    w.query_drop("INSERT INTO t SELECT id + 2000000, k, c FROM src WHERE id <= 20000")
        .unwrap();
    w.query_drop("ROLLBACK TO SAVEPOINT a").unwrap();
    w.query_drop("COMMIT").unwrap();
    let after = digest(&mut w);
    assert_eq!(after.0, before.0 + 150_000);
    let moved: Option<u64> = w
        .query_first("SELECT COUNT(*) FROM t WHERE k >= 5000 OR id > 2000000")
        .unwrap();
    assert_eq!(moved, Some(0), "what followed the savepoint is undone");
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    while status(&mut w, "Innodb_history_list_length") > 0 {
        assert!(Instant::now() < deadline, "purge did not finish");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let check: Vec<(String, String, String, String)> = w.query("CHECK TABLE t").unwrap();
    assert_eq!(check.last().map(|c| c.3.as_str()), Some("OK"));
    // Every list's file is unlinked: none is left in the data directory.
    let named = std::fs::read_dir(&server.datadir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("ib_change_list.")
        })
        .count();
    assert_eq!(named, 0);
}
