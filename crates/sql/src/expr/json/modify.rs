//! The JSON functions that return a changed copy of a document: JSON_SET,
//! JSON_INSERT, JSON_REPLACE, JSON_REMOVE, JSON_ARRAY_APPEND, JSON_ARRAY_INSERT,
//! JSON_MERGE_PATCH (RFC 7396) and JSON_MERGE_PRESERVE. Paths here name one place: a
//! wildcard is 3149, and a value that is not an array counts as an array of itself
//! (`$[0]` is the value, `$[1]` the place after it), as in MySQL.

use super::path::{Idx, Leg, Path};
use super::{doc_arg, json_value, path_arg, value_arg, JsonFn};
use strata_types::json::{object_put, object_remove, Json};
use strata_types::{Error, Result, Value};

pub(super) fn call(f: JsonFn, v: &[Value]) -> Result<Value> {
    use JsonFn::*;
    match f {
        MergePatch | MergePreserve => return merge(f, v),
        _ => {}
    }
    let Some(mut doc) = doc_arg(&v[0], 1, f)? else {
        return Ok(Value::Null);
    };
    if f == Remove {
        for p in &v[1..] {
            let Some(p) = place(p)? else {
                return Ok(Value::Null);
            };
            if p.legs.is_empty() {
                return Err(Error::JsonVacuousPath);
            }
            remove(&mut doc, &p);
        }
        return Ok(json_value(&doc));
    }
    for pair in v[1..].chunks(2) {
        let [p, x] = pair else {
            return Err(Error::WrongParamCount(f.name().into()));
        };
        let Some(p) = place(p)? else {
            return Ok(Value::Null);
        };
        let x = value_arg(x)?;
        match f {
            ArrayAppend => {
                if let Some(t) = p.find_mut(&mut doc) {
                    match t {
                        Json::Array(a) => a.push(x),
                        other => {
                            let old = std::mem::replace(other, Json::Null);
                            *other = Json::Array(vec![old, x]);
                        }
                    }
                }
            }
            ArrayInsert => array_insert(&mut doc, &p, x)?,
            _ => put(&mut doc, &p, x, f),
        }
    }
    Ok(json_value(&doc))
}

/// A path naming one place; None for NULL.
fn place(v: &Value) -> Result<Option<Path>> {
    match path_arg(v)? {
        Some(p) if p.has_wildcard() => Err(Error::JsonPathWildcard),
        other => Ok(other),
    }
}

/// JSON_SET (replace or add), JSON_INSERT (add only), JSON_REPLACE (replace only).
fn put(doc: &mut Json, p: &Path, x: Json, f: JsonFn) {
    let (may_replace, may_add) = match f {
        JsonFn::Insert => (false, true),
        JsonFn::Replace => (true, false),
        _ => (true, true),
    };
    let Some((last, parent_legs)) = p.legs.split_last() else {
        if may_replace {
            *doc = x;
        }
        return;
    };
    let parent_path = Path {
        legs: parent_legs.to_vec(),
    };
    let Some(parent) = parent_path.find_mut(doc) else {
        return;
    };
    match (last, parent) {
        (Leg::Member(k), Json::Object(m)) => {
            let exists = m.iter().any(|(key, _)| key == k);
            if (exists && may_replace) || (!exists && may_add) {
                object_put(m, k.clone(), x);
            }
        }
        (Leg::Index(ix), Json::Array(a)) => match ix.resolve(a.len()) {
            Some(i) if i < a.len() => {
                if may_replace {
                    a[i] = x;
                }
            }
            _ => {
                if may_add {
                    a.push(x);
                }
            }
        },
        (Leg::Index(ix), other) if !matches!(other, Json::Array(_)) => {
            if ix.resolve(1) == Some(0) {
                if may_replace {
                    *other = x;
                }
            } else if may_add {
                let old = std::mem::replace(other, Json::Null);
                *other = Json::Array(vec![old, x]);
            }
        }
        _ => {}
    }
}

fn remove(doc: &mut Json, p: &Path) {
    let Some((last, parent_legs)) = p.legs.split_last() else {
        return;
    };
    let parent_path = Path {
        legs: parent_legs.to_vec(),
    };
    match (last, parent_path.find_mut(doc)) {
        (Leg::Member(k), Some(Json::Object(m))) => {
            object_remove(m, k);
        }
        (Leg::Index(ix), Some(Json::Array(a))) => {
            if let Some(i) = ix.resolve(a.len()).filter(|i| *i < a.len()) {
                a.remove(i);
            }
        }
        _ => {}
    }
}

/// JSON_ARRAY_INSERT: the path must end in an array position (3154 otherwise); the
/// value goes in before it, or at the end past it.
fn array_insert(doc: &mut Json, p: &Path, x: Json) -> Result<()> {
    let Some((Leg::Index(ix), parent_legs)) = p.legs.split_last() else {
        return Err(Error::JsonPathArrayCell);
    };
    let parent_path = Path {
        legs: parent_legs.to_vec(),
    };
    if let Some(Json::Array(a)) = parent_path.find_mut(doc) {
        let i = match ix {
            Idx::Start(n) => (*n as usize).min(a.len()),
            Idx::End(_) => ix.resolve(a.len()).unwrap_or(0),
        };
        a.insert(i, x);
    }
    Ok(())
}

fn merge(f: JsonFn, v: &[Value]) -> Result<Value> {
    let mut docs = Vec::with_capacity(v.len());
    for (i, x) in v.iter().enumerate() {
        match doc_arg(x, i + 1, f)? {
            None => return Ok(Value::Null),
            Some(d) => docs.push(d),
        }
    }
    let mut it = docs.into_iter();
    let Some(mut acc) = it.next() else {
        return Ok(Value::Null);
    };
    for d in it {
        acc = if f == JsonFn::MergePatch {
            merge_patch(acc, d)
        } else {
            merge_preserve(acc, d)
        };
    }
    Ok(json_value(&acc))
}

/// RFC 7396: an object patch changes the target's members (null removes one); any
/// other patch replaces the target.
fn merge_patch(target: Json, patch: Json) -> Json {
    let Json::Object(pm) = patch else {
        return patch;
    };
    let mut tm = match target {
        Json::Object(m) => m,
        _ => Vec::new(),
    };
    for (k, pv) in pm {
        if pv == Json::Null {
            object_remove(&mut tm, &k);
            continue;
        }
        let old = match tm.iter().position(|(x, _)| *x == k) {
            Some(i) => tm.remove(i).1,
            None => Json::Null,
        };
        object_put(&mut tm, k, merge_patch(old, pv));
    }
    Json::Object(tm)
}

/// JSON_MERGE_PRESERVE: arrays concatenate, objects merge (a key in both merges its
/// two values), anything else is wrapped as an array and concatenated.
fn merge_preserve(a: Json, b: Json) -> Json {
    match (a, b) {
        (Json::Object(mut am), Json::Object(bm)) => {
            for (k, bv) in bm {
                match am.iter().position(|(x, _)| *x == k) {
                    Some(i) => {
                        let av = std::mem::replace(&mut am[i].1, Json::Null);
                        am[i].1 = merge_preserve(av, bv);
                    }
                    None => object_put(&mut am, k, bv),
                }
            }
            Json::Object(am)
        }
        (a, b) => {
            let mut out = match a {
                Json::Array(x) => x,
                other => vec![other],
            };
            match b {
                Json::Array(y) => out.extend(y),
                other => out.push(other),
            }
            Json::Array(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::json::text::{parse, to_text};

    fn run(f: JsonFn, args: &[&str]) -> String {
        let vals: Vec<Value> = args.iter().map(|a| Value::str(a)).collect();
        to_text(
            &super::super::decode(match &call(f, &vals).unwrap() {
                Value::Json(b) => b,
                other => panic!("{other:?}"),
            })
            .unwrap(),
        )
    }

    #[test]
    fn set_insert_replace_as_mysql() {
        let d = r#"{"a": 1, "b": [2, 3]}"#;
        assert_eq!(
            run(JsonFn::Set, &[d, "$.a", "x"]),
            r#"{"a": "x", "b": [2, 3]}"#
        );
        assert_eq!(run(JsonFn::Insert, &[d, "$.a", "x"]), d);
        assert_eq!(
            run(JsonFn::Insert, &[d, "$.c", "x"]),
            r#"{"a": 1, "b": [2, 3], "c": "x"}"#
        );
        assert_eq!(run(JsonFn::Replace, &[d, "$.c", "x"]), d);
        assert_eq!(
            run(JsonFn::Set, &[d, "$.b[5]", "x"]),
            r#"{"a": 1, "b": [2, 3, "x"]}"#
        );
        assert_eq!(
            run(JsonFn::Set, &[d, "$.a[1]", "x"]),
            r#"{"a": [1, "x"], "b": [2, 3]}"#
        );
        assert_eq!(run(JsonFn::Remove, &[d, "$.b[0]"]), r#"{"a": 1, "b": [3]}"#);
        assert_eq!(
            run(JsonFn::ArrayAppend, &[d, "$.a", "y"]),
            r#"{"a": [1, "y"], "b": [2, 3]}"#
        );
        assert_eq!(
            run(JsonFn::ArrayInsert, &[d, "$.b[1]", "y"]),
            r#"{"a": 1, "b": [2, "y", 3]}"#
        );
    }

    #[test]
    fn merges() {
        assert_eq!(
            run(
                JsonFn::MergePatch,
                &[r#"{"a": 1, "b": 2}"#, r#"{"a": null, "c": {"d": 1}}"#]
            ),
            r#"{"b": 2, "c": {"d": 1}}"#
        );
        assert_eq!(
            run(
                JsonFn::MergePreserve,
                &[r#"{"a": 1}"#, r#"{"a": 2}"#, "[3]"]
            ),
            r#"[{"a": [1, 2]}, 3]"#
        );
        assert_eq!(run(JsonFn::MergePreserve, &["1", "true"]), "[1, true]");
        let _ = parse(b"1");
    }

    #[test]
    fn wildcards_and_the_root_are_refused() {
        let e = |f, a: &[&str]| {
            let vals: Vec<Value> = a.iter().map(|x| Value::str(x)).collect();
            call(f, &vals).unwrap_err().code()
        };
        assert_eq!(e(JsonFn::Set, &["[1]", "$[*]", "2"]), 3149);
        assert_eq!(e(JsonFn::Remove, &["[1]", "$"]), 3153);
        assert_eq!(e(JsonFn::ArrayInsert, &["[1]", "$.a", "2"]), 3154);
    }
}
