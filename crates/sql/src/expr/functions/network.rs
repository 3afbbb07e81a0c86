//! IPv4 address functions: INET_ATON and INET_NTOA.

use super::{arg, text, Func};
use crate::expr::{EvalCtx, Expr};
use strata_types::{Result, Value};

pub(super) fn call(f: Func, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let v = arg(args, 0, row, cx)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    Ok(match f {
        Func::InetAton => inet_aton(&text(&v)).map_or(Value::Null, Value::UInt),
        _ => match v.to_i64() {
            Some(n) if (0..=u32::MAX as i64).contains(&n) => {
                let n = n as u32;
                Value::str(&format!(
                    "{}.{}.{}.{}",
                    n >> 24,
                    (n >> 16) & 255,
                    (n >> 8) & 255,
                    n & 255
                ))
            }
            _ => Value::Null,
        },
    })
}

/// `a.b.c.d` to its 32-bit number, MySQL style: short forms like `127.1` mean `127.0.0.1`.
pub fn inet_aton(s: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(s).ok()?.trim();
    if s.is_empty() || s.ends_with('.') {
        return None;
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(4);
    for p in &parts {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u64 = p.parse().ok()?;
        if n > 255 {
            return None;
        }
        nums.push(n);
    }
    let last = nums.pop()?;
    let mut v = 0u64;
    for (i, n) in nums.iter().enumerate() {
        v |= n << (24 - 8 * i);
    }
    Some(v | last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inet_aton_forms() {
        assert_eq!(inet_aton(b"10.0.5.9"), Some(167773449));
        assert_eq!(inet_aton(b"127.1"), Some(2130706433));
        assert_eq!(inet_aton(b"1.2.3.256"), None);
        assert_eq!(inet_aton(b"x"), None);
    }
}
