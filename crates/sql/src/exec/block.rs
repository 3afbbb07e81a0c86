//! Running one query block's plan: nested-loop joins that look inner tables up by index
//! (or probe a hash join buffer), key ranges evaluated from the row built so far, grouping
//! in a B-tree keyed by group values (spilling past `sort_buffer_size`), WITH ROLLUP,
//! window functions over the block's rows, sort, DISTINCT, LIMIT with early stop, and the
//! row source of UPDATE/DELETE ([`matching_rows`]).

use crate::bind::{AggFunc, SType};
use crate::context::{ExecCtx, ReadModeGuard};
use crate::exec::aggregate::{
    self, eval_inputs, feed, finish_state_in, input_count, new_state, AggState,
};
use crate::exec::executor::Executor;
use crate::exec::window;
use crate::expr::keys::group_key;
use crate::expr::{sort_compare, EvalCtx, Expr};
use crate::plan::block::{Access, SelectPlan};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;
use strata_engine::{Flow, KeyRange, Txn};
use strata_types::keycode::{encode_value, prefix_successor};
use strata_types::{Collation, ColumnMeta, DataType, EndInfo, Error, QueryOutput, Result, Value};

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
        if c.data_type.is_string() && !matches!(v, Value::Bytes(_)) {
            return false;
        }
        if matches!(
            c.data_type,
            DataType::Double | DataType::Float | DataType::Decimal { .. }
        ) && !v.is_numeric()
        {
            return false;
        }
        encode_value(out, v, &c.data_type, c.collation)
    };
    match &plan.levels[lvl].access {
        Access::Scan | Access::JoinBuffer { .. } => Ok(None),
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
            let ix = &def.indexes[*index];
            let mut prefix = Vec::with_capacity(16);
            for (e, &col) in eq.iter().zip(&ix.columns) {
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Some((*index, vec![], false)));
                }
                if !encode(&mut prefix, col, &v) {
                    return Ok(None);
                }
            }
            let next = ix.columns.get(eq.len()).copied();
            let bound = |b: &Option<(Expr, bool)>| -> Result<Option<(Option<Vec<u8>>, bool)>> {
                match (b, next) {
                    (Some((e, incl)), Some(col)) => {
                        let v = e.eval(row, cx)?;
                        if v.is_null() {
                            return Ok(Some((None, *incl)));
                        }
                        let mut k = prefix.clone();
                        Ok(if encode(&mut k, col, &v) {
                            Some((Some(k), *incl))
                        } else {
                            None
                        })
                    }
                    _ => Ok(Some((None, true))),
                }
            };
            let (Some(lo), Some(hi)) = (bound(lower)?, bound(upper)?) else {
                return Ok(None);
            };
            if (lower.is_some() && lo.0.is_none()) || (upper.is_some() && hi.0.is_none()) {
                // A NULL bound matches nothing.
                return Ok(Some((*index, vec![], false)));
            }
            let start = match lo {
                (Some(k), true) => Bound::Included(k),
                (Some(k), false) => match prefix_successor(&k) {
                    Some(s) => Bound::Included(s),
                    None => return Ok(Some((*index, vec![], false))),
                },
                (None, _) if next.is_some() && upper.is_some() => {
                    let mut k = prefix.clone();
                    k.push(1); // skip NULLs of the range column
                    Bound::Included(k)
                }
                (None, _) if prefix.is_empty() => Bound::Unbounded,
                (None, _) => Bound::Included(prefix.clone()),
            };
            let end = match hi {
                (Some(k), true) => match prefix_successor(&k) {
                    Some(s) => Bound::Excluded(s),
                    None => Bound::Unbounded,
                },
                (Some(k), false) => Bound::Excluded(k),
                (None, _) => match prefix_successor(&prefix) {
                    Some(s) if !prefix.is_empty() => Bound::Excluded(s),
                    _ => Bound::Unbounded,
                },
            };
            Ok(Some((*index, vec![KeyRange { start, end }], *reverse)))
        }
    }
}

/// Runs the join, calling `emit` with each complete row (`lvl` is 0: the whole join).
pub(crate) fn run_level(
    plan: &SelectPlan,
    txn: &Txn,
    lvl: usize,
    row: &mut [Value],
    cx: &EvalCtx,
    emit: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    debug_assert_eq!(lvl, 0);
    crate::exec::join::run(plan, txn, row, cx, emit)
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

pub(crate) struct Group {
    states: Vec<AggState>,
    seen: Vec<Option<HashSet<Vec<u8>>>>,
    keys: Vec<Value>,
    /// How many GROUP BY values this group keeps: all of them, or fewer for a
    /// WITH ROLLUP super-aggregate row (the rest show as NULL).
    level: usize,
}

/// Approximate heap bytes of a value, for the memory bound of grouping.
pub(crate) fn value_bytes(v: &Value) -> usize {
    match v {
        Value::Bytes(b) => 24 + b.len(),
        _ => 24,
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
    for (slot, sub) in &plan.derived {
        if let Some(sub) = sub {
            ex.materialize(*slot, sub)?;
        }
    }
    let cx = ex.cx;
    let params = ex.params;
    // After the derived tables ran with their own modes: this query's reads.
    let _mode = ReadModeGuard::set(cx.txn, plan.read_mode);
    let ecx = EvalCtx {
        params,
        env: cx.env,
        outer,
        runner: Some(ex),
    };
    let limit = limit_value(&plan.limit, &ecx)?;
    let offset = limit_value(&plan.offset, &ecx)?.unwrap_or(0);
    if let Some(w) = &plan.windows {
        window::eval::check_constants(w, &ecx)?;
    }
    let visible = plan.columns.len();
    out.columns(&plan.columns)?;

    let mut const_ok = true;
    for c in &plan.const_filter {
        if !c.test(&[], &ecx)? {
            const_ok = false;
        }
    }

    // Rows in output order are written here directly when nothing needs buffering.
    let streaming = plan.group.is_none()
        && plan.windows.is_none()
        && (plan.order.is_empty() || plan.order_satisfied);
    let mut buffered: Vec<Vec<Value>> = Vec::new();
    // With window functions: the rows the projection reads, kept until every one is
    // known, then extended with the calls' values.
    let mut window_rows: Vec<Vec<Value>> = Vec::new();
    let cmp = |a: &[Value], b: &[Value]| {
        for (pos, desc, coll) in &plan.order {
            let o = sort_compare(&a[*pos], &b[*pos], *coll);
            if o != Ordering::Equal {
                return if *desc { o.reverse() } else { o };
            }
        }
        Ordering::Equal
    };
    let mut sorter = (!plan.order.is_empty() && !plan.order_satisfied)
        .then(|| crate::exec::sort::ExternalSorter::new(cx.sort_buffer_size, cx.tmpdir, &cmp));
    let mut sent = 0u64;
    let mut skipped = 0u64;
    let mut distinct_seen: HashSet<Vec<u8>> = HashSet::new();
    let mut out_row: Vec<Value> = Vec::with_capacity(plan.projection.len());
    let mut write_err: Option<Error> = None;

    let mut emit_final = |r: &[Value], out: &mut dyn QueryOutput| -> Result<Flow> {
        if plan.distinct {
            let mut k = Vec::new();
            for (i, v) in r[..visible].iter().enumerate() {
                let coll = if plan.columns[i].charset == 63 {
                    Collation::Binary
                } else {
                    Collation::GeneralCi
                };
                group_key(&mut k, v, coll);
            }
            if !distinct_seen.insert(k) {
                return Ok(Flow::Continue);
            }
        }
        if skipped < offset {
            skipped += 1;
            return Ok(Flow::Continue);
        }
        if limit.is_some_and(|l| sent >= l) {
            return Ok(Flow::Stop);
        }
        out.row(&r[..visible])?;
        sent += 1;
        Ok(if limit.is_some_and(|l| sent >= l) {
            Flow::Stop
        } else {
            Flow::Continue
        })
    };

    if plan.count_star_only && const_ok {
        let n = plan.scope.tables[plan.levels[0].table].table.status().rows;
        let mut row = vec![Value::Int(n as i64)];
        let g = plan.group.as_ref().map(|g| g.groups.len()).unwrap_or(0);
        if g == 0 {
            row = plan
                .projection
                .iter()
                .map(|e| e.eval(&row, &ecx))
                .collect::<Result<_>>()?;
        }
        if limit != Some(0) && offset == 0 {
            out.row(&row[..visible])?;
            sent = 1;
        }
        out.end(&EndInfo::default())?;
        return Ok(sent);
    }

    let mut row = vec![Value::Null; plan.scope.width()];
    if let Some(gp) = &plan.group {
        // Turns one finished group into its output row: HAVING, then the projection,
        // then into the sort, the buffer, or (after a spill, in group order) out.
        let mut finish_group =
            |g: Group, direct: bool, out: &mut dyn QueryOutput| -> Result<Flow> {
                let mut agg_row = g.keys;
                for (state, spec) in g.states.into_iter().zip(&gp.aggs) {
                    agg_row.push(if spec.func == AggFunc::Grouping {
                        aggregate::grouping_value(spec, g.level)
                    } else {
                        finish_state_in(state, spec, cx.env)
                    });
                }
                if let Some(h) = &gp.having {
                    if !h.test(&agg_row, &ecx)? {
                        return Ok(Flow::Continue);
                    }
                }
                if plan.windows.is_some() {
                    window_rows.push(agg_row);
                    return Ok(Flow::Continue);
                }
                let projected: Vec<Value> = plan
                    .projection
                    .iter()
                    .map(|e| e.eval(&agg_row, &ecx))
                    .collect::<Result<_>>()?;
                match sorter.as_mut() {
                    Some(s) => s.push(projected)?,
                    None if direct => return emit_final(&projected, out),
                    None => buffered.push(projected),
                }
                Ok(Flow::Continue)
            };
        let ng = gp.groups.len();
        let new_group = |keys: Vec<Value>, level: usize| Group {
            states: gp.aggs.iter().map(new_state).collect(),
            seen: gp
                .aggs
                .iter()
                .map(|a| a.distinct.then(HashSet::new))
                .collect(),
            keys,
            level,
        };
        // Rows fed so far, numbered for GROUP_CONCAT's truncation warning.
        let row_no = std::cell::Cell::new(0u64);
        let accumulate = |g: &mut Group, args: &[Value], row_no: u64| -> Result<()> {
            let mut rest = args;
            for (i, spec) in gp.aggs.iter().enumerate() {
                let n = input_count(spec).min(rest.len());
                let (mine, after) = rest.split_at(n);
                rest = after;
                feed(
                    &mut g.states[i],
                    &mut g.seen[i],
                    spec,
                    mine.to_vec(),
                    row_no,
                )?;
            }
            Ok(())
        };
        // WITH ROLLUP: the key of the super-aggregate over the first `level` GROUP BY
        // values. Group keys are prefix-free and never start with 0xFF, so the marker
        // sorts this entry after every group that shares the prefix and before the next
        // prefix, which is MySQL's output order.
        let rollup_key = |full: &[Value], level: usize| -> (Vec<u8>, Vec<Value>) {
            let mut k = Vec::new();
            for ((_, coll), v) in gp.groups.iter().zip(full).take(level) {
                group_key(&mut k, v, *coll);
            }
            k.push(0xFF);
            let mut keys = full[..level].to_vec();
            keys.resize(ng, Value::Null);
            (k, keys)
        };
        let mut groups: BTreeMap<Vec<u8>, Group> = BTreeMap::new();
        // Bytes the groups hold, roughly; past sort_buffer_size they go to disk.
        let mut group_bytes = 0usize;
        let mut spill = false;
        if const_ok && limit != Some(0) || !gp.groups.is_empty() {
            let mut key = Vec::new();
            if const_ok {
                run_level(plan, cx.txn, 0, &mut row, &ecx, &mut |r| {
                    key.clear();
                    for (e, coll) in &gp.groups {
                        group_key(&mut key, &e.eval(r, &ecx)?, *coll);
                    }
                    let g = match groups.get_mut(&key) {
                        Some(g) => g,
                        None => {
                            let keys = gp
                                .groups
                                .iter()
                                .map(|(e, _)| e.eval(r, &ecx))
                                .collect::<Result<Vec<_>>>()?;
                            group_bytes += 2 * key.len()
                                + keys.iter().map(value_bytes).sum::<usize>()
                                + 48 * gp.aggs.len()
                                + 64;
                            if group_bytes > cx.sort_buffer_size && !gp.groups.is_empty() {
                                spill = true;
                                return Ok(Flow::Stop);
                            }
                            groups
                                .entry(key.clone())
                                .or_insert_with(|| new_group(keys, ng))
                        }
                    };
                    let mut args = Vec::new();
                    for spec in &gp.aggs {
                        eval_inputs(spec, r, &ecx, &mut args)?;
                    }
                    let full_keys = gp.rollup.then(|| g.keys.clone());
                    row_no.set(row_no.get() + 1);
                    accumulate(g, &args, row_no.get())?;
                    if let Some(full) = full_keys {
                        for level in (0..ng).rev() {
                            let (k, keys) = rollup_key(&full, level);
                            let sg = groups.entry(k).or_insert_with(|| new_group(keys, level));
                            accumulate(sg, &args, row_no.get())?;
                        }
                    }
                    Ok(Flow::Continue)
                })?;
            }
        }
        if spill && gp.rollup {
            return Err(Error::NotSupported(
                "WITH ROLLUP over more groups than sort_buffer_size holds".into(),
            ));
        }
        if spill {
            // Too many groups for memory: read the rows again, sort them by group key
            // through temporary files, and aggregate each run of equal keys as it
            // streams back.
            drop(groups);
            let by_key = |a: &[Value], b: &[Value]| match (&a[0], &b[0]) {
                (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
                _ => Ordering::Equal,
            };
            let mut pre =
                crate::exec::sort::ExternalSorter::new(cx.sort_buffer_size, cx.tmpdir, &by_key);
            run_level(plan, cx.txn, 0, &mut row, &ecx, &mut |r| {
                let mut key = Vec::new();
                let mut pre_row = Vec::with_capacity(1 + ng + gp.aggs.len());
                pre_row.push(Value::Null);
                for (e, coll) in &gp.groups {
                    let v = e.eval(r, &ecx)?;
                    group_key(&mut key, &v, *coll);
                    pre_row.push(v);
                }
                pre_row[0] = Value::Bytes(key);
                for spec in &gp.aggs {
                    eval_inputs(spec, r, &ecx, &mut pre_row)?;
                }
                pre.push(pre_row)?;
                Ok(Flow::Continue)
            })?;
            let mut current: Option<(Value, Group)> = None;
            let mut stopped = false;
            pre.finish(&mut |mut r| {
                let args: Vec<Value> = r.drain(1 + ng..).collect();
                let keys: Vec<Value> = r.drain(1..).collect();
                let key = r.pop().unwrap_or(Value::Null);
                if current.as_ref().is_some_and(|(k, _)| *k != key) {
                    if let Some((_, g)) = current.take() {
                        if finish_group(g, true, out)? == Flow::Stop {
                            stopped = true;
                            return Ok(false);
                        }
                    }
                }
                let (_, g) = current.get_or_insert_with(|| (key, new_group(keys, ng)));
                row_no.set(row_no.get() + 1);
                accumulate(g, &args, row_no.get())?;
                Ok(true)
            })?;
            if let Some((_, g)) = current.take().filter(|_| !stopped) {
                finish_group(g, true, out)?;
            }
        } else {
            if groups.is_empty() && gp.groups.is_empty() {
                // An aggregate over no rows still yields one row.
                groups.insert(
                    vec![],
                    Group {
                        states: gp.aggs.iter().map(new_state).collect(),
                        seen: vec![],
                        keys: vec![],
                        level: 0,
                    },
                );
            }
            for (_, g) in groups {
                finish_group(g, false, out)?;
            }
        }
    } else if const_ok && limit != Some(0) {
        run_level(plan, cx.txn, 0, &mut row, &ecx, &mut |r| {
            if plan.windows.is_some() {
                window_rows.push(r.to_vec());
                return Ok(Flow::Continue);
            }
            out_row.clear();
            for e in &plan.projection {
                out_row.push(e.eval(r, &ecx)?);
            }
            if streaming {
                match emit_final(&out_row, out) {
                    Ok(f) => Ok(f),
                    Err(e) => {
                        write_err = Some(e.clone());
                        Err(e)
                    }
                }
            } else {
                match sorter.as_mut() {
                    Some(s) => s.push(out_row.clone())?,
                    None => buffered.push(out_row.clone()),
                }
                Ok(Flow::Continue)
            }
        })?;
    }
    if let Some(e) = write_err {
        return Err(e);
    }
    if let Some(w) = &plan.windows {
        window::eval::compute(w, &mut window_rows, &ecx)?;
        for r in &window_rows {
            let projected: Vec<Value> = plan
                .projection
                .iter()
                .map(|e| e.eval(r, &ecx))
                .collect::<Result<_>>()?;
            match sorter.as_mut() {
                Some(s) => s.push(projected)?,
                None => buffered.push(projected),
            }
        }
    }
    for r in &buffered {
        if emit_final(r, out)? == Flow::Stop {
            break;
        }
    }
    if let Some(sorter) = sorter {
        sorter.finish(&mut |r| Ok(emit_final(&r, out)? != Flow::Stop))?;
    }
    out.end(&EndInfo::default())?;
    Ok(sent)
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
    let _mode = ReadModeGuard::set(cx.txn, plan.read_mode);
    let mut rows = Vec::new();
    let t = &plan.scope.tables[plan.levels[0].table];
    let filter = &plan.levels[0].filter;
    let mut cb = |id, vals: &[Value]| -> Result<Flow> {
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
