//! The physical operators of a query block, and the one interface they share.
//!
//! A block runs as a chain of operators built per execution from its [`SelectPlan`]
//! (so a cached plan holds no run-time state):
//!
//! ```text
//!   join (scan / index lookup or range / hash join buffer, per level; outer joins)
//!     or count(*) from the engine's row count
//!   → group (GROUP BY, aggregates, WITH ROLLUP, HAVING; spills past sort_buffer_size)
//!   → window (window functions over all the rows)
//!   → project (the select list and hidden sort keys)
//!   → sort (external merge sort past sort_buffer_size)
//!   → distinct
//!   → limit (OFFSET and LIMIT; stops the whole chain early)
//! ```
//!
//! Each operator is present only when the block needs it. Rows are pushed: an
//! operator's [`Operator::run`] calls the `sink` it is given with each output row, and
//! the sink's [`Flow::Stop`] travels back down the chain, so `LIMIT 1` over an index
//! stops the index scan after one row. Pipeline breakers (group, window, sort) drive
//! their input to the end before they emit; the grouping operator may drive it twice
//! (the second time sorting rows by group key on disk), which is why `run` takes
//! `&mut self` and may be called again.
//!
//! Above blocks, a query expression is a tree of the same operators, built by
//! [`crate::exec::executor`]: a query block ([`crate::exec::block::QueryBlock`]) at each
//! leaf, set operations ([`set_op`]), a parenthesised query's ORDER BY and LIMIT (conform,
//! then [`sort`] and [`limit`]), recursive CTE iteration ([`recursive`]). Derived tables
//! and CTEs are materialised into the execution's slots by the executor and read by the
//! join like tables.

pub mod conform;
pub mod distinct;
pub mod group;
pub mod join;
pub mod limit;
pub mod project;
pub mod recursive;
pub mod set_op;
pub mod sort;
pub mod window;

use strata_engine::Flow;
use strata_types::{Result, Value};

#[cfg(doc)]
use crate::plan::block::SelectPlan;

/// Where an operator pushes its rows. Answering [`Flow::Stop`] asks for no more.
pub type Sink<'s> = dyn FnMut(&[Value]) -> Result<Flow> + 's;

/// A physical operator: pushes its output rows, in order, into a sink.
pub trait Operator {
    /// Pushes every output row into `sink` until the rows end (returns
    /// [`Flow::Continue`]) or the sink answers [`Flow::Stop`] (returns it). May be called
    /// again: each call produces the rows anew.
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow>;
}

/// A boxed operator borrowing the plan and the execution context for `'a`.
pub type BoxedOp<'a> = Box<dyn Operator + 'a>;

/// The execution's materialisation slots, as the recursive CTE operator fills its work
/// table (implemented by the executor).
pub trait SlotStore {
    fn set_slot(&self, slot: usize, rows: Vec<Vec<Value>>);
}

#[cfg(test)]
mod tests {
    use super::distinct::Distinct;
    use super::limit::Limit;
    use super::sort::Sort;
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;
    use strata_types::{Collation, ColumnMeta};

    /// A source of fixed rows that counts how many it was asked for.
    struct Rows {
        rows: Vec<Vec<Value>>,
        pulled: Rc<Cell<usize>>,
    }

    impl Operator for Rows {
        fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
            for r in &self.rows {
                self.pulled.set(self.pulled.get() + 1);
                if sink(r)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
            Ok(Flow::Continue)
        }
    }

    fn ints(v: &[i64]) -> (BoxedOp<'static>, Rc<Cell<usize>>) {
        let pulled = Rc::new(Cell::new(0));
        let rows = v.iter().map(|i| vec![Value::Int(*i)]).collect();
        (
            Box::new(Rows {
                rows,
                pulled: pulled.clone(),
            }),
            pulled,
        )
    }

    fn collect(op: &mut dyn Operator) -> Vec<i64> {
        let mut out = Vec::new();
        op.run(&mut |r| {
            out.push(r[0].to_i64().unwrap_or(-1));
            Ok(Flow::Continue)
        })
        .expect("runs");
        out
    }

    #[test]
    fn limit_stops_its_input_early_and_skips_the_offset() {
        let (input, pulled) = ints(&[1, 2, 3, 4, 5, 6]);
        let mut op = Limit {
            input,
            offset: 1,
            limit: Some(2),
        };
        assert_eq!(collect(&mut op), vec![2, 3]);
        assert_eq!(pulled.get(), 3, "the fourth row is never read");
        // Run again: the same rows (operators are re-runnable).
        assert_eq!(collect(&mut op), vec![2, 3]);
    }

    #[test]
    fn limit_zero_never_runs_its_input() {
        let (input, pulled) = ints(&[1, 2]);
        let mut op = Limit {
            input,
            offset: 0,
            limit: Some(0),
        };
        assert_eq!(collect(&mut op), Vec::<i64>::new());
        assert_eq!(pulled.get(), 0);
    }

    #[test]
    fn sort_spills_and_merges_in_order_then_distinct_keeps_first_of_each() {
        let values: Vec<i64> = (0..2000).map(|i| (i * 7919) % 500).collect();
        let (input, _) = ints(&values);
        let order = [(0usize, true, Collation::Binary)];
        let dir = std::env::temp_dir();
        // A budget of a few rows forces sorted runs on disk.
        let sort = Sort {
            input,
            order: &order,
            budget: 256,
            tmpdir: &dir,
            keep: None,
        };
        let columns = [ColumnMeta::computed("v", strata_types::FieldType::LongLong)];
        let mut op = Distinct {
            input: Box::new(sort),
            columns: &columns,
        };
        let got = collect(&mut op);
        let want: Vec<i64> = (0..500).rev().collect();
        assert_eq!(got, want);
    }
}
