//! The catalog as the commit point of DDL (`docs/format/catalog.md`), seen from a real
//! server and its files:
//!
//! * a data directory whose `catalog.json` is format 1 (no file stems, no DDL log, as
//!   servers before ALTER TABLE wrote it) opens with every table, and the next DDL
//!   statement writes format 2;
//! * after ALTER TABLE, RENAME TABLE and a restart, every table reads its rows from the
//!   files the catalog names, and the data directory holds no others;
//! * a table registered by the btree engine but referenced by no catalog entry (a crash
//!   between CREATE TABLE's space and its catalog write) is removed at startup;
//! * column and index COMMENTs and DECIMAL/DOUBLE UNSIGNED survive a restart on both engines, and a
//!   catalog written before columns had those fields opens with no comments.

use crate::common;

use mysql::prelude::Queryable;

fn catalog(datadir: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read(datadir.join("catalog.json")).unwrap();
    serde_json::from_slice(&text).unwrap()
}

fn files(datadir: &std::path::Path, db: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(datadir.join(db))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn format_1_catalog_opens_and_is_upgraded_by_the_next_ddl() {
    let mut server = common::TestServer::start(&[]);
    {
        let mut c = common::connect(server.port, None);
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("CREATE TABLE d.i (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
            .unwrap();
        c.query_drop("CREATE TABLE d.m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM")
            .unwrap();
        c.query_drop("INSERT INTO d.i VALUES (1, 10), (2, 20)")
            .unwrap();
        c.query_drop("INSERT INTO d.m VALUES (1, 11), (2, 21)")
            .unwrap();
    }
    let status = server.stop();
    common::assert_clean_exit(server.flavor, status, &server.log_tail());
    // Write the catalog back as format 1 had it: names only.
    let mut cat = catalog(&server.datadir);
    cat["format_version"] = 1.into();
    let obj = cat.as_object_mut().unwrap();
    obj.remove("next_file");
    obj.remove("ddl_log");
    for t in cat["tables"].as_array_mut().unwrap() {
        t.as_object_mut().unwrap().remove("file");
        t.as_object_mut().unwrap().remove("key_format");
    }
    std::fs::write(
        server.datadir.join("catalog.json"),
        serde_json::to_vec_pretty(&cat).unwrap(),
    )
    .unwrap();
    server.start_again();
    let mut c = common::connect(server.port, Some("d"));
    let sum: i64 = c.query_first("SELECT SUM(v) FROM i").unwrap().unwrap();
    assert_eq!(sum, 30);
    let sum: i64 = c.query_first("SELECT SUM(v) FROM m").unwrap().unwrap();
    assert_eq!(sum, 32);
    // A rebuild of each table (an ADD COLUMN at the end of an InnoDB table would be
    // instant by default, leaving its file where it is).
    c.query_drop("ALTER TABLE i ADD COLUMN w INT NOT NULL DEFAULT 1, ALGORITHM=COPY")
        .unwrap();
    c.query_drop("ALTER TABLE m ADD INDEX (v)").unwrap();
    c.query_drop("RENAME TABLE i TO i2, m TO i").unwrap();
    let cat = catalog(&server.datadir);
    assert_eq!(cat["format_version"], 3);
    for t in cat["tables"].as_array().unwrap() {
        assert!(t["file"].is_string(), "{t}");
        assert_eq!(t["key_format"], 2, "{t}");
    }
    drop(c);
    server.restart();
    let mut c = common::connect(server.port, Some("d"));
    let (n, w): (i64, i64) = c
        .query_first("SELECT COUNT(*), SUM(w) FROM i2")
        .unwrap()
        .unwrap();
    assert_eq!((n, w), (2, 2));
    let v: i64 = c
        .query_first("SELECT v FROM i WHERE v = 21")
        .unwrap()
        .unwrap();
    assert_eq!(v, 21);
    // The two rebuilt tables' files and nothing else: the replaced ones are gone.
    let f = files(&server.datadir, "d");
    assert_eq!(f.len(), 3, "{f:?}");
    assert!(f.iter().all(|n| n.starts_with("#sql-")), "{f:?}");
    // A new table under a name a renamed table left gets files of its own.
    c.query_drop("CREATE TABLE m (x INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO m VALUES (5)").unwrap();
    let x: i64 = c.query_first("SELECT x FROM m").unwrap().unwrap();
    assert_eq!(x, 5);
}

#[test]
fn a_btree_space_no_table_references_is_removed_at_startup() {
    let mut server = common::TestServer::start(&[]);
    {
        let mut c = common::connect(server.port, None);
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("CREATE TABLE d.keep (id INT PRIMARY KEY) ENGINE=InnoDB")
            .unwrap();
        c.query_drop("CREATE TABLE d.gone (id INT PRIMARY KEY) ENGINE=InnoDB")
            .unwrap();
    }
    let status = server.stop();
    common::assert_clean_exit(server.flavor, status, &server.log_tail());
    // As if the server had died after creating `gone`'s space but before the catalog
    // write that commits it: the catalog does not know the table.
    let mut cat = catalog(&server.datadir);
    cat["tables"]
        .as_array_mut()
        .unwrap()
        .retain(|t| t["name"] != "gone");
    std::fs::write(
        server.datadir.join("catalog.json"),
        serde_json::to_vec_pretty(&cat).unwrap(),
    )
    .unwrap();
    server.start_again();
    assert!(
        server.log_tail().contains("removing d/gone"),
        "{}",
        server.log_tail()
    );
    assert_eq!(files(&server.datadir, "d"), vec!["keep.ibd".to_string()]);
    let spaces = std::fs::read_to_string(server.datadir.join("btree-spaces.json")).unwrap();
    assert!(!spaces.contains("gone"), "{spaces}");
    let mut c = common::connect(server.port, Some("d"));
    // The name is free again: no 1050 for files of the table that never was.
    c.query_drop("CREATE TABLE gone (id INT PRIMARY KEY) ENGINE=InnoDB")
        .unwrap();
}

#[test]
fn column_comments_and_unsigned_reals_survive_a_restart() {
    let mut server = common::TestServer::start(&[]);
    let show = |c: &mut mysql::Conn, t: &str| -> String {
        let (_, text): (String, String) = c
            .query_first(format!("SHOW CREATE TABLE {t}"))
            .unwrap()
            .unwrap();
        text
    };
    let mut before = Vec::new();
    {
        let mut c = common::connect(server.port, None);
        c.query_drop("CREATE DATABASE d").unwrap();
        for (t, engine) in [("i", "InnoDB"), ("m", "MyISAM")] {
            c.query_drop(format!(
                "CREATE TABLE d.{t} (id INT PRIMARY KEY COMMENT 'the key', \
                 a VARCHAR(10) COMMENT 'it''s a\\\\b', p DECIMAL(10,2) UNSIGNED, \
                 q DOUBLE UNSIGNED COMMENT 'q', n INT, KEY ka (a) COMMENT 'ix') \
                 ENGINE={engine} COMMENT='tab'"
            ))
            .unwrap();
            c.query_drop(format!("ALTER TABLE d.{t} MODIFY n INT COMMENT 'later'"))
                .unwrap();
            c.query_drop(format!("INSERT INTO d.{t} VALUES (1, 'x', 2.5, 3, 4)"))
                .unwrap();
            let text = show(&mut c, &format!("d.{t}"));
            assert!(
                text.contains("`a` varchar(10) DEFAULT NULL COMMENT 'it''s a\\\\b'"),
                "{text}"
            );
            assert!(
                text.contains("`p` decimal(10,2) unsigned DEFAULT NULL"),
                "{text}"
            );
            assert!(
                text.contains("`n` int DEFAULT NULL COMMENT 'later'"),
                "{text}"
            );
            before.push(text);
        }
    }
    // The catalog holds the fields only where they are set.
    let cat = catalog(&server.datadir);
    let cols = &cat["tables"][0]["columns"];
    assert_eq!(cols[0]["comment"], "the key");
    assert_eq!(cols[1]["comment"], "it's a\\b");
    assert!(cols[2].get("comment").is_none(), "{cols}");
    assert_eq!(cols[2]["real_unsigned"], true);
    assert!(cols[0].get("real_unsigned").is_none(), "{cols}");
    server.restart();
    {
        let mut c = common::connect(server.port, None);
        for (k, t) in ["d.i", "d.m"].iter().enumerate() {
            assert_eq!(show(&mut c, t), before[k]);
            let comment: String = c
                .query_first(format!(
                    "SELECT COLUMN_COMMENT FROM information_schema.COLUMNS \
                     WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = '{}' AND COLUMN_NAME = 'n'",
                    &t[2..]
                ))
                .unwrap()
                .unwrap();
            assert_eq!(comment, "later");
            // Still unsigned after the restart: a negative value is out of range.
            let e = c
                .query_drop(format!("INSERT INTO {t} VALUES (2, 'y', -1, 0, 0)"))
                .unwrap_err();
            assert!(e.to_string().contains("1264"), "{e}");
        }
    }
    let status = server.stop();
    common::assert_clean_exit(server.flavor, status, &server.log_tail());
    // A catalog from before the fields: the columns have no comment and open as before.
    let mut cat = catalog(&server.datadir);
    for t in cat["tables"].as_array_mut().unwrap() {
        for col in t["columns"].as_array_mut().unwrap() {
            let o = col.as_object_mut().unwrap();
            o.remove("comment");
            o.remove("real_unsigned");
        }
        for ix in t["indexes"].as_array_mut().unwrap() {
            ix.as_object_mut().unwrap().remove("comment");
        }
    }
    std::fs::write(
        server.datadir.join("catalog.json"),
        serde_json::to_vec_pretty(&cat).unwrap(),
    )
    .unwrap();
    server.start_again();
    let mut c = common::connect(server.port, Some("d"));
    let text = show(&mut c, "i");
    assert!(!text.contains(" COMMENT '"), "{text}");
    assert!(text.contains("`p` decimal(10,2) DEFAULT NULL"), "{text}");
    let n: i64 = c.query_first("SELECT COUNT(*) FROM m").unwrap().unwrap();
    assert_eq!(n, 1);
}
