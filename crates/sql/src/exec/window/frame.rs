//! Frames: which rows of its partition each row's window function reads.
//!
//! Positions are indexes into one partition in window order. A frame is the half-open
//! range `[start, end)` of positions; an empty frame has `start == end`. Peers (rows
//! equal on every ORDER BY key, or every row of the partition when there is no ORDER
//! BY) share RANK, CUME_DIST and a RANGE frame's CURRENT ROW.

use crate::bind::window::{check_offset, Bound, Frame, Unit};
use crate::expr::{compare, sort_compare, EvalCtx};
use std::cmp::Ordering;
use strata_types::{Collation, Decimal, Result, Value};

/// For each position, the first position of its peer group and the one after its last.
pub struct Peers {
    pub start: Vec<usize>,
    pub end: Vec<usize>,
}

/// The peer groups of a partition from each position's ORDER BY values.
pub fn peers(keys: &[&[Value]], colls: &[Collation]) -> Peers {
    let m = keys.len();
    let mut start = vec![0; m];
    let mut end = vec![m; m];
    let same = |a: &[Value], b: &[Value]| {
        a.iter()
            .zip(b)
            .zip(colls)
            .all(|((x, y), c)| sort_compare(x, y, *c) == Ordering::Equal)
    };
    let mut group = 0;
    for j in 1..m {
        if !same(keys[j - 1], keys[j]) {
            for e in &mut end[group..j] {
                *e = j;
            }
            group = j;
        }
        start[j] = group;
    }
    Peers { start, end }
}

/// A frame end with its offset evaluated.
#[derive(Clone, Debug, PartialEq)]
pub enum At {
    UnboundedPreceding,
    Preceding(Value),
    CurrentRow,
    Following(Value),
    UnboundedFollowing,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub unit: Unit,
    pub start: At,
    pub end: At,
}

/// Evaluates and checks a frame's offsets for one execution.
pub fn resolve(frame: &Frame, ecx: &EvalCtx, window: &str) -> Result<Resolved> {
    let at = |b: &Bound| -> Result<At> {
        Ok(match b {
            Bound::UnboundedPreceding => At::UnboundedPreceding,
            Bound::CurrentRow => At::CurrentRow,
            Bound::UnboundedFollowing => At::UnboundedFollowing,
            Bound::Preceding(e) | Bound::Following(e) => {
                let v = e.eval(&[], ecx)?;
                check_offset(frame.unit, &v, window)?;
                if matches!(b, Bound::Preceding(_)) {
                    At::Preceding(v)
                } else {
                    At::Following(v)
                }
            }
        })
    };
    Ok(Resolved {
        unit: frame.unit,
        start: at(&frame.start)?,
        end: at(&frame.end)?,
    })
}

/// A ROWS offset as a count of rows (saturating: an offset past any partition).
fn rows(v: &Value) -> usize {
    match v {
        Value::Int(i) => usize::try_from(*i).unwrap_or(0),
        Value::UInt(u) => usize::try_from(*u).unwrap_or(usize::MAX),
        _ => 0,
    }
}

/// The single ORDER BY key of a RANGE frame with offsets, at each position.
pub struct RangeKey<'a> {
    pub keys: &'a [&'a [Value]],
    pub desc: bool,
    pub coll: Collation,
}

/// Whether a non-NULL RANGE key `key` lies before the bound `target` in window order
/// (`after`: before or at it). Keys sorted in window order make this true for a prefix
/// of a partition's non-NULL keys, which both the binary search here and the forward
/// scan of a spilled partition (`super::stream`) rely on.
pub(super) fn is_before(
    key: &Value,
    target: &Value,
    desc: bool,
    coll: Collation,
    after: bool,
) -> bool {
    let o = compare(key, target, coll).unwrap_or(Ordering::Equal);
    let o = if desc { o.reverse() } else { o };
    if after {
        o != Ordering::Greater
    } else {
        o == Ordering::Less
    }
}

/// `v + k` or `v - k` for a RANGE bound, exactly for integers and decimals.
pub(super) fn shifted(v: &Value, k: &Value, add: bool) -> Value {
    let dec = |x: &Value| match x {
        Value::Int(i) => Some(Decimal::from_i64(*i)),
        Value::UInt(u) => Some(Decimal::from_u64(*u)),
        Value::Decimal(d) => Some(*d),
        _ => None,
    };
    if let (Some(a), Some(b)) = (dec(v), dec(k)) {
        let r = if add {
            a.checked_add(&b)
        } else {
            a.checked_sub(&b)
        };
        if let Some(r) = r {
            return Value::Decimal(r);
        }
    }
    let (a, b) = (v.to_f64().unwrap_or(0.0), k.to_f64().unwrap_or(0.0));
    Value::Double(if add { a + b } else { a - b })
}

impl RangeKey<'_> {
    fn key(&self, p: usize) -> &Value {
        &self.keys[p][0]
    }

    /// The positions whose key is not NULL: after the NULLs ascending (they sort
    /// first), before them descending.
    fn non_null(&self) -> (usize, usize) {
        let m = self.keys.len();
        let nulls = (0..m).filter(|&p| self.key(p).is_null()).count();
        if self.desc {
            (0, m - nulls)
        } else {
            (nulls, m)
        }
    }

    /// Where `target` falls among the non-NULL keys: the first position not before it
    /// in window order (`after`: the first position after it).
    fn position(&self, target: &Value, after: bool) -> usize {
        let (lo, hi) = self.non_null();
        let mut a = lo;
        let mut b = hi;
        // Keys are sorted in window order, so "before target" holds for a prefix: a
        // binary search finds its end.
        while a < b {
            let mid = (a + b) / 2;
            if is_before(self.key(mid), target, self.desc, self.coll, after) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        a
    }

    /// The position a RANGE offset bound names for the row at `j`: the start of the
    /// frame (`is_end` false) or the position after its end.
    fn bound(&self, j: usize, k: &Value, preceding: bool, is_end: bool, peers: &Peers) -> usize {
        let v = self.key(j);
        if v.is_null() {
            // A NULL key's offset bounds are its peers: the other NULLs.
            return if is_end { peers.end[j] } else { peers.start[j] };
        }
        // PRECEDING moves against the window order: down ascending, up descending.
        let target = shifted(v, k, preceding == self.desc);
        self.position(&target, is_end)
    }
}

/// The frame `[start, end)` of the row at position `j` of a partition of `m` rows.
/// `range` is the ORDER BY key for a RANGE frame with offsets (the binder makes sure it
/// exists then).
pub fn bounds(
    f: &Resolved,
    j: usize,
    m: usize,
    peers: &Peers,
    range: Option<&RangeKey>,
) -> (usize, usize) {
    bounds_with(
        f,
        j,
        m,
        (peers.start[j], peers.end[j]),
        &mut |k, preceding, is_end| match range {
            Some(r) => r.bound(j, k, preceding, is_end, peers),
            None if is_end => peers.end[j],
            None => peers.start[j],
        },
    )
}

/// [`bounds`] given the row's peer group `[peer.0, peer.1)` and `offset`, which answers
/// a RANGE offset bound `(k, preceding, is_end)` with a position: how a spilled
/// partition, which has neither every row's peers nor every key at hand, finds frames.
pub fn bounds_with(
    f: &Resolved,
    j: usize,
    m: usize,
    peer: (usize, usize),
    offset: &mut dyn FnMut(&Value, bool, bool) -> usize,
) -> (usize, usize) {
    let (start, end) = match f.unit {
        Unit::Rows => {
            let start = match &f.start {
                At::UnboundedPreceding => 0,
                At::Preceding(k) => j.saturating_sub(rows(k)),
                At::CurrentRow => j,
                At::Following(k) => j.saturating_add(rows(k)),
                At::UnboundedFollowing => m,
            };
            let end = match &f.end {
                At::UnboundedPreceding => 0,
                At::Preceding(k) => (j + 1).saturating_sub(rows(k)),
                At::CurrentRow => j + 1,
                At::Following(k) => j.saturating_add(rows(k)).saturating_add(1),
                At::UnboundedFollowing => m,
            };
            (start, end)
        }
        Unit::Range => {
            let start = match &f.start {
                At::UnboundedPreceding => 0,
                At::Preceding(k) => offset(k, true, false),
                At::CurrentRow => peer.0,
                At::Following(k) => offset(k, false, false),
                At::UnboundedFollowing => m,
            };
            let end = match &f.end {
                At::UnboundedPreceding => 0,
                At::Preceding(k) => offset(k, true, true),
                At::CurrentRow => peer.1,
                At::Following(k) => offset(k, false, true),
                At::UnboundedFollowing => m,
            };
            (start, end)
        }
    };
    let end = end.min(m);
    let start = start.min(end);
    (start, end)
}

/// True when every row's frame starts at the partition's start: the frame then only
/// grows from row to row, and an aggregate can run along it once.
pub fn starts_at_partition_start(f: &Resolved) -> bool {
    f.start == At::UnboundedPreceding
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i64) -> Value {
        Value::Int(i)
    }

    fn frame(unit: Unit, start: At, end: At) -> Resolved {
        Resolved { unit, start, end }
    }

    fn all(f: &Resolved, keys: &[Vec<Value>], desc: bool) -> Vec<(usize, usize)> {
        let refs: Vec<&[Value]> = keys.iter().map(|k| k.as_slice()).collect();
        let p = peers(&refs, &[Collation::GeneralCi]);
        let rk = RangeKey {
            keys: &refs,
            desc,
            coll: Collation::GeneralCi,
        };
        (0..keys.len())
            .map(|j| bounds(f, j, keys.len(), &p, Some(&rk)))
            .collect()
    }

    #[test]
    fn peers_group_equal_keys() {
        let keys = [vec![int(1)], vec![int(1)], vec![int(2)], vec![Value::Null]];
        let refs: Vec<&[Value]> = keys.iter().map(|k| k.as_slice()).collect();
        let p = peers(&refs, &[Collation::GeneralCi]);
        assert_eq!(p.start, vec![0, 0, 2, 3]);
        assert_eq!(p.end, vec![2, 2, 3, 4]);
        // No ORDER BY: every row is a peer of every other.
        let none: Vec<&[Value]> = vec![&[], &[], &[]];
        let p = peers(&none, &[]);
        assert_eq!(p.start, vec![0, 0, 0]);
        assert_eq!(p.end, vec![3, 3, 3]);
    }

    #[test]
    fn rows_frames_clip_at_the_partition_edges() {
        let keys: Vec<Vec<Value>> = (0..4).map(|i| vec![int(i)]).collect();
        let f = frame(Unit::Rows, At::Preceding(int(1)), At::Following(int(1)));
        assert_eq!(all(&f, &keys, false), vec![(0, 2), (0, 3), (1, 4), (2, 4)]);
        let f = frame(Unit::Rows, At::Following(int(1)), At::Following(int(2)));
        assert_eq!(all(&f, &keys, false), vec![(1, 3), (2, 4), (3, 4), (4, 4)]);
        // A start after the end is an empty frame.
        let f = frame(Unit::Rows, At::CurrentRow, At::Preceding(int(1)));
        assert!(all(&f, &keys, false).iter().all(|(s, e)| s == e));
        let f = frame(Unit::Rows, At::UnboundedPreceding, At::Preceding(int(5)));
        assert_eq!(all(&f, &keys, false), vec![(0, 0); 4]);
    }

    #[test]
    fn range_current_row_takes_the_peers() {
        let keys = vec![vec![int(1)], vec![int(1)], vec![int(3)]];
        let f = frame(Unit::Range, At::UnboundedPreceding, At::CurrentRow);
        assert_eq!(all(&f, &keys, false), vec![(0, 2), (0, 2), (0, 3)]);
    }

    #[test]
    fn range_offsets_compare_values_and_keep_nulls_apart() {
        // Ascending: NULLs first.
        let keys = vec![
            vec![Value::Null],
            vec![int(1)],
            vec![int(2)],
            vec![int(4)],
            vec![int(7)],
        ];
        let f = frame(Unit::Range, At::Preceding(int(2)), At::CurrentRow);
        assert_eq!(
            all(&f, &keys, false),
            vec![(0, 1), (1, 2), (1, 3), (2, 4), (4, 5)]
        );
        let f = frame(Unit::Range, At::CurrentRow, At::Following(int(3)));
        assert_eq!(
            all(&f, &keys, false),
            vec![(0, 1), (1, 4), (2, 4), (3, 5), (4, 5)]
        );
        // Descending: NULLs last, PRECEDING means larger keys.
        let keys = vec![vec![int(7)], vec![int(4)], vec![int(2)], vec![Value::Null]];
        let f = frame(Unit::Range, At::Preceding(int(3)), At::CurrentRow);
        assert_eq!(all(&f, &keys, true), vec![(0, 1), (0, 2), (1, 3), (3, 4)]);
        // UNBOUNDED PRECEDING reaches the NULLs that sort first.
        let keys = vec![vec![Value::Null], vec![int(1)], vec![int(5)]];
        let f = frame(Unit::Range, At::UnboundedPreceding, At::Preceding(int(1)));
        assert_eq!(all(&f, &keys, false), vec![(0, 1), (0, 1), (0, 2)]);
    }

    #[test]
    fn offsets_are_checked_per_unit() {
        assert!(check_offset(Unit::Rows, &int(0), "w").is_ok());
        assert_eq!(
            check_offset(Unit::Rows, &int(-1), "w").unwrap_err().code(),
            3586
        );
        let half = Value::Decimal(Decimal::new(5, 1));
        assert_eq!(
            check_offset(Unit::Rows, &half, "w").unwrap_err().code(),
            3586
        );
        assert!(check_offset(Unit::Range, &half, "w").is_ok());
        assert_eq!(
            check_offset(Unit::Range, &Value::Null, "w")
                .unwrap_err()
                .code(),
            3586
        );
    }
}
