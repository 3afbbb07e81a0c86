//! COM_STMT_EXECUTE parameters: the NULL bitmap, the types (sent on the first execute
//! and whenever they change, remembered otherwise) and the values in the binary
//! protocol's encodings, decoded into [`Value`]s. Every read is bounds-checked: a short
//! or malformed packet is an error for the client, never a panic.

use crate::packet::Cursor;
use strata_types::inthash::IntMap;
use strata_types::{DateTime, Decimal, Value};

pub fn decode_params(
    c: &mut Cursor,
    n: u16,
    types: &mut Vec<(u8, bool)>,
    long_data: &mut IntMap<u16, Vec<u8>>,
) -> Result<Vec<Value>, String> {
    let n = n as usize;
    if n == 0 {
        return Ok(vec![]);
    }
    let short = || "packet too short".to_string();
    let bitmap = c.bytes(n.div_ceil(8)).ok_or_else(short)?.to_vec();
    let bound = c.u8().ok_or_else(short)?;
    if bound == 1 {
        types.clear();
        for _ in 0..n {
            let t = c.u8().ok_or_else(short)?;
            let flag = c.u8().ok_or_else(short)?;
            types.push((t, flag & 0x80 != 0));
        }
    }
    let is_null = |i: usize| bitmap[i / 8] & (1 << (i % 8)) != 0;
    if types.len() != n {
        // Clients may leave the types out when every parameter is NULL (Connector/J does on
        // a first execute with only setNull): the bitmap alone says what each one is.
        if (0..n).all(is_null) {
            return Ok(vec![Value::Null; n]);
        }
        return Err("parameter types were never sent".into());
    }
    let mut out = Vec::with_capacity(n);
    for (i, &(t, unsigned)) in types.iter().enumerate() {
        if is_null(i) {
            out.push(Value::Null);
            continue;
        }
        // (Most executions sent no long data: skip the probe then.)
        if let Some(data) = (!long_data.is_empty())
            .then(|| long_data.remove(&(i as u16)))
            .flatten()
        {
            out.push(Value::Bytes(data));
            continue;
        }
        let v = match t {
            0x06 => Value::Null,
            0x01 => {
                let b = c.u8().ok_or_else(short)?;
                if unsigned {
                    Value::UInt(b as u64)
                } else {
                    Value::Int(b as i8 as i64)
                }
            }
            0x02 | 0x0d => {
                let b = c.u16().ok_or_else(short)?;
                if unsigned {
                    Value::UInt(b as u64)
                } else {
                    Value::Int(b as i16 as i64)
                }
            }
            0x03 | 0x09 => {
                let b = c.u32().ok_or_else(short)?;
                if unsigned {
                    Value::UInt(b as u64)
                } else {
                    Value::Int(b as i32 as i64)
                }
            }
            0x08 => {
                let b = c.u64().ok_or_else(short)?;
                if unsigned {
                    Value::UInt(b)
                } else {
                    Value::Int(b as i64)
                }
            }
            0x04 => Value::Double(f32::from_le_bytes(
                c.bytes(4)
                    .ok_or_else(short)?
                    .try_into()
                    .map_err(|_| short())?,
            ) as f64),
            0x05 => Value::Double(f64::from_le_bytes(
                c.bytes(8)
                    .ok_or_else(short)?
                    .try_into()
                    .map_err(|_| short())?,
            )),
            0x00 | 0xf6 => {
                let s = c.lenenc_str().ok_or_else(short)?;
                let text = String::from_utf8_lossy(s);
                match Decimal::parse(&text) {
                    Some(d) => Value::Decimal(d),
                    // A DECIMAL parameter past 65 digits: as text it would be computed
                    // as a double, so refuse it.
                    None if text
                        .trim()
                        .bytes()
                        .all(|b| b.is_ascii_digit() || b"+-.".contains(&b)) =>
                    {
                        return Err(
                            "DECIMAL parameters of more than 65 digits are not supported".into(),
                        );
                    }
                    None => Value::Bytes(s.to_vec()),
                }
            }
            0x07 | 0x0a | 0x0c => {
                let len = c.u8().ok_or_else(short)? as usize;
                let b = c.bytes(len).ok_or_else(short)?;
                let mut d = DateTime::default();
                if len >= 4 {
                    d.year = u16::from_le_bytes([b[0], b[1]]);
                    d.month = b[2];
                    d.day = b[3];
                }
                if len >= 7 {
                    d.hour = b[4];
                    d.minute = b[5];
                    d.second = b[6];
                }
                if len >= 11 {
                    d.micro = u32::from_le_bytes([b[7], b[8], b[9], b[10]]);
                }
                Value::DateTime(d)
            }
            0x0b => {
                let len = c.u8().ok_or_else(short)? as usize;
                let b = c.bytes(len).ok_or_else(short)?;
                if len >= 8 {
                    let neg = b[0] == 1;
                    let days = u32::from_le_bytes([b[1], b[2], b[3], b[4]]) as u64;
                    let h = days * 24 + b[5] as u64;
                    let mut text = format!(
                        "{}{:02}:{:02}:{:02}",
                        if neg { "-" } else { "" },
                        h,
                        b[6],
                        b[7]
                    );
                    // The 12-byte form carries microseconds.
                    if len >= 12 {
                        let micro = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
                        text.push_str(&format!(".{micro:06}"));
                    }
                    Value::str(&text)
                } else {
                    Value::str("00:00:00")
                }
            }
            0x0f | 0xfd | 0xfe | 0xfc | 0xfb | 0xfa | 0xf9 | 0xf5 | 0x10 => {
                Value::Bytes(c.lenenc_str().ok_or_else(short)?.to_vec())
            }
            other => return Err(format!("unsupported parameter type {other}")),
        };
        out.push(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_parameters_keep_days_sign_and_microseconds() {
        // 1 param: TIME, 12-byte form: negative, 1 day 02:03:04.500000
        let mut p = vec![0, 1, 0x0b, 0, 12, 1];
        p.extend_from_slice(&1u32.to_le_bytes());
        p.extend_from_slice(&[2, 3, 4]);
        p.extend_from_slice(&500_000u32.to_le_bytes());
        let v =
            decode_params(&mut Cursor::new(&p), 1, &mut vec![], &mut IntMap::default()).unwrap();
        assert_eq!(v, vec![Value::str("-26:03:04.500000")]);
        // 8-byte form: no fraction
        let mut p = vec![0, 1, 0x0b, 0, 8, 0];
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&[10, 0, 0]);
        let v =
            decode_params(&mut Cursor::new(&p), 1, &mut vec![], &mut IntMap::default()).unwrap();
        assert_eq!(v, vec![Value::str("10:00:00")]);
    }

    #[test]
    fn decodes_types_and_nulls() {
        // 3 params: LONGLONG 7, NULL, VAR_STRING "hi"
        let mut p = vec![0b010, 1, 8, 0, 6, 0, 0xfd, 0];
        p.extend_from_slice(&7u64.to_le_bytes());
        p.extend_from_slice(&[2, b'h', b'i']);
        let mut types = vec![];
        let v = decode_params(&mut Cursor::new(&p), 3, &mut types, &mut IntMap::default()).unwrap();
        assert_eq!(v, vec![Value::Int(7), Value::Null, Value::str("hi")]);
        // Truncated: an error, not a panic.
        assert!(decode_params(
            &mut Cursor::new(&p[..9]),
            3,
            &mut vec![],
            &mut IntMap::default()
        )
        .is_err());
    }

    #[test]
    fn all_null_parameters_need_no_types() {
        // 2 params, both NULL in the bitmap, new-params-bound flag 0 and no types: as
        // Connector/J sends a first execute whose parameters were all set with setNull.
        let p = vec![0b11, 0];
        let v =
            decode_params(&mut Cursor::new(&p), 2, &mut vec![], &mut IntMap::default()).unwrap();
        assert_eq!(v, vec![Value::Null, Value::Null]);
        // One non-NULL parameter without a type is still an error.
        let p = vec![0b01, 0];
        assert!(
            decode_params(&mut Cursor::new(&p), 2, &mut vec![], &mut IntMap::default()).is_err()
        );
    }
}
