//! CREATE TABLE … SELECT (`[IF NOT EXISTS]`, column definitions and keys before the
//! query, `IGNORE`/`REPLACE`), atomic as MySQL 8's:
//!
//! 1. the query is bound, and shared metadata locks are taken on what it reads (the new
//!    name's exclusive lock was taken by `ddl_locks`);
//! 2. the new table's columns are the declared ones, then the query's columns the
//!    declarations do not name, each typed by `create_select_columns` (MySQL's rules:
//!    a column read straight from a table keeps its type, NULL-ness, default,
//!    collation; one of a derived table, CTE or view the type its query gives it; a
//!    computed one, and a UNION's column, gets its result type, derived in
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
use crate::statements::create_select_columns::selected_columns;
use crate::statements::dml::{execute_insert, InsertPlan, Target};
use sqlparser::ast;
use std::sync::Arc;
use strata_engine::Txn;
use strata_types::{Collation, ColumnDef, DataType, Error, Result};

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
