//! A hash map for integer keys the server hands out itself (prepared-statement ids,
//! transaction serials, connection ids): one multiply and shift instead of SipHash.
//!
//! SipHash's per-process random keys defend against keys an attacker chooses. These keys
//! are assigned by the server, sequentially, so the defence buys nothing, and on the
//! point-select path the maps are probed four times per statement. Never use this for
//! keys a client controls (table names, index keys).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes one integer with a Fibonacci multiply; sequential keys spread over the
/// table's high bits, which hashbrown's control bytes and bucket index use.
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    /// Other key types still work (FNV-1a over their bytes), just not as fast.
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0 ^ 0xcbf2_9ce4_8422_2325;
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }

    fn write_u64(&mut self, k: u64) {
        let k = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = k ^ (k >> 32);
    }

    fn write_u32(&mut self, k: u32) {
        self.write_u64(k as u64);
    }

    fn write_u16(&mut self, k: u16) {
        self.write_u64(k as u64);
    }
}

/// A `HashMap` keyed by a server-assigned integer.
pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn sequential_keys_get_distinct_spread_hashes() {
        let b = BuildHasherDefault::<IntHasher>::default();
        let hashes: std::collections::HashSet<u64> =
            (0u64..10_000).map(|k| b.hash_one(k)).collect();
        assert_eq!(hashes.len(), 10_000);
        // The top 7 bits (hashbrown's control byte) vary among neighbours.
        let tops: std::collections::HashSet<u64> =
            (0u64..64).map(|k| b.hash_one(k) >> 57).collect();
        assert!(tops.len() > 32, "{}", tops.len());
    }

    #[test]
    fn the_map_works_for_u32_and_u64_keys() {
        let mut m: IntMap<u32, &str> = IntMap::default();
        m.insert(7, "seven");
        m.insert(8, "eight");
        assert_eq!(m.get(&7), Some(&"seven"));
        assert_eq!(m.remove(&8), Some("eight"));
        let mut n: IntMap<u64, u64> = IntMap::default();
        for k in 0..1000 {
            n.insert(k << 20, k);
        }
        assert!((0..1000).all(|k| n[&(k << 20)] == k));
    }
}
