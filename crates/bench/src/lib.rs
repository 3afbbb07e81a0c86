//! `strata bench`: the seeds' experiments as one command. A workload driver with
//! sysbench's schema and OLTP statements that runs either in-process (a fresh data
//! directory opened with Strata's engines, SQL through one session per client thread:
//! the engines measured without the network) or over the MySQL protocol against any
//! server on this machine (Strata or MariaDB). Each named scenario prints the seed's
//! table shape (Threads | A | B | B/A) with HDR-histogram latency percentiles and the
//! seed's published figures beside today's, and can write CSV, JSON and SVG charts.
//!
//! Layout: `args` (command line), `client` / `inprocess` / `wire` (what SQL runs
//! against), `schema` (tables and loading), `workload` (sysbench statements),
//! `driver` (threads, timing, histograms, progress), `report` / `svg` (output),
//! `seeds` (the published reference figures), `cache` (dropping files from the OS page
//! cache, tmpfs detection) and `scenarios` (one module per experiment).

pub mod args;
mod cache;
mod client;
mod driver;
pub mod inprocess;
mod report;
mod scenarios;
mod schema;
mod seeds;
mod svg;
mod wire;
mod workload;

pub use args::BenchArgs;

/// Exit status when the run finished but part of an experiment could not be measured
/// on this server (a missing variable or feature, no tmpfs directory given...).
pub const EXIT_INCOMPLETE: i32 = 2;

/// Runs the scenario the arguments name; returns the process exit status: 0 when
/// everything was measured, [`EXIT_INCOMPLETE`] when some half could not be.
pub fn run(args: BenchArgs) -> Result<i32, String> {
    let ctx = scenarios::Ctx::new(args)?;
    let target = ctx.target()?;
    let a = &ctx.args;
    println!("# strata bench {}", a.scenario.name());
    println!("target: {}", target.describe());
    if target.is_in_process() {
        println!(
            "caches: key_buffer_size {} MiB (heap), innodb_buffer_pool_size {} MiB (btree)",
            ctx.settings.key_buffer_size >> 20,
            ctx.settings.innodb_buffer_pool_size >> 20
        );
    }
    if a.scenario == args::Scenario::Tpch {
        // TPC-H has its own size (the scale factor) and runs each query a fixed number
        // of times, not for a period.
        println!(
            "scale factor {}: each query once unmeasured, then {} timed run(s), the median shown; {} s timeout per query",
            a.scale_factor,
            a.repeat,
            report::fmt_num(a.query_timeout)
        );
    } else {
        println!(
            "scale {}: {} s measured + {} s warm-up per cell{}",
            a.scale,
            report::fmt_num(ctx.time().as_secs_f64()),
            report::fmt_num(ctx.warmup().as_secs_f64()),
            if a.scale < 1.0 {
                " (a smoke test: sizes, durations and thread lists shrunk; not for comparison)"
            } else {
                ""
            }
        );
    }
    println!();
    let mut out = scenarios::Out::new(a.svg_dir.clone());
    let result = scenarios::run(&ctx, &target, &mut out);
    // Whatever was measured before an error is still written out.
    if let Some(path) = &a.csv {
        report::write_csv(path, a.scenario.name(), &out.tables)?;
        println!("csv: {}", path.display());
    }
    if let Some(path) = &a.json {
        report::write_json(
            path,
            a.scenario.name(),
            &target.describe(),
            &out.tables,
            &out.unavailable,
        )?;
        println!("json: {}", path.display());
    }
    result?;
    if out.unavailable.is_empty() {
        return Ok(0);
    }
    eprintln!(
        "strata bench {}: {} part(s) not measured:",
        a.scenario.name(),
        out.unavailable.len()
    );
    for u in &out.unavailable {
        eprintln!("  - {u}");
    }
    Ok(EXIT_INCOMPLETE)
}
