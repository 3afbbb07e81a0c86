//! `btree` engine tests through the engine API: rows against a `BTreeMap` model with
//! page splits, both scan directions, MVCC snapshots at REPEATABLE READ and READ
//! COMMITTED, rollback of a transaction, of one statement and to a savepoint, snapshots
//! taken at START TRANSACTION, SERIALIZABLE reads, unique keys, deadlocks, purge, and
//! recovery after a simulated crash (the engine dropped without flushing a
//! page, with a transaction left open).

use super::*;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use strata_storage::bufpool::PageId;
use strata_types::keycode::encode_prefix;
use strata_types::schema::ColumnDef;
use strata_types::{Collation, DataType, IndexDef};

fn col(name: &str, t: DataType) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        data_type: t,
        nullable: true,
        default: None,
        auto_increment: false,
        on_update_now: false,
        collation: if t.is_text() {
            Collation::GeneralCi
        } else {
            Collation::Binary
        },
        members: Vec::new(),
        generated: None,
        comment: String::new(),
        real_unsigned: false,
        invisible: Default::default(),
    }
}

fn sbtest() -> TableDef {
    let int = DataType::Int { unsigned: false };
    let mut id = col("id", int);
    id.auto_increment = true;
    id.nullable = false;
    TableDef {
        options: Default::default(),
        db: "d".into(),
        name: "t".into(),
        engine: "btree".into(),
        columns: vec![id, col("k", int), col("c", DataType::VarChar(200))],
        indexes: vec![
            IndexDef {
                invisible: false,
                name: "PRIMARY".into(),
                columns: vec![0],
                unique: true,
                primary: true,
                comment: String::new(),
            },
            IndexDef {
                invisible: false,
                name: "k_1".into(),
                columns: vec![1],
                unique: false,
                primary: false,
                comment: String::new(),
            },
            IndexDef {
                invisible: false,
                name: "c_u".into(),
                columns: vec![2],
                unique: true,
                primary: false,
                comment: String::new(),
            },
        ],
        auto_increment_start: 1,
        comment: String::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        instant: None,
        default_collation: Default::default(),
    }
}

fn small() -> BtreeConfig {
    BtreeConfig {
        buffer_pool_size: 4 << 20,
        page_size: 4096,
        log_file_size: 4 << 20,
        sort_buffer_size: 64 << 10,
        ..BtreeConfig::default()
    }
}

fn setup(dir: &Path, create: bool) -> (BtreeEngine, Arc<dyn Table>) {
    setup_def(dir, create, sbtest())
}

fn setup_def(dir: &Path, create: bool, def: TableDef) -> (BtreeEngine, Arc<dyn Table>) {
    let e = BtreeEngine::open(dir, small()).unwrap();
    let stem = dir.join("d").join("t");
    if create {
        e.create_table(&def, &stem).unwrap();
    }
    let t = e.open_table(Arc::new(def), &stem).unwrap();
    (e, t)
}

fn row(id: i64, k: i64, c: &str) -> Vec<Value> {
    vec![Value::Int(id), Value::Int(k), Value::str(c)]
}

fn all(t: &Arc<dyn Table>, txn: &Txn) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    t.scan(txn, &mut |_, r| {
        out.push(r.to_vec());
        Ok(Flow::Continue)
    })
    .unwrap();
    out
}

fn by_k(t: &Arc<dyn Table>, txn: &Txn, k: i64, reverse: bool) -> Vec<i64> {
    let def = t.def().clone();
    let mut key = Vec::new();
    assert!(encode_prefix(
        &mut key,
        &def,
        &def.indexes[1],
        &[Value::Int(k)]
    ));
    let mut out = Vec::new();
    t.index_scan(txn, 1, &KeyRange::prefix(key), reverse, &mut |_, r| {
        out.push(r[0].to_i64().unwrap());
        Ok(Flow::Continue)
    })
    .unwrap();
    out
}

fn autocommit(f: impl FnOnce(&Txn) -> Result<()>) -> Result<()> {
    let txn = Txn::default();
    txn.begin_statement();
    let r = f(&txn);
    txn.end_statement(r.is_ok())?;
    match r {
        Ok(()) => txn.commit(),
        Err(e) => {
            txn.rollback()?;
            Err(e)
        }
    }
}

#[test]
fn rows_match_a_model_through_splits_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    let mut model = BTreeMap::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..3000 {
        let id = rng.gen_range(1..2000i64);
        let k = rng.gen_range(0..50i64);
        let c = format!("c-{id}-{}", "x".repeat(rng.gen_range(0..150)));
        match rng.gen_range(0..4) {
            0 | 1 => {
                let r = autocommit(|txn| t.insert(txn, &mut row(id, k, &c)).map(|_| ()));
                match r {
                    Ok(()) => assert!(model.insert(id, (k, c)).is_none()),
                    Err(Error::DuplicateKey { .. }) => assert!(model.contains_key(&id)),
                    Err(e) => panic!("{e}"),
                }
            }
            2 => {
                if let Some((ok, oc)) = model.get(&id).cloned() {
                    autocommit(|txn| {
                        t.update(txn, 0, &row(id, ok, &oc), &row(id, k, &c))
                            .map(|_| ())
                    })
                    .unwrap();
                    model.insert(id, (k, c));
                }
            }
            _ => {
                if let Some((ok, oc)) = model.remove(&id) {
                    autocommit(|txn| t.delete(txn, 0, &row(id, ok, &oc))).unwrap();
                }
            }
        }
    }
    let txn = Txn::default();
    let got = all(&t, &txn);
    let want: Vec<Vec<Value>> = model.iter().map(|(id, (k, c))| row(*id, *k, c)).collect();
    assert_eq!(got, want);
    // Secondary index, both directions, agrees with the model.
    let mut ids: Vec<i64> = model
        .iter()
        .filter(|(_, (k, _))| *k == 7)
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(by_k(&t, &txn, 7, false), ids);
    ids.reverse();
    assert_eq!(by_k(&t, &txn, 7, true), ids);
    let mut rev = Vec::new();
    t.index_scan(&txn, 0, &KeyRange::all(), true, &mut |_, r| {
        rev.push(r[0].to_i64().unwrap());
        Ok(Flow::Continue)
    })
    .unwrap();
    assert_eq!(rev, model.keys().rev().copied().collect::<Vec<_>>());
    txn.commit().unwrap();
    e.purge_all();
    t.check(&Txn::default()).unwrap();
    // Clean restart: everything is still there.
    e.flush().unwrap();
    drop(t);
    drop(e);
    let (_e, t) = setup(dir.path(), false);
    assert_eq!(all(&t, &Txn::default()), want);
    t.check(&Txn::default()).unwrap();
}

#[test]
fn repeatable_read_keeps_its_snapshot_and_read_committed_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let (_e, t) = setup(dir.path(), true);
    autocommit(|txn| t.insert(txn, &mut row(1, 10, "a")).map(|_| ())).unwrap();
    let rr = Txn::new(Isolation::RepeatableRead, Duration::from_secs(5));
    let rc = Txn::new(Isolation::ReadCommitted, Duration::from_secs(5));
    assert_eq!(all(&t, &rr).len(), 1);
    assert_eq!(all(&t, &rc).len(), 1);
    rc.end_statement(true).unwrap();
    // Another transaction updates, inserts, deletes, and commits.
    autocommit(|txn| {
        t.update(txn, 0, &row(1, 10, "a"), &row(1, 11, "b"))?;
        t.insert(txn, &mut row(2, 20, "c"))?;
        Ok(())
    })
    .unwrap();
    assert_eq!(all(&t, &rr), vec![row(1, 10, "a")]);
    assert_eq!(by_k(&t, &rr, 10, false), vec![1]);
    assert_eq!(by_k(&t, &rr, 11, false), Vec::<i64>::new());
    assert_eq!(all(&t, &rc), vec![row(1, 11, "b"), row(2, 20, "c")]);
    // A locking read sees the latest committed version even at REPEATABLE READ.
    rr.set_read_mode(ReadMode::LockShared);
    assert_eq!(all(&t, &rr).len(), 2);
    rr.commit().unwrap();
    rc.commit().unwrap();
}

#[test]
fn purge_keeps_the_index_entry_of_a_version_a_view_still_reads() {
    // k: 10 -> 11 -> 10 (both committed before the view) -> 12 (after it). Purging the
    // first change drops the entry k=10 unless some version still needed uses it: the
    // view reads the row as k=10 (the version the last change replaced), so it must
    // stay. A chain walk that stopped too early would drop it.
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    let set_k = |from: i64, to: i64| {
        autocommit(|txn| {
            t.update(txn, 0, &row(1, from, "a"), &row(1, to, "a"))
                .map(|_| ())
        })
        .unwrap()
    };
    autocommit(|txn| t.insert(txn, &mut row(1, 10, "a")).map(|_| ())).unwrap();
    set_k(10, 11);
    set_k(11, 10);
    let view = Txn::default();
    assert_eq!(by_k(&t, &view, 10, false), vec![1]);
    set_k(10, 12);
    e.purge_all();
    assert_eq!(by_k(&t, &view, 10, false), vec![1]);
    assert_eq!(by_k(&t, &view, 11, false), Vec::<i64>::new());
    assert_eq!(by_k(&t, &Txn::default(), 12, false), vec![1]);
    view.commit().unwrap();
    e.purge_all();
    assert_eq!(e.history_length(), 0);
    assert_eq!(by_k(&t, &Txn::default(), 10, false), Vec::<i64>::new());
    t.check(&Txn::default()).unwrap();
}

/// (id, k) of every row through index k_1, reading only those two columns: an
/// index-only read where the engine trusts the leaf.
fn index_only(t: &Arc<dyn Table>, txn: &Txn) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    t.index_scan_columns(
        txn,
        1,
        &KeyRange::all(),
        false,
        &[true, true, false],
        &mut |_, r| {
            assert!(r[2].is_null(), "c is not read");
            out.push((r[0].to_i64().unwrap(), r[1].to_i64().unwrap()));
            Ok(Flow::Continue)
        },
    )
    .unwrap();
    out
}

fn index_only_records(e: &BtreeEngine) -> u64 {
    e.status_vars()
        .into_iter()
        .find(|(n, _)| n == "Strata_btree_index_only_records")
        .map_or(0, |(_, v)| v)
}

#[test]
fn index_only_reads_see_what_the_view_sees() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    // c is unique: each row its own.
    let r = |id: i64, k: i64| row(id, k, &format!("c{id}"));
    assert!(t.covers(1, &[true, true, false]));
    assert!(!t.covers(1, &[true, true, true]), "c is not in the entry");
    assert!(
        !t.covers(2, &[true, false, false]),
        "a string key is weights, not text"
    );
    autocommit(|txn| {
        for i in 1..=300 {
            t.insert(txn, &mut r(i, i))?;
        }
        Ok(())
    })
    .unwrap();
    let expect = |changes: &[(i64, Option<i64>)]| -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = (1..=300)
            .filter_map(|i| match changes.iter().find(|c| c.0 == i) {
                Some((_, Some(k))) => Some((i, *k)),
                Some((_, None)) => None,
                None => Some((i, i)),
            })
            .collect();
        v.sort_by_key(|&(id, k)| (k, id));
        v
    };
    e.purge_all();
    let before = index_only_records(&e);
    assert_eq!(index_only(&t, &Txn::default()), expect(&[]));
    assert!(
        index_only_records(&e) >= before + 300,
        "every leaf is trusted once the load is purged"
    );
    // A snapshot taken now, then another transaction moves k of row 5, deletes row 6
    // and commits: the snapshot still reads the old entries, a new one the new.
    let snap = Txn::new(Isolation::RepeatableRead, Duration::from_secs(5));
    assert_eq!(index_only(&t, &snap).len(), 300);
    autocommit(|txn| {
        t.update(txn, 0, &r(5, 5), &r(5, 500))?;
        t.delete(txn, 0, &r(6, 6))
    })
    .unwrap();
    // Rolled back: row 7's k moves and comes back, row 301 comes and goes.
    let rb = Txn::default();
    t.update(&rb, 0, &r(7, 7), &r(7, 700)).unwrap();
    t.insert(&rb, &mut r(301, 1)).unwrap();
    // An open writer's own change is not trusted to others.
    assert_eq!(index_only(&t, &snap), expect(&[]));
    rb.rollback().unwrap();
    let changed = [(5, Some(500)), (6, None)];
    assert_eq!(index_only(&t, &snap), expect(&[]));
    assert_eq!(index_only(&t, &Txn::default()), expect(&changed));
    // Purge waits for the snapshot; once it is gone the stale entries go and the
    // leaves are trusted again, with the same answers.
    snap.commit().unwrap();
    e.purge_all();
    let before = index_only_records(&e);
    assert_eq!(index_only(&t, &Txn::default()), expect(&changed));
    assert!(index_only_records(&e) >= before + 298);
    // A row that takes back an entry it had made stale: 500 -> 5 again.
    let snap = Txn::new(Isolation::RepeatableRead, Duration::from_secs(5));
    assert_eq!(index_only(&t, &snap), expect(&changed));
    autocommit(|txn| t.update(txn, 0, &r(5, 500), &r(5, 5)).map(|_| ())).unwrap();
    e.purge_all();
    assert_eq!(index_only(&t, &snap), expect(&changed));
    assert_eq!(index_only(&t, &Txn::default()), expect(&[(6, None)]));
    snap.commit().unwrap();
    t.check(&Txn::default()).unwrap();
}

#[test]
fn rollback_undoes_a_transaction_and_a_failed_statement_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    autocommit(|txn| t.insert(txn, &mut row(1, 1, "one")).map(|_| ())).unwrap();
    let txn = Txn::default();
    txn.begin_statement();
    t.insert(&txn, &mut row(2, 2, "two")).unwrap();
    txn.end_statement(true).unwrap();
    txn.begin_statement();
    t.update(&txn, 0, &row(1, 1, "one"), &row(1, 5, "uno"))
        .unwrap();
    // The statement then fails on a duplicate: only its own update is undone.
    let dup = t.insert(&txn, &mut row(3, 3, "two"));
    assert!(matches!(dup, Err(Error::DuplicateKey { .. })), "{dup:?}");
    txn.end_statement(false).unwrap();
    assert_eq!(all(&t, &txn), vec![row(1, 1, "one"), row(2, 2, "two")]);
    txn.begin_statement();
    t.delete(&txn, 0, &row(1, 1, "one")).unwrap();
    txn.end_statement(true).unwrap();
    txn.rollback().unwrap();
    assert_eq!(all(&t, &Txn::default()), vec![row(1, 1, "one")]);
    e.purge_all();
    t.check(&Txn::default()).unwrap();
    assert_eq!(by_k(&t, &Txn::default(), 5, false), Vec::<i64>::new());
}

#[test]
fn a_lock_cycle_is_reported_as_a_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let (_e, t) = setup(dir.path(), true);
    autocommit(|txn| {
        t.insert(txn, &mut row(1, 1, "a"))?;
        t.insert(txn, &mut row(2, 2, "b"))?;
        Ok(())
    })
    .unwrap();
    let t2 = t.clone();
    let a = Txn::new(Isolation::RepeatableRead, Duration::from_secs(10));
    t.update(&a, 0, &row(1, 1, "a"), &row(1, 1, "a1")).unwrap();
    let h = std::thread::spawn(move || {
        let b = Txn::new(Isolation::RepeatableRead, Duration::from_secs(10));
        t2.update(&b, 0, &row(2, 2, "b"), &row(2, 2, "b1")).unwrap();
        let r = t2.update(&b, 0, &row(1, 1, "a"), &row(1, 1, "a2"));
        match r {
            Ok(_) => b.commit().map(|_| "b committed"),
            Err(e) => {
                b.rollback().unwrap();
                Err(e)
            }
        }
    });
    std::thread::sleep(Duration::from_millis(200));
    let r = t.update(&a, 0, &row(2, 2, "b"), &row(2, 2, "b2"));
    let b_result = if r.is_err() {
        a.rollback().unwrap();
        h.join().unwrap()
    } else {
        a.commit().unwrap();
        h.join().unwrap()
    };
    // Exactly one of the two was chosen as the victim.
    assert!(
        matches!(r, Err(Error::Deadlock)) != matches!(b_result, Err(Error::Deadlock)),
        "a: {r:?}, b: {b_result:?}"
    );
}

#[test]
fn a_crash_keeps_committed_work_and_rolls_back_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (e, t) = setup(dir.path(), true);
        for i in 1..=500 {
            autocommit(|txn| {
                t.insert(txn, &mut row(i, i % 7, &format!("row {i}")))
                    .map(|_| ())
            })
            .unwrap();
        }
        autocommit(|txn| t.delete(txn, 0, &row(3, 3, "row 3"))).unwrap();
        autocommit(|txn| {
            t.update(txn, 0, &row(4, 4, "row 4"), &row(4, 40, "four"))
                .map(|_| ())
        })
        .unwrap();
        // An open transaction whose changes may reach the pages but never commit.
        let open = Txn::default();
        for i in 1000..1200 {
            t.insert(&open, &mut row(i, 1, &format!("uncommitted {i}")))
                .unwrap();
        }
        t.update(&open, 0, &row(5, 5, "row 5"), &row(5, 50, "changed"))
            .unwrap();
        // Let the page cleaner and a checkpoint write some pages, then "crash".
        e.inner.checkpoint().unwrap();
        std::mem::forget(open);
        drop(t);
        drop(e);
    }
    let (e, t) = setup(dir.path(), false);
    let rows = all(&t, &Txn::default());
    assert_eq!(rows.len(), 499);
    assert!(rows.iter().all(|r| r[0].to_i64().unwrap() < 1000));
    assert!(rows.contains(&row(4, 40, "four")));
    assert!(rows.contains(&row(5, 5, "row 5")));
    assert!(!rows.iter().any(|r| r[0] == Value::Int(3)));
    // Purge finishes what the crash interrupted: no stale entry, no tombstone.
    e.purge_all();
    t.check(&Txn::default()).unwrap();
    let k4 = by_k(&t, &Txn::default(), 4, false);
    assert!(!k4.contains(&4) && k4.contains(&11), "{k4:?}");
    assert_eq!(by_k(&t, &Txn::default(), 40, false), vec![4]);
    // AUTO_INCREMENT continues after the largest id.
    let txn = Txn::default();
    let ins = t.insert(
        &txn,
        &mut vec![Value::Null, Value::Int(0), Value::str("new")],
    );
    assert_eq!(ins.unwrap().generated_id, Some(501));
    txn.commit().unwrap();
}

/// Two-phase commit: transactions prepared (and, for one, relogged by a checkpoint
/// after its prepare) survive a crash as prepared; the server's decision commits one
/// and rolls back the other; a checkpoint waits for that decision.
#[test]
fn prepared_transactions_wait_for_the_coordinator_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (e, t) = setup(dir.path(), true);
        for i in 1..=10 {
            autocommit(|txn| t.insert(txn, &mut row(i, i, &format!("s{i}"))).map(|_| ())).unwrap();
        }
        let a = Txn::default();
        t.update(&a, 0, &row(1, 1, "s1"), &row(1, 1, "a")).unwrap();
        t.insert(&a, &mut row(100, 1, "a new")).unwrap();
        a.prepare(111).unwrap();
        // A checkpoint's copy of the open transactions' undo, after the prepare.
        for r in e.inner.undo_to_relog(usize::MAX).unwrap() {
            e.inner.st.log.append(&r);
        }
        let b = Txn::default();
        t.delete(&b, 0, &row(2, 2, "s2")).unwrap();
        t.insert(&b, &mut row(200, 2, "b new")).unwrap();
        b.prepare(222).unwrap();
        // A transaction prepared and committed: nothing left to decide.
        let c = Txn::default();
        t.update(&c, 0, &row(3, 3, "s3"), &row(3, 3, "c")).unwrap();
        c.prepare(333).unwrap();
        c.commit().unwrap();
        let end = e.inner.st.log.current_lsn();
        e.inner.st.log.flush_up_to(end).unwrap();
        std::mem::forget(a);
        std::mem::forget(b);
        drop(t);
        drop(e);
    }
    let (e, t) = setup(dir.path(), false);
    let mut xids = e.prepared_xids();
    xids.sort();
    assert_eq!(xids, vec![111, 222]);
    // Undecided: no checkpoint may move past their undo.
    let before = e.inner.st.log.checkpoint_lsn();
    e.inner.checkpoint().unwrap();
    assert_eq!(e.inner.st.log.checkpoint_lsn(), before);
    assert_eq!(e.resolve_prepared(&|x| x == 111).unwrap(), (1, 1));
    assert!(e.prepared_xids().is_empty());
    let rows = all(&t, &Txn::default());
    assert!(rows.contains(&row(1, 1, "a")) && rows.contains(&row(100, 1, "a new")));
    assert!(rows.contains(&row(2, 2, "s2")), "b rolled back: {rows:?}");
    assert!(!rows.iter().any(|r| r[0] == Value::Int(200)));
    assert!(rows.contains(&row(3, 3, "c")));
    assert_eq!(rows.len(), 11);
    e.purge_all();
    t.check(&Txn::default()).unwrap();
    drop(t);
    drop(e);
    // The decision is durable: a second recovery finds nothing prepared.
    let (e, t) = setup(dir.path(), false);
    assert!(e.prepared_xids().is_empty());
    assert_eq!(all(&t, &Txn::default()).len(), 11);
}

/// An XA-prepared transaction (an external coordinator's) is not the binary log's to
/// decide: recovery keeps it alive — others read the committed versions (through the
/// clustered and a secondary index), its rows stay locked — through checkpoints that
/// copy its undo to the undo log and further crashes, until XA COMMIT.
#[test]
fn xa_prepared_transactions_stay_prepared_and_locked_through_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let xid = strata_engine::xa_xid_bytes(7, b"gtrid", b"bq");
    {
        let (e, t) = setup(dir.path(), true);
        for i in 1..=10 {
            autocommit(|txn| t.insert(txn, &mut row(i, i, &format!("s{i}"))).map(|_| ())).unwrap();
        }
        let a = Txn::default();
        t.update(&a, 0, &row(1, 1, "s1"), &row(1, 50, "a1"))
            .unwrap();
        t.update(&a, 0, &row(1, 50, "a1"), &row(1, 51, "a2"))
            .unwrap();
        t.insert(&a, &mut row(100, 100, "a new")).unwrap();
        t.delete(&a, 0, &row(2, 2, "s2")).unwrap();
        a.prepare_xa(&xid).unwrap();
        std::mem::forget(a);
        drop(t);
        drop(e);
    }
    let committed: Vec<Vec<Value>> = (1..=10).map(|i| row(i, i, &format!("s{i}"))).collect();
    for round in 0..3 {
        let (e, t) = setup(dir.path(), false);
        assert!(e.prepared_xids().is_empty(), "not the binary log's");
        let mut rec = e.take_recovered_xa();
        assert_eq!(rec.len(), 1, "round {round}");
        let (x, part) = rec.pop().unwrap();
        assert_eq!(x, xid);
        // Others see the committed rows, by either index.
        assert_eq!(all(&t, &Txn::default()), committed, "round {round}");
        assert_eq!(by_k(&t, &Txn::default(), 1, false), vec![1]);
        assert!(by_k(&t, &Txn::default(), 51, false).is_empty());
        // Its rows are locked against other writers.
        let w = Txn::new(Isolation::RepeatableRead, Duration::from_millis(50));
        let err = t
            .update(&w, 0, &row(1, 1, "s1"), &row(1, 1, "w"))
            .unwrap_err();
        assert!(matches!(err, Error::LockWaitTimeout), "{err:?}");
        let err = t.insert(&w, &mut row(100, 100, "w")).unwrap_err();
        assert!(matches!(err, Error::LockWaitTimeout), "{err:?}");
        w.rollback().unwrap();
        if round == 1 {
            // Enough other work that checkpoints must copy its undo to the undo log.
            let before = e.inner.st.log.checkpoint_lsn();
            let pad = |i: i64| format!("{}{i}", "p".repeat(300));
            for b in 0..40 {
                let ids = 1000 + b * 300..1000 + (b + 1) * 300;
                autocommit(|txn| {
                    ids.clone()
                        .try_for_each(|i| t.insert(txn, &mut row(i, 0, &pad(i))).map(|_| ()))
                })
                .unwrap();
                autocommit(|txn| {
                    ids.clone()
                        .try_for_each(|i| t.delete(txn, 0, &row(i, 0, &pad(i))))
                })
                .unwrap();
            }
            e.inner.checkpoint().unwrap();
            assert!(
                e.inner.st.log.checkpoint_lsn() > before,
                "the checkpoint moved"
            );
            assert!(!e.inner.undo_log.is_empty(), "its undo is in the undo log");
        }
        if round < 2 {
            // Crash with it still prepared.
            std::mem::forget(part);
            drop(t);
            drop(e);
            continue;
        }
        Txn::adopt("btree", part).commit().unwrap();
        let rows = all(&t, &Txn::default());
        assert!(rows.contains(&row(1, 51, "a2")) && rows.contains(&row(100, 100, "a new")));
        assert!(!rows.iter().any(|r| r[0] == Value::Int(2)));
        assert_eq!(by_k(&t, &Txn::default(), 51, false), vec![1]);
        e.purge_all();
        t.check(&Txn::default()).unwrap();
        drop(t);
        drop(e);
    }
    // The commit is durable: nothing prepared after another restart.
    let (e, t) = setup(dir.path(), false);
    assert!(e.take_recovered_xa().is_empty());
    assert_eq!(all(&t, &Txn::default()).len(), 10);
}

/// XA ROLLBACK of a transaction recovery kept prepared restores the committed rows,
/// also in a table no session opened since the restart.
#[test]
fn a_recovered_xa_transaction_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let xid = strata_engine::xa_xid_bytes(1, b"r", b"");
    {
        let (e, t) = setup(dir.path(), true);
        for i in 1..=5 {
            autocommit(|txn| t.insert(txn, &mut row(i, i, &format!("s{i}"))).map(|_| ())).unwrap();
        }
        let a = Txn::default();
        t.update(&a, 0, &row(1, 1, "s1"), &row(1, 9, "a")).unwrap();
        t.delete(&a, 0, &row(2, 2, "s2")).unwrap();
        t.insert(&a, &mut row(6, 6, "new")).unwrap();
        a.prepare_xa(&xid).unwrap();
        std::mem::forget(a);
        drop(t);
        drop(e);
    }
    let e = BtreeEngine::open(dir.path(), small()).unwrap();
    let mut rec = e.take_recovered_xa();
    let (_, part) = rec.pop().unwrap();
    Txn::adopt("btree", part).rollback().unwrap();
    let t = e
        .open_table(Arc::new(sbtest()), &dir.path().join("d").join("t"))
        .unwrap();
    let committed: Vec<Vec<Value>> = (1..=5).map(|i| row(i, i, &format!("s{i}"))).collect();
    assert_eq!(all(&t, &Txn::default()), committed);
    assert_eq!(by_k(&t, &Txn::default(), 1, false), vec![1]);
    assert!(by_k(&t, &Txn::default(), 9, false).is_empty());
    t.check(&Txn::default()).unwrap();
}

/// The startup sweep removes delete-marked records of transactions from before the
/// restart. A prepared transaction's deletes are not garbage until it is resolved: the
/// sweep must wait for the whole resolution, not only for it to begin (it once started
/// as resolution took the list and removed rows the rollback was about to restore).
#[test]
fn a_rolled_back_prepared_delete_keeps_every_row_from_the_startup_sweep() {
    let dir = tempfile::tempdir().unwrap();
    const N: i64 = 1500;
    {
        let (e, t) = setup(dir.path(), true);
        autocommit(|txn| {
            for i in 1..=N {
                t.insert(txn, &mut row(i, i, &format!("r{i}")))?;
            }
            Ok(())
        })
        .unwrap();
        let p = Txn::default();
        for i in 1..=N {
            t.delete(&p, 0, &row(i, i, &format!("r{i}"))).unwrap();
        }
        p.prepare(7).unwrap();
        let end = e.inner.st.log.current_lsn();
        e.inner.st.log.flush_up_to(end).unwrap();
        std::mem::forget(p);
        drop(t);
        drop(e);
    }
    let (e, t) = setup(dir.path(), false);
    assert_eq!(e.prepared_xids(), vec![7]);
    assert_eq!(e.resolve_prepared(&|_| false).unwrap(), (0, 1));
    e.purge_all();
    assert_eq!(all(&t, &Txn::default()).len(), N as usize);
    t.check(&Txn::default()).unwrap();
}

/// The race the crash test found: a checkpoint copies an open transaction's undo to
/// relog it, the transaction commits, another one changes the same row and commits,
/// and only then is the copy appended. Recovery must not roll the first one back.
#[test]
fn undo_relogged_after_a_commit_does_not_undo_committed_work() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (e, t) = setup(dir.path(), true);
        for i in 1..=10 {
            autocommit(|txn| {
                t.insert(txn, &mut row(i, i, &format!("start {i}")))
                    .map(|_| ())
            })
            .unwrap();
        }
        let txn = Txn::default();
        t.update(&txn, 0, &row(5, 5, "start 5"), &row(5, 5, "t1"))
            .unwrap();
        t.update(&txn, 0, &row(5, 5, "t1"), &row(5, 5, "t2"))
            .unwrap();
        let relog = e.inner.undo_to_relog(usize::MAX).unwrap();
        assert!(!relog.is_empty());
        txn.commit().unwrap();
        autocommit(|txn| {
            t.update(txn, 0, &row(5, 5, "t2"), &row(5, 5, "u1"))
                .map(|_| ())
        })
        .unwrap();
        for r in &relog {
            e.inner.st.log.append(r);
        }
        let end = e.inner.st.log.current_lsn();
        e.inner.st.log.flush_up_to(end).unwrap();
        drop(t);
        drop(e);
    }
    let (_e, t) = setup(dir.path(), false);
    let rows = all(&t, &Txn::default());
    assert!(rows.contains(&row(5, 5, "u1")), "{rows:?}");
    assert_eq!(rows.len(), 10);
    t.check(&Txn::default()).unwrap();
}

/// A thread purging in a loop until the flag is raised.
fn spawn_purger(
    e: &Arc<BtreeEngine>,
) -> (
    Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<()>,
) {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let purger = {
        let (e, stop) = (e.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                e.inner.purge(usize::MAX);
            }
        })
    };
    (stop, purger)
}

#[test]
fn purge_skips_the_undo_of_a_dropped_table() {
    let dir = tempfile::tempdir().unwrap();
    let e = Arc::new(BtreeEngine::open(dir.path(), small()).unwrap());
    let (stop, purger) = spawn_purger(&e);
    let stem = dir.path().join("d").join("t");
    for _ in 0..10 {
        e.create_table(&sbtest(), &stem).unwrap();
        let t = e.open_table(Arc::new(sbtest()), &stem).unwrap();
        autocommit(|txn| {
            for i in 1..=2000 {
                t.insert(txn, &mut row(i, i, &i.to_string()))?;
            }
            Ok(())
        })
        .unwrap();
        autocommit(|txn| {
            for i in 1..=2000 {
                t.delete(txn, 0, &row(i, i, &i.to_string()))?;
            }
            Ok(())
        })
        .unwrap();
        // Dropped while purge works through the deletes; the handle outlives the drop,
        // as a cached plan's does.
        e.drop_table(&sbtest(), &stem).unwrap();
        drop(t);
    }
    stop.store(true, Ordering::Relaxed);
    purger.join().unwrap();
    e.purge_all();
    assert_eq!(e.inner.purge_failures.load(Ordering::Relaxed), 0);
    assert_eq!(e.history_length(), 0);
}

#[test]
fn check_table_agrees_with_purge_running_beside_it() {
    // Purge removes a deleted record and then its secondary entries; CHECK TABLE must
    // never see the moment between the two as a dangling entry.
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    let e = Arc::new(e);
    let (stop, purger) = spawn_purger(&e);
    for round in 0..4i64 {
        let base = round * 3000;
        let rows = base + 1..=base + 3000;
        autocommit(|txn| {
            for i in rows.clone() {
                t.insert(txn, &mut row(i, i, &i.to_string()))?;
            }
            Ok(())
        })
        .unwrap();
        autocommit(|txn| {
            for i in rows.clone() {
                t.delete(txn, 0, &row(i, i, &i.to_string()))?;
            }
            Ok(())
        })
        .unwrap();
        // The queue empties as purge takes it; the old versions go item by item.
        let mut checks = 0;
        while e.history_length() > 0 || !e.inner.trx.versions.is_empty() || checks < 5 {
            t.check(&Txn::default()).unwrap();
            checks += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    purger.join().unwrap();
    e.purge_all();
    t.check(&Txn::default()).unwrap();
}

#[test]
fn purge_removes_old_versions_and_delete_marked_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    for i in 1..=200 {
        autocommit(|txn| t.insert(txn, &mut row(i, i, &format!("{i}"))).map(|_| ())).unwrap();
    }
    // A reader whose snapshot predates everything below keeps purge from the history.
    let reader = Txn::default();
    assert_eq!(all(&t, &reader).len(), 200);
    for round in 0..5 {
        for i in 1..=200 {
            let old = row(i, i + round, &format!("{i}"));
            let new = row(i, i + round + 1, &format!("{i}"));
            autocommit(|txn| t.update(txn, 0, &old, &new).map(|_| ())).unwrap();
        }
    }
    for i in 1..=100 {
        autocommit(|txn| t.delete(txn, 0, &row(i, i + 5, &format!("{i}")))).unwrap();
    }
    e.purge_all();
    assert!(e.history_length() >= 1100, "{}", e.history_length());
    let snap = all(&t, &reader);
    assert_eq!(snap.len(), 200);
    assert!(
        snap.iter().all(|r| r[0] == r[1]),
        "the snapshot sees the original k"
    );
    reader.commit().unwrap();
    e.purge_all();
    assert_eq!(e.history_length(), 0);
    assert_eq!(e.inner.trx.versions.len(), 0);
    t.check(&Txn::default()).unwrap();
    assert_eq!(all(&t, &Txn::default()).len(), 100);
}

#[test]
fn rows_of_several_megabytes_live_in_overflow_chains() {
    let dir = tempfile::tempdir().unwrap();
    let mut def = sbtest();
    def.indexes.pop();
    let (e, t) = setup_def(dir.path(), true, def.clone());
    let big =
        |n: usize, b: u8| -> String { (0..n).map(|i| (b + (i % 23) as u8) as char).collect() };
    let a = big(3 << 20, b'a');
    autocommit(|txn| t.insert(txn, &mut row(1, 1, &a)).map(|_| ())).unwrap();
    autocommit(|txn| t.insert(txn, &mut row(2, 2, "small")).map(|_| ())).unwrap();
    assert_eq!(all(&t, &Txn::default())[0], row(1, 1, &a));
    // An update inside a transaction that rolls back leaves the first chain in place.
    let txn = Txn::default();
    let b = big(5 << 20, b'A');
    t.update(&txn, 0, &row(1, 1, &a), &row(1, 3, &b)).unwrap();
    assert_eq!(all(&t, &txn)[0], row(1, 3, &b));
    assert_eq!(all(&t, &Txn::default())[0], row(1, 1, &a));
    txn.rollback().unwrap();
    assert_eq!(all(&t, &Txn::default())[0], row(1, 1, &a));
    autocommit(|txn| t.update(txn, 0, &row(1, 1, &a), &row(1, 3, &b)).map(|_| ())).unwrap();
    e.purge_all();
    t.check(&Txn::default()).unwrap();
    drop(t);
    drop(e);
    // Without a flush: recovery rebuilds the chain from the log.
    let (_e, t) = setup_def(dir.path(), false, def);
    let rows = all(&t, &Txn::default());
    assert_eq!(rows, vec![row(1, 3, &b), row(2, 2, "small")]);
}

/// Bytes of the tablespace after inserting ids `order` (one autocommit each).
fn tablespace_bytes(order: impl Iterator<Item = i64>) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    for i in order {
        let c = format!("{i:0>100}");
        autocommit(|txn| t.insert(txn, &mut row(i, i, &c)).map(|_| ())).unwrap();
    }
    e.purge_all();
    e.flush().unwrap();
    std::fs::metadata(dir.path().join("d").join("t.ibd"))
        .unwrap()
        .len()
}

#[test]
fn ascending_inserts_fill_their_pages() {
    // A half-and-half split leaves ascending inserts' pages half full for good, as it
    // does descending ones; splitting at the insert point fills them.
    let ascending = tablespace_bytes(1..=3000);
    let descending = tablespace_bytes((1..=3000).rev());
    assert!(
        (ascending as f64) < 0.7 * descending as f64,
        "ascending {ascending} bytes, descending {descending} bytes"
    );
}

#[test]
fn decoding_into_a_used_row_gives_the_same_values() {
    use crate::row::{decode_row, decode_row_into, encode_row};
    let def = sbtest();
    let rows = [
        vec![Value::Int(1), Value::Int(2), Value::str("first value")],
        vec![Value::Int(2), Value::Null, Value::str("x")],
        vec![Value::Int(-7), Value::Int(0), Value::Null],
        vec![Value::Int(3), Value::Int(4), Value::str("")],
    ];
    // Longer than a row, with strings where the new row has numbers.
    let mut scratch = vec![Value::str("left over"); 5];
    for r in &rows {
        let mut b = Vec::new();
        encode_row(&def, r, &mut b);
        decode_row_into(&def, &b, &mut scratch, None).expect("decodes");
        assert_eq!(&scratch, r);
        assert_eq!(decode_row(&def, &b).as_ref(), Some(r));
    }
}

#[test]
fn interleaved_ascending_runs_fill_their_pages() {
    // Two loaders appending to two key ranges at once (a table loaded in halves): the
    // lower run's leaves are never the rightmost of the tree, yet each of its inserts
    // follows the leaf's previous one, so it too splits at the insertion point.
    let interleaved = tablespace_bytes((1..=1500).flat_map(|i| [i, 100_000 + i]));
    let descending = tablespace_bytes((1..=3000).rev());
    assert!(
        (interleaved as f64) < 0.7 * descending as f64,
        "interleaved {interleaved} bytes, descending {descending} bytes"
    );
    // Unequal rates: the lower run soon inserts in front of the upper run's first keys
    // in the same leaf, not past its end; it must still fill its pages.
    let interleaved = tablespace_bytes((1..=2250).flat_map(|i| {
        if i % 3 == 0 {
            vec![i, 100_000 + i]
        } else {
            vec![i]
        }
    }));
    let descending = tablespace_bytes((1..=3000).rev());
    assert!(
        (interleaved as f64) < 0.7 * descending as f64,
        "interleaved {interleaved} bytes, descending {descending} bytes"
    );
}

#[test]
fn a_corrupt_page_is_reported_with_its_table_and_page_number() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (e, t) = setup(dir.path(), true);
        for i in 1..=300 {
            autocommit(|txn| t.insert(txn, &mut row(i, i, &format!("{i}"))).map(|_| ())).unwrap();
        }
        e.purge_all();
        e.flush().unwrap();
    }
    // Flip one byte inside page 1 (the clustered index's root) on disk.
    let file = dir.path().join("d").join("t.ibd");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[4096 + 200] ^= 0x5A;
    std::fs::write(&file, &bytes).unwrap();
    // Opening reads the clustered index (for AUTO_INCREMENT) and meets the bad page.
    let e = BtreeEngine::open(dir.path(), small()).unwrap();
    let err = match e.open_table(Arc::new(sbtest()), &dir.path().join("d").join("t")) {
        Err(err) => err,
        Ok(_) => panic!("a corrupt root page went unnoticed"),
    };
    assert_eq!(err.code(), 1194, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("d.t") && msg.contains("page 1"), "{msg}");
    assert!(msg.contains("checksum"), "{msg}");
}

#[test]
fn o_direct_tablespaces_read_and_write() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let cfg = BtreeConfig {
        direct_io: true,
        ..small()
    };
    let def = Arc::new(sbtest());
    let stem = dir.path().join("d").join("t");
    {
        let e = match BtreeEngine::open(dir.path(), cfg.clone()) {
            Ok(e) => e,
            Err(err) => panic!("{err}"),
        };
        if let Err(err) = e.create_table(&def, &stem) {
            // tmpfs and some container filesystems refuse O_DIRECT (EINVAL).
            if err.to_string().contains("Invalid argument") {
                eprintln!("O_DIRECT not supported here: {err}");
                return;
            }
            panic!("{err}");
        }
        let t = e.open_table(def.clone(), &stem).unwrap();
        for i in 1..=2000 {
            autocommit(|txn| {
                t.insert(txn, &mut row(i, i % 9, &format!("direct {i}")))
                    .map(|_| ())
            })
            .unwrap();
        }
        e.flush().unwrap();
    }
    let e = BtreeEngine::open(dir.path(), cfg).unwrap();
    let t = e.open_table(def, &stem).unwrap();
    assert_eq!(all(&t, &Txn::default()).len(), 2000);
    t.check(&Txn::default()).unwrap();
}

fn status(e: &BtreeEngine, name: &str) -> u64 {
    match e.status_vars().into_iter().find(|(n, _)| n == name) {
        Some((_, v)) => v,
        None => panic!("no status variable {name}"),
    }
}

fn var(e: &BtreeEngine, name: &str) -> Value {
    match e.variables().into_iter().find(|v| v.name == name) {
        Some(v) => v.value,
        None => panic!("no variable {name}"),
    }
}

/// `innodb_sync_spin_loops` and `innodb_spin_wait_delay` come from the config, show,
/// reject bad values, and change how the engine's latches wait: a read blocked on a
/// page latch sleeps without spinning at 0, and spins its rounds first at 30.
#[test]
fn spin_variables_change_how_page_latches_wait() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = BtreeConfig {
        sync_spin_loops: 0,
        ..small()
    };
    let e = BtreeEngine::open(dir.path(), cfg).unwrap();
    let def = sbtest();
    let stem = dir.path().join("d").join("t");
    e.create_table(&def, &stem).unwrap();
    let t = e.open_table(Arc::new(def), &stem).unwrap();
    for i in 1..=20 {
        autocommit(|txn| t.insert(txn, &mut row(i, i, &format!("r{i}"))).map(|_| ())).unwrap();
    }
    assert_eq!(var(&e, "innodb_sync_spin_loops"), Value::UInt(0));
    assert_eq!(var(&e, "innodb_spin_wait_delay"), Value::UInt(6));
    for (name, bad) in [
        ("innodb_sync_spin_loops", Value::Int(-1)),
        ("innodb_sync_spin_loops", Value::UInt(1 << 32)),
        ("innodb_spin_wait_delay", Value::UInt(1001)),
        ("innodb_spin_wait_delay", Value::Null),
    ] {
        let err = e.set_variable(name, &bad).unwrap_err();
        assert_eq!(err.code(), 1231, "{name} = {bad:?}: {err}");
    }

    let space = e
        .inner
        .spaces
        .id_of(&stem.with_extension("ibd"))
        .expect("the table's space");
    let pool = e.inner.st.pool.clone();
    // Holds every page of the table X-latched while a reader tries to scan it; returns
    // how the reader's shared-latch waits moved.
    let blocked_scan = |t: &Arc<dyn Table>| -> (u64, u64) {
        let (rounds, sleeps) = (
            status(&e, "Innodb_rwlock_s_spin_rounds"),
            status(&e, "Innodb_rwlock_s_os_waits"),
        );
        let held: Vec<_> = (0..pool.space_pages(space))
            .map(|p| pool.write(PageId::new(space, p)).unwrap())
            .collect();
        let reader = {
            let t = t.clone();
            std::thread::spawn(move || all(&t, &Txn::default()).len())
        };
        std::thread::sleep(Duration::from_millis(300));
        drop(held);
        assert_eq!(reader.join().unwrap(), 20);
        (
            status(&e, "Innodb_rwlock_s_spin_rounds") - rounds,
            status(&e, "Innodb_rwlock_s_os_waits") - sleeps,
        )
    };

    let (rounds, sleeps) = blocked_scan(&t);
    assert_eq!(rounds, 0, "spinning is off");
    assert!(sleeps >= 1, "the blocked reader must have slept");

    e.set_variable("innodb_sync_spin_loops", &Value::Int(30))
        .unwrap();
    e.set_variable("innodb_spin_wait_delay", &Value::str("1"))
        .unwrap();
    assert_eq!(var(&e, "innodb_sync_spin_loops"), Value::UInt(30));
    assert_eq!(var(&e, "innodb_spin_wait_delay"), Value::UInt(1));
    let (rounds, sleeps) = blocked_scan(&t);
    assert!(rounds >= 30, "30 spin rounds before sleeping, got {rounds}");
    assert!(sleeps >= 1, "a 300 ms hold outlasts the spinning");
}

#[test]
fn rollback_to_a_savepoint_restores_rows_and_indexes_and_keeps_locks() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    autocommit(|txn| t.insert(txn, &mut row(1, 1, "one")).map(|_| ())).unwrap();
    let txn = Txn::default();
    t.insert(&txn, &mut row(2, 2, "two")).unwrap();
    txn.set_savepoint("a");
    t.update(&txn, 0, &row(1, 1, "one"), &row(1, 5, "uno"))
        .unwrap();
    t.delete(&txn, 0, &row(2, 2, "two")).unwrap();
    // Enough rows to split 4 KiB pages, so the undo crosses structure changes.
    for i in 10..400 {
        t.insert(&txn, &mut row(i, i % 7, &format!("r{i}")))
            .unwrap();
    }
    txn.set_savepoint("b");
    t.insert(&txn, &mut row(1000, 3, "x")).unwrap();
    assert!(txn.rollback_to_savepoint("a").unwrap());
    assert_eq!(all(&t, &txn), vec![row(1, 1, "one"), row(2, 2, "two")]);
    assert_eq!(by_k(&t, &txn, 1, false), vec![1]);
    assert_eq!(by_k(&t, &txn, 2, false), vec![2]);
    assert_eq!(by_k(&t, &txn, 5, false), Vec::<i64>::new());
    assert_eq!(by_k(&t, &txn, 3, false), Vec::<i64>::new());
    // b was later than a: gone.
    assert!(!txn.rollback_to_savepoint("b").unwrap());
    // The unique value an undone insert used is free again.
    t.insert(&txn, &mut row(400, 4, "r10")).unwrap();
    // The row lock the undone update took is still held, as in InnoDB.
    let other = Txn::new(Isolation::RepeatableRead, Duration::from_millis(100));
    let blocked = t.update(&other, 0, &row(1, 1, "one"), &row(1, 9, "nine"));
    assert!(
        matches!(blocked, Err(Error::LockWaitTimeout)),
        "{blocked:?}"
    );
    other.rollback().unwrap();
    t.check(&txn).unwrap();
    txn.commit().unwrap();
    let expect = vec![row(1, 1, "one"), row(2, 2, "two"), row(400, 4, "r10")];
    assert_eq!(all(&t, &Txn::default()), expect);
    e.purge_all();
    assert_eq!(e.history_length(), 0);
    t.check(&Txn::default()).unwrap();
    assert_eq!(by_k(&t, &Txn::default(), 4, false), vec![400]);
}

#[test]
fn a_row_mark_undoes_the_half_done_move_of_a_row_that_met_a_duplicate() {
    // UPDATE IGNORE's case: a row whose primary key changes is deleted at its old key
    // before it is inserted at the new one; the insert then meets a duplicate on the
    // unique `c`. Rolling back to the row's mark must bring the old row back, with its
    // index entries, and leave the statement's earlier rows changed.
    let dir = tempfile::tempdir().unwrap();
    let (_e, t) = setup(dir.path(), true);
    for (id, c) in [(1, "one"), (2, "two"), (3, "three")] {
        autocommit(|txn| t.insert(txn, &mut row(id, id, c)).map(|_| ())).unwrap();
    }
    let txn = Txn::default();
    txn.begin_statement();
    t.update(&txn, 0, &row(3, 3, "three"), &row(3, 30, "drei"))
        .unwrap();
    let mark = txn.row_mark();
    let dup = t.update(&txn, 0, &row(1, 1, "one"), &row(10, 1, "two"));
    assert!(matches!(dup, Err(Error::DuplicateKey { .. })), "{dup:?}");
    // Half done: the old row is gone (what a skipped row must not leave behind).
    assert!(!all(&t, &txn).contains(&row(1, 1, "one")));
    txn.rollback_to_row_mark(&mark).unwrap();
    let expect = vec![row(1, 1, "one"), row(2, 2, "two"), row(3, 30, "drei")];
    assert_eq!(all(&t, &txn), expect);
    assert_eq!(by_k(&t, &txn, 1, false), vec![1]);
    assert_eq!(by_k(&t, &txn, 30, false), vec![3]);
    assert_eq!(by_k(&t, &txn, 2, false), vec![2]);
    // (No CHECK TABLE here: row 3's old `k` entry is stale while the transaction is
    // open, which the check reports once purge has nothing left to do.)
    // The next row of the statement goes on from there.
    t.update(&txn, 0, &row(2, 2, "two"), &row(2, 2, "zwei"))
        .unwrap();
    txn.end_statement(true).unwrap();
    txn.commit().unwrap();
    let expect = vec![row(1, 1, "one"), row(2, 2, "zwei"), row(3, 30, "drei")];
    assert_eq!(all(&t, &Txn::default()), expect);
    t.check(&Txn::default()).unwrap();
}

#[test]
fn a_consistent_snapshot_is_taken_at_start_not_at_the_first_read() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    let snap = Txn::default();
    assert!(e.start_consistent_snapshot(&snap).unwrap());
    let lazy = Txn::default();
    autocommit(|txn| t.insert(txn, &mut row(1, 1, "one")).map(|_| ())).unwrap();
    assert_eq!(all(&t, &snap), Vec::<Vec<Value>>::new());
    assert_eq!(all(&t, &lazy), vec![row(1, 1, "one")]);
    // Outside REPEATABLE READ the clause has no effect (the session warns).
    let rc = Txn::new(Isolation::ReadCommitted, Duration::from_secs(5));
    assert!(!e.start_consistent_snapshot(&rc).unwrap());
    for t in [snap, lazy, rc] {
        t.commit().unwrap();
    }
}

#[test]
fn serializable_locks_plain_reads_except_an_autocommitted_statement() {
    let dir = tempfile::tempdir().unwrap();
    let (_e, t) = setup(dir.path(), true);
    autocommit(|txn| t.insert(txn, &mut row(1, 1, "one")).map(|_| ())).unwrap();
    // An open writer holds row 1 exclusively.
    let writer = Txn::default();
    t.update(&writer, 0, &row(1, 1, "one"), &row(1, 2, "two"))
        .unwrap();
    let short = Duration::from_millis(100);
    let single = Txn::new(Isolation::Serializable, short);
    single.set_single_statement(true);
    assert_eq!(all(&t, &single), vec![row(1, 1, "one")]);
    let multi = Txn::new(Isolation::Serializable, short);
    let mut seen = 0;
    let r = t.scan(&multi, &mut |_, _| {
        seen += 1;
        Ok(Flow::Continue)
    });
    assert!(matches!(r, Err(Error::LockWaitTimeout)), "{r:?}");
    for t in [writer, single, multi] {
        t.rollback().unwrap();
    }
}

/// An online index build (`online.rs`): changes made after the build starts — before
/// its snapshot, after it, and one rolled back — all end up right in the new indexes,
/// whose entries are sorted in spilled runs (a 64 KiB sort buffer) and bulk-loaded into
/// several levels of 4 KiB pages; CHECK TABLE agrees, and a duplicate for a new unique
/// index is 1062.
#[test]
fn online_index_build_captures_concurrent_changes() {
    let dir = tempfile::tempdir().unwrap();
    let full = sbtest();
    let mut base = full.clone();
    base.indexes.truncate(1);
    let (e, t) = setup_def(dir.path(), true, base.clone());
    let mut model: BTreeMap<i64, (i64, String)> = BTreeMap::new();
    for chunk in (1..=20_000i64).collect::<Vec<_>>().chunks(1000) {
        autocommit(|txn| {
            for &i in chunk {
                let c = format!("c{i:06}");
                t.insert(txn, &mut row(i, i % 97, &c))?;
                model.insert(i, (i % 97, c));
            }
            Ok(())
        })
        .unwrap();
    }
    let opts = IndexBuildOptions {
        tmpdir: dir.path().to_path_buf(),
        interrupt: Interrupt::default(),
    };
    let change = |t: &Arc<dyn Table>, model: &mut BTreeMap<i64, (i64, String)>, from: i64| {
        autocommit(|txn| {
            for i in (from..from + 600).step_by(3) {
                let (k, c) = model[&i].clone();
                let new = row(i, k + 1000, &c);
                t.update(txn, 0, &row(i, k, &c), &new)?;
                model.insert(i, (k + 1000, c));
                let d = i + 1;
                let (dk, dc) = model.remove(&d).unwrap();
                t.delete(txn, 0, &row(d, dk, &dc))?;
                let n = 100_000 + i;
                let nc = format!("n{n}");
                t.insert(txn, &mut row(n, 7, &nc))?;
                model.insert(n, (7, nc));
            }
            Ok(())
        })
        .unwrap();
        // A change rolled back leaves nothing behind.
        let txn = Txn::new(Isolation::RepeatableRead, Duration::from_secs(5));
        let (k, c) = model[&(from + 2)].clone();
        t.update(&txn, 0, &row(from + 2, k, &c), &row(from + 2, 55_555, &c))
            .unwrap();
        t.insert(&txn, &mut row(from + 900_000, 1, "gone")).unwrap();
        txn.rollback().unwrap();
    };
    let mut build = t.begin_index_build(&full, &opts).unwrap().unwrap();
    change(&t, &mut model, 1_000);
    assert_eq!(build.load().unwrap(), 20_000);
    change(&t, &mut model, 5_000);
    build.finish().unwrap();
    drop(build);
    drop(t);
    let t = e
        .open_table(Arc::new(full.clone()), &dir.path().join("d").join("t"))
        .unwrap();
    let txn = Txn::default();
    t.check(&txn).unwrap();
    for k in [7, 1000 + 5, 12, 1000 + 96, 55_555] {
        let mut want: Vec<i64> = model
            .iter()
            .filter(|(_, v)| v.0 == k)
            .map(|(id, _)| *id)
            .collect();
        want.sort();
        assert_eq!(by_k(&t, &txn, k, false), want, "k = {k}");
    }
    // The unique index finds every row by its value.
    let mut n = 0;
    t.index_scan(&txn, 2, &KeyRange::all(), false, &mut |_, _| {
        n += 1;
        Ok(Flow::Continue)
    })
    .unwrap();
    assert_eq!(n, model.len());
    drop(txn);
    // A new unique index over duplicate values: 1062, and the table keeps its indexes.
    let mut dup = full.clone();
    dup.indexes.push(IndexDef {
        invisible: false,
        name: "k_u".into(),
        columns: vec![1],
        unique: true,
        primary: false,
        comment: String::new(),
    });
    let mut build = t.begin_index_build(&dup, &opts).unwrap().unwrap();
    let err = build.load().unwrap_err();
    assert_eq!(err.code(), 1062, "{err}");
    drop(build);
    // Nothing is left in tmpdir by the sorts but the engine's own files.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(left.is_empty());
}

/// AUTO_INCREMENT as InnoDB keeps it: a statement reserves values at once (the counter
/// passes them all), `n = 0` only raises the counter, and an explicit value refused for
/// a duplicate key leaves the counter where it was.
#[test]
fn auto_increment_reservations_and_refused_explicit_values() {
    let dir = tempfile::tempdir().unwrap();
    let (_e, t) = setup(dir.path(), true);
    let txn = Txn::default();
    assert_eq!(t.reserve_auto_increment(3, 0), Some(1));
    assert_eq!(t.status().auto_increment, 4);
    assert_eq!(t.reserve_auto_increment(2, 10), Some(10));
    assert_eq!(t.status().auto_increment, 12);
    assert_eq!(t.reserve_auto_increment(0, 20), Some(20));
    assert_eq!(t.status().auto_increment, 20);
    t.insert(&txn, &mut row(1, 1, "one")).unwrap();
    // A duplicate on the unique `c` with a larger explicit id: refused, counter kept.
    let dup = t.insert(&txn, &mut row(100, 2, "one"));
    assert!(matches!(dup, Err(Error::DuplicateKey { .. })), "{dup:?}");
    assert_eq!(t.status().auto_increment, 20);
    t.insert(&txn, &mut row(50, 3, "fifty")).unwrap();
    assert_eq!(t.status().auto_increment, 51);
    txn.commit().unwrap();
}

/// Ascending probes of an index, as a join makes them, between inserts that split the
/// leaves the probes hinted at (`tree::LeafHints`): each probe gives exactly the
/// model's rows, in both directions, also when the hinted leaf no longer holds the
/// range or has become an internal level's neighbour.
#[test]
fn index_probes_agree_with_the_model_while_hinted_leaves_split() {
    let dir = tempfile::tempdir().unwrap();
    let (_e, t) = setup(dir.path(), true);
    let mut model: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(13);
    let mut next_id = 1i64;
    for round in 0..12 {
        // A batch of inserts with random k: splits leaves all over the index.
        autocommit(|txn| {
            for _ in 0..150 {
                let k = rng.gen_range(0..60);
                let mut r = row(next_id, k, &format!("{next_id:0>40}"));
                t.insert(txn, &mut r)?;
                model.entry(k).or_default().push(next_id);
                next_id += 1;
            }
            Ok(())
        })
        .unwrap();
        let txn = Txn::default();
        // Ascending probes (the hint's best case), then a few out of order.
        let mut ks: Vec<i64> = (0..60).collect();
        if round % 3 == 2 {
            ks.reverse();
        }
        for k in ks.into_iter().chain([7, 3, 59, 0, 31]) {
            let want = model.get(&k).cloned().unwrap_or_default();
            assert_eq!(by_k(&t, &txn, k, false), want, "k = {k}, round {round}");
            let mut rev = want.clone();
            rev.reverse();
            assert_eq!(
                by_k(&t, &txn, k, true),
                rev,
                "k = {k} reverse, round {round}"
            );
        }
        // Ranges of the primary key, ascending, of a few rows each.
        for lo in (1..next_id).step_by(37) {
            let key = |v: i64| {
                let def = t.def().clone();
                let mut b = Vec::new();
                assert!(encode_prefix(
                    &mut b,
                    &def,
                    &def.indexes[0],
                    &[Value::Int(v)]
                ));
                b
            };
            let range = KeyRange {
                start: std::ops::Bound::Included(key(lo)),
                end: std::ops::Bound::Excluded(key(lo + 5)),
            };
            let mut got = Vec::new();
            t.index_scan(&txn, 0, &range, false, &mut |_, r| {
                got.push(r[0].to_i64().unwrap());
                Ok(Flow::Continue)
            })
            .unwrap();
            let want: Vec<i64> = (lo..=(lo + 4).min(next_id - 1)).collect();
            assert_eq!(got, want, "primary key range from {lo}, round {round}");
        }
    }
}

/// With a tiny memory bound, old versions go to the undo spill file: an old read view
/// reads them back, rollback restores from them, purge empties the file.
#[test]
fn old_versions_spill_to_the_undo_file_and_come_back() {
    let dir = tempfile::tempdir().unwrap();
    // A log large enough for the big transaction below: its undo is only in the log,
    // so a log it outgrows stalls it (a limit of its own, not the spill's).
    let e = BtreeEngine::open(
        dir.path(),
        BtreeConfig {
            log_file_size: 32 << 20,
            ..small()
        },
    )
    .unwrap();
    let stem = dir.path().join("d").join("t");
    e.create_table(&sbtest(), &stem).unwrap();
    let t = e.open_table(Arc::new(sbtest()), &stem).unwrap();
    e.set_variable("strata_undo_memory_size", &Value::Int(64 << 10))
        .unwrap();
    // c is unique in sbtest(): each row's own.
    let pad = |i: i64| format!("{i}{}", "p".repeat(200));
    for i in 1..=2000 {
        autocommit(|txn| t.insert(txn, &mut row(i, i, &pad(i))).map(|_| ())).unwrap();
    }
    e.purge_all();
    let reader = Txn::default();
    assert_eq!(all(&t, &reader).len(), 2000);
    for round in 0..4 {
        for i in 1..=2000 {
            let old = row(i, i + round, &pad(i));
            let new = row(i, i + round + 1, &pad(i));
            autocommit(|txn| t.update(txn, 0, &old, &new).map(|_| ())).unwrap();
        }
    }
    let spill = e.inner.trx.versions.spill().unwrap();
    assert!(spill.entries() > 7000, "{}", spill.entries());
    assert!(e.inner.trx.versions.memory_bytes() <= 64 << 10);
    let file = dir.path().join(crate::UNDO_SPILL_FILE);
    assert!(std::fs::metadata(&file).unwrap().len() >= crate::undo_spill::SEG_SIZE as u64);
    // The reader walks back four versions per row, mostly from the file.
    let snap = all(&t, &reader);
    assert_eq!(snap.len(), 2000);
    assert!(
        snap.iter().all(|r| r[0] == r[1]),
        "the snapshot sees k = id"
    );
    assert!(spill.read_back.load(Ordering::Relaxed) > 0);
    // A large transaction whose undo is spilled rolls back every row.
    let big = Txn::default();
    big.begin_statement();
    for i in 1..=2000 {
        let old = row(i, i + 4, &pad(i));
        t.update(&big, 0, &old, &row(i, -i, &format!("changed{i}")))
            .unwrap();
    }
    for i in 2001..=3000 {
        t.insert(&big, &mut row(i, i, &pad(i))).unwrap();
    }
    big.end_statement(true).unwrap();
    big.rollback().unwrap();
    let now = all(&t, &Txn::default());
    assert_eq!(now.len(), 2000);
    assert!(now
        .iter()
        .all(|r| r[1].to_i64() == r[0].to_i64().map(|i| i + 4)
            && r[2] == Value::str(&pad(r[0].to_i64().unwrap_or(0)))));
    assert_eq!(by_k(&t, &Txn::default(), 54, false), vec![50]);
    reader.commit().unwrap();
    e.purge_all();
    assert_eq!(e.inner.trx.versions.len(), 0);
    assert!(!spill.active());
    assert_eq!(
        std::fs::metadata(&file).unwrap().len(),
        0,
        "purge empties the file"
    );
    t.check(&Txn::default()).unwrap();
}

/// A spill file that cannot be written fails the change with 1114; the server's data is
/// unchanged and writes succeed again once the file can be written.
#[test]
fn a_full_undo_file_fails_the_statement_not_the_engine() {
    struct Full {
        f: strata_storage::io::MemFile,
        full: std::sync::atomic::AtomicBool,
    }
    impl FileIo for Full {
        fn len(&self) -> std::io::Result<u64> {
            self.f.len()
        }
        fn read_at(&self, b: &mut [u8], o: u64) -> std::io::Result<()> {
            self.f.read_at(b, o)
        }
        fn write_at(&self, d: &[u8], o: u64) -> std::io::Result<()> {
            if self.full.load(Ordering::SeqCst) {
                return Err(std::io::ErrorKind::StorageFull.into());
            }
            self.f.write_at(d, o)
        }
        fn set_len(&self, l: u64) -> std::io::Result<()> {
            self.f.set_len(l)
        }
        fn sync_data(&self) -> std::io::Result<()> {
            self.f.sync_data()
        }
    }
    let io = Arc::new(Full {
        f: strata_storage::io::MemFile::new(),
        full: true.into(),
    });
    // A version store whose every version spills (bound 0) to a file on a full disk.
    let own = crate::trx::VersionStore::default();
    own.set_spill(crate::undo_spill::UndoSpill::open(io.clone()).unwrap());
    own.set_limit(0);
    let mut err = None;
    for _ in 0..5000 {
        match own.put(crate::trx::OldVersion {
            value: Some(vec![1; 500]),
        }) {
            Ok(_) => {}
            Err(x) => {
                err = Some(x);
                break;
            }
        }
    }
    let err = err.expect("a full file fails a put");
    let mapped = crate::io_err("d.t", err);
    assert_eq!(mapped.code(), 1114, "{mapped}");
    io.full.store(false, Ordering::SeqCst);
    assert!(own
        .put(crate::trx::OldVersion {
            value: Some(vec![2; 10])
        })
        .is_ok());
}

/// With the bound at 0 every old version goes to the file, and the engine works as
/// before: reads, rollback, purge.
#[test]
fn a_zero_bound_spills_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    e.set_variable("strata_undo_memory_size", &Value::Int(0))
        .unwrap();
    autocommit(|txn| t.insert(txn, &mut row(1, 1, "a")).map(|_| ())).unwrap();
    let reader = Txn::default();
    assert_eq!(all(&t, &reader), vec![row(1, 1, "a")]);
    autocommit(|txn| {
        t.update(txn, 0, &row(1, 1, "a"), &row(1, 2, "b"))
            .map(|_| ())
    })
    .unwrap();
    assert_eq!(e.inner.trx.versions.memory_bytes(), 0);
    assert_eq!(all(&t, &reader), vec![row(1, 1, "a")]);
    assert_eq!(all(&t, &Txn::default()), vec![row(1, 2, "b")]);
    reader.commit().unwrap();
    e.purge_all();
    assert_eq!(e.inner.trx.versions.len(), 0);
}

/// A transaction whose redo is several times the log (4 MiB here) runs while the log
/// wraps: checkpoints copy its undo to the undo log instead of stopping at its first
/// record, so another connection's autocommits keep going. Killed before it commits,
/// it is rolled back at the next open from the undo log and the redo log, and recovery's
/// own rollback (redo again several times the log) checkpoints through the undo log
/// too; what the other connection committed stays.
#[test]
fn a_transaction_larger_than_the_redo_log_wraps_it_and_rolls_back_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let pad = "x".repeat(150);
    let committed = 5_000i64;
    let others;
    {
        let (e, t) = setup(dir.path(), true);
        for i in 1..=committed {
            autocommit(|txn| {
                t.insert(txn, &mut row(i, i % 7, &format!("{i} {pad}")))
                    .map(|_| ())
            })
            .unwrap();
        }
        let big = Txn::default();
        let stop = Arc::new(AtomicBool::new(false));
        let other = {
            let (t, stop) = (t.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0i64;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let id = 10_000_000 + n;
                    autocommit(|txn| {
                        t.insert(txn, &mut row(id, 1, &format!("other {id}")))
                            .map(|_| ())
                    })
                    .unwrap();
                    std::thread::sleep(Duration::from_millis(2));
                }
                n
            })
        };
        let start_lsn = e.inner.st.log.current_lsn();
        for i in 1..=committed {
            let old = row(i, i % 7, &format!("{i} {pad}"));
            t.update(
                &big,
                0,
                &old,
                &row(i, i % 7 + 100, &format!("{i} new {pad}")),
            )
            .unwrap();
        }
        for i in 1_000_000..1_040_000i64 {
            t.insert(&big, &mut row(i, i % 5, &format!("big {i} {pad}")))
                .unwrap();
        }
        let end_lsn = e.inner.st.log.current_lsn();
        assert!(
            end_lsn - start_lsn > 3 * (4 << 20),
            "the transaction wrote only {} bytes of redo",
            end_lsn - start_lsn
        );
        stop.store(true, Ordering::SeqCst);
        others = other.join().unwrap();
        assert!(
            others > 20,
            "the other connection committed only {others} rows"
        );
        // The checkpoint moved past the big transaction's first record.
        e.inner.checkpoint().unwrap();
        assert!(e.inner.st.log.checkpoint_lsn() > start_lsn);
        assert!(!e.inner.undo_log.is_empty());
        e.inner.st.log.flush_up_to(end_lsn).unwrap();
        std::mem::forget(big);
        drop(t);
        drop(e);
    }
    let check = |e: &BtreeEngine, t: &Arc<dyn Table>| {
        let rows = all(t, &Txn::default());
        assert_eq!(rows.len() as i64, committed + others);
        for r in rows.iter().take(committed as usize) {
            let i = r[0].to_i64().unwrap();
            assert_eq!(r, &row(i, i % 7, &format!("{i} {pad}")));
        }
        e.purge_all();
        t.check(&Txn::default()).unwrap();
    };
    {
        let (e, t) = setup(dir.path(), false);
        check(&e, &t);
        // Nothing open: the next checkpoint empties the undo log.
        e.inner.checkpoint().unwrap();
        assert!(e.inner.undo_log.is_empty());
    }
    let (e, t) = setup(dir.path(), false);
    check(&e, &t);
}

/// A transaction of 50,000 changes with a change-list tail of 100: its older changes go
/// to the list's file (a checkpoint copies them from there as the 4 MiB log wraps), a
/// savepoint rollback crossing into the file undoes exactly what followed it, ROLLBACK
/// restores every row, and a committed one of the same size is purged from its file.
#[test]
fn a_large_transaction_keeps_its_change_list_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    e.set_variable("strata_change_list_tail", &Value::Int(100))
        .unwrap();
    for i in 1..=2000 {
        autocommit(|txn| {
            t.insert(txn, &mut row(i, i % 50, &format!("b{i}")))
                .map(|_| ())
        })
        .unwrap();
    }
    e.purge_all();
    let base = all(&t, &Txn::default());
    let written0 = status(&e, "Strata_change_list_segments_written");
    let txn = Txn::default();
    // Not a multiple of the 50-change segments: the savepoint falls inside one.
    for i in 0..30_017 {
        t.insert(&txn, &mut row(100_000 + i, 7, &format!("n{i}")))
            .unwrap();
    }
    let after_a: Vec<Vec<Value>> = all(&t, &txn);
    txn.set_savepoint("a");
    for i in 1..=2000 {
        t.update(
            &txn,
            0,
            &row(i, i % 50, &format!("b{i}")),
            &row(i, 1000 + i, &format!("u{i}")),
        )
        .unwrap();
    }
    for i in 30_017..48_000 {
        t.insert(&txn, &mut row(100_000 + i, 8, &format!("n{i}")))
            .unwrap();
    }
    let big = BtreeTrx::with(&e.inner, &txn, |bt| {
        let s = bt.state.lock();
        Ok((s.undo.len(), s.undo.has_file()))
    })
    .unwrap();
    assert_eq!(big, (50_000, true));
    assert!(status(&e, "Strata_change_list_segments_written") - written0 >= 900);
    // 100 changes in memory, not 50,000 (~3.5 MB as vectors).
    let held = e.inner.changes.memory_bytes();
    assert!(held > 0 && held < 64 << 10, "{held}");
    // Checkpoints copy the list to the undo log from the file.
    e.inner.checkpoint().unwrap();
    let read0 = status(&e, "Strata_change_list_segments_read");
    assert!(txn.rollback_to_savepoint("a").unwrap());
    assert!(status(&e, "Strata_change_list_segments_read") > read0);
    assert_eq!(all(&t, &txn), after_a);
    let eights: Vec<i64> = (1..=2000).filter(|i| i % 50 == 8).collect();
    assert_eq!(
        by_k(&t, &txn, 8, false),
        eights,
        "no k = 8 from after the savepoint"
    );
    assert_eq!(by_k(&t, &txn, 7, false).len(), 30_057);
    let threes: Vec<i64> = (1..=2000).filter(|i| i % 50 == 3).collect();
    assert_eq!(by_k(&t, &txn, 3, false), threes);
    // Again past the savepoint, then everything.
    for i in 1..=500 {
        t.delete(&txn, 0, &row(i, i % 50, &format!("b{i}")))
            .unwrap();
    }
    txn.rollback().unwrap();
    assert_eq!(all(&t, &Txn::default()), base);
    assert_eq!(by_k(&t, &Txn::default(), 7, false).len(), 40);
    t.check(&Txn::default()).unwrap();
    e.purge_all();
    assert_eq!(e.inner.changes.memory_bytes(), 0);

    // Committed: purge walks the batch from its file, oldest first.
    let txn = Txn::default();
    for i in 0..50_000 {
        t.insert(&txn, &mut row(200_000 + i, 9, &format!("m{i}")))
            .unwrap();
    }
    txn.commit().unwrap();
    e.purge_all();
    assert_eq!(e.history_length(), 0);
    assert_eq!(e.inner.trx.versions.len(), 0);
    assert_eq!(e.inner.changes.memory_bytes(), 0);
    assert_eq!(all(&t, &Txn::default()).len(), 52_000);
    t.check(&Txn::default()).unwrap();
    // No file left behind in the data directory.
    let left = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(crate::change_list::FILE_PREFIX)
        })
        .count();
    assert_eq!(left, 0);
}

/// A change list that cannot write its older part (a full disk) fails the statement
/// with 1114 before the change is made; the transaction rolls back whole.
#[test]
fn a_full_disk_under_a_change_list_fails_the_statement_and_rollback_is_whole() {
    struct Full(strata_storage::io::MemFile);
    impl FileIo for Full {
        fn len(&self) -> std::io::Result<u64> {
            self.0.len()
        }
        fn read_at(&self, b: &mut [u8], o: u64) -> std::io::Result<()> {
            self.0.read_at(b, o)
        }
        fn write_at(&self, d: &[u8], o: u64) -> std::io::Result<()> {
            // Room for the first few segments only.
            if o + d.len() as u64 > 16 << 10 {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            self.0.write_at(d, o)
        }
        fn set_len(&self, l: u64) -> std::io::Result<()> {
            self.0.set_len(l)
        }
        fn sync_data(&self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    e.set_variable("strata_change_list_tail", &Value::Int(64))
        .unwrap();
    e.inner.changes.set_file_maker(Arc::new(|| {
        Ok(Arc::new(Full(strata_storage::io::MemFile::new())) as Arc<dyn FileIo>)
    }));
    for i in 1..=100 {
        autocommit(|txn| t.insert(txn, &mut row(i, 1, &format!("b{i}"))).map(|_| ())).unwrap();
    }
    let base = all(&t, &Txn::default());
    let txn = Txn::default();
    let mut done = 0;
    let err = loop {
        txn.begin_statement();
        let r = t.insert(&txn, &mut row(1000 + done, 2, &format!("n{done}")));
        txn.end_statement(r.is_ok()).unwrap();
        match r {
            Ok(_) => done += 1,
            Err(e) => break e,
        }
        assert!(done < 100_000, "the file never filled");
    };
    assert_eq!(err.code(), 1114, "{err}");
    // The failed statement made no change; the ones before it are all there.
    assert_eq!(all(&t, &txn).len(), 100 + done as usize);
    assert!(done > 300, "{done}");
    txn.rollback().unwrap();
    assert_eq!(all(&t, &Txn::default()), base);
    t.check(&Txn::default()).unwrap();
}

/// Inserts hold their rows by the transaction id in the record (InnoDB's implicit lock,
/// `lock.rs`): a transaction inserting many rows leaves no lock entry per row, yet
/// another transaction wanting one of its rows — by primary key or by unique value, to
/// insert, update or lock it — waits for it to end, then sees what it did.
#[test]
fn inserted_rows_are_locked_by_their_writer_without_a_lock_entry() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    let short = Duration::from_millis(100);
    let bulk = Txn::default();
    for i in 1..=2000 {
        t.insert(&bulk, &mut row(i, i % 10, &format!("c{i}")))
            .unwrap();
    }
    assert_eq!(status(&e, "Strata_btree_row_locks"), 0);
    // Each way to reach an inserted row waits, and times out while the writer runs.
    let other = Txn::new(Isolation::RepeatableRead, short);
    let dup_pk = t.insert(&other, &mut row(5, 0, "new"));
    assert!(matches!(dup_pk, Err(Error::LockWaitTimeout)), "{dup_pk:?}");
    let dup_unique = t.insert(&other, &mut row(9000, 0, "c7"));
    assert!(
        matches!(dup_unique, Err(Error::LockWaitTimeout)),
        "{dup_unique:?}"
    );
    let upd = t.update(&other, 0, &row(6, 6, "c6"), &row(6, 6, "six"));
    assert!(matches!(upd, Err(Error::LockWaitTimeout)), "{upd:?}");
    let del = t.delete(&other, 0, &row(8, 8, "c8"));
    assert!(matches!(del, Err(Error::LockWaitTimeout)), "{del:?}");
    other.set_read_mode(ReadMode::LockShared);
    let locked = t.scan(&other, &mut |_, _| Ok(Flow::Continue));
    assert!(matches!(locked, Err(Error::LockWaitTimeout)), "{locked:?}");
    other.rollback().unwrap();
    // Each wait turned the implicit lock it met into an entry held by the writer (rows
    // 5, 7, 6, 8 and the scan's first); the writer's end drops them.
    assert_eq!(status(&e, "Strata_btree_row_locks"), 5);
    let t2 = t.clone();
    let waiter = std::thread::spawn(move || {
        let w = Txn::new(Isolation::RepeatableRead, Duration::from_secs(20));
        let r = t2.insert(&w, &mut row(3, 0, "again"));
        w.rollback().unwrap();
        r.map(|_| ())
    });
    // The waiter's wait turns row 3's implicit lock into a sixth entry.
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while status(&e, "Strata_btree_row_locks") != 6 {
        assert!(std::time::Instant::now() < until, "the waiter never waited");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!waiter.is_finished());
    bulk.commit().unwrap();
    let r = waiter.join().unwrap();
    assert!(matches!(r, Err(Error::DuplicateKey { .. })), "{r:?}");
    no_row_locks_left(&e);
    assert_eq!(all(&t, &Txn::default()).len(), 2000);
    t.check(&Txn::default()).unwrap();
}

/// A waiter behind an insert that rolls back finds the key free: its own insert, of
/// the same primary key and unique value, goes in.
#[test]
fn a_waiter_behind_a_rolled_back_insert_takes_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    let a = Txn::default();
    t.insert(&a, &mut row(1, 1, "one")).unwrap();
    t.insert(&a, &mut row(2, 2, "two")).unwrap();
    let t2 = t.clone();
    let waiter = std::thread::spawn(move || {
        let b = Txn::new(Isolation::RepeatableRead, Duration::from_secs(20));
        t2.insert(&b, &mut row(1, 5, "five"))?;
        // Another primary key, the unique value a's second row held.
        t2.insert(&b, &mut row(7, 7, "two"))?;
        b.commit()
    });
    std::thread::sleep(Duration::from_millis(200));
    assert!(!waiter.is_finished());
    a.rollback().unwrap();
    waiter.join().unwrap().unwrap();
    assert_eq!(
        all(&t, &Txn::default()),
        vec![row(1, 5, "five"), row(7, 7, "two")]
    );
    no_row_locks_left(&e);
    e.purge_all();
    t.check(&Txn::default()).unwrap();
}

/// Waits for the lock table to empty: purge, working through what a commit left,
/// holds each row it cleans for a moment.
fn no_row_locks_left(e: &BtreeEngine) {
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while status(e, "Strata_btree_row_locks") != 0 {
        assert!(std::time::Instant::now() < until, "row locks left behind");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A transaction that read before its first write (its read view made while it had no
/// id) sees its own inserts, updates and deletes afterwards, through the clustered index
/// and a secondary one, as InnoDB sets the view's creator at the first write.
#[test]
fn a_transaction_sees_its_own_writes_made_after_its_first_read() {
    let dir = tempfile::tempdir().unwrap();
    let (_e, t) = setup(dir.path(), true);
    autocommit(|txn| t.insert(txn, &mut row(1, 1, "one")).map(|_| ())).unwrap();
    let txn = Txn::default();
    assert_eq!(all(&t, &txn), vec![row(1, 1, "one")]);
    t.insert(&txn, &mut row(2, 2, "two")).unwrap();
    t.update(&txn, 0, &row(1, 1, "one"), &row(1, 3, "uno"))
        .unwrap();
    assert_eq!(all(&t, &txn), vec![row(1, 3, "uno"), row(2, 2, "two")]);
    assert_eq!(by_k(&t, &txn, 2, false), vec![2]);
    assert_eq!(by_k(&t, &txn, 3, false), vec![1]);
    assert_eq!(by_k(&t, &txn, 1, false), Vec::<i64>::new());
    t.delete(&txn, 0, &row(2, 2, "two")).unwrap();
    assert_eq!(all(&t, &txn), vec![row(1, 3, "uno")]);
    // Another transaction's snapshot still reads the committed row only.
    let other = Txn::default();
    assert_eq!(all(&t, &other), vec![row(1, 1, "one")]);
    txn.commit().unwrap();
    assert_eq!(all(&t, &other), vec![row(1, 1, "one")]);
    other.commit().unwrap();
}

/// A transaction that locked rows with a locking read and then updated or deleted them
/// holds them by its id in their records: no lock entry per row is left, and another
/// transaction still waits for each of them until it ends.
#[test]
fn updated_and_deleted_rows_are_held_by_their_writer_without_a_lock_entry() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = setup(dir.path(), true);
    autocommit(|txn| {
        for i in 1..=500 {
            t.insert(txn, &mut row(i, i, &format!("c{i}")))?;
        }
        Ok(())
    })
    .unwrap();
    no_row_locks_left(&e);
    let txn = Txn::default();
    txn.set_read_mode(ReadMode::LockExclusive);
    let rows = all(&t, &txn);
    txn.set_read_mode(ReadMode::Consistent);
    assert_eq!(status(&e, "Strata_btree_row_locks"), 500);
    for r in &rows[..250] {
        let mut new = r.clone();
        new[1] = Value::Int(r[1].to_i64().unwrap() + 1000);
        t.update(&txn, 0, r, &new).unwrap();
    }
    for r in &rows[250..] {
        t.delete(&txn, 0, r).unwrap();
    }
    assert_eq!(status(&e, "Strata_btree_row_locks"), 0);
    let other = Txn::new(Isolation::RepeatableRead, Duration::from_millis(100));
    let upd = t.update(&other, 0, &rows[0], &row(1, 5, "x"));
    assert!(matches!(upd, Err(Error::LockWaitTimeout)), "{upd:?}");
    let del = t.delete(&other, 0, &rows[400]);
    assert!(matches!(del, Err(Error::LockWaitTimeout)), "{del:?}");
    let reinsert = t.insert(&other, &mut row(401, 0, "again"));
    assert!(
        matches!(reinsert, Err(Error::LockWaitTimeout)),
        "{reinsert:?}"
    );
    other.rollback().unwrap();
    txn.commit().unwrap();
    no_row_locks_left(&e);
    let after = Txn::default();
    t.update(&after, 0, &row(1, 1001, "c1"), &row(1, 5, "x"))
        .unwrap();
    after.commit().unwrap();
    assert_eq!(all(&t, &Txn::default()).len(), 250);
    e.purge_all();
    t.check(&Txn::default()).unwrap();
}
