//! Which columns of each table a query block reads, so the engine decodes only those
//! (`Table::scan_columns`): TPC-H Q6 reads 4 of lineitem's 16 columns, and building the
//! other 12 values per row (strings copied, decimals widened) was most of its time.
//!
//! A column is needed when any expression of the block that sees the joined row names
//! it: the levels' conditions and access-path keys, the hash join keys (the inner
//! table's key column is read when its buffer is built), the select list, grouping and
//! aggregate arguments, HAVING, and what correlated subqueries and LATERAL derived
//! tables read of the row (their correlation lists). Expressions over another row
//! layout (HAVING and a grouped select list read the grouped row) can only mark more
//! columns than needed, never fewer, and more is always correct. A block with window
//! functions reads whole rows (their expressions are placed after binding).

use crate::expr::Expr;
use crate::plan::block::{Access, SelectPlan};

/// Sets each level's [`crate::plan::block::Level::columns`]: the columns of its table
/// the block reads, or None (every column) when the block has window functions or
/// reads them all anyway.
pub(crate) fn mark_read_columns(plan: &mut SelectPlan) {
    let Some(used) = needed_columns(plan) else {
        for level in &mut plan.levels {
            level.columns = None;
        }
        return;
    };
    for level in &mut plan.levels {
        let t = &plan.scope.tables[level.table];
        let mine = &used[t.offset..t.offset + t.def.columns.len()];
        level.columns = (!mine.iter().all(|&u| u)).then(|| mine.to_vec());
    }
}

/// The columns of the block's scope (by scope position) it reads; None when it has
/// window functions (every column). Also used before the join order is chosen, to
/// cost index-only reads (`Table::covers`).
pub(crate) fn needed_columns(plan: &SelectPlan) -> Option<Vec<bool>> {
    if plan.windows.is_some() {
        return None;
    }
    let width = plan.scope.width();
    let mut used = vec![false; width];
    {
        let mut mark = |e: &Expr| {
            e.walk(&mut |x| {
                if let Expr::Column(p) = x {
                    if let Some(u) = used.get_mut(*p) {
                        *u = true;
                    }
                }
            })
        };
        for level in &plan.levels {
            level.filter.iter().chain(&level.on).for_each(&mut mark);
            match &level.access {
                Access::Scan | Access::IndexInSubquery { .. } => {}
                Access::Index {
                    eq, lower, upper, ..
                } => {
                    eq.iter().for_each(&mut mark);
                    lower.iter().chain(upper).for_each(|(e, _)| mark(e));
                }
                Access::IndexIn { values, .. } => values.iter().for_each(&mut mark),
                Access::JoinBuffer { keys } => keys.iter().for_each(|k| mark(&k.probe)),
            }
        }
        plan.const_filter.iter().for_each(&mut mark);
        plan.projection.iter().for_each(&mut mark);
        if let Some(g) = &plan.group {
            g.groups.iter().for_each(|(e, _)| mark(e));
            g.having.iter().for_each(&mut mark);
            for a in &g.aggs {
                a.arg.iter().for_each(&mut mark);
                a.more_args.iter().for_each(|(e, _, _)| mark(e));
                a.order.iter().for_each(|(e, _, _)| mark(e));
            }
        }
        for t in &plan.scope.tables {
            if let Some(l) = &t.lateral {
                l.correlated.iter().for_each(&mut mark);
            }
        }
    }
    // A hash join buffer is keyed on its own table's columns.
    for level in &plan.levels {
        if let Access::JoinBuffer { keys } = &level.access {
            let off = plan.scope.tables[level.table].offset;
            for k in keys {
                if let Some(u) = used.get_mut(off + k.column) {
                    *u = true;
                }
            }
        }
    }
    Some(used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::CmpOp;
    use crate::plan::block::{HashKey, Level};
    use strata_types::{Collation, Value};

    fn eq(a: Expr, b: Expr) -> Expr {
        Expr::Cmp(CmpOp::Eq, Box::new(a), Box::new(b), Collation::Binary)
    }

    fn level(table: usize, access: Access, filter: Vec<Expr>) -> Level {
        Level {
            table,
            access,
            filter,
            outer: false,
            on: vec![],
            chain: vec![],
            starts: None,
            possible: vec![],
            columns: None,
        }
    }

    /// Two tables of 4 columns (positions 0–3 and 4–7): each level gets the columns of
    /// its table that any part of the block names, and a hash join's key column.
    #[test]
    fn each_table_reads_what_the_block_names() {
        let mut plan = SelectPlan::empty_over(&[4, 4]);
        plan.levels = vec![
            level(
                0,
                Access::Scan,
                vec![eq(Expr::Column(1), Expr::Literal(Value::Int(3)))],
            ),
            level(
                1,
                Access::JoinBuffer {
                    keys: vec![HashKey {
                        probe: Expr::Column(0),
                        column: 2,
                        coll: Collation::Binary,
                    }],
                },
                vec![],
            ),
        ];
        plan.projection = vec![Expr::Column(7)];
        mark_read_columns(&mut plan);
        assert_eq!(
            plan.levels[0].columns.as_deref(),
            Some(&[true, true, false, false][..])
        );
        assert_eq!(
            plan.levels[1].columns.as_deref(),
            Some(&[false, false, true, true][..])
        );
    }

    /// Every column named: no mask (the engine's whole-row path). Window functions:
    /// no mask either.
    #[test]
    fn whole_rows_when_everything_is_read_or_windows_run() {
        let mut plan = SelectPlan::empty_over(&[2]);
        plan.levels = vec![level(0, Access::Scan, vec![])];
        plan.projection = vec![Expr::Column(0), Expr::Column(1)];
        mark_read_columns(&mut plan);
        assert!(plan.levels[0].columns.is_none());

        let mut plan = SelectPlan::empty_over(&[2]);
        plan.levels = vec![level(0, Access::Scan, vec![])];
        plan.projection = vec![Expr::Column(0)];
        plan.windows = Some(crate::bind::window::WindowPlan {
            windows: vec![],
            calls: vec![],
        });
        mark_read_columns(&mut plan);
        assert!(plan.levels[0].columns.is_none());
    }

    /// A correlated subquery's correlation list reads the row: its columns are needed
    /// though no other part of the block names them.
    #[test]
    fn correlated_subqueries_keep_the_columns_they_read() {
        let mut plan = SelectPlan::empty_over(&[3]);
        plan.levels = vec![level(
            0,
            Access::Scan,
            vec![Expr::Subquery(Box::new(crate::expr::Subquery {
                id: 0,
                kind: crate::expr::SubqueryKind::Exists { negated: false },
                correlated: vec![Expr::Column(2)],
            }))],
        )];
        plan.projection = vec![Expr::Column(0)];
        mark_read_columns(&mut plan);
        assert_eq!(
            plan.levels[0].columns.as_deref(),
            Some(&[true, false, true][..])
        );
    }
}
