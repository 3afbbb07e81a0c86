//! The account tables end to end on a real server with the Rust driver: `mysql.user`,
//! `db`, `tables_priv`, `columns_priv`, `role_edges`, `default_roles`, `global_grants`
//! and information_schema's `*_PRIVILEGES`, `APPLICABLE_ROLES`, `ENABLED_ROLES` follow
//! CREATE USER / GRANT / RENAME USER (MySQL 8's rows); reading `mysql` needs SELECT
//! there (1142), the information_schema tables show other accounts only to an account
//! that may read `mysql`; writing a `mysql` table is 1235 (also when no row matches),
//! DROP DATABASE mysql 3552, REVOKE / DROP ROLE of a mandatory role 3628; the grantor
//! and time of table grants survive a restart.

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

/// The rows of `sql`, each as its columns joined by `|` (NULL as `NULL`).
fn rows(c: &mut mysql::Conn, sql: &str) -> Vec<String> {
    let r: Vec<mysql::Row> = c.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.into_iter()
        .map(|row| {
            row.unwrap()
                .into_iter()
                .map(|v| match v {
                    mysql::Value::NULL => "NULL".to_string(),
                    mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

#[test]
fn account_tables_show_the_store_to_those_who_may_read_it() {
    if Flavor::from_env() != Flavor::Strata {
        return;
    }
    let mut server = TestServer::start_flavor(Flavor::Strata, &[]);
    let port = server.port;
    let mut root = common::connect(port, None);
    for sql in [
        "CREATE DATABASE shop",
        "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20), price INT)",
        "CREATE ROLE app_read, app_write",
        "GRANT SELECT ON shop.* TO app_read",
        "GRANT INSERT, UPDATE ON shop.items TO app_write WITH GRANT OPTION",
        "GRANT app_read TO app_write",
        "CREATE USER alice IDENTIFIED BY 'pa' REQUIRE NONE WITH MAX_USER_CONNECTIONS 3",
        "GRANT app_write TO alice WITH ADMIN OPTION",
        "SET DEFAULT ROLE app_write TO alice",
        "GRANT SELECT (id, name), UPDATE (name) ON shop.items TO alice",
        "GRANT PROCESS, BACKUP_ADMIN ON *.* TO alice",
        "CREATE USER auditor IDENTIFIED BY 'pq'",
        "GRANT SELECT ON mysql.* TO auditor",
    ] {
        root.query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    assert_eq!(
        rows(&mut root, "SELECT user, host FROM mysql.user ORDER BY user"),
        [
            "alice|%",
            "app_read|%",
            "app_write|%",
            "auditor|%",
            "root|localhost"
        ]
    );
    // MySQL 8.0's layout: 51 columns, the privilege columns where tools read them.
    let cols = rows(
        &mut root,
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'mysql' \
         AND TABLE_NAME = 'user' ORDER BY ORDINAL_POSITION",
    );
    assert_eq!(cols.len(), 51);
    assert_eq!(
        (&cols[..3], cols[12].as_str(), cols[44].as_str()),
        (
            &["Host".to_string(), "User".into(), "Select_priv".into()][..],
            "Grant_priv",
            "account_locked"
        )
    );
    assert_eq!(
        rows(
            &mut root,
            "SELECT Select_priv, Process_priv, Grant_priv, ssl_type, max_user_connections, \
             plugin <> '', account_locked, password_expired, Create_role_priv \
             FROM mysql.user WHERE user = 'alice'"
        ),
        ["N|Y|N||3|1|N|N|N"]
    );
    // A role is a locked account with an expired password, as MySQL 8 creates it.
    assert_eq!(
        rows(
            &mut root,
            "SELECT account_locked, password_expired, authentication_string FROM mysql.user \
             WHERE user = 'app_read'"
        ),
        ["Y|Y|"]
    );
    assert_eq!(
        rows(
            &mut root,
            "SELECT Host, Db, User, Select_priv, Insert_priv, Grant_priv FROM mysql.db"
        ),
        ["%|shop|app_read|Y|N|N", "%|mysql|auditor|Y|N|N"]
    );
    assert_eq!(
        rows(
            &mut root,
            "SELECT User, Table_name, Grantor, Table_priv, Column_priv FROM mysql.tables_priv \
             ORDER BY User"
        ),
        [
            "alice|items|root@localhost||Select,Update",
            "app_write|items|root@localhost|Insert,Update,Grant|"
        ]
    );
    assert_eq!(
        rows(
            &mut root,
            "SELECT Column_name, Column_priv FROM mysql.columns_priv ORDER BY Column_name"
        ),
        ["id|Select", "name|Select,Update"]
    );
    assert_eq!(
        rows(&mut root, "SELECT * FROM mysql.role_edges ORDER BY TO_USER"),
        ["%|app_write|%|alice|Y", "%|app_read|%|app_write|N"]
    );
    assert_eq!(
        rows(&mut root, "SELECT * FROM mysql.default_roles"),
        ["%|alice|%|app_write"]
    );
    assert_eq!(
        rows(
            &mut root,
            "SELECT * FROM mysql.global_grants WHERE USER = 'alice'"
        ),
        ["alice|%|BACKUP_ADMIN|N"]
    );
    let tables = rows(&mut root, "SHOW TABLES FROM mysql");
    for t in [
        "user",
        "db",
        "tables_priv",
        "columns_priv",
        "role_edges",
        "default_roles",
        "global_grants",
    ] {
        assert!(
            tables.contains(&t.to_string()),
            "SHOW TABLES FROM mysql lists {t}"
        );
    }
    assert!(rows(&mut root, "SHOW DATABASES").contains(&"mysql".to_string()));

    // alice may not read mysql: 1142; information_schema shows her own grants only.
    let mut a = as_user(port, "alice", "pa");
    let (c, m) = code(a.query_drop("SELECT user, host FROM mysql.user"));
    assert_eq!(
        (c, m.as_str()),
        (
            1142,
            "SELECT command denied to user 'alice'@'localhost' for table 'user'"
        )
    );
    assert_eq!(
        rows(&mut a, "SELECT * FROM information_schema.USER_PRIVILEGES"),
        [
            "'alice'@'%'|def|PROCESS|NO",
            "'alice'@'%'|def|BACKUP_ADMIN|NO"
        ]
    );
    assert_eq!(
        rows(
            &mut a,
            "SELECT GRANTEE, COLUMN_NAME, PRIVILEGE_TYPE FROM information_schema.COLUMN_PRIVILEGES \
             ORDER BY COLUMN_NAME, PRIVILEGE_TYPE"
        ),
        [
            "'alice'@'%'|id|SELECT",
            "'alice'@'%'|name|SELECT",
            "'alice'@'%'|name|UPDATE"
        ]
    );
    assert!(rows(&mut a, "SELECT * FROM information_schema.TABLE_PRIVILEGES").is_empty());
    assert_eq!(
        rows(
            &mut a,
            "SELECT * FROM information_schema.APPLICABLE_ROLES ORDER BY ROLE_NAME"
        ),
        [
            "alice|%|app_write|%|app_read|%|NO|NO|NO",
            "alice|%|alice|%|app_write|%|YES|YES|NO"
        ]
    );
    assert_eq!(
        rows(&mut a, "SELECT * FROM information_schema.ENABLED_ROLES"),
        ["app_write|%|YES|NO"]
    );
    a.query_drop("SET ROLE NONE").unwrap();
    assert!(rows(&mut a, "SELECT * FROM information_schema.ENABLED_ROLES").is_empty());

    // The auditor (SELECT on mysql.*) reads mysql and sees every account's grants.
    let mut q = as_user(port, "auditor", "pq");
    assert_eq!(rows(&mut q, "SELECT COUNT(*) FROM mysql.user"), ["5"]);
    assert_eq!(
        rows(
            &mut q,
            "SELECT GRANTEE, TABLE_SCHEMA, PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES \
             ORDER BY GRANTEE"
        ),
        ["'app_read'@'%'|shop|SELECT", "'auditor'@'%'|mysql|SELECT"]
    );
    let (c, _) = code(q.query_drop("DELETE FROM mysql.user WHERE user = 'alice'"));
    assert_eq!(c, 1142, "DELETE needs DELETE on the table first");

    // Writes are refused, never ignored: also when no row would change.
    for sql in [
        "INSERT INTO mysql.user (Host, User) VALUES ('%', 'mallory')",
        "DELETE FROM mysql.user WHERE 1 = 0",
        "UPDATE mysql.db SET Select_priv = 'N' WHERE 1 = 0",
        "TRUNCATE TABLE mysql.role_edges",
        "DROP TABLE mysql.user",
        "CREATE TABLE mysql.user (a INT)",
    ] {
        let (c, m) = code(root.query_drop(sql));
        assert_eq!(c, 1235, "{sql}: {m}");
        assert!(
            m.contains("CREATE USER") && m.contains("GRANT"),
            "{sql}: {m}"
        );
    }
    let (c, _) = code(root.query_drop("DROP DATABASE mysql"));
    assert_eq!(c, 3552);
    // `mysql` is a real database besides: a table of its own is a table like any
    // other (the replica keeps its position in one), listed after the account tables.
    root.query_drop("CREATE TABLE mysql.extra (a INT)").unwrap();
    root.query_drop("INSERT INTO mysql.extra VALUES (7)")
        .unwrap();
    assert_eq!(rows(&mut root, "SELECT a FROM mysql.extra"), ["7"]);
    let tables = rows(&mut root, "SHOW TABLES FROM mysql");
    assert!(tables.iter().any(|t| t == "extra") && tables.iter().any(|t| t == "user"));
    root.query_drop("DROP TABLE mysql.extra").unwrap();

    // RENAME USER: where the account is granted as a role, the new name follows.
    root.query_drop("RENAME USER app_write TO app_rw").unwrap();
    assert_eq!(
        rows(
            &mut root,
            "SELECT FROM_USER, TO_USER FROM mysql.role_edges ORDER BY TO_USER"
        ),
        ["app_rw|alice", "app_read|app_rw"]
    );
    assert_eq!(
        rows(
            &mut root,
            "SELECT DEFAULT_ROLE_USER FROM mysql.default_roles"
        ),
        ["app_rw"]
    );
    assert_eq!(
        rows(&mut root, "SHOW GRANTS FOR alice")
            .into_iter()
            .filter(|g| g.contains("app_rw"))
            .count(),
        1
    );

    // A mandatory role can be neither revoked nor dropped (3628).
    root.query_drop("SET GLOBAL mandatory_roles = 'app_read'")
        .unwrap();
    let (c, m) = code(root.query_drop("REVOKE app_read FROM app_rw"));
    assert_eq!(
        (c, m.as_str()),
        (
            3628,
            "The role `app_read`@`%` is a mandatory role and can't be revoked or dropped. \
             The restriction can be lifted by excluding the role identifier from the global \
             variable mandatory_roles."
        )
    );
    assert_eq!(code(root.query_drop("DROP ROLE app_read")).0, 3628);
    root.query_drop("SET GLOBAL mandatory_roles = ''").unwrap();
    root.query_drop("REVOKE app_read FROM app_rw").unwrap();
    assert!(rows(
        &mut root,
        "SELECT * FROM mysql.role_edges WHERE FROM_USER = 'app_read'"
    )
    .is_empty());

    // The grantor and time of table grants are kept in the accounts file.
    let before = rows(
        &mut root,
        "SELECT User, Grantor, UNIX_TIMESTAMP(Timestamp) > 0 FROM mysql.tables_priv ORDER BY User",
    );
    server.restart();
    let mut root = common::connect(server.port, None);
    assert_eq!(
        rows(
            &mut root,
            "SELECT User, Grantor, UNIX_TIMESTAMP(Timestamp) > 0 FROM mysql.tables_priv ORDER BY User"
        ),
        before
    );
    assert_eq!(before.len(), 2);
}
