//! The modifiers MySQL allows right after UPDATE (`LOW_PRIORITY`, `IGNORE`) and DELETE
//! (`LOW_PRIORITY`, `QUICK`, `IGNORE`), which sqlparser does not read: it took
//! `UPDATE IGNORE t SET …` for a table named `ignore` with the alias `t` (1146 "Table
//! 'db.ignore' doesn't exist") and refused the rest with 1064.
//!
//! `LOW_PRIORITY` and `QUICK` are scheduling and index-merge hints that never change a
//! statement's result (MySQL ignores LOW_PRIORITY for engines with row locks, and QUICK
//! only skips merging MyISAM index leaves): their tokens are dropped. `IGNORE` changes
//! what the statement does (rows with duplicate keys or bad values are skipped or
//! clipped with warnings), which Strata does not do for UPDATE and DELETE: 1235 names it.

use sqlparser::tokenizer::{Token, TokenWithSpan};
use strata_types::{Error, Result};

/// Whether `sql` may be an UPDATE or DELETE with modifiers (the cheap test before
/// tokenizing).
pub fn may_need(sql: &str) -> bool {
    let head = sql.trim_start().get(..6);
    let dml =
        head.is_some_and(|s| s.eq_ignore_ascii_case("update") || s.eq_ignore_ascii_case("delete"));
    dml && {
        let lower = sql
            .get(..sql.len().min(64))
            .unwrap_or(sql)
            .to_ascii_lowercase();
        lower.contains("low_priority") || lower.contains("ignore") || lower.contains("quick")
    }
}

fn is(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// The tokens without the hints after UPDATE/DELETE, None when there are none, or 1235
/// for IGNORE.
pub fn rewrite(tokens: &[TokenWithSpan]) -> Result<Option<Vec<TokenWithSpan>>> {
    let mut solid = (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)));
    let Some(first) = solid.next() else {
        return Ok(None);
    };
    let verb = match &tokens[first].token {
        t if is(t, "UPDATE") => "UPDATE",
        t if is(t, "DELETE") => "DELETE",
        _ => return Ok(None),
    };
    let mut hints = Vec::new();
    for i in solid {
        let t = &tokens[i].token;
        if is(t, "IGNORE") {
            return Err(Error::NotSupported(format!(
                "{verb} IGNORE (run it without IGNORE, or INSERT … ON DUPLICATE KEY UPDATE)"
            )));
        }
        if is(t, "LOW_PRIORITY") || (verb == "DELETE" && is(t, "QUICK")) {
            hints.push(i);
        } else {
            break;
        }
    }
    if hints.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        tokens
            .iter()
            .enumerate()
            .filter(|(i, _)| !hints.contains(i))
            .map(|(_, t)| t.clone())
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn rewritten(sql: &str) -> Result<Option<String>> {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        Ok(rewrite(&tokens)?.map(|t| t.iter().map(|t| t.token.to_string()).collect()))
    }

    #[test]
    fn hints_are_dropped_and_ignore_is_refused() {
        assert!(may_need("update low_priority t set a = 1"));
        assert!(!may_need("UPDATE t SET a = 1 WHERE b = 2"));
        assert_eq!(
            rewritten("UPDATE LOW_PRIORITY t SET a = 1")
                .unwrap()
                .as_deref(),
            Some("UPDATE  t SET a = 1")
        );
        assert_eq!(
            rewritten("delete low_priority quick from t where a = 1")
                .unwrap()
                .as_deref(),
            Some("delete   from t where a = 1")
        );
        assert_eq!(rewritten("UPDATE t SET quick = 1").unwrap(), None);
        assert_eq!(rewrite_code("UPDATE IGNORE t SET a = 1"), 1235);
        assert_eq!(rewrite_code("DELETE LOW_PRIORITY IGNORE FROM t"), 1235);
    }

    fn rewrite_code(sql: &str) -> u16 {
        rewritten(sql).unwrap_err().code()
    }
}
