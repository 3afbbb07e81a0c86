//! Derived tables and CTE references (`FROM (SELECT ...) AS d`, `WITH d AS (...)`): the
//! table definition the binder sees, built from the subquery's result columns. The rows
//! are not here: the executor materializes them into a slot of the statement's
//! execution state ([`crate::bind::ScopeTable::slot`]), so a cached plan holds none.

use crate::catalog::rowsource::RowSource;
use std::sync::Arc;
use strata_types::{
    Collation, ColumnDef, ColumnMeta, DataType, Error, FieldType, Result, TableDef, Value,
};

pub struct DerivedTable {
    def: Arc<TableDef>,
}

impl DerivedTable {
    /// A table whose columns are the subquery's result columns, renamed by `names` when
    /// the query gives a column list (`d (a, b)`, `WITH d (a, b) AS`).
    pub fn new(alias: &str, columns: &[ColumnMeta], names: &[String]) -> Result<DerivedTable> {
        if !names.is_empty() && names.len() != columns.len() {
            return Err(Error::ViewColumnCount);
        }
        let mut cols: Vec<ColumnDef> = Vec::new();
        for (i, c) in columns.iter().enumerate() {
            let mut c = c.clone();
            if let Some(n) = names.get(i) {
                c.name = n.clone();
            }
            if cols.iter().any(|x| x.name.eq_ignore_ascii_case(&c.name)) {
                return Err(Error::DuplicateColumn(c.name.clone()));
            }
            let unsigned = c.flags & strata_types::output::flags::UNSIGNED != 0;
            let data_type = match c.field_type {
                FieldType::Tiny
                | FieldType::Short
                | FieldType::Long
                | FieldType::Int24
                | FieldType::LongLong => DataType::BigInt { unsigned },
                // A FLOAT stays a FLOAT, so it is still shown as one outside.
                FieldType::Float | FieldType::Double => DataType::real_from_meta(
                    c.field_type == FieldType::Double,
                    c.length,
                    c.decimals,
                ),
                FieldType::NewDecimal | FieldType::Decimal => DataType::Decimal {
                    precision: 38,
                    scale: c.decimals.min(30),
                },
                FieldType::Date => DataType::Date,
                FieldType::DateTime | FieldType::Timestamp => DataType::DateTime {
                    fsp: c.decimals.min(6),
                },
                FieldType::Time => DataType::Time {
                    fsp: c.decimals.min(6),
                },
                FieldType::Year => DataType::Year,
                _ if c.charset == 63 => DataType::Blob(u32::MAX),
                _ => DataType::Text(u32::MAX),
            };
            cols.push(ColumnDef {
                name: c.name.clone(),
                data_type,
                nullable: true,
                default: None,
                auto_increment: false,
                on_update_now: false,
                // The source column's collation: a utf8mb4_bin column read through a
                // derived table still compares, groups and sorts case-sensitively.
                collation: Collation::from_id(c.charset),
                members: Vec::new(),
                generated: None,
                comment: String::new(),
                real_unsigned: false,
                invisible: Default::default(),
            });
        }
        Ok(DerivedTable::with_columns(alias, cols))
    }
}

impl DerivedTable {
    /// A table with exactly these column definitions (a view gives its columns the
    /// types of the base columns they read).
    pub fn with_columns(alias: &str, columns: Vec<ColumnDef>) -> DerivedTable {
        DerivedTable {
            def: Arc::new(derived_def(alias, columns)),
        }
    }
}

/// The definition of a table that holds no files (a derived table, CTE or view, or
/// what CREATE TABLE … SELECT types one as): its columns and nothing else.
pub fn derived_def(alias: &str, columns: Vec<ColumnDef>) -> TableDef {
    TableDef {
        options: Default::default(),
        db: String::new(),
        name: alias.to_string(),
        engine: "derived".into(),
        columns,
        indexes: vec![],
        auto_increment_start: 1,
        comment: String::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        instant: None,
        default_collation: Default::default(),
    }
}

impl RowSource for DerivedTable {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }
    fn rows(&self) -> Result<Vec<Vec<Value>>> {
        // The executor reads the slot instead; reaching this is a planner bug.
        Err(Error::Internal(format!(
            "derived table {} read through the engine API",
            self.def.name
        )))
    }
}
