//! The binary log's side of MySQL-style GTIDs: the set type itself is the shared one
//! (`strata_types::gtid`, re-exported here so the log's callers keep one path); this
//! file holds what only the log needs: a new `server_uuid`, and the byte form of a set
//! in the PREVIOUS_GTIDS event and the COM_BINLOG_DUMP_GTID request
//! (docs/format/binlog.md).

pub use strata_types::gtid::{parse_uuid, uuid_text, GtidSet, Uuid};

/// A random (version 4) uuid, as MySQL generates `server_uuid` at first start.
pub fn random_uuid() -> Uuid {
    let mut u: Uuid = rand::random();
    u[6] = (u[6] & 0x0F) | 0x40;
    u[8] = (u[8] & 0x3F) | 0x80;
    u
}

/// The PREVIOUS_GTIDS body: the number of uuids, then each uuid, its number of
/// intervals and each interval's start and end (exclusive), all little-endian.
pub fn encode(set: &GtidSet, out: &mut Vec<u8>) {
    let uuids: Vec<(&Uuid, &[(u64, u64)])> = set.intervals().collect();
    out.extend_from_slice(&(uuids.len() as u64).to_le_bytes());
    for (u, ivs) in uuids {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_uuid_is_version_4() {
        let r = random_uuid();
        assert_eq!(r[6] >> 4, 4);
        assert_eq!(r[8] >> 6, 2);
    }

    #[test]
    fn body_round_trip() {
        let u = parse_uuid("3e11fa47-71ca-11e1-9e33-c80aa9429562").unwrap();
        let mut s = GtidSet::default();
        for g in [1, 2, 3, 5, 4, 9] {
            s.add(&u, g);
        }
        let mut b = Vec::new();
        encode(&s, &mut b);
        assert_eq!(b.len(), 8 + 16 + 8 + 2 * 16);
        assert_eq!(decode(&b).unwrap(), s);
        assert!(decode(&b[..20]).is_none());
        let mut empty = Vec::new();
        encode(&GtidSet::default(), &mut empty);
        assert_eq!(decode(&empty).unwrap(), GtidSet::default());
    }
}
