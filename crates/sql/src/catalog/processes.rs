//! The server's connections as SQL sees them: `SHOW [FULL] PROCESSLIST` and
//! `information_schema.PROCESSLIST` read them through a [`ProcessSource`] that the
//! session layer (which owns connections) installs in the catalog at startup, so the SQL
//! layer knows nothing of sessions.

use std::sync::{Arc, OnceLock};

/// One connection, as the process list shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessRow {
    pub id: u64,
    pub user: String,
    pub host: String,
    pub db: Option<String>,
    /// `Sleep`, `Query`, `Execute`, …
    pub command: &'static str,
    /// Seconds in the current command (or idle).
    pub time: u64,
    /// `executing`, `Waiting for table metadata lock`, … (empty when idle).
    pub state: String,
    /// The running statement's text (None when idle).
    pub info: Option<String>,
}

/// Lists the server's connections.
pub trait ProcessSource: Send + Sync {
    fn processes(&self) -> Vec<ProcessRow>;
}

/// The catalog's slot for the process source (installed once).
#[derive(Default)]
pub struct ProcessSlot(OnceLock<Arc<dyn ProcessSource>>);

impl ProcessSlot {
    pub fn install(&self, source: Arc<dyn ProcessSource>) {
        let _ = self.0.set(source);
    }

    /// The connections, by id; none when no session layer installed a source (tools
    /// that open a catalog without a server).
    pub fn rows(&self) -> Vec<ProcessRow> {
        let mut rows = self.0.get().map(|s| s.processes()).unwrap_or_default();
        rows.sort_by_key(|r| r.id);
        rows
    }
}
