//! Rewrite rules on bound conditions, applied before access paths are chosen.
//!
//! OR factoring: `(p.k = l.k AND a) OR (p.k = l.k AND b)` becomes
//! `p.k = l.k AND (a OR b)`. A conjunct every branch of an OR shares is pulled out, so it
//! becomes a conjunct of its own that can drive an index lookup or a hash join (TPC-H
//! Q19 repeats its join condition in each branch). The rule is exact in SQL's
//! three-valued logic, which distributes AND over OR like any distributive lattice;
//! when a branch is nothing but shared conjuncts the OR absorbs the others
//! (`a OR (a AND b)` is `a`, for NULL too).

use crate::expr::Expr;

/// Splits a condition into its AND-ed conjuncts, each with its ORs factored.
pub fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(a, b) => {
            conjuncts(*a, out);
            conjuncts(*b, out);
        }
        Expr::Or(..) => match factor_or(e) {
            Expr::And(a, b) => {
                conjuncts(*a, out);
                conjuncts(*b, out);
            }
            other => out.push(other),
        },
        other => out.push(other),
    }
}

/// Pulls the conjuncts every branch of an OR shares out of it (see the module comment).
pub fn factor_or(e: Expr) -> Expr {
    let mut branches_in = Vec::new();
    disjuncts(e, &mut branches_in);
    let mut branches: Vec<Vec<Expr>> = branches_in
        .into_iter()
        .map(|d| {
            let mut cs = Vec::new();
            conjuncts(d, &mut cs);
            cs
        })
        .collect();
    let keys: Vec<Vec<String>> = branches
        .iter()
        .map(|b| b.iter().map(key).collect())
        .collect();
    let mut common: Vec<Expr> = Vec::new();
    let mut common_keys: Vec<String> = Vec::new();
    for (c, k) in branches[0].iter().zip(&keys[0]) {
        if common_keys.contains(k) || !deterministic(c) {
            continue;
        }
        if keys[1..].iter().all(|b| b.contains(k)) {
            common.push(c.clone());
            common_keys.push(k.clone());
        }
    }
    if !common.is_empty() {
        for b in &mut branches {
            b.retain(|c| !common_keys.contains(&key(c)));
        }
    }
    // A branch left empty is TRUE given the common part: the OR adds nothing.
    let rest = if branches.iter().any(|b| b.is_empty()) {
        None
    } else {
        branches
            .into_iter()
            .map(and_all)
            .reduce(|a, b| Expr::Or(Box::new(a), Box::new(b)))
    };
    common
        .into_iter()
        .chain(rest)
        .reduce(|a, b| Expr::And(Box::new(a), Box::new(b)))
        .unwrap_or(Expr::Literal(strata_types::Value::Int(1)))
}

fn disjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Or(a, b) => {
            disjuncts(*a, out);
            disjuncts(*b, out);
        }
        other => out.push(other),
    }
}

fn and_all(cs: Vec<Expr>) -> Expr {
    cs.into_iter()
        .reduce(|a, b| Expr::And(Box::new(a), Box::new(b)))
        .unwrap_or(Expr::Literal(strata_types::Value::Int(1)))
}

/// Structural identity of a bound expression (columns are positions, so equal text
/// means the same computation).
fn key(e: &Expr) -> String {
    format!("{e:?}")
}

/// Whether two evaluations of `e` on the same row must agree: a subquery or a user
/// variable may not (each occurrence is planned and run on its own).
fn deterministic(e: &Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        if matches!(x, Expr::Subquery(_) | Expr::UserVariable(_)) {
            ok = false;
        }
    });
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::CmpOp;
    use strata_types::{Collation, Value};

    fn eq(a: usize, b: usize) -> Expr {
        Expr::Cmp(
            CmpOp::Eq,
            Box::new(Expr::Column(a)),
            Box::new(Expr::Column(b)),
            Collation::GeneralCi,
        )
    }
    fn lit(c: usize, v: i64) -> Expr {
        Expr::Cmp(
            CmpOp::Eq,
            Box::new(Expr::Column(c)),
            Box::new(Expr::Literal(Value::Int(v))),
            Collation::GeneralCi,
        )
    }
    fn and(a: Expr, b: Expr) -> Expr {
        Expr::And(Box::new(a), Box::new(b))
    }
    fn or(a: Expr, b: Expr) -> Expr {
        Expr::Or(Box::new(a), Box::new(b))
    }

    #[test]
    fn shared_join_condition_leaves_the_or() {
        let e = or(
            and(eq(0, 5), lit(1, 1)),
            or(and(lit(2, 2), eq(0, 5)), and(eq(0, 5), lit(3, 3))),
        );
        let mut out = Vec::new();
        conjuncts(e, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(key(&out[0]), key(&eq(0, 5)));
        let expected = or(or(lit(1, 1), lit(2, 2)), lit(3, 3));
        assert_eq!(key(&out[1]), key(&expected));
    }

    #[test]
    fn nothing_shared_keeps_the_or() {
        let e = or(and(eq(0, 5), lit(1, 1)), and(eq(0, 6), lit(1, 2)));
        let mut out = Vec::new();
        conjuncts(e.clone(), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(key(&out[0]), key(&e));
    }

    #[test]
    fn a_branch_of_only_shared_conjuncts_absorbs_the_rest() {
        // a OR (a AND b) is a
        let e = or(eq(0, 5), and(eq(0, 5), lit(1, 1)));
        let mut out = Vec::new();
        conjuncts(e, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(key(&out[0]), key(&eq(0, 5)));
    }

    #[test]
    fn several_shared_conjuncts_all_come_out() {
        let e = or(
            and(and(eq(0, 5), lit(4, 4)), lit(1, 1)),
            and(lit(4, 4), and(lit(2, 2), eq(0, 5))),
        );
        let mut out = Vec::new();
        conjuncts(e, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(key(&out[2]), key(&or(lit(1, 1), lit(2, 2))));
    }

    #[test]
    fn user_variables_are_not_shared() {
        let v = Expr::UserVariable("x".into());
        let e = or(and(v.clone(), lit(1, 1)), and(v, lit(1, 2)));
        let mut out = Vec::new();
        conjuncts(e, &mut out);
        assert_eq!(out.len(), 1);
    }
}
