//! `mysqldump --routines --triggers` across servers: a MariaDB 10.11 database with
//! tables, triggers (compound bodies, NEW/OLD, FOLLOWS), stored procedures (IN/OUT,
//! cursors, handlers, result sets) and stored functions is dumped by MariaDB's dump
//! client and loaded into Strata with the `mariadb` client (DELIMITER, version
//! comments); there the rows match, the triggers fire, the routines give MariaDB's
//! answers. Strata's own dump of it then loads back into MariaDB with the same
//! answers. Both servers are real processes this test starts; a missing `mariadbd` or
//! dump program skips it outside CI.

use crate::common;

use common::dump::{dump_program, load, text_rows as rows};
use common::{Flavor, TestServer};
use mysql::prelude::Queryable;

const SETUP: &[&str] = &[
    "CREATE DATABASE shop",
    "USE shop",
    "CREATE TABLE item (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(30) NOT NULL, \
     price DECIMAL(8,2) NOT NULL, stock INT NOT NULL DEFAULT 0) ENGINE=InnoDB",
    "CREATE TABLE audit (n INT PRIMARY KEY AUTO_INCREMENT, what VARCHAR(100)) ENGINE=InnoDB",
    "CREATE DEFINER=root@localhost TRIGGER item_bi BEFORE INSERT ON item FOR EACH ROW \
     BEGIN \
       IF NEW.price < 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'negative price'; END IF; \
       SET NEW.name = TRIM(NEW.name); \
     END",
    "CREATE DEFINER=root@localhost TRIGGER item_ai AFTER INSERT ON item FOR EACH ROW \
     INSERT INTO audit (what) VALUES (CONCAT('added ', NEW.name))",
    "CREATE DEFINER=root@localhost TRIGGER item_au AFTER UPDATE ON item FOR EACH ROW \
     INSERT INTO audit (what) VALUES (CONCAT(OLD.name, ' stock ', OLD.stock, '->', NEW.stock))",
    "CREATE DEFINER=root@localhost TRIGGER item_ai2 AFTER INSERT ON item FOR EACH ROW FOLLOWS item_ai \
     INSERT INTO audit (what) VALUES ('second trigger')",
    "CREATE DEFINER=root@localhost FUNCTION with_tax(p DECIMAL(8,2)) RETURNS DECIMAL(10,2) DETERMINISTIC \
     RETURN ROUND(p * 1.2, 2)",
    "CREATE DEFINER=root@localhost FUNCTION stock_value() RETURNS DECIMAL(12,2) READS SQL DATA \
     BEGIN \
       DECLARE total DECIMAL(12,2) DEFAULT 0; \
       DECLARE done INT DEFAULT 0; \
       DECLARE p DECIMAL(8,2); \
       DECLARE s INT; \
       DECLARE c CURSOR FOR SELECT price, stock FROM item; \
       DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1; \
       OPEN c; \
       l: LOOP FETCH c INTO p, s; IF done THEN LEAVE l; END IF; SET total = total + p * s; END LOOP; \
       CLOSE c; \
       RETURN total; \
     END",
    "CREATE DEFINER=root@localhost PROCEDURE restock(IN item_id INT, IN qty INT, OUT new_stock INT) \
     MODIFIES SQL DATA COMMENT 'adds stock' \
     BEGIN \
       UPDATE item SET stock = stock + qty WHERE id = item_id; \
       SELECT stock INTO new_stock FROM item WHERE id = item_id; \
     END",
    "CREATE DEFINER=root@localhost PROCEDURE report(IN min_stock INT) \
     BEGIN \
       SELECT name, with_tax(price) AS gross FROM item WHERE stock >= min_stock ORDER BY id; \
     END",
    "INSERT INTO item (name, price, stock) VALUES ('  apple ', 1.00, 10), ('pear', 2.50, 0), \
     ('fig', 10.00, 3)",
];

// The MariaDB under test runs with --skip-grant-tables, where the session has no user:
// the routines name their definer, so the dump loads back into it.

/// What both servers must answer the same for the loaded database (statement, rows).
const CHECKS: &[&str] = &[
    "SELECT id, name, price, stock FROM item ORDER BY id",
    "SELECT what FROM audit ORDER BY n",
    "SELECT with_tax(price), stock_value() FROM item ORDER BY id",
    "SELECT TRIGGER_NAME, EVENT_MANIPULATION, ACTION_TIMING, ACTION_ORDER \
     FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY 1",
    "SELECT ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES \
     WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1",
];

/// The dump options under test.
const ROUTINES: &[&str] = &["--routines", "--triggers"];

/// Runs the checks, then a CALL with an OUT parameter and an insert the triggers see.
fn answers(port: u16, db: &str) -> Vec<Vec<Vec<String>>> {
    let mut conn = common::connect(port, Some(db));
    let mut all: Vec<Vec<Vec<String>>> = CHECKS.iter().map(|q| rows(&mut conn, q)).collect();
    conn.query_drop("CALL restock(2, 5, @s)").unwrap();
    all.push(rows(&mut conn, "SELECT @s"));
    all.push(rows(&mut conn, "CALL report(3)"));
    let e = conn
        .query_drop("INSERT INTO item (name, price) VALUES ('bad', -1)")
        .expect_err("the BEFORE INSERT trigger refuses a negative price");
    all.push(vec![vec![e
        .to_string()
        .contains("negative price")
        .to_string()]]);
    conn.query_drop("INSERT INTO item (name, price, stock) VALUES (' kiwi', 0.5, 4)")
        .unwrap();
    all.push(rows(&mut conn, "SELECT what FROM audit ORDER BY n"));
    all.push(rows(&mut conn, "SELECT stock_value()"));
    all
}

#[test]
fn mariadb_dump_with_routines_and_triggers_loads_into_strata_and_back() {
    let test = "routines_dump";
    if dump_program().is_none() {
        assert!(!common::in_ci(), "no dump program is installed");
        eprintln!("{test} skipped: no mysqldump / mariadb-dump");
        return;
    }
    if !common::require_program("mariadbd", test) || !common::require_program("mariadb", test) {
        return;
    }
    let mariadb = TestServer::start_flavor(Flavor::MariaDb, &[]);
    let mut conn = common::connect(mariadb.port, None);
    for sql in SETUP {
        conn.query_drop(*sql)
            .unwrap_or_else(|e| panic!("MariaDB: {sql}: {e}"));
    }
    let dumped = common::dump::dump(mariadb.port, "shop", ROUTINES);
    let text = String::from_utf8_lossy(&dumped);
    assert!(text.contains("DELIMITER ;;") && text.contains("CREATE DEFINER"));

    let strata = TestServer::start_flavor(Flavor::Strata, &[]);
    common::connect(strata.port, None)
        .query_drop("CREATE DATABASE shop")
        .unwrap();
    load(strata.port, "shop", &dumped);

    // The same database on MariaDB, loaded from the same dump, is the reference.
    conn.query_drop("CREATE DATABASE shop_ref").unwrap();
    load(mariadb.port, "shop_ref", &dumped);
    let expected = answers(mariadb.port, "shop_ref");
    let got = answers(strata.port, "shop");
    assert_eq!(got, expected, "Strata's answers differ from MariaDB's");

    // Strata's dump of its copy loads into MariaDB and gives the same answers again.
    let back = common::dump::dump(strata.port, "shop", ROUTINES);
    conn.query_drop("CREATE DATABASE shop_back").unwrap();
    load(mariadb.port, "shop_back", &back);
    let mut c = common::connect(mariadb.port, Some("shop_back"));
    let mut s = common::connect(strata.port, Some("shop"));
    for q in CHECKS {
        assert_eq!(
            rows(&mut c, q),
            rows(&mut s, q),
            "after the round trip: {q}"
        );
    }
}
