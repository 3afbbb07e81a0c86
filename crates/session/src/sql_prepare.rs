//! SQL-level prepared statements: `PREPARE name FROM 'text' | @var`, `EXECUTE name
//! [USING @a, ...]`, `DEALLOCATE PREPARE name` / `DROP PREPARE name`.
//!
//! They are the session's binary-protocol prepared statements (COM_STMT_PREPARE's
//! [`Session::prepare`]) under a name: PREPARE prepares one and remembers its id, and
//! EXECUTE runs it with the user variables' values as its parameters. Names compare
//! case-insensitively, as in MySQL; PREPARE of a name in use replaces the statement.

use super::{PreparedStmt, Session, SessionEnv};
use strata_types::{Error, OkInfo, QueryOutput, Result, Value};

/// Splits an identifier (bare or back-quoted) off the front of `s`.
fn take_ident(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    if let Some(rest) = s.strip_prefix('`') {
        let end = rest.find('`')?;
        return Some((rest[..end].to_string(), &rest[end + 1..]));
    }
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(s.len());
    (end > 0).then(|| (s[..end].to_string(), &s[end..]))
}

/// Strips a keyword (case-insensitive, followed by a non-identifier character).
fn take_keyword<'a>(s: &'a str, kw: &str) -> Option<&'a str> {
    let s = s.trim_start();
    let head = s.get(..kw.len())?;
    let rest = &s[kw.len()..];
    let bounded = rest
        .chars()
        .next()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
    (head.eq_ignore_ascii_case(kw) && bounded).then_some(rest)
}

/// `PREPARE name FROM source`: (name, source text).
pub(crate) fn parse_prepare(sql: &str) -> Option<(String, &str)> {
    let rest = take_keyword(sql, "PREPARE")?;
    let (name, rest) = take_ident(rest)?;
    let source = take_keyword(rest, "FROM")?.trim();
    // MySQL takes a string literal or a user variable only.
    matches!(source.chars().next(), Some('\'' | '"' | '@')).then_some((name, source))
}

/// `EXECUTE name [USING @a, @b ...]`: (name, variable names).
pub(crate) fn parse_execute(sql: &str) -> Option<(String, Vec<String>)> {
    let rest = take_keyword(sql, "EXECUTE")?;
    let (name, rest) = take_ident(rest)?;
    let rest = rest.trim();
    if rest.is_empty() {
        return Some((name, Vec::new()));
    }
    let list = take_keyword(rest, "USING")?;
    let mut vars = Vec::new();
    for item in list.split(',') {
        let v = item.trim().strip_prefix('@')?;
        let v = v.trim_matches(|c| c == '`' || c == '\'' || c == '"');
        if v.is_empty() || v.starts_with('@') {
            return None;
        }
        vars.push(v.to_ascii_lowercase());
    }
    Some((name, vars))
}

/// `DEALLOCATE PREPARE name` / `DROP PREPARE name`: the name.
pub(crate) fn parse_deallocate(sql: &str) -> Option<String> {
    let rest = take_keyword(sql, "DEALLOCATE").or_else(|| take_keyword(sql, "DROP"))?;
    let rest = take_keyword(rest, "PREPARE")?;
    let (name, rest) = take_ident(rest)?;
    rest.trim().is_empty().then_some(name)
}

fn syntax(sql: &str) -> Error {
    Error::Syntax(sql.chars().take(80).collect())
}

impl Session {
    pub(crate) fn sql_prepare(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let (name, source) = parse_prepare(sql).ok_or_else(|| syntax(sql))?;
        let text = {
            let now = self.now();
            let env = SessionEnv::new(self, now);
            strata_sql::eval_constant(source, &env)?
        };
        if text.is_null() {
            return Err(Error::Syntax("NULL".into()));
        }
        // The old statement of this name goes even when the new one fails, as in MySQL.
        let key = name.to_ascii_lowercase();
        if let Some(old) = self.named_statements.remove(&key) {
            self.close_statement(old);
        }
        let (id, _, _) = self.prepare(&text.to_text())?;
        self.named_statements.insert(key, id);
        out.ok(&OkInfo {
            info: "Statement prepared".into(),
            ..OkInfo::default()
        })
    }

    pub(crate) fn sql_execute(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let (name, vars) = parse_execute(sql).ok_or_else(|| syntax(sql))?;
        let unknown = || Error::UnknownStmtHandler {
            name: name.clone(),
            op: "EXECUTE",
        };
        let id = *self
            .named_statements
            .get(&name.to_ascii_lowercase())
            .ok_or_else(unknown)?;
        let params: Vec<Value> = vars
            .iter()
            .map(|v| self.user_vars.lock().get(v).cloned().unwrap_or(Value::Null))
            .collect();
        match self.prepared.get(&id) {
            None => Err(unknown()),
            Some(PreparedStmt::Text(t)) => {
                if !params.is_empty() {
                    return Err(Error::ExecuteArguments);
                }
                let t = t.clone();
                self.run(&t, out)
            }
            Some(PreparedStmt::Sql(p)) => {
                if p.params != params.len() {
                    return Err(Error::ExecuteArguments);
                }
                let p = p.clone();
                self.execute_prepared(&p, &params, out)
            }
        }
    }

    pub(crate) fn sql_deallocate(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let name = parse_deallocate(sql).ok_or_else(|| syntax(sql))?;
        let id = self
            .named_statements
            .remove(&name.to_ascii_lowercase())
            .ok_or(Error::UnknownStmtHandler {
                name,
                op: "DEALLOCATE PREPARE",
            })?;
        self.close_statement(id);
        out.ok(&OkInfo::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_syntax() {
        assert_eq!(
            parse_prepare("PREPARE s1 FROM 'SELECT ?'"),
            Some(("s1".into(), "'SELECT ?'"))
        );
        assert_eq!(
            parse_prepare("prepare `my stmt` from @q"),
            Some(("my stmt".into(), "@q"))
        );
        assert_eq!(parse_prepare("PREPARE s FROM SELECT 1"), None);
        assert_eq!(parse_prepare("PREPARE s 'x'"), None);
        assert_eq!(parse_prepare("PREPAREs FROM 'x'"), None);
    }

    #[test]
    fn execute_and_deallocate_syntax() {
        assert_eq!(parse_execute("EXECUTE s"), Some(("s".into(), vec![])));
        assert_eq!(
            parse_execute("execute s using @a, @B"),
            Some(("s".into(), vec!["a".into(), "b".into()]))
        );
        assert_eq!(parse_execute("EXECUTE s USING 1"), None);
        assert_eq!(parse_execute("EXECUTE s USING @@x"), None);
        assert_eq!(parse_execute("EXECUTE s foo"), None);
        assert_eq!(parse_deallocate("DEALLOCATE PREPARE s"), Some("s".into()));
        assert_eq!(parse_deallocate("drop prepare `S`"), Some("S".into()));
        assert_eq!(parse_deallocate("DROP TABLE s"), None);
    }
}
