//! One open `btree` table: the clustered index plus secondary indexes in one tablespace,
//! and the row operations the SQL layer calls through `strata_engine::Table`.
//!
//! Reads: a consistent read walks each record back to the version its read view sees; a
//! locking read (FOR UPDATE, LOCK IN SHARE MODE, the rows UPDATE and DELETE look at)
//! locks the clustered key, then reads the latest version. A secondary index entry is
//! `index columns ‖ clustered key → clustered key`; entries are never changed in place,
//! so after a key update the old entry stays until purge and every secondary read
//! re-checks the entry against the row version it found.
//!
//! Writes: lock the clustered key, keep the version being replaced in the version store,
//! write the new version stamped with the transaction's id, and log the old version as
//! an undo record in the same mini-transaction (recovery rolls back with it).

use crate::lock::{Granted, LockKey, Mode};
use crate::row::{self, RecHeader, FLAG_DELETED, HEADER};
use crate::tree::{PutMode, Tree};
use crate::trx::{OldVersion, ReadView};
use crate::{io_err, BtreeTrx, Inner};
use std::sync::Arc;
use strata_engine::*;
use strata_storage::sync::{AtomicU64, Ordering};
use strata_types::keycode::{encode_index_key, row_key_has_null};
use strata_types::IndexDef;

/// Where a row lock [`BtreeTable::lock_current`] takes goes.
enum Keep<'a> {
    /// Held until the transaction ends (locking reads, updates, deletes).
    ToTheEnd,
    /// Given back after the write by `BtreeTrx::done_writing` (an insert's).
    ForTheWrite(&'a mut Vec<LockKey>),
}

/// What one try to lock a row and read it found.
enum Current {
    /// The current record (None: no record), the lock taken and its key.
    Row(Option<Vec<u8>>, Granted, LockKey),
    /// The running transaction whose change holds the row.
    Held(u64),
}

/// Where a table's indexes are in its space, and how its keys are built.
#[derive(Clone)]
pub struct Layout {
    pub def: Arc<TableDef>,
    pub space: u32,
    /// trees[0] is the clustered index; trees[i + hidden] is `def.indexes[i]`.
    pub trees: Vec<Tree>,
    /// No PRIMARY KEY: the clustered key is an 8-byte hidden row id.
    pub hidden: bool,
    pub name: String,
    /// How each column is stored (`row::col_kinds` of `def`), for decoding rows.
    pub kinds: Vec<row::ColKind>,
    /// The physical columns of rows of a table with instantly added or dropped columns
    /// (`row::Physical::of` of `def`): the row codec maps them to `def`'s order.
    pub phys: Option<Arc<row::Physical>>,
}

impl Layout {
    pub fn new(def: Arc<TableDef>, space: u32, roots: &[u32]) -> Layout {
        let hidden = def.primary_key().is_none();
        // A header may list more roots than the definition has indexes (an index build
        // that was never committed, `online.rs`): those trees are not this table's.
        let trees = roots
            .iter()
            .take(Self::n_trees(&def))
            .enumerate()
            .map(|(i, &root)| Tree {
                space,
                root,
                index_no: i as u16,
            })
            .collect();
        let name = format!("{}.{}", def.db, def.name);
        let kinds = row::col_kinds(&def);
        let phys = row::Physical::of(&def).map(Arc::new);
        Layout {
            def,
            space,
            trees,
            hidden,
            name,
            kinds,
            phys,
        }
    }

    pub fn n_trees(def: &TableDef) -> usize {
        def.indexes.len() + usize::from(def.primary_key().is_none())
    }

    pub fn clustered(&self) -> &Tree {
        &self.trees[0]
    }

    /// The tree of `def.indexes[i]`.
    pub fn tree_of_index(&self, i: usize) -> usize {
        i + usize::from(self.hidden)
    }

    /// Secondary trees: (tree number, index definition).
    pub fn secondaries(&self) -> impl Iterator<Item = (usize, &IndexDef)> {
        let skip = usize::from(!self.hidden);
        self.def
            .indexes
            .iter()
            .enumerate()
            .skip(skip)
            .map(|(i, ix)| (self.tree_of_index(i), ix))
    }

    pub fn clustered_key(&self, row: &[Value], row_id: u64) -> Vec<u8> {
        if self.hidden {
            return row_id.to_be_bytes().to_vec();
        }
        let mut k = Vec::new();
        encode_index_key(&mut k, &self.def, &self.def.indexes[0], row);
        k
    }

    pub fn row_id_of(&self, ckey: &[u8]) -> u64 {
        if self.hidden {
            ckey.try_into().map(u64::from_be_bytes).unwrap_or(0)
        } else {
            0
        }
    }

    pub fn entry_key(&self, ix: &IndexDef, row: &[Value], ckey: &[u8]) -> Vec<u8> {
        let mut k = Vec::new();
        encode_index_key(&mut k, &self.def, ix, row);
        k.extend_from_slice(ckey);
        k
    }

    /// Decodes the row of a clustered value (header + row, or header + overflow
    /// pointer).
    pub fn decode(&self, st: &crate::mtr::Storage, value: &[u8]) -> Result<Vec<Value>> {
        let bad = || Error::corrupt(&self.name, "a clustered record does not decode");
        let h = RecHeader::read(value).ok_or_else(bad)?;
        let chained;
        let bytes = if h.flags & row::FLAG_OVERFLOW != 0 {
            let p = value.get(HEADER..HEADER + 8).ok_or_else(bad)?;
            let len = u32::from_le_bytes([p[0], p[1], p[2], p[3]]) as usize;
            let first = u32::from_le_bytes([p[4], p[5], p[6], p[7]]);
            chained = crate::overflow::read_chain(st, self.space, first, len)
                .map_err(|e| crate::io_err(&self.name, e))?;
            &chained[..]
        } else {
            &value[HEADER..]
        };
        let mut row = Vec::with_capacity(self.kinds.len());
        row::decode_record_into(
            &self.def,
            &self.kinds,
            self.phys.as_deref(),
            h.flags,
            bytes,
            &mut row,
            None,
        )
        .ok_or_else(bad)?;
        Ok(row)
    }

    /// [`Layout::decode`] into `row`, reusing its strings' buffers; with `cols`, only
    /// the columns it marks (the others NULL; a row in an overflow chain is decoded
    /// whole).
    pub fn decode_into(
        &self,
        st: &crate::mtr::Storage,
        value: &[u8],
        row: &mut Vec<Value>,
        cols: Option<&[bool]>,
    ) -> Result<()> {
        let bad = || Error::corrupt(&self.name, "a clustered record does not decode");
        let h = RecHeader::read(value).ok_or_else(bad)?;
        if h.flags & row::FLAG_OVERFLOW != 0 {
            *row = self.decode(st, value)?;
            return Ok(());
        }
        let bytes = value.get(HEADER..).ok_or_else(bad)?;
        row::decode_record_into(
            &self.def,
            &self.kinds,
            self.phys.as_deref(),
            h.flags,
            bytes,
            row,
            cols,
        )
        .ok_or_else(bad)
    }

    /// A clustered value: `h` (its flags gain [`row::FLAG_COLS`] when the table has
    /// instantly added columns) and the row.
    pub fn encode(&self, h: RecHeader, row: &[Value]) -> Vec<u8> {
        let mut v = Vec::with_capacity(64);
        RecHeader {
            flags: h.flags | row::row_flags(&self.def),
            ..h
        }
        .write(&mut v);
        row::encode_record_row(&self.def, self.phys.as_deref(), row, &mut v);
        v
    }
}

thread_local! {
    /// The row vector [`BtreeTable::emit_row`] decodes into, between rows.
    static SCRATCH_ROW: std::cell::Cell<Vec<Value>> = const { std::cell::Cell::new(Vec::new()) };
    /// The bytes a secondary entry is rebuilt into to re-check it, between rows.
    static SCRATCH_KEY: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// What a secondary read found of the clustered record its entry leads to, looked at
/// in place on the leaf.
enum InPlace {
    /// The version the read view sees was decoded into the scratch row.
    Row,
    /// The version the read view sees is a delete mark: no row.
    Gone,
    /// An older version or an overflow record: the record, copied out, for the
    /// version walk.
    Copy(Vec<u8>),
}

/// Puts a decoded row's vector back for the next row, unless its strings are large (a
/// connection thread would keep a big value's memory for its life).
fn keep_scratch(row: Vec<Value>) {
    const KEEP_BYTES: usize = 64 << 10;
    let bytes: usize = row
        .iter()
        .map(|v| match v {
            Value::Bytes(b) => b.capacity(),
            _ => 0,
        })
        .sum();
    if bytes <= KEEP_BYTES {
        SCRATCH_ROW.with(|c| c.set(row));
    }
}

pub struct BtreeTable {
    pub(crate) inner: Arc<Inner>,
    pub(crate) lay: Layout,
    autoinc: AtomicU64,
    next_row_id: AtomicU64,
    ahi: AdaptiveHash,
    /// Set when DDL replaced this handle (`Table::retire`).
    retired: std::sync::atomic::AtomicBool,
    /// Per tree: the transaction id an online index build took when it finished (0:
    /// none). A consistent read whose view is older may not use that index: it holds
    /// entries for the latest versions only (1412, as InnoDB's `index->trx_id`).
    since: Vec<u64>,
    /// The mark of the table's contents ([`Inner::contents_mark`], 0: none since the
    /// start): a consistent read whose view is older gets 1412.
    contents_since: AtomicU64,
}

const AHI_SHARDS: usize = 64;
const AHI_SHARD_ENTRIES: usize = 1 << 15;

/// The adaptive hash index: clustered key → the leaf page that held it at the last
/// equality lookup, in independently locked shards. A stale entry costs one page
/// check; it is never trusted without one.
#[derive(Default)]
struct AdaptiveHash {
    shards: Vec<strata_storage::sync::LatchMutex<AhiMap>>,
    /// This index's hash seed (random per table handle), so which keys collide cannot
    /// be chosen from outside.
    seed: AhiSeed,
}

type AhiMap = std::collections::HashMap<Vec<u8>, u32, AhiSeed>;

/// The seed of [`AhiHasher`]; builds the hasher for the shards' maps.
#[derive(Clone, Copy, Default)]
struct AhiSeed(u64);

impl std::hash::BuildHasher for AhiSeed {
    type Hasher = AhiHasher;
    fn build_hasher(&self) -> AhiHasher {
        AhiHasher(self.0)
    }
}

/// A seeded multiply-rotate hash over 8-byte words with a final avalanche: every
/// equality lookup hashes its key twice (the shard, then the shard's map), and
/// std's SipHash showed in profiles of point selects. Keys are short (a primary
/// key's encoding).
#[derive(Clone, Copy)]
struct AhiHasher(u64);

const AHI_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

impl std::hash::Hasher for AhiHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(23) ^ w).wrapping_mul(AHI_MUL);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            h = (h.rotate_left(23) ^ u64::from_le_bytes(b)).wrapping_mul(AHI_MUL);
        }
        self.0 = h;
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(23) ^ n as u64).wrapping_mul(AHI_MUL);
    }
    fn finish(&self) -> u64 {
        // murmur3's fmix64: every input bit reaches every output bit, so the shard
        // (bits 32..38) and the map's bucket (low bits) and tag (top bits) are each
        // well spread.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

impl AdaptiveHash {
    fn new(policy: &Arc<strata_storage::sync::SpinPolicy>) -> AdaptiveHash {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(0);
        let seed = AhiSeed(h.finish());
        AdaptiveHash {
            shards: (0..AHI_SHARDS)
                .map(|_| {
                    strata_storage::sync::LatchMutex::with_policy(
                        policy.clone(),
                        AhiMap::with_hasher(seed),
                    )
                })
                .collect(),
            seed,
        }
    }
    fn shard(&self, key: &[u8]) -> usize {
        use std::hash::BuildHasher;
        (self.seed.hash_one(key) >> 32) as usize % AHI_SHARDS
    }
    fn get(&self, key: &[u8]) -> Option<u32> {
        self.shards[self.shard(key)].lock().get(key).copied()
    }
    fn put(&self, key: &[u8], page: u32) {
        let mut s = self.shards[self.shard(key)].lock();
        if s.len() >= AHI_SHARD_ENTRIES {
            s.clear();
        }
        s.insert(key.to_vec(), page);
    }
}

enum ReadKind {
    Snapshot(Arc<ReadView>),
    Latest,
    Locking(Mode, LockWait),
}

impl BtreeTable {
    pub(crate) fn open(inner: Arc<Inner>, lay: Layout) -> Result<BtreeTable> {
        let ahi = AdaptiveHash::new(inner.st.pool.latch_policy());
        let since = inner.index_since(&lay);
        let contents_since = inner
            .contents_since
            .lock()
            .get(&lay.space)
            .copied()
            .unwrap_or(0);
        let t = BtreeTable {
            contents_since: AtomicU64::new(contents_since),
            inner,
            lay,
            since,
            autoinc: AtomicU64::new(0),
            next_row_id: AtomicU64::new(1),
            retired: std::sync::atomic::AtomicBool::new(false),
            ahi,
        };
        t.init_counters()?;
        Ok(t)
    }

    /// AUTO_INCREMENT and the hidden row id restart at the largest stored value + 1.
    /// When the clustered key's order is the counter's (a hidden row id, or an
    /// AUTO_INCREMENT column leading the primary key: keys compare as the values do),
    /// the last record holds the largest and is the only one read; otherwise every
    /// record is. (Every open does this, an instant ADD COLUMN's too.)
    fn init_counters(&self) -> Result<()> {
        let st = &self.inner.st;
        let ai = self.lay.def.auto_increment_column();
        let last_is_max = match ai {
            None => true,
            Some(c) => {
                !self.lay.hidden
                    && self
                        .lay
                        .def
                        .primary_key()
                        .is_some_and(|pk| pk.columns.first() == Some(&c))
            }
        };
        let mut max_ai = 0u64;
        let mut max_id = 0u64;
        let mut err = None;
        self.lay
            .clustered()
            .range(
                st,
                &std::ops::Bound::Unbounded,
                &std::ops::Bound::Unbounded,
                last_is_max,
                &mut |batch| {
                    for (k, v) in batch.iter() {
                        max_id = max_id.max(self.lay.row_id_of(k));
                        if let Some(c) = ai {
                            match self.lay.decode(&self.inner.st, v) {
                                Ok(r) => {
                                    let n = match r[c] {
                                        Value::UInt(u) => u,
                                        ref v => v.to_i64().unwrap_or(0).max(0) as u64,
                                    };
                                    max_ai = max_ai.max(n);
                                }
                                Err(e) => {
                                    err = Some(e);
                                    return Ok(false);
                                }
                            }
                        }
                        if last_is_max {
                            return Ok(false);
                        }
                    }
                    Ok(true)
                },
            )
            .map_err(|e| io_err(&self.lay.name, e))?;
        if let Some(e) = err {
            return Err(e);
        }
        let start = self.lay.def.auto_increment_start.max(1);
        self.autoinc
            .store(max_ai.saturating_add(1).max(start), Ordering::SeqCst);
        self.next_row_id.store(max_id + 1, Ordering::SeqCst);
        Ok(())
    }

    fn io(&self, e: std::io::Error) -> Error {
        io_err(&self.lay.name, e)
    }

    fn with_trx<R>(&self, txn: &Txn, f: impl FnOnce(&BtreeTrx) -> Result<R>) -> Result<R> {
        BtreeTrx::with(&self.inner, txn, f)
    }

    /// The version of a clustered value that `view` sees (None: no visible row).
    /// An error when an old version in the undo spill file cannot be read.
    fn visible(&self, view: &ReadView, value: Vec<u8>) -> Result<Option<Vec<u8>>> {
        let mut v = value;
        loop {
            let Some(h) = RecHeader::read(&v) else {
                return Ok(None);
            };
            if view.sees(h.trx_id) {
                return Ok((!h.deleted()).then_some(v));
            }
            let old = self
                .inner
                .trx
                .versions
                .get(h.roll_ptr)
                .map_err(|e| self.io(e))?;
            let Some(old) = old else { return Ok(None) };
            let Some(val) = old.value.clone() else {
                return Ok(None);
            };
            v = val;
        }
    }

    fn read_kind(&self, txn: &Txn, trx: &BtreeTrx) -> ReadKind {
        match (txn.read_mode(), txn.isolation()) {
            (ReadMode::LockExclusive, _) => ReadKind::Locking(Mode::Exclusive, txn.lock_wait()),
            // InnoDB's SERIALIZABLE share-locks plain reads inside a transaction (BEGIN
            // or autocommit=0); an autocommitted statement reads a snapshot instead.
            (ReadMode::Consistent, Isolation::Serializable) if txn.single_statement() => {
                ReadKind::Snapshot(trx.view())
            }
            (ReadMode::LockShared, _) => ReadKind::Locking(Mode::Shared, txn.lock_wait()),
            (ReadMode::Consistent, Isolation::Serializable) => {
                ReadKind::Locking(Mode::Shared, LockWait::Wait)
            }
            (ReadMode::Consistent, Isolation::ReadUncommitted) => ReadKind::Latest,
            (ReadMode::Consistent, _) => ReadKind::Snapshot(trx.view()),
        }
    }

    /// Reads the rows of tree `tree_no` in `range`; with `cols`, only the columns it
    /// marks are decoded (see [`Table::scan_columns`]).
    fn read(
        &self,
        txn: &Txn,
        tree_no: usize,
        range: &KeyRange,
        reverse: bool,
        cols: Option<&[bool]>,
        f: &mut RowFn,
    ) -> Result<()> {
        let requested = cols;
        self.with_trx(txn, |trx| {
            let kind = self.read_kind(txn, trx);
            if let ReadKind::Snapshot(v) = &kind {
                let since = self.since.get(tree_no).copied().unwrap_or(0);
                if v.low_limit <= since.max(self.contents_since.load(Ordering::Relaxed)) {
                    return Err(Error::TableDefChanged);
                }
            }
            let st = &self.inner.st;
            let tree = self.lay.trees[tree_no];
            let ix = (tree_no > 0).then(|| {
                let i = tree_no - usize::from(self.lay.hidden);
                &self.lay.def.indexes[i]
            });
            // A secondary entry is re-checked against its row's index columns: those are
            // decoded too.
            let with_index;
            let cols = match (cols, ix) {
                (Some(c), Some(ix)) => {
                    let mut m = c.to_vec();
                    m.resize(self.lay.def.columns.len().max(m.len()), false);
                    for &ic in &ix.columns {
                        if let Some(x) = m.get_mut(ic) {
                            *x = true;
                        }
                    }
                    with_index = m;
                    Some(&with_index[..])
                }
                (c, _) => c,
            };
            // An equality lookup of a whole primary key: one record, found through the
            // adaptive hash index when it is on.
            if tree_no == 0 && !self.lay.hidden {
                if let Some(key) = point_key(range) {
                    let ahi = self.inner.ahi.load(Ordering::Relaxed);
                    let hint = if ahi { self.ahi.get(key) } else { None };
                    let (found, leaf) = tree.get_hinted(st, key, hint).map_err(|e| self.io(e))?;
                    if let Some(v) = found {
                        if ahi && hint != Some(leaf) {
                            self.ahi.put(key, leaf);
                        }
                        return self.emit(trx, &kind, None, key, &v, cols, f).map(|_| ());
                    }
                }
            }
            // An index-only read: leaves whose every entry the view can trust are read
            // from the entries alone (`covering.rs`); the others as below.
            let trust_below = match (&kind, ix, requested) {
                (ReadKind::Snapshot(view), Some(ix), Some(need))
                    if self.covers_index(ix, need) && self.inner.covering_on(self.lay.space) =>
                {
                    view.up_limit.min(self.inner.trx.clean_below())
                }
                _ => 0,
            };
            let mut err: Option<Error> = None;
            tree.range(st, &range.start, &range.end, reverse, &mut |batch| {
                let trusted = batch.max_trx() != 0 && batch.max_trx() < trust_below;
                if trusted {
                    self.inner
                        .index_only_records
                        .fetch_add(batch.len() as u64, Ordering::Relaxed);
                }
                for (k, v) in batch.iter() {
                    let res = match ix {
                        Some(ix) if trusted => self.emit_entry(ix, k, v, f),
                        _ => self.emit(trx, &kind, ix, k, v, cols, f),
                    };
                    match res {
                        Ok(Flow::Continue) => {}
                        Ok(Flow::Stop) => return Ok(false),
                        Err(e) => {
                            err = Some(e);
                            return Ok(false);
                        }
                    }
                }
                Ok(true)
            })
            .map_err(|e| self.io(e))?;
            err.map_or(Ok(()), Err)
        })
    }

    /// Hands one index record to `f` as the row version the read should see: `k, v` is
    /// a clustered record (`ix` None) or a secondary entry of index `ix`.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        trx: &BtreeTrx,
        kind: &ReadKind,
        ix: Option<&IndexDef>,
        k: &[u8],
        v: &[u8],
        cols: Option<&[bool]>,
        f: &mut RowFn,
    ) -> Result<Flow> {
        let st = &self.inner.st;
        let ckey: &[u8] = if ix.is_none() { k } else { v };
        let clustered = || -> Result<Option<Vec<u8>>> {
            if ix.is_none() {
                Ok(Some(v.to_vec()))
            } else {
                self.lay.clustered().get(st, ckey).map_err(|e| self.io(e))
            }
        };
        let live = |c: &Vec<u8>| RecHeader::read(c).is_some_and(|h| !h.deleted());
        let value = match kind {
            ReadKind::Snapshot(view) => {
                // The common case, a version the view sees, needs no copy of the record.
                match RecHeader::read(v) {
                    Some(h) if ix.is_none() && view.sees(h.trx_id) => {
                        if h.deleted() {
                            return Ok(Flow::Continue);
                        }
                        return self.emit_row(ix, k, ckey, v, cols, f);
                    }
                    _ if ix.is_some() => {
                        // Through a secondary entry: the clustered record is decoded on its
                        // leaf when the view sees it, copied out only for the version walk.
                        let mut row = SCRATCH_ROW.with(std::cell::Cell::take);
                        let found =
                            self.lay
                                .clustered()
                                .get_with(st, ckey, |c| match RecHeader::read(c) {
                                    Some(h)
                                        if view.sees(h.trx_id)
                                            && h.flags & row::FLAG_OVERFLOW == 0 =>
                                    {
                                        if h.deleted() {
                                            return Ok(InPlace::Gone);
                                        }
                                        self.lay.decode_into(st, c, &mut row, cols)?;
                                        Ok(InPlace::Row)
                                    }
                                    _ => Ok(InPlace::Copy(c.to_vec())),
                                });
                        let found = match found {
                            Ok(found) => found,
                            Err(e) => {
                                keep_scratch(row);
                                return Err(self.io(e));
                            }
                        };
                        match found {
                            Some(Ok(InPlace::Row)) => return self.finish_row(ix, k, ckey, row, f),
                            Some(Ok(InPlace::Copy(c))) => {
                                keep_scratch(row);
                                self.visible(view, c)?
                            }
                            Some(Err(e)) => {
                                keep_scratch(row);
                                return Err(e);
                            }
                            None | Some(Ok(InPlace::Gone)) => {
                                keep_scratch(row);
                                return Ok(Flow::Continue);
                            }
                        }
                    }
                    _ => match clustered()? {
                        Some(c) => self.visible(view, c)?,
                        None => None,
                    },
                }
            }
            ReadKind::Latest => clustered()?.filter(live),
            ReadKind::Locking(mode, wait) => {
                // The version read before the lock may be gone: read the latest again.
                let latest = self.lock_current(trx, ckey, *mode, *wait, Keep::ToTheEnd);
                match latest {
                    Ok(v) => v.filter(live),
                    // SKIP LOCKED: a row another transaction holds is left out.
                    Err(Error::LockWaitTimeout) if *wait == LockWait::SkipLocked => {
                        return Ok(Flow::Continue)
                    }
                    Err(Error::LockWaitTimeout) if *wait == LockWait::NoWait => {
                        return Err(Error::LockNowait)
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        let Some(value) = value else {
            return Ok(Flow::Continue);
        };
        self.emit_row(ix, k, ckey, &value, cols, f)
    }

    /// Whether a read of `ix` needing the columns `cols` marks can be answered from
    /// its entries.
    fn covers_index(&self, ix: &IndexDef, cols: &[bool]) -> bool {
        let pk = (!self.lay.hidden).then(|| &self.lay.def.indexes[0]);
        crate::covering::covers(&self.lay.def, pk, ix, cols)
    }

    /// Hands the row of a trusted secondary entry `k` (clustered key `ckey`) of `ix` to
    /// `f`, its values decoded from the key.
    fn emit_entry(&self, ix: &IndexDef, k: &[u8], ckey: &[u8], f: &mut RowFn) -> Result<Flow> {
        let pk = (!self.lay.hidden).then(|| &self.lay.def.indexes[0]);
        let mut row = SCRATCH_ROW.with(std::cell::Cell::take);
        if crate::covering::decode_entry(&self.lay.def, pk, ix, k, &mut row).is_none() {
            keep_scratch(row);
            return Err(Error::corrupt(
                &self.lay.name,
                "a secondary index entry does not decode",
            ));
        }
        let flow = f(self.lay.row_id_of(ckey), &row);
        keep_scratch(row);
        flow
    }

    /// Decodes a visible clustered value and hands the row to `f` (re-checking a
    /// secondary entry against the row it leads to).
    fn emit_row(
        &self,
        ix: Option<&IndexDef>,
        k: &[u8],
        ckey: &[u8],
        value: &[u8],
        cols: Option<&[bool]>,
        f: &mut RowFn,
    ) -> Result<Flow> {
        // The row is decoded into this thread's scratch vector, taken out for the call
        // (a nested scan in `f` takes its own) and put back afterwards unless it holds
        // a large value, so a scan's rows reuse one vector and its strings' buffers.
        let mut row = SCRATCH_ROW.with(std::cell::Cell::take);
        if let Err(e) = self.lay.decode_into(&self.inner.st, value, &mut row, cols) {
            keep_scratch(row);
            return Err(e);
        }
        self.finish_row(ix, k, ckey, row, f)
    }

    /// Hands a decoded row (the thread's scratch vector) to `f`, after re-checking that
    /// a secondary entry `k` of `ix` is the row's current entry; puts the vector back.
    fn finish_row(
        &self,
        ix: Option<&IndexDef>,
        k: &[u8],
        ckey: &[u8],
        row: Vec<Value>,
        f: &mut RowFn,
    ) -> Result<Flow> {
        if let Some(ix) = ix {
            let mut entry = SCRATCH_KEY.with(std::cell::Cell::take);
            entry.clear();
            encode_index_key(&mut entry, &self.lay.def, ix, &row);
            entry.extend_from_slice(ckey);
            let current = entry == k;
            SCRATCH_KEY.with(|c| c.set(entry));
            if !current {
                keep_scratch(row);
                return Ok(Flow::Continue);
            }
        }
        let flow = f(self.lay.row_id_of(ckey), &row);
        keep_scratch(row);
        flow
    }

    /// Checks a unique secondary index for another live row with the same values. The
    /// lock on the value it takes is pushed to `taken`, for the caller to give back
    /// once its row is written (`BtreeTrx::done_writing`): the written row then stands
    /// for it, as a later checker of the value waits on that row.
    fn check_unique(
        &self,
        trx: &BtreeTrx,
        pos: usize,
        row: &[Value],
        ckey: &[u8],
        taken: &mut Vec<LockKey>,
    ) -> Result<()> {
        let ix = &self.lay.def.indexes[pos];
        if !ix.unique || row_key_has_null(&self.lay.def, ix, row) {
            return Ok(());
        }
        let tree_no = self.lay.tree_of_index(pos);
        let mut prefix = Vec::new();
        encode_index_key(&mut prefix, &self.lay.def, ix, row);
        let range = KeyRange::prefix(prefix.clone());
        let st = &self.inner.st;
        'check: loop {
            // Serializes inserters of the same value (they would not see each other's
            // rows).
            let (granted, value_lock) = trx.acquire(
                &self.lay,
                tree_no as u16,
                &prefix,
                Mode::Exclusive,
                LockWait::Wait,
            )?;
            let took = granted == Granted::New;
            if took {
                taken.push(value_lock);
            }
            let mut candidates = Vec::new();
            self.lay.trees[tree_no]
                .range(st, &range.start, &range.end, false, &mut |batch| {
                    candidates.extend(batch.iter().map(|(_, v)| v.to_vec()));
                    Ok(true)
                })
                .map_err(|e| self.io(e))?;
            for other in candidates {
                if other == ckey {
                    continue;
                }
                let cur = match self.lock_once(trx, &other, Mode::Shared, LockWait::Wait)? {
                    Current::Row(cur, granted, k) => {
                        trx.keep(granted, k);
                        cur
                    }
                    Current::Held(owner) => {
                        // Not holding the value while waiting for the row's writer: it
                        // may insert the value again and must meet its own row, not us.
                        if took {
                            if let Some(k) = taken.pop() {
                                trx.give_back(&k);
                            }
                        }
                        trx.wait_implicit(&self.lay, &other, owner, LockWait::Wait)?;
                        continue 'check;
                    }
                };
                let Some(cur) = cur else { continue };
                if RecHeader::read(&cur).is_none_or(|h| h.deleted()) {
                    continue;
                }
                let r = self.lay.decode(&self.inner.st, &cur)?;
                let mut k = Vec::new();
                encode_index_key(&mut k, &self.lay.def, ix, &r);
                if k == prefix {
                    return Err(Error::DuplicateKey {
                        value: key_text(ix, row),
                        key: format!("{}.{}", self.lay.def.name, ix.name),
                    });
                }
            }
            return Ok(());
        }
    }

    /// Writes a new version of the clustered record `ckey` (None: delete-mark of `old`).
    fn write_version(
        &self,
        trx: &BtreeTrx,
        ckey: &[u8],
        cur: Option<Vec<u8>>,
        new_row: Option<&[Value]>,
    ) -> Result<()> {
        let st = &self.inner.st;
        let trx_id = trx.ensure_id();
        let roll_ptr = self
            .inner
            .trx
            .versions
            .put(OldVersion { value: cur.clone() })
            .map_err(|e| self.io(e))?;
        let h = RecHeader {
            flags: if new_row.is_none() { FLAG_DELETED } else { 0 },
            trx_id,
            roll_ptr,
        };
        let value = match (new_row, &cur) {
            (Some(r), _) => self.lay.encode(h, r),
            (None, Some(c)) => {
                // Delete-mark: same row bytes (or the same overflow pointer), and so
                // the same flags for their form.
                let kept = RecHeader::read(c)
                    .map_or(0, |o| o.flags & (row::FLAG_OVERFLOW | row::FLAG_COLS));
                let mut v = Vec::with_capacity(c.len());
                RecHeader {
                    flags: h.flags | kept,
                    ..h
                }
                .write(&mut v);
                v.extend_from_slice(&c[HEADER..]);
                v
            }
            (None, None) => return Ok(()),
        };
        let page_size = st.pool.page_size();
        let value = if value.len() > crate::tree::max_value(page_size) {
            // Too big for a leaf: the row goes to an overflow chain.
            let chain = crate::overflow::write_chain(st, self.lay.space, &value[HEADER..]);
            let (first, _) = match chain {
                Ok(c) => c,
                Err(e) => {
                    self.inner.trx.versions.remove(roll_ptr);
                    return Err(self.io(e));
                }
            };
            let mut v = Vec::with_capacity(HEADER + 8);
            // The flags the record was encoded with (FLAG_COLS among them).
            RecHeader {
                flags: value[0] | row::FLAG_OVERFLOW,
                ..h
            }
            .write(&mut v);
            v.extend_from_slice(&((value.len() - HEADER) as u32).to_le_bytes());
            v.extend_from_slice(&first.to_le_bytes());
            v
        } else {
            value
        };
        let undo_no = match trx.record_undo(self.lay.space, ckey, roll_ptr) {
            Ok(n) => n,
            Err(e) => {
                // The change list had no room on disk: the change is not made.
                self.inner.trx.versions.remove(roll_ptr);
                return Err(self.io(e));
            }
        };
        let undo =
            crate::recovery::undo_record(trx_id, undo_no, self.lay.space, ckey, cur.as_deref());
        let res = self
            .lay
            .clustered()
            .put(st, ckey, &value, PutMode::Upsert, &undo);
        match res {
            Ok(_) => {
                self.inner.log_online(self.lay.space, ckey);
                Ok(())
            }
            Err(e) => {
                trx.forget_last_undo();
                self.inner.trx.versions.remove(roll_ptr);
                Err(self.io(e))
            }
        }
    }

    /// Inserts the secondary entries of `row` (by transaction `trx_id`), except those
    /// equal to the replaced version `except`'s; each entry of `except` that `row` no
    /// longer has is stale from now on, which its leaf's max transaction id records
    /// (`covering.rs`).
    fn add_entries(
        &self,
        trx_id: u64,
        row: &[Value],
        ckey: &[u8],
        except: Option<&[Value]>,
    ) -> Result<()> {
        let st = &self.inner.st;
        for (tree_no, ix) in self.lay.secondaries() {
            let k = self.lay.entry_key(ix, row, ckey);
            if let Some(old) = except {
                let ok = self.lay.entry_key(ix, old, ckey);
                if ok == k {
                    continue;
                }
                self.lay.trees[tree_no]
                    .stamp(st, &ok, trx_id)
                    .map_err(|e| self.io(e))?;
            }
            if k.len() > crate::tree::max_key(st.pool.page_size()) {
                return Err(Error::KeyTooLong(crate::tree::max_key(st.pool.page_size())));
            }
            self.lay.trees[tree_no]
                .put_stamped(st, &k, ckey, PutMode::Insert, &[], trx_id)
                .map_err(|e| self.io(e))?;
        }
        Ok(())
    }

    /// A delete-mark by `trx_id` makes every entry of `row` stale.
    fn stamp_entries(&self, trx_id: u64, row: &[Value], ckey: &[u8]) -> Result<()> {
        let st = &self.inner.st;
        for (tree_no, ix) in self.lay.secondaries() {
            let k = self.lay.entry_key(ix, row, ckey);
            self.lay.trees[tree_no]
                .stamp(st, &k, trx_id)
                .map_err(|e| self.io(e))?;
        }
        Ok(())
    }

    fn unique_positions(&self) -> impl Iterator<Item = usize> + '_ {
        let skip = usize::from(!self.lay.hidden);
        (skip..self.lay.def.indexes.len()).filter(|&i| self.lay.def.indexes[i].unique)
    }

    fn insert_row(&self, trx: &BtreeTrx, row: &[Value], ckey: &[u8]) -> Result<()> {
        let st = &self.inner.st;
        let page_size = st.pool.page_size();
        if ckey.len() > crate::tree::max_key(page_size) {
            return Err(Error::KeyTooLong(crate::tree::max_key(page_size)));
        }
        let mut taken = Vec::new();
        let res = self.insert_locked(trx, row, ckey, &mut taken);
        trx.done_writing(taken);
        res
    }

    /// [`BtreeTable::insert_row`] with the locks it takes for the write pushed to
    /// `taken`: the inserted row carries the transaction's id, its implicit lock, so a
    /// bulk insert holds no lock entry per row (`lock.rs`).
    fn insert_locked(
        &self,
        trx: &BtreeTrx,
        row: &[Value],
        ckey: &[u8],
        taken: &mut Vec<LockKey>,
    ) -> Result<()> {
        let cur = self.lock_current(
            trx,
            ckey,
            Mode::Exclusive,
            LockWait::Wait,
            Keep::ForTheWrite(taken),
        )?;
        if let Some(c) = &cur {
            if RecHeader::read(c).is_none_or(|h| !h.deleted()) {
                let pk = &self.lay.def.indexes[0];
                return Err(Error::DuplicateKey {
                    value: key_text(pk, row),
                    key: format!("{}.PRIMARY", self.lay.def.name),
                });
            }
        }
        for pos in self.unique_positions().collect::<Vec<_>>() {
            self.check_unique(trx, pos, row, ckey, taken)?;
        }
        self.write_version(trx, ckey, cur, Some(row))?;
        self.add_entries(trx.ensure_id(), row, ckey, None)
    }

    /// Writes `new` over the live record `cur` of `okey` (its old row `old`), checking
    /// the unique indexes whose values change; their value locks go to `taken`.
    fn update_row(
        &self,
        trx: &BtreeTrx,
        okey: &[u8],
        cur: Vec<u8>,
        old: &[Value],
        new: &[Value],
        taken: &mut Vec<LockKey>,
    ) -> Result<()> {
        for pos in self.unique_positions().collect::<Vec<_>>() {
            let ix = &self.lay.def.indexes[pos];
            if ix.columns.iter().any(|&c| old[c] != new[c]) {
                self.check_unique(trx, pos, new, okey, taken)?;
            }
        }
        let cur_row = self.lay.decode(&self.inner.st, &cur)?;
        self.write_version(trx, okey, Some(cur), Some(new))?;
        self.add_entries(trx.ensure_id(), new, okey, Some(&cur_row))
    }

    /// Locks clustered key `key` in `mode` and reads its current record, once no other
    /// running transaction's write holds the row. A record whose transaction id is a
    /// running transaction's is locked by it (the implicit lock of its change,
    /// `lock.rs`): `trx` gives back the lock it has just taken, waits per `wait` for that
    /// transaction to end, and tries again. The lock taken goes where `keep` says.
    fn lock_current(
        &self,
        trx: &BtreeTrx,
        key: &[u8],
        mode: Mode,
        wait: LockWait,
        keep: Keep<'_>,
    ) -> Result<Option<Vec<u8>>> {
        loop {
            match self.lock_once(trx, key, mode, wait)? {
                Current::Row(cur, granted, k) => {
                    match keep {
                        Keep::ToTheEnd => trx.keep(granted, k),
                        Keep::ForTheWrite(taken) => {
                            if granted == Granted::New {
                                taken.push(k);
                            }
                        }
                    }
                    return Ok(cur);
                }
                Current::Held(owner) => trx.wait_implicit(&self.lay, key, owner, wait)?,
            }
        }
    }

    /// One try of [`BtreeTable::lock_current`]: the record with the lock taken, or the
    /// running transaction that holds the row implicitly (the lock just taken given
    /// back, so no lock is held while waiting for it: it may want the row again).
    fn lock_once(&self, trx: &BtreeTrx, key: &[u8], mode: Mode, wait: LockWait) -> Result<Current> {
        let (granted, k) = trx.acquire(&self.lay, 0, key, mode, wait)?;
        let cur = self
            .lay
            .clustered()
            .get(&self.inner.st, key)
            .map_err(|e| self.io(e));
        let cur = match cur {
            Ok(c) => c,
            Err(e) => {
                trx.keep(granted, k);
                return Err(e);
            }
        };
        let me = trx.ensure_id();
        let owner = cur
            .as_deref()
            .and_then(RecHeader::read)
            .map(|h| h.trx_id)
            .filter(|&t| t != me && self.inner.trx.is_active(t));
        match owner {
            None => Ok(Current::Row(cur, granted, k)),
            Some(owner) => {
                if granted == Granted::New {
                    trx.give_back(&k);
                } else {
                    trx.keep(granted, k);
                }
                Ok(Current::Held(owner))
            }
        }
    }
}

/// The key of a range that holds exactly the keys starting with it (an equality on
/// leading index columns), as `KeyRange::prefix` builds it.
fn point_key(r: &KeyRange) -> Option<&[u8]> {
    use std::ops::Bound;
    match (&r.start, &r.end) {
        (Bound::Included(k), Bound::Excluded(e))
            if strata_types::keycode::prefix_successor(k).as_deref() == Some(&e[..]) =>
        {
            Some(k)
        }
        _ => None,
    }
}

/// The duplicate value as MySQL prints it in error 1062: the key's columns joined by '-'.
pub(crate) fn key_text(ix: &IndexDef, row: &[Value]) -> String {
    ix.columns
        .iter()
        .map(|&c| row[c].to_text())
        .collect::<Vec<_>>()
        .join("-")
}

impl Table for BtreeTable {
    fn covers(&self, index: usize, cols: &[bool]) -> bool {
        match self.lay.def.indexes.get(index) {
            Some(ix) if !ix.primary => self.covers_index(ix, cols),
            _ => false,
        }
    }

    fn clustered_primary(&self) -> bool {
        true
    }

    /// `entry_key`: the index columns, then the clustered key (without a primary key
    /// that is a hidden row id, which no condition names).
    fn secondary_keys_end_with_primary(&self) -> bool {
        !self.lay.hidden
    }

    fn def(&self) -> &Arc<TableDef> {
        &self.lay.def
    }

    fn lock(&self, _mode: LockMode) -> TableLock {
        // Row locks, not table locks: statements on one table run concurrently.
        TableLock::none()
    }

    fn scan(&self, txn: &Txn, f: &mut RowFn) -> Result<()> {
        self.read(txn, 0, &KeyRange::all(), false, None, f)
    }

    fn scan_columns(&self, txn: &Txn, cols: &[bool], f: &mut RowFn) -> Result<()> {
        self.read(txn, 0, &KeyRange::all(), false, Some(cols), f)
    }

    fn index_scan_columns(
        &self,
        txn: &Txn,
        index: usize,
        range: &KeyRange,
        reverse: bool,
        cols: &[bool],
        f: &mut RowFn,
    ) -> Result<()> {
        self.read(
            txn,
            self.lay.tree_of_index(index),
            range,
            reverse,
            Some(cols),
            f,
        )
    }

    fn index_scan(
        &self,
        txn: &Txn,
        index: usize,
        range: &KeyRange,
        reverse: bool,
        f: &mut RowFn,
    ) -> Result<()> {
        self.read(txn, self.lay.tree_of_index(index), range, reverse, None, f)
    }

    fn insert(&self, txn: &Txn, row: &mut Vec<Value>) -> Result<Inserted> {
        let mut generated = None;
        let mut explicit = None;
        if let Some(c) = self.lay.def.auto_increment_column() {
            // The SQL layer turns an explicit 0 into NULL unless sql_mode has
            // NO_AUTO_VALUE_ON_ZERO, so a 0 here is a value to keep.
            let given = row[c].to_i64().unwrap_or(0);
            if row[c].is_null() {
                let n = self.autoinc.fetch_add(1, Ordering::SeqCst);
                row[c] = if self.lay.def.columns[c].data_type.is_unsigned() {
                    Value::UInt(n)
                } else {
                    Value::Int(n as i64)
                };
                generated = Some(n);
            } else if given > 0 {
                explicit = Some(given as u64);
            }
        }
        let row_id = if self.lay.hidden {
            self.next_row_id.fetch_add(1, Ordering::SeqCst)
        } else {
            0
        };
        let ckey = self.lay.clustered_key(row, row_id);
        self.inner.log_room(txn).map_err(|e| self.io(e))?;
        self.with_trx(txn, |trx| self.insert_row(trx, row, &ckey))?;
        // An explicit value moves the counter only once its row is in, as InnoDB's
        // write_row does: a row refused for a duplicate key leaves it alone.
        if let Some(given) = explicit {
            self.autoinc.fetch_max(given + 1, Ordering::SeqCst);
        }
        Ok(Inserted {
            row_id,
            generated_id: generated,
        })
    }

    fn update(&self, txn: &Txn, id: RowId, old: &[Value], new: &[Value]) -> Result<RowId> {
        let okey = self.lay.clustered_key(old, id);
        let nkey = self.lay.clustered_key(new, id);
        self.inner.log_room(txn).map_err(|e| self.io(e))?;
        self.with_trx(txn, |trx| {
            if okey != nkey {
                // The primary key changed: the row moves.
                self.delete_row(trx, &okey)?;
                return self.insert_row(trx, new, &nkey);
            }
            let cur =
                self.lock_current(trx, &okey, Mode::Exclusive, LockWait::Wait, Keep::ToTheEnd)?;
            let Some(cur) = cur.filter(|c| RecHeader::read(c).is_some_and(|h| !h.deleted())) else {
                return Ok(());
            };
            let mut taken = Vec::new();
            let res = self.update_row(trx, &okey, cur, old, new, &mut taken);
            trx.done_writing(taken);
            if res.is_ok() {
                trx.written(&self.lay, &okey);
            }
            res
        })?;
        Ok(id)
    }

    fn delete(&self, txn: &Txn, id: RowId, old: &[Value]) -> Result<()> {
        let key = self.lay.clustered_key(old, id);
        self.inner.log_room(txn).map_err(|e| self.io(e))?;
        self.with_trx(txn, |trx| self.delete_row(trx, &key))
    }

    fn reserve_auto_increment(&self, n: u64, at_least: u64) -> Option<u64> {
        let mut first = 0;
        // One atomic step, so concurrent statements never share a value.
        let _ = self
            .autoinc
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |cur| {
                first = cur.max(at_least);
                Some(cur.max(first.saturating_add(n)))
            });
        Some(first)
    }

    fn truncate(&self) -> Result<()> {
        self.inner.truncate_space(&self.lay)?;
        self.mark_new_contents();
        self.autoinc
            .store(self.lay.def.auto_increment_start.max(1), Ordering::SeqCst);
        self.next_row_id.store(1, Ordering::SeqCst);
        Ok(())
    }

    fn status(&self) -> TableStatus {
        let pages = self.inner.st.pool.space_pages(self.lay.space) as u64;
        let page_size = self.inner.st.pool.page_size() as u64;
        TableStatus {
            rows: self.inner.estimate_rows(&self.lay),
            data_length: pages * page_size,
            index_length: 0,
            data_free: 0,
            auto_increment: self.autoinc.load(Ordering::SeqCst),
        }
    }

    fn flush(&self) -> Result<()> {
        self.inner.checkpoint()
    }

    fn check(&self, txn: &Txn) -> Result<()> {
        let _ = txn;
        crate::check::check_table(&self.inner, &self.lay)
    }

    fn mark_new_contents(&self) {
        let id = self.inner.contents_mark(self.lay.space);
        self.contents_since.store(id, Ordering::Relaxed);
    }

    fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    fn begin_index_build(
        &self,
        new_def: &TableDef,
        opts: &IndexBuildOptions,
    ) -> Option<Result<Box<dyn IndexBuild>>> {
        crate::online::start(self, new_def, opts)
    }

    fn retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }
}

impl BtreeTable {
    fn delete_row(&self, trx: &BtreeTrx, key: &[u8]) -> Result<()> {
        let st = &self.inner.st;
        let cur = self.lock_current(trx, key, Mode::Exclusive, LockWait::Wait, Keep::ToTheEnd)?;
        match cur {
            Some(c) if RecHeader::read(&c).is_some_and(|h| !h.deleted()) => {
                let row = if self.lay.trees.len() > 1 {
                    Some(self.lay.decode(st, &c)?)
                } else {
                    None
                };
                self.write_version(trx, key, Some(c), None)?;
                trx.written(&self.lay, key);
                match row {
                    Some(r) => self.stamp_entries(trx.ensure_id(), &r, key),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }
}
