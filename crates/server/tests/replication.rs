//! The binary log and the replication source against real MariaDB 10.11 programs:
//!
//! - point-in-time recovery: a mixed workload on Strata (every column type, NULLs,
//!   multi-row and multi-table UPDATE/DELETE, UPDATE/DELETE IGNORE, DDL, a rolled-back transaction, savepoints, a heap table,
//!   rotation by size) is read back by `mariadb-binlog` and replayed with the `mariadb`
//!   client into an empty MariaDB, whose tables then equal Strata's;
//! - a MariaDB replica (`CHANGE MASTER TO … MASTER_LOG_FILE/POS`, file and position:
//!   MariaDB cannot follow MySQL-style GTIDs) follows Strata through a sysbench
//!   oltp_read_write load, survives a Strata restart and resumes where it stopped, and
//!   its tables equal Strata's.
//!
//! Both servers are processes the test starts; a missing `mariadbd`, `mariadb-binlog`
//! or `sysbench` skips (a failure under CI). JSON columns are logged as text
//! (`--binlog-json-format=TEXT`): MariaDB does not know MySQL's binary JSON type.

use crate::common;

use common::dump::text_rows;
use common::{connect, require_program, Flavor, TestServer};
use mysql::prelude::Queryable;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WORKLOAD: &[&str] = &[
    "CREATE DATABASE bl",
    "USE bl",
    "CREATE TABLE t_all (id INT PRIMARY KEY AUTO_INCREMENT, \
     ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT, miu MEDIUMINT UNSIGNED, \
     i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED, f FLOAT, d DOUBLE, \
     dec1 DECIMAL(10,2), dec2 DECIMAL(30,10), dec3 DECIMAL(5,0), c CHAR(10), c2 CHAR(100), \
     vc VARCHAR(60), vcl VARCHAR(300), bn BINARY(4), vb VARBINARY(20), tt TINYTEXT, tx TEXT, \
     mt MEDIUMTEXT, bl BLOB, lb LONGBLOB, dt DATE, dtm DATETIME, dtm6 DATETIME(6), \
     ts TIMESTAMP(3) NULL, tm TIME, tm3 TIME(3), tm6 TIME(6), yr YEAR, j JSON, \
     e ENUM('a','b','c'), st SET('x','y','z'), bt BIT(12), b1 BIT(1)) ENGINE=InnoDB",
    "INSERT INTO t_all (ti,tiu,si,mi,miu,i,iu,bi,biu,f,d,dec1,dec2,dec3,c,c2,vc,vcl,bn,vb,tt,\
     tx,mt,bl,lb,dt,dtm,dtm6,ts,tm,tm3,tm6,yr,j,e,st,bt,b1) VALUES \
     (-128,255,-32768,-8388608,16777215,-2147483648,4294967295,-9223372036854775808,\
     18446744073709551615,1.5,-2.25,-12345678.99,12345678901234567890.0123456789,-99999,'abc',\
     'pad me','héllo wörld','long text','abcd','\\0\\1\\2','tiny','some text','medium',\
     'blob\\0data','longblob','2024-02-29','2023-12-31 23:59:59','2020-01-01 10:00:00.123456',\
     '2021-06-15 12:30:45.678','-838:59:59','12:34:56.789','-00:00:10.500000',2155,\
     '{\"a\": 1, \"b\": [true, false, null], \"c\": \"str\", \"d\": 1.5, \"nested\": {\"x\": []}}',\
     'b','x,z',b'101010101010',b'1'), \
     (NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,\
     NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,\
     NULL,NULL), \
     (127,1,32767,8388607,1,2147483647,1,9223372036854775807,1,-3.5e10,1e300,99999999.99,\
     -0.0000000001,5,'xyz','z','e','f','wxyz','q','t','u','v','w','x','9999-12-31',\
     '9999-12-31 23:59:59','9999-12-31 23:59:59.999999','2038-01-19 03:14:07.999','838:59:59',\
     '-12:00:00.001','23:59:59.999999',0,'\"just a string\"','c','x,y,z',b'111111111111',b'1')",
    "INSERT INTO t_all (vcl, lb) VALUES (REPEAT('long', 75), REPEAT('0123456789', 2000))",
    "UPDATE t_all SET vc = CONCAT(COALESCE(vc, ''), '!'), dec1 = COALESCE(dec1, 0) + 1 \
     WHERE id <= 2",
    "DELETE FROM t_all WHERE id = 2",
    "BEGIN",
    "INSERT INTO t_all (vc) VALUES ('rolled back')",
    "UPDATE t_all SET ti = 99",
    "ROLLBACK",
    "BEGIN",
    "INSERT INTO t_all (vc) VALUES ('committed')",
    "SAVEPOINT s1",
    "DELETE FROM t_all WHERE id = 1",
    "ROLLBACK TO SAVEPOINT s1",
    "COMMIT",
    "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=MyISAM",
    "INSERT INTO m VALUES (1,'a'),(2,'b'),(3,'c')",
    "UPDATE m SET v = 'bb' WHERE id = 2",
    "DELETE FROM m WHERE id = 3",
    "ALTER TABLE t_all ADD COLUMN extra INT DEFAULT 7",
    "UPDATE t_all SET extra = id * 2 WHERE id > 1",
    "CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(200))",
    "INSERT INTO big SELECT id, REPEAT('p', 150) FROM t_all",
    "UPDATE big SET pad = REPEAT('q', 199)",
    // Multi-table UPDATE and DELETE: row events for each changed table, with whole
    // before and after images (t_all has every column type), across both engines.
    "UPDATE t_all, big SET t_all.extra = big.id + 100, big.pad = 'joined' \
     WHERE t_all.id = big.id AND t_all.id >= 3",
    "UPDATE big JOIN m ON big.id = m.id SET big.pad = CONCAT('j', m.v), m.v = 'jm'",
    "DELETE big, m FROM big JOIN m ON big.id = m.id WHERE m.id = 2",
    // Instant ADD COLUMNs (the one above too): a row stored before them is deleted, its
    // before image holds the added columns' defaults.
    "ALTER TABLE t_all ADD COLUMN extra2 VARCHAR(5) NOT NULL DEFAULT 'e2', ALGORITHM=INSTANT",
    "DELETE FROM t_all WHERE id = 1",
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
    // UPDATE IGNORE / DELETE IGNORE log only the rows they change: a skipped row that
    // moved (its old key deleted before its new one met a duplicate) or whose parent
    // delete was refused leaves no row event, or the replay would differ.
    "CREATE TABLE ig (id INT PRIMARY KEY, u INT, UNIQUE KEY (u)) ENGINE=InnoDB",
    "INSERT INTO ig VALUES (1, 1), (2, 2), (3, 3)",
    "UPDATE IGNORE ig SET id = id + 10, u = u + 1 ORDER BY id",
    "CREATE TABLE igp (id INT PRIMARY KEY) ENGINE=InnoDB",
    "CREATE TABLE igc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES igp (id)) \
     ENGINE=InnoDB",
    "INSERT INTO igp VALUES (1), (2), (3)",
    "INSERT INTO igc VALUES (10, 1), (30, 3)",
    "DELETE IGNORE FROM igp",
    "UPDATE IGNORE igc SET pid = pid + 1",
    "CREATE TABLE igm (id INT PRIMARY KEY, u INT, UNIQUE KEY (u)) ENGINE=MyISAM",
    "INSERT INTO igm VALUES (1, 1), (2, 2), (3, 3)",
    "UPDATE IGNORE igm SET id = id + 10, u = u + 1 ORDER BY id",
    "UPDATE IGNORE ig, igm SET ig.u = 1, igm.u = 9 WHERE ig.id = igm.id",
    "CREATE TABLE gone (a INT)",
    "DROP TABLE gone",
];

const TABLES: &[&str] = &["t_all", "m", "big", "w", "ig", "igp", "igc", "igm"];

fn rows_of(port: u16, table: &str) -> Vec<Vec<String>> {
    let mut c = connect(port, None);
    text_rows(&mut c, &format!("SELECT * FROM bl.{table} ORDER BY 1"))
}

#[test]
fn binlog_replayed_by_mariadb_binlog_gives_the_same_tables() {
    for p in ["mariadbd", "mariadb-binlog", "mariadb"] {
        if !require_program(p, "binlog_replayed_by_mariadb_binlog_gives_the_same_tables") {
            return;
        }
    }
    let strata = TestServer::start_flavor(
        Flavor::Strata,
        &[
            "--log-bin",
            "--binlog-json-format=TEXT",
            "--max-binlog-size=16384",
        ],
    );
    let maria = TestServer::start_flavor(Flavor::MariaDb, &[]);
    {
        let mut c = connect(strata.port, None);
        for s in WORKLOAD {
            c.query_drop(*s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        // A heap statement that fails half way keeps (and logs) its first row.
        assert!(c
            .query_drop("INSERT INTO m VALUES (4, 'd'), (1, 'dup')")
            .is_err());
    }
    let files: Vec<String> = {
        let mut c = connect(strata.port, None);
        text_rows(&mut c, "SHOW BINARY LOGS")
            .into_iter()
            .map(|r| strata.datadir.join(&r[0]).display().to_string())
            .collect()
    };
    assert!(files.len() >= 3, "rotation by max_binlog_size: {files:?}");
    let decoded = Command::new("mariadb-binlog")
        .args(&files)
        .output()
        .expect("run mariadb-binlog");
    assert!(
        decoded.status.success(),
        "mariadb-binlog: {}",
        String::from_utf8_lossy(&decoded.stderr)
    );
    let mut load = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", maria.port), "-uroot"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mariadb");
    {
        use std::io::Write;
        let mut stdin = load.stdin.take().unwrap();
        stdin.write_all(&decoded.stdout).unwrap();
    }
    let out = load.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "replay: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in TABLES {
        let a = rows_of(strata.port, t);
        assert!(!a.is_empty(), "{t} is empty on Strata");
        assert_eq!(a, rows_of(maria.port, t), "table {t}");
    }
    // The rolled-back transaction is nowhere.
    let mut c = connect(maria.port, None);
    let n = text_rows(
        &mut c,
        "SELECT COUNT(*) FROM bl.t_all WHERE vc = 'rolled back'",
    );
    assert_eq!(n[0][0], "0");
}

fn replica_status(c: &mut mysql::Conn) -> std::collections::HashMap<String, String> {
    let rows: Vec<mysql::Row> = c.query("SHOW SLAVE STATUS").unwrap();
    let Some(row) = rows.into_iter().next() else {
        return Default::default();
    };
    let cols = row.columns();
    (0..row.len())
        .map(|i| {
            let v: Option<String> = row.get_opt(i).and_then(|r| r.ok()).unwrap_or(None);
            (cols[i].name_str().to_string(), v.unwrap_or_default())
        })
        .collect()
}

/// Waits until the replica has applied everything up to Strata's current position.
fn wait_caught_up(strata: &TestServer, replica: &TestServer) {
    let mut s = connect(strata.port, None);
    let st = text_rows(&mut s, "SHOW MASTER STATUS");
    let (file, pos) = (st[0][0].clone(), st[0][1].clone());
    let mut r = connect(replica.port, None);
    let start = Instant::now();
    loop {
        let rs = replica_status(&mut r);
        if rs.get("Relay_Master_Log_File") == Some(&file)
            && rs.get("Exec_Master_Log_Pos") == Some(&pos)
        {
            return;
        }
        if start.elapsed() > Duration::from_secs(120) {
            panic!("replica did not catch up to {file}:{pos}: {rs:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn change_master(replica: &TestServer, port: u16, file: &str, pos: &str) {
    let mut r = connect(replica.port, None);
    r.query_drop("STOP SLAVE").unwrap();
    r.query_drop(format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, MASTER_USER='root', \
         MASTER_PASSWORD='', MASTER_LOG_FILE='{file}', MASTER_LOG_POS={pos}, \
         MASTER_USE_GTID=no, MASTER_HEARTBEAT_PERIOD=1, MASTER_CONNECT_RETRY=1"
    ))
    .unwrap();
    r.query_drop("START SLAVE").unwrap();
}

fn sysbench(port: u16, args: &[&str]) {
    let out = Command::new("sysbench")
        .args([
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={port}"),
            "--mysql-user=root",
            "--mysql-password=",
            "--mysql-db=sbtest",
            "--tables=2",
            "--table-size=2000",
            "--threads=4",
            "--mysql-storage-engine=innodb",
        ])
        .args(args)
        .output()
        .expect("run sysbench");
    assert!(
        out.status.success(),
        "sysbench {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn assert_same_tables(strata: &TestServer, replica: &TestServer) {
    for t in ["sbtest1", "sbtest2"] {
        let q = format!("SELECT id, k, c, pad FROM sbtest.{t} ORDER BY id");
        let mut a = connect(strata.port, None);
        let mut b = connect(replica.port, None);
        let (x, y) = (text_rows(&mut a, &q), text_rows(&mut b, &q));
        assert!(!x.is_empty());
        assert!(
            x == y,
            "{t}: {} rows on Strata, {} on the replica",
            x.len(),
            y.len()
        );
    }
}

#[test]
fn a_mariadb_replica_follows_strata_through_sysbench_and_a_restart() {
    for p in ["mariadbd", "sysbench"] {
        if !require_program(
            p,
            "a_mariadb_replica_follows_strata_through_sysbench_and_a_restart",
        ) {
            return;
        }
    }
    let mut strata = TestServer::start_flavor(
        Flavor::Strata,
        &["--log-bin", "--server-id=1", "--binlog-json-format=TEXT"],
    );
    let replica = TestServer::start_flavor(Flavor::MariaDb, &["--server-id=2"]);
    change_master(&replica, strata.port, "binlog.000001", "4");
    {
        let mut s = connect(strata.port, None);
        s.query_drop("CREATE DATABASE sbtest").unwrap();
    }
    sysbench(strata.port, &["oltp_read_write", "prepare"]);
    sysbench(strata.port, &["--time=5", "oltp_read_write", "run"]);
    wait_caught_up(&strata, &replica);
    assert_same_tables(&strata, &replica);
    {
        let mut s = connect(strata.port, None);
        let hosts = text_rows(&mut s, "SHOW REPLICAS");
        assert_eq!(hosts.len(), 1, "{hosts:?}");
        assert_eq!(hosts[0][0], "2");
    }
    // Strata restarts (on a new port): the replica resumes from where it stopped.
    strata.restart();
    let (file, pos) = {
        let mut r = connect(replica.port, None);
        r.query_drop("STOP SLAVE").unwrap();
        let rs = replica_status(&mut r);
        (
            rs["Relay_Master_Log_File"].clone(),
            rs["Exec_Master_Log_Pos"].clone(),
        )
    };
    change_master(&replica, strata.port, &file, &pos);
    sysbench(strata.port, &["--time=3", "oltp_read_write", "run"]);
    wait_caught_up(&strata, &replica);
    assert_same_tables(&strata, &replica);
    let mut r = connect(replica.port, None);
    let rs = replica_status(&mut r);
    assert_eq!(rs["Slave_SQL_Running"], "Yes", "{rs:?}");
    assert_eq!(rs["Last_Error"], "", "{rs:?}");
}

/// `sql_log_bin = 0` keeps a session's changes (rows, DDL, a heap table's rows) out of
/// the binary log, the way mysqldump and replication tools use it; other sessions and
/// the same session after `sql_log_bin = 1` are logged. MySQL's refusals: SET GLOBAL
/// (1228), inside a transaction (1694), `@@global.sql_log_bin` (1238).
#[test]
fn sql_log_bin_off_keeps_a_sessions_changes_out_of_the_binary_log() {
    let strata = TestServer::start_flavor(Flavor::Strata, &["--log-bin"]);
    let mut quiet = connect(strata.port, None);
    let mut other = connect(strata.port, None);
    quiet.query_drop("CREATE DATABASE lb").unwrap();
    quiet.query_drop("USE lb").unwrap();
    other.query_drop("USE lb").unwrap();
    let on: i64 = quiet.query_first("SELECT @@sql_log_bin").unwrap().unwrap();
    assert_eq!(on, 1);
    quiet.query_drop("SET SESSION sql_log_bin = 0").unwrap();
    quiet
        .query_drop("CREATE TABLE hidden_t (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    quiet
        .query_drop("CREATE TABLE hidden_h (id INT PRIMARY KEY) ENGINE=MyISAM")
        .unwrap();
    quiet
        .query_drop("INSERT INTO hidden_t VALUES (1, 'hidden_row')")
        .unwrap();
    quiet.query_drop("INSERT INTO hidden_h VALUES (7)").unwrap();
    quiet.query_drop("START TRANSACTION").unwrap();
    quiet
        .query_drop("UPDATE hidden_t SET v = 'hidden_upd'")
        .unwrap();
    // Rows collected, not dropped: an error after the column definitions would be
    // lost when a result is dropped.
    let err = |c: &mut mysql::Conn, sql: &str| match c.query::<mysql::Row, _>(sql) {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("{sql}: expected an error, got {other:?}"),
    };
    assert_eq!(err(&mut quiet, "SET sql_log_bin = 1"), 1694);
    quiet.query_drop("COMMIT").unwrap();
    assert_eq!(err(&mut quiet, "SET GLOBAL sql_log_bin = 0"), 1228);
    assert_eq!(err(&mut quiet, "SELECT @@global.sql_log_bin"), 1238);
    // Another session is logged while this one is not.
    other
        .query_drop("CREATE TABLE seen_t (id INT PRIMARY KEY)")
        .unwrap();
    other.query_drop("INSERT INTO seen_t VALUES (1)").unwrap();
    // Back on: logged again.
    quiet.query_drop("SET sql_log_bin = DEFAULT").unwrap();
    quiet.query_drop("INSERT INTO seen_t VALUES (2)").unwrap();
    let events: Vec<mysql::Row> = quiet.query("SHOW BINLOG EVENTS").unwrap();
    let text: Vec<String> = events
        .iter()
        .map(|r| {
            (0..r.len())
                .map(|i| match r.as_ref(i) {
                    Some(mysql::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                    Some(v) => format!("{v:?}"),
                    None => String::new(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let all = text.join("\n");
    assert!(
        !all.contains("hidden"),
        "logged while sql_log_bin = 0:\n{all}"
    );
    assert!(all.contains("CREATE TABLE seen_t"), "{all}");
    let seen_rows = text.iter().filter(|l| l.contains("Write_rows")).count();
    assert_eq!(seen_rows, 2, "the two inserts into seen_t:\n{all}");
}
