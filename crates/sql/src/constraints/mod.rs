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

/// Names MySQL generates for unnamed constraints, `<table><infix><n>`: the next n after
/// the highest one the table's constraints already use (`t_ibfk_3` → 4).
pub struct GeneratedNames {
    prefix: String,
    last: u64,
}

impl GeneratedNames {
    pub fn new<'n>(table: &str, infix: &str, existing: impl Iterator<Item = &'n str>) -> Self {
        let prefix = format!("{table}{infix}");
        let last = existing
            .filter_map(|n| n.strip_prefix(&prefix).and_then(|n| n.parse::<u64>().ok()))
            .max()
            .unwrap_or(0);
        GeneratedNames { prefix, last }
    }

    /// The clause's own name, or the next generated one.
    pub fn name(&mut self, given: &Option<String>) -> String {
        match given {
            Some(n) => n.clone(),
            None => {
                self.last += 1;
                format!("{}{}", self.prefix, self.last)
            }
        }
    }
}

/// Whether `foreign_key_checks` is on for this statement's session.
pub fn fk_checks_on(cx: &ExecCtx) -> bool {
    match cx.env.system_variable("foreign_key_checks", false) {
        Ok(v) => v.to_i64() != Some(0),
        Err(_) => true,
    }
}

/// What a statement writing one table enforces on its rows: the table's enforced CHECK
/// constraints (bound over its row) and the foreign keys around it. Resolved when the
/// statement is planned; None for a table with neither, so the common statement pays
/// one test of an `Option`.
pub struct RowRules {
    pub checks: Vec<(String, crate::expr::Expr)>,
    pub links: enforce::Links,
}

impl RowRules {
    pub fn for_target(
        cx: &ExecCtx,
        db: &str,
        def: &strata_types::TableDef,
        table: &std::sync::Arc<dyn strata_engine::Table>,
    ) -> strata_types::Result<Option<std::sync::Arc<RowRules>>> {
        if crate::catalog::is_system_schema(db) {
            return Ok(None);
        }
        let checks = checks::bind_checks(def, db, table)?;
        let links = enforce::Links::resolve(cx.catalog, def);
        if checks.is_empty() && links.is_empty() {
            return Ok(None);
        }
        Ok(Some(std::sync::Arc::new(RowRules { checks, links })))
    }

    /// The CHECK constraints, on a row about to be written.
    pub fn verify(
        &self,
        row: &[strata_types::Value],
        ecx: &crate::expr::EvalCtx,
    ) -> strata_types::Result<()> {
        checks::verify(&self.checks, row, ecx)
    }
}
