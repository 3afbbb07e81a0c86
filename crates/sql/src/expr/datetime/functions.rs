//! The date/time functions' evaluation: INTERVAL arithmetic (`+`/`-`, DATE_ADD and
//! friends, TIMESTAMPADD), EXTRACT and the field functions (YEAR … MICROSECOND, WEEK,
//! DAYNAME, …), day numbers (TO_DAYS, FROM_DAYS, DATEDIFF, LAST_DAY, MAKEDATE), TIME
//! values (TIMEDIFF, SEC_TO_TIME, TIME_TO_SEC, MAKETIME), periods, CONVERT_TZ and the
//! clock functions. The binder (`bind/datetime.rs`) picks the variant and, with it, the
//! result's type: [`Out`] says how a date-time result is shown.

use crate::expr::datetime::format as datefmt;
use crate::expr::datetime::interval::{self, BadInterval, Unit};
use crate::expr::datetime::temporal::{self, Stamp};
use crate::expr::{EvalCtx, Expr, WarnLevel};
use strata_types::{DateTime, Decimal, Error, Result, Value};

/// The shape of a date/time function's result, fixed at bind time as MySQL types it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// DATE: a date-time value at midnight (the protocol shows the date).
    Date,
    /// DATETIME(fsp): shown with exactly `fsp` fraction digits.
    DateTime(u8),
    /// TIME(fsp), as its text.
    Time(u8),
    /// VARCHAR: a string argument's result, shown as a date or a date-time.
    Text,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateFn {
    /// `d ± INTERVAL n unit`, DATE_ADD/DATE_SUB/ADDDATE/SUBDATE: args `[d, n]`.
    AddInterval {
        unit: Unit,
        sub: bool,
        out: Out,
    },
    /// TIMESTAMPADD(unit, n, d): args `[n, d]`.
    TimestampAdd {
        unit: Unit,
        out: Out,
    },
    /// TIMESTAMPDIFF(unit, a, b).
    TimestampDiff(Unit),
    /// EXTRACT(unit FROM d); `time_arg` when d is a TIME (its hours may exceed 23).
    Extract {
        unit: Unit,
        time_arg: bool,
    },
    Year,
    Month,
    DayOfMonth,
    Hour,
    Minute,
    Second,
    Microsecond,
    Quarter,
    DayOfWeek,
    WeekDay,
    DayOfYear,
    DayName,
    MonthName,
    /// WEEK(d[, mode]); WEEKOFYEAR is mode 3.
    Week,
    WeekOfYear,
    YearWeek,
    ToDays,
    FromDays,
    DateDiff,
    LastDay,
    MakeDate,
    /// DATE(x).
    DateOf,
    /// TIME(x), with the result's fraction digits.
    TimeOf(u8),
    TimeDiff(u8),
    SecToTime(u8),
    /// TIME_TO_SEC: a DECIMAL with this many digits, or an integer when 0.
    TimeToSec(u8),
    MakeTime(u8),
    PeriodAdd,
    PeriodDiff,
    DateFormat,
    TimeFormat,
    StrToDate(datefmt::Parsed),
    /// CONVERT_TZ with its result's fraction digits.
    ConvertTz(u8),
    /// NOW() with fraction digits: the statement's start time, in the session's zone.
    Now(u8),
    /// SYSDATE(): the time it runs at.
    SysDate(u8),
    /// UTC_TIMESTAMP(), UTC_DATE(), UTC_TIME(): the statement's time in UTC, whatever
    /// the session's time zone.
    UtcNow(u8),
    UtcDate,
    UtcTime(u8),
    CurDate,
    CurTime(u8),
    /// UNIX_TIMESTAMP(d): an integer, or a DECIMAL with the argument's `fsp` digits.
    UnixTimestamp(u8),
    /// FROM_UNIXTIME(n[, format]): a date-time with `fsp` fraction digits (the
    /// argument's, rounded to them); None for a placeholder, whose value gives them.
    FromUnixtime(Option<u8>),
    /// ADDTIME / SUBTIME (`sub`): a date-time or a TIME plus a TIME, shown with `fsp`
    /// digits, or (`text`, a string first argument) with six when there is a fraction.
    AddTime {
        sub: bool,
        fsp: u8,
        text: bool,
    },
    /// A TIME operand of a comparison or an ORDER BY key as its signed microseconds
    /// (TIME values are held as text, whose order is not theirs).
    TimeKey,
    /// A placeholder compared with a YEAR column, read as that column stores it
    /// ([`year_constant`]).
    YearConstant,
}

const DAY_NAMES: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
pub const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

pub fn day_name(weekday: i64) -> &'static str {
    DAY_NAMES[weekday.rem_euclid(7) as usize]
}

/// A date-time result in its bound shape.
pub fn emit(s: Stamp, out: Out) -> Value {
    match out {
        // A DATETIME(fsp) column's value shows its digits: results show their own.
        Out::Date => Value::DateTime(s.dt.as_date()),
        // A date-time value, never its text: it then compares, sorts and hashes as an
        // instant (`CAST('2021-01-02' AS DATETIME(3)) = '2021-01-02'` is true, which
        // as text `…00:00:00.000` against `2021-01-02` it was not), and shows its
        // `fsp` digits itself.
        Out::DateTime(fsp) => Value::DateTime(s.dt.truncate_to(fsp)),
        Out::Time(fsp) => Value::str(&temporal::format_time(
            temporal::day_seconds(&s.dt) * 1_000_000 + s.dt.micro as i64,
            fsp,
        )),
        Out::Text => Value::str(&temporal::format_stamp(&s)),
    }
}

/// The DATE `y-m-d` (as `temporal::from_daynr` gives it).
fn date_value(y: i64, m: i64, d: i64) -> Value {
    Value::DateTime(
        DateTime {
            year: y as u16,
            month: m as u8,
            day: d as u8,
            ..DateTime::default()
        }
        .as_date(),
    )
}

fn warn_overflow(cx: &EvalCtx) {
    cx.env.warn(
        WarnLevel::Warning,
        1441,
        "Datetime function: datetime field overflow".into(),
    );
}

/// MySQL's week number (the algorithm behind WEEK, YEARWEEK, %U/%u/%V/%v/%X/%x):
/// `monday_first`, `week_year` (weeks belong to the year holding most of them, so week
/// 0 becomes the previous year's last) and `first_weekday` (week 1 starts on the first
/// Sunday/Monday rather than being the first week with four days). Returns (year, week).
pub fn calc_week(
    d: &DateTime,
    monday_first: bool,
    mut week_year: bool,
    first_weekday: bool,
) -> (i64, i64) {
    let y = d.year as i64;
    let nr = temporal::dt_daynr(d);
    let mut first = temporal::daynr(y, 1, 1);
    let mut wd = (first + 5 + (!monday_first) as i64).rem_euclid(7);
    let mut year = y;
    let starts_late = |wd: i64| (first_weekday && wd != 0) || (!first_weekday && wd >= 4);
    if d.month == 1 && (d.day as i64) <= 7 - wd {
        if !week_year && starts_late(wd) {
            return (year, 0);
        }
        week_year = true;
        year -= 1;
        let days = if temporal::is_leap(year) { 366 } else { 365 };
        first -= days;
        wd = (wd + 53 * 7 - days).rem_euclid(7);
    }
    let days = if starts_late(wd) {
        nr - (first + (7 - wd))
    } else {
        nr - (first - wd)
    };
    if week_year && days >= 52 * 7 {
        let len = if temporal::is_leap(year) { 366 } else { 365 };
        let wd2 = (wd + len).rem_euclid(7);
        if (!first_weekday && wd2 < 4) || (first_weekday && wd2 == 0) {
            return (year + 1, 1);
        }
    }
    (year, days / 7 + 1)
}

/// WEEK()'s mode as (monday_first, week_year, first_weekday).
pub fn week_mode(mode: i64) -> (bool, bool, bool) {
    let m = mode & 7;
    let monday_first = m & 1 != 0;
    // Bit 4 means "week 1 starts on the first Sunday/Monday" for Monday-first modes and
    // the reverse for Sunday-first ones.
    let first_weekday = (m & 4 != 0) == monday_first;
    (monday_first, m & 2 != 0, first_weekday)
}

fn num(v: &Value) -> Option<i64> {
    v.to_i64()
}

/// TIME arguments: a TIME in microseconds, or None (NULL, or not a time: warned).
fn time_arg(v: &Value, cx: &EvalCtx) -> Option<i64> {
    if v.is_null() {
        return None;
    }
    let t = temporal::time_of(v);
    if t.is_none() {
        temporal::warn_incorrect(cx, "time", v);
    }
    t
}

fn clamp_time(micros: i128, cx: &EvalCtx, shown: &str) -> i64 {
    let max = temporal::TIME_MAX_MICROS as i128;
    if micros.abs() > max {
        cx.env.warn(
            WarnLevel::Warning,
            1292,
            format!("Truncated incorrect time value: '{shown}'"),
        );
        return micros.clamp(-max, max) as i64;
    }
    micros as i64
}

/// Evaluates `f`; `date_arg` says the first argument is DATE-typed (its values are
/// midnight date-times with no time part).
pub fn eval(
    f: DateFn,
    date_arg: bool,
    args: &[Expr],
    row: &[Value],
    cx: &EvalCtx,
) -> Result<Value> {
    let a = |i: usize| -> Result<Value> {
        match args.get(i) {
            Some(e) => e.eval(row, cx),
            None => Ok(Value::Null),
        }
    };
    // A date argument (fuzzy: zero dates and zero parts pass), or NULL.
    let date = |v: &Value| temporal::stamp_arg(v, date_arg, false, cx);
    // A date argument that must be a real calendar date.
    let real_date = |v: &Value| temporal::stamp_arg(v, date_arg, true, cx);
    use DateFn::*;
    Ok(match f {
        AddInterval { unit, sub, out } => {
            let (d, n) = (a(0)?, a(1)?);
            let Some(s) = real_date(&d) else {
                return Ok(Value::Null);
            };
            add_interval(s, &n, unit, sub, out, cx)
        }
        TimestampAdd { unit, out } => {
            let (n, d) = (a(0)?, a(1)?);
            let Some(s) = real_date(&d) else {
                return Ok(Value::Null);
            };
            add_interval(s, &n, unit, false, out, cx)
        }
        TimestampDiff(unit) => {
            let (x, y) = (a(0)?, a(1)?);
            match (real_date(&x), real_date(&y)) {
                (Some(p), Some(q)) => Value::Int(interval::diff(unit, &p.dt, &q.dt)),
                _ => Value::Null,
            }
        }
        Extract {
            unit,
            time_arg: true,
        } => {
            let Some(t) = time_arg(&a(0)?, cx) else {
                return Ok(Value::Null);
            };
            Value::Int(extract_time(unit, t))
        }
        Extract { unit, .. } => {
            let Some(s) = date(&a(0)?) else {
                return Ok(Value::Null);
            };
            Value::Int(extract(unit, &s.dt))
        }
        Year | Month | DayOfMonth | Quarter => {
            let Some(s) = date(&a(0)?) else {
                return Ok(Value::Null);
            };
            let d = s.dt;
            Value::Int(match f {
                Year => d.year as i64,
                Month => d.month as i64,
                DayOfMonth => d.day as i64,
                _ => (d.month as i64 + 2) / 3,
            })
        }
        Hour | Minute | Second | Microsecond => {
            let Some(t) = time_arg(&a(0)?, cx) else {
                return Ok(Value::Null);
            };
            let t = t.abs();
            Value::Int(match f {
                Hour => t / 3_600_000_000,
                Minute => t / 60_000_000 % 60,
                Second => t / 1_000_000 % 60,
                _ => t % 1_000_000,
            })
        }
        DayOfWeek | WeekDay | DayOfYear | DayName | ToDays => {
            let Some(s) = real_date(&a(0)?) else {
                return Ok(Value::Null);
            };
            let nr = temporal::dt_daynr(&s.dt);
            match f {
                DayOfWeek => Value::Int((temporal::weekday(nr) + 1) % 7 + 1),
                WeekDay => Value::Int(temporal::weekday(nr)),
                DayOfYear => Value::Int(nr - temporal::daynr(s.dt.year as i64, 1, 1) + 1),
                DayName => Value::str(day_name(temporal::weekday(nr))),
                _ => Value::Int(nr),
            }
        }
        MonthName => match date(&a(0)?) {
            Some(s) if s.dt.month > 0 => Value::str(MONTH_NAMES[s.dt.month as usize - 1]),
            _ => Value::Null,
        },
        Week | WeekOfYear | YearWeek => {
            let Some(s) = real_date(&a(0)?) else {
                return Ok(Value::Null);
            };
            let mode = match f {
                WeekOfYear => 3,
                _ if args.len() > 1 => num(&a(1)?).unwrap_or_default(),
                _ => 0,
            };
            let (mf, wy, fw) = week_mode(mode);
            if f == YearWeek {
                let (y, w) = calc_week(&s.dt, mf, true, fw);
                Value::Int(y * 100 + w)
            } else {
                Value::Int(calc_week(&s.dt, mf, wy, fw).1)
            }
        }
        FromDays => match num(&a(0)?) {
            None => Value::Null,
            Some(n) => match temporal::from_daynr(n) {
                Some((y, m, d)) => date_value(y, m, d),
                // Before year 1 (and past 9999) MySQL gives the zero date.
                None => Value::DateTime(DateTime::default().as_date()),
            },
        },
        DateDiff => {
            let (x, y) = (a(0)?, a(1)?);
            match (real_date(&x), real_date(&y)) {
                (Some(p), Some(q)) => {
                    Value::Int(temporal::dt_daynr(&p.dt) - temporal::dt_daynr(&q.dt))
                }
                _ => Value::Null,
            }
        }
        LastDay => match real_date(&a(0)?) {
            Some(s) => Value::DateTime(
                DateTime {
                    day: temporal::days_in_month(s.dt.year as i64, s.dt.month as i64) as u8,
                    ..s.dt
                }
                .as_date(),
            ),
            None => Value::Null,
        },
        MakeDate => {
            let (y, n) = (a(0)?, a(1)?);
            let (Some(y), Some(n)) = (num(&y), num(&n)) else {
                return Ok(Value::Null);
            };
            let y = match y {
                0..=69 => y + 2000,
                70..=99 => y + 1900,
                _ => y,
            };
            if n <= 0 || !(0..=9999).contains(&y) {
                return Ok(Value::Null);
            }
            match temporal::from_daynr(temporal::daynr(y, 1, 1) + n - 1) {
                Some((y, m, d)) => date_value(y, m, d),
                None => Value::Null,
            }
        }
        DateOf => match date(&a(0)?) {
            Some(s) => emit(s, Out::Date),
            None => Value::Null,
        },
        TimeOf(fsp) => match time_arg(&a(0)?, cx) {
            Some(t) => Value::str(&temporal::format_time(t, fsp)),
            None => Value::Null,
        },
        TimeDiff(fsp) => {
            let (x, y) = (a(0)?, a(1)?);
            if x.is_null() || y.is_null() {
                return Ok(Value::Null);
            }
            let (p, q) = (time_point(&x, date_arg)?, time_point(&y, date_arg)?);
            let d = match (p, q) {
                (Some((true, p)), Some((true, q))) | (Some((false, p)), Some((false, q))) => p - q,
                _ => return Ok(Value::Null),
            };
            let t = clamp_time(
                d,
                cx,
                &temporal::format_time(d.clamp(i64::MIN as i128, i64::MAX as i128) as i64, fsp),
            );
            Value::str(&temporal::format_time(t, fsp))
        }
        SecToTime(fsp) => {
            let v = a(0)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            let micros = match &v {
                Value::Int(i) => *i as i128 * 1_000_000,
                Value::UInt(u) => *u as i128 * 1_000_000,
                Value::Decimal(d) => d.rescale(6).mantissa(),
                other => (other.to_f64().unwrap_or(0.0) * 1e6).round() as i128,
            };
            let max = temporal::TIME_MAX_MICROS as i128;
            let t = if micros.abs() > max {
                cx.env.warn(
                    WarnLevel::Warning,
                    1292,
                    format!("Truncated incorrect time value: '{}'", temporal::shown(&v)),
                );
                micros.clamp(-max, max) as i64
            } else {
                micros as i64
            };
            Value::str(&temporal::format_time(t, fsp))
        }
        AddTime { sub, fsp, text } => {
            let (x, y) = (a(0)?, a(1)?);
            if x.is_null() || y.is_null() {
                return Ok(Value::Null);
            }
            let Some(d) = time_arg(&y, cx) else {
                return Ok(Value::Null);
            };
            let d = if sub { -(d as i128) } else { d as i128 };
            let digits = |micro: i128| match (text, micro != 0) {
                (false, _) => fsp,
                (true, true) => 6,
                (true, false) => 0,
            };
            match time_point(&x, date_arg)? {
                Some((true, p)) => {
                    let r = p + d;
                    let day = 86_400_000_000i128;
                    let days = r.div_euclid(day) as i64;
                    let rem = r.rem_euclid(day) as i64;
                    match temporal::from_daynr_micros(days, rem).filter(|t| t.year <= 9999) {
                        // A DATETIME result is a date-time value (compared as one); a
                        // string argument's result is text, as in MySQL.
                        Some(t) if !text => Value::DateTime(t.truncate_to(fsp)),
                        Some(t) => Value::str(&temporal::format_datetime(
                            &t,
                            digits(rem as i128 % 1_000_000),
                        )),
                        None => Value::Null,
                    }
                }
                Some((false, t)) => {
                    let r = t + d;
                    let shown = temporal::format_time(
                        r.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                        6,
                    );
                    let t = clamp_time(r, cx, &shown);
                    Value::str(&temporal::format_time(t, digits(t as i128 % 1_000_000)))
                }
                None => Value::Null,
            }
        }
        YearConstant => {
            let v = a(0)?;
            year_constant(&v).unwrap_or(v)
        }
        TimeKey => match time_arg(&a(0)?, cx) {
            None => Value::Null,
            Some(t) => Value::Int(t),
        },
        TimeToSec(fsp) => match time_arg(&a(0)?, cx) {
            None => Value::Null,
            Some(t) if fsp == 0 => Value::Int(t / 1_000_000),
            Some(t) => Value::Decimal(Decimal::new(t as i128, 6).rescale(fsp)),
        },
        MakeTime(fsp) => {
            let (h, m, s) = (a(0)?, a(1)?, a(2)?);
            let (Some(hh), Some(mm)) = (num(&h), num(&m)) else {
                return Ok(Value::Null);
            };
            let Some(ss) = s.to_f64() else {
                return Ok(Value::Null);
            };
            if !(0..60).contains(&mm) || !(0.0..60.0).contains(&ss) {
                return Ok(Value::Null);
            }
            let secs_micros = match &s {
                Value::Decimal(d) => d.rescale(6).mantissa() as i64,
                Value::Int(i) => i * 1_000_000,
                _ => (ss * 1e6).round() as i64,
            };
            let total = (hh.unsigned_abs() as i128 * 3600 + mm as i128 * 60) * 1_000_000
                + secs_micros as i128;
            let total = if hh < 0 { -total } else { total };
            let shown = format!("{hh}:{mm:02}:{}", temporal::shown(&s));
            Value::str(&temporal::format_time(clamp_time(total, cx, &shown), fsp))
        }
        PeriodAdd | PeriodDiff => {
            let (p, n) = (a(0)?, a(1)?);
            let (Some(p), Some(n)) = (num(&p), num(&n)) else {
                return Ok(Value::Null);
            };
            let months = |p: i64| -> i64 {
                if p == 0 {
                    return 0;
                }
                let (y, m) = (p / 100, p % 100);
                let y = match y {
                    0..=69 => y + 2000,
                    70..=99 => y + 1900,
                    _ => y,
                };
                y * 12 + m - 1
            };
            if f == PeriodDiff {
                Value::Int(months(p) - months(n))
            } else {
                if p == 0 {
                    return Ok(Value::Int(0));
                }
                let m = months(p) + n;
                Value::Int(m / 12 * 100 + m % 12 + 1)
            }
        }
        DateFormat => {
            let (d, fmt) = (a(0)?, a(1)?);
            if fmt.is_null() {
                return Ok(Value::Null);
            }
            let Some(s) = date(&d) else {
                return Ok(Value::Null);
            };
            match datefmt::format(&s.dt, None, &fmt.to_text()) {
                Some(t) => Value::str(&t),
                None => Value::Null,
            }
        }
        TimeFormat => {
            let (t, fmt) = (a(0)?, a(1)?);
            if fmt.is_null() {
                return Ok(Value::Null);
            }
            let Some(t) = time_arg(&t, cx) else {
                return Ok(Value::Null);
            };
            match datefmt::format(&DateTime::default(), Some(t), &fmt.to_text()) {
                Some(t) => Value::str(&t),
                None => Value::Null,
            }
        }
        StrToDate(parsed) => {
            let (s, fmt) = (a(0)?, a(1)?);
            if s.is_null() || fmt.is_null() {
                return Ok(Value::Null);
            }
            let text = s.to_text();
            match datefmt::parse(&text, &fmt.to_text())
                .and_then(|p| datefmt::parsed_value(&p, parsed))
            {
                Some(v) => v,
                None => {
                    cx.env.warn(
                        WarnLevel::Warning,
                        1411,
                        format!("Incorrect datetime value: '{text}' for function str_to_date"),
                    );
                    Value::Null
                }
            }
        }
        ConvertTz(fsp) => {
            let (d, from, to) = (a(0)?, a(1)?, a(2)?);
            if from.is_null() || to.is_null() {
                return Ok(Value::Null);
            }
            let Some(s) = real_date(&d) else {
                return Ok(Value::Null);
            };
            let (Some(from), Some(to)) = (zone_offset(&from.to_text()), zone_offset(&to.to_text()))
            else {
                // A named zone: MySQL answers NULL without its time zone tables.
                return Ok(Value::Null);
            };
            let utc = s.dt.to_unix() - from;
            // Outside TIMESTAMP's range MySQL leaves the value unconverted.
            let shifted = if (1..=2_147_483_647).contains(&utc) {
                DateTime::from_unix(utc + to, s.dt.micro)
            } else {
                s.dt
            };
            emit(
                Stamp {
                    dt: shifted,
                    has_time: true,
                },
                Out::DateTime(fsp),
            )
        }
        Now(fsp) => emit(
            Stamp {
                dt: cx.env.now(),
                has_time: true,
            },
            Out::DateTime(fsp),
        ),
        SysDate(fsp) => emit(
            Stamp {
                dt: {
                    let now = DateTime::now();
                    DateTime::from_unix(now.to_unix() + session_offset(cx), now.micro)
                },
                has_time: true,
            },
            Out::DateTime(fsp),
        ),
        CurDate => emit(
            Stamp {
                dt: cx.env.now(),
                has_time: false,
            },
            Out::Date,
        ),
        CurTime(fsp) => emit(
            Stamp {
                dt: cx.env.now(),
                has_time: true,
            },
            Out::Time(fsp),
        ),
        UnixTimestamp(fsp) => {
            let off = session_offset(cx);
            if args.is_empty() {
                return Ok(Value::Int(cx.env.now().to_unix() - off));
            }
            match real_date(&a(0)?) {
                // Before the epoch (or past MySQL's range) the answer is 0.
                Some(s) => {
                    let t = s.dt.to_unix() - off;
                    let in_range = (0..=32_536_771_199).contains(&t);
                    if fsp == 0 {
                        Value::Int(if in_range { t } else { 0 })
                    } else {
                        // The fraction cut to `fsp` digits, as MySQL's DECIMAL result.
                        let unit = 10i128.pow(6 - u32::from(fsp.min(6)));
                        let frac = i128::from(s.dt.micro) / unit;
                        let m = if in_range {
                            i128::from(t) * 10i128.pow(u32::from(fsp)) + frac
                        } else {
                            0
                        };
                        Value::Decimal(strata_types::Decimal::new(m, fsp))
                    }
                }
                None => Value::Null,
            }
        }
        FromUnixtime(fsp) => {
            let v = a(0)?;
            // A placeholder's digits are its value's, as a literal's are its type's.
            let fsp = fsp.unwrap_or(match &v {
                Value::Int(_) | Value::UInt(_) => 0,
                Value::Decimal(d) => d.scale.min(6),
                _ => 6,
            });
            // The argument in units of 10^-fsp seconds, rounded half away from zero.
            let scaled: Option<i128> = match &v {
                Value::Null => None,
                _ if fsp == 0 => num(&v).map(i128::from),
                Value::Decimal(d) => Some(d.rescale(fsp).mantissa()),
                Value::Int(i) => Some(i128::from(*i) * 10i128.pow(u32::from(fsp))),
                Value::UInt(u) => Some(i128::from(*u) * 10i128.pow(u32::from(fsp))),
                other => other
                    .to_f64()
                    .filter(|x| x.is_finite() && x.abs() < 1e15)
                    .map(|x| (x * 10f64.powi(i32::from(fsp))).round() as i128),
            };
            let Some(scaled) = scaled else {
                return Ok(Value::Null);
            };
            let unit = 10i128.pow(u32::from(fsp));
            let (secs, frac) = (scaled.div_euclid(unit), scaled.rem_euclid(unit));
            // MySQL's range ends at 3001-01-19 03:14:07 UTC.
            if !(0..=32_536_771_199).contains(&secs) {
                return Ok(Value::Null);
            }
            let micro = (frac * 10i128.pow(6 - u32::from(fsp))) as u32;
            let mut d = DateTime::from_unix(secs as i64 + session_offset(cx), micro);
            d.fsp = fsp;
            if args.len() < 2 {
                return Ok(Value::DateTime(d));
            }
            let fmt = a(1)?;
            if fmt.is_null() {
                return Ok(Value::Null);
            }
            datefmt::format(&d, None, &fmt.to_text()).map_or(Value::Null, |t| Value::str(&t))
        }
        UtcNow(_) | UtcDate | UtcTime(_) => {
            let now = cx.env.now();
            let utc = DateTime::from_unix(now.to_unix() - session_offset(cx), now.micro);
            let st = Stamp {
                dt: utc,
                has_time: true,
            };
            match f {
                UtcNow(fsp) => emit(st, Out::DateTime(fsp)),
                UtcTime(fsp) => emit(st, Out::Time(fsp)),
                _ => emit(st, Out::Date),
            }
        }
    })
}

/// A TIMEDIFF operand: (is a date-time, microseconds). Date-only strings are refused, as
/// MySQL reads them as odd times.
fn time_point(v: &Value, date_typed: bool) -> Result<Option<(bool, i128)>> {
    let at = |d: &DateTime| {
        temporal::dt_daynr(d) as i128 * 86_400_000_000
            + temporal::day_seconds(d) as i128 * 1_000_000
            + d.micro as i128
    };
    Ok(match v {
        Value::DateTime(d) => Some((true, at(d))),
        Value::Bytes(b) if !has_date_part(b) => {
            let s = String::from_utf8_lossy(b);
            temporal::parse_time(&s).map(|(t, _)| (false, t as i128))
        }
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            match temporal::parse_stamp(&s) {
                Some(st) if st.has_time => Some((true, at(&st.dt))),
                Some(_) if !date_typed => {
                    return Err(Error::NotSupported("TIMEDIFF of a date-only string".into()))
                }
                _ => temporal::parse_time(&s).map(|(t, _)| (false, t as i128)),
            }
        }
        other => temporal::time_of(other).map(|t| (false, t as i128)),
    })
}

/// Whether a string operand of TIMEDIFF/ADDTIME carries a date, as MySQL's
/// `str_to_time` decides: its first number is followed by a date separator, or it is a
/// run of 12 or more digits (`YYYYMMDDhhmmss`). `'-01:02:03'` and `'10:00'` are times.
fn has_date_part(b: &[u8]) -> bool {
    let t = b.trim_ascii_start();
    let digits = t.iter().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && (matches!(t.get(digits), Some(b'-' | b'/')) || digits >= 12)
}

fn add_interval(s: Stamp, n: &Value, unit: Unit, sub: bool, out: Out, cx: &EvalCtx) -> Value {
    let iv = match interval::interval_of(n, unit) {
        Ok(iv) => iv,
        Err(BadInterval::Null | BadInterval::TooManyFields) => return Value::Null,
    };
    match interval::add(&s.dt, &iv, sub) {
        Some(dt) => emit(
            Stamp {
                dt,
                has_time: s.has_time || !unit.is_date_only(),
            },
            out,
        ),
        None => {
            warn_overflow(cx);
            Value::Null
        }
    }
}

/// EXTRACT of a date-time; compound units concatenate their fields (`DAY_HOUR` of
/// the 2nd at 10:00 is 210).
pub fn extract(unit: Unit, d: &DateTime) -> i64 {
    let (y, mo, dd) = (d.year as i64, d.month as i64, d.day as i64);
    let (h, mi, s, us) = (
        d.hour as i64,
        d.minute as i64,
        d.second as i64,
        d.micro as i64,
    );
    match unit {
        Unit::Year => y,
        Unit::Quarter => (mo + 2) / 3,
        Unit::Month => mo,
        Unit::Week => calc_week(d, false, false, true).1,
        Unit::Day => dd,
        Unit::Hour => h,
        Unit::Minute => mi,
        Unit::Second => s,
        Unit::Microsecond => us,
        Unit::YearMonth => y * 100 + mo,
        Unit::DayHour => dd * 100 + h,
        Unit::DayMinute => (dd * 100 + h) * 100 + mi,
        Unit::DaySecond => ((dd * 100 + h) * 100 + mi) * 100 + s,
        Unit::DayMicrosecond => (((dd * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + us,
        Unit::HourMinute => h * 100 + mi,
        Unit::HourSecond => (h * 100 + mi) * 100 + s,
        Unit::HourMicrosecond => ((h * 100 + mi) * 100 + s) * 1_000_000 + us,
        Unit::MinuteSecond => mi * 100 + s,
        Unit::MinuteMicrosecond => (mi * 100 + s) * 1_000_000 + us,
        Unit::SecondMicrosecond => s * 1_000_000 + us,
    }
}

/// EXTRACT of a TIME: hours run past 23 (and the day fields count whole days); the
/// sign applies to the whole result.
fn extract_time(unit: Unit, t: i64) -> i64 {
    let a = t.unsigned_abs() as i64;
    let secs = a / 1_000_000;
    let (days, h, mi, s, us) = (
        secs / 86_400,
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60,
        a % 1_000_000,
    );
    let hours = secs / 3600;
    let v = match unit {
        Unit::Hour => hours,
        Unit::Day => days,
        Unit::DayHour => days * 100 + h,
        Unit::DayMinute => (days * 100 + h) * 100 + mi,
        Unit::DaySecond => ((days * 100 + h) * 100 + mi) * 100 + s,
        Unit::DayMicrosecond => (((days * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + us,
        Unit::HourMinute => hours * 100 + mi,
        Unit::HourSecond => (hours * 100 + mi) * 100 + s,
        Unit::HourMicrosecond => ((hours * 100 + mi) * 100 + s) * 1_000_000 + us,
        Unit::Minute => mi,
        Unit::Second => s,
        Unit::Microsecond => us,
        Unit::MinuteSecond => mi * 100 + s,
        Unit::MinuteMicrosecond => (mi * 100 + s) * 1_000_000 + us,
        Unit::SecondMicrosecond => s * 1_000_000 + us,
        // Date fields of a TIME are those of the current date in MySQL; the binder
        // refuses them.
        _ => 0,
    };
    if t < 0 {
        -v
    } else {
        v
    }
}

/// The session time zone's offset from UTC in seconds (`SYSTEM` is UTC; a named zone,
/// which sessions cannot set yet, counts as UTC).
fn session_offset(cx: &EvalCtx) -> i64 {
    cx.env
        .system_variable("time_zone", false)
        .ok()
        .and_then(|v| zone_offset(&v.to_text()))
        .unwrap_or(0)
}

/// `+hh:mm` / `-hh:mm` (MySQL's range, -13:59 ..= +14:00) or `SYSTEM` (the server's
/// zone, UTC) as seconds east of UTC; None for anything else (named zones).
pub fn zone_offset(z: &str) -> Option<i64> {
    let z = z.trim();
    if z.eq_ignore_ascii_case("system") {
        return Some(0);
    }
    let (sign, rest) = match z.as_bytes().first()? {
        b'+' => (1, &z[1..]),
        b'-' => (-1, &z[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':')?;
    if h.is_empty() || h.len() > 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    if m >= 60 {
        return None;
    }
    let secs = sign * (h * 3600 + m * 60);
    (-(13 * 3600 + 59 * 60)..=14 * 3600)
        .contains(&secs)
        .then_some(secs)
}

/// A constant compared with a YEAR column, as the column would store it: MySQL converts
/// such a constant into the column's type first, so `y = 21` finds 2021. An integer
/// 1–69 is 2001–2069 and 70–99 is 1970–1999 (0 stays 0, the zero year); a string of a
/// number below 100 likewise, with `'0'` and `'00'` 2000 (`'0000'` is the zero year).
/// None for anything the column would not store as such a year (left as it is).
pub fn year_constant(v: &Value) -> Option<Value> {
    let two_digit = |n: i64| match n {
        1..=69 => Some(Value::Int(2000 + n)),
        70..=99 => Some(Value::Int(1900 + n)),
        _ => None,
    };
    match v {
        Value::Int(n) => two_digit(*n),
        Value::UInt(n) => i64::try_from(*n).ok().and_then(two_digit),
        // A whole DECIMAL or DOUBLE (`2.0`) as its integer; a fraction is left alone.
        Value::Decimal(_) | Value::Double(_) => {
            let f = v.to_f64()?;
            (f.fract() == 0.0 && f.abs() < 100.0).then(|| two_digit(f as i64))?
        }
        Value::Bytes(b) => {
            let t = std::str::from_utf8(b).ok()?.trim();
            let n: i64 = t.parse().ok()?;
            match n {
                0 if t.len() < 4 => Some(Value::Int(2000)),
                _ => two_digit(n),
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> DateTime {
        DateTime::parse(s).unwrap()
    }

    #[test]
    fn weeks_in_every_mode() {
        // 2024-01-01 is a Monday; 2023-01-01 a Sunday; 2021-01-01 a Friday.
        let w = |s: &str, mode: i64| {
            let (mf, wy, fw) = week_mode(mode);
            calc_week(&d(s), mf, wy, fw).1
        };
        assert_eq!(w("2024-01-01", 0), 0);
        assert_eq!(w("2024-01-01", 1), 1);
        assert_eq!(w("2024-01-01", 3), 1);
        assert_eq!(w("2023-01-01", 0), 1);
        assert_eq!(w("2023-01-01", 3), 52);
        assert_eq!(w("2021-01-01", 3), 53);
        assert_eq!(w("2021-01-01", 2), 52);
        assert_eq!(w("2021-01-01", 1), 0);
        assert_eq!(w("2024-12-31", 3), 1);
        assert_eq!(w("2024-12-31", 1), 53);
        let (mf, _, fw) = week_mode(0);
        assert_eq!(calc_week(&d("2021-01-01"), mf, true, fw), (2020, 52));
    }

    #[test]
    fn extract_fields() {
        let t = d("2024-03-02 10:20:30.000040");
        assert_eq!(extract(Unit::DayHour, &t), 210);
        assert_eq!(extract(Unit::YearMonth, &t), 202403);
        assert_eq!(extract(Unit::SecondMicrosecond, &t), 30_000_040);
        assert_eq!(extract(Unit::Quarter, &t), 1);
        assert_eq!(extract_time(Unit::Hour, -(100 * 3_600_000_000)), -100);
        assert_eq!(extract_time(Unit::DayHour, 26 * 3_600_000_000), 102);
    }

    #[test]
    fn zone_offsets() {
        assert_eq!(zone_offset("+05:30"), Some(19_800));
        assert_eq!(zone_offset("-13:59"), Some(-(13 * 3600 + 59 * 60)));
        assert_eq!(zone_offset("+14:01"), None);
        assert_eq!(zone_offset("SYSTEM"), Some(0));
        assert_eq!(zone_offset("UTC"), None);
        assert_eq!(zone_offset("Europe/Paris"), None);
    }

    #[test]
    fn constants_read_as_a_year_column_stores_them() {
        let y = |v: Value| year_constant(&v);
        assert_eq!(y(Value::Int(21)), Some(Value::Int(2021)));
        assert_eq!(y(Value::Int(69)), Some(Value::Int(2069)));
        assert_eq!(y(Value::Int(70)), Some(Value::Int(1970)));
        assert_eq!(y(Value::UInt(99)), Some(Value::Int(1999)));
        // 0 is the zero year; 100 and up, or a negative number, are left as they are.
        assert_eq!(y(Value::Int(0)), None);
        assert_eq!(y(Value::Int(150)), None);
        assert_eq!(y(Value::Int(-1)), None);
        assert_eq!(y(Value::str("0")), Some(Value::Int(2000)));
        assert_eq!(y(Value::str("00")), Some(Value::Int(2000)));
        assert_eq!(y(Value::str("0000")), None);
        assert_eq!(y(Value::str(" 7 ")), Some(Value::Int(2007)));
        assert_eq!(y(Value::str("2021")), None);
        assert_eq!(y(Value::str("x")), None);
        assert_eq!(y(Value::Double(2.0)), Some(Value::Int(2002)));
        assert_eq!(y(Value::Double(2.5)), None);
    }
}
