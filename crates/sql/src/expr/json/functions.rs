//! The JSON functions that read or build a document: JSON_EXTRACT (and `->`, `->>`),
//! JSON_UNQUOTE, JSON_QUOTE, JSON_OBJECT, JSON_ARRAY, JSON_CONTAINS,
//! JSON_CONTAINS_PATH, JSON_TYPE, JSON_VALID, JSON_KEYS, JSON_LENGTH, JSON_DEPTH,
//! JSON_SEARCH, JSON_PRETTY, MEMBER OF and CAST(x AS JSON).

use super::compare::{contains, json_equal};
use super::path::{path_text, Path, Step};
use super::{doc_arg, json_value, parse_text, path_arg, value_arg, JsonFn};
use crate::expr::EvalCtx;
use strata_types::json::{text, Json};
use strata_types::{Collation, Error, Result, Value};

pub(super) fn call(f: JsonFn, v: &[Value], _cx: &EvalCtx) -> Result<Value> {
    use JsonFn::*;
    let arg = |i: usize| v.get(i).unwrap_or(&Value::Null);
    Ok(match f {
        Extract => extract(v, f)?.map_or(Value::Null, |j| json_value(&j)),
        ExtractUnquote => match extract(v, f)? {
            None => Value::Null,
            Some(Json::String(s)) => Value::Bytes(s.into_bytes()),
            Some(j) => Value::Bytes(text::to_text(&j).into_bytes()),
        },
        Unquote => unquote(arg(0))?,
        Quote => match arg(0) {
            Value::Null => Value::Null,
            x => {
                let mut out = String::new();
                text::quote_into(
                    &mut out,
                    &String::from_utf8_lossy(&crate::expr::functions::text(x)),
                );
                Value::Bytes(out.into_bytes())
            }
        },
        Object => {
            let mut members = Vec::with_capacity(v.len() / 2);
            for pair in v.chunks(2) {
                let [k, x] = pair else {
                    return Err(Error::WrongParamCount(f.name().into()));
                };
                if k.is_null() {
                    return Err(Error::JsonNullKey);
                }
                let key = String::from_utf8_lossy(&crate::expr::functions::text(k)).into_owned();
                members.push((key, value_arg(x)?));
            }
            json_value(&Json::object(members))
        }
        Array => json_value(&Json::Array(
            v.iter().map(value_arg).collect::<Result<Vec<_>>>()?,
        )),
        Contains => {
            let (Some(target), Some(cand)) = (doc_arg(arg(0), 1, f)?, doc_arg(arg(1), 2, f)?)
            else {
                return Ok(Value::Null);
            };
            let target = match v.get(2) {
                None => Some(target),
                Some(p) => match one_path(p)? {
                    None => return Ok(Value::Null),
                    Some(p) => p.select(&target).first().map(|x| (*x).clone()),
                },
            };
            match target {
                None => Value::Null,
                Some(t) => Value::Int(contains(&t, &cand) as i64),
            }
        }
        ContainsPath => {
            let Some(doc) = doc_arg(arg(0), 1, f)? else {
                return Ok(Value::Null);
            };
            let Some(all) = one_or_all(arg(1), f)? else {
                return Ok(Value::Null);
            };
            let mut found = Vec::new();
            for p in &v[2..] {
                match path_arg(p)? {
                    None => return Ok(Value::Null),
                    Some(p) => found.push(!p.select(&doc).is_empty()),
                }
            }
            let hit = if all {
                found.iter().all(|x| *x)
            } else {
                found.iter().any(|x| *x)
            };
            Value::Int(hit as i64)
        }
        Type => match doc_arg(arg(0), 1, f)? {
            None => Value::Null,
            Some(j) => Value::str(j.type_name()),
        },
        Valid => match arg(0) {
            Value::Null => Value::Null,
            Value::Json(_) => Value::Int(1),
            Value::Bytes(b) => Value::Int(text::parse(b).is_ok() as i64),
            _ => {
                return Err(Error::InvalidJsonType {
                    arg: 1,
                    func: f.name().into(),
                })
            }
        },
        Keys | Length => {
            let Some(doc) = doc_arg(arg(0), 1, f)? else {
                return Ok(Value::Null);
            };
            let target = match v.get(1) {
                None => Some(&doc),
                Some(p) => match one_path(p)? {
                    None => return Ok(Value::Null),
                    Some(p) => p.select(&doc).first().copied(),
                },
            };
            match (f, target) {
                (_, None) => Value::Null,
                (Keys, Some(Json::Object(m))) => json_value(&Json::Array(
                    m.iter().map(|(k, _)| Json::String(k.clone())).collect(),
                )),
                (Keys, Some(_)) => Value::Null,
                (_, Some(Json::Object(m))) => Value::Int(m.len() as i64),
                (_, Some(Json::Array(a))) => Value::Int(a.len() as i64),
                (_, Some(_)) => Value::Int(1),
            }
        }
        Depth => match doc_arg(arg(0), 1, f)? {
            None => Value::Null,
            Some(j) => Value::Int(j.depth() as i64),
        },
        Search => search(v, f)?,
        Pretty => match doc_arg(arg(0), 1, f)? {
            None => Value::Null,
            Some(j) => Value::Bytes(text::to_pretty(&j).into_bytes()),
        },
        MemberOf => {
            let needle = match arg(0) {
                Value::Null => return Ok(Value::Null),
                x => value_arg(x)?,
            };
            let Some(hay) = doc_arg(arg(1), 2, f)? else {
                return Ok(Value::Null);
            };
            let hit = match &hay {
                Json::Array(a) => a.iter().any(|x| json_equal(x, &needle)),
                other => json_equal(other, &needle),
            };
            Value::Int(hit as i64)
        }
        Cast => match arg(0) {
            Value::Null => Value::Null,
            Value::Json(b) => Value::Json(b.clone()),
            Value::Bytes(b) => json_value(&parse_text(b, 1, f.name())?),
            x => json_value(&value_arg(x)?),
        },
        BoolAsJson => match arg(0).truth() {
            None => Value::Null,
            Some(b) => json_value(&Json::Bool(b)),
        },
        DateAsJson => match arg(0) {
            Value::Null => Value::Null,
            Value::DateTime(d) => json_value(&Json::Date(*d)),
            x => json_value(&value_arg(x)?),
        },
        Set | Insert | Replace | Remove | ArrayAppend | ArrayInsert | MergePatch
        | MergePreserve => unreachable!("modify.rs handles the changing functions"),
    })
}

/// JSON_EXTRACT: one value for one path without wildcards, otherwise an array of
/// every value reached (None when nothing is, or an argument is NULL).
fn extract(v: &[Value], f: JsonFn) -> Result<Option<Json>> {
    let Some(doc) = doc_arg(&v[0], 1, f)? else {
        return Ok(None);
    };
    let mut paths = Vec::with_capacity(v.len() - 1);
    for p in &v[1..] {
        match path_arg(p)? {
            None => return Ok(None),
            Some(p) => paths.push(p),
        }
    }
    if let [p] = paths.as_slice() {
        if !p.has_wildcard() {
            return Ok(p.select(&doc).first().map(|x| (*x).clone()));
        }
    }
    let mut all = Vec::new();
    for p in &paths {
        all.extend(p.select(&doc).into_iter().cloned());
    }
    Ok((!all.is_empty()).then_some(Json::Array(all)))
}

/// A path where one value is wanted: wildcards are 3149.
fn one_path(v: &Value) -> Result<Option<Path>> {
    match path_arg(v)? {
        Some(p) if p.has_wildcard() => Err(Error::JsonPathWildcard),
        other => Ok(other),
    }
}

/// The `'one'`/`'all'` argument: Some(true) for all; None for NULL; 3150 otherwise.
fn one_or_all(v: &Value, f: JsonFn) -> Result<Option<bool>> {
    if v.is_null() {
        return Ok(None);
    }
    match crate::expr::functions::text(v)
        .to_ascii_lowercase()
        .as_slice()
    {
        b"one" => Ok(Some(false)),
        b"all" => Ok(Some(true)),
        _ => Err(Error::JsonBadOneOrAll(f.name().into())),
    }
}

fn unquote(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Json(b) => match super::decode(b)? {
            Json::String(s) => Value::Bytes(s.into_bytes()),
            j => Value::Bytes(text::to_text(&j).into_bytes()),
        },
        Value::Bytes(b) if b.len() >= 2 && b[0] == b'"' && b[b.len() - 1] == b'"' => {
            match parse_text(b, 1, JsonFn::Unquote.name())? {
                Json::String(s) => Value::Bytes(s.into_bytes()),
                _ => Value::Bytes(b.clone()),
            }
        }
        other => Value::Bytes(crate::expr::functions::text(other)),
    })
}

/// JSON_SEARCH(doc, one|all, pattern [, escape [, path …]]): the paths of the string
/// scalars that match the LIKE pattern.
fn search(v: &[Value], f: JsonFn) -> Result<Value> {
    let Some(doc) = doc_arg(&v[0], 1, f)? else {
        return Ok(Value::Null);
    };
    let Some(all) = one_or_all(&v[1], f)? else {
        return Ok(Value::Null);
    };
    if v[2].is_null() {
        return Ok(Value::Null);
    }
    let pattern = crate::expr::functions::text(&v[2]);
    let escape = match v.get(3) {
        None | Some(Value::Null) => b'\\',
        Some(e) => {
            let t = crate::expr::functions::text(e);
            match t.as_slice() {
                [] => b'\\',
                [c] => *c,
                _ => return Err(Error::WrongArguments("ESCAPE".into())),
            }
        }
    };
    // With paths, only the values they reach are searched (their paths still start at
    // the document's root).
    let mut roots: Vec<*const Json> = Vec::new();
    let scoped = v.len() > 4;
    for p in v.iter().skip(4) {
        match path_arg(p)? {
            None => return Ok(Value::Null),
            Some(p) => roots.extend(p.select(&doc).into_iter().map(|x| x as *const Json)),
        }
    }
    let mut found: Vec<String> = Vec::new();
    let mut steps = Vec::new();
    let mut s = Searcher {
        pattern: &pattern,
        escape,
        roots: &roots,
        all,
        found: &mut found,
    };
    s.walk(&doc, &mut steps, !scoped);
    Ok(match found.len() {
        0 => Value::Null,
        1 => json_value(&Json::String(found.remove(0))),
        _ => json_value(&Json::Array(found.into_iter().map(Json::String).collect())),
    })
}

struct Searcher<'a> {
    pattern: &'a [u8],
    escape: u8,
    roots: &'a [*const Json],
    all: bool,
    found: &'a mut Vec<String>,
}

impl Searcher<'_> {
    fn walk(&mut self, j: &Json, steps: &mut Vec<Step>, inside: bool) {
        if !self.all && !self.found.is_empty() {
            return;
        }
        let inside = inside || self.roots.contains(&(j as *const Json));
        match j {
            Json::String(s)
                if inside
                    && crate::expr::like(
                        s.as_bytes(),
                        self.pattern,
                        self.escape,
                        Collation::GeneralCi,
                    ) =>
            {
                let p = path_text(steps);
                if !self.found.contains(&p) {
                    self.found.push(p);
                }
            }
            Json::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    steps.push(Step::Index(i));
                    self.walk(x, steps, inside);
                    steps.pop();
                }
            }
            Json::Object(m) => {
                for (k, x) in m {
                    steps.push(Step::Key(k.clone()));
                    self.walk(x, steps, inside);
                    steps.pop();
                }
            }
            _ => {}
        }
    }
}
