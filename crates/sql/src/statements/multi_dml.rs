//! Multi-table UPDATE and DELETE, as MySQL 8: `UPDATE t1 JOIN t2 ON … SET t1.a = …,
//! t2.b = …`, `UPDATE t1, t2 SET …` (the comma list rewritten by
//! `parse::join_commas`), `DELETE t1, t2 FROM t1 JOIN t2 …` and
//! `DELETE FROM t1 USING t1 JOIN t2 …`.
//!
//! Planning: the statement's tables, WHERE and SET values become one query block,
//! `SELECT <SET values> FROM <tables> WHERE …`, planned as any SELECT
//! (`planner::block::plan_block`: join order, access paths, derived tables, subqueries),
//! and then adjusted so each changed table's level hands over whole rows and the ids
//! of the rows (never from a hash join buffer). A target must be a base table of that
//! FROM clause (1288 for a derived table, 1109 for a DELETE name that is none).
//!
//! Execution, as MySQL's: the join runs first (`exec::block::joined_rows`), reading
//! the changed tables with exclusive row locks and the others with shared ones, and
//! collects per target each row once — the first join row that matches it — with its SET
//! values computed from that join row, so every value is computed from the rows as
//! they were before this statement changed any. Then the rows are changed table by table
//! through the same per-row code as single-table UPDATE and DELETE (`dml::update_row`,
//! `dml::delete_row`: triggers, CHECK constraints, foreign keys, ON UPDATE
//! CURRENT_TIMESTAMP, the binary log's row images). "Rows matched" counts the distinct
//! rows found, affected rows those really changed (or deleted).

use crate::bind::Binder;
use crate::constraints::RowRules;
use crate::context::{ExecCtx, Outcome, TableLocks};
use crate::exec::block::joined_rows;
use crate::exec::executor::Executor;
use crate::exec::join::RowIds;
use crate::expr::Expr;
use crate::plan::block::{Access, SelectPlan};
use crate::plan::query::SubqueryPlans;
use crate::planner::block::plan_block;
use crate::planner::query::{bare_query, Planner};
use crate::statements::dml::{self, DeletePlan, Target, UpdatePlan};
use crate::statements::ignore;
use sqlparser::ast;
use std::cell::Cell;
use std::collections::HashSet;
use std::sync::Arc;
use strata_engine::{LockMode, ReadMode, RowId};
use strata_types::keycode::encode_index_key;
use strata_types::{Error, Result, Value};

/// What a multi-table UPDATE or DELETE adds to its plan: the targets after the first
/// (the plan's `target`) and, per target, where its rows are in the join.
pub struct Multi {
    pub more: Vec<Target>,
    /// Per target, the plan's `target` first.
    pub slots: Vec<TargetSlot>,
}

pub struct TargetSlot {
    /// The target's position in the join's scope.
    pub table: usize,
    /// UPDATE: (column, position of its value in the join's projection), in SET order.
    pub sets: Vec<(usize, usize)>,
}

/// The one-block query a multi-table statement reads its rows with.
fn block_query(
    from: Vec<ast::TableWithJoins>,
    projection: Vec<ast::SelectItem>,
    selection: Option<ast::Expr>,
) -> Result<(ast::Query, ast::Select)> {
    let mut parsed = crate::parse::parse("SELECT 1")?;
    let Some(ast::Statement::Query(q)) = parsed.pop() else {
        return Err(Error::Internal("SELECT 1 did not parse as a query".into()));
    };
    let ast::SetExpr::Select(mut select) = *q.body else {
        return Err(Error::Internal("SELECT 1 is not a query block".into()));
    };
    select.from = from;
    select.projection = projection;
    select.selection = selection;
    let q = bare_query(ast::SetExpr::Select(select.clone()));
    Ok((q, *select))
}

/// The names in a FROM clause that are views or derived tables, by the name the
/// statement uses for them: a target among them gets 1288 (derived table) or 1235 (a
/// view: changing rows through a view in a multi-table statement is not done here).
fn views_in(from: &[ast::TableWithJoins], cx: &ExecCtx) -> Vec<(String, bool)> {
    fn factor(f: &ast::TableFactor, cx: &ExecCtx, out: &mut Vec<(String, bool)>) {
        match f {
            ast::TableFactor::Table { name, alias, .. } => {
                if let Ok((db, t)) = crate::context::resolve_table(cx, name) {
                    if cx.catalog.view(&db, &t).is_some() {
                        let used = alias.as_ref().map(|a| a.name.value.clone()).unwrap_or(t);
                        out.push((used, true));
                    }
                }
            }
            ast::TableFactor::Derived { alias: Some(a), .. } => {
                out.push((a.name.value.clone(), false))
            }
            ast::TableFactor::NestedJoin {
                table_with_joins, ..
            } => twj(table_with_joins, cx, out),
            _ => {}
        }
    }
    fn twj(t: &ast::TableWithJoins, cx: &ExecCtx, out: &mut Vec<(String, bool)>) {
        factor(&t.relation, cx, out);
        for j in &t.joins {
            factor(&j.relation, cx, out);
        }
    }
    let mut out = Vec::new();
    for t in from {
        twj(t, cx, &mut out);
    }
    out
}

/// The target for scope table `ti` of `source`: 1288 when it is a derived table, 1235
/// when it is a view.
fn target_at(
    cx: &ExecCtx,
    source: &SelectPlan,
    ti: usize,
    views: &[(String, bool)],
    verb: &'static str,
) -> Result<Target> {
    let st = &source.scope.tables[ti];
    if !st.is_base() {
        if views.iter().any(|(n, view)| *view && *n == st.alias) {
            return Err(Error::NotSupported(format!(
                "multi-table {verb} of a view ('{}')",
                st.alias
            )));
        }
        return Err(Error::NonUpdatableTable {
            table: st.alias.clone(),
            verb,
        });
    }
    let table = st.table.clone();
    let def = table.def().clone();
    let rules = RowRules::for_target(cx, &st.db, &def, &table)?;
    // Expression defaults (SET c = DEFAULT) and generated columns, as single-table.
    let exprs = crate::statements::column_expr::ColumnExprs::bind(&def, &st.db, &table)?;
    Ok(Target {
        db: st.db.clone(),
        table,
        def,
        rules,
        exprs,
        triggers: None,
        through: None,
    })
}

/// Shapes the join for changing rows: each changed table's level reads whole rows by
/// scan or index (a hash join buffer keeps no row ids), and the statement's locking
/// read is recorded (READ ONLY transactions refuse it like any write).
fn prepare_source(source: &mut SelectPlan, targets: &[usize]) {
    for level in &mut source.levels {
        if targets.contains(&level.table) {
            level.columns = None;
            if matches!(level.access, Access::JoinBuffer { .. }) {
                level.access = Access::Scan;
            }
        }
    }
    source.read_mode = ReadMode::LockExclusive;
}

/// Finishes the plan's subqueries: 1093 when one reads a changed table; the tables of
/// the FROM clause that are not changed stay in `tables` (read-locked, SELECT needed).
fn finish_subqueries(planner: Planner, targets: &[&Target]) -> Result<SubqueryPlans> {
    let mut subqueries = planner.finish();
    for t in targets {
        subqueries.check_target_not_read(&t.db, &t.def.name)?;
    }
    subqueries
        .tables
        .retain(|(_, _, table)| !targets.iter().any(|t| Arc::ptr_eq(&t.table, table)));
    Ok(subqueries)
}

/// One base table changed under two names (`UPDATE t AS a JOIN t AS b SET a.x = …,
/// b.y = …`): refused rather than changing a row twice from stale images.
fn check_distinct(targets: &[Target]) -> Result<()> {
    for (i, t) in targets.iter().enumerate() {
        if targets[..i].iter().any(|u| Arc::ptr_eq(&u.table, &t.table)) {
            return Err(Error::NotSupported(format!(
                "a multi-table UPDATE/DELETE changing table '{}' under two names",
                t.def.name
            )));
        }
    }
    Ok(())
}

fn split_targets(mut targets: Vec<Target>, slots: Vec<TargetSlot>) -> Result<(Target, Multi)> {
    if targets.is_empty() {
        return Err(Error::Internal(
            "multi-table statement without a target".into(),
        ));
    }
    let first = targets.remove(0);
    Ok((
        first,
        Multi {
            more: targets,
            slots,
        },
    ))
}

pub fn plan_update(u: &ast::Update, cx: &ExecCtx) -> Result<UpdatePlan> {
    // MySQL 8 takes neither with more than one table (MariaDB does).
    if !u.order_by.is_empty() {
        return Err(Error::WrongUsage("UPDATE".into(), "ORDER BY".into()));
    }
    if u.limit.is_some() {
        return Err(Error::WrongUsage("UPDATE".into(), "LIMIT".into()));
    }
    let mut projection = Vec::new();
    let mut columns = Vec::new();
    for a in &u.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(Error::NotSupported("tuple assignment".into()));
        };
        if crate::bind::contains_aggregate(&a.value) {
            return Err(Error::InvalidGroupUse);
        }
        projection.push(ast::SelectItem::UnnamedExpr(a.value.clone()));
        columns.push(n.clone());
    }
    let from = vec![u.table.clone()];
    let views = views_in(&from, cx);
    let (q, select) = block_query(from, projection, u.selection.clone())?;
    let planner = Planner::new(cx).without_merge();
    let env = planner.root_env();
    let mut source = plan_block(&q, &select, &planner, &env)?;
    // Each SET column, bound as a column of the join: (scope table, column).
    let mut slots: Vec<TargetSlot> = Vec::new();
    for (i, name) in columns.iter().enumerate() {
        let parts: Vec<ast::Ident> = name
            .0
            .iter()
            .filter_map(|p| p.as_ident().cloned())
            .collect();
        let e = match parts.as_slice() {
            [one] => ast::Expr::Identifier(one.clone()),
            _ => ast::Expr::CompoundIdentifier(parts),
        };
        let (bound, _, _) = Binder::in_env(&source.scope, "field list", &env).bind(&e)?;
        let Expr::Column(pos) = bound else {
            return Err(Error::UnknownColumn {
                column: name.to_string(),
                context: "field list".into(),
            });
        };
        let ti = source.scope.table_of(pos);
        let col = pos - source.scope.tables[ti].offset;
        match slots.iter_mut().find(|s| s.table == ti) {
            Some(s) => s.sets.push((col, i)),
            None => slots.push(TargetSlot {
                table: ti,
                sets: vec![(col, i)],
            }),
        }
    }
    drop(env);
    let targets = slots
        .iter()
        .map(|s| target_at(cx, &source, s.table, &views, "UPDATE"))
        .collect::<Result<Vec<_>>>()?;
    check_distinct(&targets)?;
    // A hexadecimal literal stored into a numeric column is its number, as in
    // single-table UPDATE.
    for (s, t) in slots.iter().zip(&targets) {
        for &(col, i) in &s.sets {
            if let ast::SelectItem::UnnamedExpr(v) = &select.projection[i] {
                if let Some(n) = dml::numeric_hex(v, t.def.columns.get(col)) {
                    source.projection[i] = Expr::Literal(n);
                }
            }
        }
    }
    let tables: Vec<usize> = slots.iter().map(|s| s.table).collect();
    prepare_source(&mut source, &tables);
    let subqueries = finish_subqueries(planner, &targets.iter().collect::<Vec<_>>())?;
    let (target, multi) = split_targets(targets, slots)?;
    Ok(UpdatePlan {
        target,
        source,
        assignments: vec![],
        subqueries,
        multi: Some(Box::new(multi)),
        ignore: crate::parse::dml_modifiers::has_ignore(&u.optimizer_hints),
    })
}

/// The scope table a DELETE target names: `t` is the name (or alias) FROM uses for a
/// table, `db.t` a table FROM names without an alias. 1109 otherwise.
fn delete_target(source: &SelectPlan, name: &ast::ObjectName, cx: &ExecCtx) -> Result<usize> {
    let parts = crate::parse::object_name_parts(name);
    let found = match parts.as_slice() {
        [t] => source.scope.tables.iter().position(|s| s.alias == *t),
        [db, t] => source
            .scope
            .tables
            .iter()
            .position(|s| s.db.eq_ignore_ascii_case(db) && s.alias == *t && s.def.name == *t),
        _ => None,
    };
    let _ = cx;
    found.ok_or_else(|| Error::UnknownTableInMultiDelete(parts.last().cloned().unwrap_or_default()))
}

pub fn plan_delete(d: &ast::Delete, cx: &ExecCtx) -> Result<DeletePlan> {
    // MySQL's grammar has no ORDER BY or LIMIT for the multi-table forms.
    if !d.order_by.is_empty() || d.limit.is_some() {
        return Err(Error::Syntax(
            "ORDER BY or LIMIT in a multi-table DELETE".into(),
        ));
    }
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(t) | ast::FromTable::WithoutKeyword(t) => t,
    };
    // `DELETE t1, t2 FROM <tables>` or `DELETE FROM t1, t2 USING <tables>`.
    let (names, tables): (Vec<ast::ObjectName>, Vec<ast::TableWithJoins>) = match &d.using {
        Some(using) => {
            let mut names = Vec::new();
            for t in from {
                let ast::TableFactor::Table { name, .. } = &t.relation else {
                    return Err(Error::Syntax("a DELETE target that is not a table".into()));
                };
                if !t.joins.is_empty() {
                    return Err(Error::Syntax(
                        "a join in the tables DELETE deletes from".into(),
                    ));
                }
                names.push(name.clone());
            }
            (names, using.clone())
        }
        None => (d.tables.clone(), from.clone()),
    };
    if names.is_empty() {
        return Err(Error::Syntax("DELETE without a target".into()));
    }
    let views = views_in(&tables, cx);
    let one = ast::SelectItem::UnnamedExpr(ast::Expr::Value(
        ast::Value::Number("1".into(), false).into(),
    ));
    let (q, select) = block_query(tables, vec![one], d.selection.clone())?;
    let planner = Planner::new(cx).without_merge();
    let env = planner.root_env();
    let mut source = plan_block(&q, &select, &planner, &env)?;
    drop(env);
    let mut slots: Vec<TargetSlot> = Vec::new();
    for n in &names {
        let ti = delete_target(&source, n, cx)?;
        if !slots.iter().any(|s| s.table == ti) {
            slots.push(TargetSlot {
                table: ti,
                sets: vec![],
            });
        }
    }
    let targets = slots
        .iter()
        .map(|s| target_at(cx, &source, s.table, &views, "DELETE"))
        .collect::<Result<Vec<_>>>()?;
    check_distinct(&targets)?;
    let tables: Vec<usize> = slots.iter().map(|s| s.table).collect();
    prepare_source(&mut source, &tables);
    let subqueries = finish_subqueries(planner, &targets.iter().collect::<Vec<_>>())?;
    let (target, multi) = split_targets(targets, slots)?;
    Ok(DeletePlan {
        target,
        source,
        subqueries,
        multi: Some(Box::new(multi)),
        ignore: crate::parse::dml_modifiers::has_ignore(&d.optimizer_hints),
    })
}

/// Locks every changed table for writing and every table read for reading, in the one
/// order all statements use.
fn lock_all<'t>(
    cx: &ExecCtx,
    targets: impl Iterator<Item = &'t Target>,
    subqueries: &SubqueryPlans,
) -> Result<TableLocks> {
    let mut locks = TableLocks::default();
    let mut want = Vec::new();
    for t in targets {
        want.push((
            t.db.as_str(),
            t.def.name.as_str(),
            &t.table,
            LockMode::Write,
        ));
    }
    for (db, name, t) in &subqueries.tables {
        want.push((db.as_str(), name.as_str(), t, LockMode::Read));
    }
    cx.lock_tables(&mut locks, &want)?;
    Ok(locks)
}

/// A row's identity within the statement: its id and, in a table with a primary key,
/// the key's bytes (an engine may identify such rows by their key alone: btree hands
/// out id 0 for them).
fn identity(def: &strata_types::TableDef, id: RowId, row: &[Value]) -> (RowId, Vec<u8>) {
    let mut key = Vec::new();
    if let Some(pk) = def.primary_key() {
        encode_index_key(&mut key, def, pk, row);
    }
    (id, key)
}

/// A row to change: its id, its values as read, and (UPDATE) its SET values.
type Found = (RowId, Vec<Value>, Vec<Value>);

/// Runs the join and keeps, per target, each row once (the first join row that reaches
/// it) with the SET values that join row gives it.
fn collect(source: &SelectPlan, multi: &Multi, ex: &Executor) -> Result<Vec<Vec<Found>>> {
    let scope = &source.scope;
    let ids = RowIds {
        ids: (0..scope.tables.len()).map(|_| Cell::new(None)).collect(),
        modes: (0..scope.tables.len())
            .map(|ti| {
                if multi.slots.iter().any(|s| s.table == ti) {
                    ReadMode::LockExclusive
                } else {
                    ReadMode::LockShared
                }
            })
            .collect(),
    };
    let mut seen: Vec<HashSet<(RowId, Vec<u8>)>> =
        multi.slots.iter().map(|_| HashSet::new()).collect();
    let mut found: Vec<Vec<Found>> = multi.slots.iter().map(|_| Vec::new()).collect();
    joined_rows(source, ex, &ids, &mut |row, values| {
        for (k, slot) in multi.slots.iter().enumerate() {
            // None: the table's side of an outer join had no row here.
            let Some(id) = ids.ids[slot.table].get() else {
                continue;
            };
            let t = &scope.tables[slot.table];
            let old = &row[t.offset..t.offset + t.def.columns.len()];
            if !seen[k].insert(identity(&t.def, id, old)) {
                continue;
            }
            let old = old.to_vec();
            let sets = slot.sets.iter().map(|&(_, i)| values[i].clone()).collect();
            found[k].push((id, old, sets));
        }
        Ok(())
    })?;
    Ok(found)
}

pub fn execute_update(
    p: &UpdatePlan,
    multi: &Multi,
    cx: &mut ExecCtx,
    params: &[Value],
) -> Result<Outcome> {
    let locks = lock_all(cx, p.targets(), &p.subqueries)?;
    let ex = Executor::new(&p.subqueries.subqueries, cx, params);
    let found = collect(&p.source, multi, &ex)?;
    // A warning a strict UPDATE makes its error, raised while reading: before any change.
    crate::expr::env_overlay::raise_kept(cx.env)?;
    let ecx = ex.eval_ctx(&[]);
    let (mut matched, mut changed) = (0u64, 0u64);
    for ((target, slot), rows) in p.targets().zip(&multi.slots).zip(found) {
        let def = &target.def;
        for (n, (id, old, sets)) in rows.into_iter().enumerate() {
            cx.txn.check_interrupt()?;
            matched += 1;
            let row = n as u64 + 1;
            // UPDATE IGNORE skips a row whose change fails (`statements::ignore`).
            let done = ignore::row(cx, p.ignore, || {
                let mut new = old.clone();
                for (&(col, _), v) in slot.sets.iter().zip(sets) {
                    dml::assign(def, &mut new, col, v, row, cx)?;
                }
                let assigned = slot.sets.iter().map(|s| s.0);
                dml::update_row(target, assigned, id, &old, new, row, cx, &ecx, &locks)
            })?;
            if done == Some(true) {
                changed += 1;
            }
        }
    }
    Ok(dml::update_outcome(matched, changed, cx))
}

pub fn execute_delete(
    p: &DeletePlan,
    multi: &Multi,
    cx: &mut ExecCtx,
    params: &[Value],
) -> Result<Outcome> {
    let locks = lock_all(cx, p.targets(), &p.subqueries)?;
    let ex = Executor::new(&p.subqueries.subqueries, cx, params);
    let found = collect(&p.source, multi, &ex)?;
    let mut deleted = 0u64;
    for (target, rows) in p.targets().zip(found) {
        for (id, old, _) in rows {
            cx.txn.check_interrupt()?;
            // DELETE IGNORE keeps a row it cannot delete.
            let done = ignore::row(cx, p.ignore, || {
                dml::delete_row(target, id, &old, cx, &locks)
            })?;
            if done.is_some() {
                deleted += 1;
            }
        }
    }
    Ok(Outcome::ok(deleted))
}
