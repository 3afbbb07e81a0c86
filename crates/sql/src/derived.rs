//! Derived tables (`FROM (SELECT ...) AS d`): the subquery is planned with the outer
//! query and run once at the start of each execution; its rows fill a [`DerivedTable`],
//! which the outer query reads like any table through the engine API
//! ([`crate::rowsource::ReadOnlyTable`]: a scan, no indexes). MySQL materializes derived tables the same way.

use crate::rowsource::RowSource;
use parking_lot::Mutex;
use std::sync::Arc;
use strata_types::{
    Collation, ColumnDef, ColumnMeta, DataType, Error, FieldType, Result, TableDef, Value,
};

pub struct DerivedTable {
    def: Arc<TableDef>,
    rows: Mutex<Vec<Vec<Value>>>,
}

impl DerivedTable {
    /// A table whose columns are the subquery's result columns.
    pub fn new(alias: &str, columns: &[ColumnMeta]) -> Result<DerivedTable> {
        let mut cols: Vec<ColumnDef> = Vec::new();
        for c in columns {
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
                FieldType::Float | FieldType::Double => DataType::Double,
                FieldType::NewDecimal | FieldType::Decimal => DataType::Decimal {
                    precision: 38,
                    scale: c.decimals.min(30),
                },
                FieldType::Date => DataType::Date,
                FieldType::DateTime | FieldType::Timestamp => DataType::DateTime,
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
                collation: if c.charset == 63 {
                    Collation::Binary
                } else {
                    Collation::GeneralCi
                },
            });
        }
        let def = TableDef {
            db: String::new(),
            name: alias.to_string(),
            engine: "derived".into(),
            columns: cols,
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
        };
        Ok(DerivedTable {
            def: Arc::new(def),
            rows: Mutex::new(Vec::new()),
        })
    }

    pub fn fill(&self, rows: Vec<Vec<Value>>) {
        *self.rows.lock() = rows;
    }
}

impl RowSource for DerivedTable {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }
    fn rows(&self) -> Result<Vec<Vec<Value>>> {
        Ok(self.rows.lock().clone())
    }
}
