//! Execution: the [`executor`] runs a statement's query expression (materialisation slots,
//! subqueries on demand, statement-wide locks), joins ([`join`], [`hash_join`]), sorting
//! beyond memory ([`sort`]), aggregate accumulators ([`aggregate`]) and the results of
//! correlated subqueries kept by outer values ([`subquery_cache`]).

pub mod aggregate;
pub mod block;
pub mod executor;
pub mod hash_join;
pub mod join;
pub mod ops;
pub mod sort;
pub mod subquery_cache;
pub mod window;
