//! Row locks, held until the transaction ends: shared (LOCK IN SHARE MODE) and exclusive
//! (writes, FOR UPDATE), on clustered keys and on unique secondary key values.
//!
//! The table is split into shards by key hash, each with its own mutex and condition
//! variable, so lock traffic on different rows does not meet. Only a transaction that has
//! to wait touches the global wait-for graph: before sleeping it records whom it waits
//! for and looks for a cycle back to itself; finding one, it gives up with error 1213
//! (the session then rolls the victim back), as InnoDB's deadlock detector does. A wait
//! that outlasts `innodb_lock_wait_timeout` gives error 1205.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};
use strata_engine::Interrupt;
use strata_storage::sync::{default_policy, Arc, Condvar, LatchMutex, Mutex, SpinPolicy};
use strata_types::{Error, Result};

const SHARDS: usize = 64;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockKey {
    pub space: u32,
    /// 0: the clustered key; n: the value of unique secondary index n.
    pub index: u16,
    pub key: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Shared,
    Exclusive,
}

#[derive(Default)]
struct Entry {
    holders: Vec<(u64, Mode)>,
}

impl Entry {
    /// Transactions other than `trx` whose lock conflicts with `mode`.
    fn conflicts(&self, trx: u64, mode: Mode) -> Vec<u64> {
        self.holders
            .iter()
            .filter(|(t, m)| *t != trx && (mode == Mode::Exclusive || *m == Mode::Exclusive))
            .map(|(t, _)| *t)
            .collect()
    }
}

#[derive(Default)]
struct Shard {
    map: Mutex<HashMap<LockKey, Entry>>,
    cv: Condvar,
}

/// The shards' mutexes stay parking_lot's: a lock wait sleeps on the shard's condition
/// variable, which needs that mutex, and is a row-lock wait, not a latch wait.
pub struct LockTable {
    shards: Vec<Shard>,
    /// Touched on every grant (to forget a past wait): engine-wide, so a latch mutex.
    waits_for: LatchMutex<HashMap<u64, Vec<u64>>>,
}

/// What [`LockTable::lock`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granted {
    /// A new lock (or an upgrade): the caller must remember the key for release.
    New,
    /// The transaction already held it at least as strongly.
    AlreadyHeld,
}

impl Default for LockTable {
    fn default() -> Self {
        LockTable::new(&default_policy())
    }
}

impl LockTable {
    /// A lock table whose wait-for graph mutex waits per `policy` (the engine's).
    pub fn new(policy: &Arc<SpinPolicy>) -> LockTable {
        LockTable {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            waits_for: LatchMutex::with_policy(policy.clone(), HashMap::new()),
        }
    }

    fn shard(&self, k: &LockKey) -> &Shard {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        k.hash(&mut h);
        &self.shards[(h.finish() as usize) % SHARDS]
    }

    /// Takes `mode` on `key` for `trx`, waiting up to `timeout`, or until the waiting
    /// statement is killed (`interrupt`, checked at every wake-up).
    pub fn lock(
        &self,
        trx: u64,
        key: &LockKey,
        mode: Mode,
        timeout: Duration,
        interrupt: &Interrupt,
    ) -> Result<Granted> {
        let shard = self.shard(key);
        let deadline = Instant::now() + timeout;
        let mut map = shard.map.lock();
        loop {
            let e = map.entry(key.clone()).or_default();
            if let Some(pos) = e.holders.iter().position(|(t, _)| *t == trx) {
                if e.holders[pos].1 == Mode::Exclusive || mode == Mode::Shared {
                    return Ok(Granted::AlreadyHeld);
                }
            }
            let blockers = e.conflicts(trx, mode);
            if blockers.is_empty() {
                match e.holders.iter_mut().find(|(t, _)| *t == trx) {
                    Some(h) => h.1 = mode,
                    None => e.holders.push((trx, mode)),
                }
                self.waits_for.lock().remove(&trx);
                return Ok(Granted::New);
            }
            if self.would_deadlock(trx, &blockers) {
                self.waits_for.lock().remove(&trx);
                return Err(Error::Deadlock);
            }
            let now = Instant::now();
            if now >= deadline {
                self.waits_for.lock().remove(&trx);
                return Err(Error::LockWaitTimeout);
            }
            if let Err(e) = interrupt.check() {
                self.waits_for.lock().remove(&trx);
                return Err(e);
            }
            // Wake at least every 100 ms to look for deadlocks formed after we slept.
            let nap = (deadline - now).min(Duration::from_millis(100));
            shard.cv.wait_for(&mut map, nap);
        }
    }

    /// Takes the lock only if it is free now (purge uses this: it must never wait).
    pub fn try_lock(&self, trx: u64, key: &LockKey) -> bool {
        let shard = self.shard(key);
        let mut map = shard.map.lock();
        let e = map.entry(key.clone()).or_default();
        if !e.conflicts(trx, Mode::Exclusive).is_empty() {
            if e.holders.is_empty() {
                map.remove(key);
            }
            return false;
        }
        if !e.holders.iter().any(|(t, _)| *t == trx) {
            e.holders.push((trx, Mode::Exclusive));
        }
        true
    }

    /// Records the wait and reports whether it closes a cycle.
    fn would_deadlock(&self, trx: u64, blockers: &[u64]) -> bool {
        let mut g = self.waits_for.lock();
        g.insert(trx, blockers.to_vec());
        let mut seen = HashSet::new();
        let mut stack: Vec<u64> = blockers.to_vec();
        while let Some(t) = stack.pop() {
            if t == trx {
                return true;
            }
            if seen.insert(t) {
                if let Some(next) = g.get(&t) {
                    stack.extend_from_slice(next);
                }
            }
        }
        false
    }

    /// Releases every lock `trx` holds on `keys` and wakes the waiters.
    pub fn release(&self, trx: u64, keys: &[LockKey]) {
        for k in keys {
            let shard = self.shard(k);
            let mut map = shard.map.lock();
            if let Some(e) = map.get_mut(k) {
                e.holders.retain(|(t, _)| *t != trx);
                if e.holders.is_empty() {
                    map.remove(k);
                }
            }
            drop(map);
            shard.cv.notify_all();
        }
        self.waits_for.lock().remove(&trx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn k(n: u8) -> LockKey {
        LockKey {
            space: 1,
            index: 0,
            key: vec![n],
        }
    }
    const LONG: Duration = Duration::from_secs(20);

    #[test]
    fn shared_locks_share_and_exclusive_excludes() {
        let t = LockTable::default();
        assert_eq!(
            t.lock(1, &k(1), Mode::Shared, LONG, &Interrupt::default()),
            Ok(Granted::New)
        );
        assert_eq!(
            t.lock(2, &k(1), Mode::Shared, LONG, &Interrupt::default()),
            Ok(Granted::New)
        );
        assert_eq!(
            t.lock(
                3,
                &k(1),
                Mode::Exclusive,
                Duration::from_millis(50),
                &Interrupt::default()
            ),
            Err(Error::LockWaitTimeout)
        );
        t.release(1, &[k(1)]);
        t.release(2, &[k(1)]);
        assert_eq!(
            t.lock(3, &k(1), Mode::Exclusive, LONG, &Interrupt::default()),
            Ok(Granted::New)
        );
        assert_eq!(
            t.lock(3, &k(1), Mode::Shared, LONG, &Interrupt::default()),
            Ok(Granted::AlreadyHeld)
        );
        assert!(!t.try_lock(9, &k(1)));
    }

    #[test]
    fn a_waiter_gets_the_lock_when_the_holder_releases() {
        let t = Arc::new(LockTable::default());
        t.lock(1, &k(1), Mode::Exclusive, LONG, &Interrupt::default())
            .unwrap();
        let t2 = t.clone();
        let h = std::thread::spawn(move || {
            t2.lock(2, &k(1), Mode::Exclusive, LONG, &Interrupt::default())
        });
        std::thread::sleep(Duration::from_millis(50));
        t.release(1, &[k(1)]);
        assert_eq!(h.join().unwrap(), Ok(Granted::New));
    }

    #[test]
    fn a_killed_waiter_stops_waiting_with_the_kill_error() {
        let t = Arc::new(LockTable::default());
        t.lock(1, &k(1), Mode::Exclusive, LONG, &Interrupt::default())
            .unwrap();
        let (t2, kill) = (t.clone(), Interrupt::default());
        let signal = kill.clone();
        let h = std::thread::spawn(move || t2.lock(2, &k(1), Mode::Exclusive, LONG, &signal));
        std::thread::sleep(Duration::from_millis(50));
        let asked = Instant::now();
        kill.raise(strata_engine::StopReason::Query);
        assert_eq!(h.join().unwrap(), Err(Error::Interrupted));
        assert!(asked.elapsed() < Duration::from_millis(500));
    }

    #[test]
    fn a_cycle_is_a_deadlock() {
        let t = Arc::new(LockTable::default());
        t.lock(1, &k(1), Mode::Exclusive, LONG, &Interrupt::default())
            .unwrap();
        t.lock(2, &k(2), Mode::Exclusive, LONG, &Interrupt::default())
            .unwrap();
        let t2 = t.clone();
        // 1 waits for 2 (in a thread), then 2 asks for 1's row: a cycle.
        let h = std::thread::spawn(move || {
            t2.lock(1, &k(2), Mode::Exclusive, LONG, &Interrupt::default())
        });
        std::thread::sleep(Duration::from_millis(100));
        let r = t.lock(2, &k(1), Mode::Exclusive, LONG, &Interrupt::default());
        assert_eq!(r, Err(Error::Deadlock));
        t.release(2, &[k(2)]);
        assert_eq!(h.join().unwrap(), Ok(Granted::New));
    }
}
