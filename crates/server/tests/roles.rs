//! Roles and column grants end to end, with the Rust driver on a real server: a role
//! granted and activated with SET ROLE gives access (1142 without it), default roles
//! and `activate_all_roles_on_login` at login, CURRENT_ROLE(), column grants allowing
//! some columns (1143 for the others, in the select list, WHERE and UPDATE's SET), and
//! all of it surviving a restart.

use crate::common;

use common::{Flavor, TestServer};
use mysql::prelude::Queryable;

fn as_user(port: u16, user: &str, pw: &str) -> mysql::Conn {
    mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some(user))
            .pass(Some(pw))
            .prefer_socket(false),
    )
    .unwrap_or_else(|e| panic!("{user} logs in: {e}"))
}

fn code(r: mysql::Result<()>) -> (u16, String) {
    match r {
        Err(mysql::Error::MySqlError(m)) => (m.code, m.message),
        Err(other) => panic!("not a server error: {other}"),
        Ok(()) => panic!("succeeded"),
    }
}

fn one(c: &mut mysql::Conn, sql: &str) -> String {
    let v: Vec<String> = c.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    v.join("|")
}

#[test]
fn roles_and_column_grants_decide_access_and_survive_a_restart() {
    if Flavor::from_env() != Flavor::Strata {
        return;
    }
    let mut server = TestServer::start_flavor(Flavor::Strata, &[]);
    let port = server.port;
    let mut root = common::connect(port, None);
    for sql in [
        "CREATE DATABASE shop",
        "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20), price INT)",
        "INSERT INTO shop.items VALUES (1, 'pen', 3), (2, 'ink', 5)",
        "CREATE ROLE app_read, app_write",
        "GRANT SELECT ON shop.* TO app_read",
        "GRANT INSERT, UPDATE ON shop.items TO app_write",
        "GRANT app_read TO app_write",
        "CREATE USER alice IDENTIFIED BY 'pa'",
        "CREATE USER bob IDENTIFIED BY 'pb'",
        "CREATE USER carol IDENTIFIED BY 'pc'",
        "GRANT app_write TO alice",
        "GRANT app_read TO bob",
        "SET DEFAULT ROLE app_read TO bob",
        "GRANT app_read TO carol",
        "GRANT SELECT (id, name), UPDATE (name) ON shop.items TO carol",
    ] {
        root.query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let (c, m) = code(root.query_drop("CREATE ROLE app_read"));
    assert_eq!(
        (c, m.as_str()),
        (1396, "Operation CREATE ROLE failed for 'app_read'@'%'")
    );
    let (c, _) = code(root.query_drop("GRANT alice TO app_read"));
    assert_eq!(c, 4027, "app_read is granted (through app_write) to alice");

    // alice: no role active at login (no default roles), so 1142 until SET ROLE.
    let mut a = as_user(port, "alice", "pa");
    assert_eq!(one(&mut a, "SELECT CURRENT_ROLE()"), "NONE");
    let (c, m) = code(a.query_drop("SELECT name FROM shop.items"));
    assert_eq!(
        (c, m.as_str()),
        (
            1142,
            "SELECT command denied to user 'alice'@'localhost' for table 'items'"
        )
    );
    let (c, m) = code(a.query_drop("SET ROLE app_read"));
    assert_eq!(
        (c, m.as_str()),
        (3530, "`app_read`@`%` is not granted to `alice`@`%`")
    );
    a.query_drop("SET ROLE app_write").unwrap();
    assert_eq!(one(&mut a, "SELECT CURRENT_ROLE()"), "`app_write`@`%`");
    // SET ROLE inside a transaction does not commit it.
    a.query_drop("BEGIN").unwrap();
    a.query_drop("INSERT INTO shop.items VALUES (7, 'tmp', 0)")
        .unwrap();
    a.query_drop("SET ROLE app_write").unwrap();
    a.query_drop("ROLLBACK").unwrap();
    // SELECT through app_read (granted to app_write), INSERT through app_write.
    assert_eq!(
        one(&mut a, "SELECT name FROM shop.items WHERE id = 1"),
        "pen"
    );
    a.query_drop("INSERT INTO shop.items VALUES (3, 'cap', 1)")
        .unwrap();
    assert_eq!(code(a.query_drop("DELETE FROM shop.items")).0, 1142);
    let grants: Vec<String> = a.query("SHOW GRANTS").unwrap();
    assert!(
        grants.contains(&"GRANT INSERT, UPDATE ON `shop`.`items` TO `alice`@`%`".to_string())
            && grants.contains(&"GRANT `app_write`@`%` TO `alice`@`%`".to_string()),
        "{grants:?}"
    );
    a.query_drop("SET ROLE NONE").unwrap();
    assert_eq!(code(a.query_drop("SELECT 1 FROM shop.items")).0, 1142);

    // bob: its default role is active at login.
    let mut b = as_user(port, "bob", "pb");
    assert_eq!(one(&mut b, "SELECT CURRENT_ROLE()"), "`app_read`@`%`");
    assert_eq!(one(&mut b, "SELECT COUNT(*) FROM shop.items"), "3");

    // carol: only column grants on items until her role is active.
    let mut c = as_user(port, "carol", "pc");
    assert_eq!(one(&mut c, "SELECT CURRENT_ROLE()"), "NONE");
    assert_eq!(
        one(&mut c, "SELECT name FROM shop.items WHERE id = 2"),
        "ink"
    );
    let (n, m) = code(c.query_drop("SELECT price FROM shop.items"));
    assert_eq!(
        (n, m.as_str()),
        (
            1143,
            "SELECT command denied to user 'carol'@'localhost' for column 'price' in table 'items'"
        )
    );
    assert_eq!(
        code(c.query_drop("SELECT name FROM shop.items WHERE price > 1")).0,
        1143
    );
    // `*` takes every column: the table is refused (1142), as MySQL and MariaDB do.
    assert_eq!(code(c.query_drop("SELECT * FROM shop.items")).0, 1142);
    assert_eq!(code(c.query_drop("SELECT i.* FROM shop.items i")).0, 1142);
    assert_eq!(one(&mut c, "SELECT COUNT(*) FROM shop.items"), "3");
    c.query_drop("UPDATE shop.items SET name = 'quill' WHERE id = 1")
        .unwrap();
    let (n, m) = code(c.query_drop("UPDATE shop.items SET price = 9 WHERE id = 1"));
    assert_eq!(
        (n, m.as_str()),
        (
            1143,
            "UPDATE command denied to user 'carol'@'localhost' for column 'price' in table 'items'"
        )
    );
    assert_eq!(
        code(c.query_drop("INSERT INTO shop.items (id) VALUES (9)")).0,
        1142
    );
    let grants: Vec<String> = root.query("SHOW GRANTS FOR carol").unwrap();
    assert_eq!(
        grants,
        vec![
            "GRANT USAGE ON *.* TO `carol`@`%`",
            "GRANT SELECT (`id`, `name`), UPDATE (`name`) ON `shop`.`items` TO `carol`@`%`",
            "GRANT `app_read`@`%` TO `carol`@`%`",
        ]
    );
    c.query_drop("SET ROLE ALL").unwrap();
    assert_eq!(
        one(&mut c, "SELECT price FROM shop.items WHERE id = 1"),
        "3"
    );

    // activate_all_roles_on_login: every granted role at login.
    root.query_drop("SET GLOBAL activate_all_roles_on_login = ON")
        .unwrap();
    let mut a2 = as_user(port, "alice", "pa");
    assert_eq!(one(&mut a2, "SELECT CURRENT_ROLE()"), "`app_write`@`%`");
    assert_eq!(
        one(&mut a2, "SELECT name FROM shop.items WHERE id = 1"),
        "quill"
    );
    root.query_drop("SET GLOBAL activate_all_roles_on_login = OFF")
        .unwrap();
    drop((a, a2, b, c, root));

    // Everything survives a restart: roles, their grants, default roles, column grants.
    server.restart();
    let mut b = as_user(server.port, "bob", "pb");
    assert_eq!(one(&mut b, "SELECT CURRENT_ROLE()"), "`app_read`@`%`");
    assert_eq!(one(&mut b, "SELECT COUNT(*) FROM shop.items"), "3");
    let mut c = as_user(server.port, "carol", "pc");
    assert_eq!(
        one(&mut c, "SELECT name FROM shop.items WHERE id = 1"),
        "quill"
    );
    assert_eq!(code(c.query_drop("SELECT price FROM shop.items")).0, 1143);
    let mut a = as_user(server.port, "alice", "pa");
    assert_eq!(code(a.query_drop("SELECT 1 FROM shop.items")).0, 1142);
    a.query_drop("SET ROLE app_write").unwrap();
    assert_eq!(one(&mut a, "SELECT COUNT(*) FROM shop.items"), "3");
    let mut root = common::connect(server.port, None);
    root.query_drop("DROP ROLE app_write").unwrap();
    let grants: Vec<String> = root.query("SHOW GRANTS FOR alice").unwrap();
    assert_eq!(grants, vec!["GRANT USAGE ON *.* TO `alice`@`%`"]);
    // The dropped role no longer counts in the session that had it active.
    assert_eq!(code(a.query_drop("SELECT 1 FROM shop.items")).0, 1142);
}
