//! The `btree` engine: InnoDB's design. Each table is a tablespace (`.ibd`) of 16 KiB
//! pages holding a clustered B+tree on the primary key and one B+tree per secondary
//! index; every page goes through one shared buffer pool (`innodb_buffer_pool_size`,
//! caching data and index pages alike); every change is a mini-transaction logged in the
//! redo log (`ib_logfile0`) before its page may be written; a transaction commits by
//! logging a commit record and, under `innodb_flush_log_at_trx_commit=1`, waiting for a
//! group-committed fsync. Consistent reads use MVCC read views; writes take row locks.
//!
//! Modules: `page` (node bytes), `tree` (B+tree with latch coupling), `mtr`
//! (mini-transactions and their redo), `row` (record encoding), `trx` (ids, read views,
//! old versions), `lock` (row locks, deadlocks), `table` (row operations), `recovery`
//! (redo replay and rollback at startup), `check` (CHECK TABLE), `spaces` (the directory
//! of tablespaces). The byte layout is in `docs/format/btree.md`.
//!
//! Background work runs in one master thread: purge of old versions and delete-marked
//! records, and checkpoints when the log passes half its capacity.

pub mod bulk;
pub mod ceiling;
pub mod change_list;
pub mod check;
pub mod covering;
pub mod lock;
pub mod mtr;
pub mod online;
pub mod overflow;
pub mod page;
pub mod recovery;
pub mod row;
pub mod spaces;
pub mod table;
pub mod tree;
pub mod trx;
pub mod undo_log;
pub mod undo_spill;

#[cfg(test)]
mod tests;

use lock::{Granted, LockKey, LockTable, Mode};
use mtr::{Mtr, Storage};
use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;
use strata_engine::*;
use strata_storage::bufpool::{BufferPool, PoolConfig};
use strata_storage::io::{FileIo, StdFile};
use strata_storage::redo::{FlushAtCommit, RedoConfig, RedoLog};
use strata_storage::sync::{
    AtomicBool, Latch, LatchMutex, Mutex, Ordering, RwLock, SpinPolicy, DEFAULT_SPIN_WAIT_DELAY,
    DEFAULT_SYNC_SPIN_LOOPS, MAX_SPIN_WAIT_DELAY,
};
use strata_types::log_error;
use table::{BtreeTable, Layout};
use trx::{PurgeBatch, ReadView, TrxSys, UndoItem};

#[derive(Clone, Debug)]
pub struct BtreeConfig {
    pub buffer_pool_size: usize,
    pub page_size: usize,
    pub log_file_size: u64,
    pub flush_log_at_trx_commit: FlushAtCommit,
    /// `innodb_flush_method=O_DIRECT`: tablespaces bypass the OS page cache.
    pub direct_io: bool,
    pub adaptive_hash_index: bool,
    pub old_blocks_pct: u32,
    pub old_blocks_time_ms: u32,
    /// `innodb_sync_spin_loops`: how often a thread re-tests a busy latch before it
    /// blocks in the OS; 0 blocks at once (like a pthread mutex). See docs/latches.md.
    pub sync_spin_loops: u32,
    /// `innodb_spin_wait_delay`: the most delay units (of 50 CPU pauses) between two
    /// re-tests, capped at 1000.
    pub spin_wait_delay: u32,
    /// `innodb_sort_buffer_size`: memory for each new index's sort during an index
    /// build; sorted runs beyond it spill to `tmpdir`.
    pub sort_buffer_size: usize,
    /// `innodb_fill_factor`: how full (percent) an index build fills its pages.
    pub fill_factor: u32,
    /// `innodb_online_alter_log_max_size`: the most bytes of changes an online index
    /// build logs before it fails with 1799.
    pub online_alter_log_max_size: usize,
    /// `strata_undo_memory_size`: the most bytes of old row versions kept in memory;
    /// past it they go to the undo spill file (`undo_spill.rs`). None: a sixteenth of
    /// the buffer pool, at least 1 MiB.
    pub undo_memory_size: Option<usize>,
    /// `strata_change_list_tail`: the most changes of one transaction kept in memory;
    /// older ones go to the transaction's change-list file (`change_list.rs`).
    pub change_list_tail: usize,
}

impl BtreeConfig {
    /// The bound in effect for old versions in memory.
    pub fn undo_memory_bound(&self) -> usize {
        self.undo_memory_size
            .unwrap_or((self.buffer_pool_size / 16).max(1 << 20))
    }
}

impl Default for BtreeConfig {
    fn default() -> Self {
        BtreeConfig {
            buffer_pool_size: 128 << 20,
            page_size: 16384,
            log_file_size: 96 << 20,
            flush_log_at_trx_commit: FlushAtCommit::Durable,
            direct_io: false,
            adaptive_hash_index: true,
            old_blocks_pct: 37,
            old_blocks_time_ms: 1000,
            sync_spin_loops: DEFAULT_SYNC_SPIN_LOOPS,
            spin_wait_delay: DEFAULT_SPIN_WAIT_DELAY,
            sort_buffer_size: 1 << 20,
            fill_factor: 100,
            online_alter_log_max_size: 128 << 20,
            undo_memory_size: None,
            change_list_tail: change_list::DEFAULT_TAIL,
        }
    }
}

/// Maps an I/O error of table `name` to the client's error: a page failing its checks
/// is corruption (1194, naming table and page), a full disk 1114, the rest 1030.
pub(crate) fn io_err(name: &str, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::InvalidData {
        return Error::corrupt(name, e.to_string());
    }
    Error::table_io(name, e)
}

const TRX_SHARDS: usize = 16;

pub(crate) struct Inner {
    pub st: Storage,
    pub trx: TrxSys,
    pub locks: LockTable,
    pub spaces: spaces::SpaceDir,
    pub cfg: RwLock<BtreeConfig>,
    tables: Latch<HashMap<u32, Weak<BtreeTable>>>,
    /// Every open transaction (sharded), so a checkpoint can re-log their undo.
    open_trx: Vec<LatchMutex<strata_types::inthash::IntMap<u64, Weak<BtreeTrx>>>>,
    next_trx_serial: strata_storage::sync::AtomicU64,
    /// Held exclusive by a checkpoint, so two never interleave.
    checkpointing: Mutex<()>,
    /// Held while purge works (one purger at a time) and by DROP TABLE (not while purge
    /// is inside the space). Never by a checkpoint: purge may wait for log space, which
    /// only a checkpoint frees.
    purging: Mutex<()>,
    /// Undo records purge could not process (each is logged); a dropped table's are
    /// skipped, not counted.
    pub purge_failures: strata_storage::sync::AtomicU64,
    /// `innodb_adaptive_hash_index`, read on every primary-key lookup: an atomic, not
    /// the config lock.
    pub ahi: AtomicBool,
    /// Set once the sweep after startup has finished.
    pub swept: AtomicBool,
    /// Row logs of online index builds, by space (`online.rs`), and how many there are
    /// (the write path looks at the map only when it is not 0).
    pub(crate) online: RwLock<HashMap<u32, Arc<online::RowLog>>>,
    pub(crate) online_builds: std::sync::atomic::AtomicUsize,
    /// (space, tree) → the transaction id an online build of that tree took as it
    /// finished; read views older than it may not use the tree (`BtreeTable::since`).
    /// In memory: no read view survives a restart.
    pub(crate) built_since: Mutex<HashMap<(u32, usize), u64>>,
    /// Per space: the mark ([`Inner::contents_mark`]) its contents were last written
    /// anew at; consistent reads with an older view get 1412.
    pub(crate) contents_since: Mutex<HashMap<u32, u64>>,
    /// Set when purge or the startup sweep had to leave secondary entries behind that
    /// it could not account for: covering reads then always take the clustered record
    /// (`covering.rs`), until a restart's sweep.
    pub covering_off: AtomicBool,
    /// Spaces where purge or the sweep left such entries (a purge that failed on a
    /// table being dropped, a row locked during the sweep): covering reads of those
    /// tables take the clustered record until a restart. The rest of the engine keeps
    /// them.
    pub covering_off_spaces: Mutex<std::collections::HashSet<u32>>,
    /// Secondary-index records read from trusted leaves without their clustered record
    /// (`Strata_btree_index_only_records`).
    pub index_only_records: strata_storage::sync::AtomicU64,
    /// Transactions recovery found prepared, until the server resolves them
    /// (`recovery::resolve`); while Some, no checkpoint is taken and purge waits.
    pub(crate) prepared_left: Mutex<Option<Vec<recovery::PreparedLeft>>>,
    /// XA transactions recovery kept prepared, alive, until the server takes them
    /// (`Engine::take_recovered_xa`): (XA xid, transaction).
    pub(crate) xa_recovered: Mutex<Vec<(Vec<u8>, Arc<BtreeTrx>)>>,
    /// The undo of transactions open at a checkpoint (`undo_log.rs`).
    pub(crate) undo_log: undo_log::UndoLog,
    /// What transactions' change lists share: their bound and files (`change_list.rs`).
    pub(crate) changes: Arc<change_list::ChangeStore>,
    /// Transactions recovery is rolling back, all of whose undo is in the undo log:
    /// each checkpoint meanwhile names them in its snapshot.
    pub(crate) recovering: Mutex<Vec<u64>>,
    /// A transaction whose undo the checkpoint could not write while it kept the log
    /// from getting room: its next change fails with `doom_error` instead of every
    /// writer waiting for ever. 0: none.
    doomed: strata_storage::sync::AtomicU64,
    doom_error: Mutex<Option<(std::io::ErrorKind, Option<i32>)>>,
    stop: AtomicBool,
}

pub struct BtreeEngine {
    inner: Arc<Inner>,
    _cleaner: strata_storage::bufpool::PageCleaner,
    _log_flusher: strata_storage::redo::BackgroundFlusher,
    master: Mutex<Option<std::thread::JoinHandle<()>>>,
    purger: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl BtreeEngine {
    /// Opens (or creates) the engine's files in `datadir`: the redo log and the space
    /// directory; replays the log and rolls back transactions a crash interrupted.
    pub fn open(datadir: &Path, cfg: BtreeConfig) -> Result<BtreeEngine> {
        std::fs::create_dir_all(datadir).map_err(|e| Error::io(datadir.display(), e))?;
        // One policy for every latch of this engine: the pool's page latches and
        // mutexes, and the engine-wide ones below. SET GLOBAL changes it in place.
        let policy = Arc::new(SpinPolicy::new(cfg.sync_spin_loops, cfg.spin_wait_delay));
        let pool = Arc::new(BufferPool::new(PoolConfig {
            size_bytes: cfg.buffer_pool_size,
            page_size: cfg.page_size,
            old_blocks_pct: cfg.old_blocks_pct,
            old_blocks_time_ms: cfg.old_blocks_time_ms,
            latch_policy: policy.clone(),
        }));
        let spaces = spaces::SpaceDir::open(datadir)?;
        let log_path = datadir.join("ib_logfile0");
        let rcfg = RedoConfig {
            capacity: cfg.log_file_size,
            flush_at_commit: cfg.flush_log_at_trx_commit,
        };
        let log_io: Arc<dyn FileIo> =
            Arc::new(StdFile::open(&log_path, true).map_err(|e| Error::io(log_path.display(), e))?);
        let fresh = log_io.len().map_err(|e| Error::io(log_path.display(), e))? == 0;
        let (log, recovered) = if fresh {
            let log = RedoLog::create(log_io, rcfg).map_err(|e| Error::io("ib_logfile0", e))?;
            (log, None)
        } else {
            let (log, rec) =
                RedoLog::open(log_io, rcfg).map_err(|e| Error::io("ib_logfile0", e))?;
            (log, Some(rec))
        };
        let log = Arc::new(log);
        {
            let log = log.clone();
            pool.set_wal_hook(Box::new(move |lsn| log.flush_up_to(lsn)));
        }
        for s in spaces.list() {
            let io = open_space_file(&s.path, cfg.direct_io)?;
            pool.add_space(s.id, io, s.name());
        }
        let first_trx = spaces.trx_id_ceiling();
        // The undo of transactions open at the last checkpoint, for recovery
        // (docs/format/undo.md, part 2). A fresh redo log has no checkpoint to match.
        let undo_path = datadir.join(undo_log::UNDO_LOG_FILE);
        let undo_io: Arc<dyn FileIo> = Arc::new(
            StdFile::open(&undo_path, true).map_err(|e| Error::io(undo_path.display(), e))?,
        );
        if recovered.is_none() {
            undo_io
                .set_len(0)
                .map_err(|e| Error::io(undo_path.display(), e))?;
        }
        let (undo_log, undo_frames) =
            undo_log::UndoLog::open(undo_io).map_err(|e| Error::io(undo_path.display(), e))?;
        // Change-list files are scratch: what an earlier run left is removed here
        // (docs/format/undo.md, part 3).
        let changes = change_list::ChangeStore::in_dir(datadir, cfg.change_list_tail)
            .map_err(|e| Error::io(datadir.display(), e))?;
        let inner = Arc::new(Inner {
            st: Storage::new(pool.clone(), log.clone()),
            trx: TrxSys::with_policy(first_trx, &policy),
            locks: LockTable::new(&policy),
            spaces,
            cfg: RwLock::new(cfg.clone()),
            tables: Latch::with_policy(policy.clone(), HashMap::new()),
            open_trx: (0..TRX_SHARDS)
                .map(|_| LatchMutex::with_policy(policy.clone(), Default::default()))
                .collect(),
            next_trx_serial: strata_storage::sync::AtomicU64::new(1),
            checkpointing: Mutex::new(()),
            purging: Mutex::new(()),
            purge_failures: strata_storage::sync::AtomicU64::new(0),
            ahi: AtomicBool::new(cfg.adaptive_hash_index),
            swept: AtomicBool::new(false),
            online: RwLock::new(HashMap::new()),
            online_builds: std::sync::atomic::AtomicUsize::new(0),
            built_since: Mutex::new(HashMap::new()),
            contents_since: Mutex::new(HashMap::new()),
            covering_off: AtomicBool::new(false),
            covering_off_spaces: Mutex::new(Default::default()),
            index_only_records: strata_storage::sync::AtomicU64::new(0),
            prepared_left: Mutex::new(None),
            xa_recovered: Mutex::new(Vec::new()),
            undo_log,
            changes,
            recovering: Mutex::new(Vec::new()),
            doomed: strata_storage::sync::AtomicU64::new(0),
            doom_error: Mutex::new(None),
            stop: AtomicBool::new(false),
        });
        // Old versions past the memory bound go to a scratch file emptied here: nothing
        // in it is needed after a restart (docs/format/undo.md).
        let spill_path = datadir.join(UNDO_SPILL_FILE);
        let spill = StdFile::open(&spill_path, true)
            .and_then(|f| undo_spill::UndoSpill::open(Arc::new(f)))
            .map_err(|e| Error::io(spill_path.display(), e))?;
        inner.trx.versions.set_spill(spill);
        inner.trx.versions.set_limit(cfg.undo_memory_bound());
        if let Some(rec) = recovered {
            recovery::recover(&inner, rec, &undo_frames)?;
        }
        // Ids handed out from here on stay below a ceiling written ahead of them.
        inner.spaces.reserve_trx_ids(inner.trx.peek_next_id())?;
        let cleaner = pool.start_page_cleaner();
        let log_flusher = log.start_background_flusher();
        let master = {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name("btree-master".into())
                .spawn(move || master_loop(&inner))
                .map_err(|e| Error::Internal(format!("cannot start the master thread: {e}")))?
        };
        let purger = {
            let inner = inner.clone();
            // The spaces of this start: a table created after it has nothing an earlier
            // run left unpurged, and may not be formatted yet when the sweep comes.
            let at_start = inner.spaces.list();
            std::thread::Builder::new()
                .name("btree-purge".into())
                .spawn(move || purge_loop(&inner, at_start))
                .map_err(|e| Error::Internal(format!("cannot start the purge thread: {e}")))?
        };
        Ok(BtreeEngine {
            inner,
            _cleaner: cleaner,
            _log_flusher: log_flusher,
            master: Mutex::new(Some(master)),
            purger: Mutex::new(Some(purger)),
        })
    }

    /// Waits for the startup sweep, then runs purge until no committed change waits
    /// for it (tests, shutdown).
    pub fn purge_all(&self) {
        while !self.inner.swept.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        while self.inner.purge(usize::MAX) > 0 {}
    }

    pub fn history_length(&self) -> usize {
        self.inner.trx.history_length()
    }
}

impl Drop for BtreeEngine {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::SeqCst);
        for t in [&self.master, &self.purger] {
            if let Some(h) = t.lock().take() {
                let _ = h.join();
            }
        }
    }
}

/// A tablespace file, through the process's open-file cache (table_open_cache): closed
/// when unused files are over the cache's bound, reopened by the buffer pool's next read
/// or write of it, synced before it is closed (a checkpoint relies on its syncs).
fn open_space_file(path: &Path, direct: bool) -> Result<Arc<dyn FileIo>> {
    let mode = strata_storage::filecache::OpenMode {
        direct,
        durable: true,
    };
    let f = strata_storage::filecache::FileCache::global().open(
        path,
        mode,
        &strata_storage::filecache::TableFiles::new(),
    );
    Ok(Arc::new(f.map_err(|e| Error::io(path.display(), e))?))
}

/// How long a background thread waits after a failed round before it tries again, so
/// a persistent failure (a full disk) is retried and logged without spinning.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// Runs one round of a background thread's work. A panic in it (a bug) is logged and
/// the thread goes on after a pause instead of ending: without the checkpointer the
/// log fills and every writer stops; without purge old versions pile up.
fn survive(what: &str, round: impl FnOnce() -> bool) -> bool {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(round)) {
        Ok(ok) => ok,
        Err(_) => {
            log_error!("btree: {what} panicked; retrying in {RETRY_PAUSE:?}");
            std::thread::sleep(RETRY_PAUSE);
            false
        }
    }
}

/// Checkpoints: when the log passes half its capacity, and every ten seconds. A failed
/// checkpoint is logged and retried after a pause.
fn master_loop(inner: &Arc<Inner>) {
    let mut ticks = 0u64;
    while !inner.stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(20));
        ticks += 1;
        // Counted here, not at every put: no shared counter on the write path.
        strata_types::memory::set(
            strata_types::memory::Component::UndoVersions,
            inner.trx.versions.memory_bytes(),
        );
        strata_types::memory::set(
            strata_types::memory::Component::UndoChangeLists,
            inner.changes.memory_bytes(),
        );
        if inner.st.log.wants_checkpoint() || ticks.is_multiple_of(500) {
            let ok = survive("checkpoint", || match inner.checkpoint() {
                Ok(()) => true,
                Err(e) => {
                    log_error!("btree: checkpoint failed: {e}; retrying in {RETRY_PAUSE:?}");
                    false
                }
            });
            if !ok {
                std::thread::sleep(RETRY_PAUSE);
            }
        }
    }
}

/// Purge, in a thread of its own so that its writes never wait on itself for log
/// space; first the sweep of what an earlier run left unpurged.
fn purge_loop(inner: &Arc<Inner>, at_start: Vec<spaces::SpaceEntry>) {
    // Prepared transactions a crash left are resolved first (their rows are neither
    // committed nor rolled back yet).
    while inner.prepared_left.lock().is_some() {
        if inner.stop.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for s in at_start {
        if inner.stop.load(Ordering::SeqCst) {
            return;
        }
        // Under the purge lock, as purge: a DROP or TRUNCATE waits for this space's
        // sweep rather than pulling the space from under it; a space dropped since the
        // list was taken has nothing left to sweep.
        survive("the startup sweep", || {
            let swept = {
                let _p = inner.purging.lock();
                match inner.spaces.path_of(s.id) {
                    Some(_) => inner.sweep(s.id),
                    None => Ok(()),
                }
            };
            match swept {
                Ok(_) => true,
                Err(e) => {
                    inner.covering_off.store(true, Ordering::SeqCst);
                    log_error!("btree: sweep of {} failed: {e}", s.name());
                    false
                }
            }
        });
    }
    inner.swept.store(true, Ordering::SeqCst);
    while !inner.stop.load(Ordering::SeqCst) {
        let mut done = 0;
        if !survive("purge", || {
            done = inner.purge(2000);
            true
        }) {
            continue;
        }
        if done == 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Inner {
    /// Whether covering reads may trust leaves at all: not before the startup sweep
    /// has removed what an earlier run left stale, nor after entries were left behind
    /// unaccounted (`covering_off`).
    pub(crate) fn covering_on(&self, space: u32) -> bool {
        self.swept.load(Ordering::Acquire)
            && !self.covering_off.load(Ordering::Acquire)
            && !self.covering_off_spaces.lock().contains(&space)
    }

    pub(crate) fn table(&self, space: u32) -> Option<Arc<BtreeTable>> {
        self.tables.read().get(&space).and_then(|w| w.upgrade())
    }

    /// A fuzzy checkpoint: move the full-image horizon, write every page changed before
    /// it, copy the undo of open transactions that began before it to the undo log, and
    /// let the redo log forget what precedes it (docs/format/undo.md, part 2).
    pub(crate) fn checkpoint(&self) -> Result<()> {
        if self.prepared_left.lock().is_some() {
            // Their undo is only in the log until they are resolved.
            return Ok(());
        }
        let _g = self.checkpointing.lock();
        let st = &self.st;
        let h = st.move_horizon();
        st.pool
            .flush_older_than(h)
            .map_err(|e| io_err("the buffer pool", e))?;
        let mut c = h;
        if let Some(l) = st.pool.oldest_dirty_lsn() {
            c = c.min(l);
        }
        let c0 = st.log.checkpoint_lsn();
        c = c.max(c0);
        // Undo that open transactions still need goes to the undo log, fsynced before
        // the redo checkpoint may forget it. If it cannot be written the checkpoint
        // stops at the oldest open transaction's first record, as without the file.
        // (Purge never holds the log: what it loses in a crash, the sweep after restart
        // finds again.)
        let recovering = self.recovering.lock().clone();
        let hold = self.trx.oldest_active().filter(|&(_, l)| l < c);
        if recovering.is_empty() && !st.log.wants_checkpoint() {
            // Room enough: keep what open transactions need in the redo log, as
            // without the file (no write or fsync of it for ordinary workloads).
            if let Some((_, l)) = hold {
                c = l.max(c0);
            }
        } else if hold.is_some() || !recovering.is_empty() {
            match self.undo_to_log(c, &recovering) {
                Ok(()) => {}
                Err(e) => {
                    log_error!(
                        "btree: checkpoint cannot write {}: {e}",
                        undo_log::UNDO_LOG_FILE
                    );
                    c = match hold {
                        Some((_, l)) if recovering.is_empty() => l.max(c0),
                        _ => c0,
                    };
                    if let Some((id, _)) = hold.filter(|_| st.log.wants_checkpoint()) {
                        // The log fills behind this transaction: it gets the error at
                        // its next change rather than every writer waiting for ever.
                        *self.doom_error.lock() = Some((e.kind(), e.raw_os_error()));
                        self.doomed.store(id, Ordering::SeqCst);
                    }
                }
            }
        }
        st.log
            .flush_up_to(st.log.current_lsn())
            .map_err(|e| Error::io("ib_logfile0", e))?;
        st.log
            .checkpoint(c)
            .map_err(|e| Error::io("ib_logfile0", e))?;
        if hold.is_none() && recovering.is_empty() && !self.undo_log.is_empty() {
            // No transaction open at `c` needs the file: start it afresh.
            self.undo_log
                .truncate(st.log.current_lsn())
                .map_err(|e| Error::io(undo_log::UNDO_LOG_FILE, e))?;
            for t in self.open_transactions() {
                t.state.lock().durable_no = 0;
            }
        }
        Ok(())
    }

    fn open_transactions(&self) -> Vec<Arc<BtreeTrx>> {
        self.open_trx
            .iter()
            .flat_map(|s| {
                s.lock()
                    .values()
                    .filter_map(Weak::upgrade)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Appends to the undo log the undo records of open transactions it does not hold
    /// yet, then a snapshot for checkpoint `c` naming them and `recovering`, and
    /// fsyncs it. Remembers what is durable only once it is.
    fn undo_to_log(&self, c: u64, recovering: &[u64]) -> std::io::Result<()> {
        const BATCH: usize = 1 << 20;
        let mut ids: Vec<u64> = recovering.to_vec();
        let mut batch = Vec::new();
        let mut done: Vec<(Arc<BtreeTrx>, u32)> = Vec::new();
        for t in self.open_transactions() {
            let (id, from, below, prepared) = {
                let s = t.state.lock();
                if s.id == 0 || s.finished {
                    continue;
                }
                let prep =
                    s.xa.as_ref()
                        .map(|x| recovery::xa_prepared_record(s.id, x))
                        .or(s.prepared.map(|xid| recovery::prepared_record(s.id, xid)));
                (s.id, s.durable_no, s.next_undo_no, prep)
            };
            ids.push(id);
            let mut upto = 0;
            // The changes listed now, a piece (the tail or one segment) at a time, the
            // state unlocked in between, so a huge list is never copied whole. Changes
            // the transaction rolls back meanwhile have lost their old version (skipped
            // below); if it ends meanwhile its commit or rollback record precedes the
            // log flush that comes before this checkpoint is written, so recovery never
            // needs the rest.
            let mut next = from;
            loop {
                let items = {
                    let s = t.state.lock();
                    if s.finished {
                        break;
                    }
                    s.undo.from_undo_no(next, below)?
                };
                let Some(last) = items.last() else { break };
                next = last.undo_no + 1;
                for item in items {
                    upto = item.undo_no + 1;
                    // None: the change was forgotten (its write failed) or rolled back
                    // since it was listed; it needs no undo.
                    let Some(old) = self.trx.versions.get(item.roll_ptr)? else {
                        continue;
                    };
                    batch.extend_from_slice(&recovery::undo_record(
                        id,
                        item.undo_no,
                        item.space,
                        &item.key,
                        old.value.as_deref(),
                    ));
                    if batch.len() >= BATCH {
                        self.undo_log.append(undo_log::KIND_UNDO, &batch)?;
                        batch.clear();
                    }
                }
            }
            // After its undo, so recovery finds it prepared.
            if let Some(r) = prepared {
                batch.extend_from_slice(&r);
            }
            done.push((t, upto));
        }
        if !batch.is_empty() {
            self.undo_log.append(undo_log::KIND_UNDO, &batch)?;
        }
        self.undo_log.append(
            undo_log::KIND_SNAPSHOT,
            &undo_log::snapshot_payload(c, &ids),
        )?;
        self.undo_log.sync()?;
        for (t, upto) in done {
            let mut s = t.state.lock();
            s.durable_no = s.durable_no.max(upto);
        }
        Ok(())
    }

    /// Waits for room in the redo log before a row change of `txn`, as
    /// `RedoLog::free_check`; the transaction the checkpoint could not write the undo
    /// of while it held the log (`doomed`) gets that error instead of waiting.
    pub(crate) fn log_room(&self, txn: &Txn) -> std::result::Result<(), std::io::Error> {
        loop {
            let d = self.doomed.load(Ordering::Acquire);
            if d != 0 && BtreeTrx::id_of(txn) == d {
                let (kind, os) =
                    (*self.doom_error.lock()).unwrap_or((std::io::ErrorKind::Other, None));
                return Err(match os {
                    Some(code) => std::io::Error::from_raw_os_error(code),
                    None => std::io::Error::new(
                        kind,
                        "the undo of this transaction cannot be written and the redo log is full",
                    ),
                });
            }
            if self.st.log.free_check_for(Duration::from_millis(50)) {
                return Ok(());
            }
        }
    }

    #[cfg(test)]
    /// Log records (each at most a quarter of the log's largest record) that carry the
    /// undo of the open transactions; None when they would take `budget` bytes or more
    /// (checked before a large transaction's undo is read back from the spill file), or
    /// an old version cannot be read (an undo record must never claim a wrong image).
    fn undo_to_relog(&self, budget: usize) -> Option<Vec<Vec<u8>>> {
        /// An undo record's fixed fields (kind, trx, undo_no, space, lengths, flag).
        const UNDO_RECORD_MIN: usize = 24;
        let mut total = 0usize;
        let max = (self.st.log.max_payload() as usize).max(1024) / 4;
        let mut out: Vec<Vec<u8>> = Vec::new();
        let mut rec = Vec::new();
        let mut add = |r: Vec<u8>, out: &mut Vec<Vec<u8>>| {
            if !rec.is_empty() && rec.len() + r.len() > max {
                out.push(std::mem::take(&mut rec));
            }
            rec.extend_from_slice(&r);
        };
        for t in self.open_transactions() {
            let (id, prepared) = {
                let s = t.state.lock();
                total += s.undo.len() * UNDO_RECORD_MIN;
                if total >= budget {
                    return None;
                }
                let prep =
                    s.xa.as_ref()
                        .map(|x| recovery::xa_prepared_record(s.id, x))
                        .or(s.prepared.map(|xid| recovery::prepared_record(s.id, xid)));
                (s.id, prep)
            };
            if id == 0 {
                continue;
            }
            // Oldest first, a piece at a time, as `undo_to_log`.
            let mut items = Vec::new();
            let mut next = 0;
            loop {
                let piece = match t.state.lock().undo.from_undo_no(next, u32::MAX) {
                    Ok(p) => p,
                    Err(e) => {
                        log_error!("btree: checkpoint cannot read back a change list: {e}");
                        return None;
                    }
                };
                let Some(last) = piece.last() else { break };
                next = last.undo_no + 1;
                items.extend(piece);
            }
            for item in items {
                let old = match self.trx.versions.get(item.roll_ptr) {
                    Ok(old) => old,
                    Err(e) => {
                        log_error!("btree: checkpoint cannot read back undo: {e}");
                        return None;
                    }
                };
                let old = old.as_ref().and_then(|o| o.value.as_deref());
                let r = recovery::undo_record(id, item.undo_no, item.space, &item.key, old);
                total += r.len();
                if total >= budget {
                    return None;
                }
                add(r, &mut out);
            }
            // After its undo, so recovery still finds it prepared.
            if let Some(r) = prepared {
                add(r, &mut out);
            }
        }
        if !rec.is_empty() {
            out.push(rec);
        }
        Some(out)
    }

    /// Processes up to `max` purgeable batches; returns how many it did.
    pub(crate) fn purge(&self, max: usize) -> usize {
        let _p = self.purging.lock();
        self.purge_locked_batches(max)
    }

    /// A committing thread lends purge a hand when history grows: on 2 cores the master
    /// thread alone gets too little CPU against many writers.
    fn help_purge(&self) {
        const LAG: usize = 1000;
        if self.trx.purge_queue.lock().len() > LAG {
            if let Some(_p) = self.purging.try_lock() {
                self.purge_locked_batches(16);
            }
        }
    }

    fn purge_locked_batches(&self, max: usize) -> usize {
        let batches = self.trx.take_purgeable(max);
        let n = batches.len();
        let visible_below = self.trx.visible_to_all_below();
        let mut retry = Vec::new();
        for b in batches {
            let mut left = change_list::ChangeList::default();
            // Oldest first, one segment of a huge batch in memory at a time.
            for item in b.items.into_oldest_first() {
                let item = match item {
                    Ok(i) => i,
                    Err(e) => {
                        // The rest of this batch cannot be read: its old versions stay
                        // until a restart, and its stale entries until the sweep then.
                        self.covering_off.store(true, Ordering::SeqCst);
                        self.purge_failures.fetch_add(1, Ordering::Relaxed);
                        log_error!("btree: purge cannot read a change list: {e}");
                        break;
                    }
                };
                // Room in the log before any page latch is taken, as a user statement
                // does: an mtr that waited for space while holding latches could stall
                // the checkpoint's flush of those very pages.
                self.st.log.free_check();
                match self.purge_item(b.trx_id, &item, visible_below) {
                    Ok(true) => {}
                    Ok(false) => {
                        // Kept for a later round; in memory if its file is full
                        // (losing it would keep its old version for ever).
                        if left.push(item.clone(), &self.changes).is_err() {
                            left.push_in_memory(item);
                        }
                    }
                    Err(e) => {
                        self.covering_off_spaces.lock().insert(item.space);
                        self.purge_failures.fetch_add(1, Ordering::Relaxed);
                        log_error!("btree: purge of space {} failed: {e}", item.space);
                        self.trx.versions.remove(item.roll_ptr);
                    }
                }
            }
            if left.is_empty() {
                self.trx.cleaned(b.trx_id);
            } else {
                retry.push(PurgeBatch {
                    trx_id: b.trx_id,
                    serial: b.serial,
                    first_lsn: b.first_lsn,
                    items: left,
                });
            }
        }
        if !retry.is_empty() {
            let mut q = self.trx.purge_queue.lock();
            for b in retry.into_iter().rev() {
                q.push_front(b);
            }
        }
        n
    }

    /// Removes what one committed change left behind once no read view needs it: the
    /// old version, secondary entries no version uses any more, and the record itself
    /// when the change was a delete. False when the row is locked (try later).
    fn purge_item(&self, trx_id: u64, item: &UndoItem, visible_below: u64) -> Result<bool> {
        // A table not opened yet (purge owed from before a restart) is found through
        // the space directory; a dropped one needs nothing more.
        let open = self.table(item.space);
        let fallback;
        let lay = match &open {
            Some(t) => &t.lay,
            None if self.spaces.path_of(item.space).is_some() => {
                fallback = self.spaces.layout(self, item.space)?;
                &fallback
            }
            None => {
                self.trx.versions.remove(item.roll_ptr);
                return Ok(true);
            }
        };
        let key = LockKey::row(item.space, &item.key);
        const PURGE_TRX: u64 = u64::MAX;
        if !self.locks.try_lock(PURGE_TRX, &key) {
            return Ok(false);
        }
        let res = self.purge_locked(lay, trx_id, item, visible_below);
        self.locks.release_key(PURGE_TRX, &key);
        res
    }

    /// `visible_below`: from `TrxSys::visible_to_all_below`, read before the row lock.
    /// False, with nothing done, when a running transaction's write holds the row (its
    /// implicit lock, `lock.rs`), as for a row lock.
    fn purge_locked(
        &self,
        lay: &Layout,
        trx_id: u64,
        item: &UndoItem,
        visible_below: u64,
    ) -> Result<bool> {
        let st = &self.st;
        let cur = lay
            .clustered()
            .get(st, &item.key)
            .map_err(|e| io_err(&lay.name, e))?;
        let cur_hdr = cur.as_ref().and_then(|c| row::RecHeader::read(c));
        if cur_hdr.is_some_and(|h| h.trx_id != trx_id && self.trx.is_active(h.trx_id)) {
            return Ok(false);
        }
        let old = self
            .trx
            .versions
            .get(item.roll_ptr)
            .map_err(|e| io_err(&lay.name, e))?;
        self.trx.versions.remove(item.roll_ptr);
        let old_row = match old.as_ref().and_then(|o| o.value.as_ref()) {
            Some(v) => Some(lay.decode(&self.st, v)?),
            None => None,
        };
        let cur_row = match &cur {
            Some(c) => Some(lay.decode(&self.st, c)?),
            None => None,
        };
        // Rows whose index entries must survive: the current version and, unless the
        // record is about to go, every version still in its chain.
        let tombstone = cur_hdr.is_some_and(|h| h.deleted() && h.trx_id == trx_id);
        let mut keep: Vec<Vec<Value>> = Vec::new();
        if !tombstone {
            keep.extend(cur_row.clone());
            keep.extend(self.chain_rows(lay, cur.as_deref(), visible_below)?);
        }
        let mut drop_rows: Vec<Vec<Value>> = old_row.into_iter().collect();
        if tombstone {
            drop_rows.extend(cur_row);
            lay.clustered()
                .remove(st, &item.key, &[])
                .map_err(|e| io_err(&lay.name, e))?;
        }
        self.remove_unused_entries(lay, &item.key, &drop_rows, &keep)?;
        Ok(true)
    }

    /// After a restart: removes delete-marked records of transactions from before it
    /// and secondary entries that no version of their row uses (purge work a crash cut
    /// short). Rows locked by a running transaction are left to purge.
    pub(crate) fn sweep(&self, space: u32) -> Result<()> {
        let boot_first_trx = self.trx.first_id();
        let lay = match self.table(space) {
            Some(t) => t.lay.clone(),
            None => self.spaces.layout(self, space)?,
        };
        let st = &self.st;
        let unbounded = std::ops::Bound::Unbounded;
        let mut tombstones = Vec::new();
        lay.clustered()
            .range(st, &unbounded, &unbounded, false, &mut |batch| {
                for (k, v) in batch.iter() {
                    if row::RecHeader::read(v)
                        .is_some_and(|h| h.deleted() && h.trx_id < boot_first_trx)
                    {
                        tombstones.push(k.to_vec());
                    }
                }
                Ok(true)
            })
            .map_err(|e| io_err(&lay.name, e))?;
        for key in tombstones {
            self.with_row_lock(space, &key, || {
                let Some(v) = lay
                    .clustered()
                    .get(st, &key)
                    .map_err(|e| io_err(&lay.name, e))?
                else {
                    return Ok(());
                };
                match row::RecHeader::read(&v) {
                    Some(h) if h.deleted() && h.trx_id < boot_first_trx => {
                        let r = lay.decode(st, &v)?;
                        lay.clustered()
                            .remove(st, &key, &[])
                            .map_err(|e| io_err(&lay.name, e))?;
                        self.remove_unused_entries(&lay, &key, &[r], &[])
                    }
                    _ => Ok(()),
                }
            })?;
        }
        for (tree_no, ix) in lay.secondaries() {
            let mut stale = Vec::new();
            lay.trees[tree_no]
                .range(st, &unbounded, &unbounded, false, &mut |batch| {
                    for (e, ckey) in batch.iter() {
                        let cur = lay.clustered().get(st, ckey)?;
                        let live = cur.as_ref().and_then(|c| {
                            let h = row::RecHeader::read(c)?;
                            let r = lay.decode(st, c).ok()?;
                            (!h.deleted() && lay.entry_key(ix, &r, ckey) == e).then_some(())
                        });
                        if live.is_none() {
                            stale.push((e.to_vec(), ckey.to_vec()));
                        }
                    }
                    Ok(true)
                })
                .map_err(|e| io_err(&lay.name, e))?;
            for (entry, ckey) in stale {
                self.with_row_lock(space, &ckey, || {
                    let cur = lay
                        .clustered()
                        .get(st, &ckey)
                        .map_err(|e| io_err(&lay.name, e))?;
                    let mut keep: Vec<Vec<Value>> = Vec::new();
                    if let Some(c) = &cur {
                        keep.push(lay.decode(st, c)?);
                    }
                    keep.extend(self.chain_rows(&lay, cur.as_deref(), 0)?);
                    if keep.iter().any(|r| lay.entry_key(ix, r, &ckey) == entry) {
                        return Ok(());
                    }
                    lay.trees[tree_no]
                        .remove(st, &entry, &[])
                        .map_err(|e| io_err(&lay.name, e))
                        .map(|_| ())
                })?;
            }
        }
        Ok(())
    }

    /// Runs `f` holding the row lock of clustered key `key` as purge (never waiting);
    /// skips `f` when a transaction holds it.
    fn with_row_lock(&self, space: u32, key: &[u8], f: impl FnOnce() -> Result<()>) -> Result<()> {
        const PURGE_TRX: u64 = u64::MAX;
        let k = LockKey::row(space, key);
        if !self.locks.try_lock(PURGE_TRX, &k) {
            // What this row may leave stale is not purge's to account for.
            self.covering_off_spaces.lock().insert(space);
            return Ok(());
        }
        let r = f();
        self.locks.release(PURGE_TRX, std::slice::from_ref(&k));
        r
    }

    /// Rows of the older versions reachable from a clustered value, stopping at a version
    /// replaced by a transaction below `visible_below`, which every view sees past (0:
    /// the whole chain).
    fn chain_rows(
        &self,
        lay: &Layout,
        value: Option<&[u8]>,
        visible_below: u64,
    ) -> Result<Vec<Vec<Value>>> {
        let mut out = Vec::new();
        let mut hdr = value.and_then(row::RecHeader::read);
        let mut guard = 0;
        while let Some(h) = hdr {
            // Every view sees the change that wrote this version, so none can need the
            // older ones. Without this stop purge walked each hot row's whole chain for
            // every version it removed: quadratic, and under sysbench's skewed updates
            // purge fell to a few hundred versions a second while history grew by
            // millions.
            if h.trx_id < visible_below {
                break;
            }
            let v = self
                .trx
                .versions
                .get(h.roll_ptr)
                .map_err(|e| io_err(&lay.name, e))?;
            let Some(v) = v else { break };
            let Some(val) = v.value.as_ref() else { break };
            out.push(lay.decode(&self.st, val)?);
            hdr = row::RecHeader::read(val);
            guard += 1;
            if guard > 1_000_000 {
                break;
            }
        }
        Ok(out)
    }

    fn remove_unused_entries(
        &self,
        lay: &Layout,
        ckey: &[u8],
        drop_rows: &[Vec<Value>],
        keep: &[Vec<Value>],
    ) -> Result<()> {
        for (tree_no, ix) in lay.secondaries() {
            for r in drop_rows {
                let k = lay.entry_key(ix, r, ckey);
                if keep.iter().any(|kr| lay.entry_key(ix, kr, ckey) == k) {
                    continue;
                }
                lay.trees[tree_no]
                    .remove(&self.st, &k, &[])
                    .map_err(|e| io_err(&lay.name, e))?;
            }
        }
        Ok(())
    }

    /// Puts clustered record `key` back to `old` (None: removes it) and makes the
    /// secondary indexes agree: rollback at runtime and after a crash.
    /// Puts clustered record `key` back to `old` (None: absent) and its secondary
    /// entries with it: the entries only the undone version used are removed, the old
    /// version's are there again, stamped with `trx` (the transaction being undone).
    pub(crate) fn restore(
        &self,
        lay: &Layout,
        key: &[u8],
        old: Option<&[u8]>,
        logical: &[u8],
        trx: u64,
    ) -> Result<()> {
        let st = &self.st;
        let name = &lay.name;
        let cur = lay.clustered().get(st, key).map_err(|e| io_err(name, e))?;
        match old {
            Some(v) => {
                lay.clustered()
                    .put(st, key, v, tree::PutMode::Upsert, logical)
                    .map_err(|e| io_err(name, e))?;
            }
            None => {
                if !lay
                    .clustered()
                    .remove(st, key, logical)
                    .map_err(|e| io_err(name, e))?
                    && !logical.is_empty()
                {
                    st.log.append(logical);
                }
            }
        }
        let old_row = match old {
            Some(v) => Some(lay.decode(&self.st, v)?),
            None => None,
        };
        let mut keep: Vec<Vec<Value>> = old_row.iter().cloned().collect();
        keep.extend(self.chain_rows(lay, old, 0)?);
        if let Some(c) = &cur {
            let r = lay.decode(&self.st, c)?;
            self.remove_unused_entries(lay, key, &[r], &keep)?;
        }
        if let Some(r) = &old_row {
            for (tree_no, ix) in lay.secondaries() {
                let k = lay.entry_key(ix, r, key);
                lay.trees[tree_no]
                    .put_stamped(st, &k, key, tree::PutMode::Insert, &[], trx)
                    .map_err(|e| io_err(name, e))?;
            }
        }
        self.log_online(lay.space, key);
        Ok(())
    }

    /// Marks every tree of `space` as written anew now (a rebuild's copy switched in,
    /// TRUNCATE): a consistent read whose view is older cannot read it (1412, as
    /// InnoDB's table definition change check), since the old versions it should see
    /// are not there. Returns the mark.
    pub(crate) fn contents_mark(&self, space: u32) -> u64 {
        let id = self.trx.mark();
        if self.trx.peek_next_id() >= self.spaces.trx_id_reserved() {
            if let Err(e) = self.spaces.reserve_trx_ids(self.trx.peek_next_id()) {
                log_error!("btree: cannot persist the transaction id ceiling: {e}");
            }
        }
        self.contents_since.lock().insert(space, id);
        id
    }

    pub(crate) fn truncate_space(&self, lay: &Layout) -> Result<()> {
        // Nothing in the log may refer to the old pages once the file is emptied.
        self.checkpoint()?;
        let st = &self.st;
        // Not while purge works: from the drop until the new header is written the
        // space is missing or unformatted, and purge (or the sweep) reading it then
        // would log a failure and turn index-only reads off for the table.
        let no_purge = self.purging.lock();
        st.pool.drop_space(lay.space);
        let path = self
            .spaces
            .path_of(lay.space)
            .ok_or_else(|| Error::Internal(format!("space {} has no file", lay.space)))?;
        let direct = self.cfg.read().direct_io;
        let io = open_space_file(&path, direct)?;
        io.set_len(0).map_err(|e| Error::io(&lay.name, e))?;
        st.pool.add_space(lay.space, io, lay.name.clone());
        let mut mtr = Mtr::new(st);
        tree::format_space(
            &mut mtr,
            lay.space,
            lay.trees.len() as u16,
            st.pool.page_size(),
        )
        .map_err(|e| io_err(&lay.name, e))?;
        mtr.commit();
        drop(no_purge);
        self.checkpoint()
    }

    /// Rows in a table, estimated from the clustered index's leaf pages.
    pub(crate) fn estimate_rows(&self, lay: &Layout) -> u64 {
        let mut n = 0u64;
        let _ = lay.clustered().range(
            &self.st,
            &std::ops::Bound::Unbounded,
            &std::ops::Bound::Unbounded,
            false,
            &mut |b| {
                n += b.len() as u64;
                Ok(n < 10_000_000)
            },
        );
        n
    }
}

/// The `btree` engine's part of a transaction.
pub struct BtreeTrx {
    inner: Arc<Inner>,
    isolation: Isolation,
    lock_wait: Duration,
    /// The connection's stop signal: a lock wait ends with its error (KILL).
    interrupt: strata_engine::Interrupt,
    /// Key in the engine's registry of open transactions.
    serial: u64,
    state: Mutex<TrxState>,
}

#[derive(Default)]
struct TrxState {
    /// 0 until the first write.
    id: u64,
    /// The log's end when the transaction made its first write.
    first_lsn: u64,
    view: Option<Arc<ReadView>>,
    /// Its changes, oldest first; the newest in memory, the rest in a file
    /// (`change_list.rs`).
    undo: change_list::ChangeList,
    /// The next change's undo number.
    next_undo_no: u32,
    /// Changes numbered below this have their undo in the undo log (`undo_log.rs`).
    durable_no: u32,
    /// The row locks it holds to its end (a set: an update or delete gives back the
    /// one its row's write now stands for, wherever it is, `BtreeTrx::written`).
    locks: HashSet<LockKey>,
    finished: bool,
    /// The xid it prepared under (two-phase commit with the binary log).
    prepared: Option<u64>,
    /// The XA xid it prepared under (XA PREPARE, `strata_engine::xa_xid_bytes`).
    xa: Option<Vec<u8>>,
}

impl BtreeTrx {
    /// Logs a prepare record (`record` of the transaction id) and marks the state with
    /// `mark`, then makes the record durable. A transaction that changed nothing has
    /// nothing to keep over a crash (InnoDB's read-only prepare). The mark is set under
    /// the state lock with the append, so a checkpoint's copy of the undo
    /// (`undo_to_relog`) sees either neither or both.
    fn log_prepared(
        &self,
        record: impl FnOnce(u64) -> Vec<u8>,
        mark: impl FnOnce(&mut TrxState),
    ) -> Result<()> {
        let mut s = self.state.lock();
        if s.finished || s.id == 0 {
            return Ok(());
        }
        let lsn = self.inner.st.log.append(&record(s.id));
        mark(&mut s);
        drop(s);
        self.inner
            .st
            .log
            .commit(lsn)
            .map_err(|e| Error::io("ib_logfile0", e))
    }

    fn new(inner: Arc<Inner>, txn: &Txn) -> Arc<BtreeTrx> {
        let serial = inner.next_trx_serial.fetch_add(1, Ordering::Relaxed);
        let t = Arc::new(BtreeTrx {
            inner,
            isolation: txn.isolation(),
            lock_wait: txn.lock_wait_timeout(),
            interrupt: txn.interrupt(),
            serial,
            state: Mutex::new(TrxState::default()),
        });
        t.inner.open_trx[serial as usize % TRX_SHARDS]
            .lock()
            .insert(serial, Arc::downgrade(&t));
        t
    }

    /// An XA-prepared transaction of an earlier run brought back by recovery
    /// (`recovery::resurrect`): id `id` (active again), its undo and row locks.
    pub(crate) fn resurrect(
        inner: &Arc<Inner>,
        id: u64,
        undo: Vec<UndoItem>,
        locks: Vec<LockKey>,
        xa: Vec<u8>,
    ) -> Result<Arc<BtreeTrx>> {
        let next_undo_no = undo.iter().map(|u| u.undo_no + 1).max().unwrap_or(0);
        let mut list = change_list::ChangeList::default();
        for u in undo {
            list.push(u, &inner.changes)
                .map_err(|e| Error::io(change_list::FILE_PREFIX, e))?;
        }
        let serial = inner.next_trx_serial.fetch_add(1, Ordering::Relaxed);
        let t = Arc::new(BtreeTrx {
            inner: inner.clone(),
            isolation: Isolation::RepeatableRead,
            lock_wait: Duration::from_secs(50),
            interrupt: strata_engine::Interrupt::default(),
            serial,
            state: Mutex::new(TrxState {
                id,
                // As in `TrxSys::resume`: older than any checkpoint.
                first_lsn: 0,
                undo: list,
                next_undo_no,
                locks: locks.into_iter().collect(),
                xa: Some(xa),
                ..TrxState::default()
            }),
        });
        inner.open_trx[serial as usize % TRX_SHARDS]
            .lock()
            .insert(serial, Arc::downgrade(&t));
        Ok(t)
    }

    /// Runs `f` with this engine's part of `txn`, joining it on first use.
    pub(crate) fn with<R>(
        inner: &Arc<Inner>,
        txn: &Txn,
        f: impl FnOnce(&BtreeTrx) -> Result<R>,
    ) -> Result<R> {
        let p = match txn.participant("btree") {
            Some(p) => p,
            None => {
                let p: Arc<dyn Participant> = BtreeTrx::new(inner.clone(), txn);
                txn.join("btree", p.clone());
                p
            }
        };
        match p.as_any().downcast_ref::<BtreeTrx>() {
            Some(t) => f(t),
            None => Err(Error::Internal(
                "btree transaction state of another type".into(),
            )),
        }
    }

    /// The btree transaction id of `txn` (0 when it has none yet).
    fn id_of(txn: &Txn) -> u64 {
        txn.participant("btree")
            .and_then(|p| {
                p.as_any()
                    .downcast_ref::<BtreeTrx>()
                    .map(|t| t.state.lock().id)
            })
            .unwrap_or(0)
    }

    /// The transaction's id, assigned at its first write.
    pub(crate) fn ensure_id(&self) -> u64 {
        let mut s = self.state.lock();
        if s.id == 0 {
            let lsn = self.inner.st.log.current_lsn();
            s.first_lsn = lsn;
            s.id = self.inner.trx.begin(lsn);
            if let Some(v) = &s.view {
                v.set_creator(s.id);
            }
            let next = self.inner.trx.peek_next_id();
            if next >= self.inner.spaces.trx_id_reserved() {
                if let Err(e) = self.inner.spaces.reserve_trx_ids(next) {
                    log_error!("btree: cannot persist the transaction id ceiling: {e}");
                }
            }
        }
        s.id
    }

    /// The read view for a consistent read (made at the first one, as InnoDB does).
    pub(crate) fn view(&self) -> Arc<ReadView> {
        let mut s = self.state.lock();
        if let Some(v) = &s.view {
            return v.clone();
        }
        let v = self.inner.trx.open_view(s.id);
        s.view = Some(v.clone());
        v
    }

    /// How long a lock request of kind `wait` may wait.
    fn wait_time(&self, wait: strata_engine::LockWait) -> Duration {
        match wait {
            strata_engine::LockWait::Wait => self.lock_wait,
            _ => Duration::ZERO,
        }
    }

    /// Takes `mode` on `key` of tree `index`; the caller decides whether the
    /// transaction keeps it to its end ([`BtreeTrx::keep`]) or gives it back.
    pub(crate) fn acquire(
        &self,
        lay: &Layout,
        index: u16,
        key: &[u8],
        mode: Mode,
        wait: strata_engine::LockWait,
    ) -> Result<(Granted, LockKey)> {
        let id = self.ensure_id();
        let k = LockKey {
            space: lay.space,
            index,
            key: key.to_vec(),
        };
        let granted = self
            .inner
            .locks
            .lock(id, &k, mode, self.wait_time(wait), &self.interrupt)?;
        Ok((granted, k))
    }

    /// Holds a lock [`BtreeTrx::acquire`] took until the transaction ends.
    pub(crate) fn keep(&self, granted: Granted, k: LockKey) {
        if granted == Granted::New {
            self.state.lock().locks.insert(k);
        }
    }

    /// Gives back a lock [`BtreeTrx::acquire`] took and nothing keeps.
    pub(crate) fn give_back(&self, k: &LockKey) {
        let id = self.state.lock().id;
        self.inner.locks.release_key(id, k);
    }

    /// Gives back the locks taken for one write (an insert's key and unique values),
    /// whether the write was made or refused: a made write's record stands for them.
    pub(crate) fn done_writing(&self, taken: Vec<LockKey>) {
        if taken.is_empty() {
            return;
        }
        let id = self.state.lock().id;
        for k in &taken {
            self.inner.locks.release_key(id, k);
        }
    }

    /// After a write of clustered key `key` (an update or delete-mark): the record now
    /// carries this transaction's id, which holds the row to the transaction's end (the
    /// implicit lock, `lock.rs`), so the entry of the lock it took on the row (its
    /// locking read's, this statement's or an earlier one's) is given back. A large
    /// UPDATE or DELETE then keeps no entry per row once its rows are written. A
    /// rollback to a savepoint locks the row again before undoing the change (`undo`).
    pub(crate) fn written(&self, lay: &Layout, key: &[u8]) {
        let k = LockKey::row(lay.space, key);
        let mut s = self.state.lock();
        if !s.locks.remove(&k) {
            return;
        }
        let id = s.id;
        drop(s);
        self.inner.locks.release_key(id, &k);
    }

    /// Turns the implicit lock this transaction's change of `key` holds into an entry
    /// it keeps, before a partial rollback undoes the change: no other transaction can
    /// hold the row meanwhile (one that wants it waits on this transaction).
    fn relock_own(&self, lay: &Layout, key: &[u8]) {
        let id = self.state.lock().id;
        let k = LockKey::row(lay.space, key);
        if self.inner.locks.grant(id, &k) == Granted::New {
            self.state.lock().locks.insert(k);
        }
    }

    /// Waits until `owner`, a running transaction whose write the record of clustered
    /// key `key` carries, has ended (its implicit lock; `lock.rs`).
    pub(crate) fn wait_implicit(
        &self,
        lay: &Layout,
        key: &[u8],
        owner: u64,
        wait: strata_engine::LockWait,
    ) -> Result<()> {
        let k = LockKey::row(lay.space, key);
        let trx = &self.inner.trx;
        self.inner.locks.wait_implicit(
            self.ensure_id(),
            owner,
            &k,
            &|t| trx.is_active(t),
            self.wait_time(wait),
            &self.interrupt,
        )
    }

    /// Remembers a change before it is logged (so a checkpoint cannot miss it); returns
    /// the change's undo number. Fails, listing nothing, when the list's older part
    /// cannot be written to its file (a full disk): the change must not be made.
    pub(crate) fn record_undo(
        &self,
        space: u32,
        key: &[u8],
        roll_ptr: u64,
    ) -> std::io::Result<u32> {
        let mut s = self.state.lock();
        let undo_no = s.next_undo_no;
        s.undo.push(
            UndoItem {
                space,
                key: key.to_vec(),
                roll_ptr,
                undo_no,
            },
            &self.inner.changes,
        )?;
        s.next_undo_no += 1;
        Ok(undo_no)
    }

    /// Forgets the change just recorded (its write failed).
    pub(crate) fn forget_last_undo(&self) {
        self.state.lock().undo.pop();
    }

    /// Undoes the changes listed from position `at` on, newest first, a piece of the
    /// list (its tail, or one segment of its file) at a time. The list stays as it is
    /// and the state unlocked while each piece is undone: a checkpoint meanwhile
    /// copies what the undo log lacks of it (a rollback of a transaction larger than
    /// the redo log needs checkpoints).
    fn undo_from(&self, at: usize, trx_id: u64, relock: bool) -> Result<()> {
        let mut end = self.state.lock().undo.len();
        while end > at {
            let (start, items) = self
                .state
                .lock()
                .undo
                .piece_before(end)
                .map_err(|e| io_err("the transaction's change list", e))?;
            let from = at.max(start);
            self.undo(&items[from - start..], trx_id, relock)?;
            end = from;
        }
        Ok(())
    }

    fn close_view(&self, s: &mut TrxState) {
        if let Some(v) = s.view.take() {
            self.inner.trx.close_view(&v);
        }
    }

    /// Undoes `items` newest first. With `relock` (a rollback to a savepoint or of one
    /// statement, the transaction going on), a row that existed before its change is
    /// locked explicitly first: the change's record held it implicitly, and the
    /// transaction keeps the locks it took to its end, as InnoDB does. (A row the
    /// change inserted is free again, as in InnoDB.)
    fn undo(&self, items: &[UndoItem], trx_id: u64, relock: bool) -> Result<()> {
        for item in items.iter().rev() {
            // Room in the log before any page latch is taken, as a forward change does:
            // an mtr waiting for space while holding latches would stall the
            // checkpoint's flush of those very pages (a rollback larger than the log).
            self.inner.st.log.free_check();
            // A table no session has opened since a restart (an XA-prepared
            // transaction recovery kept) is read through its layout; a dropped one is
            // skipped.
            let lay = match self.inner.table(item.space) {
                Some(t) => t.lay.clone(),
                None => match self.inner.spaces.layout(&self.inner, item.space) {
                    Ok(l) => l,
                    Err(_) => continue,
                },
            };
            let old = self
                .inner
                .trx
                .versions
                .get(item.roll_ptr)
                .map_err(|e| io_err(&lay.name, e))?;
            let old_val = old.as_ref().and_then(|o| o.value.as_deref());
            if relock && old_val.is_some() {
                self.relock_own(&lay, &item.key);
            }
            self.inner
                .restore(&lay, &item.key, old_val, &[], trx_id.max(1))?;
            self.inner.trx.versions.remove(item.roll_ptr);
        }
        Ok(())
    }

    fn finish(&self, s: &mut TrxState) {
        self.inner.open_trx[self.serial as usize % TRX_SHARDS]
            .lock()
            .remove(&self.serial);
        let locks = std::mem::take(&mut s.locks);
        if s.id != 0 {
            self.inner.locks.release(s.id, &locks);
        }
        self.close_view(s);
        s.finished = true;
    }
}

impl Participant for BtreeTrx {
    fn commit(&self) -> Result<()> {
        let mut s = self.state.lock();
        if s.finished {
            return Ok(());
        }
        if s.id == 0 {
            self.finish(&mut s);
            return Ok(());
        }
        let id = s.id;
        let prepared = s.prepared.is_some();
        let lsn = self.inner.st.log.append(&recovery::commit_record(id));
        let serial = self.inner.trx.end(id);
        // Moved, not copied: purge walks it from its file (`change_list.rs`).
        let items = std::mem::take(&mut s.undo);
        if items.is_empty() {
            self.inner.trx.cleaned(id);
        } else {
            self.inner.trx.purge_queue.lock().push_back(PurgeBatch {
                trx_id: id,
                serial,
                first_lsn: s.first_lsn,
                items,
            });
        }
        self.finish(&mut s);
        drop(s);
        // Prepared: its prepare record is durable and the binary log decides after a
        // crash, so the commit record waits for the next flush.
        let res = if prepared {
            Ok(())
        } else {
            self.inner
                .st
                .log
                .commit(lsn)
                .map_err(|e| Error::io("ib_logfile0", e))
        };
        self.inner.help_purge();
        res
    }

    fn prepare(&self, xid: u64) -> Result<()> {
        self.log_prepared(
            |id| recovery::prepared_record(id, xid),
            |s| s.prepared = Some(xid),
        )
    }

    fn prepare_xa(&self, xid: &[u8]) -> Result<()> {
        self.log_prepared(
            |id| recovery::xa_prepared_record(id, xid),
            |s| s.xa = Some(xid.to_vec()),
        )
    }

    fn rollback(&self) -> Result<()> {
        let s = self.state.lock();
        if s.finished {
            return Ok(());
        }
        // The list stays in place while the changes are undone (`undo_from`).
        let id = s.id;
        drop(s);
        let res = self.undo_from(0, id, false);
        let mut s = self.state.lock();
        s.undo.clear();
        if id != 0 {
            self.inner.st.log.append(&recovery::rolled_back_record(id));
            self.inner.trx.end(id);
            if res.is_ok() {
                self.inner.trx.cleaned(id);
            } else {
                self.inner.covering_off.store(true, Ordering::SeqCst);
            }
        }
        self.finish(&mut s);
        res
    }

    fn savepoint(&self) -> u64 {
        self.state.lock().undo.len() as u64
    }

    fn rollback_to(&self, savepoint: u64) -> Result<()> {
        let s = self.state.lock();
        let at = (savepoint as usize).min(s.undo.len());
        let id = s.id;
        drop(s);
        // Listed until undone, for a checkpoint meanwhile (`undo_from`).
        let res = self.undo_from(at, id, true);
        self.state.lock().undo.truncate(at);
        res
    }

    fn end_statement(&self) {
        if self.isolation == Isolation::ReadCommitted {
            let mut s = self.state.lock();
            self.close_view(&mut s);
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for BtreeTrx {
    /// A transaction dropped without COMMIT (a connection that vanished) rolls back.
    fn drop(&mut self) {
        if !self.state.lock().finished {
            let _ = Participant::rollback(self);
        }
    }
}

impl Engine for BtreeEngine {
    fn name(&self) -> &'static str {
        "btree"
    }

    fn create_table(&self, def: &TableDef, path: &Path) -> Result<()> {
        let inner = &self.inner;
        let file = path.with_extension("ibd");
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
        }
        // An existing file (of a table the catalog does not know: a crash between
        // creating it and recording the table, or a file copied in) is never
        // overwritten: 1050, as for an orphaned MyISAM file in MariaDB.
        if let Err(e) = StdFile::create_new(&file) {
            return Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::TableExists(def.name.clone())
            } else {
                Error::io(file.display(), e)
            });
        }
        let space = match inner.spaces.add(&file, def) {
            Ok(s) => s,
            Err(e) => {
                let _ = std::fs::remove_file(&file);
                return Err(e);
            }
        };
        let io = match open_space_file(&file, inner.cfg.read().direct_io) {
            Ok(io) => io,
            Err(e) => {
                let _ = self.drop_table(def, path);
                return Err(e);
            }
        };
        let name = format!("{}.{}", def.db, def.name);
        inner.st.pool.add_space(space, io, name.clone());
        let n = Layout::n_trees(def) as u16;
        let mut mtr = Mtr::new(&inner.st);
        if let Err(e) = tree::format_space(&mut mtr, space, n, inner.st.pool.page_size()) {
            // Nothing was committed: the half-made space goes, so a retry can create
            // the table (its file would otherwise make it 1050).
            drop(mtr);
            let _ = self.drop_table(def, path);
            return Err(io_err(&name, e));
        }
        let lsn = mtr.commit();
        inner
            .st
            .log
            .flush_up_to(lsn)
            .map_err(|e| Error::io("ib_logfile0", e))?;
        Ok(())
    }

    fn open_table(&self, def: Arc<TableDef>, path: &Path) -> Result<Arc<dyn Table>> {
        let inner = &self.inner;
        let file = path.with_extension("ibd");
        let name = format!("{}.{}", def.db, def.name);
        let space = inner
            .spaces
            .id_of(&file)
            .ok_or_else(|| Error::corrupt(&name, "its tablespace is not in the space directory"))?;
        inner.spaces.update_def(space, &def)?;
        let roots = {
            let mut mtr = Mtr::new(&inner.st);
            let s = mtr
                .s(strata_storage::bufpool::PageId { space, page_no: 0 })
                .map_err(|e| io_err(&name, e))?;
            let hdr = mtr.get(s);
            let stored = page::get_u32(hdr, tree::SH_PAGE_SIZE) as usize;
            if stored != inner.st.pool.page_size() {
                return Err(Error::corrupt(
                    &name,
                    format!(
                        "its pages are {stored} bytes but innodb_page_size is {}",
                        inner.st.pool.page_size()
                    ),
                ));
            }
            tree::read_roots(hdr)
                .ok_or_else(|| Error::corrupt(&name, "page 0 is not a space header"))?
        };
        // More roots than the definition has indexes: an index build a crash (or a
        // failed catalog write) cut short recorded its tree but was never committed;
        // the extra trees are ignored and the next build takes their place.
        if roots.len() < Layout::n_trees(&def) {
            return Err(Error::corrupt(
                &name,
                format!(
                    "the tablespace has {} indexes, the table {}",
                    roots.len(),
                    Layout::n_trees(&def)
                ),
            ));
        }
        // A physical layout that does not cover the columns would misplace values.
        crate::row::Physical::check(&def).map_err(|d| Error::corrupt(&name, d))?;
        let t = Arc::new(BtreeTable::open(
            inner.clone(),
            Layout::new(def, space, &roots),
        )?);
        inner.tables.write().insert(space, Arc::downgrade(&t));
        Ok(t)
    }

    fn drop_table(&self, _def: &TableDef, path: &Path) -> Result<()> {
        let inner = &self.inner;
        let file = path.with_extension("ibd");
        if let Some(space) = inner.spaces.id_of(&file) {
            // Not while purge is working: it may be inside this space now. Afterwards
            // purge finds the space neither open nor in the directory and drops what it
            // still owed the table (`purge_item`) instead of failing to read it.
            let _p = inner.purging.lock();
            inner.tables.write().remove(&space);
            inner.st.pool.drop_space(space);
            inner.spaces.remove(space)?;
        }
        match std::fs::remove_file(&file) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(file.display(), e)),
        }
    }

    fn flush(&self) -> Result<()> {
        self.inner.checkpoint()
    }

    fn table_files(&self) -> Vec<std::path::PathBuf> {
        self.inner
            .spaces
            .list()
            .into_iter()
            .map(|s| s.path.with_extension(""))
            .collect()
    }

    /// Rows older than an instant ADD or DROP COLUMN decode with the table's physical
    /// layout and recorded defaults (`row::decode_record_into`).
    fn reads_instant_columns(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        let c = self.inner.cfg.read();
        format!(
            "buffer pool {} MiB of {} KiB pages, redo log {} MiB, flush_log_at_trx_commit={}{}",
            c.buffer_pool_size >> 20,
            c.page_size >> 10,
            c.log_file_size >> 20,
            self.inner.st.log.flush_at_commit() as u8,
            if c.direct_io { ", O_DIRECT" } else { "" }
        )
    }

    fn status_vars(&self) -> Vec<(String, u64)> {
        let p = self.inner.st.pool.stats();
        let l = self.inner.st.log.stats();
        let mut v = vec![
            ("Innodb_buffer_pool_pages_total".into(), p.pages_total),
            ("Innodb_buffer_pool_pages_data".into(), p.pages_data),
            ("Innodb_buffer_pool_pages_dirty".into(), p.pages_dirty),
            ("Innodb_buffer_pool_read_requests".into(), p.read_requests),
            ("Innodb_buffer_pool_reads".into(), p.reads),
            ("Innodb_buffer_pool_pages_flushed".into(), p.pages_written),
            ("Innodb_buffer_pool_pages_made_young".into(), p.young_made),
            (
                "Innodb_buffer_pool_pages_not_made_young".into(),
                p.not_young,
            ),
            ("Innodb_os_log_fsyncs".into(), l.fsyncs),
            ("Innodb_os_log_written".into(), l.bytes_written),
            ("Innodb_log_writes".into(), l.writes),
            (
                "Innodb_history_list_length".into(),
                self.inner.trx.history_length() as u64,
            ),
            (
                "Innodb_active_transactions".into(),
                self.inner.trx.active_count() as u64,
            ),
            (
                "Strata_btree_row_locks".into(),
                self.inner.locks.entries() as u64,
            ),
            (
                "Strata_btree_index_only_records".into(),
                self.inner.index_only_records.load(Ordering::Relaxed),
            ),
            (
                "Strata_change_list_segments_written".into(),
                self.inner.changes.segments_written.load(Ordering::Relaxed),
            ),
            (
                "Strata_change_list_segments_read".into(),
                self.inner.changes.segments_read.load(Ordering::Relaxed),
            ),
        ];
        // Latch waits, as SHOW ENGINE INNODB STATUS's SEMAPHORES section counts them
        // (and as MariaDB named them as status variables).
        let w = self.inner.st.pool.latch_policy().stats();
        for (kind, c) in [
            ("mutex", w.mutex),
            ("rwlock_s", w.shared),
            ("rwlock_x", w.exclusive),
        ] {
            v.push((format!("Innodb_{kind}_spin_waits"), c.spin_waits));
            v.push((format!("Innodb_{kind}_spin_rounds"), c.spin_rounds));
            v.push((format!("Innodb_{kind}_os_waits"), c.os_waits));
        }
        v
    }

    fn prepared_xids(&self) -> Vec<u64> {
        self.inner
            .prepared_left
            .lock()
            .as_ref()
            .map_or_else(Vec::new, |l| l.iter().map(|p| p.xid).collect())
    }

    fn resolve_prepared(&self, commit: &dyn Fn(u64) -> bool) -> Result<(usize, usize)> {
        recovery::resolve(&self.inner, commit)
    }

    fn transactional(&self) -> bool {
        true
    }

    fn supports_xa(&self) -> bool {
        true
    }

    fn take_recovered_xa(&self) -> Vec<(Vec<u8>, Arc<dyn Participant>)> {
        std::mem::take(&mut *self.inner.xa_recovered.lock())
            .into_iter()
            .map(|(x, t)| (x, t as Arc<dyn Participant>))
            .collect()
    }

    fn start_consistent_snapshot(&self, txn: &Txn) -> Result<bool> {
        if txn.isolation() != Isolation::RepeatableRead {
            return Ok(false);
        }
        BtreeTrx::with(&self.inner, txn, |t| {
            t.view();
            Ok(true)
        })
    }

    fn variables(&self) -> Vec<EngineVar> {
        let c = self.inner.cfg.read();
        let policy = self.inner.st.pool.latch_policy();
        let int = |n: u64| Value::UInt(n);
        let onoff = |b: bool| Value::str(if b { "ON" } else { "OFF" });
        vec![
            EngineVar {
                name: "innodb_buffer_pool_size",
                value: int(c.buffer_pool_size as u64),
                dynamic: false,
            },
            EngineVar {
                name: "innodb_page_size",
                value: int(c.page_size as u64),
                dynamic: false,
            },
            EngineVar {
                name: "innodb_log_file_size",
                value: int(c.log_file_size),
                dynamic: false,
            },
            EngineVar {
                name: "innodb_flush_log_at_trx_commit",
                value: int(self.inner.st.log.flush_at_commit() as u64),
                dynamic: true,
            },
            EngineVar {
                name: "innodb_flush_method",
                value: Value::str(if c.direct_io { "O_DIRECT" } else { "fsync" }),
                dynamic: false,
            },
            EngineVar {
                name: "innodb_adaptive_hash_index",
                value: onoff(c.adaptive_hash_index),
                dynamic: true,
            },
            EngineVar {
                name: "innodb_old_blocks_pct",
                value: int(c.old_blocks_pct as u64),
                dynamic: false,
            },
            EngineVar {
                name: "innodb_old_blocks_time",
                value: int(c.old_blocks_time_ms as u64),
                dynamic: false,
            },
            // Read from the policy the latches use, so what SHOW says is what they do.
            EngineVar {
                name: "innodb_sync_spin_loops",
                value: int(policy.spin_loops() as u64),
                dynamic: true,
            },
            EngineVar {
                name: "innodb_spin_wait_delay",
                value: int(policy.spin_wait_delay() as u64),
                dynamic: true,
            },
            EngineVar {
                name: "innodb_sort_buffer_size",
                value: int(c.sort_buffer_size as u64),
                dynamic: false,
            },
            EngineVar {
                name: "innodb_fill_factor",
                value: int(c.fill_factor as u64),
                dynamic: true,
            },
            EngineVar {
                name: "innodb_online_alter_log_max_size",
                value: int(c.online_alter_log_max_size as u64),
                dynamic: true,
            },
            EngineVar {
                name: "strata_undo_memory_size",
                value: int(c.undo_memory_bound() as u64),
                dynamic: true,
            },
            EngineVar {
                name: "strata_change_list_tail",
                value: int(self.inner.changes.tail() as u64),
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
            "innodb_flush_log_at_trx_commit" => {
                let p = match value.to_i64() {
                    Some(0) => FlushAtCommit::Never,
                    Some(1) => FlushAtCommit::Durable,
                    Some(2) => FlushAtCommit::WriteOnly,
                    _ => return Err(bad()),
                };
                self.inner.st.log.set_flush_at_commit(p);
                Ok(())
            }
            "innodb_adaptive_hash_index" => {
                let on = match value {
                    Value::Bytes(b) if b.eq_ignore_ascii_case(b"on") => true,
                    Value::Bytes(b) if b.eq_ignore_ascii_case(b"off") => false,
                    v => match v.to_i64() {
                        Some(0) => false,
                        Some(1) => true,
                        _ => return Err(bad()),
                    },
                };
                self.inner.cfg.write().adaptive_hash_index = on;
                self.inner.ahi.store(on, Ordering::Relaxed);
                Ok(())
            }
            // Both take effect at the next wait of every latch of the engine.
            "innodb_sync_spin_loops" => {
                let n = value
                    .to_i64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(bad)?;
                self.inner.cfg.write().sync_spin_loops = n;
                self.inner.st.pool.latch_policy().set_spin_loops(n);
                Ok(())
            }
            "innodb_spin_wait_delay" => {
                let d = value
                    .to_i64()
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|&d| d <= MAX_SPIN_WAIT_DELAY)
                    .ok_or_else(bad)?;
                self.inner.cfg.write().spin_wait_delay = d;
                self.inner.st.pool.latch_policy().set_spin_wait_delay(d);
                Ok(())
            }
            // MySQL's ranges: 10..=100 percent; at least 64 KiB of log.
            "innodb_fill_factor" => {
                let f = value
                    .to_i64()
                    .filter(|f| (10..=100).contains(f))
                    .ok_or_else(bad)?;
                self.inner.cfg.write().fill_factor = f as u32;
                Ok(())
            }
            "innodb_online_alter_log_max_size" => {
                let n = value.to_i64().filter(|&n| n >= 65536).ok_or_else(bad)?;
                self.inner.cfg.write().online_alter_log_max_size = n as usize;
                Ok(())
            }
            // Takes effect at the next old version stored; versions already in memory
            // stay there until purge or rollback frees them.
            "strata_undo_memory_size" => {
                let n = value
                    .to_i64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(bad)?;
                self.inner.cfg.write().undo_memory_size = Some(n);
                self.inner.trx.versions.set_limit(n);
                Ok(())
            }
            // Takes effect at each transaction's next change.
            "strata_change_list_tail" => {
                let n = value
                    .to_i64()
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|n| (1..=change_list::MAX_TAIL).contains(n))
                    .ok_or_else(bad)?;
                self.inner.cfg.write().change_list_tail = n;
                self.inner.changes.set_tail(n);
                Ok(())
            }
            n if self.variables().iter().any(|v| v.name == n) => {
                Err(Error::VariableReadOnly(n.to_string()))
            }
            n => Err(Error::UnknownVariable(n.to_string())),
        }
    }
}

/// The undo spill file's name in the data directory (`docs/format/undo.md`).
pub const UNDO_SPILL_FILE: &str = "ib_undo_spill";

/// The data directory's redo log file name (for tests and tools).
pub fn log_path(datadir: &Path) -> PathBuf {
    datadir.join("ib_logfile0")
}
