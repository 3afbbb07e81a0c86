//! Access paths: for each table the optimizer looks at the WHERE/ON conjuncts that compare
//! one of its columns with something already known (a constant, a parameter, or a column
//! of a table earlier in the join) and picks the index that uses them best: all columns
//! of a unique index by equality (`eq_ref`/`const`), the longest equality prefix (`ref`),
//! a range on the next column (`range`), or an IN list or an uncorrelated
//! `IN (SELECT …)` on the first column (the subquery's rows looked up as keys). Every
//! conjunct is still evaluated as a filter, so an index only ever narrows what is read.
//! Also EXPLAIN's possible keys and reading in index order to satisfy ORDER BY.

use crate::bind::Scope;
use crate::expr::{CmpOp, Expr, Subquery, SubqueryKind};
use crate::plan::block::{Access, SelectPlan};
use std::collections::HashSet;
use strata_types::{Collation, DataType};

/// One side of a range: the bound's expression and whether it is inclusive.
pub(crate) type Bound1 = Option<(Expr, bool)>;

/// Picks each level's access path from the conjuncts that can drive it.
/// Which tables (bit per scope position) an expression reads.
pub(crate) fn tables_mask(scope: &Scope, e: &Expr) -> u64 {
    let mut m = 0u64;
    e.walk(&mut |x| {
        if let Expr::Column(c) = x {
            m |= 1 << scope.table_of(*c);
        }
    });
    m
}

/// The column `s` is, when it is `column IN (SELECT one column …)` with no outer
/// reference, compared by value class (so the subquery's values are the keys to look
/// up: see `Access::IndexInSubquery`).
fn in_subquery_column(s: &Subquery) -> Option<usize> {
    match &s.kind {
        SubqueryKind::In {
            lhs,
            negated: false,
            hashable: true,
            ..
        } if s.correlated.is_empty() => match lhs.as_slice() {
            [Expr::Column(p)] => Some(*p),
            _ => None,
        },
        _ => None,
    }
}

/// The best index access to table `ti` given the conjuncts it may use and the tables
/// already placed before it in the join (their columns are known values).
pub(crate) fn best_access(
    scope: &Scope,
    ti: usize,
    conds: &[&Expr],
    placed: u64,
) -> Option<(u32, Access)> {
    let t = &scope.tables[ti];
    let (lo, hi) = (t.offset, t.offset + t.def.columns.len());
    let known = |e: &Expr| tables_mask(scope, e) & !placed == 0;
    let mut eqs: Vec<(usize, Expr)> = vec![];
    let mut ranges: Vec<(usize, Bound1, Bound1)> = vec![];
    let mut ins: Vec<(usize, Vec<Expr>)> = vec![];
    // `col IN (SELECT …)` (uncorrelated): the column and the subquery's id.
    let mut sub_ins: Vec<(usize, usize)> = vec![];
    let col_ok = |p: usize, coll: Collation| {
        let c = &t.def.columns[p - lo];
        !c.data_type.is_string() || c.collation == coll
    };
    for &c in conds {
        match c {
            Expr::Cmp(op, a, b, coll) => {
                let (p, other, op) = match (a.as_ref(), b.as_ref()) {
                    (Expr::Column(p), o) if (lo..hi).contains(p) && known(o) => (*p, o, *op),
                    (o, Expr::Column(p)) if (lo..hi).contains(p) && known(o) => (*p, o, flip(*op)),
                    _ => continue,
                };
                if !col_ok(p, *coll) {
                    continue;
                }
                match op {
                    CmpOp::Eq => eqs.push((p - lo, other.clone())),
                    CmpOp::Lt => ranges.push((p - lo, None, Some((other.clone(), false)))),
                    CmpOp::Le => ranges.push((p - lo, None, Some((other.clone(), true)))),
                    CmpOp::Gt => ranges.push((p - lo, Some((other.clone(), false)), None)),
                    CmpOp::Ge => ranges.push((p - lo, Some((other.clone(), true)), None)),
                    _ => {}
                }
            }
            Expr::Between {
                expr,
                low,
                high,
                negated: false,
                coll,
            } => {
                if let Expr::Column(p) = expr.as_ref() {
                    if (lo..hi).contains(p) && known(low) && known(high) && col_ok(*p, *coll) {
                        ranges.push((
                            p - lo,
                            Some(((**low).clone(), true)),
                            Some(((**high).clone(), true)),
                        ));
                    }
                }
            }
            Expr::InList {
                expr,
                list,
                negated: false,
                coll,
            } => {
                if let Expr::Column(p) = expr.as_ref() {
                    if (lo..hi).contains(p) && list.iter().all(known) && col_ok(*p, *coll) {
                        ins.push((p - lo, list.clone()));
                    }
                }
            }
            Expr::Subquery(s) => {
                // Numbers and dates only: their keys are exact values, where a string's
                // are collation weights the IN's own comparison might not share.
                if let Some(p) = in_subquery_column(s).filter(|p| (lo..hi).contains(p)) {
                    let ty = &t.def.columns[p - lo].data_type;
                    let exact = ty.is_integer()
                        || matches!(
                            ty,
                            DataType::Decimal { .. }
                                | DataType::Date
                                | DataType::DateTime { .. }
                                | DataType::Timestamp { .. }
                        );
                    if exact {
                        sub_ins.push((p - lo, s.id));
                    }
                }
            }
            _ => {}
        }
    }
    let mut best: Option<(u32, Access)> = None;
    for (ix, index) in t.def.indexes.iter().enumerate() {
        // MySQL 8's invisible index: maintained, never chosen.
        if index.invisible {
            continue;
        }
        // Past the index's own columns (into the primary key its entries end with)
        // only when every one of them is compared with `=`.
        let key_cols = crate::plan::block::key_columns(t, ix);
        let mut eq = vec![];
        for &col in key_cols.iter() {
            match eqs.iter().find(|(c, _)| *c == col) {
                Some((_, e)) => eq.push(e.clone()),
                None => break,
            }
        }
        let own = index.columns.len();
        if index.unique && eq.len() > own {
            // All of a unique index's columns equal: one row, nothing to add.
            eq.truncate(own);
        }
        // The primary key's columns count less than the index's own: `k = 1 AND id = 5`
        // is still the primary key's lookup (its score gets the unique bonus).
        let mut score = (eq.len().min(own) * 10 + eq.len().saturating_sub(own) * 2) as u32;
        let mut lower = None;
        let mut upper = None;
        if eq.len() == own && index.unique {
            score += 100;
        } else if let Some(&next) = key_cols.get(eq.len()) {
            for (c, l, u) in &ranges {
                if *c == next {
                    if l.is_some() && lower.is_none() {
                        lower = l.clone();
                    }
                    if u.is_some() && upper.is_none() {
                        upper = u.clone();
                    }
                }
            }
            if lower.is_some() || upper.is_some() {
                score += 5;
            }
        }
        let access = if score == 0 {
            let first = index.columns.first();
            match ins.iter().find(|(c, _)| Some(c) == first) {
                Some((_, values)) => {
                    score = 4;
                    Access::IndexIn {
                        index: ix,
                        values: values.clone(),
                    }
                }
                None => match sub_ins.iter().find(|(c, _)| Some(c) == first) {
                    Some(&(_, subquery)) => {
                        score = 3;
                        Access::IndexInSubquery {
                            index: ix,
                            subquery,
                        }
                    }
                    None => continue,
                },
            }
        } else {
            Access::Index {
                index: ix,
                eq,
                lower,
                upper,
                reverse: false,
            }
        };
        if index.primary {
            score += 1;
        }
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, access));
        }
    }
    best
}

/// EXPLAIN's possible_keys: every index whose first column some predicate compares with
/// a value or with another table's column, wherever that predicate is checked.
pub(crate) fn mark_possible_keys(plan: &mut SelectPlan) {
    let mut cols = HashSet::new();
    let scope = &plan.scope;
    let other_table = |p: usize, e: &Expr| {
        e.max_column()
            .is_none_or(|m| scope.table_of(m) != scope.table_of(p))
            && e.min_column()
                .is_none_or(|m| scope.table_of(m) != scope.table_of(p))
    };
    for level in &plan.levels {
        for c in level.filter.iter().chain(&level.on) {
            match c {
                Expr::Cmp(op, a, b, _) if *op != CmpOp::Ne => {
                    if let Expr::Column(p) = a.as_ref() {
                        if other_table(*p, b) {
                            cols.insert(*p);
                        }
                    }
                    if let Expr::Column(p) = b.as_ref() {
                        if other_table(*p, a) {
                            cols.insert(*p);
                        }
                    }
                }
                Expr::Between {
                    expr,
                    negated: false,
                    ..
                }
                | Expr::InList {
                    expr,
                    negated: false,
                    ..
                } => {
                    if let Expr::Column(p) = expr.as_ref() {
                        cols.insert(*p);
                    }
                }
                Expr::Subquery(s) => {
                    if let Some(p) = in_subquery_column(s) {
                        cols.insert(p);
                    }
                }
                _ => {}
            }
        }
    }
    for level in &mut plan.levels {
        let t = &plan.scope.tables[level.table];
        level.possible = t
            .def
            .indexes
            .iter()
            .enumerate()
            .filter(|(_, ix)| !ix.invisible && cols.contains(&(t.offset + ix.columns[0])))
            .map(|(i, _)| i)
            .collect();
    }
}

/// When a single-table query orders by the columns of the index it reads (after its
/// equality columns), rows already come sorted: skip the sort, and read in reverse for
/// DESC. With a LIMIT and no usable predicate, prefer such an index over a scan.
pub(crate) fn use_index_order(plan: &mut SelectPlan) {
    if plan.group.is_some() || plan.distinct || plan.order.is_empty() {
        return;
    }
    // Rows leave a nested-loop join in the order the first table yields them, so an
    // ORDER BY on the first table's columns alone can come from its index too.
    let t = &plan.scope.tables[plan.levels[0].table];
    let mut order_cols = vec![];
    for (pos, desc, coll) in &plan.order {
        match plan.projection.get(*pos) {
            Some(Expr::Column(p)) if (t.offset..t.offset + t.def.columns.len()).contains(p) => {
                let p = *p - t.offset;
                if t.def.columns[p].collation == *coll || !t.def.columns[p].data_type.is_string() {
                    order_cols.push((p, *desc))
                } else {
                    return;
                }
            }
            _ => return,
        }
    }
    let desc = order_cols[0].1;
    if order_cols.iter().any(|(_, d)| *d != desc) {
        return;
    }
    // An index's order, its primary key suffix included (`WHERE k = 5 ORDER BY id`).
    let fits = |index: usize, skip: usize| {
        let cols = crate::plan::block::key_columns(t, index);
        order_cols.len() + skip <= cols.len()
            && order_cols
                .iter()
                .zip(&cols[skip..])
                .all(|((c, _), ic)| c == ic)
    };
    match &mut plan.levels[0].access {
        Access::Index {
            index, eq, reverse, ..
        } if fits(*index, eq.len()) => {
            *reverse = desc;
            plan.order_satisfied = true;
        }
        Access::Scan if plan.limit.is_some() => {
            if let Some(ix) =
                (0..t.def.indexes.len()).find(|&i| !t.def.indexes[i].invisible && fits(i, 0))
            {
                plan.levels[0].access = Access::Index {
                    index: ix,
                    eq: vec![],
                    lower: None,
                    upper: None,
                    reverse: desc,
                };
                plan.order_satisfied = true;
            }
        }
        _ => {}
    }
}

pub(crate) fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        o => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::Collation;

    fn in_subquery(
        lhs: Vec<Expr>,
        negated: bool,
        hashable: bool,
        correlated: Vec<Expr>,
    ) -> Subquery {
        Subquery {
            id: 7,
            kind: SubqueryKind::In {
                colls: vec![Collation::Binary; lhs.len()],
                lhs,
                negated,
                hashable,
            },
            correlated,
        }
    }

    /// Only `col IN (SELECT x …)` that is uncorrelated, not negated and compared by
    /// value class may drive an index with the subquery's values as keys.
    #[test]
    fn which_in_subqueries_can_drive_an_index() {
        let c = || Expr::Column(3);
        assert_eq!(
            in_subquery_column(&in_subquery(vec![c()], false, true, vec![])),
            Some(3)
        );
        // NOT IN keeps the rows the set lacks: no lookup finds those.
        assert_eq!(
            in_subquery_column(&in_subquery(vec![c()], true, true, vec![])),
            None
        );
        // Compared across value classes (a number with strings): keys would not match.
        assert_eq!(
            in_subquery_column(&in_subquery(vec![c()], false, false, vec![])),
            None
        );
        // Correlated: another set per outer row.
        assert_eq!(
            in_subquery_column(&in_subquery(vec![c()], false, true, vec![Expr::Column(0)])),
            None
        );
        // A row or an expression on the left.
        assert_eq!(
            in_subquery_column(&in_subquery(
                vec![c(), Expr::Column(4)],
                false,
                true,
                vec![]
            )),
            None
        );
        let f = Expr::Neg(Box::new(c()));
        assert_eq!(
            in_subquery_column(&in_subquery(vec![f], false, true, vec![])),
            None
        );
    }
}
