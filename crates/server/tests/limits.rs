//! Nothing one client sends can stop the server for the others: statements nested deeper
//! than a connection thread's stack get MySQL's 1436 (or run), and the server answers the
//! next client. Runs against the strata binary (or MariaDB with `STRATA_TEST_FLAVOR`).

use crate::common;

use mysql::prelude::Queryable;

/// Sends `sql` on a fresh connection and returns the error code, if any.
fn outcome(port: u16, sql: &str) -> Result<(), u16> {
    let mut c = common::connect(port, None);
    match c.query_drop(sql) {
        Ok(()) => Ok(()),
        Err(mysql::Error::MySqlError(e)) => Err(e.code),
        Err(other) => panic!("not a server error (did the server die?): {other}"),
    }
}

#[test]
fn deep_statements_get_an_error_or_an_answer_never_a_crash() {
    let server = common::TestServer::start(&[]);
    let port = server.port;
    let statements = [
        // 1,200 terms (2.4 KB) once overflowed the connection thread's stack.
        format!("SELECT 1{}", "+1".repeat(1_200)),
        format!("SELECT 1{}", "+1".repeat(1_000_000)),
        format!("SELECT {}1{}", "(".repeat(100_000), ")".repeat(100_000)),
        format!("SELECT {}1", "NOT ".repeat(100_000)),
        format!("SELECT {}1", "- ".repeat(100_000)),
        format!("SELECT {}", "CONCAT(".repeat(50_000)),
        format!(
            "SELECT 1 FROM DUAL WHERE {}",
            (0..20_000)
                .map(|i| format!("{i} = {i}"))
                .collect::<Vec<_>>()
                .join(" OR ")
        ),
    ];
    for sql in &statements {
        match outcome(port, sql) {
            Ok(()) | Err(1436) | Err(1064) => {}
            Err(code) => panic!("{}…: unexpected error {code}", &sql[..40]),
        }
        // The server still answers, on a new connection.
        let mut c = common::connect(port, None);
        let one: Option<i64> = c.query_first("SELECT 1").unwrap();
        assert_eq!(one, Some(1), "after {}…", &sql[..40]);
    }
    // The chain MySQL's users send runs and gives the right answer on Strata.
    if server.flavor == common::Flavor::Strata {
        let mut c = common::connect(port, None);
        let sum: Option<i64> = c
            .query_first(format!("SELECT 1{}", "+1".repeat(1_200)))
            .unwrap();
        assert_eq!(sum, Some(1_201));
        assert_eq!(
            outcome(port, &format!("SELECT 1{}", "+1".repeat(1_000_000))),
            Err(1436)
        );
    }
}

#[test]
fn joins_past_61_tables_get_1116_and_wide_joins_are_planned_greedily() {
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE wide").unwrap();
    c.query_drop("USE wide").unwrap();
    c.query_drop("CREATE TABLE w (id INT PRIMARY KEY, nxt INT)")
        .unwrap();
    let rows: Vec<String> = (1..=200).map(|i| format!("({i}, {})", i + 1)).collect();
    c.query_drop(format!("INSERT INTO w VALUES {}", rows.join(",")))
        .unwrap();
    // 62 tables: MySQL's limit is 61 (the planner keeps a bit per table).
    let from: Vec<String> = (0..62).map(|i| format!("w t{i}")).collect();
    match c.query_drop(format!("SELECT 1 FROM {}", from.join(", "))) {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1116, "{}", e.message),
        other => panic!("expected 1116, got {other:?}"),
    }
    // A chain of 21 tables written in the worst order for a nested loop (the last table
    // first): the greedy order starts from the constant and follows the chain by index.
    let n = 21;
    let from: Vec<String> = (0..n).rev().map(|i| format!("w t{i}")).collect();
    let mut conds: Vec<String> = (1..n)
        .map(|i| format!("t{i}.id = t{}.nxt", i - 1))
        .collect();
    conds.push("t0.id = 5".into());
    let count: Option<i64> = c
        .query_first(format!(
            "SELECT COUNT(*) FROM {} WHERE {}",
            from.join(", "),
            conds.join(" AND ")
        ))
        .unwrap();
    assert_eq!(count, Some(1));
    let last: Option<i64> = c
        .query_first(format!(
            "SELECT t{}.id FROM {} WHERE {}",
            n - 1,
            from.join(", "),
            conds.join(" AND ")
        ))
        .unwrap();
    assert_eq!(last, Some(5 + n as i64 - 1));
}

/// `max_prepared_stmt_count` bounds the prepared statements of all sessions together:
/// past it, PREPARE (binary or SQL) gets 1461; closing one frees a place, and
/// `Prepared_stmt_count` counts them. (Statements a client never closes would otherwise
/// hold server memory for as long as their connections live.)
#[test]
fn prepared_statements_past_max_prepared_stmt_count_get_1461() {
    let server = common::TestServer::start(&[]);
    let mut admin = common::connect(server.port, None);
    admin
        .query_drop("SET GLOBAL max_prepared_stmt_count = 3")
        .unwrap();
    let mut a = common::connect(server.port, None);
    let mut b = common::connect(server.port, None);
    let s1 = a.prep("SELECT 1").unwrap();
    let _s2 = a.prep("SELECT 2").unwrap();
    b.query_drop("PREPARE p FROM 'SELECT 3'").unwrap();
    let code = |r: mysql::Result<()>| match r {
        Err(mysql::Error::MySqlError(e)) => Some(e.code),
        _ => None,
    };
    assert_eq!(code(b.prep("SELECT 4").map(|_| ())), Some(1461));
    assert_eq!(code(b.query_drop("PREPARE q FROM 'SELECT 5'")), Some(1461));
    let count = |c: &mut mysql::Conn| -> u64 {
        let row: Option<(String, String)> = c
            .query_first("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'")
            .unwrap();
        row.map_or(0, |(_, v)| v.parse().unwrap_or(0))
    };
    assert_eq!(count(&mut admin), 3);
    a.close(s1).unwrap();
    // COM_STMT_CLOSE has no reply: a round trip on `a` makes sure the server has taken
    // it before `b` asks for the freed place.
    a.query_drop("DO 1").unwrap();
    b.query_drop("PREPARE q FROM 'SELECT 5'").unwrap();
    // A connection that ends gives its statements back.
    drop(a);
    let start = std::time::Instant::now();
    while count(&mut admin) != 2 {
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    b.query_drop("DEALLOCATE PREPARE q").unwrap();
    assert_eq!(count(&mut admin), 1);
}
