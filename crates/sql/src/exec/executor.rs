//! Executes a [`QueryStatement`]: builds the operator tree of its query expression
//! ([`crate::exec::ops`]: blocks, set operations, ORDER BY/LIMIT over them, recursive CTE
//! iteration), materialises derived tables and CTEs, and runs subqueries on demand.
//!
//! One [`Executor`] lives for one execution of a statement and holds all of its run-time
//! state: the materialized rows of each slot, the results of uncorrelated subqueries
//! (run once), and the table locks, taken for every table of the statement at the start,
//! in one fixed order, so a subquery reading a table its outer query reads never waits
//! on itself. Query blocks run in `exec/block.rs`; an expression asks the executor for a
//! subquery's rows through [`SubqueryRunner`].

use crate::context::{ExecCtx, TableLocks};
use crate::exec::block::{self as select, limit_value, QueryBlock};
use crate::exec::hash_join::{JoinBuffer, JoinBufferCache, KeptBuffer};
use crate::exec::ops::conform::Conform;
use crate::exec::ops::limit::Limit;
use crate::exec::ops::recursive::Recursive;
use crate::exec::ops::set_op::SetOperation;
use crate::exec::ops::sort::Sort;
use crate::exec::ops::{BoxedOp, SlotStore};
use crate::exec::subquery_cache::{self, SubqueryCache};
use crate::expr::{EvalCtx, SubqueryRows, SubqueryRunner};
use crate::plan::query::{QueryPlan, QueryStatement};
use crate::temp_rows::TempRows;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use strata_engine::{Flow, LockMode};
use strata_types::memory::{self, Component, Grant};
use strata_types::{EndInfo, Error, QueryOutput, Result, Value};

/// MySQL's default `cte_max_recursion_depth`.
const DEFAULT_RECURSION_DEPTH: u64 = 1000;

pub struct Executor<'a, 'c> {
    pub cx: &'a ExecCtx<'c>,
    pub params: &'a [Value],
    /// The statement's subquery plans, by id.
    subqueries: &'a [Arc<QueryPlan>],
    /// Materialised derived tables and CTEs (spilled to `tmpdir` past
    /// `tmp_table_size`).
    slots: RefCell<Vec<Option<Rc<TempRows>>>>,
    /// Uncorrelated subqueries' rows, by subquery id: each runs once per execution.
    uncorrelated: RefCell<HashMap<usize, Rc<SubqueryRows>>>,
    /// Correlated subqueries' rows, by subquery id and outer values, where the result
    /// depends on nothing else.
    correlated: RefCell<SubqueryCache>,
    /// Hash join buffers of base tables, by (block, level), for later runs of a block.
    join_buffers: RefCell<HashMap<(usize, usize), KeptBuffer>>,
}

/// Runs a query statement, sending its result set to `out`; returns the rows sent.
pub fn execute(
    stmt: &QueryStatement,
    cx: &ExecCtx,
    params: &[Value],
    out: &mut dyn QueryOutput,
) -> Result<u64> {
    let mut locks = TableLocks::default();
    let want: Vec<_> = stmt
        .tables
        .iter()
        .map(|(db, name, t)| (db.as_str(), name.as_str(), t, LockMode::Read))
        .collect();
    cx.lock_tables(&mut locks, &want)?;
    let ex = Executor::new(&stmt.subqueries, cx, params);
    if let Some(window) = &stmt.found_rows_limit {
        let ecx = ex.eval_ctx(&[]);
        let mut counted = FoundRowsOutput {
            inner: out,
            offset: limit_value(&window.offset, &ecx)?.unwrap_or(0),
            limit: limit_value(&window.limit, &ecx)?,
            seen: 0,
        };
        execute_root(stmt, &ex, &mut counted)?;
        return Ok(counted.seen);
    }
    execute_root(stmt, &ex, out)
}

/// Runs the statement's root query into `out`; returns the rows sent.
fn execute_root(stmt: &QueryStatement, ex: &Executor, out: &mut dyn QueryOutput) -> Result<u64> {
    match &stmt.root {
        // The common case streams straight from the block.
        QueryPlan::Block(b) => select::execute_block(b, ex, &[], out),
        other => {
            let mut op = ex.operator(other, &[])?;
            out.columns(other.columns())?;
            let mut sent = 0u64;
            op.run(&mut |r| {
                out.row(r)?;
                sent += 1;
                Ok(Flow::Continue)
            })?;
            out.end(&EndInfo::default())?;
            Ok(sent)
        }
    }
}

/// The output of a `SQL_CALC_FOUND_ROWS` query run without its LIMIT: passes on the
/// rows inside OFFSET/LIMIT and counts every row, for FOUND_ROWS().
struct FoundRowsOutput<'o> {
    inner: &'o mut dyn QueryOutput,
    offset: u64,
    limit: Option<u64>,
    seen: u64,
}

impl QueryOutput for FoundRowsOutput<'_> {
    fn columns(&mut self, cols: &[strata_types::ColumnMeta]) -> Result<()> {
        self.inner.columns(cols)
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        let n = self.seen;
        self.seen += 1;
        if n >= self.offset && self.limit.is_none_or(|l| n - self.offset < l) {
            self.inner.row(row)?;
        }
        Ok(())
    }
    fn end(&mut self, info: &EndInfo) -> Result<()> {
        self.inner.end(info)
    }
    fn ok(&mut self, info: &strata_types::OkInfo) -> Result<()> {
        self.inner.ok(info)
    }
}

impl<'a, 'c> Executor<'a, 'c> {
    /// The execution state of one statement whose subquery plans are `subqueries`.
    pub fn new(subqueries: &'a [Arc<QueryPlan>], cx: &'a ExecCtx<'c>, params: &'a [Value]) -> Self {
        Executor {
            cx,
            params,
            subqueries,
            slots: RefCell::new(Vec::new()),
            uncorrelated: RefCell::new(HashMap::new()),
            correlated: RefCell::new(SubqueryCache::default()),
            join_buffers: RefCell::new(HashMap::new()),
        }
    }

    /// The operator tree of a query node, with the enclosing query's values `outer`
    /// (see [`crate::exec::ops`]): a query block at each leaf, set operations, a
    /// parenthesised query's ORDER BY/LIMIT, recursive CTE iteration.
    pub(crate) fn operator<'e>(
        &'e self,
        plan: &'e QueryPlan,
        outer: &'e [Value],
    ) -> Result<BoxedOp<'e>> {
        strata_types::stack::check()?;
        Ok(match plan {
            QueryPlan::Block(b) => Box::new(QueryBlock {
                plan: b,
                ex: self,
                outer,
            }),
            QueryPlan::SetOp(s) => Box::new(SetOperation::new(
                s.op,
                s.distinct,
                self.operator(&s.left, outer)?,
                self.operator(&s.right, outer)?,
                &s.columns,
            )),
            QueryPlan::Ordered(o) => {
                let ecx = self.eval_ctx(outer);
                let offset = limit_value(&o.offset, &ecx)?.unwrap_or(0);
                let limit = limit_value(&o.limit, &ecx)?;
                let mut op: BoxedOp<'e> = Box::new(Conform {
                    input: self.operator(&o.input, outer)?,
                    columns: o.input.columns(),
                });
                if !o.order.is_empty() {
                    op = Box::new(Sort {
                        input: op,
                        order: &o.order,
                        budget: self.cx.sort_buffer_size,
                        tmpdir: self.cx.tmpdir,
                        keep: limit.map(|l| l.saturating_add(offset)),
                    });
                }
                if limit.is_some() || offset > 0 {
                    op = Box::new(Limit {
                        input: op,
                        offset,
                        limit,
                    });
                }
                op
            }
            QueryPlan::Recursive(r) => Box::new(Recursive {
                anchor: self.operator(&r.anchor, &[])?,
                step: self.operator(&r.step, &[])?,
                distinct: r.distinct,
                columns: &r.columns,
                work_slot: r.work_slot,
                slots: self,
                max_depth: self.max_recursion_depth(),
            }),
        })
    }

    /// A subquery's rows, conformed to its column types, granted from the working
    /// memory once they are past [`memory::UNGRANTED`] (in steps: a comparison per row).
    fn collect_subquery(&self, plan: &QueryPlan, outer: &[Value]) -> Result<SubqueryRows> {
        let mut rows = Vec::new();
        let mut bytes = 0usize;
        let mut grant = Grant::unbounded_floor(Component::Subquery, usize::MAX);
        self.operator(plan, outer)?.run(&mut |r| {
            // The row's blocks and its slot, counted twice for the list's spare
            // capacity as it doubles (as derived tables count theirs).
            bytes += 48 + memory::row_bytes(r);
            crate::expr::hold(&mut grant, bytes)?;
            rows.push(r.to_vec());
            Ok(Flow::Continue)
        })?;
        Ok(SubqueryRows::granted(rows, bytes, grant))
    }

    /// Fills a derived table's or CTE's slot, once per execution.
    pub fn materialize(&self, slot: usize, plan: &QueryPlan) -> Result<()> {
        if self.slots.borrow().get(slot).is_some_and(Option::is_some) {
            return Ok(());
        }
        // Streamed into the slot: past tmp_table_size the rows go to a temporary file.
        let mut rows = TempRows::new(self.cx.tmp_table_size, self.cx.tmpdir);
        self.operator(plan, &[])?.run(&mut |r| {
            rows.push(r.to_vec())?;
            Ok(Flow::Continue)
        })?;
        rows.finish()?;
        self.put_slot(slot, rows);
        Ok(())
    }

    /// `cte_max_recursion_depth`, MySQL's default when the session has none.
    fn max_recursion_depth(&self) -> u64 {
        match self
            .cx
            .env
            .system_variable("cte_max_recursion_depth", false)
        {
            Ok(v) => v
                .to_i64()
                .map_or(DEFAULT_RECURSION_DEPTH, |d| d.max(0) as u64),
            Err(_) => DEFAULT_RECURSION_DEPTH,
        }
    }

    /// What expressions of this statement evaluate with: its parameters, the
    /// enclosing query's values `outer`, and this executor to run subqueries.
    pub fn eval_ctx<'e>(&'e self, outer: &'e [Value]) -> EvalCtx<'e> {
        EvalCtx {
            params: self.params,
            env: self.cx.env,
            outer,
            runner: Some(self),
        }
    }
}

impl JoinBufferCache for Executor<'_, '_> {
    fn cached(&self, key: (usize, usize)) -> Option<Option<Rc<JoinBuffer>>> {
        self.join_buffers.borrow().get(&key).cloned()
    }

    fn keep(&self, key: (usize, usize), buffer: Option<Rc<JoinBuffer>>) {
        self.join_buffers.borrow_mut().insert(key, buffer);
    }
}

impl Executor<'_, '_> {
    fn put_slot(&self, slot: usize, rows: TempRows) {
        let mut slots = self.slots.borrow_mut();
        if slots.len() <= slot {
            slots.resize(slot + 1, None);
        }
        slots[slot] = Some(Rc::new(rows));
    }
}

impl SlotStore for Executor<'_, '_> {
    fn set_slot(&self, slot: usize, rows: Vec<Vec<Value>>) {
        self.put_slot(slot, TempRows::in_memory(rows));
    }
}

impl SubqueryRunner for Executor<'_, '_> {
    fn rows(&self, id: usize, correlated: Vec<Value>) -> Result<Rc<SubqueryRows>> {
        let Some(plan) = self.subqueries.get(id) else {
            return Err(Error::Internal(format!("subquery {id} has no plan")));
        };
        if correlated.is_empty() {
            if let Some(rows) = self.uncorrelated.borrow().get(&id) {
                return Ok(rows.clone());
            }
            let rows = Rc::new(self.collect_subquery(plan, &[])?);
            self.uncorrelated.borrow_mut().insert(id, rows.clone());
            return Ok(rows);
        }
        if !self.correlated.borrow_mut().allows(id, plan) {
            return Ok(Rc::new(self.collect_subquery(plan, &correlated)?));
        }
        let key = subquery_cache::key(&correlated);
        let cached = self.correlated.borrow_mut().get(id, &key);
        if let Some(rows) = cached {
            return Ok(rows);
        }
        let rows = Rc::new(self.collect_subquery(plan, &correlated)?);
        self.correlated.borrow_mut().put(id, key, rows.clone());
        Ok(rows)
    }

    fn more_than_one_row(&self, id: usize, correlated: bool) -> Result<Value> {
        if !self.cx.env.subquery_rows_are_warnings() {
            return Err(Error::SubqueryRows);
        }
        let e = Error::SubqueryRows;
        self.cx
            .env
            .warn(crate::expr::WarnLevel::Warning, e.code(), e.to_string());
        if !correlated {
            // No rows from now on: the subquery's value is NULL, without a warning.
            self.uncorrelated
                .borrow_mut()
                .insert(id, Rc::new(SubqueryRows::new(Vec::new())));
        }
        Ok(Value::Null)
    }

    fn exists(&self, id: usize, correlated: Vec<Value>) -> Result<bool> {
        let Some(plan) = self.subqueries.get(id) else {
            return Err(Error::Internal(format!("subquery {id} has no plan")));
        };
        // An uncorrelated subquery runs once per execution, as for its rows; a
        // correlated one's answer is kept when it depends on the outer values alone.
        let keep = correlated.is_empty() || self.correlated.borrow_mut().allows(id, plan);
        let key = keep.then(|| subquery_cache::key(&correlated));
        if let Some(key) = &key {
            let cached = self.correlated.borrow_mut().get_exists(id, key);
            if let Some(found) = cached {
                return Ok(found);
            }
        }
        let mut found = false;
        self.operator(plan, &correlated)?.run(&mut |_| {
            found = true;
            Ok(Flow::Stop)
        })?;
        if let Some(key) = key {
            self.correlated.borrow_mut().put_exists(id, key, found);
        }
        Ok(found)
    }

    fn slot_rows(&self, slot: usize) -> Result<Rc<TempRows>> {
        self.slots
            .borrow()
            .get(slot)
            .cloned()
            .flatten()
            .ok_or_else(|| Error::Internal(format!("slot {slot} read before it was filled")))
    }
    fn call_stored(&self, call: &crate::expr::StoredCall, args: Vec<Value>) -> Result<Value> {
        let Some(f) = call.f.downcast_ref::<crate::context::StoredFunctionCall>() else {
            return Err(Error::Internal(format!("stored function {}", call.name)));
        };
        f.0.call(args, self.cx)
    }
}

/// For INSERT … SELECT: every row of a query statement, read before any is written (a
/// statement may read its own target). Held as a temporary table is, under
/// `memory/sql/insert_select_rows`: in memory up to `tmp_table_size` while the budget
/// has room, then appended to an unlinked file in `tmpdir`.
pub fn collect_rows(stmt: &QueryStatement, cx: &ExecCtx, params: &[Value]) -> Result<TempRows> {
    let mut out = TempRowsOutput(TempRows::accounted_as(
        Component::InsertSelect,
        cx.tmp_table_size,
        cx.tmpdir,
    ));
    execute(stmt, cx, params, &mut out)?;
    out.0.finish()?;
    Ok(out.0)
}

/// A [`QueryOutput`] that keeps the rows in a [`TempRows`].
struct TempRowsOutput(TempRows);

impl QueryOutput for TempRowsOutput {
    fn columns(&mut self, _: &[strata_types::ColumnMeta]) -> Result<()> {
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.0.push(row.to_vec())
    }
    fn end(&mut self, _: &EndInfo) -> Result<()> {
        Ok(())
    }
    fn ok(&mut self, _: &strata_types::OkInfo) -> Result<()> {
        Ok(())
    }
}
