//! Hash maps and sets for rows' key bytes (GROUP BY, DISTINCT, hash joins, IN-subquery
//! probes, set operations, the subquery cache): std's tables with foldhash instead of
//! SipHash.
//!
//! These tables hash one key per row, so the hash function is on the path of every row
//! of a grouping or join: SipHash-1-3 was 3–7 % of the instructions of TPC-H Q16 and Q21.
//! foldhash is several times cheaper on short byte strings. The keys come from table
//! data, which a client may choose, so the hasher must not be predictable:
//! `foldhash::fast::RandomState` seeds every table from a per-process random value and
//! the table's address, so an attacker cannot precompute colliding keys (it is not a
//! cryptographic PRF as SipHash is; the server's hash tables are bounded per statement
//! by the memory limits, so the worst case of a collision flood is one slow statement).
//! Keys the server hands out itself (ids, serials) use `strata_types::inthash` instead.

/// A hash map keyed by row key bytes (or any key) hashed with foldhash.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A hash set hashed with foldhash.
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
