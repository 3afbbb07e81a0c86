//! Conformance against an external corpus: runs every `*.test` script of the public
//! sqllogictest suite (results regenerated against MySQL 8; format in its README) that lives
//! beside the repository in `../shared/sqllogictest/`, once per engine (InnoDB, MyISAM), and
//! reports per file how many records pass. The scripts are read at test time, never copied.
//!
//! * Default: starts the `strata` binary (`--default-storage-engine innodb`, then `myisam`),
//!   runs each file in a fresh database over the MySQL text protocol, and checks each file's
//!   passed count against `tests/corpus-baseline.txt`: fewer passes than recorded fails the
//!   test; more prints the line to update. The run itself may have failing records.
//! * `STRATA_CORPUS_DIR=<dir>`: another corpus directory. When the directory does not exist
//!   the test says so and passes (skipped).
//! * `STRATA_SLT_TARGET=host:port`: runs against an already-running server (label from
//!   `STRATA_SLT_LABEL`, default `external`; the engine is set per session); no baseline gate.
//!   `STRATA_TEST_ORACLE=mariadb` starts a private MariaDB instead of strata (label `mariadb`).
//! * `STRATA_CORPUS_FILTER=<substring>`: only files whose path contains it.
//! * `STRATA_CORPUS_ENGINE=innodb|myisam`: only that engine.
//! * `STRATA_CORPUS_TIMEOUT=<seconds>`: the per-record client timeout (default 2).
//! * `STRATA_CORPUS_UPDATE=1`: rewrite the baseline lines of the files run.
//!
//! The per-file table, the failure categories and the records slower than a second go to
//! stdout (written past the test harness' capture, so CI logs show them); every failure is
//! listed in `target/corpus-failures-<engine>.txt`. The last line is
//! `corpus: N passed, M failed, K skipped`.

mod common;

#[path = "corpus/baseline.rs"]
mod baseline;
#[path = "corpus/parser.rs"]
mod parser;
#[path = "corpus/report.rs"]
mod report;
#[path = "corpus/runner.rs"]
mod runner;
#[path = "corpus/values.rs"]
mod values;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use runner::{Endpoint, FileResult, Server};

/// Serialises the baseline's read-modify-write between the two engines' tests, which the
/// test harness runs in parallel.
static BASELINE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus_dir() -> PathBuf {
    match std::env::var("STRATA_CORPUS_DIR") {
        Ok(d) if !d.is_empty() => PathBuf::from(d),
        _ => repo_root().join("../shared/sqllogictest"),
    }
}

/// `target/` of this build (the parent of Cargo's per-target temp dir).
fn target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).to_path_buf()
}

fn baseline_path() -> PathBuf {
    repo_root().join("tests/corpus-baseline.txt")
}

/// Every `*.test` file under `dir` (recursively) as (path, name relative to `dir` with `/`).
fn test_files(dir: &Path, filter: &str) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(PathBuf, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else if p.extension().is_some_and(|x| x == "test") {
                let rel = p.strip_prefix(base).unwrap_or(&p);
                let name = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((p, name));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.retain(|(_, name)| name.contains(filter));
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// The server one engine's pass runs against.
struct Target {
    endpoint: Endpoint,
    label: String,
    external: bool,
    server: Option<common::TestServer>,
    /// Times the server was restarted to end a statement that timed out.
    restarts: usize,
}

impl Server for Target {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn after_timeout(&mut self, conn_id: u32) {
        let killed = self
            .endpoint
            .connect(None)
            .and_then(|mut c| {
                c.query_drop(format!("KILL {conn_id}"))
                    .map_err(|e| runner::describe(&e))
            })
            .is_ok();
        if killed {
            return;
        }
        // Strata has no KILL yet: a server we started is restarted on its data directory
        // (SIGKILL to our own child, then recovery), which is the only way to end the
        // statement. Without this, each timed-out statement keeps a core busy and the
        // records after it time out as well.
        if let Some(server) = self.server.as_mut() {
            server.crash();
            server.start_again();
            self.endpoint.port = server.port;
            self.restarts += 1;
        }
    }
}

impl Target {
    fn new(engine: &str, timeout: Duration) -> Target {
        let password = std::env::var("STRATA_SLT_PASSWORD").ok();
        if let Ok(t) = std::env::var("STRATA_SLT_TARGET") {
            let (host, port) = t
                .rsplit_once(':')
                .expect("STRATA_SLT_TARGET must be host:port");
            return Target {
                endpoint: Endpoint {
                    host: host.to_string(),
                    port: port.parse().expect("STRATA_SLT_TARGET port"),
                    password,
                    session_engine: Some(engine.to_string()),
                    timeout,
                },
                label: std::env::var("STRATA_SLT_LABEL").unwrap_or_else(|_| "external".into()),
                external: true,
                server: None,
                restarts: 0,
            };
        }
        let server = common::TestServer::start(&["--default-storage-engine", engine]);
        let label = match server.flavor {
            common::Flavor::Strata => "strata",
            common::Flavor::MariaDb => "mariadb",
        };
        Target {
            endpoint: Endpoint {
                host: "127.0.0.1".into(),
                port: server.port,
                password: None,
                session_engine: None,
                timeout,
            },
            label: label.into(),
            external: false,
            server: Some(server),
            restarts: 0,
        }
    }

    /// Whether this run is the one the baseline describes.
    fn gated(&self) -> bool {
        !self.external && self.label == "strata"
    }
}

/// Writes to the process' stdout directly, past libtest's capture of `print!`.
fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// Runs every file on one engine; returns the results and whether the baseline applies.
fn run_engine(
    engine: &str,
    files: &[(PathBuf, String)],
    timeout: Duration,
) -> (Vec<FileResult>, bool, String, usize) {
    let mut target = Target::new(engine, timeout);
    eprintln!(
        "corpus: {} files against {} {engine} on {}:{}",
        files.len(),
        target.label,
        target.endpoint.host,
        target.endpoint.port
    );
    let mut results = Vec::new();
    for (path, name) in files {
        match runner::run_file(&mut target, path, name) {
            Ok(r) => {
                eprintln!(
                    "corpus {engine} {name}: {} passed, {} failed, {} skipped ({:.1?})",
                    r.passed(),
                    r.failed(),
                    r.skipped(),
                    r.elapsed
                );
                results.push(r);
            }
            // A server this test started says whether it is still up and what it
            // logged: a refused connection is then told apart from a crash.
            Err(e) => {
                let server = match target.server.as_mut() {
                    Some(s) => format!(
                        "\nserver running: {}; its log:\n{}",
                        s.is_running(),
                        s.log_tail()
                    ),
                    None => String::new(),
                };
                panic!("corpus {engine} {name}: {e}{server}")
            }
        }
    }
    let gated = target.gated();
    (results, gated, target.label, target.restarts)
}

// One test per engine, so that the harness runs the two in parallel (each mostly waits on
// its server; the run is about twice as fast on two cores).
#[test]
fn corpus_innodb() {
    run_corpus("innodb");
}

#[test]
fn corpus_myisam() {
    run_corpus("myisam");
}

/// Runs every corpus file on `engine` and applies the baseline gate.
fn run_corpus(engine: &str) {
    let dir = corpus_dir();
    if !dir.is_dir() {
        out(&format!(
            "corpus: SKIPPED: no corpus directory at {} (set STRATA_CORPUS_DIR)\n",
            dir.display()
        ));
        return;
    }
    let filter = std::env::var("STRATA_CORPUS_FILTER").unwrap_or_default();
    let files = test_files(&dir, &filter);
    assert!(
        !files.is_empty(),
        "no *.test files under {} (filter {filter:?})",
        dir.display()
    );
    let only = std::env::var("STRATA_CORPUS_ENGINE").unwrap_or_default();
    let timeout = Duration::from_secs_f64(
        std::env::var("STRATA_CORPUS_TIMEOUT")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(2.0),
    );
    let start = Instant::now();
    let mut measured = baseline::Baseline::new();
    let mut gated_any = false;
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    if !only.is_empty() && !only.eq_ignore_ascii_case(engine) {
        eprintln!("corpus: skipping {engine} (STRATA_CORPUS_ENGINE={only})");
        return;
    }
    {
        let (results, gated, label, restarts) = run_engine(engine, &files, timeout);
        let title = format!("corpus {} on {label} {engine}", dir.display());
        let mut table = Vec::new();
        let _ = report::print_table(&mut table, &title, &results);
        let _ = report::print_groups(&mut table, &results);
        let _ = report::print_slow(&mut table, &results);
        if restarts > 0 {
            table.extend_from_slice(
                format!("server restarted {restarts} time(s) to end a timed-out statement\n")
                    .as_bytes(),
            );
        }
        let fname = if label == "strata" {
            format!("corpus-failures-{engine}.txt")
        } else {
            format!("corpus-failures-{label}-{engine}.txt")
        };
        let fpath = target_dir().join(fname);
        match report::write_failures(&fpath, &format!("{label} {engine}"), &results) {
            Ok(()) => table
                .extend_from_slice(format!("failures listed in {}\n", fpath.display()).as_bytes()),
            Err(e) => table
                .extend_from_slice(format!("cannot write {}: {e}\n", fpath.display()).as_bytes()),
        }
        out(&String::from_utf8_lossy(&table));
        for r in &results {
            passed += r.passed();
            failed += r.failed();
            skipped += r.skipped();
            if gated {
                measured.insert((engine.to_string(), r.name.clone()), r.passed());
            }
        }
        gated_any |= gated;
    }

    let mut regressions = Vec::new();
    if gated_any {
        let _guard = BASELINE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let path = baseline_path();
        let base = baseline::load(&path).unwrap_or_else(|e| panic!("baseline: {e}"));
        let (worse, better) = baseline::compare(&base, &measured);
        if std::env::var("STRATA_CORPUS_UPDATE").is_ok_and(|v| v == "1") {
            let mut updated = base.clone();
            updated.extend(measured.clone());
            baseline::save(&path, &updated)
                .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
            out(&format!("corpus: baseline {} rewritten\n", path.display()));
        } else {
            for c in &better {
                out(&format!(
                    "corpus: NOTICE {} {}: {} passed, baseline {}; update the line to `{} {} {}` (or run with STRATA_CORPUS_UPDATE=1)\n",
                    c.engine,
                    c.file,
                    c.passed,
                    c.baseline.map_or("none".to_string(), |n| n.to_string()),
                    c.engine,
                    c.file,
                    c.passed
                ));
            }
            regressions = worse;
        }
    }
    for c in &regressions {
        out(&format!(
            "corpus: REGRESSION {} {}: {} passed, baseline {}\n",
            c.engine,
            c.file,
            c.passed,
            c.baseline.unwrap_or(0)
        ));
    }
    out(&format!(
        "corpus: {engine} run took {:.1}s\ncorpus: {passed} passed, {failed} failed, {skipped} skipped\n",
        start.elapsed().as_secs_f64()
    ));
    assert!(
        regressions.is_empty(),
        "{} corpus file(s) pass fewer records than tests/corpus-baseline.txt records",
        regressions.len()
    );
}
