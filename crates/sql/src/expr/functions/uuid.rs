//! UUIDs: UUID() (version 1, time-based, as MySQL makes them), UUID_SHORT(),
//! UUID_TO_BIN / BIN_TO_UUID (with MySQL's optional swap of the time fields so that
//! binary UUIDs sort by time) and IS_UUID.

use super::{arg, text, HashFn};
use crate::expr::{EvalCtx, Expr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use strata_types::{Error, Result, Value};

/// 100 ns intervals from 1582-10-15 (the UUID epoch) to 1970-01-01.
const UUID_EPOCH_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// The node and clock sequence of this server's UUIDs: random, with the multicast bit
/// set as RFC 4122 asks of a node that is not a MAC address.
fn node_and_clock() -> (u64, u16) {
    static NODE: OnceLock<(u64, u16)> = OnceLock::new();
    *NODE.get_or_init(|| {
        let mut st = super::rand::RandState::from_seeds(
            std::process::id() as u64,
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
        );
        let mut draw = |bits: u32| (st.next_f64() * (1u64 << bits) as f64) as u64;
        let node = (draw(24) << 24 | draw(24)) | 0x0100_0000_0000;
        (node, draw(14) as u16)
    })
}

/// The next UUID timestamp: now, or one tick after the last one handed out, so that two
/// UUIDs of this server never share one.
fn next_timestamp() -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64 / 100)
        + UUID_EPOCH_OFFSET;
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1);
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

fn uuid_v1() -> String {
    let t = next_timestamp();
    let (node, clock) = node_and_clock();
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        t & 0xFFFF_FFFF,
        (t >> 32) & 0xFFFF,
        ((t >> 48) & 0x0FFF) | 0x1000,
        clock | 0x8000,
        node
    )
}

/// UUID_SHORT(): (server_id & 255) << 56, plus the server's start time in seconds
/// << 24, plus one per call. Strata's server_id is 1.
fn uuid_short() -> u64 {
    static NEXT: OnceLock<AtomicU64> = OnceLock::new();
    let next = NEXT.get_or_init(|| {
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        AtomicU64::new((1u64 << 56).wrapping_add(start << 24))
    });
    next.fetch_add(1, Ordering::Relaxed)
}

/// The 16 bytes of a UUID's text: 32 hex digits, with dashes after the 8th, 12th, 16th
/// and 20th, or within braces; None for anything else.
fn parse_uuid(s: &[u8]) -> Option<[u8; 16]> {
    let body = match s.len() {
        32 => s.to_vec(),
        36 => {
            if [8, 13, 18, 23].iter().any(|&i| s[i] != b'-') {
                return None;
            }
            s.iter().copied().filter(|&b| b != b'-').collect()
        }
        38 if s[0] == b'{' && s[37] == b'}' => return parse_uuid(&s[1..37]),
        _ => return None,
    };
    if body.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in body.chunks(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out[i] = (hi << 4 | lo) as u8;
    }
    Some(out)
}

/// Moves time-high and time-mid in front of time-low (swap) or back.
fn swap_fields(b: [u8; 16], to_binary: bool) -> [u8; 16] {
    let mut out = b;
    if to_binary {
        out[0..2].copy_from_slice(&b[6..8]);
        out[2..4].copy_from_slice(&b[4..6]);
        out[4..8].copy_from_slice(&b[0..4]);
    } else {
        out[0..4].copy_from_slice(&b[4..8]);
        out[4..6].copy_from_slice(&b[2..4]);
        out[6..8].copy_from_slice(&b[0..2]);
    }
    out
}

/// Error 1411 naming the value and the function, as MySQL reports a bad UUID.
fn bad_uuid(value: &[u8], func: &str) -> Error {
    let shown = if std::str::from_utf8(value).is_ok() {
        String::from_utf8_lossy(value).into_owned()
    } else {
        value.iter().map(|b| format!("{b:02X}")).collect()
    };
    Error::WrongValueForFunction {
        kind: "string".into(),
        value: shown,
        func: func.into(),
    }
}

pub(super) fn call(f: HashFn, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    match f {
        HashFn::Uuid => return Ok(Value::str(&uuid_v1())),
        HashFn::UuidShort => return Ok(Value::UInt(uuid_short())),
        _ => {}
    }
    let v = arg(args, 0, row, cx)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let s = text(&v);
    let swap = match args.get(1) {
        Some(e) => e.eval(row, cx)?.truth() == Some(true),
        None => false,
    };
    Ok(match f {
        HashFn::IsUuid => Value::Int(parse_uuid(&s).is_some() as i64),
        HashFn::UuidToBin => {
            let b = parse_uuid(&s).ok_or_else(|| bad_uuid(&s, "uuid_to_bin"))?;
            let b = if swap { swap_fields(b, true) } else { b };
            Value::Bytes(b.to_vec())
        }
        HashFn::BinToUuid => {
            let b: [u8; 16] = s
                .as_slice()
                .try_into()
                .map_err(|_| bad_uuid(&s, "bin_to_uuid"))?;
            let b = if swap { swap_fields(b, false) } else { b };
            Value::str(&strata_types::gtid::uuid_text(&b))
        }
        other => unreachable!("{other:?} handled above"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_1_and_increase() {
        let a = uuid_v1();
        let b = uuid_v1();
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "1");
        assert_ne!(a, b);
        assert!(parse_uuid(a.as_bytes()).is_some());
        assert!(uuid_short() < uuid_short());
    }

    #[test]
    fn swap_moves_time_high_first_and_back() {
        let text = b"6ccd780c-baba-1026-9564-5b8c656024db";
        let b = parse_uuid(text).unwrap();
        let swapped = swap_fields(b, true);
        let h: String = swapped.iter().map(|x| format!("{x:02X}")).collect();
        assert_eq!(h, "1026BABA6CCD780C95645B8C656024DB");
        assert_eq!(swap_fields(swapped, false), b);
        assert!(parse_uuid(b"{6ccd780c-baba-1026-9564-5b8c656024db}").is_some());
        assert!(parse_uuid(b"6ccd780cbaba102695645b8c656024db").is_some());
        assert!(parse_uuid(b"6ccd780c-baba-1026-9564-5b8c656024d").is_none());
        assert!(parse_uuid(b"6ccd780c-baba-1026-9564x5b8c656024db").is_none());
    }
}
