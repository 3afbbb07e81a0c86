//! `strata bench groupcommit` (seed 001, "Group commit and XA"): sysbench update_key
//! (`UPDATE sbtest SET k=k+1 WHERE id=?`, autocommit) on InnoDB at 1, 4, 16, 64 and 256
//! threads. The first table compares the redo flush policy,
//! `innodb_flush_log_at_trx_commit` 1 (fsync shared by concurrent commits) against 2
//! (write at commit, fsync once a second). The second is the seed's experiment, the
//! binary log off against on (`sync_binlog=1`, `innodb_flush_log_at_trx_commit=1`), with
//! the fsyncs per commit of each cell beside it.
//!
//! In-process, both halves run: the binary log is a startup setting, so the binlog-on
//! column runs on a second in-process server opened with the log on
//! (`inprocess::install_binlog`). Over the wire only the state the server runs with is
//! measured. `--compare host:port[,host:port]` adds the same table for other servers
//! (MariaDB started with and without `--log-bin`), each filling the column its
//! `@@log_bin` says, in the same run.

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
    let threads = ctx.threads(&[1, 4, 16, 64, 256]);
    let rows = ctx.rows(100_000, 1000);
    let shape = Shape {
        tables: ctx.args.tables,
        table_size: rows,
        range_size: 100.min(rows),
        point_selects: 10,
        batch_rows: rows,
    };
    let mut admin = target.connect()?;
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

    out.table(flush)?;

    // The seed's comparison. Binary log off: this server (when it runs without one);
    // on: a second in-process server with the log, or this one if it runs with it.
    let this_on = match admin.scalar("SELECT @@GLOBAL.log_bin") {
        Ok(Some(v)) => matches!(v.to_ascii_uppercase().as_str(), "ON" | "1"),
        _ => false,
    };
    let second = if target.is_in_process() && !this_on {
        let t = ctx.target_under(&std::env::temp_dir())?;
        if let crate::client::Target::InProcess { server, .. } = &t {
            crate::inprocess::install_binlog(server, 1)?;
        }
        load_sbtest(ctx, &t, &db, &engine, shape.tables, rows)?;
        Some(t)
    } else {
        None
    };
    let (off_target, on_target) = match (&second, this_on) {
        (Some(t), _) => (Some(target), Some(t)),
        (None, true) => (None, Some(target)),
        (None, false) => (Some(target), None),
    };
    let mut sides = vec![(
        "Strata".to_string(),
        off_target,
        on_target,
        Some(seeds::GROUPCOMMIT_BINLOG),
    )];
    let compare = compare_targets(ctx)?;
    if !compare.is_empty() {
        let mut off = None;
        let mut on = None;
        for t in &compare {
            let mut c = t.connect()?;
            let v = c
                .scalar("SELECT @@GLOBAL.log_bin")
                .map_err(|e| format!("{}: SELECT @@log_bin: {e}", t.describe()))?
                .unwrap_or_default();
            let is_on = matches!(v.to_ascii_uppercase().as_str(), "ON" | "1");
            let name = c
                .scalar("SELECT VERSION()")
                .ok()
                .flatten()
                .unwrap_or_default();
            if is_on {
                on = Some((t, name));
            } else {
                off = Some((t, name));
            }
            load_sbtest(ctx, t, &db, &engine, shape.tables, rows)?;
        }
        let name = on
            .as_ref()
            .or(off.as_ref())
            .map(|(_, n)| n.clone())
            .unwrap_or_default();
        sides.push((
            format!("compare {name}"),
            off.map(|(t, _)| t),
            on.map(|(t, _)| t),
            None,
        ));
    }
    for (name, off, on) in sides.iter().map(|(n, a, b, _)| (n, a, b)) {
        if off.is_none() {
            out.unavailable(format!(
                "{name}, binary log off: no server without the binary log was given"
            ));
        }
        if on.is_none() {
            out.unavailable(format!(
                "{name}, binary log on: no server with the binary log was given (start one with --log-bin and pass it to --compare)"
            ));
        }
    }
    for (name, off, on, seed) in sides {
        let mut tps = Table::new(
            &format!(
                "groupcommit-binlog{}",
                if seed.is_some() { "" } else { "-compare" }
            ),
            &format!(
                "{name}: update_key, {engine}, {FLUSH}=1, sync_binlog=1: binary log off vs on"
            ),
            "Threads",
            "transactions/s",
            "binary log off",
            "binary log on",
        )
        .with_seed(seed);
        let mut fsyncs = Table::new(
            &format!(
                "groupcommit-binlog-fsyncs{}",
                if seed.is_some() { "" } else { "-compare" }
            ),
            &format!("{name}: fsyncs (redo + binary log) per commit in the cells above"),
            "Threads",
            "fsyncs per commit",
            "binary log off",
            "binary log on",
        )
        .lower_is_better();
        for &n in &threads {
            let one = |t: Option<&crate::client::Target>, label: &str| -> (Cell, Cell) {
                let Some(t) = t else {
                    let m = Cell::Missing(format!("no server with the binary log {label}"));
                    return (m.clone(), m);
                };
                let prepared = (|| -> Result<Box<dyn crate::client::Client>, String> {
                    let mut c = t.connect()?;
                    set_global(c.as_mut(), FLUSH, "1")?;
                    if label == "on" {
                        set_global(c.as_mut(), "sync_binlog", "1").or_else(|e| {
                            // Strata's sync_binlog is a startup setting (1 here).
                            match c.scalar("SELECT @@GLOBAL.sync_binlog") {
                                Ok(Some(v)) if v == "1" => Ok(()),
                                _ => Err(e),
                            }
                        })?;
                    }
                    Ok(c)
                })();
                let mut c = match prepared {
                    Ok(c) => c,
                    Err(e) => return (Cell::Missing(e.clone()), Cell::Missing(e)),
                };
                let before = counters(c.as_mut());
                let m = driver::timed(
                    t,
                    &db,
                    n,
                    ctx.warmup(),
                    ctx.time(),
                    &format!("{name} update_key binary log {label}"),
                    ctx.args.seed,
                    &event,
                );
                let after = counters(c.as_mut());
                let per_commit = match (before, after) {
                    (Ok(b), Ok(a)) if a.1 > b.1 => Cell::Measured(crate::report::Measure::seconds(
                        (a.0 - b.0) as f64 / (a.1 - b.1) as f64,
                        a.1 - b.1,
                    )),
                    (Err(e), _) | (_, Err(e)) => Cell::Missing(e),
                    _ => Cell::Missing("no commits counted".into()),
                };
                (cell(m), per_commit)
            };
            let (a, fa) = one(off, "off");
            let (b, fb) = one(on, "on");
            tps.push(n.to_string(), a, b);
            fsyncs.push(n.to_string(), fa, fb);
        }
        if seed.is_some() {
            tps.notes.push(format!(
                "the seed's third column, --log-bin with innodb_support_xa=0: {}",
                seeds::GROUPCOMMIT_BINLOG_NO_XA
                    .iter()
                    .map(|(t, v)| format!("{t} thread(s) {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        fsyncs.notes.push(
            "Innodb_os_log_fsyncs (MariaDB 10.11: Innodb_data_fsyncs, data files included) plus \
             the binary log's fsyncs (Strata: Strata_binlog_fsyncs; MariaDB: \
             Binlog_group_commits, one fsync per group under sync_binlog=1), over \
             Com_update (one autocommitted UPDATE per transaction), warm-up included"
                .into(),
        );
        out.table(tps)?;
        out.table(fsyncs)?;
    }
    Ok(())
}

/// (redo + binary log fsyncs, UPDATE statements) from SHOW GLOBAL STATUS.
fn counters(c: &mut dyn crate::client::Client) -> Result<(u64, u64), String> {
    let rows = c
        .rows("SHOW GLOBAL STATUS")
        .map_err(|e| format!("SHOW GLOBAL STATUS: {e}"))?;
    let find = |name: &str| {
        rows.iter()
            .find(|r| r.first().is_some_and(|n| n.eq_ignore_ascii_case(name)))
            .and_then(|r| r.get(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let get = |name: &str| find(name).unwrap_or(0);
    // MariaDB 10.8+ has no Innodb_os_log_fsyncs: its redo fsyncs are counted in
    // Innodb_data_fsyncs (with the data files').
    let redo = find("Innodb_os_log_fsyncs").unwrap_or_else(|| get("Innodb_data_fsyncs"));
    let fsyncs = redo + get("Strata_binlog_fsyncs") + get("Binlog_group_commits");
    Ok((fsyncs, get("Com_update")))
}

/// The `--compare` servers (comma-separated host:port, loopback only) as wire targets.
fn compare_targets(ctx: &Ctx) -> Result<Vec<crate::client::Target>, String> {
    let Some(list) = &ctx.args.compare else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for spec in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (host, port) = spec
            .rsplit_once(':')
            .ok_or_else(|| format!("--compare {spec}: expected host:port"))?;
        let port: u16 = port
            .parse()
            .map_err(|_| format!("--compare {spec}: '{port}' is not a port"))?;
        let opts = crate::wire::WireOptions {
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
        out.push(crate::client::Target::Wire {
            opts,
            datadir: None,
        });
    }
    Ok(out)
}
