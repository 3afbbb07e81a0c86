//! Strata as a replica (`crates/server/src/replica/`), against real servers:
//! - a chain MariaDB → Strata → MariaDB: a MariaDB 10.11 source (binlog_format=ROW) gets
//!   DDL and DML over tables of many column types, Strata replicates from it with
//!   CHANGE REPLICATION SOURCE TO / START REPLICA, a second MariaDB replicates from
//!   Strata; Strata is killed with SIGKILL while a stream of transactions arrives and
//!   resumes from the position stored with the applied rows; at the end the three
//!   servers' tables are equal (ordered dumps);
//! - Strata → Strata, with the statements' errors: SHOW REPLICA STATUS before and after
//!   configuration, an unreachable source (2003, retried), a wrong password (1045), an
//!   event that cannot be applied (1062, the thread stops), STOP/START, the privilege
//!   (1227), options and channels that are refused (1235).
//!
//! - GTID positioning: MariaDB → Strata with MASTER_USE_GTID=slave_pos and Strata →
//!   Strata with SOURCE_AUTO_POSITION=1, each killed with SIGKILL while transactions
//!   stream in and restarted, then RESET REPLICA (file and position forgotten, GTIDs
//!   kept) and started again: the tables equal the source's, nothing applied twice or
//!   lost, Executed_Gtid_Set equals the source's own GTID state; a replica lacking
//!   transactions the source purged is refused (1236).
//!
//! - A chain Strata A → Strata B → Strata C, each logging, B and C by
//!   SOURCE_AUTO_POSITION=1: B logs every applied transaction under A's GTID (SHOW
//!   BINLOG EVENTS: every GTID event is A's, each once, none of B's own), so B's and C's
//!   gtid_executed are A's; B is killed with SIGKILL while transactions stream in and
//!   its gtid_executed, binary log and rows still agree; C is then pointed at A
//!   directly, and later at A's first file by position (every transaction sent again,
//!   each skipped as executed), and ends equal to A.
//!
//! The servers are processes the test starts; a missing `mariadbd` skips the chain
//! outside CI (fails in CI).

use crate::common;

use common::dump::text_rows;
use common::{connect, free_port, require_program, Flavor, TestServer};
use mysql::prelude::Queryable;
use std::collections::HashMap;
use std::time::{Duration, Instant};

fn status(c: &mut mysql::Conn, sql: &str) -> HashMap<String, String> {
    let rows: Vec<mysql::Row> = c.query(sql).unwrap();
    let Some(row) = rows.into_iter().next() else {
        return Default::default();
    };
    let cols = row.columns();
    (0..row.len())
        .map(|i| {
            let v: Option<String> = row.get_opt(i).and_then(|r| r.ok()).unwrap_or(None);
            (
                cols[i].name_str().to_string(),
                v.unwrap_or_else(|| "NULL".into()),
            )
        })
        .collect()
}

fn replica_status(port: u16) -> HashMap<String, String> {
    status(&mut connect(port, None), "SHOW REPLICA STATUS")
}

fn source_position(port: u16) -> (String, String) {
    let st = text_rows(&mut connect(port, None), "SHOW MASTER STATUS");
    (st[0][0].clone(), st[0][1].clone())
}

/// Waits until the Strata replica on `replica` applied everything `source` logged.
fn wait_strata_caught_up(source: u16, replica: u16) {
    let (file, pos) = source_position(source);
    let start = Instant::now();
    loop {
        let rs = replica_status(replica);
        if rs.get("Relay_Source_Log_File") == Some(&file)
            && rs.get("Exec_Source_Log_Pos") == Some(&pos)
        {
            return;
        }
        if start.elapsed() > Duration::from_secs(120)
            || rs.get("Last_SQL_Errno").is_some_and(|e| e != "0")
        {
            panic!("Strata did not catch up to {file}:{pos}: {rs:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the MariaDB replica on `replica` applied everything Strata logged.
fn wait_mariadb_caught_up(strata: u16, replica: u16) {
    let (file, pos) = source_position(strata);
    let start = Instant::now();
    loop {
        let rs = status(&mut connect(replica, None), "SHOW SLAVE STATUS");
        if rs.get("Relay_Master_Log_File") == Some(&file)
            && rs.get("Exec_Master_Log_Pos") == Some(&pos)
        {
            return;
        }
        if start.elapsed() > Duration::from_secs(120) {
            panic!("the MariaDB replica did not catch up to {file}:{pos}: {rs:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn point_mariadb_at(replica: u16, port: u16, file: &str, pos: &str) {
    let mut r = connect(replica, None);
    r.query_drop("STOP SLAVE").unwrap();
    r.query_drop(format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, MASTER_USER='root', \
         MASTER_PASSWORD='', MASTER_LOG_FILE='{file}', MASTER_LOG_POS={pos}, \
         MASTER_USE_GTID=no, MASTER_HEARTBEAT_PERIOD=1, MASTER_CONNECT_RETRY=1"
    ))
    .unwrap();
    r.query_drop("START SLAVE").unwrap();
}

const TABLES: &[&str] = &[
    "rp.t_all",
    "rp.t_nopk",
    "rp.m",
    "rp.counters",
    "rp.stream",
    "rp.w",
];

fn dump(port: u16, table: &str) -> Vec<Vec<String>> {
    let mut c = connect(port, None);
    // Every column, in a deterministic order (by all columns: t_nopk has no key).
    let cols = text_rows(
        &mut c,
        &format!(
            "SELECT COUNT(*) FROM information_schema.columns WHERE CONCAT(table_schema, '.', \
             table_name) = '{table}'"
        ),
    );
    let n: usize = cols[0][0].parse().unwrap();
    let order: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    text_rows(
        &mut c,
        &format!("SELECT * FROM {table} ORDER BY {}", order.join(", ")),
    )
}

fn assert_same(a: u16, b: u16, what: &str) {
    for t in TABLES {
        let (x, y) = (dump(a, t), dump(b, t));
        // rp.stream fills only in the second half.
        assert!(
            !x.is_empty() || (*t == "rp.stream" && what == "MariaDB → Strata"),
            "{t} is empty on the source"
        );
        assert!(x == y, "{what}: {t} differs:\n{x:?}\n{y:?}");
    }
}

const WORKLOAD: &[&str] = &[
    "CREATE DATABASE rp",
    "USE rp",
    "CREATE TABLE t_all (id INT PRIMARY KEY AUTO_INCREMENT, ti TINYINT, tiu TINYINT UNSIGNED, \
     si SMALLINT, mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, \
     biu BIGINT UNSIGNED, f FLOAT, d DOUBLE, dec1 DECIMAL(10,2), dec2 DECIMAL(30,10), \
     c CHAR(10), vc VARCHAR(60), vb VARBINARY(20), tx TEXT, bl BLOB, dt DATE, dtm DATETIME, \
     dtm6 DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME, tm3 TIME(3), yr YEAR, \
     e ENUM('a','b','c'), st SET('x','y','z'), bt BIT(12)) ENGINE=InnoDB",
    "INSERT INTO t_all (ti,tiu,si,mi,miu,i,iu,bi,biu,f,d,dec1,dec2,c,vc,vb,tx,bl,dt,dtm,dtm6,ts,\
     tm,tm3,yr,e,st,bt) VALUES \
     (-128,255,-32768,-8388608,16777215,-2147483648,4294967295,-9223372036854775808,\
     18446744073709551615,1.5,-2.25,-12345678.99,12345678901234567890.0123456789,'abc',\
     'héllo wörld it''s','\\0\\1\\2','some text','blob\\0data','2024-02-29',\
     '2023-12-31 23:59:59','2020-01-01 10:00:00.123456','2021-06-15 12:30:45.678','-838:59:59',\
     '12:34:56.789',2155,'b','x,z',b'101010101010'), \
     (NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,\
     NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL), \
     (127,1,32767,8388607,1,2147483647,1,9223372036854775807,1,-3.5e10,1e300,99999999.99,\
     -0.0000000001,'xyz','e','q','t','w','9999-12-31','9999-12-31 23:59:59',\
     '9999-12-31 23:59:59.999999','2038-01-19 03:14:07.999','838:59:59','-12:00:00.001',0,'c',\
     'x,y,z',b'111111111111')",
    "UPDATE t_all SET vc = CONCAT(COALESCE(vc, ''), '!'), dec1 = COALESCE(dec1, 0) + 1 \
     WHERE id <= 2",
    "DELETE FROM t_all WHERE id = 2",
    "BEGIN",
    "INSERT INTO t_all (vc) VALUES ('rolled back')",
    "ROLLBACK",
    "BEGIN",
    "INSERT INTO t_all (vc) VALUES ('committed')",
    "UPDATE t_all SET ti = 7 WHERE vc = 'committed'",
    "COMMIT",
    "CREATE TABLE t_nopk (a INT, b VARCHAR(10)) ENGINE=InnoDB",
    "INSERT INTO t_nopk VALUES (1,'x'),(1,'x'),(2,NULL),(3,'z')",
    "UPDATE t_nopk SET b = 'y' WHERE a = 2",
    "DELETE FROM t_nopk WHERE a = 1 LIMIT 1",
    "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=MyISAM",
    "INSERT INTO m VALUES (1,'a'),(2,'b'),(3,'c')",
    "UPDATE m SET v = 'bb' WHERE id = 2",
    "DELETE FROM m WHERE id = 3",
    "ALTER TABLE t_all ADD COLUMN extra INT DEFAULT 7",
    "UPDATE t_all SET extra = id * 2 WHERE id > 1",
    // DECIMAL(39..65) columns (MySQL's packed form up to 65 digits), one as the key.
    "CREATE TABLE w (id DECIMAL(65,30) PRIMARY KEY, a DECIMAL(40,2), b DECIMAL(39,0), \
     c DECIMAL(50,10)) ENGINE=InnoDB",
    "INSERT INTO w VALUES \
     (12345678901234567890123456789012345.123456789012345678901234567891, \
     -12345678901234567890123456789012345678.9, 999999999999999999999999999999999999999, NULL), \
     (-0.000000000000000000000000000001, 0, -1, -1234567890123456789012345678901234567890.0123456789), \
     (0, 0.01, NULL, 0.0000000001), \
     (-99999999999999999999999999999999999.999999999999999999999999999999, \
     99999999999999999999999999999999999999.99, -999999999999999999999999999999999999999, 1)",
    "UPDATE w SET a = -a, c = COALESCE(c, 5) * 3 WHERE id <= 0",
    "DELETE FROM w WHERE id = 0",
    "CREATE TABLE counters (id INT PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB",
    "INSERT INTO counters VALUES (1, 0), (2, 0), (3, 0)",
    "CREATE TABLE stream (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB",
];

/// Transactions the source commits while Strata is killed: each inserts a new row
/// (a duplicate apply would fail with 1062) and bumps a counter (a lost one would show
/// in the final comparison).
fn stream(port: u16, from: i32, to: i32) {
    let mut c = connect(port, Some("rp"));
    for i in from..to {
        c.query_drop("BEGIN").unwrap();
        c.query_drop(format!("INSERT INTO stream VALUES ({i}, 'row {i}')"))
            .unwrap();
        c.query_drop(format!(
            "UPDATE counters SET n = n + 1 WHERE id = {}",
            i % 3 + 1
        ))
        .unwrap();
        if i % 10 == 0 {
            c.query_drop(format!("DELETE FROM stream WHERE id = {}", i - 5))
                .unwrap();
        }
        c.query_drop("COMMIT").unwrap();
    }
}

#[test]
fn mariadb_to_strata_to_mariadb_with_a_crash_of_strata() {
    if !require_program(
        "mariadbd",
        "mariadb_to_strata_to_mariadb_with_a_crash_of_strata",
    ) {
        return;
    }
    let source = TestServer::start_flavor(
        Flavor::MariaDb,
        &[
            "--log-bin",
            "--binlog-format=ROW",
            "--server-id=10",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
        ],
    );
    let mut strata = TestServer::start_flavor(
        Flavor::Strata,
        &["--log-bin", "--server-id=20", "--binlog-json-format=TEXT"],
    );
    let sink = TestServer::start_flavor(
        Flavor::MariaDb,
        &[
            "--server-id=30",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
        ],
    );
    let (file, pos) = source_position(source.port);
    {
        let mut s = connect(strata.port, None);
        let rs = status(&mut s, "SHOW REPLICA STATUS");
        assert!(rs.is_empty(), "not configured yet: {rs:?}");
        s.query_drop(format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, \
             SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_LOG_FILE='{file}', \
             SOURCE_LOG_POS={pos}, SOURCE_CONNECT_RETRY=1",
            source.port
        ))
        .unwrap();
        s.query_drop("START REPLICA").unwrap();
    }
    point_mariadb_at(sink.port, strata.port, "binlog.000001", "4");
    {
        let mut c = connect(source.port, None);
        for q in WORKLOAD {
            c.query_drop(*q).unwrap_or_else(|e| panic!("{q}: {e}"));
        }
    }
    wait_strata_caught_up(source.port, strata.port);
    let rs = replica_status(strata.port);
    assert_eq!(rs["Replica_IO_Running"], "Yes", "{rs:?}");
    assert_eq!(rs["Replica_SQL_Running"], "Yes", "{rs:?}");
    assert_eq!(rs["Source_Host"], "127.0.0.1");
    assert_eq!(rs["Source_Port"], source.port.to_string());
    assert_eq!(rs["Source_Server_Id"], "10");
    assert_eq!(rs["Last_IO_Errno"], "0", "{rs:?}");
    assert_eq!(rs["Last_SQL_Errno"], "0", "{rs:?}");
    assert_eq!(rs["Seconds_Behind_Source"], "0", "{rs:?}");
    assert_eq!(rs["Read_Source_Log_Pos"], rs["Exec_Source_Log_Pos"]);
    assert_same(source.port, strata.port, "MariaDB → Strata");

    // STOP / START: changes made while stopped arrive after START.
    connect(strata.port, None)
        .query_drop("STOP REPLICA")
        .unwrap();
    let rs = replica_status(strata.port);
    assert_eq!(
        (
            rs["Replica_IO_Running"].as_str(),
            rs["Replica_SQL_Running"].as_str()
        ),
        ("No", "No")
    );
    assert_eq!(rs["Seconds_Behind_Source"], "NULL");
    stream(source.port, 1, 50);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        text_rows(
            &mut connect(strata.port, None),
            "SELECT COUNT(*) FROM rp.stream"
        )[0][0],
        "0"
    );
    connect(strata.port, None)
        .query_drop("START REPLICA")
        .unwrap();
    wait_strata_caught_up(source.port, strata.port);

    // SIGKILL while transactions stream in; the restarted server starts its replica
    // from the stored position by itself.
    let writer = {
        let port = source.port;
        std::thread::spawn(move || stream(port, 50, 1500))
    };
    let mut kills = 0;
    while !writer.is_finished() && kills < 3 {
        std::thread::sleep(Duration::from_millis(700));
        strata.crash();
        kills += 1;
        strata.start_again();
    }
    writer.join().unwrap();
    wait_strata_caught_up(source.port, strata.port);
    let rs = replica_status(strata.port);
    assert_eq!(rs["Last_SQL_Errno"], "0", "{rs:?}");
    assert_same(source.port, strata.port, "MariaDB → Strata after SIGKILL");
    let n = text_rows(
        &mut connect(strata.port, None),
        "SELECT SUM(n) FROM rp.counters",
    );
    assert_eq!(n[0][0], "1499");

    // The MariaDB replica of Strata: Strata's port changed with each restart.
    let (file, pos) = {
        let mut r = connect(sink.port, None);
        r.query_drop("STOP SLAVE").unwrap();
        let rs = status(&mut r, "SHOW SLAVE STATUS");
        (
            rs["Relay_Master_Log_File"].clone(),
            rs["Exec_Master_Log_Pos"].clone(),
        )
    };
    point_mariadb_at(sink.port, strata.port, &file, &pos);
    wait_mariadb_caught_up(strata.port, sink.port);
    let rs = status(&mut connect(sink.port, None), "SHOW SLAVE STATUS");
    assert_eq!(rs["Last_Errno"], "0", "{rs:?}");
    assert_same(source.port, sink.port, "MariaDB → Strata → MariaDB");
}

fn err_code(r: mysql::Result<()>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// Waits until SHOW REPLICA STATUS satisfies `ok`.
fn wait_status(port: u16, what: &str, ok: impl Fn(&HashMap<String, String>) -> bool) {
    let start = Instant::now();
    loop {
        let rs = replica_status(port);
        if ok(&rs) {
            return;
        }
        if start.elapsed() > Duration::from_secs(60) {
            panic!("{what}: {rs:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn change_to(c: &mut mysql::Conn, port: u16, user: &str, pw: &str) {
    c.query_drop(format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, MASTER_USER='{user}', \
         MASTER_PASSWORD='{pw}', MASTER_CONNECT_RETRY=1"
    ))
    .unwrap();
}

#[test]
fn strata_to_strata_and_the_statements_errors() {
    let source = TestServer::start_flavor(Flavor::Strata, &["--log-bin", "--server-id=1"]);
    let replica = TestServer::start_flavor(Flavor::Strata, &["--server-id=2"]);
    let mut r = connect(replica.port, None);
    assert!(status(&mut r, "SHOW REPLICA STATUS").is_empty());
    assert_eq!(err_code(r.query_drop("START REPLICA")), 1200);
    // Refused options and channels.
    assert_eq!(
        err_code(
            r.query_drop("CHANGE MASTER TO MASTER_AUTO_POSITION=1, MASTER_USE_GTID=slave_pos")
        ),
        1235
    );
    assert_eq!(
        err_code(r.query_drop("CHANGE MASTER TO MASTER_DELAY=10")),
        1235
    );
    assert_eq!(
        err_code(r.query_drop("START REPLICA FOR CHANNEL 'other'")),
        1235
    );
    // Privileges: 1227 without REPLICATION_SLAVE_ADMIN / SUPER.
    r.query_drop("CREATE USER plain@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    r.query_drop("GRANT SELECT ON *.* TO plain@'%'").unwrap();
    {
        let mut p = mysql::Conn::new(
            mysql::OptsBuilder::new()
                .ip_or_hostname(Some("127.0.0.1"))
                .tcp_port(replica.port)
                .user(Some("plain"))
                .pass(Some("pw"))
                .prefer_socket(false),
        )
        .unwrap();
        assert_eq!(err_code(p.query_drop("STOP REPLICA")), 1227);
        assert_eq!(
            err_code(p.query_drop("CHANGE REPLICATION SOURCE TO SOURCE_HOST='x'")),
            1227
        );
        assert_eq!(err_code(p.query_drop("SHOW REPLICA STATUS")), 1227);
    }

    // A source that does not answer: 2003, retried every second.
    let nobody = free_port();
    change_to(&mut r, nobody, "root", "");
    r.query_drop("START REPLICA").unwrap();
    wait_status(replica.port, "2003 while connecting", |rs| {
        rs["Replica_IO_Running"] == "Connecting" && rs["Last_IO_Errno"] == "2003"
    });
    assert_eq!(
        err_code(r.query_drop("CHANGE REPLICATION SOURCE TO SOURCE_PORT=1")),
        1198
    );
    assert_eq!(err_code(r.query_drop("RESET REPLICA")), 1198);
    r.query_drop("STOP REPLICA").unwrap();
    let w: Vec<(String, u16, String)> = r.query("SHOW WARNINGS").unwrap();
    assert!(w.is_empty(), "{w:?}");
    r.query_drop("STOP REPLICA").unwrap();
    let w: Vec<(String, u16, String)> = r.query("SHOW WARNINGS").unwrap();
    assert_eq!(w[0].1, 3084);

    // Wrong password: the source's 1045.
    let mut s = connect(source.port, None);
    s.query_drop("CREATE USER repl@'%' IDENTIFIED WITH mysql_native_password BY 'secret'")
        .unwrap();
    s.query_drop("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO repl@'%'")
        .unwrap();
    change_to(&mut r, source.port, "repl", "wrong");
    r.query_drop("START SLAVE").unwrap();
    wait_status(replica.port, "1045 for a wrong password", |rs| {
        rs["Last_IO_Errno"] == "1045"
    });
    r.query_drop("STOP SLAVE").unwrap();

    // The right one: Strata → Strata, from the source's first file.
    change_to(&mut r, source.port, "repl", "secret");
    r.query_drop("START REPLICA").unwrap();
    r.query_drop("START REPLICA").unwrap();
    let w: Vec<(String, u16, String)> = r.query("SHOW WARNINGS").unwrap();
    assert_eq!(w[0].1, 3083);
    for q in [
        "CREATE DATABASE ss",
        "CREATE TABLE ss.t (id INT PRIMARY KEY, v VARCHAR(20), d DECIMAL(8,3), j JSON)",
        "INSERT INTO ss.t VALUES (1, 'one', 1.5, '{\"a\": [1, 2]}'), (2, 'two', -2.25, NULL)",
        "UPDATE ss.t SET v = 'uno' WHERE id = 1",
    ] {
        s.query_drop(q).unwrap();
    }
    wait_strata_caught_up(source.port, replica.port);
    let q = "SELECT * FROM ss.t ORDER BY id";
    assert_eq!(text_rows(&mut s, q), text_rows(&mut r, q));
    let rs = status(&mut r, "SHOW SLAVE STATUS");
    assert_eq!(rs["Slave_IO_Running"], "Yes", "{rs:?}");
    assert_eq!(rs["Master_Server_Id"], "1", "{rs:?}");

    // An event that cannot be applied stops the replica with its error; once the
    // conflict is gone, START REPLICA applies it.
    r.query_drop("INSERT INTO ss.t VALUES (3, 'replica only', 0, NULL)")
        .unwrap();
    s.query_drop("INSERT INTO ss.t VALUES (3, 'three', 3, NULL)")
        .unwrap();
    wait_status(replica.port, "1062 for a duplicate", |rs| {
        rs["Last_SQL_Errno"] == "1062" && rs["Replica_SQL_Running"] == "No"
    });
    let rs = replica_status(replica.port);
    assert!(
        rs["Last_SQL_Error"].contains("Could not execute Write_rows event on table ss.t"),
        "{rs:?}"
    );
    r.query_drop("DELETE FROM ss.t WHERE id = 3").unwrap();
    r.query_drop("START REPLICA").unwrap();
    wait_strata_caught_up(source.port, replica.port);
    assert_eq!(text_rows(&mut s, q), text_rows(&mut r, q));
    assert_eq!(replica_status(replica.port)["Last_SQL_Errno"], "0");

    // RESET REPLICA ALL forgets the source.
    r.query_drop("STOP REPLICA").unwrap();
    r.query_drop("RESET REPLICA ALL").unwrap();
    assert!(status(&mut r, "SHOW REPLICA STATUS").is_empty());
}

/// The source's own GTID state: MariaDB's `gtid_binlog_pos`, Strata's `gtid_executed`.
fn source_gtids(port: u16, mariadb: bool) -> String {
    let q = if mariadb {
        "SELECT @@gtid_binlog_pos"
    } else {
        "SELECT @@gtid_executed"
    };
    text_rows(&mut connect(port, None), q)[0][0].clone()
}

/// Waits until the Strata replica's Executed_Gtid_Set is the source's GTID state.
fn wait_gtids_caught_up(source: u16, mariadb: bool, replica: u16) -> HashMap<String, String> {
    let want = source_gtids(source, mariadb);
    assert!(!want.is_empty());
    let start = Instant::now();
    loop {
        let rs = replica_status(replica);
        if rs.get("Executed_Gtid_Set") == Some(&want) {
            return rs;
        }
        if start.elapsed() > Duration::from_secs(120)
            || rs.get("Last_SQL_Errno").is_some_and(|e| e != "0")
        {
            panic!("Strata did not catch up to {want}: {rs:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn assert_tables_same(a: u16, b: u16, tables: &[&str], what: &str) {
    for t in tables {
        let (x, y) = (dump(a, t), dump(b, t));
        assert!(!x.is_empty(), "{t} is empty on the source");
        assert!(x == y, "{what}: {t} differs:\n{x:?}\n{y:?}");
    }
}

/// Streams transactions `from..to` into the source while the replica is killed
/// `kills` times and started again.
fn stream_through_kills(source: u16, replica: &mut TestServer, from: i32, to: i32, kills: u32) {
    let writer = std::thread::spawn(move || stream(source, from, to));
    let mut done = 0;
    while !writer.is_finished() && done < kills {
        std::thread::sleep(Duration::from_millis(600));
        replica.crash();
        done += 1;
        replica.start_again();
    }
    writer.join().unwrap();
}

/// STOP, RESET REPLICA (the file and position go back to the start; the GTIDs applied
/// stay) and START: GTID positioning goes on from the GTIDs, so nothing is applied
/// twice (a duplicate insert into rp.stream would stop the replica with 1062).
fn reset_and_go_on(replica: u16) {
    let mut r = connect(replica, None);
    let before = replica_status(replica)["Executed_Gtid_Set"].clone();
    r.query_drop("STOP REPLICA").unwrap();
    r.query_drop("RESET REPLICA").unwrap();
    let rs = replica_status(replica);
    assert_eq!(
        (
            rs["Relay_Source_Log_File"].as_str(),
            rs["Exec_Source_Log_Pos"].as_str()
        ),
        ("", "4"),
        "{rs:?}"
    );
    assert_eq!(rs["Executed_Gtid_Set"], before);
    assert_eq!(rs["Auto_Position"], "1");
    r.query_drop("START REPLICA").unwrap();
}

#[test]
fn mariadb_to_strata_by_gtid_with_restarts() {
    if !require_program("mariadbd", "mariadb_to_strata_by_gtid_with_restarts") {
        return;
    }
    let source = TestServer::start_flavor(
        Flavor::MariaDb,
        &[
            "--log-bin",
            "--binlog-format=ROW",
            "--server-id=10",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
        ],
    );
    let mut strata = TestServer::start_flavor(Flavor::Strata, &["--server-id=20"]);
    // Half the workload before the replica exists: the empty GTID position asks for
    // everything from the start.
    let half = WORKLOAD.len() / 2;
    {
        let mut c = connect(source.port, None);
        for q in &WORKLOAD[..half] {
            c.query_drop(*q).unwrap_or_else(|e| panic!("{q}: {e}"));
        }
    }
    {
        let mut s = connect(strata.port, None);
        s.query_drop(format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', \
             MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
            source.port
        ))
        .unwrap();
        // A position while GTID positioning is on: 1776.
        assert_eq!(
            err_code(s.query_drop("CHANGE MASTER TO MASTER_LOG_POS=4")),
            1776
        );
        let rs = status(&mut s, "SHOW REPLICA STATUS");
        assert_eq!(rs["Auto_Position"], "1", "{rs:?}");
        assert_eq!(rs["Executed_Gtid_Set"], "", "{rs:?}");
        s.query_drop("START SLAVE").unwrap();
    }
    {
        let mut c = connect(source.port, Some("rp"));
        for q in &WORKLOAD[half..] {
            c.query_drop(*q).unwrap_or_else(|e| panic!("{q}: {e}"));
        }
    }
    let rs = wait_gtids_caught_up(source.port, true, strata.port);
    assert_eq!(rs["Replica_IO_Running"], "Yes", "{rs:?}");
    assert_eq!(rs["Retrieved_Gtid_Set"], rs["Executed_Gtid_Set"], "{rs:?}");
    assert!(rs["Executed_Gtid_Set"].starts_with("0-10-"), "{rs:?}");
    assert_eq!(rs["Last_IO_Errno"], "0", "{rs:?}");

    // SIGKILL three times while transactions stream in; each restart asks MariaDB from
    // the GTID position stored with the rows.
    stream_through_kills(source.port, &mut strata, 1, 1200, 3);
    wait_gtids_caught_up(source.port, true, strata.port);
    assert_same(
        source.port,
        strata.port,
        "MariaDB → Strata by GTID after SIGKILL",
    );

    reset_and_go_on(strata.port);
    stream(source.port, 1200, 1300);
    let rs = wait_gtids_caught_up(source.port, true, strata.port);
    assert_eq!(rs["Last_SQL_Errno"], "0", "{rs:?}");
    assert_same(
        source.port,
        strata.port,
        "MariaDB → Strata by GTID after RESET",
    );
    let n = text_rows(
        &mut connect(strata.port, None),
        "SELECT SUM(n) FROM rp.counters",
    );
    assert_eq!(n[0][0], "1299");

    // MySQL's SOURCE_AUTO_POSITION against MariaDB: the replica stops, saying why.
    let mut s = connect(strata.port, None);
    s.query_drop("STOP REPLICA").unwrap();
    s.query_drop("CHANGE MASTER TO MASTER_USE_GTID=no, MASTER_AUTO_POSITION=1")
        .unwrap();
    s.query_drop("START REPLICA").unwrap();
    wait_status(
        strata.port,
        "1235 for AUTO_POSITION against MariaDB",
        |rs| rs["Last_IO_Errno"] == "1235" && rs["Replica_IO_Running"] == "No",
    );
}

#[test]
fn strata_to_strata_by_gtid_with_a_crash() {
    let source = TestServer::start_flavor(Flavor::Strata, &["--log-bin", "--server-id=1"]);
    // The replica logs too: its binary log keeps the applied transactions' source
    // GTIDs.
    let mut replica = TestServer::start_flavor(Flavor::Strata, &["--log-bin", "--server-id=2"]);
    {
        let mut c = connect(source.port, None);
        for q in [
            "CREATE DATABASE rp",
            "CREATE TABLE rp.counters (id INT PRIMARY KEY, n BIGINT NOT NULL)",
            "INSERT INTO rp.counters VALUES (1, 0), (2, 0), (3, 0)",
            "CREATE TABLE rp.stream (id INT PRIMARY KEY, v VARCHAR(40))",
        ] {
            c.query_drop(q).unwrap();
        }
    }
    let mut r = connect(replica.port, None);
    r.query_drop(format!(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, \
         SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_AUTO_POSITION=1, \
         SOURCE_CONNECT_RETRY=1",
        source.port
    ))
    .unwrap();
    assert_eq!(
        err_code(r.query_drop(
            "CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE='binlog.000001', SOURCE_LOG_POS=4"
        )),
        1776
    );
    r.query_drop("START REPLICA").unwrap();
    stream(source.port, 1, 100);
    let rs = wait_gtids_caught_up(source.port, false, replica.port);
    assert_eq!(rs["Auto_Position"], "1", "{rs:?}");
    assert_eq!(rs["Retrieved_Gtid_Set"], rs["Executed_Gtid_Set"], "{rs:?}");
    // The replica logs the applied transactions under the source's GTIDs (MySQL 8), so
    // its own gtid_executed is the source's set.
    let own = text_rows(&mut r, "SELECT @@gtid_executed")[0][0].clone();
    assert_eq!(own, rs["Executed_Gtid_Set"]);
    drop(r);

    stream_through_kills(source.port, &mut replica, 100, 1000, 2);
    wait_gtids_caught_up(source.port, false, replica.port);
    let tables = ["rp.counters", "rp.stream"];
    assert_tables_same(
        source.port,
        replica.port,
        &tables,
        "Strata → Strata by GTID",
    );

    reset_and_go_on(replica.port);
    stream(source.port, 1000, 1100);
    let rs = wait_gtids_caught_up(source.port, false, replica.port);
    assert_eq!(rs["Last_SQL_Errno"], "0", "{rs:?}");
    assert_tables_same(source.port, replica.port, &tables, "after RESET REPLICA");
    let n = text_rows(
        &mut connect(replica.port, None),
        "SELECT SUM(n) FROM rp.counters",
    );
    assert_eq!(n[0][0], "1099");

    // A new replica lacks the transactions of a purged file: the source refuses (1236)
    // rather than starting after them.
    {
        let mut c = connect(source.port, None);
        c.query_drop("FLUSH BINARY LOGS").unwrap();
        let (file, _) = source_position(source.port);
        c.query_drop(format!("PURGE BINARY LOGS TO '{file}'"))
            .unwrap();
    }
    let fresh = TestServer::start_flavor(Flavor::Strata, &["--server-id=3"]);
    let mut f = connect(fresh.port, None);
    f.query_drop(format!(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, \
         SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_AUTO_POSITION=1, \
         SOURCE_CONNECT_RETRY=1",
        source.port
    ))
    .unwrap();
    f.query_drop("START REPLICA").unwrap();
    wait_status(fresh.port, "1236 for purged transactions", |rs| {
        rs["Last_IO_Errno"] == "13114" && rs["Replica_IO_Running"] == "No"
    });
    assert!(
        replica_status(fresh.port)["Last_IO_Error"].contains("purged"),
        "{:?}",
        replica_status(fresh.port)
    );
    // MariaDB's MASTER_USE_GTID against Strata: the replica stops, saying why.
    f.query_drop("STOP REPLICA").unwrap();
    f.query_drop("CHANGE MASTER TO MASTER_AUTO_POSITION=0, MASTER_USE_GTID=slave_pos")
        .unwrap();
    f.query_drop("START REPLICA").unwrap();
    wait_status(fresh.port, "1235 for USE_GTID against Strata", |rs| {
        rs["Last_IO_Errno"] == "1235" && rs["Replica_IO_Running"] == "No"
    });
}

/// Every GTID event in the binary log of the server on `port`, as `uuid:gno` text, in
/// log order (SHOW BINARY LOGS, then SHOW BINLOG EVENTS IN each file).
fn logged_gtids(port: u16) -> Vec<String> {
    let mut c = connect(port, None);
    let mut out = Vec::new();
    for f in text_rows(&mut c, "SHOW BINARY LOGS") {
        for e in text_rows(&mut c, &format!("SHOW BINLOG EVENTS IN '{}'", f[0])) {
            if e[2] == "Gtid" {
                let g = e[5]
                    .split('\'')
                    .nth(1)
                    .unwrap_or_else(|| panic!("GTID info {}", e[5]))
                    .to_string();
                out.push(g);
            }
        }
    }
    out
}

/// Waits until the server on `port` has `want` as its gtid_executed, failing on an
/// applier error.
fn wait_gtid_executed(port: u16, want: &str, what: &str) {
    let start = Instant::now();
    loop {
        let have = source_gtids(port, false);
        if have == want {
            return;
        }
        let rs = replica_status(port);
        if start.elapsed() > Duration::from_secs(120)
            || rs.get("Last_SQL_Errno").is_some_and(|e| e != "0")
        {
            panic!("{what}: gtid_executed {have}, want {want}: {rs:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn point_strata_at(replica: u16, source: u16, extra: &str) {
    let mut r = connect(replica, None);
    r.query_drop("STOP REPLICA").unwrap();
    r.query_drop(format!(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={source}, \
         SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_CONNECT_RETRY=1{extra}"
    ))
    .unwrap();
    r.query_drop("START REPLICA").unwrap();
}

#[test]
fn strata_chain_keeps_the_source_gtids() {
    let a = TestServer::start_flavor(Flavor::Strata, &["--log-bin", "--server-id=1"]);
    let mut b = TestServer::start_flavor(Flavor::Strata, &["--log-bin", "--server-id=2"]);
    let c = TestServer::start_flavor(Flavor::Strata, &["--log-bin", "--server-id=3"]);
    let a_uuid = text_rows(&mut connect(a.port, None), "SELECT @@server_uuid")[0][0].clone();
    let b_uuid = text_rows(&mut connect(b.port, None), "SELECT @@server_uuid")[0][0].clone();
    {
        let mut s = connect(a.port, None);
        for q in [
            "CREATE DATABASE rp",
            "CREATE TABLE rp.counters (id INT PRIMARY KEY, n BIGINT NOT NULL)",
            "INSERT INTO rp.counters VALUES (1, 0), (2, 0), (3, 0)",
            "CREATE TABLE rp.stream (id INT PRIMARY KEY, v VARCHAR(40))",
            // A heap table: a multi-row statement is one group on A, applied on B as
            // a statement per row, and logged there as one group under A's GTID.
            "CREATE TABLE rp.m (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=MyISAM",
            "INSERT INTO rp.m VALUES (1,'a'),(2,'b'),(3,'c')",
            "UPDATE rp.m SET v = 'x' WHERE id >= 2",
        ] {
            s.query_drop(q).unwrap();
        }
    }
    point_strata_at(b.port, a.port, ", SOURCE_AUTO_POSITION=1");
    point_strata_at(c.port, b.port, ", SOURCE_AUTO_POSITION=1");
    stream(a.port, 1, 200);
    let a_set = source_gtids(a.port, false);
    assert!(a_set.starts_with(&a_uuid), "{a_set}");
    wait_gtid_executed(b.port, &a_set, "B after A's first transactions");
    wait_gtid_executed(c.port, &a_set, "C through B");
    let tables = ["rp.counters", "rp.stream", "rp.m"];
    assert_tables_same(a.port, b.port, &tables, "A → B");
    assert_tables_same(a.port, c.port, &tables, "A → B → C");
    // B's SHOW MASTER STATUS is A's set, and its log holds A's GTIDs in A's order,
    // each once, none of its own.
    assert_eq!(
        text_rows(&mut connect(b.port, None), "SHOW MASTER STATUS")[0][4],
        a_set
    );
    let on_a = logged_gtids(a.port);
    let on_b = logged_gtids(b.port);
    assert_eq!(on_a, on_b, "B's GTID events are A's");
    assert!(on_b
        .iter()
        .all(|g| g.starts_with(&a_uuid) && !g.starts_with(&b_uuid)));

    // SIGKILL B three times while A's transactions stream in: after each restart B's
    // gtid_executed (from its log), its log and its rows agree, so C, which follows B's
    // log by GTID, gets every transaction once.
    stream_through_kills(a.port, &mut b, 200, 1200, 3);
    let a_set = source_gtids(a.port, false);
    wait_gtid_executed(b.port, &a_set, "B after SIGKILL");
    // B came back on another port.
    point_strata_at(c.port, b.port, "");
    wait_gtid_executed(c.port, &a_set, "C after B's SIGKILLs");
    assert_tables_same(a.port, b.port, &tables, "A → B after SIGKILL");
    assert_tables_same(a.port, c.port, &tables, "A → B → C after SIGKILL");
    let on_b = logged_gtids(b.port);
    let mut distinct = on_b.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), on_b.len(), "a GTID twice in B's log");
    assert_eq!(
        logged_gtids(a.port).len(),
        on_b.len(),
        "B's log lacks a GTID"
    );

    // C leaves B for A directly, by GTID, while A goes on: nothing twice, nothing lost.
    connect(c.port, None).query_drop("STOP REPLICA").unwrap();
    stream(a.port, 1200, 1300);
    point_strata_at(c.port, a.port, "");
    stream(a.port, 1300, 1400);
    let a_set = source_gtids(a.port, false);
    wait_gtid_executed(c.port, &a_set, "C switched to A");
    assert_tables_same(a.port, c.port, &tables, "C switched to A");
    let rs = replica_status(c.port);
    assert_eq!(
        (rs["Last_SQL_Errno"].as_str(), rs["Source_Port"].clone()),
        ("0", a.port.to_string()),
        "{rs:?}"
    );

    // By position from A's first file: A sends everything again, and C skips each
    // transaction it has executed (MySQL's auto-skip) — a second insert into
    // rp.stream would stop it with 1062.
    let first = text_rows(&mut connect(a.port, None), "SHOW BINARY LOGS")[0][0].clone();
    point_strata_at(
        c.port,
        a.port,
        &format!(", SOURCE_AUTO_POSITION=0, SOURCE_LOG_FILE='{first}', SOURCE_LOG_POS=4"),
    );
    stream(a.port, 1400, 1410);
    wait_strata_caught_up(a.port, c.port);
    let a_set = source_gtids(a.port, false);
    assert_eq!(source_gtids(c.port, false), a_set);
    assert_tables_same(a.port, c.port, &tables, "C by position from A's start");
    let n = text_rows(&mut connect(c.port, None), "SELECT SUM(n) FROM rp.counters");
    assert_eq!(n[0][0], "1409");
    assert_eq!(replica_status(c.port)["Last_SQL_Errno"], "0");
}

/// Row events applied through the engine API (`Session::apply_row_event`), from a
/// MariaDB source: values a text round trip could change arrive exactly (DOUBLE bits,
/// DECIMAL(65,30), DATETIME(6), BIT(64), BIGINT UNSIGNED's largest, JSON, a BLOB of
/// 0x00/0xFF bytes, ENUM/SET); of two identical rows of a table without a primary key a
/// DELETE of one removes exactly one; a trigger on the replica's table does not fire
/// for replicated rows (it does for the replica's own); the source's
/// binlog_row_image=MINIMAL (partial images) applies; and the replica's binary log
/// shows the source's server_id on the replicated events, its own on its own
/// transactions.
#[test]
fn mariadb_row_events_apply_exactly() {
    if !require_program("mariadbd", "mariadb_row_events_apply_exactly") {
        return;
    }
    let source = TestServer::start_flavor(
        Flavor::MariaDb,
        &[
            "--log-bin",
            "--binlog-format=ROW",
            "--server-id=11",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
        ],
    );
    let strata = TestServer::start_flavor(Flavor::Strata, &["--log-bin", "--server-id=21"]);
    let (file, pos) = source_position(source.port);
    let mut s = connect(strata.port, None);
    s.query_drop(format!(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={}, \
         SOURCE_USER='root', SOURCE_PASSWORD='', SOURCE_LOG_FILE='{file}', \
         SOURCE_LOG_POS={pos}, SOURCE_CONNECT_RETRY=1",
        source.port
    ))
    .unwrap();
    s.query_drop("START REPLICA").unwrap();
    let mut m = connect(source.port, None);
    for q in [
        "CREATE DATABASE ap",
        "USE ap",
        "CREATE TABLE x (id INT PRIMARY KEY, d DOUBLE, w DECIMAL(65,30), dt DATETIME(6), \
         b BIT(64), u BIGINT UNSIGNED, j JSON, bl BLOB, e ENUM('p','q','r'), \
         st SET('a','b','c','d')) ENGINE=InnoDB",
        "INSERT INTO x VALUES (1, 0.1e0 + 0.2e0, \
         -12345678901234567890123456789012345.123456789012345678901234567891, \
         '2024-02-29 23:59:59.999999', b'1111111111111111111111111111111111111111111111111111111111111111', \
         18446744073709551615, '{\"k\": [1, 2.5, \"s\"], \"n\": null}', X'00FF00FF0000', 'r', 'a,d')",
        "CREATE TABLE np (a INT, c CHAR(5)) ENGINE=InnoDB",
        "INSERT INTO np VALUES (1, 'x'), (1, 'x'), (2, 'y')",
        "CREATE TABLE log (id INT) ENGINE=InnoDB",
    ] {
        m.query_drop(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    wait_strata_caught_up(source.port, strata.port);
    // The replica's own trigger and transaction: the trigger fires for its own rows.
    s.query_drop("CREATE TRIGGER ap.x_ai AFTER INSERT ON ap.x FOR EACH ROW INSERT INTO ap.log VALUES (NEW.id)")
        .unwrap();
    s.query_drop("INSERT INTO ap.x (id) VALUES (1000)").unwrap();
    s.query_drop("DELETE FROM ap.x WHERE id = 1000").unwrap();
    assert_eq!(
        text_rows(&mut s, "SELECT id FROM ap.log"),
        vec![vec!["1000".to_string()]]
    );
    s.query_drop("DELETE FROM ap.log").unwrap();
    for q in [
        "INSERT INTO x (id, d) VALUES (2, 1e-300), (3, -0.0e0)",
        "DELETE FROM np WHERE a = 1 LIMIT 1",
        "UPDATE np SET c = 'z' WHERE a = 2",
        "SET SESSION binlog_row_image = MINIMAL",
        "UPDATE x SET u = 5 WHERE id = 2",
        "DELETE FROM x WHERE id = 3",
        "INSERT INTO x (id) VALUES (4)",
        "UPDATE np SET c = 'w' WHERE a = 1",
    ] {
        m.query_drop(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    wait_strata_caught_up(source.port, strata.port);
    let rs = replica_status(strata.port);
    assert_eq!(rs["Last_SQL_Errno"], "0", "{rs:?}");
    // Exact values.
    let row = |sql: &str| text_rows(&mut connect(strata.port, None), sql);
    assert_eq!(
        row(
            "SELECT d = 0.1e0 + 0.2e0, d = 0.3e0, HEX(b), u, HEX(bl), e, e + 0, st, st + 0, \
             CAST(w AS CHAR), dt FROM ap.x WHERE id = 1"
        ),
        vec![vec![
            "1",
            "0",
            "FFFFFFFFFFFFFFFF",
            "18446744073709551615",
            "00FF00FF0000",
            "r",
            "3",
            "a,d",
            "9",
            "-12345678901234567890123456789012345.123456789012345678901234567891",
            "2024-02-29 23:59:59.999999"
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()]
    );
    assert_eq!(
        row("SELECT JSON_EXTRACT(j, '$.k[1]'), JSON_TYPE(JSON_EXTRACT(j, '$.n')) FROM ap.x WHERE id = 1"),
        vec![vec!["2.5".to_string(), "NULL".to_string()]]
    );
    assert_eq!(
        row("SELECT d = 1e-300 FROM ap.x WHERE id = 2"),
        vec![vec!["1".to_string()]]
    );
    // MINIMAL images: the update changed u only, the delete found id 3 by its key.
    assert_eq!(
        row("SELECT id, u FROM ap.x ORDER BY id"),
        [("1", "18446744073709551615"), ("2", "5"), ("4", "NULL")]
            .iter()
            .map(|(a, b)| vec![a.to_string(), b.to_string()])
            .collect::<Vec<_>>()
    );
    // One of the two identical rows was deleted, then the other updated.
    assert_eq!(
        row("SELECT a, c FROM ap.np ORDER BY a"),
        vec![
            vec!["1".to_string(), "w".to_string()],
            vec!["2".to_string(), "z".to_string()]
        ]
    );
    // The trigger did not fire for the replicated rows.
    assert_eq!(
        row("SELECT COUNT(*) FROM ap.log"),
        vec![vec!["0".to_string()]]
    );
    // Every table equals the source's.
    for t in ["ap.np", "ap.log"] {
        assert_eq!(dump(source.port, t), dump(strata.port, t), "{t}");
    }
    // The replica's binary log: replicated events carry the source's server_id (11),
    // the replica's own transactions (the trigger, its INSERT and DELETE) its own (21).
    let events = text_rows(&mut s, "SHOW BINLOG EVENTS");
    let ids = |pred: &dyn Fn(&str) -> bool| -> Vec<String> {
        let mut v: Vec<String> = events
            .iter()
            .filter(|e| pred(&e[5]))
            .map(|e| e[3].clone())
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(
        ids(&|info| info.contains("table_id") && info.contains("ap.np")),
        vec!["11".to_string()],
        "{events:?}"
    );
    assert_eq!(
        ids(&|info| info.contains("CREATE TABLE") && info.contains(" np ")),
        vec!["11".to_string()],
        "{events:?}"
    );
    assert_eq!(
        ids(&|info| info.contains("CREATE") && info.contains("TRIGGER")),
        vec!["21".to_string()],
        "{events:?}"
    );
    let rows_ids: Vec<String> = events
        .iter()
        .filter(|e| e[2].ends_with("_rows"))
        .map(|e| e[3].clone())
        .collect();
    assert!(rows_ids.iter().any(|i| i == "21"), "{events:?}");
    assert!(rows_ids.iter().any(|i| i == "11"), "{events:?}");
}
