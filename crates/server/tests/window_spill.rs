//! Window functions past the memory budget, end to end (issue 18): a server with a small
//! `--max-memory` and `sort_buffer_size` runs ROW_NUMBER, RANK, LAG/LEAD, FIRST_VALUE,
//! COUNT and a sliding SUM over partitions far larger than the session's
//! `tmp_table_size`, so the rows go through sorted runs and each partition through a
//! temporary file. Every value is checked against what the client computes from the
//! rows it inserted; `information_schema.STRATA_MEMORY` must show the window's memory
//! (`memory/sql/window_partition`) used, bounded by `tmp_table_size`, and returned; the
//! server's resident set must not grow with the rows, and tmpdir is left empty.

use crate::common;

use common::TestServer;
use mysql::prelude::Queryable;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const ROWS: i64 = 200_000;
/// The session's tmp_table_size: the window's share of memory.
const SHARE: u64 = 1 << 20;

/// The rank of `pad` for row `id`: a permutation of 0..ROWS.
fn perm(id: i64) -> i64 {
    (id * 7919) % ROWS
}

type Got = (i64, u64, u64, i64, Option<i64>, Option<i64>, i64, i64, u64);

#[test]
fn window_functions_over_partitions_larger_than_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let tmpdir = tmp.path().to_str().unwrap().to_string();
    let server = TestServer::start(&[
        "--max-memory",
        "256M",
        "--innodb-buffer-pool-size",
        "32M",
        "--key-buffer-size",
        "8M",
        "--sort-buffer-size",
        "256K",
        "--tmpdir",
        &tmpdir,
    ]);
    let pid = server.pid().expect("server pid");
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE w").unwrap();
    c.query_drop("USE w").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, pad VARCHAR(80) NOT NULL)")
        .unwrap();
    for start in (1..=ROWS).step_by(2000) {
        let values: Vec<String> = (start..(start + 2000).min(ROWS + 1))
            .map(|id| format!("({id},{},'{:08}-{}')", id % 4, perm(id), "x".repeat(50)))
            .collect();
        c.query_drop(format!("INSERT INTO t VALUES {}", values.join(",")))
            .unwrap();
    }
    c.query_drop(format!("SET SESSION tmp_table_size = {SHARE}"))
        .unwrap();

    let before = common::proc_status(pid, "VmRSS:");
    // The server's resident set, sampled while the query runs.
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !stop.load(Ordering::Relaxed) {
                peak = peak.max(common::proc_status(pid, "VmRSS:"));
                std::thread::sleep(Duration::from_millis(10));
            }
            peak
        })
    };
    // ORDER BY id is met by the primary key: the window must keep the input order.
    let mut got: Vec<Got> = Vec::with_capacity(ROWS as usize);
    c.query_map(
        "SELECT id, ROW_NUMBER() OVER (ORDER BY pad), \
                RANK() OVER (PARTITION BY g ORDER BY id DIV 10), \
                SUM(id) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING), \
                LAG(id, 5) OVER (ORDER BY id), \
                LEAD(id, 3) OVER (PARTITION BY g ORDER BY id), \
                FIRST_VALUE(id) OVER (PARTITION BY g ORDER BY id), \
                LAST_VALUE(id) OVER (PARTITION BY g ORDER BY pad), \
                COUNT(*) OVER (PARTITION BY g) \
         FROM t ORDER BY id",
        |r: mysql::Row| -> Got {
            let s: mysql::Value = r.get(3).unwrap();
            let sum = match s {
                mysql::Value::Bytes(b) => String::from_utf8(b).unwrap().parse().unwrap(),
                mysql::Value::Int(i) => i,
                other => panic!("SUM value {other:?}"),
            };
            (
                r.get(0).unwrap(),
                r.get(1).unwrap(),
                r.get(2).unwrap(),
                sum,
                r.get(4).unwrap(),
                r.get(5).unwrap(),
                r.get(6).unwrap(),
                r.get(7).unwrap(),
                r.get(8).unwrap(),
            )
        },
    )
    .map(|rows| got = rows)
    .unwrap();
    stop.store(true, Ordering::Relaxed);
    let peak = sampler.join().unwrap();

    assert_eq!(got.len(), ROWS as usize);
    for (i, row) in got.iter().enumerate() {
        let id = i as i64 + 1;
        let g = id % 4;
        // Within partition g (ids g, g+4, …, or 4, 8, … for g = 0), the rank of id DIV 10
        // is one more than the number of members with a smaller id DIV 10.
        let first = if g == 0 { 4 } else { g };
        let key_start = (id / 10) * 10;
        let smaller = (first..key_start).step_by(4).count() as u64;
        let window_sum: i64 = (id - 2..=id + 2).filter(|&x| (1..=ROWS).contains(&x)).sum();
        let lead = Some(id + 12).filter(|&x| x <= ROWS);
        // LAST_VALUE over the default frame: the current row itself (pads are distinct).
        let size = (first..=ROWS).step_by(4).count() as u64;
        let want: Got = (
            id,
            perm(id) as u64 + 1,
            smaller + 1,
            window_sum,
            Some(id - 5).filter(|&x| x >= 1),
            lead,
            first,
            id,
            size,
        );
        assert_eq!(*row, want, "row {id}");
    }

    let rows: Vec<(String, u64, u64)> = c
        .query(
            "SELECT EVENT_NAME, CURRENT_NUMBER_OF_BYTES_USED, HIGH_NUMBER_OF_BYTES_USED \
             FROM information_schema.STRATA_MEMORY",
        )
        .unwrap();
    let mem = |name: &str| {
        rows.iter()
            .find(|r| r.0 == name)
            .map(|r| (r.1, r.2))
            .unwrap_or_else(|| panic!("{name} in STRATA_MEMORY: {rows:?}"))
    };
    let window = mem("memory/sql/window_partition");
    eprintln!(
        "window over {ROWS} rows: RSS before {before} KiB, peak while it ran {peak} KiB; \
         window_partition {window:?}, sort {:?}",
        mem("memory/sql/sort")
    );
    assert!(window.1 > 0, "the window's memory was accounted");
    assert!(
        window.1 <= SHARE + (64 << 10),
        "window memory peaked at {} bytes, over tmp_table_size {SHARE}",
        window.1
    );
    assert_eq!(window.0, 0, "window memory returned");
    // What is still granted is the open connection's own charge (docs/memory.md).
    assert_eq!(
        mem("memory/strata/working_memory_granted").0,
        mem("memory/wire/connection_buffers").0
    );
    // The rows (about 25 MiB as values, and each row's results) were never all held.
    assert!(
        peak < before + (48 << 10),
        "RSS grew from {before} KiB to {peak} KiB"
    );
    // Every run and partition file was unlinked.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}
