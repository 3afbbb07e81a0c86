//! Row events: the TABLE_MAP that describes a table's columns and the WRITE / UPDATE /
//! DELETE_ROWS v2 events that carry full row images (docs/format/binlog.md), built from
//! a [`TableDef`] and rows of [`Value`]s as the SQL layer hands them to the engines.

use crate::event::{self, put_lenenc, Body};
use strata_types::{time_value, Collation, ColumnDef, DataType, Error, Result, TableDef, Value};

pub use strata_types::RowChange;

/// The rows event type that carries `c`.
pub fn event_type(c: &RowChange) -> u8 {
    match c {
        RowChange::Insert(_) => event::WRITE_ROWS,
        RowChange::Update { .. } => event::UPDATE_ROWS,
        RowChange::Delete(_) => event::DELETE_ROWS,
    }
}

/// Rows are cut into events of about this many bytes (`binlog_row_event_max_size`).
pub const MAX_ROWS_EVENT: usize = 8192;

/// How JSON columns are logged: MySQL 8's JSON type with its binary documents
/// (`binlog_json_format=BINARY`, the default), or, for MariaDB replicas and
/// `mariadb-binlog`, which do not know that type, as LONGTEXT holding the document's
/// text (`TEXT`, what MariaDB itself logs for its JSON columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Format {
    pub json_text: bool,
}

fn mysql_type(c: &ColumnDef, f: Format) -> u8 {
    if c.data_type == DataType::Json && f.json_text {
        return 252;
    }
    match c.data_type {
        DataType::TinyInt { .. } => 1,
        DataType::SmallInt { .. } => 2,
        DataType::MediumInt { .. } => 9,
        DataType::Int { .. } => 3,
        DataType::BigInt { .. } => 8,
        DataType::Float => 4,
        DataType::Double => 5,
        DataType::Decimal { .. } => 246,
        DataType::Char(_) | DataType::Binary(_) | DataType::Enum(_) | DataType::Set(_) => 254,
        DataType::VarChar(_) | DataType::VarBinary(_) => 15,
        DataType::Text(_) | DataType::Blob(_) => 252,
        DataType::Json => 245,
        DataType::Date => 10,
        DataType::DateTime { .. } => 18,
        DataType::Timestamp { .. } => 17,
        DataType::Time { .. } => 19,
        DataType::Year => 13,
        DataType::Bit(_) => 16,
    }
}

/// Bytes per character of a text column (utf8mb4: 4; binary: 1).
fn char_bytes(c: &ColumnDef) -> u32 {
    if c.collation == Collation::Binary || !c.data_type.is_text() {
        1
    } else {
        4
    }
}

/// A CHAR/BINARY/VARCHAR/VARBINARY column's maximum length in bytes.
fn byte_length(c: &ColumnDef) -> u32 {
    match c.data_type {
        DataType::Char(n) | DataType::VarChar(n) => n.saturating_mul(char_bytes(c)),
        DataType::Binary(n) | DataType::VarBinary(n) => n,
        _ => 0,
    }
}

fn blob_prefix(limit: u32) -> usize {
    match limit {
        0..=255 => 1,
        256..=65535 => 2,
        65536..=16_777_215 => 3,
        _ => 4,
    }
}

fn set_bytes(members: usize) -> usize {
    match members.div_ceil(8) {
        0 | 1 => 1,
        2 => 2,
        3 => 3,
        4 => 4,
        _ => 8,
    }
}

fn metadata(c: &ColumnDef, out: &mut Vec<u8>) {
    match c.data_type {
        DataType::Float => out.push(4),
        DataType::Double => out.push(8),
        DataType::Decimal { precision, scale } => out.extend_from_slice(&[precision, scale]),
        DataType::Char(_) | DataType::Binary(_) => {
            let l = byte_length(c);
            out.push(0xFE ^ (((l & 0x300) >> 4) as u8));
            out.push((l & 0xFF) as u8);
        }
        DataType::VarChar(_) | DataType::VarBinary(_) => {
            out.extend_from_slice(&(byte_length(c).min(65535) as u16).to_le_bytes())
        }
        DataType::Text(l) | DataType::Blob(l) => out.push(blob_prefix(l) as u8),
        DataType::Json => out.push(4),
        DataType::DateTime { fsp } | DataType::Timestamp { fsp } | DataType::Time { fsp } => {
            out.push(fsp)
        }
        DataType::Bit(n) => out.extend_from_slice(&[n % 8, n / 8]),
        DataType::Enum(_) => {
            out.extend_from_slice(&[247, if c.members.len() > 255 { 2 } else { 1 }])
        }
        DataType::Set(_) => out.extend_from_slice(&[248, set_bytes(c.members.len()) as u8]),
        _ => {}
    }
}

/// The TABLE_MAP event of `def` under `table_id`.
pub fn table_map(timestamp: u32, table_id: u64, def: &TableDef, f: Format) -> Body {
    let mut d = Vec::with_capacity(64 + def.columns.len() * 4);
    d.extend_from_slice(&table_id.to_le_bytes()[..6]);
    d.extend_from_slice(&1u16.to_le_bytes());
    for name in [&def.db, &def.name] {
        let b = &name.as_bytes()[..name.len().min(255)];
        d.push(b.len() as u8);
        d.extend_from_slice(b);
        d.push(0);
    }
    put_lenenc(&mut d, def.columns.len() as u64);
    for c in &def.columns {
        d.push(mysql_type(c, f));
    }
    let mut meta = Vec::new();
    for c in &def.columns {
        metadata(c, &mut meta);
    }
    put_lenenc(&mut d, meta.len() as u64);
    d.extend_from_slice(&meta);
    let mut nulls = vec![0u8; def.columns.len().div_ceil(8)];
    for (i, c) in def.columns.iter().enumerate() {
        if c.nullable {
            nulls[i / 8] |= 1 << (i % 8);
        }
    }
    d.extend_from_slice(&nulls);
    // Optional metadata: SIGNEDNESS, one bit per numeric column, most significant first.
    let numeric: Vec<bool> = def
        .columns
        .iter()
        .filter(|c| {
            c.data_type.is_integer()
                || matches!(
                    c.data_type,
                    DataType::Float | DataType::Double | DataType::Decimal { .. }
                )
        })
        .map(|c| c.data_type.is_unsigned())
        .collect();
    if !numeric.is_empty() {
        let mut bits = vec![0u8; numeric.len().div_ceil(8)];
        for (i, u) in numeric.iter().enumerate() {
            if *u {
                bits[i / 8] |= 0x80 >> (i % 8);
            }
        }
        d.push(1);
        put_lenenc(&mut d, bits.len() as u64);
        d.extend_from_slice(&bits);
    }
    Body {
        type_code: event::TABLE_MAP,
        timestamp,
        flags: 0,
        data: d,
    }
}

/// The post-header and column bitmaps of a rows event; rows are appended after it.
pub fn rows_header(type_code: u8, table_id: u64, columns: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&table_id.to_le_bytes()[..6]);
    out.extend_from_slice(&0u16.to_le_bytes()); // flags, STMT_END_F set by the caller
    out.extend_from_slice(&2u16.to_le_bytes()); // no extra data
    put_lenenc(out, columns as u64);
    let all = |out: &mut Vec<u8>| {
        let mut bits = vec![0xFFu8; columns.div_ceil(8)];
        if !columns.is_multiple_of(8) {
            if let Some(last) = bits.last_mut() {
                *last = (1u16 << (columns % 8)).wrapping_sub(1) as u8;
            }
        }
        out.extend_from_slice(&bits);
    };
    all(out);
    if type_code == event::UPDATE_ROWS {
        all(out);
    }
}

/// Sets STMT_END_F in a rows event's post-header (`data` starts at the post-header).
pub fn set_statement_end(data: &mut [u8]) {
    data[6] |= 1;
}

/// Appends one row change's images.
pub fn put_change(def: &TableDef, change: &RowChange, f: Format, out: &mut Vec<u8>) -> Result<()> {
    match change {
        RowChange::Insert(r) | RowChange::Delete(r) => put_image(def, r, f, out),
        RowChange::Update { before, after } => {
            put_image(def, before, f, out)?;
            put_image(def, after, f, out)
        }
    }
}

fn put_image(def: &TableDef, row: &[Value], f: Format, out: &mut Vec<u8>) -> Result<()> {
    let n = def.columns.len();
    let start = out.len();
    out.resize(start + n.div_ceil(8), 0);
    for (i, c) in def.columns.iter().enumerate() {
        let v = row.get(i).unwrap_or(&Value::Null);
        if v.is_null() {
            out[start + i / 8] |= 1 << (i % 8);
            continue;
        }
        put_value(c, v, f, out).map_err(|what| {
            Error::NotSupported(format!(
                "binary logging of column {}.{}.{} ({what})",
                def.db, def.name, c.name
            ))
        })?;
    }
    Ok(())
}

fn int_of(v: &Value) -> i128 {
    match v {
        Value::Int(i) => *i as i128,
        Value::UInt(u) => *u as i128,
        other => other.to_i64().unwrap_or(0) as i128,
    }
}

fn bytes_of(v: &Value) -> std::result::Result<&[u8], &'static str> {
    match v {
        Value::Bytes(b) | Value::Bits(b) | Value::Json(b) => Ok(b),
        Value::Member { text, .. } => Ok(text),
        _ => Err("a string column holding a non-string value"),
    }
}

fn put_len(out: &mut Vec<u8>, len: usize, width: usize) {
    out.extend_from_slice(&(len as u64).to_le_bytes()[..width]);
}

/// Digits per 0…9 leftover decimal digits.
const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/// MySQL's binary DECIMAL(precision, scale) of `mantissa` / 10^scale.
pub fn put_decimal_bin(out: &mut Vec<u8>, mantissa: i128, precision: u8, scale: u8) {
    let neg = mantissa < 0;
    let abs = mantissa.unsigned_abs();
    let pow = |e: u32| 10u128.checked_pow(e);
    let scale_pow = pow(scale as u32).unwrap_or(u128::MAX);
    let int_part = abs / scale_pow;
    let frac = abs % scale_pow;
    let intg = precision.saturating_sub(scale) as u32;
    let (intg0, intg0x) = (intg / 9, (intg % 9) as usize);
    let (frac0, frac0x) = (scale as u32 / 9, (scale % 9) as usize);
    let start = out.len();
    let group = |x: u128, shift: u32, modulo: u128| match pow(shift) {
        Some(p) => (x / p) % modulo,
        None => 0,
    };
    let put_be = |out: &mut Vec<u8>, v: u128, n: usize| {
        out.extend_from_slice(&(v as u32).to_be_bytes()[4 - n..]);
    };
    if intg0x > 0 {
        let m = 10u128.pow(intg0x as u32);
        put_be(out, group(int_part, 9 * intg0, m), DIG2BYTES[intg0x]);
    }
    for i in (0..intg0).rev() {
        put_be(out, group(int_part, 9 * i, 1_000_000_000), 4);
    }
    for i in 0..frac0 {
        put_be(
            out,
            group(frac, scale as u32 - 9 * (i + 1), 1_000_000_000),
            4,
        );
    }
    if frac0x > 0 {
        put_be(out, frac % 10u128.pow(frac0x as u32), DIG2BYTES[frac0x]);
    }
    if neg {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
    if out.len() > start {
        out[start] ^= 0x80;
    }
}

/// The fraction bytes of DATETIME2 / TIMESTAMP2 / TIME2 (non-negative values).
fn put_fraction(out: &mut Vec<u8>, micro: u32, fsp: u8) {
    match fsp {
        1 | 2 => out.push((micro / 10_000) as u8),
        3 | 4 => out.extend_from_slice(&((micro / 100) as u16).to_be_bytes()),
        5 | 6 => out.extend_from_slice(&micro.to_be_bytes()[1..]),
        _ => {}
    }
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn put_value(
    c: &ColumnDef,
    v: &Value,
    f: Format,
    out: &mut Vec<u8>,
) -> std::result::Result<(), &'static str> {
    match c.data_type {
        DataType::TinyInt { .. } => out.push(int_of(v) as u8),
        DataType::SmallInt { .. } => out.extend_from_slice(&(int_of(v) as u16).to_le_bytes()),
        DataType::MediumInt { .. } => out.extend_from_slice(&(int_of(v) as u32).to_le_bytes()[..3]),
        DataType::Int { .. } => out.extend_from_slice(&(int_of(v) as u32).to_le_bytes()),
        DataType::BigInt { .. } => out.extend_from_slice(&(int_of(v) as u64).to_le_bytes()),
        DataType::Float => out.extend_from_slice(&(v.to_f64().unwrap_or(0.0) as f32).to_le_bytes()),
        DataType::Double => out.extend_from_slice(&v.to_f64().unwrap_or(0.0).to_le_bytes()),
        DataType::Decimal { precision, scale } => {
            let Value::Decimal(d) = v else {
                return Err("a DECIMAL column holding a non-decimal value");
            };
            put_decimal_bin(out, d.rescale(scale).mantissa, precision, scale);
        }
        DataType::Char(_) | DataType::Binary(_) => {
            let mut b = bytes_of(v)?;
            if matches!(c.data_type, DataType::Char(_)) {
                while let [rest @ .., b' '] = b {
                    b = rest;
                }
            }
            let width = if byte_length(c) < 256 { 1 } else { 2 };
            put_len(out, b.len(), width);
            out.extend_from_slice(b);
        }
        DataType::VarChar(_) | DataType::VarBinary(_) => {
            let b = bytes_of(v)?;
            let width = if byte_length(c) < 256 { 1 } else { 2 };
            put_len(out, b.len(), width);
            out.extend_from_slice(b);
        }
        DataType::Text(l) | DataType::Blob(l) => {
            let b = bytes_of(v)?;
            put_len(out, b.len(), blob_prefix(l));
            out.extend_from_slice(b);
        }
        DataType::Json => {
            let Value::Json(b) = v else {
                return Err("a JSON column holding a non-JSON value");
            };
            let doc = strata_types::json::binary::decode(b).ok_or("an unreadable JSON document")?;
            let bin = if f.json_text {
                strata_types::json::text::to_text(&doc).into_bytes()
            } else {
                crate::mysql_json::encode(&doc)
            };
            out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
            out.extend_from_slice(&bin);
        }
        DataType::Date => {
            let Value::DateTime(d) = v else {
                return Err("a DATE column holding a non-date value");
            };
            let packed = d.day as u32 | (d.month as u32) << 5 | (d.year as u32) << 9;
            out.extend_from_slice(&packed.to_le_bytes()[..3]);
        }
        DataType::DateTime { fsp } => {
            let Value::DateTime(d) = v else {
                return Err("a DATETIME column holding a non-date value");
            };
            let ym = d.year as u64 * 13 + d.month as u64;
            let int = (ym << 22)
                | (d.day as u64) << 17
                | (d.hour as u64) << 12
                | (d.minute as u64) << 6
                | d.second as u64;
            out.extend_from_slice(&(int + 0x80_0000_0000).to_be_bytes()[3..]);
            put_fraction(out, d.micro, fsp);
        }
        DataType::Timestamp { fsp } => {
            let Value::DateTime(d) = v else {
                return Err("a TIMESTAMP column holding a non-date value");
            };
            // Stored as the wall clock of time_zone=SYSTEM (UTC), so seconds since the
            // epoch; the zero timestamp is 0.
            let secs = if d.year == 0 {
                0
            } else {
                days_from_civil(d.year as i64, d.month as i64, d.day as i64) * 86400
                    + d.hour as i64 * 3600
                    + d.minute as i64 * 60
                    + d.second as i64
            };
            out.extend_from_slice(&(secs.max(0) as u32).to_be_bytes());
            put_fraction(out, d.micro, fsp);
        }
        DataType::Time { fsp } => {
            let micros = match v {
                Value::Bytes(b) => time_value::parse_canonical(b).ok_or("an unreadable TIME")?,
                _ => return Err("a TIME column holding a non-time value"),
            };
            let a = micros.unsigned_abs();
            let secs = a / 1_000_000;
            let hms = ((secs / 3600) << 12) | ((secs / 60 % 60) << 6) | (secs % 60);
            let mut packed = ((hms << 24) + a % 1_000_000) as i64;
            if micros < 0 {
                packed = -packed;
            }
            let int_part = packed >> 24;
            let frac = packed % (1 << 24);
            match fsp {
                0 => out.extend_from_slice(&((int_part + 0x80_0000) as u32).to_be_bytes()[1..]),
                1 | 2 => {
                    out.extend_from_slice(&((int_part + 0x80_0000) as u32).to_be_bytes()[1..]);
                    out.push((frac / 10_000) as i8 as u8);
                }
                3 | 4 => {
                    out.extend_from_slice(&((int_part + 0x80_0000) as u32).to_be_bytes()[1..]);
                    out.extend_from_slice(&((frac / 100) as i16).to_be_bytes());
                }
                _ => {
                    out.extend_from_slice(&((packed + 0x8000_0000_0000) as u64).to_be_bytes()[2..])
                }
            }
        }
        DataType::Year => {
            let y = int_of(v);
            out.push(if y == 0 { 0 } else { (y - 1900) as u8 });
        }
        DataType::Bit(n) => {
            let b = bytes_of(v)?;
            let width = (n as usize).div_ceil(8);
            // Right-aligned big-endian, as many bytes as the column has.
            if b.len() >= width {
                out.extend_from_slice(&b[b.len() - width..]);
            } else {
                out.resize(out.len() + width - b.len(), 0);
                out.extend_from_slice(b);
            }
        }
        DataType::Enum(_) => {
            let Value::Member { number, .. } = v else {
                return Err("an ENUM column holding a non-member value");
            };
            let width = if c.members.len() > 255 { 2 } else { 1 };
            put_len(out, *number as usize, width);
        }
        DataType::Set(_) => {
            let Value::Member { number, .. } = v else {
                return Err("a SET column holding a non-member value");
            };
            out.extend_from_slice(&number.to_le_bytes()[..set_bytes(c.members.len())]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(m: i128, p: u8, s: u8) -> Vec<u8> {
        let mut o = Vec::new();
        put_decimal_bin(&mut o, m, p, s);
        o
    }

    #[test]
    fn decimal_binary_matches_mysql_examples() {
        // MySQL's decimal2bin documentation example: 1234567890.1234 as DECIMAL(14,4)
        // is 81 0D FB 38 D2 04 D2.
        assert_eq!(
            dec(12_345_678_901_234, 14, 4),
            vec![0x81, 0x0D, 0xFB, 0x38, 0xD2, 0x04, 0xD2]
        );
        // Negated: every byte inverted, then the sign bit flipped.
        assert_eq!(
            dec(-12_345_678_901_234, 14, 4),
            vec![0x7E, 0xF2, 0x04, 0xC7, 0x2D, 0xFB, 0x2D]
        );
        assert_eq!(dec(0, 5, 2), vec![0x80, 0x00, 0x00]);
    }

    #[test]
    fn time2_negative_fraction_round_trips_mysql_rule() {
        let c = ColumnDef {
            data_type: DataType::Time { fsp: 2 },
            ..test_col()
        };
        let mut o = Vec::new();
        put_value(&c, &Value::str("-00:00:10.50"), Format::default(), &mut o).unwrap();
        // int part floor(-10.5) = -11 → 0x800000 - 11; fraction -50 as a signed byte.
        assert_eq!(o, vec![0x7F, 0xFF, 0xF5, 206]);
    }

    fn test_col() -> ColumnDef {
        ColumnDef {
            name: "c".into(),
            data_type: DataType::Int { unsigned: false },
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: Collation::Binary,
            members: vec![],
            generated: None,
        }
    }
}
