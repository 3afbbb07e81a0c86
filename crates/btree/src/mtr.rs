//! Mini-transactions: InnoDB's unit of atomic page change. An [`Mtr`] latches pages
//! through the buffer pool, remembers each X-latched page's image from before the change,
//! and at [`Mtr::commit`] turns the changes into ONE redo record (so a split that touches
//! three pages is replayed whole or not at all), appends it, stamps every changed page
//! with the record's LSN, and only then releases the latches (so the page cleaner never
//! writes a page whose change is not yet in the log buffer).
//!
//! A change is logged as the byte runs that differ from the before-image, except the
//! first change of a page after a checkpoint began, which is logged as the full page:
//! a page torn by a crash in mid-write is then rebuilt from the log alone.

use crate::page::{get_u16, get_u32, get_u64};
use std::io;
use strata_storage::bufpool::{page_lsn, BufferPool, PageId, PageRead, PageWrite};
use strata_storage::redo::{Lsn, RedoLog};
use strata_storage::sync::{AtomicU64, Latch, Ordering};

pub const REC_PAGES: u8 = 1;
pub const REC_UNDO: u8 = 2;
pub const REC_COMMIT: u8 = 3;
pub const REC_ROLLED_BACK: u8 = 4;
/// A transaction prepared under an xid (two-phase commit with the binary log).
pub const REC_PREPARED: u8 = 5;
/// XA PREPARE of an external coordinator (docs/format/btree.md, kind 6).
pub const REC_XA_PREPARED: u8 = 6;
const FULL: u8 = 0;
const DIFF: u8 = 1;

/// What every mini-transaction needs: the pool, the log, and the full-image horizon.
pub struct Storage {
    pub pool: std::sync::Arc<BufferPool>,
    pub log: std::sync::Arc<RedoLog>,
    /// Pages whose LSN is older than this log their next change as a full image.
    fpi_horizon: AtomicU64,
    /// Held shared while a mini-transaction decides full-vs-diff and appends, so a
    /// checkpoint that moves the horizon sees every mtr entirely before or after it.
    gate: Latch<()>,
}

impl Storage {
    pub fn new(pool: std::sync::Arc<BufferPool>, log: std::sync::Arc<RedoLog>) -> Storage {
        let h = log.current_lsn();
        let gate = Latch::with_policy(pool.latch_policy().clone(), ());
        Storage {
            pool,
            log,
            fpi_horizon: AtomicU64::new(h),
            gate,
        }
    }

    /// Starts a checkpoint: from now on, a page's first change is logged whole.
    /// Returns the horizon; pages changed before it must be flushed before the log
    /// may forget the records before it.
    pub fn move_horizon(&self) -> Lsn {
        let _g = self.gate.write();
        let h = self.log.current_lsn();
        self.fpi_horizon.store(h, Ordering::SeqCst);
        h
    }
}

enum Latched {
    Read(PageRead),
    Write {
        page: PageWrite,
        /// None for a page created in this mtr (always logged whole).
        before: Option<Box<[u8]>>,
    },
}

/// A handle to a page latched in an [`Mtr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(usize);

pub struct Mtr<'a> {
    st: &'a Storage,
    pages: Vec<Option<Latched>>,
    logical: Vec<u8>,
}

impl<'a> Mtr<'a> {
    pub fn new(st: &'a Storage) -> Mtr<'a> {
        Mtr {
            st,
            pages: Vec::new(),
            logical: Vec::new(),
        }
    }

    fn push(&mut self, l: Latched) -> Slot {
        self.pages.push(Some(l));
        Slot(self.pages.len() - 1)
    }

    /// Latches a page shared.
    pub fn s(&mut self, id: PageId) -> io::Result<Slot> {
        let g = self.st.pool.read(id)?;
        Ok(self.push(Latched::Read(g)))
    }

    /// A page this mtr already holds X-latched.
    fn held_x(&self, id: PageId) -> Option<Slot> {
        self.pages
            .iter()
            .position(|l| matches!(l, Some(Latched::Write { page, .. }) if page.id() == id))
            .map(Slot)
    }

    /// Latches a page exclusive for changing it (a page the mtr already holds X is
    /// returned again: a latch is not re-entrant).
    pub fn x(&mut self, id: PageId) -> io::Result<Slot> {
        if let Some(s) = self.held_x(id) {
            return Ok(s);
        }
        let g = self.st.pool.write(id)?;
        let before: Box<[u8]> = Box::from(&g[..]);
        Ok(self.push(Latched::Write {
            page: g,
            before: Some(before),
        }))
    }

    /// Creates a page (zeroed, X-latched).
    pub fn create(&mut self, id: PageId) -> io::Result<Slot> {
        let g = self.st.pool.create(id)?;
        Ok(self.push(Latched::Write {
            page: g,
            before: None,
        }))
    }

    pub fn id(&self, s: Slot) -> PageId {
        match &self.pages[s.0] {
            Some(Latched::Read(g)) => g.id(),
            Some(Latched::Write { page, .. }) => page.id(),
            None => unreachable!("page released"),
        }
    }

    pub fn get(&self, s: Slot) -> &[u8] {
        match &self.pages[s.0] {
            Some(Latched::Read(g)) => g,
            Some(Latched::Write { page, .. }) => page,
            None => unreachable!("page released"),
        }
    }

    pub fn get_mut(&mut self, s: Slot) -> &mut [u8] {
        match &mut self.pages[s.0] {
            Some(Latched::Write { page, .. }) => &mut page[..],
            _ => unreachable!("page not X-latched"),
        }
    }

    /// Releases a page early (latch coupling). A changed page cannot be released before
    /// commit: its change is not logged yet.
    pub fn release(&mut self, s: Slot) {
        if let Some(Latched::Write {
            page,
            before: Some(b),
        }) = &self.pages[s.0]
        {
            if page[..] != b[..] {
                return;
            }
        }
        if let Some(Latched::Write { before: None, .. }) = &self.pages[s.0] {
            return;
        }
        self.pages[s.0] = None;
    }

    /// Releases every page latched so far except `keep` (used when a descent restarts).
    pub fn release_all_but(&mut self, keep: &[Slot]) {
        for i in 0..self.pages.len() {
            if !keep.contains(&Slot(i)) {
                self.release(Slot(i));
            }
        }
    }

    /// Adds a logical record (undo, commit) to this mtr's redo record.
    pub fn log_logical(&mut self, rec: &[u8]) {
        self.logical.extend_from_slice(rec);
    }

    /// Logs the changes and releases every latch. Returns the record's end LSN (or the
    /// current LSN when nothing changed).
    pub fn commit(mut self) -> Lsn {
        let st = self.st;
        let _gate = st.gate.read();
        let horizon = st.fpi_horizon.load(Ordering::SeqCst);
        let mut rec = Vec::new();
        let mut changed = Vec::new();
        let mut count = 0u16;
        rec.push(REC_PAGES);
        rec.extend_from_slice(&[0, 0]);
        for (i, l) in self.pages.iter().enumerate() {
            let Some(Latched::Write { page, before }) = l else {
                continue;
            };
            let id = page.id();
            match before {
                Some(b) if b[..] == page[..] => continue,
                Some(b) if page_lsn(b) >= horizon => {
                    rec.extend_from_slice(&id.space.to_le_bytes());
                    rec.extend_from_slice(&id.page_no.to_le_bytes());
                    rec.push(DIFF);
                    encode_diff(b, page, &mut rec);
                }
                _ => {
                    rec.extend_from_slice(&id.space.to_le_bytes());
                    rec.extend_from_slice(&id.page_no.to_le_bytes());
                    rec.push(FULL);
                    rec.extend_from_slice(&page[..]);
                }
            }
            count += 1;
            changed.push(i);
        }
        rec[1..3].copy_from_slice(&count.to_le_bytes());
        if count == 0 && self.logical.is_empty() {
            return st.log.current_lsn();
        }
        rec.extend_from_slice(&self.logical);
        let start = st.log.current_lsn();
        let end = st.log.append(&rec);
        for i in changed {
            if let Some(Latched::Write { page, .. }) = &mut self.pages[i] {
                page.mark_dirty(start, end);
            }
        }
        drop(_gate);
        self.pages.clear();
        end
    }
}

impl Drop for Mtr<'_> {
    /// An mtr abandoned on an error path must not leave unlogged changes in a page the
    /// cleaner could write: put every changed page back as it was.
    fn drop(&mut self) {
        for l in self.pages.iter_mut().flatten() {
            if let Latched::Write {
                page,
                before: Some(b),
            } = l
            {
                if page[..] != b[..] {
                    page.copy_from_slice(b);
                }
            }
        }
    }
}

/// Byte runs that differ, merged when the gap between them is short. Bytes 0..12 (the
/// checksum and page LSN) are skipped: the pool and replay set those.
fn encode_diff(before: &[u8], after: &[u8], out: &mut Vec<u8>) {
    const GAP: usize = 16;
    let n = after.len();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 12;
    while i < n {
        // Skip equal 8-byte words quickly.
        if i % 8 == 0 && i + 8 <= n && before[i..i + 8] == after[i..i + 8] {
            i += 8;
            continue;
        }
        if before[i] == after[i] {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i + 1;
        let mut j = end;
        while j < n && j < end + GAP {
            if before[j] != after[j] {
                end = j + 1;
            }
            j += 1;
        }
        runs.push((start, end));
        i = end;
    }
    out.extend_from_slice(&(runs.len() as u16).to_le_bytes());
    for (s, e) in runs {
        out.extend_from_slice(&(s as u16).to_le_bytes());
        out.extend_from_slice(&((e - s) as u16).to_le_bytes());
        out.extend_from_slice(&after[s..e]);
    }
}

/// One page change from a redo record, borrowed from it.
pub enum PageChange<'r> {
    Full(&'r [u8]),
    Diff(Vec<(usize, &'r [u8])>),
}

/// A parsed redo record: its page changes and the logical records after them.
pub struct ParsedRecord<'r> {
    pub pages: Vec<(PageId, PageChange<'r>)>,
    pub logical: &'r [u8],
}

/// Parses a record written by [`Mtr::commit`]; None when it is malformed.
pub fn parse_record(rec: &[u8], page_size: usize) -> Option<ParsedRecord<'_>> {
    if rec.first() != Some(&REC_PAGES) || rec.len() < 3 {
        return None;
    }
    let count = get_u16(rec, 1) as usize;
    let mut at = 3;
    let mut pages = Vec::with_capacity(count);
    for _ in 0..count {
        if rec.len() < at + 9 {
            return None;
        }
        let id = PageId {
            space: get_u32(rec, at),
            page_no: get_u32(rec, at + 4),
        };
        let kind = rec[at + 8];
        at += 9;
        match kind {
            FULL => {
                let img = rec.get(at..at + page_size)?;
                at += page_size;
                pages.push((id, PageChange::Full(img)));
            }
            DIFF => {
                let runs = get_u16(rec.get(at..at + 2)?, 0) as usize;
                at += 2;
                let mut v = Vec::with_capacity(runs);
                for _ in 0..runs {
                    let hdr = rec.get(at..at + 4)?;
                    let off = get_u16(hdr, 0) as usize;
                    let len = get_u16(hdr, 2) as usize;
                    at += 4;
                    let bytes = rec.get(at..at + len)?;
                    if off + len > page_size {
                        return None;
                    }
                    at += len;
                    v.push((off, bytes));
                }
                pages.push((id, PageChange::Diff(v)));
            }
            _ => return None,
        }
    }
    Some(ParsedRecord {
        pages,
        logical: &rec[at..],
    })
}

/// Applies one page change to a page image.
pub fn apply_change(page: &mut [u8], change: &PageChange) {
    match change {
        PageChange::Full(img) => page.copy_from_slice(img),
        PageChange::Diff(runs) => {
            for (off, bytes) in runs {
                page[*off..*off + bytes.len()].copy_from_slice(bytes);
            }
        }
    }
}

/// Reads a u64 from a logical record (helper for recovery).
pub fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8).map(|s| get_u64(s, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_round_trips() {
        let before = vec![0u8; 4096];
        let mut after = before.clone();
        after[100] = 1;
        after[105] = 2;
        after[3000..3010].fill(7);
        after[4095] = 9;
        let mut rec = vec![REC_PAGES, 1, 0];
        rec.extend_from_slice(&3u32.to_le_bytes());
        rec.extend_from_slice(&4u32.to_le_bytes());
        rec.push(DIFF);
        encode_diff(&before, &after, &mut rec);
        rec.extend_from_slice(b"tail");
        let p = parse_record(&rec, 4096).unwrap();
        assert_eq!(p.logical, b"tail");
        let mut img = before.clone();
        apply_change(&mut img, &p.pages[0].1);
        assert_eq!(img, after);
        assert!(rec.len() < 100, "diff is small: {}", rec.len());
    }

    #[test]
    fn malformed_records_are_rejected() {
        assert!(parse_record(&[], 4096).is_none());
        assert!(parse_record(&[REC_PAGES, 1, 0, 1, 2], 4096).is_none());
        let mut rec = vec![REC_PAGES, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DIFF, 1, 0];
        rec.extend_from_slice(&4090u16.to_le_bytes());
        rec.extend_from_slice(&100u16.to_le_bytes());
        rec.extend_from_slice(&[0; 100]);
        assert!(parse_record(&rec, 4096).is_none());
    }
}
