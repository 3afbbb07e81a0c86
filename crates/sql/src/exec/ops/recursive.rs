//! `WITH RECURSIVE`: runs the anchor once, then the recursive step again and again, each
//! time reading the previous iteration's rows from the CTE's work table, until an
//! iteration adds no row. UNION DISTINCT drops rows seen in any earlier iteration, so a
//! cycle in the data ends; beyond `cte_max_recursion_depth` iterations the query fails
//! with 3636, as in MySQL.

use super::conform::{column_collation, conform_row};
use super::{BoxedOp, Operator, Sink, SlotStore};
use crate::expr::keys::group_key;
use std::collections::HashSet;
use strata_engine::Flow;
use strata_types::{Collation, ColumnMeta, Error, Result, Value};

pub struct Recursive<'a> {
    pub anchor: BoxedOp<'a>,
    pub step: BoxedOp<'a>,
    pub distinct: bool,
    pub columns: &'a [ColumnMeta],
    /// The slot the step reads the previous iteration's rows from.
    pub work_slot: usize,
    pub slots: &'a dyn SlotStore,
    pub max_depth: u64,
}

impl Recursive<'_> {
    /// Runs `op` and keeps its rows that are new (all of them under UNION ALL).
    fn fresh(
        op: &mut BoxedOp<'_>,
        columns: &[ColumnMeta],
        distinct: bool,
        seen: &mut HashSet<Vec<u8>>,
    ) -> Result<Vec<Vec<Value>>> {
        let colls: Vec<Collation> = columns.iter().map(column_collation).collect();
        let mut rows = Vec::new();
        op.run(&mut |r| {
            let mut row = r.to_vec();
            conform_row(&mut row, columns);
            if distinct {
                let mut k = Vec::new();
                for (v, c) in row.iter().zip(&colls) {
                    group_key(&mut k, v, *c);
                }
                if !seen.insert(k) {
                    return Ok(Flow::Continue);
                }
            }
            rows.push(row);
            Ok(Flow::Continue)
        })?;
        Ok(rows)
    }
}

impl Operator for Recursive<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let mut seen = HashSet::new();
        let mut work = Self::fresh(&mut self.anchor, self.columns, self.distinct, &mut seen)?;
        let mut depth = 0u64;
        while !work.is_empty() {
            for row in &work {
                if sink(row)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
            if depth >= self.max_depth {
                return Err(Error::RecursionDepth(self.max_depth));
            }
            depth += 1;
            self.slots
                .set_slot(self.work_slot, std::mem::take(&mut work));
            work = Self::fresh(&mut self.step, self.columns, self.distinct, &mut seen)?;
        }
        Ok(Flow::Continue)
    }
}
