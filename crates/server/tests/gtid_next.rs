//! `SET gtid_next` and `SET @@GLOBAL.gtid_purged` for clients (issue #17), as MySQL 8,
//! on a server with the binary log: a transaction under a foreign `uuid:N` is logged
//! under it (SHOW BINLOG EVENTS shows `SET @@SESSION.GTID_NEXT= '…'`) and joins
//! `gtid_executed`; one already executed is skipped (its row is not inserted); after
//! the commit a statement is 1837 until gtid_next is set again; the errors 1228, 1231,
//! 1766, 1782, 1790, 3173 and 1227; a second session setting an owned GTID waits for
//! the owner and then skips; a closed connection frees what it owned; `gtid_purged`
//! with and without `+` (3546) survives a restart; and a `mysqlbinlog`-style script
//! (SET GTID_NEXT before each transaction) replays into a fresh server, twice without
//! a duplicate. Without the binary log (gtid_mode OFF) a GTID is 1781, ANONYMOUS is
//! accepted and `gtid_purged` is 1235. (`mariadb-binlog` output cannot be replayed into Strata: its row
//! events are `BINLOG '…'` statements, which Strata does not run; replication.rs
//! replays it into MariaDB.)

use crate::common;

use common::dump::text_rows;
use common::{connect, Flavor, TestServer};
use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

const F: &str = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
const G: &str = "11111111-2222-3333-4444-555555555555";
const H: &str = "99999999-8888-7777-6666-555555555555";

fn err(c: &mut mysql::Conn, sql: &str) -> (u16, String) {
    match c.query::<mysql::Row, _>(sql) {
        Err(mysql::Error::MySqlError(e)) => (e.code, e.message),
        other => panic!("{sql}: expected an error, got {other:?}"),
    }
}

fn one(c: &mut mysql::Conn, sql: &str) -> String {
    text_rows(c, sql)
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or_else(|| panic!("{sql}: no row"))
}

fn executed_has(c: &mut mysql::Conn, gtid: &str) -> bool {
    one(
        c,
        &format!("SELECT GTID_SUBSET('{gtid}', @@GLOBAL.gtid_executed)"),
    ) == "1"
}

fn ids(c: &mut mysql::Conn) -> Vec<String> {
    text_rows(c, "SELECT id FROM gn.t ORDER BY id")
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
}

#[test]
fn gtid_next_for_clients_as_mysql_8() {
    let mut server = TestServer::start(&["--log-bin"]);
    if server.flavor != Flavor::Strata {
        eprintln!("NOTE: gtid_next runs against Strata only (MariaDB's GTIDs differ)");
        return;
    }
    let mut a = connect(server.port, None);
    a.query_drop("CREATE DATABASE gn").unwrap();
    a.query_drop("CREATE TABLE gn.t (id INT PRIMARY KEY)")
        .unwrap();
    assert_eq!(one(&mut a, "SELECT @@gtid_next"), "AUTOMATIC");
    assert_eq!(one(&mut a, "SHOW VARIABLES LIKE 'gtid_next'"), "gtid_next");
    assert_eq!(err(&mut a, "SET GLOBAL gtid_next = 'AUTOMATIC'").0, 1228);
    let (code, msg) = err(&mut a, "SET gtid_next = 'ANONYMOUS'");
    assert_eq!(code, 1782, "{msg}");
    assert_eq!(
        msg,
        "@@SESSION.GTID_NEXT cannot be set to ANONYMOUS when @@GLOBAL.GTID_MODE = ON."
    );
    assert_eq!(err(&mut a, "SET gtid_next = 'garbage'").0, 1231);
    assert_eq!(err(&mut a, &format!("SET gtid_next = '{F}:0'")).0, 1231);

    // A transaction under a foreign GTID.
    a.query_drop(format!("SET @@SESSION.GTID_NEXT= '{}:5'", F.to_uppercase()))
        .unwrap();
    assert_eq!(one(&mut a, "SELECT @@gtid_next"), format!("{F}:5"));
    let (code, msg) = err(&mut a, &format!("SET gtid_next = '{F}:6'"));
    assert_eq!(code, 1790);
    assert_eq!(
        msg,
        format!("@@SESSION.GTID_NEXT cannot be changed by a client that owns a GTID. The client owns {F}:5. Ownership is released on COMMIT or ROLLBACK.")
    );
    a.query_drop("BEGIN").unwrap();
    a.query_drop("INSERT INTO gn.t VALUES (1)").unwrap();
    let (code, msg) = err(&mut a, "SET gtid_next = 'AUTOMATIC'");
    assert_eq!(code, 1766);
    assert_eq!(
        msg,
        "The system variable gtid_next cannot be set when there is an ongoing transaction."
    );
    assert_eq!(err(&mut a, "CREATE TABLE gn.x (a INT)").0, 1778);
    let (code, msg) = err(
        &mut a,
        &format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{F}:1-5', 1)"),
    );
    assert_eq!(code, 3173);
    assert_eq!(
        msg,
        format!("The client holds ownership of the GTID {F}:5. Therefore, WAIT_FOR_EXECUTED_GTID_SET cannot wait for this GTID.")
    );
    a.query_drop("COMMIT").unwrap();
    assert!(executed_has(&mut a, &format!("{F}:5")));
    let events: Vec<String> = text_rows(&mut a, "SHOW BINLOG EVENTS")
        .into_iter()
        .map(|r| r[5].clone())
        .collect();
    let at = events
        .iter()
        .position(|i| *i == format!("SET @@SESSION.GTID_NEXT= '{F}:5'"))
        .unwrap_or_else(|| panic!("no GTID event for {F}:5: {events:?}"));
    assert_eq!(events[at + 1], "BEGIN", "{events:?}");

    // After the commit: the GTID still shows, a new transaction is 1837.
    assert_eq!(one(&mut a, "SELECT @@gtid_next"), format!("{F}:5"));
    let (code, msg) = err(&mut a, "INSERT INTO gn.t VALUES (2)");
    assert_eq!(code, 1837);
    assert_eq!(
        msg,
        format!("When @@SESSION.GTID_NEXT is set to a GTID, you must explicitly set it to a different value after a COMMIT or ROLLBACK. Please check GTID_NEXT variable manual page for detailed explanation. Current @@SESSION.GTID_NEXT is '{F}:5'.")
    );
    assert_eq!(one(&mut a, "SELECT 1"), "1");

    // Executed already: the transaction is skipped, no row, no error.
    a.query_drop(format!("SET gtid_next = '{F}:5'")).unwrap();
    a.query_drop("INSERT INTO gn.t VALUES (3)").unwrap();
    assert_eq!(ids(&mut a), ["1"]);
    assert_eq!(err(&mut a, "INSERT INTO gn.t VALUES (3)").0, 1837);

    // DDL under a GTID; an empty transaction; a rolled-back one.
    a.query_drop(format!("SET gtid_next = '{F}:7'")).unwrap();
    a.query_drop("CREATE TABLE gn.u (a INT)").unwrap();
    assert!(executed_has(&mut a, &format!("{F}:7")));
    a.query_drop(format!("SET gtid_next = '{F}:8'")).unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("COMMIT").unwrap();
    assert!(executed_has(&mut a, &format!("{F}:8")));
    a.query_drop(format!("SET gtid_next = '{F}:9'")).unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("INSERT INTO gn.t VALUES (9)").unwrap();
    a.query_drop("ROLLBACK").unwrap();
    assert!(!executed_has(&mut a, &format!("{F}:9")));
    assert_eq!(err(&mut a, "INSERT INTO gn.t VALUES (9)").0, 1837);
    a.query_drop("SET gtid_next = 'AUTOMATIC'").unwrap();
    a.query_drop("INSERT INTO gn.t VALUES (10)").unwrap();
    assert_eq!(ids(&mut a), ["1", "10"]);
    let uuid = one(&mut a, "SELECT @@server_uuid");
    let executed = one(&mut a, "SELECT @@GLOBAL.gtid_executed");
    assert!(
        executed.contains(&format!("{F}:5:7-8")) && executed.contains(&uuid),
        "{executed}"
    );

    // Another session owns F:20: a second one waits until it commits, then skips.
    let mut b = connect(server.port, None);
    b.query_drop(format!("SET gtid_next = '{F}:20'")).unwrap();
    let port = server.port;
    let waiter = std::thread::spawn(move || {
        let mut c = connect(port, None);
        let t = Instant::now();
        c.query_drop(format!("SET gtid_next = '{F}:20'")).unwrap();
        let waited = t.elapsed();
        c.query_drop("INSERT INTO gn.t VALUES (21)").unwrap();
        waited
    });
    std::thread::sleep(Duration::from_millis(400));
    b.query_drop("INSERT INTO gn.t VALUES (20)").unwrap();
    let waited = waiter.join().unwrap();
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert_eq!(ids(&mut a), ["1", "10", "20"]);

    // A closed connection frees the GTID it owned.
    {
        let mut d = connect(server.port, None);
        d.query_drop(format!("SET gtid_next = '{F}:30'")).unwrap();
    }
    let mut e = connect(server.port, None);
    let t = Instant::now();
    e.query_drop(format!("SET gtid_next = '{F}:30'")).unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    e.query_drop("INSERT INTO gn.t VALUES (30)").unwrap();
    assert_eq!(ids(&mut a), ["1", "10", "20", "30"]);
    // COM_RESET_CONNECTION too.
    e.query_drop(format!("SET gtid_next = '{F}:31'")).unwrap();
    e.reset().unwrap();
    assert_eq!(one(&mut e, "SELECT @@gtid_next"), "AUTOMATIC");
    a.query_drop(format!("SET gtid_next = '{F}:31'")).unwrap();
    a.query_drop("INSERT INTO gn.t VALUES (31)").unwrap();
    a.query_drop("SET gtid_next = 'AUTOMATIC'").unwrap();

    // Privileges: SUPER, SYSTEM_VARIABLES_ADMIN, SESSION_VARIABLES_ADMIN or
    // REPLICATION_APPLIER.
    a.query_drop("CREATE USER gn_plain@'%'").unwrap();
    let plain_opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(server.port)
        .user(Some("gn_plain"))
        .prefer_socket(false);
    let mut plain = mysql::Conn::new(plain_opts.clone()).unwrap();
    assert_eq!(
        err(&mut plain, &format!("SET gtid_next = '{F}:40'")).0,
        1227
    );
    assert_eq!(
        err(&mut plain, &format!("SET GLOBAL gtid_purged = '+{G}:1'")).0,
        1227
    );
    a.query_drop("GRANT SESSION_VARIABLES_ADMIN ON *.* TO gn_plain@'%'")
        .unwrap();
    drop(plain);
    let mut plain = mysql::Conn::new(plain_opts).unwrap();
    plain.query_drop("SET gtid_next = 'AUTOMATIC'").unwrap();
    drop(plain);

    // gtid_purged: '+' adds a set disjoint from gtid_executed; without '+' the new
    // value must contain the old one.
    assert_eq!(one(&mut a, "SELECT @@GLOBAL.gtid_purged"), "");
    a.query_drop(format!("SET @@GLOBAL.gtid_purged = '+{G}:1-5'"))
        .unwrap();
    assert_eq!(
        one(&mut a, "SELECT @@GLOBAL.gtid_purged"),
        format!("{G}:1-5")
    );
    assert!(executed_has(&mut a, &format!("{G}:1-5")));
    let (code, msg) = err(&mut a, &format!("SET @@GLOBAL.gtid_purged = '+{G}:3'"));
    assert_eq!(code, 3546);
    assert_eq!(msg, "@@GLOBAL.GTID_PURGED cannot be changed: the added gtid set must not overlap with @@GLOBAL.GTID_EXECUTED");
    let (code, msg) = err(&mut a, &format!("SET @@GLOBAL.gtid_purged = '{H}:1'"));
    assert_eq!(code, 3546);
    assert_eq!(
        msg,
        "@@GLOBAL.GTID_PURGED cannot be changed: the new value must be a superset of the old value"
    );
    assert_eq!(
        err(&mut a, &format!("SET @@GLOBAL.gtid_purged = '+{F}:5'")).0,
        3546
    );
    assert_eq!(err(&mut a, "SET @@GLOBAL.gtid_purged = 'nonsense'").0, 1772);
    a.query_drop(format!("SET @@GLOBAL.gtid_purged = '{G}:1-5,{H}:1-2'"))
        .unwrap();
    // A transaction under a purged GTID is skipped like any executed one.
    a.query_drop(format!("SET gtid_next = '{H}:2'")).unwrap();
    a.query_drop("INSERT INTO gn.t VALUES (50)").unwrap();
    a.query_drop("SET gtid_next = 'AUTOMATIC'").unwrap();
    assert!(!ids(&mut a).contains(&"50".to_string()));
    let purged = one(&mut a, "SELECT @@GLOBAL.gtid_purged");
    let executed = one(&mut a, "SELECT @@GLOBAL.gtid_executed");
    drop((a, b, e));

    // Both survive a restart (and FLUSH BINARY LOGS before it).
    {
        let mut c = connect(server.port, None);
        c.query_drop("FLUSH BINARY LOGS").unwrap();
    }
    server.restart();
    let mut a = connect(server.port, None);
    assert_eq!(one(&mut a, "SELECT @@GLOBAL.gtid_purged"), purged);
    assert_eq!(one(&mut a, "SELECT @@GLOBAL.gtid_executed"), executed);
    assert!(purged.contains(G) && purged.contains(H), "{purged}");
    assert_eq!(ids(&mut a), ["1", "10", "20", "30", "31"]);
    // RESET MASTER forgets them.
    a.query_drop("RESET MASTER").unwrap();
    assert_eq!(one(&mut a, "SELECT @@GLOBAL.gtid_purged"), "");
    server.restart();
    let mut a = connect(server.port, None);
    assert_eq!(one(&mut a, "SELECT @@GLOBAL.gtid_purged"), "");
    assert_eq!(one(&mut a, "SELECT @@GLOBAL.gtid_executed"), "");
}

/// What `mysqlbinlog` prints for a GTID server's log, statement by statement.
fn mysqlbinlog_script() -> Vec<String> {
    vec![
        format!("SET @@SESSION.GTID_NEXT= '{F}:1'/*!*/"),
        "CREATE DATABASE rp".into(),
        format!("SET @@SESSION.GTID_NEXT= '{F}:2'/*!*/"),
        "CREATE TABLE rp.t (id INT PRIMARY KEY, v VARCHAR(10))".into(),
        format!("SET @@SESSION.GTID_NEXT= '{F}:3'/*!*/"),
        "BEGIN".into(),
        "INSERT INTO rp.t VALUES (1, 'a'), (2, 'b')".into(),
        "COMMIT/*!*/".into(),
        format!("SET @@SESSION.GTID_NEXT= '{F}:4'/*!*/"),
        "BEGIN".into(),
        "UPDATE rp.t SET v = 'c' WHERE id = 2".into(),
        "COMMIT/*!*/".into(),
        "SET @@SESSION.GTID_NEXT= 'AUTOMATIC' /* added by mysqlbinlog */ /*!*/".into(),
    ]
}

#[test]
fn a_mysqlbinlog_script_replays_once() {
    let server = TestServer::start(&["--log-bin"]);
    if server.flavor != Flavor::Strata {
        return;
    }
    let mut c = connect(server.port, None);
    for _ in 0..2 {
        for s in mysqlbinlog_script() {
            c.query_drop(&s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }
    assert_eq!(
        text_rows(&mut c, "SELECT id, v FROM rp.t ORDER BY id"),
        [["1", "a"], ["2", "c"]]
    );
    assert_eq!(
        one(&mut c, "SELECT @@GLOBAL.gtid_executed"),
        format!("{F}:1-4")
    );
}

#[test]
fn without_the_binary_log_gtid_mode_is_off() {
    let server = TestServer::start(&[]);
    if server.flavor != Flavor::Strata {
        return;
    }
    let mut c = connect(server.port, None);
    let (code, msg) = err(&mut c, &format!("SET gtid_next = '{F}:1'"));
    assert_eq!(code, 1781);
    assert_eq!(
        msg,
        "@@SESSION.GTID_NEXT cannot be set to UUID:NUMBER when @@GLOBAL.GTID_MODE = OFF."
    );
    c.query_drop("SET gtid_next = 'anonymous'").unwrap();
    assert_eq!(one(&mut c, "SELECT @@gtid_next"), "ANONYMOUS");
    c.query_drop("CREATE DATABASE gm").unwrap();
    c.query_drop("CREATE TABLE gm.t (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("INSERT INTO gm.t VALUES (1)").unwrap();
    c.query_drop("INSERT INTO gm.t VALUES (2)").unwrap();
    assert_eq!(one(&mut c, "SELECT COUNT(*) FROM gm.t"), "2");
    assert_eq!(
        err(&mut c, &format!("SET @@GLOBAL.gtid_purged = '+{G}:1'")).0,
        1235
    );
}
