//! One row change as the binary log records it: the full row before and/or after, in
//! the order of the table's columns. The SQL layer records these on the transaction
//! (`strata_engine::Txn::log_row`) when the binary log is on; the binlog crate turns
//! them into row events.

use crate::value::Value;

#[derive(Clone, Debug, PartialEq)]
pub enum RowChange {
    Insert(Vec<Value>),
    Update {
        before: Vec<Value>,
        after: Vec<Value>,
    },
    Delete(Vec<Value>),
}
