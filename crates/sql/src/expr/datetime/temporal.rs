//! How the date/time functions read their arguments: MySQL's lenient parsing of strings
//! and numbers as dates, date-times and times, its day numbers (`TO_DAYS`), and TIME
//! values (a signed count of microseconds, at most 838:59:59.999999 either way) with
//! their text form. The functions themselves live in `functions.rs`.

use crate::expr::{EvalCtx, WarnLevel};
use strata_types::{DateTime, Value};

/// The largest TIME value, in microseconds: 838:59:59.999999 (MySQL's TIME range).
pub const TIME_MAX_MICROS: i64 = (838 * 3600 + 59 * 60 + 59) * 1_000_000 + 999_999;
/// MySQL's day number of 9999-12-31, the last day a date may hold.
pub const MAX_DAYNR: i64 = 3_652_424;

pub fn is_leap(year: i64) -> bool {
    // MySQL counts year 0 as a common year.
    year != 0 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days before `month` in a year.
fn days_before_month(year: i64, month: i64) -> i64 {
    (1..month).map(|m| days_in_month(year, m)).sum()
}

/// MySQL's day number (`TO_DAYS`): 0000-01-01 is day 1, 0001-01-01 day 366.
pub fn daynr(year: i64, month: i64, day: i64) -> i64 {
    if year == 0 && month == 0 {
        return 0;
    }
    let y = year - 1;
    let before_year = if year == 0 {
        0
    } else {
        365 + y * 365 + y / 4 - y / 100 + y / 400
    };
    before_year + days_before_month(year, month) + day
}

/// The date of a day number, or None outside 0001-01-01 ..= 9999-12-31 (MySQL gives no
/// dates in year 0 from a day number).
pub fn from_daynr(n: i64) -> Option<(i64, i64, i64)> {
    if !(366..=MAX_DAYNR).contains(&n) {
        return None;
    }
    // Estimate the year, then correct by at most one either way.
    let mut year = (n - 366) * 400 / 146_097 + 1;
    while daynr(year, 1, 1) > n {
        year -= 1;
    }
    while daynr(year + 1, 1, 1) <= n {
        year += 1;
    }
    let mut rest = n - daynr(year, 1, 1) + 1;
    let mut month = 1;
    while rest > days_in_month(year, month) {
        rest -= days_in_month(year, month);
        month += 1;
    }
    Some((year, month, rest))
}

/// 0 = Monday … 6 = Sunday, of a day number.
pub fn weekday(daynr: i64) -> i64 {
    (daynr + 5).rem_euclid(7)
}

pub fn dt_daynr(d: &DateTime) -> i64 {
    daynr(d.year as i64, d.month as i64, d.day as i64)
}

/// Seconds of the day, of a date-time.
pub fn day_seconds(d: &DateTime) -> i64 {
    d.hour as i64 * 3600 + d.minute as i64 * 60 + d.second as i64
}

/// A date-time from a day number and microseconds into that day.
pub fn from_daynr_micros(days: i64, micros: i64) -> Option<DateTime> {
    let (y, m, d) = from_daynr(days)?;
    let secs = micros / 1_000_000;
    Some(DateTime {
        year: y as u16,
        month: m as u8,
        day: d as u8,
        hour: (secs / 3600) as u8,
        minute: (secs / 60 % 60) as u8,
        second: (secs % 60) as u8,
        micro: (micros % 1_000_000) as u32,
        fsp: 0,
    })
}

/// A parsed date or date-time, and whether it had a time part (`'2024-01-01'` has none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stamp {
    pub dt: DateTime,
    pub has_time: bool,
}

fn valid_date(y: i64, m: i64, d: i64) -> bool {
    (y == 0 && m == 0 && d == 0)
        || ((0..=9999).contains(&y) && (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m))
}

fn two_digit_year(y: i64) -> i64 {
    if y < 70 {
        2000 + y
    } else {
        1900 + y
    }
}

fn build(parts: [i64; 6], micro: i64, has_time: bool) -> Option<Stamp> {
    let [y, mo, d, h, mi, s] = parts;
    if !valid_date(y, mo, d)
        || !(0..24).contains(&h)
        || !(0..60).contains(&mi)
        || !(0..60).contains(&s)
    {
        return None;
    }
    Some(Stamp {
        dt: DateTime {
            year: y as u16,
            month: mo as u8,
            day: d as u8,
            hour: h as u8,
            minute: mi as u8,
            second: s as u8,
            micro: micro as u32,
            fsp: 0,
        },
        has_time,
    })
}

/// Fraction digits as microseconds (the first six digits count; more are cut off).
fn frac_micros(digits: &str) -> i64 {
    let mut v = 0i64;
    for (i, c) in digits.bytes().take(6).enumerate() {
        v += (c - b'0') as i64 * 10i64.pow(5 - i as u32);
    }
    v
}

/// Parses a string as MySQL reads a date or date-time: `YYYY-MM-DD[ hh:mm:ss[.f]]` with
/// any punctuation between the parts (and `T` before the time), two-digit years
/// (70–99 are 19xx), or the digit-only forms `YYYYMMDD[hhmmss]` and `YYMMDD[hhmmss]`.
/// None for anything else, impossible dates included.
pub fn parse_stamp(text: &str) -> Option<Stamp> {
    let t = text.trim_matches(|c: char| c == ' ' || c == '\t' || c == '\n');
    if t.is_empty() {
        return None;
    }
    let (main, frac) = match t.find('.') {
        // A dot after the time-of-day is a fraction; in a date part it is a delimiter.
        Some(i)
            if t[..i].contains([' ', 'T', ':']) || t[..i].bytes().all(|b| b.is_ascii_digit()) =>
        {
            (&t[..i], Some(&t[i + 1..]))
        }
        _ => (t, None),
    };
    let micro = match frac {
        Some(f) if f.bytes().all(|b| b.is_ascii_digit()) => frac_micros(f),
        Some(_) => return None,
        None => 0,
    };
    if main.bytes().all(|b| b.is_ascii_digit()) {
        let n = |a: usize, b: usize| main[a..b].parse::<i64>().ok();
        return match main.len() {
            14 => build(
                [
                    n(0, 4)?,
                    n(4, 6)?,
                    n(6, 8)?,
                    n(8, 10)?,
                    n(10, 12)?,
                    n(12, 14)?,
                ],
                micro,
                true,
            ),
            12 => build(
                [
                    two_digit_year(n(0, 2)?),
                    n(2, 4)?,
                    n(4, 6)?,
                    n(6, 8)?,
                    n(8, 10)?,
                    n(10, 12)?,
                ],
                micro,
                true,
            ),
            8 => build(
                [n(0, 4)?, n(4, 6)?, n(6, 8)?, 0, 0, 0],
                micro,
                frac.is_some(),
            ),
            6 => build(
                [two_digit_year(n(0, 2)?), n(2, 4)?, n(4, 6)?, 0, 0, 0],
                micro,
                frac.is_some(),
            ),
            _ => None,
        };
    }
    // Delimited: digit groups; the date's three, then (after a space or T) the time's.
    let bytes = main.as_bytes();
    let mut groups: Vec<(i64, usize)> = Vec::with_capacity(6);
    let mut i = 0;
    let mut time_at = None;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if i - start > 6 {
                return None;
            }
            groups.push((main[start..i].parse().ok()?, i - start));
            continue;
        }
        let c = bytes[i];
        if groups.len() == 3 && time_at.is_none() {
            if c == b' ' || c == b'T' {
                time_at = Some(3);
            } else {
                return None;
            }
            while i < bytes.len() && bytes[i] == b' ' {
                i += 1;
            }
            if i < bytes.len() && bytes[i] == b'T' && c == b' ' {
                return None;
            }
            if c == b'T' {
                i += 1;
            }
            continue;
        }
        if !c.is_ascii_punctuation() || i + 1 >= bytes.len() {
            return None;
        }
        i += 1;
    }
    if groups.len() < 3 || groups.len() > 6 || (groups.len() > 3 && time_at.is_none()) {
        return None;
    }
    if groups.len() == 3 && frac.is_some() {
        return None;
    }
    let year = if groups[0].1 <= 2 {
        two_digit_year(groups[0].0)
    } else {
        groups[0].0
    };
    let g = |k: usize| groups.get(k).map_or(0, |x| x.0);
    build(
        [year, g(1), g(2), g(3), g(4), g(5)],
        micro,
        groups.len() > 3,
    )
}

/// A number read as a date or date-time, MySQL's way: `20240131`, `240131`,
/// `20240131123000`; 0 is the zero date.
pub fn number_stamp(n: i64) -> Option<Stamp> {
    if n == 0 {
        return build([0; 6], 0, false);
    }
    let date = |v: i64, y: i64| build([y, v / 100 % 100, v % 100, 0, 0, 0], 0, false);
    let dt = |v: i64, y: i64| {
        let d = v / 1_000_000;
        let t = v % 1_000_000;
        build(
            [y, d / 100 % 100, d % 100, t / 10000, t / 100 % 100, t % 100],
            0,
            true,
        )
    };
    match n {
        101..=691_231 => date(n, 2000 + n / 10000),
        700_101..=991_231 => date(n, 1900 + n / 10000),
        10_000_101..=99_991_231 => date(n, n / 10000),
        101_000_000..=691_231_235_959 => dt(n, 2000 + n / 10_000_000_000),
        700_101_000_000..=991_231_235_959 => dt(n, 1900 + n / 10_000_000_000),
        10_000_101_000_000..=99_991_231_235_959 => dt(n, n / 10_000_000_000),
        _ => None,
    }
}

/// A value as a date or date-time, without warnings. Strings parse; integers read as
/// numbers; a DATETIME value has a time part unless it is midnight and `date_typed`.
pub fn stamp_of(v: &Value, date_typed: bool) -> Option<Stamp> {
    match v {
        Value::DateTime(d) => Some(Stamp {
            dt: *d,
            has_time: !date_typed,
        }),
        Value::Bytes(b) | Value::Member { text: b, .. } => {
            std::str::from_utf8(b).ok().and_then(parse_stamp)
        }
        Value::Json(_) => parse_stamp(&v.to_text()),
        Value::Bits(b) => number_stamp(i64::try_from(strata_types::value::bits_value(b)).ok()?),
        Value::Int(i) => number_stamp(*i),
        Value::UInt(u) => number_stamp(i64::try_from(*u).ok()?),
        Value::Decimal(_) | Value::Double(_) => {
            let f = v.to_f64()?;
            let whole = f.trunc();
            let mut s = number_stamp(whole as i64)?;
            if s.has_time {
                s.dt.micro = ((f - whole).abs() * 1e6).round().min(999_999.0) as u32;
            }
            Some(s)
        }
        Value::Null => None,
    }
}

/// The text of a value, for warnings about it.
pub fn shown(v: &Value) -> String {
    match v {
        Value::Double(d) => strata_types::value::format_double(*d),
        other => other.to_text(),
    }
}

/// 1292 `Incorrect <kind> value: '<v>'`, as MySQL warns when a function's argument is not
/// a valid date, date-time or time (the function then returns NULL).
pub fn warn_incorrect(cx: &EvalCtx, kind: &str, v: &Value) {
    cx.env.warn(
        WarnLevel::Warning,
        1292,
        format!("Incorrect {kind} value: '{}'", shown(v)),
    );
}

/// A date/date-time argument, or None (NULL, or a bad value: warned with 1292). Zero
/// dates are refused when `no_zero` (as MySQL's date arithmetic refuses them).
pub fn stamp_arg(v: &Value, date_typed: bool, no_zero: bool, cx: &EvalCtx) -> Option<Stamp> {
    if v.is_null() {
        return None;
    }
    match stamp_of(v, date_typed) {
        Some(s) if no_zero && (s.dt.month == 0 || s.dt.day == 0) => {
            warn_incorrect(cx, "datetime", v);
            None
        }
        Some(s) => Some(s),
        None => {
            warn_incorrect(cx, "datetime", v);
            None
        }
    }
}

/// Parses a TIME: `[-][D ]hh:mm[:ss][.f]`, `[-]hhmmss[.f]`, `ss`; None if not a time.
/// Out-of-range values clamp to ±838:59:59 as MySQL does (with `clamped` set).
pub fn parse_time(text: &str) -> Option<(i64, bool)> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r.trim_start()),
        None => (false, t),
    };
    if t.is_empty() {
        return None;
    }
    // A full date-time string reads as its time of day.
    if let Some(s) = parse_stamp(t).filter(|s| s.has_time && !neg) {
        return Some((day_seconds(&s.dt) * 1_000_000 + s.dt.micro as i64, false));
    }
    let (main, frac) = match t.find('.') {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, ""),
    };
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let micro = frac_micros(frac);
    let (days, hms) = match main.find(' ') {
        Some(i) => (main[..i].parse::<i64>().ok()?, main[i + 1..].trim_start()),
        None => (0, main),
    };
    let (h, m, s) = if hms.contains(':') {
        let parts: Vec<&str> = hms.split(':').collect();
        if parts.len() > 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return None;
        }
        let p = |i: usize| parts.get(i).map_or(Some(0), |x| x.parse::<i64>().ok());
        (p(0)?, p(1)?, p(2)?)
    } else {
        if hms.is_empty() || !hms.bytes().all(|b| b.is_ascii_digit()) || days != 0 {
            return None;
        }
        let n: i64 = hms.parse().ok()?;
        (n / 10000, n / 100 % 100, n % 100)
    };
    if m >= 60 || s >= 60 {
        return None;
    }
    let total = ((days * 24 + h) * 3600 + m * 60 + s) * 1_000_000 + micro;
    let clamped = total > TIME_MAX_MICROS;
    let total = total.min(TIME_MAX_MICROS);
    Some((if neg { -total } else { total }, clamped))
}

/// A value as a TIME in microseconds; None for NULL or a value that is not a time.
pub fn time_of(v: &Value) -> Option<i64> {
    match v {
        Value::DateTime(d) => Some(day_seconds(d) * 1_000_000 + d.micro as i64),
        Value::Bytes(b) | Value::Member { text: b, .. } => std::str::from_utf8(b)
            .ok()
            .and_then(parse_time)
            .map(|x| x.0),
        Value::Json(_) => parse_time(&v.to_text()).map(|x| x.0),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) | Value::Bits(_) => {
            let f = v.to_f64()?;
            let n = f.trunc() as i64;
            let a = n.abs();
            if a > 8_385_959 {
                // Too large for hhmmss: read as a date-time, whose time of day it is.
                let s = number_stamp(n).filter(|s| s.has_time)?;
                return Some(day_seconds(&s.dt) * 1_000_000);
            }
            if a % 100 >= 60 || a / 100 % 100 >= 60 {
                return None;
            }
            let micros = ((a / 10000) * 3600 + a / 100 % 100 * 60 + a % 100) * 1_000_000
                + ((f - f.trunc()).abs() * 1e6).round() as i64;
            let micros = micros.min(TIME_MAX_MICROS);
            Some(if f < 0.0 { -micros } else { micros })
        }
        Value::Null => None,
    }
}

/// `[-]hh:mm:ss[.f…]` with `fsp` fraction digits: the TIME text the storage layer also
/// reads back ([`strata_types::time_value::format`]).
pub fn format_time(micros: i64, fsp: u8) -> String {
    strata_types::time_value::format(micros, fsp)
}

/// A date-time as text with exactly `fsp` fraction digits.
pub fn format_datetime(d: &DateTime, fsp: u8) -> String {
    let mut s = format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        d.year, d.month, d.day, d.hour, d.minute, d.second
    );
    if fsp > 0 {
        let frac = format!("{:06}", d.micro);
        s.push('.');
        s.push_str(&frac[..fsp.min(6) as usize]);
    }
    s
}

/// How a string-typed date result is shown: the date alone for a date, the date-time
/// with six fraction digits only when it has a fraction (MySQL's VARCHAR results).
pub fn format_stamp(s: &Stamp) -> String {
    if s.has_time {
        format_datetime(&s.dt, if s.dt.micro != 0 { 6 } else { 0 })
    } else {
        s.dt.date_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_numbers_match_to_days() {
        assert_eq!(daynr(1970, 1, 1), 719_528);
        assert_eq!(daynr(0, 1, 1), 1);
        assert_eq!(daynr(1, 1, 1), 366);
        assert_eq!(daynr(9999, 12, 31), MAX_DAYNR);
        assert_eq!(daynr(2024, 3, 1) - daynr(2024, 2, 28), 2);
        for n in [366, 719_528, 730_000, 738_000, 3_652_424] {
            let (y, m, d) = from_daynr(n).unwrap();
            assert_eq!(daynr(y, m, d), n);
        }
        assert_eq!(from_daynr(365), None);
        assert_eq!(from_daynr(MAX_DAYNR + 1), None);
        // 2024-01-01 was a Monday.
        assert_eq!(weekday(daynr(2024, 1, 1)), 0);
    }

    #[test]
    fn strings_and_numbers_as_dates() {
        let s = parse_stamp("2024-02-29").unwrap();
        assert!(!s.has_time);
        assert!(parse_stamp("2023-02-29").is_none());
        assert_eq!(
            parse_stamp("24/1/5 7:8:9").unwrap().dt.to_string(),
            "2024-01-05 07:08:09"
        );
        assert_eq!(parse_stamp("99-12-31").unwrap().dt.year, 1999);
        assert_eq!(parse_stamp("20240131").unwrap().dt.day, 31);
        assert_eq!(
            parse_stamp("2024-01-01 10:00:00.5").unwrap().dt.micro,
            500_000
        );
        assert!(parse_stamp("abc").is_none());
        assert!(parse_stamp("2024-13-01").is_none());
        assert_eq!(number_stamp(20240131).unwrap().dt.month, 1);
        assert_eq!(number_stamp(991231).unwrap().dt.year, 1999);
        assert!(number_stamp(20241301).is_none());
        assert!(number_stamp(20240101123000).unwrap().has_time);
    }

    #[test]
    fn times_parse_and_print() {
        assert_eq!(parse_time("12:34:56"), Some((45_296_000_000, false)));
        assert_eq!(
            parse_time("-1 02:00:00"),
            Some((-26 * 3_600_000_000, false))
        );
        assert_eq!(parse_time("900:00:00").unwrap(), (TIME_MAX_MICROS, true));
        assert_eq!(
            parse_time("123456").unwrap().0,
            (12 * 3600 + 34 * 60 + 56) * 1_000_000
        );
        assert!(parse_time("12:61:00").is_none());
        assert_eq!(format_time(-3_723_500_000, 1), "-01:02:03.5");
        assert_eq!(format_time(TIME_MAX_MICROS, 0), "838:59:59");
    }
}
