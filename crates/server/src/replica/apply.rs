//! The applier: turns the source's events into statements on a system session of this
//! server. QUERY events carry DDL (run as written, in the event's database) and the
//! BEGIN / COMMIT around row events; TABLE_MAP + WRITE/UPDATE/DELETE_ROWS (v1 and v2,
//! as MariaDB and MySQL write them, with full or partial row images) are decoded to
//! exact values (`decode`) and applied through the engine API (`rows`, shared with
//! the BINLOG statements of a `mysqlbinlog` replay)
//! ([`Session::apply_row_event`]: no SQL text, no triggers, the row found by the
//! primary key, a unique key or the before image). A
//! transaction ends at its XID (or COMMIT): the position row is updated in the same
//! transaction, then it commits — so the tables and the stored position never disagree.
//! The position includes the transaction's GTID (from the GTID event that starts it:
//! MySQL's uuid:gno or MariaDB's domain-server-seq, `gtid`), which GTID positioning
//! sends to the source after a restart. MariaDB's GTID event (which a replica that
//! declares the GTID capability gets instead of a BEGIN query) opens the transaction,
//! unless it is flagged standalone (DDL).
//! Applied changes go to this server's binary log like any other (MySQL 8's
//! `log_replica_updates=ON`), so a replica of this server sees them; their events carry
//! the originating server's id, not this server's, as MySQL's replica logs them. A transaction of
//! a MySQL-style source (its GTID event carries `uuid:gno`) is logged under that GTID,
//! as a MySQL 8 replica with gtid_mode=ON logs it (the session's GTID_NEXT,
//! [`Session::set_gtid_next`]), and one whose GTID this server has executed already —
//! in its binary log's gtid_executed or in the GTIDs the position row holds — is
//! skipped whole (MySQL's auto-skip), its position recorded. MariaDB's transactions
//! get this server's own GTIDs.

use super::gtid::{parse_mariadb_gtid, Applied, Pending, MARIADB_GTID_EVENT};
use super::rows;
use super::settings::{position_update, run};
use mysql::binlog::events::{Event, EventData, RowsEventData, TableMapEvent};
use std::collections::HashMap;
use strata_session::Session;
use strata_types::Error;

/// An event that could not be applied: MySQL's error number and text for
/// Last_SQL_Errno / Last_SQL_Error.
#[derive(Debug)]
pub struct ApplyError {
    pub code: u16,
    pub message: String,
}

pub struct Applier {
    session: Session,
    /// Table maps of the current transaction, by table id.
    maps: HashMap<u64, TableMapEvent<'static>>,
    /// The source file events come from (ROTATE moves it on).
    pub file: String,
    /// Position after the last event applied and committed.
    pub exec_pos: u64,
    /// Inside BEGIN … XID (or XA START … XA_PREPARE).
    in_txn: bool,
    /// Inside an XA prepare group: the xid as the source wrote it after `XA START`.
    xa_open: Option<String>,
    /// The prepare group being received is one this server prepared already (a crash
    /// came between its XA PREPARE and the position update): skipped to its end.
    xa_skipping: bool,
    /// No transaction applied since the applier started: the first group may be one
    /// whose effect is here but whose position update was lost (XA only).
    fresh: bool,
    /// The server id events of this server carry (skipped: a circular topology's own).
    own_server_id: u32,
    /// The source's events carry CRC32 checksums (its binlog_checksum), and whether
    /// this connection's FORMAT_DESCRIPTION arrived yet.
    pub checksums: bool,
    pub format_seen: bool,
    /// The source's GTIDs applied (what the position row holds) and the GTID of the
    /// transaction being received.
    applied: Applied,
    pending: Option<Pending>,
    /// Skipping a source transaction whose GTID was executed here already: Some(open),
    /// `open` once the group's BEGIN (XA START, …) has passed, so that a QUERY event
    /// then is inside the group rather than a DDL group of its own.
    gtid_skip: Option<bool>,
}

fn bad(e: Error) -> ApplyError {
    ApplyError {
        code: e.code(),
        message: e.to_string(),
    }
}

fn ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

impl Applier {
    pub fn new(
        session: Session,
        file: String,
        pos: u64,
        own_server_id: u32,
        applied: Applied,
    ) -> Applier {
        Applier {
            applied,
            pending: None,
            gtid_skip: None,
            session,
            maps: HashMap::new(),
            file,
            exec_pos: pos,
            in_txn: false,
            xa_open: None,
            xa_skipping: false,
            fresh: true,
            own_server_id,
            checksums: true,
            format_seen: false,
        }
    }

    /// Ends the applier's session (the thread is done).
    pub fn close(mut self) {
        self.rollback();
        self.session.close();
    }

    /// Abandons a transaction the source did not finish sending (connection lost):
    /// it will be sent again from the stored position.
    pub fn rollback(&mut self) {
        self.xa_skipping = false;
        self.gtid_skip = None;
        self.session.set_gtid_next(None);
        if let Some(x) = self.xa_open.take() {
            // An XA branch not prepared yet: ended and rolled back (it comes again).
            let _ = run(&mut self.session, &format!("XA END {x}"));
            let _ = run(&mut self.session, &format!("XA ROLLBACK {x}"));
            self.in_txn = false;
        }
        if self.in_txn {
            let _ = run(&mut self.session, "ROLLBACK");
            self.in_txn = false;
        }
        self.pending = None;
        self.maps.clear();
    }

    /// The source's GTIDs applied (committed with the rows).
    pub fn applied(&self) -> &Applied {
        &self.applied
    }

    /// What SOURCE_AUTO_POSITION asks the source with: the GTIDs applied, and with
    /// this server's binary log on everything in its gtid_executed (MySQL's replica
    /// sends gtid_executed), which holds the source GTIDs of the transactions applied
    /// under them.
    pub fn executed_set(&self) -> strata_binlog::gtid::GtidSet {
        let mut set = self.applied.mysql.clone();
        if let Some(b) = self.session.server().binlog() {
            set.union(&b.executed_set());
        }
        set
    }

    /// Whether `uuid:gno` was executed here already (the auto-skip).
    fn executed(&self, uuid: &[u8; 16], gno: u64) -> bool {
        self.applied.mysql.contains(uuid, gno)
            || self
                .session
                .server()
                .binlog()
                .is_some_and(|b| b.executed_contains(uuid, gno))
    }

    /// An event of a transaction being skipped (`gtid_skip`): None when the event is
    /// not one of the group's (a rotation, …: applied as usual); Some(true) when it
    /// ended the group, whose position is then recorded.
    fn skip_event(&mut self, data: &EventData<'_>) -> Option<bool> {
        let open = self.gtid_skip?;
        let ends = match data {
            EventData::XidEvent(_) | EventData::XaPrepareLogEvent(_) => true,
            EventData::QueryEvent(q) => {
                let text = q.query();
                let t = text.trim();
                let upper: Vec<String> = t
                    .split_whitespace()
                    .take(2)
                    .map(|w| w.to_ascii_uppercase())
                    .collect();
                let w = |i: usize| upper.get(i).map_or("", String::as_str);
                let opens = w(0) == "BEGIN"
                    || (w(0) == "XA" && matches!(w(1), "START" | "BEGIN" | "END"))
                    || t.to_ascii_uppercase().ends_with("START TRANSACTION");
                if opens {
                    self.gtid_skip = Some(true);
                    false
                } else {
                    // COMMIT, XA COMMIT / ROLLBACK, or a DDL group's only event; a
                    // comment inside an open group is not its end.
                    w(0) == "COMMIT" || w(0) == "XA" || !open
                }
            }
            EventData::TableMapEvent(_) | EventData::RowsEvent(_) => false,
            _ => return None,
        };
        Some(ends)
    }

    /// Executed_Gtid_Set's text, and Retrieved_Gtid_Set's (with the transaction being
    /// received).
    pub fn gtid_texts(&self) -> (String, String) {
        (
            self.applied.shown(),
            self.applied.with(self.pending).shown(),
        )
    }

    /// Applies one event. `Ok(true)`: a commit happened (the position moved).
    pub fn apply(&mut self, ev: &Event) -> std::result::Result<bool, ApplyError> {
        let h = ev.header();
        // log_pos: where the next event starts (0 for artificial events).
        let next = h.log_pos() as u64;
        // What this server logs for the transaction keeps the id of the server the
        // change came from (MySQL's replica does), so a server down a chain or around a
        // circle skips its own.
        if h.server_id() != self.own_server_id && h.server_id() != 0 {
            self.session.set_origin_server_id(Some(h.server_id()));
        }
        if h.event_type_raw() == MARIADB_GTID_EVENT {
            let (domain, seq, standalone) =
                parse_mariadb_gtid(ev.data()).ok_or_else(|| ApplyError {
                    code: 1594,
                    message: "Relay log read failure: a short MariaDB GTID event".into(),
                })?;
            self.pending = Some(Pending::Maria {
                domain,
                server: h.server_id(),
                seq,
            });
            if !standalone {
                self.begin()?;
            }
            return Ok(false);
        }
        let data = ev.read_data().map_err(|e| ApplyError {
            code: 1594,
            message: format!("Relay log read failure: could not parse an event: {e}"),
        })?;
        let Some(data) = data else {
            return Ok(false);
        };
        let own = h.server_id() == self.own_server_id;
        match self.skip_event(&data) {
            Some(true) => {
                self.gtid_skip = None;
                self.exec_pos = next;
                self.commit_position(false)?;
                return Ok(true);
            }
            Some(false) => return Ok(false),
            None => {}
        }
        match data {
            EventData::GtidEvent(g) => {
                if g.is_tagged() {
                    return Err(bad(Error::NotSupported(
                        "tagged GTIDs (MySQL 8.4's uuid:tag:gno)".into(),
                    )));
                }
                let (uuid, gno) = (g.sid(), g.gno());
                self.pending = Some(Pending::Mysql(uuid, gno));
                if self.executed(&uuid, gno) {
                    self.gtid_skip = Some(false);
                    self.session.set_gtid_next(None);
                } else {
                    self.session.set_gtid_next(Some((uuid, gno)));
                }
                Ok(false)
            }
            EventData::AnonymousGtidEvent(_) => {
                self.pending = None;
                self.session.set_gtid_next(None);
                Ok(false)
            }
            EventData::RotateEvent(r) => {
                let mut name = r.name_raw().to_vec();
                // The rotation a dump starts with comes before the FORMAT_DESCRIPTION
                // that says events carry checksums, so the parser takes the checksum
                // for the end of the name.
                if !self.format_seen && self.checksums && name.len() > 4 {
                    name.truncate(name.len() - 4);
                }
                self.file = String::from_utf8_lossy(&name).into_owned();
                self.exec_pos = r.position();
                if !self.in_txn && h.log_pos() != 0 {
                    self.commit_position(false)?;
                    return Ok(true);
                }
                Ok(false)
            }
            EventData::XaPrepareLogEvent(_) => self.xa_prepared(own, next),
            EventData::QueryEvent(q) => {
                let text = q.query().into_owned();
                let t = text.trim();
                if t.len() > 3 && t[..3].eq_ignore_ascii_case("XA ") {
                    let db = q.schema().into_owned();
                    return self.xa_query(t, &db, own, next);
                }
                if self.xa_skipping {
                    return Ok(false);
                }
                if t.eq_ignore_ascii_case("BEGIN") {
                    self.begin()?;
                    return Ok(false);
                }
                if t.eq_ignore_ascii_case("COMMIT") {
                    self.exec_pos = next;
                    self.commit_position(true)?;
                    return Ok(true);
                }
                // MariaDB replaces events an old replica cannot read with a comment.
                if t.starts_with('#') || own {
                    if !self.in_txn && next != 0 {
                        self.exec_pos = next;
                        self.commit_position(false)?;
                        return Ok(true);
                    }
                    return Ok(false);
                }
                let first = t
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_ascii_uppercase();
                if matches!(
                    first.as_str(),
                    "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "LOAD" | "SAVEPOINT"
                ) {
                    return Err(bad(Error::NotSupported(format!(
                        "statement-based replication (the source logged `{}`); use \
                         binlog_format=ROW on the source",
                        t.chars().take(60).collect::<String>()
                    ))));
                }
                let db = q.schema().into_owned();
                if !db.is_empty() {
                    // CREATE DATABASE d is logged with d as its database: 1049 is fine.
                    match run(&mut self.session, &format!("USE {}", ident(&db))) {
                        Err(e) if e.code() != 1049 => return Err(bad(e)),
                        _ => {}
                    }
                }
                // DDL commits implicitly, as on the source.
                self.in_txn = false;
                run(&mut self.session, &text).map_err(|e| ApplyError {
                    code: e.code(),
                    message: format!(
                        "Error '{e}' on query. Default database: '{db}'. Query: '{}'",
                        text.chars().take(200).collect::<String>()
                    ),
                })?;
                self.exec_pos = next;
                self.commit_position(false)?;
                Ok(true)
            }
            EventData::XidEvent(_) => {
                self.exec_pos = next;
                self.commit_position(true)?;
                Ok(true)
            }
            EventData::FormatDescriptionEvent(_) => {
                self.format_seen = true;
                Ok(false)
            }
            EventData::TableMapEvent(m) => {
                self.maps.insert(m.table_id(), m.into_owned());
                Ok(false)
            }
            EventData::RowsEvent(r) => {
                if own || self.xa_skipping {
                    return Ok(false);
                }
                if !self.in_txn {
                    // A row event without BEGIN (a source that logs a non-transactional
                    // table's statement as rows and a COMMIT query): open one.
                    self.begin()?;
                }
                self.apply_rows(&r, next)?;
                Ok(false)
            }
            // FORMAT_DESCRIPTION, PREVIOUS_GTIDS, GTID (MySQL), heartbeats, user
            // variables MariaDB sends in place of its own events, …: nothing to apply.
            _ => Ok(false),
        }
    }

    /// An `XA …` query of the source: XA START and XA END of a prepare group (run on
    /// the applier's session, the rows between them going into the XA branch), or XA
    /// COMMIT / XA ROLLBACK of a transaction an earlier group prepared (run as written,
    /// on the detached prepared transaction), then the position.
    fn xa_query(
        &mut self,
        text: &str,
        db: &str,
        own: bool,
        next: u64,
    ) -> std::result::Result<bool, ApplyError> {
        let words: Vec<&str> = text.splitn(3, char::is_whitespace).collect();
        let verb = words
            .get(1)
            .map(|w| w.to_ascii_uppercase())
            .unwrap_or_default();
        let xid = words.get(2).map(|w| w.trim()).unwrap_or("");
        let sql_err = |e: Error| ApplyError {
            code: e.code(),
            message: format!(
                "Error '{e}' on query. Default database: '{db}'. Query: '{}'",
                text.chars().take(200).collect::<String>()
            ),
        };
        match verb.as_str() {
            "START" | "BEGIN" => {
                // A MariaDB source's GTID event opened a transaction already: nothing
                // is in it yet.
                if self.in_txn {
                    let _ = run(&mut self.session, "ROLLBACK");
                    self.in_txn = false;
                }
                if own {
                    self.xa_skipping = true;
                    return Ok(false);
                }
                if !db.is_empty() {
                    match run(&mut self.session, &format!("USE {}", ident(db))) {
                        Err(e) if e.code() != 1049 => return Err(bad(e)),
                        _ => {}
                    }
                }
                match run(&mut self.session, text) {
                    Ok(_) => {
                        self.xa_open = Some(xid.to_string());
                        self.in_txn = true;
                    }
                    // Prepared here already, its position update lost to a crash: the
                    // group is skipped and the position moves past it.
                    Err(e) if e.code() == 1440 && self.fresh => {
                        self.xa_skipping = true;
                        self.session.set_gtid_next(None);
                    }
                    Err(e) => return Err(sql_err(e)),
                }
                Ok(false)
            }
            "END" => {
                if self.xa_open.is_some() {
                    run(&mut self.session, text).map_err(sql_err)?;
                }
                Ok(false)
            }
            "COMMIT" | "ROLLBACK" => {
                if self.in_txn && self.xa_open.is_none() {
                    let _ = run(&mut self.session, "ROLLBACK");
                    self.in_txn = false;
                }
                if !own {
                    match run(&mut self.session, text) {
                        Ok(_) => {}
                        // Finished here already, its position update lost to a crash.
                        Err(e) if e.code() == 1397 && self.fresh => {}
                        Err(e) => return Err(sql_err(e)),
                    }
                }
                self.exec_pos = next;
                self.commit_position(false)?;
                Ok(true)
            }
            _ => Err(bad(Error::NotSupported(format!(
                "the source's `{}`",
                text.chars().take(60).collect::<String>()
            )))),
        }
    }

    /// XA_PREPARE: the branch the group built is prepared and detached from the
    /// applier's session (as a MySQL 8 replica does), so the source's next transactions
    /// apply while it waits for its XA COMMIT / XA ROLLBACK group; then the position.
    /// The position update is a transaction of its own after the prepare (a prepared
    /// branch takes no more changes): a crash in between is met by the skip in
    /// [`Applier::xa_query`].
    fn xa_prepared(&mut self, own: bool, next: u64) -> std::result::Result<bool, ApplyError> {
        if let Some(x) = self.xa_open.take() {
            if !own {
                let r = run(&mut self.session, &format!("XA PREPARE {x}"));
                self.in_txn = false;
                if let Err(e) = r {
                    return Err(ApplyError {
                        code: e.code(),
                        message: format!("Error '{e}' on query. Query: 'XA PREPARE {x}'"),
                    });
                }
                self.session.detach_prepared_xa();
            }
        }
        self.in_txn = false;
        self.xa_skipping = false;
        self.exec_pos = next;
        self.commit_position(false)?;
        Ok(true)
    }

    fn begin(&mut self) -> std::result::Result<(), ApplyError> {
        if self.in_txn {
            return Ok(());
        }
        run(&mut self.session, "BEGIN").map_err(bad)?;
        self.in_txn = true;
        Ok(())
    }

    /// Records the position (inside the open transaction when there is one) and commits.
    fn commit_position(&mut self, txn_end: bool) -> std::result::Result<(), ApplyError> {
        let applied = self.pending.map(|p| self.applied.with(Some(p)));
        let texts = applied
            .as_ref()
            .map(|a| (a.mysql.to_text(), a.maria.to_text()));
        let sql = position_update(
            &self.file,
            self.exec_pos,
            texts.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
        );
        if txn_end && !self.in_txn {
            self.begin()?;
        }
        let r = run(&mut self.session, &sql).and_then(|_| {
            if self.in_txn {
                run(&mut self.session, "COMMIT").map(|_| ())
            } else {
                Ok(())
            }
        });
        self.in_txn = false;
        self.maps.clear();
        if let Err(e) = r {
            let _ = run(&mut self.session, "ROLLBACK");
            return Err(bad(e));
        }
        if let Some(a) = applied {
            self.applied = a;
            self.pending = None;
        }
        self.session.set_gtid_next(None);
        self.fresh = false;
        Ok(())
    }

    fn apply_rows(
        &mut self,
        r: &RowsEventData<'_>,
        next: u64,
    ) -> std::result::Result<(), ApplyError> {
        let map = self.maps.get(&r.table_id()).ok_or_else(|| ApplyError {
            code: 1594,
            message: format!(
                "a rows event for table id {} without its TABLE_MAP",
                r.table_id()
            ),
        })?;
        rows::apply(&mut self.session, map, r).map_err(|e| {
            let kind_name = rows::kind_of(r).map_or("Rows", rows::kind_name);
            let code = e.code();
            ApplyError {
                code,
                message: format!(
                    "Could not execute {kind_name} event on table {}.{}; {}, Error_code: {code}; \
                     the event's source log {}, end_log_pos {next}",
                    map.database_name(),
                    map.table_name(),
                    e.why(),
                    self.file
                ),
            }
        })
    }
}
