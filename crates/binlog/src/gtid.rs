//! MySQL-style global transaction ids: a server uuid and a transaction number (GNO),
//! written `3E11FA47-71CA-11E1-9E33-C80AA9429562:23`, and sets of them
//! (`gtid_executed`, `gtid_purged`, the PREVIOUS_GTIDS event), kept as sorted half-open
//! intervals per uuid.

use std::collections::BTreeMap;

/// A server uuid as its 16 bytes.
pub type Uuid = [u8; 16];

/// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex, either case).
pub fn parse_uuid(s: &str) -> Option<Uuid> {
    let hex: Vec<u8> = s.bytes().filter(|b| *b != b'-').collect();
    if hex.len() != 32 || s.len() != 36 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let t = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(t, 16).ok()?;
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

/// A random (version 4) uuid, as MySQL generates `server_uuid` at first start.
pub fn random_uuid() -> Uuid {
    let mut u: Uuid = rand::random();
    u[6] = (u[6] & 0x0F) | 0x40;
    u[8] = (u[8] & 0x3F) | 0x80;
    u
}

/// A set of GTIDs: per uuid, disjoint sorted intervals `[start, end)`.
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
        self.add_interval(uuid, gno, gno + 1);
    }

    fn add_interval(&mut self, uuid: &Uuid, start: u64, end: u64) {
        let v = self.sets.entry(*uuid).or_default();
        v.push((start, end));
        v.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(v.len());
        for &(s, e) in v.iter() {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        *v = merged;
    }

    /// Every GTID of `other` added to this set.
    pub fn union(&mut self, other: &GtidSet) {
        for (u, ivs) in &other.sets {
            for &(s, e) in ivs {
                self.add_interval(u, s, e);
            }
        }
    }

    pub fn contains(&self, uuid: &Uuid, gno: u64) -> bool {
        self.sets
            .get(uuid)
            .is_some_and(|v| v.iter().any(|&(s, e)| s <= gno && gno < e))
    }

    /// The largest GNO of `uuid` in the set (0 for none).
    pub fn last_gno(&self, uuid: &Uuid) -> u64 {
        self.sets
            .get(uuid)
            .and_then(|v| v.last())
            .map_or(0, |&(_, e)| e - 1)
    }

    /// The PREVIOUS_GTIDS body (docs/format/binlog.md).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.sets.len() as u64).to_le_bytes());
        for (u, ivs) in &self.sets {
            out.extend_from_slice(u);
            out.extend_from_slice(&(ivs.len() as u64).to_le_bytes());
            for &(s, e) in ivs {
                out.extend_from_slice(&s.to_le_bytes());
                out.extend_from_slice(&e.to_le_bytes());
            }
        }
    }

    /// Reads a PREVIOUS_GTIDS body; None when it is malformed.
    pub fn decode(b: &[u8]) -> Option<GtidSet> {
        let mut at = 0usize;
        let u64_at = |at: &mut usize| -> Option<u64> {
            let v = u64::from_le_bytes(b.get(*at..*at + 8)?.try_into().ok()?);
            *at += 8;
            Some(v)
        };
        let n = u64_at(&mut at)?;
        let mut set = GtidSet::default();
        for _ in 0..n {
            let u: Uuid = b.get(at..at + 16)?.try_into().ok()?;
            at += 16;
            let k = u64_at(&mut at)?;
            for _ in 0..k {
                let s = u64_at(&mut at)?;
                let e = u64_at(&mut at)?;
                if e <= s {
                    return None;
                }
                set.add_interval(&u, s, e);
            }
        }
        Some(set)
    }

    /// Each uuid with its intervals `[start, end)`, in uuid order.
    pub fn intervals(&self) -> impl Iterator<Item = (&Uuid, &[(u64, u64)])> {
        self.sets.iter().map(|(u, v)| (u, v.as_slice()))
    }

    /// Reads MySQL's text form (`uuid:1-5:7, uuid2:3`; white space and new lines
    /// ignored; '' is the empty set); None when it is malformed.
    pub fn parse(text: &str) -> Option<GtidSet> {
        let mut set = GtidSet::default();
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        for part in compact.split(',').filter(|p| !p.is_empty()) {
            let mut fields = part.split(':');
            let u = parse_uuid(fields.next()?)?;
            let mut any = false;
            for iv in fields {
                let (a, b) = match iv.split_once('-') {
                    Some((a, b)) => (a.parse::<u64>().ok()?, b.parse::<u64>().ok()?),
                    None => {
                        let a = iv.parse::<u64>().ok()?;
                        (a, a)
                    }
                };
                if a == 0 || b < a || b == u64::MAX {
                    return None;
                }
                set.add_interval(&u, a, b + 1);
                any = true;
            }
            if !any {
                return None;
            }
        }
        Some(set)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_round_trip() {
        let t = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
        let u = parse_uuid(t).unwrap();
        assert_eq!(uuid_text(&u), t);
        assert!(parse_uuid("3e11fa47-71ca-11e1-9e33-c80aa942956").is_none());
        let r = random_uuid();
        assert_eq!(r[6] >> 4, 4);
    }

    #[test]
    fn intervals_merge_and_print() {
        let u = parse_uuid("3e11fa47-71ca-11e1-9e33-c80aa9429562").unwrap();
        let mut s = GtidSet::default();
        for g in [1, 2, 3, 5, 4, 9] {
            s.add(&u, g);
        }
        assert_eq!(s.to_text(), "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:9");
        assert_eq!(s.last_gno(&u), 9);
        assert!(s.contains(&u, 4) && !s.contains(&u, 6));
        let mut b = Vec::new();
        s.encode(&mut b);
        assert_eq!(b.len(), 8 + 16 + 8 + 2 * 16);
        assert_eq!(GtidSet::decode(&b).unwrap(), s);
        assert!(GtidSet::decode(&b[..20]).is_none());
    }

    #[test]
    fn text_round_trip() {
        let t = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:9,\n\
                 4e11fa47-71ca-11e1-9e33-c80aa9429562:3";
        let s = GtidSet::parse(t).unwrap();
        assert_eq!(s.to_text(), t.replace(' ', ""));
        assert_eq!(GtidSet::parse(&s.to_text()).unwrap(), s);
        assert_eq!(GtidSet::parse("").unwrap(), GtidSet::default());
        assert_eq!(s.intervals().count(), 2);
        for bad in [
            "x:1",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:0",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:5-3",
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:a",
        ] {
            assert!(GtidSet::parse(bad).is_none(), "{bad}");
        }
    }
}
