//! Client-facing integration tests against a freshly started server:
//! * the `mariadb` command-line client in batch mode (output format, errors, exit codes);
//! * data and schema survive a clean SIGTERM shutdown and restart on the same datadir;
//! * malformed input over the wire does not bring the server down;
//! * `mysqldump` of a database restored into another gives identical contents.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::TestServer;
use mysql::prelude::Queryable;

// ---------------------------------------------------------------------------------------------
// (a) the mariadb CLI

fn cli(port: u16, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new("mariadb");
    cmd.arg("--no-defaults")
        .arg("--protocol=TCP")
        .arg("-h127.0.0.1")
        .arg(format!("-P{port}"))
        .arg("-uroot")
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn mariadb client");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    child.wait_with_output().expect("wait for mariadb client")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the client and requires success; returns stdout.
fn cli_ok(server: &TestServer, args: &[&str], stdin: Option<&str>) -> String {
    let out = cli(server.port, args, stdin);
    assert!(
        out.status.success(),
        "mariadb {args:?} failed ({}):\nstdout:\n{}\nstderr:\n{}\nserver log:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr),
        server.log_tail()
    );
    text(&out.stdout)
}

#[test]
fn mariadb_cli_batch_mode() {
    if !common::require_program("mariadb", "mariadb_cli_batch_mode") {
        return;
    }
    let server = TestServer::start(&[]);

    // -e with several statements
    cli_ok(
        &server,
        &[
            "-e",
            "CREATE DATABASE cli_db; \
             CREATE TABLE cli_db.people (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20), age INT); \
             INSERT INTO cli_db.people (name, age) VALUES ('ann', 31), ('bob', NULL), ('', 7)",
        ],
        None,
    );

    // -e SELECT: tab-separated with a header line (batch mode when stdout is not a tty)
    let out = cli_ok(
        &server,
        &[
            "cli_db",
            "-e",
            "SELECT id, name, age FROM people ORDER BY id",
        ],
        None,
    );
    assert_eq!(out, "id\tname\tage\n1\tann\t31\n2\tbob\tNULL\n3\t\t7\n");

    // --batch with a script on stdin; -N drops the header
    let script = "INSERT INTO people (name, age) VALUES ('cy', 40);\n\
                  SELECT COUNT(*), SUM(age) FROM people;\n\
                  UPDATE people SET age = age + 1 WHERE name = 'ann';\n\
                  SELECT name, age FROM people WHERE age > 30 ORDER BY name;\n";
    let out = cli_ok(&server, &["--batch", "-N", "cli_db"], Some(script));
    assert_eq!(out, "4\t78\nann\t32\ncy\t40\n");

    // --batch with headers, USE inside the script, LAST_INSERT_ID()
    let script =
        "USE cli_db;\nINSERT INTO people (name) VALUES ('dee');\nSELECT LAST_INSERT_ID() AS id;\n";
    let out = cli_ok(&server, &["--batch"], Some(script));
    assert_eq!(out, "id\n5\n");

    // special characters are escaped in batch output
    let out = cli_ok(
        &server,
        &["--batch", "-N", "-e", "SELECT 'a\\tb', 'c\\\\d'"],
        None,
    );
    assert_eq!(out, "a\\tb\tc\\\\d\n");

    // what the interactive client sends at startup
    let out = cli_ok(&server, &["-e", "SELECT @@version_comment LIMIT 1"], None);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "unexpected output: {out:?}");
    assert_eq!(lines[0], "@@version_comment");

    // SHOW DATABASES / SHOW TABLES through the client
    let out = cli_ok(&server, &["-N", "-e", "SHOW DATABASES"], None);
    assert!(
        out.lines().any(|l| l == "cli_db"),
        "SHOW DATABASES: {out:?}"
    );
    let out = cli_ok(&server, &["-N", "cli_db", "-e", "SHOW TABLES"], None);
    assert_eq!(out, "people\n");

    // an error: message on stderr, non-zero exit status
    let out = cli(server.port, &["cli_db", "-e", "SELECT * FROM nope"], None);
    assert!(!out.status.success(), "error statement exited 0");
    let err = text(&out.stderr);
    assert!(
        err.contains("ERROR 1146 (42S02)"),
        "stderr does not carry ERROR 1146 (42S02): {err:?}"
    );

    // a script stops at the first error (no --force)
    let script = "INSERT INTO people (name) VALUES ('e1');\nSELECT * FROM nope;\nINSERT INTO people (name) VALUES ('e2');\n";
    let out = cli(server.port, &["--batch", "cli_db"], Some(script));
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("ERROR 1146 (42S02)"));
    let out = cli_ok(
        &server,
        &[
            "-N",
            "cli_db",
            "-e",
            "SELECT name FROM people WHERE name LIKE 'e%' ORDER BY name",
        ],
        None,
    );
    assert_eq!(out, "e1\n");

    // syntax error
    let out = cli(server.port, &["-e", "SELEC 1"], None);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("ERROR 1064 (42000)"),
        "{:?}",
        text(&out.stderr)
    );

    // the server is still fine
    let out = cli_ok(&server, &["-N", "-e", "SELECT 1 + 1"], None);
    assert_eq!(out, "2\n");
}

// ---------------------------------------------------------------------------------------------
// (a2) mysqldump, restored with the mariadb client

/// The dump program: `mysqldump`, or `mariadb-dump` where that is its name.
fn dump_program() -> Option<&'static str> {
    ["mysqldump", "mariadb-dump"]
        .into_iter()
        .find(|p| common::have_program(p))
}

#[test]
fn mysqldump_round_trip() {
    let Some(dump) = dump_program() else {
        assert!(!common::in_ci(), "mysqldump is not installed");
        eprintln!("skipped: no mysqldump");
        return;
    };
    let server = TestServer::start(&[]);
    let mut conn = common::connect(server.port, None);
    for sql in [
        "CREATE DATABASE src",
        "USE src",
        "CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, \
         score DECIMAL(8,2), born DATE, seen DATETIME, \
         ts TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, \
         data BLOB, note TEXT, KEY name_idx (name), UNIQUE KEY u (born, name)) ENGINE=InnoDB",
        "CREATE TABLE b (k CHAR(10) PRIMARY KEY, v BIGINT UNSIGNED, f DOUBLE, t TINYINT) \
         ENGINE=MyISAM",
        "CREATE TABLE empty_one (n INT) ENGINE=InnoDB",
        "INSERT INTO b VALUES ('x', 18446744073709551615, 1.5e300, -128), ('y', 0, -0.125, 127), \
         ('z', NULL, NULL, NULL)",
    ] {
        conn.query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // Every byte value in a BLOB, quotes, backslashes, newlines and non-ASCII text.
    let all_bytes: Vec<u8> = (0..=255u8).rev().collect();
    conn.exec_drop(
        "INSERT INTO a (name, score, born, seen, data, note) VALUES (?, ?, ?, ?, ?, ?)",
        (
            "alice",
            "12.50",
            "1990-01-02",
            "2020-03-04 05:06:07",
            all_bytes.clone(),
            "it's \"quoted\"\nnew line \\ back\\slash",
        ),
    )
    .unwrap();
    conn.query_drop(
        "INSERT INTO a (name, score, born, seen, data, note) VALUES \
         ('bob', NULL, NULL, NULL, NULL, NULL), ('ünï ✓', -3.25, '2000-02-29', \
         '1999-12-31 23:59:59', '', '')",
    )
    .unwrap();
    for i in 0..300 {
        conn.exec_drop(
            "INSERT INTO a (name, score, data) VALUES (?, ?, ?)",
            (
                format!("n{i}"),
                i as f64 / 4.0,
                vec![(i % 256) as u8; i % 7],
            ),
        )
        .unwrap();
    }

    let out = Command::new(dump)
        .args(["--no-defaults", "--protocol=TCP", "-h127.0.0.1"])
        .arg(format!("-P{}", server.port))
        .args(["-uroot", "src"])
        .output()
        .expect("run mysqldump");
    assert!(
        out.status.success(),
        "{dump} failed ({}): {}\nserver log:\n{}",
        out.status,
        text(&out.stderr),
        server.log_tail()
    );
    // The dump is bytes, not text: BLOB values are written raw inside quotes.
    let dumped = out.stdout;
    let as_text = text(&dumped);
    assert!(as_text.contains("CREATE TABLE `a`") && as_text.contains("INSERT INTO `b`"));

    conn.query_drop("CREATE DATABASE dst").unwrap();
    let mut restore = Command::new("mariadb")
        .args(["--no-defaults", "--protocol=TCP", "-h127.0.0.1"])
        .arg(format!("-P{}", server.port))
        .args(["-uroot", "dst"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mariadb client");
    restore
        .stdin
        .take()
        .expect("client stdin")
        .write_all(&dumped)
        .expect("feed the dump");
    let restored = restore.wait_with_output().expect("wait for mariadb client");
    assert!(
        restored.status.success(),
        "restoring the dump failed: {}",
        text(&restored.stderr)
    );

    for table in ["a", "b", "empty_one"] {
        for (what, sql) in [
            ("rows", format!("SELECT * FROM {{db}}.{table} ORDER BY 1")),
            ("schema", format!("SHOW CREATE TABLE {{db}}.{table}")),
            ("status", format!("SELECT engine, table_rows, auto_increment FROM information_schema.tables WHERE table_schema = '{{db}}' AND table_name = '{table}'")),
        ] {
            let src = checksum(&mut conn, &sql.replace("{db}", "src"));
            let dst = checksum(&mut conn, &sql.replace("{db}", "dst"));
            assert_eq!(src, dst, "{what} of {table} differ after the dump and restore");
        }
    }
    let blob: Option<Vec<u8>> = conn
        .query_first("SELECT data FROM dst.a WHERE name = 'alice'")
        .unwrap();
    assert_eq!(
        blob,
        Some(all_bytes),
        "BLOB bytes changed in the round trip"
    );
    let n: Option<u64> = conn.query_first("SELECT COUNT(*) FROM dst.a").unwrap();
    assert_eq!(n, Some(303));
}

// ---------------------------------------------------------------------------------------------
// (b) restart

/// Deterministic pseudo-random numbers (64-bit LCG) so the data set is the same every run.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// FNV-1a over the text rendering of every row (order given by the query).
fn checksum(conn: &mut mysql::Conn, sql: &str) -> (usize, u64) {
    let rows: Vec<mysql::Row> = conn.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut h: u64 = 0xcbf29ce484222325;
    for row in &rows {
        for v in row.clone().unwrap() {
            let s = match v {
                mysql::Value::NULL => "\u{0}NULL".to_string(),
                other => other.as_sql(true),
            };
            for b in s.bytes().chain([0xffu8]) {
                h ^= b as u64;
                h = h.wrapping_mul(0x100000001b3);
            }
        }
        h ^= 0x1f;
    }
    (rows.len(), h)
}

#[derive(Debug, PartialEq)]
struct Snapshot {
    t1: (usize, u64),
    t2: (usize, u64),
    t1_schema: Vec<(String, String, String, String)>,
    t2_schema: Vec<(String, String, String, String)>,
    by_k: Vec<Vec<u32>>,
    by_tag: Vec<(usize, u64)>,
    aggregates: (i64, String, String),
}

fn describe(conn: &mut mysql::Conn, table: &str) -> Vec<(String, String, String, String)> {
    let rows: Vec<mysql::Row> = conn.query(format!("DESCRIBE {table}")).unwrap();
    rows.into_iter()
        .map(|r| {
            let get = |i: usize| -> String {
                match r.as_ref(i) {
                    Some(mysql::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                    Some(mysql::Value::NULL) | None => "NULL".into(),
                    Some(v) => v.as_sql(true),
                }
            };
            (get(0), get(1), get(2), get(3))
        })
        .collect()
}

fn snapshot(conn: &mut mysql::Conn) -> Snapshot {
    let t1 = checksum(conn, "SELECT id, k, name, body FROM t1 ORDER BY id");
    let t2 = checksum(conn, "SELECT code, n, amount, note FROM t2 ORDER BY code");
    let mut by_k = Vec::new();
    for k in [0, 1, 17, 99, 250, 499, 1005, 1017] {
        let ids: Vec<u32> = conn
            .query(format!("SELECT id FROM t1 WHERE k = {k} ORDER BY id"))
            .unwrap();
        by_k.push(ids);
    }
    let mut by_tag = Vec::new();
    for tag in ["tag-0", "tag-3", "TAG-7", "tag-12"] {
        by_tag.push(checksum(
            conn,
            &format!("SELECT code, n FROM t2 WHERE tag = '{tag}' ORDER BY code"),
        ));
    }
    let agg: Vec<(i64, String, String)> = conn
        .query("SELECT COUNT(*), CAST(SUM(k) AS CHAR), CAST(SUM(amount) AS CHAR) FROM t1 JOIN t2 ON t2.n = t1.id")
        .unwrap_or_else(|_| vec![(0, String::new(), String::new())]);
    Snapshot {
        t1,
        t2,
        t1_schema: describe(conn, "t1"),
        t2_schema: describe(conn, "t2"),
        by_k,
        by_tag,
        aggregates: agg.into_iter().next().unwrap(),
    }
}

#[test]
fn data_survives_clean_restart() {
    let mut server = TestServer::start(&[]);
    let mut conn = common::connect(server.port, None);
    conn.query_drop("CREATE DATABASE persist").unwrap();
    conn.query_drop("USE persist").unwrap();
    conn.query_drop(
        "CREATE TABLE t1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT '0', \
         name VARCHAR(64) NOT NULL, body TEXT, PRIMARY KEY (id), KEY k_idx (k))",
    )
    .unwrap();
    conn.query_drop(
        "CREATE TABLE t2 (code CHAR(12) NOT NULL, n BIGINT UNSIGNED, tag VARCHAR(16), \
         amount DECIMAL(10,2), note TEXT, PRIMARY KEY (code), UNIQUE KEY n_uk (n), KEY tag_idx (tag))",
    )
    .unwrap();

    let mut rng = Lcg(42);
    for batch in 0..20 {
        let mut sql = String::from("INSERT INTO t1 (k, name, body) VALUES ");
        for i in 0..250 {
            let id = batch * 250 + i + 1;
            let k = rng.next() % 500;
            let body = if id % 13 == 0 {
                "NULL".to_string()
            } else {
                format!("'{}'", "body-".repeat((rng.next() % 60) as usize))
            };
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("({k}, 'name-{id}-{}', {body})", rng.next()));
        }
        conn.query_drop(&sql).unwrap();
    }
    for batch in 0..8 {
        let mut sql = String::from("INSERT INTO t2 (code, n, tag, amount, note) VALUES ");
        for i in 0..250 {
            let n = batch * 250 + i + 1;
            if i > 0 {
                sql.push(',');
            }
            let tag = if n % 2 == 0 {
                format!("'tag-{}'", rng.next() % 16)
            } else {
                format!("'TAG-{}'", rng.next() % 16)
            };
            sql.push_str(&format!(
                "('c{n:08}', {n}, {tag}, {}.{:02}, {})",
                rng.next() % 100000,
                rng.next() % 100,
                if n % 5 == 0 {
                    "NULL".to_string()
                } else {
                    format!("'note {n} it''s'")
                }
            ));
        }
        conn.query_drop(&sql).unwrap();
    }
    // updates and deletes, through both the primary and secondary indexes
    conn.query_drop(
        "UPDATE t1 SET k = k + 1000, body = CONCAT(IFNULL(body, ''), '-u') WHERE id % 7 = 0",
    )
    .unwrap();
    conn.query_drop("UPDATE t1 SET name = 'renamed' WHERE k = 17")
        .unwrap();
    conn.query_drop("DELETE FROM t1 WHERE id % 11 = 0").unwrap();
    conn.query_drop("DELETE FROM t1 WHERE k = 250").unwrap();
    conn.query_drop("UPDATE t2 SET tag = 'tag-3', amount = amount * 2 WHERE n BETWEEN 100 AND 180")
        .unwrap();
    conn.query_drop("DELETE FROM t2 WHERE n > 1900").unwrap();
    conn.query_drop("DELETE FROM t2 WHERE tag = 'TAG-7' AND n < 1000")
        .unwrap();
    let count: Option<i64> = conn.query_first("SELECT COUNT(*) FROM t1").unwrap();
    assert!(count.unwrap() > 4000, "unexpected t1 count {count:?}");

    let before = snapshot(&mut conn);
    drop(conn);

    server.restart();
    let mut conn = common::connect(server.port, Some("persist"));
    let after = snapshot(&mut conn);
    assert_eq!(before, after, "data differs after restart");

    let tables: Vec<String> = conn.query("SHOW TABLES").unwrap();
    assert_eq!(tables, vec!["t1".to_string(), "t2".to_string()]);

    // constraints still enforced after restart
    let (code, n): (String, u64) = conn
        .query_first("SELECT code, n FROM t2 ORDER BY code LIMIT 1")
        .unwrap()
        .expect("t2 is empty after restart");
    let dup = conn.query_drop(format!("INSERT INTO t2 (code, n) VALUES ('{code}', 99999)"));
    assert!(
        matches!(&dup, Err(mysql::Error::MySqlError(e)) if e.code == 1062),
        "duplicate primary key accepted after restart: {dup:?}"
    );
    let dup = conn.query_drop(format!("INSERT INTO t2 (code, n) VALUES ('zzz', {n})"));
    assert!(
        matches!(&dup, Err(mysql::Error::MySqlError(e)) if e.code == 1062),
        "duplicate unique key accepted after restart: {dup:?}"
    );

    // AUTO_INCREMENT continues after the highest id ever handed out
    let max_id: Option<i64> = conn.query_first("SELECT MAX(id) FROM t1").unwrap();
    conn.query_drop("INSERT INTO t1 (k, name) VALUES (1, 'after-restart')")
        .unwrap();
    let new_id: Option<i64> = conn.query_first("SELECT LAST_INSERT_ID()").unwrap();
    assert_eq!(new_id, Some(5001), "max id before was {max_id:?}");

    // writes made after a restart survive a second restart as well
    conn.query_drop("UPDATE t1 SET k = 424242 WHERE id = 5001")
        .unwrap();
    conn.query_drop("DELETE FROM t1 WHERE id = 1").unwrap();
    let before2 = snapshot(&mut conn);
    drop(conn);
    server.restart();
    let mut conn = common::connect(server.port, Some("persist"));
    assert_eq!(
        before2,
        snapshot(&mut conn),
        "data differs after second restart"
    );
    let ids: Vec<u32> = conn.query("SELECT id FROM t1 WHERE k = 424242").unwrap();
    assert_eq!(ids, vec![5001]);
}

// ---------------------------------------------------------------------------------------------
// (c) garbage over the wire

fn read_packet(s: &mut TcpStream) -> std::io::Result<(u8, Vec<u8>)> {
    let mut hdr = [0u8; 4];
    s.read_exact(&mut hdr)?;
    let len = u32::from_le_bytes([hdr[0], hdr[1], hdr[2], 0]) as usize;
    let mut body = vec![0u8; len];
    s.read_exact(&mut body)?;
    Ok((hdr[3], body))
}

fn write_packet(s: &mut TcpStream, seq: u8, body: &[u8]) -> std::io::Result<()> {
    let len = body.len() as u32;
    let mut buf = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, seq];
    buf.extend_from_slice(body);
    s.write_all(&buf)
}

/// Opens a raw connection and completes the handshake as root with an empty password (protocol
/// 4.1, mysql_native_password). Returns the stream ready for commands.
fn raw_login(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let (seq, greeting) = read_packet(&mut s).expect("read server greeting");
    assert_eq!(
        greeting.first(),
        Some(&10),
        "protocol version 10 greeting expected"
    );
    const CLIENT_LONG_PASSWORD: u32 = 1;
    const CLIENT_PROTOCOL_41: u32 = 0x200;
    const CLIENT_TRANSACTIONS: u32 = 0x2000;
    const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
    const CLIENT_PLUGIN_AUTH: u32 = 0x80000;
    let caps = CLIENT_LONG_PASSWORD
        | CLIENT_PROTOCOL_41
        | CLIENT_TRANSACTIONS
        | CLIENT_SECURE_CONNECTION
        | CLIENT_PLUGIN_AUTH;
    let mut resp = Vec::new();
    resp.extend_from_slice(&caps.to_le_bytes());
    resp.extend_from_slice(&(16u32 << 20).to_le_bytes());
    resp.push(45); // utf8mb4_general_ci
    resp.extend_from_slice(&[0u8; 23]);
    resp.extend_from_slice(b"root\0");
    resp.push(0); // empty auth response
    resp.extend_from_slice(b"mysql_native_password\0");
    write_packet(&mut s, seq.wrapping_add(1), &resp).unwrap();
    let (seq, reply) = read_packet(&mut s).expect("read auth reply");
    let reply = if reply.first() == Some(&0xfe) {
        // auth switch request: answer with an empty password
        write_packet(&mut s, seq.wrapping_add(1), &[]).unwrap();
        read_packet(&mut s).expect("read auth reply after switch").1
    } else {
        reply
    };
    assert_eq!(reply.first(), Some(&0x00), "login not OK: {reply:?}");
    s
}

fn assert_server_usable(server: &mut TestServer, what: &str) {
    assert!(
        server.is_running(),
        "server died after {what}; log:\n{}",
        server.log_tail()
    );
    let mut conn = mysql::Conn::new(common::opts(server.port, None))
        .unwrap_or_else(|e| panic!("cannot connect after {what}: {e}"));
    let one: Option<i64> = conn.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1), "after {what}");
}

#[test]
fn garbage_input_does_not_kill_server() {
    let mut server = TestServer::start(&[]);
    let port = server.port;

    // 1. garbage instead of a handshake response
    {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = read_packet(&mut s);
        let junk: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let _ = s.write_all(&junk);
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
    assert_server_usable(&mut server, "garbage handshake response");

    // 2. a packet header announcing 16 MB, then hang up
    {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _ = s.write_all(&[0xff, 0xff, 0xff, 0x01, 1, 2, 3]);
    }
    // 3. connect and close immediately, several times
    for _ in 0..20 {
        drop(TcpStream::connect(("127.0.0.1", port)).unwrap());
    }
    // 4. a truncated handshake response
    {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = read_packet(&mut s);
        let _ = write_packet(&mut s, 1, &[0x0d, 0xa2, 0x0a]);
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
    assert_server_usable(&mut server, "truncated packets");

    // 5. after a successful login: bad commands, then raw garbage
    {
        let mut s = raw_login(port);
        // unknown command byte -> an error packet, connection still usable
        write_packet(&mut s, 0, &[0xee, 1, 2, 3]).unwrap();
        let (_, reply) = read_packet(&mut s).expect("reply to unknown command");
        assert_eq!(
            reply.first(),
            Some(&0xff),
            "error packet expected: {reply:?}"
        );
        // COM_QUERY with a query the parser cannot handle
        let mut q = vec![0x03];
        q.extend_from_slice(b"\x01\x02 SELECT \xff\xfe FROM");
        write_packet(&mut s, 0, &q).unwrap();
        let (_, reply) = read_packet(&mut s).expect("reply to garbage query");
        assert_eq!(
            reply.first(),
            Some(&0xff),
            "error packet expected: {reply:?}"
        );
        // COM_STMT_EXECUTE for a statement that does not exist, truncated
        write_packet(&mut s, 0, &[0x17, 0x99, 0x99]).unwrap();
        let _ = read_packet(&mut s);
        // COM_QUERY still works on this connection
        let mut q = vec![0x03];
        q.extend_from_slice(b"SELECT 1");
        write_packet(&mut s, 0, &q).unwrap();
        let (_, reply) = read_packet(&mut s).expect("reply to SELECT 1");
        assert_eq!(reply, vec![1], "column count packet expected for SELECT 1");
        // now raw garbage, including broken packet headers and sequence numbers
        let junk: Vec<u8> = (0..20000u32)
            .map(|i| (i.wrapping_mul(40503) >> 7) as u8)
            .collect();
        let _ = s.write_all(&junk);
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut sink = [0u8; 65536];
        while let Ok(n) = s.read(&mut sink) {
            if n == 0 {
                break;
            }
        }
    }
    assert_server_usable(&mut server, "garbage after login");

    // 6. many garbage connections in parallel
    let handles: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..10u32 {
                    if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                        s.set_read_timeout(Some(Duration::from_millis(500)))
                            .unwrap();
                        let junk: Vec<u8> = (0..512u32)
                            .map(|j| (j.wrapping_mul(t * 31 + i + 7) >> 3) as u8)
                            .collect();
                        let _ = s.write_all(&junk);
                        let mut buf = [0u8; 1024];
                        let _ = s.read(&mut buf);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_server_usable(&mut server, "parallel garbage connections");
}
