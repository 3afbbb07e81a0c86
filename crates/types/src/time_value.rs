//! TIME values: a signed duration of at most 838:59:59.999999 either way, held as a
//! count of microseconds. Inside the executor a TIME is its canonical text
//! (`[-]hh:mm:ss[.f…]`, hours past 23 allowed, `fsp` fraction digits); the engines store
//! the microseconds (docs/format/btree.md, heap.md) and key them in order (`keycode`).
//! This module is what both sides share: the range, printing, reading the canonical text
//! back, and rounding to a column's fraction digits.

/// 838:59:59 in microseconds: the largest TIME MySQL holds (and, negated, the smallest).
pub const MAX_MICROS: i64 = (838 * 3600 + 59 * 60 + 59) * 1_000_000;

/// `[-]hh:mm:ss` with `fsp` fraction digits (hours take as many digits as they need).
pub fn format(micros: i64, fsp: u8) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let a = micros.unsigned_abs();
    let secs = a / 1_000_000;
    let mut s = format!(
        "{sign}{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if fsp > 0 {
        let frac = format!("{:06}", a % 1_000_000);
        s.push('.');
        s.push_str(&frac[..fsp.min(6) as usize]);
    }
    s
}

/// Reads the canonical text [`format`] writes (and only that: the SQL layer converts
/// every other form before a value reaches a TIME column). None if malformed.
pub fn parse_canonical(text: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(text).ok()?;
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (hms, frac) = match s.split_once('.') {
        Some((a, f)) => (a, f),
        None => (s, ""),
    };
    let mut parts = hms.split(':');
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let (h, m, sec) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !digits(h) || !digits(m) || !digits(sec) || frac.len() > 6 {
        return None;
    }
    if !frac.is_empty() && !digits(frac) {
        return None;
    }
    let (h, m, sec): (i64, i64, i64) = (h.parse().ok()?, m.parse().ok()?, sec.parse().ok()?);
    if m >= 60 || sec >= 60 {
        return None;
    }
    let mut micro = 0i64;
    for (i, c) in frac.bytes().enumerate() {
        micro += (c - b'0') as i64 * 10i64.pow(5 - i as u32);
    }
    let total = (h.checked_mul(3600)? + m * 60 + sec).checked_mul(1_000_000)? + micro;
    if total > MAX_MICROS + 999_999 {
        return None;
    }
    Some(if neg { -total } else { total })
}

/// `micros` rounded to `fsp` fraction digits, half away from zero (as MySQL rounds a
/// TIME's fraction when storing it; the sign does not change which way .5 goes).
pub fn round(micros: i64, fsp: u8) -> i64 {
    let unit = 10i64.pow(6 - fsp.min(6) as u32);
    let a = micros.unsigned_abs() as i64;
    let r = (a + unit / 2) / unit * unit;
    if micros < 0 {
        -r
    } else {
        r
    }
}

/// The value clamped into TIME's range; the flag says it was out of range.
pub fn clamp(micros: i64) -> (i64, bool) {
    let c = micros.clamp(-MAX_MICROS, MAX_MICROS);
    (c, c != micros)
}

/// Eight bytes that sort as the durations do (the sign bit flipped, big-endian).
pub fn key_bytes(micros: i64) -> [u8; 8] {
    ((micros as u64) ^ (1 << 63)).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_and_parse_round_trip() {
        for (m, fsp, text) in [
            (0, 0, "00:00:00"),
            (45_296_500_000, 1, "12:34:56.5"),
            (-3_723_000_000, 0, "-01:02:03"),
            (MAX_MICROS, 0, "838:59:59"),
            (-MAX_MICROS, 6, "-838:59:59.000000"),
            (-500_000, 3, "-00:00:00.500"),
        ] {
            assert_eq!(format(m, fsp), text);
            assert_eq!(parse_canonical(text.as_bytes()), Some(m), "{text}");
        }
        for bad in [
            "",
            "1:2",
            "10:60:00",
            "10:00:00.1234567",
            "x",
            "-",
            "1:00:0a",
        ] {
            assert_eq!(parse_canonical(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(round(1_500_000, 0), 2_000_000);
        assert_eq!(round(-1_500_000, 0), -2_000_000);
        assert_eq!(round(1_499_999, 0), 1_000_000);
        assert_eq!(round(123_456, 3), 123_000);
        assert_eq!(round(123_500, 3), 124_000);
        assert_eq!(round(59_999_999, 5), 60_000_000);
        assert_eq!(round(7, 6), 7);
        assert_eq!(clamp(MAX_MICROS + 1), (MAX_MICROS, true));
        assert_eq!(clamp(-5), (-5, false));
    }

    #[test]
    fn key_bytes_sort_as_durations() {
        let mut v = [
            -MAX_MICROS,
            -1,
            0,
            1,
            3_600_000_000,
            360_000_000_000,
            MAX_MICROS,
        ];
        let mut keys: Vec<[u8; 8]> = v.iter().map(|m| key_bytes(*m)).collect();
        keys.sort();
        v.sort();
        let sorted: Vec<[u8; 8]> = v.iter().map(|m| key_bytes(*m)).collect();
        assert_eq!(keys, sorted);
        assert!(key_bytes(-1) < key_bytes(0));
        assert!(key_bytes(99 * 3_600_000_000) < key_bytes(100 * 3_600_000_000));
    }
}
