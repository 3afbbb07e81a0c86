//! Stored programs: triggers (and, on top of the same interpreter, stored procedures
//! and functions). One interpreter for MySQL's compound statements:
//!
//! * `lex`: tokens with their offsets in the program's text;
//! * `parse`: the compound-statement grammar → the tree of `ast`, with local variables,
//!   labels, cursors and conditions resolved to slots and ids, and every expression and
//!   plain statement kept as SQL text with placeholders for the variables it reads;
//! * `interp`: walks the tree, running SQL through a [`interp::Runner`] (the statement
//!   layer implements it, so this module does not import `statement.rs`);
//! * `triggers`: CREATE/DROP TRIGGER and the per-table compiled triggers DML fires.
//!
//! Definitions live in the catalog (`catalog::triggers`), as text; they are parsed
//! again when a statement that needs them is bound, and the plan keeps the result.

pub mod ast;
pub mod interp;
pub mod lex;
pub mod parse;
pub mod programs;
pub mod triggers;

use crate::catalog::routines::RoutineKind;
use crate::context::{ExecCtx, Outcome};
use strata_types::{Error, QueryOutput, Result};

/// The statement layer's [`interp::Runner`], installed by `statement::prepare` (which
/// every statement passes before anything could run a program): the planner binds
/// stored functions into expressions, below the statement layer, so it cannot name it.
static RUNNER: std::sync::OnceLock<&'static dyn interp::Runner> = std::sync::OnceLock::new();

pub fn install(r: &'static dyn interp::Runner) {
    if RUNNER.get().is_none() {
        let _ = RUNNER.set(r);
    }
}

pub fn runner() -> Result<&'static dyn interp::Runner> {
    RUNNER
        .get()
        .copied()
        .ok_or_else(|| Error::Internal("no statement runner installed".into()))
}

/// The statements on stored programs the session hands to [`execute_ddl`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProgramDdl {
    CreateTrigger,
    DropTrigger,
    Create(RoutineKind),
    Drop(RoutineKind),
    Alter(RoutineKind),
    Call,
}

fn routine_kind(t: Option<&lex::Token>) -> Option<RoutineKind> {
    let t = t?;
    if t.is("PROCEDURE") {
        Some(RoutineKind::Procedure)
    } else if t.is("FUNCTION") {
        Some(RoutineKind::Function)
    } else {
        None
    }
}

/// Which statement on stored programs `sql` is, if any (by its leading words).
pub fn classify(sql: &str) -> Option<ProgramDdl> {
    let toks = lex::tokens(sql).ok()?;
    let first = toks.first()?;
    let mut i = 1;
    if first.is("CREATE") {
        if toks.get(i).is_some_and(|t| t.is("DEFINER")) {
            // DEFINER = user[@host] | CURRENT_USER[()]
            i += 3;
            while toks.get(i).is_some_and(|t| {
                t.kind == lex::Kind::Variable || t.is_punct("(") || t.is_punct(")")
            }) {
                i += 1;
            }
        }
        if toks.get(i).is_some_and(|t| t.is("TRIGGER")) {
            return Some(ProgramDdl::CreateTrigger);
        }
        // CREATE FUNCTION f RETURNS … SONAME is a loadable function: not ours.
        let kind = routine_kind(toks.get(i))?;
        if kind == RoutineKind::Function && toks.iter().any(|t| t.is("SONAME")) {
            return None;
        }
        return Some(ProgramDdl::Create(kind));
    }
    if first.is("DROP") && toks.get(i).is_some_and(|t| t.is("TRIGGER")) {
        return Some(ProgramDdl::DropTrigger);
    }
    if first.is("DROP") {
        return routine_kind(toks.get(i)).map(ProgramDdl::Drop);
    }
    if first.is("ALTER") {
        return routine_kind(toks.get(i)).map(ProgramDdl::Alter);
    }
    if first.is("CALL") {
        return Some(ProgramDdl::Call);
    }
    None
}

/// Runs a statement [`classify`] recognised; a CALL's result sets go to `out`.
pub fn execute_ddl(
    kind: ProgramDdl,
    sql: &str,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    match kind {
        ProgramDdl::CreateTrigger => triggers::create_trigger(sql, cx),
        ProgramDdl::DropTrigger => triggers::drop_trigger(sql, cx),
        ProgramDdl::Create(k) => programs::create_routine(sql, k, cx),
        ProgramDdl::Drop(k) => programs::drop_routine(sql, k, cx),
        ProgramDdl::Alter(k) => programs::alter_routine(sql, k, cx),
        ProgramDdl::Call => programs::call(sql, cx, out),
    }
}

/// The sql_mode a stored program runs under: the one it was created with (MySQL
/// stores it with the program), or the caller's for text this server cannot read.
pub(crate) fn created_mode(text: &str, cx: &crate::context::ExecCtx) -> strata_types::SqlMode {
    strata_types::SqlMode::parse(text).unwrap_or(cx.sql_mode)
}
