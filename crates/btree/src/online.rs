//! Online ADD INDEX, as InnoDB builds a secondary index in place while other connections
//! keep reading and writing the table.
//!
//! The SQL layer holds the table's metadata lock exclusively while it asks for the build
//! ([`start`]), so no transaction that changed the table is still open; the build then
//! registers a **row log** for the table's space, and from then on every change of a
//! clustered record of that space (a new version written by INSERT, UPDATE or DELETE, a
//! version put back by a rollback) appends its clustered key to the log
//! ([`Inner::log_online`], called from the engine's write path, never from SQL). The SQL
//! layer downgrades its lock to an upgradable shared one and calls
//! [`IndexBuild::load`]: with a read view opened after the log started, the build reads
//! the clustered index once, turns each visible row into its entry of every new index,
//! sorts the entries in runs bounded by `innodb_sort_buffer_size`
//! ([`strata_storage::runfile`], spilling to `tmpdir`), merges them, checks UNIQUE keys
//! on neighbouring entries, and loads each new tree bottom-up ([`crate::bulk`]). The
//! tree is not in the space header yet, so nothing else reads or changes it.
//!
//! Then the SQL layer takes the exclusive lock again (no statement uses the table, and no
//! transaction that changed it is open) and calls [`IndexBuild::finish`]: for each
//! clustered key in the log, the entry the load put in (from the version its read view
//! saw) is compared with the entry of the row's latest version; stale ones are removed
//! first, then the missing ones inserted, checking UNIQUE keys against what the index
//! now holds (every entry left is current). So a row changed during the build, however
//! often and in whatever order, ends with exactly the entry of its final version. The
//! new roots go into the space header (one mini-transaction, redo-logged), and the
//! caller's catalog write commits the new definition. A crash before that write leaves
//! extra roots in the header, which the table's definition does not name and every
//! reader ignores.
//!
//! The log keeps clustered keys in memory, `[length u16][key]` each, up to
//! `innodb_online_alter_log_max_size` bytes; past it the build fails with 1799 at
//! `finish` (the writers never fail), as InnoDB's does.

use crate::bulk::BulkLoader;
use crate::row::RecHeader;
use crate::table::{key_text, BtreeTable, Layout};
use crate::tree::{PutMode, SH_NINDEX, SH_ROOTS};
use crate::{io_err, BtreeTrx, Inner};
use std::cmp::Ordering as CmpOrdering;
use std::ops::Bound;
use std::sync::Arc;
use strata_engine::*;
use strata_storage::runfile::Sorter;
use strata_storage::sync::{AtomicBool, Mutex, Ordering};
use strata_types::keycode::{encode_index_key, row_key_has_null};
use strata_types::IndexDef;

/// The clustered keys of rows changed in one space while an index is built on it.
pub(crate) struct RowLog {
    buf: Mutex<Vec<u8>>,
    max: usize,
    overflow: AtomicBool,
}

impl RowLog {
    fn new(max: usize) -> RowLog {
        RowLog {
            buf: Mutex::new(Vec::new()),
            max,
            overflow: AtomicBool::new(false),
        }
    }

    pub(crate) fn push(&self, ckey: &[u8]) {
        let mut b = self.buf.lock();
        if b.len() + 2 + ckey.len() > self.max || ckey.len() > u16::MAX as usize {
            self.overflow.store(true, Ordering::Release);
            return;
        }
        b.extend_from_slice(&(ckey.len() as u16).to_le_bytes());
        b.extend_from_slice(ckey);
    }

    /// Every key logged so far, sorted, each once; empties the log.
    fn take(&self) -> Vec<Vec<u8>> {
        let b = std::mem::take(&mut *self.buf.lock());
        let mut out = Vec::new();
        let mut at = 0;
        while at + 2 <= b.len() {
            let len = u16::from_le_bytes([b[at], b[at + 1]]) as usize;
            let Some(k) = b.get(at + 2..at + 2 + len) else {
                break;
            };
            out.push(k.to_vec());
            at += 2 + len;
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl Inner {
    /// The write path's hook: a clustered record of `space` changed. One atomic load
    /// when no index is being built.
    pub(crate) fn log_online(&self, space: u32, ckey: &[u8]) {
        if self.online_builds.load(Ordering::Acquire) == 0 {
            return;
        }
        if let Some(log) = self.online.read().get(&space) {
            log.push(ckey);
        }
    }

    fn register_log(&self, space: u32, log: Arc<RowLog>) -> bool {
        let mut m = self.online.write();
        if m.contains_key(&space) {
            return false;
        }
        m.insert(space, log);
        self.online_builds.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// Per tree of `lay`: the id an online build of it took as it finished (0: none).
    pub(crate) fn index_since(&self, lay: &Layout) -> Vec<u64> {
        let m = self.built_since.lock();
        if m.is_empty() {
            return Vec::new();
        }
        (0..lay.trees.len())
            .map(|t| m.get(&(lay.space, t)).copied().unwrap_or(0))
            .collect()
    }

    fn unregister_log(&self, space: u32) {
        if self.online.write().remove(&space).is_some() {
            self.online_builds.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Sort records: `[prefix length u16 LE][flags u8][entry key]`; the order is the key's.
const REC_HEAD: usize = 3;
/// Flag: one of the index's columns is NULL (never a duplicate of anything).
const HAS_NULL: u8 = 1;

fn by_key(a: &[u8], b: &[u8]) -> CmpOrdering {
    a[REC_HEAD..].cmp(&b[REC_HEAD..])
}

/// An entry the apply inserts into new index `j`: its key, the length of the index
/// columns' part, whether one of them is NULL, and the row's clustered key.
struct Insert {
    j: usize,
    key: Vec<u8>,
    plen: usize,
    null: bool,
    ckey: Vec<u8>,
}

/// An index build in progress on one table.
pub(crate) struct Build {
    table: Arc<BtreeTable>,
    /// The table's layout with the new trees (roots known after `load`).
    lay: Layout,
    /// Positions of the new indexes in `lay.def.indexes`.
    added: Vec<usize>,
    log: Arc<RowLog>,
    /// The build's own transaction: its read view is the load's snapshot, kept open
    /// until `finish` (so the versions it saw stay reachable).
    txn: Option<Txn>,
    tmpdir: std::path::PathBuf,
    interrupt: Interrupt,
    sort_buffer: usize,
    fill_factor: u32,
    /// Roots of the new trees, in `added` order, once loaded.
    roots: Vec<u32>,
    registered: bool,
}

/// Starts an online build of `new_def`'s extra indexes on `table` (see the module note);
/// None when `new_def` is not `table`'s definition plus secondary indexes at its end.
pub(crate) fn start(
    table: &BtreeTable,
    new_def: &TableDef,
    opts: &IndexBuildOptions,
) -> Option<Result<Box<dyn IndexBuild>>> {
    let old = &table.lay.def;
    let n_old = old.indexes.len();
    let same_rest = new_def.columns == old.columns
        && new_def.indexes.len() > n_old
        && new_def.indexes[..n_old] == old.indexes[..]
        && new_def.indexes[n_old..].iter().all(|ix| !ix.primary)
        && new_def.engine == old.engine;
    if !same_rest {
        return None;
    }
    let inner = &table.inner;
    let me = inner.table(table.lay.space)?;
    if !std::ptr::eq(Arc::as_ptr(&me), table) {
        // A retired handle: the open one is another.
        return Some(Err(Error::TableDefChanged));
    }
    let (max_log, sort_buffer, fill_factor) = {
        let c = inner.cfg.read();
        (
            c.online_alter_log_max_size,
            c.sort_buffer_size,
            c.fill_factor,
        )
    };
    let log = Arc::new(RowLog::new(max_log));
    if !inner.register_log(table.lay.space, log.clone()) {
        return Some(Err(Error::NotSupported(
            "two index builds on one table at once".into(),
        )));
    }
    let def = Arc::new(new_def.clone());
    let n_trees = Layout::n_trees(&def);
    let mut roots: Vec<u32> = table.lay.trees.iter().map(|t| t.root).collect();
    roots.resize(n_trees, 0);
    let lay = Layout::new(def, table.lay.space, &roots);
    Some(Ok(Box::new(Build {
        table: me,
        lay,
        added: (n_old..new_def.indexes.len()).collect(),
        log,
        txn: Some(Txn::new(
            Isolation::RepeatableRead,
            std::time::Duration::from_secs(31_536_000),
        )),
        tmpdir: opts.tmpdir.clone(),
        interrupt: opts.interrupt.clone(),
        sort_buffer,
        fill_factor,
        roots: Vec::new(),
        registered: true,
    })))
}

impl Build {
    fn inner(&self) -> &Arc<Inner> {
        &self.table.inner
    }

    fn io(&self, e: std::io::Error) -> Error {
        io_err(&self.lay.name, e)
    }

    fn txn(&self) -> Result<&Txn> {
        self.txn
            .as_ref()
            .ok_or_else(|| Error::Internal("index build already finished".into()))
    }

    fn index(&self, j: usize) -> &IndexDef {
        &self.lay.def.indexes[self.added[j]]
    }

    /// The 1062 for a new unique index `j` whose value row `ckey` has.
    fn duplicate(&self, j: usize, ckey: &[u8]) -> Error {
        let ix = self.index(j);
        let st = &self.inner().st;
        let value = self
            .lay
            .clustered()
            .get(st, ckey)
            .ok()
            .flatten()
            .and_then(|v| self.lay.decode(st, &v).ok())
            .map(|row| key_text(ix, &row))
            .unwrap_or_default();
        Error::DuplicateKey {
            value,
            key: format!("{}.{}", self.lay.def.name, ix.name),
        }
    }

    /// The entry key of new index `j` for `row`: (key, prefix length, has NULL).
    fn entry(&self, j: usize, row: &[Value], ckey: &[u8]) -> (Vec<u8>, usize, bool) {
        let ix = self.index(j);
        let mut k = Vec::with_capacity(32);
        encode_index_key(&mut k, &self.lay.def, ix, row);
        let plen = k.len();
        k.extend_from_slice(ckey);
        (k, plen, row_key_has_null(&self.lay.def, ix, row))
    }

    fn tree(&self, j: usize) -> crate::tree::Tree {
        crate::tree::Tree {
            space: self.lay.space,
            root: self.roots[j],
            index_no: self.lay.tree_of_index(self.added[j]) as u16,
        }
    }

    /// The row `ckey` as the build's read view sees it (None: not visible).
    fn snapshot_row(&self, ckey: &[u8]) -> Result<Option<Vec<Value>>> {
        let range = KeyRange {
            start: Bound::Included(ckey.to_vec()),
            end: Bound::Included(ckey.to_vec()),
        };
        let mut out = None;
        self.table
            .index_scan(self.txn()?, 0, &range, false, &mut |_, row| {
                out = Some(row.to_vec());
                Ok(Flow::Stop)
            })?;
        Ok(out)
    }

    /// The row `ckey`'s latest version (None: absent or delete-marked).
    fn latest_row(&self, ckey: &[u8]) -> Result<Option<Vec<Value>>> {
        let st = &self.inner().st;
        let Some(v) = self.lay.clustered().get(st, ckey).map_err(|e| self.io(e))? else {
            return Ok(None);
        };
        if RecHeader::read(&v).is_none_or(|h| h.deleted()) {
            return Ok(None);
        }
        self.lay.decode(st, &v).map(Some)
    }
}

impl IndexBuild for Build {
    fn load(&mut self) -> Result<u64> {
        let max_key = crate::tree::max_key(self.inner().st.pool.page_size());
        let mut sorters: Vec<Sorter> = self
            .added
            .iter()
            .map(|_| Sorter::new(self.sort_buffer, &self.tmpdir, by_key))
            .collect();
        let where_ = format!("an index build's sort runs in {}", self.tmpdir.display());
        let tmp_err = |e: std::io::Error| Error::io(&where_, e);
        let mut rows = 0u64;
        let mut rec = Vec::with_capacity(64);
        {
            let this = &*self;
            let txn = this.txn()?;
            this.table.scan(txn, &mut |row_id, row| {
                rows += 1;
                if rows.is_multiple_of(4096) {
                    this.interrupt.check()?;
                }
                let ckey = this.lay.clustered_key(row, row_id);
                for (j, s) in sorters.iter_mut().enumerate() {
                    let (k, plen, null) = this.entry(j, row, &ckey);
                    if k.len() > max_key {
                        return Err(Error::KeyTooLong(max_key));
                    }
                    rec.clear();
                    rec.extend_from_slice(&(plen as u16).to_le_bytes());
                    rec.push(if null { HAS_NULL } else { 0 });
                    rec.extend_from_slice(&k);
                    s.push(&rec).map_err(tmp_err)?;
                }
                Ok(Flow::Continue)
            })?;
        }
        let st = &self.table.inner.st;
        for (j, s) in sorters.into_iter().enumerate() {
            let unique = self.index(j).unique;
            let tree_no = self.lay.tree_of_index(self.added[j]) as u16;
            let mut loader = BulkLoader::new(st, self.lay.space, tree_no, self.fill_factor);
            let mut merged = s.finish().map_err(tmp_err)?;
            let mut prev: Option<Vec<u8>> = None;
            while let Some(r) = merged.next_record().map_err(tmp_err)? {
                let plen = u16::from_le_bytes([r[0], r[1]]) as usize;
                let key = &r[REC_HEAD..];
                if unique && r[2] & HAS_NULL == 0 {
                    if let Some(p) = &prev {
                        let pplen = u16::from_le_bytes([p[0], p[1]]) as usize;
                        if p[2] & HAS_NULL == 0 && p[REC_HEAD..REC_HEAD + pplen] == key[..plen] {
                            return Err(self.duplicate(j, &key[plen..]));
                        }
                    }
                }
                loader.add(key, &key[plen..]).map_err(|e| self.io(e))?;
                prev = Some(r);
            }
            let root = loader.finish().map_err(|e| self.io(e))?;
            self.roots.push(root);
        }
        // The new pages go to disk now, while other statements still run: the swap's
        // checkpoint (the catalog flushes the table before it reopens it) then has little
        // left to write under the exclusive lock.
        self.table.inner.checkpoint()?;
        Ok(rows)
    }

    fn finish(&mut self) -> Result<()> {
        if self.roots.len() != self.added.len() {
            return Err(Error::Internal(
                "index build finished before loading".into(),
            ));
        }
        if self.log.overflow.load(Ordering::Acquire) {
            return Err(Error::OnlineLogTooBig(self.index(0).name.clone()));
        }
        let st = &self.table.inner.st;
        let page_size = st.pool.page_size();
        let max_key = crate::tree::max_key(page_size);
        // Stale entries out first, so every entry left is current when the missing ones
        // go in and UNIQUE keys are checked against them.
        let mut inserts: Vec<Insert> = Vec::new();
        for ckey in self.log.take() {
            st.log.free_check();
            let seen = self.snapshot_row(&ckey)?;
            let latest = self.latest_row(&ckey)?;
            for j in 0..self.added.len() {
                let old = seen.as_ref().map(|r| self.entry(j, r, &ckey));
                let new = latest.as_ref().map(|r| self.entry(j, r, &ckey));
                if old.as_ref().map(|o| &o.0) == new.as_ref().map(|n| &n.0) {
                    continue;
                }
                if let Some((k, ..)) = &old {
                    self.tree(j).remove(st, k, &[]).map_err(|e| self.io(e))?;
                }
                if let Some((k, plen, null)) = new {
                    if k.len() > max_key {
                        return Err(Error::KeyTooLong(max_key));
                    }
                    inserts.push(Insert {
                        j,
                        key: k,
                        plen,
                        null,
                        ckey: ckey.clone(),
                    });
                }
            }
        }
        for Insert {
            j,
            key: k,
            plen,
            null,
            ckey,
        } in inserts
        {
            let tree = self.tree(j);
            if self.index(j).unique && !null {
                let prefix = k[..plen].to_vec();
                let end = match strata_types::keycode::prefix_successor(&prefix) {
                    Some(s) => Bound::Excluded(s),
                    None => Bound::Unbounded,
                };
                let mut clash = false;
                tree.range(st, &Bound::Included(prefix), &end, false, &mut |batch| {
                    clash |= batch.iter().any(|(_, other)| other != &ckey[..]);
                    Ok(!clash)
                })
                .map_err(|e| self.io(e))?;
                if clash {
                    return Err(self.duplicate(j, &ckey));
                }
            }
            // Already there (the load saw the same entry): nothing to do.
            tree.put(st, &k, &ckey, PutMode::Insert, &[])
                .map_err(|e| self.io(e))?;
        }
        // The new roots go into the space header: every tree of the new definition.
        let roots: Vec<u32> = self
            .lay
            .trees
            .iter()
            .take(self.lay.trees.len() - self.added.len())
            .map(|t| t.root)
            .chain(self.roots.iter().copied())
            .collect();
        if crate::tree::SH_ROOTS + 4 * roots.len() > page_size {
            return Err(Error::Internal(format!(
                "{} indexes do not fit in the space header",
                roots.len()
            )));
        }
        let mut mtr = crate::mtr::Mtr::new(st);
        let hdr = mtr
            .x(strata_storage::bufpool::PageId {
                space: self.lay.space,
                page_no: 0,
            })
            .map_err(|e| self.io(e))?;
        {
            let p = mtr.get_mut(hdr);
            crate::page::put_u16(p, SH_NINDEX, roots.len() as u16);
            for (i, r) in roots.iter().enumerate() {
                crate::page::put_u32(p, SH_ROOTS + 4 * i, *r);
            }
        }
        let lsn = mtr.commit();
        st.log
            .flush_up_to(lsn)
            .map_err(|e| Error::io("ib_logfile0", e))?;
        // An id taken now: read views made before it may not use the new indexes (their
        // entries are for the latest versions only); views made after see those.
        let since = BtreeTrx::with(&self.table.inner, self.txn()?, |t| Ok(t.ensure_id()))?;
        {
            let mut m = self.table.inner.built_since.lock();
            for &pos in &self.added {
                m.insert((self.lay.space, self.lay.tree_of_index(pos)), since);
            }
        }
        self.stop();
        Ok(())
    }
}

impl Build {
    /// Stops logging and ends the build's transaction (its read view).
    fn stop(&mut self) {
        if self.registered {
            self.registered = false;
            self.table.inner.unregister_log(self.lay.space);
        }
        if let Some(t) = self.txn.take() {
            let _ = t.rollback();
        }
    }
}

impl Drop for Build {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_log_keeps_each_key_once_and_stops_at_its_limit() {
        let log = RowLog::new(64);
        for k in [&b"b"[..], b"a", b"b", b"c"] {
            log.push(k);
        }
        assert!(!log.overflow.load(Ordering::Acquire));
        assert_eq!(
            log.take(),
            vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
        );
        for _ in 0..40 {
            log.push(b"xyz");
        }
        assert!(log.overflow.load(Ordering::Acquire));
    }
}
