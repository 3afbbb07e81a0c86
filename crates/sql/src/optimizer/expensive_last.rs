//! Rewrite rule: conditions that run a correlated subquery are checked last, and as late
//! in the join as they can be without being checked more often.
//!
//! The planner places every condition at the first level where the columns it reads are
//! in place (`plan::join_groups::place`). For a comparison that is right: the sooner a
//! row is dropped the less work follows. A correlated subquery is different: each check
//! runs a whole query block (an index descent at best, thousands of instructions), so
//! it should see as few rows as possible. Two moves, neither of which changes the rows:
//!
//! 1. Within a level, such conditions come after the others (a conjunction's value does
//!    not depend on the order its terms are checked in), so cheap comparisons drop rows
//!    before a subquery runs for them.
//! 2. A level followed by an inner-join table read by a unique-key equality (EXPLAIN's
//!    `eq_ref`: at most one row per row before it) hands such conditions on to that level:
//!    the rows reaching it are the same rows or fewer, so the subquery runs no more often
//!    and usually less (TPC-H Q21: `EXISTS`/`NOT EXISTS` on `lineitem l1` wait for the
//!    `orders` row, whose `o_orderstatus = 'F'` drops half of them first). Only plain
//!    inner levels take part: a WHERE condition must not move onto or past the inner
//!    side of an outer join, where it would see NULL-extended rows.
//!
//! MySQL 8 orders a table's conditions by cost the same way (subqueries after plain
//! comparisons); it does not move them to a later table.

use crate::expr::Expr;
use crate::plan::block::{Access, Level, SelectPlan};

/// Applies both moves to the levels of `plan` (after access paths are chosen: the second
/// needs to know which levels are `eq_ref`).
pub fn apply(plan: &mut SelectPlan) {
    let n = plan.levels.len();
    for l in 0..n {
        let (costly, cheap): (Vec<Expr>, Vec<Expr>) = std::mem::take(&mut plan.levels[l].filter)
            .into_iter()
            .partition(runs_correlated_subquery);
        plan.levels[l].filter = cheap;
        let mut to = l;
        while to + 1 < n && plain_inner(&plan.levels[to]) && is_eq_ref(plan, to + 1) {
            to += 1;
        }
        plan.levels[to].filter.extend(costly);
    }
    // A level that received conditions from before it keeps its own cheap ones first:
    // the loop above appended them after the level's own filters already.
}

/// Whether `e` runs a subquery that reads values of the row it is checked on.
pub fn runs_correlated_subquery(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if let Expr::Subquery(s) = x {
            found |= !s.correlated.is_empty();
        }
    });
    found
}

/// A level of the block's own inner join: not inside an outer-join group.
fn plain_inner(level: &Level) -> bool {
    !level.outer && level.chain.is_empty() && level.starts.is_none() && level.on.is_empty()
}

/// Level `l` is a plain inner level that reads at most one row per row before it: an
/// equality on every column of a unique index.
fn is_eq_ref(plan: &SelectPlan, l: usize) -> bool {
    let level = &plan.levels[l];
    if !plain_inner(level) {
        return false;
    }
    let Access::Index {
        index,
        eq,
        lower: None,
        upper: None,
        ..
    } = &level.access
    else {
        return false;
    };
    let def = &plan.scope.tables[level.table].def;
    def.indexes
        .get(*index)
        .is_some_and(|ix| (ix.unique || ix.primary) && eq.len() == ix.columns.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{CmpOp, Subquery, SubqueryKind};
    use strata_types::{Collation, Value};

    fn exists(correlated: Vec<Expr>) -> Expr {
        Expr::Subquery(Box::new(Subquery {
            id: 0,
            kind: SubqueryKind::Exists { negated: false },
            correlated,
        }))
    }

    fn cmp(col: usize, v: i64) -> Expr {
        Expr::Cmp(
            CmpOp::Eq,
            Box::new(Expr::Column(col)),
            Box::new(Expr::Literal(Value::Int(v))),
            Collation::default(),
        )
    }

    #[test]
    fn only_subqueries_that_read_the_row_count_as_costly() {
        assert!(runs_correlated_subquery(&exists(vec![Expr::Column(0)])));
        assert!(!runs_correlated_subquery(&exists(vec![])));
        assert!(!runs_correlated_subquery(&cmp(0, 1)));
        let and = Expr::And(Box::new(cmp(0, 1)), Box::new(exists(vec![Expr::Column(1)])));
        assert!(runs_correlated_subquery(&and));
    }
}
