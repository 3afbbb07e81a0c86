//! The grouping operator: GROUP BY and aggregates, WITH ROLLUP and HAVING. Its output
//! rows are the group values followed by the aggregates' values, which is what HAVING,
//! window functions and the select list read.
//!
//! Groups are found by a hash map from the group values' sort keys (one hash and one
//! key comparison per row, where an ordered map compared keys along a path of log n)
//! and sorted by those keys once at the end, so they come out in GROUP BY order. The
//! groups are MySQL's internal temporary table, so their bytes are bounded by
//! `tmp_table_size`: past it, the groups in memory stay and keep aggregating, and only
//! the rows of groups not in memory are written, as (key, group values, aggregate
//! inputs), to sorted runs through temporary files (`sort_buffer_size` a run). At the
//! end each run of equal keys is aggregated as it streams back and merged by key with
//! the in-memory groups: memory stays bounded whatever the number of groups, and the
//! input is read once.

use super::{BoxedOp, Operator, Sink};
use crate::bind::AggFunc;
use crate::exec::aggregate::{
    self, eval_inputs, feed, finish_state_in, input_count, new_state, AggState,
};
use crate::exec::sort::ExternalSorter;
use crate::expr::keys::group_key;
use crate::expr::EvalCtx;
use crate::hash_tables::{FastMap, FastSet};
use crate::plan::block::GroupPlan;
use std::cmp::Ordering;
use std::mem::size_of;
use std::path::Path;
use strata_engine::Flow;
use strata_types::memory::{Component, Grant};
use strata_types::{Error, Result, Value};

pub struct Group<'a> {
    pub input: BoxedOp<'a>,
    pub plan: &'a GroupPlan,
    pub ecx: &'a EvalCtx<'a>,
    /// Bytes of groups held in memory before new groups spill (`tmp_table_size`).
    pub budget: usize,
    /// Bytes of spilled rows sorted in memory per run (`sort_buffer_size`).
    pub sort_budget: usize,
    pub tmpdir: &'a Path,
}

/// One group's running aggregates.
struct GroupState {
    states: Vec<AggState>,
    seen: Vec<Option<FastSet<Vec<u8>>>>,
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
                .map(|a| a.distinct.then(FastSet::default))
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
                finish_state_in(state, spec, self.ecx.env)?
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

    /// Bytes one group costs in memory beyond its key and its values' own heap bytes:
    /// its entry in the list and in the hash index (the key is held once, by the index;
    /// the index's entries are moved to a vector to be sorted at the end), its state
    /// vectors, and an allocator header for each of its allocations.
    fn group_overhead(&self) -> usize {
        const ALLOC: usize = 16;
        let (ng, na) = (self.plan.groups.len(), self.plan.aggs.len());
        size_of::<Option<GroupState>>()
            + size_of::<(Vec<u8>, usize)>() * 8 / 7 // the index, at its load factor
            + size_of::<(Vec<u8>, usize)>() // its entry when sorted
            + ng * size_of::<Value>()
            + na * (size_of::<AggState>() + size_of::<Option<FastSet<Vec<u8>>>>())
            + 4 * ALLOC
    }

    /// Aggregates the input. Groups are held in memory while their bytes fit the budget
    /// (`tmp_table_size`); once they do not, the groups already in memory keep
    /// aggregating their rows, and only the rows of groups not in memory are written,
    /// with their group key, to sorted runs in temporary files. At the end the
    /// in-memory groups (sorted by key) and the spilled rows (aggregated per run of
    /// equal keys as they stream back) are merged by key: the two sets of keys are
    /// disjoint, so the output is in GROUP BY order either way. The input is read once.
    fn run_with(&self, input: &mut BoxedOp<'_>, sink: &mut Sink<'_>) -> Result<Flow> {
        let (gp, ecx) = (self.plan, self.ecx);
        let ng = gp.groups.len();
        let by_key = |a: &[Value], b: &[Value]| match (&a[0], &b[0]) {
            (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
            _ => Ordering::Equal,
        };
        let mut groups = Groups::default();
        let overhead = self.group_overhead();
        let mut group_bytes = 0usize;
        // The groups' bytes are held under a grant: past tmp_table_size, or when the
        // server's budget has no room, new groups go to sorted runs instead.
        let mut grant = Grant::unbounded_floor(Component::Group, self.budget);
        let mut spill: Option<ExternalSorter<'_>> = None;
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
            // Without GROUP BY every row is the one group's: no key to hash per row
            // (COUNT(*) or SUM over a whole table).
            let found = match (ng, groups.list.is_empty()) {
                (0, false) => Some(0),
                _ => groups.index.get(key.as_slice()).copied(),
            };
            let g = match found {
                Some(at) => &mut groups.list[at],
                None => {
                    let keys = gp
                        .groups
                        .iter()
                        .map(|(e, _)| e.eval(r, ecx))
                        .collect::<Result<Vec<_>>>()?;
                    if spill.is_none() {
                        group_bytes += overhead
                            + key.len()
                            + keys.iter().map(Value::heap_bytes).sum::<usize>();
                        if ng > 0 && !grant.fits(group_bytes) {
                            if gp.rollup {
                                return Err(Error::NotSupported(
                                    "WITH ROLLUP over more groups than tmp_table_size holds".into(),
                                ));
                            }
                            spill = Some(ExternalSorter::new(
                                self.sort_budget,
                                self.tmpdir,
                                &by_key,
                                Component::Group,
                            )?);
                        }
                    }
                    if let Some(sorter) = spill.as_mut() {
                        // A group not in memory: its row goes to the runs.
                        let mut pre_row = Vec::with_capacity(1 + ng + gp.aggs.len());
                        pre_row.push(Value::Bytes(key.clone()));
                        pre_row.extend(keys);
                        for spec in &gp.aggs {
                            eval_inputs(spec, r, ecx, &mut pre_row)?;
                        }
                        sorter.push(pre_row)?;
                        return Ok(Flow::Continue);
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
        if groups.list.is_empty() && ng == 0 {
            // An aggregate over no rows still yields one row.
            groups.insert(vec![], || self.new_group(vec![], 0));
        }
        // Keys are distinct: the order is total without a stable sort.
        let mut order: Vec<(Vec<u8>, usize)> = groups.index.into_iter().collect();
        order.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut slots: Vec<Option<GroupState>> = groups.list.into_iter().map(Some).collect();
        let mut memory = order
            .into_iter()
            .filter_map(move |(k, at)| Some((k, slots.get_mut(at)?.take()?)))
            .peekable();
        let Some(sorter) = spill else {
            for (_, g) in memory {
                if self.emit(g, sink)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
            return Ok(Flow::Continue);
        };
        let mut current: Option<(Vec<u8>, GroupState)> = None;
        let mut flow = Flow::Continue;
        sorter.finish(&mut |mut r| {
            let args: Vec<Value> = r.drain(1 + ng..).collect();
            let keys: Vec<Value> = r.drain(1..).collect();
            let Some(Value::Bytes(k)) = r.pop() else {
                return Err(Error::Internal("group run row without its key".into()));
            };
            if current.as_ref().is_none_or(|(c, _)| *c != k) {
                // A new spilled group: the one before it is complete, and so are the
                // in-memory groups whose keys sort before this one.
                if let Some((_, g)) = current.take() {
                    flow = self.emit(g, sink)?;
                }
                while flow == Flow::Continue && memory.peek().is_some_and(|(mk, _)| *mk < k) {
                    if let Some((_, g)) = memory.next() {
                        flow = self.emit(g, sink)?;
                    }
                }
                if flow == Flow::Stop {
                    return Ok(false);
                }
            }
            let (_, g) = current.get_or_insert_with(|| (k, self.new_group(keys, ng)));
            row_no += 1;
            let mut args = args;
            self.accumulate(g, &mut args, row_no)?;
            Ok(true)
        })?;
        if flow == Flow::Stop {
            return Ok(Flow::Stop);
        }
        if let Some((_, g)) = current.take() {
            if self.emit(g, sink)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        for (_, g) in memory {
            if self.emit(g, sink)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }

    /// Sends a finished group's row on, unless HAVING rejects it.
    fn emit(&self, g: GroupState, sink: &mut Sink<'_>) -> Result<Flow> {
        match self.finish(g)? {
            Some(out) => sink(&out),
            None => Ok(Flow::Continue),
        }
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

/// The in-memory groups: each in `list` in the order it was first seen, found by its
/// key (the group values' sort key) through `index` (its place in `list`). The key is
/// kept once, in the index: a DISTINCT or GROUP BY whose every row is a new group (a
/// sysbench distinct range) makes one copy of each key, not two.
#[derive(Default)]
struct Groups {
    index: FastMap<Vec<u8>, usize>,
    list: Vec<GroupState>,
}

impl Groups {
    /// The group of `key`, made by `new` when there is none yet.
    fn insert(&mut self, key: Vec<u8>, new: impl FnOnce() -> GroupState) -> &mut GroupState {
        let next = self.list.len();
        let at = *self.index.entry(key).or_insert(next);
        if at == next {
            self.list.push(new());
        }
        &mut self.list[at]
    }
}

/// Stands in for the input while it is lent out.
struct Empty;

impl Operator for Empty {
    fn run(&mut self, _sink: &mut Sink<'_>) -> Result<Flow> {
        Ok(Flow::Continue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind::{AggSpec, SType};
    use crate::expr::test_env::TestEnv;
    use crate::expr::Expr;
    use strata_types::Collation;

    /// Fixed (key, value) rows.
    struct Rows(Vec<Vec<Value>>);

    impl Operator for Rows {
        fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
            for r in &self.0 {
                if sink(r)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
            Ok(Flow::Continue)
        }
    }

    /// `SELECT k, COUNT(*), SUM(v), COUNT(DISTINCT v) … GROUP BY k` over `rows` with a
    /// group budget of `budget` bytes; the output rows as (k, count, sum, distinct), the
    /// sink stopping after `stop_after` rows.
    fn group_by(rows: Vec<Vec<Value>>, budget: usize, stop_after: usize) -> Vec<Vec<i64>> {
        let env = TestEnv::default();
        let ecx = EvalCtx::new(&[], &env);
        let plan = GroupPlan {
            groups: vec![(Expr::Column(0), Collation::Binary)],
            aggs: vec![
                AggSpec::new(
                    AggFunc::CountStar,
                    None,
                    false,
                    SType::Int,
                    Collation::Binary,
                ),
                AggSpec::new(
                    AggFunc::Sum,
                    Some(Expr::Column(1)),
                    false,
                    SType::Int,
                    Collation::Binary,
                ),
                AggSpec::new(
                    AggFunc::Count,
                    Some(Expr::Column(1)),
                    true,
                    SType::Int,
                    Collation::Binary,
                ),
            ],
            having: None,
            rollup: false,
        };
        let dir = std::env::temp_dir();
        let mut op = Group {
            input: Box::new(Rows(rows)),
            plan: &plan,
            ecx: &ecx,
            budget,
            sort_budget: 1024,
            tmpdir: &dir,
        };
        let mut out = Vec::new();
        op.run(&mut |r| {
            out.push(r.iter().map(|v| v.to_i64().unwrap_or(-1)).collect());
            Ok(if out.len() == stop_after {
                Flow::Stop
            } else {
                Flow::Continue
            })
        })
        .expect("groups");
        out
    }

    /// Rows whose keys come in an order where the first groups seen are neither the
    /// smallest nor the largest, so the in-memory and spilled keys interleave.
    fn rows(n: i64, groups: i64) -> Vec<Vec<Value>> {
        (0..n)
            .map(|i| {
                let k = (i * 7919 + 13) % groups;
                vec![Value::Int(k), Value::Int(i % 5)]
            })
            .collect()
    }

    fn expected(n: i64, groups: i64) -> Vec<Vec<i64>> {
        let mut want: Vec<Vec<i64>> = (0..groups).map(|k| vec![k, 0, 0, 0]).collect();
        let mut seen = vec![FastSet::default(); groups as usize];
        for r in rows(n, groups) {
            let (k, v) = (r[0].to_i64().unwrap(), r[1].to_i64().unwrap());
            let g = &mut want[k as usize];
            g[1] += 1;
            g[2] += v;
            if seen[k as usize].insert(v) {
                g[3] += 1;
            }
        }
        want
    }

    #[test]
    fn groups_past_the_budget_spill_and_merge_in_key_order() {
        // 3,000 groups in a few KiB: most groups spill, some stay in memory.
        let got = group_by(rows(20_000, 3_000), 8 << 10, usize::MAX);
        assert_eq!(got, expected(20_000, 3_000));
    }

    #[test]
    fn groups_within_the_budget_match_the_spilled_answer() {
        let got = group_by(rows(20_000, 3_000), 64 << 20, usize::MAX);
        assert_eq!(got, expected(20_000, 3_000));
    }

    #[test]
    fn a_stop_from_the_sink_ends_the_merge() {
        let got = group_by(rows(5_000, 1_000), 4 << 10, 7);
        assert_eq!(got, expected(5_000, 1_000)[..7].to_vec());
    }

    #[test]
    fn no_rows_give_no_groups_whatever_the_budget() {
        assert!(group_by(Vec::new(), 1, usize::MAX).is_empty());
    }
}
