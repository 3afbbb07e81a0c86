//! The modifiers MySQL allows right after UPDATE (`LOW_PRIORITY`, `IGNORE`) and DELETE
//! (`LOW_PRIORITY`, `QUICK`, `IGNORE`), which sqlparser does not read: it took
//! `UPDATE IGNORE t SET …` for a table named `ignore` with the alias `t` (1146 "Table
//! 'db.ignore' doesn't exist") and refused the rest with 1064.
//!
//! `LOW_PRIORITY` and `QUICK` are scheduling and index-merge hints that never change a
//! statement's result (MySQL ignores LOW_PRIORITY for engines with row locks, and QUICK
//! only skips merging MyISAM index leaves): their tokens are dropped. `IGNORE` changes
//! what the statement does (rows with duplicate keys or bad values are skipped or
//! clipped with warnings, `statements::ignore`): sqlparser's UPDATE and DELETE have no
//! field for it, so its token becomes an optimizer-hint comment with the prefix
//! [`IGNORE_HINT`] (`/*strataignore+*/`), which sqlparser keeps in the statement's
//! `optimizer_hints` ([`has_ignore`]). A comment of that prefix the client wrote is
//! dropped, so only the keyword means IGNORE.

use sqlparser::ast::OptimizerHint;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};
use strata_types::Result;

/// The prefix of the hint comment that stands for IGNORE.
const IGNORE_HINT: &str = "strataignore";

/// Whether an UPDATE's or DELETE's hints say IGNORE (put there by [`rewrite`]).
pub fn has_ignore(hints: &[OptimizerHint]) -> bool {
    hints.iter().any(|h| h.prefix == IGNORE_HINT)
}

/// Whether `sql` may be an UPDATE or DELETE with modifiers (the cheap test before
/// tokenizing). `ignore` is looked for in the whole text: a comment the client wrote
/// that looks like the IGNORE hint must be seen wherever it is, to be dropped.
pub fn may_need(sql: &str) -> bool {
    let head = sql.trim_start().get(..6);
    let dml =
        head.is_some_and(|s| s.eq_ignore_ascii_case("update") || s.eq_ignore_ascii_case("delete"));
    dml && {
        let lower = sql
            .get(..sql.len().min(64))
            .unwrap_or(sql)
            .to_ascii_lowercase();
        lower.contains("low_priority")
            || lower.contains("quick")
            || sql
                .as_bytes()
                .windows(6)
                .any(|w| w.eq_ignore_ascii_case(b"ignore"))
    }
}

/// A comment that would read as the IGNORE hint.
fn is_ignore_hint(t: &Token) -> bool {
    let text = match t {
        Token::Whitespace(Whitespace::MultiLineComment(c)) => c,
        Token::Whitespace(Whitespace::SingleLineComment { comment, .. }) => comment,
        _ => return false,
    };
    text.split_once('+')
        .is_some_and(|(p, _)| p.eq_ignore_ascii_case(IGNORE_HINT))
}

fn is(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// The tokens without the hints after UPDATE/DELETE and with IGNORE as its hint
/// comment; None when there is nothing to change.
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
    // Positions to drop, and the IGNORE keyword's (which becomes the hint).
    let mut hints: Vec<usize> = (0..tokens.len())
        .filter(|&i| is_ignore_hint(&tokens[i].token))
        .collect();
    let mut ignore = None;
    for i in solid {
        let t = &tokens[i].token;
        if is(t, "IGNORE") && ignore.is_none() {
            ignore = Some(i);
        } else if is(t, "LOW_PRIORITY") || (verb == "DELETE" && is(t, "QUICK")) {
            hints.push(i);
        } else {
            break;
        }
    }
    if hints.is_empty() && ignore.is_none() {
        return Ok(None);
    }
    Ok(Some(
        tokens
            .iter()
            .enumerate()
            .filter(|(i, _)| !hints.contains(i))
            .map(|(i, t)| {
                if Some(i) == ignore {
                    TokenWithSpan::wrap(Token::Whitespace(Whitespace::MultiLineComment(format!(
                        "{IGNORE_HINT}+"
                    ))))
                } else {
                    t.clone()
                }
            })
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
    fn hints_are_dropped_and_ignore_becomes_its_hint() {
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
        assert_eq!(
            rewritten("UPDATE IGNORE t SET a = 1").unwrap().as_deref(),
            Some("UPDATE /*strataignore+*/ t SET a = 1")
        );
        assert_eq!(
            rewritten("DELETE LOW_PRIORITY IGNORE QUICK FROM t")
                .unwrap()
                .as_deref(),
            Some("DELETE  /*strataignore+*/  FROM t")
        );
        // A column named like the keyword later in the statement is left alone.
        assert_eq!(rewritten("UPDATE t SET `ignore` = 1").unwrap(), None);
    }

    #[test]
    fn the_hint_reaches_the_statement_and_a_written_one_is_dropped() {
        let ignore_of = |sql: &str| match crate::parse::parse(sql).unwrap().pop() {
            Some(sqlparser::ast::Statement::Update(u)) => has_ignore(&u.optimizer_hints),
            Some(sqlparser::ast::Statement::Delete(d)) => has_ignore(&d.optimizer_hints),
            other => panic!("{other:?}"),
        };
        assert!(ignore_of("UPDATE IGNORE t SET a = 1"));
        assert!(ignore_of("update low_priority ignore t, u set t.a = u.a"));
        assert!(ignore_of("DELETE IGNORE FROM t WHERE a = 1"));
        assert!(ignore_of(
            "DELETE IGNORE t1.* FROM t1 JOIN t2 ON t1.a = t2.a"
        ));
        assert!(ignore_of(
            "DELETE IGNORE FROM t1 USING t1, t2 WHERE t1.a = t2.a"
        ));
        assert!(!ignore_of("UPDATE t SET a = 1"));
        assert!(!ignore_of("UPDATE /*strataignore+*/ t SET a = 1"));
        assert!(!ignore_of("DELETE /*STRATAIGNORE+ */ FROM t"));
    }
}
