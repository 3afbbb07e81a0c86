//! Atomic, crash-safe DDL (`docs/format/catalog.md`): the server is killed with SIGKILL at
//! a random moment while one connection runs ALTER TABLE (ADD INDEX, ADD COLUMN, DROP
//! INDEX + MODIFY, DROP COLUMN + RENAME TO) or RENAME TABLE on a table of tens of
//! thousands of rows, a second CREATE TABLE / DROP TABLE, a third commits inserts
//! into another table, and a fourth inserts rows into the altered table and deletes some
//! of them (online ADD INDEX lets these go on during the build; the other statements
//! make them wait). After each restart:
//!
//! * the altered table exists in exactly its old or its new form (name, columns, types,
//!   indexes, from information_schema), and in its new form when the ALTER was
//!   acknowledged; it holds all its rows;
//! * the created/dropped table exists or not, as acknowledged (either when unknown);
//! * every acknowledged insert is present, in both tables, and every acknowledged delete
//!   of the altered table's rows is in effect; the altered table holds its original rows
//!   plus exactly the writer's rows that survived;
//! * the altered table's indexes agree with its rows (counts and sums through each);
//! * CHECK TABLE passes on every table;
//! * no table file is left over: the data directory holds the files of exactly the
//!   tables there are (half-built `#sql-` files and replaced ones are removed).
//!
//! Runs on both engines for the altered table (`ENGINE=InnoDB` 24 cycles, `MyISAM` 10;
//! the writer into the altered table only on InnoDB).
//! `STRATA_DDL_CRASH_CYCLES` overrides the count for a longer soak;
//! `STRATA_CRASH_SNAPSHOT=DIR` keeps each crashed data directory (before recovery).

use crate::common;

use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROWS: i64 = 30_000;

/// The forms the altered table goes through, one DDL statement from each to the next.
struct Form {
    name: &'static str,
    /// (column, data type, max length) in order.
    columns: &'static [(&'static str, &'static str, i64)],
    /// (index, column) in index order.
    indexes: &'static [(&'static str, &'static str)],
}

const FORMS: [Form; 5] = [
    Form {
        name: "big",
        columns: &[("id", "int", 0), ("k", "int", 0), ("c", "varchar", 60)],
        indexes: &[("PRIMARY", "id")],
    },
    Form {
        name: "big",
        columns: &[("id", "int", 0), ("k", "int", 0), ("c", "varchar", 60)],
        indexes: &[("PRIMARY", "id"), ("k_idx", "k")],
    },
    Form {
        name: "big",
        columns: &[
            ("id", "int", 0),
            ("k", "int", 0),
            ("extra", "int", 0),
            ("c", "varchar", 60),
        ],
        indexes: &[("PRIMARY", "id"), ("k_idx", "k")],
    },
    Form {
        name: "big2",
        columns: &[
            ("id", "int", 0),
            ("k", "int", 0),
            ("extra", "int", 0),
            ("c", "varchar", 60),
        ],
        indexes: &[("PRIMARY", "id"), ("k_idx", "k")],
    },
    Form {
        name: "big2",
        columns: &[
            ("id", "int", 0),
            ("k", "int", 0),
            ("extra", "int", 0),
            ("c", "varchar", 80),
        ],
        indexes: &[("PRIMARY", "id")],
    },
];

/// The statement that takes form `i` to form `i + 1` (the last back to the first).
const STEPS: [&str; 5] = [
    "ALTER TABLE big ADD INDEX k_idx (k)",
    "ALTER TABLE big ADD COLUMN extra INT NOT NULL DEFAULT 5 AFTER k",
    "RENAME TABLE big TO big2",
    "ALTER TABLE big2 DROP INDEX k_idx, MODIFY c VARCHAR(80) NOT NULL",
    "ALTER TABLE big2 DROP COLUMN extra, MODIFY c VARCHAR(60) NOT NULL, RENAME TO big",
];

type Shape = (String, Vec<(String, String, i64)>, Vec<(String, String)>);

fn shape_of(f: &Form) -> Shape {
    (
        f.name.to_string(),
        f.columns
            .iter()
            .map(|(c, t, l)| (c.to_string(), t.to_string(), *l))
            .collect(),
        f.indexes
            .iter()
            .map(|(i, c)| (i.to_string(), c.to_string()))
            .collect(),
    )
}

fn setup(port: u16, engine: &str) {
    let mut c = common::connect(port, None);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop(format!(
        "CREATE TABLE big (id INT NOT NULL, k INT, c VARCHAR(60) NOT NULL, PRIMARY KEY (id)) \
         ENGINE={engine}"
    ))
    .unwrap();
    let mut id = 0;
    while id < ROWS {
        let values: Vec<String> = (id..(id + 1000).min(ROWS))
            .map(|i| {
                format!(
                    "({i}, {}, 'row-{i}-{}')",
                    (i * 7919) % 1000,
                    "p".repeat((i % 20) as usize)
                )
            })
            .collect();
        c.query_drop(format!("INSERT INTO big VALUES {}", values.join(",")))
            .unwrap();
        id += 1000;
    }
    c.query_drop("CREATE TABLE journal (id BIGINT PRIMARY KEY, v INT) ENGINE=InnoDB")
        .unwrap();
    // MyISAM writes its key cache back on FLUSH (as MySQL); the rows are then on disk.
    c.query_drop("FLUSH TABLES").unwrap();
}

/// The altered table's shape as the server shows it, and its name (None: no such table).
fn current_shape(c: &mut mysql::Conn) -> Vec<Shape> {
    let names: Vec<String> = c
        .query(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd' \
             AND TABLE_NAME IN ('big', 'big2') ORDER BY TABLE_NAME",
        )
        .unwrap();
    names
        .into_iter()
        .map(|n| {
            let cols: Vec<(String, String, Option<i64>)> = c
                .query(format!(
                    "SELECT COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH FROM \
                     information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = '{n}' \
                     ORDER BY ORDINAL_POSITION"
                ))
                .unwrap();
            let idx: Vec<(String, String)> = c
                .query(format!(
                    "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS \
                     WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = '{n}' \
                     ORDER BY INDEX_NAME <> 'PRIMARY', INDEX_NAME, SEQ_IN_INDEX"
                ))
                .unwrap();
            (
                n,
                cols.into_iter()
                    .map(|(a, b, l)| (a, b, l.unwrap_or(0)))
                    .collect(),
                idx,
            )
        })
        .collect()
}

fn check_ok(c: &mut mysql::Conn, table: &str, cycle: usize) {
    let rows: Vec<(String, String, String, String)> =
        c.query(format!("CHECK TABLE {table}")).unwrap();
    let last = rows.last().unwrap();
    assert_eq!(
        (last.2.as_str(), last.3.as_str()),
        ("status", "OK"),
        "cycle {cycle}: CHECK TABLE {table}: {rows:?}"
    );
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

/// Inserts rows with increasing ids until `stop`; returns the ids acknowledged.
fn inserter(port: u16, first: i64, stop: Arc<AtomicBool>) -> Vec<i64> {
    let mut acked = Vec::new();
    let Ok(mut c) = mysql::Conn::new(common::opts(port, Some("d"))) else {
        return acked;
    };
    let mut id = first;
    while !stop.load(Ordering::Relaxed) {
        match c.exec_drop("INSERT INTO journal VALUES (?, ?)", (id, id % 97)) {
            Ok(()) => acked.push(id),
            Err(mysql::Error::MySqlError(_)) => {}
            Err(_) => return acked,
        }
        id += 1;
    }
    acked
}

/// What the writer into the altered table saw acknowledged, and the id of the statement
/// it had in flight when the server died (its outcome is unknown).
#[derive(Default)]
struct Written {
    inserted: Vec<i64>,
    deleted: Vec<i64>,
    in_flight: Option<i64>,
}

/// Inserts rows (ids from `first`) into the altered table under whichever of its names
/// exists, and deletes every fourth row it inserted, until `stop`.
fn table_writer(port: u16, first: i64, stop: Arc<AtomicBool>) -> Written {
    let mut w = Written::default();
    let Ok(mut c) = mysql::Conn::new(common::opts(port, Some("d"))) else {
        return w;
    };
    let mut id = first;
    let mut name = "big";
    while !stop.load(Ordering::Relaxed) {
        let delete = id % 4 == 3 && !w.inserted.is_empty();
        let target = if delete {
            w.inserted[w.inserted.len() - 1]
        } else {
            id
        };
        w.in_flight = Some(target);
        let r = if delete {
            c.exec_drop(format!("DELETE FROM {name} WHERE id = ?"), (target,))
        } else {
            c.exec_drop(
                format!("INSERT INTO {name} (id, k, c) VALUES (?, ?, 'w')"),
                (target, target % 1000),
            )
        };
        match r {
            Ok(()) if delete => {
                // Only a row that was there counts as deleted.
                if c.affected_rows() == 1 {
                    w.inserted.pop();
                    w.deleted.push(target);
                }
            }
            Ok(()) => w.inserted.push(target),
            Err(mysql::Error::MySqlError(e)) if e.code == 1146 => {
                name = if name == "big" { "big2" } else { "big" };
            }
            Err(mysql::Error::MySqlError(_)) => {}
            Err(_) => return w,
        }
        w.in_flight = None;
        id += 1;
    }
    w
}

/// Runs `sql` on its own connection; Some(true) when acknowledged, Some(false) when the
/// server answered with an error, None when the connection died first.
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
        "--innodb-log-file-size",
        "4M",
        "--innodb-flush-log-at-trx-commit",
        "1",
    ]);
    setup(server.port, engine);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut form = 0usize;
    let mut side_exists = false;
    let mut acked: BTreeSet<i64> = BTreeSet::new();
    // The altered table's rows written by the writer and present after the last restart.
    let mut written: BTreeSet<i64> = BTreeSet::new();
    let mut next_id = 0i64;
    let mut ddl_time = Duration::from_millis(400);
    let (mut landed_old, mut landed_new) = (0, 0);
    for cycle in 0..cycles {
        let port = server.port;
        let before = form;
        let stop = Arc::new(AtomicBool::new(false));
        let ins = {
            let stop = stop.clone();
            let first = next_id;
            std::thread::spawn(move || inserter(port, first, stop))
        };
        // Only into a transactional table: MyISAM makes no promise for a row whose
        // statement was acknowledged just before a SIGKILL (its key cache is written back
        // later), so the MyISAM cycles keep the altered table's rows as loaded.
        let tw = (engine == "InnoDB").then(|| {
            let stop = stop.clone();
            let first = 100_000_000 + next_id;
            std::thread::spawn(move || table_writer(port, first, stop))
        });
        let step = STEPS[form].to_string();
        let alter = std::thread::spawn(move || run_ddl(port, step));
        let side_sql = if side_exists {
            "DROP TABLE side".to_string()
        } else {
            format!("CREATE TABLE side (a INT PRIMARY KEY, b VARCHAR(10), KEY (b)) ENGINE={engine}")
        };
        let side = std::thread::spawn(move || run_ddl(port, side_sql));
        // Anywhere from before the DDL starts to a little after it usually ends.
        let max = (ddl_time.as_millis() as u64 * 3 / 2).max(20);
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..max)));
        server.crash();
        stop.store(true, Ordering::Relaxed);
        let (alter_acked, took) = alter.join().unwrap();
        let (side_acked, _) = side.join().unwrap();
        if alter_acked == Some(true) {
            ddl_time = took;
        } else {
            // Not done in time: aim later next time, so crashes also land after the
            // switch (a loaded machine makes the copy slow).
            ddl_time = ddl_time * 3 / 2;
        }
        let got = ins.join().unwrap();
        let n_acked = got.len();
        acked.extend(got);
        let wrote = tw.map(|t| t.join().unwrap()).unwrap_or_default();
        next_id += 10_000_000;
        // For diagnosis: the data directory as the crash left it, before recovery.
        if let Ok(dir) = std::env::var("STRATA_CRASH_SNAPSHOT") {
            let to = std::path::Path::new(&dir).join(format!("{engine}-cycle{cycle}"));
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
        let mut c = common::connect(server.port, Some("d"));
        let shapes = current_shape(&mut c);
        assert_eq!(
            shapes.len(),
            1,
            "cycle {cycle}: the altered table must exist exactly once: {shapes:?}"
        );
        let old = shape_of(&FORMS[form]);
        let next = (form + 1) % FORMS.len();
        let new = shape_of(&FORMS[next]);
        let now = &shapes[0];
        if *now == new {
            form = next;
            landed_new += 1;
        } else {
            assert_eq!(
                *now, old,
                "cycle {cycle}: `{}` is neither its old nor its new form",
                STEPS[form]
            );
            assert_ne!(
                alter_acked,
                Some(true),
                "cycle {cycle}: `{}` was acknowledged but is not in effect",
                STEPS[form]
            );
            landed_old += 1;
        }
        let name = FORMS[form].name;
        // The writer's rows: every acknowledged insert is there unless an acknowledged
        // delete took it; the one statement in flight may have gone either way.
        let theirs: BTreeSet<i64> = c
            .query::<i64, _>(format!("SELECT id FROM {name} WHERE id >= {ROWS}"))
            .unwrap()
            .into_iter()
            .collect();
        for id in &wrote.inserted {
            assert!(
                theirs.contains(id) || wrote.in_flight == Some(*id),
                "cycle {cycle}: acknowledged insert {id} into {name} lost"
            );
        }
        for id in &written {
            assert!(
                theirs.contains(id),
                "cycle {cycle}: row {id} of {name}, present after the last restart, is gone"
            );
        }
        for id in &wrote.deleted {
            assert!(
                !theirs.contains(id),
                "cycle {cycle}: acknowledged delete of {id} from {name} undone"
            );
        }
        for id in &theirs {
            assert!(
                written.contains(id) || wrote.inserted.contains(id) || wrote.in_flight == Some(*id),
                "cycle {cycle}: {name} holds row {id} nobody inserted"
            );
        }
        written = theirs;
        let extra_k: i64 = written.iter().map(|id| id % 1000).sum();
        let want_sum: i64 = (0..ROWS).map(|i| (i * 7919) % 1000).sum::<i64>() + extra_k;
        let want = (ROWS + written.len() as i64, want_sum);
        let (count, sum): (i64, i64) = c
            .query_first(format!(
                "SELECT COUNT(*), SUM(k) FROM {name} FORCE INDEX (PRIMARY) WHERE id > -1"
            ))
            .unwrap()
            .unwrap();
        assert_eq!((count, sum), want, "cycle {cycle}: rows of {name}");
        if FORMS[form].indexes.iter().any(|(i, _)| *i == "k_idx") {
            let by_k: (i64, i64) = c
                .query_first(format!(
                    "SELECT COUNT(*), SUM(k) FROM {name} FORCE INDEX (k_idx) WHERE k > -1"
                ))
                .unwrap()
                .unwrap();
            assert_eq!(by_k, want, "cycle {cycle}: {name} read through k_idx");
        }
        check_ok(&mut c, name, cycle);

        let side_now: Option<String> = c
            .query_first(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd' \
                 AND TABLE_NAME = 'side'",
            )
            .unwrap();
        if side_acked == Some(true) {
            assert_eq!(
                side_now.is_some(),
                !side_exists,
                "cycle {cycle}: acknowledged CREATE/DROP TABLE side is not in effect"
            );
        }
        side_exists = side_now.is_some();
        if side_exists {
            check_ok(&mut c, "side", cycle);
        }

        let present: BTreeSet<i64> = c
            .query::<i64, _>("SELECT id FROM journal")
            .unwrap()
            .into_iter()
            .collect();
        let lost: Vec<&i64> = acked.difference(&present).take(5).collect();
        assert!(
            lost.is_empty(),
            "cycle {cycle}: acknowledged inserts lost: {lost:?}"
        );
        check_ok(&mut c, "journal", cycle);

        // Exactly the tables there are have files: nothing half-built or replaced stays.
        let tables: Vec<String> = c.query("SHOW TABLES").unwrap();
        let stems = table_stems(&server.datadir);
        assert_eq!(
            stems.len(),
            tables.len(),
            "cycle {cycle}: table files {stems:?} for tables {tables:?}"
        );
        eprintln!(
            "ddl crash cycle {cycle} ({engine}): `{}` -> {}, side {}, {n_acked} inserts \
             acknowledged, {} inserts and {} deletes in the altered table; all present",
            STEPS[before],
            if *now == new { "new" } else { "old" },
            if side_exists { "exists" } else { "absent" },
            wrote.inserted.len(),
            wrote.deleted.len(),
        );
    }
    eprintln!("{engine}: {landed_old} crashes left the old form, {landed_new} the new");
}

#[test]
fn sigkill_during_ddl_leaves_old_or_new_form_innodb() {
    crash_cycles("InnoDB", 24, 15);
}

#[test]
fn sigkill_during_ddl_leaves_old_or_new_form_myisam() {
    crash_cycles("MyISAM", 10, 16);
}
