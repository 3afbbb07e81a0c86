//! The bytes of one B+tree node page (layout in `docs/format/btree.md`): a record heap
//! growing up from the header and a slot directory growing down from the page end, slots
//! in key order. Pure functions over a page buffer; latching, logging and the tree's shape
//! live in `tree.rs`, so everything here is easy to test on a plain `Vec<u8>`.

use strata_storage::bufpool::PAGE_HEADER_SIZE;

pub const TYPE_SPACE_HEADER: u16 = 1;
pub const TYPE_NODE: u16 = 2;
pub const TYPE_OVERFLOW: u16 = 3;

const TYPE: usize = 20;
const LEVEL: usize = 22;
const NSLOTS: usize = 24;
const INDEX_NO: usize = 26;
const NEXT: usize = 32;
const HEAP_TOP: usize = 36;
const GARBAGE: usize = 38;
/// The largest transaction id that changed a leaf's set of live entries (8 bytes; 0 on
/// pages written before it existed: unknown). See [`max_trx`].
const MAX_TRX: usize = 40;
/// [`MAX_TRX`] of a page changed by a path that does not say by whom: never trusted.
pub const MAX_TRX_UNKNOWN: u64 = u64::MAX;
pub const HEAP_START: usize = 48;
const REC_HEADER: usize = 4;

const _: () = assert!(HEAP_START >= PAGE_HEADER_SIZE + 16);

#[inline]
pub fn get_u16(p: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}
pub fn put_u16(p: &mut [u8], at: usize, v: u16) {
    p[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn get_u32(p: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}
pub fn put_u32(p: &mut [u8], at: usize, v: u32) {
    p[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn get_u64(p: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&p[at..at + 8]);
    u64::from_le_bytes(b)
}
pub fn put_u64(p: &mut [u8], at: usize, v: u64) {
    p[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[inline]
pub fn page_type(p: &[u8]) -> u16 {
    get_u16(p, TYPE)
}
pub fn set_page_type(p: &mut [u8], t: u16) {
    put_u16(p, TYPE, t)
}

/// Makes `p` an empty node (keeps the common header: checksum, LSN, ids).
pub fn init_node(p: &mut [u8], level: u16, index_no: u16) {
    p[PAGE_HEADER_SIZE..].fill(0);
    put_u16(p, TYPE, TYPE_NODE);
    put_u16(p, LEVEL, level);
    put_u16(p, NSLOTS, 0);
    put_u16(p, INDEX_NO, index_no);
    put_u32(p, NEXT, 0);
    put_u16(p, HEAP_TOP, HEAP_START as u16);
    put_u16(p, GARBAGE, 0);
}

/// The page's max transaction id (InnoDB's `PAGE_MAX_TRX_ID`), kept on secondary-index
/// leaves: every transaction that inserted an entry here or made one of its entries
/// stale (by changing or deleting the row) has an id ≤ it. 0: unknown (a page from
/// before the field, or never changed); [`MAX_TRX_UNKNOWN`]: changed by an unnamed
/// writer. Clustered leaves and internal nodes carry it too but nothing reads it there.
#[inline]
pub fn max_trx(p: &[u8]) -> u64 {
    get_u64(p, MAX_TRX)
}

/// Raises the page's max transaction id to `trx` (never lowers it).
pub fn raise_max_trx(p: &mut [u8], trx: u64) {
    if trx > max_trx(p) {
        put_u64(p, MAX_TRX, trx);
    }
}

#[inline]
pub fn is_node(p: &[u8]) -> bool {
    page_type(p) == TYPE_NODE
}
#[inline]
pub fn level(p: &[u8]) -> u16 {
    get_u16(p, LEVEL)
}
#[inline]
pub fn is_leaf(p: &[u8]) -> bool {
    level(p) == 0
}
#[inline]
pub fn n_slots(p: &[u8]) -> usize {
    get_u16(p, NSLOTS) as usize
}
#[inline]
pub fn next(p: &[u8]) -> u32 {
    get_u32(p, NEXT)
}
pub fn set_next(p: &mut [u8], n: u32) {
    put_u32(p, NEXT, n)
}
#[inline]
pub fn index_no(p: &[u8]) -> u16 {
    get_u16(p, INDEX_NO)
}

#[inline]
fn slot_at(p: &[u8], i: usize) -> usize {
    p.len() - 2 * (i + 1)
}
#[inline]
fn rec_off(p: &[u8], i: usize) -> usize {
    get_u16(p, slot_at(p, i)) as usize
}

/// The key and value of the record in slot `i`.
#[inline]
pub fn rec(p: &[u8], i: usize) -> (&[u8], &[u8]) {
    let o = rec_off(p, i);
    let k = get_u16(p, o) as usize;
    let v = get_u16(p, o + 2) as usize;
    let ks = o + REC_HEADER;
    (&p[ks..ks + k], &p[ks + k..ks + k + v])
}
/// Where record `i`'s key starts in the page, and its key and value lengths (the value
/// follows the key).
#[inline]
pub fn rec_span(p: &[u8], i: usize) -> (usize, usize, usize) {
    let o = rec_off(p, i);
    let k = get_u16(p, o) as usize;
    let v = get_u16(p, o + 2) as usize;
    (o + REC_HEADER, k, v)
}
#[inline]
pub fn key(p: &[u8], i: usize) -> &[u8] {
    // The key alone: a binary search reads only keys, not the value's length.
    let o = rec_off(p, i);
    let k = get_u16(p, o) as usize;
    &p[o + REC_HEADER..o + REC_HEADER + k]
}
#[inline]
pub fn val(p: &[u8], i: usize) -> &[u8] {
    rec(p, i).1
}
pub fn val_mut(p: &mut [u8], i: usize) -> &mut [u8] {
    let o = rec_off(p, i);
    let k = get_u16(p, o) as usize;
    let v = get_u16(p, o + 2) as usize;
    let vs = o + REC_HEADER + k;
    &mut p[vs..vs + v]
}
/// The child page an internal record points to.
#[inline]
pub fn child(p: &[u8], i: usize) -> u32 {
    get_u32(val(p, i), 0)
}

/// Binary search: `Ok(i)` when slot `i` holds `key`, else `Err(i)`, where it would go.
pub fn search(p: &[u8], key: &[u8]) -> Result<usize, usize> {
    let (mut lo, mut hi) = (0usize, n_slots(p));
    while lo < hi {
        let mid = (lo + hi) / 2;
        match self::key(p, mid).cmp(key) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(mid),
        }
    }
    Err(lo)
}

/// In an internal node: the slot whose child covers `key` (the first slot stands for −∞).
pub fn child_slot(p: &[u8], key: &[u8]) -> usize {
    let n = n_slots(p);
    if n <= 1 {
        return 0;
    }
    // The last slot i >= 1 whose key <= key; 0 when every stored separator is greater.
    let (mut lo, mut hi) = (1usize, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if self::key(p, mid) <= key {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo - 1
}

/// Bytes a record takes, slot included.
pub fn rec_space(klen: usize, vlen: usize) -> usize {
    REC_HEADER + klen + vlen + 2
}

fn contiguous_free(p: &[u8]) -> usize {
    let top = get_u16(p, HEAP_TOP) as usize;
    slot_at(p, n_slots(p)) + 2 - top
}

/// Free bytes, counting the garbage compaction would reclaim.
pub fn free_space(p: &[u8]) -> usize {
    contiguous_free(p) + get_u16(p, GARBAGE) as usize
}

/// Bytes used by records and slots.
pub fn used_space(p: &[u8]) -> usize {
    p.len() - HEAP_START - free_space(p)
}

pub fn fits(p: &[u8], klen: usize, vlen: usize) -> bool {
    rec_space(klen, vlen) <= free_space(p)
}

/// Rewrites the heap without garbage, keeping slot order.
pub fn compact(p: &mut [u8]) {
    let n = n_slots(p);
    let recs: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
        .map(|i| {
            let (k, v) = rec(p, i);
            (k.to_vec(), v.to_vec())
        })
        .collect();
    let mut top = HEAP_START;
    for (i, (k, v)) in recs.iter().enumerate() {
        write_rec(p, top, k, v);
        let s = slot_at(p, i);
        put_u16(p, s, top as u16);
        top += REC_HEADER + k.len() + v.len();
    }
    // Zero the freed middle so page images compress and diffs stay small.
    let end = slot_at(p, n.saturating_sub(1)).min(p.len());
    if n > 0 && top < end {
        p[top..end].fill(0);
    }
    put_u16(p, HEAP_TOP, top as u16);
    put_u16(p, GARBAGE, 0);
}

fn write_rec(p: &mut [u8], at: usize, k: &[u8], v: &[u8]) {
    put_u16(p, at, k.len() as u16);
    put_u16(p, at + 2, v.len() as u16);
    p[at + REC_HEADER..at + REC_HEADER + k.len()].copy_from_slice(k);
    let vs = at + REC_HEADER + k.len();
    p[vs..vs + v.len()].copy_from_slice(v);
}

/// Inserts a record at slot `i`. The caller checked [`fits`].
pub fn insert_at(p: &mut [u8], i: usize, k: &[u8], v: &[u8]) {
    debug_assert!(fits(p, k.len(), v.len()));
    if contiguous_free(p) < rec_space(k.len(), v.len()) {
        compact(p);
    }
    let n = n_slots(p);
    let top = get_u16(p, HEAP_TOP) as usize;
    write_rec(p, top, k, v);
    // Shift slots i..n down by one entry (toward the heap).
    let lo = slot_at(p, n); // new lowest slot position
    let hi = slot_at(p, i) + 2; // end of slot i
    p.copy_within(lo + 2..hi, lo);
    let s = slot_at(p, i);
    put_u16(p, s, top as u16);
    put_u16(p, NSLOTS, (n + 1) as u16);
    put_u16(p, HEAP_TOP, (top + REC_HEADER + k.len() + v.len()) as u16);
}

/// Removes the record in slot `i`; its bytes become garbage.
pub fn remove_at(p: &mut [u8], i: usize) {
    let n = n_slots(p);
    let (k, v) = rec(p, i);
    let size = REC_HEADER + k.len() + v.len();
    let lo = slot_at(p, n - 1);
    let s = slot_at(p, i);
    p.copy_within(lo..s, lo + 2);
    put_u16(p, lo, 0);
    put_u16(p, NSLOTS, (n - 1) as u16);
    let g = get_u16(p, GARBAGE) as usize + size;
    put_u16(p, GARBAGE, g as u16);
}

/// Replaces the value of slot `i`; false (page unchanged) when the new value does not fit.
pub fn replace_val(p: &mut [u8], i: usize, v: &[u8]) -> bool {
    let (k, old) = rec(p, i);
    if old.len() == v.len() {
        val_mut(p, i).copy_from_slice(v);
        return true;
    }
    let k = k.to_vec();
    let old_len = old.len();
    if free_space(p) + old_len < v.len() {
        return false;
    }
    remove_at(p, i);
    insert_at(p, i, &k, v);
    true
}

/// Moves the upper half (by bytes) of `left`'s records into the empty node `right`
/// (same level and index) and links `right` after `left`. Returns the first key of
/// `right`, the separator for the parent.
pub fn split(left: &mut [u8], right: &mut [u8], right_page: u32) -> Vec<u8> {
    let n = n_slots(left);
    let total: usize = (0..n)
        .map(|i| {
            let (k, v) = rec(left, i);
            rec_space(k.len(), v.len())
        })
        .sum();
    let mut acc = 0;
    let mut at = n / 2;
    for i in 0..n {
        let (k, v) = rec(left, i);
        acc += rec_space(k.len(), v.len());
        if acc >= total / 2 {
            at = i + 1;
            break;
        }
    }
    let at = at.clamp(1, n.saturating_sub(1).max(1));
    split_at(left, right, right_page, at)
}

/// Moves the records of `left` from slot `at` on (1 ≤ at < records) into the empty node
/// `right` and links `right` after `left`. Returns the first key of `right`.
pub fn split_at(left: &mut [u8], right: &mut [u8], right_page: u32, at: usize) -> Vec<u8> {
    let n = n_slots(left);
    for (j, i) in (at..n).enumerate() {
        let (k, v) = rec(left, i);
        let (k, v) = (k.to_vec(), v.to_vec());
        insert_at(right, j, &k, &v);
    }
    for i in (at..n).rev() {
        remove_at(left, i);
    }
    compact(left);
    set_next(right, next(left));
    set_next(left, right_page);
    // The moved entries keep the history they had: the new page inherits the bound.
    raise_max_trx(right, max_trx(left));
    key(right, 0).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Vec<u8> {
        let mut p = vec![0u8; 4096];
        init_node(&mut p, 0, 0);
        p
    }

    #[test]
    fn insert_search_remove_keep_order() {
        let mut p = page();
        for k in [5u8, 1, 9, 3, 7] {
            let i = search(&p, &[k]).unwrap_err();
            insert_at(&mut p, i, &[k], &[k; 3]);
        }
        let keys: Vec<u8> = (0..n_slots(&p)).map(|i| key(&p, i)[0]).collect();
        assert_eq!(keys, vec![1, 3, 5, 7, 9]);
        assert_eq!(search(&p, &[7]), Ok(3));
        remove_at(&mut p, 1);
        assert_eq!(search(&p, &[3]), Err(1));
        assert_eq!(val(&p, 1), &[5, 5, 5]);
        assert!(replace_val(&mut p, 1, &[8; 10]));
        assert_eq!(val(&p, 1), &[8; 10]);
        assert_eq!(key(&p, 1), &[5]);
    }

    #[test]
    fn fills_compacts_and_splits() {
        let mut p = page();
        let mut n = 0u32;
        while fits(&p, 4, 40) {
            let k = n.to_be_bytes();
            let i = search(&p, &k).unwrap_err();
            insert_at(&mut p, i, &k, &[1; 40]);
            n += 1;
        }
        // Free half by removing every other record, then refill: compaction must happen.
        for i in (0..n_slots(&p)).rev().step_by(2) {
            remove_at(&mut p, i);
        }
        let before = n_slots(&p);
        while fits(&p, 4, 40) {
            let k = n.to_be_bytes();
            let i = search(&p, &k).unwrap_err();
            insert_at(&mut p, i, &k, &[2; 40]);
            n += 1;
        }
        assert!(n_slots(&p) > before);
        let mut r = page();
        let sep = split(&mut p, &mut r, 7);
        assert_eq!(next(&p), 7);
        assert_eq!(key(&r, 0), sep.as_slice());
        assert!(key(&p, n_slots(&p) - 1) < sep.as_slice());
        let diff = used_space(&p) as i64 - used_space(&r) as i64;
        assert!(diff.abs() < 200, "halves by bytes: {diff}");
        for i in 1..n_slots(&r) {
            assert!(key(&r, i - 1) < key(&r, i));
        }
    }

    #[test]
    fn max_trx_only_rises_and_survives_splits_and_compaction() {
        let mut p = page();
        assert_eq!(max_trx(&p), 0, "a new node knows nothing");
        raise_max_trx(&mut p, 40);
        raise_max_trx(&mut p, 7);
        assert_eq!(max_trx(&p), 40);
        for k in 0u8..100 {
            insert_at(&mut p, k as usize, &[k], &[0; 20]);
        }
        compact(&mut p);
        assert_eq!(max_trx(&p), 40);
        let mut r = page();
        split(&mut p, &mut r, 9);
        assert_eq!((max_trx(&p), max_trx(&r)), (40, 40));
        raise_max_trx(&mut r, MAX_TRX_UNKNOWN);
        raise_max_trx(&mut r, 50);
        assert_eq!(max_trx(&r), MAX_TRX_UNKNOWN, "unknown is sticky");
    }

    #[test]
    fn child_slot_treats_first_as_minus_infinity() {
        let mut p = vec![0u8; 4096];
        init_node(&mut p, 1, 0);
        for (i, k) in [[9u8], [20], [30]].iter().enumerate() {
            insert_at(&mut p, i, k, &(i as u32 + 100).to_le_bytes());
        }
        assert_eq!(child(&p, child_slot(&p, &[1])), 100);
        assert_eq!(child(&p, child_slot(&p, &[20])), 101);
        assert_eq!(child(&p, child_slot(&p, &[25])), 101);
        assert_eq!(child(&p, child_slot(&p, &[99])), 102);
    }
}
