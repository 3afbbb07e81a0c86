//! Statements other than queries: INSERT/UPDATE/DELETE ([`dml`]), CREATE/DROP ([`ddl`]),
//! SHOW and DESCRIBE ([`show`]), EXPLAIN ([`explain`]) and the information_schema tables
//! ([`infoschema`]).

pub mod ddl;
pub mod dml;
pub mod explain;
pub mod infoschema;
pub mod show;
