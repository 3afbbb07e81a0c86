//! The tokens of a stored program's text, with their byte offsets, so that the
//! compound-statement parser (`routines::parse`) can cut the plain statements inside a
//! body out of the text and hand them to sqlparser unchanged (apart from the variable
//! references it replaces with placeholders).
//!
//! Only what the compound-statement grammar needs is told apart: words (keywords and
//! names), quoted names, strings, numbers, `@` variables and single punctuation
//! characters. Whitespace and comments are skipped; `/*! … */` version comments are
//! expanded before the text gets here.

use strata_types::{Error, Result};

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A bare word: keyword or name, as written.
    Word,
    /// A name in backquotes (`value` holds it unquoted).
    Quoted,
    /// A string literal in '…' or "…" (`value` holds the text between the quotes, escapes
    /// undone).
    Str,
    Number,
    /// `@name` or `@@name` (`value` holds the text as written).
    Variable,
    /// One punctuation character (`value` holds it); `:=` as one token.
    Punct,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub kind: Kind,
    pub value: String,
    /// Byte offsets of the token in the program's text.
    pub start: usize,
    pub end: usize,
}

impl Token {
    /// True for the bare word `w` (any case).
    pub fn is(&self, w: &str) -> bool {
        self.kind == Kind::Word && self.value.eq_ignore_ascii_case(w)
    }

    pub fn is_punct(&self, p: &str) -> bool {
        self.kind == Kind::Punct && self.value == p
    }

    /// A name: a bare word or a quoted one.
    pub fn is_name(&self) -> bool {
        matches!(self.kind, Kind::Word | Kind::Quoted)
    }
}

/// Splits `text` into tokens.
pub fn tokens(text: &str) -> Result<Vec<Token>> {
    let s = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    while i < s.len() {
        let b = s[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        // Comments: `#…`, `-- …`, `/* … */`.
        if b == b'#'
            || (b == b'-'
                && s.get(i + 1) == Some(&b'-')
                && s.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()))
        {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b == b'/' && s.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < s.len() && !(s[i] == b'*' && s[i + 1] == b'/') {
                i += 1;
            }
            i = (i + 2).min(s.len());
            continue;
        }
        let (kind, value, end) = match b {
            b'\'' | b'"' => {
                let mut j = i + 1;
                let mut v = Vec::new();
                loop {
                    let Some(&c) = s.get(j) else {
                        return Err(Error::Syntax(text[start..].chars().take(80).collect()));
                    };
                    if c == b'\\' && j + 1 < s.len() {
                        v.extend_from_slice(&crate::parse::lex::unescape(&s[j..j + 2], b));
                        j += 2;
                        continue;
                    }
                    if c == b {
                        if s.get(j + 1) == Some(&b) {
                            v.push(b);
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    v.push(c);
                    j += 1;
                }
                (Kind::Str, String::from_utf8_lossy(&v).into_owned(), j + 1)
            }
            b'`' => {
                let mut j = i + 1;
                let mut v = String::new();
                loop {
                    let Some(&c) = s.get(j) else {
                        return Err(Error::Syntax(text[start..].chars().take(80).collect()));
                    };
                    if c == b'`' {
                        if s.get(j + 1) == Some(&b'`') {
                            v.push('`');
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    let ch_end = next_char_end(text, j);
                    v.push_str(&text[j..ch_end]);
                    j = ch_end;
                }
                (Kind::Quoted, v, j + 1)
            }
            b'@' => {
                let mut j = i + 1;
                if s.get(j) == Some(&b'@') {
                    j += 1;
                }
                if matches!(s.get(j), Some(b'\'' | b'"' | b'`')) {
                    // @'name': the quoted name.
                    let q = s[j];
                    j += 1;
                    while j < s.len() && s[j] != q {
                        j += 1;
                    }
                    j += 1;
                } else {
                    while j < s.len() && (word(s[j]) || s[j] == b'.') {
                        j += 1;
                    }
                }
                let j = j.min(s.len());
                (Kind::Variable, text[i..j].to_string(), j)
            }
            b'0'..=b'9' => {
                let mut j = i;
                while j < s.len() && (word(s[j]) || s[j] == b'.') {
                    j += 1;
                }
                (Kind::Number, text[i..j].to_string(), j)
            }
            _ if word(b) => {
                let mut j = i;
                while j < s.len() && word(s[j]) {
                    j = next_char_end(text, j);
                }
                (Kind::Word, text[i..j].to_string(), j)
            }
            b':' if s.get(i + 1) == Some(&b'=') => (Kind::Punct, ":=".to_string(), i + 2),
            _ => {
                let end = next_char_end(text, i);
                (Kind::Punct, text[i..end].to_string(), end)
            }
        };
        out.push(Token {
            kind,
            value,
            start,
            end,
        });
        i = end;
    }
    Ok(out)
}

fn next_char_end(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_words_strings_and_punctuation() {
        let t = tokens("lbl: BEGIN SET x := 'a''b'; -- note\n SET `y z` = @v + 1.5; END").unwrap();
        let v: Vec<&str> = t.iter().map(|t| t.value.as_str()).collect();
        assert_eq!(
            v,
            [
                "lbl", ":", "BEGIN", "SET", "x", ":=", "a'b", ";", "SET", "y z", "=", "@v", "+",
                "1.5", ";", "END"
            ]
        );
        assert_eq!(t[6].kind, Kind::Str);
        assert_eq!(t[9].kind, Kind::Quoted);
        assert!(tokens("SELECT 'open").is_err());
    }
}
