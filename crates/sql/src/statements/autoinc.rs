//! The AUTO_INCREMENT values one INSERT statement hands out, as MySQL's handler layer
//! does (`handler::update_auto_increment` / `restore_auto_increment`) over an engine that
//! reserves values in intervals (InnoDB, `Table::reserve_auto_increment`): a multi-row
//! `INSERT … VALUES` reserves as many values as it has rows, `INSERT … SELECT` reserves
//! 1, then 2, 4, … up to 65,535 at a time; the values reserved and not used are lost
//! (the gaps MySQL leaves after such statements). Once a statement reserved, a later
//! reservation is for the rows it still expects (InnoDB's `trx->n_autoinc_rows`, counted
//! down per row written), not the doubling. A row INSERT IGNORE skips hands its
//! value back to the next row of the same statement, though not to the table's counter.
//! An engine that reserves nothing (MyISAM-style: the largest stored value plus one)
//! keeps generating each value itself. Used by `dml::insert_rows`.

/// MySQL's AUTO_INC_DEFAULT_NB_MAX_BITS / AUTO_INC_DEFAULT_NB_MAX: the doubling of the
/// reservations of a statement that does not know its row count stops there.
const MAX_BITS: u32 = 16;
const MAX_RESERVED: u64 = 65_535;

/// One statement's state (the handler's `next_insert_id` and its current interval).
#[derive(Debug)]
pub struct AutoIncrement {
    /// The rows the statement expects (`INSERT … VALUES`), 0 when unknown (`… SELECT`).
    estimate: u64,
    /// The next value to hand out; 0 before the first one.
    next: u64,
    /// The end (exclusive) of the interval reserved last.
    end: u64,
    /// How many intervals were reserved so far.
    intervals: u32,
    /// InnoDB's `n_autoinc_rows`: the rows the last reservation was for, less the rows
    /// written since (0: the next reservation takes the handler's count).
    rows_left: u64,
}

impl AutoIncrement {
    pub fn new(estimate: u64) -> AutoIncrement {
        AutoIncrement {
            estimate,
            next: 0,
            end: 0,
            intervals: 0,
            rows_left: 0,
        }
    }

    /// What [`AutoIncrement::restore`] needs: the state before a row.
    pub fn saved(&self) -> u64 {
        self.next
    }

    /// The value for a row that asks for one; `reserve(n, at_least)` is the engine's
    /// reservation. None: the engine reserves nothing and generates the value itself.
    pub fn generate(&mut self, reserve: impl FnOnce(u64, u64) -> Option<u64>) -> Option<u64> {
        if self.next == 0 || self.next >= self.end {
            let desired = if self.intervals == 0 {
                self.estimate.max(1)
            } else if self.intervals <= MAX_BITS {
                (1u64 << self.intervals).min(MAX_RESERVED)
            } else {
                MAX_RESERVED
            };
            if self.rows_left == 0 {
                self.rows_left = desired;
            }
            let want = self.rows_left;
            let first = reserve(want, self.next)?;
            self.next = first;
            self.end = first.saturating_add(want);
            self.intervals += 1;
        }
        let v = self.next;
        self.next = v.saturating_add(1);
        Some(v)
    }

    /// A row went to the engine (inserted or refused there).
    pub fn written(&mut self) {
        self.rows_left = self.rows_left.saturating_sub(1);
    }

    /// A row came with its own value: later rows continue after it when it is past
    /// what the statement handed out (`INSERT … VALUES (NULL), (50), (NULL)` gives the
    /// last row 51), once the statement generated a value.
    pub fn after_explicit(&mut self, v: u64) {
        if self.next != 0 && v >= self.next {
            self.next = v.saturating_add(1);
        }
    }

    /// A row was skipped (INSERT IGNORE): the next row gets the value this one had.
    /// `saved` is [`AutoIncrement::saved`] before the row, `generated` its value.
    pub fn restore(&mut self, saved: u64, generated: Option<u64>) {
        self.next = if saved > 0 {
            saved
        } else {
            generated.unwrap_or(0)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter reserving like btree's.
    struct Counter(u64);
    impl Counter {
        fn reserve(&mut self, n: u64, at_least: u64) -> Option<u64> {
            let first = self.0.max(at_least);
            self.0 = self.0.max(first + n);
            Some(first)
        }
    }

    #[test]
    fn values_statement_reserves_its_rows() {
        let mut c = Counter(3);
        let mut a = AutoIncrement::new(2);
        // Row 1 gets 3 and is ignored; row 2 gets 3 again; the counter passed both.
        let s = a.saved();
        let v = a.generate(|n, l| c.reserve(n, l));
        assert_eq!(v, Some(3));
        a.written();
        a.restore(s, v);
        assert_eq!(a.generate(|n, l| c.reserve(n, l)), Some(3));
        assert_eq!(c.0, 5);
    }

    #[test]
    fn select_statement_doubles() {
        let mut c = Counter(1);
        let mut a = AutoIncrement::new(0);
        let got: Vec<_> = (0..5)
            .map(|_| {
                let v = a.generate(|n, l| c.reserve(n, l)).unwrap();
                a.written();
                v
            })
            .collect();
        assert_eq!(got, [1, 2, 3, 4, 5]);
        // 1 + 2 + 4 reserved: the next statement starts at 8, as InnoDB's.
        assert_eq!(c.0, 8);
    }

    #[test]
    fn explicit_value_moves_next() {
        // INSERT … VALUES (NULL), (50), (NULL): 3 reserved, then 1 for the last row.
        let mut c = Counter(10);
        let mut a = AutoIncrement::new(3);
        assert_eq!(a.generate(|n, l| c.reserve(n, l)), Some(10));
        a.written();
        a.after_explicit(50);
        a.written();
        c.0 = c.0.max(51); // the engine moved its counter past the inserted 50
        assert_eq!(a.generate(|n, l| c.reserve(n, l)), Some(51));
        assert_eq!(c.0, 52);
    }

    #[test]
    fn explicit_before_any_generated_value_changes_nothing() {
        // INSERT IGNORE … VALUES (60, dup), (NULL, …): the first row reserved nothing,
        // so the second reserves for the whole statement's 2 rows.
        let mut c = Counter(56);
        let mut a = AutoIncrement::new(2);
        let s = a.saved();
        a.after_explicit(60);
        a.written();
        a.restore(s, None);
        assert_eq!(a.saved(), 0);
        assert_eq!(a.generate(|n, l| c.reserve(n, l)), Some(56));
        assert_eq!(c.0, 58);
    }

    #[test]
    fn engine_without_reservation() {
        let mut a = AutoIncrement::new(2);
        assert_eq!(a.generate(|_, _| None), None);
    }
}
