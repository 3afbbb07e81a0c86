//! The text EXPLAIN FORMAT=TREE prints for a bound expression, in MySQL's style:
//! comparisons and connectives parenthesised (`(t.a = 1)`, `((t.a > 1) and (t.b < 2))`),
//! columns as `table.column`, strings quoted, dates as `DATE'1995-03-15'`, subqueries as
//! `(select #N)`. The text is written from the bound form, so it shows what runs (a
//! folded constant as its value), not the statement as typed; function names are
//! Strata's own and may differ from MySQL's spelling in places.

use crate::bind::AggFunc;
use crate::expr::{ArithOp, CmpOp, Expr, SubqueryKind};
use strata_types::Value;

/// How the text names what an expression reads: a row position, an outer value, and
/// the block number EXPLAIN gives subquery `id`.
pub struct Names<'a> {
    pub column: &'a dyn Fn(usize) -> String,
    pub outer: &'a dyn Fn(usize) -> String,
    pub subquery: &'a dyn Fn(usize) -> u64,
}

/// A value as a literal of SQL text.
pub fn literal(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bytes(_) | Value::Member { .. } | Value::Json(_) => {
            format!(
                "'{}'",
                v.to_text().replace('\\', "\\\\").replace('\'', "\\'")
            )
        }
        // A DATE bound for comparison with a DATE column keeps its midnight time.
        Value::DateTime(d) if d.is_date_only() => format!("DATE'{}'", v.to_text()),
        Value::DateTime(d) if (d.hour, d.minute, d.second, d.micro) == (0, 0, 0, 0) => {
            format!("DATE'{:04}-{:02}-{:02}'", d.year, d.month, d.day)
        }
        Value::DateTime(_) => format!("TIMESTAMP'{}'", v.to_text()),
        _ => v.to_text(),
    }
}

fn cmp_op(op: CmpOp) -> &'static str {
    op.symbol()
}

fn arith_op(op: ArithOp) -> &'static str {
    match op {
        ArithOp::Add => "+",
        ArithOp::Sub => "-",
        ArithOp::Mul => "*",
        ArithOp::Div => "/",
        ArithOp::IntDiv => "DIV",
        ArithOp::Mod => "%",
    }
}

/// A function's name, from its bound form (`Str(Substring, …)` is `substring`).
fn func_name(f: &crate::expr::functions::Func) -> String {
    let debug = format!("{f:?}");
    // The innermost identifier: `Str(Substring, GeneralCi)`, `Date { f: DateAdd, … }`.
    let inner = match debug.find(['(', '{']) {
        Some(i) => debug[i + 1..]
            .trim_start()
            .trim_start_matches("f:")
            .trim_start()
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or(&debug[..i]),
        None => &debug,
    };
    snake(inner)
}

/// `DateAdd` as `date_add`.
fn snake(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// An aggregate's name as MySQL prints it.
pub fn agg_name(f: AggFunc) -> &'static str {
    match f {
        AggFunc::CountStar | AggFunc::Count => "count",
        AggFunc::Sum => "sum",
        AggFunc::Avg => "avg",
        AggFunc::Min => "min",
        AggFunc::Max => "max",
        AggFunc::AnyValue => "any_value",
        AggFunc::StdPop => "std",
        AggFunc::StdSamp => "stddev_samp",
        AggFunc::VarPop => "variance",
        AggFunc::VarSamp => "var_samp",
        AggFunc::BitAnd => "bit_and",
        AggFunc::BitOr => "bit_or",
        AggFunc::BitXor => "bit_xor",
        AggFunc::GroupConcat => "group_concat",
        AggFunc::JsonArrayAgg => "json_arrayagg",
        AggFunc::JsonObjectAgg => "json_objectagg",
        AggFunc::Grouping => "grouping",
    }
}

/// The text of `e`.
pub fn text(e: &Expr, n: &Names) -> String {
    let t = |x: &Expr| text(x, n);
    let list = |xs: &[Expr]| xs.iter().map(t).collect::<Vec<_>>().join(",");
    match e {
        Expr::Literal(v) => literal(v),
        Expr::Cached(v) => literal(v),
        Expr::Param(_) => "?".into(),
        Expr::Column(p) => (n.column)(*p),
        Expr::OuterRef(i) => (n.outer)(*i),
        Expr::Cmp(op, l, r, _) => format!("({} {} {})", t(l), cmp_op(*op), t(r)),
        Expr::Arith(op, l, r) => format!("({} {} {})", t(l), arith_op(*op), t(r)),
        Expr::Neg(x) => format!("-({})", t(x)),
        Expr::BitOp(op, l, r) => format!("({} {} {})", t(l), op, t(r)),
        Expr::And(l, r) => format!("({} and {})", t(l), t(r)),
        Expr::Or(l, r) => format!("({} or {})", t(l), t(r)),
        Expr::Xor(l, r) => format!("({} xor {})", t(l), t(r)),
        Expr::Not(x) => format!("(not({}))", t(x)),
        Expr::IsNull(x, negated) => {
            format!("({} is {}null)", t(x), if *negated { "not " } else { "" })
        }
        Expr::IsTruth(x, truth, negated) => format!(
            "({} is {}{})",
            t(x),
            if *negated { "not " } else { "" },
            if *truth { "true" } else { "false" }
        ),
        Expr::Between {
            expr,
            low,
            high,
            negated,
            ..
        } => format!(
            "({} {}between {} and {})",
            t(expr),
            if *negated { "not " } else { "" },
            t(low),
            t(high)
        ),
        Expr::InList {
            expr,
            list: l,
            negated,
            ..
        } => format!(
            "({} {}in ({}))",
            t(expr),
            if *negated { "not " } else { "" },
            list(l)
        ),
        Expr::Like {
            expr,
            pattern,
            negated,
            ..
        } => format!(
            "({} {}like {})",
            t(expr),
            if *negated { "not " } else { "" },
            t(pattern)
        ),
        Expr::Case {
            operand,
            whens,
            otherwise,
            ..
        } => {
            let mut s = String::from("(case");
            if let Some(o) = operand {
                s.push(' ');
                s.push_str(&t(o));
            }
            for (w, th) in whens {
                s.push_str(&format!(" when {} then {}", t(w), t(th)));
            }
            if let Some(o) = otherwise {
                s.push_str(&format!(" else {}", t(o)));
            }
            s.push_str(" end)");
            s
        }
        Expr::Func(f, args) => format!("{}({})", func_name(f), list(args)),
        Expr::SystemVariable { name, global } => {
            format!("@@{}{}", if *global { "global." } else { "" }, name)
        }
        Expr::UserVariable(v) => format!("@{v}"),
        Expr::Subquery(s) => {
            let id = (n.subquery)(s.id);
            match &s.kind {
                SubqueryKind::Scalar => format!("(select #{id})"),
                SubqueryKind::Exists { negated: false } => format!("exists(select #{id})"),
                SubqueryKind::Exists { negated: true } => format!("(not exists(select #{id}))"),
                SubqueryKind::In { lhs, negated, .. } => {
                    let l = match lhs.len() {
                        1 => t(&lhs[0]),
                        _ => format!("({})", list(lhs)),
                    };
                    match negated {
                        false => format!("<in_optimizer>({l},{l} in (select #{id}))"),
                        true => format!("(not(<in_optimizer>({l},{l} in (select #{id}))))"),
                    }
                }
                SubqueryKind::Quantified { lhs, op, all, .. } => format!(
                    "({} {} {} (select #{id}))",
                    t(lhs),
                    cmp_op(*op),
                    if *all { "all" } else { "any" }
                ),
            }
        }
        Expr::StoredCall(c, args) => format!("{}({})", c.name, list(args)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{Collation, DateTime};

    fn names() -> (
        impl Fn(usize) -> String,
        impl Fn(usize) -> String,
        impl Fn(usize) -> u64,
    ) {
        (
            |p: usize| format!("t.c{p}"),
            |i: usize| format!("outer.o{i}"),
            |id: usize| id as u64 + 2,
        )
    }

    #[test]
    fn conditions_read_as_mysql_prints_them() {
        let (c, o, s) = names();
        let n = Names {
            column: &c,
            outer: &o,
            subquery: &s,
        };
        let col = |p| Box::new(Expr::Column(p));
        let e = Expr::And(
            Box::new(Expr::Cmp(
                CmpOp::Eq,
                col(0),
                Box::new(Expr::lit(Value::str("BUILDING"))),
                Collation::GeneralCi,
            )),
            Box::new(Expr::Cmp(
                CmpOp::Lt,
                col(1),
                Box::new(Expr::lit(Value::DateTime(
                    DateTime::parse("1995-03-15").expect("a date").as_date(),
                ))),
                Collation::Binary,
            )),
        );
        assert_eq!(
            text(&e, &n),
            "((t.c0 = 'BUILDING') and (t.c1 < DATE'1995-03-15'))"
        );
        let e = Expr::Like {
            expr: col(2),
            pattern: Box::new(Expr::lit(Value::str("it's%"))),
            negated: true,
            escape: b'\\',
            coll: Collation::GeneralCi,
        };
        assert_eq!(text(&e, &n), "(t.c2 not like 'it\\'s%')");
        assert_eq!(text(&Expr::OuterRef(1), &n), "outer.o1");
        assert_eq!(snake("DateAdd"), "date_add");
    }
}
