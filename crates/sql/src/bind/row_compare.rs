//! Row constructors in comparisons: `(a, b) = (1, 2)`, `(a, b) < (x, y)`,
//! `(a, b) [NOT] IN ((1, 2), (3, 4))` — what ORMs send for composite keys (SQLAlchemy's
//! `tuple_(…).in_(…)`, Django's composite primary keys, keyset pagination).
//!
//! They are rewritten on the syntax tree into the comparisons of their items before
//! binding, as MySQL defines them: `=` is the AND of the items' `=`, `<>` the OR of
//! their `<>`, `<=>` the AND of their `<=>`, an ordering compares item by item
//! (`(a, b) < (x, y)` is `a < x OR (a = x AND b < y)`), and `IN` the OR of the rows'
//! equalities. The three-valued results agree with MySQL's row comparator, which stops at
//! the first pair that differs and answers NULL for an ordering that meets a NULL first.
//! `(row IN (SELECT …))` is bound elsewhere (a subquery with several columns).
//!
//! The rewrite repeats each item of the left row once per comparison it enters, so the
//! items must be expressions that give the same value each time: columns, literals,
//! parameters, variables and arithmetic over them. Anything else (a function call that
//! may be non-deterministic, a subquery) is refused with 1235 rather than evaluated more
//! than once.

use sqlparser::ast::{self, BinaryOperator as B};
use strata_types::{Error, Result};

/// The items of a row constructor `(x, y, …)`, through parentheses around it.
pub fn row_items(e: &ast::Expr) -> Option<&[ast::Expr]> {
    match e {
        ast::Expr::Tuple(items) => Some(items),
        ast::Expr::Nested(inner) => row_items(inner),
        _ => None,
    }
}

/// `left op right` with a row on either side, rewritten into item comparisons; None
/// when neither side is a row (or `op` is no comparison).
pub fn expand_comparison(left: &ast::Expr, op: &B, right: &ast::Expr) -> Result<Option<ast::Expr>> {
    if !matches!(
        op,
        B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship
    ) {
        return Ok(None);
    }
    let (l, r) = match (row_items(left), row_items(right)) {
        (None, None) => return Ok(None),
        (Some(l), Some(r)) => (l, r),
        (Some(l), None) => return Err(Error::OperandColumns(l.len())),
        (None, Some(_)) => return Err(Error::OperandColumns(1)),
    };
    if l.len() != r.len() {
        return Err(Error::OperandColumns(l.len()));
    }
    for item in l.iter().chain(r) {
        repeatable(item)?;
    }
    Ok(Some(match op {
        B::Eq | B::Spaceship => all(l, r, op, B::And),
        B::NotEq => all(l, r, op, B::Or),
        _ => lexicographic(l, r, op),
    }))
}

/// `expr [NOT] IN (list)` with a row as `expr`: the OR of the row's equality with each
/// listed row (negated for NOT IN); None when `expr` is not a row.
pub fn expand_in_list(
    expr: &ast::Expr,
    list: &[ast::Expr],
    negated: bool,
) -> Result<Option<ast::Expr>> {
    let Some(items) = row_items(expr) else {
        // `x IN ((1, 2))` with a single value on the left: 1241, as MySQL.
        if list.iter().any(|e| row_items(e).is_some()) {
            return Err(Error::OperandColumns(1));
        }
        return Ok(None);
    };
    let mut any: Option<ast::Expr> = None;
    for row in list {
        let eq = expand_comparison(expr, &B::Eq, row)?.ok_or(Error::OperandColumns(items.len()))?;
        any = Some(match any {
            None => eq,
            Some(prev) => binary(prev, B::Or, eq),
        });
    }
    let any = any.ok_or_else(|| Error::Syntax("IN ()".into()))?;
    Ok(Some(if negated {
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr: Box::new(nested(any)),
        }
    } else {
        any
    }))
}

/// The items compared pairwise with `op`, joined by `join` (AND or OR).
fn all(l: &[ast::Expr], r: &[ast::Expr], op: &B, join: B) -> ast::Expr {
    let mut pairs = l.iter().zip(r).map(|(a, b)| pair(a, op.clone(), b));
    let first = pairs.next().unwrap_or(ast::Expr::Value(
        ast::Value::Boolean(true).with_empty_span(),
    ));
    pairs.fold(first, |acc, p| binary(acc, join.clone(), p))
}

/// An ordering of two rows: the first items decide unless equal, then the rest.
fn lexicographic(l: &[ast::Expr], r: &[ast::Expr], op: &B) -> ast::Expr {
    let strict = match op {
        B::Lt | B::LtEq => B::Lt,
        _ => B::Gt,
    };
    match (l, r) {
        ([a], [b]) => pair(a, op.clone(), b),
        ([a, l_rest @ ..], [b, r_rest @ ..]) => {
            let rest = lexicographic(l_rest, r_rest, op);
            let tie = binary(pair(a, B::Eq, b), B::And, rest);
            binary(pair(a, strict, b), B::Or, tie)
        }
        _ => ast::Expr::Value(ast::Value::Null.with_empty_span()),
    }
}

/// `a op b`, each side parenthesised so the rewritten text keeps its grouping (items may
/// be rows themselves, which the binder expands again).
fn pair(a: &ast::Expr, op: B, b: &ast::Expr) -> ast::Expr {
    binary(nested(a.clone()), op, nested(b.clone()))
}

fn binary(left: ast::Expr, op: B, right: ast::Expr) -> ast::Expr {
    nested(ast::Expr::BinaryOp {
        left: Box::new(left),
        op,
        right: Box::new(right),
    })
}

fn nested(e: ast::Expr) -> ast::Expr {
    match e {
        ast::Expr::Nested(_) | ast::Expr::Tuple(_) => e,
        other => ast::Expr::Nested(Box::new(other)),
    }
}

/// Refuses an item the rewrite would evaluate more than once with a possibly different
/// value.
fn repeatable(e: &ast::Expr) -> Result<()> {
    match e {
        ast::Expr::Identifier(_)
        | ast::Expr::CompoundIdentifier(_)
        | ast::Expr::Value(_)
        | ast::Expr::TypedString { .. } => Ok(()),
        ast::Expr::Nested(inner) => repeatable(inner),
        ast::Expr::Tuple(items) => items.iter().try_for_each(repeatable),
        ast::Expr::UnaryOp { expr, .. } => repeatable(expr),
        ast::Expr::BinaryOp { left, right, .. } => {
            repeatable(left)?;
            repeatable(right)
        }
        ast::Expr::Cast { expr, .. } => repeatable(expr),
        other => Err(Error::NotSupported(format!(
            "the row constructor item {other} (only columns, literals, parameters and \
             arithmetic over them)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::parser::Parser;

    fn expr(text: &str) -> ast::Expr {
        Parser::new(&crate::parse::dialect::StrataDialect::default())
            .try_with_sql(text)
            .and_then(|mut p| p.parse_expr())
            .expect("test expression parses")
    }

    fn rewrite(text: &str) -> Result<Option<String>> {
        Ok(match expr(text) {
            ast::Expr::BinaryOp { left, op, right } => {
                expand_comparison(&left, &op, &right)?.map(|e| e.to_string())
            }
            ast::Expr::InList {
                expr,
                list,
                negated,
            } => expand_in_list(&expr, &list, negated)?.map(|e| e.to_string()),
            _ => None,
        })
    }

    #[test]
    fn equality_and_inequality_join_the_items() {
        assert_eq!(
            rewrite("(a, b) = (1, 2)").unwrap().unwrap(),
            "(((a) = (1)) AND ((b) = (2)))"
        );
        assert_eq!(
            rewrite("(a, b) <> (1, 2)").unwrap().unwrap(),
            "(((a) <> (1)) OR ((b) <> (2)))"
        );
        assert_eq!(
            rewrite("(a, b) <=> (1, 2)").unwrap().unwrap(),
            "(((a) <=> (1)) AND ((b) <=> (2)))"
        );
        assert_eq!(rewrite("a = 1").unwrap(), None);
    }

    #[test]
    fn orderings_compare_item_by_item() {
        assert_eq!(
            rewrite("(a, b) < (1, 2)").unwrap().unwrap(),
            "(((a) < (1)) OR (((a) = (1)) AND ((b) < (2))))"
        );
        assert_eq!(
            rewrite("(a, b) >= (1, 2)").unwrap().unwrap(),
            "(((a) > (1)) OR (((a) = (1)) AND ((b) >= (2))))"
        );
    }

    #[test]
    fn in_lists_of_rows_are_ors_of_equalities() {
        assert_eq!(
            rewrite("(a, b) IN ((1, 2), (3, 4))").unwrap().unwrap(),
            "((((a) = (1)) AND ((b) = (2))) OR (((a) = (3)) AND ((b) = (4))))"
        );
        assert_eq!(
            rewrite("(a, b) NOT IN ((1, 2))").unwrap().unwrap(),
            "NOT (((a) = (1)) AND ((b) = (2)))"
        );
    }

    #[test]
    fn wrong_arity_is_1241_and_unrepeatable_items_are_refused() {
        let code = |t: &str| rewrite(t).unwrap_err().code();
        assert_eq!(code("(a, b) = (1, 2, 3)"), 1241);
        assert_eq!(code("(a, b) = 1"), 1241);
        assert_eq!(code("a IN ((1, 2))"), 1241);
        assert_eq!(code("(a, b) IN ((1, 2), 3)"), 1241);
        assert_eq!(code("(RAND(), b) = (1, 2)"), 1235);
    }
}
