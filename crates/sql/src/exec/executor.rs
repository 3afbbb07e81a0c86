//! Executes a [`QueryStatement`]: the operators above the query block (set operations,
//! ORDER BY/LIMIT over them, recursive CTE iteration), the materialization of derived
//! tables and CTEs, and subqueries on demand.
//!
//! One [`Executor`] lives for one execution of a statement and holds all of its run-time
//! state: the materialized rows of each slot, the results of uncorrelated subqueries
//! (run once), and the table locks, taken for every table of the statement at the start,
//! in one fixed order, so a subquery reading a table its outer query reads never waits
//! on itself. Query blocks run in `exec/block.rs`; an expression asks the executor for a
//! subquery's rows through [`SubqueryRunner`].

use crate::context::{ExecCtx, TableLocks};
use crate::exec::block::{self as select, limit_value};
use crate::expr::keys::group_key;
use crate::expr::{sort_compare, EvalCtx, SubqueryRows, SubqueryRunner};
use crate::plan::query::{OrderedPlan, QueryPlan, QueryStatement, RecursivePlan, SetOp, SetOpPlan};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use strata_engine::LockMode;
use strata_types::output::CollectedOutput;
use strata_types::{
    Collation, ColumnMeta, Decimal, EndInfo, Error, OkInfo, QueryOutput, Result, Value,
};

/// MySQL's default `cte_max_recursion_depth`.
const DEFAULT_RECURSION_DEPTH: u64 = 1000;

pub struct Executor<'a, 'c> {
    pub cx: &'a ExecCtx<'c>,
    pub params: &'a [Value],
    /// The statement's subquery plans, by id.
    subqueries: &'a [Arc<QueryPlan>],
    slots: RefCell<Vec<Option<Rc<SubqueryRows>>>>,
    /// Uncorrelated subqueries' rows, by subquery id: each runs once per execution.
    uncorrelated: RefCell<HashMap<usize, Rc<SubqueryRows>>>,
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
    match &stmt.root {
        // The common case streams straight from the block.
        QueryPlan::Block(b) => select::execute_block(b, &ex, &[], out),
        other => {
            out.columns(other.columns())?;
            let mut rows = RowsTo { out, sent: 0 };
            ex.run(other, &[], &mut rows)?;
            let sent = rows.sent;
            out.end(&EndInfo::default())?;
            Ok(sent)
        }
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
        }
    }

    /// Runs a query node with the enclosing query's values `outer`, sending rows only
    /// (no column definitions or end marker) to `out`.
    fn run(&self, plan: &QueryPlan, outer: &[Value], out: &mut dyn RowSink) -> Result<()> {
        strata_types::stack::check()?;
        match plan {
            QueryPlan::Block(b) => {
                let mut sink = BlockRows { sink: out };
                select::execute_block(b, self, outer, &mut sink)?;
                Ok(())
            }
            QueryPlan::SetOp(s) => self.set_op(s, outer, out),
            QueryPlan::Ordered(o) => self.ordered(o, outer, out),
            QueryPlan::Recursive(r) => self.recursive(r, out),
        }
    }

    /// All rows of a query node, conformed to its column types.
    fn collect(&self, plan: &QueryPlan, outer: &[Value]) -> Result<Vec<Vec<Value>>> {
        let mut rows = Collect(Vec::new());
        self.run(plan, outer, &mut rows)?;
        Ok(rows.0)
    }

    /// Fills a derived table's or CTE's slot, once per execution.
    pub fn materialize(&self, slot: usize, plan: &QueryPlan) -> Result<()> {
        if self.slots.borrow().get(slot).is_some_and(Option::is_some) {
            return Ok(());
        }
        let rows = self.collect(plan, &[])?;
        self.set_slot(slot, rows);
        Ok(())
    }

    fn set_slot(&self, slot: usize, rows: Vec<Vec<Value>>) {
        let mut slots = self.slots.borrow_mut();
        if slots.len() <= slot {
            slots.resize(slot + 1, None);
        }
        slots[slot] = Some(Rc::new(SubqueryRows::new(rows)));
    }

    fn set_op(&self, s: &SetOpPlan, outer: &[Value], out: &mut dyn RowSink) -> Result<()> {
        let colls: Vec<Collation> = s.columns.iter().map(column_collation).collect();
        let key = |r: &[Value]| {
            let mut k = Vec::new();
            for (v, c) in r.iter().zip(&colls) {
                group_key(&mut k, v, *c);
            }
            k
        };
        let conform_row = |mut r: Vec<Value>| {
            for (v, m) in r.iter_mut().zip(&s.columns) {
                conform(v, m);
            }
            r
        };
        match (s.op, s.distinct) {
            (SetOp::Union, false) => {
                for side in [&s.left, &s.right] {
                    let mut conformed = Conform {
                        columns: &s.columns,
                        sink: out,
                    };
                    self.run(side, outer, &mut conformed)?;
                }
                Ok(())
            }
            (SetOp::Union, true) => {
                let mut seen = HashSet::new();
                for side in [&s.left, &s.right] {
                    for r in self.collect(side, outer)? {
                        let r = conform_row(r);
                        if seen.insert(key(&r)) && !out.row(r)? {
                            return Ok(());
                        }
                    }
                }
                Ok(())
            }
            (SetOp::Intersect | SetOp::Except, distinct) => {
                let mut right: HashMap<Vec<u8>, usize> = HashMap::new();
                for r in self.collect(&s.right, outer)? {
                    *right.entry(key(&conform_row(r))).or_default() += 1;
                }
                let mut emitted = HashSet::new();
                for r in self.collect(&s.left, outer)? {
                    let r = conform_row(r);
                    let k = key(&r);
                    let keep = match (s.op, distinct) {
                        (SetOp::Intersect, true) => right.contains_key(&k),
                        (SetOp::Except, true) => !right.contains_key(&k),
                        // ALL: as many copies as the multiset operation leaves.
                        (SetOp::Intersect, false) => match right.get_mut(&k) {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                true
                            }
                            _ => false,
                        },
                        _ => match right.get_mut(&k) {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                false
                            }
                            _ => true,
                        },
                    };
                    if keep && (!distinct || emitted.insert(k)) && !out.row(r)? {
                        return Ok(());
                    }
                }
                Ok(())
            }
        }
    }

    fn ordered(&self, o: &OrderedPlan, outer: &[Value], out: &mut dyn RowSink) -> Result<()> {
        let mut rows = self.collect(&o.input, outer)?;
        let cols = o.input.columns();
        for r in &mut rows {
            for (v, m) in r.iter_mut().zip(cols) {
                conform(v, m);
            }
        }
        rows.sort_by(|a, b| {
            for (pos, desc, coll) in &o.order {
                let ord = sort_compare(&a[*pos], &b[*pos], *coll);
                if ord != Ordering::Equal {
                    return if *desc { ord.reverse() } else { ord };
                }
            }
            Ordering::Equal
        });
        let ecx = self.eval_ctx(outer);
        let offset = limit_value(&o.offset, &ecx)?.unwrap_or(0);
        let limit = limit_value(&o.limit, &ecx)?;
        let take = limit.unwrap_or(u64::MAX);
        for r in rows
            .into_iter()
            .skip(offset.min(usize::MAX as u64) as usize)
            .take(take.min(usize::MAX as u64) as usize)
        {
            if !out.row(r)? {
                break;
            }
        }
        Ok(())
    }

    /// Anchor once; then the step, reading the previous iteration's rows from the work
    /// slot, until an iteration adds no row (UNION DISTINCT drops rows seen before).
    fn recursive(&self, r: &RecursivePlan, out: &mut dyn RowSink) -> Result<()> {
        let max_depth = match self
            .cx
            .env
            .system_variable("cte_max_recursion_depth", false)
        {
            Ok(v) => v
                .to_i64()
                .map_or(DEFAULT_RECURSION_DEPTH, |d| d.max(0) as u64),
            Err(_) => DEFAULT_RECURSION_DEPTH,
        };
        let colls: Vec<Collation> = r.columns.iter().map(column_collation).collect();
        let mut seen = HashSet::new();
        let fresh = |rows: Vec<Vec<Value>>, seen: &mut HashSet<Vec<u8>>| {
            rows.into_iter()
                .map(|mut row| {
                    for (v, m) in row.iter_mut().zip(&r.columns) {
                        conform(v, m);
                    }
                    row
                })
                .filter(|row| {
                    if !r.distinct {
                        return true;
                    }
                    let mut k = Vec::new();
                    for (v, c) in row.iter().zip(&colls) {
                        group_key(&mut k, v, *c);
                    }
                    seen.insert(k)
                })
                .collect::<Vec<_>>()
        };
        let mut work = fresh(self.collect(&r.anchor, &[])?, &mut seen);
        let mut depth = 0u64;
        while !work.is_empty() {
            for row in &work {
                if !out.row(row.clone())? {
                    return Ok(());
                }
            }
            if depth >= max_depth {
                return Err(Error::RecursionDepth(max_depth));
            }
            depth += 1;
            self.set_slot(r.work_slot, std::mem::take(&mut work));
            work = fresh(self.collect(&r.step, &[])?, &mut seen);
        }
        Ok(())
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

impl SubqueryRunner for Executor<'_, '_> {
    fn rows(&self, id: usize, correlated: Vec<Value>) -> Result<Rc<SubqueryRows>> {
        let Some(plan) = self.subqueries.get(id) else {
            return Err(Error::Internal(format!("subquery {id} has no plan")));
        };
        if correlated.is_empty() {
            if let Some(rows) = self.uncorrelated.borrow().get(&id) {
                return Ok(rows.clone());
            }
            let rows = Rc::new(SubqueryRows::new(self.collect(plan, &[])?));
            self.uncorrelated.borrow_mut().insert(id, rows.clone());
            return Ok(rows);
        }
        Ok(Rc::new(SubqueryRows::new(self.collect(plan, &correlated)?)))
    }

    fn slot_rows(&self, slot: usize) -> Result<Rc<SubqueryRows>> {
        self.slots
            .borrow()
            .get(slot)
            .cloned()
            .flatten()
            .ok_or_else(|| Error::Internal(format!("slot {slot} read before it was filled")))
    }
}

/// Where query nodes put their rows; `row` returns false when no more are wanted.
pub trait RowSink {
    fn row(&mut self, row: Vec<Value>) -> Result<bool>;
}

struct Collect(Vec<Vec<Value>>);

impl RowSink for Collect {
    fn row(&mut self, row: Vec<Value>) -> Result<bool> {
        self.0.push(row);
        Ok(true)
    }
}

/// Rows of a set operation's result to the client.
struct RowsTo<'o> {
    out: &'o mut dyn QueryOutput,
    sent: u64,
}

impl RowSink for RowsTo<'_> {
    fn row(&mut self, row: Vec<Value>) -> Result<bool> {
        self.out.row(&row)?;
        self.sent += 1;
        Ok(true)
    }
}

/// Converts each row to the set operation's column types, then passes it on.
struct Conform<'s> {
    columns: &'s [ColumnMeta],
    sink: &'s mut dyn RowSink,
}

impl RowSink for Conform<'_> {
    fn row(&mut self, mut row: Vec<Value>) -> Result<bool> {
        for (v, m) in row.iter_mut().zip(self.columns) {
            conform(v, m);
        }
        self.sink.row(row)
    }
}

/// A block's result set seen as rows only: its column definitions and end marker are
/// the enclosing operator's business.
struct BlockRows<'s> {
    sink: &'s mut dyn RowSink,
}

impl QueryOutput for BlockRows<'_> {
    fn columns(&mut self, _cols: &[ColumnMeta]) -> Result<()> {
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.sink.row(row.to_vec()).map(|_| ())
    }
    fn end(&mut self, _info: &EndInfo) -> Result<()> {
        Ok(())
    }
    fn ok(&mut self, _info: &OkInfo) -> Result<()> {
        Ok(())
    }
}

fn column_collation(m: &ColumnMeta) -> Collation {
    if m.charset == 63 {
        Collation::Binary
    } else {
        Collation::GeneralCi
    }
}

/// Converts a value to a result column's type, as MySQL does for the rows of a set
/// operation whose parts have different types (`SELECT 1 UNION SELECT 2.5` gives 1.0).
fn conform(v: &mut Value, m: &ColumnMeta) {
    use strata_types::FieldType as F;
    let converted = match (&*v, m.field_type) {
        (Value::Null, _) => return,
        (Value::Int(i), F::NewDecimal) => Value::Decimal(Decimal::from_i64(*i).rescale(m.decimals)),
        (Value::UInt(u), F::NewDecimal) => {
            Value::Decimal(Decimal::new(*u as i128, 0).rescale(m.decimals))
        }
        (Value::Decimal(d), F::NewDecimal) if d.scale < m.decimals => {
            Value::Decimal(d.rescale(m.decimals))
        }
        (Value::Int(_) | Value::UInt(_) | Value::Decimal(_), F::Double) => {
            Value::Double(v.to_f64().unwrap_or(0.0))
        }
        (Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_), F::VarString)
        | (Value::DateTime(_), F::VarString) => {
            let mut text = Vec::new();
            v.write_text(&mut text);
            Value::Bytes(text)
        }
        _ => return,
    };
    *v = converted;
}

/// For INSERT … SELECT and the like: every row of a query statement.
pub fn collect_rows(
    stmt: &QueryStatement,
    cx: &ExecCtx,
    params: &[Value],
) -> Result<Vec<Vec<Value>>> {
    let mut out = CollectedOutput::default();
    execute(stmt, cx, params, &mut out)?;
    Ok(out.rows)
}
