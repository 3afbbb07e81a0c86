//! Storing a value into an ENUM or SET column (`strata_types::member` holds the lookup):
//! a string names a member (or members, comma-separated, for SET), a number is the
//! member's position or the SET bitmask. A value that names nothing is 1265 "Data
//! truncated" in strict mode; otherwise MySQL stores the error value '' (ENUM) or the
//! members it did recognise (SET), with that warning.

use strata_types::member::{self, full_mask};
use strata_types::schema::ColumnDef;
use strata_types::{DataType, Error, Result, Value};

pub fn member_column_value(v: &Value, col: &ColumnDef, row: u64, strict: bool) -> Result<Value> {
    let truncated = || Error::DataTruncated {
        column: col.name.clone(),
        row,
    };
    let number = match v {
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_) => {
            let n = v.to_f64().unwrap_or(-1.0).round();
            Some(
                (0.0..1.844_674_407_370_955_2e19)
                    .contains(&n)
                    .then_some(n as u64),
            )
        }
        _ => None,
    };
    let text = || match v {
        Value::Bytes(b) | Value::Member { text: b, .. } => b.clone(),
        other => {
            let mut b = Vec::new();
            other.write_text(&mut b);
            b
        }
    };
    match col.data_type {
        DataType::Enum(_) => {
            // Another ENUM's error value stays the error value (ALTER TABLE copying
            // rows), without a complaint.
            if let Value::Member { number: 0, text } = v {
                if text.is_empty() {
                    return Ok(member::enum_value(&col.members, 0));
                }
            }
            let found = match number {
                Some(n) => n.filter(|n| (1..=col.members.len() as u64).contains(n)),
                None => member::enum_number_of_text(&col.members, &text(), col.collation),
            };
            match found {
                Some(n) => Ok(member::enum_value(&col.members, n)),
                None if strict => Err(truncated()),
                None => Ok(member::enum_value(&col.members, 0)),
            }
        }
        DataType::Set(_) => {
            let mask = match number {
                Some(Some(n)) if n <= full_mask(col.members.len()) => Ok(n),
                Some(_) => Err(0),
                None => member::set_mask_of_text(&col.members, &text(), col.collation),
            };
            match mask {
                Ok(m) => Ok(member::set_value(&col.members, m)),
                Err(_) if strict => Err(truncated()),
                Err(m) => Ok(member::set_value(&col.members, m)),
            }
        }
        _ => Err(Error::Internal(format!(
            "{} is not an ENUM or SET column",
            col.name
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::Collation;

    fn col(ty: DataType, members: &[&str]) -> ColumnDef {
        ColumnDef {
            name: "c".into(),
            data_type: ty,
            nullable: true,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: Collation::GeneralCi,
            members: members.iter().map(|s| s.to_string()).collect(),
            generated: None,
            comment: String::new(),
            real_unsigned: false,
            invisible: Default::default(),
        }
    }

    #[test]
    fn enum_from_text_numbers_and_errors() {
        let c = col(DataType::Enum(3), &["x", "y", "z"]);
        let got = |v: Value, strict| member_column_value(&v, &c, 1, strict);
        assert_eq!(got(Value::str("Y"), true).unwrap().to_text(), "y");
        assert_eq!(got(Value::Int(3), true).unwrap().to_text(), "z");
        assert_eq!(got(Value::str("2"), true).unwrap().to_text(), "y");
        assert!(matches!(
            got(Value::Int(0), true),
            Err(Error::DataTruncated { .. })
        ));
        assert!(matches!(
            got(Value::str("w"), true),
            Err(Error::DataTruncated { .. })
        ));
        let zero = got(Value::str("w"), false).unwrap();
        assert_eq!(zero, member::enum_value(&c.members, 0));
        assert_eq!(zero.to_i64(), Some(0));
    }

    #[test]
    fn set_from_lists_and_masks() {
        let c = col(DataType::Set(3), &["a", "b", "c"]);
        let got = |v: Value, strict| member_column_value(&v, &c, 1, strict);
        assert_eq!(got(Value::str("c,a"), true).unwrap().to_text(), "a,c");
        assert_eq!(got(Value::Int(6), true).unwrap().to_text(), "b,c");
        assert!(got(Value::Int(8), true).is_err());
        assert_eq!(got(Value::str("a,q"), false).unwrap().to_text(), "a");
        assert_eq!(got(Value::str(""), true).unwrap().to_i64(), Some(0));
    }
}
