//! Sessions: one per client connection, holding what MySQL keeps per connection — the
//! current database, session variables, user variables, transaction state, prepared
//! statements, LOCK TABLES locks, LAST_INSERT_ID — and dispatching each statement.
//!
//! The life of a COM_QUERY here: [`Session::query`] splits the text into statements
//! (`sql::text::split_statements`); for each, [`Session::run`] first tries the plan cache
//! (`sql::text::normalize` turns `... WHERE id=5023` into `... WHERE id=?1` + `[5023]`;
//! a hit skips parsing and binding), then the statements the session owns (SET, SHOW
//! VARIABLES/STATUS, USE, LOCK/UNLOCK TABLES, FLUSH, DO; the transaction statements and
//! savepoints in `transaction.rs`; PREPARE/EXECUTE/DEALLOCATE in `sql_prepare.rs`), then
//! SHOW and DESCRIBE (`sql::show`), and finally parses with sqlparser, binds
//! (`sql::prepare`) and runs (`sql::execute`) everything else. Version comments
//! (`/*!NNNNN … */`) are resolved before any of this (`sql::text::expand_version_comments`).
//!
//! Transactions: the session owns the open [`Txn`] and every statement that reads or
//! writes tables runs inside one. Under autocommit with no BEGIN, a statement gets its
//! own Txn, committed when it succeeds and rolled back when it fails; after BEGIN (or
//! with autocommit=0) the Txn stays open across statements until COMMIT or ROLLBACK, and
//! each statement is bracketed by `begin_statement`/`end_statement` so a failing one
//! undoes only itself. DDL, LOCK TABLES, FLUSH and the table-maintenance statements
//! commit the open transaction first, as MySQL's implicit commit does. A deadlock
//! (1213) rolls the whole transaction back; a lock wait timeout (1205) only the
//! statement (MySQL's default innodb_rollback_on_timeout=OFF).
//!
//! [`Server`] is what all sessions share: the catalog, global variables, counters.

pub mod acl;
mod binlog;
pub mod binlog_replay;
mod diagnostics;
mod files;
mod gtid_next;
mod kill;
pub mod persist;
pub mod processlist;
pub mod replica;
mod show_where;
mod sql_prepare;
mod transaction;
pub mod vars;
pub mod xa;

use show_where::{show_filter, ShowFilter};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata_engine::{Isolation, LockMode, TableLock, Txn};
use strata_sql::mdl::{MdlContext, MdlDuration, MdlKey, MdlMode, MdlRequest};
use strata_sql::text;
use strata_sql::{Catalog, Env, ExecCtx, Outcome, Prepared, WarnLevel, Warning};
use strata_types::{
    ColumnMeta, DateTime, EndInfo, Error, FieldType, OkInfo, QueryOutput, Result, SqlMode, Value,
};
use vars::{Globals, Kind, VarDef};

/// Session variables copied from the globals when a session starts (MySQL copies every
/// global; these are the ones whose copy matters, because the connection reads them).
const CONNECT_TIME_VARS: [&str; 4] = [
    "interactive_timeout",
    "net_read_timeout",
    "net_write_timeout",
    "wait_timeout",
];

/// How long a connection waits for a client: for its next command (`wait_timeout`), for
/// the rest of a packet it has begun (`net_read_timeout`), for a result to be taken
/// (`net_write_timeout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetTimeouts {
    pub wait: Duration,
    pub read: Duration,
    pub write: Duration,
}

impl Default for NetTimeouts {
    fn default() -> Self {
        NetTimeouts {
            wait: Duration::from_secs(28800),
            read: Duration::from_secs(30),
            write: Duration::from_secs(60),
        }
    }
}

/// Startup settings the server was given (command line or config file).
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub datadir: std::path::PathBuf,
    pub port: u16,
    pub default_engine: String,
    pub key_buffer_size: u64,
    pub max_connections: u64,
    pub max_allowed_packet: u64,
    pub sql_mode: String,
    pub hostname: String,
    /// Where sorts larger than sort_buffer_size write their runs.
    pub tmpdir: std::path::PathBuf,
    pub sort_buffer_size: u64,
}

/// State every session shares.
pub struct Server {
    pub catalog: Arc<Catalog>,
    pub globals: Globals,
    pub config: ServerConfig,
    started: Instant,
    pub questions: AtomicU64,
    pub connections: AtomicU64,
    pub threads_connected: AtomicU64,
    /// `Com_<name>` status counters, one atomic per [`Com`]: every statement bumps one,
    /// so no lock (a mutex here was a global one; at 1024 clients every thread queued
    /// behind a holder the scheduler had preempted).
    com_counts: [AtomicU64; COM_NAMES.len()],
    /// `mysqld-auto.cnf`, opened by [`apply_persisted`] at startup or by the first SET
    /// PERSIST.
    persisted: parking_lot::Mutex<Option<Arc<persist::Persisted>>>,
    /// Every connected session (SHOW PROCESSLIST, KILL).
    pub processes: Arc<processlist::ProcessList>,
    /// The accounts and their privileges (enforced once the server binary opens them).
    pub acl: acl::Acl,
    /// Prepared statements held by all sessions (`Prepared_stmt_count`), bounded by
    /// `max_prepared_stmt_count` so clients that never close statements cannot exhaust
    /// the server's memory.
    pub prepared_statements: AtomicU64,
    /// Counters from below the engines that SHOW STATUS also lists (the open-file
    /// cache's `Open_tables`, …), installed by whoever composed the server.
    status_sources: parking_lot::Mutex<Vec<StatusSource>>,
    /// The binary log, when the server was started with `--log-bin`
    /// (`Server::install_binlog`).
    binlog: std::sync::OnceLock<Arc<strata_binlog::Binlog>>,
    /// Replicas that announced themselves (COM_REGISTER_SLAVE), for SHOW REPLICAS.
    pub replicas: binlog::Replicas,
    /// Every XA xid in use, and the prepared XA transactions whose connection is gone
    /// (`xa.rs`).
    pub xa: xa::Registry,
    /// This server as a replica (`Server::install_replica`): what CHANGE REPLICATION
    /// SOURCE, START REPLICA, … act on.
    replica: std::sync::OnceLock<Arc<dyn replica::ReplicaControl>>,
    /// What runs the events of a BINLOG statement (`Server::install_binlog_events`,
    /// the server binary's replica applier code; `binlog_replay.rs`).
    binlog_events: std::sync::OnceLock<Arc<dyn binlog_replay::BinlogEvents>>,
}

/// A function giving SHOW STATUS rows, see [`Server::add_status_source`].
pub type StatusSource = Box<dyn Fn() -> Vec<(String, u64)> + Send + Sync>;

/// The statement kinds counted as `Com_<name>` (SHOW STATUS); `as usize` indexes
/// [`COM_NAMES`].
#[derive(Clone, Copy)]
enum Com {
    Begin,
    Commit,
    Delete,
    Explain,
    Insert,
    Other,
    Rollback,
    Select,
    Update,
}

const COM_NAMES: [&str; 9] = [
    "begin", "commit", "delete", "explain", "insert", "other", "rollback", "select", "update",
];

impl Server {
    pub fn new(catalog: Arc<Catalog>, config: ServerConfig) -> Server {
        let s = |v: &str| Value::str(v);
        let i = |v: i64| Value::Int(v);
        let engine_display = strata_sql::engine_display(&config.default_engine);
        let globals = Globals::new(vec![
            ("activate_all_roles_on_login", i(0)),
            ("auto_increment_increment", i(1)),
            ("auto_increment_offset", i(1)),
            ("autocommit", i(1)),
            // The binary log's settings as a server without --log-bin has them;
            // Server::install_binlog sets the real ones.
            ("binlog_checksum", s("CRC32")),
            ("binlog_format", s("ROW")),
            ("binlog_json_format", s("BINARY")),
            ("binlog_row_image", s("FULL")),
            ("binlog_row_metadata", s("MINIMAL")),
            ("enforce_gtid_consistency", s("OFF")),
            ("gtid_executed", s("")),
            ("gtid_mode", s("OFF")),
            ("gtid_purged", s("")),
            ("local_infile", i(0)),
            ("log_bin", i(0)),
            ("log_bin_basename", s("")),
            ("log_bin_index", s("")),
            ("max_binlog_size", i(1 << 30)),
            ("server_uuid", s("")),
            ("sync_binlog", i(1)),
            // The key and TLS settings below are the server binary's to set at startup
            // (strata/src/main.rs), from what it loaded; these are the values of a
            // server without TLS.
            ("caching_sha2_password_private_key_path", s("")),
            ("caching_sha2_password_public_key_path", s("")),
            ("character_set_client", s("utf8mb4")),
            ("character_set_connection", s("utf8mb4")),
            ("character_set_database", s("utf8mb4")),
            ("character_set_results", s("utf8mb4")),
            ("character_set_server", s("utf8mb4")),
            ("collation_connection", s("utf8mb4_general_ci")),
            ("collation_database", s("utf8mb4_general_ci")),
            ("collation_server", s("utf8mb4_general_ci")),
            ("completion_type", s("NO_CHAIN")),
            ("check_constraint_checks", i(1)),
            ("connect_timeout", i(10)),
            ("cte_max_recursion_depth", i(1000)),
            ("datadir", s(&config.datadir.display().to_string())),
            ("default_authentication_plugin", s("mysql_native_password")),
            ("default_storage_engine", s(engine_display)),
            ("div_precision_increment", i(4)),
            ("explicit_defaults_for_timestamp", i(1)),
            ("foreign_key_checks", i(1)),
            ("group_concat_max_len", i(1024)),
            ("have_openssl", s("DISABLED")),
            ("have_ssl", s("DISABLED")),
            ("hostname", s(&config.hostname)),
            ("init_connect", s("")),
            ("innodb_lock_wait_timeout", i(50)),
            ("interactive_timeout", i(28800)),
            ("key_buffer_size", i(config.key_buffer_size as i64)),
            ("license", s("Apache-2.0")),
            ("lc_time_names", s("en_US")),
            ("lock_wait_timeout", i(31_536_000)),
            ("lower_case_table_names", i(0)),
            ("max_allowed_packet", i(config.max_allowed_packet as i64)),
            ("max_connections", i(config.max_connections as i64)),
            ("max_delayed_threads", i(20)),
            ("max_execution_time", i(0)),
            ("max_sp_recursion_depth", i(0)),
            ("max_prepared_stmt_count", i(16382)),
            ("mandatory_roles", s("")),
            ("max_user_connections", i(0)),
            ("net_buffer_length", i(16384)),
            ("net_read_timeout", i(30)),
            ("net_write_timeout", i(60)),
            ("open_files_limit", i(0)),
            ("performance_schema", i(0)),
            ("port", i(config.port as i64)),
            ("protocol_version", i(10)),
            ("query_cache_size", i(0)),
            ("query_cache_type", s("OFF")),
            ("require_secure_transport", i(0)),
            // The server binary sets the directory it made (or the option's value);
            // a server composed without one touches no files.
            ("secure_file_priv", Value::Null),
            ("server_id", i(1)),
            ("socket", s("")),
            ("sort_buffer_size", i(config.sort_buffer_size as i64)),
            ("sql_auto_is_null", i(0)),
            // Session-only: the value every new session starts with.
            ("sql_log_bin", i(1)),
            ("sql_mode", s(&config.sql_mode)),
            ("sql_notes", i(1)),
            ("system_versioning_insert_history", i(0)),
            ("gtid_domain_id", i(0)),
            ("gtid_seq_no", i(0)),
            ("pseudo_slave_mode", i(0)),
            ("sql_quote_show_create", i(1)),
            ("sql_safe_updates", i(0)),
            ("sql_select_limit", Value::UInt(u64::MAX)),
            ("ssl_ca", s("")),
            ("ssl_cert", s("")),
            ("ssl_key", s("")),
            ("system_time_zone", s("UTC")),
            // The open-file cache's bound when nobody sizes it (storage::filecache's
            // DEFAULT_LIMIT is twice this); the server binary sets both at startup.
            ("table_open_cache", i(4000)),
            ("time_zone", s("SYSTEM")),
            ("tls_version", s("")),
            ("tmp_table_size", i(16 << 20)),
            ("tmpdir", s(&config.tmpdir.display().to_string())),
            ("transaction_isolation", s("REPEATABLE-READ")),
            ("transaction_read_only", i(0)),
            ("unique_checks", i(1)),
            ("version", s(strata_sql::SERVER_VERSION)),
            ("version_comment", s("Strata server (MySQL-compatible)")),
            ("version_compile_machine", s(std::env::consts::ARCH)),
            ("version_compile_os", s("Linux")),
            ("wait_timeout", i(28800)),
        ]);
        // An engine variable is answered by the engine only when vars.rs does not know
        // the name; a clash would hide the engine's value.
        for e in catalog.engines() {
            for v in e.variables() {
                debug_assert!(
                    vars::lookup(v.name).is_none(),
                    "engine {} declares {}, which vars.rs also declares",
                    e.name(),
                    v.name
                );
            }
        }
        let processes = Arc::new(processlist::ProcessList::default());
        catalog.processes.install(processes.clone());
        Server {
            catalog,
            globals,
            config,
            processes,
            prepared_statements: AtomicU64::new(0),
            status_sources: parking_lot::Mutex::new(Vec::new()),
            acl: acl::Acl::default(),
            started: Instant::now(),
            questions: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            threads_connected: AtomicU64::new(0),
            com_counts: std::array::from_fn(|_| AtomicU64::new(0)),
            persisted: parking_lot::Mutex::new(None),
            binlog: std::sync::OnceLock::new(),
            replicas: Default::default(),
            xa: Default::default(),
            replica: Default::default(),
            binlog_events: Default::default(),
        }
    }

    /// The persisted-variables file of the data directory.
    fn persisted(&self) -> Result<Arc<persist::Persisted>> {
        let mut p = self.persisted.lock();
        if let Some(p) = p.as_ref() {
            return Ok(p.clone());
        }
        let opened = Arc::new(persist::Persisted::open(&self.config.datadir)?);
        *p = Some(opened.clone());
        Ok(opened)
    }

    /// Adds rows to SHOW STATUS (read each time it runs).
    /// Installs this server's replica (once, at startup, by the server binary).
    pub fn install_replica(&self, r: Arc<dyn replica::ReplicaControl>) {
        let _ = self.replica.set(r);
    }

    /// Installs what applies the events of BINLOG statements (once, at startup, by the
    /// server binary; without it BINLOG is refused with 1235).
    pub fn install_binlog_events(&self, b: Arc<dyn binlog_replay::BinlogEvents>) {
        let _ = self.binlog_events.set(b);
    }

    /// The replica the replication statements act on, once installed.
    pub fn replica_control(&self) -> Option<&Arc<dyn replica::ReplicaControl>> {
        self.replica.get()
    }

    pub fn add_status_source(&self, source: StatusSource) {
        self.status_sources.lock().push(source);
    }

    pub fn uptime(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    fn count(&self, com: Com) {
        self.com_counts[com as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// Startup: applies the data directory's persisted variables (`mysqld-auto.cnf`) as SET
/// GLOBAL would, before clients connect. A file that cannot be read is an error (the
/// server should not start without its settings); an entry that cannot be applied is
/// skipped, and described in the returned messages.
pub fn apply_persisted(server: &Arc<Server>) -> Result<Vec<String>> {
    let entries = server.persisted()?.entries();
    let mut skipped = Vec::new();
    if entries.is_empty() {
        return Ok(skipped);
    }
    let mut s = Session::new(server.clone(), 0, "root", None)?;
    for (name, e) in entries {
        if let Err(err) = s.set_variable(&name, true, Some(Value::str(&e.value))) {
            skipped.push(format!(
                "persisted variable {name} = '{}' not applied: {err}",
                e.value
            ));
        }
    }
    s.close();
    // The startup session was no client connection.
    server.connections.fetch_sub(1, Ordering::Relaxed);
    Ok(skipped)
}

/// A [`QueryOutput`] that can carry several results (multi-statement COM_QUERY).
pub trait ResultSink: QueryOutput {
    /// Another statement's result follows the one just finished.
    fn next_result(&mut self) -> Result<()>;
}

/// A prepared statement as the session keeps it.
enum PreparedStmt {
    /// A bound SELECT/INSERT/UPDATE/DELETE (or DDL), executed with parameters.
    Sql(Arc<Prepared>),
    /// A statement the session runs itself (BEGIN, COMMIT, SET, SHOW ...), without
    /// parameters: sysbench prepares even BEGIN and COMMIT.
    Text(Arc<str>),
}

/// LOCK TABLES in effect: what is locked in which mode, and the held locks.
type LockedTables = (HashMap<(String, String), LockMode>, Vec<TableLock>);

/// Plans kept per session for text-protocol statements, keyed by normalized text.
const PLAN_CACHE_ENTRIES: usize = 512;

/// Longest normalized statement whose plan is cached. Literals the normalizer keeps
/// (select-list constants, which name their column) stay in the key and the plan, so
/// one 50 MiB statement would otherwise stay in memory for the life of the session,
/// and 512 of them are 512 × max_allowed_packet; such statements do not repeat anyway.
const PLAN_CACHE_MAX_KEY: usize = 64 << 10;

pub struct Session {
    server: Arc<Server>,
    connection_id: u32,
    user: String,
    current_db: Option<String>,
    vars: HashMap<&'static str, Value>,
    /// A lock only because `@v := expr` assigns through a shared reference.
    user_vars: parking_lot::Mutex<HashMap<String, Value>>,
    last_insert_id: u64,
    found_rows: u64,
    /// The diagnostics area: the notes, warnings and error of the last statement (SHOW
    /// WARNINGS). A lock only because expressions add to it through a shared reference.
    diagnostics: std::sync::Mutex<diagnostics::Diagnostics>,
    /// `@@warning_count` and `@@error_count`: the previous statement's conditions (all
    /// of them, and the errors), taken before a statement clears the diagnostics area.
    previous_counts: (u64, u64),
    /// The value of a `LAST_INSERT_ID(expr)` the running statement called: the session's
    /// LAST_INSERT_ID once the statement ends, and its OK packet's insert id when it
    /// generated none. A lock only because expressions set it through a shared reference.
    insert_id_arg: std::sync::Mutex<Option<u64>>,
    /// RAND()'s generator: one per connection, as MySQL's, seeded from the connection
    /// id and the clock.
    random: std::sync::Mutex<strata_sql::RandState>,
    /// ROW_COUNT(): the previous statement's affected rows (-1 after a result set or an
    /// error), and the running statement's, which becomes it when the statement ends.
    row_count: i64,
    statement_rows: i64,
    /// The open transaction: begun by BEGIN, or by a statement under autocommit=0.
    /// None between transactions (and under autocommit, where a statement's own Txn
    /// lives only as long as the statement).
    txn: Option<Txn>,
    /// The session's XA transaction (XA START … XA COMMIT/ROLLBACK): its xid and
    /// state; its changes are in `txn`.
    xa: Option<xa::XaSession>,
    /// SET TRANSACTION ISOLATION LEVEL without GLOBAL/SESSION: the next transaction's
    /// level, used once.
    next_isolation: Option<Isolation>,
    /// SET TRANSACTION READ ONLY / READ WRITE without GLOBAL/SESSION, used once.
    next_read_only: Option<bool>,
    prepared: strata_types::inthash::IntMap<u32, PreparedStmt>,
    /// PREPARE name FROM ...: lower-cased name → id in `prepared`.
    named_statements: HashMap<String, u32>,
    next_statement_id: u32,
    plan_cache: HashMap<String, Arc<Prepared>>,
    /// CREATE TEMPORARY TABLE's tables, dropped when the session ends or is reset.
    temp: strata_sql::TempTables,
    /// A session of the server itself ([`Session::system`]): no privilege checks.
    system: bool,
    locked: Option<LockedTables>,
    /// Derived from variables, recomputed after every SET so that the statement path
    /// does no variable lookups: strict sql_mode, default engine, time-zone offset.
    strict_mode: bool,
    /// The session's `sql_mode` as bits, derived from the variable.
    sql_mode: strata_types::SqlMode,
    engine: String,
    tz_offset: Option<i64>,
    /// `SET TIMESTAMP = t`: the clock NOW() reads (UTC seconds and microseconds), until
    /// SET TIMESTAMP = DEFAULT.
    fixed_time: Option<(i64, u32)>,
    /// The BINLOG statements' state between statements (their FORMAT_DESCRIPTION and
    /// table maps), kept by the installed [`binlog_replay::BinlogEvents`].
    binlog_events_state: Option<Box<dyn std::any::Any + Send>>,
    /// Inside a BINLOG statement run under REPLICATION_APPLIER alone: each rows event
    /// needs its table privilege (`binlog_replay.rs`).
    row_event_table_checks: bool,
    sort_buffer: usize,
    /// `tmp_table_size`: a materialised derived table's memory before it spills.
    tmp_table_size: usize,
    autocommit_on: bool,
    /// `sql_log_bin`: this session's changes go to the binary log (when there is one).
    log_bin_on: bool,
    /// The replica applier's GTID_NEXT: the source GTID the next group this session
    /// logs is written under (`binlog.rs`); None: this server's next own GTID.
    gtid_next: parking_lot::Mutex<Option<(strata_binlog::gtid::Uuid, u64)>>,
    /// The replica's applier: the server id its logged events carry
    /// ([`Session::set_origin_server_id`]); None for this server's.
    origin_server_id: parking_lot::Mutex<Option<u32>>,
    /// `@@SESSION.gtid_next` as the client set it, and whether the session owns that
    /// GTID (`gtid_next.rs`).
    gtid_spec: gtid_next::GtidNext,
    isolation: Isolation,
    /// transaction_read_only.
    read_only: bool,
    lock_wait_timeout: Duration,
    /// wait_timeout, net_read_timeout, net_write_timeout, for the wire layer.
    net_timeouts: NetTimeouts,
    /// Off only in tests that compare the cached path with the general one.
    plan_cache_enabled: bool,
    /// This connection's entry in the process list (and its KILL signal).
    process: Arc<processlist::Process>,
    /// `KILL CONNECTION_ID()` ran: the connection closes after the reply.
    closing: bool,
    /// `max_execution_time` (0: none), for the SELECTs this session runs.
    max_execution_time: Duration,
    /// The connection's TLS session as (`Ssl_version`, `Ssl_cipher`); empty strings
    /// without TLS, as MySQL shows them.
    tls: (String, String),
    /// The account the session runs as, and the client's host.
    identity: acl::Identity,
    /// The account's privileges, with the account store's generation they were read at
    /// (dropped when SET ROLE changes the active roles).
    privs: Option<(u64, Arc<acl::Effective>)>,
    /// The roles active in this session (SET ROLE; at login the default roles, or every
    /// granted one under `activate_all_roles_on_login`).
    active_roles: Vec<acl::roles::Name>,
    /// This connection's metadata locks (`strata_sql::mdl`): shared locks on the tables
    /// its transaction used, LOCK TABLES and FLUSH TABLES WITH READ LOCK.
    mdl: MdlContext,
    /// Whether the open transaction changed rows, so its COMMIT waits for (and is held
    /// off by) FLUSH TABLES WITH READ LOCK's commit lock.
    txn_wrote: bool,
    /// LOAD DATA: the file's rows already inserted, so a row's conditions name its
    /// line (`Env::rows_before`); 0 otherwise.
    rows_before: std::sync::atomic::AtomicU64,
}

/// The view of a session an expression evaluates against.
struct SessionEnv<'a> {
    s: &'a Session,
    now: DateTime,
    /// The generators of this statement's `RAND(constant)` calls.
    seeded: std::sync::Mutex<strata_sql::StatementRandom>,
}

impl<'a> SessionEnv<'a> {
    fn new(s: &'a Session, now: DateTime) -> SessionEnv<'a> {
        SessionEnv {
            s,
            now,
            seeded: Default::default(),
        }
    }
}

impl Env for SessionEnv<'_> {
    fn system_variable(&self, name: &str, global: bool) -> Result<Value> {
        self.s.get_variable(name, global)
    }
    fn check_session_scope(&self, name: &str) -> Result<()> {
        self.s.check_session_scope(name)
    }
    fn user_variable(&self, name: &str) -> Value {
        self.s
            .user_vars
            .lock()
            .get(name)
            .cloned()
            .unwrap_or(Value::Null)
    }
    fn set_user_variable(&self, name: &str, value: Value) {
        self.s.user_vars.lock().insert(name.to_string(), value);
        // MySQL 8 deprecates assignment inside expressions, and says so once per
        // statement.
        if let Ok(mut d) = self.s.diagnostics.lock() {
            if !d.listed().iter().any(|w| w.code == 1287) {
                d.push(Warning {
                    level: WarnLevel::Warning,
                    code: 1287,
                    message: "Setting user variables within expressions is deprecated and will be removed in a future release. Consider alternatives: 'SET variable=expression, ...', or 'SELECT expression(s) INTO variables(s)'.".into(),
                });
            }
        }
    }
    fn last_insert_id(&self) -> u64 {
        self.s.insert_id_arg().unwrap_or(self.s.last_insert_id)
    }
    fn set_last_insert_id(&self, id: u64) {
        if let Ok(mut a) = self.s.insert_id_arg.lock() {
            *a = Some(id);
        }
    }
    fn database(&self) -> Option<String> {
        self.s.current_db.clone()
    }
    fn user(&self) -> String {
        self.s.user.clone()
    }
    fn user_at_host(&self, account: bool) -> String {
        let id = &self.s.identity;
        let host = if account {
            &id.account_host
        } else {
            &id.client_host
        };
        format!("{}@{host}", id.user)
    }
    fn current_role(&self) -> String {
        if self.s.active_roles.is_empty() {
            return "NONE".into();
        }
        let mut names: Vec<String> = self
            .s
            .active_roles
            .iter()
            .map(acl::roles::backquoted)
            .collect();
        names.sort();
        names.join(",")
    }
    fn sees_database(&self, db: &str) -> bool {
        self.s.visible(|e| e.sees_db(db))
    }
    fn sees_table(&self, db: &str, table: &str) -> bool {
        self.s.visible(|e| e.sees_table(db, table))
    }
    fn account_rows(&self) -> Option<Arc<dyn strata_sql::catalog::systables::AccountRows>> {
        let s = self.s;
        Some(Arc::new(acl::systables::AccountView {
            server: s.server.clone(),
            viewer: acl::systables::Viewer {
                user: s.identity.user.clone(),
                host: s.identity.account_host.clone(),
                active: s.active_roles.clone(),
                mandatory: s.mandatory_roles(),
                tz_offset: s.tz_offset,
                unrestricted: s.system,
            },
        }))
    }
    fn connection_id(&self) -> u64 {
        // MySQL's CONNECTION_ID() is the session's pseudo_thread_id, which a binary-log
        // replay sets to the id of the thread that wrote the change.
        match self.s.vars.get("pseudo_thread_id").and_then(Value::to_i64) {
            Some(id) => id as u64,
            None => self.s.connection_id as u64,
        }
    }
    fn now(&self) -> DateTime {
        self.now
    }
    fn found_rows(&self) -> u64 {
        self.s.found_rows
    }
    fn row_count(&self) -> i64 {
        self.s.row_count
    }
    fn random(&self) -> f64 {
        self.s.random.lock().map_or(0.0, |mut r| r.next_f64())
    }
    fn seeded_random(&self, site: usize, seed: i64) -> f64 {
        self.seeded
            .lock()
            .map_or(0.0, |mut st| st.next_at(site, seed))
    }
    fn user_lock(&self, call: strata_sql::UserLockCall) -> Result<Value> {
        use strata_sql::UserLockCall as C;
        let mdl = &self.s.mdl;
        Ok(match call {
            C::Get(name, timeout) => {
                let conn = self.s.connection_id as u64;
                Value::Int(mdl.get_user_lock(&name, conn, timeout)? as i64)
            }
            C::Release(name) => mdl
                .release_user_lock(&name)
                .map_or(Value::Null, |mine| Value::Int(mine as i64)),
            C::ReleaseAll => Value::Int(mdl.release_all_user_locks() as i64),
            C::IsFree(name) => Value::Int(mdl.user_lock_owner(&name).is_none() as i64),
            C::IsUsed(name) => mdl
                .user_lock_owner(&name)
                .map_or(Value::Null, |c| Value::Int(c as i64)),
        })
    }
    fn wait_for_executed_gtids(
        &self,
        set: &strata_types::gtid::GtidSet,
        timeout: Option<Duration>,
    ) -> Result<bool> {
        let Some(b) = self.s.server.binlog() else {
            return Err(Error::GtidModeOff("use WAIT_FOR_EXECUTED_GTID_SET".into()));
        };
        // Waiting for the GTID this session owns would never end (MySQL: 3173).
        if let Some((uuid, gno)) = self.s.owned_gtid() {
            if set.contains(&uuid, gno) {
                return Err(Error::WaitForOwnedGtid(format!(
                    "{}:{gno}",
                    strata_binlog::gtid::uuid_text(&uuid)
                )));
            }
        }
        // The wait holds none of the session's locks but its statement's; KILL QUERY
        // and max_execution_time end it with their error, as MySQL's does.
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        b.wait_executed(set, deadline, || self.s.process.interrupt.check())
    }
    fn sleep(&self, d: Duration) -> bool {
        // Wakes every 10 ms to see whether KILL QUERY or the statement's deadline
        // stopped it, so neither waits for the whole duration.
        let end = std::time::Instant::now() + d;
        loop {
            if self.s.process.interrupt.check().is_err() {
                return true;
            }
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            std::thread::sleep(left.min(Duration::from_millis(10)));
        }
    }
    fn warn(&self, level: WarnLevel, code: u16, message: String) {
        if let Ok(mut d) = self.s.diagnostics.lock() {
            d.push(Warning {
                level,
                code,
                message,
            });
        }
    }
    fn rows_before(&self) -> u64 {
        self.s.rows_before.load(Ordering::Relaxed)
    }
    fn holds_file_privilege(&self) -> bool {
        let acl = &self.s.server.acl;
        !acl.enforcing()
            || self
                .s
                .account_privileges()
                .has_global(strata_types::privilege::Privs::FILE)
    }
    fn warnings(&self) -> Vec<Warning> {
        self.s
            .diagnostics
            .lock()
            .map(|d| d.listed().to_vec())
            .unwrap_or_default()
    }
    fn warning_count(&self) -> usize {
        self.s.diagnostics.lock().map(|d| d.len()).unwrap_or(0)
    }
}

fn text_col(name: &str) -> ColumnMeta {
    ColumnMeta::computed(name, FieldType::VarString)
}

impl Session {
    pub fn new(
        server: Arc<Server>,
        connection_id: u32,
        user: &str,
        db: Option<&str>,
    ) -> Result<Session> {
        Session::for_account(server, connection_id, user, "localhost", "localhost", db)
    }

    /// A session of the account `user@account_host` connected from `client_host`; the
    /// handshake's database `db` is checked as USE checks it (1049, 1044).
    pub fn for_account(
        server: Arc<Server>,
        connection_id: u32,
        user: &str,
        account_host: &str,
        client_host: &str,
        db: Option<&str>,
    ) -> Result<Session> {
        let mdl = MdlContext::new(server.catalog.mdl().clone());
        let process = server.processes.register(connection_id, user);
        mdl.set_interrupt(process.interrupt.clone());
        process.set_wait_source(mdl.wait_state_handle());
        let mut s = Session {
            server: server.clone(),
            connection_id,
            user: user.to_string(),
            current_db: None,
            vars: HashMap::new(),
            user_vars: Default::default(),
            last_insert_id: 0,
            found_rows: 0,
            diagnostics: Default::default(),
            previous_counts: (0, 0),
            insert_id_arg: Default::default(),
            random: std::sync::Mutex::new(strata_sql::RandState::from_seeds(
                connection_id as u64 * 0x10001 + 55_555_555,
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64),
            )),
            row_count: -1,
            statement_rows: 0,
            txn: None,
            xa: None,
            next_isolation: None,
            next_read_only: None,
            prepared: Default::default(),
            named_statements: HashMap::new(),
            next_statement_id: 1,
            plan_cache: HashMap::new(),
            locked: None,
            strict_mode: true,
            sql_mode: strata_types::SqlMode::default(),
            engine: String::new(),
            tz_offset: None,
            fixed_time: None,
            binlog_events_state: None,
            row_event_table_checks: false,
            sort_buffer: 2 << 20,
            tmp_table_size: 16 << 20,
            autocommit_on: true,
            log_bin_on: true,
            gtid_next: parking_lot::Mutex::new(None),
            origin_server_id: parking_lot::Mutex::new(None),
            gtid_spec: gtid_next::GtidNext::default(),
            isolation: Isolation::RepeatableRead,
            read_only: false,
            lock_wait_timeout: Duration::from_secs(50),
            net_timeouts: NetTimeouts::default(),
            plan_cache_enabled: true,
            process,
            closing: false,
            max_execution_time: Duration::ZERO,
            tls: (String::new(), String::new()),
            identity: acl::Identity {
                user: user.to_string(),
                account_host: account_host.to_string(),
                client_host: client_host.to_string(),
            },
            privs: None,
            active_roles: Vec::new(),
            mdl,
            txn_wrote: false,
            rows_before: Default::default(),
            temp: strata_sql::TempTables::new(server.catalog.datadir(), connection_id as u64),
            system: false,
        };
        // A session keeps the timeouts in force when it connected: SET GLOBAL changes
        // them for new connections only, as in MySQL.
        for name in CONNECT_TIME_VARS {
            s.vars.insert(name, s.server.globals.get(name));
        }
        s.refresh_derived()?;
        if s.server.acl.enforcing() {
            if let Some(a) = s
                .server
                .acl
                .account(&s.identity.user, &s.identity.account_host)
            {
                let all = s
                    .server
                    .globals
                    .get("activate_all_roles_on_login")
                    .to_i64()
                    .unwrap_or(0)
                    != 0;
                s.active_roles = acl::roles::at_login(&a, &s.mandatory_roles(), all);
            }
        }
        if let Some(db) = db.filter(|d| !d.is_empty()) {
            s.use_database(db)?;
        }
        s.server.connections.fetch_add(1, Ordering::Relaxed);
        s.server.threads_connected.fetch_add(1, Ordering::Relaxed);
        Ok(s)
    }

    /// A session of the server itself (the replica's applier): every privilege, whatever
    /// the accounts say, as MySQL's replication threads run.
    pub fn system(server: Arc<Server>, connection_id: u32) -> Result<Session> {
        let mut s = Session::new(server, connection_id, "system user", None)?;
        s.system = true;
        Ok(s)
    }

    /// Turns the text-protocol plan cache off, so every statement is parsed and bound
    /// (tests compare both paths).
    pub fn set_plan_cache(&mut self, enabled: bool) {
        self.plan_cache_enabled = enabled;
        self.plan_cache.clear();
    }

    pub fn server(&self) -> Arc<Server> {
        self.server.clone()
    }

    pub fn current_db(&self) -> Option<String> {
        self.current_db.clone()
    }

    pub fn connection_id(&self) -> u32 {
        self.connection_id
    }

    /// SERVER_STATUS_IN_TRANS (1) and SERVER_STATUS_AUTOCOMMIT (2).
    pub fn status_flags(&self) -> u16 {
        let mut f = 0;
        if self.txn.is_some() {
            f |= 1;
        }
        if self.autocommit() {
            f |= 2;
        }
        f
    }

    /// What `test` says of the account's privileges (true without access control).
    fn visible(&self, test: impl Fn(&acl::Effective) -> bool) -> bool {
        let acl = &self.server.acl;
        if !acl.enforcing() || self.system {
            return true;
        }
        match &self.privs {
            Some((g, e)) if *g == acl.generation() => test(e),
            _ => test(&self.account_privileges()),
        }
    }

    fn autocommit(&self) -> bool {
        self.autocommit_on
    }

    /// Recomputes the values derived from variables (after SET, reset, connect).
    fn refresh_derived(&mut self) -> Result<()> {
        let mode = self.get_variable("sql_mode", false)?.to_text();
        let mode = strata_types::SqlMode::parse(&mode)?;
        if mode != self.sql_mode {
            // Binding reads the mode (ONLY_FULL_GROUP_BY): plans bound under another
            // mode are stale.
            self.plan_cache.clear();
        }
        self.sql_mode = mode;
        self.strict_mode = self.sql_mode.strict();
        let v = self
            .get_variable("default_storage_engine", false)?
            .to_text();
        let available: Vec<&str> = self
            .server
            .catalog
            .engines()
            .iter()
            .map(|e| e.name())
            .collect();
        self.engine = strata_sql::engine_name(&v, &available)?;
        let tz = self.get_variable("time_zone", false)?.to_text();
        self.tz_offset = parse_offset(&tz);
        self.sort_buffer = self
            .get_variable("sort_buffer_size", false)?
            .to_i64()
            .unwrap_or(2 << 20) as usize;
        self.tmp_table_size = self
            .get_variable("tmp_table_size", false)?
            .to_i64()
            .unwrap_or(16 << 20) as usize;
        self.autocommit_on = self.get_variable("autocommit", false)?.truth() != Some(false);
        self.log_bin_on = self.get_variable("sql_log_bin", false)?.truth() != Some(false);
        let iso = self.get_variable("transaction_isolation", false)?.to_text();
        self.isolation = Isolation::parse(&iso).unwrap_or(Isolation::RepeatableRead);
        self.read_only = self.get_variable("transaction_read_only", false)?.truth() == Some(true);
        let secs = self
            .get_variable("innodb_lock_wait_timeout", false)?
            .to_i64()
            .unwrap_or(50);
        self.lock_wait_timeout = Duration::from_secs(secs.max(1) as u64);
        let ms = self
            .get_variable("max_execution_time", false)?
            .to_i64()
            .unwrap_or(0);
        self.max_execution_time = Duration::from_millis(ms.max(0) as u64);
        let secs = self
            .get_variable("lock_wait_timeout", false)?
            .to_i64()
            .unwrap_or(31_536_000);
        self.mdl
            .set_lock_wait_timeout(Duration::from_secs(secs.max(1) as u64));
        let secs = |name: &str, default: i64| -> Result<Duration> {
            let v = self.get_variable(name, false)?.to_i64().unwrap_or(default);
            Ok(Duration::from_secs(v.max(1) as u64))
        };
        self.net_timeouts = NetTimeouts {
            wait: secs("wait_timeout", 28800)?,
            read: secs("net_read_timeout", 30)?,
            write: secs("net_write_timeout", 60)?,
        };
        Ok(())
    }

    /// A client that announced CLIENT_INTERACTIVE: its wait_timeout starts as the global
    /// interactive_timeout, as MySQL does at connect.
    pub fn set_interactive(&mut self) {
        let v = self.server.globals.get("interactive_timeout");
        self.vars.insert("wait_timeout", v);
        let _ = self.refresh_derived();
    }

    /// The idle and network timeouts the connection applies now.
    pub fn net_timeouts(&self) -> NetTimeouts {
        self.net_timeouts
    }

    /// A new transaction with the session's isolation level and access mode (or the
    /// ones SET TRANSACTION chose for the next transaction) and lock wait timeout.
    fn new_txn(&mut self) -> Txn {
        let isolation = self.next_isolation.take().unwrap_or(self.isolation);
        let read_only = self.next_read_only.take().unwrap_or(self.read_only);
        let mut t = Txn::new(isolation, self.lock_wait_timeout);
        if self.binlog_on().is_some() {
            t = t.with_row_log();
        }
        t.set_read_only(read_only);
        t.set_interrupt(self.process.interrupt.clone());
        t
    }

    /// Commits the open transaction, if any (COMMIT, and MySQL's implicit commits),
    /// and releases its metadata locks. A transaction that changed rows first takes
    /// the commit lock, so FLUSH TABLES WITH READ LOCK in another session holds it off;
    /// when that wait fails (1205) the transaction is rolled back, as MySQL's
    /// `ha_commit_trans` does (and MariaDB, checked side by side).
    fn commit_open(&mut self) -> Result<()> {
        // Inside an XA transaction nothing commits implicitly (COMMIT, BEGIN, DDL, …):
        // MySQL's XAER_RMFAIL naming the state.
        if let Some(x) = &self.xa {
            return Err(Error::XaRmFail(x.state.name().into()));
        }
        if self.txn.is_some() && self.txn_wrote {
            if let Err(e) = self.mdl.acquire(
                &[MdlRequest::new(
                    MdlKey::commit(),
                    MdlMode::IntentionExclusive,
                )],
                MdlDuration::Statement,
            ) {
                let _ = self.rollback_open();
                return Err(e);
            }
        }
        let r = match self.txn.take() {
            Some(t) => self.commit_txn(t),
            None => Ok(()),
        };
        self.end_transaction_locks();
        r
    }

    /// Rolls the open transaction back, if any, and releases its metadata locks.
    /// Changes to non-transactional tables stay, as on MyISAM.
    fn rollback_open(&mut self) -> Result<()> {
        // An XA branch rolled back under the session (a metadata-lock deadlock): only
        // XA ROLLBACK is left for it.
        if let Some(x) = &mut self.xa {
            if self.txn.is_some() {
                x.state = xa::XaState::RollbackOnly;
            }
        }
        let r = match self.txn.take() {
            Some(t) => t.rollback(),
            None => Ok(()),
        };
        self.end_transaction_locks();
        r
    }

    /// The transaction is over: its metadata locks go (ROLLBACK TO SAVEPOINT does not
    /// come here; it keeps them, as MySQL does).
    fn end_transaction_locks(&mut self) {
        self.txn_wrote = false;
        self.mdl.release(MdlDuration::Transaction);
    }

    /// The client's statement is over: statement-long metadata locks go, and the
    /// transaction's too when none is left open (autocommit, or a statement that
    /// ended it: COMMIT, ROLLBACK, a deadlock, an implicit commit).
    fn end_statement_locks(&mut self) {
        let over = self.txn.is_none();
        if over {
            self.txn_wrote = false;
        }
        self.mdl.release_at_statement_end(over);
    }

    /// Takes the shared metadata locks a bound statement needs (none under LOCK TABLES,
    /// whose locks cover it), then makes sure the plan was bound against the catalog
    /// as it is now: a DDL statement that finished before the locks were granted has
    /// replaced what the plan points to, so it is bound again. While the locks are
    /// held, no DDL can change those tables until the transaction ends.
    fn lock_and_bind(&mut self, p: &Arc<Prepared>) -> Result<Arc<Prepared>> {
        let mut p = p.clone();
        loop {
            if self.locked.is_none() {
                let r = self.lock_for_plan(&p);
                if let Err(e) = r {
                    if matches!(e, Error::Deadlock) {
                        // The victim of a metadata-lock deadlock: the whole transaction
                        // goes (MySQL marks it for rollback), which releases what the
                        // other waiters wait for.
                        let _ = self.rollback_open();
                    }
                    return Err(e);
                }
            }
            if self.plan_is_current(&p) {
                return Ok(p);
            }
            let fresh = self.rebind(&p)?;
            let same = fresh.table_locks.len() == p.table_locks.len()
                && fresh
                    .table_locks
                    .iter()
                    .zip(&p.table_locks)
                    .all(|(a, b)| a.key == b.key && a.mode == b.mode)
                && fresh.takes_global_ix == p.takes_global_ix;
            if same {
                // Bound while the locks are held: nothing can have changed since.
                return Ok(fresh);
            }
            p = fresh;
        }
    }

    fn lock_for_plan(&mut self, p: &Prepared) -> Result<()> {
        if p.takes_global_ix {
            self.mdl.acquire_global_intention()?;
            if self.txn.is_some() || !self.autocommit() {
                self.txn_wrote = true;
            }
        }
        if !p.table_locks.is_empty() {
            self.mdl.acquire(&p.table_locks, MdlDuration::Transaction)?;
        }
        Ok(())
    }

    /// Runs one statement that reads or writes tables inside a transaction: the open
    /// one, or a new one. `own` gives the statement a transaction of its own that ends
    /// with it whatever autocommit says (DDL, after the implicit commit).
    fn in_transaction<T>(
        &mut self,
        own: bool,
        f: impl FnOnce(&mut Session, &Txn) -> Result<T>,
    ) -> Result<T> {
        if let Some(x) = &self.xa {
            // Tables are read and written only while the XA transaction is ACTIVE.
            if x.state != xa::XaState::Active || own || self.txn.is_none() {
                return Err(Error::XaRmFail(x.state.name().into()));
            }
        }
        let (txn, opened) = match self.txn.take().filter(|_| !own) {
            Some(t) => (t, false),
            None => (self.new_txn(), true),
        };
        // A transaction begun here outlives the statement only under autocommit=0.
        let keep = !opened || (!own && !self.autocommit());
        txn.set_single_statement(!keep);
        txn.begin_statement();
        let mut r = f(self, &txn);
        if txn.logs_rows() {
            // Heap tables' changes stay whatever the statement's outcome: logged now.
            if let Err(e) = self.log_nontransactional(&txn) {
                if r.is_ok() {
                    r = Err(e);
                }
            }
        }
        match r {
            Ok(v) => {
                if let Err(e) = txn.end_statement(true) {
                    // Keep the session out of a transaction in an unknown state. The
                    // rollback's own error would hide the first, which says more.
                    let _ = txn.rollback();
                    return Err(e);
                }
                if keep {
                    self.txn = Some(txn);
                } else {
                    // A failed commit (e.g. the log could not be synced) is this
                    // statement's error.
                    self.commit_txn(txn)?;
                }
                Ok(v)
            }
            Err(Error::Deadlock) => {
                // The engine chose this transaction as the deadlock victim: all of it is
                // undone and the session is left outside a transaction, as InnoDB does.
                // The deadlock is what the client must see, not a rollback error. An XA
                // branch is left rollback-only (XA END then gives 1614).
                let _ = txn.rollback();
                if let Some(x) = &mut self.xa {
                    x.state = xa::XaState::RollbackOnly;
                }
                Err(Error::Deadlock)
            }
            Err(e) => {
                // The failed statement undoes only itself (a lock wait timeout too,
                // innodb_rollback_on_timeout=OFF); the transaction goes on. If even that
                // undo fails, nothing of the transaction can be trusted: roll it all back.
                let undone = txn.end_statement(false);
                if keep && undone.is_ok() {
                    self.txn = Some(txn);
                } else {
                    let _ = txn.rollback();
                }
                Err(e)
            }
        }
    }

    /// Runs `f` with the open transaction, or a scratch one, without starting or ending
    /// anything: for statements that read no table rows (SHOW, EXPLAIN, SELECT without
    /// FROM), which must not open a transaction under autocommit=0.
    fn outside_transaction<T>(
        &mut self,
        f: impl FnOnce(&mut Session, &Txn) -> Result<T>,
    ) -> Result<T> {
        match self.txn.take() {
            Some(t) => {
                let r = f(self, &t);
                self.txn = Some(t);
                r
            }
            None => f(self, &Txn::default()),
        }
    }

    /// The statement's clock, in the session's time zone.
    fn now(&self) -> DateTime {
        let utc = match self.fixed_time {
            Some((secs, micro)) => DateTime::from_unix(secs, micro),
            None => DateTime::now(),
        };
        match self.tz_offset {
            Some(secs) => DateTime::from_unix(utc.to_unix() + secs, utc.micro),
            None => utc,
        }
    }

    pub fn use_database(&mut self, db: &str) -> Result<()> {
        if !self.server.catalog.database_exists(db) {
            return Err(Error::UnknownDatabase(db.to_string()));
        }
        if let Some(eff) = self.effective() {
            if !strata_sql::catalog::is_open_schema(db) && !eff.sees_db(db) {
                return Err(Error::DbAccessDenied {
                    user: self.identity.user.clone(),
                    host: self.identity.client_host.clone(),
                    db: db.to_string(),
                });
            }
        }
        self.current_db = Some(db.to_string());
        self.process.set_db(self.current_db.clone());
        self.follow_database_collation();
        Ok(())
    }

    /// `character_set_database` and `collation_database` name the current database's
    /// default, as in MySQL (USE, and ALTER DATABASE of the current one).
    fn follow_database_collation(&mut self) {
        follow_collation(&mut self.vars, &self.server, self.current_db.as_deref());
    }

    /// The current value of a variable an engine owns (global scope), if one does.
    fn engine_variable(&self, name: &str) -> Option<(Arc<dyn strata_engine::Engine>, Value)> {
        self.server.catalog.engines().iter().find_map(|e| {
            e.variables()
                .into_iter()
                .find(|v| v.name.eq_ignore_ascii_case(name))
                .map(|v| (e.clone(), v.value))
        })
    }

    /// `@@session.name`: 1238 "Variable 'x' is a GLOBAL variable" when `name` has no
    /// session value (MySQL 8 refuses it; `@@name` without a scope reads the global
    /// value). Unknown names pass: reading them reports 1193.
    pub fn check_session_scope(&self, name: &str) -> Result<()> {
        let lname = name.to_ascii_lowercase();
        let key = vars::canonical(&lname);
        let global_only = match vars::lookup(key) {
            Some(def) => def.scope == vars::Scope::Global && !vars::session_readable(def),
            // Engine variables are all global-only in MySQL 8.
            None => self.engine_variable(key).is_some(),
        };
        if global_only {
            let name = vars::lookup(key).map_or(key.to_string(), |d| d.name.to_string());
            return Err(Error::VariableWrongScope {
                name,
                scope: "GLOBAL",
            });
        }
        Ok(())
    }

    pub fn get_variable(&self, name: &str, global: bool) -> Result<Value> {
        let lname = name.to_ascii_lowercase();
        let key = vars::canonical(&lname);
        let Some(def) = vars::lookup(key) else {
            // Engine variables are global; `@@name` reads the global value, as MySQL
            // does for a global-only variable.
            return self
                .engine_variable(key)
                .map(|(_, v)| v)
                .ok_or_else(|| Error::UnknownVariable(name.to_string()));
        };
        match key {
            _ if global && def.scope == vars::Scope::Session => {
                return Err(Error::VariableWrongScope {
                    name: def.name.into(),
                    scope: "SESSION",
                })
            }
            "last_insert_id" => {
                return Ok(Value::UInt(
                    self.insert_id_arg().unwrap_or(self.last_insert_id),
                ))
            }
            "warning_count" => return Ok(Value::UInt(self.previous_counts.0)),
            "error_count" => return Ok(Value::UInt(self.previous_counts.1)),
            "timestamp" => return Ok(self.timestamp_value()),
            "pseudo_thread_id" if !self.vars.contains_key("pseudo_thread_id") => {
                return Ok(Value::UInt(self.connection_id as u64))
            }
            "gtid_next" => return Ok(Value::str(&self.gtid_spec.text())),
            "gtid_executed" | "gtid_purged" => {
                let b = self.server.binlog();
                let set = b.map(|b| {
                    if key == "gtid_executed" {
                        b.gtid_executed()
                    } else {
                        b.gtid_purged()
                    }
                });
                return Ok(Value::str(&set.unwrap_or_default()));
            }
            _ => {}
        }
        if global {
            if def.scope == vars::Scope::Session {
                return Err(Error::VariableWrongScope {
                    name: def.name.into(),
                    scope: "SESSION",
                });
            }
            return Ok(unsigned_if_declared(def, self.server.globals.get(def.name)));
        }
        if let Some(v) = self.vars.get(def.name) {
            return Ok(unsigned_if_declared(def, v.clone()));
        }
        Ok(unsigned_if_declared(def, self.server.globals.get(def.name)))
    }

    fn set_variable(&mut self, name: &str, global: bool, value: Option<Value>) -> Result<()> {
        if global {
            self.need_global(
                strata_types::privilege::Privs::SUPER,
                Some("SYSTEM_VARIABLES_ADMIN"),
                "SUPER or SYSTEM_VARIABLES_ADMIN",
            )?;
        }
        let lname = name.to_ascii_lowercase();
        let key = vars::canonical(&lname).to_string();
        let Some(def): Option<&VarDef> = vars::lookup(&key) else {
            return self.set_engine_variable(name, &key, global, value);
        };
        if !def.dynamic {
            return Err(Error::VariableReadOnly(def.name.to_string()));
        }
        if global && def.scope == vars::Scope::Session {
            return Err(Error::VariableIsSession(def.name.to_string()));
        }
        if !global && def.scope == vars::Scope::Global {
            return Err(Error::VariableIsGlobal(def.name.to_string()));
        }
        if key == "last_insert_id" {
            self.last_insert_id = value.and_then(|v| v.to_i64()).unwrap_or(0) as u64;
            return Ok(());
        }
        if key == "gtid_next" {
            return self.set_gtid_next_variable(value);
        }
        if key == "gtid_purged" {
            return self.set_gtid_purged(value);
        }
        if key == "sql_log_bin" {
            // MySQL 8: SUPER or SYSTEM_VARIABLES_ADMIN, and never inside a transaction
            // (its changes would be half in the log).
            self.need_global(
                strata_types::privilege::Privs::SUPER,
                Some("SYSTEM_VARIABLES_ADMIN"),
                "SUPER or SYSTEM_VARIABLES_ADMIN",
            )?;
            if self.txn.is_some() {
                return Err(Error::SqlLogBinInTransaction);
            }
        }
        if key == "max_allowed_packet" && !global {
            return Err(Error::SessionVariableReadOnly(def.name.to_string()));
        }
        // What binary-log replays set: checked (and for some, applied) there.
        let value = match self.replay_variable(&key, global, value)? {
            binlog_replay::Replay::Done => return Ok(()),
            binlog_replay::Replay::Store(v) => v,
        };
        let v = match value {
            None if global => {
                // DEFAULT for GLOBAL: the value the server started with.
                self.server
                    .globals
                    .startup(def.name)
                    .ok_or_else(|| Error::NotSupported(format!("SET GLOBAL {key} = DEFAULT")))?
            }
            None => {
                // DEFAULT for a session: the global value.
                if key == "autocommit" && self.server.globals.get(def.name).truth() == Some(true) {
                    self.commit_open()?;
                }
                self.vars.remove(def.name);
                return self.refresh_derived();
            }
            Some(v) => v,
        };
        let given = v;
        let v = &given;
        if key == "sql_select_limit" {
            // Only the default (no limit) is supported; other values are refused, not
            // silently ignored.
            let ok = matches!(v, Value::UInt(u64::MAX)) || v.to_i64() == Some(-1);
            if !ok {
                return Err(Error::WrongValueForVariable {
                    name: def.name.into(),
                    value: v.to_text(),
                });
            }
            return Ok(());
        }
        let (mut v, clamped) = match vars::normalize_clamped(def, &given) {
            // Out of the variable's range: clamped with a warning, as MySQL does unless
            // STRICT_ALL_TABLES makes it an error.
            Ok((_, true)) if self.strict_all_tables() => {
                return Err(Error::WrongValueForVariable {
                    name: def.name.into(),
                    value: given.to_text(),
                })
            }
            other => other?,
        };
        if clamped {
            self.note_warning(
                1292,
                format!(
                    "Truncated incorrect {} value: '{}'",
                    def.name,
                    given.to_text()
                ),
            );
        }
        if key == "time_zone" {
            let t = v.to_text();
            if !t.eq_ignore_ascii_case("SYSTEM") && parse_offset(&t).is_none() {
                return Err(Error::WrongValueForVariable {
                    name: "time_zone".into(),
                    value: t,
                });
            }
        }
        if key == "default_storage_engine" {
            let available: Vec<&str> = self
                .server
                .catalog
                .engines()
                .iter()
                .map(|e| e.name())
                .collect();
            let stored = strata_sql::engine_name(&v.to_text(), &available)?;
            v = Value::str(strata_sql::engine_display(&stored));
        }
        if let Kind::Enum(_) = def.kind {
            if key.starts_with("character_set") || key.starts_with("collation") {
                // The connection always speaks utf8mb4; a client asking for utf8 or
                // latin1 names is answered in utf8mb4 (ASCII-identical).
            }
        }
        if key == "autocommit" && !global && v.truth() == Some(true) {
            // Turning autocommit on commits the open transaction (its error, such as a
            // failed log sync, is the SET's).
            self.commit_open()?;
        }
        if global {
            self.server.globals.set(def.name, v);
        } else {
            self.vars.insert(def.name, v);
        }
        self.refresh_derived()
    }

    /// SET GLOBAL of a variable an engine owns; the engine checks the value.
    fn set_engine_variable(
        &mut self,
        name: &str,
        key: &str,
        global: bool,
        value: Option<Value>,
    ) -> Result<()> {
        let (engine, _) = self
            .engine_variable(key)
            .ok_or_else(|| Error::UnknownVariable(name.to_string()))?;
        if !global {
            return Err(Error::VariableIsGlobal(key.to_string()));
        }
        match value {
            Some(v) => engine.set_variable(key, &v),
            None => Err(Error::NotSupported("SET GLOBAL ... = DEFAULT".into())),
        }
    }

    /// COM_RESET_CONNECTION: back to a fresh session for the same user and database.
    pub fn reset(&mut self) {
        self.vars.clear();
        self.fixed_time = None;
        self.binlog_events_state = None;
        self.follow_database_collation();
        self.user_vars.lock().clear();
        self.release_prepared_statements(self.prepared.len());
        self.prepared.clear();
        self.plan_cache.clear();
        self.locked = None;
        // MySQL rolls back on reset (a prepared XA transaction is detached, as at
        // disconnect); an engine error here has no statement to report it to, and the
        // transaction is gone either way.
        self.detach_xa();
        let _ = self.rollback_open();
        // A GTID the session owned is free again; gtid_next is AUTOMATIC.
        self.release_gtid_next(true);
        self.mdl.release_all();
        self.drop_temporary_tables();
        self.next_isolation = None;
        self.next_read_only = None;
        self.named_statements.clear();
        self.last_insert_id = 0;
        self.found_rows = 0;
        self.clear_diagnostics();
        self.previous_counts = (0, 0);
        let _ = self.refresh_derived();
    }

    pub fn close(&mut self) {
        self.server.processes.remove(self.connection_id);
        self.server.replicas.unregister(self.connection_id);
        self.release_prepared_statements(self.prepared.len());
        self.prepared.clear();
        // A prepared XA transaction outlives its connection (MySQL 8); any other open
        // transaction is rolled back; there is no client left to report an error to.
        self.detach_xa();
        let _ = self.rollback_open();
        self.release_gtid_next(true);
        self.locked = None;
        self.mdl.release_all();
        self.drop_temporary_tables();
        self.server
            .threads_connected
            .fetch_sub(1, Ordering::Relaxed);
    }

    /// The session's temporary tables go (disconnect, COM_RESET_CONNECTION,
    /// COM_CHANGE_USER), after its transaction ended; plans naming them are stale.
    fn drop_temporary_tables(&mut self) {
        if !self.temp.is_empty() {
            self.temp.drop_all();
            self.server.catalog.invalidate_plans();
        }
    }

    fn exec_ctx<'a>(&'a self, env: &'a SessionEnv<'a>, txn: &'a Txn) -> Result<ExecCtx<'a>> {
        Ok(ExecCtx {
            catalog: &self.server.catalog,
            current_db: self.current_db.clone(),
            env,
            locked_tables: self.locked.as_ref().map(|l| &l.0),
            strict: self.strict_mode,
            sql_mode: self.sql_mode,
            default_engine: &self.engine,
            sort_buffer_size: self.sort_buffer,
            tmp_table_size: self.tmp_table_size,
            tmpdir: &self.server.config.tmpdir,
            txn,
            mdl: &self.mdl,
            invoker: None,
            temp: &self.temp,
        })
    }

    /// COM_QUERY.
    pub fn query(
        &mut self,
        sql: &str,
        multi_statements: bool,
        out: &mut dyn ResultSink,
    ) -> Result<()> {
        self.server.questions.fetch_add(1, Ordering::Relaxed);
        self.process
            .begin("Query", processlist::Info::Text(Arc::from(sql)));
        let r = self.query_pieces(sql, multi_statements, out);
        self.process.end();
        r
    }

    fn query_pieces(
        &mut self,
        sql: &str,
        multi_statements: bool,
        out: &mut dyn ResultSink,
    ) -> Result<()> {
        // Under NO_BACKSLASH_ESCAPES a `\'` ends a string, so the packet is read in the
        // default mode's spelling before it is split (each piece is then already in it).
        let whole = (multi_statements && self.sql_mode.has(SqlMode::NO_BACKSLASH_ESCAPES))
            .then(|| text::to_default_mode(sql, self.sql_mode));
        let source: &str = whole.as_ref().map_or(sql, |m| &m.text);
        let pieces = if multi_statements {
            text::split_statements(source)
        } else {
            vec![source.trim()]
        };
        if pieces.is_empty() {
            return Err(Error::Syntax(String::new()));
        }
        for (i, piece) in pieces.iter().enumerate() {
            if i > 0 {
                out.next_result()?;
            }
            let r = self.run_with_diagnostics(piece, whole.is_some(), out);
            self.end_statement_locks();
            r?;
        }
        Ok(())
    }

    /// The `LAST_INSERT_ID(expr)` value the running statement set, if any.
    fn insert_id_arg(&self) -> Option<u64> {
        self.insert_id_arg.lock().ok().and_then(|a| *a)
    }

    /// After a statement: a `LAST_INSERT_ID(expr)` it called becomes the session's
    /// value, whether or not the statement succeeded (MySQL sets it as it evaluates).
    fn settle_insert_id_arg(&mut self) {
        if let Some(v) = self.insert_id_arg.lock().ok().and_then(|mut a| a.take()) {
            self.last_insert_id = v;
        }
    }

    /// After a statement: what ROW_COUNT() reports from now on.
    fn settle_row_count(&mut self, ok: bool) {
        self.row_count = if ok { self.statement_rows } else { -1 };
    }

    /// Runs one statement with a fresh diagnostics area (SHOW WARNINGS and SHOW ERRORS
    /// look at the previous one instead), recording the error if it fails.
    /// The text is first spelled as in the default sql_mode (`text::to_default_mode`)
    /// unless `in_default_mode` says it already is.
    fn run_with_diagnostics(
        &mut self,
        sql: &str,
        in_default_mode: bool,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let m = if in_default_mode {
            text::ModeText {
                text: std::borrow::Cow::Borrowed(sql),
                pipes_as_or: 0,
            }
        } else {
            text::to_default_mode(sql, self.sql_mode)
        };
        let sql: &str = &m.text;
        if !text::is_diagnostics_statement(sql) {
            self.clear_diagnostics();
        }
        if m.pipes_as_or > 0 {
            self.note_warning(
                1287,
                "'|| as a synonym for OR' is deprecated and will be removed in a future \
                 release. Please use OR instead"
                    .into(),
            );
        }
        self.start_statement(sql);
        self.statement_rows = 0;
        let r = self.run(sql, out);
        self.settle_insert_id_arg();
        self.settle_row_count(r.is_ok());
        if let Err(e) = &r {
            self.note_error(e);
        }
        r
    }

    /// Starts a nondiagnostic statement: the previous statement's counts stay readable
    /// as `@@warning_count`/`@@error_count`, its conditions go.
    fn clear_diagnostics(&mut self) {
        if let Ok(mut d) = self.diagnostics.lock() {
            self.previous_counts = (d.len() as u64, d.errors() as u64);
            d.clear();
        }
    }

    fn note_error(&self, e: &Error) {
        if let Ok(mut d) = self.diagnostics.lock() {
            d.push(Warning {
                level: WarnLevel::Error,
                code: e.code(),
                message: e.to_string(),
            });
        }
    }

    /// Adds a warning to the running statement's diagnostics area.
    fn note_warning(&self, code: u16, message: String) {
        if let Ok(mut d) = self.diagnostics.lock() {
            d.push(Warning {
                level: WarnLevel::Warning,
                code,
                message,
            });
        }
    }

    fn strict_all_tables(&self) -> bool {
        self.get_variable("sql_mode", false)
            .map(|m| {
                m.to_text()
                    .split(',')
                    .any(|w| w.eq_ignore_ascii_case("STRICT_ALL_TABLES"))
            })
            .unwrap_or(false)
    }

    /// Warnings the current statement has raised so far (for OK and EOF packets).
    fn warning_count(&self) -> u16 {
        self.diagnostics
            .lock()
            .map(|d| d.len().min(u16::MAX as usize) as u16)
            .unwrap_or(0)
    }

    /// Runs one statement given as text.
    pub fn run(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let mut sql = sql.trim().trim_end_matches(';').trim();
        if let Some(inner) = text::unwrap_executable_comment(sql) {
            // A dump's version-gated statement; one gated out is a comment, done.
            sql = inner.trim().trim_end_matches(';').trim();
            if sql.is_empty() {
                return out.ok(&OkInfo::default());
            }
        }
        // Version comments inside the statement (`START TRANSACTION /*!40100 WITH
        // CONSISTENT SNAPSHOT */`, as mysqldump writes): kept or dropped by version before
        // anything reads the text.
        let expanded = text::expand_version_comments(sql);
        if let Some(x) = &expanded {
            sql = x.trim().trim_end_matches(';').trim();
        }
        if sql.is_empty() {
            return Err(Error::Syntax(String::new()));
        }
        // A GTID assigned with SET gtid_next: MySQL's checks around the statement.
        if self.gtid_spec.assigned() {
            return self.under_gtid_next(sql, out, |s, out| s.run_statement(sql, out));
        }
        self.run_statement(sql, out)
    }

    /// [`Session::run`] of a statement whose version comments were resolved.
    fn run_statement(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        // 1. The plan cache, for statements that differ only in literals.
        // A statement reading `@name` is typed by the variables' values: not cached. (The
        // normalized text has no literals left, so an `@` in a string does not count.)
        // Nor is a huge one: its key would hold its literals' bytes for the session's life.
        let cacheable = |key: &String| {
            self.plan_cache_enabled && key.len() <= PLAN_CACHE_MAX_KEY && !reads_user_variables(key)
        };
        if let Some((key, values)) = text::normalize(sql).filter(|(key, _)| cacheable(key)) {
            let cached = self.plan_cache.get(&key).cloned();
            let prepared = match cached {
                Some(p) if self.plan_is_current(&p) => Some(p),
                _ => match strata_sql::parse(&key) {
                    Ok(mut stmts) if stmts.len() == 1 => {
                        let stmt = stmts.remove(0);
                        let now = self.now();
                        let env = SessionEnv::new(self, now);
                        // Binding reads no rows: a scratch transaction will do.
                        let scratch = Txn::default();
                        let cx = self.exec_ctx(&env, &scratch)?;
                        match strata_sql::prepare(stmt, &key, values.len(), &cx) {
                            Ok(p)
                                if !matches!(p.plan, strata_sql::Plan::Other(_))
                                    && !reads_system_tables(&key) =>
                            {
                                let p = Arc::new(p);
                                if self.plan_cache.len() >= PLAN_CACHE_ENTRIES {
                                    self.plan_cache.clear();
                                }
                                self.plan_cache.insert(key, p.clone());
                                Some(p)
                            }
                            _ => None,
                        }
                    }
                    _ => None,
                },
            };
            if let Some(p) = prepared {
                return self.execute_prepared(&p, &values, out);
            }
        }
        // 2. Statements the session owns.
        let first = text::first_word(sql);
        // Files: SELECT … INTO OUTFILE / DUMPFILE / @var (never a cached plan: the
        // parser does not read the clause) and LOAD DATA.
        if matches!(first.as_str(), "SELECT" | "WITH") {
            if let Some((select, into)) = strata_sql::files::clauses::split_select_into(sql)? {
                return self.select_into(&select, into, out);
            }
        }
        if first == "LOAD" {
            self.server.count(Com::Insert);
            return self.load_data(sql, out);
        }
        if matches!(
            first.as_str(),
            "CREATE" | "ALTER" | "DROP" | "RENAME" | "GRANT" | "REVOKE" | "SET" | "SHOW" | "FLUSH"
        ) && acl::statements::is_account_statement(&strata_sql::text::words(sql))
        {
            return self.account_statement(sql, out);
        }
        if matches!(
            first.as_str(),
            "CHANGE" | "START" | "STOP" | "RESET" | "SHOW"
        ) {
            if let Some(r) = self.replica_statement(sql, out) {
                return r;
            }
        }
        if matches!(first.as_str(), "SHOW" | "FLUSH" | "PURGE" | "RESET") {
            if let Some(r) = self.binlog_statement(sql, out) {
                return r;
            }
        }
        if matches!(first.as_str(), "CREATE" | "DROP" | "ALTER" | "CALL") {
            if let Some(kind) = strata_sql::stored_program_statement(sql) {
                return self.stored_program_ddl(kind, sql, out);
            }
        }
        match first.as_str() {
            "SET" => return self.run_set(sql, out),
            "KILL" => return self.kill(sql, out),
            "USE" => {
                let w = strata_sql::text::words(sql);
                let db = w.get(1).ok_or_else(|| Error::Syntax(sql.into()))?;
                self.use_database(db.trim_start_matches('\u{0}'))?;
                return out.ok(&OkInfo::default());
            }
            "BEGIN" | "START" => return self.begin(sql, out),
            "COMMIT" | "ROLLBACK" => return self.end_transaction(&first, sql, out),
            "SAVEPOINT" => return self.savepoint(sql, out),
            "RELEASE" => return self.release_savepoint(sql, out),
            "PREPARE" => return self.sql_prepare(sql, out),
            "EXECUTE" => return self.sql_execute(sql, out),
            "DEALLOCATE" => return self.sql_deallocate(sql, out),
            "DROP"
                if strata_sql::text::words(sql)
                    .get(1)
                    .is_some_and(|w| w.eq_ignore_ascii_case("PREPARE")) =>
            {
                return self.sql_deallocate(sql, out)
            }
            "LOCK" => {
                self.commit_open()?;
                return self.lock_tables(sql, out);
            }
            "UNLOCK" => {
                // UNLOCK TABLES commits only when LOCK TABLES was in effect, as in MySQL
                // (not after FLUSH TABLES WITH READ LOCK alone).
                if self.locked.is_some() {
                    self.commit_open()?;
                }
                self.locked = None;
                self.mdl.release(MdlDuration::LockTables);
                self.mdl.release(MdlDuration::GlobalReadLock);
                return out.ok(&OkInfo::default());
            }
            "FLUSH" => {
                let w = strata_sql::text::words(sql);
                self.need_global(strata_types::privilege::Privs::RELOAD, None, "RELOAD")?;
                if w.iter().any(|x| x.eq_ignore_ascii_case("lock")) {
                    return self.flush_with_read_lock(&w, out);
                }
                self.commit_open()?;
                self.server.catalog.flush()?;
                return out.ok(&OkInfo::default());
            }
            "SHOW" => {
                let w = strata_sql::text::words(sql);
                let mut i = 1;
                let mut global = false;
                if w.get(i).is_some_and(|x| {
                    x.eq_ignore_ascii_case("global") || x.eq_ignore_ascii_case("session")
                }) {
                    global = w[i].eq_ignore_ascii_case("global");
                    i += 1;
                }
                let what = w.get(i).map(|x| x.to_ascii_uppercase()).unwrap_or_default();
                if what == "COUNT" && i == 1 {
                    return self.show_count(&w, out);
                }
                // `SHOW … WHERE cond` of every form that takes one (show_where.rs);
                // VARIABLES and STATUS filter their own rows below.
                if show_where::takes_where(&what) {
                    if let Some(at) = show_where::where_keyword(sql) {
                        return self.show_where(sql, at, out);
                    }
                }
                if what == "VARIABLES" || what == "STATUS" {
                    let filter = show_filter(sql, &w, i + 1)?;
                    let rows = if what == "VARIABLES" {
                        self.variable_rows(global)?
                    } else {
                        self.status_rows()
                    };
                    return self.send_show_rows(rows, filter, out);
                }
            }
            "ANALYZE" | "OPTIMIZE" | "CHECK" | "REPAIR" => {
                return self.table_maintenance(&first, sql, out)
            }
            "DO" => {
                // DO expr[, expr ...]: each is evaluated, the values discarded.
                let list = sql[2..].trim();
                let exprs = split_top_level_commas(list);
                // The splitter drops empty pieces; a dangling comma is still an error.
                if exprs.is_empty() || list.ends_with(',') || list.starts_with(',') {
                    return Err(Error::Syntax(String::new()));
                }
                let now = self.now();
                let env = SessionEnv::new(self, now);
                for expr in exprs {
                    strata_sql::eval_constant(expr, &env)?;
                }
                return out.ok(&OkInfo {
                    warnings: self.warning_count(),
                    ..OkInfo::default()
                });
            }
            "RESET" => return self.reset_persist(sql, out),
            "XA" => return self.xa_statement(sql, out),
            "BINLOG" => return self.binlog_base64_statement(sql, out),
            "ALTER" => {
                // ALTER TABLE t DISABLE|ENABLE KEYS, which dumps wrap around their
                // inserts: index maintenance is never deferred here, so it only names
                // the table (a missing one is still 1146).
                let w = strata_sql::text::words(sql);
                let u: Vec<String> = w.iter().map(|x| x.to_ascii_uppercase()).collect();
                let n = u.len();
                if n >= 5
                    && u[1] == "TABLE"
                    && u[n - 1] == "KEYS"
                    && (u[n - 2] == "DISABLE" || u[n - 2] == "ENABLE")
                {
                    let (db, t) = if n == 7 && w[3] == "." {
                        (w[2].clone(), w[4].clone())
                    } else if n == 5 {
                        (
                            self.current_db.clone().ok_or(Error::NoDatabaseSelected)?,
                            w[2].clone(),
                        )
                    } else {
                        return Err(Error::Syntax(sql.chars().take(80).collect()));
                    };
                    self.server.catalog.table(&db, &t)?;
                    return out.ok(&OkInfo::default());
                }
            }
            _ => {}
        }
        // 3. SHOW and DESCRIBE.
        if matches!(first.as_str(), "SHOW" | "DESCRIBE" | "DESC" | "EXPLAIN") {
            let shown = self.outside_transaction(|s, txn| {
                let now = s.now();
                let env = SessionEnv::new(s, now);
                let cx = s.exec_ctx(&env, txn)?;
                strata_sql::execute_show(sql, &cx, out)
            })?;
            if let Some(o) = shown {
                self.found_rows = o.rows_sent;
                return Ok(());
            }
            if first != "EXPLAIN" {
                return Err(Error::NotSupported(sql.chars().take(40).collect()));
            }
        }
        // 4. Everything else through sqlparser.
        let (text, params) = text::number_placeholders(sql);
        if params > 0 {
            return Err(Error::Syntax("?".into()));
        }
        let mut stmts = strata_sql::parse(&text)?;
        if stmts.len() != 1 {
            return Err(Error::Syntax(sql.chars().take(80).collect()));
        }
        let stmt = stmts.remove(0);
        let now = self.now();
        let env = SessionEnv::new(self, now);
        let scratch = Txn::default();
        let cx = self.exec_ctx(&env, &scratch)?;
        let p = strata_sql::prepare(stmt, &text, 0, &cx)?;
        drop(cx);
        self.execute_prepared(&Arc::new(p), &[], out)
    }

    /// CREATE / DROP TRIGGER and CREATE / DROP / ALTER PROCEDURE|FUNCTION are DDL: the
    /// open transaction is committed first and the statement's own change is committed
    /// with it. CALL runs in the session's transaction like any statement; its
    /// procedure's result sets go to `out` before the CALL's own OK.
    fn stored_program_ddl(
        &mut self,
        kind: strata_sql::ProgramDdl,
        sql: &str,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        self.server.count(Com::Other);
        let call = kind == strata_sql::ProgramDdl::Call;
        // The statements inside stored programs are not checked against any account
        // yet (neither the definer's nor the invoker's), so only an account holding
        // every global privilege may define or call them: refused, never a way around
        // the checks.
        if let Some(eff) = self.effective() {
            if eff.global != strata_types::privilege::Privs::GLOBAL_ALL {
                return Err(Error::NotSupported(
                    "stored programs for an account without every global privilege".into(),
                ));
            }
        }
        if !call {
            self.commit_open()?;
        }
        let outcome = self.in_transaction(!call, |s, txn| {
            let now = s.now();
            let env = SessionEnv::new(s, now);
            let cx = s.exec_ctx(&env, txn)?;
            let mut out = EndWithWarnings {
                out: &mut *out,
                diagnostics: &s.diagnostics,
            };
            strata_sql::execute_stored_program_ddl(kind, sql, &cx, &mut out)
        })?;
        if !call {
            self.log_ddl(sql)?;
        }
        let mut info = outcome.ok.unwrap_or_default();
        info.warnings = info.warnings.max(self.warning_count());
        self.statement_rows = info.affected_rows as i64;
        out.ok(&info)
    }

    /// Whether `p` writes a table of a non-transactional engine (heap), whose changes a
    /// ROLLBACK cannot undo (warning 1196).
    fn changes_nontransactional_table(&self, p: &Prepared) -> bool {
        use strata_sql::Plan;
        let defs: Vec<&strata_types::TableDef> = match &p.plan {
            Plan::Insert(i) => vec![&i.target.def],
            Plan::Update(u) => u.targets().map(|t| &*t.def).collect(),
            Plan::Delete(d) => d.targets().map(|t| &*t.def).collect(),
            _ => return false,
        };
        defs.iter().any(|def| {
            self.server
                .catalog
                .engines()
                .iter()
                .any(|e| e.name() == def.engine && !e.transactional())
        })
    }

    fn plan_is_current(&self, p: &Prepared) -> bool {
        p.catalog_version == self.server.catalog.version() && p.db == self.current_db
    }

    /// Binds a prepared statement's parsed text again against the current catalog,
    /// database and variables.
    fn rebind(&self, p: &Prepared) -> Result<Arc<Prepared>> {
        let now = self.now();
        let env = SessionEnv::new(self, now);
        let scratch = Txn::default();
        let cx = self.exec_ctx(&env, &scratch)?;
        Ok(Arc::new(strata_sql::prepare(
            p.statement.clone(),
            &p.source,
            p.params,
            &cx,
        )?))
    }

    fn execute_prepared(
        &mut self,
        p: &Arc<Prepared>,
        params: &[Value],
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        // Metadata locks first, then the check that the plan is current (the catalog
        // changed, or USE switched databases, since binding: bind again).
        let p = self.lock_and_bind(p)?;
        if self.server.acl.enforcing() {
            self.check_privileges(&p)?;
        }
        let com = match &p.plan {
            strata_sql::Plan::Select(_) => Com::Select,
            strata_sql::Plan::Insert(_) => Com::Insert,
            strata_sql::Plan::Update(_) => Com::Update,
            strata_sql::Plan::Delete(_) => Com::Delete,
            strata_sql::Plan::Explain(_) => Com::Explain,
            strata_sql::Plan::Other(_) => Com::Other,
        };
        self.server.count(com);
        let run = |s: &mut Session, txn: &Txn| s.execute_plan(&p, params, txn, out);
        if p.commits_implicitly() {
            // DDL: the open transaction is committed first, and the statement's own
            // work is committed with it, so nothing is left open after it; then it is
            // logged as its text (without the session's temporary tables, decided
            // while their names still resolve).
            let logged = strata_sql::temporary_binlog_text(
                &p.statement,
                &p.source,
                &self.temp,
                self.current_db.as_deref(),
            );
            self.commit_open()?;
            self.in_transaction(true, run)?;
            if p.logs_own_ddl() {
                return Ok(());
            }
            match logged {
                Some(text) => self.log_ddl(&text),
                None => Ok(()),
            }
        } else if p.reads_tables() {
            self.in_transaction(false, run)
        } else {
            self.outside_transaction(run)
        }
    }

    /// The session account's privileges, read again when the account store changed
    /// since (GRANT, REVOKE, DROP USER bump its generation); None when nothing is
    /// enforced.
    fn effective(&mut self) -> Option<Arc<acl::Effective>> {
        let acl = &self.server.acl;
        if !acl.enforcing() || self.system {
            return None;
        }
        let generation = acl.generation();
        match &self.privs {
            Some((g, e)) if *g == generation => Some(e.clone()),
            _ => {
                let e = Arc::new(self.account_privileges());
                self.privs = Some((generation, e.clone()));
                Some(e)
            }
        }
    }

    /// The roles of `mandatory_roles`, granted to every account.
    fn mandatory_roles(&self) -> Vec<acl::roles::Name> {
        let text = self.server.globals.get("mandatory_roles").to_text();
        if text.is_empty() {
            Vec::new()
        } else {
            acl::roles::parse_list(&text)
        }
    }

    /// The account's privileges with the session's active roles, read from the store.
    fn account_privileges(&self) -> acl::Effective {
        self.server.acl.effective(
            &self.identity.user,
            &self.identity.account_host,
            &self.active_roles,
            &self.mandatory_roles(),
        )
    }

    /// 1142 / 1044 unless the account holds what the bound statement needs. An account
    /// with every global privilege (root) passes without looking at the statement, so
    /// the common path costs a generation compare and a bit test.
    fn check_privileges(&mut self, p: &Prepared) -> Result<()> {
        let generation = self.server.acl.generation();
        if let Some((g, e)) = &self.privs {
            if *g == generation && e.global == strata_types::privilege::Privs::GLOBAL_ALL {
                return Ok(());
            }
        }
        let Some(eff) = self.effective() else {
            return Ok(());
        };
        if eff.global == strata_types::privilege::Privs::GLOBAL_ALL {
            return Ok(());
        }
        acl::check_needs(
            &eff,
            &self.identity,
            &strata_sql::privileges::required(p),
            &|db, t, privilege| strata_sql::privileges::columns_used(p, db, t, privilege),
        )
    }

    /// 1227 unless the account holds global privilege `p` or, when named, the dynamic
    /// privilege `dynamic` (SUPER stands for every dynamic one).
    fn need_global(
        &mut self,
        p: strata_types::privilege::Privs,
        dynamic: Option<&str>,
        named: &str,
    ) -> Result<()> {
        let Some(eff) = self.effective() else {
            return Ok(());
        };
        if eff.has_global(p) || dynamic.is_some_and(|d| eff.has_dynamic(d)) {
            Ok(())
        } else {
            Err(Error::SpecificAccessDenied(named.to_string()))
        }
    }

    /// CREATE / ALTER / DROP / RENAME USER, GRANT, REVOKE, SET PASSWORD, SHOW GRANTS,
    /// SHOW CREATE USER, FLUSH PRIVILEGES (`acl::statements`). Those that change
    /// accounts commit the open transaction first, as MySQL does.
    fn account_statement(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let first = text::first_word(sql);
        // SET ROLE changes only the session, so it does not end the transaction (MySQL
        // commits implicitly for the account statements, not for it).
        let set_role = first == "SET"
            && strata_sql::text::words(sql)
                .get(1)
                .is_some_and(|w| w.eq_ignore_ascii_case("ROLE"));
        if first != "SHOW" && !set_role {
            self.commit_open()?;
        }
        let eff = match self.effective() {
            Some(e) => e,
            // Without access control (in-process, --skip-grant-tables) the statements
            // still run, as a holder of every privilege.
            None => Arc::new(acl::Effective {
                exists: true,
                global: strata_types::privilege::Privs::GLOBAL_ALL,
                dynamic: strata_types::privilege::DYNAMIC
                    .iter()
                    .map(|d| d.to_string())
                    .collect(),
                ..Default::default()
            }),
        };
        let plugin = self
            .server
            .globals
            .get("default_authentication_plugin")
            .to_text();
        let reply = acl::statements::run(
            &self.server.acl,
            &self.identity,
            &eff,
            sql,
            &plugin,
            self.current_db.as_deref(),
            &|db, t| {
                let cat = &self.server.catalog;
                match cat.table(db, t) {
                    Ok(table) => Some(table.def().columns.iter().map(|c| c.name.clone()).collect()),
                    Err(_) => cat.views(db).iter().any(|v| v.name == t).then(Vec::new),
                }
            },
            &acl::statements::RoleCx {
                active: self.active_roles.clone(),
                mandatory: self.mandatory_roles(),
            },
        )?;
        match reply {
            acl::statements::Reply::Ok(n) => out.ok(&OkInfo {
                affected_rows: n,
                ..OkInfo::default()
            }),
            acl::statements::Reply::SetRoles(roles) => {
                self.active_roles = roles;
                self.privs = None;
                out.ok(&OkInfo::default())
            }
            acl::statements::Reply::Rows(title, rows) => {
                out.columns(&[text_col(&title)])?;
                let n = rows.len() as u64;
                for r in rows {
                    out.row(&[Value::str(&r)])?;
                }
                self.found_rows = n;
                out.end(&EndInfo::default())
            }
        }
    }

    /// Runs a bound statement in `txn` and reports its outcome.
    fn execute_plan(
        &mut self,
        p: &Prepared,
        params: &[Value],
        txn: &Txn,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let now = self.now();
        let env = SessionEnv::new(self, now);
        let mut cx = self.exec_ctx(&env, txn)?;
        let mut out = EndWithWarnings {
            out,
            diagnostics: &self.diagnostics,
        };
        let outcome: Outcome = strata_sql::execute(p, params, &mut cx, &mut out)?;
        let new_db = cx.current_db.clone();
        drop(cx);
        if outcome.ok.as_ref().is_some_and(|i| i.affected_rows > 0)
            && self.changes_nontransactional_table(p)
        {
            txn.note_nontransactional_change();
        }
        if new_db != self.current_db || (p.commits_implicitly() && new_db.is_some()) {
            // USE, or DDL such as ALTER DATABASE of the current database.
            follow_collation(&mut self.vars, &self.server, new_db.as_deref());
        }
        if new_db != self.current_db {
            self.current_db = new_db;
            self.process.set_db(self.current_db.clone());
        }
        if let Some(id) = outcome.generated_id {
            self.last_insert_id = id;
        }
        match outcome.ok {
            Some(mut info) => {
                if outcome.generated_id.is_none() {
                    if let Some(v) = self.insert_id_arg() {
                        info.last_insert_id = v;
                    }
                }
                info.warnings = info.warnings.max(self.warning_count());
                self.statement_rows = info.affected_rows as i64;
                out.ok(&info)
            }
            None => {
                self.statement_rows = -1;
                self.found_rows = outcome.rows_sent;
                Ok(())
            }
        }
    }

    /// SET statements: system variables (any scope syntax), user variables, SET NAMES,
    /// SET CHARACTER SET, SET TRANSACTION.
    fn run_set(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let body = sql[3..].trim();
        let upper = body.to_ascii_uppercase();
        if upper.starts_with("NAMES")
            || upper.starts_with("CHARACTER SET")
            || upper.starts_with("CHARSET")
        {
            let w = strata_sql::text::words(body);
            let skip = if upper.starts_with("CHARACTER") { 2 } else { 1 };
            let cs = w
                .get(skip)
                .map(|c| c.trim_start_matches('\u{0}').to_ascii_lowercase())
                .unwrap_or_default();
            if cs != "default" {
                let def = vars::lookup("character_set_client")
                    .ok_or(Error::UnknownVariable("character_set_client".into()))?;
                vars::normalize(def, &Value::str(&cs))
                    .map_err(|_| Error::UnknownCharset(cs.clone()))?;
                for v in [
                    "character_set_client",
                    "character_set_connection",
                    "character_set_results",
                ] {
                    self.set_variable(v, false, Some(Value::str(&cs)))?;
                }
            }
            return out.ok(&OkInfo::default());
        }
        // Whole words: `SET SESSION transaction_read_only = 1` is a variable.
        let w = strata_sql::text::words(body);
        let is = |i: usize, kw: &str| w.get(i).is_some_and(|x| x.eq_ignore_ascii_case(kw));
        if is(0, "TRANSACTION")
            || (["SESSION", "LOCAL", "GLOBAL"].iter().any(|k| is(0, k)) && is(1, "TRANSACTION"))
        {
            return self.set_transaction(body, out);
        }
        // As MySQL, every target is resolved and every value computed before any
        // assignment is made: an unknown variable or a failing expression changes
        // nothing. (A value a variable refuses can still fail after earlier ones.)
        let mut assignments = Vec::new();
        for assignment in split_top_level_commas(body) {
            let (lhs, rhs) = split_assignment(assignment)
                .ok_or_else(|| Error::Syntax(assignment.to_string()))?;
            let (name, scope) = parse_set_target(lhs)?;
            let is_user = scope == SetScope::User;
            if !is_user {
                let key = vars::canonical(&name.to_ascii_lowercase()).to_string();
                if vars::lookup(&key).is_none() && self.engine_variable(&key).is_none() {
                    return Err(Error::UnknownVariable(name));
                }
            }
            let now = self.now();
            let value = {
                let rhs_upper = rhs.trim().to_ascii_uppercase();
                if !is_user && rhs_upper == "DEFAULT" {
                    None
                } else if !is_user && is_bare_word(rhs.trim()) {
                    Some(Value::str(rhs.trim()))
                } else {
                    let env = SessionEnv::new(self, now);
                    Some(strata_sql::eval_constant(rhs, &env)?)
                }
            };
            let next_only = next_transaction_only(lhs);
            assignments.push((name, scope, value, next_only));
        }
        for (name, scope, value, next_only) in assignments {
            match scope {
                SetScope::User => {
                    self.user_vars
                        .lock()
                        .insert(name.to_ascii_lowercase(), value.unwrap_or(Value::Null));
                }
                // `SET @@transaction_isolation = …` (no scope): the next transaction only.
                SetScope::Session if next_only => {
                    let key = vars::canonical(&name.to_ascii_lowercase()).to_string();
                    self.set_next_transaction_variable(&key, value)?;
                }
                SetScope::Session => self.set_variable(&name, false, value)?,
                SetScope::Global => self.set_variable(&name, true, value)?,
                SetScope::Persist => {
                    self.set_variable(&name, true, value)?;
                    self.persist(&name)?;
                }
                SetScope::PersistOnly => self.persist_only(&name, value)?,
            }
        }
        out.ok(&OkInfo {
            warnings: self.warning_count(),
            ..Default::default()
        })
    }

    /// SET PERSIST, after the global value was set: records that value in the file.
    fn persist(&mut self, name: &str) -> Result<()> {
        let key = vars::canonical(&name.to_ascii_lowercase()).to_string();
        let value = self.get_variable(&key, true)?;
        let shown = match vars::lookup(&key) {
            Some(def) => vars::display(def, &value),
            None => value,
        };
        self.server
            .persisted()?
            .set(&key, shown.to_text(), &self.user)
    }

    /// SET PERSIST_ONLY: checks the value as SET GLOBAL would and records it in the file
    /// without applying it. Only variables Strata can apply at startup qualify: the
    /// read-only ones are sized from options before the file is read.
    fn persist_only(&mut self, name: &str, value: Option<Value>) -> Result<()> {
        let key = vars::canonical(&name.to_ascii_lowercase()).to_string();
        let Some(def) = vars::lookup(&key) else {
            return Err(Error::NotSupported(format!(
                "SET PERSIST_ONLY of the engine variable {key}"
            )));
        };
        if def.scope == vars::Scope::Session {
            return Err(Error::VariableIsSession(def.name.to_string()));
        }
        if !def.dynamic {
            return Err(Error::NotSupported(format!(
                "SET PERSIST_ONLY of the read-only variable {key}"
            )));
        }
        let value =
            match value {
                Some(v) => v,
                None => self.server.globals.startup(def.name).ok_or_else(|| {
                    Error::NotSupported(format!("SET PERSIST_ONLY {key} = DEFAULT"))
                })?,
            };
        let (v, clamped) = vars::normalize_clamped(def, &value)?;
        if clamped {
            return Err(Error::WrongValueForVariable {
                name: def.name.into(),
                value: value.to_text(),
            });
        }
        self.server
            .persisted()?
            .set(def.name, vars::display(def, &v).to_text(), &self.user)
    }

    /// RESET PERSIST [[IF EXISTS] name]: forgets persisted values (the running values
    /// stay as they are).
    fn reset_persist(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let w = strata_sql::text::words(sql);
        let u: Vec<String> = w.iter().map(|x| x.to_ascii_uppercase()).collect();
        let (if_exists, name) = match u.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["RESET", "PERSIST"] => (false, None),
            ["RESET", "PERSIST", "IF", "EXISTS", _] => (true, Some(&w[4])),
            ["RESET", "PERSIST", _] => (false, Some(&w[2])),
            ["RESET", ..] => return Err(Error::NotSupported(w.join(" "))),
            _ => return Err(Error::Syntax(sql.chars().take(80).collect())),
        };
        let name = name.map(|n| vars::canonical(&n.to_ascii_lowercase()).to_string());
        let found = self.server.persisted()?.remove(name.as_deref())?;
        if !found {
            let missing = Error::PersistedVariableMissing(name.unwrap_or_default());
            if !if_exists {
                return Err(missing);
            }
            self.note_warning(missing.code(), missing.to_string());
        }
        out.ok(&OkInfo {
            warnings: self.warning_count(),
            ..Default::default()
        })
    }

    /// SHOW COUNT(*) WARNINGS | ERRORS: a diagnostic statement, so it counts the
    /// conditions of the statement before it (left in place by `run_with_diagnostics`).
    fn show_count(&self, w: &[String], out: &mut dyn QueryOutput) -> Result<()> {
        let u: Vec<String> = w.iter().map(|x| x.to_ascii_uppercase()).collect();
        let errors = match u.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["SHOW", "COUNT", "(", "*", ")", "WARNINGS"] => false,
            ["SHOW", "COUNT", "(", "*", ")", "ERRORS"] => true,
            _ => return Err(Error::Syntax(w.join(" "))),
        };
        let n = self
            .diagnostics
            .lock()
            .map(|d| if errors { d.errors() } else { d.len() })
            .unwrap_or(0);
        let name = if errors {
            "@@session.error_count"
        } else {
            "@@session.warning_count"
        };
        let mut col = ColumnMeta::computed(name, FieldType::LongLong);
        col.flags |= strata_types::output::flags::UNSIGNED | strata_types::output::flags::NUM;
        out.columns(&[col])?;
        out.row(&[Value::UInt(n as u64)])?;
        out.end(&EndInfo::default())
    }

    /// SHOW [GLOBAL | SESSION] VARIABLES: every variable visible in the scope, with the
    /// value SHOW prints (booleans as ON/OFF), by name.
    fn variable_rows(&self, global: bool) -> Result<Vec<(String, Value)>> {
        let mut rows: Vec<(String, Value)> = Vec::new();
        for def in vars::VARIABLES {
            if global && def.scope == vars::Scope::Session {
                continue;
            }
            let v = self.get_variable(def.name, global)?;
            rows.push((def.name.to_string(), vars::display(def, &v)));
        }
        // The engines' own variables are global, so both scopes show them.
        for e in self.server.catalog.engines() {
            for v in e.variables() {
                rows.push((v.name.to_string(), v.value));
            }
        }
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(rows)
    }

    /// SHOW [GLOBAL | SESSION] STATUS: the server's counters (all server-wide).
    fn status_rows(&self) -> Vec<(String, Value)> {
        let srv = &self.server;
        let mut rows: Vec<(String, u64)> = vec![
            (
                "Connections".into(),
                srv.connections.load(Ordering::Relaxed),
            ),
            (
                "Prepared_stmt_count".into(),
                srv.prepared_statements.load(Ordering::Relaxed),
            ),
            ("Questions".into(), srv.questions.load(Ordering::Relaxed)),
            (
                "Threads_connected".into(),
                srv.threads_connected.load(Ordering::Relaxed),
            ),
            ("Uptime".into(), srv.uptime()),
        ];
        for (k, v) in COM_NAMES.iter().zip(&srv.com_counts) {
            rows.push((format!("Com_{k}"), v.load(Ordering::Relaxed)));
        }
        for e in srv.catalog.engines() {
            rows.extend(e.status_vars());
        }
        for source in srv.status_sources.lock().iter() {
            rows.extend(source());
        }
        rows.sort();
        let mut rows: Vec<(String, Value)> = rows
            .into_iter()
            .map(|(k, v)| (k, Value::str(&v.to_string())))
            .collect();
        // This connection's own TLS session (MySQL shows these per session).
        rows.push(("Ssl_cipher".into(), Value::str(&self.tls.1)));
        rows.push(("Ssl_version".into(), Value::str(&self.tls.0)));
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows
    }

    /// Sends `Variable_name`/`Value` rows that pass the filter. A WHERE condition is
    /// evaluated by the SQL executor over the rows as a derived table, so it may use
    /// any expression on either column, as in MySQL.
    fn send_show_rows(
        &mut self,
        rows: Vec<(String, Value)>,
        filter: ShowFilter,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let keep: Option<std::collections::HashSet<String>> = match filter {
            ShowFilter::All => None,
            ShowFilter::Like(p) => Some(
                rows.iter()
                    .filter(|(name, _)| {
                        strata_sql::like(
                            name.as_bytes(),
                            p.as_bytes(),
                            b'\\',
                            strata_types::Collation::GeneralCi,
                        )
                    })
                    .map(|(name, _)| name.clone())
                    .collect(),
            ),
            ShowFilter::Where(cond) => {
                let names = ["Variable_name".to_string(), "Value".to_string()];
                let table: Vec<Vec<Value>> = rows
                    .iter()
                    .map(|(name, v)| vec![Value::str(name), v.clone()])
                    .collect();
                // Both columns are text, as MySQL's.
                let passing = self.rows_passing(&names, &[false, false], &table, &cond)?;
                Some(
                    rows.iter()
                        .enumerate()
                        .filter(|(n, _)| passing.contains(n))
                        .map(|(_, (name, _))| name.clone())
                        .collect(),
                )
            }
        };
        out.columns(&[text_col("Variable_name"), text_col("Value")])?;
        for (name, value) in rows {
            if keep.as_ref().is_none_or(|k| k.contains(&name)) {
                out.row(&[Value::str(&name), value])?;
            }
        }
        out.end(&EndInfo::default())
    }

    /// LOCK TABLES t [AS a] READ [LOCAL] | [LOW_PRIORITY] WRITE, ...
    fn lock_tables(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        self.locked = None;
        let w = strata_sql::text::words(sql);
        let mut i = 1;
        if w.get(i)
            .is_some_and(|x| x.eq_ignore_ascii_case("tables") || x.eq_ignore_ascii_case("table"))
        {
            i += 1;
        }
        let mut want: Vec<(String, String, LockMode)> = Vec::new();
        while i < w.len() {
            let mut name = w[i].clone();
            let mut db = self.current_db.clone();
            i += 1;
            if w.get(i).is_some_and(|x| x == ".") {
                db = Some(name);
                name = w.get(i + 1).cloned().unwrap_or_default();
                i += 2;
            }
            if w.get(i).is_some_and(|x| x.eq_ignore_ascii_case("as")) {
                i += 2;
            } else if w.get(i).is_some_and(|x| {
                !matches!(
                    x.to_ascii_uppercase().as_str(),
                    "READ" | "WRITE" | "LOW_PRIORITY"
                )
            }) {
                i += 1;
            }
            let mut mode = None;
            while i < w.len() && w[i] != "," {
                match w[i].to_ascii_uppercase().as_str() {
                    "READ" => mode = Some(LockMode::Read),
                    "WRITE" => mode = Some(LockMode::Write),
                    _ => {}
                }
                i += 1;
            }
            i += 1;
            let db = db.ok_or(Error::NoDatabaseSelected)?;
            let mode = mode.ok_or_else(|| Error::Syntax(sql.into()))?;
            want.push((db, name, mode));
        }
        want.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let mut map: HashMap<(String, String), LockMode> = HashMap::new();
        for (db, name, mode) in &want {
            let e = map.entry((db.clone(), name.clone())).or_insert(*mode);
            if *mode == LockMode::Write {
                *e = LockMode::Write;
            }
        }
        let mut keys: Vec<_> = map.iter().map(|(k, m)| (k.clone(), *m)).collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        // Metadata locks first, as MySQL's: SHARED_READ_ONLY for READ, SHARED_NO_READ_
        // WRITE for WRITE (with the global and schema intention locks a writer takes),
        // held until UNLOCK TABLES; then the engines' table locks.
        self.mdl.release(MdlDuration::LockTables);
        let mut reqs = Vec::new();
        for ((db, name), mode) in &keys {
            let m = if *mode == LockMode::Write {
                reqs.push(MdlRequest::new(
                    MdlKey::global(),
                    MdlMode::IntentionExclusive,
                ));
                reqs.push(MdlRequest::new(
                    MdlKey::schema(db),
                    MdlMode::IntentionExclusive,
                ));
                MdlMode::SharedNoReadWrite
            } else {
                MdlMode::SharedReadOnly
            };
            reqs.push(MdlRequest::new(MdlKey::table(db, name), m));
        }
        strata_sql::mdl::normalize(&mut reqs);
        self.mdl.acquire(&reqs, MdlDuration::LockTables)?;
        let mut guards = Vec::new();
        for ((db, name), mode) in keys {
            // The `mysql` tables are computed (their lock is none); locking them lets
            // a dump read them as it reads every other database.
            let t = if strata_sql::catalog::systables::is_account_table(&db, &name) {
                strata_sql::catalog::systables::mysql_table(&name, None)
            } else {
                self.server.catalog.table(&db, &name)
            };
            let t = match t {
                Ok(t) => t,
                Err(e) => {
                    self.mdl.release(MdlDuration::LockTables);
                    return Err(e);
                }
            };
            guards.push(t.lock(mode));
        }
        self.locked = Some((map, guards));
        out.ok(&OkInfo::default())
    }

    /// FLUSH [LOCAL | NO_WRITE_TO_BINLOG] TABLES WITH READ LOCK: the global read lock.
    /// It waits for running writes and DDL (their global intention locks), flushes,
    /// then takes the commit lock, so until UNLOCK TABLES no other session writes,
    /// changes the schema or commits a transaction that wrote. Not with LOCK TABLES in
    /// effect (1192).
    fn flush_with_read_lock(&mut self, w: &[String], out: &mut dyn QueryOutput) -> Result<()> {
        let u: Vec<String> = w.iter().map(|x| x.to_ascii_uppercase()).collect();
        let mut i = 1;
        if u.get(i)
            .is_some_and(|x| x == "LOCAL" || x == "NO_WRITE_TO_BINLOG")
        {
            i += 1;
        }
        let global = matches!(
            &u[i..],
            [t, a, b, c] if (t == "TABLES" || t == "TABLE") && a == "WITH" && b == "READ" && c == "LOCK"
        );
        if !global {
            return Err(Error::NotSupported(
                "FLUSH TABLES tbl_name ... WITH READ LOCK".into(),
            ));
        }
        if self.locked.is_some() {
            return Err(Error::LockedTablesOrActiveTransaction);
        }
        self.commit_open()?;
        self.mdl.acquire(
            &[MdlRequest::new(MdlKey::global(), MdlMode::Shared)],
            MdlDuration::GlobalReadLock,
        )?;
        let flushed = self.server.catalog.flush().and_then(|()| {
            self.mdl.acquire(
                &[MdlRequest::new(MdlKey::commit(), MdlMode::Shared)],
                MdlDuration::GlobalReadLock,
            )
        });
        if let Err(e) = flushed {
            self.mdl.release(MdlDuration::GlobalReadLock);
            return Err(e);
        }
        out.ok(&OkInfo::default())
    }

    /// ANALYZE/OPTIMIZE/CHECK/REPAIR TABLE: MySQL's four-column report per table.
    fn table_maintenance(&mut self, op: &str, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let w = strata_sql::text::words(sql);
        let mut names = Vec::new();
        let mut i = 2;
        while i < w.len() {
            if w[i] == "," {
                i += 1;
                continue;
            }
            let (db, t) = if w.get(i + 1).is_some_and(|x| x == ".") {
                let r = (w[i].clone(), w.get(i + 2).cloned().unwrap_or_default());
                i += 3;
                r
            } else {
                let r = (
                    self.current_db.clone().ok_or(Error::NoDatabaseSelected)?,
                    w[i].clone(),
                );
                i += 1;
                r
            };
            if [
                "QUICK", "FAST", "MEDIUM", "EXTENDED", "CHANGED", "FOR", "UPGRADE",
            ]
            .contains(&t.to_ascii_uppercase().as_str())
            {
                continue;
            }
            names.push((db, t));
        }
        // MySQL commits the open transaction before these statements; each then runs
        // in a transaction of its own.
        self.commit_open()?;
        self.in_transaction(true, |s, txn| s.maintain_tables(op, &names, txn, out))
    }

    /// The report of ANALYZE/OPTIMIZE/CHECK/REPAIR: per table a `status OK` row, or an
    /// `error` row with the message followed by `status Operation failed`, as MySQL
    /// writes it.
    fn maintain_tables(
        &mut self,
        op: &str,
        names: &[(String, String)],
        txn: &Txn,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let cols = ["Table", "Op", "Msg_type", "Msg_text"].map(text_col);
        out.columns(&cols)?;
        let op_l = op.to_ascii_lowercase();
        for (db, t) in names {
            let full = format!("{db}.{t}");
            // A shared metadata lock for the rest of the statement: no DDL changes the
            // table while it is checked.
            let locked = if self.locked.is_some() {
                Ok(())
            } else {
                self.mdl.acquire(
                    &[MdlRequest::new(MdlKey::table(db, t), MdlMode::SharedRead)],
                    MdlDuration::Transaction,
                )
            };
            let r = locked
                .and_then(|()| self.server.catalog.table(db, t))
                .and_then(|table| {
                    let _lock = table.lock(LockMode::Read);
                    if op_l == "check" {
                        table.check(txn)
                    } else {
                        // ANALYZE (and OPTIMIZE) refresh the planner's statistics.
                        self.server.catalog.stats().forget(&table);
                        table.flush()
                    }
                });
            let mut row = |kind: &str, msg: &str| {
                out.row(&[
                    Value::str(&full),
                    Value::str(&op_l),
                    Value::str(kind),
                    Value::str(msg),
                ])
            };
            match r {
                Ok(()) => row("status", "OK")?,
                Err(e) => {
                    // A missing table is the statement's "Error" (capitalized, as in
                    // MySQL); a table that fails its check gets the engine's "error".
                    let kind = match e {
                        Error::NoSuchTable { .. } | Error::UnknownDatabase(_) => "Error",
                        _ => "error",
                    };
                    row(kind, &e.to_string())?;
                    row("status", "Operation failed")?;
                }
            }
        }
        out.end(&EndInfo::default())
    }

    /// COM_STMT_PREPARE: returns (id, parameter count, result columns).
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, u16, Vec<ColumnMeta>)> {
        let in_mode = text::to_default_mode(sql, self.sql_mode);
        let sql: &str = &in_mode.text;
        let expanded = text::expand_version_comments(sql);
        let sql = expanded.as_deref().unwrap_or(sql);
        let sql = sql.trim().trim_end_matches(';').trim();
        let first = text::first_word(sql);
        let id = self.next_statement_id;
        if matches!(
            first.as_str(),
            "PREPARE" | "EXECUTE" | "DEALLOCATE" | "LOAD"
        ) {
            // As MySQL: SQL-level prepared statements cannot themselves be prepared.
            return Err(Error::UnsupportedPs);
        }
        let session_owned = matches!(
            first.as_str(),
            "BEGIN"
                | "SAVEPOINT"
                | "RELEASE"
                | "START"
                | "COMMIT"
                | "ROLLBACK"
                | "SET"
                | "USE"
                | "SHOW"
                | "DESCRIBE"
                | "DESC"
                | "LOCK"
                | "UNLOCK"
                | "FLUSH"
                | "DO"
                | "ANALYZE"
                | "OPTIMIZE"
                | "CHECK"
                | "REPAIR"
        );
        let (text, params) = text::number_placeholders(sql);
        let entry = if session_owned {
            if params > 0 {
                return Err(Error::UnsupportedPs);
            }
            (PreparedStmt::Text(Arc::from(sql)), 0, vec![])
        } else {
            let mut stmts = strata_sql::parse(&text).map_err(|e| match e {
                // Quote the client's text, not our numbered placeholders.
                Error::SyntaxAt { near, line } => Error::SyntaxAt {
                    near: text::unnumber_placeholders(&near),
                    line,
                },
                e => e,
            })?;
            if stmts.len() != 1 {
                return Err(Error::Syntax(sql.chars().take(80).collect()));
            }
            let stmt = stmts.remove(0);
            let now = self.now();
            let env = SessionEnv::new(self, now);
            let scratch = Txn::default();
            let cx = self.exec_ctx(&env, &scratch)?;
            let p = strata_sql::prepare(stmt, &text, params, &cx)?;
            let cols = p.columns.clone();
            (PreparedStmt::Sql(Arc::new(p)), params, cols)
        };
        self.next_statement_id = self.next_statement_id.wrapping_add(1).max(1);
        let (stmt, params, cols) = entry;
        self.reserve_prepared_statement()?;
        if self.prepared.insert(id, stmt).is_some() {
            self.release_prepared_statements(1);
        }
        Ok((id, params.min(u16::MAX as usize) as u16, cols))
    }

    /// COM_STMT_EXECUTE.
    pub fn execute(&mut self, id: u32, params: &[Value], out: &mut dyn QueryOutput) -> Result<()> {
        self.server.questions.fetch_add(1, Ordering::Relaxed);
        // One lookup: the entry is shared with the process list and kept for the run.
        let stmt = match self.prepared.get(&id) {
            Some(PreparedStmt::Text(t)) => PreparedStmt::Text(t.clone()),
            Some(PreparedStmt::Sql(p)) => PreparedStmt::Sql(p.clone()),
            None => {
                return Err(Error::Internal(format!(
                    "Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"
                )))
            }
        };
        let info = match &stmt {
            PreparedStmt::Text(t) => {
                self.start_statement(t);
                processlist::Info::Text(t.clone())
            }
            PreparedStmt::Sql(p) => {
                self.start_statement(&p.source);
                processlist::Info::Prepared(p.clone())
            }
        };
        self.process.begin("Execute", info);
        let r = if self.gtid_spec.assigned() {
            let text = match &stmt {
                PreparedStmt::Text(t) => t.to_string(),
                PreparedStmt::Sql(p) => p.source.clone(),
            };
            self.under_gtid_next(&text, out, |s, out| s.execute_statement(stmt, params, out))
        } else {
            self.execute_statement(stmt, params, out)
        };
        self.process.end();
        r
    }

    /// A statement starts: a KILL QUERY aimed at the previous one is forgotten, and a
    /// SELECT gets `max_execution_time` (MySQL limits read-only SELECTs only).
    fn start_statement(&self, sql: &str) {
        // (The statement's first word is looked at only when a limit is set: the
        // common path allocates nothing here.)
        let limit = (!self.max_execution_time.is_zero()
            && matches!(
                text::first_word(sql).as_str(),
                "SELECT" | "WITH" | "(" | "TABLE"
            ))
        .then_some(self.max_execution_time);
        self.process.interrupt.start_statement(limit);
    }

    /// Whether the connection must close now (it was killed).
    pub fn closing(&self) -> bool {
        self.closing || self.process.interrupt.connection_killed()
    }

    /// The protocol layer's view of this connection: the client's host, and how to
    /// close its socket (KILL CONNECTION from another session).
    pub fn attach(&self, host: String, closer: processlist::Closer) {
        self.process.attach(host, closer);
    }

    /// The connection runs TLS: its protocol version and cipher (SHOW STATUS
    /// `Ssl_version`, `Ssl_cipher`).
    pub fn set_tls(&mut self, version: &str, cipher: &str) {
        self.tls = (version.to_string(), cipher.to_string());
    }

    fn execute_statement(
        &mut self,
        stmt: PreparedStmt,
        params: &[Value],
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        match stmt {
            PreparedStmt::Text(t) => {
                let r = self.run(&t, out);
                self.end_statement_locks();
                r
            }
            PreparedStmt::Sql(p) => {
                self.clear_diagnostics();
                let p = if reads_user_variables(&p.source) {
                    match self.rebind(&p) {
                        Ok(p) => p,
                        Err(e) => {
                            self.note_error(&e);
                            return Err(e);
                        }
                    }
                } else {
                    p
                };
                self.statement_rows = 0;
                let r = self.execute_prepared(&p, params, out);
                self.end_statement_locks();
                self.settle_insert_id_arg();
                self.settle_row_count(r.is_ok());
                if let Err(e) = &r {
                    self.note_error(e);
                }
                r
            }
        }
    }

    pub fn close_statement(&mut self, id: u32) {
        if self.prepared.remove(&id).is_some() {
            self.release_prepared_statements(1);
        }
    }

    /// Counts one more prepared statement server-wide, or 1461 when
    /// `max_prepared_stmt_count` are held already.
    fn reserve_prepared_statement(&self) -> Result<()> {
        let max = self
            .server
            .globals
            .get("max_prepared_stmt_count")
            .to_i64()
            .unwrap_or(16382)
            .max(0) as u64;
        self.server
            .prepared_statements
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .map(|_| ())
            .map_err(|_| Error::TooManyPreparedStatements(max))
    }

    fn release_prepared_statements(&self, n: usize) {
        self.server
            .prepared_statements
            .fetch_sub(n as u64, Ordering::AcqRel);
    }

    /// COM_FIELD_LIST: the columns of a table in the current database.
    pub fn field_list(&mut self, table: &str) -> Result<Vec<ColumnMeta>> {
        let db = self.current_db.clone().ok_or(Error::NoDatabaseSelected)?;
        strata_sql::table_columns(&db, table, &self.server.catalog)
    }
}

/// A result's end carries the statement's warning count (the EOF packet's), which only
/// the session knows.
struct EndWithWarnings<'a> {
    out: &'a mut dyn QueryOutput,
    diagnostics: &'a std::sync::Mutex<diagnostics::Diagnostics>,
}

impl QueryOutput for EndWithWarnings<'_> {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<()> {
        self.out.columns(cols)
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.out.row(row)
    }
    fn end(&mut self, info: &EndInfo) -> Result<()> {
        let n = self.diagnostics.lock().map(|d| d.len()).unwrap_or(0);
        self.out.end(&EndInfo {
            warnings: info.warnings.max(n.min(u16::MAX as usize) as u16),
        })
    }
    fn ok(&mut self, info: &OkInfo) -> Result<()> {
        self.out.ok(info)
    }
    fn next_result_set(&mut self) -> Result<bool> {
        self.out.next_result_set()
    }
    fn takes_more_results(&self) -> bool {
        self.out.takes_more_results()
    }
    fn local_infile(&mut self, name: &str) -> Result<Option<Box<dyn std::io::Read + '_>>> {
        self.out.local_infile(name)
    }
}

/// A plan that reads `@name` is typed by the variables' values when it was bound (as
/// MySQL types them when a statement is prepared), so it is bound again for each
/// execution: the values, and so the result's column types, may have changed. Text that
/// merely holds an `@` in a string literal only costs a needless rebind.
fn reads_user_variables(source: &str) -> bool {
    let b = source.as_bytes();
    (0..b.len())
        .any(|i| b[i] == b'@' && b.get(i + 1) != Some(&b'@') && (i == 0 || b[i - 1] != b'@'))
}

/// Whether a statement's text names information_schema or the `mysql` schema: their
/// rows depend on the session's account and roles (and the account store), so a plan
/// reading them is not kept in the plan cache. A table whose name merely contains
/// `mysql` only costs a bind.
fn reads_system_tables(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.contains("information_schema") || k.contains("mysql")
}

/// A variable declared unsigned in MySQL (an integer one that cannot be negative, bar
/// the 0-only stand-ins for booleans) reads as an unsigned integer, so `SELECT
/// @@max_allowed_packet` is a BIGINT UNSIGNED column as in MySQL.
fn unsigned_if_declared(def: &VarDef, v: Value) -> Value {
    match (def.kind, &v) {
        (Kind::Int { min, max }, Value::Int(i)) if min >= 0 && max > 0 && *i >= 0 => {
            Value::UInt(*i as u64)
        }
        _ => v,
    }
}

/// `@@transaction_isolation` / `@@transaction_read_only` (or their tx_ names) with no
/// scope: MySQL applies such an assignment to the next transaction only.
fn next_transaction_only(lhs: &str) -> bool {
    let l = lhs.trim().to_ascii_lowercase();
    let Some(name) = l.strip_prefix("@@") else {
        return false;
    };
    if ["global.", "session.", "local."]
        .iter()
        .any(|p| name.starts_with(p))
    {
        return false;
    }
    matches!(
        vars::canonical(name.trim_matches('`')),
        "transaction_isolation" | "transaction_read_only"
    )
}

/// `+05:30` / `-08:00` to seconds.
fn parse_offset(tz: &str) -> Option<i64> {
    let t = tz.trim();
    let (sign, rest) = match t.as_bytes().first()? {
        b'+' => (1, &t[1..]),
        b'-' => (-1, &t[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':')?;
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    if h > 14 || m > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60))
}

fn is_bare_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ',')
        && !s.chars().next().is_some_and(|c| c.is_ascii_digit())
        && !matches!(s.to_ascii_uppercase().as_str(), "NULL" | "TRUE" | "FALSE")
}

/// Splits `a=1, b=(1,2), c='x,y'` at top-level commas.
fn split_top_level_commas(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    let b: Vec<(usize, char)> = s.char_indices().collect();
    let mut i = 0;
    while i < b.len() {
        let (pos, c) = b[i];
        match quote {
            Some(q) => {
                if c == '\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => quote = Some(c),
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(s[start..pos].trim());
                    start = pos + 1;
                }
                _ => {}
            },
        }
        i += 1;
    }
    out.push(s[start..].trim());
    out.into_iter().filter(|p| !p.is_empty()).collect()
}

/// `lhs = rhs` or `lhs := rhs`.
fn split_assignment(s: &str) -> Option<(&str, &str)> {
    if let Some(i) = s.find(":=") {
        return Some((s[..i].trim(), s[i + 2..].trim()));
    }
    let i = s.find('=')?;
    Some((s[..i].trim(), s[i + 1..].trim()))
}

/// Which value a SET of a system variable changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SetScope {
    Session,
    Global,
    /// SET PERSIST: the global value, and the persisted file.
    Persist,
    /// SET PERSIST_ONLY: the persisted file only (applied at the next startup).
    PersistOnly,
    /// `SET @name = …`.
    User,
}

/// The target of a SET: the name and what it changes.
fn parse_set_target(lhs: &str) -> Result<(String, SetScope)> {
    let l = lhs.trim();
    let lower = l.to_ascii_lowercase();
    let strip = |s: &str| s.trim().trim_matches('`').to_string();
    for (prefix, scope) in [
        ("@@global.", SetScope::Global),
        ("@@persist.", SetScope::Persist),
        ("@@persist_only.", SetScope::PersistOnly),
        ("@@session.", SetScope::Session),
        ("@@local.", SetScope::Session),
        ("@@", SetScope::Session),
    ] {
        if let Some(rest) = lower.strip_prefix(prefix) {
            return Ok((strip(rest), scope));
        }
    }
    if let Some(rest) = l.strip_prefix('@') {
        return Ok((
            rest.trim_matches('`').trim_matches('\'').to_string(),
            SetScope::User,
        ));
    }
    for (prefix, scope) in [
        ("global ", SetScope::Global),
        ("persist ", SetScope::Persist),
        ("persist_only ", SetScope::PersistOnly),
        ("session ", SetScope::Session),
        ("local ", SetScope::Session),
    ] {
        if let Some(rest) = lower.strip_prefix(prefix) {
            return Ok((strip(rest), scope));
        }
    }
    Ok((strip(&lower), SetScope::Session))
}

/// Sets `character_set_database` and `collation_database` of a session's variables to
/// the default of its current database `db` (the server's without one).
fn follow_collation(vars: &mut HashMap<&'static str, Value>, server: &Server, db: Option<&str>) {
    let c = db
        .and_then(|d| server.catalog.database_collation(d))
        .unwrap_or_default();
    vars.insert("collation_database", Value::str(c.name()));
    vars.insert("character_set_database", Value::str(c.charset_name()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_parsing_helpers() {
        assert_eq!(
            split_top_level_commas("a=1, b=(1,2), c='x,y'"),
            vec!["a=1", "b=(1,2)", "c='x,y'"]
        );
        assert_eq!(
            parse_set_target("@@GLOBAL.max_allowed_packet").unwrap(),
            ("max_allowed_packet".into(), SetScope::Global)
        );
        assert_eq!(
            parse_set_target("SESSION sql_mode").unwrap(),
            ("sql_mode".into(), SetScope::Session)
        );
        assert_eq!(
            parse_set_target("PERSIST_ONLY wait_timeout").unwrap(),
            ("wait_timeout".into(), SetScope::PersistOnly)
        );
        assert_eq!(
            parse_set_target("@@persist.wait_timeout").unwrap(),
            ("wait_timeout".into(), SetScope::Persist)
        );
        assert_eq!(
            parse_set_target("@x").unwrap(),
            ("x".into(), SetScope::User)
        );
        assert!(reads_user_variables("SELECT @v"));
        assert!(!reads_user_variables(
            "SELECT @@autocommit, @@session.sql_mode"
        ));
        assert_eq!(parse_offset("+05:30"), Some(19800));
        assert!(is_bare_word("ON"));
        assert!(!is_bare_word("'ON'"));
    }
}
