//! Rewrite rule: constant folding of date arithmetic on literals. `DATE '1994-01-01' +
//! INTERVAL '1' YEAR` (TPC-H writes its date bounds so) is the same value for every row
//! and every execution, yet evaluated as written it parses the interval text and steps
//! the calendar once per row the condition is checked on. The binder evaluates such a
//! call once, when both operands are literals, and binds the value ([`Expr::Cached`]),
//! with the type the call has.
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
}
