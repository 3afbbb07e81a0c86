//! Binding `CHAR(n, … [USING charset])`. The parser rewrites the `USING` form into an
//! internal call whose first argument is the character set's name (see `parse.rs`).

use crate::bind::{Binder, SType};
use crate::expr::functions::Func;
use crate::expr::Expr;
use crate::parse::token_rewrite::INTERNAL_QUOTE;
use sqlparser::ast;
use strata_types::{Collation, Error, Result};

type Bound = (Expr, SType, Collation);

impl Binder<'_> {
    /// CHAR(…): a binary string, or with `USING utf8mb4` (utf8, utf8mb3) text; None
    /// when the call is not CHAR.
    pub fn bind_char(&mut self, f: &ast::Function, args: &[ast::Expr]) -> Result<Option<Bound>> {
        let Some(id) = f.name.0.first().and_then(|p| p.as_ident()) else {
            return Ok(None);
        };
        if f.name.0.len() != 1 || !id.value.eq_ignore_ascii_case("char") {
            return Ok(None);
        }
        let (text, rest) = if id.quote_style == Some(INTERNAL_QUOTE) {
            let Some(ast::Expr::Value(v)) = args.first() else {
                return Err(Error::Syntax("CHAR".into()));
            };
            let cs = match &v.value {
                ast::Value::SingleQuotedString(s) => s.to_ascii_lowercase(),
                other => other.to_string(),
            };
            let text = match cs.as_str() {
                "utf8mb4" | "utf8" | "utf8mb3" => true,
                "binary" => false,
                other => {
                    return Err(Error::NotSupported(format!("CHAR(… USING {other})")));
                }
            };
            (text, &args[1..])
        } else if id.quote_style.is_none() {
            (false, args)
        } else {
            return Ok(None);
        };
        if rest.is_empty() {
            return Err(Error::Syntax("CHAR()".into()));
        }
        let mut bound = Vec::with_capacity(rest.len());
        for a in rest {
            // Each argument is a number: `CHAR(0x41)` is 'A'.
            bound.push(self.bind_numeric(a)?.0);
        }
        let e = Expr::Func(Func::Char { text }, bound);
        Ok(Some(if text {
            (e, SType::Text, Collation::GeneralCi)
        } else {
            (e, SType::Binary, Collation::Binary)
        }))
    }
}
