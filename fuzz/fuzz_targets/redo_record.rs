//! The redo record decoder recovery runs over what it finds in the log: any record must
//! parse into page changes that fit the page, or be refused (None).
#![no_main]
use libfuzzer_sys::fuzz_target;
use strata_btree::mtr::{apply_change, parse_record, read_u64};

fuzz_target!(|data: &[u8]| {
    for page_size in [4096usize, 16384] {
        if let Some(rec) = parse_record(data, page_size) {
            let mut page = vec![0u8; page_size];
            for (_, change) in &rec.pages {
                apply_change(&mut page, change);
            }
            let _ = read_u64(rec.logical, 0);
        }
    }
});
