//! The result type of expressions made of branches (`COALESCE`, `IFNULL`, `IF`, `CASE`,
//! `GREATEST`/`LEAST`, `UNION` columns), and the conversion of each branch to it, as
//! MySQL 8 resolves them.
//!
//! Dates and times (`Item_func::aggregate_temporal`... in effect): a DATE beside a
//! DATETIME is a DATETIME at midnight, a TIME beside a DATE or DATETIME is a DATETIME on
//! the current date, fraction digits are the most any branch has. Before this, such
//! mixes were typed VARCHAR and each branch kept its own form, so `CASE WHEN … THEN
//! date_col ELSE datetime_col END` showed `2020-01-01` where MySQL shows `2020-01-01
//! 00:00:00`, `COALESCE(time_col, datetime_col)` showed the bare time, and `SELECT
//! date_col UNION SELECT datetime_col` returned both forms of one instant as two rows
//! where MySQL returns one.
//!
//! Strings: a number or a date beside a string makes the result a string, and each
//! such branch becomes its text. Left as numbers and dates, `COALESCE(int_col, '1')`
//! put `1` and `'1'` in two groups of a GROUP BY (and two rows of a DISTINCT), and
//! sorted numbers before strings where MySQL sorts them all as text.

use crate::bind::SType;
use crate::expr::datetime::functions::DateFn;
use crate::expr::functions::{CastFn, Func};
use crate::expr::Expr;

/// The type two temporal branches give together; None when either is not temporal.
pub fn unify(a: SType, b: SType) -> Option<SType> {
    use SType::*;
    Some(match (a, b) {
        (Date, Date) => Date,
        (Time(x), Time(y)) => Time(x.max(y)),
        (DateTime(x), DateTime(y)) => DateTime(x.max(y)),
        (Date, DateTime(f)) | (DateTime(f), Date) => DateTime(f),
        (Date, Time(f)) | (Time(f), Date) => DateTime(f),
        (Time(x), DateTime(y)) | (DateTime(y), Time(x)) => DateTime(x.max(y)),
        _ => return None,
    })
}

/// `e` (of type `from`) converted to the result type `to`: a temporal one, or a string;
/// unchanged when it already has it, or when neither applies (a NULL branch, numbers,
/// which keep their own values).
pub fn convert(e: Expr, from: SType, to: SType) -> Expr {
    use SType::*;
    if from == to {
        return e;
    }
    match (from, to) {
        (Null | Text | Binary, Text | Binary) => e,
        (_, Text | Binary) => as_string(e),
        (Date | DateTime(_), DateTime(f)) => Expr::Func(Func::Cast(CastFn::DateTime(f)), vec![e]),
        (Time(_), DateTime(f)) => time_on_current_date(e, f),
        (Time(_), Time(f)) => Expr::Func(Func::Cast(CastFn::Time(f)), vec![e]),
        _ => e,
    }
}

/// A TIME as a DATETIME(`fsp`): the statement's current date plus the time, as MySQL 8
/// converts a TIME (`CAST(t AS DATETIME)`, a TIME beside a DATE). TIME values are held
/// as their text, which a plain cast would read as a date string (`'01:02:03'` as
/// 2001-02-03), so this goes through `ADDTIME(CURDATE(), t)`.
pub fn time_on_current_date(e: Expr, fsp: u8) -> Expr {
    let today = Expr::Func(
        Func::Date {
            f: DateFn::CurDate,
            date_arg: false,
        },
        vec![],
    );
    Expr::Func(
        Func::Date {
            f: DateFn::AddTime {
                sub: false,
                fsp,
                text: false,
            },
            date_arg: true,
        },
        vec![today, e],
    )
}

/// `e`'s values as their text (`CAST(e AS CHAR)`): a branch of a string result.
pub fn as_string(e: Expr) -> Expr {
    Expr::Func(Func::Cast(CastFn::Char(None)), vec![e])
}

/// Whether a value of this type is a string (text or binary).
pub fn is_string(t: SType) -> bool {
    matches!(t, SType::Text | SType::Binary)
}

/// Whether a value of this type is a date or time.
pub fn is_temporal(t: SType) -> bool {
    matches!(t, SType::Date | SType::DateTime(_) | SType::Time(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use SType::*;

    #[test]
    fn mysql_8_result_types_of_mixed_temporal_branches() {
        assert_eq!(unify(Date, Date), Some(Date));
        assert_eq!(unify(Date, DateTime(0)), Some(DateTime(0)));
        assert_eq!(unify(DateTime(3), Date), Some(DateTime(3)));
        assert_eq!(unify(DateTime(0), DateTime(6)), Some(DateTime(6)));
        assert_eq!(unify(Time(2), Time(0)), Some(Time(2)));
        assert_eq!(unify(Time(1), Date), Some(DateTime(1)));
        assert_eq!(unify(Time(4), DateTime(2)), Some(DateTime(4)));
        assert_eq!(unify(Date, Text), None);
        assert_eq!(unify(Int, DateTime(0)), None);
    }

    #[test]
    fn branches_are_converted_only_when_their_type_differs() {
        let col = || Expr::Column(0);
        assert!(matches!(convert(col(), Date, Date), Expr::Column(0)));
        assert!(matches!(
            convert(col(), Date, DateTime(0)),
            Expr::Func(Func::Cast(CastFn::DateTime(0)), _)
        ));
        assert!(matches!(
            convert(col(), Time(0), DateTime(0)),
            Expr::Func(
                Func::Date {
                    f: DateFn::AddTime { .. },
                    ..
                },
                _
            )
        ));
        assert!(matches!(
            convert(col(), Time(0), Time(3)),
            Expr::Func(Func::Cast(CastFn::Time(3)), _)
        ));
        assert!(matches!(convert(col(), Null, DateTime(0)), Expr::Column(0)));
    }
}
