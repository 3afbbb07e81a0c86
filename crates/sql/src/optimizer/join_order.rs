//! Join order by cost: row estimates per access path from sampled statistics
//! ([`crate::catalog::stats`]), exhaustive search up to [`MAX_REORDER`] tables and greedy
//! beyond (like MySQL's `optimizer_search_depth`), at most [`MAX_JOIN_TABLES`] tables (1116).

use crate::catalog::stats::TableStats;
use crate::context::ExecCtx;
use crate::expr::Expr;
use crate::optimizer::access::{best_access, tables_mask};
use crate::plan::block::{Access, Level, SelectPlan};
use std::cmp::Ordering;
use std::sync::Arc;

/// Joins of up to this many tables try every order (n! at worst, cut by cost); larger
/// ones are ordered greedily, cheapest next table first, as MySQL bounds its search with
/// `optimizer_search_depth`.
pub(crate) const MAX_REORDER: usize = 7;

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

/// Picks the cheapest order of an inner join: for every order (depth-first, cut off
/// once a partial order costs more than the best full one), the cost is the rows read,
/// each table's estimated rows per lookup times the rows of the tables before it.
/// Ties keep the FROM order.
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
    let step = |ti: usize, placed: u64| -> f64 {
        let bit = 1u64 << ti;
        let conds: Vec<&Expr> = pool
            .iter()
            .filter(|(m, _)| m & bit != 0 && m & !(placed | bit) == 0)
            .map(|(_, e)| e)
            .collect();
        let access = best_access(scope, ti, &conds, placed).map_or(Access::Scan, |(_, a)| a);
        access_rows(&access, &scope.tables[ti].def, &stats[ti])
    };
    struct Search<'a> {
        n: usize,
        step: &'a dyn Fn(usize, u64) -> f64,
        best: (f64, Vec<usize>),
        order: Vec<usize>,
    }
    fn dfs(s: &mut Search, placed: u64, prefix_rows: f64, cost: f64) {
        if cost >= s.best.0 {
            return;
        }
        if s.order.len() == s.n {
            s.best = (cost, s.order.clone());
            return;
        }
        for ti in 0..s.n {
            if placed & (1 << ti) != 0 {
                continue;
            }
            let rows = (s.step)(ti, placed);
            s.order.push(ti);
            dfs(
                s,
                placed | (1 << ti),
                prefix_rows * rows,
                cost + prefix_rows * rows,
            );
            s.order.pop();
        }
    }
    // The FROM order's cost first, so only a strictly cheaper order replaces it.
    let mut from_cost = 0.0;
    let mut prefix = 1.0;
    let mut placed = 0u64;
    for ti in 0..n {
        let rows = step(ti, placed);
        from_cost += prefix * rows;
        prefix *= rows;
        placed |= 1 << ti;
    }
    let mut search = Search {
        n,
        step: &step,
        best: (from_cost * 0.999, (0..n).collect()),
        order: Vec::with_capacity(n),
    };
    let order = if n <= MAX_REORDER {
        dfs(&mut search, 0, 1.0, 0.0);
        search.best.1
    } else {
        // Greedy: at each step the table that reads the fewest rows given those placed.
        let mut order = Vec::with_capacity(n);
        let mut placed = 0u64;
        for _ in 0..n {
            let next = (0..n)
                .filter(|ti| placed & (1 << ti) == 0)
                .min_by(|&a, &b| {
                    step(a, placed)
                        .partial_cmp(&step(b, placed))
                        .unwrap_or(Ordering::Equal)
                })
                .unwrap_or(0);
            order.push(next);
            placed |= 1 << next;
        }
        order
    };
    let mut old: Vec<Option<Level>> = std::mem::take(&mut plan.levels)
        .into_iter()
        .map(Some)
        .collect();
    plan.levels = order.iter().filter_map(|&ti| old[ti].take()).collect();
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
