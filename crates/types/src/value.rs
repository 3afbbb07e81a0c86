//! A SQL value as it moves between layers: NULL, signed and unsigned integers, doubles,
//! exact decimals, byte strings (text is UTF-8 bytes; the column type says whether it
//! is text or binary) and date-times. `Display` gives MySQL's text-protocol form.

use crate::datetime::DateTime;
use crate::decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub enum Value {
    #[default]
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    Decimal(Decimal),
    Bytes(Vec<u8>),
    DateTime(DateTime),
    /// A JSON document in its binary form (docs/format/json.md), as a JSON column
    /// stores it; printed as MySQL 8 prints JSON.
    Json(Vec<u8>),
    /// A bit value: a BIT(n) column's or a `b'101'` literal's bytes, big-endian. A
    /// binary string in string context, an unsigned integer in numeric context.
    Bits(Vec<u8>),
    /// An ENUM or SET column's value (`member.rs`): its number (ENUM: the 1-based
    /// position of the member, 0 for the error value ''; SET: the bitmask of its members)
    /// and its text. A string everywhere but in numeric context and ORDER BY, where MySQL
    /// uses the number.
    Member {
        number: u64,
        text: Vec<u8>,
    },
}

impl Value {
    /// The bytes the value takes in memory: its slot (`size_of::<Value>()`, 48: a
    /// decimal's `i128` makes every value that wide) plus the block malloc gives a
    /// string's bytes ([`crate::memory::malloc_block`]), for the memory bounds of
    /// sorts, grouping, hash join buffers and materialised rows. Measured against RSS
    /// (docs/memory.md): counting 24 bytes and the string's length, as before, held
    /// a third of what rows really cost.
    pub fn approx_bytes(&self) -> usize {
        size_of::<Value>() + self.heap_bytes()
    }

    /// The bytes of the value's own heap block (a string's), as malloc sizes it.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Value::Bytes(b) | Value::Json(b) | Value::Bits(b) => {
                crate::memory::malloc_block(b.capacity())
            }
            Value::Member { text, .. } => crate::memory::malloc_block(text.capacity()),
            _ => 0,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn str(s: &str) -> Value {
        Value::Bytes(s.as_bytes().to_vec())
    }

    /// The value as a signed integer, converting as MySQL's `val_int` does: a string
    /// reads its leading integer (`'2.6'` is 2, `'1e1'` is 1: MySQL's strtoll10, not a
    /// rounded double), a double rounds half to even (`rint`: 2.5 is 2, -0.5 is 0), a
    /// decimal half away from zero; out-of-range values saturate. None for NULL.
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            Value::Null => None,
            Value::Int(v) => Some(*v),
            Value::UInt(v) => Some(*v as i64),
            Value::Double(d) => Some(d.round_ties_even() as i64),
            Value::Decimal(d) => Some(
                d.rescale(0)
                    .mantissa()
                    .clamp(i64::MIN as i128, i64::MAX as i128) as i64,
            ),
            Value::Bytes(b) => Some(parse_leading_i64(b)),
            Value::DateTime(dt) => Some(datetime_as_number(dt) as i64),
            Value::Json(b) => Some(json_number(b).round() as i64),
            Value::Bits(b) => Some(bits_value(b) as i64),
            Value::Member { number, .. } => Some(*number as i64),
        }
    }

    /// A DATE or DATETIME as MySQL reads it in arithmetic: a DATE or a DATETIME without
    /// a fraction is an integer (YYYYMMDD, YYYYMMDDhhmmss), one with a fraction a DECIMAL
    /// with its fractional digits. None for other values.
    pub fn temporal_number(&self) -> Option<Value> {
        let Value::DateTime(dt) = self else {
            return None;
        };
        let whole = datetime_as_number(dt) as i64;
        let digits = if dt.is_date_only() {
            0
        } else if dt.fsp == 0 {
            if dt.micro == 0 {
                0
            } else {
                6
            }
        } else {
            dt.fsp.min(6)
        };
        if digits == 0 {
            return Some(Value::Int(whole));
        }
        let fraction = dt.micro as i128 / 10i128.pow(6 - digits as u32);
        let mut d =
            crate::Decimal::new(whole as i128 * 10i128.pow(digits as u32) + fraction, digits);
        d.shown = digits;
        Some(Value::Decimal(d))
    }

    /// The value as a double (NULL is None).
    pub fn to_f64(&self) -> Option<f64> {
        match self {
            Value::Null => None,
            Value::Int(v) => Some(*v as f64),
            Value::UInt(v) => Some(*v as f64),
            Value::Double(d) => Some(*d),
            Value::Decimal(d) => Some(d.to_f64()),
            Value::Bytes(b) => Some(parse_leading_f64(b)),
            // A DATETIME(6) in numeric context keeps its fraction (20200101100000.5).
            Value::DateTime(dt) => Some(datetime_as_number(dt) + dt.micro as f64 / 1e6),
            Value::Json(b) => Some(json_number(b)),
            Value::Bits(b) => Some(bits_value(b) as f64),
            Value::Member { number, .. } => Some(*number as f64),
        }
    }

    /// True when the value is a number type (not a string or date).
    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_)
        )
    }

    /// MySQL truthiness: NULL is None, numbers are true when non-zero.
    pub fn truth(&self) -> Option<bool> {
        match self {
            Value::Null => None,
            Value::Int(v) => Some(*v != 0),
            Value::UInt(v) => Some(*v != 0),
            Value::Double(d) => Some(*d != 0.0),
            Value::Decimal(d) => Some(!d.is_zero()),
            Value::Bytes(b) => Some(parse_leading_f64(b) != 0.0),
            Value::DateTime(_) => Some(true),
            Value::Json(b) => Some(json_number(b) != 0.0),
            Value::Bits(b) => Some(bits_value(b) != 0),
            Value::Member { number, .. } => Some(*number != 0),
        }
    }

    /// Text form into a buffer (the text protocol's encoding). NULL writes nothing.
    pub fn write_text(&self, out: &mut Vec<u8>) {
        use std::io::Write;
        match self {
            Value::Null => {}
            Value::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Value::UInt(v) => {
                let _ = write!(out, "{v}");
            }
            Value::Double(d) => {
                let _ = write!(out, "{}", format_double(*d));
            }
            Value::Decimal(d) => {
                let _ = write!(out, "{d}");
            }
            Value::Bytes(b) => out.extend_from_slice(b),
            Value::DateTime(dt) => {
                let _ = write!(out, "{dt}");
            }
            Value::Json(b) => match crate::json::binary::decode(b) {
                Some(j) => out.extend_from_slice(crate::json::text::to_text(&j).as_bytes()),
                // Only a corrupt row gets here; its reader reported it.
                None => out.extend_from_slice(b"null"),
            },
            Value::Bits(b) => out.extend_from_slice(b),
            Value::Member { text, .. } => out.extend_from_slice(text),
        }
    }

    /// Text form as a String (lossy for non-UTF-8 bytes); "NULL" for NULL.
    pub fn to_text(&self) -> String {
        match self {
            Value::Null => "NULL".into(),
            Value::Bytes(b) | Value::Member { text: b, .. } => {
                String::from_utf8_lossy(b).into_owned()
            }
            other => {
                let mut v = Vec::new();
                other.write_text(&mut v);
                String::from_utf8_lossy(&v).into_owned()
            }
        }
    }
}

/// A bit value's number: its last 8 bytes, big-endian.
pub fn bits_value(b: &[u8]) -> u64 {
    b.iter()
        .skip(b.len().saturating_sub(8))
        .fold(0u64, |acc, x| (acc << 8) | *x as u64)
}

/// A bit value as SQL writes it (`b'101'`), for SHOW CREATE TABLE and defaults.
pub fn bits_literal(b: &[u8]) -> String {
    format!("b'{:b}'", bits_value(b))
}

/// The bytes of a BIT(n) value: (n+7)/8 bytes, big-endian.
pub fn bits_bytes(v: u64, n: u8) -> Vec<u8> {
    let len = (n as usize).div_ceil(8).clamp(1, 8);
    v.to_be_bytes()[8 - len..].to_vec()
}

/// A JSON value in numeric context: its number, a boolean as 0/1, a string's leading
/// number, anything else 0 (MySQL warns; the value is the same).
fn json_number(b: &[u8]) -> f64 {
    use crate::json::Json;
    match crate::json::binary::decode(b) {
        Some(Json::Int(i)) => i as f64,
        Some(Json::UInt(u)) => u as f64,
        Some(Json::Double(d)) => d,
        Some(Json::Decimal(d)) => d.to_f64(),
        Some(Json::Bool(t)) => t as u8 as f64,
        Some(Json::String(s)) => parse_leading_f64(s.as_bytes()),
        _ => 0.0,
    }
}

/// A DATE or DATETIME in numeric context, without its fraction: YYYYMMDD for a DATE
/// (`CURDATE() + 0` is 20240101, as MySQL), YYYYMMDDhhmmss for a DATETIME.
fn datetime_as_number(dt: &DateTime) -> f64 {
    if dt.is_date_only() {
        return dt.year as f64 * 1e4 + dt.month as f64 * 100.0 + dt.day as f64;
    }
    (dt.year as f64) * 1e10
        + dt.month as f64 * 1e8
        + dt.day as f64 * 1e6
        + dt.hour as f64 * 1e4
        + dt.minute as f64 * 100.0
        + dt.second as f64
}

/// MySQL prints doubles in their shortest round-trip form, switching to exponent
/// notation from 1e15 up and below 1e-15, with no `+` in the exponent (`1e20`,
/// `1.2345678901234568e17`, `1e-16`; `0.000000000000001` stays positional).
pub fn format_double(d: f64) -> String {
    if d == 0.0 {
        return "0".into();
    }
    if d.is_finite() && (d.abs() >= 1e15 || d.abs() < 1e-15) {
        return format!("{d:e}");
    }
    format!("{d}")
}

/// The integer a string starts with, as MySQL reads a string in integer context:
/// leading spaces skipped, an optional sign, then digits up to the first other byte
/// (a `.` or `e` ends it); saturating at the i64 range; 0 when there are no digits.
pub fn parse_leading_i64(b: &[u8]) -> i64 {
    let mut i = b
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(b.len());
    let negative = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut n: i128 = 0;
    while let Some(c @ b'0'..=b'9') = b.get(i) {
        n = (n * 10 + i128::from(c - b'0')).min(i128::from(u64::MAX));
        i += 1;
    }
    let n = if negative { -n } else { n };
    n.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// Parses the numeric prefix of a string as MySQL does in numeric context
/// (`'12abc'` is 12, `'abc'` is 0).
pub fn parse_leading_f64(b: &[u8]) -> f64 {
    let s = match std::str::from_utf8(b) {
        Ok(s) => s.trim_start(),
        Err(_) => return 0.0,
    };
    let bytes = s.as_bytes();
    let mut end = 0;
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut seen_e = false;
    while end < bytes.len() {
        let c = bytes[end];
        match c {
            b'0'..=b'9' => seen_digit = true,
            b'+' | b'-' if end == 0 || matches!(bytes[end - 1], b'e' | b'E') => {}
            b'.' if !seen_dot && !seen_e => seen_dot = true,
            b'e' | b'E' if seen_digit && !seen_e => seen_e = true,
            _ => break,
        }
        end += 1;
    }
    let mut slice = &s[..end];
    while !slice.is_empty() {
        if let Ok(v) = slice.parse::<f64>() {
            return v;
        }
        slice = &slice[..slice.len() - 1];
    }
    0.0
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_context_of_strings() {
        assert_eq!(Value::str("12abc").to_i64(), Some(12));
        // MySQL's integer context: a string's leading integer, not a rounded double.
        assert_eq!(Value::str("2.6").to_i64(), Some(2));
        assert_eq!(Value::str(" +3x").to_i64(), Some(3));
        assert_eq!(Value::str("1e1").to_i64(), Some(1));
        assert_eq!(Value::str("-2.5").to_i64(), Some(-2));
        assert_eq!(Value::str(".9").to_i64(), Some(0));
        assert_eq!(Value::str("-99999999999999999999").to_i64(), Some(i64::MIN));
        // A double rounds half to even, as MySQL's rint.
        assert_eq!(Value::Double(2.5).to_i64(), Some(2));
        assert_eq!(Value::Double(3.5).to_i64(), Some(4));
        assert_eq!(Value::Double(-0.5).to_i64(), Some(0));
        assert_eq!(Value::Double(-2.6).to_i64(), Some(-3));
        assert_eq!(Value::str("abc").to_f64(), Some(0.0));
        assert_eq!(Value::str(" 1.5e2x").to_f64(), Some(150.0));
        assert_eq!(Value::Null.to_i64(), None);
    }

    #[test]
    fn text_forms() {
        assert_eq!(Value::Double(0.5).to_text(), "0.5");
        // As MySQL (and MariaDB) print them: checked side by side with MariaDB 10.11.
        for (d, text) in [
            (1e20, "1e20"),
            (1e15, "1e15"),
            (1e14, "100000000000000"),
            (123456789012345678.0, "1.2345678901234568e17"),
            (1.5e300, "1.5e300"),
            (1e-7, "0.0000001"),
            (1e-15, "0.000000000000001"),
            (1e-16, "1e-16"),
            (-2.5e-20, "-2.5e-20"),
            (1.0 / 3.0, "0.3333333333333333"),
        ] {
            assert_eq!(Value::Double(d).to_text(), text, "{d}");
        }
        assert_eq!(Value::Int(-3).to_text(), "-3");
    }
}
