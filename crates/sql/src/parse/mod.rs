//! sqlparser-rs with the MySQL dialect, and the mapping of its errors to MySQL's 1064
//! message, which quotes the statement from the point where parsing failed.
//!
//! sqlparser knows `FOR SHARE` but not MySQL's older spelling `LOCK IN SHARE MODE`
//! (which sysbench and many applications still send); [`parse`] rewrites the tokens of
//! the one into the other; ALTER TABLE clauses it lacks are rewritten by
//! [`alter_clauses`], and CREATE/ALTER VIEW clauses by [`view_clauses`]; UPDATE/DELETE
//! modifiers by [`dml_modifiers`].

pub mod alter_clauses;
pub mod create_clauses;
pub mod delete_targets;
pub mod dialect;
pub mod dml_modifiers;
pub mod join_commas;
pub mod lex;
pub mod mode_text;
pub mod token_rewrite;
pub mod view_clauses;

use self::dialect::StrataDialect;
use sqlparser::ast::Statement;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};
use strata_types::{Error, Result};

/// Stack one unit of [`crate::parse::lex::nesting_bound`] may take: a link of an operator chain
/// in formatting, cloning and dropping, or a third of a parenthesised level in the
/// parser's recursive descent (4-6 KiB measured in a release build for parentheses and
/// `NOT`), with a margin.
const STACK_PER_LEVEL: usize = 1536;

/// How deep a statement may nest on this thread: what its remaining stack can hold.
/// A connection thread (16 MiB) takes about 10,000 units: a 1,200-term chain (MariaDB
/// itself answers 1436 to that), a 4,000-term `OR` list, or 1,600 nested parentheses;
/// deeper statements get 1436 instead of a crash.
fn depth_budget() -> usize {
    strata_types::stack::remaining()
        .map(|r| r.saturating_sub(strata_types::stack::RED_ZONE) / STACK_PER_LEVEL)
        .unwrap_or(1000)
}

/// Parses one or more `;`-separated statements.
pub fn parse(sql: &str) -> Result<Vec<Statement>> {
    let budget = depth_budget();
    if crate::parse::lex::nesting_bound(sql) > budget {
        return Err(too_deep());
    }
    // CREATE/ALTER VIEW clauses sqlparser does not read; the view statement reads them
    // from the text itself.
    if view_clauses::may_need(sql) {
        if let Some(v) = view_clauses::split(sql) {
            return parse_within(&view_clauses::for_parser(sql, &v), budget);
        }
    }
    parse_within(sql, budget)
}

/// 1436, as MySQL answers a statement nested deeper than its thread stack allows.
fn too_deep() -> Error {
    let size = strata_types::stack::remaining().unwrap_or(0);
    Error::StackOverrun {
        used: size.saturating_sub(strata_types::stack::RED_ZONE),
        size,
    }
}

fn parse_within(sql: &str, budget: usize) -> Result<Vec<Statement>> {
    let dialect = StrataDialect::default();
    let recursion = budget / crate::parse::lex::GROUP_WEIGHT;
    let parser = || Parser::new(&dialect).with_recursion_limit(recursion.max(1));
    // Cheap pre-checks so the common statement is tokenized once, by the parser.
    let share = sql.len() >= 5
        && sql
            .as_bytes()
            .windows(5)
            .any(|w| w.eq_ignore_ascii_case(b"share"));
    let forms = crate::parse::token_rewrite::may_need(sql);
    let alter = crate::parse::alter_clauses::may_need(sql);
    let create = crate::parse::create_clauses::may_need(sql);
    let delete = crate::parse::delete_targets::may_need(sql);
    let modifiers = crate::parse::dml_modifiers::may_need(sql);
    if share || forms || alter || create || delete || modifiers {
        if let Ok(mut tokens) = Tokenizer::new(&dialect, sql).tokenize_with_location() {
            let mut changed = false;
            if modifiers {
                if let Some(t) = crate::parse::dml_modifiers::rewrite(&tokens)? {
                    tokens = t;
                    changed = true;
                }
            }
            if alter {
                if let Some(t) = crate::parse::alter_clauses::rewrite(&tokens) {
                    tokens = t;
                    changed = true;
                }
            }
            if create {
                if let Some(t) = crate::parse::create_clauses::rewrite(&tokens) {
                    tokens = t;
                    changed = true;
                }
            }
            if delete {
                if let Some(t) = crate::parse::delete_targets::rewrite(&tokens) {
                    tokens = t;
                    changed = true;
                }
            }
            if forms {
                if let Some(t) = crate::parse::token_rewrite::rewrite(&tokens) {
                    tokens = t;
                    changed = true;
                }
            }
            if share {
                if let Some(t) = rewrite_lock_in_share_mode(tokens.clone()) {
                    tokens = t;
                    changed = true;
                }
            }
            if changed {
                return parser()
                    .with_tokens_with_locations(tokens.clone())
                    .parse_statements()
                    .or_else(|e| {
                        // `UPDATE IGNORE t1, t2 SET …`: the comma list, as below.
                        crate::parse::join_commas::rewrite(&tokens)
                            .and_then(|t| {
                                parser()
                                    .with_tokens_with_locations(t)
                                    .parse_statements()
                                    .ok()
                            })
                            .ok_or(e)
                    })
                    .map_err(|e| parse_error(sql, e));
            }
        }
    }
    parser()
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .or_else(|e| {
            // MySQL's `(a, b) JOIN c` and `(a)`: retried once with the list rewritten.
            let retry = Tokenizer::new(&dialect, sql)
                .tokenize_with_location()
                .ok()
                .and_then(|t| crate::parse::join_commas::rewrite(&t))
                .and_then(|t| {
                    parser()
                        .with_tokens_with_locations(t)
                        .parse_statements()
                        .ok()
                });
            retry.ok_or(e)
        })
        .map_err(|e| parse_error(sql, e))
}

fn parse_error(sql: &str, e: sqlparser::parser::ParserError) -> Error {
    match e {
        sqlparser::parser::ParserError::RecursionLimitExceeded => too_deep(),
        other => syntax_error(sql, &other.to_string()),
    }
}

/// Replaces each unquoted `LOCK IN SHARE MODE` by `FOR SHARE`; None when there is none.
fn rewrite_lock_in_share_mode(tokens: Vec<TokenWithSpan>) -> Option<Vec<TokenWithSpan>> {
    let is_word = |t: &TokenWithSpan, w: &str| matches!(&t.token, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    // Positions of the tokens that are not whitespace or comments.
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let mut drop = vec![false; tokens.len()];
    let mut replace = Vec::new();
    for w in solid.windows(4) {
        if is_word(&tokens[w[0]], "lock")
            && is_word(&tokens[w[1]], "in")
            && is_word(&tokens[w[2]], "share")
            && is_word(&tokens[w[3]], "mode")
        {
            replace.push(w[0]);
            // Keep SHARE; drop IN, MODE and the whitespace between LOCK and MODE.
            for (i, d) in drop.iter_mut().enumerate().take(w[3] + 1).skip(w[0] + 1) {
                *d = i != w[2];
            }
        }
    }
    if replace.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(tokens.len());
    for (i, mut t) in tokens.into_iter().enumerate() {
        if drop[i] {
            continue;
        }
        if replace.contains(&i) {
            t.token = Token::make_keyword("FOR");
            out.push(t);
            out.push(TokenWithSpan::wrap(Token::Whitespace(
                sqlparser::tokenizer::Whitespace::Space,
            )));
            continue;
        }
        out.push(t);
    }
    Some(out)
}

/// Builds MySQL's 1064 from a parser message containing `Line: L, Column: C`.
fn syntax_error(sql: &str, msg: &str) -> Error {
    let num_after = |key: &str| -> Option<usize> {
        let i = msg.rfind(key)? + key.len();
        msg[i..]
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let line = num_after("Line:").unwrap_or(1).max(1);
    let near = match (num_after("Line:"), num_after("Column:")) {
        (Some(line), Some(col)) => {
            let mut offset = 0;
            for (i, l) in sql.split_inclusive('\n').enumerate() {
                if i + 1 == line {
                    offset += l
                        .char_indices()
                        .nth(col.saturating_sub(1))
                        .map_or(l.len(), |(b, _)| b);
                    break;
                }
                offset += l.len();
            }
            // Back up to the start of the offending token.
            let rest = sql.get(offset.min(sql.len())..).unwrap_or("");
            let found = msg
                .rsplit("found: ")
                .next()
                .and_then(|f| f.split(" at Line").next())
                .unwrap_or("");
            match sql[..offset.min(sql.len())]
                .rfind(found)
                .filter(|_| !found.is_empty() && found != "EOF")
            {
                Some(start) if offset - start <= found.len() + 1 => &sql[start..],
                _ => rest,
            }
        }
        _ => "",
    };
    let near: String = near.chars().take(80).collect();
    Error::SyntaxAt { near, line }
}

/// Test helper: the one expression of `SELECT <sql>`, parsed (panics on anything else).
pub fn object_name_parts(name: &sqlparser::ast::ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|p| match p.as_ident() {
            Some(i) => i.value.clone(),
            None => p.to_string(),
        })
        .collect()
}

#[cfg(test)]
pub(crate) fn test_expr(sql: &str) -> sqlparser::ast::Expr {
    use sqlparser::ast;
    match parse(&format!("SELECT {sql}"))
        .expect("test SQL parses")
        .remove(0)
    {
        ast::Statement::Query(q) => match *q.body {
            ast::SetExpr::Select(s) => match s.projection.into_iter().next() {
                Some(ast::SelectItem::UnnamedExpr(e)) => e,
                other => panic!("{other:?}"),
            },
            other => panic!("{other}"),
        },
        other => panic!("{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_quote_the_rest_of_the_statement() {
        let e = parse("SELEC 1").unwrap_err();
        assert_eq!(e.code(), 1064);
        let e = parse("SELECT * FROM t WHERE").unwrap_err();
        assert_eq!(e.code(), 1064);
        assert!(parse("SELECT 1; SELECT 2").unwrap().len() == 2);
    }

    #[test]
    fn statements_deeper_than_the_stack_allows_get_1436() {
        // On a thread with a 16 MiB stack, like a connection's.
        let run = |sql: String| {
            std::thread::Builder::new()
                .stack_size(16 << 20)
                .spawn(move || parse(&sql).map(|_| ()).map_err(|e| e.code()))
                .unwrap()
                .join()
                .unwrap()
        };
        assert_eq!(run(format!("SELECT 1{}", "+1".repeat(1200))), Ok(()));
        assert_eq!(
            run(format!("SELECT {}1{}", "(".repeat(500), ")".repeat(500))),
            Ok(())
        );
        assert_eq!(run(format!("SELECT 1{}", "+1".repeat(100_000))), Err(1436));
        assert_eq!(run(format!("SELECT {}1", "(".repeat(100_000))), Err(1436));
        assert_eq!(run(format!("SELECT {}1", "- ".repeat(100_000))), Err(1436));
        assert_eq!(
            run(format!("SELECT {}1", "NOT ".repeat(100_000))),
            Err(1436)
        );
        // Right at the bound: prefix operators are recursive in the parser.
        for prefix in ["NOT ", "- ", "~", "!", "BINARY "] {
            let sql = format!("SELECT {}1", prefix.repeat(3000));
            assert!(matches!(run(sql), Ok(()) | Err(1436)), "{prefix}");
        }
    }

    #[test]
    fn lock_in_share_mode_is_for_share() {
        let locks = |sql: &str| match parse(sql).unwrap().remove(0) {
            Statement::Query(q) => q.locks.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
            other => panic!("{other}"),
        };
        assert_eq!(
            locks("SELECT c FROM t WHERE id = 1 lock  in share\nmode"),
            vec!["FOR SHARE"]
        );
        assert_eq!(locks("SELECT c FROM t FOR UPDATE"), vec!["FOR UPDATE"]);
        assert_eq!(locks("SELECT c FROM t FOR SHARE"), vec!["FOR SHARE"]);
        // Inside a string it is data, not a clause.
        assert!(locks("SELECT 'LOCK IN SHARE MODE'").is_empty());
        assert_eq!(parse("SELECT 1 LOCK IN SHARE").unwrap_err().code(), 1064);
    }
}
