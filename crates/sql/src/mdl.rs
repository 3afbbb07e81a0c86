//! Metadata locks (MDL), MySQL's way of keeping DDL from racing with transactions.
//!
//! Design note.
//! - **What is locked**: a name, not a table handle. [`MdlKey`]s live in four
//!   namespaces: `Global` (the whole server: FLUSH TABLES WITH READ LOCK against writes
//!   and DDL), `Commit` (FTWRL against COMMIT of transactions that wrote), `Schema` (a
//!   database: DROP DATABASE against DDL inside it) and `Table` (`db`.`name`, exactly as
//!   spelled, since `lower_case_table_names=0`).
//! - **Kinds** ([`MdlMode`]), as MySQL names them: on the scoped namespaces
//!   INTENTION_EXCLUSIVE, SHARED, EXCLUSIVE; on tables SHARED_HIGH_PRIO (reads of the
//!   definition only), SHARED_READ (a statement reading rows), SHARED_WRITE (changing
//!   rows, or reading FOR UPDATE), SHARED_UPGRADABLE (online DDL's first phase),
//!   SHARED_READ_ONLY (LOCK TABLES … READ), SHARED_NO_WRITE, SHARED_NO_READ_WRITE (LOCK
//!   TABLES … WRITE) and EXCLUSIVE (DDL).
//! - **Compatibility**: MySQL's two matrices, one against *granted* locks and one against
//!   *pending* ones ([`granted_conflicts`], [`pending_conflicts`]). The second gives
//!   waiter priority: while an EXCLUSIVE request waits, new SHARED_READ/SHARED_WRITE
//!   requests queue behind it, so a steady stream of short transactions cannot starve
//!   DDL. A context's own granted locks never block its own requests (an upgrade of a
//!   lock it holds waits only for the others).
//! - **Durations** ([`MdlDuration`]): `Statement` (released when the statement ends: the
//!   Global and Schema intention locks of writes and DDL), `Transaction` (every table a
//!   statement uses, held until COMMIT/ROLLBACK — or the statement's end under
//!   autocommit; ROLLBACK TO SAVEPOINT keeps them), and the explicit ones `LockTables`
//!   and `GlobalReadLock`, released by UNLOCK TABLES.
//! - **Waiting**: a request that cannot be granted queues on the lock object and waits
//!   on its condition variable for up to `lock_wait_timeout` (then
//!   [`Error::LockWaitTimeout`], 1205). Deadlocks among metadata-lock waiters are
//!   detected: before waiting (and again each time it wakes), a waiter walks the
//!   wait-for graph — who holds or queues ahead for what it wants, and what those wait
//!   for — and if the walk comes back to itself it gives up with [`Error::Deadlock`]
//!   (1213), as MySQL does. The victim is the request that closed the cycle (MySQL
//!   prefers a DML statement over DDL by weight; here the last to wait loses). Waits on
//!   row locks inside an engine are not part of this graph; those end by
//!   `innodb_lock_wait_timeout`.
//! - **Cost**: the lock objects sit in a map sharded by key hash ([`SHARDS`] read-write
//!   locks), and each context keeps the last few objects it used, so taking a lock is
//!   usually an `Arc` clone and one short critical section on that table's own object
//!   (granting), and releasing it one more; no lock is held across a statement except
//!   the metadata lock itself. A context that already holds a covering lock (a second
//!   statement in the same transaction) touches nothing shared. Objects nobody
//!   references are swept from their shard when it grows.
//! - **Fast path** (MySQL's "unobtrusive" locks): the modes every statement takes —
//!   SHARED, SHARED_HIGH_PRIO, SHARED_READ, SHARED_WRITE on tables, INTENTION_EXCLUSIVE on
//!   scoped keys — never conflict with each other, so while no other kind is granted or
//!   waiting on an object they are only counted, with one compare-and-swap on the
//!   object's [`LockObj::fast`] word, and released with one atomic subtraction: the
//!   object's mutex, shared by every connection using the table, is not touched. An
//!   "obtrusive" request (DDL, LOCK TABLES, FTWRL) raises the word's flag under the
//!   mutex, which sends every later request to the slow path, and counts the fast
//!   holders as granted. A context's own fast locks are moved into the object's holder
//!   list ("materialised") before it asks the same object for an obtrusive mode, and all
//!   of them before it waits for anything, so the deadlock walk sees every lock of every
//!   waiting context (one that does not wait cannot close a cycle).

use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata_types::{Error, Result};

/// Number of shards of the lock-object map.
pub const SHARDS: usize = 64;

/// What a key names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Namespace {
    Global,
    Commit,
    Schema,
    Table,
    /// Stored procedures and functions (`db`.`name`), taken X by their DDL.
    Procedure,
    Function,
    /// GET_LOCK's user-level locks, taken X until RELEASE_LOCK, RELEASE_ALL_LOCKS or the
    /// connection's end: waiting, KILL and deadlock detection are the metadata locks'.
    UserLock,
}

impl Namespace {
    /// Global, Commit and Schema locks are "scoped": they take only IX, S and X.
    fn scoped(self) -> bool {
        matches!(
            self,
            Namespace::Global | Namespace::Commit | Namespace::Schema
        )
    }
}

/// The name a metadata lock protects. Ordered by (namespace, database, name): locks
/// are taken in that order, so two statements asking for several never wait on each
/// other in opposite orders.
#[derive(Clone, Debug)]
pub struct MdlKey {
    ns: Namespace,
    db: Box<str>,
    name: Box<str>,
    hash: u64,
}

impl MdlKey {
    fn new(ns: Namespace, db: &str, name: &str) -> MdlKey {
        // FNV-1a: keys are short, and the hash is computed once per key, not per lookup.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in [ns as u8]
            .iter()
            .chain(db.as_bytes())
            .chain(&[0u8])
            .chain(name.as_bytes())
        {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        MdlKey {
            ns,
            db: db.into(),
            name: name.into(),
            hash: h,
        }
    }

    pub fn table(db: &str, name: &str) -> MdlKey {
        MdlKey::new(Namespace::Table, db, name)
    }

    /// A stored procedure (`function` false) or function; names are case-insensitive.
    pub fn routine(db: &str, name: &str, function: bool) -> MdlKey {
        let ns = if function {
            Namespace::Function
        } else {
            Namespace::Procedure
        };
        MdlKey::new(ns, db, &name.to_ascii_lowercase())
    }

    /// A user-level lock (GET_LOCK); names are case-insensitive.
    pub fn user_lock(name: &str) -> MdlKey {
        MdlKey::new(Namespace::UserLock, "", &name.to_lowercase())
    }

    pub fn schema(db: &str) -> MdlKey {
        MdlKey::new(Namespace::Schema, db, "")
    }

    pub fn global() -> MdlKey {
        MdlKey::new(Namespace::Global, "", "")
    }

    pub fn commit() -> MdlKey {
        MdlKey::new(Namespace::Commit, "", "")
    }

    pub fn namespace(&self) -> Namespace {
        self.ns
    }

    pub fn db(&self) -> &str {
        &self.db
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl PartialEq for MdlKey {
    fn eq(&self, o: &MdlKey) -> bool {
        self.hash == o.hash && self.ns == o.ns && self.db == o.db && self.name == o.name
    }
}

impl Eq for MdlKey {}

impl Hash for MdlKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl PartialOrd for MdlKey {
    fn partial_cmp(&self, o: &MdlKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for MdlKey {
    fn cmp(&self, o: &MdlKey) -> std::cmp::Ordering {
        (self.ns, &self.db, &self.name).cmp(&(o.ns, &o.db, &o.name))
    }
}

/// Passes the key's precomputed hash through.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) ^ (*b as u64) ^ (self.0 >> 56);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Lock kinds, as MySQL's `enum_mdl_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MdlMode {
    /// IX: scoped locks only; a statement that will write or change the schema.
    IntentionExclusive = 0,
    /// S: on scoped locks, FTWRL; on tables, reading the definition only.
    Shared,
    /// SH: reading a table's definition (SHOW, information_schema); never waits behind
    /// pending requests.
    SharedHighPrio,
    /// SR: a statement that reads rows.
    SharedRead,
    /// SW: a statement that changes rows or reads them FOR UPDATE.
    SharedWrite,
    /// SU: online DDL's first phase; upgradable to X. Two SU do not share.
    SharedUpgradable,
    /// SRO: LOCK TABLES … READ.
    SharedReadOnly,
    /// SNW: readers allowed, writers not; upgradable.
    SharedNoWrite,
    /// SNRW: LOCK TABLES … WRITE.
    SharedNoReadWrite,
    /// X: DDL.
    Exclusive,
}

const MODES: usize = 10;

const fn bit(m: MdlMode) -> u16 {
    1 << m as u8
}

const ALL: u16 = (1 << MODES) - 1;

use MdlMode::*;

/// The granted modes that keep a request of mode `m` waiting.
pub fn granted_conflicts(m: MdlMode, scoped: bool) -> u16 {
    if scoped {
        return match m {
            IntentionExclusive => bit(Shared) | bit(Exclusive),
            Shared => bit(IntentionExclusive) | bit(Exclusive),
            _ => bit(IntentionExclusive) | bit(Shared) | bit(Exclusive),
        };
    }
    match m {
        IntentionExclusive | Shared | SharedHighPrio => bit(Exclusive),
        SharedRead => bit(SharedNoReadWrite) | bit(Exclusive),
        SharedWrite => {
            bit(SharedReadOnly) | bit(SharedNoWrite) | bit(SharedNoReadWrite) | bit(Exclusive)
        }
        SharedUpgradable => {
            bit(SharedUpgradable) | bit(SharedNoWrite) | bit(SharedNoReadWrite) | bit(Exclusive)
        }
        SharedReadOnly => bit(SharedWrite) | bit(SharedNoReadWrite) | bit(Exclusive),
        SharedNoWrite => {
            bit(SharedWrite)
                | bit(SharedUpgradable)
                | bit(SharedNoWrite)
                | bit(SharedNoReadWrite)
                | bit(Exclusive)
        }
        SharedNoReadWrite => ALL & !(bit(Shared) | bit(SharedHighPrio) | bit(IntentionExclusive)),
        Exclusive => ALL,
    }
}

/// The *pending* modes a new request of mode `m` queues behind (waiter priority).
pub fn pending_conflicts(m: MdlMode, scoped: bool) -> u16 {
    if scoped {
        return match m {
            IntentionExclusive => bit(Shared) | bit(Exclusive),
            Shared => bit(Exclusive),
            _ => 0,
        };
    }
    match m {
        Shared | SharedUpgradable | SharedNoWrite | SharedNoReadWrite => bit(Exclusive),
        SharedRead => bit(SharedNoReadWrite) | bit(Exclusive),
        SharedWrite => bit(SharedNoWrite) | bit(SharedNoReadWrite) | bit(Exclusive),
        SharedReadOnly => bit(SharedWrite) | bit(SharedNoReadWrite) | bit(Exclusive),
        IntentionExclusive | SharedHighPrio | Exclusive => 0,
    }
}

/// Whether holding `held` already gives what a request for `want` would.
fn covers(held: MdlMode, want: MdlMode) -> bool {
    if held == want || held == Exclusive {
        return true;
    }
    let weaker = match held {
        SharedHighPrio => bit(Shared),
        SharedRead => bit(Shared) | bit(SharedHighPrio),
        SharedWrite => bit(Shared) | bit(SharedHighPrio) | bit(SharedRead),
        SharedUpgradable => bit(Shared) | bit(SharedHighPrio) | bit(SharedRead),
        SharedReadOnly => bit(Shared) | bit(SharedHighPrio) | bit(SharedRead),
        SharedNoWrite => {
            bit(Shared)
                | bit(SharedHighPrio)
                | bit(SharedRead)
                | bit(SharedUpgradable)
                | bit(SharedReadOnly)
        }
        SharedNoReadWrite => {
            ALL & !(bit(Exclusive) | bit(IntentionExclusive) | bit(SharedNoReadWrite))
        }
        _ => 0,
    };
    weaker & bit(want) != 0
}

/// How long a granted lock is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MdlDuration {
    /// Until the statement ends.
    Statement,
    /// Until COMMIT or ROLLBACK (the statement's end under autocommit).
    Transaction,
    /// Until UNLOCK TABLES (or the next LOCK TABLES).
    LockTables,
    /// FLUSH TABLES WITH READ LOCK: until UNLOCK TABLES.
    GlobalReadLock,
    /// GET_LOCK: until RELEASE_LOCK, RELEASE_ALL_LOCKS or the connection's end.
    Explicit,
}

impl MdlDuration {
    /// A ticket of this duration can stand in for one of `other` (it lives as long).
    fn outlives(self, other: MdlDuration) -> bool {
        use MdlDuration as D;
        match self {
            D::Statement => other == D::Statement,
            D::Transaction => matches!(other, D::Statement | D::Transaction),
            D::LockTables | D::GlobalReadLock | D::Explicit => true,
        }
    }
}

/// One lock a statement asks for.
#[derive(Clone, Debug)]
pub struct MdlRequest {
    pub key: MdlKey,
    pub mode: MdlMode,
}

impl MdlRequest {
    pub fn new(key: MdlKey, mode: MdlMode) -> MdlRequest {
        MdlRequest { key, mode }
    }
}

/// Sorts requests into the one acquisition order and merges those on the same key
/// (keeping the stronger mode; of two that do not cover each other, both).
pub fn normalize(reqs: &mut Vec<MdlRequest>) {
    reqs.sort_by(|a, b| a.key.cmp(&b.key));
    let mut out: Vec<MdlRequest> = Vec::with_capacity(reqs.len());
    for r in reqs.drain(..) {
        if let Some(last) = out.last_mut().filter(|l| l.key == r.key) {
            if covers(last.mode, r.mode) {
                continue;
            }
            if covers(r.mode, last.mode) {
                last.mode = r.mode;
                continue;
            }
        }
        out.push(r);
    }
    *reqs = out;
}

/// The state of one lock object, behind its mutex.
#[derive(Default)]
struct ObjState {
    granted: [u32; MODES],
    pending: [u32; MODES],
    /// (context id, mode) of every granted lock: the deadlock walk and the
    /// own-locks exemption read it.
    holders: Vec<(u64, MdlMode)>,
    /// (context id, mode) of every waiting request.
    waiters: Vec<(u64, MdlMode)>,
    /// Obtrusive requests granted or waiting (the fast word's flag is set while > 0).
    obtrusive: u32,
}

fn mask(counts: &[u32; MODES]) -> u16 {
    let mut m = 0;
    for (i, c) in counts.iter().enumerate() {
        if *c > 0 {
            m |= 1 << i;
        }
    }
    m
}

impl ObjState {
    /// Whether `ctx` may be granted `mode` now. Its own granted locks and its own
    /// pending request do not count against it.
    /// `fast` is the object's fast word: its counted grants are others' (a context
    /// materialises its own before asking for an obtrusive mode).
    fn grantable(&self, ctx: u64, mode: MdlMode, scoped: bool, fast: u64) -> bool {
        let g = granted_conflicts(mode, scoped);
        let mut granted = self.granted;
        for m in [
            IntentionExclusive,
            Shared,
            SharedHighPrio,
            SharedRead,
            SharedWrite,
        ] {
            granted[m as usize] += fast_count(fast, m);
        }
        if mask(&granted) & g != 0 {
            let mut others = granted;
            for (c, m) in &self.holders {
                if *c == ctx {
                    others[*m as usize] -= 1;
                }
            }
            if mask(&others) & g != 0 {
                return false;
            }
        }
        let p = pending_conflicts(mode, scoped);
        if mask(&self.pending) & p != 0 {
            let mut others = self.pending;
            for (c, m) in &self.waiters {
                if *c == ctx {
                    others[*m as usize] -= 1;
                }
            }
            if mask(&others) & p != 0 {
                return false;
            }
        }
        true
    }

    fn grant(&mut self, ctx: u64, mode: MdlMode) {
        self.granted[mode as usize] += 1;
        self.holders.push((ctx, mode));
    }

    fn unqueue(&mut self, ctx: u64, mode: MdlMode) {
        if let Some(i) = self.waiters.iter().position(|w| *w == (ctx, mode)) {
            self.waiters.swap_remove(i);
            self.pending[mode as usize] -= 1;
        }
    }

    /// The contexts keeping `ctx`'s request for `mode` waiting; none once it is no
    /// longer queued here (granted, or given up), whatever the wait registry still says.
    fn blockers(&self, ctx: u64, mode: MdlMode, scoped: bool) -> Vec<u64> {
        if !self.waiters.contains(&(ctx, mode)) {
            return Vec::new();
        }
        let g = granted_conflicts(mode, scoped);
        let p = pending_conflicts(mode, scoped);
        let held = self
            .holders
            .iter()
            .filter(|(c, m)| *c != ctx && g & bit(*m) != 0);
        let queued = self
            .waiters
            .iter()
            .filter(|(c, m)| *c != ctx && p & bit(*m) != 0);
        held.chain(queued).map(|(c, _)| *c).collect()
    }
}

/// One lockable name.
struct LockObj {
    key: MdlKey,
    /// Fast-path grants: a [`FAST_BITS`]-bit count per unobtrusive mode (the mode's
    /// number picks the field), and [`OBTRUSIVE`] while an obtrusive lock is granted or
    /// waited for (then every request takes the slow path). Changed with the flag only
    /// under `state`'s mutex; counts change without it.
    fast: AtomicU64,
    state: Mutex<ObjState>,
    cond: Condvar,
}

/// Width of one mode's fast-path count; a full count sends requests to the slow path.
const FAST_BITS: u32 = 12;
const FAST_MAX: u64 = (1 << FAST_BITS) - 1;
/// The fast word's flag: an obtrusive lock is granted or waited for.
const OBTRUSIVE: u64 = 1 << 63;

/// Whether `m` is unobtrusive on a key of this kind: compatible with every other
/// unobtrusive mode, granted or pending, so it may be granted by counting alone.
fn unobtrusive(m: MdlMode, scoped: bool) -> bool {
    if scoped {
        m == IntentionExclusive
    } else {
        matches!(m, Shared | SharedHighPrio | SharedRead | SharedWrite)
    }
}

/// The fast word's unit for mode `m` (unobtrusive modes are numbered 0 to 4).
fn fast_unit(m: MdlMode) -> u64 {
    1 << (m as u32 * FAST_BITS)
}

/// The fast-path grants of mode `m` in the word `w`.
fn fast_count(w: u64, m: MdlMode) -> u32 {
    ((w >> (m as u32 * FAST_BITS)) & FAST_MAX) as u32
}

impl LockObj {
    /// Grants unobtrusive `mode` by counting it, unless an obtrusive lock is granted or
    /// waited for (or the count is full): then false, and the slow path decides.
    fn try_fast(&self, mode: MdlMode) -> bool {
        let mut w = self.fast.load(Ordering::Acquire);
        loop {
            if w & OBTRUSIVE != 0 || fast_count(w, mode) as u64 == FAST_MAX {
                return false;
            }
            match self.fast.compare_exchange_weak(
                w,
                w + fast_unit(mode),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
    }

    /// Releases a fast-path grant; wakes the waiters when an obtrusive request may be
    /// among them (taking the mutex first, so a waiter between its check and its wait
    /// cannot miss the wake-up).
    fn release_fast(&self, mode: MdlMode) {
        let before = self.fast.fetch_sub(fast_unit(mode), Ordering::AcqRel);
        if before & OBTRUSIVE != 0 {
            drop(self.state.lock());
            self.cond.notify_all();
        }
    }

    fn release(&self, ctx: u64, mode: MdlMode) {
        let mut s = self.state.lock();
        if let Some(i) = s.holders.iter().position(|h| *h == (ctx, mode)) {
            s.holders.swap_remove(i);
            s.granted[mode as usize] -= 1;
            if !unobtrusive(mode, self.key.ns.scoped()) {
                self.leave_obtrusive(&mut s);
            }
        }
        let wake = !s.waiters.is_empty();
        drop(s);
        if wake {
            self.cond.notify_all();
        }
    }

    /// An obtrusive request arrives (to be granted or to wait): from now on every
    /// request takes the slow path and sees it. Called under the mutex.
    fn enter_obtrusive(&self, s: &mut ObjState) {
        s.obtrusive += 1;
        if s.obtrusive == 1 {
            self.fast.fetch_or(OBTRUSIVE, Ordering::AcqRel);
        }
    }

    /// An obtrusive request is released or given up; the last one reopens the fast
    /// path. Called under the mutex.
    fn leave_obtrusive(&self, s: &mut ObjState) {
        s.obtrusive -= 1;
        if s.obtrusive == 0 {
            self.fast.fetch_and(!OBTRUSIVE, Ordering::AcqRel);
        }
    }
}

type Shard = RwLock<HashMap<MdlKey, Arc<LockObj>, BuildHasherDefault<KeyHasher>>>;

/// The server's lock manager: every session's [`MdlContext`] shares it.
pub struct MdlManager {
    shards: Vec<Shard>,
    /// Per shard: the size at which the next insert sweeps unreferenced objects.
    sweep_at: Vec<AtomicU64>,
    /// Who waits for what: context id → (object, mode). Only waiters touch it.
    waits: Mutex<HashMap<u64, (Arc<LockObj>, MdlMode)>>,
    next_ctx: AtomicU64,
    /// Held user-level locks: lower-cased name → (context id, owner's connection id,
    /// times taken), for IS_USED_LOCK / IS_FREE_LOCK and GET_LOCK taken again.
    user_locks: Mutex<HashMap<Box<str>, (u64, u64, u32)>>,
}

const SWEEP_MIN: u64 = 64;

impl Default for MdlManager {
    fn default() -> Self {
        MdlManager {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            sweep_at: (0..SHARDS).map(|_| AtomicU64::new(SWEEP_MIN)).collect(),
            waits: Mutex::new(HashMap::new()),
            next_ctx: AtomicU64::new(1),
            user_locks: Mutex::new(HashMap::new()),
        }
    }
}

impl MdlManager {
    pub fn new() -> MdlManager {
        MdlManager::default()
    }

    /// The lock object of `key`, created on first use.
    fn object(&self, key: &MdlKey) -> Arc<LockObj> {
        let i = (key.hash % SHARDS as u64) as usize;
        if let Some(o) = self.shards[i].read().get(key) {
            return o.clone();
        }
        let mut map = self.shards[i].write();
        if let Some(o) = map.get(key) {
            return o.clone();
        }
        if map.len() as u64 >= self.sweep_at[i].load(Ordering::Relaxed) {
            // Only the map refers to an object nobody holds or waits for (holders and
            // waiters keep an Arc), and nobody can find it meanwhile: we hold the shard.
            map.retain(|_, o| Arc::strong_count(o) > 1);
            self.sweep_at[i].store(SWEEP_MIN.max(2 * map.len() as u64), Ordering::Relaxed);
        }
        let o = Arc::new(LockObj {
            key: key.clone(),
            fast: AtomicU64::new(0),
            state: Mutex::new(ObjState::default()),
            cond: Condvar::new(),
        });
        map.insert(key.clone(), o.clone());
        o
    }

    /// How many lock objects the map holds (tests: the sweep keeps it bounded).
    pub fn objects(&self) -> usize {
        self.shards.iter().map(|s| s.read().len()).sum()
    }

    /// True when following who-blocks-whom from `me`'s wait comes back to `me`.
    fn deadlocked(&self, me: u64) -> bool {
        let waits = self.waits.lock();
        let Some((obj, mode)) = waits.get(&me) else {
            return false;
        };
        let mut stack = obj.state.lock().blockers(me, *mode, obj.key.ns.scoped());
        let mut seen = std::collections::HashSet::new();
        while let Some(c) = stack.pop() {
            if c == me {
                return true;
            }
            if !seen.insert(c) {
                continue;
            }
            if let Some((o, m)) = waits.get(&c) {
                stack.extend(o.state.lock().blockers(c, *m, o.key.ns.scoped()));
            }
        }
        false
    }
}

/// What a waiting context waits for, for SHOW PROCESSLIST's State column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum WaitState {
    None = 0,
    TableMetadataLock,
    SchemaMetadataLock,
    GlobalReadLock,
    CommitLock,
    ProcedureMetadataLock,
    FunctionMetadataLock,
    UserLock,
}

impl WaitState {
    /// MySQL's wording of the state.
    pub fn text(self) -> Option<&'static str> {
        match self {
            WaitState::None => None,
            WaitState::TableMetadataLock => Some("Waiting for table metadata lock"),
            WaitState::SchemaMetadataLock => Some("Waiting for schema metadata lock"),
            WaitState::GlobalReadLock => Some("Waiting for global read lock"),
            WaitState::CommitLock => Some("Waiting for commit lock"),
            WaitState::ProcedureMetadataLock => Some("Waiting for stored procedure metadata lock"),
            WaitState::FunctionMetadataLock => Some("Waiting for stored function metadata lock"),
            WaitState::UserLock => Some("User lock"),
        }
    }

    fn of(ns: Namespace) -> WaitState {
        match ns {
            Namespace::Table => WaitState::TableMetadataLock,
            Namespace::Schema => WaitState::SchemaMetadataLock,
            Namespace::Global => WaitState::GlobalReadLock,
            Namespace::Commit => WaitState::CommitLock,
            Namespace::Procedure => WaitState::ProcedureMetadataLock,
            Namespace::Function => WaitState::FunctionMetadataLock,
            Namespace::UserLock => WaitState::UserLock,
        }
    }

    fn from_u8(v: u8) -> WaitState {
        match v {
            1 => WaitState::TableMetadataLock,
            2 => WaitState::SchemaMetadataLock,
            3 => WaitState::GlobalReadLock,
            4 => WaitState::CommitLock,
            5 => WaitState::ProcedureMetadataLock,
            6 => WaitState::FunctionMetadataLock,
            7 => WaitState::UserLock,
            _ => WaitState::None,
        }
    }
}

/// Reads a context's [`WaitState`] from another thread.
#[derive(Clone)]
pub struct WaitStateHandle(Arc<AtomicU8>);

impl WaitStateHandle {
    pub fn get(&self) -> WaitState {
        WaitState::from_u8(self.0.load(Ordering::Relaxed))
    }
}

struct Ticket {
    obj: Arc<LockObj>,
    mode: MdlMode,
    duration: MdlDuration,
    /// Granted on the fast path: counted in the object's fast word, not in its holders.
    fast: bool,
}

/// One connection's metadata locks.
pub struct MdlContext {
    mgr: Arc<MdlManager>,
    id: u64,
    tickets: Mutex<Vec<Ticket>>,
    /// The lock objects this context used last, so the next statement on the same
    /// tables skips the shard map. An object stays in its shard while anyone holds an
    /// `Arc` to it (the sweep removes only unreferenced ones), so a cached object is
    /// always the one the map has for its key.
    recent: Mutex<Vec<Arc<LockObj>>>,
    /// `lock_wait_timeout`, in milliseconds.
    timeout_ms: AtomicU64,
    /// What this context waits for now; shared with the process list.
    waiting: Arc<AtomicU8>,
    /// The connection's stop signal: KILL ends a wait here too.
    interrupt: Mutex<strata_engine::Interrupt>,
    /// The global intention lock every writing statement asks for, built once.
    global_ix: [MdlRequest; 1],
}

/// How often a waiter looks for a deadlock again while it waits (others may have
/// closed a cycle through it without seeing it, when their walks raced).
const RECHECK: Duration = Duration::from_millis(500);

impl MdlContext {
    pub fn new(mgr: Arc<MdlManager>) -> MdlContext {
        let id = mgr.next_ctx.fetch_add(1, Ordering::Relaxed);
        MdlContext {
            mgr,
            id,
            tickets: Mutex::new(Vec::new()),
            recent: Mutex::new(Vec::new()),
            timeout_ms: AtomicU64::new(31_536_000_000),
            waiting: Arc::new(AtomicU8::new(0)),
            interrupt: Mutex::new(strata_engine::Interrupt::default()),
            global_ix: [MdlRequest::new(MdlKey::global(), IntentionExclusive)],
        }
    }

    /// The global intention lock of a statement that writes, for the statement:
    /// waits while another session holds FLUSH TABLES WITH READ LOCK (error 1223 when
    /// this one does).
    pub fn acquire_global_intention(&self) -> Result<()> {
        self.acquire(&self.global_ix, MdlDuration::Statement)
    }

    /// Sets how long a request waits before failing with 1205.
    pub fn set_lock_wait_timeout(&self, d: Duration) {
        self.timeout_ms.store(
            d.as_millis().min(u64::MAX as u128) as u64,
            Ordering::Relaxed,
        );
    }

    /// What this context is waiting for now (another thread may ask).
    pub fn wait_state(&self) -> WaitState {
        WaitState::from_u8(self.waiting.load(Ordering::Relaxed))
    }

    /// A handle through which another thread (SHOW PROCESSLIST) reads
    /// [`MdlContext::wait_state`].
    pub fn wait_state_handle(&self) -> WaitStateHandle {
        WaitStateHandle(self.waiting.clone())
    }

    /// The connection's stop signal: a KILL ends this context's waits with its error.
    pub fn set_interrupt(&self, interrupt: strata_engine::Interrupt) {
        *self.interrupt.lock() = interrupt;
    }

    /// Whether this context holds a lock on `key` that covers `mode`.
    pub fn holds(&self, key: &MdlKey, mode: MdlMode) -> bool {
        self.tickets
            .lock()
            .iter()
            .any(|t| t.obj.key == *key && covers(t.mode, mode))
    }

    /// Whether this context holds FLUSH TABLES WITH READ LOCK.
    pub fn holds_global_read_lock(&self) -> bool {
        self.tickets
            .lock()
            .iter()
            .any(|t| t.duration == MdlDuration::GlobalReadLock)
    }

    /// Acquires every request (see [`normalize`] for the order they should be in), all
    /// or none: when one times out or deadlocks, those granted by this call are
    /// released again. A request covered by a lock already held that lives at least as
    /// long is free.
    pub fn acquire(&self, reqs: &[MdlRequest], duration: MdlDuration) -> Result<()> {
        let mut tickets = self.tickets.lock();
        let start = tickets.len();
        for r in reqs {
            let held = tickets.iter().any(|t| {
                covers(t.mode, r.mode) && t.duration.outlives(duration) && t.obj.key == r.key
            });
            if held {
                continue;
            }
            if r.key.ns == Namespace::Global
                && r.mode == IntentionExclusive
                && tickets
                    .iter()
                    .any(|t| t.obj.key.ns == Namespace::Global && t.mode == Shared)
            {
                // This session's own FTWRL: MySQL refuses at once rather than wait on
                // itself.
                self.release_from(&mut tickets, start);
                return Err(Error::CantUpdateWithReadLock);
            }
            let obj = self.object(&r.key);
            let scoped = obj.key.ns.scoped();
            let fast = unobtrusive(r.mode, scoped) && obj.try_fast(r.mode);
            if !fast {
                if let Err(e) = self.lock_one(&mut tickets, &obj, r.mode) {
                    self.release_from(&mut tickets, start);
                    return Err(e);
                }
            }
            tickets.push(Ticket {
                obj,
                mode: r.mode,
                duration,
                fast,
            });
        }
        Ok(())
    }

    /// Moves this context's fast-path locks (on `only`, or on every object) into their
    /// objects' holder lists, where obtrusive requests and the deadlock walk see them.
    fn materialise(&self, tickets: &mut [Ticket], only: Option<&Arc<LockObj>>) {
        for t in tickets.iter_mut() {
            if !t.fast || only.is_some_and(|o| !Arc::ptr_eq(o, &t.obj)) {
                continue;
            }
            let mut s = t.obj.state.lock();
            t.obj.fast.fetch_sub(fast_unit(t.mode), Ordering::AcqRel);
            s.grant(self.id, t.mode);
            t.fast = false;
        }
    }

    fn release_ticket(&self, t: &Ticket) {
        if t.fast {
            t.obj.release_fast(t.mode);
        } else {
            t.obj.release(self.id, t.mode);
        }
    }

    /// The lock object of `key`, from the recently used ones or the manager's map.
    fn object(&self, key: &MdlKey) -> Arc<LockObj> {
        const RECENT: usize = 8;
        let mut recent = self.recent.lock();
        if let Some(o) = recent.iter().find(|o| o.key == *key) {
            return o.clone();
        }
        let o = self.mgr.object(key);
        if recent.len() >= RECENT {
            recent.remove(0);
        }
        recent.push(o.clone());
        o
    }

    fn release_from(&self, tickets: &mut Vec<Ticket>, start: usize) {
        for t in tickets.drain(start..) {
            self.release_ticket(&t);
        }
    }

    /// Takes `mode` on `obj` on the slow path, waiting as long as the timeout allows.
    /// `tickets` are this context's locks (their fast ones get materialised).
    fn lock_one(&self, tickets: &mut [Ticket], obj: &Arc<LockObj>, mode: MdlMode) -> Result<()> {
        let timeout = Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed));
        self.lock_one_within(tickets, obj, mode, timeout)
    }

    /// [`MdlContext::lock_one`] waiting at most `timeout`.
    fn lock_one_within(
        &self,
        tickets: &mut [Ticket],
        obj: &Arc<LockObj>,
        mode: MdlMode,
        timeout: Duration,
    ) -> Result<()> {
        let scoped = obj.key.ns.scoped();
        let obtrusive = !unobtrusive(mode, scoped);
        if obtrusive {
            // Its own fast locks on this object must not count against it.
            self.materialise(tickets, Some(obj));
        }
        let mut s = obj.state.lock();
        if obtrusive {
            obj.enter_obtrusive(&mut s);
        }
        if s.grantable(self.id, mode, scoped, obj.fast.load(Ordering::Acquire)) {
            s.grant(self.id, mode);
            return Ok(());
        }
        drop(s);
        // About to wait: every lock this context holds becomes visible to the deadlock
        // walk first (the object's own state is re-read by the wait loop).
        self.materialise(tickets, None);
        let deadline = Instant::now().checked_add(timeout);
        let mut s = obj.state.lock();
        s.waiters.push((self.id, mode));
        s.pending[mode as usize] += 1;
        drop(s);
        self.mgr.waits.lock().insert(self.id, (obj.clone(), mode));
        self.waiting
            .store(WaitState::of(obj.key.ns) as u8, Ordering::Relaxed);
        let result = self.wait(obj, mode, scoped, deadline);
        self.waiting.store(WaitState::None as u8, Ordering::Relaxed);
        self.mgr.waits.lock().remove(&self.id);
        if result.is_err() {
            if obtrusive {
                obj.leave_obtrusive(&mut obj.state.lock());
            }
            // Requests queued behind ours may go now.
            obj.cond.notify_all();
        }
        result
    }

    fn wait(
        &self,
        obj: &Arc<LockObj>,
        mode: MdlMode,
        scoped: bool,
        deadline: Option<Instant>,
    ) -> Result<()> {
        let interrupt = self.interrupt.lock().clone();
        loop {
            if self.mgr.deadlocked(self.id) {
                obj.state.lock().unqueue(self.id, mode);
                return Err(Error::Deadlock);
            }
            if let Err(e) = interrupt.check() {
                obj.state.lock().unqueue(self.id, mode);
                return Err(e);
            }
            let mut s = obj.state.lock();
            if s.grantable(self.id, mode, scoped, obj.fast.load(Ordering::Acquire)) {
                s.unqueue(self.id, mode);
                s.grant(self.id, mode);
                return Ok(());
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                s.unqueue(self.id, mode);
                return Err(Error::LockWaitTimeout);
            }
            let until = match deadline {
                Some(d) => d.min(now + RECHECK),
                None => now + RECHECK,
            };
            // Woken (the object changed) or a quiet period passed: the loop looks for a
            // cycle again, since another waiter's walk may have raced with ours.
            obj.cond.wait_until(&mut s, until);
            drop(s);
        }
    }

    /// Turns this context's EXCLUSIVE lock on `key` into the weaker `to` (online ALTER:
    /// X for the start, then SU or SNW while the index is built, so other statements
    /// run; [`MdlContext::acquire`] of X again for the swap). Requests that waited for
    /// the X lock are woken. False when no such X lock is held.
    pub fn downgrade(&self, key: &MdlKey, to: MdlMode) -> bool {
        let mut tickets = self.tickets.lock();
        let Some(t) = tickets
            .iter_mut()
            .find(|t| t.obj.key == *key && t.mode == Exclusive && !t.fast)
        else {
            return false;
        };
        let mut s = t.obj.state.lock();
        let Some(i) = s.holders.iter().position(|h| *h == (self.id, Exclusive)) else {
            return false;
        };
        s.holders[i].1 = to;
        s.granted[Exclusive as usize] -= 1;
        s.granted[to as usize] += 1;
        if unobtrusive(to, t.obj.key.ns.scoped()) {
            t.obj.leave_obtrusive(&mut s);
        }
        t.mode = to;
        drop(s);
        t.obj.cond.notify_all();
        true
    }

    /// Releases every lock of `duration`.
    pub fn release(&self, duration: MdlDuration) {
        self.release_where(|d| d == duration);
    }

    /// The end of a statement: its statement-long locks go, and with `transaction_over`
    /// the transaction's too (one pass, for the autocommit hot path).
    pub fn release_at_statement_end(&self, transaction_over: bool) {
        self.release_where(|d| {
            d == MdlDuration::Statement || (transaction_over && d == MdlDuration::Transaction)
        });
    }

    fn release_where(&self, which: impl Fn(MdlDuration) -> bool) {
        let mut tickets = self.tickets.lock();
        if tickets.is_empty() {
            return;
        }
        tickets.retain(|t| {
            if which(t.duration) {
                self.release_ticket(t);
                false
            } else {
                true
            }
        });
    }

    /// Releases every lock (disconnect, COM_RESET_CONNECTION), user-level ones too.
    pub fn release_all(&self) {
        self.release_all_user_locks();
        let mut tickets = self.tickets.lock();
        self.release_from(&mut tickets, 0);
        self.recent.lock().clear();
    }

    /// GET_LOCK(name, timeout) for connection `conn`: Ok(true) when granted (again, if
    /// this connection holds it already: each GET_LOCK needs its RELEASE_LOCK), Ok(false)
    /// when `timeout` passed first (None: wait for ever); KILL's error, or
    /// [`Error::UserLockDeadlock`] when waiting would close a cycle.
    pub fn get_user_lock(&self, name: &str, conn: u64, timeout: Option<Duration>) -> Result<bool> {
        let key = MdlKey::user_lock(name);
        if let Some(e) = self.mgr.user_locks.lock().get_mut(&*key.name) {
            if e.0 == self.id {
                e.2 += 1;
                return Ok(true);
            }
        }
        let mut tickets = self.tickets.lock();
        let obj = self.object(&key);
        // About a hundred years stands for no limit.
        let wait = timeout.unwrap_or(Duration::from_secs(3_153_600_000));
        match self.lock_one_within(&mut tickets, &obj, Exclusive, wait) {
            Ok(()) => {}
            Err(Error::LockWaitTimeout) => return Ok(false),
            Err(Error::Deadlock) => return Err(Error::UserLockDeadlock),
            Err(e) => return Err(e),
        }
        tickets.push(Ticket {
            obj,
            mode: Exclusive,
            duration: MdlDuration::Explicit,
            fast: false,
        });
        self.mgr
            .user_locks
            .lock()
            .insert(key.name.clone(), (self.id, conn, 1));
        Ok(true)
    }

    /// RELEASE_LOCK(name): Some(true) when this connection held it (released once),
    /// Some(false) when another does, None when nobody does.
    pub fn release_user_lock(&self, name: &str) -> Option<bool> {
        let key = MdlKey::user_lock(name);
        let mut locks = self.mgr.user_locks.lock();
        let e = locks.get_mut(&*key.name)?;
        if e.0 != self.id {
            return Some(false);
        }
        e.2 -= 1;
        if e.2 == 0 {
            locks.remove(&*key.name);
            drop(locks);
            self.release_explicit(|k| *k == key);
        }
        Some(true)
    }

    /// RELEASE_ALL_LOCKS(): releases this connection's user-level locks and returns how
    /// many times they had been taken.
    pub fn release_all_user_locks(&self) -> u64 {
        let mut n = 0;
        self.mgr.user_locks.lock().retain(|_, e| {
            if e.0 == self.id {
                n += e.2 as u64;
                false
            } else {
                true
            }
        });
        if n > 0 {
            self.release_explicit(|_| true);
        }
        n
    }

    /// IS_USED_LOCK(name): the connection id holding it, if any.
    pub fn user_lock_owner(&self, name: &str) -> Option<u64> {
        let key = MdlKey::user_lock(name);
        self.mgr.user_locks.lock().get(&*key.name).map(|e| e.1)
    }

    fn release_explicit(&self, which: impl Fn(&MdlKey) -> bool) {
        let mut tickets = self.tickets.lock();
        tickets.retain(|t| {
            if t.duration == MdlDuration::Explicit && which(&t.obj.key) {
                self.release_ticket(t);
                false
            } else {
                true
            }
        });
    }

    /// How many locks this context holds (tests).
    pub fn held(&self) -> usize {
        self.tickets.lock().len()
    }
}

impl Drop for MdlContext {
    fn drop(&mut self) {
        self.release_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::thread;

    const OBJECT_MODES: [MdlMode; 9] = [
        Shared,
        SharedHighPrio,
        SharedRead,
        SharedWrite,
        SharedUpgradable,
        SharedReadOnly,
        SharedNoWrite,
        SharedNoReadWrite,
        Exclusive,
    ];

    fn ctx(mgr: &Arc<MdlManager>, timeout_ms: u64) -> MdlContext {
        let c = MdlContext::new(mgr.clone());
        c.set_lock_wait_timeout(Duration::from_millis(timeout_ms));
        c
    }

    fn t(mode: MdlMode) -> Vec<MdlRequest> {
        vec![MdlRequest::new(MdlKey::table("d", "t"), mode)]
    }

    fn compatible(a: MdlMode, b: MdlMode) -> bool {
        granted_conflicts(a, false) & bit(b) == 0
    }

    #[test]
    fn the_granted_matrix_is_mysqls_and_symmetric() {
        for a in OBJECT_MODES {
            for b in OBJECT_MODES {
                assert_eq!(compatible(a, b), compatible(b, a), "{a:?} / {b:?}");
            }
        }
        assert!(compatible(SharedRead, SharedWrite));
        assert!(compatible(SharedWrite, SharedWrite));
        assert!(compatible(SharedUpgradable, SharedWrite));
        assert!(!compatible(SharedUpgradable, SharedUpgradable));
        assert!(!compatible(SharedReadOnly, SharedWrite));
        assert!(compatible(SharedReadOnly, SharedRead));
        assert!(!compatible(SharedNoReadWrite, SharedRead));
        assert!(compatible(SharedNoReadWrite, SharedHighPrio));
        for m in OBJECT_MODES {
            assert!(!compatible(Exclusive, m), "X vs {m:?}");
        }
        // Scoped: IX with IX, S with S, nothing with X.
        let sc = |a, b| granted_conflicts(a, true) & bit(b) == 0;
        assert!(sc(IntentionExclusive, IntentionExclusive));
        assert!(sc(Shared, Shared));
        assert!(!sc(IntentionExclusive, Shared));
        assert!(!sc(Exclusive, IntentionExclusive));
    }

    /// The object of `d`.`t` as the manager holds it (to look at its fast word).
    fn object_t(mgr: &Arc<MdlManager>) -> Arc<LockObj> {
        mgr.object(&MdlKey::table("d", "t"))
    }

    #[test]
    fn unobtrusive_locks_are_counted_not_listed_and_an_exclusive_request_waits_for_them() {
        let mgr = Arc::new(MdlManager::new());
        let readers: Vec<MdlContext> = (0..3).map(|_| ctx(&mgr, 1000)).collect();
        for r in &readers {
            r.acquire(&t(SharedRead), MdlDuration::Transaction).unwrap();
        }
        let obj = object_t(&mgr);
        let w = obj.fast.load(Ordering::Acquire);
        assert_eq!(fast_count(w, SharedRead), 3);
        assert_eq!(w & OBTRUSIVE, 0);
        assert!(obj.state.lock().holders.is_empty());
        // X waits for the counted readers; each release wakes it to look again.
        let (tx, rx) = mpsc::channel();
        let m2 = mgr.clone();
        let ddl = thread::spawn(move || {
            let c = ctx(&m2, 5000);
            let r = c.acquire(&t(Exclusive), MdlDuration::Transaction);
            tx.send(r.is_ok()).unwrap();
            c.release(MdlDuration::Transaction);
        });
        thread::sleep(Duration::from_millis(100));
        assert!(
            rx.try_recv().is_err(),
            "X must wait for the fast-path readers"
        );
        // While X waits, a new reader takes the slow path and queues behind it.
        assert_ne!(obj.fast.load(Ordering::Acquire) & OBTRUSIVE, 0);
        let late = ctx(&mgr, 50);
        assert!(matches!(
            late.acquire(&t(SharedRead), MdlDuration::Transaction),
            Err(Error::LockWaitTimeout)
        ));
        for r in &readers {
            r.release(MdlDuration::Transaction);
        }
        assert!(rx.recv_timeout(Duration::from_secs(5)).unwrap());
        ddl.join().unwrap();
        // Once X is gone the fast path is open again.
        assert_eq!(obj.fast.load(Ordering::Acquire), 0);
        late.acquire(&t(SharedRead), MdlDuration::Transaction)
            .unwrap();
        assert_eq!(fast_count(obj.fast.load(Ordering::Acquire), SharedRead), 1);
    }

    #[test]
    fn an_own_fast_lock_does_not_block_its_upgrade() {
        let mgr = Arc::new(MdlManager::new());
        let a = ctx(&mgr, 100);
        a.acquire(&t(SharedRead), MdlDuration::Transaction).unwrap();
        a.acquire(&t(Exclusive), MdlDuration::Statement).unwrap();
        let obj = object_t(&mgr);
        // The SR was moved into the holder list beside the X.
        assert_eq!(fast_count(obj.fast.load(Ordering::Acquire), SharedRead), 0);
        assert_eq!(obj.state.lock().holders.len(), 2);
        a.release(MdlDuration::Statement);
        a.release(MdlDuration::Transaction);
        assert!(obj.state.lock().holders.is_empty());
        assert_eq!(obj.fast.load(Ordering::Acquire), 0);
    }

    #[test]
    fn shared_locks_share_and_exclusive_waits_for_them() {
        let mgr = Arc::new(MdlManager::new());
        let a = ctx(&mgr, 1000);
        let b = ctx(&mgr, 1000);
        a.acquire(&t(SharedRead), MdlDuration::Transaction).unwrap();
        b.acquire(&t(SharedWrite), MdlDuration::Transaction)
            .unwrap();
        let c = ctx(&mgr, 100);
        let started = Instant::now();
        assert!(matches!(
            c.acquire(&t(Exclusive), MdlDuration::Transaction),
            Err(Error::LockWaitTimeout)
        ));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(100) && waited < Duration::from_secs(2));
        assert_eq!(c.held(), 0);
        // Released at the end of the transaction, the exclusive lock goes through.
        a.release(MdlDuration::Transaction);
        b.release(MdlDuration::Transaction);
        c.acquire(&t(Exclusive), MdlDuration::Transaction).unwrap();
        assert!(c.holds(&MdlKey::table("d", "t"), SharedRead));
    }

    #[test]
    fn a_waiting_exclusive_request_goes_before_new_shared_ones() {
        let mgr = Arc::new(MdlManager::new());
        let reader = ctx(&mgr, 5000);
        reader
            .acquire(&t(SharedRead), MdlDuration::Transaction)
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let m2 = mgr.clone();
        let ddl = thread::spawn(move || {
            let c = ctx(&m2, 5000);
            let r = c.acquire(&t(Exclusive), MdlDuration::Transaction);
            tx.send(Instant::now()).unwrap();
            r.map(|_| c.held())
        });
        // Wait until the exclusive request is queued.
        let key = MdlKey::table("d", "t");
        while mgr.object(&key).state.lock().pending[Exclusive as usize] == 0 {
            thread::sleep(Duration::from_millis(1));
        }
        let late = ctx(&mgr, 200);
        assert!(matches!(
            late.acquire(&t(SharedRead), MdlDuration::Transaction),
            Err(Error::LockWaitTimeout)
        ));
        // SH (SHOW, information_schema) does not queue behind it.
        late.acquire(&t(SharedHighPrio), MdlDuration::Statement)
            .unwrap();
        late.release(MdlDuration::Statement);
        let released = Instant::now();
        reader.release(MdlDuration::Transaction);
        assert_eq!(ddl.join().unwrap().unwrap(), 1);
        assert!(rx.recv().unwrap() >= released);
    }

    #[test]
    fn statement_locks_go_at_statement_end_transaction_locks_at_commit() {
        let mgr = Arc::new(MdlManager::new());
        let a = ctx(&mgr, 1000);
        a.acquire(
            &[MdlRequest::new(MdlKey::global(), IntentionExclusive)],
            MdlDuration::Statement,
        )
        .unwrap();
        a.acquire(&t(SharedWrite), MdlDuration::Transaction)
            .unwrap();
        // Held already: a second statement of the transaction takes nothing new.
        a.acquire(&t(SharedRead), MdlDuration::Transaction).unwrap();
        assert_eq!(a.held(), 2);
        a.release(MdlDuration::Statement);
        assert_eq!(a.held(), 1);
        let ftwrl = ctx(&mgr, 50);
        ftwrl
            .acquire(
                &[MdlRequest::new(MdlKey::global(), Shared)],
                MdlDuration::GlobalReadLock,
            )
            .unwrap();
        ftwrl.release(MdlDuration::GlobalReadLock);
        let ddl = ctx(&mgr, 50);
        assert!(ddl
            .acquire(&t(Exclusive), MdlDuration::Transaction)
            .is_err());
        a.release(MdlDuration::Transaction);
        assert_eq!(a.held(), 0);
        ddl.acquire(&t(Exclusive), MdlDuration::Transaction)
            .unwrap();
    }

    #[test]
    fn a_failed_acquire_of_several_keeps_none() {
        let mgr = Arc::new(MdlManager::new());
        let holder = ctx(&mgr, 1000);
        holder
            .acquire(
                &[MdlRequest::new(MdlKey::table("d", "b"), SharedRead)],
                MdlDuration::Transaction,
            )
            .unwrap();
        let ddl = ctx(&mgr, 50);
        let mut reqs = vec![
            MdlRequest::new(MdlKey::table("d", "b"), Exclusive),
            MdlRequest::new(MdlKey::table("d", "a"), Exclusive),
        ];
        normalize(&mut reqs);
        assert_eq!(reqs[0].key.name(), "a");
        assert!(ddl.acquire(&reqs, MdlDuration::Transaction).is_err());
        assert_eq!(ddl.held(), 0);
        let other = ctx(&mgr, 50);
        other
            .acquire(
                &[MdlRequest::new(MdlKey::table("d", "a"), Exclusive)],
                MdlDuration::Transaction,
            )
            .unwrap();
    }

    #[test]
    fn global_read_lock_blocks_writers_and_refuses_its_own_session() {
        let mgr = Arc::new(MdlManager::new());
        let ftwrl = ctx(&mgr, 1000);
        let grl = [MdlRequest::new(MdlKey::global(), Shared)];
        ftwrl.acquire(&grl, MdlDuration::GlobalReadLock).unwrap();
        assert!(ftwrl.holds_global_read_lock());
        let ix = [MdlRequest::new(MdlKey::global(), IntentionExclusive)];
        assert!(matches!(
            ftwrl.acquire(&ix, MdlDuration::Statement),
            Err(Error::CantUpdateWithReadLock)
        ));
        let writer = ctx(&mgr, 100);
        assert!(matches!(
            writer.acquire(&ix, MdlDuration::Statement),
            Err(Error::LockWaitTimeout)
        ));
        assert_eq!(writer.wait_state(), WaitState::None);
        // A second FTWRL shares it.
        let second = ctx(&mgr, 100);
        second.acquire(&grl, MdlDuration::GlobalReadLock).unwrap();
        second.release(MdlDuration::GlobalReadLock);
        ftwrl.release(MdlDuration::GlobalReadLock);
        writer.acquire(&ix, MdlDuration::Statement).unwrap();
    }

    #[test]
    fn an_upgrade_waits_only_for_others() {
        let mgr = Arc::new(MdlManager::new());
        let a = ctx(&mgr, 100);
        a.acquire(&t(SharedNoReadWrite), MdlDuration::LockTables)
            .unwrap();
        a.acquire(&t(Exclusive), MdlDuration::Transaction).unwrap();
        a.release(MdlDuration::Transaction);
        let b = ctx(&mgr, 50);
        assert!(b.acquire(&t(SharedRead), MdlDuration::Transaction).is_err());
    }

    #[test]
    fn a_wait_cycle_is_a_deadlock_for_the_request_that_closes_it() {
        let mgr = Arc::new(MdlManager::new());
        let a = ctx(&mgr, 10_000);
        a.acquire(&t(SharedRead), MdlDuration::Transaction).unwrap();
        let m2 = mgr.clone();
        let ddl = thread::spawn(move || {
            let c = ctx(&m2, 10_000);
            c.acquire(&t(Exclusive), MdlDuration::Transaction)
        });
        let key = MdlKey::table("d", "t");
        while mgr.object(&key).state.lock().pending[Exclusive as usize] == 0 {
            thread::sleep(Duration::from_millis(1));
        }
        // `a` now wants to write the table: it would queue behind the DDL, which waits
        // for `a`'s read lock.
        let started = Instant::now();
        assert!(matches!(
            a.acquire(&t(SharedWrite), MdlDuration::Transaction),
            Err(Error::Deadlock)
        ));
        assert!(started.elapsed() < Duration::from_secs(5));
        a.release(MdlDuration::Transaction);
        ddl.join().unwrap().unwrap();
    }

    #[test]
    fn unused_lock_objects_are_swept() {
        let mgr = Arc::new(MdlManager::new());
        let a = ctx(&mgr, 100);
        for i in 0..20_000 {
            let r = [MdlRequest::new(
                MdlKey::table("d", &format!("t{i}")),
                SharedRead,
            )];
            a.acquire(&r, MdlDuration::Statement).unwrap();
            a.release(MdlDuration::Statement);
        }
        assert!(
            mgr.objects() < 2 * SHARDS * SWEEP_MIN as usize,
            "{}",
            mgr.objects()
        );
    }

    #[test]
    fn a_cached_lock_object_is_still_the_one_others_lock() {
        let mgr = Arc::new(MdlManager::new());
        let a = ctx(&mgr, 100);
        a.acquire(&t(SharedRead), MdlDuration::Statement).unwrap();
        a.release(MdlDuration::Statement);
        // Many other names, enough to sweep every shard: `a`'s cached object for d.t
        // must survive, or `a` and `b` would lock different objects for one name.
        let b = ctx(&mgr, 50);
        for i in 0..20_000 {
            let r = [MdlRequest::new(
                MdlKey::table("d", &format!("x{i}")),
                SharedRead,
            )];
            b.acquire(&r, MdlDuration::Statement).unwrap();
            b.release(MdlDuration::Statement);
        }
        a.acquire(&t(SharedRead), MdlDuration::Transaction).unwrap();
        assert!(matches!(
            b.acquire(&t(Exclusive), MdlDuration::Transaction),
            Err(Error::LockWaitTimeout)
        ));
        a.release_at_statement_end(true);
        b.acquire(&t(Exclusive), MdlDuration::Transaction).unwrap();
    }

    #[test]
    fn covers_and_normalize_merge_requests() {
        assert!(covers(SharedWrite, SharedRead));
        assert!(!covers(SharedRead, SharedWrite));
        assert!(covers(Exclusive, SharedNoReadWrite));
        assert!(covers(SharedNoReadWrite, SharedWrite));
        assert!(!covers(SharedReadOnly, SharedWrite));
        let mut r = vec![
            MdlRequest::new(MdlKey::table("d", "t"), SharedRead),
            MdlRequest::new(MdlKey::global(), IntentionExclusive),
            MdlRequest::new(MdlKey::table("d", "t"), SharedWrite),
        ];
        normalize(&mut r);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].key.namespace(), Namespace::Global);
        assert_eq!(r[1].mode, SharedWrite);
    }
}
