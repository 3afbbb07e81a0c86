//! The log on real files: transactions written and read back, rotation by size and by
//! FLUSH, the index, PURGE and RESET, restart after a crash's torn tail, group sync.

use super::*;
use std::time::Duration;
use strata_types::{Collation, ColumnDef, DataType, Value};

fn def() -> Arc<TableDef> {
    let col = |name: &str, t: DataType| ColumnDef {
        name: name.into(),
        data_type: t,
        nullable: true,
        default: None,
        auto_increment: false,
        on_update_now: false,
        collation: Collation::Binary,
        members: vec![],
        generated: None,
        comment: String::new(),
        real_unsigned: false,
        invisible: Default::default(),
    };
    Arc::new(TableDef {
        options: Default::default(),
        db: "test".into(),
        name: "t".into(),
        engine: "btree".into(),
        columns: vec![
            col("id", DataType::Int { unsigned: false }),
            col("b", DataType::Blob(65535)),
        ],
        indexes: vec![],
        auto_increment_start: 1,
        comment: String::new(),
        foreign_keys: vec![],
        checks: vec![],
        instant: None,
        default_collation: Default::default(),
    })
}

fn opts(dir: &Path, max_size: u64, sync: u32) -> Options {
    Options {
        datadir: dir.to_path_buf(),
        basename: "binlog".into(),
        server_id: 7,
        max_size,
        checksum: true,
        sync,
        format: Default::default(),
    }
}

fn insert(b: &Binlog, id: i64, payload: usize) {
    let cx = QueryContext {
        db: "test".into(),
        ..Default::default()
    };
    let changes = vec![(
        def(),
        RowChange::Insert(vec![Value::Int(id), Value::Bytes(vec![b'x'; payload])]),
    )];
    let xid = b.new_xid();
    b.commit_ordered(
        &Entry::Rows {
            cx: &cx,
            changes: &changes,
            xid: Some(xid),
        },
        || Ok(()),
    )
    .unwrap();
}

/// The engines' commits run in the order the transactions are in the log, whatever
/// the threads' timing; and recovery finds exactly the xids that were written, also
/// after a restart (whose xids never repeat the earlier ones).
#[test]
fn ordered_commits_and_xids_found_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let uuid = gtid::random_uuid();
    let b = Arc::new(Binlog::open(opts(dir.path(), 1 << 30, 1), uuid).unwrap());
    let order = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (b, order) = (b.clone(), order.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..40 {
                    let cx = QueryContext::default();
                    let changes = vec![(
                        def(),
                        RowChange::Insert(vec![Value::Int(t * 100 + i), Value::Null]),
                    )];
                    let xid = b.new_xid();
                    b.commit_ordered(
                        &Entry::Rows {
                            cx: &cx,
                            changes: &changes,
                            xid: Some(xid),
                        },
                        || {
                            order.lock().push(xid);
                            Ok(())
                        },
                    )
                    .unwrap();
                    mine.push(xid);
                }
                mine
            })
        })
        .collect();
    let mut written: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    // The XID events of the file, in file order, are the order the commits ran in.
    let name = b.current().0;
    let in_file: Vec<u64> = b
        .show_events(Some(&name), 4, 0, None)
        .unwrap()
        .iter()
        .filter(|e| e.event_type == "Xid")
        .map(|e| {
            e.info
                .trim_start_matches("COMMIT /* xid=")
                .trim_end_matches(" */")
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(*order.lock(), in_file);
    assert_eq!(written[0] >> 40, 1, "xids name the file they were taken in");
    let never = b.new_xid();
    drop(b);
    let b = Binlog::open(opts(dir.path(), 1 << 30, 1), uuid).unwrap();
    let fresh = b.new_xid();
    assert!(!written.contains(&fresh) && fresh >> 40 == 2);
    written.push(never);
    let found = b.committed_xids(&written).unwrap();
    assert_eq!(found.len(), 240);
    assert!(!found.contains(&never));
    assert!(b.committed_xids(&[]).unwrap().is_empty());
}

#[test]
fn transactions_are_written_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let uuid = server_uuid(dir.path()).unwrap();
    assert_eq!(
        server_uuid(dir.path()).unwrap(),
        uuid,
        "auto.cnf keeps the uuid"
    );
    let b = Binlog::open(opts(dir.path(), 1 << 30, 1), uuid).unwrap();
    insert(&b, 1, 10);
    let cx = QueryContext::default();
    b.write(&Entry::Ddl {
        cx: &cx,
        text: "CREATE TABLE u (a INT)",
    })
    .unwrap();
    let ev = b.show_events(None, 4, 0, None).unwrap();
    let kinds: Vec<&str> = ev.iter().map(|e| e.event_type).collect();
    assert_eq!(
        kinds,
        [
            "Format_desc",
            "Previous_gtids",
            "Gtid",
            "Query",
            "Table_map",
            "Write_rows",
            "Xid",
            "Gtid",
            "Query"
        ]
    );
    assert_eq!(ev[0].end_log_pos, 126);
    assert_eq!(ev[5].info, "table_id: 1 flags: STMT_END_F");
    assert_eq!(ev[8].info, "CREATE TABLE u (a INT)");
    let u = gtid::uuid_text(&uuid);
    assert_eq!(b.gtid_executed(), format!("{u}:1-2"));
    // Positions chain: each event starts where the previous one ended.
    for w in ev.windows(2) {
        assert_eq!(w[0].end_log_pos, w[1].pos);
    }
    assert_eq!(b.status().position, ev.last().unwrap().end_log_pos);
    assert!(b.fsyncs() >= 1);
}

#[test]
fn size_rotation_flush_purge_reset_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let uuid = gtid::random_uuid();
    let b = Binlog::open(opts(dir.path(), 4096, 0), uuid).unwrap();
    for i in 0..10 {
        insert(&b, i, 1000);
    }
    let files = b.files();
    assert!(files.len() >= 3, "{files:?}");
    // A closed file ends with a ROTATE naming the next.
    let first = b.show_events(Some(&files[0].0), 4, 0, None).unwrap();
    assert_eq!(first.last().unwrap().event_type, "Rotate");
    assert_eq!(first.last().unwrap().info, format!("{};pos=4", files[1].0));
    b.flush_logs().unwrap();
    assert_eq!(b.files().len(), files.len() + 1);
    b.purge_to(&files[2].0).unwrap();
    assert_eq!(b.files()[0].0, files[2].0);
    assert!(!dir.path().join(&files[0].0).exists());
    assert!(matches!(
        b.purge_to("nope.000001"),
        Err(Error::UnknownTargetBinlog)
    ));
    assert!(!b.gtid_purged().is_empty());
    let executed = b.gtid_executed();
    b.close().unwrap();
    drop(b);
    // Restart: GTIDs recovered from the last file, a new file started.
    let b = Binlog::open(opts(dir.path(), 4096, 0), uuid).unwrap();
    assert_eq!(b.gtid_executed(), executed);
    let index = std::fs::read_to_string(dir.path().join("binlog.index")).unwrap();
    assert!(index.starts_with(&format!("./{}\n", files[2].0)), "{index}");
    insert(&b, 99, 1);
    assert!(
        b.gtid_executed().ends_with(":1-11"),
        "{}",
        b.gtid_executed()
    );
    b.reset().unwrap();
    assert_eq!(
        b.files(),
        vec![("binlog.000001".to_string(), b.current().1)]
    );
    assert_eq!(b.gtid_executed(), "");
}

#[test]
fn a_torn_tail_is_cut_back_to_the_last_whole_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let uuid = gtid::random_uuid();
    let b = Binlog::open(opts(dir.path(), 1 << 30, 0), uuid).unwrap();
    insert(&b, 1, 10);
    insert(&b, 2, 10);
    let (name, len) = b.current();
    drop(b); // a crash: no STOP, the file still says "in use"
    let path = dir.path().join(&name);
    // Tear the last transaction in the middle of its rows event.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len - 40).unwrap();
    drop(f);
    let b = Binlog::open(opts(dir.path(), 1 << 30, 0), uuid).unwrap();
    assert!(b.gtid_executed().ends_with(":1"), "{}", b.gtid_executed());
    let ev = b.show_events(Some(&name), 4, 0, None).unwrap();
    assert_eq!(ev.last().unwrap().event_type, "Xid");
    let s = file::scan(&path).unwrap();
    assert!(!s.in_use && s.boundary == s.len);
}

#[test]
fn concurrent_committers_share_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let b = Arc::new(Binlog::open(opts(dir.path(), 1 << 30, 1), gtid::random_uuid()).unwrap());
    let before = b.fsyncs();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let b = b.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    insert(&b, t * 1000 + i, 10);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let fsyncs = b.fsyncs() - before;
    assert!(b.gtid_executed().ends_with(":1-400"));
    assert!(fsyncs <= 400, "at most one fsync per commit: {fsyncs}");
}

fn drain(d: &mut dump::Dump) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(e) = d.next(Duration::from_millis(20)).unwrap() {
        out.push(e);
    }
    out
}

fn gtid_count(events: &[Vec<u8>]) -> usize {
    events.iter().filter(|e| e[4] == event::GTID).count()
}

#[test]
fn a_dump_crosses_files_skips_what_the_replica_has_and_waits_for_more() {
    let dir = tempfile::tempdir().unwrap();
    let uuid = gtid::random_uuid();
    let b = Arc::new(Binlog::open(opts(dir.path(), 4096, 0), uuid).unwrap());
    for i in 0..6 {
        insert(&b, i, 1000);
    }
    assert!(b.files().len() >= 2);
    let mut d = dump::Dump::from_position(b.clone(), "", 4).unwrap();
    let events = drain(&mut d);
    // The made-up ROTATE first: log_pos 0, artificial, naming the first file.
    let h = event::Header::parse(&events[0]).unwrap();
    assert_eq!(
        (h.type_code, h.log_pos, h.flags),
        (event::ROTATE, 0, event::FLAG_ARTIFICIAL)
    );
    assert_eq!(events[1][4], event::FORMAT_DESCRIPTION);
    assert_eq!(gtid_count(&events), 6);
    // A new file is announced by a made-up ROTATE too.
    let artificial = events
        .iter()
        .filter(|e| e[4] == event::ROTATE && event::Header::parse(e).unwrap().flags != 0)
        .count();
    assert_eq!(artificial, b.files().len());
    // Waiting at the end: a commit from another thread wakes the dump.
    let b2 = b.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        insert(&b2, 100, 10);
    });
    let next = d.next(Duration::from_secs(10)).unwrap().unwrap();
    assert_eq!(next[4], event::GTID);
    t.join().unwrap();
    assert_eq!(d.heartbeat()[4], event::HEARTBEAT);
    // By GTID: the replica has 1-4, it gets 5-7.
    let mut have = GtidSet::default();
    for g in 1..=4 {
        have.add(&uuid, g);
    }
    let mut d = dump::Dump::from_gtids(b.clone(), have).unwrap();
    assert_eq!(gtid_count(&drain(&mut d)), 3);
    assert!(dump::Dump::from_position(b, "binlog.999999", 4).is_err());
}

/// An XA transaction's two groups: the prepare group (XA START, rows, XA END,
/// XA_PREPARE) and the XA COMMIT / XA ROLLBACK query; what the log says last of each
/// xid, across a rotation and a restart; a prepare group torn by a crash is cut off
/// whole (its XA START is not a transaction's end).
#[test]
fn xa_groups_are_written_found_and_cut_whole() {
    let dir = tempfile::tempdir().unwrap();
    let uuid = gtid::random_uuid();
    let cx = QueryContext {
        db: "test".into(),
        ..Default::default()
    };
    let xid = |g: &str| event::XaXid {
        format_id: 1,
        gtrid: g.as_bytes().to_vec(),
        bqual: b"b".to_vec(),
    };
    let rows = vec![(def(), RowChange::Insert(vec![Value::Int(1), Value::Null]))];
    let b = Binlog::open(opts(dir.path(), 1 << 30, 1), uuid).unwrap();
    assert!(!b.opened_after_crash());
    let prepare = |b: &Binlog, g: &str| {
        b.write(&Entry::XaPrepare {
            cx: &cx,
            xid: &xid(g),
            changes: &rows,
        })
        .unwrap()
    };
    let finish = |b: &Binlog, g: &str, commit: bool| {
        b.commit_ordered(
            &Entry::XaFinish {
                cx: &cx,
                xid: &xid(g),
                commit,
            },
            || Ok(()),
        )
        .unwrap()
    };
    prepare(&b, "a");
    prepare(&b, "c");
    prepare(&b, "r");
    b.flush_logs().unwrap();
    finish(&b, "c", true);
    finish(&b, "r", false);
    // The xid of a committed transaction used again, prepared again.
    prepare(&b, "c");
    let (name, _) = b.current();
    let first = b.files()[0].0.clone();
    let ev = b.show_events(Some(&first), 4, 0, None).unwrap();
    let kinds: Vec<&str> = ev.iter().skip(2).take(6).map(|e| e.event_type).collect();
    assert_eq!(
        kinds,
        [
            "Gtid",
            "Query",
            "Table_map",
            "Write_rows",
            "Query",
            "XA_prepare"
        ]
    );
    assert_eq!(ev[3].info, "XA START X'61',X'62',1");
    assert_eq!(ev[6].info, "XA END X'61',X'62',1");
    assert_eq!(ev[7].info, "XA PREPARE X'61',X'62',1");
    let ev = b.show_events(Some(&name), 4, 0, None).unwrap();
    assert_eq!(ev[3].info, "XA COMMIT X'63',X'62',1");
    assert_eq!(ev[5].info, "XA ROLLBACK X'72',X'62',1");
    let all = [xid("a"), xid("c"), xid("r"), xid("none")];
    let check = |b: &Binlog| {
        let o = b.xa_outcomes(&all).unwrap();
        assert_eq!(o.get(&xid("a")), Some(&XaLogged::Prepared));
        assert_eq!(o.get(&xid("c")), Some(&XaLogged::Prepared));
        assert_eq!(o.get(&xid("r")), Some(&XaLogged::RolledBack));
        assert_eq!(o.get(&xid("none")), None);
    };
    check(&b);
    assert!(b.gtid_executed().ends_with(":1-6"), "{}", b.gtid_executed());
    // A crash in the middle of a prepare group: the group goes whole.
    let len = b.current().1;
    prepare(&b, "torn");
    let len2 = b.current().1;
    drop(b);
    let path = dir.path().join(&name);
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len2 - 10).unwrap();
    drop(f);
    let b = Binlog::open(opts(dir.path(), 1 << 30, 1), uuid).unwrap();
    assert!(b.opened_after_crash());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    assert!(b.gtid_executed().ends_with(":1-6"), "{}", b.gtid_executed());
    check(&b);
    assert!(b.xa_outcomes(&[xid("torn")]).unwrap().is_empty());
    finish(&b, "c", true);
    assert_eq!(
        b.xa_outcomes(&all).unwrap().get(&xid("c")),
        Some(&XaLogged::Committed)
    );
    b.close().unwrap();
    drop(b);
    let b = Binlog::open(opts(dir.path(), 1 << 30, 1), uuid).unwrap();
    assert!(!b.opened_after_crash());
}

/// A group written under a source's GTID (a replica's applied transaction) keeps it:
/// the GTID event and gtid_executed hold the source's uuid:gno, this server's own next
/// GNO is not used up, the same GTID is refused a second time with nothing written
/// (1837), and after a restart gtid_executed still holds it.
#[test]
fn a_source_gtid_is_kept_once() {
    let dir = tempfile::tempdir().unwrap();
    let uuid = gtid::random_uuid();
    let source = gtid::random_uuid();
    let b = Binlog::open(opts(dir.path(), 1 << 30, 1), uuid).unwrap();
    insert(&b, 1, 10);
    let cx = QueryContext {
        db: "test".into(),
        gtid: Some((source, 41)),
        ..Default::default()
    };
    let changes = vec![(
        def(),
        RowChange::Insert(vec![Value::Int(2), Value::Bytes(b"y".to_vec())]),
    )];
    let write = |b: &Binlog| {
        b.commit_ordered(
            &Entry::Rows {
                cx: &cx,
                changes: &changes,
                xid: Some(b.new_xid()),
            },
            || Ok(()),
        )
    };
    write(&b).unwrap();
    insert(&b, 3, 10);
    let (src, own) = (gtid::uuid_text(&source), gtid::uuid_text(&uuid));
    let mut want = [format!("{own}:1-2"), format!("{src}:41")];
    want.sort();
    assert_eq!(b.gtid_executed(), want.join(",\n"));
    assert!(b.executed_contains(&source, 41) && !b.executed_contains(&source, 40));
    let gtids = |b: &Binlog| -> Vec<String> {
        b.show_events(None, 4, 0, None)
            .unwrap()
            .into_iter()
            .filter(|e| e.event_type == "Gtid")
            .map(|e| e.info)
            .collect()
    };
    assert_eq!(
        gtids(&b),
        [
            format!("SET @@SESSION.GTID_NEXT= '{own}:1'"),
            format!("SET @@SESSION.GTID_NEXT= '{src}:41'"),
            format!("SET @@SESSION.GTID_NEXT= '{own}:2'"),
        ]
    );
    let before = b.current();
    let e = write(&b).unwrap_err();
    assert_eq!(e.code(), 1837, "{e}");
    assert_eq!(b.current(), before, "nothing written");
    drop(b);
    let b = Binlog::open(opts(dir.path(), 1 << 30, 1), uuid).unwrap();
    assert_eq!(b.gtid_executed(), want.join(",\n"));
}

/// WAIT_FOR_EXECUTED_GTID_SET's wait: it returns once the set is logged AND the engines
/// committed it (a waiter must then see the rows), times out otherwise, and stops on
/// the caller's interruption.
#[test]
fn waiting_for_executed_gtids() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;
    let dir = tempfile::tempdir().unwrap();
    let uuid = gtid::random_uuid();
    let b = Arc::new(Binlog::open(opts(dir.path(), 1 << 30, 0), uuid).unwrap());
    insert(&b, 1, 10);
    let u = gtid::uuid_text(&uuid);
    let one = GtidSet::parse(&format!("{u}:1")).unwrap();
    let two = GtidSet::parse(&format!("{u}:1-2")).unwrap();
    let never = || Ok(());
    assert!(!b.wait_executed(&one, None, never).unwrap());
    assert!(!b.wait_executed(&GtidSet::default(), None, never).unwrap());
    let t = Instant::now();
    let soon = Some(t + Duration::from_millis(150));
    assert!(b.wait_executed(&two, soon, never).unwrap());
    assert!(t.elapsed() >= Duration::from_millis(150));

    // A committer whose engine commit is slow: the wait outlasts it.
    let committed = Arc::new(AtomicBool::new(false));
    let (b2, c2) = (b.clone(), committed.clone());
    let committer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        let cx = QueryContext::default();
        let xid = b2.new_xid();
        b2.commit_ordered(
            &Entry::Rows {
                cx: &cx,
                changes: &[],
                xid: Some(xid),
            },
            || {
                std::thread::sleep(Duration::from_millis(100));
                c2.store(true, Ordering::SeqCst);
                Ok(())
            },
        )
        .unwrap();
    });
    assert!(!b.wait_executed(&two, None, never).unwrap());
    assert!(
        committed.load(Ordering::SeqCst),
        "returned before the engine commit"
    );
    committer.join().unwrap();

    // The caller's interruption ends a wait that would never end.
    let three = GtidSet::parse(&format!("{u}:3")).unwrap();
    let killed = b.wait_executed(&three, None, || Err(Error::Internal("killed".into())));
    assert!(killed.is_err());
}

#[test]
fn gtid_ownership_waits_for_the_owner_and_sees_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let b = Arc::new(Binlog::open(opts(dir.path(), 1 << 20, 0), gtid::random_uuid()).unwrap());
    let src = gtid::parse_uuid("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee").unwrap();
    assert_eq!(b.own_gtid(&src, 5, 1, || Ok(())).unwrap(), Ownership::Owned);
    // The owner asking again keeps it.
    assert_eq!(b.own_gtid(&src, 5, 1, || Ok(())).unwrap(), Ownership::Owned);
    // A second session waits; KILL (the check's error) ends the wait.
    let killed = b.own_gtid(&src, 5, 2, || Err(Error::Interrupted));
    assert!(killed.is_err());
    let other = {
        let b = b.clone();
        std::thread::spawn(move || b.own_gtid(&src, 5, 2, || Ok(())).unwrap())
    };
    std::thread::sleep(Duration::from_millis(50));
    // The owner logs its group under the GTID, then gives it up: the waiter sees it
    // executed.
    let cx = QueryContext {
        gtid: Some((src, 5)),
        ..Default::default()
    };
    b.write(&Entry::Rows {
        cx: &cx,
        changes: &[],
        xid: None,
    })
    .unwrap();
    b.release_gtid(&src, 5, 1);
    assert_eq!(other.join().unwrap(), Ownership::Executed);
    // Rolled back instead: the waiter owns it.
    assert_eq!(b.own_gtid(&src, 6, 1, || Ok(())).unwrap(), Ownership::Owned);
    let other = {
        let b = b.clone();
        std::thread::spawn(move || b.own_gtid(&src, 6, 2, || Ok(())).unwrap())
    };
    std::thread::sleep(Duration::from_millis(50));
    b.release_gtid(&src, 6, 1);
    assert_eq!(other.join().unwrap(), Ownership::Owned);
}

#[test]
fn gtid_purged_additions_follow_mysql_rules_and_survive_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let uuid = gtid::random_uuid();
    let b = Binlog::open(opts(dir.path(), 1 << 20, 0), uuid).unwrap();
    insert(&b, 1, 10);
    let set = |t: &str| GtidSet::parse(t).unwrap();
    let g = "11111111-2222-3333-4444-555555555555";
    b.add_purged(&set(&format!("{g}:1-5")), true).unwrap();
    assert_eq!(b.gtid_purged(), format!("{g}:1-5"));
    assert!(b.executed_contains(&gtid::parse_uuid(g).unwrap(), 3));
    // Overlapping gtid_executed (this server's own transaction, or what was added).
    let own = format!("{}:1", gtid::uuid_text(&uuid));
    assert!(matches!(
        b.add_purged(&set(&own), true),
        Err(Error::GtidPurgedConstraint(_))
    ));
    assert!(matches!(
        b.add_purged(&set(&format!("{g}:5-6")), true),
        Err(Error::GtidPurgedConstraint(_))
    ));
    // Without '+': a superset of gtid_purged, adding the difference.
    assert!(matches!(
        b.add_purged(&set(&format!("{g}:1-4")), false),
        Err(Error::GtidPurgedConstraint(_))
    ));
    b.add_purged(&set(&format!("{g}:1-7")), false).unwrap();
    // An owned GTID cannot be purged.
    let h = gtid::parse_uuid(g).unwrap();
    b.own_gtid(&h, 9, 1, || Ok(())).unwrap();
    assert!(matches!(
        b.add_purged(&set(&format!("{g}:9")), true),
        Err(Error::GtidPurgedConstraint(_))
    ));
    let purged = b.gtid_purged();
    let executed = b.gtid_executed();
    b.close().unwrap();
    drop(b);
    let b = Binlog::open(opts(dir.path(), 1 << 20, 0), uuid).unwrap();
    assert_eq!(b.gtid_purged(), purged);
    assert_eq!(b.gtid_executed(), executed);
    // PURGE BINARY LOGS keeps them in gtid_purged.
    b.flush_logs().unwrap();
    let last = b.files().last().unwrap().0.clone();
    b.purge_to(&last).unwrap();
    assert_eq!(b.gtid_purged(), executed);
    b.reset().unwrap();
    assert_eq!(b.gtid_purged(), "");
    b.close().unwrap();
    drop(b);
    let b = Binlog::open(opts(dir.path(), 1 << 20, 0), uuid).unwrap();
    assert_eq!(b.gtid_purged(), "");
    assert_eq!(b.gtid_executed(), "");
}
