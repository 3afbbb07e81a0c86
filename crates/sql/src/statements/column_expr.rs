//! Column expressions of MySQL 8: expression defaults (`DEFAULT (expr)`, 8.0.13+) and
//! generated columns (`AS (expr) [VIRTUAL|STORED]`).
//!
//! Both are stored in the column's definition as text in MySQL 8's printed form
//! ([`crate::constraints::checks::mysql_text`]: `now()`, `` (`a` + 1) ``,
//! `_utf8mb4'abc'`), which is what SHOW CREATE TABLE and information_schema show. CREATE
//! and ALTER TABLE check them as MySQL does ([`validate_table`]: 3767-3772 for defaults,
//! 3102/3106/3107/3109/3763/3765 for generated columns); a statement that writes the table
//! binds the texts again over the table's row ([`ColumnExprs::bind`]) and evaluates them
//! per row, in column order, so an expression sees the columns before it as they will be
//! stored.

use crate::bind::{Binder, Scope};
use crate::constraints::checks::{mysql_text, DefOnly};
use crate::expr::{EvalCtx, Expr};
use sqlparser::ast;
use std::ops::ControlFlow;
use std::sync::Arc;
use strata_engine::Table;
use strata_types::schema::ColumnDefault;
use strata_types::{ColumnDef, Error, Result, TableDef, Value};

/// What an expression belongs to: the errors differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Default,
    Generated,
}

// Functions whose value is not fixed by the row: refused in a generated column (3763),
// the same list as CHECK constraints refuse.
use crate::constraints::checks::NOT_ROW_FIXED;

/// Functions that read the session or the server rather than compute a value: refused
/// in a default expression (3770) and in a generated column (3763).
const SESSION_BOUND: &[&str] = &[
    "connection_id",
    "user",
    "current_user",
    "session_user",
    "system_user",
    "database",
    "schema",
    "last_insert_id",
    "found_rows",
    "row_count",
    "get_lock",
    "release_lock",
    "release_all_locks",
    "is_free_lock",
    "is_used_lock",
    "sleep",
    "benchmark",
    "load_file",
    "master_pos_wait",
    "source_pos_wait",
    "values",
    "default",
];

/// The text a column stores for its expression.
pub fn stored_text(e: &ast::Expr) -> String {
    let inner = match e {
        ast::Expr::Nested(x) => x.as_ref(),
        other => other,
    };
    mysql_text(inner, true)
}

/// Parses a stored expression text (string introducers dropped, as CHECK texts are).
pub fn parse_stored(text: &str) -> Result<ast::Expr> {
    crate::constraints::checks::parse_stored(text)
}

/// The column names an expression mentions (as a CHECK constraint's are found).
fn columns_of(e: &ast::Expr) -> Vec<String> {
    crate::constraints::checks::columns_of(e)
}

/// The constructs MySQL refuses in the expression of column `col`, found by walking it
/// (as written: the stored text quotes names, so a variable is recognised here only).
pub fn forbidden(col: &str, e: &ast::Expr, kind: Kind) -> Result<()> {
    use sqlparser::ast::Visit;
    struct V<'a> {
        col: &'a str,
        kind: Kind,
        err: Option<Error>,
    }
    impl V<'_> {
        fn disallowed(&self) -> Error {
            match self.kind {
                Kind::Default => Error::DefaultExprDisallowed(self.col.to_string()),
                Kind::Generated => Error::GeneratedDisallowed(self.col.to_string()),
            }
        }
        fn named(&self, function: String) -> Error {
            let column = self.col.to_string();
            match self.kind {
                Kind::Default => Error::DefaultExprNamedFunction { column, function },
                Kind::Generated => Error::GeneratedNamedFunction { column, function },
            }
        }
        fn variables(&self) -> Error {
            match self.kind {
                Kind::Default => Error::DefaultExprVariables(self.col.to_string()),
                Kind::Generated => Error::GeneratedVariables(self.col.to_string()),
            }
        }
    }
    impl ast::Visitor for V<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            let err = match e {
                ast::Expr::Subquery(_)
                | ast::Expr::Exists { .. }
                | ast::Expr::InSubquery { .. } => Some(self.disallowed()),
                ast::Expr::Function(f) => {
                    let n = crate::parse::object_name_parts(&f.name)
                        .join(".")
                        .to_ascii_lowercase();
                    if SESSION_BOUND.contains(&n.as_str())
                        || (self.kind == Kind::Generated && NOT_ROW_FIXED.contains(&n.as_str()))
                    {
                        Some(self.named(n))
                    } else if f.over.is_some() || crate::bind::is_aggregate_name(&n) {
                        Some(self.disallowed())
                    } else {
                        None
                    }
                }
                ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.starts_with('@') => {
                    Some(self.variables())
                }
                ast::Expr::Identifier(i)
                    if i.quote_style.is_none()
                        && self.kind == Kind::Generated
                        && ["current_timestamp", "current_date", "current_time"]
                            .iter()
                            .any(|n| i.value.eq_ignore_ascii_case(n)) =>
                {
                    Some(self.named(i.value.to_ascii_lowercase()))
                }
                ast::Expr::Identifier(i)
                    if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("current_user") =>
                {
                    Some(self.named("current_user".into()))
                }
                _ => None,
            };
            match err {
                Some(e) => {
                    self.err = Some(e);
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            }
        }
    }
    let mut v = V {
        col,
        kind,
        err: None,
    };
    let _ = e.visit(&mut v);
    match v.err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Refuses dropping or renaming column `name` of table `table` while an expression of
/// another column of `columns` names it (3108 for a generated column, 3766 for an
/// expression default), as MySQL 8 does.
pub fn check_unused(columns: &[ColumnDef], name: &str, table: &str) -> Result<()> {
    for c in columns {
        if c.name.eq_ignore_ascii_case(name) {
            continue;
        }
        let uses = |text: &str| {
            parse_stored(text)
                .map(|e| columns_of(&e).iter().any(|u| u.eq_ignore_ascii_case(name)))
                .unwrap_or(false)
        };
        if let Some(g) = &c.generated {
            if uses(&g.expr) {
                return Err(Error::DependentByGenerated(name.to_string()));
            }
        }
        if let Some(ColumnDefault::Expr(t)) = &c.default {
            if uses(t) {
                return Err(Error::DependentByDefaultExpr {
                    column: name.to_string(),
                    table: table.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Whether column `c` holds an expression MySQL computes (a generated column or one
/// with an expression default): others may only name it when it comes first.
fn computed(c: &ColumnDef) -> bool {
    c.generated.is_some() || matches!(c.default, Some(ColumnDefault::Expr(_)))
}

/// Checks the expression of column `at` as MySQL 8 does.
fn validate(columns: &[ColumnDef], at: usize, e: &ast::Expr, kind: Kind) -> Result<()> {
    let name = &columns[at].name;
    forbidden(name, e, kind)?;
    for used in columns_of(e) {
        let Some(j) = columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(&used))
        else {
            // Unknown names are reported by binding (1054).
            continue;
        };
        let other = &columns[j];
        match kind {
            Kind::Default => {
                if j >= at && computed(other) {
                    return Err(Error::DefaultExprNonPrior(name.clone()));
                }
                if other.auto_increment {
                    return Err(Error::DefaultExprAutoIncrement(name.clone()));
                }
            }
            Kind::Generated => {
                if j >= at && other.generated.is_some() {
                    return Err(Error::GeneratedNonPrior);
                }
                if other.auto_increment {
                    return Err(Error::GeneratedAutoIncrement(name.clone()));
                }
            }
        }
    }
    Ok(())
}

/// Checks a table definition (CREATE TABLE, ALTER TABLE): a visible column (4028), then
/// every expression: the refusals above, then binding over the definition (1054 for an
/// unknown column, 1305 for an unknown function).
pub fn validate_table(def: &TableDef) -> Result<()> {
    if !def.columns.is_empty() && def.columns.iter().all(|c| c.invisible) {
        return Err(Error::NoVisibleColumn);
    }
    if !def.columns.iter().any(computed) {
        return Ok(());
    }
    if let Some(pk) = def.primary_key() {
        if pk
            .columns
            .iter()
            .any(|&c| def.columns[c].generated.as_ref().is_some_and(|g| !g.stored))
        {
            return Err(Error::GeneratedUnsupported(
                "Defining a virtual generated column as primary key".into(),
            ));
        }
    }
    let table: Arc<dyn Table> = Arc::new(DefOnly::new(def.clone()));
    let mut scope = Scope::default();
    scope.push(def.name.clone(), def.db.clone(), table);
    for (i, c) in def.columns.iter().enumerate() {
        let (text, kind, context) = match (&c.generated, &c.default) {
            (Some(g), _) => (&g.expr, Kind::Generated, "generated column function"),
            (None, Some(ColumnDefault::Expr(t))) => (t, Kind::Default, "default value expression"),
            _ => continue,
        };
        let e = parse_stored(text)?;
        validate(&def.columns, i, &e, kind)?;
        Binder::new(&scope, context).bind(&e)?;
    }
    Ok(())
}

/// The expression columns of a table, bound over its row for one statement that writes
/// it.
pub struct ColumnExprs {
    /// For each column: its bound expression default.
    defaults: Vec<Option<Expr>>,
    /// The generated columns in column order: (position, expression).
    generated: Vec<(usize, Expr)>,
}

impl ColumnExprs {
    /// None when the table has no expression columns (the common case costs nothing).
    pub fn bind(def: &TableDef, db: &str, table: &Arc<dyn Table>) -> Result<Option<Arc<Self>>> {
        if !def.columns.iter().any(computed) {
            return Ok(None);
        }
        let mut scope = Scope::default();
        scope.push(def.name.clone(), db.to_string(), table.clone());
        let mut defaults = Vec::with_capacity(def.columns.len());
        let mut generated = Vec::new();
        for (i, c) in def.columns.iter().enumerate() {
            let d = match &c.default {
                Some(ColumnDefault::Expr(t)) if c.generated.is_none() => {
                    let e = parse_stored(t)?;
                    Some(Binder::new(&scope, "default value expression").bind(&e)?.0)
                }
                _ => None,
            };
            defaults.push(d);
            if let Some(g) = &c.generated {
                let e = parse_stored(&g.expr)?;
                let bound = Binder::new(&scope, "generated column function").bind(&e)?.0;
                generated.push((i, bound));
            }
        }
        Ok(Some(Arc::new(ColumnExprs {
            defaults,
            generated,
        })))
    }

    /// The bound expression default of column `c`.
    pub fn default_of(&self, c: usize) -> Option<&Expr> {
        self.defaults.get(c).and_then(|d| d.as_ref())
    }

    /// The generated expression of column `c`.
    pub fn generated_of(&self, c: usize) -> Option<&Expr> {
        self.generated.iter().find(|(i, _)| *i == c).map(|(_, e)| e)
    }

    /// Computes every generated column of `row`, in column order, each over the row as
    /// computed so far, and stores it as its column stores a value (`store`: the
    /// statement's conversion and strict-mode rules).
    pub fn compute_generated(
        &self,
        row: &mut [Value],
        ecx: &EvalCtx,
        mut store: impl FnMut(Value, usize) -> Result<Value>,
    ) -> Result<()> {
        for (c, e) in &self.generated {
            let v = e.eval(row, ecx)?;
            row[*c] = store(v, *c)?;
        }
        Ok(())
    }

    /// Fills the expression defaults of the columns `pending` marks, in column order,
    /// each over the row as filled so far.
    pub fn fill_defaults(&self, row: &mut [Value], pending: &[bool], ecx: &EvalCtx) -> Result<()> {
        for (c, d) in self.defaults.iter().enumerate() {
            if let (Some(e), true) = (d, pending.get(c).copied().unwrap_or(false)) {
                row[c] = e.eval(row, ecx)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{Collation, DataType};

    fn col(name: &str) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            data_type: DataType::Int { unsigned: false },
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: Collation::Binary,
            members: Vec::new(),
            generated: None,
            comment: String::new(),
            real_unsigned: false,
            invisible: Default::default(),
        }
    }

    fn expr(s: &str) -> ast::Expr {
        parse_stored(s).unwrap()
    }

    /// An expression as the parser reads it (introducers kept).
    fn raw(s: &str) -> ast::Expr {
        let stmts = crate::parse::parse(&format!("SELECT {s}")).unwrap();
        let Some(ast::Statement::Query(q)) = stmts.into_iter().next() else {
            panic!("not a query")
        };
        let ast::SetExpr::Select(sel) = *q.body else {
            panic!("not a select")
        };
        match sel.projection.into_iter().next() {
            Some(ast::SelectItem::UnnamedExpr(e)) => e,
            _ => panic!("no item"),
        }
    }

    #[test]
    fn stores_mysql_text() {
        // A printed default read back (mysqldump's CREATE TABLE) prints the same.
        assert_eq!(stored_text(&raw("(_utf8mb4'abc')")), "_utf8mb4'abc'");
        assert_eq!(stored_text(&expr("(now())")), "now()");
        assert_eq!(stored_text(&expr("(1+2)")), "(1 + 2)");
        assert_eq!(stored_text(&expr("('abc')")), "_utf8mb4'abc'");
        assert_eq!(stored_text(&expr("(JSON_ARRAY())")), "json_array()");
        // What is stored parses back to the same text.
        let t = stored_text(&expr("(CONCAT(a, 'x'))"));
        assert_eq!(t, "concat(`a`,_utf8mb4'x')");
        assert_eq!(stored_text(&expr(&t)), t);
    }

    #[test]
    fn refuses_what_mysql_refuses() {
        let mut cols = vec![col("a"), col("b"), col("c")];
        let code = |cols: &[ColumnDef], at, s: &str, k| {
            validate(cols, at, &expr(s), k).map_err(|e| e.code())
        };
        assert_eq!(code(&cols, 1, "a + 1", Kind::Default), Ok(()));
        assert_eq!(code(&cols, 1, "now()", Kind::Default), Ok(()));
        assert_eq!(code(&cols, 1, "uuid()", Kind::Default), Ok(()));
        assert_eq!(code(&cols, 1, "now()", Kind::Generated), Err(3763));
        assert_eq!(code(&cols, 1, "(SELECT 1)", Kind::Default), Err(3769));
        assert_eq!(code(&cols, 1, "(SELECT 1)", Kind::Generated), Err(3102));
        assert_eq!(code(&cols, 1, "@x + 1", Kind::Default), Err(3772));
        assert_eq!(code(&cols, 1, "@x + 1", Kind::Generated), Err(3765));
        assert_eq!(code(&cols, 1, "connection_id()", Kind::Default), Err(3770));
        // A later column with an expression default / a later generated column.
        cols[2].default = Some(ColumnDefault::Expr("1".into()));
        assert_eq!(code(&cols, 1, "c + 1", Kind::Default), Err(3767));
        assert_eq!(code(&cols, 1, "c + 1", Kind::Generated), Ok(()));
        cols[2].generated = Some(strata_types::schema::Generated {
            expr: "1".into(),
            stored: false,
        });
        assert_eq!(code(&cols, 1, "c + 1", Kind::Generated), Err(3107));
        cols[1].generated = cols[2].generated.clone();
        assert_eq!(code(&cols, 1, "b + 1", Kind::Generated), Err(3107));
        cols[0].auto_increment = true;
        assert_eq!(code(&cols, 2, "a + 1", Kind::Default), Err(3768));
        assert_eq!(code(&cols, 2, "a + 1", Kind::Generated), Err(3109));
    }
}
