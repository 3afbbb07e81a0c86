//! INSERT, UPDATE and DELETE through a view, as MySQL merges an updatable view into
//! the statement that changes it: the view (and every view under it) is resolved to
//! the one base table whose rows change, each view column to the base expression it
//! stands for, the WHERE conditions that pick the view's rows (UPDATE and DELETE touch
//! only those), and the conditions WITH CHECK OPTION tests on every row written.
//!
//! The resolution works on syntax: each level's select list and WHERE are rewritten so
//! that a name of the level below (`c`, `v.c`, `db.v.c`) becomes the expression it
//! stands for, down to the base table's columns, which are written `` `alias`.`col` ``
//! with the name the innermost view gives the base table. `dml` then binds the
//! statement's own expressions, rewritten the same way, over that one base table.
//!
//! CHECK OPTION follows MySQL 8 (since 5.7.6): a view's WHERE is checked when the view
//! has a check option or a view above it has `CASCADED`; `LOCAL` and no option still
//! let the views below apply their own. A failure names the view the statement named.
//!
//! Not done (refused with 1235, never run differently): INSERT or UPDATE through a join
//! view (MySQL changes one of its tables), subqueries among the expressions that must
//! be rewritten (the statement's own, or a WHERE of a view above another view).

use crate::bind::{Binder, Scope};
use crate::catalog::views::ViewDef;
use crate::context::ExecCtx;
use crate::expr::Expr;
use sqlparser::ast;
use std::ops::ControlFlow;
use std::sync::Arc;
use strata_engine::Table;
use strata_types::{Error, Result, Value};

/// What a DML statement naming a view changes.
pub struct Through {
    /// The view the statement names.
    pub db: String,
    pub name: String,
    /// Every view passed through, outermost first (their metadata locks).
    pub views: Vec<(String, String)>,
    /// The base table.
    pub base_db: String,
    pub base_table: String,
    /// The name the rewritten expressions give the base table.
    pub base_alias: String,
    /// The view's columns, in order.
    pub columns: Vec<ViewColumn>,
    /// Every level's WHERE, over the base table: the rows the view shows.
    pub filter: Option<ast::Expr>,
    /// The part of `filter` CHECK OPTION tests, bound over the base row by
    /// [`Through::bind_check`].
    check_syntax: Option<ast::Expr>,
    check: Option<Expr>,
}

/// One column of a view, in terms of its base table.
#[derive(Clone, Debug)]
pub struct ViewColumn {
    pub name: String,
    /// The expression over the base table it stands for.
    pub expr: ast::Expr,
    /// Its position in the base table when it is a plain column of it.
    pub base: Option<usize>,
}

/// One view resolved down to its base table.
struct Level {
    base_db: String,
    base_table: String,
    base_alias: String,
    columns: Vec<ViewColumn>,
    /// The columns `*` names: all but a base table's INVISIBLE ones.
    star: Vec<usize>,
    /// Each view's WHERE (over the base table) and its check option, outermost first.
    wheres: Vec<(Option<ast::Expr>, String)>,
}

impl Through {
    /// Resolves `view` for the statement `verb` (`INSERT`, `UPDATE`, `DELETE`), with
    /// MySQL's refusals: 1288 / 1471 for a view rows cannot be changed through, 1395
    /// for DELETE through a join view, 1471 for INSERT into a view that names a base
    /// column twice.
    pub fn resolve(cx: &ExecCtx, view: &ViewDef, verb: &'static str) -> Result<Through> {
        let mut views = Vec::new();
        let level = resolve_level(cx, view, verb, &mut views)?;
        if verb == "INSERT" {
            // MySQL's insertable views name no base column twice; an expression column
            // is refused only when the INSERT fills it (`insert_columns`,
            // `column_position`).
            let mut seen = Vec::new();
            for b in level.columns.iter().filter_map(|c| c.base) {
                if seen.contains(&b) {
                    return Err(Error::NonInsertableTable(view.name.clone()));
                }
                seen.push(b);
            }
        }
        let filter = conjunction(level.wheres.iter().filter_map(|(w, _)| w.clone()));
        let check_syntax = conjunction(checked(&level.wheres));
        Ok(Through {
            db: view.db.clone(),
            name: view.name.clone(),
            views,
            base_db: level.base_db,
            base_table: level.base_table,
            base_alias: level.base_alias,
            columns: level.columns,
            filter,
            check_syntax,
            check: None,
        })
    }

    /// Binds the CHECK OPTION conditions over the base table `table`.
    pub fn bind_check(&mut self, table: &Arc<dyn Table>) -> Result<()> {
        let Some(c) = &self.check_syntax else {
            return Ok(());
        };
        if contains_subquery(c) {
            return Err(Error::NotSupported(
                "WITH CHECK OPTION on a view whose WHERE has a subquery".into(),
            ));
        }
        let mut scope = Scope::default();
        scope.push(self.base_alias.clone(), self.base_db.clone(), table.clone());
        let (e, _, _) = Binder::new(&scope, "where clause").bind(c)?;
        self.check = Some(e);
        Ok(())
    }

    /// Whether `row` (a base table row about to be written) passes CHECK OPTION:
    /// 1369 naming the view the statement named when it does not.
    pub fn check_row(&self, row: &[Value], ecx: &crate::expr::EvalCtx) -> Result<()> {
        match &self.check {
            Some(c) if !c.test(row, ecx)? => Err(Error::ViewCheckFailed {
                db: self.db.clone(),
                view: self.name.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// The base column an INSERT column list or a SET names: 1348 for a view column
    /// that is an expression, 1054 for a name the view does not have.
    pub fn column_position(&self, name: &ast::ObjectName) -> Result<usize> {
        let parts = crate::parse::object_name_parts(name);
        let col = parts.last().cloned().unwrap_or_default();
        let c = self
            .columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(&col))
            .ok_or_else(|| Error::UnknownColumn {
                column: col.clone(),
                context: "field list".into(),
            })?;
        c.base.ok_or(Error::NonUpdatableColumn(c.name.clone()))
    }

    /// The base columns INSERT without a column list fills: every view column, each of
    /// which must be a base column (1471 otherwise).
    pub fn insert_columns(&self) -> Result<Vec<usize>> {
        self.columns
            .iter()
            .map(|c| c.base)
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| Error::NonInsertableTable(self.name.clone()))
    }

    /// An expression of the statement (WHERE, ORDER BY, a SET value) rewritten over the
    /// base table; `qualifier` is the name the statement gives the view.
    pub fn rewrite(&self, e: &ast::Expr, qualifier: &str, context: &str) -> Result<ast::Expr> {
        if contains_subquery(e) {
            return Err(Error::NotSupported(
                "a subquery in a statement that changes rows through a view".into(),
            ));
        }
        let ns = Names {
            db: &self.db,
            qualifier,
            columns: &self.columns,
        };
        substitute(e, &ns, context)
    }

    /// An ON DUPLICATE KEY UPDATE value rewritten over the base table: `VALUES(c)` of a
    /// view column becomes the `__new__<base column>` name `dml` binds to the new row.
    pub fn rewrite_odku(&self, e: &ast::Expr, base: &strata_types::TableDef) -> Result<ast::Expr> {
        let mut e = e.clone();
        let mut failed = None;
        let _ = ast::visit_expressions_mut(&mut e, |x| {
            if let Some(arg) = values_argument(x) {
                match self
                    .columns
                    .iter()
                    .find(|c| c.name.eq_ignore_ascii_case(&arg))
                {
                    Some(ViewColumn { base: Some(b), .. }) => {
                        *x = ast::Expr::Identifier(ast::Ident::new(format!(
                            "__new__{}",
                            base.columns[*b].name
                        )));
                    }
                    Some(c) => failed = Some(Error::NonUpdatableColumn(c.name.clone())),
                    None => {
                        failed = Some(Error::UnknownColumn {
                            column: arg,
                            context: "field list".into(),
                        })
                    }
                }
            }
            ControlFlow::<()>::Continue(())
        });
        if let Some(err) = failed {
            return Err(err);
        }
        self.rewrite(&e, &self.name, "field list")
    }

    /// The error to report for a statement's failure, as MySQL words it through a view.
    pub fn map_error(&self, e: Error) -> Error {
        match e {
            Error::NoDefault(_) => Error::NoDefaultForViewField {
                db: self.db.clone(),
                view: self.name.clone(),
            },
            other => other,
        }
    }
}

/// The name `x` of a `VALUES(x)` call.
fn values_argument(e: &ast::Expr) -> Option<String> {
    let ast::Expr::Function(f) = e else {
        return None;
    };
    let name = crate::parse::object_name_parts(&f.name).join(".");
    if !name.eq_ignore_ascii_case("values") {
        return None;
    }
    let ast::FunctionArguments::List(list) = &f.args else {
        return None;
    };
    match list.args.as_slice() {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Identifier(id)))] => {
            Some(id.value.clone())
        }
        _ => None,
    }
}

/// The conditions CHECK OPTION tests, MySQL 8's way: outermost first, a view's WHERE
/// counts when it has a check option or a view above it is CASCADED.
fn checked(wheres: &[(Option<ast::Expr>, String)]) -> Vec<ast::Expr> {
    let mut cascade = false;
    let mut out = Vec::new();
    for (w, option) in wheres {
        if cascade || option != "NONE" {
            out.extend(w.clone());
        }
        if option == "CASCADED" {
            cascade = true;
        }
    }
    out
}

fn conjunction(parts: impl IntoIterator<Item = ast::Expr>) -> Option<ast::Expr> {
    parts.into_iter().fold(None, |acc, e| {
        let e = nested(e);
        Some(match acc {
            None => e,
            Some(a) => ast::Expr::BinaryOp {
                left: Box::new(a),
                op: ast::BinaryOperator::And,
                right: Box::new(e),
            },
        })
    })
}

fn nested(e: ast::Expr) -> ast::Expr {
    match e {
        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) | ast::Expr::Nested(_) => e,
        other => ast::Expr::Nested(Box::new(other)),
    }
}

fn refused(view: &ViewDef, verb: &'static str) -> Error {
    if verb == "INSERT" {
        Error::NonInsertableTable(view.name.clone())
    } else {
        Error::NonUpdatableTable {
            table: view.name.clone(),
            verb,
        }
    }
}

/// Resolves one view (and, recursively, the views it reads) to its base table.
fn resolve_level(
    cx: &ExecCtx,
    view: &ViewDef,
    verb: &'static str,
    views: &mut Vec<(String, String)>,
) -> Result<Level> {
    let key = (view.db.clone(), view.name.clone());
    if views.contains(&key) {
        return Err(Error::ViewRecursive {
            db: key.0,
            view: key.1,
        });
    }
    views.push(key);
    if !view.updatable || view.algorithm.eq_ignore_ascii_case("TEMPTABLE") {
        return Err(refused(view, verb));
    }
    let invalid = || Error::ViewInvalid {
        db: view.db.clone(),
        view: view.name.clone(),
    };
    let q = crate::planner::views::view_query(view, None)?;
    if q.with.is_some() || q.limit_clause.is_some() {
        return Err(refused(view, verb));
    }
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return Err(refused(view, verb));
    };
    let [from] = s.from.as_slice() else {
        return Err(join_refusal(view, verb));
    };
    if !from.joins.is_empty() {
        return Err(join_refusal(view, verb));
    }
    let ast::TableFactor::Table {
        name, alias, args, ..
    } = &from.relation
    else {
        return Err(refused(view, verb));
    };
    if args.is_some() {
        return Err(refused(view, verb));
    }
    let parts = crate::parse::object_name_parts(name);
    let [db, table] = parts.as_slice() else {
        return Err(invalid());
    };
    let qualifier = alias
        .as_ref()
        .map(|a| a.name.value.clone())
        .unwrap_or_else(|| table.clone());
    // The relation's columns, and the views' WHEREs below this one.
    let inner = cx.catalog.view(db, table);
    let base_level = inner.is_none();
    let below = match inner {
        Some(inner) => resolve_level(cx, &inner, verb, views)?,
        None => {
            let t = cx.catalog.table(db, table).map_err(|_| invalid())?;
            let def = t.def().clone();
            Level {
                base_db: db.clone(),
                base_table: table.clone(),
                base_alias: qualifier.clone(),
                columns: def
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| ViewColumn {
                        name: c.name.clone(),
                        expr: ast::Expr::CompoundIdentifier(vec![
                            ast::Ident::with_quote('`', qualifier.as_str()),
                            ast::Ident::with_quote('`', c.name.as_str()),
                        ]),
                        base: Some(i),
                    })
                    .collect(),
                star: def.visible_columns(),
                wheres: Vec::new(),
            }
        }
    };
    let ns = Names {
        db,
        qualifier: &qualifier,
        columns: &below.columns,
    };
    // Each select item: its source name (for picking by name) and its column.
    let mut items: Vec<ViewColumn> = Vec::new();
    for p in &s.projection {
        match p {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                items.extend(below.star.iter().map(|&i| below.columns[i].clone()))
            }
            ast::SelectItem::ExprWithAliases { .. } => return Err(refused(view, verb)),
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let source = match p {
                    ast::SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                    _ => plain_name(e).unwrap_or_default(),
                };
                let expr = substitute(e, &ns, "field list").map_err(|_| invalid())?;
                let base = plain_name(e).and_then(|_| {
                    // A plain name keeps the base position of the column it names.
                    lookup(&ns, e).ok().and_then(|c| c.base)
                });
                items.push(ViewColumn {
                    name: source,
                    expr,
                    base,
                });
            }
        }
    }
    let columns = name_columns(view, items).ok_or_else(invalid)?;
    let this_where = match &s.selection {
        None => None,
        // The base table's own level keeps its WHERE as written (a subquery there is
        // bound by the statement like any other).
        Some(w) if base_level && contains_subquery(w) => Some(w.clone()),
        Some(w) => Some(substitute(w, &ns, "where clause").map_err(|e| match e {
            Error::NotSupported(_) => e,
            _ => invalid(),
        })?),
    };
    let mut wheres = vec![(this_where, view.check_option.to_ascii_uppercase())];
    wheres.extend(below.wheres);
    Ok(Level {
        base_db: below.base_db,
        base_table: below.base_table,
        base_alias: below.base_alias,
        star: (0..columns.len()).collect(),
        columns,
        wheres,
    })
}

/// The view's stored column names over the items its query lists: by position, or,
/// when the query's `*` now lists other columns, by the names it listed at CREATE.
fn name_columns(view: &ViewDef, items: Vec<ViewColumn>) -> Option<Vec<ViewColumn>> {
    let positional = items.len() == view.columns.len()
        && items
            .iter()
            .zip(&view.source_names)
            .all(|(i, s)| i.name.is_empty() || i.name.eq_ignore_ascii_case(s));
    let picked: Vec<ViewColumn> = if positional {
        items
    } else {
        view.source_names
            .iter()
            .map(|s| {
                items
                    .iter()
                    .find(|i| i.name.eq_ignore_ascii_case(s))
                    .cloned()
            })
            .collect::<Option<_>>()?
    };
    if picked.len() != view.columns.len() {
        return None;
    }
    Some(
        picked
            .into_iter()
            .zip(&view.columns)
            .map(|(mut c, n)| {
                c.name = n.clone();
                c
            })
            .collect(),
    )
}

/// DELETE through a join view is 1395; INSERT and UPDATE through one (MySQL changes
/// one of its tables) are not done here.
fn join_refusal(view: &ViewDef, verb: &'static str) -> Error {
    if verb == "DELETE" {
        Error::ViewDeleteJoin {
            db: view.db.clone(),
            view: view.name.clone(),
        }
    } else {
        Error::NotSupported(format!("{verb} through a join view"))
    }
}

/// The names one level's expressions can use: the columns of its one FROM relation.
struct Names<'a> {
    db: &'a str,
    qualifier: &'a str,
    columns: &'a [ViewColumn],
}

/// The last part of a plain column name.
fn plain_name(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Identifier(id) => Some(id.value.clone()),
        ast::Expr::CompoundIdentifier(p) => p.last().map(|i| i.value.clone()),
        _ => None,
    }
}

/// The column a name (`c`, `q.c`, `db.q.c`) is in `ns`.
fn lookup<'a>(ns: &Names<'a>, e: &ast::Expr) -> Result<&'a ViewColumn> {
    let parts: Vec<&ast::Ident> = match e {
        ast::Expr::Identifier(id) => vec![id],
        ast::Expr::CompoundIdentifier(p) => p.iter().collect(),
        _ => return Err(Error::Internal("not a column name".into())),
    };
    let written = parts
        .iter()
        .map(|i| i.value.as_str())
        .collect::<Vec<_>>()
        .join(".");
    let qualified_ok = match parts.as_slice() {
        [_] => true,
        [q, _] => q.value.eq_ignore_ascii_case(ns.qualifier),
        [d, q, _] => d.value == ns.db && q.value.eq_ignore_ascii_case(ns.qualifier),
        _ => false,
    };
    let col = parts.last().map(|i| i.value.as_str()).unwrap_or("");
    qualified_ok
        .then(|| ns.columns.iter().find(|c| c.name.eq_ignore_ascii_case(col)))
        .flatten()
        .ok_or(Error::UnknownColumn {
            column: written,
            context: String::new(),
        })
}

/// `e` with every column name replaced by the expression it stands for in `ns`; a
/// name `ns` lacks is 1054 in `context`.
fn substitute(e: &ast::Expr, ns: &Names, context: &str) -> Result<ast::Expr> {
    if contains_subquery(e) {
        return Err(Error::NotSupported(
            "a subquery in the WHERE of a view over another view, changed through it".into(),
        ));
    }
    let mut out = e.clone();
    let mut failed = None;
    let _ = ast::visit_expressions_mut(&mut out, |x| {
        let is_name = match x {
            // DEFAULT in SET c = DEFAULT, and the new-row names of ON DUPLICATE KEY
            // UPDATE, are not column names.
            ast::Expr::Identifier(id) => {
                let keyword = id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default");
                !(keyword || id.value.starts_with("__new__"))
            }
            ast::Expr::CompoundIdentifier(_) => true,
            _ => false,
        };
        if is_name {
            match lookup(ns, x) {
                Ok(c) => *x = nested(c.expr.clone()),
                Err(Error::UnknownColumn { column, .. }) => {
                    failed.get_or_insert(Error::UnknownColumn {
                        column,
                        context: context.to_string(),
                    });
                }
                Err(other) => {
                    failed.get_or_insert(other);
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    match failed {
        Some(err) => Err(err),
        None => Ok(out),
    }
}

/// Whether `e` holds a subquery (IN, EXISTS, scalar).
fn contains_subquery(e: &ast::Expr) -> bool {
    use sqlparser::ast::{Visit, Visitor};
    struct Sub;
    impl Visitor for Sub {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
            ControlFlow::Break(())
        }
    }
    e.visit(&mut Sub).is_break()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(sql: &str) -> ast::Expr {
        match crate::parse::parse(&format!("SELECT {sql}")).unwrap().pop() {
            Some(ast::Statement::Query(q)) => match *q.body {
                ast::SetExpr::Select(s) => match &s.projection[0] {
                    ast::SelectItem::UnnamedExpr(e) => e.clone(),
                    _ => panic!("not an expression"),
                },
                _ => panic!("not a select"),
            },
            _ => panic!("not a query"),
        }
    }

    fn col(name: &str, expr_text: &str, base: Option<usize>) -> ViewColumn {
        ViewColumn {
            name: name.into(),
            expr: expr(expr_text),
            base,
        }
    }

    #[test]
    fn names_become_the_expressions_they_stand_for() {
        let columns = [col("x", "`t`.`a`", Some(0)), col("y", "`t`.`a` + 1", None)];
        let ns = Names {
            db: "d",
            qualifier: "v",
            columns: &columns,
        };
        let e = substitute(&expr("x > 1 AND v.y < d.v.x"), &ns, "where clause").unwrap();
        assert_eq!(e.to_string(), "`t`.`a` > 1 AND (`t`.`a` + 1) < `t`.`a`");
    }

    #[test]
    fn a_name_the_view_lacks_is_unknown_in_its_clause() {
        let columns = [col("x", "`t`.`a`", Some(0))];
        let ns = Names {
            db: "d",
            qualifier: "v",
            columns: &columns,
        };
        match substitute(&expr("b = 1"), &ns, "where clause") {
            Err(Error::UnknownColumn { column, context }) => {
                assert_eq!((column.as_str(), context.as_str()), ("b", "where clause"))
            }
            other => panic!("{other:?}"),
        }
        // A qualifier that is not the view's is not the view's column either.
        assert!(substitute(&expr("w.x = 1"), &ns, "where clause").is_err());
    }

    #[test]
    fn check_option_scope_follows_mysql_8() {
        let w = |s: &str| Some(expr(s));
        // v3 (none) over v2 (LOCAL) over v1 (none) over v0 (CASCADED).
        let wheres = vec![
            (w("a > 3"), "NONE".to_string()),
            (w("a > 2"), "LOCAL".to_string()),
            (w("a > 1"), "NONE".to_string()),
            (w("a > 0"), "CASCADED".to_string()),
        ];
        let got: Vec<String> = checked(&wheres).iter().map(|e| e.to_string()).collect();
        assert_eq!(got, ["a > 2", "a > 0"]);
        // CASCADED at the top checks every view below, whatever their options.
        let wheres = vec![
            (w("a > 3"), "CASCADED".to_string()),
            (w("a > 2"), "NONE".to_string()),
        ];
        assert_eq!(checked(&wheres).len(), 2);
    }

    #[test]
    fn values_of_a_view_column_names_the_base_column() {
        assert_eq!(values_argument(&expr("VALUES(x)")), Some("x".into()));
        assert_eq!(values_argument(&expr("other(x)")), None);
    }
}
