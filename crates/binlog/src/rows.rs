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
///
/// `full_metadata` is `binlog_row_metadata=FULL`: TABLE_MAP events also carry the column
/// names, ENUM/SET members and the primary key (`optional_metadata`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Format {
    pub json_text: bool,
    pub full_metadata: bool,
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
        DataType::Float { .. } => 4,
        DataType::Double { .. } => 5,
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
        DataType::Float { .. } => out.push(4),
        DataType::Double { .. } => out.push(8),
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
    optional_metadata(def, f, &mut d);
    Body {
        type_code: event::TABLE_MAP,
        timestamp,
        flags: 0,
        data: d,
    }
}

/// Optional metadata field types (docs/format/binlog.md, "Optional metadata").
mod field {
    pub const SIGNEDNESS: u8 = 1;
    pub const DEFAULT_CHARSET: u8 = 2;
    pub const COLUMN_NAME: u8 = 4;
    pub const SET_STR_VALUE: u8 = 5;
    pub const ENUM_STR_VALUE: u8 = 6;
    pub const SIMPLE_PRIMARY_KEY: u8 = 8;
    pub const ENUM_AND_SET_DEFAULT_CHARSET: u8 = 10;
}

/// Whether MySQL counts the column as numeric in SIGNEDNESS (by its logged type: YEAR
/// is not one).
fn is_numeric(c: &ColumnDef) -> bool {
    c.data_type.is_integer()
        || matches!(
            c.data_type,
            DataType::Float { .. } | DataType::Double { .. } | DataType::Decimal { .. }
        )
}

/// Whether the column is a character column of DEFAULT_CHARSET: logged as STRING,
/// VARCHAR or BLOB and not an ENUM or SET.
fn is_character(c: &ColumnDef, f: Format) -> bool {
    matches!(mysql_type(c, f), 254 | 15 | 252)
        && !matches!(c.data_type, DataType::Enum(_) | DataType::Set(_))
}

/// The collation id a reader decodes the column's bytes with.
fn collation_id(c: &ColumnDef) -> u64 {
    if c.data_type == DataType::Json {
        // Logged as text only with binlog_json_format=TEXT: MariaDB's JSON is utf8mb4_bin.
        return Collation::Utf8Bin.id() as u64;
    }
    c.collation.id() as u64
}

/// One TLV field: type, lenenc length, value.
fn put_field(d: &mut Vec<u8>, kind: u8, value: &[u8]) {
    d.push(kind);
    put_lenenc(d, value.len() as u64);
    d.extend_from_slice(value);
}

/// DEFAULT_CHARSET's value over `ids` (one per counted column): the most common id,
/// then (position, id) for each column with another.
fn default_charset(ids: &[u64]) -> Vec<u8> {
    let mut counts: Vec<(u64, usize)> = Vec::new();
    for &id in ids {
        match counts.iter_mut().find(|(k, _)| *k == id) {
            Some((_, n)) => *n += 1,
            None => counts.push((id, 1)),
        }
    }
    // Ties go to the first seen, so the output is deterministic.
    let default = counts
        .iter()
        .fold(
            (0u64, 0usize),
            |best, &(k, n)| if n > best.1 { (k, n) } else { best },
        )
        .0;
    let mut v = Vec::new();
    put_lenenc(&mut v, default);
    for (i, &id) in ids.iter().enumerate() {
        if id != default {
            put_lenenc(&mut v, i as u64);
            put_lenenc(&mut v, id);
        }
    }
    v
}

/// A lenenc length and the bytes.
fn put_lenenc_str(v: &mut Vec<u8>, b: &[u8]) {
    put_lenenc(v, b.len() as u64);
    v.extend_from_slice(b);
}

/// The TABLE_MAP's optional metadata fields, in type order (MINIMAL: signedness and
/// character sets; FULL adds names, ENUM/SET members and the primary key).
fn optional_metadata(def: &TableDef, f: Format, d: &mut Vec<u8>) {
    let numeric: Vec<bool> = def
        .columns
        .iter()
        .filter(|c| is_numeric(c))
        .map(|c| c.is_unsigned())
        .collect();
    if !numeric.is_empty() {
        // One bit per numeric column, most significant first.
        let mut bits = vec![0u8; numeric.len().div_ceil(8)];
        for (i, u) in numeric.iter().enumerate() {
            if *u {
                bits[i / 8] |= 0x80 >> (i % 8);
            }
        }
        put_field(d, field::SIGNEDNESS, &bits);
    }
    let chars: Vec<u64> = def
        .columns
        .iter()
        .filter(|c| is_character(c, f))
        .map(collation_id)
        .collect();
    if !chars.is_empty() {
        put_field(d, field::DEFAULT_CHARSET, &default_charset(&chars));
    }
    if f.full_metadata {
        let mut names = Vec::new();
        for c in &def.columns {
            put_lenenc_str(&mut names, c.name.as_bytes());
        }
        put_field(d, field::COLUMN_NAME, &names);
        for (kind, is_kind) in [
            (
                field::SET_STR_VALUE,
                (|t| matches!(t, DataType::Set(_))) as fn(DataType) -> bool,
            ),
            (field::ENUM_STR_VALUE, |t| matches!(t, DataType::Enum(_))),
        ] {
            let mut v = Vec::new();
            let mut any = false;
            for c in def.columns.iter().filter(|c| is_kind(c.data_type)) {
                any = true;
                put_lenenc(&mut v, c.members.len() as u64);
                for m in &c.members {
                    put_lenenc_str(&mut v, m.as_bytes());
                }
            }
            if any {
                put_field(d, kind, &v);
            }
        }
        if let Some(pk) = def.indexes.first().filter(|i| i.primary) {
            let mut v = Vec::new();
            for &col in &pk.columns {
                put_lenenc(&mut v, col as u64);
            }
            put_field(d, field::SIMPLE_PRIMARY_KEY, &v);
        }
    }
    let enum_set: Vec<u64> = def
        .columns
        .iter()
        .filter(|c| matches!(c.data_type, DataType::Enum(_) | DataType::Set(_)))
        .map(collation_id)
        .collect();
    if !enum_set.is_empty() {
        put_field(
            d,
            field::ENUM_AND_SET_DEFAULT_CHARSET,
            &default_charset(&enum_set),
        );
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

/// MySQL's binary DECIMAL(precision, scale) of a value given as its text at `scale`
/// (`-123.45`): the form of [`put_decimal_bin`] for any precision up to 65, built from
/// the digits (a DECIMAL(39..65) column's value needs more than an `i128`).
pub fn put_decimal_bin_digits(out: &mut Vec<u8>, text: &str, precision: u8, scale: u8) {
    let (neg, t) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let intg = precision.saturating_sub(scale) as usize;
    let scale = scale as usize;
    // The integer part right-aligned in `intg` digits, the fraction left-aligned in
    // `scale` (extra digits cannot occur in a value of the column; cut if they do).
    let int = int.trim_start_matches('0');
    let int = &int.as_bytes()[int.len().saturating_sub(intg)..];
    let mut digits = vec![b'0'; intg - int.len()];
    digits.extend_from_slice(int);
    let frac = &frac.as_bytes()[..frac.len().min(scale)];
    digits.extend_from_slice(frac);
    digits.resize(intg + scale, b'0');
    let number = |ds: &[u8]| ds.iter().fold(0u32, |m, b| m * 10 + (b - b'0') as u32);
    let put_be = |out: &mut Vec<u8>, ds: &[u8]| {
        let n = DIG2BYTES[ds.len()];
        out.extend_from_slice(&number(ds).to_be_bytes()[4 - n..]);
    };
    let start = out.len();
    let (int_digits, frac_digits) = digits.split_at(intg);
    let lead = intg % 9;
    put_be(out, &int_digits[..lead]);
    for g in int_digits[lead..].chunks(9) {
        put_be(out, g);
    }
    for g in frac_digits.chunks(9) {
        put_be(out, g);
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
        DataType::Float { .. } => {
            out.extend_from_slice(&(v.to_f64().unwrap_or(0.0) as f32).to_le_bytes())
        }
        DataType::Double { .. } => out.extend_from_slice(&v.to_f64().unwrap_or(0.0).to_le_bytes()),
        DataType::Decimal { precision, scale } => {
            let Value::Decimal(d) = v else {
                return Err("a DECIMAL column holding a non-decimal value");
            };
            let d = d.rescale(scale);
            if precision > strata_types::decimal::NARROW {
                put_decimal_bin_digits(out, &d.to_string(), precision, scale);
            } else {
                put_decimal_bin(out, d.mantissa(), precision, scale);
            }
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
    fn decimal_binary_from_digits_matches_the_narrow_form() {
        // Every narrow case through both writers: the same bytes.
        for (m, p, s) in [
            (12_345_678_901_234i128, 14u8, 4u8),
            (-12_345_678_901_234, 14, 4),
            (0, 5, 2),
            (-1, 38, 30),
            (99_999_999_999_999_999_999_999_999_999_999_999_999, 38, 0),
            (-5, 10, 9),
            (123_456_789, 20, 9),
        ] {
            let text = strata_types::Decimal::new(m, s).to_string();
            let mut o = Vec::new();
            put_decimal_bin_digits(&mut o, &text, p, s);
            assert_eq!(o, dec(m, p, s), "{text} as DECIMAL({p},{s})");
        }
        // DECIMAL(65,30) of 35 nines . 30 nines: 4 whole groups of 9 per part (the
        // integer part's 8 leftover digits take 4 bytes, the fraction's 3 take 2).
        let text = format!("{}.{}", "9".repeat(35), "9".repeat(30));
        let mut o = Vec::new();
        put_decimal_bin_digits(&mut o, &text, 65, 30);
        let mut want = vec![0x85, 0xF5, 0xE0, 0xFF]; // 99999999 | 0x80 in the first byte
        for _ in 0..3 {
            want.extend_from_slice(&999_999_999u32.to_be_bytes());
        }
        for _ in 0..3 {
            want.extend_from_slice(&999_999_999u32.to_be_bytes());
        }
        want.extend_from_slice(&999u16.to_be_bytes());
        assert_eq!(o, want);
        let mut n = Vec::new();
        put_decimal_bin_digits(&mut n, &format!("-{text}"), 65, 30);
        // Negative: the bytes of the magnitude inverted, then the first byte's top bit flipped.
        let mut mag = want.clone();
        mag[0] ^= 0x80;
        let mut neg: Vec<u8> = mag.iter().map(|b| !b).collect();
        neg[0] ^= 0x80;
        assert_eq!(n, neg);
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

    pub(super) fn test_col() -> ColumnDef {
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
            comment: String::new(),
            real_unsigned: false,
            invisible: Default::default(),
        }
    }
}

#[cfg(test)]
mod optional_metadata_tests {
    use super::*;
    use strata_types::IndexDef;

    fn col(name: &str, t: DataType, collation: Collation, members: &[&str]) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            data_type: t,
            collation,
            members: members.iter().map(|m| m.to_string()).collect(),
            ..super::tests::test_col()
        }
    }

    /// id INT UNSIGNED, y YEAR, name VARCHAR utf8mb4_general_ci, code CHAR utf8mb4_bin,
    /// b BLOB, e ENUM('x','yy'), s SET('p'), d DECIMAL; primary key (name, id).
    fn table() -> TableDef {
        TableDef {
            options: Default::default(),
            db: "db".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col(
                    "id",
                    DataType::Int { unsigned: true },
                    Collation::Binary,
                    &[],
                ),
                col("y", DataType::Year, Collation::Binary, &[]),
                col("name", DataType::VarChar(10), Collation::GeneralCi, &[]),
                col("code", DataType::Char(2), Collation::Utf8Bin, &[]),
                col("b", DataType::Blob(65535), Collation::Binary, &[]),
                col("e", DataType::Enum(2), Collation::GeneralCi, &["x", "yy"]),
                col("s", DataType::Set(1), Collation::GeneralCi, &["p"]),
                col(
                    "d",
                    DataType::Decimal {
                        precision: 5,
                        scale: 2,
                    },
                    Collation::Binary,
                    &[],
                ),
            ],
            indexes: vec![IndexDef {
                invisible: false,
                name: "PRIMARY".into(),
                columns: vec![2, 0],
                unique: true,
                primary: true,
                comment: String::new(),
            }],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: vec![],
            checks: vec![],
            instant: None,
            default_collation: Default::default(),
        }
    }

    /// Reads a lenenc integer at `*at` (only the forms these tests produce).
    fn lenenc(b: &[u8], at: &mut usize) -> u64 {
        let first = b[*at];
        *at += 1;
        match first {
            0..=250 => first as u64,
            0xFC => {
                let v = u16::from_le_bytes([b[*at], b[*at + 1]]) as u64;
                *at += 2;
                v
            }
            other => panic!("unexpected lenenc prefix {other:#x}"),
        }
    }

    /// The (type, value) fields after the null bitmap of a TABLE_MAP body.
    fn fields(def: &TableDef, f: Format) -> Vec<(u8, Vec<u8>)> {
        let body = table_map(0, 1, def, f).data;
        let mut at = 8; // table id, flags
        for _ in 0..2 {
            at += 1 + body[at] as usize + 1; // length, name, NUL
        }
        let n = lenenc(&body, &mut at) as usize;
        at += n;
        let meta = lenenc(&body, &mut at) as usize;
        at += meta + n.div_ceil(8);
        let mut out = Vec::new();
        while at < body.len() {
            let kind = body[at];
            at += 1;
            let len = lenenc(&body, &mut at) as usize;
            out.push((kind, body[at..at + len].to_vec()));
            at += len;
        }
        out
    }

    #[test]
    fn minimal_has_signedness_and_character_sets_only() {
        let got = fields(&table(), Format::default());
        let kinds: Vec<u8> = got.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, vec![1, 2, 10]);
        // Numeric: id (unsigned) and d; YEAR is not counted, as in MySQL.
        assert_eq!(got[0].1, vec![0b1000_0000]);
        // Character columns name (45), code (46), b (63), each once: the first seen
        // is the default, then (position, collation) for the other two.
        assert_eq!(got[1].1, vec![45, 1, 46, 2, 63]);
        // ENUM and SET columns, both utf8mb4_general_ci.
        assert_eq!(got[2].1, vec![45]);
    }

    #[test]
    fn an_unsigned_decimal_sets_its_signedness_bit() {
        let mut t = table();
        let d = t.columns.len() - 1;
        t.columns[d].real_unsigned = true;
        let got = fields(&t, Format::default());
        // id and d, both unsigned now.
        assert_eq!(got[0].1, vec![0b1100_0000]);
    }

    #[test]
    fn full_adds_names_members_and_the_primary_key() {
        let f = Format {
            full_metadata: true,
            ..Format::default()
        };
        let got = fields(&table(), f);
        let kinds: Vec<u8> = got.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, vec![1, 2, 4, 5, 6, 8, 10]);
        let mut names = Vec::new();
        let v = &got[2].1;
        let mut at = 0;
        while at < v.len() {
            let len = lenenc(v, &mut at) as usize;
            names.push(String::from_utf8(v[at..at + len].to_vec()).unwrap());
            at += len;
        }
        assert_eq!(names, ["id", "y", "name", "code", "b", "e", "s", "d"]);
        assert_eq!(got[3].1, vec![1, 1, b'p']); // SET: one column, one member
        assert_eq!(got[4].1, vec![2, 1, b'x', 2, b'y', b'y']); // ENUM
        assert_eq!(got[5].1, vec![2, 0]); // primary key columns in key order
    }

    #[test]
    fn the_most_common_collation_is_the_default() {
        assert_eq!(default_charset(&[63, 45, 45]), vec![45, 0, 63]);
        assert_eq!(default_charset(&[46]), vec![46]);
    }

    #[test]
    fn a_table_without_such_columns_writes_no_empty_fields() {
        let mut t = table();
        t.columns.truncate(1);
        t.indexes.clear();
        let f = Format {
            full_metadata: true,
            ..Format::default()
        };
        let kinds: Vec<u8> = fields(&t, f).iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, vec![1, 4]);
    }
}
