//! The key cache: MyISAM's cache of index blocks (data rows are never cached here; they
//! go through the OS page cache). Capacity is `key_buffer_size` bytes of fixed-size
//! blocks.
//!
//! No global mutex: blocks are spread over [`SEGMENTS`] segments by a hash of (file,
//! block number), each segment with its own lock, its own share of the capacity and its
//! own clock hand for eviction — MariaDB's segmented key cache, which is what fixes the
//! collapse the 2010 self-join benchmark shows. A lookup holds one segment's lock only
//! while it copies out or parses the block.
//!
//! Eviction is CLOCK (second chance): a hit sets the block's reference bit; the hand
//! clears bits until it finds an unreferenced block, writing it back first if dirty.

use crate::io::FileIo;
use crate::sync::{Arc, AtomicU64, Mutex, Ordering};
use std::collections::HashMap;
use std::io;

/// Number of independently locked parts of the cache.
pub const SEGMENTS: usize = 16;

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
    referenced: bool,
}

#[derive(Default)]
struct Segment {
    map: HashMap<(u64, u64), usize>,
    blocks: Vec<Block>,
    hand: usize,
}

#[derive(Default)]
struct Counters {
    read_requests: AtomicU64,
    reads: AtomicU64,
    write_requests: AtomicU64,
    writes: AtomicU64,
}

pub struct KeyCache {
    block_size: usize,
    blocks_per_segment: usize,
    segments: Vec<Mutex<Segment>>,
    next_file: AtomicU64,
    counters: Counters,
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

impl KeyCache {
    pub fn new(capacity_bytes: usize, block_size: usize) -> KeyCache {
        let total = (capacity_bytes / block_size).max(SEGMENTS * 2);
        KeyCache {
            block_size,
            blocks_per_segment: total / SEGMENTS,
            segments: (0..SEGMENTS)
                .map(|_| Mutex::new(Segment::default()))
                .collect(),
            next_file: AtomicU64::new(1),
            counters: Counters::default(),
        }
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }

    pub fn capacity(&self) -> usize {
        self.blocks_per_segment * SEGMENTS * self.block_size
    }

    pub fn register_file(&self, io: Arc<dyn FileIo>) -> CachedFile {
        CachedFile {
            id: self.next_file.fetch_add(1, Ordering::Relaxed),
            io,
        }
    }

    fn segment(&self, file: u64, block_no: u64) -> &Mutex<Segment> {
        let h = (file.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ block_no.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .rotate_left(29);
        &self.segments[(h % SEGMENTS as u64) as usize]
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
            seg.blocks[i].referenced = true;
            return Ok(i);
        }
        let mut data = vec![0u8; self.block_size].into_boxed_slice();
        if load {
            self.counters.reads.fetch_add(1, Ordering::Relaxed);
            let off = block_no * self.block_size as u64;
            match f.io.read_at(&mut data, off) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    // A block past the end of the file reads as zeros only when asked
                    // for writing; for reads it is a truncated file.
                    return Err(e);
                }
                Err(e) => return Err(e),
            }
        }
        let block = Block {
            file: f.id,
            block_no,
            io: f.io.clone(),
            data,
            dirty: false,
            referenced: true,
        };
        let i = if seg.blocks.len() < self.blocks_per_segment {
            seg.blocks.push(block);
            seg.blocks.len() - 1
        } else {
            let victim = loop {
                let h = seg.hand % seg.blocks.len();
                seg.hand = h + 1;
                if seg.blocks[h].referenced {
                    seg.blocks[h].referenced = false;
                } else {
                    break h;
                }
            };
            let old = &seg.blocks[victim];
            if old.dirty {
                self.counters.writes.fetch_add(1, Ordering::Relaxed);
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
        self.counters.read_requests.fetch_add(1, Ordering::Relaxed);
        let mut seg = self.segment(f.id, block_no).lock();
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
        self.counters.write_requests.fetch_add(1, Ordering::Relaxed);
        let mut seg = self.segment(f.id, block_no).lock();
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
        for seg in &self.segments {
            let mut seg = seg.lock();
            for b in seg.blocks.iter_mut().filter(|b| b.file == f.id && b.dirty) {
                self.counters.writes.fetch_add(1, Ordering::Relaxed);
                b.io.write_at(&b.data, b.block_no * self.block_size as u64)?;
                b.dirty = false;
            }
        }
        Ok(())
    }

    /// Forgets a file's blocks without writing them (drop, truncate, rebuild).
    pub fn drop_file(&self, f: &CachedFile) {
        for seg in &self.segments {
            let mut seg = seg.lock();
            let Segment { map, blocks, .. } = &mut *seg;
            for b in blocks.iter_mut().filter(|b| b.file == f.id) {
                map.remove(&(b.file, b.block_no));
                // Leave the slot as an unreferenced, clean block of no file.
                b.file = u64::MAX;
                b.dirty = false;
                b.referenced = false;
            }
        }
    }

    pub fn stats(&self) -> KeyCacheStats {
        KeyCacheStats {
            read_requests: self.counters.read_requests.load(Ordering::Relaxed),
            reads: self.counters.reads.load(Ordering::Relaxed),
            write_requests: self.counters.write_requests.load(Ordering::Relaxed),
            writes: self.counters.writes.load(Ordering::Relaxed),
            blocks_used: self
                .segments
                .iter()
                .map(|s| s.lock().map.len() as u64)
                .sum(),
        }
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
    fn reading_past_the_end_is_an_error() {
        let cache = KeyCache::new(1 << 16, 512);
        let file = cache.register_file(Arc::new(MemFile::new()));
        assert!(cache.read(&file, 3, |_| ()).is_err());
    }
}
