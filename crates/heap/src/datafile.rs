//! The data file: a header, then records (live or deleted) one after another. Rows are
//! read and written with positioned reads and writes through [`FileIo`]; the engine
//! caches none of them (the OS page cache does, as for MyISAM). Every access to row
//! bytes goes through this module, so another access method (mmap) can be added here.

use crate::format::*;
use std::io;
use std::sync::Arc;
use strata_engine::{Flow, RowFn, RowId};
use strata_storage::io::FileIo;
use strata_storage::sync::Mutex;
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

pub struct DataFile {
    io: Arc<dyn FileIo>,
    pub header: Mutex<DataHeader>,
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

impl DataFile {
    pub fn open(io: Arc<dyn FileIo>, def: &TableDef) -> std::result::Result<DataFile, String> {
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
            header: Mutex::new(header),
        })
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
        self.io.read_at(&mut b, id)?;
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
        self.io.write_at(&b, id)
    }

    /// Reads a row (one pread for fixed-length records); None when it is deleted.
    pub fn read_row(
        &self,
        def: &TableDef,
        id: RowId,
        buf: &mut Vec<u8>,
    ) -> Result<Option<Vec<Value>>> {
        let (fixed, data_end) = {
            let h = self.header.lock();
            (h.fixed_capacity as usize, h.data_end)
        };
        let corrupt = |d: String| Error::corrupt("", d);
        let (flag, len) = if fixed > 0 {
            let total = REC_HEADER + fixed;
            if id < DATA_HEADER_SIZE || id + total as u64 > data_end {
                return Err(corrupt(format!("row id {id} outside the data file")));
            }
            buf.resize(total, 0);
            self.io
                .read_at(buf, id)
                .map_err(|e| Error::io("reading a row", e))?;
            (buf[REC_FLAG], get_u32(buf, REC_LENGTH) as usize)
        } else {
            let (flag, _cap, len) = self
                .record_header(id, data_end)
                .map_err(|e| corrupt(e.to_string()))?;
            buf.resize(REC_HEADER + len, 0);
            self.io
                .read_at(&mut buf[REC_HEADER..], id + REC_HEADER as u64)
                .map_err(|e| Error::io("reading a row", e))?;
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
        let fixed = h.fixed_capacity as usize;
        if h.deleted_head != 0 {
            let id = h.deleted_head;
            let (flag, cap, _) = self.record_header(id, h.data_end)?;
            if flag != REC_DELETED {
                return Err(bad(format!("deleted chain points at live record {id}")));
            }
            if cap >= payload.len() {
                let mut next = [0u8; 8];
                self.io.read_at(&mut next, id + REC_HEADER as u64)?;
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
        self.write_record(id, cap, payload)?;
        h.data_end += (REC_HEADER + cap) as u64;
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
        self.free(&mut h, id)?;
        self.place(&mut h, &payload)
    }

    fn free(&self, h: &mut DataHeader, id: RowId) -> io::Result<()> {
        let mut b = [0u8; 1];
        b[0] = REC_DELETED;
        self.io.write_at(&b, id)?;
        self.io
            .write_at(&h.deleted_head.to_le_bytes(), id + REC_HEADER as u64)?;
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
        self.io.set_len(DATA_HEADER_SIZE)?;
        h.write(self.io.as_ref())?;
        self.io.sync_data()
    }

    /// After an unclean close the header's end of data and deleted chain may be stale:
    /// walk the records to find the real end (dropping a torn record at the tail) and
    /// chain every deleted record again.
    pub fn recover(&self) -> io::Result<()> {
        let mut h = self.header.lock();
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
            let fixed_ok = h.fixed_capacity == 0 || cap == h.fixed_capacity as usize;
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
        h.data_end = pos;
        h.deleted_head = 0;
        for id in deleted {
            self.io
                .write_at(&h.deleted_head.to_le_bytes(), id + REC_HEADER as u64)?;
            h.deleted_head = id;
        }
        Ok(())
    }

    /// Calls `f` for every live row in file order, reading 64 KiB at a time.
    pub fn scan(&self, def: &TableDef, f: &mut RowFn) -> Result<()> {
        let data_end = self.header.lock().data_end;
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
