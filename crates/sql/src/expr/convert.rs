//! Storing a value into a column: the conversions MySQL applies on INSERT and UPDATE,
//! with strict mode (`STRICT_TRANS_TABLES`/`STRICT_ALL_TABLES`, MariaDB's default)
//! refusing out-of-range numbers (1264), over-long strings (1406), malformed numbers
//! (1366) and impossible dates (1292) instead of clipping them. Without strict mode the
//! value is clipped or zeroed, as MySQL does with a warning.
//!
//! The result is the column's canonical value: `Int` for signed and `UInt` for unsigned
//! integers, `Decimal` at the column's scale, `Bytes` for strings (CHAR without its
//! trailing spaces), `DateTime` for dates.

use crate::expr::convert_temporal;
use strata_types::schema::ColumnDef;
use strata_types::value::parse_leading_f64;
use strata_types::{DataType, DateTime, Decimal, Error, Result, Value};

/// [`coerce`] for a statement: outside strict mode (`sql_mode` without STRICT_*, or
/// INSERT IGNORE) a value the column cannot hold is stored clipped, zeroed or cut as
/// MySQL stores it, with the warning MySQL gives (1264 out of range, 1366 incorrect
/// value, 1265 data truncated); in strict mode it is the error.
pub fn coerce_or_warn(
    v: Value,
    col: &ColumnDef,
    row: u64,
    strict: bool,
    env: &dyn crate::expr::Env,
) -> Result<Value> {
    if let DataType::Decimal { scale, .. } = col.data_type {
        // MySQL's note when non-zero fractional digits are rounded away (1.005 into a
        // DECIMAL(5,2)), in every mode; not with a value out of range (its warning).
        let cut = drops_digits(&v, scale);
        let out = coerce_or_warn_any(v, col, row, strict, env);
        if cut && matches!(out, Ok((_, false))) {
            env.warn(
                crate::expr::WarnLevel::Note,
                1265,
                format!("Data truncated for column '{}' at row {row}", col.name),
            );
        }
        return out.map(|(v, _)| v);
    }
    coerce_or_warn_any(v, col, row, strict, env).map(|(v, _)| v)
}

/// Whether storing `v` at `scale` fractional digits drops a non-zero digit (the
/// value's own digits: a double's shortest round-trip form, a string's text).
fn drops_digits(v: &Value, scale: u8) -> bool {
    let d = match v {
        Value::Decimal(d) => *d,
        Value::Double(f) => match Decimal::from_f64_digits(*f) {
            Some(d) => d,
            None => return false,
        },
        Value::Bytes(b) => match std::str::from_utf8(b)
            .ok()
            .and_then(|t| Decimal::parse(t.trim()))
        {
            Some(d) => d,
            None => return false,
        },
        _ => return false,
    };
    d.scale > scale && d.rescale(scale) != d
}

/// [`coerce_or_warn`], and whether the value was clipped (with its warning).
fn coerce_or_warn_any(
    v: Value,
    col: &ColumnDef,
    row: u64,
    strict: bool,
    env: &dyn crate::expr::Env,
) -> Result<(Value, bool)> {
    if strict {
        return match coerce(v.clone(), col, row, true) {
            // MySQL's strict mode reports a TIME past ±838:59:59 as an incorrect value.
            Err(Error::OutOfRange { .. }) if matches!(col.data_type, DataType::Time { .. }) => {
                Err(Error::TruncatedWrongValue {
                    kind: "time".into(),
                    value: v.to_text(),
                })
            }
            other => other.map(|x| (x, false)),
        };
    }
    match coerce(v.clone(), col, row, true) {
        Ok(x) => return Ok((x, false)),
        Err(e @ (Error::OutOfRange { .. } | Error::IncorrectValue { .. })) => {
            env.warn(crate::expr::WarnLevel::Warning, e.code(), e.to_string());
            coerce(v, col, row, false)
        }
        // Text that is no TIME stores 00:00:00 outside strict mode, no date the zero
        // date (`'2024-02-30'` is 0000-00-00), "truncated".
        Err(Error::TruncatedWrongValue { .. })
            if matches!(
                col.data_type,
                DataType::Time { .. }
                    | DataType::Date
                    | DataType::DateTime { .. }
                    | DataType::Timestamp { .. }
            ) =>
        {
            env.warn(
                crate::expr::WarnLevel::Warning,
                1265,
                format!("Data truncated for column '{}' at row {row}", col.name),
            );
            coerce(v, col, row, false)
        }
        // An ENUM/SET value that names no member: the error value '' or the members
        // recognised, "truncated".
        Err(Error::DataTruncated { column, row })
            if matches!(col.data_type, DataType::Enum(_) | DataType::Set(_)) =>
        {
            env.warn(
                crate::expr::WarnLevel::Warning,
                1265,
                format!("Data truncated for column '{column}' at row {row}"),
            );
            coerce(v, col, row, false)
        }
        Err(Error::DataTooLong { column, row }) => {
            env.warn(
                crate::expr::WarnLevel::Warning,
                1265,
                format!("Data truncated for column '{column}' at row {row}"),
            );
            coerce(v, col, row, false)
        }
        Err(e) => Err(e),
    }
    .map(|x| (x, true))
}

/// Converts `v` to the value `col` stores, by MySQL's rules: in strict mode a value that
/// does not fit is the error, otherwise it is clipped or cut.
pub fn coerce(v: Value, col: &ColumnDef, row: u64, strict: bool) -> Result<Value> {
    if !col.real_unsigned {
        return coerce_type(v, col, row, strict);
    }
    // DECIMAL/FLOAT/DOUBLE UNSIGNED: a value below zero is out of range, judged before
    // rounding to the column's scale as MySQL does (-0.001 too), and clipped to 0.
    let negative = v.to_f64().is_some_and(|f| f < 0.0);
    let out = coerce_type(v, col, row, strict)?;
    if !negative || out.is_null() {
        return Ok(out);
    }
    if strict {
        return Err(Error::OutOfRange {
            column: col.name.clone(),
            row,
        });
    }
    Ok(match out {
        Value::Decimal(d) => Value::Decimal(Decimal::new(0, d.scale)),
        _ => Value::Double(0.0),
    })
}

fn coerce_type(v: Value, col: &ColumnDef, row: u64, strict: bool) -> Result<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let ty = &col.data_type;
    let out_of_range = || Error::OutOfRange {
        column: col.name.clone(),
        row,
    };
    if let Some((min, max)) = ty.int_range() {
        let i: i128 = match &v {
            Value::Int(i) => *i as i128,
            Value::UInt(u) => *u as i128,
            Value::Double(d) => {
                if !d.is_finite() {
                    return Err(out_of_range());
                }
                // MySQL stores a DOUBLE in an integer column with rint(): half to
                // even (2.5 is 2, -0.5 is 0), unlike a DECIMAL or a string (2.5 is 3).
                d.round_ties_even().clamp(-1e30, 1e30) as i128
            }
            Value::Decimal(d) => d.rescale(0).mantissa(),
            Value::DateTime(_) | Value::Json(_) => v.to_i64().unwrap_or(0) as i128,
            Value::Bits(b) => strata_types::value::bits_value(b) as i128,
            // An ENUM/SET value in numeric context is its number.
            Value::Member { number, .. } => *number as i128,
            Value::Bytes(b) => {
                let text = String::from_utf8_lossy(b);
                let t = text.trim();
                match t.parse::<i128>() {
                    Ok(i) => i,
                    Err(_) => match t.parse::<f64>() {
                        Ok(f) if f.is_finite() => f.round().clamp(-1e30, 1e30) as i128,
                        _ if strict => {
                            return Err(Error::IncorrectValue {
                                kind: "integer".into(),
                                value: text.into_owned(),
                                column: col.name.clone(),
                                row,
                            })
                        }
                        _ => parse_leading_f64(b).round() as i128,
                    },
                }
            }
            Value::Null => unreachable!("handled above"),
        };
        let i = if i < min || i > max {
            if strict {
                return Err(out_of_range());
            }
            i.clamp(min, max)
        } else {
            i
        };
        return Ok(if ty.is_unsigned() {
            Value::UInt(i as u64)
        } else {
            Value::Int(i as i64)
        });
    }
    match ty {
        DataType::Json => json_column_value(v, col),
        DataType::Bit(n) => bit_column_value(v, *n, col, row, strict),
        DataType::Enum(_) | DataType::Set(_) => {
            crate::expr::convert_member::member_column_value(&v, col, row, strict)
        }
        DataType::Float { .. } | DataType::Double { .. } => {
            let f = match &v {
                Value::Bytes(b) => {
                    let text = String::from_utf8_lossy(b);
                    match text.trim().parse::<f64>() {
                        Ok(f) => f,
                        Err(_) if strict => {
                            return Err(Error::IncorrectValue {
                                kind: "double".into(),
                                value: text.into_owned(),
                                column: col.name.clone(),
                                row,
                            })
                        }
                        Err(_) => parse_leading_f64(b),
                    }
                }
                other => other.to_f64().unwrap_or(0.0),
            };
            if !f.is_finite() {
                return Err(out_of_range());
            }
            let f = match ty {
                DataType::Float {
                    fixed: Some((m, d)),
                }
                | DataType::Double {
                    fixed: Some((m, d)),
                } => {
                    // FLOAT(M,D) / DOUBLE(M,D), as MySQL's Field_real::truncate: the part
                    // above floor(f) rounded to D decimals (rint of the scaled
                    // fraction: -12.345 is -12.35, 7.125 is 7.12, -2.5 in D = 0 is -3),
                    // then held within ±(10^(M-D) - 10^-D): past it 1264 in strict
                    // mode, else clipped.
                    let scale = 10f64.powi(i32::from(*d));
                    let whole = f.floor();
                    let rounded = whole + ((f - whole) * scale).round_ties_even() / scale;
                    let rounded = if rounded.is_finite() { rounded } else { f };
                    let max = (10f64.powi(i32::from(*m)) - 1.0) / scale;
                    if rounded.abs() > max {
                        if strict {
                            return Err(out_of_range());
                        }
                        max.copysign(rounded)
                    } else {
                        rounded
                    }
                }
                _ => f,
            };
            Ok(Value::Double(if matches!(ty, DataType::Float { .. }) {
                f as f32 as f64
            } else {
                f
            }))
        }
        DataType::Decimal { precision, scale } => {
            use strata_types::decimal::Rounded;
            // Past the type's range: error 1264 in strict mode, else the type's largest
            // value (text and doubles past 38 digits included), as MySQL clamps.
            let clamp = |negative: bool| {
                if strict {
                    Err(out_of_range())
                } else {
                    Ok(Value::Decimal(Decimal::type_max(
                        *precision, *scale, negative,
                    )))
                }
            };
            let d = match &v {
                Value::Decimal(d) => *d,
                Value::Int(i) => Decimal::from_i64(*i),
                Value::UInt(u) => Decimal::new(*u as i128, 0),
                Value::Double(f) => match Decimal::from_f64(*f, *scale) {
                    Some(d) => d,
                    None if f.is_finite() => return clamp(*f < 0.0),
                    None => return Err(out_of_range()),
                },
                Value::Bytes(b) => {
                    let text = String::from_utf8_lossy(b);
                    let parsed = match Decimal::parse_rounded(&text, *scale) {
                        Some(r) => r,
                        None if strict => {
                            return Err(Error::IncorrectValue {
                                kind: "decimal".into(),
                                value: text.into_owned(),
                                column: col.name.clone(),
                                row,
                            })
                        }
                        None => Decimal::parse_rounded(Decimal::numeric_prefix(&text), *scale)
                            .unwrap_or(Rounded::Value(Decimal::new(0, *scale))),
                    };
                    match parsed {
                        Rounded::Value(d) => d,
                        Rounded::Overflow { negative } => return clamp(negative),
                    }
                }
                Value::DateTime(_) | Value::Json(_) => Decimal::from_i64(v.to_i64().unwrap_or(0)),
                Value::Bits(b) => Decimal::from_u64(strata_types::value::bits_value(b)),
                Value::Member { number, .. } => Decimal::from_u64(*number),
                Value::Null => unreachable!("handled above"),
            };
            // Judged before rounding too: a value past 65 digits at the column's
            // scale rounds to a saturated one that a DECIMAL(65,s) would take for its own.
            if *precision > strata_types::decimal::NARROW
                && d.int_digits() > (*precision - *scale) as u32
            {
                return clamp(d.signum() < 0);
            }
            let d = d.rescale(*scale);
            if !d.is_exact() {
                // Digits past 38 an earlier result dropped (MySQL 8 holds them) decide.
                return Err(Error::NotSupported(
                    "DECIMAL results of more than 38 digits".into(),
                ));
            }
            if d.int_digits() > (*precision - *scale) as u32 {
                return clamp(d.mantissa() < 0);
            }
            Ok(Value::Decimal(d))
        }
        DataType::Time { fsp } => convert_temporal::coerce_time(&v, *fsp, col, row, strict),
        DataType::Year => convert_temporal::coerce_year(&v, col, row, strict),
        DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. } => {
            // A seventh fraction digit rounds the sixth (carried by the rounding below).
            let mut bump = false;
            let dt = match &v {
                Value::DateTime(d) => Some(*d),
                Value::Bytes(b) | Value::Member { text: b, .. } => {
                    std::str::from_utf8(b).ok().and_then(|s| {
                        let (text, up) = convert_temporal::cut_fraction(s);
                        bump = up;
                        DateTime::parse(&text)
                    })
                }
                Value::Int(_) | Value::UInt(_) => DateTime::parse(&v.to_text()),
                Value::Decimal(_) | Value::Double(_) => {
                    crate::expr::datetime::temporal::stamp_of(&v, false).map(|s| s.dt)
                }
                Value::Null | Value::Json(_) | Value::Bits(_) => None,
            };
            match dt {
                Some(mut d) => {
                    if *ty == DataType::Date {
                        d = d.as_date();
                    } else {
                        d.micro += bump as u32;
                        d = convert_temporal::round_datetime(d, ty.fsp().unwrap_or(0), col, row)?;
                    }
                    Ok(Value::DateTime(d))
                }
                None if strict => Err(Error::TruncatedWrongValue {
                    kind: if *ty == DataType::Date {
                        "date"
                    } else {
                        "datetime"
                    }
                    .into(),
                    value: v.to_text(),
                }),
                None => Ok(Value::DateTime(DateTime::default())),
            }
        }
        _ => {
            // Strings.
            let mut bytes = match v {
                Value::Bytes(b) | Value::Member { text: b, .. } => b,
                other => {
                    let mut b = Vec::new();
                    other.write_text(&mut b);
                    b
                }
            };
            let limit = ty.max_len().unwrap_or(u32::MAX) as usize;
            // A CHAR/VARCHAR/TEXT column holds utf8mb4 (a binary-collated one holds
            // bytes): a value that is not UTF-8 is 1366 in strict mode, and otherwise
            // is cut at its first bad byte, as MySQL keeps the well-formed prefix.
            let utf8 = matches!(
                ty,
                DataType::Char(_) | DataType::VarChar(_) | DataType::Text(_)
            ) && col.collation != strata_types::Collation::Binary;
            // CHAR/VARCHAR (and ENUM/SET) limits count characters; the others bytes.
            let in_chars = ty.is_text() && !matches!(ty, DataType::Text(_));
            let mut len = bytes.len();
            if utf8 || in_chars {
                match std::str::from_utf8(&bytes) {
                    Ok(s) if in_chars => len = s.chars().count(),
                    Ok(_) => {}
                    Err(e) if utf8 => {
                        let at = e.valid_up_to();
                        if strict {
                            return Err(Error::IncorrectValue {
                                kind: "string".into(),
                                value: printable_bytes(&bytes[at..]),
                                column: col.name.clone(),
                                row,
                            });
                        }
                        bytes.truncate(at);
                        len = if in_chars { char_len(&bytes) } else { at };
                    }
                    Err(_) => {}
                }
            }
            if matches!(ty, DataType::Char(_)) {
                while bytes.last() == Some(&b' ') {
                    bytes.pop();
                }
            }
            let len = len.min(if matches!(ty, DataType::Char(_)) {
                char_len(&bytes)
            } else {
                len
            });
            if len > limit {
                if strict {
                    return Err(Error::DataTooLong {
                        column: col.name.clone(),
                        row,
                    });
                }
                bytes = truncate_chars(
                    &bytes,
                    limit,
                    ty.is_text() && !matches!(ty, DataType::Text(_)),
                );
            }
            if let DataType::Binary(n) = ty {
                // BINARY(n) holds exactly n bytes: MySQL pads a shorter value with 0x00
                // when it stores it, so HEX, LENGTH and comparisons see the padding.
                bytes.resize(bytes.len().max(*n as usize), 0);
            }
            Ok(Value::Bytes(bytes))
        }
    }
}

/// The start of a malformed string as MySQL shows it in 1366: up to six bytes, printable
/// ASCII as itself and any other byte as `\xHH`, then `...` when more follow.
fn printable_bytes(b: &[u8]) -> String {
    let mut out = String::new();
    for &c in b.iter().take(6) {
        if (0x20..0x7f).contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("\\x{c:02X}"));
        }
    }
    if b.len() > 6 {
        out.push_str("...");
    }
    out
}

/// A value stored into a BIT(n) column: a number as its bits, a string's bytes as a
/// big-endian number (`'A'` is 0x41), as MySQL stores them. More bits than the column
/// has is 1406 in strict mode; otherwise the column's largest value (MySQL's clip).
fn bit_column_value(v: Value, n: u8, col: &ColumnDef, row: u64, strict: bool) -> Result<Value> {
    let bytes_value = |b: &[u8]| -> Option<u64> {
        let lead = b.len().saturating_sub(8);
        b[..lead]
            .iter()
            .all(|x| *x == 0)
            .then(|| strata_types::value::bits_value(b))
    };
    let u: Option<u64> = match &v {
        Value::Bits(b) | Value::Bytes(b) => bytes_value(b),
        Value::Int(i) if *i >= 0 => Some(*i as u64),
        // A negative number is its two's-complement bits, which only BIT(64) holds.
        Value::Int(i) => (n == 64).then_some(*i as u64),
        Value::UInt(u) => Some(*u),
        Value::Double(d) if d.is_finite() && *d > -0.5 && *d < 1.8446744073709552e19 => {
            Some(d.round() as u64)
        }
        Value::Decimal(d) => u64::try_from(d.rescale(0).mantissa()).ok(),
        Value::Json(_) | Value::DateTime(_) => v.to_i64().and_then(|i| u64::try_from(i).ok()),
        _ => None,
    };
    let max = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let u = match u {
        Some(u) if u <= max => u,
        _ if strict => {
            return Err(Error::DataTooLong {
                column: col.name.clone(),
                row,
            })
        }
        _ => max,
    };
    Ok(Value::Bits(strata_types::value::bits_bytes(u, n)))
}

/// A value stored into a JSON column: a JSON value as it is, a string parsed and
/// normalised (3140 naming the column when it is not JSON text); anything else is not
/// JSON text either, as MySQL 8 refuses it (CAST it to JSON first).
fn json_column_value(v: Value, col: &ColumnDef) -> Result<Value> {
    let invalid = |reason: &str, pos: usize| Error::InvalidJsonText {
        reason: reason.into(),
        pos,
        column: col.name.clone(),
    };
    match v {
        Value::Json(b) => Ok(Value::Json(b)),
        Value::Bytes(b) => match strata_types::json::text::parse(&b) {
            Ok(j) => Ok(Value::Json(strata_types::json::binary::encode(&j))),
            Err(e) if e.too_deep => Err(Error::JsonTooDeep),
            Err(e) => Err(invalid(e.message, e.pos)),
        },
        _ => Err(invalid("not a JSON text, may need CAST", 0)),
    }
}

fn char_len(b: &[u8]) -> usize {
    std::str::from_utf8(b)
        .map(|s| s.chars().count())
        .unwrap_or(b.len())
}

fn truncate_chars(b: &[u8], n: usize, chars: bool) -> Vec<u8> {
    if !chars {
        return b[..n.min(b.len())].to_vec();
    }
    match std::str::from_utf8(b) {
        Ok(s) => s.chars().take(n).collect::<String>().into_bytes(),
        Err(_) => b[..n.min(b.len())].to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::Collation;

    fn col(ty: DataType) -> ColumnDef {
        ColumnDef {
            name: "c".into(),
            data_type: ty,
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: Collation::GeneralCi,
            members: Vec::new(),
            generated: None,
            comment: String::new(),
            real_unsigned: false,
            invisible: Default::default(),
        }
    }

    #[test]
    fn binary_n_pads_with_zero_bytes() {
        let b = col(DataType::Binary(4));
        assert_eq!(
            coerce(Value::str("ab"), &b, 1, true).unwrap(),
            Value::Bytes(b"ab\0\0".to_vec())
        );
        assert_eq!(
            coerce(Value::str("abcd"), &b, 1, true).unwrap(),
            Value::Bytes(b"abcd".to_vec())
        );
        // VARBINARY keeps the value's own length.
        let vb = col(DataType::VarBinary(4));
        assert_eq!(
            coerce(Value::str("ab"), &vb, 1, true).unwrap(),
            Value::Bytes(b"ab".to_vec())
        );
    }

    #[test]
    fn outside_strict_mode_values_are_clipped_with_mysqls_warning() {
        use crate::expr::functions::test_env::TestEnv;
        let env = TestEnv::default();
        let tiny = col(DataType::TinyInt { unsigned: false });
        assert_eq!(
            coerce_or_warn(Value::Int(300), &tiny, 2, false, &env).unwrap(),
            Value::Int(127)
        );
        assert_eq!(
            coerce_or_warn(
                Value::str("abcd"),
                &col(DataType::VarChar(3)),
                2,
                false,
                &env
            )
            .unwrap(),
            Value::str("abc")
        );
        assert_eq!(
            coerce_or_warn(Value::Int(5), &tiny, 2, false, &env).unwrap(),
            Value::Int(5)
        );
        assert_eq!(
            *env.warnings.borrow(),
            vec![
                (
                    1264,
                    "Out of range value for column 'c' at row 2".to_string()
                ),
                (1265, "Data truncated for column 'c' at row 2".to_string()),
            ]
        );
        assert_eq!(
            coerce_or_warn(Value::Int(300), &tiny, 2, true, &env)
                .unwrap_err()
                .code(),
            1264
        );
    }

    #[test]
    fn a_double_stored_in_an_integer_column_rounds_half_to_even() {
        let int = col(DataType::Int { unsigned: false });
        let stored = |v: Value| coerce(v, &int, 1, true).unwrap();
        // rint(), as MySQL's Field_long::store(double).
        assert_eq!(stored(Value::Double(2.5)), Value::Int(2));
        assert_eq!(stored(Value::Double(3.5)), Value::Int(4));
        assert_eq!(stored(Value::Double(-0.5)), Value::Int(0));
        assert_eq!(stored(Value::Double(-2.6)), Value::Int(-3));
        // A DECIMAL and a string round half away from zero.
        assert_eq!(stored(Value::Decimal(Decimal::new(25, 1))), Value::Int(3));
        assert_eq!(stored(Value::str("2.5")), Value::Int(3));
    }

    #[test]
    fn strict_mode_refuses_bad_values() {
        let tiny = col(DataType::TinyInt { unsigned: false });
        assert_eq!(
            coerce(Value::Int(127), &tiny, 1, true).unwrap(),
            Value::Int(127)
        );
        assert_eq!(
            coerce(Value::Int(300), &tiny, 1, true).unwrap_err().code(),
            1264
        );
        assert_eq!(
            coerce(Value::Int(300), &tiny, 1, false).unwrap(),
            Value::Int(127)
        );
        assert_eq!(
            coerce(Value::str("x"), &tiny, 1, true).unwrap_err().code(),
            1366
        );
        let vc = col(DataType::VarChar(3));
        assert_eq!(
            coerce(Value::str("abcd"), &vc, 1, true).unwrap_err().code(),
            1406
        );
        assert_eq!(
            coerce(Value::str("héé"), &vc, 1, true).unwrap(),
            Value::str("héé")
        );
        let ch = col(DataType::Char(5));
        assert_eq!(
            coerce(Value::str("ab  "), &ch, 1, true).unwrap(),
            Value::str("ab")
        );
        let d = col(DataType::Decimal {
            precision: 5,
            scale: 2,
        });
        assert_eq!(
            coerce(Value::str("1.005"), &d, 1, true).unwrap().to_text(),
            "1.01"
        );
        assert_eq!(
            coerce(Value::Int(1000), &d, 1, true).unwrap_err().code(),
            1264
        );
        let dt = col(DataType::DateTime { fsp: 0 });
        assert_eq!(
            coerce(Value::str("2001-02-30"), &dt, 1, true)
                .unwrap_err()
                .code(),
            1292
        );
        // The fraction is rounded to the column's digits, never dropped.
        let dt6 = col(DataType::DateTime { fsp: 6 });
        let dt3 = col(DataType::DateTime { fsp: 3 });
        let v = Value::str("2020-01-01 10:00:00.123456");
        let text = |v: Value, c| coerce(v, c, 1, true).unwrap().to_text();
        assert_eq!(text(v.clone(), &dt6), "2020-01-01 10:00:00.123456");
        assert_eq!(text(v.clone(), &dt3), "2020-01-01 10:00:00.123");
        assert_eq!(text(v, &dt), "2020-01-01 10:00:00");
        let seven = Value::str("2020-12-31 23:59:59.9999995");
        assert_eq!(text(seven, &dt6), "2021-01-01 00:00:00.000000");
        assert_eq!(
            text(Value::Double(20200101100000.5), &dt3),
            "2020-01-01 10:00:00.500"
        );
    }

    #[test]
    fn text_columns_refuse_bytes_that_are_not_utf8() {
        let vc = col(DataType::VarChar(10));
        let bad = Value::Bytes(b"ab\xE9cd".to_vec());
        let e = coerce(bad.clone(), &vc, 3, true).unwrap_err();
        assert_eq!(e.code(), 1366);
        assert_eq!(
            e.to_string(),
            "Incorrect string value: '\\xE9cd' for column 'c' at row 3"
        );
        // Outside strict mode the well-formed prefix is kept.
        assert_eq!(
            coerce(bad.clone(), &vc, 3, false).unwrap(),
            Value::str("ab")
        );
        // A TEXT column and a CHAR column check the same way; `é` in UTF-8 is fine.
        assert!(coerce(bad.clone(), &col(DataType::Text(65535)), 1, true).is_err());
        assert!(coerce(bad.clone(), &col(DataType::Char(5)), 1, true).is_err());
        assert_eq!(
            coerce(Value::str("é"), &vc, 1, true).unwrap(),
            Value::str("é")
        );
        // A binary-collated or binary column holds any bytes.
        let mut bin = col(DataType::VarChar(10));
        bin.collation = Collation::Binary;
        assert_eq!(coerce(bad.clone(), &bin, 1, true).unwrap(), bad);
        assert_eq!(
            coerce(bad.clone(), &col(DataType::VarBinary(10)), 1, true).unwrap(),
            bad
        );
        // Long tails are cut to six bytes with `...`, as MySQL shows them.
        assert_eq!(
            printable_bytes(&[0xFF; 8]),
            "\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF..."
        );
    }
}
