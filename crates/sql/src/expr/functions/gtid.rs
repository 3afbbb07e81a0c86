//! The GTID set functions, as MySQL 8.0 evaluates them (`item_gtid_func.cc`):
//! GTID_SUBTRACT(set1, set2) and GTID_SUBSET(set1, set2) work on their text alone (NULL
//! when either is NULL, the second not evaluated when the first is; error 1772 for a
//! text that does not parse, the first argument's checked first), and
//! WAIT_FOR_EXECUTED_GTID_SET(set[, timeout]) asks the session ([`Env::wait_for_executed_gtids`])
//! to wait until the server's gtid_executed holds the set: 0 when it does, 1 when the
//! timeout (seconds, fractions too; 0 or none waits for ever) passes first. The set
//! type and its text are `strata_types::gtid`, shared with the binary log.
//!
//! [`Env::wait_for_executed_gtids`]: crate::expr::Env::wait_for_executed_gtids

use super::{arg, text};
use crate::expr::{EvalCtx, Expr};
use strata_types::gtid::GtidSet;
use strata_types::{Error, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GtidFn {
    Subtract,
    Subset,
    WaitForExecuted,
}

/// The longest wait a timeout asks for that is kept (a year); longer ones wait a year.
const MAX_WAIT_SECS: f64 = 31_536_000.0;

/// A set argument's text as a set; 1772 when it does not parse.
fn parse(v: &Value) -> Result<GtidSet> {
    GtidSet::parse_text(&text(v)).map_err(|m| Error::MalformedGtidSet(m.text))
}

pub(super) fn call(f: GtidFn, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    match f {
        GtidFn::Subtract | GtidFn::Subset => {
            let a = arg(args, 0, row, cx)?;
            if a.is_null() {
                return Ok(Value::Null);
            }
            let b = arg(args, 1, row, cx)?;
            if b.is_null() {
                return Ok(Value::Null);
            }
            let mut first = parse(&a)?;
            let second = parse(&b)?;
            Ok(if f == GtidFn::Subset {
                Value::Int(first.is_subset(&second) as i64)
            } else {
                first.subtract(&second);
                Value::str(&first.to_text())
            })
        }
        GtidFn::WaitForExecuted => wait(args, row, cx),
    }
}

/// WAIT_FOR_EXECUTED_GTID_SET: MySQL's checks in its order (a NULL set is 1772 'NULL',
/// a function with side effects does not return NULL; a NULL or negative timeout
/// 1210; gtid_mode OFF 1788; then the set's text), then the wait.
fn wait(args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let set = arg(args, 0, row, cx)?;
    if set.is_null() {
        return Err(Error::MalformedGtidSet("NULL".into()));
    }
    let mut timeout = 0.0;
    if args.len() > 1 {
        match arg(args, 1, row, cx)?.to_f64() {
            Some(t) if t >= 0.0 && !t.is_nan() => timeout = t,
            _ => return Err(Error::WrongArguments("WAIT_FOR_EXECUTED_GTID_SET.".into())),
        }
    }
    let mode = cx.env.system_variable("gtid_mode", true)?;
    if mode.to_text().eq_ignore_ascii_case("OFF") {
        return Err(Error::GtidModeOff("use WAIT_FOR_EXECUTED_GTID_SET".into()));
    }
    let set = parse(&set)?;
    let timeout =
        (timeout > 0.0).then(|| std::time::Duration::from_secs_f64(timeout.min(MAX_WAIT_SECS)));
    let timed_out = cx.env.wait_for_executed_gtids(&set, timeout)?;
    Ok(Value::Int(timed_out as i64))
}

#[cfg(test)]
mod tests {
    use super::super::test_env::{run, try_run, TestEnv};
    use super::super::Func;
    use super::*;

    const A: &str = "3E11FA47-71CA-11E1-9E33-C80AA9429562";
    const B: &str = "4e11fa47-71ca-11e1-9e33-c80aa9429562";

    fn sub(a: Value, b: Value) -> Result<Value> {
        try_run(
            Func::Gtid(GtidFn::Subtract),
            vec![a, b],
            &TestEnv::default(),
        )
    }

    #[test]
    fn subtract_prints_the_normal_form() {
        let got = sub(
            Value::str(&format!("{B}:1-3, {A}:21-57")),
            Value::str(&format!("{A}:20-25")),
        )
        .unwrap();
        assert_eq!(
            got,
            Value::str(&format!("{}:26-57,\n{B}:1-3", A.to_lowercase()))
        );
        assert_eq!(sub(Value::str(A), Value::str("")).unwrap(), Value::str(""));
        assert_eq!(sub(Value::Null, Value::str("bad")).unwrap(), Value::Null);
        assert_eq!(sub(Value::str("bad"), Value::Null).unwrap(), Value::Null);
        match sub(Value::str("  x:1"), Value::str("bad too")) {
            Err(e @ Error::MalformedGtidSet(_)) => {
                assert_eq!(e.code(), 1772);
                assert_eq!(e.to_string(), "Malformed GTID set specification 'x:1'.");
            }
            other => panic!("{other:?}"),
        }
        // A number is read as its text.
        assert!(sub(Value::Int(1), Value::str("")).is_err());
    }

    #[test]
    fn subset_is_one_zero_or_null() {
        let env = TestEnv::default();
        let f = Func::Gtid(GtidFn::Subset);
        let s = |t: String| Value::str(&t);
        assert_eq!(
            run(f, vec![s(format!("{A}:23")), s(format!("{A}:21-57"))], &env),
            Value::Int(1)
        );
        assert_eq!(
            run(
                f,
                vec![s(format!("{A}:20-25")), s(format!("{A}:21-57"))],
                &env
            ),
            Value::Int(0)
        );
        assert_eq!(
            run(f, vec![Value::str(""), Value::str("")], &env),
            Value::Int(1)
        );
        assert_eq!(run(f, vec![Value::Null, Value::str("")], &env), Value::Null);
        assert!(try_run(f, vec![Value::str(""), Value::str("x")], &env).is_err());
    }

    #[test]
    fn wait_checks_its_arguments_first() {
        let env = TestEnv::default();
        let f = Func::Gtid(GtidFn::WaitForExecuted);
        let code = |args: Vec<Value>| try_run(f, args, &env).unwrap_err().code();
        assert_eq!(code(vec![Value::Null]), 1772);
        assert_eq!(code(vec![Value::str(""), Value::Int(-1)]), 1210);
        assert_eq!(code(vec![Value::str(""), Value::Null]), 1210);
        // The test session has no binary log: gtid_mode is OFF.
        assert_eq!(code(vec![Value::str("bad"), Value::Int(1)]), 1788);
    }
}
