//! EXPLAIN's `filtered` column: the fraction of the rows a table's access path reads that
//! its other conditions are estimated to let through, as MySQL 8's condition filtering
//! (`calculate_condition_filter`) computes it.
//!
//! A condition counts for the table when it compares one of the table's columns with
//! something that reads no column of this table (a constant, a parameter, a column of a
//! table joined before it): `t.a = 5`, `t.a > u.b`, `t.a BETWEEN 1 AND 9`,
//! `t.a IN (1, 2)`, `t.a LIKE 'x%'`, `t.a IS NULL`, and AND / OR / NOT of those. Its
//! estimate is [`super::selectivity`]'s. Conditions on a column the access path reads by
//! (the key parts of `ref`/`eq_ref`/`range`) are already in the row estimate and are
//! left out, as MySQL leaves out the key's fields; so is anything else (`t.a = t.b`, a
//! function of a column, a subquery). An equality joining one of the table's columns to
//! others counts once per column, so propagated equalities are not counted twice.

use crate::bind::{Scope, ScopeTable};
use crate::catalog::stats::TableStats;
use crate::expr::{CmpOp, Expr};
use crate::plan::block::{Access, Level};
use std::sync::Arc;

/// The fraction (0 < f ≤ 1) of the rows `level`'s access path reads that its conditions
/// keep. `stats` holds every scope table's statistics (None: nothing is known, 1).
pub fn filtered(scope: &Scope, level: &Level, stats: Option<&[Arc<TableStats>]>) -> f64 {
    let Some(stats) = stats else {
        return 1.0;
    };
    let t = &scope.tables[level.table];
    let (off, width) = (t.offset, t.def.columns.len());
    let cx = Filter {
        off,
        width,
        key_cols: key_columns(&level.access, t),
        ndv: &|p: usize| super::join_order::distinct(scope, stats, p),
    };
    let mut joined: Vec<usize> = Vec::new();
    let mut f = 1.0;
    // The inner table of an outer join: its ON conditions decide which of its rows join;
    // a WHERE condition checked there (`o_id IS NULL`) judges the NULL-extended row
    // after the join, not the rows read.
    let conds: &[Expr] = if level.outer {
        &level.on
    } else {
        &level.filter
    };
    for c in conds {
        if let Some(col) = cx.join_equality(c) {
            if joined.contains(&col) {
                continue;
            }
            joined.push(col);
        }
        if let Some(s) = cx.effect(c) {
            f *= s;
        }
    }
    // A table always yields something in the estimate: MySQL keeps the filter above
    // zero so the rows × filtered product of a later step never vanishes.
    f.clamp(0.0001, 1.0)
}

/// The table-relative columns `access` reads by.
fn key_columns(access: &Access, t: &ScopeTable) -> Vec<usize> {
    match access {
        Access::Index {
            index,
            eq,
            lower,
            upper,
            ..
        } => {
            let cols = crate::plan::block::key_columns(t, *index);
            let used = eq.len() + usize::from(lower.is_some() || upper.is_some());
            cols[..used.min(cols.len())].to_vec()
        }
        Access::IndexIn { index, .. } | Access::IndexInSubquery { index, .. } => {
            t.def.indexes[*index].columns[..1].to_vec()
        }
        Access::Scan | Access::JoinBuffer { .. } => Vec::new(),
    }
}

struct Filter<'a> {
    off: usize,
    width: usize,
    key_cols: Vec<usize>,
    ndv: &'a dyn Fn(usize) -> Option<f64>,
}

impl Filter<'_> {
    fn mine(&self, p: usize) -> bool {
        (self.off..self.off + self.width).contains(&p)
    }

    /// Whether `e` reads a column of this table.
    fn reads_me(&self, e: &Expr) -> bool {
        let mut found = false;
        e.walk(&mut |x| {
            if let Expr::Column(p) = x {
                found |= self.mine(*p);
            }
        });
        found
    }

    /// A column of this table that the access path does not read by.
    fn free_column(&self, e: &Expr) -> bool {
        matches!(e, Expr::Column(p) if self.mine(*p) && !self.key_cols.contains(&(p - self.off)))
    }

    /// `subject` is a free column of this table and none of `others` reads this table.
    fn about_me<'e>(&self, subject: &Expr, others: impl IntoIterator<Item = &'e Expr>) -> bool {
        self.free_column(subject) && others.into_iter().all(|o| !self.reads_me(o))
    }

    /// The column of this table an equality `t.x = <other table's column>` joins.
    fn join_equality(&self, e: &Expr) -> Option<usize> {
        let Expr::Cmp(CmpOp::Eq, a, b, _) = e else {
            return None;
        };
        match (a.as_ref(), b.as_ref()) {
            (Expr::Column(x), Expr::Column(y)) | (Expr::Column(y), Expr::Column(x))
                if self.mine(*x) && !self.mine(*y) =>
            {
                Some(x - self.off)
            }
            _ => None,
        }
    }

    /// The fraction of rows `e` keeps, None when it does not count for this table.
    fn effect(&self, e: &Expr) -> Option<f64> {
        let leaf = || Some(super::selectivity::selectivity(e, self.ndv));
        match e {
            Expr::And(a, b) => match (self.effect(a), self.effect(b)) {
                (None, None) => None,
                (x, y) => Some(x.unwrap_or(1.0) * y.unwrap_or(1.0)),
            },
            Expr::Or(a, b) => {
                let (x, y) = (self.effect(a)?, self.effect(b)?);
                Some(x + y - x * y)
            }
            Expr::Not(a) => self.effect(a).map(|x| 1.0 - x),
            Expr::Cmp(_, a, b, _) => {
                (self.about_me(a, [b.as_ref()]) || self.about_me(b, [a.as_ref()])).then(leaf)?
            }
            Expr::Between {
                expr, low, high, ..
            } => self
                .about_me(expr, [low.as_ref(), high.as_ref()])
                .then(leaf)?,
            Expr::InList { expr, list, .. } => self.about_me(expr, list).then(leaf)?,
            Expr::Like { expr, pattern, .. } => {
                self.about_me(expr, [pattern.as_ref()]).then(leaf)?
            }
            Expr::IsNull(a, _) => self.free_column(a).then(leaf)?,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{Collation, Value};

    fn col(p: usize) -> Box<Expr> {
        Box::new(Expr::Column(p))
    }
    fn lit(v: i64) -> Box<Expr> {
        Box::new(Expr::Literal(Value::Int(v)))
    }
    fn cmp(op: CmpOp, a: Box<Expr>, b: Box<Expr>) -> Expr {
        Expr::Cmp(op, a, b, Collation::Binary)
    }
    /// This table's columns are scope positions 3..6; column 3 has 50 distinct values.
    fn with(key_cols: Vec<usize>, f: impl FnOnce(&Filter)) {
        let ndv = |p: usize| (p == 3).then_some(50.0);
        f(&Filter {
            off: 3,
            width: 3,
            key_cols,
            ndv: &ndv,
        })
    }
    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn a_column_of_this_table_against_a_value_counts() {
        with(vec![], |f| {
            assert!(close(f.effect(&cmp(CmpOp::Eq, col(3), lit(1))), 0.02));
            assert!(close(f.effect(&cmp(CmpOp::Eq, lit(1), col(4))), 0.1));
            assert!(close(
                f.effect(&cmp(CmpOp::Gt, col(4), col(0))),
                super::super::selectivity::RANGE
            ));
        });
    }

    #[test]
    fn key_columns_and_same_table_comparisons_do_not() {
        with(vec![0], |f| {
            // Column 3 is the table's column 0, read by the key.
            assert_eq!(f.effect(&cmp(CmpOp::Eq, col(3), lit(1))), None);
            assert_eq!(f.effect(&cmp(CmpOp::Eq, col(4), col(5))), None);
            // A function of a column: nothing known.
            let g = Expr::Arith(crate::expr::ArithOp::Add, col(4), lit(1));
            assert_eq!(f.effect(&cmp(CmpOp::Eq, Box::new(g), lit(2))), None);
        });
    }

    #[test]
    fn connectives_combine_what_counts() {
        with(vec![], |f| {
            let a = cmp(CmpOp::Eq, col(4), lit(1));
            let other = cmp(CmpOp::Eq, col(0), lit(1));
            let and = Expr::And(Box::new(a.clone()), Box::new(other.clone()));
            assert!(close(f.effect(&and), 0.1));
            // An OR with a branch that says nothing about this table keeps every row.
            let or = Expr::Or(Box::new(a.clone()), Box::new(other));
            assert_eq!(f.effect(&or), None);
            let or2 = Expr::Or(Box::new(a.clone()), Box::new(a.clone()));
            assert!(close(f.effect(&or2), 0.19));
            assert!(close(f.effect(&Expr::Not(Box::new(a))), 0.9));
        });
    }

    #[test]
    fn a_join_column_is_recognised_once() {
        with(vec![], |f| {
            assert_eq!(f.join_equality(&cmp(CmpOp::Eq, col(4), col(0))), Some(1));
            assert_eq!(f.join_equality(&cmp(CmpOp::Eq, col(0), col(5))), Some(2));
            assert_eq!(f.join_equality(&cmp(CmpOp::Eq, col(4), col(5))), None);
        });
    }
}
