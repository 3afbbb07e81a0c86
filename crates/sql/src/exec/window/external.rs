//! Window functions over more rows than fit in the window's share of memory
//! (`tmp_table_size`): the rows go through the spilling sorter
//! ([`crate::exec::sort::ExternalSorter`], `sort_buffer_size` each) once per window —
//! ordered by its PARTITION BY and ORDER BY, then by input position — are evaluated one
//! partition at a time, and a last sort by input position gives them back in input
//! order, as [`super::eval::compute`] does.
//!
//! A partition is held in memory under a [`Grant`] of `memory/sql/window_partition` up
//! to `tmp_table_size` and computed by [`super::eval::compute_window`] (the same code
//! as the in-memory path); one larger than that is written to an unlinked file and
//! computed along it by [`super::stream`]. The grant returns to nothing after each
//! partition.
//!
//! An item (what is sorted and spilled) is the row's values, then one slot per call of
//! the block (NULL until its window has run), then the row's input position as an
//! unsigned integer, then the current window's PARTITION BY and ORDER BY values: the
//! block's columns stay first, so the calls' expressions read an item as the row.

use super::eval::{calls_of, compute_window};
use super::frame;
use super::stream::{self, Keys, PartitionWriter};
use crate::bind::window::{Window, WindowCall, WindowPlan};
use crate::exec::sort::{Compare, ExternalSorter};
use crate::expr::{sort_compare, EvalCtx};
use std::cmp::Ordering;
use std::path::Path;
use strata_engine::Flow;
use strata_types::memory::{Component, Grant, STEP};
use strata_types::{Collation, Error, Result, Value};

/// What the spilling path needs besides the rows.
pub struct Spill<'a> {
    pub plan: &'a WindowPlan,
    pub ecx: &'a EvalCtx<'a>,
    /// The windows that have calls, in the order they run.
    pub passes: Vec<usize>,
    /// A partition's share of memory (`tmp_table_size`).
    pub share: usize,
    /// Each sort's share (`sort_buffer_size`).
    pub sort_budget: usize,
    pub tmpdir: &'a Path,
}

/// Approximate bytes a row costs while its window is computed in memory: its values,
/// and per row the sort index, key copies and one result per call.
pub fn held_bytes(row: &[Value], calls: usize) -> usize {
    24 + 64 + 40 * calls + strata_types::memory::row_bytes(row)
}

fn key_count(w: &Window) -> usize {
    w.partition.len() + w.order.len()
}

fn seq_of(v: &Value) -> u64 {
    match v {
        Value::UInt(u) => *u,
        _ => 0,
    }
}

impl<'a> Spill<'a> {
    /// The sorts' comparisons: one per pass (its window's keys, then input position),
    /// then the last one by input position alone.
    pub fn comparators(&self) -> Vec<Box<Compare<'a>>> {
        let mut out: Vec<Box<Compare<'a>>> = Vec::new();
        for &wi in &self.passes {
            let w = &self.plan.windows[wi];
            let nk = key_count(w);
            out.push(Box::new(move |a: &[Value], b: &[Value]| {
                let (ka, kb) = (&a[a.len() - nk..], &b[b.len() - nk..]);
                for (i, (_, coll)) in w.partition.iter().enumerate() {
                    let o = sort_compare(&ka[i], &kb[i], *coll);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                let np = w.partition.len();
                for (i, (_, desc, coll)) in w.order.iter().enumerate() {
                    let o = sort_compare(&ka[np + i], &kb[np + i], *coll);
                    if o != Ordering::Equal {
                        return if *desc { o.reverse() } else { o };
                    }
                }
                seq_of(&a[a.len() - nk - 1]).cmp(&seq_of(&b[b.len() - nk - 1]))
            }));
        }
        out.push(Box::new(|a: &[Value], b: &[Value]| {
            seq_of(&a[a.len() - 1]).cmp(&seq_of(&b[b.len() - 1]))
        }));
        out
    }

    /// Appends the keys of pass `pass` (none past the last) to an item holding the row,
    /// its result slots and its position.
    fn add_keys(&self, item: &mut Vec<Value>, pass: usize) -> Result<()> {
        let Some(&wi) = self.passes.get(pass) else {
            return Ok(());
        };
        let w = &self.plan.windows[wi];
        let mut keys = Vec::with_capacity(key_count(w));
        for (e, _) in &w.partition {
            keys.push(e.eval(item, self.ecx)?);
        }
        for (e, _, _) in &w.order {
            keys.push(e.eval(item, self.ecx)?);
        }
        item.extend(keys);
        Ok(())
    }

    /// The item of the input row at position `seq`, ready for the first pass's sort.
    pub fn item(&self, mut row: Vec<Value>, seq: u64) -> Result<Vec<Value>> {
        row.extend(std::iter::repeat_n(Value::Null, self.plan.calls.len()));
        row.push(Value::UInt(seq));
        self.add_keys(&mut row, 0)?;
        Ok(row)
    }

    /// Runs every pass over the items in `first` (sorted by `cmps[0]`), then hands the
    /// rows, each with its calls' values appended, to `sink` in input order.
    pub fn run<'c>(
        &self,
        first: ExternalSorter<'c>,
        cmps: &'c [Box<Compare<'a>>],
        sink: &mut dyn FnMut(&[Value]) -> Result<Flow>,
    ) -> Result<Flow> {
        let mut current = first;
        for (i, &wi) in self.passes.iter().enumerate() {
            let cmp: &'c Compare<'a> = &*cmps[i + 1];
            let mut next =
                ExternalSorter::new(self.sort_budget, self.tmpdir, cmp, Component::Sort)?;
            let nk = key_count(&self.plan.windows[wi]);
            self.pass(wi, current, &mut |mut item| {
                item.truncate(item.len() - nk);
                self.add_keys(&mut item, i + 1)?;
                next.push(item)
            })?;
            current = next;
        }
        let mut flow = Flow::Continue;
        current.finish(&mut |mut item| {
            item.pop();
            flow = sink(&item)?;
            Ok(flow != Flow::Stop)
        })?;
        Ok(flow)
    }

    /// One window: reads the items in its order, gathers each partition and computes
    /// its calls into their slots, handing every item on to `emit`.
    fn pass(
        &self,
        wi: usize,
        sorted: ExternalSorter,
        emit: &mut dyn FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<()> {
        let w = &self.plan.windows[wi];
        let np = w.partition.len();
        let nk = key_count(w);
        let calls = calls_of(self.plan, wi);
        let mut part = Partition {
            spill: self,
            wi,
            calls: &calls,
            nk,
            frame: frame::resolve(&w.frame, self.ecx, &w.name)?,
            order: w.order.iter().map(|(_, d, c)| (*d, *c)).collect(),
            items: Vec::new(),
            bytes: 0,
            grant: Grant::unbounded_floor(Component::Window, self.share),
            writer: None,
            first: None,
        };
        let colls: Vec<Collation> = w.partition.iter().map(|p| p.1).collect();
        let same_partition = |a: &[Value], item: &[Value]| {
            let b = &item[item.len() - nk..item.len() - nk + np];
            a.iter()
                .zip(b)
                .zip(&colls)
                .all(|((x, y), c)| sort_compare(x, y, *c) == Ordering::Equal)
        };
        sorted.finish(&mut |item| {
            if part
                .first
                .as_deref()
                .is_some_and(|f| !same_partition(f, &item))
            {
                part.flush(emit)?;
            }
            part.push(item)?;
            Ok(true)
        })?;
        part.flush(emit)
    }
}

/// The partition being gathered by a pass.
struct Partition<'s, 'a> {
    spill: &'s Spill<'a>,
    wi: usize,
    calls: &'s [usize],
    nk: usize,
    frame: frame::Resolved,
    order: Vec<(bool, Collation)>,
    items: Vec<Vec<Value>>,
    bytes: usize,
    grant: Grant,
    /// Set once the partition outgrew its share: every item is in the file.
    writer: Option<PartitionWriter>,
    /// The partition's PARTITION BY values.
    first: Option<Vec<Value>>,
}

impl Partition<'_, '_> {
    fn push(&mut self, item: Vec<Value>) -> Result<()> {
        if self.first.is_none() {
            let at = item.len() - self.nk;
            let np = self.spill.plan.windows[self.wi].partition.len();
            self.first = Some(item[at..at + np].to_vec());
        }
        if let Some(w) = self.writer.as_mut() {
            return w.push(&item);
        }
        let b = held_bytes(&item, self.spill.plan.calls.len());
        if self.grant.fits(self.bytes + b) {
            self.bytes += b;
            self.items.push(item);
            return Ok(());
        }
        // Past the share: this partition goes to disk, and memory goes back.
        let mut w = PartitionWriter::new(self.spill.tmpdir)?;
        for it in self.items.drain(..) {
            w.push(&it)?;
        }
        w.push(&item)?;
        self.items = Vec::new();
        self.bytes = 0;
        self.grant.shrink_to(0);
        self.writer = Some(w);
        Ok(())
    }

    /// Computes the gathered partition's calls and hands its items on.
    fn flush(&mut self, emit: &mut dyn FnMut(Vec<Value>) -> Result<()>) -> Result<()> {
        let plan = self.spill.plan;
        let ncalls = plan.calls.len();
        let nk = self.nk;
        let slot = move |item: &Vec<Value>, c: usize| item.len() - nk - 1 - ncalls + c;
        if let Some(w) = self.writer.take() {
            let part = w.finish()?;
            let calls: Vec<&WindowCall> = self.calls.iter().map(|&c| &plan.calls[c]).collect();
            let keys = Keys {
                order_from_end: self.order.len(),
                order: &self.order,
            };
            let call_ids = self.calls;
            let rows = part.rows();
            let mut seen = 0usize;
            stream::evaluate(
                &part,
                &calls,
                &self.frame,
                &keys,
                &mut self.grant,
                self.spill.ecx,
                &mut |mut item, values| {
                    for (&c, v) in call_ids.iter().zip(values) {
                        let at = slot(&item, c);
                        item[at] = v;
                    }
                    seen += 1;
                    emit(item)?;
                    Ok(true)
                },
            )?;
            if seen != rows {
                return Err(Error::Internal(
                    "a spilled window partition lost rows".into(),
                ));
            }
        } else if !self.items.is_empty() {
            let mut results = vec![Vec::new(); ncalls];
            compute_window(plan, self.wi, &self.items, self.spill.ecx, &mut results)?;
            for (i, mut item) in self.items.drain(..).enumerate() {
                for &c in self.calls {
                    let at = slot(&item, c);
                    item[at] = std::mem::take(&mut results[c][i]);
                }
                emit(item)?;
            }
        }
        if self.items.capacity() > 1024 {
            self.items = Vec::new();
        }
        self.bytes = 0;
        self.first = None;
        // Back to one step at most: partitions of a few rows each do not take and
        // return memory every time.
        self.grant.shrink_to(STEP);
        Ok(())
    }
}
