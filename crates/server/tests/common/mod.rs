//! Shared helpers for the server integration tests: starting/stopping a server under test on a
//! free port with a private data directory, and small connection utilities.
//!
//! By default the server under test is the `strata` binary of this package. For validating the
//! tests themselves against the reference implementation, set `STRATA_TEST_ORACLE=mariadb`: the
//! helper then starts a private `mariadbd` (initialised with `mariadb-install-db`) instead.
#![allow(dead_code)]

pub mod dump;

use std::fs;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Field `field` (e.g. `"VmRSS:"`, `"Threads:"`) of `/proc/<pid>/status`, in its unit
/// (KiB for the memory fields).
pub fn proc_status(pid: u32, field: &str) -> u64 {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
}

/// Resident memory of process `pid`, KiB.
pub fn rss_kib(pid: u32) -> u64 {
    proc_status(pid, "VmRSS:")
}

/// True when running under CI (env `CI` set to anything but "" / "0" / "false").
pub fn in_ci() -> bool {
    match std::env::var("CI") {
        Ok(v) => !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false")),
        Err(_) => false,
    }
}

/// Whether an executable named `name` is on PATH.
pub fn have_program(name: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        let p = dir.join(name);
        p.is_file()
            && fs::metadata(&p)
                .map(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    m.permissions().mode() & 0o111 != 0
                })
                .unwrap_or(false)
    })
}

/// For tests that need an external program: returns false (and prints a note) when the program is
/// missing outside CI, so the caller can skip; panics when it is missing under CI.
pub fn require_program(name: &str, test: &str) -> bool {
    if have_program(name) {
        return true;
    }
    if in_ci() {
        panic!(
            "{test}: required program `{name}` is not installed (CI is set, so this is a failure)"
        );
    }
    eprintln!(
        "NOTE: {test} skipped: program `{name}` is not installed (set CI=1 to make this a failure)"
    );
    false
}

/// Picks a TCP port that is currently free on 127.0.0.1.
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    l.local_addr().unwrap().port()
}

/// Which server implementation the helper starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Strata,
    MariaDb,
}

impl Flavor {
    pub fn from_env() -> Flavor {
        match std::env::var("STRATA_TEST_ORACLE").as_deref() {
            Ok("mariadb") | Ok("mariadbd") => Flavor::MariaDb,
            _ => Flavor::Strata,
        }
    }
}

/// A server process started by a test. Dropping it stops the process (SIGTERM, then SIGKILL after
/// a grace period); only the PID this struct started is ever signalled.
pub struct TestServer {
    pub flavor: Flavor,
    pub port: u16,
    pub datadir: PathBuf,
    extra_args: Vec<String>,
    child: Option<Child>,
    log_path: PathBuf,
    /// Owns the temporary directory (datadir + logs) when we created it.
    _tmp: Option<tempfile::TempDir>,
}

impl TestServer {
    /// Starts a server with a fresh temporary data directory.
    pub fn start(extra_args: &[&str]) -> TestServer {
        TestServer::start_flavor(Flavor::from_env(), extra_args)
    }

    /// Starts a server of the given implementation (whatever `STRATA_TEST_ORACLE` says), with a
    /// fresh temporary data directory: for tests that need a second, reference server beside
    /// the one under test.
    pub fn start_flavor(flavor: Flavor, extra_args: &[&str]) -> TestServer {
        let tmp = tempfile::Builder::new()
            .prefix("strata-test-")
            .tempdir()
            .expect("create temp dir");
        let datadir = tmp.path().join("data");
        let mut s = TestServer {
            flavor,
            port: 0,
            datadir,
            extra_args: extra_args.iter().map(|s| s.to_string()).collect(),
            child: None,
            log_path: tmp.path().join("server.log"),
            _tmp: Some(tmp),
        };
        s.launch();
        s
    }

    /// Starts a server whose data directory is `datadir` (created if absent; a test
    /// that mounts a filesystem there owns it); the log goes to a temporary directory.
    pub fn start_at(datadir: &Path, extra_args: &[&str]) -> TestServer {
        let tmp = tempfile::Builder::new()
            .prefix("strata-test-")
            .tempdir()
            .expect("create temp dir");
        let mut s = TestServer {
            flavor: Flavor::from_env(),
            port: 0,
            datadir: datadir.to_path_buf(),
            extra_args: extra_args.iter().map(|s| s.to_string()).collect(),
            child: None,
            log_path: tmp.path().join("server.log"),
            _tmp: Some(tmp),
        };
        s.launch();
        s
    }

    /// The PID of the server process, while it runs (for /proc measurements).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Contents of the server's stdout/stderr log so far (for failure messages).
    pub fn log_tail(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = fs::File::open(&self.log_path) {
            let _ = f.read_to_string(&mut s);
        }
        let lines: Vec<&str> = s.lines().collect();
        let from = lines.len().saturating_sub(40);
        lines[from..].join("\n")
    }

    fn launch(&mut self) {
        assert!(self.child.is_none(), "server already running");
        fs::create_dir_all(&self.datadir).expect("create datadir");
        let port = free_port();
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .expect("open server log");
        let mut cmd = match self.flavor {
            Flavor::Strata => {
                let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
                c.arg("server")
                    .arg("--port")
                    .arg(port.to_string())
                    .arg("--bind")
                    .arg("127.0.0.1")
                    .arg("--datadir")
                    .arg(&self.datadir);
                c
            }
            Flavor::MariaDb => {
                if !self.datadir.join("mysql").exists() {
                    mariadb_install_db(&self.datadir, &self.log_path);
                }
                let sock = self.datadir.parent().unwrap().join("mariadb.sock");
                let mut c = Command::new("mariadbd");
                c.arg("--no-defaults")
                    .arg("--user=root")
                    .arg(format!("--datadir={}", self.datadir.display()))
                    .arg(format!("--port={port}"))
                    .arg("--bind-address=127.0.0.1")
                    .arg(format!("--socket={}", sock.display()))
                    .arg("--skip-log-bin")
                    .arg("--skip-grant-tables")
                    .arg("--max-connections=500");
                c
            }
        };
        cmd.args(&self.extra_args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("failed to spawn server {:?}: {e}", cmd.get_program()));
        self.child = Some(child);
        self.port = port;
        self.wait_ready(Duration::from_secs(20));
    }

    fn wait_ready(&mut self, timeout: Duration) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                panic!(
                    "server exited during startup with {status}; log:\n{}",
                    self.log_tail()
                );
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            if start.elapsed() > timeout {
                self.kill_hard();
                panic!(
                    "server did not accept connections on port {} within {:?}; log:\n{}",
                    self.port,
                    timeout,
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends SIGTERM to the server we started and waits for it to exit (up to 60 s, then SIGKILL
    /// and panic). Returns the exit status.
    pub fn stop(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("server not running");
        let pid = child.id() as libc::pid_t;
        // SAFETY: plain kill(2) on the PID of a child process we spawned and have not reaped.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "server did not exit within 60 s of SIGTERM; log:\n{}",
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the server cleanly (asserting a successful exit) and starts it again on the same
    /// data directory (on a new free port).
    pub fn restart(&mut self) {
        let status = self.stop();
        assert_clean_exit(self.flavor, status, &self.log_tail());
        self.launch();
    }

    /// SIGKILL: the server dies at whatever instruction it is on, as in a crash (the
    /// kernel keeps what was written; only what was fsynced survives a power cut).
    pub fn crash(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same data directory (after [`TestServer::crash`]).
    pub fn start_again(&mut self) {
        self.launch();
    }

    /// Whether the process we started is still running.
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => c.try_wait().unwrap().is_none(),
            None => false,
        }
    }

    fn kill_hard(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A SIGTERM shutdown must be a clean exit: status 0 (a server that dies *by* the signal did not
/// run its shutdown path and flush).
pub fn assert_clean_exit(flavor: Flavor, status: ExitStatus, log: &str) {
    if flavor == Flavor::MariaDb {
        return; // mariadbd exits 0 too, but we do not own its behaviour
    }
    assert!(
        status.success(),
        "server did not shut down cleanly on SIGTERM: {status}; log:\n{log}"
    );
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop();
        }
    }
}

/// Creates a MariaDB data directory. Runs are serialised within a test process and retried:
/// a CI run once saw one of two concurrent `mariadb-install-db` runs fail on a fresh machine,
/// and a reference server that cannot start says nothing about Strata. A final failure
/// panics with the tool's own output so the cause is visible.
fn mariadb_install_db(datadir: &Path, log_path: &Path) {
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _serialised = INSTALL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut last = String::new();
    for attempt in 1..=3 {
        if attempt > 1 {
            // A failed bootstrap can leave a half-made directory behind.
            let _ = fs::remove_dir_all(datadir);
            fs::create_dir_all(datadir).expect("create datadir");
            std::thread::sleep(Duration::from_secs(1));
        }
        let attempt_log = log_path.with_extension(format!("install-{attempt}.log"));
        let log = fs::File::create(&attempt_log).expect("create install log");
        let status = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg("--user=root")
            .arg(format!("--datadir={}", datadir.display()))
            .arg("--auth-root-authentication-method=normal")
            .stdout(log.try_clone().expect("clone install log"))
            .stderr(log)
            .status()
            .expect("run mariadb-install-db");
        if status.success() {
            return;
        }
        last = fs::read_to_string(&attempt_log).unwrap_or_default();
        eprintln!("mariadb-install-db attempt {attempt} failed ({status}):\n{last}");
    }
    let tail: Vec<&str> = last.lines().rev().take(40).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    panic!(
        "mariadb-install-db failed three times; its last output:\n{}",
        tail.join("\n")
    );
}

/// Connection options for root with an empty password on 127.0.0.1:`port`.
pub fn opts(port: u16, db: Option<&str>) -> mysql::Opts {
    mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("root"))
        .pass(None::<String>)
        .db_name(db)
        .prefer_socket(false)
        .into()
}

/// Connects (retrying briefly) as root to 127.0.0.1:`port`.
pub fn connect(port: u16, db: Option<&str>) -> mysql::Conn {
    let start = Instant::now();
    loop {
        match mysql::Conn::new(opts(port, db)) {
            Ok(c) => return c,
            Err(e) if start.elapsed() < Duration::from_secs(10) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("cannot connect to 127.0.0.1:{port}: {e}"),
        }
    }
}
