//! `strata bench latch` (seed 003, "Make MySQL faster in one hour"): seconds for 1, 2,
//! 4, 8 and 16 concurrent users to each complete one primary-key/foreign-key join of
//! two large tables, and to each complete a sequence of single-row INSERTs into a
//! table of their own, once per latch variant: A spins before waiting
//! (`innodb_sync_spin_loops` at the server's default, or 30), B waits at once (0), as
//! the seed's InnoDB mutex against a plain OS mutex. If the server does not accept the
//! variable, only its one latch is measured and the scenario says so.
//!
//! The redo log is written at commit but fsynced once a second
//! (`innodb_flush_log_at_trx_commit=2`) for the run, so the insert job measures latches
//! rather than the disk's fsync rate; the setting is restored afterwards.

use super::{cell, get_global, set_global, Ctx, Out};
use crate::client::{Client, Target};
use crate::driver;
use crate::report::{Cell, Table};
use crate::schema::{self, Kind, Spec};
use crate::seeds;
use crate::workload::{c_value, pad_value};
use rand::{Rng, SeedableRng};

const VAR: &str = "innodb_sync_spin_loops";

pub fn run(ctx: &Ctx, target: &Target, out: &mut Out) -> Result<(), String> {
    let engine = ctx
        .engines(["InnoDB", "InnoDB"])?
        .first()
        .cloned()
        .unwrap_or_else(|| "InnoDB".into());
    let db = Ctx::db(&engine);
    let users = ctx.threads(&[1, 2, 4, 8, 16]);
    let rows = ctx.rows(2_000_000, 1000);
    let inserts = ctx.scaled(50_000, 50);

    let mut admin = target.connect()?;
    let original_spin = get_global(admin.as_mut(), VAR);
    let (spin, both) = match &original_spin {
        Some(v) => {
            let spin = match v.parse::<u64>() {
                Ok(0) | Err(_) => "30".to_string(),
                Ok(n) => n.to_string(),
            };
            match set_global(admin.as_mut(), VAR, "0") {
                Ok(()) => (spin, true),
                Err(e) => {
                    out.unavailable(format!(
                        "column B (wait at once): {e}; only the server's latch ({VAR}={v}) is measured"
                    ));
                    (v.clone(), false)
                }
            }
        }
        None => {
            let e = set_global(admin.as_mut(), VAR, "0")
                .err()
                .unwrap_or_else(|| format!("SELECT @@{VAR} failed"));
            out.unavailable(format!(
                "column B (wait at once): {e}: this server offers no latch variants; column A is its only latch"
            ));
            ("default".to_string(), false)
        }
    };
    let original_flush = get_global(admin.as_mut(), "innodb_flush_log_at_trx_commit");
    if original_flush.is_some() {
        set_global(admin.as_mut(), "innodb_flush_log_at_trx_commit", "2")?;
    }

    println!(
        "latch: {engine} tables lt_parent and lt_child of {rows} rows each, {inserts} inserts per user, users {users:?}\n"
    );
    schema::recreate_db(admin.as_mut(), &db)?;
    schema::load(
        target,
        &db,
        &engine,
        &[
            Spec {
                name: "lt_parent".into(),
                kind: Kind::Sbtest,
                rows,
            },
            Spec {
                name: "lt_child".into(),
                kind: Kind::Child,
                rows,
            },
        ],
        ctx.args.seed,
    )?;
    admin
        .exec(&format!("USE {db}"))
        .map_err(|e| format!("USE {db}: {e}"))?;

    let a_name = format!("spin then wait ({VAR}={spin})");
    let b_name = format!("wait at once ({VAR}=0)");
    let mut joins = Table::new(
        "latch-join",
        &format!("concurrent joins, {engine}, {rows} x {rows} rows"),
        "Users",
        "seconds until every user's join completed",
        &a_name,
        &b_name,
    )
    .lower_is_better()
    .with_seed(Some(seeds::LATCH_JOIN));
    let mut ins = Table::new(
        "latch-insert",
        &format!(
            "concurrent inserts, {engine}, {inserts} single-row INSERTs per user, own table each"
        ),
        "Users",
        "seconds until every user's inserts completed",
        &a_name,
        &b_name,
    )
    .lower_is_better()
    .with_seed(Some(seeds::LATCH_INSERT));

    let expected = rows.to_string();
    let join_job = |_: usize, c: &mut dyn Client| {
        let got =
            c.scalar("SELECT COUNT(*) FROM lt_child, lt_parent WHERE lt_parent.id = lt_child.pid")?;
        if got.as_deref() != Some(expected.as_str()) {
            return Err(crate::client::ClientError {
                code: None,
                message: format!("the join counted {got:?} rows, expected {expected}"),
            });
        }
        Ok(())
    };
    let seed = ctx.args.seed;
    let insert_job = |user: usize, c: &mut dyn Client| {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed.wrapping_add(user as u64));
        for _ in 0..inserts {
            let (k, cv, pad) = (
                rng.gen_range(1..=1_000_000),
                c_value(&mut rng),
                pad_value(&mut rng),
            );
            c.exec(&format!(
                "INSERT INTO lt_ins_{} (k, c, pad) VALUES ({k}, '{cv}', '{pad}')",
                user + 1
            ))?;
        }
        Ok(())
    };

    let variants: Vec<Option<String>> = if both {
        vec![Some(spin.clone()), Some("0".into())]
    } else {
        vec![None]
    };
    for &n in &users {
        let mut jcells = Vec::new();
        let mut icells = Vec::new();
        for v in &variants {
            if let Some(v) = v {
                if let Err(e) = set_global(admin.as_mut(), VAR, v) {
                    jcells.push(Cell::Missing(e.clone()));
                    icells.push(Cell::Missing(e));
                    continue;
                }
            }
            let label = format!("{VAR}={}", v.as_deref().unwrap_or(&spin));
            jcells.push(cell(driver::fixed_work(
                target,
                &db,
                n,
                &format!("join {label}"),
                &join_job,
            )));
            // Fresh, empty insert tables for every cell.
            let fresh: Result<(), String> = (1..=n).try_for_each(|u| {
                let name = format!("lt_ins_{u}");
                admin
                    .exec(&format!("DROP TABLE IF EXISTS {name}"))
                    .and_then(|_| {
                        admin.exec(&format!(
                            "CREATE TABLE {name} (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k)) ENGINE={engine}"
                        ))
                    })
                    .map(|_| ())
                    .map_err(|e| format!("creating {name}: {e}"))
            });
            icells.push(match fresh {
                Ok(()) => cell(driver::fixed_work(
                    target,
                    &db,
                    n,
                    &format!("insert {label}"),
                    &insert_job,
                )),
                Err(e) => Cell::Missing(e),
            });
        }
        let missing = || Cell::Missing(format!("{VAR}=0 cannot be set on this server"));
        let mut j = jcells.into_iter();
        let mut i = icells.into_iter();
        joins.push(
            n.to_string(),
            j.next().unwrap_or_else(missing),
            j.next().unwrap_or_else(missing),
        );
        ins.push(
            n.to_string(),
            i.next().unwrap_or_else(missing),
            i.next().unwrap_or_else(missing),
        );
    }
    // Put the server back as it was.
    if both {
        if let Some(v) = &original_spin {
            set_global(admin.as_mut(), VAR, v)?;
        }
    }
    if let Some(v) = &original_flush {
        set_global(admin.as_mut(), "innodb_flush_log_at_trx_commit", v)?;
    }
    for t in [&mut joins, &mut ins] {
        t.notes.push(
            "innodb_flush_log_at_trx_commit=2 during the run, so commits do not wait for fsync"
                .into(),
        );
    }
    out.table(joins)?;
    out.table(ins)
}
