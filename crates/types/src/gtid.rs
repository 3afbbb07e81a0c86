//! MySQL-style global transaction ids and sets of them, the pure value type: a server
//! uuid and a transaction number (GNO), written `3e11fa47-71ca-11e1-9e33-c80aa9429562:23`,
//! and sets kept as sorted, disjoint, non-adjacent half-open intervals per uuid. The
//! binary log keeps `gtid_executed` / `gtid_purged` in it (its PREVIOUS_GTIDS encoding
//! lives with the log, `binlog/src/gtid.rs`); the SQL layer's GTID_SUBTRACT, GTID_SUBSET
//! and WAIT_FOR_EXECUTED_GTID_SET read and print it. It lives here, below both, so the
//! SQL layer need not import the binary log.
//!
//! The text form is read as MySQL 8.0 reads it (`Gtid_set::add_gtid_text`), quirks
//! included, because a client's text that MySQL accepts must mean the same set here:
//! white space around every part, empty entries between commas, a uuid with no
//! interval (an empty entry), GNOs in C's `strtoll` base-0 notation (`0x1F`, `017`), an
//! interval whose end is below its start adding nothing, an interval end with no digits
//! read as 0. Printing is MySQL's: uuids in byte order, lower case, `uuid:1-5:7`, uuids
//! separated by `",\n"`.

use std::collections::BTreeMap;

/// A server uuid as its 16 bytes.
pub type Uuid = [u8; 16];

/// The largest GNO plus one: MySQL refuses `i64::MAX` itself (`GNO_END`).
const GNO_END: u64 = i64::MAX as u64;

/// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex, either case, dashes exactly there).
pub fn parse_uuid(s: &str) -> Option<Uuid> {
    let b = s.as_bytes();
    if b.len() != 36 {
        return None;
    }
    uuid_at(b)
}

/// The uuid at the start of `b` (its first 36 bytes), as MySQL's `Uuid::parse` reads it.
fn uuid_at(b: &[u8]) -> Option<Uuid> {
    let b = b.get(..36)?;
    let mut out = [0u8; 16];
    let mut at = 0;
    for (i, c) in b.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if *c != b'-' {
                return None;
            }
            continue;
        }
        let v = (*c as char).to_digit(16)? as u8;
        out[at / 2] |= if at % 2 == 0 { v << 4 } else { v };
        at += 1;
    }
    Some(out)
}

/// The uuid's text form, lower-case as MySQL prints it.
pub fn uuid_text(u: &Uuid) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// A GTID set's text that does not parse: MySQL's error 1772 shows `text`, the argument
/// from its first non-blank character.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    pub text: String,
}

/// A set of GTIDs: per uuid, disjoint sorted intervals `[start, end)`, never two that
/// touch (they are merged), never an empty list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GtidSet {
    sets: BTreeMap<Uuid, Vec<(u64, u64)>>,
}

impl GtidSet {
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// Adds `uuid:gno`.
    pub fn add(&mut self, uuid: &Uuid, gno: u64) {
        self.add_interval(uuid, gno, gno.saturating_add(1));
    }

    /// Adds `[start, end)` for `uuid`, merging it with the intervals it overlaps or
    /// touches; an empty interval adds nothing.
    pub fn add_interval(&mut self, uuid: &Uuid, start: u64, end: u64) {
        if end <= start {
            return;
        }
        let v = self.sets.entry(*uuid).or_default();
        // The first interval that ends at or after `start` (it may touch or overlap).
        let first = v.partition_point(|&(_, e)| e < start);
        // One past the last interval that starts at or before `end`.
        let last = v.partition_point(|&(s, _)| s <= end);
        if first == last {
            v.insert(first, (start, end));
        } else {
            let s = v[first].0.min(start);
            let e = v[last - 1].1.max(end);
            v.splice(first..last, std::iter::once((s, e)));
        }
    }

    /// Every GTID of `other` added to this set.
    pub fn union(&mut self, other: &GtidSet) {
        for (u, ivs) in &other.sets {
            for &(s, e) in ivs {
                self.add_interval(u, s, e);
            }
        }
    }

    /// Every GTID of `other` taken out of this set (GTID_SUBTRACT).
    pub fn subtract(&mut self, other: &GtidSet) {
        for (u, minus) in &other.sets {
            let Some(mine) = self.sets.get_mut(u) else {
                continue;
            };
            let mut out = Vec::with_capacity(mine.len());
            let mut j = 0;
            for &(s, e) in mine.iter() {
                let mut s = s;
                // Skip what ends before this interval starts.
                while j < minus.len() && minus[j].1 <= s {
                    j += 1;
                }
                let mut k = j;
                while s < e && k < minus.len() && minus[k].0 < e {
                    let (ms, me) = minus[k];
                    if ms > s {
                        out.push((s, ms));
                    }
                    s = s.max(me);
                    k += 1;
                }
                if s < e {
                    out.push((s, e));
                }
            }
            if out.is_empty() {
                self.sets.remove(u);
            } else {
                *mine = out;
            }
        }
    }

    /// Whether every GTID of this set is in `other` (GTID_SUBSET).
    pub fn is_subset(&self, other: &GtidSet) -> bool {
        self.sets.iter().all(|(u, ivs)| {
            let Some(theirs) = other.sets.get(u) else {
                return false;
            };
            // Intervals never touch, so each of ours must lie inside one of theirs.
            ivs.iter().all(|&(s, e)| {
                let i = theirs.partition_point(|&(_, te)| te <= s);
                theirs.get(i).is_some_and(|&(ts, te)| ts <= s && e <= te)
            })
        })
    }

    pub fn contains(&self, uuid: &Uuid, gno: u64) -> bool {
        self.sets.get(uuid).is_some_and(|v| {
            let i = v.partition_point(|&(_, e)| e <= gno);
            v.get(i).is_some_and(|&(s, _)| s <= gno)
        })
    }

    /// The largest GNO of `uuid` in the set (0 for none).
    pub fn last_gno(&self, uuid: &Uuid) -> u64 {
        self.sets
            .get(uuid)
            .and_then(|v| v.last())
            .map_or(0, |&(_, e)| e - 1)
    }

    /// Each uuid with its intervals `[start, end)`, in uuid order.
    pub fn intervals(&self) -> impl Iterator<Item = (&Uuid, &[(u64, u64)])> {
        self.sets.iter().map(|(u, v)| (u, v.as_slice()))
    }

    /// Reads MySQL's text form (`uuid:1-5:7, uuid2:3`; '' is the empty set); None when
    /// it is malformed.
    pub fn parse(text: &str) -> Option<GtidSet> {
        GtidSet::parse_text(text.as_bytes()).ok()
    }

    /// Reads MySQL's text form from bytes, as MySQL 8.0 does (see the module comment);
    /// the text ends at its first NUL byte, as a C string would.
    pub fn parse_text(text: &[u8]) -> Result<GtidSet, Malformed> {
        let text = match text.iter().position(|b| *b == 0) {
            Some(n) => &text[..n],
            None => text,
        };
        let first = skip_space(text, 0);
        let malformed = || Malformed {
            text: String::from_utf8_lossy(&text[first..]).into_owned(),
        };
        let at = |i: usize| text.get(i).copied().unwrap_or(0);
        let mut set = GtidSet::default();
        let mut i = first;
        loop {
            // Empty entries between commas are allowed.
            while at(i) == b',' {
                i = skip_space(text, i + 1);
            }
            if i >= text.len() {
                return Ok(set);
            }
            let u = uuid_at(&text[i..]).ok_or_else(malformed)?;
            i = skip_space(text, i + 36);
            while at(i) == b':' {
                let (start, next) = strtoll(text, i + 1).ok_or_else(malformed)?;
                if start == 0 {
                    return Err(malformed());
                }
                i = skip_space(text, next);
                let end = if at(i) == b'-' {
                    let (end, next) = strtoll(text, i + 1).ok_or_else(malformed)?;
                    i = skip_space(text, next);
                    end + 1
                } else {
                    start + 1
                };
                set.add_interval(&u, start, end);
            }
            if i < text.len() && at(i) != b',' {
                return Err(malformed());
            }
        }
    }

    /// MySQL's text form: `uuid:1-5:7,\nuuid2:3` ('' for the empty set).
    pub fn to_text(&self) -> String {
        let mut parts = Vec::new();
        for (u, ivs) in &self.sets {
            let mut s = uuid_text(u);
            for &(a, e) in ivs {
                if e == a + 1 {
                    s.push_str(&format!(":{a}"));
                } else {
                    s.push_str(&format!(":{a}-{}", e - 1));
                }
            }
            parts.push(s);
        }
        parts.join(",\n")
    }
}

/// C's `isspace` in the C locale, which MySQL's parser skips.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

fn skip_space(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && is_space(text[i]) {
        i += 1;
    }
    i
}

/// MySQL's `parse_gno`: C's `strtoll(s, &end, 0)` from `i` (leading white space, a
/// sign, `0x` hex, `0` octal, else decimal), refused (None) when negative or at least
/// `GNO_END` (an overflow gives `LLONG_MAX`, so it is refused too). No digits read as 0
/// with nothing consumed. Returns the value and where reading stopped.
fn strtoll(text: &[u8], i: usize) -> Option<(u64, usize)> {
    let at = |k: usize| text.get(k).copied().unwrap_or(0);
    let mut k = skip_space(text, i);
    let negative = match at(k) {
        b'-' => {
            k += 1;
            true
        }
        b'+' => {
            k += 1;
            false
        }
        _ => false,
    };
    let (radix, mut k) =
        if at(k) == b'0' && matches!(at(k + 1), b'x' | b'X') && at(k + 2).is_ascii_hexdigit() {
            (16, k + 2)
        } else if at(k) == b'0' {
            (8, k)
        } else {
            (10, k)
        };
    let digits_from = k;
    let mut v: u128 = 0;
    while let Some(d) = (at(k) as char).to_digit(radix) {
        v = (v * radix as u128 + d as u128).min(u128::from(u64::MAX));
        k += 1;
    }
    if k == digits_from {
        // No number at all: strtoll returns 0 and leaves the pointer where it was.
        return Some((0, i));
    }
    if negative && v != 0 {
        return None;
    }
    if v >= GNO_END as u128 {
        return None;
    }
    Some((v as u64, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    const B: &str = "4e11fa47-71ca-11e1-9e33-c80aa9429562";

    fn set(t: &str) -> GtidSet {
        GtidSet::parse(t).unwrap_or_else(|| panic!("parses: {t}"))
    }

    #[test]
    fn uuid_round_trip() {
        let u = parse_uuid(A).unwrap();
        assert_eq!(uuid_text(&u), A);
        assert_eq!(parse_uuid(&A.to_uppercase()), Some(u));
        assert!(parse_uuid("3e11fa47-71ca-11e1-9e33-c80aa942956").is_none());
        // Dashes only where the 8-4-4-4-12 groups end; no signs in place of digits.
        assert!(parse_uuid("3e11fa4-771ca-11e1-9e33-c80aa9429562").is_none());
        assert!(parse_uuid("+e11fa47-71ca-11e1-9e33-c80aa9429562").is_none());
    }

    #[test]
    fn intervals_merge_and_print() {
        let u = parse_uuid(A).unwrap();
        let mut s = GtidSet::default();
        for g in [1, 2, 3, 5, 4, 9] {
            s.add(&u, g);
        }
        assert_eq!(s.to_text(), format!("{A}:1-5:9"));
        assert_eq!(s.last_gno(&u), 9);
        assert!(s.contains(&u, 4) && !s.contains(&u, 6) && s.contains(&u, 9));
        s.add_interval(&u, 6, 9);
        assert_eq!(s.to_text(), format!("{A}:1-9"));
        s.add_interval(&u, 20, 30);
        s.add_interval(&u, 12, 14);
        s.add_interval(&u, 11, 25);
        assert_eq!(s.to_text(), format!("{A}:1-9:11-29"));
        s.add_interval(&u, 5, 5);
        assert_eq!(s.intervals().next().unwrap().1, &[(1, 10), (11, 30)]);
    }

    #[test]
    fn text_round_trip() {
        let t = format!("{A}:1-5:9,\n{B}:3");
        let s = set(&t);
        assert_eq!(s.to_text(), t);
        assert_eq!(set(&s.to_text()), s);
        assert_eq!(set(""), GtidSet::default());
        assert_eq!(s.intervals().count(), 2);
    }

    #[test]
    fn reads_what_mysql_reads() {
        // Upper case, white space around the parts, sorted uuids, merged intervals.
        let t = format!(" {B}:3 ,\n\t{}: 7 - 9 :1-2:3-5 , ", A.to_uppercase());
        assert_eq!(set(&t).to_text(), format!("{A}:1-5:7-9,\n{B}:3"));
        // Empty entries; a uuid with no interval; an end below its start adds nothing.
        assert_eq!(set(",,").to_text(), "");
        assert_eq!(set(&format!("{A},,{B}:2")).to_text(), format!("{B}:2"));
        assert_eq!(set(&format!("{A}:5-3")).to_text(), "");
        assert_eq!(set(&format!("{A}:5-")).to_text(), "");
        // strtoll's notations.
        assert_eq!(set(&format!("{A}:0x10-020")).to_text(), format!("{A}:16"));
        assert_eq!(set(&format!("{A}:+4")).to_text(), format!("{A}:4"));
        // The largest GNO MySQL takes.
        let max = i64::MAX - 1;
        assert_eq!(set(&format!("{A}:{max}")).to_text(), format!("{A}:{max}"));
        // The text ends at a NUL byte.
        let mut b = format!("{A}:1").into_bytes();
        b.extend_from_slice(b"\0garbage");
        assert_eq!(GtidSet::parse_text(&b).unwrap().to_text(), format!("{A}:1"));
    }

    #[test]
    fn refuses_what_mysql_refuses() {
        for bad in [
            "x:1".to_string(),
            format!("{A}:0"),
            format!("{A}:a"),
            format!("{A}:"),
            format!("{A}:-1"),
            format!("{A}:1-a"),
            format!("{A}:1:"),
            format!("{A}:{}", i64::MAX),
            format!("{A}:99999999999999999999"),
            format!("{A} {B}:1"),
            format!("{A}:1;"),
            format!("+{A}:1"),
            "ANONYMOUS:1".to_string(),
            format!("{}:1", &A[..35]),
            "3e11fa47-71ca-11e1-9e33-c80aa942956x:1".to_string(),
        ] {
            assert!(GtidSet::parse(&bad).is_none(), "{bad}");
        }
        // The message shows the text from its first non-blank character.
        let e = GtidSet::parse_text(b"  \n bad set ").unwrap_err();
        assert_eq!(e.text, "bad set ");
    }

    #[test]
    fn subtract_and_subset() {
        let mut s = set(&format!("{A}:1-10:20-30,{B}:1-5"));
        s.subtract(&set(&format!("{A}:3-4:9-21:25,{B}:1-5")));
        assert_eq!(s.to_text(), format!("{A}:1-2:5-8:22-24:26-30"));
        let mut t = s.clone();
        t.subtract(&GtidSet::default());
        assert_eq!(t, s);
        t.subtract(&s);
        assert!(t.is_empty());
        assert_eq!(t.to_text(), "");

        let big = set(&format!("{A}:1-57,{B}:1-3"));
        assert!(set(&format!("{A}:23")).is_subset(&big));
        assert!(set(&format!("{A}:21-57:1")).is_subset(&big));
        assert!(!set(&format!("{A}:20-58")).is_subset(&big));
        assert!(!set(&format!("{B}:4")).is_subset(&big));
        assert!(GtidSet::default().is_subset(&GtidSet::default()));
        assert!(!big.is_subset(&GtidSet::default()));
        // Touching intervals given apart are merged, so one covers the other.
        assert!(set(&format!("{A}:2-9")).is_subset(&set(&format!("{A}:1-5:6-10"))));
    }
}
