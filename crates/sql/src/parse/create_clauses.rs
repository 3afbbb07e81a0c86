//! `CREATE TABLE … IGNORE SELECT` and `… REPLACE SELECT`, which sqlparser does not
//! read: the word is rewritten on the tokens into the table option
//! `INSERT_METHOD = <word>`, its value carrying the internal quote ([`INTERNAL_QUOTE`]),
//! so a client's own `INSERT_METHOD=` is never taken for it.
//! `statements::create_select::duplicates_clause` reads it back.
//!
//! `CREATE SCHEMA` with character set or collation options, which sqlparser reads only
//! as `CREATE DATABASE` (MySQL's synonym), is rewritten to that.

use crate::parse::token_rewrite::INTERNAL_QUOTE;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

/// Whether `sql` may be a CREATE statement with IGNORE or REPLACE (the cheap test
/// before tokenizing).
pub fn may_need(sql: &str) -> bool {
    let lower = sql.trim_start().to_ascii_lowercase();
    lower.starts_with("create")
        && (lower.contains("ignore")
            || lower.contains("replace")
            || (lower.contains("schema") && (lower.contains("char") || lower.contains("collate"))))
}

fn is(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// The tokens with the first top-level `IGNORE`/`REPLACE` before `SELECT`, `AS`,
/// `WITH`, `TABLE` or `(` of a CREATE [TEMPORARY] TABLE statement rewritten; None when
/// there is none.
pub fn rewrite(tokens: &[TokenWithSpan]) -> Option<Vec<TokenWithSpan>> {
    let significant: Vec<usize> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, _)| i)
        .collect();
    let word = |k: usize, w: &str| significant.get(k).is_some_and(|&i| is(&tokens[i].token, w));
    if !word(0, "CREATE") {
        return None;
    }
    if word(1, "SCHEMA") {
        let mut out = tokens.to_vec();
        out[significant[1]] = TokenWithSpan::wrap(Token::make_keyword("DATABASE"));
        return Some(out);
    }
    let table_at = if word(1, "TABLE") {
        1
    } else if word(1, "TEMPORARY") && word(2, "TABLE") {
        2
    } else {
        return None;
    };
    let mut depth = 0i32;
    for k in table_at + 1..significant.len() {
        let t = &tokens[significant[k]].token;
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            // The query has begun: an IGNORE/REPLACE from here on is its own
            // (`SELECT REPLACE(a, 'x', 'y')`, `FROM u IGNORE INDEX (k)`).
            _ if depth == 0 && (is(t, "SELECT") || is(t, "WITH") || is(t, "AS")) => return None,
            _ if depth == 0 && (is(t, "IGNORE") || is(t, "REPLACE")) => {
                let next = significant.get(k + 1).map(|&i| &tokens[i].token);
                let starts_query = next.is_some_and(|n| {
                    is(n, "SELECT")
                        || is(n, "AS")
                        || is(n, "WITH")
                        || is(n, "TABLE")
                        || matches!(n, Token::LParen)
                });
                if !starts_query {
                    return None;
                }
                let Token::Word(w) = t else { return None };
                let at = significant[k];
                let mut out = tokens[..at].to_vec();
                out.push(TokenWithSpan::wrap(Token::Word(Word {
                    value: "INSERT_METHOD".into(),
                    quote_style: None,
                    keyword: Keyword::INSERT_METHOD,
                })));
                out.push(TokenWithSpan::wrap(Token::Eq));
                out.push(TokenWithSpan::wrap(Token::Word(Word {
                    value: w.value.to_ascii_uppercase(),
                    quote_style: Some(INTERNAL_QUOTE),
                    keyword: Keyword::NoKeyword,
                })));
                out.push(TokenWithSpan::wrap(Token::Whitespace(
                    sqlparser::tokenizer::Whitespace::Space,
                )));
                out.extend_from_slice(&tokens[at + 1..]);
                return Some(out);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn text(sql: &str) -> Option<String> {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .ok()?;
        rewrite(&tokens).map(|t| t.iter().map(|t| t.token.to_string()).collect())
    }

    #[test]
    fn ignore_and_replace_become_an_internal_option() {
        assert_eq!(
            text("create table t ignore select 1").as_deref(),
            Some("create table t INSERT_METHOD=[IGNORE]  select 1")
        );
        assert!(text("create table t (a int) replace as select 1").is_some());
        // Inside the query, or not before a query: left alone.
        assert_eq!(text("create table t select replace('a','b','c')"), None);
        assert_eq!(
            text("create table t select 1 from u ignore index (x)"),
            None
        );
        assert_eq!(text("insert ignore into t select 1"), None);
    }

    #[test]
    fn create_schema_is_create_database() {
        assert_eq!(
            text("CREATE SCHEMA s DEFAULT CHARACTER SET utf8mb4").as_deref(),
            Some("CREATE DATABASE s DEFAULT CHARACTER SET utf8mb4")
        );
    }
}
