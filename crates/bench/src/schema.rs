//! The tables the scenarios measure, created and loaded through SQL like any client
//! would: sysbench's `sbtest1..N` (and seed 002's `sbtest` with unsigned columns),
//! seed 001's join table `t1`, and seed 004's blob tables. Loading runs one client
//! per table in parallel and shows a progress bar of rows (or bytes) loaded.

use crate::client::{Client, Target};
use crate::driver::{bar, connect_db};
use crate::workload::{c_value, pad_value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU64, Ordering};

/// Rows per multi-row INSERT while loading.
const BATCH_ROWS: u64 = 500;
/// Bytes of blob data per INSERT while loading blob tables (well under the 64 MiB
/// max_allowed_packet of Strata and MariaDB).
const BATCH_BYTES: usize = 2 << 20;

/// `engine` as the ENGINE= name every MySQL server knows: MyISAM for heap, InnoDB for
/// btree.
pub fn engine_sql(engine: &str) -> Result<&'static str, String> {
    match engine.to_ascii_lowercase().as_str() {
        "myisam" | "heap" => Ok("MyISAM"),
        "innodb" | "btree" => Ok("InnoDB"),
        other => Err(format!(
            "unknown engine '{other}': expected MyISAM (heap) or InnoDB (btree)"
        )),
    }
}

/// Drops and creates database `db`. The bench only ever drops databases it names
/// itself (`strata_bench_*`).
pub fn recreate_db(c: &mut dyn Client, db: &str) -> Result<(), String> {
    c.exec(&format!("DROP DATABASE IF EXISTS {db}"))
        .map_err(|e| format!("DROP DATABASE {db}: {e}"))?;
    c.exec(&format!("CREATE DATABASE {db}"))
        .map_err(|e| format!("CREATE DATABASE {db}: {e}"))?;
    Ok(())
}

/// What goes into one table.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// sysbench's sbtest: id INT AUTO_INCREMENT, k INT, c CHAR(120), pad CHAR(60).
    Sbtest,
    /// seed 002's variant: the same columns, unsigned.
    SbtestUnsigned,
    /// seed 001's join table: id = i = c = 1..N, pad CHAR(8).
    JoinT1,
    /// seed 004's blob table: id, data BLOB of random length (mean `mean_len`).
    Blob { mean_len: usize },
    /// seed 003's child table: id, parent id (indexed), pad; rows point at parents
    /// 1..N.
    Child,
}

fn create_sql(kind: Kind, name: &str, engine: &str) -> String {
    match kind {
        Kind::Sbtest => format!(
            "CREATE TABLE {name} (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k)) ENGINE={engine}"
        ),
        Kind::SbtestUnsigned => format!(
            "CREATE TABLE {name} (id INT UNSIGNED NOT NULL AUTO_INCREMENT, k INT UNSIGNED NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k (k)) ENGINE={engine}"
        ),
        Kind::JoinT1 => format!(
            "CREATE TABLE {name} (id INT UNSIGNED NOT NULL DEFAULT 0, i INT UNSIGNED NOT NULL DEFAULT 0, c CHAR(15) DEFAULT NULL, pad CHAR(8) DEFAULT NULL, PRIMARY KEY (id), KEY i (i), KEY c (c)) ENGINE={engine}"
        ),
        Kind::Blob { .. } => format!(
            "CREATE TABLE {name} (id INT NOT NULL, data BLOB, PRIMARY KEY (id)) ENGINE={engine}"
        ),
        Kind::Child => format!(
            "CREATE TABLE {name} (id INT NOT NULL, pid INT NOT NULL, pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY pid (pid)) ENGINE={engine}"
        ),
    }
}

fn letters(rng: &mut StdRng, n: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..n)
        .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
        .collect()
}

/// One row's VALUES tuple; its approximate size in bytes for blob batching.
fn row_sql(kind: Kind, id: u64, rows: u64, rng: &mut StdRng) -> String {
    match kind {
        Kind::Sbtest | Kind::SbtestUnsigned => format!(
            "({id},{},'{}','{}')",
            rng.gen_range(1..=rows.max(1)),
            c_value(rng),
            pad_value(rng)
        ),
        Kind::JoinT1 => format!("({id},{id},'{id}','{}')", letters(rng, 8)),
        Kind::Blob { mean_len } => {
            let len = rng.gen_range(1..=(2 * mean_len).max(1));
            format!("({id},'{}')", letters(rng, len))
        }
        Kind::Child => format!(
            "({id},{},'{}')",
            rng.gen_range(1..=rows.max(1)),
            pad_value(rng)
        ),
    }
}

fn insert_prefix(kind: Kind, name: &str) -> String {
    match kind {
        Kind::Sbtest | Kind::SbtestUnsigned => {
            format!("INSERT INTO {name} (id, k, c, pad) VALUES ")
        }
        Kind::JoinT1 => format!("INSERT INTO {name} (id, i, c, pad) VALUES "),
        Kind::Blob { .. } => format!("INSERT INTO {name} (id, data) VALUES "),
        Kind::Child => format!("INSERT INTO {name} (id, pid, pad) VALUES "),
    }
}

/// One table to create and fill.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    pub kind: Kind,
    pub rows: u64,
}

/// Creates and loads `tables` in database `db` (which must exist) with `engine`, one
/// client per table in parallel, with one progress bar over all rows; then FLUSH TABLES.
pub fn load(
    target: &Target,
    db: &str,
    engine: &str,
    tables: &[Spec],
    seed: u64,
) -> Result<(), String> {
    let engine = engine_sql(engine)?;
    let total: u64 = tables.iter().map(|t| t.rows).sum();
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    let pb = bar(
        total,
        "{msg} [{bar:30}] {pos}/{len} rows, {elapsed}",
        format!("loading {db}.{} ({engine})", names.join(",")),
    );
    let loaded = AtomicU64::new(0);
    let result: Result<(), String> = std::thread::scope(|scope| {
        let handles: Vec<_> = tables
            .iter()
            .enumerate()
            .map(|(n, spec)| {
                let (pb, loaded) = (&pb, &loaded);
                scope.spawn(move || -> Result<(), String> {
                    let mut c = connect_db(target, db)?;
                    let mut rng = StdRng::seed_from_u64(seed.wrapping_add(n as u64));
                    load_one(c.as_mut(), engine, spec, &mut rng, &mut |n| {
                        loaded.fetch_add(n, Ordering::Relaxed);
                        pb.inc(n);
                    })
                })
            })
            .collect();
        for h in handles {
            h.join()
                .map_err(|_| "a loading thread panicked".to_string())??;
        }
        Ok(())
    });
    pb.finish_and_clear();
    result?;
    let n = loaded.load(Ordering::Relaxed);
    if n != total {
        return Err(format!("loaded {n} rows of {total}"));
    }
    // Write the load's dirty pages and index blocks now, so the first cells do not
    // share the cores and the disk with their write-back (a 2,000,000-row btree table
    // left a gigabyte for the page cleaner, and the heap cells measured beside it ran
    // 10-30 % slower than later ones).
    let mut c = connect_db(target, db)?;
    c.exec("FLUSH TABLES")
        .map_err(|e| format!("FLUSH TABLES after loading {db}: {e}"))?;
    Ok(())
}

fn load_one(
    c: &mut dyn Client,
    engine: &str,
    spec: &Spec,
    rng: &mut StdRng,
    progress: &mut dyn FnMut(u64),
) -> Result<(), String> {
    let name = &spec.name;
    c.exec(&format!("DROP TABLE IF EXISTS {name}"))
        .map_err(|e| format!("DROP TABLE {name}: {e}"))?;
    c.exec(&create_sql(spec.kind, name, engine))
        .map_err(|e| format!("CREATE TABLE {name}: {e}"))?;
    let prefix = insert_prefix(spec.kind, name);
    let mut next = 1;
    while next <= spec.rows {
        let mut sql = prefix.clone();
        let mut n = 0;
        while next <= spec.rows
            && n < BATCH_ROWS
            && (n == 0 || !matches!(spec.kind, Kind::Blob { .. }) || sql.len() < BATCH_BYTES)
        {
            if n > 0 {
                sql.push(',');
            }
            sql.push_str(&row_sql(spec.kind, next, spec.rows, rng));
            next += 1;
            n += 1;
        }
        let out = c.exec(&sql).map_err(|e| format!("loading {name}: {e}"))?;
        // MariaDB and Strata report inserted rows as affected rows; a silent short
        // insert would make every later figure wrong.
        if out.affected != n {
            return Err(format!(
                "loading {name}: an INSERT of {n} rows affected {}",
                out.affected
            ));
        }
        progress(n);
    }
    Ok(())
}
