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

/// Whether two evaluations of `e` on the same row must agree: a subquery, a user
/// variable or `SYSDATE()` (the clock when it runs) may not.
fn deterministic(e: &Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        let volatile = match x {
            Expr::Subquery(_) | Expr::UserVariable(_) | Expr::StoredCall(..) => true,
            Expr::Func(f, _) => f.is_volatile(),
            _ => false,
        };
        if volatile {
            ok = false;
        }
    });
    ok
}

/// Implied single-table conditions of OR conjuncts: for `(A1 AND J1) OR (A2 AND J2)`
/// where every branch has conjuncts that read only table T (`A1`, `A2`), the condition
/// `A1 OR A2` on T alone follows from it (a TRUE branch makes its own T-part TRUE), so
/// adding it as one more conjunct keeps the rows the same while letting T be filtered
/// before the join — TPC-H Q19's `part` is cut from 20,000 rows to the few dozen of its
/// brands and containers before `lineitem` is probed. `mask` gives the tables an
/// expression reads (bit per table); `tables` is how many there are. Only for a join:
/// with one table the condition is already on it.
pub fn implied_by_ors(conds: &[Expr], tables: usize, mask: &dyn Fn(&Expr) -> u64) -> Vec<Expr> {
    let mut out = Vec::new();
    if tables < 2 {
        return out;
    }
    for c in conds {
        if !matches!(c, Expr::Or(..)) || mask(c).count_ones() < 2 || !deterministic(c) {
            continue;
        }
        let mut branches = Vec::new();
        disjuncts(c.clone(), &mut branches);
        let split: Vec<Vec<Expr>> = branches
            .into_iter()
            .map(|b| {
                let mut parts = Vec::new();
                and_parts(b, &mut parts);
                parts
            })
            .collect();
        for t in 0..tables.min(64) {
            let bit = 1u64 << t;
            let mut per_branch = Vec::with_capacity(split.len());
            for parts in &split {
                let mine: Vec<Expr> = parts.iter().filter(|p| mask(p) == bit).cloned().collect();
                if mine.is_empty() {
                    break;
                }
                per_branch.push(and_all(mine));
            }
            if per_branch.len() == split.len() {
                if let Some(implied) = per_branch
                    .into_iter()
                    .reduce(|a, b| Expr::Or(Box::new(a), Box::new(b)))
                {
                    out.push(implied);
                }
            }
        }
    }
    out
}

fn and_parts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(a, b) => {
            and_parts(*a, out);
            and_parts(*b, out);
        }
        other => out.push(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::CmpOp;
    use strata_types::{Collation, Value};

    /// RAND(), UUID() and the like are never merged or duplicated by a rewrite: two
    /// calls are two values.
    #[test]
    fn volatile_calls_are_not_deterministic() {
        use crate::expr::functions::{Func, HashFn, MathFn};
        let rand = Expr::Func(Func::Math(MathFn::Rand), vec![]);
        let uuid = Expr::Func(Func::Hash(HashFn::Uuid), vec![]);
        let md5 = Expr::Func(Func::Hash(HashFn::Md5), vec![Expr::Column(0)]);
        assert!(!deterministic(&rand));
        assert!(!deterministic(&uuid));
        assert!(deterministic(&md5));
        let inside = Expr::Func(Func::Math(MathFn::Floor), vec![rand]);
        assert!(!deterministic(&inside));
    }

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

    /// Two tables: columns 0–1 are table 0's, 2–3 table 1's.
    fn mask(e: &Expr) -> u64 {
        let mut m = 0;
        e.walk(&mut |x| {
            if let Expr::Column(c) = x {
                m |= 1 << (c / 2);
            }
        });
        m
    }

    #[test]
    fn each_table_gets_the_or_of_its_parts_of_every_branch() {
        // (t0.a = 1 AND t1.x = 5) OR (t0.a = 2 AND t0.b = 3 AND t1.x = 6)
        let c = or(
            and(lit(0, 1), lit(2, 5)),
            and(and(lit(0, 2), lit(1, 3)), lit(2, 6)),
        );
        let got = implied_by_ors(&[c], 2, &mask);
        assert_eq!(got.len(), 2);
        assert_eq!(
            format!("{:?}", got[0]),
            format!("{:?}", or(lit(0, 1), and(lit(0, 2), lit(1, 3))))
        );
        assert_eq!(
            format!("{:?}", got[1]),
            format!("{:?}", or(lit(2, 5), lit(2, 6)))
        );
    }

    #[test]
    fn a_branch_without_a_part_on_the_table_implies_nothing_for_it() {
        // (t0.a = 1 AND t1.x = 5) OR t1.x = 6: table 0 is unconstrained in branch 2.
        let c = or(and(lit(0, 1), lit(2, 5)), lit(2, 6));
        let got = implied_by_ors(&[c], 2, &mask);
        assert_eq!(got.len(), 1);
        assert_eq!(
            format!("{:?}", got[0]),
            format!("{:?}", or(lit(2, 5), lit(2, 6)))
        );
    }

    #[test]
    fn single_table_ors_and_single_table_queries_are_left_alone() {
        let c = or(lit(0, 1), lit(1, 2));
        assert!(implied_by_ors(std::slice::from_ref(&c), 2, &mask).is_empty());
        let j = or(and(lit(0, 1), lit(2, 5)), and(lit(0, 2), lit(2, 6)));
        assert!(implied_by_ors(&[j], 1, &mask).is_empty());
    }
}
