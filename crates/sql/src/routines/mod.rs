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
pub mod triggers;

use crate::context::{ExecCtx, Outcome};
use strata_types::Result;

/// The statements on stored programs the session hands to [`execute_ddl`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProgramDdl {
    CreateTrigger,
    DropTrigger,
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
        return None;
    }
    if first.is("DROP") && toks.get(i).is_some_and(|t| t.is("TRIGGER")) {
        return Some(ProgramDdl::DropTrigger);
    }
    None
}

/// Runs a statement [`classify`] recognised.
pub fn execute_ddl(kind: ProgramDdl, sql: &str, cx: &ExecCtx) -> Result<Outcome> {
    match kind {
        ProgramDdl::CreateTrigger => triggers::create_trigger(sql, cx),
        ProgramDdl::DropTrigger => triggers::drop_trigger(sql, cx),
    }
}
