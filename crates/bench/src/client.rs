//! What a benchmark talks to: a [`Client`] runs SQL text and reports rows and affected
//! rows; a [`Target`] makes clients, either sessions of an in-process server (no
//! network: the engines themselves are measured) or connections to a MySQL-protocol
//! server on this machine (Strata or MariaDB).

use crate::inprocess::{self, InProcessClient, ServerSettings};
use crate::wire::{WireClient, WireOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use strata_session::Server;

/// A failed statement: the MySQL error number when the server gave one, and its text.
#[derive(Clone, Debug)]
pub struct ClientError {
    pub code: Option<u16>,
    pub message: String,
}

impl ClientError {
    pub fn from_strata(e: strata_types::Error) -> ClientError {
        ClientError {
            code: Some(e.code()),
            message: e.to_string(),
        }
    }

    /// Deadlock (1213) and lock wait timeout (1205): what sysbench retries, since a
    /// transactional engine may choose any transaction as the victim.
    pub fn is_retryable(&self) -> bool {
        matches!(self.code, Some(1213) | Some(1205))
    }
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code {
            Some(c) => write!(f, "error {c}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// What one statement did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    /// Rows of the result set.
    pub rows: u64,
    /// Affected rows of INSERT/UPDATE/DELETE.
    pub affected: u64,
}

pub trait Client: Send {
    /// Runs one statement, counting (not keeping) its rows.
    fn exec(&mut self, sql: &str) -> Result<Outcome, ClientError>;
    /// Runs one statement and returns its rows as text (NULL as "NULL"): for checks
    /// and variables, never on a measured path.
    fn rows(&mut self, sql: &str) -> Result<Vec<Vec<String>>, ClientError>;

    /// The first column of the first row, if any.
    fn scalar(&mut self, sql: &str) -> Result<Option<String>, ClientError> {
        Ok(self
            .rows(sql)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next()))
    }
}

/// Where the clients of a run connect.
pub enum Target {
    InProcess {
        server: Arc<Server>,
        datadir: PathBuf,
        next_id: AtomicU32,
        /// Removes a data directory the bench created itself when the target goes.
        _temp: Option<tempfile::TempDir>,
    },
    Wire {
        opts: WireOptions,
        /// The server's data directory, when the user gave it: only used to drop the
        /// OS page cache of table files (pagecache scenario).
        datadir: Option<PathBuf>,
    },
}

impl Target {
    /// A fresh in-process server: in `datadir` when given (it must not hold a data
    /// directory already, so that every run starts from the same state), else in a new
    /// temporary directory under `parent`, removed afterwards.
    pub fn in_process(
        settings: &ServerSettings,
        datadir: Option<&Path>,
        parent: &Path,
    ) -> Result<Target, String> {
        let (dir, temp) = match datadir {
            Some(d) => {
                if d.exists()
                    && std::fs::read_dir(d)
                        .map_err(|e| format!("{}: {e}", d.display()))?
                        .next()
                        .is_some()
                {
                    return Err(format!(
                        "--datadir {} is not empty: the bench needs a fresh data directory (remove it, or omit --datadir for a temporary one)",
                        d.display()
                    ));
                }
                std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
                (d.to_path_buf(), None)
            }
            None => {
                let t = tempfile::Builder::new()
                    .prefix("strata-bench-")
                    .tempdir_in(parent)
                    .map_err(|e| {
                        format!("creating a data directory in {}: {e}", parent.display())
                    })?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        let mut s = settings.clone();
        s.datadir = dir.clone();
        let server = inprocess::open_server(&s)?;
        Ok(Target::InProcess {
            server,
            datadir: dir,
            next_id: AtomicU32::new(1),
            _temp: temp,
        })
    }

    pub fn connect(&self) -> Result<Box<dyn Client>, String> {
        match self {
            Target::InProcess {
                server, next_id, ..
            } => {
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                InProcessClient::new(server.clone(), id)
                    .map(|c| Box::new(c) as Box<dyn Client>)
                    .map_err(|e| format!("opening a session: {e}"))
            }
            Target::Wire { opts, .. } => WireClient::connect(opts)
                .map(|c| Box::new(c) as Box<dyn Client>)
                .map_err(|e| format!("connecting to {}: {e}", opts.address())),
        }
    }

    /// The data directory whose table files the bench may touch (drop from the OS
    /// cache): always known in-process, over the wire only when given.
    pub fn datadir(&self) -> Option<&Path> {
        match self {
            Target::InProcess { datadir, .. } => Some(datadir),
            Target::Wire { datadir, .. } => datadir.as_deref(),
        }
    }

    pub fn is_in_process(&self) -> bool {
        matches!(self, Target::InProcess { .. })
    }

    /// For headings: what was measured.
    pub fn describe(&self) -> String {
        match self {
            Target::InProcess { datadir, .. } => format!(
                "Strata {} in-process (no network), data directory {}",
                strata_sql::SERVER_VERSION,
                datadir.display()
            ),
            Target::Wire { opts, .. } => format!("the server at {}", opts.address()),
        }
    }
}
