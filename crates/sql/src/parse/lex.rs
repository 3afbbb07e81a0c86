//! A small SQL scanner that runs before sqlparser, for two jobs the parser does not do:
//!
//! 1. [`number_placeholders`]: rewrites each `?` as `?1`, `?2`, … so a placeholder's
//!    position is explicit in the AST, whatever order the binder visits clauses in.
//! 2. [`normalize`]: replaces the literals of a DML statement by numbered placeholders
//!    and returns them as values. Text-protocol statements that differ only in their
//!    literals (sysbench's `--db-ps-mode=disable`, ORMs) then share one cached plan, so
//!    the ~5 µs sqlparser parse and the binder run once per statement shape, not once
//!    per statement. Literals whose text matters are left alone: the select list (its
//!    text names the result column), positional `ORDER BY 1`/`GROUP BY 1`, and anything
//!    with a charset introducer.
//!
//! Both skip quoted strings, quoted identifiers and comments.

use strata_types::{Decimal, Value};

/// The value of a numeric literal as MySQL types it: integers are BIGINT (UNSIGNED when
/// too large for signed, DECIMAL beyond that), a point makes DECIMAL, an exponent DOUBLE.
pub fn number_value(text: &str) -> Option<Value> {
    if text.contains(['e', 'E']) {
        return text.parse::<f64>().ok().map(Value::Double);
    }
    if text.contains('.') {
        return Decimal::parse(text).map(Value::Decimal);
    }
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::Int(i));
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(Value::UInt(u));
    }
    Decimal::parse(text).map(Value::Decimal)
}

/// Unescapes a MySQL single- or double-quoted string body (backslash escapes and doubled
/// quotes), as the server does with the default sql_mode.
pub fn unescape(body: &[u8], quote: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if b == b'\\' && i + 1 < body.len() {
            i += 1;
            // `\%` and `\_` keep their backslash (MySQL: they mean a literal % or _ to
            // LIKE, and are those two characters anywhere else).
            if matches!(body[i], b'%' | b'_') {
                out.push(b'\\');
            }
            out.push(match body[i] {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'0' => 0,
                b'b' => 8,
                b'Z' => 26,
                other => other,
            });
        } else if b == quote && i + 1 < body.len() && body[i + 1] == quote {
            out.push(quote);
            i += 1;
        } else {
            out.push(b);
        }
        i += 1;
    }
    strata_types::sqltext::literal_bytes(&out)
}

#[derive(Debug, PartialEq)]
pub(crate) enum Tok<'a> {
    Word(&'a str),
    Number(&'a str),
    /// A quoted string: the quote byte and the raw body.
    Str(u8, &'a [u8]),
    Question,
    Other,
}

/// Scans one token at `i`; returns it and the end offset. Whitespace and comments come
/// back as `Other` spans that callers copy through.
pub(crate) fn next_token(s: &[u8], i: usize) -> (Tok<'_>, usize) {
    let b = s[i];
    let text = |a: usize, e: usize| std::str::from_utf8(&s[a..e]).unwrap_or("");
    match b {
        b'\'' | b'"' => {
            let mut j = i + 1;
            while j < s.len() {
                if s[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if s[j] == b {
                    if j + 1 < s.len() && s[j + 1] == b {
                        j += 2;
                        continue;
                    }
                    return (Tok::Str(b, &s[i + 1..j]), j + 1);
                }
                j += 1;
            }
            (Tok::Other, s.len())
        }
        b'`' => {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'`' {
                j += 1;
            }
            (Tok::Other, (j + 1).min(s.len()))
        }
        b'#' => {
            let mut j = i;
            while j < s.len() && s[j] != b'\n' {
                j += 1;
            }
            (Tok::Other, j)
        }
        b'-' if s.get(i + 1) == Some(&b'-')
            && s.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
        {
            let mut j = i;
            while j < s.len() && s[j] != b'\n' {
                j += 1;
            }
            (Tok::Other, j)
        }
        b'/' if s.get(i + 1) == Some(&b'*') && s.get(i + 2) != Some(&b'!') => {
            let mut j = i + 2;
            while j + 1 < s.len() && !(s[j] == b'*' && s[j + 1] == b'/') {
                j += 1;
            }
            (Tok::Other, (j + 2).min(s.len()))
        }
        b'?' => (Tok::Question, i + 1),
        b'0'..=b'9' => {
            let mut j = i;
            while j < s.len() && (s[j].is_ascii_digit() || s[j] == b'.') {
                j += 1;
            }
            if j < s.len() && (s[j] == b'e' || s[j] == b'E') {
                let mut k = j + 1;
                if k < s.len() && (s[k] == b'+' || s[k] == b'-') {
                    k += 1;
                }
                if k < s.len() && s[k].is_ascii_digit() {
                    j = k;
                    while j < s.len() && s[j].is_ascii_digit() {
                        j += 1;
                    }
                }
            }
            // `1abc` is an identifier in MySQL, and `0x1F` a hex literal: not numbers.
            if j < s.len() && (s[j].is_ascii_alphabetic() || s[j] == b'_') {
                let mut k = j;
                while k < s.len() && (s[k].is_ascii_alphanumeric() || s[k] == b'_') {
                    k += 1;
                }
                return (Tok::Word(text(i, k)), k);
            }
            (Tok::Number(text(i, j)), j)
        }
        c if c.is_ascii_alphabetic() || c == b'_' || c == b'@' || c == b'$' || c >= 0x80 => {
            let mut j = i + 1;
            while j < s.len()
                && (s[j].is_ascii_alphanumeric()
                    || matches!(s[j], b'_' | b'@' | b'$' | b'.')
                    || s[j] >= 0x80)
            {
                j += 1;
            }
            (Tok::Word(text(i, j)), j)
        }
        _ => (Tok::Other, i + 1),
    }
}

/// What one parenthesised group or prefix operator weighs in [`nesting_bound`], in chain links.
pub const GROUP_WEIGHT: usize = 6;

/// An upper bound on how deep the syntax tree of `sql` can be, found without parsing:
/// a run of binary operators parses into a left-deep chain (`1+1+…+1` of N terms is N
/// levels deep, though the parser builds it in a loop), and each parenthesis, function
/// call or subquery adds a level. Per parenthesised group the bound is the operators of
/// its longest comma-separated part plus its deepest inner group, so a long `IN (…)`
/// list or a multi-row VALUES stays shallow. The parser and everything that walks its
/// tree recursively (formatting, cloning, dropping) are then known to fit the stack
/// before they start ([`crate::parse::parse`]).
///
/// The unit is one link of an operator chain; a group or a prefix operator (`NOT`, a
/// unary minus) counts [`GROUP_WEIGHT`] units, since the parser's recursive descent into
/// it takes several times the stack of a chain link.
pub fn nesting_bound(sql: &str) -> usize {
    let s = sql.as_bytes();
    // Per open group: (units in the current part, deepest inner group in it, deepest part so far).
    let mut stack: Vec<(usize, usize, usize)> = vec![(0, 0, 0)];
    let close_part = |g: &mut (usize, usize, usize)| {
        g.2 = g.2.max(g.0 + g.1);
        g.0 = 0;
        g.1 = 0;
    };
    // Whether the last token ended an operand: an operator after an operand is binary (a
    // chain link the parser builds in a loop), elsewhere it is a prefix the parser
    // descends into recursively, as into a group.
    let mut after_operand = false;
    let mut i = 0;
    while i < s.len() {
        let (tok, end) = next_token(s, i);
        let top = stack.len() - 1;
        match tok {
            Tok::Word(w) => {
                let is = |list: &[&str]| list.iter().any(|k| w.eq_ignore_ascii_case(k));
                if is(&[
                    "not", "binary", "interval", "exists", "case", "when", "then", "else",
                ]) {
                    stack[top].0 += GROUP_WEIGHT;
                    after_operand = false;
                } else if is(&[
                    "and",
                    "or",
                    "xor",
                    "div",
                    "mod",
                    "is",
                    "like",
                    "between",
                    "regexp",
                    "rlike",
                    "in",
                    "collate",
                    "select",
                    "any",
                    "some",
                    "all",
                    "escape",
                    "sounds",
                    "union",
                    "intersect",
                    "except",
                    "where",
                    "having",
                    "on",
                ]) {
                    stack[top].0 += 1;
                    after_operand = false;
                } else {
                    after_operand = true;
                }
            }
            Tok::Number(_) | Tok::Str(..) | Tok::Question => after_operand = true,
            Tok::Other if end == i + 1 => match s[i] {
                b'(' => {
                    stack.push((0, 0, 0));
                    after_operand = false;
                }
                b')' if stack.len() > 1 => {
                    let mut g = stack.pop().unwrap_or_default();
                    close_part(&mut g);
                    let parent = stack.len() - 1;
                    stack[parent].1 = stack[parent].1.max(g.2 + GROUP_WEIGHT);
                    after_operand = true;
                }
                b',' | b';' => {
                    close_part(&mut stack[top]);
                    after_operand = false;
                }
                b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'=' | b'<' | b'>'
                | b'!' | b'~' | b':' => {
                    stack[top].0 += if after_operand { 1 } else { GROUP_WEIGHT };
                    after_operand = false;
                }
                c if c.is_ascii_whitespace() => {}
                _ => after_operand = false,
            },
            _ => {}
        }
        i = end;
    }
    // Unclosed groups still count: the parser descends into them before it fails.
    while stack.len() > 1 {
        let mut g = stack.pop().unwrap_or_default();
        close_part(&mut g);
        let parent = stack.len() - 1;
        stack[parent].1 = stack[parent].1.max(g.2 + GROUP_WEIGHT);
    }
    let mut root = stack.pop().unwrap_or_default();
    close_part(&mut root);
    root.2 + 1
}

/// Rewrites `?` placeholders as `?1`, `?2`, …; returns the text and the count.
pub fn unnumber_placeholders(text: &str) -> String {
    if !text.contains('?') {
        return text.to_string();
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        match next_token(b, i) {
            (Tok::Question, end) => {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                out.push_str(&text[last..i + 1]);
                last = j;
                i = j.max(end);
            }
            (_, end) => i = end.max(i + 1),
        }
    }
    out.push_str(&text[last.min(text.len())..]);
    out
}

/// Rewrites each `?` outside quotes and comments as `?1`, `?2`, …; returns the text and
/// the count. [`unnumber_placeholders`] undoes it for names and messages.
pub fn number_placeholders(sql: &str) -> (String, usize) {
    let s = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut i = 0;
    while i < s.len() {
        let (tok, end) = next_token(s, i);
        if tok == Tok::Question {
            n += 1;
            out.push('?');
            out.push_str(&n.to_string());
        } else {
            out.push_str(&sql[i..end]);
        }
        i = end;
    }
    (out, n)
}

/// Normalizes a DML statement: literals become `?N` placeholders (numbered after any
/// placeholders already present is not supported: statements with `?` are not
/// normalized). Returns None when the statement is not a cacheable shape.
pub fn normalize(sql: &str) -> Option<(String, Vec<Value>)> {
    let s = sql.as_bytes();
    let first = {
        let mut i = 0;
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        let (tok, _) = next_token(s, i.min(s.len().saturating_sub(1)));
        match tok {
            Tok::Word(w) => w.to_ascii_uppercase(),
            _ => return None,
        }
    };
    if !matches!(
        first.as_str(),
        "SELECT" | "INSERT" | "UPDATE" | "DELETE" | "REPLACE"
    ) {
        return None;
    }
    let mut out = String::with_capacity(sql.len());
    let mut values = Vec::new();
    let mut i = 0;
    let mut depth = 0i32;
    // Per parenthesis level: inside a SELECT list, whose literals stay in the key,
    // because the columns' names are their text (`SELECT 1+1` is named `1+1`), at any
    // depth (a derived table's columns are named the same way).
    // Each level is (inside a select list, whether this level's own SELECT set it): a
    // clause word ends only a level's own list, not the FROM of `EXTRACT(x FROM d)`.
    let mut select_list: Vec<(bool, bool)> = vec![(false, false)];
    let mut positional = false; // right after ORDER BY / GROUP BY or a comma in their list
                                // Literals that are branches of a CASE or an IF/IFNULL/COALESCE/GREATEST/LEAST/NULLIF
                                // call stay in the key too: the result's type is made from its branches' types
                                // (`COALESCE(date_col, 'x')` is a string, `COALESCE(date_col, NULL)` a date), and a
                                // placeholder has none when the statement is bound.
    let mut branch_args: Vec<bool> = vec![false];
    let mut branch_call_next = false; // the last word names such a function
    let mut case_depth = 0usize;
    let mut in_order_list = false;
    let mut prev_word = String::new();
    while i < s.len() {
        let (tok, end) = next_token(s, i);
        let mut replaced = false;
        match &tok {
            Tok::Question => return None,
            Tok::Word(w) => {
                let up = w.to_ascii_uppercase();
                branch_call_next = matches!(
                    up.as_str(),
                    "IF" | "IFNULL" | "COALESCE" | "GREATEST" | "LEAST" | "NULLIF"
                );
                match up.as_str() {
                    "CASE" => case_depth += 1,
                    "END" => case_depth = case_depth.saturating_sub(1),
                    _ => {}
                }
                let here = select_list.last_mut();
                match up.as_str() {
                    "SELECT" => here.into_iter().for_each(|f| *f = (true, true)),
                    "FROM" | "WHERE" | "GROUP" | "HAVING" | "ORDER" | "LIMIT" | "UNION"
                    | "EXCEPT" | "INTERSECT" | "INTO" | "WINDOW" | "FOR" | "LOCK" => {
                        here.into_iter().filter(|f| f.1).for_each(|f| f.0 = false)
                    }
                    _ => {}
                }
                if up == "BY" && (prev_word == "ORDER" || prev_word == "GROUP") {
                    positional = true;
                    in_order_list = true;
                } else if matches!(
                    up.as_str(),
                    "LIMIT" | "HAVING" | "FOR" | "LOCK" | "UNION" | "WHERE"
                ) {
                    in_order_list = false;
                    positional = false;
                } else {
                    positional = false;
                }
                // A charset introducer (`_utf8mb4'x'`, `N'x'`, `X'..'`, `B'..'`) glues to
                // the string after it: leave that literal as written.
                if w.starts_with('_') || matches!(up.as_str(), "N" | "X" | "B" | "INTERVAL") {
                    prev_word = up;
                    out.push_str(&sql[i..end]);
                    if let (Tok::Str(..), e2) = next_token(s, end.min(s.len() - 1)) {
                        if end < s.len() && !s[end].is_ascii_whitespace() {
                            out.push_str(&sql[end..e2]);
                            i = e2;
                            continue;
                        }
                    }
                    i = end;
                    continue;
                }
                prev_word = up;
            }
            Tok::Number(_) | Tok::Str(..)
                if case_depth > 0 || branch_args.last().copied().unwrap_or(false) => {}
            Tok::Number(text) if !in_select_list(&select_list) && !positional => {
                if let Some(v) = number_value(text) {
                    values.push(v);
                    replaced = true;
                }
            }
            Tok::Str(q, body) if !in_select_list(&select_list) && !positional => {
                values.push(Value::Bytes(unescape(body, *q)));
                replaced = true;
            }
            Tok::Other => {
                let c = s[i];
                if c == b'(' {
                    depth += 1;
                    let inherited = in_select_list(&select_list);
                    select_list.push((inherited, false));
                    let in_branch = branch_args.last().copied().unwrap_or(false);
                    branch_args.push(in_branch || branch_call_next);
                } else if c == b')' {
                    depth -= 1;
                    if select_list.len() > 1 {
                        select_list.pop();
                    }
                    if branch_args.len() > 1 {
                        branch_args.pop();
                    }
                } else if c == b',' && in_order_list && depth == 0 {
                    positional = true;
                }
            }
            _ => positional = false,
        }
        if !matches!(tok, Tok::Word(_)) && !is_blank(&s[i..end]) {
            branch_call_next = false;
        }
        if replaced {
            out.push('?');
            out.push_str(&values.len().to_string());
            positional = false;
        } else {
            out.push_str(&sql[i..end]);
        }
        i = end;
    }
    if values.is_empty() && first != "SELECT" {
        // Nothing to share between statements, but still a valid key.
        return Some((out, values));
    }
    Some((out, values))
}

/// The text of every select-list item of every query block in `sql`, nested ones
/// included, as written (modifiers such as `DISTINCT` and surrounding blanks left out).
/// MySQL names an unaliased expression column by this text (`SELECT 1+1` → `1+1`).
pub fn select_items<'a>(sql: &'a str) -> Vec<&'a str> {
    const LIST_END: [&str; 13] = [
        "FROM",
        "WHERE",
        "GROUP",
        "HAVING",
        "ORDER",
        "LIMIT",
        "UNION",
        "EXCEPT",
        "INTERSECT",
        "INTO",
        "WINDOW",
        "FOR",
        "LOCK",
    ];
    const MODIFIERS: [&str; 10] = [
        "ALL",
        "DISTINCT",
        "DISTINCTROW",
        "HIGH_PRIORITY",
        "STRAIGHT_JOIN",
        "SQL_SMALL_RESULT",
        "SQL_BIG_RESULT",
        "SQL_BUFFER_RESULT",
        "SQL_NO_CACHE",
        "SQL_CALC_FOUND_ROWS",
    ];
    /// One SELECT list being read: its parenthesis depth and where its item began
    /// (None until the first token after the modifiers).
    struct List {
        depth: i32,
        start: Option<usize>,
    }
    let s = sql.as_bytes();
    let mut items = Vec::new();
    let mut lists: Vec<List> = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    let close = |items: &mut Vec<&'a str>, start: Option<usize>, end: usize| {
        if let Some(a) = start {
            let text = sql[a..end].trim();
            if !text.is_empty() {
                items.push(text);
            }
        }
    };
    while i < s.len() {
        let (tok, end) = next_token(s, i);
        let blank = matches!(tok, Tok::Other)
            && (s[i].is_ascii_whitespace()
                || s[i..].starts_with(b"/*")
                || s[i] == b'#'
                || s[i..].starts_with(b"--"));
        let in_list = lists.last().is_some_and(|l| l.depth == depth);
        match tok {
            Tok::Word(w) if in_list && LIST_END.iter().any(|k| k.eq_ignore_ascii_case(w)) => {
                if let Some(l) = lists.pop() {
                    close(&mut items, l.start, i);
                }
            }
            Tok::Word(w)
                if in_list
                    && lists.last().is_some_and(|l| l.start.is_none())
                    && MODIFIERS.iter().any(|k| k.eq_ignore_ascii_case(w)) => {}
            Tok::Word(w) if w.eq_ignore_ascii_case("SELECT") => {
                if let Some(l) = lists
                    .last_mut()
                    .filter(|l| l.depth == depth && l.start.is_none())
                {
                    l.start = Some(i);
                }
                lists.push(List { depth, start: None });
            }
            Tok::Other if !blank && s[i] == b'(' => {
                if let Some(l) = lists
                    .last_mut()
                    .filter(|l| l.depth == depth && l.start.is_none())
                {
                    l.start = Some(i);
                }
                depth += 1;
            }
            Tok::Other if !blank && (s[i] == b')' || s[i] == b';') => {
                if s[i] == b')' {
                    depth -= 1;
                }
                while let Some(l) = lists.last().filter(|l| l.depth > depth || s[i] == b';') {
                    let start = l.start;
                    lists.pop();
                    close(&mut items, start, i);
                }
            }
            Tok::Other if in_list && !blank && s[i] == b',' => {
                if let Some(l) = lists.last_mut() {
                    close(&mut items, l.start.take(), i);
                }
            }
            _ if blank => {}
            _ => {
                if let Some(l) = lists
                    .last_mut()
                    .filter(|l| l.depth == depth && l.start.is_none())
                {
                    l.start = Some(i);
                }
            }
        }
        i = end.max(i + 1);
    }
    while let Some(l) = lists.pop() {
        close(&mut items, l.start, s.len());
    }
    items
}

/// Whitespace or a comment: what may stand between a function's name and its `(`.
fn is_blank(span: &[u8]) -> bool {
    span.iter().all(|b| b.is_ascii_whitespace())
        || span.starts_with(b"/*")
        || span.starts_with(b"#")
        || span.starts_with(b"--")
}

fn in_select_list(levels: &[(bool, bool)]) -> bool {
    levels.last().is_some_and(|l| l.0)
}

/// Splits a multi-statement text at top-level `;` (outside quotes and comments).
/// Empty pieces are dropped.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let s = sql.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    // Inside a stored program's body (CREATE TRIGGER/PROCEDURE/FUNCTION … BEGIN … END)
    // a `;` ends a statement of the body, not the client's statement: `blocks` counts
    // the open BEGIN and CASE (closed by END, END CASE; END IF/LOOP/WHILE/REPEAT close
    // statements whose openers are not counted).
    let mut program: Option<bool> = None;
    let mut blocks = 0usize;
    // An END seen, waiting for the next token to say what it closes.
    let mut pending_end = false;
    while i < s.len() {
        let (tok, end) = next_token(s, i);
        let comment =
            matches!(s[i], b'#' | b'-' | b'/') && matches!(tok, Tok::Other) && end > i + 1;
        let significant = !s[i].is_ascii_whitespace() && !comment;
        if significant && program.is_none() {
            program = Some(starts_stored_program(&sql[start..]));
        }
        if significant && program == Some(true) {
            let word = match tok {
                Tok::Word(w) => Some(w),
                _ => None,
            };
            let is = |k: &str| word.is_some_and(|w| w.eq_ignore_ascii_case(k));
            let mut consumed = false;
            if pending_end {
                pending_end = false;
                if is("IF") || is("LOOP") || is("WHILE") || is("REPEAT") {
                    consumed = true;
                } else if is("CASE") {
                    blocks = blocks.saturating_sub(1);
                    consumed = true;
                } else {
                    blocks = blocks.saturating_sub(1);
                }
            }
            if !consumed {
                if is("BEGIN") || is("CASE") {
                    blocks += 1;
                } else if is("END") {
                    pending_end = true;
                }
            }
        }
        if s[i] == b';' && blocks == 0 {
            program = None;
            let piece = sql[start..i].trim();
            if !piece.is_empty() {
                out.push(piece);
            }
            start = i + 1;
        }
        i = end.max(i + 1);
    }
    let piece = sql[start..].trim();
    if !piece.is_empty() {
        out.push(piece);
    }
    out
}

/// Whether a statement is CREATE [DEFINER = …] {TRIGGER|PROCEDURE|FUNCTION|EVENT}.
fn starts_stored_program(sql: &str) -> bool {
    // The keyword comes within the first few words: read no more of a long text.
    let mut cut = sql.len().min(256);
    while !sql.is_char_boundary(cut) {
        cut -= 1;
    }
    // mysqldump wraps the words in version comments: `/*!50003 CREATE*/ /*!50017
    // DEFINER=…*/ /*!50003 TRIGGER …`; their markers are not words.
    let mut plain = String::with_capacity(cut);
    let b = &sql.as_bytes()[..cut];
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') && b.get(i + 2) == Some(&b'!') {
            i += 3;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            plain.push(' ');
            continue;
        }
        if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            i += 2;
            plain.push(' ');
            continue;
        }
        let start = i;
        i += 1;
        while i < b.len() && !sql.is_char_boundary(i) {
            i += 1;
        }
        plain.push_str(&sql[start..i]);
    }
    let w = crate::statements::show::words(&plain);
    let mut i = 0;
    if !w.first().is_some_and(|x| x.eq_ignore_ascii_case("CREATE")) {
        return false;
    }
    i += 1;
    if w.get(i).is_some_and(|x| x.eq_ignore_ascii_case("DEFINER")) {
        // DEFINER = name [@host]: skip to the object keyword.
        i += 1;
        while i < w.len().min(12) {
            let x = &w[i];
            if ["TRIGGER", "PROCEDURE", "FUNCTION", "EVENT"]
                .iter()
                .any(|k| x.eq_ignore_ascii_case(k))
            {
                return true;
            }
            i += 1;
        }
        return false;
    }
    if w.get(i)
        .is_some_and(|x| x.eq_ignore_ascii_case("AGGREGATE"))
    {
        i += 1;
    }
    w.get(i).is_some_and(|x| {
        ["TRIGGER", "PROCEDURE", "FUNCTION", "EVENT"]
            .iter()
            .any(|k| x.eq_ignore_ascii_case(k))
    })
}

/// The server version executable comments are compared with (`/*!50503 ... */` runs on
/// 5.5.3 and later): MySQL 8.0.36, the version Strata reports.
pub const EXECUTABLE_COMMENT_VERSION: u32 = 80036;

/// A statement that is one executable comment, as mysqldump writes them
/// (`/*!40101 SET NAMES utf8mb4 */`), becomes its content when its version is not newer
/// than ours, and nothing when it is, or when it is MariaDB's `/*M!...*/` form (which a
/// MySQL server reads as a plain comment). None when the statement is not of that shape.
pub fn unwrap_executable_comment(sql: &str) -> Option<&str> {
    let t = skip_leading_comments(sql);
    if t.is_empty() && t.len() != sql.trim().len() {
        return Some("");
    }
    let mariadb = t.starts_with("/*M!");
    if !(t.starts_with("/*!") || mariadb) || !t.ends_with("*/") || t.len() < 5 {
        return None;
    }
    let body = &t[if mariadb { 4 } else { 3 }..t.len() - 2];
    // The comment must close only at the end.
    if body.contains("*/") {
        return None;
    }
    let digits = body.bytes().take_while(|b| b.is_ascii_digit()).count();
    if mariadb {
        return Some("");
    }
    let version: u32 = if digits == 0 {
        0
    } else {
        body[..digits].parse().unwrap_or(u32::MAX)
    };
    if version > EXECUTABLE_COMMENT_VERSION {
        return Some("");
    }
    Some(body[digits..].trim())
}

/// Version comments anywhere in a statement: `/*!NNNNN text */` becomes ` text ` when
/// version NNNNN is not newer than ours (`/*! text */`, without digits, always), and a
/// space when it is; MariaDB's `/*M!NNNNNN text */`, a plain comment to MySQL, becomes a
/// space. String literals, quoted identifiers and plain comments are left alone. None
/// when the statement has no such comment (the common case: nothing is copied).
pub fn expand_version_comments(sql: &str) -> Option<String> {
    if !sql.contains("/*!") && !sql.contains("/*M!") {
        return None;
    }
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let (mut i, mut copied, mut changed) = (0, 0, false);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' && q != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'#' => i = sql[i..].find('\n').map_or(b.len(), |n| i + n),
            b'-' if sql[i..].starts_with("-- ") => {
                i = sql[i..].find('\n').map_or(b.len(), |n| i + n)
            }
            b'/' if sql[i..].starts_with("/*") => {
                let Some(len) = sql[i + 2..].find("*/") else {
                    break;
                };
                let end = i + 2 + len + 2;
                let inner = &sql[i + 2..end - 2];
                let body = if let Some(v) = inner.strip_prefix('!') {
                    let digits = v.bytes().take_while(|c| c.is_ascii_digit()).count();
                    let version: u32 = v[..digits].parse().unwrap_or(0);
                    let newer = digits > 0 && (version > EXECUTABLE_COMMENT_VERSION);
                    Some(if newer { "" } else { &v[digits..] })
                } else if inner.starts_with("M!") {
                    Some("")
                } else {
                    None
                };
                if let Some(body) = body {
                    out.push_str(&sql[copied..i]);
                    out.push(' ');
                    out.push_str(body);
                    out.push(' ');
                    copied = end;
                    changed = true;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&sql[copied.min(sql.len())..]);
    Some(out)
}

/// The statement after any leading plain comments (`/* */`, `-- `, `#`) and MariaDB
/// `/*M!...*/` comments, which a MySQL server ignores.
fn skip_leading_comments(sql: &str) -> &str {
    let mut t = sql.trim();
    loop {
        if t.starts_with("/*") && !t.starts_with("/*!") {
            match t[2..].find("*/") {
                Some(end) => t = t[end + 4..].trim(),
                None => return t,
            }
        } else if t.starts_with("-- ") || t.starts_with('#') || t == "--" {
            match t.find('\n') {
                Some(end) => t = t[end + 1..].trim(),
                None => return "",
            }
        } else {
            return t;
        }
    }
}

/// SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*) WARNINGS/ERRORS: the statements that read
/// the diagnostics area instead of starting a new one.
pub fn is_diagnostics_statement(sql: &str) -> bool {
    if first_word(sql) != "SHOW" {
        return false;
    }
    let upper = sql.to_ascii_uppercase();
    let w: Vec<&str> = upper
        .split(|c: char| c.is_ascii_whitespace() || c == ';')
        .filter(|x| !x.is_empty())
        .collect();
    matches!(w.get(1), Some(&"WARNINGS") | Some(&"ERRORS"))
        || (w.get(1).is_some_and(|x| x.starts_with("COUNT"))
            && w.iter().any(|x| *x == "WARNINGS" || *x == "ERRORS"))
}

/// The first word of a statement, upper-cased (skipping leading comments, but not
/// `/*! ... */` executable comments, whose content counts).
pub fn first_word(sql: &str) -> String {
    let s = sql.as_bytes();
    let mut i = 0;
    while i < s.len() {
        if s[i].is_ascii_whitespace() || s[i] == b'(' {
            i += 1;
            continue;
        }
        if s[i] == b'/' && s.get(i + 1) == Some(&b'*') && s.get(i + 2) == Some(&b'!') {
            i += 3;
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        }
        let (tok, end) = next_token(s, i);
        match tok {
            Tok::Word(w) => return w.to_ascii_uppercase(),
            Tok::Other if end > i + 1 => i = end,
            _ => return String::new(),
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {

    #[test]
    fn split_keeps_stored_program_bodies_whole() {
        let body = "CREATE TRIGGER t1 BEFORE INSERT ON t FOR EACH ROW BEGIN \
                    IF NEW.a > 0 THEN SET NEW.b = CASE WHEN NEW.a = 1 THEN 1 ELSE 2 END; END IF; \
                    WHILE 0 DO SET @x = 1; END WHILE; CASE NEW.a WHEN 1 THEN SET @y = 1; END CASE; END";
        let text = format!("SELECT 1; {body}; SELECT 2");
        assert_eq!(split_statements(&text), vec!["SELECT 1", body, "SELECT 2"]);
        // As mysqldump writes a trigger: the words inside version comments.
        let dumped = "/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`%`*/ /*!50003 TRIGGER z \
                      BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; END */";
        assert_eq!(
            split_statements(&format!("{dumped}; DO 1")),
            vec![dumped, "DO 1"]
        );
        // Other statements split at every `;` as before.
        assert_eq!(
            split_statements("SELECT 'a;b'; SELECT 3"),
            vec!["SELECT 'a;b'", "SELECT 3"]
        );
    }

    use super::*;

    #[test]
    fn backslash_percent_and_underscore_keep_their_backslash() {
        assert_eq!(unescape(br"b\_c", b'\''), br"b\_c".to_vec());
        assert_eq!(unescape(br"50\%", b'\''), br"50\%".to_vec());
        assert_eq!(unescape(br"a\nb\qc\\d", b'\''), b"a\nbqc\\d".to_vec());
    }

    #[test]
    fn nesting_bound_counts_chains_and_groups_not_lists() {
        let chain = format!("SELECT 1{}", "+1".repeat(1200));
        assert!(nesting_bound(&chain) > 1200);
        let nested = format!("SELECT {}1{}", "(".repeat(300), ")".repeat(300));
        assert!(nesting_bound(&nested) > 300);
        let list = format!("SELECT * FROM t WHERE id IN (1{})", ",-1".repeat(5000));
        assert!(nesting_bound(&list) < 30, "{}", nesting_bound(&list));
        let values = format!("INSERT INTO t VALUES (1+1){}", ",(1+1)".repeat(5000));
        assert!(nesting_bound(&values) < 30);
        // Operators inside strings and comments do not count.
        let quoted = format!("SELECT '{}' /* {} */", "+".repeat(5000), "+".repeat(5000));
        assert!(nesting_bound(&quoted) < 5, "{}", nesting_bound(&quoted));
        // An unclosed group still counts.
        assert!(nesting_bound(&format!("SELECT {}", "(".repeat(100))) > 100);
    }

    #[test]
    fn placeholders_get_numbers_outside_strings() {
        assert_eq!(
            unnumber_placeholders("CONCAT(?3, '?1') + ?12"),
            "CONCAT(?, '?1') + ?"
        );
        let (t, n) = number_placeholders("SELECT '?' , ? FROM t WHERE a=? -- ?\n");
        assert_eq!(t, "SELECT '?' , ?1 FROM t WHERE a=?2 -- ?\n");
        assert_eq!(n, 2);
    }

    #[test]
    fn sysbench_shapes_normalize() {
        let (k, v) = normalize("SELECT c FROM sbtest1 WHERE id=5023").unwrap();
        assert_eq!(k, "SELECT c FROM sbtest1 WHERE id=?1");
        assert_eq!(v, vec![Value::Int(5023)]);
        let (k2, _) = normalize("SELECT c FROM sbtest1 WHERE id=77").unwrap();
        assert_eq!(k, k2);
        let (k, v) = normalize("INSERT INTO t (id, c) VALUES (0, 'it''s\\n')").unwrap();
        assert_eq!(k, "INSERT INTO t (id, c) VALUES (?1, ?2)");
        assert_eq!(v[1], Value::Bytes(b"it's\n".to_vec()));
    }

    #[test]
    fn statements_split_outside_quotes() {
        assert_eq!(
            split_statements("SELECT ';'; SELECT 2;"),
            vec!["SELECT ';'", "SELECT 2"]
        );
        assert_eq!(first_word("  /* c */ select 1"), "SELECT");
        assert_eq!(first_word("/*!40101 SET x=1 */"), "SET");
        assert_eq!(
            unwrap_executable_comment("/*!40101 SET x=1 */"),
            Some("SET x=1")
        );
        assert_eq!(unwrap_executable_comment(" /*!SET x=1*/ "), Some("SET x=1"));
        assert_eq!(unwrap_executable_comment("/*!90000 SET x=1 */"), Some(""));
        assert_eq!(unwrap_executable_comment("/*M!100101 SET x=1 */"), Some(""));
        assert_eq!(
            unwrap_executable_comment("/*!40101 SET x=1 */ + /*!1 */"),
            None
        );
        assert_eq!(unwrap_executable_comment("SET x=1"), None);
    }

    #[test]
    fn version_comments_inside_statements() {
        let x = |s: &str| {
            expand_version_comments(s).map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        };
        assert_eq!(
            x("START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */"),
            Some("START TRANSACTION WITH CONSISTENT SNAPSHOT".into())
        );
        assert_eq!(x("SELECT 1 /*!80036 + 1 */"), Some("SELECT 1 + 1".into()));
        assert_eq!(x("SELECT 1 /*!80037 + 1 */"), Some("SELECT 1".into()));
        assert_eq!(x("SELECT 1 /*!99999 + 1 */"), Some("SELECT 1".into()));
        assert_eq!(x("SELECT 1 /*! + 2 */"), Some("SELECT 1 + 2".into()));
        assert_eq!(x("SELECT 1 /*M!100100 + 2 */"), Some("SELECT 1".into()));
        // Inside literals, quoted names and plain comments: untouched.
        assert_eq!(x("SELECT '/*!40100 x */'"), None);
        assert_eq!(x("SELECT 'it\\'s /*!1 x */'"), None);
        assert_eq!(x("SELECT `a/*!1 b*/`"), None);
        assert_eq!(x("SELECT 1 /* /*!1 x */"), None);
        assert_eq!(x("SELECT 1 -- /*!1 x */\n"), None);
        assert_eq!(x("SELECT /*+ BKA(t) */ 1"), None);
        // Unclosed: left for the parser to refuse.
        assert_eq!(x("SELECT 1 /*!40100 x"), None);
        assert_eq!(
            unwrap_executable_comment("/*M!999999\\- sandbox */ \n\n/*!40101 SET x=1 */"),
            Some("SET x=1")
        );
        assert_eq!(
            unwrap_executable_comment("-- hi\n/*!SET x=1 */"),
            Some("SET x=1")
        );
        assert_eq!(unwrap_executable_comment("/* only a comment */"), Some(""));
    }

    #[test]
    fn select_items_are_found_as_written() {
        assert_eq!(
            select_items("SELECT DISTINCT 1+1 ,  a  +  b AS x, CONCAT('a','b') FROM t WHERE 1"),
            ["1+1", "a  +  b AS x", "CONCAT('a','b')"]
        );
        // Nested blocks, in the order their lists end; commas inside calls and
        // subqueries do not split an item.
        assert_eq!(
            select_items("SELECT (SELECT x+1 FROM u), f(a, b) FROM (SELECT 2 * 3) AS d"),
            ["x+1", "(SELECT x+1 FROM u)", "f(a, b)", "2 * 3"]
        );
        assert_eq!(select_items("SELECT 1+1; SELECT 2"), ["1+1", "2"]);
        assert_eq!(
            select_items("SELECT /* hint */ SQL_NO_CACHE a-1 UNION SELECT 'x,y'"),
            ["a-1", "'x,y'"]
        );
        assert_eq!(select_items("INSERT INTO t SELECT a||b FROM u"), ["a||b"]);
    }

    #[test]
    fn branch_literals_stay_in_the_key() {
        // A branch's literal types the result (`COALESCE(d, 'x')` is a string): it is
        // not a placeholder. The comparison's literals around the calls still are.
        let (k, v) = normalize(
            "SELECT a FROM t WHERE COALESCE (d, '2019-12-31') > 'b' AND IF(x > 1, y, 2) = 3",
        )
        .unwrap();
        assert_eq!(
            k,
            "SELECT a FROM t WHERE COALESCE (d, '2019-12-31') > ?1 AND IF(x > 1, y, 2) = ?2"
        );
        assert_eq!(v.len(), 2);
        let (k, v) = normalize(
            "SELECT a FROM t WHERE CASE WHEN x = 1 THEN d ELSE 'z' END >= 'q' AND (b) = 4",
        )
        .unwrap();
        assert_eq!(
            k,
            "SELECT a FROM t WHERE CASE WHEN x = 1 THEN d ELSE 'z' END >= ?1 AND (b) = ?2"
        );
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn select_list_literals_stay_in_the_key_at_any_depth() {
        // The derived table's column is named `1+1`: two texts that differ there must
        // not share a plan.
        let (k, v) =
            normalize("SELECT * FROM (SELECT 1+1 FROM t WHERE a = 5) AS d WHERE b = 7").unwrap();
        assert_eq!(
            k,
            "SELECT * FROM (SELECT 1+1 FROM t WHERE a = ?1) AS d WHERE b = ?2"
        );
        assert_eq!(v.len(), 2);
        // FROM inside a call does not end the select list.
        let (k, v) = normalize(
            "SELECT EXTRACT(DAY FROM '2024-01-02'), TRIM(LEADING 'x' FROM 'xa') FROM t WHERE a = 1",
        )
        .unwrap();
        assert_eq!(
            k,
            "SELECT EXTRACT(DAY FROM '2024-01-02'), TRIM(LEADING 'x' FROM 'xa') FROM t WHERE a = ?1"
        );
        assert_eq!(v.len(), 1);
    }

    #[test]
    fn text_that_matters_stays() {
        let (k, v) = normalize("SELECT 1, 'a' FROM t WHERE x > 2 ORDER BY 1, 2 LIMIT 5").unwrap();
        assert_eq!(
            k,
            "SELECT 1, 'a' FROM t WHERE x > ?1 ORDER BY 1, 2 LIMIT ?2"
        );
        assert_eq!(v.len(), 2);
        assert!(normalize("CREATE TABLE t (a int)").is_none());
        assert!(normalize("SELECT ? FROM t").is_none());
        let (k, _) = normalize("SELECT a FROM t WHERE b = _utf8mb4'x'").unwrap();
        assert!(k.ends_with("_utf8mb4'x'"));
    }
}
