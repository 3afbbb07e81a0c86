//! Sessions: one per client connection, holding what MySQL keeps per connection — the
//! current database, session variables, user variables, transaction state, prepared
//! statements, LOCK TABLES locks, LAST_INSERT_ID — and dispatching each statement.
//!
//! The life of a COM_QUERY here: [`Session::query`] splits the text into statements
//! (`sql::lex::split_statements`); for each, [`Session::run`] first tries the plan cache
//! (`sql::lex::normalize` turns `... WHERE id=5023` into `... WHERE id=?1` + `[5023]`;
//! a hit skips parsing and binding), then the statements the session owns (SET, SHOW
//! VARIABLES/STATUS, USE, BEGIN/COMMIT/ROLLBACK, LOCK/UNLOCK TABLES, FLUSH), then SHOW
//! and DESCRIBE (`sql::show`), and finally parses with sqlparser, binds
//! (`sql::prepare`) and runs (`sql::execute`) everything else.
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

pub mod vars;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata_engine::{Isolation, LockMode, TableLock, Txn};
use strata_sql::lex;
use strata_sql::{Catalog, Env, ExecCtx, Outcome, Prepared, WarnLevel, Warning};
use strata_types::{
    ColumnMeta, DateTime, EndInfo, Error, FieldType, OkInfo, QueryOutput, Result, Value,
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
}

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
        let engine_display = strata_sql::ddl::engine_display(&config.default_engine);
        let globals = Globals::new(vec![
            ("auto_increment_increment", i(1)),
            ("auto_increment_offset", i(1)),
            ("autocommit", i(1)),
            ("character_set_client", s("utf8mb4")),
            ("character_set_connection", s("utf8mb4")),
            ("character_set_database", s("utf8mb4")),
            ("character_set_results", s("utf8mb4")),
            ("character_set_server", s("utf8mb4")),
            ("collation_connection", s("utf8mb4_general_ci")),
            ("collation_database", s("utf8mb4_general_ci")),
            ("collation_server", s("utf8mb4_general_ci")),
            ("connect_timeout", i(10)),
            ("cte_max_recursion_depth", i(1000)),
            ("datadir", s(&config.datadir.display().to_string())),
            ("default_storage_engine", s(engine_display)),
            ("div_precision_increment", i(4)),
            ("explicit_defaults_for_timestamp", i(1)),
            ("foreign_key_checks", i(1)),
            ("group_concat_max_len", i(1024)),
            ("have_ssl", s("DISABLED")),
            ("hostname", s(&config.hostname)),
            ("init_connect", s("")),
            ("innodb_lock_wait_timeout", i(50)),
            ("interactive_timeout", i(28800)),
            ("key_buffer_size", i(config.key_buffer_size as i64)),
            ("license", s("Apache-2.0")),
            ("lower_case_table_names", i(0)),
            ("max_allowed_packet", i(config.max_allowed_packet as i64)),
            ("max_connections", i(config.max_connections as i64)),
            ("max_user_connections", i(0)),
            ("net_buffer_length", i(16384)),
            ("net_read_timeout", i(30)),
            ("net_write_timeout", i(60)),
            ("performance_schema", i(0)),
            ("port", i(config.port as i64)),
            ("protocol_version", i(10)),
            ("query_cache_size", i(0)),
            ("query_cache_type", s("OFF")),
            ("server_id", i(1)),
            ("socket", s("")),
            ("sort_buffer_size", i(config.sort_buffer_size as i64)),
            ("sql_auto_is_null", i(0)),
            ("sql_mode", s(&config.sql_mode)),
            ("sql_notes", i(1)),
            ("sql_quote_show_create", i(1)),
            ("sql_safe_updates", i(0)),
            ("sql_select_limit", Value::UInt(u64::MAX)),
            ("system_time_zone", s("UTC")),
            ("time_zone", s("SYSTEM")),
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
        Server {
            catalog,
            globals,
            config,
            started: Instant::now(),
            questions: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            threads_connected: AtomicU64::new(0),
            com_counts: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    pub fn uptime(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    fn count(&self, com: Com) {
        self.com_counts[com as usize].fetch_add(1, Ordering::Relaxed);
    }
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
    Text(String),
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
    user_vars: HashMap<String, Value>,
    last_insert_id: u64,
    found_rows: u64,
    /// The diagnostics area: the notes, warnings and error of the last statement (SHOW
    /// WARNINGS). A lock only because expressions add to it through a shared reference.
    diagnostics: std::sync::Mutex<Vec<Warning>>,
    /// The open transaction: begun by BEGIN, or by a statement under autocommit=0.
    /// None between transactions (and under autocommit, where a statement's own Txn
    /// lives only as long as the statement).
    txn: Option<Txn>,
    /// SET TRANSACTION ISOLATION LEVEL without GLOBAL/SESSION: the next transaction's
    /// level, used once.
    next_isolation: Option<Isolation>,
    prepared: HashMap<u32, PreparedStmt>,
    next_statement_id: u32,
    plan_cache: HashMap<String, Arc<Prepared>>,
    locked: Option<LockedTables>,
    /// Derived from variables, recomputed after every SET so that the statement path
    /// does no variable lookups: strict sql_mode, default engine, time-zone offset.
    strict_mode: bool,
    engine: String,
    tz_offset: Option<i64>,
    sort_buffer: usize,
    autocommit_on: bool,
    isolation: Isolation,
    lock_wait_timeout: Duration,
    /// wait_timeout, net_read_timeout, net_write_timeout, for the wire layer.
    net_timeouts: NetTimeouts,
    /// Off only in tests that compare the cached path with the general one.
    plan_cache_enabled: bool,
}

/// The view of a session an expression evaluates against.
struct SessionEnv<'a> {
    s: &'a Session,
    now: DateTime,
}

impl Env for SessionEnv<'_> {
    fn system_variable(&self, name: &str, global: bool) -> Result<Value> {
        self.s.get_variable(name, global)
    }
    fn user_variable(&self, name: &str) -> Value {
        self.s.user_vars.get(name).cloned().unwrap_or(Value::Null)
    }
    fn last_insert_id(&self) -> u64 {
        self.s.last_insert_id
    }
    fn database(&self) -> Option<String> {
        self.s.current_db.clone()
    }
    fn user(&self) -> String {
        self.s.user.clone()
    }
    fn connection_id(&self) -> u64 {
        self.s.connection_id as u64
    }
    fn now(&self) -> DateTime {
        self.now
    }
    fn found_rows(&self) -> u64 {
        self.s.found_rows
    }
    fn warn(&self, level: WarnLevel, code: u16, message: String) {
        if let Ok(mut d) = self.s.diagnostics.lock() {
            // MySQL keeps max_error_count (64) entries.
            if d.len() < 64 {
                d.push(Warning {
                    level,
                    code,
                    message,
                });
            }
        }
    }
    fn warnings(&self) -> Vec<Warning> {
        self.s
            .diagnostics
            .lock()
            .map(|d| d.clone())
            .unwrap_or_default()
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
        let mut s = Session {
            server,
            connection_id,
            user: user.to_string(),
            current_db: None,
            vars: HashMap::new(),
            user_vars: HashMap::new(),
            last_insert_id: 0,
            found_rows: 0,
            diagnostics: Default::default(),
            txn: None,
            next_isolation: None,
            prepared: HashMap::new(),
            next_statement_id: 1,
            plan_cache: HashMap::new(),
            locked: None,
            strict_mode: true,
            engine: String::new(),
            tz_offset: None,
            sort_buffer: 2 << 20,
            autocommit_on: true,
            isolation: Isolation::RepeatableRead,
            lock_wait_timeout: Duration::from_secs(50),
            net_timeouts: NetTimeouts::default(),
            plan_cache_enabled: true,
        };
        // A session keeps the timeouts in force when it connected: SET GLOBAL changes
        // them for new connections only, as in MySQL.
        for name in CONNECT_TIME_VARS {
            s.vars.insert(name, s.server.globals.get(name));
        }
        s.refresh_derived()?;
        if let Some(db) = db.filter(|d| !d.is_empty()) {
            s.use_database(db)?;
        }
        s.server.connections.fetch_add(1, Ordering::Relaxed);
        s.server.threads_connected.fetch_add(1, Ordering::Relaxed);
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

    fn autocommit(&self) -> bool {
        self.autocommit_on
    }

    /// Recomputes the values derived from variables (after SET, reset, connect).
    fn refresh_derived(&mut self) -> Result<()> {
        let mode = self.get_variable("sql_mode", false)?.to_text();
        self.strict_mode = mode.contains("STRICT_TRANS_TABLES")
            || mode.contains("STRICT_ALL_TABLES")
            || mode.contains("TRADITIONAL");
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
        self.engine = strata_sql::ddl::engine_name(&v, &available)?;
        let tz = self.get_variable("time_zone", false)?.to_text();
        self.tz_offset = parse_offset(&tz);
        self.sort_buffer = self
            .get_variable("sort_buffer_size", false)?
            .to_i64()
            .unwrap_or(2 << 20) as usize;
        self.autocommit_on = self.get_variable("autocommit", false)?.truth() != Some(false);
        let iso = self.get_variable("transaction_isolation", false)?.to_text();
        self.isolation = Isolation::parse(&iso).unwrap_or(Isolation::RepeatableRead);
        let secs = self
            .get_variable("innodb_lock_wait_timeout", false)?
            .to_i64()
            .unwrap_or(50);
        self.lock_wait_timeout = Duration::from_secs(secs.max(1) as u64);
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

    /// A new transaction with the session's isolation level (or the one SET TRANSACTION
    /// chose for the next transaction) and lock wait timeout.
    fn new_txn(&mut self) -> Txn {
        let isolation = self.next_isolation.take().unwrap_or(self.isolation);
        Txn::new(isolation, self.lock_wait_timeout)
    }

    /// Commits the open transaction, if any (COMMIT, and MySQL's implicit commits).
    fn commit_open(&mut self) -> Result<()> {
        match self.txn.take() {
            Some(t) => t.commit(),
            None => Ok(()),
        }
    }

    /// Rolls the open transaction back, if any. Changes to non-transactional tables
    /// stay, as on MyISAM.
    fn rollback_open(&mut self) -> Result<()> {
        match self.txn.take() {
            Some(t) => t.rollback(),
            None => Ok(()),
        }
    }

    /// Runs one statement that reads or writes tables inside a transaction: the open
    /// one, or a new one. `own` gives the statement a transaction of its own that ends
    /// with it whatever autocommit says (DDL, after the implicit commit).
    fn in_transaction<T>(
        &mut self,
        own: bool,
        f: impl FnOnce(&mut Session, &Txn) -> Result<T>,
    ) -> Result<T> {
        let (txn, opened) = match self.txn.take().filter(|_| !own) {
            Some(t) => (t, false),
            None => (self.new_txn(), true),
        };
        // A transaction begun here outlives the statement only under autocommit=0.
        let keep = !opened || (!own && !self.autocommit());
        txn.begin_statement();
        let r = f(self, &txn);
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
                    txn.commit()?;
                }
                Ok(v)
            }
            Err(Error::Deadlock) => {
                // The engine chose this transaction as the deadlock victim: all of it is
                // undone and the session is left outside a transaction, as InnoDB does.
                // The deadlock is what the client must see, not a rollback error.
                let _ = txn.rollback();
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
        let utc = DateTime::now();
        match self.tz_offset {
            Some(secs) => DateTime::from_unix(utc.to_unix() + secs, 0),
            None => utc,
        }
    }

    pub fn use_database(&mut self, db: &str) -> Result<()> {
        if !self.server.catalog.database_exists(db) {
            return Err(Error::UnknownDatabase(db.to_string()));
        }
        self.current_db = Some(db.to_string());
        Ok(())
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
            "last_insert_id" => return Ok(Value::UInt(self.last_insert_id)),
            "warning_count" | "error_count" => return Ok(Value::Int(0)),
            "timestamp" => return Ok(Value::Int(DateTime::now().to_unix())),
            _ => {}
        }
        if global {
            if def.scope == vars::Scope::Session {
                return Err(Error::VariableReadOnly(format!(
                    "{name}' is a SESSION variable and can't be used with SET GLOBAL or '@@global."
                )));
            }
            return Ok(self.server.globals.get(def.name));
        }
        if let Some(v) = self.vars.get(def.name) {
            return Ok(v.clone());
        }
        Ok(self.server.globals.get(def.name))
    }

    fn set_variable(&mut self, name: &str, global: bool, value: Option<Value>) -> Result<()> {
        let lname = name.to_ascii_lowercase();
        let key = vars::canonical(&lname).to_string();
        let Some(def): Option<&VarDef> = vars::lookup(&key) else {
            return self.set_engine_variable(name, &key, global, value);
        };
        if !def.dynamic {
            return Err(Error::VariableReadOnly(def.name.to_string()));
        }
        if key == "last_insert_id" {
            self.last_insert_id = value.and_then(|v| v.to_i64()).unwrap_or(0) as u64;
            return Ok(());
        }
        if global && def.scope == vars::Scope::Session {
            return Err(Error::VariableReadOnly(def.name.to_string()));
        }
        if !global && def.scope == vars::Scope::Global {
            return Err(Error::VariableIsGlobal(def.name.to_string()));
        }
        if key == "max_allowed_packet" && !global {
            return Err(Error::VariableReadOnly(format!(
                "{} (SESSION value; set GLOBAL instead)",
                def.name
            )));
        }
        let v = match value {
            None => {
                // DEFAULT: the global value for a session, the startup value for global.
                if global {
                    return Err(Error::NotSupported("SET GLOBAL ... = DEFAULT".into()));
                }
                self.vars.remove(def.name);
                return self.refresh_derived();
            }
            Some(v) => v,
        };
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
        let mut v = vars::normalize(def, &v)?;
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
            let stored = strata_sql::ddl::engine_name(&v.to_text(), &available)?;
            v = Value::str(strata_sql::ddl::engine_display(&stored));
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
        self.user_vars.clear();
        self.prepared.clear();
        self.plan_cache.clear();
        self.locked = None;
        // MySQL rolls back on reset; an engine error here has no statement to report
        // it to, and the transaction is gone either way.
        let _ = self.rollback_open();
        self.next_isolation = None;
        self.last_insert_id = 0;
        self.found_rows = 0;
        let _ = self.refresh_derived();
    }

    pub fn close(&mut self) {
        // A connection that ends with an open transaction rolls it back; there is no
        // client left to report an error to.
        let _ = self.rollback_open();
        self.locked = None;
        self.server
            .threads_connected
            .fetch_sub(1, Ordering::Relaxed);
    }

    fn exec_ctx<'a>(&'a self, env: &'a SessionEnv<'a>, txn: &'a Txn) -> Result<ExecCtx<'a>> {
        Ok(ExecCtx {
            catalog: &self.server.catalog,
            current_db: self.current_db.clone(),
            env,
            locked_tables: self.locked.as_ref().map(|l| &l.0),
            strict: self.strict_mode,
            default_engine: &self.engine,
            sort_buffer_size: self.sort_buffer,
            tmpdir: &self.server.config.tmpdir,
            txn,
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
        let pieces = if multi_statements {
            lex::split_statements(sql)
        } else {
            vec![sql.trim()]
        };
        if pieces.is_empty() {
            return Err(Error::Syntax(String::new()));
        }
        for (i, piece) in pieces.iter().enumerate() {
            if i > 0 {
                out.next_result()?;
            }
            self.run_with_diagnostics(piece, out)?;
        }
        Ok(())
    }

    /// Runs one statement with a fresh diagnostics area (SHOW WARNINGS and SHOW ERRORS
    /// look at the previous one instead), recording the error if it fails.
    fn run_with_diagnostics(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        if !lex::is_diagnostics_statement(sql) {
            self.clear_diagnostics();
        }
        let r = self.run(sql, out);
        if let Err(e) = &r {
            self.note_error(e);
        }
        r
    }

    fn clear_diagnostics(&self) {
        if let Ok(mut d) = self.diagnostics.lock() {
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
        if let Some(inner) = lex::unwrap_executable_comment(sql) {
            // A dump's version-gated statement; one gated out is a comment, done.
            sql = inner.trim().trim_end_matches(';').trim();
            if sql.is_empty() {
                return out.ok(&OkInfo::default());
            }
        }
        if sql.is_empty() {
            return Err(Error::Syntax(String::new()));
        }
        // 1. The plan cache, for statements that differ only in literals.
        if let Some((key, values)) = lex::normalize(sql)
            .filter(|(key, _)| self.plan_cache_enabled && key.len() <= PLAN_CACHE_MAX_KEY)
        {
            let cached = self.plan_cache.get(&key).cloned();
            let prepared = match cached {
                Some(p) if self.plan_is_current(&p) => Some(p),
                _ => match strata_sql::parse::parse(&key) {
                    Ok(mut stmts) if stmts.len() == 1 => {
                        let stmt = stmts.remove(0);
                        let now = self.now();
                        let env = SessionEnv { s: self, now };
                        // Binding reads no rows: a scratch transaction will do.
                        let scratch = Txn::default();
                        let cx = self.exec_ctx(&env, &scratch)?;
                        match strata_sql::prepare(stmt, &key, values.len(), &cx) {
                            Ok(p)
                                if !matches!(p.plan, strata_sql::Plan::Other(_))
                                    && !key.to_ascii_lowercase().contains("information_schema") =>
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
        let first = lex::first_word(sql);
        match first.as_str() {
            "SET" => return self.run_set(sql, out),
            "USE" => {
                let w = strata_sql::show::words(sql);
                let db = w.get(1).ok_or_else(|| Error::Syntax(sql.into()))?;
                self.use_database(db.trim_start_matches('\u{0}'))?;
                return out.ok(&OkInfo::default());
            }
            "BEGIN" | "START" => return self.begin(sql, out),
            "COMMIT" | "ROLLBACK" => return self.end_transaction(&first, sql, out),
            "LOCK" => {
                self.commit_open()?;
                return self.lock_tables(sql, out);
            }
            "UNLOCK" => {
                // UNLOCK TABLES commits only when LOCK TABLES was in effect, as in MySQL.
                if self.locked.is_some() {
                    self.commit_open()?;
                }
                self.locked = None;
                return out.ok(&OkInfo::default());
            }
            "FLUSH" => {
                let w = strata_sql::show::words(sql);
                if w.iter().any(|x| x.eq_ignore_ascii_case("lock")) {
                    return Err(Error::NotSupported("FLUSH TABLES WITH READ LOCK".into()));
                }
                self.commit_open()?;
                self.server.catalog.flush()?;
                return out.ok(&OkInfo::default());
            }
            "SHOW" => {
                let w = strata_sql::show::words(sql);
                let mut i = 1;
                let mut global = false;
                if w.get(i).is_some_and(|x| {
                    x.eq_ignore_ascii_case("global") || x.eq_ignore_ascii_case("session")
                }) {
                    global = w[i].eq_ignore_ascii_case("global");
                    i += 1;
                }
                let what = w.get(i).map(|x| x.to_ascii_uppercase()).unwrap_or_default();
                let pattern = if w.get(i + 1).is_some_and(|x| x.eq_ignore_ascii_case("like")) {
                    w.get(i + 2)
                        .map(|p| p.trim_start_matches('\u{0}').to_string())
                } else {
                    None
                };
                if what == "VARIABLES" {
                    return self.show_variables(global, pattern, out);
                }
                if what == "STATUS" {
                    return self.show_status(pattern, out);
                }
            }
            "ANALYZE" | "OPTIMIZE" | "CHECK" | "REPAIR" => {
                return self.table_maintenance(&first, sql, out)
            }
            "DO" => {
                let expr = sql[2..].trim();
                let now = self.now();
                let env = SessionEnv { s: self, now };
                strata_sql::eval_constant(expr, &env)?;
                return out.ok(&OkInfo::default());
            }
            "KILL" => return Err(Error::NotSupported("KILL".into())),
            "ALTER" => {
                // ALTER TABLE t DISABLE|ENABLE KEYS, which dumps wrap around their
                // inserts: index maintenance is never deferred here, so it only names
                // the table (a missing one is still 1146).
                let w = strata_sql::show::words(sql);
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
                let env = SessionEnv { s, now };
                let cx = s.exec_ctx(&env, txn)?;
                strata_sql::show::execute_show(sql, &cx, out)
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
        let (text, params) = lex::number_placeholders(sql);
        if params > 0 {
            return Err(Error::Syntax("?".into()));
        }
        let mut stmts = strata_sql::parse::parse(&text)?;
        if stmts.len() != 1 {
            return Err(Error::Syntax(sql.chars().take(80).collect()));
        }
        let stmt = stmts.remove(0);
        let now = self.now();
        let env = SessionEnv { s: self, now };
        let scratch = Txn::default();
        let cx = self.exec_ctx(&env, &scratch)?;
        let p = strata_sql::prepare(stmt, &text, 0, &cx)?;
        drop(cx);
        self.execute_prepared(&Arc::new(p), &[], out)
    }

    fn plan_is_current(&self, p: &Prepared) -> bool {
        p.catalog_version == self.server.catalog.version() && p.db == self.current_db
    }

    fn execute_prepared(
        &mut self,
        p: &Arc<Prepared>,
        params: &[Value],
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let p = if self.plan_is_current(p) {
            p.clone()
        } else {
            // The catalog changed (or USE switched databases) since binding: bind again.
            let now = self.now();
            let env = SessionEnv { s: self, now };
            let scratch = Txn::default();
            let cx = self.exec_ctx(&env, &scratch)?;
            Arc::new(strata_sql::prepare(
                p.statement.clone(),
                &p.source,
                p.params,
                &cx,
            )?)
        };
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
            // work is committed with it, so nothing is left open after it.
            self.commit_open()?;
            self.in_transaction(true, run)
        } else if p.reads_tables() {
            self.in_transaction(false, run)
        } else {
            self.outside_transaction(run)
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
        let env = SessionEnv { s: self, now };
        let mut cx = self.exec_ctx(&env, txn)?;
        let outcome: Outcome = strata_sql::execute(p, params, &mut cx, out)?;
        let new_db = cx.current_db.clone();
        drop(cx);
        if new_db != self.current_db {
            self.current_db = new_db;
        }
        if let Some(id) = outcome.generated_id {
            self.last_insert_id = id;
        }
        match outcome.ok {
            Some(mut info) => {
                info.warnings = info.warnings.max(self.warning_count());
                out.ok(&info)
            }
            None => {
                self.found_rows = outcome.rows_sent;
                Ok(())
            }
        }
    }

    /// BEGIN [WORK] / START TRANSACTION [READ ONLY | READ WRITE | WITH CONSISTENT
    /// SNAPSHOT], ...: commits the open transaction (MySQL's implicit commit) and opens
    /// a new one.
    fn begin(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let w: Vec<String> = strata_sql::show::words(sql)
            .into_iter()
            .map(|x| x.to_ascii_uppercase())
            .collect();
        let rest: &[String] = match w.first().map(String::as_str) {
            Some("START") if w.get(1).is_some_and(|x| x == "TRANSACTION") => &w[2..],
            Some("BEGIN") if w.len() == 1 || (w.len() == 2 && w[1] == "WORK") => &[],
            _ => return Err(Error::Syntax(sql.chars().take(80).collect())),
        };
        // The characteristics are accepted: the snapshot of a consistent read is taken
        // by the engine at the transaction's first read, and READ ONLY is not enforced.
        let mut i = 0;
        while i < rest.len() {
            match rest[i..] {
                [ref a, ref b, ..] if a == "READ" && (b == "ONLY" || b == "WRITE") => i += 2,
                [ref a, ref b, ref c, ..]
                    if a == "WITH" && b == "CONSISTENT" && c == "SNAPSHOT" =>
                {
                    i += 3
                }
                [ref a, ..] if a == "," && i > 0 => i += 1,
                _ => return Err(Error::Syntax(rest[i..].join(" "))),
            }
        }
        self.server.count(Com::Begin);
        self.commit_open()?;
        let txn = self.new_txn();
        self.txn = Some(txn);
        out.ok(&OkInfo::default())
    }

    /// COMMIT / ROLLBACK [WORK] [AND [NO] CHAIN] [[NO] RELEASE].
    fn end_transaction(&mut self, first: &str, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let w: Vec<String> = strata_sql::show::words(sql)
            .into_iter()
            .skip(1)
            .map(|x| x.to_ascii_uppercase())
            .collect();
        let mut rest: &[String] = &w;
        if rest.first().is_some_and(|x| x == "WORK") {
            rest = &rest[1..];
        }
        let mut chain = false;
        match rest {
            [] => {}
            [a, b] if a == "AND" && b == "CHAIN" => chain = true,
            [a, b, c] if a == "AND" && b == "NO" && c == "CHAIN" => {}
            [a, ..] if a == "TO" => {
                return Err(Error::NotSupported("ROLLBACK TO SAVEPOINT".into()))
            }
            _ if rest.iter().any(|x| x == "RELEASE") => {
                return Err(Error::NotSupported(format!("{first} ... RELEASE")))
            }
            _ => return Err(Error::Syntax(sql.chars().take(80).collect())),
        }
        if first == "COMMIT" {
            self.server.count(Com::Commit);
            self.commit_open()?;
        } else {
            self.server.count(Com::Rollback);
            // Only transactional engines undo anything: heap changes stay, as on MyISAM.
            self.rollback_open()?;
        }
        if chain {
            let txn = self.new_txn();
            self.txn = Some(txn);
        }
        out.ok(&OkInfo::default())
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
            let w = strata_sql::show::words(body);
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
        if upper.starts_with("TRANSACTION")
            || upper.starts_with("SESSION TRANSACTION")
            || upper.starts_with("GLOBAL TRANSACTION")
        {
            let global = upper.starts_with("GLOBAL");
            let next_only = upper.starts_with("TRANSACTION");
            if let Some(i) = upper.find("ISOLATION LEVEL") {
                let level = upper[i + 15..]
                    .trim()
                    .split(',')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .replace(' ', "-");
                if next_only {
                    // Without GLOBAL or SESSION the level is for the next transaction
                    // only, as in MySQL; the variable keeps its value.
                    let isolation =
                        Isolation::parse(&level).ok_or_else(|| Error::WrongValueForVariable {
                            name: "transaction_isolation".into(),
                            value: level.clone(),
                        })?;
                    self.next_isolation = Some(isolation);
                } else {
                    self.set_variable("transaction_isolation", global, Some(Value::str(&level)))?;
                }
            }
            if upper.contains("READ ONLY") {
                self.set_variable("transaction_read_only", global, Some(Value::Int(1)))?;
            } else if upper.contains("READ WRITE") {
                self.set_variable("transaction_read_only", global, Some(Value::Int(0)))?;
            }
            return out.ok(&OkInfo::default());
        }
        for assignment in split_top_level_commas(body) {
            let (lhs, rhs) = split_assignment(assignment)
                .ok_or_else(|| Error::Syntax(assignment.to_string()))?;
            let (name, global, is_user) = parse_set_target(lhs)?;
            let now = self.now();
            let value = {
                let rhs_upper = rhs.trim().to_ascii_uppercase();
                if !is_user && rhs_upper == "DEFAULT" {
                    None
                } else if !is_user && is_bare_word(rhs.trim()) {
                    Some(Value::str(rhs.trim()))
                } else {
                    let env = SessionEnv { s: self, now };
                    Some(strata_sql::eval_constant(rhs, &env)?)
                }
            };
            if is_user {
                self.user_vars
                    .insert(name.to_ascii_lowercase(), value.unwrap_or(Value::Null));
            } else {
                self.set_variable(&name, global, value)?;
            }
        }
        out.ok(&OkInfo::default())
    }

    fn show_variables(
        &self,
        global: bool,
        pattern: Option<String>,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        out.columns(&[text_col("Variable_name"), text_col("Value")])?;
        let matches = |name: &str| {
            pattern.as_ref().is_none_or(|p| {
                strata_sql::expr::like(
                    name.as_bytes(),
                    p.as_bytes(),
                    b'\\',
                    strata_types::Collation::GeneralCi,
                )
            })
        };
        let mut rows: Vec<(&str, Value)> = Vec::new();
        for def in vars::VARIABLES {
            if !matches(def.name) || (global && def.scope == vars::Scope::Session) {
                continue;
            }
            let v = self.get_variable(def.name, global)?;
            rows.push((def.name, vars::display(def, &v)));
        }
        // The engines' own variables are global, so both scopes show them.
        for e in self.server.catalog.engines() {
            for v in e.variables() {
                if matches(v.name) {
                    rows.push((v.name, v.value));
                }
            }
        }
        rows.sort_by(|a, b| a.0.cmp(b.0));
        for (name, value) in rows {
            out.row(&[Value::str(name), value])?;
        }
        out.end(&EndInfo::default())
    }

    fn show_status(&self, pattern: Option<String>, out: &mut dyn QueryOutput) -> Result<()> {
        let srv = &self.server;
        let mut rows: Vec<(String, u64)> = vec![
            (
                "Connections".into(),
                srv.connections.load(Ordering::Relaxed),
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
        rows.sort();
        out.columns(&[text_col("Variable_name"), text_col("Value")])?;
        for (k, v) in rows {
            if let Some(p) = &pattern {
                if !strata_sql::expr::like(
                    k.as_bytes(),
                    p.as_bytes(),
                    b'\\',
                    strata_types::Collation::GeneralCi,
                ) {
                    continue;
                }
            }
            out.row(&[Value::str(&k), Value::str(&v.to_string())])?;
        }
        out.end(&EndInfo::default())
    }

    /// LOCK TABLES t [AS a] READ [LOCAL] | [LOW_PRIORITY] WRITE, ...
    fn lock_tables(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        self.locked = None;
        let w = strata_sql::show::words(sql);
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
        let mut guards = Vec::new();
        for ((db, name), mode) in keys {
            let t = self.server.catalog.table(&db, &name)?;
            guards.push(t.lock(mode));
        }
        self.locked = Some((map, guards));
        out.ok(&OkInfo::default())
    }

    /// ANALYZE/OPTIMIZE/CHECK/REPAIR TABLE: MySQL's four-column report per table.
    fn table_maintenance(&mut self, op: &str, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let w = strata_sql::show::words(sql);
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
            let r = self.server.catalog.table(db, t).and_then(|table| {
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
        let sql = sql.trim().trim_end_matches(';').trim();
        let first = lex::first_word(sql);
        let id = self.next_statement_id;
        let session_owned = matches!(
            first.as_str(),
            "BEGIN"
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
        let (text, params) = lex::number_placeholders(sql);
        let entry = if session_owned {
            if params > 0 {
                return Err(Error::UnsupportedPs);
            }
            (PreparedStmt::Text(sql.to_string()), 0, vec![])
        } else {
            let mut stmts = strata_sql::parse::parse(&text).map_err(|e| match e {
                // Quote the client's text, not our numbered placeholders.
                Error::SyntaxAt { near, line } => Error::SyntaxAt {
                    near: lex::unnumber_placeholders(&near),
                    line,
                },
                e => e,
            })?;
            if stmts.len() != 1 {
                return Err(Error::Syntax(sql.chars().take(80).collect()));
            }
            let stmt = stmts.remove(0);
            let now = self.now();
            let env = SessionEnv { s: self, now };
            let scratch = Txn::default();
            let cx = self.exec_ctx(&env, &scratch)?;
            let p = strata_sql::prepare(stmt, &text, params, &cx)?;
            let cols = p.columns.clone();
            (PreparedStmt::Sql(Arc::new(p)), params, cols)
        };
        self.next_statement_id = self.next_statement_id.wrapping_add(1).max(1);
        let (stmt, params, cols) = entry;
        self.prepared.insert(id, stmt);
        Ok((id, params.min(u16::MAX as usize) as u16, cols))
    }

    /// COM_STMT_EXECUTE.
    pub fn execute(&mut self, id: u32, params: &[Value], out: &mut dyn QueryOutput) -> Result<()> {
        self.server.questions.fetch_add(1, Ordering::Relaxed);
        match self.prepared.get(&id) {
            None => Err(Error::Internal(format!(
                "Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"
            ))),
            Some(PreparedStmt::Text(t)) => {
                let t = t.clone();
                self.run(&t, out)
            }
            Some(PreparedStmt::Sql(p)) => {
                let p = p.clone();
                self.clear_diagnostics();
                let r = self.execute_prepared(&p, params, out);
                if let Err(e) = &r {
                    self.note_error(e);
                }
                r
            }
        }
    }

    pub fn close_statement(&mut self, id: u32) {
        self.prepared.remove(&id);
    }

    /// COM_FIELD_LIST: the columns of a table in the current database.
    pub fn field_list(&mut self, table: &str) -> Result<Vec<ColumnMeta>> {
        let db = self.current_db.clone().ok_or(Error::NoDatabaseSelected)?;
        let t = self.server.catalog.table(&db, table)?;
        let def = t.def().clone();
        let mut scope = strata_sql::bind::Scope::default();
        scope.push(table.to_string(), db, t);
        let st = &scope.tables[0];
        Ok(def
            .columns
            .iter()
            .map(|c| strata_sql::bind::column_meta(st, c, &c.name))
            .collect())
    }
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

/// The target of a SET: (name, global, is_user_variable).
fn parse_set_target(lhs: &str) -> Result<(String, bool, bool)> {
    let l = lhs.trim();
    let lower = l.to_ascii_lowercase();
    let strip = |s: &str| s.trim().trim_matches('`').to_string();
    if let Some(rest) = lower.strip_prefix("@@global.") {
        return Ok((strip(rest), true, false));
    }
    if let Some(rest) = lower
        .strip_prefix("@@session.")
        .or_else(|| lower.strip_prefix("@@local."))
    {
        return Ok((strip(rest), false, false));
    }
    if let Some(rest) = lower.strip_prefix("@@") {
        return Ok((strip(rest), false, false));
    }
    if let Some(rest) = l.strip_prefix('@') {
        return Ok((
            rest.trim_matches('`').trim_matches('\'').to_string(),
            false,
            true,
        ));
    }
    for (prefix, global) in [("global ", true), ("session ", false), ("local ", false)] {
        if let Some(rest) = lower.strip_prefix(prefix) {
            return Ok((strip(rest), global, false));
        }
    }
    Ok((strip(&lower), false, false))
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
            ("max_allowed_packet".into(), true, false)
        );
        assert_eq!(
            parse_set_target("SESSION sql_mode").unwrap(),
            ("sql_mode".into(), false, false)
        );
        assert_eq!(parse_set_target("@x").unwrap(), ("x".into(), false, true));
        assert_eq!(parse_offset("+05:30"), Some(19800));
        assert!(is_bare_word("ON"));
        assert!(!is_bare_word("'ON'"));
    }
}
