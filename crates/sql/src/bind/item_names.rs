//! The names MySQL gives unaliased select-list columns.
//!
//! MySQL names a column that has no alias by the text of its expression as the client
//! wrote it: `SELECT 1+1, CONCAT('a','b')` has columns `1+1` and `CONCAT('a','b')`, not
//! the parser's re-printed `1 + 1` and `CONCAT('a', 'b')`. Drivers that return rows as
//! maps key them by these names, and a derived table's columns are referred to by them.
//! The syntax tree does not keep the text (its spans are not exact), so the statement's
//! select items are cut from the text by [`crate::parse::lex::select_items`], each parsed alone
//! and filed under its re-printed form; the planner looks a column up by the re-printed
//! form of its expression. A column reference or a literal is named as before (`t.a` is
//! `a`, `'x'` is `x`).

use sqlparser::ast;
use std::collections::HashMap;

/// Re-printed expression → its text as written, for one statement.
#[derive(Default, Debug)]
pub struct ItemNames(HashMap<String, String>);

impl ItemNames {
    /// Collects the select items of `sql` (the text the statement was parsed from).
    pub fn of(sql: &str) -> ItemNames {
        let mut names = HashMap::new();
        for item in crate::parse::lex::select_items(sql) {
            let Ok(stmts) = crate::parse::parse(&format!("SELECT {item}")) else {
                continue;
            };
            let [ast::Statement::Query(q)] = stmts.as_slice() else {
                continue;
            };
            let ast::SetExpr::Select(s) = q.body.as_ref() else {
                continue;
            };
            if let [ast::SelectItem::UnnamedExpr(e)] = s.projection.as_slice() {
                names
                    .entry(e.to_string())
                    .or_insert_with(|| crate::parse::lex::unnumber_placeholders(item));
            }
        }
        ItemNames(names)
    }

    /// The select items of `text` (a stored program's statement with its variables as
    /// placeholders) named by the items of `source` (the same statement as written):
    /// `SELECT v` names its column `v`, as MySQL does.
    pub fn paired(text: &str, source: &str) -> ItemNames {
        let mut names = HashMap::new();
        let items = crate::parse::lex::select_items(text);
        let written = crate::parse::lex::select_items(source);
        if items.len() != written.len() {
            return ItemNames::of(text);
        }
        for (item, name) in items.iter().zip(written) {
            let Ok(stmts) = crate::parse::parse(&format!("SELECT {item}")) else {
                continue;
            };
            let [ast::Statement::Query(q)] = stmts.as_slice() else {
                continue;
            };
            let ast::SetExpr::Select(s) = q.body.as_ref() else {
                continue;
            };
            if let [ast::SelectItem::UnnamedExpr(e)] = s.projection.as_slice() {
                names
                    .entry(e.to_string())
                    .or_insert_with(|| name.to_string());
            }
        }
        ItemNames(names)
    }

    /// The name of the unaliased select item `e`.
    pub fn name(&self, e: &ast::Expr) -> String {
        if let Some(name) = crate::bind::charset_info::name_const_column(e) {
            return name;
        }
        match e {
            ast::Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)) => {
                match self.0.get(&e.to_string()) {
                    Some(text) => text.clone(),
                    None => printed_name(e),
                }
            }
            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) | ast::Expr::Value(_) => {
                printed_name(e)
            }
            other => match self.0.get(&other.to_string()) {
                Some(text) => text.clone(),
                None => printed_name(other),
            },
        }
    }
}

/// The name from the re-printed expression: a column's own name, a string literal's
/// value, or the expression as the parser prints it.
fn printed_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(id) => id.value.clone(),
        ast::Expr::CompoundIdentifier(ids) => {
            let last = ids.last().map(|i| i.value.clone()).unwrap_or_default();
            if ids.first().is_some_and(|i| i.value.starts_with("@@")) {
                format!("{}.{}", ids[0].value, last)
            } else {
                last
            }
        }
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
            other => crate::parse::lex::unnumber_placeholders(&other.to_string()),
        },
        other => crate::parse::lex::unnumber_placeholders(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(sql: &str) -> Vec<ast::Expr> {
        let stmts = crate::parse::parse(sql).expect("parses");
        let [ast::Statement::Query(q)] = stmts.as_slice() else {
            panic!("a query")
        };
        let ast::SetExpr::Select(s) = q.body.as_ref() else {
            panic!("a block")
        };
        s.projection
            .iter()
            .map(|i| match i {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => e.clone(),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn columns_are_named_by_their_text_as_written() {
        let sql = "SELECT 1+1, CONCAT('a','b'),  count(*) , t.a, 'lit', -2, x  IS NOT NULL FROM t";
        let names = ItemNames::of(sql);
        let got: Vec<String> = items(sql).iter().map(|e| names.name(e)).collect();
        assert_eq!(
            got,
            [
                "1+1",
                "CONCAT('a','b')",
                "count(*)",
                "a",
                "lit",
                "-2",
                "x  IS NOT NULL"
            ]
        );
    }

    #[test]
    fn placeholders_are_shown_as_the_client_wrote_them() {
        let (numbered, _) = crate::parse::lex::number_placeholders("SELECT ?+1, ? FROM t");
        let names = ItemNames::of(&numbered);
        let got: Vec<String> = items(&numbered).iter().map(|e| names.name(e)).collect();
        assert_eq!(got, ["?+1", "?"]);
    }

    #[test]
    fn an_expression_not_in_the_text_keeps_its_printed_name() {
        let names = ItemNames::of("SELECT 1");
        assert_eq!(names.name(&items("SELECT a+b")[0]), "a + b");
    }
}
