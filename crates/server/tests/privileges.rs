//! Accounts and privileges end to end, with real clients on a real server: accounts
//! created by root, a limited account refused with 1142 / 1044 / 1227 (the Rust driver
//! and PyMySQL), SHOW GRANTS text, a wrong password 1045, ACCOUNT LOCK 3118,
//! MAX_USER_CONNECTIONS 1226, REQUIRE SSL refused without TLS (1045) and admitted with
//! it, the accounts surviving a restart, and column privileges checked through views and
//! derived tables merged into the query (as when they were materialised).

use crate::common;

use common::{Flavor, TestServer};
use mysql::prelude::Queryable;
use std::process::Command;

fn as_user(port: u16, user: &str, pw: &str, db: Option<&str>) -> mysql::Result<mysql::Conn> {
    mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some(user))
            .pass(Some(pw))
            .db_name(db)
            .prefer_socket(false),
    )
}

fn code(e: mysql::Error) -> (u16, String) {
    match e {
        mysql::Error::MySqlError(m) => (m.code, m.message),
        other => panic!("not a server error: {other}"),
    }
}

fn strata() -> Option<TestServer> {
    if Flavor::from_env() != Flavor::Strata {
        return None;
    }
    Some(TestServer::start_flavor(Flavor::Strata, &[]))
}

#[test]
fn a_limited_account_gets_only_what_it_was_granted() {
    let Some(mut server) = strata() else { return };
    let port = server.port;
    let mut root = common::connect(port, None);
    root.query_drop("CREATE DATABASE shop").unwrap();
    root.query_drop("CREATE DATABASE secret").unwrap();
    root.query_drop("CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20))")
        .unwrap();
    root.query_drop("INSERT INTO shop.items VALUES (1, 'pen')")
        .unwrap();
    root.query_drop("CREATE TABLE secret.t (id INT PRIMARY KEY)")
        .unwrap();
    root.query_drop("CREATE USER 'reader'@'%' IDENTIFIED WITH mysql_native_password BY 'pw1'")
        .unwrap();
    root.query_drop("GRANT SELECT ON shop.* TO 'reader'@'%'")
        .unwrap();
    let grants: Vec<String> = root.query("SHOW GRANTS FOR 'reader'@'%'").unwrap();
    assert_eq!(
        grants,
        vec![
            "GRANT USAGE ON *.* TO `reader`@`%`",
            "GRANT SELECT ON `shop`.* TO `reader`@`%`"
        ]
    );

    let mut r = as_user(port, "reader", "pw1", Some("shop")).expect("reader logs in");
    let names: Vec<String> = r.query("SELECT name FROM items").unwrap();
    assert_eq!(names, vec!["pen"]);
    let (c, m) = code(
        r.query_drop("INSERT INTO items VALUES (2, 'ink')")
            .unwrap_err(),
    );
    assert_eq!(c, 1142);
    assert_eq!(
        m,
        "INSERT command denied to user 'reader'@'localhost' for table 'items'"
    );
    assert_eq!(
        code(r.query_drop("SELECT * FROM secret.t").unwrap_err()).0,
        1142
    );
    assert_eq!(code(r.query_drop("USE secret").unwrap_err()).0, 1044);
    assert_eq!(code(r.query_drop("DROP TABLE items").unwrap_err()).0, 1142);
    assert_eq!(code(r.query_drop("CREATE DATABASE x").unwrap_err()).0, 1044);
    assert_eq!(code(r.query_drop("CREATE USER x").unwrap_err()).0, 1227);
    assert_eq!(
        code(r.query_drop("SET GLOBAL max_connections = 10").unwrap_err()).0,
        1227
    );
    // Stored programs run their statements unchecked: refused to a limited account.
    assert_eq!(
        code(
            r.query_drop("CREATE PROCEDURE p() SELECT * FROM secret.t")
                .unwrap_err()
        )
        .0,
        1235
    );
    let dbs: Vec<String> = r.query("SHOW DATABASES").unwrap();
    assert!(dbs.contains(&"shop".to_string()), "{dbs:?}");
    assert!(!dbs.contains(&"secret".to_string()), "{dbs:?}");
    // A prepared statement is checked at execution too.
    let (c, _) = code(
        r.exec_drop("DELETE FROM items WHERE id = ?", (1,))
            .unwrap_err(),
    );
    assert_eq!(c, 1142);
    // A grant applies to the open session at its next statement.
    root.query_drop("GRANT INSERT ON shop.items TO 'reader'@'%'")
        .unwrap();
    r.query_drop("INSERT INTO items VALUES (2, 'ink')").unwrap();
    root.query_drop("REVOKE INSERT ON shop.items FROM 'reader'@'%'")
        .unwrap();
    assert_eq!(
        code(
            r.query_drop("INSERT INTO items VALUES (3, 'cap')")
                .unwrap_err()
        )
        .0,
        1142
    );
    // The database of the handshake is checked as USE is.
    assert_eq!(
        code(as_user(port, "reader", "pw1", Some("secret")).unwrap_err()).0,
        1044
    );

    // A wrong password, a locked account, the account's own connection limit.
    let (c, m) = code(as_user(port, "reader", "nope", None).unwrap_err());
    assert_eq!(c, 1045);
    assert_eq!(
        m,
        "Access denied for user 'reader'@'localhost' (using password: YES)"
    );
    assert_eq!(
        code(as_user(port, "nobody", "x", None).unwrap_err()).0,
        1045
    );
    root.query_drop("CREATE USER locked@'%' IDENTIFIED BY 'pw' ACCOUNT LOCK")
        .unwrap();
    assert_eq!(
        code(as_user(port, "locked", "pw", None).unwrap_err()).0,
        3118
    );
    root.query_drop("ALTER USER locked@'%' ACCOUNT UNLOCK WITH MAX_USER_CONNECTIONS 1")
        .unwrap();
    let first = as_user(port, "locked", "pw", None).expect("unlocked");
    assert_eq!(
        code(as_user(port, "locked", "pw", None).unwrap_err()).0,
        1226
    );
    drop(first);

    // PyMySQL, a real driver, gets the same 1142.
    if common::have_program("python3") {
        let script = format!(
            "import pymysql\n\
             c = pymysql.connect(host='127.0.0.1', port={port}, user='reader', password='pw1', database='shop')\n\
             cur = c.cursor()\n\
             cur.execute('SELECT COUNT(*) FROM items')\n\
             print(cur.fetchone()[0])\n\
             try:\n    cur.execute('DELETE FROM items')\n    print('deleted')\n\
             except pymysql.err.OperationalError as e:\n    print(e.args[0])\n"
        );
        let out = Command::new("python3")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        if out.status.success() {
            assert_eq!(text.trim(), "2\n1142", "{text}");
        } else {
            assert!(
                !common::in_ci(),
                "pymysql failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    // Everything survives a restart.
    drop(r);
    drop(root);
    server.restart();
    let mut r = as_user(server.port, "reader", "pw1", Some("shop")).expect("after restart");
    assert_eq!(code(r.query_drop("DELETE FROM items").unwrap_err()).0, 1142);
    let mut root = common::connect(server.port, None);
    let grants: Vec<String> = root.query("SHOW GRANTS FOR reader@'%'").unwrap();
    assert_eq!(grants.len(), 2);
    root.query_drop("DROP USER reader@'%'").unwrap();
    assert_eq!(
        code(as_user(server.port, "reader", "pw1", None).unwrap_err()).0,
        1045
    );
}

/// The mariadb CLI as `user`, with or without TLS; (success, stdout, stderr).
fn cli(port: u16, user: &str, pw: &str, tls: bool, sql: &str) -> (bool, String, String) {
    let mut cmd = Command::new("mariadb");
    cmd.args(["-h127.0.0.1", &format!("-P{port}"), &format!("-u{user}")])
        .arg(format!("-p{pw}"))
        .args(if tls {
            vec!["--ssl", "--skip-ssl-verify-server-cert"]
        } else {
            vec!["--skip-ssl"]
        })
        .args(["-N", "-e", sql]);
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

#[test]
fn require_ssl_needs_tls_and_caching_sha2_logs_in() {
    let Some(server) = strata() else { return };
    if !common::require_program("mariadb", "require_ssl_needs_tls") {
        return;
    }
    let port = server.port;
    let mut root = common::connect(port, None);
    root.query_drop(
        "CREATE USER tlsonly@'%' IDENTIFIED WITH mysql_native_password BY 's3cret' REQUIRE SSL",
    )
    .unwrap();
    root.query_drop(
        "CREATE USER sha2@'%' IDENTIFIED WITH caching_sha2_password BY 'pw' REQUIRE SSL",
    )
    .unwrap();
    let created: Vec<String> = root.query("SHOW CREATE USER sha2@'%'").unwrap();
    assert!(
        created[0].starts_with(
            "CREATE USER `sha2`@`%` IDENTIFIED WITH 'caching_sha2_password' AS '$A$005$"
        ) && created[0].contains(" REQUIRE SSL PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK"),
        "{created:?}"
    );
    // Without TLS: 1045 with the right password, as MySQL answers.
    let (c, m) = code(as_user(port, "tlsonly", "s3cret", None).unwrap_err());
    assert_eq!(c, 1045, "{m}");
    let (ok, _, err) = cli(port, "tlsonly", "s3cret", false, "SELECT 1");
    assert!(!ok && err.contains("1045"), "{err}");
    // With TLS: admitted, in both plugins (caching_sha2's full authentication in clear
    // over TLS, then its fast path from the cache).
    let (ok, out, err) = cli(port, "tlsonly", "s3cret", true, "SELECT CURRENT_USER()");
    assert!(ok, "{err}");
    assert_eq!(out, "tlsonly@%");
    for _ in 0..2 {
        let (ok, out, err) = cli(port, "sha2", "pw", true, "SELECT CURRENT_USER()");
        assert!(ok, "{err}");
        assert_eq!(out, "sha2@%");
    }
    let (ok, _, err) = cli(port, "sha2", "wrong", true, "SELECT 1");
    assert!(!ok && err.contains("1045"), "{err}");
}

/// A view or derived table merged into the outer query (optimizer/derived_merge.rs) is
/// checked as when it was materialised: every column its query reads needs SELECT, and a
/// `*` over the view is not a `*` over its base table (1143, not 1142).
#[test]
fn column_privileges_through_merged_views() {
    let Some(server) = strata() else { return };
    let port = server.port;
    let mut root = common::connect(port, None);
    for q in [
        "CREATE DATABASE p",
        "CREATE TABLE p.b (id INT PRIMARY KEY, a INT, s INT)",
        "INSERT INTO p.b VALUES (1, 2, 3)",
        "CREATE TABLE p.t (x INT)",
        "INSERT INTO p.t VALUES (1)",
        "CREATE VIEW p.v AS SELECT id, a FROM p.b",
        "CREATE VIEW p.vs AS SELECT * FROM p.b",
        "CREATE USER 'cols'@'%' IDENTIFIED WITH mysql_native_password BY 'pw'",
        "GRANT SELECT ON p.v TO 'cols'@'%'",
        "GRANT SELECT ON p.vs TO 'cols'@'%'",
        "GRANT SELECT ON p.t TO 'cols'@'%'",
        "GRANT SELECT (id) ON p.b TO 'cols'@'%'",
    ] {
        root.query_drop(q).unwrap();
    }
    let mut c = as_user(port, "cols", "pw", None).unwrap();
    let err = |c: &mut mysql::Conn, q: &str| c.query_drop(q).err().map(|e| code(e).0);
    assert_eq!(err(&mut c, "SELECT id FROM p.v"), Some(1143));
    assert_eq!(err(&mut c, "SELECT * FROM p.v"), Some(1143));
    assert_eq!(
        err(&mut c, "SELECT t.x, v.id FROM p.t JOIN p.v ON v.id = t.x"),
        Some(1143)
    );
    assert_eq!(err(&mut c, "SELECT * FROM p.vs"), Some(1142));
    assert_eq!(
        err(&mut c, "SELECT id FROM (SELECT id, a FROM p.b) AS d"),
        Some(1143)
    );
    assert_eq!(
        err(&mut c, "SELECT id FROM (SELECT id FROM p.b) AS d"),
        None
    );
    let rows: Vec<(i64, i64)> = c
        .query("SELECT t.x, d.id FROM p.t JOIN (SELECT id FROM p.b) AS d ON d.id = t.x")
        .unwrap();
    assert_eq!(rows, vec![(1, 1)]);
}
