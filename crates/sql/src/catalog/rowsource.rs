//! Tables computed by the SQL layer rather than stored by an engine
//! (information_schema, derived tables): a [`RowSource`] supplies a definition and its
//! rows, and [`ReadOnlyTable`] presents it through the engine API so every SELECT feature
//! works on it. They have no indexes (the planner scans them), refuse changes, and ignore
//! the transaction: their rows are computed, not versioned.

use std::sync::Arc;
use strata_engine::{
    Flow, Inserted, KeyRange, LockMode, RowFn, RowId, Table, TableLock, TableStatus, Txn,
};
use strata_types::{Error, Result, TableDef, Value};

pub trait RowSource: Send + Sync {
    fn def(&self) -> &Arc<TableDef>;
    /// Every row, computed when the table is read.
    fn rows(&self) -> Result<Vec<Vec<Value>>>;
}

pub struct ReadOnlyTable<S: RowSource>(pub S);

fn read_only(def: &TableDef) -> Error {
    Error::NotSupported(format!("changing {}", def.name))
}

impl<S: RowSource> Table for ReadOnlyTable<S> {
    fn def(&self) -> &Arc<TableDef> {
        self.0.def()
    }
    fn lock(&self, _: LockMode) -> TableLock {
        TableLock::none()
    }
    fn scan(&self, _: &Txn, f: &mut RowFn) -> Result<()> {
        for (i, r) in self.0.rows()?.iter().enumerate() {
            if f(i as RowId, r)? == Flow::Stop {
                break;
            }
        }
        Ok(())
    }
    fn index_scan(&self, _: &Txn, _: usize, _: &KeyRange, _: bool, _: &mut RowFn) -> Result<()> {
        Err(Error::Internal(format!(
            "{} has no indexes",
            self.0.def().name
        )))
    }
    fn insert(&self, _: &Txn, _: &mut Vec<Value>) -> Result<Inserted> {
        Err(read_only(self.0.def()))
    }
    fn update(&self, _: &Txn, _: RowId, _: &[Value], _: &[Value]) -> Result<RowId> {
        Err(read_only(self.0.def()))
    }
    fn delete(&self, _: &Txn, _: RowId, _: &[Value]) -> Result<()> {
        Err(read_only(self.0.def()))
    }
    fn truncate(&self) -> Result<()> {
        Err(read_only(self.0.def()))
    }
    fn status(&self) -> TableStatus {
        TableStatus {
            rows: self.0.rows().map(|r| r.len() as u64).unwrap_or(0),
            ..Default::default()
        }
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
}
