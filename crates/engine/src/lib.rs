//! The storage-engine API: the one trait pair every engine implements, as MySQL's
//! `handler` is for MyISAM and InnoDB. The SQL layer reaches storage only through it.
//!
//! An [`Engine`] creates, opens and drops tables; an open [`Table`] scans, looks rows up
//! through an index by key range, and inserts, updates and deletes rows. Rows cross the
//! boundary as slices of [`Value`] in the order of [`TableDef::columns`]; index ranges
//! cross it as byte ranges in the order-preserving encoding of
//! [`strata_types::keycode`], so engines never interpret SQL.
//!
//! Every data call carries the session's [`Txn`]: transactional engines (`btree`) attach
//! their per-transaction state to it on first use and read its isolation level and
//! per-statement [`ReadMode`]; non-transactional engines (`heap`) ignore it, as MyISAM
//! ignores BEGIN and ROLLBACK.
//!
//! The tour of a point select, from the engine's side: the executor calls
//! [`Table::lock`] for a read lock, builds the key `[1][1][00..07]` for `id = 7` with
//! `keycode::encode_prefix`, calls [`Table::index_scan`] with the range `[key, successor)`,
//! and receives the one row through the callback; the guard drops at statement end.

mod txn;

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

pub use txn::{
    xa_xid_bytes, xa_xid_parts, Interrupt, Isolation, LockWait, LoggedRows, Participant, ReadMode,
    RowMark, StopReason, Txn,
};

pub use strata_types::{Error, Result, TableDef, Value};

/// Identifies a row inside one table for the duration of a statement (for the `heap`
/// engine, for as long as the row lives: it is the row's offset in the data file; the
/// `btree` engine finds rows by primary key and passes an opaque number).
pub type RowId = u64;

/// What a scan callback tells the engine to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Table-lock strength, as MySQL's `thr_lock`: readers share, a writer is exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    Read,
    Write,
}

/// A held table lock; released when dropped. Engines without table locks return an
/// empty guard.
pub struct TableLock(pub Option<Box<dyn std::any::Any + Send>>);

impl TableLock {
    pub fn none() -> TableLock {
        TableLock(None)
    }
}

/// A range of encoded index keys (see [`strata_types::keycode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRange {
    pub start: Bound<Vec<u8>>,
    pub end: Bound<Vec<u8>>,
}

impl KeyRange {
    pub fn all() -> KeyRange {
        KeyRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
        }
    }

    /// Every key that starts with `prefix` (an equality lookup on leading columns).
    pub fn prefix(prefix: Vec<u8>) -> KeyRange {
        let end = match strata_types::keycode::prefix_successor(&prefix) {
            Some(s) => Bound::Excluded(s),
            None => Bound::Unbounded,
        };
        KeyRange {
            start: Bound::Included(prefix),
            end,
        }
    }

    /// True when `key` lies inside the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        let after_start = match &self.start {
            Bound::Unbounded => true,
            Bound::Included(s) => key >= s.as_slice(),
            Bound::Excluded(s) => key > s.as_slice(),
        };
        let before_end = match &self.end {
            Bound::Unbounded => true,
            Bound::Included(e) => key <= e.as_slice(),
            Bound::Excluded(e) => key < e.as_slice(),
        };
        after_start && before_end
    }
}

/// Figures SHOW TABLE STATUS and the planner read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableStatus {
    pub rows: u64,
    pub data_length: u64,
    pub index_length: u64,
    pub data_free: u64,
    /// The next AUTO_INCREMENT value.
    pub auto_increment: u64,
}

/// The result of an insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inserted {
    pub row_id: RowId,
    /// The value the engine generated for the AUTO_INCREMENT column, if it generated one.
    pub generated_id: Option<u64>,
}

/// A row callback: receives the row id and the full row; returns whether to go on.
pub type RowFn<'a> = dyn FnMut(RowId, &[Value]) -> Result<Flow> + 'a;

pub trait Engine: Send + Sync {
    /// The stored name, `heap` or `btree`.
    fn name(&self) -> &'static str;

    /// Creates the files of a new, empty table. `path` is the file stem
    /// (`<datadir>/<db>/<table>`); the engine adds its own extensions.
    fn create_table(&self, def: &TableDef, path: &Path) -> Result<()>;

    /// Opens an existing table. A missing, truncated or corrupt file is an error that
    /// names the table, never a panic.
    fn open_table(&self, def: Arc<TableDef>, path: &Path) -> Result<Arc<dyn Table>>;

    /// Removes the files of a table that is no longer open.
    fn drop_table(&self, def: &TableDef, path: &Path) -> Result<()>;

    /// Writes every cached change to the files (shutdown, FLUSH TABLES).
    fn flush(&self) -> Result<()>;

    /// The file stems of every table this engine keeps in a registry of its own (the
    /// `btree` engine's space directory), so the catalog — the one commit point of DDL
    /// (`docs/format/catalog.md`) — can drop at startup those it does not reference (a
    /// crash in the middle of CREATE TABLE or ALTER TABLE). Engines without a registry
    /// return none.
    fn table_files(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// True when the engine reads rows written before an instant ADD COLUMN: rows
    /// shorter than the table, whose missing trailing columns take the defaults the
    /// table's [`strata_types::TableDef::instant`] records (the `btree` engine's record
    /// format, `docs/format/btree.md`). ALTER TABLE adds columns instantly only then.
    fn reads_instant_columns(&self) -> bool {
        false
    }

    /// Human-readable cache sizes for the startup banner, e.g. `key cache 8 MiB`.
    fn describe(&self) -> String;

    /// Counters for SHOW STATUS, named as MySQL names them (e.g. `Key_reads`).
    fn status_vars(&self) -> Vec<(String, u64)> {
        Vec::new()
    }

    /// True when the engine has transactions (COMMIT and ROLLBACK mean something, and
    /// so do savepoints).
    fn transactional(&self) -> bool {
        false
    }

    /// START TRANSACTION WITH CONSISTENT SNAPSHOT: a transactional engine joins `txn`
    /// and takes its read view now rather than at the first read. Returns false when it
    /// took none because the isolation level has no transaction-wide snapshot (InnoDB
    /// ignores the clause outside REPEATABLE READ, with a warning).
    fn start_consistent_snapshot(&self, _txn: &Txn) -> Result<bool> {
        Ok(true)
    }

    /// The xids of the transactions a crash left prepared ([`Participant::prepare`]
    /// with no commit or rollback after it). The server asks the coordinator (the
    /// binary log) about each and calls [`Engine::resolve_prepared`] before any client
    /// connects. Engines without two-phase commit have none.
    fn prepared_xids(&self) -> Vec<u64> {
        Vec::new()
    }

    /// Commits each transaction [`Engine::prepared_xids`] listed for which `commit`
    /// says true and rolls back the others; returns (committed, rolled back).
    fn resolve_prepared(&self, _commit: &dyn Fn(u64) -> bool) -> Result<(usize, usize)> {
        Ok((0, 0))
    }

    /// Whether the engine implements XA ([`crate::Participant::prepare_xa`]): SHOW
    /// ENGINES' XA column.
    fn supports_xa(&self) -> bool {
        false
    }

    /// The XA transactions a crash left prepared ([`crate::Participant::prepare_xa`]),
    /// each as its xid ([`crate::txn::xa_xid_bytes`]) and its live participant (rows
    /// still locked, changes still invisible to others), handed over once: the server
    /// keeps them for XA RECOVER / XA COMMIT / XA ROLLBACK.
    fn take_recovered_xa(&self) -> Vec<(Vec<u8>, Arc<dyn crate::Participant>)> {
        Vec::new()
    }

    /// The server variables this engine owns (e.g. `innodb_buffer_pool_size`), with
    /// their current values, for SHOW VARIABLES and `@@name`.
    fn variables(&self) -> Vec<EngineVar> {
        Vec::new()
    }

    /// SET GLOBAL of one of [`Engine::variables`]. A variable that is not dynamic gives
    /// [`Error::VariableReadOnly`]; a bad value [`Error::WrongValueForVariable`].
    fn set_variable(&self, name: &str, _value: &Value) -> Result<()> {
        Err(Error::UnknownVariable(name.to_string()))
    }
}

/// A server variable owned by an engine.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineVar {
    pub name: &'static str,
    pub value: Value,
    /// False: set only at startup; SET GLOBAL gives error 1238.
    pub dynamic: bool,
}

/// How an online index build runs (ALTER TABLE … ADD INDEX, ALGORITHM=INPLACE).
#[derive(Clone)]
pub struct IndexBuildOptions {
    /// Where the build's sorted runs spill (`tmpdir`).
    pub tmpdir: std::path::PathBuf,
    /// The statement's stop signal (KILL QUERY): the build checks it as it reads.
    pub interrupt: Interrupt,
}

/// Indexes being added to an open table in place while other connections keep reading
/// and writing it, as InnoDB's online ADD INDEX. The caller holds the table's metadata
/// lock exclusively when it asks for the build ([`Table::begin_index_build`]) and when
/// it calls [`IndexBuild::finish`], and an upgradable shared one in between (during
/// [`IndexBuild::load`]). Dropping the build before `finish` abandons it: the table is as
/// it was (pages the build wrote are left unreferenced).
pub trait IndexBuild: Send {
    /// Reads the table once, sorts the new indexes' entries in bounded memory and loads
    /// them bottom-up; changes other connections make meanwhile are logged. Returns the
    /// rows read. A duplicate for a new UNIQUE index is [`Error::DuplicateKey`].
    fn load(&mut self) -> Result<u64>;

    /// Applies the logged changes and records the new indexes in the table's files,
    /// durably. After it the caller's catalog write (the commit point) switches the
    /// table to the definition with the new indexes; until then the old definition
    /// ignores them.
    fn finish(&mut self) -> Result<()>;
}

pub trait Table: Send + Sync {
    fn def(&self) -> &Arc<TableDef>;

    /// Takes the table lock for one statement (or a LOCK TABLES span). Blocks until
    /// granted.
    fn lock(&self, mode: LockMode) -> TableLock;

    /// Calls `f` for every row, in storage order, until it returns [`Flow::Stop`].
    /// Which version of each row is seen follows `txn` (its isolation and read mode).
    fn scan(&self, txn: &Txn, f: &mut RowFn) -> Result<()>;

    /// Calls `f` for every row whose key in index `index` (position in
    /// [`TableDef::indexes`]) lies in `range`, in key order (descending if `reverse`).
    fn index_scan(
        &self,
        txn: &Txn,
        index: usize,
        range: &KeyRange,
        reverse: bool,
        f: &mut RowFn,
    ) -> Result<()>;

    /// [`Table::scan`] for a read that needs only the columns `cols` marks (by position
    /// in [`TableDef::columns`]; positions past its end are needed): the engine may hand
    /// the other columns to `f` as NULL instead of decoding them. The rows, their order
    /// and their visibility are [`Table::scan`]'s. An engine that decodes whole rows
    /// anyway keeps this default, which reads every column.
    fn scan_columns(&self, txn: &Txn, cols: &[bool], f: &mut RowFn) -> Result<()> {
        let _ = cols;
        self.scan(txn, f)
    }

    /// [`Table::index_scan`] for a read that needs only the columns `cols` marks (see
    /// [`Table::scan_columns`]).
    fn index_scan_columns(
        &self,
        txn: &Txn,
        index: usize,
        range: &KeyRange,
        reverse: bool,
        cols: &[bool],
        f: &mut RowFn,
    ) -> Result<()> {
        let _ = cols;
        self.index_scan(txn, index, range, reverse, f)
    }

    /// Whether [`Table::index_scan_columns`] of secondary index `index` needing only the
    /// columns `cols` marks can be answered from the index entries, without reading the
    /// rows (an index-only, "covering" read: EXPLAIN's `Using index`). The answer is a
    /// promise about cost, not about rows: the rows are the same either way. The
    /// default, for an engine that always reads the row, is false.
    fn covers(&self, index: usize, cols: &[bool]) -> bool {
        let _ = (index, cols);
        false
    }

    /// Inserts a row, checking every unique index. A NULL in the AUTO_INCREMENT column
    /// is replaced by the next value; a larger explicit value moves the counter. (An
    /// explicit 0 is stored as 0: the SQL layer makes it NULL first unless sql_mode
    /// has NO_AUTO_VALUE_ON_ZERO, as MySQL's handler sees it.)
    /// On a duplicate key nothing is changed and [`Error::DuplicateKey`] is returned.
    fn insert(&self, txn: &Txn, row: &mut Vec<Value>) -> Result<Inserted>;

    /// Reserves `n` consecutive AUTO_INCREMENT values for a statement, InnoDB's way
    /// (`ha_innobase::get_auto_increment` under `innodb_autoinc_lock_mode` 1 or 2): the
    /// first is the larger of the counter and `at_least`, and the counter moves past the
    /// `n` values at once, so values a statement reserved but did not use are lost (the
    /// gaps MySQL leaves). `n = 0` only raises the counter to `at_least`. `None`: the
    /// engine reserves nothing (MyISAM-style: the next value is always the largest
    /// stored plus one) and [`Table::insert`] generates each value itself.
    fn reserve_auto_increment(&self, n: u64, at_least: u64) -> Option<u64> {
        let _ = (n, at_least);
        None
    }

    /// Replaces row `id` (whose current contents are `old`) by `new`, maintaining
    /// every index; returns the row's id afterwards (it may move).
    fn update(&self, txn: &Txn, id: RowId, old: &[Value], new: &[Value]) -> Result<RowId>;

    /// Deletes row `id`, whose current contents are `old`.
    fn delete(&self, txn: &Txn, id: RowId, old: &[Value]) -> Result<()>;

    /// Starts adding the indexes of `new_def` past this table's own (same columns, same
    /// leading indexes; the new ones secondary) in place and online. None: this engine
    /// cannot, and the caller copies the table instead. Called under the exclusive
    /// metadata lock, so no transaction that changed the table is still open.
    fn begin_index_build(
        &self,
        new_def: &TableDef,
        opts: &IndexBuildOptions,
    ) -> Option<Result<Box<dyn IndexBuild>>> {
        let _ = (new_def, opts);
        None
    }

    /// Removes every row and resets the AUTO_INCREMENT counter (DDL: not undone by
    /// ROLLBACK).
    fn truncate(&self) -> Result<()>;

    /// CHECK TABLE: verifies the table's structures (for `btree`: page checksums, key
    /// order, and that every secondary index agrees with the clustered index). `Ok(())`
    /// is MySQL's `status OK`; an error names what is wrong.
    fn check(&self, _txn: &Txn) -> Result<()> {
        Ok(())
    }

    /// Whether rows live in the primary key's index (InnoDB's clustered index), so a read
    /// through the primary key never visits anything but that index. EXPLAIN's
    /// "Using index" rests on it.
    fn clustered_primary(&self) -> bool {
        false
    }

    /// Whether each entry of a secondary index ends with the row's primary key, encoded
    /// as the primary key's own entries are (InnoDB's secondary records), so its entries
    /// are in (index columns, primary key columns) order and a key range may go on into
    /// the primary key: `WHERE k = 5 AND id < 100` reads only those entries, and
    /// `WHERE k = 5 ORDER BY id` needs no sort (MySQL's `use_index_extensions`).
    fn secondary_keys_end_with_primary(&self) -> bool {
        false
    }

    fn status(&self) -> TableStatus;

    /// Writes cached changes of this table to its files.
    fn flush(&self) -> Result<()>;

    /// The table's rows were all written anew (a rebuild's copy about to be switched
    /// in): a transaction whose consistent snapshot is older than this call cannot read
    /// it any more and gets 1412 "Table definition has changed", as in MySQL, instead
    /// of a table that looks empty to it. Engines without snapshots ignore it.
    fn mark_new_contents(&self) {}

    /// Marks this handle as replaced or dropped by DDL: the catalog holds another handle
    /// for the table (or none), and a statement that still holds this one must not use
    /// it. Engines keep the mark in the handle, so [`Table::retired`] is one load.
    fn retire(&self) {}

    /// Whether [`Table::retire`] was called.
    fn retired(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_range_contains_only_prefixed_keys() {
        let r = KeyRange::prefix(vec![1, 5]);
        assert!(r.contains(&[1, 5]));
        assert!(r.contains(&[1, 5, 0xFF, 3]));
        assert!(!r.contains(&[1, 6]));
        assert!(!r.contains(&[1, 4, 9]));
    }
}
