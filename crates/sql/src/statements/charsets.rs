//! What the character set and collation clauses of DDL name: `CREATE/ALTER DATABASE …
//! [DEFAULT] CHARACTER SET x COLLATE y`, the table options of CREATE/ALTER TABLE, a
//! column's `CHARACTER SET x`, and `ALTER TABLE … CONVERT TO CHARACTER SET x`.
//!
//! Strata keeps every string as utf8mb4 and compares with three collations
//! ([`Collation`]); the character sets MySQL dumps commonly name (`utf8`, `utf8mb3`,
//! `latin1`, `ascii`) are read as utf8mb4 with the nearest collation
//! ([`Collation::from_name`]). A character set names its default collation when no
//! COLLATE is given (MySQL's rule: `CHARACTER SET utf8mb4` alone is not the database's
//! collation but the character set's).

use strata_types::{Collation, Error, Result};

/// The character sets DDL accepts (1115 for others).
const CHARSETS: [&str; 6] = ["utf8mb4", "utf8", "utf8mb3", "latin1", "ascii", "binary"];

/// The character set a name stands for, as MySQL spells it (`utf8` is `utf8mb3`).
fn family(charset: &str) -> String {
    match charset.to_ascii_lowercase().as_str() {
        "utf8" => "utf8mb3".into(),
        other => other.into(),
    }
}

/// 1115 for a character set DDL does not accept.
pub(crate) fn check_charset(charset: &str) -> Result<()> {
    if CHARSETS.iter().any(|c| c.eq_ignore_ascii_case(charset)) {
        Ok(())
    } else {
        Err(Error::UnknownCharset(charset.to_string()))
    }
}

/// The default collation of a character set.
pub(crate) fn charset_default(charset: &str) -> Result<Collation> {
    check_charset(charset)?;
    Ok(if charset.eq_ignore_ascii_case("binary") {
        Collation::Binary
    } else {
        Collation::GeneralCi
    })
}

/// The collation of `CHARACTER SET charset COLLATE collation` (either may be absent;
/// None when both are): the collation when given (1273 unknown, 1253 when it is not of
/// the character set), else the character set's default (1115 unknown).
pub(crate) fn resolve(charset: Option<&str>, collation: Option<&str>) -> Result<Option<Collation>> {
    let Some(name) = collation else {
        return charset.map(charset_default).transpose();
    };
    let c = Collation::from_name(name).ok_or_else(|| Error::UnknownCollation(name.into()))?;
    if let Some(cs) = charset {
        check_charset(cs)?;
        let of = if name.eq_ignore_ascii_case("binary") {
            "binary".to_string()
        } else {
            family(name.split('_').next().unwrap_or(name))
        };
        if of != family(cs) {
            return Err(Error::CollationCharsetMismatch {
                collation: name.to_string(),
                charset: cs.to_string(),
            });
        }
    }
    Ok(Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_set_alone_names_its_default_collation() {
        assert_eq!(
            resolve(Some("utf8mb4"), None).unwrap(),
            Some(Collation::GeneralCi)
        );
        assert_eq!(
            resolve(Some("BINARY"), None).unwrap(),
            Some(Collation::Binary)
        );
        assert_eq!(resolve(None, None).unwrap(), None);
        assert_eq!(
            resolve(Some("utf8mb4"), Some("utf8mb4_bin")).unwrap(),
            Some(Collation::Utf8Bin)
        );
        assert_eq!(
            resolve(Some("utf8"), Some("utf8mb3_bin")).unwrap(),
            Some(Collation::Utf8Bin)
        );
        assert_eq!(
            resolve(None, Some("utf8mb4_bin")).unwrap(),
            Some(Collation::Utf8Bin)
        );
    }

    #[test]
    fn mysql_errors_for_unknown_and_mismatched_names() {
        assert_eq!(resolve(Some("koi8r"), None).unwrap_err().code(), 1115);
        assert_eq!(
            resolve(None, Some("utf8mb4_nope")).unwrap_err().code(),
            1273
        );
        assert_eq!(
            resolve(Some("utf8mb4"), Some("latin1_bin"))
                .unwrap_err()
                .code(),
            1253
        );
        assert_eq!(
            resolve(Some("binary"), Some("utf8mb4_bin"))
                .unwrap_err()
                .code(),
            1253
        );
        assert_eq!(
            resolve(Some("utf8mb4"), Some("utf8_bin"))
                .unwrap_err()
                .code(),
            1253
        );
    }
}
