//! SQL logic tests: runs every `tests/slt/*.slt` file of the repository.
//!
//! * Default: starts the `strata` binary on a free port with a fresh temporary datadir and runs
//!   the files with the label `strata`.
//! * `STRATA_SLT_TARGET=host:port`: runs against an already-running server instead (the MariaDB
//!   oracle), with the label `mariadb` (override with `STRATA_SLT_LABEL`).
//! * Every file runs twice, once per engine: `sqllogictests_innodb` and
//!   `sqllogictests_myisam` each start a server with `--default-storage-engine` set, and add
//!   the engine name as a label. `STRATA_SLT_ENGINE=<engine>` runs only that engine (for an
//!   external target the session runs `SET SESSION default_storage_engine=<engine>`).
//! * `sqllogictests_myisam_mmap` runs the MyISAM pass again on a server started with
//!   `--myisam-use-mmap` (rows read and updated through memory maps), same label; it is
//!   skipped against an external target.
//! * `STRATA_SLT_FILTER=<substring>`: only run files whose name contains the substring.
//!
//! Each file runs on ONE connection (session state persists across records) in a fresh
//! database `slt_<file stem>` created by the runner. Errors are given to sqllogictest as
//! `ERROR <code> (<sqlstate>): <message>`, so `statement error 1146` matches by error number.
//! Values are rendered as the server sends them in the text protocol; NULL is `NULL` and the
//! empty string is `(empty)`.

mod common;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mysql::prelude::Queryable;
use sqllogictest::{DBOutput, DefaultColumnType};

/// Error given to sqllogictest; its Display is what `statement error <regex>` matches against.
#[derive(Debug)]
struct SltError(String);

impl fmt::Display for SltError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SltError {}

impl From<mysql::Error> for SltError {
    fn from(e: mysql::Error) -> Self {
        match e {
            mysql::Error::MySqlError(me) => {
                SltError(format!("ERROR {} ({}): {}", me.code, me.state, me.message))
            }
            other => SltError(format!("CLIENT ERROR: {other}")),
        }
    }
}

struct MysqlDb {
    conn: mysql::Conn,
}

fn column_type(t: mysql::consts::ColumnType) -> DefaultColumnType {
    use mysql::consts::ColumnType::*;
    match t {
        MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_INT24
        | MYSQL_TYPE_LONGLONG | MYSQL_TYPE_YEAR | MYSQL_TYPE_BIT => DefaultColumnType::Integer,
        MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE | MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => {
            DefaultColumnType::FloatingPoint
        }
        _ => DefaultColumnType::Text,
    }
}

fn render(v: &mysql::Value) -> String {
    use mysql::Value;
    match v {
        Value::NULL => "NULL".to_string(),
        Value::Bytes(b) if b.is_empty() => "(empty)".to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Double(d) => d.to_string(),
        // The text protocol never produces these; render something readable anyway.
        other => other.as_sql(true).trim_matches('\'').to_string(),
    }
}

impl sqllogictest::DB for MysqlDb {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SltError> {
        let mut result = self.conn.query_iter(sql)?;
        let mut output: Option<DBOutput<DefaultColumnType>> = None;
        // Only the first result set is reported; later ones (multi-statement text) are drained.
        while let Some(set) = result.iter() {
            let columns = set.columns();
            let types: Vec<DefaultColumnType> = columns
                .as_ref()
                .iter()
                .map(|c| column_type(c.column_type()))
                .collect();
            let has_columns = !types.is_empty();
            let affected = set.affected_rows();
            let mut rows = Vec::new();
            for row in set {
                let row = row?;
                rows.push(row.unwrap().iter().map(render).collect::<Vec<_>>());
            }
            if output.is_none() {
                output = Some(if has_columns {
                    DBOutput::Rows { types, rows }
                } else {
                    DBOutput::StatementComplete(affected)
                });
            }
        }
        Ok(output.unwrap_or(DBOutput::StatementComplete(0)))
    }
}

/// Where the tests run: a server we started (kept alive by `_server`) or an external one.
struct Target {
    port: u16,
    host: String,
    label: String,
    engine: Option<String>,
    external: bool,
    _server: Option<common::TestServer>,
}

impl Target {
    fn from_env(engine: Option<String>, server_args: &[&str]) -> Target {
        if let Ok(t) = std::env::var("STRATA_SLT_TARGET") {
            let (host, port) = t
                .rsplit_once(':')
                .expect("STRATA_SLT_TARGET must be host:port");
            let label = std::env::var("STRATA_SLT_LABEL").unwrap_or_else(|_| "mariadb".into());
            return Target {
                port: port.parse().expect("STRATA_SLT_TARGET port"),
                host: host.to_string(),
                label,
                engine,
                external: true,
                _server: None,
            };
        }
        let mut args: Vec<String> = server_args.iter().map(|a| a.to_string()).collect();
        if let Some(e) = &engine {
            args.push("--default-storage-engine".into());
            args.push(e.clone());
        }
        let arg_refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let server = common::TestServer::start(&arg_refs);
        let label = match server.flavor {
            common::Flavor::Strata => "strata",
            common::Flavor::MariaDb => "mariadb",
        };
        Target {
            port: server.port,
            host: "127.0.0.1".into(),
            label: label.into(),
            engine,
            external: false,
            _server: Some(server),
        }
    }

    fn opts(&self, db: Option<&str>) -> mysql::Opts {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some(self.host.clone()))
            .tcp_port(self.port)
            .user(Some("root"))
            .pass(std::env::var("STRATA_SLT_PASSWORD").ok())
            .db_name(db)
            .prefer_socket(false)
            .into()
    }

    fn connect(&self, db: Option<&str>) -> Result<mysql::Conn, SltError> {
        let mut conn = mysql::Conn::new(self.opts(db))?;
        if self.external {
            if let Some(e) = &self.engine {
                conn.query_drop(format!("SET SESSION default_storage_engine={e}"))?;
            }
        }
        Ok(conn)
    }
}

fn slt_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/slt")
}

fn slt_files() -> Vec<PathBuf> {
    let dir = slt_dir();
    let filter = std::env::var("STRATA_SLT_FILTER").unwrap_or_default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "slt"))
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(&filter))
        .collect();
    files.sort();
    files
}

fn run_file(target: &Target, path: &Path) -> Result<(), String> {
    let stem = path
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .replace('-', "_");
    let db = format!("slt_{stem}");
    let mut admin = target.connect(None).map_err(|e| format!("connect: {e}"))?;
    admin
        .query_drop(format!("DROP DATABASE IF EXISTS {db}"))
        .and_then(|_| admin.query_drop(format!("CREATE DATABASE {db}")))
        .map_err(|e| format!("cannot create database {db}: {}", SltError::from(e)))?;
    let conn = target
        .connect(Some(&db))
        .map_err(|e| format!("connect to {db}: {e}"))?;
    // The runner asks for a connection once and keeps it for the whole file.
    let mut slot = Some(MysqlDb { conn });
    let mut runner = sqllogictest::Runner::new(move || {
        let db = slot.take();
        async move {
            db.ok_or_else(|| {
                SltError("the runner asked for a second connection; use one per file".into())
            })
        }
    });
    runner.add_label(&target.label);
    if let Some(e) = &target.engine {
        runner.add_label(e);
    }
    let res = runner
        .run_file(path)
        .map_err(|e| e.display(true).to_string());
    drop(runner);
    // Clean up (best effort) so an external server does not accumulate databases.
    if res.is_ok() {
        let _ = admin.query_drop(format!("DROP DATABASE IF EXISTS {db}"));
    }
    res
}

#[test]
fn sqllogictests_innodb() {
    run_for_engine("innodb");
}

#[test]
fn sqllogictests_myisam() {
    run_for_engine("myisam");
}

#[test]
fn sqllogictests_myisam_mmap() {
    if std::env::var("STRATA_SLT_TARGET").is_ok() {
        eprintln!("slt: the mmap pass needs a server this test starts; skipped");
        return;
    }
    run_for_engine_with("myisam", &["--myisam-use-mmap"]);
}

/// Runs every file against `engine`, unless STRATA_SLT_ENGINE names another one.
fn run_for_engine(engine: &str) {
    run_for_engine_with(engine, &[])
}

/// As [`run_for_engine`], on a server started with `server_args` as well.
fn run_for_engine_with(engine: &str, server_args: &[&str]) {
    if let Ok(only) = std::env::var("STRATA_SLT_ENGINE") {
        if !only.is_empty() && !only.eq_ignore_ascii_case(engine) {
            eprintln!("slt: skipping {engine} (STRATA_SLT_ENGINE={only})");
            return;
        }
    }
    let files = slt_files();
    assert!(
        !files.is_empty(),
        "no .slt files found in {} (filter {:?})",
        slt_dir().display(),
        std::env::var("STRATA_SLT_FILTER").ok()
    );
    let target = Target::from_env(Some(engine.to_string()), server_args);
    eprintln!(
        "running {} slt files against {}:{} (label {})",
        files.len(),
        target.host,
        target.port,
        target.label
    );
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let start = Instant::now();
        match run_file(&target, f) {
            Ok(()) => eprintln!("slt {name} ... ok ({:.2?})", start.elapsed()),
            Err(e) => {
                eprintln!("slt {name} ... FAILED ({:.2?})\n{e}\n", start.elapsed());
                failures.push(name);
            }
        }
    }
    if let Some(server) = &target._server {
        let tail = server.log_tail();
        if !failures.is_empty() && !tail.is_empty() {
            eprintln!("--- server log tail ---\n{tail}");
        }
    }
    eprintln!(
        "slt: {} passed, {} failed",
        files.len() - failures.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "failing slt files: {failures:?}");
}
