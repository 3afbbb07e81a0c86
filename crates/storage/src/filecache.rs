//! The open-file cache: MySQL's table cache at the level it matters for the operating
//! system, its file descriptors. Every table file (a heap table's data and index files,
//! a btree tablespace) is a [`CachedFile`]: a path plus the file while it is open. At
//! most `limit` of them are open at once (`table_open_cache` × 2, sized by the server
//! from `RLIMIT_NOFILE` as MySQL sizes it); opening one more first closes an unused one
//! chosen by a CLOCK sweep (an approximation of least recently used: each access sets
//! the file's reference bit, the sweep clears set bits and closes the first file it
//! finds clear). A closed file is reopened, with the same flags, by its next access.
//!
//! The hot path: an access to an open file takes that file's own read lock (shared by
//! every reader of the file, never a cache-wide lock), sets its reference bit only if it
//! is clear (so a file read by many threads is not written on every read) and counts a
//! hit in a striped counter. Only a miss takes the cache's mutex. A file is in use while
//! a reader holds its lock, so the sweep (which only *tries* the write lock) never closes
//! a file under an I/O: in-use files are the pinned ones.
//!
//! A file written since its last sync is synced before it is closed when it was opened
//! `durable` (btree tablespaces): a write-back error reported at close would otherwise
//! never reach the checkpoint that relies on it. Heap files (MyISAM: not crash-safe by
//! design) are closed without a sync, as MySQL's table cache closes MyISAM files.
//!
//! Memory maps: [`FileIo::map`] maps under the file's read lock, so the descriptor
//! cannot be closed (and its number reused) between choosing it and mapping; a mapping
//! stays valid after its descriptor is closed.

use crate::io::FileIo;
use crate::mmap::Mapping;
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering, RwLock, RwLockWriteGuard};
use std::cell::Cell;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak};

/// How a cached file is opened (and reopened).
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenMode {
    /// O_DIRECT (the buffer pool's pages are aligned).
    pub direct: bool,
    /// Sync before closing a file written since its last sync.
    pub durable: bool,
}

/// What the cache counts, as SHOW STATUS names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Files open now (`Open_files`).
    pub open_files: u64,
    /// Tables with at least one file open now (`Open_tables`).
    pub open_tables: u64,
    /// Times a table went from no open file to one, since start (`Opened_tables`).
    pub opened_tables: u64,
    /// Times a file was opened or reopened, since start (`Opened_files`).
    pub opened_files: u64,
    /// Accesses that found their file open (`Table_open_cache_hits`).
    pub hits: u64,
    /// Accesses that had to reopen their file (`Table_open_cache_misses`).
    pub misses: u64,
    /// Files closed to make room (`Table_open_cache_overflows`).
    pub overflows: u64,
}

const STRIPES: usize = 16;

/// A counter bumped by many threads: one cache line per stripe, each thread on its own
/// stripe, so a hit never writes a line another core is writing.
struct Striped([Padded; STRIPES]);

#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

impl Striped {
    fn new() -> Striped {
        Striped(std::array::from_fn(|_| Padded::default()))
    }

    fn add(&self) {
        thread_local! {
            static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
        }
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let i = STRIPE.with(|s| {
            if s.get() == usize::MAX {
                s.set(NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES);
            }
            s.get()
        });
        self.0[i].0.fetch_add(1, Ordering::Relaxed);
    }

    fn sum(&self) -> u64 {
        self.0.iter().map(|p| p.0.load(Ordering::Relaxed)).sum()
    }
}

/// The set of open files and its bound.
pub struct FileCache {
    limit: AtomicUsize,
    open: AtomicUsize,
    open_tables: AtomicUsize,
    opened_tables: AtomicU64,
    opened_files: AtomicU64,
    overflows: AtomicU64,
    hits: Striped,
    misses: AtomicU64,
    clock: Mutex<Clock>,
}

/// Every registered file (weakly: a dropped table's files leave by themselves) and the
/// sweep's position.
struct Clock {
    files: Vec<Weak<Slot>>,
    hand: usize,
}

/// A bound large enough that a process whose caller never sets one (tests, the
/// in-process bench) behaves as before the cache: MySQL's default `table_open_cache`
/// (4000) times two files per table.
pub const DEFAULT_LIMIT: usize = 8000;

impl FileCache {
    pub fn new(limit: usize) -> Arc<FileCache> {
        Arc::new(FileCache {
            limit: AtomicUsize::new(limit.max(1)),
            open: AtomicUsize::new(0),
            open_tables: AtomicUsize::new(0),
            opened_tables: AtomicU64::new(0),
            opened_files: AtomicU64::new(0),
            overflows: AtomicU64::new(0),
            hits: Striped::new(),
            misses: AtomicU64::new(0),
            clock: Mutex::new(Clock {
                files: Vec::new(),
                hand: 0,
            }),
        })
    }

    /// The process's cache, shared by every engine (descriptors are a process-wide
    /// resource).
    pub fn global() -> &'static Arc<FileCache> {
        static CACHE: OnceLock<Arc<FileCache>> = OnceLock::new();
        CACHE.get_or_init(|| FileCache::new(DEFAULT_LIMIT))
    }

    /// Sets how many files may be open at once; files over a lowered bound are closed by
    /// the next opens (or now, if none is in use).
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit.max(1), Ordering::Relaxed);
        self.make_room(0);
    }

    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            open_files: self.open.load(Ordering::Relaxed) as u64,
            open_tables: self.open_tables.load(Ordering::Relaxed) as u64,
            opened_tables: self.opened_tables.load(Ordering::Relaxed),
            opened_files: self.opened_files.load(Ordering::Relaxed),
            hits: self.hits.sum(),
            misses: self.misses.load(Ordering::Relaxed),
            overflows: self.overflows.load(Ordering::Relaxed),
        }
    }

    /// Opens `path` (which must exist) as a cached file of `table` (the files of one
    /// table share one [`TableFiles`], so open tables are counted as tables).
    pub fn open(
        self: &Arc<Self>,
        path: &Path,
        mode: OpenMode,
        table: &Arc<TableFiles>,
    ) -> io::Result<CachedFile> {
        let slot = Arc::new(Slot {
            path: path.to_path_buf(),
            mode,
            file: RwLock::new(None),
            referenced: AtomicBool::new(true),
            written: AtomicBool::new(false),
            table: table.clone(),
            cache: self.clone(),
        });
        {
            let mut g = slot.file.write();
            slot.fill(&mut g)?;
        }
        let mut clock = self.clock.lock();
        // Drop the entries of files gone since the last registration, now and then, so
        // the list stays proportional to the live files.
        if clock.files.len() >= 64 && clock.files.len().is_power_of_two() {
            clock.files.retain(|w| w.strong_count() > 0);
            clock.hand = 0;
        }
        clock.files.push(Arc::downgrade(&slot));
        Ok(CachedFile { slot })
    }

    /// Closes unused files until fewer than `limit - reserve` are open, or no unused
    /// file is left. Returns whether any was closed.
    fn make_room(&self, reserve: usize) -> bool {
        let limit = self.limit().saturating_sub(reserve);
        if self.open.load(Ordering::Relaxed) < limit.max(1) {
            return false;
        }
        let mut clock = self.clock.lock();
        let mut closed = false;
        // Two passes over every file: the first may only clear reference bits.
        let mut budget = clock.files.len() * 2 + 1;
        while self.open.load(Ordering::Relaxed) >= limit.max(1) && budget > 0 {
            budget -= 1;
            if clock.files.is_empty() {
                break;
            }
            let i = clock.hand % clock.files.len();
            clock.hand = i + 1;
            let Some(slot) = clock.files[i].upgrade() else {
                clock.files.swap_remove(i);
                continue;
            };
            if slot.referenced.swap(false, Ordering::Relaxed) {
                continue;
            }
            // A reader holds the lock: the file is in use (pinned); skip it.
            let Some(mut g) = slot.file.try_write() else {
                continue;
            };
            if g.is_some() {
                slot.close(&mut g, false);
                self.overflows.fetch_add(1, Ordering::Relaxed);
                closed = true;
            }
        }
        closed
    }
}

/// The files of one table, counted together: the table is open while any is.
#[derive(Default)]
pub struct TableFiles {
    open: AtomicUsize,
}

impl TableFiles {
    pub fn new() -> Arc<TableFiles> {
        Arc::new(TableFiles::default())
    }
}

struct Slot {
    path: PathBuf,
    mode: OpenMode,
    file: RwLock<Option<File>>,
    /// Set by each access, cleared by the sweep.
    referenced: AtomicBool,
    /// Written since the last sync (a durable file is synced before it is closed).
    written: AtomicBool,
    table: Arc<TableFiles>,
    cache: Arc<FileCache>,
}

impl Slot {
    fn reopen(&self) -> io::Result<File> {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true);
        if self.mode.direct {
            use std::os::unix::fs::OpenOptionsExt;
            #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(&self.path)
    }

    /// Opens the file into the (write-locked, empty) slot, making room first; out of
    /// descriptors, closes one more unused file and tries once again.
    fn fill(&self, g: &mut RwLockWriteGuard<'_, Option<File>>) -> io::Result<()> {
        if g.is_some() {
            return Ok(());
        }
        let cache = &self.cache;
        cache.make_room(0);
        let f = match self.reopen() {
            Ok(f) => f,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                // Others (connections, sort files) took descriptors the bound counted
                // on: give one more back and retry.
                let open = cache.open.load(Ordering::Relaxed);
                if !cache.make_room(cache.limit().saturating_sub(open.saturating_sub(1))) {
                    return Err(e);
                }
                self.reopen()?
            }
            Err(e) => return Err(e),
        };
        **g = Some(f);
        cache.open.fetch_add(1, Ordering::Relaxed);
        cache.opened_files.fetch_add(1, Ordering::Relaxed);
        if self.table.open.fetch_add(1, Ordering::Relaxed) == 0 {
            cache.open_tables.fetch_add(1, Ordering::Relaxed);
            cache.opened_tables.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Closes the file of the (write-locked) slot; unless `force`d, a durable file whose
    /// sync fails stays open.
    fn close(&self, g: &mut RwLockWriteGuard<'_, Option<File>>, force: bool) {
        let Some(f) = g.take() else { return };
        if !force && self.mode.durable && self.written.swap(false, Ordering::AcqRel) {
            if let Err(e) = f.sync_data() {
                // Keep the file open: its next sync reports the error to its caller.
                strata_types::log_warning!(
                    "syncing {} before closing it failed: {e}",
                    self.path.display()
                );
                self.written.store(true, Ordering::Release);
                **g = Some(f);
                return;
            }
        }
        drop(f);
        let cache = &self.cache;
        cache.open.fetch_sub(1, Ordering::Relaxed);
        if self.table.open.fetch_sub(1, Ordering::Relaxed) == 1 {
            cache.open_tables.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Runs `op` on the open file, reopening it first if the cache closed it.
    #[inline]
    fn with<R>(&self, op: impl FnOnce(&File) -> io::Result<R>) -> io::Result<R> {
        {
            let g = self.file.read();
            if let Some(f) = g.as_ref() {
                if !self.referenced.load(Ordering::Relaxed) {
                    self.referenced.store(true, Ordering::Relaxed);
                }
                self.cache.hits.add();
                return op(f);
            }
        }
        self.cache.misses.fetch_add(1, Ordering::Relaxed);
        let mut g = self.file.write();
        self.fill(&mut g)?;
        self.referenced.store(true, Ordering::Relaxed);
        let g = RwLockWriteGuard::downgrade(g);
        match g.as_ref() {
            Some(f) => op(f),
            None => Err(io::Error::other(
                "the file cache lost a file it had just opened",
            )),
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut g = self.file.write();
        self.close(&mut g, true);
    }
}

/// A table file behind the cache; see the module comment.
pub struct CachedFile {
    slot: Arc<Slot>,
}

impl CachedFile {
    /// Whether the file is open now (tests and diagnostics).
    pub fn is_open(&self) -> bool {
        self.slot.file.read().is_some()
    }
}

impl FileIo for CachedFile {
    fn len(&self) -> io::Result<u64> {
        self.slot.with(|f| Ok(f.metadata()?.len()))
    }
    #[inline]
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.slot.with(|f| f.read_exact_at(buf, offset))
    }
    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        self.slot.with(|f| {
            self.slot.written.store(true, Ordering::Relaxed);
            f.write_all_at(data, offset)
        })
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.slot.with(|f| {
            self.slot.written.store(true, Ordering::Relaxed);
            f.set_len(len)
        })
    }
    fn sync_data(&self) -> io::Result<()> {
        self.slot.with(|f| {
            // Cleared before the sync: a write racing with it sets it again.
            self.slot.written.store(false, Ordering::Release);
            let r = f.sync_data();
            if r.is_err() {
                self.slot.written.store(true, Ordering::Release);
            }
            r
        })
    }
    fn reserve(&self, offset: u64, len: u64) -> io::Result<()> {
        self.slot
            .with(|f| crate::io::fallocate_keep_size(f, offset, len))
    }
    fn can_map(&self) -> bool {
        true
    }
    fn map(&self, len: usize) -> Option<io::Result<Mapping>> {
        use std::os::unix::io::AsRawFd;
        Some(self.slot.with(|f| Mapping::map(f.as_raw_fd(), len)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path, n: usize) -> Vec<PathBuf> {
        (0..n)
            .map(|i| {
                let p = dir.join(format!("f{i}"));
                std::fs::write(&p, [i as u8; 16]).unwrap();
                p
            })
            .collect()
    }

    #[test]
    fn at_most_limit_files_are_open_and_closed_ones_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FileCache::new(4);
        let paths = files(dir.path(), 10);
        let handles: Vec<CachedFile> = paths
            .iter()
            .map(|p| {
                cache
                    .open(p, OpenMode::default(), &TableFiles::new())
                    .unwrap()
            })
            .collect();
        assert!(cache.stats().open_files <= 4, "{:?}", cache.stats());
        for round in 0..3 {
            for (i, h) in handles.iter().enumerate() {
                let mut b = [0u8; 16];
                h.read_at(&mut b, 0).unwrap();
                assert_eq!(b[..15], [i as u8; 15], "round {round} file {i}");
                let last = if round == 0 {
                    i as u8
                } else {
                    round as u8 + 99
                };
                assert_eq!(b[15], last, "round {round} file {i}");
                h.write_at(&[round as u8 + 100], 15).unwrap();
                assert!(cache.stats().open_files <= 4, "{:?}", cache.stats());
            }
        }
        let s = cache.stats();
        assert_eq!(s.opened_files, 10 + s.misses);
        assert!(s.misses >= 20, "files were closed and reopened: {s:?}");
        assert!(s.overflows >= 26, "{s:?}");
        // What was written through one descriptor is read through the next.
        let mut b = [0u8; 16];
        handles[0].read_at(&mut b, 0).unwrap();
        assert_eq!(b[15], 102);
        drop(handles);
        assert_eq!(cache.stats().open_files, 0);
        assert_eq!(cache.stats().open_tables, 0);
    }

    #[test]
    fn a_file_in_use_is_not_closed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FileCache::new(1);
        let paths = files(dir.path(), 2);
        let a = cache
            .open(&paths[0], OpenMode::default(), &TableFiles::new())
            .unwrap();
        let b = cache
            .open(&paths[1], OpenMode::default(), &TableFiles::new())
            .unwrap();
        assert!(!a.is_open() && b.is_open());
        // While `a` is being read (its lock held) opening `b` cannot close it: the
        // bound is exceeded for the moment instead.
        a.slot
            .with(|_| {
                b.read_at(&mut [0u8; 1], 0)?;
                assert!(a.is_open(), "a file under an I/O stays open");
                Ok(())
            })
            .unwrap();
        // Over the bound while `a` was pinned; the next make-room closes unused files.
        assert_eq!(cache.stats().open_files, 2);
        cache.set_limit(1);
        assert_eq!(cache.stats().open_files, 0);
        b.read_at(&mut [0u8; 1], 0).unwrap();
        assert!(b.is_open() && !a.is_open());
    }

    #[test]
    fn tables_are_counted_once_for_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FileCache::new(100);
        let paths = files(dir.path(), 4);
        let t1 = TableFiles::new();
        let t2 = TableFiles::new();
        let h: Vec<CachedFile> = [(0, &t1), (1, &t1), (2, &t2), (3, &t2)]
            .iter()
            .map(|(i, t)| cache.open(&paths[*i], OpenMode::default(), t).unwrap())
            .collect();
        let s = cache.stats();
        assert_eq!((s.open_files, s.open_tables, s.opened_tables), (4, 2, 2));
        cache.set_limit(1);
        let s = cache.stats();
        assert_eq!((s.open_files, s.open_tables), (0, 0), "{s:?}");
        h[1].len().unwrap();
        let s = cache.stats();
        assert_eq!((s.open_files, s.open_tables, s.opened_tables), (1, 1, 3));
    }

    #[test]
    fn a_missing_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FileCache::new(1);
        let p = files(dir.path(), 2);
        let a = cache
            .open(&p[0], OpenMode::default(), &TableFiles::new())
            .unwrap();
        let _b = cache
            .open(&p[1], OpenMode::default(), &TableFiles::new())
            .unwrap();
        std::fs::remove_file(&p[0]).unwrap();
        let e = a.read_at(&mut [0u8; 1], 0).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(cache
            .open(
                &dir.path().join("nope"),
                OpenMode::default(),
                &TableFiles::new()
            )
            .is_err());
    }
}
