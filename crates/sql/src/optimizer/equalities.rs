//! Equality propagation: from `a = b AND b = c` among a block's inner-join conditions,
//! the implied `a = c` is added, as MySQL's multiple equalities do. The new condition
//! can drive an index lookup the written ones cannot: in TPC-H Q5 (`c_nationkey =
//! s_nationkey AND s_nationkey = n_nationkey`) it lets `customer` be read through
//! `c_nationkey` right after `nation`, before `supplier`.
//!
//! The added condition is implied by the others, so it never changes which rows pass:
//! a row passing `a = b` and `b = c` has `a`, `b`, `c` non-NULL and equal. That holds
//! only when equality is transitive across the three comparisons, so only columns whose
//! comparison is exact in the same domain are linked: integers and decimals with each
//! other, dates and datetimes with each other, strings only with strings of the
//! comparison's own collation (a case-insensitive `a = b` and a binary `b = c` do not
//! make `a = c`), never floating point (rounded) or mixed domains (`'1x' = 1`).
//! Only conditions that filter like WHERE are used (never an outer join's ON).

use crate::bind::{SType, Scope};
use crate::expr::{CmpOp, Expr};
use strata_types::Collation;

/// The conditions implied by the column equalities among `conds`, each new pair once.
pub fn implied(scope: &Scope, conds: &[&Expr]) -> Vec<Expr> {
    let domain = |p: usize, coll: Collation| -> Option<(u8, Option<Collation>)> {
        let (_, col) = scope.column(p);
        match SType::of_column(&col.data_type, col.collation) {
            SType::Int | SType::UInt | SType::Decimal(_) => Some((1, None)),
            SType::Date | SType::DateTime(_) => Some((3, None)),
            SType::Text | SType::Binary if col.collation == coll => Some((2, Some(coll))),
            _ => None,
        }
    };
    let mut edges = Vec::new();
    for c in conds {
        if let Expr::Cmp(CmpOp::Eq, a, b, coll) = c {
            if let (Expr::Column(x), Expr::Column(y)) = (a.as_ref(), b.as_ref()) {
                if let (Some(dx), Some(dy)) = (domain(*x, *coll), domain(*y, *coll)) {
                    if dx == dy && x != y {
                        edges.push((*x, *y, *coll));
                    }
                }
            }
        }
    }
    closure(&edges)
        .into_iter()
        .map(|(a, b, coll)| {
            Expr::Cmp(
                CmpOp::Eq,
                Box::new(Expr::Column(a)),
                Box::new(Expr::Column(b)),
                coll,
            )
        })
        .collect()
}

/// The pairs the transitive closure of `edges` adds (columns as positions; the
/// collation of the class, the one every edge linking it carries). Edges of different
/// collations never join one class.
fn closure(edges: &[(usize, usize, Collation)]) -> Vec<(usize, usize, Collation)> {
    // Classes as lists of members, merged edge by edge (joins have few columns).
    let mut classes: Vec<(Collation, Vec<usize>)> = Vec::new();
    for &(a, b, coll) in edges {
        let find = |classes: &Vec<(Collation, Vec<usize>)>, x: usize| {
            classes
                .iter()
                .position(|(c, m)| *c == coll && m.contains(&x))
        };
        match (find(&classes, a), find(&classes, b)) {
            (Some(i), Some(j)) if i != j => {
                let (_, moved) = classes.remove(i.max(j));
                classes[i.min(j)].1.extend(moved);
            }
            (Some(_), Some(_)) => {}
            (Some(i), None) => classes[i].1.push(b),
            (None, Some(j)) => classes[j].1.push(a),
            (None, None) => classes.push((coll, vec![a, b])),
        }
    }
    let written = |x: usize, y: usize, coll: Collation| {
        edges
            .iter()
            .any(|&(a, b, c)| c == coll && ((a, b) == (x, y) || (a, b) == (y, x)))
    };
    let mut out = Vec::new();
    for (coll, members) in &classes {
        for (i, &x) in members.iter().enumerate() {
            for &y in &members[i + 1..] {
                if !written(x, y, *coll) {
                    out.push((x, y, *coll));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_implies_its_missing_pair() {
        let g = Collation::GeneralCi;
        // Q5: c_nationkey(3) = s_nationkey(9), s_nationkey(9) = n_nationkey(20).
        let got = closure(&[(3, 9, g), (9, 20, g)]);
        assert_eq!(got, vec![(3, 20, g)]);
    }

    #[test]
    fn written_pairs_and_separate_classes_add_nothing() {
        let g = Collation::GeneralCi;
        assert!(closure(&[(1, 2, g), (3, 4, g)]).is_empty());
        assert!(closure(&[(1, 2, g), (2, 3, g), (1, 3, g)]).is_empty());
    }

    #[test]
    fn two_chains_merge_into_one_class() {
        let g = Collation::GeneralCi;
        // 1=2, 3=4, then 2=3 links them: 1-3, 1-4, 2-4 are new.
        let mut got = closure(&[(1, 2, g), (3, 4, g), (2, 3, g)]);
        got.sort_by_key(|&(a, b, _)| (a, b));
        assert_eq!(got, vec![(1, 3, g), (1, 4, g), (2, 4, g)]);
    }

    #[test]
    fn different_collations_never_link() {
        // a = b case-insensitively and b = c in binary do not make a = c.
        let got = closure(&[(1, 2, Collation::GeneralCi), (2, 3, Collation::Binary)]);
        assert!(got.is_empty());
    }
}
