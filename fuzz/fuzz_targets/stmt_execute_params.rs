//! COM_STMT_EXECUTE parameter decoding: NULL bitmap, new-params-bound flag, types and
//! binary values, for any parameter count, with and without types remembered from an
//! earlier execute and long data sent before.
#![no_main]
use libfuzzer_sys::fuzz_target;
use strata_types::inthash::IntMap;
use strata_wire::packet::Cursor;
use strata_wire::stmt::decode_params;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let n = u16::from_le_bytes([data[0], data[1]]) % 512;
    let mut types = Vec::new();
    let mut long_data: IntMap<u16, Vec<u8>> = IntMap::default();
    if data[2] & 1 == 1 {
        long_data.insert(0, b"long".to_vec());
    }
    let mut c = Cursor::new(&data[3..]);
    let first = decode_params(&mut c, n, &mut types, &mut long_data);
    // A second execute of the same statement reuses the types the first one bound.
    let mut c = Cursor::new(&data[3..]);
    let _ = decode_params(&mut c, n, &mut types, &mut long_data);
    if let Ok(values) = first {
        assert_eq!(values.len(), n as usize);
    }
});
