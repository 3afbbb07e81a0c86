//! The session's transaction as engines see it. The session owns one [`Txn`] per open
//! transaction (one per statement under autocommit) and passes it with every data call;
//! a transactional engine joins it on first use with its own [`Participant`] (its
//! transaction id, read view, undo and locks) and finds that state again on later calls.
//!
//! Statement atomicity: MySQL undoes a failed statement, not the whole transaction
//! (a duplicate key in the third row of a multi-row INSERT leaves the transaction's
//! earlier statements in place). [`Txn::begin_statement`] records a savepoint in each
//! participant and [`Txn::end_statement`] rolls back to it on failure.
//!
//! Savepoints (`SAVEPOINT name`): a named savepoint records each joined participant's
//! [`Participant::savepoint`] token; rolling back to it calls
//! [`Participant::rollback_to`] on every participant (to its start for one that joined
//! later). They live in the `Txn`, so they vanish with it at COMMIT or ROLLBACK.
//!
//! Row marks (`UPDATE IGNORE`, `DELETE IGNORE`): a statement that skips a row whose
//! change failed takes a [`RowMark`] before the row and, on such a failure, rolls back
//! to it ([`Txn::rollback_to_row_mark`]): every change the row made (a moved row's
//! delete before its insert met a duplicate, an index entry, a cascade) is undone and
//! its logged rows forgotten, as InnoDB rolls back one failed row operation.
//!
//! Row logging (the binary log): when the session turns it on, the SQL layer records
//! every row it changes ([`Txn::log_row`]); a failed statement's, a rolled-back
//! savepoint's or a rolled-back transaction's records go with its changes, and the
//! session takes the rest at commit for the binary log. Changes to non-transactional
//! tables are kept apart: they are logged at statement end whatever happens after.
//!
//! Two-phase commit: with the binary log on, the session calls [`Txn::prepare`] with
//! the log's xid before it writes the transaction's events, then commits (see
//! `session/src/binlog.rs`). Without the log nothing is prepared.
//!
//! A `Txn` lives on one connection thread: it uses `Cell`/`RefCell`, not locks.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata_types::{Error, Result, RowChange, TableDef};

/// Row changes recorded for the binary log, in the order made.
pub type LoggedRows = Vec<(Arc<TableDef>, RowChange)>;

/// Why a connection's running statement must stop: KILL QUERY, KILL CONNECTION, or its
/// `max_execution_time` passed. Shared by the connection (which clears it at each
/// statement's start), the process list (through which another connection's KILL raises
/// it) and the statement's [`Txn`], so every long loop in the SQL layer and every lock
/// wait in an engine can notice within a moment ([`Interrupt::check`]).
#[derive(Clone, Default)]
pub struct Interrupt(Arc<InterruptState>);

#[derive(Default)]
struct InterruptState {
    /// 0: run on; else the [`StopReason`] as a number.
    reason: AtomicU8,
    /// The statement's deadline in microseconds since [`epoch`]; 0 for none.
    deadline_us: AtomicU64,
}

/// Why a statement stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// KILL QUERY: the statement fails with 1317; the connection stays.
    Query = 1,
    /// KILL [CONNECTION]: the statement fails with 1317 and the connection closes.
    Connection = 2,
    /// `max_execution_time`: the statement fails with 3024.
    Timeout = 3,
}

/// A process-wide origin for deadlines kept as integers.
fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

impl Interrupt {
    /// Asks the running statement (or, for [`StopReason::Connection`], the connection)
    /// to stop. A connection kill is never downgraded by a later query kill.
    pub fn raise(&self, why: StopReason) {
        let _ = self
            .0
            .reason
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                (r != StopReason::Connection as u8).then_some(why as u8)
            });
    }

    /// A new statement starts: forgets a query kill and sets the statement's deadline
    /// (`max_execution_time`; None: no limit). A connection kill stays.
    pub fn start_statement(&self, limit: Option<Duration>) {
        let _ = self
            .0
            .reason
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                (r != StopReason::Connection as u8).then_some(0)
            });
        let deadline = limit.map_or(0, |l| {
            (epoch().elapsed() + l).as_micros().min(u64::MAX as u128) as u64
        });
        self.0.deadline_us.store(deadline, Ordering::Release);
    }

    /// Whether the connection was killed.
    pub fn connection_killed(&self) -> bool {
        self.0.reason.load(Ordering::Acquire) == StopReason::Connection as u8
    }

    /// The error the running statement must stop with, if any. Cheap (two atomic
    /// loads, and a clock read only when a deadline is set): called per row.
    pub fn check(&self) -> Result<()> {
        match self.0.reason.load(Ordering::Relaxed) {
            0 => {}
            r if r == StopReason::Timeout as u8 => return Err(Error::ExecutionTimeExceeded),
            _ => return Err(Error::Interrupted),
        }
        let deadline = self.0.deadline_us.load(Ordering::Relaxed);
        if deadline != 0 && epoch().elapsed().as_micros() as u64 >= deadline {
            self.raise(StopReason::Timeout);
            return Err(Error::ExecutionTimeExceeded);
        }
        Ok(())
    }
}

/// `transaction_isolation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Isolation {
    /// Parses MySQL's spelling (`REPEATABLE-READ`, also with a space or underscore).
    pub fn parse(s: &str) -> Option<Isolation> {
        match s.to_ascii_uppercase().replace([' ', '_'], "-").as_str() {
            "READ-UNCOMMITTED" => Some(Isolation::ReadUncommitted),
            "READ-COMMITTED" => Some(Isolation::ReadCommitted),
            "REPEATABLE-READ" => Some(Isolation::RepeatableRead),
            "SERIALIZABLE" => Some(Isolation::Serializable),
            _ => None,
        }
    }
}

/// How the reads of the current statement treat rows other transactions change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadMode {
    /// A consistent read from the transaction's snapshot: never waits, never locks.
    Consistent,
    /// The latest committed version, share-locked (`LOCK IN SHARE MODE`).
    LockShared,
    /// The latest committed version, exclusively locked (`FOR UPDATE`, and the rows an
    /// UPDATE or DELETE looks at).
    LockExclusive,
}

/// What a locking read does with a row another transaction holds locked: waits (the
/// default, up to `innodb_lock_wait_timeout`), fails at once (`NOWAIT`, 3572), or leaves
/// the row out (`SKIP LOCKED`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWait {
    Wait,
    NoWait,
    SkipLocked,
}

/// An XA xid as engines store it: `[formatID i32 LE][gtrid len u8][bqual len u8]
/// [gtrid][bqual]` (docs/format/btree.md, kind 6). The session layer parses and
/// compares xids; engines only keep these bytes.
pub fn xa_xid_bytes(format_id: i32, gtrid: &[u8], bqual: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(6 + gtrid.len() + bqual.len());
    b.extend_from_slice(&format_id.to_le_bytes());
    b.push(gtrid.len() as u8);
    b.push(bqual.len() as u8);
    b.extend_from_slice(gtrid);
    b.extend_from_slice(bqual);
    b
}

/// The parts of [`xa_xid_bytes`]: (formatID, gtrid, bqual); None if malformed.
pub fn xa_xid_parts(b: &[u8]) -> Option<(i32, &[u8], &[u8])> {
    let format_id = i32::from_le_bytes(b.get(..4)?.try_into().ok()?);
    let g = *b.get(4)? as usize;
    let q = *b.get(5)? as usize;
    let gtrid = b.get(6..6 + g)?;
    let bqual = b.get(6 + g..6 + g + q)?;
    (b.len() == 6 + g + q).then_some((format_id, gtrid, bqual))
}

/// One engine's part in a transaction.
pub trait Participant: Any + Send + Sync {
    /// Makes the transaction's changes durable (per the engine's flush policy) and
    /// visible, and releases its locks. After [`Participant::prepare`] the changes are
    /// durable already: the commit needs no flush of its own (the coordinator's log,
    /// written in between, decides the transaction's fate after a crash).
    fn commit(&self) -> Result<()>;
    /// Two-phase commit, first phase (the binary log is the coordinator): makes the
    /// transaction's changes durable as *prepared* under `xid` (per the engine's flush
    /// policy), so that after a crash the engine reports it
    /// ([`crate::Engine::prepared_xids`]) instead of rolling it back. Nothing to do for
    /// a participant that changed nothing, or a non-transactional engine.
    fn prepare(&self, _xid: u64) -> Result<()> {
        Ok(())
    }
    /// XA PREPARE (an external coordinator, `session/src/xa.rs`): makes the changes
    /// durable as prepared under the XA xid `xid` (its encoding, [`xa_xid_bytes`]).
    /// Unlike [`Participant::prepare`], recovery keeps such a transaction prepared,
    /// locks and all, until an XA COMMIT or XA ROLLBACK; the binary log is never
    /// asked about it. An engine without XA refuses (only btree has it).
    fn prepare_xa(&self, _xid: &[u8]) -> Result<()> {
        Err(Error::NotSupported(
            "XA PREPARE of this engine's tables".into(),
        ))
    }
    /// Undoes every change and releases the locks.
    fn rollback(&self) -> Result<()>;
    /// A token for the current point in the transaction's changes.
    fn savepoint(&self) -> u64;
    /// Undoes the changes made after `savepoint`; locks stay, as in InnoDB.
    fn rollback_to(&self, savepoint: u64) -> Result<()>;
    /// Called after each statement (READ COMMITTED drops its read view here).
    fn end_statement(&self) {}
    fn as_any(&self) -> &dyn Any;
}

struct Joined {
    engine: &'static str,
    part: Arc<dyn Participant>,
    statement_start: Cell<u64>,
}

/// A named savepoint: each participant's position when it was set.
struct Savepoint {
    name: String,
    marks: Vec<(&'static str, u64)>,
    /// How many logged rows there were.
    logged: usize,
}

/// The point before one row's change ([`Txn::row_mark`]): each joined participant's
/// position and how many transactional changes were logged.
pub struct RowMark {
    marks: Vec<(&'static str, u64)>,
    logged: usize,
}

pub struct Txn {
    isolation: Isolation,
    lock_wait_timeout: Duration,
    read_mode: Cell<ReadMode>,
    /// NOWAIT / SKIP LOCKED of the current locking read.
    lock_wait: Cell<LockWait>,
    joined: RefCell<Vec<Joined>>,
    /// START TRANSACTION READ ONLY / transaction_read_only: writes give 1792.
    read_only: Cell<bool>,
    /// A transaction that holds one autocommitted statement only: InnoDB's SERIALIZABLE
    /// reads such a statement's rows without locks, as a consistent read.
    single_statement: Cell<bool>,
    /// A non-transactional table (heap) was changed in this transaction: ROLLBACK
    /// cannot undo that, and says so with warning 1196.
    nontransactional_changed: Cell<bool>,
    /// Oldest first; names compare case-insensitively, as MySQL's.
    savepoints: RefCell<Vec<Savepoint>>,
    /// The connection's stop signal (KILL, max_execution_time); None until a connection
    /// attaches one (a transaction per statement should not allocate one to drop it).
    interrupt: RefCell<Option<Interrupt>>,
    /// The row changes recorded for the binary log; None when it is off, so a
    /// transaction without it carries one pointer and tests it once per row.
    row_log: Option<Box<RefCell<RowLog>>>,
}

/// What [`Txn::log_row`] recorded.
#[derive(Default)]
struct RowLog {
    /// Changes to transactional tables, and how many there were when the running
    /// statement began.
    logged: LoggedRows,
    at_statement: usize,
    /// Changes to non-transactional tables, logged at statement end.
    nontransactional: LoggedRows,
    /// CREATE TABLE … SELECT: the CREATE TABLE statement the binary log writes before
    /// the copied rows, in the same logged transaction (MySQL 8's atomic CTAS).
    ddl: Option<String>,
}

impl Txn {
    pub fn new(isolation: Isolation, lock_wait_timeout: Duration) -> Txn {
        Txn {
            isolation,
            lock_wait_timeout,
            read_mode: Cell::new(ReadMode::Consistent),
            lock_wait: Cell::new(LockWait::Wait),
            joined: RefCell::new(Vec::new()),
            read_only: Cell::new(false),
            single_statement: Cell::new(false),
            nontransactional_changed: Cell::new(false),
            savepoints: RefCell::new(Vec::new()),
            interrupt: RefCell::new(None),
            row_log: None,
        }
    }

    /// Records row changes for the binary log from now on ([`Txn::log_row`]).
    pub fn with_row_log(mut self) -> Txn {
        self.row_log = Some(Box::default());
        self
    }

    /// Whether the SQL layer must record its row changes ([`Txn::log_row`]).
    #[inline]
    pub fn logs_rows(&self) -> bool {
        self.row_log.is_some()
    }

    /// Records a row change made to `table` (a no-op unless [`Txn::logs_rows`]).
    pub fn log_row(&self, table: &Arc<TableDef>, transactional: bool, change: RowChange) {
        let Some(log) = &self.row_log else {
            return;
        };
        let mut log = log.borrow_mut();
        let list = if transactional {
            &mut log.logged
        } else {
            &mut log.nontransactional
        };
        list.push((table.clone(), change));
    }

    /// The recorded changes to transactional tables, taken (at commit).
    pub fn take_logged_rows(&self) -> LoggedRows {
        match &self.row_log {
            Some(log) => {
                let mut log = log.borrow_mut();
                log.at_statement = 0;
                std::mem::take(&mut log.logged)
            }
            None => Vec::new(),
        }
    }

    /// Records the DDL text the logged rows of this transaction must follow in the
    /// binary log (CREATE TABLE … SELECT; a no-op unless [`Txn::logs_rows`]).
    pub fn set_logged_ddl(&self, text: String) {
        if let Some(log) = &self.row_log {
            log.borrow_mut().ddl = Some(text);
        }
    }

    /// The DDL text of [`Txn::set_logged_ddl`], taken.
    pub fn take_logged_ddl(&self) -> Option<String> {
        self.row_log
            .as_ref()
            .and_then(|l| l.borrow_mut().ddl.take())
    }

    /// The recorded changes to non-transactional tables, taken (at statement end).
    pub fn take_nontransactional_rows(&self) -> LoggedRows {
        match &self.row_log {
            Some(log) => std::mem::take(&mut log.borrow_mut().nontransactional),
            None => Vec::new(),
        }
    }

    /// How many transactional changes are recorded.
    fn logged_len(&self) -> usize {
        self.row_log.as_ref().map_or(0, |l| l.borrow().logged.len())
    }

    /// Forgets the recorded transactional changes past the first `n`.
    fn truncate_logged(&self, n: usize) {
        if let Some(log) = &self.row_log {
            let mut log = log.borrow_mut();
            log.logged.truncate(n);
            log.at_statement = log.at_statement.min(n);
        }
    }

    /// How the current statement's locking reads treat a locked row.
    pub fn lock_wait(&self) -> LockWait {
        self.lock_wait.get()
    }

    pub fn set_lock_wait(&self, w: LockWait) {
        self.lock_wait.set(w);
    }

    /// Attaches the connection's stop signal: long loops and lock waits then end with
    /// its error ([`Txn::check_interrupt`]).
    pub fn set_interrupt(&self, interrupt: Interrupt) {
        *self.interrupt.borrow_mut() = Some(interrupt);
    }

    /// The connection's stop signal (an engine copies it to check while waiting).
    pub fn interrupt(&self) -> Interrupt {
        self.interrupt.borrow().clone().unwrap_or_default()
    }

    /// Err(1317 or 3024) when the running statement was killed or ran out of time.
    pub fn check_interrupt(&self) -> Result<()> {
        match &*self.interrupt.borrow() {
            Some(i) => i.check(),
            None => Ok(()),
        }
    }

    pub fn read_only(&self) -> bool {
        self.read_only.get()
    }

    pub fn set_read_only(&self, read_only: bool) {
        self.read_only.set(read_only);
    }

    /// True for the transaction of one statement under autocommit (no BEGIN).
    pub fn single_statement(&self) -> bool {
        self.single_statement.get()
    }

    pub fn set_single_statement(&self, single: bool) {
        self.single_statement.set(single);
    }

    /// Records that a non-transactional table changed in this transaction.
    pub fn note_nontransactional_change(&self) {
        self.nontransactional_changed.set(true);
    }

    pub fn nontransactional_changed(&self) -> bool {
        self.nontransactional_changed.get()
    }

    /// SAVEPOINT name: records every participant's position; an existing savepoint of
    /// the same name is replaced (and the new one is the latest).
    pub fn set_savepoint(&self, name: &str) {
        let marks = self
            .joined
            .borrow()
            .iter()
            .map(|j| (j.engine, j.part.savepoint()))
            .collect();
        let mut sps = self.savepoints.borrow_mut();
        sps.retain(|s| !s.name.eq_ignore_ascii_case(name));
        sps.push(Savepoint {
            name: name.to_string(),
            marks,
            logged: self.logged_len(),
        });
    }

    fn savepoint_index(&self, name: &str) -> Option<usize> {
        self.savepoints
            .borrow()
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// ROLLBACK TO SAVEPOINT name: undoes every change made after it (a participant
    /// that joined later is rolled back to its start); the savepoint stays and later
    /// ones are deleted. Row locks taken since stay held, as in InnoDB. Returns false
    /// when there is no such savepoint.
    pub fn rollback_to_savepoint(&self, name: &str) -> Result<bool> {
        let Some(i) = self.savepoint_index(name) else {
            return Ok(false);
        };
        let (marks, logged) = {
            let mut sps = self.savepoints.borrow_mut();
            sps.truncate(i + 1);
            (sps[i].marks.clone(), sps[i].logged)
        };
        self.truncate_logged(logged);
        let mut first_err = None;
        for (engine, part) in self
            .joined
            .borrow()
            .iter()
            .map(|j| (j.engine, j.part.clone()))
            .collect::<Vec<_>>()
        {
            let at = marks
                .iter()
                .find(|(e, _)| *e == engine)
                .map_or(0, |(_, at)| *at);
            if let Err(e) = part.rollback_to(at) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(true), Err)
    }

    /// The point before one row's change, to undo that row alone
    /// ([`Txn::rollback_to_row_mark`]).
    pub fn row_mark(&self) -> RowMark {
        RowMark {
            marks: self
                .joined
                .borrow()
                .iter()
                .map(|j| (j.engine, j.part.savepoint()))
                .collect(),
            logged: self.logged_len(),
        }
    }

    /// Undoes every change made since `mark` in the transactional engines and forgets
    /// the logged rows of those changes. A participant that joined after the mark is
    /// rolled back to where it joined (its statement start, recorded at `join`).
    /// Changes to non-transactional tables cannot be undone: their logged rows stay, as
    /// the rows stay changed.
    pub fn rollback_to_row_mark(&self, mark: &RowMark) -> Result<()> {
        self.truncate_logged(mark.logged);
        let parts: Vec<(Arc<dyn Participant>, u64)> = self
            .joined
            .borrow()
            .iter()
            .map(|j| {
                let at = mark
                    .marks
                    .iter()
                    .find(|(e, _)| *e == j.engine)
                    .map_or(j.statement_start.get(), |(_, at)| *at);
                (j.part.clone(), at)
            })
            .collect();
        let mut first_err = None;
        for (part, at) in parts {
            if let Err(e) = part.rollback_to(at) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// RELEASE SAVEPOINT name: deletes it and every later one, undoing nothing.
    /// Returns false when there is no such savepoint.
    pub fn release_savepoint(&self, name: &str) -> bool {
        match self.savepoint_index(name) {
            Some(i) => {
                self.savepoints.borrow_mut().truncate(i);
                true
            }
            None => false,
        }
    }

    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// `innodb_lock_wait_timeout`: how long a row-lock wait lasts before error 1205.
    pub fn lock_wait_timeout(&self) -> Duration {
        self.lock_wait_timeout
    }

    pub fn read_mode(&self) -> ReadMode {
        self.read_mode.get()
    }

    /// Set by the executor for the statement it runs (reset by `begin_statement`).
    pub fn set_read_mode(&self, mode: ReadMode) {
        self.read_mode.set(mode);
    }

    /// The state `engine` attached to this transaction, if it joined.
    pub fn participant(&self, engine: &'static str) -> Option<Arc<dyn Participant>> {
        self.joined
            .borrow()
            .iter()
            .find(|j| j.engine == engine)
            .map(|j| j.part.clone())
    }

    /// Attaches an engine's state. Joining in the middle of a statement makes the
    /// statement's savepoint the participant's start.
    pub fn join(&self, engine: &'static str, part: Arc<dyn Participant>) {
        let start = part.savepoint();
        self.joined.borrow_mut().push(Joined {
            engine,
            part,
            statement_start: Cell::new(start),
        });
    }

    /// True when no transactional engine did anything in this transaction.
    pub fn is_empty(&self) -> bool {
        self.joined.borrow().is_empty()
    }

    fn parts(&self) -> Vec<Arc<dyn Participant>> {
        self.joined
            .borrow()
            .iter()
            .map(|j| j.part.clone())
            .collect()
    }

    pub fn begin_statement(&self) {
        self.read_mode.set(ReadMode::Consistent);
        if let Some(log) = &self.row_log {
            let mut log = log.borrow_mut();
            log.at_statement = log.logged.len();
        }
        for j in self.joined.borrow().iter() {
            j.statement_start.set(j.part.savepoint());
        }
    }

    /// Ends a statement; when it failed, undoes what it changed.
    pub fn end_statement(&self, succeeded: bool) -> Result<()> {
        let joined: Vec<(Arc<dyn Participant>, u64)> = self
            .joined
            .borrow()
            .iter()
            .map(|j| (j.part.clone(), j.statement_start.get()))
            .collect();
        if !succeeded {
            if let Some(log) = &self.row_log {
                let mut log = log.borrow_mut();
                let at = log.at_statement;
                log.logged.truncate(at);
            }
        }
        let mut first_err = None;
        for (part, start) in joined {
            if !succeeded {
                if let Err(e) = part.rollback_to(start) {
                    first_err.get_or_insert(e);
                }
            }
            part.end_statement();
        }
        self.read_mode.set(ReadMode::Consistent);
        first_err.map_or(Ok(()), Err)
    }

    /// Two-phase commit's first phase: every participant prepares under `xid`
    /// ([`Participant::prepare`]). On an error the caller rolls the transaction back.
    pub fn prepare(&self, xid: u64) -> Result<()> {
        for p in self.parts() {
            p.prepare(xid)?;
        }
        Ok(())
    }

    /// XA PREPARE: every participant prepares under the XA xid `xid`
    /// ([`Participant::prepare_xa`]). On an error the caller rolls the transaction back.
    pub fn prepare_xa(&self, xid: &[u8]) -> Result<()> {
        for p in self.parts() {
            p.prepare_xa(xid)?;
        }
        Ok(())
    }

    /// A transaction holding `part` only: an XA transaction recovery found prepared
    /// ([`crate::Engine::take_recovered_xa`]), for the session layer to commit or roll
    /// back.
    pub fn adopt(engine: &'static str, part: Arc<dyn Participant>) -> Txn {
        let t = Txn::new(Isolation::RepeatableRead, Duration::from_secs(50));
        t.join(engine, part);
        t
    }

    pub fn commit(self) -> Result<()> {
        let mut first_err = None;
        for p in self.parts() {
            if let Err(e) = p.commit() {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    pub fn rollback(self) -> Result<()> {
        let mut first_err = None;
        for p in self.parts() {
            if let Err(e) = p.rollback() {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Default for Txn {
    fn default() -> Txn {
        Txn::new(Isolation::RepeatableRead, Duration::from_secs(50))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Log(Mutex<Vec<String>>, Mutex<u64>);

    impl Participant for Log {
        fn commit(&self) -> Result<()> {
            self.0.lock().unwrap().push("commit".into());
            Ok(())
        }
        fn rollback(&self) -> Result<()> {
            self.0.lock().unwrap().push("rollback".into());
            Ok(())
        }
        fn savepoint(&self) -> u64 {
            *self.1.lock().unwrap()
        }
        fn rollback_to(&self, sp: u64) -> Result<()> {
            self.0.lock().unwrap().push(format!("rollback_to {sp}"));
            Ok(())
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    #[test]
    fn failed_statement_rolls_back_to_its_start_only() {
        let t = Txn::default();
        let log = Arc::new(Log::default());
        t.join("x", log.clone());
        *log.1.lock().unwrap() = 3; // first statement made 3 changes
        t.begin_statement();
        *log.1.lock().unwrap() = 5;
        t.end_statement(false).unwrap();
        assert_eq!(*log.0.lock().unwrap(), vec!["rollback_to 3"]);
        assert!(t.participant("x").is_some() && t.participant("y").is_none());
        t.commit().unwrap();
        assert_eq!(log.0.lock().unwrap().last().unwrap(), "commit");
    }

    #[test]
    fn savepoints_roll_back_in_order_and_later_ones_go() {
        let t = Txn::default();
        let a = Arc::new(Log::default());
        t.join("a", a.clone());
        *a.1.lock().unwrap() = 2;
        t.set_savepoint("s1");
        *a.1.lock().unwrap() = 4;
        t.set_savepoint("s2");
        // A participant joining after s1 and s2 is undone to its start.
        let b = Arc::new(Log::default());
        *b.1.lock().unwrap() = 0;
        t.join("b", b.clone());
        *b.1.lock().unwrap() = 3;
        assert!(t.rollback_to_savepoint("S1").unwrap());
        assert_eq!(*a.0.lock().unwrap(), vec!["rollback_to 2"]);
        assert_eq!(*b.0.lock().unwrap(), vec!["rollback_to 0"]);
        // s2 came after s1: gone. s1 stays.
        assert!(!t.rollback_to_savepoint("s2").unwrap());
        assert!(t.rollback_to_savepoint("s1").unwrap());
        assert!(t.release_savepoint("s1"));
        assert!(!t.release_savepoint("s1"));
        assert!(!t.rollback_to_savepoint("s1").unwrap());
    }

    #[test]
    fn a_savepoint_of_an_existing_name_replaces_it() {
        let t = Txn::default();
        let a = Arc::new(Log::default());
        t.join("a", a.clone());
        t.set_savepoint("x");
        *a.1.lock().unwrap() = 1;
        t.set_savepoint("y");
        *a.1.lock().unwrap() = 5;
        t.set_savepoint("x");
        // x is now the latest: releasing it leaves y.
        assert!(t.release_savepoint("x"));
        assert!(t.rollback_to_savepoint("y").unwrap());
        assert_eq!(*a.0.lock().unwrap(), vec!["rollback_to 1"]);
    }

    #[test]
    fn logged_rows_follow_statement_and_savepoint_rollback() {
        use strata_types::Value;
        let def = Arc::new(TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: vec![],
            checks: vec![],
            instant: None,
            default_collation: Default::default(),
        });
        let row = |i| RowChange::Insert(vec![Value::Int(i)]);
        let t = Txn::default();
        t.log_row(&def, true, row(0));
        assert!(t.take_logged_rows().is_empty(), "off until turned on");
        let t = t.with_row_log();
        t.begin_statement();
        t.log_row(&def, true, row(1));
        t.end_statement(true).unwrap();
        t.set_savepoint("s");
        t.begin_statement();
        t.log_row(&def, true, row(2));
        t.log_row(&def, false, row(20));
        t.end_statement(false).unwrap(); // failed: its transactional row goes
        t.begin_statement();
        t.log_row(&def, true, row(3));
        t.end_statement(true).unwrap();
        assert!(t.rollback_to_savepoint("s").unwrap());
        t.begin_statement();
        t.log_row(&def, true, row(4));
        t.end_statement(true).unwrap();
        let kept: Vec<_> = t.take_logged_rows().into_iter().map(|(_, c)| c).collect();
        assert_eq!(kept, vec![row(1), row(4)]);
        // The heap table's change stays whatever happened to the statement.
        let heap: Vec<_> = t
            .take_nontransactional_rows()
            .into_iter()
            .map(|(_, c)| c)
            .collect();
        assert_eq!(heap, vec![row(20)]);
    }

    #[test]
    fn isolation_names_parse() {
        assert_eq!(
            Isolation::parse("repeatable read"),
            Some(Isolation::RepeatableRead)
        );
        assert_eq!(
            Isolation::parse("READ-COMMITTED"),
            Some(Isolation::ReadCommitted)
        );
        assert_eq!(Isolation::parse("bogus"), None);
    }
}
