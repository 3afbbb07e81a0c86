//! Runs `tests/sysbench/run.sh` (the standard sysbench OLTP tests, prepare/run/cleanup in both
//! prepared-statement modes) against a freshly started server, once with InnoDB tables (the
//! `btree` engine) and once with MyISAM tables (`heap`). Needs the `sysbench` program:
//! missing -> failure under CI, skipped with a note otherwise. `SB_*` variables are passed on to
//! the script (see its header), e.g. `SB_TIME=1` for a quicker run.

use crate::common;

use std::path::Path;
use std::process::Command;

#[test]
fn sysbench_oltp_suite_innodb() {
    run_suite("innodb");
}

#[test]
fn sysbench_oltp_suite_myisam() {
    run_suite("myisam");
}

fn run_suite(engine: &str) {
    if !common::require_program("sysbench", "sysbench_oltp_suite") {
        return;
    }
    let server = common::TestServer::start(&[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sysbench/run.sh");
    let logdir = tempfile::Builder::new()
        .prefix("strata-sysbench-")
        .tempdir()
        .unwrap();
    let out = Command::new("bash")
        .arg(&script)
        .arg(server.port.to_string())
        .env("SB_LOGDIR", logdir.path())
        .env("SB_ENGINE", engine)
        .output()
        .expect("run tests/sysbench/run.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        out.status.success(),
        "sysbench suite on {engine} failed ({}); server log tail:\n{}",
        out.status,
        server.log_tail()
    );
}
