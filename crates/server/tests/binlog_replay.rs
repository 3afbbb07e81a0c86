//! Point-in-time recovery into Strata: a Strata with `--log-bin` runs a mixed workload
//! (DDL, both engines, multi-statement transactions, a rollback, UPDATE and DELETE,
//! NULLs, INT, BIGINT UNSIGNED, VARCHAR, DECIMAL, DATETIME(6), BLOB, JSON, a table
//! without a primary key), `mariadb-binlog` prints its files, and the `mariadb` client
//! pipes the script into an empty Strata — whose tables then equal the source's, row for
//! row. With `--stop-position` the replay stops at an earlier state, equal to what the
//! source held then. An XA transaction prepared before another transaction and
//! committed after it replays too (`pseudo_slave_mode`). Also: the BINLOG statement's errors (1609, 1575, 1149, 1227 and
//! REPLICATION_APPLIER's table checks, 1142) and the session variables the script sets.
//!
//! The servers are processes the test starts; a missing `mariadb-binlog` or `mariadb`
//! skips (a failure under CI).

use crate::common;

use common::dump::text_rows;
use common::{connect, require_program, Flavor, TestServer};
use mysql::prelude::Queryable;
use std::process::{Command, Stdio};

const TABLES: &[&str] = &["ti", "th", "tn", "late"];

/// Up to the stop position.
const PHASE1: &[&str] = &[
    "CREATE DATABASE br_src",
    "USE br_src",
    "CREATE TABLE ti (id INT PRIMARY KEY AUTO_INCREMENT, u BIGINT UNSIGNED, v VARCHAR(40), \
     d DECIMAL(12,3), dt DATETIME(6), b BLOB, j JSON, n INT) ENGINE=InnoDB",
    "CREATE TABLE th (id INT PRIMARY KEY, u BIGINT UNSIGNED, v VARCHAR(40), d DECIMAL(12,3), \
     dt DATETIME(6), b BLOB) ENGINE=MyISAM",
    "CREATE TABLE tn (a INT, b VARCHAR(10)) ENGINE=InnoDB",
    "INSERT INTO ti (u, v, d, dt, b, j, n) VALUES \
     (18446744073709551615, 'héllo', -123456789.125, '2024-02-29 23:59:59.999999', \
      x'00ff10', '{\"a\": [1, 2, {\"b\": null}], \"c\": \"x\"}', -2147483648), \
     (NULL, NULL, NULL, NULL, NULL, NULL, NULL), \
     (0, '', 0.001, '1000-01-01 00:00:00.000001', '', '[]', 2147483647)",
    "INSERT INTO th VALUES (1, 1, 'a', 1.5, '2020-01-01 10:00:00.5', 'blob'), \
     (2, NULL, NULL, NULL, NULL, NULL), (3, 3, 'c', -3.25, '2021-06-15 12:30:45.123', x'00')",
    "INSERT INTO tn VALUES (1, 'x'), (1, 'x'), (2, NULL)",
    "BEGIN",
    "INSERT INTO ti (v, n) VALUES ('in txn', 1)",
    "UPDATE ti SET v = CONCAT(v, '!'), d = d * 2 WHERE id = 1",
    "DELETE FROM ti WHERE id = 2",
    "COMMIT",
    "BEGIN",
    "INSERT INTO ti (v) VALUES ('rolled back')",
    "ROLLBACK",
    "UPDATE th SET v = 'bb', u = 18446744073709551614 WHERE id = 2",
    "DELETE FROM th WHERE id = 3",
    "FLUSH BINARY LOGS",
    "UPDATE tn SET b = 'y' WHERE a = 1 LIMIT 1",
    "DELETE FROM tn WHERE b IS NULL",
];

/// After the stop position.
const PHASE2: &[&str] = &[
    "ALTER TABLE ti ADD COLUMN extra INT DEFAULT 7",
    "UPDATE ti SET extra = id * 10 WHERE id > 1",
    "BEGIN",
    "INSERT INTO ti (v, extra) VALUES ('phase 2', NULL)",
    "UPDATE th SET d = 99.999 WHERE id = 1",
    "DELETE FROM ti WHERE id = 3",
    "COMMIT",
    "CREATE TABLE late (id BIGINT UNSIGNED PRIMARY KEY, t VARCHAR(5)) ENGINE=MyISAM",
    "INSERT INTO late VALUES (18446744073709551615, 'max'), (0, NULL)",
    "DELETE FROM th",
];

fn rows_of(port: u16, table: &str) -> Option<Vec<Vec<String>>> {
    let mut c = connect(port, None);
    let exists = text_rows(
        &mut c,
        &format!(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'br_src' \
             AND TABLE_NAME = '{table}'"
        ),
    );
    if exists[0][0] == "0" {
        return None;
    }
    Some(text_rows(
        &mut c,
        &format!("SELECT * FROM br_src.{table} ORDER BY 1, 2"),
    ))
}

/// Every table of the workload, as rows (None for a table not there).
fn snapshot(port: u16) -> Vec<Option<Vec<Vec<String>>>> {
    TABLES.iter().map(|t| rows_of(port, t)).collect()
}

fn binlog_files(server: &TestServer) -> Vec<(String, String)> {
    let mut c = connect(server.port, None);
    text_rows(&mut c, "SHOW BINARY LOGS")
        .into_iter()
        .map(|r| {
            (
                r[0].clone(),
                server.datadir.join(&r[0]).display().to_string(),
            )
        })
        .collect()
}

fn mariadb_binlog(args: &[String]) -> Vec<u8> {
    let out = Command::new("mariadb-binlog")
        .args(args)
        .output()
        .expect("run mariadb-binlog");
    assert!(
        out.status.success(),
        "mariadb-binlog: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Pipes `script` into the `mariadb` client connected to `port`; its stderr on failure.
fn replay(port: u16, script: &[u8]) -> Result<(), String> {
    let mut load = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{port}"), "-uroot"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mariadb");
    {
        use std::io::Write;
        let mut stdin = load.stdin.take().unwrap();
        stdin.write_all(script).unwrap();
    }
    let out = load.wait_with_output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn err(c: &mut mysql::Conn, sql: &str) -> (u16, String) {
    match c.query_drop(sql) {
        Err(mysql::Error::MySqlError(e)) => (e.code, e.message),
        other => panic!(
            "{}: expected an error, got {other:?}",
            &sql[..sql.len().min(60)]
        ),
    }
}

fn one(c: &mut mysql::Conn, sql: &str) -> String {
    text_rows(c, sql)
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or_else(|| panic!("{sql}: no row"))
}

/// The `BINLOG '…'` statements of a script, in order (the first holds the
/// FORMAT_DESCRIPTION), each with the comment lines `mariadb-binlog` printed before it
/// (which name the events: `Table_map`, `Write_rows`, …).
fn binlog_statements(script: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = script;
    while let Some(i) = rest.find("BINLOG '") {
        let before = rest[..i].rsplit("/*!*/;").next().unwrap_or("").to_string();
        let tail = &rest[i..];
        let end = tail[8..].find('\'').expect("closing quote") + 9;
        out.push((before, tail[..end].to_string()));
        rest = &tail[end..];
    }
    out
}

#[test]
fn mariadb_binlog_output_replays_into_an_empty_strata() {
    for p in ["mariadb-binlog", "mariadb"] {
        if !require_program(p, "mariadb_binlog_output_replays_into_an_empty_strata") {
            return;
        }
    }
    let source = TestServer::start_flavor(Flavor::Strata, &["--log-bin"]);
    let mut c = connect(source.port, None);
    for s in PHASE1 {
        c.query_drop(*s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    let status = text_rows(&mut c, "SHOW MASTER STATUS");
    let (stop_file, stop_pos) = (status[0][0].clone(), status[0][1].clone());
    let at_stop = snapshot(source.port);
    for s in PHASE2 {
        c.query_drop(*s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    // An XA transaction prepared, another connection's transaction logged before its
    // XA COMMIT: the replay's XA PREPARE must leave the session (pseudo_slave_mode) for
    // the next transaction to start there.
    let mut c2 = connect(source.port, None);
    for s in [
        "XA START 'br1'",
        "INSERT INTO br_src.ti (v) VALUES ('xa')",
        "XA END 'br1'",
        "XA PREPARE 'br1'",
    ] {
        c.query_drop(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    c2.query_drop("INSERT INTO br_src.tn VALUES (9, 'between')")
        .unwrap();
    c.query_drop("XA COMMIT 'br1'").unwrap();
    let at_end = snapshot(source.port);
    assert_ne!(at_stop, at_end);
    let files = binlog_files(&source);
    assert!(files.len() >= 2, "FLUSH BINARY LOGS rotated: {files:?}");

    // The whole log, into an empty server.
    let all: Vec<String> = files.iter().map(|f| f.1.clone()).collect();
    let script = mariadb_binlog(&all);
    let text = String::from_utf8_lossy(&script).into_owned();
    assert!(text.contains("BINLOG '"), "row events as BINLOG statements");
    assert!(text.contains("PSEUDO_SLAVE_MODE=1"));
    let target = TestServer::start_flavor(Flavor::Strata, &[]);
    replay(target.port, &script).unwrap_or_else(|e| panic!("replay: {e}"));
    let replayed = snapshot(target.port);
    assert_eq!(replayed, at_end);
    // The rolled-back transaction is nowhere.
    let mut t = connect(target.port, None);
    assert_eq!(
        one(
            &mut t,
            "SELECT COUNT(*) FROM br_src.ti WHERE v = 'rolled back'"
        ),
        "0"
    );
    // The types came through exactly.
    assert_eq!(
        text_rows(
            &mut t,
            "SELECT u, d, dt, HEX(b), JSON_EXTRACT(j, '$.a[2]') FROM br_src.ti WHERE id = 1"
        ),
        vec![vec![
            "18446744073709551615".to_string(),
            "-246913578.250".into(),
            "2024-02-29 23:59:59.999999".into(),
            "00FF10".into(),
            "{\"b\": null}".into()
        ]]
    );
    drop(target);

    // Point in time: the files up to the stop file, the last cut at the position.
    let upto: Vec<String> = files
        .iter()
        .take_while(|f| f.0 <= stop_file)
        .map(|f| f.1.clone())
        .collect();
    let mut args = vec![format!("--stop-position={stop_pos}")];
    args.extend(upto);
    let script = mariadb_binlog(&args);
    let target = TestServer::start_flavor(Flavor::Strata, &[]);
    replay(target.port, &script).unwrap_or_else(|e| panic!("replay to the stop: {e}"));
    assert_eq!(snapshot(target.port), at_stop);

    // The BINLOG statement's errors, on a fresh connection of that server.
    let statements = binlog_statements(&text);
    let fde = &statements[0].1;
    let rows = statements
        .iter()
        .find(|s| s.0.contains("Write_rows: table id"))
        .expect("a rows BINLOG statement")
        .1
        .clone();
    let mut e = connect(target.port, None);
    assert_eq!(err(&mut e, &rows).0, 1609);
    assert_eq!(err(&mut e, "BINLOG 'not base64!'").0, 1575);
    e.query_drop(fde.as_str()).unwrap();
    // Cut short: an event whose size says more than there is.
    assert_eq!(err(&mut e, "BINLOG 'AAAAAAAAAAAAAAAA'").0, 1149);
    // Privileges: 1227 without BINLOG_ADMIN / REPLICATION_APPLIER / SUPER.
    e.query_drop("CREATE USER br_plain@'%'").unwrap();
    e.query_drop("GRANT SELECT ON *.* TO br_plain@'%'").unwrap();
    let plain_opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(target.port)
        .user(Some("br_plain"))
        .prefer_socket(false);
    let mut plain = mysql::Conn::new(plain_opts.clone()).unwrap();
    let (code, msg) = err(&mut plain, fde);
    assert_eq!(code, 1227, "{msg}");
    assert!(msg.contains("BINLOG_ADMIN"), "{msg}");
    // REPLICATION_APPLIER is a grantable dynamic privilege: BINLOG runs, and a rows
    // event needs its table's privilege too.
    e.query_drop("GRANT REPLICATION_APPLIER ON *.* TO br_plain@'%'")
        .unwrap();
    let grants = text_rows(&mut e, "SHOW GRANTS FOR br_plain@'%'");
    assert!(
        grants.iter().any(|g| g[0].contains("REPLICATION_APPLIER")),
        "{grants:?}"
    );
    drop(plain);
    let mut plain = mysql::Conn::new(plain_opts.clone()).unwrap();
    plain.query_drop(fde.as_str()).unwrap();
    plain.query_drop("BEGIN").unwrap();
    let (code, msg) = err(&mut plain, &rows);
    assert_eq!(code, 1142, "{msg}");
    plain.query_drop("ROLLBACK").unwrap();
    // The server is still there and answers.
    assert_eq!(one(&mut e, "SELECT 1"), "1");
}

#[test]
fn replay_session_variables_do_what_they_say() {
    let server = TestServer::start_flavor(Flavor::Strata, &[]);
    let mut c = connect(server.port, None);
    c.query_drop("SET time_zone = '+00:00'").unwrap();
    c.query_drop("SET TIMESTAMP = 1000000000").unwrap();
    assert_eq!(one(&mut c, "SELECT NOW()"), "2001-09-09 01:46:40");
    assert_eq!(one(&mut c, "SELECT @@timestamp"), "1000000000.000000");
    c.query_drop("SET TIMESTAMP = 1000000000.25").unwrap();
    assert_eq!(one(&mut c, "SELECT NOW(6)"), "2001-09-09 01:46:40.250000");
    c.query_drop("SET TIMESTAMP = DEFAULT").unwrap();
    assert_ne!(one(&mut c, "SELECT YEAR(NOW())"), "2001");
    let own = one(&mut c, "SELECT CONNECTION_ID()");
    assert_eq!(one(&mut c, "SELECT @@pseudo_thread_id"), own);
    c.query_drop("SET @@session.pseudo_thread_id = 4242")
        .unwrap();
    assert_eq!(one(&mut c, "SELECT CONNECTION_ID()"), "4242");
    c.query_drop(
        "SET @@session.character_set_client=utf8mb4,@@session.collation_connection=45,\
         @@session.collation_server=45",
    )
    .unwrap();
    assert_eq!(
        one(&mut c, "SELECT @@collation_connection"),
        "utf8mb4_general_ci"
    );
    c.query_drop("SET @@session.lc_time_names=0").unwrap();
    assert_eq!(one(&mut c, "SELECT @@lc_time_names"), "en_US");
    assert_eq!(err(&mut c, "SET lc_time_names = 'de_DE'").0, 1235);
    c.query_drop(
        "SET @@session.foreign_key_checks=1, @@session.sql_auto_is_null=0, \
         @@session.unique_checks=1, @@session.autocommit=1, \
         @@session.check_constraint_checks=1, @@session.system_versioning_insert_history=0",
    )
    .unwrap();
    assert_eq!(err(&mut c, "SET check_constraint_checks = 0").0, 1235);
    assert_eq!(
        err(&mut c, "SET system_versioning_insert_history = 1").0,
        1235
    );
    c.query_drop("SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0")
        .unwrap();
    assert_eq!(err(&mut c, "SET completion_type = 'CHAIN'").0, 1235);
    c.query_drop("SET @@session.gtid_domain_id = 0").unwrap();
    assert_eq!(err(&mut c, "SET @@session.gtid_domain_id = 1").0, 1235);
    assert_eq!(err(&mut c, "SET @@session.gtid_seq_no = 5").0, 1235);
    // Never the session's: read-only here (1238; MySQL 8, where it is a dynamic global,
    // answers 1228). MariaDB's session server_id is not taken.
    assert_eq!(err(&mut c, "SET @@session.server_id = 5").0, 1238);
    c.query_drop("SET @@SESSION.PSEUDO_SLAVE_MODE=1").unwrap();
    c.query_drop("SET @@session.max_delayed_threads=0").unwrap();
    c.query_drop("SET @@session.sql_mode=1168113696").unwrap();
    assert_eq!(
        one(&mut c, "SELECT @@sql_mode"),
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
         ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
    );
    // Restricted: a plain account may not set pseudo_thread_id.
    c.query_drop("CREATE USER br_v@'%'").unwrap();
    let mut v = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(server.port)
            .user(Some("br_v"))
            .prefer_socket(false),
    )
    .unwrap();
    assert_eq!(err(&mut v, "SET pseudo_thread_id = 1").0, 1227);
    assert_eq!(err(&mut v, "SET pseudo_slave_mode = 1").0, 1227);
}
