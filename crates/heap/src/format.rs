//! Every byte offset of the heap engine's files, and the row payload codec. The layout
//! is specified in `docs/format/heap.md`; this module is the only code that knows it.

use strata_types::{time_value, DataType, DateTime, Decimal, TableDef, Value};

pub const DATA_MAGIC: &[u8; 8] = b"STRHDAT1";
pub const INDEX_MAGIC: &[u8; 8] = b"STRHIDX1";
pub const FORMAT_VERSION: u32 = 1;

/// Records start after the data-file header.
pub const DATA_HEADER_SIZE: u64 = 4096;
pub const DH_MAGIC: usize = 0;
pub const DH_VERSION: usize = 8;
pub const DH_FIXED_CAPACITY: usize = 12;
pub const DH_ROWS: usize = 16;
pub const DH_DELETED_HEAD: usize = 24;
pub const DH_AUTO_INCREMENT: usize = 32;
pub const DH_DATA_END: usize = 40;
pub const DH_STATE: usize = 48;
pub const DH_CHECKSUM: usize = 56;
pub const DH_CHECKED_LEN: usize = 56;

pub const STATE_CLEAN: u8 = 1;
pub const STATE_DIRTY: u8 = 0;

/// Record header: flag, capacity, length.
pub const REC_FLAG: usize = 0;
pub const REC_CAPACITY: usize = 1;
pub const REC_LENGTH: usize = 5;
pub const REC_HEADER: usize = 9;
pub const REC_LIVE: u8 = 1;
pub const REC_DELETED: u8 = 0;
/// A deleted record keeps the next-deleted offset in its payload.
pub const MIN_CAPACITY: usize = 8;

pub const BLOCK_SIZE: usize = 4096;
pub const IH_MAGIC: usize = 0;
pub const IH_VERSION: usize = 8;
pub const IH_COUNT: usize = 12;
pub const IH_NEXT_FREE: usize = 16;
pub const IH_ROOTS: usize = 24;

pub const NODE_KIND: usize = 0;
pub const NODE_COUNT: usize = 1;
pub const NODE_LINK: usize = 3;
pub const NODE_PREV: usize = 11;
pub const NODE_ENTRIES: usize = 19;
pub const KIND_LEAF: u8 = 1;
pub const KIND_INTERNAL: u8 = 2;

/// Longest key an index entry may hold: four entries must fit in a node.
pub const MAX_KEY: usize = (BLOCK_SIZE - NODE_ENTRIES) / 4 - 10;

pub fn get_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
pub fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}
pub fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}
pub fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
pub fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
pub fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// DECIMAL columns of more digits than this store the 32-byte form (docs/format/heap.md).
const WIDE_FROM: u8 = strata_types::decimal::NARROW;

/// The payload capacity of every record of a fixed-length table, or None when the table
/// has a variable-length column.
pub fn fixed_capacity(def: &TableDef) -> Option<usize> {
    let mut n = def.columns.len().div_ceil(8);
    for c in &def.columns {
        n += match c.data_type {
            DataType::Decimal { precision, .. } if precision > WIDE_FROM => 32,
            DataType::Decimal { .. } => 16,
            DataType::Char(len) => 4 + 4 * len as usize,
            DataType::Binary(len) => 4 + len as usize,
            ref t => {
                t.fixed_width()?;
                8
            }
        };
    }
    Some(n.max(MIN_CAPACITY))
}

pub fn encode_row(def: &TableDef, row: &[Value], out: &mut Vec<u8>) {
    out.clear();
    let bitmap = def.columns.len().div_ceil(8);
    out.resize(bitmap, 0);
    for (i, (v, c)) in row.iter().zip(&def.columns).enumerate() {
        if let (DataType::Time { .. }, Value::Bytes(b)) = (&c.data_type, v) {
            // The SQL layer stores only canonical TIME text (time_value::format).
            let m = time_value::parse_canonical(b).unwrap_or(0);
            out.extend_from_slice(&m.to_le_bytes());
            continue;
        }
        match v {
            Value::Null => out[i / 8] |= 1 << (i % 8),
            Value::Int(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::UInt(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Double(x) => out.extend_from_slice(&x.to_le_bytes()),
            Value::Decimal(d) => match c.data_type {
                DataType::Decimal { precision, scale } if precision > WIDE_FROM => {
                    // The SQL layer stores only values within the column's precision,
                    // which always fit; anything else would be a bug upstream, written
                    // as zero rather than as bytes no read accepts.
                    let b = d.rescale(scale).to_i256_le();
                    debug_assert!(b.is_some(), "a DECIMAL past 65 digits reached the heap");
                    out.extend_from_slice(&b.unwrap_or([0; 32]));
                }
                DataType::Decimal { scale, .. } => {
                    out.extend_from_slice(&d.rescale(scale).mantissa().to_le_bytes())
                }
                _ => out.extend_from_slice(&d.mantissa().to_le_bytes()),
            },
            Value::DateTime(d) => out.extend_from_slice(&d.pack().to_le_bytes()),
            // ENUM/SET: only the member number (position or bitmask), 8 bytes; the text
            // comes back from the column's member list.
            Value::Member { number, .. } => out.extend_from_slice(&number.to_le_bytes()),
            // A JSON document is stored as its binary bytes, like a BLOB; the engine
            // does not read them.
            // A BIT value is its (n+7)/8 bytes, likewise length-prefixed.
            Value::Bytes(b) | Value::Json(b) | Value::Bits(b) => {
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }
}

/// Decodes a payload; None when it is malformed (the caller reports corruption).
pub fn decode_row(def: &TableDef, p: &[u8]) -> Option<Vec<Value>> {
    let n = def.columns.len();
    let bitmap = n.div_ceil(8);
    let mut at = bitmap;
    let mut row = Vec::with_capacity(n);
    let take = |at: &mut usize, k: usize| -> Option<&[u8]> {
        let s = p.get(*at..*at + k)?;
        *at += k;
        Some(s)
    };
    for (i, c) in def.columns.iter().enumerate() {
        if *p.get(i / 8)? & (1 << (i % 8)) != 0 {
            row.push(Value::Null);
            continue;
        }
        let t = &c.data_type;
        row.push(if t.is_integer() {
            let b: [u8; 8] = take(&mut at, 8)?.try_into().ok()?;
            if t.is_unsigned() {
                Value::UInt(u64::from_le_bytes(b))
            } else {
                Value::Int(i64::from_le_bytes(b))
            }
        } else {
            match t {
                DataType::Float { .. } | DataType::Double { .. } => {
                    Value::Double(f64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?))
                }
                DataType::Decimal { precision, scale } if *precision > WIDE_FROM => Value::Decimal(
                    Decimal::from_i256_le(take(&mut at, 32)?.try_into().ok()?, *scale)?,
                ),
                DataType::Decimal { scale, .. } => Value::Decimal(Decimal::new(
                    i128::from_le_bytes(take(&mut at, 16)?.try_into().ok()?),
                    *scale,
                )),
                DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. } => {
                    let d =
                        DateTime::unpack(u64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?));
                    Value::DateTime(if *t == DataType::Date {
                        d.as_date()
                    } else {
                        DateTime {
                            fsp: t.fsp().unwrap_or(0),
                            ..d
                        }
                    })
                }
                DataType::Time { fsp } => {
                    let m = i64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?);
                    Value::str(&time_value::format(m, *fsp))
                }
                DataType::Year => {
                    Value::Int(i64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?))
                }
                DataType::Enum(_) | DataType::Set(_) => {
                    let n = u64::from_le_bytes(take(&mut at, 8)?.try_into().ok()?);
                    if let DataType::Enum(_) = t {
                        strata_types::member::enum_value(&c.members, n)
                    } else {
                        strata_types::member::set_value(&c.members, n)
                    }
                }
                _ => {
                    let len = u32::from_le_bytes(take(&mut at, 4)?.try_into().ok()?) as usize;
                    let b = take(&mut at, len)?.to_vec();
                    if *t == DataType::Json {
                        Value::Json(b)
                    } else if let DataType::Bit(_) = t {
                        Value::Bits(b)
                    } else {
                        Value::Bytes(b)
                    }
                }
            }
        });
    }
    Some(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DECIMAL(39..65) columns take 32 bytes in the payload and in a fixed-length
    /// table's capacity; every digit comes back.
    #[test]
    fn wide_decimal_columns_round_trip() {
        let col = |name: &str, precision, scale| {
            strata_types::ColumnDef::plain(
                name,
                DataType::Decimal { precision, scale },
                true,
                strata_types::Collation::Binary,
            )
        };
        let def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "heap".into(),
            columns: vec![col("a", 65, 30), col("b", 10, 2), col("c", 39, 0)],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        };
        assert_eq!(fixed_capacity(&def), Some(1 + 32 + 16 + 32));
        let d = |t: &str, s: u8| Value::Decimal(Decimal::parse(t).unwrap().rescale(s));
        for row in [
            vec![
                d(
                    "-12345678901234567890123456789012345.123456789012345678901234567891",
                    30,
                ),
                d("-12345678.91", 2),
                d("999999999999999999999999999999999999999", 0),
            ],
            vec![Value::Null, d("0", 2), d("-1", 0)],
        ] {
            let mut b = Vec::new();
            encode_row(&def, &row, &mut b);
            let back = decode_row(&def, &b).unwrap();
            assert_eq!(back, row);
            for (x, y) in back.iter().zip(&row) {
                assert_eq!(x.to_text(), y.to_text());
            }
        }
    }
}
