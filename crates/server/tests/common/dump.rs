//! Dump round trips between servers for the integration tests: `mariadb-dump` of a
//! database, loading a dump with the `mariadb` client, and query rows as text to compare
//! one server's answers with another's.

use mysql::prelude::Queryable;
use std::io::Write;
use std::process::{Command, Stdio};

/// Every value of a query's rows as the text protocol sends it (`NULL` for NULL).
pub fn text_rows(conn: &mut mysql::Conn, sql: &str) -> Vec<Vec<String>> {
    let rows: Vec<mysql::Row> = conn.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.into_iter()
        .map(|r| {
            r.unwrap()
                .into_iter()
                .map(|v| match v {
                    mysql::Value::NULL => "NULL".to_string(),
                    mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                    other => other.as_sql(true),
                })
                .collect()
        })
        .collect()
}

/// The dump program here: `mariadb-dump`, or `mysqldump` where that is its name.
pub fn dump_program() -> Option<&'static str> {
    ["mariadb-dump", "mysqldump"]
        .into_iter()
        .find(|p| super::have_program(p))
}

/// `mariadb-dump --single-transaction [extra…] db` of the server on `port`.
pub fn dump(port: u16, db: &str, extra: &[&str]) -> Vec<u8> {
    let program = dump_program().unwrap_or("mariadb-dump");
    let out = Command::new(program)
        .args(["--no-defaults", "--protocol=TCP", "-h127.0.0.1", "-uroot"])
        .arg(format!("-P{port}"))
        .arg("--single-transaction")
        .args(extra)
        .arg(db)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} of port {port} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Feeds a dump to the `mariadb` client connected to `db` on `port`.
pub fn load(port: u16, db: &str, dumped: &[u8]) {
    let mut child = Command::new("mariadb")
        .args(["--no-defaults", "--protocol=TCP", "-h127.0.0.1", "-uroot"])
        .arg(format!("-P{port}"))
        .arg(db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the mariadb client");
    child
        .stdin
        .take()
        .expect("client stdin")
        .write_all(dumped)
        .expect("feed the dump");
    let out = child
        .wait_with_output()
        .expect("wait for the mariadb client");
    assert!(
        out.status.success(),
        "loading the dump into port {port} failed: {}\ndump:\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(dumped)
    );
}
