//! The order-preserving ("memcomparable") key encoding every engine stores in its
//! indexes: encoded keys compare with plain byte comparison in the order SQL compares the
//! values, and the encoding of a key prefix is a byte prefix of the full key, so a range
//! over leading columns is a byte range.
//!
//! Per column: one byte `0x00` for NULL (NULL sorts first, as in MySQL), else `0x01`
//! followed by:
//! - integers: a sign byte (`0x00` negative, `0x01` otherwise) and 8 bytes big-endian
//!   (the two's-complement bits for negatives, the magnitude otherwise), so signed and
//!   unsigned values share one order;
//! - DOUBLE/FLOAT: 8 bytes, the IEEE bits with the sign bit flipped (all bits for negatives);
//! - DECIMAL(p ≤ 38): the mantissa at the column's scale, i128 with the sign bit flipped,
//!   16 bytes; DECIMAL(39..65): that mantissa as a 256-bit two's-complement integer with
//!   the sign bit flipped, 32 bytes ([`Decimal::key_bytes_wide`]);
//! - strings under a PAD SPACE collation (utf8mb4_general_ci, utf8mb4_bin): the
//!   collation's weight string (trailing spaces trimmed) as a sequence of tokens, so that
//!   byte order is PAD SPACE order (the shorter string compared as if padded with spaces:
//!   `'a\t' < 'a' = 'a ' < 'a b'`; a plain end-of-string would sort `'a'` first):
//!   - a byte ≥ `0x21` is itself;
//!   - a byte `c` < `0x20` is `0x01, c + 1`;
//!   - a run of `k` spaces (always followed by another byte, trailing ones being trimmed)
//!     is `0x02, varint(k)` when that byte is below `0x20`, else `0x04, !varint(k)` (every
//!     byte complemented, so a longer run sorts first: it reaches the larger byte later);
//!   - the end of the string is `0x03`.
//!
//!   The token kinds order as what the padded comparison sees next: a control character
//!   (`0x01`) < spaces then a control character (`0x02`) < the end, i.e. spaces for ever
//!   (`0x03`) < spaces then a larger byte (`0x04`) < a larger byte itself (≥ `0x21`).
//!   `varint(k)` is `k` for `k < 0x80`, else `0x80 + n` followed by the `n` big-endian
//!   bytes of `k` without leading zeros: order-preserving and self-delimiting, so the
//!   encoding is prefix-free and the next column's bytes never decide a comparison early.
//!   Strings equal under the collation have equal weight strings, hence equal keys;
//! - strings under the binary collation (BINARY, VARBINARY, BLOB; NO PAD): the bytes with
//!   `0x00` escaped as `0x00 0xFF`, ended by `0x00 0x01`;
//! - dates: the packed u64 of [`DateTime::pack`], big-endian (microseconds included);
//! - TIME: the signed microseconds with the sign bit flipped, 8 bytes big-endian
//!   ([`crate::time_value::key_bytes`]);
//! - YEAR: as an integer.
//! - BIT(n): its unsigned number, encoded as an integer.
//! - ENUM, SET: the stored number (member position, bitmask), encoded as an integer, so
//!   an ENUM index orders by member position as MySQL's does.

use crate::collation::Collation;
use crate::datetime::DateTime;
use crate::decimal::Decimal;
use crate::schema::{DataType, IndexDef, TableDef};
use crate::value::Value;

/// Appends one value encoded for a column of type `ty`. Returns false (leaving `out`
/// unspecified) when the value cannot be represented exactly in the column's domain,
/// e.g. 2.5 for an integer column; callers then must not use the index for it.
pub fn encode_value(out: &mut Vec<u8>, v: &Value, ty: &DataType, coll: Collation) -> bool {
    if v.is_null() {
        out.push(0);
        return true;
    }
    out.push(1);
    if ty.is_integer() || *ty == DataType::Year {
        let i: i128 = match v {
            Value::Int(i) => *i as i128,
            Value::UInt(u) => *u as i128,
            Value::Double(d) if d.fract() == 0.0 && d.abs() < 1.8e19 => *d as i128,
            Value::Decimal(d) if !d.is_wide() && d.rescale(0) == *d => d.rescale(0).mantissa(),
            Value::Bytes(b) => {
                match std::str::from_utf8(b)
                    .ok()
                    .and_then(|s| s.trim().parse::<i128>().ok())
                {
                    Some(i) => i,
                    None => return false,
                }
            }
            _ => return false,
        };
        encode_int(out, i);
        return true;
    }
    match ty {
        // BIT(n) orders as its unsigned number.
        DataType::Bit(_) => {
            let u = match v {
                Value::Bits(b) => crate::value::bits_value(b),
                Value::UInt(u) => *u,
                Value::Int(i) if *i >= 0 => *i as u64,
                _ => return false,
            };
            encode_int(out, u as i128);
            true
        }
        // Only a value already converted to the column (it carries its number) probes
        // an ENUM/SET index; a string would need the member list.
        DataType::Enum(_) | DataType::Set(_) => {
            let Value::Member { number, .. } = v else {
                return false;
            };
            encode_int(out, *number as i128);
            true
        }
        DataType::Float { .. } | DataType::Double { .. } => {
            let Some(d) = v.to_f64() else { return false };
            if !v.is_numeric() {
                return false;
            }
            let bits = d.to_bits();
            let flipped = if bits >> 63 == 1 {
                !bits
            } else {
                bits | (1 << 63)
            };
            out.extend_from_slice(&flipped.to_be_bytes());
            true
        }
        DataType::Decimal { precision, scale } => {
            let d = match v {
                Value::Decimal(d) => *d,
                Value::Int(i) => Decimal::from_i64(*i),
                Value::UInt(u) => Decimal::new(*u as i128, 0),
                Value::Double(f) => match Decimal::from_f64(*f, *scale) {
                    Some(d) => d,
                    None => return false,
                },
                _ => return false,
            };
            let r = d.rescale(*scale);
            if r != d {
                return false;
            }
            if *precision > crate::decimal::NARROW {
                // DECIMAL(39..65): the 32-byte form (any value of up to 65 digits).
                return match r.key_bytes_wide() {
                    Some(k) => {
                        out.extend_from_slice(&k);
                        true
                    }
                    None => false,
                };
            }
            // A wide value (past 38 digits) is no DECIMAL(M <= 38) column's value.
            if r.is_wide() {
                return false;
            }
            let bits = (r.mantissa() as u128) ^ (1u128 << 127);
            out.extend_from_slice(&bits.to_be_bytes());
            true
        }
        DataType::Time { .. } => {
            // Only the canonical text the SQL layer stores is a TIME here; anything
            // else is not used to probe the index.
            let Value::Bytes(b) = v else { return false };
            match crate::time_value::parse_canonical(b) {
                Some(m) => {
                    out.extend_from_slice(&crate::time_value::key_bytes(m));
                    true
                }
                None => false,
            }
        }
        DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. } => {
            let dt = match v {
                Value::DateTime(dt) => *dt,
                Value::Bytes(b) => match std::str::from_utf8(b).ok().and_then(DateTime::parse) {
                    Some(dt) => dt,
                    None => return false,
                },
                _ => return false,
            };
            out.extend_from_slice(&dt.pack().to_be_bytes());
            true
        }
        _ => {
            let mut text = Vec::new();
            let bytes: &[u8] = match v {
                Value::Bytes(b) => b,
                other => {
                    other.write_text(&mut text);
                    &text
                }
            };
            if coll.pads_spaces() {
                let mut w = Vec::with_capacity(bytes.len());
                coll.weight_string(bytes, &mut w);
                encode_pad_space(out, &w);
            } else {
                encode_no_pad(out, bytes);
            }
            true
        }
    }
}

/// Whether a column of type `ty` under `coll` is keyed by the PAD SPACE string form,
/// the one that changed between key formats 1 and 2 (`docs/format/keys.md`): a string
/// type under a PAD SPACE collation (every type [`encode_value`] does not give its own
/// form goes to the string form).
pub fn pad_space_key(ty: &DataType, coll: Collation) -> bool {
    let own_form = ty.is_integer()
        || matches!(
            ty,
            DataType::Year
                | DataType::Bit(_)
                | DataType::Enum(_)
                | DataType::Set(_)
                | DataType::Float { .. }
                | DataType::Double { .. }
                | DataType::Decimal { .. }
                | DataType::Time { .. }
                | DataType::Date
                | DataType::DateTime { .. }
                | DataType::Timestamp { .. }
        );
    !own_form && coll.pads_spaces()
}

/// Whether an index of `table` holds a column keyed by the PAD SPACE string form, so its
/// keys differ between key formats 1 and 2.
pub fn has_pad_space_key(table: &TableDef) -> bool {
    table.indexes.iter().any(|ix| {
        ix.columns.iter().any(|&c| {
            table
                .columns
                .get(c)
                .is_some_and(|col| pad_space_key(&col.data_type, col.collation))
        })
    })
}

/// NO PAD bytes: `0x00` escaped as `0x00 0xFF`, ended by `0x00 0x01`.
fn encode_no_pad(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        if b == 0 {
            out.extend_from_slice(&[0, 0xFF]);
        } else {
            out.push(b);
        }
    }
    out.extend_from_slice(&[0, 1]);
}

/// A PAD SPACE weight string (trailing spaces already trimmed) as the tokens of the
/// module comment, whose byte order is the padded comparison's order.
fn encode_pad_space(out: &mut Vec<u8>, w: &[u8]) {
    // Most keys hold no byte at or below the space: copied as they are.
    if w.iter().all(|&b| b > b' ') {
        out.reserve(w.len() + 1);
        out.extend_from_slice(w);
        out.push(0x03);
        return;
    }
    let mut i = 0;
    while i < w.len() {
        let b = w[i];
        if b > b' ' {
            out.push(b);
            i += 1;
        } else if b < b' ' {
            out.extend_from_slice(&[0x01, b + 1]);
            i += 1;
        } else {
            let start = i;
            while i < w.len() && w[i] == b' ' {
                i += 1;
            }
            // A run at the end pads like the end itself (the weight string has its
            // trailing spaces trimmed already; this keeps the form canonical regardless).
            let Some(&next) = w.get(i) else { break };
            let k = (i - start) as u64;
            if next < b' ' {
                out.push(0x02);
                put_varint(out, k, false);
            } else {
                out.push(0x04);
                put_varint(out, k, true);
            }
        }
    }
    out.push(0x03);
}

/// `k` as an order-preserving, self-delimiting varint (one byte below 0x80, else 0x80 + n
/// and n big-endian bytes without leading zeros); every byte complemented when `descending`.
fn put_varint(out: &mut Vec<u8>, k: u64, descending: bool) {
    let flip = if descending { 0xFF } else { 0 };
    if k < 0x80 {
        out.push(k as u8 ^ flip);
        return;
    }
    let be = k.to_be_bytes();
    let skip = (k.leading_zeros() / 8) as usize;
    out.push((0x80 + (8 - skip) as u8) ^ flip);
    out.extend(be[skip..].iter().map(|b| b ^ flip));
}

fn encode_int(out: &mut Vec<u8>, i: i128) {
    if i < 0 {
        out.push(0);
        out.extend_from_slice(&(i as i64 as u64).to_be_bytes());
    } else {
        out.push(1);
        out.extend_from_slice(&(i.min(u64::MAX as i128) as u64).to_be_bytes());
    }
}

/// Encodes the index's columns of a full row. Always exact for stored rows.
pub fn encode_index_key(out: &mut Vec<u8>, table: &TableDef, index: &IndexDef, row: &[Value]) {
    for &c in &index.columns {
        let col = &table.columns[c];
        encode_value(out, &row[c], &col.data_type, col.collation);
    }
}

/// Encodes leading values of an index (a prefix of its columns). False if a value
/// cannot be represented exactly.
pub fn encode_prefix(
    out: &mut Vec<u8>,
    table: &TableDef,
    index: &IndexDef,
    values: &[Value],
) -> bool {
    for (v, &c) in values.iter().zip(&index.columns) {
        let col = &table.columns[c];
        if !encode_value(out, v, &col.data_type, col.collation) {
            return false;
        }
    }
    true
}

/// The smallest byte string greater than every string that starts with `prefix`,
/// or None when there is none (all 0xFF).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut s = prefix.to_vec();
    while let Some(last) = s.pop() {
        if last < 0xFF {
            s.push(last + 1);
            return Some(s);
        }
    }
    None
}

/// True when an encoded key contains a NULL column among its first `columns` columns
/// (unique indexes allow any number of rows with a NULL in the key, as MySQL does).
pub fn row_key_has_null(table: &TableDef, index: &IndexDef, row: &[Value]) -> bool {
    let _ = table;
    index.columns.iter().any(|&c| row[c].is_null())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: Value, ty: DataType, coll: Collation) -> Vec<u8> {
        let mut out = vec![];
        assert!(encode_value(&mut out, &v, &ty, coll));
        out
    }

    /// Random decimals of up to `p` digits at scale `s` (a fixed-seed generator: the
    /// same values every run), with zero and the extremes.
    fn wide_values(p: u8, s: u8, n: usize, seed: u64) -> Vec<Decimal> {
        let mut x = seed;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        let mut out = vec![
            Decimal::new(0, s),
            Decimal::type_max(p, s, false),
            Decimal::type_max(p, s, true),
        ];
        for _ in 0..n {
            let digits = 1 + (next() % p as u64) as usize;
            let text: String = (0..digits)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            let (int, frac) = text.split_at(digits.saturating_sub(s as usize));
            let sign = if next() % 2 == 0 { "-" } else { "" };
            let int = if int.is_empty() { "0" } else { int };
            let text = if frac.is_empty() {
                format!("{sign}{int}")
            } else {
                format!("{sign}{int}.{frac}")
            };
            let d = Decimal::parse(&text).unwrap_or_else(|| panic!("{text}"));
            out.push(d.rescale(s));
        }
        out
    }

    #[test]
    fn wide_decimal_keys_order_as_the_numbers() {
        for (p, s) in [(39u8, 0u8), (40, 2), (50, 10), (65, 0), (65, 30), (39, 30)] {
            let ty = DataType::Decimal {
                precision: p,
                scale: s,
            };
            let vals = wide_values(p, s, 300, p as u64 * 100 + s as u64);
            let mut keyed: Vec<(Vec<u8>, Decimal)> = vals
                .iter()
                .map(|d| (enc(Value::Decimal(*d), ty, Collation::Binary), *d))
                .collect();
            for (k, _) in &keyed {
                assert_eq!(k.len(), 33, "a tag byte and 32 bytes");
            }
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            for w in keyed.windows(2) {
                assert!(
                    w[0].1 <= w[1].1,
                    "DECIMAL({p},{s}): {} before {}",
                    w[0].1,
                    w[1].1
                );
                assert_eq!(w[0].0 == w[1].0, w[0].1 == w[1].1);
            }
        }
        // A value with digits past the column's scale is no key of it (probes scan).
        let ty = DataType::Decimal {
            precision: 40,
            scale: 2,
        };
        let mut out = vec![];
        let d = Decimal::parse("1.005").unwrap();
        assert!(!encode_value(
            &mut out,
            &Value::Decimal(d),
            &ty,
            Collation::Binary
        ));
        // An integer probe meets the column's form.
        assert_eq!(
            enc(Value::Int(-7), ty, Collation::Binary),
            enc(Value::Decimal(Decimal::new(-700, 2)), ty, Collation::Binary)
        );
    }

    #[test]
    fn integers_order_across_signs() {
        let t = DataType::BigInt { unsigned: false };
        let c = Collation::Binary;
        let vals = [
            Value::Null,
            Value::Int(-5),
            Value::Int(-1),
            Value::Int(0),
            Value::UInt(7),
            Value::UInt(u64::MAX),
        ];
        let encs: Vec<_> = vals.iter().map(|v| enc(v.clone(), t, c)).collect();
        assert!(encs.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(enc(Value::Int(3), t, c), enc(Value::UInt(3), t, c));
        let mut o = vec![];
        assert!(!encode_value(&mut o, &Value::Double(2.5), &t, c));
    }

    #[test]
    fn strings_follow_collation_and_prefixes_nest() {
        let t = DataType::VarChar(10);
        let a = enc(Value::str("abc "), t, Collation::GeneralCi);
        let b = enc(Value::str("ABC"), t, Collation::GeneralCi);
        assert_eq!(a, b);
        let ab = enc(Value::str("ab"), t, Collation::GeneralCi);
        assert!(ab < a);
        let with_nul = enc(
            Value::Bytes(b"a\0b".to_vec()),
            DataType::Blob(100),
            Collation::Binary,
        );
        let plain = enc(
            Value::Bytes(b"a".to_vec()),
            DataType::Blob(100),
            Collation::Binary,
        );
        assert!(plain < with_nul);
    }

    fn key(s: &[u8], coll: Collation) -> Vec<u8> {
        let mut out = vec![];
        assert!(encode_value(
            &mut out,
            &Value::Bytes(s.to_vec()),
            &DataType::VarChar(100),
            coll
        ));
        out
    }

    #[test]
    fn pad_space_keys_order_as_the_collation_on_every_short_string() {
        // Every string of up to four characters over an alphabet with NUL, a control
        // character, the space, a case pair, a letter, a multi-byte letter and a byte
        // above the letters, each pair compared both ways, for both PAD SPACE collations.
        let alphabet = ["\0", "\t", " ", "a", "A", "B", "é", "~"];
        let mut strings = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..4 {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            strings.extend(last.iter().cloned());
        }
        for coll in [Collation::GeneralCi, Collation::Utf8Bin] {
            let keys: Vec<Vec<u8>> = strings.iter().map(|s| key(s.as_bytes(), coll)).collect();
            for (a, ka) in strings.iter().zip(&keys) {
                for (b, kb) in strings.iter().zip(&keys) {
                    assert_eq!(
                        ka.cmp(kb),
                        coll.compare(a.as_bytes(), b.as_bytes()),
                        "{coll:?} {a:?} {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn pad_space_keys_examples_long_runs_and_next_columns() {
        for coll in [Collation::GeneralCi, Collation::Utf8Bin] {
            let k = |s: &str| key(s.as_bytes(), coll);
            // The strings of the issue in PAD SPACE order (a tab is 9, a newline 10).
            let sorted = ["a\0", "a\t", "a\n x", "a", "a b"];
            for w in sorted.windows(2) {
                assert!(k(w[0]) < k(w[1]), "{coll:?} {:?} < {:?}", w[0], w[1]);
            }
            assert_eq!(k("a"), k("a   "));
            assert_eq!(k("b"), [1, coll.fold_char('b') as u8, 3]);
            // Runs of spaces past one varint byte, both before a control character and
            // before a letter, against each other and the plain end.
            for n in [1usize, 127, 128, 255, 256, 70_000] {
                for m in [1usize, 127, 128, 255, 256, 70_000] {
                    for tail in ["\t", "b"] {
                        let a = format!("a{}{tail}", " ".repeat(n));
                        let b = format!("a{}{tail}", " ".repeat(m));
                        assert_eq!(
                            k(&a).cmp(&k(&b)),
                            coll.compare(a.as_bytes(), b.as_bytes()),
                            "{coll:?} {n} {m} {tail:?}"
                        );
                        assert_eq!(
                            k(&a).cmp(&k("a")),
                            coll.compare(a.as_bytes(), b"a"),
                            "{coll:?} {n} {tail:?}"
                        );
                    }
                }
            }
            // Prefix-free: a second column never decides before the first is equal.
            let two = |a: &str, b: &str| {
                let mut out = k(a);
                out.extend(k(b));
                out
            };
            assert!(two("a\t", "z") < two("a", "a"));
            assert!(two("a", "z") < two("a b", "a"));
            assert!(two("a", "a") < two("a", "b"));
        }
        // Binary strings keep plain byte order (NO PAD): 'a' < 'a\t' < 'a '.
        let b = |s: &[u8]| key(s, Collation::Binary);
        assert!(b(b"a") < b(b"a\t") && b(b"a\t") < b(b"a "));
        assert_eq!(b(b"a\0"), [1, b'a', 0, 0xFF, 0, 1]);
    }

    #[test]
    fn times_and_datetimes_order_with_microseconds() {
        let t = |s: &str| enc(Value::str(s), DataType::Time { fsp: 6 }, Collation::Binary);
        let order = [
            "-838:59:59",
            "-01:00:00",
            "-00:00:00.5",
            "00:00:00",
            "00:30:00.000001",
        ];
        for w in order.windows(2) {
            assert!(t(w[0]) < t(w[1]), "{} < {}", w[0], w[1]);
        }
        assert!(t("99:00:00") < t("100:00:00"));
        assert!(!encode_value(
            &mut Vec::new(),
            &Value::str("12"),
            &DataType::Time { fsp: 0 },
            Collation::Binary
        ));
        let d = |s: &str| {
            let v = Value::DateTime(DateTime::parse(s).unwrap());
            enc(v, DataType::DateTime { fsp: 6 }, Collation::Binary)
        };
        assert!(d("2020-01-01 10:00:00.123455") < d("2020-01-01 10:00:00.123456"));
        assert!(d("2020-01-01 10:00:00.999999") < d("2020-01-01 10:00:01"));
        let y = |i: i64| enc(Value::Int(i), DataType::Year, Collation::Binary);
        assert!(y(0) < y(1901) && y(1901) < y(2155));
    }

    #[test]
    fn doubles_and_successor() {
        let t = DataType::Double { fixed: None };
        let c = Collation::Binary;
        let xs = [-2.5, -0.1, 0.0, 0.1, 3.0];
        let encs: Vec<_> = xs.iter().map(|x| enc(Value::Double(*x), t, c)).collect();
        assert!(encs.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(prefix_successor(&[1, 2, 0xFF]), Some(vec![1, 3]));
        assert_eq!(prefix_successor(&[0xFF]), None);
    }
}
