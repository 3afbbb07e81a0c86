//! GTID sets on a server with the binary log (issue #17): GTID_SUBTRACT and GTID_SUBSET
//! over the server's own `@@gtid_executed`, and WAIT_FOR_EXECUTED_GTID_SET across
//! connections: 0 at once for what is executed, 1 when the timeout passes (a fraction of
//! a second), 0 as soon as another connection commits the awaited transaction (whose row
//! the waiter then reads), no lock held while it waits (DDL on a table goes on), and
//! KILL QUERY ends the wait with 1317. The functions' text rules are in
//! `tests/slt/gtid_functions.slt`; without a binary log the wait is 1788 (there too).

use crate::common;

use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

fn executed(c: &mut mysql::Conn) -> String {
    c.query_first::<String, _>("SELECT @@GLOBAL.gtid_executed")
        .unwrap()
        .unwrap()
}

#[test]
fn wait_for_executed_gtid_set_across_connections() {
    let server = common::TestServer::start(&["--log-bin", "--server-id=3"]);
    if server.flavor != common::Flavor::Strata {
        eprintln!("NOTE: gtid_wait runs against Strata only (MariaDB has no such functions)");
        return;
    }
    let mut a = common::connect(server.port, None);
    let mut b = common::connect(server.port, None);
    a.query_drop("CREATE DATABASE gw").unwrap();
    a.query_drop("CREATE TABLE gw.t (id INT PRIMARY KEY)")
        .unwrap();
    a.query_drop("INSERT INTO gw.t VALUES (1)").unwrap();
    let uuid: String = a.query_first("SELECT @@server_uuid").unwrap().unwrap();
    let now = executed(&mut a);
    let last: u64 = now
        .rsplit(['-', ':'])
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("gtid_executed {now}"));
    assert_eq!(now, format!("{uuid}:1-{last}"));

    // The set functions over the server's own set.
    let got: Option<String> = a
        .query_first(format!(
            "SELECT GTID_SUBTRACT(@@GLOBAL.gtid_executed, '{}:1')",
            uuid.to_uppercase()
        ))
        .unwrap();
    assert_eq!(got, Some(format!("{uuid}:2-{last}")));
    let got: Option<i64> = a
        .query_first(format!(
            "SELECT GTID_SUBSET('{uuid}:{last}', @@GLOBAL.gtid_executed)"
        ))
        .unwrap();
    assert_eq!(got, Some(1));

    // Executed already: 0 at once, with or without a timeout.
    let t = Instant::now();
    let got: Option<i64> = a
        .query_first(format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{now}')"))
        .unwrap();
    assert_eq!(got, Some(0));
    let got: Option<i64> = a
        .query_first(format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{now}', 5)"))
        .unwrap();
    assert_eq!(got, Some(0));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());

    // Not executed: 1 once a fractional timeout passes.
    let next = format!("{uuid}:{}", last + 1);
    let t = Instant::now();
    let got: Option<i64> = a
        .query_first(format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{next}', 0.3)"))
        .unwrap();
    assert_eq!(got, Some(1));
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(290) && waited < Duration::from_secs(3),
        "{waited:?}"
    );

    // A waiter with no limit returns 0 when b commits the next transaction, and then
    // reads its row. Meanwhile the waiter holds no lock: b's DDL on the table goes on.
    let port = server.port;
    let wait_for = next.clone();
    let waiter = std::thread::spawn(move || {
        let mut w = common::connect(port, None);
        let t = Instant::now();
        let got: Option<i64> = w
            .query_first(format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{wait_for}')"))
            .unwrap();
        let row: Option<i64> = w.query_first("SELECT id FROM gw.t WHERE id = 2").unwrap();
        (got, row, t.elapsed())
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!waiter.is_finished(), "the wait returned before the commit");
    b.query_drop("INSERT INTO gw.t VALUES (2)").unwrap();
    let (got, row, took) = waiter.join().unwrap();
    assert_eq!(got, Some(0));
    assert_eq!(
        row,
        Some(2),
        "the waiter did not see the transaction it waited for"
    );
    assert!(took >= Duration::from_millis(250), "{took:?}");
    assert_eq!(executed(&mut b), format!("{uuid}:1-{}", last + 1));

    // KILL QUERY ends a wait that has no limit with 1317; the connection goes on.
    let far = format!("{uuid}:{}", last + 1000);
    let mut w = common::connect(port, None);
    let id: u64 = w.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    let killed = std::thread::spawn(move || {
        let r = w.query_first::<i64, _>(format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{far}')"));
        (r, w)
    });
    std::thread::sleep(Duration::from_millis(300));
    // While it waits, DDL goes on: the wait takes no lock (not even the global one).
    b.query_drop("ALTER TABLE gw.t ADD COLUMN c INT").unwrap();
    a.query_drop(format!("KILL QUERY {id}")).unwrap();
    let (r, mut w) = killed.join().unwrap();
    match r {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1317, "{e:?}"),
        other => panic!("expected 1317, got {other:?}"),
    }
    let one: Option<i64> = w.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));

    // A malformed set is checked once gtid_mode is known to be ON.
    // (Read as a row: an error after the result's metadata is only seen by reading.)
    let e = a
        .query_first::<i64, _>("SELECT WAIT_FOR_EXECUTED_GTID_SET('nonsense', 1)")
        .unwrap_err();
    match e {
        mysql::Error::MySqlError(e) => {
            assert_eq!(e.code, 1772);
            assert_eq!(e.message, "Malformed GTID set specification 'nonsense'.");
        }
        other => panic!("{other:?}"),
    }
}
