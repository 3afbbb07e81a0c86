//! Rewrite rule: constant folding of date arithmetic and of `+`, `-`, `*` on literals.
//! `DATE '1994-01-01' + INTERVAL '1' YEAR` and `0.06 - 0.01` (TPC-H writes its bounds
//! so: Q6, Q19) are the same value for every row and every execution, yet evaluated as
//! written they parse the interval text and step the calendar, or add two decimals, once
//! per row the condition is checked on. The binder evaluates such an expression once,
//! when its operands are literals, and binds the value ([`Expr::Cached`]); the type the
//! binder derives for the expression is computed apart from its value, so it is the
//! same. A prepared statement's `?` is not a literal: `? + 1` stays as written.
//!
//! Folding must not change what the statement does, so it is given up whenever the
//! evaluation does anything beyond computing from its operands: it runs against an
//! environment ([`Probe`]) that records any read of session state (time, variables,
//! SQL mode) and any warning; if it read something, warned, or failed, the call stays as
//! written, so an invalid date still warns (or fails) on every execution as before.

use crate::expr::{EvalCtx, Expr, WarnLevel};
use std::cell::Cell;
use strata_types::{DateTime, Result, Value};

/// An environment that answers nothing and remembers being asked.
#[derive(Default)]
struct Probe {
    touched: Cell<bool>,
}

impl Probe {
    fn touch(&self) {
        self.touched.set(true);
    }
}

impl crate::expr::Env for Probe {
    fn system_variable(&self, _name: &str, _global: bool) -> Result<Value> {
        self.touch();
        Ok(Value::Null)
    }
    fn user_variable(&self, _name: &str) -> Value {
        self.touch();
        Value::Null
    }
    fn last_insert_id(&self) -> u64 {
        self.touch();
        0
    }
    fn set_last_insert_id(&self, _id: u64) {
        self.touch();
    }
    fn set_user_variable(&self, _name: &str, _value: Value) {
        self.touch();
    }
    fn database(&self) -> Option<String> {
        self.touch();
        None
    }
    fn user(&self) -> String {
        self.touch();
        String::new()
    }
    fn connection_id(&self) -> u64 {
        self.touch();
        0
    }
    fn now(&self) -> DateTime {
        self.touch();
        DateTime::default()
    }
    fn found_rows(&self) -> u64 {
        self.touch();
        0
    }
    fn row_count(&self) -> i64 {
        self.touch();
        -1
    }
    fn random(&self) -> f64 {
        self.touch();
        0.0
    }
    fn seeded_random(&self, _site: usize, _seed: i64) -> f64 {
        self.touch();
        0.0
    }
    fn division_by_zero_is_error(&self) -> bool {
        self.touch();
        false
    }
    fn warn(&self, _level: WarnLevel, _code: u16, _message: String) {
        self.touch();
    }
}

/// `e` evaluated once when it is a call whose arguments are all literals and whose
/// evaluation reads nothing but them; otherwise `e` unchanged.
pub fn literal_call(e: Expr) -> Expr {
    let Expr::Func(f, args) = &e else {
        return e;
    };
    if f.is_volatile() || !args.iter().all(|a| matches!(a, Expr::Literal(_))) {
        return e;
    }
    evaluate_once(e)
}

/// `e` evaluated once when it is `+`, `-` or `*` of two literals (or values folded
/// before) and its evaluation reads nothing but them; otherwise `e` unchanged. Division
/// is left as written: its scale and its division-by-zero answer follow session state
/// (`div_precision_increment`, the SQL mode) that a cached plan must read per execution.
pub fn literal_arith(e: Expr) -> Expr {
    let Expr::Arith(op, l, r) = &e else {
        return e;
    };
    let constant = |x: &Expr| matches!(x, Expr::Literal(_) | Expr::Cached(_));
    let exact = matches!(
        op,
        crate::expr::ArithOp::Add | crate::expr::ArithOp::Sub | crate::expr::ArithOp::Mul
    );
    if !exact || !constant(l) || !constant(r) {
        return e;
    }
    evaluate_once(e)
}

/// The value of `e` as an [`Expr::Cached`], or `e` itself when evaluating it read
/// session state, warned or failed (then it must do so on every execution).
fn evaluate_once(e: Expr) -> Expr {
    let probe = Probe::default();
    let cx = EvalCtx::new(&[], &probe);
    match e.eval(&[], &cx) {
        Ok(v) if !probe.touched.get() => Expr::Cached(Box::new(v)),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::functions::lookup;

    // Folding through the binder (`DATE '…' + INTERVAL …`) is tested with the date
    // arithmetic in `bind/datetime.rs`; here, the calls that must stay as written.
    #[test]
    fn calls_that_are_not_constant_stay_as_written() {
        let call = |name: &str, args: Vec<Expr>| {
            Expr::Func(lookup(name).expect("a known function").0, args)
        };
        // A column argument.
        let e = literal_call(call("abs", vec![Expr::Column(0)]));
        assert!(matches!(e, Expr::Func(..)), "{e:?}");
        // A volatile call, even of literals.
        let e = literal_call(call("rand", vec![Expr::Literal(Value::Int(1))]));
        assert!(matches!(e, Expr::Func(..)), "{e:?}");
        // A call that reads the session (the current database).
        let e = literal_call(call("database", vec![]));
        assert!(matches!(e, Expr::Func(..)), "{e:?}");
        // A pure call of literals is folded.
        let e = literal_call(call("abs", vec![Expr::Literal(Value::Int(-3))]));
        assert!(
            matches!(&e, Expr::Cached(v) if **v == Value::Int(3)),
            "{e:?}"
        );
    }

    fn arith(op: crate::expr::ArithOp, l: Expr, r: Expr) -> Expr {
        Expr::Arith(op, Box::new(l), Box::new(r))
    }

    fn dec(text: &str) -> Expr {
        Expr::Literal(Value::Decimal(
            strata_types::Decimal::parse(text).expect("a decimal"),
        ))
    }

    #[test]
    fn decimal_arithmetic_of_literals_is_folded_to_the_value_it_evaluates_to() {
        use crate::expr::ArithOp::*;
        for (op, want) in [(Sub, "0.05"), (Add, "0.07"), (Mul, "0.0006")] {
            let e = arith(op, dec("0.06"), dec("0.01"));
            let env = Probe::default();
            let direct = e.eval(&[], &EvalCtx::new(&[], &env)).expect("evaluates");
            let folded = literal_arith(e);
            let Expr::Cached(v) = &folded else {
                panic!("not folded: {folded:?}")
            };
            // Exactly the per-row value, scale included.
            assert_eq!(v.to_text(), direct.to_text());
            assert_eq!(v.to_text(), want);
        }
        // Folded operands fold again: (1 + 10) * 2.
        let inner = literal_arith(arith(
            Add,
            Expr::lit(Value::Int(1)),
            Expr::lit(Value::Int(10)),
        ));
        let e = literal_arith(arith(Mul, inner, Expr::lit(Value::Int(2))));
        assert!(
            matches!(&e, Expr::Cached(v) if **v == Value::Int(22)),
            "{e:?}"
        );
    }

    #[test]
    fn arithmetic_that_is_not_constant_or_exact_stays_as_written() {
        use crate::expr::ArithOp::*;
        // A column, a parameter.
        let e = literal_arith(arith(Add, Expr::Column(0), Expr::lit(Value::Int(1))));
        assert!(matches!(e, Expr::Arith(..)), "{e:?}");
        let e = literal_arith(arith(Add, Expr::Param(0), Expr::lit(Value::Int(1))));
        assert!(matches!(e, Expr::Arith(..)), "{e:?}");
        // Division follows session state.
        let e = literal_arith(arith(
            Div,
            Expr::lit(Value::Int(1)),
            Expr::lit(Value::Int(3)),
        ));
        assert!(matches!(e, Expr::Arith(..)), "{e:?}");
        // An overflow is an error on every execution, not at bind time.
        let e = literal_arith(arith(
            Mul,
            Expr::lit(Value::Int(i64::MAX)),
            Expr::lit(Value::Int(2)),
        ));
        assert!(matches!(e, Expr::Arith(..)), "{e:?}");
        // A NULL operand folds to NULL, as the row-by-row evaluation gives.
        let e = literal_arith(arith(Add, Expr::lit(Value::Null), Expr::lit(Value::Int(2))));
        assert!(matches!(&e, Expr::Cached(v) if v.is_null()), "{e:?}");
    }
}
