//! The write-ahead redo log (InnoDB's `ib_logfile0`) with group commit: a header with
//! two alternating checkpoint slots and a circular data area of framed, checksummed,
//! opaque records. An engine appends a record for every change, forces the log up to a
//! commit record at commit (per `innodb_flush_log_at_trx_commit`), and checkpoints once
//! the pages changed before some LSN are on disk; `open` hands back every record after
//! the newest checkpoint for the engine to replay. The byte layout, the end-of-log rule,
//! the group commit protocol and the free-space rule are specified in
//! `docs/format/redo.md`.
//!
//! Locking: `buf` (the in-memory tail) is held only to assign an LSN and copy a frame in,
//! or to swap the whole tail out; `writer` serializes writes to the file; `syncer` only
//! says whether a group commit leader is fsyncing and up to where (never held across
//! I/O). So appends never wait for I/O and writes can proceed during an fsync. Lock
//! order: `ckpt` → `writer` → `buf`; `syncer` and `broken_reason` are taken alone.

use crate::io::FileIo;
use crate::sync::{Arc, AtomicBool, AtomicU64, Condvar, Mutex, MutexGuard, Ordering};
use std::io;
use std::time::Duration;

pub type Lsn = u64;

/// LSN of the first record of a new log. Not 0, so zeroed bytes never pass for a frame.
pub const START_LSN: Lsn = 8192;
/// Bytes before the circular data area.
pub const HEADER_SIZE: u64 = 4096;
/// Bytes of a record frame before its payload.
pub const FRAME_HEADER_SIZE: u64 = 20;
pub const MIN_CAPACITY: u64 = 16 * 1024;
pub const MAX_CAPACITY: u64 = 1 << 40;

const MAGIC: &[u8; 8] = b"STRREDO1";
const FORMAT_VERSION: u32 = 1;
/// Bytes 0..FIXED_LEN of the header are covered by the crc stored right after them.
const FIXED_LEN: usize = 32;
const SLOT_OFFSETS: [u64; 2] = [512, 1536];
const SLOT_SIZE: usize = 32;
/// Recovery reads the data area in pieces this large rather than frame by frame.
const SCAN_CHUNK: u64 = 1 << 20;
const MAX_BUFFER: u64 = 16 << 20;
const FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// `innodb_flush_log_at_trx_commit`: what a commit does with its commit record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushAtCommit {
    /// 0: nothing; the once-a-second flusher writes and fsyncs.
    Never = 0,
    /// 1: write and fsync up to the commit record.
    Durable = 1,
    /// 2: write up to the commit record (it survives a process crash); fsync once a second.
    WriteOnly = 2,
}

impl FlushAtCommit {
    /// The policy for a `SET GLOBAL innodb_flush_log_at_trx_commit` value.
    pub fn from_setting(v: u64) -> Option<FlushAtCommit> {
        match v {
            0 => Some(FlushAtCommit::Never),
            1 => Some(FlushAtCommit::Durable),
            2 => Some(FlushAtCommit::WriteOnly),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct RedoConfig {
    /// Bytes of the circular data area (`innodb_log_file_size`). Only `create` uses it:
    /// an existing file keeps the capacity it was created with.
    pub capacity: u64,
    pub flush_at_commit: FlushAtCommit,
}

/// What recovery must replay: every complete record after the last checkpoint, in order.
#[derive(Clone, Debug)]
pub struct Recovered {
    pub checkpoint_lsn: Lsn,
    /// (end LSN of the record, payload).
    pub records: Vec<(Lsn, Vec<u8>)>,
    /// Where the log ends and new appends continue.
    pub end_lsn: Lsn,
}

/// Counters since the log was created or opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedoStats {
    /// `Innodb_os_log_fsyncs`: fsyncs of the log file (commits and checkpoints).
    pub fsyncs: u64,
    /// `Innodb_log_writes`: write calls of log data (checkpoint slots not counted).
    pub writes: u64,
    /// `Innodb_os_log_written`: bytes written to the log file.
    pub bytes_written: u64,
    /// `Innodb_log_write_requests`: records appended.
    pub records: u64,
    /// `Innodb_log_waits`: times a caller had to wait for log space.
    pub waits: u64,
    /// Checkpoints written.
    pub checkpoints: u64,
}

#[derive(Default)]
struct Counters {
    fsyncs: AtomicU64,
    writes: AtomicU64,
    bytes_written: AtomicU64,
    records: AtomicU64,
    waits: AtomicU64,
    checkpoints: AtomicU64,
}

/// The unwritten tail of the log: `data` holds the frames of `[start, current)`.
struct LogBuffer {
    data: Vec<u8>,
    start: Lsn,
    current: Lsn,
    /// Mirror of the durable checkpoint, read under this lock so space waits can't miss
    /// a wakeup.
    checkpoint: Lsn,
}

struct CheckpointState {
    next_number: u64,
}

/// Group commit state, under `RedoLog::syncer`.
struct GroupCommit {
    /// True while a leader writes and fsyncs.
    syncing: bool,
    /// Number of the last fsync started; its waiters sleep on `synced[seq % 2]`.
    seq: u64,
    /// What that fsync makes durable: every record ending at or before this LSN.
    target: Lsn,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    lsn: Lsn,
    number: u64,
    generation: u32,
}

/// The redo log, shared as `Arc<RedoLog>`. Dropping it does not flush: a clean
/// shutdown calls `flush_up_to(current_lsn())` first.
pub struct RedoLog {
    io: Arc<dyn FileIo>,
    capacity: u64,
    /// Stamped into every frame written since this open; see the format doc for why.
    generation: u32,
    buffer_limit: usize,
    policy: AtomicU64,
    buf: Mutex<LogBuffer>,
    /// Signalled when a checkpoint frees space or the log breaks.
    space: Condvar,
    /// The spare buffer swapped with `buf.data`; holding it is the right to write.
    writer: Mutex<Vec<u8>>,
    /// Whether a group commit leader is writing and fsyncing, and what it covers.
    syncer: Mutex<GroupCommit>,
    /// Waiters of fsync number `n` sleep on `synced[n % 2]`: those its leader covers on
    /// the current one, those that came too late for it on the other (see `flush_up_to`).
    synced: [Condvar; 2],
    ckpt: Mutex<CheckpointState>,
    current_lsn: AtomicU64,
    written_lsn: AtomicU64,
    flushed_lsn: AtomicU64,
    checkpoint_lsn: AtomicU64,
    broken: AtomicBool,
    broken_reason: Mutex<Option<(io::ErrorKind, String)>>,
    counters: Counters,
}

fn corrupt(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

fn invalid_input(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.into())
}

fn check_capacity(capacity: u64) -> Result<(), String> {
    if (MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity) {
        Ok(())
    } else {
        Err(format!(
            "redo log capacity {capacity} is outside {MIN_CAPACITY}..={MAX_CAPACITY} bytes"
        ))
    }
}

/// Largest payload one record may carry: 1/8 of the log, the margin `free_check` keeps.
fn max_payload_for(capacity: u64) -> u64 {
    (capacity / 8 - FRAME_HEADER_SIZE).min(u32::MAX as u64)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn encode_header(capacity: u64) -> Vec<u8> {
    let mut h = vec![0u8; HEADER_SIZE as usize];
    h[0..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&capacity.to_le_bytes());
    h[24..32].copy_from_slice(&START_LSN.to_le_bytes());
    let crc = crc32c::crc32c(&h[..FIXED_LEN]);
    h[FIXED_LEN..FIXED_LEN + 4].copy_from_slice(&crc.to_le_bytes());
    h
}

fn encode_slot(s: &Slot) -> [u8; SLOT_SIZE] {
    let mut b = [0u8; SLOT_SIZE];
    b[0..8].copy_from_slice(&s.lsn.to_le_bytes());
    b[8..16].copy_from_slice(&s.number.to_le_bytes());
    b[16..20].copy_from_slice(&s.generation.to_le_bytes());
    let crc = crc32c::crc32c(&b[..24]);
    b[24..28].copy_from_slice(&crc.to_le_bytes());
    b
}

fn decode_slot(b: &[u8]) -> Option<Slot> {
    if b.len() < SLOT_SIZE || crc32c::crc32c(&b[..24]) != u32_at(b, 24) {
        return None;
    }
    Some(Slot {
        lsn: u64_at(b, 0),
        number: u64_at(b, 8),
        generation: u32_at(b, 16),
    })
}

fn slot_offset(number: u64) -> u64 {
    SLOT_OFFSETS[(number % 2) as usize]
}

/// Reads `buf.len()` bytes of the data area starting at `lsn`, wrapping at the end.
fn read_circular(io: &dyn FileIo, capacity: u64, lsn: Lsn, buf: &mut [u8]) -> io::Result<()> {
    let pos = lsn % capacity;
    let first = (buf.len() as u64).min(capacity - pos) as usize;
    io.read_at(&mut buf[..first], HEADER_SIZE + pos)?;
    if first < buf.len() {
        io.read_at(&mut buf[first..], HEADER_SIZE)?;
    }
    Ok(())
}

/// Recovery's view of the data area: a window of a chunk, refilled as the scan moves on.
struct CircularReader<'a> {
    io: &'a dyn FileIo,
    capacity: u64,
    win_lsn: Lsn,
    win: Vec<u8>,
}

impl<'a> CircularReader<'a> {
    /// `n` must not exceed the capacity (frames are limited to 1/8 of it).
    fn read(&mut self, lsn: Lsn, n: usize) -> io::Result<&[u8]> {
        let covered = lsn >= self.win_lsn
            && (lsn - self.win_lsn).saturating_add(n as u64) <= self.win.len() as u64;
        if !covered {
            let len = n.max(SCAN_CHUNK.min(self.capacity) as usize);
            self.win.resize(len, 0);
            read_circular(self.io, self.capacity, lsn, &mut self.win)?;
            self.win_lsn = lsn;
        }
        let off = (lsn - self.win_lsn) as usize;
        Ok(&self.win[off..off + n])
    }
}

/// Crc of a frame: its first 16 header bytes, then the payload. Computed in one pass
/// under the buffer lock (the header holds the LSN, known only there): combining a
/// payload crc computed outside the lock (`crc32c_combine`, dozens of 32x32 GF(2) matrix
/// products) cost 11 % of the server's CPU under sysbench oltp_update_non_index, far more
/// than the pass itself (a few ns for a typical 200-byte record, about a microsecond for
/// a 16 KiB page image).
fn frame_crc(head16: &[u8], payload: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(head16), payload)
}

/// Reads records from `checkpoint` on until the first frame that fails a check.
fn scan(io: &dyn FileIo, capacity: u64, checkpoint: Lsn) -> io::Result<Recovered> {
    let mut reader = CircularReader {
        io,
        capacity,
        win_lsn: 0,
        win: Vec::new(),
    };
    let limit = checkpoint.saturating_add(capacity);
    let max_payload = max_payload_for(capacity);
    let mut records = Vec::new();
    let mut lsn = checkpoint;
    let mut prev_generation = 0u32;
    while let Some(payload_lsn) = lsn.checked_add(FRAME_HEADER_SIZE) {
        if payload_lsn > limit {
            break;
        }
        let mut head = [0u8; FRAME_HEADER_SIZE as usize];
        head.copy_from_slice(reader.read(lsn, FRAME_HEADER_SIZE as usize)?);
        let len = u32_at(&head, 8) as u64;
        let generation = u32_at(&head, 12);
        if u64_at(&head, 0) != lsn || len > max_payload || generation < prev_generation {
            break;
        }
        let end = payload_lsn + len;
        if end > limit {
            break;
        }
        let payload = reader.read(payload_lsn, len as usize)?.to_vec();
        let crc = frame_crc(&head[..16], &payload);
        if crc != u32_at(&head, 16) {
            break;
        }
        records.push((end, payload));
        lsn = end;
        prev_generation = generation;
    }
    Ok(Recovered {
        checkpoint_lsn: checkpoint,
        records,
        end_lsn: lsn,
    })
}

impl RedoLog {
    fn new(
        io: Arc<dyn FileIo>,
        capacity: u64,
        policy: FlushAtCommit,
        slot: Slot,
        end_lsn: Lsn,
    ) -> RedoLog {
        RedoLog {
            io,
            capacity,
            generation: slot.generation,
            buffer_limit: (capacity / 8).min(MAX_BUFFER) as usize,
            policy: AtomicU64::new(policy as u64),
            buf: Mutex::new(LogBuffer {
                data: Vec::new(),
                start: end_lsn,
                current: end_lsn,
                checkpoint: slot.lsn,
            }),
            space: Condvar::new(),
            writer: Mutex::new(Vec::new()),
            syncer: Mutex::new(GroupCommit {
                syncing: false,
                seq: 0,
                target: end_lsn,
            }),
            synced: [Condvar::new(), Condvar::new()],
            ckpt: Mutex::new(CheckpointState {
                next_number: slot.number.wrapping_add(1),
            }),
            current_lsn: AtomicU64::new(end_lsn),
            written_lsn: AtomicU64::new(end_lsn),
            flushed_lsn: AtomicU64::new(end_lsn),
            checkpoint_lsn: AtomicU64::new(slot.lsn),
            broken: AtomicBool::new(false),
            broken_reason: Mutex::new(None),
            counters: Counters::default(),
        }
    }

    /// Creates a new empty log: discards whatever the file held (so no old frame can be
    /// mistaken for a new one), writes the header with checkpoint slot 0 at
    /// [`START_LSN`], and syncs.
    pub fn create(io: Arc<dyn FileIo>, cfg: RedoConfig) -> io::Result<RedoLog> {
        check_capacity(cfg.capacity).map_err(invalid_input)?;
        io.set_len(0)?;
        io.set_len(HEADER_SIZE + cfg.capacity)?;
        // Its blocks are reserved now: a commit must never meet a full disk in the log.
        io.reserve(0, HEADER_SIZE + cfg.capacity)?;
        let slot = Slot {
            lsn: START_LSN,
            number: 0,
            generation: 1,
        };
        let mut header = encode_header(cfg.capacity);
        let at = slot_offset(slot.number) as usize;
        header[at..at + SLOT_SIZE].copy_from_slice(&encode_slot(&slot));
        io.write_at(&header, 0)?;
        io.sync_data()?;
        Ok(RedoLog::new(
            io,
            cfg.capacity,
            cfg.flush_at_commit,
            slot,
            START_LSN,
        ))
    }

    /// Opens an existing log and returns what recovery must replay: every complete
    /// record after the newest valid checkpoint (the older slot if the newest is
    /// damaged), up to the first frame that fails its checks. New appends continue at
    /// `end_lsn`. The file's own capacity wins over `cfg.capacity`; see [`capacity`].
    /// Opening raises the generation and syncs it before returning.
    ///
    /// [`capacity`]: RedoLog::capacity
    pub fn open(io: Arc<dyn FileIo>, cfg: RedoConfig) -> io::Result<(RedoLog, Recovered)> {
        if io.len()? < HEADER_SIZE {
            return Err(corrupt("file is too short to be a Strata redo log"));
        }
        let mut header = vec![0u8; HEADER_SIZE as usize];
        io.read_at(&mut header, 0)?;
        if &header[0..8] != MAGIC {
            return Err(corrupt("not a Strata redo log (bad magic)"));
        }
        if crc32c::crc32c(&header[..FIXED_LEN]) != u32_at(&header, FIXED_LEN) {
            return Err(corrupt("redo log header checksum mismatch"));
        }
        let version = u32_at(&header, 8);
        if version != FORMAT_VERSION {
            return Err(corrupt(format!(
                "unsupported redo log format version {version}"
            )));
        }
        let capacity = u64_at(&header, 16);
        check_capacity(capacity).map_err(corrupt)?;
        let slots = SLOT_OFFSETS.map(|at| decode_slot(&header[at as usize..]));
        let slot = match slots {
            [Some(a), Some(b)] => {
                if b.number > a.number {
                    b
                } else {
                    a
                }
            }
            [Some(s), None] | [None, Some(s)] => s,
            [None, None] => return Err(corrupt("redo log has no valid checkpoint")),
        };
        if io.len()? < HEADER_SIZE + capacity {
            io.set_len(HEADER_SIZE + capacity)?;
        }
        io.reserve(0, HEADER_SIZE + capacity)?;
        let recovered = scan(&*io, capacity, slot.lsn)?;
        let bumped = Slot {
            lsn: slot.lsn,
            number: slot.number.wrapping_add(1),
            generation: slot.generation.saturating_add(1),
        };
        io.write_at(&encode_slot(&bumped), slot_offset(bumped.number))?;
        io.sync_data()?;
        let log = RedoLog::new(io, capacity, cfg.flush_at_commit, bumped, recovered.end_lsn);
        Ok((log, recovered))
    }

    /// Appends one record and returns its END lsn. The frame goes into the in-memory
    /// buffer; the only I/O is writing the buffer out (no fsync) once it has grown past
    /// its limit. Waits, without holding any lock, only if the record would overwrite
    /// the region the last checkpoint still needs (see [`free_check`]).
    ///
    /// Panics if `payload` is longer than [`max_payload`]: that is a caller bug (use
    /// [`try_append`] when the size comes from outside).
    ///
    /// [`free_check`]: RedoLog::free_check
    /// [`max_payload`]: RedoLog::max_payload
    /// [`try_append`]: RedoLog::try_append
    pub fn append(&self, payload: &[u8]) -> Lsn {
        match self.try_append(payload) {
            Ok(lsn) => lsn,
            Err(e) => panic!("redo log append: {e}"),
        }
    }

    /// [`append`](RedoLog::append), refusing an oversized payload with `InvalidInput`.
    pub fn try_append(&self, payload: &[u8]) -> io::Result<Lsn> {
        if payload.len() as u64 > self.max_payload() {
            return Err(invalid_input(format!(
                "redo record of {} bytes exceeds the limit of {} bytes",
                payload.len(),
                self.max_payload()
            )));
        }
        let frame_len = FRAME_HEADER_SIZE + payload.len() as u64;
        let mut b = self.buf.lock();
        let mut waited = false;
        while b.current + frame_len - b.checkpoint > self.capacity && !self.is_broken() {
            if !waited {
                self.counters.waits.fetch_add(1, Ordering::Relaxed);
                waited = true;
            }
            self.space.wait(&mut b);
        }
        let start = b.current;
        let end = start + frame_len;
        let mut head = [0u8; FRAME_HEADER_SIZE as usize];
        head[0..8].copy_from_slice(&start.to_le_bytes());
        head[8..12].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        head[12..16].copy_from_slice(&self.generation.to_le_bytes());
        let crc = frame_crc(&head[..16], payload);
        head[16..20].copy_from_slice(&crc.to_le_bytes());
        if self.is_broken() {
            // Nothing can be written any more; keeping the bytes would only grow memory.
            b.data.clear();
            b.start = end;
        } else {
            b.data.extend_from_slice(&head);
            b.data.extend_from_slice(payload);
        }
        b.current = end;
        self.current_lsn.store(end, Ordering::Release);
        let must_write = b.data.len() >= self.buffer_limit;
        drop(b);
        self.counters.records.fetch_add(1, Ordering::Relaxed);
        if must_write {
            // A failure breaks the log; the next flush, commit or checkpoint reports it.
            let _ = self.write_up_to(end);
        }
        Ok(end)
    }

    /// Blocks while `current_lsn - checkpoint_lsn > capacity - capacity / 8`, i.e. until
    /// a checkpoint frees space. Call it before work that will append, holding no latch
    /// the checkpointer might need. Returns at once if the log is broken.
    pub fn free_check(&self) {
        let threshold = self.capacity - self.capacity / 8;
        // Fast path without the buffer's mutex. The checkpoint is read first: both only
        // rise, so reading the current LSN later can make the estimate high, never low.
        let checkpoint = self.checkpoint_lsn();
        if self.current_lsn().saturating_sub(checkpoint) <= threshold {
            return;
        }
        let mut b = self.buf.lock();
        let mut waited = false;
        while b.current - b.checkpoint > threshold && !self.is_broken() {
            if !waited {
                self.counters.waits.fetch_add(1, Ordering::Relaxed);
                waited = true;
            }
            self.space.wait(&mut b);
        }
    }

    /// [`free_check`](RedoLog::free_check) that gives up after `timeout`: true when
    /// there is room (or the log is broken), false when the caller should look again
    /// at whether it must stop waiting (the engine fails the transaction that keeps
    /// the checkpoint from moving instead of letting it wait for ever).
    pub fn free_check_for(&self, timeout: std::time::Duration) -> bool {
        let threshold = self.capacity - self.capacity / 8;
        let checkpoint = self.checkpoint_lsn();
        if self.current_lsn().saturating_sub(checkpoint) <= threshold {
            return true;
        }
        let mut b = self.buf.lock();
        if b.current - b.checkpoint > threshold && !self.is_broken() {
            self.counters.waits.fetch_add(1, Ordering::Relaxed);
            self.space.wait_for(&mut b, timeout);
        }
        b.current - b.checkpoint <= threshold || self.is_broken()
    }

    /// True once more than half the log is in use since the last checkpoint.
    pub fn wants_checkpoint(&self) -> bool {
        // Two separate loads: a checkpoint between them may pass the current LSN read.
        self.current_lsn().saturating_sub(self.checkpoint_lsn()) > self.capacity / 2
    }

    /// Writes the buffer to the file (no fsync) so that at least `lsn` is written; an
    /// `lsn` past the end means everything appended.
    pub fn write_up_to(&self, lsn: Lsn) -> io::Result<()> {
        self.check_broken()?;
        if self.written_lsn.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        let mut spare = self.writer.lock();
        self.write_locked(&mut spare, lsn).map(|_| ())
    }

    /// Writes everything buffered unless `lsn` is already written; returns the written
    /// LSN. The caller holds `writer`, whose vector is swapped with the buffer so
    /// appends go on while this thread writes.
    fn write_locked(&self, spare: &mut MutexGuard<'_, Vec<u8>>, lsn: Lsn) -> io::Result<Lsn> {
        self.check_broken()?;
        let written = self.written_lsn.load(Ordering::Acquire);
        if written >= lsn {
            return Ok(written);
        }
        let start = {
            let mut b = self.buf.lock();
            std::mem::swap(&mut b.data, &mut **spare);
            let start = b.start;
            b.start = b.current;
            start
        };
        if spare.is_empty() {
            return Ok(written);
        }
        let end = start + spare.len() as u64;
        let result = self.write_circular(start, spare);
        spare.clear();
        if spare.capacity() > 2 * self.buffer_limit {
            spare.shrink_to(self.buffer_limit);
        }
        result.map_err(|e| self.fail(e))?;
        self.written_lsn.store(end, Ordering::Release);
        Ok(end)
    }

    /// One positioned write, two when the range wraps past the end of the data area.
    fn write_circular(&self, lsn: Lsn, data: &[u8]) -> io::Result<()> {
        let pos = lsn % self.capacity;
        let first = (data.len() as u64).min(self.capacity - pos) as usize;
        self.io.write_at(&data[..first], HEADER_SIZE + pos)?;
        let mut calls = 1;
        if first < data.len() {
            self.io.write_at(&data[first..], HEADER_SIZE)?;
            calls += 1;
        }
        self.counters.writes.fetch_add(calls, Ordering::Relaxed);
        self.counters
            .bytes_written
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Writes and fsyncs so that at least `lsn` is durable (an `lsn` past the end means
    /// everything appended). Group commit: if no fsync is in progress the caller becomes
    /// the leader, takes the current LSN as its target, writes everything appended,
    /// fsyncs once, publishes the target as durable and wakes its waiters. A caller that
    /// finds an fsync in progress waits: on that fsync's condvar if the target covers
    /// it, else on the other one, from which the leader, when done, wakes just one
    /// thread to lead the next fsync (whose target then covers all the others). So a
    /// commit that arrives during an fsync sleeps once, not once per fsync it overlaps.
    pub fn flush_up_to(&self, lsn: Lsn) -> io::Result<()> {
        let lsn = lsn.min(self.current_lsn());
        if self.flushed_lsn.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        let mut group = self.syncer.lock();
        loop {
            self.check_broken()?;
            if self.flushed_lsn.load(Ordering::Acquire) >= lsn {
                return Ok(());
            }
            if !group.syncing {
                break;
            }
            let next = u64::from(lsn > group.target);
            let cv = &self.synced[((group.seq + next) % 2) as usize];
            cv.wait(&mut group);
        }
        group.syncing = true;
        group.seq += 1;
        // Every record that ends at or before this is in the buffer or already written,
        // so the write below covers it; a waiter compares its LSN with it.
        let target = self.current_lsn();
        group.target = target;
        let seq = group.seq;
        drop(group);
        let result = self.write_and_sync();
        let mut group = self.syncer.lock();
        group.syncing = false;
        self.synced[(seq % 2) as usize].notify_all();
        let latecomers = &self.synced[((seq + 1) % 2) as usize];
        match result {
            Ok(()) => {
                // Published under `syncer` so a waiter can't check, miss it, then sleep.
                // Only the target, though more may be on disk: a thread that waited for
                // the next fsync must not find itself covered, or nobody might lead it.
                self.flushed_lsn.fetch_max(target, Ordering::AcqRel);
                latecomers.notify_one();
            }
            // Every latecomer must wake to see the log is broken.
            Err(_) => {
                latecomers.notify_all();
            }
        }
        result
    }

    /// The group commit leader's work: everything appended so far, one fsync.
    fn write_and_sync(&self) -> io::Result<()> {
        {
            let mut spare = self.writer.lock();
            self.write_locked(&mut spare, Lsn::MAX)?;
        }
        self.io.sync_data().map_err(|e| self.fail(e))?;
        self.counters.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// What a transaction commit does with its commit record's end LSN, per the policy.
    pub fn commit(&self, lsn: Lsn) -> io::Result<()> {
        match self.flush_at_commit() {
            FlushAtCommit::Durable => self.flush_up_to(lsn),
            FlushAtCommit::WriteOnly => self.write_up_to(lsn),
            FlushAtCommit::Never => Ok(()),
        }
    }

    /// Records that nothing before `lsn` is needed for recovery any more (every page
    /// changed before it is on disk). `lsn` must be a record boundary — an LSN `append`
    /// returned, `current_lsn()`, or a recovered record's end — else `InvalidInput`;
    /// an `lsn` at or below the current checkpoint does nothing. Flushes up to `lsn` if
    /// needed, writes the next checkpoint slot and fsyncs; only then is the space
    /// before `lsn` reused.
    pub fn checkpoint(&self, lsn: Lsn) -> io::Result<()> {
        let mut state = self.ckpt.lock();
        self.check_broken()?;
        if lsn <= self.checkpoint_lsn() {
            return Ok(());
        }
        let current = self.current_lsn();
        if lsn > current {
            return Err(invalid_input(format!(
                "checkpoint LSN {lsn} is beyond the end of the redo log ({current})"
            )));
        }
        self.flush_up_to(lsn)?;
        self.check_boundary(lsn)?;
        let slot = Slot {
            lsn,
            number: state.next_number,
            generation: self.generation,
        };
        self.io
            .write_at(&encode_slot(&slot), slot_offset(slot.number))
            .map_err(|e| self.fail(e))?;
        self.io.sync_data().map_err(|e| self.fail(e))?;
        self.counters.fsyncs.fetch_add(1, Ordering::Relaxed);
        self.counters.checkpoints.fetch_add(1, Ordering::Relaxed);
        state.next_number = state.next_number.wrapping_add(1);
        let mut b = self.buf.lock();
        b.checkpoint = lsn;
        self.checkpoint_lsn.store(lsn, Ordering::Release);
        self.space.notify_all();
        Ok(())
    }

    /// A checkpoint in the middle of a record would make recovery find nothing after
    /// it, silently; so check that a frame starts at `lsn`. Written LSNs are always
    /// boundaries; below that, the frame's own LSN field is on disk to compare.
    fn check_boundary(&self, lsn: Lsn) -> io::Result<()> {
        let written = self.written_lsn.load(Ordering::Acquire);
        if lsn == written {
            return Ok(());
        }
        let mut field = [0u8; 8];
        if lsn < written {
            read_circular(&*self.io, self.capacity, lsn, &mut field)?;
        }
        if lsn > written || u64::from_le_bytes(field) != lsn {
            return Err(invalid_input(format!(
                "checkpoint LSN {lsn} is not a redo record boundary"
            )));
        }
        Ok(())
    }

    /// End of the last appended record.
    pub fn current_lsn(&self) -> Lsn {
        self.current_lsn.load(Ordering::Acquire)
    }

    /// Written to the file (not necessarily durable) up to here.
    pub fn written_lsn(&self) -> Lsn {
        self.written_lsn.load(Ordering::Acquire)
    }

    /// Durable up to here.
    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed_lsn.load(Ordering::Acquire)
    }

    pub fn checkpoint_lsn(&self) -> Lsn {
        self.checkpoint_lsn.load(Ordering::Acquire)
    }

    /// Bytes of the circular data area, as stored in the file.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Largest payload [`append`](RedoLog::append) accepts: `capacity / 8 - 20`.
    pub fn max_payload(&self) -> u64 {
        max_payload_for(self.capacity)
    }

    pub fn set_flush_at_commit(&self, p: FlushAtCommit) {
        self.policy.store(p as u64, Ordering::Relaxed);
    }

    pub fn flush_at_commit(&self) -> FlushAtCommit {
        FlushAtCommit::from_setting(self.policy.load(Ordering::Relaxed))
            .unwrap_or(FlushAtCommit::Durable)
    }

    pub fn stats(&self) -> RedoStats {
        let c = &self.counters;
        RedoStats {
            fsyncs: c.fsyncs.load(Ordering::Relaxed),
            writes: c.writes.load(Ordering::Relaxed),
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
            records: c.records.load(Ordering::Relaxed),
            waits: c.waits.load(Ordering::Relaxed),
            checkpoints: c.checkpoints.load(Ordering::Relaxed),
        }
    }

    /// Starts the once-a-second flusher: writes and fsyncs everything appended, which
    /// is what bounds the loss under policies 0 and 2. It holds only a weak reference,
    /// so it never keeps the log alive; dropping the handle stops and joins it.
    pub fn start_background_flusher(self: &Arc<Self>) -> BackgroundFlusher {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let weak = Arc::downgrade(self);
        let signal = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("redo-flusher".into())
            .spawn(move || {
                let (lock, cv) = &*signal;
                let mut stopped = lock.lock();
                while !*stopped {
                    cv.wait_for(&mut stopped, FLUSH_INTERVAL);
                    if *stopped {
                        break;
                    }
                    let Some(log) = weak.upgrade() else {
                        break;
                    };
                    MutexGuard::unlocked(&mut stopped, || {
                        let current = log.current_lsn();
                        if current > log.flushed_lsn() {
                            // A failure breaks the log; commits and checkpoints report it.
                            let _ = log.flush_up_to(current);
                        }
                    });
                }
            })
            .ok();
        BackgroundFlusher { stop, thread }
    }

    fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }

    /// After a failed write or fsync nothing more may be written: the file's state is
    /// unknown and a failed fsync cannot be retried safely. Wakes space waiters so they
    /// don't wait for a checkpoint that can never come.
    fn fail(&self, e: io::Error) -> io::Error {
        {
            let mut reason = self.broken_reason.lock();
            if reason.is_none() {
                *reason = Some((e.kind(), e.to_string()));
            }
        }
        self.broken.store(true, Ordering::Release);
        let _b = self.buf.lock();
        self.space.notify_all();
        e
    }

    fn check_broken(&self) -> io::Result<()> {
        if !self.is_broken() {
            return Ok(());
        }
        let (kind, msg) = self
            .broken_reason
            .lock()
            .clone()
            .unwrap_or((io::ErrorKind::Other, "unknown error".into()));
        Err(io::Error::new(
            kind,
            format!("redo log unusable after an earlier I/O error: {msg}"),
        ))
    }
}

/// Handle of the once-a-second flusher thread; dropping it stops the thread.
pub struct BackgroundFlusher {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundFlusher {
    /// False if the OS refused to start the thread.
    pub fn is_running(&self) -> bool {
        self.thread.is_some()
    }
}

impl Drop for BackgroundFlusher {
    fn drop(&mut self) {
        let (lock, cv) = &*self.stop;
        *lock.lock() = true;
        cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemFile;
    use std::sync::mpsc;
    use std::time::Instant;

    const SMALL: u64 = 64 * 1024;

    fn cfg(capacity: u64) -> RedoConfig {
        RedoConfig {
            capacity,
            flush_at_commit: FlushAtCommit::Durable,
        }
    }

    /// xorshift64*: deterministic test data without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }

    fn payload(i: u64, len: usize) -> Vec<u8> {
        let mut p: Vec<u8> = i.to_le_bytes().iter().cycle().take(len).copied().collect();
        if let Some(last) = p.last_mut() {
            *last ^= len as u8;
        }
        p
    }

    fn reopen(image: Vec<u8>, capacity: u64) -> io::Result<(RedoLog, Recovered, Arc<MemFile>)> {
        let file = Arc::new(MemFile::from_bytes(image));
        let (log, rec) = RedoLog::open(file.clone(), cfg(capacity))?;
        Ok((log, rec, file))
    }

    fn file_offset(lsn: Lsn, capacity: u64) -> usize {
        (HEADER_SIZE + lsn % capacity) as usize
    }

    #[test]
    fn redo_log_is_send_and_sync() {
        fn shared<T: Send + Sync>() {}
        shared::<RedoLog>();
        shared::<BackgroundFlusher>();
    }

    #[test]
    fn reopen_returns_records_in_order() {
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(1 << 20)).unwrap();
        assert_eq!(log.current_lsn(), START_LSN);
        let mut want = Vec::new();
        for i in 0..100u64 {
            let p = payload(i, (i * 7 % 300) as usize);
            let end = log.append(&p);
            want.push((end, p));
        }
        assert_eq!(log.append(&[]), want.last().unwrap().0 + FRAME_HEADER_SIZE);
        want.push((log.current_lsn(), Vec::new()));
        log.flush_up_to(log.current_lsn()).unwrap();
        assert_eq!(log.flushed_lsn(), log.current_lsn());
        let end = log.current_lsn();
        drop(log);

        let (log, rec, _) = reopen(file.crash_image(), 1 << 20).unwrap();
        assert_eq!(rec.checkpoint_lsn, START_LSN);
        assert_eq!(rec.records, want);
        assert_eq!(rec.end_lsn, end);
        assert_eq!(log.current_lsn(), end);
        assert_eq!(log.flushed_lsn(), end);
    }

    #[test]
    fn crash_keeps_flushed_records_and_never_returns_torn_ones() {
        let cap = 1 << 20;
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(cap)).unwrap();
        let mut want = Vec::new();
        for i in 0..10 {
            let p = payload(i, 100);
            want.push((log.append(&p), p));
        }
        log.flush_up_to(want[9].0).unwrap();
        // Written but not synced: survives a process crash, not a power cut.
        let mut written = want.clone();
        for i in 10..13 {
            let p = payload(i, 100);
            written.push((log.append(&p), p));
        }
        log.write_up_to(written[12].0).unwrap();
        // Only buffered: lost either way.
        log.append(&payload(13, 100));
        log.append(&payload(14, 100));

        let (_, rec, _) = reopen(file.crash_image(), cap).unwrap();
        assert_eq!(rec.records, want);
        let (_, rec, _) = reopen(file.contents(), cap).unwrap();
        assert_eq!(rec.records, written);
    }

    #[test]
    fn full_buffer_is_written_without_fsync() {
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(SMALL)).unwrap();
        let mut want = Vec::new();
        for i in 0..40 {
            let p = payload(i, 1000);
            want.push((log.append(&p), p));
        }
        let s = log.stats();
        assert!(s.writes > 0 && s.bytes_written > 0, "{s:?}");
        assert_eq!(s.fsyncs, 0);
        assert_eq!(s.records, 40);
        let (_, rec, _) = reopen(file.crash_image(), SMALL).unwrap();
        assert!(rec.records.is_empty());
        // Whatever was written is a prefix of whole records.
        let (_, rec, _) = reopen(file.contents(), SMALL).unwrap();
        assert!(!rec.records.is_empty());
        assert_eq!(rec.records[..], want[..rec.records.len()]);
        assert_eq!(rec.end_lsn, log.written_lsn());
    }

    #[test]
    fn torn_tail_ends_the_log_cleanly() {
        let cap = 1 << 20;
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(cap)).unwrap();
        let mut want = Vec::new();
        for i in 0..20 {
            let p = payload(i, 50 + i as usize);
            want.push((log.append(&p), p));
        }
        log.flush_up_to(log.current_lsn()).unwrap();
        let image = file.crash_image();
        let (last_end, _) = want.pop().unwrap();
        let last_start = want.last().unwrap().0;
        let start_off = file_offset(last_start, cap);

        // A flipped payload byte (the record's end was not fully written).
        let mut torn = image.clone();
        torn[file_offset(last_end - 1, cap)] ^= 0xff;
        let (log, rec, _) = reopen(torn, cap).unwrap();
        assert_eq!(rec.records, want);
        assert_eq!(rec.end_lsn, last_start);
        assert_eq!(log.current_lsn(), last_start);

        // The file cut off in the middle of the last frame's header.
        let mut cut = image.clone();
        cut.truncate(start_off + 10);
        let (_, rec, file2) = reopen(cut, cap).unwrap();
        assert_eq!(rec.records, want);
        assert_eq!(file2.len().unwrap(), HEADER_SIZE + cap);

        // A damaged length field.
        let mut bad_len = image;
        bad_len[start_off + 8..start_off + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        let (_, rec, _) = reopen(bad_len, cap).unwrap();
        assert_eq!(rec.records, want);
    }

    /// Appends `n` records of random size, checkpointing (at a record boundary a
    /// quarter of the log back) whenever the log asks for it.
    fn workload(log: &RedoLog, all: &mut Vec<(Lsn, Vec<u8>)>, rng: &mut Rng, n: usize) {
        let cap = log.capacity();
        for _ in 0..n {
            if log.wants_checkpoint() {
                let target = log.current_lsn() - cap / 4;
                let at = all
                    .iter()
                    .rev()
                    .map(|r| r.0)
                    .find(|&end| end <= target)
                    .unwrap();
                log.checkpoint(at).unwrap();
                assert_eq!(log.checkpoint_lsn(), at);
            }
            log.free_check();
            let len = rng.below(400) as usize;
            let p = rng.bytes(len);
            all.push((log.append(&p), p));
        }
    }

    fn after(all: &[(Lsn, Vec<u8>)], checkpoint: Lsn) -> Vec<(Lsn, Vec<u8>)> {
        all.iter().filter(|r| r.0 > checkpoint).cloned().collect()
    }

    #[test]
    fn wraparound_over_several_laps_replays_only_after_last_checkpoint() {
        let mut file = Arc::new(MemFile::new());
        let mut log = RedoLog::create(file.clone(), cfg(SMALL)).unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut all = Vec::new();
        for _round in 0..3 {
            workload(&log, &mut all, &mut rng, 1500);
            log.flush_up_to(log.current_lsn()).unwrap();
            let (reopened, rec, reopened_file) = reopen(file.crash_image(), SMALL).unwrap();
            assert_eq!(rec.checkpoint_lsn, log.checkpoint_lsn());
            assert_eq!(rec.records, after(&all, rec.checkpoint_lsn));
            assert_eq!(rec.end_lsn, log.current_lsn());
            // Keep going on the recovered log, like a restarted server.
            log = reopened;
            file = reopened_file;
        }
        assert!(log.current_lsn() - START_LSN > 10 * SMALL);
        let wrapped = all
            .windows(2)
            .any(|w| w[0].0 / SMALL != (w[1].0 - 1) / SMALL);
        assert!(wrapped, "no record straddled the end of the data area");
    }

    #[test]
    fn stale_records_from_an_earlier_lap_are_not_replayed() {
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(SMALL)).unwrap();
        // Frames of 1024 bytes tile the 64 KiB circle exactly, so every new frame ends
        // where an old-lap frame begins.
        let mut all = Vec::new();
        for i in 0..60 {
            let p = payload(i, 1024 - FRAME_HEADER_SIZE as usize);
            all.push((log.append(&p), p));
        }
        log.checkpoint(log.current_lsn()).unwrap();
        let mut new = Vec::new();
        for i in 60..70 {
            let p = payload(i, 1024 - FRAME_HEADER_SIZE as usize);
            new.push((log.append(&p), p));
        }
        log.flush_up_to(log.current_lsn()).unwrap();
        // The new records overwrote the start of the circle; what follows them is the
        // first lap.
        assert!(log.current_lsn() - START_LSN > SMALL);
        let (_, rec, _) = reopen(file.crash_image(), SMALL).unwrap();
        assert_eq!(rec.records, new);
    }

    #[test]
    fn leftovers_from_before_a_recovery_are_not_replayed() {
        let cap = 1 << 20;
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(cap)).unwrap();
        let a = payload(1, 100);
        let a_end = log.append(&a);
        let b_end = log.append(&payload(2, 100));
        log.append(&payload(3, 100));
        log.flush_up_to(log.current_lsn()).unwrap();
        // B is torn but C made it: a disk that reordered the writes.
        let mut image = file.crash_image();
        image[file_offset(b_end - 1, cap)] ^= 1;
        let (log, rec, file) = reopen(image, cap).unwrap();
        assert_eq!(rec.records, vec![(a_end, a.clone())]);
        // A new record of B's size ends exactly where the intact old C begins.
        let b2 = payload(9, 100);
        assert_eq!(log.append(&b2), b_end);
        log.flush_up_to(b_end).unwrap();
        let (_, rec, _) = reopen(file.crash_image(), cap).unwrap();
        assert_eq!(rec.records, vec![(a_end, a), (b_end, b2)]);
    }

    #[test]
    fn group_commit_shares_fsyncs() {
        const THREADS: u64 = 8;
        const COMMITS: u64 = 200;
        // An fsync that takes a while, as on a disk, so commits really do overlap.
        let file = Arc::new(TestFile::new(Duration::from_micros(200)));
        let log = Arc::new(RedoLog::create(file.clone(), cfg(256 * 1024)).unwrap());
        let start = Arc::new(std::sync::Barrier::new(THREADS as usize));
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let log = Arc::clone(&log);
                let start = Arc::clone(&start);
                std::thread::spawn(move || {
                    start.wait();
                    for i in 0..COMMITS {
                        let mut p = t.to_le_bytes().to_vec();
                        p.extend_from_slice(&i.to_le_bytes());
                        let end = log.append(&p);
                        log.commit(end).unwrap();
                        assert!(log.flushed_lsn() >= end);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let s = log.stats();
        assert!(s.fsyncs >= 1);
        assert!(
            s.fsyncs < THREADS * COMMITS,
            "{} fsyncs for {} commits",
            s.fsyncs,
            THREADS * COMMITS
        );
        let (_, rec, _) = reopen(file.inner.crash_image(), 256 * 1024).unwrap();
        assert_eq!(rec.records.len() as u64, THREADS * COMMITS);
        let mut next = [0u64; THREADS as usize];
        for (_, p) in &rec.records {
            let t = u64_at(p, 0) as usize;
            assert_eq!(u64_at(p, 8), next[t]);
            next[t] += 1;
        }
    }

    #[test]
    fn checkpoint_slots_alternate_and_corrupt_newest_falls_back() {
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(SMALL)).unwrap();
        let c1 = log.append(b"a");
        log.checkpoint(c1).unwrap();
        let b = (log.append(b"b"), b"b".to_vec());
        let c2 = b.0;
        log.checkpoint(c2).unwrap();
        let c = (log.append(b"c"), b"c".to_vec());
        log.flush_up_to(c.0).unwrap();
        assert_eq!(log.stats().checkpoints, 2);

        let image = file.crash_image();
        let slot = |img: &[u8], i: usize| decode_slot(&img[SLOT_OFFSETS[i] as usize..]);
        assert_eq!(slot(&image, 1).map(|s| (s.lsn, s.number)), Some((c1, 1)));
        assert_eq!(slot(&image, 0).map(|s| (s.lsn, s.number)), Some((c2, 2)));

        let (_, rec, _) = reopen(image.clone(), SMALL).unwrap();
        assert_eq!(rec.checkpoint_lsn, c2);
        assert_eq!(rec.records, vec![c.clone()]);

        let mut damaged = image.clone();
        damaged[SLOT_OFFSETS[0] as usize + 3] ^= 0x10;
        let (log2, rec, file2) = reopen(damaged, SMALL).unwrap();
        assert_eq!(rec.checkpoint_lsn, c1);
        assert_eq!(rec.records, vec![b, c]);
        // Opening wrote its generation over the damaged slot, not the good one.
        let img2 = file2.contents();
        assert_eq!(slot(&img2, 1).map(|s| s.lsn), Some(c1));
        assert_eq!(slot(&img2, 0).map(|s| (s.lsn, s.number)), Some((c1, 2)));
        assert_eq!(log2.checkpoint_lsn(), c1);

        let mut both = image;
        both[SLOT_OFFSETS[0] as usize] ^= 1;
        both[SLOT_OFFSETS[1] as usize] ^= 1;
        let err = reopen(both, SMALL).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn checkpoint_rejects_non_boundaries_and_the_future() {
        let log = RedoLog::create(Arc::new(MemFile::new()), cfg(SMALL)).unwrap();
        let a = log.append(&[7u8; 100]);
        let b = log.append(&[9u8; 100]);
        let err = log.checkpoint(a + 5).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let err = log.checkpoint(b + 1).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(log.checkpoint_lsn(), START_LSN);
        log.checkpoint(a).unwrap();
        assert_eq!(log.flushed_lsn(), b, "checkpoint flushes what it needs");
        log.checkpoint(START_LSN).unwrap(); // backwards: nothing to do
        assert_eq!(log.checkpoint_lsn(), a);
        log.checkpoint(b).unwrap();
        assert_eq!(log.checkpoint_lsn(), b);
    }

    /// Appends 1000-byte records until the next would pass `limit` bytes in use.
    fn fill(log: &RedoLog, limit: u64) {
        while log.current_lsn() - log.checkpoint_lsn() + 1020 <= limit {
            log.append(&[0xab; 1000]);
        }
    }

    #[test]
    fn free_check_blocks_until_a_checkpoint() {
        let log = Arc::new(RedoLog::create(Arc::new(MemFile::new()), cfg(SMALL)).unwrap());
        fill(&log, SMALL - SMALL / 8 + 1020);
        assert!(log.wants_checkpoint());
        let (tx, rx) = mpsc::channel();
        let waiter = {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                log.free_check();
                tx.send(()).unwrap();
            })
        };
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(300)),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        log.checkpoint(log.current_lsn()).unwrap();
        rx.recv_timeout(Duration::from_secs(60)).unwrap();
        waiter.join().unwrap();
        assert!(!log.wants_checkpoint());
        assert_eq!(log.stats().waits, 1);
    }

    #[test]
    fn append_waits_instead_of_overwriting_the_checkpointed_region() {
        let file = Arc::new(MemFile::new());
        let log = Arc::new(RedoLog::create(file.clone(), cfg(SMALL)).unwrap());
        fill(&log, SMALL);
        let (tx, rx) = mpsc::channel();
        let appender = {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                tx.send(log.append(&[b'l'; 1000])).unwrap();
            })
        };
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(300)),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        let ckpt = log.current_lsn();
        log.checkpoint(ckpt).unwrap();
        let end = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        appender.join().unwrap();
        log.flush_up_to(end).unwrap();
        let (_, rec, _) = reopen(file.crash_image(), SMALL).unwrap();
        assert_eq!(rec.records, vec![(end, vec![b'l'; 1000])]);
        assert_eq!(log.stats().waits, 1);
    }

    #[test]
    fn commit_follows_the_policy() {
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(SMALL)).unwrap();
        log.set_flush_at_commit(FlushAtCommit::Never);
        let a = log.append(b"never");
        log.commit(a).unwrap();
        assert_eq!(log.written_lsn(), START_LSN);

        log.set_flush_at_commit(FlushAtCommit::WriteOnly);
        assert_eq!(log.flush_at_commit(), FlushAtCommit::WriteOnly);
        let b = log.append(b"write");
        log.commit(b).unwrap();
        assert_eq!(log.written_lsn(), b);
        assert_eq!(log.flushed_lsn(), START_LSN);
        let (_, rec, _) = reopen(file.contents(), SMALL).unwrap();
        assert_eq!(rec.records.len(), 2);
        let (_, rec, _) = reopen(file.crash_image(), SMALL).unwrap();
        assert!(rec.records.is_empty());

        log.set_flush_at_commit(FlushAtCommit::Durable);
        let c = log.append(b"durable");
        log.commit(c).unwrap();
        assert_eq!(log.flushed_lsn(), c);
        let (_, rec, _) = reopen(file.crash_image(), SMALL).unwrap();
        assert_eq!(rec.records.len(), 3);
        assert_eq!(
            FlushAtCommit::from_setting(2),
            Some(FlushAtCommit::WriteOnly)
        );
        assert_eq!(FlushAtCommit::from_setting(3), None);
    }

    #[test]
    fn background_flusher_makes_appends_durable() {
        let file = Arc::new(MemFile::new());
        let log = Arc::new(
            RedoLog::create(
                file.clone(),
                RedoConfig {
                    capacity: SMALL,
                    flush_at_commit: FlushAtCommit::Never,
                },
            )
            .unwrap(),
        );
        let flusher = log.start_background_flusher();
        assert!(flusher.is_running());
        let end = log.append(b"eventually");
        log.commit(end).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while log.flushed_lsn() < end && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(log.flushed_lsn(), end);
        drop(flusher); // joins the thread
        let (_, rec, _) = reopen(file.crash_image(), SMALL).unwrap();
        assert_eq!(rec.records, vec![(end, b"eventually".to_vec())]);
    }

    #[test]
    fn open_keeps_the_files_capacity() {
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(SMALL)).unwrap();
        let end = log.append(b"x");
        log.flush_up_to(end).unwrap();
        let (log, rec, _) = reopen(file.crash_image(), 1 << 20).unwrap();
        assert_eq!(log.capacity(), SMALL);
        assert_eq!(rec.records, vec![(end, b"x".to_vec())]);
    }

    #[test]
    fn bad_sizes_are_refused() {
        let err = RedoLog::create(Arc::new(MemFile::new()), cfg(1000))
            .err()
            .unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let log = RedoLog::create(Arc::new(MemFile::new()), cfg(SMALL)).unwrap();
        assert_eq!(log.max_payload(), SMALL / 8 - FRAME_HEADER_SIZE);
        let big = vec![0u8; log.max_payload() as usize + 1];
        let err = log.try_append(&big).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(log.current_lsn(), START_LSN);
        log.append(&big[1..]);
    }

    #[test]
    fn garbage_files_give_errors_not_panics() {
        let mut rng = Rng(7);
        for len in [0, 1, 100, 4095, 4096, 4096 + 65536] {
            let bytes = rng.bytes(len);
            let err = RedoLog::open(Arc::new(MemFile::from_bytes(bytes)), cfg(SMALL))
                .err()
                .unwrap();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        }
        let err = RedoLog::open(
            Arc::new(MemFile::from_bytes(b"XXXXXXXX".repeat(1000))),
            cfg(SMALL),
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("bad magic"), "{err}");

        // A valid header over a garbage data area is an empty log.
        let file = Arc::new(MemFile::new());
        RedoLog::create(file.clone(), cfg(SMALL)).unwrap();
        let mut image = file.crash_image();
        let garbage = rng.bytes(SMALL as usize);
        image[HEADER_SIZE as usize..].copy_from_slice(&garbage);
        let (_, rec, _) = reopen(image, SMALL).unwrap();
        assert!(rec.records.is_empty());
        assert_eq!(rec.end_lsn, START_LSN);
    }

    #[test]
    fn random_damage_never_panics() {
        let file = Arc::new(MemFile::new());
        let log = RedoLog::create(file.clone(), cfg(SMALL)).unwrap();
        let mut rng = Rng(99);
        let mut all = Vec::new();
        workload(&log, &mut all, &mut rng, 600);
        log.flush_up_to(log.current_lsn()).unwrap();
        let image = file.crash_image();
        let good = after(&all, log.checkpoint_lsn());
        for _ in 0..200 {
            let mut img = image.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(img.len() as u64) as usize;
                img[at] = rng.next() as u8;
            }
            if rng.below(4) == 0 {
                img.truncate(rng.below(img.len() as u64) as usize);
            }
            if let Ok((_, rec, _)) = reopen(img, SMALL) {
                // Damage can cut the log short (or send recovery back to the older
                // checkpoint), never change a record.
                if rec.checkpoint_lsn == log.checkpoint_lsn() {
                    assert!(rec.records.len() <= good.len());
                    assert_eq!(rec.records[..], good[..rec.records.len()]);
                }
            }
        }
    }

    /// A file whose fsyncs can be made to fail, or to take as long as a disk's.
    struct TestFile {
        inner: MemFile,
        fail: AtomicBool,
        sync_delay: Duration,
    }

    impl TestFile {
        fn new(sync_delay: Duration) -> TestFile {
            TestFile {
                inner: MemFile::new(),
                fail: AtomicBool::new(false),
                sync_delay,
            }
        }
    }

    impl FileIo for TestFile {
        fn len(&self) -> io::Result<u64> {
            self.inner.len()
        }
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
            self.inner.read_at(buf, offset)
        }
        fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
            self.inner.write_at(data, offset)
        }
        fn set_len(&self, len: u64) -> io::Result<()> {
            self.inner.set_len(len)
        }
        fn sync_data(&self) -> io::Result<()> {
            if self.fail.load(Ordering::SeqCst) {
                return Err(io::Error::other("injected fsync failure"));
            }
            std::thread::sleep(self.sync_delay);
            self.inner.sync_data()
        }
    }

    #[test]
    fn latecomers_to_an_fsync_share_the_next_one() {
        // Commits that arrive while a leader fsyncs wait for the next fsync; exactly one
        // of them must lead it (none may be left asleep) and it must cover them all.
        let file = Arc::new(TestFile::new(Duration::from_millis(300)));
        let log = Arc::new(RedoLog::create(file, cfg(256 * 1024)).unwrap());
        let (done, finished) = std::sync::mpsc::channel();
        let commit = |tag: u8| {
            let log = Arc::clone(&log);
            let done = done.clone();
            std::thread::spawn(move || {
                let end = log.append(&[tag; 50]);
                log.commit(end).unwrap();
                assert!(log.flushed_lsn() >= end);
                done.send(tag).unwrap();
            })
        };
        commit(0);
        std::thread::sleep(Duration::from_millis(100));
        (1..=3).for_each(|t| drop(commit(t)));
        for _ in 0..4 {
            // A latecomer nobody wakes would hang here; fail instead.
            finished
                .recv_timeout(Duration::from_secs(20))
                .expect("every commit returns");
        }
        assert_eq!(
            log.stats().fsyncs,
            2,
            "one fsync for the leader, one for the rest"
        );
        assert_eq!(log.flushed_lsn(), log.current_lsn());
    }

    #[test]
    fn a_failed_fsync_breaks_the_log() {
        let file = Arc::new(TestFile::new(Duration::ZERO));
        let log = RedoLog::create(file.clone(), cfg(SMALL)).unwrap();
        let a = log.append(b"a");
        file.fail.store(true, Ordering::SeqCst);
        assert!(log.flush_up_to(a).is_err());
        file.fail.store(false, Ordering::SeqCst);
        // No retry after a failed fsync: the page cache may have dropped the data.
        let b = log.append(b"b");
        let err = log.flush_up_to(b).unwrap_err();
        assert!(err.to_string().contains("injected"), "{err}");
        assert!(log.write_up_to(b).is_err());
        assert!(log.checkpoint(a).is_err());
        assert_eq!(log.flushed_lsn(), START_LSN);
        // Space waits give up instead of waiting for a checkpoint that can't come.
        fill(&log, SMALL);
        log.append(b"c");
        log.free_check();
    }
}
