//! The replication thread: connect to the source (retrying every SOURCE_CONNECT_RETRY
//! seconds), register, ask for the binary log from the applied position, and apply
//! each event as it arrives, until STOP REPLICA, an event that cannot be applied, or a
//! fatal error from the source. The source is asked for a heartbeat every second, so
//! an idle stream still wakes the thread to see a STOP.
//!
//! The applied position is the file and offset, or with GTID positioning the source's
//! GTIDs applied: SOURCE_AUTO_POSITION=1 sends a MySQL or Strata source the GTID set in
//! COM_BINLOG_DUMP_GTID — those applied, with this server's gtid_executed when it logs,
//! as MySQL's replica sends gtid_executed — and it sends every transaction not in it; MASTER_USE_GTID sends a
//! MariaDB source the per-domain position as `@slave_connect_state` before
//! COM_BINLOG_DUMP, as MariaDB's own replica does. A MariaDB source is always told this
//! replica has MariaDB's GTID capability (`@mariadb_slave_capability = 4`), so its
//! GTID events arrive and the GTID position is kept in either mode.

use super::apply::Applier;
use super::gtid::Applied;
use super::settings::Source;
use super::{timestamp_now, Status};
use mysql::binlog::EventType;
use mysql::prelude::Queryable;
use mysql::{BinlogRequest, Conn, OptsBuilder};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_session::Session;

/// MySQL 8's error numbers for the IO side.
const ER_CONNECT: u16 = 2003;
const ER_LOST: u16 = 2013;
/// ER_SERVER_SOURCE_FATAL_ERROR_READING_BINLOG: the source refused the dump (1236).
const ER_SOURCE_FATAL: u16 = 13114;

/// A mysql client error as (number, text).
fn client_error(e: &mysql::Error, default: u16) -> (u16, String) {
    match e {
        mysql::Error::MySqlError(m) => (m.code, m.message.clone()),
        other => (default, other.to_string()),
    }
}

/// Why a connection did not give a stream: a client error (retried) or a configuration
/// that cannot work with this source (the replica stops).
enum ConnectError {
    Client(mysql::Error),
    Fatal(u16, String),
}

impl From<mysql::Error> for ConnectError {
    fn from(e: mysql::Error) -> ConnectError {
        ConnectError::Client(e)
    }
}

/// The GTID set as COM_BINLOG_DUMP_GTID's SID blocks' text, one `uuid:a-b:…` per
/// uuid (the mysql crate does not re-export the SID type; its parser builds them).
fn sid_texts(executed: &strata_binlog::gtid::GtidSet) -> Vec<String> {
    executed
        .intervals()
        .map(|(u, ivs)| {
            let mut t = strata_binlog::gtid::uuid_text(u);
            for &(s, e) in ivs {
                t.push_str(&format!(":{s}-{}", e - 1));
            }
            t
        })
        .collect()
}

fn connect(
    src: &Source,
    file: &str,
    pos: u64,
    own_id: u32,
    applied: &Applied,
    executed: &strata_binlog::gtid::GtidSet,
) -> std::result::Result<(mysql::BinlogStream, u32, bool), ConnectError> {
    let opts = OptsBuilder::new()
        .ip_or_hostname(Some(src.host.clone()))
        .tcp_port(src.port)
        .user(Some(src.user.clone()))
        .pass(Some(src.password.clone()))
        .prefer_socket(false)
        .tcp_connect_timeout(Some(Duration::from_secs(10)))
        .read_timeout(Some(Duration::from_secs(30)))
        .write_timeout(Some(Duration::from_secs(30)));
    let mut conn = Conn::new(opts)?;
    let source_id: Option<u64> = conn.query_first("SELECT @@server_id")?;
    let checksum: Option<String> = conn.query_first("SELECT @@global.binlog_checksum")?;
    let checksums = checksum.is_none_or(|c| !c.eq_ignore_ascii_case("NONE"));
    // Heartbeats every second (nanoseconds), so an idle stream still sees STOP.
    conn.query_drop("SET @master_heartbeat_period = 1000000000")?;
    let version: Option<String> = conn.query_first("SELECT @@version")?;
    let mariadb = version.is_some_and(|v| v.to_ascii_lowercase().contains("mariadb"));
    if mariadb {
        conn.query_drop("SET @mariadb_slave_capability = 4")?;
    }
    let req = BinlogRequest::new(own_id);
    let req = if src.auto_position {
        if mariadb {
            return Err(ConnectError::Fatal(
                1235,
                "SOURCE_AUTO_POSITION=1 needs a MySQL-style source (uuid:gno GTIDs); for a \
                 MariaDB source use MASTER_USE_GTID=slave_pos"
                    .into(),
            ));
        }
        let sids = sid_texts(executed)
            .iter()
            .map(|t| t.parse())
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| ConnectError::Fatal(1594, format!("the GTID set: {e}")))?;
        req.with_use_gtid(true)
            .with_sids(sids)
            .with_filename(Vec::new())
            .with_pos(4u64)
    } else if !src.use_gtid.is_empty() {
        if !mariadb {
            return Err(ConnectError::Fatal(
                1235,
                "MASTER_USE_GTID needs a MariaDB source (domain-server-seq GTIDs); for a \
                 MySQL or Strata source use SOURCE_AUTO_POSITION=1"
                    .into(),
            ));
        }
        // MariaDB finds the file from the GTID position; the name and offset are not
        // used.
        conn.query_drop(format!(
            "SET @slave_connect_state = '{}'",
            applied.maria.to_text()
        ))?;
        conn.query_drop("SET @slave_gtid_strict_mode = 0")?;
        conn.query_drop("SET @slave_gtid_ignore_duplicates = 0")?;
        req.with_filename(Vec::new()).with_pos(4u64)
    } else {
        req.with_filename(file.as_bytes().to_vec()).with_pos(pos)
    };
    Ok((
        conn.get_binlog_stream(req)?,
        source_id.unwrap_or(0) as u32,
        checksums,
    ))
}

/// Sleeps `secs`, waking early for a STOP; false when stopped.
fn wait(secs: u32, stop: &AtomicBool) -> bool {
    let until = std::time::Instant::now() + Duration::from_secs(secs.max(1) as u64);
    while std::time::Instant::now() < until {
        if stop.load(Ordering::Acquire) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    !stop.load(Ordering::Acquire)
}

pub fn run(
    session: Session,
    src: Source,
    own_id: u32,
    status: Arc<Mutex<Status>>,
    stop: Arc<AtomicBool>,
) {
    let mut session = session;
    // TIMESTAMP values arrive as seconds since the epoch and are applied as UTC
    // date-times (literal.rs).
    let tz = super::settings::run(&mut session, "SET time_zone = '+00:00'");
    let applied = Applied::load(&src.gtid_executed, &src.gtid_slave_pos);
    let mut applier = Applier::new(
        session,
        src.log_file.clone(),
        src.log_pos,
        own_id,
        applied.clone().unwrap_or_default(),
    );
    if let Err(e) = tz {
        status.lock().last_sql = (e.code(), e.to_string(), timestamp_now());
        stop.store(true, Ordering::Release);
    }
    if let Err(why) = applied {
        status.lock().last_sql = (1594, why, timestamp_now());
        stop.store(true, Ordering::Release);
    }
    let mut attempts: u64 = 0;
    'connect: while !stop.load(Ordering::Acquire) {
        attempts += 1;
        {
            let mut st = status.lock();
            st.io_running = "Connecting";
            st.io_state = "Connecting to source";
            st.connect_attempts = attempts;
        }
        let (mut stream, source_id, checksums) = match connect(
            &src,
            &applier.file,
            applier.exec_pos,
            own_id,
            applier.applied(),
            &applier.executed_set(),
        ) {
            Ok(x) => x,
            Err(ConnectError::Fatal(code, msg)) => {
                status.lock().last_io = (code, msg, timestamp_now());
                break;
            }
            Err(ConnectError::Client(e)) => {
                let (code, msg) = client_error(&e, ER_CONNECT);
                let mut st = status.lock();
                st.last_io = (
                        code,
                        format!(
                            "Error connecting to source '{}@{}:{}'. This was attempt {attempts}/86400, \
                             with a delay of {} seconds between attempts. Message: {msg}",
                            src.user, src.host, src.port, src.connect_retry
                        ),
                        timestamp_now(),
                    );
                drop(st);
                if !wait(src.connect_retry, &stop) {
                    break;
                }
                continue;
            }
        };
        applier.checksums = checksums;
        applier.format_seen = false;
        {
            let mut st = status.lock();
            st.io_running = "Yes";
            st.io_state = "Waiting for source to send event";
            st.source_server_id = source_id;
            st.read_file = applier.file.clone();
            st.read_pos = applier.exec_pos;
        }
        loop {
            if stop.load(Ordering::Acquire) {
                break 'connect;
            }
            let ev = match stream.next() {
                Some(Ok(ev)) => ev,
                Some(Err(e)) => {
                    applier.rollback();
                    let (code, msg) = client_error(&e, ER_LOST);
                    let mut st = status.lock();
                    st.exec_file = applier.file.clone();
                    st.exec_pos = applier.exec_pos;
                    if matches!(e, mysql::Error::MySqlError(_)) {
                        // The source refused the dump (a purged or unknown file, …):
                        // the replica stops, as MySQL's IO thread does.
                        st.last_io = (
                            ER_SOURCE_FATAL,
                            format!(
                                "Got fatal error {code} from source when reading data from \
                                 binary log: '{msg}'"
                            ),
                            timestamp_now(),
                        );
                        break 'connect;
                    }
                    st.last_io = (
                        code,
                        format!("error reading the source's binary log: {msg}"),
                        timestamp_now(),
                    );
                    drop(st);
                    if !wait(src.connect_retry, &stop) {
                        break 'connect;
                    }
                    continue 'connect;
                }
                None => {
                    // The source ended the stream (shutdown): reconnect.
                    applier.rollback();
                    if !wait(src.connect_retry, &stop) {
                        break 'connect;
                    }
                    continue 'connect;
                }
            };
            let h = ev.header();
            let heartbeat = h.event_type_raw() == EventType::HEARTBEAT_EVENT as u8;
            if !heartbeat {
                let mut st = status.lock();
                if h.log_pos() != 0 {
                    st.read_pos = h.log_pos() as u64;
                }
                if h.timestamp() != 0 {
                    st.event_time = h.timestamp();
                }
            }
            let r = applier.apply(&ev);
            if h.event_type_raw() == EventType::ROTATE_EVENT as u8 {
                let mut st = status.lock();
                st.read_file = applier.file.clone();
                st.read_pos = applier.exec_pos;
            }
            let gtid_event = matches!(
                h.event_type_raw(),
                x if x == EventType::GTID_EVENT as u8
                    || x == super::gtid::MARIADB_GTID_EVENT
            );
            match r {
                Ok(committed) => {
                    if committed || gtid_event {
                        let (executed, retrieved) = applier.gtid_texts();
                        let mut st = status.lock();
                        st.retrieved_gtids = retrieved;
                        if committed {
                            st.exec_file = applier.file.clone();
                            st.exec_pos = applier.exec_pos;
                            st.executed_gtids = executed;
                        }
                    }
                }
                Err(e) => {
                    applier.rollback();
                    let mut st = status.lock();
                    st.last_sql = (e.code, e.message, timestamp_now());
                    break 'connect;
                }
            }
        }
    }
    applier.close();
    let mut st = status.lock();
    st.io_running = "No";
    st.sql_running = false;
    st.io_state = "";
}
