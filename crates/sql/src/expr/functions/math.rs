//! Numeric functions: ABS, SIGN, ROUND, TRUNCATE, FLOOR, CEIL, MOD, POW, SQRT, EXP,
//! the logarithms, the trigonometric functions, DEGREES, RADIANS, CRC32 and RAND.
//!
//! MySQL's rules: a DOUBLE result that is not finite is error 1690 (`POW(10, 400)`,
//! `EXP(1000)`, `COT(0)`); a logarithm of a non-positive number is NULL with warning
//! 3020; SQRT, ASIN and ACOS outside their domain are NULL. ROUND of a DOUBLE rounds
//! half to even (MySQL uses `rint`), of an exact value half away from zero.

use super::rand::RandState;
use super::{arg, text};
use crate::expr::int_context::{int_arg, uint_arg};
use crate::expr::{arith_in, ArithOp, EvalCtx, Expr, WarnLevel};
use strata_types::{Decimal, Error, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
    Abs,
    Sign,
    Round,
    Truncate,
    Floor,
    Ceil,
    Mod,
    Pow,
    Sqrt,
    Exp,
    Ln,
    /// LOG(x) is LN(x); LOG(b, x) is the logarithm of x in base b.
    Log,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Cot,
    Asin,
    Acos,
    /// ATAN(x), ATAN(y, x) and ATAN2(y, x).
    Atan,
    Degrees,
    Radians,
    Pi,
    Crc32,
    Rand,
    /// BIT_COUNT(x): the one bits of x as a 64-bit integer.
    BitCount,
    /// INTERVAL(N, N1, N2, …): how many of the (ascending) Ni are ≤ N; -1 for a NULL N.
    /// Reached only through the parser's internal name `[interval]`.
    Interval,
}

pub(super) fn lookup(name: &str) -> Option<(MathFn, usize, usize)> {
    use MathFn::*;
    Some(match name {
        "abs" => (Abs, 1, 1),
        "sign" => (Sign, 1, 1),
        "round" => (Round, 1, 2),
        "truncate" => (Truncate, 2, 2),
        "floor" => (Floor, 1, 1),
        "ceil" | "ceiling" => (Ceil, 1, 1),
        "mod" => (Mod, 2, 2),
        "pow" | "power" => (Pow, 2, 2),
        "sqrt" => (Sqrt, 1, 1),
        "exp" => (Exp, 1, 1),
        "ln" => (Ln, 1, 1),
        "log" => (Log, 1, 2),
        "log2" => (Log2, 1, 1),
        "log10" => (Log10, 1, 1),
        "sin" => (Sin, 1, 1),
        "cos" => (Cos, 1, 1),
        "tan" => (Tan, 1, 1),
        "cot" => (Cot, 1, 1),
        "asin" => (Asin, 1, 1),
        "acos" => (Acos, 1, 1),
        "atan" => (Atan, 1, 2),
        "atan2" => (Atan, 2, 2),
        "degrees" => (Degrees, 1, 1),
        "radians" => (Radians, 1, 1),
        "pi" => (Pi, 0, 0),
        "crc32" => (Crc32, 1, 1),
        "bit_count" => (BitCount, 1, 1),
        "[interval]" => (Interval, 2, usize::MAX),
        "rand" => (Rand, 0, 1),
        _ => return None,
    })
}

/// The name MySQL prints for the function in error 1690.
fn sql_name(f: MathFn) -> &'static str {
    use MathFn::*;
    match f {
        Pow => "pow",
        Exp => "exp",
        Cot => "cot",
        Tan => "tan",
        Degrees => "degrees",
        Radians => "radians",
        Abs => "abs",
        Round => "round",
        _ => "function",
    }
}

/// Error 1690 for a result that does not fit `kind`, naming the call as MySQL prints it.
fn out_of_range(kind: &str, f: MathFn, vals: &[Value]) -> Error {
    let args: Vec<String> = vals.iter().map(Value::to_text).collect();
    Error::ValueOutOfRange {
        kind: kind.into(),
        expr: format!("{}({})", sql_name(f), args.join(",")),
    }
}

/// Warning 3020 and NULL: a logarithm of a number it is not defined for.
fn bad_log(cx: &EvalCtx) -> Value {
    cx.env.warn(
        WarnLevel::Warning,
        3020,
        "Invalid argument for logarithm".into(),
    );
    Value::Null
}

pub(super) fn call(f: MathFn, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    use MathFn::*;
    match f {
        Rand => return Ok(Value::Double(rand(args, row, cx)?)),
        Interval => return interval(args, row, cx),
        Pi => return Err(Error::NotSupported("PI()".into())),
        Mod => {
            return arith_in(
                ArithOp::Mod,
                &arg(args, 0, row, cx)?,
                &arg(args, 1, row, cx)?,
                cx,
            )
        }
        _ => {}
    }
    let mut vals = Vec::with_capacity(args.len());
    for e in args {
        let v = e.eval(row, cx)?;
        if v.is_null() {
            return Ok(Value::Null);
        }
        vals.push(v);
    }
    let x = vals[0].to_f64().unwrap_or(0.0);
    let finite = |r: f64| -> Result<Value> {
        if r.is_finite() {
            Ok(Value::Double(r))
        } else {
            Err(out_of_range("DOUBLE", f, &vals))
        }
    };
    Ok(match f {
        Abs => match &vals[0] {
            Value::Int(i) => match i.checked_abs() {
                Some(a) => Value::Int(a),
                None => return Err(out_of_range("BIGINT", f, &vals)),
            },
            Value::UInt(u) => Value::UInt(*u),
            Value::Decimal(d) => Value::Decimal(d.abs()),
            _ => Value::Double(x.abs()),
        },
        Sign => Value::Int(match &vals[0] {
            Value::Int(i) => i.signum(),
            Value::UInt(u) => (*u > 0) as i64,
            Value::Decimal(d) => d.mantissa().signum() as i64,
            _ if x > 0.0 => 1,
            _ if x < 0.0 => -1,
            _ => 0,
        }),
        Round => match round(
            &vals[0],
            vals.get(1).and_then(|v| int_arg(v, cx)).unwrap_or(0),
        ) {
            Some(v) => v,
            None if matches!(vals[0], Value::Decimal(_)) => return Err(wide_digits()),
            None => return Err(out_of_range("BIGINT", f, &vals)),
        },
        Truncate => truncate(&vals[0], int_arg(&vals[1], cx).unwrap_or(0))?,
        Floor | Ceil => match &vals[0] {
            v @ (Value::Int(_) | Value::UInt(_)) => v.clone(),
            Value::Decimal(d) => {
                let q = d.rescale(0);
                let adj = match (f, q.cmp(d)) {
                    (Floor, std::cmp::Ordering::Greater) => -1,
                    (Ceil, std::cmp::Ordering::Less) => 1,
                    _ => 0,
                };
                if q.is_wide() {
                    let r = q.checked_add(&Decimal::new(adj, 0));
                    return r.map(Value::Decimal).ok_or_else(wide_digits);
                }
                let r = q.mantissa() + adj;
                // Past BIGINT the value stays a DECIMAL of its digits (MySQL types such
                // a FLOOR as DECIMAL), never a cut integer.
                match i64::try_from(r) {
                    Ok(i) => Value::Int(i),
                    Err(_) => Value::Decimal(Decimal::new(r, 0)),
                }
            }
            _ => Value::Double(if f == Floor { x.floor() } else { x.ceil() }),
        },
        Pow => finite(x.powf(vals[1].to_f64().unwrap_or(0.0)))?,
        Sqrt if x < 0.0 => Value::Null,
        Sqrt => Value::Double(x.sqrt()),
        Exp => finite(x.exp())?,
        Ln if x <= 0.0 => bad_log(cx),
        Ln => Value::Double(x.ln()),
        Log if vals.len() == 1 => {
            if x <= 0.0 {
                bad_log(cx)
            } else {
                Value::Double(x.ln())
            }
        }
        Log => {
            let y = vals[1].to_f64().unwrap_or(0.0);
            if x <= 0.0 || y <= 0.0 || x == 1.0 {
                bad_log(cx)
            } else {
                Value::Double(y.ln() / x.ln())
            }
        }
        Log2 if x <= 0.0 => bad_log(cx),
        Log2 => Value::Double(x.log2()),
        Log10 if x <= 0.0 => bad_log(cx),
        Log10 => Value::Double(x.log10()),
        Sin => Value::Double(x.sin()),
        Cos => Value::Double(x.cos()),
        Tan => finite(x.tan())?,
        Cot => finite(1.0 / x.tan())?,
        Asin | Acos if !(-1.0..=1.0).contains(&x) => Value::Null,
        Asin => Value::Double(x.asin()),
        Acos => Value::Double(x.acos()),
        Atan if vals.len() == 2 => Value::Double(x.atan2(vals[1].to_f64().unwrap_or(0.0))),
        Atan => Value::Double(x.atan()),
        Degrees => finite(x.to_degrees())?,
        Radians => Value::Double(x.to_radians()),
        Crc32 => Value::UInt(crc32fast::hash(&text(&vals[0])) as u64),
        BitCount => Value::Int(uint_arg(&vals[0], cx).count_ones() as i64),
        Rand | Pi | Mod | Interval => unreachable!("handled above"),
    })
}

/// INTERVAL(N, N1, …) as MySQL computes it: N and an Ni compare exactly (as decimals)
/// when both are integers or decimals, else as doubles; a NULL Ni is skipped. With more
/// than seven Ni, none NULL, MySQL binary-searches them (it assumes them ascending, and
/// so does this); otherwise it returns before the first Ni greater than N.
fn interval(args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let n = arg(args, 0, row, cx)?;
    if n.is_null() {
        return Ok(Value::Int(-1));
    }
    let mut list = Vec::with_capacity(args.len() - 1);
    for e in &args[1..] {
        list.push(e.eval(row, cx)?);
    }
    let exact = |v: &Value| matches!(v, Value::Int(_) | Value::UInt(_) | Value::Decimal(_));
    let nd = n.to_f64().unwrap_or(0.0);
    // Whether Ni is greater than N.
    let above = |x: &Value| -> bool {
        if x.is_null() {
            false
        } else if exact(&n) && exact(x) {
            crate::expr::compare(x, &n, strata_types::Collation::Binary)
                == Some(std::cmp::Ordering::Greater)
        } else {
            x.to_f64().unwrap_or(0.0) > nd
        }
    };
    if list.len() > 7 && list.iter().all(|x| !x.is_null()) {
        let (mut start, mut end) = (0usize, list.len() - 1);
        while start != end {
            let mid = start + (end - start).div_ceil(2);
            if above(&list[mid]) {
                end = mid - 1;
            } else {
                start = mid;
            }
        }
        return Ok(Value::Int(if above(&list[start]) {
            0
        } else {
            start as i64 + 1
        }));
    }
    let first_above = list.iter().position(above).unwrap_or(list.len());
    Ok(Value::Int(first_above as i64))
}

/// RAND(): the session's generator. RAND(n): with a constant n, one sequence per call
/// in the statement, seeded on the call's first evaluation; otherwise seeded by each
/// row's n (MySQL re-seeds for a non-constant argument).
fn rand(args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<f64> {
    let Some(seed_expr) = args.first() else {
        return Ok(cx.env.random());
    };
    let seed = seed_expr.eval(row, cx)?.to_i64().unwrap_or(0);
    let constant = matches!(
        seed_expr,
        Expr::Literal(_) | Expr::Param(_) | Expr::Cached(_)
    );
    if constant {
        // The call's address identifies it for the statement.
        Ok(cx.env.seeded_random(args.as_ptr() as usize, seed))
    } else {
        Ok(RandState::for_seed(seed).next_f64())
    }
}

/// ROUND(v, d): exact values half away from zero (integers stay integers, so a
/// negative `d` rounds `15` to `20`), doubles half to even as MySQL's `rint`. None when
/// an integer result leaves BIGINT.
fn round(v: &Value, d: i64) -> Option<Value> {
    Some(match v {
        Value::Int(_) | Value::UInt(_) if d >= 0 => v.clone(),
        Value::Int(_) | Value::UInt(_) => {
            let i = match v {
                Value::Int(i) => *i as i128,
                Value::UInt(u) => *u as i128,
                _ => 0,
            };
            let r = if d < -19 {
                0
            } else {
                let p = 10i128.pow((-d) as u32);
                let q = (i.abs() + p / 2) / p * p;
                if i < 0 {
                    -q
                } else {
                    q
                }
            };
            match v {
                Value::UInt(_) => Value::UInt(u64::try_from(r).ok()?),
                _ => Value::Int(i64::try_from(r).ok()?),
            }
        }
        Value::Decimal(x) => {
            let r = x.round_to(d, false);
            // Digits that may not be MySQL's (a value past 38 digits before): refused.
            if !r.is_exact() {
                return None;
            }
            Value::Decimal(r)
        }
        v => Value::Double(round_double(v.to_f64().unwrap_or(0.0), d)),
    })
}

/// MySQL's `my_double_round` without truncation.
pub(crate) fn round_double(x: f64, d: i64) -> f64 {
    let p = 10f64.powi(d.unsigned_abs().min(400) as i32);
    if d >= 0 {
        let m = x * p;
        if m.is_infinite() {
            return x;
        }
        m.round_ties_even() / p
    } else {
        let r = (x / p).round_ties_even() * p;
        if r.is_nan() {
            0.0
        } else {
            r
        }
    }
}

/// A result whose digits depend on digits past 38 that an earlier DECIMAL result
/// dropped (MySQL 8 holds them): refused, never shown with other digits.
fn wide_digits() -> Error {
    Error::NotSupported("DECIMAL results of more than 38 digits".into())
}

fn truncate(v: &Value, d: i64) -> Result<Value> {
    Ok(match v {
        Value::Int(i) if d < 0 => {
            let p = 10i128.checked_pow((-d).min(40) as u32).unwrap_or(i128::MAX);
            Value::Int((*i as i128 / p * p) as i64)
        }
        Value::UInt(u) if d < 0 => {
            let p = 10i128.checked_pow((-d).min(40) as u32).unwrap_or(i128::MAX);
            Value::UInt((*u as i128 / p * p) as u64)
        }
        v @ (Value::Int(_) | Value::UInt(_)) => v.clone(),
        Value::Decimal(x) => match x.round_to(d, true) {
            r if r.is_exact() => Value::Decimal(r),
            // Digits that may not be MySQL's (a value past 38 digits before).
            _ => return Err(wide_digits()),
        },
        v => {
            let x = v.to_f64().unwrap_or(0.0);
            let r = if d >= 0 {
                let m = 10f64.powi(d.min(400) as i32);
                let t = (x * m).trunc() / m;
                if t.is_finite() {
                    t
                } else {
                    x
                }
            } else {
                let m = 10f64.powi((-d).min(400) as i32);
                (x / m).trunc() * m
            };
            Value::Double(r)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_env::{show, try_run, TestEnv};
    use super::super::Func;
    use super::*;

    fn m(f: MathFn, args: Vec<Value>) -> Result<String> {
        try_run(Func::Math(f), args, &TestEnv::default()).map(show)
    }

    #[test]
    fn rounding_rules_by_type() {
        assert_eq!(round_double(2.5, 0), 2.0);
        assert_eq!(round_double(-2.5, 0), -2.0);
        assert_eq!(round_double(0.125, 2), 0.12);
        assert_eq!(round_double(1234.5, -2), 1200.0);
        assert_eq!(round(&Value::Int(15), -1), Some(Value::Int(20)));
        assert_eq!(round(&Value::Int(-15), -1), Some(Value::Int(-20)));
        assert_eq!(round(&Value::Int(i64::MAX), -1), None);
        assert_eq!(round(&Value::Int(5), -30), Some(Value::Int(0)));
    }

    #[test]
    fn doubles_that_overflow_are_1690_and_bad_logs_warn_3020() {
        let code = |r: Result<String>| r.unwrap_err().code();
        assert_eq!(
            code(m(MathFn::Pow, vec![Value::Int(10), Value::Int(400)])),
            1690
        );
        let e = m(MathFn::Exp, vec![Value::Int(1000)]).unwrap_err();
        assert_eq!(e.to_string(), "DOUBLE value is out of range in 'exp(1000)'");
        assert_eq!(code(m(MathFn::Cot, vec![Value::Int(0)])), 1690);
        assert_eq!(code(m(MathFn::Abs, vec![Value::Int(i64::MIN)])), 1690);
        let env = TestEnv::default();
        let ln0 = try_run(Func::Math(MathFn::Ln), vec![Value::Int(0)], &env).unwrap();
        assert_eq!(ln0, Value::Null);
        assert_eq!(env.codes(), vec![3020]);
        assert_eq!(m(MathFn::Sqrt, vec![Value::Int(-1)]).unwrap(), "NULL");
        assert_eq!(m(MathFn::Acos, vec![Value::Int(2)]).unwrap(), "NULL");
        assert_eq!(
            m(MathFn::Log, vec![Value::Int(2), Value::Int(8)]).unwrap(),
            "3"
        );
        assert_eq!(
            m(MathFn::Crc32, vec![Value::str("MySQL")]).unwrap(),
            "3259397556"
        );
        assert_eq!(m(MathFn::Sign, vec![Value::Double(-2.5)]).unwrap(), "-1");
    }
}
