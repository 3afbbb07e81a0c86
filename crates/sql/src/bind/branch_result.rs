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

/// How a GREATEST/LEAST of dates and non-dates (a string result) shows the value it
/// picks, as MySQL 8 formats it: by its temporal argument (the last DATETIME or
/// TIMESTAMP, else the first date or time), a DATE as a date ([`DATE_ONLY`]), a
/// DATETIME with the most fraction digits any argument has (`Item::datetime_precision`:
/// a string literal its own, a date none, another string six). None when no argument
/// has a date (a TIME, or no temporal argument at all: compared and shown as they are).
///
/// [`DATE_ONLY`]: strata_types::datetime::DATE_ONLY
pub fn picked_date_shown(types: &[SType], args: &[Expr]) -> Option<u8> {
    use SType::*;
    let temporal = types
        .iter()
        .rev()
        .find(|t| matches!(t, DateTime(_)))
        .or_else(|| types.iter().find(|t| is_temporal(**t)))?;
    match temporal {
        Date => return Some(strata_types::datetime::DATE_ONLY),
        DateTime(_) => {}
        _ => return None,
    }
    let precision = |t: &SType, e: &Expr| -> u8 {
        match (t, e) {
            (DateTime(f) | Time(f), _) => *f,
            (Date | Int | UInt | Null, _) => 0,
            (Decimal(s) | Double(s), _) => *s,
            (Text | Binary, Expr::Literal(strata_types::Value::Bytes(b))) => {
                literal_fraction_digits(b)
            }
            (Text | Binary | Json, _) => 6,
        }
    };
    let most = types.iter().zip(args).map(|(t, e)| precision(t, e)).max()?;
    Some(most.min(6))
}

/// The fraction digits a date-time string literal carries (`'2020-01-01 10:00:00.25'`
/// 2), as `str_to_datetime` counts them; six for a string that is no date-time, whose
/// precision is a string's.
fn literal_fraction_digits(text: &[u8]) -> u8 {
    let Some(s) = std::str::from_utf8(text)
        .ok()
        .and_then(crate::expr::datetime::temporal::parse_stamp)
    else {
        return 6;
    };
    if !s.has_time {
        return 0;
    }
    let text = String::from_utf8_lossy(text);
    let after_time = text.rfind(':').map_or("", |i| &text[i..]);
    match after_time.find('.') {
        Some(i) => after_time[i + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count()
            .min(6) as u8,
        None => 0,
    }
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
    fn a_date_picked_among_strings_shows_as_its_date_argument() {
        use strata_types::datetime::DATE_ONLY;
        let lit = |s: &str| Expr::Literal(strata_types::Value::str(s));
        let col = || Expr::Column(0);
        // LEAST(datetime(3)_col, '2020-01-01'): a DATETIME of 3 digits.
        assert_eq!(
            picked_date_shown(&[DateTime(3), Text], &[col(), lit("2020-01-01")]),
            Some(3)
        );
        // A literal's own digits count; a string column's are six.
        assert_eq!(
            picked_date_shown(
                &[DateTime(0), Text],
                &[col(), lit("2020-01-01 10:00:00.25")]
            ),
            Some(2)
        );
        assert_eq!(
            picked_date_shown(&[DateTime(0), Text], &[col(), Expr::Column(1)]),
            Some(6)
        );
        // A DATE as the temporal argument: a date, whatever the strings carry.
        assert_eq!(
            picked_date_shown(&[Date, Text], &[col(), lit("2020-01-01 10:00:00.5")]),
            Some(DATE_ONLY)
        );
        // The last DATETIME decides over a DATE before it; a TIME first is not a date.
        assert_eq!(
            picked_date_shown(&[Date, Text, DateTime(1)], &[col(), lit("x"), col()]),
            Some(6)
        );
        assert_eq!(
            picked_date_shown(&[Time(0), Text], &[col(), lit("1")]),
            None
        );
        assert_eq!(picked_date_shown(&[Text, Int], &[col(), col()]), None);
    }

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
