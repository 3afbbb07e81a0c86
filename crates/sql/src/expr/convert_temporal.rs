//! Storing a value into a DATETIME(fsp)/TIMESTAMP(fsp), TIME(fsp) or YEAR column, as
//! MySQL 8 converts it: fractions rounded half up to the column's digits (carrying into
//! the seconds, minutes … and the next day), TIME clamped to ±838:59:59, YEAR's two-digit
//! rules. `convert::coerce` calls these for their column types; the results are the
//! columns' canonical values (a `DateTime` showing the column's digits; a TIME's
//! canonical text, `strata_types::time_value`; a YEAR as an `Int`).

use crate::expr::datetime::temporal;
use strata_types::schema::ColumnDef;
use strata_types::{time_value, DataType, DateTime, Error, Result, Value};

/// The statement's clock as a DATETIME/TIMESTAMP column's `CURRENT_TIMESTAMP` default or
/// automatic update: cut (not rounded) to the column's digits, as MySQL gives NOW(fsp).
pub fn current_timestamp(col: &ColumnDef, now: DateTime) -> Value {
    Value::DateTime(now.truncate_to(col.data_type.fsp().unwrap_or(0)))
}

/// The implicit default (a NOT NULL column without a DEFAULT, outside strict mode) of
/// the types this module converts: the zero date-time at the column's digits,
/// `00:00:00`, the year 0000.
pub fn implicit_default(ty: &DataType) -> Option<Value> {
    Some(match *ty {
        DataType::DateTime { fsp } | DataType::Timestamp { fsp } => {
            Value::DateTime(DateTime::default().truncate_to(fsp))
        }
        DataType::Time { fsp } => Value::str(&time_value::format(0, fsp)),
        DataType::Year => Value::Int(0),
        _ => return None,
    })
}

/// A TIME column's value (its canonical text) in date-time context, as MySQL converts a
/// TIME to a DATETIME: the current date plus the duration (`-01:00:00` is 23:00 of the
/// day before). None if the text is not a TIME.
pub fn time_on_date(v: &Value, today: DateTime) -> Option<Value> {
    let Value::Bytes(b) = v else {
        return None;
    };
    let micros = time_value::parse_canonical(b)?;
    let day = 86_400_000_000i64;
    let days = temporal::dt_daynr(&today) + micros.div_euclid(day);
    temporal::from_daynr_micros(days, micros.rem_euclid(day)).map(Value::DateTime)
}

/// A date-time value (`Value::DateTime`, string or number already read as `dt`) rounded
/// to a DATETIME(fsp)/TIMESTAMP(fsp) column. Past 9999-12-31 23:59:59 is out of range.
pub fn round_datetime(dt: DateTime, fsp: u8, col: &ColumnDef, row: u64) -> Result<DateTime> {
    dt.round_to(fsp).ok_or_else(|| Error::OutOfRange {
        column: col.name.clone(),
        row,
    })
}

/// Splits a date-time string with more than six fraction digits into the string with
/// six and whether the seventh rounds them up (MySQL reads `…59.9999995` as `…00.000000`
/// of the next second in a DATETIME(6)).
pub fn cut_fraction(text: &str) -> (String, bool) {
    let t = text.trim();
    if let Some(dot) = t.rfind('.') {
        let frac = &t[dot + 1..];
        if t[..dot].contains(':') && frac.len() > 6 && frac.bytes().all(|b| b.is_ascii_digit()) {
            let up = frac.as_bytes()[6] >= b'5';
            return (t[..dot + 7].to_string(), up);
        }
    }
    (t.to_string(), false)
}

/// What reading a value as a TIME gave.
enum TimeRead {
    /// Microseconds (not yet rounded or clamped).
    Micros(i64),
    /// A valid TIME beyond ±838:59:59: clamps (1264), or 1292 in strict mode.
    OutOfRange(i64),
    /// Not a TIME at all: 1292.
    Invalid,
}

fn read_time(v: &Value) -> TimeRead {
    match v {
        // A BIT value is its number; a JSON document is not a time.
        Value::Bits(b) => read_time(&Value::UInt(strata_types::value::bits_value(b))),
        Value::Json(_) => TimeRead::Invalid,
        Value::DateTime(d) => {
            TimeRead::Micros(temporal::day_seconds(d) * 1_000_000 + d.micro as i64)
        }
        // An ENUM/SET value reads as its text.
        Value::Bytes(b) | Value::Member { text: b, .. } => {
            let text = String::from_utf8_lossy(b);
            match temporal::parse_time(&text) {
                Some((m, true)) => TimeRead::OutOfRange(m),
                Some((m, false)) => TimeRead::Micros(m),
                None => TimeRead::Invalid,
            }
        }
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) => {
            let Some(f) = v.to_f64() else {
                return TimeRead::Invalid;
            };
            let whole = f.trunc();
            let a = whole.abs();
            if a > 8_385_959.0 {
                // A date-time number reads as its time of day; anything else this large
                // is a time past 838:59:59.
                if let Some(s) = temporal::number_stamp(whole as i64).filter(|s| s.has_time) {
                    return TimeRead::Micros(temporal::day_seconds(&s.dt) * 1_000_000);
                }
                let max = if f < 0.0 {
                    -time_value::MAX_MICROS
                } else {
                    time_value::MAX_MICROS
                };
                return TimeRead::OutOfRange(max);
            }
            let a = a as i64;
            if a % 100 >= 60 || a / 100 % 100 >= 60 {
                return TimeRead::Invalid;
            }
            let micros = ((a / 10000) * 3600 + a / 100 % 100 * 60 + a % 100) * 1_000_000
                + ((f - whole).abs() * 1e6).round() as i64;
            TimeRead::Micros(if f < 0.0 { -micros } else { micros })
        }
        Value::Null => TimeRead::Invalid,
    }
}

/// A value stored into a TIME(fsp) column: its canonical text. Out of range is
/// `Error::OutOfRange` (1264; `coerce_or_warn` clamps with that warning outside strict
/// mode and reports 1292 in strict mode, as MySQL does); not a time is 1292.
pub fn coerce_time(v: &Value, fsp: u8, col: &ColumnDef, row: u64, strict: bool) -> Result<Value> {
    let out = |m: i64| Value::str(&time_value::format(m, fsp));
    let micros = match read_time(v) {
        TimeRead::Micros(m) => time_value::round(m, fsp),
        TimeRead::OutOfRange(m) => {
            if strict {
                return Err(Error::OutOfRange {
                    column: col.name.clone(),
                    row,
                });
            }
            return Ok(out(time_value::clamp(m).0));
        }
        TimeRead::Invalid => {
            if strict {
                return Err(Error::TruncatedWrongValue {
                    kind: "time".into(),
                    value: v.to_text(),
                });
            }
            return Ok(out(0));
        }
    };
    match time_value::clamp(micros) {
        (m, false) => Ok(out(m)),
        (_, true) if strict => Err(Error::OutOfRange {
            column: col.name.clone(),
            row,
        }),
        (m, true) => Ok(out(m)),
    }
}

/// A value stored into a YEAR column (`Value::Int`): 1901-2155 or 0, two-digit values by
/// MySQL's rules; out of range is 1264 (0 outside strict mode), text that is no number
/// 1366.
pub fn coerce_year(v: &Value, col: &ColumnDef, row: u64, strict: bool) -> Result<Value> {
    let out_of_range = || Error::OutOfRange {
        column: col.name.clone(),
        row,
    };
    let (n, short_string) = match v {
        Value::DateTime(d) => (d.year as i64, false),
        Value::Bytes(b) => {
            let text = String::from_utf8_lossy(b);
            let t = text.trim();
            match t.parse::<f64>() {
                Ok(f) if f.is_finite() && !t.is_empty() => {
                    (f.round().clamp(-1e9, 1e9) as i64, t.len() <= 2)
                }
                _ if strict => {
                    return Err(Error::IncorrectValue {
                        kind: "integer".into(),
                        value: text.into_owned(),
                        column: col.name.clone(),
                        row,
                    })
                }
                _ => return Ok(Value::Int(0)),
            }
        }
        other => match other.to_f64() {
            Some(f) if f.is_finite() => (f.round().clamp(-1e9, 1e9) as i64, false),
            _ => return Err(out_of_range()),
        },
    };
    match strata_types::year_value::from_number(n, short_string) {
        Some(y) => Ok(Value::Int(y)),
        None if strict => Err(out_of_range()),
        None => Ok(Value::Int(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::Collation;

    fn col(t: DataType) -> ColumnDef {
        ColumnDef {
            name: "a".into(),
            data_type: t,
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: Collation::Binary,
            members: Vec::new(),
            generated: None,
            comment: String::new(),
            real_unsigned: false,
            invisible: Default::default(),
        }
    }

    fn time(v: Value, fsp: u8, strict: bool) -> Result<String> {
        let c = col(DataType::Time { fsp });
        coerce_time(&v, fsp, &c, 1, strict).map(|v| v.to_text())
    }

    #[test]
    fn times_from_strings_and_numbers() {
        assert_eq!(
            time(Value::str("12:34:56.5"), 1, true).unwrap(),
            "12:34:56.5"
        );
        assert_eq!(time(Value::str("12:34:56.5"), 0, true).unwrap(), "12:34:57");
        assert_eq!(time(Value::str("12:34"), 0, true).unwrap(), "12:34:00");
        assert_eq!(time(Value::str("1 10:00:00"), 0, true).unwrap(), "34:00:00");
        assert_eq!(
            time(Value::str("-1:2:3.25"), 2, true).unwrap(),
            "-01:02:03.25"
        );
        assert_eq!(time(Value::Int(123456), 0, true).unwrap(), "12:34:56");
        assert_eq!(time(Value::Int(-5959), 0, true).unwrap(), "-00:59:59");
        assert_eq!(time(Value::Double(12.5), 3, true).unwrap(), "00:00:12.500");
        assert_eq!(
            time(Value::str("838:59:59"), 6, true).unwrap(),
            "838:59:59.000000"
        );
        assert!(matches!(
            time(Value::str("839:00:00"), 0, true),
            Err(Error::OutOfRange { .. })
        ));
        assert_eq!(
            time(Value::str("839:00:00"), 0, false).unwrap(),
            "838:59:59"
        );
        assert_eq!(
            time(Value::str("-900:00:00"), 0, false).unwrap(),
            "-838:59:59"
        );
        assert_eq!(time(Value::Int(9_000_000), 0, false).unwrap(), "838:59:59");
        assert!(matches!(
            time(Value::str("10:70:00"), 0, true),
            Err(Error::TruncatedWrongValue { .. })
        ));
        let dt = DateTime::parse("2020-01-01 10:00:00.123456").unwrap();
        assert_eq!(time(Value::DateTime(dt), 3, true).unwrap(), "10:00:00.123");
    }

    #[test]
    fn years_by_mysql_rules() {
        let c = col(DataType::Year);
        let y = |v: Value, strict| coerce_year(&v, &c, 1, strict);
        assert_eq!(y(Value::Int(0), true).unwrap(), Value::Int(0));
        assert_eq!(y(Value::str("0"), true).unwrap(), Value::Int(2000));
        assert_eq!(y(Value::str("00"), true).unwrap(), Value::Int(2000));
        assert_eq!(y(Value::str("0000"), true).unwrap(), Value::Int(0));
        assert_eq!(y(Value::Int(69), true).unwrap(), Value::Int(2069));
        assert_eq!(y(Value::str("70"), true).unwrap(), Value::Int(1970));
        assert_eq!(y(Value::Double(2020.4), true).unwrap(), Value::Int(2020));
        assert!(matches!(
            y(Value::Int(1900), true),
            Err(Error::OutOfRange { .. })
        ));
        assert_eq!(y(Value::Int(2156), false).unwrap(), Value::Int(0));
        assert!(matches!(
            y(Value::str("abc"), true),
            Err(Error::IncorrectValue { .. })
        ));
    }

    #[test]
    fn times_on_todays_date() {
        let today = DateTime::parse("2024-03-01 17:00:00").unwrap();
        let on = |t: &str| time_on_date(&Value::str(t), today).unwrap().to_text();
        assert_eq!(on("10:00:00.5"), "2024-03-01 10:00:00.500000");
        assert_eq!(on("-01:00:00"), "2024-02-29 23:00:00");
        assert_eq!(on("25:00:00"), "2024-03-02 01:00:00");
        assert!(time_on_date(&Value::str("nonsense"), today).is_none());
    }

    #[test]
    fn datetime_fractions_round_and_cut() {
        assert_eq!(
            cut_fraction("2020-01-01 10:00:00.1234567"),
            ("2020-01-01 10:00:00.123456".to_string(), true)
        );
        assert_eq!(
            cut_fraction("2020-01-01 10:00:00.12"),
            ("2020-01-01 10:00:00.12".to_string(), false)
        );
        let c = col(DataType::DateTime { fsp: 0 });
        let last = DateTime::parse("9999-12-31 23:59:59.5").unwrap();
        assert!(round_datetime(last, 0, &c, 1).is_err());
        assert_eq!(
            round_datetime(last, 1, &c, 1).unwrap().to_string(),
            "9999-12-31 23:59:59.5"
        );
    }
}
