//! The optimizer: shapes a bound query block without changing its answer.
//!
//! # The rules, in the order they run
//!
//! 1. **Condition rewrites** ([`rewrite`], while the planner binds WHERE and ON): an OR
//!    whose branches share conjuncts has them pulled out (`(j AND a) OR (j AND b)` is
//!    `j AND (a OR b)`, exact in three-valued logic), and an OR across tables implies an
//!    OR of each table's own parts, added as one more conjunct that filters that table
//!    before the join (TPC-H Q19). Limit: only whole conjuncts match (structurally equal
//!    bound expressions); nothing non-deterministic is moved.
//! 2. **Outer-join simplification** ([`outer_join`], in `planner::block` before the
//!    conditions are placed): a LEFT/RIGHT JOIN whose inner side a condition applied
//!    above it null-rejects (WHERE for a top-level join, the enclosing ON for a nested
//!    one) is an inner join, as MySQL's `simplify_joins` makes it; with no outer join
//!    left the join order is free. Limit: null rejection is judged syntactically and
//!    conservatively (a function or CASE over the inner columns rejects nothing).
//!    Then **derived condition pushdown** ([`derived_pushdown`], in `planner::block`
//!    once the conditions are placed): a conjunct on one materialised view or derived
//!    table is rewritten over its select expressions into its query's WHERE (or HAVING
//!    over aggregates), whose access paths are chosen again, as MySQL 8.0.22's
//!    `derived_condition_pushdown`. Limit: not into LIMIT, windows, ROLLUP, CTEs.
//! 3. **Equality propagation** ([`equalities`], in [`join_order`]): `a = b AND b = c`
//!    adds `a = c` when the comparisons are exact in one domain (integers/decimals,
//!    dates/datetimes, strings of the comparison's own collation), so a table can be
//!    reached through any member of the class (TPC-H Q5). Limit: column-to-column only;
//!    `a = b AND b = 5` does not add `a = 5` (value conversions make that unsafe in
//!    general).
//! 4. **Join order by cost** ([`join_order`], for inner joins; outer joins and
//!    STRAIGHT_JOIN keep the FROM order). See the cost model below. Dynamic programming
//!    over the sets of tables placed finds the cheapest left-deep order for up to
//!    [`join_order::MAX_EXHAUSTIVE`] tables; larger joins are ordered greedily. Neither
//!    places a table no condition joins to those before it while a joined one remains
//!    (a cartesian product only when nothing else is left). The FROM order is kept
//!    unless an order 0.1 % cheaper exists.
//! 5. **Access paths** ([`access`]): per table, the index its known-value conditions use
//!    best (unique equality, longest equality prefix, a range on the next column, an IN
//!    list, an uncorrelated `IN (SELECT …)` whose rows are looked up as keys: TPC-H Q18,
//!    Q20); an inner table without one is read once into a hash join buffer keyed on
//!    its equi-join columns ([`hash_keys`]), and so is one whose index lookups would
//!    fetch each row through a secondary index when one scan is estimated well cheaper
//!    (`hash_beats_lookups`, TPC-H Q13). EXPLAIN's possible keys, and reading in index
//!    order for ORDER BY. A secondary index that holds every column the block reads of
//!    its table (`Table::covers`) is costed like the primary key: no row fetch.
//!
//! 6. **Correlated subqueries last** ([`expensive_last`]): within a level they follow
//!    the plain comparisons, and they move on to later `eq_ref` levels of the inner join
//!    (at most one row per row), so each runs for as few rows as possible (TPC-H Q21).
//!
//! 7. **Columns read** ([`columns`]): per table, the columns the block names, so the
//!    engine decodes only those (`Table::scan_columns`; an engine may still hand over
//!    whole rows). Limit: a block with window functions reads whole rows.
//!
//! The semi-join rule that turns a correlated `EXISTS` into a hashed `IN` runs while
//! binding, as MySQL's resolver does: `bind::decorrelate`.
//!
//! # The cost model
//!
//! Costs are in units of one row read by a scan. An index lookup costs 2 (the descent)
//! plus 1 per row it reads, 3 per row through a secondary index (the primary-key lookup
//! that fetches the row is a descent of its own) unless the read is index-only; a hash join costs its table's rows once (the build) and, per
//! outer row, 0.5 for the probe plus 0.5 per row it yields. A table placed after others
//! costs its per-row cost times the rows those tables yield; the rows it yields per
//! outer row (its fanout) are the access path's estimate (rows per key from the sampled
//! index statistics of `catalog::stats`, a twentieth of a closed range, a third of an
//! open one) times the selectivity of its other conditions ([`selectivity`]: one over
//! the distinct values of the compared columns when an index leads with them, MySQL's
//! fixed guesses otherwise, independence between conjuncts). Limits: no histograms, so
//! skewed columns and correlated conditions are misjudged (TPC-H Q7's two nation
//! conditions are estimated four times too selective); derived tables have no
//! statistics (one row); a range's size is a guess, not a count; no bushy plans.
//!
//! Each rule has unit tests beside it; `tests/slt/join_order.slt` and the other slt
//! files check the rows against MariaDB.

pub mod access;
pub mod columns;
pub mod derived_merge;
pub mod derived_pushdown;
pub mod equalities;
pub mod expensive_last;
pub mod filtered;
pub mod hash_keys;
pub mod join_order;
pub mod outer_join;
pub mod rewrite;
pub mod selectivity;

use crate::catalog::stats::TableStats;
use crate::context::ExecCtx;
use crate::expr::Expr;
use crate::plan::block::{Access, SelectPlan};
use access::{best_access, mark_possible_keys, use_index_order};
use join_order::choose_join_order;
use std::sync::Arc;

/// Plans the join: the table order (by estimated cost, for inner joins), each table's
/// access path, and where each condition is
/// checked (at the first table by which all it reads is in place).
pub(crate) fn choose_access_paths(plan: &mut SelectPlan, cx: &ExecCtx) {
    let n = plan.levels.len();
    if n >= 2 && !plan.fixed_order {
        choose_join_order(plan, cx);
    }
    // Statistics serve the choice between lookups and a hash join of an inner table:
    // a one-table block has none to make, and reads none (a first statement on a table
    // would otherwise sample it, the hot path included).
    let stats: Option<Vec<_>> = if n >= 2 {
        plan.scope
            .tables
            .iter()
            .map(|t| join_order::table_stats(cx, &t.table))
            .collect()
    } else {
        None
    };
    let needed = columns::needed_columns(plan);
    // Rows the levels before this one yield (an estimate, for the choice below).
    let mut outer_rows = 1.0f64;
    let mut placed = 0u64;
    for lvl in 0..n {
        let ti = plan.levels[lvl].table;
        let level = &plan.levels[lvl];
        // Inside an outer-join group only the innermost group's own conditions may
        // narrow the read: the rest must also see the rows that fail them.
        let conds: Vec<&Expr> = if level.outer {
            let own = level.chain.first().map_or(0, |c| c.1);
            level.on[..own].iter().collect()
        } else {
            level.filter.iter().collect()
        };
        match best_access(&plan.scope, ti, &conds, placed) {
            Some((_, access)) => {
                let hash = match &stats {
                    Some(st) if lvl > 0 && plan.scope.tables[ti].lateral.is_none() => {
                        hash_beats_lookups(
                            plan, ti, &access, &conds, placed, outer_rows, st, &needed,
                        )
                    }
                    _ => None,
                };
                plan.levels[lvl].access = match hash {
                    Some(keys) => Access::JoinBuffer { keys },
                    None => access,
                };
            }
            // An inner table read by scan is read once, into a hash join buffer (not a
            // LATERAL derived table, whose rows differ for each row before it).
            None if lvl > 0 && plan.scope.tables[ti].lateral.is_none() => {
                plan.levels[lvl].access = Access::JoinBuffer {
                    keys: hash_keys::hash_keys(&plan.scope, ti, &conds, placed),
                }
            }
            None => {}
        }
        if let Some(st) = &stats {
            let t = &plan.scope.tables[ti];
            let level = &plan.levels[lvl];
            let read = join_order::access_rows(&level.access, &t.def, &st[ti]);
            outer_rows *= (read * filtered::filtered(&plan.scope, level, Some(st))).max(1.0);
        }
        placed |= 1 << ti;
    }
    expensive_last::apply(plan);
    mark_possible_keys(plan);
    use_index_order(plan);
    columns::mark_read_columns(plan);
}

/// Whether reading inner table `ti` once into a hash join buffer is estimated cheaper than
/// `access`, an index lookup per outer row through a secondary index that has to fetch
/// each row (TPC-H Q13: 15,000 customers each probing orders through o_custkey reads
/// all 150,000 orders one random row at a time; one scan and a hash table read them in
/// order). The keys of the buffer when it is: equi-join columns only, only when each
/// lookup reads several rows, and only by a clear margin, since the estimate of
/// `outer_rows` is rough. Both plans give the same
/// rows (every condition is still checked on each row).
#[allow(clippy::too_many_arguments)]
fn hash_beats_lookups(
    plan: &SelectPlan,
    ti: usize,
    access: &Access,
    conds: &[&Expr],
    placed: u64,
    outer_rows: f64,
    stats: &[Arc<TableStats>],
    needed: &Option<Vec<bool>>,
) -> Option<Vec<crate::plan::block::HashKey>> {
    use join_order::{BUFFERED_ROW, LOOKUP, PROBE, ROW, SECONDARY_ROW};
    let t = &plan.scope.tables[ti];
    let Access::Index { index, eq, .. } = access else {
        return None;
    };
    let cols = needed
        .as_ref()
        .map(|n| n[t.offset..t.offset + t.def.columns.len()].to_vec());
    if eq.is_empty()
        || t.def.indexes[*index].primary
        || cols.is_some_and(|c| t.table.covers(*index, &c))
    {
        return None;
    }
    let keys = hash_keys::hash_keys(&plan.scope, ti, conds, placed);
    if keys.is_empty() {
        return None;
    }
    let st = &stats[ti];
    let rows = st.rows.max(1) as f64;
    // A buffer holds the whole table: not for one near the buffer's limit.
    if rows > 2_000_000.0 {
        return None;
    }
    let read = join_order::access_rows(access, &t.def, st);
    // A lookup that finds one row or two is what an index is for: kept.
    if read < 4.0 {
        return None;
    }
    let lookups = outer_rows * (LOOKUP + read * (ROW + SECONDARY_ROW));
    let hashed = rows * ROW + outer_rows * (PROBE + read * BUFFERED_ROW);
    (hashed * 1.5 < lookups).then_some(keys)
}
