//! A heap (MyISAM-style) index block as read from the `.hidx` file: any block must parse
//! into a node or be refused as corrupt, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use strata_heap::btree::Node;
use strata_heap::format::BLOCK_SIZE;

fuzz_target!(|data: &[u8]| {
    let mut block = vec![0u8; BLOCK_SIZE];
    let n = data.len().min(BLOCK_SIZE);
    block[..n].copy_from_slice(&data[..n]);
    if let Ok(node) = Node::parse(&block) {
        // What parsed writes back into a block of the same size.
        let mut out = vec![0u8; BLOCK_SIZE];
        node.write(&mut out);
    }
});
