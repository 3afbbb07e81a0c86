//! The `strata` binary: `strata server` starts the MySQL-protocol server; `strata bench`
//! runs the seeds' experiments (crates/bench).
//!
//! Startup: resolve settings (command line over config file over defaults), open the
//! data directory's catalog with the engines (`strata_bench::inprocess::open_server`,
//! shared with the in-process bench so both measure the same construction), print where
//! the server listens and what it will use, then accept connections (wire crate), one
//! thread each. SIGTERM or SIGINT takes every table's write lock (so no statement is
//! half-way), flushes every engine's caches to the files, and exits.
//!
//! Everything the server reports goes through `strata_types::log` (stderr, never a
//! panic), so a closed stdout or stderr cannot stop the signal thread's shutdown.
//! Before anything is opened, `datadir_lock` makes sure no other server uses the data
//! directory, and `datadir_check` refuses one whose catalog is missing while tables are
//! there.

mod backend;
mod config;
mod datadir_check;
mod datadir_lock;
mod open_files;
mod replica;
mod security;

use clap::{Parser, Subcommand};
use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use strata_bench::inprocess::{open_server, ServerSettings};
use strata_engine::LockMode;
use strata_types::{log_error, log_note};

#[derive(Parser)]
#[command(
    name = "strata",
    version,
    about = "Strata: a MySQL-compatible SQL server with MyISAM-style and InnoDB-style storage engines"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once at startup: the size of the server's options does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Start the server (MySQL protocol, default 127.0.0.1:3306, data in ./strata-data).
    Server(config::ServerArgs),
    /// Run a benchmark scenario (the seeds' experiments) in-process or against a server
    /// on this machine; see docs/bench.md.
    Bench(strata_bench::BenchArgs),
}

/// glibc's malloc, bounded: a fixed mmap threshold of 128 KiB, so that buffers that large
/// (sort buffers, run windows, packet buffers) are mapped and given back to the OS when
/// freed — left alone, glibc raises the threshold up to 32 MiB after the first such free
/// and keeps later ones in its arenas — and a trim threshold of 256 KiB.
///
/// Arenas: 8 per core the process may run on (`arenas_for`), glibc's own rule but
/// counted from `available_parallelism` (cgroup quota and CPU affinity included, where
/// glibc counts every online CPU); `MALLOC_ARENA_MAX` in the environment wins. Two arenas
/// (this function's setting until 1 December 2026) kept the 300-connection budget run of
/// docs/memory.md 15 MiB lower (192 vs 207 MiB peak under a 256 MiB budget) but made
/// connection threads queue on the arena locks: a thread preempted inside malloc stops
/// every thread sharing its arena, and sysbench oltp_read_only at 16 and 64 threads on
/// two cores lost about a quarter of its throughput to it (docs/benchmarks.md).
/// mimalloc was measured too: its per-thread heaps peaked at 1,137 MiB on that run.
fn bound_malloc() {
    let arenas = std::env::var_os("MALLOC_ARENA_MAX")
        .is_none()
        .then(|| arenas_for(std::thread::available_parallelism().map_or(1, |n| n.get())));
    // SAFETY: mallopt only sets the allocator's parameters; called before any other
    // thread exists.
    unsafe {
        if let Some(n) = arenas {
            libc::mallopt(libc::M_ARENA_MAX, n);
        }
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 10);
    }
}

/// glibc's default number of arenas on a 64-bit machine, for `cores` usable cores: 8 a
/// core, so that a thread preempted while it holds one arena's lock holds up few others.
fn arenas_for(cores: usize) -> i32 {
    i32::try_from(cores.saturating_mul(8)).unwrap_or(i32::MAX)
}

fn main() {
    bound_malloc();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Server(args) => run_server(args).map(|()| 0),
        Command::Bench(args) => strata_bench::run(args),
    };
    match result {
        Ok(0) => {}
        Ok(code) => std::process::exit(code),
        Err(e) => {
            log_error!("strata: {e}");
            std::process::exit(1);
        }
    }
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// What one open connection holds (its stack pages, packet buffers and session state),
/// charged from working memory while it is open (measured: docs/memory.md).
const CONNECTION_RESERVE: u64 =
    (strata_types::memory::CONNECTION_RESERVE + strata_wire::STATEMENT_RESERVE) as u64;
/// The server's own fixed memory beside the pools: code and static data, the dictionary,
/// plan caches, the redo log buffer, thread-local caches of the allocator.
const BASE_RESERVE: u64 = 64 << 20;

/// The part of `max_memory` that is never working memory: the pools and the base.
fn memory_fixed(s: &config::Settings) -> u64 {
    s.innodb_buffer_pool_size + s.key_buffer_size + BASE_RESERVE
}

/// What one idle connection holds once its stack pages are given back (61 KiB measured
/// with 1,000 connections: docs/memory.md). The startup check makes room for every
/// allowed connection at this size; an open connection is charged its full
/// [`CONNECTION_RESERVE`] from the working memory, and one that finds no room for it
/// waits and is then refused with 3170. (Checking `max_connections` × the full reserve
/// refused budgets that served their load, e.g. 256 MiB with 1,024 connections allowed.)
const IDLE_CONNECTION: u64 = 64 << 10;

/// What must fit in `max_memory`: the fixed part and every allowed connection, idle.
fn memory_reserved(s: &config::Settings, max_connections: u64) -> u64 {
    memory_fixed(s) + max_connections * IDLE_CONNECTION
}

fn run_server(args: config::ServerArgs) -> Result<(), String> {
    let s = config::Settings::resolve(&args)?;
    // Before anything reads the directory: a second server on it would corrupt it.
    let _datadir_lock = datadir_lock::acquire(&s.datadir)?;
    datadir_check::before_open(&s.datadir)?;
    // Descriptors first: the engines open their table files through the cache.
    let fds = open_files::size(s.max_connections, s.table_open_cache, s.open_files_limit)?;
    strata_storage::filecache::FileCache::global()
        .set_limit(usize::try_from(fds.table_open_cache * 2).unwrap_or(usize::MAX));
    let reserved = memory_reserved(&s, fds.max_connections);
    let budget = if reserved < s.max_memory {
        strata_types::memory::set_budget(s.max_memory as usize, memory_fixed(&s) as usize)
    } else {
        Err(String::new())
    };
    budget.map_err(|_| {
        format!(
            "--max-memory {} cannot hold what is configured: buffer pool {} + key cache {} + \
             {} connections × {} + {} for the dictionary, caches and the server itself = {}; \
             raise --max-memory or lower those (docs/memory.md)",
            human(s.max_memory),
            human(s.innodb_buffer_pool_size),
            human(s.key_buffer_size),
            fds.max_connections,
            human(IDLE_CONNECTION),
            human(BASE_RESERVE),
            human(reserved)
        )
    })?;
    let server = open_server(&ServerSettings {
        datadir: s.datadir.clone(),
        port: s.port,
        default_storage_engine: s.default_storage_engine.clone(),
        key_buffer_size: s.key_buffer_size,
        max_connections: fds.max_connections,
        max_allowed_packet: s.max_allowed_packet,
        sql_mode: s.sql_mode.clone(),
        tmpdir: s.tmpdir.clone(),
        sort_buffer_size: s.sort_buffer_size,
        innodb_buffer_pool_size: s.innodb_buffer_pool_size,
        innodb_page_size: s.innodb_page_size,
        innodb_log_file_size: s.innodb_log_file_size,
        innodb_sort_buffer_size: s.innodb_sort_buffer_size,
        innodb_flush_log_at_trx_commit: s.innodb_flush_log_at_trx_commit,
        innodb_direct_io: s.innodb_direct_io,
        innodb_adaptive_hash_index: s.innodb_adaptive_hash_index,
    })
    .map_err(|e| {
        // The catalog's step of open_server names its error "opening <datadir>: …".
        if e.starts_with("opening ") {
            datadir_check::open_hint(e)
        } else {
            e
        }
    })?;
    let catalog = server.catalog.clone();
    datadir_check::after_open(&catalog);
    {
        use strata_types::Value::UInt;
        server
            .globals
            .set("open_files_limit", UInt(fds.open_files_limit));
        server
            .globals
            .set("table_open_cache", UInt(fds.table_open_cache));
        server.add_status_source(Box::new(|| {
            let c = strata_storage::filecache::FileCache::global().stats();
            vec![
                ("Open_files".into(), c.open_files),
                ("Open_tables".into(), c.open_tables),
                ("Opened_files".into(), c.opened_files),
                ("Opened_tables".into(), c.opened_tables),
                ("Table_open_cache_hits".into(), c.hits),
                ("Table_open_cache_misses".into(), c.misses),
                ("Table_open_cache_overflows".into(), c.overflows),
            ]
        }));
    }
    server
        .globals
        .set("server_id", strata_types::Value::Int(s.server_id as i64));
    if let Some(basename) = &s.log_bin {
        let uuid = strata_binlog::server_uuid(&server.config.datadir)
            .map_err(|e| format!("reading auto.cnf: {e}"))?;
        let binlog = strata_binlog::Binlog::open(
            strata_binlog::Options {
                datadir: server.config.datadir.clone(),
                basename: basename.clone(),
                server_id: s.server_id,
                max_size: s.max_binlog_size,
                checksum: s.binlog_checksum,
                sync: s.sync_binlog,
                format: strata_binlog::rows::Format {
                    json_text: s.binlog_json_text,
                    full_metadata: s.binlog_full_metadata,
                },
            },
            uuid,
        )
        .map_err(|e| format!("opening the binary log: {e}"))?;
        server.install_binlog(Arc::new(binlog));
    }
    // Two-phase commit's recovery: transactions a crash left prepared in the engines
    // are committed if the binary log holds them, rolled back if not.
    let (committed, rolled_back) = server
        .resolve_prepared()
        .map_err(|e| format!("resolving prepared transactions: {e}"))?;
    if committed + rolled_back > 0 {
        log_note!(
            "recovery: {committed} prepared transaction(s) committed, {rolled_back} rolled back"
        );
    }
    // XA transactions a crash left prepared wait for their coordinator's XA COMMIT or
    // XA ROLLBACK (XA RECOVER lists them).
    let xa = server
        .adopt_recovered_xa()
        .map_err(|e| format!("recovering XA transactions: {e}"))?;
    if xa > 0 {
        log_note!("recovery: {xa} XA transaction(s) left prepared for XA COMMIT / XA ROLLBACK");
    }
    // Connection limits and timeouts, checked and applied as their SET GLOBAL would be.
    for (name, value) in &s.connection_vars {
        let def = strata_session::vars::lookup(name)
            .ok_or_else(|| format!("--{}: unknown variable", name.replace('_', "-")))?;
        let v = strata_session::vars::normalize(def, &strata_types::Value::UInt(*value))
            .map_err(|e| format!("--{}: {e}", name.replace('_', "-")))?;
        server.globals.set(def.name, v);
    }
    // The heap engine's own options, applied as their SET GLOBAL would be (the engine
    // checks them; the key cache is still empty, so its rebuild costs nothing).
    if let Some(heap) = catalog.engines().iter().find(|e| e.name() == "heap") {
        use strata_types::Value::UInt;
        for (name, value) in [
            ("key_cache_segments", UInt(s.key_cache_segments)),
            ("myisam_mmap_size", UInt(s.myisam_mmap_size)),
            ("myisam_use_mmap", UInt(s.myisam_use_mmap as u64)),
        ] {
            heap.set_variable(name, &value)
                .map_err(|e| format!("--{}: {e}", name.replace('_', "-")))?;
        }
    }
    // The btree engine's latch policy, likewise applied as SET GLOBAL would be.
    if let Some(btree) = catalog.engines().iter().find(|e| e.name() == "btree") {
        for (name, value) in [
            ("innodb_sync_spin_loops", s.innodb_sync_spin_loops),
            ("innodb_spin_wait_delay", s.innodb_spin_wait_delay),
        ] {
            btree
                .set_variable(name, &strata_types::Value::UInt(value as u64))
                .map_err(|e| format!("--{}: {e}", name.replace('_', "-")))?;
        }
    }
    // SET PERSIST values, applied as SET GLOBAL before any client connects.
    for msg in strata_session::apply_persisted(&server)
        .map_err(|e| format!("reading persisted variables: {e}"))?
    {
        log_note!("{msg}");
    }
    // Accounts: read (or, on a first start, created) before any client connects; each
    // --user is made an administrator with its password.
    let first_start = if s.skip_grant_tables {
        false
    } else {
        server
            .acl
            .open(&server.config.datadir)
            .map_err(|e| format!("reading accounts: {e}"))?
    };
    let mut admins = Vec::new();
    if s.explicit_users && !s.skip_grant_tables {
        for (name, pw) in &s.users {
            admins.push(
                server
                    .acl
                    .ensure_admin(name, pw, &s.default_authentication_plugin)
                    .map_err(|e| format!("--user {name}: {e}"))?,
            );
        }
    }
    // The one directory statements may read and write files in (made now when it is
    // missing), or '' / NULL as given.
    let secure_file_priv = match &s.secure_file_priv {
        None => strata_types::Value::Null,
        Some(p) if p.as_os_str().is_empty() => strata_types::Value::str(""),
        Some(p) => {
            std::fs::create_dir_all(p)
                .map_err(|e| format!("--secure-file-priv {}: {e}", p.display()))?;
            let real = std::fs::canonicalize(p)
                .map_err(|e| format!("--secure-file-priv {}: {e}", p.display()))?;
            let mut text = real.display().to_string();
            if !text.ends_with('/') {
                text.push('/');
            }
            strata_types::Value::str(&text)
        }
    };
    server.globals.set("secure_file_priv", secure_file_priv);
    server.globals.set(
        "local_infile",
        strata_types::Value::Int(s.local_infile as i64),
    );
    let security = Arc::new(security::prepare(&s, &server)?);
    let default_engine = server.config.default_engine.clone();
    let listener = TcpListener::bind((s.bind_address.as_str(), s.port))
        .map_err(|e| format!("cannot listen on {}:{}: {e}", s.bind_address, s.port))?;
    let unix = match &s.socket {
        Some(path) => Some(security::bind_socket(path, &server)?),
        None => None,
    };
    log_note!(
        "strata {} listening on {}:{}",
        strata_sql::SERVER_VERSION,
        s.bind_address,
        s.port
    );
    log_note!("data directory: {}", server.config.datadir.display());
    log_note!(
        "default engine: {} ({})",
        strata_sql::engine_display(&default_engine),
        default_engine
    );
    for e in catalog.engines() {
        log_note!("engine {}: {}", e.name(), e.describe());
    }
    log_note!(
        "memory: max_memory {}: buffer pool {} + key cache {} + {} base (fixed) = {}; the \
         remaining {} is working memory: each open connection takes {} of it ({} connections: \
         {}) and statements' sorts, groups and joins ({} each, spilling to tmpdir) share the \
         rest (docs/memory.md)",
        human(s.max_memory),
        human(s.innodb_buffer_pool_size),
        human(s.key_buffer_size),
        human(BASE_RESERVE),
        human(memory_fixed(&s)),
        human(s.max_memory - memory_fixed(&s)),
        human(CONNECTION_RESERVE),
        fds.max_connections,
        human(fds.max_connections * CONNECTION_RESERVE),
        human(s.sort_buffer_size),
    );
    log_note!(
        "connections: max_connections {} (+1 for root), max_user_connections {}, \
         connect_timeout {}s, wait_timeout {}s",
        server.globals.get("max_connections").to_text(),
        server.globals.get("max_user_connections").to_text(),
        server.globals.get("connect_timeout").to_text(),
        server.globals.get("wait_timeout").to_text()
    );
    log_note!(
        "open files: open_files_limit {}, table_open_cache {} (at most {} table files open)",
        fds.open_files_limit,
        fds.table_open_cache,
        fds.table_open_cache * 2
    );
    log_note!("tmpdir (sort runs): {}", s.tmpdir.display());
    security::log_startup(&s, &security);
    if s.skip_grant_tables {
        log_note!(
            "--skip-grant-tables: privileges are NOT checked and any user name logs in without a password (loopback only)"
        );
    } else {
        log_note!(
            "accounts: {} in {}{}",
            server.acl.snapshot().len(),
            strata_session::acl::store::FILE,
            if admins.is_empty() {
                String::new()
            } else {
                format!(" (administrators from --user: {})", admins.join(", "))
            }
        );
        if first_start {
            log_note!(
                "first start: created 'root'@'localhost' with an empty password; set one with \
                 ALTER USER 'root'@'localhost' IDENTIFIED BY '…', create accounts with CREATE USER and GRANT"
            );
        }
    }

    let shutdown = Arc::new(AtomicBool::new(false));
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])
    .map_err(|e| format!("installing signal handlers: {e}"))?;
    {
        let catalog = catalog.clone();
        let shutdown = shutdown.clone();
        let binlog_at_exit = server.binlog().cloned();
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                log_note!("signal {sig}: shutting down");
                shutdown.store(true, std::sync::atomic::Ordering::SeqCst);
                // Wait for running statements: take every table's write lock.
                let mut held = Vec::new();
                for db in catalog.databases() {
                    if let Ok(tables) = catalog.tables(&db) {
                        for t in tables {
                            held.push(t.lock(LockMode::Write));
                        }
                    }
                }
                if let Some(b) = binlog_at_exit.as_ref() {
                    if let Err(e) = b.close() {
                        log_error!("closing the binary log failed: {e}");
                    }
                }
                let code = match catalog.flush() {
                    Ok(()) => 0,
                    Err(e) => {
                        log_error!("flush at shutdown failed: {e}");
                        1
                    }
                };
                log_note!("shutdown complete");
                std::process::exit(code);
            }
        });
    }
    // The replica (CHANGE REPLICATION SOURCE, START REPLICA, …); it starts replicating
    // now when a source was configured before.
    replica::Replica::install(&server).map_err(|e| format!("starting the replica: {e}"))?;
    let backend = Arc::new(backend::StrataBackend {
        server,
        skip_grant_tables: s.skip_grant_tables,
    });
    strata_wire::serve(listener, unix, backend, security, shutdown);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::arenas_for;

    #[test]
    fn eight_arenas_a_core_as_glibc_counts_them() {
        assert_eq!(arenas_for(1), 8);
        assert_eq!(arenas_for(2), 16);
        assert_eq!(arenas_for(usize::MAX), i32::MAX);
    }
}
