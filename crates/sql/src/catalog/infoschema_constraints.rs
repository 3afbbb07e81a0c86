//! The constraint tables of `information_schema`, as MySQL 8 fills them and as ORMs read
//! them (SQLAlchemy's `inspect()`, Django's introspection): TABLE_CONSTRAINTS (primary
//! key, unique keys, foreign keys, checks), KEY_COLUMN_USAGE (the columns of keys and
//! foreign keys, with what a foreign key column refers to), REFERENTIAL_CONSTRAINTS (a
//! foreign key's rules and the parent index it uses) and CHECK_CONSTRAINTS.

use crate::catalog::Catalog;
use strata_types::{TableDef, Value};

/// Which of the four tables.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ConstraintTable {
    TableConstraints,
    KeyColumnUsage,
    ReferentialConstraints,
    CheckConstraints,
}

impl ConstraintTable {
    pub fn from_name(upper: &str) -> Option<ConstraintTable> {
        Some(match upper {
            "TABLE_CONSTRAINTS" => ConstraintTable::TableConstraints,
            "KEY_COLUMN_USAGE" => ConstraintTable::KeyColumnUsage,
            "REFERENTIAL_CONSTRAINTS" => ConstraintTable::ReferentialConstraints,
            "CHECK_CONSTRAINTS" => ConstraintTable::CheckConstraints,
            _ => return None,
        })
    }

    pub fn columns(self) -> &'static [&'static str] {
        match self {
            ConstraintTable::TableConstraints => &[
                "CONSTRAINT_CATALOG",
                "CONSTRAINT_SCHEMA",
                "CONSTRAINT_NAME",
                "TABLE_SCHEMA",
                "TABLE_NAME",
                "CONSTRAINT_TYPE",
                "ENFORCED",
            ],
            ConstraintTable::KeyColumnUsage => &[
                "CONSTRAINT_CATALOG",
                "CONSTRAINT_SCHEMA",
                "CONSTRAINT_NAME",
                "TABLE_CATALOG",
                "TABLE_SCHEMA",
                "TABLE_NAME",
                "COLUMN_NAME",
                "ORDINAL_POSITION",
                "POSITION_IN_UNIQUE_CONSTRAINT",
                "REFERENCED_TABLE_SCHEMA",
                "REFERENCED_TABLE_NAME",
                "REFERENCED_COLUMN_NAME",
            ],
            ConstraintTable::ReferentialConstraints => &[
                "CONSTRAINT_CATALOG",
                "CONSTRAINT_SCHEMA",
                "CONSTRAINT_NAME",
                "UNIQUE_CONSTRAINT_CATALOG",
                "UNIQUE_CONSTRAINT_SCHEMA",
                "UNIQUE_CONSTRAINT_NAME",
                "MATCH_OPTION",
                "UPDATE_RULE",
                "DELETE_RULE",
                "TABLE_NAME",
                "REFERENCED_TABLE_NAME",
            ],
            ConstraintTable::CheckConstraints => &[
                "CONSTRAINT_CATALOG",
                "CONSTRAINT_SCHEMA",
                "CONSTRAINT_NAME",
                "CHECK_CLAUSE",
            ],
        }
    }

    /// Whether a column holds numbers (the rest are text).
    pub fn numeric(col: &str) -> bool {
        matches!(col, "ORDINAL_POSITION" | "POSITION_IN_UNIQUE_CONSTRAINT")
    }

    /// The rows for one table.
    pub fn rows(self, catalog: &Catalog, def: &TableDef, out: &mut Vec<Vec<Value>>) {
        let s = |v: &str| Value::str(v);
        let db = def.db.as_str();
        let keys = def.indexes.iter().filter(|i| i.unique);
        match self {
            ConstraintTable::TableConstraints => {
                for ix in keys {
                    let kind = if ix.primary { "PRIMARY KEY" } else { "UNIQUE" };
                    out.push(vec![
                        s("def"),
                        s(db),
                        s(&ix.name),
                        s(db),
                        s(&def.name),
                        s(kind),
                        s("YES"),
                    ]);
                }
                for fk in &def.foreign_keys {
                    out.push(vec![
                        s("def"),
                        s(db),
                        s(&fk.name),
                        s(db),
                        s(&def.name),
                        s("FOREIGN KEY"),
                        s("YES"),
                    ]);
                }
                for c in &def.checks {
                    out.push(vec![
                        s("def"),
                        s(db),
                        s(&c.name),
                        s(db),
                        s(&def.name),
                        s("CHECK"),
                        s(if c.enforced { "YES" } else { "NO" }),
                    ]);
                }
            }
            ConstraintTable::KeyColumnUsage => {
                for ix in keys {
                    for (n, &c) in ix.columns.iter().enumerate() {
                        out.push(vec![
                            s("def"),
                            s(db),
                            s(&ix.name),
                            s("def"),
                            s(db),
                            s(&def.name),
                            s(&def.columns[c].name),
                            Value::UInt(n as u64 + 1),
                            Value::Null,
                            Value::Null,
                            Value::Null,
                            Value::Null,
                        ]);
                    }
                }
                for fk in &def.foreign_keys {
                    for (n, (c, p)) in fk.columns.iter().zip(&fk.parent_columns).enumerate() {
                        out.push(vec![
                            s("def"),
                            s(db),
                            s(&fk.name),
                            s("def"),
                            s(db),
                            s(&def.name),
                            s(c),
                            Value::UInt(n as u64 + 1),
                            Value::UInt(n as u64 + 1),
                            s(&fk.parent_db),
                            s(&fk.parent_table),
                            s(p),
                        ]);
                    }
                }
            }
            ConstraintTable::ReferentialConstraints => {
                for fk in &def.foreign_keys {
                    // The parent's unique index the key uses, as MySQL 8 names it.
                    let unique = catalog
                        .table(&fk.parent_db, &fk.parent_table)
                        .ok()
                        .and_then(|p| {
                            let pdef = p.def().clone();
                            let cols: Option<Vec<usize>> = fk
                                .parent_columns
                                .iter()
                                .map(|c| pdef.column_index(c))
                                .collect();
                            let cols = cols?;
                            pdef.indexes
                                .iter()
                                .find(|ix| ix.unique && ix.columns == cols)
                                .map(|ix| ix.name.clone())
                        });
                    out.push(vec![
                        s("def"),
                        s(db),
                        s(&fk.name),
                        s("def"),
                        s(&fk.parent_db),
                        unique.map_or(Value::Null, |u| s(&u)),
                        s("NONE"),
                        s(fk.on_update.sql()),
                        s(fk.on_delete.sql()),
                        s(&def.name),
                        s(&fk.parent_table),
                    ]);
                }
            }
            ConstraintTable::CheckConstraints => {
                for c in &def.checks {
                    out.push(vec![s("def"), s(db), s(&c.name), s(&c.expr)]);
                }
            }
        }
    }
}
