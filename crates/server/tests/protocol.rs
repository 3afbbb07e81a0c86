//! Protocol-level behaviour through a real driver (the `mysql` crate): passwords with
//! mysql_native_password, packets larger than 16 MiB in both directions, the
//! max_allowed_packet limit, prepared statements with typed parameters, and hundreds of
//! concurrent connections.

use crate::common;

use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};

fn with_password(port: u16, user: &str, pass: &str) -> mysql::Result<Conn> {
    Conn::new(
        OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some(user))
            .pass(Some(pass))
            .prefer_socket(false),
    )
}

#[test]
fn passwords_are_checked() {
    if common::Flavor::from_env() != common::Flavor::Strata {
        return;
    }
    let server = common::TestServer::start(&["--user", "app:s3cret", "--user", "root:rootpw"]);
    let mut c = with_password(server.port, "app", "s3cret").expect("right password");
    let v: Option<i64> = c.query_first("SELECT 1 + 1").unwrap();
    assert_eq!(v, Some(2));
    match with_password(server.port, "app", "wrong") {
        Err(mysql::Error::MySqlError(e)) => {
            assert_eq!((e.code, e.state.as_str()), (1045, "28000"), "{}", e.message);
            assert!(
                e.message.contains("Access denied for user 'app'"),
                "{}",
                e.message
            );
        }
        other => panic!("expected access denied, got {:?}", other.map(|_| ())),
    }
    assert!(with_password(server.port, "nobody", "").is_err());
    // COM_CHANGE_USER re-authenticates.
    assert!(c
        .change_user(
            mysql::ChangeUserOpts::default()
                .with_user(Some("root".into()))
                .with_pass(Some("rootpw".into()))
        )
        .is_ok());
    // The mariadb CLI (MariaDB Connector/C) with a password.
    if common::have_program("mariadb") {
        let out = std::process::Command::new("mariadb")
            .args([
                "--no-defaults",
                "--protocol=TCP",
                "-h127.0.0.1",
                &format!("-P{}", server.port),
                "-uapp",
                "-ps3cret",
                "-N",
                "-e",
                "SELECT 7",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "7");
    }
}

#[test]
fn packets_over_16_mib_and_the_packet_limit() {
    let server = common::TestServer::start(&["--max-allowed-packet", "64M"]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE big").unwrap();
    c.query_drop("USE big").unwrap();
    c.query_drop("CREATE TABLE b (id INT PRIMARY KEY, data LONGBLOB)")
        .unwrap();
    let blob: Vec<u8> = (0..(17usize << 20)).map(|i| (i % 251) as u8).collect();
    // Prepared insert: the parameter travels in a >16 MiB COM_STMT_EXECUTE packet.
    c.exec_drop("INSERT INTO b VALUES (?, ?)", (1, blob.clone()))
        .unwrap();
    // Text protocol: a >16 MiB result row.
    let back: Option<Vec<u8>> = c.query_first("SELECT data FROM b WHERE id = 1").unwrap();
    assert_eq!(back.as_deref().map(|b| b.len()), Some(blob.len()));
    assert!(back.unwrap() == blob, "blob differs after the round trip");
    // Exactly 16 MiB - 1 + 1 byte payload boundaries round-trip too.
    let edge = vec![b'e'; (16 << 20) - 1 - 40];
    c.exec_drop("INSERT INTO b VALUES (?, ?)", (2, edge.clone()))
        .unwrap();
    let back: Option<Vec<u8>> = c
        .exec_first("SELECT data FROM b WHERE id = ?", (2,))
        .unwrap();
    assert_eq!(back.map(|b| b.len()), Some(edge.len()));
    drop(c);

    let small = common::TestServer::start(&["--max-allowed-packet", "1M"]);
    let mut c = common::connect(small.port, None);
    let big_query = format!("SELECT '{}'", "x".repeat(2 << 20));
    match c.query_drop(&big_query) {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1153, "{}", e.message),
        Err(_) => {} // the server closes the connection after its error packet
        Ok(()) => panic!("a 2 MiB packet passed a 1 MiB max_allowed_packet"),
    }
    // The server is still there for others.
    let mut c2 = common::connect(small.port, None);
    let v: Option<i64> = c2.query_first("SELECT 3").unwrap();
    assert_eq!(v, Some(3));
}

#[test]
fn prepared_statements_with_typed_parameters() {
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE ps").unwrap();
    c.query_drop("USE ps").unwrap();
    c.query_drop("CREATE TABLE t (id BIGINT UNSIGNED PRIMARY KEY, d DOUBLE, s VARCHAR(20), n DECIMAL(6,2), ts DATETIME)").unwrap();
    let ins = c.prep("INSERT INTO t VALUES (?, ?, ?, ?, ?)").unwrap();
    c.exec_drop(
        &ins,
        (u64::MAX, 1.5f64, "héllo", "12.34", "2006-05-26 10:00:00"),
    )
    .unwrap();
    c.exec_drop(
        &ins,
        (
            2u64,
            mysql::Value::NULL,
            mysql::Value::NULL,
            mysql::Value::NULL,
            mysql::Value::NULL,
        ),
    )
    .unwrap();
    // Binary-protocol rows: DATETIME arrives as a date value, DECIMAL as text.
    let row: Option<(u64, f64, String, String, mysql::Value)> = c
        .exec_first("SELECT id, d, s, n, ts FROM t WHERE id = ?", (u64::MAX,))
        .unwrap();
    assert_eq!(
        row,
        Some((
            u64::MAX,
            1.5,
            "héllo".into(),
            "12.34".into(),
            mysql::Value::Date(2006, 5, 26, 10, 0, 0, 0)
        ))
    );
    let nulls: Option<(Option<f64>, Option<String>)> = c
        .exec_first("SELECT d, s FROM t WHERE id = ?", (2,))
        .unwrap();
    assert_eq!(nulls, Some((None, None)));
    match c.exec_drop(&ins, (2u64, 0.0f64, "x", "1", "2001-01-01")) {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1062),
        other => panic!("expected a duplicate key, got {other:?}"),
    }
    // The connection is still usable after the error.
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(2));
}

/// MySQL names an unaliased expression column by its text as written; drivers that
/// return rows as maps key them by it. Checked on both protocols and through a derived
/// table (whose columns the plan cache must not share between different literals).
#[test]
fn result_columns_are_named_as_the_client_wrote_them() {
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    let names = |c: &mut Conn, sql: &str| -> Vec<String> {
        let result = c.query_iter(sql).unwrap();
        result
            .columns()
            .as_ref()
            .iter()
            .map(|col| col.name_str().into_owned())
            .collect()
    };
    assert_eq!(
        names(
            &mut c,
            "SELECT 1+1, CONCAT('a','b') ,  count(*) , 'x', -2, 1 AS one"
        ),
        ["1+1", "CONCAT('a','b')", "count(*)", "x", "-2", "one"]
    );
    assert_eq!(
        names(&mut c, "SELECT * FROM (SELECT 1+1, 3) AS d WHERE 1 = 1"),
        ["1+1", "3"]
    );
    assert_eq!(
        names(&mut c, "SELECT * FROM (SELECT 2+2, 4) AS d WHERE 1 = 1"),
        ["2+2", "4"]
    );
    // A FROM inside a call is not the select list's end.
    assert_eq!(
        names(&mut c, "SELECT EXTRACT(DAY FROM '2024-01-02'), 7 MOD 3"),
        ["EXTRACT(DAY FROM '2024-01-02')", "7 MOD 3"]
    );
    let stmt = c.prep("SELECT ?+1, ?").unwrap();
    let cols: Vec<String> = stmt
        .columns()
        .iter()
        .map(|col| col.name_str().into_owned())
        .collect();
    assert_eq!(cols, ["?+1", "?"]);
}

#[test]
fn three_hundred_concurrent_connections() {
    let server = common::TestServer::start(&[]);
    let port = server.port;
    let threads: Vec<_> = (0..300)
        .map(|i| {
            std::thread::spawn(move || {
                let mut c = common::connect(port, None);
                let v: Option<i64> = c.query_first(format!("SELECT {i} + 1")).unwrap();
                assert_eq!(v, Some(i + 1));
                c
            })
        })
        .collect();
    let conns: Vec<Conn> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(conns.len(), 300);
    let mut c = common::connect(port, None);
    let rows: Vec<(String, String)> = c.query("SHOW STATUS LIKE 'Threads_connected'").unwrap();
    let n: usize = rows[0].1.parse().unwrap();
    assert!(n >= 301, "Threads_connected = {n}");
}

/// `Com_<statement>` counters count every statement of their kind, from every
/// connection, and SHOW STATUS lists them even at zero (as MySQL does).
#[test]
fn com_counters_count_statements() {
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    let com = |c: &mut Conn, name: &str| -> u64 {
        let rows: Vec<(String, String)> = c
            .query(format!("SHOW GLOBAL STATUS LIKE 'Com_{name}'"))
            .unwrap();
        assert_eq!(rows.len(), 1, "Com_{name} listed once");
        rows[0].1.parse().unwrap()
    };
    assert_eq!(com(&mut c, "delete"), 0);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY)")
        .unwrap();
    // Connected before the baseline: a driver may run statements of its own at connect.
    let conns: Vec<Conn> = (0..4).map(|_| common::connect(server.port, None)).collect();
    let (sel, ins) = (com(&mut c, "select"), com(&mut c, "insert"));
    let threads: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, mut c)| {
            std::thread::spawn(move || {
                for j in 0..25 {
                    c.query_drop(format!("INSERT INTO d.t VALUES ({})", i * 100 + j))
                        .unwrap();
                    let _: Vec<i64> = c.query("SELECT id FROM d.t LIMIT 1").unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(com(&mut c, "insert"), ins + 100);
    assert_eq!(com(&mut c, "select"), sel + 100);
}

/// `@@var` and `@var` are typed as MySQL types them, on both protocols: integer system
/// variables are LONGLONG (unsigned when MySQL declares them so), string ones VAR_STRING,
/// and a user variable has the type of the value assigned. Column names are the text as
/// written.
#[test]
fn variables_are_typed_on_both_protocols() {
    use mysql::consts::{ColumnFlags, ColumnType};
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("SET @v = 42, @d = 1.5, @s = 'x'").unwrap();
    let sql = "SELECT @@autocommit, @@session.autocommit, @@max_allowed_packet, @@sql_mode, \
               @v, @d, @s, @@warning_count";
    let types = |cols: &[mysql::Column]| -> Vec<(String, ColumnType, bool)> {
        cols.iter()
            .map(|c| {
                (
                    c.name_str().into_owned(),
                    c.column_type(),
                    c.flags().contains(ColumnFlags::UNSIGNED_FLAG),
                )
            })
            .collect()
    };
    let check = |got: Vec<(String, ColumnType, bool)>| {
        use ColumnType::*;
        let want = [
            ("@@autocommit", MYSQL_TYPE_LONGLONG, Some(false)),
            ("@@session.autocommit", MYSQL_TYPE_LONGLONG, Some(false)),
            ("@@max_allowed_packet", MYSQL_TYPE_LONGLONG, Some(true)),
            ("@@sql_mode", MYSQL_TYPE_VAR_STRING, None),
            ("@v", MYSQL_TYPE_LONGLONG, Some(false)),
            ("@d", MYSQL_TYPE_NEWDECIMAL, None),
            // MySQL and MariaDB send LONG_BLOB for a string user variable; Strata
            // VAR_STRING. Both are text to a driver; checked loosely.
            ("@s", MYSQL_TYPE_VAR_STRING, None),
            ("@@warning_count", MYSQL_TYPE_LONGLONG, None),
        ];
        assert_eq!(got.len(), want.len());
        for ((name, ty, unsigned), (wname, wty, wunsigned)) in got.iter().zip(want) {
            assert_eq!(name, wname);
            if wname == "@s" {
                assert!(
                    matches!(ty, MYSQL_TYPE_VAR_STRING | MYSQL_TYPE_LONG_BLOB),
                    "{name}: {ty:?}"
                );
                continue;
            }
            assert_eq!(*ty, wty, "{name}");
            if let Some(u) = wunsigned {
                assert_eq!(*unsigned, u, "{name} unsigned");
            }
        }
    };
    // Text protocol.
    let mut result = c.query_iter(sql).unwrap();
    check(types(result.columns().as_ref()));
    let row = result.next().unwrap().unwrap();
    let (ac, v): (i64, i64) = (row.get(0).unwrap(), row.get(4).unwrap());
    assert_eq!((ac, v), (1, 42));
    drop(result);
    // Binary protocol: the values arrive as integers, not strings.
    let stmt = c.prep(sql).unwrap();
    check(types(&stmt.columns()));
    let row: mysql::Row = c.exec_first(&stmt, ()).unwrap().unwrap();
    assert_eq!(row.as_ref(0), Some(&mysql::Value::Int(1)));
    assert_eq!(row.as_ref(4), Some(&mysql::Value::Int(42)));
    assert_eq!(row.as_ref(5), Some(&mysql::Value::Bytes(b"1.5".to_vec())));
    // A user variable that changed type since the statement was prepared: the execution
    // describes (and encodes) the new type.
    c.query_drop("SET @v = 'now a string'").unwrap();
    let row: mysql::Row = c.exec_first(&stmt, ()).unwrap().unwrap();
    assert_eq!(
        row.as_ref(4),
        Some(&mysql::Value::Bytes(b"now a string".to_vec()))
    );
}

fn found_rows_conn(port: u16) -> Conn {
    Conn::new(
        OptsBuilder::from_opts(common::opts(port, None))
            .additional_capabilities(mysql::consts::CapabilityFlags::CLIENT_FOUND_ROWS),
    )
    .unwrap()
}

/// OK packets as MySQL sends them: affected rows with and without CLIENT_FOUND_ROWS, the
/// insert id of explicit, generated and ON DUPLICATE KEY UPDATE inserts, warning counts.
#[test]
fn ok_packets_report_found_rows_insert_ids_and_warnings() {
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE okp").unwrap();
    c.query_drop("USE okp").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k INT, s VARCHAR(10), UNIQUE KEY (k))",
    )
    .unwrap();
    c.query_drop("INSERT INTO t (k, s) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        .unwrap();
    assert_eq!(
        (c.affected_rows(), c.last_insert_id()),
        (3, 1),
        "first generated id"
    );
    // Without CLIENT_FOUND_ROWS an UPDATE reports changed rows; with it, matched rows.
    c.query_drop("UPDATE t SET s = s").unwrap();
    assert_eq!(c.affected_rows(), 0);
    let mut f = found_rows_conn(server.port);
    f.query_drop("USE okp").unwrap();
    f.query_drop("UPDATE t SET s = s").unwrap();
    assert_eq!(f.affected_rows(), 3);
    f.query_drop("UPDATE t SET s = 'a' WHERE k <= 2").unwrap();
    assert_eq!(f.affected_rows(), 2, "found, though only one changed");
    // An explicit AUTO_INCREMENT value: in the OK packet, not in LAST_INSERT_ID().
    c.query_drop("INSERT INTO t VALUES (10, 10, 'x')").unwrap();
    assert_eq!(c.last_insert_id(), 10);
    let lid: Option<u64> = c.query_first("SELECT LAST_INSERT_ID()").unwrap();
    assert_eq!(lid, Some(1));
    // ON DUPLICATE KEY UPDATE: 1 inserted, 2 updated, 0 unchanged (1 with FOUND_ROWS).
    let odku = "INSERT INTO t (k, s) VALUES (2, 'z') ON DUPLICATE KEY UPDATE s = VALUES(s)";
    c.query_drop(odku).unwrap();
    assert_eq!(c.affected_rows(), 2);
    c.query_drop(odku).unwrap();
    assert_eq!(c.affected_rows(), 0);
    f.query_drop(odku).unwrap();
    assert_eq!(f.affected_rows(), 1);
    c.query_drop("INSERT INTO t (k, s) VALUES (50, 'n') ON DUPLICATE KEY UPDATE s = 'n'")
        .unwrap();
    let (affected, packet_id) = (c.affected_rows(), c.last_insert_id());
    // (InnoDB spends AUTO_INCREMENT values on the duplicate attempts above, so the id
    // is only known to be new.)
    let new_id: Option<u64> = c.query_first("SELECT id FROM t WHERE k = 50").unwrap();
    assert_eq!(affected, 1);
    assert_eq!(Some(packet_id), new_id);
    assert!(packet_id > 10);
    // `id = LAST_INSERT_ID(id)`: the existing row's id, in the packet and afterwards.
    c.query_drop("INSERT INTO t (k, s) VALUES (3, 'q') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), s = 'q'")
        .unwrap();
    assert_eq!((c.affected_rows(), c.last_insert_id()), (2, 3));
    let lid: Option<u64> = c.query_first("SELECT LAST_INSERT_ID()").unwrap();
    assert_eq!(lid, Some(3));
    // Warnings: counted in the OK packet and in the end of a result set.
    c.query_drop("SET wait_timeout = 0").unwrap();
    assert_eq!(c.warnings(), 1);
    c.query_drop(
        "SELECT DATE_ADD('2020-13-45', INTERVAL 1 DAY), DATE_ADD('2020-13-46', INTERVAL 1 DAY)",
    )
    .unwrap();
    assert_eq!(c.warnings(), 2, "the end of the result set counts them");
    let n: Option<u64> = c.query_first("SHOW COUNT(*) WARNINGS").unwrap();
    assert_eq!(n, Some(2));
    // The connection stays usable after errors of every kind.
    for bad in [
        "SELEC 1",
        "SELECT * FROM nope",
        "SET nosuch = 1",
        "INSERT INTO t VALUES (10, 10, 'x')",
    ] {
        assert!(c.query_drop(bad).is_err(), "{bad}");
        let one: Option<i64> = c.query_first("SELECT 1").unwrap();
        assert_eq!(one, Some(1), "after {bad}");
    }
}

/// SET PERSIST survives a restart (applied before clients connect); PERSIST_ONLY only
/// takes effect then; RESET PERSIST forgets. MariaDB has no SET PERSIST, so Strata only.
#[test]
fn persisted_variables_survive_a_restart() {
    if common::Flavor::from_env() != common::Flavor::Strata {
        return;
    }
    let mut server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("SET PERSIST wait_timeout = 1234, PERSIST sql_mode = 'ANSI_QUOTES'")
        .unwrap();
    c.query_drop("SET PERSIST_ONLY interactive_timeout = 999")
        .unwrap();
    let now: Option<(u64, u64)> = c
        .query_first("SELECT @@global.wait_timeout, @@global.interactive_timeout")
        .unwrap();
    assert_eq!(now, Some((1234, 28800)), "PERSIST_ONLY changes nothing yet");
    match c.query_drop("SET PERSIST_ONLY warning_count = 1") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1228),
        other => panic!("expected 1228, got {other:?}"),
    }
    assert!(server.datadir.join("mysqld-auto.cnf").exists());
    drop(c);
    server.restart();
    let mut c = common::connect(server.port, None);
    let after: Option<(u64, u64, String)> = c
        .query_first("SELECT @@global.wait_timeout, @@global.interactive_timeout, @@sql_mode")
        .unwrap();
    assert_eq!(after, Some((1234, 999, "ANSI_QUOTES".into())));
    c.query_drop("RESET PERSIST wait_timeout").unwrap();
    match c.query_drop("RESET PERSIST wait_timeout") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 3615),
        other => panic!("expected 3615, got {other:?}"),
    }
    c.query_drop("RESET PERSIST IF EXISTS wait_timeout")
        .unwrap();
    assert_eq!(c.warnings(), 1);
    c.query_drop("RESET PERSIST").unwrap();
    drop(c);
    server.restart();
    let mut c = common::connect(server.port, None);
    let reset: Option<(u64, u64)> = c
        .query_first("SELECT @@global.wait_timeout, @@global.interactive_timeout")
        .unwrap();
    assert_eq!(reset, Some((28800, 28800)));
}

/// A signed integer beside a BIGINT UNSIGNED in IFNULL/COALESCE/IF/CASE/GREATEST/UNION
/// is a DECIMAL(20,0) (MySQL 8's `Item::aggregate_type`): both protocols carry
/// 18446744073709551611 as that number. Typed a signed BIGINT, the binary protocol sent
/// it as -5. An INT UNSIGNED beside a signed integer stays a BIGINT.
#[test]
fn signed_beside_bigint_unsigned_is_decimal_on_both_protocols() {
    use mysql::consts::ColumnType;
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE ms").unwrap();
    c.query_drop("USE ms").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, u BIGINT UNSIGNED, a INT, i INT UNSIGNED)")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 18446744073709551611, -3, 7)")
        .unwrap();
    let query = "SELECT IFNULL(u, a), COALESCE(a, u), IF(id = ?, u, -1), \
                 CASE WHEN id = 2 THEN a ELSE u END, GREATEST(u, a), IFNULL(i, a), CAST(a AS UNSIGNED) | 0 \
                 FROM t WHERE id = 1";
    let big = "18446744073709551611";
    let expected: Vec<(ColumnType, String)> = vec![
        (ColumnType::MYSQL_TYPE_NEWDECIMAL, big.into()),
        (ColumnType::MYSQL_TYPE_NEWDECIMAL, "-3".into()),
        (ColumnType::MYSQL_TYPE_NEWDECIMAL, big.into()),
        (ColumnType::MYSQL_TYPE_NEWDECIMAL, big.into()),
        (ColumnType::MYSQL_TYPE_NEWDECIMAL, big.into()),
        (ColumnType::MYSQL_TYPE_LONGLONG, "7".into()),
        (
            ColumnType::MYSQL_TYPE_LONGLONG,
            "18446744073709551613".into(),
        ),
    ];
    let shape = |row: mysql::Row| -> Vec<(ColumnType, String)> {
        let types: Vec<ColumnType> = row.columns_ref().iter().map(|c| c.column_type()).collect();
        let vals: Vec<mysql::Value> = row.unwrap();
        types
            .into_iter()
            .zip(vals)
            .map(|(t, v)| {
                let text = match v {
                    mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                    mysql::Value::Int(i) => i.to_string(),
                    mysql::Value::UInt(u) => u.to_string(),
                    other => format!("{other:?}"),
                };
                (t, text)
            })
            .collect()
    };
    let stmt = c.prep(query).unwrap();
    let row: mysql::Row = c.exec_first(&stmt, (1,)).unwrap().unwrap();
    assert_eq!(shape(row), expected, "binary protocol");
    let row: mysql::Row = c.query_first(query.replace('?', "1")).unwrap().unwrap();
    assert_eq!(shape(row), expected, "text protocol");

    // UNION: the column is a DECIMAL and keeps both values.
    let q = "SELECT u FROM t UNION ALL SELECT a FROM t ORDER BY 1";
    let rows: Vec<mysql::Row> = c.exec(q, ()).unwrap();
    assert_eq!(
        rows[0].columns_ref()[0].column_type(),
        ColumnType::MYSQL_TYPE_NEWDECIMAL
    );
    let vals: Vec<String> = rows.into_iter().map(|r| shape(r)[0].1.clone()).collect();
    assert_eq!(vals, ["-3", big]);
}

/// A derived table's or CTE's columns reach the client with the types their subquery gave
/// them (MySQL and MariaDB: an INT column read through `(SELECT …) d` is still LONG of
/// length 11, NOT NULL, a VARCHAR(20) VAR_STRING of 80 bytes), on both protocols; they
/// used to be LONGLONG and LONGTEXT, whatever the column was.
#[test]
fn derived_table_and_cte_columns_keep_their_types() {
    use mysql::consts::{ColumnFlags, ColumnType};
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE dm").unwrap();
    c.query_drop("USE dm").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), d DECIMAL(6,2), s SMALLINT NOT NULL)",
    )
    .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 'a', 1.50, 2)")
        .unwrap();
    // (type, length, decimals, NOT NULL)
    let expected = vec![
        (ColumnType::MYSQL_TYPE_LONG, 11, 0, true),
        (ColumnType::MYSQL_TYPE_VAR_STRING, 80, 0, false),
        (ColumnType::MYSQL_TYPE_NEWDECIMAL, 8, 2, false),
        (ColumnType::MYSQL_TYPE_SHORT, 6, 0, true),
    ];
    let shape = |cols: &[mysql::Column]| -> Vec<(ColumnType, u32, u8, bool)> {
        cols.iter()
            .map(|c| {
                (
                    c.column_type(),
                    c.column_length(),
                    c.decimals(),
                    c.flags().contains(ColumnFlags::NOT_NULL_FLAG),
                )
            })
            .collect()
    };
    for query in [
        "SELECT * FROM t",
        "SELECT * FROM (SELECT id, v, d, s FROM t) AS x",
        "SELECT x.id, x.v, x.d, x.s FROM (SELECT DISTINCT id, v, d, s FROM t LIMIT 5) AS x",
        "WITH c AS (SELECT id, v, d, s FROM t) SELECT * FROM c",
        "WITH c AS (SELECT * FROM t UNION ALL SELECT * FROM t) SELECT * FROM c",
        "SELECT y.* FROM t AS z JOIN LATERAL (SELECT id, v, d, s FROM t WHERE t.id = z.id) AS y",
    ] {
        let result = c.query_iter(query).unwrap();
        assert_eq!(shape(result.columns().as_ref()), expected, "text: {query}");
        drop(result);
        let stmt = c.prep(query).unwrap();
        assert_eq!(shape(&stmt.columns()), expected, "prepared: {query}");
        let rows: Vec<mysql::Row> = c.exec(&stmt, ()).unwrap();
        assert_eq!(rows.len(), if query.contains("UNION") { 2 } else { 1 });
    }
    // NOT NULL: lost on the inner side of an outer join, kept by a UNION of NOT NULL sides.
    let not_null = |c: &mut mysql::Conn, q: &str| -> Vec<bool> {
        let result = c.query_iter(q).unwrap();
        let flags = result
            .columns()
            .as_ref()
            .iter()
            .map(|c| c.flags().contains(ColumnFlags::NOT_NULL_FLAG))
            .collect();
        drop(result);
        flags
    };
    let q = "SELECT t.id, t2.id, x.s FROM t LEFT JOIN t AS t2 ON 1 = 0 \
             LEFT JOIN (SELECT id, s FROM t) AS x ON x.id = t.id";
    assert_eq!(not_null(&mut c, q), vec![true, false, false], "{q}");
    let q = "SELECT id, s FROM t UNION ALL SELECT id, d FROM t";
    assert_eq!(not_null(&mut c, q), vec![true, false], "{q}");
}
