//! The startup upgrade of index keys from key format 1 to 2 (`docs/format/keys.md`,
//! `crates/sql/src/catalog/key_format.rs`), on a real data directory written by the
//! server before key format 2 (`fixtures/key_format_1/`: a catalog of format version 2, the
//! `btree` engine's spaces and the `heap` engine's files, copied from a cleanly stopped
//! server built from b579914, without its redo log, TLS keys and accounts, which a start
//! makes afresh). It holds, in database `up`, the strings `'a'`, `'a\t'`, `'a b'`,
//! `'a\n x'`, `'a\0'`, `'b'` (ids 1 … 6) in:
//!
//! - `bt` (InnoDB, AUTO_INCREMENT id, UNIQUE KEY on a general_ci VARCHAR),
//! - `bp` (InnoDB, a utf8mb4_bin VARCHAR primary key, clustered),
//! - `ht` (MyISAM, KEY on a general_ci VARCHAR), `hp` (MyISAM, VARCHAR primary key),
//! - `ints` (InnoDB, integers only) and `bin` (InnoDB, KEY on a VARBINARY): their keys
//!   are the same in both formats, so they are not rebuilt.
//!
//! In format 1 every one of those string indexes ordered `'a'` before `'a\t'`. After the
//! start: each string table was rebuilt (logged), reads through its indexes follow PAD
//! SPACE (`'a\0' < 'a\t' < 'a\n x' < 'a' < 'a b' < 'b'`, as MySQL and MariaDB), the
//! AUTO_INCREMENT counter and unique checks carry over, the catalog says format version 3
//! and `key_format` 2 everywhere, and no `#sql-` file is left. A second start rebuilds
//! nothing; a table whose catalog entry still says format 1 (as a crash before its switch
//! leaves it) is rebuilt again with all its rows.

use crate::common;

use common::{Flavor, TestServer};
use mysql::prelude::Queryable;
use std::path::Path;

const STRING_TABLES: [&str; 4] = ["bt", "bp", "ht", "hp"];

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// Every read of the fixture's string tables through their indexes, in PAD SPACE order.
fn check_order(conn: &mut mysql::Conn) {
    let ids = |conn: &mut mysql::Conn, q: &str| -> Vec<i64> { conn.query(q).unwrap() };
    // 'a\0' (5) < 'a\t' (2) < 'a\n x' (4) < 'a' (1) < 'a b' (3) < 'b' (6)
    for t in STRING_TABLES {
        let key = if t.ends_with('p') { "PRIMARY" } else { "s" };
        assert_eq!(
            ids(
                conn,
                &format!("SELECT id FROM up.{t} FORCE INDEX (`{key}`) ORDER BY s")
            ),
            [5, 2, 4, 1, 3, 6],
            "{t}"
        );
        assert_eq!(
            ids(
                conn,
                &format!("SELECT id FROM up.{t} FORCE INDEX (`{key}`) WHERE s < 'a' ORDER BY s")
            ),
            [5, 2, 4],
            "{t}"
        );
        assert_eq!(
            ids(
                conn,
                &format!(
                    "SELECT id FROM up.{t} FORCE INDEX (`{key}`) WHERE s >= 'a ' ORDER BY s DESC"
                )
            ),
            [6, 3, 1],
            "{t}"
        );
        let min: Option<String> = conn
            .query_first(format!("SELECT HEX(MIN(s)) FROM up.{t}"))
            .unwrap();
        assert_eq!(min.as_deref(), Some("6100"), "{t}");
        let eq: Vec<i64> = conn
            .query(format!(
                "SELECT id FROM up.{t} FORCE INDEX (`{key}`) WHERE s = CONCAT('a', CHAR(9 USING utf8mb4))"
            ))
            .unwrap();
        assert_eq!(eq, [2], "{t}");
    }
    // Binary strings keep byte order: 'a' < 'a\t'.
    let bin: Vec<String> = conn
        .query("SELECT HEX(b) FROM up.bin FORCE INDEX (b) ORDER BY b")
        .unwrap();
    assert_eq!(bin, ["61", "6109"]);
    let ints: Vec<i64> = conn
        .query("SELECT id FROM up.ints FORCE INDEX (v) WHERE v > 1")
        .unwrap();
    assert_eq!(ints, [2]);
}

fn catalog(datadir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(datadir.join("catalog.json")).unwrap()).unwrap()
}

fn rebuilt(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.split("rebuilding `up`.`").nth(1))
        .filter_map(|r| r.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_key_format_1_data_directory_is_rebuilt_in_pad_space_order() {
    if Flavor::from_env() != Flavor::Strata {
        return; // a Strata data directory
    }
    let tmp = tempfile::tempdir().unwrap();
    let datadir = tmp.path().join("data");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/key_format_1"),
        &datadir,
    );
    assert_eq!(catalog(&datadir)["format_version"], 2);

    let mut server = TestServer::start_at(&datadir, &[]);
    let log = server.log_tail();
    let mut done = rebuilt(&log);
    done.sort();
    assert_eq!(done, ["bp", "bt", "hp", "ht"], "{log}");
    assert!(
        log.contains("rebuilt `up`.`bt`: 6 rows, keys in format 2"),
        "{log}"
    );
    let cat = catalog(&datadir);
    assert_eq!(cat["format_version"], 3);
    for t in cat["tables"].as_array().unwrap() {
        assert_eq!(t["key_format"], 2, "{t}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(datadir.join("up"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("#sql"))
        .collect();
    // The rebuilt tables live under `#sql-<n>` stems now; each must be a catalog's file.
    let files: Vec<String> = cat["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["file"].as_str().map(str::to_string))
        .collect();
    for l in &leftovers {
        let stem = l.rsplit_once('.').map_or(l.as_str(), |(s, _)| s);
        assert!(
            files.iter().any(|f| f == &format!("up/{stem}")),
            "{l} is no table's file: {files:?}"
        );
    }

    let mut conn = common::connect(server.port, None);
    check_order(&mut conn);
    // The counter and the unique key carried over.
    conn.query_drop("INSERT INTO up.bt (s) VALUES ('c')")
        .unwrap();
    let max: Option<i64> = conn.query_first("SELECT MAX(id) FROM up.bt").unwrap();
    assert_eq!(max, Some(7));
    let dup =
        conn.query_drop("INSERT INTO up.bt (s) VALUES (CONCAT('a', CHAR(9 USING utf8mb4), '  '))");
    assert!(
        matches!(&dup, Err(mysql::Error::MySqlError(e)) if e.code == 1062),
        "{dup:?}"
    );
    conn.query_drop("DELETE FROM up.bt WHERE id = 7").unwrap();
    drop(conn);

    // A second start has nothing to upgrade.
    server.restart();
    let log = server.log_tail();
    let second = log.rsplit("signal 15").next().unwrap_or(&log);
    assert!(rebuilt(second).is_empty(), "{log}");

    // A table still marked format 1 (a crash before its catalog switch leaves it so) is
    // rebuilt again, whole.
    server.stop();
    let mut cat = catalog(&datadir);
    for t in cat["tables"].as_array_mut().unwrap() {
        if t["name"] == "hp" {
            t.as_object_mut().unwrap().remove("key_format");
        }
    }
    std::fs::write(
        datadir.join("catalog.json"),
        serde_json::to_vec_pretty(&cat).unwrap(),
    )
    .unwrap();
    server.start_again();
    let log = server.log_tail();
    let third = log.rsplit("shutdown complete").next().unwrap_or(&log);
    assert_eq!(rebuilt(third), ["hp"], "{log}");
    assert!(third.contains("rebuilt `up`.`hp`: 6 rows"), "{log}");
    let mut conn = common::connect(server.port, None);
    check_order(&mut conn);
}
