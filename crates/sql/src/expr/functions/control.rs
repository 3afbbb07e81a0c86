//! Control-flow functions: IF, IFNULL, NULLIF, COALESCE, GREATEST, LEAST, and the
//! wrappers the binder adds to give a branch's value its result type (ShowScale,
//! ShowDouble, ShowSigned), a FLOAT's text (ShowFloat) or the date GREATEST/LEAST of
//! dates and strings picked (ShowPickedDate). GREATEST/LEAST compare by
//! the arguments' kind as MySQL 8: numbers as numbers, and as strings once a string is
//! among them.

use super::{arg, Func};
use crate::expr::{compare, EvalCtx, Expr};
use std::cmp::Ordering;
use strata_types::{Decimal, Result, Value};

pub(super) fn call(f: Func, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    use Func::*;
    let a0 = || arg(args, 0, row, cx);
    Ok(match f {
        If => {
            if a0()?.truth() == Some(true) {
                arg(args, 1, row, cx)?
            } else {
                arg(args, 2, row, cx)?
            }
        }
        IfNull => match a0()? {
            Value::Null => arg(args, 1, row, cx)?,
            v => v,
        },
        NullIf(coll) => {
            let (a, b) = (a0()?, arg(args, 1, row, cx)?);
            if compare(&a, &b, coll) == Some(Ordering::Equal) {
                Value::Null
            } else {
                a
            }
        }
        Coalesce => {
            for e in args {
                let v = e.eval(row, cx)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            Value::Null
        }
        Greatest(coll) | Least(coll) => {
            let mut vals = Vec::with_capacity(args.len());
            for e in args {
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                vals.push(v);
            }
            // A string among numbers makes MySQL 8 compare every argument as a string
            // (GREATEST(10, 9, '1') is '9'; MariaDB compares them as numbers).
            let as_strings = vals.iter().any(|v| matches!(v, Value::Bytes(_)))
                && vals.iter().any(|v| {
                    matches!(
                        v,
                        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_)
                    )
                });
            let mut best: Option<Value> = None;
            for v in vals {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let ord = if as_strings {
                            coll.compare(&text_of(&v), &text_of(&b))
                        } else {
                            // Every digit counts here, as in MySQL (not the sort order).
                            compare(&v, &b, coll).unwrap_or(Ordering::Equal)
                        };
                        let take = if matches!(f, Greatest(_)) {
                            ord.is_gt()
                        } else {
                            ord.is_lt()
                        };
                        if take {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            best.unwrap_or(Value::Null)
        }
        ShowFloat => match a0()? {
            Value::Double(d) => Value::str(&strata_types::floatfmt::format_float(d)),
            v => v,
        },
        ShowPickedDate(fsp) => match a0()? {
            v @ (Value::DateTime(_) | Value::Bytes(_)) => {
                // A string that is no date was compared as a string: it stays itself.
                match crate::expr::datetime::temporal::stamp_of(&v, false) {
                    Some(s) if fsp == strata_types::datetime::DATE_ONLY => {
                        Value::str(&s.dt.date_string())
                    }
                    Some(s) => Value::str(&crate::expr::datetime::temporal::format_datetime(
                        &s.dt, fsp,
                    )),
                    None => v,
                }
            }
            v => v,
        },
        ShowFixed(decimals) => match a0()? {
            Value::Double(d) => Value::str(&format!("{d:.*}", usize::from(decimals))),
            v => v,
        },
        ShowScale(s) => match a0()? {
            Value::Decimal(d) => Value::Decimal(d.with_shown(s)),
            Value::Int(i) => Value::Decimal(Decimal::from_i64(i).with_shown(s)),
            Value::UInt(u) => Value::Decimal(Decimal::from_u64(u).with_shown(s)),
            v => v,
        },
        ShowDouble => match a0()? {
            v @ (Value::Int(_) | Value::UInt(_) | Value::Decimal(_)) => {
                Value::Double(v.to_f64().unwrap_or(0.0))
            }
            v => v,
        },
        ShowSigned => match a0()? {
            Value::UInt(u) => i64::try_from(u).map_or(Value::UInt(u), Value::Int),
            v => v,
        },
        other => unreachable!("{other:?} is not a control-flow function"),
    })
}

fn text_of(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    v.write_text(&mut out);
    out
}
