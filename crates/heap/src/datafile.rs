//! The data file: a header, then records (live or deleted) one after another. Rows are
//! read and written with positioned reads and writes through [`FileIo`], or, with
//! `myisam_use_mmap=ON`, copied from and to a shared memory map of the file (appends
//! still go through pwrite; the mapping grows by [`MmapGrowth`]). The engine caches no
//! rows (the OS page cache does, as for MyISAM). Every access to row bytes goes through
//! this module. The mapping, its budget (`myisam_mmap_size`) and what happens when the
//! file is truncated underneath are described in `docs/heap-mmap.md`.

use crate::format::*;
use std::io;
use strata_engine::{Flow, RowFn, RowId};
use strata_storage::io::FileIo;
use strata_storage::mmap::{self, Advice, MapFault, Mapping};
use strata_storage::sync::{Arc, AtomicBool, AtomicU64, Mutex, Ordering, RwLock};
use strata_types::{Error, Result, TableDef, Value};

#[derive(Clone, Debug)]
pub struct DataHeader {
    pub fixed_capacity: u32,
    pub rows: u64,
    pub deleted_head: u64,
    pub auto_increment: u64,
    pub data_end: u64,
    pub state: u8,
}

impl DataHeader {
    pub fn new(def: &TableDef) -> DataHeader {
        DataHeader {
            fixed_capacity: fixed_capacity(def).unwrap_or(0) as u32,
            rows: 0,
            deleted_head: 0,
            auto_increment: def.auto_increment_start.max(1),
            data_end: DATA_HEADER_SIZE,
            state: STATE_CLEAN,
        }
    }

    pub fn write(&self, f: &dyn FileIo) -> io::Result<()> {
        let mut b = [0u8; 64];
        b[DH_MAGIC..DH_MAGIC + 8].copy_from_slice(DATA_MAGIC);
        put_u32(&mut b, DH_VERSION, FORMAT_VERSION);
        put_u32(&mut b, DH_FIXED_CAPACITY, self.fixed_capacity);
        put_u64(&mut b, DH_ROWS, self.rows);
        put_u64(&mut b, DH_DELETED_HEAD, self.deleted_head);
        put_u64(&mut b, DH_AUTO_INCREMENT, self.auto_increment);
        put_u64(&mut b, DH_DATA_END, self.data_end);
        b[DH_STATE] = self.state;
        let crc = crc32c::crc32c(&b[..DH_CHECKED_LEN]);
        put_u32(&mut b, DH_CHECKSUM, crc);
        f.write_at(&b, 0)
    }

    pub fn read(f: &dyn FileIo) -> std::result::Result<DataHeader, String> {
        let mut b = [0u8; 64];
        f.read_at(&mut b, 0)
            .map_err(|e| format!("data file header unreadable: {e}"))?;
        if &b[DH_MAGIC..DH_MAGIC + 8] != DATA_MAGIC {
            return Err("data file has a wrong magic number".into());
        }
        if get_u32(&b, DH_VERSION) != FORMAT_VERSION {
            return Err(format!(
                "data file format version {} is not {FORMAT_VERSION}",
                get_u32(&b, DH_VERSION)
            ));
        }
        if crc32c::crc32c(&b[..DH_CHECKED_LEN]) != get_u32(&b, DH_CHECKSUM) {
            return Err("data file header checksum mismatch".into());
        }
        Ok(DataHeader {
            fixed_capacity: get_u32(&b, DH_FIXED_CAPACITY),
            rows: get_u64(&b, DH_ROWS),
            deleted_head: get_u64(&b, DH_DELETED_HEAD),
            auto_increment: get_u64(&b, DH_AUTO_INCREMENT),
            data_end: get_u64(&b, DH_DATA_END),
            state: b[DH_STATE],
        })
    }
}

/// How a data file's mapping keeps up with a growing file. Appends always go through
/// pwrite; the question is when the mapping is made larger (a remap: a new mapping is
/// built, swapped in under the write lock, the old one unmapped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmapGrowth {
    /// MySQL 5.1's policy: map exactly the file, and remap after every `n` appends;
    /// rows appended since the last remap are read with pread.
    EveryAppends(u32),
    /// Map past the end of the file (pages there become readable as pwrite extends the
    /// file, with no remap): when data reaches the end of the mapping, grow it to what
    /// is needed plus its current length, clamped to `[min, max_step]` bytes. Remaps are
    /// logarithmic in the file size up to `max_step`, then one per `max_step` bytes.
    Geometric { min: u64, max_step: u64 },
}

impl Default for MmapGrowth {
    /// Measured in `benches/mmap_growth.rs`, reasoning in `docs/heap-mmap.md`.
    fn default() -> Self {
        MmapGrowth::Geometric {
            min: 1 << 20,
            max_step: 256 << 20,
        }
    }
}

/// Engine-wide mmap settings (`myisam_use_mmap`, `myisam_mmap_size`) and the budget
/// every data file's mapping is counted against.
pub struct MmapSettings {
    enabled: AtomicBool,
    limit: AtomicU64,
    /// Bytes currently mapped, over all data files.
    mapped: AtomicU64,
    /// Bumped on every change of the settings; a data file that sees a new generation
    /// decides again whether (and how much) to map.
    generation: AtomicU64,
    growth: MmapGrowth,
    remaps: AtomicU64,
    fallbacks: AtomicU64,
}

impl MmapSettings {
    pub fn new(enabled: bool, limit: u64, growth: MmapGrowth) -> MmapSettings {
        MmapSettings {
            enabled: AtomicBool::new(enabled),
            limit: AtomicU64::new(limit),
            mapped: AtomicU64::new(0),
            generation: AtomicU64::new(1),
            growth,
            remaps: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    pub fn set_limit(&self, bytes: u64) {
        self.limit.store(bytes, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Bytes mapped now, over all data files.
    pub fn mapped(&self) -> u64 {
        self.mapped.load(Ordering::Relaxed)
    }

    /// Mappings made (first maps and remaps).
    pub fn remaps(&self) -> u64 {
        self.remaps.load(Ordering::Relaxed)
    }

    /// Times a file could not be mapped within `myisam_mmap_size` and uses pread.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    fn reserve(&self, n: u64) -> bool {
        let limit = self.limit();
        self.mapped
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |m| {
                m.checked_add(n).filter(|&t| t <= limit)
            })
            .is_ok()
    }

    fn release(&self, n: u64) {
        self.mapped.fetch_sub(n, Ordering::AcqRel);
    }
}

/// A mapping and its share of the budget, given back when it is dropped.
struct Held {
    map: Mapping,
    settings: Arc<MmapSettings>,
    /// Bytes of the budget this mapping gives back when dropped: its length, except
    /// while a remap hands the old mapping's share over to the new one.
    accounted: u64,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.settings.release(self.accounted);
    }
}

struct MapState {
    held: Option<Held>,
    /// The settings generation this state was decided under.
    generation: u64,
}

pub struct DataFile {
    io: Arc<dyn FileIo>,
    /// Record capacity of a fixed-length table (0: variable length); never changes.
    fixed: usize,
    /// `header.data_end`, readable without the header mutex (readers never take it).
    data_end: AtomicU64,
    pub header: Mutex<DataHeader>,
    settings: Arc<MmapSettings>,
    /// The mapping. Readers hold the read lock only while they copy a record out, so a
    /// remap (write lock) waits for copies in flight and no copy spans two mappings.
    map: RwLock<MapState>,
    /// Whether `map` may hold a mapping: lets pread mode skip the lock entirely.
    maybe_mapped: AtomicBool,
    /// A fault showed the file shorter than we mapped: no mapping until the file is
    /// rewritten (TRUNCATE, repair).
    poisoned: AtomicBool,
    /// Something was written through the mapping since the last flush (msync it).
    map_written: AtomicBool,
    /// Appends since the last remap (`MmapGrowth::EveryAppends`).
    appends: AtomicU64,
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

fn round_up(n: u64, to: u64) -> u64 {
    n.div_ceil(to).saturating_mul(to)
}

impl DataFile {
    pub fn open(
        io: Arc<dyn FileIo>,
        def: &TableDef,
        settings: Arc<MmapSettings>,
    ) -> std::result::Result<DataFile, String> {
        let header = DataHeader::read(io.as_ref())?;
        let len = io.len().map_err(|e| e.to_string())?;
        if header.data_end > len || header.data_end < DATA_HEADER_SIZE {
            return Err(format!(
                "data file is truncated: {len} bytes, header says data ends at {}",
                header.data_end
            ));
        }
        let expect = fixed_capacity(def).unwrap_or(0) as u32;
        if header.fixed_capacity != expect {
            return Err(format!(
                "data file record size {} does not match the table definition ({expect})",
                header.fixed_capacity
            ));
        }
        Ok(DataFile {
            io,
            fixed: expect as usize,
            data_end: AtomicU64::new(header.data_end),
            header: Mutex::new(header),
            settings,
            map: RwLock::new(MapState {
                held: None,
                generation: 0,
            }),
            maybe_mapped: AtomicBool::new(true),
            poisoned: AtomicBool::new(false),
            map_written: AtomicBool::new(false),
            appends: AtomicU64::new(0),
        })
    }

    /// True while this file is read through a mapping (tests, benchmarks).
    pub fn is_mapped(&self) -> bool {
        self.map.read().held.is_some()
    }

    fn set_end(&self, h: &mut DataHeader, end: u64) {
        h.data_end = end;
        self.data_end.store(end, Ordering::Release);
    }

    /// Decides again, under a new settings generation, whether to map and how much.
    fn refresh(&self, generation: u64) {
        let mut st = self.map.write();
        if st.generation == generation {
            return;
        }
        st.generation = generation;
        let want =
            self.settings.enabled() && !self.poisoned.load(Ordering::Acquire) && self.io.can_map();
        let end = self.data_end.load(Ordering::Acquire);
        let keep = want
            && st.held.as_ref().is_some_and(|h| h.map.len() as u64 >= end)
            && self.settings.mapped() <= self.settings.limit();
        if keep {
            return;
        }
        let old = st.held.take();
        if want {
            drop(old); // give its budget back before asking for the new one
            st.held = self.new_mapping(end, 0);
        } else {
            drop(old);
        }
        self.maybe_mapped
            .store(st.held.is_some() || want, Ordering::Release);
    }

    /// Maps the file for `need` bytes of data (and room to grow, by the policy), within
    /// the budget; None when it does not fit (the file is then read with pread). A
    /// remap passes the `current` mapping's length, whose share of the budget the new
    /// mapping takes over (only the growth is reserved here).
    fn new_mapping(&self, need: u64, current: u64) -> Option<Held> {
        let page = mmap::page_size() as u64;
        let target = match self.settings.growth {
            MmapGrowth::EveryAppends(_) => need,
            MmapGrowth::Geometric { min, max_step } => {
                round_up(need + current.clamp(min, max_step.max(min)), page)
            }
        };
        let reserve = |len: u64| self.settings.reserve(len.saturating_sub(current));
        let len = if reserve(target) {
            target
        } else if target > need && reserve(need) {
            need
        } else {
            self.settings.fallbacks.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        let reserved = len.saturating_sub(current);
        let held = match usize::try_from(len)
            .map_err(io::Error::other)
            .and_then(|l| {
                self.io
                    .map(l)
                    .unwrap_or_else(|| Err(io::Error::other("not mappable")))
            }) {
            Ok(map) => Held {
                map,
                settings: self.settings.clone(),
                accounted: reserved,
            },
            Err(_) => {
                self.settings.release(reserved);
                self.settings.fallbacks.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        };
        // Rows are read one at a time in index order, i.e. at random places: readahead
        // on a page miss would read (and evict) pages around the record that the next
        // lookup is unlikely to want. Scans do not use the mapping (see `scan`), so
        // nothing here wants sequential readahead. A failed hint changes nothing.
        let _ = held.map.advise(Advice::Random);
        self.settings.remaps.fetch_add(1, Ordering::Relaxed);
        Some(held)
    }

    /// Runs `op` on the mapping when mmap is on and the mapping covers `[off, off+n)`
    /// inside the data (never past the data end: appends go through pwrite). None: use
    /// the file.
    fn with_map<R>(
        &self,
        off: u64,
        n: usize,
        op: impl FnOnce(&Mapping) -> std::result::Result<R, MapFault>,
    ) -> Option<std::result::Result<R, MapFault>> {
        if !self.maybe_mapped.load(Ordering::Acquire) && !self.settings.enabled() {
            return None;
        }
        let end = off.checked_add(n as u64)?;
        if end > self.data_end.load(Ordering::Acquire) {
            return None;
        }
        let generation = self.settings.generation.load(Ordering::Acquire);
        let mut st = self.map.read();
        if st.generation != generation {
            drop(st);
            self.refresh(generation);
            st = self.map.read();
        }
        let held = st.held.as_ref()?;
        if end > held.map.len() as u64 {
            return None;
        }
        Some(op(&held.map))
    }

    /// A copy through the mapping saw a fault. One in our own mapping means the file is
    /// shorter than when we mapped it: drop the mapping for good (until the file is
    /// rewritten); the caller then asks the file, which answers with the truth.
    fn on_fault(&self, f: MapFault) {
        if f.own {
            self.poisoned.store(true, Ordering::Release);
            let old = self.map.write().held.take();
            drop(old);
        }
    }

    /// Reads `buf.len()` bytes at `off`: a memory copy from the mapping when there is
    /// one covering them, else pread.
    fn read_bytes(&self, buf: &mut [u8], off: u64) -> io::Result<()> {
        match self.with_map(off, buf.len(), |m| m.read(buf, off as usize)) {
            Some(Ok(())) => Ok(()),
            Some(Err(f)) => {
                self.on_fault(f);
                self.io
                    .read_at(buf, off)
                    .map_err(|e| self.truncated(e, off))
            }
            None => self.io.read_at(buf, off),
        }
    }

    fn truncated(&self, e: io::Error, off: u64) -> io::Error {
        if e.kind() != io::ErrorKind::UnexpectedEof {
            return e;
        }
        let len = self.io.len().unwrap_or(0);
        bad(format!(
            "data file is {len} bytes but data ends at {} (truncated by another process?); \
             reading at {off}",
            self.data_end.load(Ordering::Acquire)
        ))
    }

    /// Writes `data` at `off`: into the mapping for bytes inside the data (in-place
    /// updates), with pwrite for appends and when unmapped.
    fn write_bytes(&self, data: &[u8], off: u64) -> io::Result<()> {
        match self.with_map(off, data.len(), |m| m.write(data, off as usize)) {
            Some(Ok(())) => {
                self.map_written.store(true, Ordering::Relaxed);
                Ok(())
            }
            Some(Err(f)) => {
                // The bytes may have landed in a zero page instead of the file. Write
                // them through the file, but only where the file still has them: a
                // pwrite past a truncation would silently grow it back with a hole.
                self.on_fault(f);
                let len = self.io.len()?;
                if off + data.len() as u64 > len {
                    return Err(self.truncated(io::ErrorKind::UnexpectedEof.into(), off));
                }
                self.io.write_at(data, off)
            }
            None => self.io.write_at(data, off),
        }
    }

    /// After an append moved the data end to `end`: grow the mapping when the policy
    /// says so. Called by writers (under the header mutex).
    fn grew(&self, end: u64) {
        if !self.maybe_mapped.load(Ordering::Acquire) {
            return;
        }
        let current = {
            let st = self.map.read();
            match &st.held {
                Some(h) => h.map.len() as u64,
                None => return,
            }
        };
        match self.settings.growth {
            MmapGrowth::EveryAppends(n) => {
                if self.appends.fetch_add(1, Ordering::Relaxed) + 1 < n as u64 {
                    return;
                }
                self.appends.store(0, Ordering::Relaxed);
            }
            MmapGrowth::Geometric { .. } => {
                if end <= current {
                    return;
                }
            }
        }
        // Build the new mapping outside the lock; readers keep using the old one until
        // the swap, which waits for copies in flight.
        let Some(new) = self.new_mapping(end, current) else {
            // Over the budget: pread from now on (until the settings change).
            let old = self.map.write().held.take();
            drop(old);
            return;
        };
        let mut new = new;
        let old = {
            let mut st = self.map.write();
            match st.held.as_mut() {
                Some(old) if old.map.len() as u64 == current => {
                    // The new mapping takes over the old one's share of the budget.
                    new.accounted += std::mem::take(&mut old.accounted);
                    st.held.replace(new)
                }
                // Unmapped or replaced meanwhile (settings changed, fault): keep that;
                // `new` gives back only what it reserved.
                _ => Some(new),
            }
        };
        drop(old); // munmap outside the lock
    }

    /// Forgets the mapping and decides afresh at the next access (the file was
    /// rewritten: TRUNCATE, repair).
    fn remap_afresh(&self) {
        self.poisoned.store(false, Ordering::Release);
        let old = {
            let mut st = self.map.write();
            st.generation = 0;
            st.held.take()
        };
        self.maybe_mapped.store(true, Ordering::Release);
        drop(old);
    }

    /// Marks the file as modified (synced) before its first change since the last flush.
    fn ensure_dirty(&self, h: &mut DataHeader) -> io::Result<()> {
        if h.state == STATE_CLEAN {
            h.state = STATE_DIRTY;
            h.write(self.io.as_ref())?;
            self.io.sync_data()?;
        }
        Ok(())
    }

    pub fn mark_clean(&self) -> io::Result<()> {
        let mut h = self.header.lock();
        if self.map_written.swap(false, Ordering::AcqRel) {
            // Linux's fsync covers pages dirtied through a shared mapping; msync says
            // so explicitly and is what POSIX asks for.
            let st = self.map.read();
            if let Some(held) = &st.held {
                held.map.sync(h.data_end as usize)?;
            }
        }
        h.state = STATE_CLEAN;
        h.write(self.io.as_ref())?;
        self.io.sync_data()
    }

    /// Record header at `id`: (flag, capacity, length).
    fn record_header(&self, id: RowId, data_end: u64) -> io::Result<(u8, usize, usize)> {
        if id < DATA_HEADER_SIZE || id + REC_HEADER as u64 > data_end {
            return Err(bad(format!("row id {id} outside the data file")));
        }
        let mut b = [0u8; REC_HEADER];
        self.read_bytes(&mut b, id)?;
        let (cap, len) = (
            get_u32(&b, REC_CAPACITY) as usize,
            get_u32(&b, REC_LENGTH) as usize,
        );
        if len > cap || id + (REC_HEADER + cap) as u64 > data_end {
            return Err(bad(format!("record at {id} overruns the data file")));
        }
        Ok((b[REC_FLAG], cap, len))
    }

    fn write_record(&self, id: RowId, cap: usize, payload: &[u8]) -> io::Result<()> {
        let mut b = Vec::with_capacity(REC_HEADER + cap);
        b.push(REC_LIVE);
        b.extend_from_slice(&(cap as u32).to_le_bytes());
        b.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        b.extend_from_slice(payload);
        b.resize(REC_HEADER + cap, 0);
        self.write_bytes(&b, id)
    }

    /// Reads a row (one pread or one memory copy for fixed-length records); None when
    /// it is deleted. Takes no lock but the mapping's read lock (shared).
    pub fn read_row(
        &self,
        def: &TableDef,
        id: RowId,
        buf: &mut Vec<u8>,
    ) -> Result<Option<Vec<Value>>> {
        let fixed = self.fixed;
        let data_end = self.data_end.load(Ordering::Acquire);
        let corrupt = |d: String| Error::corrupt("", d);
        let read_err = |e: io::Error| match e.kind() {
            io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => corrupt(e.to_string()),
            _ => Error::io("reading a row", e),
        };
        let (flag, len) = if fixed > 0 {
            let total = REC_HEADER + fixed;
            if id < DATA_HEADER_SIZE || id + total as u64 > data_end {
                return Err(corrupt(format!("row id {id} outside the data file")));
            }
            buf.resize(total, 0);
            self.read_bytes(buf, id).map_err(read_err)?;
            (buf[REC_FLAG], get_u32(buf, REC_LENGTH) as usize)
        } else {
            let (flag, _cap, len) = self.record_header(id, data_end).map_err(read_err)?;
            buf.resize(REC_HEADER + len, 0);
            self.read_bytes(&mut buf[REC_HEADER..], id + REC_HEADER as u64)
                .map_err(read_err)?;
            (flag, len)
        };
        if flag != REC_LIVE {
            return Ok(None);
        }
        let payload = buf
            .get(REC_HEADER..REC_HEADER + len)
            .ok_or_else(|| corrupt(format!("record at {id} has a bad length")))?;
        decode_row(def, payload)
            .map(Some)
            .ok_or_else(|| corrupt(format!("row at {id} does not decode")))
    }

    pub fn insert(&self, def: &TableDef, row: &[Value]) -> io::Result<RowId> {
        let mut payload = Vec::with_capacity(128);
        encode_row(def, row, &mut payload);
        let mut h = self.header.lock();
        self.ensure_dirty(&mut h)?;
        self.place(&mut h, &payload)
    }

    /// Writes a payload into a reused deleted record or at the end; returns its id.
    fn place(&self, h: &mut DataHeader, payload: &[u8]) -> io::Result<RowId> {
        let fixed = self.fixed;
        if h.deleted_head != 0 {
            let id = h.deleted_head;
            let (flag, cap, _) = self.record_header(id, h.data_end)?;
            if flag != REC_DELETED {
                return Err(bad(format!("deleted chain points at live record {id}")));
            }
            if cap >= payload.len() {
                let mut next = [0u8; 8];
                self.read_bytes(&mut next, id + REC_HEADER as u64)?;
                h.deleted_head = u64::from_le_bytes(next);
                self.write_record(id, cap, payload)?;
                return Ok(id);
            }
        }
        let cap = if fixed > 0 {
            fixed
        } else {
            payload.len().max(MIN_CAPACITY)
        };
        let id = h.data_end;
        // At the data end: `write_bytes` sends it through pwrite.
        self.write_record(id, cap, payload)?;
        let end = h.data_end + (REC_HEADER + cap) as u64;
        self.set_end(h, end);
        self.grew(end);
        Ok(id)
    }

    /// Rewrites a row in place when it fits, else moves it; returns its id afterwards.
    pub fn update(&self, def: &TableDef, id: RowId, row: &[Value]) -> io::Result<RowId> {
        let mut payload = Vec::with_capacity(128);
        encode_row(def, row, &mut payload);
        let mut h = self.header.lock();
        self.ensure_dirty(&mut h)?;
        let (flag, cap, _) = self.record_header(id, h.data_end)?;
        if flag != REC_LIVE {
            return Err(bad(format!("update of deleted row {id}")));
        }
        if payload.len() <= cap {
            self.write_record(id, cap, &payload)?;
            return Ok(id);
        }
        // Place the new copy before freeing the old: if the append fails (a full
        // disk), the row is still where it was.
        let moved = self.place(&mut h, &payload)?;
        self.free(&mut h, id)?;
        Ok(moved)
    }

    fn free(&self, h: &mut DataHeader, id: RowId) -> io::Result<()> {
        self.write_bytes(&[REC_DELETED], id)?;
        self.write_bytes(&h.deleted_head.to_le_bytes(), id + REC_HEADER as u64)?;
        h.deleted_head = id;
        Ok(())
    }

    pub fn delete(&self, id: RowId) -> io::Result<()> {
        let mut h = self.header.lock();
        self.ensure_dirty(&mut h)?;
        let (flag, _, _) = self.record_header(id, h.data_end)?;
        if flag != REC_LIVE {
            return Err(bad(format!("delete of deleted row {id}")));
        }
        self.free(&mut h, id)
    }

    /// Empties the file (TRUNCATE).
    pub fn reset(&self, def: &TableDef) -> io::Result<()> {
        let mut h = self.header.lock();
        *h = DataHeader::new(def);
        h.state = STATE_DIRTY;
        self.data_end.store(h.data_end, Ordering::Release);
        self.remap_afresh();
        self.map_written.store(false, Ordering::Relaxed);
        self.io.set_len(DATA_HEADER_SIZE)?;
        h.write(self.io.as_ref())?;
        self.io.sync_data()
    }

    /// After an unclean close the header's end of data and deleted chain may be stale:
    /// walk the records to find the real end (dropping a torn record at the tail) and
    /// chain every deleted record again. Uses the file only (pread/pwrite).
    pub fn recover(&self) -> io::Result<()> {
        let mut h = self.header.lock();
        self.remap_afresh();
        let len = self.io.len()?;
        let mut pos = DATA_HEADER_SIZE;
        let mut deleted = Vec::new();
        let mut b = [0u8; REC_HEADER];
        while pos + REC_HEADER as u64 <= len {
            self.io.read_at(&mut b, pos)?;
            let (flag, cap, rlen) = (
                b[REC_FLAG],
                get_u32(&b, REC_CAPACITY) as usize,
                get_u32(&b, REC_LENGTH) as usize,
            );
            let total = (REC_HEADER + cap) as u64;
            let fixed_ok = self.fixed == 0 || cap == self.fixed;
            if (flag != REC_LIVE && flag != REC_DELETED)
                || rlen > cap
                || cap < MIN_CAPACITY
                || !fixed_ok
                || pos + total > len
            {
                break;
            }
            if flag == REC_DELETED {
                deleted.push(pos);
            }
            pos += total;
        }
        self.io.set_len(pos)?;
        self.set_end(&mut h, pos);
        h.deleted_head = 0;
        for id in deleted {
            self.io
                .write_at(&h.deleted_head.to_le_bytes(), id + REC_HEADER as u64)?;
            h.deleted_head = id;
        }
        Ok(())
    }

    /// Calls `f` for every live row in file order, reading 64 KiB at a time.
    ///
    /// Scans use pread even with mmap on: one call per 64 KiB costs little next to
    /// decoding the rows, and the file descriptor keeps the kernel's sequential
    /// readahead, which the mapping gives up (it is advised MADV_RANDOM for lookups).
    pub fn scan(&self, def: &TableDef, f: &mut RowFn) -> Result<()> {
        let data_end = self.data_end.load(Ordering::Acquire);
        let corrupt = |d: String| Error::corrupt("", d);
        let mut chunk: Vec<u8> = Vec::new();
        let mut chunk_start = DATA_HEADER_SIZE;
        let mut pos = DATA_HEADER_SIZE;
        while pos < data_end {
            // Make sure the whole record at `pos` is in `chunk`.
            let need_header = (pos - chunk_start) as usize + REC_HEADER;
            if need_header > chunk.len() {
                chunk_start = pos;
                let n = ((data_end - pos) as usize).clamp(REC_HEADER, 64 << 10);
                chunk.resize(n, 0);
                self.io
                    .read_at(&mut chunk, pos)
                    .map_err(|e| corrupt(format!("reading at {pos}: {e}")))?;
            }
            let at = (pos - chunk_start) as usize;
            let flag = chunk[at + REC_FLAG];
            let cap = get_u32(&chunk, at + REC_CAPACITY) as usize;
            let len = get_u32(&chunk, at + REC_LENGTH) as usize;
            let total = REC_HEADER + cap;
            if len > cap
                || pos + total as u64 > data_end
                || (flag != REC_LIVE && flag != REC_DELETED)
            {
                return Err(corrupt(format!("malformed record at {pos}")));
            }
            if at + total > chunk.len() {
                chunk_start = pos;
                chunk.resize(total.max(64 << 10).min((data_end - pos) as usize), 0);
                self.io
                    .read_at(&mut chunk, pos)
                    .map_err(|e| corrupt(format!("reading at {pos}: {e}")))?;
                continue;
            }
            if flag == REC_LIVE {
                let row = decode_row(def, &chunk[at + REC_HEADER..at + REC_HEADER + len])
                    .ok_or_else(|| corrupt(format!("row at {pos} does not decode")))?;
                if f(pos, &row)? == Flow::Stop {
                    return Ok(());
                }
            }
            pos += total as u64;
        }
        Ok(())
    }
}
