//! Binding the functions that describe an expression rather than compute from its
//! value: `CHARSET(x)`, `COLLATION(x)`, `COERCIBILITY(x)` (answered from the argument's
//! static type and form, so they are constants of the statement) and
//! `NAME_CONST(name, value)` (a literal that names its column).

use crate::bind::{Binder, SType};
use crate::expr::Expr;
use sqlparser::ast;
use strata_types::{Collation, Error, Result, Value};

type Bound = (Expr, SType, Collation);

/// The functions whose text is the server's own (MySQL gives them the system character
/// set, utf8mb3, and coercibility 3).
const SYSTEM_FUNCTIONS: [&str; 7] = [
    "user",
    "current_user",
    "session_user",
    "system_user",
    "database",
    "schema",
    "version",
];

/// MySQL's coercibility levels (the `COERCIBILITY()` values).
const EXPLICIT: i64 = 0;
const IMPLICIT: i64 = 2;
const SYSCONST: i64 = 3;
const COERCIBLE: i64 = 4;
const NUMERIC: i64 = 5;
const IGNORABLE: i64 = 6;

fn function_name(f: &ast::Function) -> Option<String> {
    match f.name.0.as_slice() {
        [part] => part
            .as_ident()
            .filter(|id| id.quote_style.is_none())
            .map(|id| id.value.to_ascii_lowercase()),
        _ => None,
    }
}

fn function_args(f: &ast::Function) -> Vec<&ast::Expr> {
    match &f.args {
        ast::FunctionArguments::List(list) => list
            .args
            .iter()
            .filter_map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => vec![],
    }
}

fn is_system_function(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Function(f) => {
            function_name(f).is_some_and(|n| SYSTEM_FUNCTIONS.contains(&n.as_str()))
        }
        ast::Expr::Nested(inner) => is_system_function(inner),
        _ => false,
    }
}

fn text(s: &str) -> Bound {
    (
        Expr::Literal(Value::str(s)),
        SType::Text,
        Collation::GeneralCi,
    )
}

impl Binder<'_> {
    /// CHARSET, COLLATION, COERCIBILITY and NAME_CONST; None for any other call.
    pub fn bind_charset_info(
        &mut self,
        f: &ast::Function,
        args: &[ast::Expr],
    ) -> Result<Option<Bound>> {
        let Some(name) = function_name(f) else {
            return Ok(None);
        };
        match name.as_str() {
            "charset" | "collation" | "coercibility" => {}
            "name_const" => return self.bind_name_const(args).map(Some),
            _ => return Ok(None),
        }
        let [arg] = args else {
            return Err(Error::WrongParamCount(name.to_ascii_uppercase()));
        };
        let (_, ty, coll) = self.bind(arg)?;
        let is_string = matches!(ty, SType::Text | SType::Binary);
        let system = is_system_function(arg);
        Ok(Some(match name.as_str() {
            "charset" => text(match (is_string, coll) {
                (true, _) if system => "utf8mb3",
                (true, Collation::GeneralCi | Collation::Utf8Bin) => "utf8mb4",
                _ => "binary",
            }),
            "collation" => text(match (is_string, coll) {
                (true, _) if system => "utf8mb3_general_ci",
                (true, c) => c.name(),
                _ => "binary",
            }),
            _ => {
                let level = if ty == SType::Null {
                    IGNORABLE
                } else if !is_string {
                    NUMERIC
                } else {
                    self.coercibility(arg)?
                };
                (
                    Expr::Literal(Value::Int(level)),
                    SType::Int,
                    Collation::GeneralCi,
                )
            }
        }))
    }

    /// The coercibility of a string-typed expression, by its form; forms whose level
    /// Strata does not derive are refused rather than guessed.
    fn coercibility(&mut self, e: &ast::Expr) -> Result<i64> {
        Ok(match e {
            ast::Expr::Nested(inner) => self.coercibility(inner)?,
            ast::Expr::Collate { .. } => EXPLICIT,
            ast::Expr::Value(v) => match v.value {
                ast::Value::Null => IGNORABLE,
                ast::Value::Placeholder(_) => COERCIBLE,
                _ => COERCIBLE,
            },
            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) => IMPLICIT,
            ast::Expr::Cast { .. } | ast::Expr::Convert { .. } => IMPLICIT,
            ast::Expr::Function(f) => {
                let name = function_name(f).unwrap_or_default();
                if SYSTEM_FUNCTIONS.contains(&name.as_str()) {
                    SYSCONST
                } else {
                    // A string function is as coercible as its least coercible
                    // string argument (CONCAT('a', col) is a column's, 2).
                    let mut level = COERCIBLE;
                    for a in function_args(f) {
                        let (_, ty, _) = self.bind(a)?;
                        if matches!(ty, SType::Text | SType::Binary) {
                            level = level.min(self.coercibility(a)?);
                        }
                    }
                    level
                }
            }
            other => {
                return Err(Error::NotSupported(format!(
                    "COERCIBILITY() of the expression {other}"
                )))
            }
        })
    }

    /// NAME_CONST(name, value): the literal value, its column named `name`
    /// ([`crate::bind::item_names`]); both arguments must be literals (a value may be
    /// negated), otherwise 1210 as MySQL.
    fn bind_name_const(&mut self, args: &[ast::Expr]) -> Result<Bound> {
        let bad = || Error::WrongArguments("NAME_CONST".into());
        let [name, value] = args else {
            return Err(Error::WrongParamCount("NAME_CONST".into()));
        };
        if !matches!(name, ast::Expr::Value(_)) {
            return Err(bad());
        }
        let literal = match value {
            ast::Expr::Value(_) => true,
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr,
            } => matches!(expr.as_ref(), ast::Expr::Value(_)),
            _ => false,
        };
        if !literal {
            return Err(bad());
        }
        self.bind(value)
    }
}

/// The column name of `NAME_CONST('name', v)` (its first argument's text), or None
/// for any other expression.
pub fn name_const_column(e: &ast::Expr) -> Option<String> {
    let ast::Expr::Function(f) = e else {
        return None;
    };
    if function_name(f).as_deref() != Some("name_const") {
        return None;
    }
    match function_args(f).first() {
        Some(ast::Expr::Value(v)) => Some(match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(sql: &str) -> ast::Expr {
        let stmts = crate::parse::parse(&format!("SELECT {sql}")).expect("parses");
        let [ast::Statement::Query(q)] = stmts.as_slice() else {
            panic!("a query")
        };
        let ast::SetExpr::Select(s) = q.body.as_ref() else {
            panic!("a block")
        };
        match &s.projection[0] {
            ast::SelectItem::UnnamedExpr(e) => e.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn name_const_names_its_column() {
        assert_eq!(
            name_const_column(&expr("NAME_CONST('x', 5)")),
            Some("x".into())
        );
        assert_eq!(name_const_column(&expr("CONCAT('x', 5)")), None);
        assert!(is_system_function(&expr("(USER())")));
        assert!(!is_system_function(&expr("UPPER('a')")));
    }
}
