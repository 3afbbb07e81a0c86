//! Building logical plans from syntax: the statement's query expression ([`query`]: blocks,
//! set operations, `WITH`, the subquery table the binder fills) and each block
//! ([`block`]), with its FROM clause ([`from_clause`]), the views it names ([`views`]) and a
//! HAVING that filters an ungrouped block as WHERE does ([`having_filter`]). The binder resolves names; the
//! optimizer shapes each block once it is bound.

pub mod block;
pub mod from_clause;
pub mod having_filter;
pub mod query;
pub mod views;
