//! EXPLAIN FORMAT=TREE over the wire: one row, one column named `EXPLAIN`, holding
//! MySQL 8's indented operator tree (`-> ` per line, four spaces per level, a newline
//! after each line) built from the plan the executor runs. The estimates in
//! `(cost=… rows=…)` are Strata's own, so the shape and wording are compared exactly
//! with the estimates cut out, and checked to be present on table accesses.
//! FORMAT=JSON stays refused (1235). MariaDB has no FORMAT=TREE: Strata only.

use crate::common;

use common::Flavor;
use mysql::prelude::Queryable;

/// The one value EXPLAIN FORMAT=TREE gives, checked to be one row of one `EXPLAIN`
/// column.
fn tree(c: &mut mysql::Conn, sql: &str) -> String {
    let mut result = c
        .query_iter(format!("EXPLAIN FORMAT=TREE {sql}"))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let set = result.iter().expect("a result set");
    let names: Vec<String> = set
        .columns()
        .as_ref()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect();
    assert_eq!(names, vec!["EXPLAIN".to_string()], "{sql}");
    let rows: Vec<mysql::Row> = set.map(|r| r.expect("a row")).collect();
    assert_eq!(rows.len(), 1, "{sql}");
    let v: String = rows[0].get(0).expect("a text value");
    v
}

/// The tree without its estimates.
fn shape(t: &str) -> String {
    t.lines()
        .map(|l| match l.find("  (cost=") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A Strata server (None against MariaDB, which has no FORMAT=TREE) with database `tr`:
/// `t (id, a, b, KEY (a))` and `u (id, tid, v, KEY (tid))`, three rows each.
fn server_with_tables() -> Option<(common::TestServer, mysql::Conn)> {
    let server = common::TestServer::start(&[]);
    if server.flavor != Flavor::Strata {
        return None;
    }
    let mut c = common::connect(server.port, None);
    for s in [
        "CREATE DATABASE tr",
        "USE tr",
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, KEY (a))",
        "CREATE TABLE u (id INT PRIMARY KEY, tid INT, v INT, KEY (tid))",
        "INSERT INTO t VALUES (1,1,1),(2,2,2),(3,3,3)",
        "INSERT INTO u VALUES (1,1,10),(2,1,20),(3,2,30)",
    ] {
        c.query_drop(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    Some((server, c))
}

#[test]
fn explain_format_tree_prints_the_operator_tree() {
    let Some((_server, mut c)) = server_with_tables() else {
        return;
    };

    // No table.
    assert_eq!(
        tree(&mut c, "SELECT 1"),
        "-> Rows fetched before execution\n"
    );

    // An index lookup with the rest of the WHERE checked on its rows; estimates on both.
    let t = tree(&mut c, "SELECT * FROM t WHERE a = 2 AND b > 1");
    assert_eq!(
        shape(&t),
        "-> Filter: (t.b > 1)\n    -> Index lookup on t using a (a=2)",
        "{t}"
    );
    assert!(
        t.lines()
            .all(|l| l.contains("  (cost=") && l.contains(" rows=")),
        "{t}"
    );
    assert!(t.ends_with('\n'), "{t:?}");

    // Grouping, ORDER BY on an aggregate's alias, LIMIT: the operator chain from the top.
    let t = tree(
        &mut c,
        "SELECT a, COUNT(*) AS n FROM t GROUP BY a ORDER BY n DESC LIMIT 2",
    );
    assert_eq!(
        shape(&t),
        "-> Limit: 2 row(s)\n\
         \x20   -> Sort: n DESC\n\
         \x20       -> Table scan on <temporary>\n\
         \x20           -> Aggregate using temporary table\n\
         \x20               -> Table scan on t",
        "{t}"
    );

    // A join through an index: a nested loop, its inner side an index lookup keyed on
    // the outer table's column.
    let t = tree(
        &mut c,
        "SELECT t.b, u.v FROM t JOIN u ON u.tid = t.id WHERE t.b > 1",
    );
    let s = shape(&t);
    assert!(s.starts_with("-> Nested loop inner join\n"), "{t}");
    assert!(
        s.contains("-> Index lookup on u using tid (tid=t.id)")
            || s.contains("-> Single-row index lookup on t using PRIMARY (id=u.tid)"),
        "{t}"
    );
    assert!(s.contains("Filter: (t.b > 1)"), "{t}");

    // A correlated subquery in the select list, shown under the block, with its own
    // block number; an uncorrelated one in WHERE runs once.
    let t = tree(
        &mut c,
        "SELECT id, (SELECT COUNT(*) FROM u WHERE u.tid = t.id) FROM t \
         WHERE b > (SELECT MIN(v) FROM u) - 20",
    );
    let s = shape(&t);
    assert!(
        s.contains("-> Select #2 (subquery in condition; run only once)"),
        "{t}"
    );
    assert!(
        s.contains("-> Select #3 (subquery in projection; dependent)"),
        "{t}"
    );
    assert!(s.contains("Aggregate: count(0)"), "{t}");
    // (Covering on InnoDB-style tables: the index entry holds what COUNT(*) reads.)
    assert!(
        s.contains("-> Index lookup on u using tid (tid=t.id)")
            || s.contains("-> Covering index lookup on u using tid (tid=t.id)"),
        "{t}"
    );

    // A plain derived table is merged: its base table is read with both conditions.
    let t = tree(
        &mut c,
        "SELECT * FROM (SELECT a, b FROM t WHERE b < 3) AS d WHERE d.a > 0",
    );
    let s = shape(&t);
    assert!(s.contains("-> Filter: ((t.a > 0) and (t.b < 3))"), "{t}");
    assert!(
        s.contains("-> Index range scan on t using a over (0 < a)"),
        "{t}"
    );
    assert!(!s.contains("Materialize"), "{t}");
    // One with LIMIT is materialised before it is read.
    let t = tree(
        &mut c,
        "SELECT * FROM (SELECT a, b FROM t WHERE b < 3 LIMIT 10) AS d WHERE d.a > 0",
    );
    let s = shape(&t);
    assert!(s.contains("-> Table scan on d"), "{t}");
    assert!(s.contains("-> Materialize\n"), "{t}");
    assert!(s.contains("-> Limit: 10 row(s)"), "{t}");

    // UNION with and without ALL.
    let t = tree(&mut c, "SELECT a FROM t UNION SELECT tid FROM u");
    assert!(
        shape(&t).starts_with(
            "-> Table scan on <union temporary>\n    -> Union materialize with deduplication\n"
        ),
        "{t}"
    );
    let t = tree(&mut c, "SELECT a FROM t UNION ALL SELECT tid FROM u");
    assert!(shape(&t).starts_with("-> Append\n"), "{t}");

    // The other formats stay refused rather than answered in the wrong shape.
    let err = c
        .query_drop("EXPLAIN FORMAT=JSON SELECT * FROM t")
        .expect_err("FORMAT=JSON is refused");
    match err {
        mysql::Error::MySqlError(e) => assert_eq!(e.code, 1235, "{e:?}"),
        other => panic!("{other:?}"),
    }
    // EXPLAIN reads no rows and changes nothing: the query answers as before.
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(3));
}

/// A correlated subquery is checked after a table's plain comparisons, and waits for a
/// later single-row (eq_ref) table of the inner join; never onto the inner side of a
/// LEFT JOIN (optimizer/expensive_last.rs).
#[test]
fn correlated_subqueries_are_checked_last_and_as_late_as_an_eq_ref_allows() {
    let Some((_server, mut c)) = server_with_tables() else {
        return;
    };
    let exists = "EXISTS (SELECT 1 FROM u u2 WHERE u2.tid = u.tid AND u2.id <> u.id)";
    let inner = format!(
        "SELECT STRAIGHT_JOIN u.id FROM u JOIN t ON t.id = u.tid WHERE {exists} AND u.v > 5 AND t.b > 0"
    );
    let t = tree(&mut c, &inner);
    assert_eq!(
        shape(&t),
        "-> Nested loop inner join\n    -> Filter: (u.v > 5)\n        -> Table scan on u\n    \
         -> Filter: ((t.b > 0) and exists(select #2))\n        \
         -> Single-row index lookup on t using PRIMARY (id=u.tid)\n        \
         -> Select #2 (subquery in condition; dependent)\n            \
         -> Filter: (u2.id <> u.id)\n                \
         -> Covering index lookup on u2 using tid (tid=u.tid)",
        "{t}"
    );
    let outer = format!(
        "SELECT STRAIGHT_JOIN u.id FROM u LEFT JOIN t ON t.id = u.tid WHERE {exists} AND u.v > 5"
    );
    let t = tree(&mut c, &outer);
    assert!(
        shape(&t).contains(
            "    -> Filter: ((u.v > 5) and exists(select #2))\n        -> Table scan on u\n"
        ),
        "{t}"
    );
    // The rows are the same wherever the condition is checked.
    let rows: Vec<i64> = c.query(&inner).unwrap();
    assert_eq!(rows, vec![1, 2]);
    let rows: Vec<i64> = c.query(&outer).unwrap();
    assert_eq!(rows, vec![1, 2]);
}
