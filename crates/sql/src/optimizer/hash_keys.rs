//! Which equi-join conditions a hash join buffer can be keyed on: a column of the inner
//! table compared for equality with something already read, when the key bytes of the
//! comparison's collation decide equality exactly (integers and decimals, strings,
//! temporals). Run by `exec::hash_join`.

use crate::bind::{SType, Scope};
use crate::expr::{CmpOp, Expr};
use crate::plan::block::HashKey;

/// The hash keys the conditions give for scope table `ti`, with `placed` (bit per scope
/// table) already read.
pub fn hash_keys(scope: &Scope, ti: usize, conds: &[&Expr], placed: u64) -> Vec<HashKey> {
    let t = &scope.tables[ti];
    let range = t.offset..t.offset + t.def.columns.len();
    let mut keys: Vec<HashKey> = Vec::new();
    for c in conds {
        let Expr::Cmp(CmpOp::Eq, a, b, coll) = c else {
            continue;
        };
        let (inner, probe) = match (a.as_ref(), b.as_ref()) {
            (Expr::Column(i), Expr::Column(o)) if range.contains(i) && !range.contains(o) => {
                (*i, *o)
            }
            (Expr::Column(o), Expr::Column(i)) if range.contains(i) && !range.contains(o) => {
                (*i, *o)
            }
            _ => continue,
        };
        if placed & (1u64 << scope.table_of(probe)) == 0 {
            continue;
        }
        let class = |p: usize| {
            let (_, col) = scope.column(p);
            key_class(SType::of_column(&col.data_type, col.collation))
        };
        if class(inner).is_none() || class(inner) != class(probe) {
            continue;
        }
        if keys.iter().any(|k| k.column == inner - t.offset) {
            continue;
        }
        keys.push(HashKey {
            probe: Expr::Column(probe),
            column: inner - t.offset,
            coll: *coll,
        });
    }
    keys
}

/// Types whose equality the group-key bytes follow exactly, by class: values of one
/// class that compare equal get equal bytes. Doubles are left out (their bytes are
/// rounded).
fn key_class(t: SType) -> Option<u8> {
    match t {
        SType::Int | SType::UInt | SType::Decimal(_) => Some(1),
        SType::Text | SType::Binary => Some(2),
        SType::Date | SType::DateTime(_) => Some(3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exactly_hashable_pairs_are_keys() {
        assert_eq!(key_class(SType::Int), key_class(SType::Decimal(2)));
        assert_ne!(key_class(SType::Int), key_class(SType::Text));
        assert_eq!(key_class(SType::DOUBLE), None);
        assert_eq!(key_class(SType::Date), key_class(SType::DateTime(0)));
    }
}
