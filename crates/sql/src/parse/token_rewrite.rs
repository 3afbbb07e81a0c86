//! Token rewrites for MySQL forms sqlparser does not read (or reads with the wrong
//! precedence), applied before parsing:
//! - compound interval units `DAY_HOUR` … `YEAR_MONTH` become `DAY TO HOUR` (and
//!   `SECOND_MICROSECOND`, whose `SECOND TO …` sqlparser refuses, `MICROSECOND TO
//!   SECOND`), which `bind::datetime::interval_unit` maps back;
//! - `EXTRACT(compound_unit FROM e)` becomes an internal call `[extract]('UNIT', e)`;
//! - infix `MOD` becomes `%`;
//! - `CHAR(args USING cs)` becomes an internal call `[char]('cs', args)`;
//! - the prefix `BINARY x` becomes `CAST(x AS BINARY)` around its one operand, since
//!   sqlparser would apply it to the whole comparison after it (`BINARY 'a' = 'A'`);
//! - `TRIM(LEADING|TRAILING|BOTH FROM x)` gets the space it trims by default
//!   (`TRIM(LEADING ' ' FROM x)`), which sqlparser requires written out;
//! - `REGEXP NULL`, `RLIKE NULL` and `LIKE NULL` get their NULL parenthesised, since
//!   sqlparser reads a NULL after those words as the start of `NOT NULL`;
//! - `COMMENT "text"` (a column's, an index's, `COMMENT = "text"` a table's) gets its
//!   double-quoted string as a single-quoted one, which sqlparser's option parsers
//!   require (in the default sql_mode MySQL reads `"…"` as a string there);
//! - the function `INTERVAL(N, N1, N2, …)` becomes an internal call `[interval](…)`,
//!   since sqlparser reads `INTERVAL (` as an interval literal. Only a group with a comma
//!   at its top level is the function: `d + INTERVAL (1 + 1) DAY` stays a literal.
//! - `VISIBLE`, a column's (or an index's) default visibility, is dropped in CREATE and
//!   ALTER statements where it follows a definition and ends it or precedes another
//!   option (sqlparser reads only `INVISIBLE`); a column named `visible` stays;
//! - an index's `INVISIBLE` (`KEY k (a) INVISIBLE`, `CREATE INDEX k ON t (a) INVISIBLE`,
//!   `ADD UNIQUE (a) INVISIBLE`) becomes the index option `USING [INVISIBLE]`
//!   ([`INVISIBLE_INDEX`] with the internal quote), since sqlparser reads `INVISIBLE`
//!   only after a column; a column's `INVISIBLE` stays;
//! - MySQL 8.0.19's `TABLE t` (a query body: at the start, in parentheses, after
//!   UNION/EXCEPT/INTERSECT [ALL|DISTINCT]) becomes `SELECT * FROM t`, which is what it
//!   means (its ORDER BY and LIMIT follow unchanged);
//! - `CAST(x AS CHAR[(n)] CHARACTER SET cs)` (or `CHARSET cs`) becomes
//!   `CONVERT(x, CHAR[(n)] CHARACTER SET cs)`, the form sqlparser reads with a character
//!   set;
//! - `CHARSET x`, MySQL's synonym of `CHARACTER SET x` (a column's), becomes
//!   `CHARACTER SET x`; sqlparser reads the synonym only as a
//!   table option. `CHARSET(expr)` the function, `CHARSET = x` and `SHOW CHARSET` stay.
//!
//! Internal names carry a quote style no client can write ([`INTERNAL_QUOTE`]).
//! These words are reserved in MySQL, so unquoted they are never names.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

/// The quote style the parser's rewrites give the internal function names they create
/// (`EXTRACT` of a compound unit, `CHAR(… USING …)`): a quote no client can write, so a
/// user's function of the same name is never taken for one of them.
pub const INTERNAL_QUOTE: char = '[';

const COMPOUND: [(&str, &str, &str); 11] = [
    ("DAY_HOUR", "DAY", "HOUR"),
    ("DAY_MINUTE", "DAY", "MINUTE"),
    ("DAY_SECOND", "DAY", "SECOND"),
    ("DAY_MICROSECOND", "DAY", "MICROSECOND"),
    ("HOUR_MINUTE", "HOUR", "MINUTE"),
    ("HOUR_SECOND", "HOUR", "SECOND"),
    ("HOUR_MICROSECOND", "HOUR", "MICROSECOND"),
    ("MINUTE_SECOND", "MINUTE", "SECOND"),
    ("MINUTE_MICROSECOND", "MINUTE", "MICROSECOND"),
    ("SECOND_MICROSECOND", "MICROSECOND", "SECOND"),
    ("YEAR_MONTH", "YEAR", "MONTH"),
];

/// The internal index type an index's `INVISIBLE` becomes (`USING [INVISIBLE]`).
pub const INVISIBLE_INDEX: &str = "INVISIBLE";

/// Whether position `i` is among a CREATE or ALTER statement's definitions: the
/// statement starts with one of them and no SELECT comes before `i`.
fn in_definitions(tokens: &[TokenWithSpan], i: usize) -> bool {
    let first = next_solid(tokens, 0).map(|f| &tokens[f].token);
    let ddl = first.is_some_and(|f| word_is(f, "CREATE") || word_is(f, "ALTER"));
    ddl && !tokens[..i].iter().any(|t| word_is(&t.token, "SELECT"))
}

/// Words that start an index's definition (after `ADD` in ALTER TABLE).
const INDEX_START: [&str; 7] = [
    "INDEX",
    "KEY",
    "UNIQUE",
    "PRIMARY",
    "FULLTEXT",
    "SPATIAL",
    "CONSTRAINT",
];

/// Whether `INVISIBLE` at `i` is an index's visibility, not a column's: in a CREATE or
/// ALTER before any SELECT, the definition it ends (back to the `,` or `(` that opens it
/// at its depth) is an index's, or the statement is CREATE [UNIQUE] INDEX.
fn index_visibility_keyword(tokens: &[TokenWithSpan], i: usize) -> bool {
    if !in_definitions(tokens, i) {
        return false;
    }
    let mut depth = 0i32;
    let mut start = 0;
    for k in (0..i).rev() {
        match tokens[k].token {
            Token::RParen => depth += 1,
            Token::LParen if depth == 0 => {
                start = k + 1;
                break;
            }
            Token::LParen => depth -= 1,
            Token::Comma if depth == 0 => {
                start = k + 1;
                break;
            }
            _ => {}
        }
    }
    let solid: Vec<&Token> = tokens[start..i]
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    // The visibility follows the key's column list: before it, `INVISIBLE` is the
    // index's name (`KEY invisible (a)`, `CREATE INDEX invisible ON t (a)`).
    if !solid.contains(&&Token::RParen) {
        return false;
    }
    let mut words = solid.as_slice();
    if let [c, rest @ ..] = words {
        if word_is(c, "CREATE") {
            return rest.first().is_some_and(|t| {
                ["UNIQUE", "FULLTEXT", "SPATIAL", "INDEX"]
                    .iter()
                    .any(|k| word_is(t, k))
            });
        }
        if word_is(c, "ALTER") {
            // Past `[IGNORE] TABLE name` (or `db.name`).
            let Some(table) = rest.iter().position(|t| word_is(t, "TABLE")) else {
                return false;
            };
            let mut k = table + 2;
            while rest.get(k) == Some(&&Token::Period) {
                k += 2;
            }
            words = &rest[k.min(rest.len())..];
        }
    }
    if let [add, rest @ ..] = words {
        if word_is(add, "ADD") {
            words = rest;
        }
    }
    words
        .first()
        .is_some_and(|t| INDEX_START.iter().any(|k| word_is(t, k)))
}

/// Words after which `VISIBLE` is a name (`ADD visible INT`, `(visible)`), not the
/// visibility keyword.
const NAME_BEFORE: [&str; 20] = [
    "ADD",
    "COLUMN",
    "CHANGE",
    "MODIFY",
    "DROP",
    "ALTER",
    "TO",
    "AFTER",
    "AS",
    "TABLE",
    "BY",
    "ON",
    "SET",
    "KEY",
    "INDEX",
    "FIRST",
    "RENAME",
    "REFERENCES",
    "CONSTRAINT",
    "VIEW",
];

/// Words that may follow the visibility keyword in a column or index definition.
const OPTION_AFTER: [&str; 22] = [
    "NOT",
    "NULL",
    "DEFAULT",
    "COMMENT",
    "PRIMARY",
    "UNIQUE",
    "KEY",
    "AUTO_INCREMENT",
    "COLLATE",
    "CHARACTER",
    "CHARSET",
    "CHECK",
    "REFERENCES",
    "INVISIBLE",
    "GENERATED",
    "AS",
    "ON",
    "FIRST",
    "AFTER",
    "CONSTRAINT",
    "STORAGE",
    "COLUMN_FORMAT",
];

/// Whether `VISIBLE` at `i` is the visibility keyword of a definition: unquoted, in a
/// CREATE or ALTER before any SELECT, after a definition's text and before its end or
/// another option.
fn visibility_keyword(tokens: &[TokenWithSpan], i: usize, prev: Option<&Token>) -> bool {
    if !in_definitions(tokens, i) {
        return false;
    }
    let after_name = match prev {
        None | Some(Token::LParen | Token::Comma | Token::Period) => true,
        Some(p) => NAME_BEFORE.iter().any(|w| word_is(p, w)),
    };
    let next = next_solid(tokens, i + 1).map(|n| &tokens[n].token);
    let ends = match next {
        None | Some(Token::Comma | Token::RParen | Token::SemiColon | Token::EOF) => true,
        Some(n) => OPTION_AFTER.iter().any(|w| word_is(n, w)),
    };
    !after_name && ends
}

/// Whether the text may hold one of the rewritten forms (a cheap test before
/// tokenizing twice).
pub fn may_need(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    [
        "mod", "char", "binary", "day_", "hour_", "minute_", "second_", "year_", "trim", "regexp",
        "rlike", "like", "interval", "comment", "charset", "visible", "table",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

fn word_is(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

fn internal(name: &str) -> Token {
    Token::Word(Word {
        value: name.into(),
        quote_style: Some(INTERNAL_QUOTE),
        keyword: Keyword::NoKeyword,
    })
}

fn wrap(t: Token) -> TokenWithSpan {
    TokenWithSpan::wrap(t)
}

/// The index just past the group opened by the `(` at `open` (None if unbalanced).
fn group_end(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether the group `open..end` (its parentheses included) has a comma outside any
/// inner parentheses.
fn top_level_comma(tokens: &[TokenWithSpan], open: usize, end: usize) -> bool {
    let mut depth = 0i32;
    for t in &tokens[open..end] {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 1 => return true,
            _ => {}
        }
    }
    false
}

fn next_solid(tokens: &[TokenWithSpan], from: usize) -> Option<usize> {
    (from..tokens.len()).find(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
}

/// Tokens after which an expression starts, where a `BINARY` is the operator.
fn starts_operand(t: Option<&Token>) -> bool {
    let Some(t) = t else {
        return false;
    };
    match t {
        Token::LParen
        | Token::Comma
        | Token::Eq
        | Token::DoubleEq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Spaceship
        | Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::Mod => true,
        Token::Word(w) if w.quote_style.is_none() => [
            "SELECT", "WHERE", "AND", "OR", "NOT", "XOR", "ON", "HAVING", "WHEN", "THEN", "ELSE",
            "BY", "DISTINCT", "BETWEEN", "IN", "IS",
        ]
        .iter()
        .any(|k| w.value.eq_ignore_ascii_case(k)),
        _ => false,
    }
}

/// The end (exclusive) of the single operand starting at `i`, or None when it is not
/// one of the plain forms (a literal, a possibly-qualified name or call, a group).
fn operand_end(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    match &tokens.get(i)?.token {
        Token::LParen => group_end(tokens, i),
        Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::Number(..)
        | Token::HexStringLiteral(_)
        | Token::NationalStringLiteral(_) => Some(i + 1),
        Token::Word(w) if w.quote_style.is_some() || w.keyword == Keyword::NoKeyword => {
            let mut end = i + 1;
            while matches!(tokens.get(end).map(|t| &t.token), Some(Token::Period))
                && matches!(tokens.get(end + 1).map(|t| &t.token), Some(Token::Word(_)))
            {
                end += 2;
            }
            if matches!(tokens.get(end).map(|t| &t.token), Some(Token::LParen)) {
                end = group_end(tokens, end)?;
            }
            Some(end)
        }
        _ => None,
    }
}

/// The position of the `AS` in `CAST ( x AS CHAR [(n)] CHARACTER SET|CHARSET cs )` whose
/// `(` is at `open`: the cast that becomes `CONVERT(x, CHAR … CHARACTER SET cs)`.
fn cast_with_charset(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let end = group_end(tokens, open)?;
    let mut depth = 0i32;
    let mut as_at = None;
    for (k, t) in tokens.iter().enumerate().take(end).skip(open) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            tok if depth == 1 && word_is(tok, "AS") => as_at = Some(k),
            _ => {}
        }
    }
    let as_at = as_at?;
    let ty = next_solid(tokens, as_at + 1)?;
    if !word_is(&tokens[ty].token, "CHAR") {
        return None;
    }
    let mut after = next_solid(tokens, ty + 1)?;
    if tokens[after].token == Token::LParen {
        after = next_solid(tokens, group_end(tokens, after)?)?;
    }
    let t = &tokens[after].token;
    (word_is(t, "CHARACTER") || word_is(t, "CHARSET")).then_some(as_at)
}

/// Applies the rewrites; None when nothing changed.
pub fn rewrite(tokens: &[TokenWithSpan]) -> Option<Vec<TokenWithSpan>> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len() + 8);
    let mut changed = false;
    // Tokens to drop (CHAR's `USING cs`) and to replace (`FROM` after EXTRACT's unit).
    let mut skip = vec![false; tokens.len()];
    let mut comma_at = vec![false; tokens.len()];
    // Where a BINARY operand ends: emit `AS BINARY )` there.
    let mut close_binary = vec![0usize; tokens.len() + 1];
    let last_solid = |out: &Vec<TokenWithSpan>| {
        out.iter()
            .rev()
            .find(|t| !matches!(t.token, Token::Whitespace(_)))
            .map(|t| t.token.clone())
    };
    let mut i = 0;
    while i < tokens.len() {
        for _ in 0..close_binary[i] {
            out.push(wrap(Token::make_keyword("AS")));
            out.push(wrap(Token::make_keyword("BINARY")));
            out.push(wrap(Token::RParen));
        }
        if skip[i] {
            i += 1;
            continue;
        }
        if comma_at[i] {
            out.push(wrap(Token::Comma));
            i += 1;
            continue;
        }
        let t = &tokens[i];
        if let Token::Word(w) = &t.token {
            if w.quote_style.is_none() {
                let up = w.value.to_ascii_uppercase();
                if let Some((name, a, b)) = COMPOUND.iter().find(|c| c.0 == up) {
                    changed = true;
                    let prev = last_solid(&out);
                    let before_prev = out
                        .iter()
                        .rev()
                        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
                        .nth(1)
                        .map(|t| t.token.clone());
                    let from = next_solid(tokens, i + 1);
                    let in_extract = prev == Some(Token::LParen)
                        && before_prev.as_ref().is_some_and(|p| word_is(p, "EXTRACT"))
                        && from.is_some_and(|f| word_is(&tokens[f].token, "FROM"));
                    if let (true, Some(f)) = (in_extract, from) {
                        // Replace `EXTRACT (` already emitted by `[extract] (`.
                        let lp = out.iter().rposition(|t| t.token == Token::LParen);
                        if let Some(lp) = lp {
                            if let Some(ex) =
                                out[..lp].iter().rposition(|t| word_is(&t.token, "EXTRACT"))
                            {
                                out[ex] = wrap(internal("extract"));
                            }
                        }
                        out.push(wrap(Token::SingleQuotedString((*name).into())));
                        comma_at[f] = true;
                    } else {
                        out.push(wrap(Token::make_keyword(a)));
                        out.push(wrap(Token::Whitespace(
                            sqlparser::tokenizer::Whitespace::Space,
                        )));
                        out.push(wrap(Token::make_keyword("TO")));
                        out.push(wrap(Token::Whitespace(
                            sqlparser::tokenizer::Whitespace::Space,
                        )));
                        out.push(wrap(Token::make_keyword(b)));
                    }
                    i += 1;
                    continue;
                }
                let next = next_solid(tokens, i + 1);
                let next_tok = next.map(|n| &tokens[n].token);
                if up == "MOD" && next_tok != Some(&Token::LParen) && last_solid(&out).is_some() {
                    changed = true;
                    out.push(wrap(Token::Mod));
                    i += 1;
                    continue;
                }
                if up == "TABLE"
                    && matches!(next_tok, Some(Token::Word(_)))
                    && match last_solid(&out) {
                        None | Some(Token::LParen) => true,
                        Some(p) => ["UNION", "EXCEPT", "INTERSECT", "ALL", "DISTINCT"]
                            .iter()
                            .any(|w| word_is(&p, w)),
                    }
                {
                    changed = true;
                    for (k, word) in ["SELECT", "*", "FROM"].iter().enumerate() {
                        if k > 0 {
                            out.push(wrap(Token::Whitespace(
                                sqlparser::tokenizer::Whitespace::Space,
                            )));
                        }
                        out.push(wrap(if *word == "*" {
                            Token::Mul
                        } else {
                            Token::make_keyword(word)
                        }));
                    }
                    i += 1;
                    continue;
                }
                if up == "CAST" && next_tok == Some(&Token::LParen) {
                    if let Some(as_at) = next.and_then(|open| cast_with_charset(tokens, open)) {
                        changed = true;
                        comma_at[as_at] = true;
                        out.push(wrap(Token::make_keyword("CONVERT")));
                        i += 1;
                        continue;
                    }
                }
                if up == "INVISIBLE" && index_visibility_keyword(tokens, i) {
                    changed = true;
                    out.push(wrap(Token::make_keyword("USING")));
                    out.push(wrap(Token::Whitespace(
                        sqlparser::tokenizer::Whitespace::Space,
                    )));
                    out.push(wrap(internal(INVISIBLE_INDEX)));
                    i += 1;
                    continue;
                }
                if up == "VISIBLE" && visibility_keyword(tokens, i, last_solid(&out).as_ref()) {
                    changed = true;
                    i += 1;
                    continue;
                }
                if up == "CHARSET"
                    && matches!(
                        next_tok,
                        Some(Token::Word(_) | Token::SingleQuotedString(_))
                    )
                    && !last_solid(&out).is_some_and(|p| word_is(&p, "SHOW"))
                {
                    changed = true;
                    out.push(wrap(Token::make_keyword("CHARACTER")));
                    out.push(wrap(Token::Whitespace(
                        sqlparser::tokenizer::Whitespace::Space,
                    )));
                    out.push(wrap(Token::make_keyword("SET")));
                    i += 1;
                    continue;
                }
                if up == "COMMENT" {
                    // The string may follow an `=` (a table option).
                    let at = match next_tok {
                        Some(Token::Eq) => next.and_then(|n| next_solid(tokens, n + 1)),
                        _ => next,
                    };
                    let text = at.and_then(|a| match &tokens[a].token {
                        Token::DoubleQuotedString(v) => Some(v.clone()),
                        Token::Word(w) if w.quote_style == Some('"') => Some(w.value.clone()),
                        _ => None,
                    });
                    if let (Some(a), Some(text)) = (at, text) {
                        changed = true;
                        out.extend(tokens[i..a].iter().cloned());
                        out.push(wrap(Token::SingleQuotedString(text)));
                        i = a + 1;
                        continue;
                    }
                }
                if up == "INTERVAL" && next_tok == Some(&Token::LParen) {
                    let open = next.unwrap_or(i + 1);
                    if group_end(tokens, open).is_some_and(|end| top_level_comma(tokens, open, end))
                    {
                        changed = true;
                        out.push(wrap(internal("interval")));
                        i += 1;
                        continue;
                    }
                }
                if up == "CHAR" && next_tok == Some(&Token::LParen) {
                    if let Some(open) = next {
                        if let Some(end) = group_end(tokens, open) {
                            // `… USING cs )`: the last two solid tokens before `)`.
                            let solid: Vec<usize> = (open + 1..end - 1)
                                .filter(|&k| !matches!(tokens[k].token, Token::Whitespace(_)))
                                .collect();
                            if let [.., u, cs] = solid.as_slice() {
                                if word_is(&tokens[*u].token, "USING") {
                                    if let Token::Word(csw) = &tokens[*cs].token {
                                        changed = true;
                                        out.push(wrap(internal("char")));
                                        out.push(wrap(Token::LParen));
                                        out.push(wrap(Token::SingleQuotedString(
                                            csw.value.clone(),
                                        )));
                                        out.push(wrap(Token::Comma));
                                        skip[open] = true;
                                        skip[*u] = true;
                                        skip[*cs] = true;
                                        i += 1;
                                        continue;
                                    }
                                }
                            }
                        }
                    }
                }
                let trim_side = ["LEADING", "TRAILING", "BOTH"].contains(&up.as_str());
                if trim_side
                    && next_tok.is_some_and(|t| word_is(t, "FROM"))
                    && last_solid(&out) == Some(Token::LParen)
                {
                    // `TRIM(LEADING FROM x)`: the default remainder, a space.
                    changed = true;
                    out.push(t.clone());
                    out.push(wrap(Token::Whitespace(
                        sqlparser::tokenizer::Whitespace::Space,
                    )));
                    out.push(wrap(Token::SingleQuotedString(" ".into())));
                    i += 1;
                    continue;
                }
                if ["REGEXP", "RLIKE", "LIKE"].contains(&up.as_str())
                    && next_tok.is_some_and(|t| word_is(t, "NULL"))
                {
                    if let Some(n) = next {
                        changed = true;
                        out.push(t.clone());
                        out.push(wrap(Token::LParen));
                        out.push(tokens[n].clone());
                        out.push(wrap(Token::RParen));
                        i = n + 1;
                        continue;
                    }
                }
                if up == "BINARY" && starts_operand(last_solid(&out).as_ref()) {
                    if let Some(n) = next {
                        if let Some(end) = operand_end(tokens, n) {
                            changed = true;
                            out.push(wrap(Token::make_keyword("CAST")));
                            out.push(wrap(Token::LParen));
                            close_binary[end] += 1;
                            i = n;
                            continue;
                        }
                    }
                }
            }
        }
        out.push(t.clone());
        i += 1;
    }
    for _ in 0..close_binary[tokens.len()] {
        out.push(wrap(Token::make_keyword("AS")));
        out.push(wrap(Token::make_keyword("BINARY")));
        out.push(wrap(Token::RParen));
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    fn sql(s: &str) -> String {
        crate::parse::parse(s).expect(s)[0].to_string()
    }

    #[test]
    fn an_index_invisible_becomes_an_index_option_and_a_columns_stays() {
        assert_eq!(
            sql("CREATE TABLE t (a INT INVISIBLE, b ENUM('x','y') INVISIBLE, KEY k (a) INVISIBLE, UNIQUE (b) COMMENT 'c' INVISIBLE)"),
            "CREATE TABLE t (a INT INVISIBLE, b ENUM('x', 'y') INVISIBLE, KEY k (a) USING [INVISIBLE], UNIQUE (b) COMMENT 'c' USING [INVISIBLE])"
        );
        assert_eq!(
            sql("CREATE UNIQUE INDEX k ON d.t (a) INVISIBLE"),
            "CREATE UNIQUE INDEX k ON d.t(a) USING [INVISIBLE]"
        );
        assert_eq!(
            sql("ALTER TABLE d.t ADD INDEX k (a) INVISIBLE, ADD COLUMN c INT INVISIBLE"),
            "ALTER TABLE d.t ADD INDEX k (a) USING [INVISIBLE], ADD COLUMN c INT INVISIBLE"
        );
        // An index or a column named `invisible`, quoted or not, is a name.
        assert_eq!(
            sql("CREATE INDEX invisible ON t (a)"),
            "CREATE INDEX invisible ON t(a)"
        );
        assert_eq!(
            sql("CREATE TABLE t (invisible INT, KEY invisible (invisible) INVISIBLE)"),
            "CREATE TABLE t (invisible INT, KEY invisible (invisible) USING [INVISIBLE])"
        );
        assert_eq!(
            sql("ALTER TABLE t ADD INDEX invisible (a)"),
            "ALTER TABLE t ADD INDEX invisible (a)"
        );
        assert_eq!(
            sql("CREATE TABLE t (`invisible` INT, KEY (`invisible`))"),
            "CREATE TABLE t (`invisible` INT, KEY (`invisible`))"
        );
    }

    #[test]
    fn forms_are_rewritten() {
        assert_eq!(sql("SELECT 7 MOD 3"), "SELECT 7 % 3");
        assert_eq!(
            sql("CREATE TABLE t (a VARCHAR(5) CHARSET latin1)"),
            "CREATE TABLE t (a VARCHAR(5) CHARACTER SET latin1)"
        );
        assert_eq!(sql("SELECT CHARSET(x)"), "SELECT CHARSET(x)");
        assert_eq!(
            sql("SELECT CAST(a + (1) AS CHAR(3) CHARSET binary), CAST(b AS CHAR CHARACTER SET utf8mb4), CAST(c AS CHAR(2))"),
            "SELECT CONVERT(a + (1), CHAR(3) CHARACTER SET binary), CONVERT(b, CHAR CHARACTER SET utf8mb4), CAST(c AS CHAR(2))"
        );
        assert_eq!(
            sql("TABLE t ORDER BY a LIMIT 2"),
            "SELECT * FROM t ORDER BY a LIMIT 2"
        );
        assert_eq!(
            sql("SELECT a FROM u UNION ALL TABLE t"),
            "SELECT a FROM u UNION ALL SELECT * FROM t"
        );
        assert_eq!(
            sql("SELECT * FROM u WHERE a IN (TABLE t)"),
            "SELECT * FROM u WHERE a IN (SELECT * FROM t)"
        );
        assert_eq!(sql("CREATE TABLE t (a INT)"), "CREATE TABLE t (a INT)");
        assert_eq!(
            sql("CREATE TABLE t (a INT VISIBLE, visible INT NOT NULL VISIBLE)"),
            "CREATE TABLE t (a INT, visible INT NOT NULL)"
        );
        assert_eq!(
            sql("CREATE TABLE t (a VARCHAR(3) VISIBLE COMMENT 'x', b INT)"),
            "CREATE TABLE t (a VARCHAR(3) COMMENT 'x', b INT)"
        );
        assert_eq!(
            sql("ALTER TABLE t ADD visible INT, MODIFY visible INT VISIBLE FIRST"),
            "ALTER TABLE t ADD visible INT, MODIFY COLUMN visible INT FIRST"
        );
        assert_eq!(
            sql("SELECT visible FROM t WHERE visible = 1"),
            "SELECT visible FROM t WHERE visible = 1"
        );
        assert_eq!(
            sql("CREATE TABLE t2 AS SELECT a visible, b FROM t"),
            "CREATE TABLE t2 AS SELECT a AS visible, b FROM t"
        );
        assert_eq!(
            sql("CREATE TABLE t (a INT) DEFAULT CHARSET = utf8mb4"),
            "CREATE TABLE t (a INT) DEFAULT CHARSET = utf8mb4"
        );
        assert_eq!(sql("SELECT MOD(7, 3)"), "SELECT MOD(7, 3)");
        assert!(sql("SELECT d + INTERVAL '1:2' HOUR_MINUTE").contains("HOUR TO MINUTE"));
        assert!(sql("SELECT EXTRACT(DAY_HOUR FROM d)").contains("'DAY_HOUR', d"));
        assert!(sql("SELECT EXTRACT(YEAR FROM d)").contains("EXTRACT(YEAR FROM d)"));
        assert!(sql("SELECT CHAR(65, 66 USING utf8mb4)").contains("'utf8mb4', 65, 66"));
        assert_eq!(sql("SELECT CHAR(65)"), "SELECT CHAR(65)");
        assert!(sql("SELECT INTERVAL(5, 1, (2), 7)").contains("[interval](5, 1, (2), 7)"));
        let created = sql(r#"CREATE TABLE t (a INT COMMENT "x 'y'") COMMENT = "t""#);
        assert!(created.contains("COMMENT 'x ''y'''"), "{created}");
        assert_eq!(
            sql("SELECT comment FROM t WHERE comment = 1"),
            "SELECT comment FROM t WHERE comment = 1"
        );
        assert!(sql("SELECT d + INTERVAL (1 + 1) DAY").contains("INTERVAL (1 + 1) DAY"));
        assert!(sql("SELECT d + INTERVAL (f(1, 2)) DAY").contains("INTERVAL (f(1, 2)) DAY"));
        assert_eq!(
            sql("SELECT BINARY 'a' = 'A'"),
            "SELECT CAST('a' AS BINARY) = 'A'"
        );
        assert_eq!(
            sql("SELECT * FROM t WHERE BINARY t.c = 'A'"),
            "SELECT * FROM t WHERE CAST(t.c AS BINARY) = 'A'"
        );
        assert_eq!(sql("SELECT CAST(x AS BINARY)"), "SELECT CAST(x AS BINARY)");
        assert_eq!(
            sql("SELECT TRIM(LEADING FROM x)"),
            "SELECT TRIM(LEADING ' ' FROM x)"
        );
        assert_eq!(
            sql("SELECT TRIM(BOTH 'a' FROM x)"),
            "SELECT TRIM(BOTH 'a' FROM x)"
        );
        assert_eq!(sql("SELECT 'a' REGEXP NULL"), "SELECT 'a' REGEXP (NULL)");
        assert_eq!(
            sql("SELECT 'a' NOT LIKE NULL"),
            "SELECT 'a' NOT LIKE (NULL)"
        );
        assert_eq!(sql("SELECT a IS NOT NULL"), "SELECT a IS NOT NULL");
        // Inside strings nothing changes.
        assert_eq!(sql("SELECT 'a MOD b'"), "SELECT 'a MOD b'");
    }
}
