//! ALTER TABLE clauses MySQL has and sqlparser does not read, rewritten on the tokens
//! before parsing into forms it does read:
//! - `DROP KEY k` becomes `DROP INDEX k`;
//! - `RENAME new` (without TO/AS) becomes `RENAME TO new`;
//! - `ADD [COLUMN] (c1 type, c2 type, INDEX (c1))` becomes one `ADD` clause per element;
//! - `RENAME INDEX|KEY a TO b`, `DROP CHECK c`, `ALTER CHECK|CONSTRAINT c [NOT] ENFORCED`,
//!   `ALTER [COLUMN] c SET VISIBLE|INVISIBLE`, `ALTER INDEX i VISIBLE|INVISIBLE`,
//!   `CONVERT TO CHARACTER SET x [COLLATE y]` and table options (`ENGINE [=] x`,
//!   `COMMENT [=] 'x'`, `[DEFAULT] CHARSET|CHARACTER SET|COLLATE [=] x`, `FORCE`, and the
//!   like) become one `SET TBLPROPERTIES ([NAME] = value, …)` clause whose keys carry the
//!   internal quote ([`INTERNAL_QUOTE`]), so a client's own `SET TBLPROPERTIES` is never
//!   taken for one (`statements::alter` refuses those).
//!
//! Clauses are split at top-level commas; a clause this module does not recognise is
//! left as written, and sqlparser reports what it cannot read.
//!
//! `ALTER DATABASE|SCHEMA [name] [DEFAULT] CHARACTER SET [=] x [DEFAULT] COLLATE [=] y`
//! becomes `ALTER SCHEMA name SET OPTIONS ([CHARSET] = 'x', [COLLATE] = 'y')` (a form
//! sqlparser reads for another dialect), the name [`CURRENT_DATABASE`] when none is
//! given; `statements::ddl` reads it back.

use crate::parse::token_rewrite::INTERNAL_QUOTE;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

/// The key of a rewritten `RENAME INDEX a TO b`; its value is `'a\0b'`.
pub const RENAME_INDEX: &str = "RENAME INDEX";
/// The key of a rewritten `DROP CHECK c`; its value is `'c'`.
pub const DROP_CHECK: &str = "DROP CHECK";
/// The key of a rewritten `ALTER CHECK c [NOT] ENFORCED`; its value is `'c\0ENFORCED'`
/// or `'c\0NOT ENFORCED'`.
pub const ALTER_CHECK: &str = "ALTER CHECK";
/// The key of a rewritten `ALTER CONSTRAINT c [NOT] ENFORCED`, valued as [`ALTER_CHECK`].
pub const ALTER_CONSTRAINT: &str = "ALTER CONSTRAINT";
/// The key of a rewritten `ALTER [COLUMN] c SET VISIBLE|INVISIBLE`; its value is
/// `'c\0VISIBLE'` or `'c\0INVISIBLE'`.
pub const COLUMN_VISIBILITY: &str = "COLUMN VISIBILITY";
/// The key of a rewritten `ALTER INDEX i VISIBLE|INVISIBLE`; its value is
/// `'i\0VISIBLE'` or `'i\0INVISIBLE'`.
pub const INDEX_VISIBILITY: &str = "INDEX VISIBILITY";
/// The key of a rewritten `CONVERT TO CHARACTER SET x [COLLATE y]`; its value is
/// `'x\0y'` (`'x\0'` without COLLATE; x may be `DEFAULT`).
pub const CONVERT_TO: &str = "CONVERT TO";
/// The schema name ALTER DATABASE without a name is given (with the internal quote):
/// the session's current database.
pub const CURRENT_DATABASE: &str = "CURRENT DATABASE";

/// The database a rewritten ALTER DATABASE names: its name, or `current` for the
/// [`CURRENT_DATABASE`] placeholder (None without one).
pub fn altered_database(a: &sqlparser::ast::AlterSchema, current: Option<&str>) -> Option<String> {
    let [p] = a.name.0.as_slice() else {
        return None;
    };
    let name = p.as_ident()?;
    if name.quote_style == Some(INTERNAL_QUOTE) && name.value == CURRENT_DATABASE {
        current.map(str::to_string)
    } else {
        Some(name.value.clone())
    }
}

/// The text of a rewritten option's value (a string loses its quotes).
fn option_text(value: &sqlparser::ast::Expr) -> String {
    use sqlparser::ast::{Expr, Value};
    match value {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

/// The options this module wrote (`SET TBLPROPERTIES (…)`, `SET OPTIONS (…)`) as
/// (key, value text) pairs; a client's own such clause, whose keys lack the internal
/// quote, is 1235 naming `what`.
pub fn internal_options(
    opts: &[sqlparser::ast::SqlOption],
    what: &str,
) -> strata_types::Result<Vec<(String, String)>> {
    opts.iter()
        .map(|o| match o {
            sqlparser::ast::SqlOption::KeyValue { key, value }
                if key.quote_style == Some(INTERNAL_QUOTE) =>
            {
                Ok((key.value.clone(), option_text(value)))
            }
            _ => Err(strata_types::Error::NotSupported(what.to_string())),
        })
        .collect()
}

/// Appends `(KEY = value, …)` with internal keys: the option list of a rewritten clause.
fn push_options(t: &mut Vec<Token>, opts: Vec<(String, Token)>) {
    t.push(Token::LParen);
    for (i, (k, v)) in opts.into_iter().enumerate() {
        if i > 0 {
            t.push(Token::Comma);
        }
        t.push(internal_key(&k));
        t.push(Token::Eq);
        t.push(v);
    }
    t.push(Token::RParen);
}

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
/// Table options with a value, as their first word: these and the metadata-only ones
/// `strata_types::table_options` owns (ROW_FORMAT, STATS_PERSISTENT, …).
const VALUE_OPTIONS: [&str; 4] = ["ENGINE", "COMMENT", "CHARSET", "COLLATE"];

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
        } else if let Some(v) = VALUE_OPTIONS
            .iter()
            .chain(strata_types::table_options::TABLE_OPTION_NAMES.iter())
            .find(|v| is(t, v))
        {
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

/// A name token's text (a word, quoted or not, or a string).
fn name_text(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) => Some(w.value.clone()),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Some(s.clone()),
        _ => None,
    }
}

/// `DROP CHECK c` as its option.
fn drop_check(toks: &[&Token]) -> Option<(String, Token)> {
    if toks.len() != 3 || !is(toks[0], "DROP") || !is(toks[1], "CHECK") {
        return None;
    }
    let name = word(toks[2])?.value.clone();
    Some((DROP_CHECK.into(), Token::SingleQuotedString(name)))
}

/// `ALTER CHECK|CONSTRAINT c [NOT] ENFORCED` as its option.
fn alter_enforced(toks: &[&Token]) -> Option<(String, Token)> {
    if !(toks.len() == 4 || toks.len() == 5) || !is(toks[0], "ALTER") {
        return None;
    }
    let key = if is(toks[1], "CHECK") {
        ALTER_CHECK
    } else if is(toks[1], "CONSTRAINT") {
        ALTER_CONSTRAINT
    } else {
        return None;
    };
    let name = word(toks[2])?.value.clone();
    let state = match &toks[3..] {
        [e] if is(e, "ENFORCED") => "ENFORCED",
        [n, e] if is(n, "NOT") && is(e, "ENFORCED") => "NOT ENFORCED",
        _ => return None,
    };
    Some((
        key.into(),
        Token::SingleQuotedString(format!("{name}\u{0}{state}")),
    ))
}

/// `VISIBLE` or `INVISIBLE`, as written in upper case.
fn visibility(t: &Token) -> Option<&'static str> {
    ["VISIBLE", "INVISIBLE"].into_iter().find(|v| is(t, v))
}

/// `ALTER [COLUMN] c SET VISIBLE|INVISIBLE` as its option.
fn alter_visibility(toks: &[&Token]) -> Option<(String, Token)> {
    let rest = match toks {
        [a, c, rest @ ..] if is(a, "ALTER") && is(c, "COLUMN") => rest,
        [a, rest @ ..] if is(a, "ALTER") => rest,
        _ => return None,
    };
    let [name, set, state] = rest else {
        return None;
    };
    let state = visibility(state)?;
    if !is(set, "SET") {
        return None;
    }
    let name = word(name)?.value.clone();
    Some((
        COLUMN_VISIBILITY.into(),
        Token::SingleQuotedString(format!("{name}\u{0}{state}")),
    ))
}

/// `ALTER INDEX i VISIBLE|INVISIBLE` as its option.
fn alter_index_visibility(toks: &[&Token]) -> Option<(String, Token)> {
    let [a, index, name, state] = toks else {
        return None;
    };
    if !is(a, "ALTER") || !is(index, "INDEX") {
        return None;
    }
    let state = visibility(state)?;
    let name = word(name)?.value.clone();
    Some((
        INDEX_VISIBILITY.into(),
        Token::SingleQuotedString(format!("{name}\u{0}{state}")),
    ))
}

/// `CONVERT TO CHARACTER SET|CHARSET [=] x [COLLATE [=] y]` as its option.
fn convert_to(toks: &[&Token]) -> Option<(String, Token)> {
    if toks.len() < 4 || !is(toks[0], "CONVERT") || !is(toks[1], "TO") {
        return None;
    }
    let mut i = if is(toks[2], "CHARSET") {
        3
    } else if is(toks[2], "CHARACTER") && is(toks.get(3)?, "SET") {
        4
    } else {
        return None;
    };
    let eq = |i: &mut usize| {
        if toks.get(*i).is_some_and(|t| matches!(t, Token::Eq)) {
            *i += 1;
        }
    };
    eq(&mut i);
    let charset = name_text(toks.get(i)?)?;
    i += 1;
    let mut collation = String::new();
    if i < toks.len() {
        if !is(toks[i], "COLLATE") {
            return None;
        }
        i += 1;
        eq(&mut i);
        collation = name_text(toks.get(i)?)?;
        i += 1;
    }
    (i == toks.len()).then(|| {
        (
            CONVERT_TO.into(),
            Token::SingleQuotedString(format!("{charset}\u{0}{collation}")),
        )
    })
}

/// Words that start a key or constraint element of `ADD (…)` rather than a column.
const KEY_STARTS: [&str; 9] = [
    "INDEX",
    "KEY",
    "UNIQUE",
    "PRIMARY",
    "CONSTRAINT",
    "FOREIGN",
    "CHECK",
    "FULLTEXT",
    "SPATIAL",
];

/// `ADD [COLUMN] (element, …)` over solid positions `a..b`: each element's solid range
/// and whether it is a column; None for any other clause.
fn add_list(tok: &dyn Fn(usize) -> Token, a: usize, b: usize) -> Option<Vec<(usize, usize, bool)>> {
    if b - a < 3 || !is(&tok(a), "ADD") {
        return None;
    }
    let open = if is(&tok(a + 1), "COLUMN") {
        a + 2
    } else {
        a + 1
    };
    if open >= b || !matches!(tok(open), Token::LParen) || !matches!(tok(b - 1), Token::RParen) {
        return None;
    }
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut from = open + 1;
    for k in open + 1..b - 1 {
        match tok(k) {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth < 0 {
                    // `ADD (a) …`: the group closed before the clause's end.
                    return None;
                }
            }
            Token::Comma if depth == 0 => {
                out.push((from, k));
                from = k + 1;
            }
            _ => {}
        }
    }
    out.push((from, b - 1));
    if depth != 0 || out.iter().any(|(x, y)| x >= y) {
        return None;
    }
    Some(
        out.into_iter()
            .map(|(x, y)| (x, y, !KEY_STARTS.iter().any(|w| is(&tok(x), w))))
            .collect(),
    )
}

/// `ALTER DATABASE|SCHEMA [name] options` rewritten (see the module comment); None when
/// its options are not only character set and collation.
fn alter_database(tok: &dyn Fn(usize) -> Token, n: usize) -> Option<Vec<TokenWithSpan>> {
    let mut i = 2;
    let first = tok(i);
    let named = match &first {
        Token::Word(w) => {
            w.quote_style.is_some()
                || !["DEFAULT", "CHARACTER", "CHARSET", "COLLATE"]
                    .iter()
                    .any(|k| w.value.eq_ignore_ascii_case(k))
        }
        _ => false,
    };
    let name = if named {
        i += 1;
        first
    } else {
        internal_key(CURRENT_DATABASE)
    };
    let rest: Vec<Token> = (i..n).map(tok).collect();
    let refs: Vec<&Token> = rest.iter().collect();
    let opts = table_options(&refs)?;
    if opts.iter().any(|(k, _)| k != "CHARSET" && k != "COLLATE") {
        return None;
    }
    let space = || Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);
    let mut t = vec![
        Token::make_keyword("ALTER"),
        space(),
        Token::make_keyword("SCHEMA"),
        space(),
        name,
        space(),
        Token::make_keyword("SET"),
        space(),
        Token::make_keyword("OPTIONS"),
    ];
    push_options(&mut t, opts);
    Some(t.into_iter().map(wrap).collect())
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
    if solid.len() >= 3 && is(tok(0), "ALTER") && (is(tok(1), "DATABASE") || is(tok(1), "SCHEMA")) {
        return alter_database(&|k| tok(k).clone(), solid.len());
    }
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
        if toks.len() >= 2 && is(toks[0], "DROP") && is(toks[1], "KEY") {
            let mut t = original();
            if let Some(pos) = t.iter().position(|x| is(x, "KEY")) {
                t[pos] = Token::make_keyword("INDEX");
            }
            pieces.push(t);
            changed = true;
        } else if let Some(o) = drop_check(&toks)
            .or_else(|| alter_enforced(&toks))
            .or_else(|| convert_to(&toks))
            .or_else(|| alter_visibility(&toks))
            .or_else(|| alter_index_visibility(&toks))
        {
            options.push(o);
            changed = true;
        } else if let Some(elements) = add_list(&|k| tok(k).clone(), a, b) {
            for (x, y, column) in elements {
                let mut t = vec![
                    Token::make_keyword("ADD"),
                    Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                ];
                if column {
                    t.push(Token::make_keyword("COLUMN"));
                    t.push(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space));
                }
                t.extend(
                    tokens[solid[x]..=solid[y - 1]]
                        .iter()
                        .map(|t| t.token.clone()),
                );
                pieces.push(t);
            }
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
        ];
        push_options(&mut t, options);
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
            "ALTER TABLE t SET TBLPROPERTIES([DROP CHECK]='c')"
        );
        assert_eq!(
            rewritten("ALTER TABLE t ALTER CHECK c NOT ENFORCED, ALTER CONSTRAINT d ENFORCED"),
            "ALTER TABLE t SET TBLPROPERTIES([ALTER CHECK]='c\u{0}NOT ENFORCED',\
             [ALTER CONSTRAINT]='d\u{0}ENFORCED')"
        );
        assert_eq!(
            rewritten("ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"),
            "ALTER TABLE t SET TBLPROPERTIES([CONVERT TO]='utf8mb4\u{0}utf8mb4_bin')"
        );
        assert_eq!(
            rewritten("ALTER TABLE t ALTER COLUMN a SET INVISIBLE, ALTER `b` SET VISIBLE"),
            "ALTER TABLE t SET TBLPROPERTIES([COLUMN VISIBILITY]='a\u{0}INVISIBLE',\
             [COLUMN VISIBILITY]='b\u{0}VISIBLE')"
        );
        assert_eq!(
            rewritten("ALTER TABLE t ALTER INDEX k INVISIBLE, ALTER INDEX `v` VISIBLE"),
            "ALTER TABLE t SET TBLPROPERTIES([INDEX VISIBILITY]='k\u{0}INVISIBLE',\
             [INDEX VISIBILITY]='v\u{0}VISIBLE')"
        );
        assert_eq!(
            rewritten("ALTER TABLE t ALTER COLUMN a SET DEFAULT 1"),
            "unchanged"
        );
        assert_eq!(
            rewritten("ALTER TABLE t CONVERT TO CHARSET = DEFAULT"),
            "ALTER TABLE t SET TBLPROPERTIES([CONVERT TO]='DEFAULT\u{0}')"
        );
        assert_eq!(
            rewritten("ALTER TABLE t ADD COLUMN (a INT, b VARCHAR(3) DEFAULT 'x', INDEX (a))"),
            "ALTER TABLE t ADD COLUMN a INT,ADD COLUMN b VARCHAR(3) DEFAULT 'x',ADD INDEX (a)"
        );
        assert_eq!(
            rewritten("ALTER TABLE t ADD (c DECIMAL(5, 2)), DROP d"),
            "ALTER TABLE t ADD COLUMN c DECIMAL(5, 2),DROP d"
        );
        assert_eq!(rewritten("ALTER TABLE t ADD INDEX (a)"), "unchanged");
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

    #[test]
    fn alter_database_becomes_schema_options() {
        assert_eq!(
            rewritten("ALTER DATABASE `d` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"),
            "ALTER SCHEMA `d` SET OPTIONS([CHARSET]='utf8mb4',[COLLATE]='utf8mb4_bin')"
        );
        assert_eq!(
            rewritten("ALTER SCHEMA DEFAULT COLLATE = utf8mb4_bin"),
            "ALTER SCHEMA [CURRENT DATABASE] SET OPTIONS([COLLATE]='utf8mb4_bin')"
        );
        assert_eq!(rewritten("ALTER DATABASE d ENGINE = x"), "unchanged");
    }
}
