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
    /// FLOAT and DOUBLE. `fixed` is (M, D) of the deprecated FLOAT(M,D) / DOUBLE(M,D):
    /// values are stored rounded to D decimals within ±(10^(M-D) - 10^-D) and shown
    /// with D decimals. Catalogs written before it hold the bare `"Float"` / `"Double"`,
    /// read as None ([`legacy_data_type`]).
    Float {
        fixed: Option<(u8, u8)>,
    },
    Double {
        fixed: Option<(u8, u8)>,
    },
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
    /// DATETIME(fsp): fsp fraction digits, 0-6. Catalogs written before fractional
    /// seconds hold the bare name `"DateTime"`, read as fsp 0 ([`legacy_data_type`]).
    DateTime {
        fsp: u8,
    },
    Timestamp {
        fsp: u8,
    },
    /// TIME(fsp): a signed duration, -838:59:59 to 838:59:59 (`time_value`).
    Time {
        fsp: u8,
    },
    /// YEAR (YEAR(4)): 1901-2155, and 0 shown as 0000.
    Year,
    /// JSON: a document in the binary form of docs/format/json.md.
    Json,
    /// BIT(n), 1 ≤ n ≤ 64: values are [`crate::Value::Bits`], (n+7)/8 bytes big-endian.
    Bit(u8),
    /// ENUM('a', …) with this many members (the list is [`ColumnDef::members`]):
    /// values are [`crate::Value::Member`], stored as the member's position (`member.rs`).
    Enum(u16),
    /// SET('a', …) with this many members (at most 64), stored as a bitmask.
    Set(u8),
}

impl DataType {
    /// The D of FLOAT(M,D) / DOUBLE(M,D): the decimals its values are rounded to and
    /// shown with. None for every other type.
    pub fn fixed_decimals(&self) -> Option<u8> {
        match *self {
            DataType::Float {
                fixed: Some((_, d)),
            }
            | DataType::Double {
                fixed: Some((_, d)),
            } => Some(d),
            _ => None,
        }
    }

    /// FLOAT (`double` false) or DOUBLE from a result column's length and decimals: a
    /// fixed number of decimals (below MySQL's NOT_FIXED_DEC, 31) is (M, D), so a derived
    /// table's or view's column shows its values as the query did.
    pub fn real_from_meta(double: bool, length: u32, decimals: u8) -> DataType {
        let fixed = (decimals < crate::output::NOT_FIXED_DECIMALS).then(|| {
            (
                length.clamp(u32::from(decimals.max(1)), 255) as u8,
                decimals,
            )
        });
        if double {
            DataType::Double { fixed }
        } else {
            DataType::Float { fixed }
        }
    }

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

    /// Types that carry a character set (compared by collation, not bytes): the text
    /// strings, and ENUM and SET, whose members are text.
    pub fn is_text(&self) -> bool {
        matches!(
            self,
            DataType::Char(_)
                | DataType::VarChar(_)
                | DataType::Text(_)
                | DataType::Enum(_)
                | DataType::Set(_)
        )
    }

    /// Date and date-time types (their values are `Value::DateTime`).
    pub fn is_temporal(&self) -> bool {
        matches!(
            self,
            DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. }
        )
    }

    /// The fraction digits of a DATETIME, TIMESTAMP or TIME column.
    pub fn fsp(&self) -> Option<u8> {
        match *self {
            DataType::DateTime { fsp } | DataType::Timestamp { fsp } | DataType::Time { fsp } => {
                Some(fsp)
            }
            _ => None,
        }
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
            DataType::Int { .. } | DataType::Float { .. } => 4,
            DataType::BigInt { .. } | DataType::Double { .. } => 8,
            DataType::Decimal { precision, .. } if precision > crate::decimal::NARROW => 32,
            DataType::Decimal { .. } => 16,
            DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. } => 8,
            DataType::Time { .. } | DataType::Year => 8,
            DataType::Enum(_) => 2,
            DataType::Set(_) => 8,
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
            DataType::Float { .. } => FieldType::Float,
            DataType::Double { .. } => FieldType::Double,
            DataType::Decimal { .. } => FieldType::NewDecimal,
            DataType::Char(_) | DataType::Binary(_) => FieldType::String,
            DataType::VarChar(_) | DataType::VarBinary(_) => FieldType::VarString,
            DataType::Text(_) | DataType::Blob(_) => FieldType::Blob,
            DataType::Date => FieldType::Date,
            DataType::DateTime { .. } => FieldType::DateTime,
            DataType::Timestamp { .. } => FieldType::Timestamp,
            DataType::Time { .. } => FieldType::Time,
            DataType::Year => FieldType::Year,
            DataType::Json => FieldType::Json,
            DataType::Bit(_) => FieldType::Bit,
            // MySQL describes ENUM and SET columns as CHAR with the ENUM/SET flag.
            DataType::Enum(_) | DataType::Set(_) => FieldType::String,
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
            DataType::Float {
                fixed: Some((m, _)),
            }
            | DataType::Double {
                fixed: Some((m, _)),
            } => m as u32,
            DataType::Float { .. } => 12,
            DataType::Double { .. } => 22,
            DataType::Decimal { precision, scale } => precision as u32 + (scale > 0) as u32 + 1,
            DataType::Char(n) | DataType::VarChar(n) => n.saturating_mul(mb),
            DataType::Binary(n)
            | DataType::VarBinary(n)
            | DataType::Text(n)
            | DataType::Blob(n) => n,
            DataType::Date => 10,
            // As MySQL sends them: the fraction adds its digits and the point.
            DataType::DateTime { fsp } | DataType::Timestamp { fsp } => 19 + frac_len(fsp),
            DataType::Time { fsp } => 10 + frac_len(fsp),
            DataType::Year => 4,
            DataType::Json => u32::MAX,
            DataType::Bit(n) => n as u32,
            // The longest member (ENUM) or all members with commas (SET) are what
            // [`ColumnDef::display_length`] measures; without the list, a byte each.
            DataType::Enum(_) | DataType::Set(_) => mb,
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
            DataType::Float {
                fixed: Some((m, d)),
            } => format!("float({m},{d})"),
            DataType::Double {
                fixed: Some((m, d)),
            } => format!("double({m},{d})"),
            DataType::Float { .. } => "float".into(),
            DataType::Double { .. } => "double".into(),
            DataType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            DataType::Char(n) => format!("char({n})"),
            DataType::VarChar(n) => format!("varchar({n})"),
            DataType::Binary(n) => format!("binary({n})"),
            DataType::VarBinary(n) => format!("varbinary({n})"),
            DataType::Text(n) => text_kind(n, "text"),
            DataType::Blob(n) => text_kind(n, "blob"),
            DataType::Date => "date".into(),
            DataType::DateTime { fsp } => with_fsp("datetime", fsp),
            DataType::Timestamp { fsp } => with_fsp("timestamp", fsp),
            DataType::Time { fsp } => with_fsp("time", fsp),
            DataType::Year => "year".into(),
            DataType::Json => "json".into(),
            DataType::Bit(n) => format!("bit({n})"),
            // Without the member list (see [`ColumnDef::type_text`]).
            DataType::Enum(_) => "enum".into(),
            DataType::Set(_) => "set".into(),
        }
    }
}

fn frac_len(fsp: u8) -> u32 {
    if fsp > 0 {
        fsp as u32 + 1
    } else {
        0
    }
}

fn with_fsp(name: &str, fsp: u8) -> String {
    if fsp > 0 {
        format!("{name}({fsp})")
    } else {
        name.into()
    }
}

/// Reads a column's type from the catalog, accepting the bare `"DateTime"` and
/// `"Timestamp"` that catalogs wrote before these types carried their fraction digits
/// (read as fsp 0) and the bare `"Float"` / `"Double"` written before FLOAT(M,D) and
/// DOUBLE(M,D) were kept (read as plain FLOAT / DOUBLE); every other form is the
/// derived one (docs/format/catalog.md).
fn legacy_data_type<'de, D: serde::Deserializer<'de>>(d: D) -> Result<DataType, D::Error> {
    use serde::de::{self, IntoDeserializer};
    struct V;
    impl<'de> de::Visitor<'de> for V {
        type Value = DataType;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a column type")
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<DataType, E> {
            match s {
                "DateTime" => Ok(DataType::DateTime { fsp: 0 }),
                "Timestamp" => Ok(DataType::Timestamp { fsp: 0 }),
                "Float" => Ok(DataType::Float { fixed: None }),
                "Double" => Ok(DataType::Double { fixed: None }),
                other => DataType::deserialize(other.into_deserializer()),
            }
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<DataType, A::Error> {
            DataType::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(V)
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
    /// `DEFAULT (expr)` (MySQL 8.0.13+): the expression in MySQL 8's printed form
    /// (`now()`, `(1 + 2)`, `_utf8mb4'abc'`), parsed and bound again by the statements
    /// that insert rows and evaluated per row (`docs/format/catalog.md`).
    Expr(String),
}

/// A generated column's expression (`AS (expr) VIRTUAL|STORED`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generated {
    /// The expression in MySQL 8's printed form (`` (`a` + `b`) ``).
    pub expr: String,
    /// STORED (true) or VIRTUAL (false). Both are computed when a row is written and
    /// kept in the row (docs/format/catalog.md); VIRTUAL differs only in what SHOW
    /// CREATE TABLE and information_schema say.
    pub stored: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnDef {
    pub name: String,
    #[serde(deserialize_with = "legacy_data_type")]
    pub data_type: DataType,
    pub nullable: bool,
    pub default: Option<ColumnDefault>,
    pub auto_increment: bool,
    /// `ON UPDATE CURRENT_TIMESTAMP`.
    pub on_update_now: bool,
    pub collation: Collation,
    /// The members of an ENUM or SET column, in definition order (trailing spaces
    /// removed, as MySQL stores them); empty for every other type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// A generated column's expression; absent for every other column (catalogs
    /// written before generated columns load unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<Generated>,
    /// The column's COMMENT as written (empty: none); absent in catalogs written
    /// before column comments were kept, which load with no comment.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// UNSIGNED on a DECIMAL, FLOAT or DOUBLE column (deprecated in MySQL 8 but
    /// accepted: negative values are out of range). Integer types carry their UNSIGNED
    /// in the [`DataType`]; absent (false) in catalogs written before this field.
    #[serde(default, skip_serializing_if = "is_false")]
    pub real_unsigned: bool,
    /// INVISIBLE (MySQL 8.0.23+): left out of `SELECT *`, `TABLE t`, and INSERT or LOAD
    /// DATA without a column list; read and written when named. Absent (false) in
    /// catalogs written before this field (docs/format/catalog.md).
    #[serde(default, skip_serializing_if = "is_false")]
    pub invisible: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl ColumnDef {
    /// A column of `data_type` with nothing else declared: no default, AUTO_INCREMENT,
    /// ON UPDATE, ENUM/SET members, generation, comment or UNSIGNED real.
    pub fn plain(
        name: impl Into<String>,
        data_type: DataType,
        nullable: bool,
        collation: crate::collation::Collation,
    ) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            data_type,
            nullable,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation,
            members: Vec::new(),
            generated: None,
            comment: String::new(),
            real_unsigned: false,
            invisible: false,
        }
    }

    /// The column type as SHOW CREATE TABLE, SHOW COLUMNS and information_schema's
    /// COLUMN_TYPE print it (`enum('a','b')` with its members).
    pub fn type_text(&self) -> String {
        match self.data_type {
            DataType::Enum(_) => crate::member::type_text("enum", &self.members),
            DataType::Set(_) => crate::member::type_text("set", &self.members),
            t if self.real_unsigned => format!("{} unsigned", t.sql_name()),
            t => t.sql_name(),
        }
    }

    /// Whether the column is UNSIGNED: an unsigned integer type, or a DECIMAL, FLOAT
    /// or DOUBLE declared UNSIGNED (the protocol's UNSIGNED flag, the binary log's
    /// signedness).
    pub fn is_unsigned(&self) -> bool {
        self.data_type.is_unsigned() || self.real_unsigned
    }

    /// The display length of the column's values in the protocol's column definition:
    /// for ENUM the longest member, for SET every member with its comma, in bytes of
    /// the column's character set.
    pub fn display_length(&self) -> u32 {
        let mb = if self.collation == Collation::Binary {
            1
        } else {
            4
        };
        let chars = |m: &String| m.chars().count() as u32;
        match self.data_type {
            DataType::Enum(_) => self.members.iter().map(chars).max().unwrap_or(0) * mb,
            DataType::Set(_) => {
                let all: u32 = self.members.iter().map(chars).sum();
                (all + self.members.len().saturating_sub(1) as u32) * mb
            }
            t => t.display_length(self.collation),
        }
    }

    /// The Extra text of SHOW COLUMNS and information_schema.COLUMNS.EXTRA, as MySQL 8
    /// prints it: `DEFAULT_GENERATED` for a CURRENT_TIMESTAMP or expression default
    /// (`DEFAULT_GENERATED on update CURRENT_TIMESTAMP`), `auto_increment`, `VIRTUAL
    /// GENERATED` / `STORED GENERATED`, each followed by `INVISIBLE` for an invisible
    /// column.
    pub fn extra_text(&self) -> String {
        let mut e = Vec::new();
        if let Some(g) = &self.generated {
            e.push(
                if g.stored {
                    "STORED GENERATED"
                } else {
                    "VIRTUAL GENERATED"
                }
                .to_string(),
            );
        }
        if matches!(
            self.default,
            Some(ColumnDefault::CurrentTimestamp | ColumnDefault::Expr(_))
        ) {
            e.push("DEFAULT_GENERATED".to_string());
        }
        if self.auto_increment {
            e.push("auto_increment".to_string());
        }
        if self.on_update_now {
            e.push(format!("on update {}", self.current_timestamp_text()));
        }
        if self.invisible {
            e.push("INVISIBLE".to_string());
        }
        e.join(" ")
    }

    /// `CURRENT_TIMESTAMP` with the column's precision (`CURRENT_TIMESTAMP(6)`), as
    /// SHOW CREATE TABLE, SHOW COLUMNS and information_schema print the default and the
    /// ON UPDATE clause.
    pub fn current_timestamp_text(&self) -> String {
        match self.data_type.fsp() {
            Some(f) if f > 0 => format!("CURRENT_TIMESTAMP({f})"),
            _ => "CURRENT_TIMESTAMP".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexDef {
    /// `PRIMARY` for the primary key.
    pub name: String,
    /// Positions of the indexed columns in [`TableDef::columns`].
    pub columns: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
    /// The index's COMMENT (empty: none); absent in catalogs written before index
    /// comments were kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// MySQL 8's INVISIBLE index: kept up to date (a unique one still refuses
    /// duplicates) but never chosen by the optimizer; absent (false) in catalogs written
    /// before invisible indexes.
    #[serde(default, skip_serializing_if = "is_false")]
    pub invisible: bool,
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
    /// Columns added by an instant ADD COLUMN (`btree` only; `docs/format/catalog.md`):
    /// how many columns rows written before the first one hold, and what the added ones
    /// read as in those rows. None for a table never altered so (and after a rebuild).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instant: Option<InstantColumns>,
    /// The table's default collation (`DEFAULT CHARSET … COLLATE …`): what a text column
    /// added or redefined without one of its own gets (docs/format/catalog.md; absent in
    /// catalogs written before it, and for utf8mb4_general_ci).
    #[serde(default, skip_serializing_if = "Collation::is_server_default")]
    pub default_collation: Collation,
    /// ROW_FORMAT, KEY_BLOCK_SIZE, STATS_* and the other options kept to be shown
    /// (docs/format/catalog.md; absent when none is set).
    #[serde(default, skip_serializing_if = "crate::TableOptions::is_default")]
    pub options: crate::TableOptions,
}

/// The physical columns of a table's stored rows when they differ from its columns as
/// defined (docs/format/catalog.md, `tables[].instant`): after instant ADD COLUMNs (added
/// physically at the end, wherever they go in the definition) and instant DROP COLUMNs
/// (their bytes stay in older rows until a rebuild). Every stored row holds a prefix of
/// the physical columns, at least `cols` of them. A stored row written before physical
/// column `cols + i` existed reads `defaults[i]` there: the column's default at the ADD,
/// kept when the column's DEFAULT changes later, as MySQL 8 keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstantColumns {
    /// The number of physical columns every stored row holds: the columns before the
    /// first instant change.
    pub cols: usize,
    /// The stored value of each physical column from `cols` on, in rows older than it.
    pub defaults: Vec<crate::Value>,
    /// What each physical column holds; None: physical column `i` is column `i` of the
    /// definition, for all of them (instant ADDs at the end only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Vec<PhysicalColumn>>,
    /// Instant ADD/DROP statements since the last rebuild (None: catalogs written before
    /// the field, read as `defaults.len()`, an upper bound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<u32>,
}

/// MySQL 8's limit of row versions: instant ADD/DROP statements a table takes before it
/// must be rebuilt.
pub const MAX_ROW_VERSIONS: u32 = 64;

/// One physical column of stored rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PhysicalColumn {
    /// Holds the definition's column of this number.
    Column(usize),
    /// A column dropped instantly, of this type: older rows hold its bytes, which a
    /// reader steps over; newer rows store NULL there.
    Dropped(DataType),
}

impl InstantColumns {
    /// The physical columns of a table of `ncols` columns, in order.
    pub fn physical(&self, ncols: usize) -> Vec<PhysicalColumn> {
        match &self.layout {
            Some(l) => l.clone(),
            None => (0..ncols).map(PhysicalColumn::Column).collect(),
        }
    }

    /// The entry of a table after an instant ADD/DROP COLUMN statement on `old`: the new
    /// definition's column `i` is `old`'s column `sources[i]`, or added (None), whose
    /// values in the rows already stored are `added` in order. Added columns are
    /// appended physically; an old column absent from `sources` becomes a dropped
    /// physical column. The layout is left out when it is the definition's order.
    pub fn after_alter(old: &TableDef, sources: &[Option<usize>], added: &[crate::Value]) -> Self {
        let inst = old.instant.clone().unwrap_or(InstantColumns {
            cols: old.columns.len(),
            defaults: Vec::new(),
            layout: None,
            versions: Some(0),
        });
        let mut new_pos = vec![None; old.columns.len()];
        for (i, s) in sources.iter().enumerate() {
            if let Some(slot) = s.and_then(|j| new_pos.get_mut(j)) {
                *slot = Some(i);
            }
        }
        let mut layout: Vec<PhysicalColumn> = inst
            .physical(old.columns.len())
            .into_iter()
            .map(|p| match p {
                PhysicalColumn::Column(j) => match new_pos.get(j).copied().flatten() {
                    Some(i) => PhysicalColumn::Column(i),
                    None => PhysicalColumn::Dropped(
                        old.columns
                            .get(j)
                            .map_or(DataType::Blob(0), |c| c.data_type),
                    ),
                },
                dropped => dropped,
            })
            .collect();
        let mut defaults = inst.defaults.clone();
        let mut values = added.iter();
        for (i, s) in sources.iter().enumerate() {
            if s.is_none() {
                layout.push(PhysicalColumn::Column(i));
                defaults.push(values.next().cloned().unwrap_or(crate::Value::Null));
            }
        }
        let identity = layout.len() == sources.len()
            && layout
                .iter()
                .enumerate()
                .all(|(i, p)| *p == PhysicalColumn::Column(i));
        InstantColumns {
            cols: inst.cols,
            defaults,
            layout: (!identity).then_some(layout),
            versions: Some(inst.row_versions().saturating_add(1)),
        }
    }

    /// Puts a row stored in physical order (`stored`, a prefix of the physical columns)
    /// into the order of a definition of `ncols` columns: columns past the prefix read
    /// their recorded default. None when `stored` is longer than the physical columns.
    /// (The `btree` engine does this inside its row codec; this form serves engines
    /// that keep rows as values.)
    pub fn logical_row(&self, ncols: usize, stored: &[crate::Value]) -> Option<Vec<crate::Value>> {
        let phys = self.physical(ncols);
        if stored.len() > phys.len() {
            return None;
        }
        let mut row = vec![crate::Value::Null; ncols];
        for (p, c) in phys.iter().enumerate() {
            if let PhysicalColumn::Column(l) = c {
                let v = match stored.get(p) {
                    Some(v) => v.clone(),
                    None => self.defaults.get(p.checked_sub(self.cols)?)?.clone(),
                };
                *row.get_mut(*l)? = v;
            }
        }
        Some(row)
    }

    /// A row in a definition's order (`row`) in physical order: dropped columns NULL.
    pub fn physical_row(&self, row: &[crate::Value]) -> Vec<crate::Value> {
        self.physical(row.len())
            .iter()
            .map(|p| match p {
                PhysicalColumn::Column(l) => row.get(*l).cloned().unwrap_or(crate::Value::Null),
                PhysicalColumn::Dropped(_) => crate::Value::Null,
            })
            .collect()
    }

    /// The instant ADD/DROP statements made since the last rebuild.
    pub fn row_versions(&self) -> u32 {
        self.versions
            .unwrap_or_else(|| u32::try_from(self.defaults.len()).unwrap_or(u32::MAX))
    }
}

impl TableDef {
    /// The `Row_format` of SHOW TABLE STATUS and information_schema.TABLES: the declared
    /// one, else what the engine stores (fixed-width rows of the heap engine are `Fixed`).
    pub fn row_format_shown(&self) -> &'static str {
        let all_fixed = self
            .columns
            .iter()
            .all(|c| c.data_type.fixed_width().is_some());
        self.options
            .row_format_shown(self.engine == "btree", all_fixed)
    }

    /// The positions of the columns `SELECT *` and a column-less INSERT name: every
    /// column but the INVISIBLE ones, in definition order.
    pub fn visible_columns(&self) -> Vec<usize> {
        (0..self.columns.len())
            .filter(|&i| !self.columns[i].invisible)
            .collect()
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    pub fn primary_key(&self) -> Option<&IndexDef> {
        self.indexes.first().filter(|i| i.primary)
    }

    /// The keys in the order MySQL keeps them, which SHOW CREATE TABLE, SHOW INDEX,
    /// SHOW COLUMNS' `Key` and information_schema.STATISTICS follow: unique keys first
    /// (the primary key, then those on NOT NULL columns only, then the others), then the
    /// rest, each group in the order its keys were added. `indexes` itself stays in the
    /// order of definition, since the engines number their indexes by it.
    pub fn indexes_in_shown_order(&self) -> Vec<&IndexDef> {
        let rank = |ix: &IndexDef| match (ix.primary, ix.unique) {
            (true, _) => 0,
            (false, true)
                if ix
                    .columns
                    .iter()
                    .all(|&c| self.columns.get(c).is_some_and(|c| !c.nullable)) =>
            {
                1
            }
            (false, true) => 2,
            (false, false) => 3,
        };
        let mut shown: Vec<&IndexDef> = self.indexes.iter().collect();
        shown.sort_by_key(|ix| rank(ix));
        shown
    }

    /// Position of the AUTO_INCREMENT column.
    pub fn auto_increment_column(&self) -> Option<usize> {
        self.columns.iter().position(|c| c.auto_increment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col_json(ty: &str) -> String {
        format!(
            r#"{{"name":"a","data_type":{ty},"nullable":true,"default":null,
                "auto_increment":false,"on_update_now":false,"collation":"Binary"}}"#
        )
    }

    #[test]
    fn keys_show_unique_first_and_old_indexes_load_visible() {
        let col = |nullable: bool| -> ColumnDef {
            let mut c: ColumnDef =
                serde_json::from_str(&col_json(r#"{"Int":{"unsigned":false}}"#)).unwrap();
            c.nullable = nullable;
            c
        };
        let ix = |name: &str, col: usize, unique: bool, primary: bool| IndexDef {
            name: name.into(),
            columns: vec![col],
            unique,
            primary,
            comment: String::new(),
            invisible: false,
        };
        // The fields a catalog must hold; the rest take their defaults.
        let mut def: TableDef = serde_json::from_str(
            r#"{"db":"d","name":"t","engine":"btree","columns":[],"indexes":[],
                "auto_increment_start":1,"comment":""}"#,
        )
        .unwrap();
        def.columns = vec![col(false), col(true), col(false)];
        def.indexes = vec![
            ix("PRIMARY", 0, true, true),
            ix("k", 1, false, false),
            ix("u_null", 1, true, false),
            ix("u_not_null", 2, true, false),
            ix("k2", 2, false, false),
        ];
        let shown: Vec<&str> = def
            .indexes_in_shown_order()
            .iter()
            .map(|i| i.name.as_str())
            .collect();
        assert_eq!(shown, ["PRIMARY", "u_not_null", "u_null", "k", "k2"]);
        let old: IndexDef =
            serde_json::from_str(r#"{"name":"k","columns":[1],"unique":false,"primary":false}"#)
                .unwrap();
        assert!(!old.invisible);
        let text = serde_json::to_string(&old).unwrap();
        assert!(!text.contains("invisible"), "{text}");
    }

    #[test]
    fn catalogs_without_fsp_still_load() {
        let c: ColumnDef = serde_json::from_str(&col_json(r#""DateTime""#)).unwrap();
        assert_eq!(c.data_type, DataType::DateTime { fsp: 0 });
        let c: ColumnDef = serde_json::from_str(&col_json(r#""Timestamp""#)).unwrap();
        assert_eq!(c.data_type, DataType::Timestamp { fsp: 0 });
        let c: ColumnDef = serde_json::from_str(&col_json(r#""Date""#)).unwrap();
        assert_eq!(c.data_type, DataType::Date);
        let c: ColumnDef = serde_json::from_str(&col_json(r#"{"Char":10}"#)).unwrap();
        assert_eq!(c.data_type, DataType::Char(10));
        assert!(serde_json::from_str::<ColumnDef>(&col_json(r#""Nonsense""#)).is_err());
    }

    #[test]
    fn new_types_round_trip() {
        for t in [
            DataType::DateTime { fsp: 6 },
            DataType::Timestamp { fsp: 3 },
            DataType::Time { fsp: 2 },
            DataType::Year,
        ] {
            let json = serde_json::to_string(&t).unwrap();
            let c: ColumnDef = serde_json::from_str(&col_json(&json)).unwrap();
            assert_eq!(c.data_type, t, "{json}");
        }
        assert_eq!(DataType::DateTime { fsp: 6 }.sql_name(), "datetime(6)");
        assert_eq!(DataType::Time { fsp: 0 }.sql_name(), "time");
        assert_eq!(
            DataType::DateTime { fsp: 6 }.display_length(Collation::Binary),
            26
        );
        assert_eq!(
            DataType::Time { fsp: 3 }.display_length(Collation::Binary),
            14
        );
    }
}
