//! `strata bench tpch`: TPC-H as the analytic yardstick. Loads the 8 tables at
//! `--scale-factor` (rows from the `tpchgen` crate) into this run's target (in-process
//! Strata, or the server of --host/--port) and, with `--compare host:port`, into a
//! second server over the wire; then runs the 22 queries on both, one query at a time
//! (each once unmeasured, then `--repeat` timed runs, median kept, under
//! `--query-timeout`), and checks every result against the other server's. Prints the
//! tables' row counts, then `query | A ms | B ms | ratio | result` with totals; the
//! table also goes to CSV/JSON and, as grouped bars, to SVG.
//!
//! Layout: `tpch/queries.rs` (the 22 statements, `tpch/sql/*.sql`), `tpch/load.rs`
//! (schema, generation, loading), `tpch/runner.rs` (timed runs with a timeout),
//! `tpch/compare.rs` (result checking).

mod compare;
mod load;
mod queries;
mod runner;

use super::{Ctx, Out};
use crate::client::Target;
use crate::report::{fmt_num, Cell, Measure, Table};
use crate::wire::WireOptions;
use load::Table as TpchTable;
use runner::{RunResult, Side};
use std::fmt::Write as _;
use std::time::Duration;

/// The database both servers get; the bench drops and recreates it.
const DB: &str = "strata_bench_tpch";

/// The --compare server as a wire target.
fn compare_target(ctx: &Ctx) -> Result<Option<Target>, String> {
    let Some(spec) = &ctx.args.compare else {
        return Ok(None);
    };
    let (host, port) = spec
        .rsplit_once(':')
        .ok_or_else(|| format!("--compare {spec}: expected host:port, e.g. 127.0.0.1:3307"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port: u16 = port
        .parse()
        .map_err(|_| format!("--compare {spec}: '{port}' is not a port"))?;
    let opts = WireOptions {
        host: if host.is_empty() {
            "127.0.0.1".into()
        } else {
            host.to_string()
        },
        port,
        user: ctx
            .args
            .compare_user
            .clone()
            .unwrap_or_else(|| ctx.args.user.clone()),
        password: ctx
            .args
            .compare_password
            .clone()
            .or_else(|| ctx.args.password.clone()),
    };
    opts.check_loopback()?;
    if let Some(main) = &ctx.wire {
        if main.port == opts.port {
            return Err(format!(
                "--compare {spec} is the server under test itself (port {port})"
            ));
        }
    }
    Ok(Some(Target::Wire {
        opts,
        datadir: None,
    }))
}

/// A short name for a server's columns: Strata, MariaDB or MySQL, from VERSION().
fn label(target: &Target) -> Result<String, String> {
    let mut c = target.connect()?;
    let v = c
        .scalar("SELECT VERSION()")
        .map_err(|e| format!("SELECT VERSION() on {}: {e}", target.describe()))?
        .unwrap_or_default();
    Ok(if v.contains("Strata") {
        "Strata".into()
    } else if v.contains("MariaDB") {
        "MariaDB".into()
    } else {
        format!("MySQL {v}")
    })
}

/// One line of an error for a table cell: no line breaks, at most `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

/// A refusal as the result column shows it: `error <code> <message>`.
fn failure(r: &RunResult) -> Option<String> {
    match r {
        RunResult::Rows { .. } => None,
        RunResult::Error(e) => Some(match e.code {
            Some(c) => format!("error {c} {}", e.message),
            None => format!("error {}", e.message),
        }),
        RunResult::Timeout(s) => Some(format!("timeout after {} s", fmt_num(*s))),
        RunResult::Failed(e) => Some(format!("failed: {e}")),
    }
}

fn cell(r: &RunResult) -> Cell {
    match r {
        RunResult::Rows { ms, .. } => Cell::Measured(Measure::seconds(*ms, 1)),
        other => Cell::Missing(failure(other).unwrap_or_default()),
    }
}

/// The result column: `ok`, `mismatch: <first difference>`, or the error(s).
fn check(
    q: &queries::Query,
    a: &RunResult,
    b: Option<&RunResult>,
    a_name: &str,
    b_name: &str,
) -> (String, bool) {
    match (a, b) {
        (RunResult::Rows { rows, .. }, None) => (format!("ran, {} rows", rows.len()), true),
        (RunResult::Rows { rows: ra, .. }, Some(RunResult::Rows { rows: rb, .. })) => {
            match compare::compare(ra, rb, q.total_order, a_name, b_name) {
                Ok(()) => (format!("ok, {} rows", ra.len()), true),
                Err(diff) => (format!("mismatch: {diff}"), false),
            }
        }
        (RunResult::Rows { rows, .. }, Some(other)) => (
            format!(
                "ran, {} rows; not checked: {b_name} {}",
                rows.len(),
                failure(other).unwrap_or_default()
            ),
            false,
        ),
        (other, b) => {
            let mut s = failure(other).unwrap_or_default();
            if let Some(f) = b.and_then(failure) {
                let _ = write!(s, " ({b_name}: {f})");
            }
            (s, false)
        }
    }
}

pub fn run(ctx: &Ctx, target: &Target, out: &mut Out) -> Result<(), String> {
    let sf = ctx.args.scale_factor;
    let qs = queries::selected(ctx.args.queries.as_deref())?;
    let other = compare_target(ctx)?;
    let a_name = label(target)?;
    let b_name = match &other {
        Some(t) => label(t)?,
        None => "-".into(),
    };
    println!(
        "tpch: scale factor {sf}; A = {a_name} ({}){}\n",
        target.describe(),
        match &other {
            Some(t) => format!(", B = {b_name} ({})", t.describe()),
            None => ", no --compare server: results are not checked".into(),
        }
    );

    // Load both servers with the same generated rows.
    let expected = load::generated_rows(sf);
    let total: u64 = expected.iter().sum();
    let mut servers: Vec<(&str, &Target)> = vec![(&a_name, target)];
    if let Some(t) = &other {
        servers.push((&b_name, t));
    }
    let mut counts = Vec::new();
    let mut load_secs = Vec::new();
    for (name, t) in &servers {
        // --reuse-data: an earlier run's tables are kept when their counts are this
        // scale factor's (the rows are the generator's, the same for a scale factor).
        if ctx.args.reuse_data {
            let have = load::counts(t, DB);
            if have.iter().zip(&expected).all(|(h, e)| h.as_ref() == Ok(e)) {
                load_secs.push(format!("{name} reused"));
                counts.push(have);
                continue;
            }
        }
        let mut c = t.connect()?;
        crate::schema::recreate_db(c.as_mut(), DB)?;
        let (secs, note) = load::load(t, DB, name, sf, total)?;
        if let Some(n) = note {
            println!("note: {n}");
        }
        load_secs.push(format!("{name} {} s", fmt_num(secs)));
        counts.push(load::counts(t, DB));
    }
    print_counts(sf, &expected, &servers, &counts);
    println!("loaded in: {}\n", load_secs.join(", "));
    for (i, (name, _)) in servers.iter().enumerate() {
        for (j, t) in TpchTable::ALL.iter().enumerate() {
            match &counts[i][j] {
                Ok(n) if *n == expected[j] => {}
                Ok(n) => {
                    return Err(format!(
                        "{name}: {} holds {n} rows after loading, the generator made {}",
                        t.name(),
                        expected[j]
                    ))
                }
                Err(e) => return Err(format!("{name}: counting {}: {e}", t.name())),
            }
        }
    }

    // The queries, one at a time on each server.
    let timeout = Duration::from_secs_f64(ctx.args.query_timeout.max(0.001));
    let mut sa = Side::new(target, DB);
    let mut sb = other.as_ref().map(|t| Side::new(t, DB));
    let mut t = Table::new(
        "tpch",
        &format!("TPC-H at scale factor {sf}: {a_name} vs {b_name}"),
        "Query",
        "milliseconds per query",
        &a_name,
        &b_name,
    )
    .lower_is_better();
    let pb = crate::driver::bar(
        qs.len() as u64,
        "{msg} [{bar:30}] {pos}/{len} queries, {elapsed}",
        "TPC-H queries".into(),
    );
    for q in &qs {
        pb.set_message(format!("TPC-H {}", q.name()));
        let sql = q.sql(sf);
        let ra = sa.run(&sql, ctx.args.repeat, timeout);
        let rb = sb.as_mut().map(|s| s.run(&sql, ctx.args.repeat, timeout));
        let (result, good) = check(q, &ra, rb.as_ref(), &a_name, &b_name);
        if !good {
            out.unavailable
                .push(format!("{}: {}", q.name(), one_line(&result, 300)));
        }
        let b_cell = match &rb {
            Some(r) => cell(r),
            None => Cell::Missing("no --compare server".into()),
        };
        t.push_checked(q.name(), cell(&ra), b_cell, result);
        pb.inc(1);
    }
    pb.finish_and_clear();
    // Totals over the queries measured on both (or on A alone without a second server).
    let both: Vec<&crate::report::Row> = t
        .rows
        .iter()
        .filter(|r| r.a.value().is_some() && (other.is_none() || r.b.value().is_some()))
        .collect();
    let ok = t
        .rows
        .iter()
        .filter(|r| r.result.as_deref().is_some_and(|s| s.starts_with("ok")))
        .count();
    let ran = t.rows.iter().filter(|r| r.a.value().is_some()).count();
    let sum_a: f64 = both.iter().filter_map(|r| r.a.value()).sum();
    let sum_b: f64 = both.iter().filter_map(|r| r.b.value()).sum();
    let total_key = format!("total ({} queries)", both.len());
    let total_result = if other.is_some() {
        format!("{ran} of {} ran on {a_name}, {ok} match {b_name}", qs.len())
    } else {
        format!("{ran} of {} ran on {a_name}", qs.len())
    };
    let measured = |v: f64| {
        if both.is_empty() {
            Cell::Missing("no query measured".into())
        } else {
            Cell::Measured(Measure::seconds(v, both.len() as u64))
        }
    };
    let b_total = if other.is_some() {
        measured(sum_b)
    } else {
        Cell::Missing("no --compare server".into())
    };
    t.push_checked(total_key, measured(sum_a), b_total, total_result);
    t.notes.push(format!(
        "each query once unmeasured, then {} timed run(s), the median shown; ratio = A/B (below 1: A faster); totals over the queries measured on both",
        ctx.args.repeat
    ));
    let abandoned = sa.abandoned + sb.as_ref().map(|s| s.abandoned).unwrap_or(0);
    if abandoned > 0 {
        t.notes.push(format!(
            "{abandoned} timed-out statement(s) were abandoned; a server without KILL QUERY may still be running them, which slows what follows"
        ));
    }
    println!("{}", render(&t));
    if let Some(dir) = &out.svg_dir {
        let path = crate::svg::write_bars(dir, &t)?;
        println!("chart: {}\n", path.display());
    }
    out.tables.push(t);
    Ok(())
}

fn print_counts(
    sf: f64,
    expected: &[u64],
    servers: &[(&str, &Target)],
    counts: &[Vec<Result<u64, String>>],
) {
    println!("### TPC-H tables at scale factor {sf}");
    println!("rows: generated by tpchgen, then SELECT COUNT(*) on each server after loading");
    let mut lines = vec![{
        let mut h = vec!["Table".to_string(), "generated".into()];
        h.extend(servers.iter().map(|(n, _)| n.to_string()));
        h
    }];
    for (j, t) in TpchTable::ALL.iter().enumerate() {
        let mut l = vec![t.name().to_string(), expected[j].to_string()];
        for c in counts {
            l.push(match &c[j] {
                Ok(n) => n.to_string(),
                Err(_) => "error".into(),
            });
        }
        lines.push(l);
    }
    print!("{}", crate::report::grid(&lines, &[]));
    println!();
}

/// The query table: `Query | A ms | B ms | ratio | result`, errors cut to one line.
fn render(t: &Table) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### {}", t.title);
    let _ = writeln!(
        out,
        "A = {}, B = {}; {} (lower is better); ratio = A/B",
        t.a_name, t.b_name, t.unit
    );
    let ms = |c: &Cell| match c {
        Cell::Measured(m) => format!("{:.1}", m.value),
        Cell::Missing(_) => "n/a".into(),
    };
    let mut lines = vec![vec![
        t.key_name.clone(),
        format!("{} ms", t.a_name.to_lowercase()),
        format!("{} ms", t.b_name.to_lowercase()),
        "ratio".into(),
        "result".into(),
    ]];
    for r in &t.rows {
        let ratio = match (r.a.value(), r.b.value()) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
            _ => "-".into(),
        };
        lines.push(vec![
            r.key.clone(),
            ms(&r.a),
            ms(&r.b),
            ratio,
            one_line(r.result.as_deref().unwrap_or(""), 160),
        ]);
    }
    out.push_str(&crate::report::grid(&lines, &[4]));
    for n in &t.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_column() {
        let q = &queries::QUERIES[0];
        let rows = |v: &[&str]| RunResult::Rows {
            ms: 1.0,
            rows: vec![v.iter().map(|s| s.to_string()).collect()],
        };
        let (s, good) = check(q, &rows(&["1.50"]), Some(&rows(&["1.5"])), "A", "B");
        assert!(good && s == "ok, 1 rows", "{s}");
        let (s, good) = check(q, &rows(&["1"]), Some(&rows(&["2"])), "A", "B");
        assert!(
            !good && s.starts_with("mismatch: row 1 of 1: A (1) vs B (2)"),
            "{s}"
        );
        let err = RunResult::Error(crate::client::ClientError {
            code: Some(1235),
            message: "no WITH".into(),
        });
        let (s, good) = check(q, &err, Some(&rows(&["2"])), "A", "B");
        assert!(!good && s == "error 1235 no WITH", "{s}");
        let (s, _) = check(q, &rows(&["2"]), None, "A", "B");
        assert_eq!(s, "ran, 1 rows");
    }

    #[test]
    fn table_text() {
        let mut t = Table::new(
            "tpch",
            "T",
            "Query",
            "milliseconds per query",
            "Strata",
            "MariaDB",
        );
        t.push_checked(
            "Q1",
            Cell::Measured(Measure::seconds(20.0, 1)),
            Cell::Measured(Measure::seconds(10.0, 1)),
            "ok, 4 rows".into(),
        );
        let s = render(&t);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[2],
            "| Query | strata ms | mariadb ms | ratio | result     |"
        );
        assert_eq!(
            lines[4],
            "| Q1    |      20.0 |       10.0 |  2.00 | ok, 4 rows |"
        );
    }
}
