//! String functions that build or cut strings: CONCAT, CONCAT_WS, LENGTH and its
//! kin, SUBSTRING, LEFT/RIGHT, LOWER/UPPER, TRIM/LTRIM/RTRIM, REPEAT, REPLACE,
//! REVERSE, SPACE, LPAD/RPAD, INSERT, ELT; also the name table of every string
//! function and the dispatch to `string_search.rs` and `string_code.rs`.
//!
//! A string is held as bytes. Under a binary collation (a BLOB, `BINARY x`) a
//! function counts bytes; otherwise it counts UTF-8 characters, as MySQL counts a
//! utf8mb4 string. Every function that can build a long string checks
//! `max_allowed_packet` first ([`EvalCtx::fits_packet`]): past it, NULL and warning 1301.

use super::{arg, string_code, string_search, text};
use crate::expr::int_context::int_arg;
use crate::expr::{EvalCtx, Expr};
use strata_types::{Collation, Result, Value};

/// Which ends TRIM cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimSide {
    Both,
    Leading,
    Trailing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrFn {
    Concat,
    ConcatWs,
    Length,
    CharLength,
    BitLength,
    Substring,
    Lower,
    Upper,
    /// TRIM([side] [remstr] FROM s): arguments (s) or (s, remstr).
    Trim(TrimSide),
    LTrim,
    RTrim,
    Left,
    Right,
    Repeat,
    Replace,
    Reverse,
    Space,
    LPad,
    RPad,
    Insert,
    Elt,
    // string_search.rs
    Field,
    FindInSet,
    Instr,
    /// LOCATE(substr, str[, pos]) and POSITION(substr IN str).
    Locate,
    SubstringIndex,
    Strcmp,
    // string_code.rs
    Hex,
    Unhex,
    ToBase64,
    FromBase64,
    Quote,
    Soundex,
    Ascii,
    Ord,
    Bin,
    Oct,
    Conv,
    Format,
    MakeSet,
    ExportSet,
    /// WEIGHT_STRING(s): the bytes the collation sorts `s` by.
    WeightString,
}

/// (function, minimum args, maximum args) for a string function's lower-case name.
pub(super) fn lookup(name: &str) -> Option<(StrFn, usize, usize)> {
    use StrFn::*;
    Some(match name {
        "concat" => (Concat, 1, usize::MAX),
        "concat_ws" => (ConcatWs, 2, usize::MAX),
        "length" | "octet_length" => (Length, 1, 1),
        "char_length" | "character_length" => (CharLength, 1, 1),
        "bit_length" => (BitLength, 1, 1),
        "substring" | "substr" | "mid" => (Substring, 2, 3),
        "lower" | "lcase" => (Lower, 1, 1),
        "upper" | "ucase" => (Upper, 1, 1),
        "trim" => (Trim(TrimSide::Both), 1, 1),
        "ltrim" => (LTrim, 1, 1),
        "rtrim" => (RTrim, 1, 1),
        "left" => (Left, 2, 2),
        "right" => (Right, 2, 2),
        "repeat" => (Repeat, 2, 2),
        "replace" => (Replace, 3, 3),
        "reverse" => (Reverse, 1, 1),
        "space" => (Space, 1, 1),
        "lpad" => (LPad, 3, 3),
        "rpad" => (RPad, 3, 3),
        "insert" => (Insert, 4, 4),
        "elt" => (Elt, 2, usize::MAX),
        "field" => (Field, 2, usize::MAX),
        "find_in_set" => (FindInSet, 2, 2),
        "instr" => (Instr, 2, 2),
        "locate" => (Locate, 2, 3),
        "substring_index" => (SubstringIndex, 3, 3),
        "strcmp" => (Strcmp, 2, 2),
        "hex" => (Hex, 1, 1),
        "unhex" => (Unhex, 1, 1),
        "to_base64" => (ToBase64, 1, 1),
        "from_base64" => (FromBase64, 1, 1),
        "quote" => (Quote, 1, 1),
        "soundex" => (Soundex, 1, 1),
        "weight_string" => (WeightString, 1, 1),
        "ascii" => (Ascii, 1, 1),
        "ord" => (Ord, 1, 1),
        "bin" => (Bin, 1, 1),
        "oct" => (Oct, 1, 1),
        "conv" => (Conv, 3, 3),
        "format" => (Format, 2, 3),
        "make_set" => (MakeSet, 2, usize::MAX),
        "export_set" => (ExportSet, 3, 5),
        _ => return None,
    })
}

/// Byte offsets where each character starts, plus the end: `n + 1` entries for `n`
/// characters. Bytes of a binary string are characters; a byte that is not part of
/// valid UTF-8 counts as one character, so no input is lost.
pub(super) fn boundaries(s: &[u8], binary: bool) -> Vec<usize> {
    if binary || s.is_ascii() {
        return (0..=s.len()).collect();
    }
    let mut out = Vec::with_capacity(s.len() + 1);
    let mut i = 0;
    while i < s.len() {
        out.push(i);
        let width = match s[i] {
            b if b < 0x80 => 1,
            b if b >= 0xF0 => 4,
            b if b >= 0xE0 => 3,
            b if b >= 0xC0 => 2,
            _ => 1,
        };
        let end = (i + width).min(s.len());
        i = if std::str::from_utf8(&s[i..end]).is_ok() {
            end
        } else {
            i + 1
        };
    }
    out.push(s.len());
    out
}

/// The number of characters of `s`.
pub(super) fn char_count(s: &[u8], binary: bool) -> usize {
    if binary || s.is_ascii() {
        s.len()
    } else {
        boundaries(s, false).len() - 1
    }
}

/// The longest a string of `chars` characters can be in bytes (4 per utf8mb4
/// character), which MySQL checks against `max_allowed_packet` for LPAD/RPAD.
fn max_bytes(chars: u64, binary: bool) -> u64 {
    if binary {
        chars
    } else {
        chars.saturating_mul(4)
    }
}

/// `SUBSTRING(s, pos[, len])`: NULL when an argument is (read in order, stopping at the
/// first NULL); characters counted from 1, a negative `pos` from the end. The string is
/// borrowed, not copied, when it is one, and an ASCII (or binary) string needs no table
/// of character offsets: one allocation per call, the result's (TPC-H Q22 calls it twice
/// per customer).
fn substring(binary: bool, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let Some(first) = args.first() else {
        return Ok(Value::Null);
    };
    let v = first.operand(row, cx)?;
    let owned;
    let s: &[u8] = match &*v {
        Value::Null => return Ok(Value::Null),
        Value::Bytes(b) => b,
        other => {
            owned = text(other);
            &owned
        }
    };
    // Borrowed, not evaluated into a copy: the position and length are mostly
    // literals or statement parameters.
    let int = |i: usize| -> Result<Option<i64>> {
        let Some(e) = args.get(i) else {
            return Ok(None);
        };
        Ok(match &*e.operand(row, cx)? {
            Value::Null => None,
            Value::Int(n) => Some(*n),
            v => Some(int_arg(v, cx).unwrap_or(0)),
        })
    };
    let Some(pos) = int(1)? else {
        return Ok(Value::Null);
    };
    let len = match args.len() > 2 {
        true => match int(2)? {
            Some(l) => l,
            None => return Ok(Value::Null),
        },
        false => i64::MAX,
    };
    // Byte offset of each character (None: one byte per character).
    let offsets = (!binary && !s.is_ascii()).then(|| boundaries(s, binary));
    let n = offsets.as_ref().map_or(s.len(), |o| o.len() - 1) as i64;
    let at = |i: usize| offsets.as_ref().map_or(i, |o| o[i]);
    let start = if pos > 0 {
        pos - 1
    } else if pos < 0 && -pos <= n {
        n + pos
    } else {
        return Ok(Value::Bytes(vec![]));
    };
    if start >= n || len <= 0 {
        return Ok(Value::Bytes(vec![]));
    }
    let end = start.saturating_add(len).min(n);
    Ok(Value::Bytes(
        s[at(start as usize)..at(end as usize)].to_vec(),
    ))
}

pub(super) fn call(
    f: StrFn,
    coll: Collation,
    args: &[Expr],
    row: &[Value],
    cx: &EvalCtx,
) -> Result<Value> {
    use StrFn::*;
    let binary = coll == Collation::Binary;
    match f {
        Field | FindInSet | Instr | Locate | SubstringIndex | Strcmp => {
            return string_search::call(f, coll, args, row, cx)
        }
        Hex | Unhex | ToBase64 | FromBase64 | Quote | Soundex | Ascii | Ord | Bin | Oct | Conv
        | Format | MakeSet | ExportSet => return string_code::call(f, binary, args, row, cx),
        WeightString => {
            // A number has no weight string (MySQL answers NULL: it is not a string).
            return Ok(match arg(args, 0, row, cx)? {
                Value::Null | Value::Int(_) | Value::UInt(_) | Value::Double(_) => Value::Null,
                Value::Decimal(_) => Value::Null,
                v => Value::Bytes(coll.sql_weight_string(&text(&v))),
            });
        }
        Substring => return substring(binary, args, row, cx),
        Concat => return concat(args, row, cx),
        ConcatWs => return concat_ws(args, row, cx),
        Elt => {
            let n = arg(args, 0, row, cx)?;
            return match int_arg(&n, cx) {
                Some(i) if i >= 1 && (i as usize) < args.len() => {
                    Ok(match args[i as usize].eval(row, cx)? {
                        Value::Null => Value::Null,
                        v => Value::Bytes(text(&v)),
                    })
                }
                _ => Ok(Value::Null),
            };
        }
        _ => {}
    }
    // The rest read every argument and are NULL when any is.
    let mut vals = Vec::with_capacity(args.len());
    for e in args {
        let v = e.eval(row, cx)?;
        if v.is_null() {
            return Ok(Value::Null);
        }
        vals.push(v);
    }
    let s = text(&vals[0]);
    let int = |i: usize| vals.get(i).and_then(|v| int_arg(v, cx)).unwrap_or(0);
    Ok(match f {
        Length => Value::Int(s.len() as i64),
        BitLength => Value::Int(s.len() as i64 * 8),
        CharLength => Value::Int(char_count(&s, binary) as i64),
        Lower | Upper if binary => Value::Bytes(s),
        Lower | Upper => {
            let t = String::from_utf8_lossy(&s);
            Value::str(&map_case(&t, f == Upper))
        }
        Trim(side) => {
            let rem = match vals.get(1) {
                Some(r) => text(r),
                None => b" ".to_vec(),
            };
            Value::Bytes(trim(&s, &rem, side).to_vec())
        }
        LTrim => Value::Bytes(trim(&s, b" ", TrimSide::Leading).to_vec()),
        RTrim => Value::Bytes(trim(&s, b" ", TrimSide::Trailing).to_vec()),
        Left | Right => {
            let b = boundaries(&s, binary);
            let n = b.len() - 1;
            let k = int(1).clamp(0, n as i64) as usize;
            Value::Bytes(if f == Left {
                s[..b[k]].to_vec()
            } else {
                s[b[n - k]..].to_vec()
            })
        }
        Repeat => {
            let n = int(1).max(0) as u64;
            if !cx.fits_packet((s.len() as u64).saturating_mul(n), "repeat") {
                return Ok(Value::Null);
            }
            Value::Bytes(s.repeat(n as usize))
        }
        Replace => {
            let (from, to) = (text(&vals[1]), text(&vals[2]));
            if from.is_empty() {
                return Ok(Value::Bytes(s));
            }
            // Size the result before building it: 1,000 matches of a 16 MB
            // replacement would otherwise allocate 16 GB.
            let matches = find_all(&s, &from);
            let len = (s.len() as u64 - matches.len() as u64 * from.len() as u64)
                .saturating_add((matches.len() as u64).saturating_mul(to.len() as u64));
            if !cx.fits_packet(len, "replace") {
                return Ok(Value::Null);
            }
            let mut out = Vec::with_capacity(len as usize);
            let mut at = 0;
            for m in matches {
                out.extend_from_slice(&s[at..m]);
                out.extend_from_slice(&to);
                at = m + from.len();
            }
            out.extend_from_slice(&s[at..]);
            Value::Bytes(out)
        }
        Reverse => {
            let b = boundaries(&s, binary);
            let mut out = Vec::with_capacity(s.len());
            for w in b.windows(2).rev() {
                out.extend_from_slice(&s[w[0]..w[1]]);
            }
            Value::Bytes(out)
        }
        Space => {
            let n = int_arg(&vals[0], cx).unwrap_or(0).max(0) as u64;
            if !cx.fits_packet(n, "space") {
                return Ok(Value::Null);
            }
            Value::Bytes(vec![b' '; n as usize])
        }
        LPad | RPad => {
            let len = int(1);
            if len < 0 {
                return Ok(Value::Null);
            }
            let pad = text(&vals[2]);
            let b = boundaries(&s, binary);
            let n = b.len() as i64 - 1;
            if len <= n {
                // Both cut from the right: LPAD('hello', 2, '?') is 'he'.
                return Ok(Value::Bytes(s[..b[len as usize]].to_vec()));
            }
            if pad.is_empty() {
                return Ok(Value::Null);
            }
            let name = if f == LPad { "lpad" } else { "rpad" };
            if !cx.fits_packet(max_bytes(len as u64, binary), name) {
                return Ok(Value::Null);
            }
            let pb = boundaries(&pad, binary);
            let pn = pb.len() - 1;
            let need = (len - n) as usize;
            let mut fill = Vec::with_capacity(need / pn * pad.len() + pad.len());
            for _ in 0..need / pn {
                fill.extend_from_slice(&pad);
            }
            fill.extend_from_slice(&pad[..pb[need % pn]]);
            if f == LPad {
                fill.extend_from_slice(&s);
                Value::Bytes(fill)
            } else {
                let mut out = s;
                out.extend_from_slice(&fill);
                Value::Bytes(out)
            }
        }
        Insert => {
            let (pos, len, new) = (int(1), int(2), text(&vals[3]));
            let b = boundaries(&s, binary);
            let n = b.len() as i64 - 1;
            if pos < 1 || pos > n {
                return Ok(Value::Bytes(s));
            }
            let start = (pos - 1) as usize;
            let end = if len < 0 || len > n - pos + 1 {
                n as usize
            } else {
                start + len as usize
            };
            let total = (s.len() - (b[end] - b[start])) as u64 + new.len() as u64;
            if !cx.fits_packet(total, "insert") {
                return Ok(Value::Null);
            }
            let mut out = Vec::with_capacity(total as usize);
            out.extend_from_slice(&s[..b[start]]);
            out.extend_from_slice(&new);
            out.extend_from_slice(&s[b[end]..]);
            Value::Bytes(out)
        }
        other => unreachable!("{other:?} handled above"),
    })
}

fn concat(args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
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
    Ok(Value::Bytes(out))
}

fn concat_ws(args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let sep = arg(args, 0, row, cx)?;
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
    Ok(Value::Bytes(out))
}

/// Start offsets of the non-overlapping occurrences of `needle` (not empty), left to
/// right, compared byte for byte (REPLACE is case-sensitive in MySQL).
pub(super) fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if &hay[i..i + needle.len()] == needle {
            out.push(i);
            i += needle.len();
        } else {
            i += 1;
        }
    }
    out
}

/// Removes whole repetitions of `rem` from the chosen ends (`TRIM(BOTH 'xy' FROM
/// 'xyxyaxy')` is `a`); an empty `rem` removes nothing.
fn trim<'s>(s: &'s [u8], rem: &[u8], side: TrimSide) -> &'s [u8] {
    if rem.is_empty() {
        return s;
    }
    let mut t = s;
    if side != TrimSide::Trailing {
        while t.starts_with(rem) {
            t = &t[rem.len()..];
        }
    }
    if side != TrimSide::Leading {
        while t.ends_with(rem) {
            t = &t[..t.len() - rem.len()];
        }
    }
    t
}

/// UPPER/LOWER as MySQL: each character maps to one character (Unicode's simple case
/// mapping), so `UPPER('straße')` is `'STRAßE'` and `LOWER('ΑΣ')` is `'ασ'` — not Rust's
/// full mapping (`SS`, a final `ς`). A character whose full mapping is several characters
/// keeps itself, except U+0130 `İ`, whose simple lowercase is `i`.
fn map_case(t: &str, upper: bool) -> String {
    if t.is_ascii() {
        return if upper {
            t.to_ascii_uppercase()
        } else {
            t.to_ascii_lowercase()
        };
    }
    fn single(mut full: impl Iterator<Item = char>) -> Option<char> {
        let one = full.next()?;
        full.next().is_none().then_some(one)
    }
    t.chars()
        .map(|c| {
            let mapped = if upper {
                single(c.to_uppercase())
            } else {
                single(c.to_lowercase())
            };
            match mapped {
                Some(m) => m,
                None if !upper && c == '\u{130}' => 'i',
                None => c,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_env::{run, show, TestEnv};
    use super::super::Func;
    use super::*;

    #[test]
    fn case_mapping_is_one_character_to_one() {
        assert_eq!(map_case("straße", true), "STRAßE");
        assert_eq!(map_case("ΑΣ", false), "ασ");
        assert_eq!(map_case("İ", false), "i");
        assert_eq!(map_case("ǆ ŉ ﬁ", true), "Ǆ ŉ ﬁ");
        assert_eq!(map_case("MiXeD", false), "mixed");
    }

    fn s(x: &str) -> Value {
        Value::str(x)
    }

    fn ci(f: StrFn, args: Vec<Value>) -> String {
        show(run(
            Func::Str(f, Collation::GeneralCi),
            args,
            &TestEnv::default(),
        ))
    }

    #[test]
    fn pads_cut_and_fill_by_characters() {
        assert_eq!(
            ci(StrFn::LPad, vec![s("hi"), Value::Int(5), s("ab")]),
            "abahi"
        );
        assert_eq!(
            ci(StrFn::RPad, vec![s("hi"), Value::Int(5), s("ab")]),
            "hiaba"
        );
        assert_eq!(
            ci(StrFn::LPad, vec![s("hello"), Value::Int(2), s("?")]),
            "he"
        );
        assert_eq!(
            ci(StrFn::LPad, vec![s("hi"), Value::Int(-1), s("?")]),
            "NULL"
        );
        assert_eq!(ci(StrFn::LPad, vec![s("hi"), Value::Int(3), s("")]), "NULL");
        assert_eq!(ci(StrFn::RPad, vec![s("é"), Value::Int(3), s("ü")]), "éüü");
    }

    #[test]
    fn insert_follows_mysql_positions() {
        let ins = |p: i64, l: i64| {
            ci(
                StrFn::Insert,
                vec![s("Quadratic"), Value::Int(p), Value::Int(l), s("What")],
            )
        };
        assert_eq!(ins(3, 4), "QuWhattic");
        assert_eq!(ins(-1, 4), "Quadratic");
        assert_eq!(ins(3, 100), "QuWhat");
        assert_eq!(ins(3, -1), "QuWhat");
        assert_eq!(ins(10, 1), "Quadratic");
    }

    #[test]
    fn trims_reverse_and_substrings() {
        let t = |side, r: &str, x: &str| ci(StrFn::Trim(side), vec![s(x), s(r)]);
        assert_eq!(t(TrimSide::Both, "xy", "xyxyaxy"), "a");
        assert_eq!(t(TrimSide::Leading, "x", "xxaxx"), "axx");
        assert_eq!(t(TrimSide::Trailing, "x", "xxaxx"), "xxa");
        assert_eq!(ci(StrFn::LTrim, vec![s("  a ")]), "a ");
        assert_eq!(ci(StrFn::Reverse, vec![s("añb")]), "bña");
        let bin = run(
            Func::Str(StrFn::Reverse, Collation::Binary),
            vec![Value::Bytes(vec![1, 2, 3])],
            &TestEnv::default(),
        );
        assert_eq!(bin, Value::Bytes(vec![3, 2, 1]));
        assert_eq!(
            ci(
                StrFn::Substring,
                vec![s("añbc"), Value::Int(-3), Value::Int(2)]
            ),
            "ñb"
        );
        assert_eq!(ci(StrFn::Elt, vec![Value::Int(2), s("a"), s("b")]), "b");
        assert_eq!(ci(StrFn::Elt, vec![Value::Int(3), s("a"), s("b")]), "NULL");
        assert_eq!(ci(StrFn::CharLength, vec![s("añ")]), "2");
        assert_eq!(ci(StrFn::BitLength, vec![s("añ")]), "24");
    }

    #[test]
    fn string_results_past_max_allowed_packet_are_null_with_warning_1301() {
        let env = TestEnv::small(100);
        let str_fn = |f| Func::Str(f, Collation::GeneralCi);
        let a = || Value::str("a");
        // At the limit: built. One byte past it: NULL and the warning, never built.
        assert_eq!(
            run(str_fn(StrFn::Repeat), vec![a(), Value::Int(100)], &env),
            Value::Bytes(vec![b'a'; 100])
        );
        assert!(env.warnings.borrow().is_empty());
        assert_eq!(
            run(str_fn(StrFn::Repeat), vec![a(), Value::Int(101)], &env),
            Value::Null
        );
        // A count that would overflow a usize multiplication is just too large.
        assert_eq!(
            run(
                str_fn(StrFn::Repeat),
                vec![Value::str("ab"), Value::Int(i64::MAX)],
                &env
            ),
            Value::Null
        );
        // REPLACE is sized before it is built: 10 matches of a 20-byte replacement.
        let big = Value::str(&"b".repeat(20));
        assert_eq!(
            run(
                str_fn(StrFn::Replace),
                vec![Value::str(&"a".repeat(10)), a(), big],
                &env
            ),
            Value::Null
        );
        let fifty = || Value::str(&"c".repeat(50));
        assert_eq!(
            run(str_fn(StrFn::Concat), vec![fifty(), fifty(), a()], &env),
            Value::Null
        );
        assert_eq!(
            run(str_fn(StrFn::ConcatWs), vec![a(), fifty(), fifty()], &env),
            Value::Null
        );
        assert_eq!(
            run(str_fn(StrFn::Space), vec![Value::Int(101)], &env),
            Value::Null
        );
        // LPAD counts 4 bytes per character of a utf8mb4 result, as MySQL.
        assert_eq!(
            run(str_fn(StrFn::LPad), vec![a(), Value::Int(26), a()], &env),
            Value::Null
        );
        assert_eq!(
            run(
                Func::Str(StrFn::LPad, Collation::Binary),
                vec![a(), Value::Int(100), a()],
                &env
            ),
            Value::Bytes(vec![b'a'; 100])
        );
        assert_eq!(
            run(
                str_fn(StrFn::Insert),
                vec![fifty(), Value::Int(1), Value::Int(1), fifty()],
                &env
            ),
            Value::Bytes([&b"c".repeat(50)[..], &b"c".repeat(49)[..]].concat())
        );
        assert_eq!(env.codes(), vec![1301; 7]);
        assert_eq!(
            env.warnings.borrow()[0].1,
            "Result of repeat() was larger than max_allowed_packet (100) - truncated"
        );
    }
}
