//! The targets of a multi-table DELETE may carry `.*`, as MySQL allows for
//! compatibility with Access: `DELETE t1.*, t2.* FROM t1 JOIN t2 …` and
//! `DELETE FROM t1.*, t2.* USING t1 JOIN t2 …`. sqlparser reads neither, so the `.*`
//! after each target name is dropped on the tokens before parsing; the statement then
//! means what it means without them. Only the target list is touched: a `t.*` in a
//! subquery's select list after FROM or USING stays as written.

use sqlparser::tokenizer::{Token, TokenWithSpan};

/// Whether `sql` may be a DELETE with `.*` targets (the cheap test before tokenizing).
pub fn may_need(sql: &str) -> bool {
    sql.trim_start()
        .get(..6)
        .is_some_and(|s| s.eq_ignore_ascii_case("delete"))
        && sql.contains('*')
}

fn is(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

fn solid(t: &Token) -> bool {
    !matches!(t, Token::Whitespace(_))
}

/// The tokens without the `.*` of each target, or None when nothing changes.
pub fn rewrite(tokens: &[TokenWithSpan]) -> Option<Vec<TokenWithSpan>> {
    let solid_at: Vec<usize> = (0..tokens.len())
        .filter(|&i| solid(&tokens[i].token))
        .collect();
    let word = |k: usize| solid_at.get(k).map(|&i| &tokens[i].token);
    if !word(0).is_some_and(|t| is(t, "DELETE")) {
        return None;
    }
    let mut k = 1;
    while word(k).is_some_and(|t| is(t, "LOW_PRIORITY") || is(t, "QUICK") || is(t, "IGNORE")) {
        k += 1;
    }
    // The target list runs to FROM (`DELETE t1.* FROM …`) or, after FROM, to USING
    // (`DELETE FROM t1.* USING …`); a single-table DELETE has none.
    let (start, end_word) = match word(k) {
        Some(t) if is(t, "FROM") => (k + 1, "USING"),
        Some(_) => (k, "FROM"),
        None => return None,
    };
    let mut end = start;
    while let Some(t) = word(end) {
        if is(t, end_word) {
            break;
        }
        if matches!(t, Token::LParen | Token::SemiColon) {
            return None;
        }
        end += 1;
    }
    word(end)?;
    let mut drop = vec![false; tokens.len()];
    let mut changed = false;
    for j in start + 1..end.saturating_sub(1) {
        let (prev, dot, star) = (solid_at[j - 1], solid_at[j], solid_at[j + 1]);
        if matches!(tokens[prev].token, Token::Word(_))
            && tokens[dot].token == Token::Period
            && tokens[star].token == Token::Mul
        {
            drop[dot] = true;
            drop[star] = true;
            changed = true;
        }
    }
    changed.then(|| {
        tokens
            .iter()
            .zip(&drop)
            .filter(|(_, d)| !**d)
            .map(|(t, _)| t.clone())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn run(sql: &str) -> Option<String> {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .ok()?;
        rewrite(&tokens).map(|t| t.iter().map(|t| t.token.to_string()).collect())
    }

    #[test]
    fn targets_lose_their_star() {
        assert_eq!(
            run("DELETE t.* FROM t JOIN u ON t.id = u.id").as_deref(),
            Some("DELETE t FROM t JOIN u ON t.id = u.id")
        );
        assert_eq!(
            run("DELETE QUICK db.t.*, u.* FROM t, u").as_deref(),
            Some("DELETE QUICK db.t, u FROM t, u")
        );
        assert_eq!(
            run("DELETE FROM t.* USING t JOIN u").as_deref(),
            Some("DELETE FROM t USING t JOIN u")
        );
    }

    #[test]
    fn other_stars_stay() {
        // No target list with a star, a single-table DELETE, a star past FROM.
        assert_eq!(run("DELETE t FROM t JOIN u ON t.id = u.id"), None);
        assert_eq!(run("DELETE FROM t WHERE a * 2 > 1"), None);
        assert_eq!(run("DELETE t FROM t WHERE id IN (SELECT u.* FROM u)"), None);
        assert_eq!(run("SELECT t.* FROM t"), None);
    }
}
