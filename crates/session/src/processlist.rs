//! The server's connections: who is connected, what each runs and for how long (SHOW
//! PROCESSLIST, information_schema.PROCESSLIST), and the handle through which one
//! connection stops another's statement or closes it (KILL [QUERY|CONNECTION] id).
//!
//! Each session registers one [`Process`] for its lifetime. The session updates its own
//! entry at each statement's start and end (one uncontended lock); readers copy the
//! entries out. KILL raises the target's [`Interrupt`], which the statement's loops and
//! lock waits check; KILL CONNECTION also shuts the target's socket down, so a
//! connection idle in a read wakes up and ends.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Instant;
use strata_engine::{Interrupt, StopReason};
use strata_sql::mdl::WaitStateHandle;
use strata_sql::{ProcessRow, ProcessSource};

/// Closes a connection's socket (supplied by the protocol layer).
pub type Closer = Box<dyn Fn() + Send + Sync>;

/// Every connected session, by connection id.
#[derive(Default)]
pub struct ProcessList {
    entries: Mutex<strata_types::inthash::IntMap<u32, Arc<Process>>>,
}

/// One connection's entry.
pub struct Process {
    pub id: u32,
    pub user: String,
    /// Its statements' stop signal.
    pub interrupt: Interrupt,
    activity: Mutex<Activity>,
    closer: Mutex<Option<Closer>>,
    /// What the connection waits for in the metadata lock manager, if anything.
    waits: Mutex<Option<WaitStateHandle>>,
}

struct Activity {
    host: String,
    db: Option<String>,
    command: &'static str,
    since: Instant,
    state: &'static str,
    info: Option<Info>,
}

/// The running statement's text, shared rather than copied: a prepared statement's
/// execution costs a reference count, not an allocation.
pub enum Info {
    Text(Arc<str>),
    Prepared(Arc<strata_sql::Prepared>),
}

impl Info {
    fn text(&self) -> &str {
        match self {
            Info::Text(t) => t,
            Info::Prepared(p) => &p.source,
        }
    }
}

impl ProcessList {
    /// Registers a new connection.
    pub fn register(&self, id: u32, user: &str) -> Arc<Process> {
        let p = Arc::new(Process {
            id,
            user: user.to_string(),
            interrupt: Interrupt::default(),
            activity: Mutex::new(Activity {
                host: "localhost".into(),
                db: None,
                command: "Sleep",
                since: Instant::now(),
                state: "",
                info: None,
            }),
            closer: Mutex::new(None),
            waits: Mutex::new(None),
        });
        self.entries.lock().insert(id, p.clone());
        p
    }

    /// The connection has ended.
    pub fn remove(&self, id: u32) {
        self.entries.lock().remove(&id);
    }

    /// KILL [QUERY|CONNECTION] id: false when no such connection exists.
    pub fn kill(&self, id: u64, connection: bool) -> bool {
        let target = u32::try_from(id)
            .ok()
            .and_then(|id| self.entries.lock().get(&id).cloned());
        match target {
            Some(p) => {
                p.kill(connection);
                true
            }
            None => false,
        }
    }
}

impl ProcessSource for ProcessList {
    fn processes(&self) -> Vec<ProcessRow> {
        let entries: Vec<Arc<Process>> = self.entries.lock().values().cloned().collect();
        entries.iter().map(|p| p.row()).collect()
    }
}

impl Process {
    /// The protocol layer's view of the connection: the client's host, and how to
    /// close its socket.
    pub fn attach(&self, host: String, closer: Closer) {
        self.activity.lock().host = host;
        *self.closer.lock() = Some(closer);
    }

    /// A command starts: `command` is `Query` or `Execute`, `info` its text.
    pub fn begin(&self, command: &'static str, info: Info) {
        let mut a = self.activity.lock();
        a.command = command;
        a.state = "executing";
        a.info = Some(info);
        a.since = Instant::now();
    }

    /// The command ended; the connection is idle.
    pub fn end(&self) {
        let mut a = self.activity.lock();
        a.command = "Sleep";
        a.state = "";
        a.info = None;
        a.since = Instant::now();
    }

    /// Where the State column learns of a metadata-lock wait ("Waiting for table
    /// metadata lock").
    pub fn set_wait_source(&self, waits: WaitStateHandle) {
        *self.waits.lock() = Some(waits);
    }

    /// What the running statement is doing, for the State column.
    pub fn set_state(&self, state: &'static str) {
        self.activity.lock().state = state;
    }

    /// The session's current database changed.
    pub fn set_db(&self, db: Option<String>) {
        self.activity.lock().db = db;
    }

    /// Stops the running statement; with `connection`, closes the connection too.
    pub fn kill(&self, connection: bool) {
        let why = if connection {
            StopReason::Connection
        } else {
            StopReason::Query
        };
        self.interrupt.raise(why);
        if connection {
            if let Some(close) = self.closer.lock().as_ref() {
                close();
            }
        }
    }

    fn row(&self) -> ProcessRow {
        let a = self.activity.lock();
        ProcessRow {
            id: self.id as u64,
            user: self.user.clone(),
            host: a.host.clone(),
            db: a.db.clone(),
            command: if self.interrupt.connection_killed() {
                "Killed"
            } else {
                a.command
            },
            time: a.since.elapsed().as_secs(),
            state: self
                .waits
                .lock()
                .as_ref()
                .and_then(|w| w.get().text())
                .unwrap_or(a.state)
                .to_string(),
            info: a.info.as_ref().map(|i| i.text().to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn kill_raises_the_signal_and_closes_only_for_connection() {
        let list = ProcessList::default();
        let p = list.register(7, "root");
        let closed = Arc::new(AtomicBool::new(false));
        let flag = closed.clone();
        p.attach(
            "127.0.0.1:5000".into(),
            Box::new(move || flag.store(true, Ordering::SeqCst)),
        );
        p.begin("Query", Info::Text(Arc::from("SELECT 1")));
        assert!(list.kill(7, false));
        assert_eq!(p.interrupt.check(), Err(strata_types::Error::Interrupted));
        assert!(!closed.load(Ordering::SeqCst));
        // The next statement starts clean after a query kill …
        p.interrupt.start_statement(None);
        assert_eq!(p.interrupt.check(), Ok(()));
        // … but not after a connection kill.
        assert!(list.kill(7, true));
        assert!(closed.load(Ordering::SeqCst));
        p.interrupt.start_statement(None);
        assert_eq!(p.interrupt.check(), Err(strata_types::Error::Interrupted));
        assert!(!list.kill(8, false));
        let rows = list.processes();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].command, "Killed");
        assert_eq!(rows[0].info.as_deref(), Some("SELECT 1"));
        list.remove(7);
        assert!(list.processes().is_empty());
    }

    #[test]
    fn a_deadline_stops_the_statement_with_3024() {
        let i = Interrupt::default();
        i.start_statement(Some(std::time::Duration::from_millis(20)));
        assert_eq!(i.check(), Ok(()));
        std::thread::sleep(std::time::Duration::from_millis(40));
        assert_eq!(i.check(), Err(strata_types::Error::ExecutionTimeExceeded));
        i.start_statement(None);
        assert_eq!(i.check(), Ok(()));
    }
}
