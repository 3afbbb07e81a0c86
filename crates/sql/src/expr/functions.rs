//! Scalar functions by name: string, numeric, date/time, control-flow, network
//! (INET_ATON/INET_NTOA) and session information functions, plus CAST. The binder looks a
//! name up with [`lookup`] and checks the argument count; [`call`] evaluates.

use crate::expr::{EvalCtx, Expr};
use strata_types::value::format_double;
use strata_types::{DateTime, Decimal, Error, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Database,
    Version,
    LastInsertId,
    ConnectionId,
    User,
    Now,
    CurDate,
    UnixTimestamp,
    FromUnixtime,
    InetAton,
    InetNtoa,
    Concat,
    ConcatWs,
    Length,
    CharLength,
    Substring,
    Lower,
    Upper,
    Trim,
    Left,
    Right,
    Repeat,
    Replace,
    Hex,
    If,
    IfNull,
    NullIf,
    Coalesce,
    Abs,
    Round,
    Floor,
    Ceil,
    Mod,
    Greatest,
    Least,
    FoundRows,
    RowCount,
    CastSigned,
    CastUnsigned,
    CastChar,
    CastBinary,
    CastDouble,
    CastDecimal(u8, u8),
    CastDateTime,
    CastDate,
    /// A date/time function (`expr/datetime/functions.rs`); `date_arg` when its first argument is a
    /// DATE-typed expression.
    Date {
        f: crate::expr::datetime::functions::DateFn,
        date_arg: bool,
    },
    /// CHAR(n, …): the bytes of each integer, big-endian. With `USING utf8mb4` (`text`)
    /// the result is text, NULL when the bytes are not UTF-8.
    Char {
        text: bool,
    },
    Truncate,
    /// Not callable by name: the binder wraps a decimal-typed IF, IFNULL, COALESCE,
    /// GREATEST, LEAST or CASE in it, so that its value is a DECIMAL shown at the
    /// expression's declared scale whichever branch it came from, as MySQL converts
    /// every branch to the result type (`IF(1, 2, 1.25)` is `2.00`).
    ShowScale(u8),
    /// Not callable by name: the binder wraps a FLOAT column read as text (CAST AS
    /// CHAR, CONCAT) in it, so it reads as MySQL shows a FLOAT (`0.1`, not the
    /// f64 widening `0.10000000149011612`).
    ShowFloat,
    /// Not callable by name: `@name := expr`, bound with the lower-case name as its
    /// first argument (a literal) and expr as its second; its value is expr's.
    AssignUserVariable,
}

/// (function, minimum args, maximum args) for a SQL function name.
pub fn lookup(name: &str) -> Option<(Func, usize, usize)> {
    use Func::*;
    Some(match name.to_ascii_lowercase().as_str() {
        "database" | "schema" => (Database, 0, 0),
        "version" => (Version, 0, 0),
        "last_insert_id" => (LastInsertId, 0, 1),
        "connection_id" => (ConnectionId, 0, 0),
        "user" | "current_user" | "session_user" | "system_user" => (User, 0, 0),
        "now" | "current_timestamp" | "sysdate" | "localtime" | "localtimestamp" => (Now, 0, 1),
        "curdate" | "current_date" => (CurDate, 0, 0),
        "unix_timestamp" => (UnixTimestamp, 0, 1),
        "from_unixtime" => (FromUnixtime, 1, 1),
        "inet_aton" => (InetAton, 1, 1),
        "inet_ntoa" => (InetNtoa, 1, 1),
        "concat" => (Concat, 1, usize::MAX),
        "concat_ws" => (ConcatWs, 2, usize::MAX),
        "length" | "octet_length" => (Length, 1, 1),
        "char_length" | "character_length" => (CharLength, 1, 1),
        "substring" | "substr" | "mid" => (Substring, 2, 3),
        "lower" | "lcase" => (Lower, 1, 1),
        "upper" | "ucase" => (Upper, 1, 1),
        "trim" => (Trim, 1, 1),
        "left" => (Left, 2, 2),
        "right" => (Right, 2, 2),
        "repeat" => (Repeat, 2, 2),
        "replace" => (Replace, 3, 3),
        "hex" => (Hex, 1, 1),
        "if" => (If, 3, 3),
        "ifnull" => (IfNull, 2, 2),
        "nullif" => (NullIf, 2, 2),
        "coalesce" => (Coalesce, 1, usize::MAX),
        "abs" => (Abs, 1, 1),
        "round" => (Round, 1, 2),
        "truncate" => (Truncate, 2, 2),
        "floor" => (Floor, 1, 1),
        "ceil" | "ceiling" => (Ceil, 1, 1),
        "mod" => (Mod, 2, 2),
        "greatest" => (Greatest, 2, usize::MAX),
        "least" => (Least, 2, usize::MAX),
        "found_rows" => (FoundRows, 0, 0),
        "row_count" => (RowCount, 0, 0),
        _ => return None,
    })
}

fn text(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    v.write_text(&mut out);
    out
}

fn arg(args: &[Expr], i: usize, row: &[Value], cx: &EvalCtx) -> Result<Value> {
    match args.get(i) {
        Some(e) => e.eval(row, cx),
        None => Ok(Value::Null),
    }
}

pub fn call(f: Func, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    use Func::*;
    let a0 = || arg(args, 0, row, cx);
    Ok(match f {
        Database => cx
            .env
            .database()
            .map(|d| Value::str(&d))
            .unwrap_or(Value::Null),
        Version => Value::str(crate::SERVER_VERSION),
        LastInsertId => {
            if args.is_empty() {
                Value::UInt(cx.env.last_insert_id())
            } else {
                // LAST_INSERT_ID(expr) returns expr and makes it the session's value
                // (NULL sets 0), which ODKU's `id = LAST_INSERT_ID(id)` relies on.
                let v = a0()?;
                let n = v.to_i64().map(|i| i as u64);
                cx.env.set_last_insert_id(n.unwrap_or(0));
                n.map_or(Value::Null, Value::UInt)
            }
        }
        ConnectionId => Value::UInt(cx.env.connection_id()),
        User => Value::str(&format!("{}@localhost", cx.env.user())),
        Now => Value::DateTime(cx.env.now()),
        CurDate => {
            let n = cx.env.now();
            Value::DateTime(DateTime {
                hour: 0,
                minute: 0,
                second: 0,
                micro: 0,
                ..n
            })
        }
        UnixTimestamp => {
            if args.is_empty() {
                Value::Int(cx.env.now().to_unix())
            } else {
                match to_datetime(&a0()?) {
                    Some(d) => Value::Int(d.to_unix().max(0)),
                    None => Value::Null,
                }
            }
        }
        FromUnixtime => match a0()?.to_i64() {
            // MySQL's range ends at 3001-01-19 03:14:07 UTC.
            Some(s) if (0..=32_536_771_199).contains(&s) => {
                Value::DateTime(DateTime::from_unix(s, 0))
            }
            _ => Value::Null,
        },
        InetAton => {
            let v = a0()?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            inet_aton(&text(&v)).map(Value::UInt).unwrap_or(Value::Null)
        }
        InetNtoa => match a0()? {
            Value::Null => Value::Null,
            v => match v.to_i64() {
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
        },
        Concat => {
            let mut out = Vec::new();
            for e in args {
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                v.write_text(&mut out);
                if !cx.fits_packet(out.len() as u64, "concat") {
                    return Ok(Value::Null);
                }
            }
            Value::Bytes(out)
        }
        ConcatWs => {
            let sep = a0()?;
            if sep.is_null() {
                return Ok(Value::Null);
            }
            let sep = text(&sep);
            let mut out = Vec::new();
            let mut first = true;
            for e in &args[1..] {
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    continue;
                }
                if !first {
                    out.extend_from_slice(&sep);
                }
                first = false;
                v.write_text(&mut out);
                if !cx.fits_packet(out.len() as u64, "concat_ws") {
                    return Ok(Value::Null);
                }
            }
            Value::Bytes(out)
        }
        Length => match a0()? {
            Value::Null => Value::Null,
            v => Value::Int(text(&v).len() as i64),
        },
        CharLength => match a0()? {
            Value::Null => Value::Null,
            v => Value::Int(String::from_utf8_lossy(&text(&v)).chars().count() as i64),
        },
        Substring => {
            let v = a0()?;
            let pos = arg(args, 1, row, cx)?;
            if v.is_null() || pos.is_null() {
                return Ok(Value::Null);
            }
            let s: Vec<char> = String::from_utf8_lossy(&text(&v)).chars().collect();
            let pos = pos.to_i64().unwrap_or(0);
            let len = if args.len() > 2 {
                match arg(args, 2, row, cx)?.to_i64() {
                    Some(l) => l,
                    None => return Ok(Value::Null),
                }
            } else {
                i64::MAX
            };
            let start = if pos > 0 {
                (pos - 1) as usize
            } else if pos < 0 && (-pos) as usize <= s.len() {
                s.len() - (-pos) as usize
            } else {
                return Ok(Value::str(""));
            };
            if start >= s.len() || len <= 0 {
                return Ok(Value::str(""));
            }
            let end = start
                .saturating_add(len.min(s.len() as i64) as usize)
                .min(s.len());
            Value::str(&s[start..end].iter().collect::<String>())
        }
        Lower | Upper => match a0()? {
            Value::Null => Value::Null,
            v => {
                let s = String::from_utf8_lossy(&text(&v)).into_owned();
                Value::str(&if f == Lower {
                    s.to_lowercase()
                } else {
                    s.to_uppercase()
                })
            }
        },
        Trim => match a0()? {
            Value::Null => Value::Null,
            v => Value::str(String::from_utf8_lossy(&text(&v)).trim_matches(' ')),
        },
        Left | Right => {
            let v = a0()?;
            let n = arg(args, 1, row, cx)?;
            if v.is_null() || n.is_null() {
                return Ok(Value::Null);
            }
            let s: Vec<char> = String::from_utf8_lossy(&text(&v)).chars().collect();
            let n = n.to_i64().unwrap_or(0).clamp(0, s.len() as i64) as usize;
            let part = if f == Left {
                &s[..n]
            } else {
                &s[s.len() - n..]
            };
            Value::str(&part.iter().collect::<String>())
        }
        Repeat => {
            let v = a0()?;
            let n = arg(args, 1, row, cx)?;
            if v.is_null() || n.is_null() {
                return Ok(Value::Null);
            }
            let n = n.to_i64().unwrap_or(0).max(0) as u64;
            let t = text(&v);
            if !cx.fits_packet((t.len() as u64).saturating_mul(n), "repeat") {
                return Ok(Value::Null);
            }
            Value::Bytes(t.repeat(n as usize))
        }
        Replace => {
            let (v, from, to) = (a0()?, arg(args, 1, row, cx)?, arg(args, 2, row, cx)?);
            if v.is_null() || from.is_null() || to.is_null() {
                return Ok(Value::Null);
            }
            let (s, fr, t) = (
                String::from_utf8_lossy(&text(&v)).into_owned(),
                String::from_utf8_lossy(&text(&from)).into_owned(),
                String::from_utf8_lossy(&text(&to)).into_owned(),
            );
            if fr.is_empty() {
                Value::str(&s)
            } else {
                // Size the result before building it: 1,000 matches of a 16 MB
                // replacement would otherwise allocate 16 GB.
                let matches = s.matches(fr.as_str()).count() as u64;
                let len = (s.len() as u64 - matches * fr.len() as u64)
                    .saturating_add(matches.saturating_mul(t.len() as u64));
                if !cx.fits_packet(len, "replace") {
                    return Ok(Value::Null);
                }
                Value::str(&s.replace(&fr, &t))
            }
        }
        Hex => match a0()? {
            Value::Null => Value::Null,
            v @ (Value::Int(_) | Value::UInt(_)) => {
                Value::str(&format!("{:X}", v.to_i64().unwrap_or(0)))
            }
            v => Value::str(
                &text(&v)
                    .iter()
                    .map(|b| format!("{b:02X}"))
                    .collect::<String>(),
            ),
        },
        If => {
            if a0()?.truth() == Some(true) {
                arg(args, 1, row, cx)?
            } else {
                arg(args, 2, row, cx)?
            }
        }
        IfNull => match a0()? {
            Value::Null => arg(args, 1, row, cx)?,
            v => v,
        },
        NullIf => {
            let (a, b) = (a0()?, arg(args, 1, row, cx)?);
            if crate::expr::compare(&a, &b, strata_types::Collation::GeneralCi)
                == Some(std::cmp::Ordering::Equal)
            {
                Value::Null
            } else {
                a
            }
        }
        Coalesce => {
            for e in args {
                let v = e.eval(row, cx)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            Value::Null
        }
        Abs => match a0()? {
            Value::Int(i) => Value::Int(i.checked_abs().ok_or(Error::OutOfRange {
                column: "abs".into(),
                row: 1,
            })?),
            Value::Decimal(d) => Value::Decimal(d.abs()),
            Value::Null => Value::Null,
            Value::UInt(u) => Value::UInt(u),
            v => Value::Double(v.to_f64().unwrap_or(0.0).abs()),
        },
        Round => {
            let v = a0()?;
            let d = if args.len() > 1 {
                arg(args, 1, row, cx)?.to_i64().unwrap_or(0)
            } else {
                0
            };
            match v {
                Value::Null => Value::Null,
                Value::Int(_) | Value::UInt(_) if d >= 0 => v,
                Value::Decimal(x) => Value::Decimal(x.round_to(d, false)),
                v => {
                    let x = v.to_f64().unwrap_or(0.0);
                    let m = 10f64.powi(d as i32);
                    let r = (x * m).round() / m;
                    if d <= 0 && matches!(v, Value::Int(_) | Value::UInt(_)) {
                        Value::Int(r as i64)
                    } else {
                        Value::Double(r)
                    }
                }
            }
        }
        Floor | Ceil => match a0()? {
            Value::Null => Value::Null,
            v @ (Value::Int(_) | Value::UInt(_)) => v,
            Value::Decimal(x) => {
                let q = x.rescale(0);
                let adj = match (f, q.cmp(&x)) {
                    (Floor, std::cmp::Ordering::Greater) => -1,
                    (Ceil, std::cmp::Ordering::Less) => 1,
                    _ => 0,
                };
                Value::Int(q.mantissa as i64 + adj)
            }
            v => {
                let x = v.to_f64().unwrap_or(0.0);
                Value::Double(if f == Floor { x.floor() } else { x.ceil() })
            }
        },
        Mod => crate::expr::arith(crate::expr::ArithOp::Mod, &a0()?, &arg(args, 1, row, cx)?)?,
        Greatest | Least => {
            let mut best: Option<Value> = None;
            for e in args {
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        // Every digit counts here, as in MySQL (not the sort order).
                        let ord = crate::expr::compare(&v, &b, strata_types::Collation::GeneralCi)
                            .unwrap_or(std::cmp::Ordering::Equal);
                        let take = if f == Greatest {
                            ord.is_gt()
                        } else {
                            ord.is_lt()
                        };
                        if take {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            best.unwrap_or(Value::Null)
        }
        Date { f, date_arg } => {
            return crate::expr::datetime::functions::eval(f, date_arg, args, row, cx)
        }
        Char { text } => {
            let mut out = Vec::with_capacity(args.len());
            for e in args {
                let v = e.eval(row, cx)?;
                let Some(n) = v.to_i64() else {
                    continue;
                };
                // MySQL takes the low 32 bits and writes them without leading zero bytes.
                let n = n as u32;
                let bytes = n.to_be_bytes();
                let skip = (n.leading_zeros() / 8).min(3) as usize;
                out.extend_from_slice(&bytes[skip..]);
            }
            if text && std::str::from_utf8(&out).is_err() {
                let hex: String = out.iter().map(|b| format!("{b:02X}")).collect();
                cx.env.warn(
                    crate::expr::WarnLevel::Warning,
                    1300,
                    format!("Invalid utf8mb4 character string: '{hex}'"),
                );
                return Ok(Value::Null);
            }
            Value::Bytes(out)
        }
        Truncate => {
            let (v, d) = (a0()?, arg(args, 1, row, cx)?);
            let Some(d) = d.to_i64() else {
                return Ok(Value::Null);
            };
            match v {
                Value::Null => Value::Null,
                Value::Int(i) if d < 0 => {
                    let p = 10i128.checked_pow((-d).min(40) as u32).unwrap_or(i128::MAX);
                    Value::Int((i as i128 / p * p) as i64)
                }
                Value::UInt(u) if d < 0 => {
                    let p = 10i128.checked_pow((-d).min(40) as u32).unwrap_or(i128::MAX);
                    Value::UInt((u as i128 / p * p) as u64)
                }
                v @ (Value::Int(_) | Value::UInt(_)) => v,
                Value::Decimal(x) => Value::Decimal(x.round_to(d, true)),
                v => {
                    let x = v.to_f64().unwrap_or(0.0);
                    let r = if d >= 0 {
                        let m = 10f64.powi(d.min(400) as i32);
                        let t = (x * m).trunc() / m;
                        if t.is_finite() {
                            t
                        } else {
                            x
                        }
                    } else {
                        let m = 10f64.powi((-d).min(400) as i32);
                        (x / m).trunc() * m
                    };
                    Value::Double(r)
                }
            }
        }
        FoundRows => Value::UInt(cx.env.found_rows()),
        RowCount => Value::Int(cx.env.row_count()),
        CastSigned => match a0()? {
            Value::Null => Value::Null,
            v => Value::Int(v.to_i64().unwrap_or(0)),
        },
        CastUnsigned => match a0()? {
            Value::Null => Value::Null,
            Value::UInt(u) => Value::UInt(u),
            v => Value::UInt(v.to_i64().unwrap_or(0) as u64),
        },
        CastChar | CastBinary => match a0()? {
            Value::Null => Value::Null,
            Value::Double(d) => Value::str(&format_double(d)),
            v => Value::Bytes(text(&v)),
        },
        CastDouble => match a0()? {
            Value::Null => Value::Null,
            v => Value::Double(v.to_f64().unwrap_or(0.0)),
        },
        CastDecimal(precision, scale) => {
            let d = match a0()? {
                Value::Null => return Ok(Value::Null),
                Value::Decimal(d) => d,
                Value::Int(i) => Decimal::from_i64(i),
                Value::UInt(u) => Decimal::from_u64(u),
                v => match Decimal::parse(&String::from_utf8_lossy(&text(&v)))
                    .or_else(|| Decimal::from_f64(v.to_f64().unwrap_or(0.0), scale))
                {
                    Some(d) => d,
                    None => return Ok(Value::Null),
                },
            };
            // Rounded from every digit held; beyond DECIMAL(p,s) it is the largest
            // value of that type, as MySQL clamps.
            let d = d.rescale(scale);
            if d.int_digits() > precision.saturating_sub(scale) as u32 {
                let max = 10i128.pow(precision.min(38) as u32) - 1;
                Value::Decimal(Decimal::new(d.mantissa.clamp(-max, max), scale))
            } else {
                Value::Decimal(d)
            }
        }
        AssignUserVariable => {
            let name = arg(args, 0, row, cx)?.to_text();
            let v = arg(args, 1, row, cx)?;
            cx.env.set_user_variable(&name, v.clone());
            v
        }
        ShowFloat => match a0()? {
            Value::Double(d) => Value::str(&strata_types::floatfmt::format_float(d)),
            v => v,
        },
        ShowScale(s) => match a0()? {
            Value::Decimal(d) => Value::Decimal(d.with_shown(s)),
            Value::Int(i) => Value::Decimal(Decimal::from_i64(i).with_shown(s)),
            Value::UInt(u) => Value::Decimal(Decimal::from_u64(u).with_shown(s)),
            v => v,
        },
        CastDateTime | CastDate => match to_datetime(&a0()?) {
            Some(d) if f == CastDate => Value::DateTime(DateTime {
                hour: 0,
                minute: 0,
                second: 0,
                micro: 0,
                ..d
            }),
            Some(d) => Value::DateTime(d),
            None => Value::Null,
        },
    })
}

pub fn to_datetime(v: &Value) -> Option<DateTime> {
    match v {
        Value::DateTime(d) => Some(*d),
        Value::Bytes(b) => std::str::from_utf8(b).ok().and_then(DateTime::parse),
        Value::Int(_) | Value::UInt(_) => DateTime::parse(&v.to_text()),
        _ => None,
    }
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
    use crate::expr::{Env, WarnLevel};
    use std::cell::RefCell;

    /// A session whose `max_allowed_packet` is 100 bytes, keeping its warnings.
    #[derive(Default)]
    struct SmallPacket {
        warnings: RefCell<Vec<(u16, String)>>,
    }

    impl Env for SmallPacket {
        fn system_variable(&self, name: &str, _global: bool) -> Result<Value> {
            assert_eq!(name, "max_allowed_packet");
            Ok(Value::UInt(100))
        }
        fn user_variable(&self, _name: &str) -> Value {
            Value::Null
        }
        fn last_insert_id(&self) -> u64 {
            0
        }
        fn database(&self) -> Option<String> {
            None
        }
        fn user(&self) -> String {
            String::new()
        }
        fn connection_id(&self) -> u64 {
            0
        }
        fn now(&self) -> DateTime {
            DateTime::default()
        }
        fn warn(&self, _level: WarnLevel, code: u16, message: String) {
            self.warnings.borrow_mut().push((code, message));
        }
    }

    fn run(f: Func, args: Vec<Value>, env: &SmallPacket) -> Value {
        let args: Vec<Expr> = args.into_iter().map(Expr::Literal).collect();
        call(f, &args, &[], &EvalCtx::new(&[], env)).expect("evaluates")
    }

    #[test]
    fn string_results_past_max_allowed_packet_are_null_with_warning_1301() {
        let env = SmallPacket::default();
        let a = || Value::str("a");
        // At the limit: built. One byte past it: NULL and the warning, never built.
        assert_eq!(
            run(Func::Repeat, vec![a(), Value::Int(100)], &env),
            Value::Bytes(vec![b'a'; 100])
        );
        assert!(env.warnings.borrow().is_empty());
        assert_eq!(
            run(Func::Repeat, vec![a(), Value::Int(101)], &env),
            Value::Null
        );
        // A count that would overflow a usize multiplication is just too large.
        assert_eq!(
            run(
                Func::Repeat,
                vec![Value::str("ab"), Value::Int(i64::MAX)],
                &env
            ),
            Value::Null
        );
        // REPLACE is sized before it is built: 10 matches of a 20-byte replacement.
        let big = Value::str(&"b".repeat(20));
        assert_eq!(
            run(
                Func::Replace,
                vec![Value::str(&"a".repeat(10)), a(), big],
                &env
            ),
            Value::Null
        );
        let fifty = || Value::str(&"c".repeat(50));
        assert_eq!(
            run(Func::Concat, vec![fifty(), fifty(), a()], &env),
            Value::Null
        );
        assert_eq!(
            run(Func::ConcatWs, vec![a(), fifty(), fifty()], &env),
            Value::Null
        );
        let codes: Vec<u16> = env.warnings.borrow().iter().map(|w| w.0).collect();
        assert_eq!(codes, vec![1301; 5]);
        assert_eq!(
            env.warnings.borrow()[0].1,
            "Result of repeat() was larger than max_allowed_packet (100) - truncated"
        );
    }

    #[test]
    fn inet_aton_forms() {
        assert_eq!(inet_aton(b"10.0.5.9"), Some(167773449));
        assert_eq!(inet_aton(b"127.1"), Some(2130706433));
        assert_eq!(inet_aton(b"1.2.3.256"), None);
        assert_eq!(inet_aton(b"x"), None);
    }
}
