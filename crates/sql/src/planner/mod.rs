//! Building logical plans from syntax: the statement's query expression ([`query`]: blocks,
//! set operations, `WITH`, the subquery table the binder fills) and each block
//! ([`block`]), with its FROM clause ([`from_clause`]) and the views it names ([`views`]). The binder resolves names; the
//! optimizer shapes each block once it is bound.

pub mod block;
pub mod from_clause;
pub mod query;
pub mod views;
