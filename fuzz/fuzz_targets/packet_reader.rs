//! The packet reader over any byte stream a client can send: framing, 16 MiB chunk
//! continuation, the size bound. Every outcome must be a packet or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use strata_wire::packet::PacketReader;

fuzz_target!(|data: &[u8]| {
    let mut r = PacketReader::new();
    let mut input = data;
    // A small bound, so TooLarge is reached by short inputs too.
    let max = 1 + (data.first().copied().unwrap_or(0) as usize) * 64;
    for _ in 0..64 {
        match r.read(&mut input, max) {
            Ok((_, payload)) => assert!(payload.len() <= max),
            Err(_) => break,
        }
    }
});
