//! The hash join: an inner table with no usable index is read once per execution into
//! a join buffer, hashed on the columns an equi-join condition compares with tables
//! already read, and probed for each outer row, instead of being scanned again for every
//! outer row. Without such a condition the buffer is one bucket (MySQL's hash join
//! without keys, a cartesian product from memory).
//!
//! The plan holds only which columns are keys ([`HashKey`]); the buffer belongs to the
//! execution, which keeps it for later runs of the same block ([`JoinBufferCache`]). Keys are the bytes [`group_key`] gives under the comparison's collation,
//! so values that compare equal meet; a NULL key never matches. Only pairs of columns
//! whose comparison those bytes follow exactly are hashed (integers and decimals,
//! strings, temporals); every condition is still checked on the rows a probe yields,
//! so the hash only narrows what is read. A table too big for [`JOIN_BUFFER_BYTES`] is
//! read again per outer row as before: slower, never different.

use crate::bind::ScopeTable;
use crate::expr::keys::group_key;
use crate::expr::EvalCtx;
use crate::hash_tables::FastMap;
use crate::plan::block::HashKey;
use std::rc::Rc;
use strata_engine::{Flow, Txn};
use strata_types::memory::{Component, Grant};
use strata_types::{Error, Result, Value};

/// Join buffers kept for the length of one execution, keyed by (block, level), so a
/// block that runs again in the same statement (a correlated subquery runs once per
/// outer row) probes the buffer an earlier run read instead of reading the table again.
/// Only base tables' buffers are kept: a derived table's rows can differ between runs
/// (a recursive CTE's work table changes every iteration).
/// A join buffer kept by the execution: None when its table was too big to buffer.
pub type KeptBuffer = Option<Rc<JoinBuffer>>;

pub trait JoinBufferCache {
    /// The buffer kept under `key`: Some(None) when the table was too big to buffer.
    fn cached(&self, key: (usize, usize)) -> Option<Option<Rc<JoinBuffer>>>;
    fn keep(&self, key: (usize, usize), buffer: Option<Rc<JoinBuffer>>);
}

/// The most bytes (roughly) one join buffer holds.
pub const JOIN_BUFFER_BYTES: usize = 256 << 20;

/// An inner table's rows in memory, bucketed by key.
pub struct JoinBuffer {
    rows: Vec<Vec<Value>>,
    /// Key bytes → positions in `rows`; None when the join has no keys.
    buckets: Option<FastMap<Vec<u8>, Vec<u32>>>,
    /// The buffer's share of the server's memory budget, held while it lives.
    _grant: Grant,
}

impl JoinBuffer {
    /// Reads the table once (of a base table, the columns `cols` marks, or all). None
    /// when it holds more than [`JOIN_BUFFER_BYTES`].
    pub fn build(
        t: &ScopeTable,
        keys: &[HashKey],
        cols: Option<&[bool]>,
        txn: &Txn,
        cx: &EvalCtx,
    ) -> Result<Option<JoinBuffer>> {
        let mut rows: Vec<Vec<Value>> = Vec::new();
        let mut bytes = 0usize;
        let mut too_big = false;
        // Rows and their hash buckets under one grant: when the server's budget has no
        // room, the join runs as a nested loop instead of growing the buffer.
        let mut grant = Grant::unbounded_floor(Component::Join, JOIN_BUFFER_BYTES);
        let mut take = |vals: &[Value]| -> Flow {
            // The row's slot (and spare capacity as the list doubles) and its blocks.
            bytes += 48 + strata_types::memory::row_bytes(vals);
            let with_buckets = if keys.is_empty() {
                bytes
            } else {
                bytes + bytes / 2
            };
            if !grant.fits(with_buckets) {
                too_big = true;
                return Flow::Stop;
            }
            rows.push(vals.to_vec());
            Flow::Continue
        };
        match t.slot {
            Some(slot) => {
                let Some(runner) = cx.runner else {
                    return Err(Error::Internal("derived table without an executor".into()));
                };
                runner.slot_rows(slot)?.for_each(&mut |r| Ok(take(r)))?;
            }
            None => match cols {
                Some(c) => t
                    .table
                    .scan_columns(txn, c, &mut |_, vals| Ok(take(vals)))?,
                None => t.table.scan(txn, &mut |_, vals| Ok(take(vals)))?,
            },
        }
        if too_big {
            return Ok(None);
        }
        let buckets = (!keys.is_empty()).then(|| {
            let mut m: FastMap<Vec<u8>, Vec<u32>> = FastMap::default();
            let mut key = Vec::new();
            'rows: for (i, r) in rows.iter().enumerate() {
                key.clear();
                for k in keys {
                    let v = &r[k.column];
                    if v.is_null() {
                        continue 'rows;
                    }
                    group_key(&mut key, v, k.coll);
                }
                m.entry(key.clone()).or_default().push(i as u32);
            }
            m
        });
        Ok(Some(JoinBuffer {
            rows,
            buckets,
            _grant: grant,
        }))
    }

    /// The buffered rows whose keys equal the probe's values in `row`.
    pub fn lookup(&self, keys: &[HashKey], row: &[Value], cx: &EvalCtx) -> Result<Hits<'_>> {
        let Some(buckets) = &self.buckets else {
            return Ok(Hits::All);
        };
        let mut key = Vec::new();
        for k in keys {
            let v = k.probe.eval(row, cx)?;
            if v.is_null() {
                return Ok(Hits::These(&[]));
            }
            group_key(&mut key, &v, k.coll);
        }
        Ok(Hits::These(buckets.get(&key).map_or(&[], |h| h.as_slice())))
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn row(&self, i: usize) -> &[Value] {
        &self.rows[i]
    }
}

/// What a probe found: every row (no keys), or these positions.
pub enum Hits<'a> {
    All,
    These(&'a [u32]),
}

impl Hits<'_> {
    /// The positions found, in buffer order, given the buffer's length.
    pub fn positions(&self, len: usize) -> Box<dyn Iterator<Item = usize> + '_> {
        match self {
            Hits::All => Box::new(0..len),
            Hits::These(h) => Box::new(h.iter().map(|&i| i as usize)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Expr;
    use strata_types::Collation;

    #[test]
    fn probe_matches_by_collation_and_never_on_null() {
        let keys = vec![HashKey {
            probe: Expr::Column(0),
            column: 0,
            coll: Collation::GeneralCi,
        }];
        let rows = vec![
            vec![Value::str("abc"), Value::Int(1)],
            vec![Value::Null, Value::Int(2)],
            vec![Value::str("ABC"), Value::Int(3)],
            vec![Value::str("x"), Value::Int(4)],
        ];
        let mut m: FastMap<Vec<u8>, Vec<u32>> = FastMap::default();
        for (i, r) in rows.iter().enumerate() {
            if r[0].is_null() {
                continue;
            }
            let mut k = Vec::new();
            group_key(&mut k, &r[0], Collation::GeneralCi);
            m.entry(k).or_default().push(i as u32);
        }
        let buf = JoinBuffer {
            rows,
            buckets: Some(m),
            _grant: strata_types::memory::Grant::unbounded_floor(
                strata_types::memory::Component::Join,
                usize::MAX,
            ),
        };
        let env = crate::expr::test_env::TestEnv::default();
        let cx = EvalCtx::new(&[], &env);
        let found = |probe: Value| -> Vec<Value> {
            let hits = buf.lookup(&keys, &[probe], &cx).unwrap();
            hits.positions(buf.len())
                .map(|i| buf.row(i)[1].clone())
                .collect()
        };
        assert_eq!(found(Value::str("Abc")), vec![Value::Int(1), Value::Int(3)]);
        assert!(found(Value::Null).is_empty());
        assert!(found(Value::str("y")).is_empty());
    }
}
