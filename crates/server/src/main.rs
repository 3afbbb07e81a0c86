//! The `strata` binary: `strata server` starts the MySQL-protocol server.
//!
//! Startup: resolve settings (command line over config file over defaults), open the
//! data directory's catalog with the engines, print where the server listens and what it
//! will use, then accept connections (wire crate), one thread each. SIGTERM or SIGINT
//! takes every table's write lock (so no statement is half-way), flushes every engine's
//! caches to the files, and exits.

mod backend;
mod config;

use clap::{Parser, Subcommand};
use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use strata_engine::{Engine, LockMode};
use strata_session::{Server, ServerConfig};
use strata_sql::Catalog;
use strata_storage::redo::FlushAtCommit;

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

#[derive(Subcommand)]
enum Command {
    /// Start the server (MySQL protocol, default 127.0.0.1:3306, data in ./strata-data).
    Server(config::ServerArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Server(args) => run_server(args),
    };
    if let Err(e) = result {
        eprintln!("strata: {e}");
        std::process::exit(1);
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

fn run_server(args: config::ServerArgs) -> Result<(), String> {
    let s = config::Settings::resolve(&args)?;
    let heap: Arc<dyn Engine> = Arc::new(strata_heap::HeapEngine::new(strata_heap::HeapConfig {
        key_buffer_size: s.key_buffer_size as usize,
    }));
    let btree: Arc<dyn Engine> = Arc::new(
        strata_btree::BtreeEngine::open(
            &s.datadir,
            strata_btree::BtreeConfig {
                buffer_pool_size: s.innodb_buffer_pool_size as usize,
                page_size: s.innodb_page_size as usize,
                log_file_size: s.innodb_log_file_size,
                flush_log_at_trx_commit: match s.innodb_flush_log_at_trx_commit {
                    0 => FlushAtCommit::Never,
                    2 => FlushAtCommit::WriteOnly,
                    _ => FlushAtCommit::Durable,
                },
                direct_io: s.innodb_direct_io,
                adaptive_hash_index: s.innodb_adaptive_hash_index,
                ..Default::default()
            },
        )
        .map_err(|e| format!("starting the btree engine in {}: {e}", s.datadir.display()))?,
    );
    let engines = vec![btree, heap];
    let available: Vec<&str> = engines.iter().map(|e| e.name()).collect();
    let default_engine = strata_sql::ddl::engine_name(&s.default_storage_engine, &available)
        .map_err(|e| format!("--default-storage-engine: {e}"))?;
    let catalog = Arc::new(
        Catalog::open(&s.datadir, engines.clone())
            .map_err(|e| format!("opening {}: {e}", s.datadir.display()))?,
    );
    let listener = TcpListener::bind((s.bind_address.as_str(), s.port))
        .map_err(|e| format!("cannot listen on {}:{}: {e}", s.bind_address, s.port))?;
    let server = Arc::new(Server::new(
        catalog.clone(),
        ServerConfig {
            datadir: std::fs::canonicalize(&s.datadir).unwrap_or(s.datadir.clone()),
            port: s.port,
            default_engine: default_engine.clone(),
            key_buffer_size: s.key_buffer_size,
            max_connections: s.max_connections,
            max_allowed_packet: s.max_allowed_packet,
            sql_mode: s.sql_mode.clone(),
            hostname: std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into()),
            tmpdir: s.tmpdir.clone(),
            sort_buffer_size: s.sort_buffer_size,
        },
    ));
    println!(
        "strata {} listening on {}:{}",
        strata_sql::SERVER_VERSION,
        s.bind_address,
        s.port
    );
    println!("data directory: {}", server.config.datadir.display());
    println!(
        "default engine: {} ({})",
        strata_sql::ddl::engine_display(&default_engine),
        default_engine
    );
    for e in catalog.engines() {
        println!("engine {}: {}", e.name(), e.describe());
    }
    println!(
        "memory: buffer pool {} + key cache {} (fixed) + per connection: sort buffer {} and packets up to max_allowed_packet {}, at most {} connections",
        human(s.innodb_buffer_pool_size),
        human(s.key_buffer_size),
        human(s.sort_buffer_size),
        human(s.max_allowed_packet),
        s.max_connections
    );
    println!("tmpdir (sort runs): {}", s.tmpdir.display());
    println!(
        "users: {}",
        s.users.keys().cloned().collect::<Vec<_>>().join(", ")
    );

    let shutdown = Arc::new(AtomicBool::new(false));
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])
    .map_err(|e| format!("installing signal handlers: {e}"))?;
    {
        let catalog = catalog.clone();
        let shutdown = shutdown.clone();
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                println!("signal {sig}: shutting down");
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
                let code = match catalog.flush() {
                    Ok(()) => 0,
                    Err(e) => {
                        eprintln!("strata: flush at shutdown failed: {e}");
                        1
                    }
                };
                println!("shutdown complete");
                std::process::exit(code);
            }
        });
    }
    let backend = Arc::new(backend::StrataBackend {
        server,
        users: s.users.clone(),
    });
    strata_wire::serve(listener, backend, shutdown);
    Ok(())
}
