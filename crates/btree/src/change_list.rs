//! A transaction's list of row changes ([`UndoItem`]s), bounded in memory: the newest
//! changes stay in a vector (the *tail*), older ones go to a scratch file of the list's
//! own as CRC-checked segments, so a transaction of ten million changes holds a few
//! hundred KiB of its list in memory instead of about a gigabyte, and so does the purge
//! batch the list becomes at COMMIT. Byte layout in `docs/format/undo.md`, part 3.
//!
//! An ordinary transaction never reaches the tail's bound: its list is a `Vec` and
//! nothing else (no file, no shared counter, no allocation but the vector's). The
//! file is scratch, as `undo_spill.rs`'s: never synced, unlinked as soon as it is
//! created (its space returns when the list ends, even in a crash), and leftovers of
//! that name are removed when the engine opens.
//!
//! Callers walk the list in pieces — the tail, or one segment read back whole — so no
//! walk holds more than one segment besides the tail: rollback newest first
//! ([`ChangeList::piece_before`]), a checkpoint oldest first by undo number
//! ([`ChangeList::from_undo_no`]), purge oldest first, consuming
//! ([`ChangeList::into_oldest_first`]). Shortening (statement undo, ROLLBACK TO
//! SAVEPOINT) never touches the file, so it cannot fail.
//!
//! All file access goes through [`FileIo`], made by the store's file maker, so tests
//! inject failures.

use crate::trx::UndoItem;
use std::io;
use std::path::Path;
use std::sync::Arc;
use strata_storage::io::{FileIo, StdFile};
use strata_storage::sync::{AtomicU64, AtomicUsize, Mutex, Ordering};

/// Changes a list keeps in memory by default (`strata_change_list_tail`). Why 4,096:
/// the spilled half is one segment of 2,048 changes (~60 KiB for sysbench-sized keys),
/// so the file costs one write per 2,048 changes and one read per 2,048 walked back —
/// negligible beside the page changes and redo of those changes — while a large
/// transaction holds at most ~4,096 × ~100 bytes ≈ 400 KiB of its list; transactions of
/// OLTP workloads (sysbench's: under 20 changes) never reach it and never make a file.
pub const DEFAULT_TAIL: usize = 4096;
/// The largest `strata_change_list_tail` accepted.
pub const MAX_TAIL: usize = 1 << 20;
/// Lists shorter than this are not counted in `memory/btree/undo_change_lists`: a few
/// KiB each, covered by their connection's statement allowance, and counting them
/// would put a shared counter on every small transaction's path.
const ACCOUNT_FROM: usize = 64;
/// The tail also spills once its keys take this many bytes, so long keys (up to a few
/// KiB each) do not make the item bound a bound of many MiB.
const TAIL_KEY_BYTES: usize = 1 << 20;
/// Files are named this followed by a counter, in the data directory.
pub const FILE_PREFIX: &str = "ib_change_list.";

const MAGIC: u32 = 0x4C43_5453;
const HEADER: usize = 16;
const ITEM_HEADER: usize = 20;

/// Makes a new scratch file for one list.
pub type FileMaker = dyn Fn() -> io::Result<Arc<dyn FileIo>> + Send + Sync;

/// What every change list of one engine shares: the tail's bound, the file maker, the
/// memory the large lists hold, and counters.
pub struct ChangeStore {
    tail: AtomicUsize,
    /// Bytes held by lists past [`ACCOUNT_FROM`] changes (tails, keys, segment index).
    bytes: AtomicUsize,
    files: Mutex<Arc<FileMaker>>,
    /// Segments written and read back since start.
    pub segments_written: AtomicU64,
    pub segments_read: AtomicU64,
}

impl ChangeStore {
    /// Files made by `maker`; tails of `tail` changes.
    pub fn new(maker: Arc<FileMaker>, tail: usize) -> Arc<ChangeStore> {
        Arc::new(ChangeStore {
            tail: AtomicUsize::new(tail.clamp(1, MAX_TAIL)),
            bytes: AtomicUsize::new(0),
            files: Mutex::new(maker),
            segments_written: AtomicU64::new(0),
            segments_read: AtomicU64::new(0),
        })
    }

    /// Files in `dir` (the data directory), after removing what an earlier run left
    /// there (docs/format/undo.md, part 3).
    pub fn in_dir(dir: &Path, tail: usize) -> io::Result<Arc<ChangeStore>> {
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            if e.file_name().to_string_lossy().starts_with(FILE_PREFIX) {
                std::fs::remove_file(e.path())?;
            }
        }
        let dir = dir.to_path_buf();
        let counter = AtomicU64::new(0);
        let maker = move || -> io::Result<Arc<dyn FileIo>> {
            let n = counter.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("{FILE_PREFIX}{n}"));
            let f = StdFile::open(&path, true)?;
            // Unlinked at once: the open file is all the list needs, and its space goes
            // back when the list ends, even in a crash. Should the unlink fail, the
            // next start removes the file.
            let _ = std::fs::remove_file(&path);
            f.set_len(0)?;
            Ok(Arc::new(f))
        };
        Ok(ChangeStore::new(Arc::new(maker), tail))
    }

    /// Changes a list keeps in memory (`strata_change_list_tail`); takes effect at each
    /// list's next change.
    pub fn set_tail(&self, n: usize) {
        self.tail.store(n.clamp(1, MAX_TAIL), Ordering::Relaxed);
    }

    pub fn tail(&self) -> usize {
        self.tail.load(Ordering::Relaxed)
    }

    /// Bytes the lists past [`ACCOUNT_FROM`] changes hold in memory.
    pub fn memory_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Files for lists that spill from now on come from `maker` (tests: failures).
    pub fn set_file_maker(&self, maker: Arc<FileMaker>) {
        *self.files.lock() = maker;
    }

    fn new_file(&self) -> io::Result<Arc<dyn FileIo>> {
        let maker = self.files.lock().clone();
        maker()
    }
}

/// One segment in the file.
struct Seg {
    offset: u64,
    len: u32,
    /// Its first `live` items are still in the list (ROLLBACK TO SAVEPOINT may have
    /// cut it), never 0.
    live: u32,
    first_undo_no: u32,
    /// The list position of its first item.
    start: usize,
}

/// What a list has once it is past [`ACCOUNT_FROM`] changes: its file and accounting.
struct Spill {
    store: Arc<ChangeStore>,
    file: Option<Arc<dyn FileIo>>,
    segs: Vec<Seg>,
    /// Items in `segs` (live ones).
    spilled: usize,
    /// Where the next segment goes.
    end: u64,
    /// Heap bytes of the tail's keys.
    key_bytes: usize,
    /// What this list has added to the store's `bytes`.
    reported: usize,
}

impl Drop for Spill {
    fn drop(&mut self) {
        self.store.bytes.fetch_sub(self.reported, Ordering::Relaxed);
    }
}

/// What a key's vector costs the heap: glibc's chunk (8-byte header, 16-byte steps, 32
/// at least).
fn key_heap(k: &[u8]) -> usize {
    (k.len() + 8).div_ceil(16).max(2) * 16
}

impl Spill {
    /// Brings the store's count up to date with what the list holds now.
    fn account(&mut self, tail: &Vec<UndoItem>) {
        let now = self.key_bytes
            + tail.capacity() * std::mem::size_of::<UndoItem>()
            + self.segs.capacity() * std::mem::size_of::<Seg>()
            + std::mem::size_of::<Spill>();
        if now > self.reported {
            self.store
                .bytes
                .fetch_add(now - self.reported, Ordering::Relaxed);
        } else if now < self.reported {
            self.store
                .bytes
                .fetch_sub(self.reported - now, Ordering::Relaxed);
        }
        self.reported = now;
    }

    /// The live items of `seg`, read back and checked.
    fn read(&self, seg: &Seg) -> io::Result<Vec<UndoItem>> {
        let file = self
            .file
            .as_ref()
            .ok_or_else(|| damaged(seg.offset, "no file"))?;
        let mut buf = vec![0u8; seg.len as usize];
        file.read_at(&mut buf, seg.offset)?;
        self.store.segments_read.fetch_add(1, Ordering::Relaxed);
        decode(&buf, seg)
    }
}

fn damaged(offset: u64, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("change list: the segment at offset {offset} is damaged ({what})"),
    )
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

/// A segment's bytes: header then `items`.
fn encode(items: &[UndoItem]) -> Vec<u8> {
    let payload: usize = items.iter().map(|i| ITEM_HEADER + i.key.len()).sum();
    let mut b = Vec::with_capacity(HEADER + payload);
    b.extend_from_slice(&MAGIC.to_le_bytes());
    b.extend_from_slice(&(items.len() as u32).to_le_bytes());
    b.extend_from_slice(&(payload as u32).to_le_bytes());
    b.extend_from_slice(&[0; 4]);
    for i in items {
        b.extend_from_slice(&i.space.to_le_bytes());
        b.extend_from_slice(&i.undo_no.to_le_bytes());
        b.extend_from_slice(&i.roll_ptr.to_le_bytes());
        b.extend_from_slice(&(i.key.len() as u32).to_le_bytes());
        b.extend_from_slice(&i.key);
    }
    let crc = crc32c::crc32c_append(crc32c::crc32c(&b[..12]), &b[HEADER..]);
    b[12..16].copy_from_slice(&crc.to_le_bytes());
    b
}

/// The live items of a segment read back, every field checked (format doc, "Reading").
fn decode(b: &[u8], seg: &Seg) -> io::Result<Vec<UndoItem>> {
    let bad = |what| damaged(seg.offset, what);
    if b.len() < HEADER || u32_at(b, 0) != MAGIC {
        return Err(bad("magic"));
    }
    let count = u32_at(b, 4);
    if count < seg.live || u32_at(b, 8) as usize != b.len() - HEADER {
        return Err(bad("count or length"));
    }
    let crc = crc32c::crc32c_append(crc32c::crc32c(&b[..12]), &b[HEADER..]);
    if crc != u32_at(b, 12) {
        return Err(bad("checksum"));
    }
    let mut out = Vec::with_capacity(seg.live as usize);
    let mut at = HEADER;
    for _ in 0..seg.live {
        if at + ITEM_HEADER > b.len() {
            return Err(bad("item past the end"));
        }
        let mut rp = [0u8; 8];
        rp.copy_from_slice(&b[at + 8..at + 16]);
        let klen = u32_at(b, at + 16) as usize;
        let kend = at + ITEM_HEADER + klen;
        if kend > b.len() {
            return Err(bad("key past the end"));
        }
        out.push(UndoItem {
            space: u32_at(b, at),
            undo_no: u32_at(b, at + 4),
            roll_ptr: u64::from_le_bytes(rp),
            key: b[at + ITEM_HEADER..kend].to_vec(),
        });
        at = kend;
    }
    if out.first().map(|i| i.undo_no) != Some(seg.first_undo_no) {
        return Err(bad("first undo number"));
    }
    Ok(out)
}

/// A transaction's changes, oldest first (see the module comment).
#[derive(Default)]
pub struct ChangeList {
    /// The newest changes.
    tail: Vec<UndoItem>,
    /// None for every list that never passed [`ACCOUNT_FROM`] changes.
    spill: Option<Box<Spill>>,
}

impl ChangeList {
    /// A list of `items` in memory (recovery's one-change purge batches).
    pub fn from_items(items: Vec<UndoItem>) -> ChangeList {
        ChangeList {
            tail: items,
            spill: None,
        }
    }

    /// Changes in the list, in memory and in the file.
    pub fn len(&self) -> usize {
        self.tail.len() + self.spilled()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn spilled(&self) -> usize {
        self.spill.as_ref().map_or(0, |s| s.spilled)
    }

    /// Whether some of the list is in its file.
    pub fn has_file(&self) -> bool {
        self.spill.as_ref().is_some_and(|s| s.file.is_some())
    }

    /// Appends a change. When the tail is full its older half is written to the file
    /// first; if that write fails, nothing is appended and the list is as it was (the
    /// caller must not make the change).
    pub fn push(&mut self, item: UndoItem, store: &Arc<ChangeStore>) -> io::Result<()> {
        let limit = store.tail();
        if self.spill.is_none() {
            // The path of every ordinary transaction: a vector push.
            if self.tail.len() < limit.min(ACCOUNT_FROM) {
                self.tail.push(item);
                return Ok(());
            }
            let key_bytes = self.tail.iter().map(|i| key_heap(&i.key)).sum();
            self.spill = Some(Box::new(Spill {
                store: store.clone(),
                file: None,
                segs: Vec::new(),
                spilled: 0,
                end: 0,
                key_bytes,
                reported: 0,
            }));
        }
        let full = self.tail.len() >= limit
            || self
                .spill
                .as_ref()
                .is_some_and(|s| s.key_bytes >= TAIL_KEY_BYTES);
        if full {
            self.write_oldest()?;
        }
        self.push_in_memory(item);
        Ok(())
    }

    /// Appends a change to the tail whatever its size (purge keeping a change it
    /// could not write: losing it would leak its old version).
    pub fn push_in_memory(&mut self, item: UndoItem) {
        if let Some(sp) = self.spill.as_mut() {
            sp.key_bytes += key_heap(&item.key);
            self.tail.push(item);
            sp.account(&self.tail);
        } else {
            self.tail.push(item);
        }
    }

    /// Writes the older half of the tail as one segment at the file's end.
    fn write_oldest(&mut self) -> io::Result<()> {
        let Some(sp) = self.spill.as_mut() else {
            return Ok(());
        };
        let n = (self.tail.len() / 2).max(1).min(self.tail.len());
        if n == 0 {
            return Ok(());
        }
        let file = match &sp.file {
            Some(f) => f.clone(),
            None => {
                let f = sp.store.new_file()?;
                sp.file = Some(f.clone());
                f
            }
        };
        let bytes = encode(&self.tail[..n]);
        // A failed write moves nothing: the items stay in the tail and the file's end
        // stays where it was, so the next segment overwrites what was half written.
        file.write_at(&bytes, sp.end)?;
        sp.segs.push(Seg {
            offset: sp.end,
            len: bytes.len() as u32,
            live: n as u32,
            first_undo_no: self.tail[0].undo_no,
            start: sp.spilled,
        });
        sp.end += bytes.len() as u64;
        sp.spilled += n;
        sp.key_bytes -= self.tail[..n]
            .iter()
            .map(|i| key_heap(&i.key))
            .sum::<usize>();
        self.tail.drain(..n);
        sp.store.segments_written.fetch_add(1, Ordering::Relaxed);
        sp.account(&self.tail);
        Ok(())
    }

    /// Forgets the newest change (its write failed).
    pub fn pop(&mut self) {
        if self.spill.is_none() {
            self.tail.pop();
        } else if !self.is_empty() {
            self.truncate(self.len() - 1);
        }
    }

    /// Keeps the first `at` changes (ROLLBACK TO SAVEPOINT, after undoing the rest).
    /// Never reads or writes the file: a segment the cut falls inside is remembered as
    /// shorter.
    pub fn truncate(&mut self, at: usize) {
        let spilled = self.spilled();
        let Some(sp) = self.spill.as_mut() else {
            self.tail.truncate(at);
            return;
        };
        if at >= spilled {
            let keep = at - spilled;
            if keep < self.tail.len() {
                sp.key_bytes -= self.tail[keep..]
                    .iter()
                    .map(|i| key_heap(&i.key))
                    .sum::<usize>();
                self.tail.truncate(keep);
            }
        } else {
            self.tail.clear();
            sp.key_bytes = 0;
            while sp.segs.last().is_some_and(|s| s.start >= at) {
                sp.segs.pop();
            }
            if let Some(last) = sp.segs.last_mut() {
                last.live = (at - last.start) as u32;
            }
            sp.spilled = at;
            let end = sp.segs.last().map_or(0, |s| s.offset + s.len as u64);
            if end < sp.end {
                sp.end = end;
                if let Some(f) = &sp.file {
                    // A failed cut only leaves the file longer than it need be.
                    let _ = f.set_len(end);
                }
            }
        }
        sp.account(&self.tail);
    }

    /// Empties the list (its file goes with it).
    pub fn clear(&mut self) {
        self.tail = Vec::new();
        self.spill = None;
    }

    /// The changes at positions `start..end` for the largest such piece held in one
    /// place (the tail, or one segment): rollback walks the list newest first with it,
    /// `end` the start of the previous piece. `end` at most [`ChangeList::len`].
    pub fn piece_before(&self, end: usize) -> io::Result<(usize, Vec<UndoItem>)> {
        let spilled = self.spilled();
        let end = end.min(self.len());
        if end == 0 {
            return Ok((0, Vec::new()));
        }
        if end > spilled {
            return Ok((spilled, self.tail[..end - spilled].to_vec()));
        }
        let Some(sp) = self.spill.as_ref() else {
            return Ok((0, Vec::new()));
        };
        let k = sp.segs.partition_point(|s| s.start < end).saturating_sub(1);
        let seg = &sp.segs[k];
        let mut items = sp.read(seg)?;
        items.truncate(end - seg.start);
        Ok((seg.start, items))
    }

    /// The changes numbered in `from..below` of the first piece (the tail or one
    /// segment) holding a change numbered `from` or more; empty when there is none.
    /// A checkpoint walks the list oldest first with it, `from` one past the last
    /// number it got, and never holds more than one piece.
    pub fn from_undo_no(&self, from: u32, below: u32) -> io::Result<Vec<UndoItem>> {
        let wanted = |i: &UndoItem| i.undo_no >= from && i.undo_no < below;
        if let Some(sp) = self.spill.as_ref() {
            // The last segment starting at or before `from` may hold it; later ones
            // start after it.
            let k = sp
                .segs
                .partition_point(|s| s.first_undo_no <= from)
                .saturating_sub(1);
            for seg in &sp.segs[k..] {
                if seg.first_undo_no >= below {
                    return Ok(Vec::new());
                }
                let items = sp.read(seg)?;
                let reached = items.last().is_some_and(|i| i.undo_no >= from);
                let out: Vec<UndoItem> = items.into_iter().filter(wanted).collect();
                if !out.is_empty() || reached {
                    return Ok(out);
                }
            }
        }
        Ok(self.tail.iter().filter(|i| wanted(i)).cloned().collect())
    }

    /// Every change, oldest first, consuming the list (purge): one segment in memory
    /// at a time. A segment that cannot be read yields its error, then the walk ends.
    pub fn into_oldest_first(mut self) -> OldestFirst {
        OldestFirst {
            spill: self.spill.take(),
            next_seg: 0,
            cur: Vec::new().into_iter(),
            tail: Some(std::mem::take(&mut self.tail)),
            failed: false,
        }
    }
}

/// [`ChangeList::into_oldest_first`].
pub struct OldestFirst {
    spill: Option<Box<Spill>>,
    next_seg: usize,
    cur: std::vec::IntoIter<UndoItem>,
    tail: Option<Vec<UndoItem>>,
    failed: bool,
}

impl Iterator for OldestFirst {
    type Item = io::Result<UndoItem>;

    fn next(&mut self) -> Option<io::Result<UndoItem>> {
        loop {
            if let Some(i) = self.cur.next() {
                return Some(Ok(i));
            }
            if self.failed {
                return None;
            }
            if let Some(sp) = self.spill.as_ref() {
                if let Some(seg) = sp.segs.get(self.next_seg) {
                    self.next_seg += 1;
                    match sp.read(seg) {
                        Ok(v) => {
                            self.cur = v.into_iter();
                            continue;
                        }
                        Err(e) => {
                            self.failed = true;
                            return Some(Err(e));
                        }
                    }
                }
            }
            match self.tail.take() {
                Some(t) => self.cur = t.into_iter(),
                None => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_storage::io::MemFile;

    /// A store whose lists' files are all the one returned (one list per test).
    fn store(tail: usize) -> (Arc<ChangeStore>, Arc<MemFile>, Arc<AtomicU64>) {
        let f = Arc::new(MemFile::new());
        let made = Arc::new(AtomicU64::new(0));
        let (f2, made2) = (f.clone(), made.clone());
        let maker = move || -> io::Result<Arc<dyn FileIo>> {
            made2.fetch_add(1, Ordering::SeqCst);
            Ok(f2.clone())
        };
        (ChangeStore::new(Arc::new(maker), tail), f, made)
    }

    fn item(n: u32) -> UndoItem {
        UndoItem {
            space: n % 3 + 1,
            key: format!("key-{n}").repeat((n % 4 + 1) as usize).into_bytes(),
            roll_ptr: 1000 + n as u64 * 7,
            undo_no: n,
        }
    }

    fn same(a: &[UndoItem], b: &[UndoItem]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(
                (x.space, &x.key, x.roll_ptr, x.undo_no),
                (y.space, &y.key, y.roll_ptr, y.undo_no)
            );
        }
    }

    /// Newest first, piece by piece, down to `at`, as rollback walks.
    fn newest_first(l: &ChangeList, at: usize) -> Vec<UndoItem> {
        let mut out = Vec::new();
        let mut end = l.len();
        while end > at {
            let (start, items) = l.piece_before(end).unwrap();
            let from = at.max(start);
            out.extend(items[from - start..].iter().rev().cloned());
            end = from;
        }
        out
    }

    /// Oldest first by undo number, as a checkpoint walks.
    fn by_undo_no(l: &ChangeList, from: u32) -> Vec<UndoItem> {
        let mut out = Vec::new();
        let mut next = from;
        loop {
            let c = l.from_undo_no(next, u32::MAX).unwrap();
            let Some(last) = c.last() else { break };
            next = last.undo_no + 1;
            out.extend(c);
        }
        out
    }

    #[test]
    fn a_small_list_is_a_vector_and_makes_no_file() {
        let (s, _, made) = store(DEFAULT_TAIL);
        let mut l = ChangeList::default();
        for n in 0..20 {
            l.push(item(n), &s).unwrap();
        }
        l.pop();
        assert_eq!(l.len(), 19);
        assert!(l.spill.is_none() && !l.has_file());
        assert_eq!(made.load(Ordering::SeqCst), 0);
        assert_eq!(s.memory_bytes(), 0);
    }

    #[test]
    fn walks_both_ways_across_the_file_and_pops() {
        let (s, f, made) = store(8);
        let mut l = ChangeList::default();
        let all: Vec<UndoItem> = (0..1000).map(item).collect();
        for i in &all {
            l.push(i.clone(), &s).unwrap();
            assert!(l.tail.len() <= 8);
        }
        assert_eq!(l.len(), 1000);
        assert_eq!(made.load(Ordering::SeqCst), 1, "one file per list");
        assert!(f.len().unwrap() > 0);
        assert!(s.memory_bytes() > 0);
        let mut rev = newest_first(&l, 0);
        rev.reverse();
        same(&rev, &all);
        same(&by_undo_no(&l, 0), &all);
        same(&by_undo_no(&l, 517), &all[517..]);
        // Bounded by `below`, one piece at a time (segments of 4 here).
        same(&l.from_undo_no(3, 5).unwrap(), &all[3..4]);
        same(&l.from_undo_no(4, 5).unwrap(), &all[4..5]);
        assert!(l.from_undo_no(5, 5).unwrap().is_empty());
        // Pops reach into the file once the tail is empty.
        for _ in 0..20 {
            l.pop();
        }
        same(
            &newest_first(&l, 0).into_iter().rev().collect::<Vec<_>>(),
            &all[..980],
        );
        let drained: Vec<UndoItem> = l.into_oldest_first().map(Result::unwrap).collect();
        same(&drained, &all[..980]);
        assert_eq!(s.memory_bytes(), 0, "all accounting returned");
    }

    #[test]
    fn savepoint_truncation_across_the_spill_boundary() {
        let (s, f, _) = store(16);
        let mut l = ChangeList::default();
        let mut model: Vec<UndoItem> = Vec::new();
        let mut next = 0u32;
        let mut push = |l: &mut ChangeList, model: &mut Vec<UndoItem>, k: u32| {
            for _ in 0..k {
                let i = item(next);
                next += 1;
                l.push(i.clone(), &s).unwrap();
                model.push(i);
            }
        };
        push(&mut l, &mut model, 200);
        // Inside a segment, at a segment's start, inside the tail, at 0, then again.
        for at in [150usize, 144, 130, 131, 0] {
            same(
                &newest_first(&l, at),
                &model[at..].iter().rev().cloned().collect::<Vec<_>>(),
            );
            l.truncate(at);
            model.truncate(at);
            assert_eq!(l.len(), at);
            same(&by_undo_no(&l, 0), &model);
            push(&mut l, &mut model, 37);
            same(&by_undo_no(&l, 0), &model);
            same(
                &newest_first(&l, 0).into_iter().rev().collect::<Vec<_>>(),
                &model,
            );
        }
        // A cut to 0 shortened the file; what was written since is all it holds.
        let end = l.spill.as_ref().unwrap().end;
        assert!(f.len().unwrap() >= end);
        let drained: Vec<UndoItem> = l.into_oldest_first().map(Result::unwrap).collect();
        same(&drained, &model);
    }

    #[test]
    fn a_failed_write_refuses_the_change_and_keeps_the_list_whole() {
        let (s, f, _) = store(8);
        let mut l = ChangeList::default();
        let mut ok = Vec::new();
        for n in 0..50 {
            l.push(item(n), &s).unwrap();
            ok.push(item(n));
        }
        f.set_full(true);
        let mut n = 50;
        let err = loop {
            match l.push(item(n), &s) {
                Ok(()) => ok.push(item(n)),
                Err(e) => break e,
            }
            n += 1;
        };
        assert!(strata_types::error::is_disk_full(&err));
        // Nothing lost, nothing extra, still bounded; still refused while full.
        assert_eq!(l.len(), ok.len());
        assert!(l.tail.len() <= 8);
        assert!(l.push(item(n), &s).is_err());
        same(
            &newest_first(&l, 0).into_iter().rev().collect::<Vec<_>>(),
            &ok,
        );
        // A rollback to a savepoint works as ever; room again: the list goes on.
        l.truncate(20);
        ok.truncate(20);
        f.set_full(false);
        for n in 100..140 {
            l.push(item(n), &s).unwrap();
            ok.push(item(n));
        }
        same(&by_undo_no(&l, 0), &ok);
        let drained: Vec<UndoItem> = l.into_oldest_first().map(Result::unwrap).collect();
        same(&drained, &ok);
    }

    #[test]
    fn a_damaged_segment_is_an_error_not_a_change() {
        let (s, f, _) = store(8);
        let mut l = ChangeList::default();
        for n in 0..100 {
            l.push(item(n), &s).unwrap();
        }
        // One flipped bit inside the first segment's payload.
        let mut b = [0u8; 1];
        f.read_at(&mut b, 30).unwrap();
        f.write_at(&[b[0] ^ 1], 30).unwrap();
        let e = newest_first_result(&l).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(l.from_undo_no(0, u32::MAX).is_err());
        let mut it = l.into_oldest_first();
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none(), "the walk ends at the damage");
    }

    fn newest_first_result(l: &ChangeList) -> io::Result<()> {
        let mut end = l.len();
        while end > 0 {
            end = l.piece_before(end)?.0;
        }
        Ok(())
    }

    #[test]
    fn long_keys_spill_before_the_item_bound() {
        let (s, _, _) = store(DEFAULT_TAIL);
        let mut l = ChangeList::default();
        for n in 0..2000u32 {
            l.push(
                UndoItem {
                    space: 1,
                    key: vec![(n % 251) as u8; 3000],
                    roll_ptr: n as u64,
                    undo_no: n,
                },
                &s,
            )
            .unwrap();
        }
        assert!(l.has_file());
        assert!(l.spill.as_ref().unwrap().key_bytes <= TAIL_KEY_BYTES + 3100);
        assert!(s.memory_bytes() < 2 * TAIL_KEY_BYTES);
        assert_eq!(by_undo_no(&l, 0).len(), 2000);
    }
}
