//! Condition pushdown into materialised derived tables and views (MySQL 8.0.22's
//! `derived_condition_pushdown`): a conjunct of a block's WHERE (or of the ON of the
//! outer join whose inner side the derived table is) that reads only one derived
//! table's columns is rewritten in terms of the derived query's select expressions and
//! added to that query, so the derived table materialises only the rows the outer
//! block can keep, and the condition reaches the inner block's access path choice (a
//! primary-key or secondary-index lookup instead of a scan of every row).
//!
//! Why it is exact: the derived table's rows are the inner projection's values as
//! computed (materialisation converts nothing), so a bound outer condition evaluated
//! over the inner select expressions gives, row by row, what it gives over the
//! materialised row — same values, same comparison collations (they are held in the
//! bound condition). The outer condition stays where it was, so pushing only ever
//! removes rows the outer block would remove anyway.
//!
//! Where a condition goes in the derived query:
//! - a plain block: its WHERE, at the level of the last table it reads; not when a
//!   table it reads is the inner side of an outer join inside the derived query (the
//!   NULL-extended rows would then be judged differently);
//! - a grouped block (GROUP BY, aggregates, DISTINCT): its WHERE when the condition
//!   reads only grouping expressions of integer type (so every row of a group has the
//!   same value as the group's row), else its HAVING;
//! - a UNION: each branch whose columns have the union's types; a UNION DISTINCT only
//!   integer columns (which row of a set of duplicates survives must not depend on the
//!   condition);
//! - a parenthesised query with ORDER BY: its input.
//!
//! Not pushed: into a block with LIMIT/OFFSET, window functions, WITH ROLLUP, a
//! locking read, or a DISTINCT kept as an output filter; into a recursive CTE or a CTE
//! (its rows are shared by every reference); INTERSECT/EXCEPT; a LATERAL derived table;
//! a condition with a subquery, a user variable, a stored function, an outer reference
//! or a non-deterministic call (RAND(), UUID(), SYSDATE(), …), or one that reads an
//! inner select expression that has any of these. What lands in a derived query's WHERE
//! may go down again into the derived tables that query reads (views on views).

use crate::bind::Scope;
use crate::context::ExecCtx;
use crate::expr::Expr;
use crate::optimizer::access::tables_mask;
use crate::plan::block::{Access, Derived, Level, SelectPlan};
use crate::plan::query::{QueryPlan, SetOp};
use std::sync::Arc;
use strata_engine::ReadMode;
use strata_types::{ColumnMeta, FieldType};

/// Pushes the single-derived-table conjuncts of a block's levels (as placed by
/// `plan::join_groups::place`, before the access paths are chosen) into the derived
/// queries they read. Returns how many conditions went down.
pub(crate) fn push_into_derived(
    scope: &Scope,
    levels: &[Level],
    derived: &mut Derived,
    cx: &ExecCtx,
) -> usize {
    let mut found = Vec::new();
    for level in levels {
        // Only derived tables are candidates: a block of base tables clones nothing.
        if scope
            .tables
            .get(level.table)
            .is_none_or(|t| t.slot.is_none())
        {
            continue;
        }
        // A derived table on the inner side of an outer join: only its own join's ON
        // decides which of its rows match; WHERE also sees the NULL-extended rows.
        let conds: &[Expr] = if level.outer {
            let own = level.chain.first().map_or(0, |c| c.1);
            &level.on[..own.min(level.on.len())]
        } else {
            &level.filter
        };
        found.extend(conds.iter().map(|c| (level.table, c.clone())));
    }
    push_candidates(scope, derived, found, cx)
}

/// Pushes each `(table, condition)` whose condition reads only that table, when the
/// table is a derived table this block alone owns.
fn push_candidates(
    scope: &Scope,
    derived: &mut Derived,
    candidates: Vec<(usize, Expr)>,
    cx: &ExecCtx,
) -> usize {
    let mut by_table: Vec<(usize, Vec<Expr>)> = Vec::new();
    for (t, c) in candidates {
        let Some(st) = scope.tables.get(t) else {
            continue;
        };
        if st.slot.is_none()
            || st.lateral.is_some()
            || tables_mask(scope, &c) != 1 << t
            || !movable(&c)
        {
            continue;
        }
        let mut c = c;
        let offset = st.offset;
        c.map_columns(&|p| p - offset);
        match by_table.iter_mut().find(|(x, _)| *x == t) {
            Some((_, v)) => v.push(c),
            None => by_table.push((t, vec![c])),
        }
    }
    let mut pushed = 0;
    for (t, conds) in by_table {
        let Some(slot) = scope.tables[t].slot else {
            continue;
        };
        let Some((_, Some(plan))) = derived.iter_mut().find(|(s, _)| *s == slot) else {
            continue;
        };
        // A CTE's plan is shared by its references (and the planner's list): its rows
        // must stay whole. A derived table's or view's plan is this block's alone.
        let Some(q) = Arc::get_mut(plan) else {
            continue;
        };
        pushed += push_query(q, conds, cx);
    }
    pushed
}

/// Whether a condition may be evaluated elsewhere, earlier, or on other rows than
/// before and still mean the same: no subquery, variable, stored function, outer
/// reference or call whose value changes between evaluations.
pub(crate) fn movable(e: &Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        let bad = match x {
            Expr::Subquery(_)
            | Expr::UserVariable(_)
            | Expr::StoredCall(..)
            | Expr::OuterRef(_) => true,
            Expr::Func(f, _) => f.is_volatile(),
            _ => false,
        };
        ok &= !bad;
    });
    ok
}

/// Pushes conditions over a query's output columns (positions) into it.
fn push_query(q: &mut QueryPlan, conds: Vec<Expr>, cx: &ExecCtx) -> usize {
    if conds.is_empty() {
        return 0;
    }
    match q {
        QueryPlan::Block(b) => push_block(b, conds, cx),
        QueryPlan::Ordered(o) if o.limit.is_none() && o.offset.is_none() => {
            push_query(&mut o.input, conds, cx)
        }
        QueryPlan::SetOp(s) if s.op == SetOp::Union => {
            let columns = s.columns.clone();
            let distinct = s.distinct;
            let mut pushed = 0;
            for side in [&mut s.left, &mut s.right] {
                let fit: Vec<Expr> = conds
                    .iter()
                    .filter(|c| {
                        columns_read(c).iter().all(|&i| {
                            let union = columns.get(i);
                            side.columns().get(i).is_some_and(|m| {
                                union.is_some_and(|u| {
                                    same_type(m, u) && (!distinct || identity_safe(u))
                                })
                            })
                        })
                    })
                    .cloned()
                    .collect();
                pushed += push_query(side, fit, cx);
            }
            pushed
        }
        _ => 0,
    }
}

/// The output positions a condition reads.
fn columns_read(e: &Expr) -> Vec<usize> {
    let mut v = Vec::new();
    e.walk(&mut |x| {
        if let Expr::Column(p) = x {
            if !v.contains(p) {
                v.push(*p);
            }
        }
    });
    v
}

/// A branch column holds the same kind of value as the union's column.
fn same_type(branch: &ColumnMeta, union: &ColumnMeta) -> bool {
    branch.field_type == union.field_type
        && branch.charset == union.charset
        && branch.decimals == union.decimals
        && (branch.flags & strata_types::output::flags::UNSIGNED)
            == (union.flags & strata_types::output::flags::UNSIGNED)
}

/// A column type whose equal values are identical (so grouping or removing duplicates
/// keeps a value no condition can tell from the others): integers.
fn identity_safe(m: &ColumnMeta) -> bool {
    matches!(
        m.field_type,
        FieldType::Tiny
            | FieldType::Short
            | FieldType::Int24
            | FieldType::Long
            | FieldType::LongLong
            | FieldType::Year
    )
}

/// Replaces every column position `i` of `e` by `with(i)`; None when one has none.
fn substitute(e: &Expr, with: &dyn Fn(usize) -> Option<Expr>) -> Option<Expr> {
    // One walk over a clone: a replacement's own positions are never visited again.
    let mut out = e.clone();
    let mut ok = true;
    out.replace_columns(&mut |p| match with(p) {
        Some(x) => x,
        None => {
            ok = false;
            Expr::Column(p)
        }
    });
    ok.then_some(out)
}

/// Pushes conditions over a block's output columns into its WHERE or HAVING, then
/// chooses its access paths again.
fn push_block(b: &mut SelectPlan, conds: Vec<Expr>, cx: &ExecCtx) -> usize {
    if b.limit.is_some()
        || b.offset.is_some()
        || b.windows.is_some()
        || b.read_mode != ReadMode::Consistent
        || b.distinct
        || b.group.as_ref().is_some_and(|g| g.rollup)
    {
        return 0;
    }
    let visible = b.columns.len();
    let mut wheres: Vec<Expr> = Vec::new();
    let mut havings: Vec<Expr> = Vec::new();
    for c in conds {
        let read = columns_read(&c);
        if read
            .iter()
            .any(|&i| i >= visible || !movable(&b.projection[i]))
        {
            continue;
        }
        let output = |i: usize| b.projection.get(i).cloned();
        match &b.group {
            None => {
                if let Some(e) = substitute(&c, &output) {
                    wheres.push(e);
                }
            }
            Some(g) => {
                // Reads only integer grouping expressions: every row of the group has
                // the group's value, so the rows can be filtered before grouping.
                let group_of = |i: usize| match b.projection.get(i) {
                    Some(Expr::Column(k)) if *k < g.groups.len() => Some(*k),
                    _ => None,
                };
                let before = read.iter().all(|&i| {
                    group_of(i).is_some_and(|k| movable(&g.groups[k].0))
                        && b.columns.get(i).is_some_and(identity_safe)
                });
                let pre = |i: usize| group_of(i).map(|k| g.groups[k].0.clone());
                match before.then(|| substitute(&c, &pre)).flatten() {
                    Some(e) => wheres.push(e),
                    None => {
                        if let Some(e) = substitute(&c, &output) {
                            havings.push(e);
                        }
                    }
                }
            }
        }
    }
    let mut pushed = 0;
    let mut placed: Vec<(usize, Expr)> = Vec::new();
    for e in wheres {
        let mask = tables_mask(&b.scope, &e);
        if mask == 0 {
            b.const_filter.push(e);
            pushed += 1;
            continue;
        }
        // The last level reading one of its tables; none of them NULL-extended.
        let mut at = None;
        let mut inner_side = false;
        for (l, level) in b.levels.iter().enumerate() {
            if mask & (1 << level.table) != 0 {
                inner_side |= level.outer;
                at = Some(l);
            }
        }
        let Some(l) = at.filter(|_| !inner_side) else {
            continue;
        };
        if mask.count_ones() == 1 {
            placed.push((b.levels[l].table, e.clone()));
        }
        b.levels[l].filter.push(e);
        pushed += 1;
    }
    if let Some(g) = &mut b.group {
        for e in havings {
            g.having = Some(match g.having.take() {
                None => e,
                Some(h) => Expr::And(Box::new(h), Box::new(e)),
            });
            pushed += 1;
        }
    }
    if pushed == 0 {
        return 0;
    }
    // Views on views: what reached this block's WHERE may go further down.
    pushed += push_candidates(&b.scope, &mut b.derived, placed, cx);
    b.count_star_only = false;
    b.order_satisfied = false;
    for level in &mut b.levels {
        level.access = Access::Scan;
        level.possible.clear();
        level.columns = None;
    }
    crate::optimizer::choose_access_paths(b, cx);
    pushed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::functions::{Func, HashFn, MathFn};
    use crate::expr::CmpOp;
    use strata_types::{Collation, Value};

    fn eq(a: Expr, b: Expr) -> Expr {
        Expr::Cmp(CmpOp::Eq, Box::new(a), Box::new(b), Collation::GeneralCi)
    }

    #[test]
    fn volatile_and_correlated_conditions_stay() {
        let rand = Expr::Func(Func::Math(MathFn::Rand), vec![]);
        let uuid = Expr::Func(Func::Hash(HashFn::Uuid), vec![]);
        assert!(!movable(&eq(Expr::Column(0), rand)));
        assert!(!movable(&eq(Expr::Column(0), uuid)));
        assert!(!movable(&eq(Expr::Column(0), Expr::OuterRef(0))));
        assert!(!movable(&eq(
            Expr::Column(0),
            Expr::UserVariable("x".into())
        )));
        assert!(movable(&eq(Expr::Column(0), Expr::Param(0))));
        assert!(movable(&eq(Expr::Column(0), Expr::lit(Value::Int(5)))));
    }

    #[test]
    fn columns_become_the_select_expressions() {
        // x = 5 over `SELECT a + 1 AS x, b`: (a + 1) = 5, a and b at inner positions 3, 4.
        let inner = [
            Expr::Arith(
                crate::expr::ArithOp::Add,
                Box::new(Expr::Column(3)),
                Box::new(Expr::lit(Value::Int(1))),
            ),
            Expr::Column(4),
        ];
        let c = Expr::And(
            Box::new(eq(Expr::Column(0), Expr::lit(Value::Int(5)))),
            Box::new(eq(Expr::Column(1), Expr::Column(0))),
        );
        let e = substitute(&c, &|i| inner.get(i).cloned()).unwrap();
        let text = format!("{e:?}");
        assert_eq!(text.matches("Column(3)").count(), 2, "{text}");
        assert_eq!(text.matches("Column(4)").count(), 1, "{text}");
        assert!(
            !text.contains("Column(0)") && !text.contains("Column(1)"),
            "{text}"
        );
        // A position with no select expression: nothing is pushed.
        assert!(substitute(&eq(Expr::Column(7), Expr::Param(0)), &|i| inner
            .get(i)
            .cloned())
        .is_none());
    }

    #[test]
    fn only_integer_columns_are_identity_safe() {
        let m = |t| ColumnMeta::computed("c", t);
        assert!(identity_safe(&m(FieldType::LongLong)));
        assert!(!identity_safe(&m(FieldType::VarString)));
        assert!(!identity_safe(&m(FieldType::Double)));
        assert!(!identity_safe(&m(FieldType::NewDecimal)));
    }

    #[test]
    fn union_branches_of_another_type_get_nothing() {
        let a = ColumnMeta::computed("c", FieldType::Long);
        assert!(same_type(&a, &a.clone()));
        assert!(!same_type(
            &a,
            &ColumnMeta::computed("c", FieldType::VarString)
        ));
        let mut unsigned = a.clone();
        unsigned.flags |= strata_types::output::flags::UNSIGNED;
        assert!(!same_type(&a, &unsigned));
    }
}
