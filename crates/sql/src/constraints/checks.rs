//! CHECK constraints: built from `[CONSTRAINT name] CHECK (expr) [[NOT] ENFORCED]` at
//! table or column level, named `<table>_chk_<n>` when unnamed, and refused as MySQL 8
//! refuses them (3812-3823): a non-boolean expression, a column-level check naming
//! another column, a non-deterministic function, a variable, a subquery, the
//! AUTO_INCREMENT column, a column a foreign key's referential action changes.
//!
//! The expression is stored as text in MySQL 8's printed form (`` (`a` > 0) ``), which
//! is what SHOW CREATE TABLE and information_schema show (string literals there get the
//! `_utf8mb4` introducer, added when printed). A statement that writes the table binds
//! the text again over the table's row ([`bind_checks`]) and evaluates each enforced
//! check on every new row ([`verify`]): false is error 3819, NULL passes.

use crate::bind::{Binder, Scope};
use crate::context::ExecCtx;
use crate::expr::{EvalCtx, Expr};
use sqlparser::ast;
use std::ops::ControlFlow;
use std::sync::Arc;
use strata_engine::Table;
use strata_types::{CheckDef, Error, FkAction, Result, TableDef};

/// A CHECK clause as read.
#[derive(Clone, Debug)]
pub struct CheckClause {
    pub name: Option<String>,
    pub expr: ast::Expr,
    pub enforced: bool,
    /// For a column-level check, the column it belongs to.
    pub column: Option<String>,
}

impl CheckClause {
    pub fn table_level(c: &ast::CheckConstraint) -> CheckClause {
        CheckClause {
            name: c.name.as_ref().map(|n| n.value.clone()),
            expr: (*c.expr).clone(),
            enforced: c.enforced.unwrap_or(true),
            column: None,
        }
    }
}

/// Functions whose value is not fixed by the row: refused in a CHECK constraint (3814)
/// and in a generated column (3763, `statements/column_expr.rs`).
pub(crate) const NOT_ROW_FIXED: &[&str] = &[
    "now",
    "current_timestamp",
    "localtime",
    "localtimestamp",
    "curdate",
    "current_date",
    "curtime",
    "current_time",
    "sysdate",
    "utc_date",
    "utc_time",
    "utc_timestamp",
    "unix_timestamp",
    "rand",
    "uuid",
    "uuid_short",
];

/// Functions that read the session or the server: refused in a CHECK constraint (3814)
/// along with [`NOT_ROW_FIXED`].
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
    "is_free_lock",
    "is_used_lock",
    "sleep",
    "benchmark",
    "version",
    "load_file",
    "master_pos_wait",
    "wait_for_executed_gtid_set",
];

/// Adds `clauses` to `def` (a table being created or altered), after checking them.
pub fn add_checks(cx: &ExecCtx, def: &mut TableDef, clauses: &[CheckClause]) -> Result<()> {
    if clauses.is_empty() {
        return Ok(());
    }
    let mut taken: Vec<String> = Vec::new();
    if let Ok(tables) = cx.catalog.tables(&def.db) {
        for t in tables {
            if t.def().name != def.name {
                taken.extend(t.def().checks.iter().map(|c| c.name.to_ascii_lowercase()));
            }
        }
    }
    taken.extend(def.checks.iter().map(|c| c.name.to_ascii_lowercase()));
    let mut names = super::GeneratedNames::new(
        &def.name,
        "_chk_",
        def.checks.iter().map(|c| c.name.as_str()),
    );
    for c in clauses {
        let name = names.name(&c.name);
        if taken.contains(&name.to_ascii_lowercase()) {
            return Err(Error::CheckDuplicateName(name));
        }
        taken.push(name.to_ascii_lowercase());
        validate(def, &name, c)?;
        def.checks.push(CheckDef {
            name,
            expr: mysql_text(&c.expr, true),
            enforced: c.enforced,
        });
    }
    Ok(())
}

/// The column names an expression mentions.
pub(crate) fn columns_of(e: &ast::Expr) -> Vec<String> {
    use sqlparser::ast::Visit;
    struct V(Vec<String>);
    impl ast::Visitor for V {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            match e {
                ast::Expr::Identifier(i) => self.0.push(i.value.clone()),
                ast::Expr::CompoundIdentifier(ids) => {
                    if let Some(last) = ids.last() {
                        self.0.push(last.value.clone())
                    }
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
    }
    let mut v = V(Vec::new());
    let _ = e.visit(&mut v);
    v.0
}

/// What MySQL refuses in a check expression, found by walking it.
fn forbidden(name: &str, e: &ast::Expr) -> Result<()> {
    use sqlparser::ast::Visit;
    struct V<'a>(&'a str, Option<Error>);
    impl ast::Visitor for V<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            let err = match e {
                ast::Expr::Subquery(_)
                | ast::Expr::Exists { .. }
                | ast::Expr::InSubquery { .. } => Some(Error::CheckDisallowed(self.0.to_string())),
                ast::Expr::Function(f) => {
                    let n = crate::parse::object_name_parts(&f.name)
                        .join(".")
                        .to_ascii_lowercase();
                    (NOT_ROW_FIXED.contains(&n.as_str()) || SESSION_BOUND.contains(&n.as_str()))
                        .then(|| Error::CheckDisallowedFunction {
                            name: self.0.to_string(),
                            function: format!("{n}()"),
                        })
                }
                ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.starts_with('@') => {
                    Some(Error::CheckVariables(self.0.to_string()))
                }
                ast::Expr::Identifier(i)
                    if i.quote_style.is_none()
                        && (i.value.eq_ignore_ascii_case("current_timestamp")
                            || i.value.eq_ignore_ascii_case("current_date")
                            || i.value.eq_ignore_ascii_case("current_user")) =>
                {
                    Some(Error::CheckDisallowedFunction {
                        name: self.0.to_string(),
                        function: format!("{}()", i.value.to_ascii_lowercase()),
                    })
                }
                _ => None,
            };
            match err {
                Some(e) => {
                    self.1 = Some(e);
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            }
        }
    }
    let mut v = V(name, None);
    let _ = e.visit(&mut v);
    match v.1 {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Whether an expression is a condition (MySQL: of boolean type), as far as its top
/// level shows; a function call is given the benefit of the doubt.
fn is_condition(e: &ast::Expr) -> bool {
    use ast::BinaryOperator as B;
    use ast::Expr as A;
    match e {
        A::Nested(x) => is_condition(x),
        A::BinaryOp { op, .. } => matches!(
            op,
            B::Eq
                | B::NotEq
                | B::Lt
                | B::LtEq
                | B::Gt
                | B::GtEq
                | B::Spaceship
                | B::And
                | B::Or
                | B::Xor
                | B::Regexp
        ),
        A::UnaryOp {
            op: ast::UnaryOperator::Not,
            ..
        } => true,
        A::IsNull(_)
        | A::IsNotNull(_)
        | A::IsTrue(_)
        | A::IsFalse(_)
        | A::IsNotTrue(_)
        | A::IsNotFalse(_)
        | A::InList { .. }
        | A::Between { .. }
        | A::Like { .. }
        | A::RLike { .. }
        | A::Function(_) => true,
        A::Value(v) => matches!(v.value, ast::Value::Boolean(_)),
        _ => false,
    }
}

fn validate(def: &TableDef, name: &str, c: &CheckClause) -> Result<()> {
    forbidden(name, &c.expr)?;
    let cols = columns_of(&c.expr);
    for col in &cols {
        let Some(i) = def.column_index(col) else {
            return Err(Error::CheckUnknownColumn {
                name: name.to_string(),
                column: col.clone(),
            });
        };
        if let Some(own) = &c.column {
            if !own.eq_ignore_ascii_case(col) {
                return Err(Error::CheckColumnRefersOther(name.to_string()));
            }
        }
        if def.columns[i].auto_increment {
            return Err(Error::CheckAutoIncrement(name.to_string()));
        }
    }
    if !is_condition(&c.expr) {
        return Err(Error::CheckNotBoolean(name.to_string()));
    }
    check_fk_columns(def, name, &cols)
}

/// 3823: a check may not name a column a foreign key's CASCADE / SET NULL changes.
pub fn check_fk_columns(def: &TableDef, check: &str, cols: &[String]) -> Result<()> {
    for fk in &def.foreign_keys {
        let acts = [fk.on_delete, fk.on_update]
            .iter()
            .any(|a| matches!(a, FkAction::Cascade | FkAction::SetNull));
        if !acts {
            continue;
        }
        if let Some(c) = cols
            .iter()
            .find(|c| fk.columns.iter().any(|f| f.eq_ignore_ascii_case(c)))
        {
            return Err(Error::CheckFkColumn {
                column: c.clone(),
                check: check.to_string(),
                fk: fk.name.clone(),
            });
        }
    }
    Ok(())
}

/// After foreign keys were added: no check may name a column their actions change.
pub fn recheck_fk_columns(def: &TableDef) -> Result<()> {
    for c in &def.checks {
        let cols = parse_expr(&c.expr)
            .map(|e| columns_of(&e))
            .unwrap_or_default();
        check_fk_columns(def, &c.name, &cols)?;
    }
    Ok(())
}

/// The columns a stored check uses (for ALTER TABLE's DROP / RENAME COLUMN, 3959).
pub fn columns_used(c: &CheckDef) -> Vec<String> {
    parse_expr(&c.expr)
        .map(|e| columns_of(&e))
        .unwrap_or_default()
}

/// Parses a stored expression text (a check's, a column's default or generation
/// expression).
pub fn parse_stored(text: &str) -> Result<ast::Expr> {
    parse_expr(text)
}

/// Parses a stored check expression; the `_utf8mb4` introducers of its string
/// literals are dropped (strings are utf8mb4 anyway).
fn parse_expr(text: &str) -> Result<ast::Expr> {
    let stmts = crate::parse::parse(&format!("SELECT {text}"))?;
    if let Some(ast::Statement::Query(q)) = stmts.into_iter().next() {
        if let ast::SetExpr::Select(s) = *q.body {
            if let Some(ast::SelectItem::UnnamedExpr(mut e)) = s.projection.into_iter().next() {
                let _ = ast::visit_expressions_mut(&mut e, |x| {
                    if let ast::Expr::Prefixed { value, .. } = x {
                        let inner =
                            std::mem::replace(value.as_mut(), ast::Expr::value(ast::Value::Null));
                        *x = inner;
                    }
                    ControlFlow::<()>::Continue(())
                });
                return Ok(e);
            }
        }
    }
    Err(Error::Internal(format!("stored CHECK expression {text}")))
}

/// Binds the enforced checks of `def` over the row of `table`: (name, condition).
pub fn bind_checks(
    def: &TableDef,
    db: &str,
    table: &Arc<dyn Table>,
) -> Result<Vec<(String, Expr)>> {
    let mut out = Vec::new();
    for c in def.checks.iter().filter(|c| c.enforced) {
        let e = parse_expr(&c.expr)?;
        let mut scope = Scope::default();
        scope.push(def.name.clone(), db.to_string(), table.clone());
        let (bound, _, _) = Binder::new(&scope, "check constraint").bind(&e)?;
        out.push((c.name.clone(), bound));
    }
    Ok(out)
}

/// Evaluates every check on a new row: the first that is false gives 3819.
pub fn verify(checks: &[(String, Expr)], row: &[strata_types::Value], ecx: &EvalCtx) -> Result<()> {
    for (name, e) in checks {
        if e.eval(row, ecx)?.truth() == Some(false) {
            return Err(Error::CheckViolated(name.clone()));
        }
    }
    Ok(())
}

/// Prints an expression as MySQL 8 prints a stored one: identifiers quoted, every
/// operation in parentheses, operator words in lower case.
pub fn mysql_text(e: &ast::Expr, introducers: bool) -> String {
    use ast::Expr as A;
    let p = |x: &ast::Expr| mysql_text(x, introducers);
    match e {
        A::Identifier(i) => quote(&i.value),
        A::CompoundIdentifier(ids) => ids.last().map(|i| quote(&i.value)).unwrap_or_default(),
        A::Nested(x) => p(x),
        // `_utf8mb4'abc'` read back from a printed definition: the string as written
        // (the introducer is added again when `introducers`).
        A::Prefixed { value, .. } => p(value),
        A::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                let q = s.replace('\\', "\\\\").replace('\'', "\\'");
                if introducers {
                    format!("_utf8mb4'{q}'")
                } else {
                    format!("'{q}'")
                }
            }
            ast::Value::Boolean(b) => (if *b { "true" } else { "false" }).into(),
            ast::Value::Null => "NULL".into(),
            other => other.to_string(),
        },
        A::BinaryOp { left, op, right } => {
            let o = match op {
                ast::BinaryOperator::And => "and".to_string(),
                ast::BinaryOperator::Or => "or".to_string(),
                ast::BinaryOperator::Xor => "xor".to_string(),
                ast::BinaryOperator::MyIntegerDivide => "DIV".to_string(),
                ast::BinaryOperator::Regexp => "regexp".to_string(),
                other => other.to_string(),
            };
            format!("({} {o} {})", p(left), p(right))
        }
        A::UnaryOp { op, expr } => match op {
            ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => format!("(not({}))", p(expr)),
            ast::UnaryOperator::Minus => format!("-({})", p(expr)),
            other => format!("{other}{}", p(expr)),
        },
        A::IsNull(x) => format!("({} is null)", p(x)),
        A::IsNotNull(x) => format!("({} is not null)", p(x)),
        A::IsTrue(x) => format!("({} is true)", p(x)),
        A::IsFalse(x) => format!("({} is false)", p(x)),
        A::InList {
            expr,
            list,
            negated,
        } => format!(
            "({} {}in ({}))",
            p(expr),
            if *negated { "not " } else { "" },
            list.iter().map(p).collect::<Vec<_>>().join(",")
        ),
        A::Between {
            expr,
            negated,
            low,
            high,
        } => format!(
            "({} {}between {} and {})",
            p(expr),
            if *negated { "not " } else { "" },
            p(low),
            p(high)
        ),
        A::Like {
            negated,
            expr,
            pattern,
            escape_char: None,
            any: false,
        } => format!(
            "({} {}like {})",
            p(expr),
            if *negated { "not " } else { "" },
            p(pattern)
        ),
        A::Function(f) => {
            let name = crate::parse::object_name_parts(&f.name)
                .join(".")
                .to_ascii_lowercase();
            match &f.args {
                ast::FunctionArguments::List(l)
                    if l.duplicate_treatment.is_none() && l.clauses.is_empty() =>
                {
                    let args: Option<Vec<String>> = l
                        .args
                        .iter()
                        .map(|a| match a {
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(p(x)),
                            _ => None,
                        })
                        .collect();
                    match args {
                        Some(a) => format!("{name}({})", a.join(",")),
                        None => e.to_string(),
                    }
                }
                ast::FunctionArguments::None => format!("{name}()"),
                _ => e.to_string(),
            }
        }
        other => other.to_string(),
    }
}

/// A table that is only a definition, for binding a check over rows of a definition no
/// open table has yet (ALTER TABLE checking the rows it already has).
pub struct DefOnly {
    def: Arc<TableDef>,
}

impl DefOnly {
    pub fn new(def: TableDef) -> DefOnly {
        DefOnly { def: Arc::new(def) }
    }
}

fn not_readable() -> Error {
    Error::Internal("a definition-only table was read or written".into())
}

impl Table for DefOnly {
    fn def(&self) -> &Arc<TableDef> {
        &self.def
    }
    fn lock(&self, _: strata_engine::LockMode) -> strata_engine::TableLock {
        strata_engine::TableLock::none()
    }
    fn scan(&self, _: &strata_engine::Txn, _: &mut strata_engine::RowFn) -> Result<()> {
        Err(not_readable())
    }
    fn index_scan(
        &self,
        _: &strata_engine::Txn,
        _: usize,
        _: &strata_engine::KeyRange,
        _: bool,
        _: &mut strata_engine::RowFn,
    ) -> Result<()> {
        Err(not_readable())
    }
    fn insert(
        &self,
        _: &strata_engine::Txn,
        _: &mut Vec<strata_types::Value>,
    ) -> Result<strata_engine::Inserted> {
        Err(not_readable())
    }
    fn update(
        &self,
        _: &strata_engine::Txn,
        _: strata_engine::RowId,
        _: &[strata_types::Value],
        _: &[strata_types::Value],
    ) -> Result<strata_engine::RowId> {
        Err(not_readable())
    }
    fn delete(
        &self,
        _: &strata_engine::Txn,
        _: strata_engine::RowId,
        _: &[strata_types::Value],
    ) -> Result<()> {
        Err(not_readable())
    }
    fn truncate(&self) -> Result<()> {
        Err(not_readable())
    }
    fn status(&self) -> strata_engine::TableStatus {
        Default::default()
    }
    fn flush(&self) -> Result<()> {
        Ok(())
    }
}

fn quote(n: &str) -> String {
    format!("`{}`", n.replace('`', "``"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(s: &str) -> ast::Expr {
        parse_expr(s).unwrap()
    }

    #[test]
    fn prints_as_mysql_stores_it() {
        assert_eq!(mysql_text(&expr("a > 0"), true), "(`a` > 0)");
        assert_eq!(
            mysql_text(&expr("a > 0 AND (b < 10 OR b IS NULL)"), true),
            "((`a` > 0) and ((`b` < 10) or (`b` is null)))"
        );
        assert_eq!(
            mysql_text(&expr("s IN ('x', 'y')"), true),
            "(`s` in (_utf8mb4'x',_utf8mb4'y'))"
        );
        assert_eq!(
            mysql_text(&expr("CHAR_LENGTH(s) BETWEEN 1 AND 5"), false),
            "(char_length(`s`) between 1 and 5)"
        );
        // What is stored parses back to the same text.
        let stored = mysql_text(&expr("NOT (a = 'q') AND b <> 2"), true);
        assert_eq!(stored, "((not((`a` = _utf8mb4'q'))) and (`b` <> 2))");
        assert_eq!(mysql_text(&expr(&stored), true), stored);
    }

    #[test]
    fn refuses_what_mysql_refuses() {
        let forbid = |s: &str| forbidden("c", &expr(s)).map_err(|e| e.code());
        assert_eq!(forbid("a > NOW()"), Err(3814));
        assert_eq!(forbid("a > (SELECT 1)"), Err(3815));
        assert_eq!(forbid("a > @x"), Err(3816));
        assert_eq!(forbid("a > LENGTH('x')"), Ok(()));
        assert!(is_condition(&expr("a > 1")));
        assert!(!is_condition(&expr("a + 1")));
        assert!(!is_condition(&expr("a")));
    }
}
