//! Cardinality estimates for the join order: the fraction of rows a condition lets
//! through (its selectivity), from the number of distinct values of the columns it
//! compares when an index's statistics give it, and from fixed guesses otherwise.
//!
//! The guesses are MySQL 8's (`COND_FILTER_*` in its optimizer): an equality with no
//! statistics keeps a tenth of the rows, a one-sided range a third, a BETWEEN a ninth.
//! An equality between two columns keeps `1 / max(distinct values of either side)`, the
//! textbook estimate for a join through a key (`orders.o_custkey = customer.c_custkey`
//! keeps one customer per order). Conditions the estimate knows nothing about (a
//! function, a subquery) keep every row: an estimate that is too high costs a slower
//! plan; one too low can put a large table where a small one was expected.
//!
//! Conjunctions are taken as independent (the product), as MySQL does.

use crate::expr::{CmpOp, Expr};

/// An equality with no statistics keeps this fraction of the rows.
pub const EQ: f64 = 0.1;
/// `<`, `<=`, `>`, `>=`: a third.
pub const RANGE: f64 = 1.0 / 3.0;
/// BETWEEN (and LIKE, which MySQL estimates as one too): a ninth.
pub const BETWEEN: f64 = 1.0 / 9.0;
/// `IS NULL`: most columns hold few NULLs.
pub const IS_NULL: f64 = 0.1;

/// The fraction of rows `e` lets through. `distinct(p)` is the number of distinct
/// values of row position `p` when statistics know it.
pub fn selectivity(e: &Expr, distinct: &dyn Fn(usize) -> Option<f64>) -> f64 {
    let s = match e {
        Expr::Cmp(op, a, b, _) => match op {
            CmpOp::Eq | CmpOp::NullSafeEq => eq(a, b, distinct),
            CmpOp::Ne => 1.0 - eq(a, b, distinct),
            CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => RANGE,
        },
        Expr::Between { negated, .. } => negate(BETWEEN, *negated),
        Expr::InList {
            expr,
            list,
            negated,
            ..
        } => {
            let one = column_distinct(expr, distinct).map_or(EQ, |d| 1.0 / d);
            negate((list.len() as f64 * one).min(1.0), *negated)
        }
        Expr::Like { negated, .. } => negate(BETWEEN, *negated),
        Expr::IsNull(_, negated) => negate(IS_NULL, *negated),
        Expr::And(a, b) => selectivity(a, distinct) * selectivity(b, distinct),
        Expr::Or(a, b) => {
            let (x, y) = (selectivity(a, distinct), selectivity(b, distinct));
            x + y - x * y
        }
        Expr::Not(a) => 1.0 - selectivity(a, distinct),
        _ => 1.0,
    };
    s.clamp(0.0, 1.0)
}

fn negate(s: f64, negated: bool) -> f64 {
    if negated {
        1.0 - s
    } else {
        s
    }
}

/// Equality: one over the larger count of distinct values either column side has.
fn eq(a: &Expr, b: &Expr, distinct: &dyn Fn(usize) -> Option<f64>) -> f64 {
    let most = [a, b]
        .iter()
        .filter_map(|e| column_distinct(e, distinct))
        .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d))));
    most.map_or(EQ, |d| 1.0 / d.max(1.0))
}

fn column_distinct(e: &Expr, distinct: &dyn Fn(usize) -> Option<f64>) -> Option<f64> {
    match e {
        Expr::Column(p) => distinct(*p),
        _ => None,
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
    /// Column 0 has 1000 distinct values, column 1 has 25, others are unknown.
    fn distinct(p: usize) -> Option<f64> {
        match p {
            0 => Some(1000.0),
            1 => Some(25.0),
            _ => None,
        }
    }

    #[test]
    fn equality_uses_the_larger_distinct_count() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(
            selectivity(&cmp(CmpOp::Eq, col(0), col(1)), &distinct),
            0.001
        ));
        assert!(close(
            selectivity(&cmp(CmpOp::Eq, col(1), lit(3)), &distinct),
            0.04
        ));
        // Nothing known: MySQL's guess.
        assert!(close(
            selectivity(&cmp(CmpOp::Eq, col(7), lit(3)), &distinct),
            EQ
        ));
        assert!(close(
            selectivity(&cmp(CmpOp::Eq, col(7), col(1)), &distinct),
            0.04
        ));
        assert!(close(
            selectivity(&cmp(CmpOp::Ne, col(1), lit(3)), &distinct),
            0.96
        ));
    }

    #[test]
    fn ranges_lists_and_connectives() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        let r = cmp(CmpOp::Lt, col(0), lit(5));
        assert!(close(selectivity(&r, &distinct), RANGE));
        let both = Expr::And(Box::new(r.clone()), Box::new(r.clone()));
        assert!(close(selectivity(&both, &distinct), RANGE * RANGE));
        let either = Expr::Or(Box::new(r.clone()), Box::new(r.clone()));
        assert!(close(
            selectivity(&either, &distinct),
            2.0 * RANGE - RANGE * RANGE
        ));
        assert!(close(
            selectivity(&Expr::Not(Box::new(r)), &distinct),
            1.0 - RANGE
        ));
        let list = Expr::InList {
            expr: col(1),
            list: vec![Expr::Literal(Value::Int(1)), Expr::Literal(Value::Int(2))],
            negated: false,
            coll: Collation::Binary,
        };
        assert!(close(selectivity(&list, &distinct), 0.08));
        // A function of a column: nothing known, every row kept.
        let f = Expr::Arith(crate::expr::ArithOp::Add, col(0), lit(1));
        assert!(close(selectivity(&f, &distinct), 1.0));
    }

    #[test]
    fn a_long_in_list_keeps_at_most_every_row() {
        let list = Expr::InList {
            expr: col(7),
            list: (0..40).map(|i| Expr::Literal(Value::Int(i))).collect(),
            negated: false,
            coll: Collation::Binary,
        };
        assert_eq!(selectivity(&list, &distinct), 1.0);
    }
}
