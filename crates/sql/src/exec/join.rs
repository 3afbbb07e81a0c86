//! Runs a block's join: a nested loop over the levels in join order, each reading its
//! table by index lookup, by scan, or (for an inner table without a usable index) from
//! a hash join buffer built once per run; outer-join groups are NULL-extended as a whole
//! when no combination of their rows matches (see [`crate::plan::join_groups`]).

use crate::exec::block::key_ranges;
use crate::exec::hash_join::{JoinBuffer, JoinBufferCache};
use crate::expr::EvalCtx;
use crate::plan::block::{Access, SelectPlan};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use strata_engine::{Flow, Txn};
use strata_types::{Error, Result, Value};

/// What a level does with each row its table yields: (the row's values, the join row).
type OnRow<'r> = dyn FnMut(&[Value], &mut [Value]) -> Result<Flow> + 'r;

/// One run of a join: the groups' matched flags and the levels' join buffers.
struct JoinRun<'a> {
    plan: &'a SelectPlan,
    txn: &'a Txn,
    cx: &'a EvalCtx<'a>,
    found: Vec<Cell<bool>>,
    /// Per level: not built yet, built, or (Some(None)) too big to buffer.
    buffers: Vec<RefCell<Option<Option<Rc<JoinBuffer>>>>>,
    /// The execution's buffers from earlier runs of this block.
    cache: Option<&'a dyn JoinBufferCache>,
    /// Rows read at every level so far: the interrupt is looked at every
    /// [`INTERRUPT_EVERY`] of them.
    rows_read: Cell<u32>,
    /// A multi-table UPDATE/DELETE: where the row ids go (see [`RowIds`]).
    ids: Option<&'a RowIds>,
}

/// What a multi-table UPDATE or DELETE needs beyond the join row: per scope table, the
/// id of the row in place (None when its outer-join group was NULL-extended, or the
/// table is not read by a capturing level), and the read mode each base table is read
/// with (the changed tables locked exclusively, the others shared).
pub struct RowIds {
    pub ids: Vec<Cell<Option<strata_engine::RowId>>>,
    pub modes: Vec<strata_engine::ReadMode>,
}

/// How many rows (at any level) pass between two looks at KILL / max_execution_time:
/// often enough to stop within microseconds, rarely enough to cost nothing per row.
const INTERRUPT_EVERY: u32 = 64;

/// Runs the join, calling `emit` with each complete row.
pub fn run(
    plan: &SelectPlan,
    txn: &Txn,
    row: &mut [Value],
    cx: &EvalCtx,
    cache: Option<&dyn JoinBufferCache>,
    emit: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    let run = JoinRun {
        plan,
        txn,
        cx,
        found: plan.groups.iter().map(|_| Cell::new(false)).collect(),
        buffers: plan.levels.iter().map(|_| RefCell::new(None)).collect(),
        rows_read: Cell::new(0),
        cache,
        ids: None,
    };
    run.level(0, row, emit)
}

/// [`run`] for a multi-table UPDATE or DELETE: each level reads its table with the read
/// mode `ids` gives it and records the id of the row it puts in place. A level whose
/// rows come from a join buffer records none: the planner reads the changed tables by
/// scan or index instead (`statements::multi_dml`).
pub fn run_with_ids(
    plan: &SelectPlan,
    txn: &Txn,
    row: &mut [Value],
    cx: &EvalCtx,
    ids: &RowIds,
    emit: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    let run = JoinRun {
        plan,
        txn,
        cx,
        found: plan.groups.iter().map(|_| Cell::new(false)).collect(),
        buffers: plan.levels.iter().map(|_| RefCell::new(None)).collect(),
        rows_read: Cell::new(0),
        cache: None,
        ids: Some(ids),
    };
    run.level(0, row, emit)
}

impl JoinRun<'_> {
    fn level(
        &self,
        lvl: usize,
        row: &mut [Value],
        emit: &mut dyn FnMut(&[Value]) -> Result<Flow>,
    ) -> Result<Flow> {
        let plan = self.plan;
        if lvl == plan.levels.len() {
            return emit(row);
        }
        let level = &plan.levels[lvl];
        if let Some(g) = level.starts {
            self.found[g].set(false);
        }
        let t = &plan.scope.tables[level.table];
        let (off, width) = (t.offset, t.def.columns.len());
        let cols = level.columns.as_deref();
        let mut stopped = false;
        {
            let mut on_row = |vals: &[Value], row: &mut [Value]| -> Result<Flow> {
                // KILL QUERY and max_execution_time stop a statement here.
                let n = self.rows_read.get().wrapping_add(1);
                self.rows_read.set(n);
                if n.is_multiple_of(INTERRUPT_EVERY) {
                    self.txn.check_interrupt()?;
                }
                copy_row(&mut row[off..off + width], vals, cols);
                let f = self.after_row(lvl, 0, row, emit)?;
                if f == Flow::Stop {
                    stopped = true;
                }
                Ok(f)
            };
            match &level.access {
                Access::JoinBuffer { keys } => match self.buffer(lvl, keys)? {
                    Some(buf) => {
                        let hits = buf.lookup(keys, row, self.cx)?;
                        for i in hits.positions(buf.len()) {
                            if on_row(buf.row(i), row)? == Flow::Stop {
                                break;
                            }
                        }
                    }
                    None => self.read(lvl, row, &mut on_row)?,
                },
                _ => self.read(lvl, row, &mut on_row)?,
            }
        }
        if stopped {
            return Ok(Flow::Stop);
        }
        if let Some(g) = level.starts {
            if !self.found[g].get() {
                // Nothing in the group matched: one row with all of it NULL.
                let group = &plan.groups[g];
                for l in group.first..=group.last {
                    let ti = plan.levels[l].table;
                    let t = &plan.scope.tables[ti];
                    for v in &mut row[t.offset..t.offset + t.def.columns.len()] {
                        *v = Value::Null;
                    }
                    if let Some(ids) = self.ids {
                        ids.ids[ti].set(None);
                    }
                }
                let last = &plan.levels[group.last];
                let Some(pos) = last.chain.iter().position(|(c, _)| *c == g) else {
                    return Err(Error::Internal("outer join group not on its chain".into()));
                };
                return self.after_row(group.last, pos + 1, row, emit);
            }
        }
        Ok(Flow::Continue)
    }

    /// A row is in place at `lvl` (or, from `from` > 0, a nested group ending here was
    /// NULL-extended): checks the conditions of the level's groups from chain position
    /// `from` outward, marks the groups that end here as matched, checks the block's
    /// conditions and goes on to the next level.
    fn after_row(
        &self,
        lvl: usize,
        from: usize,
        row: &mut [Value],
        emit: &mut dyn FnMut(&[Value]) -> Result<Flow>,
    ) -> Result<Flow> {
        let level = &self.plan.levels[lvl];
        let mut k: usize = level.chain[..from].iter().map(|(_, n)| n).sum();
        for &(g, n) in &level.chain[from..] {
            for c in &level.on[k..k + n] {
                if !c.test(row, self.cx)? {
                    return Ok(Flow::Continue);
                }
            }
            k += n;
            if self.plan.groups[g].last != lvl {
                break;
            }
            self.found[g].set(true);
        }
        for c in &level.filter {
            if !c.test(row, self.cx)? {
                return Ok(Flow::Continue);
            }
        }
        self.level(lvl + 1, row, emit)
    }

    /// The level's join buffer, built on first use; None when the table is too big.
    fn buffer(
        &self,
        lvl: usize,
        keys: &[crate::plan::block::HashKey],
    ) -> Result<Option<Rc<JoinBuffer>>> {
        if let Some(b) = self.buffers[lvl].borrow().as_ref() {
            return Ok(b.clone());
        }
        let t = &self.plan.scope.tables[self.plan.levels[lvl].table];
        let key = (self.plan as *const SelectPlan as usize, lvl);
        let cache = self.cache.filter(|_| t.is_base());
        if let Some(kept) = cache.and_then(|c| c.cached(key)) {
            *self.buffers[lvl].borrow_mut() = Some(kept.clone());
            return Ok(kept);
        }
        let cols = self.plan.levels[lvl].columns.as_deref();
        let ti = self.plan.levels[lvl].table;
        let _mode = self
            .ids
            .filter(|_| t.is_base())
            .map(|ids| crate::context::ReadModeGuard::set(self.txn, ids.modes[ti]));
        let built = JoinBuffer::build(t, keys, cols, self.txn, self.cx)?.map(Rc::new);
        if let Some(c) = cache {
            c.keep(key, built.clone());
        }
        *self.buffers[lvl].borrow_mut() = Some(built.clone());
        Ok(built)
    }

    /// Reads the level's table by its access path (a scan when it has no index use).
    fn read(&self, lvl: usize, row: &mut [Value], on_row: &mut OnRow<'_>) -> Result<()> {
        let plan = self.plan;
        let t = &plan.scope.tables[plan.levels[lvl].table];
        if let Some(lateral) = &t.lateral {
            // A LATERAL derived table: its rows for the values the row built so far
            // gives the columns it reads.
            let Some(runner) = self.cx.runner else {
                return Err(Error::Internal("LATERAL table without an executor".into()));
            };
            let values = lateral
                .correlated
                .iter()
                .map(|e| e.eval(row, self.cx))
                .collect::<Result<Vec<_>>>()?;
            let rows = runner.rows(lateral.subquery, values)?;
            for r in &rows.rows {
                if on_row(r, row)? == Flow::Stop {
                    break;
                }
            }
            return Ok(());
        }
        let ranges = key_ranges(plan, lvl, row, self.cx)?;
        let cols = plan.levels[lvl].columns.as_deref();
        let stopped = Cell::new(false);
        // A multi-table UPDATE/DELETE: this table's read mode, and where its ids go.
        let ti = plan.levels[lvl].table;
        let _mode = self
            .ids
            .filter(|_| t.is_base())
            .map(|ids| crate::context::ReadModeGuard::set(self.txn, ids.modes[ti]));
        let id_cell = self.ids.map(|ids| &ids.ids[ti]);
        let mut cb = |id, vals: &[Value]| -> Result<Flow> {
            if let Some(c) = id_cell {
                c.set(Some(id));
            }
            let f = on_row(vals, row)?;
            if f == Flow::Stop {
                stopped.set(true);
            }
            Ok(f)
        };
        match ranges {
            None => match t.slot {
                Some(slot) => {
                    let Some(runner) = self.cx.runner else {
                        return Err(Error::Internal("derived table without an executor".into()));
                    };
                    runner
                        .slot_rows(slot)?
                        .for_each(&mut |r| cb(strata_engine::RowId::default(), r))?;
                }
                None => match cols {
                    Some(c) => t.table.scan_columns(self.txn, c, &mut cb)?,
                    None => t.table.scan(self.txn, &mut cb)?,
                },
            },
            Some((index, ranges, reverse)) => {
                for r in &ranges {
                    match cols {
                        Some(c) => t
                            .table
                            .index_scan_columns(self.txn, index, r, reverse, c, &mut cb)?,
                        None => t.table.index_scan(self.txn, index, r, reverse, &mut cb)?,
                    }
                    if stopped.get() {
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Copies a table's row into its place in the join row: the columns `cols` marks (the
/// block reads no others), or all. A string reuses the buffer the previous row's value
/// in that place left (the same column, so usually big enough): a scan then allocates
/// nothing per row here, where a plain clone allocated and freed once per string column
/// and row.
fn copy_row(dst: &mut [Value], src: &[Value], cols: Option<&[bool]>) {
    for (i, (d, s)) in dst.iter_mut().zip(src).enumerate() {
        if cols.is_some_and(|c| !c.get(i).copied().unwrap_or(true)) {
            continue;
        }
        match (d, s) {
            (Value::Bytes(d), Value::Bytes(s)) => {
                d.clear();
                d.extend_from_slice(s);
            }
            (d, s) => *d = s.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_row;
    use strata_types::Value;

    #[test]
    fn copy_row_overwrites_every_kind_of_value() {
        let mut dst = vec![
            Value::str("a long previous value"),
            Value::Int(1),
            Value::Null,
        ];
        copy_row(
            &mut dst,
            &[Value::str("b"), Value::str("now a string"), Value::Int(3)],
            None,
        );
        assert_eq!(
            dst,
            vec![Value::str("b"), Value::str("now a string"), Value::Int(3)]
        );
        copy_row(
            &mut dst,
            &[Value::Null, Value::Double(1.5), Value::str("")],
            None,
        );
        assert_eq!(dst, vec![Value::Null, Value::Double(1.5), Value::str("")]);
        // Only the marked columns: the others keep what they held.
        copy_row(
            &mut dst,
            &[Value::Int(7), Value::Int(8), Value::Int(9)],
            Some(&[false, true, false]),
        );
        assert_eq!(dst, vec![Value::Null, Value::Int(8), Value::str("")]);
    }
}
