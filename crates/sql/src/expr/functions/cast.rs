//! CAST(x AS type), CONVERT(x, type) and CONVERT(x USING charset), with MySQL 8's
//! conversions and warnings: text read as a number stops at the first character that
//! is not part of one and warns 1292 (`CAST('1x' AS SIGNED)` is 1 with "Truncated
//! incorrect INTEGER value: '1x'"), CHAR(n) and BINARY(n) cut with 1292 (BINARY(n)
//! pads with zero bytes), a bad date is NULL with 1292. Also the helpers arithmetic and
//! comparisons use to warn when a string they read as a number is not entirely one.

use super::{arg, text};
use crate::expr::datetime::{functions as datefn, temporal};
use crate::expr::{EvalCtx, Expr, WarnLevel};
use strata_types::value::parse_leading_f64;
use strata_types::{DateTime, Decimal, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastFn {
    Signed,
    Unsigned,
    /// CHAR[(n)], and CONVERT(x USING utf8mb4): text, cut to n characters.
    Char(Option<u32>),
    /// BINARY[(n)]: bytes, cut or zero-padded to n.
    Binary(Option<u32>),
    Double,
    /// FLOAT (single precision, MySQL 8.0.17+): the double rounded to an f32; past
    /// its range 1690. Shown as MySQL shows a FLOAT (the result column is FLOAT).
    Float,
    Decimal(u8, u8),
    Date,
    /// DATETIME(fsp)
    DateTime(u8),
    /// TIME(fsp)
    Time(u8),
}

pub(super) fn call(f: CastFn, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    if let CastFn::Time(fsp) = f {
        // CAST AS TIME reads its argument as TIME(x) does.
        return datefn::eval(datefn::DateFn::TimeOf(fsp), false, args, row, cx);
    }
    let v = arg(args, 0, row, cx)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    Ok(match f {
        CastFn::Signed | CastFn::Unsigned => {
            let unsigned = f == CastFn::Unsigned;
            match &v {
                Value::Int(i) if unsigned => Value::UInt(*i as u64),
                Value::UInt(u) if !unsigned => Value::Int(*u as i64),
                Value::Int(_) | Value::UInt(_) => v,
                Value::Bytes(b) => integer_from_text(b, unsigned, cx),
                Value::Double(d) => {
                    // A double rounds half to even (MySQL's rint) and saturates.
                    let r = d.round_ties_even();
                    if unsigned && r < 0.0 {
                        Value::UInt(r.max(i64::MIN as f64) as i64 as u64)
                    } else if unsigned {
                        Value::UInt(r as u64)
                    } else {
                        Value::Int(r as i64)
                    }
                }
                Value::Decimal(d) => {
                    let m = d.rescale(0).mantissa();
                    if unsigned && m >= 0 {
                        Value::UInt(m.min(u64::MAX as i128) as u64)
                    } else if unsigned {
                        Value::UInt(m.max(i64::MIN as i128) as i64 as u64)
                    } else {
                        Value::Int(m.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
                    }
                }
                Value::Bits(b) => {
                    let u = strata_types::value::bits_value(b);
                    if unsigned {
                        Value::UInt(u)
                    } else {
                        Value::Int(u as i64)
                    }
                }
                // An ENUM/SET value is its number in integer context.
                Value::DateTime(_) | Value::Json(_) | Value::Member { .. } => {
                    let n = v.to_i64().unwrap_or(0);
                    if unsigned {
                        Value::UInt(n as u64)
                    } else {
                        Value::Int(n)
                    }
                }
                Value::Null => Value::Null,
            }
        }
        CastFn::Char(n) => {
            let s = match &v {
                Value::Double(d) => strata_types::value::format_double(*d).into_bytes(),
                v => text(v),
            };
            match n {
                Some(n) => {
                    let b = super::string::boundaries(&s, false);
                    if b.len() - 1 > n as usize {
                        warn_truncated(cx, &format!("CHAR({n})"), &s);
                        Value::Bytes(s[..b[n as usize]].to_vec())
                    } else {
                        Value::Bytes(s)
                    }
                }
                None => Value::Bytes(s),
            }
        }
        CastFn::Binary(n) => {
            let mut s = match &v {
                Value::Double(d) => strata_types::value::format_double(*d).into_bytes(),
                v => text(v),
            };
            if let Some(n) = n {
                let n = n as usize;
                if s.len() > n {
                    warn_truncated(cx, &format!("BINARY({n})"), &s);
                    s.truncate(n);
                } else {
                    s.resize(n, 0);
                }
            }
            Value::Bytes(s)
        }
        CastFn::Double => match &v {
            Value::Bytes(b) => Value::Double(double_from_text(b, cx)),
            v => Value::Double(v.to_f64().unwrap_or(0.0)),
        },
        CastFn::Float => {
            let d = match &v {
                Value::Bytes(b) => double_from_text(b, cx),
                v => v.to_f64().unwrap_or(0.0),
            };
            if d.is_finite() && d.abs() > f32::MAX as f64 {
                let shown = match &v {
                    Value::Bytes(_) => format!("'{}'", v.to_text()),
                    v => v.to_text(),
                };
                return Err(strata_types::Error::ValueOutOfRange {
                    kind: "FLOAT".into(),
                    expr: format!("cast({shown} as float)"),
                });
            }
            Value::Double(d as f32 as f64)
        }
        CastFn::Decimal(precision, scale) => {
            use strata_types::decimal::Rounded;
            // Beyond DECIMAL(p,s) the value is the largest of that type, as MySQL clamps;
            // text and doubles past 38 digits are clamped the same way, never NULL.
            let clamp =
                |negative: bool| Value::Decimal(Decimal::type_max(precision, scale, negative));
            let d = match &v {
                Value::Decimal(d) => *d,
                Value::Int(i) => Decimal::from_i64(*i),
                Value::UInt(u) => Decimal::from_u64(*u),
                Value::Bytes(b) => {
                    let t = String::from_utf8_lossy(b);
                    let parsed = match Decimal::parse_rounded(&t, scale) {
                        Some(r) => r,
                        None => {
                            warn_truncated(cx, "DECIMAL", b);
                            Decimal::parse_rounded(Decimal::numeric_prefix(&t), scale)
                                .unwrap_or(Rounded::Value(Decimal::new(0, scale)))
                        }
                    };
                    match parsed {
                        Rounded::Value(d) => d,
                        Rounded::Overflow { negative } => return Ok(clamp(negative)),
                    }
                }
                v => {
                    let f = v.to_f64().unwrap_or(0.0);
                    match Decimal::from_f64_digits(f) {
                        Some(d) => d,
                        None if f.is_finite() => return Ok(clamp(f < 0.0)),
                        None => return Ok(Value::Null),
                    }
                }
            };
            // Rounded from every digit held.
            let d = d.round_to(scale as i64, false).rescale(scale);
            if !d.is_exact() {
                // Digits past 38 an earlier result dropped (MySQL 8 holds them) decide.
                return Err(strata_types::Error::NotSupported(
                    "DECIMAL results of more than 38 digits".into(),
                ));
            }
            if d.int_digits() > precision.saturating_sub(scale) as u32 {
                clamp(d.mantissa() < 0)
            } else {
                Value::Decimal(d)
            }
        }
        CastFn::Date | CastFn::DateTime(_) => {
            let Some(s) = temporal::stamp_arg(&v, false, false, cx) else {
                return Ok(Value::Null);
            };
            match f {
                CastFn::Date => datefn::emit(s, datefn::Out::Date),
                CastFn::DateTime(fsp) => match round_fraction(s.dt, fsp) {
                    Some(dt) => datefn::emit(
                        temporal::Stamp { dt, has_time: true },
                        datefn::Out::DateTime(fsp),
                    ),
                    None => Value::Null,
                },
                _ => unreachable!("dates above"),
            }
        }
        CastFn::Time(_) => unreachable!("handled above"),
    })
}

/// A date-time rounded to `fsp` fraction digits, carrying into the seconds as MySQL
/// rounds on CAST; None past 9999-12-31.
fn round_fraction(dt: DateTime, fsp: u8) -> Option<DateTime> {
    let unit = 10i64.pow(6 - fsp.min(6) as u32);
    let micro = dt.micro as i64;
    let rounded = (micro + unit / 2) / unit * unit;
    if rounded == micro {
        return Some(dt);
    }
    const DAY: i64 = 86_400_000_000;
    let total = temporal::day_seconds(&dt) * 1_000_000 + rounded;
    let days = temporal::dt_daynr(&dt) + total / DAY;
    let out = temporal::from_daynr_micros(days, total % DAY)?;
    (out.year <= 9999).then_some(out)
}

/// 1292 "Truncated incorrect <kind> value: '<text>'".
pub(crate) fn warn_truncated(cx: &EvalCtx, kind: &str, text: &[u8]) {
    cx.env.warn(
        WarnLevel::Warning,
        1292,
        format!(
            "Truncated incorrect {kind} value: '{}'",
            String::from_utf8_lossy(text)
        ),
    );
}

/// Text read as an integer the way MySQL's CAST reads it (`strtoll10`): leading
/// spaces and a sign, then digits; anything after them, an empty string or an
/// overflow warns 1292. A value past BIGINT UNSIGNED saturates; a positive value read
/// as SIGNED keeps its 64 bits (`'18446744073709551615'` is -1), as MySQL.
fn integer_from_text(b: &[u8], unsigned: bool, cx: &EvalCtx) -> Value {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let mut i = start;
    let negative = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits_start = i;
    let mut n: u128 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        n = (n * 10 + (b[i] - b'0') as u128).min(u128::from(u64::MAX) + 1);
        i += 1;
    }
    let no_digits = i == digits_start;
    let overflow = if negative {
        n > 1u128 << 63
    } else {
        n > u64::MAX as u128
    };
    if no_digits || overflow || i != b.len() {
        warn_truncated(cx, "INTEGER", b);
    }
    let bits: u64 = if negative {
        if overflow {
            i64::MIN as u64
        } else {
            (n as u64).wrapping_neg()
        }
    } else if overflow {
        u64::MAX
    } else {
        n as u64
    };
    if unsigned {
        if negative && !overflow && n > 0 {
            note_complement(cx, "unsigned converted negative integer to it's positive");
        }
        Value::UInt(bits)
    } else {
        if !negative && !overflow && n > i64::MAX as u128 {
            note_complement(
                cx,
                "signed converted positive out-of-range integer to it's negative",
            );
        }
        Value::Int(bits as i64)
    }
}

/// MySQL's note when CAST reinterprets the sign bit.
fn note_complement(cx: &EvalCtx, what: &str) {
    cx.env
        .warn(WarnLevel::Note, 1105, format!("Cast to {what} complement"));
}

/// Whether text is a number from start to end (surrounding spaces allowed), as MySQL
/// reads it without complaint: `12`, `-1.5e3`, ` 7 `. Not: ``, `1x`, `0x1A`.
pub(crate) fn is_whole_number(b: &[u8]) -> bool {
    let t = match std::str::from_utf8(b) {
        Ok(t) => t.trim_matches(|c: char| c.is_ascii_whitespace()),
        Err(_) => return false,
    };
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(p) => (&t[..p], Some(&t[p + 1..])),
        None => (t, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !digits(int) || !digits(frac) {
        return false;
    }
    match exponent {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && digits(e)
        }
    }
}

/// Text read as a DOUBLE, warning 1292 when it is not entirely a number.
pub(crate) fn double_from_text(b: &[u8], cx: &EvalCtx) -> f64 {
    if !is_whole_number(b) {
        warn_truncated(cx, "DOUBLE", b);
    }
    parse_leading_f64(b)
}

#[cfg(test)]
mod tests {
    use super::super::test_env::{run, show, TestEnv};
    use super::super::Func;
    use super::*;

    fn cast(f: CastFn, v: Value, env: &TestEnv) -> String {
        show(run(Func::Cast(f), vec![v], env))
    }

    #[test]
    fn text_to_integer_warns_as_mysql() {
        let env = TestEnv::default();
        assert_eq!(cast(CastFn::Signed, Value::str("1x"), &env), "1");
        assert_eq!(cast(CastFn::Signed, Value::str(" 42"), &env), "42");
        assert_eq!(cast(CastFn::Signed, Value::str("1.5"), &env), "1");
        assert_eq!(cast(CastFn::Signed, Value::str(""), &env), "0");
        assert_eq!(
            cast(CastFn::Signed, Value::str("99999999999999999999"), &env),
            "-1"
        );
        assert_eq!(
            cast(CastFn::Signed, Value::str("-99999999999999999999"), &env),
            "-9223372036854775808"
        );
        assert_eq!(env.codes(), vec![1292, 1292, 1292, 1292, 1292]);
        assert_eq!(
            env.warnings.borrow()[0].1,
            "Truncated incorrect INTEGER value: '1x'"
        );
        let env = TestEnv::default();
        assert_eq!(
            cast(CastFn::Unsigned, Value::str("-1"), &env),
            "18446744073709551615"
        );
        assert_eq!(
            cast(CastFn::Unsigned, Value::Int(-1), &env),
            "18446744073709551615"
        );
        assert_eq!(cast(CastFn::Signed, Value::Double(2.5), &env), "2");
        assert_eq!(
            cast(
                CastFn::Signed,
                Value::Decimal(Decimal::parse("-1.5").unwrap()),
                &env
            ),
            "-2"
        );
        assert_eq!(env.codes(), vec![1105]);
    }

    #[test]
    fn datetime_fractions_round_and_carry() {
        let env = TestEnv::default();
        let dt = |s: &str, fsp| cast(CastFn::DateTime(fsp), Value::str(s), &env);
        assert_eq!(dt("2024-12-31 23:59:59.9", 0), "2025-01-01 00:00:00");
        assert_eq!(dt("2024-01-02 03:04:05.678", 2), "2024-01-02 03:04:05.68");
        assert_eq!(dt("2024-01-02 03:04:05.4", 0), "2024-01-02 03:04:05");
        assert_eq!(dt("9999-12-31 23:59:59.9", 0), "NULL");
    }

    #[test]
    fn char_and_binary_lengths() {
        let env = TestEnv::default();
        assert_eq!(cast(CastFn::Char(Some(3)), Value::str("abcd"), &env), "abc");
        assert_eq!(cast(CastFn::Char(Some(3)), Value::str("añb"), &env), "añb");
        assert_eq!(
            run(
                Func::Cast(CastFn::Binary(Some(3))),
                vec![Value::str("a")],
                &env
            ),
            Value::Bytes(vec![b'a', 0, 0])
        );
        assert_eq!(cast(CastFn::Binary(Some(2)), Value::str("abc"), &env), "ab");
        assert_eq!(env.codes(), vec![1292, 1292]);
        assert_eq!(
            env.warnings.borrow()[1].1,
            "Truncated incorrect BINARY(2) value: 'abc'"
        );
    }

    #[test]
    fn numbers_in_text() {
        for ok in ["1", " -1.5e3 ", ".5", "5.", "+7"] {
            assert!(is_whole_number(ok.as_bytes()), "{ok}");
        }
        for bad in ["", "1x", "e5", "1e", "0x1A", ".", "- 1"] {
            assert!(!is_whole_number(bad.as_bytes()), "{bad}");
        }
        let env = TestEnv::default();
        assert_eq!(cast(CastFn::Decimal(5, 2), Value::str("1x"), &env), "1.00");
        assert_eq!(cast(CastFn::Double, Value::str("2.5y"), &env), "2.5");
        assert_eq!(
            cast(CastFn::Float, Value::Double(0.1), &env),
            "0.10000000149011612"
        );
        let err = super::super::test_env::try_run(
            Func::Cast(CastFn::Float),
            vec![Value::str("1e40")],
            &env,
        )
        .unwrap_err();
        assert_eq!(err.code(), 1690);
        assert_eq!(
            env.warnings.borrow()[0].1,
            "Truncated incorrect DECIMAL value: '1x'"
        );
        assert_eq!(
            env.warnings.borrow()[1].1,
            "Truncated incorrect DOUBLE value: '2.5y'"
        );
    }
}
