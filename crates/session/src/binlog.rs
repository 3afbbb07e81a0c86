//! The session's side of the binary log (`crates/binlog`, format in
//! docs/format/binlog.md): what a commit writes before the engines commit, the
//! non-transactional changes logged at statement end, DDL logged as its text, and the
//! statements about the log (SHOW MASTER STATUS, SHOW BINARY LOGS, SHOW BINLOG EVENTS,
//! SHOW REPLICAS, FLUSH BINARY LOGS, PURGE BINARY LOGS, RESET MASTER).
//!
//! Order at COMMIT, a two-phase commit with the log as coordinator (the steps in
//! docs/format/binlog.md): the engines prepare under a new xid (durable in their redo,
//! group-committed), the recorded row changes go to the log (fsynced with the group
//! under sync_binlog), then the engines commit in the log's order without an fsync of
//! their own. A crash in between is resolved at startup from the log
//! ([`Server::resolve_prepared`]). If the prepare or the log write fails the transaction
//! is rolled back and the error is the COMMIT's. A transaction that changed no logged
//! row, and every transaction while the log is off, commits in one phase as before.

use super::{text_col, Server, Session};
use std::sync::Arc;
use strata_binlog::event::QueryContext;
use strata_binlog::{Binlog, Entry};
use strata_engine::Txn;
use strata_types::privilege::Privs;
use strata_types::{ColumnMeta, EndInfo, Error, FieldType, OkInfo, QueryOutput, Result, Value};

/// A replica that registered with COM_REGISTER_SLAVE.
#[derive(Clone, Debug)]
pub struct ReplicaInfo {
    pub connection_id: u32,
    pub server_id: u32,
    pub host: String,
    pub port: u16,
}

/// The registered replicas (SHOW REPLICAS), by connection.
#[derive(Default)]
pub struct Replicas(parking_lot::Mutex<Vec<ReplicaInfo>>);

impl Replicas {
    pub fn register(&self, r: ReplicaInfo) {
        let mut v = self.0.lock();
        v.retain(|x| x.connection_id != r.connection_id);
        v.push(r);
    }

    pub fn unregister(&self, connection_id: u32) {
        self.0.lock().retain(|x| x.connection_id != connection_id);
    }

    pub fn list(&self) -> Vec<ReplicaInfo> {
        self.0.lock().clone()
    }
}

/// MySQL's numbering of sql_mode flags (the QUERY event's Q_SQL_MODE_CODE).
fn sql_mode_bits(mode: &str) -> u64 {
    const NAMES: [&str; 33] = [
        "REAL_AS_FLOAT",
        "PIPES_AS_CONCAT",
        "ANSI_QUOTES",
        "IGNORE_SPACE",
        "NOT_USED",
        "ONLY_FULL_GROUP_BY",
        "NO_UNSIGNED_SUBTRACTION",
        "NO_DIR_IN_CREATE",
        "POSTGRESQL",
        "ORACLE",
        "MSSQL",
        "DB2",
        "MAXDB",
        "NO_KEY_OPTIONS",
        "NO_TABLE_OPTIONS",
        "NO_FIELD_OPTIONS",
        "MYSQL323",
        "MYSQL40",
        "ANSI",
        "NO_AUTO_VALUE_ON_ZERO",
        "NO_BACKSLASH_ESCAPES",
        "STRICT_TRANS_TABLES",
        "STRICT_ALL_TABLES",
        "NO_ZERO_IN_DATE",
        "NO_ZERO_DATE",
        "ALLOW_INVALID_DATES",
        "ERROR_FOR_DIVISION_BY_ZERO",
        "TRADITIONAL",
        "NO_AUTO_CREATE_USER",
        "HIGH_NOT_PRECEDENCE",
        "NO_ENGINE_SUBSTITUTION",
        "PAD_CHAR_TO_FULL_LENGTH",
        "TIME_TRUNCATE_FRACTIONAL",
    ];
    mode.split(',')
        .filter_map(|m| NAMES.iter().position(|n| n.eq_ignore_ascii_case(m.trim())))
        .fold(0, |acc, i| acc | 1 << i)
}

impl Server {
    /// Starts logging: the server was started with `--log-bin`. Sets the variables that
    /// describe the log. Called once, before clients connect.
    pub fn install_binlog(&self, b: Arc<Binlog>) {
        let o = b.options().clone();
        let g = &self.globals;
        let s = |v: &str| Value::str(v);
        g.set("log_bin", Value::Int(1));
        g.set(
            "log_bin_basename",
            s(&b.basename_path().display().to_string()),
        );
        g.set("log_bin_index", s(&b.index_path().display().to_string()));
        g.set("server_id", Value::Int(o.server_id as i64));
        g.set("server_uuid", s(&strata_binlog::gtid::uuid_text(&b.uuid())));
        g.set("gtid_mode", s("ON"));
        g.set("enforce_gtid_consistency", s("ON"));
        g.set(
            "binlog_checksum",
            s(if o.checksum { "CRC32" } else { "NONE" }),
        );
        g.set("sync_binlog", Value::Int(o.sync as i64));
        g.set(
            "binlog_json_format",
            s(if o.format.json_text { "TEXT" } else { "BINARY" }),
        );
        g.set(
            "binlog_row_metadata",
            s(if o.format.full_metadata {
                "FULL"
            } else {
                "MINIMAL"
            }),
        );
        g.set("max_binlog_size", Value::Int(o.max_size as i64));
        {
            // fsyncs of the log's files: one per commit group under sync_binlog=1
            // (the bench's fsyncs per commit).
            let b = b.clone();
            self.add_status_source(Box::new(move || {
                vec![("Strata_binlog_fsyncs".into(), b.fsyncs())]
            }));
        }
        let _ = self.binlog.set(b);
    }

    /// The binary log, when logging.
    pub fn binlog(&self) -> Option<&Arc<Binlog>> {
        self.binlog.get()
    }

    /// Startup, after [`Server::install_binlog`] (or without a log) and before clients
    /// connect: commits each transaction a crash left prepared in an engine whose xid
    /// the binary log holds and rolls back the others. Without a binary log they are
    /// all committed (MySQL's `--tc-heuristic-recover=COMMIT`: they may have been
    /// acknowledged). Returns (committed, rolled back).
    pub fn resolve_prepared(&self) -> Result<(usize, usize)> {
        let engines = self.catalog.engines();
        let xids: Vec<u64> = engines.iter().flat_map(|e| e.prepared_xids()).collect();
        let in_log = match self.binlog() {
            Some(b) => Some(b.committed_xids(&xids)?),
            None => {
                if !xids.is_empty() {
                    strata_types::log_note!(
                        "{} prepared transaction(s) found and no binary log: committing them",
                        xids.len()
                    );
                }
                None
            }
        };
        let (mut c, mut r) = (0, 0);
        for e in engines.iter() {
            let (ec, er) =
                e.resolve_prepared(&|x| in_log.as_ref().is_none_or(|s| s.contains(&x)))?;
            c += ec;
            r += er;
        }
        Ok((c, r))
    }
}

/// The row changes of `txn` the log gets (taken from it). The replica's position row is
/// this server's own state, not data: MySQL does not log its replication metadata tables
/// either.
pub(crate) fn loggable_rows(txn: &Txn) -> strata_engine::LoggedRows {
    loggable_rows_and_position(txn).0
}

/// [`loggable_rows`], and whether the transaction changed the replica's position row
/// (the applier's commit of a source transaction).
fn loggable_rows_and_position(txn: &Txn) -> (strata_engine::LoggedRows, bool) {
    let mut rows = txn.take_logged_rows();
    let all = rows.len();
    rows.retain(|(t, _)| {
        !(t.db == crate::replica::POSITION_DB && t.name == crate::replica::POSITION_TABLE)
    });
    let position = rows.len() != all;
    (rows, position)
}

impl Session {
    /// The binary log this session writes to: none without `--log-bin` or while
    /// `sql_log_bin` is off.
    pub(crate) fn binlog_on(&self) -> Option<&Arc<Binlog>> {
        self.server.binlog().filter(|_| self.log_bin_on)
    }

    /// The replica's applier: the groups of the source transaction being applied are
    /// logged under the source's GTID `uuid:gno` (MySQL 8's replica with
    /// gtid_mode=ON), not a new one of this server's; None goes back to this server's
    /// own. The first group logged takes it ([`Session::binlog_context`]); a source
    /// transaction that logs nothing else logs an empty group under it when its
    /// position update commits ([`Session::commit_txn`]), so gtid_executed has no hole.
    /// Changes to non-transactional tables wait for that commit too (one group for the
    /// source transaction, not one per applied statement).
    pub fn set_gtid_next(&self, gtid: Option<(strata_binlog::gtid::Uuid, u64)>) {
        *self.gtid_next.lock() = gtid;
    }

    /// The replica's applier: the events logged for the source transaction being
    /// applied carry its originating server's id (the source event's), as MySQL's
    /// replica writes them under log_replica_updates, so a server in a circular or
    /// chained topology recognises and skips its own events; None goes back to this
    /// server's id.
    pub fn set_origin_server_id(&self, id: Option<u32>) {
        *self.origin_server_id.lock() = id;
    }

    /// What every QUERY event this session writes carries, and the GTID of the group
    /// (the applier's GTID_NEXT, taken: one group per GTID).
    pub(crate) fn binlog_context(&self) -> QueryContext {
        let flag = |name: &str| {
            self.get_variable(name, false)
                .ok()
                .and_then(|v| v.truth())
                .unwrap_or(true)
        };
        QueryContext {
            thread_id: self.connection_id,
            db: self.current_db.clone().unwrap_or_default(),
            sql_mode: sql_mode_bits(
                &self
                    .get_variable("sql_mode", false)
                    .map(|v| v.to_text())
                    .unwrap_or_default(),
            ),
            foreign_key_checks: flag("foreign_key_checks"),
            unique_checks: flag("unique_checks"),
            gtid: self.gtid_next.lock().take(),
            server_id: *self.origin_server_id.lock(),
        }
    }

    /// Commits `txn`: its row changes to the binary log first (when logging), then the
    /// engines. A failed log write rolls the transaction back.
    pub(crate) fn commit_txn(&self, txn: Txn) -> Result<()> {
        if let Some(b) = self.binlog_on() {
            let (mut rows, position) = loggable_rows_and_position(&txn);
            // The replica applying a source transaction under the source's GTID: its
            // heap-table rows, held back at statement end, join this group; and the
            // commit of its position update logs the GTID even when nothing else is
            // logged (an empty group).
            let under_source_gtid = self.gtid_next.lock().is_some();
            if under_source_gtid {
                let held = txn.take_nontransactional_rows();
                if !held.is_empty() {
                    rows.splice(0..0, held);
                }
            }
            let ddl = txn.take_logged_ddl();
            if !rows.is_empty() || ddl.is_some() || (under_source_gtid && position) {
                let cx = self.binlog_context();
                // CREATE TABLE … SELECT that copied no row (or whose rows are a heap
                // table's, logged at statement end): the definition alone.
                if let (Some(text), true) = (&ddl, rows.is_empty()) {
                    if let Err(e) = b.write(&Entry::Ddl { cx: &cx, text }) {
                        let _ = txn.rollback();
                        return Err(e);
                    }
                    return txn.commit();
                }
                let xid = b.new_xid();
                if let Err(e) = txn.prepare(xid) {
                    let _ = txn.rollback();
                    return Err(e);
                }
                let entry = match &ddl {
                    // CREATE TABLE … SELECT: the table and its rows, one transaction.
                    Some(text) => Entry::CreateSelect {
                        cx: &cx,
                        text,
                        changes: &rows,
                        xid,
                    },
                    None => Entry::Rows {
                        cx: &cx,
                        changes: &rows,
                        xid: Some(xid),
                    },
                };
                let mut txn = Some(txn);
                let r = b.commit_ordered(&entry, || match txn.take() {
                    Some(t) => t.commit(),
                    None => Ok(()),
                });
                // Not in the log (the write failed): undo the prepared transaction.
                if let Some(t) = txn {
                    let _ = t.rollback();
                }
                return r;
            }
        }
        txn.commit()
    }

    /// Statement end: the changes it made to non-transactional (heap) tables, which no
    /// ROLLBACK undoes, are logged now as their own transaction, as MySQL logs MyISAM.
    pub(crate) fn log_nontransactional(&self, txn: &Txn) -> Result<()> {
        let Some(b) = self.binlog_on() else {
            return Ok(());
        };
        // The replica applying a source transaction under its GTID: the rows wait for
        // the transaction's commit (one group per GTID), outside an XA branch (whose
        // prepare group takes the GTID).
        if self.xa.is_none() && self.gtid_next.lock().is_some() {
            return Ok(());
        }
        let rows = txn.take_nontransactional_rows();
        if rows.is_empty() {
            return Ok(());
        }
        let cx = self.binlog_context();
        // CREATE TABLE … SELECT into a heap table: the CREATE TABLE first, then the
        // rows, as MySQL logs a MyISAM one.
        if let Some(text) = txn.take_logged_ddl() {
            b.write(&Entry::Ddl {
                cx: &cx,
                text: &text,
            })?;
        }
        b.write(&Entry::Rows {
            cx: &cx,
            changes: &rows,
            xid: None,
        })
    }

    /// A DDL statement that succeeded, logged as its text. Account statements (CREATE
    /// USER, GRANT, …) are not logged: their text can hold a password.
    pub(crate) fn log_ddl(&self, text: &str) -> Result<()> {
        let Some(b) = self.binlog_on() else {
            return Ok(());
        };
        let w = strata_sql::text::words(text);
        let word = |i: usize| w.get(i).map(|x| x.to_ascii_uppercase()).unwrap_or_default();
        let account = matches!(word(0).as_str(), "GRANT" | "REVOKE")
            || (matches!(word(0).as_str(), "CREATE" | "ALTER" | "DROP" | "RENAME")
                && matches!(word(1).as_str(), "USER" | "ROLE"));
        if account {
            return Ok(());
        }
        let cx = self.binlog_context();
        b.write(&Entry::Ddl { cx: &cx, text })
    }

    /// COM_REGISTER_SLAVE: remembers the replica for SHOW REPLICAS while it is connected
    /// (1227 without REPLICATION SLAVE, as MySQL).
    pub fn register_replica(&mut self, server_id: u32, host: &str, port: u16) -> Result<()> {
        self.need_global(Privs::REPL_SLAVE, None, "REPLICATION SLAVE")?;
        self.server.replicas.register(ReplicaInfo {
            connection_id: self.connection_id,
            server_id,
            host: host.to_string(),
            port,
        });
        Ok(())
    }

    /// COM_BINLOG_DUMP (`gtids` None) or COM_BINLOG_DUMP_GTID: the events to stream.
    pub fn binlog_dump(
        &mut self,
        file: &str,
        pos: u64,
        gtids: Option<&[u8]>,
    ) -> Result<strata_binlog::dump::Dump> {
        self.need_global(Privs::REPL_SLAVE, None, "REPLICATION SLAVE")?;
        let Some(b) = self.server.binlog().cloned() else {
            return Err(Error::MasterFatalReadingBinlog(
                "Binary log is not open".into(),
            ));
        };
        match gtids {
            Some(bytes) => {
                let have = strata_binlog::gtid::decode(bytes)
                    .ok_or_else(|| Error::MasterFatalReadingBinlog("malformed GTID set".into()))?;
                strata_binlog::dump::Dump::from_gtids(b, have)
            }
            None => strata_binlog::dump::Dump::from_position(b, file, pos),
        }
    }

    /// The replica's `SET @master_heartbeat_period` (nanoseconds; 0 or unset: none).
    pub fn heartbeat_period(&self) -> Option<std::time::Duration> {
        let v = self
            .user_vars
            .lock()
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("master_heartbeat_period"))
            .and_then(|(_, v)| v.to_f64())?;
        (v >= 1.0).then(|| std::time::Duration::from_nanos(v as u64))
    }

    /// The statements about the binary log; None when `sql` is not one of them.
    pub(crate) fn binlog_statement(
        &mut self,
        sql: &str,
        out: &mut dyn QueryOutput,
    ) -> Option<Result<()>> {
        let w = strata_sql::text::words(sql);
        let u: Vec<String> = w.iter().map(|x| x.to_ascii_uppercase()).collect();
        let us: Vec<&str> = u.iter().map(String::as_str).collect();
        // The privileges MySQL 8 asks for each (1227 without them).
        let allowed = match us.as_slice() {
            ["SHOW", "MASTER" | "BINARY", "STATUS" | "LOGS" | "LOG", ..] => self
                .need_global(Privs::REPL_CLIENT, None, "SUPER, REPLICATION CLIENT")
                .or_else(|_| self.need_global(Privs::SUPER, None, "SUPER, REPLICATION CLIENT")),
            ["SHOW", "BINLOG", "EVENTS", ..]
            | ["SHOW", "REPLICAS"]
            | ["SHOW", "SLAVE", "HOSTS"] => {
                self.need_global(Privs::REPL_SLAVE, None, "REPLICATION SLAVE")
            }
            ["FLUSH", "BINARY", "LOGS"] | ["FLUSH", "LOGS"] | ["RESET", ..] => {
                self.need_global(Privs::RELOAD, None, "RELOAD")
            }
            ["PURGE", ..] => {
                self.need_global(Privs::SUPER, Some("BINLOG_ADMIN"), "SUPER or BINLOG_ADMIN")
            }
            _ => Ok(()),
        };
        if let Err(e) = allowed {
            return Some(Err(e));
        }
        let binlog = self.server.binlog().cloned();
        let r = match us.as_slice() {
            ["SHOW", "MASTER", "STATUS"] | ["SHOW", "BINARY", "LOG", "STATUS"] => {
                self.show_master_status(binlog.as_deref(), out)
            }
            ["SHOW", "BINARY", "LOGS"] | ["SHOW", "MASTER", "LOGS"] => match &binlog {
                Some(b) => show_binary_logs(b, out),
                None => Err(Error::NoBinaryLogging),
            },
            ["SHOW", "BINLOG", "EVENTS", ..] => self.show_binlog_events(binlog.as_deref(), &w, out),
            ["SHOW", "REPLICAS"] | ["SHOW", "SLAVE", "HOSTS"] => {
                self.show_replicas(us[1] == "REPLICAS", out)
            }
            ["FLUSH", "BINARY", "LOGS"] | ["FLUSH", "LOGS"] => {
                let r = self.commit_open().and_then(|()| match &binlog {
                    Some(b) => b.flush_logs(),
                    None => Ok(()),
                });
                r.and_then(|()| out.ok(&OkInfo::default()))
            }
            ["PURGE", "BINARY" | "MASTER", "LOGS", "TO", _] => {
                let name = w[4].trim_start_matches('\u{0}').to_string();
                match &binlog {
                    Some(b) => b.purge_to(&name),
                    None => Ok(()),
                }
                .and_then(|()| out.ok(&OkInfo::default()))
            }
            ["PURGE", "BINARY" | "MASTER", "LOGS", "BEFORE", ..] => {
                let when = w[4..]
                    .iter()
                    .map(|x| x.trim_start_matches('\u{0}'))
                    .collect::<Vec<_>>()
                    .join(" ");
                match strata_types::DateTime::parse(&when) {
                    None => Err(Error::Syntax(sql.chars().take(80).collect())),
                    Some(t) => match &binlog {
                        Some(b) => b.purge_before(t.to_unix().max(0) as u64),
                        None => Ok(()),
                    }
                    .and_then(|()| out.ok(&OkInfo::default())),
                }
            }
            ["RESET", "MASTER"] | ["RESET", "BINARY", "LOGS", "AND", "GTIDS"] => {
                let r = self.commit_open().and_then(|()| match &binlog {
                    Some(b) => b.reset(),
                    None => Err(Error::NoBinaryLogging),
                });
                r.and_then(|()| out.ok(&OkInfo::default()))
            }
            _ => return None,
        };
        Some(r)
    }

    fn show_master_status(&self, b: Option<&Binlog>, out: &mut dyn QueryOutput) -> Result<()> {
        let mut pos = ColumnMeta::computed("Position", FieldType::LongLong);
        pos.flags |= strata_types::output::flags::UNSIGNED | strata_types::output::flags::NUM;
        out.columns(&[
            text_col("File"),
            pos,
            text_col("Binlog_Do_DB"),
            text_col("Binlog_Ignore_DB"),
            text_col("Executed_Gtid_Set"),
        ])?;
        if let Some(b) = b {
            let s = b.status();
            out.row(&[
                Value::str(&s.file),
                Value::UInt(s.position),
                Value::str(""),
                Value::str(""),
                Value::str(&s.gtid_executed),
            ])?;
        }
        out.end(&EndInfo::default())
    }

    /// SHOW BINLOG EVENTS [IN 'log'] [FROM pos] [LIMIT [offset,] count].
    fn show_binlog_events(
        &self,
        b: Option<&Binlog>,
        w: &[String],
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let syntax = || Error::Syntax(w.join(" ").chars().take(80).collect());
        let mut i = 3;
        let mut file = None;
        let mut from = 4u64;
        let (mut offset, mut limit) = (0usize, None);
        let num = |s: &String| s.parse::<u64>().map_err(|_| syntax());
        while i < w.len() {
            match w[i].to_ascii_uppercase().as_str() {
                "IN" => {
                    let f = w.get(i + 1).ok_or_else(syntax)?;
                    file = Some(f.trim_start_matches('\u{0}').to_string());
                    i += 2;
                }
                "FROM" => {
                    from = num(w.get(i + 1).ok_or_else(syntax)?)?;
                    i += 2;
                }
                "LIMIT" => {
                    let a = num(w.get(i + 1).ok_or_else(syntax)?)?;
                    if w.get(i + 2).is_some_and(|x| x == ",") {
                        offset = a as usize;
                        limit = Some(num(w.get(i + 3).ok_or_else(syntax)?)? as usize);
                        i += 4;
                    } else {
                        limit = Some(a as usize);
                        i += 2;
                    }
                }
                _ => return Err(syntax()),
            }
        }
        let num_col = |name: &str| {
            let mut c = ColumnMeta::computed(name, FieldType::LongLong);
            c.flags |= strata_types::output::flags::UNSIGNED | strata_types::output::flags::NUM;
            c
        };
        let rows = match b {
            Some(b) => b.show_events(file.as_deref(), from, offset, limit)?,
            None => Vec::new(),
        };
        out.columns(&[
            text_col("Log_name"),
            num_col("Pos"),
            text_col("Event_type"),
            num_col("Server_id"),
            num_col("End_log_pos"),
            text_col("Info"),
        ])?;
        for e in rows {
            out.row(&[
                Value::str(&e.log_name),
                Value::UInt(e.pos),
                Value::str(e.event_type),
                Value::UInt(e.server_id as u64),
                Value::UInt(e.end_log_pos),
                Value::str(&e.info),
            ])?;
        }
        out.end(&EndInfo::default())
    }

    fn show_replicas(&self, new_names: bool, out: &mut dyn QueryOutput) -> Result<()> {
        let num_col = |name: &str| {
            let mut c = ColumnMeta::computed(name, FieldType::LongLong);
            c.flags |= strata_types::output::flags::UNSIGNED | strata_types::output::flags::NUM;
            c
        };
        let names = if new_names {
            ["Server_Id", "Host", "Port", "Source_Id", "Replica_UUID"]
        } else {
            ["Server_id", "Host", "Port", "Master_id", "Slave_UUID"]
        };
        out.columns(&[
            num_col(names[0]),
            text_col(names[1]),
            num_col(names[2]),
            num_col(names[3]),
            text_col(names[4]),
        ])?;
        let source_id = self
            .server
            .globals
            .get("server_id")
            .to_i64()
            .unwrap_or(1)
            .max(0) as u64;
        for r in self.server.replicas.list() {
            out.row(&[
                Value::UInt(r.server_id as u64),
                Value::str(&r.host),
                Value::UInt(r.port as u64),
                Value::UInt(source_id),
                Value::str(""),
            ])?;
        }
        out.end(&EndInfo::default())
    }
}

fn show_binary_logs(b: &Binlog, out: &mut dyn QueryOutput) -> Result<()> {
    let mut size = ColumnMeta::computed("File_size", FieldType::LongLong);
    size.flags |= strata_types::output::flags::UNSIGNED | strata_types::output::flags::NUM;
    out.columns(&[text_col("Log_name"), size, text_col("Encrypted")])?;
    for (name, len) in b.files() {
        out.row(&[Value::str(&name), Value::UInt(len), Value::str("No")])?;
    }
    out.end(&EndInfo::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_mode_bits_use_mysql_numbering() {
        assert_eq!(
            sql_mode_bits("STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION"),
            0x20_0000 | 0x4000_0000
        );
        assert_eq!(sql_mode_bits(""), 0);
        assert_eq!(sql_mode_bits("ansi_quotes"), 4);
    }
}
