//! `SHOW … LIKE 'pattern'` and `SHOW … WHERE condition`: which rows of a SHOW statement
//! are sent.
//!
//! MySQL evaluates a SHOW's WHERE over the rows it would send, under SHOW's own column
//! names (`SHOW TABLES WHERE Tables_in_d LIKE 't%'`, `SHOW COLUMNS FROM t WHERE Type =
//! 'int'`, `SHOW VARIABLES WHERE Value > 100`). Here the statement without its WHERE runs
//! first; its rows become a derived table of literal rows (each numbered), the SQL
//! executor evaluates the condition over it, and the rows whose numbers come back are sent
//! with the SHOW's own column definitions. Any expression MySQL allows there works, and
//! the SHOW's code needs to know nothing about filters.

use crate::Session;
use strata_types::output::{CollectedOutput, EndInfo, QueryOutput};
use strata_types::{Error, Result, SqlMode, Value};

/// Which rows a SHOW VARIABLES / SHOW STATUS sends.
pub(crate) enum ShowFilter {
    All,
    /// `LIKE 'pattern'` on the name.
    Like(String),
    /// `WHERE condition` (its text) on `Variable_name` and `Value`.
    Where(String),
}

/// The SHOW forms whose MySQL grammar ends in `[LIKE 'p' | WHERE cond]`, by their first
/// word after SHOW [GLOBAL|SESSION] (FULL and EXTENDED precede TABLES, COLUMNS and
/// INDEX); VARIABLES and STATUS have their own path.
const FILTERED_FORMS: [&str; 19] = [
    "FULL",
    "EXTENDED",
    "DATABASES",
    "SCHEMAS",
    "TABLES",
    "COLUMNS",
    "FIELDS",
    "INDEX",
    "INDEXES",
    "KEYS",
    "TABLE",
    "OPEN",
    "CHARACTER",
    "CHARSET",
    "COLLATION",
    "TRIGGERS",
    "EVENTS",
    "PROCEDURE",
    "FUNCTION",
];

/// Whether SHOW `form` (upper case) may end in a WHERE condition.
pub(crate) fn takes_where(form: &str) -> bool {
    FILTERED_FORMS.contains(&form)
}

/// The byte offset of the statement's first `WHERE` keyword: a whole word outside quoted
/// strings and identifiers (a table named `` `where` `` is not one).
pub(crate) fn where_keyword(sql: &str) -> Option<usize> {
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() {
                    if b[i] == b'\\' && q != b'`' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q {
                        // A doubled quote stays inside the string.
                        if b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                if sql[start..i].eq_ignore_ascii_case("where") {
                    return Some(start);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The filter after SHOW … VARIABLES/STATUS: `w[at..]` are the words that follow.
pub(crate) fn show_filter(sql: &str, w: &[String], at: usize) -> Result<ShowFilter> {
    match w.get(at).map(|x| x.to_ascii_uppercase()).as_deref() {
        None => Ok(ShowFilter::All),
        Some("LIKE") if w.len() == at + 2 => Ok(ShowFilter::Like(
            w[at + 1].trim_start_matches('\u{0}').to_string(),
        )),
        Some("WHERE") if w.len() > at + 1 => {
            let pos =
                where_keyword(sql).ok_or_else(|| Error::Syntax(sql.chars().take(80).collect()))?;
            Ok(ShowFilter::Where(sql[pos + 5..].to_string()))
        }
        _ => Err(Error::Syntax(w[at..].join(" "))),
    }
}

/// A value as an SQL literal the executor reads back as the same value: numbers as
/// numbers (so `WHERE Maxlen > 1` compares numerically), NULL as NULL, everything else
/// as a string (quotes doubled; backslashes doubled unless the session reads them
/// literally).
fn literal(v: &Value, backslash_escapes: bool) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Decimal(_) | Value::Double(_) => v.to_text(),
        _ => {
            let mut text = v.to_text().replace('\'', "''");
            if backslash_escapes {
                text = text.replace('\\', "\\\\");
            }
            format!("'{text}'")
        }
    }
}

/// `SELECT <n> FROM (<one SELECT of literals per row, numbered>) AS s WHERE cond`: the
/// numbers of the rows that pass. `names` are the SHOW's column names.
pub(crate) fn numbers_passing(
    names: &[String],
    rows: &[Vec<Value>],
    cond: &str,
    backslash_escapes: bool,
) -> Option<String> {
    // A name no SHOW column has, for the row number.
    const NUMBER: &str = "`strata row number`";
    let selects: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(n, row)| {
            let mut items = vec![format!("{n} AS {NUMBER}")];
            for (name, v) in names.iter().zip(row) {
                items.push(format!(
                    "{} AS `{}`",
                    literal(v, backslash_escapes),
                    name.replace('`', "``")
                ));
            }
            format!("SELECT {}", items.join(", "))
        })
        .collect();
    if selects.is_empty() {
        return None;
    }
    Some(format!(
        "SELECT {NUMBER} FROM ({}) AS s WHERE {cond}",
        selects.join(" UNION ALL ")
    ))
}

impl Session {
    /// The row numbers of `rows` (under column `names`) for which `cond` holds. Only the
    /// columns marked `numeric` compare as numbers; the others' values are text, as the
    /// SHOW types them (`Value = 'OFF'` must not match a 0).
    pub(crate) fn rows_passing(
        &mut self,
        names: &[String],
        numeric: &[bool],
        rows: &[Vec<Value>],
        cond: &str,
    ) -> Result<std::collections::HashSet<usize>> {
        let typed: Vec<Vec<Value>> = rows
            .iter()
            .map(|row| {
                row.iter()
                    .zip(numeric)
                    .map(|(v, &num)| match v {
                        Value::Null => Value::Null,
                        v if num && v.is_numeric() => v.clone(),
                        v => Value::str(&v.to_text()),
                    })
                    .collect()
            })
            .collect();
        let escapes = !self.sql_mode.has(SqlMode::NO_BACKSLASH_ESCAPES);
        let Some(select) = numbers_passing(names, &typed, cond, escapes) else {
            return Ok(Default::default());
        };
        let mut found = CollectedOutput::default();
        self.run(&select, &mut found)?;
        Ok(found
            .rows
            .iter()
            .filter_map(|r| match r.first() {
                Some(Value::Int(n)) => usize::try_from(*n).ok(),
                Some(Value::UInt(n)) => usize::try_from(*n).ok(),
                _ => None,
            })
            .collect())
    }

    /// `SHOW … WHERE cond`: runs the SHOW before `where_at` and sends the rows that pass.
    pub(crate) fn show_where(
        &mut self,
        sql: &str,
        where_at: usize,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let cond = sql[where_at + 5..].trim();
        if cond.is_empty() {
            return Err(Error::Syntax(sql.chars().take(80).collect()));
        }
        let mut shown = CollectedOutput::default();
        self.run(sql[..where_at].trim_end(), &mut shown)?;
        let names: Vec<String> = shown.columns.iter().map(|c| c.name.clone()).collect();
        let numeric: Vec<bool> = shown
            .columns
            .iter()
            .map(|c| {
                use strata_types::output::FieldType::*;
                matches!(
                    c.field_type,
                    Tiny | Short | Long | LongLong | Int24 | Decimal | NewDecimal | Double | Float
                )
            })
            .collect();
        let keep = self.rows_passing(&names, &numeric, &shown.rows, cond)?;
        out.columns(&shown.columns)?;
        let mut sent = 0;
        for (n, row) in shown.rows.iter().enumerate() {
            if keep.contains(&n) {
                out.row(row)?;
                sent += 1;
            }
        }
        self.found_rows = sent;
        out.end(&EndInfo::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_where_keyword_is_found_outside_quotes_only() {
        assert_eq!(where_keyword("SHOW TABLES WHERE x = 1"), Some(12));
        assert_eq!(
            where_keyword("show columns from `where` where Field='a'"),
            Some(26)
        );
        assert_eq!(where_keyword("SHOW TABLES LIKE 'where'"), None);
        assert_eq!(where_keyword("SHOW TABLES FROM nowhere"), None);
        assert_eq!(
            where_keyword("SHOW TABLES LIKE 'it''s where' WHERE a"),
            Some(31)
        );
    }

    #[test]
    fn rows_become_numbered_literal_selects() {
        let names = vec!["Charset".to_string(), "Maxlen".to_string()];
        let rows = vec![
            vec![Value::str("a'b\\"), Value::Int(4)],
            vec![Value::Null, Value::UInt(1)],
        ];
        let q = numbers_passing(&names, &rows, "Maxlen > 1", true).unwrap();
        assert_eq!(
            q,
            "SELECT `strata row number` FROM (SELECT 0 AS `strata row number`, 'a''b\\\\' AS \
             `Charset`, 4 AS `Maxlen` UNION ALL SELECT 1 AS `strata row number`, NULL AS \
             `Charset`, 1 AS `Maxlen`) AS s WHERE Maxlen > 1"
        );
        let q = numbers_passing(&names, &rows[..1], "1", false).unwrap();
        assert!(q.contains("'a''b\\' AS"), "{q}");
        assert_eq!(numbers_passing(&names, &[], "1", true), None);
    }
}
