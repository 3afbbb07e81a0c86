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
}

static NO_INVOKER: Invoker = Invoker {
    held: Vec::new(),
    busy: Vec::new(),
    depth: 0,
};

/// What a statement inside a trigger (or other stored program) inherits from the
/// statement that invoked it.
#[derive(Default)]
pub struct Invoker {
    /// Table handles the invoking statements hold locked: not locked again (a MyISAM
    /// table's lock is not re-entrant).
    pub held: Vec<usize>,
    /// `(db, table)` the invoking statements change: a program may not change them
    /// too (1442).
    pub busy: Vec<(String, String)>,
    /// How many programs deep this is.
    pub depth: usize,
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

impl TableLocks {
    /// The handles locked, as [`Invoker::held`] lists them.
    pub fn handles(&self) -> impl Iterator<Item = usize> + '_ {
        self.held.iter().map(|h| h.0)
    }
}

impl<'a> ExecCtx<'a> {
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<dyn Table>> {
        if db.eq_ignore_ascii_case("information_schema") {
            return crate::catalog::infoschema::table(self.catalog, name);
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
        let mut order: Vec<usize> = (0..want.len())
            .filter(|&i| {
                self.invoker
                    .is_none_or(|inv| !inv.held.contains(&handle_id(want[i].2)))
            })
            .collect();
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

    /// The context of a statement a stored program of database `db` runs, on behalf of
    /// `invoker`.
    pub fn nested<'b>(&'b self, db: &str, invoker: &'b Invoker) -> ExecCtx<'b> {
        ExecCtx {
            catalog: self.catalog,
            current_db: Some(db.to_string()),
            env: self.env,
            locked_tables: self.locked_tables,
            strict: self.strict,
            default_engine: self.default_engine,
            sort_buffer_size: self.sort_buffer_size,
            tmp_table_size: self.tmp_table_size,
            tmpdir: self.tmpdir,
            txn: self.txn,
            mdl: self.mdl,
            invoker: Some(invoker),
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
