//! Outer-join simplification: a LEFT JOIN (or RIGHT JOIN) whose inner side a condition
//! above it null-rejects is an inner join, as MySQL rewrites it
//! (`simplify_joins` in its optimizer). In
//! `a LEFT JOIN b ON a.id = b.aid WHERE b.x > 5`, the rows the LEFT JOIN adds for an `a`
//! without a match have `b.x` NULL, which `b.x > 5` never lets through; so the result is
//! that of `a JOIN b ON a.id = b.aid WHERE b.x > 5`, and the join order is free again.
//!
//! A condition null-rejects a table when it cannot be TRUE while every column of that
//! table is NULL. The test here is syntactic and errs towards "no": comparisons
//! (but `<=>`), arithmetic, BETWEEN, IN, LIKE and IS NOT NULL of a table's columns
//! reject it; AND rejects what either side does, OR only what both sides do; functions,
//! CASE, IS NULL and subqueries reject nothing (COALESCE or IFNULL turn NULL into a
//! value). Only conditions that are applied to the outer join's result count: the
//! WHERE clause (and inner-join ON at the top) for a top-level outer join, the ON of the
//! enclosing outer join for a nested one. A group's own ON never converts it: it decides
//! the match, not which rows survive. Once a group becomes inner, its ON conditions move
//! to where it sits, and the groups nested in it are looked at again with them.

use crate::expr::{CmpOp, Expr};
use crate::plan::join_groups::JoinGroup;

/// The tables (bit per scope table) whose all-NULL row makes `e` NULL; `table(p)` is
/// the scope table of row position `p`.
fn strict(e: &Expr, table: &dyn Fn(usize) -> usize) -> u64 {
    match e {
        Expr::Column(p) => 1 << table(*p),
        Expr::Arith(_, a, b) | Expr::BitOp(_, a, b) => strict(a, table) | strict(b, table),
        Expr::Cmp(op, a, b, _) if *op != CmpOp::NullSafeEq => strict(a, table) | strict(b, table),
        Expr::Neg(a) => strict(a, table),
        _ => 0,
    }
}

/// The tables (bit per scope table) whose all-NULL row makes `e` not TRUE.
pub fn null_rejected(e: &Expr, table: &dyn Fn(usize) -> usize) -> u64 {
    match e {
        Expr::Cmp(op, a, b, _) if *op != CmpOp::NullSafeEq => strict(a, table) | strict(b, table),
        Expr::And(a, b) => null_rejected(a, table) | null_rejected(b, table),
        Expr::Or(a, b) => null_rejected(a, table) & null_rejected(b, table),
        // NOT of NULL is NULL: a NOT over an operation NULL propagates through.
        Expr::Not(a) => match a.as_ref() {
            Expr::Cmp(..) | Expr::Like { .. } => strict_operands(a, table),
            Expr::Between { expr, .. } | Expr::InList { expr, .. } => strict(expr, table),
            _ => 0,
        },
        Expr::IsNull(a, true) => strict(a, table),
        // IS TRUE is FALSE where its operand is NULL or FALSE.
        Expr::IsTruth(a, true, false) => null_rejected(a, table),
        Expr::Between {
            expr,
            low,
            high,
            negated,
            ..
        } => {
            // x NOT BETWEEN NULL AND 5 is TRUE for x = 7: only x counts then.
            if *negated {
                strict(expr, table)
            } else {
                strict(expr, table) | strict(low, table) | strict(high, table)
            }
        }
        // x IN (NULL, 1) is TRUE for x = 1: only the tested value counts.
        Expr::InList { expr, .. } => strict(expr, table),
        Expr::Like { .. } => strict_operands(e, table),
        _ => 0,
    }
}

/// The operands of a comparison or LIKE, where a NULL operand makes the result NULL.
fn strict_operands(e: &Expr, table: &dyn Fn(usize) -> usize) -> u64 {
    match e {
        Expr::Cmp(op, a, b, _) if *op != CmpOp::NullSafeEq => strict(a, table) | strict(b, table),
        Expr::Like { expr, pattern, .. } => strict(expr, table) | strict(pattern, table),
        _ => 0,
    }
}

/// Turns the outer-join groups a condition applied above them null-rejects into inner
/// joins: removes them from `groups` (parents before nested groups, as
/// [`crate::plan::join_groups::place`] wants them) and gives their conditions to the
/// group around them (None: the block, like WHERE). `conds` holds (owner group,
/// condition). Returns whether any group was removed.
pub fn simplify(
    groups: &mut Vec<JoinGroup>,
    conds: &mut [(Option<usize>, Expr)],
    table: &dyn Fn(usize) -> usize,
) -> bool {
    let n = groups.len();
    // Where each group's conditions end up: itself, or (once it is inner) where its
    // parent's go.
    let mut owner_of: Vec<Option<usize>> = (0..n).map(Some).collect();
    let mut removed = vec![false; n];
    // Parents come first, so a group's parent is decided before the group.
    for g in 0..n {
        let around = groups[g].parent.and_then(|p| owner_of[p]);
        let rejects = conds
            .iter()
            .filter(|(o, _)| o.and_then(|o| owner_of[o]) == around)
            .any(|(_, e)| null_rejected(e, table) & groups[g].tables != 0);
        if rejects {
            removed[g] = true;
            owner_of[g] = around;
        }
    }
    if !removed.contains(&true) {
        return false;
    }
    // Renumber the groups that stay, and re-home parents and conditions.
    let mut new_index = vec![None; n];
    let mut next = 0;
    for g in 0..n {
        if !removed[g] {
            new_index[g] = Some(next);
            next += 1;
        }
    }
    let remap = |o: Option<usize>| o.and_then(|o| owner_of[o]).and_then(|o| new_index[o]);
    for (o, _) in conds.iter_mut() {
        *o = remap(*o);
    }
    let kept: Vec<JoinGroup> = groups
        .iter()
        .enumerate()
        .filter(|(g, _)| !removed[*g])
        .map(|(_, grp)| JoinGroup {
            parent: remap(grp.parent),
            ..grp.clone()
        })
        .collect();
    *groups = kept;
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{Collation, Value};

    /// Two columns per table: positions 0–1 are table 0, 2–3 table 1, and so on.
    fn table(p: usize) -> usize {
        p / 2
    }
    fn col(p: usize) -> Box<Expr> {
        Box::new(Expr::Column(p))
    }
    fn lit(v: i64) -> Box<Expr> {
        Box::new(Expr::Literal(Value::Int(v)))
    }
    fn cmp(op: CmpOp, a: Box<Expr>, b: Box<Expr>) -> Expr {
        Expr::Cmp(op, a, b, Collation::Binary)
    }
    fn group(parent: Option<usize>, tables: u64) -> JoinGroup {
        JoinGroup {
            parent,
            tables,
            first: 0,
            last: 0,
        }
    }

    #[test]
    fn what_rejects_nulls() {
        let gt = cmp(CmpOp::Gt, col(2), lit(5));
        assert_eq!(null_rejected(&gt, &table), 0b10);
        // <=> is TRUE for NULL <=> NULL.
        assert_eq!(
            null_rejected(&cmp(CmpOp::NullSafeEq, col(2), lit(5)), &table),
            0
        );
        let either = Expr::Or(
            Box::new(gt.clone()),
            Box::new(cmp(CmpOp::Eq, col(0), lit(1))),
        );
        assert_eq!(null_rejected(&either, &table), 0);
        let both = Expr::Or(
            Box::new(gt.clone()),
            Box::new(cmp(CmpOp::Lt, col(3), lit(1))),
        );
        assert_eq!(null_rejected(&both, &table), 0b10);
        let and = Expr::And(
            Box::new(gt.clone()),
            Box::new(cmp(CmpOp::Eq, col(0), lit(1))),
        );
        assert_eq!(null_rejected(&and, &table), 0b11);
        assert_eq!(null_rejected(&Expr::IsNull(col(2), true), &table), 0b10);
        assert_eq!(null_rejected(&Expr::IsNull(col(2), false), &table), 0);
        assert_eq!(null_rejected(&Expr::Not(Box::new(gt)), &table), 0b10);
        // A function may turn NULL into a value (COALESCE): nothing known.
        let f = Expr::Func(
            crate::expr::functions::Func::Coalesce,
            vec![Expr::Column(2)],
        );
        assert_eq!(
            null_rejected(&cmp(CmpOp::Eq, Box::new(f), lit(1)), &table),
            0
        );
        // x NOT BETWEEN NULL AND 5 can be TRUE: the bounds do not count.
        let nb = Expr::Between {
            expr: col(0),
            low: col(2),
            high: lit(5),
            negated: true,
            coll: Collation::Binary,
        };
        assert_eq!(null_rejected(&nb, &table), 0b01);
        // x IN (t1.a, 1) can be TRUE with t1.a NULL.
        let inl = Expr::InList {
            expr: col(0),
            list: vec![Expr::Column(2), Expr::Literal(Value::Int(1))],
            negated: false,
            coll: Collation::Binary,
        };
        assert_eq!(null_rejected(&inl, &table), 0b01);
    }

    #[test]
    fn where_on_the_inner_side_makes_it_inner() {
        // t0 LEFT JOIN t1 ON t0.a = t1.a WHERE t1.b > 5
        let mut groups = vec![group(None, 0b10)];
        let mut conds = vec![
            (Some(0), cmp(CmpOp::Eq, col(0), col(2))),
            (None, cmp(CmpOp::Gt, col(3), lit(5))),
        ];
        assert!(simplify(&mut groups, &mut conds, &table));
        assert!(groups.is_empty());
        assert!(conds.iter().all(|(o, _)| o.is_none()));
    }

    #[test]
    fn the_own_on_or_an_outer_side_condition_keeps_the_outer_join() {
        // t0 LEFT JOIN t1 ON t0.a = t1.a AND t1.b > 5 WHERE t0.b = 1 OR t1.b IS NULL
        let mut groups = vec![group(None, 0b10)];
        let mut conds = vec![
            (Some(0), cmp(CmpOp::Eq, col(0), col(2))),
            (Some(0), cmp(CmpOp::Gt, col(3), lit(5))),
            (None, cmp(CmpOp::Eq, col(1), lit(1))),
            (
                None,
                Expr::Or(
                    Box::new(cmp(CmpOp::Eq, col(1), lit(2))),
                    Box::new(Expr::IsNull(col(3), false)),
                ),
            ),
        ];
        assert!(!simplify(&mut groups, &mut conds, &table));
        assert_eq!(groups.len(), 1);
        assert_eq!(conds[0].0, Some(0));
    }

    #[test]
    fn nested_groups_follow_their_parent() {
        // t0 LEFT JOIN (t1 LEFT JOIN t2 ON t1.a = t2.a) ON t0.a = t1.a  WHERE t1.b = 1:
        // the outer group {t1, t2} becomes inner; {t2} stays an outer join, now at the
        // top, with its ON still its own.
        let mut groups = vec![group(None, 0b110), group(Some(0), 0b100)];
        let mut conds = vec![
            (Some(1), cmp(CmpOp::Eq, col(2), col(4))),
            (Some(0), cmp(CmpOp::Eq, col(0), col(2))),
            (None, cmp(CmpOp::Eq, col(3), lit(1))),
        ];
        assert!(simplify(&mut groups, &mut conds, &table));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].parent, None);
        assert_eq!(groups[0].tables, 0b100);
        assert_eq!(conds[0].0, Some(0));
        assert_eq!(conds[1].0, None);
        // Now a WHERE on t2 as well: both become inner.
        let mut groups = vec![group(None, 0b110), group(Some(0), 0b100)];
        let mut conds = vec![
            (Some(1), cmp(CmpOp::Eq, col(2), col(4))),
            (Some(0), cmp(CmpOp::Eq, col(0), col(2))),
            (None, cmp(CmpOp::Eq, col(3), lit(1))),
            (None, cmp(CmpOp::Eq, col(5), lit(1))),
        ];
        assert!(simplify(&mut groups, &mut conds, &table));
        assert!(groups.is_empty());
        assert!(conds.iter().all(|(o, _)| o.is_none()));
    }

    #[test]
    fn an_enclosing_on_makes_a_nested_group_inner() {
        // t0 LEFT JOIN (t1 LEFT JOIN t2 ON t1.a = t2.a) ON t0.a = t2.b: the outer ON
        // rejects t2's NULLs, so inside the group t1 JOIN t2 is inner; the group stays.
        let mut groups = vec![group(None, 0b110), group(Some(0), 0b100)];
        let mut conds = vec![
            (Some(1), cmp(CmpOp::Eq, col(2), col(4))),
            (Some(0), cmp(CmpOp::Eq, col(0), col(5))),
        ];
        assert!(simplify(&mut groups, &mut conds, &table));
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].tables, 0b110);
        assert_eq!(conds[0].0, Some(0));
        assert_eq!(conds[1].0, Some(0));
    }
}
