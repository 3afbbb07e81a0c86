//! Views through dump tools, side by side with MariaDB: a MariaDB database with tables and
//! views (plain, with a column list, a join, an aggregate, a view on a view) is dumped by
//! `mariadb-dump --single-transaction --routines --triggers`, loaded into Strata with the
//! `mariadb` client, and every table and view must read the same there; then Strata's own
//! dump of it (`--single-transaction`; Strata has no routines or triggers to dump yet) is
//! loaded back into MariaDB and must read the same again.
//!
//! Needs `mariadbd`, `mariadb-install-db`, `mariadb-dump` and `mariadb`; without them the
//! test says so and passes (outside CI).

use crate::common;

use common::dump::{load, text_rows as rows};
use common::{Flavor, TestServer};
use mysql::prelude::Queryable;

const OBJECTS: [(&str, &str); 7] = [
    ("t", "SELECT * FROM t ORDER BY id"),
    ("u", "SELECT * FROM u ORDER BY id"),
    ("v_plain", "SELECT * FROM v_plain ORDER BY id"),
    ("v_cols", "SELECT * FROM v_cols ORDER BY k"),
    ("v_join", "SELECT * FROM v_join ORDER BY id, tag"),
    ("v_agg", "SELECT * FROM v_agg ORDER BY grp"),
    ("v_on_v", "SELECT * FROM v_on_v ORDER BY k"),
];

#[test]
fn views_survive_dump_round_trips_with_mariadb() {
    for p in ["mariadbd", "mariadb-install-db", "mariadb-dump", "mariadb"] {
        if !common::require_program(p, "views_dump") {
            return;
        }
    }
    let maria = TestServer::start_flavor(Flavor::MariaDb, &[]);
    let strata = TestServer::start_flavor(Flavor::Strata, &[]);
    let mut m = common::connect(maria.port, None);
    for sql in [
        "CREATE DATABASE src",
        "USE src",
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), grp INT, amount DECIMAL(8,2))",
        "CREATE TABLE u (id INT PRIMARY KEY, t_id INT, tag VARCHAR(10))",
        "INSERT INTO t VALUES (1, 'ann', 1, 10.50), (2, 'bob', 1, NULL), (3, 'cy', 2, 3.25), \
         (4, NULL, 2, 7.00), (5, 'it''s', 3, -1.00)",
        "INSERT INTO u VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 3, 'c'), (4, 9, 'orphan')",
        "CREATE VIEW v_plain AS SELECT id, name, amount FROM t WHERE amount IS NOT NULL",
        "CREATE VIEW v_cols (k, label) AS SELECT id * 10, CONCAT(name, '!') FROM t",
        "CREATE VIEW v_join AS SELECT t.id, t.name, u.tag FROM t JOIN u ON u.t_id = t.id",
        "CREATE ALGORITHM=TEMPTABLE VIEW v_agg AS SELECT grp, COUNT(*) AS n, SUM(amount) AS total \
         FROM t GROUP BY grp",
        "CREATE VIEW v_on_v AS SELECT k, label FROM v_cols WHERE k > 10",
    ] {
        m.query_drop(sql)
            .unwrap_or_else(|e| panic!("mariadb: {sql}: {e}"));
    }

    // MariaDB → Strata.
    let from_maria = common::dump::dump(maria.port, "src", &["--routines", "--triggers"]);
    let mut s = common::connect(strata.port, None);
    s.query_drop("CREATE DATABASE src").unwrap();
    load(strata.port, "src", &from_maria);
    for (name, sql) in OBJECTS {
        let want = rows(&mut m, sql);
        s.query_drop("USE src").unwrap();
        let got = rows(&mut s, sql);
        assert_eq!(
            got, want,
            "{name} reads differently in Strata after loading MariaDB's dump"
        );
    }
    let kinds = rows(&mut s, "SHOW FULL TABLES FROM src");
    assert_eq!(
        kinds
            .iter()
            .filter(|r| r.get(1).map(String::as_str) == Some("VIEW"))
            .count(),
        5,
        "{kinds:?}"
    );

    // Strata → MariaDB.
    let from_strata = common::dump::dump(strata.port, "src", &["--routines", "--triggers"]);
    m.query_drop("CREATE DATABASE back").unwrap();
    load(maria.port, "back", &from_strata);
    for (name, sql) in OBJECTS {
        m.query_drop("USE src").unwrap();
        let want = rows(&mut m, sql);
        m.query_drop("USE back").unwrap();
        let got = rows(&mut m, sql);
        assert_eq!(
            got, want,
            "{name} reads differently after Strata's dump went back to MariaDB"
        );
    }
}
