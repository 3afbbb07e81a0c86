//! The diagnostics area of one statement (SHOW WARNINGS, `@@warning_count`): the
//! conditions it raised, as MySQL 8 keeps them — the first `max_error_count` (64) are
//! listed, and every one is counted, so a statement with 100 warnings says
//! `Warnings: 100` in its OK packet and `SHOW COUNT(*) WARNINGS` while SHOW WARNINGS
//! lists 64.

use strata_sql::{WarnLevel, Warning};

/// How many conditions are kept for SHOW WARNINGS (MySQL's default `max_error_count`).
pub const MAX_LISTED: usize = 64;

#[derive(Default, Debug)]
pub struct Diagnostics {
    /// The first [`MAX_LISTED`] conditions.
    list: Vec<Warning>,
    /// Every condition raised, listed or not.
    count: usize,
    /// Of them, the errors.
    errors: usize,
}

impl Diagnostics {
    /// Records one condition: counted always, listed while there is room.
    pub fn push(&mut self, w: Warning) {
        self.count += 1;
        if w.level == WarnLevel::Error {
            self.errors += 1;
        }
        if self.list.len() < MAX_LISTED {
            self.list.push(w);
        }
    }

    /// How many conditions the statement raised (`@@warning_count`).
    pub fn len(&self) -> usize {
        self.count
    }

    /// How many of them are errors (`@@error_count`).
    pub fn errors(&self) -> usize {
        self.errors
    }

    pub fn clear(&mut self) {
        *self = Diagnostics::default();
    }

    /// The listed conditions, in the order raised.
    pub fn listed(&self) -> &[Warning] {
        &self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warning(code: u16) -> Warning {
        Warning {
            level: WarnLevel::Warning,
            code,
            message: format!("w{code}"),
        }
    }

    #[test]
    fn every_condition_is_counted_and_the_first_64_listed() {
        let mut d = Diagnostics::default();
        for i in 0..100 {
            d.push(warning(1000 + i));
        }
        d.push(Warning {
            level: WarnLevel::Error,
            code: 1048,
            message: "e".into(),
        });
        assert_eq!(d.len(), 101);
        assert_eq!(d.errors(), 1);
        assert_eq!(d.listed().len(), MAX_LISTED);
        assert_eq!(d.listed()[0].code, 1000);
        assert_eq!(d.listed()[63].code, 1063);
        d.clear();
        assert_eq!(d.len(), 0);
        assert!(d.listed().is_empty());
    }
}
