//! `information_schema`: SCHEMATA, TABLES, COLUMNS, STATISTICS, ENGINES and VIEWS as read-only
//! tables computed from the catalog when scanned. They implement the engine API like any
//! table, so every SELECT feature works on them; they have no indexes, so the planner
//! scans them. Column names and types follow MySQL, since clients (mysqldump, ORMs,
//! GUIs) read them by name.

use crate::catalog::engines::engine_display;
use crate::catalog::infoschema_constraints::ConstraintTable;
use crate::catalog::rowsource::{ReadOnlyTable, RowSource};
use crate::catalog::systables::{self, AccountRows};
use crate::catalog::Catalog;
use std::sync::Arc;
use strata_engine::Table;
use strata_types::schema::ColumnDefault;
use strata_types::{Collation, ColumnDef, DataType, Error, Result, TableDef, Value};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Schemata,
    Tables,
    Columns,
    Statistics,
    Engines,
    /// The server's connections (SHOW PROCESSLIST's rows).
    Processlist,
    /// TABLE_CONSTRAINTS, KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS, CHECK_CONSTRAINTS.
    Constraints(ConstraintTable),
    /// VIEWS: the catalog's views (`catalog::views`).
    Views,
    /// STRATA_MEMORY: bytes held per component (`strata_types::memory`), the budget,
    /// working memory granted, and the process's RSS beside them.
    Memory,
    /// Tables for objects Strata does not have (tablespace files, triggers,
    /// routines, events, partitions, foreign keys): the right columns, never a row, so
    /// clients that look for such objects find none instead of failing.
    Empty,
}

pub struct InfoTable {
    def: Arc<TableDef>,
    kind: Kind,
    catalog: Arc<Catalog>,
    /// The `mysql` tables' rows (for their TABLES rows' counts).
    accounts: Option<Arc<dyn AccountRows>>,
    /// The reading session's time zone, seconds east of UTC: CREATE_TIME is shown in
    /// it, as MySQL shows its dictionary's TIMESTAMPs.
    tz_offset: i64,
}

/// A table's creation time (`Catalog::table_created`) as a DATETIME in the zone
/// `tz_offset` seconds east of UTC; NULL when not known.
pub(crate) fn created_time(created: Option<i64>, tz_offset: i64) -> Value {
    match created {
        Some(secs) => Value::DateTime(strata_types::DateTime::from_unix(secs + tz_offset, 0)),
        None => Value::Null,
    }
}

/// A column of an information_schema table: NULL-able, text in the collation
/// [`name_collation`] gives it.
pub(crate) fn col(name: &str, data_type: DataType) -> ColumnDef {
    ColumnDef {
        name: name.to_string(),
        data_type,
        nullable: true,
        default: None,
        auto_increment: false,
        on_update_now: false,
        collation: if data_type.is_text() {
            name_collation(name)
        } else {
            Collation::Binary
        },
        members: Vec::new(),
        generated: None,
        comment: String::new(),
        real_unsigned: false,
        invisible: Default::default(),
    }
}

/// The collation of an information_schema text column, as MySQL 8's data dictionary
/// has it (with `lower_case_table_names=0`, as on Linux): schema and table names are
/// `utf8mb3_bin` (case matters, as in the names themselves); every other name and text
/// (column and index names in `utf8mb3_tolower_ci`, engines, character sets,
/// collations, types in `utf8mb3_general_ci`) compares and sorts case-insensitively,
/// so `ORDER BY INDEX_NAME` and `WHERE COLUMN_NAME = 'ID'` behave as in MySQL.
fn name_collation(name: &str) -> Collation {
    if name.ends_with("SCHEMA")
        || name == "SCHEMA_NAME"
        || name.ends_with("TABLE_NAME")
        || name == "EVENT_OBJECT_TABLE"
    {
        Collation::Utf8Bin
    } else {
        Collation::GeneralCi
    }
}

pub(crate) fn text(name: &str) -> ColumnDef {
    col(name, DataType::VarChar(512))
}

fn num(name: &str) -> ColumnDef {
    col(name, DataType::BigInt { unsigned: true })
}

/// The always-empty tables and their columns (those clients such as mysqldump select).
const EMPTY_TABLES: &[(&str, &[&str])] = &[
    (
        "FILES",
        &[
            "FILE_ID",
            "FILE_NAME",
            "FILE_TYPE",
            "TABLESPACE_NAME",
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "LOGFILE_GROUP_NAME",
            "LOGFILE_GROUP_NUMBER",
            "ENGINE",
            "FULLTEXT_KEYS",
            "DELETED_ROWS",
            "UPDATE_COUNT",
            "FREE_EXTENTS",
            "TOTAL_EXTENTS",
            "EXTENT_SIZE",
            "INITIAL_SIZE",
            "MAXIMUM_SIZE",
            "AUTOEXTEND_SIZE",
            "CREATION_TIME",
            "LAST_UPDATE_TIME",
            "LAST_ACCESS_TIME",
            "RECOVER_TIME",
            "TRANSACTION_COUNTER",
            "VERSION",
            "ROW_FORMAT",
            "TABLE_ROWS",
            "AVG_ROW_LENGTH",
            "DATA_LENGTH",
            "MAX_DATA_LENGTH",
            "INDEX_LENGTH",
            "DATA_FREE",
            "CREATE_TIME",
            "UPDATE_TIME",
            "CHECK_TIME",
            "CHECKSUM",
            "STATUS",
            "EXTRA",
        ],
    ),
    (
        "TRIGGERS",
        &[
            "TRIGGER_CATALOG",
            "TRIGGER_SCHEMA",
            "TRIGGER_NAME",
            "EVENT_MANIPULATION",
            "EVENT_OBJECT_CATALOG",
            "EVENT_OBJECT_SCHEMA",
            "EVENT_OBJECT_TABLE",
            "ACTION_ORDER",
            "ACTION_CONDITION",
            "ACTION_STATEMENT",
            "ACTION_ORIENTATION",
            "ACTION_TIMING",
            "CREATED",
            "SQL_MODE",
            "DEFINER",
            "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION",
            "DATABASE_COLLATION",
        ],
    ),
    (
        "VIEWS",
        &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "VIEW_DEFINITION",
            "CHECK_OPTION",
            "IS_UPDATABLE",
            "DEFINER",
            "SECURITY_TYPE",
            "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION",
            "ALGORITHM",
        ],
    ),
    (
        "ROUTINES",
        &[
            "SPECIFIC_NAME",
            "ROUTINE_CATALOG",
            "ROUTINE_SCHEMA",
            "ROUTINE_NAME",
            "ROUTINE_TYPE",
            "DATA_TYPE",
            "ROUTINE_BODY",
            "ROUTINE_DEFINITION",
            "IS_DETERMINISTIC",
            "SQL_DATA_ACCESS",
            "SECURITY_TYPE",
            "CREATED",
            "LAST_ALTERED",
            "SQL_MODE",
            "ROUTINE_COMMENT",
            "DEFINER",
        ],
    ),
    (
        "EVENTS",
        &[
            "EVENT_CATALOG",
            "EVENT_SCHEMA",
            "EVENT_NAME",
            "DEFINER",
            "TIME_ZONE",
            "EVENT_BODY",
            "EVENT_DEFINITION",
            "EVENT_TYPE",
            "STATUS",
        ],
    ),
    (
        "PARTITIONS",
        &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "PARTITION_NAME",
            "SUBPARTITION_NAME",
            "PARTITION_ORDINAL_POSITION",
            "PARTITION_METHOD",
            "PARTITION_EXPRESSION",
            "PARTITION_DESCRIPTION",
            "TABLE_ROWS",
        ],
    ),
];

/// Every table `information_schema` has, for SHOW TABLES.
pub fn table_names() -> Vec<&'static str> {
    let mut names = vec![
        "COLUMNS",
        "ENGINES",
        "PROCESSLIST",
        "SCHEMATA",
        "STATISTICS",
        "STRATA_MEMORY",
        "TABLES",
    ];
    names.extend(EMPTY_TABLES.iter().map(|(n, _)| *n));
    names.extend([
        "CHECK_CONSTRAINTS",
        "KEY_COLUMN_USAGE",
        "REFERENTIAL_CONSTRAINTS",
        "TABLE_CONSTRAINTS",
    ]);
    names.sort_unstable();
    names
}

/// Opens `information_schema.<name>` (case-insensitive), if it is one Strata provides;
/// `accounts` computes the `mysql` tables' rows, which TABLES counts.
pub fn table(
    catalog: &Arc<Catalog>,
    name: &str,
    accounts: Option<Arc<dyn AccountRows>>,
    tz_offset: i64,
) -> Result<Arc<dyn Table>> {
    if let Some(t) = crate::catalog::infoschema_programs::table(catalog, name) {
        return Ok(t);
    }
    let (kind, columns) = match name.to_ascii_uppercase().as_str() {
        "SCHEMATA" => (
            Kind::Schemata,
            vec![
                text("CATALOG_NAME"),
                text("SCHEMA_NAME"),
                text("DEFAULT_CHARACTER_SET_NAME"),
                text("DEFAULT_COLLATION_NAME"),
                text("SQL_PATH"),
                text("SCHEMA_COMMENT"),
            ],
        ),
        "TABLES" => (
            Kind::Tables,
            vec![
                text("TABLE_CATALOG"),
                text("TABLE_SCHEMA"),
                text("TABLE_NAME"),
                text("TABLE_TYPE"),
                text("ENGINE"),
                num("VERSION"),
                text("ROW_FORMAT"),
                num("TABLE_ROWS"),
                num("AVG_ROW_LENGTH"),
                num("DATA_LENGTH"),
                num("MAX_DATA_LENGTH"),
                num("INDEX_LENGTH"),
                num("DATA_FREE"),
                num("AUTO_INCREMENT"),
                col("CREATE_TIME", DataType::DateTime { fsp: 0 }),
                col("UPDATE_TIME", DataType::DateTime { fsp: 0 }),
                col("CHECK_TIME", DataType::DateTime { fsp: 0 }),
                text("TABLE_COLLATION"),
                num("CHECKSUM"),
                text("CREATE_OPTIONS"),
                text("TABLE_COMMENT"),
            ],
        ),
        "COLUMNS" => (
            Kind::Columns,
            vec![
                text("TABLE_CATALOG"),
                text("TABLE_SCHEMA"),
                text("TABLE_NAME"),
                text("COLUMN_NAME"),
                num("ORDINAL_POSITION"),
                text("COLUMN_DEFAULT"),
                text("IS_NULLABLE"),
                text("DATA_TYPE"),
                num("CHARACTER_MAXIMUM_LENGTH"),
                num("CHARACTER_OCTET_LENGTH"),
                num("NUMERIC_PRECISION"),
                num("NUMERIC_SCALE"),
                num("DATETIME_PRECISION"),
                text("CHARACTER_SET_NAME"),
                text("COLLATION_NAME"),
                text("COLUMN_TYPE"),
                text("COLUMN_KEY"),
                text("EXTRA"),
                text("PRIVILEGES"),
                text("COLUMN_COMMENT"),
                text("IS_GENERATED"),
                text("GENERATION_EXPRESSION"),
            ],
        ),
        "STATISTICS" => (
            Kind::Statistics,
            vec![
                text("TABLE_CATALOG"),
                text("TABLE_SCHEMA"),
                text("TABLE_NAME"),
                num("NON_UNIQUE"),
                text("INDEX_SCHEMA"),
                text("INDEX_NAME"),
                num("SEQ_IN_INDEX"),
                text("COLUMN_NAME"),
                text("COLLATION"),
                num("CARDINALITY"),
                num("SUB_PART"),
                text("PACKED"),
                text("NULLABLE"),
                text("INDEX_TYPE"),
                text("COMMENT"),
                text("INDEX_COMMENT"),
                text("IS_VISIBLE"),
                text("EXPRESSION"),
            ],
        ),
        "ENGINES" => (
            Kind::Engines,
            vec![
                text("ENGINE"),
                text("SUPPORT"),
                text("COMMENT"),
                text("TRANSACTIONS"),
                text("XA"),
                text("SAVEPOINTS"),
            ],
        ),
        "STRATA_MEMORY" => (
            Kind::Memory,
            vec![
                text("EVENT_NAME"),
                num("CURRENT_NUMBER_OF_BYTES_USED"),
                num("HIGH_NUMBER_OF_BYTES_USED"),
            ],
        ),
        "PROCESSLIST" => (
            Kind::Processlist,
            vec![
                num("ID"),
                text("USER"),
                text("HOST"),
                text("DB"),
                text("COMMAND"),
                num("TIME"),
                text("STATE"),
                text("INFO"),
            ],
        ),
        other if ConstraintTable::from_name(other).is_some() => {
            let t = ConstraintTable::from_name(other).unwrap_or(ConstraintTable::CheckConstraints);
            (
                Kind::Constraints(t),
                t.columns()
                    .iter()
                    .map(|c| {
                        if ConstraintTable::numeric(c) {
                            num(c)
                        } else {
                            text(c)
                        }
                    })
                    .collect(),
            )
        }
        "VIEWS" => (
            Kind::Views,
            EMPTY_TABLES
                .iter()
                .find(|(n, _)| *n == "VIEWS")
                .map(|(_, cols)| cols.iter().map(|c| text(c)).collect())
                .unwrap_or_default(),
        ),
        other => match EMPTY_TABLES.iter().find(|(n, _)| *n == other) {
            Some((_, cols)) => (Kind::Empty, cols.iter().map(|c| text(c)).collect()),
            None => {
                return Err(Error::NoSuchTable {
                    db: "information_schema".into(),
                    table: name.to_string(),
                })
            }
        },
    };
    let def = TableDef {
        options: Default::default(),
        db: "information_schema".into(),
        name: name.to_ascii_uppercase(),
        engine: "system".into(),
        columns,
        indexes: vec![],
        auto_increment_start: 1,
        comment: String::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        instant: None,
        default_collation: Default::default(),
    };
    Ok(Arc::new(ReadOnlyTable(InfoTable {
        def: Arc::new(def),
        kind,
        catalog: catalog.clone(),
        accounts,
        tz_offset,
    })))
}

fn s(v: &str) -> Value {
    Value::str(v)
}

fn u(v: u64) -> Value {
    Value::UInt(v)
}

impl InfoTable {
    fn rows(&self) -> Result<Vec<Vec<Value>>> {
        let cat = &self.catalog;
        let mut dbs = vec!["information_schema".to_string()];
        dbs.extend(cat.databases());
        if !dbs.iter().any(|d| d == systables::SCHEMA) {
            dbs.push(systables::SCHEMA.into());
            dbs[1..].sort();
        }
        let mut out = Vec::new();
        match self.kind {
            Kind::Schemata => {
                for d in &dbs {
                    let c = self.catalog.database_collation(d).unwrap_or_default();
                    out.push(vec![
                        s("def"),
                        s(d),
                        s(c.charset_name()),
                        s(c.name()),
                        Value::Null,
                        s(""),
                    ]);
                }
            }
            Kind::Empty => {}
            Kind::Memory => {
                use strata_types::memory;
                for (c, cur, high) in memory::snapshot() {
                    out.push(vec![s(c.event_name()), u(cur as u64), u(high as u64)]);
                }
                let (budget, working, limit) = memory::budget();
                out.push(vec![
                    s("memory/strata/working_memory_granted"),
                    u(working as u64),
                    u(if limit == usize::MAX { 0 } else { limit as u64 }),
                ]);
                out.push(vec![
                    s("memory/strata/max_memory"),
                    u(budget as u64),
                    u(budget as u64),
                ]);
                // What malloc hands out now, and (HIGH column) what it holds from the OS.
                let (in_use, held) = memory::heap();
                out.push(vec![s("memory/process/malloc_in_use"), u(in_use), u(held)]);
                let (rss, hwm) = memory::rss();
                out.push(vec![s("memory/process/resident_set"), u(rss), u(hwm)]);
            }
            Kind::Processlist => {
                for p in cat.processes.rows() {
                    out.push(process_row(p));
                }
            }
            Kind::Engines => {
                for e in cat.engines() {
                    // As SHOW ENGINES: savepoints where there are transactions, XA where
                    // the engine implements its prepare.
                    let tx = if e.transactional() { "YES" } else { "NO" };
                    let xa = if e.supports_xa() { "YES" } else { "NO" };
                    out.push(vec![
                        s(engine_display(e.name())),
                        s("YES"),
                        s(&e.describe()),
                        s(tx),
                        s(xa),
                        s(tx),
                    ]);
                }
            }
            Kind::Views => {
                for d in cat.databases() {
                    for v in cat.views(&d) {
                        out.push(vec![
                            s("def"),
                            s(&v.db),
                            s(&v.name),
                            s(&v.query),
                            s(&v.check_option),
                            s(if v.updatable { "YES" } else { "NO" }),
                            s(&format!("{}@{}", v.definer_user, v.definer_host)),
                            s(&v.security),
                            s(&v.character_set_client),
                            s(&v.collation_connection),
                            s(&v.algorithm),
                        ]);
                    }
                }
            }
            _ => {
                let mut names = cat.databases();
                if !names.iter().any(|d| d == systables::SCHEMA) {
                    names.push(systables::SCHEMA.into());
                    names.sort();
                }
                for d in names {
                    // The `mysql` tables (TABLES and COLUMNS list them, as MySQL does:
                    // dump tools find a table's engine and columns there).
                    if d == systables::SCHEMA && matches!(self.kind, Kind::Tables | Kind::Columns) {
                        for n in systables::mysql_table_names() {
                            let t = systables::mysql_table(n, self.accounts.clone())?;
                            self.table_rows(&d, &t, &mut out);
                        }
                    }
                    // `mysql`'s own tables too (the replica's position table).
                    for t in cat.tables(&d)? {
                        self.table_rows(&d, &t, &mut out);
                    }
                    for v in cat.views(&d) {
                        self.view_rows(&v, &mut out);
                    }
                }
            }
        }
        Ok(out)
    }

    /// A view's rows in TABLES (type `VIEW`, every figure NULL, comment `VIEW`) and
    /// COLUMNS (each column as described when the view was created).
    fn view_rows(&self, v: &crate::catalog::views::ViewDef, out: &mut Vec<Vec<Value>>) {
        match self.kind {
            Kind::Tables => {
                let mut r = vec![Value::Null; 21];
                r[0] = s("def");
                r[1] = s(&v.db);
                r[2] = s(&v.name);
                r[3] = s("VIEW");
                r[20] = s("VIEW");
                out.push(r);
            }
            Kind::Columns => {
                for (i, (name, c)) in v.columns.iter().zip(&v.column_info).enumerate() {
                    let base = c.type_text.split(['(', ' ']).next().unwrap_or("");
                    let charset = c.collation.as_ref().map(|coll| {
                        if coll == "binary" {
                            "binary"
                        } else {
                            "utf8mb4"
                        }
                    });
                    out.push(vec![
                        s("def"),
                        s(&v.db),
                        s(&v.name),
                        s(name),
                        u(i as u64 + 1),
                        c.default.as_deref().map_or(Value::Null, s),
                        s(if c.nullable { "YES" } else { "NO" }),
                        s(base),
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        charset.map_or(Value::Null, s),
                        c.collation.as_deref().map_or(Value::Null, s),
                        s(&c.type_text),
                        s(""),
                        s(""),
                        s("select,insert,update,references"),
                        s(""),
                        s("NEVER"),
                        Value::Null,
                    ]);
                }
            }
            _ => {}
        }
    }

    fn table_rows(&self, db: &str, t: &Arc<dyn Table>, out: &mut Vec<Vec<Value>>) {
        let def = t.def();
        match self.kind {
            Kind::Tables => {
                let st = t.status();
                out.push(vec![
                    s("def"),
                    s(db),
                    s(&def.name),
                    s("BASE TABLE"),
                    s(engine_display(&def.engine)),
                    u(10),
                    s(def.row_format_shown()),
                    u(st.rows),
                    u(st.data_length.checked_div(st.rows).unwrap_or(0)),
                    u(st.data_length),
                    u(0),
                    u(st.index_length),
                    u(st.data_free),
                    if def.auto_increment_column().is_some() {
                        u(st.auto_increment)
                    } else {
                        Value::Null
                    },
                    created_time(
                        self.catalog.table_created(&def.db, &def.name),
                        self.tz_offset,
                    ),
                    Value::Null,
                    Value::Null,
                    s(def.default_collation.name()),
                    Value::Null,
                    s(&def.options.information_schema_text()),
                    s(&def.comment),
                ]);
            }
            Kind::Columns => {
                for (i, c) in def.columns.iter().enumerate() {
                    let ty = &c.data_type;
                    let full = c.type_text();
                    let base = full.split(['(', ' ']).next().unwrap_or("").to_string();
                    let (cmax, coct) = match ty.max_len() {
                        Some(n) if ty.is_text() && !matches!(ty, DataType::Text(_)) => {
                            (u(n as u64), u(n as u64 * 4))
                        }
                        Some(n) => (u(n as u64), u(n as u64)),
                        // The longest member (ENUM), every member with its comma (SET).
                        None if matches!(ty, DataType::Enum(_) | DataType::Set(_)) => {
                            let bytes = c.display_length() as u64;
                            (u(bytes / 4), u(bytes))
                        }
                        None => (Value::Null, Value::Null),
                    };
                    let (prec, scale) = match ty {
                        DataType::TinyInt { .. } => (u(3), u(0)),
                        DataType::SmallInt { .. } => (u(5), u(0)),
                        DataType::MediumInt { .. } => (u(7), u(0)),
                        DataType::Int { .. } => (u(10), u(0)),
                        DataType::BigInt { unsigned } => (u(if *unsigned { 20 } else { 19 }), u(0)),
                        DataType::Float {
                            fixed: Some((m, d)),
                        }
                        | DataType::Double {
                            fixed: Some((m, d)),
                        } => (u(*m as u64), u(*d as u64)),
                        DataType::Float { .. } => (u(12), Value::Null),
                        DataType::Double { .. } => (u(22), Value::Null),
                        DataType::Decimal { precision, scale } => {
                            (u(*precision as u64), u(*scale as u64))
                        }
                        DataType::Bit(n) => (u(*n as u64), Value::Null),
                        _ => (Value::Null, Value::Null),
                    };
                    let key = def
                        .indexes
                        .iter()
                        .find(|ix| ix.columns.first() == Some(&i))
                        .map(|ix| {
                            if ix.primary {
                                "PRI"
                            } else if ix.unique && ix.columns.len() == 1 {
                                "UNI"
                            } else {
                                "MUL"
                            }
                        })
                        .unwrap_or("");
                    let default = match &c.default {
                        None => Value::Null,
                        Some(ColumnDefault::CurrentTimestamp) => s(&c.current_timestamp_text()),
                        Some(ColumnDefault::Value(v)) if v.is_null() => Value::Null,
                        Some(ColumnDefault::Value(Value::Bits(b))) => {
                            s(&strata_types::value::bits_literal(b))
                        }
                        Some(ColumnDefault::Value(v)) => s(&v.to_text()),
                        Some(ColumnDefault::Expr(t)) => s(t),
                    };
                    let text = ty.is_text();
                    out.push(vec![
                        s("def"),
                        s(db),
                        s(&def.name),
                        s(&c.name),
                        u(i as u64 + 1),
                        default,
                        s(if c.nullable { "YES" } else { "NO" }),
                        s(&base),
                        cmax,
                        coct,
                        prec,
                        scale,
                        ty.fsp().map_or(Value::Null, |f| u(f as u64)),
                        if text {
                            s(c.collation.charset_name())
                        } else {
                            Value::Null
                        },
                        if text {
                            s(c.collation.name())
                        } else {
                            Value::Null
                        },
                        s(&full),
                        s(key),
                        s(&c.extra_text()),
                        s("select,insert,update,references"),
                        s(&c.comment),
                        s(if c.generated.is_some() {
                            "ALWAYS"
                        } else {
                            "NEVER"
                        }),
                        c.generated.as_ref().map_or(Value::Null, |g| s(&g.expr)),
                    ]);
                }
            }
            Kind::Statistics => {
                let rows = t.status().rows;
                for ix in def.indexes_in_shown_order() {
                    for (seq, &c) in ix.columns.iter().enumerate() {
                        let col = &def.columns[c];
                        out.push(vec![
                            s("def"),
                            s(db),
                            s(&def.name),
                            u(!ix.unique as u64),
                            s(db),
                            s(&ix.name),
                            u(seq as u64 + 1),
                            s(&col.name),
                            s("A"),
                            u(rows),
                            Value::Null,
                            Value::Null,
                            s(if col.nullable { "YES" } else { "" }),
                            s("BTREE"),
                            s(""),
                            s(&ix.comment),
                            s(if ix.invisible { "NO" } else { "YES" }),
                            Value::Null,
                        ]);
                    }
                }
            }
            Kind::Constraints(which) => which.rows(&self.catalog, def, out),
            _ => {}
        }
    }
}

impl RowSource for InfoTable {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }
    fn rows(&self) -> Result<Vec<Vec<Value>>> {
        InfoTable::rows(self)
    }
}

/// One connection as a PROCESSLIST row: ID, USER, HOST, DB, COMMAND, TIME, STATE, INFO.
pub fn process_row(p: crate::catalog::processes::ProcessRow) -> Vec<Value> {
    vec![
        Value::UInt(p.id),
        s(&p.user),
        s(&p.host),
        p.db.as_deref().map_or(Value::Null, s),
        s(p.command),
        Value::Int(p.time as i64),
        s(&p.state),
        p.info.as_deref().map_or(Value::Null, s),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MySQL 8 (lower_case_table_names=0): schema and table names by their bytes,
    /// every other name case-insensitively.
    #[test]
    fn name_columns_have_mysqls_collations() {
        for n in ["TABLE_SCHEMA", "TABLE_NAME", "SCHEMA_NAME", "INDEX_SCHEMA"] {
            assert_eq!(text(n).collation, Collation::Utf8Bin, "{n}");
        }
        for n in [
            "INDEX_NAME",
            "COLUMN_NAME",
            "ENGINE",
            "DATA_TYPE",
            "CONSTRAINT_NAME",
        ] {
            assert_eq!(text(n).collation, Collation::GeneralCi, "{n}");
        }
        assert_eq!(num("ORDINAL_POSITION").collation, Collation::Binary);
    }
}
