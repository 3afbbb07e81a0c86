//! The results of a correlated subquery, kept per execution by the outer values it was
//! run with, so a subquery the outer query reaches again with the same values is not run
//! again (MariaDB's subquery cache; TPC-H Q17's `(SELECT 0.2 * AVG(l_quantity) FROM
//! lineitem WHERE l_partkey = p_partkey)` runs once per part instead of once per line).
//!
//! A result may be reused only when it is a function of those values alone. Within one
//! statement the tables a subquery reads do not change under it (a SELECT changes
//! nothing; INSERT … SELECT, UPDATE and DELETE read their rows first or refuse to read
//! their own target, 1093), so what remains is the subquery's own expressions: RAND(),
//! UUID(), SYSDATE(), user variables (`@v := …` may change them between runs) give
//! another value per run. [`cacheable`] therefore takes only a plain query block whose
//! every expression is free of those, of nested subqueries, derived and LATERAL tables,
//! window functions and locking reads; anything else runs every time, as before.
//!
//! Keys are the outer values' exact bytes (type tag and representation), never a
//! collation's weight: `'a'` and `'A'` are equal under a case-insensitive collation but
//! a subquery may return the value itself. The cache stops taking entries at
//! [`MAX_BYTES`] (rows and keys together), so memory stays bounded however many distinct
//! outer values there are; a full cache only means later values run as before. What it
//! holds is working memory of the statement (`memory/sql/subquery_results`): its keys,
//! and the rows of results small enough to hold no grant of their own, are held by the
//! cache's grant, which grows in 64 KiB steps; when the budget has no room for the
//! next step the cache stops taking entries, as when it is full.
//!
//! A cache that is never hit is pure cost: TPC-H Q21 checks its `EXISTS` once per
//! (order, supplier) pair, each pair once, and building and storing the keys cost ~1,500
//! instructions a check for nothing. So each subquery is on probation for its first
//! [`PROBATION`] lookups: when fewer than one in [`MIN_HIT_SHARE`] of them was a hit, its
//! entries are dropped and it runs every time from then on, as MariaDB's subquery cache
//! switches itself off at a low hit rate.

use crate::expr::{Expr, SubqueryRows};
use crate::hash_tables::FastMap;
use crate::plan::block::{Access, SelectPlan};
use crate::plan::query::QueryPlan;
use std::collections::HashMap;
use std::rc::Rc;
use strata_engine::ReadMode;
use strata_types::memory::{Component, Grant};
use strata_types::Value;

/// The most bytes (estimated) one execution keeps in cached subquery results.
pub const MAX_BYTES: usize = 16 << 20;

/// Lookups after which a subquery's hit rate decides whether it stays cached.
pub const PROBATION: u32 = 512;

/// A subquery stays cached when at least one lookup in this many was a hit.
pub const MIN_HIT_SHARE: u32 = 16;

/// How often one subquery's cache was consulted and found an answer.
#[derive(Default)]
struct Usage {
    lookups: u32,
    hits: u32,
    bytes: usize,
    /// Of `bytes`, those the cache's grant holds (rows with a grant of their own are not
    /// counted twice).
    granted: usize,
}

/// Cached results of one execution's correlated subqueries.
pub struct SubqueryCache {
    /// Whether each subquery id may be cached, decided on its first run.
    cacheable: HashMap<usize, bool>,
    /// By subquery id, then by key.
    entries: HashMap<usize, FastMap<Vec<u8>, Rc<SubqueryRows>>>,
    /// `EXISTS` answers, by subquery id, then by key.
    exists: HashMap<usize, FastMap<Vec<u8>, bool>>,
    usage: HashMap<usize, Usage>,
    bytes: usize,
    /// What the entries hold outside their rows' own grants, under [`MAX_BYTES`].
    grant: Grant,
    granted: usize,
}

impl Default for SubqueryCache {
    fn default() -> SubqueryCache {
        SubqueryCache {
            cacheable: HashMap::new(),
            entries: HashMap::new(),
            exists: HashMap::new(),
            usage: HashMap::new(),
            bytes: 0,
            grant: Grant::unbounded_floor(Component::Subquery, MAX_BYTES),
            granted: 0,
        }
    }
}

impl SubqueryCache {
    /// Whether subquery `id` (plan `plan`) may reuse results.
    pub fn allows(&mut self, id: usize, plan: &QueryPlan) -> bool {
        *self.cacheable.entry(id).or_insert_with(|| cacheable(plan))
    }

    pub fn get(&mut self, id: usize, key: &[u8]) -> Option<Rc<SubqueryRows>> {
        let found = self.entries.get(&id).and_then(|m| m.get(key)).cloned();
        self.count(id, found.is_some());
        found
    }

    pub fn get_exists(&mut self, id: usize, key: &[u8]) -> Option<bool> {
        let found = self.exists.get(&id).and_then(|m| m.get(key)).copied();
        self.count(id, found.is_some());
        found
    }

    /// Counts one lookup of subquery `id`; at the end of its probation a subquery that
    /// was hardly ever hit stops being cached and gives its memory back.
    fn count(&mut self, id: usize, hit: bool) {
        let u = self.usage.entry(id).or_default();
        u.lookups = u.lookups.saturating_add(1);
        u.hits += u32::from(hit);
        if u.lookups == PROBATION && u.hits * MIN_HIT_SHARE < u.lookups {
            self.bytes -= u.bytes;
            self.granted -= u.granted;
            u.bytes = 0;
            u.granted = 0;
            self.grant.shrink_to(self.granted);
            self.cacheable.insert(id, false);
            self.entries.remove(&id);
            self.exists.remove(&id);
        }
    }

    /// Whether an entry of `size` bytes, `granted` of them held by the cache's grant, may
    /// be kept: the subquery is cached, the cache is not full and the budget has room.
    /// Counts it when so.
    fn room(&mut self, id: usize, size: usize, granted: usize) -> bool {
        if self.bytes + size > MAX_BYTES
            || self.cacheable.get(&id) == Some(&false)
            || !self.grant.fits(self.granted + granted)
        {
            return false;
        }
        self.bytes += size;
        self.granted += granted;
        let u = self.usage.entry(id).or_default();
        u.bytes += size;
        u.granted += granted;
        true
    }

    /// Keeps an `EXISTS` answer for (`id`, `key`) unless the cache is full.
    pub fn put_exists(&mut self, id: usize, key: Vec<u8>, found: bool) {
        let size = key.len() + 64;
        if !self.room(id, size, size) {
            return;
        }
        self.exists.entry(id).or_default().insert(key, found);
    }

    /// Keeps `rows` for (`id`, `key`) unless the cache is full.
    pub fn put(&mut self, id: usize, key: Vec<u8>, rows: Rc<SubqueryRows>) {
        let size = key.len()
            + 64
            + rows
                .rows
                .iter()
                .map(|r| 24 + strata_types::memory::row_bytes(r))
                .sum::<usize>();
        // Rows that hold their own grant are in the working memory already.
        let granted = if rows.granted_bytes() > 0 {
            key.len() + 64
        } else {
            size
        };
        if !self.room(id, size, granted) {
            return;
        }
        self.entries.entry(id).or_default().insert(key, rows);
    }
}

/// The exact identity of a list of values: a tag per value and its representation (the
/// temporary-file row encoding, which is lossless: 1 and 1.0, 'a' and 'A' differ).
pub fn key(values: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(values.len() * 10);
    crate::temp_rows::encode_row(values, &mut k);
    k
}

/// Whether a subquery's result depends only on the outer values it is run with (see the
/// module comment): a plain block of pure expressions over base tables.
pub fn cacheable(plan: &QueryPlan) -> bool {
    match plan {
        QueryPlan::Block(b) => block_is_pure(b),
        _ => false,
    }
}

fn block_is_pure(b: &SelectPlan) -> bool {
    if b.windows.is_some() || !b.derived.is_empty() || b.read_mode != ReadMode::Consistent {
        return false;
    }
    if b.scope
        .tables
        .iter()
        .any(|t| t.slot.is_some() || t.lateral.is_some())
    {
        return false;
    }
    let mut exprs: Vec<&Expr> = Vec::new();
    for l in &b.levels {
        match &l.access {
            Access::Scan | Access::IndexInSubquery { .. } => {}
            Access::Index {
                eq, lower, upper, ..
            } => {
                exprs.extend(eq);
                exprs.extend(lower.iter().map(|(e, _)| e));
                exprs.extend(upper.iter().map(|(e, _)| e));
            }
            Access::IndexIn { values, .. } => exprs.extend(values),
            Access::JoinBuffer { keys } => exprs.extend(keys.iter().map(|k| &k.probe)),
        }
        exprs.extend(&l.filter);
        exprs.extend(&l.on);
    }
    exprs.extend(&b.const_filter);
    if let Some(g) = &b.group {
        exprs.extend(g.groups.iter().map(|(e, _)| e));
        for a in &g.aggs {
            exprs.extend(&a.arg);
            exprs.extend(a.more_args.iter().map(|(e, _, _)| e));
            exprs.extend(a.order.iter().map(|(e, _, _)| e));
        }
        exprs.extend(&g.having);
    }
    exprs.extend(&b.projection);
    exprs.extend(&b.limit);
    exprs.extend(&b.offset);
    exprs.iter().all(|e| pure(e))
}

/// No subquery, variable or volatile function anywhere in `e`.
fn pure(e: &Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        let impure = match x {
            Expr::Subquery(_)
            | Expr::UserVariable(_)
            | Expr::SystemVariable { .. }
            | Expr::StoredCall(..) => true,
            Expr::Func(f, _) => f.is_volatile(),
            _ => false,
        };
        if impure {
            ok = false;
        }
    });
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{DateTime, Decimal};

    #[test]
    fn a_subquery_hardly_ever_hit_stops_being_cached_and_frees_its_entries() {
        let mut c = SubqueryCache::default();
        c.cacheable.insert(1, true);
        c.cacheable.insert(2, true);
        // Subquery 1: every key new. Subquery 2: eight keys, asked for again and again.
        for i in 0..PROBATION as i64 {
            let k = key(&[Value::Int(i)]);
            assert_eq!(c.get_exists(1, &k), None);
            c.put_exists(1, k, i % 2 == 0);
            let k2 = key(&[Value::Int(i % 8)]);
            if c.get_exists(2, &k2).is_none() {
                c.put_exists(2, k2, true);
            }
        }
        assert_eq!(c.cacheable.get(&1), Some(&false));
        assert!(!c.exists.contains_key(&1));
        assert_eq!(c.cacheable.get(&2), Some(&true));
        assert_eq!(c.exists[&2].len(), 8);
        assert_eq!(c.bytes, c.usage[&2].bytes);
        // Nothing more is kept for the one switched off.
        c.put_exists(1, key(&[Value::Int(-1)]), true);
        assert!(!c.exists.contains_key(&1));
    }

    #[test]
    fn keys_tell_types_and_representations_apart() {
        let k = |v: Value| key(&[v]);
        assert_ne!(k(Value::Int(1)), k(Value::UInt(1)));
        assert_ne!(k(Value::Int(1)), k(Value::Decimal(Decimal::new(10, 1))));
        assert_ne!(
            k(Value::Decimal(Decimal::new(10, 1))),
            k(Value::Decimal(Decimal::new(100, 2)))
        );
        assert_ne!(k(Value::str("a")), k(Value::str("A")));
        assert_ne!(k(Value::Null), k(Value::str("")));
        assert_ne!(k(Value::DateTime(DateTime::default())), k(Value::Int(0)));
        // Lengths are part of the key: ("ab", "c") is not ("a", "bc").
        assert_ne!(
            key(&[Value::str("ab"), Value::str("c")]),
            key(&[Value::str("a"), Value::str("bc")])
        );
        assert_eq!(
            key(&[Value::Int(7), Value::Null]),
            key(&[Value::Int(7), Value::Null])
        );
    }

    #[test]
    fn volatile_expressions_are_not_pure() {
        use crate::expr::functions::Func;
        let col = Expr::Column(0);
        assert!(pure(&col));
        assert!(!pure(&Expr::UserVariable("v".into())));
        let rand = crate::expr::functions::lookup("rand")
            .expect("RAND exists")
            .0;
        assert!(!pure(&Expr::Func(rand, vec![])));
        let abs = crate::expr::functions::lookup("abs").expect("ABS exists").0;
        assert!(pure(&Expr::Func(abs, vec![col.clone()])));
        // Nested inside an otherwise pure expression.
        let nested = Expr::Func(abs, vec![Expr::Func(Func::AssignUserVariable, vec![col])]);
        assert!(!pure(&nested));
    }

    #[test]
    fn the_cache_stops_taking_entries_when_full() {
        let mut c = SubqueryCache::default();
        let big = Rc::new(SubqueryRows::new(vec![vec![Value::Bytes(vec![
            0;
            MAX_BYTES
                / 2
        ])]]));
        c.put(0, key(&[Value::Int(1)]), big.clone());
        assert!(c.get(0, &key(&[Value::Int(1)])).is_some());
        c.put(0, key(&[Value::Int(2)]), big);
        assert!(c.get(0, &key(&[Value::Int(2)])).is_none());
        // Another subquery id with the same values is another entry.
        assert!(c.get(1, &key(&[Value::Int(1)])).is_none());
    }
}
