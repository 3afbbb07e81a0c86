//! Aggregate accumulators: the running state of one aggregate call over the rows of one
//! group ([`new_state`], [`update_state`], [`finish_state`]), shared by grouping and by
//! window functions. Grouping feeds whole argument lists ([`feed`]: DISTINCT, several
//! arguments, GROUP_CONCAT's ORDER BY keys) and finishes with the session at hand
//! ([`finish_state_in`]: `group_concat_max_len` and its warning).

use crate::bind::{AggFunc, AggSpec, SType};
use crate::expr::int_context::uint_arg;
use crate::expr::json::value_arg;
use crate::expr::keys::group_key;
use crate::expr::{compare, sort_compare, EvalCtx, Expr};
use crate::hash_tables::FastSet;
use crate::{Env, WarnLevel};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use strata_types::json::Json;
use strata_types::{Decimal, Error, Result, Value};

#[derive(Clone)]
pub(crate) enum AggState {
    Count(u64),
    SumInt(i128, bool),
    SumDec(Option<Decimal>),
    SumDouble(f64, bool),
    Avg(f64, Option<Decimal>, u64),
    Best(Option<Value>),
    Any(Option<Value>),
    /// Welford's running mean and sum of squared deviations, as MySQL computes them
    /// (the same recurrence gives the same last digits).
    Var {
        n: u64,
        mean: f64,
        m2: f64,
    },
    /// BIT_AND / BIT_OR / BIT_XOR over 64-bit unsigned values.
    Bits(u64),
    /// GROUP_CONCAT: each row's ORDER BY keys, its text, and its input row number (for
    /// the truncation warning).
    Concat(Vec<(Vec<Value>, Vec<u8>, u64)>),
    /// JSON_ARRAYAGG: the elements as JSON values.
    JsonArray(Vec<Json>),
    /// JSON_OBJECTAGG: members by MySQL's key order (length, then bytes); a later
    /// duplicate key replaces the earlier value.
    JsonObject(BTreeMap<(usize, Vec<u8>), Json>),
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
        AggFunc::AnyValue | AggFunc::Grouping => AggState::Any(None),
        AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => AggState::Var {
            n: 0,
            mean: 0.0,
            m2: 0.0,
        },
        AggFunc::BitAnd => AggState::Bits(u64::MAX),
        AggFunc::BitOr | AggFunc::BitXor => AggState::Bits(0),
        AggFunc::GroupConcat => AggState::Concat(Vec::new()),
        AggFunc::JsonArrayAgg => AggState::JsonArray(Vec::new()),
        AggFunc::JsonObjectAgg => AggState::JsonObject(BTreeMap::new()),
    }
}

/// Feeds one row's value of a one-argument aggregate.
#[allow(dead_code)] // the entry point of window functions, which feed one value a row
pub(crate) fn update_state(state: &mut AggState, spec: &AggSpec, v: Value) -> Result<()> {
    update_inputs(state, spec, &mut [v], 0)
}

/// How many values one row feeds `spec` ([`eval_inputs`]): its arguments (a NULL
/// placeholder for `COUNT(*)` and GROUPING), then GROUP_CONCAT's ORDER BY keys.
pub(crate) fn input_count(spec: &AggSpec) -> usize {
    match spec.func {
        AggFunc::CountStar | AggFunc::Grouping => 1,
        _ => 1 + spec.more_args.len() + spec.order.len(),
    }
}

/// Evaluates what one source row feeds `spec`, appending to `out`.
pub(crate) fn eval_inputs(
    spec: &AggSpec,
    row: &[Value],
    cx: &EvalCtx,
    out: &mut Vec<Value>,
) -> Result<()> {
    match (&spec.arg, spec.func) {
        // A bit aggregate reads its argument as an unsigned integer (`val_uint`): a
        // string by its leading digits, with warning 1292 when anything is cut off.
        (Some(e), AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor) => {
            let v = e.eval(row, cx)?;
            out.push(match v {
                Value::Bytes(_) => Value::UInt(uint_arg(&v, cx)),
                v => v,
            });
        }
        (Some(e), f) if f != AggFunc::Grouping => out.push(e.eval(row, cx)?),
        _ => {
            out.push(Value::Null);
            return Ok(());
        }
    }
    for (e, _, _) in &spec.more_args {
        out.push(e.eval(row, cx)?);
    }
    for (e, _, _) in &spec.order {
        out.push(e.eval(row, cx)?);
    }
    Ok(())
}

/// Feeds one row's inputs (as [`eval_inputs`] made them) into the state, after the
/// DISTINCT filter (`seen`, when the call has DISTINCT). `row_no` numbers the rows
/// fed in this statement, for GROUP_CONCAT's warning. The values the state keeps are
/// moved out of `vals` (no vector per row and aggregate).
pub(crate) fn feed(
    state: &mut AggState,
    seen: &mut Option<FastSet<Vec<u8>>>,
    spec: &AggSpec,
    vals: &mut [Value],
    row_no: u64,
) -> Result<()> {
    let nargs = 1 + spec.more_args.len();
    if spec.func == AggFunc::JsonObjectAgg && vals.first().is_some_and(Value::is_null) {
        return Err(Error::JsonNullKey);
    }
    if let Some(seen) = seen {
        // DISTINCT counts a row once per distinct argument list; a row with a NULL
        // argument is not counted at all (COUNT(DISTINCT a, b), GROUP_CONCAT).
        if vals.iter().take(nargs).any(Value::is_null) {
            return Ok(());
        }
        let mut k = Vec::new();
        group_key(&mut k, &vals[0], spec.coll);
        for (v, (_, _, coll)) in vals.iter().skip(1).zip(&spec.more_args) {
            group_key(&mut k, v, *coll);
        }
        if !seen.insert(k) {
            return Ok(());
        }
    }
    update_inputs(state, spec, vals, row_no)
}

fn update_inputs(
    state: &mut AggState,
    spec: &AggSpec,
    vals: &mut [Value],
    row_no: u64,
) -> Result<()> {
    let nargs = 1 + spec.more_args.len();
    match state {
        AggState::Count(n) => {
            if spec.func == AggFunc::CountStar || vals.iter().take(nargs).all(|v| !v.is_null()) {
                *n += 1
            }
            return Ok(());
        }
        AggState::JsonArray(items) => {
            items.push(value_arg(vals.first().unwrap_or(&Value::Null))?);
            return Ok(());
        }
        AggState::JsonObject(members) => {
            let (Some(k), Some(v)) = (vals.first(), vals.get(1)) else {
                return Ok(());
            };
            let mut key = Vec::new();
            k.write_text(&mut key);
            members.insert((key.len(), key), value_arg(v)?);
            return Ok(());
        }
        AggState::Concat(items) => {
            // A row with any NULL argument adds nothing.
            if vals.iter().take(nargs).any(Value::is_null) {
                return Ok(());
            }
            let (vals, keys) = vals.split_at_mut(nargs.min(vals.len()));
            let keys = keys.iter_mut().map(std::mem::take).collect();
            let mut text = Vec::new();
            let types = std::iter::once(spec.arg_type).chain(spec.more_args.iter().map(|m| m.1));
            for (v, ty) in vals.iter().zip(types) {
                let at = text.len();
                match (v, ty) {
                    // A DOUBLE of fixed decimals shows them (`1.50`), as MySQL's.
                    (Value::Double(_), SType::Double(d)) => strata_types::output::write_text_for(
                        v,
                        Some(strata_types::FieldType::Double),
                        d,
                        &mut text,
                    ),
                    _ => v.write_text(&mut text),
                }
                if ty == SType::Date && matches!(v, Value::DateTime(_)) {
                    // A DATE is held as a date-time at midnight: show the date only.
                    text.truncate(at + 10);
                }
            }
            items.push((keys, text, row_no));
            return Ok(());
        }
        _ => {}
    }
    let v = vals.first_mut().map(std::mem::take).unwrap_or(Value::Null);
    if v.is_null() {
        return Ok(());
    }
    match state {
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
                Some(x) => x.checked_add(&d).ok_or_else(wide_sum)?,
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
                        Some(acc) => acc.checked_add(&x).ok_or_else(wide_sum)?,
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
        AggState::Var { n, mean, m2 } => {
            let x = v.to_f64().unwrap_or(0.0);
            *n += 1;
            if *n == 1 {
                *mean = x;
                *m2 = 0.0;
            } else {
                let diff = x - *mean;
                *mean += diff / *n as f64;
                *m2 += diff * (x - *mean);
            }
        }
        AggState::Bits(acc) => {
            let x = bits_of(&v);
            match spec.func {
                AggFunc::BitAnd => *acc &= x,
                AggFunc::BitOr => *acc |= x,
                _ => *acc ^= x,
            }
        }
        AggState::Count(_)
        | AggState::Concat(_)
        | AggState::JsonArray(_)
        | AggState::JsonObject(_) => {}
    }
    Ok(())
}

/// A DECIMAL SUM/AVG past the 65 digits a decimal holds (or one MySQL's 81-digit
/// buffer would cut): refused (1235), never a clamped or partial sum.
fn wide_sum() -> Error {
    Error::NotSupported("DECIMAL sums of more than 65 digits".into())
}

/// A value as the 64 bits BIT_AND/OR/XOR work on: MySQL's integer conversion (a
/// double or decimal past the signed range saturates, as MySQL's `val_int` does), with
/// a negative number taken as its two's-complement bits.
fn bits_of(v: &Value) -> u64 {
    match v {
        Value::UInt(u) => *u,
        other => other.to_i64().unwrap_or(0) as u64,
    }
}

/// The aggregate's value for the rows fed. GROUP_CONCAT here has no length limit; the
/// grouping executor uses [`finish_state_in`].
#[allow(dead_code)] // the window functions' entry point
pub(crate) fn finish_state(state: AggState, spec: &AggSpec) -> Result<Value> {
    finish_with_limit(state, spec, u64::MAX, None)
}

/// [`finish_state`] under the session's `group_concat_max_len`, warning 1260 on a cut.
pub(crate) fn finish_state_in(state: AggState, spec: &AggSpec, env: &dyn Env) -> Result<Value> {
    let limit = match &state {
        AggState::Concat(_) => env
            .system_variable("group_concat_max_len", false)
            .ok()
            .and_then(|v| v.to_i64())
            .map(|n| n.max(0) as u64)
            .unwrap_or(1024),
        _ => u64::MAX,
    };
    finish_with_limit(state, spec, limit, Some(env))
}

fn finish_with_limit(
    state: AggState,
    spec: &AggSpec,
    limit: u64,
    env: Option<&dyn Env>,
) -> Result<Value> {
    Ok(match state {
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
                return Ok(Value::Null);
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
                        .ok_or_else(wide_sum)?
                }
                None => Value::Double(f / n as f64),
            }
        }
        AggState::Best(b) | AggState::Any(b) => b.unwrap_or(Value::Null),
        AggState::Var { n, m2, .. } => {
            let sample = matches!(spec.func, AggFunc::StdSamp | AggFunc::VarSamp);
            if n == 0 || (sample && n == 1) {
                return Ok(Value::Null);
            }
            let var = if n == 1 {
                0.0
            } else if sample {
                m2 / (n - 1) as f64
            } else {
                m2 / n as f64
            };
            match spec.func {
                AggFunc::StdPop | AggFunc::StdSamp => Value::Double(var.sqrt()),
                _ => Value::Double(var),
            }
        }
        AggState::Bits(b) => Value::UInt(b),
        AggState::Concat(items) => concat(items, spec, limit, env),
        AggState::JsonArray(items) => {
            if items.is_empty() {
                Value::Null
            } else {
                Value::Json(strata_types::json::binary::encode(&Json::Array(items)))
            }
        }
        AggState::JsonObject(members) => {
            if members.is_empty() {
                return Ok(Value::Null);
            }
            // The map's order is MySQL's key order, so the members are already sorted.
            let m = members
                .into_iter()
                .map(|((_, k), v)| (String::from_utf8_lossy(&k).into_owned(), v))
                .collect();
            Value::Json(strata_types::json::binary::encode(&Json::Object(m)))
        }
    })
}

/// GROUP_CONCAT's result: the rows in ORDER BY order (stable, so ties keep arrival
/// order), joined by the separator, cut at `limit` bytes on a character boundary.
fn concat(
    mut items: Vec<(Vec<Value>, Vec<u8>, u64)>,
    spec: &AggSpec,
    limit: u64,
    env: Option<&dyn Env>,
) -> Value {
    if items.is_empty() {
        return Value::Null;
    }
    if !spec.order.is_empty() {
        items.sort_by(|a, b| {
            for (i, (_, desc, coll)) in spec.order.iter().enumerate() {
                let (x, y) = (&a.0[i], &b.0[i]);
                let o = sort_compare(x, y, *coll);
                if o != Ordering::Equal {
                    return if *desc { o.reverse() } else { o };
                }
            }
            Ordering::Equal
        });
    }
    let binary =
        spec.arg_type == SType::Binary || spec.more_args.iter().any(|m| m.1 == SType::Binary);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for (i, (_, text, row_no)) in items.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(&spec.separator);
        }
        out.extend_from_slice(text);
        if out.len() > limit {
            let mut end = limit;
            if !binary {
                // Never half a character.
                while end > 0 && end < out.len() && (out[end] & 0xC0) == 0x80 {
                    end -= 1;
                }
            }
            out.truncate(end);
            if let Some(env) = env {
                env.warn(
                    WarnLevel::Warning,
                    1260,
                    format!("Row {row_no} was cut by GROUP_CONCAT()"),
                );
            }
            break;
        }
    }
    Value::Bytes(out)
}

/// The value GROUPING() shows for a row of rollup `level` (how many GROUP BY columns
/// the row keeps): one bit per argument, 1 where that column is rolled up.
pub(crate) fn grouping_value(spec: &AggSpec, level: usize) -> Value {
    let mut bits = 0i64;
    for (e, _, _) in &spec.more_args {
        let rolled = matches!(e, Expr::Column(p) if *p >= level);
        bits = (bits << 1) | rolled as i64;
    }
    Value::Int(bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind::AggSpec;
    use crate::expr::test_env::TestEnv;
    use strata_types::{Collation, DateTime};

    fn spec(func: AggFunc, ty: SType) -> AggSpec {
        AggSpec::new(func, Some(Expr::Column(0)), false, ty, Collation::GeneralCi)
    }

    fn run(s: &AggSpec, vals: &[Value]) -> Value {
        let mut st = new_state(s);
        for v in vals {
            update_state(&mut st, s, v.clone()).expect("feeds");
        }
        finish_state(st, s).expect("finishes")
    }

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().map(|i| Value::Int(*i)).collect()
    }

    /// A session whose `group_concat_max_len` is `n`.
    fn session(n: i64) -> TestEnv {
        TestEnv::default().with("group_concat_max_len", Value::Int(n))
    }

    #[test]
    fn variance_follows_the_population_and_sample_rules() {
        let vals = ints(&[3, 5, 7, 7, 2, 4, 6]);
        let pop = run(&spec(AggFunc::VarPop, SType::Int), &vals);
        let Value::Double(p) = pop else {
            panic!("{pop:?}")
        };
        assert!((p - 160.0 / 49.0).abs() < 1e-12, "{p}");
        let Value::Double(sd) = run(&spec(AggFunc::StdSamp, SType::Int), &vals) else {
            panic!()
        };
        assert!((sd - (160.0f64 / 42.0).sqrt()).abs() < 1e-12);
        // One row: the population variance is 0, the sample one NULL; no rows: NULL.
        assert_eq!(
            run(&spec(AggFunc::VarPop, SType::Int), &ints(&[4])),
            Value::Double(0.0)
        );
        assert_eq!(
            run(&spec(AggFunc::VarSamp, SType::Int), &ints(&[4])),
            Value::Null
        );
        assert_eq!(
            run(&spec(AggFunc::StdPop, SType::Int), &[Value::Null]),
            Value::Null
        );
    }

    #[test]
    fn bit_aggregates_start_from_their_identity() {
        let and = spec(AggFunc::BitAnd, SType::Int);
        assert_eq!(run(&and, &[]), Value::UInt(u64::MAX));
        assert_eq!(run(&spec(AggFunc::BitOr, SType::Int), &[]), Value::UInt(0));
        assert_eq!(run(&and, &ints(&[7, 5, 13])), Value::UInt(5));
        assert_eq!(
            run(&spec(AggFunc::BitXor, SType::Int), &ints(&[5, 12, 6])),
            Value::UInt(15)
        );
        // A negative number is its two's-complement bits; NULL is skipped.
        assert_eq!(
            run(&and, &[Value::Int(-2), Value::Null]),
            Value::UInt(u64::MAX - 1)
        );
        assert_eq!(
            run(&spec(AggFunc::BitOr, SType::Text), &[Value::str("12abc")]),
            Value::UInt(12)
        );
        // Past the signed range a double saturates, as MySQL's integer conversion does.
        assert_eq!(
            run(&spec(AggFunc::BitOr, SType::DOUBLE), &[Value::Double(1e19)]),
            Value::UInt(i64::MAX as u64)
        );
    }

    #[test]
    fn json_aggregates_print_as_mysql_8() {
        let arr = spec(AggFunc::JsonArrayAgg, SType::Int);
        assert_eq!(
            run(&arr, &[Value::Int(1), Value::Null, Value::str("a\"b\\\n")]).to_text(),
            "[1, null, \"a\\\"b\\\\\\n\"]"
        );
        assert_eq!(run(&arr, &[]), Value::Null);
        let obj = AggSpec {
            more_args: vec![(Expr::Column(1), SType::Int, Collation::GeneralCi)],
            ..spec(AggFunc::JsonObjectAgg, SType::Text)
        };
        let mut st = new_state(&obj);
        let mut seen = None;
        for (k, v) in [("three", 3), ("two", 2), ("one", 1), ("two", 22)] {
            feed(
                &mut st,
                &mut seen,
                &obj,
                &mut [Value::str(k), Value::Int(v)],
                0,
            )
            .unwrap();
        }
        // Keys by length, then bytes; the last duplicate wins.
        assert_eq!(
            finish_state(st, &obj).expect("finishes").to_text(),
            "{\"one\": 1, \"two\": 22, \"three\": 3}"
        );
        let mut st = new_state(&obj);
        let err = feed(
            &mut st,
            &mut seen,
            &obj,
            &mut [Value::Null, Value::Int(1)],
            0,
        )
        .unwrap_err();
        assert_eq!(err.code(), 3158);
    }

    #[test]
    fn count_distinct_of_several_arguments_skips_rows_with_a_null() {
        let s = AggSpec {
            distinct: true,
            more_args: vec![(Expr::Column(1), SType::Text, Collation::GeneralCi)],
            ..spec(AggFunc::Count, SType::Int)
        };
        let mut st = new_state(&s);
        let mut seen = Some(FastSet::default());
        for (a, b) in [(1, "x"), (1, "X"), (1, "y"), (2, "x")] {
            feed(
                &mut st,
                &mut seen,
                &s,
                &mut [Value::Int(a), Value::str(b)],
                0,
            )
            .unwrap();
        }
        feed(&mut st, &mut seen, &s, &mut [Value::Int(3), Value::Null], 0).unwrap();
        // 'x' and 'X' are equal under the case-insensitive collation.
        assert_eq!(finish_state(st, &s).expect("finishes"), Value::Int(3));
    }

    #[test]
    fn group_concat_orders_separates_and_cuts_with_a_warning() {
        let s = AggSpec {
            order: vec![(Expr::Column(1), true, Collation::GeneralCi)],
            separator: b"; ".to_vec(),
            ..spec(AggFunc::GroupConcat, SType::Text)
        };
        let rows = [("b", 2), ("a", 1), ("c", 3)];
        let feed_all = || {
            let mut st = new_state(&s);
            let mut seen = None;
            for (n, (v, k)) in rows.iter().enumerate() {
                let mut vals = [Value::str(v), Value::Int(*k)];
                feed(&mut st, &mut seen, &s, &mut vals, n as u64 + 1).unwrap();
            }
            st
        };
        let wide = session(1024);
        assert_eq!(
            finish_state_in(feed_all(), &s, &wide).expect("finishes"),
            Value::str("c; b; a")
        );
        assert!(wide.warnings.borrow().is_empty());
        let narrow = session(4);
        // "c; b" fits exactly; the separator after it is the cut, at input row 2 ("a").
        assert_eq!(
            finish_state_in(feed_all(), &s, &narrow).expect("finishes"),
            Value::str("c; b")
        );
        assert_eq!(
            narrow.warnings.borrow().as_slice(),
            &[(1260, "Row 2 was cut by GROUP_CONCAT()".to_string())]
        );
        // Never half a UTF-8 character; NULL arguments add nothing; no rows is NULL.
        let plain = spec(AggFunc::GroupConcat, SType::Text);
        let mut st = new_state(&plain);
        update_state(&mut st, &plain, Value::str("aé")).expect("feeds");
        update_state(&mut st, &plain, Value::Null).expect("feeds");
        let two = session(2);
        assert_eq!(
            finish_state_in(st, &plain, &two).expect("finishes"),
            Value::str("a")
        );
        assert_eq!(run(&plain, &[Value::Null]), Value::Null);
        // A DATE argument shows as a date, not as the date-time it is held as.
        let dates = spec(AggFunc::GroupConcat, SType::Date);
        let day = DateTime::parse("2024-02-29").unwrap();
        assert_eq!(
            run(&dates, &[Value::DateTime(day)]),
            Value::str("2024-02-29")
        );
    }

    #[test]
    fn grouping_sets_a_bit_per_rolled_up_argument() {
        let s = AggSpec {
            more_args: vec![
                (Expr::Column(0), SType::Int, Collation::GeneralCi),
                (Expr::Column(1), SType::Int, Collation::GeneralCi),
            ],
            ..AggSpec::new(
                AggFunc::Grouping,
                None,
                false,
                SType::Int,
                Collation::GeneralCi,
            )
        };
        assert_eq!(grouping_value(&s, 2), Value::Int(0));
        assert_eq!(grouping_value(&s, 1), Value::Int(1));
        assert_eq!(grouping_value(&s, 0), Value::Int(3));
    }
}
