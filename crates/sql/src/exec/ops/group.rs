//! The grouping operator: GROUP BY and aggregates, WITH ROLLUP and HAVING. Its output
//! rows are the group values followed by the aggregates' values, which is what HAVING,
//! window functions and the select list read.
//!
//! Groups are found by a hash map from the group values' sort keys (one hash and one
//! key comparison per row, where an ordered map compared keys along a path of log n)
//! and sorted by those keys once at the end, so they come out in GROUP BY order. When
//! their bytes pass `sort_buffer_size`, the operator abandons the in-memory groups,
//! runs its input again, sorts (key, aggregate inputs) rows through temporary files and
//! aggregates each run of equal keys as it streams back: memory stays bounded whatever
//! the number of groups.

use super::{BoxedOp, Operator, Sink};
use crate::bind::AggFunc;
use crate::exec::aggregate::{
    self, eval_inputs, feed, finish_state_in, input_count, new_state, AggState,
};
use crate::exec::sort::ExternalSorter;
use crate::expr::keys::group_key;
use crate::expr::EvalCtx;
use crate::plan::block::GroupPlan;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use strata_engine::Flow;
use strata_types::memory::{Component, Grant};
use strata_types::{Error, Result, Value};

pub struct Group<'a> {
    pub input: BoxedOp<'a>,
    pub plan: &'a GroupPlan,
    pub ecx: &'a EvalCtx<'a>,
    /// Bytes of groups held in memory before spilling (`sort_buffer_size`).
    pub budget: usize,
    pub tmpdir: &'a Path,
}

/// One group's running aggregates.
struct GroupState {
    states: Vec<AggState>,
    seen: Vec<Option<HashSet<Vec<u8>>>>,
    keys: Vec<Value>,
    /// How many GROUP BY values this group keeps: all of them, or fewer for a
    /// WITH ROLLUP super-aggregate row (the rest show as NULL).
    level: usize,
}

impl Group<'_> {
    fn new_group(&self, keys: Vec<Value>, level: usize) -> GroupState {
        GroupState {
            states: self.plan.aggs.iter().map(new_state).collect(),
            seen: self
                .plan
                .aggs
                .iter()
                .map(|a| a.distinct.then(HashSet::new))
                .collect(),
            keys,
            level,
        }
    }

    /// Feeds one input row's aggregate arguments (all calls' inputs, concatenated);
    /// the values are moved out of `args` (a WITH ROLLUP row feeds a copy per level).
    fn accumulate(&self, g: &mut GroupState, args: &mut [Value], row_no: u64) -> Result<()> {
        let mut rest = args;
        for (i, spec) in self.plan.aggs.iter().enumerate() {
            let n = input_count(spec).min(rest.len());
            let (mine, after) = rest.split_at_mut(n);
            rest = after;
            feed(&mut g.states[i], &mut g.seen[i], spec, mine, row_no)?;
        }
        Ok(())
    }

    /// A finished group's output row, or None when HAVING rejects it.
    fn finish(&self, g: GroupState) -> Result<Option<Vec<Value>>> {
        let mut row = g.keys;
        for (state, spec) in g.states.into_iter().zip(&self.plan.aggs) {
            row.push(if spec.func == AggFunc::Grouping {
                aggregate::grouping_value(spec, g.level)
            } else {
                finish_state_in(state, spec, self.ecx.env)
            });
        }
        if let Some(h) = &self.plan.having {
            if !h.test(&row, self.ecx)? {
                return Ok(None);
            }
        }
        Ok(Some(row))
    }

    /// WITH ROLLUP: the key of the super-aggregate over the first `level` GROUP BY
    /// values. Group keys are prefix-free and never start with 0xFF, so the marker
    /// sorts this entry after every group that shares the prefix and before the next
    /// prefix, which is MySQL's output order.
    fn rollup_key(&self, full: &[Value], level: usize) -> (Vec<u8>, Vec<Value>) {
        let mut k = Vec::new();
        for ((_, coll), v) in self.plan.groups.iter().zip(full).take(level) {
            group_key(&mut k, v, *coll);
        }
        k.push(0xFF);
        let mut keys = full[..level].to_vec();
        keys.resize(self.plan.groups.len(), Value::Null);
        (k, keys)
    }

    /// Groups in memory, sorted by key. Returns None when they outgrew the budget (the
    /// caller spills).
    fn in_memory(&self, input: &mut BoxedOp<'_>) -> Result<Option<Vec<KeyedGroup>>> {
        let (gp, ecx) = (self.plan, self.ecx);
        let ng = gp.groups.len();
        let mut groups = Groups::default();
        let mut group_bytes = 0usize;
        // The groups' bytes are held under a grant: past sort_buffer_size, or when the
        // server's budget has no room, the operator spills to sorted runs instead.
        let mut grant = Grant::unbounded_floor(Component::Group, self.budget);
        let mut spill = false;
        let mut row_no = 0u64;
        let mut key = Vec::new();
        let mut args = Vec::new();
        input.run(&mut |r| {
            key.clear();
            for (e, coll) in &gp.groups {
                // Borrowed when it is a column: the key needs the value's bytes, not a
                // copy of a string per row.
                let v = e.operand(r, ecx)?;
                group_key(&mut key, &v, *coll);
            }
            let g = match groups.index.get(key.as_slice()) {
                Some(&at) => &mut groups.list[at].1,
                None => {
                    let keys = gp
                        .groups
                        .iter()
                        .map(|(e, _)| e.eval(r, ecx))
                        .collect::<Result<Vec<_>>>()?;
                    group_bytes += 2 * key.len()
                        + keys.iter().map(Value::approx_bytes).sum::<usize>()
                        + 48 * gp.aggs.len()
                        + 64;
                    if ng > 0 && !grant.fits(group_bytes) {
                        spill = true;
                        return Ok(Flow::Stop);
                    }
                    groups.insert(key.clone(), || self.new_group(keys, ng))
                }
            };
            args.clear();
            for spec in &gp.aggs {
                eval_inputs(spec, r, ecx, &mut args)?;
            }
            row_no += 1;
            if !gp.rollup {
                return self
                    .accumulate(g, &mut args, row_no)
                    .map(|()| Flow::Continue);
            }
            let full = g.keys.clone();
            self.accumulate(g, &mut args.clone(), row_no)?;
            for level in (0..ng).rev() {
                let (k, keys) = self.rollup_key(&full, level);
                let sg = groups.insert(k, || self.new_group(keys, level));
                self.accumulate(sg, &mut args.clone(), row_no)?;
            }
            Ok(Flow::Continue)
        })?;
        if spill {
            return Ok(None);
        }
        if groups.list.is_empty() && ng == 0 {
            // An aggregate over no rows still yields one row.
            groups.insert(vec![], || self.new_group(vec![], 0));
        }
        // Keys are distinct: the order is total without a stable sort.
        let mut list = groups.list;
        list.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(Some(list))
    }

    /// Too many groups for memory: reads the input again, sorts its rows by group key
    /// through temporary files, and aggregates each run of equal keys as it streams back.
    fn spilled(&self, input: &mut BoxedOp<'_>, sink: &mut Sink<'_>) -> Result<Flow> {
        let (gp, ecx) = (self.plan, self.ecx);
        let ng = gp.groups.len();
        let by_key = |a: &[Value], b: &[Value]| match (&a[0], &b[0]) {
            (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
            _ => Ordering::Equal,
        };
        let mut pre = ExternalSorter::new(self.budget, self.tmpdir, &by_key, Component::Group)?;
        input.run(&mut |r| {
            let mut key = Vec::new();
            let mut pre_row = Vec::with_capacity(1 + ng + gp.aggs.len());
            pre_row.push(Value::Null);
            for (e, coll) in &gp.groups {
                let v = e.eval(r, ecx)?;
                group_key(&mut key, &v, *coll);
                pre_row.push(v);
            }
            pre_row[0] = Value::Bytes(key);
            for spec in &gp.aggs {
                eval_inputs(spec, r, ecx, &mut pre_row)?;
            }
            pre.push(pre_row)?;
            Ok(Flow::Continue)
        })?;
        let mut current: Option<(Value, GroupState)> = None;
        let mut flow = Flow::Continue;
        let mut row_no = 0u64;
        pre.finish(&mut |mut r| {
            let args: Vec<Value> = r.drain(1 + ng..).collect();
            let keys: Vec<Value> = r.drain(1..).collect();
            let key = r.pop().unwrap_or(Value::Null);
            if current.as_ref().is_some_and(|(k, _)| *k != key) {
                if let Some((_, g)) = current.take() {
                    if let Some(out) = self.finish(g)? {
                        flow = sink(&out)?;
                        if flow == Flow::Stop {
                            return Ok(false);
                        }
                    }
                }
            }
            let (_, g) = current.get_or_insert_with(|| (key, self.new_group(keys, ng)));
            row_no += 1;
            let mut args = args;
            self.accumulate(g, &mut args, row_no)?;
            Ok(true)
        })?;
        if flow == Flow::Stop {
            return Ok(Flow::Stop);
        }
        if let Some((_, g)) = current.take() {
            if let Some(out) = self.finish(g)? {
                return sink(&out);
            }
        }
        Ok(Flow::Continue)
    }
}

impl Operator for Group<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        // The input is taken out for the run so the helpers can borrow the rest of self.
        let mut input: BoxedOp<'_> = std::mem::replace(&mut self.input, Box::new(Empty));
        let result = self.run_with(&mut input, sink);
        self.input = input;
        result
    }
}

impl Group<'_> {
    fn run_with(&self, input: &mut BoxedOp<'_>, sink: &mut Sink<'_>) -> Result<Flow> {
        match self.in_memory(input)? {
            Some(groups) => {
                for (_, g) in groups {
                    if let Some(out) = self.finish(g)? {
                        if sink(&out)? == Flow::Stop {
                            return Ok(Flow::Stop);
                        }
                    }
                }
                Ok(Flow::Continue)
            }
            None if self.plan.rollup => Err(Error::NotSupported(
                "WITH ROLLUP over more groups than sort_buffer_size holds".into(),
            )),
            None => self.spilled(input, sink),
        }
    }
}

/// A group and its key (the group values' sort key).
type KeyedGroup = (Vec<u8>, GroupState);

/// The in-memory groups: each in `list` in the order it was first seen, found by its
/// key through `index` (its place in `list`).
#[derive(Default)]
struct Groups {
    index: HashMap<Vec<u8>, usize>,
    list: Vec<KeyedGroup>,
}

impl Groups {
    /// The group of `key`, made by `new` when there is none yet.
    fn insert(&mut self, key: Vec<u8>, new: impl FnOnce() -> GroupState) -> &mut GroupState {
        let at = match self.index.get(key.as_slice()) {
            Some(&at) => at,
            None => {
                let at = self.list.len();
                self.index.insert(key.clone(), at);
                self.list.push((key, new()));
                at
            }
        };
        &mut self.list[at].1
    }
}

/// Stands in for the input while it is lent out.
struct Empty;

impl Operator for Empty {
    fn run(&mut self, _sink: &mut Sink<'_>) -> Result<Flow> {
        Ok(Flow::Continue)
    }
}
