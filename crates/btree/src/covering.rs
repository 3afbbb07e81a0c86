//! Index-only ("covering") reads of a secondary index: which reads may take a row's
//! values from its entry's key instead of the clustered record, and decoding those
//! values back from the key bytes.
//!
//! A secondary entry carries no transaction id, so a plain read follows every entry to
//! its clustered record to find the version its read view sees. InnoDB's shortcut, used
//! here: each secondary leaf keeps the largest id of the transactions that inserted an
//! entry on it or made one of its entries stale (`page::max_trx`, maintained by
//! `Tree::put_stamped` and `Tree::stamp`). When that id is below both
//!
//! - the view's `up_limit` (every transaction below it had ended when the view was
//!   made, so the view sees every change to the page), and
//! - the smallest id whose stale entries may still be in the tree
//!   (`TrxSys::clean_below`: a transaction stays registered from its first change
//!   until rollback removed its entries, or purge the entries its commit left stale),
//!
//! then every entry on the leaf is the current entry of a row the view sees, and the
//! key holds the row's indexed and primary-key values. Otherwise (an id of 0 or
//! unknown, a recent change) the read falls back to the clustered lookup. Pages from
//! before the field read 0: always the fallback. The engine trusts nothing until the
//! startup sweep has removed what an earlier run left stale, nor after a purge failure
//! left entries behind (`Inner::covering_off`, per table `covering_off_spaces`).
//!
//! Only columns whose key bytes decode to exactly the value a row decodes to are read
//! this way: integers, DECIMAL and the date types. A string's key is its collation's
//! weight string, not its text, so an index holding a string column is never covering.

use strata_types::{DataType, DateTime, Decimal, IndexDef, TableDef, Value};

/// Whether a column of type `t` can be read back from its key bytes.
fn decodable(t: &DataType) -> bool {
    (t.is_integer() && !matches!(t, DataType::Year | DataType::Bit(_)))
        || matches!(
            t,
            DataType::Decimal { .. }
                | DataType::Date
                | DataType::DateTime { .. }
                | DataType::Timestamp { .. }
        )
}

/// Whether a read of index `ix` that needs the columns `cols` marks (positions past the
/// table's columns ignored) can be answered from the entries: each is an index or
/// primary-key column (`pk`, None for a hidden row id), and all of those decode.
pub fn covers(def: &TableDef, pk: Option<&IndexDef>, ix: &IndexDef, cols: &[bool]) -> bool {
    let in_key = |c: usize| ix.columns.contains(&c) || pk.is_some_and(|p| p.columns.contains(&c));
    let needed_ok = cols
        .iter()
        .take(def.columns.len())
        .enumerate()
        .all(|(c, &need)| !need || in_key(c));
    needed_ok
        && ix
            .columns
            .iter()
            .chain(pk.map(|p| &p.columns[..]).unwrap_or(&[]))
            .all(|&c| def.columns.get(c).is_some_and(|d| decodable(&d.data_type)))
}

/// Decodes one column's key bytes at `*at` (see `strata_types::keycode`).
fn decode_one(t: &DataType, k: &[u8], at: &mut usize) -> Option<Value> {
    let tag = *k.get(*at)?;
    *at += 1;
    if tag == 0 {
        return Some(Value::Null);
    }
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = k.get(*at..*at + n)?;
        *at += n;
        Some(s)
    };
    if t.is_integer() {
        let sign = take(1)?[0];
        let u = u64::from_be_bytes(take(8)?.try_into().ok()?);
        return Some(match (sign, t.is_unsigned()) {
            (0, false) => Value::Int(u as i64),
            (1, false) => Value::Int(i64::try_from(u).ok()?),
            (1, true) => Value::UInt(u),
            _ => return None,
        });
    }
    match t {
        DataType::Decimal { precision, scale } if *precision > strata_types::decimal::NARROW => {
            // keys.md: the 256-bit mantissa with its sign bit flipped, big-endian.
            let mut le: [u8; 32] = take(32)?.try_into().ok()?;
            le.reverse();
            le[31] ^= 0x80;
            Some(Value::Decimal(Decimal::from_i256_le(&le, *scale)?))
        }
        DataType::Decimal { scale, .. } => {
            let bits = u128::from_be_bytes(take(16)?.try_into().ok()?);
            Some(Value::Decimal(Decimal::new(
                (bits ^ (1u128 << 127)) as i128,
                *scale,
            )))
        }
        DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. } => {
            let d = DateTime::unpack(u64::from_be_bytes(take(8)?.try_into().ok()?));
            Some(Value::DateTime(if *t == DataType::Date {
                d.as_date()
            } else {
                DateTime {
                    fsp: t.fsp().unwrap_or(0),
                    ..d
                }
            }))
        }
        _ => None,
    }
}

/// Fills `row` (the table's width, other columns NULL) from secondary entry key `k` of
/// index `ix`: the index's columns, then the primary key's (`pk`; a hidden row id adds
/// nothing). None when the bytes do not decode (the caller treats it as corruption).
pub fn decode_entry(
    def: &TableDef,
    pk: Option<&IndexDef>,
    ix: &IndexDef,
    k: &[u8],
    row: &mut Vec<Value>,
) -> Option<()> {
    row.clear();
    row.resize(def.columns.len(), Value::Null);
    let mut at = 0;
    for &c in ix
        .columns
        .iter()
        .chain(pk.map(|p| &p.columns[..]).unwrap_or(&[]))
    {
        let v = decode_one(&def.columns.get(c)?.data_type, k, &mut at)?;
        row[c] = v;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::keycode::encode_index_key;
    use strata_types::{Collation, ColumnDef};

    fn col(name: &str, data_type: DataType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            data_type,
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: Collation::Binary,
            members: Vec::new(),
            generated: None,
            comment: String::new(),
            real_unsigned: false,
            invisible: Default::default(),
        }
    }

    fn table() -> TableDef {
        TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col("id", DataType::BigInt { unsigned: false }),
                col("u", DataType::Int { unsigned: true }),
                col(
                    "price",
                    DataType::Decimal {
                        precision: 15,
                        scale: 2,
                    },
                ),
                col("day", DataType::Date),
                col("name", DataType::VarChar(20)),
            ],
            indexes: vec![
                IndexDef {
                    invisible: false,
                    name: "PRIMARY".into(),
                    columns: vec![0],
                    unique: true,
                    primary: true,
                    comment: String::new(),
                },
                IndexDef {
                    invisible: false,
                    name: "k".into(),
                    columns: vec![2, 3, 1],
                    unique: false,
                    primary: false,
                    comment: String::new(),
                },
                IndexDef {
                    invisible: false,
                    name: "n".into(),
                    columns: vec![4],
                    unique: false,
                    primary: false,
                    comment: String::new(),
                },
            ],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        }
    }

    #[test]
    fn entries_decode_to_the_values_they_were_made_from() {
        let d = table();
        let (pk, ix) = (&d.indexes[0], &d.indexes[1]);
        let day = DateTime::parse("1995-03-15").map(|x| x.as_date());
        for (id, u, price) in [
            (
                -7i64,
                Value::UInt(u64::from(u32::MAX)),
                Decimal::new(-12345, 2),
            ),
            (i64::MAX, Value::Null, Decimal::new(0, 2)),
            (0, Value::UInt(3), Decimal::new(99_999_999_999_999, 2)),
        ] {
            let row = vec![
                Value::Int(id),
                u,
                Value::Decimal(price),
                day.map_or(Value::Null, Value::DateTime),
                Value::str("x"),
            ];
            let mut k = Vec::new();
            encode_index_key(&mut k, &d, ix, &row);
            encode_index_key(&mut k, &d, pk, &row);
            let mut got = Vec::new();
            decode_entry(&d, Some(pk), ix, &k, &mut got).expect("decodes");
            assert_eq!(&got[..4], &row[..4]);
            assert_eq!(got[4], Value::Null, "a column not in the entry stays NULL");
        }
    }

    /// A DECIMAL(39..65) key column (keys.md: 32 bytes) decodes to every digit, in a
    /// secondary entry and as the primary key after it.
    #[test]
    fn wide_decimal_keys_decode() {
        let mut d = table();
        d.columns[0].data_type = DataType::Decimal {
            precision: 65,
            scale: 30,
        };
        d.columns[2].data_type = DataType::Decimal {
            precision: 40,
            scale: 2,
        };
        let (pk, ix) = (&d.indexes[0], &d.indexes[1]);
        let p = |t: &str, s: u8| Value::Decimal(Decimal::parse(t).unwrap().rescale(s));
        for (id, price) in [
            (
                p(
                    "-99999999999999999999999999999999999.999999999999999999999999999999",
                    30,
                ),
                p("99999999999999999999999999999999999999.99", 2),
            ),
            (p("0.000000000000000000000000000001", 30), p("-0.01", 2)),
            (
                p("0", 30),
                p("-1701411834604692317316873037158841057.28", 2),
            ),
        ] {
            let row = vec![id, Value::UInt(1), price, Value::Null, Value::str("x")];
            let mut k = Vec::new();
            encode_index_key(&mut k, &d, ix, &row);
            encode_index_key(&mut k, &d, pk, &row);
            let mut got = Vec::new();
            decode_entry(&d, Some(pk), ix, &k, &mut got).expect("decodes");
            assert_eq!(&got[..4], &row[..4]);
            assert_eq!(got[0].to_text(), row[0].to_text());
            assert_eq!(got[2].to_text(), row[2].to_text());
        }
    }

    #[test]
    fn only_key_columns_of_decodable_types_cover() {
        let d = table();
        let (pk, ix, by_name) = (&d.indexes[0], &d.indexes[1], &d.indexes[2]);
        let need = |cs: &[usize]| {
            let mut m = vec![false; d.columns.len()];
            cs.iter().for_each(|&c| m[c] = true);
            m
        };
        assert!(covers(&d, Some(pk), ix, &need(&[0, 1, 2, 3])));
        assert!(
            !covers(&d, Some(pk), ix, &need(&[0, 4])),
            "name is not in the entry"
        );
        assert!(
            !covers(&d, None, ix, &need(&[0])),
            "no primary key: id is not in it"
        );
        assert!(
            !covers(&d, Some(pk), by_name, &need(&[0])),
            "a string key is weights"
        );
    }

    #[test]
    fn truncated_bytes_are_refused() {
        let d = table();
        let (pk, ix) = (&d.indexes[0], &d.indexes[1]);
        let mut row = Vec::new();
        assert!(decode_entry(&d, Some(pk), ix, &[1, 0, 0], &mut row).is_none());
    }
}
