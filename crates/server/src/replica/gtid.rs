//! The source's GTIDs this replica has applied, in the source's own form: MySQL's
//! `uuid:1-5` sets (a MySQL or Strata source, sent with COM_BINLOG_DUMP_GTID for
//! SOURCE_AUTO_POSITION=1) and MariaDB's `domain-server-seq` positions (one per
//! replication domain, sent as `@slave_connect_state` for MASTER_USE_GTID). Both are kept
//! as text in the position row (`settings`), updated in the same transaction as the rows
//! (`apply`), so after a crash they say exactly which transactions the tables hold.

use std::collections::BTreeMap;
use strata_binlog::gtid::GtidSet;

/// MariaDB's GTID position: per domain, the server id and sequence number of the last
/// transaction applied (`gtid_slave_pos`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MariaPos(BTreeMap<u32, (u32, u64)>);

impl MariaPos {
    /// Reads `0-1-100,1-2-5` (white space ignored; '' is empty); None when malformed.
    pub fn parse(text: &str) -> Option<MariaPos> {
        let mut m = BTreeMap::new();
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        for part in compact.split(',').filter(|p| !p.is_empty()) {
            let mut f = part.split('-');
            let d = f.next()?.parse().ok()?;
            let s = f.next()?.parse().ok()?;
            let n = f.next()?.parse().ok()?;
            if f.next().is_some() || m.insert(d, (s, n)).is_some() {
                return None;
            }
        }
        Some(MariaPos(m))
    }

    /// `d-s-n,…` in domain order, as MariaDB prints `gtid_slave_pos`.
    pub fn to_text(&self) -> String {
        self.0
            .iter()
            .map(|(d, (s, n))| format!("{d}-{s}-{n}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn set(&mut self, domain: u32, server: u32, seq: u64) {
        self.0.insert(domain, (server, seq));
    }
}

/// The GTID of the transaction being received (from its GTID event), recorded when it
/// commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    Mysql([u8; 16], u64),
    Maria { domain: u32, server: u32, seq: u64 },
}

/// MariaDB's GTID event (type 162) body, after the common header: seq_no u64,
/// domain_id u32, flags u8 (FL_STANDALONE = 1: a statement that is its own transaction,
/// DDL, with no BEGIN/COMMIT around it).
pub const MARIADB_GTID_EVENT: u8 = 162;
const FL_STANDALONE: u8 = 1;

/// (domain, seq, standalone) of a MariaDB GTID event's body; None when too short.
pub fn parse_mariadb_gtid(body: &[u8]) -> Option<(u32, u64, bool)> {
    let seq = u64::from_le_bytes(body.get(0..8)?.try_into().ok()?);
    let domain = u32::from_le_bytes(body.get(8..12)?.try_into().ok()?);
    let flags = *body.get(12)?;
    Some((domain, seq, flags & FL_STANDALONE != 0))
}

/// Both forms, as applied so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    pub mysql: GtidSet,
    pub maria: MariaPos,
}

impl Applied {
    /// From the position row's two columns; a value that does not parse is an error
    /// naming it (the row was edited by hand).
    pub fn load(mysql: &str, maria: &str) -> Result<Applied, String> {
        Ok(Applied {
            mysql: GtidSet::parse(mysql)
                .ok_or_else(|| format!("the stored GTID set '{mysql}' is malformed"))?,
            maria: MariaPos::parse(maria)
                .ok_or_else(|| format!("the stored GTID position '{maria}' is malformed"))?,
        })
    }

    /// With `p` added.
    pub fn with(&self, p: Option<Pending>) -> Applied {
        let mut a = self.clone();
        match p {
            Some(Pending::Mysql(u, g)) => a.mysql.add(&u, g),
            Some(Pending::Maria {
                domain,
                server,
                seq,
            }) => a.maria.set(domain, server, seq),
            None => {}
        }
        a
    }

    /// What Executed_Gtid_Set shows: the MySQL-style set, or MariaDB's position when the
    /// source is MariaDB.
    pub fn shown(&self) -> String {
        if self.mysql.is_empty() {
            self.maria.to_text()
        } else {
            self.mysql.to_text()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maria_positions_parse_and_print() {
        let p = MariaPos::parse("1-2-5, 0-10-100").unwrap();
        assert_eq!(p.to_text(), "0-10-100,1-2-5");
        assert_eq!(MariaPos::parse("").unwrap(), MariaPos::default());
        for bad in ["0-1", "0-1-2-3", "a-1-2", "0-1-2,0-1-3"] {
            assert!(MariaPos::parse(bad).is_none(), "{bad}");
        }
        let mut q = p.clone();
        q.set(0, 11, 101);
        assert_eq!(q.to_text(), "0-11-101,1-2-5");
    }

    #[test]
    fn applied_adds_the_pending_gtid() {
        let a = Applied::load("", "0-10-7").unwrap();
        let b = a.with(Some(Pending::Maria {
            domain: 0,
            server: 10,
            seq: 8,
        }));
        assert_eq!(b.shown(), "0-10-8");
        let u = [7u8; 16];
        let c = Applied::default().with(Some(Pending::Mysql(u, 1)));
        let c = c.with(Some(Pending::Mysql(u, 2)));
        assert_eq!(c.shown(), "07070707-0707-0707-0707-070707070707:1-2");
        assert_eq!(Applied::load(&c.mysql.to_text(), "").unwrap(), c);
        assert!(Applied::load("x", "").is_err());
        assert_eq!(
            parse_mariadb_gtid(&[5, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1]),
            Some((2, 5, true))
        );
        assert!(parse_mariadb_gtid(&[0; 12]).is_none());
    }
}
