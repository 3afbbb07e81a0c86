//! CREATE / ALTER VIEW as MySQL writes them, read from the statement's text.
//!
//! sqlparser reads `CREATE [OR REPLACE] VIEW v [(cols)] AS query` but not all of MySQL's
//! clauses around it: the `ALGORITHM`/`DEFINER`/`SQL SECURITY` prefix of `ALTER VIEW`
//! (and a definer written `` `root`@`%` ``), or the trailing `WITH [CASCADED|LOCAL] CHECK
//! OPTION`. [`split`] finds those clauses and the query's own text on the tokens of the
//! statement (so quotes and comments are respected); [`for_parser`] gives sqlparser the
//! statement without them, and the view statement (`statements::views`) takes the
//! clauses and the query text from [`split`] — the text is what the view stores.

use crate::parse::lex::{next_token, Tok};

/// `WITH [CASCADED | LOCAL] CHECK OPTION`; plain `WITH CHECK OPTION` is CASCADED.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckOption {
    None,
    Cascaded,
    Local,
}

impl CheckOption {
    /// As `information_schema.VIEWS.CHECK_OPTION` shows it.
    pub fn name(self) -> &'static str {
        match self {
            CheckOption::None => "NONE",
            CheckOption::Cascaded => "CASCADED",
            CheckOption::Local => "LOCAL",
        }
    }
}

/// The parts of a CREATE or ALTER VIEW statement.
#[derive(Debug, PartialEq)]
pub struct ViewText<'a> {
    pub alter: bool,
    pub or_replace: bool,
    /// `UNDEFINED`, `MERGE` or `TEMPTABLE`, upper-case, as written.
    pub algorithm: Option<String>,
    /// The definer as written (`` `root`@`%` ``, `'u'@'h'`, `CURRENT_USER`).
    pub definer: Option<&'a str>,
    /// `DEFINER` or `INVOKER`, upper-case.
    pub security: Option<String>,
    /// The query after `AS`, as written, without the check option.
    pub select: &'a str,
    pub check: CheckOption,
    /// Where the `VIEW` keyword starts.
    view_at: usize,
    /// Where the query ends (the check option, if any, starts there).
    select_end: usize,
}

/// A token of the statement: its kind and byte range.
struct Spanned<'a> {
    tok: Tok<'a>,
    start: usize,
    end: usize,
}

fn tokens(sql: &str) -> Vec<Spanned<'_>> {
    let s = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let (tok, end) = next_token(s, i);
        let end = end.max(i + 1);
        let text = &s[i..end];
        let comment = text.starts_with(b"#")
            || text.starts_with(b"--")
            || (text.starts_with(b"/*") && !text.starts_with(b"/*!"));
        if !comment {
            out.push(Spanned { tok, start: i, end });
        }
        i = end;
    }
    out
}

fn is_word(t: &Spanned, w: &str) -> bool {
    matches!(t.tok, Tok::Word(x) if x.eq_ignore_ascii_case(w))
}

fn is_punct(sql: &str, t: &Spanned, p: &str) -> bool {
    matches!(t.tok, Tok::Other) && &sql[t.start..t.end] == p
}

/// Whether `sql` may be a CREATE or ALTER VIEW statement (the cheap test first).
pub fn may_need(sql: &str) -> bool {
    let head = sql.trim_start();
    let starts = |w: &str| {
        head.get(..w.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(w))
    };
    (starts("create") || starts("alter"))
        && sql
            .as_bytes()
            .windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"view"))
}

/// Splits a CREATE or ALTER VIEW statement; None for any other statement (or one this
/// reading cannot follow, which sqlparser then reports as it sees it).
pub fn split(sql: &str) -> Option<ViewText<'_>> {
    let toks = tokens(sql);
    let first = toks.first()?;
    let alter = if is_word(first, "ALTER") {
        true
    } else if is_word(first, "CREATE") {
        false
    } else {
        return None;
    };
    let mut v = ViewText {
        alter,
        or_replace: false,
        algorithm: None,
        definer: None,
        security: None,
        select: "",
        check: CheckOption::None,
        view_at: 0,
        select_end: sql.len(),
    };
    let mut i = 1;
    loop {
        let t = toks.get(i)?;
        if is_word(t, "VIEW") {
            v.view_at = t.start;
            i += 1;
            break;
        } else if !alter
            && is_word(t, "OR")
            && toks.get(i + 1).is_some_and(|n| is_word(n, "REPLACE"))
        {
            v.or_replace = true;
            i += 2;
        } else if is_word(t, "ALGORITHM") {
            if !toks.get(i + 1).is_some_and(|n| is_punct(sql, n, "=")) {
                return None;
            }
            match toks.get(i + 2)?.tok {
                Tok::Word(w) => v.algorithm = Some(w.to_ascii_uppercase()),
                _ => return None,
            }
            i += 3;
        } else if is_word(t, "DEFINER") {
            if !toks.get(i + 1).is_some_and(|n| is_punct(sql, n, "=")) {
                return None;
            }
            let from = toks.get(i + 2)?.start;
            let mut j = i + 2;
            let mut end = from;
            while let Some(n) = toks.get(j) {
                if is_word(n, "SQL") || is_word(n, "VIEW") {
                    break;
                }
                end = n.end;
                j += 1;
            }
            v.definer = Some(&sql[from..end]);
            i = j;
        } else if is_word(t, "SQL") && toks.get(i + 1).is_some_and(|n| is_word(n, "SECURITY")) {
            match toks.get(i + 2)?.tok {
                Tok::Word(w) => v.security = Some(w.to_ascii_uppercase()),
                _ => return None,
            }
            i += 3;
        } else {
            return None;
        }
    }
    // The query starts after the first `AS` outside the column list.
    let mut depth = 0i32;
    let select_at = loop {
        let t = toks.get(i)?;
        if is_punct(sql, t, "(") {
            depth += 1;
        } else if is_punct(sql, t, ")") {
            depth -= 1;
        } else if depth == 0 && is_word(t, "AS") {
            break toks.get(i + 1)?.start;
        }
        i += 1;
    };
    // A trailing `WITH [CASCADED|LOCAL] CHECK OPTION`.
    let n = toks.len();
    if n >= 3 && is_word(&toks[n - 1], "OPTION") && is_word(&toks[n - 2], "CHECK") {
        let (with, check) = if is_word(&toks[n - 3], "CASCADED") {
            (n.checked_sub(4), CheckOption::Cascaded)
        } else if is_word(&toks[n - 3], "LOCAL") {
            (n.checked_sub(4), CheckOption::Local)
        } else {
            (Some(n - 3), CheckOption::Cascaded)
        };
        if let Some(w) = with.filter(|&w| is_word(&toks[w], "WITH") && toks[w].start >= select_at) {
            v.check = check;
            v.select_end = toks[w].start;
        }
    }
    v.select = sql.get(select_at..v.select_end)?.trim_end();
    Some(v)
}

/// The statement as sqlparser reads it: `CREATE [OR REPLACE] VIEW …` or `ALTER VIEW …`
/// without the clauses it does not know.
pub fn for_parser(sql: &str, v: &ViewText) -> String {
    let head = match (v.alter, v.or_replace) {
        (true, _) => "ALTER ",
        (false, true) => "CREATE OR REPLACE ",
        (false, false) => "CREATE ",
    };
    format!("{head}{}", sql[v.view_at..v.select_end].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_clause() {
        let sql = "CREATE OR REPLACE ALGORITHM = MERGE DEFINER=`root`@`%` SQL SECURITY INVOKER \
                   VIEW v (a, b) AS SELECT x AS `as`, 'AS' FROM t WITH LOCAL CHECK OPTION";
        let v = split(sql).unwrap();
        assert!(v.or_replace && !v.alter);
        assert_eq!(v.algorithm.as_deref(), Some("MERGE"));
        assert_eq!(v.definer, Some("`root`@`%`"));
        assert_eq!(v.security.as_deref(), Some("INVOKER"));
        assert_eq!(v.select, "SELECT x AS `as`, 'AS' FROM t");
        assert_eq!(v.check, CheckOption::Local);
        assert_eq!(
            for_parser(sql, &v),
            "CREATE OR REPLACE VIEW v (a, b) AS SELECT x AS `as`, 'AS' FROM t"
        );
    }

    #[test]
    fn alter_loses_its_prefix_and_plain_check_is_cascaded() {
        let sql = "ALTER SQL SECURITY DEFINER VIEW db.v AS SELECT 1 WITH CHECK OPTION";
        let v = split(sql).unwrap();
        assert!(v.alter);
        assert_eq!(v.check, CheckOption::Cascaded);
        assert_eq!(for_parser(sql, &v), "ALTER VIEW db.v AS SELECT 1");
    }

    #[test]
    fn other_statements_are_not_views() {
        assert!(split("CREATE TABLE view (a int)").is_none());
        assert!(split("ALTER TABLE t ADD COLUMN view int").is_none());
        let v = split("CREATE VIEW v AS SELECT 'WITH CHECK OPTION'").unwrap();
        assert_eq!(v.check, CheckOption::None);
        assert_eq!(v.select, "SELECT 'WITH CHECK OPTION'");
    }
}
