//! The replication source's commands: COM_REGISTER_SLAVE (a replica announces itself),
//! COM_BINLOG_DUMP (stream the binary log from a file and position) and
//! COM_BINLOG_DUMP_GTID (from the transactions the replica lacks). The wire layer parses
//! them and sends the events the handler's [`EventSource`] gives, each in a packet of
//! its own after a 0x00 byte, with a heartbeat when nothing came for the replica's
//! `@master_heartbeat_period`; the binary log itself is below, behind the [`Handler`].
//!
//! [`Handler`]: crate::handler::Handler

use crate::packet::Cursor;
use std::time::Duration;
use strata_types::Result;

/// COM_REGISTER_SLAVE's fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Registration {
    pub server_id: u32,
    pub host: String,
    pub port: u16,
}

/// What a dump asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct DumpRequest {
    pub server_id: u32,
    /// BINLOG_DUMP_NON_BLOCK: end with EOF at the end of the log instead of waiting.
    pub non_blocking: bool,
    pub file: String,
    pub pos: u64,
    /// COM_BINLOG_DUMP_GTID: the replica's executed GTID set, encoded as in the
    /// PREVIOUS_GTIDS event (None for COM_BINLOG_DUMP).
    pub gtids: Option<Vec<u8>>,
}

/// The events of a dump, as the binary log serves them.
pub trait EventSource {
    /// The next event (header to checksum), waiting up to `wait`; None when none came.
    fn next(&mut self, wait: Duration) -> Result<Option<Vec<u8>>>;
    /// A heartbeat event for where the dump is.
    fn heartbeat(&mut self) -> Vec<u8>;
}

pub fn parse_register(body: &[u8]) -> Option<Registration> {
    let mut c = Cursor::new(body);
    let server_id = c.u32()?;
    let host_len = c.u8()? as usize;
    let host = String::from_utf8_lossy(c.bytes(host_len)?).into_owned();
    let user_len = c.u8()? as usize;
    c.bytes(user_len)?;
    let pw_len = c.u8()? as usize;
    c.bytes(pw_len)?;
    let port = c.u16()?;
    Some(Registration {
        server_id,
        host,
        port,
    })
}

/// COM_BINLOG_DUMP: pos u32, flags u16, server_id u32, file name (rest).
pub fn parse_dump(body: &[u8]) -> Option<DumpRequest> {
    let mut c = Cursor::new(body);
    let pos = c.u32()? as u64;
    let flags = c.u16()?;
    let server_id = c.u32()?;
    let file = String::from_utf8_lossy(c.rest()).into_owned();
    Some(DumpRequest {
        server_id,
        non_blocking: flags & 1 != 0,
        file,
        pos,
        gtids: None,
    })
}

/// COM_BINLOG_DUMP_GTID: flags u16, server_id u32, name length u32, name, pos u64, then
/// the GTID set's length u32 and bytes. MySQL reads the set whatever the flags say
/// (BINLOG_THROUGH_GTID, 4, is not looked at): mysql-binlog-connector-java (Debezium's
/// reader) sends flags 0 with its set, which must be honoured or the replica gets again
/// every transaction it has. A packet that ends after pos (mysql_common's form without
/// BINLOG_THROUGH_GTID; MySQL calls it malformed) is the empty set: the dump is still by
/// GTID, so transactions the source purged are refused, not silently skipped.
pub fn parse_dump_gtid(body: &[u8]) -> Option<DumpRequest> {
    let mut c = Cursor::new(body);
    let flags = c.u16()?;
    let server_id = c.u32()?;
    let name_len = c.u32()? as usize;
    let file = String::from_utf8_lossy(c.bytes(name_len)?).into_owned();
    let pos = c.u64()?;
    let gtids = if c.remaining() > 0 {
        let n = c.u32()? as usize;
        Some(c.bytes(n)?.to_vec())
    } else {
        // The empty set's encoding: no SIDs.
        Some(0u64.to_le_bytes().to_vec())
    };
    Some(DumpRequest {
        server_id,
        non_blocking: flags & 1 != 0,
        file,
        pos,
        gtids,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_commands_parse() {
        let mut b = 1234u32.to_le_bytes().to_vec();
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&7u32.to_le_bytes());
        b.extend_from_slice(b"binlog.000002");
        let d = parse_dump(&b).unwrap();
        assert_eq!((d.pos, d.non_blocking, d.server_id), (1234, true, 7));
        assert_eq!(d.file, "binlog.000002");

        let mut g = 4u16.to_le_bytes().to_vec();
        g.extend_from_slice(&9u32.to_le_bytes());
        g.extend_from_slice(&0u32.to_le_bytes());
        g.extend_from_slice(&4u64.to_le_bytes());
        g.extend_from_slice(&8u32.to_le_bytes());
        g.extend_from_slice(&0u64.to_le_bytes());
        let d = parse_dump_gtid(&g).unwrap();
        assert_eq!(d.gtids, Some(vec![0; 8]));
        assert!(parse_dump_gtid(&g[..10]).is_none());
        // A packet ending after pos: the empty set.
        g[0] = 0;
        let d = parse_dump_gtid(&g[..18]).unwrap();
        assert_eq!(d.gtids, Some(vec![0; 8]));
        // Flags 0 with a set (mysql-binlog-connector-java): the set is read, as MySQL
        // reads it whatever the flags.
        let mut set = 1u64.to_le_bytes().to_vec();
        set.extend_from_slice(&[7u8; 16]);
        set.extend_from_slice(&1u64.to_le_bytes());
        set.extend_from_slice(&1u64.to_le_bytes());
        set.extend_from_slice(&5u64.to_le_bytes());
        let mut h = g[..18].to_vec();
        h.extend_from_slice(&(set.len() as u32).to_le_bytes());
        h.extend_from_slice(&set);
        let d = parse_dump_gtid(&h).unwrap();
        assert_eq!((d.non_blocking, d.gtids), (false, Some(set.clone())));
        // A set shorter than its length says: malformed.
        assert!(parse_dump_gtid(&h[..h.len() - 1]).is_none());

        let mut r = 5u32.to_le_bytes().to_vec();
        r.push(4);
        r.extend_from_slice(b"host");
        r.extend_from_slice(&[0, 0]);
        r.extend_from_slice(&3307u16.to_le_bytes());
        r.extend_from_slice(&[0; 8]);
        let reg = parse_register(&r).unwrap();
        assert_eq!(
            (reg.server_id, reg.host.as_str(), reg.port),
            (5, "host", 3307)
        );
    }
}
