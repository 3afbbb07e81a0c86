//! What a statement produces, as the executor hands it to the protocol layer: column
//! metadata, rows of [`Value`]s streamed one at a time, and OK/EOF summaries. The wire
//! crate implements [`QueryOutput`] and encodes into text or binary protocol rows; the
//! executor never sees bytes on the wire.

use crate::error::Result;
use crate::value::Value;

/// The protocol's column type codes (MySQL `enum_field_types`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FieldType {
    Decimal = 0,
    Tiny = 1,
    Short = 2,
    Long = 3,
    Float = 4,
    Double = 5,
    Null = 6,
    Timestamp = 7,
    LongLong = 8,
    Int24 = 9,
    Date = 10,
    Time = 11,
    DateTime = 12,
    Year = 13,
    VarChar = 15,
    Bit = 16,
    /// JSON values (MySQL 8 sends JSON results with this type; MariaDB has none).
    Json = 245,
    NewDecimal = 246,
    Blob = 252,
    VarString = 253,
    String = 254,
}

/// Column-definition flags (MySQL `*_FLAG`).
pub mod flags {
    pub const NOT_NULL: u16 = 1;
    pub const PRI_KEY: u16 = 2;
    pub const UNIQUE_KEY: u16 = 4;
    pub const MULTIPLE_KEY: u16 = 8;
    pub const BLOB: u16 = 16;
    pub const UNSIGNED: u16 = 32;
    pub const ZEROFILL: u16 = 64;
    pub const BINARY: u16 = 128;
    pub const ENUM: u16 = 256;
    pub const AUTO_INCREMENT: u16 = 512;
    pub const TIMESTAMP: u16 = 1024;
    pub const SET: u16 = 2048;
    pub const NO_DEFAULT_VALUE: u16 = 4096;
    pub const ON_UPDATE_NOW: u16 = 8192;
    pub const NUM: u16 = 32768;
}

/// One column of a result set, as sent in a column-definition packet.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnMeta {
    pub schema: String,
    pub table: String,
    pub org_table: String,
    pub name: String,
    pub org_name: String,
    pub field_type: FieldType,
    pub flags: u16,
    /// Collation id: 45 utf8mb4_general_ci, 63 binary.
    pub charset: u16,
    pub length: u32,
    pub decimals: u8,
}

impl ColumnMeta {
    /// A computed column (no table), e.g. `SELECT 1` or `@@version`.
    pub fn computed(name: &str, field_type: FieldType) -> ColumnMeta {
        let binary = !matches!(
            field_type,
            FieldType::VarString | FieldType::String | FieldType::VarChar | FieldType::Blob
        );
        ColumnMeta {
            schema: String::new(),
            table: String::new(),
            org_table: String::new(),
            name: name.to_string(),
            org_name: String::new(),
            field_type,
            flags: if binary { flags::BINARY } else { 0 },
            charset: if binary { 63 } else { 45 },
            length: match field_type {
                FieldType::LongLong => 21,
                FieldType::Double => 23,
                FieldType::VarString => 1024,
                _ => 64,
            },
            decimals: match field_type {
                FieldType::Double | FieldType::Float => 31,
                _ => 0,
            },
        }
    }
}

/// The summary in an OK packet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OkInfo {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub warnings: u16,
    /// Human-readable info, e.g. `Records: 3  Duplicates: 0  Warnings: 0`.
    pub info: String,
    /// Rows found rather than changed (an UPDATE's matched rows; for INSERT … ON
    /// DUPLICATE KEY UPDATE, a row updated to its own values counts 1, not 0): what a
    /// client that set CLIENT_FOUND_ROWS gets as affected rows. None: the same as
    /// `affected_rows`.
    pub found_rows: Option<u64>,
}

/// The summary after the last row of a result set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EndInfo {
    pub warnings: u16,
}

/// Where one statement's result goes. A statement calls either `ok` once, or
/// `columns`, then `row` per row, then `end`. Errors returned are client I/O failures.
pub trait QueryOutput {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<()>;
    fn row(&mut self, row: &[Value]) -> Result<()>;
    fn end(&mut self, info: &EndInfo) -> Result<()>;
    fn ok(&mut self, info: &OkInfo) -> Result<()>;
    /// Another result set follows the one just ended (a CALL's result sets), so that
    /// one's end must carry SERVER_MORE_RESULTS_EXISTS. False when this output cannot
    /// carry several results (the client lacks CLIENT_MULTI_RESULTS, or it is no
    /// client at all): the caller refuses (1312).
    fn next_result_set(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Whether [`QueryOutput::next_result_set`] would succeed: a CALL checks it before
    /// its procedure sends any result set (MySQL refuses the first one with 1312).
    fn takes_more_results(&self) -> bool {
        false
    }
    /// LOAD DATA LOCAL INFILE: asks the client for its file `name` and streams what it
    /// sends. None when there is no client that offered CLIENT_LOCAL_FILES (the
    /// statement then fails with 3948). Dropping the stream early still reads the rest
    /// the client sends, so the connection stays in step.
    fn local_infile(&mut self, _name: &str) -> Result<Option<Box<dyn std::io::Read + '_>>> {
        Ok(None)
    }
}

/// A [`QueryOutput`] that keeps everything in memory: for tests, the in-process bench
/// driver and subqueries.
#[derive(Debug, Default)]
pub struct CollectedOutput {
    pub columns: Vec<ColumnMeta>,
    pub rows: Vec<Vec<Value>>,
    pub ok: Option<OkInfo>,
}

impl QueryOutput for CollectedOutput {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<()> {
        self.columns = cols.to_vec();
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.rows.push(row.to_vec());
        Ok(())
    }
    fn end(&mut self, _: &EndInfo) -> Result<()> {
        Ok(())
    }
    fn ok(&mut self, info: &OkInfo) -> Result<()> {
        self.ok = Some(info.clone());
        Ok(())
    }
}

/// Column metadata's `decimals` for a FLOAT/DOUBLE whose values show as many digits as
/// they need (MySQL's NOT_FIXED_DEC); below it, a fixed number of decimals.
pub const NOT_FIXED_DECIMALS: u8 = 31;

/// A non-NULL value as the text protocol shows it in a column of type `ft` with
/// `decimals` (of its column metadata): the wire layer's text rows and `SELECT … INTO
/// OUTFILE` both write this, so a file holds what a client would have read.
pub fn write_text_for(v: &Value, ft: Option<FieldType>, decimals: u8, out: &mut Vec<u8>) {
    use std::io::Write;
    match (v, ft) {
        (Value::Bytes(b), _) => out.extend_from_slice(b),
        // FLOAT(M,D) / DOUBLE(M,D) and other doubles of fixed decimals: D digits.
        (Value::Double(d), Some(FieldType::Float | FieldType::Double))
            if decimals < NOT_FIXED_DECIMALS && d.is_finite() =>
        {
            let _ = write!(out, "{d:.*}", usize::from(decimals));
        }
        // A FLOAT column's value arrives widened to f64: show it as a FLOAT.
        (Value::Double(d), Some(FieldType::Float)) => {
            out.extend_from_slice(crate::floatfmt::format_float(*d).as_bytes())
        }
        // A YEAR shows four digits: the zero year is 0000.
        (Value::Int(y), Some(FieldType::Year)) => {
            let _ = write!(out, "{y:04}");
        }
        // A DATE value in a DATETIME column (IF(c, date_col, NOW())) shows its
        // midnight time.
        (Value::DateTime(d), Some(FieldType::DateTime | FieldType::Timestamp))
            if d.is_date_only() =>
        {
            let mut shown = *d;
            shown.fsp = 0;
            let _ = write!(out, "{shown}");
        }
        _ => {
            let start = out.len();
            v.write_text(out);
            // A DATE column's value is held as a date-time at midnight: show the date.
            if matches!(v, Value::DateTime(_)) && ft == Some(FieldType::Date) {
                out.truncate(start + 10);
            }
        }
    }
}
