//! The named scenarios, one module each, and what they share: [`Ctx`] (the resolved
//! options: scaled sizes, durations and thread lists, how to open a target) and
//! [`Out`] (prints each table as soon as it is measured, writes its chart, and
//! collects the tables and the halves that could not be measured).

mod groupcommit;
mod join;
mod latch;
mod mmap;
mod oltp;
mod pagecache;
mod selfjoin;
mod tpch;

use crate::args::{BenchArgs, Scenario};
use crate::client::{Client, Target};
use crate::inprocess::ServerSettings;
use crate::report::{self, Cell, Table};
use crate::wire::WireOptions;
use std::path::Path;
use std::time::Duration;

/// The options of one run, with `--scale` applied.
pub struct Ctx {
    pub args: BenchArgs,
    pub settings: ServerSettings,
    pub wire: Option<WireOptions>,
}

impl Ctx {
    pub fn new(args: BenchArgs) -> Result<Ctx, String> {
        let wire = if args.host.is_some() || args.port.is_some() {
            let o = WireOptions {
                host: args.host.clone().unwrap_or_else(|| "127.0.0.1".into()),
                port: args.port.unwrap_or(3306),
                user: args.user.clone(),
                password: args.password.clone(),
            };
            o.check_loopback()?;
            Some(o)
        } else {
            None
        };
        if wire.is_some() && args.tmpfs_dir.is_some() && args.scenario == Scenario::Pagecache {
            eprintln!("note: --tmpfs-dir is used in-process only; over the wire the server's data directory cannot be moved");
        }
        let mut settings = ServerSettings::defaults(std::path::PathBuf::new());
        // Seeds 002 and 003 measure contention on a server whose caches hold the whole
        // 2,000,000-row table, not I/O: in-process, these scenarios size the key cache
        // and the buffer pool so (at the default scale) unless told otherwise.
        if matches!(args.scenario, Scenario::Selfjoin | Scenario::Latch) {
            let s = args.scale.clamp(0.001, 1.0);
            settings.key_buffer_size = ((512u64 << 20) as f64 * s) as u64;
            settings.innodb_buffer_pool_size = ((1u64 << 30) as f64 * s) as u64;
            settings.key_buffer_size = settings.key_buffer_size.max(8 << 20);
            settings.innodb_buffer_pool_size = settings.innodb_buffer_pool_size.max(32 << 20);
        }
        if let Some(v) = args.innodb_buffer_pool_size {
            settings.innodb_buffer_pool_size = v;
        }
        if let Some(v) = args.key_buffer_size {
            settings.key_buffer_size = v;
        }
        if let Some(d) = &args.tmpdir {
            settings.tmpdir = d.clone();
        }
        if args.tables == 0 {
            return Err("--tables must be at least 1".into());
        }
        if let Some(t) = &args.threads {
            if t.is_empty() || t.contains(&0) {
                return Err("--threads takes positive counts, e.g. 1,4,16".into());
            }
        }
        Ok(Ctx {
            args,
            settings,
            wire,
        })
    }

    pub fn scale(&self) -> f64 {
        self.args.scale
    }

    /// The main target: a fresh in-process server (in --datadir or a temporary
    /// directory), or the server given by --host/--port.
    pub fn target(&self) -> Result<Target, String> {
        match &self.wire {
            Some(o) => Ok(Target::Wire {
                opts: o.clone(),
                datadir: self.args.datadir.clone(),
            }),
            None => Target::in_process(
                &self.settings,
                self.args.datadir.as_deref(),
                &std::env::temp_dir(),
            ),
        }
    }

    /// A fresh in-process server in a temporary directory under `parent`.
    pub fn target_under(&self, parent: &Path) -> Result<Target, String> {
        Target::in_process(&self.settings, None, parent)
    }

    /// Rows: the given or default count times the scale, at least `min`.
    pub fn rows(&self, default: u64, min: u64) -> u64 {
        let n = self.args.table_size.unwrap_or(default);
        ((n as f64 * self.scale()).round() as u64).max(min)
    }

    /// A count of repetitions or bytes, scaled, at least `min`.
    pub fn scaled(&self, n: u64, min: u64) -> u64 {
        ((n as f64 * self.scale()).round() as u64).max(min)
    }

    pub fn time(&self) -> Duration {
        Duration::from_secs_f64((self.args.time.unwrap_or(10.0) * self.scale()).max(0.05))
    }

    pub fn warmup(&self) -> Duration {
        Duration::from_secs_f64(self.args.warmup.unwrap_or(2.0) * self.scale())
    }

    /// The thread list: --threads or the seed's; below scale 1 only the counts up to
    /// max(4, largest × scale) are kept, so a smoke test never starts hundreds of
    /// threads.
    pub fn threads(&self, default: &[usize]) -> Vec<usize> {
        let list = self
            .args
            .threads
            .clone()
            .unwrap_or_else(|| default.to_vec());
        if self.scale() >= 1.0 {
            return list;
        }
        let largest = list.iter().copied().max().unwrap_or(1);
        let cap = ((largest as f64 * self.scale()).ceil() as usize).max(4);
        let kept: Vec<usize> = list.iter().copied().filter(|&t| t <= cap).collect();
        if kept.is_empty() {
            vec![list.iter().copied().min().unwrap_or(1)]
        } else {
            kept
        }
    }

    /// The two engines compared as A and B: --engine or the scenario's.
    pub fn engines(&self, default: [&str; 2]) -> Result<Vec<String>, String> {
        let list = self
            .args
            .engine
            .clone()
            .unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect());
        if list.is_empty() || list.len() > 2 {
            return Err("--engine takes one or two engines, e.g. MyISAM,InnoDB".into());
        }
        let mut out = Vec::new();
        for e in list {
            out.push(crate::schema::engine_sql(&e)?.to_string());
        }
        Ok(out)
    }

    /// The database a scenario uses for `engine`'s tables.
    pub fn db(engine: &str) -> String {
        format!("strata_bench_{}", engine.to_ascii_lowercase())
    }
}

/// Collects a scenario's results and prints them as they come.
pub struct Out {
    pub tables: Vec<Table>,
    /// Halves of an experiment that could not be measured, and why.
    pub unavailable: Vec<String>,
    svg_dir: Option<std::path::PathBuf>,
}

impl Out {
    pub fn new(svg_dir: Option<std::path::PathBuf>) -> Out {
        Out {
            tables: Vec::new(),
            unavailable: Vec::new(),
            svg_dir,
        }
    }

    pub fn table(&mut self, t: Table) -> Result<(), String> {
        println!("{}", report::render(&t));
        if let Some(dir) = &self.svg_dir {
            let path = crate::svg::write(dir, &t)?;
            println!("chart: {}\n", path.display());
        }
        self.tables.push(t);
        Ok(())
    }

    /// Records and prints that part of the experiment cannot run here.
    pub fn unavailable(&mut self, what: String) {
        println!("NOT MEASURED: {what}\n");
        self.unavailable.push(what);
    }
}

/// A cell from a measurement, or the error that prevented it.
pub fn cell(r: Result<report::Measure, String>) -> Cell {
    match r {
        Ok(m) => Cell::Measured(m),
        Err(e) => Cell::Missing(e),
    }
}

/// SET GLOBAL name=value, as a clear message on failure.
pub fn set_global(c: &mut dyn Client, name: &str, value: &str) -> Result<(), String> {
    c.exec(&format!("SET GLOBAL {name}={value}"))
        .map(|_| ())
        .map_err(|e| format!("SET GLOBAL {name}={value} failed ({e})"))
}

/// The value of a global variable, or None if the server does not know it.
pub fn get_global(c: &mut dyn Client, name: &str) -> Option<String> {
    c.scalar(&format!("SELECT @@GLOBAL.{name}")).ok().flatten()
}

/// Runs the scenario named in the options.
pub fn run(ctx: &Ctx, target: &Target, out: &mut Out) -> Result<(), String> {
    match ctx.args.scenario {
        Scenario::Oltp => oltp::run(ctx, target, out),
        Scenario::Mmap => mmap::run(ctx, target, out),
        Scenario::Join => join::run(ctx, target, out),
        Scenario::Selfjoin => selfjoin::run(ctx, target, out),
        Scenario::Latch => latch::run(ctx, target, out),
        Scenario::Pagecache => pagecache::run(ctx, target, out),
        Scenario::Groupcommit => groupcommit::run(ctx, target, out),
        Scenario::Tpch => tpch::run(ctx, target, out),
    }
}
