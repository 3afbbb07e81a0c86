//! Statement planning and execution entry points: [`prepare`] binds a parsed statement
//! into a [`Plan`] (reused by prepared statements and the text-protocol plan cache),
//! [`execute`] runs it with parameter values, in the context ([`crate::context::ExecCtx`])
//! the session gives it. This is the top of the crate: it dispatches to the query planner
//! and executor and to the other statements; nothing below imports it.
//!
//! Every statement runs inside the session's transaction (`ExecCtx::txn`); the session
//! opens, commits and rolls it back.

use crate::context::{ExecCtx, Outcome};
use crate::mdl::{normalize, MdlKey, MdlMode, MdlRequest};
use crate::plan::query::QueryStatement;
use crate::planner::query::Planner;
use crate::routines::ast::Sql;
use crate::routines::interp::Runner;
use crate::statements::dml::{self, DeletePlan, InsertPlan, UpdatePlan};
use sqlparser::ast;

use strata_types::{ColumnMeta, Error, QueryOutput, Result, Value};

/// A bound statement, ready to run with parameter values.
pub enum Plan {
    Select(QueryStatement),
    Insert(InsertPlan),
    Update(UpdatePlan),
    Delete(DeletePlan),
    /// EXPLAIN SELECT.
    Explain(ExplainPlan),
    /// DDL, SHOW and the like: interpreted from the AST each time.
    Other(Box<ast::Statement>),
}

/// EXPLAIN of a query: the bound query and the output form asked for.
pub struct ExplainPlan {
    pub statement: QueryStatement,
    /// FORMAT=TREE (MySQL 8.0.16+): the operator tree; otherwise the traditional table.
    pub tree: bool,
}

pub struct Prepared {
    pub plan: Plan,
    pub params: usize,
    pub columns: Vec<ColumnMeta>,
    /// The catalog version the plan was bound under; a newer catalog re-binds.
    pub catalog_version: u64,
    pub db: Option<String>,
    pub statement: ast::Statement,
    /// The text `statement` was parsed from, for binding it again.
    pub source: String,
    /// The shared metadata locks running it takes on the tables it uses (SHARED_READ,
    /// or SHARED_WRITE for a table it changes or reads FOR UPDATE), in acquisition
    /// order; computed once here so executing costs no allocation. DDL takes its own
    /// (`statements::ddl_locks`).
    pub table_locks: Vec<MdlRequest>,
    /// Whether it writes, so it also takes the global intention lock that FLUSH TABLES
    /// WITH READ LOCK excludes.
    pub takes_global_ix: bool,
}

impl Prepared {
    /// True for statements before which MySQL commits the open transaction and whose
    /// own work is committed at once (DDL): the session runs them outside any
    /// transaction the client opened.
    pub fn commits_implicitly(&self) -> bool {
        use ast::Statement as S;
        let Plan::Other(stmt) = &self.plan else {
            return false;
        };
        // CREATE / DROP TEMPORARY TABLE commit nothing (MySQL 8).
        if matches!(&**stmt, S::CreateTable(ct) if ct.temporary)
            || matches!(
                &**stmt,
                S::Drop {
                    temporary: true,
                    ..
                }
            )
        {
            return false;
        }
        matches!(
            **stmt,
            S::CreateDatabase { .. }
                | S::CreateSchema { .. }
                | S::AlterSchema(_)
                | S::CreateTable(_)
                | S::CreateIndex(_)
                | S::CreateView(_)
                | S::AlterTable(_)
                | S::AlterIndex { .. }
                | S::AlterView { .. }
                | S::Drop { .. }
                | S::Truncate(_)
                | S::RenameTable(_)
                | S::CreateUser(_)
                | S::AlterUser(_)
                | S::Grant(_)
                | S::Revoke(_)
        )
    }

    /// CREATE TABLE … SELECT: the binary log gets the table's definition and rows from
    /// the transaction (`Txn::set_logged_ddl`), never the statement's text.
    pub fn logs_own_ddl(&self) -> bool {
        matches!(&self.plan, Plan::Other(s) if matches!(&**s, ast::Statement::CreateTable(ct) if ct.query.is_some()))
    }

    /// Whether a READ ONLY transaction must refuse the statement (1792): it changes
    /// rows (of any engine, as MySQL checks before the engine is asked), is DDL, or
    /// reads FOR UPDATE.
    pub fn writes(&self) -> bool {
        match &self.plan {
            Plan::Insert(_) | Plan::Update(_) | Plan::Delete(_) => true,
            Plan::Select(s) => {
                s.root.locks_for_update() || s.subqueries.iter().any(|q| q.locks_for_update())
            }
            Plan::Explain(_) => false,
            Plan::Other(_) => self.commits_implicitly(),
        }
    }

    /// True when running the statement reads or writes table rows, so it needs a
    /// transaction (a SELECT without FROM, or EXPLAIN, does not open one).
    pub fn reads_tables(&self) -> bool {
        match &self.plan {
            Plan::Select(s) => !s.tables.is_empty() || s.slots > 0,
            Plan::Explain(_) => false,
            Plan::Insert(_) | Plan::Update(_) | Plan::Delete(_) | Plan::Other(_) => true,
        }
    }
}

/// Binds a statement. `params` is the number of `?N` placeholders in it.
/// Plans a statement parsed from `source` (its text as parsed: result columns without
/// an alias are named by their text in it).
pub fn prepare(
    stmt: ast::Statement,
    source: &str,
    params: usize,
    cx: &ExecCtx,
) -> Result<Prepared> {
    prepare_named(stmt, source, None, params, cx)
}

/// [`prepare`], with the result columns of a query named from `written` (the text as
/// a stored program's author wrote it) rather than from `source`.
fn prepare_named(
    stmt: ast::Statement,
    source: &str,
    written: Option<(&str, &[Option<strata_types::ColumnDef>])>,
    params: usize,
    cx: &ExecCtx,
) -> Result<Prepared> {
    let catalog_version = cx.catalog.version();
    let planner = || match written {
        Some((w, types)) => Planner::for_program_text(cx, source, w, types),
        None => Planner::for_text(cx, source),
    };
    let plan = match &stmt {
        ast::Statement::Query(q) => Plan::Select(planner().plan_statement(q)?),
        ast::Statement::Insert(ins) => Plan::Insert(dml::plan_insert(ins, cx)?),
        ast::Statement::Update(u) => Plan::Update(dml::plan_update(u, cx)?),
        ast::Statement::Delete(d) => Plan::Delete(dml::plan_delete(d, cx)?),
        ast::Statement::Explain {
            statement,
            analyze: false,
            format,
            ..
        } => match statement.as_ref() {
            // The traditional table and the TREE form are produced; another format
            // (JSON) is refused, not answered in the wrong shape.
            _ if !matches!(
                format,
                None | Some(
                    ast::AnalyzeFormatKind::Keyword(
                        ast::AnalyzeFormat::TRADITIONAL | ast::AnalyzeFormat::TREE
                    ) | ast::AnalyzeFormatKind::Assignment(
                        ast::AnalyzeFormat::TRADITIONAL | ast::AnalyzeFormat::TREE
                    )
                )
            ) =>
            {
                return Err(Error::NotSupported(format!(
                    "EXPLAIN {}",
                    format.as_ref().map(|f| f.to_string()).unwrap_or_default()
                )))
            }
            ast::Statement::Query(q) => Plan::Explain(ExplainPlan {
                statement: Planner::for_text(cx, source).plan_statement(q)?,
                tree: matches!(
                    format,
                    Some(
                        ast::AnalyzeFormatKind::Keyword(ast::AnalyzeFormat::TREE)
                            | ast::AnalyzeFormatKind::Assignment(ast::AnalyzeFormat::TREE)
                    )
                ),
            }),
            other => {
                return Err(Error::NotSupported(format!(
                    "EXPLAIN {}",
                    other.to_string().split_whitespace().next().unwrap_or("")
                )))
            }
        },
        other => Plan::Other(Box::new(other.clone())),
    };
    crate::routines::install(&RUNNER);
    crate::context::install_program_hooks(&RUNNER);
    let mut plan = plan;
    let targets: Vec<&mut dml::Target> = match &mut plan {
        Plan::Insert(InsertPlan { target, .. }) => vec![target],
        Plan::Update(u) => u.targets_mut().collect(),
        Plan::Delete(d) => d.targets_mut().collect(),
        _ => vec![],
    };
    for target in targets {
        target.triggers = crate::routines::triggers::for_table(
            cx,
            &target.db,
            &target.def.name,
            &target.def,
            &RUNNER,
        )?;
    }
    if !cx.temp.is_empty() {
        check_reopened(&plan, cx)?;
    }
    let columns = match &plan {
        Plan::Select(s) => s.columns().to_vec(),
        _ => vec![],
    };
    let table_locks = metadata_locks(&plan);
    let takes_global_ix = table_locks.iter().any(|r| r.mode == MdlMode::SharedWrite);
    Ok(Prepared {
        table_locks,
        takes_global_ix,
        plan,
        params,
        columns,
        catalog_version,
        db: cx.current_db.clone(),
        statement: stmt,
        source: source.to_string(),
    })
}

/// 1235 for a statement that would change a `mysql` table (`catalog::systables`): DML
/// on one, or DDL naming one. Run after the privilege check, so an account without the
/// privilege gets 1142 as in MySQL; never a statement that silently does nothing.
fn refuse_account_table_changes(p: &Prepared) -> Result<()> {
    use crate::catalog::systables::{is_account_table, refuse_change};
    // No allocation on the DML path: this runs for every statement.
    let check = |t: &dml::Target| {
        if is_account_table(&t.db, &t.def.name) {
            Err(refuse_change(&t.def.name))
        } else {
            Ok(())
        }
    };
    match &p.plan {
        Plan::Insert(i) => check(&i.target),
        Plan::Update(u) => u.targets().try_for_each(check),
        Plan::Delete(d) => d.targets().try_for_each(check),
        Plan::Other(_) => {
            for n in crate::privileges::required(p) {
                if let Some(t) = n.table.as_deref().filter(|t| is_account_table(&n.db, t)) {
                    return Err(refuse_change(t));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// 1137 when a statement uses one of the session's temporary tables more than once (a
/// self-join, a subquery or INSERT … SELECT reading the table it writes): MySQL 8
/// opens a temporary table once per statement (its manual, "TEMPORARY Table Problems").
fn check_reopened(plan: &Plan, cx: &ExecCtx) -> Result<()> {
    use crate::plan::query::ReadTable;
    fn reads(ts: &[ReadTable]) -> impl Iterator<Item = &std::sync::Arc<dyn strata_engine::Table>> {
        ts.iter().map(|t| &t.2)
    }
    let mut used: Vec<&std::sync::Arc<dyn strata_engine::Table>> = Vec::new();
    match plan {
        Plan::Select(s) => used.extend(reads(&s.tables)),
        Plan::Explain(e) => used.extend(reads(&e.statement.tables)),
        Plan::Insert(i) => {
            used.push(&i.target.table);
            if let Some(sel) = &i.select {
                used.extend(reads(&sel.tables));
            }
            used.extend(reads(&i.subqueries.tables));
        }
        Plan::Update(u) => {
            used.extend(u.targets().map(|t| &t.table));
            used.extend(reads(&u.subqueries.tables));
        }
        Plan::Delete(d) => {
            used.extend(d.targets().map(|t| &t.table));
            used.extend(reads(&d.subqueries.tables));
        }
        Plan::Other(_) => {}
    }
    for (i, t) in used.iter().enumerate() {
        if used[..i].iter().any(|u| std::sync::Arc::ptr_eq(u, t)) && cx.temp.holds(t) {
            return Err(Error::CantReopenTable(t.def().name.clone()));
        }
    }
    Ok(())
}

/// The shared metadata locks a bound statement takes on the tables it uses.
fn metadata_locks(plan: &Plan) -> Vec<MdlRequest> {
    use crate::plan::query::ReadTable;
    let mut reqs = Vec::new();
    let mut add = |db: &str, name: &str, mode: MdlMode| {
        // information_schema tables are the server's own views, not named objects DDL
        // could change under a statement.
        if !crate::catalog::is_system_schema(db) {
            reqs.push(MdlRequest::new(MdlKey::table(db, name), mode));
        }
    };
    let reads = |tables: &[ReadTable], add: &mut dyn FnMut(&str, &str, MdlMode), mode| {
        for (db, name, _) in tables {
            add(db, name, mode);
        }
    };
    match plan {
        Plan::Select(s) => {
            let mode =
                if s.root.locks_for_update() || s.subqueries.iter().any(|q| q.locks_for_update()) {
                    MdlMode::SharedWrite
                } else {
                    MdlMode::SharedRead
                };
            reads(&s.tables, &mut add, mode);
            for (db, name) in &s.views {
                add(db, name, MdlMode::SharedRead);
            }
        }
        Plan::Insert(i) => {
            add(&i.target.db, &i.target.def.name, MdlMode::SharedWrite);
            if let Some(sel) = &i.select {
                reads(&sel.tables, &mut add, MdlMode::SharedRead);
            }
            reads(&i.subqueries.tables, &mut add, MdlMode::SharedRead);
            let views = i.select.iter().flat_map(|s| &s.views);
            for (db, name) in views.chain(&i.subqueries.views) {
                add(db, name, MdlMode::SharedRead);
            }
        }
        Plan::Update(u) => {
            for t in u.targets() {
                add(&t.db, &t.def.name, MdlMode::SharedWrite);
            }
            reads(&u.subqueries.tables, &mut add, MdlMode::SharedRead);
            for (db, name) in &u.subqueries.views {
                add(db, name, MdlMode::SharedRead);
            }
        }
        Plan::Delete(d) => {
            for t in d.targets() {
                add(&t.db, &t.def.name, MdlMode::SharedWrite);
            }
            reads(&d.subqueries.tables, &mut add, MdlMode::SharedRead);
            for (db, name) in &d.subqueries.views {
                add(db, name, MdlMode::SharedRead);
            }
        }
        Plan::Explain(_) | Plan::Other(_) => {}
    }
    // The tables the targets' foreign keys read (parents) or change (children).
    let targets: Vec<&dml::Target> = match plan {
        Plan::Insert(i) => vec![&i.target],
        Plan::Update(u) => u.targets().collect(),
        Plan::Delete(d) => d.targets().collect(),
        _ => vec![],
    };
    for target in targets {
        // A view changed through: SR on it and on every view under it.
        if let Some(th) = target.through.as_ref() {
            for (db, name) in &th.views {
                add(db, name, MdlMode::SharedRead);
            }
        }
        if let Some(r) = target.rules.as_ref() {
            for (db, name, writes) in r.links.tables() {
                let mode = if writes {
                    MdlMode::SharedWrite
                } else {
                    MdlMode::SharedRead
                };
                add(&db, &name, mode);
            }
        }
    }
    normalize(&mut reqs);
    reqs
}

/// Runs a bound statement. Result sets go to `out`; OK summaries come back in the
/// [`Outcome`] for the session to send.
pub fn execute(
    p: &Prepared,
    params: &[Value],
    cx: &mut ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    if params.len() < p.params {
        return Err(Error::WrongParamCount("statement".into()));
    }
    if cx.txn.read_only() && p.writes() {
        return Err(Error::ReadOnlyTransaction);
    }
    refuse_account_table_changes(p)?;
    match &p.plan {
        Plan::Select(s) => {
            let rows_sent = crate::exec::executor::execute(s, cx, params, out)?;
            Ok(Outcome {
                ok: None,
                rows_sent,
                generated_id: None,
            })
        }
        Plan::Insert(i) => dml::execute_insert(i, cx, params)
            .map_err(|e| json_error_in_table(e, &i.target.def.name)),
        Plan::Update(u) => dml::execute_update(u, cx, params)
            .map_err(|e| json_error_in_table(e, &u.target.def.name)),
        Plan::Delete(d) => dml::execute_delete(d, cx, params),
        Plan::Explain(ExplainPlan {
            statement,
            tree: true,
        }) => crate::statements::explain_tree::explain_tree(statement, cx, out),
        Plan::Explain(e) => crate::statements::explain::explain_statement(&e.statement, cx, out),
        Plan::Other(stmt) => match **stmt {
            // The view's clauses and query text come from the statement's text.
            ast::Statement::CreateView(_) | ast::Statement::AlterView { .. } => {
                crate::statements::views::define(stmt, &p.source, cx)
            }
            _ => crate::statements::ddl::execute_other(stmt, cx, out),
        },
    }
}

/// MySQL names the column of a bad JSON value as `table.column` (3140); the conversion
/// that finds it knows only the column.
fn json_error_in_table(e: Error, table: &str) -> Error {
    match e {
        Error::InvalidJsonText {
            reason,
            pos,
            column,
        } if !column.contains('.') => Error::InvalidJsonText {
            reason,
            pos,
            column: format!("{table}.{column}"),
        },
        other => other,
    }
}

/// CREATE/DROP TRIGGER, CREATE/DROP/ALTER PROCEDURE|FUNCTION and CALL
/// (`crate::routines::execute_ddl`), with the statement runner installed first.
pub fn execute_stored_program_ddl(
    kind: crate::routines::ProgramDdl,
    sql: &str,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    crate::routines::install(&RUNNER);
    crate::context::install_program_hooks(&RUNNER);
    crate::routines::execute_ddl(kind, sql, cx, out)
}

/// Runs the SQL inside stored programs (`crate::routines`): each expression or
/// statement is bound once and its plan kept in the program until the catalog changes.
struct StatementRunner;

static RUNNER: StatementRunner = StatementRunner;

impl StatementRunner {
    fn bound(
        &self,
        sql: &Sql,
        expr: bool,
        types: &[Option<strata_types::ColumnDef>],
        cx: &ExecCtx,
    ) -> Result<std::sync::Arc<Prepared>> {
        let mut slot = sql
            .plan
            .lock()
            .map_err(|_| Error::Internal("stored program plan lock".into()))?;
        if let Some(any) = slot.as_ref() {
            if let Ok(p) = any.clone().downcast::<Prepared>() {
                if p.catalog_version == cx.catalog.version() && p.db == cx.current_db {
                    return Ok(p);
                }
            }
        }
        let (text, source) = if expr {
            (
                format!("SELECT {}", sql.text),
                format!("SELECT {}", sql.source),
            )
        } else {
            (sql.text.clone(), sql.source.clone())
        };
        let mut stmts = crate::parse::parse(&text)?;
        if stmts.len() != 1 {
            return Err(Error::Syntax(text.chars().take(80).collect()));
        }
        // Bound from the placeholder text, named from the text as written.
        let p = std::sync::Arc::new(prepare_named(
            stmts.remove(0),
            &text,
            Some((&source, types)),
            sql.refs.len(),
            cx,
        )?);
        *slot = Some(p.clone());
        Ok(p)
    }
}

impl Runner for StatementRunner {
    fn run(
        &self,
        sql: &Sql,
        expr: bool,
        params: &[(Value, Option<strata_types::ColumnDef>)],
        cx: &ExecCtx,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let types: Vec<Option<strata_types::ColumnDef>> =
            params.iter().map(|p| p.1.clone()).collect();
        let params: Vec<Value> = params.iter().map(|p| p.0.clone()).collect();
        let params = params.as_slice();
        let p = self.bound(sql, expr, &types, cx)?;
        let targets: Vec<&dml::Target> = match &p.plan {
            Plan::Select(_) => vec![],
            Plan::Insert(i) => vec![&i.target],
            Plan::Update(u) => u.targets().collect(),
            Plan::Delete(d) => d.targets().collect(),
            Plan::Explain(_) | Plan::Other(_) => {
                return Err(Error::NotSupported(format!(
                    "{} inside a stored program",
                    crate::parse::lex::first_word(&sql.text)
                )))
            }
        };
        for (t, inv) in targets.iter().zip(std::iter::repeat(cx.invoker)) {
            let Some(inv) = inv else { break };
            if inv.function {
                return Err(Error::NotSupported(format!(
                    "{} inside a stored function",
                    crate::parse::lex::first_word(&sql.text)
                )));
            }
            if inv
                .busy
                .iter()
                .any(|(d, n)| *d == t.db && n.eq_ignore_ascii_case(&t.def.name))
            {
                return Err(Error::CantUpdateUsedTable(t.def.name.clone()));
            }
        }
        let mut child = cx.reborrow();
        execute(&p, params, &mut child, out)?;
        Ok(())
    }

    fn call(
        &self,
        name: &(Option<String>, String),
        args: Vec<Value>,
        cx: &ExecCtx,
        out: &mut dyn QueryOutput,
    ) -> Result<Vec<Option<Value>>> {
        crate::routines::programs::run_procedure(name, args, cx, out, self)
    }
}

impl crate::context::ProgramHooks for StatementRunner {
    fn bind_function(
        &self,
        cx: &ExecCtx,
        db: Option<&str>,
        name: &str,
        args: usize,
    ) -> Result<
        Option<(
            std::sync::Arc<dyn crate::context::CallFunction>,
            strata_types::ColumnDef,
        )>,
    > {
        Ok(
            crate::routines::programs::StoredFunction::bind(cx, db, name, args)?.map(|f| {
                let ret = f.returns().clone();
                (f as std::sync::Arc<dyn crate::context::CallFunction>, ret)
            }),
        )
    }
}
