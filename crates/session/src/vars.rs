//! System variables: the one table of every variable the server knows, with its scope,
//! type and default, and the global values. A variable is listed here only when it
//! does something or reports something true: knobs that size caches at startup are
//! read-only at runtime (error 1238 on SET) rather than accepted and ignored. Names are
//! MySQL's, since clients and scripts set and read them by name.

use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use strata_types::{Error, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Global,
    Session,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Int {
        min: i64,
        max: i64,
    },
    Enum(&'static [&'static str]),
    Str,
    /// `sql_mode`: MySQL's modes by name or number ([`strata_types::SqlMode`]).
    SqlMode,
}

/// Global variables MySQL 8 also gives a session value (read-only, or settable with
/// privileges MySQL reserves for replication tools): `@@session.name` reads the global
/// one instead of failing with 1238.
const SESSION_READABLE: &[&str] = &["binlog_format", "binlog_row_image", "max_user_connections"];

/// Whether `@@session.name` of a [`Scope::Global`] variable reads its value.
pub fn session_readable(def: &VarDef) -> bool {
    SESSION_READABLE.contains(&def.name)
}

#[derive(Clone, Copy, Debug)]
pub struct VarDef {
    pub name: &'static str,
    pub scope: Scope,
    pub kind: Kind,
    /// False: settable only at startup (command line or config file).
    pub dynamic: bool,
}

const ISOLATION: &[&str] = &[
    "READ-UNCOMMITTED",
    "READ-COMMITTED",
    "REPEATABLE-READ",
    "SERIALIZABLE",
];
const CHARSETS: &[&str] = &["utf8mb4", "utf8", "utf8mb3", "latin1", "binary", "ascii"];
const COLLATIONS: &[&str] = &[
    "utf8mb4_general_ci",
    "utf8mb4_bin",
    "utf8mb4_unicode_ci",
    "utf8mb4_0900_ai_ci",
    "utf8_general_ci",
    "utf8mb3_general_ci",
    "latin1_swedish_ci",
    "binary",
];

macro_rules! v {
    ($name:expr, $scope:ident, $kind:expr, $dynamic:expr) => {
        VarDef {
            name: $name,
            scope: Scope::$scope,
            kind: $kind,
            dynamic: $dynamic,
        }
    };
}

const U32: Kind = Kind::Int {
    min: 0,
    max: u32::MAX as i64,
};
const U64: Kind = Kind::Int {
    min: 0,
    max: i64::MAX,
};

/// Every variable, sorted by name.
pub static VARIABLES: &[VarDef] = &[
    // Roles (acl): every granted role active at login, not only the default ones.
    v!("activate_all_roles_on_login", Global, Kind::Bool, true),
    v!(
        "auto_increment_increment",
        Both,
        Kind::Int { min: 1, max: 1 },
        true
    ),
    v!(
        "auto_increment_offset",
        Both,
        Kind::Int { min: 1, max: 1 },
        true
    ),
    v!("autocommit", Both, Kind::Bool, true),
    // caching_sha2_password's RSA key pair (the wire layer's full authentication).
    v!(
        "binlog_checksum",
        Global,
        Kind::Enum(&["NONE", "CRC32"]),
        false
    ),
    v!(
        "binlog_format",
        Global,
        Kind::Enum(&["ROW", "STATEMENT", "MIXED"]),
        false
    ),
    v!(
        "binlog_json_format",
        Global,
        Kind::Enum(&["BINARY", "TEXT"]),
        false
    ),
    v!(
        "binlog_row_image",
        Global,
        Kind::Enum(&["FULL", "MINIMAL", "NOBLOB"]),
        false
    ),
    // MINIMAL or FULL TABLE_MAP metadata (column names, ENUM/SET members, primary key
    // for CDC clients); set at startup with --binlog-row-metadata.
    v!(
        "binlog_row_metadata",
        Global,
        Kind::Enum(&["MINIMAL", "FULL"]),
        false
    ),
    v!(
        "caching_sha2_password_private_key_path",
        Global,
        Kind::Str,
        false
    ),
    v!(
        "caching_sha2_password_public_key_path",
        Global,
        Kind::Str,
        false
    ),
    v!("character_set_client", Both, Kind::Enum(CHARSETS), true),
    v!("character_set_connection", Both, Kind::Enum(CHARSETS), true),
    v!("character_set_database", Both, Kind::Enum(CHARSETS), true),
    v!("character_set_results", Both, Kind::Enum(CHARSETS), true),
    v!("character_set_server", Both, Kind::Enum(CHARSETS), true),
    // MariaDB's switch for CHECK constraints, which `mariadb-binlog` sets before each
    // statement it prints: only ON (constraints are always checked here) is accepted.
    v!(
        "check_constraint_checks",
        Both,
        Kind::Int { min: 1, max: 1 },
        true
    ),
    v!("collation_connection", Both, Kind::Enum(COLLATIONS), true),
    v!("collation_database", Both, Kind::Enum(COLLATIONS), true),
    v!("collation_server", Both, Kind::Enum(COLLATIONS), true),
    // What COMMIT and ROLLBACK do after ending the transaction: only NO_CHAIN (0) here;
    // CHAIN and RELEASE are refused (1235) rather than ignored.
    v!("completion_type", Both, Kind::Enum(&["NO_CHAIN"]), true),
    // Seconds a new connection has to complete the handshake (the wire layer's timer).
    v!(
        "connect_timeout",
        Global,
        Kind::Int {
            min: 2,
            max: 31_536_000
        },
        true
    ),
    v!(
        "cte_max_recursion_depth",
        Both,
        Kind::Int {
            min: 0,
            max: 4294967295
        },
        true
    ),
    v!("datadir", Global, Kind::Str, false),
    v!(
        "default_authentication_plugin",
        Global,
        Kind::Enum(&["mysql_native_password", "caching_sha2_password"]),
        false
    ),
    v!(
        "default_storage_engine",
        Both,
        Kind::Enum(&["MyISAM", "InnoDB", "heap", "btree"]),
        true
    ),
    v!(
        "div_precision_increment",
        Both,
        Kind::Int { min: 4, max: 4 },
        true
    ),
    v!(
        "enforce_gtid_consistency",
        Global,
        Kind::Enum(&["OFF", "ON", "WARN"]),
        false
    ),
    v!("error_count", Session, U64, false),
    v!("explicit_defaults_for_timestamp", Both, Kind::Bool, false),
    v!("foreign_key_checks", Both, Kind::Bool, true),
    v!(
        "group_concat_max_len",
        Both,
        Kind::Int {
            min: 4,
            max: i64::MAX
        },
        true
    ),
    // MariaDB's GTID domain of the session's transactions (`mariadb-binlog` prints it
    // before each MariaDB GTID): this server has one domain, 0; others are refused.
    v!(
        "gtid_domain_id",
        Session,
        Kind::Int { min: 0, max: 0 },
        true
    ),
    v!("gtid_executed", Global, Kind::Str, false),
    v!(
        "gtid_mode",
        Global,
        Kind::Enum(&["OFF", "OFF_PERMISSIVE", "ON_PERMISSIVE", "ON"]),
        false
    ),
    v!("gtid_next", Session, Kind::Str, true),
    v!("gtid_purged", Global, Kind::Str, true),
    // MariaDB's sequence number for the session's next GTID (`mariadb-binlog` prints it
    // before each MariaDB GTID): refused (1235), since this server's log holds MySQL
    // GTIDs and ignoring it would lose the transaction's identity.
    v!("gtid_seq_no", Session, U64, true),
    v!("have_openssl", Global, Kind::Str, false),
    v!("have_ssl", Global, Kind::Str, false),
    v!("hostname", Global, Kind::Str, false),
    v!("identity", Session, U64, true),
    v!("init_connect", Global, Kind::Str, false),
    // Owned by the session (it goes into each Txn), not by an engine: engines must not
    // declare it in `Engine::variables`.
    v!(
        "innodb_lock_wait_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 1_073_741_824
        },
        true
    ),
    v!(
        "interactive_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 31_536_000
        },
        true
    ),
    v!("last_insert_id", Session, U64, true),
    // The locale of month and day names: only en_US (id 0) is implemented; others are
    // refused (1235) rather than accepted and printed in English.
    v!("lc_time_names", Both, Kind::Str, true),
    v!("license", Global, Kind::Str, false),
    // How long a statement waits for a metadata lock (DDL behind open transactions,
    // DML behind DDL, FLUSH TABLES WITH READ LOCK) before error 1205.
    v!("local_infile", Global, Kind::Bool, true),
    v!(
        "lock_wait_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 31_536_000
        },
        true
    ),
    // LOAD DATA LOCAL INFILE: refused with 3948 while OFF (MySQL 8's default).
    v!("log_bin", Global, Kind::Bool, false),
    v!("log_bin_basename", Global, Kind::Str, false),
    v!("log_bin_index", Global, Kind::Str, false),
    v!(
        "lower_case_table_names",
        Global,
        Kind::Int { min: 0, max: 2 },
        false
    ),
    // Roles (acl): granted to every account; `role[@host]` separated by commas.
    v!("mandatory_roles", Global, Kind::Str, true),
    v!(
        "max_allowed_packet",
        Both,
        Kind::Int {
            min: 1024,
            max: 1 << 30
        },
        true
    ),
    // Checked by the wire layer for each new connection; one more is kept for root.
    v!(
        "max_binlog_size",
        Global,
        Kind::Int {
            min: 4096,
            max: 1 << 30
        },
        false
    ),
    v!(
        "max_connections",
        Global,
        Kind::Int {
            min: 1,
            max: 100_000
        },
        true
    ),
    // INSERT DELAYED's handler threads: DELAYED is gone from MySQL 8 (and never was
    // here), so the value only reads back, as in MySQL 8.
    v!(
        "max_delayed_threads",
        Both,
        Kind::Int { min: 0, max: 16384 },
        true
    ),
    // 0: no limit per user.
    // Milliseconds a top-level SELECT may run (0: no limit); past it, error 3024.
    v!("max_execution_time", Both, U32, true),
    // Prepared statements all sessions may hold at once; past it, 1461.
    v!(
        "max_prepared_stmt_count",
        Global,
        Kind::Int {
            min: 0,
            max: 4_194_304
        },
        true
    ),
    // How deep a stored procedure may call itself (0: not at all); past it, 1456.
    v!(
        "max_sp_recursion_depth",
        Both,
        Kind::Int { min: 0, max: 255 },
        true
    ),
    v!("max_user_connections", Global, U32, true),
    v!(
        "net_buffer_length",
        Both,
        Kind::Int {
            min: 1024,
            max: 1_048_576
        },
        true
    ),
    v!(
        "net_read_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 31_536_000
        },
        true
    ),
    v!(
        "net_write_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 31_536_000
        },
        true
    ),
    // Set at startup from RLIMIT_NOFILE (crates/server/src/open_files.rs), read-only as
    // in MySQL.
    v!("open_files_limit", Global, U64, false),
    v!("performance_schema", Global, Kind::Bool, false),
    v!("port", Global, U32, false),
    v!("protocol_version", Global, U32, false),
    // Set by `mysqlbinlog` output: the session applies a binary log (MySQL's replica
    // mode for a client session; here: an XA PREPARE detaches the prepared branch, as
    // the replica's applier does, so the script's next transaction can start).
    v!("pseudo_slave_mode", Session, Kind::Bool, true),
    // The thread id a binary-log replay runs under: what CONNECTION_ID() returns, as
    // in MySQL (the connection's own id unless set).
    v!("pseudo_thread_id", Session, U32, true),
    v!(
        "query_cache_size",
        Global,
        Kind::Int { min: 0, max: 0 },
        false
    ),
    v!("query_cache_type", Global, Kind::Enum(&["OFF"]), false),
    // Checked by the wire layer at each login: plain TCP is refused with 3159.
    v!("require_secure_transport", Global, Kind::Bool, true),
    // Where SELECT … INTO OUTFILE, LOAD DATA INFILE and LOAD_FILE() may reach: a
    // directory, '' (anywhere) or NULL (nowhere); --secure-file-priv at startup.
    v!("secure_file_priv", Global, Kind::Str, false),
    v!("server_id", Global, U32, false),
    v!("server_uuid", Global, Kind::Str, false),
    v!("socket", Global, Kind::Str, false),
    v!(
        "sort_buffer_size",
        Both,
        Kind::Int {
            min: 32768,
            max: 1 << 32
        },
        true
    ),
    v!("sql_auto_is_null", Both, Kind::Int { min: 0, max: 0 }, true),
    // Whether this session's changes go to the binary log (mysqldump, replication
    // tools and DBAs turn it off for changes a replica must not repeat).
    v!("sql_log_bin", Session, Kind::Bool, true),
    v!("sql_mode", Both, Kind::SqlMode, true),
    v!("sql_notes", Both, Kind::Bool, true),
    v!("sql_quote_show_create", Both, Kind::Bool, true),
    v!("sql_safe_updates", Both, Kind::Int { min: 0, max: 0 }, true),
    v!(
        "sql_select_limit",
        Both,
        Kind::Int { min: -1, max: -1 },
        true
    ),
    v!("ssl_ca", Global, Kind::Str, false),
    v!("ssl_cert", Global, Kind::Str, false),
    v!("ssl_key", Global, Kind::Str, false),
    v!(
        "storage_engine",
        Both,
        Kind::Enum(&["MyISAM", "InnoDB", "heap", "btree"]),
        true
    ),
    v!("sync_binlog", Global, U32, false),
    v!("system_time_zone", Global, Kind::Str, false),
    // MariaDB's history rows for system-versioned tables (which this server does not
    // have): only OFF is accepted.
    v!(
        "system_versioning_insert_history",
        Both,
        Kind::Int { min: 0, max: 0 },
        true
    ),
    // Tables whose files stay open (storage::filecache keeps twice as many files),
    // sized at startup; read-only here (MySQL's is dynamic): SET GLOBAL gets 1238
    // rather than being stored and not applied.
    v!("table_open_cache", Global, U64, false),
    v!("time_zone", Both, Kind::Str, true),
    // The session's clock for NOW() and friends (seconds since the epoch, with up to
    // six decimals), as `mysqlbinlog` output sets it before each statement; DEFAULT
    // returns to the real clock.
    v!("timestamp", Session, Kind::Str, true),
    v!("tls_version", Global, Kind::Str, false),
    v!(
        "tmp_table_size",
        Both,
        Kind::Int {
            min: 1024,
            max: i64::MAX
        },
        true
    ),
    v!("tmpdir", Global, Kind::Str, false),
    v!("transaction_isolation", Both, Kind::Enum(ISOLATION), true),
    v!("transaction_read_only", Both, Kind::Bool, true),
    v!("tx_isolation", Both, Kind::Enum(ISOLATION), true),
    v!("tx_read_only", Both, Kind::Bool, true),
    v!("unique_checks", Both, Kind::Bool, true),
    v!("version", Global, Kind::Str, false),
    v!("version_comment", Global, Kind::Str, false),
    v!("version_compile_machine", Global, Kind::Str, false),
    v!("version_compile_os", Global, Kind::Str, false),
    v!(
        "wait_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 31_536_000
        },
        true
    ),
    v!("warning_count", Session, U64, false),
];

pub fn lookup(name: &str) -> Option<&'static VarDef> {
    let n = name.to_ascii_lowercase();
    VARIABLES.iter().find(|v| v.name == n)
}

/// Aliases that are one variable under two names.
pub fn canonical(name: &str) -> &str {
    match name {
        "tx_isolation" => "transaction_isolation",
        "tx_read_only" => "transaction_read_only",
        "storage_engine" => "default_storage_engine",
        "identity" => "last_insert_id",
        other => other,
    }
}

/// Checks and normalizes a value for a variable (ON/OFF/1/0 for booleans, enum case,
/// sql_mode word lists, integer ranges). `DEFAULT` is handled by the caller. An
/// integer outside the variable's range is an error here; see [`normalize_clamped`].
pub fn normalize(def: &VarDef, v: &Value) -> Result<Value> {
    match normalize_clamped(def, v)? {
        (v, false) => Ok(v),
        (_, true) => Err(Error::WrongValueForVariable {
            name: def.name.into(),
            value: v.to_text(),
        }),
    }
}

/// As [`normalize`], but an integer outside the variable's range is clamped to it, and
/// the flag says so: MySQL then warns (1292), or refuses (1231) under
/// STRICT_ALL_TABLES.
pub fn normalize_clamped(def: &VarDef, v: &Value) -> Result<(Value, bool)> {
    let bad = || Error::WrongValueForVariable {
        name: def.name.into(),
        value: v.to_text(),
    };
    match def.kind {
        Kind::Bool => Ok((normalize_bool(def, v)?, false)),
        Kind::Int { min, max } => {
            let i = match v {
                Value::Int(i) => *i as i128,
                Value::UInt(u) => *u as i128,
                Value::Bytes(b) => String::from_utf8_lossy(b)
                    .trim()
                    .parse::<i128>()
                    .map_err(|_| Error::WrongTypeForVariable(def.name.into()))?,
                _ => return Err(Error::WrongTypeForVariable(def.name.into())),
            };
            if min == max && i != min as i128 {
                // A variable whose only supported value is its default.
                return Err(bad());
            }
            let clamped = i.clamp(min as i128, max as i128);
            Ok((Value::Int(clamped as i64), clamped != i))
        }
        _ => Ok((normalize_other(def, v)?, false)),
    }
}

fn normalize_bool(def: &VarDef, v: &Value) -> Result<Value> {
    let bad = || Error::WrongValueForVariable {
        name: def.name.into(),
        value: v.to_text(),
    };
    match v {
        Value::Int(0) | Value::UInt(0) => Ok(Value::Int(0)),
        Value::Int(1) | Value::UInt(1) => Ok(Value::Int(1)),
        Value::Bytes(b) => match String::from_utf8_lossy(b).to_ascii_uppercase().as_str() {
            "ON" | "TRUE" | "1" => Ok(Value::Int(1)),
            "OFF" | "FALSE" | "0" => Ok(Value::Int(0)),
            _ => Err(bad()),
        },
        Value::Double(_) | Value::Decimal(_) => Err(Error::WrongTypeForVariable(def.name.into())),
        _ => Err(bad()),
    }
}

/// Enum, set and string variables.
fn normalize_other(def: &VarDef, v: &Value) -> Result<Value> {
    let bad = || Error::WrongValueForVariable {
        name: def.name.into(),
        value: v.to_text(),
    };
    match def.kind {
        // Checked by normalize_clamped.
        Kind::Bool | Kind::Int { .. } => Err(bad()),
        // NULL means "send results unconverted" (Connector/J sets it on connect).
        Kind::Enum(_) if v.is_null() && def.name == "character_set_results" => Ok(Value::Null),
        Kind::Enum(choices) => {
            let t = v.to_text();
            choices
                .iter()
                .find(|c| c.eq_ignore_ascii_case(&t))
                .map(|c| Value::str(c))
                .ok_or_else(bad)
        }
        // MySQL's modes, by name or number, ANSI and TRADITIONAL expanded.
        Kind::SqlMode => Ok(Value::str(
            &strata_types::SqlMode::parse(&v.to_text())?.text(),
        )),
        Kind::Str => Ok(Value::str(&v.to_text())),
    }
}

/// The global values (and the defaults sessions start from).
pub struct Globals {
    values: RwLock<BTreeMap<&'static str, Value>>,
    /// The values the server started with (options applied): what `SET GLOBAL x =
    /// DEFAULT` restores.
    startup: BTreeMap<&'static str, Value>,
    /// `max_allowed_packet`, read before every packet a connection receives: an atomic
    /// copy kept by [`Globals::set`], not a map lookup under the lock.
    max_allowed_packet: AtomicU64,
}

/// MySQL's default `max_allowed_packet` (64 MiB), for a value that is not a number.
const DEFAULT_MAX_ALLOWED_PACKET: u64 = 64 << 20;

fn packet_limit(v: Option<&Value>) -> u64 {
    v.and_then(Value::to_i64)
        .map_or(DEFAULT_MAX_ALLOWED_PACKET, |n| n.max(0) as u64)
}

impl Globals {
    pub fn new(initial: Vec<(&'static str, Value)>) -> Globals {
        let startup: BTreeMap<&'static str, Value> = initial.into_iter().collect();
        let max_allowed_packet = AtomicU64::new(packet_limit(startup.get("max_allowed_packet")));
        Globals {
            values: RwLock::new(startup.clone()),
            startup,
            max_allowed_packet,
        }
    }

    /// The global `max_allowed_packet` in bytes.
    pub fn max_allowed_packet(&self) -> usize {
        self.max_allowed_packet.load(Ordering::Relaxed) as usize
    }

    /// The value the server started with.
    pub fn startup(&self, name: &str) -> Option<Value> {
        self.startup.get(name).cloned()
    }

    pub fn get(&self, name: &str) -> Value {
        self.values.read().get(name).cloned().unwrap_or(Value::Null)
    }

    pub fn set(&self, name: &'static str, v: Value) {
        if name == "max_allowed_packet" {
            self.max_allowed_packet
                .store(packet_limit(Some(&v)), Ordering::Relaxed);
        }
        self.values.write().insert(name, v);
    }

    pub fn snapshot(&self) -> BTreeMap<&'static str, Value> {
        self.values.read().clone()
    }
}

/// How a variable's value prints in SHOW VARIABLES: booleans as ON/OFF (SELECT @@ gives
/// the number, as MySQL does).
pub fn display(def: &VarDef, v: &Value) -> Value {
    match (def.kind, v) {
        (Kind::Bool, Value::Int(i)) => Value::str(if *i != 0 { "ON" } else { "OFF" }),
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_values_check() {
        assert!(VARIABLES.windows(2).all(|w| w[0].name < w[1].name));
        let ac = lookup("AUTOCOMMIT").unwrap();
        assert_eq!(normalize(ac, &Value::str("off")).unwrap(), Value::Int(0));
        assert!(normalize(ac, &Value::str("maybe")).is_err());
        let m = lookup("sql_mode").unwrap();
        assert_eq!(
            normalize(m, &Value::str("strict_trans_tables,no_zero_date")).unwrap(),
            Value::str("STRICT_TRANS_TABLES,NO_ZERO_DATE")
        );
        let wt = lookup("wait_timeout").unwrap();
        assert_eq!(normalize(wt, &Value::Int(0)).unwrap_err().code(), 1231);
        // Out of range: clamped, and flagged so the session warns (or refuses).
        assert_eq!(
            normalize_clamped(wt, &Value::Int(0)).unwrap(),
            (Value::Int(1), true)
        );
        assert_eq!(
            normalize_clamped(wt, &Value::Int(99)).unwrap(),
            (Value::Int(99), false)
        );
        assert_eq!(
            normalize_clamped(wt, &Value::Double(1.5))
                .unwrap_err()
                .code(),
            1232
        );
        assert_eq!(normalize(ac, &Value::Int(2)).unwrap_err().code(), 1231);
        assert_eq!(normalize(ac, &Value::Double(1.5)).unwrap_err().code(), 1232);
    }
}
