//! `strata bench mmap` (seed 000): MyISAM-style tables read through pread (A,
//! `myisam_use_mmap=OFF`) against mmap (B, `ON`) for seven sysbench workloads at 1, 4,
//! 16, 64 and 256 threads. The two settings alternate cell by cell on the same tables,
//! so slow drift of the machine hits both columns alike.
//!
//! When the server does not accept `SET GLOBAL myisam_use_mmap` (Strata before the
//! heap engine has it; MariaDB, where it is a startup option) the scenario says so,
//! measures only the setting the server runs with, and reports the other column as
//! not measured.

use super::{cell, get_global, oltp::load_sbtest, set_global, Ctx, Out};
use crate::client::Target;
use crate::driver;
use crate::report::{Cell, Table};
use crate::seeds::{self, SeedTable};
use crate::workload::{Shape, Workload};

const WORKLOADS: [(Workload, &str, &str, SeedTable); 7] = [
    (
        Workload::PointSelect,
        "select-primary",
        "select-primary",
        seeds::MMAP_SELECT_PRIMARY,
    ),
    (
        Workload::SimpleRanges,
        "select-range",
        "select-range (100 rows)",
        seeds::MMAP_SELECT_RANGE,
    ),
    (
        Workload::ReadOnly,
        "oltp-ro",
        "OLTP ro (transactions)",
        seeds::MMAP_OLTP_RO,
    ),
    (
        Workload::UpdateIndex,
        "update-key",
        "update-key",
        seeds::MMAP_UPDATE_KEY,
    ),
    (
        Workload::UpdateNonIndex,
        "update-nokey",
        "update-nokey",
        seeds::MMAP_UPDATE_NOKEY,
    ),
    (
        Workload::ReadWrite,
        "oltp-rw",
        "OLTP rw (transactions)",
        seeds::MMAP_OLTP_RW,
    ),
    (
        Workload::BatchSelect,
        "batch-select",
        "batch select",
        seeds::MMAP_BATCH,
    ),
];

const VAR: &str = "myisam_use_mmap";

pub fn run(ctx: &Ctx, target: &Target, out: &mut Out) -> Result<(), String> {
    let engine = "MyISAM";
    let db = Ctx::db(engine);
    let threads = ctx.threads(&[1, 4, 16, 64, 256]);
    let rows = ctx.rows(100_000, 1000);
    let shape = Shape {
        tables: ctx.args.tables,
        table_size: rows,
        range_size: 100.min(rows),
        point_selects: 10,
        batch_rows: ctx.scaled(20_000, 100).min(rows),
    };

    // Which columns this server can run: both when the variable is dynamic.
    let mut admin = target.connect()?;
    let original = get_global(admin.as_mut(), VAR);
    let (run_a, run_b) = match set_global(admin.as_mut(), VAR, "OFF") {
        Ok(()) => (true, true),
        Err(e) => match original.as_ref().map(|v| v.to_ascii_uppercase()) {
            Some(v) if v == "ON" || v == "1" => {
                out.unavailable(format!(
                    "column A (pread): {e}; this server runs with {VAR}={v}, so only column B is measured (restart it with {VAR}=OFF for column A)"
                ));
                (false, true)
            }
            Some(v) => {
                out.unavailable(format!(
                    "column B (mmap): {e}; this server runs with {VAR}={v}, so only column A is measured (restart it with {VAR}=ON for column B)"
                ));
                (true, false)
            }
            None => {
                out.unavailable(format!(
                    "column B (mmap): {e}: this server has no mmap data access for MyISAM tables; column A is measured with the engine's only data access (pread)"
                ));
                (true, false)
            }
        },
    };
    let set = |c: &mut dyn crate::client::Client, on: bool| -> Result<(), String> {
        if run_a && run_b {
            set_global(c, VAR, if on { "ON" } else { "OFF" })?;
        }
        Ok(())
    };

    println!(
        "mmap: {} MyISAM table(s) of {rows} rows, batch select of {} rows, threads {:?}\n",
        shape.tables, shape.batch_rows, threads
    );
    load_sbtest(ctx, target, &db, engine, shape.tables, rows)?;
    for (w, id, title, seed) in WORKLOADS {
        let mut t = Table::new(
            &format!("mmap-{id}"),
            &format!("{title}: pread vs mmap, MyISAM, {rows} rows"),
            "Threads",
            "events/s (a transaction for OLTP, else a query)",
            "pread (myisam_use_mmap=OFF)",
            "mmap (myisam_use_mmap=ON)",
        )
        .with_seed(Some(seed));
        let event = move |c: &mut dyn crate::client::Client, rng: &mut rand::rngs::StdRng| {
            w.event(c, rng, &shape)
        };
        for &n in &threads {
            let mut measure = |on: bool, wanted: bool| -> Cell {
                if !wanted {
                    return Cell::Missing(format!(
                        "{VAR}={} cannot be set on this server",
                        if on { "ON" } else { "OFF" }
                    ));
                }
                if let Err(e) = set(admin.as_mut(), on) {
                    return Cell::Missing(e);
                }
                cell(driver::timed(
                    target,
                    &db,
                    n,
                    ctx.warmup(),
                    ctx.time(),
                    &format!("{id} {}", if on { "mmap" } else { "pread" }),
                    ctx.args.seed,
                    &event,
                ))
            };
            let a = measure(false, run_a);
            let b = measure(true, run_b);
            t.push(n.to_string(), a, b);
        }
        out.table(t)?;
    }
    if let (true, true, Some(v)) = (run_a, run_b, &original) {
        // Leave the server as it was found.
        set_global(admin.as_mut(), VAR, v)?;
    }
    Ok(())
}
