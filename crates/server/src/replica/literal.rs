//! One row-event value as an SQL literal the applier's statements carry: the value as
//! mysql_common decoded it, the column's type in the source's TABLE_MAP, and whether
//! this server's column is UNSIGNED (a TABLE_MAP without optional metadata — MariaDB's
//! default — does not say, and mysql_common then decodes integers as signed).

use mysql::binlog::value::BinlogValue;
use mysql::consts::ColumnType;
use mysql::Value;
use strata_types::{Error, Result};

/// Bits of the integer types, for re-reading a signed decode as unsigned.
fn int_bits(t: ColumnType) -> Option<u32> {
    use ColumnType::*;
    match t {
        MYSQL_TYPE_TINY => Some(8),
        MYSQL_TYPE_SHORT => Some(16),
        MYSQL_TYPE_INT24 => Some(24),
        MYSQL_TYPE_LONG => Some(32),
        MYSQL_TYPE_LONGLONG => Some(64),
        _ => None,
    }
}

/// A string literal: quoted (backslash and quote escaped) when the bytes are UTF-8,
/// else a hex literal.
pub fn quoted(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => {
            let mut out = String::with_capacity(s.len() + 2);
            out.push('\'');
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("''"),
                    '\\' => out.push_str("\\\\"),
                    '\0' => out.push_str("\\0"),
                    c => out.push(c),
                }
            }
            out.push('\'');
            out
        }
        Err(_) => hex(b),
    }
}

fn hex(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() * 2 + 3);
    out.push_str("X'");
    for x in b {
        out.push_str(&format!("{x:02X}"));
    }
    out.push('\'');
    out
}

fn text(b: &[u8]) -> Result<&str> {
    std::str::from_utf8(b).map_err(|_| Error::NotSupported("a non-text numeric value".into()))
}

/// The literal for `v`, a value of a column of source type `t`.
pub fn literal(v: &BinlogValue<'_>, t: ColumnType, unsigned: bool) -> Result<String> {
    use ColumnType::*;
    let v = match v {
        BinlogValue::Value(v) => v.clone(),
        BinlogValue::Jsonb(_) => match Value::try_from(v.clone()) {
            Ok(Value::Bytes(b)) => return Ok(quoted(&b)),
            _ => {
                return Err(Error::NotSupported(
                    "a JSON value that does not decode".into(),
                ))
            }
        },
        BinlogValue::JsonDiff(_) => {
            return Err(Error::NotSupported(
                "partial JSON updates (binlog_row_value_options=PARTIAL_JSON)".into(),
            ))
        }
    };
    Ok(match v {
        Value::NULL => "NULL".into(),
        Value::Int(i) => match (t, int_bits(t)) {
            // Old TIMESTAMP: seconds since the epoch.
            (MYSQL_TYPE_TIMESTAMP, _) => unix_time(&i.to_string()),
            // mysql_common reads a signed 3-byte integer without extending its sign.
            (MYSQL_TYPE_INT24, _) if !unsigned && i >= 1 << 23 => (i - (1 << 24)).to_string(),
            (_, Some(bits)) if unsigned && i < 0 => {
                let m: i128 = 1 << bits;
                (i as i128 + m).to_string()
            }
            _ => i.to_string(),
        },
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Double(d) => format!("{d:?}"),
        Value::Date(y, m, d, h, mi, s, us) => match t {
            MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => format!("'{y:04}-{m:02}-{d:02}'"),
            _ => format!("'{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}.{us:06}'"),
        },
        Value::Time(neg, days, h, m, s, us) => {
            let hours = days as u64 * 24 + h as u64;
            let sign = if neg { "-" } else { "" };
            format!("'{sign}{hours:02}:{m:02}:{s:02}.{us:06}'")
        }
        Value::Bytes(b) => match t {
            MYSQL_TYPE_NEWDECIMAL | MYSQL_TYPE_DECIMAL => {
                let s = text(&b)?;
                if !s
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
                {
                    return Err(Error::NotSupported(format!("the DECIMAL value {s}")));
                }
                s.to_string()
            }
            // mysql_common reads YEAR as 1900 + the stored byte: 0 is the zero year.
            MYSQL_TYPE_YEAR => match text(&b)? {
                "1900" => "0".into(),
                y => y.to_string(),
            },
            MYSQL_TYPE_TIMESTAMP2 => unix_time(text(&b)?),
            // BIT: big-endian bytes; SET: a little-endian member bitmap. Both as the
            // integer, which both column types take.
            MYSQL_TYPE_BIT => b
                .iter()
                .fold(0u64, |acc, x| (acc << 8) | *x as u64)
                .to_string(),
            MYSQL_TYPE_SET => b
                .iter()
                .rev()
                .fold(0u64, |acc, x| (acc << 8) | *x as u64)
                .to_string(),
            _ => quoted(&b),
        },
    })
}

/// A TIMESTAMP's seconds (with a fraction) since the epoch, as a UTC date-time literal
/// (the applier's session runs with `time_zone = '+00:00'`); 0 is the zero timestamp.
fn unix_time(secs: &str) -> String {
    let (whole, frac) = secs.split_once('.').unwrap_or((secs, "0"));
    let (Ok(s), Ok(f)) = (whole.parse::<i64>(), frac.parse::<u32>()) else {
        return "NULL".into();
    };
    if s == 0 && f == 0 {
        return "'0000-00-00 00:00:00'".into();
    }
    // The fraction as microseconds (mysql_common writes six digits).
    let micro = f * 10u32.pow(6u32.saturating_sub(frac.len() as u32));
    let days = s.div_euclid(86_400);
    let rem = s.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "'{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{micro:06}'",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ColumnType::*;

    fn lit(v: Value, t: ColumnType, unsigned: bool) -> String {
        literal(&BinlogValue::Value(v), t, unsigned).unwrap()
    }

    #[test]
    fn literals() {
        assert_eq!(lit(Value::Int(-1), MYSQL_TYPE_LONG, true), "4294967295");
        assert_eq!(
            lit(Value::Int(-1), MYSQL_TYPE_LONGLONG, true),
            "18446744073709551615"
        );
        assert_eq!(lit(Value::Int(-1), MYSQL_TYPE_LONG, false), "-1");
        assert_eq!(
            lit(Value::Int(8388608), MYSQL_TYPE_INT24, false),
            "-8388608"
        );
        assert_eq!(lit(Value::Int(8388607), MYSQL_TYPE_INT24, false), "8388607");
        assert_eq!(
            lit(Value::Int(16777215), MYSQL_TYPE_INT24, true),
            "16777215"
        );
        assert_eq!(lit(Value::Double(0.1), MYSQL_TYPE_DOUBLE, false), "0.1");
        assert_eq!(lit(Value::Float(0.1), MYSQL_TYPE_FLOAT, false), "0.1");
        assert_eq!(
            lit(Value::Bytes(b"it's \\".to_vec()), MYSQL_TYPE_VARCHAR, false),
            "'it''s \\\\'"
        );
        assert_eq!(
            lit(Value::Bytes(vec![0xff, 0]), MYSQL_TYPE_BLOB, false),
            "X'FF00'"
        );
        assert_eq!(lit(Value::Bytes(vec![1, 2]), MYSQL_TYPE_BIT, false), "258");
        assert_eq!(lit(Value::Bytes(vec![1, 2]), MYSQL_TYPE_SET, false), "513");
        assert_eq!(
            lit(Value::Bytes(b"1900".to_vec()), MYSQL_TYPE_YEAR, false),
            "0"
        );
        assert_eq!(
            lit(
                Value::Bytes(b"-12.50".to_vec()),
                MYSQL_TYPE_NEWDECIMAL,
                false
            ),
            "-12.50"
        );
        assert_eq!(
            lit(
                Value::Date(2024, 2, 29, 0, 0, 0, 0),
                MYSQL_TYPE_NEWDATE,
                false
            ),
            "'2024-02-29'"
        );
        assert_eq!(
            lit(
                Value::Date(2024, 2, 29, 1, 2, 3, 45),
                MYSQL_TYPE_DATETIME2,
                false
            ),
            "'2024-02-29 01:02:03.000045'"
        );
        assert_eq!(
            lit(Value::Time(true, 1, 2, 3, 4, 0), MYSQL_TYPE_TIME2, false),
            "'-26:03:04.000000'"
        );
        let ts = |s: &str| {
            lit(
                Value::Bytes(s.as_bytes().to_vec()),
                MYSQL_TYPE_TIMESTAMP2,
                false,
            )
        };
        assert_eq!(ts("1623760245.678000"), "'2021-06-15 12:30:45.678000'");
        assert_eq!(ts("2147483647"), "'2038-01-19 03:14:07.000000'");
        assert_eq!(ts("951782400"), "'2000-02-29 00:00:00.000000'");
        assert_eq!(ts("0"), "'0000-00-00 00:00:00'");
        assert_eq!(
            lit(Value::Int(0), MYSQL_TYPE_TIMESTAMP, false),
            "'0000-00-00 00:00:00'"
        );
    }
}
