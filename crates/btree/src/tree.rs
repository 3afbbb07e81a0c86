//! One B+tree (the clustered index or a secondary index) inside a tablespace: descents
//! with latch coupling, inserts and in-place updates that split pages bottom-up, record
//! removal, and range reads in batches.
//!
//! Latching, InnoDB's way: every descent goes top-down, so no two threads wait on each
//! other in a cycle. Readers S-latch a child before releasing its parent. A writer first
//! tries the optimistic path (S latches down, X on the leaf only); when the leaf would have
//! to split it starts over pessimistically, X-latching from the root and releasing every
//! ancestor as soon as a child is safe (has room for one more separator), so only the part
//! of the path that may change stays latched. The space header (page 0, the page
//! allocator) is always latched last. Roots never move: a root split moves the root's
//! records into two new pages. A split divides a node's bytes in half, except for
//! sequential inserts, which InnoDB too splits at the insertion point: an insert past the
//! end of a leaf that is the rightmost at its level, or right after the leaf's previous
//! insert ([`LastInserts`]), starts the new node with itself and the records after it
//! (none, at the end), and the ancestors that split with it do the same at their end, so
//! ascending keys fill their pages even when several ascending runs interleave in one
//! tree (a table loaded in parallel parts, each run meeting the next run's first keys).
//! Pages are never merged; empty leaves stay linked and reads skip them.
//!
//! Range reads never run user code under a page latch: they copy one leaf's matching
//! records, release the latch, hand the batch out, and find the next leaf by descending
//! again from the last key (so a split in between cannot make them skip or repeat rows).
//! Reads take no mini-transaction: they hold the buffer pool's S-latched page guards
//! directly. An ascending range read first tries the leaf the thread's last range read
//! of the same tree ended in ([`LeafHints`]): a join's probes of an index often land in
//! the leaf the previous probe read.

use crate::mtr::{Mtr, Slot, Storage};
use crate::page::{self, get_u16, get_u32, put_u16, put_u32};
use std::io;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use strata_storage::bufpool::PageId;
use strata_storage::bufpool::PageRead;

/// Space header fields (page 0); see docs/format/btree.md.
pub const SH_MAGIC: usize = 32;
pub const SH_VERSION: usize = 40;
pub const SH_PAGE_SIZE: usize = 44;
pub const SH_NEXT_FREE: usize = 48;
pub const SH_NINDEX: usize = 52;
pub const SH_ROOTS: usize = 54;
pub const MAGIC: &[u8; 8] = b"STRBTSP1";

#[derive(Clone, Copy, Debug)]
pub struct Tree {
    pub space: u32,
    pub root: u32,
    pub index_no: u16,
}

/// Where each leaf took its last insert: InnoDB keeps this as PAGE_LAST_INSERT in the
/// page header; here it is a small table in memory, shared by every tree, a slot per hash
/// of (space, page) holding a tag of the page and the slot the record went to. It only
/// steers where a split divides a page (never what the tree holds), so a slot two pages
/// share, or a restart, at worst gives a half-and-half split where an insertion-point one
/// would have packed better.
struct LastInserts([AtomicU64; 256]);

static LAST_INSERTS: LastInserts = LastInserts([const { AtomicU64::new(0) }; 256]);

impl LastInserts {
    /// The page's slot in the table and its tag (high 48 bits, never 0).
    fn slot(space: u32, page_no: u32) -> (&'static AtomicU64, u64) {
        let id = (space as u64) << 32 | page_no as u64;
        let h = id.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (&LAST_INSERTS.0[(h >> 56) as usize], (h | 1 << 16) & !0xFFFF)
    }

    /// Records that an insert into the leaf went to slot `pos`.
    fn note(space: u32, page_no: u32, pos: usize) {
        let (slot, tag) = Self::slot(space, page_no);
        slot.store(tag | (pos as u64 & 0xFFFF), Ordering::Relaxed);
    }

    /// The slot the leaf's last insert went to, if known.
    fn last(space: u32, page_no: u32) -> Option<usize> {
        let (slot, tag) = Self::slot(space, page_no);
        let v = slot.load(Ordering::Relaxed);
        (v & !0xFFFF == tag).then_some((v & 0xFFFF) as usize)
    }
}

/// The leaf each thread's last ascending range read of a tree ended in: a join probes
/// an index with keys that often lie close together (TPC-H's EXISTS on lineitem by
/// `l_orderkey`, a nested loop over an outer table in key order), and the next range
/// then usually lies in the same leaf, found without descending from the root. A small
/// direct-mapped table per thread, keyed by the tree's space, root and number (a tree
/// rebuilt under the same number has a new root). A hint is only a guess: it is used
/// when the page, S-latched, is a leaf of this tree's number whose first key is at or
/// below the range's start and which holds a key past its end. Every key between two
/// keys of one leaf is in that leaf (leaves hold disjoint key intervals, and a page of
/// a tree is never freed or given to another tree), so the leaf then holds the whole
/// range.
struct LeafHints;

const LEAF_HINTS: usize = 16;

thread_local! {
    static LEAF_HINT: [std::cell::Cell<(u64, u32, u32)>; LEAF_HINTS] =
        const { [const { std::cell::Cell::new((0, 0, 0)) }; LEAF_HINTS] };
}

impl LeafHints {
    fn tag(t: &Tree) -> (usize, u64) {
        let tag = (t.space as u64) << 16 | t.index_no as u64 | 1 << 63;
        let h = (tag ^ (t.root as u64) << 20).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 59) as usize % LEAF_HINTS, tag)
    }

    fn get(t: &Tree) -> Option<u32> {
        let (i, tag) = Self::tag(t);
        LEAF_HINT
            .try_with(|h| {
                let (g, root, page) = h[i].get();
                (g == tag && root == t.root).then_some(page)
            })
            .ok()
            .flatten()
    }

    fn put(t: &Tree, page_no: u32) {
        let (i, tag) = Self::tag(t);
        let _ = LEAF_HINT.try_with(|h| h[i].set((tag, t.root, page_no)));
    }
}

/// Records read from one leaf, in the order they are to be read: a copy of the page (one
/// buffer, whatever the number of records), or, when the records in range are a small
/// part of it (an index lookup reading a few rows), only those records packed one after
/// another, so a lookup does not copy a whole page to read one record of it.
pub struct Batch {
    page: Vec<u8>,
    /// Each record: where its key starts in `page`, the key's length, the value's (the
    /// value follows the key).
    recs: Vec<(usize, usize, usize)>,
    /// The leaf's max transaction id when the records were copied (`page::max_trx`).
    max_trx: u64,
}

thread_local! {
    /// The page buffer of this thread's last dropped [`Batch`], reused by its next one.
    /// A page-sized allocation per leaf was malloc's most expensive request on the read
    /// path (too big for glibc's per-thread cache, it takes an arena lock shared with
    /// other threads and consolidates the arena's small chunks first): a fifth of the
    /// server's CPU in sysbench oltp_read_only at 256 threads went to malloc and free.
    /// One page per connection thread at most.
    static SPARE_PAGE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// The record list of this thread's last dropped [`Batch`], likewise.
    static SPARE_RECS: std::cell::Cell<Vec<(usize, usize, usize)>> =
        const { std::cell::Cell::new(Vec::new()) };
}

impl Drop for Batch {
    fn drop(&mut self) {
        // A leaf holds at most a page's worth of records: the list stays small.
        if self.recs.capacity() > 0 {
            let recs = std::mem::take(&mut self.recs);
            let _ = SPARE_RECS.try_with(|spare| {
                let old = spare.take();
                spare.set(if old.capacity() >= recs.capacity() {
                    old
                } else {
                    recs
                });
            });
        }
        if self.page.capacity() > 0 {
            let page = std::mem::take(&mut self.page);
            // `try_with`: a batch dropped while the thread exits has nowhere to go.
            let _ = SPARE_PAGE.try_with(|spare| {
                let old = spare.take();
                spare.set(if old.capacity() >= page.capacity() {
                    old
                } else {
                    page
                });
            });
        }
    }
}

impl Batch {
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.recs
            .iter()
            .map(|&(s, k, v)| (&self.page[s..s + k], &self.page[s + k..s + k + v]))
    }
    pub fn len(&self) -> usize {
        self.recs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }
    /// The leaf's max transaction id as it was when these records were read, under the
    /// same latch (`page::max_trx`).
    pub fn max_trx(&self) -> u64 {
        self.max_trx
    }
    /// Takes the slots of leaf `p` in `order` while their keys are `in_range`; also
    /// says whether it stopped at a key out of range (the range ends in this leaf).
    /// Both of the batch's vectors come from this thread's last dropped batch, so a
    /// lookup allocates nothing once its thread has read a leaf before.
    fn collect(
        p: &[u8],
        order: impl Iterator<Item = usize>,
        in_range: impl Fn(&[u8]) -> bool,
    ) -> (Batch, bool) {
        let mut recs = SPARE_RECS
            .try_with(|spare| spare.take())
            .unwrap_or_default();
        recs.clear();
        let mut done = false;
        let mut bytes = 0;
        for i in order {
            let (s, k, v) = page::rec_span(p, i);
            if !in_range(&p[s..s + k]) {
                done = true;
                break;
            }
            bytes += k + v;
            recs.push((s, k, v));
        }
        let max_trx = page::max_trx(p);
        if recs.is_empty() {
            return (
                Batch {
                    page: Vec::new(),
                    recs,
                    max_trx,
                },
                done,
            );
        }
        let mut page = SPARE_PAGE
            .try_with(|spare| spare.take())
            .unwrap_or_default();
        page.clear();
        if bytes * 4 < p.len() {
            for r in recs.iter_mut() {
                let at = page.len();
                page.extend_from_slice(&p[r.0..r.0 + r.1 + r.2]);
                r.0 = at;
            }
        } else {
            page.extend_from_slice(p);
        }
        (
            Batch {
                page,
                recs,
                max_trx,
            },
            done,
        )
    }

    fn last_key(&self) -> Option<&[u8]> {
        self.recs.last().map(|&(s, k, _)| &self.page[s..s + k])
    }
}

/// How [`Tree::put`] treats an existing record with the same key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PutMode {
    /// Insert only; an existing key is left alone and reported.
    Insert,
    /// Insert, or replace the existing value.
    Upsert,
}

#[derive(Debug, PartialEq, Eq)]
pub enum PutOutcome {
    Inserted,
    Replaced,
    /// [`PutMode::Insert`] found the key: its current value.
    Exists(Vec<u8>),
}

/// Largest key and value stored in a node, so a split always leaves room.
pub fn max_key(page_size: usize) -> usize {
    page_size / 8 - 16
}
pub fn max_value(page_size: usize) -> usize {
    page_size / 8
}

fn bad(space: u32, page_no: u32, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("page {page_no} of space {space}: {what}"),
    )
}

/// Where a read-only descent puts a bound of the leaf's key range it finds on the way
/// down: a buffer the caller reuses from one descent to the next (a range read descends
/// once per leaf; copying a separator into a fresh vector at every level was a malloc
/// per level), and whether the bound is set (unset: open).
#[derive(Default)]
struct LeafBound {
    key: Vec<u8>,
    set: bool,
}

impl LeafBound {
    fn take_from(&mut self, k: &[u8]) {
        self.key.clear();
        self.key.extend_from_slice(k);
        self.set = true;
    }
}

impl Tree {
    fn pid(&self, page_no: u32) -> PageId {
        PageId {
            space: self.space,
            page_no,
        }
    }

    fn check_node(&self, mtr: &Mtr, s: Slot) -> io::Result<()> {
        self.check_page(mtr.get(s), mtr.id(s))
    }

    fn check_page(&self, p: &[u8], id: PageId) -> io::Result<()> {
        if !page::is_node(p) || page::index_no(p) != self.index_no {
            return Err(bad(id.space, id.page_no, "not a node of this index"));
        }
        Ok(())
    }

    /// Descends from the root to a leaf, S-latching each child before releasing its
    /// parent (latch coupling); `pick` chooses the child slot in each internal node.
    /// Reads need no mini-transaction: the pages are held as plain S-latched buffer-pool
    /// guards, the child's taken before the parent's is dropped. Fills `lower` and
    /// `upper` (when given) with the bounds of the leaf's key range: inclusive lower,
    /// exclusive upper.
    fn descend(
        &self,
        st: &Storage,
        pick: impl Fn(&[u8]) -> usize,
        mut lower: Option<&mut LeafBound>,
        mut upper: Option<&mut LeafBound>,
    ) -> io::Result<PageRead> {
        for b in [lower.as_deref_mut(), upper.as_deref_mut()]
            .into_iter()
            .flatten()
        {
            b.set = false;
        }
        let mut cur = st.pool.read(self.pid(self.root))?;
        loop {
            self.check_page(&cur, cur.id())?;
            if page::is_leaf(&cur) {
                return Ok(cur);
            }
            let i = pick(&cur);
            if i > 0 {
                if let Some(l) = lower.as_deref_mut() {
                    l.take_from(page::key(&cur, i));
                }
            }
            if i + 1 < page::n_slots(&cur) {
                if let Some(u) = upper.as_deref_mut() {
                    u.take_from(page::key(&cur, i + 1));
                }
            }
            let child = page::child(&cur, i);
            // Assigning drops the parent's guard only after the child's is taken.
            cur = st.pool.read(self.pid(child))?;
        }
    }

    /// The leaf that holds `key`, without the bounds of its range: a point lookup's
    /// descent.
    fn leaf_only(&self, st: &Storage, key: &[u8]) -> io::Result<PageRead> {
        self.descend(st, |p| page::child_slot(p, key), None, None)
    }

    /// The value under `key`, trying the leaf page `hint` first (the adaptive hash
    /// index's guess, which may be stale: a page is trusted only if it is a leaf of this
    /// index holding the key). Returns the value and the leaf that held it.
    pub fn get_hinted(
        &self,
        st: &Storage,
        key: &[u8],
        hint: Option<u32>,
    ) -> io::Result<(Option<Vec<u8>>, u32)> {
        if let Some(h) = hint {
            let p = st.pool.read(self.pid(h))?;
            if page::is_node(&p) && page::is_leaf(&p) && page::index_no(&p) == self.index_no {
                if let Ok(i) = page::search(&p, key) {
                    return Ok((Some(page::val(&p, i).to_vec()), h));
                }
            }
        }
        let p = self.leaf_only(st, key)?;
        let no = p.id().page_no;
        Ok((
            page::search(&p, key)
                .ok()
                .map(|i| page::val(&p, i).to_vec()),
            no,
        ))
    }

    /// The value stored under `key`, if any.
    pub fn get(&self, st: &Storage, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
        self.get_with(st, key, |v| v.to_vec())
    }

    /// `f` of the value stored under `key`, if any, called while the leaf is S-latched
    /// (so a reader can decode the record in place instead of copying it out); `f` must
    /// not latch pages itself.
    pub fn get_with<R>(
        &self,
        st: &Storage,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
    ) -> io::Result<Option<R>> {
        let p = self.leaf_only(st, key)?;
        Ok(page::search(&p, key).ok().map(|i| f(page::val(&p, i))))
    }

    /// Reads the records in `(start, end)` in batches, one leaf at a time, ascending or
    /// descending; `f` returns false to stop.
    pub fn range(
        &self,
        st: &Storage,
        start: &Bound<Vec<u8>>,
        end: &Bound<Vec<u8>>,
        reverse: bool,
        f: &mut dyn FnMut(&Batch) -> io::Result<bool>,
    ) -> io::Result<()> {
        let above_start = |k: &[u8]| match start {
            Bound::Unbounded => true,
            Bound::Included(s) => k >= s.as_slice(),
            Bound::Excluded(s) => k > s.as_slice(),
        };
        let below_end = |k: &[u8]| match end {
            Bound::Unbounded => true,
            Bound::Included(e) => k <= e.as_slice(),
            Bound::Excluded(e) => k < e.as_slice(),
        };
        if !reverse {
            // `from`: every key >= from is still to be read.
            let mut from: Vec<u8> = match start {
                Bound::Unbounded => Vec::new(),
                Bound::Included(s) => s.clone(),
                Bound::Excluded(s) => successor(s),
            };
            if !matches!(end, Bound::Unbounded) {
                if let Some(h) = LeafHints::get(self) {
                    // A page the hint names that cannot be read is only a wrong guess.
                    if let Ok(p) = st.pool.read(self.pid(h)) {
                        if page::is_node(&p)
                            && page::is_leaf(&p)
                            && page::index_no(&p) == self.index_no
                            && page::n_slots(&p) > 0
                            && page::key(&p, 0) <= from.as_slice()
                        {
                            let first = page::search(&p, &from).unwrap_or_else(|i| i);
                            let (batch, done) =
                                Batch::collect(&p, first..page::n_slots(&p), below_end);
                            drop(p);
                            if done {
                                if !batch.is_empty() {
                                    f(&batch)?;
                                }
                                return Ok(());
                            }
                        }
                    }
                }
            }
            let mut upper = LeafBound::default();
            loop {
                let (batch, done) = {
                    let p =
                        self.descend(st, |p| page::child_slot(p, &from), None, Some(&mut upper))?;
                    let first = page::search(&p, &from).unwrap_or_else(|i| i);
                    let (batch, done) = Batch::collect(&p, first..page::n_slots(&p), below_end);
                    if done {
                        LeafHints::put(self, p.id().page_no);
                    }
                    (batch, done)
                };
                if !batch.is_empty() && !f(&batch)? {
                    return Ok(());
                }
                if done || !upper.set {
                    return Ok(());
                }
                // Go on from the successor of the last key read, or from the leaf's
                // upper bound when that is further (an empty leaf, or one whose records
                // all came before `from`).
                match batch.last_key() {
                    Some(last) if successor_gt(last, &upper.key) => {
                        from.clear();
                        from.extend_from_slice(last);
                        from.push(0);
                    }
                    _ => {
                        from.clear();
                        from.extend_from_slice(&upper.key);
                    }
                }
                if !below_end(&from) && !matches!(end, Bound::Unbounded) {
                    return Ok(());
                }
            }
        } else {
            // `before`: every key < before is still to be read (None: all keys).
            let mut before: Option<Vec<u8>> = match end {
                Bound::Unbounded => None,
                Bound::Included(e) => Some(successor(e)),
                Bound::Excluded(e) => Some(e.clone()),
            };
            let mut lower = LeafBound::default();
            loop {
                let (batch, done) = {
                    let p = match &before {
                        // The leaf holding keys just below `b`.
                        Some(b) => self.descend(
                            st,
                            |p| {
                                let i = page::child_slot(p, b);
                                if i > 0 && page::key(p, i) >= b.as_slice() {
                                    i - 1
                                } else {
                                    i
                                }
                            },
                            Some(&mut lower),
                            None,
                        )?,
                        // The rightmost leaf.
                        None => self.descend(
                            st,
                            |p| page::n_slots(p).saturating_sub(1),
                            Some(&mut lower),
                            None,
                        )?,
                    };
                    let last = match &before {
                        Some(b) => page::search(&p, b).unwrap_or_else(|i| i),
                        None => page::n_slots(&p),
                    };
                    Batch::collect(&p, (0..last).rev(), above_start)
                };
                if !batch.is_empty() && !f(&batch)? {
                    return Ok(());
                }
                if done || !lower.set {
                    return Ok(());
                }
                let b = before.get_or_insert_with(Vec::new);
                b.clear();
                match batch.last_key() {
                    Some(last) if last < lower.key.as_slice() => b.extend_from_slice(last),
                    _ => b.extend_from_slice(&lower.key),
                }
            }
        }
    }

    /// Optimistic descent: S latches on internal nodes, X on the leaf.
    fn leaf_x(&self, mtr: &mut Mtr, key: &[u8]) -> io::Result<Slot> {
        let root = mtr.s(self.pid(self.root))?;
        self.check_node(mtr, root)?;
        if page::is_leaf(mtr.get(root)) {
            // A one-level tree: the root is the leaf; take it X instead.
            mtr.release(root);
            let r = mtr.x(self.pid(self.root))?;
            self.check_node(mtr, r)?;
            if page::is_leaf(mtr.get(r)) {
                return Ok(r);
            }
            // It split meanwhile: fall through to the general descent.
            mtr.release(r);
            return self.leaf_x(mtr, key);
        }
        let mut cur = root;
        loop {
            let p = mtr.get(cur);
            let child = page::child(p, page::child_slot(p, key));
            let child_is_leaf = page::level(p) == 1;
            let next = if child_is_leaf {
                mtr.x(self.pid(child))?
            } else {
                mtr.s(self.pid(child))?
            };
            mtr.release(cur);
            cur = next;
            self.check_node(mtr, cur)?;
            if child_is_leaf {
                return Ok(cur);
            }
        }
    }

    /// Inserts or replaces `key → val` (one mini-transaction, which also carries
    /// `logical`, e.g. the undo record of the row change). Returns the outcome and the
    /// LSN the change was logged at. The leaf's max transaction id becomes unknown
    /// (`page::MAX_TRX_UNKNOWN`): a secondary entry is put with [`Tree::put_stamped`].
    pub fn put(
        &self,
        st: &Storage,
        key: &[u8],
        val: &[u8],
        mode: PutMode,
        logical: &[u8],
    ) -> io::Result<(PutOutcome, u64)> {
        self.put_stamped(st, key, val, mode, logical, page::MAX_TRX_UNKNOWN)
    }

    /// [`Tree::put`] by transaction `trx`: the leaf the record lands on gets a max
    /// transaction id ≥ `trx` (also when [`PutMode::Insert`] finds the key already
    /// there: a stale entry that a row takes back is live again from `trx` on).
    pub fn put_stamped(
        &self,
        st: &Storage,
        key: &[u8],
        val: &[u8],
        mode: PutMode,
        logical: &[u8],
        trx: u64,
    ) -> io::Result<(PutOutcome, u64)> {
        let page_size = st.pool.page_size();
        if key.len() > max_key(page_size) || val.len() > max_value(page_size) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "record too large for a page",
            ));
        }
        // Optimistic: only the leaf changes.
        {
            let mut mtr = Mtr::new(st);
            let leaf = self.leaf_x(&mut mtr, key)?;
            let p = mtr.get(leaf);
            match page::search(p, key) {
                Ok(i) => {
                    if mode == PutMode::Insert {
                        let existing = page::val(p, i).to_vec();
                        if page::max_trx(p) >= trx {
                            return Ok((PutOutcome::Exists(existing), 0));
                        }
                        page::raise_max_trx(mtr.get_mut(leaf), trx);
                        mtr.log_logical(logical);
                        return Ok((PutOutcome::Exists(existing), mtr.commit()));
                    }
                    let old = page::val(p, i).len();
                    if page::free_space(p) + old >= val.len() {
                        page::raise_max_trx(mtr.get_mut(leaf), trx);
                        page::replace_val(mtr.get_mut(leaf), i, val);
                        mtr.log_logical(logical);
                        return Ok((PutOutcome::Replaced, mtr.commit()));
                    }
                }
                Err(i) => {
                    if page::fits(p, key.len(), val.len()) {
                        LastInserts::note(self.space, mtr.id(leaf).page_no, i);
                        page::raise_max_trx(mtr.get_mut(leaf), trx);
                        page::insert_at(mtr.get_mut(leaf), i, key, val);
                        mtr.log_logical(logical);
                        return Ok((PutOutcome::Inserted, mtr.commit()));
                    }
                }
            }
        }
        self.put_pessimistic(st, key, val, mode, logical, trx)
    }

    fn put_pessimistic(
        &self,
        st: &Storage,
        key: &[u8],
        val: &[u8],
        mode: PutMode,
        logical: &[u8],
        trx: u64,
    ) -> io::Result<(PutOutcome, u64)> {
        let page_size = st.pool.page_size();
        let sep_room = page::rec_space(max_key(page_size), 4);
        let mut mtr = Mtr::new(st);
        // X-latch the path, keeping only the unsafe tail of it.
        let mut path: Vec<Slot> = Vec::new();
        let mut cur = mtr.x(self.pid(self.root))?;
        loop {
            self.check_node(&mtr, cur)?;
            let p = mtr.get(cur);
            let safe = page::free_space(p) >= sep_room + page::rec_space(key.len(), val.len());
            let leaf = page::is_leaf(p);
            let child = (!leaf).then(|| page::child(p, page::child_slot(p, key)));
            if safe {
                // `cur` can absorb a separator (or the record itself): ancestors are safe.
                for s in path.drain(..) {
                    mtr.release(s);
                }
            }
            path.push(cur);
            match child {
                None => break,
                Some(c) => cur = mtr.x(self.pid(c))?,
            }
        }
        let leaf = cur;
        let p = mtr.get(leaf);
        let (outcome, pos) = match page::search(p, key) {
            Ok(i) => {
                if mode == PutMode::Insert {
                    let existing = page::val(p, i).to_vec();
                    if page::max_trx(p) >= trx {
                        return Ok((PutOutcome::Exists(existing), 0));
                    }
                    page::raise_max_trx(mtr.get_mut(leaf), trx);
                    mtr.log_logical(logical);
                    return Ok((PutOutcome::Exists(existing), mtr.commit()));
                }
                page::remove_at(mtr.get_mut(leaf), i);
                (PutOutcome::Replaced, i)
            }
            Err(i) => (PutOutcome::Inserted, i),
        };
        // Raised before a split, which hands the bound on to the new page.
        page::raise_max_trx(mtr.get_mut(leaf), trx);
        if page::fits(mtr.get(leaf), key.len(), val.len()) {
            LastInserts::note(self.space, mtr.id(leaf).page_no, pos);
            page::insert_at(mtr.get_mut(leaf), pos, key, val);
        } else {
            self.split_and_insert(&mut mtr, &path, key, val)?;
        }
        mtr.log_logical(logical);
        Ok((outcome, mtr.commit()))
    }

    /// Splits the last page of `path` (a leaf) and as many ancestors as needed, then
    /// inserts `key → val` into the right leaf. Every page in `path` is X-latched, and
    /// the first one either has room for a separator or is the root.
    fn split_and_insert(
        &self,
        mtr: &mut Mtr,
        path: &[Slot],
        key: &[u8],
        val: &[u8],
    ) -> io::Result<()> {
        // Insert (key, val) into node path[d]; split it if needed, pushing the
        // separator into path[d-1].
        let mut ins_key = key.to_vec();
        let mut ins_val = val.to_vec();
        let mut d = path.len() - 1;
        // Whether the leaf split at the insertion point: its ancestors then do too, since
        // the separators of ascending keys ascend as well.
        let mut sequential = false;
        loop {
            let node = path[d];
            let p = mtr.get(node);
            let pos = page::search(p, &ins_key).unwrap_or_else(|i| i);
            if page::fits(p, ins_key.len(), ins_val.len()) {
                page::insert_at(mtr.get_mut(node), pos, &ins_key, &ins_val);
                return Ok(());
            }
            let is_root = mtr.id(node).page_no == self.root;
            if is_root {
                return self.split_root(mtr, node, &ins_key, &ins_val);
            }
            let (level, index_no) = (page::level(p), page::index_no(p));
            let node_no = mtr.id(node).page_no;
            let past_end = pos == page::n_slots(p);
            // Sequential: the leaf's last insert went just before this one's place.
            let follows_last =
                level == 0 && pos > 0 && LastInserts::last(self.space, node_no) == Some(pos - 1);
            let appending =
                past_end && (page::next(p) == 0 || follows_last || (level > 0 && sequential));
            sequential = appending || follows_last;
            let right = self.alloc_page(mtr)?;
            let right_no = mtr.id(right).page_no;
            page::init_node(mtr.get_mut(right), level, index_no);
            // `appending`: past the last record of the rightmost node at its level is where
            // ascending keys go (AUTO_INCREMENT, the hidden row id, a sorted load). Split
            // there, leaving this node full and the new one with just the new record, as
            // InnoDB does for sequential inserts: a half-and-half split would leave every
            // page of such a table half empty for good (twice the disk and the pool).
            // A sequential insert before the end (an ascending run that meets the first
            // keys of another run in this leaf): the records from its place on move to
            // the new node and the insert stays here, at the end of this node, so the
            // run's next insert is an append past this node's end (split as above) and
            // the other run's keys are moved once, not carried along page after page
            // taking half of each. Into the new node only if it does not fit here.
            let mid = (!appending && follows_last)
                .then(|| {
                    let mut r = mtr.get(right).to_vec();
                    let mut l = mtr.get(node).to_vec();
                    let first_moved = page::split_at(&mut l, &mut r, right_no, pos);
                    if page::fits(&l, ins_key.len(), ins_val.len()) {
                        Some((l, r, first_moved))
                    } else if page::fits(&r, ins_key.len(), ins_val.len()) {
                        Some((l, r, ins_key.clone()))
                    } else {
                        None
                    }
                })
                .flatten();
            let sep = if appending {
                page::set_next(mtr.get_mut(node), right_no);
                ins_key.clone()
            } else if let Some((l, r, sep)) = mid {
                mtr.get_mut(node).copy_from_slice(&l);
                mtr.get_mut(right).copy_from_slice(&r);
                sep
            } else {
                let mut r = mtr.get(right).to_vec();
                let mut l = mtr.get(node).to_vec();
                let sep = page::split(&mut l, &mut r, right_no);
                mtr.get_mut(node).copy_from_slice(&l);
                mtr.get_mut(right).copy_from_slice(&r);
                sep
            };
            // The new node holds entries (or will) that the old one's bound covers.
            let bound = page::max_trx(mtr.get(node));
            page::raise_max_trx(mtr.get_mut(right), bound);
            let target = if ins_key.as_slice() >= sep.as_slice() {
                right
            } else {
                node
            };
            let tp = mtr.get(target);
            let pos = page::search(tp, &ins_key).unwrap_or_else(|i| i);
            if !page::fits(tp, ins_key.len(), ins_val.len()) {
                return Err(bad(self.space, right_no, "split left no room"));
            }
            page::insert_at(mtr.get_mut(target), pos, &ins_key, &ins_val);
            if d == 0 {
                return Err(bad(
                    self.space,
                    right_no,
                    "split reached an unlatched parent",
                ));
            }
            ins_key = sep;
            ins_val = right_no.to_le_bytes().to_vec();
            d -= 1;
        }
    }

    /// The root keeps its page number: its records move into two new children.
    fn split_root(&self, mtr: &mut Mtr, root: Slot, key: &[u8], val: &[u8]) -> io::Result<()> {
        let (level, index_no, bound) = {
            let p = mtr.get(root);
            (page::level(p), page::index_no(p), page::max_trx(p))
        };
        let left = self.alloc_page(mtr)?;
        let right = self.alloc_page(mtr)?;
        let (left_no, right_no) = (mtr.id(left).page_no, mtr.id(right).page_no);
        let mut l = mtr.get(root).to_vec();
        page::init_node(&mut l, level, index_no);
        // Copy the root's records into `l` (init_node cleared them).
        {
            let rp = mtr.get(root);
            for i in 0..page::n_slots(rp) {
                let (k, v) = page::rec(rp, i);
                page::insert_at(&mut l, i, k, v);
            }
        }
        let mut r = l.clone();
        page::init_node(&mut r, level, index_no);
        let sep = page::split(&mut l, &mut r, right_no);
        page::raise_max_trx(&mut l, bound);
        page::raise_max_trx(&mut r, bound);
        let target = if key >= sep.as_slice() {
            &mut r
        } else {
            &mut l
        };
        let pos = page::search(target, key).unwrap_or_else(|i| i);
        if !page::fits(target, key.len(), val.len()) {
            return Err(bad(self.space, self.root, "root split left no room"));
        }
        page::insert_at(target, pos, key, val);
        // Keep each new page's checksum, LSN and ids (bytes 0..20); copy the node header
        // and the body.
        let body = 20;
        mtr.get_mut(left)[body..].copy_from_slice(&l[body..]);
        mtr.get_mut(right)[body..].copy_from_slice(&r[body..]);
        let rp = mtr.get_mut(root);
        page::init_node(rp, level + 1, index_no);
        page::insert_at(rp, 0, &[], &left_no.to_le_bytes());
        page::insert_at(rp, 1, &sep, &right_no.to_le_bytes());
        Ok(())
    }

    /// Allocates a page from the space header (latched last, after the tree's pages).
    fn alloc_page(&self, mtr: &mut Mtr) -> io::Result<Slot> {
        let hdr = mtr.x(self.pid(0))?;
        let p = mtr.get(hdr);
        if &p[SH_MAGIC..SH_MAGIC + 8] != MAGIC {
            return Err(bad(self.space, 0, "space header has a wrong magic number"));
        }
        let no = get_u32(p, SH_NEXT_FREE);
        put_u32(mtr.get_mut(hdr), SH_NEXT_FREE, no + 1);
        mtr.create(self.pid(no))
    }

    /// Raises the max transaction id of the leaf where `key` is (or would be) to `trx`:
    /// transaction `trx` made that secondary entry stale (changed or deleted its row).
    pub fn stamp(&self, st: &Storage, key: &[u8], trx: u64) -> io::Result<()> {
        let mut mtr = Mtr::new(st);
        let leaf = self.leaf_x(&mut mtr, key)?;
        if page::max_trx(mtr.get(leaf)) < trx {
            page::raise_max_trx(mtr.get_mut(leaf), trx);
            mtr.commit();
        }
        Ok(())
    }

    /// Removes `key` if present (one mini-transaction carrying `logical`). Returns
    /// whether it was there.
    pub fn remove(&self, st: &Storage, key: &[u8], logical: &[u8]) -> io::Result<bool> {
        let mut mtr = Mtr::new(st);
        let leaf = self.leaf_x(&mut mtr, key)?;
        match page::search(mtr.get(leaf), key) {
            Ok(i) => {
                page::remove_at(mtr.get_mut(leaf), i);
                mtr.log_logical(logical);
                mtr.commit();
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }

    /// Changes the value of an existing record in place when the new value has the same
    /// length (delete-marking, stamping a new transaction id). Returns false when the
    /// key is absent.
    pub fn overwrite_same_len(
        &self,
        st: &Storage,
        key: &[u8],
        val: &[u8],
        logical: &[u8],
    ) -> io::Result<bool> {
        let mut mtr = Mtr::new(st);
        let leaf = self.leaf_x(&mut mtr, key)?;
        match page::search(mtr.get(leaf), key) {
            Ok(i) if page::val(mtr.get(leaf), i).len() == val.len() => {
                page::val_mut(mtr.get_mut(leaf), i).copy_from_slice(val);
                mtr.log_logical(logical);
                mtr.commit();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Checks the whole tree: node types, key order inside and across pages, separator
    /// bounds, levels. Returns the number of leaf records.
    pub fn verify(&self, st: &Storage) -> io::Result<u64> {
        let mut count = 0;
        self.verify_node(st, self.root, None, None, None, &mut count)?;
        Ok(count)
    }

    fn verify_node(
        &self,
        st: &Storage,
        page_no: u32,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        level: Option<u16>,
        count: &mut u64,
    ) -> io::Result<()> {
        let mut mtr = Mtr::new(st);
        let s = mtr.s(self.pid(page_no))?;
        self.check_node(&mtr, s)?;
        let p = mtr.get(s).to_vec();
        drop(mtr);
        let lv = page::level(&p);
        if let Some(l) = level {
            if lv != l {
                return Err(bad(self.space, page_no, "wrong level"));
            }
        }
        let n = page::n_slots(&p);
        for i in 0..n {
            let k = page::key(&p, i);
            if i > 0 && page::key(&p, i - 1) >= k {
                return Err(bad(self.space, page_no, "keys out of order"));
            }
            let check_lo = !(lv > 0 && i == 0);
            if check_lo && lo.is_some_and(|lo| k < lo) {
                return Err(bad(self.space, page_no, "key below its separator"));
            }
            if hi.is_some_and(|hi| k >= hi) {
                return Err(bad(self.space, page_no, "key above its separator"));
            }
        }
        if lv == 0 {
            *count += n as u64;
            return Ok(());
        }
        for i in 0..n {
            let clo = if i == 0 { lo } else { Some(page::key(&p, i)) };
            let chi = if i + 1 < n {
                Some(page::key(&p, i + 1))
            } else {
                hi
            };
            self.verify_node(st, page::child(&p, i), clo, chi, Some(lv - 1), count)?;
        }
        Ok(())
    }
}

/// The smallest key greater than `k`.
pub fn successor(k: &[u8]) -> Vec<u8> {
    let mut s = k.to_vec();
    s.push(0);
    s
}

/// Whether `successor(k) > u`, without building the successor: it is the least key
/// above `k`, so it exceeds `u` exactly when `k >= u`.
fn successor_gt(k: &[u8], u: &[u8]) -> bool {
    k >= u
}

/// Writes a new space's header page and empty root leaves (pages 1..=n) through `mtr`.
pub fn format_space(mtr: &mut Mtr, space: u32, n_indexes: u16, page_size: usize) -> io::Result<()> {
    let hdr = mtr.create(PageId { space, page_no: 0 })?;
    {
        let p = mtr.get_mut(hdr);
        page::set_page_type(p, page::TYPE_SPACE_HEADER);
        p[SH_MAGIC..SH_MAGIC + 8].copy_from_slice(MAGIC);
        put_u32(p, SH_VERSION, 1);
        put_u32(p, SH_PAGE_SIZE, page_size as u32);
        put_u32(p, SH_NEXT_FREE, n_indexes as u32 + 1);
        put_u16(p, SH_NINDEX, n_indexes);
        for i in 0..n_indexes as usize {
            put_u32(p, SH_ROOTS + 4 * i, i as u32 + 1);
        }
    }
    for i in 0..n_indexes {
        let r = mtr.create(PageId {
            space,
            page_no: i as u32 + 1,
        })?;
        page::init_node(mtr.get_mut(r), 0, i);
    }
    Ok(())
}

/// Reads the root page numbers from a space header image.
pub fn read_roots(p: &[u8]) -> Option<Vec<u32>> {
    if &p[SH_MAGIC..SH_MAGIC + 8] != MAGIC {
        return None;
    }
    let n = get_u16(p, SH_NINDEX) as usize;
    if SH_ROOTS + 4 * n > p.len() {
        return None;
    }
    Some((0..n).map(|i| get_u32(p, SH_ROOTS + 4 * i)).collect())
}
