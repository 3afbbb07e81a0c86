//! Atomic CREATE TABLE … SELECT (`statements::create_select`): the server is killed with
//! SIGKILL at a random moment while a connection copies a table of tens of thousands of
//! rows into a new one. After each restart the new table either does not exist (only
//! allowed when the statement was not acknowledged) or exists with every row, passes
//! CHECK TABLE, and no file of a half-built table is left in the database directory.
//! Both engines (`ENGINE=InnoDB` 10 cycles, `MyISAM` 6); `STRATA_DDL_CRASH_CYCLES`
//! overrides the count.

use crate::common;

use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

const ROWS: i64 = 20_000;

fn setup(port: u16, engine: &str) {
    let mut c = common::connect(port, None);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop(format!(
        "CREATE TABLE src (id INT PRIMARY KEY, k INT, c VARCHAR(60)) ENGINE={engine}"
    ))
    .unwrap();
    let mut id = 0;
    while id < ROWS {
        let values: Vec<String> = (id..(id + 1000).min(ROWS))
            .map(|i| format!("({i}, {}, 'row-{i}-padding-padding-padding')", i % 97))
            .collect();
        c.query_drop(format!("INSERT INTO src VALUES {}", values.join(",")))
            .unwrap();
        id += 1000;
    }
}

/// Table files in the database directory, by stem.
fn table_stems(datadir: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(datadir.join("d"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            p.file_stem().map(|s| s.to_string_lossy().into_owned())
        })
        .collect()
}

fn run_ddl(port: u16, sql: String) -> (Option<bool>, Duration) {
    let t = Instant::now();
    let Ok(mut c) = mysql::Conn::new(common::opts(port, Some("d"))) else {
        return (None, t.elapsed());
    };
    let r = match c.query_drop(&sql) {
        Ok(()) => Some(true),
        Err(mysql::Error::MySqlError(e)) => panic!("{sql}: {e}"),
        Err(_) => None,
    };
    (r, t.elapsed())
}

fn crash_cycles(engine: &str, default_cycles: usize, seed: u64) {
    let cycles: usize = std::env::var("STRATA_DDL_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cycles);
    let mut server = common::TestServer::start(&[
        "--innodb-buffer-pool-size",
        "16M",
        "--innodb-flush-log-at-trx-commit",
        "1",
    ]);
    setup(server.port, engine);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut ddl_time = Duration::from_millis(300);
    let mut tables: BTreeSet<String> = ["src".to_string()].into();
    let (mut absent, mut present) = (0, 0);
    for cycle in 0..cycles {
        let port = server.port;
        let name = format!("copy{cycle}");
        let sql = format!(
            "CREATE TABLE {name} (k2 BIGINT, PRIMARY KEY (id)) ENGINE={engine} SELECT id, k, c, k * 2 AS k2 FROM src"
        );
        let ddl = std::thread::spawn(move || run_ddl(port, sql));
        let max = (ddl_time.as_millis() as u64 * 3 / 2).max(20);
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..max)));
        server.crash();
        let (acked, took) = ddl.join().unwrap();
        if acked == Some(true) {
            ddl_time = took;
        } else {
            ddl_time = ddl_time * 3 / 2;
        }
        server.start_again();
        let mut c = common::connect(server.port, Some("d"));
        let exists: Option<String> = c
            .exec_first(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = ?",
                (name.as_str(),),
            )
            .unwrap();
        match exists {
            None => {
                assert_ne!(
                    acked,
                    Some(true),
                    "cycle {cycle}: an acknowledged CREATE TABLE … SELECT is missing"
                );
                absent += 1;
            }
            Some(_) => {
                let (n, sum): (i64, i64) = c
                    .query_first(format!("SELECT COUNT(*), SUM(k2) FROM {name}"))
                    .unwrap()
                    .unwrap();
                let want: i64 = (0..ROWS).map(|i| (i % 97) * 2).sum();
                assert_eq!(
                    (n, sum),
                    (ROWS, want),
                    "cycle {cycle}: {name} exists but is not whole"
                );
                let rows: Vec<(String, String, String, String)> =
                    c.query(format!("CHECK TABLE {name}")).unwrap();
                let last = rows.last().unwrap();
                assert_eq!(
                    (last.2.as_str(), last.3.as_str()),
                    ("status", "OK"),
                    "cycle {cycle}: CHECK TABLE {name}: {rows:?}"
                );
                tables.insert(name.clone());
                present += 1;
            }
        }
        // Recovery removed the files of a half-built table: only the tables' own remain.
        let stems = table_stems(&server.datadir);
        assert_eq!(
            stems, tables,
            "cycle {cycle}: table files left in the database directory"
        );
    }
    eprintln!("ctas_crash {engine}: {present} cycles found the table, {absent} did not");
}

#[test]
fn sigkill_during_create_table_select_leaves_no_or_whole_table_innodb() {
    crash_cycles("InnoDB", 10, 0xC7A5_0001);
}

#[test]
fn sigkill_during_create_table_select_leaves_no_or_whole_table_myisam() {
    crash_cycles("MyISAM", 6, 0xC7A5_0002);
}
