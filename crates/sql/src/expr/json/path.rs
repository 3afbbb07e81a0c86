//! MySQL JSON path expressions: `$`, `.key`, `."quoted key"`, `.*`, `[n]`, `[last]`,
//! `[last-n]`, `[m to n]`, `[*]`, `**`. Parsing (error 3143 with the character position
//! where the path stops making sense), selecting every value a path reaches, finding
//! the one value a wildcard-free path names (for the modifying functions), and writing
//! a path back as text (JSON_SEARCH's answers).

use strata_types::json::Json;
use strata_types::{Error, Result};

/// An array position: counted from the start, or back from `last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idx {
    Start(u64),
    /// `last - n`
    End(u64),
}

impl Idx {
    /// The 0-based position in an array of `len` elements (None before the start).
    pub fn resolve(self, len: usize) -> Option<usize> {
        match self {
            Idx::Start(n) => usize::try_from(n).ok(),
            Idx::End(n) => (len as u64)
                .checked_sub(1)?
                .checked_sub(n)
                .map(|x| x as usize),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leg {
    Member(String),
    AnyMember,
    Index(Idx),
    Range(Idx, Idx),
    AnyIndex,
    /// `**`: this value and every value nested in it.
    Descendants,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub legs: Vec<Leg>,
}

impl Path {
    pub fn has_wildcard(&self) -> bool {
        self.legs.iter().any(|l| {
            matches!(
                l,
                Leg::AnyMember | Leg::AnyIndex | Leg::Descendants | Leg::Range(..)
            )
        })
    }

    /// Parses a path; 3143 naming the character position where it goes wrong.
    pub fn parse(text: &[u8]) -> Result<Path> {
        let s = std::str::from_utf8(text).map_err(|_| Error::InvalidJsonPath(0))?;
        let b = s.as_bytes();
        let mut at = skip_ws(b, 0);
        if b.get(at) != Some(&b'$') {
            return Err(Error::InvalidJsonPath(at));
        }
        at += 1;
        let mut legs = Vec::new();
        loop {
            at = skip_ws(b, at);
            let Some(&c) = b.get(at) else { break };
            match c {
                b'.' => {
                    at = skip_ws(b, at + 1);
                    match b.get(at) {
                        Some(b'*') => {
                            at += 1;
                            legs.push(Leg::AnyMember);
                        }
                        Some(b'"') => {
                            let (key, end) = quoted_key(s, at)?;
                            at = end;
                            legs.push(Leg::Member(key));
                        }
                        _ => {
                            let start = at;
                            while at < b.len() && is_ident_byte(b[at]) {
                                at += 1;
                            }
                            if at == start || b[start].is_ascii_digit() {
                                return Err(Error::InvalidJsonPath(at));
                            }
                            legs.push(Leg::Member(s[start..at].to_string()));
                        }
                    }
                }
                b'[' => {
                    at = skip_ws(b, at + 1);
                    if b.get(at) == Some(&b'*') {
                        at = skip_ws(b, at + 1);
                        legs.push(Leg::AnyIndex);
                    } else {
                        let (from, end) = index(b, at)?;
                        at = skip_ws(b, end);
                        if b[at..].starts_with(b"to") {
                            at = skip_ws(b, at + 2);
                            let (to, end) = index(b, at)?;
                            at = skip_ws(b, end);
                            legs.push(Leg::Range(from, to));
                        } else {
                            legs.push(Leg::Index(from));
                        }
                    }
                    if b.get(at) != Some(&b']') {
                        return Err(Error::InvalidJsonPath(at));
                    }
                    at += 1;
                }
                b'*' if b.get(at + 1) == Some(&b'*') => {
                    at += 2;
                    legs.push(Leg::Descendants);
                }
                _ => return Err(Error::InvalidJsonPath(at)),
            }
        }
        // `**` must lead somewhere.
        if legs.last() == Some(&Leg::Descendants) {
            return Err(Error::InvalidJsonPath(b.len()));
        }
        Ok(Path { legs })
    }

    /// Every value the path reaches, in document order, each once.
    pub fn select<'a>(&self, doc: &'a Json) -> Vec<&'a Json> {
        let mut out: Vec<&'a Json> = Vec::new();
        walk(doc, &self.legs, &mut out);
        // `**` can reach one value by two routes; MySQL reports it once.
        let mut seen: Vec<*const Json> = Vec::with_capacity(out.len());
        out.retain(|v| {
            let p = *v as *const Json;
            if seen.contains(&p) {
                false
            } else {
                seen.push(p);
                true
            }
        });
        out
    }

    /// The value a wildcard-free path names, for changing it.
    pub fn find_mut<'a>(&self, doc: &'a mut Json) -> Option<&'a mut Json> {
        find_mut(doc, &self.legs)
    }
}

fn find_mut<'a>(doc: &'a mut Json, legs: &[Leg]) -> Option<&'a mut Json> {
    let Some((leg, rest)) = legs.split_first() else {
        return Some(doc);
    };
    match (leg, doc) {
        (Leg::Member(k), Json::Object(m)) => {
            let i = m
                .binary_search_by(|(x, _)| strata_types::json::key_order(x, k))
                .ok()?;
            find_mut(&mut m[i].1, rest)
        }
        (Leg::Index(ix), Json::Array(a)) => {
            let i = ix.resolve(a.len())?;
            find_mut(a.get_mut(i)?, rest)
        }
        // A value that is not an array is an array of itself, at position 0.
        (Leg::Index(ix), other) if ix.resolve(1) == Some(0) => find_mut(other, rest),
        _ => None,
    }
}

fn walk<'a>(v: &'a Json, legs: &[Leg], out: &mut Vec<&'a Json>) {
    let Some((leg, rest)) = legs.split_first() else {
        out.push(v);
        return;
    };
    match leg {
        Leg::Member(k) => {
            if let Some(x) = v.get(k) {
                walk(x, rest, out);
            }
        }
        Leg::AnyMember => {
            if let Json::Object(m) = v {
                for (_, x) in m {
                    walk(x, rest, out);
                }
            }
        }
        Leg::AnyIndex => {
            if let Json::Array(a) = v {
                for x in a {
                    walk(x, rest, out);
                }
            }
        }
        Leg::Index(ix) => match v {
            Json::Array(a) => {
                if let Some(x) = ix.resolve(a.len()).and_then(|i| a.get(i)) {
                    walk(x, rest, out);
                }
            }
            other => {
                if ix.resolve(1) == Some(0) {
                    walk(other, rest, out);
                }
            }
        },
        Leg::Range(from, to) => {
            let items: &[Json] = match v {
                Json::Array(a) => a,
                other => std::slice::from_ref(other),
            };
            let len = items.len();
            let lo = from.resolve(len).unwrap_or(0);
            let hi = match to.resolve(len) {
                Some(h) => h.min(len.saturating_sub(1)),
                None => return,
            };
            if lo <= hi {
                for x in items.iter().take(hi + 1).skip(lo) {
                    walk(x, rest, out);
                }
            }
        }
        Leg::Descendants => {
            walk(v, rest, out);
            match v {
                Json::Array(a) => a.iter().for_each(|x| walk(x, legs, out)),
                Json::Object(m) => m.iter().for_each(|(_, x)| walk(x, legs, out)),
                _ => {}
            }
        }
    }
}

fn skip_ws(b: &[u8], mut at: usize) -> usize {
    while matches!(b.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Bytes of an unquoted member name: ECMAScript identifier characters (any non-ASCII
/// character counts as a letter).
fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

fn quoted_key(s: &str, at: usize) -> Result<(String, usize)> {
    let b = s.as_bytes();
    let mut end = at + 1;
    while end < b.len() && b[end] != b'"' {
        if b[end] == b'\\' {
            end += 1;
        }
        end += 1;
    }
    if end >= b.len() {
        return Err(Error::InvalidJsonPath(b.len()));
    }
    match strata_types::json::text::parse(&b[at..=end]) {
        Ok(Json::String(k)) => Ok((k, end + 1)),
        _ => Err(Error::InvalidJsonPath(at)),
    }
}

fn index(b: &[u8], mut at: usize) -> Result<(Idx, usize)> {
    let number = |at: &mut usize| -> Result<u64> {
        let start = *at;
        while b.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        std::str::from_utf8(&b[start..*at])
            .ok()
            .and_then(|d| d.parse::<u64>().ok())
            .filter(|n| *n <= u32::MAX as u64)
            .ok_or(Error::InvalidJsonPath(*at))
    };
    if b[at..].starts_with(b"last") {
        at = skip_ws(b, at + 4);
        if b.get(at) == Some(&b'-') {
            at = skip_ws(b, at + 1);
            let n = number(&mut at)?;
            return Ok((Idx::End(n), at));
        }
        return Ok((Idx::End(0), at));
    }
    let n = number(&mut at)?;
    Ok((Idx::Start(n), at))
}

/// A path as text, as JSON_SEARCH reports it: `$.a[0]."b c"`.
pub fn path_text(steps: &[Step]) -> String {
    let mut out = String::from("$");
    for s in steps {
        match s {
            Step::Key(k) => {
                out.push('.');
                let plain = !k.is_empty()
                    && !k.as_bytes()[0].is_ascii_digit()
                    && k.bytes().all(is_ident_byte);
                if plain {
                    out.push_str(k);
                } else {
                    strata_types::json::text::quote_into(&mut out, k);
                }
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// One step of a concrete location in a document.
#[derive(Clone, Debug)]
pub enum Step {
    Key(String),
    Index(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::json::text::{parse, to_text};

    fn sel(doc: &str, path: &str) -> Vec<String> {
        let d = parse(doc.as_bytes()).unwrap();
        let p = Path::parse(path.as_bytes()).unwrap();
        p.select(&d).into_iter().map(to_text).collect()
    }

    fn bad(path: &str) -> u16 {
        Path::parse(path.as_bytes()).unwrap_err().code()
    }

    #[test]
    fn legs_select_as_mysql() {
        let doc = r#"{"a": [1, 2, {"b": 3}], "c d": {"b": 4}, "e": 5}"#;
        assert_eq!(sel(doc, "$.a[1]"), ["2"]);
        assert_eq!(sel(doc, "$.a[last]"), [r#"{"b": 3}"#]);
        assert_eq!(sel(doc, "$.a[last-1]"), ["2"]);
        assert_eq!(sel(doc, "$.a[0 to 1]"), ["1", "2"]);
        assert_eq!(sel(doc, r#"$."c d".b"#), ["4"]);
        assert_eq!(sel(doc, "$**.b"), ["3", "4"]);
        assert_eq!(sel(doc, "$.*").len(), 3);
        assert_eq!(sel(doc, "$.e[0]"), ["5"]);
        assert!(sel(doc, "$.e[1]").is_empty());
        assert!(sel(doc, "$.zz").is_empty());
    }

    #[test]
    fn malformed_paths_are_3143() {
        for p in ["", "a", "$.", "$[", "$[x]", "$**", "$.1a", "$ a"] {
            assert_eq!(bad(p), 3143, "{p}");
        }
    }

    #[test]
    fn paths_print_with_quotes_where_needed() {
        let steps = [
            Step::Key("a".into()),
            Step::Index(2),
            Step::Key("b c".into()),
        ];
        assert_eq!(path_text(&steps), r#"$.a[2]."b c""#);
    }
}
