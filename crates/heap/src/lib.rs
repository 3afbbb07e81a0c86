//! The `heap` engine: MyISAM's design. Each table is a data file of rows
//! (`.hdat`, read and written with pread/pwrite, or through a memory map with
//! `myisam_use_mmap=ON`, and cached only by the OS) and an index file (`.hidx`) holding
//! a B+tree per index whose blocks go through the shared, segmented key cache of
//! `key_buffer_size` bytes in `key_cache_segments` segments. Table locks follow MyISAM:
//! readers share (a read-write lock's shared side; nothing on a reader's path takes a
//! table-wide mutex), a writer is exclusive. Not crash-safe, as MyISAM is not; a table left open by
//! a crash has its indexes rebuilt from the data file when next opened.
//!
//! The byte layout is in `docs/format/heap.md` and `format.rs`.

pub mod btree;
pub mod datafile;
pub mod format;

use btree::{Node, Tree};
pub use datafile::MmapGrowth;
use datafile::{DataFile, DataHeader, MmapSettings};
use format::*;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use strata_engine::*;
use strata_storage::filecache::{FileCache, OpenMode, TableFiles};
use strata_storage::io::{FileIo, StdFile};
use strata_storage::keycache::{CachedFile, KeyCache, MAX_SEGMENTS};
use strata_storage::sync::{AtomicU64, Mutex, Ordering};
use strata_types::keycode::encode_index_key;
use strata_types::IndexDef;

#[derive(Clone, Debug)]
pub struct HeapConfig {
    /// Bytes of index blocks the key cache holds.
    pub key_buffer_size: usize,
    /// `key_cache_segments`: 0 (or 1) is one unsegmented cache, up to 64.
    pub key_cache_segments: usize,
    /// `myisam_use_mmap`: read and update rows through memory maps of the data files.
    pub myisam_use_mmap: bool,
    /// `myisam_mmap_size`: bytes of data files that may be mapped at once; files that do
    /// not fit are read with pread.
    pub myisam_mmap_size: u64,
    /// How a mapping grows with its file (a benchmark knob; not a server variable).
    pub mmap_growth: MmapGrowth,
}

/// MySQL's default `myisam_mmap_size` on 64-bit: no limit.
pub const DEFAULT_MMAP_SIZE: u64 = u64::MAX;

impl Default for HeapConfig {
    fn default() -> Self {
        HeapConfig {
            key_buffer_size: 8 << 20,
            key_cache_segments: strata_storage::keycache::DEFAULT_SEGMENTS,
            myisam_use_mmap: false,
            myisam_mmap_size: DEFAULT_MMAP_SIZE,
            mmap_growth: MmapGrowth::default(),
        }
    }
}

pub struct HeapEngine {
    cache: Arc<KeyCache>,
    mmap: Arc<MmapSettings>,
    /// `key_buffer_size` and `key_cache_segments` as last set; changing either rebuilds
    /// the cache (the mutex orders concurrent SET GLOBALs).
    cache_shape: Mutex<(usize, usize)>,
    open: Mutex<HashMap<PathBuf, Weak<HeapTable>>>,
}

impl HeapEngine {
    pub fn new(config: HeapConfig) -> HeapEngine {
        let segments = config.key_cache_segments.min(MAX_SEGMENTS);
        HeapEngine {
            cache: Arc::new(KeyCache::with_segments(
                config.key_buffer_size,
                BLOCK_SIZE,
                segments,
            )),
            mmap: Arc::new(MmapSettings::new(
                config.myisam_use_mmap,
                config.myisam_mmap_size,
                config.mmap_growth,
            )),
            cache_shape: Mutex::new((config.key_buffer_size, segments)),
            open: Mutex::new(HashMap::new()),
        }
    }

    pub fn key_cache(&self) -> &Arc<KeyCache> {
        &self.cache
    }

    /// The mmap settings and counters (remaps, bytes mapped) shared by every table.
    pub fn mmap_settings(&self) -> &Arc<MmapSettings> {
        &self.mmap
    }
}

/// Smallest `key_buffer_size` (the server's own check agrees).
const MIN_KEY_BUFFER: u64 = 64 << 10;
/// MySQL's smallest `myisam_mmap_size`.
const MIN_MMAP_SIZE: u64 = 7;

/// ON/OFF, 1/0, TRUE/FALSE, as MySQL takes a boolean variable.
fn parse_bool(v: &Value) -> Option<bool> {
    let word = match v {
        Value::Bytes(b) => b.to_ascii_lowercase(),
        v => {
            return v
                .to_i64()
                .and_then(|i| [false, true].get(i as usize).copied())
        }
    };
    match &word[..] {
        b"on" | b"true" | b"1" => Some(true),
        b"off" | b"false" | b"0" => Some(false),
        _ => None,
    }
}

/// A non-negative integer value (an unsigned one too).
fn parse_u64(v: &Value) -> Option<u64> {
    match v {
        Value::UInt(u) => Some(*u),
        v => v.to_i64().and_then(|i| u64::try_from(i).ok()),
    }
}

fn paths(stem: &Path) -> (PathBuf, PathBuf) {
    (stem.with_extension("hdat"), stem.with_extension("hidx"))
}

fn table_name(def: &TableDef) -> String {
    format!("{}.{}", def.db, def.name)
}

impl Engine for HeapEngine {
    fn name(&self) -> &'static str {
        "heap"
    }

    fn create_table(&self, def: &TableDef, path: &Path) -> Result<()> {
        let (dp, ip) = paths(path);
        let name = table_name(def);
        let io = |e| Error::table_io(&name, e);
        if let Some(dir) = dp.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        // Existing files (left by a table the catalog does not know, e.g. after a crash
        // between creating them and recording the table) are never overwritten: 1050,
        // as MariaDB answers for an orphaned MyISAM file.
        let exists = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::TableExists(def.name.clone())
            } else {
                io(e)
            }
        };
        let data = StdFile::create_new(&dp).map_err(exists)?;
        let index = match StdFile::create_new(&ip) {
            Ok(f) => f,
            Err(e) => {
                let _ = std::fs::remove_file(&dp);
                return Err(exists(e));
            }
        };
        let written = (|| {
            data.set_len(DATA_HEADER_SIZE)?;
            DataHeader::new(def).write(&data)?;
            data.sync_data()?;
            write_empty_index(&index, def.indexes.len())?;
            index.sync_data()
        })();
        if let Err(e) = written {
            // Files this statement created and could not finish go, so a retry can
            // create them.
            let _ = std::fs::remove_file(&dp);
            let _ = std::fs::remove_file(&ip);
            return Err(io(e));
        }
        Ok(())
    }

    fn open_table(&self, def: Arc<TableDef>, path: &Path) -> Result<Arc<dyn Table>> {
        let (dp, ip) = paths(path);
        let name = table_name(&def);
        let missing =
            |e: std::io::Error| Error::corrupt(&name, format!("cannot open its files: {e}"));
        // Both files go through the process's open-file cache (table_open_cache), so
        // thousands of tables need no more descriptors than the cache allows.
        let cache = FileCache::global();
        let files = TableFiles::new();
        let mode = OpenMode::default();
        let data: Arc<dyn FileIo> = Arc::new(cache.open(&dp, mode, &files).map_err(missing)?);
        let index: Arc<dyn FileIo> = Arc::new(cache.open(&ip, mode, &files).map_err(missing)?);
        let t = Arc::new(HeapTable::open(
            def,
            data,
            index,
            self.cache.clone(),
            self.mmap.clone(),
        )?);
        self.open
            .lock()
            .insert(path.to_path_buf(), Arc::downgrade(&t));
        Ok(t)
    }

    fn drop_table(&self, _def: &TableDef, path: &Path) -> Result<()> {
        if let Some(t) = self.open.lock().remove(path).and_then(|w| w.upgrade()) {
            self.cache.drop_file(&t.index);
        }
        let (dp, ip) = paths(path);
        for p in [dp, ip] {
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(p.display(), e)),
            }
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        let tables: Vec<Arc<HeapTable>> = self
            .open
            .lock()
            .values()
            .filter_map(|w| w.upgrade())
            .collect();
        for t in tables {
            t.flush()?;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!(
            "key cache {} MiB in {} segments of {}-byte blocks; data rows via {}",
            self.cache.capacity() >> 20,
            self.cache.segments(),
            BLOCK_SIZE,
            if self.mmap.enabled() {
                "mmap (appends via pwrite)"
            } else {
                "pread/pwrite"
            }
        )
    }

    fn variables(&self) -> Vec<EngineVar> {
        let (size, segments) = *self.cache_shape.lock();
        vec![
            EngineVar {
                name: "key_buffer_size",
                value: Value::UInt(size as u64),
                dynamic: true,
            },
            EngineVar {
                name: "key_cache_segments",
                value: Value::UInt(segments as u64),
                dynamic: true,
            },
            EngineVar {
                name: "myisam_mmap_size",
                value: Value::UInt(self.mmap.limit()),
                dynamic: true,
            },
            EngineVar {
                name: "myisam_use_mmap",
                value: Value::str(if self.mmap.enabled() { "ON" } else { "OFF" }),
                dynamic: true,
            },
        ]
    }

    fn set_variable(&self, name: &str, value: &Value) -> Result<()> {
        let bad = || Error::WrongValueForVariable {
            name: name.to_string(),
            value: value.to_text(),
        };
        match name {
            "myisam_use_mmap" => {
                self.mmap.set_enabled(parse_bool(value).ok_or_else(bad)?);
                Ok(())
            }
            "myisam_mmap_size" => {
                let n = parse_u64(value).ok_or_else(bad)?;
                // MySQL clamps a too-small value to its minimum.
                self.mmap.set_limit(n.max(MIN_MMAP_SIZE));
                Ok(())
            }
            "key_buffer_size" | "key_cache_segments" => {
                let n = parse_u64(value).ok_or_else(bad)?;
                let mut shape = self.cache_shape.lock();
                let new = if name == "key_buffer_size" {
                    if n < MIN_KEY_BUFFER {
                        return Err(bad());
                    }
                    (usize::try_from(n).map_err(|_| bad())?, shape.1)
                } else {
                    if n > MAX_SEGMENTS as u64 {
                        return Err(bad());
                    }
                    (shape.0, n as usize)
                };
                // MariaDB rebuilds the key cache on either change; so do we.
                self.cache
                    .resize(new.0, new.1)
                    .map_err(|e| Error::io("resizing the key cache", e))?;
                *shape = new;
                Ok(())
            }
            n => Err(Error::UnknownVariable(n.to_string())),
        }
    }

    fn status_vars(&self) -> Vec<(String, u64)> {
        let s = self.cache.stats();
        vec![
            ("Key_blocks_used".into(), s.blocks_used),
            ("Key_read_requests".into(), s.read_requests),
            ("Key_reads".into(), s.reads),
            ("Key_write_requests".into(), s.write_requests),
            ("Key_writes".into(), s.writes),
        ]
    }
}

/// Writes the index header and one empty root leaf per index (blocks 1..=n).
fn write_empty_index(f: &dyn FileIo, n: usize) -> std::io::Result<()> {
    let mut block = vec![0u8; BLOCK_SIZE];
    for i in 0..n {
        Node::leaf().write(&mut block);
        f.write_at(&block, ((i + 1) * BLOCK_SIZE) as u64)?;
    }
    let roots: Vec<u64> = (1..=n as u64).collect();
    write_index_header(f, &roots, n as u64 + 1)
}

fn write_index_header(f: &dyn FileIo, roots: &[u64], next_free: u64) -> std::io::Result<()> {
    let mut b = vec![0u8; BLOCK_SIZE];
    b[IH_MAGIC..IH_MAGIC + 8].copy_from_slice(INDEX_MAGIC);
    put_u32(&mut b, IH_VERSION, FORMAT_VERSION);
    put_u16(&mut b, IH_COUNT, roots.len() as u16);
    put_u64(&mut b, IH_NEXT_FREE, next_free);
    for (i, r) in roots.iter().enumerate() {
        put_u64(&mut b, IH_ROOTS + 8 * i, *r);
    }
    let end = IH_ROOTS + 8 * roots.len();
    let crc = crc32c::crc32c(&b[..end]);
    put_u32(&mut b, end, crc);
    f.write_at(&b, 0)
}

fn read_index_header(f: &dyn FileIo, n: usize) -> std::result::Result<(Vec<u64>, u64), String> {
    let mut b = vec![0u8; BLOCK_SIZE];
    f.read_at(&mut b, 0)
        .map_err(|e| format!("index file header unreadable: {e}"))?;
    if &b[IH_MAGIC..IH_MAGIC + 8] != INDEX_MAGIC {
        return Err("index file has a wrong magic number".into());
    }
    if get_u32(&b, IH_VERSION) != FORMAT_VERSION {
        return Err(format!(
            "index file format version {} is not {FORMAT_VERSION}",
            get_u32(&b, IH_VERSION)
        ));
    }
    let count = get_u16(&b, IH_COUNT) as usize;
    if count != n {
        return Err(format!("index file has {count} indexes, the table {n}"));
    }
    let end = IH_ROOTS + 8 * n;
    if crc32c::crc32c(&b[..end]) != get_u32(&b, end) {
        return Err("index file header checksum mismatch".into());
    }
    let roots = (0..n).map(|i| get_u64(&b, IH_ROOTS + 8 * i)).collect();
    Ok((roots, get_u64(&b, IH_NEXT_FREE)))
}

/// Index state changed by writers (under the table's write lock).
struct IndexState {
    next_free: u64,
    /// Blocks of the index file known to have disk space (written or reserved).
    reserved: u64,
}

/// The most blocks one index can allocate for one key: a split at every level and a
/// new root. Depth stays far below this (a 4 KiB node holds at least four keys).
const WORST_SPLITS_PER_INDEX: u64 = 32;

pub struct HeapTable {
    def: Arc<TableDef>,
    name: String,
    data: DataFile,
    index: CachedFile,
    cache: Arc<KeyCache>,
    idx: Mutex<IndexState>,
    /// Root block of each index. Readers load them without a lock (a table-wide mutex
    /// here would serialize every index lookup of the table); writers change them
    /// under the table's write lock, holding `idx` for the block allocator.
    roots: Vec<AtomicU64>,
    lock: Arc<RwLock<()>>,
    /// Set when DDL replaced this handle (`Table::retire`).
    retired: strata_storage::sync::AtomicBool,
}

/// The stored key of a row in an index: the encoded columns, plus the RowId when the
/// index allows duplicates of that key.
fn stored_key(def: &TableDef, ix: &IndexDef, row: &[Value], id: RowId, out: &mut Vec<u8>) -> bool {
    out.clear();
    encode_index_key(out, def, ix, row);
    let unique_key = ix.unique && !ix.columns.iter().any(|&c| row[c].is_null());
    if !unique_key {
        out.extend_from_slice(&id.to_be_bytes());
    }
    unique_key
}

impl HeapTable {
    fn open(
        def: Arc<TableDef>,
        data: Arc<dyn FileIo>,
        index_io: Arc<dyn FileIo>,
        cache: Arc<KeyCache>,
        mmap: Arc<MmapSettings>,
    ) -> Result<HeapTable> {
        let name = table_name(&def);
        let data = DataFile::open(data, &def, mmap).map_err(|d| Error::corrupt(&name, d))?;
        let index = cache.register_file(index_io.clone());
        let clean = data.header.lock().state == STATE_CLEAN;
        let (roots, next_free) = if clean {
            read_index_header(index_io.as_ref(), def.indexes.len())
                .map_err(|d| Error::corrupt(&name, d))?
        } else {
            (vec![0; def.indexes.len()], 0)
        };
        let reserved = index_io.len().unwrap_or(0) / BLOCK_SIZE as u64;
        let t = HeapTable {
            def,
            name,
            data,
            index,
            cache,
            idx: Mutex::new(IndexState {
                next_free,
                reserved,
            }),
            roots: roots.into_iter().map(AtomicU64::new).collect(),
            lock: Arc::new(RwLock::new(())),
            retired: strata_storage::sync::AtomicBool::new(false),
        };
        if !clean {
            t.rebuild()?;
        }
        Ok(t)
    }

    fn io_err(&self, e: std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::InvalidData
            || e.kind() == std::io::ErrorKind::UnexpectedEof
        {
            return Error::corrupt(&self.name, e.to_string());
        }
        if e.kind() == std::io::ErrorKind::InvalidInput {
            return Error::NotSupported(e.to_string());
        }
        Error::table_io(&self.name, e)
    }

    fn root(&self, index: usize) -> u64 {
        self.roots[index].load(Ordering::Acquire)
    }

    fn tree(&self) -> Tree<'_> {
        Tree {
            cache: &self.cache,
            file: &self.index,
        }
    }

    /// Starts the index file anew: forgets its cached blocks and writes a header and one
    /// empty root leaf per index (TRUNCATE and repair).
    fn reset_index(&self) -> Result<()> {
        self.cache.drop_file(&self.index);
        let n = self.def.indexes.len();
        self.index.io.set_len(0).map_err(|e| self.io_err(e))?;
        write_empty_index(self.index.io.as_ref(), n).map_err(|e| self.io_err(e))?;
        let mut idx = self.idx.lock();
        for (i, r) in self.roots.iter().enumerate() {
            r.store(i as u64 + 1, Ordering::Release);
        }
        idx.next_free = n as u64 + 1;
        idx.reserved = idx.next_free;
        Ok(())
    }

    /// Reserves disk blocks for the most index blocks one row's keys can allocate,
    /// before anything of the row is written: a full disk then fails the statement with
    /// nothing changed, instead of leaving a split half done or a cached index block
    /// that can never be written back. Grows in steps of an eighth of the file.
    fn reserve_index_room(&self) -> Result<()> {
        let mut idx = self.idx.lock();
        let need = idx.next_free + self.def.indexes.len() as u64 * WORST_SPLITS_PER_INDEX;
        if need <= idx.reserved {
            return Ok(());
        }
        let bs = BLOCK_SIZE as u64;
        let have = idx.reserved;
        let want = need.max(have + (have / 8).max(256));
        idx.reserved = strata_storage::io::reserve_ahead(
            self.index.io.as_ref(),
            have * bs,
            need * bs,
            want * bs,
        )
        .map_err(|e| self.io_err(e))?
            / bs;
        Ok(())
    }

    /// MyISAM's repair after an unclean close: new index file, rebuilt from the rows.
    fn rebuild(&self) -> Result<()> {
        self.data.recover().map_err(|e| self.io_err(e))?;
        self.reset_index()?;
        let mut rows = 0u64;
        let mut max_auto = 0u64;
        let auto = self.def.auto_increment_column();
        let mut entries = Vec::new();
        self.data
            .scan(&self.def, &mut |id, row| {
                rows += 1;
                if let Some(a) = auto {
                    max_auto = max_auto.max(row[a].to_i64().unwrap_or(0).max(0) as u64);
                }
                entries.push((id, row.to_vec()));
                Ok(Flow::Continue)
            })
            .map_err(|e| match e {
                Error::Corrupt { detail, .. } => Error::corrupt(&self.name, detail),
                other => other,
            })?;
        for (id, row) in &entries {
            self.insert_keys(*id, row)?;
        }
        {
            let mut h = self.data.header.lock();
            h.rows = rows;
            h.auto_increment = h.auto_increment.max(max_auto + 1);
        }
        self.flush()
    }

    fn insert_keys(&self, id: RowId, row: &[Value]) -> Result<()> {
        let mut key = Vec::with_capacity(64);
        for (i, ix) in self.def.indexes.iter().enumerate() {
            stored_key(&self.def, ix, row, id, &mut key);
            let mut idx = self.idx.lock();
            let root = self.root(i);
            let mut next = idx.next_free;
            let new_root = self
                .tree()
                .insert(root, &key, id, &mut || {
                    next += 1;
                    next - 1
                })
                .map_err(|e| self.io_err(e))?;
            idx.next_free = next;
            self.roots[i].store(new_root, Ordering::Release);
        }
        Ok(())
    }

    fn delete_keys(&self, id: RowId, row: &[Value]) -> Result<()> {
        let mut key = Vec::with_capacity(64);
        for (i, ix) in self.def.indexes.iter().enumerate() {
            stored_key(&self.def, ix, row, id, &mut key);
            let root = self.root(i);
            self.tree().delete(root, &key).map_err(|e| self.io_err(e))?;
        }
        Ok(())
    }

    /// Refuses a row whose key in some index is longer than a node can hold, before
    /// anything is written.
    fn check_key_lengths(&self, row: &[Value]) -> Result<()> {
        let mut key = Vec::with_capacity(64);
        for ix in &self.def.indexes {
            stored_key(&self.def, ix, row, 0, &mut key);
            if key.len() > MAX_KEY {
                return Err(Error::NotSupported(format!(
                    "index {} key of {} bytes (the heap engine's limit is {MAX_KEY})",
                    ix.name,
                    key.len()
                )));
            }
        }
        Ok(())
    }

    /// The first unique index whose key `row` would duplicate (ignoring row `except`).
    fn find_duplicate(
        &self,
        row: &[Value],
        except: Option<(RowId, &[Value])>,
    ) -> Result<Option<usize>> {
        let mut key = Vec::with_capacity(64);
        for (i, ix) in self.def.indexes.iter().enumerate() {
            if !stored_key(&self.def, ix, row, 0, &mut key) {
                continue;
            }
            if let Some((_, old)) = except {
                let mut old_key = Vec::new();
                stored_key(&self.def, ix, old, 0, &mut old_key);
                if old_key == key {
                    continue;
                }
            }
            let root = self.root(i);
            if self
                .tree()
                .contains(root, &key)
                .map_err(|e| self.io_err(e))?
            {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    fn duplicate_error(&self, i: usize, row: &[Value]) -> Error {
        let ix = &self.def.indexes[i];
        let value = ix
            .columns
            .iter()
            .map(|&c| row[c].to_text())
            .collect::<Vec<_>>()
            .join("-");
        // MySQL 8's form, `table.key`, as the btree engine writes it.
        Error::DuplicateKey {
            value,
            key: format!("{}.{}", self.def.name, ix.name),
        }
    }
}

impl Table for HeapTable {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }

    fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    fn retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }

    fn lock(&self, mode: LockMode) -> TableLock {
        let g: Box<dyn std::any::Any + Send> = match mode {
            LockMode::Read => Box::new(self.lock.read_arc()),
            LockMode::Write => Box::new(self.lock.write_arc()),
        };
        TableLock(Some(g))
    }

    fn scan(&self, _txn: &Txn, f: &mut RowFn) -> Result<()> {
        self.data.scan(&self.def, f).map_err(|e| match e {
            Error::Corrupt { detail, .. } => Error::corrupt(&self.name, detail),
            other => other,
        })
    }

    fn index_scan(
        &self,
        _txn: &Txn,
        index: usize,
        range: &KeyRange,
        reverse: bool,
        f: &mut RowFn,
    ) -> Result<()> {
        let root = self
            .roots
            .get(index)
            .map(|r| r.load(Ordering::Acquire))
            .ok_or_else(|| Error::Internal(format!("no index {index}")))?;
        let mut err = None;
        let mut buf = Vec::new();
        self.tree()
            .scan(root, range, reverse, &mut |id| {
                let r = match self.data.read_row(&self.def, id, &mut buf) {
                    Ok(Some(row)) => f(id, &row),
                    Ok(None) => Err(Error::corrupt(
                        &self.name,
                        format!(
                            "index {} points at deleted row {id}",
                            self.def.indexes[index].name
                        ),
                    )),
                    Err(e) => Err(e),
                };
                match r {
                    Ok(Flow::Continue) => true,
                    Ok(Flow::Stop) => false,
                    Err(e) => {
                        err = Some(e);
                        false
                    }
                }
            })
            .map_err(|e| self.io_err(e))?;
        match err {
            Some(Error::Corrupt { detail, .. }) => Err(Error::corrupt(&self.name, detail)),
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn insert(&self, _txn: &Txn, row: &mut Vec<Value>) -> Result<Inserted> {
        let mut generated = None;
        if let Some(a) = self.def.auto_increment_column() {
            // The SQL layer turns an explicit 0 into NULL unless sql_mode has
            // NO_AUTO_VALUE_ON_ZERO, so a 0 here is a value to keep.
            if row[a].is_null() {
                let next = self.data.header.lock().auto_increment.max(1);
                // The counter past the column's type (TINYINT after 127): refused, as
                // MySQL does in strict mode (167; the SQL layer adds the row number).
                let col = &self.def.columns[a];
                if let Some((_, hi)) = col.data_type.int_range() {
                    if next as i128 > hi {
                        return Err(Error::AutoIncrementOutOfRange {
                            column: col.name.clone(),
                            row: 1,
                        });
                    }
                }
                row[a] = if self.def.columns[a].data_type.is_unsigned() {
                    Value::UInt(next)
                } else {
                    Value::Int(next as i64)
                };
                generated = Some(next);
            }
        }
        self.check_key_lengths(row)?;
        if let Some(i) = self.find_duplicate(row, None)? {
            return Err(self.duplicate_error(i, row));
        }
        self.reserve_index_room()?;
        let id = self
            .data
            .insert(&self.def, row)
            .map_err(|e| self.io_err(e))?;
        self.insert_keys(id, row)?;
        let mut h = self.data.header.lock();
        h.rows += 1;
        if let Some(a) = self.def.auto_increment_column() {
            let v = row[a].to_i64().unwrap_or(0).max(0) as u64;
            if v >= h.auto_increment {
                h.auto_increment = v + 1;
            }
        }
        Ok(Inserted {
            row_id: id,
            generated_id: generated,
        })
    }

    fn update(&self, _txn: &Txn, id: RowId, old: &[Value], new: &[Value]) -> Result<RowId> {
        self.check_key_lengths(new)?;
        if let Some(i) = self.find_duplicate(new, Some((id, old)))? {
            return Err(self.duplicate_error(i, new));
        }
        self.reserve_index_room()?;
        // The row first: if it cannot be written (a full disk as it moves), the old row
        // and its keys are untouched.
        let new_id = self
            .data
            .update(&self.def, id, new)
            .map_err(|e| self.io_err(e))?;
        self.delete_keys(id, old)?;
        self.insert_keys(new_id, new)?;
        if let Some(a) = self.def.auto_increment_column() {
            let v = new[a].to_i64().unwrap_or(0).max(0) as u64;
            let mut h = self.data.header.lock();
            if v >= h.auto_increment {
                h.auto_increment = v + 1;
            }
        }
        Ok(new_id)
    }

    fn delete(&self, _txn: &Txn, id: RowId, old: &[Value]) -> Result<()> {
        self.delete_keys(id, old)?;
        self.data.delete(id).map_err(|e| self.io_err(e))?;
        let mut h = self.data.header.lock();
        h.rows = h.rows.saturating_sub(1);
        Ok(())
    }

    fn truncate(&self) -> Result<()> {
        self.data.reset(&self.def).map_err(|e| self.io_err(e))?;
        self.reset_index()
    }

    /// Every index must hold exactly the table's rows, and the header's row count must
    /// agree with the data file (MyISAM's CHECK TABLE checks the same).
    fn check(&self, txn: &Txn) -> Result<()> {
        let mut rows = 0u64;
        self.scan(txn, &mut |_, _| {
            rows += 1;
            Ok(Flow::Continue)
        })?;
        for (i, ix) in self.def.indexes.iter().enumerate() {
            let mut n = 0u64;
            self.index_scan(txn, i, &KeyRange::all(), false, &mut |_, _| {
                n += 1;
                Ok(Flow::Continue)
            })?;
            if n != rows {
                return Err(Error::corrupt(
                    &self.name,
                    format!("index {} has {n} entries for {rows} rows", ix.name),
                ));
            }
        }
        if self.data.header.lock().rows != rows {
            return Err(Error::corrupt(
                &self.name,
                "row count in header differs from data".to_string(),
            ));
        }
        Ok(())
    }

    fn status(&self) -> TableStatus {
        let h = self.data.header.lock();
        TableStatus {
            rows: h.rows,
            data_length: h.data_end.saturating_sub(DATA_HEADER_SIZE),
            index_length: self.idx.lock().next_free * BLOCK_SIZE as u64,
            data_free: 0,
            auto_increment: h.auto_increment.max(1),
        }
    }

    fn flush(&self) -> Result<()> {
        self.cache
            .flush_file(&self.index)
            .map_err(|e| self.io_err(e))?;
        {
            let idx = self.idx.lock();
            let roots: Vec<u64> = (0..self.roots.len()).map(|i| self.root(i)).collect();
            write_index_header(self.index.io.as_ref(), &roots, idx.next_free)
                .map_err(|e| self.io_err(e))?;
        }
        self.index.io.sync_data().map_err(|e| self.io_err(e))?;
        self.data.mark_clean().map_err(|e| self.io_err(e))
    }
}

#[cfg(test)]
mod tests;
