//! The context every statement runs in: [`ExecCtx`] (catalog, current database, the
//! session's variables and transaction, LOCK TABLES state, sort memory), the statement's
//! table locks ([`TableLocks`], taken all at once in a fixed (database, table) order so two
//! statements never wait on each other), the per-statement read mode ([`ReadModeGuard`]) and
//! what a statement leaves behind for the session ([`Outcome`]). Every stage below the
//! statement dispatcher imports this module; it imports none of them.

use crate::catalog::Catalog;
use crate::expr::Env;
use sqlparser::ast;
use std::collections::HashMap;
use std::sync::Arc;
use strata_engine::{LockMode, LockWait, ReadMode, Table, TableLock, Txn};
use strata_types::{Error, OkInfo, Result};

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
    /// The statement's `sql_mode` (a stored program's own, inside one).
    pub sql_mode: strata_types::SqlMode,
    /// The engine for CREATE TABLE without ENGINE=, as stored (`heap`, `btree`).
    pub default_engine: &'a str,
    /// Memory one sort may use before spilling runs to `tmpdir`.
    pub sort_buffer_size: usize,
    /// Memory one materialised derived table or CTE may use before the rest of its
    /// rows go to a file in `tmpdir` (`tmp_table_size`).
    pub tmp_table_size: usize,
    pub tmpdir: &'a std::path::Path,
    /// The session's transaction, passed to every table call.
    pub txn: &'a Txn,
    /// The session's metadata locks: DDL takes its exclusive locks through it.
    pub mdl: &'a crate::mdl::MdlContext,
    /// Set for a statement a stored program runs: what the statement that invoked the
    /// program holds and uses.
    pub invoker: Option<&'a Invoker>,
    /// The session's TEMPORARY tables, which hide base tables of the same name.
    pub temp: &'a crate::catalog::temporary::TempTables,
}

static NO_INVOKER: Invoker = Invoker {
    busy: Vec::new(),
    depth: 0,
    routines: Vec::new(),
    function: false,
};

/// What a statement inside a trigger (or other stored program) inherits from the
/// statement that invoked it.
#[derive(Default, Clone)]
pub struct Invoker {
    /// `(db, table)` the invoking statements change: a program may not change them
    /// too (1442).
    pub busy: Vec<(String, String)>,
    /// How many programs deep this is.
    pub depth: usize,
    /// The stored routines being run, outermost first: (db, name, is a function), for
    /// the recursion limits (1424, 1456).
    pub routines: Vec<(String, String, bool)>,
    /// Inside a stored function: statements that change rows are refused (Strata does
    /// not know which tables the calling statement uses, so it could not give 1442).
    pub function: bool,
}

/// The triggers of a table a DML statement changes, as its plan carries them; the
/// implementation is `crate::routines::triggers`.
pub trait RowTriggers: Send + Sync {
    /// Whether any trigger of this timing and event exists.
    fn has(&self, timing: Timing, event: Event) -> bool;
    /// Fires the triggers of `timing` and `event` for one row: `old` for UPDATE and
    /// DELETE, `new` for INSERT and UPDATE (a BEFORE trigger may change it).
    /// `locks` are the invoking statement's table locks.
    fn fire(
        &self,
        timing: Timing,
        event: Event,
        old: Option<&[strata_types::Value]>,
        new: Option<&mut Vec<strata_types::Value>>,
        cx: &ExecCtx,
        locks: &TableLocks,
    ) -> Result<()>;
}

pub use crate::catalog::triggers::{Event, Timing};

/// A stored function as an expression holds it (`crate::expr::StoredCall`).
pub struct StoredFunctionCall(pub Arc<dyn CallFunction>);

/// Runs a stored function (implemented by `crate::routines::programs`).
pub trait CallFunction: Send + Sync {
    fn call(&self, args: Vec<strata_types::Value>, cx: &ExecCtx) -> Result<strata_types::Value>;
}

/// What the layers below the statement dispatcher need of stored programs, installed
/// by it (`statement::prepare`): binding a call of a stored function.
pub trait ProgramHooks: Sync {
    /// The stored function `[db.]name` for a call with `args` arguments, with its
    /// result type; None when there is none (then the name is an unknown function).
    fn bind_function(
        &self,
        cx: &ExecCtx,
        db: Option<&str>,
        name: &str,
        args: usize,
    ) -> Result<Option<(Arc<dyn CallFunction>, strata_types::ColumnDef)>>;
}

static HOOKS: std::sync::OnceLock<&'static dyn ProgramHooks> = std::sync::OnceLock::new();

/// Installs the hooks (once; later calls change nothing).
pub fn install_program_hooks(h: &'static dyn ProgramHooks) {
    if HOOKS.get().is_none() {
        let _ = HOOKS.set(h);
    }
}

pub fn program_hooks() -> Option<&'static dyn ProgramHooks> {
    HOOKS.get().copied()
}

/// Sets the transaction's read mode for one part of a statement and puts the previous
/// mode back when dropped, so the reads around it (INSERT ... SELECT's source, a
/// derived table inside a FOR UPDATE query) keep their own mode.
pub struct ReadModeGuard<'a> {
    txn: &'a Txn,
    previous: ReadMode,
    previous_wait: LockWait,
}

impl<'a> ReadModeGuard<'a> {
    pub fn set(txn: &'a Txn, mode: ReadMode) -> ReadModeGuard<'a> {
        Self::set_locking(txn, mode, LockWait::Wait)
    }

    /// A locking read with NOWAIT or SKIP LOCKED (`wait`).
    pub fn set_locking(txn: &'a Txn, mode: ReadMode, wait: LockWait) -> ReadModeGuard<'a> {
        let previous = txn.read_mode();
        let previous_wait = txn.lock_wait();
        txn.set_read_mode(mode);
        txn.set_lock_wait(wait);
        ReadModeGuard {
            txn,
            previous,
            previous_wait,
        }
    }
}

impl Drop for ReadModeGuard<'_> {
    fn drop(&mut self) {
        self.txn.set_read_mode(self.previous);
        self.txn.set_lock_wait(self.previous_wait);
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

thread_local! {
    /// The table locks the statements running on this thread hold (a stored program's
    /// statements run inside the statement that invoked it, on its thread): a table
    /// lock is not re-entrant, so a nested statement does not take one its invoker
    /// holds, and may not write a table its invoker only reads (1442).
    static THREAD_HELD: std::cell::RefCell<Vec<(usize, LockMode)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl Drop for TableLocks {
    fn drop(&mut self) {
        // Only real locks (an engine with row locks hands out none) were recorded.
        if !self.held.iter().any(|x| x.2 .0.is_some()) {
            return;
        }
        THREAD_HELD.with(|h| {
            let mut h = h.borrow_mut();
            for (id, mode, _) in self.held.iter().filter(|x| x.2 .0.is_some()) {
                if let Some(i) = h.iter().rposition(|x| x.0 == *id && x.1 == *mode) {
                    h.remove(i);
                }
            }
        });
    }
}

impl<'a> ExecCtx<'a> {
    /// The statement's context with another view of the session (see
    /// `statements/dml.rs`'s strict-warning overlay, `expr/env_overlay.rs`); IGNORE's
    /// lenient context starts from it too.
    pub fn with_env(&self, env: &'a dyn crate::expr::Env) -> ExecCtx<'a> {
        ExecCtx {
            catalog: self.catalog,
            current_db: self.current_db.clone(),
            env,
            locked_tables: self.locked_tables,
            strict: self.strict,
            sql_mode: self.sql_mode,
            default_engine: self.default_engine,
            sort_buffer_size: self.sort_buffer_size,
            tmp_table_size: self.tmp_table_size,
            tmpdir: self.tmpdir,
            txn: self.txn,
            mdl: self.mdl,
            invoker: self.invoker,
            temp: self.temp,
        }
    }

    /// The session's time zone, seconds east of UTC (named zones, which the server
    /// does not know, count as UTC).
    pub fn time_zone_offset(&self) -> i64 {
        self.env
            .system_variable("time_zone", false)
            .ok()
            .and_then(|v| crate::expr::datetime::functions::zone_offset(&v.to_text()))
            .unwrap_or(0)
    }

    pub fn table(&self, db: &str, name: &str) -> Result<Arc<dyn Table>> {
        use crate::catalog::systables;
        if db.eq_ignore_ascii_case("information_schema") {
            if let Some(t) = systables::SysTable::in_infoschema(name) {
                return Ok(systables::open(t, self.env.account_rows()));
            }
            let tz_offset = self.time_zone_offset();
            return crate::catalog::infoschema::table(
                self.catalog,
                name,
                self.env.account_rows(),
                tz_offset,
            );
        }
        if db == systables::SCHEMA {
            if let Some(t) = systables::SysTable::in_mysql(name) {
                return Ok(systables::open(t, self.env.account_rows()));
            }
        }
        if crate::catalog::is_system_schema(db) {
            return Err(Error::NoSuchTable {
                db: db.to_string(),
                table: name.to_string(),
            });
        }
        if let Some(t) = self.temp.get(db, name) {
            return Ok(t);
        }
        self.catalog.table(db, name)
    }

    /// The session's temporary table `db.name`, if it has one.
    pub fn temp_table(&self, db: &str, name: &str) -> Option<Arc<dyn Table>> {
        self.temp.get(db, name)
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
            for (db, name, table, mode) in want {
                // information_schema is readable under LOCK TABLES (mysqldump reads it).
                if db.eq_ignore_ascii_case("information_schema") {
                    continue;
                }
                // A session's temporary tables need no LOCK TABLES entry (MySQL).
                if self.temp.holds(table) {
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
        let mut order: Vec<usize> = Vec::with_capacity(want.len());
        for (i, w) in want.iter().enumerate() {
            let id = handle_id(w.2);
            let held = THREAD_HELD.with(|h| {
                let h = h.borrow();
                if h.is_empty() {
                    return None;
                }
                h.iter()
                    .filter(|x| x.0 == id)
                    .map(|x| x.1)
                    .max_by_key(|m| *m == LockMode::Write)
            });
            match held {
                None => order.push(i),
                Some(LockMode::Read) if w.3 == LockMode::Write => {
                    return Err(Error::CantUpdateUsedTable(w.1.to_string()))
                }
                Some(_) => {}
            }
        }
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
            // DDL may have replaced the table while this statement waited: its plan
            // names the old definition and its handle the old files.
            if self.catalog.is_retired(table) {
                return Err(Error::TableDefChanged);
            }
            if guard.0.is_some() {
                THREAD_HELD.with(|h| h.borrow_mut().push((id, strongest)));
            }
            locks.held.push((id, strongest, guard));
        }
        Ok(())
    }
}

impl<'a> ExecCtx<'a> {
    /// A copy to run a statement in (which may change its current database).
    pub fn reborrow<'b>(&'b self) -> ExecCtx<'b> {
        ExecCtx {
            current_db: self.current_db.clone(),
            invoker: self.invoker,
            ..self.nested("", &NO_INVOKER)
        }
    }

    /// This context under a stored program's sql_mode (`mode`, with `env` the overlay
    /// that answers `@@sql_mode` with it): its statements run as they were created.
    pub fn under_program_mode<'b>(
        &'b self,
        env: &'b dyn crate::expr::Env,
        mode: strata_types::SqlMode,
    ) -> ExecCtx<'b> {
        ExecCtx {
            env,
            sql_mode: mode,
            strict: mode.strict(),
            ..self.reborrow()
        }
    }

    /// The context of a statement a stored program of database `db` runs, on behalf of
    /// `invoker`.
    pub fn nested<'b>(&'b self, db: &str, invoker: &'b Invoker) -> ExecCtx<'b> {
        ExecCtx {
            current_db: Some(db.to_string()),
            invoker: Some(invoker),
            ..self.with_env(self.env)
        }
    }
}

/// `[db.]table` with the current database filled in (1046 without one).
pub fn resolve_table(cx: &ExecCtx, name: &ast::ObjectName) -> Result<(String, String)> {
    let parts = crate::parse::object_name_parts(name);
    match parts.as_slice() {
        [t] => Ok((
            cx.current_db.clone().ok_or(Error::NoDatabaseSelected)?,
            t.clone(),
        )),
        [d, t] => Ok((d.clone(), t.clone())),
        _ => Err(Error::Syntax(name.to_string())),
    }
}
