//! The buffer pool: InnoDB's cache of fixed-size pages (data and index pages alike) of
//! many files ("spaces"), through which a page-based engine reads, latches and changes
//! its pages. It knows no engine: it owns only the common 32-byte page header
//! (checksum, page LSN, space id, page number; `docs/format/page.md`) and leaves the rest
//! of every page to the engine. Every file access goes through [`FileIo`].
//!
//! # Frames, fixing and latching
//!
//! The pool is `size_bytes / page_size` frames, each a 4096-aligned page buffer (so
//! `O_DIRECT` files work) behind its own reader-writer latch, the page latch (a
//! [`Latch`], whose spin-or-wait policy is the pool's [`SpinPolicy`], given in
//! [`PoolConfig::latch_policy`] and shared with the engine's own latches). A page is
//! *fixed* (pinned: a per-frame atomic count) before it is latched, and pinned frames
//! are never evicted. The page table (page id → frame) is split into [`SHARDS`]
//! independently locked shards, so a hit costs one shard read-lock, the frame's pin
//! and reference counts and the page latch; no lock or counter is shared by all hits. A frame can only be
//! taken for another page by an evictor that holds the page's shard lock for writing
//! and finds the pin count zero (it then sets a high "evicting" bit in the count),
//! and hits pin under the shard's read lock, so a frame cannot change page between
//! lookup and pin. A reader re-checks the frame's page after latching anyway: a load
//! that failed leaves its waiters a frame of no page, and they retry.
//!
//! # Replacement: LRU with midpoint insertion
//!
//! One LRU list under a mutex, split as InnoDB splits it: the tail `old_blocks_pct`%
//! is the *old* sublist. A page read from its file enters at the head of the old
//! sublist, not at the head of the list; it moves to the head (becomes *young*) only if
//! it is accessed again at least `old_blocks_time_ms` after its first access. A scan of
//! a table bigger than the pool therefore cycles through the old sublist and leaves the
//! young part, the hot working set, alone. Pages created with [`BufferPool::create`]
//! enter young, as in InnoDB (they are about to be filled and used).
//!
//! Hits do not take the LRU mutex unless they move a page: each frame carries an
//! atomic "old" flag and its first-access time, so an old page that is not old enough
//! costs nothing. A young page is moved back to the head only when it has probably
//! drifted out of the first quarter of the young sublist, judged without the lock from a
//! global counter of insertions at the head and the counter's value when the page was
//! last put there (InnoDB's `freed_page_clock` trick). A hot set that fits in the first
//! quarter of the young sublist therefore never touches the mutex. The old/young
//! boundary is kept at `old_blocks_pct`% within a small tolerance, so a page evicted
//! and another inserted do not churn the boundary.
//!
//! # Dirty pages and the write-ahead rule
//!
//! A changed page records the lsn its first unflushed change started at
//! (oldest_modification) in a set ordered by it (InnoDB's flush list), which gives the
//! checkpoint its lsn and the flusher its order. Before a page whose page LSN is L is
//! written, the WAL hook is asked to make the log durable up to L. Pages are written
//! from a sealed copy (checksum and page id filled in) taken under the page's S latch,
//! so the file never holds a half-changed page. Written pages are not durable until
//! their file is fsynced: [`BufferPool::sync_spaces`] (called by
//! [`BufferPool::flush_older_than`]) does that for every file written since.
//!
//! Victims come from the LRU tail: unpinned and clean first; a dirty one is written
//! by the thread that needs the frame only if no clean one is near the tail. The page
//! cleaner ([`BufferPool::start_page_cleaner`]) keeps the tail clean once free frames
//! run short, and the dirty fraction under [`MAX_DIRTY_PCT`]%, so that is rare.

use crate::io::FileIo;
use crate::sync::{
    Arc, ArcLatchRead, ArcLatchWrite, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Condvar,
    Latch, LatchMutex, Mutex, Ordering, SharedHold, SpinPolicy, Weak,
};
use std::alloc::Layout;
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

/// Bytes at the start of every page owned by the pool's header; engines use the bytes
/// from 20 on (20..32 are reserved for their page type and the like).
pub const PAGE_HEADER_SIZE: usize = 32;
pub const MIN_PAGE_SIZE: usize = 4096;
pub const MAX_PAGE_SIZE: usize = 65536;
pub const DEFAULT_PAGE_SIZE: usize = 16384;
/// The fewest frames a pool has, however small `size_bytes` is.
pub const MIN_FRAMES: usize = 16;
/// Independently locked parts of the page table.
pub const SHARDS: usize = 64;
/// innodb_max_dirty_pages_pct: above this share of dirty frames the cleaner flushes
/// the oldest ones.
pub const MAX_DIRTY_PCT: usize = 75;
/// Where the cleaner brings the dirty share down to once it is above the maximum.
const DIRTY_LOW_WATER_PCT: usize = 50;
/// Page buffers are aligned for O_DIRECT.
const ALIGN: usize = 4096;
/// A frame's page id when it holds no page.
const NO_PAGE: u64 = u64::MAX;
/// A frame's oldest_modification when it is clean.
const CLEAN: u64 = u64::MAX;
/// Set in a frame's pin count by the one thread that owns it for reuse.
const EVICTING: u32 = 1 << 31;
/// How often a thread looks for a free frame before it reports the pool too small.
const FREE_FRAME_ATTEMPTS: u32 = 100;
/// How far from the LRU tail a first search for a victim looks.
const VICTIM_SCAN_DEPTH: usize = 64;
const CLEANER_INTERVAL: Duration = Duration::from_millis(100);
const NIL: usize = usize::MAX;

// ---------------------------------------------------------------------------------
// The common page header.

fn get_u32(p: &[u8], off: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&p[off..off + 4]);
    u32::from_le_bytes(b)
}

/// The page LSN (bytes 4..12): the redo lsn of the page's last change. `page` must be
/// at least [`PAGE_HEADER_SIZE`] bytes.
pub fn page_lsn(page: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&page[4..12]);
    u64::from_le_bytes(b)
}

pub fn set_page_lsn(page: &mut [u8], lsn: u64) {
    page[4..12].copy_from_slice(&lsn.to_le_bytes());
}

/// The space id and page number a page's header names (bytes 12..20).
pub fn page_id_of(page: &[u8]) -> PageId {
    PageId {
        space: get_u32(page, 12),
        page_no: get_u32(page, 16),
    }
}

fn set_page_id(page: &mut [u8], id: PageId) {
    page[12..16].copy_from_slice(&id.space.to_le_bytes());
    page[16..20].copy_from_slice(&id.page_no.to_le_bytes());
}

fn checksum(page: &[u8]) -> u32 {
    crc32c::crc32c(&page[4..])
}

/// Writes the checksum of bytes 4.. into bytes 0..4.
pub fn seal_page(page: &mut [u8]) {
    let c = checksum(page);
    page[0..4].copy_from_slice(&c.to_le_bytes());
}

/// Checks a page read from `page_no` of `space`: its checksum, then that its header
/// names that place. An all-zero page (never written: the file was extended past it)
/// is a valid fresh page. The error says what is wrong, without naming the file.
pub fn verify_page(page: &[u8], space: u32, page_no: u32) -> Result<(), String> {
    if page.len() < PAGE_HEADER_SIZE {
        return Err(format!(
            "page of {} bytes is shorter than its header",
            page.len()
        ));
    }
    let stored = get_u32(page, 0);
    let computed = checksum(page);
    let found = page_id_of(page);
    let problem = if stored != computed {
        format!("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")
    } else if found.space != space || found.page_no != page_no {
        format!(
            "header names space {} page {}, expected space {space} page {page_no}",
            found.space, found.page_no
        )
    } else {
        return Ok(());
    };
    // Looked for only once a check failed: most pages are not zero.
    if page.iter().all(|&b| b == 0) {
        return Ok(());
    }
    Err(problem)
}

// ---------------------------------------------------------------------------------
// Public types.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageId {
    pub space: u32,
    pub page_no: u32,
}

impl PageId {
    pub fn new(space: u32, page_no: u32) -> PageId {
        PageId { space, page_no }
    }

    /// The page table key; sorts by space, then page number.
    fn key(self) -> u64 {
        ((self.space as u64) << 32) | self.page_no as u64
    }

    fn from_key(k: u64) -> PageId {
        PageId {
            space: (k >> 32) as u32,
            page_no: k as u32,
        }
    }
}

#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// innodb_buffer_pool_size
    pub size_bytes: usize,
    /// innodb_page_size: a power of two in 4096..=65536
    pub page_size: usize,
    /// innodb_old_blocks_pct: the share of the LRU list that is the old sublist
    pub old_blocks_pct: u32,
    /// innodb_old_blocks_time: how long after its first access a page in the old
    /// sublist must be accessed again to become young
    pub old_blocks_time_ms: u32,
    /// How the page latches and the pool's mutexes wait (innodb_sync_spin_loops,
    /// innodb_spin_wait_delay), and where their waits are counted.
    pub latch_policy: Arc<SpinPolicy>,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            size_bytes: 128 << 20,
            page_size: DEFAULT_PAGE_SIZE,
            old_blocks_pct: 37,
            old_blocks_time_ms: 1000,
            latch_policy: Arc::new(SpinPolicy::default()),
        }
    }
}

/// Counters named for InnoDB's status variables (Innodb_buffer_pool_*).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// pages_total
    pub pages_total: u64,
    /// pages_free
    pub pages_free: u64,
    /// pages_data: frames holding a page
    pub pages_data: u64,
    /// pages_dirty
    pub pages_dirty: u64,
    /// read_requests: logical page reads
    pub read_requests: u64,
    /// reads: pages read from their file
    pub reads: u64,
    /// pages_written
    pub pages_written: u64,
    /// Innodb_buffer_pool_pages_made_young: old pages moved to the young sublist
    pub young_made: u64,
    /// Innodb_buffer_pool_pages_made_not_young: accesses to old pages too soon after
    /// their first access to make them young
    pub not_young: u64,
    /// pages evicted to reuse their frame
    pub evictions: u64,
}

pub type WalHook = dyn Fn(u64) -> io::Result<()> + Send + Sync;

// ---------------------------------------------------------------------------------
// Frames.

/// An aligned page-sized buffer.
pub(crate) struct PageBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: PageBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for PageBuf {}
// SAFETY: shared access only hands out &[u8].
unsafe impl Sync for PageBuf {}

impl PageBuf {
    /// `len` is a validated page size (a power of two >= 4096).
    fn new(len: usize) -> PageBuf {
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        strata_types::memory::add(strata_types::memory::Component::BufferPool, len);
        PageBuf { ptr, len }
    }

    fn layout(len: usize) -> Layout {
        // A page size is validated before any buffer is made; a failure is a bug here.
        Layout::from_size_align(len.max(ALIGN), ALIGN).expect("page size is a valid layout")
    }
}

impl Drop for PageBuf {
    fn drop(&mut self) {
        strata_types::memory::sub(strata_types::memory::Component::BufferPool, self.len);
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
    }
}

impl Deref for PageBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for PageBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// The flush list: dirty frames ordered by oldest_modification. Every frame holds it
/// so a page guard can reach it without holding the pool.
struct FlushList {
    set: LatchMutex<BTreeSet<(u64, usize)>>,
}

struct Frame {
    idx: usize,
    /// The page this frame holds (`PageId::key`), or NO_PAGE. Changed only by the
    /// thread owning the frame for reuse, or by `drop_space`, under the shard lock.
    id: AtomicU64,
    /// The generation of the space the page was read from, so a page of a dropped
    /// space is never written into a new space that reuses the id.
    space_gen: AtomicU64,
    /// Fix count; EVICTING while a thread owns the frame for reuse.
    pin: AtomicU32,
    /// The page latch and the page.
    page: Arc<Latch<PageBuf>>,
    /// CLEAN, or the start lsn of the first change not yet written. Changed only with
    /// the flush list's lock held.
    oldest_mod: AtomicU64,
    /// In the old sublist; written under the LRU lock, read by hits without it.
    old: AtomicBool,
    /// Milliseconds since the pool started, plus one, of the page's first access.
    first_access: AtomicU64,
    /// The young clock when the page was last put at the head of the LRU list.
    young_stamp: AtomicU64,
    flush_list: Arc<FlushList>,
}

impl Frame {
    /// Pins unless a thread owns the frame for reuse.
    fn try_pin(&self) -> bool {
        let prev = self.pin.fetch_add(1, Ordering::Acquire);
        if prev & EVICTING != 0 {
            self.pin.fetch_sub(1, Ordering::Release);
            return false;
        }
        true
    }

    fn unpin(&self) {
        self.pin.fetch_sub(1, Ordering::Release);
    }

    fn is_dirty(&self) -> bool {
        self.oldest_mod.load(Ordering::Acquire) != CLEAN
    }

    fn clear_dirty(&self) {
        let mut set = self.flush_list.set.lock();
        let lsn = self.oldest_mod.swap(CLEAN, Ordering::AcqRel);
        if lsn != CLEAN {
            set.remove(&(lsn, self.idx));
        }
    }
}

/// A pin held by a guard or by the pool itself; unpins when dropped.
struct Pinned(Arc<Frame>);

impl Drop for Pinned {
    fn drop(&mut self) {
        self.0.unpin();
    }
}

/// A fixed, S-latched page; derefs to the whole page. Unlatches, then unfixes, on drop.
pub struct PageRead {
    // Field order matters: the latch is released before the pin, whose frame keeps
    // the latch alive.
    guard: SharedHold,
    pin: Pinned,
    id: PageId,
}

impl PageRead {
    pub fn id(&self) -> PageId {
        self.id
    }
}

impl Deref for PageRead {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `guard` was taken on this frame's latch (`BufferPool::read`).
        unsafe { self.pin.0.page.data_under(&self.guard) }
    }
}

/// A fixed, X-latched page; derefs mutably to the whole page.
pub struct PageWrite {
    guard: ArcLatchWrite<PageBuf>,
    pin: Pinned,
    id: PageId,
}

impl PageWrite {
    pub fn id(&self) -> PageId {
        self.id
    }

    /// Records that the page was changed by a mini-transaction whose redo spans
    /// `start_lsn..end_lsn`: sets the page LSN to `end_lsn` and, if the page was clean,
    /// makes `start_lsn` its oldest modification. Call it before the guard drops after
    /// any change. For the checkpoint to be right the engine must call it before the
    /// log can report a checkpointable lsn past `start_lsn` (InnoDB adds to the flush
    /// list in log order for the same reason).
    pub fn mark_dirty(&mut self, start_lsn: u64, end_lsn: u64) {
        set_page_lsn(&mut self.guard, end_lsn);
        let f = &self.pin.0;
        if f.oldest_mod.load(Ordering::Acquire) == CLEAN {
            let mut set = f.flush_list.set.lock();
            if f.oldest_mod.load(Ordering::Acquire) == CLEAN {
                // CLEAN is the sentinel, so an lsn of u64::MAX is recorded one lower.
                let lsn = start_lsn.min(CLEAN - 1);
                f.oldest_mod.store(lsn, Ordering::Release);
                set.insert((lsn, f.idx));
            }
        }
    }

    pub fn is_dirty(&self) -> bool {
        self.pin.0.is_dirty()
    }
}

impl Deref for PageWrite {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.guard
    }
}

impl DerefMut for PageWrite {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.guard
    }
}

// ---------------------------------------------------------------------------------
// Page table, spaces, LRU.

/// Page keys are already well spread in their low bits only; mix them.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = mix(k);
    }
}

fn mix(k: u64) -> u64 {
    let k = (k ^ (k >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    k ^ (k >> 29)
}

type PageMap = HashMap<u64, usize, BuildHasherDefault<KeyHasher>>;

/// One part of the page table, with the hit-path counters of its pages so hits do not
/// share a counter either. Aligned so shards do not share cache lines.
#[repr(align(128))]
struct Shard {
    map: Latch<PageMap>,
    read_requests: AtomicU64,
    young_made: AtomicU64,
    not_young: AtomicU64,
}

impl Shard {
    fn new(policy: &Arc<SpinPolicy>) -> Shard {
        Shard {
            map: Latch::with_policy(policy.clone(), PageMap::default()),
            read_requests: AtomicU64::new(0),
            young_made: AtomicU64::new(0),
            not_young: AtomicU64::new(0),
        }
    }
}

struct Space {
    io: Arc<dyn FileIo>,
    name: String,
    gen: u64,
    /// One past the highest page number created through the pool.
    high_water: AtomicU32,
    /// Written since the last fsync.
    unsynced: AtomicBool,
    /// Bytes of the file whose disk blocks are known to exist or be reserved: a page
    /// created below it can always be written back. Growing it takes `growing`.
    reserved: AtomicU64,
    growing: Mutex<()>,
}

impl Space {
    /// Makes sure page `page_no` has disk blocks before it is handed out, growing the
    /// reservation in steps of an eighth of the file (64 pages to 64 MiB), as InnoDB
    /// extends a tablespace. On a full disk it tries for exactly the page, then fails
    /// with the OS error: the statement that wanted the page gets it, while every page
    /// already created stays writable.
    fn reserve_page(&self, page_no: u32, page_size: usize) -> io::Result<()> {
        let ps = page_size as u64;
        let need = (page_no as u64 + 1) * ps;
        if need <= self.reserved.load(Ordering::Acquire) {
            return Ok(());
        }
        let _g = self.growing.lock();
        let have = self.reserved.load(Ordering::Acquire);
        if need <= have {
            return Ok(());
        }
        let step = (have / 8).clamp(64 * ps, 64 << 20);
        let want = need.max(have + step).div_ceil(ps) * ps;
        let got = crate::io::reserve_ahead(&*self.io, have, need, want)
            .map_err(|e| named(e, format!("extending {} to page {page_no}", self.name)))?;
        self.reserved.store(got, Ordering::Release);
        Ok(())
    }
}

/// The LRU list as index links over the frames; the head is the young end. `boundary`
/// is the first old frame (every frame from it to the tail is old), NIL when none.
struct Lru {
    prev: Vec<usize>,
    next: Vec<usize>,
    in_list: Vec<bool>,
    head: usize,
    tail: usize,
    boundary: usize,
    len: usize,
    old_len: usize,
}

impl Lru {
    fn new(n: usize) -> Lru {
        Lru {
            prev: vec![NIL; n],
            next: vec![NIL; n],
            in_list: vec![false; n],
            head: NIL,
            tail: NIL,
            boundary: NIL,
            len: 0,
            old_len: 0,
        }
    }

    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        if p != NIL {
            self.next[p] = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.prev[n] = p;
        } else {
            self.tail = p;
        }
        self.prev[i] = NIL;
        self.next[i] = NIL;
        self.in_list[i] = false;
        self.len -= 1;
    }

    /// Links `i` before `at`, or at the tail when `at` is NIL.
    fn link_before(&mut self, i: usize, at: usize) {
        debug_assert!(!self.in_list[i], "frame {i} linked twice");
        let p = if at == NIL { self.tail } else { self.prev[at] };
        self.prev[i] = p;
        self.next[i] = at;
        if p != NIL {
            self.next[p] = i;
        } else {
            self.head = i;
        }
        if at != NIL {
            self.prev[at] = i;
        } else {
            self.tail = i;
        }
        self.in_list[i] = true;
        self.len += 1;
    }
}

struct CleanerSignal {
    pending: Mutex<bool>,
    cv: Condvar,
}

impl CleanerSignal {
    fn wake(&self) {
        *self.pending.lock() = true;
        self.cv.notify_all();
    }
}

struct Inner {
    page_size: usize,
    old_pct: usize,
    old_time_ms: u64,
    epoch: Instant,
    frames: Vec<Arc<Frame>>,
    shards: Box<[Shard]>,
    spaces: Latch<HashMap<u32, Arc<Space>>>,
    next_space_gen: AtomicU64,
    free: LatchMutex<Vec<usize>>,
    lru: LatchMutex<Lru>,
    /// Young sublist length and insertions at the head, readable without the LRU lock.
    young_len: AtomicUsize,
    young_clock: AtomicU64,
    flush_list: Arc<FlushList>,
    wal_hook: Latch<Option<Arc<WalHook>>>,
    /// The highest lsn the hook has confirmed durable; the log only grows, so lower
    /// page LSNs need no call.
    wal_durable: AtomicU64,
    reads: AtomicU64,
    pages_written: AtomicU64,
    evictions: AtomicU64,
    cleaner: Arc<CleanerSignal>,
    policy: Arc<SpinPolicy>,
}

/// The buffer pool; share it as `Arc<BufferPool>`. Dropping it writes nothing: at
/// shutdown the engine calls [`BufferPool::flush_older_than`] with `u64::MAX` first.
pub struct BufferPool {
    inner: Arc<Inner>,
}

/// The background page cleaner; dropping the handle stops the thread.
pub struct PageCleaner {
    stop: Arc<AtomicBool>,
    signal: Arc<CleanerSignal>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for PageCleaner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.signal.wake();
        if let Some(t) = self.thread.take() {
            // A panicked cleaner has nothing left to stop.
            let _ = t.join();
        }
    }
}

fn named(e: io::Error, what: String) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl BufferPool {
    /// A pool for `cfg`. Out-of-range values are brought into range (the page size to
    /// a power of two in 4096..=65536, old_blocks_pct to 5..=95, at least
    /// [`MIN_FRAMES`] frames); [`BufferPool::try_new`] rejects them instead.
    pub fn new(cfg: PoolConfig) -> BufferPool {
        let page_size = cfg
            .page_size
            .clamp(MIN_PAGE_SIZE, MAX_PAGE_SIZE)
            .next_power_of_two();
        let n = (cfg.size_bytes / page_size).max(MIN_FRAMES);
        let policy = cfg.latch_policy;
        let flush_list = Arc::new(FlushList {
            set: LatchMutex::with_policy(policy.clone(), BTreeSet::new()),
        });
        let frames = (0..n)
            .map(|idx| {
                Arc::new(Frame {
                    idx,
                    id: AtomicU64::new(NO_PAGE),
                    space_gen: AtomicU64::new(0),
                    pin: AtomicU32::new(0),
                    page: Arc::new(Latch::with_policy(policy.clone(), PageBuf::new(page_size))),
                    oldest_mod: AtomicU64::new(CLEAN),
                    old: AtomicBool::new(false),
                    first_access: AtomicU64::new(0),
                    young_stamp: AtomicU64::new(0),
                    flush_list: flush_list.clone(),
                })
            })
            .collect();
        BufferPool {
            inner: Arc::new(Inner {
                page_size,
                old_pct: cfg.old_blocks_pct.clamp(5, 95) as usize,
                old_time_ms: cfg.old_blocks_time_ms as u64,
                epoch: Instant::now(),
                frames,
                shards: (0..SHARDS).map(|_| Shard::new(&policy)).collect(),
                spaces: Latch::with_policy(policy.clone(), HashMap::new()),
                next_space_gen: AtomicU64::new(1),
                free: LatchMutex::with_policy(policy.clone(), (0..n).rev().collect()),
                lru: LatchMutex::with_policy(policy.clone(), Lru::new(n)),
                young_len: AtomicUsize::new(0),
                young_clock: AtomicU64::new(0),
                flush_list,
                wal_hook: Latch::with_policy(policy.clone(), None),
                wal_durable: AtomicU64::new(0),
                reads: AtomicU64::new(0),
                pages_written: AtomicU64::new(0),
                evictions: AtomicU64::new(0),
                cleaner: Arc::new(CleanerSignal {
                    pending: Mutex::new(false),
                    cv: Condvar::new(),
                }),
                policy,
            }),
        }
    }

    /// As [`BufferPool::new`], but a page size that is not a power of two in
    /// 4096..=65536 or an old_blocks_pct outside 5..=95 is an error.
    pub fn try_new(cfg: PoolConfig) -> io::Result<BufferPool> {
        if !cfg.page_size.is_power_of_two()
            || !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&cfg.page_size)
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "innodb_page_size {} is not a power of two in 4096..=65536",
                    cfg.page_size
                ),
            ));
        }
        if !(5..=95).contains(&cfg.old_blocks_pct) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "innodb_old_blocks_pct {} is not in 5..=95",
                    cfg.old_blocks_pct
                ),
            ));
        }
        Ok(BufferPool::new(cfg))
    }

    pub fn page_size(&self) -> usize {
        self.inner.page_size
    }

    /// The policy the pool's latches wait by (from [`PoolConfig::latch_policy`]).
    pub fn latch_policy(&self) -> &Arc<SpinPolicy> {
        &self.inner.policy
    }

    /// Number of frames.
    pub fn capacity(&self) -> usize {
        self.inner.frames.len()
    }

    /// The write-ahead rule: before a dirty page whose page LSN is L is written, the
    /// pool calls the hook with L and the hook must make the redo log durable up to L.
    /// Calls are skipped for an L at or below one the hook already confirmed.
    pub fn set_wal_hook(&self, f: Box<WalHook>) {
        *self.inner.wal_hook.write() = Some(Arc::from(f));
        self.inner.wal_durable.store(0, Ordering::SeqCst);
    }

    /// Opens a space to the pool. `name` (e.g. "db.t1") names it in errors. Adding a
    /// space that is open replaces its file handle and name and keeps its cached pages
    /// (they are written to the new handle); for a different file, drop it first.
    pub fn add_space(&self, space: u32, io: Arc<dyn FileIo>, name: String) {
        let mut spaces = self.inner.spaces.write();
        let (gen, high_water, unsynced) = match spaces.get(&space) {
            Some(s) => (
                s.gen,
                s.high_water.load(Ordering::Acquire),
                s.unsynced.load(Ordering::SeqCst),
            ),
            None => (
                self.inner.next_space_gen.fetch_add(1, Ordering::Relaxed),
                0,
                false,
            ),
        };
        // What the file already holds has its blocks (unless sparse, which only a
        // crash mid-extension or an outside tool leaves; growth reserves from here).
        let reserved = io.len().unwrap_or(0);
        spaces.insert(
            space,
            Arc::new(Space {
                io,
                name,
                gen,
                high_water: AtomicU32::new(high_water),
                unsynced: AtomicBool::new(unsynced),
                reserved: AtomicU64::new(reserved),
                growing: Mutex::new(()),
            }),
        );
    }

    /// Forgets a space: its cached pages are discarded without being written (the file
    /// is being dropped or truncated). The engine must have stopped using the space;
    /// a page still fixed is discarded when it is unfixed.
    pub fn drop_space(&self, space: u32) {
        self.inner.drop_space(space)
    }

    /// The space's size in pages: its file's length, or the pages created in the pool
    /// and not yet written if they reach further.
    pub fn space_pages(&self, space: u32) -> u32 {
        let Some(s) = self.inner.spaces.read().get(&space).cloned() else {
            return 0;
        };
        let file =
            s.io.len()
                .map(|l| (l / self.inner.page_size as u64).min(u32::MAX as u64) as u32)
                .unwrap_or(0);
        file.max(s.high_water.load(Ordering::Acquire))
    }

    /// Fixes the page and takes its latch shared, reading and verifying it first if it
    /// is not cached. A page that fails verification is an `InvalidData` error naming
    /// the space and page.
    pub fn read(&self, id: PageId) -> io::Result<PageRead> {
        // SAFETY (both holds): the pin `fix` returns with the hold keeps the frame,
        // and so its latch, alive; `PageRead` drops the hold before the pin.
        let (pin, guard, _) = self.inner.fix(
            id,
            true,
            |p| unsafe { p.hold_shared() },
            |w| unsafe { ArcLatchRead::into_hold(ArcLatchWrite::downgrade(w)) },
        )?;
        Ok(PageRead { guard, pin, id })
    }

    /// As [`BufferPool::read`], with the latch exclusive.
    pub fn write(&self, id: PageId) -> io::Result<PageWrite> {
        let (pin, guard, _) = self.inner.fix(id, true, |p| p.write_arc(), |g| g)?;
        Ok(PageWrite { guard, pin, id })
    }

    /// For crash recovery only: the page X-latched, read without refusing a bad
    /// checksum (a torn page about to be overwritten by a full image from the log).
    /// The flag says whether it verified.
    pub fn write_unverified(&self, id: PageId) -> io::Result<(PageWrite, bool)> {
        let (pin, guard, ok) = self.inner.fix(id, false, |p| p.write_arc(), |g| g)?;
        Ok((PageWrite { guard, pin, id }, ok))
    }

    /// X-latches a page being created: not read from its file, zeroed but for its
    /// space id and page number. Grows the space's high-water mark.
    pub fn create(&self, id: PageId) -> io::Result<PageWrite> {
        let (pin, guard) = self.inner.create(id)?;
        Ok(PageWrite { guard, pin, id })
    }

    /// Writes every dirty page whose oldest modification is below `lsn` (all of them
    /// for u64::MAX), honouring the WAL hook, in page order per space, then fsyncs
    /// every file written since its last fsync. The caller must hold no page latch.
    pub fn flush_older_than(&self, lsn: u64) -> io::Result<()> {
        self.inner.flush_older_than(lsn)
    }

    /// Fsyncs every space written since its last fsync. A checkpoint reads
    /// [`BufferPool::oldest_dirty_lsn`] first and calls this after, so pages written
    /// (and so no longer dirty) in between are durable before the checkpoint is.
    pub fn sync_spaces(&self) -> io::Result<()> {
        self.inner.sync_spaces()
    }

    /// The smallest oldest-modification lsn of the dirty pages, None when none is.
    pub fn oldest_dirty_lsn(&self) -> Option<u64> {
        self.inner
            .flush_list
            .set
            .lock()
            .first()
            .map(|&(lsn, _)| lsn)
    }

    /// Counters and gauges; the gauges take the pool's list locks briefly.
    pub fn stats(&self) -> PoolStats {
        let i = &self.inner;
        let mut s = PoolStats {
            pages_total: i.frames.len() as u64,
            pages_free: i.free.lock().len() as u64,
            pages_data: i.lru.lock().len as u64,
            pages_dirty: i.flush_list.set.lock().len() as u64,
            reads: i.reads.load(Ordering::Relaxed),
            pages_written: i.pages_written.load(Ordering::Relaxed),
            evictions: i.evictions.load(Ordering::Relaxed),
            ..PoolStats::default()
        };
        for sh in i.shards.iter() {
            s.read_requests += sh.read_requests.load(Ordering::Relaxed);
            s.young_made += sh.young_made.load(Ordering::Relaxed);
            s.not_young += sh.not_young.load(Ordering::Relaxed);
        }
        s
    }

    /// Starts the page cleaner: every ~100 ms, or when a thread finds no clean victim,
    /// it writes the dirty pages near the LRU tail (when free frames run short) and,
    /// while more than [`MAX_DIRTY_PCT`]% of the frames are dirty, the oldest dirty
    /// pages. It holds the pool weakly: it stops when the pool or the handle is dropped.
    pub fn start_page_cleaner(self: &Arc<Self>) -> PageCleaner {
        let stop = Arc::new(AtomicBool::new(false));
        let signal = self.inner.cleaner.clone();
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let (stop2, signal2) = (stop.clone(), signal.clone());
        let thread = std::thread::Builder::new()
            .name("page-cleaner".into())
            .spawn(move || loop {
                {
                    let mut pending = signal2.pending.lock();
                    if !*pending {
                        signal2.cv.wait_for(&mut pending, CLEANER_INTERVAL);
                    }
                    *pending = false;
                }
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Some(inner) = weak.upgrade() else { break };
                // A failed write leaves its pages dirty for the next pass (checkpoints
                // report the error); a panic (a bug) must not end the cleaner for good,
                // or the pool would fill with dirty pages.
                let pass = std::panic::AssertUnwindSafe(|| inner.clean_pass());
                if std::panic::catch_unwind(pass).is_err() {
                    strata_types::log_error!("page cleaner: a pass panicked; retrying in 1s");
                    std::thread::sleep(Duration::from_secs(1));
                }
            })
            .ok();
        PageCleaner {
            stop,
            signal,
            thread,
        }
    }
}

impl Inner {
    fn shard(&self, key: u64) -> &Shard {
        &self.shards[(mix(key) >> 32) as usize % SHARDS]
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64 + 1
    }

    fn space(&self, space: u32) -> io::Result<Arc<Space>> {
        self.spaces.read().get(&space).cloned().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("space {space} is not open in the buffer pool"),
            )
        })
    }

    fn check_id(id: PageId) -> io::Result<u64> {
        let key = id.key();
        if key == NO_PAGE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "page id (4294967295, 4294967295) is reserved",
            ));
        }
        Ok(key)
    }

    /// Looks the page up and, if cached, pins and latches it with `latch`.
    fn try_hit<G>(
        &self,
        key: u64,
        latch: &impl Fn(&Arc<Latch<PageBuf>>) -> G,
    ) -> Option<(Pinned, G)> {
        let shard = self.shard(key);
        loop {
            let frame = {
                let map = shard.map.read();
                let &i = map.get(&key)?;
                let f = &self.frames[i];
                // Pinning under the shard lock is what keeps an evictor (which needs
                // the lock for writing) from taking the frame between lookup and pin.
                if !f.try_pin() {
                    drop(map);
                    std::thread::yield_now();
                    continue;
                }
                f.clone()
            };
            let pin = Pinned(frame);
            let g = latch(&pin.0.page);
            if pin.0.id.load(Ordering::Acquire) != key {
                // The load we waited for failed; look again (and load it ourselves).
                continue;
            }
            self.on_access(&pin.0, shard);
            return Some((pin, g));
        }
    }

    /// The hit path's LRU maintenance; see the module comment.
    fn on_access(&self, f: &Frame, shard: &Shard) {
        if f.old.load(Ordering::Relaxed) {
            let first = f.first_access.load(Ordering::Relaxed);
            if first != 0 && self.now_ms().saturating_sub(first) < self.old_time_ms {
                shard.not_young.fetch_add(1, Ordering::Relaxed);
                return;
            }
            let mut l = self.lru.lock();
            if l.in_list[f.idx] && f.old.load(Ordering::Relaxed) {
                self.lru_remove(&mut l, f.idx);
                self.lru_add(&mut l, f.idx, false);
                shard.young_made.fetch_add(1, Ordering::Relaxed);
            }
        } else if self.drifted(f) {
            let mut l = self.lru.lock();
            if l.in_list[f.idx] && !f.old.load(Ordering::Relaxed) && self.drifted(f) {
                self.lru_remove(&mut l, f.idx);
                self.lru_add(&mut l, f.idx, false);
            }
        }
    }

    /// Whether a young page has probably left the first quarter of the young sublist.
    fn drifted(&self, f: &Frame) -> bool {
        let since = self
            .young_clock
            .load(Ordering::Relaxed)
            .wrapping_sub(f.young_stamp.load(Ordering::Relaxed));
        since > (self.young_len.load(Ordering::Relaxed) / 4) as u64
    }

    fn fix<G>(
        &self,
        id: PageId,
        verify: bool,
        latch: impl Fn(&Arc<Latch<PageBuf>>) -> G,
        from_new: impl FnOnce(ArcLatchWrite<PageBuf>) -> G,
    ) -> io::Result<(Pinned, G, bool)> {
        let key = Self::check_id(id)?;
        let shard = self.shard(key);
        shard.read_requests.fetch_add(1, Ordering::Relaxed);
        loop {
            if let Some((pin, g)) = self.try_hit(key, &latch) {
                return Ok((pin, g, true));
            }
            let space = self.space(id.space)?;
            let Some((pin, mut w)) = self.claim_for(key, &space)? else {
                continue;
            };
            match self.load_page(&space, id, &mut w, verify) {
                Ok(verified) => {
                    self.reads.fetch_add(1, Ordering::Relaxed);
                    let mut l = self.lru.lock();
                    self.lru_add(&mut l, pin.0.idx, true);
                    drop(l);
                    return Ok((pin, from_new(w), verified));
                }
                Err(e) => {
                    {
                        let mut map = shard.map.write();
                        if map.get(&key) == Some(&pin.0.idx) {
                            map.remove(&key);
                        }
                        pin.0.id.store(NO_PAGE, Ordering::Release);
                    }
                    drop(w);
                    let idx = pin.0.idx;
                    drop(pin);
                    // Threads that waited on the latch see NO_PAGE and retry; the
                    // frame is reclaimed from the free list once they unpin.
                    self.free.lock().push(idx);
                    return Err(e);
                }
            }
        }
    }

    /// Takes a free frame for the page `key`, X-latched and pinned once, published in
    /// the page table. None if another thread published the page first.
    #[allow(clippy::type_complexity)]
    fn claim_for(
        &self,
        key: u64,
        space: &Space,
    ) -> io::Result<Option<(Pinned, ArcLatchWrite<PageBuf>)>> {
        let i = self.get_free_frame()?;
        let f = self.frames[i].clone();
        // Nobody else pins an owned frame, so this latch is free.
        let w = f.page.write_arc();
        let mut map = self.shard(key).map.write();
        if map.contains_key(&key) {
            drop(map);
            drop(w);
            self.release_free(i);
            return Ok(None);
        }
        f.id.store(key, Ordering::Release);
        f.space_gen.store(space.gen, Ordering::Release);
        f.first_access.store(self.now_ms(), Ordering::Relaxed);
        // Owned -> pinned once, keeping any transient pins' increments.
        f.pin.fetch_sub(EVICTING - 1, Ordering::AcqRel);
        map.insert(key, i);
        drop(map);
        Ok(Some((Pinned(f), w)))
    }

    fn release_free(&self, i: usize) {
        let f = &self.frames[i];
        f.id.store(NO_PAGE, Ordering::Release);
        f.pin.fetch_sub(EVICTING, Ordering::Release);
        self.free.lock().push(i);
    }

    fn load_page(
        &self,
        space: &Space,
        id: PageId,
        buf: &mut [u8],
        verify: bool,
    ) -> io::Result<bool> {
        let off = id.page_no as u64 * self.page_size as u64;
        match space.io.read_at(buf, off) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                if id.page_no < space.high_water.load(Ordering::Acquire) {
                    // Created in the pool and discarded clean before it was written:
                    // still the fresh page it was created as.
                    buf.fill(0);
                    set_page_id(buf, id);
                    return Ok(true);
                }
                let pages = space
                    .io
                    .len()
                    .map(|l| l / self.page_size as u64)
                    .unwrap_or(0);
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "page {} of {}: past the end of the file ({pages} pages)",
                        id.page_no, space.name
                    ),
                ));
            }
            Err(e) => {
                return Err(named(
                    e,
                    format!("page {} of {}: read", id.page_no, space.name),
                ))
            }
        }
        let verified = match verify_page(buf, id.space, id.page_no) {
            Ok(()) => true,
            Err(msg) if verify => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("page {} of {}: {msg}", id.page_no, space.name),
                ))
            }
            Err(_) => false,
        };
        // A fresh all-zero page gets its id, as a created one does.
        set_page_id(buf, id);
        Ok(verified)
    }

    fn create(&self, id: PageId) -> io::Result<(Pinned, ArcLatchWrite<PageBuf>)> {
        let key = Self::check_id(id)?;
        let space = self.space(id.space)?;
        space.reserve_page(id.page_no, self.page_size)?;
        space
            .high_water
            .fetch_max(id.page_no.saturating_add(1), Ordering::AcqRel);
        let (pin, mut w) = loop {
            if let Some(hit) = self.try_hit(key, &|p: &Arc<Latch<PageBuf>>| p.write_arc()) {
                break hit;
            }
            if let Some((pin, w)) = self.claim_for(key, &space)? {
                let mut l = self.lru.lock();
                self.lru_add(&mut l, pin.0.idx, false);
                break (pin, w);
            }
        };
        w.fill(0);
        set_page_id(&mut w, id);
        Ok((pin, w))
    }

    // --- free frames and eviction ---

    fn claim_free(&self) -> Option<usize> {
        let mut free = self.free.lock();
        let mut busy = Vec::new();
        let mut got = None;
        while let Some(i) = free.pop() {
            // A frame can sit here still pinned by a thread that waited on a failed
            // load; it is taken once that thread lets go.
            if self.frames[i]
                .pin
                .compare_exchange(0, EVICTING, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                got = Some(i);
                break;
            }
            busy.push(i);
        }
        free.extend(busy);
        got
    }

    /// A frame owned for reuse (pin count EVICTING), from the free list or by
    /// evicting a page from the LRU tail.
    fn get_free_frame(&self) -> io::Result<usize> {
        let n = self.frames.len();
        let mut scratch: Option<PageBuf> = None;
        for attempt in 0..FREE_FRAME_ATTEMPTS {
            if let Some(i) = self.claim_free() {
                return Ok(i);
            }
            let depth = if attempt == 0 { VICTIM_SCAN_DEPTH } else { n };
            let (clean, dirty) = self.victims(depth);
            for i in clean {
                if self.try_evict(i) {
                    return Ok(i);
                }
            }
            for (i, key) in dirty {
                let buf = scratch.get_or_insert_with(|| PageBuf::new(self.page_size));
                self.flush_frame(i, key, false, buf)?;
                if self.try_evict(i) {
                    return Ok(i);
                }
            }
            self.cleaner.wake();
            if attempt < 10 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Err(io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("buffer pool too small: all {n} pages are in use"),
        ))
    }

    /// Unpinned frames near the LRU tail: clean ones, and dirty ones with their page.
    #[allow(clippy::type_complexity)]
    fn victims(&self, depth: usize) -> (Vec<usize>, Vec<(usize, u64)>) {
        let (mut clean, mut dirty) = (Vec::new(), Vec::new());
        let l = self.lru.lock();
        let mut c = l.tail;
        let mut seen = 0;
        while c != NIL && seen < depth && clean.len() < 4 {
            let f = &self.frames[c];
            if f.pin.load(Ordering::Acquire) == 0 {
                if !f.is_dirty() {
                    clean.push(c);
                } else if dirty.len() < 4 {
                    dirty.push((c, f.id.load(Ordering::Acquire)));
                }
            }
            c = l.prev[c];
            seen += 1;
        }
        (clean, dirty)
    }

    /// Takes an unpinned clean frame out of the page table and the LRU list, leaving
    /// it owned (EVICTING). False if it is pinned, dirty or already gone.
    fn try_evict(&self, i: usize) -> bool {
        let f = &self.frames[i];
        let key = f.id.load(Ordering::Acquire);
        let own = || {
            f.pin
                .compare_exchange(0, EVICTING, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        };
        if key == NO_PAGE {
            // A page of a dropped space, left in the list while it was fixed. A frame
            // of no page that is not in the list is free or being reused by another
            // thread (which read it from the list before us): not ours to take.
            if !own() {
                return false;
            }
            let mut l = self.lru.lock();
            if f.id.load(Ordering::Acquire) != NO_PAGE || !l.in_list[i] {
                drop(l);
                f.pin.fetch_sub(EVICTING, Ordering::Release);
                return false;
            }
            self.lru_remove(&mut l, i);
            drop(l);
            f.clear_dirty();
            return true;
        }
        let mut map = self.shard(key).map.write();
        if f.id.load(Ordering::Acquire) != key || map.get(&key) != Some(&i) || !own() {
            return false;
        }
        // Dirtying takes the X latch, so a pin; with none, this cannot change.
        if f.is_dirty() {
            f.pin.fetch_sub(EVICTING, Ordering::Release);
            return false;
        }
        map.remove(&key);
        f.id.store(NO_PAGE, Ordering::Release);
        drop(map);
        self.evictions.fetch_add(1, Ordering::Relaxed);
        let mut l = self.lru.lock();
        self.lru_remove(&mut l, i);
        true
    }

    fn drop_space(&self, space: u32) {
        self.spaces.write().remove(&space);
        for f in &self.frames {
            let key = f.id.load(Ordering::Acquire);
            if key == NO_PAGE || PageId::from_key(key).space != space {
                continue;
            }
            let mut map = self.shard(key).map.write();
            if f.id.load(Ordering::Acquire) != key {
                continue;
            }
            if map.get(&key) == Some(&f.idx) {
                map.remove(&key);
            }
            let owned = f
                .pin
                .compare_exchange(0, EVICTING, Ordering::Acquire, Ordering::Relaxed)
                .is_ok();
            f.id.store(NO_PAGE, Ordering::Release);
            drop(map);
            f.clear_dirty();
            if owned {
                let mut l = self.lru.lock();
                self.lru_remove(&mut l, f.idx);
                drop(l);
                f.pin.fetch_sub(EVICTING, Ordering::Release);
                self.free.lock().push(f.idx);
            }
            // Otherwise it stays in the LRU list as a frame of no page, and
            // try_evict reclaims it once unfixed.
        }
    }

    // --- the LRU list ---

    fn lru_remove(&self, l: &mut Lru, i: usize) {
        if !l.in_list[i] {
            return;
        }
        if self.frames[i].old.load(Ordering::Relaxed) {
            l.old_len -= 1;
            if l.boundary == i {
                l.boundary = l.next[i];
            }
        }
        l.unlink(i);
        self.young_len.store(l.len - l.old_len, Ordering::Relaxed);
    }

    /// Adds at the head of the old sublist (`old`) or of the whole list.
    fn lru_add(&self, l: &mut Lru, i: usize, old: bool) {
        let f = &self.frames[i];
        if old {
            l.link_before(i, l.boundary);
            l.boundary = i;
            l.old_len += 1;
            f.old.store(true, Ordering::Relaxed);
        } else {
            l.link_before(i, l.head);
            f.old.store(false, Ordering::Relaxed);
            let c = self.young_clock.fetch_add(1, Ordering::Relaxed) + 1;
            f.young_stamp.store(c, Ordering::Relaxed);
        }
        self.lru_rebalance(l);
    }

    /// Keeps the old sublist at old_pct% of the list, within a tolerance so one
    /// eviction and one insertion do not move the boundary back and forth.
    fn lru_rebalance(&self, l: &mut Lru) {
        let target = l.len * self.old_pct / 100;
        let tol = 1 + l.len / 64;
        while l.old_len + tol < target {
            let c = if l.boundary == NIL {
                l.tail
            } else {
                l.prev[l.boundary]
            };
            if c == NIL {
                break;
            }
            self.frames[c].old.store(true, Ordering::Relaxed);
            l.boundary = c;
            l.old_len += 1;
        }
        while l.old_len > target + tol && l.boundary != NIL {
            let b = l.boundary;
            self.frames[b].old.store(false, Ordering::Relaxed);
            l.boundary = l.next[b];
            l.old_len -= 1;
        }
        self.young_len.store(l.len - l.old_len, Ordering::Relaxed);
    }

    // --- writing pages ---

    fn wal(&self, lsn: u64) -> io::Result<()> {
        if lsn <= self.wal_durable.load(Ordering::Acquire) {
            return Ok(());
        }
        let hook = self.wal_hook.read().clone();
        if let Some(hook) = hook {
            hook(lsn)?;
            self.wal_durable.fetch_max(lsn, Ordering::AcqRel);
        }
        Ok(())
    }

    /// Writes frame `i` if it still holds page `key` and is dirty, under its S latch
    /// (only tried, unless `wait`, so an evictor never blocks on a latch). True if
    /// written.
    fn flush_frame(&self, i: usize, key: u64, wait: bool, scratch: &mut [u8]) -> io::Result<bool> {
        let f = &self.frames[i];
        if !f.try_pin() {
            return Ok(false);
        }
        let pin = Pinned(f.clone());
        if f.id.load(Ordering::Acquire) != key {
            return Ok(false);
        }
        let g = if wait {
            f.page.read()
        } else {
            match f.page.try_read() {
                Some(g) => g,
                None => return Ok(false),
            }
        };
        if !f.is_dirty() {
            return Ok(false);
        }
        if key == NO_PAGE {
            f.clear_dirty();
            return Ok(false);
        }
        let id = PageId::from_key(key);
        let space = self.spaces.read().get(&id.space).cloned();
        let Some(space) = space.filter(|s| s.gen == f.space_gen.load(Ordering::Acquire)) else {
            // Its space was dropped: the page is discarded, never written.
            f.clear_dirty();
            return Ok(false);
        };
        self.wal(page_lsn(&g))?;
        scratch.copy_from_slice(&g);
        set_page_id(scratch, id);
        seal_page(scratch);
        space
            .io
            .write_at(scratch, id.page_no as u64 * self.page_size as u64)
            .map_err(|e| named(e, format!("page {} of {}: write", id.page_no, space.name)))?;
        // Before the page reads clean, so a checkpoint that sees it clean syncs it.
        space.unsynced.store(true, Ordering::SeqCst);
        f.clear_dirty();
        drop(g);
        drop(pin);
        self.pages_written.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    /// Writes the given frames in page order (sequential I/O per space).
    fn flush_batch(&self, mut targets: Vec<(u64, usize)>, wait: bool) -> io::Result<()> {
        targets.sort_unstable();
        let mut scratch = PageBuf::new(self.page_size);
        for (key, i) in targets {
            self.flush_frame(i, key, wait, &mut scratch)?;
        }
        Ok(())
    }

    fn flush_older_than(&self, lsn: u64) -> io::Result<()> {
        let targets: Vec<(u64, usize)> = self
            .flush_list
            .set
            .lock()
            .iter()
            .take_while(|&&(l, _)| l < lsn || lsn == u64::MAX)
            .map(|&(_, i)| (self.frames[i].id.load(Ordering::Acquire), i))
            .collect();
        self.flush_batch(targets, true)?;
        self.sync_spaces()
    }

    fn sync_spaces(&self) -> io::Result<()> {
        let spaces: Vec<Arc<Space>> = self.spaces.read().values().cloned().collect();
        for s in spaces {
            if s.unsynced.swap(false, Ordering::SeqCst) {
                if let Err(e) = s.io.sync_data() {
                    s.unsynced.store(true, Ordering::SeqCst);
                    return Err(named(e, format!("fsync of {}", s.name)));
                }
            }
        }
        Ok(())
    }

    /// One round of the page cleaner. Errors are left for the foreground: the pages
    /// stay dirty, and the eviction or checkpoint that needs them written retries and
    /// reports to someone who can act.
    fn clean_pass(&self) {
        let n = self.frames.len();
        // innodb_lru_scan_depth's job: keep the tail clean for evictors. Only when there
        // are evictors to come, i.e. few free frames left (InnoDB's rule too): with a pool
        // larger than the data, "the tail" was half the data, and writing it every 100 ms
        // under oltp_update_index made six times MariaDB's page writes, on the disk the
        // commits were fsyncing.
        let depth = (n / 4).clamp(16, 1024);
        let tail: Vec<(u64, usize)> = if self.free.lock().len() >= depth {
            Vec::new()
        } else {
            let l = self.lru.lock();
            let mut out = Vec::new();
            let mut c = l.tail;
            let mut seen = 0;
            while c != NIL && seen < depth {
                let f = &self.frames[c];
                if f.pin.load(Ordering::Acquire) == 0 && f.is_dirty() {
                    out.push((f.id.load(Ordering::Acquire), c));
                }
                c = l.prev[c];
                seen += 1;
            }
            out
        };
        if !tail.is_empty() {
            let _ = self.flush_batch(tail, false);
        }
        let dirty = self.flush_list.set.lock().len();
        if dirty * 100 > n * MAX_DIRTY_PCT {
            let excess = dirty - n * DIRTY_LOW_WATER_PCT / 100;
            let oldest: Vec<(u64, usize)> = self
                .flush_list
                .set
                .lock()
                .iter()
                .take(excess)
                .map(|&(_, i)| (self.frames[i].id.load(Ordering::Acquire), i))
                .collect();
            let _ = self.flush_batch(oldest, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{MemFile, StdFile};

    const PS: usize = 4096;

    fn pool(frames: usize, time_ms: u32) -> Arc<BufferPool> {
        Arc::new(BufferPool::new(PoolConfig {
            size_bytes: frames * PS,
            page_size: PS,
            old_blocks_pct: 37,
            old_blocks_time_ms: time_ms,
            ..PoolConfig::default()
        }))
    }

    fn pid(page_no: u32) -> PageId {
        PageId::new(1, page_no)
    }

    fn put(w: &mut PageWrite, at: usize, v: u64) {
        w[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }

    fn get(p: &[u8], at: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&p[at..at + 8]);
        u64::from_le_bytes(b)
    }

    /// Creates `n` pages of space 1, page i holding i * 7 at byte 40, and flushes.
    fn fill(p: &BufferPool, n: u32) {
        for i in 0..n {
            let mut w = p.create(pid(i)).unwrap();
            put(&mut w, 40, i as u64 * 7);
            w.mark_dirty(i as u64 + 1, i as u64 + 2);
        }
        p.flush_older_than(u64::MAX).unwrap();
    }

    #[test]
    fn guards_are_send_and_pool_is_sync() {
        fn send<T: Send>() {}
        fn sync<T: Send + Sync>() {}
        send::<PageRead>();
        send::<PageWrite>();
        sync::<BufferPool>();
    }

    #[test]
    fn pages_survive_a_new_pool_over_the_same_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t1.ibd");
        let mut expect = Vec::new();
        {
            let p = pool(32, 1000);
            p.add_space(
                1,
                Arc::new(StdFile::open(&path, true).unwrap()),
                "db.t1".into(),
            );
            for i in 0..50u32 {
                let mut w = p.create(pid(i)).unwrap();
                for (j, b) in w[PAGE_HEADER_SIZE..].iter_mut().enumerate() {
                    *b = (i as usize * 31 + j) as u8;
                }
                w.mark_dirty(10 * i as u64, 10 * i as u64 + 5);
                expect.push(w[PAGE_HEADER_SIZE..].to_vec());
            }
            assert_eq!(p.space_pages(1), 50);
            p.flush_older_than(u64::MAX).unwrap();
            assert_eq!(p.oldest_dirty_lsn(), None);
        }
        let p = pool(32, 1000);
        p.add_space(
            1,
            Arc::new(StdFile::open(&path, false).unwrap()),
            "db.t1".into(),
        );
        assert_eq!(p.space_pages(1), 50);
        for i in 0..50u32 {
            let r = p.read(pid(i)).unwrap();
            assert_eq!(r.id(), pid(i));
            assert_eq!(&r[PAGE_HEADER_SIZE..], &expect[i as usize][..]);
            assert_eq!(page_lsn(&r), 10 * i as u64 + 5);
            assert_eq!(page_id_of(&r), pid(i));
        }
    }

    #[test]
    fn corruption_is_invalid_data_naming_space_and_page() {
        let file = Arc::new(MemFile::new());
        let p = pool(16, 1000);
        p.add_space(1, file.clone(), "db.t1".into());
        fill(&p, 5);
        let good = file.contents();
        drop(p);

        let mut flipped = good.clone();
        flipped[3 * PS + 100] ^= 0x40;
        let p = pool(16, 1000);
        p.add_space(1, Arc::new(MemFile::from_bytes(flipped)), "db.t1".into());
        let e = p.read(pid(3)).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let msg = e.to_string();
        assert!(
            msg.contains("page 3 of db.t1") && msg.contains("checksum mismatch"),
            "{msg}"
        );
        assert!(p.write(pid(3)).is_err(), "a failed load is not cached");
        assert_eq!(get(&p.read(pid(2)).unwrap(), 40), 14);
        // Recovery may still latch the torn page to overwrite it.
        let (w, ok) = p.write_unverified(pid(3)).unwrap();
        assert!(!ok);
        drop(w);

        // A valid page at the wrong place.
        let mut moved = good.clone();
        moved.copy_within(2 * PS..3 * PS, 4 * PS);
        let p = pool(16, 1000);
        p.add_space(1, Arc::new(MemFile::from_bytes(moved)), "db.t1".into());
        let msg = p.read(pid(4)).err().unwrap().to_string();
        assert!(
            msg.contains("page 4 of db.t1") && msg.contains("page 2"),
            "{msg}"
        );

        // An all-zero page is a fresh one; past the end is an error naming the page.
        let p = pool(16, 1000);
        p.add_space(
            1,
            Arc::new(MemFile::from_bytes(vec![0; 4 * PS])),
            "db.t1".into(),
        );
        let r = p.read(pid(2)).unwrap();
        assert_eq!(page_id_of(&r), pid(2));
        drop(r);
        let e = p.read(pid(9)).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(e.to_string().contains("page 9 of db.t1"), "{e}");
        assert!(p.read(PageId::new(5, 0)).is_err(), "unknown space");
    }

    #[test]
    fn wal_hook_runs_before_the_page_is_written() {
        let file = Arc::new(MemFile::new());
        let p = pool(16, 1000);
        p.add_space(1, file.clone(), "db.t1".into());
        let calls = Arc::new(Mutex::new(Vec::new()));
        let (c2, f2) = (calls.clone(), file.clone());
        p.set_wal_hook(Box::new(move |lsn| {
            // Nothing carrying this lsn is in the file yet.
            let img = f2.contents();
            for page in img.chunks(PS) {
                assert!(page_lsn(page) < lsn, "page written before the log");
            }
            c2.lock().push(lsn);
            Ok(())
        }));
        for (i, lsn) in [(0u32, 77u64), (1, 50), (2, 90)] {
            let mut w = p.create(pid(i)).unwrap();
            w.mark_dirty(lsn - 5, lsn);
        }
        p.flush_older_than(u64::MAX).unwrap();
        // Page order 0, 1, 2: 50 is already covered by 77.
        assert_eq!(*calls.lock(), vec![77, 90]);
        assert_eq!(p.stats().pages_written, 3);

        // A failing hook keeps the page from being written.
        p.set_wal_hook(Box::new(|_| Err(io::Error::other("log is broken"))));
        let mut w = p.write(pid(1)).unwrap();
        w.mark_dirty(100, 120);
        drop(w);
        let e = p.flush_older_than(u64::MAX).err().unwrap();
        assert!(e.to_string().contains("log is broken"));
        assert_eq!(p.oldest_dirty_lsn(), Some(100));
        assert_eq!(page_lsn(&file.contents()[PS..]), 50);
    }

    #[test]
    fn eviction_writes_back_and_reads_again() {
        let file = Arc::new(MemFile::new());
        let p = pool(16, 1000);
        p.add_space(1, file.clone(), "db.t1".into());
        for i in 0..200u32 {
            let mut w = p.create(pid(i)).unwrap();
            put(&mut w, 40, i as u64 * 3 + 1);
            w.mark_dirty(i as u64 + 1, i as u64 + 1);
        }
        assert_eq!(p.space_pages(1), 200);
        for round in 0..2 {
            for i in (0..200u32).rev() {
                let r = p.read(pid(i)).unwrap();
                assert_eq!(get(&r, 40), i as u64 * 3 + 1, "round {round} page {i}");
            }
        }
        let st = p.stats();
        assert!(
            st.evictions > 0 && st.pages_written >= 184 && st.reads > 0,
            "{st:?}"
        );
        assert_eq!(st.pages_total, 16);
        assert!(st.pages_data <= 16);
    }

    #[test]
    fn midpoint_insertion_keeps_the_hot_set_through_a_scan() {
        let p = pool(64, 0);
        p.add_space(1, Arc::new(MemFile::new()), "db.t1".into());
        fill(&p, 400);
        let hot = 0..16u32;
        for _ in 0..5 {
            for i in hot.clone() {
                p.read(pid(i)).unwrap();
            }
        }
        assert!(p.stats().young_made >= 16, "{:?}", p.stats());
        for i in 100..400u32 {
            assert_eq!(get(&p.read(pid(i)).unwrap(), 40), i as u64 * 7);
        }
        let before = p.stats().reads;
        for i in hot.clone() {
            p.read(pid(i)).unwrap();
        }
        assert_eq!(p.stats().reads, before, "a scan evicted the hot set");

        // With a long old_blocks_time the scan's second touches do not promote either.
        let p = pool(64, 60_000);
        p.add_space(1, Arc::new(MemFile::new()), "db.t1".into());
        fill(&p, 200);
        // Pages 0..100 were evicted while the later ones were created: each is read
        // into the old sublist and touched again at once.
        for i in 0..100u32 {
            p.read(pid(i)).unwrap();
            p.read(pid(i)).unwrap();
        }
        let st = p.stats();
        assert!(st.not_young >= 100 && st.young_made == 0, "{st:?}");
    }

    #[test]
    fn concurrent_readers_and_writers_keep_counts() {
        let p = pool(16, 0);
        let file = Arc::new(MemFile::new());
        p.add_space(1, file.clone(), "db.t1".into());
        let pages = 40u32;
        fill(&p, pages);
        let lsn = Arc::new(AtomicU64::new(1000));
        let _cleaner = p.start_page_cleaner();
        let threads: Vec<_> = (0..8u64)
            .map(|t| {
                let (p, lsn) = (p.clone(), lsn.clone());
                std::thread::spawn(move || {
                    let mut mine = 0u64;
                    for k in 0..600u64 {
                        let page = pid(((k * 13 + t * 7) % pages as u64) as u32);
                        if (k + t) % 3 == 0 {
                            let mut w = p.write(page).unwrap();
                            let v = get(&w, 48);
                            put(&mut w, 48, v + 1);
                            let end = lsn.fetch_add(10, Ordering::SeqCst) + 10;
                            w.mark_dirty(end - 10, end);
                            mine += 1;
                        } else {
                            let r = p.read(page).unwrap();
                            assert_eq!(page_id_of(&r), page);
                            assert_eq!(get(&r, 40), page.page_no as u64 * 7);
                        }
                        if k % 100 == 0 && t == 0 {
                            p.flush_older_than(u64::MAX).unwrap();
                        }
                    }
                    mine
                })
            })
            .collect();
        let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        let sum: u64 = (0..pages).map(|i| get(&p.read(pid(i)).unwrap(), 48)).sum();
        assert_eq!(sum, total);
        p.flush_older_than(u64::MAX).unwrap();
        let p2 = pool(16, 0);
        p2.add_space(
            1,
            Arc::new(MemFile::from_bytes(file.crash_image())),
            "db.t1".into(),
        );
        let sum2: u64 = (0..pages).map(|i| get(&p2.read(pid(i)).unwrap(), 48)).sum();
        assert_eq!(sum2, total);
    }

    #[test]
    fn failed_loads_under_concurrency_leak_no_frames() {
        let p = pool(16, 0);
        let file = Arc::new(MemFile::new());
        p.add_space(1, file.clone(), "db.t1".into());
        fill(&p, 40);
        let mut bad = file.contents();
        bad[5 * PS + 77] ^= 1;
        p.add_space(2, Arc::new(MemFile::from_bytes(bad)), "db.t2".into());
        let threads: Vec<_> = (0..6u64)
            .map(|t| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for k in 0..400u64 {
                        if (k + t) % 4 == 0 {
                            let e = p.read(PageId::new(2, 5)).err().unwrap();
                            assert!(e.to_string().contains("page 5 of db.t2"), "{e}");
                        } else {
                            let page = pid(((k * 11 + t) % 40) as u32);
                            assert_eq!(get(&p.read(page).unwrap(), 40), page.page_no as u64 * 7);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // Every frame can still be had at once.
        let held: Vec<PageWrite> = (100..116).map(|i| p.create(pid(i)).unwrap()).collect();
        drop(held);
    }

    #[test]
    fn an_all_pinned_pool_is_an_error_not_a_hang() {
        let p = pool(16, 1000);
        p.add_space(1, Arc::new(MemFile::new()), "db.t1".into());
        let held: Vec<PageWrite> = (0..16).map(|i| p.create(pid(i)).unwrap()).collect();
        let e = p.create(pid(16)).err().unwrap();
        assert!(
            e.to_string()
                .contains("buffer pool too small: all 16 pages are in use"),
            "{e}"
        );
        assert!(p.read(pid(20)).is_err());
        drop(held);
        p.create(pid(16)).unwrap();
    }

    #[test]
    fn o_direct_file_works() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.ibd");
        let f = match StdFile::open_direct(&path, true) {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                eprintln!("skipping: the filesystem refuses O_DIRECT");
                return;
            }
            Err(e) => panic!("open: {e}"),
        };
        let p = pool(16, 1000);
        p.add_space(1, Arc::new(f), "db.t".into());
        match (|| -> io::Result<()> {
            for i in 0..40u32 {
                let mut w = p.create(pid(i))?;
                put(&mut w, 40, i as u64 + 9);
                w.mark_dirty(1, 2);
            }
            p.flush_older_than(u64::MAX)
        })() {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                eprintln!("skipping: the filesystem refuses O_DIRECT writes");
                return;
            }
            Err(e) => panic!("{e}"),
        }
        drop(p);
        let p = pool(16, 1000);
        p.add_space(
            1,
            Arc::new(StdFile::open_direct(&path, false).unwrap()),
            "db.t".into(),
        );
        for i in 0..40u32 {
            assert_eq!(get(&p.read(pid(i)).unwrap(), 40), i as u64 + 9);
        }
    }

    #[test]
    fn oldest_dirty_lsn_and_flush_older_than() {
        let file = Arc::new(MemFile::new());
        let p = pool(16, 1000);
        p.add_space(1, file.clone(), "db.t1".into());
        assert_eq!(p.oldest_dirty_lsn(), None);
        for (i, start) in [(0u32, 30u64), (1, 10), (2, 20)] {
            let mut w = p.create(pid(i)).unwrap();
            w.mark_dirty(start, start + 5);
        }
        assert_eq!(p.oldest_dirty_lsn(), Some(10));
        // A second change keeps the first change's lsn.
        let mut w = p.write(pid(1)).unwrap();
        w.mark_dirty(40, 45);
        drop(w);
        assert_eq!(p.oldest_dirty_lsn(), Some(10));
        assert_eq!(p.stats().pages_dirty, 3);

        p.flush_older_than(20).unwrap();
        assert_eq!(p.oldest_dirty_lsn(), Some(20));
        assert_eq!(p.stats().pages_written, 1);
        assert_eq!(page_lsn(&file.crash_image()[PS..2 * PS]), 45, "synced");

        p.flush_older_than(21).unwrap();
        assert_eq!(p.oldest_dirty_lsn(), Some(30));
        p.flush_older_than(u64::MAX).unwrap();
        assert_eq!(p.oldest_dirty_lsn(), None);
        assert_eq!(p.stats().pages_dirty, 0);
        assert_eq!(p.stats().pages_written, 3);
    }

    #[test]
    fn drop_space_discards_without_writing() {
        let file = Arc::new(MemFile::new());
        let p = pool(16, 1000);
        p.add_space(1, file.clone(), "db.t1".into());
        fill(&p, 3);
        let held = p.read(pid(0)).unwrap();
        let mut w = p.write(pid(1)).unwrap();
        put(&mut w, 40, 999);
        w.mark_dirty(500, 501);
        drop(w);
        let before = file.contents();
        p.drop_space(1);
        assert_eq!(p.oldest_dirty_lsn(), None);
        assert!(p.read(pid(1)).is_err());
        drop(held);
        // The same id over a new file sees the new file only.
        let file2 = Arc::new(MemFile::new());
        p.add_space(1, file2.clone(), "db.t1".into());
        assert_eq!(p.space_pages(1), 0);
        p.flush_older_than(u64::MAX).unwrap();
        assert_eq!(file.contents(), before);
        assert!(file2.contents().is_empty());
        // Every frame is usable again.
        let held: Vec<PageWrite> = (0..16).map(|i| p.create(pid(i)).unwrap()).collect();
        drop(held);
    }

    #[test]
    fn page_cleaner_writes_dirty_pages_in_the_background() {
        let p = pool(16, 1000);
        let file = Arc::new(MemFile::new());
        p.add_space(1, file.clone(), "db.t1".into());
        let cleaner = p.start_page_cleaner();
        for i in 0..16u32 {
            let mut w = p.create(pid(i)).unwrap();
            w.mark_dirty(1, 2);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while p.stats().pages_dirty * 100 > 16 * MAX_DIRTY_PCT as u64 {
            assert!(Instant::now() < deadline, "{:?}", p.stats());
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(cleaner);
        assert!(p.stats().pages_written > 0);
    }

    #[test]
    fn the_lru_tail_is_cleaned_only_when_free_frames_run_short() {
        let p = pool(256, 1000);
        p.add_space(1, Arc::new(MemFile::new()), "db.t1".into());
        for i in 0..16u32 {
            let mut w = p.create(pid(i)).unwrap();
            w.mark_dirty(1, 2);
        }
        // 240 free frames: nobody will need to evict, so nothing is written.
        p.inner.clean_pass();
        assert_eq!(p.stats().pages_dirty, 16);
        assert_eq!(p.stats().pages_written, 0);
        // 16 free frames left, fewer than the scan depth (64): the tail, where the 16
        // dirty pages are, is written for the evictors to come.
        for i in 16..240u32 {
            drop(p.create(pid(i)).unwrap());
        }
        p.inner.clean_pass();
        assert_eq!(p.stats().pages_dirty, 0, "{:?}", p.stats());
    }

    #[test]
    fn header_helpers() {
        let mut page = vec![0u8; PS];
        assert!(verify_page(&page, 3, 9).is_ok(), "all zero is fresh");
        set_page_id(&mut page, PageId::new(3, 9));
        set_page_lsn(&mut page, 1234);
        seal_page(&mut page);
        assert!(verify_page(&page, 3, 9).is_ok());
        assert_eq!(page_lsn(&page), 1234);
        assert!(verify_page(&page, 3, 8)
            .unwrap_err()
            .contains("expected space 3 page 8"));
        page[PS - 1] = 1;
        assert!(verify_page(&page, 3, 9)
            .unwrap_err()
            .contains("checksum mismatch"));
        assert!(verify_page(&page[..8], 3, 9).is_err());
    }
}
