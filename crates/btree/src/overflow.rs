//! Overflow chains: a row too large to sit in a leaf page (more than an eighth of a page)
//! is stored in a chain of overflow pages, and its clustered record keeps only the MVCC
//! header, the row's length and the first page (docs/format/btree.md). Chains are
//! written once and never changed, so an old version that points at one stays readable
//! for as long as a read view needs it.

use crate::mtr::{Mtr, Storage};
use crate::page::{self, get_u32, put_u32};
use std::io;
use strata_storage::bufpool::PageId;
use strata_storage::redo::Lsn;

const NEXT: usize = 32;
const USED: usize = 36;
const DATA: usize = 40;

/// Writes `bytes` into a new chain of pages of `space`; returns the first page. Each
/// mini-transaction writes a bounded number of pages, so its redo record stays well
/// inside the log.
pub fn write_chain(st: &Storage, space: u32, bytes: &[u8]) -> io::Result<(u32, Lsn)> {
    let page_size = st.pool.page_size();
    let per_page = page_size - DATA;
    let per_mtr = ((st.log.max_payload() as usize / 4) / page_size).clamp(1, 64);
    let chunks: Vec<&[u8]> = bytes.chunks(per_page).collect();
    // Allocate every page number first (one short mtr), so pages can link forward.
    let pages = {
        let mut mtr = Mtr::new(st);
        let hdr = mtr.x(PageId { space, page_no: 0 })?;
        let first = get_u32(mtr.get(hdr), crate::tree::SH_NEXT_FREE);
        put_u32(
            mtr.get_mut(hdr),
            crate::tree::SH_NEXT_FREE,
            first + chunks.len() as u32,
        );
        mtr.commit();
        (first..first + chunks.len() as u32).collect::<Vec<u32>>()
    };
    let mut lsn = 0;
    for group in (0..chunks.len()).collect::<Vec<_>>().chunks(per_mtr) {
        st.log.free_check();
        let mut mtr = Mtr::new(st);
        for &i in group {
            let s = mtr.create(PageId {
                space,
                page_no: pages[i],
            })?;
            let p = mtr.get_mut(s);
            page::set_page_type(p, page::TYPE_OVERFLOW);
            put_u32(p, NEXT, pages.get(i + 1).copied().unwrap_or(0));
            put_u32(p, USED, chunks[i].len() as u32);
            p[DATA..DATA + chunks[i].len()].copy_from_slice(chunks[i]);
        }
        lsn = mtr.commit();
    }
    Ok((pages.first().copied().unwrap_or(0), lsn))
}

/// Reads a chain of `len` bytes starting at `first`.
pub fn read_chain(st: &Storage, space: u32, first: u32, len: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(len);
    let mut next = first;
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    while out.len() < len {
        if next == 0 {
            return Err(bad("an overflow chain ends early"));
        }
        let mut mtr = Mtr::new(st);
        let s = mtr.s(PageId {
            space,
            page_no: next,
        })?;
        let p = mtr.get(s);
        if page::page_type(p) != page::TYPE_OVERFLOW {
            return Err(bad(&format!(
                "page {next} of space {space} is not an overflow page"
            )));
        }
        let used = get_u32(p, USED) as usize;
        if DATA + used > p.len() || out.len() + used > len {
            return Err(bad(&format!(
                "overflow page {next} of space {space} has a bad length"
            )));
        }
        out.extend_from_slice(&p[DATA..DATA + used]);
        next = get_u32(p, NEXT);
    }
    Ok(out)
}
