//! Instant ADD COLUMN on a `btree` (InnoDB) table, seen from a real server and its files
//! (`docs/format/btree.md`, rows of a table with instantly added columns;
//! `docs/format/catalog.md`, `tables[].instant`):
//!
//! * on a table of 200,000 rows the ADD touches no row: the tablespace file is byte for
//!   byte the same afterwards, and the statement takes a fraction of what the copying
//!   ADD (FIRST) of the same table takes;
//! * old rows read the added column's default as of the ADD — also after the default is
//!   changed (new rows that omit the column get the new one), after a clean restart, and
//!   after a SIGKILL right after the ALTER (the catalog write is the commit point);
//!   rows written after the ADD and before the SIGKILL come back from the redo log;
//! * a consistent read that began before an old row was updated still sees the old
//!   version, with the default; CHECK TABLE passes; an index built later on the added
//!   column finds the old rows by their default.

mod common;

use mysql::prelude::Queryable;
use std::time::Instant;

const ROWS: i64 = 200_000;

/// The bytes of the table's tablespace file (`d/sb.ibd`).
fn space_bytes(datadir: &std::path::Path) -> Vec<u8> {
    std::fs::read(datadir.join("d").join("sb.ibd")).expect("read d/sb.ibd")
}

fn count(c: &mut mysql::Conn, sql: &str) -> i64 {
    c.query_first(sql).unwrap().unwrap()
}

#[test]
fn instant_add_column_touches_no_row_and_survives_restart_and_sigkill() {
    let mut server = common::TestServer::start(&[]);
    if server.flavor != common::Flavor::Strata {
        // The tablespace file and catalog are Strata's.
        return;
    }
    {
        let mut c = common::connect(server.port, None);
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop(
            "CREATE TABLE d.sb (id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0, \
             c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) \
             ENGINE=InnoDB",
        )
        .unwrap();
        for chunk in 0..ROWS / 2000 {
            let values: Vec<String> = (chunk * 2000..(chunk + 1) * 2000)
                .map(|i| format!("({i},{},'c-{i}-{}','p-{i}')", i % 1000, "x".repeat(80)))
                .collect();
            c.query_drop(format!("INSERT INTO d.sb VALUES {}", values.join(",")))
                .unwrap();
        }
    }
    // A clean restart writes every page: the file is then what the rows are.
    server.restart();
    let before = space_bytes(&server.datadir);
    let mut c = common::connect(server.port, Some("d"));
    let t = Instant::now();
    c.query_drop("ALTER TABLE sb ADD COLUMN x INT DEFAULT 5")
        .unwrap();
    let instant = t.elapsed();
    assert!(
        space_bytes(&server.datadir) == before,
        "the instant ADD COLUMN changed the tablespace file"
    );
    let cat: serde_json::Value =
        serde_json::from_slice(&std::fs::read(server.datadir.join("catalog.json")).unwrap())
            .unwrap();
    assert_eq!(
        cat["tables"][0]["instant"],
        serde_json::json!({"cols": 4, "defaults": [{"Int": 5}], "versions": 1}),
        "{cat}"
    );
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM sb WHERE x = 5"), ROWS);

    // A later default is for new rows only.
    c.query_drop("ALTER TABLE sb ALTER COLUMN x SET DEFAULT 7")
        .unwrap();
    assert!(space_bytes(&server.datadir) == before);
    c.query_drop("INSERT INTO sb (id) VALUES (1000000)")
        .unwrap();
    c.query_drop("INSERT INTO sb (id, x) VALUES (1000001, 9)")
        .unwrap();
    let check = |c: &mut mysql::Conn| {
        assert_eq!(count(c, "SELECT x FROM sb WHERE id = 17"), 5);
        assert_eq!(count(c, "SELECT x FROM sb WHERE id = 1000000"), 7);
        assert_eq!(count(c, "SELECT x FROM sb WHERE id = 1000001"), 9);
        assert_eq!(count(c, "SELECT COUNT(*) FROM sb WHERE x = 5"), ROWS);
        assert_eq!(count(c, "SELECT SUM(x) FROM sb"), ROWS * 5 + 16);
    };
    check(&mut c);
    drop(c);
    server.restart();
    let mut c = common::connect(server.port, Some("d"));
    check(&mut c);

    // A consistent read that started before an old row was rewritten sees the old
    // version, default included.
    let mut reader = common::connect(server.port, Some("d"));
    reader
        .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    assert_eq!(count(&mut reader, "SELECT x FROM sb WHERE id = 42"), 5);
    c.query_drop("UPDATE sb SET x = 99, k = k + 1 WHERE id = 42")
        .unwrap();
    assert_eq!(count(&mut reader, "SELECT x FROM sb WHERE id = 42"), 5);
    assert_eq!(
        count(&mut reader, "SELECT x FROM sb WHERE k = 42 AND id = 42"),
        5
    );
    reader.query_drop("COMMIT").unwrap();
    assert_eq!(count(&mut reader, "SELECT x FROM sb WHERE id = 42"), 99);
    drop(reader);

    // SIGKILL right after an instant ADD and a few writes: the ADD is committed (its
    // catalog write returned), the writes come back from the redo log.
    c.query_drop(
        "ALTER TABLE sb ADD COLUMN y VARCHAR(10) NOT NULL DEFAULT 'yy', ALGORITHM=INSTANT",
    )
    .unwrap();
    c.query_drop("INSERT INTO sb (id, y) VALUES (1000002, 'new')")
        .unwrap();
    c.query_drop("UPDATE sb SET y = 'upd' WHERE id = 7")
        .unwrap();
    c.query_drop("DELETE FROM sb WHERE id = 8").unwrap();
    drop(c);
    server.crash();
    server.start_again();
    let mut c = common::connect(server.port, Some("d"));
    let names: Vec<String> = c
        .query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' \
             AND TABLE_NAME = 'sb' ORDER BY ORDINAL_POSITION",
        )
        .unwrap();
    assert_eq!(names, ["id", "k", "c", "pad", "x", "y"]);
    let y: String = c
        .query_first("SELECT y FROM sb WHERE id = 17")
        .unwrap()
        .unwrap();
    assert_eq!(y, "yy");
    let y: String = c
        .query_first("SELECT y FROM sb WHERE id = 1000002")
        .unwrap()
        .unwrap();
    assert_eq!(y, "new");
    let y: String = c
        .query_first("SELECT y FROM sb WHERE id = 7")
        .unwrap()
        .unwrap();
    assert_eq!(y, "upd");
    assert_eq!(count(&mut c, "SELECT COUNT(*) FROM sb WHERE id = 8"), 0);
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM sb WHERE y = 'yy'"),
        ROWS - 2 + 2
    );
    assert_eq!(count(&mut c, "SELECT x FROM sb WHERE id = 17"), 5);
    let checked: Vec<(String, String, String, String)> = c.query("CHECK TABLE sb").unwrap();
    assert_eq!(checked[0].3, "OK", "{checked:?}");

    // An index built later on an added column reads the old rows with the default.
    c.query_drop("CREATE INDEX kx ON sb (x)").unwrap();
    assert_eq!(
        count(
            &mut c,
            "SELECT COUNT(*) FROM sb FORCE INDEX (kx) WHERE x = 5"
        ),
        ROWS - 2
    );

    // The copying ADD of the same table, for comparison: it rewrites every row.
    let t = Instant::now();
    c.query_drop("ALTER TABLE sb ADD COLUMN z INT DEFAULT 1 FIRST, ALGORITHM=COPY")
        .unwrap();
    let copy = t.elapsed();
    eprintln!("instant ADD COLUMN of {ROWS} rows: {instant:?}; copying ADD COLUMN: {copy:?}");
    assert!(
        instant * 4 < copy,
        "instant ADD took {instant:?}, the copy {copy:?}"
    );
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM sb WHERE x = 5 AND z = 1"),
        ROWS - 2
    );
    // The table's entry has no instant columns any more (the DDL log may still hold the
    // old definition, for the old files).
    let cat: serde_json::Value =
        serde_json::from_slice(&std::fs::read(server.datadir.join("catalog.json")).unwrap())
            .unwrap();
    let sb = cat["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "sb")
        .unwrap();
    assert!(
        sb.get("instant").is_none(),
        "the copy keeps an instant entry"
    );
}
