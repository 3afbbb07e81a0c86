//! Parser of the classic sqllogictest script format, as the external corpus in
//! `shared/sqllogictest/` uses it (see its README): records separated by blank lines,
//! `statement ok|error`, `query <types> [sort] [label]` with `----` and the expected values
//! one per line (or `N values hashing to <md5>`), `skipif`/`onlyif <engine>` conditions,
//! `hash-threshold N` and `halt`. Lines starting with `#` are comments; a `#` after a
//! directive starts a trailing comment. SQL lines are kept verbatim (joined with newlines).

use std::fmt;

/// The engine name records are matched against in `skipif` / `onlyif`.
pub const ENGINE: &str = "mysql";

/// How a query's values are ordered before they are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortMode {
    /// In the order the server returned them.
    Unsorted,
    /// Rows sorted as lists of strings.
    Rows,
    /// All values sorted as strings, row boundaries ignored.
    Values,
}

/// What a query is expected to produce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// The values themselves, one per line, already in the record's sort order.
    Values(Vec<String>),
    /// `count values hashing to md5`: the md5 of all values, each followed by `\n`.
    Hash { count: usize, md5: String },
}

impl Expected {
    /// How many values the query must return.
    pub fn count(&self) -> usize {
        match self {
            Expected::Values(v) => v.len(),
            Expected::Hash { count, .. } => *count,
        }
    }
}

/// The body of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `statement ok` (`expect_error` false) or `statement error`.
    Statement { expect_error: bool },
    /// `query <types> <sort> [label]`.
    Query {
        types: String,
        sort: SortMode,
        label: Option<String>,
        expected: Expected,
    },
    /// `halt`: stop running the file here.
    Halt,
}

/// One `skipif` / `onlyif` line in front of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub only: bool,
    pub engine: String,
}

/// One record of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// 1-based line of the record's directive (`statement`, `query`, `halt`).
    pub line: usize,
    pub conditions: Vec<Condition>,
    pub kind: Kind,
    /// The SQL text (empty for `halt`).
    pub sql: String,
}

impl Record {
    /// Whether a `mysql` engine runs this record: any `skipif mysql` skips it, and every
    /// `onlyif` must name `mysql` (so `onlyif sqlite` records are skipped).
    pub fn runs_on(&self, engine: &str) -> bool {
        self.conditions.iter().all(|c| {
            if c.only {
                c.engine == engine
            } else {
                c.engine != engine
            }
        })
    }
}

/// A malformed script line.
#[derive(Debug)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The directive part of a line: the text before a trailing `# comment`.
fn directive(line: &str) -> &str {
    match line.find('#') {
        Some(i) => &line[..i],
        None => line,
    }
}

fn parse_sort(word: Option<&str>, line: usize) -> Result<SortMode, ParseError> {
    match word {
        None | Some("nosort") => Ok(SortMode::Unsorted),
        Some("rowsort") => Ok(SortMode::Rows),
        Some("valuesort") => Ok(SortMode::Values),
        Some(other) => Err(ParseError {
            line,
            message: format!("unknown sort mode {other:?}"),
        }),
    }
}

/// Reads `N values hashing to <md5>`, if the line is one.
fn parse_hash_line(line: &str) -> Option<Expected> {
    let mut words = line.split_whitespace();
    let count = words.next()?.parse::<usize>().ok()?;
    if words.next()? != "values" || words.next()? != "hashing" || words.next()? != "to" {
        return None;
    }
    let md5 = words.next()?;
    if words.next().is_some() || md5.len() != 32 || !md5.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some(Expected::Hash {
        count,
        md5: md5.to_ascii_lowercase(),
    })
}

/// Parses a whole script. `hash-threshold` lines are accepted and ignored: whether a
/// result is listed or hashed is read from the expected block itself.
pub fn parse(text: &str) -> Result<Vec<Record>, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut records = Vec::new();
    let mut conditions = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        let lineno = i + 1;
        i += 1;
        if raw.trim().is_empty() {
            // A blank line ends a record; conditions belong to the record they precede.
            conditions.clear();
            continue;
        }
        if raw.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = directive(raw).split_whitespace().collect();
        let Some(&head) = words.first() else {
            continue;
        };
        match head {
            "skipif" | "onlyif" => {
                let engine = words.get(1).ok_or_else(|| ParseError {
                    line: lineno,
                    message: format!("{head} without an engine name"),
                })?;
                conditions.push(Condition {
                    only: head == "onlyif",
                    engine: engine.to_string(),
                });
            }
            "hash-threshold" => {}
            "halt" => records.push(Record {
                line: lineno,
                conditions: std::mem::take(&mut conditions),
                kind: Kind::Halt,
                sql: String::new(),
            }),
            "statement" => {
                let expect_error = match words.get(1).copied() {
                    Some("ok") => false,
                    Some("error") => true,
                    other => {
                        return Err(ParseError {
                            line: lineno,
                            message: format!("statement expects ok or error, got {other:?}"),
                        })
                    }
                };
                let mut sql = Vec::new();
                while i < lines.len() && !lines[i].trim().is_empty() {
                    sql.push(lines[i]);
                    i += 1;
                }
                records.push(Record {
                    line: lineno,
                    conditions: std::mem::take(&mut conditions),
                    kind: Kind::Statement { expect_error },
                    sql: sql.join("\n"),
                });
            }
            "query" => {
                let types = words.get(1).ok_or_else(|| ParseError {
                    line: lineno,
                    message: "query without column types".into(),
                })?;
                if !types.chars().all(|c| matches!(c, 'I' | 'R' | 'T')) {
                    return Err(ParseError {
                        line: lineno,
                        message: format!("unknown column types {types:?}"),
                    });
                }
                let sort = parse_sort(words.get(2).copied(), lineno)?;
                let label = words.get(3).map(|s| s.to_string());
                let mut sql = Vec::new();
                let mut values = Vec::new();
                let mut in_results = false;
                while i < lines.len() && !lines[i].trim().is_empty() {
                    let l = lines[i];
                    i += 1;
                    if !in_results && l.trim() == "----" {
                        in_results = true;
                    } else if in_results {
                        values.push(l.trim_end().to_string());
                    } else {
                        sql.push(l);
                    }
                }
                let expected = match values.as_slice() {
                    [one] => parse_hash_line(one).unwrap_or(Expected::Values(values)),
                    _ => Expected::Values(values),
                };
                records.push(Record {
                    line: lineno,
                    conditions: std::mem::take(&mut conditions),
                    kind: Kind::Query {
                        types: types.to_string(),
                        sort,
                        label,
                        expected,
                    },
                    sql: sql.join("\n"),
                });
            }
            other => {
                return Err(ParseError {
                    line: lineno,
                    message: format!("unknown directive {other:?}"),
                })
            }
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_record_kind() {
        let text = "\
# a comment
hash-threshold 8

statement ok
CREATE TABLE t1(a INTEGER,
 b INTEGER)

onlyif sqlite # only there
statement error
SELECT nothing

skipif mysql
query IT rowsort label-1
SELECT a, b
  FROM t1
----
1
x
2
NULL

query R nosort
SELECT 1
----
9 values hashing to 0123456789abcdef0123456789ABCDEF

onlyif mysql
halt
";
        let recs = parse(text).expect("parses");
        assert_eq!(recs.len(), 5);
        assert_eq!(recs[0].line, 4);
        assert_eq!(recs[0].sql, "CREATE TABLE t1(a INTEGER,\n b INTEGER)");
        assert!(recs[0].runs_on(ENGINE));
        assert_eq!(recs[1].kind, Kind::Statement { expect_error: true });
        assert!(!recs[1].runs_on(ENGINE));
        assert!(!recs[2].runs_on(ENGINE));
        match &recs[2].kind {
            Kind::Query {
                types,
                sort,
                label,
                expected,
            } => {
                assert_eq!(types, "IT");
                assert_eq!(*sort, SortMode::Rows);
                assert_eq!(label.as_deref(), Some("label-1"));
                assert_eq!(expected.count(), 4);
            }
            other => panic!("not a query: {other:?}"),
        }
        assert_eq!(recs[2].sql, "SELECT a, b\n  FROM t1");
        match &recs[3].kind {
            Kind::Query { expected, .. } => assert_eq!(
                expected,
                &Expected::Hash {
                    count: 9,
                    md5: "0123456789abcdef0123456789abcdef".into()
                }
            ),
            other => panic!("not a query: {other:?}"),
        }
        assert_eq!(recs[4].kind, Kind::Halt);
        assert!(recs[4].runs_on(ENGINE));
    }

    #[test]
    fn empty_result_block_and_bad_directive() {
        let recs = parse("query I nosort\nSELECT 1 WHERE 0\n----\n").expect("parses");
        match &recs[0].kind {
            Kind::Query { expected, .. } => assert_eq!(expected, &Expected::Values(vec![])),
            other => panic!("not a query: {other:?}"),
        }
        assert!(parse("frobnicate\n").is_err());
        assert!(parse("query X\nSELECT 1\n").is_err());
    }
}
