//! `strata bench join` (seed 001, "Join performance of MyISAM and Innodb"): the seed's
//! table t1 of 20,000 rows whose id (primary key), i (indexed integer) and c (indexed
//! CHAR(15)) hold the same numbers, and the self-join
//! `SELECT count(t1.pad), count(t2.pad) FROM t1, t1 t2 WHERE t1.X=t2.X` for X = id, i,
//! c; seconds per query, A = MyISAM (heap), B = InnoDB (btree). Every result is
//! checked: both counts must equal the row count.

use super::{Ctx, Out};
use crate::client::{Client, Target};
use crate::driver::{self, connect_db};
use crate::report::{Cell, Table};
use crate::schema::{self, Kind, Spec};
use crate::seeds;

pub fn run(ctx: &Ctx, target: &Target, out: &mut Out) -> Result<(), String> {
    let engines = ctx.engines(["MyISAM", "InnoDB"])?;
    let rows = ctx.rows(20_000, 100);
    println!(
        "join: table t1 of {rows} rows (id = i = c), engines {}\n",
        engines.join(" vs ")
    );
    for e in &engines {
        let db = Ctx::db(e);
        let mut c = target.connect()?;
        schema::recreate_db(c.as_mut(), &db)?;
        schema::load(
            target,
            &db,
            e,
            &[Spec {
                name: "t1".into(),
                kind: Kind::JoinT1,
                rows,
            }],
            ctx.args.seed,
        )?;
    }
    let mut t = Table::new(
        "join",
        &format!("self-join of t1 ({rows} rows) on id, i and c"),
        "Join on",
        "seconds per query",
        &engines[0],
        engines.get(1).map(String::as_str).unwrap_or("-"),
    )
    .lower_is_better()
    .with_seed(Some(seeds::JOIN));
    let expected = rows.to_string();
    for col in ["id", "i", "c"] {
        let sql =
            format!("SELECT count(t1.pad), count(t2.pad) FROM t1, t1 t2 WHERE t1.{col}=t2.{col}");
        let mut cells = Vec::new();
        for e in &engines {
            let result = connect_db(target, &Ctx::db(e)).and_then(|mut c| {
                driver::repeat(
                    c.as_mut(),
                    ctx.time(),
                    3,
                    &format!("join on {col}, {e}"),
                    &mut |c: &mut dyn Client| {
                        let r = c.rows(&sql).map_err(|e| e.to_string())?;
                        let got: Vec<&str> = r
                            .first()
                            .map(|row| row.iter().map(String::as_str).collect())
                            .unwrap_or_default();
                        if got != [expected.as_str(), expected.as_str()] {
                            return Err(format!(
                                "wrong result: expected {expected}, {expected}, got {got:?}"
                            ));
                        }
                        Ok(())
                    },
                )
            });
            cells.push(super::cell(result));
        }
        let mut it = cells.into_iter();
        let a = it.next().unwrap_or(Cell::Missing("not run".into()));
        let b = it
            .next()
            .unwrap_or(Cell::Missing("only one --engine given".into()));
        t.push(col, a, b);
    }
    t.notes.push(format!(
        "one client; each query runs once unmeasured, then repeatedly for {} s (at least 3 times); the mean is shown",
        crate::report::fmt_num(ctx.time().as_secs_f64())
    ));
    out.table(t)
}
