//! Heap engine tests: rows and indexes against a `BTreeMap` model, unique keys,
//! AUTO_INCREMENT, space reuse, restart after a clean flush, repair after an unclean
//! close, and corrupt files reported by table name.

use super::*;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use strata_types::schema::ColumnDef;
use strata_types::{Collation, DataType, IndexDef};

fn col(name: &str, t: DataType, nullable: bool) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        data_type: t,
        nullable,
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

fn sbtest(varlen: bool) -> TableDef {
    let mut id = col("id", DataType::Int { unsigned: false }, false);
    id.auto_increment = true;
    TableDef {
        options: Default::default(),
        db: "d".into(),
        name: "t".into(),
        engine: "heap".into(),
        columns: vec![
            id,
            col("k", DataType::Int { unsigned: false }, false),
            col(
                "c",
                if varlen {
                    DataType::VarChar(120)
                } else {
                    DataType::Char(120)
                },
                true,
            ),
        ],
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
        ],
        auto_increment_start: 1,
        comment: String::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        instant: None,
        default_collation: Default::default(),
    }
}

fn open(engine: &HeapEngine, def: &TableDef, dir: &Path, create: bool) -> Result<Arc<dyn Table>> {
    let stem = dir.join("t");
    if create {
        engine.create_table(def, &stem)?;
    }
    engine.open_table(Arc::new(def.clone()), &stem)
}

fn range_ids(t: &Arc<dyn Table>, index: usize, range: KeyRange, reverse: bool) -> Vec<i64> {
    let mut out = vec![];
    t.index_scan(&Txn::default(), index, &range, reverse, &mut |_, r| {
        out.push(r[0].to_i64().unwrap());
        Ok(Flow::Continue)
    })
    .unwrap();
    out
}

fn key(def: &TableDef, ix: usize, v: i64) -> Vec<u8> {
    let mut k = vec![];
    strata_types::keycode::encode_prefix(&mut k, def, &def.indexes[ix], &[Value::Int(v)]);
    k
}

#[test]
fn model_check_rows_and_indexes() {
    for varlen in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let def = sbtest(varlen);
        let engine = HeapEngine::new(HeapConfig {
            key_buffer_size: 256 << 10,
            ..Default::default()
        });
        let t = open(&engine, &def, dir.path(), true).unwrap();
        let mut model: BTreeMap<i64, (i64, String, RowId)> = BTreeMap::new();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for step in 0..6000 {
            let op = rng.gen_range(0..10);
            if op < 6 || model.is_empty() {
                let k = rng.gen_range(0..50);
                let c = "x".repeat(rng.gen_range(0..100));
                let mut row = vec![Value::Null, Value::Int(k), Value::str(&c)];
                let ins = t.insert(&Txn::default(), &mut row).unwrap();
                let id = ins.generated_id.unwrap() as i64;
                model.insert(id, (k, c, ins.row_id));
            } else {
                let ids: Vec<i64> = model.keys().copied().collect();
                let id = ids[rng.gen_range(0..ids.len())];
                let (k, c, rid) = model[&id].clone();
                let old = vec![Value::Int(id), Value::Int(k), Value::str(&c)];
                if op < 8 {
                    let nk = rng.gen_range(0..50);
                    let nc = "y".repeat(rng.gen_range(0..120));
                    let new = vec![Value::Int(id), Value::Int(nk), Value::str(&nc)];
                    let nrid = t.update(&Txn::default(), rid, &old, &new).unwrap();
                    model.insert(id, (nk, nc, nrid));
                } else {
                    t.delete(&Txn::default(), rid, &old).unwrap();
                    model.remove(&id);
                }
            }
            if step % 1000 == 999 {
                let all = range_ids(&t, 0, KeyRange::all(), false);
                assert_eq!(all, model.keys().copied().collect::<Vec<_>>());
            }
        }
        assert_eq!(t.status().rows, model.len() as u64);
        // Primary ranges, both directions.
        let lo = key(&def, 0, 100);
        let hi = key(&def, 0, 900);
        let want: Vec<i64> = model.range(100..900).map(|(k, _)| *k).collect();
        let r = KeyRange {
            start: std::ops::Bound::Included(lo),
            end: std::ops::Bound::Excluded(hi),
        };
        assert_eq!(range_ids(&t, 0, r.clone(), false), want);
        let mut rev = want.clone();
        rev.reverse();
        assert_eq!(range_ids(&t, 0, r, true), rev);
        // Secondary equality lookups.
        for k in 0..50 {
            let mut got = range_ids(&t, 1, KeyRange::prefix(key(&def, 1, k)), false);
            got.sort();
            let want: Vec<i64> = model
                .iter()
                .filter(|(_, v)| v.0 == k)
                .map(|(id, _)| *id)
                .collect();
            assert_eq!(got, want, "k = {k}");
        }
        // Full scan matches, with the row ids the inserts returned.
        let mut n = 0;
        t.scan(&Txn::default(), &mut |rid, r| {
            let id = r[0].to_i64().unwrap();
            assert_eq!(model[&id].2, rid);
            n += 1;
            Ok(Flow::Continue)
        })
        .unwrap();
        assert_eq!(n, model.len());
    }
}

#[test]
fn unique_keys_and_auto_increment() {
    let dir = tempfile::tempdir().unwrap();
    let def = sbtest(false);
    let engine = HeapEngine::new(HeapConfig::default());
    let t = open(&engine, &def, dir.path(), true).unwrap();
    let mut r = vec![Value::Int(5), Value::Int(1), Value::Null];
    assert_eq!(
        t.insert(&Txn::default(), &mut r).unwrap().generated_id,
        None
    );
    // NULL asks for the next value (the SQL layer turns an explicit 0 into NULL
    // unless sql_mode has NO_AUTO_VALUE_ON_ZERO).
    let mut r = vec![Value::Null, Value::Int(1), Value::Null];
    assert_eq!(
        t.insert(&Txn::default(), &mut r).unwrap().generated_id,
        Some(6)
    );
    let mut dup = vec![Value::Int(5), Value::Int(2), Value::Null];
    match t.insert(&Txn::default(), &mut dup) {
        Err(Error::DuplicateKey { value, key }) => {
            assert_eq!((value.as_str(), key.as_str()), ("5", "t.PRIMARY"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(t.status().rows, 2);
    t.truncate().unwrap();
    let mut r = vec![Value::Null, Value::Int(1), Value::Null];
    assert_eq!(
        t.insert(&Txn::default(), &mut r).unwrap().generated_id,
        Some(1)
    );
}

#[test]
fn deleted_space_is_reused() {
    let dir = tempfile::tempdir().unwrap();
    let def = sbtest(false);
    let engine = HeapEngine::new(HeapConfig::default());
    let t = open(&engine, &def, dir.path(), true).unwrap();
    let mut ids = vec![];
    for i in 1..=100 {
        let mut r = vec![Value::Int(i), Value::Int(i), Value::str("abc")];
        ids.push(t.insert(&Txn::default(), &mut r).unwrap().row_id);
    }
    let len = t.status().data_length;
    for (i, rid) in ids.iter().enumerate() {
        t.delete(
            &Txn::default(),
            *rid,
            &[
                Value::Int(i as i64 + 1),
                Value::Int(i as i64 + 1),
                Value::str("abc"),
            ],
        )
        .unwrap();
    }
    for i in 1..=100 {
        let mut r = vec![Value::Int(i), Value::Int(i), Value::str("xyz")];
        t.insert(&Txn::default(), &mut r).unwrap();
    }
    assert_eq!(t.status().data_length, len);
}

#[test]
fn survives_restart_and_repairs_after_unclean_close() {
    let dir = tempfile::tempdir().unwrap();
    let def = sbtest(true);
    {
        let engine = HeapEngine::new(HeapConfig::default());
        let t = open(&engine, &def, dir.path(), true).unwrap();
        for i in 1..=3000 {
            let mut r = vec![
                Value::Null,
                Value::Int(i % 7),
                Value::str(&format!("row {i}")),
            ];
            t.insert(&Txn::default(), &mut r).unwrap();
        }
        engine.flush().unwrap();
    }
    {
        let engine = HeapEngine::new(HeapConfig::default());
        let t = open(&engine, &def, dir.path(), false).unwrap();
        assert_eq!(t.status().rows, 3000);
        assert_eq!(
            range_ids(&t, 1, KeyRange::prefix(key(&def, 1, 3)), false).len(),
            3000 / 7 + 1
        );
        // Modify without flushing: the table is left "open".
        let mut r = vec![Value::Null, Value::Int(3), Value::str("new")];
        t.insert(&Txn::default(), &mut r).unwrap();
    }
    let engine = HeapEngine::new(HeapConfig::default());
    let t = open(&engine, &def, dir.path(), false).unwrap();
    assert_eq!(t.status().rows, 3001);
    assert_eq!(range_ids(&t, 0, KeyRange::all(), false).len(), 3001);
    assert_eq!(
        range_ids(&t, 1, KeyRange::prefix(key(&def, 1, 3)), false).len(),
        3000 / 7 + 2
    );
    let mut r = vec![Value::Null, Value::Int(0), Value::Null];
    assert_eq!(
        t.insert(&Txn::default(), &mut r).unwrap().generated_id,
        Some(3002)
    );
}

#[test]
fn corrupt_or_truncated_files_name_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let def = sbtest(false);
    let engine = HeapEngine::new(HeapConfig::default());
    drop(open(&engine, &def, dir.path(), true).unwrap());
    let dp = dir.path().join("t.hdat");
    let mut bytes = std::fs::read(&dp).unwrap();
    bytes[20] ^= 0xFF;
    std::fs::write(&dp, &bytes).unwrap();
    match open(&engine, &def, dir.path(), false) {
        Err(Error::Corrupt { table, detail }) => {
            assert_eq!(table, "d.t");
            assert!(detail.contains("checksum"), "{detail}");
        }
        other => panic!("expected corruption, got {:?}", other.map(|_| ())),
    }
    std::fs::write(&dp, &bytes[..10]).unwrap();
    assert!(matches!(
        open(&engine, &def, dir.path(), false),
        Err(Error::Corrupt { .. })
    ));
}

#[test]
fn concurrent_readers() {
    let dir = tempfile::tempdir().unwrap();
    let def = sbtest(false);
    let engine = HeapEngine::new(HeapConfig::default());
    let t = open(&engine, &def, dir.path(), true).unwrap();
    for i in 1..=2000 {
        let mut r = vec![Value::Int(i), Value::Int(i), Value::str("c")];
        t.insert(&Txn::default(), &mut r).unwrap();
    }
    let threads: Vec<_> = (0..4)
        .map(|n| {
            let (t, def) = (t.clone(), def.clone());
            std::thread::spawn(move || {
                let _g = t.lock(LockMode::Read);
                for i in (1 + n..=2000).step_by(4) {
                    assert_eq!(
                        range_ids(&t, 0, KeyRange::prefix(key(&def, 0, i)), false),
                        vec![i]
                    );
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
}

#[test]
fn mixed_length_keys_split_safely_and_long_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut def = sbtest(true);
    def.columns[2].data_type = DataType::VarChar(1000);
    def.indexes.push(IndexDef {
        invisible: false,
        name: "c".into(),
        columns: vec![2],
        unique: false,
        primary: false,
        comment: String::new(),
    });
    let engine = HeapEngine::new(HeapConfig {
        key_buffer_size: 256 << 10,
        ..Default::default()
    });
    let t = open(&engine, &def, dir.path(), true).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for i in 0..3000 {
        let len = if rng.gen_bool(0.2) {
            rng.gen_range(600..900)
        } else {
            rng.gen_range(1..20)
        };
        let c: String = std::iter::repeat_n((b'a' + (i % 26) as u8) as char, len).collect();
        let mut row = vec![Value::Null, Value::Int(i), Value::str(&c)];
        t.insert(&Txn::default(), &mut row).unwrap();
    }
    assert_eq!(range_ids(&t, 2, KeyRange::all(), false).len(), 3000);
    let before = t.status();
    let mut row = vec![Value::Null, Value::Int(1), Value::str(&"z".repeat(1000))];
    assert_eq!(
        t.insert(&Txn::default(), &mut row).unwrap_err().code(),
        1235
    );
    assert_eq!(t.status().rows, before.rows);
    assert_eq!(t.status().data_length, before.data_length);
}

#[test]
fn check_passes_on_a_consistent_table() {
    let dir = tempfile::tempdir().unwrap();
    let def = sbtest(true);
    let engine = HeapEngine::new(HeapConfig::default());
    let t = open(&engine, &def, dir.path(), true).unwrap();
    let txn = Txn::default();
    for i in 1..=300 {
        let mut r = vec![Value::Int(i), Value::Int(i % 7), Value::str("c")];
        t.insert(&txn, &mut r).unwrap();
    }
    t.check(&txn).unwrap();
}

mod mmap;
