//! JSON text: the parser (RFC 8259, with MySQL's error messages and byte positions, so
//! a bad document gets the same 3140/3141 text as MySQL 8) and the printers: the
//! one-line form MySQL 8 shows (`{"a": 1, "b": [1, 2]}`) and JSON_PRETTY's.

use super::{Json, MAX_DEPTH};
use crate::decimal::Decimal;
use crate::value::format_double;

/// Why and where a text is not JSON. `message` is MySQL's (its parser's) wording;
/// `pos` a byte offset into the text. `too_deep` is error 3157 rather than a syntax
/// error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub message: &'static str,
    pub pos: usize,
    pub too_deep: bool,
}

/// Parses one JSON document.
pub fn parse(text: &[u8]) -> Result<Json, ParseError> {
    let mut p = Parser { b: text, at: 0 };
    p.ws();
    if p.at >= p.b.len() {
        return Err(p.err("The document is empty."));
    }
    let v = p.value(1)?;
    p.ws();
    if p.at < p.b.len() {
        return Err(p.err("The document root must not be followed by other values."));
    }
    Ok(v)
}

struct Parser<'a> {
    b: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn err(&self, message: &'static str) -> ParseError {
        self.err_at(message, self.at)
    }
    fn err_at(&self, message: &'static str, pos: usize) -> ParseError {
        ParseError {
            message,
            pos,
            too_deep: false,
        }
    }
    fn ws(&mut self) {
        while matches!(self.b.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn value(&mut self, depth: usize) -> Result<Json, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError {
                message: "The JSON document exceeds the maximum depth.",
                pos: self.at,
                too_deep: true,
            });
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.err("Invalid value.")),
        }
    }

    fn literal(&mut self, word: &[u8], v: Json) -> Result<Json, ParseError> {
        for &c in word {
            if self.peek() != Some(c) {
                return Err(self.err("Invalid value."));
            }
            self.at += 1;
        }
        Ok(v)
    }

    fn object(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.at += 1;
        self.ws();
        let mut members = Vec::new();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(members));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.err("Missing a name for object member."));
            }
            let key = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("Missing a colon after a name of object member."));
            }
            self.at += 1;
            self.ws();
            let v = self.value(depth + 1)?;
            super::object_put(&mut members, key, v);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Json::Object(members));
                }
                _ => return Err(self.err("Missing a comma or '}' after an object member.")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.at += 1;
        self.ws();
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.ws();
                }
                Some(b']') => {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.err("Missing a comma or ']' after an array element.")),
            }
        }
    }

    fn hex4(&mut self, start: usize) -> Result<u32, ParseError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = self.peek().and_then(|c| (c as char).to_digit(16));
            match d {
                Some(d) => v = v * 16 + d,
                None => {
                    return Err(
                        self.err_at("Incorrect hex digit after \\u escape in string.", start)
                    )
                }
            }
            self.at += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.at += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err("Missing a closing quotation mark in string."));
            };
            match c {
                b'"' => {
                    self.at += 1;
                    break;
                }
                b'\\' => {
                    let start = self.at;
                    self.at += 1;
                    let e = self.peek();
                    self.at += 1;
                    match e {
                        Some(b'"') => out.push(b'"'),
                        Some(b'\\') => out.push(b'\\'),
                        Some(b'/') => out.push(b'/'),
                        Some(b'b') => out.push(8),
                        Some(b'f') => out.push(12),
                        Some(b'n') => out.push(b'\n'),
                        Some(b'r') => out.push(b'\r'),
                        Some(b't') => out.push(b'\t'),
                        Some(b'u') => {
                            let mut cp = self.hex4(start)?;
                            if (0xD800..0xDC00).contains(&cp) {
                                // A high surrogate must be followed by `\u` and a low one.
                                if self.peek() != Some(b'\\')
                                    || self.b.get(self.at + 1) != Some(&b'u')
                                {
                                    return Err(self.err_at(
                                        "The surrogate pair in string is invalid.",
                                        start,
                                    ));
                                }
                                self.at += 2;
                                let lo = self.hex4(start)?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err_at(
                                        "The surrogate pair in string is invalid.",
                                        start,
                                    ));
                                }
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                            }
                            let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return Err(self.err_at("Invalid escape character in string.", start)),
                    }
                }
                0..=0x1F => return Err(self.err("Invalid encoding in string.")),
                _ => {
                    out.push(c);
                    self.at += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.err("Invalid encoding in string."))
    }

    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.at += 1;
                }
            }
            _ => return Err(self.err("Invalid value.")),
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            float = true;
            self.at += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("Miss fraction part in number."));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.at += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            float = true;
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("Miss exponent in number."));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.at += 1;
            }
        }
        // The bytes are ASCII digits and signs, so this is valid UTF-8.
        let s = std::str::from_utf8(&self.b[start..self.at]).unwrap_or("0");
        if !float {
            if let Ok(i) = s.parse::<i64>() {
                return Ok(Json::Int(i));
            }
            if let Ok(u) = s.parse::<u64>() {
                return Ok(Json::UInt(u));
            }
        }
        match s.parse::<f64>() {
            Ok(d) if d.is_finite() => Ok(Json::Double(d)),
            _ => Err(self.err_at("Number too big to be stored in double.", start)),
        }
    }
}

/// A double as MySQL prints it inside JSON: its shortest form, with `.0` when that
/// looks like an integer (`1.0`, `1e20` stays).
pub fn double_text(d: f64) -> String {
    let mut s = format_double(d);
    if !s.contains(['.', 'e', 'n', 'N', 'i']) {
        s.push_str(".0");
    }
    s
}

/// Appends `s` as a quoted JSON string, escaped as MySQL escapes it.
pub fn quote_into(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn scalar_into(out: &mut String, v: &Json) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => out.push_str(&i.to_string()),
        Json::UInt(u) => out.push_str(&u.to_string()),
        Json::Double(d) => out.push_str(&double_text(*d)),
        Json::Decimal(d) => out.push_str(&decimal_text(d)),
        Json::String(s) => quote_into(out, s),
        Json::Date(d) => {
            out.push('"');
            out.push_str(&d.date_string());
            out.push('"');
        }
        Json::DateTime(d) => {
            out.push('"');
            out.push_str(&datetime_text(d));
            out.push('"');
        }
        Json::Array(_) | Json::Object(_) => {}
    }
}

/// A decimal inside JSON shows the digits it holds (`1.50` stays `1.50`).
fn decimal_text(d: &Decimal) -> String {
    d.with_shown(d.scale).to_string()
}

/// A date-time inside JSON: always six fractional digits, as MySQL prints it.
pub fn datetime_text(d: &crate::DateTime) -> String {
    format!(
        "{} {:02}:{:02}:{:02}.{:06}",
        d.date_string(),
        d.hour,
        d.minute,
        d.second,
        d.micro
    )
}

/// The one-line form: `{"a": 1, "b": [1, 2]}`.
pub fn to_text(v: &Json) -> String {
    let mut out = String::new();
    write_compact(&mut out, v);
    out
}

fn write_compact(out: &mut String, v: &Json) {
    match v {
        Json::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_compact(out, x);
            }
            out.push(']');
        }
        Json::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                quote_into(out, k);
                out.push_str(": ");
                write_compact(out, x);
            }
            out.push('}');
        }
        s => scalar_into(out, s),
    }
}

/// JSON_PRETTY's form: one member or element per line, two spaces per level.
pub fn to_pretty(v: &Json) -> String {
    let mut out = String::new();
    write_pretty(&mut out, v, 0);
    out
}

fn write_pretty(out: &mut String, v: &Json, level: usize) {
    let indent = |out: &mut String, n: usize| out.extend(std::iter::repeat_n("  ", n));
    match v {
        Json::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                write_pretty(out, x, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push(']');
        }
        Json::Object(m) if !m.is_empty() => {
            out.push_str("{\n");
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                quote_into(out, k);
                out.push_str(": ");
                write_pretty(out, x, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push('}');
        }
        other => write_compact(out, other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(s: &str) -> String {
        to_text(&parse(s.as_bytes()).expect("valid"))
    }

    fn error(s: &str) -> (&'static str, usize) {
        let e = parse(s.as_bytes()).expect_err("invalid");
        (e.message, e.pos)
    }

    #[test]
    fn prints_as_mysql_8() {
        assert_eq!(round(r#"{"bb":[1,2],"a":1}"#), r#"{"a": 1, "bb": [1, 2]}"#);
        assert_eq!(round(r#"{"a":1,"a":2}"#), r#"{"a": 2}"#);
        assert_eq!(
            round("[1.0, 1e20, -0.5, 18446744073709551615]"),
            "[1.0, 1e20, -0.5, 18446744073709551615]"
        );
        assert_eq!(round(r#""a\"b\u00e9\n""#), "\"a\\\"bé\\n\"");
        assert_eq!(round(" [ ] "), "[]");
        assert_eq!(round(r#""\ud83d\ude00""#), "\"😀\"");
    }

    #[test]
    fn numbers_keep_their_kind() {
        assert_eq!(parse(b"5").unwrap(), Json::Int(5));
        assert_eq!(parse(b"9223372036854775808").unwrap(), Json::UInt(1 << 63));
        assert_eq!(parse(b"1.5").unwrap(), Json::Double(1.5));
        assert_eq!(
            parse(b"-99999999999999999999").unwrap(),
            Json::Double(-1e20)
        );
    }

    #[test]
    fn errors_name_the_problem_and_position() {
        assert_eq!(error(""), ("The document is empty.", 0));
        assert_eq!(error("abc"), ("Invalid value.", 0));
        assert_eq!(
            error("{\"a\" 1}"),
            ("Missing a colon after a name of object member.", 5)
        );
        assert_eq!(error("{a:1}"), ("Missing a name for object member.", 1));
        assert_eq!(error("[1,]"), ("Invalid value.", 3));
        assert_eq!(
            error("[1 2]"),
            ("Missing a comma or ']' after an array element.", 3)
        );
        assert_eq!(
            error("1 2"),
            ("The document root must not be followed by other values.", 2)
        );
        assert_eq!(
            error("\"abc"),
            ("Missing a closing quotation mark in string.", 4)
        );
        assert_eq!(error("tru"), ("Invalid value.", 3));
        assert_eq!(error("1."), ("Miss fraction part in number.", 2));
        let deep = "[".repeat(101) + &"]".repeat(101);
        assert!(parse(deep.as_bytes()).unwrap_err().too_deep);
        let ok = "[".repeat(100) + &"]".repeat(100);
        assert!(parse(ok.as_bytes()).is_ok());
    }

    #[test]
    fn pretty_form() {
        let v = parse(br#"{"a":[1,{"b":[]}],"c":{}}"#).unwrap();
        assert_eq!(
            to_pretty(&v),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {}\n}"
        );
    }
}
