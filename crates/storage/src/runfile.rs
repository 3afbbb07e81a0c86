//! An external sort of byte records in bounded memory: records gather in one buffer up to
//! a budget (`innodb_sort_buffer_size` for an index build), are sorted there, and when
//! more follow the sorted buffer is written as a *run* to one scratch file, created
//! already unlinked in `tmpdir` (it vanishes with the sorter, also after a crash); at
//! the end the runs and the last buffer are merged into one ordered stream.
//!
//! Memory: the buffer (records packed one after another plus 8 bytes of offsets per
//! record) never passes the budget; the merge reads each run through a window of
//! `budget / runs` bytes (at least 4 KiB), so it stays near the budget whatever the
//! number of records. Run format in the file (no other program reads it, and it lives
//! only as long as one sort): each record is `[length u32 LE][bytes]`, runs back to
//! back; the sorter remembers where each starts and how many records it holds.
//!
//! The order is the caller's comparison of whole records, so a caller can keep fields
//! in a record that do not take part in the order (the btree engine keeps a key's
//! prefix length in front of it).

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Orders two records.
pub type Compare = fn(&[u8], &[u8]) -> CmpOrdering;

/// The smallest read window per run during the merge.
const MIN_WINDOW: usize = 4096;

/// One run in the scratch file: where it starts and how many records it holds.
#[derive(Clone, Copy, Debug)]
struct Run {
    start: u64,
    records: u64,
}

/// Sorts records in bounded memory, spilling sorted runs to an unlinked file.
pub struct Sorter {
    budget: usize,
    tmpdir: PathBuf,
    cmp: Compare,
    /// The records of the current buffer, packed.
    data: Vec<u8>,
    /// (offset, length) of each record in `data`.
    offs: Vec<(u32, u32)>,
    file: Option<File>,
    /// Where the next run goes in `file`.
    file_end: u64,
    runs: Vec<Run>,
    records: u64,
}

impl Sorter {
    /// A sorter that keeps at most `budget` bytes of records in memory (at least 64 KiB,
    /// MySQL's smallest `innodb_sort_buffer_size`).
    pub fn new(budget: usize, tmpdir: &Path, cmp: Compare) -> Sorter {
        Sorter {
            budget: budget.max(64 << 10),
            tmpdir: tmpdir.to_path_buf(),
            cmp,
            data: Vec::new(),
            offs: Vec::new(),
            file: None,
            file_end: 0,
            runs: Vec::new(),
            records: 0,
        }
    }

    fn used(&self) -> usize {
        self.data.len() + self.offs.len() * 8
    }

    /// Adds a record; when the buffer would pass the budget, the buffer is sorted and
    /// written as a run first.
    pub fn push(&mut self, rec: &[u8]) -> io::Result<()> {
        if rec.len() > u32::MAX as usize / 2 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "sort record too large",
            ));
        }
        if !self.offs.is_empty() && self.used() + rec.len() + 8 > self.budget {
            self.spill()?;
        }
        self.offs.push((self.data.len() as u32, rec.len() as u32));
        self.data.extend_from_slice(rec);
        self.records += 1;
        Ok(())
    }

    /// Records pushed so far.
    pub fn len(&self) -> u64 {
        self.records
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Runs written to the scratch file so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn sort_buffer(&mut self) {
        let data = &self.data;
        let cmp = self.cmp;
        self.offs.sort_unstable_by(|a, b| {
            cmp(
                &data[a.0 as usize..(a.0 + a.1) as usize],
                &data[b.0 as usize..(b.0 + b.1) as usize],
            )
        });
    }

    fn spill(&mut self) -> io::Result<()> {
        self.sort_buffer();
        if self.file.is_none() {
            self.file = Some(tempfile::tempfile_in(&self.tmpdir)?);
        }
        let Some(file) = self.file.as_mut() else {
            return Err(io::Error::other("no scratch file"));
        };
        let start = self.file_end;
        let mut w = io::BufWriter::with_capacity(256 << 10, &*file);
        let mut written = 0u64;
        for &(o, l) in &self.offs {
            w.write_all(&l.to_le_bytes())?;
            w.write_all(&self.data[o as usize..(o + l) as usize])?;
            written += 4 + l as u64;
        }
        w.flush()?;
        drop(w);
        self.runs.push(Run {
            start,
            records: self.offs.len() as u64,
        });
        self.file_end = start + written;
        self.data.clear();
        self.offs.clear();
        Ok(())
    }

    /// Ends the input: the records come back in order from the returned stream.
    pub fn finish(mut self) -> io::Result<Merged> {
        self.sort_buffer();
        let window = if self.runs.is_empty() {
            MIN_WINDOW
        } else {
            (self.budget / self.runs.len()).max(MIN_WINDOW)
        };
        let file = self.file.take().map(std::sync::Arc::new);
        let mut readers = Vec::new();
        for r in &self.runs {
            if let Some(f) = &file {
                readers.push(RunReader::new(f.clone(), *r, window));
            }
        }
        let mut m = Merged {
            cmp: self.cmp,
            data: std::mem::take(&mut self.data),
            offs: std::mem::take(&mut self.offs),
            next_mem: 0,
            readers,
            heap: BinaryHeap::new(),
            started: false,
        };
        m.prime()?;
        Ok(m)
    }
}

/// Reads one run back through a window of the file.
struct RunReader {
    file: std::sync::Arc<File>,
    pos: u64,
    left: u64,
    buf: Vec<u8>,
    at: usize,
    window: usize,
}

impl RunReader {
    fn new(file: std::sync::Arc<File>, run: Run, window: usize) -> RunReader {
        RunReader {
            file,
            pos: run.start,
            left: run.records,
            buf: Vec::new(),
            at: 0,
            window,
        }
    }

    /// Makes at least `n` unread bytes available in the window.
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.buf.len() - self.at >= n {
            return Ok(());
        }
        self.buf.drain(..self.at);
        self.at = 0;
        let want = n.max(self.window);
        let have = self.buf.len();
        self.buf.resize(want.max(have), 0);
        let mut got = have;
        while got < n {
            let r = self.file.read_at(&mut self.buf[got..], self.pos)?;
            if r == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "sort run file ended early",
                ));
            }
            got += r;
            self.pos += r as u64;
        }
        self.buf.truncate(got);
        Ok(())
    }

    /// The next record of the run.
    fn next(&mut self) -> io::Result<Option<Vec<u8>>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.fill(4)?;
        let b = &self.buf[self.at..self.at + 4];
        let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        self.at += 4;
        self.fill(len)?;
        let rec = self.buf[self.at..self.at + len].to_vec();
        self.at += len;
        self.left -= 1;
        Ok(Some(rec))
    }
}

/// The head of one source in the merge (source `usize::MAX` is the memory buffer).
struct Head {
    rec: Vec<u8>,
    source: usize,
    cmp: Compare,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        Ord::cmp(self, other) == CmpOrdering::Equal
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(Ord::cmp(self, other))
    }
}
impl Ord for Head {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        // BinaryHeap is a max-heap: reversed, so the smallest record comes out first;
        // ties go to the earlier source, keeping the merge stable.
        (self.cmp)(&other.rec, &self.rec).then(other.source.cmp(&self.source))
    }
}

/// The sorted stream of every record pushed.
pub struct Merged {
    cmp: Compare,
    data: Vec<u8>,
    offs: Vec<(u32, u32)>,
    next_mem: usize,
    readers: Vec<RunReader>,
    heap: BinaryHeap<Head>,
    started: bool,
}

const MEMORY: usize = usize::MAX;

impl Merged {
    fn mem_next(&mut self) -> Option<Vec<u8>> {
        let &(o, l) = self.offs.get(self.next_mem)?;
        self.next_mem += 1;
        Some(self.data[o as usize..(o + l) as usize].to_vec())
    }

    fn prime(&mut self) -> io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        for i in 0..self.readers.len() {
            if let Some(rec) = self.readers[i].next()? {
                self.heap.push(Head {
                    rec,
                    source: i,
                    cmp: self.cmp,
                });
            }
        }
        if let Some(rec) = self.mem_next() {
            self.heap.push(Head {
                rec,
                source: MEMORY,
                cmp: self.cmp,
            });
        }
        Ok(())
    }

    /// The next record in order, or None at the end.
    pub fn next_record(&mut self) -> io::Result<Option<Vec<u8>>> {
        let Some(top) = self.heap.pop() else {
            return Ok(None);
        };
        let refill = if top.source == MEMORY {
            self.mem_next()
        } else {
            self.readers[top.source].next()?
        };
        if let Some(rec) = refill {
            self.heap.push(Head {
                rec,
                source: top.source,
                cmp: self.cmp,
            });
        }
        Ok(Some(top.rec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytewise(a: &[u8], b: &[u8]) -> CmpOrdering {
        a.cmp(b)
    }

    fn drain(mut m: Merged) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(r) = m.next_record().unwrap() {
            out.push(r);
        }
        out
    }

    #[test]
    fn records_past_the_budget_spill_in_runs_and_merge_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::new(64 << 10, dir.path(), bytewise);
        let mut want = Vec::new();
        // A pseudo-random order of 50,000 distinct 12-byte records: ~1 MB, many runs.
        let mut x: u64 = 12345;
        for i in 0..50_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut r = (x >> 16).to_be_bytes().to_vec();
            r.extend_from_slice(&(i as u32).to_be_bytes());
            s.push(&r).unwrap();
            want.push(r);
        }
        assert!(s.runs() > 5, "runs: {}", s.runs());
        assert_eq!(s.len(), 50_000);
        want.sort();
        let got = drain(s.finish().unwrap());
        assert_eq!(got, want);
        // The scratch file was unlinked at creation: nothing is left in tmpdir.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_small_input_stays_in_memory_and_order_is_the_callers() {
        let dir = tempfile::tempdir().unwrap();
        fn by_tail(a: &[u8], b: &[u8]) -> CmpOrdering {
            a[1..].cmp(&b[1..])
        }
        let mut s = Sorter::new(1 << 20, dir.path(), by_tail);
        for r in [&[9u8, 3][..], &[1, 1], &[5, 2], &[0, 1, 0]] {
            s.push(r).unwrap();
        }
        assert_eq!(s.runs(), 0);
        let got = drain(s.finish().unwrap());
        assert_eq!(got, vec![vec![1, 1], vec![0, 1, 0], vec![5, 2], vec![9, 3]]);
        let empty = Sorter::new(1 << 20, dir.path(), by_tail);
        assert!(drain(empty.finish().unwrap()).is_empty());
    }

    #[test]
    fn records_longer_than_the_window_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::new(64 << 10, dir.path(), bytewise);
        let mut want = Vec::new();
        for i in 0..40u8 {
            let r = vec![40 - i; 9000];
            s.push(&r).unwrap();
            want.push(r);
        }
        assert!(s.runs() > 1);
        want.sort();
        assert_eq!(drain(s.finish().unwrap()), want);
    }
}
