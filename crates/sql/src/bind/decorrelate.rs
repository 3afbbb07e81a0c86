//! Rewrite rule: a correlated `EXISTS` whose correlation is only equalities becomes an
//! uncorrelated `IN` (a semi-join probed as a hash set). Applied by the binder when it meets
//! the `EXISTS` (`Binder::exists_as_semijoin`), as MySQL's resolver converts subqueries
//! to semi-joins, since whether the rule applies depends on which names are outer.
//!
//! `EXISTS (SELECT … FROM u WHERE u.k = t.k AND u.v > 5)` run as written executes the
//! subquery once per outer row: O(outer × inner) when `u.k` has no index. Split its
//! WHERE into the equalities that pair an inner-only side with an outer-only side and
//! the rest; when the rest reads no outer column, the subquery is
//!
//! ```text
//! (t.k) IN (SELECT u.k FROM u WHERE u.v > 5)   -- uncorrelated: runs once
//! ```
//!
//! and the executor runs an uncorrelated subquery once per statement and probes its rows
//! as a hash set, so the whole predicate costs O(outer + inner). `EXISTS` is TRUE or
//! FALSE, never NULL, where `IN` may be NULL (a NULL key): the binder therefore wraps the
//! rewritten form in `IS TRUE` (`NOT EXISTS` in `IS NOT TRUE`), which is exactly
//! "some inner row has equal, non-NULL keys and passes the rest".
//!
//! The rewrite is not always the cheaper plan: the `IN` form reads the whole inner table
//! once, while the correlated form, when the inner table has an index that leads with a
//! correlated column, costs one index lookup per outer row that reaches the `EXISTS`,
//! stopping at the first row found. When the outer rows are few (TPC-H Q4 checks the
//! lineitems of one quarter's orders, Q22 the orders of a few customers) the lookups read
//! a small part of what the scan would, and with a lookup per row the whole predicate is
//! O(outer × log inner), never quadratic. So a single-table subquery whose correlation
//! can drive such an index ([`probe_by_index`]) stays correlated and is run by index,
//! and the rewrite is kept for the subqueries it must save from quadratic time.
//!
//! The rule works on the syntax tree, before binding: a column reference is inner when
//! its qualifier names a table of the subquery's FROM, or, unqualified, when one of those
//! tables has a column of that name (MySQL resolves names innermost first). Anything it
//! cannot classify with certainty (subqueries in a conjunct, three-part names, derived
//! tables, GROUP BY, aggregates, LIMIT) leaves the query as written. The binder still
//! plans the result and keeps it only if it came out uncorrelated.
//!
//! A second rule, [`exists_select_one`], is for the `EXISTS` that stays correlated: its
//! `SELECT *` becomes `SELECT 1` (MySQL's resolver does the same), so each run reads only
//! the columns its WHERE needs.

use sqlparser::ast;

/// The tables of the subquery's FROM as names resolve against them: each table's
/// name-or-alias and its column names.
pub struct InnerTables {
    pub tables: Vec<(String, Vec<String>)>,
}

impl InnerTables {
    fn has_alias(&self, q: &str) -> bool {
        self.tables.iter().any(|(a, _)| a.eq_ignore_ascii_case(q))
    }

    fn has_column(&self, c: &str) -> bool {
        self.tables
            .iter()
            .any(|(_, cols)| cols.iter().any(|x| x.eq_ignore_ascii_case(c)))
    }
}

/// The rewritten form: `(outer…) IN (query)`.
#[derive(Debug)]
pub struct SemiJoin {
    /// The outer side of each equality, bound in the enclosing query.
    pub outer: Vec<ast::Expr>,
    /// `SELECT <inner sides> FROM <same FROM> WHERE <the other conjuncts>`.
    pub query: ast::Query,
}

/// The FROM tables a rewrite needs to know, as (table name, alias): plain tables only.
/// None when the FROM has anything else (derived tables, table functions).
pub fn from_tables(q: &ast::Query) -> Option<Vec<(ast::ObjectName, Option<String>)>> {
    let select = simple_block(q)?;
    let mut out = Vec::new();
    for twj in &select.from {
        for factor in std::iter::once(&twj.relation).chain(twj.joins.iter().map(|j| &j.relation)) {
            let ast::TableFactor::Table { name, alias, .. } = factor else {
                return None;
            };
            out.push((name.clone(), alias.as_ref().map(|a| a.name.value.clone())));
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The query's single SELECT block, when it has no clause that changes what EXISTS sees
/// beyond WHERE (WITH, LIMIT, GROUP BY, HAVING, aggregates, windows, locking).
fn simple_block(q: &ast::Query) -> Option<&ast::Select> {
    if q.with.is_some() || q.limit_clause.is_some() || !q.locks.is_empty() || q.fetch.is_some() {
        return None;
    }
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let grouped = !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty());
    if grouped
        || s.having.is_some()
        || !s.named_window.is_empty()
        || s.qualify.is_some()
        || s.projection.iter().any(|item| match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                crate::bind::contains_aggregate(e) || has_window(e)
            }
            _ => false,
        })
    {
        return None;
    }
    Some(s)
}

fn has_window(e: &ast::Expr) -> bool {
    use sqlparser::ast::{Visit, Visitor};
    use std::ops::ControlFlow;
    struct W;
    impl Visitor for W {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            match e {
                ast::Expr::Function(f) if f.over.is_some() => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }
    e.visit(&mut W).is_break()
}

/// Rewrite rule: `EXISTS (SELECT * FROM … WHERE …)` stays correlated (see the module
/// comment) but its select list is `1`, as MySQL's resolver replaces the `*` of an
/// `EXISTS` subquery with a constant (`Query_block::setup_wild`): EXISTS asks only whether
/// a row exists, so the subquery need not read (and decode) any column its WHERE does not
/// need. TPC-H Q21 runs two such subqueries per outer row, each reading lineitem rows of
/// sixteen columns. Only a plain unqualified `*` over a FROM clause is rewritten, and only
/// in a block without GROUP BY, HAVING, windows or ORDER BY, where the select list
/// cannot change which rows there are (nor which error a statement gives); None leaves the
/// query as written.
pub fn exists_select_one(q: &ast::Query) -> Option<ast::Query> {
    if q.order_by.is_some() || q.fetch.is_some() {
        return None;
    }
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let grouped = !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty());
    let star_only = matches!(
        s.projection.as_slice(),
        [ast::SelectItem::Wildcard(opts)] if *opts == ast::WildcardAdditionalOptions::default()
    );
    if !star_only
        || s.from.is_empty()
        || grouped
        || s.having.is_some()
        || !s.named_window.is_empty()
        || s.qualify.is_some()
        || s.distinct.is_some()
        || s.into.is_some()
    {
        return None;
    }
    let mut out = q.clone();
    if let ast::SetExpr::Select(s) = out.body.as_mut() {
        s.projection = vec![ast::SelectItem::UnnamedExpr(ast::Expr::Value(
            ast::Value::Number("1".into(), false).into(),
        ))];
    }
    Some(out)
}

/// Where the column references of an expression resolve.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Side {
    /// No column reference (a constant).
    None,
    Inner,
    Outer,
    /// Both, or something the rule cannot classify.
    Mixed,
}

fn combine(a: Side, b: Side) -> Side {
    match (a, b) {
        (Side::None, x) | (x, Side::None) => x,
        (x, y) if x == y => x,
        _ => Side::Mixed,
    }
}

fn side_of(e: &ast::Expr, inner: &InnerTables) -> Side {
    use sqlparser::ast::{Visit, Visitor};
    use std::ops::ControlFlow;
    struct Classify<'a> {
        inner: &'a InnerTables,
        side: Side,
    }
    impl Visitor for Classify<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _q: &ast::Query) -> ControlFlow<()> {
            // A nested subquery may read either side at any depth: not classified.
            self.side = Side::Mixed;
            ControlFlow::Break(())
        }
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            let here = match e {
                ast::Expr::Identifier(id) => {
                    if self.inner.has_column(&id.value) {
                        Side::Inner
                    } else {
                        Side::Outer
                    }
                }
                ast::Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                    [t, _] if self.inner.has_alias(&t.value) => Side::Inner,
                    [_, _] => Side::Outer,
                    _ => Side::Mixed,
                },
                ast::Expr::Function(f) if f.over.is_some() => Side::Mixed,
                _ => return ControlFlow::Continue(()),
            };
            self.side = combine(self.side, here);
            if self.side == Side::Mixed {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
    }
    let mut c = Classify {
        inner,
        side: Side::None,
    };
    let _ = e.visit(&mut c);
    c.side
}

fn conjuncts(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    match e {
        ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        ast::Expr::Nested(inner) => conjuncts(inner, out),
        other => out.push(other.clone()),
    }
}

/// Rewrites `EXISTS (q)` as `(outer…) IN (q')` when q's correlation is only equalities;
/// None when the rule does not apply.
pub fn exists_as_in(q: &ast::Query, inner: &InnerTables) -> Option<SemiJoin> {
    let select = simple_block(q)?;
    let mut parts = Vec::new();
    conjuncts(select.selection.as_ref()?, &mut parts);
    let mut outer = Vec::new();
    let mut projection = Vec::new();
    let mut rest = Vec::new();
    for c in parts {
        if let ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::Eq,
            right,
        } = &c
        {
            match (side_of(left, inner), side_of(right, inner)) {
                (Side::Inner, Side::Outer) => {
                    projection.push(left.as_ref().clone());
                    outer.push(right.as_ref().clone());
                    continue;
                }
                (Side::Outer, Side::Inner) => {
                    projection.push(right.as_ref().clone());
                    outer.push(left.as_ref().clone());
                    continue;
                }
                _ => {}
            }
        }
        match side_of(&c, inner) {
            Side::None | Side::Inner => rest.push(c),
            Side::Outer | Side::Mixed => return None,
        }
    }
    if outer.is_empty() {
        return None;
    }
    let mut block = select.clone();
    block.projection = projection
        .into_iter()
        .map(ast::SelectItem::UnnamedExpr)
        .collect();
    block.distinct = None;
    block.selection = rest.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::And,
        right: Box::new(b),
    });
    let mut query = q.clone();
    query.order_by = None;
    query.body = Box::new(ast::SetExpr::Select(Box::new(block)));
    Some(SemiJoin { outer, query })
}

/// Whether the `EXISTS` subquery `q`, rewritten as `semi`, is better left correlated: it
/// reads one table, and one of the inner sides of its correlation equalities is a column
/// that leads an index of it (`leads(table, column)`), so each outer row costs one index
/// lookup (see the module comment).
pub fn probe_by_index(
    q: &ast::Query,
    semi: &SemiJoin,
    leads: &dyn Fn(&ast::ObjectName, &str) -> bool,
) -> bool {
    let Some(tables) = from_tables(q) else {
        return false;
    };
    let [(name, alias)] = tables.as_slice() else {
        return false;
    };
    let shown = alias
        .clone()
        .or_else(|| crate::parse::object_name_parts(name).pop())
        .unwrap_or_default();
    let ast::SetExpr::Select(block) = semi.query.body.as_ref() else {
        return false;
    };
    block.projection.iter().any(|item| {
        let column = match item {
            ast::SelectItem::UnnamedExpr(ast::Expr::Identifier(c)) => &c.value,
            ast::SelectItem::UnnamedExpr(ast::Expr::CompoundIdentifier(parts)) => {
                match parts.as_slice() {
                    [t, c] if t.value.eq_ignore_ascii_case(&shown) => &c.value,
                    _ => return false,
                }
            }
            _ => return false,
        };
        leads(name, column)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(sql: &str) -> ast::Query {
        let stmts = crate::parse::parse(sql).expect("test SQL parses");
        match stmts.into_iter().next() {
            Some(ast::Statement::Query(q)) => *q,
            other => panic!("not a query: {other:?}"),
        }
    }

    fn u_table() -> InnerTables {
        InnerTables {
            tables: vec![("u".into(), vec!["k".into(), "v".into(), "name".into()])],
        }
    }

    #[test]
    fn equality_correlation_becomes_an_uncorrelated_in() {
        let q = query("SELECT 1 FROM u WHERE u.k = t.k AND v > 5");
        let sj = exists_as_in(&q, &u_table()).expect("rule applies");
        assert_eq!(sj.outer.len(), 1);
        assert_eq!(sj.outer[0].to_string(), "t.k");
        assert_eq!(sj.query.to_string(), "SELECT u.k FROM u WHERE v > 5");
    }

    #[test]
    fn sides_are_found_either_way_round_and_several_keys_pair_up() {
        let q = query("SELECT * FROM u WHERE t.a = k AND (t.b + 1 = u.v)");
        let sj = exists_as_in(&q, &u_table()).expect("rule applies");
        let outer: Vec<String> = sj.outer.iter().map(|e| e.to_string()).collect();
        assert_eq!(outer, ["t.a", "t.b + 1"]);
        assert_eq!(sj.query.to_string(), "SELECT k, u.v FROM u");
    }

    #[test]
    fn other_correlation_leaves_the_query_as_written() {
        let u = u_table();
        // A non-equality reading the outer query.
        assert!(
            exists_as_in(&query("SELECT 1 FROM u WHERE u.k = t.k AND u.v > t.v"), &u).is_none()
        );
        // An OR mixing both sides.
        assert!(exists_as_in(&query("SELECT 1 FROM u WHERE u.k = t.k OR v = 1"), &u).is_none());
        // No correlation at all: nothing to do (it already runs once).
        assert!(exists_as_in(&query("SELECT 1 FROM u WHERE v = 1"), &u).is_none());
        // A nested subquery in a conjunct is not classified.
        assert!(exists_as_in(
            &query("SELECT 1 FROM u WHERE u.k = t.k AND v IN (SELECT x FROM w)"),
            &u
        )
        .is_none());
    }

    #[test]
    fn clauses_that_change_what_exists_sees_block_the_rule() {
        let u = u_table();
        for sql in [
            "SELECT 1 FROM u WHERE u.k = t.k LIMIT 0",
            "SELECT k FROM u WHERE u.k = t.k GROUP BY k",
            "SELECT COUNT(*) FROM u WHERE u.k = t.k",
            "SELECT 1 FROM u WHERE u.k = t.k HAVING 1",
            "SELECT 1 FROM u WHERE u.k = t.k UNION SELECT 2",
        ] {
            assert!(exists_as_in(&query(sql), &u).is_none(), "{sql}");
        }
    }

    #[test]
    fn unqualified_names_resolve_innermost_first() {
        // `name` is a column of u, so `name = t.x` pairs inner with outer; `zzz` is not,
        // so it belongs to the outer query.
        let q = query("SELECT 1 FROM u WHERE name = zzz");
        let sj = exists_as_in(&q, &u_table()).expect("rule applies");
        assert_eq!(sj.outer[0].to_string(), "zzz");
        assert_eq!(sj.query.to_string(), "SELECT name FROM u");
    }

    #[test]
    fn an_index_on_the_inner_correlation_column_keeps_the_subquery_correlated() {
        let u = u_table();
        // `k` leads an index of u; `v` does not.
        let leads = |name: &ast::ObjectName, c: &str| name.to_string() == "u" && c == "k";
        for (sql, by_index) in [
            ("SELECT 1 FROM u WHERE u.k = t.k", true),
            ("SELECT 1 FROM u WHERE t.k = k AND v > 5", true),
            ("SELECT 1 FROM u AS x WHERE x.k = t.k", true),
            ("SELECT 1 FROM u WHERE u.v = t.v", false),
            // An expression of the column cannot drive the index.
            ("SELECT 1 FROM u WHERE u.k + 1 = t.k", false),
        ] {
            let q = query(sql);
            let inner = if sql.contains("AS x") {
                InnerTables {
                    tables: vec![("x".into(), u.tables[0].1.clone())],
                }
            } else {
                u_table()
            };
            let sj = exists_as_in(&q, &inner).expect("rule applies");
            assert_eq!(probe_by_index(&q, &sj, &leads), by_index, "{sql}");
        }
        // Two tables: the rewrite stays (which table to drive is the join order's job).
        let q = query("SELECT 1 FROM u, w WHERE u.k = t.k");
        let two = InnerTables {
            tables: vec![
                ("u".into(), vec!["k".into()]),
                ("w".into(), vec!["z".into()]),
            ],
        };
        let sj = exists_as_in(&q, &two).expect("rule applies");
        assert!(!probe_by_index(&q, &sj, &leads));
    }

    #[test]
    fn only_plain_tables_are_named() {
        assert!(from_tables(&query("SELECT 1 FROM (SELECT 1) AS d WHERE 1")).is_none());
        let t = from_tables(&query("SELECT 1 FROM u AS x JOIN w ON x.a = w.a")).expect("plain");
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].1.as_deref(), Some("x"));
    }

    #[test]
    fn exists_star_becomes_select_one() {
        let q = query("SELECT * FROM u WHERE u.k = t.k AND u.v <> t.v LIMIT 3");
        let one = exists_select_one(&q).expect("rule applies");
        assert_eq!(
            one.to_string(),
            "SELECT 1 FROM u WHERE u.k = t.k AND u.v <> t.v LIMIT 3"
        );
    }

    #[test]
    fn exists_select_lists_that_matter_stay_as_written() {
        for sql in [
            // Not a bare star: an expression may fail, a qualified star may name no table.
            "SELECT k FROM u WHERE u.k = t.k",
            "SELECT u.* FROM u WHERE u.k = t.k",
            "SELECT *, 1 FROM u",
            // No FROM: SELECT * is an error (1096), which must stay.
            "SELECT *",
            // Clauses that read the select list or change the rows.
            "SELECT * FROM u GROUP BY k",
            "SELECT * FROM u HAVING k > 1",
            "SELECT * FROM u ORDER BY 2",
            "SELECT DISTINCT * FROM u",
            "SELECT * FROM u UNION SELECT * FROM u",
        ] {
            assert!(exists_select_one(&query(sql)).is_none(), "{sql}");
        }
    }
}
