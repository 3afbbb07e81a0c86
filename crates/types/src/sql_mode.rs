//! `sql_mode`: the set of MySQL 8's SQL modes as bits, read from the text or number a
//! client sets and printed back in MySQL's order.
//!
//! The bits are MySQL's own (`SET sql_mode = 4` is `ANSI_QUOTES`, as in MySQL), so a
//! number a client computed from MySQL's headers means the same here. Setting `ANSI` or
//! `TRADITIONAL` adds the modes they stand for, as MySQL does, and `@@sql_mode` then
//! lists them all. Modes MySQL 8.0 removed (`POSTGRESQL`, `NO_KEY_OPTIONS`, …) are not
//! values of this set: setting them is error 1231 as in MySQL 8 — except
//! `NO_AUTO_CREATE_USER`, which MariaDB's and MySQL 5.7's dumps and routines carry, and
//! whose meaning (GRANT never creates a user) is what this server always does.

use crate::{Error, Result};

/// A set of SQL modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SqlMode(pub u64);

/// Every mode this server knows: its name and MySQL's bit, in MySQL's order (the order
/// `@@sql_mode` prints them in).
const MODES: &[(&str, u64)] = &[
    ("REAL_AS_FLOAT", SqlMode::REAL_AS_FLOAT),
    ("PIPES_AS_CONCAT", SqlMode::PIPES_AS_CONCAT),
    ("ANSI_QUOTES", SqlMode::ANSI_QUOTES),
    ("IGNORE_SPACE", SqlMode::IGNORE_SPACE),
    ("ONLY_FULL_GROUP_BY", SqlMode::ONLY_FULL_GROUP_BY),
    ("NO_UNSIGNED_SUBTRACTION", SqlMode::NO_UNSIGNED_SUBTRACTION),
    ("NO_DIR_IN_CREATE", SqlMode::NO_DIR_IN_CREATE),
    ("ANSI", SqlMode::ANSI),
    ("NO_AUTO_VALUE_ON_ZERO", SqlMode::NO_AUTO_VALUE_ON_ZERO),
    ("NO_BACKSLASH_ESCAPES", SqlMode::NO_BACKSLASH_ESCAPES),
    ("STRICT_TRANS_TABLES", SqlMode::STRICT_TRANS_TABLES),
    ("STRICT_ALL_TABLES", SqlMode::STRICT_ALL_TABLES),
    ("NO_ZERO_IN_DATE", SqlMode::NO_ZERO_IN_DATE),
    ("NO_ZERO_DATE", SqlMode::NO_ZERO_DATE),
    ("ALLOW_INVALID_DATES", SqlMode::ALLOW_INVALID_DATES),
    (
        "ERROR_FOR_DIVISION_BY_ZERO",
        SqlMode::ERROR_FOR_DIVISION_BY_ZERO,
    ),
    ("TRADITIONAL", SqlMode::TRADITIONAL),
    ("NO_AUTO_CREATE_USER", SqlMode::NO_AUTO_CREATE_USER),
    ("HIGH_NOT_PRECEDENCE", SqlMode::HIGH_NOT_PRECEDENCE),
    ("NO_ENGINE_SUBSTITUTION", SqlMode::NO_ENGINE_SUBSTITUTION),
    ("PAD_CHAR_TO_FULL_LENGTH", SqlMode::PAD_CHAR_TO_FULL_LENGTH),
    (
        "TIME_TRUNCATE_FRACTIONAL",
        SqlMode::TIME_TRUNCATE_FRACTIONAL,
    ),
];

impl SqlMode {
    pub const REAL_AS_FLOAT: u64 = 1;
    pub const PIPES_AS_CONCAT: u64 = 1 << 1;
    pub const ANSI_QUOTES: u64 = 1 << 2;
    pub const IGNORE_SPACE: u64 = 1 << 3;
    pub const ONLY_FULL_GROUP_BY: u64 = 1 << 5;
    pub const NO_UNSIGNED_SUBTRACTION: u64 = 1 << 6;
    pub const NO_DIR_IN_CREATE: u64 = 1 << 7;
    pub const ANSI: u64 = 1 << 18;
    pub const NO_AUTO_VALUE_ON_ZERO: u64 = 1 << 19;
    pub const NO_BACKSLASH_ESCAPES: u64 = 1 << 20;
    pub const STRICT_TRANS_TABLES: u64 = 1 << 21;
    pub const STRICT_ALL_TABLES: u64 = 1 << 22;
    pub const NO_ZERO_IN_DATE: u64 = 1 << 23;
    pub const NO_ZERO_DATE: u64 = 1 << 24;
    pub const ALLOW_INVALID_DATES: u64 = 1 << 25;
    pub const ERROR_FOR_DIVISION_BY_ZERO: u64 = 1 << 26;
    pub const TRADITIONAL: u64 = 1 << 27;
    pub const NO_AUTO_CREATE_USER: u64 = 1 << 28;
    pub const HIGH_NOT_PRECEDENCE: u64 = 1 << 29;
    pub const NO_ENGINE_SUBSTITUTION: u64 = 1 << 30;
    pub const PAD_CHAR_TO_FULL_LENGTH: u64 = 1 << 31;
    pub const TIME_TRUNCATE_FRACTIONAL: u64 = 1 << 32;

    /// What `ANSI` stands for in MySQL 8.
    const ANSI_MEMBERS: u64 = Self::REAL_AS_FLOAT
        | Self::PIPES_AS_CONCAT
        | Self::ANSI_QUOTES
        | Self::IGNORE_SPACE
        | Self::ONLY_FULL_GROUP_BY;
    /// What `TRADITIONAL` stands for in MySQL 8.
    const TRADITIONAL_MEMBERS: u64 = Self::STRICT_TRANS_TABLES
        | Self::STRICT_ALL_TABLES
        | Self::NO_ZERO_IN_DATE
        | Self::NO_ZERO_DATE
        | Self::ERROR_FOR_DIVISION_BY_ZERO
        | Self::NO_ENGINE_SUBSTITUTION;

    /// Modes a client may set that this server does not carry out: setting one is
    /// error 1235 naming it, never a setting accepted and ignored.
    const REFUSED: &'static [(u64, &'static str)] = &[
        (Self::HIGH_NOT_PRECEDENCE, "sql_mode HIGH_NOT_PRECEDENCE"),
        (
            Self::PAD_CHAR_TO_FULL_LENGTH,
            "sql_mode PAD_CHAR_TO_FULL_LENGTH",
        ),
        (Self::ALLOW_INVALID_DATES, "sql_mode ALLOW_INVALID_DATES"),
        (
            Self::NO_UNSIGNED_SUBTRACTION,
            "sql_mode NO_UNSIGNED_SUBTRACTION",
        ),
    ];

    pub fn has(self, bit: u64) -> bool {
        self.0 & bit != 0
    }

    /// STRICT_TRANS_TABLES or STRICT_ALL_TABLES (TRADITIONAL includes both).
    pub fn strict(self) -> bool {
        self.has(Self::STRICT_TRANS_TABLES | Self::STRICT_ALL_TABLES)
    }

    /// The modes a `SET sql_mode = …` value names: a comma-separated list of names
    /// (any case; an empty list is no mode) or MySQL's
    /// number. Error 1231 for a name or bit this server does not know; 1235 for a
    /// mode it knows but does not carry out.
    pub fn parse(value: &str) -> Result<SqlMode> {
        let bad = || Error::WrongValueForVariable {
            name: "sql_mode".into(),
            value: value.into(),
        };
        let trimmed = value.trim();
        let mut bits = 0u64;
        if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
            bits = trimmed.parse::<u64>().map_err(|_| bad())?;
            let known = MODES.iter().fold(0, |a, m| a | m.1);
            if bits & !known != 0 {
                return Err(bad());
            }
        } else {
            // Empty items are skipped (`CONCAT(@@sql_mode, ',STRICT_ALL_TABLES')` on an
            // empty mode); spaces around a name are not, as in MySQL and MariaDB.
            for word in value.split(',').filter(|w| !w.is_empty()) {
                let (_, bit) = MODES
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(word))
                    .ok_or_else(bad)?;
                bits |= bit;
            }
        }
        if bits & Self::ANSI != 0 {
            bits |= Self::ANSI_MEMBERS;
        }
        if bits & Self::TRADITIONAL != 0 {
            bits |= Self::TRADITIONAL_MEMBERS;
        }
        for (bit, what) in Self::REFUSED {
            if bits & bit != 0 {
                return Err(Error::NotSupported((*what).into()));
            }
        }
        Ok(SqlMode(bits))
    }

    /// The modes' names in MySQL's order, comma-separated (`@@sql_mode`).
    pub fn text(self) -> String {
        MODES
            .iter()
            .filter(|(_, bit)| self.0 & bit != 0)
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_numbers_and_combinations() {
        assert_eq!(SqlMode::parse("").unwrap(), SqlMode(0));
        assert_eq!(SqlMode::parse("4").unwrap().text(), "ANSI_QUOTES");
        assert_eq!(
            SqlMode::parse(",strict_trans_tables,no_zero_date")
                .unwrap()
                .text(),
            "STRICT_TRANS_TABLES,NO_ZERO_DATE"
        );
        assert_eq!(
            SqlMode::parse("traditional").unwrap().text(),
            "STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
             ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_ENGINE_SUBSTITUTION"
        );
        assert_eq!(
            SqlMode::parse("ANSI").unwrap().text(),
            "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI"
        );
        assert!(SqlMode::parse("TRADITIONAL").unwrap().strict());
        assert!(!SqlMode::parse("ANSI").unwrap().strict());
    }

    #[test]
    fn unknown_and_refused_modes() {
        // Removed in MySQL 8.0: 1231 as there.
        assert_eq!(SqlMode::parse("POSTGRESQL").unwrap_err().code(), 1231);
        assert_eq!(
            SqlMode::parse("EMPTY_STRING_IS_NULL").unwrap_err().code(),
            1231
        );
        assert_eq!(SqlMode::parse("16").unwrap_err().code(), 1231);
        assert_eq!(SqlMode::parse(" ANSI_QUOTES").unwrap_err().code(), 1231);
        // Known but not carried out: refused by name.
        assert_eq!(
            SqlMode::parse("HIGH_NOT_PRECEDENCE").unwrap_err().code(),
            1235
        );
        // Kept for dumps from MariaDB and MySQL 5.7.
        assert!(SqlMode::parse("NO_AUTO_CREATE_USER").is_ok());
    }
}
