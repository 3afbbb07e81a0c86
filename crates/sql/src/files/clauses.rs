//! The statement texts of file I/O, which sqlparser does not read: `LOAD DATA … INFILE`
//! ([`parse_load`]) and the `INTO OUTFILE / DUMPFILE / @var` clause of a SELECT
//! ([`split_select_into`], which hands back the SELECT without it for the ordinary
//! path). Both work on sqlparser's MySQL tokens, so quoting and escapes are MySQL's.

use super::FileFormat;
use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};
use strata_types::{Error, Result};

/// REPLACE / IGNORE of LOAD DATA (None: neither).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnDuplicate {
    Error,
    Replace,
    Ignore,
}

/// A target of a LOAD DATA field: a column, or a user variable (`@name`, lower-cased).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadTarget {
    Column(String),
    Variable(String),
}

/// A parsed `LOAD DATA` statement.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadData {
    pub local: bool,
    pub file: String,
    pub on_duplicate: OnDuplicate,
    pub db: Option<String>,
    pub table: String,
    /// CHARACTER SET, when given (lower-case).
    pub charset: Option<String>,
    pub format: FileFormat,
    pub ignore_lines: u64,
    /// The field list; None: the table's columns in order.
    pub targets: Option<Vec<LoadTarget>>,
    /// `SET col = expr` (expr as SQL text; `DEFAULT` is the text `DEFAULT`).
    pub assignments: Vec<(String, String)>,
}

/// Where a SELECT's rows go instead of the client.
#[derive(Clone, Debug, PartialEq)]
pub enum SelectInto {
    Outfile {
        file: String,
        charset: Option<String>,
        format: FileFormat,
    },
    Dumpfile(String),
    /// `INTO @a, @b` (user variables, lower-cased, without the `@`).
    Variables(Vec<String>),
}

struct Toks {
    /// Non-whitespace tokens with their byte offsets in the text (start, end).
    toks: Vec<(Token, usize, usize)>,
    i: usize,
}

fn syntax(sql: &str) -> Error {
    Error::Syntax(sql.chars().take(80).collect())
}

/// Byte offsets of every token (sqlparser reports 1-based line and char columns).
fn tokens(sql: &str) -> Result<Vec<(Token, usize, usize)>> {
    let dialect = MySqlDialect {};
    let toks: Vec<TokenWithSpan> = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|_| syntax(sql))?;
    // Char index → byte offset, per line.
    let mut line_starts = vec![0usize];
    for (i, c) in sql.char_indices() {
        if c == '\n' {
            line_starts.push(i + 1);
        }
    }
    let offset = |line: u64, col: u64| -> usize {
        let Some(&start) = line_starts.get(line.saturating_sub(1) as usize) else {
            return sql.len();
        };
        sql[start..]
            .char_indices()
            .nth(col.saturating_sub(1) as usize)
            .map_or(sql.len(), |(i, _)| start + i)
    };
    let mut out = Vec::new();
    for t in toks {
        if matches!(t.token, Token::Whitespace(_) | Token::EOF) {
            continue;
        }
        let s = offset(t.span.start.line, t.span.start.column);
        let e = offset(t.span.end.line, t.span.end.column);
        out.push((t.token, s, e));
    }
    Ok(out)
}

impl Toks {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.i).map(|t| &t.0)
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_word(&mut self, w: &str, sql: &str) -> Result<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(syntax(sql))
        }
    }
    fn string(&mut self, sql: &str) -> Result<Vec<u8>> {
        let b = match self.peek() {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                strata_types::sqltext::literal_bytes(s.as_bytes())
            }
            Some(Token::HexStringLiteral(h)) => hex(h).ok_or_else(|| syntax(sql))?,
            Some(Token::Number(n, _)) if n.starts_with("0x") || n.starts_with("0X") => {
                hex(&n[2..]).ok_or_else(|| syntax(sql))?
            }
            _ => return Err(syntax(sql)),
        };
        self.i += 1;
        Ok(b)
    }
    fn ident(&mut self, sql: &str) -> Result<String> {
        match self.peek() {
            Some(Token::Word(w)) => {
                let v = w.value.clone();
                self.i += 1;
                Ok(v)
            }
            _ => Err(syntax(sql)),
        }
    }
    fn start(&self) -> usize {
        self.toks.get(self.i).map_or(usize::MAX, |t| t.1)
    }
}

fn hex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

/// `FIELDS …` and `LINES …` options, in MySQL's order; returns whether any was read.
fn export_options(t: &mut Toks, f: &mut FileFormat, sql: &str) -> Result<()> {
    if t.eat_word("FIELDS") || t.eat_word("COLUMNS") {
        let mut any = false;
        loop {
            if t.eat_word("TERMINATED") {
                t.expect_word("BY", sql)?;
                f.field_term = t.string(sql)?;
            } else if t.is_word("OPTIONALLY") || t.is_word("ENCLOSED") {
                f.optionally = t.eat_word("OPTIONALLY");
                t.expect_word("ENCLOSED", sql)?;
                t.expect_word("BY", sql)?;
                f.enclosed = t.string(sql)?;
            } else if t.eat_word("ESCAPED") {
                t.expect_word("BY", sql)?;
                f.escaped = t.string(sql)?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(syntax(sql));
        }
    }
    if t.eat_word("LINES") {
        let mut any = false;
        loop {
            if t.eat_word("STARTING") {
                t.expect_word("BY", sql)?;
                f.line_start = t.string(sql)?;
            } else if t.eat_word("TERMINATED") {
                t.expect_word("BY", sql)?;
                f.line_term = t.string(sql)?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(syntax(sql));
        }
    }
    f.check()
}

fn charset(t: &mut Toks, sql: &str) -> Result<Option<String>> {
    if t.is_word("CHARACTER") || t.is_word("CHARSET") {
        if t.eat_word("CHARACTER") {
            t.expect_word("SET", sql)?;
        } else {
            t.i += 1;
        }
        let cs = match t.peek() {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => s.clone(),
            _ => t.ident(sql)?,
        };
        if matches!(t.peek(), Some(Token::SingleQuotedString(_))) {
            t.i += 1;
        }
        return Ok(Some(cs.to_ascii_lowercase()));
    }
    Ok(None)
}

/// A user variable token: `@name` (one word in MySQL's tokenizer) or `@` `name`.
fn user_variable(t: &mut Toks) -> Option<String> {
    match t.peek() {
        Some(Token::Word(w)) if w.quote_style.is_none() && w.value.starts_with('@') => {
            let v = w.value[1..].to_ascii_lowercase();
            t.i += 1;
            Some(v)
        }
        Some(Token::AtSign) => {
            if let Some((Token::Word(w), _, _)) = t.toks.get(t.i + 1) {
                let v = w.value.to_ascii_lowercase();
                t.i += 2;
                return Some(v);
            }
            None
        }
        _ => None,
    }
}

/// Parses `LOAD DATA [LOW_PRIORITY|CONCURRENT] [LOCAL] INFILE 'f' [REPLACE|IGNORE]
/// INTO TABLE t [PARTITION (…)] [CHARACTER SET cs] [FIELDS …] [LINES …]
/// [IGNORE n LINES|ROWS] [(col_or_@var, …)] [SET col = expr, …]`.
pub fn parse_load(sql: &str) -> Result<LoadData> {
    let mut t = Toks {
        toks: tokens(sql)?,
        i: 0,
    };
    t.expect_word("LOAD", sql)?;
    if t.is_word("XML") {
        return Err(Error::NotSupported("LOAD XML".into()));
    }
    t.expect_word("DATA", sql)?;
    let _ = t.eat_word("LOW_PRIORITY") || t.eat_word("CONCURRENT");
    let local = t.eat_word("LOCAL");
    t.expect_word("INFILE", sql)?;
    let file = String::from_utf8_lossy(&t.string(sql)?).into_owned();
    let on_duplicate = if t.eat_word("REPLACE") {
        OnDuplicate::Replace
    } else if t.eat_word("IGNORE") {
        OnDuplicate::Ignore
    } else {
        OnDuplicate::Error
    };
    t.expect_word("INTO", sql)?;
    t.expect_word("TABLE", sql)?;
    let first = t.ident(sql)?;
    let (db, table) = if matches!(t.peek(), Some(Token::Period)) {
        t.i += 1;
        (Some(first), t.ident(sql)?)
    } else {
        (None, first)
    };
    if t.is_word("PARTITION") {
        return Err(Error::NotSupported("LOAD DATA … PARTITION".into()));
    }
    let charset = charset(&mut t, sql)?;
    let mut format = FileFormat::default();
    export_options(&mut t, &mut format, sql)?;
    let mut ignore_lines = 0;
    if t.eat_word("IGNORE") {
        ignore_lines = match t.peek() {
            Some(Token::Number(n, _)) => n.parse::<u64>().map_err(|_| syntax(sql))?,
            _ => return Err(syntax(sql)),
        };
        t.i += 1;
        if !(t.eat_word("LINES") || t.eat_word("ROWS")) {
            return Err(syntax(sql));
        }
    }
    let mut targets = None;
    if matches!(t.peek(), Some(Token::LParen)) {
        t.i += 1;
        let mut list = Vec::new();
        if matches!(t.peek(), Some(Token::RParen)) {
            t.i += 1;
        } else {
            loop {
                if let Some(v) = user_variable(&mut t) {
                    list.push(LoadTarget::Variable(v));
                } else {
                    let mut name = t.ident(sql)?;
                    // `t.col`: the table's own qualifier.
                    if matches!(t.peek(), Some(Token::Period)) {
                        t.i += 1;
                        name = t.ident(sql)?;
                    }
                    list.push(LoadTarget::Column(name));
                }
                match t.peek() {
                    Some(Token::Comma) => t.i += 1,
                    Some(Token::RParen) => {
                        t.i += 1;
                        break;
                    }
                    _ => return Err(syntax(sql)),
                }
            }
        }
        targets = Some(list);
    }
    let mut assignments = Vec::new();
    if t.eat_word("SET") {
        // The rest is `col = expr, …`: split at top-level commas of the text.
        let rest = &sql[t.start().min(sql.len())..];
        for piece in top_level_commas(rest)? {
            let (col, expr) = piece.split_once('=').ok_or_else(|| syntax(sql))?;
            let col = col.trim();
            let col = col.rsplit('.').next().unwrap_or(col).trim();
            let col = col.trim_matches('`').to_string();
            if col.is_empty() || expr.trim().is_empty() {
                return Err(syntax(sql));
            }
            assignments.push((col, expr.trim().to_string()));
        }
        t.i = t.toks.len();
    }
    if t.i < t.toks.len() {
        return Err(syntax(sql));
    }
    Ok(LoadData {
        local,
        file,
        on_duplicate,
        db,
        table,
        charset,
        format,
        ignore_lines,
        targets,
        assignments,
    })
}

/// `text` split at commas outside parentheses and quotes (by tokens, so a comma in a
/// string stays).
fn top_level_commas(text: &str) -> Result<Vec<&str>> {
    let toks = tokens(text)?;
    let mut depth = 0i32;
    let mut out = Vec::new();
    let mut from = 0;
    for (tok, s, _) in &toks {
        match tok {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => {
                out.push(&text[from..*s]);
                from = s + 1;
            }
            _ => {}
        }
    }
    out.push(&text[from..]);
    Ok(out)
}

/// Finds a top-level `INTO OUTFILE | DUMPFILE | @var …` clause in a SELECT; returns
/// the statement without it and what it asked for. None: no such clause (a SELECT
/// that goes to the client as usual).
pub fn split_select_into(sql: &str) -> Result<Option<(String, SelectInto)>> {
    // Cheap pre-check: most SELECTs have no INTO at all.
    if !sql
        .as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"into"))
    {
        return Ok(None);
    }
    let toks = tokens(sql)?;
    let mut depth = 0i32;
    let mut at = None;
    for (k, (tok, _, _)) in toks.iter().enumerate() {
        match tok {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w)
                if depth == 0
                    && w.quote_style.is_none()
                    && w.value.eq_ignore_ascii_case("INTO") =>
            {
                at = Some(k);
                break;
            }
            _ => {}
        }
    }
    let Some(k) = at else {
        return Ok(None);
    };
    let clause_start = toks[k].1;
    let mut t = Toks { toks, i: k + 1 };
    let into = if t.eat_word("OUTFILE") {
        let file = String::from_utf8_lossy(&t.string(sql)?).into_owned();
        let charset = charset(&mut t, sql)?;
        let mut format = FileFormat::default();
        export_options(&mut t, &mut format, sql)?;
        SelectInto::Outfile {
            file,
            charset,
            format,
        }
    } else if t.eat_word("DUMPFILE") {
        SelectInto::Dumpfile(String::from_utf8_lossy(&t.string(sql)?).into_owned())
    } else {
        let mut vars = Vec::new();
        loop {
            match user_variable(&mut t) {
                Some(v) => vars.push(v),
                // `INTO tbl` (SELECT … INTO a table) is not MySQL; a routine's local
                // variables are the routine interpreter's.
                None => return Ok(None),
            }
            if matches!(t.peek(), Some(Token::Comma)) {
                t.i += 1;
            } else {
                break;
            }
        }
        SelectInto::Variables(vars)
    };
    let clause_end = t.start().min(sql.len());
    let mut rest = String::with_capacity(sql.len());
    rest.push_str(&sql[..clause_start]);
    rest.push(' ');
    rest.push_str(&sql[clause_end..]);
    Ok(Some((rest.trim().to_string(), into)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_data_clauses() {
        let l = parse_load(
            "LOAD DATA LOCAL INFILE '/tmp/a b.csv' REPLACE INTO TABLE d.t CHARACTER SET utf8mb4 \
             FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '\\\\' \
             LINES STARTING BY 'x' TERMINATED BY '\\r\\n' IGNORE 1 LINES (a, @v, `b c`) \
             SET c = UPPER(@v), d = CONCAT('x,y', @v)",
        )
        .unwrap();
        assert!(l.local);
        assert_eq!(l.file, "/tmp/a b.csv");
        assert_eq!(l.on_duplicate, OnDuplicate::Replace);
        assert_eq!((l.db.as_deref(), l.table.as_str()), (Some("d"), "t"));
        assert_eq!(l.charset.as_deref(), Some("utf8mb4"));
        assert_eq!(l.format.field_term, b",");
        assert_eq!(l.format.enclosed, b"\"");
        assert!(l.format.optionally);
        assert_eq!(l.format.escaped, b"\\");
        assert_eq!(l.format.line_start, b"x");
        assert_eq!(l.format.line_term, b"\r\n");
        assert_eq!(l.ignore_lines, 1);
        assert_eq!(
            l.targets,
            Some(vec![
                LoadTarget::Column("a".into()),
                LoadTarget::Variable("v".into()),
                LoadTarget::Column("b c".into())
            ])
        );
        assert_eq!(
            l.assignments,
            vec![
                ("c".to_string(), "UPPER(@v)".to_string()),
                ("d".to_string(), "CONCAT('x,y', @v)".to_string())
            ]
        );
        let l = parse_load("load data infile 'f' into table t").unwrap();
        assert_eq!(l.format, FileFormat::default());
        assert!(parse_load("LOAD DATA INFILE 'f' INTO TABLE t garbage").is_err());
        assert_eq!(
            parse_load("LOAD DATA INFILE 'f' INTO TABLE t FIELDS ENCLOSED BY 'ab'")
                .unwrap_err()
                .code(),
            1083
        );
    }

    #[test]
    fn select_into_clauses() {
        let (rest, into) = split_select_into(
            "SELECT a, b FROM t WHERE a > 1 INTO OUTFILE '/tmp/o' FIELDS TERMINATED BY ','",
        )
        .unwrap()
        .unwrap();
        assert_eq!(rest, "SELECT a, b FROM t WHERE a > 1");
        assert!(
            matches!(into, SelectInto::Outfile { file, format, .. } if file == "/tmp/o" && format.field_term == b",")
        );
        let (rest, into) = split_select_into("SELECT a INTO @x FROM t LIMIT 1")
            .unwrap()
            .unwrap();
        assert_eq!(rest, "SELECT a  FROM t LIMIT 1");
        assert_eq!(into, SelectInto::Variables(vec!["x".into()]));
        let (_, into) = split_select_into("SELECT 1, 2 INTO @a, @B")
            .unwrap()
            .unwrap();
        assert_eq!(into, SelectInto::Variables(vec!["a".into(), "b".into()]));
        assert_eq!(
            split_select_into("SELECT (SELECT 'into' FROM t) FROM u").unwrap(),
            None
        );
        let (_, into) = split_select_into("SELECT x FROM t INTO DUMPFILE '/tmp/d'")
            .unwrap()
            .unwrap();
        assert_eq!(into, SelectInto::Dumpfile("/tmp/d".into()));
    }
}
