//! Derived tables (`FROM (SELECT ...) AS d`): the subquery is planned with the outer
//! query and run once at the start of each execution; its rows fill a [`DerivedTable`],
//! which the outer query reads like any table through the engine API (a scan; it has no
//! indexes). MySQL materializes derived tables the same way.

use parking_lot::Mutex;
use std::sync::Arc;
use strata_engine::{
    Flow, Inserted, KeyRange, LockMode, RowFn, RowId, Table, TableLock, TableStatus,
};
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

fn read_only() -> Error {
    Error::NotSupported("changing a derived table".into())
}

impl Table for DerivedTable {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }
    fn lock(&self, _: LockMode) -> TableLock {
        TableLock::none()
    }
    fn scan(&self, f: &mut RowFn) -> Result<()> {
        let rows = self.rows.lock().clone();
        for (i, r) in rows.iter().enumerate() {
            if f(i as RowId, r)? == Flow::Stop {
                break;
            }
        }
        Ok(())
    }
    fn index_scan(&self, _: usize, _: &KeyRange, _: bool, _: &mut RowFn) -> Result<()> {
        Err(Error::Internal("derived tables have no indexes".into()))
    }
    fn fetch(&self, id: RowId) -> Result<Option<Vec<Value>>> {
        Ok(self.rows.lock().get(id as usize).cloned())
    }
    fn insert(&self, _: &mut Vec<Value>) -> Result<Inserted> {
        Err(read_only())
    }
    fn update(&self, _: RowId, _: &[Value], _: &[Value]) -> Result<RowId> {
        Err(read_only())
    }
    fn delete(&self, _: RowId, _: &[Value]) -> Result<()> {
        Err(read_only())
    }
    fn truncate(&self) -> Result<()> {
        Err(read_only())
    }
    fn status(&self) -> TableStatus {
        TableStatus {
            rows: self.rows.lock().len() as u64,
            ..Default::default()
        }
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
}
