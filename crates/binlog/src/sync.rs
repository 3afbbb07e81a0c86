//! Binlog group commit (`sync_binlog`): committers that wrote their events wait until
//! the file is fsynced past them; the first to find no fsync running does one for
//! everyone written so far, the others wait for it, so a group of concurrent commits
//! costs one fsync (the scheme `storage/src/redo.rs` uses for the redo log).
//!
//! [`Turnstile`]: the engines' commits of logged transactions run one at a time in the
//! order of the log. Each waiter parks on its own and is woken by its predecessor
//! alone: a condition variable woken for every commit would wake every waiting
//! committer each time (256 clients: 256 wake-ups per commit).

use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use strata_types::{Error, Result};

#[derive(Default)]
pub struct GroupSync {
    /// Writes so far: a write's ticket is the count after it.
    written: AtomicU64,
    state: Mutex<Synced>,
    done: Condvar,
    /// fsyncs done (a status counter: fsyncs per commit in the bench).
    fsyncs: AtomicU64,
}

#[derive(Default)]
struct Synced {
    /// Every write with a ticket up to this one is durable.
    upto: u64,
    /// An fsync is running.
    leader: bool,
}

impl GroupSync {
    /// Records a write (called under the log's lock); returns its ticket.
    pub fn wrote(&self) -> u64 {
        self.written.fetch_add(1, Ordering::AcqRel) + 1
    }

    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    pub fn fsyncs(&self) -> u64 {
        self.fsyncs.load(Ordering::Relaxed)
    }

    /// Everything up to `ticket` was made durable another way (a rotation's fsync).
    pub fn synced_all(&self, ticket: u64) {
        let mut s = self.state.lock();
        s.upto = s.upto.max(ticket);
        self.done.notify_all();
    }

    /// Returns once write `ticket` is durable: as the leader, fsyncing the file
    /// `current` names, or after another leader's fsync covered it. `current` reads,
    /// under the log's lock, the writes so far and the file being written: every
    /// earlier file was fsynced when it was rotated out.
    pub fn wait_synced(
        &self,
        ticket: u64,
        current: impl Fn() -> Option<(u64, std::sync::Arc<std::fs::File>)>,
    ) -> Result<()> {
        let mut s = self.state.lock();
        loop {
            if s.upto >= ticket {
                return Ok(());
            }
            if !s.leader {
                s.leader = true;
                drop(s);
                let (target, r) = match current() {
                    Some((target, file)) => (target, file.sync_data()),
                    None => (self.written(), Ok(())),
                };
                self.fsyncs.fetch_add(1, Ordering::Relaxed);
                s = self.state.lock();
                s.leader = false;
                if r.is_ok() {
                    s.upto = s.upto.max(target);
                }
                self.done.notify_all();
                if let Err(e) = r {
                    return Err(Error::io("fsync of the binary log", e));
                }
            } else {
                self.done.wait(&mut s);
            }
        }
    }
}

/// Runs critical sections in the order of their numbers (1, 2, 3, …).
#[derive(Default)]
pub struct Turnstile(Mutex<Turns>);

#[derive(Default)]
struct Turns {
    /// The last number whose section is done.
    done: u64,
    /// Parked waiters by number.
    waiting: HashMap<u64, std::thread::Thread>,
}

impl Turnstile {
    /// Returns once every number before `order` is [`Turnstile::done`].
    pub fn wait_for(&self, order: u64) {
        let mut t = self.0.lock();
        if t.done + 1 >= order {
            return;
        }
        t.waiting.insert(order, std::thread::current());
        drop(t);
        loop {
            std::thread::park();
            let mut t = self.0.lock();
            if t.done + 1 >= order {
                t.waiting.remove(&order);
                return;
            }
        }
    }

    /// The last number whose section is done: every one up to it is.
    pub fn done_upto(&self) -> u64 {
        self.0.lock().done
    }

    /// `order`'s section is over: wakes the next one's waiter, if it waits.
    pub fn done(&self, order: u64) {
        let mut t = self.0.lock();
        t.done = t.done.max(order);
        if let Some(next) = t.waiting.get(&(t.done + 1)) {
            next.unpark();
        }
    }
}
