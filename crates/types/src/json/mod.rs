//! JSON documents: the in-memory tree ([`Json`]) that SQL functions work on, its text
//! form (`text.rs`: MySQL's parser and printer) and the compact binary form a JSON
//! column stores (`binary.rs`, docs/format/json.md). [`crate::Value::Json`] carries the
//! binary bytes between layers; engines store them without reading them.
//!
//! Objects are kept as MySQL 8 normalises them: keys unique (the last duplicate wins)
//! and ordered by byte length, then bytes.

pub mod binary;
pub mod text;

use crate::datetime::DateTime;
use crate::decimal::Decimal;
use std::cmp::Ordering;

/// MySQL's limit on nesting (error 3157 past it).
pub const MAX_DEPTH: usize = 100;

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Double(f64),
    Decimal(Decimal),
    String(String),
    /// A DATE value (CAST of a date to JSON): printed as a quoted date.
    Date(DateTime),
    /// A DATETIME or TIMESTAMP value: printed quoted with six fractional digits.
    DateTime(DateTime),
    Array(Vec<Json>),
    /// Members in key order (length, then bytes), keys unique.
    Object(Vec<(String, Json)>),
}

/// MySQL's JSON key order: shorter keys first, then bytewise.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

impl Json {
    /// An object from members in any order: duplicates keep the last, keys sorted.
    pub fn object(members: Vec<(String, Json)>) -> Json {
        let mut out: Vec<(String, Json)> = Vec::with_capacity(members.len());
        for (k, v) in members {
            object_put(&mut out, k, v);
        }
        Json::Object(out)
    }

    /// MySQL's JSON_TYPE name.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "NULL",
            Json::Bool(_) => "BOOLEAN",
            Json::Int(_) => "INTEGER",
            Json::UInt(_) => "UNSIGNED INTEGER",
            Json::Double(_) => "DOUBLE",
            Json::Decimal(_) => "DECIMAL",
            Json::String(_) => "STRING",
            Json::Date(_) => "DATE",
            Json::DateTime(_) => "DATETIME",
            Json::Array(_) => "ARRAY",
            Json::Object(_) => "OBJECT",
        }
    }

    /// JSON_DEPTH: 1 for scalars and empty containers.
    pub fn depth(&self) -> usize {
        match self {
            Json::Array(a) => 1 + a.iter().map(Json::depth).max().unwrap_or(0),
            Json::Object(o) => 1 + o.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            _ => 1,
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(m) => m
                .binary_search_by(|(k, _)| key_order(k, key))
                .ok()
                .map(|i| &m[i].1),
            _ => None,
        }
    }

    pub fn is_scalar(&self) -> bool {
        !matches!(self, Json::Array(_) | Json::Object(_))
    }
}

/// Sets `key` in sorted members, replacing an existing value.
pub fn object_put(members: &mut Vec<(String, Json)>, key: String, value: Json) {
    match members.binary_search_by(|(k, _)| key_order(k, &key)) {
        Ok(i) => members[i].1 = value,
        Err(i) => members.insert(i, (key, value)),
    }
}

/// Removes `key` from sorted members; whether it was there.
pub fn object_remove(members: &mut Vec<(String, Json)>, key: &str) -> bool {
    match members.binary_search_by(|(k, _)| key_order(k, key)) {
        Ok(i) => {
            members.remove(i);
            true
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_the_last_duplicate_and_mysql_key_order() {
        let o = Json::object(vec![
            ("bb".into(), Json::Int(1)),
            ("a".into(), Json::Int(2)),
            ("c".into(), Json::Int(3)),
            ("a".into(), Json::Int(4)),
        ]);
        let Json::Object(m) = &o else { panic!() };
        let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "c", "bb"]);
        assert_eq!(o.get("a"), Some(&Json::Int(4)));
        assert_eq!(o.depth(), 2);
    }
}
