//! Compares the policies for growing a data file's memory map as rows are appended
//! (`MmapGrowth`), against pread/pwrite: one thread appends sysbench-shaped rows while
//! reader threads look up random rows already written, as a MyISAM table under
//! concurrent inserts would. Prints appends/s, reads/s and the number of mappings made.
//! Run: `cargo bench -p strata-heap --bench mmap_growth` (ROWS=... to change the size).
//! The figures and the policy chosen are in docs/heap-mmap.md.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;
use strata_heap::datafile::{DataFile, DataHeader, MmapSettings};
use strata_heap::format::DATA_HEADER_SIZE;
use strata_heap::MmapGrowth;
use strata_storage::io::{FileIo, StdFile};
use strata_types::schema::ColumnDef;
use strata_types::{Collation, DataType, TableDef, Value};

fn col(name: &str, t: DataType) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        data_type: t,
        nullable: false,
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

/// sbtest1's columns (fixed-length rows of about 200 bytes).
fn sbtest() -> TableDef {
    TableDef {
        options: Default::default(),
        db: "bench".into(),
        name: "sbtest1".into(),
        engine: "heap".into(),
        columns: vec![
            col("id", DataType::Int { unsigned: false }),
            col("k", DataType::Int { unsigned: false }),
            col("c", DataType::Char(120)),
            col("pad", DataType::Char(60)),
        ],
        indexes: vec![],
        auto_increment_start: 1,
        comment: String::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        instant: None,
        default_collation: Default::default(),
    }
}

struct Outcome {
    appends_per_s: f64,
    reads_per_s: f64,
    maps: u64,
}

fn run(def: &TableDef, rows: u64, readers: usize, mmap: Option<MmapGrowth>) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.hdat");
    {
        let f = StdFile::open(&path, true).expect("create");
        f.set_len(DATA_HEADER_SIZE).expect("set_len");
        DataHeader::new(def).write(&f).expect("header");
    }
    let settings = Arc::new(MmapSettings::new(
        mmap.is_some(),
        u64::MAX,
        mmap.unwrap_or_default(),
    ));
    let io: Arc<dyn FileIo> = Arc::new(StdFile::open(&path, false).expect("open"));
    let data = Arc::new(DataFile::open(io, def, settings.clone()).expect("datafile"));
    let ids = Arc::new(RwLock::new(Vec::<u64>::with_capacity(rows as usize)));
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let pad = "p".repeat(60);
    // Seed rows so readers have something from the start.
    for i in 0..1000 {
        let row = [
            Value::Int(i),
            Value::Int(i),
            Value::str("c"),
            Value::str(&pad),
        ];
        let id = data.insert(def, &row).expect("insert");
        ids.write().expect("lock").push(id);
    }
    let threads: Vec<_> = (0..readers)
        .map(|t| {
            let (data, ids, done, reads, def) = (
                data.clone(),
                ids.clone(),
                done.clone(),
                reads.clone(),
                def.clone(),
            );
            std::thread::spawn(move || {
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ t as u64;
                let mut buf = Vec::new();
                let mut n = 0u64;
                while !done.load(Ordering::Relaxed) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let id = {
                        let ids = ids.read().expect("lock");
                        ids[(x % ids.len() as u64) as usize]
                    };
                    data.read_row(&def, id, &mut buf)
                        .expect("read")
                        .expect("live");
                    n += 1;
                }
                reads.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    let start = Instant::now();
    for i in 1000..rows as i64 {
        let c = format!("{i:0>120}");
        let row = [
            Value::Int(i),
            Value::Int(i),
            Value::str(&c),
            Value::str(&pad),
        ];
        let id = data.insert(def, &row).expect("insert");
        ids.write().expect("lock").push(id);
    }
    let secs = start.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("reader");
    }
    Outcome {
        appends_per_s: (rows - 1000) as f64 / secs,
        reads_per_s: reads.load(Ordering::Relaxed) as f64 / secs,
        maps: settings.remaps(),
    }
}

fn main() {
    let rows: u64 = std::env::var("ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000);
    let repeats: usize = std::env::var("REPEATS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let def = sbtest();
    let policies: [(&str, Option<MmapGrowth>); 5] = [
        ("pread/pwrite", None),
        (
            "every 1000 appends (5.1)",
            Some(MmapGrowth::EveryAppends(1000)),
        ),
        (
            "fixed 8 MiB chunks",
            Some(MmapGrowth::Geometric {
                min: 8 << 20,
                max_step: 8 << 20,
            }),
        ),
        (
            "fixed 64 KiB chunks",
            Some(MmapGrowth::Geometric {
                min: 64 << 10,
                max_step: 64 << 10,
            }),
        ),
        ("geometric 1 MiB..256 MiB", Some(MmapGrowth::default())),
    ];
    println!("{rows} appends of ~200-byte rows, 1 reader thread; best of {repeats}");
    println!(
        "{:<28} {:>12} {:>12} {:>8}",
        "policy", "appends/s", "reads/s", "maps"
    );
    for (name, p) in policies {
        let mut best: Option<Outcome> = None;
        for _ in 0..repeats {
            let o = run(&def, rows, 1, p);
            if best
                .as_ref()
                .is_none_or(|b| o.appends_per_s > b.appends_per_s)
            {
                best = Some(o);
            }
        }
        if let Some(b) = best {
            println!(
                "{name:<28} {:>12.0} {:>12.0} {:>8}",
                b.appends_per_s, b.reads_per_s, b.maps
            );
        }
    }
}
