//! Join order by cost. Each table placed after others is a [`Step`]: what its access
//! path costs per row of the tables before it (index lookups and the rows they read, or
//! one probe of a hash join buffer built once), and how many rows it yields per such
//! row, from the access path's row estimate ([`crate::catalog::stats`]) times the
//! selectivity of the other conditions checked there ([`super::selectivity`]). An
//! order's cost is the sum over its steps; [`search`] finds the cheapest left-deep order
//! by dynamic programming up to [`MAX_EXHAUSTIVE`] tables and greedily beyond (like
//! MySQL's `optimizer_search_depth`), never taking a cartesian product while a table
//! joined by a condition is left. At most [`MAX_JOIN_TABLES`] tables (1116).

use crate::bind::{Scope, ScopeTable};
use crate::catalog::stats::TableStats;
use crate::context::ExecCtx;
use crate::expr::{CmpOp, Expr};
use crate::optimizer::access::{best_access, tables_mask};
use crate::optimizer::hash_keys::hash_keys;
use crate::plan::block::{Access, Level, SelectPlan};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// The most tables one query block may join: the planner keeps a bit per table in a
/// u64 (MySQL's limit is 61 too).
pub const MAX_JOIN_TABLES: usize = 61;

/// Planner statistics for a table, sampled under a read lock (not under LOCK TABLES,
/// whose locks the session already holds). None when they cannot be read.
pub fn table_stats(cx: &ExecCtx, table: &Arc<dyn strata_engine::Table>) -> Option<Arc<TableStats>> {
    let _lock = cx
        .locked_tables
        .is_none()
        .then(|| table.lock(strata_engine::LockMode::Read));
    cx.catalog.stats().get(table, cx.txn).ok()
}

/// Estimated rows one lookup with `access` reads, from the statistics.
pub fn access_rows(access: &Access, def: &strata_types::TableDef, stats: &TableStats) -> f64 {
    let rows = stats.rows.max(1) as f64;
    match access {
        Access::Scan | Access::JoinBuffer { .. } => rows,
        Access::IndexIn { index, values } => {
            (values.len() as f64 * stats.rows_per_lookup(*index, 1)).min(rows)
        }
        // The subquery's size is not known when planning: a tenth of the table, the
        // guess for an equality (`selectivity::EQ`).
        Access::IndexInSubquery { .. } => (rows * super::selectivity::EQ).max(1.0),
        Access::Index {
            index,
            eq,
            lower,
            upper,
            ..
        } => {
            let ix = &def.indexes[*index];
            let base = if eq.is_empty() {
                rows
            } else if eq.len() == ix.columns.len() && ix.unique {
                1.0
            } else {
                stats.rows_per_lookup(*index, eq.len())
            };
            // Without a count, a closed range is taken to select a twentieth of what the
            // equality prefix leaves, an open one a third (the old MySQL guesses).
            match (lower.is_some(), upper.is_some()) {
                (true, true) => (base / 20.0).max(1.0),
                (true, false) | (false, true) => (base / 3.0).max(1.0),
                _ => base,
            }
        }
    }
}

/// Cost of reading one row from a table (a scan, or one row of an index range).
pub(crate) const ROW: f64 = 1.0;
/// Cost of one index descent (an `eq_ref`/`ref` lookup, one value of an IN list).
pub(crate) const LOOKUP: f64 = 2.0;
/// Extra cost per row found through a secondary index: the primary-key lookup that
/// fetches the row (InnoDB's clustered index; a MyISAM data-file read), a descent of
/// its own, to a page that is rarely the one before.
pub(crate) const SECONDARY_ROW: f64 = LOOKUP;
/// Cost of probing a hash join buffer once, and of each row a probe yields.
pub(crate) const PROBE: f64 = 0.5;
pub(crate) const BUFFERED_ROW: f64 = 0.5;

/// What placing one table after a set of tables adds to a join order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Step {
    /// Cost paid once per execution (reading the table into a hash join buffer).
    pub once: f64,
    /// Cost paid per row of the tables before it (its lookups and the rows they read).
    pub per_row: f64,
    /// Rows it yields per row of the tables before it, after the conditions checked
    /// there: the join's cardinality is the product of the fanouts.
    pub fanout: f64,
}

/// A join order's cost: each step's one-off cost plus its per-row cost times the rows
/// the tables before it yield.
pub(crate) fn order_cost(order: &[usize], step: &dyn Fn(usize, u64) -> Step) -> f64 {
    let (mut cost, mut rows, mut placed) = (0.0, 1.0, 0u64);
    for &t in order {
        let s = step(t, placed);
        cost += s.once + rows * s.per_row;
        rows *= s.fanout;
        placed |= 1 << t;
    }
    cost
}

/// Whether `t` may come next after `placed`: a table some condition joins to those
/// already placed, or any table when none is joined to them (a cartesian product only
/// when nothing else is left, as MySQL defers them).
fn allowed(n: usize, t: usize, placed: u64, connected: &dyn Fn(usize, u64) -> bool) -> bool {
    placed == 0
        || connected(t, placed)
        || !(0..n).any(|u| placed & (1 << u) == 0 && connected(u, placed))
}

/// Joins of up to this many tables search every left-deep order by dynamic programming
/// over the sets of tables placed (n·2ⁿ steps: 10,240 for ten tables); larger ones are
/// ordered greedily, as MySQL bounds its search with `optimizer_search_depth`.
pub(crate) const MAX_EXHAUSTIVE: usize = 10;

/// The cheapest left-deep order of `n` tables under `step`, never placing a table that
/// no condition joins to those before it while one that is joined remains
/// (`connected`). `keep` (the FROM order) is kept unless the search finds an order at
/// least 0.1 % cheaper, so that equal costs do not reorder a query.
pub(crate) fn search(
    n: usize,
    step: &dyn Fn(usize, u64) -> Step,
    connected: &dyn Fn(usize, u64) -> bool,
    keep: &[usize],
) -> Vec<usize> {
    let found = if n <= MAX_EXHAUSTIVE {
        exhaustive(n, step, connected)
    } else {
        greedy(n, step, connected)
    };
    let keep_ok = keep.len() == n && {
        let mut placed = 0u64;
        keep.iter().all(|&t| {
            let ok = allowed(n, t, placed, connected);
            placed |= 1 << t;
            ok
        })
    };
    if keep_ok && order_cost(keep, step) * 0.999 <= order_cost(&found, step) {
        keep.to_vec()
    } else {
        found
    }
}

/// Dynamic programming over subsets: the cheapest way to have placed each set of
/// tables, extended one allowed table at a time (every subset of a set is numerically
/// smaller, so one pass in numeric order sees each set complete before extending it).
fn exhaustive(
    n: usize,
    step: &dyn Fn(usize, u64) -> Step,
    connected: &dyn Fn(usize, u64) -> bool,
) -> Vec<usize> {
    #[derive(Clone, Copy)]
    struct Best {
        cost: f64,
        rows: f64,
        last: usize,
    }
    let full = (1u64 << n) - 1;
    let mut best: Vec<Option<Best>> = vec![None; 1 << n];
    best[0] = Some(Best {
        cost: 0.0,
        rows: 1.0,
        last: 0,
    });
    for set in 0..full {
        let Some(b) = best[set as usize] else {
            continue;
        };
        for t in 0..n {
            if set & (1 << t) != 0 || !allowed(n, t, set, connected) {
                continue;
            }
            let s = step(t, set);
            let next = Best {
                cost: b.cost + s.once + b.rows * s.per_row,
                rows: b.rows * s.fanout,
                last: t,
            };
            let slot = &mut best[(set | 1 << t) as usize];
            if slot.is_none_or(|o| next.cost < o.cost) {
                *slot = Some(next);
            }
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut set = full;
    while set != 0 {
        let Some(b) = best[set as usize] else {
            // Unreachable (every table is always allowed once the others are placed);
            // the FROM order is a correct answer anyway.
            return (0..n).collect();
        };
        order.push(b.last);
        set &= !(1 << b.last);
    }
    order.reverse();
    order
}

/// Greedy: at each step the allowed table that adds the least cost plus the rows it
/// leaves for the tables after it.
fn greedy(
    n: usize,
    step: &dyn Fn(usize, u64) -> Step,
    connected: &dyn Fn(usize, u64) -> bool,
) -> Vec<usize> {
    let (mut order, mut placed, mut rows) = (Vec::with_capacity(n), 0u64, 1.0);
    for _ in 0..n {
        let mut pick: Option<(f64, usize, f64)> = None;
        for t in 0..n {
            if placed & (1 << t) != 0 || !allowed(n, t, placed, connected) {
                continue;
            }
            let s = step(t, placed);
            let score = s.once + rows * s.per_row + rows * s.fanout;
            if pick.is_none_or(|(p, _, _)| score < p) {
                pick = Some((score, t, s.fanout));
            }
        }
        let Some((_, t, fanout)) = pick else {
            break;
        };
        order.push(t);
        placed |= 1 << t;
        rows *= fanout;
    }
    order
}

/// Distinct values of scope column `p`, when an index of its table leads with it.
pub(crate) fn distinct(scope: &Scope, stats: &[Arc<TableStats>], p: usize) -> Option<f64> {
    let ti = scope.table_of(p);
    let t = &scope.tables[ti];
    let col = p - t.offset;
    let st = &stats[ti];
    let rows = st.rows.max(1) as f64;
    t.def
        .indexes
        .iter()
        .enumerate()
        .filter(|(_, ix)| !ix.invisible && ix.columns.first() == Some(&col))
        .map(|(i, ix)| {
            if ix.unique && ix.columns.len() == 1 {
                rows
            } else {
                (rows / st.rows_per_lookup(i, 1).max(1.0)).max(1.0)
            }
        })
        .reduce(f64::max)
}

/// The column (table-relative) of the table at `off..off + width` that `e` compares for
/// equality with a column of another table.
fn join_column(e: &Expr, off: usize, width: usize) -> Option<usize> {
    let Expr::Cmp(CmpOp::Eq, a, b, _) = e else {
        return None;
    };
    let mine = |p: usize| (off..off + width).contains(&p);
    match (a.as_ref(), b.as_ref()) {
        (Expr::Column(x), Expr::Column(y)) if mine(*x) && !mine(*y) => Some(x - off),
        (Expr::Column(y), Expr::Column(x)) if mine(*x) && !mine(*y) => Some(x - off),
        _ => None,
    }
}

/// Whether condition `c` on table `ti` (columns from `off`) is what `access` reads by:
/// its selectivity is then already in the access path's row estimate.
fn drives(c: &Expr, access: &Access, t: &ScopeTable) -> bool {
    let (def, off) = (&t.def, t.offset);
    let on_col = |e: &Expr, cols: &[usize]| matches!(e, Expr::Column(p) if *p >= off && cols.contains(&(*p - off)));
    match access {
        Access::Index {
            index,
            eq,
            lower,
            upper,
            ..
        } => {
            let cols = crate::plan::block::key_columns(t, *index);
            let eq_cols = &cols[..eq.len().min(cols.len())];
            let range_col: &[usize] = match cols.get(eq.len()) {
                Some(c) if lower.is_some() || upper.is_some() => std::slice::from_ref(c),
                _ => &[],
            };
            match c {
                Expr::Cmp(CmpOp::Eq, a, b, _) => on_col(a, eq_cols) || on_col(b, eq_cols),
                Expr::Cmp(CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, a, b, _) => {
                    on_col(a, range_col) || on_col(b, range_col)
                }
                Expr::Between {
                    expr,
                    negated: false,
                    ..
                } => on_col(expr, range_col),
                _ => false,
            }
        }
        Access::IndexIn { index, .. } => match c {
            Expr::InList {
                expr,
                negated: false,
                ..
            } => on_col(expr, &def.indexes[*index].columns[..1]),
            _ => false,
        },
        _ => false,
    }
}

/// Picks the cheapest order of an inner join (see [`search`]) by the cost of each
/// table's access path given the tables before it ([`Step`]), and moves every WHERE
/// conjunct to the first level where all it reads is in place.
pub(crate) fn choose_join_order(plan: &mut SelectPlan, cx: &ExecCtx) {
    let n = plan.levels.len();
    let mut stats = Vec::with_capacity(n);
    for t in &plan.scope.tables {
        match table_stats(cx, &t.table) {
            Some(s) => stats.push(s),
            None => return,
        }
    }
    let mut pool: Vec<(u64, Expr)> = Vec::new();
    for level in &mut plan.levels {
        for e in std::mem::take(&mut level.filter) {
            pool.push((tables_mask(&plan.scope, &e), e));
        }
    }
    let scope = &plan.scope;
    let implied =
        super::equalities::implied(scope, &pool.iter().map(|(_, e)| e).collect::<Vec<_>>());
    pool.extend(implied.into_iter().map(|e| (tables_mask(scope, &e), e)));
    let ndv = |p: usize| distinct(scope, &stats, p);
    let needed = super::columns::needed_columns(plan);
    // An index-only read of a secondary index costs what a primary-key read does: no
    // row lookup per entry.
    let covering = |ti: usize, index: usize| {
        let t = &scope.tables[ti];
        needed.as_ref().is_some_and(|n| {
            t.table
                .covers(index, &n[t.offset..t.offset + t.def.columns.len()])
        })
    };
    let step = |ti: usize, placed: u64| -> Step {
        let bit = 1u64 << ti;
        let conds: Vec<(u64, &Expr)> = pool
            .iter()
            .filter(|(m, _)| m & bit != 0 && m & !(placed | bit) == 0)
            .map(|(m, e)| (*m, e))
            .collect();
        let exprs: Vec<&Expr> = conds.iter().map(|(_, e)| *e).collect();
        let t = &scope.tables[ti];
        let st = &stats[ti];
        let rows = st.rows.max(1) as f64;
        // The product of the selectivities of the conditions `keep` selects. An
        // equality joining a column of this table counts once per column: with
        // propagated equalities (`a = b`, `b = c`, `a = c`) the others are implied.
        let sel_of = |keep: &dyn Fn(u64, &Expr) -> bool, mut joined: Vec<usize>| -> f64 {
            let mut s = 1.0;
            for (m, e) in &conds {
                if !keep(*m, e) {
                    continue;
                }
                if let Some(x) = join_column(e, t.offset, t.def.columns.len()) {
                    if joined.contains(&x) {
                        continue;
                    }
                    joined.push(x);
                }
                s *= super::selectivity::selectivity(e, &ndv);
            }
            s
        };
        match best_access(scope, ti, &exprs, placed) {
            Some((_, access)) => {
                let read = access_rows(&access, &t.def, st);
                let driving: Vec<usize> = conds
                    .iter()
                    .filter(|(_, e)| drives(e, &access, t))
                    .filter_map(|(_, e)| join_column(e, t.offset, t.def.columns.len()))
                    .collect();
                let rest = sel_of(&|_, e| !drives(e, &access, t), driving);
                let (lookups, primary) = match &access {
                    Access::Index { index, .. } => {
                        (1.0, t.def.indexes[*index].primary || covering(ti, *index))
                    }
                    Access::IndexIn { index, values } => (
                        values.len() as f64,
                        t.def.indexes[*index].primary || covering(ti, *index),
                    ),
                    Access::IndexInSubquery { index, .. } => (
                        read / stats[ti].rows_per_lookup(*index, 1).max(1.0),
                        t.def.indexes[*index].primary || covering(ti, *index),
                    ),
                    _ => (1.0, true),
                };
                let row = if primary { ROW } else { ROW + SECONDARY_ROW };
                Step {
                    once: 0.0,
                    per_row: lookups * LOOKUP + read * row,
                    fanout: read * rest,
                }
            }
            None if placed == 0 => Step {
                once: 0.0,
                per_row: rows * ROW,
                fanout: rows * sel_of(&|_, _| true, Vec::new()),
            },
            None => {
                // A hash join: the table read once, probed on its equi-join keys.
                let keys = hash_keys(scope, ti, &exprs, placed);
                let is_key = |m: u64, e: &Expr| {
                    m != bit
                        && matches!(e, Expr::Cmp(CmpOp::Eq, a, b, _)
                            if [a, b].iter().any(|x| matches!(x.as_ref(),
                                Expr::Column(p) if keys.iter().any(|k| k.column + t.offset == *p))))
                };
                let hits = rows * sel_of(&|m, e| is_key(m, e), Vec::new());
                let keyed = keys.iter().map(|k| k.column).collect();
                let rest = sel_of(&|m, e| !is_key(m, e), keyed);
                Step {
                    once: rows * ROW,
                    per_row: PROBE + hits * BUFFERED_ROW,
                    fanout: hits * rest,
                }
            }
        }
    };
    // A step depends on the tables placed only through those its conditions read (and
    // whether it is the first): the search asks again for the same ones many times.
    let neighbours: Vec<u64> = (0..n)
        .map(|ti| {
            let bit = 1u64 << ti;
            pool.iter()
                .filter(|(m, _)| m & bit != 0)
                .fold(0, |acc, (m, _)| acc | m)
                & !bit
        })
        .collect();
    let memo: RefCell<HashMap<(usize, u64, bool), Step>> = RefCell::new(HashMap::new());
    let step = |ti: usize, placed: u64| -> Step {
        let key = (ti, placed & neighbours[ti], placed == 0);
        if let Some(s) = memo.borrow().get(&key) {
            return *s;
        }
        let s = step(ti, placed);
        memo.borrow_mut().insert(key, s);
        s
    };
    let connected = |ti: usize, placed: u64| {
        let bit = 1u64 << ti;
        pool.iter()
            .any(|(m, _)| m & bit != 0 && m & placed != 0 && m & !(placed | bit) == 0)
    };
    let from: Vec<usize> = plan.levels.iter().map(|l| l.table).collect();
    let order = search(n, &step, &connected, &from);
    let mut old: Vec<Option<Level>> = std::mem::take(&mut plan.levels)
        .into_iter()
        .map(Some)
        .collect();
    // Levels are found by their table (the FROM order is the levels' order here).
    plan.levels = order
        .iter()
        .filter_map(|&ti| {
            from.iter()
                .position(|&f| f == ti)
                .and_then(|l| old[l].take())
        })
        .collect();
    let mut covered = Vec::with_capacity(n);
    let mut placed = 0u64;
    for level in &plan.levels {
        placed |= 1 << level.table;
        covered.push(placed);
    }
    for (m, e) in pool {
        let lvl = covered.iter().position(|c| m & !c == 0).unwrap_or(n - 1);
        plan.levels[lvl].filter.push(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain a–b–c joined through keys, with `c` tiny: reading `c` and `a` first
    /// would be a cartesian product (nothing joins them), cheap by rows but refused
    /// while a joined table is left.
    fn chain_step(t: usize, placed: u64) -> Step {
        let joined = |u: usize| placed & (1 << u) != 0;
        match t {
            // a: 1000 rows, or one per b row through its key.
            0 if joined(1) => Step {
                once: 0.0,
                per_row: 3.0,
                fanout: 1.0,
            },
            0 => Step {
                once: 0.0,
                per_row: 1000.0,
                fanout: 1000.0,
            },
            // b: 100 rows, 10 per a or per c row through an index.
            1 if joined(0) || joined(2) => Step {
                once: 0.0,
                per_row: 12.0,
                fanout: 10.0,
            },
            1 => Step {
                once: 0.0,
                per_row: 100.0,
                fanout: 100.0,
            },
            // c: 2 rows.
            _ => Step {
                once: 0.0,
                per_row: 2.0,
                fanout: 2.0,
            },
        }
    }
    fn chain_connected(t: usize, placed: u64) -> bool {
        let has = |u: usize| placed & (1 << u) != 0;
        match t {
            0 | 2 => has(1),
            _ => has(0) || has(2),
        }
    }

    #[test]
    fn the_cheapest_connected_order_wins() {
        // c (2 rows) → b (20) → a (20 lookups): cost 2 + 24 + 60.
        let order = search(3, &chain_step, &chain_connected, &[0, 1, 2]);
        assert_eq!(order, vec![2, 1, 0]);
        assert_eq!(order_cost(&order, &chain_step), 86.0);
    }

    #[test]
    fn no_cartesian_step_while_a_joined_table_is_left() {
        // Unrestricted, c then a would look cheap: c's 2 rows times a hash join of a.
        let step = |t: usize, placed: u64| {
            if t == 0 && placed == 1 << 2 {
                Step {
                    once: 1000.0,
                    per_row: 0.5,
                    fanout: 0.001,
                }
            } else {
                chain_step(t, placed)
            }
        };
        for order in [
            exhaustive(3, &step, &chain_connected),
            greedy(3, &step, &chain_connected),
        ] {
            let mut placed = 0u64;
            for &t in &order {
                assert!(placed == 0 || chain_connected(t, placed), "{order:?}");
                placed |= 1 << t;
            }
        }
    }

    #[test]
    fn a_table_joined_to_nothing_comes_last() {
        // Table 3 (5 rows) has no condition at all: it can only be a cartesian product.
        let connected = |t: usize, placed: u64| t != 3 && chain_connected(t, placed);
        let step = |t: usize, placed: u64| {
            if t == 3 {
                Step {
                    once: 0.0,
                    per_row: 5.0,
                    fanout: 5.0,
                }
            } else {
                chain_step(t, placed)
            }
        };
        let order = search(4, &step, &connected, &[0, 1, 2, 3]);
        assert_eq!(order, vec![2, 1, 0, 3]);
    }

    #[test]
    fn equal_costs_keep_the_from_order() {
        let step = |_: usize, _: u64| Step {
            once: 0.0,
            per_row: 5.0,
            fanout: 1.0,
        };
        let connected = |_: usize, _: u64| true;
        assert_eq!(search(3, &step, &connected, &[2, 0, 1]), vec![2, 0, 1]);
    }

    #[test]
    fn greedy_beyond_the_exhaustive_bound_is_connected_too() {
        // A star of MAX_EXHAUSTIVE + 5 tables around table 0; each satellite is small.
        let n = MAX_EXHAUSTIVE + 5;
        let connected = |t: usize, placed: u64| t == 0 || placed & 1 != 0;
        let step = |t: usize, placed: u64| match t {
            0 if placed == 0 => Step {
                once: 0.0,
                per_row: 1e6,
                fanout: 1e6,
            },
            0 => Step {
                once: 0.0,
                per_row: 3.0,
                fanout: 1.0,
            },
            _ => Step {
                once: 0.0,
                per_row: 10.0,
                fanout: 10.0,
            },
        };
        let order = search(n, &step, &connected, &(0..n).collect::<Vec<_>>());
        assert_eq!(order.len(), n);
        assert_eq!(order[1], 0, "{order:?}");
    }
}
