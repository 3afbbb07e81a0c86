//! The events of `BINLOG '<base64>'` statements, which `mysqlbinlog` and
//! `mariadb-binlog` print for the row events of a log (point-in-time recovery pipes
//! their output into a server): the session crate parses the statement, checks the
//! privilege and decodes the base64 (`strata_session::binlog_replay`), and this module,
//! installed on the server at startup, reads the events with mysql_common's parser —
//! FORMAT_DESCRIPTION first (kept for the session's later statements), TABLE_MAP (kept
//! until a rows event that ends its statement), WRITE/UPDATE/DELETE_ROWS v1 and v2 —
//! and applies the rows with the replica's own code (`rows::apply`), in the session's
//! transaction. Errors are MySQL's: 1609 for an event before any FORMAT_DESCRIPTION,
//! 1730 for an event of another kind, 1149 for one that does not read; a malformed
//! event is an error, never a panic of the connection.

use super::rows::{self, RowsError};
use mysql::binlog::events::{Event, EventData, FormatDescriptionEvent, TableMapEvent};
use mysql::binlog::BinlogVersion;
use std::any::Any;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use strata_session::binlog_replay::BinlogEvents;
use strata_session::Session;
use strata_types::{Error, Result};

/// Bytes of an event's common header (v4): timestamp, type, server id, size, end
/// position, flags.
const HEADER: usize = 19;
/// The smallest event read here: the header and a CRC32 (or an FDE's checksum byte
/// and CRC32) — so the parser never cuts more than the event holds.
const SMALLEST: usize = HEADER + 5;

const FORMAT_DESCRIPTION: u8 = 15;
const TABLE_MAP: u8 = 19;
/// WRITE/UPDATE/DELETE_ROWS v1 (MariaDB's) and v2 (MySQL's).
const ROWS: [u8; 6] = [23, 24, 25, 30, 31, 32];
/// A rows event's flag: the last event of its statement (its table maps end there).
const STMT_END: u16 = 0x0001;

/// What a session's BINLOG statements keep between statements.
#[derive(Default)]
struct State {
    fde: Option<FormatDescriptionEvent<'static>>,
    maps: HashMap<u64, TableMapEvent<'static>>,
}

/// MySQL's name of an event type in its messages.
fn type_name(t: u8) -> String {
    match t {
        2 => "Query".into(),
        4 => "Rotate".into(),
        15 => "Format_desc".into(),
        16 => "Xid".into(),
        19 => "Table_map".into(),
        23 | 30 => "Write_rows".into(),
        24 | 31 => "Update_rows".into(),
        25 | 32 => "Delete_rows".into(),
        33 => "Gtid".into(),
        34 => "Anonymous_Gtid".into(),
        35 => "Previous_gtids".into(),
        other => format!("Unknown (type {other})"),
    }
}

/// Splits `bytes` into whole events (the size in each header); 1149 when a size is
/// wrong or the bytes end inside an event.
fn split_events(mut bytes: &[u8]) -> Result<Vec<&[u8]>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < HEADER {
            return Err(Error::BinlogEventMalformed);
        }
        let size = u32::from_le_bytes([bytes[9], bytes[10], bytes[11], bytes[12]]) as usize;
        if size < SMALLEST || size > bytes.len() {
            return Err(Error::BinlogEventMalformed);
        }
        let (one, rest) = bytes.split_at(size);
        out.push(one);
        bytes = rest;
    }
    Ok(out)
}

/// Runs mysql_common's parser on bytes a client sent, a panic of it being the
/// statement's error.
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(Err(Error::BinlogEventMalformed))
}

/// The server's [`BinlogEvents`].
pub struct BinlogStatements;

impl BinlogEvents for BinlogStatements {
    fn apply(
        &self,
        session: &mut Session,
        state: &mut Option<Box<dyn Any + Send>>,
        events: &[u8],
    ) -> Result<()> {
        let events = split_events(events)?;
        if events.is_empty() {
            return Err(Error::BinlogEventMalformed);
        }
        let boxed = state.get_or_insert_with(|| Box::new(State::default()));
        let Some(st) = boxed.downcast_mut::<State>() else {
            return Err(Error::BinlogEventMalformed);
        };
        for one in events {
            apply_one(session, st, one)?;
        }
        Ok(())
    }
}

/// A FORMAT_DESCRIPTION event, with the checksum setting it announces (which the
/// events read with it then have cut off).
fn read_fde(one: &[u8]) -> Result<FormatDescriptionEvent<'static>> {
    guarded(|| {
        let base = FormatDescriptionEvent::new(BinlogVersion::Version4);
        let ev = Event::read(&base, one).map_err(|_| Error::BinlogEventMalformed)?;
        let fde: FormatDescriptionEvent =
            ev.read_event().map_err(|_| Error::BinlogEventMalformed)?;
        Ok(fde.into_owned().with_footer(ev.footer()))
    })
}

fn apply_one(session: &mut Session, st: &mut State, one: &[u8]) -> Result<()> {
    let t = one[4];
    if t == FORMAT_DESCRIPTION {
        st.fde = Some(read_fde(one)?);
        // A new description: the table maps read under the old one are gone.
        st.maps.clear();
        return Ok(());
    }
    let Some(fde) = st.fde.as_ref() else {
        return Err(Error::BinlogNoFormatDescription(type_name(t)));
    };
    if t != TABLE_MAP && !ROWS.contains(&t) {
        return Err(Error::BinlogEventNotAllowed(type_name(t)));
    }
    let ev = guarded(|| Event::read(fde, one).map_err(|_| Error::BinlogEventMalformed))?;
    if t == TABLE_MAP {
        let map = guarded(|| {
            let m: TableMapEvent = ev.read_event().map_err(|_| Error::BinlogEventMalformed)?;
            Ok(m.into_owned())
        })?;
        st.maps.insert(map.table_id(), map);
        return Ok(());
    }
    let data = guarded(|| match ev.read_data() {
        Ok(Some(EventData::RowsEvent(r))) => Ok(r),
        _ => Err(Error::BinlogEventMalformed),
    })?;
    let map = st
        .maps
        .get(&data.table_id())
        .ok_or(Error::BinlogEventMalformed)?;
    let applied = guarded(|| Ok(rows::apply(session, map, &data)))?;
    let end = rows::flags_of(&data) & STMT_END != 0;
    if end {
        st.maps.clear();
    }
    applied.map_err(|e| match e {
        RowsError::Sql(e) => e,
        RowsError::Event(1594, _) => Error::BinlogEventMalformed,
        RowsError::Event(_, why) => Error::NotSupported(why),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(t: u8, size: u32) -> Vec<u8> {
        let mut h = vec![0u8; HEADER];
        h[4] = t;
        h[9..13].copy_from_slice(&size.to_le_bytes());
        h
    }

    #[test]
    fn events_split_by_their_sizes() {
        let mut a = header(19, 30);
        a.resize(30, 7);
        let mut b = header(30, 24);
        b.resize(24, 9);
        let both = [a.clone(), b.clone()].concat();
        let split = split_events(&both).unwrap();
        assert_eq!(split, vec![&a[..], &b[..]]);
        // Truncated, too small, a short header: 1149, never a panic.
        assert_eq!(split_events(&both[..40]).unwrap_err().code(), 1149);
        let mut tiny = header(19, 10);
        tiny.resize(24, 0);
        assert_eq!(split_events(&tiny).unwrap_err().code(), 1149);
        assert_eq!(split_events(&both[..5]).unwrap_err().code(), 1149);
        assert_eq!(split_events(&[]).unwrap(), Vec::<&[u8]>::new());
    }

    /// A FORMAT_DESCRIPTION, then a TABLE_MAP and a WRITE_ROWS of one statement, as
    /// `mariadb-binlog` printed them for a Strata log (CRC32 checksums; the table:
    /// INT, BIGINT UNSIGNED, VARCHAR, DECIMAL, DATETIME(6), BLOB, JSON).
    const FDE: &str = "cmQOaw8BAAAAegAAAH4AAAABAAQAOC4wLjM2LXN0cmF0YQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
AAAAAAAAAAAAAAAAAAByZA5rEzgNAAgAAAAABAAEAAAAYgAEGggAAAAICAgCAAAACgoKKioAEjQA
CigAASbqtzQ=";
    const ROWS_EVENTS: &str =
        "dGQOaxMBAAAAQgAAANkDAAAAAAEAAAAAAAEABGJyX2EAAnQxAAcDCA/2Evz1B6AADAMGAgR+AQFA
AgMtAT/nrl12
dGQOax4BAAAAXAAAADUEAAAAAAEAAAAAAAEAAgAHfwABAAAA//////////8BeH////7+C5myRDEF
AeJABABhYgBjDQAAAAABAAwACwABAAUBAGF+AgAAAC4bXP4=";

    #[test]
    fn real_events_read() {
        let fde_bytes = strata_session::binlog_replay::decode_base64(FDE).unwrap();
        let fde = read_fde(split_events(&fde_bytes).unwrap()[0]).unwrap();
        let bytes = strata_session::binlog_replay::decode_base64(ROWS_EVENTS).unwrap();
        let events = split_events(&bytes).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0][4], TABLE_MAP);
        let ev = Event::read(&fde, events[0]).unwrap();
        let map: TableMapEvent = ev.read_event().unwrap();
        assert_eq!(map.table_name(), "t1");
        assert_eq!(map.columns_count(), 7);
        let ev = Event::read(&fde, events[1]).unwrap();
        let Some(EventData::RowsEvent(r)) = ev.read_data().unwrap() else {
            panic!("a rows event");
        };
        assert_eq!(r.table_id(), map.table_id());
        assert_eq!(rows::flags_of(&r) & STMT_END, STMT_END);
        let rows: Vec<_> = r.rows(&map).collect();
        // The row of every type and one of NULLs.
        assert_eq!(rows.len(), 2);
        let (before, after) = rows.into_iter().next().unwrap().unwrap();
        assert!(before.is_none());
        let after = after.unwrap();
        // BIGINT UNSIGNED 2^64-1 as the signed -1 mysql_common reads; the decoder
        // turns it back with the column's signedness.
        let u = super::super::decode::value(
            after.as_ref(1).unwrap(),
            map.get_column_type(1).unwrap().unwrap(),
            true,
        )
        .unwrap();
        assert_eq!(u, strata_types::Value::UInt(u64::MAX));
        // Every truncation of the events is an error, never a panic.
        for n in 0..bytes.len() {
            let _ = split_events(&bytes[..n]).map(|evs| {
                for one in evs {
                    let _ =
                        guarded(|| Event::read(&fde, one).map_err(|_| Error::BinlogEventMalformed));
                }
            });
        }
    }

    #[test]
    fn names() {
        assert_eq!(type_name(19), "Table_map");
        assert_eq!(type_name(2), "Query");
        assert_eq!(type_name(99), "Unknown (type 99)");
    }
}
