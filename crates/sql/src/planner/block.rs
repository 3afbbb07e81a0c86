//! Planning one query block (SELECT): FROM → scope → conjuncts placed on the tables they
//! read, the select list, grouping, HAVING, ordering, limits and windows bound with the
//! [`crate::bind::Binder`]; then the optimizer picks access paths and join order
//! ([`crate::optimizer::choose_access_paths`]). Also the row source of a single-table
//! UPDATE/DELETE ([`plan_single_table`]).
//!
//! Reads follow the transaction's read mode: a plain SELECT is a consistent read,
//! `FOR UPDATE` locks exclusively, `FOR SHARE` / `LOCK IN SHARE MODE` share-locks, and
//! the row source of an UPDATE or DELETE locks exclusively.

use crate::bind::window;
use crate::bind::{self, AggFunc, Aggregation, BindEnv, Binder, GroupedClause, SType, Scope};
use crate::context::ExecCtx;
use crate::expr::functions::{CastFn, Func};
use crate::expr::Expr;
use crate::optimizer::access::tables_mask;
use crate::optimizer::choose_access_paths;
use crate::optimizer::join_order::MAX_JOIN_TABLES;
use crate::plan::block::{Access, Derived, GroupPlan, Level, SelectPlan};
use crate::planner::query::{Planner, Relation};
use sqlparser::ast;
use std::sync::Arc;
use strata_engine::{LockWait, ReadMode};
use strata_types::{Collation, ColumnMeta, Error, Result, Value};

pub(crate) fn split_conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(a, b) => {
            split_conjuncts(*a, out);
            split_conjuncts(*b, out);
        }
        other => out.push(other),
    }
}

/// The read mode a query's locking clauses ask for: `FOR UPDATE` exclusive, `FOR SHARE`
/// (and `LOCK IN SHARE MODE`, which [`crate::parse::parse`] rewrites to it) shared; the
/// strongest wins when several are given.
pub(crate) fn locking_read_mode(locks: &[ast::LockClause]) -> Result<(ReadMode, LockWait)> {
    let mut mode = ReadMode::Consistent;
    let mut wait = LockWait::Wait;
    for l in locks {
        // The engine API cannot lock only some tables of a join: refused rather than
        // quietly taken as a lock on all of them.
        if l.of.is_some() {
            return Err(Error::NotSupported(format!("{l}")));
        }
        wait = match l.nonblock {
            Some(ast::NonBlock::Nowait) => LockWait::NoWait,
            Some(ast::NonBlock::SkipLocked) => LockWait::SkipLocked,
            None => wait,
        };
        mode = match (l.lock_type, mode) {
            (ast::LockType::Update, _) | (_, ReadMode::LockExclusive) => ReadMode::LockExclusive,
            (ast::LockType::Share, _) => ReadMode::LockShared,
        };
    }
    Ok((mode, wait))
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
    let (read_mode, lock_wait) = locking_read_mode(&q.locks)?;
    // A HAVING in a block that does not group filters rows as WHERE does.
    let order_items: &[ast::OrderByExpr] = match &q.order_by {
        Some(ast::OrderBy {
            kind: ast::OrderByKind::Expressions(items),
            ..
        }) => items,
        _ => &[],
    };
    let having_as_where = crate::planner::having_filter::as_where(select, order_items);
    let select = having_as_where.as_ref().unwrap_or(select);

    // FROM: the scope, the join order outer joins fix, and the join conditions.
    let straight = select
        .select_modifiers
        .as_ref()
        .is_some_and(|m| m.straight_join);
    let from =
        crate::planner::from_clause::plan_from(without_dual(&select.from), straight, planner, env)?;
    let scope = from.scope;
    let derived = from.derived;
    let n = scope.tables.len();
    if n > MAX_JOIN_TABLES {
        return Err(Error::TooManyTables(MAX_JOIN_TABLES));
    }

    // WHERE and the join conditions, each placed at the level where it is checked.
    let mut conds: Vec<(Option<usize>, Expr)> = Vec::new();
    if let Some(w) = &select.selection {
        // In a subquery the binder tells an aggregate of the enclosing query's columns
        // (MySQL aggregates it there; 1235 here) from a misplaced one of its own (1111).
        if env.parent.is_none() && bind::contains_aggregate(w) {
            return Err(Error::InvalidGroupUse);
        }
        let (e, _, _) = Binder::in_env(&scope, "where clause", env).bind(w)?;
        let mut pool = Vec::new();
        crate::optimizer::rewrite::conjuncts(e, &mut pool);
        let implied = crate::optimizer::rewrite::implied_by_ors(&pool, scope.tables.len(), &|e| {
            tables_mask(&scope, e)
        });
        conds.extend(pool.into_iter().chain(implied).map(|e| (None, e)));
    }
    conds.extend(from.conds);
    let mut groups = from.groups;
    // ONLY_FULL_GROUP_BY reads the equalities of WHERE and the joins, checked below.
    let full_group_by = cx.sql_mode.has(strata_types::SqlMode::ONLY_FULL_GROUP_BY);
    let dependency_conds: Vec<Expr> = if full_group_by {
        conds.iter().map(|(_, e)| e.clone()).collect()
    } else {
        Vec::new()
    };

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
    let mut windows = window::call::Collector::new(&select.named_window)?;
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
    let explicit_group_by =
        matches!(&select.group_by, ast::GroupByExpr::Expressions(g, _) if !g.is_empty());
    let mut projection = Vec::new();
    let mut columns = Vec::new();
    let mut aliases: Vec<(String, Expr, SType)> = Vec::new();
    let mut star_tables = Vec::new();
    for item in &select.projection {
        agg.at = Some((GroupedClause::SelectList, projection.len() + 1));
        match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                let qual = match item {
                    ast::SelectItem::QualifiedWildcard(
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                        _,
                    ) => Some(
                        crate::parse::object_name_parts(n)
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
                    star_tables.extend(0..scope.tables.len());
                    for &pos in &scope.star {
                        let (t, col) = scope.column(pos);
                        if col.invisible {
                            continue;
                        }
                        let e = if grouped {
                            let ty = SType::of_column(&col.data_type, col.collation);
                            agg.at = Some((GroupedClause::SelectList, projection.len() + 1));
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
                    star_tables.push(
                        scope
                            .tables
                            .iter()
                            .position(|x| std::ptr::eq(x, t))
                            .unwrap_or(0),
                    );
                    for (ci, col) in t.def.columns.iter().enumerate() {
                        // `*` leaves out INVISIBLE columns (only base tables have them).
                        if col.invisible {
                            continue;
                        }
                        let pos = t.offset + ci;
                        let e = if grouped {
                            let ty = SType::of_column(&col.data_type, col.collation);
                            agg.at = Some((GroupedClause::SelectList, projection.len() + 1));
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
                let (bound, ty, coll) = b.bind(e)?;
                let name = alias.clone().unwrap_or_else(|| planner.item_name(e));
                let meta = match (&bound, e) {
                    (
                        Expr::Column(p),
                        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_),
                    ) if !grouped => {
                        let (t, col) = scope.column(*p);
                        bind::column_meta(t, col, &name)
                    }
                    // CAST(… AS FLOAT) is a FLOAT column, shown with FLOAT's digits.
                    (Expr::Func(Func::Cast(CastFn::Float), _), _) => {
                        let mut m = ty.meta(&name);
                        m.field_type = strata_types::FieldType::Float;
                        m.length = 12;
                        m.decimals = 31;
                        m
                    }
                    _ => {
                        let mut m = ty.meta(&name);
                        // A string result names its collation (`CONCAT(bin_col, 'x')` is
                        // utf8mb4_bin), so a derived table, UNION or DISTINCT over it
                        // compares as the expression does.
                        if ty == SType::Text {
                            m.charset = coll.id();
                        }
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
                            let mut m =
                                crate::bind::aggregate_meta::result_meta(spec, &meta, max_len);
                            if let Some(Expr::Column(p)) = &spec.arg {
                                let ty = scope.column(*p).1.data_type;
                                // MIN/MAX of a FLOAT column is a FLOAT, shown as one.
                                if matches!(spec.func, AggFunc::Min | AggFunc::Max)
                                    && matches!(ty, strata_types::DataType::Float { .. })
                                {
                                    m.field_type = strata_types::FieldType::Float;
                                }
                                // Of a FLOAT(M,D) / DOUBLE(M,D) column, MIN/MAX/SUM show
                                // its D decimals and AVG four more, as MySQL's.
                                if let Some(d) = ty.fixed_decimals() {
                                    match spec.func {
                                        AggFunc::Min | AggFunc::Max | AggFunc::Sum => {
                                            m.decimals = d
                                        }
                                        AggFunc::Avg => m.decimals = (d + 4).min(31),
                                        _ => {}
                                    }
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
    // A column of a table on the inner side of an outer join can be NULL whatever its
    // definition says (MySQL clears NOT_NULL there too).
    let inner_tables = groups.iter().fold(0u64, |m, g| m | g.tables);
    if inner_tables != 0 {
        for c in &mut columns {
            let inner = scope
                .tables
                .iter()
                .position(|t| !c.table.is_empty() && t.alias == c.table)
                .is_some_and(|i| i < 64 && inner_tables & (1u64 << i) != 0);
            if inner {
                c.flags &= !strata_types::output::flags::NOT_NULL;
            }
        }
    }
    if agg.rollup {
        // Super-aggregate rows show NULL in the rolled-up columns.
        for c in &mut columns {
            c.flags &= !strata_types::output::flags::NOT_NULL;
        }
    }

    let having = match &select.having {
        Some(h) => {
            agg.at = Some((GroupedClause::Having, 1));
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
    // The hidden ORDER BY expressions: (their number in ORDER BY, projection index).
    let mut hidden_order: Vec<(usize, usize)> = Vec::new();
    if let Some(ob) = &q.order_by {
        let ast::OrderByKind::Expressions(items) = &ob.kind else {
            return Err(Error::NotSupported("ORDER BY ALL".into()));
        };
        for (n, item) in items.iter().enumerate() {
            agg.at = Some((GroupedClause::OrderBy, n + 1));
            let desc = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
            if let ast::Expr::Value(v) = &item.expr {
                if let Ok(Value::Int(p)) = bind::literal(&v.value) {
                    if p < 1 || p as usize > visible {
                        return Err(Error::UnknownColumn {
                            column: p.to_string(),
                            context: "order clause".into(),
                        });
                    }
                    let coll = order_coll(
                        p as usize - 1,
                        &projection,
                        &columns,
                        &scope,
                        &agg,
                        &windows,
                    );
                    let pos = time_order_key(&mut projection, &columns, p as usize - 1);
                    order.push((pos, desc, coll));
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
                        let coll = order_coll(i, &projection, &columns, &scope, &agg, &windows);
                        let pos = time_order_key(&mut projection, &columns, i);
                        order.push((pos, desc, coll));
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
            // A TIME sorts by its microseconds, not its text.
            let e = if matches!(ty, crate::bind::SType::Time(_)) {
                crate::bind::datetime::time_key(e)
            } else {
                e
            };
            let pos = match projection
                .iter()
                .take(visible)
                .position(|p| same_expr(p, &e))
            {
                Some(p) => p,
                None => {
                    hidden_order.push((n + 1, projection.len()));
                    projection.push(e);
                    projection.len() - 1
                }
            };
            order.push((pos, desc, coll));
        }
    }

    if full_group_by && grouped {
        crate::bind::full_group_by::check(&agg, &scope, &dependency_conds, explicit_group_by)?;
    }
    if matches!(select.distinct, Some(ast::Distinct::Distinct)) && !grouped {
        order_within_distinct(&hidden_order, &projection[..visible], &projection, &scope)?;
    }

    let (limit, offset) = bind_limits(q.limit_clause.as_ref(), env)?;

    // Derived tables and views this block may merge (MySQL's derived_merge): every
    // clause is bound against the scope with them, so names and metadata are as if
    // materialised; what reads their columns now reads their queries' expressions.
    let mut scope = scope;
    let mut derived = derived;
    let mut order_of_tables = from.order;
    let mut merged_reads = Vec::new();
    if planner.merges() && windows.plan.calls.is_empty() {
        if let Some(m) = crate::optimizer::derived_merge::merge(
            &scope,
            &order_of_tables,
            from.fixed,
            &mut groups,
            &mut derived,
            &mut conds,
        ) {
            if grouped {
                for g in &mut agg.groups {
                    m.rewrite(&mut g.1);
                }
                for a in &mut agg.aggs {
                    if let Some(e) = &mut a.arg {
                        m.rewrite(e);
                    }
                    for (e, _, _) in &mut a.more_args {
                        m.rewrite(e);
                    }
                    for (e, _, _) in &mut a.order {
                        m.rewrite(e);
                    }
                }
            } else {
                for e in &mut projection {
                    m.rewrite(e);
                }
            }
            let mut stars: Vec<usize> = star_tables
                .iter()
                .filter_map(|&t| m.kept(t))
                .chain(m.star_tables.iter().copied())
                .collect();
            stars.sort_unstable();
            stars.dedup();
            star_tables = stars;
            merged_reads = m.reads;
            order_of_tables = m.order;
            scope = m.scope;
        }
    }
    let n = scope.tables.len();
    // A block may be merged into a block reading it as a derived table: its join nest
    // and conditions as bound (after its own merges) go with it. STRAIGHT_JOIN's order
    // is the block's own: it stays materialised.
    let merge_source = (!from.straight).then(|| crate::plan::block::MergeSource {
        conds: conds.clone(),
        groups: groups.clone(),
        order: order_of_tables.clone(),
    });

    // A LEFT JOIN whose inner side WHERE null-rejects is an inner join; with no outer
    // join left, the join order is free again. (A merged derived table may have brought
    // outer joins of its own: they fix the order as written ones do.)
    let mut fixed_order = from.straight || !groups.is_empty();
    if crate::optimizer::outer_join::simplify(&mut groups, &mut conds, &|p| scope.table_of(p)) {
        fixed_order = from.straight || !groups.is_empty();
    }
    let conds = conds
        .into_iter()
        .map(|(owner, e)| (owner, tables_mask(&scope, &e), e))
        .collect();
    let mut placed = crate::plan::join_groups::place(&order_of_tables, &mut groups, conds)?;
    let const_filter = std::mem::take(&mut placed.const_filter);
    let levels: Vec<Level> = order_of_tables
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
            columns: None,
        })
        .collect();

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
                    let coll = columns
                        .get(i)
                        .map_or(Collation::GeneralCi, |c| Collation::from_id(c.charset));
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
        && scope.tables[0].is_base()
        && windows.is_none()
        && !is_transactional(cx, &scope.tables[0].def.engine);

    // Conditions on one derived table or view go down into its query (MySQL's
    // derived_condition_pushdown), before its rows are ever read.
    crate::optimizer::derived_pushdown::push_into_derived(&scope, &levels, &mut derived, cx);

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
        lock_wait,
        windows,
        star_tables,
        merge_source,
        merged_reads,
    };
    choose_access_paths(&mut plan, cx);
    Ok(plan)
}

/// MySQL 8's rule for `SELECT DISTINCT … ORDER BY e`: every column `e` reads must be
/// shown by the SELECT list (as the bare column), else error 3065 — sorting distinct
/// rows by a value they do not carry has no single answer.
fn order_within_distinct(
    hidden_order: &[(usize, usize)],
    visible: &[Expr],
    projection: &[Expr],
    scope: &Scope,
) -> Result<()> {
    for &(expr_no, i) in hidden_order {
        let mut missing = None;
        projection[i].walk(&mut |e| {
            if let Expr::Column(p) = e {
                let shown = visible
                    .iter()
                    .any(|v| matches!(v, Expr::Column(q) if q == p));
                if !shown && missing.is_none() && *p < scope.width() {
                    missing = Some(*p);
                }
            }
        });
        if let Some(p) = missing {
            let (t, col) = scope.column(p);
            return Err(Error::OrderNotInDistinct {
                expr_no,
                column: format!("{}.{}.{}", t.db, t.alias, col.name),
            });
        }
    }
    Ok(())
}

/// `FROM DUAL` (MySQL's name for "no table", unquoted and alone) reads as no FROM.
pub(crate) fn without_dual(from: &[ast::TableWithJoins]) -> &[ast::TableWithJoins] {
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

pub(crate) fn is_transactional(cx: &ExecCtx, engine: &str) -> bool {
    // Tables of no engine (information_schema, derived) are computed, not versioned.
    cx.catalog
        .engine(engine)
        .map(|e| e.transactional())
        .unwrap_or(false)
}

pub(crate) fn bind_limit(e: &ast::Expr, scope: &Scope) -> Result<Expr> {
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

pub(crate) fn group_target(
    g: &ast::Expr,
    projection: &[ast::SelectItem],
    scope: &Scope,
) -> Result<ast::Expr> {
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

pub(crate) fn same_expr(a: &Expr, b: &Expr) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

/// The collation ORDER BY sorts an output column with: a window call's is its
/// argument's.
/// The collation `ORDER BY <position>` or `ORDER BY <alias>` sorts select expression
/// `i` by: a column's, a window call's or an aggregate's own; for any other expression
/// the one its result column names (`CONCAT(bin_col, '')` sorts as utf8mb4_bin).
fn order_coll(
    i: usize,
    projection: &[Expr],
    columns: &[ColumnMeta],
    scope: &Scope,
    agg: &Aggregation,
    windows: &window::call::Collector,
) -> Collation {
    let e = &projection[i];
    match (e, columns.get(i)) {
        (Expr::Column(_), _) | (_, None) => output_coll(e, scope, agg, windows),
        _ if window::marker_call(e).is_some() => output_coll(e, scope, agg, windows),
        (_, Some(m)) => Collation::from_id(m.charset),
    }
}

pub(crate) fn output_coll(
    e: &Expr,
    scope: &Scope,
    agg: &Aggregation,
    windows: &window::call::Collector,
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

pub(crate) fn coll_of_output(e: &Expr, scope: &Scope, agg: &Aggregation) -> Collation {
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

pub(crate) fn add_factor(
    f: &ast::TableFactor,
    planner: &Planner,
    scope: &mut Scope,
    derived: &mut Derived,
) -> Result<()> {
    // A derived table's or CTE's result columns as its subquery typed them (the table
    // made of them holds coarser types: `bind::column_meta` sends these).
    let mut metas = None;
    let (alias, db, handle, slot): (String, String, Arc<dyn strata_engine::Table>, _) = match f {
        ast::TableFactor::Table {
            name,
            alias,
            index_hints,
            ..
        } => {
            let (db, table, rel) = planner.relation(name)?;
            let alias = alias
                .as_ref()
                .map(|a| a.name.value.clone())
                .unwrap_or(table);
            match rel {
                Relation::Engine(handle) => {
                    check_index_hints(index_hints, handle.def())?;
                    (alias, db, handle, None)
                }
                Relation::Cte {
                    table,
                    slot,
                    plan,
                    metas: m,
                } => {
                    metas = m;
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
            metas = Some(Arc::new(sub.columns().to_vec()));
            let names: Vec<String> = alias.columns.iter().map(|c| c.name.value.clone()).collect();
            let table = Arc::new(crate::catalog::rowsource::ReadOnlyTable(
                crate::bind::derived::DerivedTable::new(&alias.name.value, sub.columns(), &names)?,
            ));
            let slot = planner.new_slot();
            derived.push((slot, Some(Arc::new(sub))));
            (alias.name.value.clone(), String::new(), table, Some(slot))
        }
        ast::TableFactor::Derived { lateral: true, .. } => {
            return Err(Error::Internal(
                "LATERAL derived table outside a FROM clause".into(),
            ))
        }
        other => return Err(Error::NotSupported(format!("table factor {other}"))),
    };
    if scope.tables.iter().any(|t| t.alias == alias) {
        return Err(Error::NonUniqueTable(alias));
    }
    scope.push(alias, db, handle);
    if let Some(t) = scope.tables.last_mut() {
        t.slot = slot;
        t.source_meta = metas;
    }
    Ok(())
}

/// `USE|FORCE|IGNORE INDEX (…)` may name only the table's visible indexes (`PRIMARY` for
/// its primary key): another name is 1176, as in MySQL. The hints themselves are taken
/// as hints: the optimizer's own choice stands.
fn check_index_hints(hints: &[ast::TableIndexHints], def: &strata_types::TableDef) -> Result<()> {
    for name in hints.iter().flat_map(|h| &h.index_names) {
        let known = def
            .indexes
            .iter()
            .any(|ix| !ix.invisible && ix.name.eq_ignore_ascii_case(&name.value));
        if !known {
            return Err(Error::NoSuchIndex {
                index: name.value.clone(),
                table: def.name.clone(),
            });
        }
    }
    Ok(())
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
            columns: None,
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
        lock_wait: LockWait::Wait,
        star_tables: vec![],
        merge_source: None,
        merged_reads: vec![],
        windows: None,
    };
    choose_access_paths(&mut plan, cx);
    Ok(plan)
}

/// The projection position ORDER BY sorts by for output column `i`: itself, or for a
/// TIME (held as text) a hidden column of its microseconds.
fn time_order_key(projection: &mut Vec<Expr>, columns: &[ColumnMeta], i: usize) -> usize {
    if columns[i].field_type != strata_types::FieldType::Time {
        return i;
    }
    projection.push(crate::bind::datetime::time_key(projection[i].clone()));
    projection.len() - 1
}
