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
//!
//! Instant ADD COLUMN … FIRST | AFTER and instant DROP COLUMN (physical layout in the
//! catalog's entry):
//!
//! * on a table of 200,000 rows ADD … AFTER, DROP and ADD … FIRST touch no row: the
//!   tablespace file is byte for byte the same afterwards, the catalog's entry holds the
//!   physical layout, and the statements take a fraction of what a rebuild takes;
//! * old and new rows read in the table's column order after a clean restart and after
//!   a SIGKILL right after an instant ALTER (the catalog write is the commit point),
//!   rows written after it coming back from the redo log; CHECK TABLE passes, a
//!   secondary index after the moved columns still finds the rows, a rebuild drops the
//!   layout and keeps every value;
//! * after 64 instant changes (MySQL 8's row versions) ALGORITHM=INSTANT gives 4092 and
//!   the default algorithm rebuilds, after which instant changes work again.

use crate::common;

use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

const ROWS: i64 = 200_000;

/// The bytes of the table's tablespace file (`d/sb.ibd`).
fn space_bytes(datadir: &std::path::Path) -> Vec<u8> {
    std::fs::read(datadir.join("d").join("sb.ibd")).expect("read d/sb.ibd")
}

fn count(c: &mut mysql::Conn, sql: &str) -> i64 {
    c.query_first(sql).unwrap().unwrap()
}

/// A Strata server (None against MariaDB: the tablespace file and catalog are Strata's)
/// with table `d.sb` made by `create` and [`ROWS`] rows (`row(i)` is row i's VALUES
/// tuple), restarted cleanly so that the file holds every page as the rows left it.
fn loaded_server(create: &str, row: impl Fn(i64) -> String) -> Option<common::TestServer> {
    let mut server = common::TestServer::start(&[]);
    if server.flavor != common::Flavor::Strata {
        return None;
    }
    {
        let mut c = common::connect(server.port, None);
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop(create).unwrap();
        for chunk in 0..ROWS / 2000 {
            let values: Vec<String> = (chunk * 2000..(chunk + 1) * 2000).map(&row).collect();
            c.query_drop(format!("INSERT INTO d.sb VALUES {}", values.join(",")))
                .unwrap();
        }
    }
    server.restart();
    Some(server)
}

#[test]
fn instant_add_column_touches_no_row_and_survives_restart_and_sigkill() {
    let Some(mut server) = loaded_server(
        "CREATE TABLE d.sb (id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0, \
         c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) \
         ENGINE=InnoDB",
        |i| format!("({i},{},'c-{i}-{}','p-{i}')", i % 1000, "x".repeat(80)),
    ) else {
        return;
    };
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

/// The catalog entry of table `name`.
fn entry(datadir: &std::path::Path, name: &str) -> serde_json::Value {
    let cat: serde_json::Value =
        serde_json::from_slice(&std::fs::read(datadir.join("catalog.json")).unwrap()).unwrap();
    cat["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
        .clone()
}

fn columns(c: &mut mysql::Conn) -> Vec<String> {
    c.query(
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' \
         AND TABLE_NAME = 'sb' ORDER BY ORDINAL_POSITION",
    )
    .unwrap()
}

/// Runs an ALTER and returns how long it took.
fn timed(c: &mut mysql::Conn, sql: &str) -> Duration {
    let t = Instant::now();
    c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    t.elapsed()
}

#[test]
fn instant_add_anywhere_and_drop_touch_no_row_and_survive_restart_and_sigkill() {
    let Some(mut server) = loaded_server(
        "CREATE TABLE d.sb (id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0, \
         c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', \
         e INT, KEY k_1 (k), KEY ke (e)) ENGINE=InnoDB",
        |i| {
            format!(
                "({i},{},'c-{i}-{}','p-{i}',{})",
                i % 1000,
                "x".repeat(80),
                i * 2
            )
        },
    ) else {
        return;
    };
    let before = space_bytes(&server.datadir);
    let mut c = common::connect(server.port, Some("d"));
    let mut instant = Duration::ZERO;
    instant += timed(
        &mut c,
        "ALTER TABLE sb ADD COLUMN x INT DEFAULT 5 AFTER id, ALGORITHM=INSTANT",
    );
    instant += timed(&mut c, "ALTER TABLE sb DROP COLUMN pad, ALGORITHM=INSTANT");
    instant += timed(
        &mut c,
        "ALTER TABLE sb ADD COLUMN y VARCHAR(10) NOT NULL DEFAULT 'yy' FIRST",
    );
    assert!(
        space_bytes(&server.datadir) == before,
        "an instant ALTER changed the tablespace file"
    );
    assert_eq!(columns(&mut c), ["y", "id", "x", "k", "c", "e"]);
    assert_eq!(
        entry(&server.datadir, "sb")["instant"],
        serde_json::json!({
            "cols": 5,
            "defaults": [{"Int": 5}, {"Bytes": [121, 121]}],
            "layout": [
                {"Column": 1}, {"Column": 3}, {"Column": 4},
                {"Dropped": {"Char": 60}}, {"Column": 5}, {"Column": 2}, {"Column": 0}
            ],
            "versions": 3
        })
    );
    // New rows beside the old ones.
    c.query_drop("INSERT INTO sb VALUES ('new', 1000000, 6, 1, 'c-new', -2)")
        .unwrap();
    c.query_drop("UPDATE sb SET x = 50, y = 'upd' WHERE id = 7")
        .unwrap();
    c.query_drop("DELETE FROM sb WHERE id = 8").unwrap();
    let check = |c: &mut mysql::Conn| {
        let r: (String, i64, i64, i64, String, i64) = c
            .query_first("SELECT * FROM sb WHERE id = 17")
            .unwrap()
            .unwrap();
        assert_eq!(r.0, "yy");
        assert_eq!((r.1, r.2, r.3, r.5), (17, 5, 17, 34));
        assert!(r.4.starts_with("c-17-xx"), "{r:?}");
        let r: (String, i64, i64) = c
            .query_first("SELECT y, x, e FROM sb WHERE id = 1000000")
            .unwrap()
            .unwrap();
        assert_eq!(r, ("new".into(), 6, -2));
        let r: (String, i64) = c
            .query_first("SELECT y, x FROM sb WHERE id = 7")
            .unwrap()
            .unwrap();
        assert_eq!(r, ("upd".into(), 50));
        assert_eq!(count(c, "SELECT COUNT(*) FROM sb WHERE id = 8"), 0);
        assert_eq!(count(c, "SELECT COUNT(*) FROM sb WHERE x = 5"), ROWS - 2);
        assert_eq!(count(c, "SELECT COUNT(*) FROM sb WHERE y = 'yy'"), ROWS - 2);
        // The index on the column after the moved and dropped ones.
        assert_eq!(
            count(c, "SELECT id FROM sb FORCE INDEX (ke) WHERE e = 4242"),
            2121
        );
        assert_eq!(
            count(c, "SELECT id FROM sb FORCE INDEX (ke) WHERE e = -2"),
            1000000
        );
    };
    check(&mut c);
    drop(c);
    server.restart();
    let mut c = common::connect(server.port, Some("d"));
    check(&mut c);

    // SIGKILL right after an instant ALTER and a few writes: the ALTER is committed
    // (its catalog write returned), the writes come back from the redo log.
    c.query_drop("ALTER TABLE sb DROP COLUMN c, ADD COLUMN z INT NOT NULL DEFAULT 3 AFTER k, ALGORITHM=INSTANT")
        .unwrap();
    c.query_drop("INSERT INTO sb (id, z, e) VALUES (1000001, 4, -4)")
        .unwrap();
    c.query_drop("UPDATE sb SET z = 33 WHERE id = 9").unwrap();
    drop(c);
    server.crash();
    server.start_again();
    let mut c = common::connect(server.port, Some("d"));
    assert_eq!(columns(&mut c), ["y", "id", "x", "k", "z", "e"]);
    let r: (String, i64, i64, i64, i64, i64) = c
        .query_first("SELECT * FROM sb WHERE id = 17")
        .unwrap()
        .unwrap();
    assert_eq!(r, ("yy".into(), 17, 5, 17, 3, 34));
    let r: (String, i64, i64, i64, i64, i64) = c
        .query_first("SELECT * FROM sb WHERE id = 1000001")
        .unwrap()
        .unwrap();
    assert_eq!(r, ("yy".into(), 1000001, 5, 0, 4, -4));
    assert_eq!(count(&mut c, "SELECT z FROM sb WHERE id = 9"), 33);
    assert_eq!(count(&mut c, "SELECT x FROM sb WHERE id = 7"), 50);
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM sb WHERE z = 3"),
        ROWS - 1
    );
    assert_eq!(
        count(&mut c, "SELECT id FROM sb FORCE INDEX (ke) WHERE e = -4"),
        1000001
    );
    let checked: Vec<(String, String, String, String)> = c.query("CHECK TABLE sb").unwrap();
    assert_eq!(checked[0].3, "OK", "{checked:?}");

    // A rebuild for comparison: it rewrites every row in the table's order and drops
    // the layout; every value stays.
    let copy = timed(&mut c, "ALTER TABLE sb FORCE");
    eprintln!("three instant ALTERs of {ROWS} rows: {instant:?}; ALTER … FORCE: {copy:?}");
    assert!(
        instant * 4 < copy,
        "the instant ALTERs took {instant:?}, the rebuild {copy:?}"
    );
    assert!(entry(&server.datadir, "sb").get("instant").is_none());
    assert_eq!(
        count(&mut c, "SELECT COUNT(*) FROM sb WHERE z = 3 AND x = 5"),
        ROWS - 3
    );
    let r: (String, i64, i64, i64, i64, i64) = c
        .query_first("SELECT * FROM sb WHERE id = 17")
        .unwrap()
        .unwrap();
    assert_eq!(r, ("yy".into(), 17, 5, 17, 3, 34));
}

#[test]
fn row_versions_are_capped_at_64_then_the_table_is_rebuilt() {
    let server = common::TestServer::start(&[]);
    if server.flavor != common::Flavor::Strata {
        // MariaDB has no limit of row versions.
        return;
    }
    let mut c = common::connect(server.port, None);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.v (id INT PRIMARY KEY, a INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO d.v VALUES (1, 1), (2, 2)")
        .unwrap();
    // 64 instant changes: 32 ADDs in the middle and 32 DROPs.
    for i in 0..32 {
        c.query_drop(format!(
            "ALTER TABLE d.v ADD COLUMN c{i} INT DEFAULT {i} AFTER id, ALGORITHM=INSTANT"
        ))
        .unwrap();
        c.query_drop(format!(
            "ALTER TABLE d.v DROP COLUMN c{i}, ALGORITHM=INSTANT"
        ))
        .unwrap();
    }
    let e = c
        .query_drop("ALTER TABLE d.v ADD COLUMN b INT DEFAULT 9 FIRST, ALGORITHM=INSTANT")
        .unwrap_err();
    match e {
        mysql::Error::MySqlError(m) => {
            assert_eq!(m.code, 4092, "{m:?}");
            assert!(m.message.contains("Maximum row versions reached"), "{m:?}");
        }
        other => panic!("{other}"),
    }
    // The default algorithm rebuilds instead; then instant changes work again.
    c.query_drop("ALTER TABLE d.v ADD COLUMN b INT DEFAULT 9 FIRST")
        .unwrap();
    assert!(entry(&server.datadir, "v").get("instant").is_none());
    c.query_drop("ALTER TABLE d.v DROP COLUMN a, ALGORITHM=INSTANT")
        .unwrap();
    let rows: Vec<(i64, i64)> = c.query("SELECT * FROM d.v ORDER BY id").unwrap();
    assert_eq!(rows, [(9, 1), (9, 2)]);
}
