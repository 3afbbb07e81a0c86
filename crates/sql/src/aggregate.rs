//! Aggregate accumulators: the running state of one aggregate call over the rows of one
//! group ([`new_state`], [`update_state`], [`finish_state`]), shared by grouping and by
//! window functions.

use crate::bind::{AggFunc, AggSpec, SType};
use crate::expr::compare;
use std::cmp::Ordering;
use strata_types::{Decimal, Value};

pub(crate) enum AggState {
    Count(u64),
    SumInt(i128, bool),
    SumDec(Option<Decimal>),
    SumDouble(f64, bool),
    Avg(f64, Option<Decimal>, u64),
    Best(Option<Value>),
    Any(Option<Value>),
}

pub(crate) fn new_state(spec: &AggSpec) -> AggState {
    match spec.func {
        AggFunc::CountStar | AggFunc::Count => AggState::Count(0),
        AggFunc::Sum => match spec.arg_type {
            SType::Int | SType::UInt => AggState::SumInt(0, false),
            SType::Decimal(_) => AggState::SumDec(None),
            _ => AggState::SumDouble(0.0, false),
        },
        AggFunc::Avg => AggState::Avg(0.0, None, 0),
        AggFunc::Min | AggFunc::Max => AggState::Best(None),
        AggFunc::AnyValue => AggState::Any(None),
    }
}

pub(crate) fn update_state(state: &mut AggState, spec: &AggSpec, v: Value) {
    match state {
        AggState::Count(n) => {
            if spec.func == AggFunc::CountStar || !v.is_null() {
                *n += 1
            }
        }
        _ if v.is_null() => {}
        AggState::SumInt(s, seen) => {
            *s += match v {
                Value::Int(i) => i as i128,
                Value::UInt(u) => u as i128,
                other => other.to_i64().unwrap_or(0) as i128,
            };
            *seen = true;
        }
        AggState::SumDec(s) => {
            let d = match v {
                Value::Decimal(d) => d,
                other => Decimal::from_f64(other.to_f64().unwrap_or(0.0), 10)
                    .unwrap_or(Decimal::from_i64(0)),
            };
            *s = Some(match s {
                None => d,
                Some(x) => x.checked_add(&d).unwrap_or(*x),
            });
        }
        AggState::SumDouble(s, seen) => {
            *s += v.to_f64().unwrap_or(0.0);
            *seen = true;
        }
        AggState::Avg(f, d, n) => {
            match (&v, spec.arg_type) {
                (_, SType::Int | SType::UInt | SType::Decimal(_)) => {
                    let x = match &v {
                        Value::Decimal(x) => *x,
                        Value::UInt(u) => Decimal::new(*u as i128, 0),
                        other => Decimal::from_i64(other.to_i64().unwrap_or(0)),
                    };
                    *d = Some(match d {
                        None => x,
                        Some(acc) => acc.checked_add(&x).unwrap_or(*acc),
                    });
                }
                _ => *f += v.to_f64().unwrap_or(0.0),
            }
            *n += 1;
        }
        AggState::Best(b) => {
            let replace = match b {
                None => true,
                Some(cur) => {
                    let ord = compare(&v, cur, spec.coll).unwrap_or(Ordering::Equal);
                    if spec.func == AggFunc::Min {
                        ord == Ordering::Less
                    } else {
                        ord == Ordering::Greater
                    }
                }
            };
            if replace {
                *b = Some(v);
            }
        }
        AggState::Any(a) => {
            if a.is_none() {
                *a = Some(v);
            }
        }
    }
}

pub(crate) fn finish_state(state: AggState, spec: &AggSpec) -> Value {
    match state {
        AggState::Count(n) => Value::Int(n as i64),
        AggState::SumInt(s, seen) => {
            if seen {
                Value::Decimal(Decimal::new(s, 0))
            } else {
                Value::Null
            }
        }
        AggState::SumDec(s) => s.map(Value::Decimal).unwrap_or(Value::Null),
        AggState::SumDouble(s, seen) => {
            if seen {
                Value::Double(s)
            } else {
                Value::Null
            }
        }
        AggState::Avg(f, d, n) => {
            if n == 0 {
                return Value::Null;
            }
            match d {
                Some(d) => {
                    let scale = match spec.arg_type {
                        SType::Decimal(s) => (s + 4).min(30),
                        _ => 4,
                    };
                    // Shown at the declared scale, every digit kept for what follows
                    // (`AVG(a) * 3` must not multiply a rounded average).
                    d.checked_div(&Decimal::new(n as i128, 0))
                        .map(|q| Value::Decimal(q.with_shown(scale)))
                        .unwrap_or(Value::Null)
                }
                None => Value::Double(f / n as f64),
            }
        }
        AggState::Best(b) | AggState::Any(b) => b.unwrap_or(Value::Null),
    }
}
