//! mmap data access tests: the same results with `myisam_use_mmap` on and off (reads,
//! in-place updates, moved rows, deletes, appends across many remaps), readers racing
//! appends and remaps without torn rows, the pread fallback above `myisam_mmap_size`,
//! a data file truncated underneath an open table (an error, not SIGBUS), and the
//! engine's variables.

use super::*;
use crate::datafile::{DataFile, MmapSettings};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use strata_storage::io::StdFile;

fn engine(mmap: bool, growth: MmapGrowth, limit: u64) -> HeapEngine {
    HeapEngine::new(HeapConfig {
        key_buffer_size: 256 << 10,
        myisam_use_mmap: mmap,
        myisam_mmap_size: limit,
        mmap_growth: growth,
        ..Default::default()
    })
}

/// Every row of the table, by primary key, with its row id.
fn dump(t: &Arc<dyn Table>) -> Vec<(RowId, Vec<Value>)> {
    let mut out = vec![];
    t.index_scan(&Txn::default(), 0, &KeyRange::all(), false, &mut |id, r| {
        out.push((id, r.to_vec()));
        Ok(Flow::Continue)
    })
    .unwrap();
    let mut scanned = vec![];
    t.scan(&Txn::default(), &mut |id, r| {
        scanned.push((id, r.to_vec()));
        Ok(Flow::Continue)
    })
    .unwrap();
    scanned.sort_by_key(|(_, r)| r[0].to_i64());
    assert_eq!(out, scanned, "index order and file order disagree");
    out
}

/// One seeded workload of inserts, in-place and moving updates and deletes; returns the
/// table's contents every 500 steps.
fn workload(t: &Arc<dyn Table>, varlen: bool) -> Vec<Vec<(RowId, Vec<Value>)>> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut live: Vec<(RowId, Vec<Value>)> = vec![];
    let mut snapshots = vec![];
    for step in 0..4000 {
        let op = rng.gen_range(0..10);
        if op < 6 || live.is_empty() {
            let c = "a".repeat(rng.gen_range(0..if varlen { 100 } else { 120 }));
            let mut row = vec![
                Value::Null,
                Value::Int(rng.gen_range(0..40)),
                Value::str(&c),
            ];
            let ins = t.insert(&Txn::default(), &mut row).unwrap();
            live.push((ins.row_id, row));
        } else {
            let i = rng.gen_range(0..live.len());
            let (rid, old) = live[i].clone();
            if op < 9 {
                let mut new = old.clone();
                new[1] = Value::Int(rng.gen_range(0..40));
                new[2] = Value::str(&"b".repeat(rng.gen_range(0..120)));
                let nrid = t.update(&Txn::default(), rid, &old, &new).unwrap();
                live[i] = (nrid, new);
            } else {
                t.delete(&Txn::default(), rid, &old).unwrap();
                live.swap_remove(i);
            }
        }
        if step % 500 == 499 {
            snapshots.push(dump(t));
        }
    }
    snapshots
}

#[test]
fn same_results_with_mmap_on_and_off() {
    for varlen in [false, true] {
        let def = sbtest(varlen);
        let mut results = vec![];
        let configs = [
            (false, MmapGrowth::default()),
            (true, MmapGrowth::default()),
            // Tiny steps: a remap every few appends.
            (
                true,
                MmapGrowth::Geometric {
                    min: 4096,
                    max_step: 8192,
                },
            ),
            (true, MmapGrowth::EveryAppends(7)),
        ];
        for (mmap, growth) in configs {
            let dir = tempfile::tempdir().unwrap();
            let e = engine(mmap, growth, DEFAULT_MMAP_SIZE);
            let t = open(&e, &def, dir.path(), true).unwrap();
            results.push(workload(&t, varlen));
            let s = e.mmap_settings();
            if mmap {
                let want = if growth == MmapGrowth::default() {
                    1
                } else {
                    4
                };
                assert!(s.remaps() >= want, "{growth:?}: {} remaps", s.remaps());
                assert!(s.mapped() > 0);
            } else {
                assert_eq!((s.remaps(), s.mapped()), (0, 0));
            }
            // Flushed (msync + fsync) and reopened with mmap the other way round: the
            // bytes written through the mapping are in the file.
            t.flush().unwrap();
            drop(t);
            let e2 = engine(!mmap, MmapGrowth::default(), DEFAULT_MMAP_SIZE);
            let t2 = open(&e2, &def, dir.path(), false).unwrap();
            assert_eq!(&dump(&t2), results.last().unwrap().last().unwrap());
            t2.check(&Txn::default()).unwrap();
        }
        for r in &results[1..] {
            assert!(
                r == &results[0],
                "mmap changed the results (varlen {varlen})"
            );
        }
    }
}

/// Self-verifying row content: every byte is derived from the id, so a row copied half
/// from one state and half from another cannot pass.
fn payload(id: i64) -> String {
    let len = 20 + (id as usize * 7) % 90;
    (0..len)
        .map(|i| (b'a' + ((id as usize + i * 3) % 26) as u8) as char)
        .collect()
}

#[test]
fn readers_never_see_torn_rows_while_the_file_grows_and_remaps() {
    let dir = tempfile::tempdir().unwrap();
    let def = sbtest(true);
    // Small steps so the mapping is replaced hundreds of times under the readers.
    let settings = Arc::new(MmapSettings::new(
        true,
        DEFAULT_MMAP_SIZE,
        MmapGrowth::Geometric {
            min: 4096,
            max_step: 16384,
        },
    ));
    let path = dir.path().join("t.hdat");
    {
        let f = StdFile::open(&path, true).unwrap();
        f.set_len(DATA_HEADER_SIZE).unwrap();
        DataHeader::new(&def).write(&f).unwrap();
    }
    let io: Arc<dyn FileIo> = Arc::new(StdFile::open(&path, false).unwrap());
    let data = Arc::new(DataFile::open(io, &def, settings.clone()).unwrap());
    let ids: Arc<RwLock<Vec<RowId>>> = Arc::new(RwLock::new(vec![]));
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..3)
        .map(|n| {
            let (data, ids, done, reads, def) = (
                data.clone(),
                ids.clone(),
                done.clone(),
                reads.clone(),
                def.clone(),
            );
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(n);
                let mut buf = vec![];
                while !done.load(Ordering::Acquire) {
                    let pick = {
                        let ids = ids.read();
                        if ids.is_empty() {
                            continue;
                        }
                        // Mostly the newest rows: the ones near the mapping's end.
                        let i = ids.len() - 1 - rng.gen_range(0..ids.len().min(64));
                        (i as i64 + 1, ids[i])
                    };
                    let row = data.read_row(&def, pick.1, &mut buf).unwrap().unwrap();
                    assert_eq!(row[0], Value::Int(pick.0));
                    assert_eq!(row[2], Value::str(&payload(pick.0)), "torn row {}", pick.0);
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    // A toggler turns mmap off and on, which drops and rebuilds the mapping.
    let toggler = {
        let (settings, done) = (settings.clone(), done.clone());
        std::thread::spawn(move || {
            let mut on = true;
            while !done.load(Ordering::Acquire) {
                on = !on;
                settings.set_enabled(on);
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            settings.set_enabled(true);
        })
    };
    // At least 20,000 rows, and on until the toggler has remapped often enough (a busy
    // machine may not schedule it during the first 20,000), within a bound.
    let start = std::time::Instant::now();
    let mut id = 0i64;
    while id < 20_000
        || (settings.remaps() <= 20
            && id < 400_000
            && start.elapsed() < std::time::Duration::from_secs(30))
    {
        id += 1;
        let row = vec![Value::Int(id), Value::Int(id), Value::str(&payload(id))];
        let rid = data.insert(&def, &row).unwrap();
        ids.write().push(rid);
    }
    done.store(true, Ordering::Release);
    for r in readers {
        r.join().unwrap();
    }
    toggler.join().unwrap();
    assert!(reads.load(Ordering::Relaxed) > 0);
    assert!(settings.remaps() > 20, "{} remaps", settings.remaps());
}

#[test]
fn files_above_mmap_size_fall_back_to_pread() {
    let def = sbtest(false);
    let limit = 256 << 10;
    let e = engine(true, MmapGrowth::default(), limit);
    let dir_a = tempfile::tempdir().unwrap();
    let dir_b = tempfile::tempdir().unwrap();
    let a = open(&e, &def, dir_a.path(), true).unwrap();
    let b = open(&e, &def, dir_b.path(), true).unwrap();
    // Both start small: the default growth wants 1 MiB of room, more than the limit,
    // so each maps what it needs while that fits.
    let fill = |t: &Arc<dyn Table>, n: i64| {
        for i in 0..n {
            let mut r = vec![Value::Null, Value::Int(i), Value::str("x")];
            t.insert(&Txn::default(), &mut r).unwrap();
        }
    };
    fill(&a, 10);
    assert_eq!(range_ids(&a, 0, KeyRange::all(), false).len(), 10);
    let s = e.mmap_settings().clone();
    assert!(s.mapped() > 0 && s.mapped() <= limit, "{}", s.mapped());
    // Grow b past the limit, reading as it grows: it cannot stay mapped; its reads
    // fall back to pread.
    for _ in 0..30 {
        fill(&b, 100);
        assert!(!range_ids(&b, 0, KeyRange::all(), false).is_empty());
        assert!(s.mapped() <= limit, "{} mapped", s.mapped());
    }
    assert!(s.fallbacks() > 0);
    assert_eq!(range_ids(&b, 0, KeyRange::all(), false).len(), 3000);
    assert_eq!(range_ids(&a, 0, KeyRange::all(), false).len(), 10);
    // Raising the limit maps it again at the next access.
    e.set_variable("myisam_mmap_size", &Value::UInt(1 << 30))
        .unwrap();
    let before = s.remaps();
    assert_eq!(range_ids(&b, 0, KeyRange::all(), false).len(), 3000);
    assert!(s.remaps() > before);
    assert!(s.mapped() > limit);
    // Off unmaps everything.
    e.set_variable("myisam_use_mmap", &Value::str("OFF"))
        .unwrap();
    assert_eq!(range_ids(&a, 0, KeyRange::all(), false).len(), 10);
    assert_eq!(range_ids(&b, 0, KeyRange::all(), false).len(), 3000);
    assert_eq!(s.mapped(), 0);
}

#[test]
fn a_data_file_truncated_underneath_is_an_error_not_a_crash() {
    for mmap in [true, false] {
        let def = sbtest(false);
        let e = engine(mmap, MmapGrowth::default(), DEFAULT_MMAP_SIZE);
        let dir = tempfile::tempdir().unwrap();
        let other_dir = tempfile::tempdir().unwrap();
        let t = open(&e, &def, dir.path(), true).unwrap();
        let other = open(&e, &def, other_dir.path(), true).unwrap();
        let mut rows = vec![];
        for i in 1..=3000i64 {
            let mut r = vec![Value::Int(i), Value::Int(i), Value::str("payload")];
            let ins = t.insert(&Txn::default(), &mut r).unwrap();
            rows.push((ins.row_id, r));
            let mut r = vec![Value::Int(i), Value::Int(i), Value::str("other")];
            other.insert(&Txn::default(), &mut r).unwrap();
        }
        assert_eq!(range_ids(&t, 0, KeyRange::all(), false).len(), 3000);
        // "Another process": our own handle on the file, cut to its first 16 KiB.
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("t.hdat"))
            .unwrap()
            .set_len(16 << 10)
            .unwrap();
        let probe = key(&def, 0, 2999);
        let err = t
            .index_scan(
                &Txn::default(),
                0,
                &KeyRange::prefix(probe),
                false,
                &mut |_, _| Ok(Flow::Continue),
            )
            .unwrap_err();
        assert_eq!(err.code(), 1194, "mmap {mmap}: {err}");
        assert!(err.to_string().contains("d.t"), "{err}");
        // A full read fails the same way, every time; early rows still read.
        for _ in 0..2 {
            assert!(t
                .index_scan(&Txn::default(), 0, &KeyRange::all(), false, &mut |_, _| {
                    Ok(Flow::Continue)
                })
                .is_err());
        }
        assert_eq!(
            range_ids(&t, 0, KeyRange::prefix(key(&def, 0, 3)), false),
            vec![3]
        );
        // An in-place update past the cut errors and does not grow the file back.
        let (rid, old) = rows[2990].clone();
        let mut new = old.clone();
        new[2] = Value::str("changed");
        assert!(t.update(&Txn::default(), rid, &old, &new).is_err());
        let len = std::fs::metadata(dir.path().join("t.hdat")).unwrap().len();
        assert_eq!(len, 16 << 10, "mmap {mmap}");
        // The other table is untouched.
        assert_eq!(range_ids(&other, 0, KeyRange::all(), false).len(), 3000);
        other.check(&Txn::default()).unwrap();
        // TRUNCATE starts the table anew, mapped again.
        t.truncate().unwrap();
        let mut r = vec![Value::Int(1), Value::Int(1), Value::str("again")];
        t.insert(&Txn::default(), &mut r).unwrap();
        assert_eq!(range_ids(&t, 0, KeyRange::all(), false), vec![1]);
    }
}

#[test]
fn engine_variables_show_and_set() {
    let e = engine(false, MmapGrowth::default(), DEFAULT_MMAP_SIZE);
    let get = |n: &str| {
        e.variables()
            .into_iter()
            .find(|v| v.name == n)
            .map(|v| v.value)
            .unwrap()
    };
    assert_eq!(get("myisam_use_mmap"), Value::str("OFF"));
    assert_eq!(get("myisam_mmap_size"), Value::UInt(u64::MAX));
    assert_eq!(get("key_cache_segments"), Value::UInt(16));
    e.set_variable("myisam_use_mmap", &Value::str("on"))
        .unwrap();
    assert_eq!(get("myisam_use_mmap"), Value::str("ON"));
    e.set_variable("myisam_use_mmap", &Value::Int(0)).unwrap();
    assert!(e
        .set_variable("myisam_use_mmap", &Value::str("maybe"))
        .is_err());
    e.set_variable("key_cache_segments", &Value::Int(0))
        .unwrap();
    assert_eq!(e.key_cache().segments(), 1);
    e.set_variable("key_cache_segments", &Value::Int(64))
        .unwrap();
    assert_eq!(e.key_cache().segments(), 64);
    assert!(e
        .set_variable("key_cache_segments", &Value::Int(65))
        .is_err());
    e.set_variable("key_buffer_size", &Value::Int(1 << 20))
        .unwrap();
    assert_eq!(get("key_buffer_size"), Value::UInt(1 << 20));
    assert_eq!(e.key_cache().capacity(), 1 << 20);
    assert!(e.set_variable("key_buffer_size", &Value::Int(100)).is_err());
    assert!(matches!(
        e.set_variable("nope", &Value::Int(1)),
        Err(Error::UnknownVariable(_))
    ));
}

#[test]
fn tables_keep_working_across_a_key_cache_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let def = sbtest(false);
    let e = engine(true, MmapGrowth::default(), DEFAULT_MMAP_SIZE);
    let t = open(&e, &def, dir.path(), true).unwrap();
    for i in 1..=2000i64 {
        let mut r = vec![Value::Int(i), Value::Int(i % 7), Value::str("x")];
        t.insert(&Txn::default(), &mut r).unwrap();
        if i % 500 == 0 {
            // Dirty index blocks are written back by the rebuild, not lost.
            e.set_variable("key_cache_segments", &Value::Int(i / 250))
                .unwrap();
        }
    }
    assert_eq!(range_ids(&t, 0, KeyRange::all(), false).len(), 2000);
    t.check(&Txn::default()).unwrap();
}
