//! Statements other than queries: the column expressions (expression defaults,
//! generated columns) of [`column_expr`]; INSERT/UPDATE/DELETE ([`dml`]), CREATE/DROP ([`ddl`]),
//! ALTER TABLE, CREATE/DROP INDEX and RENAME TABLE ([`alter`]), SHOW and DESCRIBE
//! ([`show`]; SHOW TRIGGERS and SHOW CREATE TRIGGER in [`show_programs`]), EXPLAIN
//! ([`explain`]), the view statements ([`views`]), the normalised query text SHOW CREATE
//! VIEW prints ([`view_text`]), INSERT/UPDATE/DELETE through a view ([`view_dml`]), what
//! IGNORE does to UPDATE and DELETE ([`ignore`]) and the DDL of a session's TEMPORARY
//! tables ([`temporary`]).

pub mod alter;
pub mod autoinc;
pub mod charsets;
pub mod column_expr;
pub mod create_select;
pub mod create_select_calls;
pub mod create_select_columns;
pub mod create_select_types;
pub mod ddl;
pub mod ddl_locks;
pub mod dml;
pub mod explain;
pub mod explain_expr;
pub mod explain_tree;
pub mod ignore;
pub mod insert_alias;
pub mod multi_dml;
pub mod replicated_rows;
pub mod show;
pub mod show_programs;
pub mod temporary;
pub mod view_dml;
pub mod view_text;
pub mod views;
