//! CHECK TABLE for `btree`: every page of every index is read (so every checksum is
//! verified), each tree's key order and separators are checked, and the secondary
//! indexes are compared with the clustered index both ways: every live row has its
//! entry in each secondary index, and every entry leads to a row that has (or, while
//! purge has not caught up, had) that key.
//!
//! Purge is held off for the length of the check: it removes a delete-marked record
//! and then its secondary entries, and a check that read between the two would call
//! the entry dangling (seen in CI as "index kc has an entry for a missing row").

use crate::row::RecHeader;
use crate::table::Layout;
use crate::{io_err, Inner};
use std::ops::Bound;
use strata_types::{Error, Result};

pub(crate) fn check_table(inner: &Inner, lay: &Layout) -> Result<()> {
    let st = &inner.st;
    let name = &lay.name;
    let _no_purge = inner.purging.lock();
    for t in &lay.trees {
        t.verify(st).map_err(|e| io_err(name, e))?;
    }
    let mut problem: Option<String> = None;
    let mut live = 0u64;
    let unbounded = Bound::Unbounded;
    lay.clustered()
        .range(st, &unbounded, &unbounded, false, &mut |batch| {
            for (k, v) in batch.iter() {
                let Some(h) = RecHeader::read(v) else {
                    problem = Some("a clustered record has no header".into());
                    return Ok(false);
                };
                if h.deleted() {
                    continue;
                }
                live += 1;
                let Ok(row) = lay.decode(st, v) else {
                    problem = Some("a clustered record does not decode".into());
                    return Ok(false);
                };
                for (tree_no, ix) in lay.secondaries() {
                    let e = lay.entry_key(ix, &row, k);
                    if lay.trees[tree_no].get(st, &e)?.as_deref() != Some(k) {
                        problem = Some(format!(
                            "index {} has no entry for a row of the clustered index",
                            ix.name
                        ));
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        })
        .map_err(|e| io_err(name, e))?;
    if let Some(p) = problem {
        return Err(Error::corrupt(name, p));
    }
    for (tree_no, ix) in lay.secondaries() {
        let mut entries = 0u64;
        lay.trees[tree_no]
            .range(st, &unbounded, &unbounded, false, &mut |batch| {
                for (e, ckey) in batch.iter() {
                    let Some(v) = lay.clustered().get(st, ckey)? else {
                        problem = Some(format!("index {} has an entry for a missing row", ix.name));
                        return Ok(false);
                    };
                    let Ok(row) = lay.decode(st, &v) else {
                        problem = Some("a clustered record does not decode".into());
                        return Ok(false);
                    };
                    let deleted = RecHeader::read(&v).is_none_or(|h| h.deleted());
                    if !deleted && lay.entry_key(ix, &row, ckey) == e {
                        entries += 1;
                        continue;
                    }
                    // A stale entry is fine only while purge (or the sweep after a
                    // restart) has yet to decide whether an old version needs it.
                    let settled = inner.trx.history_length() == 0
                        && inner.swept.load(std::sync::atomic::Ordering::SeqCst);
                    if settled && !deleted {
                        problem = Some(format!(
                            "index {} has an entry whose row has another key",
                            ix.name
                        ));
                        return Ok(false);
                    }
                }
                Ok(true)
            })
            .map_err(|e| io_err(name, e))?;
        if let Some(p) = problem {
            return Err(Error::corrupt(name, p));
        }
        if entries != live {
            return Err(Error::corrupt(
                name,
                format!(
                    "index {} has {entries} live entries, the clustered index {live} rows",
                    ix.name
                ),
            ));
        }
    }
    Ok(())
}
