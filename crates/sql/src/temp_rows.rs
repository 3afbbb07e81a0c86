//! Materialised rows of a derived table or CTE, in memory up to a budget
//! (`tmp_table_size`, as MySQL's internal temporary tables) and in a temporary file
//! beyond it, so `SELECT … FROM (SELECT … 25 million rows …) d` costs disk, not the
//! server's memory.
//!
//! The file is created already unlinked in `tmpdir` (it vanishes when the statement
//! ends, fails or the server dies) and is append-only while the rows are written;
//! readers then scan it with positioned reads (`read_at`), each with its own offset, so
//! several scans of the same rows (a derived table joined in an inner loop) can run
//! interleaved. Row format: `u32` little-endian length, then [`encode_row`] (per value a
//! tag byte and its payload), the same as the external sort's runs.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use strata_engine::Flow;
use strata_types::memory::{Component, Grant};
use strata_types::{DateTime, Decimal, Error, Result, Value};

/// Rows kept in memory first, then appended to an unlinked file.
pub struct TempRows {
    memory: Vec<Vec<Value>>,
    memory_bytes: usize,
    /// The rows' share of the server's memory budget (`tmp_table_size` at most): when it
    /// cannot grow, later rows go to the file.
    grant: Grant,
    /// What the rows are accounted as (a derived table's, INSERT … SELECT's).
    component: Component,
    tmpdir: PathBuf,
    /// The spill file while rows are being added; flushed and kept for reading after
    /// [`TempRows::finish`].
    writer: Option<BufWriter<File>>,
    /// The write buffer's grant while the rows spill.
    writer_grant: Option<Grant>,
    file: Option<File>,
    spilled_rows: u64,
    scratch: Vec<u8>,
}

/// Bytes a row occupies in memory: its slot in the list (24, and the list's spare
/// capacity as it doubles, counted as a second slot) and the row's own blocks.
fn row_bytes(row: &[Value]) -> usize {
    48 + strata_types::memory::row_bytes(row)
}

/// Bytes read from the spill file at a time by one scan, and written at a time while
/// the rows spill. Each such buffer is granted (a floor of its size, waited for like a
/// sort's first buffer): a hundred statements spilling at once held 6.6 MiB of 64 KiB
/// write buffers outside the budget. 16 KiB still reads and writes in few system calls.
const READ_CHUNK: usize = 16 << 10;

impl TempRows {
    /// Empty rows that may hold `budget` bytes in memory before spilling to `tmpdir`.
    pub fn new(budget: usize, tmpdir: &Path) -> TempRows {
        TempRows::accounted_as(Component::Derived, budget, tmpdir)
    }

    /// [`TempRows::new`] accounted under `component`.
    pub fn accounted_as(component: Component, budget: usize, tmpdir: &Path) -> TempRows {
        TempRows {
            memory: Vec::new(),
            memory_bytes: 0,
            grant: Grant::unbounded_floor(component, budget),
            component,
            tmpdir: tmpdir.to_path_buf(),
            writer: None,
            writer_grant: None,
            file: None,
            spilled_rows: 0,
            scratch: Vec::new(),
        }
    }

    /// Rows that are only ever held in memory (a recursive CTE's work table).
    pub fn in_memory(rows: Vec<Vec<Value>>) -> TempRows {
        let mut t = TempRows::new(usize::MAX, Path::new("."));
        t.memory = rows;
        t
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::io(
            format!("writing a temporary table in {}", self.tmpdir.display()),
            e,
        )
    }

    /// Adds a row; past the memory budget it goes to the spill file.
    pub fn push(&mut self, row: Vec<Value>) -> Result<()> {
        if self.writer.is_none() {
            let bytes = row_bytes(&row);
            if self.grant.fits(self.memory_bytes + bytes) {
                self.memory_bytes += bytes;
                self.memory.push(row);
                return Ok(());
            }
            self.writer_grant = Some(Grant::new(self.component, READ_CHUNK, READ_CHUNK)?);
            let file = tempfile::tempfile_in(&self.tmpdir).map_err(|e| self.io(e))?;
            self.writer = Some(BufWriter::with_capacity(READ_CHUNK, file));
        }
        self.scratch.clear();
        encode_row(&row, &mut self.scratch);
        let len = (self.scratch.len() as u32).to_le_bytes();
        let w = self
            .writer
            .as_mut()
            .map(|w| w.write_all(&len).and_then(|()| w.write_all(&self.scratch)));
        if let Some(Err(e)) = w {
            return Err(self.io(e));
        }
        self.spilled_rows += 1;
        Ok(())
    }

    /// Ends the writing: the rows can be read from now on.
    pub fn finish(&mut self) -> Result<()> {
        if let Some(w) = self.writer.take() {
            let file = w.into_inner().map_err(|e| self.io(e.into_error()))?;
            self.file = Some(file);
            self.writer_grant = None;
        }
        Ok(())
    }

    /// Number of rows.
    pub fn len(&self) -> u64 {
        self.memory.len() as u64 + self.spilled_rows
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether some rows went to disk.
    pub fn spilled(&self) -> bool {
        self.spilled_rows > 0
    }

    /// Calls `f` with every row in order until it answers [`Flow::Stop`].
    pub fn for_each(&self, f: &mut dyn FnMut(&[Value]) -> Result<Flow>) -> Result<Flow> {
        for r in &self.memory {
            if f(r)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        let Some(file) = &self.file else {
            return Ok(Flow::Continue);
        };
        let mut scan = FileScan::new(self.component, self.spilled_rows)?;
        while let Some(row) = scan.next(file)? {
            if f(&row)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }

    /// Every row in order, taken one at a time (the rows in memory moved out, those
    /// on disk read back); what the rows held is given back when the [`Drain`] ends.
    pub fn drain(self) -> Result<Drain> {
        let scan = match &self.file {
            Some(_) => Some(FileScan::new(self.component, self.spilled_rows)?),
            None => None,
        };
        Ok(Drain {
            memory: self.memory.into_iter(),
            file: self.file,
            scan,
            _grant: self.grant,
        })
    }
}

/// The rows of a [`TempRows`], one at a time ([`TempRows::drain`]).
pub struct Drain {
    memory: std::vec::IntoIter<Vec<Value>>,
    file: Option<File>,
    scan: Option<FileScan>,
    _grant: Grant,
}

impl Drain {
    /// The next row, None after the last.
    pub fn next_row(&mut self) -> Result<Option<Vec<Value>>> {
        if let Some(r) = self.memory.next() {
            return Ok(Some(r));
        }
        match (&mut self.scan, &self.file) {
            (Some(scan), Some(file)) => scan.next(file),
            _ => Ok(None),
        }
    }
}

/// One forward scan of a spill file: its read buffer, granted while it reads (a row
/// longer than the buffer grows it: counted too).
struct FileScan {
    grant: Grant,
    buf: Vec<u8>,
    /// Start of the unread part of `buf`.
    pos: usize,
    /// File offset just past `buf`.
    offset: u64,
    /// Rows not read yet.
    left: u64,
}

impl FileScan {
    fn new(component: Component, rows: u64) -> Result<FileScan> {
        Ok(FileScan {
            grant: Grant::new(component, usize::MAX, READ_CHUNK)?,
            buf: Vec::with_capacity(READ_CHUNK),
            pos: 0,
            offset: 0,
            left: rows,
        })
    }

    fn next(&mut self, file: &File) -> Result<Option<Vec<Value>>> {
        let io = |e| Error::io("reading a temporary table", e);
        let malformed = || Error::Internal("malformed temporary table row".into());
        if self.left == 0 {
            return Ok(None);
        }
        // Make sure the next row (length and bytes) is in the buffer.
        let need = |buf: &Vec<u8>, pos: usize| -> Option<usize> {
            let len = buf.get(pos..pos + 4)?;
            let n = u32::from_le_bytes(len.try_into().ok()?) as usize;
            (buf.len() >= pos + 4 + n).then_some(n)
        };
        let n = loop {
            if let Some(n) = need(&self.buf, self.pos) {
                break n;
            }
            self.buf.drain(..self.pos);
            self.pos = 0;
            let want = match self.buf.get(0..4) {
                Some(l) => 4 + u32::from_le_bytes(l.try_into().map_err(|_| malformed())?) as usize,
                None => 4,
            };
            let old = self.buf.len();
            self.buf.resize(old + READ_CHUNK.max(want), 0);
            // Beyond the floor only for a row longer than the buffer, and counted
            // when the budget has room (the row must be read either way).
            let _ = self.grant.fits(self.buf.capacity());
            let got = file
                .read_at(&mut self.buf[old..], self.offset)
                .map_err(io)?;
            self.buf.truncate(old + got);
            self.offset += got as u64;
            if got == 0 {
                return Err(malformed());
            }
        };
        let row = decode_row(&self.buf[self.pos + 4..self.pos + 4 + n]).ok_or_else(malformed)?;
        self.pos += 4 + n;
        self.left -= 1;
        Ok(Some(row))
    }
}

/// Encodes a row for a sort run or a spilled temporary table.
pub fn encode_row(row: &[Value], out: &mut Vec<u8>) {
    for v in row {
        match v {
            Value::Null => out.push(0),
            Value::Int(i) => {
                out.push(1);
                out.extend_from_slice(&i.to_le_bytes());
            }
            Value::UInt(u) => {
                out.push(2);
                out.extend_from_slice(&u.to_le_bytes());
            }
            Value::Double(d) => {
                out.push(3);
                out.extend_from_slice(&d.to_le_bytes());
            }
            Value::Decimal(d) if d.is_wide() => {
                // Past 38 digits: every digit held, as text.
                let text = d.held_text();
                out.push(10);
                out.push(d.shown);
                out.extend_from_slice(&(text.len() as u32).to_le_bytes());
                out.extend_from_slice(text.as_bytes());
            }
            Value::Decimal(d) => {
                out.push(4);
                out.extend_from_slice(&d.mantissa().to_le_bytes());
                out.push(d.scale);
                out.push(d.shown);
            }
            Value::Bytes(b) => {
                out.push(5);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
            Value::DateTime(dt) => {
                out.push(6);
                out.extend_from_slice(&dt.pack().to_le_bytes());
            }
            Value::Bits(b) => {
                out.push(8);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
            Value::Member { number, text } => {
                out.push(9);
                out.extend_from_slice(&number.to_le_bytes());
                out.extend_from_slice(&(text.len() as u32).to_le_bytes());
                out.extend_from_slice(text);
            }
            Value::Json(b) => {
                out.push(7);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }
}

pub fn decode_row(b: &[u8]) -> Option<Vec<Value>> {
    let mut row = Vec::new();
    decode_row_into(b, &mut row)?;
    Some(row)
}

/// [`decode_row`] into `row`, reusing its values' string blocks where the new value is
/// a string of the same kind: a sort's merge decodes every row of every run into the
/// same few rows, so it asks malloc for nothing once they have grown (hundreds of
/// connections sorting at once queued on malloc's lock for each decoded row).
pub fn decode_row_into(mut b: &[u8], row: &mut Vec<Value>) -> Option<()> {
    fn take<'x>(b: &mut &'x [u8], n: usize) -> Option<&'x [u8]> {
        if b.len() < n {
            return None;
        }
        let (h, t) = b.split_at(n);
        *b = t;
        Some(h)
    }
    fn len(b: &mut &[u8]) -> Option<usize> {
        Some(u32::from_le_bytes(take(b, 4)?.try_into().ok()?) as usize)
    }
    let mut i = 0;
    while let Some((&tag, rest)) = b.split_first() {
        b = rest;
        if i == row.len() {
            row.push(Value::Null);
        }
        let slot = &mut row[i];
        i += 1;
        match tag {
            0 => *slot = Value::Null,
            1 => *slot = Value::Int(i64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?)),
            2 => *slot = Value::UInt(u64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?)),
            3 => *slot = Value::Double(f64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?)),
            4 => {
                let m = i128::from_le_bytes(take(&mut b, 16)?.try_into().ok()?);
                let s = take(&mut b, 2)?;
                *slot = Value::Decimal(Decimal::new(m, s[0]).with_shown(s[1]));
            }
            10 => {
                let shown = take(&mut b, 1)?[0];
                let n = len(&mut b)?;
                let text = std::str::from_utf8(take(&mut b, n)?).ok()?;
                *slot = Value::Decimal(Decimal::parse_held(text)?.with_shown(shown));
            }
            5 | 7 | 8 => {
                let n = len(&mut b)?;
                let data = take(&mut b, n)?;
                match (tag, &mut *slot) {
                    (5, Value::Bytes(v)) | (7, Value::Json(v)) | (8, Value::Bits(v)) => {
                        v.clear();
                        v.extend_from_slice(data);
                    }
                    (5, _) => *slot = Value::Bytes(data.to_vec()),
                    (7, _) => *slot = Value::Json(data.to_vec()),
                    _ => *slot = Value::Bits(data.to_vec()),
                }
            }
            6 => {
                *slot = Value::DateTime(DateTime::unpack(u64::from_le_bytes(
                    take(&mut b, 8)?.try_into().ok()?,
                )))
            }
            9 => {
                let number = u64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?);
                let n = len(&mut b)?;
                let data = take(&mut b, n)?;
                if let Value::Member { number: m, text } = slot {
                    *m = number;
                    text.clear();
                    text.extend_from_slice(data);
                } else {
                    *slot = Value::Member {
                        number,
                        text: data.to_vec(),
                    };
                }
            }
            _ => return None,
        }
    }
    row.truncate(i);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: i64) -> Vec<Value> {
        vec![
            Value::Int(i),
            Value::Bytes(
                format!("row {i} ")
                    .repeat((i % 7) as usize + 1)
                    .into_bytes(),
            ),
            Value::Null,
        ]
    }

    fn collect(t: &TempRows) -> Vec<Vec<Value>> {
        let mut out = Vec::new();
        t.for_each(&mut |r| {
            out.push(r.to_vec());
            Ok(Flow::Continue)
        })
        .unwrap();
        out
    }

    #[test]
    fn rows_past_the_budget_go_to_disk_and_come_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = TempRows::new(16 << 10, dir.path());
        let n = 20_000;
        for i in 0..n {
            t.push(row(i)).unwrap();
        }
        t.finish().unwrap();
        assert!(t.spilled());
        assert_eq!(t.len(), n as u64);
        let all = collect(&t);
        assert_eq!(all.len(), n as usize);
        assert!(all.iter().enumerate().all(|(i, r)| *r == row(i as i64)));
        // The file is unlinked: nothing is left in tmpdir.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn two_scans_can_interleave_and_a_scan_can_stop() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = TempRows::new(4 << 10, dir.path());
        for i in 0..3000 {
            t.push(row(i)).unwrap();
        }
        t.finish().unwrap();
        let mut pairs = 0u64;
        t.for_each(&mut |outer| {
            if outer[0].to_i64() == Some(2) {
                return Ok(Flow::Stop);
            }
            t.for_each(&mut |_| {
                pairs += 1;
                Ok(Flow::Continue)
            })?;
            Ok(Flow::Continue)
        })
        .unwrap();
        assert_eq!(pairs, 6000);
    }

    #[test]
    fn small_results_stay_in_memory_and_rows_larger_than_a_chunk_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = TempRows::new(1 << 20, dir.path());
        t.push(row(1)).unwrap();
        t.finish().unwrap();
        assert!(!t.spilled());
        let mut big = TempRows::new(0, dir.path());
        let wide = vec![Value::Bytes(vec![b'z'; 3 * READ_CHUNK]), Value::Int(7)];
        big.push(wide.clone()).unwrap();
        big.push(row(2)).unwrap();
        big.finish().unwrap();
        assert_eq!(collect(&big), vec![wide, row(2)]);
    }
}
