//! `information_schema.TRIGGERS`, `ROUTINES` and `PARAMETERS`, computed from the
//! catalog's stored triggers and routines (`catalog::triggers`, `catalog::routines`)
//! when read, with MySQL 8's columns in their order.

use crate::catalog::rowsource::{ReadOnlyTable, RowSource};
use crate::catalog::triggers::TriggerDef;
use crate::catalog::Catalog;
use std::sync::Arc;
use strata_engine::Table;
use strata_types::{ColumnDef, DataType, Result, TableDef, Value};

use crate::catalog::infoschema::{col, text};

fn long_text(name: &str) -> ColumnDef {
    col(name, DataType::VarChar(65535))
}

/// The information_schema tables this module computes, or None for another name.
pub fn table(catalog: &Arc<Catalog>, name: &str) -> Option<Arc<dyn Table>> {
    if name.eq_ignore_ascii_case("ROUTINES") || name.eq_ignore_ascii_case("PARAMETERS") {
        return Some(routines_table(
            catalog,
            name.eq_ignore_ascii_case("ROUTINES"),
        ));
    }
    if !name.eq_ignore_ascii_case("TRIGGERS") {
        return None;
    }
    let columns = vec![
        text("TRIGGER_CATALOG"),
        text("TRIGGER_SCHEMA"),
        text("TRIGGER_NAME"),
        text("EVENT_MANIPULATION"),
        text("EVENT_OBJECT_CATALOG"),
        text("EVENT_OBJECT_SCHEMA"),
        text("EVENT_OBJECT_TABLE"),
        col("ACTION_ORDER", DataType::BigInt { unsigned: true }),
        text("ACTION_CONDITION"),
        long_text("ACTION_STATEMENT"),
        text("ACTION_ORIENTATION"),
        text("ACTION_TIMING"),
        text("ACTION_REFERENCE_OLD_TABLE"),
        text("ACTION_REFERENCE_NEW_TABLE"),
        text("ACTION_REFERENCE_OLD_ROW"),
        text("ACTION_REFERENCE_NEW_ROW"),
        col("CREATED", DataType::Timestamp { fsp: 2 }),
        text("SQL_MODE"),
        text("DEFINER"),
        text("CHARACTER_SET_CLIENT"),
        text("COLLATION_CONNECTION"),
        text("DATABASE_COLLATION"),
    ];
    let def = TableDef {
        options: Default::default(),
        db: "information_schema".into(),
        name: "TRIGGERS".into(),
        engine: "memory".into(),
        columns,
        indexes: Vec::new(),
        auto_increment_start: 1,
        comment: String::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        instant: None,
        default_collation: Default::default(),
    };
    Some(Arc::new(ReadOnlyTable(Triggers {
        def: Arc::new(def),
        catalog: catalog.clone(),
    })))
}

struct Triggers {
    def: Arc<TableDef>,
    catalog: Arc<Catalog>,
}

impl RowSource for Triggers {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }

    fn rows(&self) -> Result<Vec<Vec<Value>>> {
        let all = self.catalog.triggers(None);
        Ok(all
            .iter()
            .map(|t| {
                let order = action_order(&all, t);
                vec![
                    Value::str("def"),
                    Value::str(&t.db),
                    Value::str(&t.name),
                    Value::str(t.event.word()),
                    Value::str("def"),
                    Value::str(&t.db),
                    Value::str(&t.table),
                    Value::UInt(order),
                    Value::Null,
                    Value::str(&t.body),
                    Value::str("ROW"),
                    Value::str(t.timing.word()),
                    Value::Null,
                    Value::Null,
                    Value::str("OLD"),
                    Value::str("NEW"),
                    Value::str(&created(&t.created)),
                    Value::str(&t.sql_mode),
                    Value::str(&t.definer),
                    Value::str("utf8mb4"),
                    Value::str("utf8mb4_general_ci"),
                    Value::str("utf8mb4_general_ci"),
                ]
            })
            .collect())
    }
}

/// A trigger's position (from 1) among its table's triggers of the same timing and
/// event; `all` is in action order.
pub fn action_order(all: &[TriggerDef], t: &TriggerDef) -> u64 {
    all.iter()
        .filter(|x| {
            x.db == t.db && x.table == t.table && x.timing == t.timing && x.event == t.event
        })
        .position(|x| x.name == t.name)
        .map_or(1, |i| i as u64 + 1)
}

/// The creation time as MySQL shows it: two fractional digits.
pub fn created(stored: &str) -> String {
    match stored.split_once('.') {
        Some((whole, frac)) => format!("{whole}.{:0<2}", &frac[..frac.len().min(2)]),
        None => format!("{stored}.00"),
    }
}

fn num(name: &str) -> ColumnDef {
    col(name, DataType::BigInt { unsigned: true })
}

fn info_def(name: &str, columns: Vec<ColumnDef>) -> Arc<TableDef> {
    Arc::new(TableDef {
        options: Default::default(),
        db: "information_schema".into(),
        name: name.into(),
        engine: "memory".into(),
        columns,
        indexes: Vec::new(),
        auto_increment_start: 1,
        comment: String::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        instant: None,
        default_collation: Default::default(),
    })
}

fn routines_table(catalog: &Arc<Catalog>, routines: bool) -> Arc<dyn Table> {
    let def = if routines {
        info_def(
            "ROUTINES",
            vec![
                text("SPECIFIC_NAME"),
                text("ROUTINE_CATALOG"),
                text("ROUTINE_SCHEMA"),
                text("ROUTINE_NAME"),
                text("ROUTINE_TYPE"),
                text("DATA_TYPE"),
                num("CHARACTER_MAXIMUM_LENGTH"),
                num("CHARACTER_OCTET_LENGTH"),
                num("NUMERIC_PRECISION"),
                num("NUMERIC_SCALE"),
                num("DATETIME_PRECISION"),
                text("CHARACTER_SET_NAME"),
                text("COLLATION_NAME"),
                long_text("DTD_IDENTIFIER"),
                text("ROUTINE_BODY"),
                long_text("ROUTINE_DEFINITION"),
                text("EXTERNAL_NAME"),
                text("EXTERNAL_LANGUAGE"),
                text("PARAMETER_STYLE"),
                text("IS_DETERMINISTIC"),
                text("SQL_DATA_ACCESS"),
                text("SQL_PATH"),
                text("SECURITY_TYPE"),
                col("CREATED", DataType::Timestamp { fsp: 0 }),
                col("LAST_ALTERED", DataType::Timestamp { fsp: 0 }),
                text("SQL_MODE"),
                long_text("ROUTINE_COMMENT"),
                text("DEFINER"),
                text("CHARACTER_SET_CLIENT"),
                text("COLLATION_CONNECTION"),
                text("DATABASE_COLLATION"),
            ],
        )
    } else {
        info_def(
            "PARAMETERS",
            vec![
                text("SPECIFIC_CATALOG"),
                text("SPECIFIC_SCHEMA"),
                text("SPECIFIC_NAME"),
                num("ORDINAL_POSITION"),
                text("PARAMETER_MODE"),
                text("PARAMETER_NAME"),
                text("DATA_TYPE"),
                num("CHARACTER_MAXIMUM_LENGTH"),
                num("CHARACTER_OCTET_LENGTH"),
                num("NUMERIC_PRECISION"),
                num("NUMERIC_SCALE"),
                num("DATETIME_PRECISION"),
                text("CHARACTER_SET_NAME"),
                text("COLLATION_NAME"),
                long_text("DTD_IDENTIFIER"),
                text("ROUTINE_TYPE"),
            ],
        )
    };
    Arc::new(ReadOnlyTable(Routines {
        def,
        catalog: catalog.clone(),
        routines,
    }))
}

struct Routines {
    def: Arc<TableDef>,
    catalog: Arc<Catalog>,
    /// ROUTINES (true) or PARAMETERS.
    routines: bool,
}

/// `DECIMAL(10,2) UNSIGNED` → `decimal`: the type's name, as DATA_TYPE shows it.
fn type_name(t: &str) -> String {
    t.split(|c: char| c == '(' || c.is_whitespace())
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Seconds-precision time text (CREATED / LAST_ALTERED are TIMESTAMP).
fn seconds(t: &str) -> Value {
    Value::str(t.split('.').next().unwrap_or(t))
}

impl RowSource for Routines {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }

    fn rows(&self) -> Result<Vec<Vec<Value>>> {
        use crate::catalog::routines::RoutineKind;
        let mut out = Vec::new();
        for r in self.catalog.routines(None) {
            let kind = Value::str(r.kind.word());
            if self.routines {
                let (dt, dtd) = match &r.returns {
                    Some(t) => (
                        Value::str(&type_name(t)),
                        Value::str(&t.to_ascii_lowercase()),
                    ),
                    None => (Value::str(""), Value::Null),
                };
                out.push(vec![
                    Value::str(&r.name),
                    Value::str("def"),
                    Value::str(&r.db),
                    Value::str(&r.name),
                    kind,
                    dt,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    dtd,
                    Value::str("SQL"),
                    Value::str(&r.body),
                    Value::Null,
                    Value::str("SQL"),
                    Value::str("SQL"),
                    Value::str(if r.deterministic { "YES" } else { "NO" }),
                    Value::str(&r.data_access),
                    Value::Null,
                    Value::str(&r.security),
                    seconds(&r.created),
                    seconds(&r.modified),
                    Value::str(&r.sql_mode),
                    Value::str(&r.comment),
                    Value::str(&r.definer),
                    Value::str("utf8mb4"),
                    Value::str("utf8mb4_general_ci"),
                    Value::str("utf8mb4_general_ci"),
                ]);
                continue;
            }
            let param_row = |pos: u64, mode: Value, name: Value, ty: &str| {
                vec![
                    Value::str("def"),
                    Value::str(&r.db),
                    Value::str(&r.name),
                    Value::UInt(pos),
                    mode,
                    name,
                    Value::str(&type_name(ty)),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::str(&ty.to_ascii_lowercase()),
                    Value::str(r.kind.word()),
                ]
            };
            if r.kind == RoutineKind::Function {
                if let Some(t) = &r.returns {
                    out.push(param_row(0, Value::Null, Value::Null, t));
                }
            }
            for (i, p) in r.params.iter().enumerate() {
                let mode = if r.kind == RoutineKind::Function {
                    Value::Null
                } else {
                    Value::str(p.mode.word())
                };
                out.push(param_row(
                    i as u64 + 1,
                    mode,
                    Value::str(&p.name),
                    &p.data_type,
                ));
            }
        }
        Ok(out)
    }
}
