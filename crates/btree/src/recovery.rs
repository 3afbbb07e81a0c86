//! Crash recovery: replay the redo log from the last checkpoint onto the pages, then roll
//! back every transaction that has undo records but no commit (or rollback) record.
//!
//! Replay is physical and idempotent: a page change is applied only when the page's LSN
//! is older than the record's, and a page's first change after a checkpoint began is a
//! full image, so a page torn in mid-write is rebuilt without reading its bytes. Rollback
//! is logical: each undo record holds the clustered record as it was, and restoring it
//! (with the secondary indexes made to agree) gives the same result however many times
//! it runs, so a crash during recovery is recovered again the same way.
//!
//! A transaction whose last record is a prepare (two-phase commit with the binary log,
//! docs/format/btree.md) is neither: its changes and undo are kept as
//! [`PreparedLeft`] until the server, having read the binary log, decides
//! ([`resolve`]). No checkpoint is taken before that.
//!
//! A transaction whose last record is an XA prepare (kind 6, an external coordinator's
//! XA PREPARE) is kept alive instead ([`resurrect`]): active again, its version chains
//! rebuilt, its rows locked, handed to the server to wait for XA COMMIT / XA ROLLBACK.

use crate::change_list::ChangeList;
use crate::mtr::{
    apply_change, parse_record, REC_COMMIT, REC_PAGES, REC_PREPARED, REC_ROLLED_BACK, REC_UNDO,
    REC_XA_PREPARED,
};
use crate::table::Layout;
use crate::trx::{OldVersion, PurgeBatch, UndoItem};
use crate::Inner;
use std::collections::BTreeMap;
use std::sync::Arc;
use strata_storage::bufpool::page_lsn;
use strata_storage::redo::Recovered;
use strata_types::{Error, Result};

/// The logical undo of one change: `undo_no` orders the transaction's changes and names
/// a copy of this record written again by a checkpoint.
pub fn undo_record(
    trx_id: u64,
    undo_no: u32,
    space: u32,
    key: &[u8],
    old: Option<&[u8]>,
) -> Vec<u8> {
    let mut r = Vec::with_capacity(24 + key.len() + old.map_or(0, |o| o.len()));
    r.push(REC_UNDO);
    r.extend_from_slice(&trx_id.to_le_bytes());
    r.extend_from_slice(&undo_no.to_le_bytes());
    r.extend_from_slice(&space.to_le_bytes());
    r.extend_from_slice(&(key.len() as u16).to_le_bytes());
    r.extend_from_slice(key);
    match old {
        Some(o) => {
            r.push(1);
            r.extend_from_slice(&(o.len() as u32).to_le_bytes());
            r.extend_from_slice(o);
        }
        None => r.push(0),
    }
    r
}

pub fn commit_record(trx_id: u64) -> Vec<u8> {
    let mut r = vec![REC_COMMIT];
    r.extend_from_slice(&trx_id.to_le_bytes());
    r
}

/// The first phase of two-phase commit: `trx_id` is prepared under `xid`.
pub fn prepared_record(trx_id: u64, xid: u64) -> Vec<u8> {
    let mut r = vec![REC_PREPARED];
    r.extend_from_slice(&trx_id.to_le_bytes());
    r.extend_from_slice(&xid.to_le_bytes());
    r
}

/// XA PREPARE: `trx_id` is prepared under the XA xid `xid` (`strata_engine::xa_xid_bytes`).
pub fn xa_prepared_record(trx_id: u64, xid: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(11 + xid.len());
    r.push(REC_XA_PREPARED);
    r.extend_from_slice(&trx_id.to_le_bytes());
    r.extend_from_slice(&(xid.len() as u16).to_le_bytes());
    r.extend_from_slice(xid);
    r
}

pub fn rolled_back_record(trx_id: u64) -> Vec<u8> {
    let mut r = vec![REC_ROLLED_BACK];
    r.extend_from_slice(&trx_id.to_le_bytes());
    r
}

/// One undo record read back from the log.
pub struct Undo {
    pub undo_no: u32,
    pub space: u32,
    pub key: Vec<u8>,
    pub old: Option<Vec<u8>>,
}

/// One logical record: its kind, transaction, undo (kind 2), xid (kind 5, else 0) or
/// XA xid (kind 6).
pub struct Logical {
    pub kind: u8,
    pub trx: u64,
    pub undo: Option<Undo>,
    pub xid: u64,
    pub xa: Option<Vec<u8>>,
}

/// Logical records in a payload. None if malformed.
pub fn parse_logical(mut b: &[u8]) -> Option<Vec<Logical>> {
    let mut out = Vec::new();
    let u64_at = |s: &[u8], at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(s.get(at..at + 8)?.try_into().ok()?))
    };
    while let Some(&kind) = b.first() {
        let trx = u64_at(b, 1)?;
        match kind {
            REC_COMMIT | REC_ROLLED_BACK => {
                out.push(Logical {
                    kind,
                    trx,
                    undo: None,
                    xid: 0,
                    xa: None,
                });
                b = &b[9..];
            }
            REC_PREPARED => {
                let xid = u64_at(b, 9)?;
                out.push(Logical {
                    kind,
                    trx,
                    undo: None,
                    xid,
                    xa: None,
                });
                b = &b[17..];
            }
            REC_XA_PREPARED => {
                let n = u16::from_le_bytes(b.get(9..11)?.try_into().ok()?) as usize;
                let xa = b.get(11..11 + n)?.to_vec();
                strata_engine::xa_xid_parts(&xa)?;
                out.push(Logical {
                    kind,
                    trx,
                    undo: None,
                    xid: 0,
                    xa: Some(xa),
                });
                b = &b[11 + n..];
            }
            REC_UNDO => {
                let u32_at = |at: usize| -> Option<u32> {
                    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
                };
                let undo_no = u32_at(9)?;
                let space = u32_at(13)?;
                let klen = u16::from_le_bytes(b.get(17..19)?.try_into().ok()?) as usize;
                let key = b.get(19..19 + klen)?.to_vec();
                let mut at = 19 + klen;
                let old = match *b.get(at)? {
                    0 => {
                        at += 1;
                        None
                    }
                    _ => {
                        let n =
                            u32::from_le_bytes(b.get(at + 1..at + 5)?.try_into().ok()?) as usize;
                        let v = b.get(at + 5..at + 5 + n)?.to_vec();
                        at += 5 + n;
                        Some(v)
                    }
                };
                out.push(Logical {
                    kind,
                    trx,
                    undo: Some(Undo {
                        undo_no,
                        space,
                        key,
                        old,
                    }),
                    xid: 0,
                    xa: None,
                });
                b = &b[at..];
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The logical records of the log sorted by transaction as recovery reads them.
#[derive(Default)]
struct UndoSort {
    /// Open transactions: trx id → undo records by undo number. A checkpoint's relogged
    /// copy of a change has the original's number and content, so it replaces it.
    open: BTreeMap<u64, BTreeMap<u32, Undo>>,
    /// Committed changes purge still owes: (trx id, change).
    owed: Vec<(u64, Undo)>,
    /// Transactions whose commit or rollback record has been read.
    finished: std::collections::HashSet<u64>,
    /// Open transactions whose prepare record has been read: trx id → xid.
    prepared: BTreeMap<u64, u64>,
    /// Open transactions whose XA prepare record has been read: trx id → XA xid.
    xa: BTreeMap<u64, Vec<u8>>,
}

impl UndoSort {
    fn note_logical(&mut self, l: Logical) {
        match l.xa {
            // Relogged after its undo by a checkpoint, like a prepare record.
            Some(_) if self.finished.contains(&l.trx) => {}
            Some(xa) => {
                self.xa.insert(l.trx, xa);
            }
            None => self.note(l.kind, l.trx, l.undo, l.xid),
        }
    }

    fn note(&mut self, kind: u8, trx: u64, undo: Option<Undo>, xid: u64) {
        match (kind, undo) {
            // A checkpoint relogs a prepared transaction's prepare record after its
            // undo; one after the commit is stale like its undo.
            (REC_PREPARED, _) if self.finished.contains(&trx) => {}
            (REC_PREPARED, _) => {
                self.prepared.insert(trx, xid);
            }
            // A checkpoint may relog an open transaction's undo just after that
            // transaction committed or rolled back (ids are never reused): such a copy
            // is stale, and rolling it back would undo committed work.
            (REC_UNDO, Some(_)) if self.finished.contains(&trx) => {}
            (REC_UNDO, Some(u)) => {
                self.open.entry(trx).or_default().insert(u.undo_no, u);
            }
            (REC_COMMIT, _) => {
                self.finished.insert(trx);
                self.prepared.remove(&trx);
                self.xa.remove(&trx);
                for (_, u) in self.open.remove(&trx).unwrap_or_default() {
                    self.owed.push((trx, u));
                }
            }
            _ => {
                self.finished.insert(trx);
                self.open.remove(&trx);
                self.prepared.remove(&trx);
                self.xa.remove(&trx);
            }
        }
    }
}

/// What recovery found, for the startup line and the tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RecoveryReport {
    pub records: usize,
    pub pages_applied: usize,
    pub rolled_back: usize,
    /// Transactions left prepared for the server to resolve.
    pub prepared: usize,
    /// XA transactions kept prepared (alive) for XA COMMIT / XA ROLLBACK.
    pub xa_prepared: usize,
}

/// A transaction recovery found prepared: kept until [`resolve`] commits or rolls it
/// back.
pub struct PreparedLeft {
    pub trx: u64,
    pub xid: u64,
    /// Its undo, oldest change first.
    pub undo: Vec<Undo>,
}

pub(crate) fn recover(
    inner: &Arc<Inner>,
    rec: Recovered,
    undo_frames: &[crate::undo_log::Frame],
) -> Result<RecoveryReport> {
    let st = &inner.st;
    let page_size = st.pool.page_size();
    let known: std::collections::HashSet<u32> = inner.spaces.list().iter().map(|s| s.id).collect();
    let mut undo = UndoSort::default();
    let mut report = RecoveryReport::default();
    let corrupt = |what: String| Error::corrupt("ib_logfile0", what);
    // The undo of the transactions open at the checkpoint, kept in the undo log
    // (docs/format/undo.md, part 2); the redo log's records after it follow.
    // trx → undo numbers below this are in the undo log already.
    let mut in_file: BTreeMap<u64, u32> = BTreeMap::new();
    if let Some((records, open)) = crate::undo_log::for_checkpoint(undo_frames, rec.checkpoint_lsn)
    {
        let open: std::collections::HashSet<u64> = open.into_iter().collect();
        for p in records {
            let items = parse_logical(p).ok_or_else(|| {
                Error::corrupt(crate::undo_log::UNDO_LOG_FILE, "an undo frame is malformed")
            })?;
            for l in items.into_iter().filter(|l| open.contains(&l.trx)) {
                if let Some(u) = &l.undo {
                    let e = in_file.entry(l.trx).or_default();
                    *e = (*e).max(u.undo_no + 1);
                }
                undo.note_logical(l);
            }
        }
    }
    for (lsn, payload) in &rec.records {
        report.records += 1;
        let logical: &[u8] = if payload.first() == Some(&REC_PAGES) {
            let parsed = parse_record(payload, page_size)
                .ok_or_else(|| corrupt(format!("redo record ending at {lsn} is malformed")))?;
            for (id, change) in &parsed.pages {
                if !known.contains(&id.space) {
                    continue; // the table was dropped after this change
                }
                let full = matches!(change, crate::mtr::PageChange::Full(_));
                let mut page = if full {
                    match st.pool.write_unverified(*id) {
                        Ok((p, _)) => p,
                        Err(_) => st
                            .pool
                            .create(*id)
                            .map_err(|e| crate::io_err(&format!("space {}", id.space), e))?,
                    }
                } else {
                    st.pool
                        .write(*id)
                        .map_err(|e| crate::io_err(&format!("space {}", id.space), e))?
                };
                if page_lsn(&page) < *lsn || full && page_lsn(&page) == 0 {
                    apply_change(&mut page, change);
                    page.mark_dirty(*lsn, *lsn);
                    report.pages_applied += 1;
                }
            }
            parsed.logical
        } else {
            payload
        };
        let items = parse_logical(logical)
            .ok_or_else(|| corrupt(format!("redo record ending at {lsn} is malformed")))?;
        for l in items {
            undo.note_logical(l);
        }
    }
    // Prepared transactions wait for the server's decision, undo and all.
    let mut left = Vec::new();
    for (trx, xid) in std::mem::take(&mut undo.prepared) {
        let u = undo.open.remove(&trx).unwrap_or_default();
        left.push(PreparedLeft {
            trx,
            xid,
            undo: u.into_values().collect(),
        });
    }
    report.prepared = left.len();
    // XA-prepared transactions stay prepared, alive (after the rollbacks below).
    let mut xa_left = Vec::new();
    for (trx, xid) in std::mem::take(&mut undo.xa) {
        let u = undo.open.remove(&trx).unwrap_or_default();
        xa_left.push((trx, xid, u.into_values().collect::<Vec<Undo>>()));
    }
    report.xa_prepared = xa_left.len();
    // Roll back, newest transaction first, each newest change first.
    let mut layouts: BTreeMap<u32, Option<Layout>> = BTreeMap::new();
    let open: Vec<(u64, Vec<Undo>)> = std::mem::take(&mut undo.open)
        .into_iter()
        .rev()
        .map(|(t, m)| (t, m.into_values().rev().collect()))
        .collect();
    let mut saved = false;
    for (i, (trx, undos)) in open.iter().enumerate() {
        for u in undos.iter() {
            // Rolling back logs too: a large transaction rolled back in a log that the
            // crash left nearly full would wait forever for a checkpoint nobody makes.
            if st.log.wants_checkpoint() {
                make_room(inner, &open, i, &in_file, &mut saved)?;
            }
            let lay = layouts
                .entry(u.space)
                .or_insert_with(|| inner.spaces.layout(inner, u.space).ok());
            if let Some(lay) = lay {
                inner.restore(lay, &u.key, u.old.as_deref(), &[], *trx)?;
            }
        }
        st.log.append(&rolled_back_record(*trx));
        report.rolled_back += 1;
    }
    inner.recovering.lock().clear();
    // Hand purge what it still owes; no read view exists yet, so all of it is due.
    let mut q = inner.trx.purge_queue.lock();
    for (trx_id, u) in undo.owed {
        if !known.contains(&u.space) {
            continue;
        }
        let roll_ptr = inner
            .trx
            .versions
            .put(OldVersion { value: u.old })
            .map_err(|e| Error::io("ib_undo_spill", e))?;
        // Its stale entries survive the startup sweep while this old version is kept:
        // covering reads must not trust their leaves until purge is done with it.
        inner.trx.owes(trx_id);
        q.push_back(PurgeBatch {
            trx_id,
            serial: 0,
            first_lsn: 0,
            items: ChangeList::from_items(vec![UndoItem {
                space: u.space,
                key: u.key,
                roll_ptr,
                undo_no: u.undo_no,
            }]),
        });
    }
    drop(q);
    let mut alive = Vec::new();
    for (trx, xid, undos) in xa_left {
        alive.push((xid.clone(), resurrect(inner, trx, xid, undos)?));
    }
    *inner.xa_recovered.lock() = alive;
    if left.is_empty() {
        inner.checkpoint()?;
    } else {
        // No checkpoint may forget their undo before they are resolved.
        *inner.prepared_left.lock() = Some(left);
    }
    if report.records > 0 {
        strata_types::log_note!(
            "btree: recovery replayed {} redo records ({} page changes), rolled back {} transaction(s), left {} prepared, kept {} XA-prepared",
            report.records, report.pages_applied, report.rolled_back, report.prepared, report.xa_prepared
        );
    }
    Ok(report)
}

/// Brings XA-prepared transaction `trx` back to life from its undo `undos` (oldest
/// change first): active again in the trx system, each changed row's chain of old
/// versions rebuilt under the roll pointers the records name (so reads of others find
/// the committed version), and an exclusive lock on each changed clustered key (so
/// other writers wait for XA COMMIT / XA ROLLBACK).
fn resurrect(
    inner: &Arc<Inner>,
    trx: u64,
    xid: Vec<u8>,
    undos: Vec<Undo>,
) -> Result<Arc<crate::BtreeTrx>> {
    use crate::lock::{LockKey, Mode};
    use crate::row::RecHeader;
    let st = &inner.st;
    // Its first record is older than any checkpoint to come: each one either keeps the
    // log where this recovery read its undo, or copies that undo to the undo log
    // (never truncating the file while it is open).
    inner.trx.resume(trx, 0);
    // Per changed row, its changes newest first.
    let mut rows: BTreeMap<(u32, Vec<u8>), Vec<usize>> = BTreeMap::new();
    for (i, u) in undos.iter().enumerate() {
        rows.entry((u.space, u.key.clone())).or_default().push(i);
    }
    let mut ptrs = vec![0u64; undos.len()];
    let mut locks = Vec::new();
    for ((space, key), idx) in rows {
        let lay = inner.spaces.layout(inner, space).ok();
        let cur = match &lay {
            Some(l) => l
                .clustered()
                .get(st, &key)
                .map_err(|e| crate::io_err(&l.name, e))?,
            None => None,
        };
        // The record names the version before the newest change; each older image
        // this transaction wrote names the one before it.
        let mut next = cur
            .as_deref()
            .and_then(RecHeader::read)
            .filter(|h| h.trx_id == trx)
            .map(|h| h.roll_ptr);
        for &i in idx.iter().rev() {
            let u = &undos[i];
            let v = crate::trx::OldVersion {
                value: u.old.clone(),
            };
            ptrs[i] = match next.filter(|&p| p != 0) {
                Some(p) => {
                    inner.trx.versions.put_at(p, v);
                    p
                }
                None => inner
                    .trx
                    .versions
                    .put(v)
                    .map_err(|e| Error::io("ib_undo_spill", e))?,
            };
            next = u
                .old
                .as_deref()
                .and_then(RecHeader::read)
                .filter(|h| h.trx_id == trx)
                .map(|h| h.roll_ptr);
        }
        let k = LockKey {
            space,
            index: 0,
            key,
        };
        inner.locks.lock(
            trx,
            &k,
            Mode::Exclusive,
            std::time::Duration::ZERO,
            &strata_engine::Interrupt::default(),
        )?;
        locks.push(k);
    }
    let items = undos
        .into_iter()
        .zip(ptrs)
        .map(|(u, roll_ptr)| UndoItem {
            space: u.space,
            key: u.key,
            roll_ptr,
            undo_no: u.undo_no,
        })
        .collect();
    crate::BtreeTrx::resurrect(inner, trx, items, locks, xid)
}

/// Commits (when `commit(xid)`) or rolls back each transaction recovery left prepared,
/// then takes the checkpoint recovery held back. Returns (committed, rolled back).
pub(crate) fn resolve(inner: &Arc<Inner>, commit: &dyn Fn(u64) -> bool) -> Result<(usize, usize)> {
    // The list is taken out but an empty one stays in its place until every decision is
    // logged: while it is there the startup sweep and purge wait (a delete-marked row
    // of a transaction being rolled back is not garbage yet) and no checkpoint forgets
    // the undo. If resolving fails the server does not start, and it stays so.
    let left = match inner.prepared_left.lock().as_mut() {
        Some(l) => std::mem::take(l),
        None => return Ok((0, 0)),
    };
    let st = &inner.st;
    let (mut committed, mut rolled_back) = (0, 0);
    let mut layouts: BTreeMap<u32, Option<Layout>> = BTreeMap::new();
    for p in left {
        if commit(p.xid) {
            st.log.append(&commit_record(p.trx));
            // Purge owes it what any committed transaction's undo owes.
            let mut q = inner.trx.purge_queue.lock();
            for u in p.undo {
                let roll_ptr = inner
                    .trx
                    .versions
                    .put(OldVersion { value: u.old })
                    .map_err(|e| Error::io("ib_undo_spill", e))?;
                inner.trx.owes(p.trx);
                q.push_back(PurgeBatch {
                    trx_id: p.trx,
                    serial: 0,
                    first_lsn: 0,
                    items: ChangeList::from_items(vec![UndoItem {
                        space: u.space,
                        key: u.key,
                        roll_ptr,
                        undo_no: u.undo_no,
                    }]),
                });
            }
            committed += 1;
        } else {
            for u in p.undo.iter().rev() {
                let lay = layouts
                    .entry(u.space)
                    .or_insert_with(|| inner.spaces.layout(inner, u.space).ok());
                if let Some(lay) = lay {
                    inner.restore(lay, &u.key, u.old.as_deref(), &[], p.trx)?;
                }
            }
            st.log.append(&rolled_back_record(p.trx));
            rolled_back += 1;
        }
    }
    st.log
        .flush_up_to(st.log.current_lsn())
        .map_err(|e| Error::io("ib_logfile0", e))?;
    *inner.prepared_left.lock() = None;
    inner.checkpoint()?;
    strata_types::log_note!(
        "btree: of the prepared transactions, {committed} committed (in the binary log) and {rolled_back} rolled back"
    );
    Ok((committed, rolled_back))
}

/// Moves the checkpoint in the middle of recovery's rollback (the changes rolled back so
/// far go to disk). The first time, the undo read from the redo log that the undo log
/// lacks is appended to it; every checkpoint meanwhile names the transactions still to
/// be rolled back (transaction `i` and those after it in `open`), so a crash during the
/// rest of the rollback finds their undo there (docs/format/undo.md, part 2).
fn make_room(
    inner: &Inner,
    open: &[(u64, Vec<Undo>)],
    i: usize,
    in_file: &BTreeMap<u64, u32>,
    saved: &mut bool,
) -> Result<()> {
    let io = |e| Error::io(crate::undo_log::UNDO_LOG_FILE, e);
    if !*saved {
        let mut rec = Vec::new();
        for (trx, undos) in open {
            let have = in_file.get(trx).copied().unwrap_or(0);
            // Newest first in `undos`; the file keeps them in any order.
            for u in undos.iter().filter(|u| u.undo_no >= have) {
                rec.extend_from_slice(&undo_record(
                    *trx,
                    u.undo_no,
                    u.space,
                    &u.key,
                    u.old.as_deref(),
                ));
                if rec.len() >= 1 << 20 {
                    inner
                        .undo_log
                        .append(crate::undo_log::KIND_UNDO, &std::mem::take(&mut rec))
                        .map_err(io)?;
                }
            }
        }
        if !rec.is_empty() {
            inner
                .undo_log
                .append(crate::undo_log::KIND_UNDO, &rec)
                .map_err(io)?;
        }
        *saved = true;
    }
    *inner.recovering.lock() = open[i..].iter().map(|(t, _)| *t).collect();
    inner.checkpoint()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_records_round_trip() {
        let mut b = undo_record(7, 0, 3, b"key", Some(b"old"));
        b.extend(undo_record(7, 1, 3, b"k2", None));
        b.extend(commit_record(7));
        b.extend(prepared_record(8, 1 << 40 | 5));
        let v = parse_logical(&b).unwrap();
        assert_eq!(v.len(), 4);
        let u = v[0].undo.as_ref().unwrap();
        assert_eq!(
            (u.undo_no, u.space, &u.key[..], u.old.as_deref()),
            (0, 3, &b"key"[..], Some(&b"old"[..]))
        );
        assert!(v[1].undo.as_ref().unwrap().old.is_none());
        assert_eq!((v[2].kind, v[2].trx), (REC_COMMIT, 7));
        assert_eq!(
            (v[3].kind, v[3].trx, v[3].xid),
            (REC_PREPARED, 8, 1 << 40 | 5)
        );
        assert!(parse_logical(&b[..b.len() - 3]).is_none());
        assert!(parse_logical(&[9, 0, 0, 0, 0, 0, 0, 0, 0]).is_none());
    }

    fn undo(undo_no: u32, old: &[u8]) -> Option<Undo> {
        Some(Undo {
            undo_no,
            space: 1,
            key: b"k".to_vec(),
            old: Some(old.to_vec()),
        })
    }

    /// The log after a checkpoint: change 1 of trx 7 (change 0 precedes the checkpoint),
    /// then the checkpoint's copy of changes 0 and 1. Rollback must end at change 0's
    /// image, each change restored once.
    #[test]
    fn a_relogged_change_replaces_its_original() {
        let mut s = UndoSort::default();
        s.note(REC_UNDO, 7, undo(1, b"x1"), 0);
        s.note(REC_UNDO, 7, undo(0, b"x0"), 0);
        s.note(REC_UNDO, 7, undo(1, b"x1"), 0);
        let order: Vec<&[u8]> = s.open[&7]
            .values()
            .rev()
            .map(|u| u.old.as_deref().unwrap())
            .collect();
        assert_eq!(order, vec![&b"x1"[..], &b"x0"[..]]);
    }

    /// A checkpoint relogged trx 7's undo just after its commit record: nothing of it
    /// may be rolled back, and purge still gets its change once.
    #[test]
    fn undo_relogged_after_the_commit_is_ignored() {
        let mut s = UndoSort::default();
        s.note(REC_UNDO, 7, undo(0, b"x0"), 0);
        s.note(REC_COMMIT, 7, None, 0);
        s.note(REC_UNDO, 7, undo(0, b"x0"), 0);
        s.note(REC_UNDO, 8, undo(0, b"y0"), 0);
        s.note(REC_ROLLED_BACK, 8, None, 0);
        s.note(REC_UNDO, 8, undo(0, b"y0"), 0);
        assert!(s.open.is_empty());
        assert_eq!(s.owed.len(), 1);
    }

    /// A prepared transaction stays prepared through a relogged copy of its undo and
    /// prepare record; a commit after it ends that, and a stale relogged prepare after
    /// the commit is ignored.
    #[test]
    fn prepared_transactions_are_kept_apart() {
        let mut s = UndoSort::default();
        s.note(REC_UNDO, 9, undo(0, b"z0"), 0);
        s.note(REC_PREPARED, 9, None, 77);
        s.note(REC_UNDO, 9, undo(0, b"z0"), 0);
        s.note(REC_PREPARED, 9, None, 77);
        s.note(REC_UNDO, 10, undo(0, b"w0"), 0);
        s.note(REC_PREPARED, 10, None, 78);
        s.note(REC_COMMIT, 10, None, 0);
        s.note(REC_PREPARED, 10, None, 78);
        assert_eq!(s.prepared.iter().collect::<Vec<_>>(), vec![(&9, &77)]);
        assert_eq!(s.open[&9].len(), 1);
        assert_eq!(s.owed.len(), 1);
    }

    /// XA prepare records read back as they were written; one relogged after its
    /// transaction's rollback is stale; internal and XA prepares are kept apart.
    #[test]
    fn xa_prepare_records_round_trip_and_stay_apart() {
        let xa = strata_engine::xa_xid_bytes(-3, b"g", b"bq");
        let mut b = xa_prepared_record(11, &xa);
        b.extend(prepared_record(12, 5));
        b.extend(xa_prepared_record(13, &xa));
        b.extend(rolled_back_record(13));
        b.extend(xa_prepared_record(13, &xa));
        let mut s = UndoSort::default();
        for l in parse_logical(&b).unwrap() {
            s.note_logical(l);
        }
        assert_eq!(s.xa.iter().collect::<Vec<_>>(), vec![(&11, &xa)]);
        assert_eq!(s.prepared.iter().collect::<Vec<_>>(), vec![(&12, &5)]);
        // A malformed xid or a cut record is a malformed payload.
        let mut bad = xa_prepared_record(11, &xa);
        bad[11 + 4] = 9; // gtrid length past the end
        assert!(parse_logical(&bad).is_none());
        let cut = xa_prepared_record(11, &xa);
        assert!(parse_logical(&cut[..cut.len() - 1]).is_none());
    }
}
