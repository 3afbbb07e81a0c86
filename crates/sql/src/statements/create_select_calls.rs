//! CREATE TABLE … SELECT typing of the common string and date-part functions, by the
//! result lengths MySQL 8's `resolve_type` gives them (counted in characters here; the
//! column is then made as for any string or integer result, `Item::column`):
//!
//! * the date parts `YEAR`, `MONTH`, `DAY`/`DAYOFMONTH`, `HOUR`, `MINUTE`, `SECOND`,
//!   `DAYOFWEEK`, `WEEKDAY`, `DAYOFYEAR`, `QUARTER`, `WEEK`: integers of 1 to 4
//!   display characters, so INT columns, and always NULL-able (a value that is no date
//!   gives NULL); `DATE(x)` a DATE, `TIME(x)` a TIME of `x`'s fractional digits, both
//!   NULL-able;
//! * `LEFT`/`RIGHT`/`SUBSTRING` (a constant count or position shortens the first
//!   argument's length, as `Item_func_substr::resolve_type` does), `TRIM`,
//!   `LTRIM`, `RTRIM`, `REVERSE`, `REPLACE`, `REPEAT` (constant count), `LPAD`/`RPAD`
//!   (constant length), `CONCAT_WS`: strings of the first argument's collation,
//!   NULL-able under a strict sql_mode whatever their arguments (`StrictTyping`);
//! * `MD5`, `SHA1`/`SHA`: 32 and 40 characters of the connection's collation;
//! * `ABS`: its operand's integer, DECIMAL or DOUBLE type (MySQL's `Item_func_num1`:
//!   same display length, digits and sign flag), a DOUBLE for a string.
//!
//! Anything else (a length that is not a constant, an argument of another kind) stays
//! unknown, and the caller's 1235 names it.

use super::create_select_types::{
    string_collation, string_result_nullable, type_of, Item, Kind, Table, Unknown,
};
use crate::bind::real_decimals::NOT_FIXED;
use sqlparser::ast;
use strata_types::{Collation, DataType};

/// The type of `name(args)` when it is one of this module's functions; None when it is
/// not one of them.
pub(crate) fn call(
    name: &str,
    args: &[&ast::Expr],
    tables: &[Table],
) -> Option<Result<Item, Unknown>> {
    let upper = name.to_uppercase();
    let typed =
        || -> Result<Vec<Item>, Unknown> { args.iter().map(|a| type_of(a, tables)).collect() };
    Some(match name {
        "year" | "month" | "day" | "dayofmonth" | "hour" | "minute" | "second" | "dayofweek"
        | "weekday" | "dayofyear" | "quarter" | "week" => {
            let width = match name {
                "year" => 4,
                "dayofyear" => 3,
                "dayofweek" | "weekday" | "quarter" => 1,
                _ => 2,
            };
            typed().and_then(|items| match items.first() {
                Some(i) if !matches!(i.kind, Kind::Null) => {
                    Ok(Item::int(width, width, false, true))
                }
                _ => Err(format!("{upper} of NULL or of no argument")),
            })
        }
        "date" | "time" => typed().and_then(|items| {
            let [x] = items.as_slice() else {
                return Err(format!("{upper} of {} arguments", items.len()));
            };
            let fsp = match &x.kind {
                Kind::Temporal(
                    DataType::DateTime { fsp }
                    | DataType::Timestamp { fsp }
                    | DataType::Time { fsp },
                ) => *fsp,
                Kind::Temporal(DataType::Date) => 0,
                // DATE('2024-01-02'), DATE(20240102): a DATE all the same.
                Kind::Str { .. } | Kind::Int { .. } | Kind::Decimal { .. } if name == "date" => 0,
                _ => return Err(format!("{upper} of a number, string or NULL")),
            };
            let t = if name == "date" {
                DataType::Date
            } else {
                DataType::Time { fsp }
            };
            Ok(Item::new(Kind::Temporal(t), true))
        }),
        "left" | "right" => typed().and_then(|items| {
            let (s, coll, column) = first_string(&items, &upper)?;
            // `left_right_max_length`: a non-constant count keeps the string's length.
            let chars = match constant(args.get(1), &upper) {
                Ok(n) if n <= 0 => 0,
                Ok(n) => s.min(n as u64),
                Err(_) => s,
            };
            Ok(string(chars, coll, column, nullable(&items)))
        }),
        "substring" | "substr" | "mid" => typed().and_then(|items| {
            let (mut chars, coll, column) = first_string(&items, &upper)?;
            if !(2..=3).contains(&items.len()) {
                return Err(format!("{upper} of {} arguments", items.len()));
            }
            // MySQL 8's `Item_func_substr::resolve_type`: a constant start past the
            // end from the right leaves nothing; a non-constant one changes nothing.
            if let Ok(start) = constant(args.get(1), &upper) {
                if start < 0 {
                    chars = if start.unsigned_abs() > chars {
                        0
                    } else {
                        start.unsigned_abs()
                    };
                } else {
                    chars -= chars.min(start.saturating_sub(1) as u64);
                }
            }
            if items.len() == 3 {
                if let Ok(len) = constant(args.get(2), &upper) {
                    chars = if len < 0 { 0 } else { chars.min(len as u64) };
                }
            }
            Ok(string(chars, coll, column, nullable(&items)))
        }),
        "trim" | "ltrim" | "rtrim" | "reverse" => typed().and_then(|items| {
            if items.len() != 1 {
                return Err(format!("{upper} of {} arguments", items.len()));
            }
            let (chars, coll, column) = first_string(&items, &upper)?;
            Ok(string(chars, coll, column, nullable(&items)))
        }),
        "replace" => typed().and_then(|items| {
            let [_, from, to] = items.as_slice() else {
                return Err(format!("REPLACE of {} arguments", items.len()));
            };
            let (mut chars, coll, column) = first_string(&items, &upper)?;
            let (from, to) = (
                from.chars().ok_or("REPLACE of a date, time or double")?,
                to.chars().ok_or("REPLACE of a date, time or double")?,
            );
            // Each match may grow by the difference (MySQL's `Item_func_replace`).
            if to > from && from > 0 {
                chars += chars / from * (to - from);
            }
            Ok(string(chars, coll, column, nullable(&items)))
        }),
        "repeat" => typed().and_then(|items| {
            if items.len() != 2 {
                return Err(format!("REPEAT of {} arguments", items.len()));
            }
            let (chars, coll, column) = first_string(&items, &upper)?;
            let n = constant(args.get(1), &upper)?;
            let chars = if n <= 0 {
                0
            } else {
                chars.saturating_mul(n as u64)
            };
            Ok(string(chars, coll, column, nullable(&items)))
        }),
        "lpad" | "rpad" => typed().and_then(|items| {
            if items.len() != 3 {
                return Err(format!("{upper} of {} arguments", items.len()));
            }
            let (_, coll, column) = first_string(&items, &upper)?;
            let n = constant(args.get(1), &upper)?;
            // A negative length gives NULL: MySQL's length is then 0.
            let chars = n.max(0) as u64;
            Ok(string(chars, coll, column, nullable(&items)))
        }),
        "concat_ws" => typed().and_then(|items| {
            let Some((sep, rest)) = items.split_first() else {
                return Err("CONCAT_WS of no arguments".into());
            };
            if rest.is_empty() {
                return Err("CONCAT_WS of one argument".into());
            }
            let sep_chars = sep.chars().ok_or("CONCAT_WS of a date, time or double")?;
            let mut chars = sep_chars * (rest.len() as u64 - 1);
            for i in rest {
                chars += i.chars().ok_or("CONCAT_WS of a date, time or double")?;
            }
            let coll = string_collation(&items)?;
            // NULL arguments are skipped: only a NULL separator makes the result NULL.
            Ok(string(chars, coll, false, sep.nullable))
        }),
        "abs" => typed().and_then(|items| {
            let [x] = items.as_slice() else {
                return Err(format!("ABS of {} arguments", items.len()));
            };
            // Item_func_num1: the operand's kind, display length and digits (an
            // integer keeps its sign flag), a string a DOUBLE; not the column's own
            // type (ABS of a TINYINT is an INT column).
            match &x.kind {
                Kind::Int { .. } | Kind::Decimal { .. } => {
                    Ok(Item::new(x.kind.clone(), x.nullable))
                }
                Kind::Double { dec, .. } if *dec >= NOT_FIXED => {
                    Ok(Item::new(x.kind.clone(), x.nullable))
                }
                Kind::Str { .. } => Ok(Item::new(
                    Kind::Double {
                        len: 23,
                        dec: NOT_FIXED,
                    },
                    x.nullable,
                )),
                _ => Err("ABS of a DOUBLE of fixed decimals, a date or NULL".into()),
            }
        }),
        "md5" | "sha1" | "sha" => typed().and_then(|items| {
            let [x] = items.as_slice() else {
                return Err(format!("{upper} of {} arguments", items.len()));
            };
            if matches!(x.kind, Kind::Temporal(_)) {
                return Err(format!("{upper} of a date or time"));
            }
            let chars = if name == "md5" { 32 } else { 40 };
            Ok(string(chars, Collation::GeneralCi, false, x.nullable))
        }),
        _ => return None,
    })
}

/// A string function's result (NULL-able also under a strict sql_mode, as MySQL's
/// `Item_str_func`).
fn string(chars: u64, coll: Collation, column: bool, nullable: bool) -> Item {
    let nullable = string_result_nullable(nullable);
    Item::new(
        Kind::Str {
            chars,
            coll,
            column,
            fixed: false,
        },
        nullable,
    )
}

fn nullable(items: &[Item]) -> bool {
    items.iter().any(|i| i.nullable)
}

/// The first argument as a non-binary string: its characters, collation, and whether
/// that collation is a column's.
fn first_string(items: &[Item], upper: &str) -> Result<(u64, Collation, bool), Unknown> {
    match items.first().map(|i| &i.kind) {
        Some(Kind::Str { coll, .. }) if *coll == Collation::Binary => {
            Err(format!("{upper} of a binary string"))
        }
        Some(Kind::Str {
            chars,
            coll,
            column,
            ..
        }) => Ok((*chars, *coll, *column)),
        _ => Err(format!("{upper} of a number, date or NULL")),
    }
}

/// A constant integer argument (`3`, `-2`); anything else is unknown, since MySQL's
/// length then is the first argument's.
fn constant(e: Option<&&ast::Expr>, upper: &str) -> Result<i64, Unknown> {
    let refused = || format!("{upper} with a length or position that is not a constant integer");
    let e = e.ok_or_else(refused)?;
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<i64>().map_err(|_| refused()),
            _ => Err(refused()),
        },
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => constant(Some(&expr.as_ref()), upper).map(|n| -n),
        ast::Expr::Nested(x) => constant(Some(&x.as_ref()), upper),
        _ => Err(refused()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The characters and NULL-ability of a string call over literals, under
    /// `strict` typing.
    fn chars(sql: &str, strict: bool) -> Result<(u64, bool), Unknown> {
        let _mode = super::super::create_select_types::StrictTyping::new(strict);
        let item = type_of(&crate::parse::test_expr(sql), &[])?;
        match item.kind {
            Kind::Str { chars, .. } => Ok((chars, item.nullable)),
            other => Err(format!("not a string: {other:?}")),
        }
    }

    #[test]
    fn substring_counts_characters_as_mysql_8() {
        assert_eq!(chars("SUBSTRING('abcdef', 3)", false), Ok((4, false)));
        assert_eq!(chars("SUBSTRING('abcdef', -2)", false), Ok((2, false)));
        // From the right past the start: nothing (MySQL 8, not the whole string).
        assert_eq!(chars("SUBSTRING('abcdef', -10)", false), Ok((0, false)));
        assert_eq!(chars("SUBSTRING('abcdef', 0)", false), Ok((0, false)));
        assert_eq!(chars("SUBSTRING('abcdef', 2, 100)", false), Ok((5, false)));
        assert_eq!(
            chars("SUBSTRING('abcdef' FROM 2 FOR 3)", false),
            Ok((3, false))
        );
    }

    #[test]
    fn lengths_of_the_other_string_calls() {
        assert_eq!(chars("LEFT('abc', 2)", false), Ok((2, false)));
        assert_eq!(chars("RIGHT('abc', -1)", false), Ok((0, false)));
        assert_eq!(chars("REPLACE('aaaa', 'a', 'bbb')", false), Ok((12, false)));
        assert_eq!(chars("REPLACE('aaaa', 'aa', 'b')", false), Ok((4, false)));
        assert_eq!(chars("REPEAT('ab', 3)", false), Ok((6, false)));
        assert_eq!(chars("LPAD('ab', 5, '*')", false), Ok((5, false)));
        assert_eq!(
            chars("CONCAT_WS('--', 'a', 'bc', 'd')", false),
            Ok((8, false))
        );
        assert_eq!(chars("MD5('x')", false), Ok((32, false)));
        assert!(chars("REPEAT('ab', LENGTH('x'))", false).is_err());
    }

    #[test]
    fn strict_mode_makes_string_results_nullable() {
        assert_eq!(chars("TRIM('ab ')", true), Ok((3, true)));
        assert_eq!(chars("CONCAT('a', 'b')", true), Ok((2, true)));
        assert_eq!(chars("UPPER('ab')", true), Ok((2, true)));
        assert_eq!(chars("CAST(12 AS CHAR)", true), Ok((2, true)));
    }

    #[test]
    fn date_parts_are_nullable_ints() {
        let _mode = super::super::create_select_types::StrictTyping::new(false);
        let item = type_of(&crate::parse::test_expr("YEAR('2024-01-02')"), &[]);
        assert_eq!(item, Ok(Item::int(4, 4, false, true)));
        let item = type_of(&crate::parse::test_expr("DATE('2024-01-02')"), &[]);
        assert_eq!(item, Ok(Item::new(Kind::Temporal(DataType::Date), true)));
    }

    #[test]
    fn abs_keeps_its_operands_number_kind() {
        let _mode = super::super::create_select_types::StrictTyping::new(false);
        let ty = |sql: &str| type_of(&crate::parse::test_expr(sql), &[]);
        let int = ty("-12").unwrap();
        assert_eq!(ty("ABS(-12)"), Ok(int));
        let dec = ty("-1.25").unwrap();
        assert_eq!(ty("ABS(-1.25)"), Ok(dec));
        assert!(matches!(
            ty("ABS('-3')").map(|i| i.kind),
            Ok(Kind::Double { dec: NOT_FIXED, .. })
        ));
        assert!(ty("ABS(NULL)").is_err());
        assert!(ty("ABS(1, 2)").is_err());
    }
}
