//! The SQL layer: parse with sqlparser-rs, bind names to the catalog, plan, optimise,
//! execute against the engine API. One folder per stage (`docs/architecture.md` draws
//! them); the folders form no cycle, and everything but the API below is private to the
//! crate, so the session cannot lean on internals.
//!
//! The life of `SELECT c FROM sbtest1 WHERE id = ?` (prepared by sysbench):
//! 1. `session` calls [`text::number_placeholders`] and [`parse()`] once, at
//!    COM_STMT_PREPARE, then [`prepare()`], which for a query calls the planner
//!    (`planner::query::Planner`, `planner::block::plan_block`): the FROM clause becomes a
//!    `bind::Scope`, `id = ?1` is bound to `Cmp(Eq, Column(0), Param(0))` by
//!    `bind::Binder`, and the optimizer (`optimizer::access`) sees an equality on all
//!    columns of the unique PRIMARY index (`eq_ref`).
//! 2. Each COM_STMT_EXECUTE runs [`execute()`] → `exec::executor::execute`, which takes
//!    the statement's table locks ([`ExecCtx::lock_tables`]), then
//!    `exec::block::execute_block`: it evaluates the key from the parameter, encodes it
//!    with `strata_types::keycode`, calls `Table::index_scan` with that one-key range,
//!    re-checks the WHERE conjuncts on the row, projects `c`, and streams the row into the
//!    [`strata_types::QueryOutput`] the wire layer gave it.
//!
//! Text-protocol statements take the same path through a plan cache keyed by
//! [`text::normalize`]d text, so parsing is paid once per statement shape.

pub(crate) mod bind;
pub mod catalog;
pub(crate) mod constraints;
pub(crate) mod context;
pub(crate) mod exec;
pub(crate) mod expr;
pub mod files;
pub(crate) mod hash_tables;
pub mod mdl;
pub(crate) mod optimizer;
pub(crate) mod parse;
pub(crate) mod plan;
pub(crate) mod planner;
pub mod privileges;
pub(crate) mod routines;
pub(crate) mod row_log;
pub(crate) mod statement;
pub(crate) mod statements;
pub(crate) mod temp_rows;

/// Statement text as the session handles it before (or instead of) parsing: the first word,
/// `/*!NNNNN */` comments, splitting multi-statements, plan-cache normalisation and
/// placeholders, the word list SHOW and SET statements are classified by.
pub mod text {
    pub use crate::parse::lex::{
        expand_version_comments, first_word, is_diagnostics_statement, normalize,
        number_placeholders, split_statements, unnumber_placeholders, unwrap_executable_comment,
    };
    pub use crate::parse::mode_text::{to_default_mode, ModeText};
    pub use crate::statements::show::words;
}

pub use catalog::engines::{engine_display, engine_name};
pub use expr::like;
pub use parse::parse;
pub use routines::{classify as stored_program_statement, ProgramDdl};
pub use statement::execute_stored_program_ddl;
pub use statements::replicated_rows::{apply_row_event, RowEvent, RowEventKind, RowImage};
pub use statements::show::execute_show;

pub use catalog::processes::{ProcessRow, ProcessSource};
pub use catalog::temporary::TempTables;
pub use catalog::Catalog;
pub use statements::temporary::binlog_text as temporary_binlog_text;

use strata_types::{Error, Result, Value};

/// Evaluates a constant expression given as SQL text (the right side of SET).
pub fn eval_constant(expr_sql: &str, env: &dyn Env) -> Result<Value> {
    let stmts = parse::parse(&format!("SELECT {expr_sql}"))?;
    let [sqlparser::ast::Statement::Query(q)] = stmts.as_slice() else {
        return Err(Error::Syntax(expr_sql.to_string()));
    };
    let sqlparser::ast::SetExpr::Select(sel) = q.body.as_ref() else {
        return Err(Error::Syntax(expr_sql.to_string()));
    };
    let [sqlparser::ast::SelectItem::UnnamedExpr(e)] = sel.projection.as_slice() else {
        return Err(Error::Syntax(expr_sql.to_string()));
    };
    let scope = bind::Scope::default();
    let planner = VariablesOnly(env);
    let benv = bind::BindEnv {
        planner: &planner,
        parent: None,
        correlated: Default::default(),
    };
    let (x, _, _) = bind::Binder::in_env(&scope, "field list", &benv).bind(e)?;
    x.eval(&[], &expr::EvalCtx::new(&[], env))
}
pub use context::{ExecCtx, Outcome};
pub use statement::{execute, prepare, ExplainPlan, Plan, Prepared};

/// The columns of a table as a result set describes them (COM_FIELD_LIST).
pub fn table_columns(
    db: &str,
    table: &str,
    catalog: &Catalog,
) -> Result<Vec<strata_types::ColumnMeta>> {
    let t = catalog.table(db, table)?;
    let def = t.def().clone();
    let mut scope = bind::Scope::default();
    scope.push(table.to_string(), db.to_string(), t);
    let st = &scope.tables[0];
    Ok(def
        .columns
        .iter()
        .map(|c| bind::column_meta(st, c, &c.name))
        .collect())
}

/// What a constant expression binds in: variables typed by their values (so `SET @w =
/// @v + 1` adds integers when `@v` holds one), and no subqueries.
struct VariablesOnly<'a>(&'a dyn Env);

impl bind::SubqueryPlanner for VariablesOnly<'_> {
    fn plan_subquery(
        &self,
        _: &sqlparser::ast::Query,
        _: &bind::Outer,
    ) -> Result<bind::PlannedSubquery> {
        Err(Error::NotSupported("a subquery in the field list".into()))
    }
    fn table_columns(&self, _: &sqlparser::ast::ObjectName) -> Option<Vec<String>> {
        None
    }
    fn check_session_scope(&self, name: &str) -> Result<()> {
        self.0.check_session_scope(name)
    }
    fn variable_value(&self, name: &str, system: Option<bool>) -> Option<Value> {
        match system {
            Some(global) => self.0.system_variable(name, global).ok(),
            None => Some(self.0.user_variable(name)),
        }
    }
}
pub use expr::functions::rand::{RandState, StatementRandom};
pub use expr::{Env, UserLockCall, WarnLevel, Warning};

/// The version string clients see: MySQL 8.0-compatible, since drivers branch on it.
pub const SERVER_VERSION: &str = "8.0.36-Strata";
