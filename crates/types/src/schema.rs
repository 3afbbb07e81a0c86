//! Table definitions as the catalog stores them and engines receive them: columns with
//! their SQL types, nullability, defaults and collations; indexes as lists of column
//! positions. The catalog serializes these (serde) into the data directory.

pub use crate::collation::Collation;
use crate::output::FieldType;
use crate::value::Value;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DataType {
    TinyInt {
        unsigned: bool,
    },
    SmallInt {
        unsigned: bool,
    },
    MediumInt {
        unsigned: bool,
    },
    Int {
        unsigned: bool,
    },
    BigInt {
        unsigned: bool,
    },
    Float,
    Double,
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// CHAR(n): n characters, stored padded to n.
    Char(u32),
    VarChar(u32),
    Binary(u32),
    VarBinary(u32),
    /// TEXT kinds by their byte limit: 255, 65535, 16M-1, 4G-1.
    Text(u32),
    Blob(u32),
    Date,
    DateTime,
    Timestamp,
    /// JSON: a document in the binary form of docs/format/json.md.
    Json,
    /// BIT(n), 1 ≤ n ≤ 64: values are [`crate::Value::Bits`], (n+7)/8 bytes big-endian.
    Bit(u8),
}

impl DataType {
    pub fn is_integer(&self) -> bool {
        matches!(
            self,
            DataType::TinyInt { .. }
                | DataType::SmallInt { .. }
                | DataType::MediumInt { .. }
                | DataType::Int { .. }
                | DataType::BigInt { .. }
        )
    }

    pub fn is_unsigned(&self) -> bool {
        matches!(
            self,
            DataType::TinyInt { unsigned: true }
                | DataType::SmallInt { unsigned: true }
                | DataType::MediumInt { unsigned: true }
                | DataType::Int { unsigned: true }
                | DataType::BigInt { unsigned: true }
        )
    }

    /// Character or byte strings (including TEXT and BLOB).
    pub fn is_string(&self) -> bool {
        matches!(
            self,
            DataType::Char(_)
                | DataType::VarChar(_)
                | DataType::Binary(_)
                | DataType::VarBinary(_)
                | DataType::Text(_)
                | DataType::Blob(_)
        )
    }

    /// Strings that carry a character set (compared by collation, not bytes).
    pub fn is_text(&self) -> bool {
        matches!(
            self,
            DataType::Char(_) | DataType::VarChar(_) | DataType::Text(_)
        )
    }

    pub fn is_temporal(&self) -> bool {
        matches!(
            self,
            DataType::Date | DataType::DateTime | DataType::Timestamp
        )
    }

    /// Inclusive range of an integer type.
    pub fn int_range(&self) -> Option<(i128, i128)> {
        let (bits, unsigned) = match *self {
            DataType::TinyInt { unsigned } => (8, unsigned),
            DataType::SmallInt { unsigned } => (16, unsigned),
            DataType::MediumInt { unsigned } => (24, unsigned),
            DataType::Int { unsigned } => (32, unsigned),
            DataType::BigInt { unsigned } => (64, unsigned),
            _ => return None,
        };
        Some(if unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        })
    }

    /// Maximum length: characters for text types, bytes for binary types.
    pub fn max_len(&self) -> Option<u32> {
        match *self {
            DataType::Char(n)
            | DataType::VarChar(n)
            | DataType::Binary(n)
            | DataType::VarBinary(n)
            | DataType::Text(n)
            | DataType::Blob(n) => Some(n),
            _ => None,
        }
    }

    /// Bytes a value of this type takes in a fixed-length row, or None if variable.
    /// CHAR(n) counts 4 bytes per character (utf8mb4), as MySQL sizes it.
    pub fn fixed_width(&self) -> Option<usize> {
        Some(match *self {
            DataType::TinyInt { .. } => 1,
            DataType::SmallInt { .. } => 2,
            DataType::MediumInt { .. } => 3,
            DataType::Int { .. } | DataType::Float => 4,
            DataType::BigInt { .. } | DataType::Double => 8,
            DataType::Decimal { .. } => 16,
            DataType::Date | DataType::DateTime | DataType::Timestamp => 8,
            DataType::Char(n) => 4 * n as usize,
            DataType::Binary(n) => n as usize,
            _ => return None,
        })
    }

    /// The protocol's column type code for this SQL type.
    pub fn field_type(&self) -> FieldType {
        match self {
            DataType::TinyInt { .. } => FieldType::Tiny,
            DataType::SmallInt { .. } => FieldType::Short,
            DataType::MediumInt { .. } => FieldType::Int24,
            DataType::Int { .. } => FieldType::Long,
            DataType::BigInt { .. } => FieldType::LongLong,
            DataType::Float => FieldType::Float,
            DataType::Double => FieldType::Double,
            DataType::Decimal { .. } => FieldType::NewDecimal,
            DataType::Char(_) | DataType::Binary(_) => FieldType::String,
            DataType::VarChar(_) | DataType::VarBinary(_) => FieldType::VarString,
            DataType::Text(_) | DataType::Blob(_) => FieldType::Blob,
            DataType::Date => FieldType::Date,
            DataType::DateTime => FieldType::DateTime,
            DataType::Timestamp => FieldType::Timestamp,
            DataType::Json => FieldType::Json,
            DataType::Bit(_) => FieldType::Bit,
        }
    }

    /// The column's display length in the protocol's column definition.
    pub fn display_length(&self, collation: Collation) -> u32 {
        let mb = if collation == Collation::Binary { 1 } else { 4 };
        match *self {
            DataType::TinyInt { unsigned } => 4 - unsigned as u32,
            DataType::SmallInt { unsigned } => 6 - unsigned as u32,
            DataType::MediumInt { unsigned } => 9 - unsigned as u32,
            DataType::Int { unsigned } => 11 - unsigned as u32,
            DataType::BigInt { .. } => 20,
            DataType::Float => 12,
            DataType::Double => 22,
            DataType::Decimal { precision, scale } => precision as u32 + (scale > 0) as u32 + 1,
            DataType::Char(n) | DataType::VarChar(n) => n.saturating_mul(mb),
            DataType::Binary(n)
            | DataType::VarBinary(n)
            | DataType::Text(n)
            | DataType::Blob(n) => n,
            DataType::Date => 10,
            DataType::DateTime | DataType::Timestamp => 19,
            DataType::Json => u32::MAX,
            DataType::Bit(n) => n as u32,
        }
    }

    /// The type as SHOW CREATE TABLE prints it (MySQL 8 style).
    pub fn sql_name(&self) -> String {
        let u = |unsigned: bool| if unsigned { " unsigned" } else { "" };
        match *self {
            DataType::TinyInt { unsigned } => format!("tinyint{}", u(unsigned)),
            DataType::SmallInt { unsigned } => format!("smallint{}", u(unsigned)),
            DataType::MediumInt { unsigned } => format!("mediumint{}", u(unsigned)),
            DataType::Int { unsigned } => format!("int{}", u(unsigned)),
            DataType::BigInt { unsigned } => format!("bigint{}", u(unsigned)),
            DataType::Float => "float".into(),
            DataType::Double => "double".into(),
            DataType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            DataType::Char(n) => format!("char({n})"),
            DataType::VarChar(n) => format!("varchar({n})"),
            DataType::Binary(n) => format!("binary({n})"),
            DataType::VarBinary(n) => format!("varbinary({n})"),
            DataType::Text(n) => text_kind(n, "text"),
            DataType::Blob(n) => text_kind(n, "blob"),
            DataType::Date => "date".into(),
            DataType::DateTime => "datetime".into(),
            DataType::Timestamp => "timestamp".into(),
            DataType::Json => "json".into(),
            DataType::Bit(n) => format!("bit({n})"),
        }
    }
}

fn text_kind(limit: u32, base: &str) -> String {
    let prefix = match limit {
        0..=255 => "tiny",
        256..=65535 => "",
        65536..=16777215 => "medium",
        _ => "long",
    };
    format!("{prefix}{base}")
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ColumnDefault {
    Value(Value),
    CurrentTimestamp,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnDef {
    pub name: String,
    pub data_type: DataType,
    pub nullable: bool,
    pub default: Option<ColumnDefault>,
    pub auto_increment: bool,
    /// `ON UPDATE CURRENT_TIMESTAMP`.
    pub on_update_now: bool,
    pub collation: Collation,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexDef {
    /// `PRIMARY` for the primary key.
    pub name: String,
    /// Positions of the indexed columns in [`TableDef::columns`].
    pub columns: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableDef {
    pub db: String,
    pub name: String,
    /// The engine name as stored: `heap` or `btree`.
    pub engine: String,
    pub columns: Vec<ColumnDef>,
    /// The primary key, when there is one, is always `indexes[0]`.
    pub indexes: Vec<IndexDef>,
    /// First AUTO_INCREMENT value for a new table (`AUTO_INCREMENT=n`).
    pub auto_increment_start: u64,
    pub comment: String,
    /// FOREIGN KEY constraints of this (child) table, in the order they were added
    /// (`docs/format/catalog.md`; absent in catalogs written before them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_keys: Vec<crate::constraint::ForeignKeyDef>,
    /// CHECK constraints, in the order they were added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<crate::constraint::CheckDef>,
}

impl TableDef {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    pub fn primary_key(&self) -> Option<&IndexDef> {
        self.indexes.first().filter(|i| i.primary)
    }

    /// Position of the AUTO_INCREMENT column.
    pub fn auto_increment_column(&self) -> Option<usize> {
        self.columns.iter().position(|c| c.auto_increment)
    }
}
