//! One window partition larger than its share of memory (`tmp_table_size`): its rows,
//! already in window order, are written to a temporary file created unlinked in
//! `tmpdir`, and the calls run along it with forward-only cursors, one row at a time,
//! so memory holds a few rows and read windows whatever the partition's size.
//!
//! Every position a call reads moves forward as the current row does — the frame's
//! start and end, a peer group's end, LAG/LEAD's row, a RANGE bound (keys are sorted,
//! so its target only moves on) — so each gets its own cursor that only reads on. A
//! cursor asked for a row behind it starts again from the partition's first row, which
//! is slow but still right. An aggregate over a frame that does not start at the
//! partition's start keeps its frame's argument values in a queue (a sliding frame
//! holds its width); a frame whose values (with the other sliding calls') exceed the share is read again from disk for each row
//! (slow, as such a frame is in memory too, but bounded).
//!
//! The results are the same as [`super::eval`]'s for a partition held in memory (the
//! frame arithmetic is [`frame::bounds_with`], the ranking formulas the same); a unit
//! test runs both over the same rows.
//!
//! File format: the rows one after the other, each a `u32` little-endian byte length
//! then [`encode_row`]; the rows are the spilling window's items (see
//! [`super::external`]): the block's columns first, then bookkeeping the expressions do
//! not read.

use super::eval::{arg_value, count_arg, ntile};
use super::frame::{self, is_before, shifted, At, Resolved};
use crate::bind::window::Unit;
use crate::bind::window::{WinFunc, WindowCall};
use crate::exec::aggregate::{finish_state, new_state, update_state, AggState};
use crate::expr::{sort_compare, EvalCtx};
use crate::temp_rows::{decode_row, encode_row};
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use strata_types::memory::Grant;
use strata_types::{Collation, Error, Result, Value};

/// Bytes each cursor reads from the file at a time.
const CHUNK: usize = 32 << 10;

/// Writes one partition's rows to an unlinked file.
pub struct PartitionWriter {
    w: BufWriter<File>,
    rows: usize,
    scratch: Vec<u8>,
}

/// A partition written to disk, ready for its cursors.
pub struct SpilledPartition {
    file: File,
    end: u64,
    rows: usize,
}

fn write_err(e: std::io::Error) -> Error {
    Error::io("writing a window partition to tmpdir", e)
}

impl PartitionWriter {
    pub fn new(tmpdir: &Path) -> Result<PartitionWriter> {
        let file = tempfile::tempfile_in(tmpdir).map_err(|e| {
            Error::io(
                format!("creating a window partition file in {}", tmpdir.display()),
                e,
            )
        })?;
        Ok(PartitionWriter {
            w: BufWriter::with_capacity(CHUNK, file),
            rows: 0,
            scratch: Vec::new(),
        })
    }

    pub fn push(&mut self, row: &[Value]) -> Result<()> {
        self.scratch.clear();
        encode_row(row, &mut self.scratch);
        self.w
            .write_all(&(self.scratch.len() as u32).to_le_bytes())
            .and_then(|()| self.w.write_all(&self.scratch))
            .map_err(write_err)?;
        self.rows += 1;
        Ok(())
    }

    pub fn finish(self) -> Result<SpilledPartition> {
        let rows = self.rows;
        let mut file = self.w.into_inner().map_err(|e| write_err(e.into_error()))?;
        let end = file.flush().and_then(|()| {
            use std::io::Seek;
            file.stream_position()
        });
        Ok(SpilledPartition {
            end: end.map_err(write_err)?,
            file,
            rows,
        })
    }
}

impl SpilledPartition {
    pub fn rows(&self) -> usize {
        self.rows
    }

    fn cursor(&self) -> Cursor<'_> {
        Cursor {
            file: &self.file,
            end: self.end,
            next: 0,
            buf: Vec::new(),
            pos: 0,
            at: None,
            row: Vec::new(),
            row_offset: 0,
        }
    }
}

/// Reads a spilled partition's rows forward; [`Cursor::get`] a position at or after the
/// last one asked reads on, one before it starts again from the first row.
struct Cursor<'f> {
    file: &'f File,
    end: u64,
    /// File offset just past what `buf` holds.
    next: u64,
    buf: Vec<u8>,
    pos: usize,
    /// The position of `row`, None before the first read.
    at: Option<usize>,
    row: Vec<Value>,
    /// The file offset `row` starts at.
    row_offset: u64,
}

impl Cursor<'_> {
    fn fill(&mut self, n: usize) -> Result<bool> {
        if self.buf.len() - self.pos >= n {
            return Ok(true);
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        let want = n.max(CHUNK) - self.buf.len();
        let take = want.min((self.end - self.next) as usize);
        if take > 0 {
            let have = self.buf.len();
            self.buf.resize(have + take, 0);
            self.file
                .read_exact_at(&mut self.buf[have..], self.next)
                .map_err(|e| Error::io("reading a window partition", e))?;
            self.next += take as u64;
        }
        Ok(self.buf.len() >= n)
    }

    fn read_next(&mut self) -> Result<()> {
        let malformed = || Error::Internal("malformed window partition file".into());
        if !self.fill(4)? {
            return Err(malformed());
        }
        self.row_offset = self.next - (self.buf.len() - self.pos) as u64;
        let mut len = [0u8; 4];
        len.copy_from_slice(&self.buf[self.pos..self.pos + 4]);
        let len = u32::from_le_bytes(len) as usize;
        self.pos += 4;
        if !self.fill(len)? {
            return Err(malformed());
        }
        self.row = decode_row(&self.buf[self.pos..self.pos + len]).ok_or_else(malformed)?;
        self.pos += len;
        self.at = Some(self.at.map_or(0, |a| a + 1));
        Ok(())
    }

    /// The row at position `t` (which must be a row of the partition).
    fn get(&mut self, t: usize) -> Result<&[Value]> {
        if self.at.is_some_and(|a| a > t) {
            self.next = 0;
            self.buf.clear();
            self.pos = 0;
            self.at = None;
        }
        while self.at != Some(t) {
            self.read_next()?;
        }
        Ok(&self.row)
    }

    /// Puts the cursor where `other` is: its next read is `other`'s current row.
    fn seek_to(&mut self, other: &Cursor) {
        self.buf.clear();
        self.pos = 0;
        self.next = other.row_offset;
        self.at = other.at.and_then(|a| a.checked_sub(1));
    }

    /// The row at `t`, taken out (the cursor moves past it).
    fn take(&mut self, t: usize) -> Result<Vec<Value>> {
        self.get(t)?;
        Ok(std::mem::take(&mut self.row))
    }
}

/// Where a partition's window keys sit in each row, and how they compare.
pub struct Keys<'a> {
    /// Offset of the first ORDER BY key from the row's end.
    pub order_from_end: usize,
    /// (descending, collation) of each ORDER BY key.
    pub order: &'a [(bool, Collation)],
}

impl Keys<'_> {
    fn of<'r>(&self, row: &'r [Value]) -> &'r [Value] {
        let at = row.len() - self.order_from_end;
        &row[at..at + self.order.len()]
    }

    /// Whether two rows' ORDER BY keys (as [`Keys::of`] gives them) are equal.
    fn same(&self, a: &[Value], b: &[Value]) -> bool {
        a.iter()
            .zip(b)
            .zip(self.order)
            .all(|((x, y), (_, c))| sort_compare(x, y, *c) == Ordering::Equal)
    }
}

/// One RANGE offset bound's position, moving forward through the non-NULL keys.
struct RangeScan<'f> {
    cursor: Cursor<'f>,
    p: usize,
}

/// What a call keeps between rows.
enum CallState<'f> {
    None,
    /// LAG/LEAD and FIRST/LAST/NTH_VALUE: the row they read.
    Reader(Cursor<'f>),
    /// An aggregate whose frame starts at the partition's start: its running state.
    Running {
        cursor: Cursor<'f>,
        state: AggState,
        added: usize,
    },
    /// An aggregate over another frame: the frame's argument values from `base` on.
    Sliding {
        cursor: Cursor<'f>,
        queue: VecDeque<Value>,
        base: usize,
        bytes: usize,
    },
    /// A frame whose values do not fit in the share: each row's frame is read again
    /// from its start (`lead` follows the frames' starts, `scan` reads one frame).
    Rescan {
        lead: Cursor<'f>,
        scan: Cursor<'f>,
    },
}

/// Runs `calls` (with their result slots) over a spilled partition in window order,
/// handing each row and its calls' values to `out`; false from `out` stops.
#[allow(clippy::too_many_arguments)]
pub fn evaluate(
    part: &SpilledPartition,
    calls: &[&WindowCall],
    frame: &Resolved,
    keys: &Keys,
    grant: &mut Grant,
    ecx: &EvalCtx,
    out: &mut dyn FnMut(Vec<Value>, Vec<Value>) -> Result<bool>,
) -> Result<bool> {
    let m = part.rows;
    let mut main = part.cursor();
    let mut peer_scan = part.cursor();
    // A RANGE frame with offsets reads the single ORDER BY key.
    let range_key = match keys.order {
        [(desc, coll)] if frame.unit == Unit::Range => Some((*desc, *coll)),
        _ => None,
    };
    let nulls = match range_key {
        Some(_) if has_offset(frame) => {
            let mut c = part.cursor();
            let mut n = 0;
            for t in 0..m {
                if keys.of(c.get(t)?)[0].is_null() {
                    n += 1;
                }
            }
            n
        }
        _ => 0,
    };
    let (lo, hi) = match range_key {
        Some((true, _)) => (0, m - nulls),
        _ => (nulls, m),
    };
    let mut scans = [
        RangeScan {
            cursor: part.cursor(),
            p: lo,
        },
        RangeScan {
            cursor: part.cursor(),
            p: lo,
        },
    ];
    let counts: Vec<usize> = calls
        .iter()
        .map(|c| count_arg(c, ecx).map(|n| usize::try_from(n).unwrap_or(usize::MAX)))
        .collect::<Result<_>>()?;
    let mut states: Vec<CallState> = Vec::with_capacity(calls.len());
    for call in calls {
        states.push(match call.func {
            WinFunc::Lag
            | WinFunc::Lead
            | WinFunc::FirstValue
            | WinFunc::LastValue
            | WinFunc::NthValue => CallState::Reader(part.cursor()),
            WinFunc::Aggregate => {
                let Some(spec) = &call.agg else {
                    return Err(Error::Internal(
                        "a window aggregate without its spec".into(),
                    ));
                };
                if frame::starts_at_partition_start(frame) {
                    CallState::Running {
                        cursor: part.cursor(),
                        state: new_state(spec),
                        added: 0,
                    }
                } else {
                    CallState::Sliding {
                        cursor: part.cursor(),
                        queue: VecDeque::new(),
                        base: 0,
                        bytes: 0,
                    }
                }
            }
            _ => CallState::None,
        });
    }
    let value = |call: &WindowCall, row: &[Value]| arg_value(call, row, ecx);

    let mut prev: Option<Vec<Value>> = None;
    // Bytes of argument values the sliding calls' queues hold together.
    let mut frames = 0usize;
    let (mut peer_start, mut peer_end, mut dense) = (0usize, 0usize, 0u64);
    for j in 0..m {
        let row = main.take(j)?;
        // The peer group: rows equal on every ORDER BY key (all rows without one).
        let row_keys = keys.of(&row);
        if prev.as_deref().is_none_or(|p| !keys.same(p, row_keys)) {
            peer_start = j;
            dense += 1;
            peer_end = if keys.order.is_empty() { m } else { j + 1 };
            // As `frame::peers`: a group ends where a row differs from the one before.
            let mut last = row_keys.to_vec();
            while peer_end < m {
                let next = keys.of(peer_scan.get(peer_end)?);
                if !keys.same(&last, next) {
                    break;
                }
                last = next.to_vec();
                peer_end += 1;
            }
        }
        prev = Some(row_keys.to_vec());
        let mut failed = None;
        let (s, e) = frame::bounds_with(
            frame,
            j,
            m,
            (peer_start, peer_end),
            &mut |k, preceding, is_end| {
                let scan = &mut scans[usize::from(is_end)];
                match range_bound(scan, &row, keys, range_key, k, preceding, is_end, hi) {
                    Ok(Some(p)) => p,
                    // A NULL key's offset bounds are its peers.
                    Ok(None) => {
                        if is_end {
                            peer_end
                        } else {
                            peer_start
                        }
                    }
                    // The closure answers a position: the error is returned after it.
                    Err(e) => {
                        failed = Some(e);
                        0
                    }
                }
            },
        );
        if let Some(e) = failed {
            return Err(e);
        }
        let mut results = Vec::with_capacity(calls.len());
        for ((call, state), &count) in calls.iter().zip(&mut states).zip(&counts) {
            results.push(match call.func {
                WinFunc::RowNumber => Value::UInt(j as u64 + 1),
                WinFunc::Rank => Value::UInt(peer_start as u64 + 1),
                WinFunc::DenseRank => Value::UInt(dense),
                WinFunc::PercentRank => Value::Double(if m <= 1 {
                    0.0
                } else {
                    peer_start as f64 / (m - 1) as f64
                }),
                WinFunc::CumeDist => Value::Double(peer_end as f64 / m as f64),
                WinFunc::Ntile => Value::UInt(ntile(j, m, count) as u64),
                WinFunc::Lag | WinFunc::Lead => {
                    let at = if call.func == WinFunc::Lag {
                        j.checked_sub(count)
                    } else {
                        j.checked_add(count).filter(|t| *t < m)
                    };
                    match (at, &mut *state) {
                        (Some(t), CallState::Reader(c)) => value(call, c.get(t)?)?,
                        // The default is evaluated on the current row.
                        _ => match call.args.get(2) {
                            Some(d) => d.eval(&row, ecx)?,
                            None => Value::Null,
                        },
                    }
                }
                WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                    let at = match call.func {
                        WinFunc::FirstValue => (s < e).then_some(s),
                        WinFunc::LastValue => (s < e).then(|| e - 1),
                        _ => s.checked_add(count.saturating_sub(1)).filter(|t| *t < e),
                    };
                    match (at, &mut *state) {
                        (Some(t), CallState::Reader(c)) => value(call, c.get(t)?)?,
                        _ => Value::Null,
                    }
                }
                WinFunc::Aggregate => {
                    let Some(spec) = &call.agg else {
                        return Err(Error::Internal(
                            "a window aggregate without its spec".into(),
                        ));
                    };
                    match state {
                        CallState::Running {
                            cursor,
                            state,
                            added,
                        } => {
                            // Frames only grow from row to row: add each row once.
                            while *added < e {
                                let v = value(call, cursor.get(*added)?)?;
                                update_state(state, spec, v)?;
                                *added += 1;
                            }
                            finish_state(state.clone(), spec)?
                        }
                        CallState::Sliding {
                            cursor,
                            queue,
                            base,
                            bytes,
                        } => {
                            // Drop what the frame left behind, read what it reached.
                            while *base < s && !queue.is_empty() {
                                if let Some(v) = queue.pop_front() {
                                    *bytes -= 16 + v.approx_bytes();
                                    frames -= 16 + v.approx_bytes();
                                }
                                *base += 1;
                            }
                            if queue.is_empty() {
                                *base = s;
                            }
                            let mut fits = true;
                            while *base + queue.len() < e {
                                let v = value(call, cursor.get(*base + queue.len())?)?;
                                *bytes += 16 + v.approx_bytes();
                                frames += 16 + v.approx_bytes();
                                queue.push_back(v);
                                // Every sliding call's values share the grant.
                                if !grant.fits(frames) {
                                    fits = false;
                                    break;
                                }
                            }
                            if fits {
                                let mut st = new_state(spec);
                                for v in queue.iter().take(e.saturating_sub(s)) {
                                    update_state(&mut st, spec, v.clone())?;
                                }
                                finish_state(st, spec)?
                            } else {
                                // Too wide to hold: from now on each frame is read
                                // from disk, and the queue's memory goes back.
                                *queue = VecDeque::new();
                                frames -= *bytes;
                                *bytes = 0;
                                grant.shrink_to(frames);
                                let mut lead = part.cursor();
                                let mut scan = part.cursor();
                                let v = rescan(call, spec, &mut lead, &mut scan, s, e, &value)?;
                                *state = CallState::Rescan { lead, scan };
                                v
                            }
                        }
                        CallState::Rescan { lead, scan } => {
                            rescan(call, spec, lead, scan, s, e, &value)?
                        }
                        _ => Value::Null,
                    }
                }
            });
        }
        if !out(row, results)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// An aggregate over the frame `[s, e)` read from disk: `lead` moves to the frame's
/// start (frames' starts only move on), `scan` reads the frame from there.
fn rescan(
    call: &WindowCall,
    spec: &crate::bind::AggSpec,
    lead: &mut Cursor,
    scan: &mut Cursor,
    s: usize,
    e: usize,
    value: &dyn Fn(&WindowCall, &[Value]) -> Result<Value>,
) -> Result<Value> {
    let mut st = new_state(spec);
    if s < e {
        lead.get(s)?;
        scan.seek_to(lead);
        for t in s..e {
            update_state(&mut st, spec, value(call, scan.get(t)?)?)?;
        }
    }
    finish_state(st, spec)
}

fn has_offset(f: &Resolved) -> bool {
    [&f.start, &f.end]
        .iter()
        .any(|a| matches!(a, At::Preceding(_) | At::Following(_)))
}

/// The position a RANGE offset bound names for `row` (see `RangeKey::bound` in
/// [`frame`]): None when the row's key is NULL or there is no single key, whose
/// bounds are the row's peers.
#[allow(clippy::too_many_arguments)]
fn range_bound(
    scan: &mut RangeScan,
    row: &[Value],
    keys: &Keys,
    range_key: Option<(bool, Collation)>,
    k: &Value,
    preceding: bool,
    is_end: bool,
    hi: usize,
) -> Result<Option<usize>> {
    let Some((desc, coll)) = range_key else {
        return Ok(None);
    };
    let v = &keys.of(row)[0];
    if v.is_null() {
        return Ok(None);
    }
    // PRECEDING moves against the window order: down ascending, up descending.
    let target = shifted(v, k, preceding == desc);
    while scan.p < hi
        && is_before(
            &keys.of(scan.cursor.get(scan.p)?)[0],
            &target,
            desc,
            coll,
            is_end,
        )
    {
        scan.p += 1;
    }
    Ok(Some(scan.p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: i64) -> Vec<Value> {
        vec![Value::Int(i), Value::Bytes(vec![b'x'; (i % 300) as usize])]
    }

    #[test]
    fn cursors_read_on_start_again_and_follow_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = PartitionWriter::new(dir.path()).unwrap();
        let n = 2000;
        for i in 0..n {
            w.push(&row(i)).unwrap();
        }
        let part = w.finish().unwrap();
        assert_eq!(part.rows(), n as usize);
        // Unlinked: nothing is left in tmpdir.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mut c = part.cursor();
        assert_eq!(c.get(0).unwrap(), row(0).as_slice());
        assert_eq!(c.get(1500).unwrap(), row(1500).as_slice());
        // Behind the cursor: read again from the first row.
        assert_eq!(c.get(7).unwrap(), row(7).as_slice());
        assert_eq!(c.take(1999).unwrap(), row(1999));
        // A second cursor put where the first one is reads on from its row.
        let mut lead = part.cursor();
        lead.get(1234).unwrap();
        let mut scan = part.cursor();
        scan.seek_to(&lead);
        for t in 1234..1300 {
            assert_eq!(scan.get(t).unwrap(), row(t as i64).as_slice());
        }
    }
}
