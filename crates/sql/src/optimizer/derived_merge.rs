//! Merging derived tables and views into the block that reads them (MySQL 8's
//! `derived_merge`): instead of materialising `(SELECT … FROM b WHERE w) AS d` and
//! joining its rows, the block reads `b` itself — `b`'s tables take `d`'s place in the
//! join, `w` joins the block's conditions, and every expression that read a column of
//! `d` reads the derived query's select expression for it instead. The join on the
//! derived table's key then becomes a primary-key or index lookup into the base table
//! per outer row, where a materialised derived table is read whole every time.
//!
//! When (MySQL's rule, kept narrower where Strata cannot be sure of the result):
//! - the derived query is one plain block ([`mergeable`]): no aggregates, GROUP BY,
//!   HAVING, DISTINCT, LIMIT/OFFSET, ORDER BY, window functions, locking clause or
//!   STRAIGHT_JOIN, every table of it a base table (a derived table or view inside it
//!   was merged into it first, or it stays materialised and so does this one), and no
//!   select expression or condition with a subquery, a user variable, a stored
//!   function or a non-deterministic call (merged, such a value would be computed once
//!   per reference and per join row instead of once per row);
//! - an outer join inside merges with its nest kept: the query's outer-join groups
//!   become groups of the block nested in the group the derived table was in (or at
//!   the top), each ON stays its group's, and its tables keep their FROM order (an
//!   outer join fixes the block's order, as a written one does). A row of the merged
//!   join is the row the derived query would have produced, NULL-extended alike.
//!   Only into a block whose order is fixed already or that reads nothing else (MySQL
//!   reorders around a nest; Strata fixes the whole block's order with one, so a
//!   block of inner joins would lose its cost-chosen order);
//! - not a view of `ALGORITHM=TEMPTABLE` (the planner clears the query's merge source);
//! - not a LATERAL derived table, nor a recursive CTE (its plan is no block);
//! - a non-recursive CTE merges as a derived table does, at each reference on its
//!   own (MySQL gives every reference its own copy of the CTE's query): merged at one
//!   and materialised at another, the materialised rows are the same values the merged
//!   expressions give, so the results agree;
//! - the block is not an UPDATE, DELETE or INSERT's (nor one of their subqueries'):
//!   there the derived table is read before the first change, which 1093 relies on;
//! - on the inner side of an outer join only when every select expression is a bare
//!   column: a NULL-extended base table then gives NULL for each, as the materialised
//!   row did (a constant or `COALESCE(x, 0)` would not stay NULL); its conditions then
//!   join that outer join's ON;
//! - the block keeps at most [`MAX_JOIN_TABLES`] tables.
//!
//! Why the result is the same: a materialised derived table holds the inner select
//! expressions' values as computed (materialisation converts nothing, see
//! `derived_pushdown`), so an outer expression over them gives what it gives over the
//! select expressions themselves. Names and result metadata do not change either:
//! every clause is bound against the block's scope as it was, the derived table
//! included; only the bound expressions are rewritten here, afterwards.

use crate::bind::{Scope, ScopeTable};
use crate::expr::Expr;
use crate::optimizer::derived_pushdown::movable;
use crate::optimizer::join_order::MAX_JOIN_TABLES;
use crate::plan::block::{Derived, MergeSource, SelectPlan};
use crate::plan::join_groups::JoinGroup;
use crate::plan::query::QueryPlan;
use strata_engine::ReadMode;

/// Whether a planned derived query is one block MySQL would merge (see the module
/// comment); its conditions are then in `merge_source`.
pub(crate) fn mergeable(b: &SelectPlan) -> bool {
    b.merge_source.is_some()
        && b.group.is_none()
        && !b.distinct
        && b.limit.is_none()
        && b.offset.is_none()
        && b.order.is_empty()
        && b.windows.is_none()
        && b.read_mode == ReadMode::Consistent
        && b.derived.is_empty()
        && b.projection.len() == b.columns.len()
        && !b.scope.tables.is_empty()
        && b.scope.tables.iter().all(ScopeTable::is_base)
        && b.projection.iter().all(movable)
        && b.merge_source
            .iter()
            .flat_map(|m| &m.conds)
            .all(|(_, c)| movable(c))
}

/// The block after merging: its new scope and join order, and how to rewrite every
/// expression bound against the old scope.
pub(crate) struct Merged {
    pub scope: Scope,
    pub order: Vec<usize>,
    /// Per old row position, the expression over the new row that gives its value.
    map: Vec<Expr>,
    /// Per old scope table, its tables in the new scope.
    tables: Vec<Vec<usize>>,
    /// The old scope tables that were merged.
    merged: Vec<usize>,
    /// The new row's width (positions past the old row's, e.g. window values, shift
    /// by the difference).
    width: usize,
    /// The merged select expressions, over the new row: the columns a view's query
    /// reads are still checked for privileges though the outer block reads fewer.
    pub reads: Vec<Expr>,
    /// Scope tables (new positions) the merged queries list through `*`.
    pub star_tables: Vec<usize>,
}

impl Merged {
    /// Rewrites an expression bound against the old scope.
    pub fn rewrite(&self, e: &mut Expr) {
        e.replace_columns(&mut |p| {
            self.map
                .get(p)
                .cloned()
                .unwrap_or(Expr::Column(p - self.map.len() + self.width))
        });
    }

    /// The new position of old scope table `old`, unless it was merged (a `*` over a
    /// merged view is not a `*` over its base tables, for the privilege check's 1142
    /// against 1143; the view's own `*` is in `star_tables`).
    pub fn kept(&self, old: usize) -> Option<usize> {
        match self.tables.get(old).map(Vec::as_slice) {
            Some([t]) if !self.merged.contains(&old) => Some(*t),
            _ => None,
        }
    }
}

/// The innermost outer-join group holding table `t` (the one with fewest tables).
fn innermost_group(groups: &[JoinGroup], t: usize) -> Option<usize> {
    groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.tables & (1 << t) != 0)
        .min_by_key(|(_, g)| g.tables.count_ones())
        .map(|(i, _)| i)
}

/// Merges every derived table of the block that may be merged. `conds` (owner group,
/// condition) are rewritten and get the merged queries' conditions; `groups` and
/// `derived` follow. `fixed`: the block's join order is fixed already (outer joins,
/// STRAIGHT_JOIN). None when nothing was merged (everything stays as it was).
pub(crate) fn merge(
    scope: &Scope,
    order: &[usize],
    fixed: bool,
    groups: &mut Vec<JoinGroup>,
    derived: &mut Derived,
    conds: &mut Vec<(Option<usize>, Expr)>,
) -> Option<Merged> {
    // Which tables merge, with the block that replaces each.
    let mut picked: Vec<Option<(&SelectPlan, &MergeSource)>> = vec![None; scope.tables.len()];
    let mut count = scope.tables.len();
    for (i, t) in scope.tables.iter().enumerate() {
        let (Some(slot), None) = (t.slot, &t.lateral) else {
            continue;
        };
        let Some((_, Some(plan))) = derived.iter().find(|(s, _)| *s == slot) else {
            continue;
        };
        let QueryPlan::Block(b) = plan.as_ref() else {
            continue;
        };
        let Some(source) = b.merge_source.as_ref().filter(|_| mergeable(b)) else {
            continue;
        };
        let inner_side = innermost_group(groups, i).is_some();
        if inner_side && !b.projection.iter().all(|e| matches!(e, Expr::Column(_))) {
            continue;
        }
        if count - 1 + b.scope.tables.len() > MAX_JOIN_TABLES {
            continue;
        }
        if source.order.len() != b.scope.tables.len() {
            continue;
        }
        // An outer join fixes the order of the whole block it is in (the join-order
        // search does not move tables around outer-join groups): a query with one
        // merges only where no order was free to choose before, else a block of inner
        // joins would lose the order its statistics pick (a large table read first
        // where the materialised rows would have been looked up by its index).
        if !source.groups.is_empty() && !fixed && scope.tables.len() > 1 {
            continue;
        }
        count = count - 1 + b.scope.tables.len();
        picked[i] = Some((b, source));
    }
    if picked.iter().all(Option::is_none) {
        return None;
    }

    // The new scope, and where each old table went.
    let mut new = Scope::default();
    let mut tables: Vec<Vec<usize>> = Vec::with_capacity(scope.tables.len());
    let mut map: Vec<Expr> = Vec::with_capacity(scope.width());
    let mut reads = Vec::new();
    let mut star_tables = Vec::new();
    let mut added: Vec<(Option<usize>, Expr)> = Vec::new();
    // The merged queries' own outer joins, over the new scope, nested in the group the
    // derived table was in.
    let mut added_groups: Vec<JoinGroup> = Vec::new();
    for (i, t) in scope.tables.iter().enumerate() {
        let base = new.width();
        match picked[i] {
            None => {
                tables.push(vec![new.tables.len()]);
                let mut st = t.clone();
                st.offset = base;
                new.tables.push(st);
                map.extend((0..t.def.columns.len()).map(|c| Expr::Column(base + c)));
            }
            Some((b, source)) => {
                let first = new.tables.len();
                for it in &b.scope.tables {
                    let mut st = it.clone();
                    st.offset = new.width();
                    new.tables.push(st);
                }
                // In the order the query's outer joins fix (FROM order).
                tables.push(source.order.iter().map(|&x| first + x).collect());
                star_tables.extend(b.star_tables.iter().map(|&x| first + x));
                let shift = |e: &Expr| {
                    let mut e = e.clone();
                    e.map_columns(&|p| p + base);
                    e
                };
                let owner = innermost_group(groups, i);
                let group_base = groups.len() + added_groups.len();
                for g in &source.groups {
                    let mut tables = 0u64;
                    for x in 0..b.scope.tables.len() {
                        if g.tables & (1 << x) != 0 {
                            tables |= 1 << (first + x);
                        }
                    }
                    added_groups.push(JoinGroup {
                        parent: g.parent.map(|p| group_base + p).or(owner),
                        tables,
                        first: 0,
                        last: 0,
                    });
                }
                for (g, c) in &source.conds {
                    added.push((g.map(|g| group_base + g).or(owner), shift(c)));
                }
                for e in &b.projection {
                    map.push(shift(e));
                    reads.push(shift(e));
                }
            }
        }
    }
    // A LATERAL derived table after a merged one reads the columns before it anew.
    let remap = |e: &mut Expr| {
        e.replace_columns(&mut |p| map.get(p).cloned().unwrap_or(Expr::Column(p)));
    };
    for t in &mut new.tables {
        if let Some(l) = &mut t.lateral {
            l.correlated.iter_mut().for_each(remap);
        }
    }
    // USING/NATURAL pairs between tables that stay.
    new.coalesced = scope
        .coalesced
        .iter()
        .filter_map(|&(a, b)| match (map.get(a), map.get(b)) {
            (Some(Expr::Column(x)), Some(Expr::Column(y)))
                if picked[scope.table_of(a)].is_none() && picked[scope.table_of(b)].is_none() =>
            {
                Some((*x, *y))
            }
            _ => None,
        })
        .collect();
    // A CTE's slot may serve several references: its materialisation goes only when
    // none of them still reads it.
    let still_read: Vec<usize> = scope
        .tables
        .iter()
        .zip(&picked)
        .filter(|(_, p)| p.is_none())
        .filter_map(|(t, _)| t.slot)
        .collect();
    let slots: Vec<usize> = scope
        .tables
        .iter()
        .zip(&picked)
        .filter(|(_, p)| p.is_some())
        .filter_map(|(t, _)| t.slot)
        .filter(|s| !still_read.contains(s))
        .collect();
    let merged = Merged {
        merged: (0..picked.len()).filter(|&i| picked[i].is_some()).collect(),
        width: new.width(),
        order: order.iter().flat_map(|&t| tables[t].clone()).collect(),
        scope: new,
        map,
        tables,
        reads,
        star_tables,
    };
    for g in groups.iter_mut() {
        let mut mask = 0u64;
        for (old, news) in merged.tables.iter().enumerate() {
            if g.tables & (1 << old) != 0 {
                for &n in news {
                    mask |= 1 << n;
                }
            }
        }
        g.tables = mask;
    }
    groups.extend(added_groups);
    for (_, c) in conds.iter_mut() {
        merged.rewrite(c);
    }
    conds.extend(added);
    derived.retain(|(slot, _)| !slots.contains(slot));
    Some(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind::{AggSpec, Lateral, SType};
    use crate::expr::functions::{Func, MathFn};
    use crate::expr::{Subquery, SubqueryKind};
    use crate::plan::block::GroupPlan;
    use std::sync::Arc;
    use strata_types::{Collation, ColumnMeta, FieldType, Value};

    fn scope_of(widths: &[usize]) -> Scope {
        SelectPlan::empty_over(widths).scope
    }

    /// `SELECT c0, c1 FROM t0 WHERE c0 = 1` over one base table of two columns.
    fn plain() -> SelectPlan {
        SelectPlan {
            projection: vec![Expr::Column(0), Expr::Column(1)],
            columns: vec![
                ColumnMeta::computed("c0", FieldType::LongLong),
                ColumnMeta::computed("c1", FieldType::LongLong),
            ],
            merge_source: Some(MergeSource {
                conds: vec![(None, eq(Expr::Column(0), Expr::Literal(Value::Int(1))))],
                groups: vec![],
                order: vec![0],
            }),
            ..SelectPlan::empty_over(&[2])
        }
    }

    fn eq(a: Expr, b: Expr) -> Expr {
        Expr::Cmp(
            crate::expr::CmpOp::Eq,
            Box::new(a),
            Box::new(b),
            Collation::Binary,
        )
    }

    #[test]
    fn a_plain_block_merges() {
        assert!(mergeable(&plain()));
    }

    #[test]
    fn grouping_distinct_limit_order_and_windows_stay_materialised() {
        let mut p = plain();
        p.group = Some(GroupPlan {
            groups: vec![],
            aggs: vec![AggSpec::new(
                crate::bind::AggFunc::CountStar,
                None,
                false,
                SType::Int,
                Collation::Binary,
            )],
            having: None,
            rollup: false,
        });
        assert!(!mergeable(&p), "aggregate");
        let mut p = plain();
        p.distinct = true;
        assert!(!mergeable(&p), "DISTINCT");
        let mut p = plain();
        p.limit = Some(Expr::Literal(Value::Int(3)));
        assert!(!mergeable(&p), "LIMIT");
        let mut p = plain();
        p.offset = Some(Expr::Literal(Value::Int(3)));
        assert!(!mergeable(&p), "OFFSET");
        let mut p = plain();
        p.order = vec![(0, false, Collation::Binary)];
        assert!(!mergeable(&p), "ORDER BY");
        let mut p = plain();
        p.read_mode = ReadMode::LockExclusive;
        assert!(!mergeable(&p), "FOR UPDATE");
        let mut p = plain();
        p.merge_source = None;
        assert!(!mergeable(&p), "STRAIGHT_JOIN, or ALGORITHM=TEMPTABLE");
    }

    #[test]
    fn subqueries_variables_and_volatile_calls_stay_materialised() {
        let sub = Expr::Subquery(Box::new(Subquery {
            id: 0,
            kind: SubqueryKind::Scalar,
            correlated: vec![],
        }));
        let mut p = plain();
        p.projection[1] = sub.clone();
        assert!(!mergeable(&p), "subquery in the select list");
        let mut p = plain();
        p.projection[1] = Expr::UserVariable("x".into());
        assert!(!mergeable(&p), "user variable");
        let mut p = plain();
        p.projection[1] = Expr::Func(Func::Math(MathFn::Rand), vec![]);
        assert!(!mergeable(&p), "RAND()");
        let mut p = plain();
        p.merge_source = Some(MergeSource {
            conds: vec![(None, sub)],
            groups: vec![],
            order: vec![0],
        });
        assert!(!mergeable(&p), "subquery in WHERE");
    }

    #[test]
    fn a_block_reading_a_derived_or_lateral_table_stays_materialised() {
        let mut p = plain();
        p.scope.tables[0].slot = Some(3);
        assert!(!mergeable(&p));
        let mut p = plain();
        p.scope.tables[0].lateral = Some(Lateral {
            subquery: 0,
            correlated: vec![],
        });
        assert!(!mergeable(&p));
    }

    /// `FROM t0 JOIN d` where d is `plain()` over one base table: d's columns become
    /// the base table's, later tables shift, d's WHERE joins the block's conditions.
    #[test]
    fn merging_rewrites_positions_and_adds_the_inner_where() {
        let mut outer = scope_of(&[1, 2, 1]);
        outer.tables[1].slot = Some(7);
        let mut inner = plain();
        inner.projection = vec![
            Expr::Column(1),
            Expr::Arith(
                crate::expr::ArithOp::Add,
                Box::new(Expr::Column(0)),
                Box::new(Expr::Literal(Value::Int(1))),
            ),
        ];
        let mut derived: Derived = vec![(7, Some(Arc::new(QueryPlan::Block(Box::new(inner)))))];
        let mut groups = vec![];
        let mut conds = vec![(None, eq(Expr::Column(1), Expr::Column(0)))];
        let m = merge(
            &outer,
            &[0, 1, 2],
            false,
            &mut groups,
            &mut derived,
            &mut conds,
        )
        .unwrap();
        assert!(derived.is_empty());
        assert_eq!(m.order, vec![0, 1, 2]);
        // d.c0 (old 1) is the base table's c1 (new 2); t2.c0 (old 3) stays at 3.
        let mut e = Expr::Column(1);
        m.rewrite(&mut e);
        assert!(matches!(e, Expr::Column(2)));
        let mut e = Expr::Column(3);
        m.rewrite(&mut e);
        assert!(matches!(e, Expr::Column(3)));
        let mut e = Expr::Column(2);
        m.rewrite(&mut e);
        assert!(matches!(e, Expr::Arith(..)));
        assert_eq!(conds.len(), 2);
        assert_eq!(
            format!("{:?}", conds[1].1),
            format!("{:?}", eq(Expr::Column(1), Expr::Literal(Value::Int(1))))
        );
    }

    /// On the inner side of a LEFT JOIN: merged when the select list is bare columns
    /// (the inner WHERE then belongs to the join's ON), not with a computed column.
    #[test]
    fn inner_side_of_an_outer_join_merges_bare_columns_only() {
        let setup = |projection: Vec<Expr>| {
            let mut outer = scope_of(&[1, 2]);
            outer.tables[1].slot = Some(7);
            let mut inner = plain();
            inner.projection = projection;
            let derived: Derived = vec![(7, Some(Arc::new(QueryPlan::Block(Box::new(inner)))))];
            let groups = vec![JoinGroup {
                parent: None,
                tables: 0b10,
                first: 0,
                last: 0,
            }];
            (outer, derived, groups)
        };
        let (outer, mut derived, mut groups) = setup(vec![Expr::Column(0), Expr::Column(1)]);
        let mut conds = vec![];
        let m = merge(
            &outer,
            &[0, 1],
            false,
            &mut groups,
            &mut derived,
            &mut conds,
        );
        assert!(m.is_some());
        assert_eq!(groups[0].tables, 0b10);
        assert_eq!(conds.len(), 1);
        assert_eq!(conds[0].0, Some(0));
        let (outer, mut derived, mut groups) =
            setup(vec![Expr::Column(0), Expr::Literal(Value::Int(7))]);
        let mut conds = vec![];
        assert!(merge(
            &outer,
            &[0, 1],
            false,
            &mut groups,
            &mut derived,
            &mut conds
        )
        .is_none());
        assert_eq!(derived.len(), 1);
    }

    /// A CTE: one plan shared by its references (and the planner's list). Each
    /// reference merges on its own; the materialisation goes only with the last.
    #[test]
    fn a_cte_merges_at_each_reference() {
        let plan = Arc::new(QueryPlan::Block(Box::new(plain())));
        let _held_by_the_planner = plan.clone();
        // FROM c AS x JOIN c AS y: both merge, the slot is no longer filled.
        let mut outer = scope_of(&[2, 2]);
        outer.tables[0].slot = Some(1);
        outer.tables[1].slot = Some(1);
        let mut derived: Derived = vec![(1, Some(plan.clone())), (1, Some(plan.clone()))];
        let mut conds = vec![];
        let m = merge(
            &outer,
            &[0, 1],
            false,
            &mut vec![],
            &mut derived,
            &mut conds,
        )
        .unwrap();
        assert!(derived.is_empty());
        assert_eq!(m.scope.tables.len(), 2);
        assert_eq!(conds.len(), 2, "each reference brings the CTE's WHERE");
        // FROM c AS x LEFT JOIN c AS y: y has a computed column on the inner side and
        // stays materialised, x merges; the slot is still filled for y.
        let mut p = plain();
        p.projection[1] = Expr::Literal(Value::Int(7));
        let plan = Arc::new(QueryPlan::Block(Box::new(p)));
        let _held_by_the_planner = plan.clone();
        let mut derived: Derived = vec![(1, Some(plan.clone())), (1, Some(plan.clone()))];
        let mut groups = vec![JoinGroup {
            parent: None,
            tables: 0b10,
            first: 0,
            last: 0,
        }];
        let m = merge(
            &outer,
            &[0, 1],
            false,
            &mut groups,
            &mut derived,
            &mut vec![],
        )
        .unwrap();
        assert_eq!(m.kept(1), Some(1));
        assert!(m.kept(0).is_none());
        assert_eq!(derived.len(), 2);
    }

    /// `FROM t0 LEFT JOIN d` where d is `SELECT … FROM a LEFT JOIN b ON a.c0 = b.c0`:
    /// d's outer join becomes a group of the block nested in d's, its ON that group's,
    /// in FROM order.
    #[test]
    fn an_outer_join_inside_is_kept_as_a_nested_group() {
        let mut inner = SelectPlan {
            projection: vec![Expr::Column(0), Expr::Column(3)],
            columns: vec![
                ColumnMeta::computed("x", FieldType::LongLong),
                ColumnMeta::computed("y", FieldType::LongLong),
            ],
            ..SelectPlan::empty_over(&[2, 2])
        };
        inner.merge_source = Some(MergeSource {
            conds: vec![(Some(0), eq(Expr::Column(0), Expr::Column(2)))],
            groups: vec![JoinGroup {
                parent: None,
                tables: 0b10,
                first: 0,
                last: 0,
            }],
            order: vec![0, 1],
        });
        assert!(mergeable(&inner));
        // Outer: t0 LEFT JOIN d ON t0.c0 = d.y (d on the inner side: bare columns).
        let mut outer = scope_of(&[1, 2]);
        outer.tables[1].slot = Some(4);
        let mut derived: Derived = vec![(4, Some(Arc::new(QueryPlan::Block(Box::new(inner)))))];
        let mut groups = vec![JoinGroup {
            parent: None,
            tables: 0b10,
            first: 0,
            last: 0,
        }];
        let mut conds = vec![(Some(0), eq(Expr::Column(0), Expr::Column(2)))];
        // A block whose join order is free would lose it: stays materialised.
        assert!(merge(
            &outer,
            &[0, 1],
            false,
            &mut groups,
            &mut derived,
            &mut conds
        )
        .is_none());
        let m = merge(&outer, &[0, 1], true, &mut groups, &mut derived, &mut conds).unwrap();
        assert_eq!(m.order, vec![0, 1, 2]);
        assert_eq!(groups.len(), 2);
        assert_eq!(
            groups[0].tables, 0b110,
            "the outer group holds both of d's tables"
        );
        assert_eq!(groups[1].tables, 0b100);
        assert_eq!(groups[1].parent, Some(0), "d's LEFT JOIN nests in it");
        // The outer ON now reads b's c1 (new position 1 + 2 + 1 = 4).
        assert_eq!(
            format!("{:?}", conds[0].1),
            format!("{:?}", eq(Expr::Column(0), Expr::Column(4)))
        );
        assert_eq!(conds[1].0, Some(1), "d's ON belongs to d's group");
        assert_eq!(
            format!("{:?}", conds[1].1),
            format!("{:?}", eq(Expr::Column(1), Expr::Column(3)))
        );
    }
}
