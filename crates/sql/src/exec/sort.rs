//! ORDER BY beyond memory: an external merge sort that holds at most `sort_buffer_size`
//! bytes of rows, sorts each full buffer and writes it to a temporary file in `tmpdir`
//! (a "run"), then merges the runs with a heap. Rows that fit in the buffer never touch
//! disk.
//!
//! Run files are created already unlinked (`O_TMPFILE` or create-then-unlink), so they
//! vanish when the statement ends, fails, or the server crashes: there are never
//! leftovers to clean up at startup.
//!
//! Run format: a sequence of rows, each `u32` byte length then the row encoded by
//! [`encode_row`] (per value a tag byte and its payload, little-endian).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use strata_types::{DateTime, Decimal, Error, Result, Value};

pub type Compare<'a> = dyn Fn(&[Value], &[Value]) -> Ordering + 'a;

pub struct ExternalSorter<'a> {
    budget: usize,
    tmpdir: PathBuf,
    buffer: Vec<Vec<Value>>,
    buffered_bytes: usize,
    runs: Vec<File>,
    cmp: &'a Compare<'a>,
}

/// Approximate bytes a row occupies in memory.
fn row_size(row: &[Value]) -> usize {
    24 + row
        .iter()
        .map(|v| match v {
            Value::Bytes(b) => 32 + b.len(),
            _ => 32,
        })
        .sum::<usize>()
}

impl<'a> ExternalSorter<'a> {
    pub fn new(budget: usize, tmpdir: &Path, cmp: &'a Compare<'a>) -> ExternalSorter<'a> {
        ExternalSorter {
            budget: budget.max(32 << 10),
            tmpdir: tmpdir.to_path_buf(),
            buffer: Vec::new(),
            buffered_bytes: 0,
            runs: Vec::new(),
            cmp,
        }
    }

    pub fn push(&mut self, row: Vec<Value>) -> Result<()> {
        self.buffered_bytes += row_size(&row);
        self.buffer.push(row);
        if self.buffered_bytes > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Number of runs written to disk so far (0 when everything fit in memory).
    #[cfg(test)]
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> Result<()> {
        let cmp = self.cmp;
        self.buffer.sort_by(|a, b| cmp(a, b));
        let io = |e| {
            Error::io(
                format!("writing a sort run in {}", self.tmpdir.display()),
                e,
            )
        };
        let file = tempfile::tempfile_in(&self.tmpdir).map_err(io)?;
        let mut w = BufWriter::with_capacity(256 << 10, file);
        let mut buf = Vec::new();
        for row in self.buffer.drain(..) {
            buf.clear();
            encode_row(&row, &mut buf);
            w.write_all(&(buf.len() as u32).to_le_bytes()).map_err(io)?;
            w.write_all(&buf).map_err(io)?;
        }
        let mut file = w.into_inner().map_err(|e| io(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        self.runs.push(file);
        self.buffered_bytes = 0;
        Ok(())
    }

    /// Sorts and hands every row to `f` in order; `f` returns false to stop early.
    pub fn finish(mut self, f: &mut dyn FnMut(Vec<Value>) -> Result<bool>) -> Result<()> {
        let cmp = self.cmp;
        if self.runs.is_empty() {
            self.buffer.sort_by(|a, b| cmp(a, b));
            for row in self.buffer {
                if !f(row)? {
                    break;
                }
            }
            return Ok(());
        }
        if !self.buffer.is_empty() {
            self.spill()?;
        }
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
        let mut readers: Vec<BufReader<File>> = self
            .runs
            .into_iter()
            .map(|f| BufReader::with_capacity(64 << 10, f))
            .collect();
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(row) = read_row(r)? {
                heap.push(Head { row, run: i, cmp });
            }
        }
        while let Some(Head { row, run, .. }) = heap.pop() {
            if let Some(next) = read_row(&mut readers[run])? {
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

fn read_row(r: &mut impl Read) -> Result<Option<Vec<Value>>> {
    let io = |e| Error::io("reading a sort run", e);
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(io(e)),
    }
    let mut buf = vec![0u8; u32::from_le_bytes(len) as usize];
    r.read_exact(&mut buf).map_err(io)?;
    decode_row(&buf)
        .map(Some)
        .ok_or_else(|| Error::Internal("malformed sort run".into()))
}

/// Encodes a row for a sort run.
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
            Value::Decimal(d) => {
                out.push(4);
                out.extend_from_slice(&d.mantissa.to_le_bytes());
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
            Value::Json(b) => {
                out.push(7);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }
}

pub fn decode_row(mut b: &[u8]) -> Option<Vec<Value>> {
    fn take<'x>(b: &mut &'x [u8], n: usize) -> Option<&'x [u8]> {
        if b.len() < n {
            return None;
        }
        let (h, t) = b.split_at(n);
        *b = t;
        Some(h)
    }
    let mut row = Vec::new();
    while let Some((&tag, rest)) = b.split_first() {
        b = rest;
        row.push(match tag {
            0 => Value::Null,
            1 => Value::Int(i64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?)),
            2 => Value::UInt(u64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?)),
            3 => Value::Double(f64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?)),
            4 => {
                let m = i128::from_le_bytes(take(&mut b, 16)?.try_into().ok()?);
                let s = take(&mut b, 2)?;
                Value::Decimal(Decimal::new(m, s[0]).with_shown(s[1]))
            }
            5 => {
                let n = u32::from_le_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
                Value::Bytes(take(&mut b, n)?.to_vec())
            }
            6 => Value::DateTime(DateTime::unpack(u64::from_le_bytes(
                take(&mut b, 8)?.try_into().ok()?,
            ))),
            7 => {
                let n = u32::from_le_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
                Value::Json(take(&mut b, n)?.to_vec())
            }
            8 => {
                let n = u32::from_le_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
                Value::Bits(take(&mut b, n)?.to_vec())
            }
            _ => return None,
        });
    }
    Some(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_and_merges_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let cmp = |a: &[Value], b: &[Value]| a[0].to_i64().cmp(&b[0].to_i64());
        let mut s = ExternalSorter::new(32 << 10, dir.path(), &cmp);
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
