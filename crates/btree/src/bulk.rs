//! Bulk loading of a new B+tree from entries that arrive in key order (an index build's
//! merged sort), bottom-up as InnoDB's sorted index build: leaf pages are filled left to
//! right up to the fill factor (`innodb_fill_factor`; 100 leaves 1/16 of each page free,
//! as InnoDB does, for later inserts), each full page is linked to the next and written
//! whole, and its first key goes up to the level above, which fills the same way; at the
//! end the last page of each level is closed and the one page of the top level is the
//! root. No page is ever split or revisited, so a load writes each page once.
//!
//! Pages are taken from the space's allocator (page 0) one at a time and written each in
//! a mini-transaction of its own, so they are redo-logged like any page (a crash in the
//! middle leaves pages that nothing references, as a tree being built is not in the
//! space header until [`crate::online`] records it there).

use crate::mtr::{Mtr, Storage};
use crate::page;
use crate::tree::{MAGIC, SH_MAGIC, SH_NEXT_FREE};
use std::io;
use strata_storage::bufpool::PageId;

/// Where a node's own bytes start in a page (its type field; `docs/format/btree.md`).
const NODE_START: usize = 20;

/// One level being filled: the page in memory, its number, and its first key.
struct Level {
    buf: Vec<u8>,
    page_no: u32,
    first_key: Vec<u8>,
    /// Pages of this level already written.
    written: u64,
}

/// Builds one tree of `space` from entries given in ascending key order.
pub(crate) struct BulkLoader<'a> {
    st: &'a Storage,
    space: u32,
    index_no: u16,
    /// Bytes of records and slots a page takes before it is closed.
    limit: usize,
    levels: Vec<Level>,
    last_key: Option<Vec<u8>>,
    /// Pages written so far.
    pub pages: u64,
}

impl<'a> BulkLoader<'a> {
    /// A loader for tree number `index_no`, filling pages to `fill_factor` percent
    /// (10..=100).
    pub fn new(st: &'a Storage, space: u32, index_no: u16, fill_factor: u32) -> BulkLoader<'a> {
        let usable = st.pool.page_size() - page::HEAP_START;
        let fill = fill_factor.clamp(10, 100) as usize;
        let limit = if fill == 100 {
            usable - usable / 16
        } else {
            usable * fill / 100
        };
        BulkLoader {
            st,
            space,
            index_no,
            limit,
            levels: Vec::new(),
            last_key: None,
            pages: 0,
        }
    }

    fn bad(&self, what: &str) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bulk load of space {}: {what}", self.space),
        )
    }

    /// Takes a fresh page number from the space header.
    fn alloc(&self) -> io::Result<u32> {
        let mut mtr = Mtr::new(self.st);
        let hdr = mtr.x(PageId {
            space: self.space,
            page_no: 0,
        })?;
        let p = mtr.get(hdr);
        if &p[SH_MAGIC..SH_MAGIC + 8] != MAGIC {
            return Err(self.bad("space header has a wrong magic number"));
        }
        let no = page::get_u32(p, SH_NEXT_FREE);
        page::put_u32(mtr.get_mut(hdr), SH_NEXT_FREE, no + 1);
        mtr.commit();
        Ok(no)
    }

    /// Writes a finished page image as page `page_no`.
    fn write(&mut self, page_no: u32, buf: &[u8]) -> io::Result<()> {
        // Room in the redo log first, as every writer waits for it (no latch held).
        self.st.log.free_check();
        let mut mtr = Mtr::new(self.st);
        let s = mtr.create(PageId {
            space: self.space,
            page_no,
        })?;
        // Bytes 0..20 (checksum, LSN, ids) are the pool's; the node header from the page
        // type at 20 on, and the body, are ours (as `Tree::split_root` copies them).
        mtr.get_mut(s)[NODE_START..].copy_from_slice(&buf[NODE_START..]);
        mtr.commit();
        self.pages += 1;
        Ok(())
    }

    fn new_level(&mut self, level: u16) -> io::Result<()> {
        let page_no = self.alloc()?;
        let mut buf = vec![0u8; self.st.pool.page_size()];
        page::init_node(&mut buf, level, self.index_no);
        self.levels.push(Level {
            buf,
            page_no,
            first_key: Vec::new(),
            written: 0,
        });
        Ok(())
    }

    /// Adds the next entry (keys strictly ascending).
    pub fn add(&mut self, key: &[u8], val: &[u8]) -> io::Result<()> {
        if self.last_key.as_deref().is_some_and(|l| l >= key) {
            return Err(self.bad("entries out of order"));
        }
        self.put(0, key, val)?;
        match &mut self.last_key {
            Some(l) => {
                l.clear();
                l.extend_from_slice(key);
            }
            None => self.last_key = Some(key.to_vec()),
        }
        Ok(())
    }

    /// Appends a record to level `lvl`, closing its page first when full.
    fn put(&mut self, lvl: usize, key: &[u8], val: &[u8]) -> io::Result<()> {
        if lvl == self.levels.len() {
            self.new_level(lvl as u16)?;
        }
        let need = page::rec_space(key.len(), val.len());
        let full = {
            let l = &self.levels[lvl];
            page::n_slots(&l.buf) > 0
                && (page::used_space(&l.buf) + need > self.limit
                    || !page::fits(&l.buf, key.len(), val.len()))
        };
        if full {
            let next = self.alloc()?;
            let (closed_no, sep, buf) = {
                let l = &mut self.levels[lvl];
                page::set_next(&mut l.buf, next);
                let buf = std::mem::take(&mut l.buf);
                let sep = std::mem::take(&mut l.first_key);
                let closed = l.page_no;
                l.page_no = next;
                l.written += 1;
                (closed, sep, buf)
            };
            self.write(closed_no, &buf)?;
            {
                let l = &mut self.levels[lvl];
                l.buf = buf;
                page::init_node(&mut l.buf, lvl as u16, self.index_no);
            }
            self.put(lvl + 1, &sep, &closed_no.to_le_bytes())?;
        }
        let l = &mut self.levels[lvl];
        if !page::fits(&l.buf, key.len(), val.len()) {
            return Err(self.bad("an entry does not fit in an empty page"));
        }
        let n = page::n_slots(&l.buf);
        page::insert_at(&mut l.buf, n, key, val);
        if n == 0 {
            l.first_key.clear();
            l.first_key.extend_from_slice(key);
        }
        Ok(())
    }

    /// Closes every level; returns the root's page number.
    pub fn finish(mut self) -> io::Result<u32> {
        if self.levels.is_empty() {
            self.new_level(0)?;
        }
        let mut lvl = 0;
        loop {
            let top = lvl + 1 == self.levels.len();
            let (page_no, sep, buf, alone) = {
                let l = &mut self.levels[lvl];
                (
                    l.page_no,
                    std::mem::take(&mut l.first_key),
                    std::mem::take(&mut l.buf),
                    l.written == 0,
                )
            };
            self.write(page_no, &buf)?;
            if top && alone {
                return Ok(page_no);
            }
            self.put(lvl + 1, &sep, &page_no.to_le_bytes())?;
            lvl += 1;
        }
    }
}
