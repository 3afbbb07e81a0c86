//! Parenthesised table lists sqlparser does not take: MySQL accepts `(a, b) JOIN c` and
//! `(a)` in FROM; sqlparser only a parenthesised join. A statement that fails to parse
//! is retried with such parentheses rewritten on its tokens:
//! `(a, b JOIN c ON x, d)` becomes `(a CROSS JOIN (b JOIN c ON x) CROSS JOIN d)` (an
//! item with a join of its own is wrapped, since a comma binds looser than JOIN, so the
//! meaning and the ON scopes stay MySQL's), and `(a)` becomes `a`.
//!
//! A parenthesis opens a table list when it follows FROM, a JOIN keyword, a comma of a
//! FROM list, or another such parenthesis, and does not start a subquery.
//!
//! The same for a multi-table UPDATE, whose table list sqlparser reads as one table with
//! its joins: `UPDATE a, b JOIN c ON x SET …` becomes
//! `UPDATE a CROSS JOIN (b JOIN c ON x) SET …` (the list ends at SET).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

struct Frame {
    /// A parenthesised table list (else an expression, subquery, column list…).
    table_list: bool,
    /// Inside this frame a FROM clause is being read.
    from: bool,
    open: usize,
    /// The same, among the solid (non-whitespace) tokens.
    open_si: usize,
    /// Token positions of the commas directly inside a table list.
    commas: Vec<usize>,
    /// Per item (between commas): a JOIN keyword directly inside it.
    item_joins: Vec<bool>,
    /// The table list of an UPDATE statement: it ends at SET, not at a parenthesis.
    update: bool,
}

impl Frame {
    fn new(table_list: bool, open: usize, open_si: usize) -> Frame {
        Frame {
            table_list,
            from: table_list,
            open,
            open_si,
            commas: vec![],
            item_joins: vec![false],
            update: false,
        }
    }
}

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

fn is_join_keyword(k: Keyword) -> bool {
    matches!(k, Keyword::JOIN | Keyword::STRAIGHT_JOIN)
}

/// Keywords that end a FROM clause.
fn ends_from(k: Keyword) -> bool {
    matches!(
        k,
        Keyword::WHERE
            | Keyword::GROUP
            | Keyword::HAVING
            | Keyword::ORDER
            | Keyword::LIMIT
            | Keyword::WINDOW
            | Keyword::UNION
            | Keyword::EXCEPT
            | Keyword::INTERSECT
            | Keyword::FOR
            | Keyword::LOCK
            | Keyword::INTO
            | Keyword::SET
    )
}

/// The rewritten tokens, or None when there is nothing to rewrite.
pub fn rewrite(tokens: &[TokenWithSpan]) -> Option<Vec<TokenWithSpan>> {
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    // Per token position: replace with these tokens (None: keep).
    let mut edits: Vec<Option<Vec<Token>>> = vec![None; tokens.len()];
    let mut before: Vec<Vec<Token>> = vec![vec![]; tokens.len() + 1];
    let mut changed = false;
    let mut stack = vec![Frame::new(false, 0, 0)];
    for (si, &i) in solid.iter().enumerate() {
        let t = &tokens[i].token;
        let prev = si.checked_sub(1).map(|p| &tokens[solid[p]].token);
        let next = solid.get(si + 1).map(|&n| &tokens[n].token);
        let top = stack.last_mut()?;
        match t {
            Token::LParen => {
                let after_table_position = match prev {
                    Some(p) => match keyword(p) {
                        Some(k) => (k == Keyword::FROM || is_join_keyword(k)) && top.from,
                        None => {
                            top.from
                                && (matches!(p, Token::Comma)
                                    || (matches!(p, Token::LParen) && top.table_list))
                        }
                    },
                    None => false,
                };
                let subquery = next.and_then(keyword).is_some_and(|k| {
                    matches!(k, Keyword::SELECT | Keyword::WITH | Keyword::VALUES)
                });
                stack.push(Frame::new(after_table_position && !subquery, i, si));
            }
            Token::RParen => {
                let f = stack.pop()?;
                if stack.is_empty() {
                    return None;
                }
                if !f.table_list {
                    continue;
                }
                if f.commas.is_empty() {
                    // `(t)` or `(t AS x)`: a lone table needs no parentheses.
                    let lone = !f.item_joins[0]
                        && si > f.open_si + 1
                        && !matches!(tokens[solid[f.open_si + 1]].token, Token::LParen);
                    if lone {
                        edits[f.open] = Some(vec![]);
                        edits[i] = Some(vec![]);
                        changed = true;
                    }
                    continue;
                }
                changed = true;
                cross_joins(&f, i, &mut edits, &mut before);
            }
            Token::Comma if top.table_list => {
                top.commas.push(i);
                top.item_joins.push(false);
            }
            _ => {
                if let Some(k) = keyword(t) {
                    if k == Keyword::UPDATE && si == 0 {
                        // The statement's table list, up to SET.
                        let mut f = Frame::new(true, i, si);
                        f.update = true;
                        *top = f;
                        continue;
                    }
                    if k == Keyword::SET && top.update {
                        let f = std::mem::replace(top, Frame::new(false, 0, 0));
                        if !f.commas.is_empty() {
                            changed = true;
                            cross_joins(&f, i, &mut edits, &mut before);
                        }
                        continue;
                    }
                    if k == Keyword::FROM {
                        top.from = true;
                    } else if ends_from(k) && !top.table_list {
                        top.from = false;
                    } else if is_join_keyword(k) && top.table_list {
                        if let Some(j) = top.item_joins.last_mut() {
                            *j = true;
                        }
                    }
                }
            }
        }
    }
    if !changed {
        return None;
    }
    let mut out = Vec::with_capacity(tokens.len() + 8);
    for (i, t) in tokens.iter().enumerate() {
        for b in &before[i] {
            out.push(TokenWithSpan::wrap(b.clone()));
        }
        match &edits[i] {
            Some(with) => out.extend(with.iter().cloned().map(TokenWithSpan::wrap)),
            None => out.push(t.clone()),
        }
    }
    Some(out)
}

/// The edits that turn the commas of table list `f`, which ends at token `end`, into
/// CROSS JOINs; an item with a join of its own is parenthesised, as a comma binds looser
/// than JOIN.
fn cross_joins(f: &Frame, end: usize, edits: &mut [Option<Vec<Token>>], before: &mut [Vec<Token>]) {
    for (ci, &c) in f.commas.iter().enumerate() {
        let wrap = f.item_joins[ci + 1];
        let mut with = vec![
            Token::Whitespace(Whitespace::Space),
            Token::make_keyword("CROSS"),
            Token::Whitespace(Whitespace::Space),
            Token::make_keyword("JOIN"),
            Token::Whitespace(Whitespace::Space),
        ];
        if wrap {
            with.push(Token::LParen);
            let item_end = f.commas.get(ci + 1).copied().unwrap_or(end);
            before[item_end].push(Token::RParen);
        }
        edits[c] = Some(with);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn rewritten(sql: &str) -> Option<String> {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        // Compared without whitespace: where spaces fall does not matter.
        rewrite(&tokens).map(|ts| {
            ts.iter()
                .map(|t| t.token.to_string())
                .collect::<String>()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace("( ", "(")
        })
    }

    #[test]
    fn commas_in_a_parenthesised_list_become_cross_joins() {
        assert_eq!(
            rewritten("SELECT * FROM (a, b) JOIN c ON a.x = c.x").as_deref(),
            Some("SELECT * FROM (a CROSS JOIN b) JOIN c ON a.x = c.x")
        );
    }

    #[test]
    fn an_item_with_its_own_join_keeps_its_scope() {
        assert_eq!(
            rewritten("SELECT * FROM (a, b JOIN c ON b.x = c.x, d)").as_deref(),
            Some("SELECT * FROM (a CROSS JOIN (b JOIN c ON b.x = c.x) CROSS JOIN d)")
        );
    }

    #[test]
    fn a_lone_table_loses_its_parentheses() {
        assert_eq!(
            rewritten("SELECT * FROM (a) JOIN b USING (x)").as_deref(),
            Some("SELECT * FROM a JOIN b USING (x)")
        );
    }

    #[test]
    fn an_update_table_list_becomes_cross_joins() {
        assert_eq!(
            rewritten("UPDATE a, b SET a.x = b.y WHERE a.id = b.id").as_deref(),
            Some("UPDATE a CROSS JOIN b SET a.x = b.y WHERE a.id = b.id")
        );
        assert_eq!(
            rewritten("UPDATE a AS p, b JOIN c ON b.x = c.x, d SET p.x = 1").as_deref(),
            Some("UPDATE a AS p CROSS JOIN (b JOIN c ON b.x = c.x) CROSS JOIN d SET p.x = 1")
        );
        // The SET list's commas and a subquery's FROM list are not the table list.
        assert_eq!(
            rewritten("UPDATE a, b SET a.x = 1, b.y = (SELECT 1 FROM c, d)").as_deref(),
            Some("UPDATE a CROSS JOIN b SET a.x = 1, b.y = (SELECT 1 FROM c, d)")
        );
        assert_eq!(rewritten("UPDATE a SET x = 1, y = 2"), None);
        assert_eq!(
            rewritten("UPDATE a JOIN b ON a.i = b.i SET a.x = 1, b.y = 2"),
            None
        );
    }

    #[test]
    fn other_parentheses_are_left_alone() {
        assert_eq!(rewritten("SELECT f(a, b) FROM t WHERE x IN (1, 2)"), None);
        assert_eq!(rewritten("SELECT * FROM (SELECT a, b FROM t) d"), None);
        assert_eq!(
            rewritten("SELECT * FROM a JOIN b USING (x, y) WHERE (1, 2) = (a.x, b.y)"),
            None
        );
        assert_eq!(rewritten("SELECT * FROM t USE INDEX (i, j)"), None);
        assert_eq!(rewritten("INSERT INTO t (a, b) VALUES (1, 2)"), None);
    }
}
