//! The vocabulary every Strata layer shares: SQL values ([`Value`]), column types
//! ([`DataType`]), table and index definitions ([`TableDef`]), the order-preserving key
//! encoding engines store in their B-trees ([`keycode`]), the collation rules used by
//! comparisons ([`collation`]), the result-set sink the executor writes into ([`output`]),
//! JSON documents ([`json`]), and the one error enum whose variants map to MySQL error numbers and SQLSTATEs
//! ([`Error`]), and the logger every thread reports through ([`log`]).
//!
//! This crate depends on nothing else in the workspace; everything else depends on it.

pub mod collation;
pub mod constraint;
pub mod credential;
pub mod datetime;
pub mod decimal;
pub mod error;
pub mod floatfmt;
pub mod gtid;
pub mod inthash;
pub mod json;
pub mod keycode;
pub mod log;
pub mod member;
pub mod memory;
pub mod output;
pub mod privilege;
pub mod row_change;
pub mod schema;
pub mod sql_mode;
pub mod sqltext;
pub mod stack;
pub mod table_options;
pub mod time_value;
mod u256;
mod u512;
pub mod value;
pub mod year_value;

pub use constraint::{CheckDef, FkAction, ForeignKeyDef};
pub use datetime::DateTime;
pub use decimal::Decimal;
pub use error::{Error, Result};
pub use output::{ColumnMeta, EndInfo, FieldType, OkInfo, QueryOutput};
pub use row_change::RowChange;
pub use schema::{
    Collation, ColumnDef, DataType, IndexDef, InstantColumns, PhysicalColumn, TableDef,
};
pub use sql_mode::SqlMode;
pub use table_options::TableOptions;
pub use value::Value;
