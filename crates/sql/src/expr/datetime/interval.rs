//! `INTERVAL n unit`: MySQL's interval units (simple and compound), reading an interval
//! value in a unit (`'1:30' HOUR_MINUTE`, `1.5 SECOND`), and adding one to a date-time
//! with MySQL's rules (month arithmetic clamps the day to the month's end; results before
//! 0001-01-01 or after 9999-12-31 are NULL with warning 1441).

use crate::expr::datetime::temporal::{self, MAX_DAYNR};
use strata_types::{DateTime, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    SecondMicrosecond,
    MinuteMicrosecond,
    MinuteSecond,
    HourMicrosecond,
    HourSecond,
    HourMinute,
    DayMicrosecond,
    DaySecond,
    DayMinute,
    DayHour,
    YearMonth,
}

impl Unit {
    /// A unit by its SQL name (`DAY`, `HOUR_MINUTE`, …), case-insensitive.
    pub fn from_name(name: &str) -> Option<Unit> {
        use Unit::*;
        Some(match name.to_ascii_uppercase().as_str() {
            "MICROSECOND" => Microsecond,
            "SECOND" => Second,
            "MINUTE" => Minute,
            "HOUR" => Hour,
            "DAY" => Day,
            "WEEK" => Week,
            "MONTH" => Month,
            "QUARTER" => Quarter,
            "YEAR" => Year,
            "SECOND_MICROSECOND" => SecondMicrosecond,
            "MINUTE_MICROSECOND" => MinuteMicrosecond,
            "MINUTE_SECOND" => MinuteSecond,
            "HOUR_MICROSECOND" => HourMicrosecond,
            "HOUR_SECOND" => HourSecond,
            "HOUR_MINUTE" => HourMinute,
            "DAY_MICROSECOND" => DayMicrosecond,
            "DAY_SECOND" => DaySecond,
            "DAY_MINUTE" => DayMinute,
            "DAY_HOUR" => DayHour,
            "YEAR_MONTH" => YearMonth,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        use Unit::*;
        match self {
            Microsecond => "MICROSECOND",
            Second => "SECOND",
            Minute => "MINUTE",
            Hour => "HOUR",
            Day => "DAY",
            Week => "WEEK",
            Month => "MONTH",
            Quarter => "QUARTER",
            Year => "YEAR",
            SecondMicrosecond => "SECOND_MICROSECOND",
            MinuteMicrosecond => "MINUTE_MICROSECOND",
            MinuteSecond => "MINUTE_SECOND",
            HourMicrosecond => "HOUR_MICROSECOND",
            HourSecond => "HOUR_SECOND",
            HourMinute => "HOUR_MINUTE",
            DayMicrosecond => "DAY_MICROSECOND",
            DaySecond => "DAY_SECOND",
            DayMinute => "DAY_MINUTE",
            DayHour => "DAY_HOUR",
            YearMonth => "YEAR_MONTH",
        }
    }

    /// Counts whole months (added on the calendar, clamping the day).
    pub fn is_months(self) -> bool {
        matches!(
            self,
            Unit::Month | Unit::Quarter | Unit::Year | Unit::YearMonth
        )
    }

    /// The two-part units (`DAY_HOUR`, …, `YEAR_MONTH`).
    pub fn is_compound(self) -> bool {
        self.name().contains('_')
    }

    /// Units of whole days or more: a DATE plus one of them stays a DATE.
    pub fn is_date_only(self) -> bool {
        self.is_months() || matches!(self, Unit::Day | Unit::Week)
    }

    /// Fraction digits the unit adds to a date-time result: 6 for the microsecond units.
    pub fn fsp(self) -> u8 {
        use Unit::*;
        match self {
            Microsecond | SecondMicrosecond | MinuteMicrosecond | HourMicrosecond
            | DayMicrosecond => 6,
            _ => 0,
        }
    }

    /// The fields a compound unit's string holds, largest first, as positions in
    /// [`Interval::fields`] order (days, hours, minutes, seconds, micros); None for the
    /// simple units and YEAR_MONTH.
    fn compound_fields(self) -> Option<&'static [usize]> {
        use Unit::*;
        Some(match self {
            SecondMicrosecond => &[3, 4],
            MinuteMicrosecond => &[2, 3, 4],
            MinuteSecond => &[2, 3],
            HourMicrosecond => &[1, 2, 3, 4],
            HourSecond => &[1, 2, 3],
            HourMinute => &[1, 2],
            DayMicrosecond => &[0, 1, 2, 3, 4],
            DaySecond => &[0, 1, 2, 3],
            DayMinute => &[0, 1, 2],
            DayHour => &[0, 1],
            _ => return None,
        })
    }
}

/// An interval's magnitude in calendar months and in microseconds, with its sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Interval {
    pub neg: bool,
    pub months: u64,
    pub micros: u128,
}

/// Why an interval value could not be read.
#[derive(Debug, PartialEq)]
pub enum BadInterval {
    /// NULL argument: the result is NULL, silently.
    Null,
    /// A compound-unit string with more fields than the unit has: NULL, as MySQL.
    TooManyFields,
}

const MICROS: [u128; 5] = [86_400_000_000, 3_600_000_000, 60_000_000, 1_000_000, 1];

/// Splits a compound-unit string into its numbers: a leading `-` negates, anything that
/// is not a digit separates. Missing leading fields are zero (`'1:30'` DAY_MINUTE is one
/// hour thirty). A microsecond field written after the others is a fraction
/// (`'1.5'` SECOND_MICROSECOND is 1.5 seconds).
fn compound(text: &str, fields: &[usize]) -> Result<Interval, BadInterval> {
    let t = text.trim_start();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let b = t.as_bytes();
    let mut vals: Vec<(u128, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() && !b[i].is_ascii_digit() {
        i += 1;
    }
    while i < b.len() {
        let start = i;
        let mut v: u128 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            v = v.saturating_mul(10).saturating_add((b[i] - b'0') as u128);
            i += 1;
        }
        if vals.len() == fields.len() {
            return Err(BadInterval::TooManyFields);
        }
        vals.push((v, i - start));
        while i < b.len() && !b[i].is_ascii_digit() {
            i += 1;
        }
    }
    let has_micro = fields.last() == Some(&4);
    if has_micro && vals.len() == fields.len() {
        // The last number was written as a fraction: scale it to microseconds.
        if let Some((v, len)) = vals.last_mut() {
            *v = if *len < 6 {
                *v * 10u128.pow(6 - *len as u32)
            } else {
                *v / 10u128.pow(*len as u32 - 6)
            };
        }
    }
    let skip = fields.len() - vals.len();
    let mut micros: u128 = 0;
    for (k, (v, _)) in vals.iter().enumerate() {
        micros = micros.saturating_add(v.saturating_mul(MICROS[fields[skip + k]]));
    }
    Ok(Interval {
        neg,
        months: 0,
        micros,
    })
}

/// A whole number for a simple unit: strings read their leading integer, decimals and
/// doubles round (as MySQL's integer conversion does).
fn whole(v: &Value) -> (bool, u128) {
    match v {
        Value::Int(i) => (*i < 0, i.unsigned_abs() as u128),
        Value::UInt(u) => (false, *u as u128),
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            let t = s.trim_start();
            let (neg, t) = match t.strip_prefix('-') {
                Some(r) => (true, r),
                None => (false, t.strip_prefix('+').unwrap_or(t)),
            };
            let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
            // No digits reads as 0; too many saturate (and then overflow the date).
            let n = if digits.is_empty() {
                0
            } else {
                digits.parse::<u128>().unwrap_or(u128::MAX)
            };
            (neg, n)
        }
        other => {
            let f = other.to_f64().unwrap_or(0.0).round();
            (f < 0.0, f.abs().min(1e30) as u128)
        }
    }
}

/// Reads `INTERVAL v unit`.
pub fn interval_of(v: &Value, unit: Unit) -> Result<Interval, BadInterval> {
    if v.is_null() {
        return Err(BadInterval::Null);
    }
    if let Some(fields) = unit.compound_fields() {
        return compound(&temporal::shown(v), fields);
    }
    if unit == Unit::YearMonth {
        let iv = compound(&temporal::shown(v), &[0, 1])?;
        // Reuse the split: the "days" slot held years, "hours" months.
        let years = iv.micros / MICROS[0];
        let months = iv.micros % MICROS[0] / MICROS[1];
        return Ok(Interval {
            neg: iv.neg,
            months: (years * 12 + months).min(u64::MAX as u128) as u64,
            micros: 0,
        });
    }
    if unit == Unit::Second && !matches!(v, Value::Int(_) | Value::UInt(_)) {
        // Seconds keep their fraction: `1.5 SECOND` is 1.5 s.
        let text = temporal::shown(v);
        let f = match v {
            Value::Bytes(_) => strata_types::value::parse_leading_f64(text.as_bytes()),
            other => other.to_f64().unwrap_or(0.0),
        };
        let micros = match v {
            Value::Decimal(d) => {
                let m = d.rescale(6).mantissa();
                m.unsigned_abs()
            }
            _ => (f.abs() * 1e6).round().min(1e30) as u128,
        };
        return Ok(Interval {
            neg: f < 0.0,
            months: 0,
            micros,
        });
    }
    let (neg, n) = whole(v);
    let (months, micros) = match unit {
        Unit::Microsecond => (0, n),
        Unit::Second => (0, n.saturating_mul(MICROS[3])),
        Unit::Minute => (0, n.saturating_mul(MICROS[2])),
        Unit::Hour => (0, n.saturating_mul(MICROS[1])),
        Unit::Day => (0, n.saturating_mul(MICROS[0])),
        Unit::Week => (0, n.saturating_mul(7 * MICROS[0])),
        Unit::Month => (n, 0),
        Unit::Quarter => (n.saturating_mul(3), 0),
        _ => (n.saturating_mul(12), 0),
    };
    Ok(Interval {
        neg,
        months: months.min(u64::MAX as u128) as u64,
        micros,
    })
}

/// `d + iv` (or minus, when `subtract`): None when the result leaves 0001-01-01 ..
/// 9999-12-31 (MySQL: NULL, warning 1441).
pub fn add(d: &DateTime, iv: &Interval, subtract: bool) -> Option<DateTime> {
    let neg = iv.neg != subtract;
    if iv.months > 0 || iv.micros == 0 {
        let period = d.year as i128 * 12 + d.month as i128 - 1;
        let delta = iv.months as i128;
        let p = if neg { period - delta } else { period + delta };
        if !(0..120_000).contains(&p) {
            return None;
        }
        let (y, m) = ((p / 12) as i64, (p % 12 + 1) as i64);
        let day = (d.day as i64).min(temporal::days_in_month(y, m));
        let out = DateTime {
            year: y as u16,
            month: m as u8,
            day: day as u8,
            ..*d
        };
        if iv.micros == 0 {
            // Month arithmetic may land in year 0 (MySQL checks only the period).
            return Some(out);
        }
        return add(&out, &Interval { months: 0, ..*iv }, subtract);
    }
    let here = temporal::dt_daynr(d) as i128 * 86_400_000_000
        + temporal::day_seconds(d) as i128 * 1_000_000
        + d.micro as i128;
    let delta = iv.micros as i128;
    let t = if neg { here - delta } else { here + delta };
    let days = t.div_euclid(86_400_000_000);
    let rest = t.rem_euclid(86_400_000_000);
    if days > MAX_DAYNR as i128 || days < 366 {
        return None;
    }
    temporal::from_daynr_micros(days as i64, rest as i64)
}

/// `TIMESTAMPDIFF(unit, a, b)`: whole units from `a` to `b`, truncated toward zero; months
/// count only when the day and time of day are reached, as MySQL does.
pub fn diff(unit: Unit, a: &DateTime, b: &DateTime) -> i64 {
    let at = |d: &DateTime| {
        temporal::dt_daynr(d) as i128 * 86_400_000_000
            + temporal::day_seconds(d) as i128 * 1_000_000
            + d.micro as i128
    };
    let (ta, tb) = (at(a), at(b));
    if unit.is_months() {
        let (lo, hi, sign) = if tb >= ta { (a, b, 1) } else { (b, a, -1) };
        let mut months = (hi.year as i64 - lo.year as i64) * 12 + hi.month as i64 - lo.month as i64;
        let lo_rest = (lo.day, lo.hour, lo.minute, lo.second, lo.micro);
        let hi_rest = (hi.day, hi.hour, hi.minute, hi.second, hi.micro);
        if hi_rest < lo_rest {
            months -= 1;
        }
        let per = match unit {
            Unit::Quarter => 3,
            Unit::Year => 12,
            _ => 1,
        };
        return sign * (months / per);
    }
    let d = tb - ta;
    let per: i128 = match unit {
        Unit::Microsecond => 1,
        Unit::Second => 1_000_000,
        Unit::Minute => 60_000_000,
        Unit::Hour => 3_600_000_000,
        Unit::Week => 7 * 86_400_000_000,
        _ => 86_400_000_000,
    };
    (d / per) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> DateTime {
        DateTime::parse(s).unwrap()
    }

    fn plus(s: &str, v: Value, unit: Unit) -> Option<String> {
        add(&dt(s), &interval_of(&v, unit).unwrap(), false).map(|d| d.to_string())
    }

    #[test]
    fn months_clamp_to_the_month_end() {
        assert_eq!(
            plus("2024-01-31", Value::Int(1), Unit::Month).unwrap(),
            "2024-02-29 00:00:00"
        );
        assert_eq!(
            plus("2023-01-31", Value::Int(1), Unit::Month).unwrap(),
            "2023-02-28 00:00:00"
        );
        assert_eq!(
            plus("2024-02-29", Value::Int(1), Unit::Year).unwrap(),
            "2025-02-28 00:00:00"
        );
        assert_eq!(
            plus("2024-03-31", Value::Int(-1), Unit::Quarter).unwrap(),
            "2023-12-31 00:00:00"
        );
        assert_eq!(
            plus("2024-01-15", Value::str("1-2"), Unit::YearMonth).unwrap(),
            "2025-03-15 00:00:00"
        );
    }

    #[test]
    fn limits_give_none() {
        assert_eq!(plus("9999-12-31", Value::Int(1), Unit::Day), None);
        assert_eq!(plus("9999-12-01", Value::Int(1), Unit::Month), None);
        assert_eq!(plus("0001-01-01", Value::Int(-1), Unit::Second), None);
        assert_eq!(
            plus("0001-01-01", Value::Int(-1), Unit::Year).unwrap(),
            "0000-01-01 00:00:00"
        );
        assert_eq!(plus("0000-01-01", Value::Int(-1), Unit::Month), None);
        assert_eq!(
            plus("9999-12-31 23:59:59", Value::Int(1), Unit::Second),
            None
        );
    }

    #[test]
    fn time_units_and_compound_strings() {
        assert_eq!(
            plus("2024-12-31 23:00:00", Value::Int(2), Unit::Hour).unwrap(),
            "2025-01-01 01:00:00"
        );
        assert_eq!(
            plus("2024-01-01", Value::str("-1:30"), Unit::HourMinute).unwrap(),
            "2023-12-31 22:30:00"
        );
        assert_eq!(
            plus("2024-01-01", Value::str("1 2"), Unit::DayHour).unwrap(),
            "2024-01-02 02:00:00"
        );
        assert_eq!(
            plus("2024-01-01", Value::str("1.5"), Unit::SecondMicrosecond).unwrap(),
            "2024-01-01 00:00:01.500000"
        );
        assert_eq!(
            plus("2024-01-01", Value::str("1 1:1:1"), Unit::DaySecond).unwrap(),
            "2024-01-02 01:01:01"
        );
        assert_eq!(
            interval_of(&Value::str("1:2:3"), Unit::HourMinute),
            Err(BadInterval::TooManyFields)
        );
        assert_eq!(
            plus("2024-02-28", Value::Int(1), Unit::Day).unwrap(),
            "2024-02-29 00:00:00"
        );
        assert_eq!(
            plus("2024-01-01", Value::Int(-1), Unit::Week).unwrap(),
            "2023-12-25 00:00:00"
        );
        assert_eq!(
            plus("2024-01-01", Value::str("1.5"), Unit::Day).unwrap(),
            "2024-01-02 00:00:00"
        );
        assert_eq!(
            plus("2024-01-01", Value::Double(1.5), Unit::Day).unwrap(),
            "2024-01-03 00:00:00"
        );
    }

    #[test]
    fn differences() {
        assert_eq!(diff(Unit::Month, &dt("2024-01-31"), &dt("2024-02-29")), 0);
        assert_eq!(diff(Unit::Month, &dt("2024-01-31"), &dt("2024-03-31")), 2);
        assert_eq!(diff(Unit::Month, &dt("2024-03-31"), &dt("2024-01-31")), -2);
        assert_eq!(diff(Unit::Year, &dt("2000-02-29"), &dt("2004-02-28")), 3);
        assert_eq!(
            diff(Unit::Day, &dt("2024-01-02"), &dt("2024-01-01 00:00:01")),
            0
        );
        assert_eq!(
            diff(Unit::Hour, &dt("2024-01-01"), &dt("2024-01-02 05:00:00")),
            29
        );
    }
}
