//! Filling a table rebuild: the row copy both ALTER TABLE's COPY algorithm
//! (`statements/alter.rs`) and the startup key-format upgrade (`catalog/key_format.rs`)
//! run between [`Catalog::begin_rebuild`] and [`Catalog::commit_rebuild`].
//!
//! Memory stays bounded: one row at a time, committed in transactions of
//! [`COPY_BATCH`] rows of the new table's own (invisible until the switch). The new
//! files are made durable before the one catalog write that switches the table to them,
//! so a crash after the switch finds every row; any error drops the new files and leaves
//! the table as it was.

use super::{Catalog, Rebuild};
use std::sync::Arc;
use strata_engine::{Flow, Table, Txn};
use strata_types::{Error, Result, Value};

/// Rows the copy inserts into the new table per transaction of its own.
pub const COPY_BATCH: usize = 1000;

/// Makes the new table's row from an old row and its number (from 1).
pub type RowMap<'a> = dyn FnMut(&[Value], u64) -> Result<Vec<Value>> + 'a;

impl Catalog {
    /// Copies the rows `old.scan(read)` yields into `rebuild`'s table, each made by
    /// `map` (given the row and its number from 1), in transactions from `own_txn`;
    /// makes them durable and switches `old` to the new files. Returns the rows copied.
    pub fn fill_rebuild(
        &self,
        old: &Arc<dyn Table>,
        read: &Txn,
        rebuild: Rebuild,
        own_txn: &dyn Fn() -> Txn,
        map: &mut RowMap<'_>,
    ) -> Result<u64> {
        let new = rebuild.handle.clone();
        let mut txn = Some(own_txn());
        let mut in_batch = 0usize;
        let mut rows = 0u64;
        let scanned = old.scan(read, &mut |_, row| {
            rows += 1;
            let mut out = map(row, rows)?;
            let t = txn
                .as_ref()
                .ok_or_else(|| Error::Internal("rebuild copy transaction".into()))?;
            new.insert(t, &mut out)?;
            in_batch += 1;
            if in_batch == COPY_BATCH {
                if let Some(t) = txn.take() {
                    t.commit()?;
                }
                txn = Some(own_txn());
                in_batch = 0;
            }
            Ok(Flow::Continue)
        });
        let finished = scanned
            .and_then(|()| match txn.take() {
                Some(t) => t.commit(),
                None => Ok(()),
            })
            // Durable before the switch: a crash after it must find every row.
            .and_then(|()| new.flush());
        if let Err(e) = finished {
            if let Some(t) = txn.take() {
                let _ = t.rollback();
            }
            drop(new);
            self.abort_rebuild(rebuild);
            return Err(e);
        }
        drop(new);
        self.commit_rebuild(old, rebuild)?;
        Ok(rows)
    }
}
