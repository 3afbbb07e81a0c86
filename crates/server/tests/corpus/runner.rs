//! Runs one corpus script against a server over the MySQL text protocol: a fresh database
//! per file, one connection for the file's records, a client-side read timeout per record
//! (a record that exceeds it counts as failed, "timeout"; the server is asked to drop the
//! statement, see [`Server::after_timeout`], and the runner reconnects), and the wall time
//! of every record.

use std::path::Path;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use super::parser::{self, Kind, Record};
use super::values;

/// Where records are sent: host, port, password, and the engine a session should default to
/// when the server was not started with it (an external target).
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub password: Option<String>,
    /// `SET SESSION default_storage_engine` on every connection when set.
    pub session_engine: Option<String>,
    pub timeout: Duration,
}

impl Endpoint {
    fn opts(&self, db: Option<&str>) -> mysql::Opts {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some(self.host.clone()))
            .tcp_port(self.port)
            .user(Some("root"))
            .pass(self.password.clone())
            .db_name(db)
            .prefer_socket(false)
            .tcp_connect_timeout(Some(self.timeout))
            .read_timeout(Some(self.timeout))
            .write_timeout(Some(self.timeout))
            .into()
    }

    /// A connection to `db` (or none), with the session engine set.
    pub fn connect(&self, db: Option<&str>) -> Result<mysql::Conn, String> {
        let mut conn = mysql::Conn::new(self.opts(db)).map_err(|e| describe(&e))?;
        if let Some(e) = &self.session_engine {
            conn.query_drop(format!("SET SESSION default_storage_engine={e}"))
                .map_err(|e| describe(&e))?;
        }
        Ok(conn)
    }
}

/// The server records run against, as the runner needs it.
pub trait Server {
    fn endpoint(&self) -> &Endpoint;
    /// Called after a record timed out and its connection (id `conn_id`) was dropped: the
    /// server is still executing the statement and must be made to stop, or statements
    /// given up on pile up and slow down every later record.
    fn after_timeout(&mut self, conn_id: u32);
}

/// What happened to one record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    /// Skipped by `skipif mysql` / `onlyif <other engine>`, or after a `halt`.
    Skip,
    /// Failed; `category` groups failures in the report (an error code and message, "wrong
    /// result", "timeout" …) and `detail` is the full explanation.
    Fail {
        category: String,
        detail: String,
    },
}

/// One executed (or skipped) record.
#[derive(Clone, Debug)]
pub struct RecordResult {
    pub line: usize,
    pub sql: String,
    pub outcome: Outcome,
    pub elapsed: Duration,
}

/// The results of one file.
#[derive(Debug, Default)]
pub struct FileResult {
    /// Path relative to the corpus directory, with `/` separators.
    pub name: String,
    pub records: Vec<RecordResult>,
    pub elapsed: Duration,
}

impl FileResult {
    pub fn passed(&self) -> usize {
        self.count(|o| *o == Outcome::Pass)
    }
    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Fail { .. }))
    }
    pub fn skipped(&self) -> usize {
        self.count(|o| *o == Outcome::Skip)
    }
    /// Records run (passed + failed).
    pub fn run(&self) -> usize {
        self.passed() + self.failed()
    }
    pub fn timeouts(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Fail { category, .. } if category == TIMEOUT))
    }
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.records.iter().filter(|r| f(&r.outcome)).count()
    }
}

/// The category of a record that ran into the client-side timeout.
pub const TIMEOUT: &str = "timeout";

/// How a client error reads in a failure line: `ERROR code (state): message` for a server
/// error, the client's own text otherwise.
pub fn describe(e: &mysql::Error) -> String {
    match e {
        mysql::Error::MySqlError(me) => {
            format!("ERROR {} ({}): {}", me.code, me.state, me.message)
        }
        other => format!("client error: {other}"),
    }
}

/// The failure category of an error: the code and the message up to any quoted SQL text
/// (`near '…'`) so that one category collects one kind of refusal.
fn error_category(e: &mysql::Error) -> String {
    match e {
        mysql::Error::MySqlError(me) => {
            let msg = match me.message.find(" near '") {
                Some(i) => &me.message[..i],
                None => &me.message,
            };
            let msg: String = msg.chars().take(90).collect();
            format!("{} {}", me.code, msg)
        }
        _ if io_kind(e).is_some() => "connection lost".into(),
        other => format!(
            "client error: {}",
            other.to_string().chars().take(60).collect::<String>()
        ),
    }
}

/// The kind of the I/O error under a client error, if it is one (a read timeout shows up
/// as `WouldBlock` or `TimedOut`, directly or inside the packet codec's error).
fn io_kind(e: &mysql::Error) -> Option<std::io::ErrorKind> {
    match e {
        mysql::Error::IoError(io) => Some(io.kind()),
        mysql::Error::CodecError(ce) => std::error::Error::source(ce)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .map(|io| io.kind()),
        _ => None,
    }
}

fn is_timeout(e: &mysql::Error) -> bool {
    matches!(
        io_kind(e),
        Some(std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
    )
}

/// A result set: the server's type letters and the rendered values, row after row.
struct Rows {
    letters: String,
    values: Vec<String>,
}

/// Sends `sql` and reads every result set; returns the first one that has columns.
fn execute(conn: &mut mysql::Conn, sql: &str) -> Result<Option<Rows>, mysql::Error> {
    let mut result = conn.query_iter(sql)?;
    let mut first: Option<Rows> = None;
    while let Some(set) = result.iter() {
        let letters: String = set
            .columns()
            .as_ref()
            .iter()
            .map(|c| values::letter(c.column_type()))
            .collect();
        let has_columns = !letters.is_empty();
        let mut vals = Vec::new();
        let bytes = letters.as_bytes();
        for row in set {
            let row = row?;
            for (i, v) in row.unwrap().iter().enumerate() {
                let l = bytes.get(i).copied().unwrap_or(b'T') as char;
                vals.push(values::render(v, l));
            }
        }
        if first.is_none() && has_columns {
            first = Some(Rows {
                letters,
                values: vals,
            });
        }
    }
    Ok(first)
}

/// Checks a query's result against the record; `Err((category, detail))` on a mismatch.
fn check_query(record: &Record, rows: Option<Rows>) -> Result<(), (String, String)> {
    let Kind::Query {
        types,
        sort,
        expected,
        ..
    } = &record.kind
    else {
        return Ok(());
    };
    let Some(rows) = rows else {
        return Err((
            "no result set".into(),
            "the query returned no result set".into(),
        ));
    };
    // As the harness that produced the corpus: when both sides are empty the column types do
    // not matter; otherwise the server's letters must fit the expected ones.
    let both_empty = rows.values.is_empty() && expected.count() == 0;
    if !both_empty && !values::types_match(types, &rows.letters) {
        return Err((
            "wrong column types".into(),
            format!("expected column types {types}, got {}", rows.letters),
        ));
    }
    let mut vals = rows.values;
    values::normalize(&mut vals, types);
    let vals = values::sort(vals, *sort, types.len());
    values::check(&vals, expected).map_err(|d| ("wrong result".to_string(), d))
}

/// Runs the records of one file on a connection to `db`, reconnecting after a timeout or a
/// lost connection.
pub fn run_records(server: &mut dyn Server, db: &str, records: &[Record]) -> Vec<RecordResult> {
    let mut out = Vec::with_capacity(records.len());
    let mut conn: Option<mysql::Conn> = None;
    let mut halted = false;
    for record in records {
        let runs = record.runs_on(parser::ENGINE);
        if let Kind::Halt = record.kind {
            if runs {
                halted = true;
            }
            continue;
        }
        let mut result = RecordResult {
            line: record.line,
            sql: record.sql.clone(),
            outcome: Outcome::Skip,
            elapsed: Duration::ZERO,
        };
        if halted || !runs {
            out.push(result);
            continue;
        }
        let start = Instant::now();
        if conn.is_none() {
            match server.endpoint().connect(Some(db)) {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    result.outcome = Outcome::Fail {
                        category: "cannot connect".into(),
                        detail: e,
                    };
                    result.elapsed = start.elapsed();
                    out.push(result);
                    continue;
                }
            }
        }
        let Some(c) = conn.as_mut() else {
            continue;
        };
        let res = execute(c, &record.sql);
        result.elapsed = start.elapsed();
        result.outcome = match (&record.kind, res) {
            (Kind::Statement { expect_error: true }, Ok(_)) => Outcome::Fail {
                category: "expected an error, got none".into(),
                detail: "statement error: the statement succeeded".into(),
            },
            (Kind::Statement { expect_error: true }, Err(e)) if is_server_error(&e) => {
                Outcome::Pass
            }
            (Kind::Statement { .. }, Ok(_)) => Outcome::Pass,
            (Kind::Query { .. }, Ok(rows)) => match check_query(record, rows) {
                Ok(()) => Outcome::Pass,
                Err((category, detail)) => Outcome::Fail { category, detail },
            },
            (_, Err(e)) => {
                let timed_out = is_timeout(&e);
                let server_error = is_server_error(&e);
                let outcome = Outcome::Fail {
                    category: if timed_out {
                        TIMEOUT.to_string()
                    } else {
                        error_category(&e)
                    },
                    detail: if timed_out {
                        format!("no answer within {:?}", server.endpoint().timeout)
                    } else {
                        describe(&e)
                    },
                };
                if !server_error {
                    // The connection is out of step (or gone): start anew, and make the
                    // server drop a statement it is still working on.
                    if let Some(old) = conn.take() {
                        let id = old.connection_id();
                        drop(old);
                        if timed_out {
                            server.after_timeout(id);
                        }
                    }
                }
                outcome
            }
            (Kind::Halt, Ok(_)) => Outcome::Skip,
        };
        out.push(result);
    }
    out
}

fn is_server_error(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(_))
}

/// Runs one file: drops and creates its database, then its records. `name` is the file's
/// path relative to the corpus directory.
pub fn run_file(server: &mut dyn Server, path: &Path, name: &str) -> Result<FileResult, String> {
    let start = Instant::now();
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("read {}: {e}", path.display()))?;
    let records = parser::parse(&text).map_err(|e| format!("{name}: {e}"))?;
    let db: String = format!(
        "corpus_{}",
        name.trim_end_matches(".test")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect::<String>()
    );
    let mut admin = server
        .endpoint()
        .connect(None)
        .map_err(|e| format!("connect: {e}"))?;
    admin
        .query_drop(format!("DROP DATABASE IF EXISTS {db}"))
        .and_then(|_| admin.query_drop(format!("CREATE DATABASE {db}")))
        .map_err(|e| format!("cannot create database {db}: {}", describe(&e)))?;
    drop(admin);
    let records = run_records(server, &db, &records);
    Ok(FileResult {
        name: name.to_string(),
        records,
        elapsed: start.elapsed(),
    })
}
