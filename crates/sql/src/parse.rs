//! sqlparser-rs with the MySQL dialect, and the mapping of its errors to MySQL's 1064
//! message, which quotes the statement from the point where parsing failed.

use sqlparser::ast::Statement;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use strata_types::{Error, Result};

/// Parses one or more `;`-separated statements.
pub fn parse(sql: &str) -> Result<Vec<Statement>> {
    Parser::parse_sql(&MySqlDialect {}, sql).map_err(|e| syntax_error(sql, &e.to_string()))
}

/// Builds MySQL's 1064 from a parser message containing `Line: L, Column: C`.
fn syntax_error(sql: &str, msg: &str) -> Error {
    let num_after = |key: &str| -> Option<usize> {
        let i = msg.rfind(key)? + key.len();
        msg[i..]
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let near = match (num_after("Line:"), num_after("Column:")) {
        (Some(line), Some(col)) => {
            let mut offset = 0;
            for (i, l) in sql.split_inclusive('\n').enumerate() {
                if i + 1 == line {
                    offset += l
                        .char_indices()
                        .nth(col.saturating_sub(1))
                        .map_or(l.len(), |(b, _)| b);
                    break;
                }
                offset += l.len();
            }
            // Back up to the start of the offending token.
            let rest = sql.get(offset.min(sql.len())..).unwrap_or("");
            let found = msg
                .rsplit("found: ")
                .next()
                .and_then(|f| f.split(" at Line").next())
                .unwrap_or("");
            match sql[..offset.min(sql.len())]
                .rfind(found)
                .filter(|_| !found.is_empty() && found != "EOF")
            {
                Some(start) if offset - start <= found.len() + 1 => &sql[start..],
                _ => rest,
            }
        }
        _ => "",
    };
    let near: String = near.chars().take(80).collect();
    Error::Syntax(near)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_quote_the_rest_of_the_statement() {
        let e = parse("SELEC 1").unwrap_err();
        assert_eq!(e.code(), 1064);
        let e = parse("SELECT * FROM t WHERE").unwrap_err();
        assert_eq!(e.code(), 1064);
        assert!(parse("SELECT 1; SELECT 2").unwrap().len() == 2);
    }
}
