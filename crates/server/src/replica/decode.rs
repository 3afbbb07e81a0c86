//! One row-event value as the applier hands it to `Session::apply_row_event`: the value
//! as mysql_common decoded it, the column's type in the source's TABLE_MAP, and whether
//! this server's column is UNSIGNED (a TABLE_MAP without optional metadata — MariaDB's
//! default — does not say, and mysql_common then decodes integers as signed), turned
//! into the `strata_types::Value` that carries it exactly: integers with their
//! signedness, DOUBLE and FLOAT as their bits, DECIMAL as the exact digits the event
//! holds, BIT as its bytes, ENUM as its index, SET as its bitmap, dates and times as
//! date-times (TIMESTAMP in UTC: the applier's session runs with `time_zone =
//! '+00:00'`), JSON as its text. The SQL layer converts it to the column's type.

use mysql::binlog::value::BinlogValue;
use mysql::consts::ColumnType;
use mysql::Value as Wire;
use strata_types::{DateTime, Error, Result, Value};

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

fn text(b: &[u8]) -> Result<&str> {
    std::str::from_utf8(b).map_err(|_| Error::NotSupported("a non-text numeric value".into()))
}

/// The value `v` of a column of source type `t`.
pub fn value(v: &BinlogValue<'_>, t: ColumnType, unsigned: bool) -> Result<Value> {
    use ColumnType::*;
    let v = match v {
        BinlogValue::Value(v) => v.clone(),
        BinlogValue::Jsonb(_) => match Wire::try_from(v.clone()) {
            Ok(Wire::Bytes(b)) => return Ok(Value::Bytes(b)),
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
        Wire::NULL => Value::Null,
        Wire::Int(i) => match (t, int_bits(t)) {
            // Old TIMESTAMP: seconds since the epoch.
            (MYSQL_TYPE_TIMESTAMP, _) => unix_time(i, 0),
            // mysql_common reads a signed 3-byte integer without extending its sign.
            (MYSQL_TYPE_INT24, _) if !unsigned && i >= 1 << 23 => Value::Int(i - (1 << 24)),
            (_, Some(bits)) if unsigned && i < 0 => {
                let m: i128 = 1 << bits;
                Value::UInt((i as i128 + m) as u64)
            }
            (_, Some(_)) if unsigned => Value::UInt(i as u64),
            _ => Value::Int(i),
        },
        Wire::UInt(u) => Value::UInt(u),
        // A FLOAT widened to f64 is exactly the same number.
        Wire::Float(f) => Value::Double(f as f64),
        Wire::Double(d) => Value::Double(d),
        Wire::Date(y, m, d, h, mi, s, us) => Value::DateTime(DateTime {
            year: y,
            month: m,
            day: d,
            hour: h,
            minute: mi,
            second: s,
            micro: us,
            fsp: 0,
        }),
        Wire::Time(neg, days, h, m, s, us) => {
            let secs = days as i64 * 86_400 + h as i64 * 3600 + m as i64 * 60 + s as i64;
            let micros = secs * 1_000_000 + us as i64;
            // The executor's form of a TIME: its canonical text.
            Value::Bytes(
                strata_types::time_value::format(if neg { -micros } else { micros }, 6)
                    .into_bytes(),
            )
        }
        Wire::Bytes(b) => match t {
            MYSQL_TYPE_NEWDECIMAL | MYSQL_TYPE_DECIMAL => {
                let s = text(&b)?;
                if !s
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
                {
                    return Err(Error::NotSupported(format!("the DECIMAL value {s}")));
                }
                Value::Bytes(b)
            }
            // mysql_common reads YEAR as 1900 + the stored byte: 0 is the zero year.
            MYSQL_TYPE_YEAR => match text(&b)? {
                "1900" => Value::Int(0),
                y => Value::Int(
                    y.parse()
                        .map_err(|_| Error::NotSupported(format!("the YEAR value {y}")))?,
                ),
            },
            MYSQL_TYPE_TIMESTAMP2 => {
                let s = text(&b)?;
                let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
                let secs = whole
                    .parse::<i64>()
                    .map_err(|_| Error::NotSupported(format!("the TIMESTAMP value {s}")))?;
                // The fraction as microseconds (mysql_common writes up to six digits).
                let micro = if frac.is_empty() {
                    0
                } else {
                    frac.parse::<u32>()
                        .map_err(|_| Error::NotSupported(format!("the TIMESTAMP value {s}")))?
                        * 10u32.pow(6u32.saturating_sub(frac.len() as u32))
                };
                unix_time(secs, micro)
            }
            // BIT: big-endian bytes, as a BIT column holds them.
            MYSQL_TYPE_BIT => Value::Bits(b),
            // SET: a little-endian member bitmap.
            MYSQL_TYPE_SET => {
                Value::UInt(b.iter().rev().fold(0u64, |acc, x| (acc << 8) | *x as u64))
            }
            _ => Value::Bytes(b),
        },
    })
}

/// A TIMESTAMP's seconds since the epoch as a UTC date-time; 0 is the zero timestamp.
fn unix_time(secs: i64, micro: u32) -> Value {
    if secs == 0 && micro == 0 {
        return Value::DateTime(DateTime::default());
    }
    Value::DateTime(DateTime::from_unix(secs, micro))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ColumnType::*;

    fn val(v: Wire, t: ColumnType, unsigned: bool) -> Value {
        value(&BinlogValue::Value(v), t, unsigned).unwrap()
    }

    fn dt(v: &Value) -> String {
        v.to_text()
    }

    #[test]
    fn values() {
        assert_eq!(
            val(Wire::Int(-1), MYSQL_TYPE_LONG, true),
            Value::UInt(4294967295)
        );
        assert_eq!(
            val(Wire::Int(-1), MYSQL_TYPE_LONGLONG, true),
            Value::UInt(u64::MAX)
        );
        assert_eq!(val(Wire::Int(-1), MYSQL_TYPE_LONG, false), Value::Int(-1));
        assert_eq!(
            val(Wire::Int(8388608), MYSQL_TYPE_INT24, false),
            Value::Int(-8388608)
        );
        assert_eq!(
            val(Wire::Int(8388607), MYSQL_TYPE_INT24, false),
            Value::Int(8388607)
        );
        assert_eq!(
            val(Wire::Int(16777215), MYSQL_TYPE_INT24, true),
            Value::UInt(16777215)
        );
        match val(Wire::Double(0.1 + 0.2), MYSQL_TYPE_DOUBLE, false) {
            Value::Double(d) => assert_eq!(d.to_bits(), (0.1f64 + 0.2).to_bits()),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            val(Wire::Float(0.1), MYSQL_TYPE_FLOAT, false),
            Value::Double(0.1f32 as f64)
        );
        assert_eq!(
            val(Wire::Bytes(vec![0xff, 0]), MYSQL_TYPE_BLOB, false),
            Value::Bytes(vec![0xff, 0])
        );
        assert_eq!(
            val(Wire::Bytes(vec![1, 2]), MYSQL_TYPE_BIT, false),
            Value::Bits(vec![1, 2])
        );
        assert_eq!(
            val(Wire::Bytes(vec![1, 2]), MYSQL_TYPE_SET, false),
            Value::UInt(513)
        );
        assert_eq!(
            val(Wire::Bytes(b"1900".to_vec()), MYSQL_TYPE_YEAR, false),
            Value::Int(0)
        );
        assert_eq!(
            val(Wire::Bytes(b"2155".to_vec()), MYSQL_TYPE_YEAR, false),
            Value::Int(2155)
        );
        assert_eq!(
            val(
                Wire::Bytes(b"-12.50".to_vec()),
                MYSQL_TYPE_NEWDECIMAL,
                false
            ),
            Value::Bytes(b"-12.50".to_vec())
        );
        assert!(value(
            &BinlogValue::Value(Wire::Bytes(b"1e5".to_vec())),
            MYSQL_TYPE_NEWDECIMAL,
            false
        )
        .is_err());
        assert_eq!(
            dt(&val(
                Wire::Date(2024, 2, 29, 1, 2, 3, 45),
                MYSQL_TYPE_DATETIME2,
                false
            )),
            "2024-02-29 01:02:03.000045"
        );
        assert_eq!(
            val(Wire::Time(true, 1, 2, 3, 4, 5), MYSQL_TYPE_TIME2, false),
            Value::Bytes(b"-26:03:04.000005".to_vec())
        );
        let ts = |s: &str| {
            dt(&val(
                Wire::Bytes(s.as_bytes().to_vec()),
                MYSQL_TYPE_TIMESTAMP2,
                false,
            ))
        };
        assert_eq!(ts("1623760245.678000"), "2021-06-15 12:30:45.678000");
        assert_eq!(ts("1623760245.5"), "2021-06-15 12:30:45.500000");
        assert_eq!(ts("2147483647"), "2038-01-19 03:14:07");
        assert_eq!(ts("951782400"), "2000-02-29 00:00:00");
        assert_eq!(ts("0"), "0000-00-00 00:00:00");
        assert_eq!(
            dt(&val(Wire::Int(0), MYSQL_TYPE_TIMESTAMP, false)),
            "0000-00-00 00:00:00"
        );
    }
}
