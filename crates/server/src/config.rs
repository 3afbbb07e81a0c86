//! Server options: from the command line and an optional TOML config file whose keys
//! are named like the MySQL server variables they mirror (`port`, `datadir`,
//! `key_buffer_size`, ...). The command line wins over the file; sizes accept MySQL's
//! K/M/G suffixes.

use clap::Args;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Args, Debug, Clone, Default)]
pub struct ServerArgs {
    /// TCP port to listen on [default: 3306].
    #[arg(long, short = 'P')]
    pub port: Option<u16>,
    /// Address to listen on [default: 127.0.0.1]. A non-loopback address is refused
    /// while any user has an empty password.
    #[arg(long = "bind-address", visible_alias = "bind", alias = "bind_address")]
    pub bind_address: Option<String>,
    /// Data directory, created on first start [default: ./strata-data].
    #[arg(long, short = 'D')]
    pub datadir: Option<PathBuf>,
    /// TOML file with any of these options, named like the MySQL variables
    /// (port, bind_address, datadir, default_storage_engine, key_buffer_size,
    /// key_cache_segments, myisam_use_mmap, myisam_mmap_size, max_connections,
    /// table_open_cache, open_files_limit,
    /// max_user_connections, connect_timeout, wait_timeout, interactive_timeout,
    /// net_read_timeout, net_write_timeout, max_allowed_packet, sql_mode, tmpdir, sort_buffer_size, max_memory, and the
    /// innodb_* options below, ssl, ssl_cert, ssl_key, ssl_ca, require_secure_transport,
    /// caching_sha2_password_private_key_path, caching_sha2_password_public_key_path,
    /// default_authentication_plugin, socket) and a [users] table of name = "password".
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Engine for CREATE TABLE without ENGINE=: InnoDB (the `btree` engine) or MyISAM
    /// (the `heap` engine) [default: InnoDB].
    #[arg(long = "default-storage-engine", alias = "default_storage_engine")]
    pub default_storage_engine: Option<String>,
    /// Size of the heap engine's key cache, which caches index blocks only (data rows go
    /// through the OS page cache), e.g. 8M, 1G [default: 8M].
    #[arg(long = "key-buffer-size", alias = "key_buffer_size", value_parser = parse_size)]
    pub key_buffer_size: Option<u64>,
    /// Independently locked segments of the key cache, 0..64; 0 or 1 is one unsegmented
    /// cache (MariaDB's default, MyISAM's global key-cache mutex) [default: 16]. Also
    /// SET GLOBAL (rebuilds the cache), as is key_buffer_size.
    #[arg(long = "key-cache-segments", alias = "key_cache_segments")]
    pub key_cache_segments: Option<u64>,
    /// ON or OFF: read and update heap (MyISAM) rows through memory maps of the data
    /// files instead of pread/pwrite; `--myisam-use-mmap` alone means ON [default: OFF].
    /// Also SET GLOBAL.
    #[arg(
        long = "myisam-use-mmap",
        alias = "myisam_use_mmap",
        num_args = 0..=1,
        default_missing_value = "ON"
    )]
    pub myisam_use_mmap: Option<String>,
    /// Most bytes of heap data files mapped at once; files beyond it use pread/pwrite,
    /// e.g. 1G [default: unlimited, as MySQL on 64-bit]. Also SET GLOBAL.
    #[arg(long = "myisam-mmap-size", alias = "myisam_mmap_size", value_parser = parse_size)]
    pub myisam_mmap_size: Option<u64>,
    /// Most client connections at once; one more is kept for root, so an administrator
    /// can always log in. Past it clients get error 1040 [default: 1024]. Also SET GLOBAL.
    #[arg(long = "max-connections", alias = "max_connections")]
    pub max_connections: Option<u64>,
    /// Table files open at once, in tables (two files per MyISAM table), as MySQL's
    /// table_open_cache; closed least recently used first past it, reopened on demand.
    /// Lowered at startup, as MySQL does, when the descriptor limit cannot hold it
    /// [default: 4000].
    #[arg(long = "table-open-cache", alias = "table_open_cache")]
    pub table_open_cache: Option<u64>,
    /// File descriptors to ask the OS for (RLIMIT_NOFILE's soft limit, raised up to the
    /// hard limit); 0 sizes it as MySQL does from max_connections and table_open_cache
    /// (at least 5000) [default: 0].
    #[arg(long = "open-files-limit", alias = "open_files_limit")]
    pub open_files_limit: Option<u64>,
    /// Most connections one user may hold at once, 0 for no limit; past it, error 1203
    /// [default: 0]. Also SET GLOBAL.
    #[arg(long = "max-user-connections", alias = "max_user_connections")]
    pub max_user_connections: Option<u64>,
    /// Seconds a new connection has to finish the handshake before it is closed, so
    /// clients that connect and never log in cannot hold the connection slots
    /// [default: 10]. Also SET GLOBAL.
    #[arg(long = "connect-timeout", alias = "connect_timeout")]
    pub connect_timeout: Option<u64>,
    /// Seconds a session may stay idle (no command) before the server sends error 4031
    /// and closes it [default: 28800]. Also SET GLOBAL (new connections) and SET SESSION.
    #[arg(long = "wait-timeout", alias = "wait_timeout")]
    pub wait_timeout: Option<u64>,
    /// wait_timeout for clients that connect as interactive (the mysql/mariadb command
    /// line client) [default: 28800]. Also SET GLOBAL.
    #[arg(long = "interactive-timeout", alias = "interactive_timeout")]
    pub interactive_timeout: Option<u64>,
    /// Seconds the server waits for the rest of a packet a client has begun to send
    /// [default: 30]. Also SET GLOBAL and SET SESSION.
    #[arg(long = "net-read-timeout", alias = "net_read_timeout")]
    pub net_read_timeout: Option<u64>,
    /// Seconds the server waits for a client to take a result it is sending
    /// [default: 60]. Also SET GLOBAL and SET SESSION.
    #[arg(long = "net-write-timeout", alias = "net_write_timeout")]
    pub net_write_timeout: Option<u64>,
    /// Largest packet (and so statement or row) accepted, e.g. 64M [default: 64M].
    #[arg(long = "max-allowed-packet", alias = "max_allowed_packet", value_parser = parse_size)]
    pub max_allowed_packet: Option<u64>,
    /// Default SQL mode [default: MySQL 8's: ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION].
    #[arg(long = "sql-mode", alias = "sql_mode")]
    pub sql_mode: Option<String>,
    /// Directory for sort runs of ORDER BY results larger than sort_buffer_size
    /// [default: the system temporary directory].
    #[arg(long)]
    pub tmpdir: Option<PathBuf>,
    /// Memory one sort may use before spilling to tmpdir, e.g. 256K, 2M [default: 2M].
    #[arg(long = "sort-buffer-size", alias = "sort_buffer_size", value_parser = parse_size)]
    pub sort_buffer_size: Option<u64>,
    /// The server's memory budget, e.g. 512M, 4G: the buffer pool, key cache and a
    /// reserve per connection must fit in it (checked at startup), and query working
    /// memory (sorts, grouping, join buffers, derived tables) shares the rest — past it
    /// operators spill to tmpdir, and a statement that cannot get its minimum waits, then
    /// fails with 3170. See docs/memory.md [default: 80% of the machine's memory or of
    /// the cgroup's limit].
    #[arg(long = "max-memory", alias = "max_memory", value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// The btree engine's buffer pool, which caches data and index pages, e.g. 128M, 1G
    /// [default: 128M].
    #[arg(long = "innodb-buffer-pool-size", alias = "innodb_buffer_pool_size", value_parser = parse_size)]
    pub innodb_buffer_pool_size: Option<u64>,
    /// Page size of btree tablespaces created from now on: 4K, 8K, 16K, 32K or 64K
    /// [default: 16K]. Fixed for a data directory once its first table exists.
    #[arg(long = "innodb-page-size", alias = "innodb_page_size", value_parser = parse_size)]
    pub innodb_page_size: Option<u64>,
    /// Size of the redo log (ib_logfile0); checkpoints keep the log within it, e.g. 96M
    /// [default: 96M]. Fixed when the log is created.
    #[arg(long = "innodb-log-file-size", alias = "innodb_log_file_size", value_parser = parse_size)]
    pub innodb_log_file_size: Option<u64>,
    /// Memory each new index's sort may use during ALTER TABLE … ADD INDEX / CREATE
    /// INDEX on btree tables; sorted runs beyond it spill to tmpdir, 64K to 64M
    /// [default: 1M].
    #[arg(long = "innodb-sort-buffer-size", alias = "innodb_sort_buffer_size", value_parser = parse_size)]
    pub innodb_sort_buffer_size: Option<u64>,
    /// 1: fsync the redo log at every commit (durable; concurrent commits share one
    /// fsync); 2: write it at commit, fsync about once a second; 0: write and fsync about
    /// once a second [default: 1]. Also SET GLOBAL.
    #[arg(
        long = "innodb-flush-log-at-trx-commit",
        alias = "innodb_flush_log_at_trx_commit"
    )]
    pub innodb_flush_log_at_trx_commit: Option<u8>,
    /// fsync (tablespaces through the OS page cache) or O_DIRECT (bypass it)
    /// [default: fsync].
    #[arg(long = "innodb-flush-method", alias = "innodb_flush_method")]
    pub innodb_flush_method: Option<String>,
    /// ON or OFF: remember the leaf page of primary-key lookups to skip the descent
    /// [default: ON]. Also SET GLOBAL.
    #[arg(
        long = "innodb-adaptive-hash-index",
        alias = "innodb_adaptive_hash_index"
    )]
    pub innodb_adaptive_hash_index: Option<String>,
    /// Times a thread re-tests a busy InnoDB latch (pausing a random while between
    /// tests) before it blocks in the OS; 0 blocks at once, like a pthread mutex
    /// [default: 30]. Also SET GLOBAL.
    #[arg(long = "innodb-sync-spin-loops", alias = "innodb_sync_spin_loops")]
    pub innodb_sync_spin_loops: Option<u32>,
    /// Most units (of 50 CPU pauses) of the random pause between two re-tests of a busy
    /// latch, 0..=1000 [default: 6]. Also SET GLOBAL.
    #[arg(long = "innodb-spin-wait-delay", alias = "innodb_spin_wait_delay")]
    pub innodb_spin_wait_delay: Option<u32>,
    /// ON or OFF: offer TLS to clients; `--ssl` alone means ON [default: ON]. With no
    /// --ssl-cert/--ssl-key the server uses ca.pem, server-cert.pem and server-key.pem
    /// from the data directory, generated at first start.
    #[arg(long = "ssl", num_args = 0..=1, default_missing_value = "ON")]
    pub ssl: Option<String>,
    /// The server's certificate (PEM; the chain may follow it). Goes with --ssl-key.
    #[arg(long = "ssl-cert", alias = "ssl_cert")]
    pub ssl_cert: Option<PathBuf>,
    /// The private key of --ssl-cert (PEM).
    #[arg(long = "ssl-key", alias = "ssl_key")]
    pub ssl_key: Option<PathBuf>,
    /// CA certificates (PEM) a client certificate must chain to, when a client presents
    /// one.
    #[arg(long = "ssl-ca", alias = "ssl_ca")]
    pub ssl_ca: Option<PathBuf>,
    /// ON or OFF: refuse logins over plain TCP (error 3159); TLS and the unix socket
    /// are accepted [default: OFF]. Also SET GLOBAL.
    #[arg(
        long = "require-secure-transport",
        alias = "require_secure_transport",
        num_args = 0..=1,
        default_missing_value = "ON"
    )]
    pub require_secure_transport: Option<String>,
    /// Where SELECT … INTO OUTFILE, LOAD DATA INFILE and LOAD_FILE() may read and write
    /// files: a directory (made at startup if missing), '' for anywhere, or NULL for
    /// nowhere [default: <datadir>/mysql-files].
    #[arg(long = "secure-file-priv", alias = "secure_file_priv")]
    pub secure_file_priv: Option<String>,
    /// ON or OFF: accept LOAD DATA LOCAL INFILE from clients that offer it (3948 when
    /// OFF) [default: OFF, as MySQL 8]. Also SET GLOBAL.
    #[arg(
        long = "local-infile",
        alias = "local_infile",
        num_args = 0..=1,
        default_missing_value = "ON"
    )]
    pub local_infile: Option<String>,
    /// RSA private key (PEM) for caching_sha2_password's password exchange without TLS;
    /// a relative path is in the data directory [default: private_key.pem, generated at
    /// first start with public_key.pem].
    #[arg(
        long = "caching-sha2-password-private-key-path",
        alias = "caching_sha2_password_private_key_path"
    )]
    pub caching_sha2_password_private_key_path: Option<PathBuf>,
    /// The RSA public key sent to clients that ask for it [default: public_key.pem].
    #[arg(
        long = "caching-sha2-password-public-key-path",
        alias = "caching_sha2_password_public_key_path"
    )]
    pub caching_sha2_password_public_key_path: Option<PathBuf>,
    /// The plugin the server's greeting proposes: mysql_native_password or
    /// caching_sha2_password [default: mysql_native_password]. Both are accepted from
    /// any client either way.
    #[arg(
        long = "default-authentication-plugin",
        alias = "default_authentication_plugin"
    )]
    pub default_authentication_plugin: Option<String>,
    /// Also listen on this unix socket file (clients on it count as secure transport)
    /// [default: none].
    #[arg(long)]
    pub socket: Option<PathBuf>,
    /// Binary log: on, with files named BASENAME.000001 … in the data directory
    /// (default basename `binlog`) [default: off, unlike MySQL 8].
    #[arg(long = "log-bin", alias = "log_bin", num_args = 0..=1, default_missing_value = "binlog")]
    pub log_bin: Option<String>,
    /// This server's id in a replication topology [default: 1].
    #[arg(long = "server-id", alias = "server_id")]
    pub server_id: Option<u32>,
    /// Rotate to a new binary log file past this size [default: 1G].
    #[arg(long = "max-binlog-size", alias = "max_binlog_size", value_parser = parse_size)]
    pub max_binlog_size: Option<u64>,
    /// ROW only (STATEMENT and MIXED are refused) [default: ROW].
    #[arg(long = "binlog-format", alias = "binlog_format")]
    pub binlog_format: Option<String>,
    /// FULL only (MINIMAL and NOBLOB are refused) [default: FULL].
    #[arg(long = "binlog-row-image", alias = "binlog_row_image")]
    pub binlog_row_image: Option<String>,
    /// CRC32 or NONE [default: CRC32].
    #[arg(long = "binlog-checksum", alias = "binlog_checksum")]
    pub binlog_checksum: Option<String>,
    /// JSON columns in row events: BINARY (MySQL 8's JSON type) or TEXT (LONGTEXT with
    /// the document's text, for MariaDB replicas and mariadb-binlog) [default: BINARY].
    #[arg(long = "binlog-json-format", alias = "binlog_json_format")]
    pub binlog_json_format: Option<String>,
    /// TABLE_MAP metadata: MINIMAL (signedness and character sets, what replicas need)
    /// or FULL (also column names, ENUM/SET members and the primary key, what CDC
    /// clients such as python-mysql-replication and Debezium need) [default: MINIMAL].
    #[arg(long = "binlog-row-metadata", alias = "binlog_row_metadata")]
    pub binlog_row_metadata: Option<String>,
    /// fsync the binary log every N commit groups; 0: never [default: 1].
    #[arg(long = "sync-binlog", alias = "sync_binlog")]
    pub sync_binlog: Option<u32>,
    /// A user as NAME or NAME:PASSWORD; repeatable. Each is created (NAME@%; root is
    /// root@localhost) or updated at every start with every privilege and this password.
    /// Without any, the accounts are what the data directory holds (a first start
    /// creates root@localhost with an empty password).
    #[arg(long = "user")]
    pub users: Vec<String>,
    /// Start without checking privileges (for recovering a lost root password); only
    /// allowed while listening on a loopback address.
    #[arg(long = "skip-grant-tables", alias = "skip_grant_tables")]
    pub skip_grant_tables: bool,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    port: Option<u16>,
    bind_address: Option<String>,
    datadir: Option<PathBuf>,
    default_storage_engine: Option<String>,
    key_buffer_size: Option<toml::Value>,
    max_memory: Option<toml::Value>,
    key_cache_segments: Option<u64>,
    myisam_use_mmap: Option<toml::Value>,
    myisam_mmap_size: Option<toml::Value>,
    max_connections: Option<u64>,
    table_open_cache: Option<u64>,
    open_files_limit: Option<u64>,
    max_user_connections: Option<u64>,
    connect_timeout: Option<u64>,
    wait_timeout: Option<u64>,
    interactive_timeout: Option<u64>,
    net_read_timeout: Option<u64>,
    net_write_timeout: Option<u64>,
    max_allowed_packet: Option<toml::Value>,
    sql_mode: Option<String>,
    tmpdir: Option<PathBuf>,
    sort_buffer_size: Option<toml::Value>,
    innodb_buffer_pool_size: Option<toml::Value>,
    innodb_page_size: Option<toml::Value>,
    innodb_log_file_size: Option<toml::Value>,
    innodb_sort_buffer_size: Option<toml::Value>,
    innodb_flush_log_at_trx_commit: Option<u8>,
    innodb_flush_method: Option<String>,
    innodb_adaptive_hash_index: Option<toml::Value>,
    innodb_sync_spin_loops: Option<u32>,
    innodb_spin_wait_delay: Option<u32>,
    ssl: Option<toml::Value>,
    ssl_cert: Option<PathBuf>,
    ssl_key: Option<PathBuf>,
    ssl_ca: Option<PathBuf>,
    require_secure_transport: Option<toml::Value>,
    secure_file_priv: Option<String>,
    local_infile: Option<toml::Value>,
    caching_sha2_password_private_key_path: Option<PathBuf>,
    caching_sha2_password_public_key_path: Option<PathBuf>,
    default_authentication_plugin: Option<String>,
    socket: Option<PathBuf>,
    users: Option<BTreeMap<String, String>>,
    log_bin: Option<String>,
    server_id: Option<u32>,
    max_binlog_size: Option<toml::Value>,
    binlog_format: Option<String>,
    binlog_row_image: Option<String>,
    binlog_checksum: Option<String>,
    binlog_json_format: Option<String>,
    binlog_row_metadata: Option<String>,
    sync_binlog: Option<u32>,
}

/// The options in force, after defaults, file and command line.
#[derive(Debug, Clone)]
pub struct Settings {
    pub port: u16,
    pub bind_address: String,
    pub datadir: PathBuf,
    pub default_storage_engine: String,
    pub key_buffer_size: u64,
    /// The memory budget in bytes (`--max-memory`, or its default).
    pub max_memory: u64,
    pub key_cache_segments: u64,
    pub myisam_use_mmap: bool,
    pub myisam_mmap_size: u64,
    pub max_connections: u64,
    pub table_open_cache: u64,
    pub open_files_limit: u64,
    /// Connection limits and timeouts, applied as SET GLOBAL would: (variable, value).
    pub connection_vars: Vec<(&'static str, u64)>,
    pub max_allowed_packet: u64,
    pub sql_mode: String,
    pub tmpdir: PathBuf,
    pub sort_buffer_size: u64,
    pub innodb_buffer_pool_size: u64,
    pub innodb_page_size: u64,
    pub innodb_log_file_size: u64,
    pub innodb_sort_buffer_size: u64,
    pub innodb_flush_log_at_trx_commit: u8,
    pub innodb_direct_io: bool,
    pub innodb_adaptive_hash_index: bool,
    pub innodb_sync_spin_loops: u32,
    pub innodb_spin_wait_delay: u32,
    /// TLS offered at all.
    pub ssl: bool,
    /// Both or neither (then the data directory's generated pair).
    pub ssl_cert: Option<PathBuf>,
    pub ssl_key: Option<PathBuf>,
    pub ssl_ca: Option<PathBuf>,
    pub require_secure_transport: bool,
    /// `secure_file_priv`: None is NULL (no files at all), Some("") anywhere, else the
    /// directory.
    pub secure_file_priv: Option<PathBuf>,
    pub local_infile: bool,
    /// caching_sha2_password's RSA key files, as given (relative to the data directory).
    pub rsa_private_key: PathBuf,
    pub rsa_public_key: PathBuf,
    /// `mysql_native_password` or `caching_sha2_password`.
    pub default_authentication_plugin: String,
    pub socket: Option<PathBuf>,
    pub users: BTreeMap<String, String>,
    /// `--log-bin`'s basename, when the binary log is on.
    pub log_bin: Option<String>,
    pub server_id: u32,
    pub max_binlog_size: u64,
    /// binlog_checksum=CRC32.
    pub binlog_checksum: bool,
    /// binlog_json_format=TEXT.
    pub binlog_json_text: bool,
    /// binlog_row_metadata=FULL.
    pub binlog_full_metadata: bool,
    pub sync_binlog: u32,
    /// Whether `users` came from --user or the config file (not the default root).
    pub explicit_users: bool,
    pub skip_grant_tables: bool,
}

/// MySQL 8.0's default sql_mode (the server greets clients as MySQL 8).
pub const DEFAULT_SQL_MODE: &str = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,\
     NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

/// Sizes as `1024`, `16K`, `8M`, `1G`: one parser for the server's and the bench's options.
pub use strata_bench::args::parse_size;

fn toml_size(v: &toml::Value, name: &str) -> Result<u64, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(*i as u64),
        toml::Value::String(s) => parse_size(s),
        _ => Err(format!("{name}: expected a size like 8M")),
    }
}

/// An ON/OFF option from the command line or the file.
fn on_off_opt(
    arg: &Option<String>,
    file: &Option<toml::Value>,
    name: &str,
    default: bool,
) -> Result<bool, String> {
    let v = match (arg, file) {
        (Some(v), _) => v.clone(),
        (None, Some(toml::Value::Boolean(b))) => b.to_string(),
        (None, Some(toml::Value::String(s))) => s.clone(),
        (None, Some(v)) => v.to_string(),
        (None, None) => return Ok(default),
    };
    match v.to_ascii_uppercase().as_str() {
        "ON" | "1" | "TRUE" => Ok(true),
        "OFF" | "0" | "FALSE" => Ok(false),
        _ => Err(format!("{name} '{v}': expected ON or OFF")),
    }
}

/// The default budget: 80% of what the machine (or the cgroup the server runs in) has,
/// leaving the rest to the OS page cache and other processes; 1 GiB when neither can be
/// read.
pub fn default_max_memory() -> u64 {
    strata_types::memory::available_memory().map_or(1 << 30, |m| m / 5 * 4)
}

/// A setting with two values, `(default, other)` in any case: true for the default
/// (also when unset), false for the other, an error naming both for anything else.
fn two_way(
    name: &str,
    given: Option<String>,
    (default, other): (&str, &str),
) -> Result<bool, String> {
    let v = given
        .unwrap_or_else(|| default.to_string())
        .to_ascii_uppercase();
    if v == default {
        Ok(true)
    } else if v == other {
        Ok(false)
    } else {
        Err(format!("{name} '{v}': expected {default} or {other}"))
    }
}

fn size_opt(
    arg: Option<u64>,
    file: &Option<toml::Value>,
    name: &str,
    default: u64,
) -> Result<u64, String> {
    match (arg, file) {
        (Some(v), _) => Ok(v),
        (None, Some(v)) => toml_size(v, name),
        (None, None) => Ok(default),
    }
}

impl Settings {
    pub fn resolve(args: &ServerArgs) -> Result<Settings, String> {
        let file = match &args.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                toml::from_str::<FileConfig>(&text)
                    .map_err(|e| format!("{}: {e}", path.display()))?
            }
            None => FileConfig::default(),
        };
        let mut users: BTreeMap<String, String> = file.users.clone().unwrap_or_default();
        for u in &args.users {
            let (name, pw) = u.split_once(':').unwrap_or((u.as_str(), ""));
            if name.is_empty() {
                return Err(format!("--user '{u}': empty user name"));
            }
            users.insert(name.to_string(), pw.to_string());
        }
        let explicit_users = !users.is_empty();
        if users.is_empty() {
            users.insert("root".into(), String::new());
        }
        let datadir_default = args
            .datadir
            .clone()
            .or(file.datadir.clone())
            .unwrap_or_else(|| PathBuf::from("strata-data"));
        let s = Settings {
            port: args.port.or(file.port).unwrap_or(3306),
            bind_address: args
                .bind_address
                .clone()
                .or(file.bind_address)
                .unwrap_or_else(|| "127.0.0.1".into()),
            datadir: args
                .datadir
                .clone()
                .or(file.datadir)
                .unwrap_or_else(|| PathBuf::from("strata-data")),
            default_storage_engine: args
                .default_storage_engine
                .clone()
                .or(file.default_storage_engine)
                .unwrap_or_else(|| "InnoDB".into()),
            key_buffer_size: match (args.key_buffer_size, &file.key_buffer_size) {
                (Some(v), _) => v,
                (None, Some(v)) => toml_size(v, "key_buffer_size")?,
                (None, None) => 8 << 20,
            },
            max_memory: match (args.max_memory, &file.max_memory) {
                (Some(v), _) => v,
                (None, Some(v)) => toml_size(v, "max_memory")?,
                (None, None) => default_max_memory(),
            },
            key_cache_segments: args
                .key_cache_segments
                .or(file.key_cache_segments)
                .unwrap_or(16),
            myisam_use_mmap: on_off_opt(
                &args.myisam_use_mmap,
                &file.myisam_use_mmap,
                "myisam_use_mmap",
                false,
            )?,
            myisam_mmap_size: size_opt(
                args.myisam_mmap_size,
                &file.myisam_mmap_size,
                "myisam_mmap_size",
                u64::MAX,
            )?,
            max_connections: args
                .max_connections
                .or(file.max_connections)
                .unwrap_or(1024),
            table_open_cache: args
                .table_open_cache
                .or(file.table_open_cache)
                .unwrap_or(crate::open_files::TABLE_OPEN_CACHE_DEFAULT),
            open_files_limit: args.open_files_limit.or(file.open_files_limit).unwrap_or(0),
            connection_vars: [
                (
                    "connect_timeout",
                    args.connect_timeout.or(file.connect_timeout),
                    10,
                ),
                (
                    "interactive_timeout",
                    args.interactive_timeout.or(file.interactive_timeout),
                    28800,
                ),
                (
                    "max_user_connections",
                    args.max_user_connections.or(file.max_user_connections),
                    0,
                ),
                (
                    "net_read_timeout",
                    args.net_read_timeout.or(file.net_read_timeout),
                    30,
                ),
                (
                    "net_write_timeout",
                    args.net_write_timeout.or(file.net_write_timeout),
                    60,
                ),
                (
                    "wait_timeout",
                    args.wait_timeout.or(file.wait_timeout),
                    28800,
                ),
            ]
            .into_iter()
            .map(|(name, v, default)| (name, v.unwrap_or(default)))
            .collect(),
            max_allowed_packet: match (args.max_allowed_packet, &file.max_allowed_packet) {
                (Some(v), _) => v,
                (None, Some(v)) => toml_size(v, "max_allowed_packet")?,
                (None, None) => 64 << 20,
            },
            sql_mode: args
                .sql_mode
                .clone()
                .or(file.sql_mode)
                .unwrap_or_else(|| DEFAULT_SQL_MODE.into()),
            tmpdir: args
                .tmpdir
                .clone()
                .or(file.tmpdir)
                .unwrap_or_else(std::env::temp_dir),
            sort_buffer_size: match (args.sort_buffer_size, &file.sort_buffer_size) {
                (Some(v), _) => v,
                (None, Some(v)) => toml_size(v, "sort_buffer_size")?,
                (None, None) => 2 << 20,
            },
            innodb_buffer_pool_size: size_opt(
                args.innodb_buffer_pool_size,
                &file.innodb_buffer_pool_size,
                "innodb_buffer_pool_size",
                128 << 20,
            )?,
            innodb_page_size: size_opt(
                args.innodb_page_size,
                &file.innodb_page_size,
                "innodb_page_size",
                16 << 10,
            )?,
            innodb_log_file_size: size_opt(
                args.innodb_log_file_size,
                &file.innodb_log_file_size,
                "innodb_log_file_size",
                96 << 20,
            )?,
            innodb_sort_buffer_size: size_opt(
                args.innodb_sort_buffer_size,
                &file.innodb_sort_buffer_size,
                "innodb_sort_buffer_size",
                1 << 20,
            )?,
            innodb_flush_log_at_trx_commit: args
                .innodb_flush_log_at_trx_commit
                .or(file.innodb_flush_log_at_trx_commit)
                .unwrap_or(1),
            innodb_direct_io: match args
                .innodb_flush_method
                .clone()
                .or(file.innodb_flush_method)
                .unwrap_or_else(|| "fsync".into())
                .to_ascii_uppercase()
                .as_str()
            {
                "FSYNC" => false,
                "O_DIRECT" => true,
                other => {
                    return Err(format!(
                        "innodb_flush_method '{other}': expected fsync or O_DIRECT"
                    ))
                }
            },
            innodb_adaptive_hash_index: {
                let v = match (
                    &args.innodb_adaptive_hash_index,
                    &file.innodb_adaptive_hash_index,
                ) {
                    (Some(v), _) => v.clone(),
                    (None, Some(toml::Value::Boolean(b))) => b.to_string(),
                    (None, Some(toml::Value::String(s))) => s.clone(),
                    (None, Some(v)) => v.to_string(),
                    (None, None) => "ON".into(),
                };
                match v.to_ascii_uppercase().as_str() {
                    "ON" | "1" | "TRUE" => true,
                    "OFF" | "0" | "FALSE" => false,
                    _ => {
                        return Err(format!(
                            "innodb_adaptive_hash_index '{v}': expected ON or OFF"
                        ))
                    }
                }
            },
            innodb_sync_spin_loops: args
                .innodb_sync_spin_loops
                .or(file.innodb_sync_spin_loops)
                .unwrap_or(30),
            innodb_spin_wait_delay: args
                .innodb_spin_wait_delay
                .or(file.innodb_spin_wait_delay)
                .unwrap_or(6),
            ssl: on_off_opt(&args.ssl, &file.ssl, "ssl", true)?,
            ssl_cert: args.ssl_cert.clone().or(file.ssl_cert),
            ssl_key: args.ssl_key.clone().or(file.ssl_key),
            ssl_ca: args.ssl_ca.clone().or(file.ssl_ca),
            require_secure_transport: on_off_opt(
                &args.require_secure_transport,
                &file.require_secure_transport,
                "require_secure_transport",
                false,
            )?,
            secure_file_priv: match args.secure_file_priv.clone().or(file.secure_file_priv) {
                Some(v) if v.eq_ignore_ascii_case("NULL") => None,
                Some(v) => Some(PathBuf::from(v)),
                None => Some(datadir_default.join("mysql-files")),
            },
            local_infile: on_off_opt(
                &args.local_infile,
                &file.local_infile,
                "local_infile",
                false,
            )?,
            rsa_private_key: args
                .caching_sha2_password_private_key_path
                .clone()
                .or(file.caching_sha2_password_private_key_path)
                .unwrap_or_else(|| PathBuf::from("private_key.pem")),
            rsa_public_key: args
                .caching_sha2_password_public_key_path
                .clone()
                .or(file.caching_sha2_password_public_key_path)
                .unwrap_or_else(|| PathBuf::from("public_key.pem")),
            default_authentication_plugin: args
                .default_authentication_plugin
                .clone()
                .or(file.default_authentication_plugin)
                .unwrap_or_else(|| "mysql_native_password".into())
                .to_ascii_lowercase(),
            socket: args.socket.clone().or(file.socket),
            users,
            log_bin: args.log_bin.clone().or(file.log_bin.clone()),
            server_id: args.server_id.or(file.server_id).unwrap_or(1),
            max_binlog_size: size_opt(
                args.max_binlog_size,
                &file.max_binlog_size,
                "max_binlog_size",
                1 << 30,
            )?,
            binlog_checksum: two_way(
                "binlog_checksum",
                args.binlog_checksum
                    .clone()
                    .or(file.binlog_checksum.clone()),
                ("CRC32", "NONE"),
            )?,
            binlog_json_text: !two_way(
                "binlog_json_format",
                args.binlog_json_format
                    .clone()
                    .or(file.binlog_json_format.clone()),
                ("BINARY", "TEXT"),
            )?,
            binlog_full_metadata: !two_way(
                "binlog_row_metadata",
                args.binlog_row_metadata
                    .clone()
                    .or(file.binlog_row_metadata.clone()),
                ("MINIMAL", "FULL"),
            )?,
            sync_binlog: args.sync_binlog.or(file.sync_binlog).unwrap_or(1),
            explicit_users,
            skip_grant_tables: args.skip_grant_tables,
        };
        // The binary log holds rows, whole: other settings would be accepted and not
        // honoured, so they are refused.
        let format = args
            .binlog_format
            .clone()
            .or(file.binlog_format)
            .unwrap_or_else(|| "ROW".into())
            .to_ascii_uppercase();
        if format != "ROW" {
            return Err(format!(
                "binlog_format '{format}' is not supported: Strata logs rows only (ROW)"
            ));
        }
        let image = args
            .binlog_row_image
            .clone()
            .or(file.binlog_row_image)
            .unwrap_or_else(|| "FULL".into())
            .to_ascii_uppercase();
        if image != "FULL" {
            return Err(format!(
                "binlog_row_image '{image}' is not supported: Strata logs full row images (FULL)"
            ));
        }
        if !(4096..=1 << 30).contains(&s.max_binlog_size) {
            return Err("max_binlog_size must be between 4096 and 1G".into());
        }
        if !matches!(s.innodb_page_size, 4096 | 8192 | 16384 | 32768 | 65536) {
            return Err("innodb_page_size must be 4K, 8K, 16K, 32K or 64K".into());
        }
        if s.innodb_buffer_pool_size < 5 << 20 {
            return Err("innodb_buffer_pool_size must be at least 5M".into());
        }
        if s.innodb_log_file_size < 1 << 20 {
            return Err("innodb_log_file_size must be at least 1M".into());
        }
        if !(64 << 10..=64 << 20).contains(&s.innodb_sort_buffer_size) {
            return Err("innodb_sort_buffer_size must be between 64K and 64M".into());
        }
        if s.innodb_spin_wait_delay > 1000 {
            return Err("innodb_spin_wait_delay must be between 0 and 1000".into());
        }
        if s.innodb_flush_log_at_trx_commit > 2 {
            return Err("innodb_flush_log_at_trx_commit must be 0, 1 or 2".into());
        }
        if s.max_allowed_packet < 1024 || s.max_allowed_packet > 1 << 30 {
            return Err("max_allowed_packet must be between 1K and 1G".into());
        }
        if s.key_buffer_size < 64 << 10 {
            return Err("key_buffer_size must be at least 64K".into());
        }
        if s.key_cache_segments > 64 {
            return Err("key_cache_segments must be between 0 and 64".into());
        }
        if s.sort_buffer_size < 32 << 10 {
            return Err("sort_buffer_size must be at least 32K".into());
        }
        if !s.tmpdir.is_dir() {
            return Err(format!("tmpdir {} is not a directory", s.tmpdir.display()));
        }
        if s.ssl_cert.is_some() != s.ssl_key.is_some() {
            return Err("--ssl-cert and --ssl-key must be given together".into());
        }
        if s.require_secure_transport && !s.ssl && s.socket.is_none() {
            return Err(
                "require_secure_transport=ON needs TLS (--ssl) or a --socket to log in through"
                    .into(),
            );
        }
        if !matches!(
            s.default_authentication_plugin.as_str(),
            "mysql_native_password" | "caching_sha2_password"
        ) {
            return Err(format!(
                "default_authentication_plugin '{}': expected mysql_native_password or \
                 caching_sha2_password",
                s.default_authentication_plugin
            ));
        }
        if s.table_open_cache == 0 || s.table_open_cache > 524_288 {
            return Err("table_open_cache must be between 1 and 524288".into());
        }
        if s.max_connections == 0 {
            return Err("max_connections must be at least 1".into());
        }
        let loopback = s.bind_address == "localhost"
            || s.bind_address
                .parse::<std::net::IpAddr>()
                .map(|a| a.is_loopback())
                .unwrap_or(false);
        if !loopback && s.skip_grant_tables {
            return Err(format!(
                "refusing to listen on {} with --skip-grant-tables (anyone could connect as anyone); use --bind-address 127.0.0.1",
                s.bind_address
            ));
        }
        if !loopback {
            if let Some((u, _)) = s.users.iter().find(|(_, p)| p.is_empty()) {
                return Err(format!(
                    "refusing to listen on {} while user '{u}' has an empty password (give every user a password with --user NAME:PASSWORD)",
                    s.bind_address
                ));
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_loopback_rule() {
        assert_eq!(parse_size("8M").unwrap(), 8 << 20);
        assert_eq!(parse_size("64k").unwrap(), 64 << 10);
        assert!(parse_size("x").is_err());
        let args = ServerArgs {
            bind_address: Some("0.0.0.0".into()),
            ..Default::default()
        };
        assert!(Settings::resolve(&args)
            .unwrap_err()
            .contains("empty password"));
        let args = ServerArgs {
            bind_address: Some("0.0.0.0".into()),
            users: vec!["root:pw".into()],
            ..Default::default()
        };
        assert!(Settings::resolve(&args).is_ok());
    }

    #[test]
    fn tls_options() {
        let s = Settings::resolve(&ServerArgs::default()).unwrap();
        assert!(s.ssl && !s.require_secure_transport && s.ssl_cert.is_none());
        assert_eq!(s.rsa_private_key, PathBuf::from("private_key.pem"));
        let half = ServerArgs {
            ssl_cert: Some("c.pem".into()),
            ..Default::default()
        };
        assert!(Settings::resolve(&half).unwrap_err().contains("together"));
        let locked_out = ServerArgs {
            ssl: Some("OFF".into()),
            require_secure_transport: Some("ON".into()),
            ..Default::default()
        };
        assert!(Settings::resolve(&locked_out).is_err());
        let plugin = ServerArgs {
            default_authentication_plugin: Some("sha256_password".into()),
            ..Default::default()
        };
        assert!(Settings::resolve(&plugin).is_err());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("strata.toml");
        std::fs::write(
            &file,
            "ssl_cert = \"/x/c.pem\"\nssl_key = \"/x/k.pem\"\nssl_ca = \"/x/ca.pem\"\n\
             require_secure_transport = \"ON\"\n\
             default_authentication_plugin = \"caching_sha2_password\"\n",
        )
        .unwrap();
        let s = Settings::resolve(&ServerArgs {
            config: Some(file),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(s.ssl_cert, Some(PathBuf::from("/x/c.pem")));
        assert_eq!(s.ssl_ca, Some(PathBuf::from("/x/ca.pem")));
        assert!(s.require_secure_transport);
        assert_eq!(s.default_authentication_plugin, "caching_sha2_password");
    }
}
