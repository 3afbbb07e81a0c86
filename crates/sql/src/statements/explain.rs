//! EXPLAIN for SELECT, in MySQL's (MariaDB's) tabular form: one row per table in join
//! order with the access type the planner chose (`const`, `eq_ref`, `ref`, `range`,
//! `index`, `ALL`), the candidate and chosen keys, the key length in MySQL's bytes, what
//! the key is compared with, an estimate of rows read, and Extra notes.

use crate::catalog::stats::count_range;
use crate::context::{ExecCtx, Outcome};
use crate::exec::block::key_ranges;
use crate::expr::{EvalCtx, Expr};
use crate::optimizer::join_order::{access_rows, table_stats};
use crate::plan::block::{Access, SelectPlan};
use strata_types::{
    ColumnDef, ColumnMeta, DataType, EndInfo, Error, FieldType, QueryOutput, Result, Value,
};

/// Bytes a key part takes in MySQL's key_len accounting (utf8mb4 strings).
fn key_part_len(c: &ColumnDef) -> u64 {
    let base = match c.data_type {
        DataType::TinyInt { .. } => 1,
        DataType::SmallInt { .. } => 2,
        DataType::MediumInt { .. } => 3,
        DataType::Int { .. } | DataType::Float => 4,
        DataType::BigInt { .. } | DataType::Double => 8,
        DataType::Decimal { precision, scale } => {
            let digits = |d: u64| (d / 9) * 4 + [0, 1, 1, 2, 2, 3, 3, 4, 4, 4][(d % 9) as usize];
            digits((precision - scale) as u64) + digits(scale as u64)
        }
        DataType::Char(n) => 4 * n as u64,
        DataType::Binary(n) => n as u64,
        DataType::VarChar(n) => 4 * n as u64 + 2,
        DataType::VarBinary(n) => n as u64 + 2,
        DataType::Text(_) | DataType::Blob(_) => 3072 + 2,
        DataType::Date => 3,
        DataType::DateTime => 5,
        DataType::Timestamp => 4,
    };
    base + c.nullable as u64
}

/// The columns (table positions) of scope table `ti` that the query reads anywhere.
fn columns_used(plan: &SelectPlan, ti: usize) -> Vec<usize> {
    let t = &plan.scope.tables[ti];
    let range = t.offset..t.offset + t.def.columns.len();
    let mut used = Vec::new();
    let mut note = |e: &Expr| {
        e.walk(&mut |x| {
            if let Expr::Column(p) = x {
                if range.contains(p) && !used.contains(&(p - t.offset)) {
                    used.push(p - t.offset);
                }
            }
        })
    };
    for level in &plan.levels {
        level.filter.iter().chain(&level.on).for_each(&mut note);
        match &level.access {
            Access::Index {
                eq, lower, upper, ..
            } => {
                eq.iter().for_each(&mut note);
                lower.iter().chain(upper).for_each(|b| note(&b.0));
            }
            Access::IndexIn { values, .. } => values.iter().for_each(&mut note),
            Access::JoinBuffer { keys } => keys.iter().for_each(|k| note(&k.probe)),
            Access::Scan => {}
        }
    }
    match &plan.group {
        // After grouping the projection reads the grouped row, not the tables.
        Some(g) => {
            g.groups.iter().for_each(|(e, _)| note(e));
            g.aggs
                .iter()
                .filter_map(|a| a.arg.as_ref())
                .for_each(&mut note);
        }
        None => plan.projection.iter().for_each(&mut note),
    }
    used
}

/// Index entries EXPLAIN counts at most for one range estimate.
const RANGE_COUNT_CAP: u64 = 100_000;

/// Rows level `lvl`'s index ranges hold, counted when its bounds are constants.
fn range_count(plan: &SelectPlan, lvl: usize, cx: &ExecCtx) -> Option<u64> {
    let ecx = EvalCtx::new(&[], cx.env);
    let row = vec![Value::Null; plan.scope.width()];
    let (index, ranges, _) = key_ranges(plan, lvl, &row, &ecx).ok()??;
    let table = &plan.scope.tables[plan.levels[lvl].table].table;
    let _lock = cx
        .locked_tables
        .is_none()
        .then(|| table.lock(strata_engine::LockMode::Read));
    count_range(table, cx.txn, index, &ranges, RANGE_COUNT_CAP).ok()
}

pub fn explain_select(
    plan: &SelectPlan,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    if plan.windows.is_some() {
        // MySQL shows the windowing step in Extra; not done here.
        return Err(Error::NotSupported(
            "EXPLAIN of a query with window functions".into(),
        ));
    }
    let names = [
        "id",
        "select_type",
        "table",
        "type",
        "possible_keys",
        "key",
        "key_len",
        "ref",
        "rows",
        "Extra",
    ];
    let cols: Vec<ColumnMeta> = names
        .iter()
        .map(|n| {
            ColumnMeta::computed(
                n,
                if matches!(*n, "id" | "rows") {
                    FieldType::LongLong
                } else {
                    FieldType::VarString
                },
            )
        })
        .collect();
    out.columns(&cols)?;
    let n = plan.levels.len();
    if n == 0 {
        let extra = if plan.const_filter.is_empty() {
            "No tables used"
        } else {
            "Impossible WHERE"
        };
        let row = vec![
            Value::Int(1),
            Value::str("SIMPLE"),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::str(extra),
        ];
        out.row(&row)?;
        out.end(&EndInfo::default())?;
        return Ok(Outcome {
            ok: None,
            rows_sent: 1,
            generated_id: None,
        });
    }
    // Tables read as one row known before the join runs (MySQL's "const" tables): a
    // unique key equal to constants or to columns of other const tables.
    let mut const_tables: Vec<usize> = Vec::new();
    for (i, level) in plan.levels.iter().enumerate() {
        let t = &plan.scope.tables[level.table];
        let def = &t.def;
        let stats = table_stats(cx, &t.table).unwrap_or_default();
        let table_rows = stats.rows.max(1);
        let estimate = access_rows(&level.access, def, &stats).round().max(1.0) as u64;
        let col_name = |pos: usize| {
            let (st, c) = plan.scope.column(pos);
            format!("{}.{}.{}", st.db, st.alias, c.name)
        };
        let (kind, key, key_len, refs, rows) = match &level.access {
            Access::Scan | Access::JoinBuffer { .. } => ("ALL", None, None, None, table_rows),
            Access::IndexIn { index, .. } => {
                let ix = &def.indexes[*index];
                (
                    "range",
                    Some(ix.name.clone()),
                    Some(key_part_len(&def.columns[ix.columns[0]])),
                    None,
                    range_count(plan, i, cx).unwrap_or(estimate).max(1),
                )
            }
            Access::Index {
                index,
                eq,
                lower,
                upper,
                ..
            } => {
                let ix = &def.indexes[*index];
                let mut len: u64 = ix
                    .columns
                    .iter()
                    .take(eq.len())
                    .map(|&c| key_part_len(&def.columns[c]))
                    .sum();
                let ranged = lower.is_some() || upper.is_some();
                if ranged {
                    len += key_part_len(&def.columns[ix.columns[eq.len()]]);
                }
                let all_eq = eq.len() == ix.columns.len() && ix.unique;
                let consts = eq.iter().all(|e| {
                    e.is_row_independent()
                        || matches!(e, Expr::Column(p) if const_tables.contains(&plan.scope.table_of(*p)))
                });
                let refs: Vec<String> = eq
                    .iter()
                    .map(|e| match e {
                        Expr::Column(p) => col_name(*p),
                        e if e.is_row_independent() => "const".into(),
                        _ => "func".into(),
                    })
                    .collect();
                if ranged {
                    // A range with constant bounds is counted (up to a cap), as the
                    // index dives of MySQL's records_in_range; otherwise guessed.
                    let counted = if eq
                        .iter()
                        .chain(lower.iter().map(|b| &b.0))
                        .chain(upper.iter().map(|b| &b.0))
                        .all(|e| e.is_row_independent())
                    {
                        range_count(plan, i, cx)
                    } else {
                        None
                    };
                    (
                        "range",
                        Some(ix.name.clone()),
                        Some(len),
                        None,
                        counted.unwrap_or(estimate).max(1),
                    )
                } else if eq.is_empty() {
                    let full: u64 = ix
                        .columns
                        .iter()
                        .map(|&c| key_part_len(&def.columns[c]))
                        .sum();
                    ("index", Some(ix.name.clone()), Some(full), None, table_rows)
                } else if all_eq && consts {
                    const_tables.push(level.table);
                    (
                        "const",
                        Some(ix.name.clone()),
                        Some(len),
                        Some(vec!["const"; refs.len()].join(",")),
                        1,
                    )
                } else if all_eq {
                    (
                        "eq_ref",
                        Some(ix.name.clone()),
                        Some(len),
                        Some(refs.join(",")),
                        1,
                    )
                } else {
                    (
                        "ref",
                        Some(ix.name.clone()),
                        Some(len),
                        Some(refs.join(",")),
                        estimate,
                    )
                }
            }
        };
        let possible = if level.possible.is_empty() {
            Value::Null
        } else {
            Value::str(
                &level
                    .possible
                    .iter()
                    .map(|&p| def.indexes[p].name.clone())
                    .collect::<Vec<_>>()
                    .join(","),
            )
        };
        let mut extra = Vec::new();
        // An outer join's ON conditions are checked on the row like WHERE's.
        let checks = level.filter.len() + level.on.len();
        let enforced_by_key = matches!(kind, "const" | "eq_ref" | "ref")
            && checks
                <= match &level.access {
                    Access::Index { eq, .. } => eq.len(),
                    _ => 0,
                };
        // A key compared with an expression ("func") is rechecked on the row.
        let func_ref = matches!(&level.access, Access::Index { eq, .. }
            if eq.iter().any(|e| !matches!(e, Expr::Column(_)) && !e.is_row_independent()));
        if (checks > 0 && !enforced_by_key) || func_ref {
            extra.push("Using where");
        }
        // An index-only read: only possible here through a clustered primary key (the
        // record is the index entry) when every column the query reads of this table is
        // a key column, MySQL's rule for "Using index".
        if let Access::Index { index, .. } = &level.access {
            let ix = &def.indexes[*index];
            if ix.primary && t.table.clustered_primary() {
                let used = columns_used(plan, level.table);
                if used.iter().all(|c| ix.columns.contains(c)) {
                    extra.push("Using index");
                }
            }
        }
        if let Access::JoinBuffer { .. } = level.access {
            extra.push("Using join buffer (hash join)");
        }
        if i == 0 && (plan.group.as_ref().is_some_and(|g| !g.groups.is_empty()) || plan.distinct) {
            extra.push("Using temporary");
        }
        if i == 0 && !plan.order.is_empty() && !plan.order_satisfied {
            extra.push("Using filesort");
        }
        let row = vec![
            Value::Int(1),
            Value::str("SIMPLE"),
            Value::str(&t.alias),
            Value::str(kind),
            possible,
            key.map(|k| Value::str(&k)).unwrap_or(Value::Null),
            key_len
                .map(|l| Value::str(&l.to_string()))
                .unwrap_or(Value::Null),
            refs.map(|r| Value::str(&r)).unwrap_or(Value::Null),
            Value::UInt(rows),
            Value::str(&extra.join("; ")),
        ];
        out.row(&row)?;
    }
    out.end(&EndInfo::default())?;
    Ok(Outcome {
        ok: None,
        rows_sent: n as u64,
        generated_id: None,
    })
}
