//! MySQL's random number generator (`my_rnd`), so that `RAND(n)` gives MySQL's numbers
//! (MariaDB uses the same one): two seeds modulo 2^30 - 1, each draw mixing them.
//! The session keeps one generator for `RAND()`; a statement keeps one per `RAND(n)`
//! call with a constant seed, seeded by the call's first evaluation, so that
//! `SELECT RAND(1) FROM t` continues one sequence over the rows as MySQL does.

const MAX_VALUE: u64 = 0x3FFF_FFFF;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RandState {
    seed1: u64,
    seed2: u64,
}

impl RandState {
    /// MySQL's `randominit`.
    pub fn from_seeds(seed1: u64, seed2: u64) -> RandState {
        RandState {
            seed1: seed1 % MAX_VALUE,
            seed2: seed2 % MAX_VALUE,
        }
    }

    /// The generator `RAND(n)` starts from: MySQL's `seed_random` on the low 32 bits
    /// of n, with 32-bit wrapping arithmetic.
    pub fn for_seed(n: i64) -> RandState {
        let tmp = n as u32;
        RandState::from_seeds(
            tmp.wrapping_mul(0x10001).wrapping_add(55_555_555) as u64,
            tmp.wrapping_mul(0x1000_0001) as u64,
        )
    }

    /// The next value in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        self.seed1 = (self.seed1 * 3 + self.seed2) % MAX_VALUE;
        self.seed2 = (self.seed1 + self.seed2 + 33) % MAX_VALUE;
        self.seed1 as f64 / MAX_VALUE as f64
    }
}

/// The generators of one statement's `RAND(constant)` calls, by call site.
#[derive(Debug, Default)]
pub struct StatementRandom {
    sites: Vec<(usize, RandState)>,
}

impl StatementRandom {
    /// The next value of the call at `site`; its first call seeds it with `seed`.
    pub fn next_at(&mut self, site: usize, seed: i64) -> f64 {
        if let Some((_, st)) = self.sites.iter_mut().find(|(s, _)| *s == site) {
            return st.next_f64();
        }
        let mut st = RandState::for_seed(seed);
        let v = st.next_f64();
        self.sites.push((site, st));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_sequences_are_mysqls() {
        // Checked against MariaDB 10.11 (same generator as MySQL 8).
        let mut r = RandState::for_seed(1);
        assert_eq!(r.next_f64(), 0.40540353712197724);
        assert_eq!(r.next_f64(), 0.8716141803857071);
        assert_eq!(RandState::for_seed(2).next_f64(), 0.6555866465490187);
        let mut st = StatementRandom::default();
        assert_eq!(st.next_at(7, 1), 0.40540353712197724);
        assert_eq!(st.next_at(7, 1), 0.8716141803857071);
        assert_eq!(st.next_at(8, 1), 0.40540353712197724);
    }
}
