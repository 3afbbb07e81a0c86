//! Running one query block: [`execute_block`] materialises the block's derived tables,
//! builds its chain of operators ([`crate::exec::ops`]: join or count, group, window,
//! project, sort, distinct, limit) and streams the chain's rows to the client. Also here:
//! the key ranges an index access reads, evaluated from the row built so far
//! ([`key_ranges`]), and the row source of UPDATE/DELETE ([`matching_rows`]).

use crate::bind::SType;
use crate::context::{ExecCtx, ReadModeGuard};
use crate::exec::executor::Executor;
use crate::exec::ops::distinct::Distinct;
use crate::exec::ops::group::Group;
use crate::exec::ops::join::{CountStar, JoinSource};
use crate::exec::ops::limit::Limit;
use crate::exec::ops::project::Project;
use crate::exec::ops::sort::Sort;
use crate::exec::ops::window::Window;
use crate::exec::ops::{BoxedOp, Operator, Sink};
use crate::exec::window;
use crate::expr::{sort_compare, EvalCtx, Expr};
use crate::plan::block::{Access, SelectPlan};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::Bound;
use strata_engine::{Flow, KeyRange};
use strata_types::keycode::{encode_value, prefix_successor};
use strata_types::{ColumnMeta, DataType, EndInfo, Error, QueryOutput, Result, Value};

/// Key ranges for one level, evaluated against the row built so far. None means the
/// values cannot be encoded as keys: scan instead.
pub(crate) fn key_ranges(
    plan: &SelectPlan,
    lvl: usize,
    row: &[Value],
    cx: &EvalCtx,
) -> Result<Option<(usize, Vec<KeyRange>, bool)>> {
    let t = &plan.scope.tables[plan.levels[lvl].table];
    let def = &t.def;
    let encode = |out: &mut Vec<u8>, col: usize, v: &Value| -> bool {
        let c = &def.columns[col];
        if matches!(c.data_type, DataType::Enum(_) | DataType::Set(_)) {
            // Only equality probes reach here (see `bound` below), by member number.
            return match strata_types::member::equal_number(c, v) {
                Some(n) => {
                    let m = Value::Member {
                        number: n,
                        text: Vec::new(),
                    };
                    encode_value(out, &m, &c.data_type, c.collation)
                }
                None => false,
            };
        }
        if c.data_type.is_string() && !matches!(v, Value::Bytes(_)) {
            return false;
        }
        if matches!(
            c.data_type,
            DataType::Double { .. } | DataType::Float { .. } | DataType::Decimal { .. }
        ) && !v.is_numeric()
        {
            return false;
        }
        encode_value(out, v, &c.data_type, c.collation)
    };
    match &plan.levels[lvl].access {
        Access::Scan | Access::JoinBuffer { .. } => Ok(None),
        Access::IndexInSubquery { index, subquery } => {
            let Some(runner) = cx.runner else {
                return Ok(None);
            };
            let col = def.indexes[*index].columns[0];
            let rows = runner.rows(*subquery, Vec::new())?;
            let mut keys: Vec<Vec<u8>> = Vec::with_capacity(rows.rows.len());
            for r in &rows.rows {
                let Some(v) = r.first().filter(|v| !v.is_null()) else {
                    continue;
                };
                let mut key = Vec::with_capacity(16);
                if !encode(&mut key, col, v) {
                    return Ok(None);
                }
                keys.push(key);
            }
            // In key order, each value once: the index is read forward, no row twice.
            keys.sort_unstable();
            keys.dedup();
            Ok(Some((
                *index,
                keys.into_iter().map(KeyRange::prefix).collect(),
                false,
            )))
        }
        Access::IndexIn { index, values } => {
            let col = def.indexes[*index].columns[0];
            let mut ranges = Vec::with_capacity(values.len());
            let mut seen = HashSet::new();
            for e in values {
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    continue;
                }
                let mut key = Vec::with_capacity(16);
                if !encode(&mut key, col, &v) {
                    return Ok(None);
                }
                if seen.insert(key.clone()) {
                    ranges.push(KeyRange::prefix(key));
                }
            }
            ranges.sort_by(|a, b| match (&a.start, &b.start) {
                (Bound::Included(x), Bound::Included(y)) => x.cmp(y),
                _ => Ordering::Equal,
            });
            Ok(Some((*index, ranges, false)))
        }
        Access::Index {
            index,
            eq,
            lower,
            upper,
            reverse,
        } => {
            // The index's columns, then the primary key's its entries end with.
            let key_cols = crate::plan::block::key_columns(t, *index);
            // A value the index cannot hold as a key reads more of the index, never
            // the table instead: every condition is still checked on each row, and a
            // plan that takes its ORDER BY from this index needs the rows in its order.
            let mut prefix = Vec::with_capacity(16);
            for (e, &col) in eq.iter().zip(key_cols.iter()) {
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Some((*index, vec![], false)));
                }
                if !encode(&mut prefix, col, &v) {
                    return Ok(Some((*index, vec![KeyRange::all()], *reverse)));
                }
            }
            let next = key_cols.get(eq.len()).copied();
            // One side of the range: a key, NULL (matches nothing), or open.
            enum Side {
                Key(Vec<u8>, bool),
                Null,
                Open,
            }
            let bound = |b: &Option<(Expr, bool)>| -> Result<Side> {
                let (Some((e, incl)), Some(col)) = (b, next) else {
                    return Ok(Side::Open);
                };
                // An ENUM/SET index is in member-number order, but `<`/`>` compare
                // their text: no bound over it.
                if matches!(
                    def.columns[col].data_type,
                    DataType::Enum(_) | DataType::Set(_)
                ) {
                    return Ok(Side::Open);
                }
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Side::Null);
                }
                let mut k = prefix.clone();
                Ok(if encode(&mut k, col, &v) {
                    Side::Key(k, *incl)
                } else {
                    Side::Open
                })
            };
            let (lo, hi) = match (bound(lower)?, bound(upper)?) {
                (Side::Null, _) | (_, Side::Null) => return Ok(Some((*index, vec![], false))),
                (Side::Key(k, incl), hi) => (Some((k, incl)), hi),
                (Side::Open, hi) => (None, hi),
            };
            let hi = match hi {
                Side::Key(k, incl) => Some((k, incl)),
                _ => None,
            };
            let start = match lo {
                Some((k, true)) => Bound::Included(k),
                Some((k, false)) => match prefix_successor(&k) {
                    Some(s) => Bound::Included(s),
                    None => return Ok(Some((*index, vec![], false))),
                },
                None if next.is_some() && upper.is_some() => {
                    let mut k = prefix.clone();
                    k.push(1); // skip NULLs of the range column
                    Bound::Included(k)
                }
                None if prefix.is_empty() => Bound::Unbounded,
                None => Bound::Included(prefix.clone()),
            };
            let end = match hi {
                Some((k, true)) => match prefix_successor(&k) {
                    Some(s) => Bound::Excluded(s),
                    None => Bound::Unbounded,
                },
                Some((k, false)) => Bound::Excluded(k),
                None => match prefix_successor(&prefix) {
                    Some(s) if !prefix.is_empty() => Bound::Excluded(s),
                    _ => Bound::Unbounded,
                },
            };
            Ok(Some((*index, vec![KeyRange { start, end }], *reverse)))
        }
    }
}

pub(crate) fn limit_value(e: &Option<Expr>, cx: &EvalCtx) -> Result<Option<u64>> {
    match e {
        None => Ok(None),
        Some(e) => match e.eval(&[], cx)? {
            Value::Int(i) if i >= 0 => Ok(Some(i as u64)),
            Value::UInt(u) => Ok(Some(u)),
            other => Err(Error::Syntax(format!("LIMIT {other}"))),
        },
    }
}

/// Holds back the column definitions until the first row, so a column whose type was
/// unknown when the statement was prepared (`SELECT ? + 1`: the parameter's type comes
/// with each execution) is described by the value it actually has.
pub(crate) struct TypesFromFirstRow<'a> {
    inner: &'a mut dyn QueryOutput,
    pending: Option<Vec<ColumnMeta>>,
}

impl TypesFromFirstRow<'_> {
    fn send_columns(&mut self, row: Option<&[Value]>) -> Result<()> {
        if let Some(mut cols) = self.pending.take() {
            if let Some(row) = row {
                for (c, v) in cols.iter_mut().zip(row) {
                    if c.field_type == strata_types::FieldType::Null && !v.is_null() {
                        *c = SType::of_value(v).meta(&c.name);
                    }
                }
            }
            self.inner.columns(&cols)?;
        }
        Ok(())
    }
}

impl QueryOutput for TypesFromFirstRow<'_> {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<()> {
        self.pending = Some(cols.to_vec());
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.send_columns(Some(row))?;
        self.inner.row(row)
    }
    fn end(&mut self, info: &EndInfo) -> Result<()> {
        self.send_columns(None)?;
        self.inner.end(info)
    }
    fn ok(&mut self, info: &strata_types::OkInfo) -> Result<()> {
        self.inner.ok(info)
    }
}

/// Runs one query block, writing its result set to `out`; `outer` holds the values of
/// an enclosing query that a correlated subquery reads. Returns the row count. The
/// executor has taken the statement's table locks.
pub fn execute_block(
    plan: &SelectPlan,
    ex: &Executor,
    outer: &[Value],
    out: &mut dyn QueryOutput,
) -> Result<u64> {
    if !ex.params.is_empty()
        && plan
            .columns
            .iter()
            .any(|c| c.field_type == strata_types::FieldType::Null)
    {
        let mut typed = TypesFromFirstRow {
            inner: out,
            pending: None,
        };
        return execute_block_to(plan, ex, outer, &mut typed);
    }
    execute_block_to(plan, ex, outer, out)
}

pub(crate) fn execute_block_to(
    plan: &SelectPlan,
    ex: &Executor,
    outer: &[Value],
    out: &mut dyn QueryOutput,
) -> Result<u64> {
    let out = RefCell::new(out);
    let visible = plan.columns.len();
    let mut sent = 0u64;
    // A failed write to the client is the statement's error, whatever the operators
    // below make of it on the way back.
    let mut write_err: Option<Error> = None;
    let result = run_block(
        plan,
        ex,
        outer,
        &mut || out.borrow_mut().columns(&plan.columns),
        &mut |r| match out.borrow_mut().row(&r[..visible]) {
            Ok(()) => {
                sent += 1;
                Ok(Flow::Continue)
            }
            Err(e) => {
                write_err = Some(e.clone());
                Err(e)
            }
        },
    );
    if let Some(e) = write_err {
        return Err(e);
    }
    result?;
    out.borrow_mut().end(&EndInfo::default())?;
    Ok(sent)
}

/// A query block as an operator of a query expression's tree: its rows' visible columns.
pub(crate) struct QueryBlock<'a, 'x, 'c> {
    pub plan: &'a SelectPlan,
    pub ex: &'a Executor<'x, 'c>,
    pub outer: &'a [Value],
}

impl Operator for QueryBlock<'_, '_, '_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let visible = self.plan.columns.len();
        run_block(self.plan, self.ex, self.outer, &mut || Ok(()), &mut |r| {
            sink(&r[..visible])
        })
    }
}

/// Runs one query block: materialises its derived tables, evaluates what can fail before
/// the first row (LIMIT values, window frame constants), calls `start`, then pushes
/// every row of its operator chain (visible columns and hidden sort keys) into `sink`.
fn run_block(
    plan: &SelectPlan,
    ex: &Executor,
    outer: &[Value],
    start: &mut dyn FnMut() -> Result<()>,
    sink: &mut Sink<'_>,
) -> Result<Flow> {
    strata_types::stack::check()?;
    for (slot, sub) in &plan.derived {
        if let Some(sub) = sub {
            ex.materialize(*slot, sub)?;
        }
    }
    let cx = ex.cx;
    // After the derived tables ran with their own modes: this query's reads.
    let _mode = ReadModeGuard::set_locking(cx.txn, plan.read_mode, plan.lock_wait);
    let ecx = EvalCtx {
        params: ex.params,
        env: cx.env,
        outer,
        runner: Some(ex),
    };
    let limit = limit_value(&plan.limit, &ecx)?;
    let offset = limit_value(&plan.offset, &ecx)?.unwrap_or(0);
    if let Some(w) = &plan.windows {
        window::eval::check_constants(w, &ecx)?;
    }
    start()?;
    let mut const_ok = true;
    for c in &plan.const_filter {
        if !c.test(&[], &ecx)? {
            const_ok = false;
        }
    }
    let mut root = operators(plan, ex, &ecx, const_ok, limit, offset);
    root.run(sink)
}

/// The chain of operators that runs `plan` (see [`crate::exec::ops`]): a row source,
/// then grouping, window functions, projection, sort, DISTINCT and LIMIT, each only
/// when the block needs it.
fn operators<'a>(
    plan: &'a SelectPlan,
    ex: &'a Executor,
    ecx: &'a EvalCtx<'a>,
    const_ok: bool,
    limit: Option<u64>,
    offset: u64,
) -> BoxedOp<'a> {
    let cx = ex.cx;
    let mut op: BoxedOp<'a> = if plan.count_star_only && const_ok {
        Box::new(CountStar { plan, ecx })
    } else {
        let mut op: BoxedOp<'a> = Box::new(JoinSource {
            plan,
            txn: cx.txn,
            ecx,
            const_ok,
            cache: Some(ex),
        });
        if let Some(gp) = &plan.group {
            op = Box::new(Group {
                input: op,
                plan: gp,
                ecx,
                budget: cx.tmp_table_size,
                sort_budget: cx.sort_buffer_size,
                tmpdir: cx.tmpdir,
            });
        }
        if let Some(w) = &plan.windows {
            op = Box::new(Window {
                input: op,
                plan: w,
                ecx,
                budget: cx.tmp_table_size,
                sort_budget: cx.sort_buffer_size,
                tmpdir: cx.tmpdir,
            });
        }
        op = Box::new(Project {
            input: op,
            exprs: &plan.projection,
            ecx,
        });
        if !plan.order.is_empty() && !plan.order_satisfied {
            op = Box::new(Sort {
                input: op,
                order: &plan.order,
                budget: cx.sort_buffer_size,
                tmpdir: cx.tmpdir,
                // DISTINCT between the sort and the LIMIT drops rows: all are needed.
                keep: if plan.distinct {
                    None
                } else {
                    limit.map(|l| l.saturating_add(offset))
                },
            });
        }
        if plan.distinct {
            op = Box::new(Distinct {
                input: op,
                columns: &plan.columns,
            });
        }
        op
    };
    if limit.is_some() || offset > 0 {
        op = Box::new(Limit {
            input: op,
            offset,
            limit,
        });
    }
    op
}

/// What [`joined_rows`] hands each join row to: the row and its projection's values.
pub type JoinedRow<'a> = dyn FnMut(&[Value], Vec<Value>) -> Result<()> + 'a;

/// The joined rows of a multi-table UPDATE or DELETE (`statements::multi_dml`):
/// materialises the block's derived tables, runs its join with `ids` recording the row
/// id of each table and reading each with its mode, and calls `each` with the join row
/// and the block's projection (the SET values) evaluated over it, before anything is
/// changed.
pub fn joined_rows(
    plan: &SelectPlan,
    ex: &Executor,
    ids: &crate::exec::join::RowIds,
    each: &mut JoinedRow<'_>,
) -> Result<()> {
    for (slot, sub) in &plan.derived {
        if let Some(sub) = sub {
            ex.materialize(*slot, sub)?;
        }
    }
    let cx = ex.cx;
    let ecx = ex.eval_ctx(&[]);
    for c in &plan.const_filter {
        if !c.test(&[], &ecx)? {
            return Ok(());
        }
    }
    let mut row = vec![Value::Null; plan.scope.width()];
    crate::exec::join::run_with_ids(plan, cx.txn, &mut row, &ecx, ids, &mut |r| {
        let values = plan
            .projection
            .iter()
            .map(|e| e.eval(r, &ecx))
            .collect::<Result<Vec<_>>>()?;
        each(r, values)?;
        Ok(Flow::Continue)
    })?;
    Ok(())
}

/// The rows (with ids) a single-table plan selects, in ORDER BY order, up to LIMIT;
/// `ecx` runs the statement's subqueries.
pub fn matching_rows(
    plan: &SelectPlan,
    cx: &ExecCtx,
    ecx: &EvalCtx,
) -> Result<Vec<(strata_engine::RowId, Vec<Value>)>> {
    for c in &plan.const_filter {
        if !c.test(&[], ecx)? {
            return Ok(vec![]);
        }
    }
    let limit = limit_value(&plan.limit, ecx)?;
    let early_stop = plan.order.is_empty() || plan.order_satisfied;
    let _mode = ReadModeGuard::set_locking(cx.txn, plan.read_mode, plan.lock_wait);
    let mut rows = Vec::new();
    let t = &plan.scope.tables[plan.levels[0].table];
    let filter = &plan.levels[0].filter;
    let mut cb = |id, vals: &[Value]| -> Result<Flow> {
        cx.txn.check_interrupt()?;
        for c in filter {
            if !c.test(vals, ecx)? {
                return Ok(Flow::Continue);
            }
        }
        rows.push((id, vals.to_vec()));
        Ok(
            if early_stop && limit.is_some_and(|l| rows.len() as u64 >= l) {
                Flow::Stop
            } else {
                Flow::Continue
            },
        )
    };
    if limit != Some(0) {
        match key_ranges(plan, 0, &[], ecx)? {
            None => t.table.scan(cx.txn, &mut cb)?,
            Some((index, ranges, reverse)) => {
                for r in &ranges {
                    t.table.index_scan(cx.txn, index, r, reverse, &mut cb)?;
                }
            }
        }
    }
    if !early_stop {
        let keys: Vec<Vec<Value>> = rows
            .iter()
            .map(|(_, r)| {
                plan.projection
                    .iter()
                    .map(|e| e.eval(r, ecx))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?;
        let mut idx: Vec<usize> = (0..rows.len()).collect();
        idx.sort_by(|&a, &b| {
            for (pos, desc, coll) in &plan.order {
                let o = sort_compare(&keys[a][*pos], &keys[b][*pos], *coll);
                if o != Ordering::Equal {
                    return if *desc { o.reverse() } else { o };
                }
            }
            Ordering::Equal
        });
        let mut sorted: Vec<_> = idx
            .into_iter()
            .map(|i| std::mem::take(&mut rows[i]))
            .collect();
        if let Some(l) = limit {
            sorted.truncate(l as usize);
        }
        return Ok(sorted);
    }
    Ok(rows)
}
