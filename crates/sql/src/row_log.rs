//! The one place the SQL layer changes table rows: insert, update and delete through the
//! engine API, each recorded on the transaction for the binary log when it is on
//! (`Txn::log_row`). With the log off the cost is one flag test per row. A session's
//! TEMPORARY tables are never logged (MySQL 8 with binlog_format=ROW).

use crate::context::ExecCtx;
use std::sync::Arc;
use strata_engine::{Inserted, RowId, Table};
use strata_types::{Result, RowChange, Value};

/// Whether `table`'s engine undoes changes at ROLLBACK (so its rows wait for COMMIT in
/// the binary log) or not (heap: logged at statement end).
fn transactional(cx: &ExecCtx, table: &dyn Table) -> bool {
    let engine = &table.def().engine;
    cx.catalog
        .engines()
        .iter()
        .find(|e| e.name() == engine)
        .is_none_or(|e| e.transactional())
}

pub fn insert(cx: &ExecCtx, table: &Arc<dyn Table>, row: &mut Vec<Value>) -> Result<Inserted> {
    let ins = table.insert(cx.txn, row)?;
    if cx.txn.logs_rows() && !cx.temp.holds(table) {
        let t = transactional(cx, table.as_ref());
        cx.txn
            .log_row(table.def(), t, RowChange::Insert(row.clone()));
    }
    Ok(ins)
}

pub fn update(
    cx: &ExecCtx,
    table: &Arc<dyn Table>,
    id: RowId,
    old: &[Value],
    new: &[Value],
) -> Result<RowId> {
    let id = table.update(cx.txn, id, old, new)?;
    if cx.txn.logs_rows() && !cx.temp.holds(table) {
        let t = transactional(cx, table.as_ref());
        cx.txn.log_row(
            table.def(),
            t,
            RowChange::Update {
                before: old.to_vec(),
                after: new.to_vec(),
            },
        );
    }
    Ok(id)
}

pub fn delete(cx: &ExecCtx, table: &Arc<dyn Table>, id: RowId, old: &[Value]) -> Result<()> {
    table.delete(cx.txn, id, old)?;
    if cx.txn.logs_rows() && !cx.temp.holds(table) {
        let t = transactional(cx, table.as_ref());
        cx.txn
            .log_row(table.def(), t, RowChange::Delete(old.to_vec()));
    }
    Ok(())
}
