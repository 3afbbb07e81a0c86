//! Comparing JSON values as MySQL 8 does: first by type (MySQL's precedence: NULL <
//! numbers < STRING < OBJECT < ARRAY < BOOLEAN < DATE < DATETIME), then within the
//! type (numbers by value whatever their kind, strings by bytes, arrays element by
//! element). An SQL value meets JSON as the JSON value it converts to (a string is a
//! JSON string, never parsed). Also JSON_CONTAINS's containment.

use super::{decode, value_arg};
use std::cmp::Ordering;
use strata_types::json::Json;
use strata_types::{Collation, Result, Value};

fn rank(j: &Json) -> u8 {
    match j {
        Json::Null => 0,
        Json::Int(_) | Json::UInt(_) | Json::Double(_) | Json::Decimal(_) => 1,
        Json::String(_) => 2,
        Json::Object(_) => 3,
        Json::Array(_) => 4,
        Json::Bool(_) => 5,
        Json::Date(_) => 6,
        Json::DateTime(_) => 7,
    }
}

fn number(j: &Json) -> Value {
    match j {
        Json::Int(i) => Value::Int(*i),
        Json::UInt(u) => Value::UInt(*u),
        Json::Double(d) => Value::Double(*d),
        Json::Decimal(d) => Value::Decimal(*d),
        _ => Value::Null,
    }
}

/// Total order of two JSON values.
pub fn json_cmp(a: &Json, b: &Json) -> Ordering {
    let (ra, rb) = (rank(a), rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Json::String(x), Json::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Json::Bool(x), Json::Bool(y)) => x.cmp(y),
        (Json::Date(x), Json::Date(y)) | (Json::DateTime(x), Json::DateTime(y)) => x.cmp(y),
        (Json::Array(x), Json::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = json_cmp(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Json::Object(x), Json::Object(y)) => {
            for ((kp, p), (kq, q)) in x.iter().zip(y) {
                let o = kp
                    .as_bytes()
                    .cmp(kq.as_bytes())
                    .then_with(|| json_cmp(p, q));
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Json::Null, Json::Null) => Ordering::Equal,
        _ => crate::expr::compare(&number(a), &number(b), Collation::Binary)
            .unwrap_or(Ordering::Equal),
    }
}

pub fn json_equal(a: &Json, b: &Json) -> bool {
    json_cmp(a, b) == Ordering::Equal
}

/// An SQL comparison where at least one side is JSON; None when a side is SQL NULL.
pub fn compare_values(a: &Value, b: &Value) -> Result<Option<Ordering>> {
    if a.is_null() || b.is_null() {
        return Ok(None);
    }
    let side = |v: &Value| -> Result<Json> {
        match v {
            Value::Json(b) => decode(b),
            other => value_arg(other),
        }
    };
    Ok(Some(json_cmp(&side(a)?, &side(b)?)))
}

/// JSON_CONTAINS: whether `cand` is contained in `target`. A scalar is contained in an
/// equal scalar or in an array holding it; an array in an array holding each of its
/// elements; an object in an object with each of its keys holding a value that
/// contains the candidate's.
pub fn contains(target: &Json, cand: &Json) -> bool {
    match (target, cand) {
        (Json::Array(t), Json::Array(c)) => c.iter().all(|x| t.iter().any(|y| contains(y, x))),
        (Json::Array(t), c) => t.iter().any(|y| contains(y, c)),
        (Json::Object(_), Json::Object(c)) => c
            .iter()
            .all(|(k, x)| target.get(k).is_some_and(|y| contains(y, x))),
        (Json::Object(_), _) => false,
        (t, c) if t.is_scalar() && c.is_scalar() => json_equal(t, c),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::json::text::parse;

    fn j(s: &str) -> Json {
        parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn order_is_by_type_then_value() {
        assert_eq!(json_cmp(&j("1"), &j("1.0")), Ordering::Equal);
        assert_eq!(json_cmp(&j("2"), &j("\"1\"")), Ordering::Less);
        assert_eq!(json_cmp(&j("[1, 2]"), &j("[1, 3]")), Ordering::Less);
        assert_eq!(json_cmp(&j("[1]"), &j("[1, 0]")), Ordering::Less);
        assert_eq!(json_cmp(&j("true"), &j("[9]")), Ordering::Greater);
        assert_eq!(json_cmp(&j("null"), &j("0")), Ordering::Less);
        assert!(json_equal(
            &j(r#"{"a": 1, "b": 2}"#),
            &j(r#"{"b": 2, "a": 1.0}"#)
        ));
    }

    #[test]
    fn containment_as_json_contains() {
        let doc = j(r#"{"a": 1, "b": [1, 2, {"c": 3}]}"#);
        assert!(contains(&doc, &j(r#"{"a": 1}"#)));
        assert!(contains(&doc, &j(r#"{"b": [2, 1]}"#)));
        assert!(contains(&doc, &j(r#"{"b": 2}"#)));
        assert!(contains(&doc, &j(r#"{"b": [{"c": 3}]}"#)));
        assert!(!contains(&doc, &j("1")));
        assert!(!contains(&doc, &j(r#"{"a": 2}"#)));
        assert!(contains(&j("[1, [2, 3]]"), &j("[3]")));
        assert!(contains(&j("5"), &j("5.0")));
    }
}
