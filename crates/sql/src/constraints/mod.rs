//! Table constraints: FOREIGN KEY and CHECK, as InnoDB in MySQL 8 has them.
//!
//! The definitions live with the table's definition in the catalog
//! (`TableDef::foreign_keys`, `TableDef::checks`, `docs/format/catalog.md`); this folder
//! builds them from CREATE TABLE / ALTER TABLE ([`definition`], [`checks`]), keeps DDL
//! from breaking them ([`guards`]), prints them ([`show`]) and enforces them when rows
//! change ([`enforce`]). Foreign keys exist only on the `btree` engine: on MyISAM-style
//! (`heap`) tables they are parsed and dropped, as MySQL does.
//!
//! Enforcement is InnoDB's: a child row's parent is looked up with a shared-locking read
//! (so a concurrent delete of the parent waits for this transaction), a parent row's
//! children with an exclusive-locking read, and referential actions run in the
//! statement's own transaction, so a rollback undoes all of them. `foreign_key_checks=0`
//! turns the checks and actions off.
//!
//! This folder sits between `statements/` (which calls it) and `bind/`, `expr/`,
//! `catalog/` (which it calls).

pub mod checks;
pub mod definition;
pub mod enforce;
pub mod guards;
pub mod show;

use crate::context::ExecCtx;


/// Whether `foreign_key_checks` is on for this statement's session.
pub fn fk_checks_on(cx: &ExecCtx) -> bool {
    match cx.env.system_variable("foreign_key_checks", false) {
        Ok(v) => v.to_i64() != Some(0),
        Err(_) => true,
    }
}
