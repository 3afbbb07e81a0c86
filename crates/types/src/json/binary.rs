//! The binary form of a JSON document as a JSON column stores it
//! (docs/format/json.md): one tag byte per value, fixed-width numbers, varint lengths,
//! containers prefixed with their element count and body length.

use super::{Json, MAX_DEPTH};
use crate::datetime::DateTime;
use crate::decimal::Decimal;

const NULL: u8 = 0x00;
const FALSE: u8 = 0x01;
const TRUE: u8 = 0x02;
const INT: u8 = 0x03;
const UINT: u8 = 0x04;
const DOUBLE: u8 = 0x05;
const DECIMAL: u8 = 0x06;
const STRING: u8 = 0x07;
const ARRAY: u8 = 0x08;
const OBJECT: u8 = 0x09;
const DATE: u8 = 0x0A;
const DATETIME: u8 = 0x0B;

/// The document's bytes.
pub fn encode(v: &Json) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, v);
    out
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put(out: &mut Vec<u8>, v: &Json) {
    match v {
        Json::Null => out.push(NULL),
        Json::Bool(false) => out.push(FALSE),
        Json::Bool(true) => out.push(TRUE),
        Json::Int(i) => {
            out.push(INT);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Json::UInt(u) => {
            // Values that fit i64 are integers, so one number has one encoding.
            if let Ok(i) = i64::try_from(*u) {
                out.push(INT);
                out.extend_from_slice(&i.to_le_bytes());
            } else {
                out.push(UINT);
                out.extend_from_slice(&u.to_le_bytes());
            }
        }
        Json::Double(d) => {
            out.push(DOUBLE);
            out.extend_from_slice(&d.to_bits().to_le_bytes());
        }
        Json::Decimal(d) => {
            out.push(DECIMAL);
            out.push(d.scale);
            // Narrow only: `expr::json::value_arg` refuses wider DECIMALs.
            debug_assert!(!d.is_wide());
            out.extend_from_slice(&d.mantissa().to_le_bytes());
        }
        Json::String(s) => {
            out.push(STRING);
            put_varint(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        Json::Date(d) => {
            out.push(DATE);
            out.extend_from_slice(&d.pack().to_le_bytes());
        }
        Json::DateTime(d) => {
            out.push(DATETIME);
            out.extend_from_slice(&d.pack().to_le_bytes());
        }
        Json::Array(items) => {
            let mut body = Vec::new();
            for x in items {
                put(&mut body, x);
            }
            out.push(ARRAY);
            put_varint(out, items.len() as u64);
            put_varint(out, body.len() as u64);
            out.extend_from_slice(&body);
        }
        Json::Object(m) => {
            let mut body = Vec::new();
            for (k, x) in m {
                put_varint(&mut body, k.len() as u64);
                body.extend_from_slice(k.as_bytes());
                put(&mut body, x);
            }
            out.push(OBJECT);
            put_varint(out, m.len() as u64);
            put_varint(out, body.len() as u64);
            out.extend_from_slice(&body);
        }
    }
}

/// Decodes a stored document; None when the bytes are not one well-formed value
/// (the caller reports corruption).
pub fn decode(b: &[u8]) -> Option<Json> {
    let mut r = Reader { b, at: 0 };
    let v = r.value(1)?;
    (r.at == b.len()).then_some(v)
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            v |= ((byte & 0x7F) as u64) << shift;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    fn len(&mut self) -> Option<usize> {
        let n = usize::try_from(self.varint()?).ok()?;
        (n <= self.b.len() - self.at).then_some(n)
    }
    fn str(&mut self) -> Option<String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }

    fn value(&mut self, depth: usize) -> Option<Json> {
        if depth > MAX_DEPTH {
            return None;
        }
        Some(match self.u8()? {
            NULL => Json::Null,
            FALSE => Json::Bool(false),
            TRUE => Json::Bool(true),
            INT => Json::Int(self.u64()? as i64),
            UINT => Json::UInt(self.u64()?),
            DOUBLE => Json::Double(f64::from_bits(self.u64()?)),
            DECIMAL => {
                let scale = self.u8()?;
                let m = i128::from_le_bytes(self.take(16)?.try_into().ok()?);
                Json::Decimal(Decimal::new(m, scale))
            }
            STRING => Json::String(self.str()?),
            DATE => Json::Date(DateTime::unpack(self.u64()?)),
            DATETIME => Json::DateTime(DateTime::unpack(self.u64()?)),
            ARRAY => {
                let count = self.varint()?;
                let body = self.len()?;
                let end = self.at + body;
                // Each element takes at least one byte: a count above the body's
                // length is corrupt, and bounds the allocation.
                let mut items = Vec::with_capacity(usize::try_from(count).ok()?.min(body));
                for _ in 0..count {
                    items.push(self.value(depth + 1)?);
                }
                if self.at != end {
                    return None;
                }
                Json::Array(items)
            }
            OBJECT => {
                let count = self.varint()?;
                let body = self.len()?;
                let end = self.at + body;
                let mut m = Vec::with_capacity(usize::try_from(count).ok()?.min(body));
                for _ in 0..count {
                    let k = self.str()?;
                    let v = self.value(depth + 1)?;
                    m.push((k, v));
                }
                if self.at != end {
                    return None;
                }
                Json::Object(m)
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::text;

    #[test]
    fn documents_round_trip() {
        for s in [
            r#"{"a": 1, "bb": [true, false, null, -5, 1.5, "x"], "ccc": {}}"#,
            "18446744073709551615",
            "[]",
            r#""""#,
        ] {
            let v = text::parse(s.as_bytes()).unwrap();
            let b = encode(&v);
            assert_eq!(decode(&b), Some(v.clone()), "{s}");
            assert_eq!(text::to_text(&decode(&b).unwrap()), s);
        }
        let d = Json::Decimal(Decimal::new(150, 2));
        assert_eq!(decode(&encode(&d)), Some(d));
    }

    #[test]
    fn corrupt_bytes_are_refused_not_guessed() {
        let b = encode(&text::parse(br#"{"a": [1, 2]}"#).unwrap());
        for cut in 0..b.len() {
            assert_eq!(decode(&b[..cut]), None, "cut at {cut}");
        }
        let mut extra = b.clone();
        extra.push(0);
        assert_eq!(decode(&extra), None);
        assert_eq!(decode(&[0x42]), None);
        // A huge element count does not allocate or loop past the body.
        assert_eq!(decode(&[ARRAY, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0]), None);
    }
}
