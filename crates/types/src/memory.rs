//! The server's memory accounting and its one budget (`--max-memory`).
//!
//! Every component that holds memory in proportion to configuration or to work reports
//! its bytes here, per [`Component`]: the fixed pools (buffer pool, key cache) once when
//! they are sized, and query working memory (sorts, grouping, DISTINCT, hash joins,
//! window partitions, materialised derived tables and result sets) through a [`Grant`]
//! that grows in steps as the operator's rows grow. `information_schema.STRATA_MEMORY`
//! shows the current and high-water bytes of each component; the process total is
//! measured by the allocator's own statistics and the kernel's RSS, not here.
//!
//! Why explicit accounting at the big allocation sites rather than a counting
//! `#[global_allocator]`: the budget must be *enforced* where the memory is requested,
//! by an operator that can spill instead (a counting allocator can only observe, and
//! failing an arbitrary `malloc` aborts the process), and a shared counter bumped on
//! every allocation costs a contended cache line on the point-select path. What the
//! grants do not cover (parse trees, small per-statement vectors) is bounded by the
//! statement's size and is the "unaccounted" remainder shown beside RSS.
//!
//! The budget: [`set_budget`] is given the total (`max_memory`) and what the fixed pools
//! take; working memory may use the rest less a reserve per connection. A grant that
//! cannot grow makes its operator spill to `tmpdir`; a grant that cannot get even its
//! floor (the few KiB an operator needs to make progress) waits for other statements to
//! release theirs and, past [`WAIT`], fails the statement with error 3170 naming the
//! component — the server never allocates past its budget hoping the kernel agrees.

use crate::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// What holds memory, one row each in `information_schema.STRATA_MEMORY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    BufferPool,
    KeyCache,
    AdaptiveHash,
    Connections,
    Sort,
    Group,
    Join,
    Window,
    Derived,
    /// Subquery results held for the statement: IN-subquery sets and their hash sets,
    /// scalar and uncorrelated results, the correlated-subquery cache.
    Subquery,
    /// The rows INSERT … SELECT (and REPLACE … SELECT) reads before it writes any.
    InsertSelect,
    TempTable,
    IndexBuild,
    UndoVersions,
    /// Transactions' lists of their changes (and purge's), the part in memory.
    UndoChangeLists,
}

impl Component {
    pub const ALL: [Component; 15] = [
        Component::BufferPool,
        Component::KeyCache,
        Component::AdaptiveHash,
        Component::Connections,
        Component::Sort,
        Component::Group,
        Component::Join,
        Component::Window,
        Component::Derived,
        Component::Subquery,
        Component::InsertSelect,
        Component::TempTable,
        Component::IndexBuild,
        Component::UndoVersions,
        Component::UndoChangeLists,
    ];

    /// The EVENT_NAME shown for it (performance_schema's naming style).
    pub fn event_name(self) -> &'static str {
        match self {
            Component::BufferPool => "memory/btree/buffer_pool",
            Component::KeyCache => "memory/heap/key_cache",
            Component::AdaptiveHash => "memory/btree/adaptive_hash_index",
            Component::Connections => "memory/wire/connection_buffers",
            Component::Sort => "memory/sql/sort",
            Component::Group => "memory/sql/group_distinct",
            Component::Join => "memory/sql/join_buffer",
            Component::Window => "memory/sql/window_partition",
            Component::Derived => "memory/sql/derived_materialisation",
            Component::Subquery => "memory/sql/subquery_results",
            Component::InsertSelect => "memory/sql/insert_select_rows",
            Component::TempTable => "memory/sql/temporary_table",
            Component::IndexBuild => "memory/btree/index_build_sort",
            Component::UndoVersions => "memory/btree/undo_versions",
            Component::UndoChangeLists => "memory/btree/undo_change_lists",
        }
    }

    /// What a user calls it in an error message.
    pub fn describe(self) -> &'static str {
        match self {
            Component::BufferPool => "the buffer pool",
            Component::KeyCache => "the key cache",
            Component::AdaptiveHash => "the adaptive hash index",
            Component::Connections => "connection buffers",
            Component::Sort => "a sort",
            Component::Group => "GROUP BY / DISTINCT",
            Component::Join => "a join buffer",
            Component::Window => "a window partition",
            Component::Derived => "a derived table",
            Component::Subquery => "a subquery's result",
            Component::InsertSelect => "the rows of INSERT … SELECT",
            Component::TempTable => "a temporary table",
            Component::IndexBuild => "an index build",
            Component::UndoVersions => "old row versions",
            Component::UndoChangeLists => "transactions' change lists",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

const N: usize = Component::ALL.len();

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicUsize = AtomicUsize::new(0);
static CURRENT: [AtomicUsize; N] = [ZERO; N];
static HIGH: [AtomicUsize; N] = [ZERO; N];

/// Working memory granted now (the sum over the working components).
static WORKING: AtomicUsize = AtomicUsize::new(0);
/// The most working memory may reach; usize::MAX when no budget is set.
static WORKING_LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
static BUDGET: AtomicUsize = AtomicUsize::new(0);

/// Statements waiting for a floor sleep here until a grant is released.
static RELEASED: Mutex<u64> = Mutex::new(0);
static RELEASED_CV: Condvar = Condvar::new();

/// How long a statement waits for its floor before failing with 3170.
pub const WAIT: Duration = Duration::from_secs(10);

/// Working memory is granted in steps of this many bytes, so the shared counter is
/// touched once per step, not once per row.
pub const STEP: usize = 64 << 10;

/// Results smaller than this are held without a grant: each open connection's
/// statement allowance (part of its 320 KiB) covers them, so a small subquery run once
/// per outer row never touches the shared counter. Past it the whole result is granted.
pub const UNGRANTED: usize = STEP;

/// Records `bytes` more held by `c` (a fixed pool sized at startup or online).
pub fn add(c: Component, bytes: usize) {
    let now = CURRENT[c.index()].fetch_add(bytes, Ordering::Relaxed) + bytes;
    HIGH[c.index()].fetch_max(now, Ordering::Relaxed);
}

/// Records `bytes` fewer held by `c`.
pub fn sub(c: Component, bytes: usize) {
    CURRENT[c.index()].fetch_sub(bytes, Ordering::Relaxed);
}

/// Sets what `c` holds (a pool resized online).
pub fn set(c: Component, bytes: usize) {
    CURRENT[c.index()].store(bytes, Ordering::Relaxed);
    HIGH[c.index()].fetch_max(bytes, Ordering::Relaxed);
}

/// (component, current bytes, high-water bytes) for every component.
pub fn snapshot() -> Vec<(Component, usize, usize)> {
    Component::ALL
        .iter()
        .map(|&c| {
            (
                c,
                CURRENT[c.index()].load(Ordering::Relaxed),
                HIGH[c.index()].load(Ordering::Relaxed),
            )
        })
        .collect()
}

/// The budget (`max_memory`, 0 = none) and the working memory granted now and at most.
pub fn budget() -> (usize, usize, usize) {
    (
        BUDGET.load(Ordering::Relaxed),
        WORKING.load(Ordering::Relaxed),
        WORKING_LIMIT.load(Ordering::Relaxed),
    )
}

/// Sets the server's budget: `total` bytes in all, of which `reserved` are the fixed
/// pools and per-connection structures; working memory may use the rest.
/// Errors when the reserved part alone does not fit (checked at startup).
pub fn set_budget(total: usize, reserved: usize) -> std::result::Result<(), String> {
    if reserved >= total {
        return Err(format!(
            "max_memory {total} bytes is not larger than the pools and connections it must hold ({reserved} bytes)"
        ));
    }
    BUDGET.store(total, Ordering::Relaxed);
    WORKING_LIMIT.store(total - reserved, Ordering::Relaxed);
    Ok(())
}

/// Takes `want` bytes of working memory: all of it, or nothing. Growth beyond a
/// grant's floor may use only three quarters of the working memory: the last quarter is
/// kept for floors, so statements that start while others have grown still get the few
/// KiB they need to make progress (spilling) instead of waiting for them.
fn take(want: usize, growth: bool) -> bool {
    let limit = WORKING_LIMIT.load(Ordering::Relaxed);
    let limit = if growth { limit - limit / 4 } else { limit };
    let mut cur = WORKING.load(Ordering::Relaxed);
    loop {
        if cur.saturating_add(want) > limit {
            return false;
        }
        match WORKING.compare_exchange_weak(cur, cur + want, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => cur = now,
        }
    }
}

fn capacity_error(component: Component) -> Error {
    Error::MemoryCapacityExceeded {
        bytes: BUDGET.load(Ordering::Relaxed) as u64,
        what: component.describe().to_string(),
    }
}

/// [`take`]s `want` bytes, waiting up to [`WAIT`] for other statements to release
/// memory when there is no room; then 3170 naming `component`.
fn wait_to_take(component: Component, want: usize, growth: bool) -> Result<()> {
    if take(want, growth) {
        return Ok(());
    }
    let deadline = Instant::now() + WAIT;
    let mut seen = RELEASED.lock().map(|n| *n).unwrap_or(0);
    loop {
        if take(want, growth) {
            return Ok(());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(capacity_error(component));
        }
        let guard = RELEASED
            .lock()
            .map_err(|_| Error::Internal("memory lock".into()))?;
        if *guard == seen {
            let (guard, _) = RELEASED_CV
                .wait_timeout(guard, left.min(Duration::from_millis(100)))
                .map_err(|_| Error::Internal("memory lock".into()))?;
            seen = *guard;
        } else {
            seen = *guard;
        }
    }
}

fn give_back(bytes: usize) {
    if bytes == 0 {
        return;
    }
    WORKING.fetch_sub(bytes, Ordering::AcqRel);
    if let Ok(mut n) = RELEASED.lock() {
        *n = n.wrapping_add(1);
        RELEASED_CV.notify_all();
    }
}

/// An operator's working memory: bytes it may hold, taken from the global budget in
/// [`STEP`]s as its rows grow, up to its own share (`sort_buffer_size`,
/// `tmp_table_size`…). [`Grant::fits`] answers whether `bytes` in use may be held in
/// memory; false means spill. Dropping the grant returns its bytes.
pub struct Grant {
    component: Component,
    held: usize,
    share: usize,
}

impl Grant {
    /// A grant for `component` limited to `share` bytes, holding its floor (`floor`
    /// bytes, at most `share`) from the start: waits up to [`WAIT`] for other
    /// statements to release memory, then fails with 3170.
    pub fn new(component: Component, share: usize, floor: usize) -> Result<Grant> {
        let floor = floor.min(share);
        let mut g = Grant {
            component,
            held: 0,
            share,
        };
        if floor > 0 {
            wait_to_take(component, floor, false)?;
            g.hold(floor);
        }
        Ok(g)
    }

    /// A grant with no floor: for operators that can always spill from the first row.
    pub fn unbounded_floor(component: Component, share: usize) -> Grant {
        Grant {
            component,
            held: 0,
            share,
        }
    }

    fn hold(&mut self, bytes: usize) {
        self.held += bytes;
        add(self.component, bytes);
    }

    /// Whether `bytes` in use may stay in memory: within the share, and the budget has
    /// room for the step(s) beyond what is held. False: the caller spills.
    pub fn fits(&mut self, bytes: usize) -> bool {
        if bytes <= self.held {
            return true;
        }
        if bytes > self.share {
            return false;
        }
        let need = (bytes - self.held).div_ceil(STEP) * STEP;
        let need = need.min(self.share - self.held).max(bytes - self.held);
        if take(need, true) {
            self.hold(need);
            true
        } else {
            false
        }
    }

    /// Holds `bytes` in use, for memory its operator cannot spill (a subquery's result
    /// set, which expressions probe): grows like [`Grant::fits`], and when the budget
    /// has no room waits up to [`WAIT`] for other statements to release theirs, then
    /// fails with 3170 naming the component. Past the share it fails at once.
    pub fn need(&mut self, bytes: usize) -> Result<()> {
        if self.fits(bytes) {
            return Ok(());
        }
        if bytes > self.share {
            return Err(capacity_error(self.component));
        }
        let need = (bytes - self.held).div_ceil(STEP) * STEP;
        let need = need.min(self.share - self.held).max(bytes - self.held);
        wait_to_take(self.component, need, true)?;
        self.hold(need);
        Ok(())
    }

    /// Returns what is held beyond `bytes` (after a spill emptied the buffer), keeping
    /// at least the floor already taken when `keep_floor` bytes are given.
    pub fn shrink_to(&mut self, bytes: usize) {
        let keep = bytes.div_ceil(STEP) * STEP;
        if keep < self.held {
            let back = self.held - keep;
            self.held = keep;
            sub(self.component, back);
            give_back(back);
        }
    }

    /// Bytes held now.
    pub fn held(&self) -> usize {
        self.held
    }
}

impl Drop for Grant {
    fn drop(&mut self) {
        if self.held > 0 {
            sub(self.component, self.held);
            give_back(self.held);
        }
    }
}

/// The bytes malloc takes for a block of `n` bytes: glibc's chunk is the request plus
/// its 8-byte size word, rounded up to 16, and 32 at least; nothing for no block.
pub const fn malloc_block(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        let c = (n + 8 + 15) & !15;
        if c < 32 {
            32
        } else {
            c
        }
    }
}

/// The bytes a row held as `Vec<Value>` takes: its vector's block (`len` values; rows
/// are built at their length) and each string's block. A container adds its own slot
/// per row (24 bytes for a `Vec` of rows).
pub fn row_bytes(row: &[crate::Value]) -> usize {
    malloc_block(std::mem::size_of_val(row))
        + row.iter().map(crate::Value::heap_bytes).sum::<usize>()
}

/// What one open connection holds, measured on the 300-connection run of
/// docs/memory.md: its session and packet buffers on the heap (57 KiB idle, 74 KiB once
/// it has answered a query) and the pages of its thread's stack that statements touch
/// (up to 128 KiB under sorts, grouping and joins) — 192 KiB, charged from working
/// memory while the connection is open ([`ConnectionCharge`]).
pub const CONNECTION_RESERVE: usize = 192 << 10;

/// An open connection's share of the budget ([`CONNECTION_RESERVE`]), under
/// `memory/wire/connection_buffers`: taken from working memory when the connection is
/// accepted and given back when it closes — one atomic add per connection, nothing per
/// statement. Taken even when statements hold all of the working memory (the
/// connection's memory is real whether counted or not; `max_connections` bounds how
/// many there are, and statements then grow less and spill sooner).
pub struct ConnectionCharge(usize);

impl ConnectionCharge {
    pub fn new() -> ConnectionCharge {
        WORKING.fetch_add(CONNECTION_RESERVE, Ordering::AcqRel);
        add(Component::Connections, CONNECTION_RESERVE);
        ConnectionCharge(CONNECTION_RESERVE)
    }
}

impl Default for ConnectionCharge {
    fn default() -> Self {
        ConnectionCharge::new()
    }
}

impl Drop for ConnectionCharge {
    fn drop(&mut self) {
        sub(Component::Connections, self.0);
        give_back(self.0);
    }
}

/// The machine's memory as this process may use it: the cgroup limit when one is set
/// (v2 `memory.max`, v1 `memory.limit_in_bytes`), else physical memory.
pub fn available_memory() -> Option<u64> {
    let cgroup = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .filter_map(|p| std::fs::read_to_string(p).ok())
    .filter_map(|s| s.trim().parse::<u64>().ok())
    .find(|&v| v < (1 << 60));
    // SAFETY: sysconf has no preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    // SAFETY: as above.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let phys = (pages > 0 && page > 0).then(|| pages as u64 * page as u64);
    match (cgroup, phys) {
        (Some(c), Some(p)) => Some(c.min(p)),
        (c, p) => c.or(p),
    }
}

/// malloc's own figures (glibc's `mallinfo2`): bytes in use in blocks handed out, and
/// bytes it holds from the OS (arenas and mapped blocks) — the difference is freed memory
/// malloc keeps. Walks every arena under its lock: for `STRATA_MEMORY` only, never on a
/// statement's path. (0, 0) where the C library is not glibc.
pub fn heap() -> (u64, u64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 has no preconditions; it returns a plain struct.
        let m = unsafe { libc::mallinfo2() };
        ((m.uordblks + m.hblkhd) as u64, (m.arena + m.hblkhd) as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        (0, 0)
    }
}

/// The process's resident set in bytes (VmRSS) and its peak (VmHWM), from /proc.
pub fn rss() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[cfg(test)]
pub(crate) fn reset_for_test(limit: usize) {
    WORKING_LIMIT.store(limit, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test touches the global budget, so tests cannot race on it.
    #[test]
    fn grants_grow_in_steps_spill_past_share_and_wait_for_floor() {
        let base = WORKING.load(Ordering::Relaxed);
        reset_for_test(base + 4 * STEP);
        let mut g = Grant::new(Component::Sort, 3 * STEP, STEP).unwrap();
        assert_eq!(g.held(), STEP);
        assert!(g.fits(100));
        assert!(g.fits(STEP + 1));
        assert_eq!(g.held(), 2 * STEP);
        assert!(!g.fits(3 * STEP + 1), "past the share");
        // A second grant gets its floor, then the budget is gone.
        let mut h = Grant::new(Component::Group, 4 * STEP, STEP).unwrap();
        assert!(h.fits(STEP));
        assert!(!h.fits(2 * STEP), "budget exhausted: spill");
        g.shrink_to(0);
        assert_eq!(g.held(), 0);
        assert!(h.fits(2 * STEP));
        // A third statement waits for a floor and gets it when one is released.
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(h);
        });
        let started = Instant::now();
        let k = Grant::new(Component::Join, 4 * STEP, 3 * STEP).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(150));
        t.join().unwrap();
        drop(k);
        // Memory that cannot spill: `need` takes what is free, waits for a release
        // when nothing is, and refuses past its share at once.
        let mut m = Grant::unbounded_floor(Component::Subquery, 8 * STEP);
        m.need(2 * STEP).unwrap();
        let mut other = Grant::unbounded_floor(Component::Sort, STEP);
        assert!(other.fits(STEP));
        assert!(!m.fits(3 * STEP), "growth is held to three quarters");
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(other);
        });
        let started = Instant::now();
        m.need(3 * STEP).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(150));
        t.join().unwrap();
        assert!(m.need(9 * STEP).is_err(), "past the share");
        drop(m);
        drop(g);
        assert_eq!(WORKING.load(Ordering::Relaxed), base);
        reset_for_test(usize::MAX);
    }
}
