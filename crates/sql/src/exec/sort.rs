//! ORDER BY beyond memory: an external merge sort that holds at most `sort_buffer_size`
//! bytes of rows — less when the server's memory budget (`max_memory`) has no room for
//! more: the rows are held under a [`Grant`] that grows in 64 KiB steps, and when it
//! cannot grow the buffer is sorted and written to a temporary file in `tmpdir` (a
//! "run"); at the end the runs are merged with a heap. Rows that fit in the buffer never
//! touch disk.
//!
//! All runs of one sort go into one file, created already unlinked (`O_TMPFILE` or
//! create-then-unlink), so it vanishes when the statement ends, fails, or the server
//! crashes, and a sort holds one descriptor however many runs it writes. The merge reads
//! each run through a window of the sort's grant divided by the number of runs, with
//! positioned reads, and holds one decoded row per run. When the runs are so many that
//! a 4 KiB window and a row each do not fit in what the sort is granted (hundreds of
//! 32 KiB runs when the budget is busy), they are first merged in groups that fit into
//! longer runs, appended to the same file, so the merge never holds more than the sort
//! (at 4 KiB a run, 300 such runs held 1.2 MiB outside the grant: 131 MiB over 100
//! concurrent GROUP BYs on the run of docs/memory.md).
//!
//! Run format: a sequence of rows, each `u32` byte length then the row encoded by
//! [`encode_row`] (per value a tag byte and its payload, little-endian).

pub use crate::temp_rows::{decode_row, encode_row};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use strata_types::memory::{Component, Grant};
use strata_types::{Error, Result, Value};

pub type Compare<'a> = dyn Fn(&[Value], &[Value]) -> Ordering + 'a;

/// The smallest buffer a sort holds whatever the budget (MySQL's smallest
/// `sort_buffer_size`); the floor its grant waits for.
const MIN_BUFFER: usize = 32 << 10;
/// The smallest read window per run during the merge.
const MIN_WINDOW: usize = 4 << 10;

pub struct ExternalSorter<'a> {
    grant: Grant,
    tmpdir: PathBuf,
    buffer: Vec<Vec<Value>>,
    buffered_bytes: usize,
    /// Rows pushed and their bytes in memory: a merge holds one decoded row per run.
    rows_total: u64,
    row_bytes_total: u64,
    file: Option<File>,
    file_end: u64,
    /// (start, end) offsets of each run in `file`.
    runs: Vec<(u64, u64)>,
    cmp: &'a Compare<'a>,
}

/// Bytes a row occupies in memory: its vector's block and each string's block, as
/// malloc sizes them (its slot in the buffer is counted by the buffer's capacity).
fn row_size(row: &[Value]) -> usize {
    strata_types::memory::row_bytes(row)
}

impl<'a> ExternalSorter<'a> {
    /// A sorter holding at most `budget` bytes of rows (at least 32 KiB), charged to
    /// `component`; waits for (and past [`strata_types::memory::WAIT`] fails without)
    /// its first 32 KiB when the server's budget is exhausted.
    pub fn new(
        budget: usize,
        tmpdir: &Path,
        cmp: &'a Compare<'a>,
        component: Component,
    ) -> Result<ExternalSorter<'a>> {
        let share = budget.max(MIN_BUFFER);
        Ok(ExternalSorter {
            grant: Grant::new(component, share, MIN_BUFFER)?,
            tmpdir: tmpdir.to_path_buf(),
            buffer: Vec::new(),
            buffered_bytes: 0,
            rows_total: 0,
            row_bytes_total: 0,
            file: None,
            file_end: 0,
            runs: Vec::new(),
            cmp,
        })
    }

    pub fn push(&mut self, row: Vec<Value>) -> Result<()> {
        let size = row_size(&row);
        self.buffered_bytes += size;
        self.rows_total += 1;
        self.row_bytes_total += size as u64;
        self.buffer.push(row);
        // The buffer vector's own slots count too (it doubles as it grows).
        let bytes = self.buffered_bytes + self.buffer.capacity() * 24;
        if !self.grant.fits(bytes) {
            self.spill()?;
        }
        Ok(())
    }

    /// Number of runs written to disk so far (0 when everything fit in memory).
    #[cfg(test)]
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::io(
            format!("writing a sort run in {}", self.tmpdir.display()),
            e,
        )
    }

    fn spill(&mut self) -> Result<()> {
        let cmp = self.cmp;
        self.buffer.sort_by(|a, b| cmp(a, b));
        if self.file.is_none() {
            self.file = Some(tempfile::tempfile_in(&self.tmpdir).map_err(|e| self.io(e))?);
        }
        let Some(file) = self.file.as_ref() else {
            return Err(Error::Internal("sort run file".into()));
        };
        let start = self.file_end;
        let mut w = BufWriter::with_capacity(32 << 10, Positioned { file, at: start });
        let mut buf = Vec::new();
        for row in self.buffer.drain(..) {
            buf.clear();
            encode_row(&row, &mut buf);
            let r = w
                .write_all(&(buf.len() as u32).to_le_bytes())
                .and_then(|()| w.write_all(&buf));
            if let Err(e) = r {
                return Err(Error::io(
                    format!("writing a sort run in {}", self.tmpdir.display()),
                    e,
                ));
            }
        }
        let end = match w.into_inner() {
            Ok(p) => p.at,
            Err(e) => return Err(self.io(e.into_error())),
        };
        self.file_end = end;
        self.runs.push((start, end));
        self.buffer = Vec::new();
        self.buffered_bytes = 0;
        Ok(())
    }

    /// Sorts and hands every row to `f` in order; `f` returns false to stop early.
    pub fn finish(mut self, f: &mut dyn FnMut(Vec<Value>) -> Result<bool>) -> Result<()> {
        let cmp = self.cmp;
        if self.runs.is_empty() {
            let buffer = std::mem::take(&mut self.buffer);
            let mut buffer = buffer;
            buffer.sort_by(|a, b| cmp(a, b));
            for row in buffer {
                if !f(row)? {
                    break;
                }
            }
            return Ok(());
        }
        if !self.buffer.is_empty() {
            self.spill()?;
        }
        // Each run being merged holds a read window and one decoded row; together they
        // stay within what the sort is granted. Past that, runs are first merged in
        // groups into longer runs (each pass holds as much as the last), so a sort
        // that spilled hundreds of small runs under a busy budget merges in a few
        // passes instead of holding a window per run outside its grant.
        let row_mem = self
            .row_bytes_total
            .checked_div(self.rows_total)
            .unwrap_or(0) as usize;
        let per_run = MIN_WINDOW + row_mem;
        while self.runs.len() > 2 && !self.grant.fits(self.runs.len() * per_run) {
            // One piece of the grant buffers the merged run's writes.
            let fan_in = (self.grant.held().saturating_sub(MIN_WINDOW) / per_run).max(2);
            self.merge_pass(fan_in)?;
        }
        let window = (self.grant.held() / self.runs.len())
            .saturating_sub(row_mem)
            .max(MIN_WINDOW);
        let runs = std::mem::take(&mut self.runs);
        self.merge(&runs, window, f)
    }

    /// Merges the runs in groups of `fan_in` into longer runs appended to the file.
    fn merge_pass(&mut self, fan_in: usize) -> Result<()> {
        let runs = std::mem::take(&mut self.runs);
        let mut merged = Vec::with_capacity(runs.len().div_ceil(fan_in));
        for group in runs.chunks(fan_in) {
            let Some(file) = self.file.as_ref() else {
                return Err(Error::Internal("sort run file".into()));
            };
            let start = self.file_end;
            let mut w = BufWriter::with_capacity(MIN_WINDOW, Positioned { file, at: start });
            let mut buf = Vec::new();
            let mut failed = None;
            self.merge(group, MIN_WINDOW, &mut |row| {
                buf.clear();
                encode_row(&row, &mut buf);
                let r = w
                    .write_all(&(buf.len() as u32).to_le_bytes())
                    .and_then(|()| w.write_all(&buf));
                match r {
                    Ok(()) => Ok(true),
                    Err(e) => {
                        failed = Some(e);
                        Ok(false)
                    }
                }
            })?;
            if let Some(e) = failed {
                return Err(self.io(e));
            }
            let end = match w.into_inner() {
                Ok(p) => p.at,
                Err(e) => return Err(self.io(e.into_error())),
            };
            self.file_end = end;
            merged.push((start, end));
        }
        self.runs = merged;
        Ok(())
    }

    /// Hands the rows of `runs` to `f` in order, reading each through `window` bytes.
    fn merge(
        &self,
        runs: &[(u64, u64)],
        window: usize,
        f: &mut dyn FnMut(Vec<Value>) -> Result<bool>,
    ) -> Result<()> {
        let cmp = self.cmp;
        struct Head<'c> {
            row: Vec<Value>,
            run: usize,
            cmp: &'c Compare<'c>,
        }
        impl PartialEq for Head<'_> {
            fn eq(&self, o: &Self) -> bool {
                self.cmp(o) == Ordering::Equal
            }
        }
        impl Eq for Head<'_> {}
        impl PartialOrd for Head<'_> {
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                Some(self.cmp(o))
            }
        }
        impl Ord for Head<'_> {
            fn cmp(&self, o: &Self) -> Ordering {
                // BinaryHeap is a max-heap: reverse for ascending output; ties by run
                // keep the sort stable.
                (self.cmp)(&o.row, &self.row).then(o.run.cmp(&self.run))
            }
        }
        let Some(file) = self.file.as_ref() else {
            return Err(Error::Internal("sort run file".into()));
        };
        let mut readers: Vec<RunReader> = runs
            .iter()
            .map(|&(start, end)| RunReader {
                file,
                next: start,
                end,
                window: Vec::with_capacity(window),
                pos: 0,
                size: window,
            })
            .collect();
        let mut heap = BinaryHeap::with_capacity(runs.len());
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(row) = r.read_row()? {
                heap.push(Head { row, run: i, cmp });
            }
        }
        while let Some(Head { row, run, .. }) = heap.pop() {
            if let Some(next) = readers[run].read_row()? {
                heap.push(Head {
                    row: next,
                    run,
                    cmp,
                });
            }
            if !f(row)? {
                break;
            }
        }
        Ok(())
    }
}

/// Appends at a position of the shared run file.
struct Positioned<'f> {
    file: &'f File,
    at: u64,
}

impl Write for Positioned<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write_all_at(buf, self.at)?;
        self.at += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads one run's rows through a window of `size` bytes.
struct RunReader<'f> {
    file: &'f File,
    /// Next file offset not yet in the window.
    next: u64,
    end: u64,
    window: Vec<u8>,
    pos: usize,
    size: usize,
}

impl RunReader<'_> {
    /// Makes `n` bytes available at `pos`, refilling the window; false at the run's end.
    fn fill(&mut self, n: usize) -> Result<bool> {
        if self.window.len() - self.pos >= n {
            return Ok(true);
        }
        self.window.drain(..self.pos);
        self.pos = 0;
        let want = n.max(self.size) - self.window.len();
        let left = (self.end - self.next) as usize;
        let take = want.min(left);
        if take == 0 {
            return Ok(self.window.len() >= n);
        }
        let have = self.window.len();
        self.window.resize(have + take, 0);
        self.file
            .read_exact_at(&mut self.window[have..], self.next)
            .map_err(|e| Error::io("reading a sort run", e))?;
        self.next += take as u64;
        Ok(self.window.len() >= n)
    }

    fn read_row(&mut self) -> Result<Option<Vec<Value>>> {
        if !self.fill(4)? {
            return Ok(None);
        }
        let mut len = [0u8; 4];
        len.copy_from_slice(&self.window[self.pos..self.pos + 4]);
        let len = u32::from_le_bytes(len) as usize;
        self.pos += 4;
        if !self.fill(len)? {
            return Err(Error::Internal("truncated sort run".into()));
        }
        let row = decode_row(&self.window[self.pos..self.pos + len])
            .ok_or_else(|| Error::Internal("malformed sort run".into()))?;
        self.pos += len;
        Ok(Some(row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{DateTime, Decimal};

    #[test]
    fn spills_and_merges_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let cmp = |a: &[Value], b: &[Value]| a[0].to_i64().cmp(&b[0].to_i64());
        let mut s = ExternalSorter::new(32 << 10, dir.path(), &cmp, Component::Sort).unwrap();
        let n = 20_000i64;
        for i in 0..n {
            let k = (i * 7919) % n;
            s.push(vec![Value::Int(k), Value::Bytes(vec![b'x'; 50])])
                .unwrap();
        }
        assert!(s.runs() > 3, "expected the rows to spill");
        let mut got = Vec::new();
        s.finish(&mut |r| {
            got.push(r[0].to_i64().unwrap());
            Ok(true)
        })
        .unwrap();
        assert_eq!(got, (0..n).collect::<Vec<_>>());
        // Run files were unlinked: nothing is left in tmpdir.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn rows_round_trip() {
        let row = vec![
            Value::Null,
            Value::Int(-3),
            Value::UInt(7),
            Value::Double(1.5),
            Value::Decimal(Decimal::new(-1234, 2)),
            // A quotient holding more digits than it shows keeps both.
            Value::Decimal(Decimal::new(4214285714, 9).with_shown(4)),
            Value::str("héllo"),
            Value::DateTime(DateTime::parse("2006-05-26 10:00:00").unwrap()),
        ];
        let mut b = Vec::new();
        encode_row(&row, &mut b);
        let back = decode_row(&b).unwrap();
        assert_eq!(back, row);
        assert_eq!(back[5].to_text(), "4.2143");
    }
}
