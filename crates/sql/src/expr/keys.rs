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
        Value::Decimal(d) if !common_form(d) => {
            // Past the common scale or 38 digits there, rounding to it would merge
            // unequal values: the value shown, trailing zeros cut, as text.
            let text = d.rescale(d.shown).held_text();
            let text = match text.contains('.') {
                true => text.trim_end_matches('0').trim_end_matches('.'),
                false => &text,
            };
            match Decimal::parse_held(text).filter(common_form) {
                // Equal to a value of the common form (1.500000000000 and 1.5).
                Some(n) => group_key(out, &Value::Decimal(n), coll),
                None => {
                    out.push(5);
                    out.extend_from_slice(text.as_bytes());
                    out.push(0);
                }
            }
        }
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
            match Decimal::from_f64(*d, COMMON_SCALE) {
                Some(dec) => {
                    // A double that is exactly its rounding at the common scale (0.1, 2.5,
                    // 3) meets the equal integer or decimal. One that is not is a value
                    // of its own: 0.1 and 0.09999999999999964 (4.1 - 4) are two groups in
                    // MySQL, whose temporary table compares the doubles themselves.
                    let exact = dec.to_f64() == *d;
                    encode_value(
                        out,
                        &Value::Decimal(dec),
                        &DataType::Decimal {
                            precision: 38,
                            scale: COMMON_SCALE,
                        },
                        coll,
                    );
                    if !exact {
                        // After the fixed-width decimal, a byte no key starts with, then
                        // the double's bits in an order-preserving form.
                        out.push(DOUBLE_TAIL);
                        let bits = d.to_bits();
                        let ordered = if bits >> 63 == 1 {
                            !bits
                        } else {
                            bits | 1 << 63
                        };
                        out.extend_from_slice(&ordered.to_be_bytes());
                    }
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

/// The scale numbers group at (their key is the i128 mantissa at it).
const COMMON_SCALE: u8 = 10;

/// Follows a double's decimal key when the double is not exactly that decimal: above
/// every first byte of a key (0 to 5) and below the WITH ROLLUP marker (0xFF).
const DOUBLE_TAIL: u8 = 0xFE;

/// Whether `d`, as shown, is exactly a narrow value at [`COMMON_SCALE`] (nearly every
/// value): then its key is that mantissa, shared with equal integers. At most 27
/// integer digits, so that rounding to the shown scale (which may carry into a 28th)
/// stays within 38 digits at the common scale; tested on the mantissa, no division.
#[inline]
fn common_form(d: &Decimal) -> bool {
    const INT: u32 = 27;
    !d.is_wide()
        && d.shown <= COMMON_SCALE
        && 10u128
            .checked_pow(INT + d.scale as u32)
            .is_none_or(|lim| d.mantissa().unsigned_abs() < lim)
}

fn decimal_of(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Decimal(Decimal::from_i64(*i).rescale(COMMON_SCALE)),
        Value::UInt(u) => Value::Decimal(Decimal::new(*u as i128, 0).rescale(COMMON_SCALE)),
        // Grouped by the value shown (MySQL groups `a / 70000` for a = 1, 2, 3 as one
        // 0.0000), then at a common scale so 1.5 and 1.50 meet.
        Value::Decimal(d) => Value::Decimal(d.rescale(d.shown).rescale(COMMON_SCALE)),
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

    /// Numbers group by value, digit for digit: past the common scale (1e-20 apart from
    /// 2e-20), past 38 digits there (10^30 and 10^30 + 1), and wide; equal values of
    /// different scales and kinds meet.
    #[test]
    fn decimal_keys_keep_every_digit() {
        let k = |v: Value| {
            let mut out = Vec::new();
            group_key(&mut out, &v, Collation::Binary);
            out
        };
        let d = |t: &str| Value::Decimal(Decimal::parse(t).unwrap());
        let distinct = [
            d("0.00000000000000000001"),
            d("0.00000000000000000002"),
            d("1000000000000000000000000000000"),
            d("1000000000000000000000000000001"),
            d("9999999999999999999999999999.5"),
            d("12345678901234567890123456789012345678901.5"),
            d("12345678901234567890123456789012345678901.6"),
            d("-12345678901234567890123456789012345678901.5"),
            d("1.5"),
            Value::Int(1),
            Value::Int(-3),
        ];
        for (i, a) in distinct.iter().enumerate() {
            for b in &distinct[i + 1..] {
                assert_ne!(k(a.clone()), k(b.clone()), "{a:?} and {b:?}");
            }
        }
        assert_eq!(k(d("1.50000000000000000000")), k(d("1.5")));
        assert_eq!(k(d("1.0")), k(Value::Int(1)));
        assert_eq!(k(d("-3.000000000000000000000000")), k(Value::Int(-3)));
        assert_eq!(
            k(d("12345678901234567890123456789012345678901.50")),
            k(d("12345678901234567890123456789012345678901.5"))
        );
    }

    /// Doubles group by their value, not by its rounding to ten places: 4.1 - 4 is not
    /// 0.1 (MySQL shows two groups), while an exact double meets the equal integer or
    /// decimal; two-column keys stay apart when the first column's double has its tail.
    #[test]
    fn double_keys_keep_doubles_that_round_alike_apart() {
        let k = |vs: &[Value]| {
            let mut out = Vec::new();
            for v in vs {
                group_key(&mut out, v, Collation::Binary);
            }
            out
        };
        let near = 4.1f64 - 4.0;
        assert_ne!(near, 0.1);
        assert_ne!(k(&[Value::Double(near)]), k(&[Value::Double(0.1)]));
        assert_ne!(k(&[Value::Double(2.1 - 1e-15)]), k(&[Value::Double(2.1)]));
        assert_eq!(k(&[Value::Double(near)]), k(&[Value::Double(4.1 - 4.0)]));
        assert_eq!(k(&[Value::Double(3.0)]), k(&[Value::Int(3)]));
        assert_eq!(
            k(&[Value::Double(0.25)]),
            k(&[Value::Decimal(Decimal::parse("0.25").unwrap())])
        );
        assert_eq!(k(&[Value::Double(-0.0)]), k(&[Value::Double(0.0)]));
        assert_ne!(
            k(&[Value::Double(near), Value::Int(1)]),
            k(&[Value::Double(0.1), Value::Int(1)])
        );
        // The tail keeps the doubles' order among themselves.
        assert!(k(&[Value::Double(2.1 - 1e-15)]) < k(&[Value::Double(2.1 + 1e-15)]));
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
