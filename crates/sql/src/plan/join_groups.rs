//! Outer-join groups and where each join condition is checked.
//!
//! A group is the inner side of one LEFT JOIN (a RIGHT JOIN's left operand): a run of
//! consecutive levels of the nested loop that either matches (some combination of its
//! rows passes its conditions) or is NULL-extended as a whole. Groups nest: in
//! `a LEFT JOIN (b LEFT JOIN c ON bc) ON ab`, {c} sits inside {b, c}.
//!
//! A condition belongs to a group (its ON, and the ON of inner joins inside it) or to
//! the block (WHERE, top-level inner-join ON). It is checked at the level where what it
//! reads is in place, but never inside a nested group it reads: a NULL-extended group
//! has to be seen whole by the conditions of the groups around it, so such a condition
//! waits for the nested group's last level. Conditions of a group are checked no earlier
//! than the group's first level (an ON that reads only outer tables still decides the
//! match, not the outer row).
//!
//! After a row is in place at a level, the executor walks the level's chain: the
//! innermost group holding the level's table and its enclosing groups, checking each
//! one's conditions placed here and marking the group matched when this is its last
//! level; a group that does not end here stops the walk.

use crate::expr::Expr;
use strata_types::{Error, Result};

#[derive(Clone, Debug)]
pub struct JoinGroup {
    /// The group this one is nested in (None: the block).
    pub parent: Option<usize>,
    /// Scope tables in the group (bit per scope position).
    pub tables: u64,
    /// The first and last level (join order positions) of the group.
    pub first: usize,
    pub last: usize,
}

/// Where the conditions of a nested loop go, per level.
#[derive(Default, Debug)]
pub struct Placement {
    /// The block's conditions checked at each level.
    pub filter: Vec<Vec<Expr>>,
    /// The groups' conditions checked at each level, in the order of `chain`.
    pub on: Vec<Vec<Expr>>,
    /// Per level: (group, how many of `on` it owns), innermost group first.
    pub chain: Vec<Vec<(usize, usize)>>,
    /// Per level: the group whose first level it is.
    pub starts: Vec<Option<usize>>,
    /// Conditions that read no table (checked once).
    pub const_filter: Vec<Expr>,
}

/// Places conditions given the table order (`order[level]` = scope table) and the
/// groups (parents listed before the groups nested in them); fills in the groups'
/// first and last levels. `conds` holds (owner group, tables read, condition).
pub fn place(
    order: &[usize],
    groups: &mut [JoinGroup],
    conds: Vec<(Option<usize>, u64, Expr)>,
) -> Result<Placement> {
    let n = order.len();
    let mut level_of = vec![0usize; 64];
    for (l, &t) in order.iter().enumerate() {
        level_of[t] = l;
    }
    for g in groups.iter_mut() {
        let levels = (0..64)
            .filter(|t| g.tables & (1u64 << t) != 0)
            .map(|t| level_of[t]);
        g.first = levels.clone().min().unwrap_or(0);
        g.last = levels.max().unwrap_or(0);
    }
    // The innermost group of each table: nested groups come after their parents.
    let innermost = |t: usize| groups.iter().rposition(|g| g.tables & (1u64 << t) != 0);
    let mut p = Placement {
        filter: vec![vec![]; n],
        on: vec![vec![]; n],
        chain: vec![vec![]; n],
        starts: vec![None; n],
        const_filter: vec![],
    };
    for (l, &t) in order.iter().enumerate() {
        let mut g = innermost(t);
        while let Some(gi) = g {
            p.chain[l].push((gi, 0));
            if groups[gi].last != l {
                break;
            }
            g = groups[gi].parent;
        }
        // Only the outermost group starting here matters: nested groups never share a
        // first level (a LEFT JOIN's inner side follows its outer side).
        p.starts[l] = groups.iter().position(|g| g.first == l);
    }
    let mut placed: Vec<Vec<(Option<usize>, Expr)>> = vec![vec![]; n];
    for (owner, mask, e) in conds {
        if mask == 0 && owner.is_none() {
            p.const_filter.push(e);
            continue;
        }
        let mut lvl = owner.map_or(0, |g| groups[g].first);
        for t in (0..64).filter(|t| mask & (1u64 << t) != 0) {
            // The outermost group inside `owner` that holds t: its last level.
            let mut at = level_of[t];
            let mut g = innermost(t);
            while let Some(gi) = g {
                if Some(gi) == owner {
                    break;
                }
                at = groups[gi].last;
                g = groups[gi].parent;
            }
            lvl = lvl.max(at);
        }
        if lvl >= n {
            return Err(Error::Internal("join condition past the last table".into()));
        }
        placed[lvl].push((owner, e));
    }
    for (l, conds) in placed.into_iter().enumerate() {
        for (owner, e) in conds {
            match owner {
                None => p.filter[l].push(e),
                Some(g) => match p.chain[l].iter().position(|(c, _)| *c == g) {
                    Some(i) => {
                        let at: usize = p.chain[l][..=i].iter().map(|(_, k)| k).sum();
                        p.on[l].insert(at, e);
                        p.chain[l][i].1 += 1;
                    }
                    None => {
                        return Err(Error::Internal(
                            "join condition outside its group's levels".into(),
                        ))
                    }
                },
            }
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(parent: Option<usize>, tables: u64) -> JoinGroup {
        JoinGroup {
            parent,
            tables,
            first: 0,
            last: 0,
        }
    }

    fn c(i: i64) -> Expr {
        Expr::Literal(strata_types::Value::Int(i))
    }

    #[test]
    fn where_on_a_nested_group_waits_for_its_last_level() {
        // a LEFT JOIN (b JOIN c ON b=c) ON a=b WHERE b.x
        let mut groups = vec![group(None, 0b110)];
        let p = place(
            &[0, 1, 2],
            &mut groups,
            vec![
                (Some(0), 0b110, c(1)), // b = c
                (Some(0), 0b011, c(2)), // a = b
                (None, 0b010, c(3)),    // WHERE b.x
                (None, 0b001, c(4)),    // WHERE a.x
            ],
        )
        .unwrap();
        assert_eq!((groups[0].first, groups[0].last), (1, 2));
        assert_eq!(p.on[1].len(), 1); // a = b at b
        assert_eq!(p.on[2].len(), 1); // b = c at c
        assert_eq!(p.filter[2].len(), 1); // WHERE b.x after the group is decided
        assert_eq!(p.filter[0].len(), 1); // WHERE a.x right away
        assert_eq!(p.starts, vec![None, Some(0), None]);
        assert_eq!(p.chain[1], vec![(0, 1)]);
        assert_eq!(p.chain[2], vec![(0, 1)]);
    }

    #[test]
    fn outer_group_condition_on_a_nested_group_sees_it_whole() {
        // a LEFT JOIN (b LEFT JOIN c ON b=c) ON a=c
        let mut groups = vec![group(None, 0b110), group(Some(0), 0b100)];
        let p = place(
            &[0, 1, 2],
            &mut groups,
            vec![(Some(1), 0b110, c(1)), (Some(0), 0b101, c(2))],
        )
        .unwrap();
        // Both at c: first the inner group's, then (after it is marked) the outer's.
        assert_eq!(p.chain[2], vec![(1, 1), (0, 1)]);
        assert_eq!(p.starts, vec![None, Some(0), Some(1)]);
    }

    #[test]
    fn on_reading_only_outer_tables_is_checked_in_the_group() {
        // a LEFT JOIN b ON a.x = 1
        let mut groups = vec![group(None, 0b10)];
        let p = place(&[0, 1], &mut groups, vec![(Some(0), 0b01, c(1))]).unwrap();
        assert_eq!(p.on[1].len(), 1);
        assert!(p.on[0].is_empty());
    }

    #[test]
    fn right_join_order_puts_the_preserved_table_first() {
        // a RIGHT JOIN b ON a=b: b is read first, a is the group.
        let mut groups = vec![group(None, 0b01)];
        let p = place(&[1, 0], &mut groups, vec![(Some(0), 0b11, c(1))]).unwrap();
        assert_eq!((groups[0].first, groups[0].last), (1, 1));
        assert_eq!(p.on[1].len(), 1);
        assert!(p.const_filter.is_empty());
    }
}
