//! A JSON document in MySQL 8's binary form, as a JSON column's value appears in a row
//! event (docs/format/binlog.md, "Binary JSON"). Strata stores documents in its own
//! binary form (docs/format/json.md); this module turns the decoded tree into MySQL's.

use crate::rows::put_decimal_bin;
use strata_types::json::Json;
use strata_types::DateTime;

const SMALL_OBJECT: u8 = 0x00;
const LARGE_OBJECT: u8 = 0x01;
const SMALL_ARRAY: u8 = 0x02;
const LARGE_ARRAY: u8 = 0x03;
const LITERAL: u8 = 0x04;
const INT16: u8 = 0x05;
const UINT16: u8 = 0x06;
const INT32: u8 = 0x07;
const UINT32: u8 = 0x08;
const INT64: u8 = 0x09;
const UINT64: u8 = 0x0A;
const DOUBLE: u8 = 0x0B;
const STRING: u8 = 0x0C;
const OPAQUE: u8 = 0x0F;

/// The document's bytes: a type byte, then the value.
pub fn encode(v: &Json) -> Vec<u8> {
    let (t, body) = value(v);
    let mut out = Vec::with_capacity(body.len() + 1);
    out.push(t);
    out.extend_from_slice(&body);
    out
}

fn varlen(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let b = (n & 0x7F) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// MySQL's packed temporal longlong (TIME_to_longlong_datetime_packed).
fn packed_datetime(d: &DateTime) -> i64 {
    let ymd = ((d.year as i64 * 13 + d.month as i64) << 5) | d.day as i64;
    let hms = ((d.hour as i64) << 12) | ((d.minute as i64) << 6) | d.second as i64;
    (((ymd << 17) | hms) << 24) + d.micro as i64
}

/// A value that is not stored inline: its type and bytes.
fn value(v: &Json) -> (u8, Vec<u8>) {
    match v {
        Json::Null => (LITERAL, vec![0]),
        Json::Bool(true) => (LITERAL, vec![1]),
        Json::Bool(false) => (LITERAL, vec![2]),
        Json::Int(i) => {
            if let Ok(x) = i16::try_from(*i) {
                (INT16, x.to_le_bytes().to_vec())
            } else if let Ok(x) = i32::try_from(*i) {
                (INT32, x.to_le_bytes().to_vec())
            } else {
                (INT64, i.to_le_bytes().to_vec())
            }
        }
        Json::UInt(u) => {
            if let Ok(x) = u16::try_from(*u) {
                (UINT16, x.to_le_bytes().to_vec())
            } else if let Ok(x) = u32::try_from(*u) {
                (UINT32, x.to_le_bytes().to_vec())
            } else {
                (UINT64, u.to_le_bytes().to_vec())
            }
        }
        Json::Double(d) => (DOUBLE, d.to_le_bytes().to_vec()),
        Json::String(s) => {
            let mut b = Vec::with_capacity(s.len() + 2);
            varlen(&mut b, s.len());
            b.extend_from_slice(s.as_bytes());
            (STRING, b)
        }
        Json::Decimal(d) => {
            // Precision: the digits of the mantissa, at least the scale + 1.
            let digits = d.mantissa().unsigned_abs().to_string().len() as u8;
            let precision = digits.max(d.scale + 1);
            let mut data = vec![precision, d.scale];
            put_decimal_bin(&mut data, d.mantissa(), precision, d.scale);
            let mut b = vec![246];
            varlen(&mut b, data.len());
            b.extend_from_slice(&data);
            (OPAQUE, b)
        }
        Json::Date(d) | Json::DateTime(d) => {
            let field_type = if matches!(v, Json::Date(_)) { 10 } else { 12 };
            let mut b = vec![field_type, 8];
            b.extend_from_slice(&packed_datetime(d).to_le_bytes());
            (OPAQUE, b)
        }
        Json::Array(items) => {
            let refs: Vec<(Option<&str>, &Json)> = items.iter().map(|i| (None, i)).collect();
            container(&refs, false)
        }
        Json::Object(members) => {
            let refs: Vec<(Option<&str>, &Json)> =
                members.iter().map(|(k, v)| (Some(k.as_str()), v)).collect();
            container(&refs, true)
        }
    }
}

/// An object or array: the small form when every offset fits 16 bits, else the large.
fn container(entries: &[(Option<&str>, &Json)], object: bool) -> (u8, Vec<u8>) {
    let encoded: Vec<(u8, Vec<u8>)> = entries.iter().map(|(_, v)| value(v)).collect();
    if let Some(b) = layout(entries, &encoded, object, false) {
        return (if object { SMALL_OBJECT } else { SMALL_ARRAY }, b);
    }
    let b = layout(entries, &encoded, object, true).unwrap_or_default();
    (if object { LARGE_OBJECT } else { LARGE_ARRAY }, b)
}

fn layout(
    entries: &[(Option<&str>, &Json)],
    encoded: &[(u8, Vec<u8>)],
    object: bool,
    large: bool,
) -> Option<Vec<u8>> {
    let w = if large { 4 } else { 2 };
    let limit: u64 = if large {
        u32::MAX as u64
    } else {
        u16::MAX as u64
    };
    let n = entries.len();
    let key_entry = if object { w + 2 } else { 0 };
    let value_entry = 1 + w;
    let header = 2 * w + n * key_entry + n * value_entry;
    let keys_len: usize = entries.iter().map(|(k, _)| k.map_or(0, str::len)).sum();
    // Which values are inline (in their entry) and the offsets of the others.
    let inline = |t: u8, b: &[u8]| -> Option<u32> {
        match t {
            LITERAL => Some(b[0] as u32),
            INT16 | UINT16 => Some(u16::from_le_bytes([b[0], b[1]]) as u32),
            INT32 | UINT32 if large => Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => None,
        }
    };
    let mut total = header + keys_len;
    let mut offsets = Vec::with_capacity(n);
    for (t, b) in encoded {
        match inline(*t, b) {
            Some(x) => offsets.push((true, x as u64)),
            None => {
                offsets.push((false, total as u64));
                total += b.len();
            }
        }
    }
    if total as u64 > limit {
        return None;
    }
    let put = |out: &mut Vec<u8>, v: u64| {
        if large {
            out.extend_from_slice(&(v as u32).to_le_bytes());
        } else {
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
    };
    let mut out = Vec::with_capacity(total);
    put(&mut out, n as u64);
    put(&mut out, total as u64);
    if object {
        let mut key_at = header;
        for (k, _) in entries {
            let k = k.unwrap_or("");
            if k.len() > u16::MAX as usize {
                return None;
            }
            put(&mut out, key_at as u64);
            out.extend_from_slice(&(k.len() as u16).to_le_bytes());
            key_at += k.len();
        }
    }
    for ((t, _), (_, at)) in encoded.iter().zip(&offsets) {
        out.push(*t);
        put(&mut out, *at);
    }
    for (k, _) in entries {
        out.extend_from_slice(k.unwrap_or("").as_bytes());
    }
    for ((t, b), (is_inline, _)) in encoded.iter().zip(&offsets) {
        let _ = t;
        if !is_inline {
            out.extend_from_slice(b);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_and_a_small_object() {
        assert_eq!(encode(&Json::Int(5)), vec![INT16, 5, 0]);
        assert_eq!(encode(&Json::Null), vec![LITERAL, 0]);
        assert_eq!(
            encode(&Json::String("ab".into())),
            vec![STRING, 2, b'a', b'b']
        );
        // {"a": 1}: count 1, size 12, key entry (11, 1), value entry (int16 inline 1), "a".
        let o = Json::Object(vec![("a".into(), Json::Int(1))]);
        assert_eq!(
            encode(&o),
            vec![SMALL_OBJECT, 1, 0, 12, 0, 11, 0, 1, 0, INT16, 1, 0, b'a']
        );
        // [ "x" ]: count 1, size 9, value entry (string at 7), the string.
        let a = Json::Array(vec![Json::String("x".into())]);
        assert_eq!(
            encode(&a),
            vec![SMALL_ARRAY, 1, 0, 9, 0, STRING, 7, 0, 1, b'x']
        );
    }

    #[test]
    fn big_arrays_switch_to_the_large_form() {
        let a = Json::Array(vec![Json::String("y".repeat(70_000))]);
        let b = encode(&a);
        assert_eq!(b[0], LARGE_ARRAY);
        assert_eq!(
            u32::from_le_bytes(b[5..9].try_into().unwrap()) as usize,
            b.len() - 1
        );
    }
}
