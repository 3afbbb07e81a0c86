//! Regular expressions: `x [NOT] REGEXP p` / `RLIKE`, REGEXP_LIKE, REGEXP_INSTR,
//! REGEXP_SUBSTR and REGEXP_REPLACE, on the `regex` crate.
//!
//! MySQL 8 matches with ICU, whose syntax differs from `regex`'s in corners. A pattern
//! is translated ([`translate`]) only through constructs both read the same way:
//! literals, `.` (which in ICU stops at every line terminator, not only `\n`), classes
//! without POSIX names, the anchors, groups, alternation, the quantifiers, the
//! `\d \w \s \b \p{…}` escapes and escaped punctuation. What ICU reads differently or
//! `regex` lacks (backreferences, look-around, possessive quantifiers, `\Q…\E`,
//! `[[:alpha:]]`, …) is refused with 1235 rather than answered differently; a
//! malformed pattern gets MySQL's error (3691 mismatched parenthesis, 3696 unclosed
//! bracket, 3685 otherwise). Case sensitivity follows the arguments' collation, then
//! the match_type letters (`c`, `i`, `m`, `n`, `u`) as MySQL.

use super::string::boundaries;
use super::text;
use crate::expr::int_context::int_arg;
use crate::expr::{EvalCtx, Expr};
use regex::Regex;
use std::cell::RefCell;
use std::collections::HashMap;
use strata_types::{Collation, Error, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegexpFn {
    /// `x REGEXP p`, `REGEXP_LIKE(x, p[, match_type])`.
    Like,
    Instr,
    Substr,
    Replace,
}

pub(super) fn lookup(name: &str) -> Option<(RegexpFn, usize, usize)> {
    Some(match name {
        "regexp_like" => (RegexpFn::Like, 2, 3),
        "regexp_instr" => (RegexpFn::Instr, 2, 6),
        "regexp_substr" => (RegexpFn::Substr, 2, 5),
        "regexp_replace" => (RegexpFn::Replace, 3, 6),
        _ => return None,
    })
}

/// The flags a match runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Flags {
    case_insensitive: bool,
    multiline: bool,
    dot_all: bool,
    unix_lines: bool,
}

fn regexp_error(code: u16) -> Error {
    Error::Regexp(code)
}

/// Applies MySQL's match_type letters over the collation's default.
fn flags(coll: Collation, match_type: Option<&[u8]>) -> Result<Flags> {
    let mut f = Flags {
        case_insensitive: coll.is_case_insensitive(),
        multiline: false,
        dot_all: false,
        unix_lines: false,
    };
    for &c in match_type.unwrap_or_default() {
        match c {
            b'c' => f.case_insensitive = false,
            b'i' => f.case_insensitive = true,
            b'm' => f.multiline = true,
            b'n' => f.dot_all = true,
            b'u' => f.unix_lines = true,
            _ => return Err(regexp_error(3900)),
        }
    }
    Ok(f)
}

/// The line terminators ICU's `.` and `$` stop at.
const ICU_TERMINATORS: &str = r"\n\x0B\x0C\r\x{85}\x{2028}\x{2029}";

fn refuse(what: &str) -> Error {
    Error::NotSupported(format!("the regular expression construct {what}"))
}

/// Translates an ICU pattern into `regex` syntax, or refuses it (see the module doc).
fn translate(p: &str, f: Flags) -> Result<String> {
    if p.is_empty() {
        return Err(regexp_error(3685));
    }
    let dot = if f.dot_all {
        "(?s:.)".to_string()
    } else if f.unix_lines {
        "[^\\n]".to_string()
    } else {
        format!("[^{ICU_TERMINATORS}]")
    };
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 16);
    let mut depth = 0i32;
    let mut i = 0;
    // Whether the previous item can take a quantifier (ICU: "nothing to repeat" else).
    let mut quantifiable = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let Some(&n) = chars.get(i + 1) else {
                    return Err(regexp_error(3689));
                };
                match n {
                    'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'b' | 'B' | 'A' | 'z' | 'n' | 't' | 'r'
                    | 'f' => {
                        out.push('\\');
                        out.push(n);
                        i += 2;
                    }
                    'p' | 'P' => {
                        // \p{Name}: Unicode properties, read alike for the usual names.
                        if chars.get(i + 2) != Some(&'{') {
                            return Err(refuse("\\p without braces"));
                        }
                        let end = chars[i..]
                            .iter()
                            .position(|&x| x == '}')
                            .ok_or_else(|| regexp_error(3685))?;
                        out.extend(&chars[i..i + end + 1]);
                        i += end + 1;
                    }
                    'x' => {
                        // \xhh or \x{h…}
                        let end = if chars.get(i + 2) == Some(&'{') {
                            i + chars[i..]
                                .iter()
                                .position(|&x| x == '}')
                                .ok_or_else(|| regexp_error(3689))?
                                + 1
                        } else {
                            (i + 4).min(chars.len())
                        };
                        out.extend(&chars[i..end]);
                        i = end;
                    }
                    n if n.is_ascii_punctuation() => {
                        out.push_str(&regex::escape(&n.to_string()));
                        i += 2;
                    }
                    other => return Err(refuse(&format!("\\{other}"))),
                }
                quantifiable = true;
                continue;
            }
            '.' => {
                out.push_str(&dot);
                quantifiable = true;
            }
            '$' if !f.multiline => {
                // ICU's `$` also matches before a line terminator ending the input;
                // [`check_subject`] refuses those subjects.
                out.push_str(r"\z");
                quantifiable = false;
            }
            '$' => {
                out.push_str("(?m:$)");
                quantifiable = false;
            }
            '^' if f.multiline => {
                out.push_str("(?m:^)");
                quantifiable = false;
            }
            '^' => {
                out.push_str(r"\A");
                quantifiable = false;
            }
            '(' => {
                if chars.get(i + 1) == Some(&'?') {
                    match chars.get(i + 2) {
                        Some(':') => {
                            out.push_str("(?:");
                            i += 3;
                        }
                        Some('<') if matches!(chars.get(i + 3), Some(c) if c.is_alphabetic()) => {
                            out.push_str("(?<");
                            i += 3;
                        }
                        Some(x) => return Err(refuse(&format!("(?{x}"))),
                        None => return Err(regexp_error(3691)),
                    }
                    depth += 1;
                    quantifiable = false;
                    continue;
                }
                depth += 1;
                out.push('(');
                quantifiable = false;
            }
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(regexp_error(3691));
                }
                out.push(')');
                quantifiable = true;
            }
            '[' => {
                let end = class_end(&chars, i)?;
                let body: String = chars[i..=end].iter().collect();
                if body.contains("[:") || body.contains("[=") || body.contains("[.") {
                    return Err(refuse("[[:class:]]"));
                }
                if body[1..body.len() - 1].contains('[')
                    || body.contains("&&")
                    || body.contains("--")
                    || body.contains("~~")
                {
                    // Nested classes and set operations read differently in ICU.
                    return Err(refuse("nested character classes"));
                }
                for (k, ch) in chars[i..=end].iter().enumerate() {
                    if *ch == '\\' {
                        match chars.get(i + k + 1) {
                            Some(x)
                                if x.is_ascii_punctuation()
                                    || matches!(
                                        x,
                                        'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'n' | 't' | 'r'
                                    ) => {}
                            Some(x) => return Err(refuse(&format!("\\{x} in a class"))),
                            None => return Err(regexp_error(3696)),
                        }
                    }
                }
                out.push_str(&body);
                i = end + 1;
                quantifiable = true;
                continue;
            }
            '*' | '+' | '?' | '{' => {
                if !quantifiable {
                    return Err(Error::RegexpSyntax(i + 1));
                }
                let start = i;
                if c == '{' {
                    let close = chars[i..]
                        .iter()
                        .position(|&x| x == '}')
                        .ok_or_else(|| regexp_error(3692))?;
                    let inner: String = chars[i + 1..i + close].iter().collect();
                    let ok = match inner.split_once(',') {
                        None => inner.parse::<u32>().is_ok(),
                        Some((a, b)) => {
                            a.parse::<u32>().is_ok() && (b.is_empty() || b.parse::<u32>().is_ok())
                        }
                    };
                    if !ok {
                        return Err(regexp_error(3692));
                    }
                    if let Some((a, b)) = inner.split_once(',') {
                        if !b.is_empty() && b.parse::<u32>().ok() < a.parse::<u32>().ok() {
                            return Err(regexp_error(3693));
                        }
                    }
                    i += close + 1;
                } else {
                    i += 1;
                }
                match chars.get(i) {
                    Some('+') => return Err(refuse("a possessive quantifier")),
                    Some('?') => i += 1,
                    _ => {}
                }
                out.extend(&chars[start..i]);
                quantifiable = false;
                continue;
            }
            '#' | ' ' | '&' | '-' | '~' => {
                out.push_str(&regex::escape(&c.to_string()));
                quantifiable = true;
            }
            c => {
                out.push(c);
                quantifiable = true;
            }
        }
        i += 1;
    }
    if depth != 0 {
        return Err(regexp_error(3691));
    }
    let prefix = if f.case_insensitive { "(?i)" } else { "" };
    Ok(format!("{prefix}{out}"))
}

/// The index of the `]` that closes the class opened at `start`.
fn class_end(chars: &[char], start: usize) -> Result<usize> {
    let mut i = start + 1;
    if chars.get(i) == Some(&'^') {
        i += 1;
    }
    // A `]` first in the class is a literal.
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '[' if chars.get(i + 1) == Some(&':') => {
                // [:name:] inside a class
                let close = chars[i..]
                    .windows(2)
                    .position(|w| w == [':', ']'])
                    .ok_or_else(|| regexp_error(3696))?;
                i += close + 2;
            }
            ']' => return Ok(i),
            _ => i += 1,
        }
    }
    Err(regexp_error(3696))
}

thread_local! {
    /// Compiled patterns by (translated text), so a constant pattern compiles once per
    /// thread rather than once per row; bounded by clearing.
    static CACHE: RefCell<HashMap<String, Regex>> = RefCell::new(HashMap::new());
}

fn compile(pattern: &[u8], f: Flags) -> Result<Regex> {
    let p = std::str::from_utf8(pattern).map_err(|_| regexp_error(3685))?;
    let translated = translate(p, f)?;
    if let Some(r) = CACHE.with(|c| c.borrow().get(&translated).cloned()) {
        return Ok(r);
    }
    let r = regex::RegexBuilder::new(&translated)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => regexp_error(3700),
            _ => refuse(&format!("'{p}'")),
        })?;
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 64 {
            c.clear();
        }
        c.insert(translated, r.clone());
    });
    Ok(r)
}

/// A subject ending in a line terminator, where ICU's `$` would also match before it:
/// refused when the pattern uses `$` outside multiline mode.
fn check_subject(pattern: &[u8], subject: &str, f: Flags) -> Result<()> {
    if !f.multiline
        && pattern.contains(&b'$')
        && subject.ends_with(['\n', '\x0B', '\x0C', '\r', '\u{85}', '\u{2028}', '\u{2029}'])
    {
        return Err(refuse("$ before a final line terminator"));
    }
    Ok(())
}

/// `x REGEXP p` and the REGEXP_* functions. NULL when the subject or pattern is.
pub(super) fn call(
    f: RegexpFn,
    coll: Collation,
    args: &[Expr],
    row: &[Value],
    cx: &EvalCtx,
) -> Result<Value> {
    if coll == Collation::Binary {
        return Err(Error::NotSupported(
            "regular expressions on binary strings".into(),
        ));
    }
    let mut vals = Vec::with_capacity(args.len());
    for e in args {
        vals.push(e.eval(row, cx)?);
    }
    if vals.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let subject_bytes = text(&vals[0]);
    let subject = String::from_utf8_lossy(&subject_bytes).into_owned();
    let pattern = text(&vals[1]);
    // Where the optional arguments are: (pos, occurrence, return_option, match_type).
    let (pos_at, occ_at, ret_at, mt_at) = match f {
        RegexpFn::Like => (None, None, None, Some(2)),
        RegexpFn::Instr => (Some(2), Some(3), Some(4), Some(5)),
        RegexpFn::Substr => (Some(2), Some(3), None, Some(4)),
        RegexpFn::Replace => (Some(3), Some(4), None, Some(5)),
    };
    let get = |at: Option<usize>| at.and_then(|i| vals.get(i));
    let match_type = get(mt_at).map(text);
    let fl = flags(coll, match_type.as_deref())?;
    let re = compile(&pattern, fl)?;
    check_subject(&pattern, &subject, fl)?;
    // pos is a character position, 1 … length + 1.
    let b = boundaries(subject.as_bytes(), false);
    let pos = match get(pos_at) {
        Some(p) => int_arg(p, cx).unwrap_or(0),
        None => 1,
    };
    if pos < 1 || pos as usize > b.len() {
        return Err(regexp_error(3686));
    }
    let start = b[pos as usize - 1];
    let occurrence = get(occ_at).and_then(|v| int_arg(v, cx));
    let char_pos = |byte: usize| b.partition_point(|&x| x < byte) as i64 + 1;
    Ok(match f {
        RegexpFn::Like => Value::Int(re.is_match(&subject) as i64),
        RegexpFn::Instr | RegexpFn::Substr => {
            let n = occurrence.unwrap_or(1).max(1) as usize;
            let m = re.find_iter(&subject[start..]).nth(n - 1);
            if f == RegexpFn::Substr {
                match m {
                    Some(m) => Value::str(m.as_str()),
                    None => Value::Null,
                }
            } else {
                let ret = get(ret_at).and_then(|v| int_arg(v, cx)).unwrap_or(0);
                if !(0..=1).contains(&ret) {
                    return Err(Error::WrongArguments("regexp_instr".into()));
                }
                match m {
                    Some(m) if ret == 0 => Value::Int(char_pos(start + m.start())),
                    Some(m) => Value::Int(char_pos(start + m.end())),
                    None => Value::Int(0),
                }
            }
        }
        RegexpFn::Replace => {
            let repl = text(&vals[2]);
            if repl.contains(&b'$') || repl.contains(&b'\\') {
                // ICU's `$n` and `\` escapes in the replacement are not `regex`'s.
                return Err(Error::NotSupported(
                    "REGEXP_REPLACE with '$' or '\\' in the replacement".into(),
                ));
            }
            let repl = String::from_utf8_lossy(&repl).into_owned();
            let occurrence = occurrence.unwrap_or(0).max(0) as usize;
            let tail = &subject[start..];
            let mut out = String::with_capacity(subject.len());
            out.push_str(&subject[..start]);
            let mut last = 0;
            for (k, m) in re.find_iter(tail).enumerate() {
                if occurrence != 0 && k + 1 != occurrence {
                    continue;
                }
                out.push_str(&tail[last..m.start()]);
                out.push_str(&repl);
                last = m.end();
                if !cx.fits_packet((out.len() + tail.len() - last) as u64, "regexp_replace") {
                    return Ok(Value::Null);
                }
                if occurrence != 0 {
                    break;
                }
            }
            out.push_str(&tail[last..]);
            Value::str(&out)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ci() -> Flags {
        flags(Collation::GeneralCi, None).unwrap()
    }

    fn code(p: &str) -> u16 {
        translate(p, ci()).unwrap_err().code()
    }

    #[test]
    fn patterns_both_engines_read_alike_are_translated() {
        assert!(compile(b"^a.c$", ci()).unwrap().is_match("ABC"));
        assert!(!compile(b"a.c", ci()).unwrap().is_match("a\rc"));
        assert!(
            compile(b"a.c", flags(Collation::GeneralCi, Some(b"n")).unwrap())
                .unwrap()
                .is_match("a\rc")
        );
        assert!(
            !compile(b"A", flags(Collation::GeneralCi, Some(b"c")).unwrap())
                .unwrap()
                .is_match("a")
        );
        assert!(!compile(b"A", flags(Collation::Utf8Bin, None).unwrap())
            .unwrap()
            .is_match("a"));
        assert!(compile(b"x{2,3}\\.[a-c]+", ci()).unwrap().is_match("xx.b"));
        assert!(compile(b"\\<", ci()).unwrap().is_match("<"));
    }

    #[test]
    fn what_icu_reads_differently_is_refused_and_bad_patterns_get_mysqls_errors() {
        for p in [
            "(a)\\1",
            "a(?=b)",
            "a++",
            "[[:alpha:]]",
            "\\Qa\\E",
            "\\v",
            "(?>a)",
        ] {
            assert_eq!(code(p), 1235, "{p}");
        }
        assert_eq!(code("("), 3691);
        assert_eq!(code("a)"), 3691);
        assert_eq!(code("a["), 3696);
        assert_eq!(code(""), 3685);
        assert_eq!(code("*a"), 3688);
        assert_eq!(code("a{2,1}"), 3693);
        assert_eq!(code("a{x}"), 3692);
        assert_eq!(
            flags(Collation::GeneralCi, Some(b"z")).unwrap_err().code(),
            3900
        );
    }
}
