//! The window operator: takes every input row (the block's rows after WHERE, or its
//! groups after HAVING), appends the value of each window function call, and passes the
//! rows on in input order.
//!
//! The rows are gathered in memory under a grant of `memory/sql/window_partition` up
//! to `tmp_table_size` and computed there ([`crate::exec::window::eval::compute`]).
//! When the grant cannot grow, the rows gathered so far and every later one go to the
//! spilling path instead ([`crate::exec::window::external`]): sorted runs on disk and
//! one partition in memory at a time, with the same results in the same order.

use super::{BoxedOp, Operator, Sink};
use crate::bind::window::WindowPlan;
use crate::exec::sort::ExternalSorter;
use crate::exec::window::eval::{calls_of, compute};
use crate::exec::window::external::{held_bytes, Spill};
use crate::expr::EvalCtx;
use std::path::Path;
use strata_engine::Flow;
use strata_types::memory::{Component, Grant};
use strata_types::{Result, Value};

pub struct Window<'a> {
    pub input: BoxedOp<'a>,
    pub plan: &'a WindowPlan,
    pub ecx: &'a EvalCtx<'a>,
    /// The rows' (and later one partition's) share of memory: `tmp_table_size`.
    pub budget: usize,
    /// Each sort's share on the spilling path: `sort_buffer_size`.
    pub sort_budget: usize,
    pub tmpdir: &'a Path,
}

impl Operator for Window<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let plan = self.plan;
        if plan.calls.is_empty() {
            // Named windows no call uses: nothing to append.
            return self.input.run(sink);
        }
        let spill = Spill {
            plan,
            ecx: self.ecx,
            passes: (0..plan.windows.len())
                .filter(|&wi| !calls_of(plan, wi).is_empty())
                .collect(),
            share: self.budget,
            sort_budget: self.sort_budget,
            tmpdir: self.tmpdir,
        };
        let cmps = spill.comparators();
        let ncalls = plan.calls.len();
        let mut grant = Grant::unbounded_floor(Component::Window, self.budget);
        let mut rows: Vec<Vec<Value>> = Vec::new();
        let mut bytes = 0usize;
        let mut sorter: Option<ExternalSorter> = None;
        let mut seq = 0u64;
        self.input.run(&mut |r| {
            if let Some(s) = sorter.as_mut() {
                s.push(spill.item(r.to_vec(), seq)?)?;
                seq += 1;
                return Ok(Flow::Continue);
            }
            bytes += held_bytes(r, ncalls);
            if grant.fits(bytes) {
                rows.push(r.to_vec());
                return Ok(Flow::Continue);
            }
            // Past the share: every row so far, and every later one, goes to disk.
            let mut s =
                ExternalSorter::new(spill.sort_budget, spill.tmpdir, &*cmps[0], Component::Sort)?;
            for row in std::mem::take(&mut rows) {
                s.push(spill.item(row, seq)?)?;
                seq += 1;
            }
            grant.shrink_to(0);
            s.push(spill.item(r.to_vec(), seq)?)?;
            seq += 1;
            sorter = Some(s);
            Ok(Flow::Continue)
        })?;
        if let Some(s) = sorter {
            return spill.run(s, &cmps, sink);
        }
        compute(plan, &mut rows, self.ecx)?;
        for r in &rows {
            if sink(r)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }
}
