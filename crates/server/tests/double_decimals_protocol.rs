//! DOUBLE results of fixed decimals (`a*100` of a DOUBLE(10,2) `a`, ROUND(x, 1),
//! `a/2`) over both protocols through a real driver (the `mysql` crate): the column
//! definitions carry the decimals MySQL gives them in both, text rows show that many
//! digits, binary rows carry the double itself. Runs against MariaDB too
//! (`STRATA_TEST_ORACLE=mariadb`), which agrees on these.

use crate::common;

use mysql::consts::ColumnType;
use mysql::prelude::Queryable;
use mysql::Value;

const QUERY: &str =
    "SELECT a * 100, ROUND(c, 1), a / 2, c * 2, CEIL(c), ROUND(c, i) FROM t WHERE id = ?";

#[test]
fn fixed_decimals_reach_both_protocols() {
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE dp").unwrap();
    c.query_drop("USE dp").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, a DOUBLE(10,2), c DOUBLE, i INT)")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 1.5, 2.3125, 1)")
        .unwrap();

    let expected_shape = vec![
        (ColumnType::MYSQL_TYPE_DOUBLE, 2),
        (ColumnType::MYSQL_TYPE_DOUBLE, 1),
        (ColumnType::MYSQL_TYPE_DOUBLE, 6),
        (ColumnType::MYSQL_TYPE_DOUBLE, 31),
        (ColumnType::MYSQL_TYPE_DOUBLE, 0),
        (ColumnType::MYSQL_TYPE_DOUBLE, 31),
    ];
    let shape = |cols: &[mysql::Column]| -> Vec<(ColumnType, u8)> {
        cols.iter()
            .map(|c| (c.column_type(), c.decimals()))
            .collect()
    };

    // Binary: the prepared statement's column definitions, and the doubles themselves.
    let stmt = c.prep(QUERY).unwrap();
    assert_eq!(shape(&stmt.columns()), expected_shape);
    let row: mysql::Row = c.exec_first(&stmt, (1,)).unwrap().unwrap();
    assert_eq!(shape(&row.columns()), expected_shape);
    let vals: Vec<Value> = row.unwrap();
    assert_eq!(
        vals,
        vec![
            Value::Double(150.0),
            Value::Double(2.3),
            Value::Double(0.75),
            Value::Double(4.625),
            Value::Double(3.0),
            Value::Double(2.3),
        ]
    );

    // Text: the same definitions, and the digits they ask for.
    let text = QUERY.replace('?', "1");
    let mut result = c.query_iter(text.as_str()).unwrap();
    let cols = result.columns();
    assert_eq!(shape(cols.as_ref()), expected_shape);
    let row = result.next().unwrap().unwrap();
    let vals: Vec<String> = (0..6).map(|i| row.get::<String, _>(i).unwrap()).collect();
    assert_eq!(vals, ["150.00", "2.3", "0.750000", "4.625", "3", "2.3"]);
}
