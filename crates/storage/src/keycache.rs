//! The key cache: MyISAM's cache of index blocks (data rows are never cached here; they
//! go through the OS page cache). Capacity is `key_buffer_size` bytes of fixed-size
//! blocks.
//!
//! No global mutex: blocks are spread over `key_cache_segments` segments by a hash of
//! (file, block number), each segment with its own lock, its own share of the capacity,
//! its own clock hand and its own counters — MariaDB's segmented key cache, which is
//! what fixes the collapse the 2010 self-join benchmark shows. Each segment's lock is a
//! reader-writer lock: a lookup that hits holds it shared while it copies out or parses
//! the block, so concurrent lookups of the same block (every descent starts at the
//! root) never queue behind each other; a miss, a write or an eviction takes it
//! exclusive. On the hit path only the block's reference bit (written only when it was
//! clear) and the segment's read-request counter are written; the SHOW STATUS counters
//! live in the segments and are summed when asked for.
//!
//! Resizing (`key_buffer_size`) and re-segmenting (`key_cache_segments`) at run time
//! rebuild the cache, as MariaDB does: every segment lock is taken, dirty blocks are
//! written back, the blocks are forgotten and the new shape is published. The segment
//! array is allocated at its maximum size once, so a lookup finds its segment with one
//! atomic load (the active count) and, holding the segment lock, checks that the shape
//! it hashed with is still the one in force (`Segment::shape`), retrying otherwise.
//!
//! Eviction is CLOCK (second chance): a hit sets the block's reference bit; the hand
//! clears bits until it finds an unreferenced block, writing it back first if dirty.

use crate::io::FileIo;
use crate::sync::{
    Arc, AtomicBool, AtomicU64, AtomicUsize, Ordering, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
use std::collections::HashMap;
use std::io;

/// Most segments a cache may have (MariaDB's limit for `key_cache_segments`).
pub const MAX_SEGMENTS: usize = 64;

/// Strata's default `key_cache_segments`. MariaDB's default is 0 (one unsegmented
/// cache: MyISAM's global key-cache mutex), which is exactly what collapses under
/// concurrent readers in seed 002, so Strata segments by default. 16 makes two lookups
/// on different blocks collide on a lock 1/16 of the time, which keeps a few dozen cores
/// (a lookup holds its segment well under a microsecond) from queueing, while each
/// segment of the default 8 MiB cache still holds 128 blocks, enough for its CLOCK to
/// approximate LRU; more segments mostly cost eviction quality in small caches.
pub const DEFAULT_SEGMENTS: usize = 16;

/// A segment never holds fewer blocks than this (a B-tree descent revisits its path).
const MIN_BLOCKS_PER_SEGMENT: usize = 2;

/// A file the cache serves blocks of.
#[derive(Clone)]
pub struct CachedFile {
    pub id: u64,
    pub io: Arc<dyn FileIo>,
}

struct Block {
    file: u64,
    block_no: u64,
    io: Arc<dyn FileIo>,
    data: Box<[u8]>,
    dirty: bool,
    /// CLOCK's second-chance bit, set by hits under the shared lock.
    referenced: AtomicBool,
}

#[derive(Default)]
struct Segment {
    map: HashMap<(u64, u64), usize>,
    blocks: Vec<Block>,
    hand: usize,
    /// The segment count of the shape this segment belongs to (0: not in use).
    shape: usize,
    /// Blocks this segment may hold.
    capacity: usize,
    counters: Counters,
    /// Key_read_requests, counted by hits under the shared lock.
    read_requests: AtomicU64,
}

#[derive(Default, Clone, Copy)]
struct Counters {
    reads: u64,
    write_requests: u64,
    writes: u64,
}

pub struct KeyCache {
    block_size: usize,
    segments: Box<[RwLock<Segment>]>,
    /// Segments in use, 1..=MAX_SEGMENTS.
    active: AtomicUsize,
    /// Blocks over all active segments.
    total_blocks: AtomicUsize,
    next_file: AtomicU64,
}

/// Counters as SHOW STATUS names them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyCacheStats {
    pub read_requests: u64,
    pub reads: u64,
    pub write_requests: u64,
    pub writes: u64,
    pub blocks_used: u64,
}

/// The segment count actually used for a `key_cache_segments` value (0 = unsegmented).
fn effective_segments(segments: usize) -> usize {
    segments.clamp(1, MAX_SEGMENTS)
}

impl KeyCache {
    /// A cache of `capacity_bytes` in [`DEFAULT_SEGMENTS`] segments.
    pub fn new(capacity_bytes: usize, block_size: usize) -> KeyCache {
        KeyCache::with_segments(capacity_bytes, block_size, DEFAULT_SEGMENTS)
    }

    /// A cache of `capacity_bytes` in `segments` segments (0 or 1: one segment).
    pub fn with_segments(capacity_bytes: usize, block_size: usize, segments: usize) -> KeyCache {
        let cache = KeyCache {
            block_size,
            segments: (0..MAX_SEGMENTS)
                .map(|_| RwLock::new(Segment::default()))
                .collect(),
            active: AtomicUsize::new(1),
            total_blocks: AtomicUsize::new(0),
            next_file: AtomicU64::new(1),
        };
        let mut guards: Vec<_> = cache.segments.iter().map(|s| s.write()).collect();
        cache.shape(&mut guards, capacity_bytes, segments);
        drop(guards);
        cache
    }

    /// Sets the shape of a cache whose every segment is locked and empty.
    fn shape(
        &self,
        guards: &mut [RwLockWriteGuard<'_, Segment>],
        capacity_bytes: usize,
        segs: usize,
    ) {
        let n = effective_segments(segs);
        let total = (capacity_bytes / self.block_size).max(n * MIN_BLOCKS_PER_SEGMENT);
        for (i, g) in guards.iter_mut().enumerate() {
            g.map.clear();
            g.blocks.clear();
            g.blocks.shrink_to_fit();
            g.hand = 0;
            g.shape = if i < n { n } else { 0 };
            // Spread the remainder so the total is what was asked for.
            g.capacity = if i < n {
                total / n + usize::from(i < total % n)
            } else {
                0
            };
        }
        self.total_blocks.store(total, Ordering::Relaxed);
        // The bound the cache grows to (blocks are filled on demand), shown as its
        // line of information_schema.STRATA_MEMORY.
        strata_types::memory::set(
            strata_types::memory::Component::KeyCache,
            total * self.block_size,
        );
        self.active.store(n, Ordering::Release);
    }

    /// Rebuilds the cache with a new size and segment count (SET GLOBAL
    /// key_buffer_size / key_cache_segments): writes every dirty block back, forgets
    /// every block, and starts empty in the new shape. Lookups wait while it runs. On a
    /// write error the cache keeps its old shape (the blocks written are clean).
    pub fn resize(&self, capacity_bytes: usize, segments: usize) -> io::Result<()> {
        let mut guards: Vec<_> = self.segments.iter().map(|s| s.write()).collect();
        for g in guards.iter_mut() {
            let seg = &mut **g;
            for b in seg.blocks.iter_mut().filter(|b| b.dirty) {
                seg.counters.writes += 1;
                b.io.write_at(&b.data, b.block_no * self.block_size as u64)?;
                b.dirty = false;
            }
        }
        self.shape(&mut guards, capacity_bytes, segments);
        Ok(())
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }

    pub fn capacity(&self) -> usize {
        self.total_blocks.load(Ordering::Relaxed) * self.block_size
    }

    /// Segments in use (1 = unsegmented).
    pub fn segments(&self) -> usize {
        self.active.load(Ordering::Acquire)
    }

    pub fn register_file(&self, io: Arc<dyn FileIo>) -> CachedFile {
        CachedFile {
            id: self.next_file.fetch_add(1, Ordering::Relaxed),
            io,
        }
    }

    fn hash(file: u64, block_no: u64) -> u64 {
        (file.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ block_no.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
            .rotate_left(29)
    }

    /// Locks exclusive the segment that holds (file, block) in the shape in force.
    fn segment(&self, file: u64, block_no: u64) -> RwLockWriteGuard<'_, Segment> {
        self.locked_segment(file, block_no, RwLock::write)
    }

    /// Locks shared the segment that holds (file, block) in the shape in force.
    fn segment_shared(&self, file: u64, block_no: u64) -> RwLockReadGuard<'_, Segment> {
        self.locked_segment(file, block_no, RwLock::read)
    }

    fn locked_segment<'a, G: std::ops::Deref<Target = Segment>>(
        &'a self,
        file: u64,
        block_no: u64,
        lock: impl Fn(&'a RwLock<Segment>) -> G,
    ) -> G {
        let h = Self::hash(file, block_no);
        loop {
            let n = self.active.load(Ordering::Acquire);
            let g = lock(&self.segments[(h % n as u64) as usize]);
            // A resize between the load and the lock changed the shape: hash again.
            if g.shape == n {
                return g;
            }
        }
    }

    /// Finds or loads a block in a locked segment; returns its slot.
    fn slot(
        &self,
        seg: &mut Segment,
        f: &CachedFile,
        block_no: u64,
        load: bool,
    ) -> io::Result<usize> {
        if let Some(&i) = seg.map.get(&(f.id, block_no)) {
            seg.blocks[i].referenced.store(true, Ordering::Relaxed);
            return Ok(i);
        }
        let mut data = vec![0u8; self.block_size].into_boxed_slice();
        if load {
            seg.counters.reads += 1;
            // Past the end of the file is UnexpectedEof: a truncated index file.
            f.io.read_at(&mut data, block_no * self.block_size as u64)?;
        }
        let block = Block {
            file: f.id,
            block_no,
            io: f.io.clone(),
            data,
            dirty: false,
            referenced: AtomicBool::new(true),
        };
        let i = if seg.blocks.len() < seg.capacity {
            seg.blocks.push(block);
            seg.blocks.len() - 1
        } else {
            let victim = loop {
                let h = seg.hand % seg.blocks.len();
                seg.hand = h + 1;
                if seg.blocks[h].referenced.load(Ordering::Relaxed) {
                    seg.blocks[h].referenced.store(false, Ordering::Relaxed);
                } else {
                    break h;
                }
            };
            let old = &seg.blocks[victim];
            if old.dirty {
                seg.counters.writes += 1;
                old.io
                    .write_at(&old.data, old.block_no * self.block_size as u64)?;
            }
            let key = (old.file, old.block_no);
            seg.map.remove(&key);
            seg.blocks[victim] = block;
            victim
        };
        seg.map.insert((f.id, block_no), i);
        Ok(i)
    }

    /// Runs `read` on the block's bytes.
    pub fn read<R>(
        &self,
        f: &CachedFile,
        block_no: u64,
        read: impl FnOnce(&[u8]) -> R,
    ) -> io::Result<R> {
        {
            let seg = self.segment_shared(f.id, block_no);
            seg.read_requests.fetch_add(1, Ordering::Relaxed);
            if let Some(&i) = seg.map.get(&(f.id, block_no)) {
                let b = &seg.blocks[i];
                // Only when clear: a store to a hot block's line on every hit would be
                // the contention the shared lock avoids.
                if !b.referenced.load(Ordering::Relaxed) {
                    b.referenced.store(true, Ordering::Relaxed);
                }
                return Ok(read(&b.data));
            }
        }
        // A miss: load it under the exclusive lock (slot looks again first: another
        // thread may have loaded it in between).
        let mut seg = self.segment(f.id, block_no);
        let i = self.slot(&mut seg, f, block_no, true)?;
        Ok(read(&seg.blocks[i].data))
    }

    /// Runs `write` on the block's bytes and marks it dirty. A block past the end of the
    /// file (newly allocated) starts as zeros when `fresh` is set.
    pub fn write(
        &self,
        f: &CachedFile,
        block_no: u64,
        fresh: bool,
        write: impl FnOnce(&mut [u8]),
    ) -> io::Result<()> {
        let mut seg = self.segment(f.id, block_no);
        seg.counters.write_requests += 1;
        let i = self.slot(&mut seg, f, block_no, !fresh)?;
        let b = &mut seg.blocks[i];
        if fresh {
            b.data.fill(0);
        }
        write(&mut b.data);
        b.dirty = true;
        Ok(())
    }

    /// Writes every dirty block of a file back (not synced: the caller syncs).
    pub fn flush_file(&self, f: &CachedFile) -> io::Result<()> {
        for seg in self.segments.iter() {
            let mut g = seg.write();
            let seg = &mut *g;
            for b in seg.blocks.iter_mut().filter(|b| b.file == f.id && b.dirty) {
                seg.counters.writes += 1;
                b.io.write_at(&b.data, b.block_no * self.block_size as u64)?;
                b.dirty = false;
            }
        }
        Ok(())
    }

    /// Forgets a file's blocks without writing them (drop, truncate, rebuild).
    pub fn drop_file(&self, f: &CachedFile) {
        for seg in self.segments.iter() {
            let mut seg = seg.write();
            let Segment { map, blocks, .. } = &mut *seg;
            for b in blocks.iter_mut().filter(|b| b.file == f.id) {
                map.remove(&(b.file, b.block_no));
                // Leave the slot as an unreferenced, clean block of no file.
                b.file = u64::MAX;
                b.dirty = false;
                b.referenced.store(false, Ordering::Relaxed);
            }
        }
    }

    pub fn stats(&self) -> KeyCacheStats {
        let mut st = KeyCacheStats::default();
        for seg in self.segments.iter() {
            let g = seg.read();
            st.read_requests += g.read_requests.load(Ordering::Relaxed);
            st.reads += g.counters.reads;
            st.write_requests += g.counters.write_requests;
            st.writes += g.counters.writes;
            st.blocks_used += g.map.len() as u64;
        }
        st
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemFile;

    #[test]
    fn blocks_survive_eviction_through_write_back() {
        let cache = KeyCache::new(64 * 512, 512);
        let file = cache.register_file(Arc::new(MemFile::new()));
        for b in 0..500u64 {
            cache
                .write(&file, b, true, |d| d[..8].copy_from_slice(&b.to_le_bytes()))
                .unwrap();
        }
        for b in 0..500u64 {
            let v = cache
                .read(&file, b, |d| u64::from_le_bytes(d[..8].try_into().unwrap()))
                .unwrap();
            assert_eq!(v, b);
        }
        let st = cache.stats();
        assert!(st.reads > 0 && st.writes > 0, "{st:?}");
        assert!(st.blocks_used as usize <= 64);
    }

    #[test]
    fn concurrent_readers_and_writers() {
        let cache = Arc::new(KeyCache::new(32 * 256, 256));
        let file = cache.register_file(Arc::new(MemFile::new()));
        for b in 0..200u64 {
            cache.write(&file, b, true, |d| d[0] = b as u8).unwrap();
        }
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (cache, file) = (cache.clone(), file.clone());
                std::thread::spawn(move || {
                    for i in 0..5000u64 {
                        let b = (i * 7 + t) % 200;
                        assert_eq!(cache.read(&file, b, |d| d[0]).unwrap(), b as u8);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn resize_and_resegment_keep_every_write() {
        let cache = KeyCache::with_segments(64 * 512, 512, 0);
        assert_eq!(cache.segments(), 1);
        let file = cache.register_file(Arc::new(MemFile::new()));
        for b in 0..300u64 {
            cache.write(&file, b, true, |d| d[0] = b as u8).unwrap();
        }
        for (size, segs) in [(16 * 512, 4), (256 * 512, 64), (8 * 512, 1), (1 << 20, 16)] {
            cache.resize(size, segs).unwrap();
            assert_eq!(cache.segments(), segs);
            assert!(cache.capacity() >= size.min(segs * 2 * 512));
            assert_eq!(cache.stats().blocks_used, 0, "a resize starts empty");
            for b in 0..300u64 {
                assert_eq!(cache.read(&file, b, |d| d[0]).unwrap(), b as u8);
            }
            cache.write(&file, 7, false, |d| d[1] = segs as u8).unwrap();
        }
        assert_eq!(cache.read(&file, 7, |d| d[1]).unwrap(), 16);
    }

    #[test]
    fn lookups_run_through_concurrent_resizes() {
        let cache = Arc::new(KeyCache::new(64 * 256, 256));
        let file = cache.register_file(Arc::new(MemFile::new()));
        for b in 0..200u64 {
            cache.write(&file, b, true, |d| d[0] = b as u8).unwrap();
        }
        let readers: Vec<_> = (0..3)
            .map(|t| {
                let (cache, file) = (cache.clone(), file.clone());
                std::thread::spawn(move || {
                    for i in 0..20_000u64 {
                        let b = (i * 13 + t) % 200;
                        assert_eq!(cache.read(&file, b, |d| d[0]).unwrap(), b as u8);
                    }
                })
            })
            .collect();
        for i in 0..50usize {
            cache
                .resize((32 + i) * 256, [1, 2, 7, 16, 64][i % 5])
                .unwrap();
        }
        for t in readers {
            t.join().unwrap();
        }
    }

    #[test]
    fn reading_past_the_end_is_an_error() {
        let cache = KeyCache::new(1 << 16, 512);
        let file = cache.register_file(Arc::new(MemFile::new()));
        assert!(cache.read(&file, 3, |_| ()).is_err());
    }
}
