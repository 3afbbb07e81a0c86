//! The result type of branches that mix signed and unsigned integers (`IF`, `IFNULL`,
//! `COALESCE`, `CASE`, `GREATEST`/`LEAST`, `UNION` columns), as MySQL 8 resolves it
//! (`Item::aggregate_type`): the merged integer type is bumped one size up when an
//! unsigned branch already has it, and a 64-bit one (BIGINT UNSIGNED, `CAST(… AS
//! UNSIGNED)`, bit operators, unsigned arithmetic) has no larger integer, so the
//! result is DECIMAL(20,0). `IFNULL(bigint_unsigned_col, -1)` is a DECIMAL; an INT
//! UNSIGNED beside a signed integer stays a BIGINT, which holds both.
//!
//! Strata's static types say "unsigned" without a width ([`SType::UInt`]), and typed
//! such a mix signed BIGINT: the text protocol still showed `18446744073709551611`,
//! but the binary protocol sent it as `-5`. The width is read from the expression here:
//! a column's declared type, what a branch function merged, 64 bits for anything else.

use crate::bind::{AggFunc, Binder, SType};
use crate::expr::functions::Func;
use crate::expr::Expr;
use strata_types::{DataType, FieldType, Value};

/// The type of branches whose plain merge ([`crate::bind::unify`]) is `merged`, given
/// each branch's type and whether it is a 64-bit unsigned integer: DECIMAL(20,0) for a
/// signed integer beside a 64-bit unsigned one, `merged` otherwise.
pub fn bumped(merged: SType, branches: impl IntoIterator<Item = (SType, bool)>) -> SType {
    if merged != SType::Int {
        return merged;
    }
    let (mut signed, mut wide_unsigned) = (false, false);
    for (t, wide) in branches {
        match t {
            SType::Int => signed = true,
            SType::UInt => wide_unsigned |= wide,
            _ => {}
        }
    }
    if signed && wide_unsigned {
        SType::Decimal(0)
    } else {
        merged
    }
}

/// A `UNION` column's side: whether its metadata is a 64-bit unsigned integer.
pub fn meta_is_wide_unsigned(field_type: FieldType, unsigned: bool) -> bool {
    unsigned && field_type == FieldType::LongLong
}

/// Whether a column of this type is a 64-bit unsigned integer.
fn column_is_wide_unsigned(ty: &DataType) -> bool {
    matches!(ty, DataType::BigInt { unsigned: true })
}

impl Binder<'_> {
    /// Whether `e`, a bound expression of type `ty`, is a 64-bit unsigned integer.
    pub(crate) fn is_wide_unsigned(&self, e: &Expr, ty: SType) -> bool {
        ty == SType::UInt && self.unsigned_width_64(e, self.agg.is_some())
    }

    /// `e` is of an unsigned integer type: whether that type is 64 bits wide. `grouped`:
    /// column positions are the aggregate output's (group keys, then aggregates).
    fn unsigned_width_64(&self, e: &Expr, grouped: bool) -> bool {
        match e {
            Expr::Literal(Value::Null) => false,
            Expr::Column(pos) if grouped => {
                let Some(agg) = self.agg.as_deref() else {
                    return true;
                };
                if let Some(g) = agg.groups.get(*pos) {
                    return self.unsigned_width_64(&g.1, false);
                }
                match agg.aggs.get(*pos - agg.groups.len()) {
                    // MIN/MAX and a bare column keep their argument's type.
                    Some(spec)
                        if matches!(spec.func, AggFunc::Min | AggFunc::Max | AggFunc::AnyValue) =>
                    {
                        spec.arg
                            .as_ref()
                            .is_none_or(|a| self.unsigned_width_64(a, false))
                    }
                    _ => true,
                }
            }
            Expr::Column(pos) if *pos < self.scope.width() => {
                let (_, col) = self.scope.column(*pos);
                !col.data_type.is_integer() || column_is_wide_unsigned(&col.data_type)
            }
            // What a branch function merged from unsigned branches is as wide as the
            // widest of them (its result wrapper, if any, is around the call).
            Expr::Func(Func::If, args) => args
                .iter()
                .skip(1)
                .any(|a| self.unsigned_width_64(a, grouped)),
            Expr::Func(
                Func::IfNull | Func::Coalesce | Func::Greatest(_) | Func::Least(_),
                args,
            ) => args.iter().any(|a| self.unsigned_width_64(a, grouped)),
            Expr::Case {
                whens, otherwise, ..
            } => {
                whens
                    .iter()
                    .any(|(_, r)| self.unsigned_width_64(r, grouped))
                    || otherwise
                        .as_deref()
                        .is_some_and(|o| self.unsigned_width_64(o, grouped))
            }
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SType::*;

    #[test]
    fn a_signed_integer_beside_a_wide_unsigned_one_is_decimal() {
        assert_eq!(bumped(Int, [(UInt, true), (Int, false)]), Decimal(0));
        assert_eq!(
            bumped(Int, [(Int, false), (Null, false), (UInt, true)]),
            Decimal(0)
        );
    }

    #[test]
    fn narrower_unsigned_mixes_stay_bigint() {
        // INT UNSIGNED beside a signed integer: a BIGINT holds both.
        assert_eq!(bumped(Int, [(UInt, false), (Int, false)]), Int);
        // Only unsigned (or NULL) branches: no mix.
        assert_eq!(bumped(UInt, [(UInt, true), (Null, false)]), UInt);
        // Something else already decided the type.
        assert_eq!(
            bumped(Decimal(2), [(UInt, true), (Decimal(2), false)]),
            Decimal(2)
        );
        assert_eq!(
            bumped(SType::DOUBLE, [(UInt, true), (SType::DOUBLE, false)]),
            SType::DOUBLE
        );
    }

    #[test]
    fn union_sides_are_wide_by_their_metadata() {
        assert!(meta_is_wide_unsigned(FieldType::LongLong, true));
        assert!(!meta_is_wide_unsigned(FieldType::Long, true));
        assert!(!meta_is_wide_unsigned(FieldType::LongLong, false));
    }
}
