//! `strata bench oltp`: sysbench's OLTP workloads on the `sbtest1..N` tables, one
//! table per workload with the two engines of `--engine A,B` as columns (one engine:
//! column A only). The general-purpose driver behind the named scenarios.

use super::{cell, Ctx, Out};
use crate::client::Target;
use crate::driver;
use crate::report::{Cell, Table};
use crate::schema::{self, Kind, Spec};
use crate::workload::{Shape, Workload};

const DEFAULT_WORKLOADS: [Workload; 5] = [
    Workload::PointSelect,
    Workload::ReadOnly,
    Workload::ReadWrite,
    Workload::UpdateIndex,
    Workload::UpdateNonIndex,
];

/// Creates database `db` and loads `tables` sbtest tables of `rows` rows with `engine`.
pub fn load_sbtest(
    ctx: &Ctx,
    target: &Target,
    db: &str,
    engine: &str,
    tables: usize,
    rows: u64,
) -> Result<(), String> {
    let mut c = target.connect()?;
    schema::recreate_db(c.as_mut(), db)?;
    let specs: Vec<Spec> = (1..=tables)
        .map(|i| Spec {
            name: format!("sbtest{i}"),
            kind: Kind::Sbtest,
            rows,
        })
        .collect();
    schema::load(target, db, engine, &specs, ctx.args.seed)
}

pub fn run(ctx: &Ctx, target: &Target, out: &mut Out) -> Result<(), String> {
    let engines = ctx.engines(["MyISAM", "InnoDB"])?;
    let workloads = ctx
        .args
        .workload
        .clone()
        .unwrap_or_else(|| DEFAULT_WORKLOADS.to_vec());
    let threads = ctx.threads(&[1, 4, 16, 64]);
    let rows = ctx.rows(10_000, 100);
    let shape = Shape {
        tables: ctx.args.tables,
        table_size: rows,
        range_size: 100.min(rows),
        point_selects: 10,
        batch_rows: ctx.scaled(20_000, 10).min(rows),
    };
    println!(
        "oltp: {} table(s) of {rows} rows, engines {}, threads {:?}\n",
        shape.tables,
        engines.join(" vs "),
        threads
    );
    for e in &engines {
        load_sbtest(ctx, target, &Ctx::db(e), e, shape.tables, rows)?;
    }
    let a_name = engines[0].clone();
    let b_name = engines.get(1).cloned().unwrap_or_default();
    for w in workloads {
        let mut t = Table::new(
            &format!("oltp-{}", w.name()),
            &format!("oltp {} ({} rows)", w.name(), rows),
            "Threads",
            "events/s (a transaction for read_only/read_write, else a query)",
            &a_name,
            if b_name.is_empty() { "-" } else { &b_name },
        );
        let event = move |c: &mut dyn crate::client::Client, rng: &mut rand::rngs::StdRng| {
            w.event(c, rng, &shape)
        };
        for &n in &threads {
            let mut cells = Vec::new();
            for e in &engines {
                cells.push(cell(driver::timed(
                    target,
                    &Ctx::db(e),
                    n,
                    ctx.warmup(),
                    ctx.time(),
                    &format!("{} {e}", w.name()),
                    ctx.args.seed,
                    &event,
                )));
            }
            let mut it = cells.into_iter();
            let a = it.next().unwrap_or(Cell::Missing("not run".into()));
            let b = it
                .next()
                .unwrap_or(Cell::Missing("only one --engine given".into()));
            t.push(n.to_string(), a, b);
        }
        out.table(t)?;
    }
    Ok(())
}
