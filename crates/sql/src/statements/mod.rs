//! Statements other than queries: INSERT/UPDATE/DELETE ([`dml`]), CREATE/DROP ([`ddl`]),
//! ALTER TABLE, CREATE/DROP INDEX and RENAME TABLE ([`alter`]), SHOW and DESCRIBE
//! ([`show`]; SHOW TRIGGERS and SHOW CREATE TRIGGER in [`show_programs`]), EXPLAIN
//! ([`explain`]) and the view statements ([`views`]).

pub mod alter;
pub mod ddl;
pub mod ddl_locks;
pub mod dml;
pub mod explain;
pub mod insert_alias;
pub mod show;
pub mod show_programs;
pub mod views;
