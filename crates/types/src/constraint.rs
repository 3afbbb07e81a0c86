//! Table constraints as the catalog stores them with a table's definition
//! ([`crate::TableDef::foreign_keys`], [`crate::TableDef::checks`]): FOREIGN KEY
//! constraints, which the SQL layer enforces on the `btree` engine as InnoDB does, and
//! CHECK constraints, kept as the SQL text of their expression and bound again when a
//! statement that writes the table is planned. Columns are named, not numbered, so a
//! constraint survives ALTER TABLE moving columns about.

use serde::{Deserialize, Serialize};

/// What a change of a referenced (parent) row does to the rows that refer to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FkAction {
    /// The default when the clause is absent; refuses the change (1451) as RESTRICT
    /// does, since InnoDB checks immediately.
    NoAction,
    Restrict,
    Cascade,
    SetNull,
}

impl FkAction {
    /// The rule as MySQL 8 spells it (SHOW CREATE TABLE, information_schema).
    pub fn sql(self) -> &'static str {
        match self {
            FkAction::NoAction => "NO ACTION",
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
        }
    }
}

/// `CONSTRAINT name FOREIGN KEY (columns) REFERENCES parent (parent_columns)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForeignKeyDef {
    pub name: String,
    /// The referencing columns of this (the child) table.
    pub columns: Vec<String>,
    pub parent_db: String,
    pub parent_table: String,
    /// The referenced columns, one per entry of `columns`.
    pub parent_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

impl ForeignKeyDef {
    /// True when this constraint refers to table `db`.`name`.
    pub fn references(&self, db: &str, name: &str) -> bool {
        self.parent_db == db && self.parent_table == name
    }
}

/// `CONSTRAINT name CHECK (expr) [NOT] ENFORCED`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckDef {
    pub name: String,
    /// The expression as SHOW CREATE TABLE prints it (MySQL 8's form, identifiers
    /// quoted); parsed again to bind it.
    pub expr: String,
    pub enforced: bool,
}
