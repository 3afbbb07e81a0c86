//! Logical planning: a statement's query expression ([`query`]: query blocks, set
//! operations, `WITH`, the statement's subquery table) and each query block's plan
//! ([`block`]: scope, bound clauses, access paths, join order), with the outer-join groups
//! of its FROM clause ([`join_groups`]). Plans hold no rows or other runtime state; the
//! session caches them across executions.

pub mod block;
pub mod join_groups;
pub mod query;
