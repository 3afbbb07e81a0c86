//! One index's B+tree inside the `.hidx` file, read and written block by block through
//! the key cache. Lookups and scans parse entries in place (no decoding of whole
//! nodes); inserts decode the node they change, insert, and split when it overflows.
//! Deletes remove entries without merging (see `docs/format/heap.md`).

use crate::format::*;
use std::io;
use std::ops::Bound;
use strata_engine::KeyRange;
use strata_storage::keycache::{CachedFile, KeyCache};

pub struct Node {
    pub kind: u8,
    /// Leaf: next leaf; internal: leftmost child.
    pub link: u64,
    pub prev: u64,
    pub entries: Vec<(Vec<u8>, u64)>,
}

impl Node {
    pub fn leaf() -> Node {
        Node {
            kind: KIND_LEAF,
            link: 0,
            prev: 0,
            entries: Vec::new(),
        }
    }

    fn size(&self) -> usize {
        NODE_ENTRIES
            + self
                .entries
                .iter()
                .map(|(k, _)| 10 + k.len())
                .sum::<usize>()
    }

    /// Where to split an overfull node: at the byte midpoint, not the entry midpoint,
    /// so that with keys of mixed lengths both halves fit in a block.
    fn split_point(&self) -> usize {
        let total: usize = self.entries.iter().map(|(k, _)| 10 + k.len()).sum();
        let mut acc = 0;
        for (i, (k, _)) in self.entries.iter().enumerate() {
            acc += 10 + k.len();
            if acc * 2 >= total {
                return (i + 1).clamp(1, self.entries.len() - 1);
            }
        }
        self.entries.len() / 2
    }

    /// Reads a node from an index block (public for the fuzz target,
    /// `fuzz/fuzz_targets/heap_index_block.rs`); a malformed block is an error.
    pub fn parse(b: &[u8]) -> io::Result<Node> {
        let kind = b[NODE_KIND];
        if kind != KIND_LEAF && kind != KIND_INTERNAL {
            return Err(corrupt("bad node kind"));
        }
        let count = get_u16(b, NODE_COUNT) as usize;
        let mut entries = Vec::with_capacity(count);
        let mut at = NODE_ENTRIES;
        for _ in 0..count {
            let (k, v, next) = entry_at(b, at)?;
            entries.push((k.to_vec(), v));
            at = next;
        }
        Ok(Node {
            kind,
            link: get_u64(b, NODE_LINK),
            prev: get_u64(b, NODE_PREV),
            entries,
        })
    }

    pub fn write(&self, b: &mut [u8]) {
        b.fill(0);
        b[NODE_KIND] = self.kind;
        put_u16(b, NODE_COUNT, self.entries.len() as u16);
        put_u64(b, NODE_LINK, self.link);
        put_u64(b, NODE_PREV, self.prev);
        let mut at = NODE_ENTRIES;
        for (k, v) in &self.entries {
            put_u16(b, at, k.len() as u16);
            b[at + 2..at + 2 + k.len()].copy_from_slice(k);
            put_u64(b, at + 2 + k.len(), *v);
            at += 10 + k.len();
        }
    }
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// The entry at `at`: key, value, offset of the next entry.
fn entry_at(b: &[u8], at: usize) -> io::Result<(&[u8], u64, usize)> {
    if at + 2 > b.len() {
        return Err(corrupt("entry past end of node"));
    }
    let klen = get_u16(b, at) as usize;
    let end = at + 2 + klen + 8;
    if end > b.len() {
        return Err(corrupt("entry past end of node"));
    }
    Ok((&b[at + 2..at + 2 + klen], get_u64(b, at + 2 + klen), end))
}

/// In an internal node, the child that may hold `key`.
fn child_for(b: &[u8], key: Option<&[u8]>) -> io::Result<u64> {
    let count = get_u16(b, NODE_COUNT) as usize;
    let mut child = get_u64(b, NODE_LINK);
    let mut at = NODE_ENTRIES;
    for _ in 0..count {
        let (k, c, next) = entry_at(b, at)?;
        match key {
            None => break,
            Some(key) if k > key => break,
            Some(_) => child = c,
        }
        at = next;
    }
    Ok(child)
}

pub struct Tree<'a> {
    pub cache: &'a KeyCache,
    pub file: &'a CachedFile,
}

/// Deepest tree walked; a cycle in a corrupt file must not loop forever.
const MAX_DEPTH: usize = 64;

impl Tree<'_> {
    fn read<R>(&self, block: u64, f: impl FnOnce(&[u8]) -> io::Result<R>) -> io::Result<R> {
        self.cache.read(self.file, block, f)?
    }

    /// The leaf that may hold `key` (None: the leftmost leaf; `rightmost`: the last).
    fn find_leaf(&self, root: u64, key: Option<&[u8]>, rightmost: bool) -> io::Result<u64> {
        let mut block = root;
        for _ in 0..MAX_DEPTH {
            let next = self.read(block, |b| {
                if b[NODE_KIND] == KIND_LEAF {
                    return Ok(None);
                }
                if b[NODE_KIND] != KIND_INTERNAL {
                    return Err(corrupt("bad node kind"));
                }
                if rightmost {
                    let count = get_u16(b, NODE_COUNT) as usize;
                    let mut child = get_u64(b, NODE_LINK);
                    let mut at = NODE_ENTRIES;
                    for _ in 0..count {
                        let (_, c, n) = entry_at(b, at)?;
                        child = c;
                        at = n;
                    }
                    return Ok(Some(child));
                }
                child_for(b, key).map(Some)
            })?;
            match next {
                None => return Ok(block),
                Some(c) => block = c,
            }
        }
        Err(corrupt("index deeper than possible"))
    }

    /// True when a key equal to `key` is stored.
    pub fn contains(&self, root: u64, key: &[u8]) -> io::Result<bool> {
        let mut found = false;
        self.scan(
            root,
            &KeyRange {
                start: Bound::Included(key.to_vec()),
                end: Bound::Included(key.to_vec()),
            },
            false,
            &mut |_| {
                found = true;
                false
            },
        )?;
        Ok(found)
    }

    /// Calls `f` with the value of every entry in `range`, in key order (or reverse),
    /// until it returns false. The cache is not locked while `f` runs.
    pub fn scan(
        &self,
        root: u64,
        range: &KeyRange,
        reverse: bool,
        f: &mut dyn FnMut(u64) -> bool,
    ) -> io::Result<()> {
        let mut batch: Vec<u64> = Vec::new();
        if !reverse {
            let start = match &range.start {
                Bound::Included(k) | Bound::Excluded(k) => Some(k.as_slice()),
                Bound::Unbounded => None,
            };
            let mut leaf = self.find_leaf(root, start, false)?;
            let mut hops = 0u64;
            while leaf != 0 {
                batch.clear();
                let (next, done) = self.read(leaf, |b| {
                    let count = get_u16(b, NODE_COUNT) as usize;
                    let mut at = NODE_ENTRIES;
                    for _ in 0..count {
                        let (k, v, n) = entry_at(b, at)?;
                        at = n;
                        if !range.contains(k) {
                            let past_end = match &range.end {
                                Bound::Included(e) => k > e.as_slice(),
                                Bound::Excluded(e) => k >= e.as_slice(),
                                Bound::Unbounded => false,
                            };
                            if past_end {
                                return Ok((0, true));
                            }
                            continue;
                        }
                        batch.push(v);
                    }
                    Ok((get_u64(b, NODE_LINK), false))
                })?;
                for &v in &batch {
                    if !f(v) {
                        return Ok(());
                    }
                }
                if done {
                    return Ok(());
                }
                leaf = next;
                hops += 1;
                if hops > 1 << 40 {
                    return Err(corrupt("leaf chain loops"));
                }
            }
        } else {
            let end = match &range.end {
                Bound::Included(k) | Bound::Excluded(k) => Some(k.as_slice()),
                Bound::Unbounded => None,
            };
            let mut leaf = self.find_leaf(root, end, end.is_none())?;
            while leaf != 0 {
                batch.clear();
                let (prev, done) = self.read(leaf, |b| {
                    let count = get_u16(b, NODE_COUNT) as usize;
                    let mut at = NODE_ENTRIES;
                    let mut before_start = false;
                    for _ in 0..count {
                        let (k, v, n) = entry_at(b, at)?;
                        at = n;
                        if range.contains(k) {
                            batch.push(v);
                        } else {
                            let below = match &range.start {
                                Bound::Included(s) => k < s.as_slice(),
                                Bound::Excluded(s) => k <= s.as_slice(),
                                Bound::Unbounded => false,
                            };
                            before_start |= below;
                        }
                    }
                    Ok((get_u64(b, NODE_PREV), before_start))
                })?;
                for &v in batch.iter().rev() {
                    if !f(v) {
                        return Ok(());
                    }
                }
                if done {
                    return Ok(());
                }
                leaf = prev;
            }
        }
        Ok(())
    }

    fn load(&self, block: u64) -> io::Result<Node> {
        self.read(block, Node::parse)
    }

    fn store(&self, block: u64, node: &Node, fresh: bool) -> io::Result<()> {
        self.cache.write(self.file, block, fresh, |b| node.write(b))
    }

    /// Inserts an entry; returns the new root when the root split.
    pub fn insert(
        &self,
        root: u64,
        key: &[u8],
        value: u64,
        alloc: &mut dyn FnMut() -> u64,
    ) -> io::Result<u64> {
        if key.len() > MAX_KEY {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("index key of {} bytes exceeds {MAX_KEY}", key.len()),
            ));
        }
        match self.insert_at(root, key, value, alloc, 0)? {
            None => Ok(root),
            Some((sep, right)) => {
                let new_root = alloc();
                let node = Node {
                    kind: KIND_INTERNAL,
                    link: root,
                    prev: 0,
                    entries: vec![(sep, right)],
                };
                self.store(new_root, &node, true)?;
                Ok(new_root)
            }
        }
    }

    fn insert_at(
        &self,
        block: u64,
        key: &[u8],
        value: u64,
        alloc: &mut dyn FnMut() -> u64,
        depth: usize,
    ) -> io::Result<Option<(Vec<u8>, u64)>> {
        if depth > MAX_DEPTH {
            return Err(corrupt("index deeper than possible"));
        }
        let mut node = self.load(block)?;
        if node.kind == KIND_LEAF {
            let pos = node.entries.partition_point(|(k, _)| k.as_slice() < key);
            if node.entries.get(pos).is_some_and(|(k, _)| k == key) {
                node.entries[pos].1 = value;
            } else {
                node.entries.insert(pos, (key.to_vec(), value));
            }
            if node.size() <= BLOCK_SIZE {
                self.store(block, &node, false)?;
                return Ok(None);
            }
            let mid = node.split_point();
            let right_block = alloc();
            let right = Node {
                kind: KIND_LEAF,
                link: node.link,
                prev: block,
                entries: node.entries.split_off(mid),
            };
            if node.link != 0 {
                let mut next = self.load(node.link)?;
                next.prev = right_block;
                self.store(node.link, &next, false)?;
            }
            node.link = right_block;
            let sep = right.entries[0].0.clone();
            self.store(right_block, &right, true)?;
            self.store(block, &node, false)?;
            return Ok(Some((sep, right_block)));
        }
        // Internal: entries[i] covers keys >= entries[i].0.
        let pos = node.entries.partition_point(|(k, _)| k.as_slice() <= key);
        let child = if pos == 0 {
            node.link
        } else {
            node.entries[pos - 1].1
        };
        let Some((sep, new_child)) = self.insert_at(child, key, value, alloc, depth + 1)? else {
            return Ok(None);
        };
        node.entries.insert(pos, (sep, new_child));
        if node.size() <= BLOCK_SIZE {
            self.store(block, &node, false)?;
            return Ok(None);
        }
        let mid = node.split_point();
        let mut upper = node.entries.split_off(mid);
        let (up_key, up_child) = upper.remove(0);
        let right_block = alloc();
        let right = Node {
            kind: KIND_INTERNAL,
            link: up_child,
            prev: 0,
            entries: upper,
        };
        self.store(right_block, &right, true)?;
        self.store(block, &node, false)?;
        Ok(Some((up_key, right_block)))
    }

    /// Removes the entry with exactly this key; false when absent.
    pub fn delete(&self, root: u64, key: &[u8]) -> io::Result<bool> {
        let leaf = self.find_leaf(root, Some(key), false)?;
        let mut node = self.load(leaf)?;
        match node
            .entries
            .binary_search_by(|(k, _)| k.as_slice().cmp(key))
        {
            Ok(i) => {
                node.entries.remove(i);
                self.store(leaf, &node, false)?;
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }
}
