//! The text SHOW CREATE VIEW (and SHOW CREATE TABLE of a view) prints for a view's
//! query: MySQL 8 prints its own normalised form rather than what the client wrote — lower-case keywords, every column qualified and backquoted, every select item
//! with ` AS ` its name, `*` expanded, each comparison and each AND/OR in parentheses:
//! ``select `t`.`a` AS `a`,`t`.`b` AS `b` from `t` where (`t`.`a` > 1)``.
//!
//! Done here for the common shape, a SELECT over one table with a WHERE of comparisons,
//! arithmetic, AND/OR/NOT, IN lists, BETWEEN, LIKE, IS [NOT] NULL and plain function
//! calls; any other query is printed as written (so a dump still loads it). One
//! deviation: a string literal is printed without MySQL's `_utf8mb4` introducer, which
//! Strata's parser does not take yet, so that a dump of the view loads back into Strata.
//! `information_schema.VIEWS.VIEW_DEFINITION` (built in the catalog, below the parser)
//! still shows the query as written.

use crate::catalog::views::{quote_ident, ViewDef};
use sqlparser::ast;

/// The view's query in MySQL 8's form, when it has the shape this module prints.
pub fn normalised(view: &ViewDef) -> Option<String> {
    let stmt = crate::parse::parse(&view.query).ok()?.pop()?;
    let ast::Statement::Query(q) = stmt else {
        return None;
    };
    if q.with.is_some() || q.order_by.is_some() || q.limit_clause.is_some() {
        return None;
    }
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let plain = s.distinct.is_none()
        && s.having.is_none()
        && matches!(&s.group_by, ast::GroupByExpr::Expressions(g, m) if g.is_empty() && m.is_empty())
        && s.top.is_none()
        && s.into.is_none()
        && s.lateral_views.is_empty()
        && s.cluster_by.is_empty()
        && s.distribute_by.is_empty()
        && s.sort_by.is_empty()
        && s.named_window.is_empty()
        && s.qualify.is_none();
    if !plain {
        return None;
    }
    let [from] = s.from.as_slice() else {
        return None;
    };
    if !from.joins.is_empty() {
        return None;
    }
    let ast::TableFactor::Table {
        name, alias, args, ..
    } = &from.relation
    else {
        return None;
    };
    if args.is_some() || alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
        return None;
    }
    let parts = crate::parse::object_name_parts(name);
    let (db, table) = match parts.as_slice() {
        [t] => (view.db.clone(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        _ => return None,
    };
    let qualifier = alias
        .as_ref()
        .map(|a| a.name.value.clone())
        .unwrap_or_else(|| table.clone());
    let p = Printer {
        view_db: &view.db,
        db: &db,
        table: &table,
        qualifier: &qualifier,
    };
    // The name each item gets after AS: the view's own column names, or with a column
    // list, the names the query gave its columns.
    let names = if view.explicit_columns {
        &view.source_names
    } else {
        &view.columns
    };
    let stars = s
        .projection
        .iter()
        .filter(|i| {
            !matches!(
                i,
                ast::SelectItem::UnnamedExpr(_) | ast::SelectItem::ExprWithAlias { .. }
            )
        })
        .count();
    if stars > 1 {
        return None;
    }
    let mut items = Vec::new();
    for item in &s.projection {
        match item {
            ast::SelectItem::Wildcard(o) if wildcard_plain(o) => {
                // `*` lists the columns the query had at CREATE, as MySQL expands it then.
                let at = items.len();
                let rest = view
                    .source_names
                    .len()
                    .checked_sub(s.projection.len() - 1)?;
                for source in view.source_names.iter().skip(at).take(rest) {
                    items.push((
                        format!("{}.{}", quote_ident(&qualifier), quote_ident(source)),
                        (),
                    ));
                }
            }
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                items.push((p.expr(e)?, ()));
            }
            _ => return None,
        }
    }
    if items.len() != names.len() {
        return None;
    }
    let list: Vec<String> = items
        .iter()
        .zip(names)
        .map(|((text, ()), name)| format!("{text} AS {}", quote_ident(name)))
        .collect();
    let mut out = format!("select {} from {}", list.join(","), p.table_text());
    if alias.is_some() {
        out.push(' ');
        out.push_str(&quote_ident(&qualifier));
    }
    if let Some(w) = &s.selection {
        out.push_str(" where ");
        out.push_str(&p.expr(w)?);
    }
    Some(out)
}

fn wildcard_plain(o: &ast::WildcardAdditionalOptions) -> bool {
    o.opt_ilike.is_none()
        && o.opt_exclude.is_none()
        && o.opt_except.is_none()
        && o.opt_replace.is_none()
        && o.opt_rename.is_none()
}

struct Printer<'a> {
    view_db: &'a str,
    db: &'a str,
    table: &'a str,
    qualifier: &'a str,
}

impl Printer<'_> {
    fn table_text(&self) -> String {
        // A table of another database than the view's keeps its database.
        if self.db == self.view_db {
            quote_ident(self.table)
        } else {
            format!("{}.{}", quote_ident(self.db), quote_ident(self.table))
        }
    }

    fn column(&self, name: &str) -> String {
        format!("{}.{}", quote_ident(self.qualifier), quote_ident(name))
    }

    /// One expression as MySQL prints it; None for a form not handled here.
    fn expr(&self, e: &ast::Expr) -> Option<String> {
        use ast::Expr as E;
        Some(match e {
            E::Identifier(id) => self.column(&id.value),
            E::CompoundIdentifier(p) => match p.as_slice() {
                [q, c] if q.value == self.qualifier => self.column(&c.value),
                [d, q, c] if d.value == self.db && q.value == self.qualifier => {
                    self.column(&c.value)
                }
                _ => return None,
            },
            E::Value(v) => value(&v.value)?,
            E::Nested(inner) => self.expr(inner)?,
            E::BinaryOp { left, op, right } => {
                use ast::BinaryOperator as B;
                let word = match op {
                    B::And => "and",
                    B::Or => "or",
                    B::Xor => "xor",
                    B::Eq => "=",
                    B::NotEq => "<>",
                    B::Lt => "<",
                    B::LtEq => "<=",
                    B::Gt => ">",
                    B::GtEq => ">=",
                    B::Spaceship => "<=>",
                    B::Plus => "+",
                    B::Minus => "-",
                    B::Multiply => "*",
                    B::Divide => "/",
                    B::Modulo => "%",
                    B::MyIntegerDivide => "DIV",
                    _ => return None,
                };
                if matches!(op, B::And | B::Or | B::Xor) {
                    // A chain of one logical operator prints as one parenthesised list.
                    let mut args = Vec::new();
                    self.flatten(e, op, &mut args)?;
                    format!("({})", args.join(&format!(" {word} ")))
                } else {
                    format!("({} {word} {})", self.expr(left)?, self.expr(right)?)
                }
            }
            E::UnaryOp { op, expr } => match op {
                ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => {
                    format!("(not({}))", self.expr(expr)?)
                }
                ast::UnaryOperator::Minus => format!("-({})", self.expr(expr)?),
                ast::UnaryOperator::Plus => self.expr(expr)?,
                _ => return None,
            },
            E::IsNull(x) => format!("({} is null)", self.expr(x)?),
            E::IsNotNull(x) => format!("({} is not null)", self.expr(x)?),
            E::InList {
                expr,
                list,
                negated,
            } => {
                let items = list
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Option<Vec<_>>>()?;
                let not = if *negated { "not " } else { "" };
                format!("({} {not}in ({}))", self.expr(expr)?, items.join(","))
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let not = if *negated { "not " } else { "" };
                format!(
                    "({} {not}between {} and {})",
                    self.expr(expr)?,
                    self.expr(low)?,
                    self.expr(high)?
                )
            }
            E::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char: None,
            } => {
                let not = if *negated { "not " } else { "" };
                format!("({} {not}like {})", self.expr(expr)?, self.expr(pattern)?)
            }
            E::Function(f) => self.function(f)?,
            _ => return None,
        })
    }

    fn flatten(
        &self,
        e: &ast::Expr,
        op: &ast::BinaryOperator,
        out: &mut Vec<String>,
    ) -> Option<()> {
        match e {
            ast::Expr::BinaryOp { left, op: o, right } if o == op => {
                self.flatten(left, op, out)?;
                self.flatten(right, op, out)
            }
            ast::Expr::Nested(inner) if matches!(inner.as_ref(), ast::Expr::BinaryOp { op: o, .. } if o == op) => {
                self.flatten(inner, op, out)
            }
            other => {
                out.push(self.expr(other)?);
                Some(())
            }
        }
    }

    /// `name(arg,…)` in lower case, for a plain call with positional arguments.
    fn function(&self, f: &ast::Function) -> Option<String> {
        if f.over.is_some() || f.filter.is_some() || !f.within_group.is_empty() {
            return None;
        }
        let [name] = crate::parse::object_name_parts(&f.name).try_into().ok()?;
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let ast::FunctionArguments::List(list) = &f.args else {
            return None;
        };
        if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
            return None;
        }
        let args = list
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => self.expr(x),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(format!("{}({})", name.to_ascii_lowercase(), args.join(",")))
    }
}

/// A literal as MySQL prints it (strings without the charset introducer; see above).
fn value(v: &ast::Value) -> Option<String> {
    Some(match v {
        ast::Value::Number(n, _) => n.clone(),
        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
            format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
        }
        ast::Value::Boolean(b) => b.to_string(),
        ast::Value::Null => "NULL".into(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(query: &str, columns: &[&str], explicit: Option<&[&str]>) -> ViewDef {
        let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        ViewDef {
            db: "d".into(),
            name: "v".into(),
            columns: names(explicit.unwrap_or(columns)),
            explicit_columns: explicit.is_some(),
            source_names: names(columns),
            query: query.into(),
            algorithm: "UNDEFINED".into(),
            definer_user: "root".into(),
            definer_host: "localhost".into(),
            security: "DEFINER".into(),
            check_option: "NONE".into(),
            character_set_client: "utf8mb4".into(),
            collation_connection: "utf8mb4_0900_ai_ci".into(),
            updatable: true,
            column_info: vec![],
        }
    }

    #[test]
    fn one_table_with_a_where_prints_as_mysql_8() {
        let v = view("SELECT a, b FROM t WHERE a > 1", &["a", "b"], None);
        assert_eq!(
            normalised(&v).unwrap(),
            "select `t`.`a` AS `a`,`t`.`b` AS `b` from `t` where (`t`.`a` > 1)"
        );
    }

    #[test]
    fn stars_aliases_and_logic() {
        let v = view(
            "SELECT *, a + 1 AS n FROM t AS x WHERE x.a IN (1, 2) AND b IS NOT NULL AND NOT (a = 3 OR a = 'it''s')",
            &["a", "b", "n"],
            None,
        );
        assert_eq!(
            normalised(&v).unwrap(),
            "select `x`.`a` AS `a`,`x`.`b` AS `b`,(`x`.`a` + 1) AS `n` from `t` `x` where \
             ((`x`.`a` in (1,2)) and (`x`.`b` is not null) and (not(((`x`.`a` = 3) or (`x`.`a` = 'it\\'s')))))"
        );
    }

    #[test]
    fn a_column_list_keeps_the_query_names_after_as() {
        let v = view(
            "SELECT a, upper(b) AS u FROM t",
            &["a", "u"],
            Some(&["c", "d"]),
        );
        assert_eq!(
            normalised(&v).unwrap(),
            "select `t`.`a` AS `a`,upper(`t`.`b`) AS `u` from `t`"
        );
    }

    #[test]
    fn other_shapes_are_left_as_written() {
        for q in [
            "SELECT t.a FROM t JOIN u ON t.a = u.a",
            "SELECT a FROM t ORDER BY a",
            "SELECT a, COUNT(*) FROM t GROUP BY a",
            "SELECT a FROM t WHERE a IN (SELECT a FROM u)",
        ] {
            assert_eq!(normalised(&view(q, &["a", "b"], None)), None, "{q}");
        }
    }
}
