//! The undo spill file: old row versions the in-memory [`crate::trx::VersionStore`] has no
//! room for (past `strata_undo_memory_size`) go here, so a long-open read view or a huge
//! transaction costs disk instead of memory. Byte layout in `docs/format/undo.md`.
//!
//! The file is scratch space: nothing in it is needed after a restart (no read view
//! survives one; crash recovery undoes from the redo log), so it is never synced and is
//! emptied when the engine opens. It is an array of 1 MiB segments. The segment being
//! filled lives in memory and is written whole when full; a full segment's entries are
//! read back with one positioned read each. Each segment reserves 65,536 roll pointers
//! (one per 16-byte unit) from the version store's counter, so a pointer names its
//! segment and offset without any per-version index in memory: what stays in memory is,
//! per segment, its slot and a bitmap of live entries. A segment whose entries are all
//! removed is freed; its slot is reused and trailing free slots are cut off the file.
//!
//! All file access goes through [`FileIo`], so tests inject write failures.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::sync::Arc;
use strata_storage::io::FileIo;
use strata_storage::sync::{AtomicU64, AtomicUsize, Mutex, Ordering};

/// Bytes per segment.
pub const SEG_SIZE: usize = 1 << 20;
/// Entries start at multiples of this; one roll pointer per unit.
const UNIT: usize = 16;
/// Roll pointers a segment reserves.
pub const PTRS_PER_SEG: u64 = (SEG_SIZE / UNIT) as u64;
/// Entry header: roll pointer u64, value length u32 (NONE: no value), zero u32.
const ENTRY_HEADER: usize = 16;
const NONE: u32 = u32::MAX;

struct Segment {
    slot: u64,
    /// One bit per unit: an entry starts there and is still in use.
    live: Vec<u64>,
    live_count: u32,
    /// The segment's bytes while it is in memory: the one being filled, or a full one
    /// whose write failed (kept readable, written by a later attempt).
    buf: Option<Vec<u8>>,
}

impl Segment {
    fn is_live(&self, unit: usize) -> bool {
        self.live[unit / 64] & (1 << (unit % 64)) != 0
    }
}

#[derive(Default)]
struct State {
    /// Live segments by their first roll pointer.
    segs: BTreeMap<u64, Segment>,
    /// First pointer of the segment being filled.
    open: Option<u64>,
    /// Bytes used in the open segment.
    open_used: usize,
    /// Full segments still in memory because their write failed.
    unwritten: BTreeSet<u64>,
    free_slots: BTreeSet<u64>,
    /// Slots in the file (its length in segments).
    slots: u64,
}

/// The spill file of one engine.
pub struct UndoSpill {
    io: Arc<dyn FileIo>,
    state: Mutex<State>,
    /// Live segments, read without the mutex: 0 lets the version store skip the spill
    /// on a lookup that missed memory (the common case: a chain's end).
    segments: AtomicUsize,
    /// Versions spilled since start and read back (`Strata_undo_spill_*`).
    pub written: AtomicU64,
    pub read_back: AtomicU64,
    /// Versions in the store now.
    live: AtomicUsize,
}

impl UndoSpill {
    /// Over `io`, which is emptied (nothing in it outlives a run).
    pub fn open(io: Arc<dyn FileIo>) -> io::Result<UndoSpill> {
        io.set_len(0)?;
        Ok(UndoSpill {
            io,
            state: Mutex::new(State::default()),
            segments: AtomicUsize::new(0),
            written: AtomicU64::new(0),
            read_back: AtomicU64::new(0),
            live: AtomicUsize::new(0),
        })
    }

    /// Whether any version is in the file (or its segments in memory).
    #[inline]
    pub fn active(&self) -> bool {
        self.segments.load(Ordering::Acquire) != 0
    }

    /// Versions in the store.
    pub fn entries(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// Segments in use and the file's length in bytes (for memory/status reports).
    pub fn usage(&self) -> (usize, u64) {
        let s = self.state.lock();
        (s.segs.len(), s.slots * SEG_SIZE as u64)
    }

    /// Whether a version of `len` value bytes can go to the file at all.
    pub fn fits(len: Option<usize>) -> bool {
        entry_size(len) <= SEG_SIZE
    }

    /// Writes a version; returns its roll pointer, reserved from `counter`. Fails when a
    /// full segment cannot be written (the version is not stored).
    pub fn put(&self, counter: &AtomicU64, value: Option<&[u8]>) -> io::Result<u64> {
        let size = entry_size(value.map(<[u8]>::len));
        let mut s = self.state.lock();
        // Earlier failed writes first: the file must not hold more in memory than one
        // segment being filled.
        self.write_unwritten(&mut s)?;
        if s.open.is_none() || s.open_used + size > SEG_SIZE {
            if let Some(full) = s.open.take() {
                // Whole segments on disk, so a read of an entry's first bytes never
                // runs past the file's end.
                if let Some(buf) = s.segs.get_mut(&full).and_then(|g| g.buf.as_mut()) {
                    buf.resize(SEG_SIZE, 0);
                }
                s.unwritten.insert(full);
                self.write_unwritten(&mut s)?;
            }
            let base = counter.fetch_add(PTRS_PER_SEG, Ordering::Relaxed);
            let slot = match s.free_slots.pop_first() {
                Some(x) => x,
                None => {
                    s.slots += 1;
                    s.slots - 1
                }
            };
            s.segs.insert(
                base,
                Segment {
                    slot,
                    live: vec![0; PTRS_PER_SEG as usize / 64],
                    live_count: 0,
                    buf: Some(Vec::with_capacity(SEG_SIZE)),
                },
            );
            s.open = Some(base);
            s.open_used = 0;
            self.segments.store(s.segs.len(), Ordering::Release);
        }
        let base = s.open.unwrap_or_default();
        let off = s.open_used;
        let ptr = base + (off / UNIT) as u64;
        let seg = s
            .segs
            .get_mut(&base)
            .ok_or_else(|| io::Error::other("undo spill: open segment missing"))?;
        let buf = seg
            .buf
            .as_mut()
            .ok_or_else(|| io::Error::other("undo spill: open segment not in memory"))?;
        buf.extend_from_slice(&ptr.to_le_bytes());
        let len = value.map_or(NONE, |v| v.len() as u32);
        buf.extend_from_slice(&len.to_le_bytes());
        buf.extend_from_slice(&0u32.to_le_bytes());
        if let Some(v) = value {
            buf.extend_from_slice(v);
        }
        buf.resize(off + size, 0);
        let unit = off / UNIT;
        seg.live[unit / 64] |= 1 << (unit % 64);
        seg.live_count += 1;
        s.open_used = off + size;
        self.written.fetch_add(1, Ordering::Relaxed);
        self.live.fetch_add(1, Ordering::Relaxed);
        Ok(ptr)
    }

    /// Writes the full segments still in memory; stops at the first failure.
    fn write_unwritten(&self, s: &mut State) -> io::Result<()> {
        while let Some(&base) = s.unwritten.first() {
            if let Some(seg) = s.segs.get_mut(&base) {
                if let Some(buf) = &seg.buf {
                    self.io.write_at(buf, seg.slot * SEG_SIZE as u64)?;
                }
                seg.buf = None;
            }
            s.unwritten.remove(&base);
        }
        Ok(())
    }

    /// The version `ptr` names: Ok(None) when it names none (a freed segment, a removed
    /// entry, a pointer of memory or of an earlier run); Some(value) where value is None
    /// when the row did not exist.
    #[allow(clippy::type_complexity)]
    pub fn get(&self, ptr: u64) -> io::Result<Option<Option<Vec<u8>>>> {
        let (base, slot, off) = {
            let s = self.state.lock();
            let Some((&base, seg)) = s.segs.range(..=ptr).next_back() else {
                return Ok(None);
            };
            let unit = (ptr - base) as usize;
            if unit >= PTRS_PER_SEG as usize || !seg.is_live(unit) {
                return Ok(None);
            }
            let off = unit * UNIT;
            if let Some(buf) = &seg.buf {
                return decode(&buf[off..], ptr).map(Some);
            }
            (base, seg.slot, off)
        };
        // Outside the mutex: a full segment's bytes do not change while it is live.
        let pos = slot * SEG_SIZE as u64 + off as u64;
        let mut head = [0u8; 256];
        let n = head.len().min(SEG_SIZE - off);
        self.io.read_at(&mut head[..n], pos)?;
        let len = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        let value = if len == NONE || ENTRY_HEADER + len as usize <= n {
            decode(&head[..n], ptr)?
        } else {
            let mut whole = vec![0u8; ENTRY_HEADER + len as usize];
            self.io.read_at(&mut whole, pos)?;
            decode(&whole, ptr)?
        };
        // Still live now means it was live (and its slot not reused) during the read:
        // a segment's pointers are never handed out again.
        let s = self.state.lock();
        match s.segs.get(&base) {
            Some(seg) if seg.is_live((ptr - base) as usize) => {
                self.read_back.fetch_add(1, Ordering::Relaxed);
                Ok(Some(value))
            }
            _ => Ok(None),
        }
    }

    /// Forgets the version `ptr` names (nothing when it names none); frees its segment
    /// when it was the last one in use. True when it named one.
    pub fn remove(&self, ptr: u64) -> bool {
        let mut s = self.state.lock();
        let Some((&base, seg)) = s.segs.range_mut(..=ptr).next_back() else {
            return false;
        };
        let unit = (ptr - base) as usize;
        if unit >= PTRS_PER_SEG as usize || !seg.is_live(unit) {
            return false;
        }
        seg.live[unit / 64] &= !(1 << (unit % 64));
        seg.live_count -= 1;
        self.live.fetch_sub(1, Ordering::Relaxed);
        if seg.live_count == 0 {
            if s.open == Some(base) {
                s.open = None;
            }
            self.free(&mut s, base);
        }
        true
    }

    fn free(&self, s: &mut State, base: u64) {
        let Some(seg) = s.segs.remove(&base) else {
            return;
        };
        s.unwritten.remove(&base);
        s.free_slots.insert(seg.slot);
        // Trailing free slots leave the file.
        let before = s.slots;
        while s.slots > 0 && s.free_slots.contains(&(s.slots - 1)) {
            s.slots -= 1;
            let last = s.slots;
            s.free_slots.remove(&last);
        }
        self.segments.store(s.segs.len(), Ordering::Release);
        if s.slots < before {
            // A failed truncation only leaves the file longer than it need be.
            let _ = self.io.set_len(s.slots * SEG_SIZE as u64);
        }
    }
}

fn entry_size(len: Option<usize>) -> usize {
    (ENTRY_HEADER + len.unwrap_or(0)).div_ceil(UNIT) * UNIT
}

/// An entry's value, checking that it is the one `ptr` names.
fn decode(b: &[u8], ptr: u64) -> io::Result<Option<Vec<u8>>> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("undo spill: entry {ptr} is damaged"),
        )
    };
    if b.len() < ENTRY_HEADER {
        return Err(bad());
    }
    let stored = u64::from_le_bytes(b[0..8].try_into().map_err(|_| bad())?);
    if stored != ptr {
        return Err(bad());
    }
    let len = u32::from_le_bytes(b[8..12].try_into().map_err(|_| bad())?);
    if len == NONE {
        return Ok(None);
    }
    let end = ENTRY_HEADER + len as usize;
    if b.len() < end {
        return Err(bad());
    }
    Ok(Some(b[ENTRY_HEADER..end].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_storage::io::MemFile;

    fn spill() -> (Arc<MemFile>, UndoSpill) {
        let f = Arc::new(MemFile::new());
        let s = UndoSpill::open(f.clone()).unwrap();
        (f, s)
    }

    #[test]
    fn versions_read_back_from_memory_and_file() {
        let (f, s) = spill();
        let c = AtomicU64::new(1000);
        let mut ptrs = Vec::new();
        // About 3.5 segments of 300-byte values, one absent row among them.
        for i in 0..12_000u32 {
            let v = (i % 7 != 3).then(|| vec![(i % 251) as u8; 300]);
            ptrs.push((s.put(&c, v.as_deref()).unwrap(), v));
        }
        assert!(f.len().unwrap() >= 3 * SEG_SIZE as u64);
        for (p, v) in &ptrs {
            assert_eq!(s.get(*p).unwrap(), Some(v.clone()));
        }
        // Pointers that name nothing: before the first segment, between entries.
        assert_eq!(s.get(5).unwrap(), None);
        assert_eq!(s.get(ptrs[0].0 + 1).unwrap(), None);
        assert!(s.read_back.load(Ordering::Relaxed) > 0);
    }

    #[test]
    fn removed_versions_are_gone_and_space_is_freed() {
        let (f, s) = spill();
        let c = AtomicU64::new(1);
        let ptrs: Vec<u64> = (0..10_000)
            .map(|_| s.put(&c, Some(&[7u8; 400])).unwrap())
            .collect();
        let full_len = f.len().unwrap();
        assert!(full_len >= 3 * SEG_SIZE as u64);
        // Removing the older half frees (and reuses) slots, not the file's tail.
        for p in &ptrs[..5000] {
            assert!(s.remove(*p));
            assert_eq!(s.get(*p).unwrap(), None);
        }
        assert!(!s.remove(ptrs[0]));
        assert_eq!(s.usage().1, 4 * SEG_SIZE as u64);
        let more: Vec<u64> = (0..2000)
            .map(|_| s.put(&c, Some(&[9u8; 400])).unwrap())
            .collect();
        // Segment 0 was freed; the new one takes its slot instead of a fifth.
        assert_eq!(s.usage(), (4, 4 * SEG_SIZE as u64));
        assert_eq!(f.len().unwrap(), 4 * SEG_SIZE as u64);
        for p in ptrs[5000..].iter().chain(&more) {
            assert!(s.get(*p).unwrap().is_some());
            assert!(s.remove(*p));
        }
        assert!(!s.active());
        assert_eq!(f.len().unwrap(), 0, "an empty store leaves an empty file");
        // And it starts again from nothing.
        let p = s.put(&c, None).unwrap();
        assert_eq!(s.get(p).unwrap(), Some(None));
    }

    #[test]
    fn a_failed_write_fails_the_put_and_keeps_what_was_stored() {
        let f = Arc::new(MemFile::new());
        let s = UndoSpill::open(f.clone()).unwrap();
        let c = AtomicU64::new(1);
        let mut ok = Vec::new();
        f.set_full(true);
        let err = loop {
            match s.put(&c, Some(&[1u8; 1000])) {
                Ok(p) => ok.push(p),
                Err(e) => break e,
            }
        };
        assert!(strata_types::error::is_disk_full(&err));
        // Every version stored before the failure reads back (from memory).
        for p in &ok {
            assert_eq!(s.get(*p).unwrap(), Some(Some(vec![1u8; 1000])));
        }
        // Still full: still an error, memory does not grow past the failed segment.
        assert!(s.put(&c, Some(&[1u8; 1000])).is_err());
        f.set_full(false);
        let p = s.put(&c, Some(&[2u8; 10])).unwrap();
        assert!(
            f.len().unwrap() >= SEG_SIZE as u64,
            "the held segment is written"
        );
        for p in &ok {
            assert_eq!(s.get(*p).unwrap(), Some(Some(vec![1u8; 1000])));
        }
        assert_eq!(s.get(p).unwrap(), Some(Some(vec![2u8; 10])));
    }

    #[test]
    fn a_damaged_entry_is_an_error_not_a_version() {
        let (f, s) = spill();
        let c = AtomicU64::new(1);
        let ptrs: Vec<u64> = (0..3000)
            .map(|_| s.put(&c, Some(&[3u8; 500])).unwrap())
            .collect();
        f.write_at(&[0xAB; 8], 0).unwrap();
        assert!(s.get(ptrs[0]).is_err());
    }
}
