//! The columns CREATE TABLE … SELECT makes of its query's result columns, by MySQL 8's
//! rules ([`selected_columns`]): a column read straight from a base table keeps its
//! definition; a computed one gets its expression's result type
//! (`create_select_types`); a UNION's / INTERSECT's / EXCEPT's column the aggregated
//! type of its SELECTs' columns.
//!
//! A derived table, a common table expression or a view is typed the same way, from its
//! own query ([`Scope::derived`]): its columns are the columns a CREATE TABLE … SELECT
//! of its query would make, so a column read through it keeps the type it has inside
//! (an INT stays an INT, a VARCHAR(20) a VARCHAR(20)), and expressions over it are
//! typed from those. A recursive CTE's columns are typed from its non-recursive SELECTs
//! and are NULL-able, as MySQL 8 documents. A scalar subquery in the select list is
//! typed from its query the same way.

use crate::context::ExecCtx;
use crate::planner::query::Planner;
use crate::statements::create_select_types::{aggregate, type_of, Item, Table, Unknown};
use crate::statements::dml::implicit_default;
use sqlparser::ast;
use std::sync::Arc;
use strata_types::output::flags;
use strata_types::schema::ColumnDefault;
use strata_types::{ColumnDef, ColumnMeta, DataType, Error, Result, TableDef};

/// Derived tables, CTEs and views nest at most this deep in what is typed (a guard:
/// MySQL's own limit on nesting is far above what a CTAS needs).
const MAX_DEPTH: usize = 32;

/// What a query's typing sees besides its own text: the CTEs of the queries around it,
/// the CTEs being typed (a reference to one is a recursive CTE's step), and how deep
/// it is nested.
#[derive(Clone, Default)]
pub(crate) struct Scope {
    ctes: Vec<ast::Cte>,
    recursive: bool,
    typing: Vec<String>,
    depth: usize,
}

/// The columns CREATE TABLE … SELECT makes of the query's result columns `metas`, each
/// typed or a 1235 naming what is not.
pub(crate) fn selected_columns(
    cx: &ExecCtx,
    query: &ast::Query,
    metas: &[ColumnMeta],
) -> Vec<Result<ColumnDef>> {
    let _strict = super::create_select_types::StrictTyping::new(cx.sql_mode.strict());
    query_columns(cx, query, metas, &Scope::default())
        .into_iter()
        .zip(metas)
        .map(|(c, m)| c.map_err(|what| refused(m, &what)))
        .collect()
}

fn refused(m: &ColumnMeta, what: &str) -> Error {
    Error::NotSupported(format!(
        "CREATE TABLE … SELECT of the computed column `{}`: {what} (declare its type in \
         the column definitions)",
        m.name
    ))
}

/// The columns of `query` (whose result columns are `metas`) in `scope`.
fn query_columns(
    cx: &ExecCtx,
    query: &ast::Query,
    metas: &[ColumnMeta],
    scope: &Scope,
) -> Vec<std::result::Result<ColumnDef, Unknown>> {
    let scope = scope.with(query.with.as_ref());
    body_columns(cx, query.body.as_ref(), metas, &scope).0
}

/// The columns of a query body, and whether a SELECT of it was a recursive CTE's step
/// (left out of the typing).
fn body_columns(
    cx: &ExecCtx,
    body: &ast::SetExpr,
    metas: &[ColumnMeta],
    scope: &Scope,
) -> (Vec<std::result::Result<ColumnDef, Unknown>>, bool) {
    let all = |what: &str| metas.iter().map(|_| Err(what.to_string())).collect();
    match body {
        ast::SetExpr::Select(sel) => {
            let tables = scope.tables_of(cx, sel);
            let step = matches!(&tables, Ok((_, true)));
            let items = select_items(sel, metas);
            let cols = metas
                .iter()
                .zip(items)
                .map(|(m, item)| {
                    let tables = tables.as_ref().map(|t| &t.0).map_err(Clone::clone)?;
                    selected_column(cx, scope, m, item, tables)
                })
                .collect();
            (cols, step)
        }
        ast::SetExpr::Query(q) => {
            let scope = scope.with(q.with.as_ref());
            body_columns(cx, q.body.as_ref(), metas, &scope)
        }
        ast::SetExpr::SetOperation { .. } => (set_columns(cx, body, metas, scope), false),
        _ => (all("a query of this kind"), false),
    }
}

/// The columns of a UNION / INTERSECT / EXCEPT: each SELECT's items typed, then
/// aggregated as MySQL does (a column read from a table keeps its type there, but not
/// its default). A SELECT reading the recursive CTE being typed is left out, and then
/// every column is NULL-able.
fn set_columns(
    cx: &ExecCtx,
    body: &ast::SetExpr,
    metas: &[ColumnMeta],
    scope: &Scope,
) -> Vec<std::result::Result<ColumnDef, Unknown>> {
    let mut branches = Vec::new();
    if let Err(what) = set_branches(body, &mut branches) {
        return metas.iter().map(|_| Err(what.clone())).collect();
    }
    let mut typed = Vec::new();
    let mut step = false;
    for (sel, own_with) in branches {
        let scope = scope.with(own_with);
        match scope.tables_of(cx, sel) {
            Ok((_, true)) => step = true,
            Ok((tables, false)) => {
                let items = branch_items(sel, &tables, metas.len());
                typed.push(Ok((items, tables)));
            }
            Err(e) => typed.push(Err(e)),
        }
    }
    metas
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let items = typed
                .iter()
                .map(|b| {
                    let (items, tables) = b.as_ref().map_err(Clone::clone)?;
                    let e =
                        items.get(i).cloned().flatten().ok_or_else(|| {
                            "a UNION branch whose columns are not known".to_string()
                        })?;
                    type_of(&e, tables)
                })
                .collect::<std::result::Result<Vec<Item>, Unknown>>()?;
            let nullable = step || items.iter().any(|x| x.nullable);
            let c = aggregate(&items, nullable, true, "UNION")?.column(&m.name)?;
            finish_computed(c).map_err(|e| e.to_string())
        })
        .collect()
}

/// The SELECTs of a UNION / INTERSECT / EXCEPT, in order, each with the WITH of the
/// parenthesised query it is in (if any).
fn set_branches<'q>(
    body: &'q ast::SetExpr,
    out: &mut Vec<(&'q ast::Select, Option<&'q ast::With>)>,
) -> std::result::Result<(), Unknown> {
    match body {
        ast::SetExpr::SetOperation { left, right, .. } => {
            set_branches(left, out)?;
            set_branches(right, out)
        }
        ast::SetExpr::Select(sel) => {
            out.push((sel, None));
            Ok(())
        }
        ast::SetExpr::Query(q) if q.order_by.is_none() && q.limit_clause.is_none() => {
            match q.body.as_ref() {
                ast::SetExpr::Select(sel) => {
                    out.push((sel, q.with.as_ref()));
                    Ok(())
                }
                _ if q.with.is_none() => set_branches(q.body.as_ref(), out),
                _ => Err("a UNION branch with a WITH of its own".into()),
            }
        }
        _ => Err("a UNION branch other than a SELECT".into()),
    }
}

/// The select-list expressions of a UNION's SELECT, `*` expanded to the columns of
/// its tables (in FROM order, as `SELECT *` lists them), or None for each when they
/// cannot be matched to the `width` result columns.
fn branch_items(sel: &ast::Select, tables: &[Table], width: usize) -> Vec<Option<ast::Expr>> {
    let mut out = Vec::new();
    let typed_all = sel.from.iter().all(|f| f.joins.iter().all(plain_join));
    for item in &sel.projection {
        match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                out.push(Some(e.clone()))
            }
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) if typed_all => {
                let qual = match item {
                    ast::SelectItem::QualifiedWildcard(
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                        _,
                    ) => crate::parse::object_name_parts(n).last().cloned(),
                    _ => None,
                };
                for t in tables {
                    if qual
                        .as_ref()
                        .is_some_and(|q| !q.eq_ignore_ascii_case(&t.qualifier))
                    {
                        continue;
                    }
                    let names = t
                        .def
                        .columns
                        .iter()
                        .map(|c| c.name.clone())
                        .chain(t.refused.iter().map(|r| r.0.clone()));
                    for n in names {
                        out.push(Some(ast::Expr::CompoundIdentifier(vec![
                            ast::Ident::new(t.qualifier.clone()),
                            ast::Ident::new(n),
                        ])));
                    }
                }
            }
            _ => return vec![None; width],
        }
    }
    if out.len() != width {
        return vec![None; width];
    }
    out
}

/// A join whose operands `SELECT *` lists side by side (not USING / NATURAL, which
/// list the common columns once).
fn plain_join(j: &ast::Join) -> bool {
    use ast::JoinOperator as J;
    let c = match &j.join_operator {
        J::Join(c)
        | J::Inner(c)
        | J::Left(c)
        | J::LeftOuter(c)
        | J::Right(c)
        | J::RightOuter(c)
        | J::CrossJoin(c) => c,
        _ => return false,
    };
    matches!(c, ast::JoinConstraint::On(_) | ast::JoinConstraint::None)
}

/// The column CREATE TABLE … SELECT makes of result column `m` (`item`: its select-list
/// expression, when known), as MySQL 8 does: a column read straight from a base table
/// keeps that column's type, NULL-ness (or becomes NULL-able through an outer join),
/// default, ON UPDATE, collation and members, but not AUTO_INCREMENT (such a column
/// gets the implicit default instead); a column of a derived table, CTE or view keeps
/// the column its query makes ([`through_derived`]); a computed one gets its
/// expression's result type (`create_select_types`), and when NOT NULL and numeric or
/// string the implicit default (`DEFAULT '0'`, `DEFAULT ''`). A computed column whose
/// type Strata cannot derive exactly is refused with what it is, never given a guessed
/// type.
fn selected_column(
    cx: &ExecCtx,
    scope: &Scope,
    m: &ColumnMeta,
    item: Option<&ast::Expr>,
    tables: &[Table],
) -> std::result::Result<ColumnDef, Unknown> {
    let nullable = m.flags & flags::NOT_NULL == 0;
    let base = (!m.org_table.is_empty() && !m.schema.is_empty() && !m.org_name.is_empty())
        .then(|| {
            // A temporary table of the session hides the base table of its name.
            cx.temp_table(&m.schema, &m.org_table)
                .or_else(|| cx.catalog.table(&m.schema, &m.org_table).ok())
        })
        .flatten()
        .and_then(|t| {
            let def = t.def();
            def.column_index(&m.org_name)
                .map(|i| def.columns[i].clone())
        });
    if let Some(mut c) = base {
        c.name = m.name.clone();
        // A column named in the SELECT is visible in the new table (MySQL's rule).
        c.invisible = false;
        c.nullable |= nullable;
        if c.auto_increment {
            c.auto_increment = false;
            if !c.nullable && c.default.is_none() {
                c.default = Some(ColumnDefault::Value(implicit_default(&c)));
            }
        }
        return Ok(c);
    }
    // A column of a derived table, CTE or view: named in the select list, or listed
    // by `*` (its metadata names the table and the column).
    let named = match item {
        Some(ast::Expr::Identifier(i)) => Some((None, i.value.clone())),
        Some(ast::Expr::CompoundIdentifier(p)) if p.len() == 2 => {
            Some((Some(p[0].value.clone()), p[1].value.clone()))
        }
        None if !m.table.is_empty() && !m.org_name.is_empty() => {
            Some((Some(m.table.clone()), m.org_name.clone()))
        }
        _ => None,
    };
    // The metadata names the column a plain (perhaps aliased) column reference reads,
    // which settles a name both sides of USING have.
    let by_meta = (!m.table.is_empty() && !m.org_name.is_empty())
        .then(|| (Some(m.table.clone()), m.org_name.clone()));
    for (qual, col) in by_meta.into_iter().chain(named) {
        if let Some(c) = through_derived(qual.as_deref(), &col, tables)? {
            let mut c = c;
            c.name = m.name.clone();
            c.invisible = false;
            return Ok(c);
        }
    }
    let item = item.ok_or_else(|| "an expression not matched to the select list".to_string())?;
    if let ast::Expr::Subquery(q) = item {
        let c = scope.scalar_subquery(cx, q)?.column(&m.name)?;
        return finish_computed(c).map_err(|e| e.to_string());
    }
    let c = type_of(item, tables)?.column(&m.name)?;
    finish_computed(c).map_err(|e| e.to_string())
}

/// Column `name` of a derived table, CTE or view of `tables` (qualified by `qual`),
/// as a select-list item makes it: the column its query makes, NULL-able through an
/// outer join. Read through a merged one, a base column is MySQL's `Item_view_ref`,
/// which keeps no default: one it had explicitly becomes the implicit one, one it did
/// not have stays absent. None when no derived table has the column; an error when it
/// has but its type is not known.
fn through_derived(
    qual: Option<&str>,
    name: &str,
    tables: &[Table],
) -> std::result::Result<Option<ColumnDef>, Unknown> {
    let mut found = None;
    for t in tables {
        if qual.is_some_and(|q| !q.eq_ignore_ascii_case(&t.qualifier)) {
            continue;
        }
        let own = t.def.column_index(name).map(|i| &t.def.columns[i]);
        let why = t.refused.iter().find(|r| r.0.eq_ignore_ascii_case(name));
        if own.is_none() && why.is_none() {
            continue;
        }
        if found.is_some() {
            // Ambiguous names were refused by the planner; typed as an expression.
            return Ok(None);
        }
        found = Some((t, own, why));
    }
    let Some((t, own, why)) = found else {
        return Ok(None);
    };
    if !t.derived {
        return Ok(None);
    }
    if let Some((_, why)) = why {
        return Err(why.clone());
    }
    let Some(c) = own else { return Ok(None) };
    let mut c = c.clone();
    c.nullable |= t.outer;
    if t.merged && c.default.is_some() {
        c.default = None;
        c = finish_computed(c).map_err(|e| e.to_string())?;
    }
    Ok(Some(c))
}

/// A computed column's implicit default: when NOT NULL and numeric or string (not
/// TEXT), MySQL 8's (`DEFAULT '0'`, `DEFAULT ''`).
pub(crate) fn finish_computed(mut c: ColumnDef) -> Result<ColumnDef> {
    let data_type = c.data_type;
    let nullable = c.nullable;
    let plain = data_type.is_integer()
        || matches!(
            data_type,
            DataType::Decimal { .. }
                | DataType::Double { .. }
                | DataType::Float { .. }
                | DataType::VarChar(_)
                | DataType::Char(_)
        );
    if !nullable && plain {
        // In the column's own form (`0.0` for a DECIMAL(2,1)).
        let zero = crate::expr::convert::coerce(implicit_default(&c), &c, 1, false)?;
        c.default = Some(ColumnDefault::Value(zero));
    }
    Ok(c)
}

impl Scope {
    /// The scope of a query with WITH clause `with`: its CTEs hide those of the same
    /// name around it.
    fn with(&self, with: Option<&ast::With>) -> Scope {
        let mut s = self.clone();
        if let Some(w) = with {
            s.ctes.retain(|c| {
                !w.cte_tables
                    .iter()
                    .any(|o| o.alias.name.value.eq_ignore_ascii_case(&c.alias.name.value))
            });
            s.ctes.extend(w.cte_tables.iter().cloned());
            s.recursive |= w.recursive;
        }
        s
    }

    /// The tables a SELECT reads, whose columns its expressions are typed from: each
    /// table, view, derived table and CTE of FROM and its joins, those on the inner
    /// side of an outer join NULL-able; and whether it reads the recursive CTE being
    /// typed (the SELECT is then the CTE's step).
    fn tables_of(
        &self,
        cx: &ExecCtx,
        sel: &ast::Select,
    ) -> std::result::Result<(Vec<Table>, bool), Unknown> {
        match &sel.group_by {
            ast::GroupByExpr::Expressions(_, mods) if !mods.is_empty() => {
                return Err("a query WITH ROLLUP".into())
            }
            ast::GroupByExpr::All(_) => return Err("GROUP BY ALL".into()),
            _ => {}
        }
        let mut out: Vec<Table> = Vec::new();
        let mut step = false;
        for from in &sel.from {
            self.push_joined(cx, from, &mut out, &mut step)?;
        }
        Ok((out, step))
    }

    fn push_joined(
        &self,
        cx: &ExecCtx,
        from: &ast::TableWithJoins,
        out: &mut Vec<Table>,
        step: &mut bool,
    ) -> std::result::Result<(), Unknown> {
        let start = out.len();
        self.push_table(cx, &from.relation, false, out, step)?;
        for j in &from.joins {
            use ast::JoinOperator as J;
            match &j.join_operator {
                J::Join(_) | J::Inner(_) | J::CrossJoin(_) | J::StraightJoin(_) => {
                    self.push_table(cx, &j.relation, false, out, step)?
                }
                J::Left(_) | J::LeftOuter(_) => {
                    self.push_table(cx, &j.relation, true, out, step)?
                }
                J::Right(_) | J::RightOuter(_) => {
                    for t in &mut out[start..] {
                        t.outer = true;
                    }
                    self.push_table(cx, &j.relation, false, out, step)?
                }
                _ => return Err("this kind of join".into()),
            }
        }
        Ok(())
    }

    fn push_table(
        &self,
        cx: &ExecCtx,
        f: &ast::TableFactor,
        outer: bool,
        out: &mut Vec<Table>,
        step: &mut bool,
    ) -> std::result::Result<(), Unknown> {
        let start = out.len();
        match f {
            ast::TableFactor::Table { name, alias, .. } => {
                let qualifier = |table: &str| {
                    alias
                        .as_ref()
                        .map_or(table.to_string(), |a| a.name.value.clone())
                };
                if let [one] = crate::parse::object_name_parts(name).as_slice() {
                    if self.typing.iter().any(|c| c.eq_ignore_ascii_case(one)) {
                        *step = true;
                        return Ok(());
                    }
                    if let Some(i) = self
                        .ctes
                        .iter()
                        .rposition(|c| c.alias.name.value.eq_ignore_ascii_case(one))
                    {
                        out.push(self.cte(cx, i, qualifier(one)));
                        return self.outer_join(out, start, outer);
                    }
                }
                let Ok((db, table)) = crate::context::resolve_table(cx, name) else {
                    return Ok(());
                };
                if let Some(handle) = cx
                    .temp_table(&db, &table)
                    .or_else(|| cx.catalog.table(&db, &table).ok())
                {
                    out.push(Table {
                        qualifier: qualifier(&table),
                        def: handle.def().clone(),
                        outer,
                        refused: Vec::new(),
                        merged: false,
                        derived: false,
                    });
                } else if let Some(v) = cx.catalog.view(&db, &table) {
                    let q = crate::planner::views::view_query(&v, Some(&v.source_names));
                    let t = match q {
                        Ok(q) => Scope {
                            depth: self.depth,
                            ..Scope::default()
                        }
                        .derived(cx, &q, &v.columns, qualifier(&table)),
                        Err(e) => unknown_table(qualifier(&table), &v.columns, &e.to_string()),
                    };
                    out.push(t);
                }
            }
            ast::TableFactor::Derived {
                lateral: false,
                subquery,
                alias: Some(alias),
                ..
            } => {
                let names: Vec<String> =
                    alias.columns.iter().map(|c| c.name.value.clone()).collect();
                let t = self.derived(cx, subquery, &names, alias.name.value.clone());
                out.push(t);
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.push_joined(cx, table_with_joins, out, step)?,
            // A LATERAL derived table, a table function: its columns are not typed.
            _ => {}
        }
        self.outer_join(out, start, outer)
    }

    fn outer_join(
        &self,
        out: &mut [Table],
        start: usize,
        outer: bool,
    ) -> std::result::Result<(), Unknown> {
        if outer {
            for t in &mut out[start..] {
                t.outer = true;
            }
        }
        Ok(())
    }

    /// CTE `i` of the scope, read as `qualifier`: typed from its query in the scope of
    /// the CTEs before it (all of them, and itself, in a WITH RECURSIVE).
    fn cte(&self, cx: &ExecCtx, i: usize, qualifier: String) -> Table {
        let cte = &self.ctes[i];
        let names: Vec<String> = cte
            .alias
            .columns
            .iter()
            .map(|c| c.name.value.clone())
            .collect();
        let mut inner = Scope {
            ctes: if self.recursive {
                self.ctes.clone()
            } else {
                self.ctes[..i].to_vec()
            },
            recursive: self.recursive,
            typing: self.typing.clone(),
            depth: self.depth,
        };
        if self.recursive {
            inner.typing.push(cte.alias.name.value.clone());
        }
        inner.derived(cx, &cte.query, &names, qualifier)
    }

    /// The result type of a scalar subquery in the select list: its one select-list
    /// expression's, typed as an expression (MySQL 8 makes a subquery's column of its
    /// result type and length, as a function's: an INT column's 11 characters are a
    /// BIGINT there), NULL-able when it reads a table (it may find no row).
    fn scalar_subquery(&self, cx: &ExecCtx, q: &ast::Query) -> std::result::Result<Item, Unknown> {
        let ast::SetExpr::Select(sel) = q.body.as_ref() else {
            return Err("a subquery of a set operation".into());
        };
        let scope = self.with(q.with.as_ref());
        let (tables, step) = scope.tables_of(cx, sel)?;
        if step {
            return Err("a subquery reading the recursive CTE".into());
        }
        let [ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }] =
            sel.projection.as_slice()
        else {
            return Err("a subquery of several columns or `*`".into());
        };
        let mut item = type_of(e, &tables)?;
        item.exact = None;
        item.nullable |= !sel.from.is_empty();
        Ok(item)
    }

    /// The table a derived table, CTE or view of query `q` is (named `qualifier`, its
    /// columns renamed by `names` when given): the columns a CREATE TABLE … SELECT of
    /// the query makes, typed in this scope.
    fn derived(&self, cx: &ExecCtx, q: &ast::Query, names: &[String], qualifier: String) -> Table {
        if self.depth >= MAX_DEPTH {
            return unknown_table(qualifier, names, "derived tables nested too deep");
        }
        // The query as it can be planned on its own: with the CTEs it sees.
        let mut full = q.clone();
        if !self.ctes.is_empty() {
            let own = full.with.take();
            let mut ctes = self.ctes.clone();
            let mut recursive = self.recursive;
            if let Some(w) = own {
                ctes.retain(|c| {
                    !w.cte_tables
                        .iter()
                        .any(|o| o.alias.name.value.eq_ignore_ascii_case(&c.alias.name.value))
                });
                ctes.extend(w.cte_tables);
                recursive |= w.recursive;
            }
            full.with = Some(ast::With {
                with_token: ast::helpers::attached_token::AttachedToken::empty(),
                recursive,
                cte_tables: ctes,
            });
        }
        let metas = match Planner::new(cx).plan_statement(&full) {
            Ok(plan) => plan.columns().to_vec(),
            Err(e) => return unknown_table(qualifier, names, &e.to_string()),
        };
        if !names.is_empty() && names.len() != metas.len() {
            return unknown_table(qualifier, names, "a column list of another length");
        }
        let inner = Scope {
            ctes: Vec::new(),
            recursive: false,
            typing: self.typing.clone(),
            depth: self.depth + 1,
        };
        let typed = query_columns(cx, &full, &metas, &inner);
        let mut columns = Vec::new();
        let mut refused = Vec::new();
        for (i, (c, m)) in typed.into_iter().zip(&metas).enumerate() {
            let name = names.get(i).unwrap_or(&m.name).clone();
            match c {
                Ok(mut c) => {
                    c.name = name;
                    columns.push(c);
                }
                Err(why) => refused.push((name, why)),
            }
        }
        Table {
            qualifier,
            def: Arc::new(table_def(columns)),
            outer: false,
            refused,
            merged: mergeable(q),
            derived: true,
        }
    }
}

/// A derived table none of whose columns is typed (`why`).
fn unknown_table(qualifier: String, names: &[String], why: &str) -> Table {
    Table {
        qualifier,
        def: Arc::new(table_def(Vec::new())),
        outer: false,
        refused: names.iter().map(|n| (n.clone(), why.to_string())).collect(),
        merged: false,
        derived: true,
    }
}

fn table_def(columns: Vec<ColumnDef>) -> TableDef {
    crate::bind::derived::derived_def("", columns)
}

/// Whether MySQL 8 merges a derived table, CTE or view of query `q` into the query
/// reading it: one SELECT with no DISTINCT, GROUP BY, HAVING, aggregate, window
/// function or LIMIT.
fn mergeable(q: &ast::Query) -> bool {
    let ast::SetExpr::Select(sel) = q.body.as_ref() else {
        return false;
    };
    if q.limit_clause.is_some() || sel.distinct.is_some() || sel.having.is_some() {
        return false;
    }
    if !matches!(&sel.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty()) {
        return false;
    }
    let mut grouped = false;
    let _ = ast::visit_expressions(&sel.projection, |e| {
        if let ast::Expr::Function(f) = e {
            let name = crate::parse::object_name_parts(&f.name)
                .join(".")
                .to_ascii_lowercase();
            if f.over.is_some() || crate::bind::is_aggregate_name(&name) {
                grouped = true;
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    !grouped
}

/// The select-list expression of each result column, where the SELECT's items can be
/// matched to its columns: by position when it has no `*`, else by alias.
fn select_items<'q>(sel: &'q ast::Select, metas: &[ColumnMeta]) -> Vec<Option<&'q ast::Expr>> {
    let wildcard = sel.projection.iter().any(|i| {
        matches!(
            i,
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
        )
    });
    if !wildcard && sel.projection.len() == metas.len() {
        return sel
            .projection
            .iter()
            .map(|i| match i {
                ast::SelectItem::UnnamedExpr(e) => Some(e),
                ast::SelectItem::ExprWithAlias { expr, .. } => Some(expr),
                _ => None,
            })
            .collect();
    }
    metas
        .iter()
        .map(|m| {
            sel.projection.iter().find_map(|i| match i {
                ast::SelectItem::ExprWithAlias { expr, alias }
                    if alias.value.eq_ignore_ascii_case(&m.name) =>
                {
                    Some(expr)
                }
                _ => None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(sql: &str) -> ast::Query {
        match crate::parse::parse(sql).unwrap().pop() {
            Some(ast::Statement::Query(q)) => *q,
            _ => panic!("not a query"),
        }
    }

    fn select(sql: &str) -> ast::Select {
        match *query(sql).body {
            ast::SetExpr::Select(s) => *s,
            _ => panic!("not a SELECT"),
        }
    }

    #[test]
    fn merged_as_mysql_8_merges() {
        assert!(mergeable(&query("SELECT a, b + 1 FROM t WHERE a > 1")));
        assert!(!mergeable(&query("SELECT a FROM t GROUP BY a")));
        assert!(!mergeable(&query("SELECT DISTINCT a FROM t")));
        assert!(!mergeable(&query("SELECT COUNT(*) FROM t")));
        assert!(!mergeable(&query("SELECT a, ROW_NUMBER() OVER () FROM t")));
        assert!(!mergeable(&query("SELECT a FROM t LIMIT 1")));
        assert!(!mergeable(&query("SELECT a FROM t UNION SELECT b FROM u")));
    }

    #[test]
    fn set_branches_in_order() {
        let q = query("SELECT 1 UNION (SELECT 2) EXCEPT SELECT 3 INTERSECT SELECT 4");
        let mut out = Vec::new();
        set_branches(&q.body, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        let q = query("SELECT 1 UNION (SELECT 2 ORDER BY 1 LIMIT 1)");
        assert!(set_branches(&q.body, &mut Vec::new()).is_err());
    }

    fn table(name: &str, cols: &[&str]) -> Table {
        let cols = cols
            .iter()
            .map(|c| {
                ColumnDef::plain(
                    *c,
                    DataType::Int { unsigned: false },
                    false,
                    strata_types::Collation::Binary,
                )
            })
            .collect();
        Table {
            qualifier: name.into(),
            def: Arc::new(table_def(cols)),
            outer: false,
            refused: vec![("r".into(), "why".into())],
            merged: true,
            derived: true,
        }
    }

    #[test]
    fn a_union_branch_star_lists_its_tables_columns() {
        let tables = [table("x", &["a", "b"]), table("y", &["c"])];
        let shown = |sql: &str, width: usize| -> Vec<String> {
            branch_items(&select(sql), &tables, width)
                .into_iter()
                .map(|e| e.map_or("?".into(), |e| e.to_string()))
                .collect()
        };
        // The refused column `r` of each table is listed after its typed ones.
        assert_eq!(
            shown("SELECT * FROM x, y", 5),
            ["x.a", "x.b", "x.r", "y.c", "y.r"]
        );
        assert_eq!(shown("SELECT y.*, 1 FROM x, y", 3), ["y.c", "y.r", "1"]);
        assert_eq!(shown("SELECT * FROM x", 2), ["?", "?"]);
        assert_eq!(shown("SELECT * FROM x JOIN y USING (a)", 5), ["?"; 5]);
    }

    #[test]
    fn a_merged_derived_column_keeps_no_default_it_did_not_have() {
        let mut t = table("x", &["a", "b"]);
        let mut def = (*t.def).clone();
        def.columns[1].default = Some(ColumnDefault::Value(strata_types::Value::Int(7)));
        t.def = Arc::new(def);
        let a = through_derived(None, "a", std::slice::from_ref(&t))
            .unwrap()
            .unwrap();
        assert_eq!(a.default, None);
        let b = through_derived(Some("x"), "b", std::slice::from_ref(&t))
            .unwrap()
            .unwrap();
        assert_eq!(
            b.default,
            Some(ColumnDefault::Value(strata_types::Value::Int(0)))
        );
        t.merged = false;
        let b = through_derived(None, "b", std::slice::from_ref(&t))
            .unwrap()
            .unwrap();
        assert_eq!(
            b.default,
            Some(ColumnDefault::Value(strata_types::Value::Int(7)))
        );
        t.outer = true;
        assert!(
            through_derived(None, "a", std::slice::from_ref(&t))
                .unwrap()
                .unwrap()
                .nullable
        );
        assert_eq!(
            through_derived(None, "r", std::slice::from_ref(&t)),
            Err("why".into())
        );
        assert_eq!(
            through_derived(Some("z"), "a", std::slice::from_ref(&t)),
            Ok(None)
        );
    }
}
