//! HAVING in a query block that does not group: `SELECT a + 1 AS x FROM t HAVING x > 2`.
//!
//! MySQL groups a block only when it has GROUP BY or an aggregate call; a HAVING
//! without either filters the rows one by one, after WHERE, and may name the select
//! list's aliases (which come before columns of the same name, as they do in every
//! HAVING). Such a block is planned here as the WHERE it means: each alias the HAVING
//! names is replaced by its select-list expression, and the condition is ANDed to the
//! WHERE clause. Before this, a HAVING made the block grouped, so its select list had
//! to be made of aggregates and every such statement failed with 1140.
//!
//! Names inside a subquery of the HAVING belong to that subquery and are left alone.

use crate::bind;
use sqlparser::ast::{self, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// The block with its HAVING moved into the WHERE clause, when `select` has a HAVING
/// and does not group (no GROUP BY, no aggregate in the select list, the HAVING or
/// `order_by`); None otherwise.
pub fn as_where(select: &ast::Select, order_by: &[ast::OrderByExpr]) -> Option<ast::Select> {
    let having = select.having.as_ref()?;
    let no_group_by = matches!(&select.group_by, ast::GroupByExpr::Expressions(g, m) if g.is_empty() && m.is_empty());
    let aggregates = bind::contains_aggregate(having)
        || order_by.iter().any(|o| bind::contains_aggregate(&o.expr))
        || select.projection.iter().any(|p| match p {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                bind::contains_aggregate(e)
            }
            _ => false,
        });
    if !no_group_by || aggregates {
        return None;
    }
    let aliases: Vec<(String, ast::Expr)> = select
        .projection
        .iter()
        .filter_map(|p| match p {
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                Some((alias.value.clone(), expr.clone()))
            }
            _ => None,
        })
        .collect();
    let mut condition = having.clone();
    let mut substitution = AliasSubstitution {
        aliases: &aliases,
        nested: 0,
        windowed: false,
    };
    let _ = condition.visit(&mut substitution);
    if substitution.windowed {
        // A window function's value exists only after HAVING: the binder refuses the
        // alias with 3594, as MySQL does.
        return None;
    }
    let mut out = select.clone();
    out.having = None;
    out.selection = Some(match out.selection.take() {
        None => condition,
        Some(w) => ast::Expr::BinaryOp {
            left: Box::new(ast::Expr::Nested(Box::new(w))),
            op: ast::BinaryOperator::And,
            right: Box::new(ast::Expr::Nested(Box::new(condition))),
        },
    });
    Some(out)
}

/// Replaces each bare name that is a select-list alias by the aliased expression,
/// outside subqueries.
struct AliasSubstitution<'a> {
    aliases: &'a [(String, ast::Expr)],
    /// How many subqueries the walk is inside.
    nested: usize,
    /// Set when a replaced alias's expression calls a window function.
    windowed: bool,
}

impl VisitorMut for AliasSubstitution<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _query: &mut ast::Query) -> ControlFlow<()> {
        self.nested += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut ast::Query) -> ControlFlow<()> {
        self.nested -= 1;
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &mut ast::Expr) -> ControlFlow<()> {
        if self.nested > 0 {
            return ControlFlow::Continue(());
        }
        if let ast::Expr::Identifier(name) = expr {
            if let Some((_, e)) = self
                .aliases
                .iter()
                .find(|(a, _)| a.eq_ignore_ascii_case(&name.value))
            {
                self.windowed |= bind::has_call_of_this_block(e, &|f| f.over.is_some());
                // Parenthesised, so `x * 2` with x = `a + 1` stays `(a + 1) * 2`.
                *expr = ast::Expr::Nested(Box::new(e.clone()));
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::parser::Parser;

    fn rewritten(sql: &str) -> Option<String> {
        let stmt = Parser::parse_sql(&crate::parse::dialect::StrataDialect::default(), sql)
            .unwrap()
            .remove(0);
        let ast::Statement::Query(q) = stmt else {
            panic!("not a query")
        };
        let ast::SetExpr::Select(select) = q.body.as_ref() else {
            panic!("not a select")
        };
        let order: Vec<ast::OrderByExpr> = match &q.order_by {
            Some(ast::OrderBy {
                kind: ast::OrderByKind::Expressions(v),
                ..
            }) => v.clone(),
            _ => vec![],
        };
        as_where(select, &order).map(|s| s.selection.unwrap().to_string())
    }

    #[test]
    fn an_ungrouped_having_becomes_a_where_with_its_aliases_replaced() {
        assert_eq!(
            rewritten("SELECT a + 1 AS x FROM t HAVING x > 2").as_deref(),
            Some("(a + 1) > 2")
        );
        assert_eq!(
            rewritten("SELECT a + 1 AS a FROM t WHERE b = 1 HAVING a * 2 > 4").as_deref(),
            Some("(b = 1) AND ((a + 1) * 2 > 4)")
        );
        // A name that is no alias stays a column.
        assert_eq!(
            rewritten("SELECT a FROM t HAVING b IS NULL").as_deref(),
            Some("b IS NULL")
        );
    }

    #[test]
    fn names_inside_a_subquery_of_the_having_are_not_aliases() {
        assert_eq!(
            rewritten("SELECT a AS x FROM t HAVING EXISTS (SELECT 1 FROM u WHERE u.x = x)")
                .as_deref(),
            Some("EXISTS (SELECT 1 FROM u WHERE u.x = x)")
        );
    }

    #[test]
    fn a_grouped_block_keeps_its_having() {
        assert_eq!(rewritten("SELECT a FROM t GROUP BY a HAVING a > 1"), None);
        assert_eq!(rewritten("SELECT COUNT(*) AS n FROM t HAVING n > 1"), None);
        assert_eq!(rewritten("SELECT a FROM t HAVING MAX(a) > 1"), None);
        assert_eq!(
            rewritten("SELECT a FROM t HAVING a > 1 ORDER BY SUM(b)"),
            None
        );
        assert_eq!(rewritten("SELECT a FROM t"), None);
        // A windowed alias stays in HAVING, for the binder's 3594.
        assert_eq!(
            rewritten("SELECT a, ROW_NUMBER() OVER () AS r FROM t HAVING r > 1"),
            None
        );
        // An aggregate of a subquery is the subquery's own.
        assert!(rewritten("SELECT a, (SELECT MAX(b) FROM u) AS m FROM t HAVING m > 1").is_some());
    }
}
