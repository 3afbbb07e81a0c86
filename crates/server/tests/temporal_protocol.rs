//! DATETIME(fsp), TIMESTAMP(fsp), TIME(fsp) and YEAR over both protocols through a real
//! driver (the `mysql` crate): microseconds bound as parameters and returned in binary
//! rows (DATETIME length 11, TIME length 12 with its sign and days, YEAR as a 2-byte
//! integer), and the column definitions MySQL sends for them (type code, length,
//! decimals = fsp). Runs against MariaDB too (`STRATA_TEST_ORACLE=mariadb`); the values
//! need no rounding, where the two differ.

use crate::common;

use mysql::consts::ColumnType;
use mysql::prelude::Queryable;
use mysql::Value;

#[test]
fn fractional_seconds_time_and_year_round_trip_in_both_protocols() {
    let server = common::TestServer::start(&[]);
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE tp").unwrap();
    c.query_drop("USE tp").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, a DATETIME(6), b TIMESTAMP(3) NULL, \
         c TIME(6), d TIME, y YEAR, KEY (c))",
    )
    .unwrap();
    let ins = c.prep("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)").unwrap();
    c.exec_drop(
        &ins,
        (
            1,
            Value::Date(2020, 1, 1, 10, 0, 0, 123_456),
            Value::Date(2021, 6, 7, 8, 9, 10, 250_000),
            Value::Time(true, 1, 2, 3, 4, 500_000),
            Value::Time(false, 0, 10, 0, 0, 0),
            2024,
        ),
    )
    .unwrap();
    c.exec_drop(
        &ins,
        (
            2,
            "2020-01-01 10:00:00",
            Value::NULL,
            "838:59:59",
            Value::Time(false, 4, 3, 0, 0, 0),
            0,
        ),
    )
    .unwrap();

    // Binary rows.
    let sel = c.prep("SELECT a, b, c, d, y FROM t WHERE id = ?").unwrap();
    let cols = sel.columns();
    let shape: Vec<(ColumnType, u32, u8)> = cols
        .iter()
        .map(|c| (c.column_type(), c.column_length(), c.decimals()))
        .collect();
    assert_eq!(
        shape,
        vec![
            (ColumnType::MYSQL_TYPE_DATETIME, 26, 6),
            (ColumnType::MYSQL_TYPE_TIMESTAMP, 23, 3),
            (ColumnType::MYSQL_TYPE_TIME, 17, 6),
            (ColumnType::MYSQL_TYPE_TIME, 10, 0),
            (ColumnType::MYSQL_TYPE_YEAR, 4, 0),
        ]
    );
    let row: mysql::Row = c.exec_first(&sel, (1,)).unwrap().unwrap();
    let vals: Vec<Value> = row.unwrap();
    assert_eq!(
        vals,
        vec![
            Value::Date(2020, 1, 1, 10, 0, 0, 123_456),
            Value::Date(2021, 6, 7, 8, 9, 10, 250_000),
            Value::Time(true, 1, 2, 3, 4, 500_000),
            Value::Time(false, 0, 10, 0, 0, 0),
            Value::Int(2024),
        ]
    );
    let row: mysql::Row = c.exec_first(&sel, (2,)).unwrap().unwrap();
    let vals: Vec<Value> = row.unwrap();
    assert_eq!(
        vals,
        vec![
            Value::Date(2020, 1, 1, 10, 0, 0, 0),
            Value::NULL,
            Value::Time(false, 34, 22, 59, 59, 0),
            Value::Time(false, 4, 3, 0, 0, 0),
            Value::Int(0),
        ]
    );

    // A TIME parameter compared with a TIME column reads as a duration.
    let ids: Vec<i32> = c
        .exec(
            "SELECT id FROM t WHERE c > ? ORDER BY id",
            (Value::Time(true, 0, 0, 0, 0, 1),),
        )
        .unwrap();
    assert_eq!(ids, vec![2]);

    // Text rows: exactly the column's digits.
    let text: Vec<(String, Option<String>, String, String, String)> =
        c.query("SELECT a, b, c, d, y FROM t ORDER BY id").unwrap();
    assert_eq!(
        text,
        vec![
            (
                "2020-01-01 10:00:00.123456".into(),
                Some("2021-06-07 08:09:10.250".into()),
                "-26:03:04.500000".into(),
                "10:00:00".into(),
                "2024".into()
            ),
            (
                "2020-01-01 10:00:00.000000".into(),
                None,
                "838:59:59.000000".into(),
                "99:00:00".into(),
                "0000".into()
            ),
        ]
    );
}
