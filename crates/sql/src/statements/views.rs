//! CREATE [OR REPLACE] VIEW, ALTER VIEW, DROP VIEW and SHOW CREATE VIEW.
//!
//! CREATE plans the view's query once, as a statement reading it would (so a missing
//! table is 1146 now, and a query reading the view being defined is 1462), to name the
//! view's columns by MySQL's rules; then one write of the catalog stores the definition
//! (`catalog::views`). The stored query is the text the client wrote after `AS`
//! (`parse::view_clauses`), bound afresh by every statement that reads the view.

use crate::catalog::views::quote_ident;
use crate::catalog::views::ViewDef;
use crate::context::{ExecCtx, Outcome};
use crate::parse::view_clauses::{self, ViewText};
use crate::planner::query::Planner;
use sqlparser::ast;
use std::ops::ControlFlow;
use strata_types::output::flags;
use strata_types::{ColumnMeta, Error, FieldType, Result, Value};

/// The longest column name MySQL accepts (NAME_CHAR_LEN).
const NAME_LEN: usize = 64;

/// CREATE or ALTER VIEW; `source` is the statement's text (the clauses sqlparser does
/// not keep are read from it).
pub fn define(stmt: &ast::Statement, source: &str, cx: &mut ExecCtx) -> Result<Outcome> {
    crate::statements::ddl_locks::lock_for_ddl(stmt, cx)?;
    let (name, columns) = match stmt {
        ast::Statement::CreateView(v) => {
            if v.temporary || v.materialized {
                return Err(Error::NotSupported("TEMPORARY or MATERIALIZED VIEW".into()));
            }
            (
                &v.name,
                v.columns.iter().map(|c| c.name.value.clone()).collect(),
            )
        }
        ast::Statement::AlterView { name, columns, .. } => {
            (name, columns.iter().map(|c| c.value.clone()).collect())
        }
        _ => return Err(Error::Internal("not a view statement".into())),
    };
    let text = view_clauses::split(source)
        .ok_or_else(|| Error::Internal("view statement text not recognised".into()))?;
    let (db, view) = crate::context::resolve_table(cx, name)?;
    if crate::catalog::is_system_schema(&db) {
        return Err(Error::NotSupported(format!("views in {db}")));
    }
    if !cx.catalog.database_exists(&db) {
        return Err(Error::UnknownDatabase(db));
    }
    let def = build(cx, &db, &view, columns, &text)?;
    cx.catalog.put_view(def, text.or_replace, text.alter)?;
    Ok(Outcome::ok(0))
}

/// Plans the query and names the columns: the definition to store.
fn build(
    cx: &ExecCtx,
    db: &str,
    view: &str,
    list: Vec<String>,
    text: &ViewText,
) -> Result<ViewDef> {
    let query = match crate::parse::parse(text.select)?.pop() {
        Some(ast::Statement::Query(q)) => *q,
        _ => return Err(Error::Syntax(text.select.chars().take(80).collect())),
    };
    if query_reads_variables(text.select) {
        // ER_VIEW_SELECT_VARIABLE would be MySQL's answer; refused as unsupported here.
        return Err(Error::NotSupported(
            "a variable or parameter in a view's SELECT".into(),
        ));
    }
    // Unqualified names in the query mean the current database's tables, as when it is
    // later bound (`planner::views` qualifies them with the view's database): so a view
    // made while another database is current is refused rather than bound differently.
    if cx.current_db.as_deref() != Some(db) && mentions_unqualified_table(&query) {
        return Err(Error::NotSupported(
            "a view whose query names tables of another database unqualified".into(),
        ));
    }
    let mut q = query.clone();
    crate::planner::views::qualify(&mut q, db);
    let planner = Planner::for_text(cx, text.select);
    planner.defining_view(db, view);
    let plan = planner.plan_derived(&q)?;
    let found: Vec<String> = plan.columns().iter().map(|c| c.name.clone()).collect();
    let explicit_columns = !list.is_empty();
    let columns = if explicit_columns {
        if list.len() != found.len() {
            return Err(Error::ViewColumnCount);
        }
        check_unique(&list, &vec![true; list.len()])?;
        list
    } else {
        let aliased = aliased_items(&query, found.len());
        valid_names(found.clone(), &aliased)?
    };
    let user = cx.env.user();
    let (definer_user, definer_host) = match text.definer {
        None => (user, "localhost".to_string()),
        Some(d) => definer(d, &user)?,
    };
    let var = |name: &str| {
        cx.env
            .system_variable(name, false)
            .map(|v| v.to_text())
            .unwrap_or_else(|_| "utf8mb4".into())
    };
    let algorithm = text.algorithm.clone().unwrap_or_else(|| "UNDEFINED".into());
    let mut def = ViewDef {
        updatable: algorithm != "TEMPTABLE"
            && is_updatable(&query)
            && reads_only_updatable_views(cx, &q),
        column_info: Vec::new(),
        db: db.to_string(),
        name: view.to_string(),
        columns,
        explicit_columns,
        source_names: found,
        query: text.select.to_string(),
        algorithm,
        definer_user,
        definer_host,
        security: text.security.clone().unwrap_or_else(|| "DEFINER".into()),
        check_option: text.check.name().to_string(),
        character_set_client: var("character_set_client"),
        collation_connection: var("collation_connection"),
    };
    if def.check_option != "NONE" && !def.updatable {
        return Err(Error::ViewCheckNonUpdatable {
            db: def.db.clone(),
            view: def.name.clone(),
        });
    }
    def.column_info = column_info(cx, &def)?;
    Ok(def)
}

/// The description `information_schema.COLUMNS` keeps of each column of `view`.
fn column_info(cx: &ExecCtx, view: &ViewDef) -> Result<Vec<crate::catalog::views::ViewColumnInfo>> {
    Ok(view_columns(cx, view)?
        .into_iter()
        .map(|c| crate::catalog::views::ViewColumnInfo {
            type_text: c.type_text,
            nullable: c.nullable,
            default: (!c.default.is_null()).then(|| c.default.to_text()),
            collation: c.collation.map(String::from),
        })
        .collect())
}

/// After DDL that may change base tables' columns (ALTER, RENAME, CREATE TABLE): the
/// stored column descriptions of every view are described afresh, as MySQL 8 updates
/// the views referencing a changed table in its dictionary. A view that no longer binds
/// keeps its old description (MySQL keeps it too, and reports the view invalid when it
/// is read). Each changed view is one catalog write of its own, after the DDL's commit:
/// a crash in between leaves only an older description, never a wrong definition.
pub fn refresh_columns(cx: &ExecCtx) -> Result<()> {
    for db in cx.catalog.databases() {
        for view in cx.catalog.views(&db) {
            let Ok(info) = column_info(cx, &view) else {
                continue;
            };
            if info != view.column_info {
                let mut def = (*view).clone();
                def.column_info = info;
                cx.catalog.put_view(def, true, false)?;
            }
        }
    }
    Ok(())
}

/// Whether every view the (qualified) query reads can itself have rows changed through it.
fn reads_only_updatable_views(cx: &ExecCtx, q: &ast::Query) -> bool {
    let mut ok = true;
    let _ = ast::visit_relations(q, |name| {
        let parts = crate::parse::object_name_parts(name);
        if let [db, table] = parts.as_slice() {
            if cx.catalog.view(db, table).is_some_and(|v| !v.updatable) {
                ok = false;
            }
        }
        ControlFlow::<()>::Continue(())
    });
    ok
}

/// MySQL's rule for a view rows can be changed through: one SELECT (no set operation)
/// over tables, without DISTINCT, GROUP BY, HAVING, aggregate or window functions or
/// subqueries in its select list, reading at least one table.
pub(crate) fn is_updatable(q: &ast::Query) -> bool {
    use sqlparser::ast::{Visit, Visitor};
    struct Sub;
    impl Visitor for Sub {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
            ControlFlow::Break(())
        }
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            match e {
                ast::Expr::Function(f) if f.over.is_some() => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }
    // LIMIT keeps MySQL from merging the view, so it is not updatable either.
    if q.limit_clause.is_some() {
        return false;
    }
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return false;
    };
    let grouped = !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty());
    if s.distinct.is_some() || grouped || s.having.is_some() || s.from.is_empty() {
        return false;
    }
    let plain_from = s.from.iter().all(|f| {
        std::iter::once(&f.relation)
            .chain(f.joins.iter().map(|j| &j.relation))
            .all(|r| matches!(r, ast::TableFactor::Table { .. }))
    });
    plain_from
        && s.projection.iter().all(|p| match p {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                !crate::bind::contains_aggregate(e) && !e.visit(&mut Sub).is_break()
            }
            _ => true,
        })
}

/// Whether the query text reads `@var` or `?` (MySQL refuses both in a view).
fn query_reads_variables(select: &str) -> bool {
    let key = crate::parse::lex::normalize(select)
        .map(|(k, _)| k)
        .unwrap_or_default();
    let b = key.as_bytes();
    (0..b.len())
        .any(|i| b[i] == b'@' && b.get(i + 1) != Some(&b'@') && (i == 0 || b[i - 1] != b'@'))
}

/// Whether some table name of the query has no database (and is not one of its CTEs).
fn mentions_unqualified_table(q: &ast::Query) -> bool {
    let mut a = q.clone();
    let before = a.to_string();
    crate::planner::views::qualify(&mut a, "\u{1}");
    a.to_string() != before
}

/// For each result column of the query's first block, whether its name was given (an
/// alias, a column's own name, a column of `*`) rather than made from an expression.
fn aliased_items(q: &ast::Query, n: usize) -> Vec<bool> {
    let mut body = q.body.as_ref();
    loop {
        match body {
            ast::SetExpr::SetOperation { left, .. } => body = left,
            ast::SetExpr::Query(q) => body = q.body.as_ref(),
            _ => break,
        }
    }
    let ast::SetExpr::Select(s) = body else {
        return vec![false; n];
    };
    let mut out = Vec::with_capacity(n);
    let wildcards = s
        .projection
        .iter()
        .filter(|p| {
            matches!(
                p,
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
            )
        })
        .count();
    let singles = s.projection.len() - wildcards;
    for p in &s.projection {
        match p {
            ast::SelectItem::ExprWithAlias { .. } => out.push(true),
            // A column keeps its own name, which counts as given (MySQL and MariaDB
            // refuse `SELECT a, a` with 1060).
            ast::SelectItem::UnnamedExpr(e) => out.push(matches!(
                e,
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
            )),
            _ if wildcards == 1 => out.extend(std::iter::repeat_n(true, n.saturating_sub(singles))),
            _ => return vec![true; n],
        }
    }
    out.resize(n, false);
    out
}

/// MySQL's names for a view's columns without a column list: an unaliased name that
/// is not a valid column name (longer than 64 characters, or ending in a space)
/// becomes `Name_exp_<position>`; of two equal names, an unaliased one becomes
/// `My_exp_<name>` (`My_exp_<n>_<name>` if that is taken too); two equal aliases are
/// 1060.
fn valid_names(mut names: Vec<String>, aliased: &[bool]) -> Result<Vec<String>> {
    for (i, n) in names.iter_mut().enumerate() {
        if !aliased[i] && (n.chars().count() > NAME_LEN || n.ends_with(' ') || n.is_empty()) {
            *n = format!("Name_exp_{}", i + 1);
        }
    }
    for i in 0..names.len() {
        for j in 0..i {
            if !names[i].eq_ignore_ascii_case(&names[j]) {
                continue;
            }
            let target = if !aliased[i] {
                i
            } else if !aliased[j] {
                j
            } else {
                return Err(Error::DuplicateColumn(names[i].clone()));
            };
            let base = names[target].clone();
            let mut attempt = 0;
            loop {
                let candidate = if attempt == 0 {
                    format!("My_exp_{base}")
                } else {
                    format!("My_exp_{attempt}_{base}")
                };
                let taken = names[..=i]
                    .iter()
                    .enumerate()
                    .any(|(k, n)| k != target && n.eq_ignore_ascii_case(&candidate));
                if !taken {
                    names[target] = candidate;
                    break;
                }
                attempt += 1;
            }
        }
    }
    check_unique(&names, aliased)?;
    Ok(names)
}

fn check_unique(names: &[String], _aliased: &[bool]) -> Result<()> {
    for (i, n) in names.iter().enumerate() {
        if names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)) {
            return Err(Error::DuplicateColumn(n.clone()));
        }
        if n.chars().count() > NAME_LEN || n.ends_with(' ') || n.is_empty() {
            return Err(Error::WrongColumnName(n.clone()));
        }
    }
    Ok(())
}

/// `user@host` in any of MySQL's spellings, or CURRENT_USER.
fn definer(text: &str, current: &str) -> Result<(String, String)> {
    let t = text.trim();
    let bare = t.trim_end_matches("()").trim();
    if bare.eq_ignore_ascii_case("CURRENT_USER") {
        return Ok((current.to_string(), "localhost".into()));
    }
    let unquote = |s: &str| -> String {
        let s = s.trim();
        let b = s.as_bytes();
        if b.len() >= 2 && matches!(b[0], b'`' | b'\'' | b'"') && b[b.len() - 1] == b[0] {
            let q = b[0] as char;
            s[1..s.len() - 1].replace(&format!("{q}{q}"), &q.to_string())
        } else {
            s.to_string()
        }
    };
    // The `@` that separates them is outside quotes.
    let mut quote = None;
    for (i, c) in t.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '`' | '\'' | '"') => quote = Some(c),
            None if c == '@' => return Ok((unquote(&t[..i]), unquote(&t[i + 1..]))),
            None => {}
        }
    }
    Ok((unquote(t), "%".into()))
}

/// DROP VIEW [IF EXISTS] v, … [RESTRICT | CASCADE].
pub fn drop_views(names: &[ast::ObjectName], if_exists: bool, cx: &ExecCtx) -> Result<Outcome> {
    let all = names
        .iter()
        .map(|n| crate::context::resolve_table(cx, n))
        .collect::<Result<Vec<_>>>()?;
    cx.catalog.drop_views(&all, if_exists)?;
    Ok(Outcome::ok(0))
}

/// The text SHOW CREATE VIEW (and SHOW CREATE TABLE of a view) prints.
pub fn show_create(v: &ViewDef) -> String {
    let mut out = format!(
        "CREATE ALGORITHM={} DEFINER={} SQL SECURITY {} VIEW {}",
        v.algorithm,
        v.definer(),
        v.security,
        quote_ident(&v.name)
    );
    if v.explicit_columns {
        let cols: Vec<String> = v.columns.iter().map(|c| quote_ident(c)).collect();
        out.push_str(&format!(" ({})", cols.join(",")));
    }
    out.push_str(" AS ");
    // MySQL 8's normalised text where `view_text` prints it, else the query as written.
    match crate::statements::view_text::normalised(v) {
        Some(text) => out.push_str(&text),
        None => out.push_str(&v.query),
    }
    match v.check_option.as_str() {
        "CASCADED" => out.push_str(" WITH CASCADED CHECK OPTION"),
        "LOCAL" => out.push_str(" WITH LOCAL CHECK OPTION"),
        _ => {}
    }
    out
}

/// One column of a view as SHOW COLUMNS and information_schema.COLUMNS describe it.
pub struct ViewColumn {
    pub name: String,
    /// The type as SHOW COLUMNS prints it (`int`, `varchar(8)`).
    pub type_text: String,
    pub nullable: bool,
    /// The base column's default, for a column that is one; else NULL.
    pub default: Value,
    /// The collation of a text column.
    pub collation: Option<&'static str>,
}

/// The columns of `view`, bound now: a column that is a base table's column is
/// described as that column (type, NULL-ness, default), as MySQL does; a computed one
/// by its result type.
pub fn view_columns(cx: &ExecCtx, view: &ViewDef) -> Result<Vec<ViewColumn>> {
    let planner = Planner::new(cx);
    let (metas, _) = crate::planner::views::expand(&planner, view)?;
    let mut out = Vec::with_capacity(metas.len());
    for m in metas {
        let base = (!m.org_table.is_empty() && !m.schema.is_empty())
            .then(|| cx.catalog.table(&m.schema, &m.org_table).ok())
            .flatten();
        let base_col = base.as_ref().and_then(|t| {
            let def = t.def();
            def.column_index(&m.org_name)
                .map(|i| def.columns[i].clone())
        });
        out.push(match base_col {
            Some(c) => ViewColumn {
                name: m.name.clone(),
                type_text: c.data_type.sql_name(),
                nullable: c.nullable,
                default: crate::statements::show::default_text(&c),
                collation: c.data_type.is_text().then(|| c.collation.name()),
            },
            None => ViewColumn {
                name: m.name.clone(),
                type_text: meta_type_text(&m),
                nullable: m.flags & flags::NOT_NULL == 0,
                default: Value::Null,
                collation: (m.charset != 63 && is_text(m.field_type))
                    .then_some("utf8mb4_general_ci"),
            },
        });
    }
    Ok(out)
}

fn is_text(t: FieldType) -> bool {
    matches!(
        t,
        FieldType::VarString | FieldType::String | FieldType::VarChar | FieldType::Blob
    )
}

/// The SQL type of a computed result column, from its protocol metadata.
fn meta_type_text(m: &ColumnMeta) -> String {
    let unsigned = if m.flags & flags::UNSIGNED != 0 {
        " unsigned"
    } else {
        ""
    };
    let chars = if m.charset == 63 {
        m.length
    } else {
        m.length / 4
    };
    match m.field_type {
        FieldType::Tiny => format!("tinyint{unsigned}"),
        FieldType::Short => format!("smallint{unsigned}"),
        FieldType::Int24 => format!("mediumint{unsigned}"),
        FieldType::Long => format!("int{unsigned}"),
        FieldType::LongLong => format!("bigint{unsigned}"),
        FieldType::Float | FieldType::Double => {
            let t = strata_types::DataType::real_from_meta(
                m.field_type == FieldType::Double,
                m.length,
                m.decimals,
            );
            t.sql_name()
        }
        FieldType::NewDecimal | FieldType::Decimal => {
            let digits = m.length.saturating_sub(u32::from(m.decimals > 0))
                - u32::from(unsigned.is_empty() && m.length > 1);
            format!("decimal({},{}){unsigned}", digits.max(1), m.decimals)
        }
        FieldType::Date => "date".into(),
        FieldType::DateTime if m.decimals > 0 && m.decimals <= 6 => {
            format!("datetime({})", m.decimals)
        }
        FieldType::DateTime => "datetime".into(),
        FieldType::Timestamp => "timestamp".into(),
        FieldType::Time if m.decimals > 0 && m.decimals <= 6 => format!("time({})", m.decimals),
        FieldType::Time => "time".into(),
        FieldType::Year => "year".into(),
        FieldType::Bit => format!("bit({})", m.length),
        FieldType::Json => "json".into(),
        FieldType::Null => "binary(0)".into(),
        FieldType::Blob if m.charset == 63 => "longblob".into(),
        FieldType::Blob => "longtext".into(),
        FieldType::String if m.charset == 63 => format!("binary({chars})"),
        FieldType::String => format!("char({chars})"),
        _ if m.charset == 63 => format!("varbinary({chars})"),
        _ => format!("varchar({chars})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str], aliased: &[bool]) -> Result<Vec<String>> {
        valid_names(n.iter().map(|s| s.to_string()).collect(), aliased)
    }

    #[test]
    fn unaliased_duplicates_get_my_exp_names() {
        assert_eq!(
            names(&["a", "a", "a"], &[false, false, false]).unwrap(),
            ["a", "My_exp_a", "My_exp_1_a"]
        );
        assert_eq!(
            names(&["a", "A"], &[false, true]).unwrap(),
            ["My_exp_a", "A"]
        );
        assert!(matches!(
            names(&["a", "a"], &[true, true]),
            Err(Error::DuplicateColumn(_))
        ));
    }

    #[test]
    fn overlong_unaliased_names_become_name_exp() {
        let long = "x".repeat(65);
        assert_eq!(
            names(&["a", &long], &[false, false]).unwrap(),
            ["a", "Name_exp_2"]
        );
    }

    #[test]
    fn updatable_views_by_mysql_rules() {
        let q = |sql: &str| match crate::parse::parse(sql).unwrap().pop() {
            Some(ast::Statement::Query(q)) => *q,
            _ => panic!("not a query"),
        };
        assert!(is_updatable(&q("SELECT a, b + 1 AS c FROM t WHERE a > 1")));
        assert!(is_updatable(&q("SELECT t.a FROM t JOIN u ON t.a = u.a")));
        for refused in [
            "SELECT a FROM t LIMIT 2",
            "SELECT DISTINCT a FROM t",
            "SELECT a, COUNT(*) FROM t GROUP BY a",
            "SELECT a FROM t UNION SELECT a FROM u",
            "SELECT (SELECT 1) AS x FROM t",
            "SELECT a FROM (SELECT a FROM t) AS d",
            "SELECT 1 AS x",
        ] {
            assert!(!is_updatable(&q(refused)), "{refused}");
        }
    }

    #[test]
    fn definers_in_every_spelling() {
        assert_eq!(
            definer("`root`@`%`", "me").unwrap(),
            ("root".into(), "%".into())
        );
        assert_eq!(
            definer("'u'@'local host'", "me").unwrap(),
            ("u".into(), "local host".into())
        );
        assert_eq!(
            definer("CURRENT_USER()", "me").unwrap(),
            ("me".into(), "localhost".into())
        );
    }
}
