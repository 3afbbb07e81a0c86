//! The set operators: `UNION [ALL]`, `INTERSECT [ALL]` and `EXCEPT [ALL]` of two query
//! expressions, rows converted to the result's column types first.
//!
//! UNION ALL streams its left side, then its right. UNION DISTINCT streams both,
//! passing each row whose key (the values' sort keys under each column's collation) was
//! not seen. INTERSECT and EXCEPT read the right side into a multiset of keys, then
//! stream the left side against it: O(left + right) time, the right side in memory.

use super::conform::{column_collation, Conform};
use super::{BoxedOp, Operator, Sink};
use crate::expr::keys::group_key;
use crate::hash_tables::{FastMap, FastSet};
use crate::plan::query::SetOp;
use strata_engine::Flow;
use strata_types::{Collation, ColumnMeta, Result, Value};

pub struct SetOperation<'a> {
    pub op: SetOp,
    pub distinct: bool,
    pub left: BoxedOp<'a>,
    pub right: BoxedOp<'a>,
    pub columns: &'a [ColumnMeta],
}

fn row_key(r: &[Value], colls: &[Collation]) -> Vec<u8> {
    let mut k = Vec::new();
    for (v, c) in r.iter().zip(colls) {
        group_key(&mut k, v, *c);
    }
    k
}

impl<'a> SetOperation<'a> {
    /// Builds the operator; both sides are conformed to `columns`.
    pub fn new(
        op: SetOp,
        distinct: bool,
        left: BoxedOp<'a>,
        right: BoxedOp<'a>,
        columns: &'a [ColumnMeta],
    ) -> SetOperation<'a> {
        SetOperation {
            op,
            distinct,
            left: Box::new(Conform {
                input: left,
                columns,
            }),
            right: Box::new(Conform {
                input: right,
                columns,
            }),
            columns,
        }
    }
}

impl Operator for SetOperation<'_> {
    fn run(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        let colls: Vec<Collation> = self.columns.iter().map(column_collation).collect();
        match (self.op, self.distinct) {
            (SetOp::Union, false) => {
                if self.left.run(sink)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                self.right.run(sink)
            }
            (SetOp::Union, true) => {
                let mut seen = FastSet::default();
                let mut pass = |r: &[Value]| {
                    if seen.insert(row_key(r, &colls)) {
                        sink(r)
                    } else {
                        Ok(Flow::Continue)
                    }
                };
                if self.left.run(&mut pass)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                self.right.run(&mut pass)
            }
            (op, distinct) => {
                let mut right: FastMap<Vec<u8>, usize> = FastMap::default();
                self.right.run(&mut |r| {
                    *right.entry(row_key(r, &colls)).or_default() += 1;
                    Ok(Flow::Continue)
                })?;
                let mut emitted = FastSet::default();
                self.left.run(&mut |r| {
                    let k = row_key(r, &colls);
                    let keep = match (op, distinct) {
                        (SetOp::Intersect, true) => right.contains_key(&k),
                        (SetOp::Except, true) => !right.contains_key(&k),
                        // ALL: as many copies as the multiset operation leaves.
                        (SetOp::Intersect, false) => match right.get_mut(&k) {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                true
                            }
                            _ => false,
                        },
                        _ => match right.get_mut(&k) {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                false
                            }
                            _ => true,
                        },
                    };
                    if keep && (!distinct || emitted.insert(k)) {
                        sink(r)
                    } else {
                        Ok(Flow::Continue)
                    }
                })
            }
        }
    }
}
