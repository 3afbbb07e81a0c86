//! Execution: the [`executor`] runs a statement's query expression (materialisation slots,
//! subqueries on demand, statement-wide locks), joins ([`join`], [`hash_join`]), sorting
//! beyond memory ([`sort`]) and aggregate accumulators ([`aggregate`]).

pub mod aggregate;
pub mod block;
pub mod executor;
pub mod hash_join;
pub mod join;
pub mod ops;
pub mod sort;
pub mod window;
