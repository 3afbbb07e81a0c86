//! The JSON functions of MySQL 8 (`JSON_EXTRACT`, `->`, `->>`, `JSON_SET`, …), `MEMBER
//! OF` and `CAST(x AS JSON)`. A JSON value travels as [`Value::Json`] (its binary form,
//! `strata_types::json`); these functions decode it into a [`Json`] tree, work on the
//! tree and encode the result. Files: `path.rs` (path expressions), `functions.rs`
//! (reading and building documents), `modify.rs` (the functions that change a
//! document), `compare.rs` (JSON comparison and containment).

pub mod compare;
mod functions;
mod modify;
pub mod path;

use crate::expr::{EvalCtx, Expr};
use strata_types::json::{binary, text, Json};
use strata_types::{Error, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonFn {
    Extract,
    /// `->>`: JSON_UNQUOTE(JSON_EXTRACT(…)).
    ExtractUnquote,
    Unquote,
    Quote,
    Object,
    Array,
    Contains,
    ContainsPath,
    Set,
    Insert,
    Replace,
    Remove,
    ArrayAppend,
    ArrayInsert,
    MergePatch,
    MergePreserve,
    Type,
    Valid,
    Keys,
    Length,
    Depth,
    Search,
    Pretty,
    /// `value MEMBER OF (array)`
    MemberOf,
    /// CAST(x AS JSON)
    Cast,
    /// Not callable by name: the binder wraps a DATE-typed argument of a JSON function
    /// in it, so the document holds a date (`"2024-01-02"`), not a date-time.
    DateAsJson,
    /// Not callable by name: the binder wraps a boolean argument (a comparison, a
    /// logical operator, `TRUE`/`FALSE`) in it, so the document holds `true`/`false`,
    /// not 1/0, as in MySQL.
    BoolAsJson,
}

/// What a JSON function returns, for its static type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returns {
    Json,
    Int,
    Text,
}

impl JsonFn {
    /// MySQL's name for the function in error messages.
    pub fn name(self) -> &'static str {
        use JsonFn::*;
        match self {
            Extract | ExtractUnquote => "json_extract",
            Unquote => "json_unquote",
            Quote => "json_quote",
            Object => "json_object",
            Array => "json_array",
            Contains => "json_contains",
            ContainsPath => "json_contains_path",
            Set => "json_set",
            Insert => "json_insert",
            Replace => "json_replace",
            Remove => "json_remove",
            ArrayAppend => "json_array_append",
            ArrayInsert => "json_array_insert",
            MergePatch => "json_merge_patch",
            MergePreserve => "json_merge_preserve",
            Type => "json_type",
            Valid => "json_valid",
            Keys => "json_keys",
            Length => "json_length",
            Depth => "json_depth",
            Search => "json_search",
            Pretty => "json_pretty",
            MemberOf => "member of",
            Cast | DateAsJson | BoolAsJson => "cast_as_json",
        }
    }

    pub fn returns(self) -> Returns {
        use JsonFn::*;
        match self {
            Contains | ContainsPath | Valid | Length | Depth | MemberOf => Returns::Int,
            Unquote | ExtractUnquote | Quote | Type | Pretty => Returns::Text,
            _ => Returns::Json,
        }
    }

    /// Whether `n` arguments fit the function (the binder checks counts and pairs:
    /// 1582 otherwise).
    pub fn takes(self, n: usize) -> bool {
        use JsonFn::*;
        match self {
            Object => n.is_multiple_of(2),
            Set | Insert | Replace | ArrayAppend | ArrayInsert => n >= 3 && !n.is_multiple_of(2),
            _ => true,
        }
    }
}

/// (function, minimum args, maximum args) for a JSON function name.
pub fn lookup(lname: &str) -> Option<(JsonFn, usize, usize)> {
    use JsonFn::*;
    const MANY: usize = usize::MAX;
    Some(match lname {
        "json_extract" => (Extract, 2, MANY),
        "json_unquote" => (Unquote, 1, 1),
        "json_quote" => (Quote, 1, 1),
        "json_object" => (Object, 0, MANY),
        "json_array" => (Array, 0, MANY),
        "json_contains" => (Contains, 2, 3),
        "json_contains_path" => (ContainsPath, 3, MANY),
        "json_set" => (Set, 3, MANY),
        "json_insert" => (Insert, 3, MANY),
        "json_replace" => (Replace, 3, MANY),
        "json_remove" => (Remove, 2, MANY),
        "json_array_append" => (ArrayAppend, 3, MANY),
        "json_array_insert" => (ArrayInsert, 3, MANY),
        "json_merge_patch" => (MergePatch, 2, MANY),
        "json_merge_preserve" => (MergePreserve, 2, MANY),
        "json_type" => (Type, 1, 1),
        "json_valid" => (Valid, 1, 1),
        "json_keys" => (Keys, 1, 2),
        "json_length" => (Length, 1, 2),
        "json_depth" => (Depth, 1, 1),
        "json_search" => (Search, 3, MANY),
        "json_pretty" => (Pretty, 1, 1),
        _ => return None,
    })
}

pub fn call(f: JsonFn, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let mut vals = Vec::with_capacity(args.len());
    for a in args {
        vals.push(a.eval(row, cx)?);
    }
    use JsonFn::*;
    match f {
        Set | Insert | Replace | Remove | ArrayAppend | ArrayInsert | MergePatch
        | MergePreserve => modify::call(f, &vals),
        _ => functions::call(f, &vals, cx),
    }
}

/// A document argument (1-based `arg`): a JSON value as it is, a string parsed as JSON
/// text (3141 when it is not), NULL as None; anything else is 3146.
pub fn doc_arg(v: &Value, arg: usize, f: JsonFn) -> Result<Option<Json>> {
    match v {
        Value::Null => Ok(None),
        Value::Json(b) => decode(b).map(Some),
        Value::Bytes(b) => parse_text(b, arg, f.name()).map(Some),
        _ => Err(Error::InvalidJsonType {
            arg,
            func: f.name().into(),
        }),
    }
}

/// Parses JSON text given as argument `arg` of `func`.
pub fn parse_text(b: &[u8], arg: usize, func: &str) -> Result<Json> {
    text::parse(b).map_err(|e| {
        if e.too_deep {
            Error::JsonTooDeep
        } else {
            Error::InvalidJsonTextInParam {
                arg,
                func: func.into(),
                reason: e.message.into(),
                pos: e.pos,
            }
        }
    })
}

/// A stored document's tree; corrupt bytes are reported, not guessed at.
pub fn decode(b: &[u8]) -> Result<Json> {
    binary::decode(b).ok_or_else(|| Error::corrupt("JSON value", "malformed binary JSON"))
}

/// An SQL value as a JSON value, where a function takes any value (JSON_ARRAY's
/// elements, JSON_SET's new values): a string becomes a JSON string, not parsed.
pub fn value_arg(v: &Value) -> Result<Json> {
    Ok(match v {
        Value::Null => Json::Null,
        Value::Int(i) => Json::Int(*i),
        Value::UInt(u) => match i64::try_from(*u) {
            Ok(i) => Json::Int(i),
            Err(_) => Json::UInt(*u),
        },
        Value::Double(d) => Json::Double(*d),
        // JSON's binary form holds DECIMALs of 38 digits (docs/format/json.md).
        Value::Decimal(d) if d.is_wide() => {
            return Err(Error::NotSupported(
                "a DECIMAL of more than 38 digits inside JSON".into(),
            ))
        }
        Value::Decimal(d) => Json::Decimal(*d),
        Value::Bytes(b) | Value::Member { text: b, .. } => {
            Json::String(String::from_utf8_lossy(b).into_owned())
        }
        // A DATE-typed argument reaches here wrapped in `DateAsJson` by the binder.
        Value::DateTime(d) => Json::DateTime(*d),
        Value::Json(b) => decode(b)?,
        // MySQL's JSON form of a bit value is an opaque base64 value.
        Value::Bits(_) => return Err(Error::NotSupported("a BIT value inside JSON".into())),
    })
}

/// A path argument; None for NULL.
pub fn path_arg(v: &Value) -> Result<Option<path::Path>> {
    match v {
        Value::Null => Ok(None),
        other => path::Path::parse(&crate::expr::functions::text(other)).map(Some),
    }
}

/// A tree as a JSON value.
pub fn json_value(j: &Json) -> Value {
    Value::Json(binary::encode(j))
}
