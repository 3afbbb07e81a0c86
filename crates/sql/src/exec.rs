//! Statement planning and execution entry points: [`prepare`] binds a parsed statement
//! into a [`Plan`] (reused by prepared statements and the text-protocol plan cache),
//! [`execute`] runs it with parameter values. Table locks for a statement are taken
//! here, all at once and in a fixed order (database, table) so two statements can never
//! wait on each other; under LOCK TABLES the session's locks are used instead.
//!
//! Every statement runs inside the session's [`Txn`] ([`ExecCtx::txn`]); the session
//! opens, commits and rolls it back. The executor only sets the per-statement read mode
//! (FOR UPDATE, the rows UPDATE and DELETE change) through [`ReadModeGuard`].

use crate::catalog::Catalog;
use crate::dml::{self, DeletePlan, InsertPlan, UpdatePlan};
use crate::expr::Env;
use crate::query::{Planner, QueryStatement};
use sqlparser::ast;
use std::collections::HashMap;
use std::sync::Arc;
use strata_engine::{LockMode, ReadMode, Table, TableLock, Txn};
use strata_types::{ColumnMeta, Error, OkInfo, QueryOutput, Result, Value};

/// What a statement left behind for the session.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    /// None for statements that sent a result set.
    pub ok: Option<OkInfo>,
    /// Rows sent by a SELECT (for FOUND_ROWS()).
    pub rows_sent: u64,
    /// The first AUTO_INCREMENT value this statement generated.
    pub generated_id: Option<u64>,
}

impl Outcome {
    pub fn ok(affected_rows: u64) -> Outcome {
        Outcome {
            ok: Some(OkInfo {
                affected_rows,
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

/// The session state a statement runs in.
pub struct ExecCtx<'a> {
    pub catalog: &'a Arc<Catalog>,
    pub current_db: Option<String>,
    pub env: &'a dyn Env,
    /// Tables held by LOCK TABLES, when in effect: (db, table) → mode.
    pub locked_tables: Option<&'a HashMap<(String, String), LockMode>>,
    pub strict: bool,
    /// The engine for CREATE TABLE without ENGINE=, as stored (`heap`, `btree`).
    pub default_engine: &'a str,
    /// Memory one sort may use before spilling runs to `tmpdir`.
    pub sort_buffer_size: usize,
    pub tmpdir: &'a std::path::Path,
    /// The session's transaction, passed to every table call.
    pub txn: &'a Txn,
}

/// Sets the transaction's read mode for one part of a statement and puts the previous
/// mode back when dropped, so the reads around it (INSERT ... SELECT's source, a
/// derived table inside a FOR UPDATE query) keep their own mode.
pub struct ReadModeGuard<'a> {
    txn: &'a Txn,
    previous: ReadMode,
}

impl<'a> ReadModeGuard<'a> {
    pub fn set(txn: &'a Txn, mode: ReadMode) -> ReadModeGuard<'a> {
        let previous = txn.read_mode();
        txn.set_read_mode(mode);
        ReadModeGuard { txn, previous }
    }
}

impl Drop for ReadModeGuard<'_> {
    fn drop(&mut self) {
        self.txn.set_read_mode(self.previous);
    }
}

/// Locks held for one statement; released on drop. Tables are told apart by the
/// address of their handle, so taking a lock allocates nothing.
#[derive(Default)]
pub struct TableLocks {
    held: Vec<(usize, LockMode, TableLock)>,
}

fn handle_id(t: &Arc<dyn Table>) -> usize {
    Arc::as_ptr(t) as *const () as usize
}

impl<'a> ExecCtx<'a> {
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<dyn Table>> {
        if db.eq_ignore_ascii_case("information_schema") {
            return crate::infoschema::table(self.catalog, name);
        }
        if crate::catalog::is_system_schema(db) {
            return Err(Error::NoSuchTable {
                db: db.to_string(),
                table: name.to_string(),
            });
        }
        self.catalog.table(db, name)
    }

    /// Takes (or checks, under LOCK TABLES) the lock a statement needs on a table.
    pub fn lock_table(
        &self,
        locks: &mut TableLocks,
        db: &str,
        name: &str,
        table: &Arc<dyn Table>,
        mode: LockMode,
    ) -> Result<()> {
        self.lock_tables(locks, &[(db, name, table, mode)])
    }

    /// Takes every lock a statement needs in one go, in (database, table) order, a table
    /// once with the strongest mode asked for.
    pub fn lock_tables(
        &self,
        locks: &mut TableLocks,
        want: &[(&str, &str, &Arc<dyn Table>, LockMode)],
    ) -> Result<()> {
        if let Some(locked) = self.locked_tables {
            for (db, name, _, mode) in want {
                // information_schema is readable under LOCK TABLES (mysqldump reads it).
                if db.eq_ignore_ascii_case("information_schema") {
                    continue;
                }
                match locked.get(&(db.to_string(), name.to_string())) {
                    None => return Err(Error::TableNotLocked(name.to_string())),
                    Some(LockMode::Read) if *mode == LockMode::Write => {
                        return Err(Error::TableLockedForRead(name.to_string()))
                    }
                    _ => {}
                }
            }
            return Ok(());
        }
        let mut order: Vec<usize> = (0..want.len()).collect();
        if want.len() > 1 {
            order.sort_by(|&a, &b| (want[a].0, want[a].1).cmp(&(want[b].0, want[b].1)));
        }
        for i in order {
            let (_, _, table, mode) = want[i];
            let id = handle_id(table);
            let strongest = want
                .iter()
                .filter(|w| handle_id(w.2) == id)
                .map(|w| w.3)
                .max_by_key(|m| *m == LockMode::Write)
                .unwrap_or(mode);
            if locks.held.iter().any(|h| h.0 == id) {
                continue;
            }
            let guard = table.lock(strongest);
            locks.held.push((id, strongest, guard));
        }
        Ok(())
    }
}

/// A bound statement, ready to run with parameter values.
pub enum Plan {
    Select(QueryStatement),
    Insert(InsertPlan),
    Update(UpdatePlan),
    Delete(DeletePlan),
    /// EXPLAIN SELECT.
    Explain(QueryStatement),
    /// DDL, SHOW and the like: interpreted from the AST each time.
    Other(Box<ast::Statement>),
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
        matches!(
            **stmt,
            S::CreateDatabase { .. }
                | S::CreateSchema { .. }
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
    let catalog_version = cx.catalog.version();
    let plan = match &stmt {
        ast::Statement::Query(q) => Plan::Select(Planner::for_text(cx, source).plan_statement(q)?),
        ast::Statement::Insert(ins) => Plan::Insert(dml::plan_insert(ins, cx)?),
        ast::Statement::Update(u) => Plan::Update(dml::plan_update(u, cx)?),
        ast::Statement::Delete(d) => Plan::Delete(dml::plan_delete(d, cx)?),
        ast::Statement::Explain {
            statement,
            analyze: false,
            ..
        } => match statement.as_ref() {
            ast::Statement::Query(q) => {
                Plan::Explain(Planner::for_text(cx, source).plan_statement(q)?)
            }
            other => {
                return Err(Error::NotSupported(format!(
                    "EXPLAIN {}",
                    other.to_string().split_whitespace().next().unwrap_or("")
                )))
            }
        },
        other => Plan::Other(Box::new(other.clone())),
    };
    let columns = match &plan {
        Plan::Select(s) => s.columns().to_vec(),
        _ => vec![],
    };
    Ok(Prepared {
        plan,
        params,
        columns,
        catalog_version,
        db: cx.current_db.clone(),
        statement: stmt,
        source: source.to_string(),
    })
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
    match &p.plan {
        Plan::Select(s) => {
            let rows_sent = crate::run_query::execute(s, cx, params, out)?;
            Ok(Outcome {
                ok: None,
                rows_sent,
                generated_id: None,
            })
        }
        Plan::Insert(i) => dml::execute_insert(i, cx, params),
        Plan::Update(u) => dml::execute_update(u, cx, params),
        Plan::Delete(d) => dml::execute_delete(d, cx, params),
        Plan::Explain(s) => match s.root.as_block() {
            Some(b) if s.subqueries.is_empty() && s.slots == 0 => {
                crate::explain::explain_select(b, cx, out)
            }
            _ => Err(Error::NotSupported(
                "EXPLAIN of a query with subqueries, derived tables or set operations".into(),
            )),
        },
        Plan::Other(stmt) => crate::ddl::execute_other(stmt, cx, out),
    }
}
