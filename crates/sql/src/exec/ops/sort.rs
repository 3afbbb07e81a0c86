//! The sort operator: ORDER BY over the projected rows (by output position), in memory
//! up to `sort_buffer_size` and by external merge sort beyond
//! ([`crate::exec::sort::ExternalSorter`]).

use super::{BoxedOp, Operator, Sink};
use crate::exec::sort::ExternalSorter;
use crate::expr::sort_compare;
use std::cmp::Ordering;
use std::path::Path;
use strata_engine::Flow;
use strata_types::memory::Component;
use strata_types::{Collation, Result, Value};

pub struct Sort<'a> {
    pub input: BoxedOp<'a>,
    /// (output position, descending, collation), most significant first.
    pub order: &'a [(usize, bool, Collation)],
    pub budget: usize,
    pub tmpdir: &'a Path,
    /// LIMIT + OFFSET when the LIMIT reads this sort's rows directly: only that many
    /// first rows are kept of each sorted run.
    pub keep: Option<u64>,
}

impl Operator for Sort<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let order = self.order;
        let cmp = |a: &[Value], b: &[Value]| {
            for (pos, desc, coll) in order {
                let o = sort_compare(&a[*pos], &b[*pos], *coll);
                if o != Ordering::Equal {
                    return if *desc { o.reverse() } else { o };
                }
            }
            Ordering::Equal
        };
        let mut sorter = ExternalSorter::new(self.budget, self.tmpdir, &cmp, Component::Sort)?;
        sorter.keep_first(self.keep);
        self.input.run(&mut |r| {
            sorter.push_ref(r)?;
            Ok(Flow::Continue)
        })?;
        let mut flow = Flow::Continue;
        sorter.finish_ref(&mut |r| {
            flow = sink(r)?;
            Ok(flow != Flow::Stop)
        })?;
        Ok(flow)
    }
}
