//! The optimizer: shapes a bound query block without changing its answer. Condition
//! rewrites ([`rewrite`]: OR factoring, implied single-table conditions of an OR across
//! tables), join order by cost ([`join_order`]), access paths per table ([`access`]) and hash
//! join keys for tables without a usable index ([`hash_keys`]); [`choose_access_paths`] runs
//! them in that order for one block. (The semi-join rule that turns a correlated `EXISTS`
//! into a hashed `IN` runs while binding, as MySQL's resolver does: `bind::decorrelate`.)
//! Each rule has unit tests beside it and slt files checked against MariaDB.

pub mod access;
pub mod equalities;
pub mod hash_keys;
pub mod join_order;
pub mod outer_join;
pub mod rewrite;
pub mod selectivity;

use crate::context::ExecCtx;
use crate::expr::Expr;
use crate::plan::block::{Access, SelectPlan};
use access::{best_access, mark_possible_keys, use_index_order};
use join_order::choose_join_order;

/// Plans the join: the table order (by estimated cost, for inner joins of up to
/// [`MAX_REORDER`] tables), each table's access path, and where each condition is
/// checked (at the first table by which all it reads is in place).
pub(crate) fn choose_access_paths(plan: &mut SelectPlan, cx: &ExecCtx) {
    let n = plan.levels.len();
    if n >= 2 && !plan.fixed_order {
        choose_join_order(plan, cx);
    }
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
            Some((_, access)) => plan.levels[lvl].access = access,
            // An inner table read by scan is read once, into a hash join buffer.
            None if lvl > 0 => {
                plan.levels[lvl].access = Access::JoinBuffer {
                    keys: hash_keys::hash_keys(&plan.scope, ti, &conds, placed),
                }
            }
            None => {}
        }
        placed |= 1 << ti;
    }
    mark_possible_keys(plan);
    use_index_order(plan);
}
