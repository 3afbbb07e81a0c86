//! The `strata bench` command line: which scenario, where to run it (in-process or a
//! server on this machine), the run's shape (threads, durations, sizes, `--scale`) and
//! where to write CSV, JSON and SVG. Scenario defaults are the seeds' own; `--scale`
//! shrinks sizes and durations and caps thread lists so each scenario can run as a
//! smoke test in seconds.

use crate::workload::Workload;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Scenario {
    /// sysbench OLTP workloads (--workload) on one or two engines (--engine A,B).
    Oltp,
    /// seed 000: MyISAM data files through pread vs mmap (myisam_use_mmap OFF/ON).
    Mmap,
    /// seed 001: self-joins on id, i and c over 20,000 rows, MyISAM vs InnoDB.
    Join,
    /// seed 002: range self-join of 1..10,000 rows at 1..1024 clients, MyISAM vs InnoDB,
    /// and its index-only variant.
    Selfjoin,
    /// seed 003: concurrent joins and concurrent inserts at 1..16 users for each latch
    /// variant (innodb_sync_spin_loops).
    Latch,
    /// seed 004: full scans and ORDER BY of two 400 MB blob tables with the OS cache
    /// warm, dropped, and with the data directory on tmpfs.
    Pagecache,
    /// seed 001: update_key with the binary log off and on, and the redo flush policy
    /// (innodb_flush_log_at_trx_commit 1 vs 2).
    Groupcommit,
    /// TPC-H: the 8 tables at --scale-factor and the 22 queries, timed on this target
    /// and (--compare) on a second server, each result checked against the other's.
    Tpch,
}

impl Scenario {
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Oltp => "oltp",
            Scenario::Mmap => "mmap",
            Scenario::Join => "join",
            Scenario::Selfjoin => "selfjoin",
            Scenario::Latch => "latch",
            Scenario::Pagecache => "pagecache",
            Scenario::Groupcommit => "groupcommit",
            Scenario::Tpch => "tpch",
        }
    }
}

/// Parses `1024`, `16K`, `8M`, `1G` (as the server's size options).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .map(|n| n.saturating_mul(mult))
        .map_err(|_| format!("'{s}' is not a size (e.g. 1024, 64K, 8M, 1G)"))
}

fn parse_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(format!(
            "'{s}': --scale takes a number in (0, 1], e.g. 0.01"
        )),
    }
}

fn parse_scale_factor(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 100.0 => Ok(v),
        _ => Err(format!(
            "'{s}': --scale-factor takes a number in (0, 100], e.g. 0.01 or 1"
        )),
    }
}

fn parse_repeat(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!("'{s}': --repeat takes a count of at least 1")),
    }
}

fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds")),
    }
}

#[derive(Args, Debug, Clone)]
#[command(
    about = "Run the seeds' experiments: sysbench-style workloads in-process or against a MySQL-protocol server on this machine",
    after_help = "Without --host/--port the bench opens a fresh data directory in-process (no network) with Strata's engines. With them it drives a server on this machine (Strata or MariaDB) over the MySQL protocol; it creates and drops databases named strata_bench_* there and may SET GLOBAL the variables a scenario varies. See docs/bench.md."
)]
pub struct BenchArgs {
    /// Which experiment to run.
    #[arg(value_enum)]
    pub scenario: Scenario,

    /// Run against the MySQL-protocol server at this host (loopback only) instead of
    /// in-process [default port 3306].
    #[arg(long)]
    pub host: Option<String>,
    /// Port of the server to run against (implies over-the-wire mode).
    #[arg(long, short = 'P')]
    pub port: Option<u16>,
    /// User for over-the-wire mode.
    #[arg(long, short = 'u', default_value = "root")]
    pub user: String,
    /// Password for over-the-wire mode [default: none].
    #[arg(long, short = 'p')]
    pub password: Option<String>,
    /// In-process: the data directory to create (must be empty or absent) [default: a
    /// temporary directory, removed afterwards]. Over the wire: the server's data
    /// directory, used only to drop table files from the OS page cache (pagecache).
    #[arg(long)]
    pub datadir: Option<PathBuf>,
    /// A directory on tmpfs for the pagecache scenario's tmpfs half (in-process only).
    #[arg(long = "tmpfs-dir")]
    pub tmpfs_dir: Option<PathBuf>,

    /// Client thread counts, e.g. 1,4,16,64 [default: the seed's list].
    #[arg(long, value_delimiter = ',')]
    pub threads: Option<Vec<usize>>,
    /// Measured seconds per cell [default: 10].
    #[arg(long, value_parser = parse_secs)]
    pub time: Option<f64>,
    /// Warm-up seconds before each cell, not counted [default: 2].
    #[arg(long, value_parser = parse_secs)]
    pub warmup: Option<f64>,
    /// Rows per table [default: the scenario's, e.g. 20,000 for join].
    #[arg(long = "table-size")]
    pub table_size: Option<u64>,
    /// Number of sbtest tables (oltp, mmap, groupcommit) [default: 1].
    #[arg(long, default_value_t = 1)]
    pub tables: usize,
    /// Engines to compare as A,B (MyISAM/heap, InnoDB/btree) [default: the scenario's].
    #[arg(long, value_delimiter = ',')]
    pub engine: Option<Vec<String>>,
    /// Workloads of the oltp scenario [default: point_select,read_only,read_write,update_index,update_non_index].
    #[arg(long, value_delimiter = ',', value_enum)]
    pub workload: Option<Vec<Workload>>,
    /// Rows each selfjoin query selects, e.g. 1,10 [default: 1,10,100,1000,10000]; the
    /// index-only variant runs for the largest of them up to 1000.
    #[arg(long, value_delimiter = ',')]
    pub ranges: Option<Vec<u64>>,
    /// Shrink the scenario: rows, bytes and durations are multiplied by this, thread
    /// lists are capped, e.g. 0.01 for a smoke test.
    #[arg(long, default_value = "1", value_parser = parse_scale)]
    pub scale: f64,
    /// Seed of the random numbers (ids, values).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// tpch: the TPC-H scale factor (SF 1 is 6,001,215 lineitem rows; 0.01 for a quick look).
    #[arg(long = "scale-factor", default_value = "0.1", value_parser = parse_scale_factor)]
    pub scale_factor: f64,
    /// tpch: a second server (host:port, loopback only) that gets the same data and
    /// queries over the wire; every result is checked against its result. groupcommit:
    /// one or two servers (host:port,host:port), with and without --log-bin, measured
    /// beside Strata.
    #[arg(long)]
    pub compare: Option<String>,
    /// tpch: user for the --compare server [default: --user].
    #[arg(long = "compare-user")]
    pub compare_user: Option<String>,
    /// tpch: password for the --compare server [default: --password].
    #[arg(long = "compare-password")]
    pub compare_password: Option<String>,
    /// tpch: timed runs of each query after its unmeasured warm run; the median is shown.
    #[arg(long, default_value = "1", value_parser = parse_repeat)]
    pub repeat: usize,
    /// tpch: seconds one query may run before it is reported as timed out.
    #[arg(long = "query-timeout", default_value = "300", value_parser = parse_secs)]
    pub query_timeout: f64,
    /// tpch: which of the 22 queries to run, e.g. 1,6,14 [default: all].
    #[arg(long, value_delimiter = ',')]
    pub queries: Option<Vec<u32>>,
    /// tpch: keep a server's `strata_bench_tpch` database when every table already
    /// holds the row count generated for --scale-factor (from an earlier run), instead
    /// of dropping and loading it again.
    #[arg(long = "reuse-data")]
    pub reuse_data: bool,

    /// Write every cell as CSV to this file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the tables as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write an SVG chart per table into this directory.
    #[arg(long = "svg-dir")]
    pub svg_dir: Option<PathBuf>,

    /// In-process: the btree engine's buffer pool [default: 128M; 1G for selfjoin and latch].
    #[arg(long = "innodb-buffer-pool-size", value_parser = parse_size)]
    pub innodb_buffer_pool_size: Option<u64>,
    /// In-process: the heap engine's key cache [default: 8M; 512M for selfjoin and latch].
    #[arg(long = "key-buffer-size", value_parser = parse_size)]
    pub key_buffer_size: Option<u64>,
    /// In-process: directory for sort runs (ORDER BY beyond sort_buffer_size)
    /// [default: the system temporary directory].
    #[arg(long)]
    pub tmpdir: Option<PathBuf>,
}
