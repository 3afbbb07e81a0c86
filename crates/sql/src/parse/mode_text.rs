//! Statement text under the lexical SQL modes, rewritten to the default mode's text.
//!
//! Three modes change how MySQL reads a statement's characters rather than what it
//! means: `ANSI_QUOTES` (a `"…"` is an identifier, not a string), `NO_BACKSLASH_ESCAPES`
//! (a `\` in a string is itself, not an escape) and `PIPES_AS_CONCAT` (`||` is
//! concatenation, not a synonym for OR). The session rewrites a statement typed under
//! them into the text that means the same under the default mode — `"a"` becomes
//! `` `a` ``, a `\` in a string becomes `\\`, a `||` meaning OR becomes `OR` — before
//! anything else reads it, so the parser, the normaliser, the plan cache (keyed by
//! text) and stored program bodies (kept as text) see only one lexical mode. The plan
//! of one text therefore never depends on the mode it was typed under.
//!
//! What is left alone: comments (but the SQL inside an executable `/*! … */` comment is
//! rewritten too, as the server reads it), back-quoted identifiers, and everything
//! outside quotes except `||`.

use std::borrow::Cow;
use strata_types::SqlMode;

/// A statement rewritten to the default mode, and how many `||` it read as OR (MySQL
/// warns 1287 for each statement that uses the deprecated synonym).
pub struct ModeText<'a> {
    pub text: Cow<'a, str>,
    pub pipes_as_or: usize,
}

/// Rewrites `sql`, typed under `mode`, to the default mode's text (borrowed when
/// nothing changes: the common case costs one scan for three bytes).
pub fn to_default_mode(sql: &str, mode: SqlMode) -> ModeText<'_> {
    let ansi_quotes = mode.has(SqlMode::ANSI_QUOTES);
    let no_backslash = mode.has(SqlMode::NO_BACKSLASH_ESCAPES);
    let pipes_concat = mode.has(SqlMode::PIPES_AS_CONCAT);
    let b = sql.as_bytes();
    // `contains` on bytes is a memchr: the usual statement costs three of those.
    let needs = (!pipes_concat && b.contains(&b'|') && b.windows(2).any(|w| w == b"||"))
        || (ansi_quotes && b.contains(&b'"'))
        || (no_backslash && b.contains(&b'\\'));
    if !needs {
        return ModeText {
            text: Cow::Borrowed(sql),
            pipes_as_or: 0,
        };
    }
    let mut out = String::with_capacity(sql.len() + 8);
    let mut pipes_as_or = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' if !(c == b'"' && ansi_quotes) => {
                i = copy_string(sql, i, no_backslash, &mut out);
            }
            b'"' => i = quoted_identifier(sql, i, &mut out),
            b'`' => {
                let end = backquoted_end(b, i);
                out.push_str(&sql[i..end]);
                i = end;
            }
            b'#' => {
                let end = line_end(b, i);
                out.push_str(&sql[i..end]);
                i = end;
            }
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|n| n.is_ascii_whitespace()) =>
            {
                let end = line_end(b, i);
                out.push_str(&sql[i..end]);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') && b.get(i + 2) != Some(&b'!') => {
                let end = sql[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
                out.push_str(&sql[i..end]);
                i = end;
            }
            b'|' if b.get(i + 1) == Some(&b'|') && !pipes_concat => {
                out.push_str(" OR ");
                pipes_as_or += 1;
                i += 2;
            }
            _ => {
                // Copy up to the next byte that may start one of the cases above (a
                // whole UTF-8 sequence at a time: none of them is a continuation byte).
                let next = b[i + 1..]
                    .iter()
                    .position(|x| matches!(x, b'\'' | b'"' | b'`' | b'#' | b'-' | b'/' | b'|'))
                    .map_or(b.len(), |p| i + 1 + p);
                out.push_str(&sql[i..next]);
                i = next;
            }
        }
    }
    ModeText {
        text: Cow::Owned(out),
        pipes_as_or,
    }
}

/// Copies the string literal starting at `start` (its quote), doubling backslashes when
/// they are not escapes in the statement's mode; returns the index after it.
fn copy_string(sql: &str, start: usize, no_backslash: bool, out: &mut String) -> usize {
    let b = sql.as_bytes();
    let q = b[start];
    out.push(q as char);
    let mut i = start + 1;
    let mut run = i;
    while i < b.len() {
        match b[i] {
            b'\\' if no_backslash => {
                out.push_str(&sql[run..=i]);
                out.push('\\');
                i += 1;
                run = i;
            }
            b'\\' => i += 2,
            x if x == q => {
                if b.get(i + 1) == Some(&q) {
                    i += 2;
                } else {
                    out.push_str(&sql[run..=i]);
                    return i + 1;
                }
            }
            _ => i += 1,
        }
    }
    // Unterminated: left for the parser to report.
    out.push_str(&sql[run.min(b.len())..]);
    b.len()
}

/// Copies the `"…"` identifier starting at `start` as a back-quoted one; returns the
/// index after it.
fn quoted_identifier(sql: &str, start: usize, out: &mut String) -> usize {
    let b = sql.as_bytes();
    let mut name = String::new();
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b'"' {
            if b.get(i + 1) == Some(&b'"') {
                name.push('"');
                i += 2;
                continue;
            }
            out.push('`');
            out.push_str(&name.replace('`', "``"));
            out.push('`');
            return i + 1;
        }
        let len = utf8_len(b[i]);
        let end = (i + len).min(b.len());
        name.push_str(&sql[i..end]);
        i = end;
    }
    // Unterminated: left as it was for the parser to report.
    out.push_str(&sql[start..]);
    b.len()
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

fn backquoted_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b'`' {
            if b.get(i + 1) == Some(&b'`') {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

fn line_end(b: &[u8], start: usize) -> usize {
    b[start..]
        .iter()
        .position(|&x| x == b'\n')
        .map_or(b.len(), |p| start + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(sql: &str, mode: &str) -> (String, usize) {
        let m = to_default_mode(sql, SqlMode::parse(mode).unwrap());
        (m.text.into_owned(), m.pipes_as_or)
    }

    #[test]
    fn default_mode_reads_pipes_as_or_only_outside_quotes() {
        assert_eq!(rewrite("SELECT 1 || 0", ""), ("SELECT 1  OR  0".into(), 1));
        assert_eq!(rewrite("SELECT '||', `a||b`", "").1, 0);
        assert_eq!(rewrite("SELECT 1 /* || */ -- ||\n", "").1, 0);
        // The SQL inside an executable comment is read.
        assert_eq!(rewrite("SELECT /*!40101 1 || 0 */", "").1, 1);
        // Nothing to do: the text is borrowed.
        assert!(matches!(
            to_default_mode("SELECT \"a\\n\"", SqlMode::default()).text,
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn pipes_as_concat_keeps_them() {
        assert_eq!(rewrite("SELECT 'a' || 'b'", "PIPES_AS_CONCAT").1, 0);
    }

    #[test]
    fn ansi_quotes_make_identifiers() {
        assert_eq!(
            rewrite("SELECT \"a\", 'b\"c', \"x\"\"y`z\"", "ANSI_QUOTES").0,
            "SELECT `a`, 'b\"c', `x\"y``z`"
        );
        assert_eq!(rewrite("SELECT \"é\"", "ANSI_QUOTES").0, "SELECT `é`");
    }

    #[test]
    fn no_backslash_escapes_doubles_them_in_strings() {
        assert_eq!(
            rewrite(r"SELECT 'a\nb', `c\d`, 'it''s\'", "NO_BACKSLASH_ESCAPES").0,
            r"SELECT 'a\\nb', `c\d`, 'it''s\\'"
        );
        assert_eq!(
            rewrite(r#"SELECT "x\" "#, "NO_BACKSLASH_ESCAPES").0,
            r#"SELECT "x\\" "#
        );
        // Under the default mode the same text is an escape: untouched.
        assert_eq!(rewrite(r"SELECT 'a\'b'", "").0, r"SELECT 'a\'b'");
    }
}
