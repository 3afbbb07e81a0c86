//! Strata as a replica: follows a MariaDB, MySQL or Strata source over the replication
//! protocol and applies its row events, by file and position or by GTID
//! (SOURCE_AUTO_POSITION=1 for a MySQL-style source, MASTER_USE_GTID for MariaDB).
//!
//! A tour:
//! - The statements (`CHANGE REPLICATION SOURCE TO` / `CHANGE MASTER TO`, `START`,
//!   `STOP`, `RESET REPLICA`, `SHOW REPLICA STATUS`, and the SLAVE spellings) are parsed
//!   and privilege-checked by the session crate (`strata_session::replica`), which calls
//!   the [`ReplicaControl`] this module installs on the server at startup.
//! - [`settings`]: the source (host, port, user, password, retry, GTID positioning) and
//!   the applied position (file and offset, and the source's GTIDs applied: [`gtid`]),
//!   kept in the btree table `mysql.slave_relay_log_info`.
//! - [`Replica::start`] spawns one replication thread ([`thread`]): it connects to the
//!   source with the MySQL protocol (the `mysql` crate: authentication, then
//!   COM_REGISTER_SLAVE and COM_BINLOG_DUMP from the stored position), reads events
//!   (mysql_common's parser) and hands each to the [`apply::Applier`], which runs them
//!   on a system session and commits each source transaction together with the update
//!   of the position row. There is no relay log: the receiver and the applier are the
//!   same thread, so Replica_IO_Running and Replica_SQL_Running start and stop
//!   together, and after a crash the replica asks the source again from the position
//!   the last committed transaction stored.
//! - Errors (source unreachable, authentication, an event that cannot be applied) are
//!   kept with MySQL's numbers for SHOW REPLICA STATUS; connection errors are retried
//!   every SOURCE_CONNECT_RETRY seconds, an apply error stops the thread.
//! - [`decode`]: row-event values as the exact `Value`s the engine API applies;
//!   [`rows`]: one rows event applied on a session, used by the applier and by
//!   [`binlog_statement`], the events of a client's `BINLOG '…'` statements
//!   (`mysqlbinlog` replays), installed on the server at startup as well.

pub mod apply;
pub mod binlog_statement;
pub mod decode;
pub mod gtid;
pub mod rows;
pub mod settings;
mod thread;

use parking_lot::Mutex;
use settings::Source;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use strata_session::replica::ReplicaControl;
use strata_session::{Server, Session};
use strata_types::{Error, Result, Value};

/// The replication thread's state, as SHOW REPLICA STATUS shows it.
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// "No", "Connecting" or "Yes".
    pub io_running: &'static str,
    pub sql_running: bool,
    pub io_state: &'static str,
    pub source: Source,
    /// The source file and position after the last event received.
    pub read_file: String,
    pub read_pos: u64,
    /// After the last transaction applied (what the position table holds).
    pub exec_file: String,
    pub exec_pos: u64,
    pub source_server_id: u32,
    /// The source's timestamp of the event being applied (Seconds_Behind_Source).
    pub event_time: u32,
    pub last_io: (u16, String, String),
    pub last_sql: (u16, String, String),
    pub connect_attempts: u64,
    /// The source's GTIDs applied here (Executed_Gtid_Set) and those with the
    /// transaction being received (Retrieved_Gtid_Set).
    pub executed_gtids: String,
    pub retrieved_gtids: String,
}

impl Status {
    /// The source and the stored position, as both the read and the executed one.
    fn show_position(&mut self, src: &Source) {
        self.source = src.clone();
        self.exec_file = src.log_file.clone();
        self.exec_pos = src.log_pos;
        self.read_file = src.log_file.clone();
        self.read_pos = src.log_pos;
        let shown = gtid::Applied::load(&src.gtid_executed, &src.gtid_slave_pos)
            .map(|a| a.shown())
            .unwrap_or_default();
        self.executed_gtids = shown.clone();
        self.retrieved_gtids = shown;
    }
}

pub struct Replica {
    server: Arc<Server>,
    status: Arc<Mutex<Status>>,
    thread: Mutex<Option<(JoinHandle<()>, Arc<AtomicBool>)>>,
}

/// Connection ids of the replica's system sessions, far above the clients'.
const SYSTEM_CONNECTION_ID: u32 = u32::MAX - 16;

impl Replica {
    /// Installs the replica on `server`; starts it when a source is configured (as
    /// MySQL starts its replication threads at startup).
    pub fn install(server: &Arc<Server>) -> Result<Arc<Replica>> {
        let r = Arc::new(Replica {
            server: server.clone(),
            status: Arc::new(Mutex::new(Status {
                io_running: "No",
                ..Default::default()
            })),
            thread: Mutex::new(None),
        });
        server.install_replica(r.clone());
        // BINLOG statements (mysqlbinlog replays) apply rows with the applier's code.
        server.install_binlog_events(Arc::new(binlog_statement::BinlogStatements));
        let configured = r.load()?;
        if let Some(src) = configured {
            r.show_stored(&src);
            if !src.host.is_empty() {
                r.start()?;
            }
        }
        Ok(r)
    }

    fn session(&self, offset: u32) -> Result<Session> {
        Session::system(self.server.clone(), SYSTEM_CONNECTION_ID + offset)
    }

    fn load(&self) -> Result<Option<Source>> {
        let mut s = self.session(1)?;
        let r = settings::load(&mut s);
        s.close();
        r
    }

    fn show_stored(&self, src: &Source) {
        self.status.lock().show_position(src);
    }

    fn running(&self) -> bool {
        self.thread
            .lock()
            .as_ref()
            .is_some_and(|(h, _)| !h.is_finished())
    }
}

/// `YYMMDD hh:mm:ss` (UTC), MySQL's error timestamps.
fn timestamp_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let t = strata_types::DateTime::from_unix(secs, 0);
    let s = t.to_string();
    // "YYYY-MM-DD hh:mm:ss" → "YYMMDD hh:mm:ss"
    if s.len() >= 19 {
        format!("{}{}{} {}", &s[2..4], &s[5..7], &s[8..10], &s[11..19])
    } else {
        s
    }
}

impl ReplicaControl for Replica {
    fn change_source(&self, options: &[(String, String)]) -> Result<()> {
        if self.running() {
            return Err(Error::ReplicaMustStop);
        }
        let mut s = self.session(1)?;
        let r = (|| {
            let mut src = settings::load(&mut s)?.unwrap_or_default();
            src.change(options)?;
            settings::save(&mut s, &src)?;
            Ok(src)
        })();
        s.close();
        let src = r?;
        self.show_stored(&src);
        Ok(())
    }

    fn start(&self) -> Result<bool> {
        let mut slot = self.thread.lock();
        if slot.as_ref().is_some_and(|(h, _)| !h.is_finished()) {
            return Ok(false);
        }
        if let Some((h, _)) = slot.take() {
            let _ = h.join();
        }
        let src = self
            .load()?
            .filter(|s| !s.host.is_empty())
            .ok_or(Error::ReplicaNotConfigured)?;
        let applier_session = self.session(2)?;
        {
            let mut st = self.status.lock();
            st.show_position(&src);
            st.io_running = "Connecting";
            st.io_state = "Connecting to source";
            st.sql_running = true;
            // START REPLICA clears the last errors, as in MySQL.
            st.last_io = Default::default();
            st.last_sql = Default::default();
            st.connect_attempts = 0;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (status, stop2) = (self.status.clone(), stop.clone());
        let own_id = self.server.globals.get("server_id").to_i64().unwrap_or(1) as u32;
        let h = std::thread::Builder::new()
            .name("replica".into())
            .spawn(move || thread::run(applier_session, src, own_id, status, stop2))
            .map_err(|e| Error::Io(e.to_string()))?;
        *slot = Some((h, stop));
        Ok(true)
    }

    fn stop(&self) -> Result<bool> {
        let taken = self.thread.lock().take();
        match taken {
            Some((h, stop)) => {
                let was_running = !h.is_finished();
                stop.store(true, Ordering::Release);
                let _ = h.join();
                Ok(was_running)
            }
            None => Ok(false),
        }
    }

    fn reset(&self, all: bool) -> Result<()> {
        if self.running() {
            return Err(Error::ReplicaMustStop);
        }
        let mut s = self.session(1)?;
        let r = settings::reset(&mut s, all);
        s.close();
        r?;
        let source = if all {
            Source::default()
        } else {
            self.load()?.unwrap_or_default()
        };
        let mut st = self.status.lock();
        *st = Status {
            io_running: "No",
            ..Default::default()
        };
        st.show_position(&source);
        Ok(())
    }

    fn status(&self) -> (Vec<&'static str>, Option<Vec<Value>>) {
        let running = self.running();
        let st = self.status.lock().clone();
        let configured = !st.source.host.is_empty();
        (
            COLUMNS.to_vec(),
            configured.then(|| status_row(&st, running)),
        )
    }
}

/// SHOW REPLICA STATUS's columns, MySQL 8.0's order.
const COLUMNS: [&str; 59] = [
    "Replica_IO_State",
    "Source_Host",
    "Source_User",
    "Source_Port",
    "Connect_Retry",
    "Source_Log_File",
    "Read_Source_Log_Pos",
    "Relay_Log_File",
    "Relay_Log_Pos",
    "Relay_Source_Log_File",
    "Replica_IO_Running",
    "Replica_SQL_Running",
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Last_Errno",
    "Last_Error",
    "Skip_Counter",
    "Exec_Source_Log_Pos",
    "Relay_Log_Space",
    "Until_Condition",
    "Until_Log_File",
    "Until_Log_Pos",
    "Source_SSL_Allowed",
    "Source_SSL_CA_File",
    "Source_SSL_CA_Path",
    "Source_SSL_Cert",
    "Source_SSL_Cipher",
    "Source_SSL_Key",
    "Seconds_Behind_Source",
    "Source_SSL_Verify_Server_Cert",
    "Last_IO_Errno",
    "Last_IO_Error",
    "Last_SQL_Errno",
    "Last_SQL_Error",
    "Replicate_Ignore_Server_Ids",
    "Source_Server_Id",
    "Source_UUID",
    "Source_Info_File",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Replica_SQL_Running_State",
    "Source_Retry_Count",
    "Source_Bind",
    "Last_IO_Error_Timestamp",
    "Last_SQL_Error_Timestamp",
    "Source_SSL_Crl",
    "Source_SSL_Crlpath",
    "Retrieved_Gtid_Set",
    "Executed_Gtid_Set",
    "Auto_Position",
    "Replicate_Rewrite_DB",
    "Channel_Name",
    "Source_TLS_Version",
    "Source_public_key_path",
    "Get_Source_public_key",
];

fn status_row(st: &Status, running: bool) -> Vec<Value> {
    let s = |x: &str| Value::str(x);
    let u = |x: u64| Value::UInt(x);
    let yes_no = |b: bool| s(if b { "Yes" } else { "No" });
    let io_running = if running { st.io_running } else { "No" };
    let sql_running = running && st.sql_running;
    let behind = if io_running == "Yes" && sql_running {
        if st.read_file == st.exec_file && st.read_pos <= st.exec_pos {
            u(0)
        } else {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            u(now.saturating_sub(st.event_time as u64))
        }
    } else {
        Value::Null
    };
    // Last_Errno / Last_Error: the SQL error, as MySQL shows it.
    let (sql_no, sql_msg, sql_ts) = &st.last_sql;
    let (io_no, io_msg, io_ts) = &st.last_io;
    vec![
        s(if running { st.io_state } else { "" }),
        s(&st.source.host),
        s(&st.source.user),
        u(st.source.port as u64),
        u(st.source.connect_retry as u64),
        s(&st.read_file),
        u(st.read_pos),
        // No relay log: the replica applies what it reads.
        s(""),
        u(0),
        s(&st.exec_file),
        s(io_running),
        yes_no(sql_running),
        s(""),
        s(""),
        s(""),
        s(""),
        s(""),
        s(""),
        u(*sql_no as u64),
        s(sql_msg),
        u(0),
        u(st.exec_pos),
        u(0),
        s("None"),
        s(""),
        u(0),
        s("No"),
        s(""),
        s(""),
        s(""),
        s(""),
        s(""),
        behind,
        s("No"),
        u(*io_no as u64),
        s(io_msg),
        u(*sql_no as u64),
        s(sql_msg),
        s(""),
        u(st.source_server_id as u64),
        s(""),
        s("mysql.slave_relay_log_info"),
        u(0),
        Value::Null,
        s(if sql_running {
            "Replica has read all relay log; waiting for more updates"
        } else {
            ""
        }),
        u(86400),
        s(""),
        s(io_ts),
        s(sql_ts),
        s(""),
        s(""),
        s(&st.retrieved_gtids),
        s(&st.executed_gtids),
        u(u64::from(st.source.gtid_positioned())),
        s(""),
        s(""),
        s(""),
        s(""),
        u(0),
    ]
}
