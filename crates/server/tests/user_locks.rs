//! User-level locks across connections (GET_LOCK family, issue #14): a second
//! connection waits for a held lock and gets 0 when its timeout passes, gets the lock
//! once the holder releases it or disconnects, KILL QUERY ends its wait, IS_USED_LOCK
//! names the holder, and two connections each waiting for the other's lock is a
//! deadlock (3058) for one of them. Also run against MariaDB (`STRATA_TEST_ORACLE`),
//! except the deadlock, which MariaDB does not detect for user locks.

use crate::common;

use common::Flavor;
use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

fn my_id(c: &mut mysql::Conn) -> u64 {
    c.query_first("SELECT CONNECTION_ID()").unwrap().unwrap()
}

#[test]
fn waits_time_out_and_locks_pass_on_release_and_disconnect() {
    let server = common::TestServer::start(&[]);
    let mut a = common::connect(server.port, None);
    let mut b = common::connect(server.port, None);
    let a_id = my_id(&mut a);
    let got: Option<i64> = a.query_first("SELECT GET_LOCK('job', 10)").unwrap();
    assert_eq!(got, Some(1));
    let owner: Option<u64> = b.query_first("SELECT IS_USED_LOCK('job')").unwrap();
    assert_eq!(owner, Some(a_id));
    // b's timeout passes while a holds it: 0, not an error.
    let t = Instant::now();
    let got: Option<i64> = b.query_first("SELECT GET_LOCK('job', 0.3)").unwrap();
    assert_eq!(got, Some(0));
    assert!(
        t.elapsed() >= Duration::from_millis(250),
        "{:?}",
        t.elapsed()
    );
    // b waits; a's RELEASE_LOCK lets it in.
    let waiter = std::thread::spawn(move || {
        let got: Option<i64> = b.query_first("SELECT GET_LOCK('job', 20)").unwrap();
        (got, b)
    });
    std::thread::sleep(Duration::from_millis(300));
    let released: Option<i64> = a.query_first("SELECT RELEASE_LOCK('job')").unwrap();
    assert_eq!(released, Some(1));
    let (got, mut b) = waiter.join().unwrap();
    assert_eq!(got, Some(1));
    // a is not the holder now.
    let released: Option<i64> = a.query_first("SELECT RELEASE_LOCK('job')").unwrap();
    assert_eq!(released, Some(0));
    // A disconnect releases its locks.
    let waiter = std::thread::spawn(move || {
        let got: Option<i64> = a.query_first("SELECT GET_LOCK('job', 20)").unwrap();
        got
    });
    std::thread::sleep(Duration::from_millis(300));
    drop(b.query_drop("DO 1"));
    drop(b);
    assert_eq!(waiter.join().unwrap(), Some(1));
}

#[test]
fn kill_query_ends_a_get_lock_wait() {
    let server = common::TestServer::start(&[]);
    let mut holder = common::connect(server.port, None);
    let mut admin = common::connect(server.port, None);
    let mut waiter = common::connect(server.port, None);
    let _: Option<i64> = holder.query_first("SELECT GET_LOCK('k', 1)").unwrap();
    let id = my_id(&mut waiter);
    let t = std::thread::spawn(move || {
        let r: mysql::Result<Option<i64>> = waiter.query_first("SELECT GET_LOCK('k', 60)");
        let one: Option<i64> = waiter.query_first("SELECT 1").unwrap();
        (r, one)
    });
    std::thread::sleep(Duration::from_millis(400));
    admin.query_drop(format!("KILL QUERY {id}")).unwrap();
    let (r, one) = t.join().unwrap();
    // MySQL fails the statement (1317); MariaDB returns NULL. Either way it stops waiting.
    match r {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1317),
        Ok(v) => assert_eq!(v, None, "a killed GET_LOCK gave {v:?}"),
        Err(e) => panic!("{e}"),
    }
    assert_eq!(one, Some(1));
}

#[test]
fn crossed_waits_are_a_deadlock_for_one_side() {
    if Flavor::from_env() == Flavor::MariaDb {
        return; // MariaDB lets both wait until their timeouts.
    }
    let server = common::TestServer::start(&[]);
    let mut a = common::connect(server.port, None);
    let mut b = common::connect(server.port, None);
    let _: Option<i64> = a.query_first("SELECT GET_LOCK('l1', 1)").unwrap();
    let _: Option<i64> = b.query_first("SELECT GET_LOCK('l2', 1)").unwrap();
    // Each side asks for the other's lock; the one told 3058 lets its own lock go, so
    // the other gets what it waited for.
    let side = |mut c: mysql::Conn, want: &'static str| {
        std::thread::spawn(move || {
            let r: mysql::Result<Option<i64>> =
                c.query_first(format!("SELECT GET_LOCK('{want}', 20)"));
            let code = match &r {
                Err(mysql::Error::MySqlError(e)) => Some(e.code),
                _ => None,
            };
            if code.is_some() {
                let _: Option<i64> = c.query_first("SELECT RELEASE_ALL_LOCKS()").unwrap();
            }
            (code, r.ok().flatten())
        })
    };
    let ta = side(a, "l2");
    std::thread::sleep(Duration::from_millis(300));
    let tb = side(b, "l1");
    let (ra, rb) = (ta.join().unwrap(), tb.join().unwrap());
    let outcomes = [ra, rb];
    assert_eq!(
        outcomes.iter().filter(|o| o.0 == Some(3058)).count(),
        1,
        "{outcomes:?}"
    );
    assert_eq!(
        outcomes.iter().filter(|o| o.1 == Some(1)).count(),
        1,
        "{outcomes:?}"
    );
}
