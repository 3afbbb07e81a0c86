//! ORDER BY beyond memory: an external merge sort that holds at most `sort_buffer_size`
//! bytes of rows — less when the server's memory budget (`max_memory`) has no room for
//! more: the rows are held under a [`Grant`] that grows in 64 KiB steps, and when it
//! cannot grow the buffer is sorted and written to a temporary file in `tmpdir` (a
//! "run"); at the end the runs are merged with a heap. Rows that fit in the buffer never
//! touch disk.
//!
//! The buffer asks malloc for (almost) nothing per row: the rows' values are held one
//! after another in one vector and the sort orders a vector of (start, width) pairs;
//! once a run is written the values stay, and the next run's rows are copied into them,
//! reusing their strings' blocks; the merge decodes each run's rows into one reused row
//! ([`decode_row_into`]). With a row vector and a string block allocated and freed per
//! row, hundreds of connections sorting at once spent their time queued on the lock of
//! malloc's arenas (two of them: `bound_malloc` in the server), which made 300
//! concurrent sorts 9 times slower than MariaDB's (docs/memory.md).
//!
//! With a LIMIT, a sort that only needs its first `keep` rows (LIMIT + OFFSET) writes at
//! most that many of each run and of each merged run: a row past them in its run has
//! `keep` rows before it in the result.
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

pub use crate::temp_rows::{decode_row_into, encode_row};
use std::cmp::Ordering;
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
/// Bytes of one value's slot in the buffer.
const SLOT: usize = std::mem::size_of::<Value>();
/// Bytes of one row's (start, width) entry.
const ENTRY: usize = std::mem::size_of::<(usize, usize)>();
/// The buffer's first size, in value slots and in rows (8 KiB and 2 KiB, within the
/// floor every sort is granted): a sort of a hundred rows — sysbench's ranges, a page
/// of results — allocates each once instead of doubling up to it (every doubling is
/// a malloc, a copy and a free; a profile of oltp_read_only found them among the
/// largest callers of malloc).
const FIRST_SLOTS: usize = 256;
const FIRST_ROWS: usize = 128;

pub struct ExternalSorter<'a> {
    grant: Grant,
    tmpdir: PathBuf,
    /// The buffered rows' values, row after row. Slots past `used` hold values of an
    /// earlier run, kept so that their strings' blocks are reused by the next rows.
    values: Vec<Value>,
    used: usize,
    /// Each buffered row: its first value in `values` and its width.
    rows: Vec<(usize, usize)>,
    /// The blocks of the strings held by `values` (all its slots, used or kept).
    string_bytes: usize,
    /// Only this many first rows are wanted (LIMIT + OFFSET), when known.
    keep: Option<u64>,
    /// Rows pushed and their bytes in memory: a merge holds one decoded row per run.
    rows_total: u64,
    row_bytes_total: u64,
    file: Option<File>,
    file_end: u64,
    /// (start, end) offsets of each run in `file`.
    runs: Vec<(u64, u64)>,
    cmp: &'a Compare<'a>,
}

/// Bytes a row occupies in memory as a row of its own: its vector's block and each
/// string's block, as malloc sizes them (what a merge's decoded row holds).
fn row_size(row: &[Value]) -> usize {
    strata_types::memory::row_bytes(row)
}

/// Makes `slot` equal to `v`, reusing the block of the string `slot` holds when `v` is
/// a string of the same kind.
fn assign(slot: &mut Value, v: &Value) {
    match (&mut *slot, v) {
        (Value::Bytes(d), Value::Bytes(s))
        | (Value::Json(d), Value::Json(s))
        | (Value::Bits(d), Value::Bits(s)) => {
            d.clear();
            d.extend_from_slice(s);
        }
        (Value::Member { number: n, text: d }, Value::Member { number: m, text: s }) => {
            *n = *m;
            d.clear();
            d.extend_from_slice(s);
        }
        (slot, v) => *slot = v.clone(),
    }
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
            values: Vec::new(),
            used: 0,
            rows: Vec::new(),
            string_bytes: 0,
            keep: None,
            rows_total: 0,
            row_bytes_total: 0,
            file: None,
            file_end: 0,
            runs: Vec::new(),
            cmp,
        })
    }

    /// Only the first `keep` rows of the result will be read (LIMIT + OFFSET, when no
    /// operator between the sort and the LIMIT drops rows): runs are cut after them.
    pub fn keep_first(&mut self, keep: Option<u64>) {
        self.keep = keep;
    }

    /// Bytes the buffer holds: its slots, the strings in them, the rows' entries.
    fn bytes(&self) -> usize {
        self.values.capacity() * SLOT + self.string_bytes + self.rows.capacity() * ENTRY
    }

    /// Makes room in `values` for a row of `width` values: doubles it when the grant
    /// allows, else writes the buffered rows as a run first.
    fn room_for(&mut self, width: usize) -> Result<()> {
        if self.used + width <= self.values.capacity() {
            return Ok(());
        }
        let cap = self.values.capacity();
        let want = (cap * 2).max(self.used + width).max(FIRST_SLOTS);
        if !self.rows.is_empty() && !self.grant.fits(self.bytes() + (want - cap) * SLOT) {
            self.spill()?;
            if self.used + width <= self.values.capacity() {
                return Ok(());
            }
        }
        let want = want.max(self.used + width);
        self.values
            .reserve_exact(want.saturating_sub(self.values.len()));
        Ok(())
    }

    /// Buffers a copy of `row` (its strings copied into blocks the buffer already holds
    /// where they fit).
    pub fn push_ref(&mut self, row: &[Value]) -> Result<()> {
        self.room_for(row.len())?;
        let start = self.used;
        for v in row {
            if let Some(slot) = self.values.get_mut(self.used) {
                let before = slot.heap_bytes();
                assign(slot, v);
                self.string_bytes = self.string_bytes - before + slot.heap_bytes();
            } else {
                self.string_bytes += v.heap_bytes();
                self.values.push(v.clone());
            }
            self.used += 1;
        }
        self.after_push(start, row.len(), row_size(row))
    }

    /// Buffers `row`, moving its values in.
    pub fn push(&mut self, row: Vec<Value>) -> Result<()> {
        self.room_for(row.len())?;
        let start = self.used;
        let size = row_size(&row);
        let width = row.len();
        for v in row {
            self.string_bytes += v.heap_bytes();
            if let Some(slot) = self.values.get_mut(self.used) {
                self.string_bytes -= slot.heap_bytes();
                *slot = v;
            } else {
                self.values.push(v);
            }
            self.used += 1;
        }
        self.after_push(start, width, size)
    }

    /// Records the row just copied to `values[start..start + width]`; spills when the
    /// grant cannot hold the buffer any more.
    fn after_push(&mut self, start: usize, width: usize, size: usize) -> Result<()> {
        self.rows_total += 1;
        self.row_bytes_total += size as u64;
        if self.rows.capacity() == 0 {
            // One allocation for a small sort's rows (a 100-row range, a page of
            // results) instead of doubling from 4.
            self.rows.reserve_exact(FIRST_ROWS);
        }
        self.rows.push((start, width));
        if !self.grant.fits(self.bytes()) {
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

    /// Orders the buffered rows (stable: ties keep the order they came in). A row's
    /// first slot grows with the order rows were buffered in, so ties broken by it give
    /// the stable order without the scratch buffer a stable sort allocates.
    fn sort_buffer(&mut self) {
        let cmp = self.cmp;
        let values = &self.values;
        self.rows.sort_unstable_by(|&(a, an), &(b, bn)| {
            cmp(&values[a..a + an], &values[b..b + bn]).then(a.cmp(&b))
        });
    }

    /// How many of `n` sorted rows are worth writing.
    fn kept(&self, n: usize) -> usize {
        match self.keep {
            Some(k) => n.min(usize::try_from(k).unwrap_or(usize::MAX)),
            None => n,
        }
    }

    fn spill(&mut self) -> Result<()> {
        self.sort_buffer();
        if self.file.is_none() {
            self.file = Some(tempfile::tempfile_in(&self.tmpdir).map_err(|e| self.io(e))?);
        }
        let Some(file) = self.file.as_ref() else {
            return Err(Error::Internal("sort run file".into()));
        };
        let start = self.file_end;
        let mut w = BufWriter::with_capacity(32 << 10, Positioned { file, at: start });
        let mut buf = Vec::new();
        let n = self.kept(self.rows.len());
        for &(s, width) in &self.rows[..n] {
            buf.clear();
            encode_row(&self.values[s..s + width], &mut buf);
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
        self.rows.clear();
        self.used = 0;
        // The values stay for the next run's rows, as many as the grant holds: the last
        // row may have taken it past what it could get.
        while !self.grant.fits(self.bytes()) {
            match self.values.pop() {
                Some(v) => self.string_bytes -= v.heap_bytes(),
                None => {
                    self.values = Vec::new();
                    self.rows = Vec::new();
                    self.string_bytes = 0;
                    break;
                }
            }
        }
        Ok(())
    }

    /// Sorts and hands every row to `f` in order; `f` returns false to stop early.
    pub fn finish(self, f: &mut dyn FnMut(Vec<Value>) -> Result<bool>) -> Result<()> {
        // The rows are handed over: their values move out of the buffer.
        self.finish_mut(&mut |r| f(r.iter_mut().map(std::mem::take).collect()))
    }

    /// [`ExternalSorter::finish`] lending each row instead of giving it: nothing is
    /// allocated per row.
    pub fn finish_ref(self, f: &mut dyn FnMut(&[Value]) -> Result<bool>) -> Result<()> {
        self.finish_mut(&mut |r| f(r))
    }

    fn finish_mut(mut self, f: &mut dyn FnMut(&mut [Value]) -> Result<bool>) -> Result<()> {
        if self.runs.is_empty() {
            self.sort_buffer();
            let rows = std::mem::take(&mut self.rows);
            for (s, width) in rows {
                if !f(&mut self.values[s..s + width])? {
                    break;
                }
            }
            return Ok(());
        }
        if !self.rows.is_empty() {
            self.spill()?;
        }
        // The merge holds its own windows and rows out of the grant: the buffer's
        // values are no longer needed.
        self.values = Vec::new();
        self.rows = Vec::new();
        self.string_bytes = 0;
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
        let keep = self.kept(usize::MAX);
        for group in runs.chunks(fan_in) {
            let Some(file) = self.file.as_ref() else {
                return Err(Error::Internal("sort run file".into()));
            };
            let start = self.file_end;
            let mut w = BufWriter::with_capacity(MIN_WINDOW, Positioned { file, at: start });
            let mut buf = Vec::new();
            let mut failed = None;
            let mut written = 0usize;
            self.merge(group, MIN_WINDOW, &mut |row| {
                buf.clear();
                encode_row(row, &mut buf);
                let r = w
                    .write_all(&(buf.len() as u32).to_le_bytes())
                    .and_then(|()| w.write_all(&buf));
                written += 1;
                match r {
                    Ok(()) => Ok(written < keep),
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
    /// Each run's next row is decoded into the same row every time; a binary heap of
    /// run numbers orders them (ties by run number keep the sort stable).
    fn merge(
        &self,
        runs: &[(u64, u64)],
        window: usize,
        f: &mut dyn FnMut(&mut [Value]) -> Result<bool>,
    ) -> Result<()> {
        let cmp = self.cmp;
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
        let mut heads: Vec<Vec<Value>> = vec![Vec::new(); runs.len()];
        let mut heap = Vec::with_capacity(runs.len());
        for (i, r) in readers.iter_mut().enumerate() {
            if r.read_row_into(&mut heads[i])? {
                heap.push(i);
            }
        }
        let before = |heads: &[Vec<Value>], a: usize, b: usize| {
            cmp(&heads[a], &heads[b]).then(a.cmp(&b)) == Ordering::Less
        };
        // Heapify: the smallest head at heap[0].
        for i in (0..heap.len() / 2).rev() {
            sift_down(&mut heap, i, &|a, b| before(&heads, a, b));
        }
        while let Some(&run) = heap.first() {
            if !f(&mut heads[run])? {
                break;
            }
            if !readers[run].read_row_into(&mut heads[run])? {
                let last = heap.len() - 1;
                heap.swap(0, last);
                heap.pop();
            }
            sift_down(&mut heap, 0, &|a, b| before(&heads, a, b));
        }
        Ok(())
    }
}

/// Moves `heap[i]` down until neither child comes `before` it.
fn sift_down(heap: &mut [usize], mut i: usize, before: &dyn Fn(usize, usize) -> bool) {
    loop {
        let l = 2 * i + 1;
        if l >= heap.len() {
            return;
        }
        let r = l + 1;
        let c = if r < heap.len() && before(heap[r], heap[l]) {
            r
        } else {
            l
        };
        if !before(heap[c], heap[i]) {
            return;
        }
        heap.swap(i, c);
        i = c;
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

    /// Decodes the run's next row into `row`; false at the run's end.
    fn read_row_into(&mut self, row: &mut Vec<Value>) -> Result<bool> {
        if !self.fill(4)? {
            return Ok(false);
        }
        let mut len = [0u8; 4];
        len.copy_from_slice(&self.window[self.pos..self.pos + 4]);
        let len = u32::from_le_bytes(len) as usize;
        self.pos += 4;
        if !self.fill(len)? {
            return Err(Error::Internal("truncated sort run".into()));
        }
        decode_row_into(&self.window[self.pos..self.pos + len], row)
            .ok_or_else(|| Error::Internal("malformed sort run".into()))?;
        self.pos += len;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temp_rows::decode_row;
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

    /// Rows of (key, seq, text): keys repeat (ties), some are NULL, texts vary in
    /// length and kind so that reused slots get longer, shorter and other strings.
    fn mixed_rows(n: i64) -> Vec<Vec<Value>> {
        (0..n)
            .map(|i| {
                let k = (i * 7919) % 997;
                let key = if k % 50 == 0 {
                    Value::Null
                } else {
                    Value::Int(k % 300)
                };
                let len = ((i * 31) % 90) as usize;
                let text = match i % 5 {
                    0 => Value::Json(vec![b'j'; len]),
                    1 => Value::Member {
                        number: i as u64,
                        text: vec![b'm'; len],
                    },
                    2 => Value::Double(i as f64),
                    _ => Value::Bytes(format!("{i:05}").repeat(len / 5 + 1).into_bytes()),
                };
                vec![key, Value::Int(i), text]
            })
            .collect()
    }

    /// NULL first, then by key; ties keep their input order (the sort is stable).
    fn by_key(a: &[Value], b: &[Value]) -> Ordering {
        match (&a[0], &b[0]) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Less,
            (_, Value::Null) => Ordering::Greater,
            (x, y) => x.to_i64().cmp(&y.to_i64()),
        }
    }

    fn sorted(rows: &[Vec<Value>], budget: usize, keep: Option<u64>) -> (Vec<Vec<Value>>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let cmp = by_key;
        let mut s = ExternalSorter::new(budget, dir.path(), &cmp, Component::Sort).unwrap();
        s.keep_first(keep);
        for r in rows {
            s.push_ref(r).unwrap();
        }
        let runs = s.runs();
        let mut got = Vec::new();
        s.finish_ref(&mut |r| {
            got.push(r.to_vec());
            Ok(true)
        })
        .unwrap();
        (got, runs)
    }

    #[test]
    fn reused_slots_give_the_rows_pushed() {
        let rows = mixed_rows(30_000);
        let mut want = rows.clone();
        want.sort_by(|a, b| by_key(a, b));
        let (got, runs) = sorted(&rows, 64 << 10, None);
        assert!(runs > 10, "expected many runs, got {runs}");
        assert_eq!(got, want);
        // In memory: the same rows in the same order.
        let (got, runs) = sorted(&rows, 64 << 20, None);
        assert_eq!(runs, 0);
        assert_eq!(got, want);
    }

    #[test]
    fn owned_rows_sort_as_lent_ones() {
        let rows = mixed_rows(20_000);
        let mut want = rows.clone();
        want.sort_by(|a, b| by_key(a, b));
        let dir = tempfile::tempdir().unwrap();
        let cmp = by_key;
        let mut s = ExternalSorter::new(32 << 10, dir.path(), &cmp, Component::Sort).unwrap();
        for r in rows {
            s.push(r).unwrap();
        }
        assert!(s.runs() > 3);
        let mut got = Vec::new();
        s.finish(&mut |r| {
            got.push(r);
            Ok(true)
        })
        .unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn a_kept_prefix_is_the_full_sorts_prefix() {
        let rows = mixed_rows(30_000);
        let mut want = rows.clone();
        want.sort_by(|a, b| by_key(a, b));
        for keep in [0u64, 1, 5, 4_999, 12_345, 29_999, 30_000, 1 << 40] {
            for budget in [32 << 10, 256 << 10, 64 << 20] {
                let (got, _) = sorted(&rows, budget, Some(keep));
                let n = (keep as usize).min(rows.len());
                // Rows past `keep` may be missing; those before it are exactly right.
                assert!(got.len() >= n, "keep {keep} budget {budget}");
                assert_eq!(got[..n], want[..n], "keep {keep} budget {budget}");
            }
        }
    }

    #[test]
    fn kept_runs_write_less() {
        let rows = mixed_rows(30_000);
        let dir = tempfile::tempdir().unwrap();
        let cmp = by_key;
        let mut all = ExternalSorter::new(64 << 10, dir.path(), &cmp, Component::Sort).unwrap();
        let mut few = ExternalSorter::new(64 << 10, dir.path(), &cmp, Component::Sort).unwrap();
        few.keep_first(Some(10));
        for r in &rows {
            all.push_ref(r).unwrap();
            few.push_ref(r).unwrap();
        }
        assert!(few.runs() > 3);
        assert!(
            few.file_end * 5 < all.file_end,
            "{} vs {}",
            few.file_end,
            all.file_end
        );
    }

    #[test]
    fn decoding_into_a_used_row_equals_decoding_afresh() {
        let rows = mixed_rows(200);
        let mut row = Vec::new();
        let mut b = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            // Rows of other widths in between: the reused row grows and shrinks.
            let r: Vec<Value> = r.iter().cycle().take(1 + i % 5).cloned().collect();
            b.clear();
            encode_row(&r, &mut b);
            decode_row_into(&b, &mut row).unwrap();
            assert_eq!(row, r);
            assert_eq!(decode_row(&b).unwrap(), r);
        }
    }
}
