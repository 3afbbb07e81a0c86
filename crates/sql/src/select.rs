//! SELECT: planning (FROM → scope → per-table access paths and filters, select
//! list, grouping, ordering, limits) and execution (nested-loop joins that look inner
//! tables up by index, hash-free grouping in a B-tree keyed by group values, in-memory
//! sort, DISTINCT, LIMIT with early stop).
//!
//! Access paths: for each table the planner looks at the WHERE/ON conjuncts that compare
//! one of its columns with something already known (a constant, a parameter, or a column
//! of a table earlier in the join) and picks the index that uses them best: all columns
//! of a unique index by equality (`eq_ref`/`const`), the longest equality prefix (`ref`),
//! a range on the next column (`range`), or an IN list on the first column. Every
//! conjunct is still evaluated as a filter, so an index only ever narrows what is read,
//! and a value that cannot be encoded as a key falls back to a scan, never to a wrong
//! answer.
//!
//! Reads follow the transaction's read mode: a plain SELECT is a consistent read,
//! `FOR UPDATE` locks exclusively, `FOR SHARE` / `LOCK IN SHARE MODE` share-locks, and
//! the row source of an UPDATE or DELETE locks exclusively ([`plan_single_table`]).

use crate::aggregate::{
    self, eval_inputs, feed, finish_state_in, input_count, new_state, AggState,
};
use crate::bind::{self, AggFunc, AggSpec, Aggregation, BindEnv, Binder, SType, Scope};
use crate::exec::{ExecCtx, ReadModeGuard};
use crate::expr::{sort_compare, CmpOp, EvalCtx, Expr};
use crate::keys::group_key;
use crate::query::{Planner, QueryPlan, Relation};
use crate::run_query::Executor;
use crate::stats::TableStats;
use crate::window::{self, WindowPlan};
use sqlparser::ast;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;
use strata_engine::{Flow, KeyRange, ReadMode, Txn};
use strata_types::keycode::{encode_value, prefix_successor};
use strata_types::{Collation, ColumnMeta, DataType, EndInfo, Error, QueryOutput, Result, Value};

#[derive(Clone, Debug)]
pub enum Access {
    Scan,
    Index {
        index: usize,
        eq: Vec<Expr>,
        lower: Option<(Expr, bool)>,
        upper: Option<(Expr, bool)>,
        reverse: bool,
    },
    IndexIn {
        index: usize,
        values: Vec<Expr>,
    },
    /// No usable index on an inner table: read it once into a hash join buffer keyed
    /// on these equi-join columns (none: one bucket) and probe it per outer row.
    JoinBuffer {
        keys: Vec<crate::hash_join::HashKey>,
    },
}

#[derive(Clone, Debug)]
pub struct Level {
    /// The table this level reads (its position in the scope, i.e. in FROM).
    pub table: usize,
    pub access: Access,
    /// Conditions checked once this table's row is in place.
    pub filter: Vec<Expr>,
    /// The table is inside an outer-join group (the inner side of a LEFT JOIN).
    pub outer: bool,
    /// The outer-join groups' conditions checked here, in `chain` order.
    pub on: Vec<Expr>,
    /// (group, how many of `on` are its): the innermost group of this table first,
    /// then enclosing groups while this level is their last ([`crate::join_groups`]).
    pub chain: Vec<(usize, usize)>,
    /// The outer-join group whose first level this is.
    pub starts: Option<usize>,
    /// Indexes a predicate could drive (EXPLAIN's possible_keys).
    pub possible: Vec<usize>,
}

#[derive(Clone, Debug)]
pub struct GroupPlan {
    pub groups: Vec<(Expr, Collation)>,
    pub aggs: Vec<AggSpec>,
    pub having: Option<Expr>,
    /// WITH ROLLUP: after each run of groups sharing a prefix of the GROUP BY values, a
    /// super-aggregate row over that prefix (the rest NULL), down to the grand total.
    pub rollup: bool,
}

pub struct SelectPlan {
    pub scope: Scope,
    pub levels: Vec<Level>,
    /// Outer-join groups (see [`crate::join_groups`]).
    pub groups: Vec<crate::join_groups::JoinGroup>,
    /// Outer joins or STRAIGHT_JOIN: the levels stay in the FROM clause's order.
    pub fixed_order: bool,
    /// Conditions with no table column (checked once).
    pub const_filter: Vec<Expr>,
    pub group: Option<GroupPlan>,
    /// Output expressions: the visible columns, then hidden sort keys.
    pub projection: Vec<Expr>,
    pub columns: Vec<ColumnMeta>,
    /// ORDER BY as (output position, descending, collation).
    pub order: Vec<(usize, bool, Collation)>,
    /// The access path already yields rows in ORDER BY order.
    pub order_satisfied: bool,
    pub distinct: bool,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    /// `SELECT COUNT(*) FROM t` with nothing else: the engine's exact row count.
    pub count_star_only: bool,
    /// Subqueries in FROM, run at the start of each execution to fill their tables.
    pub derived: Derived,
    /// How the tables are read: consistently, or locking (FOR UPDATE / FOR SHARE).
    pub read_mode: ReadMode,
    /// Window functions, computed over the rows the projection reads (FROM rows, or
    /// grouped rows after HAVING); their values follow those rows' columns.
    pub windows: Option<WindowPlan>,
}

fn split_conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(a, b) => {
            split_conjuncts(*a, out);
            split_conjuncts(*b, out);
        }
        other => out.push(other),
    }
}

/// Resolves a table name against the current database.
pub fn resolve_table(cx: &ExecCtx, name: &ast::ObjectName) -> Result<(String, String)> {
    let parts = bind::object_name_parts(name);
    match parts.as_slice() {
        [t] => Ok((
            cx.current_db.clone().ok_or(Error::NoDatabaseSelected)?,
            t.clone(),
        )),
        [d, t] => Ok((d.clone(), t.clone())),
        _ => Err(Error::Syntax(name.to_string())),
    }
}

/// The read mode a query's locking clauses ask for: `FOR UPDATE` exclusive, `FOR SHARE`
/// (and `LOCK IN SHARE MODE`, which [`crate::parse::parse`] rewrites to it) shared; the
/// strongest wins when several are given.
fn locking_read_mode(locks: &[ast::LockClause]) -> Result<ReadMode> {
    let mut mode = ReadMode::Consistent;
    for l in locks {
        // The engine API has no way to skip or refuse a locked row, nor to lock only
        // some tables of a join: refused rather than quietly taken as a plain lock.
        if let Some(nb) = &l.nonblock {
            return Err(Error::NotSupported(format!("{l}: {nb}")));
        }
        if l.of.is_some() {
            return Err(Error::NotSupported(format!("{l}")));
        }
        mode = match (l.lock_type, mode) {
            (ast::LockType::Update, _) | (_, ReadMode::LockExclusive) => ReadMode::LockExclusive,
            (ast::LockType::Share, _) => ReadMode::LockShared,
        };
    }
    Ok(mode)
}

/// Plans one query block: `select` with the ORDER BY, LIMIT and locking clauses of `q`
/// (empty for a block inside a set operation). Subqueries and outer references bind
/// through `env`; derived tables and CTEs through `planner`.
pub fn plan_block(
    q: &ast::Query,
    select: &ast::Select,
    planner: &Planner,
    env: &BindEnv,
) -> Result<SelectPlan> {
    let cx = planner.cx;
    let read_mode = locking_read_mode(&q.locks)?;

    // FROM: the scope, the join order outer joins fix, and the join conditions.
    let straight = select
        .select_modifiers
        .as_ref()
        .is_some_and(|m| m.straight_join);
    let from = crate::from_clause::plan_from(without_dual(&select.from), straight, planner, env)?;
    let scope = from.scope;
    let derived = from.derived;
    let n = scope.tables.len();
    if n > MAX_JOIN_TABLES {
        return Err(Error::TooManyTables(MAX_JOIN_TABLES));
    }

    // WHERE and the join conditions, each placed at the level where it is checked.
    let mut conds: Vec<(Option<usize>, Expr)> = Vec::new();
    if let Some(w) = &select.selection {
        if bind::contains_aggregate(w) {
            return Err(Error::InvalidGroupUse);
        }
        let (e, _, _) = Binder::in_env(&scope, "where clause", env).bind(w)?;
        let mut pool = Vec::new();
        crate::rewrite::conjuncts(e, &mut pool);
        let implied =
            crate::rewrite::implied_by_ors(&pool, scope.tables.len(), &|e| tables_mask(&scope, e));
        conds.extend(pool.into_iter().chain(implied).map(|e| (None, e)));
    }
    conds.extend(from.conds);
    let mut groups = from.groups;
    let conds = conds
        .into_iter()
        .map(|(owner, e)| (owner, tables_mask(&scope, &e), e))
        .collect();
    let mut placed = crate::join_groups::place(&from.order, &mut groups, conds)?;
    let const_filter = std::mem::take(&mut placed.const_filter);
    let levels: Vec<Level> = from
        .order
        .iter()
        .enumerate()
        .map(|(l, &t)| Level {
            table: t,
            access: Access::Scan,
            filter: std::mem::take(&mut placed.filter[l]),
            outer: !placed.chain[l].is_empty(),
            on: std::mem::take(&mut placed.on[l]),
            chain: std::mem::take(&mut placed.chain[l]),
            starts: placed.starts[l],
            possible: vec![],
        })
        .collect();
    let fixed_order = from.fixed;

    // Select list.
    let grouped = !matches!(&select.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty())
        || select.projection.iter().any(|p| match p {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                bind::contains_aggregate(e)
            }
            _ => false,
        })
        || select.having.is_some();
    let mut agg = Aggregation::default();
    let mut windows = window::bind::Collector::new(&select.named_window)?;
    if let ast::GroupByExpr::Expressions(exprs, modifiers) = &select.group_by {
        for m in modifiers {
            match m {
                ast::GroupByWithModifier::Rollup => agg.rollup = true,
                other => return Err(Error::NotSupported(format!("GROUP BY … {other}"))),
            }
        }
        for g in exprs {
            // GROUP BY may name a select-list alias or position.
            let target = group_target(g, &select.projection, &scope)?;
            let (e, t, c) = Binder::in_env(&scope, "group statement", env).bind(&target)?;
            agg.groups.push((target.to_string(), e, t, c));
        }
    } else {
        return Err(Error::NotSupported("GROUP BY ALL".into()));
    }
    let mut projection = Vec::new();
    let mut columns = Vec::new();
    let mut aliases: Vec<(String, Expr, SType)> = Vec::new();
    for item in &select.projection {
        match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                let qual = match item {
                    ast::SelectItem::QualifiedWildcard(
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                        _,
                    ) => Some(
                        bind::object_name_parts(n)
                            .last()
                            .cloned()
                            .unwrap_or_default(),
                    ),
                    _ => None,
                };
                let mut any = false;
                if qual.is_none() && !scope.star.is_empty() {
                    // USING/NATURAL joins: their common columns once, first.
                    any = true;
                    for &pos in &scope.star {
                        let (t, col) = scope.column(pos);
                        let e = if grouped {
                            let ty = SType::of_column(&col.data_type, col.collation);
                            agg.any_value(pos, ty, col.collation)
                        } else {
                            Expr::Column(pos)
                        };
                        projection.push(e);
                        columns.push(bind::column_meta(t, col, &col.name));
                    }
                }
                for t in &scope.tables {
                    if qual.is_none() && !scope.star.is_empty() {
                        break;
                    }
                    if qual.as_ref().is_some_and(|q| *q != t.alias) {
                        continue;
                    }
                    any = true;
                    for (ci, col) in t.def.columns.iter().enumerate() {
                        let pos = t.offset + ci;
                        let e = if grouped {
                            let ty = SType::of_column(&col.data_type, col.collation);
                            agg.any_value(pos, ty, col.collation)
                        } else {
                            Expr::Column(pos)
                        };
                        projection.push(e);
                        columns.push(bind::column_meta(t, col, &col.name));
                    }
                }
                if !any {
                    if scope.tables.is_empty() {
                        return Err(Error::NoTablesUsed);
                    }
                    return Err(Error::UnknownTable(qual.unwrap_or_default()));
                }
            }
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let alias = match item {
                    ast::SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
                    _ => None,
                };
                let mut b = Binder {
                    scope: &scope,
                    context: "field list",
                    agg: grouped.then_some(&mut agg),
                    aliases: &[],
                    env: Some(env),
                    windows: Some(&mut windows),
                };
                let (bound, ty, _) = b.bind(e)?;
                let name = alias.clone().unwrap_or_else(|| planner.names.name(e));
                let meta = match (&bound, e) {
                    (
                        Expr::Column(p),
                        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_),
                    ) if !grouped => {
                        let (t, col) = scope.column(*p);
                        bind::column_meta(t, col, &name)
                    }
                    _ => {
                        let mut m = ty.meta(&name);
                        // A grouped bare column keeps its table metadata.
                        if let (
                            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_),
                            Expr::Column(i),
                        ) = (e, &bound)
                        {
                            if let Some(spec) = (*i)
                                .checked_sub(agg.groups.len())
                                .and_then(|j| agg.aggs.get(j))
                            {
                                if let Some(Expr::Column(p)) = &spec.arg {
                                    let (t, col) = scope.column(*p);
                                    m = bind::column_meta(t, col, &name);
                                }
                            } else if let Some((_, Expr::Column(p), _, _)) = agg.groups.get(*i) {
                                let (t, col) = scope.column(*p);
                                m = bind::column_meta(t, col, &name);
                            }
                        }
                        m
                    }
                };
                let meta = match &bound {
                    Expr::Column(i) if grouped => match (*i)
                        .checked_sub(agg.groups.len())
                        .and_then(|j| agg.aggs.get(j))
                    {
                        Some(spec) => {
                            let max_len = cx
                                .env
                                .system_variable("group_concat_max_len", false)
                                .ok()
                                .and_then(|v| v.to_i64())
                                .unwrap_or(1024)
                                .max(0) as u64;
                            let mut m = aggregate::result_meta(spec, &meta, max_len);
                            // MIN/MAX of a FLOAT column is a FLOAT, shown as one.
                            if let (AggFunc::Min | AggFunc::Max, Some(Expr::Column(p))) =
                                (spec.func, &spec.arg)
                            {
                                if matches!(scope.column(*p).1.data_type, DataType::Float) {
                                    m.field_type = strata_types::FieldType::Float;
                                }
                            }
                            m
                        }
                        None => meta,
                    },
                    _ => meta,
                };
                aliases.push((name, bound.clone(), ty));
                projection.push(bound);
                columns.push(meta);
            }
            other => return Err(Error::NotSupported(other.to_string())),
        }
    }
    let visible = projection.len();
    if agg.rollup {
        // Super-aggregate rows show NULL in the rolled-up columns.
        for c in &mut columns {
            c.flags &= !strata_types::output::flags::NOT_NULL;
        }
    }

    let having = match &select.having {
        Some(h) => {
            let mut b = Binder {
                scope: &scope,
                context: "having clause",
                agg: Some(&mut agg),
                aliases: &aliases,
                env: Some(env),
                windows: None,
            };
            Some(b.bind(h)?.0)
        }
        None => None,
    };

    // ORDER BY: a position, an alias, or an expression (added as a hidden column).
    let mut order = Vec::new();
    if let Some(ob) = &q.order_by {
        let ast::OrderByKind::Expressions(items) = &ob.kind else {
            return Err(Error::NotSupported("ORDER BY ALL".into()));
        };
        for item in items {
            let desc = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
            if let ast::Expr::Value(v) = &item.expr {
                if let Ok(Value::Int(p)) = bind::literal(&v.value) {
                    if p < 1 || p as usize > visible {
                        return Err(Error::UnknownColumn {
                            column: p.to_string(),
                            context: "order clause".into(),
                        });
                    }
                    refuse_time_order(columns[p as usize - 1].field_type)?;
                    let coll = output_coll(&projection[p as usize - 1], &scope, &agg, &windows);
                    order.push((p as usize - 1, desc, coll));
                    continue;
                }
            }
            if let ast::Expr::Identifier(id) = &item.expr {
                if let Some(i) = columns
                    .iter()
                    .take(visible)
                    .position(|c| c.name.eq_ignore_ascii_case(&id.value))
                {
                    let ambiguous_with_column = scope
                        .resolve(std::slice::from_ref(&id.value), "order clause")
                        .is_ok()
                        && !matches!(&projection[i], Expr::Column(_));
                    if !ambiguous_with_column || grouped {
                        refuse_time_order(columns[i].field_type)?;
                        let coll = output_coll(&projection[i], &scope, &agg, &windows);
                        order.push((i, desc, coll));
                        continue;
                    }
                }
            }
            let mut b = Binder {
                scope: &scope,
                context: "order clause",
                agg: grouped.then_some(&mut agg),
                aliases: &aliases,
                env: Some(env),
                windows: Some(&mut windows),
            };
            let (e, ty, coll) = b.bind(&item.expr)?;
            refuse_time_order(ty.meta("").field_type)?;
            let pos = match projection
                .iter()
                .take(visible)
                .position(|p| same_expr(p, &e))
            {
                Some(p) => p,
                None => {
                    projection.push(e);
                    projection.len() - 1
                }
            };
            order.push((pos, desc, coll));
        }
    }

    let (limit, offset) = bind_limits(q.limit_clause.as_ref(), env)?;

    // Every clause is bound, so the rows the windows see have their final width: the
    // calls' values go right after them.
    let windows = if windows.plan.calls.is_empty() {
        None
    } else {
        let base = if grouped {
            agg.groups.len() + agg.aggs.len()
        } else {
            scope.width()
        };
        for e in &mut projection {
            window::place(e, base);
        }
        Some(windows.plan)
    };

    let group = if grouped {
        Some(GroupPlan {
            groups: agg.groups.iter().map(|g| (g.1.clone(), g.3)).collect(),
            aggs: agg.aggs.clone(),
            having,
            rollup: agg.rollup,
        })
    } else {
        None
    };

    let distinct = match &select.distinct {
        None | Some(ast::Distinct::All) => false,
        Some(ast::Distinct::Distinct) => true,
        Some(ast::Distinct::On(_)) => return Err(Error::NotSupported("DISTINCT ON".into())),
    };
    // DISTINCT without GROUP BY is grouping by the whole output row (as MySQL plans
    // it), so it shares grouping's memory bound and spill to disk. Hidden ORDER BY keys
    // are grouped on too; the output filter then still removes rows equal in what shows.
    // With window functions DISTINCT applies to their results, after they are computed:
    // it stays a filter on the output.
    let (group, projection, distinct) = match group {
        None if distinct && windows.is_none() => {
            let groups = projection
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let coll = match columns.get(i) {
                        Some(c) if c.charset == 63 => Collation::Binary,
                        _ => Collation::GeneralCi,
                    };
                    (e.clone(), coll)
                })
                .collect::<Vec<_>>();
            let exposed = (0..projection.len()).map(Expr::Column).collect();
            let still_filter = projection.len() > visible;
            (
                Some(GroupPlan {
                    groups,
                    aggs: vec![],
                    having: None,
                    rollup: false,
                }),
                exposed,
                still_filter,
            )
        }
        g => (g, projection, distinct),
    };

    let count_star_only = n == 1
        && levels[0].filter.is_empty()
        && const_filter.is_empty()
        && group.as_ref().is_some_and(|g| {
            g.groups.is_empty()
                && g.having.is_none()
                && g.aggs.len() == 1
                && g.aggs[0].func == AggFunc::CountStar
        })
        && visible == 1
        // The header's row count is exact only for an engine without transactions
        // (under MVCC each transaction sees its own count, as InnoDB's COUNT(*) scans),
        // and a locking read must visit the rows to lock them.
        && read_mode == ReadMode::Consistent
        && scope.tables[0].slot.is_none()
        && windows.is_none()
        && !is_transactional(cx, &scope.tables[0].def.engine);

    let mut plan = SelectPlan {
        scope,
        levels,
        groups,
        fixed_order,
        const_filter,
        group,
        projection,
        columns,
        order,
        order_satisfied: false,
        distinct,
        limit,
        offset,
        count_star_only,
        derived,
        read_mode,
        windows,
    };
    choose_access_paths(&mut plan, cx);
    Ok(plan)
}

/// TIME values are held as text inside Strata, so sorting them would order `-01:00:00`
/// after `00:30:00` and `100:00:00` before `99:00:00`: refused rather than wrong.
pub(crate) fn refuse_time_order(t: strata_types::FieldType) -> Result<()> {
    match t {
        strata_types::FieldType::Time => Err(Error::NotSupported("ORDER BY a TIME value".into())),
        _ => Ok(()),
    }
}

/// `FROM DUAL` (MySQL's name for "no table", unquoted and alone) reads as no FROM.
fn without_dual(from: &[ast::TableWithJoins]) -> &[ast::TableWithJoins] {
    if let [only] = from {
        if let ast::TableFactor::Table {
            name, alias: None, ..
        } = &only.relation
        {
            if let [part] = name.0.as_slice() {
                if let Some(id) = part.as_ident() {
                    if only.joins.is_empty()
                        && id.quote_style.is_none()
                        && id.value.eq_ignore_ascii_case("dual")
                    {
                        return &[];
                    }
                }
            }
        }
    }
    from
}

fn is_transactional(cx: &ExecCtx, engine: &str) -> bool {
    // Tables of no engine (information_schema, derived) are computed, not versioned.
    cx.catalog
        .engine(engine)
        .map(|e| e.transactional())
        .unwrap_or(false)
}

fn bind_limit(e: &ast::Expr, scope: &Scope) -> Result<Expr> {
    let (x, _, _) = Binder::new(scope, "limit").bind(e)?;
    if !x.is_row_independent() {
        return Err(Error::Syntax(e.to_string()));
    }
    Ok(x)
}

/// LIMIT and OFFSET of a query: constants or parameters only.
pub fn bind_limits(
    clause: Option<&ast::LimitClause>,
    _env: &BindEnv,
) -> Result<(Option<Expr>, Option<Expr>)> {
    let scope = Scope::default();
    Ok(match clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => (
            limit.as_ref().map(|e| bind_limit(e, &scope)).transpose()?,
            offset
                .as_ref()
                .map(|o| bind_limit(&o.value, &scope))
                .transpose()?,
        ),
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => (
            Some(bind_limit(limit, &scope)?),
            Some(bind_limit(offset, &scope)?),
        ),
    })
}

fn group_target(g: &ast::Expr, projection: &[ast::SelectItem], scope: &Scope) -> Result<ast::Expr> {
    if let ast::Expr::Value(v) = g {
        if let Ok(Value::Int(p)) = bind::literal(&v.value) {
            return match projection.get((p as usize).wrapping_sub(1)) {
                Some(ast::SelectItem::UnnamedExpr(e))
                | Some(ast::SelectItem::ExprWithAlias { expr: e, .. }) => Ok(e.clone()),
                _ => Err(Error::UnknownColumn {
                    column: p.to_string(),
                    context: "group statement".into(),
                }),
            };
        }
    }
    // A name that is a column of the FROM tables is that column, even when a select-list
    // alias has the same name: MySQL searches FROM before the select list for GROUP BY.
    if let ast::Expr::Identifier(id) = g {
        if scope
            .resolve(std::slice::from_ref(&id.value), "group statement")
            .is_ok()
        {
            return Ok(g.clone());
        }
        for p in projection {
            if let ast::SelectItem::ExprWithAlias { expr, alias } = p {
                if alias.value.eq_ignore_ascii_case(&id.value) {
                    return Ok(expr.clone());
                }
            }
        }
    }
    Ok(g.clone())
}

fn same_expr(a: &Expr, b: &Expr) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

/// The collation ORDER BY sorts an output column with: a window call's is its
/// argument's.
fn output_coll(
    e: &Expr,
    scope: &Scope,
    agg: &Aggregation,
    windows: &window::bind::Collector,
) -> Collation {
    match window::marker_call(e) {
        Some(k) => windows
            .plan
            .calls
            .get(k)
            .map_or(Collation::GeneralCi, |c| c.coll),
        None => coll_of_output(e, scope, agg),
    }
}

fn coll_of_output(e: &Expr, scope: &Scope, agg: &Aggregation) -> Collation {
    match e {
        Expr::Column(p) if agg.groups.is_empty() && agg.aggs.is_empty() => {
            scope.column(*p).1.collation
        }
        Expr::Column(p) => {
            if let Some(g) = agg.groups.get(*p) {
                g.3
            } else {
                agg.aggs
                    .get(*p - agg.groups.len())
                    .map_or(Collation::GeneralCi, |a| a.coll)
            }
        }
        _ => Collation::GeneralCi,
    }
}

/// The column name MySQL gives an unaliased select item: the column's name, or the
/// expression's text.
/// Derived tables and CTEs a block reads: the slot each is materialized into at run
/// time and the plan that fills it (None: a recursive CTE's work table, filled by the
/// iteration around the block).
pub type Derived = Vec<(usize, Option<Arc<QueryPlan>>)>;

pub(crate) fn add_factor(
    f: &ast::TableFactor,
    planner: &Planner,
    scope: &mut Scope,
    derived: &mut Derived,
) -> Result<()> {
    let (alias, db, handle, slot): (String, String, Arc<dyn strata_engine::Table>, _) = match f {
        ast::TableFactor::Table { name, alias, .. } => {
            let (db, table, rel) = planner.relation(name)?;
            let alias = alias
                .as_ref()
                .map(|a| a.name.value.clone())
                .unwrap_or(table);
            match rel {
                Relation::Engine(handle) => (alias, db, handle, None),
                Relation::Cte { table, slot, plan } => {
                    derived.push((slot, plan));
                    (alias, db, table, Some(slot))
                }
            }
        }
        ast::TableFactor::Derived {
            subquery,
            alias,
            lateral: false,
            ..
        } => {
            let Some(alias) = alias else {
                return Err(Error::DerivedNeedsAlias);
            };
            let sub = planner.plan_derived(subquery)?;
            let names: Vec<String> = alias.columns.iter().map(|c| c.name.value.clone()).collect();
            let table = Arc::new(crate::rowsource::ReadOnlyTable(
                crate::derived::DerivedTable::new(&alias.name.value, sub.columns(), &names)?,
            ));
            let slot = planner.new_slot();
            derived.push((slot, Some(Arc::new(sub))));
            (alias.name.value.clone(), String::new(), table, Some(slot))
        }
        ast::TableFactor::Derived { lateral: true, .. } => {
            return Err(Error::NotSupported("LATERAL derived tables".into()))
        }
        other => return Err(Error::NotSupported(format!("table factor {other}"))),
    };
    if scope.tables.iter().any(|t| t.alias == alias) {
        return Err(Error::NonUniqueTable(alias));
    }
    scope.push(alias, db, handle);
    if let Some(t) = scope.tables.last_mut() {
        t.slot = slot;
    }
    Ok(())
}

/// One side of a range: the bound's expression and whether it is inclusive.
type Bound1 = Option<(Expr, bool)>;

/// Picks each level's access path from the conjuncts that can drive it.
/// Which tables (bit per scope position) an expression reads.
fn tables_mask(scope: &Scope, e: &Expr) -> u64 {
    let mut m = 0u64;
    e.walk(&mut |x| {
        if let Expr::Column(c) = x {
            m |= 1 << scope.table_of(*c);
        }
    });
    m
}

/// The best index access to table `ti` given the conjuncts it may use and the tables
/// already placed before it in the join (their columns are known values).
fn best_access(scope: &Scope, ti: usize, conds: &[&Expr], placed: u64) -> Option<(u32, Access)> {
    let t = &scope.tables[ti];
    let (lo, hi) = (t.offset, t.offset + t.def.columns.len());
    let known = |e: &Expr| tables_mask(scope, e) & !placed == 0;
    let mut eqs: Vec<(usize, Expr)> = vec![];
    let mut ranges: Vec<(usize, Bound1, Bound1)> = vec![];
    let mut ins: Vec<(usize, Vec<Expr>)> = vec![];
    let col_ok = |p: usize, coll: Collation| {
        let c = &t.def.columns[p - lo];
        !c.data_type.is_string() || c.collation == coll
    };
    for &c in conds {
        match c {
            Expr::Cmp(op, a, b, coll) => {
                let (p, other, op) = match (a.as_ref(), b.as_ref()) {
                    (Expr::Column(p), o) if (lo..hi).contains(p) && known(o) => (*p, o, *op),
                    (o, Expr::Column(p)) if (lo..hi).contains(p) && known(o) => (*p, o, flip(*op)),
                    _ => continue,
                };
                if !col_ok(p, *coll) {
                    continue;
                }
                match op {
                    CmpOp::Eq => eqs.push((p - lo, other.clone())),
                    CmpOp::Lt => ranges.push((p - lo, None, Some((other.clone(), false)))),
                    CmpOp::Le => ranges.push((p - lo, None, Some((other.clone(), true)))),
                    CmpOp::Gt => ranges.push((p - lo, Some((other.clone(), false)), None)),
                    CmpOp::Ge => ranges.push((p - lo, Some((other.clone(), true)), None)),
                    _ => {}
                }
            }
            Expr::Between {
                expr,
                low,
                high,
                negated: false,
                coll,
            } => {
                if let Expr::Column(p) = expr.as_ref() {
                    if (lo..hi).contains(p) && known(low) && known(high) && col_ok(*p, *coll) {
                        ranges.push((
                            p - lo,
                            Some(((**low).clone(), true)),
                            Some(((**high).clone(), true)),
                        ));
                    }
                }
            }
            Expr::InList {
                expr,
                list,
                negated: false,
                coll,
            } => {
                if let Expr::Column(p) = expr.as_ref() {
                    if (lo..hi).contains(p) && list.iter().all(known) && col_ok(*p, *coll) {
                        ins.push((p - lo, list.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    let mut best: Option<(u32, Access)> = None;
    for (ix, index) in t.def.indexes.iter().enumerate() {
        let mut eq = vec![];
        for &col in &index.columns {
            match eqs.iter().find(|(c, _)| *c == col) {
                Some((_, e)) => eq.push(e.clone()),
                None => break,
            }
        }
        let mut score = eq.len() as u32 * 10;
        let mut lower = None;
        let mut upper = None;
        if eq.len() == index.columns.len() && index.unique {
            score += 100;
        } else if let Some(&next) = index.columns.get(eq.len()) {
            for (c, l, u) in &ranges {
                if *c == next {
                    if l.is_some() && lower.is_none() {
                        lower = l.clone();
                    }
                    if u.is_some() && upper.is_none() {
                        upper = u.clone();
                    }
                }
            }
            if lower.is_some() || upper.is_some() {
                score += 5;
            }
        }
        let access = if score == 0 {
            match ins.iter().find(|(c, _)| Some(c) == index.columns.first()) {
                Some((_, values)) => {
                    score = 4;
                    Access::IndexIn {
                        index: ix,
                        values: values.clone(),
                    }
                }
                None => continue,
            }
        } else {
            Access::Index {
                index: ix,
                eq,
                lower,
                upper,
                reverse: false,
            }
        };
        if index.primary {
            score += 1;
        }
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, access));
        }
    }
    best
}

/// Plans the join: the table order (by estimated cost, for inner joins of up to
/// [`MAX_REORDER`] tables), each table's access path, and where each condition is
/// checked (at the first table by which all it reads is in place).
fn choose_access_paths(plan: &mut SelectPlan, cx: &ExecCtx) {
    let n = plan.levels.len();
    if n >= 2 && !plan.fixed_order {
        choose_join_order(plan, cx);
    }
    let mut placed = 0u64;
    for lvl in 0..n {
        let ti = plan.levels[lvl].table;
        let level = &plan.levels[lvl];
        // Inside an outer-join group only the innermost group's own conditions may
        // narrow the read: the rest must also see the rows that fail them.
        let conds: Vec<&Expr> = if level.outer {
            let own = level.chain.first().map_or(0, |c| c.1);
            level.on[..own].iter().collect()
        } else {
            level.filter.iter().collect()
        };
        match best_access(&plan.scope, ti, &conds, placed) {
            Some((_, access)) => plan.levels[lvl].access = access,
            // An inner table read by scan is read once, into a hash join buffer.
            None if lvl > 0 => {
                plan.levels[lvl].access = Access::JoinBuffer {
                    keys: crate::hash_join::hash_keys(&plan.scope, ti, &conds, placed),
                }
            }
            None => {}
        }
        placed |= 1 << ti;
    }
    mark_possible_keys(plan);
    use_index_order(plan);
}

/// Joins of up to this many tables try every order (n! at worst, cut by cost); larger
/// ones are ordered greedily, cheapest next table first, as MySQL bounds its search with
/// `optimizer_search_depth`.
const MAX_REORDER: usize = 7;

/// The most tables one query block may join: the planner keeps a bit per table in a
/// u64 (MySQL's limit is 61 too).
pub const MAX_JOIN_TABLES: usize = 61;

/// Planner statistics for a table, sampled under a read lock (not under LOCK TABLES,
/// whose locks the session already holds). None when they cannot be read.
pub fn table_stats(cx: &ExecCtx, table: &Arc<dyn strata_engine::Table>) -> Option<Arc<TableStats>> {
    let _lock = cx
        .locked_tables
        .is_none()
        .then(|| table.lock(strata_engine::LockMode::Read));
    cx.catalog.stats().get(table, cx.txn).ok()
}

/// Estimated rows one lookup with `access` reads, from the statistics.
pub fn access_rows(access: &Access, def: &strata_types::TableDef, stats: &TableStats) -> f64 {
    let rows = stats.rows.max(1) as f64;
    match access {
        Access::Scan | Access::JoinBuffer { .. } => rows,
        Access::IndexIn { index, values } => {
            (values.len() as f64 * stats.rows_per_lookup(*index, 1)).min(rows)
        }
        Access::Index {
            index,
            eq,
            lower,
            upper,
            ..
        } => {
            let ix = &def.indexes[*index];
            let base = if eq.is_empty() {
                rows
            } else if eq.len() == ix.columns.len() && ix.unique {
                1.0
            } else {
                stats.rows_per_lookup(*index, eq.len())
            };
            // Without a count, a closed range is taken to select a twentieth of what the
            // equality prefix leaves, an open one a third (the old MySQL guesses).
            match (lower.is_some(), upper.is_some()) {
                (true, true) => (base / 20.0).max(1.0),
                (true, false) | (false, true) => (base / 3.0).max(1.0),
                _ => base,
            }
        }
    }
}

/// Picks the cheapest order of an inner join: for every order (depth-first, cut off
/// once a partial order costs more than the best full one), the cost is the rows read,
/// each table's estimated rows per lookup times the rows of the tables before it.
/// Ties keep the FROM order.
fn choose_join_order(plan: &mut SelectPlan, cx: &ExecCtx) {
    let n = plan.levels.len();
    let mut stats = Vec::with_capacity(n);
    for t in &plan.scope.tables {
        match table_stats(cx, &t.table) {
            Some(s) => stats.push(s),
            None => return,
        }
    }
    let mut pool: Vec<(u64, Expr)> = Vec::new();
    for level in &mut plan.levels {
        for e in std::mem::take(&mut level.filter) {
            pool.push((tables_mask(&plan.scope, &e), e));
        }
    }
    let scope = &plan.scope;
    let step = |ti: usize, placed: u64| -> f64 {
        let bit = 1u64 << ti;
        let conds: Vec<&Expr> = pool
            .iter()
            .filter(|(m, _)| m & bit != 0 && m & !(placed | bit) == 0)
            .map(|(_, e)| e)
            .collect();
        let access = best_access(scope, ti, &conds, placed).map_or(Access::Scan, |(_, a)| a);
        access_rows(&access, &scope.tables[ti].def, &stats[ti])
    };
    struct Search<'a> {
        n: usize,
        step: &'a dyn Fn(usize, u64) -> f64,
        best: (f64, Vec<usize>),
        order: Vec<usize>,
    }
    fn dfs(s: &mut Search, placed: u64, prefix_rows: f64, cost: f64) {
        if cost >= s.best.0 {
            return;
        }
        if s.order.len() == s.n {
            s.best = (cost, s.order.clone());
            return;
        }
        for ti in 0..s.n {
            if placed & (1 << ti) != 0 {
                continue;
            }
            let rows = (s.step)(ti, placed);
            s.order.push(ti);
            dfs(
                s,
                placed | (1 << ti),
                prefix_rows * rows,
                cost + prefix_rows * rows,
            );
            s.order.pop();
        }
    }
    // The FROM order's cost first, so only a strictly cheaper order replaces it.
    let mut from_cost = 0.0;
    let mut prefix = 1.0;
    let mut placed = 0u64;
    for ti in 0..n {
        let rows = step(ti, placed);
        from_cost += prefix * rows;
        prefix *= rows;
        placed |= 1 << ti;
    }
    let mut search = Search {
        n,
        step: &step,
        best: (from_cost * 0.999, (0..n).collect()),
        order: Vec::with_capacity(n),
    };
    let order = if n <= MAX_REORDER {
        dfs(&mut search, 0, 1.0, 0.0);
        search.best.1
    } else {
        // Greedy: at each step the table that reads the fewest rows given those placed.
        let mut order = Vec::with_capacity(n);
        let mut placed = 0u64;
        for _ in 0..n {
            let next = (0..n)
                .filter(|ti| placed & (1 << ti) == 0)
                .min_by(|&a, &b| {
                    step(a, placed)
                        .partial_cmp(&step(b, placed))
                        .unwrap_or(Ordering::Equal)
                })
                .unwrap_or(0);
            order.push(next);
            placed |= 1 << next;
        }
        order
    };
    let mut old: Vec<Option<Level>> = std::mem::take(&mut plan.levels)
        .into_iter()
        .map(Some)
        .collect();
    plan.levels = order.iter().filter_map(|&ti| old[ti].take()).collect();
    let mut covered = Vec::with_capacity(n);
    let mut placed = 0u64;
    for level in &plan.levels {
        placed |= 1 << level.table;
        covered.push(placed);
    }
    for (m, e) in pool {
        let lvl = covered.iter().position(|c| m & !c == 0).unwrap_or(n - 1);
        plan.levels[lvl].filter.push(e);
    }
}

/// EXPLAIN's possible_keys: every index whose first column some predicate compares with
/// a value or with another table's column, wherever that predicate is checked.
fn mark_possible_keys(plan: &mut SelectPlan) {
    let mut cols = HashSet::new();
    let scope = &plan.scope;
    let other_table = |p: usize, e: &Expr| {
        e.max_column()
            .is_none_or(|m| scope.table_of(m) != scope.table_of(p))
            && e.min_column()
                .is_none_or(|m| scope.table_of(m) != scope.table_of(p))
    };
    for level in &plan.levels {
        for c in level.filter.iter().chain(&level.on) {
            match c {
                Expr::Cmp(op, a, b, _) if *op != CmpOp::Ne => {
                    if let Expr::Column(p) = a.as_ref() {
                        if other_table(*p, b) {
                            cols.insert(*p);
                        }
                    }
                    if let Expr::Column(p) = b.as_ref() {
                        if other_table(*p, a) {
                            cols.insert(*p);
                        }
                    }
                }
                Expr::Between {
                    expr,
                    negated: false,
                    ..
                }
                | Expr::InList {
                    expr,
                    negated: false,
                    ..
                } => {
                    if let Expr::Column(p) = expr.as_ref() {
                        cols.insert(*p);
                    }
                }
                _ => {}
            }
        }
    }
    for level in &mut plan.levels {
        let t = &plan.scope.tables[level.table];
        level.possible = t
            .def
            .indexes
            .iter()
            .enumerate()
            .filter(|(_, ix)| cols.contains(&(t.offset + ix.columns[0])))
            .map(|(i, _)| i)
            .collect();
    }
}

/// When a single-table query orders by the columns of the index it reads (after its
/// equality columns), rows already come sorted: skip the sort, and read in reverse for
/// DESC. With a LIMIT and no usable predicate, prefer such an index over a scan.
fn use_index_order(plan: &mut SelectPlan) {
    if plan.group.is_some() || plan.distinct || plan.order.is_empty() {
        return;
    }
    // Rows leave a nested-loop join in the order the first table yields them, so an
    // ORDER BY on the first table's columns alone can come from its index too.
    let t = &plan.scope.tables[plan.levels[0].table];
    let mut order_cols = vec![];
    for (pos, desc, coll) in &plan.order {
        match plan.projection.get(*pos) {
            Some(Expr::Column(p)) if (t.offset..t.offset + t.def.columns.len()).contains(p) => {
                let p = *p - t.offset;
                if t.def.columns[p].collation == *coll || !t.def.columns[p].data_type.is_string() {
                    order_cols.push((p, *desc))
                } else {
                    return;
                }
            }
            _ => return,
        }
    }
    let desc = order_cols[0].1;
    if order_cols.iter().any(|(_, d)| *d != desc) {
        return;
    }
    let fits = |index: &strata_types::IndexDef, skip: usize| {
        order_cols.len() + skip <= index.columns.len()
            && order_cols
                .iter()
                .zip(&index.columns[skip..])
                .all(|((c, _), ic)| c == ic)
    };
    match &mut plan.levels[0].access {
        Access::Index {
            index, eq, reverse, ..
        } if fits(&t.def.indexes[*index], eq.len()) => {
            *reverse = desc;
            plan.order_satisfied = true;
        }
        Access::Scan if plan.limit.is_some() => {
            if let Some(ix) = t.def.indexes.iter().position(|i| fits(i, 0)) {
                plan.levels[0].access = Access::Index {
                    index: ix,
                    eq: vec![],
                    lower: None,
                    upper: None,
                    reverse: desc,
                };
                plan.order_satisfied = true;
            }
        }
        _ => {}
    }
}

fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        o => o,
    }
}

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
fn run_level(
    plan: &SelectPlan,
    txn: &Txn,
    lvl: usize,
    row: &mut [Value],
    cx: &EvalCtx,
    emit: &mut dyn FnMut(&[Value]) -> Result<Flow>,
) -> Result<Flow> {
    debug_assert_eq!(lvl, 0);
    crate::join_exec::run(plan, txn, row, cx, emit)
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

struct Group {
    states: Vec<AggState>,
    seen: Vec<Option<HashSet<Vec<u8>>>>,
    keys: Vec<Value>,
    /// How many GROUP BY values this group keeps: all of them, or fewer for a
    /// WITH ROLLUP super-aggregate row (the rest show as NULL).
    level: usize,
}

/// Approximate heap bytes of a value, for the memory bound of grouping.
fn value_bytes(v: &Value) -> usize {
    match v {
        Value::Bytes(b) => 24 + b.len(),
        _ => 24,
    }
}

/// Holds back the column definitions until the first row, so a column whose type was
/// unknown when the statement was prepared (`SELECT ? + 1`: the parameter's type comes
/// with each execution) is described by the value it actually has.
struct TypesFromFirstRow<'a> {
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

fn execute_block_to(
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
        .then(|| crate::sort::ExternalSorter::new(cx.sort_buffer_size, cx.tmpdir, &cmp));
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
            let mut pre = crate::sort::ExternalSorter::new(cx.sort_buffer_size, cx.tmpdir, &by_key);
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

/// Plans the row source of a single-table UPDATE or DELETE: its WHERE, ORDER BY and
/// LIMIT, with the same access-path choice as SELECT. It reads with exclusive locks, as
/// InnoDB does: the rows it hands over are the latest versions, locked until the
/// transaction ends, so the change is applied to what is really there.
/// `scope` holds the one target table.
pub fn plan_single_table(
    cx: &ExecCtx,
    scope: Scope,
    selection: Option<&ast::Expr>,
    order_by: &[ast::OrderByExpr],
    limit: Option<&ast::Expr>,
    env: &BindEnv,
) -> Result<SelectPlan> {
    let mut filter = Vec::new();
    if let Some(w) = selection {
        let (e, _, _) = Binder::in_env(&scope, "where clause", env).bind(w)?;
        split_conjuncts(e, &mut filter);
    }
    let (const_filter, filter): (Vec<Expr>, Vec<Expr>) =
        filter.into_iter().partition(|c| c.max_column().is_none());
    let mut projection = Vec::new();
    let mut order = Vec::new();
    for item in order_by {
        let (e, _, coll) = Binder::in_env(&scope, "order clause", env).bind(&item.expr)?;
        projection.push(e);
        order.push((
            projection.len() - 1,
            matches!(item.options.sort, Some(ast::OrderBySort::Desc)),
            coll,
        ));
    }
    let limit = limit.map(|l| bind_limit(l, &scope)).transpose()?;
    let mut plan = SelectPlan {
        scope,
        levels: vec![Level {
            table: 0,
            access: Access::Scan,
            filter,
            outer: false,
            on: vec![],
            chain: vec![],
            starts: None,
            possible: vec![],
        }],
        groups: vec![],
        fixed_order: false,
        const_filter,
        group: None,
        projection,
        columns: vec![],
        order,
        order_satisfied: false,
        distinct: false,
        limit,
        offset: None,
        count_star_only: false,
        derived: vec![],
        read_mode: ReadMode::LockExclusive,
        windows: None,
    };
    choose_access_paths(&mut plan, cx);
    Ok(plan)
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
