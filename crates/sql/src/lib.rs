//! The SQL layer: parse with sqlparser-rs, bind names to the catalog, plan access paths,
//! execute against the engine API.
//!
//! The life of `SELECT c FROM sbtest1 WHERE id = ?` (prepared by sysbench):
//! 1. `session` calls [`lex::number_placeholders`] and [`parse::parse`] once, at
//!    COM_STMT_PREPARE, then [`exec::prepare`], which for a query calls
//!    [`query::Planner`] and [`select::plan_block`]: the FROM clause becomes a
//!    [`bind::Scope`], `id = ?1` is bound to `Cmp(Eq, Column(0), Param(0))` by
//!    [`bind::Binder`], and the access-path chooser sees an equality on all columns of
//!    the unique PRIMARY index (`eq_ref`).
//! 2. Each COM_STMT_EXECUTE runs [`exec::execute`] → [`run_query::execute`], which takes
//!    the statement's table locks ([`exec::ExecCtx::lock_tables`]), then
//!    [`select::execute_block`]: it evaluates the key from the parameter, encodes it with `strata_types::keycode`, calls `Table::index_scan` with
//!    that one-key range, re-checks the WHERE conjuncts on the row, projects `c`, and
//!    streams the row into the [`strata_types::QueryOutput`] the wire layer gave it.
//!
//! Text-protocol statements take the same path through a plan cache keyed by
//! [`lex::normalize`]d text, so parsing is paid once per statement shape.

pub mod aggregate;
pub mod bind;
pub mod bind_char;
pub mod bind_date;
pub mod catalog;
pub mod convert;
pub mod datefmt;
pub mod datefns;
pub mod ddl;
pub mod decorrelate;
pub mod derived;
pub mod dml;
pub mod exec;
pub mod explain;
pub mod expr;
pub mod from_clause;
pub mod functions;
pub mod hash_join;
pub mod infoschema;
pub mod interval;
pub mod item_names;
pub mod join_commas;
pub mod join_exec;
pub mod join_groups;
pub mod keys;
pub mod lex;
pub mod parse;
pub mod query;
pub mod rewrite;
pub mod rowsource;
pub mod run_query;
pub mod select;
pub mod show;
pub mod sort;
pub mod stats;
pub mod temporal;
pub mod token_rewrite;
pub mod window;

pub use catalog::Catalog;

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
    fn variable_value(&self, name: &str, system: Option<bool>) -> Option<Value> {
        match system {
            Some(global) => self.0.system_variable(name, global).ok(),
            None => Some(self.0.user_variable(name)),
        }
    }
}
pub use exec::{execute, prepare, ExecCtx, Outcome, Plan, Prepared};
pub use expr::{Env, WarnLevel, Warning};

/// The version string clients see: MySQL 8.0-compatible, since drivers branch on it.
pub const SERVER_VERSION: &str = "8.0.36-Strata";
