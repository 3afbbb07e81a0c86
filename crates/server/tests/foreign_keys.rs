//! Foreign keys under concurrency and crashes (`crates/sql/src/constraints/`):
//!
//! * **no orphan from a race**: one connection inserts children of a parent row inside an
//!   open transaction while another deletes that parent. The parent check is a
//!   shared-locking read, so the delete waits for the inserting transaction; once it
//!   commits, the delete is refused (1451). Run the other way round (the delete first,
//!   uncommitted), the insert waits and then fails (1452). Either way no child is left
//!   without its parent.
//! * **crash mid-cascade**: a parent with thousands of children under ON DELETE CASCADE is
//!   deleted and the server SIGKILLed while the delete runs (or just after). After
//!   restart parent and children agree: either the parent and all its children are there,
//!   or neither.

use crate::common;

use common::{connect, TestServer};
use mysql::prelude::Queryable;
use std::time::Duration;

fn setup(c: &mut mysql::Conn, children: i64) {
    c.query_drop("CREATE DATABASE fk").unwrap();
    c.query_drop("USE fk").unwrap();
    c.query_drop("CREATE TABLE p (id INT NOT NULL PRIMARY KEY) ENGINE=InnoDB")
        .unwrap();
    c.query_drop(
        "CREATE TABLE ch (id INT NOT NULL PRIMARY KEY, pid INT, \
         FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE) ENGINE=InnoDB",
    )
    .unwrap();
    c.query_drop(
        "CREATE TABLE r (id INT NOT NULL PRIMARY KEY, pid INT, \
         FOREIGN KEY (pid) REFERENCES p (id)) ENGINE=InnoDB",
    )
    .unwrap();
    c.query_drop("INSERT INTO p VALUES (1), (2)").unwrap();
    let mut id = 0;
    while id < children {
        let n = (children - id).min(500);
        let values: Vec<String> = (id..id + n).map(|i| format!("({i}, 1)")).collect();
        c.query_drop(format!("INSERT INTO ch VALUES {}", values.join(",")))
            .unwrap();
        id += n;
    }
}

fn code(e: &mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(m) => m.code,
        other => panic!("not a server error: {other}"),
    }
}

#[test]
fn a_concurrent_delete_of_the_parent_cannot_leave_an_orphan() {
    let server = TestServer::start(&[]);
    let mut a = connect(server.port, None);
    setup(&mut a, 0);
    let mut b = connect(server.port, Some("fk"));

    // Insert first: the delete waits for the inserting transaction, then sees the child.
    a.query_drop("BEGIN").unwrap();
    a.query_drop("INSERT INTO r VALUES (1, 2)").unwrap();
    let port = server.port;
    let deleter = std::thread::spawn(move || {
        let mut b2 = connect(port, Some("fk"));
        b2.query_drop("DELETE FROM p WHERE id = 2")
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !deleter.is_finished(),
        "the delete must wait for the inserting transaction"
    );
    a.query_drop("COMMIT").unwrap();
    let e = deleter.join().unwrap().unwrap_err();
    assert_eq!(code(&e), 1451, "{e}");

    // Delete first (uncommitted): the insert waits, then finds no parent.
    b.query_drop("DELETE FROM r").unwrap();
    b.query_drop("BEGIN").unwrap();
    b.query_drop("DELETE FROM p WHERE id = 2").unwrap();
    let inserter = std::thread::spawn(move || {
        let mut a2 = connect(port, Some("fk"));
        a2.query_drop("INSERT INTO r VALUES (2, 2)")
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !inserter.is_finished(),
        "the insert must wait for the deleting transaction"
    );
    b.query_drop("COMMIT").unwrap();
    let e = inserter.join().unwrap().unwrap_err();
    assert_eq!(code(&e), 1452, "{e}");

    let orphans: i64 = a
        .query_first("SELECT COUNT(*) FROM fk.r WHERE pid NOT IN (SELECT id FROM fk.p)")
        .unwrap()
        .unwrap();
    assert_eq!(orphans, 0);
}

#[test]
fn a_crash_during_a_cascade_leaves_parent_and_children_agreeing() {
    const CHILDREN: i64 = 20_000;
    let mut server = TestServer::start(&[]);
    let mut c = connect(server.port, None);
    setup(&mut c, CHILDREN);
    drop(c);
    for delay_ms in [5u64, 40, 150] {
        let port = server.port;
        let worker = std::thread::spawn(move || {
            let mut c = connect(port, Some("fk"));
            c.query_drop("DELETE FROM p WHERE id = 1").is_ok()
        });
        std::thread::sleep(Duration::from_millis(delay_ms));
        server.crash();
        let acknowledged = worker.join().unwrap_or(false);
        server.start_again();
        let mut c = connect(server.port, Some("fk"));
        let parent: i64 = c
            .query_first("SELECT COUNT(*) FROM p WHERE id = 1")
            .unwrap()
            .unwrap();
        let children: i64 = c
            .query_first("SELECT COUNT(*) FROM ch WHERE pid = 1")
            .unwrap()
            .unwrap();
        assert!(
            (parent == 1 && children == CHILDREN) || (parent == 0 && children == 0),
            "after a crash {delay_ms} ms into the cascade: parent {parent}, children {children}"
        );
        if acknowledged {
            assert_eq!(parent, 0, "an acknowledged delete was lost");
        }
        if parent == 0 {
            // Put the family back for the next round.
            c.query_drop("INSERT INTO p VALUES (1)").unwrap();
            let values: Vec<String> = (0..CHILDREN).map(|i| format!("({i}, 1)")).collect();
            for chunk in values.chunks(500) {
                c.query_drop(format!("INSERT INTO ch VALUES {}", chunk.join(",")))
                    .unwrap();
            }
        }
        let checked: Vec<(String, String, String, String)> = c.query("CHECK TABLE p, ch").unwrap();
        assert!(checked.iter().all(|r| r.3 == "OK"), "{checked:?}");
    }
}
