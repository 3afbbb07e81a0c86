//! Expanding a view where a statement names it: the view's stored query is parsed and
//! planned afresh, as a derived table, every time a statement is bound (so it sees
//! ALTER TABLE on its base tables; a base table or column that is gone gives 1356).
//!
//! The view is planned as a derived table in one of the statement's slots; the block
//! that reads it then merges it when MySQL 8 would (`ALGORITHM=UNDEFINED` or `MERGE`,
//! a plain query: `optimizer::derived_merge`) and materialises it otherwise, as
//! `ALGORITHM=TEMPTABLE` always is (`Planner::relation` marks such a view's query as not
//! mergeable). Both give the same rows; names and metadata are the view's either way.
//!
//! Inside the view, unqualified table names mean tables of the view's own database,
//! not of the session's current one: they are qualified before planning; the outer
//! statement's CTEs are not visible. A view met again while it is being expanded is
//! recursion (1462).

use crate::catalog::views::ViewDef;
use crate::plan::query::QueryPlan;
use crate::planner::query::Planner;
use sqlparser::ast;
use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::Arc;
use strata_types::output::flags;
use strata_types::{Collation, ColumnDef, ColumnMeta, DataType, Error, FieldType, Result};

/// The view's query as a syntax tree, its table names qualified with the view's
/// database. `columns`: the names its result must have, when they differ from the
/// names the query gives (a `SELECT *` over a table that changed): the query is then
/// wrapped to pick them by name.
pub(crate) fn view_query(view: &ViewDef, pick: Option<&[String]>) -> Result<ast::Query> {
    let text = match pick {
        None => view.query.clone(),
        Some(names) => {
            let list: Vec<String> = names
                .iter()
                .map(|n| crate::catalog::views::quote_ident(n))
                .collect();
            format!(
                "SELECT {} FROM ({}) AS {}",
                list.join(", "),
                view.query,
                crate::catalog::views::quote_ident(&view.name)
            )
        }
    };
    let invalid = || Error::ViewInvalid {
        db: view.db.clone(),
        view: view.name.clone(),
    };
    let mut stmts = crate::parse::parse(&text).map_err(|_| invalid())?;
    let Some(ast::Statement::Query(q)) = stmts.pop() else {
        return Err(invalid());
    };
    let mut q = *q;
    qualify(&mut q, &view.db);
    Ok(q)
}

/// Gives every one-part table name that is not a CTE of the query the database `db`.
pub(crate) fn qualify(q: &mut ast::Query, db: &str) {
    use sqlparser::ast::{Visit, Visitor};
    struct Ctes(HashSet<String>);
    impl Visitor for Ctes {
        type Break = ();
        fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
            if let Some(w) = &q.with {
                for c in &w.cte_tables {
                    self.0.insert(c.alias.name.value.to_ascii_lowercase());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut ctes = Ctes(HashSet::new());
    let _ = q.visit(&mut ctes);
    let _ = ast::visit_relations_mut(q, |name| {
        let parts = crate::parse::object_name_parts(name);
        if let [single] = parts.as_slice() {
            if !ctes.0.contains(&single.to_ascii_lowercase()) {
                *name = ast::ObjectName::from(vec![
                    ast::Ident::with_quote('`', db),
                    ast::Ident::with_quote('`', single.as_str()),
                ]);
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Plans view `view` for a statement: its columns (named as the view names them) and
/// the plan that fills its slot.
pub(crate) fn expand(planner: &Planner, view: &ViewDef) -> Result<(Vec<ColumnMeta>, QueryPlan)> {
    let invalid = || Error::ViewInvalid {
        db: view.db.clone(),
        view: view.name.clone(),
    };
    let plan = planner.in_view(view, |p| {
        let q = view_query(view, None)?;
        p.plan_derived(&q)
    })?;
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => return Err(as_invalid(e, invalid)),
    };
    let found: Vec<&str> = plan.columns().iter().map(|c| c.name.as_str()).collect();
    let (plan, columns) = if found.len() == view.columns.len()
        && found
            .iter()
            .zip(&view.source_names)
            .all(|(a, b)| a.eq_ignore_ascii_case(b))
    {
        let columns = renamed(plan.columns(), &view.columns);
        (plan, columns)
    } else {
        // The query's columns changed under it (`*` over an altered table): the
        // columns it had are picked by name, or the view is invalid.
        let picked = planner
            .in_view(view, |p| {
                let q = view_query(view, Some(&view.source_names))?;
                p.plan_derived(&q)
            })?
            .map_err(|e| as_invalid(e, invalid))?;
        if picked.columns().len() != view.columns.len() {
            return Err(invalid());
        }
        let columns = renamed(picked.columns(), &view.columns);
        (picked, columns)
    };
    Ok((columns, plan))
}

/// A missing table or column inside a view is the view's error (1356).
fn as_invalid(e: Error, invalid: impl Fn() -> Error) -> Error {
    match e {
        Error::NoSuchTable { .. }
        | Error::UnknownColumn { .. }
        | Error::UnknownTable(_)
        | Error::UnknownDatabase(_)
        | Error::AmbiguousColumn { .. }
        | Error::DuplicateColumn(_) => invalid(),
        other => other,
    }
}

fn renamed(columns: &[ColumnMeta], names: &[String]) -> Vec<ColumnMeta> {
    columns
        .iter()
        .zip(names)
        .map(|(c, n)| {
            let mut c = c.clone();
            c.name = n.clone();
            c
        })
        .collect()
}

/// The derived-table handle a view is read through. Its columns have the types MySQL
/// gives a view's columns: a base table's column keeps its definition (type, NULL-ness,
/// collation), a computed one gets the type its result metadata describes; so results
/// read through the view carry the same metadata as the query itself.
pub(crate) fn handle(
    cx: &crate::context::ExecCtx,
    view: &ViewDef,
    columns: &[ColumnMeta],
) -> Result<Arc<dyn strata_engine::Table>> {
    let mut defs: Vec<ColumnDef> = Vec::with_capacity(columns.len());
    for m in columns {
        if defs.iter().any(|d| d.name.eq_ignore_ascii_case(&m.name)) {
            return Err(Error::DuplicateColumn(m.name.clone()));
        }
        let mut c = base_column(cx, m).unwrap_or_else(|| computed_column(m));
        c.name = m.name.clone();
        c.default = None;
        c.auto_increment = false;
        c.on_update_now = false;
        defs.push(c);
    }
    Ok(Arc::new(crate::catalog::rowsource::ReadOnlyTable(
        crate::bind::derived::DerivedTable::with_columns(&view.name, defs),
    )))
}

/// The definition of the base table column a result column is, if it is one.
fn base_column(cx: &crate::context::ExecCtx, m: &ColumnMeta) -> Option<ColumnDef> {
    if m.schema.is_empty() || m.org_table.is_empty() || m.org_name.is_empty() {
        return None;
    }
    let t = cx.catalog.table(&m.schema, &m.org_table).ok()?;
    let def = t.def();
    let c = def.columns.get(def.column_index(&m.org_name)?)?.clone();
    // The metadata must agree with the column, or it is not really that column.
    (c.nullable == (m.flags & flags::NOT_NULL == 0)).then_some(c)
}

/// A column definition from a computed result column's metadata.
fn computed_column(m: &ColumnMeta) -> ColumnDef {
    let unsigned = m.flags & flags::UNSIGNED != 0;
    let binary = m.charset == 63;
    let data_type = match m.field_type {
        FieldType::Tiny => DataType::TinyInt { unsigned },
        FieldType::Short => DataType::SmallInt { unsigned },
        FieldType::Int24 => DataType::MediumInt { unsigned },
        FieldType::Long => DataType::Int { unsigned },
        FieldType::LongLong => DataType::BigInt { unsigned },
        FieldType::Float | FieldType::Double => {
            DataType::real_from_meta(m.field_type == FieldType::Double, m.length, m.decimals)
        }
        FieldType::NewDecimal | FieldType::Decimal => {
            let digits = m
                .length
                .saturating_sub(u32::from(m.decimals > 0))
                .saturating_sub(u32::from(!unsigned));
            DataType::Decimal {
                precision: digits.clamp(u32::from(m.decimals.max(1)), 65) as u8,
                scale: m.decimals.min(30),
            }
        }
        FieldType::Date => DataType::Date,
        FieldType::DateTime => DataType::DateTime {
            fsp: m.decimals.min(6),
        },
        FieldType::Timestamp => DataType::Timestamp {
            fsp: m.decimals.min(6),
        },
        FieldType::Time => DataType::Time {
            fsp: m.decimals.min(6),
        },
        FieldType::Year => DataType::Year,
        FieldType::Json => DataType::Json,
        FieldType::Bit => DataType::Bit(m.length.clamp(1, 64) as u8),
        FieldType::Null => DataType::Binary(0),
        FieldType::Blob if binary => DataType::Blob(m.length),
        FieldType::Blob => DataType::Text(m.length),
        FieldType::String if binary => DataType::Binary(m.length),
        FieldType::String => DataType::Char(m.length / 4),
        _ if binary && m.length <= 65_535 => DataType::VarBinary(m.length),
        _ if binary => DataType::Blob(m.length),
        _ if m.length / 4 <= 16_383 => DataType::VarChar(m.length / 4),
        _ => DataType::Text(m.length),
    };
    ColumnDef {
        name: m.name.clone(),
        data_type,
        nullable: m.flags & flags::NOT_NULL == 0,
        default: None,
        auto_increment: false,
        on_update_now: false,
        collation: Collation::from_id(m.charset),
        members: Vec::new(),
        generated: None,
        comment: String::new(),
        real_unsigned: false,
        invisible: Default::default(),
    }
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

    #[test]
    fn unqualified_tables_get_the_view_database() {
        let mut q = query(
            "SELECT a FROM t JOIN other.u ON t.a = u.a \
             WHERE a IN (SELECT b FROM s) AND EXISTS (SELECT 1 FROM t AS t2)",
        );
        qualify(&mut q, "shop");
        let text = q.to_string();
        assert!(text.contains("FROM `shop`.`t` JOIN other.u"), "{text}");
        assert!(text.contains("FROM `shop`.`s`"), "{text}");
        assert!(text.contains("FROM `shop`.`t` AS t2"), "{text}");
    }

    #[test]
    fn the_query_own_ctes_stay_unqualified() {
        let mut q = query("WITH c AS (SELECT a FROM t) SELECT a FROM c");
        qualify(&mut q, "shop");
        let text = q.to_string();
        assert!(text.contains("FROM `shop`.`t`"), "{text}");
        assert!(text.ends_with("FROM c"), "{text}");
    }

    #[test]
    fn changed_columns_are_picked_by_name() {
        let v = ViewDef {
            db: "d".into(),
            name: "v".into(),
            columns: vec!["x".into()],
            source_names: vec!["a".into()],
            explicit_columns: true,
            query: "SELECT * FROM t".into(),
            algorithm: "UNDEFINED".into(),
            definer_user: "root".into(),
            definer_host: "%".into(),
            security: "DEFINER".into(),
            check_option: "NONE".into(),
            character_set_client: "utf8mb4".into(),
            collation_connection: "utf8mb4_0900_ai_ci".into(),
            updatable: true,
            column_info: vec![],
        };
        let q = view_query(&v, Some(&v.source_names)).unwrap();
        assert_eq!(
            q.to_string(),
            "SELECT `a` FROM (SELECT * FROM `d`.`t`) AS `v`"
        );
    }
}
