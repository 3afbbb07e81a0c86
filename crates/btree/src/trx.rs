//! The transaction system: transaction ids, the set of active read-write transactions,
//! read views (MVCC snapshots), and the in-memory store of old row versions.
//!
//! A read view is InnoDB's: a version written by transaction `t` is visible when `t` is
//! the viewer itself, or `t` is below every id that was active when the view was made,
//! or below the next unassigned id and not among the active ones. A record names its
//! writer (`trx_id`) and its previous version (`roll_ptr`, a key into [`VersionStore`]);
//! a reader walks back until it finds a version its view sees.
//!
//! Old versions live in memory up to `strata_undo_memory_size` bytes; past that, new
//! ones go to the undo spill file (`undo_spill.rs`, `docs/format/undo.md`), so a
//! long-open read view or a huge transaction costs disk, not memory. Neither survives a
//! restart, and need not: no read view exists then, and every record on disk was written
//! by a committed transaction (recovery rolled the others back from the redo log). Purge
//! frees the versions of a committed transaction once every read view open at its
//! commit has closed.

use crate::change_list::ChangeList;
use crate::undo_spill::UndoSpill;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, OnceLock};
use strata_storage::sync::{
    default_policy, AtomicU64, AtomicUsize, Latch, LatchMutex, Ordering, SpinPolicy,
};

/// An MVCC snapshot.
#[derive(Debug)]
pub struct ReadView {
    /// The viewing transaction's own id: 0 while it has not written, set when its
    /// first write gives it one ([`ReadView::set_creator`]), so it sees its own changes
    /// made after its first read (InnoDB sets its view's `m_creator_trx_id` likewise).
    creator: AtomicU64,
    /// Ids below this were committed (or rolled back) when the view was made.
    pub up_limit: u64,
    /// Ids at or above this did not exist yet.
    pub low_limit: u64,
    /// Ids in between that were still active, sorted.
    pub active: Vec<u64>,
    /// Commit serial number when the view was made (purge's horizon).
    pub serial: u64,
}

impl ReadView {
    /// The viewing transaction got its id (at its first write, after the view was
    /// made): its changes are visible to it. The id is newer than the view, so no
    /// other transaction's change could have carried it.
    pub fn set_creator(&self, id: u64) {
        self.creator.store(id, Ordering::Relaxed);
    }

    pub fn sees(&self, trx_id: u64) -> bool {
        trx_id == self.creator.load(Ordering::Relaxed)
            || trx_id < self.up_limit
            || (trx_id < self.low_limit && self.active.binary_search(&trx_id).is_err())
    }
}

/// An old version of a clustered record: its full value (header and row) before a
/// change, or None when the row did not exist.
pub struct OldVersion {
    pub value: Option<Vec<u8>>,
}

const VERSION_SHARDS: usize = 64;

/// What one in-memory version costs beyond its value's bytes, estimated: the Arc's
/// counts and Vec header (40), the map's slot and control byte at its load factor
/// (~20), and the allocator's rounding and headers of the two allocations (~32).
pub const VERSION_OVERHEAD: usize = 96;

/// roll_ptr → old version: in memory while they fit `limit` bytes, in the spill file
/// after that.
pub struct VersionStore {
    next: AtomicU64,
    shards: Vec<LatchMutex<std::collections::HashMap<u64, Arc<OldVersion>>>>,
    /// Bytes the in-memory versions hold (values plus [`VERSION_OVERHEAD`] each).
    mem_bytes: AtomicUsize,
    /// `strata_undo_memory_size`: past it new versions spill (when there is a file).
    limit: AtomicUsize,
    spill: OnceLock<UndoSpill>,
}

impl Default for VersionStore {
    fn default() -> Self {
        VersionStore::starting_at(1, &default_policy())
    }
}

impl VersionStore {
    /// Roll pointers of this run start at `first`; the engine makes it larger than any
    /// pointer an earlier run left in a record, so those lead nowhere instead of to a
    /// version of another row.
    pub fn starting_at(first: u64, policy: &Arc<SpinPolicy>) -> VersionStore {
        VersionStore {
            next: AtomicU64::new(first.max(1)),
            shards: (0..VERSION_SHARDS)
                .map(|_| LatchMutex::with_policy(policy.clone(), Default::default()))
                .collect(),
            mem_bytes: AtomicUsize::new(0),
            limit: AtomicUsize::new(usize::MAX),
            spill: OnceLock::new(),
        }
    }

    /// Versions past the memory limit go to `spill` from now on (once).
    pub fn set_spill(&self, spill: UndoSpill) {
        let _ = self.spill.set(spill);
    }

    pub fn spill(&self) -> Option<&UndoSpill> {
        self.spill.get()
    }

    /// The memory bound (`strata_undo_memory_size`).
    pub fn set_limit(&self, bytes: usize) {
        self.limit.store(bytes, Ordering::Relaxed);
    }

    /// Bytes of versions held in memory.
    pub fn memory_bytes(&self) -> usize {
        self.mem_bytes.load(Ordering::Relaxed)
    }

    /// Stores a version; returns its roll pointer. Fails only when it had to go to the
    /// spill file and the file could not be written (a full disk).
    pub fn put(&self, v: OldVersion) -> std::io::Result<u64> {
        let size = v.value.as_ref().map_or(0, Vec::len) + VERSION_OVERHEAD;
        if self.mem_bytes.load(Ordering::Relaxed) + size > self.limit.load(Ordering::Relaxed) {
            if let Some(sp) = self.spill.get() {
                if UndoSpill::fits(v.value.as_ref().map(Vec::len)) {
                    return sp.put(&self.next, v.value.as_deref());
                }
            }
        }
        self.mem_bytes.fetch_add(size, Ordering::Relaxed);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.shards[id as usize % VERSION_SHARDS]
            .lock()
            .insert(id, Arc::new(v));
        Ok(id)
    }

    /// Stores a version under roll pointer `id` of an earlier run: recovery rebuilding
    /// the version chains of an XA-prepared transaction, whose records on the pages
    /// (and older images) name these pointers. Runs' pointer ranges never overlap, so
    /// no version of this run has such a pointer.
    pub fn put_at(&self, id: u64, v: OldVersion) {
        let size = v.value.as_ref().map_or(0, Vec::len) + VERSION_OVERHEAD;
        self.mem_bytes.fetch_add(size, Ordering::Relaxed);
        self.shards[id as usize % VERSION_SHARDS]
            .lock()
            .insert(id, Arc::new(v));
    }

    /// The version `id` names; None when it names none (purged, rolled back, or a
    /// pointer of an earlier run). An error when a spilled version cannot be read.
    pub fn get(&self, id: u64) -> std::io::Result<Option<Arc<OldVersion>>> {
        if id == 0 {
            return Ok(None);
        }
        let found = self.shards[id as usize % VERSION_SHARDS]
            .lock()
            .get(&id)
            .cloned();
        if found.is_some() {
            return Ok(found);
        }
        match self.spill.get() {
            Some(sp) if sp.active() => Ok(sp.get(id)?.map(|value| Arc::new(OldVersion { value }))),
            _ => Ok(None),
        }
    }

    pub fn remove(&self, id: u64) {
        let gone = self.shards[id as usize % VERSION_SHARDS].lock().remove(&id);
        match gone {
            Some(v) => {
                let size = v.value.as_ref().map_or(0, Vec::len) + VERSION_OVERHEAD;
                self.mem_bytes.fetch_sub(size, Ordering::Relaxed);
            }
            None => {
                if let Some(sp) = self.spill.get().filter(|sp| sp.active()) {
                    sp.remove(id);
                }
            }
        }
    }

    /// Versions stored, in memory and spilled.
    pub fn len(&self) -> usize {
        let spilled = self.spill.get().map_or(0, UndoSpill::entries);
        self.shards.iter().map(|s| s.lock().len()).sum::<usize>() + spilled
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One row change of a transaction, as undo and purge see it.
#[derive(Clone, Debug)]
pub struct UndoItem {
    pub space: u32,
    pub key: Vec<u8>,
    /// The version store entry holding the row as it was before the change.
    pub roll_ptr: u64,
    /// Position in the transaction's changes (never reused within it), logged with the
    /// undo so recovery can tell a relogged copy from a new change.
    pub undo_no: u32,
}

/// A committed transaction's changes waiting for purge.
pub struct PurgeBatch {
    pub trx_id: u64,
    pub serial: u64,
    /// LSN before the transaction's first undo record: the log must keep it (or a
    /// re-logged copy) until purge is done with the batch.
    pub first_lsn: u64,
    /// Bounded in memory however large the transaction was (`change_list.rs`).
    pub items: ChangeList,
}

pub struct TrxSys {
    /// The first id of this run: every smaller id belongs to a transaction of an earlier
    /// run, committed or rolled back by recovery.
    first_id: u64,
    next_id: AtomicU64,
    /// Active read-write transactions: id → LSN of their first log record.
    active: Latch<BTreeMap<u64, u64>>,
    /// The smallest id in `active` (u64::MAX: none), set under its write latch: a
    /// record's id below it belongs to an ended transaction, known without the latch
    /// ([`TrxSys::is_active`], asked for every row a write or locking read touches).
    min_active: AtomicU64,
    serial: AtomicU64,
    /// Open read views by serial: how many, and the smallest `up_limit` among them.
    /// Taken by every statement's read view, the trx system's hottest mutex.
    views: LatchMutex<BTreeMap<u64, (usize, u64)>>,
    pub versions: VersionStore,
    pub purge_queue: LatchMutex<VecDeque<PurgeBatch>>,
    /// Read-write transactions whose secondary entries may still include stale ones:
    /// from `begin` until rollback has removed its entries ([`TrxSys::cleaned`]) or
    /// purge has processed its committed changes. Covering reads trust a leaf only
    /// below the smallest ([`TrxSys::clean_below`]).
    /// Counted: a transaction recovery hands to purge owes one batch per change.
    unpurged: LatchMutex<BTreeMap<u64, usize>>,
}

impl TrxSys {
    /// A trx system whose latches wait per the process-wide default policy.
    pub fn new(first_id: u64) -> TrxSys {
        TrxSys::with_policy(first_id, &default_policy())
    }

    /// A trx system whose latches wait per `policy` (the engine's).
    pub fn with_policy(first_id: u64, policy: &Arc<SpinPolicy>) -> TrxSys {
        TrxSys {
            first_id: first_id.max(1),
            next_id: AtomicU64::new(first_id.max(1)),
            active: Latch::with_policy(policy.clone(), BTreeMap::new()),
            min_active: AtomicU64::new(u64::MAX),
            serial: AtomicU64::new(1),
            views: LatchMutex::with_policy(policy.clone(), BTreeMap::new()),
            // Each restart moves the id ceiling up by at least 100,000, so runs' roll
            // pointer ranges (2^24 per id) never overlap.
            versions: VersionStore::starting_at(first_id.max(1) << 24, policy),
            purge_queue: LatchMutex::with_policy(policy.clone(), VecDeque::new()),
            unpurged: LatchMutex::with_policy(policy.clone(), Default::default()),
        }
    }

    pub fn first_id(&self) -> u64 {
        self.first_id
    }

    /// The next id that would be assigned (persisted as a ceiling by the engine).
    pub fn peek_next_id(&self) -> u64 {
        self.next_id.load(Ordering::SeqCst)
    }

    /// An id no transaction takes, ordered with every view: views opened before this
    /// call have `low_limit <= id`, views opened after it `low_limit > id`. DDL marks a
    /// table's new contents with it (`Inner::contents_mark`).
    pub fn mark(&self) -> u64 {
        let _ordered = self.active.write();
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// Makes a transaction read-write: gives it an id and registers it as active.
    pub fn begin(&self, first_lsn: u64) -> u64 {
        let mut a = self.active.write();
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        a.insert(id, first_lsn);
        self.note_min_active(&a);
        self.owes(id);
        id
    }

    fn note_min_active(&self, active: &BTreeMap<u64, u64>) {
        let min = active.keys().next().copied().unwrap_or(u64::MAX);
        self.min_active.store(min, Ordering::SeqCst);
    }

    /// Whether transaction `id` is still running (an XA-prepared one recovery kept
    /// counts): a record it wrote is then locked by it (the implicit lock).
    pub fn is_active(&self, id: u64) -> bool {
        // A record carrying `id` was written after `begin` stored the minimum that
        // counts it, so a reader that found `id` in a record reads a minimum at most
        // `id` while it runs; an id below the minimum has ended.
        if id < self.min_active.load(Ordering::SeqCst) {
            return false;
        }
        self.active.read().contains_key(&id)
    }

    /// Registers again, as active, transaction `id` of an earlier run that recovery
    /// keeps prepared (XA): read views do not see its changes until it ends.
    pub fn resume(&self, id: u64, first_lsn: u64) {
        let mut a = self.active.write();
        a.insert(id, first_lsn);
        self.note_min_active(&a);
        drop(a);
        self.owes(id);
    }

    /// Transaction `id` (one more time) may have left stale secondary entries that
    /// purge is still to remove.
    pub fn owes(&self, id: u64) {
        *self.unpurged.lock().entry(id).or_insert(0) += 1;
    }

    /// Transaction `id` left no stale secondary entry behind: it rolled back (its
    /// entries removed), committed with no change, or purge has processed (one batch
    /// of) its changes.
    pub fn cleaned(&self, id: u64) {
        let mut u = self.unpurged.lock();
        if let Some(n) = u.get_mut(&id) {
            *n -= 1;
            if *n == 0 {
                u.remove(&id);
            }
        }
    }

    /// Every transaction with a smaller id that changed rows has had the secondary
    /// entries it made stale removed (u64::MAX: none is pending). Transactions of an
    /// earlier run are not counted: the engine's startup sweep covers them.
    pub fn clean_below(&self) -> u64 {
        self.unpurged
            .lock()
            .keys()
            .next()
            .copied()
            .unwrap_or(u64::MAX)
    }

    /// Ends a transaction: no longer active; returns the commit serial.
    pub fn end(&self, id: u64) -> u64 {
        let mut a = self.active.write();
        a.remove(&id);
        self.note_min_active(&a);
        self.serial.fetch_add(1, Ordering::SeqCst)
    }

    pub fn open_view(&self, creator: u64) -> Arc<ReadView> {
        let a = self.active.read();
        let low_limit = self.next_id.load(Ordering::SeqCst);
        let active: Vec<u64> = a.keys().copied().filter(|&t| t != creator).collect();
        let up_limit = active.first().copied().unwrap_or(low_limit);
        let serial = self.serial.load(Ordering::SeqCst);
        // Registered before `active` is released, so `visible_to_all_below` never misses
        // a view whose snapshot predates a commit it has already seen.
        let mut views = self.views.lock();
        let e = views.entry(serial).or_insert((0, up_limit));
        e.0 += 1;
        e.1 = e.1.min(up_limit);
        drop(views);
        drop(a);
        Arc::new(ReadView {
            creator: AtomicU64::new(creator),
            up_limit,
            low_limit,
            active,
            serial,
        })
    }

    pub fn close_view(&self, v: &ReadView) {
        let mut g = self.views.lock();
        if let Some((c, _)) = g.get_mut(&v.serial) {
            *c -= 1;
            if *c == 0 {
                g.remove(&v.serial);
            }
        }
    }

    /// Batches committed at a serial below this can be purged.
    pub fn purge_horizon(&self) -> u64 {
        let oldest = self.views.lock().keys().next().copied();
        oldest.unwrap_or_else(|| self.serial.load(Ordering::SeqCst) + 1)
    }

    /// Every transaction with an id below this has ended and is seen by every read view
    /// open now or later: the smallest of the open views' `up_limit`s, the oldest active
    /// id and the next id. Purge uses it to stop walking a row's version chain at the
    /// first version that no view can need. Reads `active` before the views: a view
    /// registers while it holds `active`, so one that opens after this read sees every
    /// transaction that was not active then.
    pub fn visible_to_all_below(&self) -> u64 {
        let (oldest_active, next) = {
            let a = self.active.read();
            (
                a.keys().next().copied(),
                self.next_id.load(Ordering::SeqCst),
            )
        };
        let oldest_view = self.views.lock().values().map(|&(_, up)| up).min();
        [oldest_active, oldest_view]
            .into_iter()
            .flatten()
            .fold(next, u64::min)
    }

    /// The LSN before which the log must be kept for active transactions' undo.
    pub fn oldest_active_lsn(&self) -> Option<u64> {
        self.active.read().values().min().copied()
    }

    /// The active transaction that made its first change earliest: (id, LSN).
    pub fn oldest_active(&self) -> Option<(u64, u64)> {
        self.active
            .read()
            .iter()
            .min_by_key(|(_, &l)| l)
            .map(|(&id, &l)| (id, l))
    }

    pub fn active_count(&self) -> usize {
        self.active.read().len()
    }

    /// Takes the batches purge may process now.
    pub fn take_purgeable(&self, max: usize) -> Vec<PurgeBatch> {
        let horizon = self.purge_horizon();
        let mut q = self.purge_queue.lock();
        let mut out = Vec::new();
        while out.len() < max && q.front().is_some_and(|b| b.serial < horizon) {
            if let Some(b) = q.pop_front() {
                out.push(b);
            }
        }
        out
    }

    pub fn history_length(&self) -> usize {
        self.purge_queue.lock().iter().map(|b| b.items.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_below_waits_for_every_registered_transaction() {
        let s = TrxSys::new(10);
        assert_eq!(s.clean_below(), u64::MAX);
        let a = s.begin(0);
        let b = s.begin(0);
        assert_eq!(s.clean_below(), a);
        s.end(a);
        // Ended but not purged: still pending.
        assert_eq!(s.clean_below(), a);
        s.cleaned(a);
        assert_eq!(s.clean_below(), b);
        s.cleaned(b);
        assert_eq!(s.clean_below(), u64::MAX);
    }

    #[test]
    fn views_see_what_committed_before_them() {
        let s = TrxSys::new(10);
        let a = s.begin(0);
        let b = s.begin(0);
        let v = s.open_view(0);
        assert!(!v.sees(a) && !v.sees(b) && v.sees(9));
        s.end(a);
        let w = s.open_view(b);
        assert!(w.sees(a) && w.sees(b) && !v.sees(a));
        let c = s.begin(0);
        assert!(!w.sees(c));
    }

    #[test]
    fn purge_waits_for_views_open_at_commit() {
        let s = TrxSys::new(1);
        let t = s.begin(0);
        let v = s.open_view(0);
        let serial = s.end(t);
        s.purge_queue.lock().push_back(PurgeBatch {
            trx_id: t,
            serial,
            first_lsn: 0,
            items: ChangeList::default(),
        });
        assert!(s.take_purgeable(10).is_empty());
        s.close_view(&v);
        assert_eq!(s.take_purgeable(10).len(), 1);
    }
}
