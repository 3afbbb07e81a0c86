//! String functions that find things: LOCATE/POSITION/INSTR, FIELD, FIND_IN_SET,
//! SUBSTRING_INDEX and STRCMP. LOCATE, INSTR, FIELD, FIND_IN_SET and STRCMP compare by
//! the arguments' collation (case-insensitive under a `_ci` one, as MySQL);
//! SUBSTRING_INDEX matches bytes exactly, as MySQL does whatever the collation.

use super::string::{boundaries, StrFn};
use super::{arg, text};
use crate::expr::int_context::int_arg;
use crate::expr::{compare, EvalCtx, Expr};
use std::cmp::Ordering;
use strata_types::{Collation, Result, Value};

pub(super) fn call(
    f: StrFn,
    coll: Collation,
    args: &[Expr],
    row: &[Value],
    cx: &EvalCtx,
) -> Result<Value> {
    use StrFn::*;
    match f {
        Field => {
            let v = arg(args, 0, row, cx)?;
            if v.is_null() {
                return Ok(Value::Int(0));
            }
            let mut items = Vec::with_capacity(args.len() - 1);
            for e in &args[1..] {
                items.push(e.eval(row, cx)?);
            }
            // Strings compare as strings when every argument is one; otherwise as
            // numbers (MySQL compares them as doubles).
            let all_strings = matches!(v, Value::Bytes(_))
                && items
                    .iter()
                    .all(|x| matches!(x, Value::Bytes(_) | Value::Null));
            for (i, x) in items.iter().enumerate() {
                if x.is_null() {
                    continue;
                }
                let equal = if all_strings {
                    coll.compare(&text(&v), &text(x)) == Ordering::Equal
                } else {
                    compare(
                        &Value::Double(v.to_f64().unwrap_or(0.0)),
                        &Value::Double(x.to_f64().unwrap_or(0.0)),
                        coll,
                    ) == Some(Ordering::Equal)
                };
                if equal {
                    return Ok(Value::Int(i as i64 + 1));
                }
            }
            Ok(Value::Int(0))
        }
        _ => {
            let mut vals = Vec::with_capacity(args.len());
            for e in args {
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                vals.push(v);
            }
            Ok(match f {
                FindInSet => Value::Int(find_in_set(&text(&vals[0]), &text(&vals[1]), coll)),
                Instr => Value::Int(locate(&text(&vals[1]), &text(&vals[0]), 1, false, coll)),
                Locate => {
                    let (start, given) = match vals.get(2) {
                        Some(p) => (int_arg(p, cx).unwrap_or(0), true),
                        None => (1, false),
                    };
                    Value::Int(locate(&text(&vals[0]), &text(&vals[1]), start, given, coll))
                }
                SubstringIndex => Value::Bytes(substring_index(
                    &text(&vals[0]),
                    &text(&vals[1]),
                    int_arg(&vals[2], cx).unwrap_or(0),
                )),
                Strcmp => Value::Int(match coll.compare(&text(&vals[0]), &text(&vals[1])) {
                    Ordering::Less => -1,
                    Ordering::Equal => 0,
                    Ordering::Greater => 1,
                }),
                other => unreachable!("{other:?} is not a search function"),
            })
        }
    }
}

/// The 1-based character position of `needle` in `hay` at or after character `start`,
/// 0 when absent. A position given explicitly that is below 1 or past the end finds
/// nothing, not even the empty string (MySQL's LOCATE).
fn locate(needle: &[u8], hay: &[u8], start: i64, given: bool, coll: Collation) -> i64 {
    let binary = coll == Collation::Binary;
    let hb = boundaries(hay, binary);
    let n = hb.len() as i64 - 1;
    if given && (start <= 0 || start > n) {
        return 0;
    }
    let start = start.max(1);
    if needle.is_empty() {
        return start;
    }
    let fold = |s: &[u8]| -> Vec<char> {
        String::from_utf8_lossy(s)
            .chars()
            .map(|c| coll.fold_char(c))
            .collect()
    };
    if binary {
        let from = (start - 1) as usize;
        return hay[from.min(hay.len())..]
            .windows(needle.len())
            .position(|w| w == needle)
            .map_or(0, |p| (from + p) as i64 + 1);
    }
    let h = fold(hay);
    let nd = fold(needle);
    let from = (start - 1) as usize;
    if nd.len() > h.len() {
        return 0;
    }
    (from..=h.len() - nd.len())
        .find(|&i| h[i..i + nd.len()] == nd[..])
        .map_or(0, |i| i as i64 + 1)
}

fn find_in_set(s: &[u8], list: &[u8], coll: Collation) -> i64 {
    if s.contains(&b',') || list.is_empty() {
        return 0;
    }
    list.split(|&b| b == b',')
        // MySQL compares each item with `my_strnncoll`, trailing spaces counted:
        // FIND_IN_SET('a ', 'a,b') is 0 under a PAD SPACE collation too.
        .position(|item| coll.eq_no_pad(item, s))
        .map_or(0, |i| i as i64 + 1)
}

/// SUBSTRING_INDEX: what precedes the `count`-th delimiter from the left (count > 0),
/// or follows it counting from the right (count < 0); the whole string when there are
/// fewer delimiters.
fn substring_index(s: &[u8], delim: &[u8], count: i64) -> Vec<u8> {
    if delim.is_empty() || count == 0 {
        return vec![];
    }
    let d = delim.len();
    if count > 0 {
        let mut found = 0;
        let mut i = 0;
        while i + d <= s.len() {
            if &s[i..i + d] == delim {
                found += 1;
                if found == count {
                    return s[..i].to_vec();
                }
                i += d;
            } else {
                i += 1;
            }
        }
        s.to_vec()
    } else {
        let mut found = 0;
        let mut end = s.len();
        while end >= d {
            let Some(p) = (0..=end - d).rev().find(|&p| &s[p..p + d] == delim) else {
                break;
            };
            found += 1;
            if found == count.unsigned_abs() {
                return s[p + d..].to_vec();
            }
            end = p;
        }
        s.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_is_case_insensitive_under_ci() {
        let ci = Collation::GeneralCi;
        assert_eq!(locate(b"B", b"abcb", 1, false, ci), 2);
        assert_eq!(locate(b"b", b"abcb", 3, true, ci), 4);
        assert_eq!(locate(b"B", b"abcb", 1, false, Collation::Binary), 0);
        assert_eq!(locate(b"", b"abc", 3, true, ci), 3);
        assert_eq!(locate(b"", b"abc", 4, true, ci), 0);
        assert_eq!(locate(b"", b"abc", 1, false, ci), 1);
        assert_eq!(locate(b"b", b"abc", 0, true, ci), 0);
        assert_eq!(locate("ñ".as_bytes(), "aÑb".as_bytes(), 1, false, ci), 2);
    }

    #[test]
    fn substring_index_counts_from_either_end() {
        let si = |c| String::from_utf8(substring_index(b"www.mysql.com", b".", c)).unwrap();
        assert_eq!(si(2), "www.mysql");
        assert_eq!(si(-2), "mysql.com");
        assert_eq!(si(5), "www.mysql.com");
        assert_eq!(si(-5), "www.mysql.com");
        assert_eq!(si(0), "");
    }

    #[test]
    fn find_in_set_positions() {
        let ci = Collation::GeneralCi;
        assert_eq!(find_in_set(b"B", b"a,b,c", ci), 2);
        assert_eq!(find_in_set(b"a,b", b"a,b,c", ci), 0);
        assert_eq!(find_in_set(b"", b"a,,c", ci), 2);
        assert_eq!(find_in_set(b"d", b"", ci), 0);
        assert_eq!(find_in_set(b"a ", b"a,b", ci), 0);
        assert_eq!(find_in_set(b"A ", b"x,a ,b", ci), 2);
        assert_eq!(find_in_set(b"b", b"a,b ", Collation::Utf8Bin), 0);
    }
}
