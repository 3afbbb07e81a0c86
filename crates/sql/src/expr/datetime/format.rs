//! MySQL's `%` format strings: writing a date-time or TIME (`DATE_FORMAT`,
//! `TIME_FORMAT`, `FROM_UNIXTIME(n, fmt)`) and reading one back (`STR_TO_DATE`), and the
//! type STR_TO_DATE gives its result from its (constant) format.

use crate::expr::datetime::functions::{self as datefns, MONTH_NAMES};
use crate::expr::datetime::temporal;
use strata_types::{DateTime, Value};

/// STR_TO_DATE's result type, from the specifiers its format holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    Date,
    DateTime(u8),
    Time(u8),
}

/// What STR_TO_DATE returns for a format (None when it holds a specifier Strata does
/// not read: the binder refuses those with 1235).
pub fn parsed_kind(fmt: &str) -> Option<Parsed> {
    let (mut date, mut time, mut frac) = (false, false, false);
    let mut it = fmt.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            continue;
        }
        match it.next() {
            Some('a' | 'b' | 'c' | 'D' | 'd' | 'e' | 'j' | 'M' | 'm' | 'W' | 'Y' | 'y') => {
                date = true
            }
            Some('f') => {
                time = true;
                frac = true
            }
            Some('H' | 'h' | 'I' | 'i' | 'k' | 'l' | 'p' | 'r' | 'S' | 's' | 'T') => time = true,
            Some('U' | 'u' | 'V' | 'v' | 'X' | 'x' | 'w') => return None,
            _ => {}
        }
    }
    let fsp = if frac { 6 } else { 0 };
    Some(match (date, time) {
        (true, true) => Parsed::DateTime(fsp),
        (false, true) => Parsed::Time(fsp),
        _ => Parsed::Date,
    })
}

fn suffix(day: u8) -> &'static str {
    match (day % 10, day / 10 % 10) {
        (_, 1) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// Formats `d` (or, with `time`, a TIME in microseconds: hours may pass 23 and date
/// specifiers give None) by a MySQL format string. None where MySQL returns NULL (a
/// month or weekday name of a zero date).
pub fn format(d: &DateTime, time: Option<i64>, fmt: &str) -> Option<String> {
    let mut out = String::with_capacity(fmt.len() + 8);
    let (hours, minute, second, micro) = match time {
        Some(t) => {
            if t < 0 {
                out.push('-');
            }
            let a = t.unsigned_abs() as i64;
            let s = a / 1_000_000;
            (s / 3600, s / 60 % 60, s % 60, a % 1_000_000)
        }
        None => (
            d.hour as i64,
            d.minute as i64,
            d.second as i64,
            d.micro as i64,
        ),
    };
    let zero_date = d.year == 0 && d.month == 0;
    let h12 = if hours % 12 == 0 { 12 } else { hours % 12 };
    let ampm = if hours % 24 < 12 { "AM" } else { "PM" };
    let week = |monday_first: bool, week_year: bool, first_weekday: bool| {
        datefns::calc_week(d, monday_first, week_year, first_weekday)
    };
    let mut it = fmt.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = it.next() else {
            break;
        };
        let is_date = matches!(
            spec,
            'a' | 'b'
                | 'c'
                | 'D'
                | 'd'
                | 'e'
                | 'j'
                | 'M'
                | 'm'
                | 'U'
                | 'u'
                | 'V'
                | 'v'
                | 'W'
                | 'w'
                | 'X'
                | 'x'
                | 'Y'
                | 'y'
        );
        if is_date && time.is_some() {
            return None;
        }
        let wd = || temporal::weekday(temporal::dt_daynr(d));
        match spec {
            'a' | 'W' if zero_date => return None,
            'a' => out.push_str(&datefns::day_name(wd())[..3]),
            'W' => out.push_str(datefns::day_name(wd())),
            'b' | 'M' if d.month == 0 => return None,
            'b' => out.push_str(&MONTH_NAMES[d.month as usize - 1][..3]),
            'M' => out.push_str(MONTH_NAMES[d.month as usize - 1]),
            'c' => out.push_str(&d.month.to_string()),
            'm' => out.push_str(&format!("{:02}", d.month)),
            'D' => out.push_str(&format!("{}{}", d.day, suffix(d.day))),
            'd' => out.push_str(&format!("{:02}", d.day)),
            'e' => out.push_str(&d.day.to_string()),
            'j' => {
                let doy = if d.month == 0 {
                    0
                } else {
                    temporal::dt_daynr(d) - temporal::daynr(d.year as i64, 1, 1) + 1
                };
                out.push_str(&format!("{doy:03}"))
            }
            'Y' => out.push_str(&format!("{:04}", d.year)),
            'y' => out.push_str(&format!("{:02}", d.year % 100)),
            'U' | 'u' | 'V' | 'v' | 'X' | 'x' | 'w' if zero_date => return None,
            'U' => out.push_str(&format!("{:02}", week(false, false, true).1)),
            'u' => out.push_str(&format!("{:02}", week(true, false, false).1)),
            'V' => out.push_str(&format!("{:02}", week(false, true, true).1)),
            'v' => out.push_str(&format!("{:02}", week(true, true, false).1)),
            'X' => out.push_str(&format!("{:04}", week(false, true, true).0)),
            'x' => out.push_str(&format!("{:04}", week(true, true, false).0)),
            'w' => out.push_str(&((wd() + 1) % 7).to_string()),
            'H' => out.push_str(&format!("{hours:02}")),
            'k' => out.push_str(&hours.to_string()),
            'h' | 'I' => out.push_str(&format!("{h12:02}")),
            'l' => out.push_str(&h12.to_string()),
            'i' => out.push_str(&format!("{minute:02}")),
            'S' | 's' => out.push_str(&format!("{second:02}")),
            'f' => out.push_str(&format!("{micro:06}")),
            'p' => out.push_str(ampm),
            'r' => out.push_str(&format!("{h12:02}:{minute:02}:{second:02} {ampm}")),
            'T' => out.push_str(&format!("{hours:02}:{minute:02}:{second:02}")),
            other => out.push(other),
        }
    }
    Some(out)
}

/// The fields STR_TO_DATE read.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fields {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub micro: i64,
    pub yearday: i64,
}

fn year_2000(y: i64) -> i64 {
    if y < 70 {
        y + 2000
    } else if y < 100 {
        y + 1900
    } else {
        y
    }
}

/// Reads `text` by `fmt` as MySQL's STR_TO_DATE does: spaces in the format are skipped,
/// spaces before each field are skipped, numbers take at most their field's digits,
/// names match case-insensitively. None when the text does not fit.
pub fn parse(text: &str, fmt: &str) -> Option<Fields> {
    let v = text.as_bytes();
    let mut i = 0;
    let mut f = Fields::default();
    let mut pm: Option<bool> = None;
    let mut twelve = false;
    let fb = fmt.as_bytes();
    let mut k = 0;
    let skip_ws = |i: &mut usize| {
        while *i < v.len() && v[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let digits = |i: &mut usize, max: usize| -> Option<(i64, usize)> {
        let start = *i;
        while *i < v.len() && *i - start < max && v[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == start {
            return None;
        }
        std::str::from_utf8(&v[start..*i])
            .ok()?
            .parse()
            .ok()
            .map(|n| (n, *i - start))
    };
    let name = |i: &mut usize, names: &[&str], abbr: bool| -> Option<i64> {
        for (n, full) in names.iter().enumerate() {
            let want = if abbr { &full[..3] } else { full };
            let end = *i + want.len();
            if end <= v.len() && v[*i..end].eq_ignore_ascii_case(want.as_bytes()) {
                *i = end;
                return Some(n as i64);
            }
        }
        None
    };
    const DAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    while k < fb.len() && i <= v.len() {
        let c = fb[k];
        if c == b'%' && k + 1 < fb.len() {
            let spec = fb[k + 1];
            k += 2;
            skip_ws(&mut i);
            match spec {
                b'Y' => {
                    let (n, len) = digits(&mut i, 4)?;
                    f.year = if len <= 2 { year_2000(n) } else { n };
                }
                b'y' => f.year = year_2000(digits(&mut i, 2)?.0),
                b'm' | b'c' => f.month = digits(&mut i, 2)?.0,
                b'd' | b'e' => f.day = digits(&mut i, 2)?.0,
                b'D' => {
                    f.day = digits(&mut i, 2)?.0;
                    i = (i + 2).min(v.len());
                }
                b'j' => f.yearday = digits(&mut i, 3)?.0,
                b'H' | b'k' => f.hour = digits(&mut i, 2)?.0,
                b'h' | b'I' | b'l' => {
                    f.hour = digits(&mut i, 2)?.0;
                    twelve = true;
                }
                b'i' => f.minute = digits(&mut i, 2)?.0,
                b's' | b'S' => f.second = digits(&mut i, 2)?.0,
                b'f' => {
                    let (n, len) = digits(&mut i, 6)?;
                    f.micro = n * 10i64.pow(6 - len as u32);
                }
                b'p' => {
                    if i + 2 > v.len() {
                        return None;
                    }
                    let w = &v[i..i + 2];
                    pm = Some(if w.eq_ignore_ascii_case(b"PM") {
                        true
                    } else if w.eq_ignore_ascii_case(b"AM") {
                        false
                    } else {
                        return None;
                    });
                    i += 2;
                }
                b'M' => f.month = name(&mut i, &MONTH_NAMES, false)? + 1,
                b'b' => f.month = name(&mut i, &MONTH_NAMES, true)? + 1,
                b'W' => {
                    name(&mut i, &DAYS, false)?;
                }
                b'a' => {
                    name(&mut i, &DAYS, true)?;
                }
                b'T' | b'r' => {
                    f.hour = digits(&mut i, 2)?.0;
                    for slot in [&mut f.minute, &mut f.second] {
                        if v.get(i) != Some(&b':') {
                            return None;
                        }
                        i += 1;
                        *slot = digits(&mut i, 2)?.0;
                    }
                    if spec == b'r' {
                        twelve = true;
                        skip_ws(&mut i);
                        if i + 2 > v.len() {
                            return None;
                        }
                        let w = &v[i..i + 2];
                        pm = Some(w.eq_ignore_ascii_case(b"PM"));
                        if !w.eq_ignore_ascii_case(b"PM") && !w.eq_ignore_ascii_case(b"AM") {
                            return None;
                        }
                        i += 2;
                    }
                }
                b'%' => {
                    if v.get(i) != Some(&b'%') {
                        return None;
                    }
                    i += 1;
                }
                _ => return None,
            }
            continue;
        }
        k += 1;
        if c.is_ascii_whitespace() {
            continue;
        }
        if v.get(i) != Some(&c) {
            return None;
        }
        i += 1;
    }
    if let Some(pm) = pm {
        if !twelve || f.hour > 12 || f.hour < 1 {
            return None;
        }
        f.hour = f.hour % 12 + if pm { 12 } else { 0 };
    }
    if f.yearday > 0 {
        let (y, m, d) = temporal::from_daynr(temporal::daynr(f.year, 1, 1) + f.yearday - 1)?;
        if y != f.year {
            return None;
        }
        (f.month, f.day) = (m, d);
    }
    if f.hour > 23 || f.minute > 59 || f.second > 59 {
        return None;
    }
    Some(f)
}

/// STR_TO_DATE's value for its bound type: NULL (None), as under MySQL 8's default
/// NO_ZERO_DATE / NO_ZERO_IN_DATE, for zero date parts. A day past the month's end
/// (`2004-04-31`) is returned as read, as MySQL's STR_TO_DATE does.
pub fn parsed_value(f: &Fields, kind: Parsed) -> Option<Value> {
    if let Parsed::Time(fsp) = kind {
        let t = ((f.hour * 60 + f.minute) * 60 + f.second) * 1_000_000 + f.micro;
        return Some(Value::str(&temporal::format_time(t, fsp)));
    }
    if f.month < 1 || f.month > 12 || f.day < 1 || f.day > 31 || f.year > 9999 {
        return None;
    }
    let dt = DateTime {
        year: f.year as u16,
        month: f.month as u8,
        day: f.day as u8,
        hour: f.hour as u8,
        minute: f.minute as u8,
        second: f.second as u8,
        micro: f.micro as u32,
        fsp: 0,
    };
    let out = match kind {
        Parsed::Date => datefns::Out::Date,
        Parsed::DateTime(fsp) => datefns::Out::DateTime(fsp),
        Parsed::Time(fsp) => datefns::Out::Time(fsp),
    };
    Some(datefns::emit(temporal::Stamp { dt, has_time: true }, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let d = DateTime::parse("2024-03-02 15:04:05.000007").unwrap();
        assert_eq!(
            format(&d, None, "%W %M %D %Y %j %a %b %e %c").unwrap(),
            "Saturday March 2nd 2024 062 Sat Mar 2 3"
        );
        assert_eq!(
            format(&d, None, "%H:%i:%s %h %l %p %r %T %f %%").unwrap(),
            "15:04:05 03 3 PM 03:04:05 PM 15:04:05 000007 %"
        );
        assert_eq!(format(&DateTime::default(), None, "%M"), None);
        assert_eq!(
            format(&DateTime::default(), Some(-3_600_000_000 * 100), "%H:%i").unwrap(),
            "-100:00"
        );
        assert_eq!(format(&DateTime::default(), Some(0), "%Y"), None);
    }

    #[test]
    fn parses() {
        let f = parse("01,5,2013", "%d,%m,%Y").unwrap();
        assert_eq!((f.year, f.month, f.day), (2013, 5, 1));
        let f = parse("May 1, 2013 10:05 PM", "%M %d, %Y %h:%i %p").unwrap();
        assert_eq!((f.month, f.hour, f.minute), (5, 22, 5));
        assert!(parse("2013-02-xx", "%Y-%m-%d").is_none());
        assert!(parsed_value(&parse("2013-00-10", "%Y-%m-%d").unwrap(), Parsed::Date).is_none());
        assert!(parsed_value(&parse("2013-02-30", "%Y-%m-%d").unwrap(), Parsed::Date).is_some());
        assert_eq!(
            parsed_kind("%Y-%m-%d %H:%i:%s.%f"),
            Some(Parsed::DateTime(6))
        );
        assert_eq!(parsed_kind("%H:%i"), Some(Parsed::Time(0)));
        assert_eq!(parsed_kind("%X %V"), None);
    }
}
