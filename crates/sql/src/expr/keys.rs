//! Order-preserving byte keys for values under SQL equality: two values that compare
//! equal (with the collation) get the same bytes, so grouping, DISTINCT, set operations
//! and `IN (subquery)` can find equal values by hashing or sorting bytes.

use strata_types::keycode::encode_value;
use strata_types::{Collation, DataType, Decimal, Value};

/// Order-preserving bytes for grouping and DISTINCT: equal under SQL comparison (with
/// the collation) means equal bytes.
pub fn group_key(out: &mut Vec<u8>, v: &Value, coll: Collation) {
    match v {
        Value::Null => out.push(0),
        // An ENUM/SET value groups by its text, as MySQL's GROUP BY and DISTINCT do.
        Value::Bytes(b) | Value::Member { text: b, .. } => {
            out.push(2);
            // The weights go straight into the key; a zero byte among them (rare) is
            // escaped as 0 0xFF afterwards, so the terminator 0 1 stays unambiguous.
            let start = out.len();
            coll.weight_string(b, out);
            if out[start..].contains(&0) {
                let w = out.split_off(start);
                for x in w {
                    if x == 0 {
                        out.extend_from_slice(&[0, 0xFF]);
                    } else {
                        out.push(x);
                    }
                }
            }
            out.extend_from_slice(&[0, 1]);
        }
        Value::DateTime(d) => {
            out.push(3);
            out.extend_from_slice(&d.pack().to_be_bytes());
        }
        // A bit value groups as its number (b'101' with 5).
        Value::Bits(b) => group_key(out, &Value::UInt(strata_types::value::bits_value(b)), coll),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => {
            out.push(1);
            let ok = encode_value(
                out,
                &decimal_of(v),
                &DataType::Decimal {
                    precision: 38,
                    scale: 10,
                },
                coll,
            );
            debug_assert!(ok);
        }
        Value::Double(d) => {
            out.push(1);
            match Decimal::from_f64(*d, 10) {
                Some(dec) => {
                    encode_value(
                        out,
                        &Value::Decimal(dec),
                        &DataType::Decimal {
                            precision: 38,
                            scale: 10,
                        },
                        coll,
                    );
                }
                None => out.extend_from_slice(&d.to_bits().to_be_bytes()),
            }
        }
        // A stored document is normalised, so equal documents have equal bytes
        // (numbers of different kinds, 1 and 1.0, stay apart: MySQL's JSON
        // grouping compares them equal; this is narrower, never merging unequal ones).
        Value::Json(b) => {
            out.push(4);
            for &x in b {
                if x == 0 {
                    out.extend_from_slice(&[0, 0xFF]);
                } else {
                    out.push(x);
                }
            }
            out.extend_from_slice(&[0, 1]);
        }
    }
}

fn decimal_of(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Decimal(Decimal::from_i64(*i).rescale(10)),
        Value::UInt(u) => Value::Decimal(Decimal::new(*u as i128, 0).rescale(10)),
        // Grouped by the value shown (MySQL groups `a / 70000` for a = 1, 2, 3 as one
        // 0.0000), then at a common scale so 1.5 and 1.50 meet.
        Value::Decimal(d) => Value::Decimal(d.rescale(d.shown).rescale(10)),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(v: &[u8], coll: Collation) -> Vec<u8> {
        let mut out = Vec::new();
        group_key(&mut out, &Value::Bytes(v.to_vec()), coll);
        out
    }

    #[test]
    fn string_keys_fold_case_and_keep_zero_bytes_apart() {
        // Equal under the case-insensitive collation, apart under binary.
        assert_eq!(
            key(b"Brand#45", Collation::GeneralCi),
            key(b"BRAND#45", Collation::GeneralCi)
        );
        assert_ne!(
            key(b"Brand#45", Collation::Binary),
            key(b"BRAND#45", Collation::Binary)
        );
        // A zero byte is escaped, so "a", "a\0" and "a\0b" are three groups, and a
        // string's key never runs into the next value's.
        let keys = [
            key(b"a", Collation::Binary),
            key(b"a\0", Collation::Binary),
            key(b"a\0b", Collation::Binary),
        ];
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[1], keys[2]);
        assert_eq!(keys[1], [2, b'a', 0, 0xFF, 0, 1]);
        let mut two = Vec::new();
        group_key(&mut two, &Value::Bytes(b"a".to_vec()), Collation::Binary);
        group_key(&mut two, &Value::Bytes(b"b".to_vec()), Collation::Binary);
        let mut other = Vec::new();
        group_key(
            &mut other,
            &Value::Bytes(b"a\0".to_vec()),
            Collation::Binary,
        );
        group_key(&mut other, &Value::Bytes(b"b".to_vec()), Collation::Binary);
        assert_ne!(two, other);
    }
}
