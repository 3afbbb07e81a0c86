//! Row and clustered-record encodings of the `btree` engine (docs/format/btree.md).
//!
//! A clustered record's value is `[flags][trx_id][roll_ptr][row]`: the header is what
//! MVCC reads (who wrote this version, where the previous one is); the row is a null
//! bitmap followed by each non-NULL column. Integers are zig-zag varints, so sysbench's
//! small ids and counters take one to three bytes instead of eight.

use strata_types::datetime::DateTime;
use strata_types::decimal::Decimal;
use strata_types::member;
use strata_types::time_value;
use strata_types::{DataType, TableDef, Value};

pub const FLAG_DELETED: u8 = 1;
pub const FLAG_OVERFLOW: u8 = 2;
pub const HEADER: usize = 17;

/// The MVCC header of a clustered record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecHeader {
    pub flags: u8,
    pub trx_id: u64,
    pub roll_ptr: u64,
}

impl RecHeader {
    pub fn deleted(&self) -> bool {
        self.flags & FLAG_DELETED != 0
    }
    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.flags);
        out.extend_from_slice(&self.trx_id.to_le_bytes());
        out.extend_from_slice(&self.roll_ptr.to_le_bytes());
    }
    pub fn read(v: &[u8]) -> Option<RecHeader> {
        let h = v.get(..HEADER)?;
        Some(RecHeader {
            flags: h[0],
            trx_id: u64::from_le_bytes(h[1..9].try_into().ok()?),
            roll_ptr: u64::from_le_bytes(h[9..17].try_into().ok()?),
        })
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= ((byte & 0x7F) as u64) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn zigzag(i: i64) -> u64 {
    ((i << 1) ^ (i >> 63)) as u64
}
fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

pub fn encode_row(def: &TableDef, row: &[Value], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + def.columns.len().div_ceil(8), 0);
    for (i, (v, c)) in row.iter().zip(&def.columns).enumerate() {
        if let (DataType::Time { .. }, Value::Bytes(b)) = (&c.data_type, v) {
            // The SQL layer stores only canonical TIME text (time_value::format).
            put_varint(out, zigzag(time_value::parse_canonical(b).unwrap_or(0)));
            continue;
        }
        match v {
            Value::Null => out[start + i / 8] |= 1 << (i % 8),
            Value::Int(x) => put_varint(out, zigzag(*x)),
            Value::UInt(x) => put_varint(out, *x),
            Value::Double(x) => out.extend_from_slice(&x.to_bits().to_le_bytes()),
            Value::Decimal(d) => {
                let scale = match c.data_type {
                    DataType::Decimal { scale, .. } => scale,
                    _ => d.scale,
                };
                out.extend_from_slice(&d.rescale(scale).mantissa.to_le_bytes());
            }
            Value::DateTime(d) => put_varint(out, d.pack()),
            // ENUM/SET: only the member number (position or bitmask); the text comes
            // back from the column's member list.
            Value::Member { number, .. } => put_varint(out, *number),
            // A JSON document is stored as its binary bytes, like a BLOB; the engine
            // does not read them.
            // A BIT value is its (n+7)/8 bytes, likewise length-prefixed.
            Value::Bytes(b) | Value::Json(b) | Value::Bits(b) => {
                put_varint(out, b.len() as u64);
                out.extend_from_slice(b);
            }
        }
    }
}

/// None when the bytes are malformed (the caller reports corruption).
pub fn decode_row(def: &TableDef, b: &[u8]) -> Option<Vec<Value>> {
    let mut row = Vec::with_capacity(def.columns.len());
    decode_row_into(def, b, &mut row, None)?;
    Some(row)
}

/// Steps over the stored bytes of one non-NULL column of type `t` without building its
/// value (what [`decode_row_into`] does for a column the read does not need).
fn skip_column(t: &DataType, b: &[u8], at: &mut usize) -> Option<()> {
    if t.is_integer() {
        return get_varint(b, at).map(|_| ());
    }
    match t {
        DataType::Float | DataType::Double => *at += 8,
        DataType::Decimal { .. } => *at += 16,
        DataType::Date
        | DataType::DateTime { .. }
        | DataType::Timestamp { .. }
        | DataType::Time { .. }
        | DataType::Year
        | DataType::Enum(_)
        | DataType::Set(_) => {
            get_varint(b, at)?;
        }
        _ => {
            let n = get_varint(b, at)? as usize;
            *at = at.checked_add(n)?;
        }
    }
    (*at <= b.len()).then_some(())
}

/// [`decode_row`] into `row`, whose strings' buffers are reused where the new value is
/// a string too (a scan decodes every row into the same vector: no allocation per
/// string column and row). With `cols`, only the columns it marks are decoded; the
/// others are stepped over and come out NULL (a query that reads 4 of lineitem's 16
/// columns builds 4 values per row). None when the bytes are malformed; `row` is then
/// unspecified.
pub fn decode_row_into(
    def: &TableDef,
    b: &[u8],
    row: &mut Vec<Value>,
    cols: Option<&[bool]>,
) -> Option<()> {
    let mut at = def.columns.len().div_ceil(8);
    row.truncate(def.columns.len());
    let reused = row.len();
    let put = |i: usize, v: Value, row: &mut Vec<Value>| {
        if i < reused {
            row[i] = v;
        } else {
            row.push(v);
        }
    };
    // Past the last column the mask marks nothing is read: those are NULL at once.
    let stop = match cols {
        Some(m) if m.len() >= def.columns.len() => m.iter().rposition(|&x| x).map_or(0, |p| p + 1),
        _ => def.columns.len(),
    };
    for (i, c) in def.columns.iter().enumerate() {
        if i >= stop {
            if i >= reused || !row[i].is_null() {
                put(i, Value::Null, row);
            }
            continue;
        }
        if b.get(i / 8)? & (1 << (i % 8)) != 0 {
            put(i, Value::Null, row);
            continue;
        }
        let t = &c.data_type;
        if cols.is_some_and(|m| !m.get(i).copied().unwrap_or(true)) {
            skip_column(t, b, &mut at)?;
            put(i, Value::Null, row);
            continue;
        }
        let v = if t.is_integer() {
            let u = get_varint(b, &mut at)?;
            if t.is_unsigned() {
                Value::UInt(u)
            } else {
                Value::Int(unzigzag(u))
            }
        } else {
            match t {
                DataType::Float | DataType::Double => {
                    let s = b.get(at..at + 8)?;
                    at += 8;
                    Value::Double(f64::from_bits(u64::from_le_bytes(s.try_into().ok()?)))
                }
                DataType::Decimal { scale, .. } => {
                    let s = b.get(at..at + 16)?;
                    at += 16;
                    Value::Decimal(Decimal::new(
                        i128::from_le_bytes(s.try_into().ok()?),
                        *scale,
                    ))
                }
                DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. } => {
                    let d = DateTime::unpack(get_varint(b, &mut at)?);
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
                    let m = unzigzag(get_varint(b, &mut at)?);
                    Value::str(&time_value::format(m, *fsp))
                }
                DataType::Year => Value::Int(unzigzag(get_varint(b, &mut at)?)),
                DataType::Enum(_) => member::enum_value(&c.members, get_varint(b, &mut at)?),
                DataType::Set(_) => member::set_value(&c.members, get_varint(b, &mut at)?),
                _ => {
                    let n = get_varint(b, &mut at)? as usize;
                    let s = b.get(at..at.checked_add(n)?)?;
                    at += n;
                    if *t == DataType::Json {
                        Value::Json(s.to_vec())
                    } else if let DataType::Bit(_) = t {
                        Value::Bits(s.to_vec())
                    } else {
                        if let Some(Value::Bytes(old)) = row.get_mut(i).filter(|_| i < reused) {
                            old.clear();
                            old.extend_from_slice(s);
                            continue;
                        }
                        Value::Bytes(s.to_vec())
                    }
                }
            }
        };
        put(i, v, row);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag_round_trip() {
        for i in [0i64, 1, -1, 63, -64, 1 << 40, i64::MIN, i64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, zigzag(i));
            let mut at = 0;
            assert_eq!(unzigzag(get_varint(&b, &mut at).unwrap()), i);
            assert_eq!(at, b.len());
        }
        assert!(get_varint(&[0x80; 11], &mut 0).is_none());
    }

    #[test]
    fn temporal_columns_round_trip_with_fractions() {
        use strata_types::{Collation, ColumnDef};
        let col = |name: &str, data_type| ColumnDef {
            name: name.into(),
            data_type,
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: Collation::Binary,
            members: Vec::new(),
        };
        let def = TableDef {
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col("a", DataType::DateTime { fsp: 6 }),
                col("b", DataType::Time { fsp: 3 }),
                col("c", DataType::Year),
                col("d", DataType::Timestamp { fsp: 2 }),
            ],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        };
        let dt = DateTime::parse("2020-01-01 10:00:00.123456").unwrap();
        let row = vec![
            Value::DateTime(dt),
            Value::str("-838:59:59.500"),
            Value::Int(0),
            Value::DateTime(DateTime::parse("2038-01-19 03:14:07.25").unwrap()),
        ];
        let mut b = Vec::new();
        encode_row(&def, &row, &mut b);
        let back = decode_row(&def, &b).unwrap();
        assert_eq!(back, row);
        assert_eq!(back[0].to_text(), "2020-01-01 10:00:00.123456");
        assert_eq!(back[1].to_text(), "-838:59:59.500");
        assert_eq!(back[3].to_text(), "2038-01-19 03:14:07.25");
    }

    /// A masked decode builds only the marked columns, steps over the others of every
    /// stored kind (varints, fixed-width numbers, strings, temporals, NULLs) and so
    /// lands on the right bytes for each later column; unmarked ones come out NULL.
    #[test]
    fn masked_decode_steps_over_unread_columns() {
        use strata_types::{Collation, ColumnDef};
        let col = |name: &str, data_type| ColumnDef {
            name: name.into(),
            data_type,
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: Collation::Binary,
            members: Vec::new(),
        };
        let def = TableDef {
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col("i", DataType::Int { unsigned: false }),
                col("s", DataType::VarChar(20)),
                col(
                    "d",
                    DataType::Decimal {
                        precision: 15,
                        scale: 2,
                    },
                ),
                col("f", DataType::Double),
                col("n", DataType::Int { unsigned: false }),
                col("dt", DataType::Date),
                col("t", DataType::Time { fsp: 0 }),
                col("last", DataType::VarChar(20)),
            ],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        };
        let row = vec![
            Value::Int(-300),
            Value::str("a string of some length"),
            Value::Decimal(Decimal::new(12345, 2)),
            Value::Double(2.5),
            Value::Null,
            Value::DateTime(DateTime::parse("1995-03-15").unwrap().as_date()),
            Value::str("10:11:12"),
            Value::str("end"),
        ];
        let mut b = Vec::new();
        encode_row(&def, &row, &mut b);
        for mask in [
            vec![false, false, false, false, false, false, false, true],
            vec![true, false, true, false, true, false, true, false],
            vec![false, true, false, true, false, true, false, true],
            vec![true; 8],
        ] {
            // Decoded into a vector holding other values first, as a scan reuses it.
            let mut got = vec![Value::str("old"); 8];
            decode_row_into(&def, &b, &mut got, Some(&mask)).unwrap();
            for (i, want) in row.iter().enumerate() {
                let expect = if mask[i] { want.clone() } else { Value::Null };
                assert_eq!(got[i], expect, "column {i} with mask {mask:?}");
            }
        }
        // A mask shorter than the row reads the columns past its end.
        let mut got = Vec::new();
        decode_row_into(&def, &b, &mut got, Some(&[false])).unwrap();
        assert_eq!(got[0], Value::Null);
        assert_eq!(got[1..], row[1..]);
        // Truncated bytes are malformed when a column read or stepped over runs past
        // them; columns after the last one marked are not looked at.
        let last_only = [false, false, false, false, false, false, false, true];
        assert!(decode_row_into(&def, &b[..b.len() - 2], &mut got, Some(&last_only)).is_none());
        let first_only = [true, false, false, false, false, false, false, false];
        decode_row_into(&def, &b[..b.len() - 2], &mut got, Some(&first_only)).unwrap();
        assert_eq!(got[0], row[0]);
        assert!(got[1..].iter().all(Value::is_null));
    }

    #[test]
    fn header_round_trips() {
        let h = RecHeader {
            flags: FLAG_DELETED,
            trx_id: 77,
            roll_ptr: 99,
        };
        let mut b = Vec::new();
        h.write(&mut b);
        assert_eq!(RecHeader::read(&b), Some(h));
        assert!(RecHeader::read(&b[..5]).is_none());
    }
}
