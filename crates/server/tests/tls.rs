//! TLS and caching_sha2_password's full authentication, through real clients against a
//! freshly started server:
//! * the certificates and RSA keys generated into the data directory at first start
//!   (their modes, kept across a restart), and given ones (`--ssl-cert/--ssl-key/--ssl-ca`);
//! * the `mariadb` CLI with `--ssl --ssl-verify-server-cert` against the generated CA
//!   (`\s` and `SHOW STATUS LIKE 'Ssl_cipher'`), and refusing another server's CA;
//! * `require_secure_transport`: plain TCP refused with 3159, TLS and the unix socket
//!   accepted, SET GLOBAL turning it off;
//! * caching_sha2_password's full authentication: inside TLS, and by RSA with the key
//!   asked for or already known, through the Rust `mysql` crate, PyMySQL,
//!   mysql-connector-python, go-sql-driver and Connector/J (`tests/clients/python/tls_check.py`,
//!   `tests/clients/go/tls_test.go`, `tests/clients/java/.../TlsTest.java`); each scenario
//!   runs on a server no one has logged in to, so the fast-authentication cache is empty;
//! * a client that sends SSLRequest and then stalls or sends garbage is dropped within
//!   connect_timeout, and the server keeps serving.
//!
//! Every client runs under a time limit. A missing toolchain is a skip outside CI and a
//! failure under it (`.ci/run` installs them).

use crate::common;

use common::{Flavor, TestServer};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Users of the authentication scenarios: root without a password, and one fresh user
/// per full-authentication case.
const USERS: &[&str] = &[
    "--user",
    "root",
    "--user",
    "app:secret",
    "--user",
    "app2:pw2",
    "--user",
    "app3:pw3",
    "--user",
    "gouser:gopw",
    "--user",
    "gorsa:rsapw",
    "--user",
    "javauser:javapw",
    "--user",
    "javarsa:rsapw",
];

fn sha2_server(extra: &[&str]) -> TestServer {
    let mut args = USERS.to_vec();
    args.extend_from_slice(&["--default-authentication-plugin", "caching_sha2_password"]);
    args.extend_from_slice(extra);
    TestServer::start_flavor(Flavor::Strata, &args)
}

fn clients_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/clients")
        .join(sub)
}

/// Runs `cmd` to its end or kills it after `limit`; returns (success, stdout + stderr).
fn run(cmd: &mut Command, limit: Duration) -> (bool, String) {
    let dir = tempfile::tempdir().expect("temp dir for output");
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()));
    let started = Instant::now();
    let ok = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.success();
        }
        if started.elapsed() > limit {
            // Only the process this test started.
            let _ = child.kill();
            let _ = child.wait();
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = format!(
        "{}{}",
        std::fs::read_to_string(out).unwrap_or_default(),
        std::fs::read_to_string(err).unwrap_or_default()
    );
    (ok, text)
}

fn mariadb(server: &TestServer, args: &[&str], sql: &str) -> (bool, String) {
    run(
        Command::new("mariadb")
            .args(["--no-defaults", "-h127.0.0.1", "-uroot", "--batch"])
            .arg(format!("-P{}", server.port))
            .args(args)
            .args(["-e", sql]),
        Duration::from_secs(30),
    )
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn generated_certificates_and_the_mariadb_cli() {
    let test = "generated_certificates_and_the_mariadb_cli";
    let mut server = TestServer::start_flavor(Flavor::Strata, &[]);
    let d = server.datadir.clone();
    for (f, want) in [
        ("ca.pem", 0o644),
        ("ca-key.pem", 0o600),
        ("server-cert.pem", 0o644),
        ("server-key.pem", 0o600),
        ("client-cert.pem", 0o644),
        ("client-key.pem", 0o600),
        ("private_key.pem", 0o600),
        ("public_key.pem", 0o644),
    ] {
        assert_eq!(mode(&d.join(f)), want, "mode of {f}");
    }
    assert!(
        server
            .log_tail()
            .contains("TLS (TLSv1.2,TLSv1.3): certificate"),
        "startup lines name the certificate:\n{}",
        server.log_tail()
    );
    let cert = std::fs::read(d.join("server-cert.pem")).unwrap();
    let rsa = std::fs::read(d.join("public_key.pem")).unwrap();
    server.restart();
    assert_eq!(
        std::fs::read(d.join("server-cert.pem")).unwrap(),
        cert,
        "a restart keeps the certificate"
    );
    assert_eq!(std::fs::read(d.join("public_key.pem")).unwrap(), rsa);

    let mut c = common::connect(server.port, None);
    use mysql::prelude::Queryable;
    let row: (String, String, String) = c
        .query_first("SELECT @@have_ssl, @@tls_version, @@ssl_cert")
        .unwrap()
        .unwrap();
    assert_eq!(row.0, "YES");
    assert_eq!(row.1, "TLSv1.2,TLSv1.3");
    assert!(row.2.ends_with("server-cert.pem"), "{}", row.2);
    let plain: Option<(String, String)> = c.query_first("SHOW STATUS LIKE 'Ssl_cipher'").unwrap();
    assert_eq!(plain, Some(("Ssl_cipher".into(), String::new())));

    if !common::require_program("mariadb", test) {
        return;
    }
    let ca = d.join("ca.pem");
    let ca = ca.to_str().unwrap();
    let (ok, out) = mariadb(
        &server,
        &["--ssl", "--ssl-verify-server-cert", "--ssl-ca", ca],
        "\\s\nSHOW STATUS LIKE 'Ssl_cipher'",
    );
    assert!(ok, "{out}");
    assert!(
        out.contains("Cipher in use is TLS_"),
        "\\s shows the cipher:\n{out}"
    );
    let cipher = out
        .lines()
        .find_map(|l| l.strip_prefix("Ssl_cipher\t"))
        .unwrap_or_default();
    assert!(cipher.starts_with("TLS_"), "SHOW STATUS: {out}");

    // Another server's CA does not vouch for this server's certificate.
    let other = TestServer::start_flavor(Flavor::Strata, &[]);
    let other_ca = other.datadir.join("ca.pem");
    let (ok, out) = mariadb(
        &server,
        &[
            "--ssl",
            "--ssl-verify-server-cert",
            "--ssl-ca",
            other_ca.to_str().unwrap(),
        ],
        "SELECT 1",
    );
    assert!(!ok, "verification against the wrong CA must fail:\n{out}");
    // …and the server is still fine.
    let (ok, out) = mariadb(&server, &["--ssl"], "SELECT 42");
    assert!(ok && out.contains("42"), "{out}");
}

#[test]
fn given_certificate_files() {
    // The files of one server's generated set, given to another by option.
    let first = TestServer::start_flavor(Flavor::Strata, &[]);
    let d = first.datadir.clone();
    let (cert, key, ca) = (
        d.join("server-cert.pem"),
        d.join("server-key.pem"),
        d.join("ca.pem"),
    );
    let args = [
        "--ssl-cert",
        cert.to_str().unwrap(),
        "--ssl-key",
        key.to_str().unwrap(),
        "--ssl-ca",
        ca.to_str().unwrap(),
    ];
    let second = TestServer::start_flavor(Flavor::Strata, &args);
    assert!(
        !second.datadir.join("ca.pem").exists(),
        "no certificate is generated when one is given"
    );
    let mut c = common::connect(second.port, None);
    use mysql::prelude::Queryable;
    let (got_cert, got_ca): (String, String) = c
        .query_first("SELECT @@ssl_cert, @@ssl_ca")
        .unwrap()
        .unwrap();
    assert_eq!(got_cert, cert.to_str().unwrap());
    assert_eq!(got_ca, ca.to_str().unwrap());
    if common::require_program("mariadb", "given_certificate_files") {
        let (ok, out) = mariadb(
            &second,
            &[
                "--ssl",
                "--ssl-verify-server-cert",
                "--ssl-ca",
                ca.to_str().unwrap(),
            ],
            "SHOW STATUS LIKE 'Ssl_version'",
        );
        assert!(ok && out.contains("TLSv1."), "{out}");
    }

    // A key that is not a key stops the start with the file's name.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad-key.pem");
    std::fs::write(&bad, "not a key\n").unwrap();
    let out: Output = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["server", "--port", &common::free_port().to_string()])
        .arg("--datadir")
        .arg(tmp.path().join("data"))
        .arg("--ssl-cert")
        .arg(&cert)
        .arg("--ssl-key")
        .arg(&bad)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("bad-key.pem"), "{text}");
}

#[test]
fn require_secure_transport() {
    let test = "require_secure_transport";
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("strata.sock");
    let server = sha2_server(&[
        "--require-secure-transport",
        "--socket",
        sock.to_str().unwrap(),
    ]);
    // The Rust client, plain TCP: MySQL's error, number and text.
    match mysql::Conn::new(common::opts(server.port, None)) {
        Err(mysql::Error::MySqlError(e)) => {
            assert_eq!(e.code, 3159, "{e:?}");
            assert_eq!(e.state, "HY000");
            assert_eq!(
                e.message,
                "Connections using insecure transport are prohibited while \
                 --require_secure_transport=ON."
            );
        }
        other => panic!("plain TCP must be refused: {:?}", other.map(|_| ())),
    }
    // The Rust client on the unix socket (caching_sha2 sends the password in clear there).
    let opts: mysql::Opts = mysql::OptsBuilder::new()
        .socket(Some(sock.to_str().unwrap()))
        .user(Some("app"))
        .pass(Some("secret"))
        .into();
    let mut c = mysql::Conn::new(opts).expect("the unix socket counts as secure");
    use mysql::prelude::Queryable;
    let v: Option<String> = c.query_first("SELECT @@socket").unwrap();
    assert_eq!(v.as_deref(), sock.to_str());
    if common::require_program("mariadb", test) {
        let (ok, out) = mariadb(&server, &["--skip-ssl"], "SELECT 1");
        assert!(!ok && out.contains("3159"), "{out}");
        let (ok, out) = mariadb(&server, &["--ssl"], "SHOW STATUS LIKE 'Ssl_cipher'");
        assert!(ok && out.contains("TLS_"), "{out}");
    }
    if python_ready(test, &["pymysql"]) {
        python_scenario(&server, "secure_transport", &[("STRATA_SOCKET", &sock)]);
    }
}

/// The Rust `mysql` crate (no TLS in this build): caching_sha2_password's full
/// authentication by RSA, asking for the server's key; then the cached fast path.
#[test]
fn sha2_full_authentication_by_rsa_in_the_rust_client() {
    let server = sha2_server(&[]);
    let opts = |user: &str, pass: &str| -> mysql::Opts {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(server.port)
            .user(Some(user))
            .pass(Some(pass))
            .prefer_socket(false)
            .into()
    };
    match mysql::Conn::new(opts("app", "wrong")) {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1045, "{e:?}"),
        other => panic!("a wrong password must fail: {:?}", other.map(|_| ())),
    }
    for round in 0..2 {
        let mut c = mysql::Conn::new(opts("app", "secret"))
            .unwrap_or_else(|e| panic!("login {round}: {e}"));
        use mysql::prelude::Queryable;
        let u: Option<String> = c.query_first("SELECT CURRENT_USER()").unwrap();
        assert_eq!(u.as_deref(), Some("app@%"));
    }
}

/// A client that asks for TLS and then stalls, or sends garbage instead of a TLS
/// handshake, is dropped (within connect_timeout) and hurts no one else.
#[test]
fn stalled_or_garbage_tls_handshakes_are_dropped() {
    let server = TestServer::start_flavor(Flavor::Strata, &["--connect-timeout", "2"]);
    let ssl_request = {
        let mut p = vec![32, 0, 0, 1];
        let caps: u32 = (1 << 9) | (1 << 11) | (1 << 15) | (1 << 19);
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(1u32 << 24).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        p
    };
    let greet = |s: &mut TcpStream| {
        let mut head = [0u8; 4];
        s.read_exact(&mut head).unwrap();
        let len = u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize;
        let mut body = vec![0; len];
        s.read_exact(&mut body).unwrap();
        // Protocol 10, the version's C string, connection id, 8 salt bytes, a filler,
        // then the low capability flags.
        let nul = body[1..].iter().position(|&b| b == 0).unwrap() + 1;
        let at = nul + 1 + 4 + 8 + 1;
        let caps = u16::from_le_bytes([body[at], body[at + 1]]);
        assert!(caps & (1 << 11) != 0, "the greeting offers CLIENT_SSL");
    };
    // Stalls after the SSLRequest.
    let mut stalled = TcpStream::connect(server.addr()).unwrap();
    stalled
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    greet(&mut stalled);
    stalled.write_all(&ssl_request).unwrap();
    // Garbage instead of a ClientHello.
    let mut garbage = TcpStream::connect(server.addr()).unwrap();
    garbage
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    greet(&mut garbage);
    garbage.write_all(&ssl_request).unwrap();
    // A TLS handshake record whose content is not a ClientHello.
    let _ = garbage.write_all(&[0x16, 3, 1, 0, 5, 1, 2, 3, 4, 5]);
    let _ = garbage.write_all(b"GET / HTTP/1.0\r\n\r\n");
    let started = Instant::now();
    let mut sink = Vec::new();
    // The server ends both connections: EOF (or a reset, or a TLS alert then EOF).
    let _ = garbage.read_to_end(&mut sink);
    let _ = stalled.read_to_end(&mut sink);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "dropped within connect_timeout (2 s), took {:?}",
        started.elapsed()
    );
    let mut c = common::connect(server.port, None);
    use mysql::prelude::Queryable;
    let one: Option<u32> = c.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
}

/// Whether `python3` can run the Python scenarios (a skip outside CI when not).
fn python_ready(test: &str, modules: &[&str]) -> bool {
    if !common::require_program("python3", test) {
        return false;
    }
    let code = modules
        .iter()
        .map(|m| format!("import {m}"))
        .collect::<Vec<_>>()
        .join("; ");
    let ok = Command::new("python3")
        .args(["-c", &code])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            !common::in_ci(),
            "{test}: python3 modules {modules:?} missing (pip install -r tests/clients/python/requirements.txt)"
        );
        eprintln!("NOTE: {test} skipped: python3 modules {modules:?} missing");
    }
    ok
}

fn python_scenario(server: &TestServer, scenario: &str, env: &[(&str, &Path)]) {
    let (ok, out) = run(
        Command::new("python3")
            .arg(clients_dir("python").join("tls_check.py"))
            .arg(scenario)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("STRATA_PORT", server.port.to_string())
            .env("STRATA_DATADIR", &server.datadir)
            .envs(env.iter().map(|(k, v)| (*k, v.as_os_str()))),
        Duration::from_secs(120),
    );
    assert!(
        ok && out.contains(&format!("{scenario}: ")) && out.contains(" checks passed"),
        "{scenario}:\n{out}\n----- server log -----\n{}",
        server.log_tail()
    );
    eprintln!("{}", out.lines().last().unwrap_or_default());
}

#[test]
fn pymysql_tls_and_full_authentication() {
    let test = "pymysql_tls_and_full_authentication";
    if python_ready(test, &["pymysql", "cryptography"]) {
        python_scenario(&sha2_server(&[]), "pymysql", &[]);
    }
}

#[test]
fn mysql_connector_tls() {
    let test = "mysql_connector_tls";
    if python_ready(test, &["mysql.connector"]) {
        python_scenario(&sha2_server(&[]), "connector", &[]);
    }
}

#[test]
fn go_sql_driver_tls() {
    let test = "go_sql_driver_tls";
    if !common::require_program("go", test) {
        return;
    }
    let server = sha2_server(&[]);
    let (ok, out) = run(
        Command::new("go")
            .args(["test", "-count=1", "-v", "-run", "^TestTLS$", "./..."])
            .current_dir(clients_dir("go"))
            .env("STRATA_PORT", server.port.to_string())
            .env("STRATA_TLS_CA", server.datadir.join("ca.pem")),
        Duration::from_secs(300),
    );
    assert!(
        ok && out.contains("--- PASS: TestTLS"),
        "{out}\n----- server log -----\n{}",
        server.log_tail()
    );
}

#[test]
fn connector_j_tls() {
    let test = "connector_j_tls";
    if !common::require_program("java", test) || !common::require_program("mvn", test) {
        return;
    }
    let server = sha2_server(&[]);
    let dir = clients_dir("java");
    let (ok, out) = run(
        Command::new("mvn")
            .args(["-q", "-B", "test", "-Dtest=TlsTest"])
            .arg(format!("-Dstrata.port={}", server.port))
            .arg(format!(
                "-Dstrata.tls.ca={}",
                server.datadir.join("ca.pem").display()
            ))
            .current_dir(&dir),
        Duration::from_secs(300),
    );
    assert!(ok, "{out}\n----- server log -----\n{}", server.log_tail());
    let report = std::fs::read_to_string(dir.join("target/surefire-reports/strata.TlsTest.txt"))
        .unwrap_or_else(|e| panic!("no surefire report: {e}\n{out}"));
    assert!(
        report.contains("Tests run: 1, Failures: 0, Errors: 0, Skipped: 0"),
        "{report}"
    );
}
