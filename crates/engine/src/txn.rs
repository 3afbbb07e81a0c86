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
//! A `Txn` lives on one connection thread: it uses `Cell`/`RefCell`, not locks.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;
use strata_types::Result;

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

/// One engine's part in a transaction.
pub trait Participant: Any + Send + Sync {
    /// Makes the transaction's changes durable (per the engine's flush policy) and
    /// visible, and releases its locks.
    fn commit(&self) -> Result<()>;
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

pub struct Txn {
    isolation: Isolation,
    lock_wait_timeout: Duration,
    read_mode: Cell<ReadMode>,
    joined: RefCell<Vec<Joined>>,
}

impl Txn {
    pub fn new(isolation: Isolation, lock_wait_timeout: Duration) -> Txn {
        Txn {
            isolation,
            lock_wait_timeout,
            read_mode: Cell::new(ReadMode::Consistent),
            joined: RefCell::new(Vec::new()),
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
