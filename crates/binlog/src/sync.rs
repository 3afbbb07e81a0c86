//! Binlog group commit (`sync_binlog`): committers that wrote their events wait until
//! the file is fsynced past them; the first to find no fsync running does one for
//! everyone written so far, the others wait for it, so a group of concurrent commits
//! costs one fsync (the scheme `storage/src/redo.rs` uses for the redo log).

use parking_lot::{Condvar, Mutex};
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
