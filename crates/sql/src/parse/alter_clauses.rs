//! ALTER TABLE clauses MySQL has and sqlparser does not read, rewritten on the tokens
//! before parsing into forms it does read:
//! - `DROP KEY k` becomes `DROP INDEX k`, `DROP CHECK c` becomes `DROP CONSTRAINT c`;
//! - `RENAME new` (without TO/AS) becomes `RENAME TO new`;
//! - `RENAME INDEX|KEY a TO b` and table options (`ENGINE [=] x`, `COMMENT [=] 'x'`,
//!   `[DEFAULT] CHARSET|CHARACTER SET|COLLATE [=] x`, `FORCE`, and the like) become one
//!   `SET TBLPROPERTIES ([NAME] = value, …)` clause whose keys carry the internal quote
//!   ([`INTERNAL_QUOTE`]), so a client's own `SET TBLPROPERTIES` is never taken for one
//!   (`statements::alter` refuses those).
//!
//! Clauses are split at top-level commas; a clause this module does not recognise is
//! left as written, and sqlparser reports what it cannot read.

use crate::parse::token_rewrite::INTERNAL_QUOTE;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

/// The key of a rewritten `RENAME INDEX a TO b`; its value is the tuple `('a', 'b')`.
pub const RENAME_INDEX: &str = "RENAME INDEX";

/// Whether `sql` may be an ALTER TABLE statement (the cheap test before tokenizing).
pub fn may_need(sql: &str) -> bool {
    sql.trim_start()
        .get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("alter"))
}

fn word(t: &Token) -> Option<&Word> {
    match t {
        Token::Word(w) => Some(w),
        _ => None,
    }
}

fn is(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

fn wrap(t: Token) -> TokenWithSpan {
    TokenWithSpan::wrap(t)
}

fn internal_key(name: &str) -> Token {
    Token::Word(Word {
        value: name.into(),
        quote_style: Some(INTERNAL_QUOTE),
        keyword: Keyword::NoKeyword,
    })
}

/// A name or value token as a string literal (identifiers and words lose their quotes).
fn as_string(t: &Token) -> Option<Token> {
    match t {
        Token::Word(w) => Some(Token::SingleQuotedString(w.value.clone())),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
            Some(Token::SingleQuotedString(s.clone()))
        }
        Token::Number(n, l) => Some(Token::Number(n.clone(), *l)),
        _ => None,
    }
}

/// Table options that take no value.
const BARE_OPTIONS: [&str; 1] = ["FORCE"];
/// Table options with a value, as their first word.
const VALUE_OPTIONS: [&str; 16] = [
    "ENGINE",
    "COMMENT",
    "CHARSET",
    "COLLATE",
    "ROW_FORMAT",
    "KEY_BLOCK_SIZE",
    "STATS_PERSISTENT",
    "STATS_AUTO_RECALC",
    "STATS_SAMPLE_PAGES",
    "PACK_KEYS",
    "CHECKSUM",
    "DELAY_KEY_WRITE",
    "MAX_ROWS",
    "MIN_ROWS",
    "AVG_ROW_LENGTH",
    "COMPRESSION",
];

/// Reads a run of table options (`ENGINE=InnoDB COMMENT 'x'`) into `[NAME] = value`
/// pairs; None when `toks` is not only table options.
fn table_options(toks: &[&Token]) -> Option<Vec<(String, Token)>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if is(toks[i], "DEFAULT") {
            i += 1;
        }
        let t = toks.get(i)?;
        let name = if is(t, "CHARACTER") && toks.get(i + 1).is_some_and(|n| is(n, "SET")) {
            i += 2;
            "CHARSET".to_string()
        } else if let Some(b) = BARE_OPTIONS.iter().find(|b| is(t, b)) {
            out.push((b.to_string(), Token::Number("1".into(), false)));
            i += 1;
            continue;
        } else if let Some(v) = VALUE_OPTIONS.iter().find(|v| is(t, v)) {
            i += 1;
            v.to_string()
        } else {
            return None;
        };
        if toks.get(i).is_some_and(|t| matches!(t, Token::Eq)) {
            i += 1;
        }
        let value = as_string(toks.get(i)?)?;
        i += 1;
        out.push((name, value));
    }
    (!out.is_empty()).then_some(out)
}

/// The rewritten statement, or None when nothing needed rewriting (or it is not an
/// ALTER TABLE this module understands).
pub fn rewrite(tokens: &[TokenWithSpan]) -> Option<Vec<TokenWithSpan>> {
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| {
            !matches!(
                tokens[i].token,
                Token::Whitespace(_) | Token::SemiColon | Token::EOF
            )
        })
        .collect();
    let tok = |k: usize| &tokens[solid[k]].token;
    if solid.len() < 4 || !is(tok(0), "ALTER") || !is(tok(1), "TABLE") {
        return None;
    }
    let mut start = 3;
    if matches!(tok(3), Token::Period) {
        start = 5;
    }
    if start > solid.len() {
        return None;
    }
    // Clauses: ranges of solid positions between top-level commas.
    let mut clauses: Vec<(usize, usize)> = Vec::new();
    let mut depth = 0i32;
    let mut from = start;
    for k in start..solid.len() {
        match tok(k) {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => {
                clauses.push((from, k));
                from = k + 1;
            }
            _ => {}
        }
    }
    clauses.push((from, solid.len()));
    let mut changed = false;
    let mut pieces: Vec<Vec<Token>> = Vec::new();
    let mut options: Vec<(String, Token)> = Vec::new();
    for &(a, b) in &clauses {
        let toks: Vec<&Token> = (a..b).map(tok).collect();
        let original = || -> Vec<Token> {
            if a >= b {
                return Vec::new();
            }
            tokens[solid[a]..=solid[b - 1]]
                .iter()
                .map(|t| t.token.clone())
                .collect()
        };
        if toks.len() >= 2 && is(toks[0], "DROP") && (is(toks[1], "KEY") || is(toks[1], "CHECK")) {
            let mut t = original();
            if let Some(pos) = t.iter().position(|x| is(x, "KEY")) {
                t[pos] = Token::make_keyword("INDEX");
            } else if let Some(pos) = t.iter().position(|x| is(x, "CHECK")) {
                t[pos] = Token::make_keyword("CONSTRAINT");
            }
            pieces.push(t);
            changed = true;
        } else if toks.len() == 5
            && is(toks[0], "RENAME")
            && (is(toks[1], "INDEX") || is(toks[1], "KEY"))
            && is(toks[3], "TO")
        {
            let (Some(from), Some(to)) = (word(toks[2]), word(toks[4])) else {
                return None;
            };
            options.push((
                RENAME_INDEX.into(),
                Token::SingleQuotedString(format!("{}\u{0}{}", from.value, to.value)),
            ));
            changed = true;
        } else if toks.len() == 2
            && is(toks[0], "RENAME")
            && !["TO", "AS", "COLUMN", "INDEX", "KEY"]
                .iter()
                .any(|w| is(toks[1], w))
        {
            pieces.push(vec![
                Token::make_keyword("RENAME"),
                Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                Token::make_keyword("TO"),
                Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                toks[1].clone(),
            ]);
            changed = true;
        } else if let Some(opts) = table_options(&toks) {
            options.extend(opts);
            changed = true;
        } else {
            pieces.push(original());
        }
    }
    if !changed {
        return None;
    }
    if !options.is_empty() {
        let mut t = vec![
            Token::make_keyword("SET"),
            Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
            Token::make_word("TBLPROPERTIES", None),
            Token::LParen,
        ];
        for (i, (k, v)) in options.into_iter().enumerate() {
            if i > 0 {
                t.push(Token::Comma);
            }
            t.push(internal_key(&k));
            t.push(Token::Eq);
            t.push(v);
        }
        t.push(Token::RParen);
        pieces.push(t);
    }
    let mut out: Vec<TokenWithSpan> = tokens[..solid[start - 1] + 1].to_vec();
    for (i, p) in pieces.into_iter().enumerate() {
        out.push(wrap(if i == 0 {
            Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)
        } else {
            Token::Comma
        }));
        out.extend(p.into_iter().map(wrap));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn rewritten(sql: &str) -> String {
        let t = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap_or_default();
        match rewrite(&t) {
            Some(r) => r.iter().map(|t| t.token.to_string()).collect(),
            None => "unchanged".into(),
        }
    }

    #[test]
    fn clauses_sqlparser_lacks_are_rewritten() {
        assert_eq!(
            rewritten("ALTER TABLE t DROP KEY k"),
            "ALTER TABLE t DROP INDEX k"
        );
        assert_eq!(
            rewritten("ALTER TABLE t DROP CHECK c"),
            "ALTER TABLE t DROP CONSTRAINT c"
        );
        assert_eq!(
            rewritten("ALTER TABLE d.t RENAME u"),
            "ALTER TABLE d.t RENAME TO u"
        );
        assert_eq!(
            rewritten("ALTER TABLE t ENGINE=MyISAM COMMENT 'x', ADD c INT"),
            "ALTER TABLE t ADD c INT,SET TBLPROPERTIES([ENGINE]='MyISAM',[COMMENT]='x')"
        );
        assert_eq!(
            rewritten("ALTER TABLE t DEFAULT CHARACTER SET = utf8mb4"),
            "ALTER TABLE t SET TBLPROPERTIES([CHARSET]='utf8mb4')"
        );
        assert_eq!(
            rewritten("ALTER TABLE t RENAME KEY a TO b"),
            "ALTER TABLE t SET TBLPROPERTIES([RENAME INDEX]='a\u{0}b')"
        );
        assert_eq!(rewritten("ALTER TABLE t ADD COLUMN c INT"), "unchanged");
        assert_eq!(rewritten("ALTER TABLE t RENAME TO u"), "unchanged");
        assert_eq!(rewritten("SELECT 1"), "unchanged");
    }
}
