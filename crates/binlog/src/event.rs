//! The bytes of one binary-log event (docs/format/binlog.md): the 19-byte common header,
//! each event type's post-header and body, and the CRC-32 trailer. Row images are in
//! `rows.rs`; this module only frames them.
//!
//! An event is built as its body first ([`Body`]), then framed by [`frame`] once its
//! position in the file (the header's `log_pos`) is known.

use crate::gtid::GtidSet;

pub const MAGIC: [u8; 4] = [0xFE, b'b', b'i', b'n'];
pub const HEADER_LEN: usize = 19;
pub const CHECKSUM_LEN: usize = 4;

pub const QUERY: u8 = 2;
pub const STOP: u8 = 3;
pub const ROTATE: u8 = 4;
pub const FORMAT_DESCRIPTION: u8 = 15;
pub const XID: u8 = 16;
pub const TABLE_MAP: u8 = 19;
pub const HEARTBEAT: u8 = 27;
pub const WRITE_ROWS: u8 = 30;
pub const UPDATE_ROWS: u8 = 31;
pub const DELETE_ROWS: u8 = 32;
pub const GTID: u8 = 33;
pub const PREVIOUS_GTIDS: u8 = 35;
pub const XA_PREPARE: u8 = 38;

/// `LOG_EVENT_BINLOG_IN_USE_F`: the file is open (FORMAT_DESCRIPTION only).
pub const FLAG_IN_USE: u16 = 0x0001;
/// `LOG_EVENT_ARTIFICIAL_F`: an event made up for a replica (the first ROTATE).
pub const FLAG_ARTIFICIAL: u16 = 0x0020;

/// The server version the FORMAT_DESCRIPTION event names (MySQL 8.0.36's binlog).
pub const SERVER_VERSION: &str = "8.0.36-strata";

/// MySQL 8.0's post-header lengths of event types 1…41.
pub const POST_HEADER_LENGTHS: [u8; 41] = [
    56, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0, 0, 10,
    10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0,
];

/// The name SHOW BINLOG EVENTS gives a type code.
pub fn type_name(code: u8) -> &'static str {
    match code {
        QUERY => "Query",
        STOP => "Stop",
        ROTATE => "Rotate",
        FORMAT_DESCRIPTION => "Format_desc",
        XID => "Xid",
        TABLE_MAP => "Table_map",
        HEARTBEAT => "Heartbeat",
        WRITE_ROWS => "Write_rows",
        UPDATE_ROWS => "Update_rows",
        DELETE_ROWS => "Delete_rows",
        GTID => "Gtid",
        PREVIOUS_GTIDS => "Previous_gtids",
        XA_PREPARE => "XA_prepare",
        _ => "Unknown",
    }
}

/// An event before it is framed: its type, header timestamp and flags, and the bytes
/// after the common header (post-header and body).
#[derive(Clone, Debug)]
pub struct Body {
    pub type_code: u8,
    pub timestamp: u32,
    pub flags: u16,
    pub data: Vec<u8>,
}

/// The CRC-32 of `bytes`, with the FORMAT_DESCRIPTION event's in-use flag read as clear
/// (so that clearing it at close leaves the checksum right).
pub fn checksum(bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    if bytes.len() >= HEADER_LEN && bytes[4] == FORMAT_DESCRIPTION {
        h.update(&bytes[..17]);
        let flags = u16::from_le_bytes([bytes[17], bytes[18]]) & !FLAG_IN_USE;
        h.update(&flags.to_le_bytes());
        h.update(&bytes[19..]);
    } else {
        h.update(bytes);
    }
    h.finalize()
}

/// Appends the framed event to `out`: header, `body.data`, and the checksum when
/// `crc` (always for FORMAT_DESCRIPTION, which carries the trailer whatever the
/// algorithm). `pos` is the event's offset in its file; the header's log_pos is the
/// offset after it (0 when `pos` is None: an artificial event).
pub fn frame(out: &mut Vec<u8>, body: &Body, server_id: u32, pos: Option<u64>, crc: bool) {
    let start = out.len();
    let with_crc = crc || body.type_code == FORMAT_DESCRIPTION;
    let size = HEADER_LEN + body.data.len() + if with_crc { CHECKSUM_LEN } else { 0 };
    let next = pos.map_or(0, |p| (p + size as u64) as u32);
    out.extend_from_slice(&body.timestamp.to_le_bytes());
    out.push(body.type_code);
    out.extend_from_slice(&server_id.to_le_bytes());
    out.extend_from_slice(&(size as u32).to_le_bytes());
    out.extend_from_slice(&next.to_le_bytes());
    out.extend_from_slice(&body.flags.to_le_bytes());
    out.extend_from_slice(&body.data);
    if with_crc {
        let c = checksum(&out[start..]);
        out.extend_from_slice(&c.to_le_bytes());
    }
}

/// The client protocol's length-encoded integer.
pub fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xFC);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        out.push(0xFD);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

pub fn format_description(timestamp: u32, crc: bool) -> Body {
    let mut d = Vec::with_capacity(99);
    d.extend_from_slice(&4u16.to_le_bytes());
    let mut version = [0u8; 50];
    version[..SERVER_VERSION.len()].copy_from_slice(SERVER_VERSION.as_bytes());
    d.extend_from_slice(&version);
    d.extend_from_slice(&timestamp.to_le_bytes());
    d.push(HEADER_LEN as u8);
    d.extend_from_slice(&POST_HEADER_LENGTHS);
    d.push(crc as u8);
    Body {
        type_code: FORMAT_DESCRIPTION,
        timestamp,
        flags: FLAG_IN_USE,
        data: d,
    }
}

pub fn previous_gtids(timestamp: u32, set: &GtidSet) -> Body {
    let mut d = Vec::new();
    crate::gtid::encode(set, &mut d);
    Body {
        type_code: PREVIOUS_GTIDS,
        timestamp,
        flags: 0,
        data: d,
    }
}

/// The GTID event of transaction `uuid:gno`, `seq` counting transactions in the file.
pub fn gtid(timestamp: u32, uuid: &[u8; 16], gno: u64, seq: u64, ddl: bool) -> Body {
    let mut d = Vec::with_capacity(42);
    d.push(ddl as u8);
    d.extend_from_slice(uuid);
    d.extend_from_slice(&gno.to_le_bytes());
    d.push(2);
    d.extend_from_slice(&seq.saturating_sub(1).to_le_bytes());
    d.extend_from_slice(&seq.to_le_bytes());
    Body {
        type_code: GTID,
        timestamp,
        flags: 0,
        data: d,
    }
}

/// What a QUERY event carries besides its text, and the GTID of the group it is in.
#[derive(Clone, Debug, Default)]
pub struct QueryContext {
    pub thread_id: u32,
    pub db: String,
    /// sql_mode bits, MySQL's numbering.
    pub sql_mode: u64,
    pub foreign_key_checks: bool,
    pub unique_checks: bool,
    /// The GTID the group is written under: None for the next of this server's own
    /// (`server_uuid:N`); Some(uuid, gno) for a transaction a replica applies from a
    /// MySQL-style source, which keeps the source's (docs/format/binlog.md, GTID).
    pub gtid: Option<(crate::gtid::Uuid, u64)>,
    /// The server id the group's events carry: None for this server's; Some(id) for a
    /// transaction a replica applies, which keeps its originating server's id (MySQL's
    /// replica does, so a circular or chained topology can skip its own events).
    pub server_id: Option<u32>,
}

pub fn query(timestamp: u32, cx: &QueryContext, text: &str) -> Body {
    let mut status = Vec::with_capacity(32);
    status.push(0); // Q_FLAGS2_CODE
    let mut flags2: u32 = 0;
    if !cx.foreign_key_checks {
        flags2 |= 0x0400_0000;
    }
    if !cx.unique_checks {
        flags2 |= 0x0800_0000;
    }
    status.extend_from_slice(&flags2.to_le_bytes());
    status.push(1); // Q_SQL_MODE_CODE
    status.extend_from_slice(&cx.sql_mode.to_le_bytes());
    status.push(6); // Q_CATALOG_NZ_CODE
    status.push(3);
    status.extend_from_slice(b"std");
    status.push(4); // Q_CHARSET_CODE: utf8mb4_general_ci for all three
    for _ in 0..3 {
        status.extend_from_slice(&45u16.to_le_bytes());
    }
    let db = &cx.db.as_bytes()[..cx.db.len().min(255)];
    let mut d = Vec::with_capacity(13 + status.len() + db.len() + 1 + text.len());
    d.extend_from_slice(&cx.thread_id.to_le_bytes());
    d.extend_from_slice(&0u32.to_le_bytes());
    d.push(db.len() as u8);
    d.extend_from_slice(&0u16.to_le_bytes());
    d.extend_from_slice(&(status.len() as u16).to_le_bytes());
    d.extend_from_slice(&status);
    d.extend_from_slice(db);
    d.push(0);
    d.extend_from_slice(text.as_bytes());
    Body {
        type_code: QUERY,
        timestamp,
        flags: 0,
        data: d,
    }
}

pub fn xid(timestamp: u32, xid: u64) -> Body {
    Body {
        type_code: XID,
        timestamp,
        flags: 0,
        data: xid.to_le_bytes().to_vec(),
    }
}

/// An XA transaction's xid, as the log writes it (XA_PREPARE's body, the xid in the
/// `XA …` query texts).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct XaXid {
    pub format_id: i32,
    pub gtrid: Vec<u8>,
    pub bqual: Vec<u8>,
}

impl XaXid {
    /// MySQL's serialization of an xid in the logged statements:
    /// `X'<gtrid hex>',X'<bqual hex>',<formatID>`, upper-case digits.
    pub fn serialized(&self) -> String {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02X}")).collect::<String>();
        format!(
            "X'{}',X'{}',{}",
            hex(&self.gtrid),
            hex(&self.bqual),
            self.format_id
        )
    }
}

/// What an `XA …` query event of the log says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XaVerb {
    Start,
    End,
    Commit,
    Rollback,
}

impl XaVerb {
    fn word(self) -> &'static str {
        match self {
            XaVerb::Start => "START",
            XaVerb::End => "END",
            XaVerb::Commit => "COMMIT",
            XaVerb::Rollback => "ROLLBACK",
        }
    }
}

/// The text of an `XA START|END|COMMIT|ROLLBACK` query event.
pub fn xa_text(verb: XaVerb, xid: &XaXid) -> String {
    format!("XA {} {}", verb.word(), xid.serialized())
}

/// Reads back a text [`xa_text`] wrote (the serialized form only; another spelling of an
/// XA statement is None).
pub fn parse_xa_text(text: &[u8]) -> Option<(XaVerb, XaXid)> {
    let text = std::str::from_utf8(text).ok()?;
    let rest = text.strip_prefix("XA ")?;
    let (word, rest) = rest.split_once(' ')?;
    let verb = [XaVerb::Start, XaVerb::End, XaVerb::Commit, XaVerb::Rollback]
        .into_iter()
        .find(|v| v.word() == word)?;
    let unhex = |s: &str| -> Option<Vec<u8>> {
        let s = s.strip_prefix("X'")?.strip_suffix('\'')?;
        if s.len() % 2 != 0 {
            return None;
        }
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
            .collect()
    };
    let mut parts = rest.split(',');
    let gtrid = unhex(parts.next()?)?;
    let bqual = unhex(parts.next()?)?;
    let format_id = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some((
        verb,
        XaXid {
            format_id,
            gtrid,
            bqual,
        },
    ))
}

/// XA_PREPARE_LOG_EVENT: ends the group an `XA PREPARE` writes.
pub fn xa_prepare(timestamp: u32, xid: &XaXid) -> Body {
    let mut d = Vec::with_capacity(13 + xid.gtrid.len() + xid.bqual.len());
    d.push(0); // one_phase: a two-phase XA PREPARE
    d.extend_from_slice(&xid.format_id.to_le_bytes());
    d.extend_from_slice(&(xid.gtrid.len() as u32).to_le_bytes());
    d.extend_from_slice(&(xid.bqual.len() as u32).to_le_bytes());
    d.extend_from_slice(&xid.gtrid);
    d.extend_from_slice(&xid.bqual);
    Body {
        type_code: XA_PREPARE,
        timestamp,
        flags: 0,
        data: d,
    }
}

/// The xid of an XA_PREPARE event's data; None if malformed.
pub fn parse_xa_prepare(d: &[u8]) -> Option<XaXid> {
    let u32_at = |i: usize| -> Option<usize> {
        Some(u32::from_le_bytes(d.get(i..i + 4)?.try_into().ok()?) as usize)
    };
    let format_id = i32::from_le_bytes(d.get(1..5)?.try_into().ok()?);
    let g = u32_at(5)?;
    let b = u32_at(9)?;
    if g > 64 || b > 64 {
        return None;
    }
    Some(XaXid {
        format_id,
        gtrid: d.get(13..13 + g)?.to_vec(),
        bqual: d.get(13 + g..13 + g + b)?.to_vec(),
    })
}

pub fn rotate(timestamp: u32, next_file: &str, position: u64, flags: u16) -> Body {
    let mut d = position.to_le_bytes().to_vec();
    d.extend_from_slice(next_file.as_bytes());
    Body {
        type_code: ROTATE,
        timestamp,
        flags,
        data: d,
    }
}

pub fn stop(timestamp: u32) -> Body {
    Body {
        type_code: STOP,
        timestamp,
        flags: 0,
        data: Vec::new(),
    }
}

/// A replication heartbeat naming the file the replica reads.
pub fn heartbeat(file: &str) -> Body {
    Body {
        type_code: HEARTBEAT,
        timestamp: 0,
        flags: 0,
        data: file.as_bytes().to_vec(),
    }
}

/// One event as read back from a file.
#[derive(Clone, Debug)]
pub struct Header {
    pub timestamp: u32,
    pub type_code: u8,
    pub server_id: u32,
    pub size: u32,
    pub log_pos: u32,
    pub flags: u16,
}

impl Header {
    pub fn parse(b: &[u8]) -> Option<Header> {
        if b.len() < HEADER_LEN {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Some(Header {
            timestamp: u32_at(0),
            type_code: b[4],
            server_id: u32_at(5),
            size: u32_at(9),
            log_pos: u32_at(13),
            flags: u16::from_le_bytes([b[17], b[18]]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_description_is_mysql8_sized_and_checksummed() {
        let mut out = Vec::new();
        frame(&mut out, &format_description(7, true), 1, Some(4), true);
        assert_eq!(out.len(), 122);
        let h = Header::parse(&out).unwrap();
        assert_eq!((h.size, h.log_pos, h.flags), (122, 126, FLAG_IN_USE));
        // Clearing the in-use flag keeps the checksum valid.
        let stored = u32::from_le_bytes(out[118..122].try_into().unwrap());
        out[17] = 0;
        assert_eq!(checksum(&out[..118]), stored);
        // The checksum is the ISO-HDLC CRC-32 of the bytes (flag cleared).
        assert_eq!(crc32fast::hash(&out[..118]), stored);
    }

    #[test]
    fn lenenc_boundaries() {
        let enc = |v| {
            let mut o = Vec::new();
            put_lenenc(&mut o, v);
            o
        };
        assert_eq!(enc(250), vec![250]);
        assert_eq!(enc(251), vec![0xFC, 251, 0]);
        assert_eq!(enc(1 << 16), vec![0xFD, 0, 0, 1]);
        assert_eq!(enc(1 << 24).len(), 9);
    }

    #[test]
    fn xa_prepare_event_and_texts_round_trip() {
        let x = XaXid {
            format_id: -7,
            gtrid: b"g'1".to_vec(),
            bqual: vec![0, 0xff],
        };
        let b = xa_prepare(1, &x);
        assert_eq!(b.type_code, 38);
        assert_eq!(
            &b.data[..13],
            &[0, 0xf9, 0xff, 0xff, 0xff, 3, 0, 0, 0, 2, 0, 0, 0]
        );
        assert_eq!(parse_xa_prepare(&b.data), Some(x.clone()));
        let t = xa_text(XaVerb::Commit, &x);
        assert_eq!(t, "XA COMMIT X'672731',X'00FF',-7");
        assert_eq!(
            parse_xa_text(t.as_bytes()),
            Some((XaVerb::Commit, x.clone()))
        );
        let empty = XaXid {
            format_id: 1,
            gtrid: b"a".to_vec(),
            bqual: vec![],
        };
        assert_eq!(xa_text(XaVerb::Start, &empty), "XA START X'61',X'',1");
        assert_eq!(
            parse_xa_text(b"XA ROLLBACK X'61',X'',1"),
            Some((XaVerb::Rollback, empty))
        );
        assert_eq!(parse_xa_text(b"XA COMMIT 'a'"), None);
        assert_eq!(parse_xa_text(b"BEGIN"), None);
    }

    #[test]
    fn query_event_layout() {
        let cx = QueryContext {
            thread_id: 9,
            db: "test".into(),
            sql_mode: 0x20_0000,
            foreign_key_checks: true,
            unique_checks: true,
            gtid: None,
            server_id: None,
        };
        let b = query(1, &cx, "BEGIN");
        let status_len = u16::from_le_bytes([b.data[11], b.data[12]]) as usize;
        assert_eq!(b.data[8], 4);
        let rest = &b.data[13 + status_len..];
        assert_eq!(rest, b"test\0BEGIN");
    }
}
