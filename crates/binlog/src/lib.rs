//! The binary log (`--log-bin`): MySQL v4 binlog files (docs/format/binlog.md) holding
//! every committed change as row events, DDL as its text, one GTID per transaction.
//!
//! Place in the layers: below the session, beside the engines. It knows table
//! definitions and values (`strata_types`) and files, nothing of SQL, sessions or the
//! wire: the session hands it a committed transaction's row changes ([`Entry`]), a
//! replication dump (`strata_wire::replication`, through the server's handler) reads the
//! files back ([`Binlog::read`]).
//!
//! Commit path: the events of a transaction are built before the log's lock is taken;
//! under it the GTID is assigned and the whole transaction is framed at its file
//! position and written with one `write`; after it, under `sync_binlog`, the committer
//! waits for an fsync that one leader does for everyone written so far (`sync.rs`).
//!
//! Two-phase commit (docs/format/binlog.md, "Commit, durability and crash recovery"):
//! the session prepares the engines under an xid from [`Binlog::new_xid`], then
//! [`Binlog::commit_ordered`] writes the events, waits for the group's fsync and runs
//! the engines' commit in the order of the log (a turnstile). At startup
//! [`Binlog::committed_xids`] tells recovery which prepared transactions the log holds.

pub mod dump;
pub mod event;
pub mod file;
pub mod gtid;
mod mysql_json;
mod purged;
pub mod rows;
mod sync;

use event::{Body, QueryContext};
use file::{Naming, RawEvent};
use gtid::{GtidSet, Uuid};
use parking_lot::{Condvar, Mutex};
use rows::RowChange;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_types::{Error, Result, TableDef};

pub use event::SERVER_VERSION;

/// `--log-bin` and the options around it, as the server resolved them.
#[derive(Clone, Debug)]
pub struct Options {
    pub datadir: PathBuf,
    /// `--log-bin=basename` (default `binlog`).
    pub basename: String,
    pub server_id: u32,
    /// `max_binlog_size` in bytes.
    pub max_size: u64,
    /// `binlog_checksum=CRC32` (true) or NONE.
    pub checksum: bool,
    /// `sync_binlog`: 0 never, 1 every commit group, N every N commits.
    pub sync: u32,
    /// `binlog_json_format`: how JSON columns are logged (`rows::Format`).
    pub format: rows::Format,
}

/// A committed unit to log.
pub enum Entry<'a> {
    /// Row changes, in the order made; `xid` ends them with an XID event holding it (a
    /// transactional engine, prepared under it), None with a `COMMIT` query (heap
    /// tables).
    Rows {
        cx: &'a QueryContext,
        changes: &'a [(Arc<TableDef>, RowChange)],
        xid: Option<u64>,
    },
    /// A DDL statement, logged as its text.
    Ddl { cx: &'a QueryContext, text: &'a str },
    /// CREATE TABLE … SELECT into a transactional table, as MySQL 8 logs it: one GTID
    /// transaction of a query event with the CREATE TABLE (ending in `START
    /// TRANSACTION`), the copied rows and an XID.
    CreateSelect {
        cx: &'a QueryContext,
        text: &'a str,
        changes: &'a [(Arc<TableDef>, RowChange)],
        /// The XID the engines prepared the copy under.
        xid: u64,
    },
    /// XA PREPARE of an external coordinator's transaction (the engines prepared it
    /// under its XA xid): `XA START`, the rows, `XA END`, XA_PREPARE.
    XaPrepare {
        cx: &'a QueryContext,
        xid: &'a event::XaXid,
        changes: &'a [(Arc<TableDef>, RowChange)],
    },
    /// XA COMMIT (`commit`) or XA ROLLBACK of a transaction whose [`Entry::XaPrepare`]
    /// group is in the log: one query event.
    XaFinish {
        cx: &'a QueryContext,
        xid: &'a event::XaXid,
        commit: bool,
    },
}

impl Entry<'_> {
    /// The session context every kind of entry carries (its QUERY events' fields and
    /// the GTID to write it under).
    pub fn context(&self) -> &QueryContext {
        match self {
            Entry::Rows { cx, .. }
            | Entry::Ddl { cx, .. }
            | Entry::CreateSelect { cx, .. }
            | Entry::XaPrepare { cx, .. }
            | Entry::XaFinish { cx, .. } => cx,
        }
    }
}

/// What the log says last about an XA transaction ([`Binlog::xa_outcomes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XaLogged {
    Prepared,
    Committed,
    RolledBack,
}

/// SHOW MASTER STATUS.
#[derive(Clone, Debug)]
pub struct Status {
    pub file: String,
    pub position: u64,
    pub gtid_executed: String,
}

/// One row of SHOW BINLOG EVENTS.
#[derive(Clone, Debug)]
pub struct EventInfo {
    pub log_name: String,
    pub pos: u64,
    pub event_type: &'static str,
    pub server_id: u32,
    pub end_log_pos: u64,
    pub info: String,
}

struct Current {
    file: Arc<std::fs::File>,
    name: String,
    number: u32,
    pos: u64,
    /// Transactions written to this file (the GTID event's sequence number).
    seq: u64,
}

struct State {
    current: Option<Current>,
    /// Every file the index lists, oldest first.
    files: Vec<String>,
    gtid_executed: GtidSet,
    gtid_purged: GtidSet,
    /// A write failed and could not be undone: nothing more is logged (so no commit).
    broken: Option<String>,
    /// Commits since the last fsync (sync_binlog = N).
    unsynced_commits: u32,
    /// Prepared transactions written so far: each one's place in the engines'
    /// commit order (the turnstile).
    ordered: u64,
    /// GTIDs sessions own (`SET gtid_next = 'uuid:N'`) until they commit or roll
    /// back: each one's owner, a connection id. Under the same lock as
    /// `gtid_executed`, so taking ownership and seeing a GTID executed never race.
    owned: HashMap<(Uuid, u64), u32>,
    /// The GTIDs `SET @@GLOBAL.gtid_purged` added (in `<basename>.gtid_purged`):
    /// executed and purged, in no file.
    purged_added: GtidSet,
}

/// [`Binlog::own_gtid`]'s outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// The caller owns the GTID now; its next group is logged under it.
    Owned,
    /// `gtid_executed` holds it already: the caller's transaction is to be skipped.
    Executed,
}

pub struct Binlog {
    opts: Options,
    naming: Naming,
    uuid: Uuid,
    state: Mutex<State>,
    sync: sync::GroupSync,
    /// Bumped after every write, for dump threads waiting for new events.
    generation: Mutex<u64>,
    grown: Condvar,
    /// Signalled when a session gives up a GTID it owned (waiters in `own_gtid`).
    owner_gone: Condvar,
    table_ids: Mutex<HashMap<(String, String), u64>>,
    /// The xid counter (bits 0..39 of an xid), from 1 at each start.
    next_xid: AtomicU64,
    /// The number of the file being written (bits 40..63 of a new xid).
    file_number: AtomicU64,
    /// The turnstile of the engines' commits (log order).
    turn: sync::Turnstile,
    /// The last file was left in use at [`Binlog::open`]: the previous run crashed.
    crashed: bool,
}

/// Bits of an xid that count; the file number sits above them.
const XID_COUNTER_BITS: u32 = 40;

fn now_secs() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}

/// Reads or creates `auto.cnf`'s `server-uuid`.
pub fn server_uuid(datadir: &Path) -> Result<Uuid> {
    let path = datadir.join("auto.cnf");
    match std::fs::read_to_string(&path) {
        Ok(text) => text
            .lines()
            .find_map(|l| l.trim().strip_prefix("server-uuid="))
            .and_then(|u| gtid::parse_uuid(u.trim()))
            .ok_or_else(|| Error::corrupt(path.display().to_string(), "no valid server-uuid")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let u = gtid::random_uuid();
            let text = format!("[auto]\nserver-uuid={}\n", gtid::uuid_text(&u));
            let io = |e| Error::io(path.display(), e);
            let mut f = std::fs::File::create(&path).map_err(io)?;
            f.write_all(text.as_bytes()).map_err(io)?;
            f.sync_all().map_err(io)?;
            Ok(u)
        }
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

impl Binlog {
    /// Opens the log at startup: reads the index, repairs a file a crash left open (its
    /// torn last transaction is cut off), recovers `gtid_executed` and starts a new file.
    pub fn open(opts: Options, uuid: Uuid) -> Result<Binlog> {
        let naming = Naming::new(&opts.datadir, &opts.basename);
        std::fs::create_dir_all(&naming.dir).map_err(|e| Error::io(naming.dir.display(), e))?;
        let mut files: Vec<String> = naming
            .read_index()?
            .into_iter()
            .filter(|n| naming.path(n).exists())
            .collect();
        let mut executed = GtidSet::default();
        let mut purged = GtidSet::default();
        let mut crashed = false;
        if let Some(first) = files.first() {
            purged = file::scan(&naming.path(first))?.previous;
        }
        let purged_added = purged::read(&naming)?;
        purged.union(&purged_added);
        if let Some(last) = files.last() {
            let path = naming.path(last);
            let s = file::scan(&path)?;
            crashed = s.in_use;
            if s.in_use || s.boundary < s.len {
                // Cut, but still in use: its flag is cleared only once the new file
                // exists (below), so a crash before then still reads as one.
                file::repair(&path, s.boundary, false)?;
            }
            executed = s.gtids;
        }
        executed.union(&purged_added);
        let next_number = files
            .iter()
            .filter_map(|n| naming.number(n))
            .max()
            .map_or(1, |n| n + 1);
        let b = Binlog {
            opts,
            naming,
            uuid,
            state: Mutex::new(State {
                current: None,
                files: std::mem::take(&mut files),
                gtid_executed: executed,
                gtid_purged: purged,
                broken: None,
                unsynced_commits: 0,
                ordered: 0,
                owned: HashMap::new(),
                purged_added,
            }),
            sync: sync::GroupSync::default(),
            generation: Mutex::new(0),
            grown: Condvar::new(),
            owner_gone: Condvar::new(),
            table_ids: Mutex::new(HashMap::new()),
            next_xid: AtomicU64::new(1),
            file_number: AtomicU64::new(0),
            turn: sync::Turnstile::default(),
            crashed,
        };
        {
            let mut st = b.state.lock();
            b.start_file(&mut st, next_number)?;
        }
        if crashed {
            if let Some(last) = b.state.lock().files.iter().rev().nth(1).cloned() {
                file::repair(&b.naming.path(&last), u64::MAX, true)?;
            }
        }
        Ok(b)
    }

    /// Whether the previous run left the last file in use (it crashed or was killed).
    pub fn opened_after_crash(&self) -> bool {
        self.crashed
    }

    /// fsyncs of the log so far (group commit: fewer than commits).
    pub fn fsyncs(&self) -> u64 {
        self.sync.fsyncs()
    }

    pub fn server_id(&self) -> u32 {
        self.opts.server_id
    }

    pub fn uuid(&self) -> Uuid {
        self.uuid
    }

    pub fn checksum(&self) -> bool {
        self.opts.checksum
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// `log_bin_basename`: the files' path without the number.
    pub fn basename_path(&self) -> PathBuf {
        self.naming.dir.join(&self.naming.stem)
    }

    pub fn index_path(&self) -> PathBuf {
        self.naming.index_path()
    }

    /// Starts file number `n`: magic, FORMAT_DESCRIPTION (in use), PREVIOUS_GTIDS, and
    /// adds it to the index.
    fn start_file(&self, st: &mut State, n: u32) -> Result<()> {
        let name = self.naming.file_name(n);
        let path = self.naming.path(&name);
        let io = |e| Error::io(path.display(), e);
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .read(true)
            .open(&path)
            .map_err(io)?;
        let ts = now_secs();
        let mut out = MAGIC_VEC.to_vec();
        event::frame(
            &mut out,
            &event::format_description(ts, self.opts.checksum),
            self.opts.server_id,
            Some(4),
            self.opts.checksum,
        );
        let at = out.len() as u64;
        event::frame(
            &mut out,
            &event::previous_gtids(ts, &st.gtid_executed),
            self.opts.server_id,
            Some(at),
            self.opts.checksum,
        );
        f.write_all(&out).map_err(io)?;
        f.sync_all().map_err(io)?;
        st.files.push(name.clone());
        self.naming.write_index(&st.files)?;
        self.file_number.store(n as u64, Ordering::Release);
        st.current = Some(Current {
            file: Arc::new(f),
            name,
            number: n,
            pos: out.len() as u64,
            seq: 0,
        });
        Ok(())
    }

    /// Ends the current file with `ending` (ROTATE or STOP), fsyncs it and clears its
    /// in-use flag.
    fn close_current(&self, st: &mut State, ending: Body) -> Result<()> {
        let Some(cur) = self.end_current(st, ending)? else {
            return Ok(());
        };
        self.mark_closed(&cur)
    }

    /// Writes `ending` (ROTATE or STOP) at the end of the current file and takes it out
    /// of use, leaving its in-use flag set: [`Binlog::mark_closed`] clears it.
    fn end_current(&self, st: &mut State, ending: Body) -> Result<Option<Current>> {
        let Some(cur) = st.current.take() else {
            return Ok(None);
        };
        let mut out = Vec::new();
        event::frame(
            &mut out,
            &ending,
            self.opts.server_id,
            Some(cur.pos),
            self.opts.checksum,
        );
        let path = self.naming.path(&cur.name);
        let io = |e| Error::io(path.display(), e);
        (&*cur.file).write_all(&out).map_err(io)?;
        Ok(Some(cur))
    }

    /// Clears an ended file's in-use flag and fsyncs it.
    fn mark_closed(&self, cur: &Current) -> Result<()> {
        let path = self.naming.path(&cur.name);
        let io = |e| Error::io(path.display(), e);
        file::clear_in_use(&cur.file).map_err(io)?;
        cur.file.sync_all().map_err(io)?;
        self.sync.synced_all(self.sync.written());
        Ok(())
    }

    /// ROTATE to a new file (FLUSH BINARY LOGS, or the size limit).
    fn rotate(&self, st: &mut State) -> Result<()> {
        let n = st.current.as_ref().map_or(1, |c| c.number + 1);
        let next = self.naming.file_name(n);
        // The new file (in use) is in the index before the old one is marked closed, so
        // at every instant the last file in the index is in use until a clean
        // shutdown: a kill between the two steps must not look like a clean stop, or
        // recovery would take an XA transaction the engine prepared meanwhile for one a
        // server without the log prepared (and refuse to start).
        let old = self.end_current(st, event::rotate(now_secs(), &next, 4, 0))?;
        self.start_file(st, n)?;
        if let Some(old) = old {
            self.mark_closed(&old)?;
        }
        self.notify();
        Ok(())
    }

    /// The table id a TABLE_MAP gives `db.name` (stable for the server's life).
    fn table_id(&self, def: &TableDef) -> u64 {
        let mut ids = self.table_ids.lock();
        let next = ids.len() as u64 + 1;
        *ids.entry((def.db.clone(), def.name.clone()))
            .or_insert(next)
    }

    /// The events of `entry` after its GTID, unframed.
    fn build(&self, entry: &Entry) -> Result<(Vec<Body>, bool)> {
        let ts = now_secs();
        match entry {
            Entry::Ddl { cx, text } => Ok((vec![event::query(ts, cx, text)], true)),
            Entry::CreateSelect {
                cx,
                text,
                changes,
                xid,
            } => {
                let head = format!("{text} START TRANSACTION");
                let mut out = vec![event::query(ts, cx, &head)];
                self.row_events(ts, changes, &mut out)?;
                out.push(event::xid(ts, *xid));
                Ok((out, false))
            }
            Entry::XaPrepare { cx, xid, changes } => {
                let mut out = vec![event::query(
                    ts,
                    cx,
                    &event::xa_text(event::XaVerb::Start, xid),
                )];
                self.row_events(ts, changes, &mut out)?;
                out.push(event::query(
                    ts,
                    cx,
                    &event::xa_text(event::XaVerb::End, xid),
                ));
                out.push(event::xa_prepare(ts, xid));
                Ok((out, false))
            }
            Entry::XaFinish { cx, xid, commit } => {
                let verb = if *commit {
                    event::XaVerb::Commit
                } else {
                    event::XaVerb::Rollback
                };
                Ok((vec![event::query(ts, cx, &event::xa_text(verb, xid))], true))
            }
            Entry::Rows { cx, changes, xid } => {
                let mut out = vec![event::query(ts, cx, "BEGIN")];
                self.row_events(ts, changes, &mut out)?;
                match xid {
                    Some(x) => out.push(event::xid(ts, *x)),
                    None => out.push(event::query(ts, cx, "COMMIT")),
                }
                Ok((out, false))
            }
        }
    }

    /// The TABLE_MAP and rows events of `changes`, appended to `out`.
    fn row_events(
        &self,
        ts: u32,
        changes: &[(Arc<TableDef>, RowChange)],
        out: &mut Vec<Body>,
    ) -> Result<()> {
        let mut i = 0;
        while i < changes.len() {
            // A run: consecutive changes of one kind to one table.
            let (def, first) = &changes[i];
            let kind = rows::event_type(first);
            let mut j = i;
            while j < changes.len()
                && Arc::ptr_eq(&changes[j].0, def)
                && rows::event_type(&changes[j].1) == kind
            {
                j += 1;
            }
            let id = self.table_id(def);
            out.push(rows::table_map(ts, id, def, self.opts.format));
            let mut data = Vec::new();
            let mut header_len = 0;
            for (k, (_, change)) in changes[i..j].iter().enumerate() {
                if data.is_empty() {
                    rows::rows_header(kind, id, def.columns.len(), &mut data);
                    header_len = data.len();
                }
                rows::put_change(def, change, self.opts.format, &mut data)?;
                let last = i + k + 1 == j;
                if data.len() - header_len >= rows::MAX_ROWS_EVENT || last {
                    if last {
                        rows::set_statement_end(&mut data);
                    }
                    out.push(Body {
                        type_code: kind,
                        timestamp: ts,
                        flags: 0,
                        data: std::mem::take(&mut data),
                    });
                }
            }
            i = j;
        }
        Ok(())
    }

    /// Logs one committed unit: GTID and events in one write, then waits for the fsync
    /// `sync_binlog` asks for. An error leaves nothing of it in the log; the caller
    /// must then not commit.
    pub fn write(&self, entry: &Entry) -> Result<()> {
        self.append(entry, false).map(|_| ())
    }

    /// A new xid: the current file's number in bits 40..63 (recovery looks for it from
    /// that file on), a counter that starts at 1 at each server start below.
    pub fn new_xid(&self) -> u64 {
        let n = self.next_xid.fetch_add(1, Ordering::Relaxed) & ((1 << XID_COUNTER_BITS) - 1);
        let file = self.file_number.load(Ordering::Acquire) & 0xFF_FFFF;
        file << XID_COUNTER_BITS | n
    }

    /// The second and third phases of a two-phase commit: logs `entry` (rows of a
    /// transaction prepared under its xid), waits for the fsync `sync_binlog` asks
    /// for, then runs `engine_commit` once every transaction written before it has
    /// run its own (the engines commit in the log's order). An error before the events
    /// are in the file returns without running `engine_commit` (the caller rolls back);
    /// once they are, `engine_commit` runs whatever happens (the log decides), and a
    /// failed fsync is still reported, after it.
    pub fn commit_ordered(
        &self,
        entry: &Entry,
        engine_commit: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let (order, synced) = match self.append(entry, true)? {
            (Some(order), synced) => (order, synced),
            (None, _) => return Err(Error::Internal("binary log: no commit order".into())),
        };
        self.turn.wait_for(order);
        let committed = engine_commit();
        self.turn.done(order);
        synced.and(committed)
    }

    /// Writes `entry`; with `ordered`, also gives it the next commit order number.
    /// Returns the order and the outcome of the fsync wait: Err(..) at the top level
    /// means nothing was written.
    fn append(&self, entry: &Entry, ordered: bool) -> Result<(Option<u64>, Result<()>)> {
        let (bodies, ddl) = self.build(entry)?;
        let (file, ticket, order) = {
            let mut st = self.state.lock();
            if let Some(why) = &st.broken {
                return Err(Error::Io(format!("binary log unusable: {why}")));
            }
            // A replica's applied transaction keeps its source's GTID; never one the
            // log holds already (the replica skips those before applying them).
            let (uuid, gno) = match entry.context().gtid {
                Some((u, g)) if st.gtid_executed.contains(&u, g) => {
                    return Err(Error::GtidExecuted(format!("{}:{g}", gtid::uuid_text(&u))))
                }
                Some(given) => given,
                None => (self.uuid, st.gtid_executed.last_gno(&self.uuid) + 1),
            };
            // A replica's applied transaction keeps its originating server's id.
            let server_id = entry.context().server_id.unwrap_or(self.opts.server_id);
            let crc = self.opts.checksum;
            let Some(cur) = st.current.as_mut() else {
                return Err(Error::Io("binary log closed".into()));
            };
            cur.seq += 1;
            let mut out = Vec::with_capacity(bodies.iter().map(|b| b.data.len() + 23).sum());
            let gtid = event::gtid(now_secs(), &uuid, gno, cur.seq, ddl);
            for b in std::iter::once(&gtid).chain(bodies.iter()) {
                let at = cur.pos + out.len() as u64;
                event::frame(&mut out, b, server_id, Some(at), crc);
            }
            if let Err(e) = (&*cur.file).write_all(&out) {
                // Undo a partial write so the file stays a sequence of whole events.
                let undone = cur.file.set_len(cur.pos).is_ok();
                cur.seq -= 1;
                let err = Error::io(self.naming.path(&cur.name).display(), e);
                if !undone {
                    st.broken = Some(err.to_string());
                }
                return Err(err);
            }
            cur.pos += out.len() as u64;
            let file = cur.file.clone();
            let too_big = cur.pos >= self.opts.max_size;
            st.gtid_executed.add(&uuid, gno);
            let order = ordered.then(|| {
                st.ordered += 1;
                st.ordered
            });
            let ticket = self.sync.wrote();
            let mut must_sync = false;
            if self.opts.sync > 1 {
                st.unsynced_commits += 1;
                if st.unsynced_commits >= self.opts.sync {
                    st.unsynced_commits = 0;
                    must_sync = true;
                }
            }
            let mut rotated = Ok(());
            if too_big {
                // The closing ROTATE fsyncs the old file for everyone.
                if let Err(e) = self.rotate(&mut st) {
                    st.broken = Some(e.to_string());
                    rotated = Err(e);
                }
            }
            if let (Err(e), None) = (&rotated, order) {
                return Err(e.clone());
            }
            (
                file,
                if self.opts.sync == 1 || must_sync {
                    Some(ticket)
                } else {
                    None
                },
                (order, rotated),
            )
        };
        drop(file);
        self.notify();
        let (order, rotated) = order;
        let mut synced = rotated;
        if let (Some(t), Ok(())) = (ticket, &synced) {
            synced = self.sync.wait_synced(t, || {
                let st = self.state.lock();
                st.current
                    .as_ref()
                    .map(|c| (self.sync.written(), c.file.clone()))
            });
            if let Err(e) = &synced {
                // The events are in the file but maybe not on disk: nothing more may
                // be logged after them.
                self.state.lock().broken = Some(e.to_string());
            }
        }
        match order {
            Some(_) => Ok((order, synced)),
            None => synced.map(|()| (None, Ok(()))),
        }
    }

    /// Which of `xids` (prepared transactions a crash left in the engines) the log
    /// holds: each is looked for from the file its bits 40..63 name to the last file.
    /// Call after [`Binlog::open`], which cut off a torn tail.
    pub fn committed_xids(&self, xids: &[u64]) -> Result<std::collections::HashSet<u64>> {
        let mut found = std::collections::HashSet::new();
        let Some(first) = xids.iter().map(|x| x >> XID_COUNTER_BITS).min() else {
            return Ok(found);
        };
        let wanted: std::collections::HashSet<u64> = xids.iter().copied().collect();
        let files: Vec<String> = self.state.lock().files.clone();
        for name in files {
            let n = self.naming.number(&name).unwrap_or(0) as u64 & 0xFF_FFFF;
            if n < first {
                continue;
            }
            let (events, crc) = file::read_events(&self.naming.path(&name), 4, None)?;
            for ev in &events {
                if ev.header().is_some_and(|h| h.type_code == event::XID) {
                    let data = ev.data(crc);
                    if let Some(b) = data.get(..8) {
                        let x = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
                        if wanted.contains(&x) {
                            found.insert(x);
                        }
                    }
                }
            }
        }
        Ok(found)
    }

    /// For each of `xids` (XA transactions a crash left prepared in the engines), the
    /// last thing the log says of it: an XA_PREPARE event, or an `XA COMMIT` / `XA
    /// ROLLBACK` query (docs/format/binlog.md, "An XA transaction"). An xid the log
    /// never names is absent. Every file of the index is read: an XA transaction can
    /// stay prepared across any number of rotations.
    pub fn xa_outcomes(&self, xids: &[event::XaXid]) -> Result<HashMap<event::XaXid, XaLogged>> {
        let mut found = HashMap::new();
        if xids.is_empty() {
            return Ok(found);
        }
        let wanted: std::collections::HashSet<&event::XaXid> = xids.iter().collect();
        let files: Vec<String> = self.state.lock().files.clone();
        for name in files {
            let (events, crc) = file::read_events(&self.naming.path(&name), 4, None)?;
            for ev in &events {
                let Some(h) = ev.header() else { continue };
                let data = ev.data(crc);
                let said = match h.type_code {
                    event::XA_PREPARE => {
                        event::parse_xa_prepare(data).map(|x| (x, XaLogged::Prepared))
                    }
                    event::QUERY => match event::parse_xa_text(file::query_text(data)) {
                        Some((event::XaVerb::Commit, x)) => Some((x, XaLogged::Committed)),
                        Some((event::XaVerb::Rollback, x)) => Some((x, XaLogged::RolledBack)),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some((x, what)) = said {
                    if wanted.contains(&x) {
                        found.insert(x, what);
                    }
                }
            }
        }
        Ok(found)
    }

    fn notify(&self) {
        *self.generation.lock() += 1;
        self.grown.notify_all();
    }

    /// The write generation: a dump thread waits for it to change.
    pub fn generation(&self) -> u64 {
        *self.generation.lock()
    }

    /// Waits up to `timeout` for a write after generation `seen`; returns the current one.
    pub fn wait_for_write(&self, seen: u64, timeout: Duration) -> u64 {
        let mut g = self.generation.lock();
        if *g == seen {
            self.grown.wait_for(&mut g, timeout);
        }
        *g
    }

    pub fn status(&self) -> Status {
        let st = self.state.lock();
        let (file, position) = st
            .current
            .as_ref()
            .map_or((String::new(), 0), |c| (c.name.clone(), c.pos));
        Status {
            file,
            position,
            gtid_executed: st.gtid_executed.to_text(),
        }
    }

    pub fn gtid_executed(&self) -> String {
        self.state.lock().gtid_executed.to_text()
    }

    /// Whether `gtid_executed` holds `uuid:gno` (a replica's auto-skip).
    pub fn executed_contains(&self, uuid: &Uuid, gno: u64) -> bool {
        self.state.lock().gtid_executed.contains(uuid, gno)
    }

    /// `gtid_executed` as a set.
    pub fn executed_set(&self) -> GtidSet {
        self.state.lock().gtid_executed.clone()
    }

    /// WAIT_FOR_EXECUTED_GTID_SET: Ok(false) once `gtid_executed` holds `set` and the
    /// engines have committed every transaction logged up to then, so the waiter then
    /// sees their rows (`gtid_executed` grows when a transaction is written, before its
    /// engine commit); Ok(true) when `deadline` passes first. `check` runs at least
    /// every 10 ms and its error ends the wait (KILL QUERY, `max_execution_time`). No
    /// lock is held while waiting.
    pub fn wait_executed(
        &self,
        set: &GtidSet,
        deadline: Option<std::time::Instant>,
        check: impl Fn() -> Result<()>,
    ) -> Result<bool> {
        const SLICE: Duration = Duration::from_millis(10);
        // The commit order the engines must reach, once the set is logged.
        let mut need = None;
        loop {
            check()?;
            let seen = self.generation();
            if need.is_none() {
                let st = self.state.lock();
                if set.is_subset(&st.gtid_executed) {
                    need = Some(st.ordered);
                }
            }
            match need {
                Some(order) if self.turn.done_upto() >= order => return Ok(false),
                // Logged: its engine commits are moments away.
                Some(_) => std::thread::sleep(Duration::from_millis(1)),
                None => {
                    let slice = match deadline {
                        Some(d) => {
                            let left = d.saturating_duration_since(std::time::Instant::now());
                            if left.is_zero() {
                                return Ok(true);
                            }
                            left.min(SLICE)
                        }
                        None => SLICE,
                    };
                    self.wait_for_write(seen, slice);
                }
            }
        }
    }

    /// `SET gtid_next = 'uuid:gno'` by connection `owner`: takes ownership of the GTID,
    /// or reports it executed already (MySQL then skips the transaction). While another
    /// session owns it this waits, as MySQL 8 does, until that session commits (then:
    /// executed) or rolls back (then: owned by the caller); `check` runs at least
    /// every 10 ms and its error (KILL) ends the wait.
    pub fn own_gtid(
        &self,
        uuid: &Uuid,
        gno: u64,
        owner: u32,
        check: impl Fn() -> Result<()>,
    ) -> Result<Ownership> {
        let mut st = self.state.lock();
        loop {
            if st.gtid_executed.contains(uuid, gno) {
                return Ok(Ownership::Executed);
            }
            match st.owned.get(&(*uuid, gno)) {
                Some(&o) if o != owner => {
                    self.owner_gone.wait_for(&mut st, Duration::from_millis(10));
                    drop(st);
                    check()?;
                    st = self.state.lock();
                }
                _ => {
                    st.owned.insert((*uuid, gno), owner);
                    return Ok(Ownership::Owned);
                }
            }
        }
    }

    /// The owner's transaction ended (committed: its GTID is in `gtid_executed` by
    /// now; or rolled back), or its session did: the GTID is free again.
    pub fn release_gtid(&self, uuid: &Uuid, gno: u64, owner: u32) {
        let mut st = self.state.lock();
        if st.owned.get(&(*uuid, gno)) == Some(&owner) {
            st.owned.remove(&(*uuid, gno));
        }
        drop(st);
        self.owner_gone.notify_all();
    }

    /// `SET @@GLOBAL.gtid_purged = 'set'` (`plus` false) or `'+set'`, with MySQL 8's
    /// rules (3546): without `+` the new value must contain the old `gtid_purged` and
    /// only what it adds is added; what is added must not overlap `gtid_executed` nor
    /// a GTID a session owns. The added GTIDs go to `gtid_executed` and `gtid_purged`
    /// and, first, durably to `<basename>.gtid_purged`.
    pub fn add_purged(&self, set: &GtidSet, plus: bool) -> Result<()> {
        let mut st = self.state.lock();
        let mut add = set.clone();
        if !plus {
            if !st.gtid_purged.is_subset(set) {
                return Err(Error::GtidPurgedConstraint(
                    "the new value must be a superset of the old value".into(),
                ));
            }
            add.subtract(&st.gtid_purged);
        }
        let mut overlap = add.clone();
        overlap.subtract(&st.gtid_executed);
        if overlap != add {
            return Err(Error::GtidPurgedConstraint(
                "the added gtid set must not overlap with @@GLOBAL.GTID_EXECUTED".into(),
            ));
        }
        if st.owned.keys().any(|(u, g)| add.contains(u, *g)) {
            return Err(Error::GtidPurgedConstraint(
                "the added gtid set must not overlap with @@GLOBAL.GTID_OWNED".into(),
            ));
        }
        if add.is_empty() {
            return Ok(());
        }
        let mut all = st.purged_added.clone();
        all.union(&add);
        purged::write(&self.naming, &all)?;
        st.purged_added = all;
        st.gtid_executed.union(&add);
        st.gtid_purged.union(&add);
        drop(st);
        // Waiters in WAIT_FOR_EXECUTED_GTID_SET and own_gtid see the new GTIDs.
        self.notify();
        self.owner_gone.notify_all();
        Ok(())
    }

    pub fn purged_set(&self) -> GtidSet {
        self.state.lock().gtid_purged.clone()
    }

    pub fn gtid_purged(&self) -> String {
        self.state.lock().gtid_purged.to_text()
    }

    /// SHOW BINARY LOGS: each file and its size.
    pub fn files(&self) -> Vec<(String, u64)> {
        let st = self.state.lock();
        st.files
            .iter()
            .map(|n| {
                let size = match &st.current {
                    Some(c) if &c.name == n => c.pos,
                    _ => std::fs::metadata(self.naming.path(n)).map_or(0, |m| m.len()),
                };
                (n.clone(), size)
            })
            .collect()
    }

    /// Whether `name` is a file of the log (listed in the index).
    pub fn has_file(&self, name: &str) -> bool {
        self.state.lock().files.iter().any(|n| n == name)
    }

    /// The file after `name` in the index, if any.
    pub fn next_file(&self, name: &str) -> Option<String> {
        let st = self.state.lock();
        let i = st.files.iter().position(|n| n == name)?;
        st.files.get(i + 1).cloned()
    }

    /// The file being written and its length.
    pub fn current(&self) -> (String, u64) {
        let st = self.state.lock();
        st.current
            .as_ref()
            .map_or((String::new(), 0), |c| (c.name.clone(), c.pos))
    }

    /// FLUSH BINARY LOGS: closes the current file with a ROTATE and starts the next.
    pub fn flush_logs(&self) -> Result<()> {
        let mut st = self.state.lock();
        self.rotate(&mut st)
    }

    /// PURGE BINARY LOGS TO 'name': deletes the files before it (never the current one).
    pub fn purge_to(&self, name: &str) -> Result<()> {
        let mut st = self.state.lock();
        let Some(i) = st.files.iter().position(|n| n == name) else {
            return Err(Error::UnknownTargetBinlog);
        };
        self.purge_first(&mut st, i)
    }

    /// PURGE BINARY LOGS BEFORE t: deletes the files last written before `unix_secs`
    /// (never the current one).
    pub fn purge_before(&self, unix_secs: u64) -> Result<()> {
        let mut st = self.state.lock();
        let current = st.current.as_ref().map(|c| c.name.clone());
        let mut n = 0;
        for name in &st.files {
            if Some(name) == current.as_ref() {
                break;
            }
            let modified = std::fs::metadata(self.naming.path(name))
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            if modified >= unix_secs {
                break;
            }
            n += 1;
        }
        self.purge_first(&mut st, n)
    }

    fn purge_first(&self, st: &mut State, n: usize) -> Result<()> {
        let n = n.min(st.files.len().saturating_sub(1));
        if n == 0 {
            return Ok(());
        }
        let gone: Vec<String> = st.files.drain(..n).collect();
        self.naming.write_index(&st.files)?;
        for name in gone {
            let p = self.naming.path(&name);
            std::fs::remove_file(&p).map_err(|e| Error::io(p.display(), e))?;
        }
        if let Some(first) = st.files.first() {
            let mut p = file::scan(&self.naming.path(first))?.previous;
            p.union(&st.purged_added);
            st.gtid_purged = p;
        }
        Ok(())
    }

    /// RESET MASTER: deletes every file, forgets the GTIDs, starts again at .000001.
    pub fn reset(&self) -> Result<()> {
        let mut st = self.state.lock();
        st.current = None;
        for name in std::mem::take(&mut st.files) {
            let p = self.naming.path(&name);
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(p.display(), e)),
            }
        }
        purged::remove(&self.naming)?;
        st.gtid_executed = GtidSet::default();
        st.gtid_purged = GtidSet::default();
        st.purged_added = GtidSet::default();
        st.unsynced_commits = 0;
        // The commit order goes on (`ordered` is not reset): a transaction may be
        // between its write and its turn.
        self.start_file(&mut st, 1)?;
        drop(st);
        self.notify();
        Ok(())
    }

    /// Clean shutdown: a STOP event ends the current file, which is marked closed.
    pub fn close(&self) -> Result<()> {
        let mut st = self.state.lock();
        self.close_current(&mut st, event::stop(now_secs()))
    }

    /// The events of file `name` from `from` (SHOW BINLOG EVENTS, the dump).
    pub fn read(&self, name: &str, from: u64, limit: Option<usize>) -> Result<Vec<RawEvent>> {
        if !self.has_file(name) {
            return Err(Error::UnknownTargetBinlog);
        }
        Ok(file::read_events(&self.naming.path(name), from, limit)?.0)
    }

    /// SHOW BINLOG EVENTS [IN name] [FROM pos] [LIMIT [offset,] n].
    pub fn show_events(
        &self,
        name: Option<&str>,
        from: u64,
        offset: usize,
        limit: Option<usize>,
    ) -> Result<Vec<EventInfo>> {
        let name = match name {
            Some(n) => n.to_string(),
            None => {
                let st = self.state.lock();
                st.files.first().cloned().unwrap_or_default()
            }
        };
        if !self.has_file(&name) {
            return Err(Error::BinlogEventsTargetMissing);
        }
        let (events, crc) = file::read_events(&self.naming.path(&name), from.max(4), None)?;
        if from > 4 && events.first().is_none_or(|e| e.pos != from) {
            return Err(Error::BinlogEventsBadPosition);
        }
        Ok(events
            .iter()
            .skip(offset)
            .take(limit.unwrap_or(usize::MAX))
            .filter_map(|e| describe(&name, e, crc))
            .collect())
    }
}

const MAGIC_VEC: [u8; 4] = event::MAGIC;

/// SHOW BINLOG EVENTS' row for one event.
fn describe(log: &str, ev: &RawEvent, crc: bool) -> Option<EventInfo> {
    let h = ev.header()?;
    let data = ev.data(crc || h.type_code == event::FORMAT_DESCRIPTION);
    let info = match h.type_code {
        event::FORMAT_DESCRIPTION => format!("Server ver: {SERVER_VERSION}, Binlog ver: 4"),
        event::PREVIOUS_GTIDS => gtid::decode(data).map(|s| s.to_text()).unwrap_or_default(),
        event::GTID if data.len() >= 25 => {
            let uuid: [u8; 16] = data[1..17].try_into().ok()?;
            let gno = u64::from_le_bytes(data[17..25].try_into().ok()?);
            format!(
                "SET @@SESSION.GTID_NEXT= '{}:{gno}'",
                gtid::uuid_text(&uuid)
            )
        }
        event::QUERY => String::from_utf8_lossy(file::query_text(data)).into_owned(),
        event::TABLE_MAP if data.len() >= 9 => {
            let id =
                u64::from_le_bytes([data[0], data[1], data[2], data[3], data[4], data[5], 0, 0]);
            let db_len = data[8] as usize;
            let db = String::from_utf8_lossy(data.get(9..9 + db_len)?);
            let t_at = 9 + db_len + 1;
            let t_len = *data.get(t_at)? as usize;
            let t = String::from_utf8_lossy(data.get(t_at + 1..t_at + 1 + t_len)?);
            format!("table_id: {id} ({db}.{t})")
        }
        event::WRITE_ROWS | event::UPDATE_ROWS | event::DELETE_ROWS if data.len() >= 8 => {
            let id =
                u64::from_le_bytes([data[0], data[1], data[2], data[3], data[4], data[5], 0, 0]);
            let end = if data[6] & 1 != 0 {
                " flags: STMT_END_F"
            } else {
                ""
            };
            format!("table_id: {id}{end}")
        }
        event::XID if data.len() >= 8 => {
            format!(
                "COMMIT /* xid={} */",
                u64::from_le_bytes(data[..8].try_into().ok()?)
            )
        }
        event::XA_PREPARE => match event::parse_xa_prepare(data) {
            Some(x) => format!("XA PREPARE {}", x.serialized()),
            None => String::new(),
        },
        event::ROTATE if data.len() >= 8 => {
            let pos = u64::from_le_bytes(data[..8].try_into().ok()?);
            format!("{};pos={pos}", String::from_utf8_lossy(&data[8..]))
        }
        _ => String::new(),
    };
    Some(EventInfo {
        log_name: log.to_string(),
        pos: ev.pos,
        event_type: event::type_name(h.type_code),
        server_id: h.server_id,
        end_log_pos: h.log_pos as u64,
        info,
    })
}

#[cfg(test)]
mod tests;
