//! `strata bench groupcommit` (seed 001, "Group commit and XA"): sysbench update_key
//! (`UPDATE sbtest SET k=k+1 WHERE id=?`, autocommit) on InnoDB at 1, 4, 16 and 64
//! threads. The first table compares the redo flush policy,
//! `innodb_flush_log_at_trx_commit` 1 (fsync shared by concurrent commits) against 2
//! (write at commit, fsync once a second). The second is the seed's experiment, the
//! binary log off against on; the binary log is a startup setting (`log_bin`), so the
//! column of the setting the server does not run with is reported as not measured,
//! and on a server without a binary log (Strata today) the binlog-on half cannot run.

use super::{cell, get_global, oltp::load_sbtest, set_global, Ctx, Out};
use crate::client::Target;
use crate::driver;
use crate::report::{Cell, Table};
use crate::seeds;
use crate::workload::{Shape, Workload};

const FLUSH: &str = "innodb_flush_log_at_trx_commit";

pub fn run(ctx: &Ctx, target: &Target, out: &mut Out) -> Result<(), String> {
    let engine = ctx
        .engines(["InnoDB", "InnoDB"])?
        .first()
        .cloned()
        .unwrap_or_else(|| "InnoDB".into());
    let db = Ctx::db(&engine);
    let threads = ctx.threads(&[1, 4, 16, 64]);
    let rows = ctx.rows(100_000, 1000);
    let shape = Shape {
        tables: ctx.args.tables,
        table_size: rows,
        range_size: 100.min(rows),
        point_selects: 10,
        batch_rows: rows,
    };
    let mut admin = target.connect()?;
    let log_bin = admin.scalar("SELECT @@GLOBAL.log_bin");
    let original_flush = get_global(admin.as_mut(), FLUSH);
    println!(
        "groupcommit: update_key on {} {engine} table(s) of {rows} rows, threads {threads:?}\n",
        shape.tables
    );
    load_sbtest(ctx, target, &db, &engine, shape.tables, rows)?;

    let event = move |c: &mut dyn crate::client::Client, rng: &mut rand::rngs::StdRng| {
        Workload::UpdateIndex.event(c, rng, &shape)
    };
    let mut flush = Table::new(
        "groupcommit-flush",
        &format!("update_key, {engine}, {rows} rows: redo fsync at every commit vs once a second"),
        "Threads",
        "transactions/s",
        &format!("{FLUSH}=1"),
        &format!("{FLUSH}=2"),
    )
    .with_seed(Some(seeds::GROUPCOMMIT_FLUSH));
    for &n in &threads {
        let mut measure = |v: &str| -> Cell {
            if let Err(e) = set_global(admin.as_mut(), FLUSH, v) {
                return Cell::Missing(e);
            }
            cell(driver::timed(
                target,
                &db,
                n,
                ctx.warmup(),
                ctx.time(),
                &format!("update_key {FLUSH}={v}"),
                ctx.args.seed,
                &event,
            ))
        };
        let a = measure("1");
        let b = measure("2");
        flush.push(n.to_string(), a, b);
    }
    if let Some(v) = &original_flush {
        set_global(admin.as_mut(), FLUSH, v)?;
    }

    // The seed's comparison: the durable column above is this server's binlog state.
    let durable: Vec<(String, Cell)> = flush
        .rows
        .iter()
        .map(|r| (r.key.clone(), r.a.clone()))
        .collect();
    out.table(flush)?;
    let mut binlog = Table::new(
        "groupcommit-binlog",
        &format!("update_key, {engine}, {FLUSH}=1: binary log off vs on"),
        "Threads",
        "transactions/s",
        "binary log off",
        "binary log on",
    )
    .with_seed(Some(seeds::GROUPCOMMIT_BINLOG));
    let on = match &log_bin {
        Ok(Some(v)) => {
            let on = matches!(v.to_ascii_uppercase().as_str(), "ON" | "1");
            out.unavailable(format!(
                "binary log {}: log_bin is a startup setting and this server runs with log_bin={v}; restart it {} for that column",
                if on { "off" } else { "on" },
                if on { "without --log-bin" } else { "with --log-bin" }
            ));
            Some(on)
        }
        Ok(None) | Err(_) => {
            let why = match &log_bin {
                Err(e) => format!("SELECT @@log_bin: {e}"),
                _ => "SELECT @@log_bin returned nothing".into(),
            };
            out.unavailable(format!(
                "binary log on: Strata has no binary log yet ({why}); the binlog-on half of seed 001's group-commit experiment cannot run"
            ));
            None
        }
    };
    for (key, c) in durable {
        let missing = |what: &str| {
            Cell::Missing(format!("this server cannot run with the binary log {what}"))
        };
        let (a, b) = if on == Some(true) {
            (missing("off"), c)
        } else {
            (c, missing("on"))
        };
        binlog.push(key, a, b);
    }
    binlog.notes.push(format!(
        "the seed's third column, --log-bin with innodb_support_xa=0: {}",
        seeds::GROUPCOMMIT_BINLOG_NO_XA
            .iter()
            .map(|(t, v)| format!("{t} thread(s) {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.table(binlog)
}
