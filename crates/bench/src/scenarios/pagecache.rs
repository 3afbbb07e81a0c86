//! `strata bench pagecache` (seed 004, tmpfs vs the OS page cache): two blob tables of
//! 400 MB (id, data BLOB of random length, ~83,574 rows each), a full scan
//! `SELECT * ... WHERE data = 'foobar'` (no row matches) and `SELECT * ... ORDER BY
//! data` (a sort that spills to tmpdir), queries per second. Column A has the data
//! directory on the normal file system, column B on tmpfs (`--tmpfs-dir`, in-process
//! only). Rows: the OS cache warm (a first, unmeasured query reads the files in), and
//! dropped before every query (fsync + posix_fadvise DONTNEED on the table's files; the
//! dropping is not timed). The default engine is MyISAM, which caches no data itself,
//! as the seed's tables.

use super::{Ctx, Out};
use crate::cache;
use crate::client::{Client, Target};
use crate::driver::{bar, connect_db};
use crate::report::{Cell, Measure, Table};
use crate::schema::{self, Kind, Spec};
use crate::seeds;
use std::path::PathBuf;
use std::time::Instant;

/// The seed's mean row: 400 MB over ~83,574 rows.
const MEAN_ROW: usize = 400_000_000 / 83_574;
const TABLES: [&str; 2] = ["pc_blob1", "pc_blob2"];

/// One side (normal file system or tmpfs) of the experiment.
struct Side<'a> {
    target: &'a Target,
    db: String,
    rows: u64,
}

impl Side<'_> {
    /// The files of every blob table, when this side may drop them from the cache.
    fn files(&self) -> Result<Vec<PathBuf>, String> {
        let dir = self.target.datadir().ok_or_else(|| {
            "the server's data directory is unknown: give --datadir to drop its table files from the OS cache".to_string()
        })?;
        let mut all = Vec::new();
        for t in TABLES {
            all.extend(cache::table_files(dir, &self.db, t)?);
        }
        Ok(all)
    }

    /// Runs `n` queries (the i-th is `sql(i)`, returning `expect(i)` rows) and returns
    /// queries per second. With `drop`, the table files leave the OS cache before every
    /// query (not timed); without, one unmeasured query warms the cache first.
    fn measure(
        &self,
        label: &str,
        n: u64,
        drop: bool,
        sql: &dyn Fn(u64) -> String,
        expect: &dyn Fn(u64) -> u64,
    ) -> Result<Measure, String> {
        let mut c = connect_db(self.target, &self.db)?;
        let files = if drop { Some(self.files()?) } else { None };
        let check = |c: &mut dyn Client, i: u64| -> Result<(), String> {
            let got = c
                .exec(&sql(i))
                .map_err(|e| format!("{}: {e}", sql(i)))?
                .rows;
            if got != expect(i) {
                return Err(format!("{}: {got} rows, expected {}", sql(i), expect(i)));
            }
            Ok(())
        };
        if files.is_none() {
            check(c.as_mut(), 0)?;
        }
        let pb = bar(
            n,
            "{msg} [{bar:30}] {pos}/{len} queries, {elapsed}",
            label.to_string(),
        );
        let mut busy = 0.0;
        for i in 0..n {
            if let Some(f) = &files {
                // A FLUSH first writes what the server holds for these files.
                c.exec("FLUSH TABLES")
                    .map_err(|e| format!("FLUSH TABLES: {e}"))?;
                cache::drop_files(f)?;
            }
            let t = Instant::now();
            check(c.as_mut(), i)?;
            busy += t.elapsed().as_secs_f64();
            pb.inc(1);
        }
        pb.finish_and_clear();
        let mut m = Measure::seconds(n as f64 / busy.max(1e-9), n);
        m.qps = Some(m.value);
        Ok(m)
    }
}

pub fn run(ctx: &Ctx, target: &Target, out: &mut Out) -> Result<(), String> {
    let engine = ctx
        .engines(["MyISAM", "MyISAM"])?
        .first()
        .cloned()
        .unwrap_or_else(|| "MyISAM".into());
    let db = Ctx::db(&engine);
    let bytes = ctx.scaled(400_000_000, 256 << 10);
    let rows = (bytes / MEAN_ROW as u64).max(10);
    let scans = ctx.scaled(100, 3);
    let sorts = ctx.scaled(10, 2);
    println!(
        "pagecache: {engine} tables {} of ~{} MB ({rows} rows) each, {scans} scans and {sorts} ORDER BY per cell\n",
        TABLES.join(", "),
        bytes / 1_000_000
    );

    if let Some(d) = target.datadir() {
        if cache::is_tmpfs(d).unwrap_or(false) {
            out.unavailable(format!(
                "column A: the data directory {} is itself on tmpfs, so column A is not the normal file system",
                d.display()
            ));
        }
    }
    let tmpfs_target = match (&ctx.args.tmpfs_dir, target.is_in_process()) {
        (Some(dir), true) => match cache::is_tmpfs(dir) {
            Ok(true) => Some(ctx.target_under(dir)?),
            Ok(false) => {
                out.unavailable(format!(
                    "column B (tmpfs): --tmpfs-dir {} is not on tmpfs",
                    dir.display()
                ));
                None
            }
            Err(e) => {
                out.unavailable(format!("column B (tmpfs): {e}"));
                None
            }
        },
        (None, true) => {
            out.unavailable(
                "column B (tmpfs): skipped, no --tmpfs-dir given (e.g. --tmpfs-dir /dev/shm)"
                    .into(),
            );
            None
        }
        (_, false) => {
            out.unavailable(
                "column B (tmpfs): over the wire the server's data directory cannot be moved; run a second server with its data directory on tmpfs and compare"
                    .into(),
            );
            None
        }
    };

    let mut sides = vec![Side {
        target,
        db: db.clone(),
        rows,
    }];
    if let Some(t) = &tmpfs_target {
        sides.push(Side {
            target: t,
            db: db.clone(),
            rows,
        });
    }
    for s in &sides {
        let mut c = s.target.connect()?;
        schema::recreate_db(c.as_mut(), &s.db)?;
        let specs: Vec<Spec> = TABLES
            .iter()
            .map(|t| Spec {
                name: t.to_string(),
                kind: Kind::Blob { mean_len: MEAN_ROW },
                rows,
            })
            .collect();
        schema::load(s.target, &s.db, &engine, &specs, ctx.args.seed)?;
    }
    if target.datadir().is_none() {
        out.unavailable(
            "rows 'OS cache dropped': the server's data directory is unknown; give --datadir to drop its table files from the OS cache".into(),
        );
    }

    let scan_sql = |i: u64| {
        format!(
            "SELECT * FROM {} WHERE data = 'foobar'",
            TABLES[(i % 2) as usize]
        )
    };
    let none = |_: u64| 0;
    let one_sql = |_: u64| format!("SELECT * FROM {} ORDER BY data", TABLES[0]);
    let both_sql = |i: u64| format!("SELECT * FROM {} ORDER BY data", TABLES[(i % 2) as usize]);
    let all = |_: u64| rows;

    let names = ["normal file system", "tmpfs"];
    let side_cell = |i: usize, f: &dyn Fn(&Side) -> Result<Measure, String>| -> Cell {
        match sides.get(i) {
            Some(s) => super::cell(f(s)),
            None => Cell::Missing(format!("no {} data directory", names[i])),
        }
    };
    let mut scan = Table::new(
        "pagecache-scan",
        &format!(
            "full scan of a ~{} MB blob table (WHERE data = 'foobar')",
            bytes / 1_000_000
        ),
        "Condition",
        "queries/s",
        names[0],
        names[1],
    )
    .with_seed(Some(seeds::PAGECACHE_SCAN));
    for (key, drop) in [("OS cache warm", false), ("OS cache dropped", true)] {
        let f = |s: &Side| s.measure(&format!("scan, {key}"), scans, drop, &scan_sql, &none);
        scan.push(key, side_cell(0, &f), side_cell(1, &f));
    }
    scan.notes.push(
        "each query scans one of the two tables, alternating; dropping the cache is not timed (the seed's totals included ~3.9 s of it)".into(),
    );
    out.table(scan)?;

    let mut order = Table::new(
        "pagecache-order-by",
        &format!(
            "SELECT * ... ORDER BY data on ~{} MB blob tables",
            bytes / 1_000_000
        ),
        "Condition",
        "queries/s",
        names[0],
        names[1],
    )
    .with_seed(Some(seeds::PAGECACHE_ORDER_BY));
    let rows_f = |s: &Side, label: &str, drop: bool, sql: &dyn Fn(u64) -> String| {
        debug_assert_eq!(s.rows, rows);
        s.measure(label, sorts, drop, sql, &all)
    };
    let warm = |s: &Side| rows_f(s, "ORDER BY, one table", false, &one_sql);
    order.push("OS cache warm", side_cell(0, &warm), side_cell(1, &warm));
    let both = |s: &Side| rows_f(s, "ORDER BY, both tables", false, &both_sql);
    order.push("both tables", side_cell(0, &both), side_cell(1, &both));
    let dropped = |s: &Side| rows_f(s, "ORDER BY, OS cache dropped", true, &one_sql);
    order.push(
        "OS cache dropped",
        side_cell(0, &dropped),
        side_cell(1, &dropped),
    );
    order.notes.push(format!(
        "'both tables' alternates the two tables (the seed's benchmark 3, where they did not fit in memory); sort runs go to {}",
        if target.is_in_process() {
            ctx.settings.tmpdir.display().to_string()
        } else {
            "the server's tmpdir".into()
        }
    ));
    out.table(order)
}
