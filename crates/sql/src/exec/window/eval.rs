//! Window functions in memory: given every row of a block (after WHERE, GROUP BY and
//! HAVING) — or, on the spilling path (`super::external`), one partition's rows —
//! sorts them by each window's PARTITION BY and ORDER BY, runs the calls over each
//! partition, and appends one value per call to every row, which keeps its place (so
//! an ORDER BY an index already gave still holds).
//!
//! Ranking functions, LAG/LEAD and NTILE are one pass per partition. An aggregate
//! whose frame starts at the partition's start (the default frame, the whole
//! partition) runs along the partition once, finishing a copy of its state at each
//! row; other frames are recomputed per row.

use super::frame::{self, Peers, RangeKey, Resolved};
use crate::bind::window::call::count_value;
use crate::bind::window::{WinFunc, WindowCall, WindowPlan};
use crate::exec::aggregate::{finish_state, new_state, update_state};
use crate::expr::{sort_compare, EvalCtx};
use std::cmp::Ordering;
use strata_types::{Collation, Error, Result, Value};

/// Appends the value of every call of `plan` to each row of `rows`.
pub fn compute(plan: &WindowPlan, rows: &mut [Vec<Value>], ecx: &EvalCtx) -> Result<()> {
    let mut results: Vec<Vec<Value>> = vec![Vec::new(); plan.calls.len()];
    for wi in 0..plan.windows.len() {
        compute_window(plan, wi, rows, ecx, &mut results)?;
    }
    for (i, r) in rows.iter_mut().enumerate() {
        for res in results.iter_mut() {
            r.push(std::mem::take(&mut res[i]));
        }
    }
    Ok(())
}

/// The calls of `plan` over window `wi`, indexes into `plan.calls`.
pub fn calls_of(plan: &WindowPlan, wi: usize) -> Vec<usize> {
    (0..plan.calls.len())
        .filter(|&c| plan.calls[c].window == wi)
        .collect()
}

/// Computes the calls over window `wi` for every row of `rows`: `results[c][i]` is call
/// `c`'s value at row `i` (the other calls' entries are left alone). Rows may carry more
/// values after the block's columns (the spilling path's bookkeeping); the expressions
/// read only the columns.
pub fn compute_window(
    plan: &WindowPlan,
    wi: usize,
    rows: &[Vec<Value>],
    ecx: &EvalCtx,
    results: &mut [Vec<Value>],
) -> Result<()> {
    let n = rows.len();
    let w = &plan.windows[wi];
    let calls = calls_of(plan, wi);
    if calls.is_empty() {
        return Ok(());
    }
    let frame = frame::resolve(&w.frame, ecx, &w.name)?;
    let mut part = Vec::with_capacity(n);
    let mut ord = Vec::with_capacity(n);
    for r in rows.iter() {
        part.push(
            w.partition
                .iter()
                .map(|(e, _)| e.eval(r, ecx))
                .collect::<Result<Vec<_>>>()?,
        );
        ord.push(
            w.order
                .iter()
                .map(|(e, _, _)| e.eval(r, ecx))
                .collect::<Result<Vec<_>>>()?,
        );
    }
    let cmp_part = |a: usize, b: usize| {
        for ((x, y), (_, coll)) in part[a].iter().zip(&part[b]).zip(&w.partition) {
            let o = sort_compare(x, y, *coll);
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    };
    let cmp_ord = |a: usize, b: usize| {
        for ((x, y), (_, desc, coll)) in ord[a].iter().zip(&ord[b]).zip(&w.order) {
            let o = sort_compare(x, y, *coll);
            if o != Ordering::Equal {
                return if *desc { o.reverse() } else { o };
            }
        }
        Ordering::Equal
    };
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| cmp_part(a, b).then_with(|| cmp_ord(a, b)));

    let mut runs = Vec::with_capacity(calls.len());
    for &c in &calls {
        runs.push(Run::new(&plan.calls[c], rows, ecx)?);
        results[c] = vec![Value::Null; n];
    }
    let colls: Vec<Collation> = w.order.iter().map(|o| o.2).collect();
    let mut ps = 0;
    while ps < n {
        let mut pe = ps + 1;
        while pe < n && cmp_part(idx[ps], idx[pe]) == Ordering::Equal {
            pe += 1;
        }
        let members = &idx[ps..pe];
        let keys: Vec<&[Value]> = members.iter().map(|&r| ord[r].as_slice()).collect();
        let peers = frame::peers(&keys, &colls);
        let range = match w.order.as_slice() {
            [(_, desc, coll)] => Some(RangeKey {
                keys: &keys,
                desc: *desc,
                coll: *coll,
            }),
            _ => None,
        };
        let partition = Partition {
            members,
            peers: &peers,
            frame: &frame,
            range: range.as_ref(),
        };
        for (run, &c) in runs.iter().zip(&calls) {
            run.partition(&partition, rows, ecx, &mut results[c])?;
        }
        ps = pe;
    }
    Ok(())
}

/// One partition: its rows (indexes into the block's rows) in window order.
struct Partition<'a> {
    members: &'a [usize],
    peers: &'a Peers,
    frame: &'a Resolved,
    range: Option<&'a RangeKey<'a>>,
}

impl Partition<'_> {
    fn frame_of(&self, j: usize) -> (usize, usize) {
        frame::bounds(self.frame, j, self.members.len(), self.peers, self.range)
    }
}

/// A call ready to run: its first argument's value at every row, and its constant
/// count argument (NTILE's buckets, LAG/LEAD's offset, NTH_VALUE's N).
struct Run<'a> {
    call: &'a WindowCall,
    values: Vec<Value>,
    count: u64,
}

/// Checks the constants of a block's windows (frame offsets, count arguments), which
/// may be parameters: done before the result set starts, so a bad value is an error
/// instead of a result.
pub fn check_constants(plan: &WindowPlan, ecx: &EvalCtx) -> Result<()> {
    for w in &plan.windows {
        frame::resolve(&w.frame, ecx, &w.name)?;
    }
    for call in &plan.calls {
        count_arg(call, ecx)?;
    }
    Ok(())
}

/// A call's constant count argument: NTILE's buckets, LAG/LEAD's offset (1 when not
/// given), NTH_VALUE's N; 0 for the other functions.
pub(super) fn count_arg(call: &WindowCall, ecx: &EvalCtx) -> Result<u64> {
    let (name, at, min, default) = match call.func {
        WinFunc::Ntile => ("ntile", 0, 1, 1),
        WinFunc::Lag => ("lag", 1, 0, 1),
        WinFunc::Lead => ("lead", 1, 0, 1),
        WinFunc::NthValue => ("nth_value", 1, 1, 1),
        _ => return Ok(0),
    };
    match call.args.get(at) {
        Some(e) => count_value(&e.eval(&[], ecx)?, min, name),
        None => Ok(default),
    }
}

impl<'a> Run<'a> {
    fn new(call: &'a WindowCall, rows: &[Vec<Value>], ecx: &EvalCtx) -> Result<Run<'a>> {
        let count = count_arg(call, ecx)?;
        let reads_values = matches!(
            call.func,
            WinFunc::Lag
                | WinFunc::Lead
                | WinFunc::FirstValue
                | WinFunc::LastValue
                | WinFunc::NthValue
                | WinFunc::Aggregate
        );
        let values = if reads_values {
            rows.iter()
                .map(|r| arg_value(call, r, ecx))
                .collect::<Result<Vec<_>>>()?
        } else {
            vec![]
        };
        Ok(Run {
            call,
            values,
            count,
        })
    }

    /// The first argument at a row (NULL for COUNT(*), which has none).
    fn value(&self, row: usize) -> Value {
        self.values.get(row).cloned().unwrap_or(Value::Null)
    }

    /// Computes the call for every row of one partition into `out`.
    fn partition(
        &self,
        p: &Partition,
        rows: &[Vec<Value>],
        ecx: &EvalCtx,
        out: &mut [Value],
    ) -> Result<()> {
        let m = p.members.len();
        let peers = p.peers;
        let count = usize::try_from(self.count).unwrap_or(usize::MAX);
        match self.call.func {
            WinFunc::RowNumber => {
                for (j, &r) in p.members.iter().enumerate() {
                    out[r] = Value::UInt(j as u64 + 1);
                }
            }
            WinFunc::Rank => {
                for (j, &r) in p.members.iter().enumerate() {
                    out[r] = Value::UInt(peers.start[j] as u64 + 1);
                }
            }
            WinFunc::DenseRank => {
                let mut rank = 0u64;
                for (j, &r) in p.members.iter().enumerate() {
                    if peers.start[j] == j {
                        rank += 1;
                    }
                    out[r] = Value::UInt(rank);
                }
            }
            WinFunc::PercentRank => {
                for (j, &r) in p.members.iter().enumerate() {
                    out[r] = Value::Double(if m <= 1 {
                        0.0
                    } else {
                        peers.start[j] as f64 / (m - 1) as f64
                    });
                }
            }
            WinFunc::CumeDist => {
                for (j, &r) in p.members.iter().enumerate() {
                    out[r] = Value::Double(peers.end[j] as f64 / m as f64);
                }
            }
            WinFunc::Ntile => {
                for (j, &r) in p.members.iter().enumerate() {
                    out[r] = Value::UInt(ntile(j, m, count) as u64);
                }
            }
            WinFunc::Lag | WinFunc::Lead => {
                for (j, &r) in p.members.iter().enumerate() {
                    let at = if self.call.func == WinFunc::Lag {
                        j.checked_sub(count)
                    } else {
                        j.checked_add(count).filter(|t| *t < m)
                    };
                    out[r] = match at {
                        Some(t) => self.value(p.members[t]),
                        // The default is evaluated on the current row.
                        None => match self.call.args.get(2) {
                            Some(d) => d.eval(&rows[r], ecx)?,
                            None => Value::Null,
                        },
                    };
                }
            }
            WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                for (j, &r) in p.members.iter().enumerate() {
                    let (s, e) = p.frame_of(j);
                    let at = match self.call.func {
                        WinFunc::FirstValue => (s < e).then_some(s),
                        WinFunc::LastValue => (s < e).then(|| e - 1),
                        _ => s.checked_add(count.saturating_sub(1)).filter(|t| *t < e),
                    };
                    out[r] = at.map_or(Value::Null, |t| self.value(p.members[t]));
                }
            }
            WinFunc::Aggregate => self.aggregate(p, out)?,
        }
        Ok(())
    }

    fn aggregate(&self, p: &Partition, out: &mut [Value]) -> Result<()> {
        let Some(spec) = &self.call.agg else {
            return Err(Error::Internal(
                "a window aggregate without its spec".into(),
            ));
        };
        if frame::starts_at_partition_start(p.frame) {
            // Frames only grow from row to row: add each row once.
            let mut state = new_state(spec);
            let mut added = 0;
            for (j, &r) in p.members.iter().enumerate() {
                let (_, e) = p.frame_of(j);
                while added < e {
                    update_state(&mut state, spec, self.value(p.members[added]))?;
                    added += 1;
                }
                out[r] = finish_state(state.clone(), spec)?;
            }
        } else {
            for (j, &r) in p.members.iter().enumerate() {
                let (s, e) = p.frame_of(j);
                let mut state = new_state(spec);
                for &q in &p.members[s..e] {
                    update_state(&mut state, spec, self.value(q))?;
                }
                out[r] = finish_state(state, spec)?;
            }
        }
        Ok(())
    }
}

/// A call's first argument at `row` (NULL for COUNT(*), which has none). A bit
/// aggregate reads a string as an unsigned integer, as grouping does
/// (`exec::aggregate::eval_inputs`): its leading digits, warning 1292 when cut.
pub(super) fn arg_value(call: &WindowCall, row: &[Value], ecx: &EvalCtx) -> Result<Value> {
    let Some(e) = call.args.first() else {
        return Ok(Value::Null);
    };
    let v = e.eval(row, ecx)?;
    let bits = call.agg.as_ref().is_some_and(|a| a.func.is_bitwise());
    Ok(match v {
        Value::Bytes(_) if bits => Value::UInt(crate::expr::int_context::uint_arg(&v, ecx)),
        v => v,
    })
}

/// The bucket (from 1) of position `j` when `m` rows are dealt into `buckets` buckets
/// as evenly as can be, the larger buckets first.
pub(super) fn ntile(j: usize, m: usize, buckets: usize) -> usize {
    let b = buckets.clamp(1, m.max(1));
    let (q, r) = (m / b, m % b);
    let big = r * (q + 1);
    if j < big {
        j / (q + 1) + 1
    } else {
        r + (j - big) / q.max(1) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntile_deals_the_larger_buckets_first() {
        let deal = |m, b| (0..m).map(|j| ntile(j, m, b)).collect::<Vec<_>>();
        assert_eq!(deal(7, 3), vec![1, 1, 1, 2, 2, 3, 3]);
        assert_eq!(deal(4, 4), vec![1, 2, 3, 4]);
        assert_eq!(deal(2, 5), vec![1, 2]);
        assert_eq!(deal(5, 1), vec![1; 5]);
    }
}
