//! DATETIME / TIMESTAMP / DATE values: a calendar date and time of day with microseconds,
//! parsed from and printed as MySQL's `YYYY-MM-DD hh:mm:ss[.ffffff]` text, and converted to
//! and from Unix time (UTC, the server's time zone) for NOW() and UNIX_TIMESTAMP().

use std::fmt;

/// A calendar date and time of day. `fsp` is how many fraction digits the value shows
/// (a DATETIME(3) column's values carry 3): it takes no part in comparing, ordering or
/// hashing, which follow the instant alone.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct DateTime {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micro: u32,
    /// Fraction digits shown; 0 shows six digits when `micro` is not zero (the form of
    /// a value with no declared precision); [`DATE_ONLY`] marks a DATE, shown without
    /// its (midnight) time in string context.
    #[serde(default)]
    pub fsp: u8,
}

/// The `fsp` of a DATE value: `CONCAT(date_col, '')`, `date_col LIKE '2020-05%'` and
/// `LENGTH(CURDATE())` see `YYYY-MM-DD`, as in MySQL, not the midnight date-time the
/// value is held as. Display only, like every `fsp`: comparisons ignore it.
pub const DATE_ONLY: u8 = 0x80;

impl DateTime {
    fn instant(&self) -> (u16, u8, u8, u8, u8, u8, u32) {
        (
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.micro,
        )
    }
}

impl DateTime {
    /// This value as a DATE: midnight, shown as `YYYY-MM-DD`.
    pub fn as_date(self) -> DateTime {
        DateTime {
            hour: 0,
            minute: 0,
            second: 0,
            micro: 0,
            fsp: DATE_ONLY,
            ..self
        }
    }

    /// A DATE value (marked, and at midnight).
    pub fn is_date_only(&self) -> bool {
        self.fsp == DATE_ONLY
            && self.hour == 0
            && self.minute == 0
            && self.second == 0
            && self.micro == 0
    }
}

impl PartialEq for DateTime {
    fn eq(&self, other: &Self) -> bool {
        self.instant() == other.instant()
    }
}
impl Eq for DateTime {}
impl PartialOrd for DateTime {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for DateTime {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.instant().cmp(&other.instant())
    }
}
impl std::hash::Hash for DateTime {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.instant().hash(state)
    }
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    // Howard Hinnant's algorithm: days since 1970-01-01 in the proleptic Gregorian calendar.
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        _ => 0,
    }
}

impl DateTime {
    /// The current time, UTC, with its microseconds (NOW(6) shows them; NOW() and a
    /// DATETIME(0) default cut them off with [`DateTime::truncate_to`]).
    pub fn now() -> DateTime {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        DateTime::from_unix(d.as_secs() as i64, d.subsec_micros())
    }

    /// The value with its fraction cut to `fsp` digits, showing `fsp` digits (how MySQL
    /// gives the clock at a precision: `NOW(3)`, `DEFAULT CURRENT_TIMESTAMP(3)`).
    pub fn truncate_to(&self, fsp: u8) -> DateTime {
        let unit = 10u32.pow(6 - fsp.min(6) as u32);
        DateTime {
            micro: self.micro / unit * unit,
            fsp: fsp.min(6),
            ..*self
        }
    }

    pub fn from_unix(secs: i64, micro: u32) -> DateTime {
        let days = secs.div_euclid(86400);
        let rem = secs.rem_euclid(86400);
        let (y, m, d) = civil_from_days(days);
        DateTime {
            year: y.clamp(0, 9999) as u16,
            month: m as u8,
            day: d as u8,
            hour: (rem / 3600) as u8,
            minute: (rem / 60 % 60) as u8,
            second: (rem % 60) as u8,
            micro,
            fsp: 0,
        }
    }

    pub fn to_unix(&self) -> i64 {
        days_from_civil(self.year as i64, self.month as i64, self.day as i64) * 86400
            + self.hour as i64 * 3600
            + self.minute as i64 * 60
            + self.second as i64
    }

    /// True for MySQL's zero date `0000-00-00 00:00:00`.
    pub fn is_zero(&self) -> bool {
        self.year == 0 && self.month == 0 && self.day == 0
    }

    /// Parses `YYYY-MM-DD`, `YYYY-MM-DD hh:mm:ss[.f]` (also with `T`), or the compact
    /// `YYYYMMDDhhmmss` form. Returns None for anything else or an impossible date.
    pub fn parse(text: &str) -> Option<DateTime> {
        let t = text.trim();
        let (date, time) = match t.find([' ', 'T']) {
            Some(i) => (&t[..i], t[i + 1..].trim()),
            None => (t, ""),
        };
        let mut dt = DateTime::default();
        if date.contains('-') {
            let mut parts = date.split('-');
            dt.year = parts.next()?.parse().ok()?;
            dt.month = parts.next()?.parse().ok()?;
            dt.day = parts.next()?.parse().ok()?;
            if parts.next().is_some() {
                return None;
            }
        } else if date.len() == 8 || date.len() == 14 {
            if !date.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            dt.year = date[0..4].parse().ok()?;
            dt.month = date[4..6].parse().ok()?;
            dt.day = date[6..8].parse().ok()?;
            if date.len() == 14 {
                dt.hour = date[8..10].parse().ok()?;
                dt.minute = date[10..12].parse().ok()?;
                dt.second = date[12..14].parse().ok()?;
            }
        } else {
            return None;
        }
        if !time.is_empty() {
            let (hms, frac) = match time.find('.') {
                Some(i) => (&time[..i], &time[i + 1..]),
                None => (time, ""),
            };
            let mut parts = hms.split(':');
            dt.hour = parts.next()?.parse().ok()?;
            dt.minute = parts.next().unwrap_or("0").parse().ok()?;
            dt.second = parts.next().unwrap_or("0").parse().ok()?;
            if !frac.is_empty() {
                if frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let v: u32 = frac.parse().ok()?;
                dt.micro = v * 10u32.pow(6 - frac.len() as u32);
            }
        }
        dt.is_valid().then_some(dt)
    }

    /// A number read as a date-time the way MySQL converts a numeric constant it compares
    /// with a DATE or DATETIME: YYMMDD, YYYYMMDD, YYMMDDhhmmss or YYYYMMDDhhmmss (two-digit
    /// years 70–99 are 19xx, 00–69 20xx); 0 is the zero date. None for a number in the
    /// gaps between those forms or an impossible date.
    pub fn from_number(n: i64) -> Option<DateTime> {
        if n == 0 {
            return Some(DateTime::default());
        }
        let (date, time) = match n {
            101..=691_231 => (20_000_000 + n, 0),
            700_101..=991_231 => (19_000_000 + n, 0),
            10_000_101..=99_991_231 => (n, 0),
            101_000_000..=691_231_235_959 => (20_000_000 + n / 1_000_000, n % 1_000_000),
            700_101_000_000..=991_231_235_959 => (19_000_000 + n / 1_000_000, n % 1_000_000),
            10_000_101_000_000..=99_991_231_235_959 => (n / 1_000_000, n % 1_000_000),
            _ => return None,
        };
        let dt = DateTime {
            year: (date / 10_000) as u16,
            month: (date / 100 % 100) as u8,
            day: (date % 100) as u8,
            hour: (time / 10_000) as u8,
            minute: (time / 100 % 100) as u8,
            second: (time % 100) as u8,
            micro: 0,
            fsp: 0,
        };
        dt.is_valid().then_some(dt)
    }

    pub fn is_valid(&self) -> bool {
        if self.is_zero() {
            return self.hour < 24 && self.minute < 60 && self.second < 60;
        }
        self.month >= 1
            && self.month <= 12
            && self.day >= 1
            && self.day <= days_in_month(self.year, self.month)
            && self.hour < 24
            && self.minute < 60
            && self.second < 60
            && self.micro < 1_000_000
    }

    /// The value rounded to `fsp` fraction digits as MySQL stores it into a DATETIME(fsp)
    /// or TIMESTAMP(fsp) column: half up, carrying into the seconds, minutes, … and the
    /// next day. The result shows `fsp` digits. None when the carry passes 9999-12-31.
    pub fn round_to(&self, fsp: u8) -> Option<DateTime> {
        let fsp = fsp.min(6);
        let unit = 10u32.pow(6 - fsp as u32);
        let mut micro = (self.micro + unit / 2) / unit * unit;
        let mut out = *self;
        out.fsp = fsp;
        if micro >= 1_000_000 {
            micro -= 1_000_000;
            if self.is_zero() {
                // The zero date has no next second to carry into: MySQL keeps it.
                out.micro = 0;
                return Some(out);
            }
            let last = (9999, 12, 31, 23, 59, 59);
            if (
                self.year,
                self.month,
                self.day,
                self.hour,
                self.minute,
                self.second,
            ) == last
            {
                return None;
            }
            return Some(DateTime {
                fsp,
                ..DateTime::from_unix(self.to_unix() + 1, micro)
            });
        }
        out.micro = micro;
        Some(out)
    }

    /// The date part only, as `YYYY-MM-DD`.
    pub fn date_string(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// Packs into a u64 that orders like the value (used by key encoding and storage).
    pub fn pack(&self) -> u64 {
        let ymd = (self.year as u64 * 13 + self.month as u64) << 5 | self.day as u64;
        let hms = (self.hour as u64) << 12 | (self.minute as u64) << 6 | self.second as u64;
        ((ymd << 17 | hms) << 24) | self.micro as u64
    }

    pub fn unpack(v: u64) -> DateTime {
        let micro = (v & 0xFF_FFFF) as u32;
        let rest = v >> 24;
        let hms = rest & 0x1_FFFF;
        let ymd = rest >> 17;
        let ym = ymd >> 5;
        DateTime {
            year: (ym / 13) as u16,
            month: (ym % 13) as u8,
            day: (ymd & 31) as u8,
            hour: (hms >> 12) as u8,
            minute: (hms >> 6 & 63) as u8,
            second: (hms & 63) as u8,
            micro,
            fsp: 0,
        }
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_date_only() {
            return write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day);
        }
        write!(
            f,
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )?;
        if self.fsp == DATE_ONLY {
            // A DATE marker on a value that has a time after all (arithmetic kept the
            // marker): shown as the date-time it is.
        } else if self.fsp > 0 {
            let frac = format!("{:06}", self.micro);
            write!(f, ".{}", &frac[..self.fsp.min(6) as usize])?;
        } else if self.micro != 0 {
            write!(f, ".{:06}", self.micro)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_read_as_mysql_reads_date_constants() {
        let d = |n| DateTime::from_number(n).map(|d| d.to_string());
        assert_eq!(d(20240101).as_deref(), Some("2024-01-01 00:00:00"));
        assert_eq!(d(231231).as_deref(), Some("2023-12-31 00:00:00"));
        assert_eq!(d(991231).as_deref(), Some("1999-12-31 00:00:00"));
        assert_eq!(d(20231231101112).as_deref(), Some("2023-12-31 10:11:12"));
        assert_eq!(d(231231101112).as_deref(), Some("2023-12-31 10:11:12"));
        assert_eq!(d(0).as_deref(), Some("0000-00-00 00:00:00"));
        assert_eq!(d(5), None);
        assert_eq!(d(20231301), None);
        assert_eq!(d(800000), None);
        assert_eq!(d(-20240101), None);
    }

    use super::*;

    #[test]
    fn parse_print_and_pack_round_trip() {
        let d = DateTime::parse("2006-05-26 13:45:07").unwrap();
        assert_eq!(d.to_string(), "2006-05-26 13:45:07");
        assert_eq!(DateTime::unpack(d.pack()), d);
        assert_eq!(DateTime::from_unix(d.to_unix(), 0), d);
        assert!(DateTime::parse("2006-02-30").is_none());
        assert!(DateTime::parse("garbage").is_none());
        let a = DateTime::parse("1999-12-31 23:59:59").unwrap();
        assert!(a.pack() < d.pack());
    }

    #[test]
    fn rounding_to_fsp_carries() {
        let d = DateTime::parse("2020-12-31 23:59:59.999999").unwrap();
        assert_eq!(
            d.round_to(6).unwrap().to_string(),
            "2020-12-31 23:59:59.999999"
        );
        assert_eq!(
            d.round_to(5).unwrap().to_string(),
            "2021-01-01 00:00:00.00000"
        );
        assert_eq!(d.round_to(0).unwrap().to_string(), "2021-01-01 00:00:00");
        let d = DateTime::parse("2020-01-01 10:00:00.123456").unwrap();
        assert_eq!(
            d.round_to(3).unwrap().to_string(),
            "2020-01-01 10:00:00.123"
        );
        assert_eq!(
            d.round_to(4).unwrap().to_string(),
            "2020-01-01 10:00:00.1235"
        );
        assert_eq!(d.round_to(0).unwrap().to_string(), "2020-01-01 10:00:00");
        let h = DateTime::parse("2020-01-01 10:00:00.5").unwrap();
        assert_eq!(h.round_to(0).unwrap().to_string(), "2020-01-01 10:00:01");
        let z = DateTime::parse("2020-01-01 10:00:00").unwrap();
        assert_eq!(z.round_to(2).unwrap().to_string(), "2020-01-01 10:00:00.00");
        let last = DateTime::parse("9999-12-31 23:59:59.9").unwrap();
        assert!(last.round_to(0).is_none());
        // fsp is display only: equal instants compare equal.
        assert_eq!(z, z.round_to(6).unwrap());
    }

    #[test]
    fn unix_epoch() {
        assert_eq!(DateTime::from_unix(0, 0).to_string(), "1970-01-01 00:00:00");
    }
}
