//! Opening a server without the network: the engines, the catalog of a data directory
//! and the shared [`Server`] state, built from [`ServerSettings`]. The `strata server`
//! binary starts through [`open_server`] too, so the bench measures exactly the engines
//! and configuration the server runs; the bench then drives SQL through one
//! [`Session`] per client thread ([`InProcessClient`]), as the wire layer would.

use crate::client::{Client, ClientError, Outcome};
use std::path::PathBuf;
use std::sync::Arc;
use strata_engine::Engine;
use strata_session::{ResultSink, Server, ServerConfig, Session};
use strata_sql::Catalog;
use strata_storage::redo::FlushAtCommit;
use strata_types::{ColumnMeta, EndInfo, FieldType, OkInfo, QueryOutput, Value};

/// What a server needs to open its data directory: the startup settings that reach the
/// engines, the catalog and [`ServerConfig`] (the network and user options stay with
/// the binary).
#[derive(Clone, Debug)]
pub struct ServerSettings {
    pub datadir: PathBuf,
    /// Shown as @@port; the in-process bench listens nowhere and passes 0.
    pub port: u16,
    /// Engine for CREATE TABLE without ENGINE=, as the user spells it (InnoDB, MyISAM,
    /// btree, heap).
    pub default_storage_engine: String,
    pub key_buffer_size: u64,
    pub max_connections: u64,
    pub max_allowed_packet: u64,
    pub sql_mode: String,
    pub tmpdir: PathBuf,
    pub sort_buffer_size: u64,
    pub innodb_buffer_pool_size: u64,
    pub innodb_page_size: u64,
    pub innodb_log_file_size: u64,
    /// Memory per new index's sort in an index build.
    pub innodb_sort_buffer_size: u64,
    /// 0, 1 or 2, as the MySQL variable.
    pub innodb_flush_log_at_trx_commit: u8,
    pub innodb_direct_io: bool,
    pub innodb_adaptive_hash_index: bool,
}

impl ServerSettings {
    /// The server's defaults for a data directory (those of `strata server --help`).
    pub fn defaults(datadir: PathBuf) -> ServerSettings {
        ServerSettings {
            datadir,
            port: 0,
            default_storage_engine: "InnoDB".into(),
            key_buffer_size: 8 << 20,
            max_connections: 1024,
            max_allowed_packet: 64 << 20,
            sql_mode: "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION".into(),
            tmpdir: std::env::temp_dir(),
            sort_buffer_size: 2 << 20,
            innodb_buffer_pool_size: 128 << 20,
            innodb_page_size: 16 << 10,
            innodb_log_file_size: 96 << 20,
            innodb_sort_buffer_size: 1 << 20,
            innodb_flush_log_at_trx_commit: 1,
            innodb_direct_io: false,
            innodb_adaptive_hash_index: true,
        }
    }
}

/// Opens (creating on first use) the data directory with both engines and returns the
/// state every session shares. Errors name the directory and the step that failed.
pub fn open_server(s: &ServerSettings) -> Result<Arc<Server>, String> {
    // Other fields of the engine configurations (added by engine work) keep their
    // defaults here until the server exposes them as options.
    #[allow(clippy::needless_update)]
    let heap_config = strata_heap::HeapConfig {
        key_buffer_size: s.key_buffer_size as usize,
        ..Default::default()
    };
    let heap: Arc<dyn Engine> = Arc::new(strata_heap::HeapEngine::new(heap_config));
    let btree: Arc<dyn Engine> = Arc::new(
        strata_btree::BtreeEngine::open(
            &s.datadir,
            strata_btree::BtreeConfig {
                buffer_pool_size: s.innodb_buffer_pool_size as usize,
                page_size: s.innodb_page_size as usize,
                log_file_size: s.innodb_log_file_size,
                sort_buffer_size: s.innodb_sort_buffer_size as usize,
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
    let default_engine = strata_sql::engine_name(&s.default_storage_engine, &available)
        .map_err(|e| format!("--default-storage-engine: {e}"))?;
    let catalog = Arc::new(
        Catalog::open(&s.datadir, engines)
            .map_err(|e| format!("opening {}: {e}", s.datadir.display()))?,
    );
    Ok(Arc::new(Server::new(
        catalog,
        ServerConfig {
            datadir: std::fs::canonicalize(&s.datadir).unwrap_or(s.datadir.clone()),
            port: s.port,
            default_engine,
            key_buffer_size: s.key_buffer_size,
            max_connections: s.max_connections,
            max_allowed_packet: s.max_allowed_packet,
            sql_mode: s.sql_mode.clone(),
            hostname: std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into()),
            tmpdir: s.tmpdir.clone(),
            sort_buffer_size: s.sort_buffer_size,
        },
    )))
}

/// Turns the binary log on for a freshly opened in-process server, as `strata server
/// --log-bin --sync-binlog=<sync>` does (row format, CRC32, 1 GiB files), and resolves
/// prepared transactions as the server does at startup.
pub fn install_binlog(server: &Server, sync: u32) -> Result<(), String> {
    let datadir = server.config.datadir.clone();
    let uuid = strata_binlog::server_uuid(&datadir).map_err(|e| format!("auto.cnf: {e}"))?;
    let b = strata_binlog::Binlog::open(
        strata_binlog::Options {
            datadir,
            basename: "binlog".into(),
            server_id: 1,
            max_size: 1 << 30,
            checksum: true,
            sync,
            format: Default::default(),
        },
        uuid,
    )
    .map_err(|e| format!("opening the binary log: {e}"))?;
    server.install_binlog(Arc::new(b));
    server
        .resolve_prepared()
        .map_err(|e| format!("resolving prepared transactions: {e}"))?;
    Ok(())
}

/// One client thread's session on an in-process server.
pub struct InProcessClient {
    session: Session,
}

impl InProcessClient {
    pub fn new(server: Arc<Server>, connection_id: u32) -> Result<InProcessClient, ClientError> {
        let session =
            Session::new(server, connection_id, "root", None).map_err(ClientError::from_strata)?;
        Ok(InProcessClient { session })
    }
}

impl Drop for InProcessClient {
    fn drop(&mut self) {
        // As a closing connection: roll back what is open, count the thread gone.
        self.session.close();
    }
}

/// Counts rows and keeps the last OK packet; keeps row values only when asked, so the
/// measured path does no copying a network client would not do.
struct Sink {
    keep: bool,
    rows: u64,
    affected: u64,
    values: Vec<Vec<String>>,
    /// Which columns are DATE: their values are held as date-times at midnight, and
    /// kept values must read as a client over the wire reads them (the wire layer
    /// prints the date alone).
    date_columns: Vec<bool>,
}

impl QueryOutput for Sink {
    fn columns(&mut self, cols: &[ColumnMeta]) -> strata_types::Result<()> {
        if self.keep {
            self.date_columns = cols
                .iter()
                .map(|c| c.field_type == FieldType::Date)
                .collect();
        }
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> strata_types::Result<()> {
        self.rows += 1;
        if self.keep {
            let dates = &self.date_columns;
            self.values.push(
                row.iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let mut t = v.to_text();
                        if matches!(v, Value::DateTime(_)) && dates.get(i) == Some(&true) {
                            t.truncate(10);
                        }
                        t
                    })
                    .collect(),
            );
        }
        Ok(())
    }
    fn end(&mut self, _: &EndInfo) -> strata_types::Result<()> {
        Ok(())
    }
    fn ok(&mut self, info: &OkInfo) -> strata_types::Result<()> {
        self.affected += info.affected_rows;
        Ok(())
    }
}

impl ResultSink for Sink {
    fn next_result(&mut self) -> strata_types::Result<()> {
        Ok(())
    }
}

impl InProcessClient {
    fn run(&mut self, sql: &str, keep: bool) -> Result<Sink, ClientError> {
        let mut sink = Sink {
            keep,
            rows: 0,
            affected: 0,
            values: Vec::new(),
            date_columns: Vec::new(),
        };
        self.session
            .query(sql, false, &mut sink)
            .map_err(ClientError::from_strata)?;
        Ok(sink)
    }
}

impl Client for InProcessClient {
    fn exec(&mut self, sql: &str) -> Result<Outcome, ClientError> {
        let s = self.run(sql, false)?;
        Ok(Outcome {
            rows: s.rows,
            affected: s.affected,
        })
    }

    fn rows(&mut self, sql: &str) -> Result<Vec<Vec<String>>, ClientError> {
        Ok(self.run(sql, true)?.values)
    }
}
