//! Rewrite rules that change a query's shape without changing its answer: OR factoring and
//! implied single-table conditions ([`rewrite`]), correlated `EXISTS` to hash semi-join
//! ([`decorrelate`]). Each rule has unit tests beside it and slt files checked against
//! MariaDB.

pub mod decorrelate;
pub mod rewrite;
