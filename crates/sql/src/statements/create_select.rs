//! CREATE TABLE … SELECT (`[IF NOT EXISTS]`, column definitions and keys before the
//! query, `IGNORE`/`REPLACE`), atomic as MySQL 8's:
//!
//! 1. the query is bound, and shared metadata locks are taken on what it reads (the new
//!    name's exclusive lock was taken by `ddl_locks`);
//! 2. the new table's columns are the declared ones, then the query's columns the
//!    declarations do not name, each typed by [`selected_columns`] (MySQL's rules: a
//!    column read straight from a table keeps its type, NULL-ness, default, collation;
//!    a computed one, and a UNION's column, gets its result type, derived in
//!    `create_select_types`);
//! 3. the table's files are made under a hidden stem in the DDL log
//!    (`Catalog::begin_create`), the rows are inserted by the INSERT … SELECT code in a
//!    transaction of the statement's own, which commits, and the table is flushed;
//! 4. one write of the catalog makes the table visible (`Catalog::commit_create`).
//!
//! A failure or a crash at any point before that write leaves no table (the next start
//! removes the files the log names). For the binary log the rows are handed to the
//! session's transaction together with the derived CREATE TABLE text
//! (`Txn::set_logged_ddl`), which the session writes as MySQL 8 does: the CREATE TABLE,
//! then the rows, in one transaction.

use crate::context::{ExecCtx, Outcome};
use crate::planner::query::Planner;
use crate::statements::create_select_types::{aggregate, type_of, Item, Table, Unknown};
use crate::statements::dml::{execute_insert, implicit_default, InsertPlan, Target};
use sqlparser::ast;
use std::sync::Arc;
use strata_engine::Txn;
use strata_types::output::flags;
use strata_types::schema::ColumnDefault;
use strata_types::{Collation, ColumnDef, ColumnMeta, DataType, Error, Result};

pub fn create_table_select(
    ct: &ast::CreateTable,
    query: &ast::Query,
    cx: &mut ExecCtx,
) -> Result<Outcome> {
    let (db, name) = crate::context::resolve_table(cx, &ct.name)?;
    if !cx.catalog.database_exists(&db) {
        return Err(Error::UnknownDatabase(db));
    }
    // A temporary table's name was checked against the session's (`temporary::create`);
    // a base table of the name does not stop it.
    if !ct.temporary
        && (cx.catalog.table(&db, &name).is_ok() || cx.catalog.view(&db, &name).is_some())
    {
        // With IF NOT EXISTS MySQL 8 inserts nothing then, and logs nothing.
        return super::ddl::name_in_use(&name, ct.if_not_exists, cx);
    }
    let sub = Planner::new(cx).plan_statement(query)?;
    lock_reads(cx, &sub)?;
    let metas = sub.columns();
    let declared = |name: &str| {
        ct.columns
            .iter()
            .any(|c| c.name.value.eq_ignore_ascii_case(name))
    };
    let selected = selected_columns(cx, query, metas)
        .into_iter()
        .zip(metas)
        .map(|(c, m)| match c {
            // A declared column gives the type itself; the derived one is not used.
            Err(Error::NotSupported(_)) if declared(&m.name) => Ok(ColumnDef::plain(
                m.name.clone(),
                DataType::Int { unsigned: false },
                true,
                Collation::Binary,
            )),
            other => other,
        })
        .collect::<Result<Vec<_>>>()?;
    let names: Vec<String> = selected.iter().map(|c| c.name.clone()).collect();
    let def = crate::statements::ddl::table_def(ct, cx, selected)?;
    let columns = names
        .iter()
        .map(|n| {
            def.column_index(n)
                .ok_or_else(|| Error::Internal(format!("CREATE … SELECT column {n}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let (ignore, replace) = duplicates_clause(ct);
    let files = if ct.temporary {
        crate::statements::temporary::check_def(&def)?;
        let engine = cx.catalog.engine(&def.engine)?;
        Files::Temp(cx.temp.make(engine, def)?)
    } else {
        Files::Catalog(cx.catalog.begin_create(&def)?)
    };
    let handle = files.handle().clone();
    let def = handle.def().clone();
    let own = Txn::new(cx.txn.isolation(), cx.txn.lock_wait_timeout());
    let own = if cx.txn.logs_rows() {
        own.with_row_log()
    } else {
        own
    };
    own.set_interrupt(cx.txn.interrupt());
    let filled = fill(cx, &own, &db, &handle, &def, columns, sub, ignore, replace);
    let outcome = match filled {
        Ok(o) => o,
        Err(e) => {
            let _ = own.rollback();
            drop(handle);
            files.abort(cx);
            return Err(e);
        }
    };
    let rows = own.take_logged_rows();
    let heap_rows = own.take_nontransactional_rows();
    // Durable before the commit point: a crash after it must find every row. (A
    // temporary table does not outlive a crash.)
    let durable = own.commit().and_then(|()| match &files {
        Files::Catalog(_) => handle.flush(),
        Files::Temp(_) => Ok(()),
    });
    if let Err(e) = durable {
        drop(handle);
        files.abort(cx);
        return Err(e);
    }
    drop(handle);
    let temporary = matches!(files, Files::Temp(_));
    match files {
        Files::Catalog(r) => cx.catalog.commit_create(r)?,
        Files::Temp(t) => {
            cx.temp.add(t, None)?;
            cx.catalog.invalidate_plans();
        }
    }
    // A temporary table is not logged at all (MySQL 8, binlog_format=ROW).
    if cx.txn.logs_rows() && !temporary {
        // A transactional table's rows follow it in one logged transaction; a heap
        // table's are logged after it (the session's binlog code).
        // Qualified with its database, as the statement may name it (`CREATE TABLE
        // d.t AS …` with no or another current database): a replica or a
        // `mariadb-binlog` replay runs the text in the session's current database.
        let text = crate::statements::show::show_create_table(&def, 1);
        let unqualified = format!(
            "CREATE TABLE {}",
            crate::statements::show::quote_ident(&def.name)
        );
        let text = match text.strip_prefix(&unqualified) {
            Some(rest) => format!(
                "CREATE TABLE {}.{}{rest}",
                crate::statements::show::quote_ident(&db),
                crate::statements::show::quote_ident(&def.name)
            ),
            None => text,
        };
        cx.txn.set_logged_ddl(text);
        for (t, change) in rows {
            cx.txn.log_row(&t, true, change);
        }
        for (t, change) in heap_rows {
            cx.txn.log_row(&t, false, change);
        }
    }
    Ok(outcome)
}

/// Where the new table's files are made: the catalog's DDL log (a base table), or the
/// session's temporary tables.
enum Files {
    Catalog(crate::catalog::Rebuild),
    Temp(crate::catalog::temporary::NewTemp),
}

impl Files {
    fn handle(&self) -> &Arc<dyn strata_engine::Table> {
        match self {
            Files::Catalog(r) => &r.handle,
            Files::Temp(t) => &t.handle,
        }
    }

    /// The statement failed: the files go.
    fn abort(self, cx: &ExecCtx) {
        match self {
            Files::Catalog(r) => cx.catalog.abort_rebuild(r),
            Files::Temp(t) => {
                let _ = cx.temp.discard(t);
            }
        }
    }
}

/// Inserts the query's rows into the new table, in transaction `own`, one statement.
#[allow(clippy::too_many_arguments)]
fn fill(
    cx: &ExecCtx,
    own: &Txn,
    db: &str,
    handle: &Arc<dyn strata_engine::Table>,
    def: &Arc<strata_types::TableDef>,
    columns: Vec<usize>,
    sub: crate::plan::query::QueryStatement,
    ignore: bool,
    replace: bool,
) -> Result<Outcome> {
    let mut icx = ExecCtx {
        catalog: cx.catalog,
        current_db: cx.current_db.clone(),
        env: cx.env,
        locked_tables: cx.locked_tables,
        strict: cx.strict,
        sql_mode: cx.sql_mode,
        default_engine: cx.default_engine,
        sort_buffer_size: cx.sort_buffer_size,
        tmp_table_size: cx.tmp_table_size,
        tmpdir: cx.tmpdir,
        txn: own,
        mdl: cx.mdl,
        invoker: cx.invoker,
        temp: cx.temp,
    };
    let rules = crate::constraints::RowRules::for_target(&icx, db, def, handle)?;
    let plan = InsertPlan {
        target: Target {
            db: db.to_string(),
            table: handle.clone(),
            def: def.clone(),
            rules,
            exprs: crate::statements::column_expr::ColumnExprs::bind(def, db, handle)?,
            triggers: None,
            through: None,
        },
        columns,
        rows: Vec::new(),
        select: Some(Box::new(sub)),
        ignore,
        replace,
        on_duplicate: None,
        subqueries: Default::default(),
    };
    own.begin_statement();
    let done = execute_insert(&plan, &mut icx, &[]);
    own.end_statement(done.is_ok())?;
    done
}

/// Shared metadata locks on the tables and views the query reads, to the statement's
/// end, as the SELECT of INSERT … SELECT takes them.
fn lock_reads(cx: &ExecCtx, sub: &crate::plan::query::QueryStatement) -> Result<()> {
    use crate::mdl::{normalize, MdlDuration, MdlKey, MdlMode, MdlRequest};
    let mut reqs = Vec::new();
    let names = sub
        .tables
        .iter()
        .map(|(db, name, _)| (db, name))
        .chain(sub.views.iter().map(|(db, name)| (db, name)));
    for (db, name) in names {
        if !crate::catalog::is_system_schema(db) {
            reqs.push(MdlRequest::new(
                MdlKey::table(db, name),
                MdlMode::SharedRead,
            ));
        }
    }
    if reqs.is_empty() {
        return Ok(());
    }
    normalize(&mut reqs);
    cx.mdl.acquire(&reqs, MdlDuration::Transaction)
}

/// `CREATE TABLE t IGNORE SELECT …` / `REPLACE SELECT …`: what rows that meet an
/// existing key do (the parser keeps the word in the table options' place).
fn duplicates_clause(ct: &ast::CreateTable) -> (bool, bool) {
    let opts: &[ast::SqlOption] = match &ct.table_options {
        ast::CreateTableOptions::None => &[],
        ast::CreateTableOptions::With(o)
        | ast::CreateTableOptions::Options(o)
        | ast::CreateTableOptions::Plain(o)
        | ast::CreateTableOptions::TableProperties(o) => o,
    };
    for o in opts {
        if let ast::SqlOption::KeyValue {
            key,
            value: ast::Expr::Identifier(v),
        } = o
        {
            if key.value.eq_ignore_ascii_case("INSERT_METHOD")
                && v.quote_style == Some(crate::parse::token_rewrite::INTERNAL_QUOTE)
            {
                return (v.value == "IGNORE", v.value == "REPLACE");
            }
        }
    }
    (false, false)
}

/// The columns CREATE TABLE … SELECT makes of the query's result columns `metas`, each
/// typed or a 1235 naming what is not: of one SELECT by [`selected_column`], of a UNION
/// by aggregating its SELECTs' types of each column as MySQL does (a column read from
/// a table keeps its type there, but not its default).
fn selected_columns(
    cx: &ExecCtx,
    query: &ast::Query,
    metas: &[ColumnMeta],
) -> Vec<Result<ColumnDef>> {
    let refused = |m: &ColumnMeta, what: &str| {
        Err(Error::NotSupported(format!(
            "CREATE TABLE … SELECT of the computed column `{}`: {what} (declare its type \
             in the column definitions)",
            m.name
        )))
    };
    // A common table expression's name hides a table's.
    let ctes: Vec<&str> = query.with.as_ref().map_or(Vec::new(), |w| {
        w.cte_tables
            .iter()
            .map(|c| c.alias.name.value.as_str())
            .collect()
    });
    let ast::SetExpr::SetOperation { .. } = query.body.as_ref() else {
        let (items, tables) = match query.body.as_ref() {
            ast::SetExpr::Select(sel) => (select_items(sel, metas), tables_of(cx, sel, &ctes)),
            _ => (vec![None; metas.len()], Ok(Vec::new())),
        };
        return metas
            .iter()
            .zip(items)
            .map(|(m, item)| {
                selected_column(cx, m, item, &tables).or_else(|what| refused(m, &what))
            })
            .collect();
    };
    let mut branches = Vec::new();
    if let Err(what) = union_branches(query.body.as_ref(), &mut branches) {
        return metas.iter().map(|m| refused(m, &what)).collect();
    }
    let typed: Vec<Branch> = branches
        .iter()
        .map(|sel| (select_items(sel, metas), tables_of(cx, sel, &ctes)))
        .collect();
    metas
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let items = typed
                .iter()
                .map(|(items, tables)| {
                    let e = items[i].ok_or_else(|| "a UNION branch with `*`".to_string())?;
                    type_of(e, tables.as_ref().map_err(Clone::clone)?)
                })
                .collect::<std::result::Result<Vec<Item>, Unknown>>();
            let column = items.and_then(|items| {
                let nullable = items.iter().any(|x| x.nullable);
                aggregate(&items, nullable, true, "UNION")?.column(&m.name)
            });
            match column {
                Ok(c) => finish_computed(c),
                Err(what) => refused(m, &what),
            }
        })
        .collect()
}

/// A UNION's SELECT: its select-list expressions and the tables it reads.
type Branch<'q> = (
    Vec<Option<&'q ast::Expr>>,
    std::result::Result<Vec<Table>, Unknown>,
);

/// The SELECTs of a UNION / INTERSECT / EXCEPT, in order.
fn union_branches<'q>(
    body: &'q ast::SetExpr,
    out: &mut Vec<&'q ast::Select>,
) -> std::result::Result<(), Unknown> {
    match body {
        ast::SetExpr::SetOperation { left, right, .. } => {
            union_branches(left, out)?;
            union_branches(right, out)
        }
        ast::SetExpr::Select(sel) => {
            out.push(sel);
            Ok(())
        }
        ast::SetExpr::Query(q) if q.order_by.is_none() && q.limit_clause.is_none() => {
            union_branches(q.body.as_ref(), out)
        }
        _ => Err("a UNION branch other than a SELECT".into()),
    }
}

/// The column CREATE TABLE … SELECT makes of result column `m` (`item`: its select-list
/// expression, when known), as MySQL 8 does: a column read straight from a base table
/// keeps that column's type, NULL-ness (or becomes NULL-able through an outer join),
/// default, ON UPDATE, collation and members, but not AUTO_INCREMENT (such a column
/// gets the implicit default instead); a computed one gets its expression's result
/// type (`create_select_types`), and when NOT NULL and numeric or string the implicit
/// default (`DEFAULT '0'`, `DEFAULT ''`). A computed column whose type Strata cannot
/// derive exactly is refused with what it is, never given a guessed type.
fn selected_column(
    cx: &ExecCtx,
    m: &ColumnMeta,
    item: Option<&ast::Expr>,
    tables: &std::result::Result<Vec<Table>, Unknown>,
) -> std::result::Result<ColumnDef, Unknown> {
    let nullable = m.flags & flags::NOT_NULL == 0;
    let base = (!m.org_table.is_empty() && !m.schema.is_empty() && !m.org_name.is_empty())
        .then(|| {
            // A temporary table of the session hides the base table of its name.
            cx.temp_table(&m.schema, &m.org_table)
                .or_else(|| cx.catalog.table(&m.schema, &m.org_table).ok())
        })
        .flatten()
        .and_then(|t| {
            let def = t.def();
            def.column_index(&m.org_name)
                .map(|i| def.columns[i].clone())
        });
    if let Some(mut c) = base {
        c.name = m.name.clone();
        // A column named in the SELECT is visible in the new table (MySQL's rule).
        c.invisible = false;
        c.nullable |= nullable;
        if c.auto_increment {
            c.auto_increment = false;
            if !c.nullable && c.default.is_none() {
                c.default = Some(ColumnDefault::Value(implicit_default(&c)));
            }
        }
        return Ok(c);
    }
    let item = item.ok_or_else(|| "an expression not matched to the select list".to_string())?;
    let tables = tables.as_ref().map_err(Clone::clone)?;
    let c = type_of(item, tables)?.column(&m.name)?;
    finish_computed(c).map_err(|e| e.to_string())
}

/// A computed column's implicit default: when NOT NULL and numeric or string (not
/// TEXT), MySQL 8's (`DEFAULT '0'`, `DEFAULT ''`).
fn finish_computed(mut c: ColumnDef) -> Result<ColumnDef> {
    let data_type = c.data_type;
    let nullable = c.nullable;
    let plain = data_type.is_integer()
        || matches!(
            data_type,
            DataType::Decimal { .. }
                | DataType::Double { .. }
                | DataType::Float { .. }
                | DataType::VarChar(_)
                | DataType::Char(_)
        );
    if !nullable && plain {
        // In the column's own form (`0.0` for a DECIMAL(2,1)).
        let zero = crate::expr::convert::coerce(implicit_default(&c), &c, 1, false)?;
        c.default = Some(ColumnDefault::Value(zero));
    }
    Ok(c)
}

/// The tables a SELECT reads, whose columns its expressions are typed from: each named
/// table of FROM and its joins, those on the inner side of an outer join NULL-able.
/// A view, derived table or common table expression (`ctes`) adds none (an expression
/// over its columns is not typed).
fn tables_of(
    cx: &ExecCtx,
    sel: &ast::Select,
    ctes: &[&str],
) -> std::result::Result<Vec<Table>, Unknown> {
    match &sel.group_by {
        ast::GroupByExpr::Expressions(_, mods) if !mods.is_empty() => {
            return Err("a query WITH ROLLUP".into())
        }
        ast::GroupByExpr::All(_) => return Err("GROUP BY ALL".into()),
        _ => {}
    }
    let mut out: Vec<Table> = Vec::new();
    for from in &sel.from {
        let start = out.len();
        push_table(cx, &from.relation, false, ctes, &mut out);
        for j in &from.joins {
            use ast::JoinOperator as J;
            match &j.join_operator {
                J::Join(_) | J::Inner(_) | J::CrossJoin(_) => {
                    push_table(cx, &j.relation, false, ctes, &mut out)
                }
                J::Left(_) | J::LeftOuter(_) => push_table(cx, &j.relation, true, ctes, &mut out),
                J::Right(_) | J::RightOuter(_) => {
                    for t in &mut out[start..] {
                        t.outer = true;
                    }
                    push_table(cx, &j.relation, false, ctes, &mut out)
                }
                _ => return Err("this kind of join".into()),
            }
        }
    }
    Ok(out)
}

fn push_table(
    cx: &ExecCtx,
    f: &ast::TableFactor,
    outer: bool,
    ctes: &[&str],
    out: &mut Vec<Table>,
) {
    let ast::TableFactor::Table { name, alias, .. } = f else {
        return;
    };
    if let [one] = crate::parse::object_name_parts(name).as_slice() {
        if ctes.iter().any(|c| c.eq_ignore_ascii_case(one)) {
            return;
        }
    }
    let Ok((db, table)) = crate::context::resolve_table(cx, name) else {
        return;
    };
    let Some(handle) = cx
        .temp_table(&db, &table)
        .or_else(|| cx.catalog.table(&db, &table).ok())
    else {
        return;
    };
    out.push(Table {
        qualifier: alias
            .as_ref()
            .map_or(table.clone(), |a| a.name.value.clone()),
        def: handle.def().clone(),
        outer,
    });
}

/// The select-list expression of each result column, where the SELECT's items can be
/// matched to its columns: by position when it has no `*`, else by alias.
fn select_items<'q>(sel: &'q ast::Select, metas: &[ColumnMeta]) -> Vec<Option<&'q ast::Expr>> {
    let wildcard = sel.projection.iter().any(|i| {
        matches!(
            i,
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
        )
    });
    if !wildcard && sel.projection.len() == metas.len() {
        return sel
            .projection
            .iter()
            .map(|i| match i {
                ast::SelectItem::UnnamedExpr(e) => Some(e),
                ast::SelectItem::ExprWithAlias { expr, .. } => Some(expr),
                _ => None,
            })
            .collect();
    }
    metas
        .iter()
        .map(|m| {
            sel.projection.iter().find_map(|i| match i {
                ast::SelectItem::ExprWithAlias { expr, alias }
                    if alias.value.eq_ignore_ascii_case(&m.name) =>
                {
                    Some(expr)
                }
                _ => None,
            })
        })
        .collect()
}
