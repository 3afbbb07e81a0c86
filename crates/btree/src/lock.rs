//! Row locks, held until the transaction ends: shared (LOCK IN SHARE MODE) and exclusive
//! (writes, FOR UPDATE), on clustered keys and on unique secondary key values.
//!
//! The table is split into shards by key hash, each with its own mutex and condition
//! variable, so lock traffic on different rows does not meet. Only a transaction that has
//! to wait touches the global wait-for graph: before sleeping it records whom it waits
//! for and looks for a cycle back to itself; finding one, it gives up with error 1213
//! (the session then rolls the victim back), as InnoDB's deadlock detector does. A wait
//! that outlasts `innodb_lock_wait_timeout` gives error 1205.
//!
//! A row a running transaction inserted, updated or deleted is locked by it without an
//! entry here (InnoDB's *implicit* lock): the record carries the writer's transaction
//! id. An insert gives back the locks it took for its write right after it
//! (`BtreeTrx::done_writing`), an update or delete the lock its locking read took on
//! the row (`BtreeTrx::written`), so a transaction inserting or changing millions of
//! rows holds no lock memory for them. Another transaction that then wants such a row
//! sees the active id in the record, gives back the lock it just took (holding none
//! while it waits: the writer may want the row again), and turns the implicit lock into
//! an entry held by the writer ([`LockTable::wait_implicit`]), which it waits on as on
//! any lock; the writer's [`LockTable::release`] at its end drops those entries too. A
//! rollback to a savepoint makes a changed row's implicit lock an entry again before it
//! undoes the change ([`LockTable::grant`]): the transaction keeps its locks to its end,
//! as InnoDB does.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};
use strata_engine::Interrupt;
use strata_storage::sync::{default_policy, Arc, Condvar, LatchMutex, Mutex, SpinPolicy};
use strata_types::{Error, Result};

const SHARDS: usize = 64;
/// Shards of the implicit locks turned into entries, by the writer's transaction id.
const CONVERSION_SHARDS: usize = 16;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockKey {
    pub space: u32,
    /// 0: the clustered key; n: the value of unique secondary index n.
    pub index: u16,
    pub key: Vec<u8>,
}

impl LockKey {
    /// The lock of the row whose clustered key is `key` in `space`.
    pub fn row(space: u32, key: &[u8]) -> LockKey {
        LockKey {
            space,
            index: 0,
            key: key.to_vec(),
        }
    }
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
    /// Touched by a wait and by the grant or release that ends it: engine-wide, so a
    /// latch mutex.
    waits_for: LatchMutex<HashMap<u64, Vec<u64>>>,
    /// Entries made for a writer from its implicit locks, by writer: its release drops
    /// them. Checking that the writer is still active and adding the entry happen under
    /// its shard's mutex, and the writer's release takes that mutex after it stopped
    /// being active, so no entry is ever added for a writer that has already ended.
    converted: Vec<Mutex<HashMap<u64, Vec<LockKey>>>>,
}

/// What [`LockTable::lock`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granted {
    /// A new lock: the caller must remember the key for release.
    New,
    /// A shared lock the transaction held became exclusive (the key is remembered).
    Upgraded,
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
            converted: (0..CONVERSION_SHARDS)
                .map(|_| Mutex::new(HashMap::new()))
                .collect(),
        }
    }

    fn shard(&self, k: &LockKey) -> &Shard {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        k.hash(&mut h);
        &self.shards[(h.finish() as usize) % SHARDS]
    }

    /// Rows and unique values with a lock entry now (each shard's map, counted one at
    /// a time: a figure for status, not a snapshot).
    pub fn entries(&self) -> usize {
        self.shards.iter().map(|s| s.map.lock().len()).sum()
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
        let mut waited = false;
        loop {
            let e = map.entry(key.clone()).or_default();
            if let Some(pos) = e.holders.iter().position(|(t, _)| *t == trx) {
                if e.holders[pos].1 == Mode::Exclusive || mode == Mode::Shared {
                    return Ok(Granted::AlreadyHeld);
                }
            }
            let blockers = e.conflicts(trx, mode);
            if blockers.is_empty() {
                let granted = match e.holders.iter_mut().find(|(t, _)| *t == trx) {
                    Some(h) => {
                        h.1 = mode;
                        Granted::Upgraded
                    }
                    None => {
                        e.holders.push((trx, mode));
                        Granted::New
                    }
                };
                // Only a wait recorded an edge in the wait-for graph: a grant without
                // one does not touch the engine-wide mutex.
                if waited {
                    self.waits_for.lock().remove(&trx);
                }
                return Ok(granted);
            }
            waited = true;
            self.nap(trx, &blockers, deadline, interrupt, shard, &mut map)?;
        }
    }

    /// One wait of `trx` behind `blockers` on `shard`: an error when the wait closes a
    /// cycle (1213), its time is up (1205) or its statement was killed; else sleeps
    /// until a release wakes it, or 100 ms pass so deadlocks formed after it slept are
    /// looked for again.
    fn nap(
        &self,
        trx: u64,
        blockers: &[u64],
        deadline: Instant,
        interrupt: &Interrupt,
        shard: &Shard,
        map: &mut strata_storage::sync::MutexGuard<'_, HashMap<LockKey, Entry>>,
    ) -> Result<()> {
        if self.would_deadlock(trx, blockers) {
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
        let nap = (deadline - now).min(Duration::from_millis(100));
        shard.cv.wait_for(map, nap);
        Ok(())
    }

    /// Waits until `owner`, whose write left `key`'s record carrying its id while it is
    /// still active (`active` tells), has ended: the implicit lock becomes an exclusive
    /// entry held by `owner`, and `trx` waits on it as on any lock — deadlocks, the
    /// timeout and KILL included. Returns at once when `owner` has already ended.
    pub fn wait_implicit(
        &self,
        trx: u64,
        owner: u64,
        key: &LockKey,
        active: &dyn Fn(u64) -> bool,
        timeout: Duration,
        interrupt: &Interrupt,
    ) -> Result<()> {
        let shard = self.shard(key);
        {
            let mut converted = self.converted[owner as usize % CONVERSION_SHARDS].lock();
            if !active(owner) {
                return Ok(());
            }
            let mut map = shard.map.lock();
            let e = map.entry(key.clone()).or_default();
            if !e.holders.iter().any(|(t, _)| *t == owner) {
                e.holders.push((owner, Mode::Exclusive));
                converted.entry(owner).or_default().push(key.clone());
            }
        }
        let deadline = Instant::now() + timeout;
        let mut map = shard.map.lock();
        loop {
            let held = map
                .get(key)
                .is_some_and(|e| e.holders.iter().any(|(t, _)| *t == owner));
            if !held {
                self.waits_for.lock().remove(&trx);
                return Ok(());
            }
            self.nap(trx, &[owner], deadline, interrupt, shard, &mut map)?;
        }
    }

    /// Gives `trx` an exclusive entry on `key` whoever else is listed there: `trx`
    /// already holds the row implicitly (its change is in the record), and any other
    /// entry is a transaction waiting for it (`BtreeTrx::relock_own`).
    pub fn grant(&self, trx: u64, key: &LockKey) -> Granted {
        let shard = self.shard(key);
        let mut map = shard.map.lock();
        let e = map.entry(key.clone()).or_default();
        match e.holders.iter_mut().find(|(t, _)| *t == trx) {
            Some(h) if h.1 == Mode::Exclusive => Granted::AlreadyHeld,
            Some(h) => {
                h.1 = Mode::Exclusive;
                Granted::Upgraded
            }
            None => {
                e.holders.push((trx, Mode::Exclusive));
                Granted::New
            }
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

    /// Gives back the lock `trx` took on `key` for one write, which the written
    /// record's transaction id now stands for (the implicit lock), and wakes waiters.
    pub fn release_key(&self, trx: u64, key: &LockKey) {
        let shard = self.shard(key);
        let mut map = shard.map.lock();
        if let Some(e) = map.get_mut(key) {
            e.holders.retain(|(t, _)| *t != trx);
            if e.holders.is_empty() {
                map.remove(key);
            }
        }
        drop(map);
        shard.cv.notify_all();
    }

    /// Releases every lock `trx` holds on `keys`, and the entries its implicit locks
    /// became ([`LockTable::wait_implicit`]), and wakes the waiters. Called once `trx`
    /// is no longer active.
    pub fn release<'a>(&self, trx: u64, keys: impl IntoIterator<Item = &'a LockKey>) {
        let converted = self.converted[trx as usize % CONVERSION_SHARDS]
            .lock()
            .remove(&trx)
            .unwrap_or_default();
        for k in keys {
            self.release_key(trx, k);
        }
        for k in &converted {
            self.release_key(trx, k);
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

    /// Waits (up to 20 s, for a loaded machine) until `cond` holds: a thread has got
    /// as far as its wait.
    fn until(cond: impl Fn() -> bool) {
        let end = Instant::now() + LONG;
        while !cond() {
            assert!(
                Instant::now() < end,
                "the other thread never got to its wait"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn an_implicit_lock_becomes_an_entry_the_writer_releases() {
        let t = Arc::new(LockTable::default());
        let active = Arc::new(std::sync::atomic::AtomicBool::new(true));
        // Writer 1's insert left row 1 carrying its id; 2 wants the row.
        let (t2, a2) = (t.clone(), active.clone());
        let h = std::thread::spawn(move || {
            let is_active = move |id: u64| id == 1 && a2.load(std::sync::atomic::Ordering::SeqCst);
            t2.wait_implicit(2, 1, &k(1), &is_active, LONG, &Interrupt::default())
        });
        until(|| t.waits_for.lock().contains_key(&2));
        assert!(!h.is_finished(), "2 waits while 1 runs");
        assert_eq!(t.entries(), 1, "the implicit lock became 1's entry");
        // A third transaction queues behind it as behind any exclusive lock.
        assert_eq!(
            t.lock(
                3,
                &k(1),
                Mode::Shared,
                Duration::from_millis(50),
                &Interrupt::default()
            ),
            Err(Error::LockWaitTimeout)
        );
        // 1 ends: no longer active, then its release (of nothing it listed itself).
        active.store(false, std::sync::atomic::Ordering::SeqCst);
        t.release(1, &[]);
        assert_eq!(h.join().unwrap(), Ok(()));
        assert_eq!(t.entries(), 0);
        // A writer that has ended is not waited for, and leaves no entry.
        let ended = |_: u64| false;
        assert_eq!(
            t.wait_implicit(2, 1, &k(1), &ended, LONG, &Interrupt::default()),
            Ok(())
        );
        assert_eq!(t.entries(), 0);
    }

    #[test]
    fn waiting_on_an_implicit_lock_can_close_a_cycle() {
        let t = Arc::new(LockTable::default());
        // 2 holds row 2 explicitly; 1 holds row 1 implicitly (its insert).
        t.lock(2, &k(2), Mode::Exclusive, LONG, &Interrupt::default())
            .unwrap();
        let t2 = t.clone();
        let h = std::thread::spawn(move || {
            t2.lock(1, &k(2), Mode::Exclusive, LONG, &Interrupt::default())
        });
        until(|| t.waits_for.lock().contains_key(&1));
        let only_1 = |id: u64| id == 1;
        let r = t.wait_implicit(2, 1, &k(1), &only_1, LONG, &Interrupt::default());
        assert_eq!(r, Err(Error::Deadlock));
        t.release(2, &[k(2)]);
        assert_eq!(h.join().unwrap(), Ok(Granted::New));
        t.release(1, &[k(2)]);
        assert_eq!(t.entries(), 0);
    }

    #[test]
    fn a_shared_lock_made_exclusive_is_an_upgrade() {
        let t = LockTable::default();
        let none = Interrupt::default();
        assert_eq!(
            t.lock(1, &k(1), Mode::Shared, LONG, &none),
            Ok(Granted::New)
        );
        assert_eq!(
            t.lock(1, &k(1), Mode::Exclusive, LONG, &none),
            Ok(Granted::Upgraded)
        );
        t.release_key(1, &k(1));
        assert_eq!(t.entries(), 0);
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
        until(|| t.waits_for.lock().contains_key(&1));
        let r = t.lock(2, &k(1), Mode::Exclusive, LONG, &Interrupt::default());
        assert_eq!(r, Err(Error::Deadlock));
        t.release(2, &[k(2)]);
        assert_eq!(h.join().unwrap(), Ok(Granted::New));
    }
}
