//! Real client programs and drivers against a freshly started server, each suite a subprocess
//! under `tests/clients/` that asserts on what its client sees:
//! * `interactive/mariadb_tty.py`: the `mariadb` command-line client typed at through a
//!   terminal (tmux), reading the screen back;
//! * `python/test_pymysql.py`: PyMySQL (text protocol);
//! * `python/test_procedures.py`: PyMySQL calling stored procedures (a CALL's several result
//!   sets, OUT parameters, 1312 for a client without CLIENT_MULTI_RESULTS);
//! * `python/test_connector_prepared.py`: mysql-connector-python with server-side prepared
//!   statements (binary protocol), pure-Python and C-extension implementations;
//! * `java/`: Connector/J with `useServerPrepStmts=true&cachePrepStmts=true` (Maven, JUnit);
//! * `debezium/`: Debezium's MySQL connector in its embedded engine, streaming the binary log
//!   after its initial snapshot (Maven, JUnit; the server runs with `--log-bin`);
//! * `go/`: go-sql-driver/mysql with `interpolateParams=false` (`go test`);
//! * `django/run.py`: a Django 5.2 project through migrate (three migrations and back),
//!   `manage.py test`, dumpdata/loaddata and ORM queries;
//! * `python/test_cdc.py`: python-mysql-replication streaming row events from the binary
//!   log (commit order, before/after images, column names from FULL row metadata);
//! * `python/test_sqlalchemy.py`: SQLAlchemy 2 (create_all, reflection, savepoints, upserts,
//!   window functions) and an Alembic autogenerate / upgrade / downgrade;
//! * `gorm/`: GORM AutoMigrate, associations, Preload, nested transactions, upserts;
//! * `node/`: Node's mysql2 (errors, multi-statements, prepared statements, a pool);
//! * `tools/tools.py`: `mariadb-dump` round trips (into the same server and into a MariaDB
//!   beside it), `mariadb-admin`, `mariadb-show`, `mariadb-check`.
//!
//! The server's port reaches each suite as `STRATA_PORT`. A missing toolchain or package is a
//! failure under CI (`.ci/run` installs them) and a skip with a note elsewhere. A failing suite
//! fails its test with the client's whole output and the server log's tail.

use crate::common;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::TestServer;

/// `tests/clients/<sub>` in the source tree.
fn clients_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/clients")
        .join(sub)
}

/// Skips (outside CI) or fails (under CI) when `ok` is false.
fn require(ok: bool, what: &str, test: &str) -> bool {
    if ok {
        return true;
    }
    if common::in_ci() {
        panic!("{test}: {what} is not available (CI is set, so this is a failure; .ci/run installs it)");
    }
    eprintln!("NOTE: {test} skipped: {what} is not available (set CI=1 to make this a failure)");
    false
}

/// Whether `python3` can import every module in `modules`.
fn python_has(modules: &[&str]) -> bool {
    let code = modules
        .iter()
        .map(|m| format!("import {m}"))
        .collect::<Vec<_>>()
        .join("; ");
    Command::new("python3")
        .arg("-c")
        .arg(code)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `cmd` in `dir` with the server's address in the environment, failing the test with the
/// suite's output if it exits unsuccessfully or outlives `limit` (then it is killed). Returns
/// the combined output.
fn run_suite(
    server: &TestServer,
    name: &str,
    dir: &Path,
    cmd: &mut Command,
    limit: Duration,
) -> String {
    let logs = tempfile::Builder::new()
        .prefix("strata-drivers-")
        .tempdir()
        .expect("temp dir for suite output");
    let out_path = logs.path().join("stdout");
    let err_path = logs.path().join("stderr");
    let started = Instant::now();
    let mut child = cmd
        .current_dir(dir)
        .env("STRATA_HOST", "127.0.0.1")
        .env("STRATA_PORT", server.port.to_string())
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("suite stdout file"))
        .stderr(File::create(&err_path).expect("suite stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("{name}: cannot start {:?}: {e}", cmd.get_program()));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for suite") {
            break Some(status);
        }
        if started.elapsed() > limit {
            // Only the process this test started is killed.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |p: &Path| {
        let mut s = String::new();
        if let Ok(mut f) = File::open(p) {
            let _ = f.read_to_string(&mut s);
        }
        s
    };
    let output = format!(
        "----- stdout -----\n{}\n----- stderr -----\n{}",
        read(&out_path),
        read(&err_path)
    );
    match status {
        Some(s) if s.success() => {
            eprintln!("{name}: passed in {:.1?}", started.elapsed());
            output
        }
        Some(s) => panic!(
            "{name} failed ({s}) after {:.1?}:\n{output}\n----- server log tail -----\n{}",
            started.elapsed(),
            server.log_tail()
        ),
        None => panic!(
            "{name} did not finish within {limit:?} (killed):\n{output}\n----- server log tail -----\n{}",
            server.log_tail()
        ),
    }
}

#[test]
fn mariadb_client_interactive() {
    let test = "mariadb_client_interactive";
    if !common::require_program("mariadb", test)
        || !common::require_program("tmux", test)
        || !common::require_program("python3", test)
    {
        return;
    }
    let server = TestServer::start(&[]);
    let dir = clients_dir("interactive");
    let out = run_suite(
        &server,
        test,
        &dir,
        Command::new("python3").arg("mariadb_tty.py"),
        Duration::from_secs(120),
    );
    assert!(out.contains(" passed, 0 failed"), "no summary line:\n{out}");
}

/// Runs one pytest file of `tests/clients/python` with `env` added to its environment.
fn pytest(test: &str, file: &str, modules: &[&str], env: &[(&str, &str)]) {
    pytest_on(test, file, modules, env, &[]);
}

/// [`pytest`] against a server started with `server_args`.
fn pytest_on(test: &str, file: &str, modules: &[&str], env: &[(&str, &str)], server_args: &[&str]) {
    if !common::require_program("python3", test)
        || !require(
            python_has(modules),
            &format!(
                "python3 module(s) {} (pip install -r tests/clients/python/requirements.txt)",
                modules.join(", ")
            ),
            test,
        )
    {
        return;
    }
    let server = TestServer::start(server_args);
    let dir = clients_dir("python");
    let out = run_suite(
        &server,
        test,
        &dir,
        Command::new("python3")
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", file])
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .envs(env.iter().copied()),
        Duration::from_secs(180),
    );
    // pytest exits 0 only when tests ran and passed; make sure some did.
    assert!(
        out.lines()
            .any(|l| l.contains(" passed") && !l.contains("failed")),
        "pytest reported no passed tests:\n{out}"
    );
}

/// python-mysql-replication streaming the binary log as a CDC pipeline would.
#[test]
fn cdc_python_mysql_replication() {
    pytest_on(
        "cdc_python_mysql_replication",
        "test_cdc.py",
        &["pytest", "pymysql", "pymysqlreplication"],
        &[],
        &["--log-bin", "--binlog-row-metadata=FULL"],
    );
}

#[test]
fn pymysql() {
    pytest("pymysql", "test_pymysql.py", &["pytest", "pymysql"], &[]);
}

#[test]
fn pymysql_procedures() {
    pytest(
        "pymysql_procedures",
        "test_procedures.py",
        &["pytest", "pymysql"],
        &[],
    );
}

#[test]
fn mysql_connector_python_prepared() {
    pytest(
        "mysql_connector_python_prepared",
        "test_connector_prepared.py",
        &["pytest", "pymysql", "mysql.connector"],
        &[],
    );
}

#[test]
fn connector_j_server_prepared() {
    maven_suite("connector_j_server_prepared", "java", &[]);
}

/// Debezium's MySQL connector (its embedded engine, no Kafka) streaming the binary log: the
/// initial snapshot, then every committed change once, in commit order, with before/after
/// images (`tests/clients/debezium`).
#[test]
fn cdc_debezium() {
    if common::Flavor::from_env() == common::Flavor::MariaDb {
        // Debezium's MySQL connector reads MySQL's GTIDs; MariaDB has a connector of its own.
        eprintln!("NOTE: cdc_debezium skipped: the MySQL connector does not follow MariaDB");
        return;
    }
    maven_suite("cdc_debezium", "debezium", &["--log-bin", "--server-id=7"]);
}

/// Runs the Maven project `tests/clients/<sub>`'s JUnit tests against a server started with
/// `server_args`, and checks from Surefire's reports that some ran.
fn maven_suite(test: &str, sub: &str, server_args: &[&str]) {
    if !common::require_program("java", test) || !common::require_program("mvn", test) {
        return;
    }
    let server = TestServer::start(server_args);
    let dir = clients_dir(sub);
    // Reports of an earlier run must not count for this one.
    let reports = dir.join("target/surefire-reports");
    let _ = std::fs::remove_dir_all(&reports);
    let out = run_suite(
        &server,
        test,
        &dir,
        Command::new("mvn").args([
            "-q",
            "-B",
            "test",
            &format!("-Dstrata.port={}", server.port),
        ]),
        Duration::from_secs(300),
    );
    // Surefire's report says how many tests ran; -q prints nothing on success.
    let mut ran = 0;
    for entry in std::fs::read_dir(&reports)
        .unwrap_or_else(|e| panic!("no surefire reports in {}: {e}\n{out}", reports.display()))
        .flatten()
    {
        let p = entry.path();
        if p.extension().is_some_and(|x| x == "txt") {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            if let Some(n) = text
                .split("Tests run: ")
                .nth(1)
                .and_then(|r| r.split(',').next())
                .and_then(|n| n.trim().parse::<u32>().ok())
            {
                ran += n;
            }
        }
    }
    assert!(ran > 0, "{test}: the Maven suite ran no tests:\n{out}");
    eprintln!("{test}: {ran} JUnit tests passed");
}

#[test]
fn go_sql_driver() {
    let test = "go_sql_driver";
    if !common::require_program("go", test) {
        return;
    }
    let server = TestServer::start(&[]);
    let dir = clients_dir("go");
    let out = run_suite(
        &server,
        test,
        &dir,
        Command::new("go").args(["test", "-count=1", "-v", "./..."]),
        Duration::from_secs(300),
    );
    let passed = out.lines().filter(|l| l.starts_with("--- PASS")).count();
    assert!(passed > 0, "go test ran no tests:\n{out}");
    eprintln!("{test}: {passed} Go tests passed");
}

#[test]
fn sqlalchemy_alembic() {
    // SQLAlchemy's Enum is a native ENUM column on both servers.
    pytest(
        "sqlalchemy_alembic",
        "test_sqlalchemy.py",
        &["pytest", "pymysql", "sqlalchemy", "alembic"],
        &[],
    );
}

/// The number in a summary line such as `django: 35 checks passed`.
fn checks_passed(out: &str, prefix: &str) -> u32 {
    out.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter_map(|r| r.strip_suffix(" checks passed"))
        .find_map(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn django() {
    let test = "django";
    if !common::require_program("python3", test)
        || !require(
            python_has(&["django", "pymysql"]),
            "python3 modules django, pymysql (pip install -r tests/clients/python/requirements.txt)",
            test,
        )
    {
        return;
    }
    let server = TestServer::start(&[]);
    let out = run_suite(
        &server,
        test,
        &clients_dir("django"),
        Command::new("python3")
            .arg("run.py")
            .env("PYTHONDONTWRITEBYTECODE", "1"),
        Duration::from_secs(600),
    );
    let n = checks_passed(&out, "django: ");
    assert!(n > 0, "the Django run printed no summary:\n{out}");
    eprintln!("{test}: {n} checks passed");
}

#[test]
fn gorm() {
    let test = "gorm";
    if !common::require_program("go", test) {
        return;
    }
    let server = TestServer::start(&[]);
    let out = run_suite(
        &server,
        test,
        &clients_dir("gorm"),
        Command::new("go").args(["test", "-count=1", "-v", "./..."]),
        Duration::from_secs(300),
    );
    let passed = out.lines().filter(|l| l.starts_with("--- PASS")).count();
    assert!(passed > 0, "go test ran no GORM tests:\n{out}");
    eprintln!("{test}: {passed} Go tests passed");
}

#[test]
fn node_mysql2() {
    let test = "node_mysql2";
    let dir = clients_dir("node");
    if !common::require_program("node", test)
        || !require(
            dir.join("node_modules/mysql2/package.json").is_file(),
            "the mysql2 package (cd tests/clients/node && npm ci)",
            test,
        )
    {
        return;
    }
    let server = TestServer::start(&[]);
    let out = run_suite(
        &server,
        test,
        &dir,
        Command::new("node").args(["--test", "--test-reporter=tap"]),
        Duration::from_secs(180),
    );
    let count = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|n| n.trim().parse::<u32>().ok())
    };
    let passed = count("# pass ").unwrap_or(0);
    assert!(
        passed > 0 && count("# fail ") == Some(0),
        "node --test passed no tests or failed some:\n{out}"
    );
    eprintln!("{test}: {passed} Node tests passed");
}

#[test]
fn mariadb_tools() {
    let test = "mariadb_tools";
    for program in [
        "python3",
        "mariadb",
        "mariadb-dump",
        "mariadb-admin",
        "mariadb-show",
        "mariadb-check",
    ] {
        if !common::require_program(program, test) {
            return;
        }
    }
    if !require(python_has(&["pymysql"]), "python3 module pymysql", test) {
        return;
    }
    let server = TestServer::start(&[]);
    // The dump is also loaded into a MariaDB beside the server under test, when there is one
    // (.ci/run installs it).
    let have_mariadbd =
        common::have_program("mariadbd") && common::have_program("mariadb-install-db");
    if !have_mariadbd {
        assert!(
            !common::in_ci(),
            "{test}: mariadbd is not installed (CI is set, so this is a failure)"
        );
        eprintln!("NOTE: {test}: no mariadbd, so the dump is not loaded into MariaDB");
    }
    let peer = have_mariadbd.then(|| TestServer::start_flavor(common::Flavor::MariaDb, &[]));
    let mut cmd = Command::new("python3");
    cmd.arg("tools.py").env("PYTHONDONTWRITEBYTECODE", "1");
    if let Some(p) = &peer {
        cmd.env("STRATA_PEER_PORT", p.port.to_string());
    }
    let out = run_suite(
        &server,
        test,
        &clients_dir("tools"),
        &mut cmd,
        Duration::from_secs(300),
    );
    let n = checks_passed(&out, "tools: ");
    assert!(n > 0, "the tools run printed no summary:\n{out}");
    eprintln!("{test}: {n} checks passed");
}
