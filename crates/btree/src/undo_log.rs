//! The undo log `ib_undo_log` (format: docs/format/undo.md, part 2): the undo of
//! transactions open at a checkpoint, appended and fsynced before the redo log's
//! checkpoint moves past their records, so the redo log never needs room in proportion
//! to what open transactions have changed. The checkpoint (`lib.rs`) writes it; crash
//! recovery (`recovery.rs`) reads it. Append-only frames with a CRC each; emptied (with
//! a new epoch) once no open transaction has undo in it.

use std::io;
use std::sync::Arc;
use strata_storage::io::FileIo;
use strata_storage::sync::Mutex;

/// The undo log's name in the data directory.
pub const UNDO_LOG_FILE: &str = "ib_undo_log";

const MAGIC: u32 = 0x4C55_5453;
const HEADER: usize = 24;
/// The largest payload a frame may carry (larger batches are split).
pub const MAX_PAYLOAD: usize = 16 << 20;
pub const KIND_UNDO: u8 = 1;
pub const KIND_SNAPSHOT: u8 = 2;

/// One frame read back.
pub struct Frame {
    pub kind: u8,
    pub payload: Vec<u8>,
}

struct State {
    /// Where the next frame goes (the end of the valid frames).
    end: u64,
    epoch: u64,
}

pub struct UndoLog {
    io: Arc<dyn FileIo>,
    state: Mutex<State>,
}

fn frame(kind: u8, epoch: u64, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(HEADER + payload.len());
    f.extend_from_slice(&MAGIC.to_le_bytes());
    f.push(kind);
    f.extend_from_slice(&[0, 0, 0]);
    f.extend_from_slice(&epoch.to_le_bytes());
    f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&f[..20]), payload);
    f.extend_from_slice(&crc.to_le_bytes());
    f.extend_from_slice(payload);
    f
}

/// The valid frames of `io` from offset 0, and where they end.
fn scan(io: &dyn FileIo) -> io::Result<(Vec<Frame>, u64, Option<u64>)> {
    let len = io.len()?;
    let mut at = 0u64;
    let mut out = Vec::new();
    let mut epoch = None;
    while at + HEADER as u64 <= len {
        let mut h = [0u8; HEADER];
        io.read_at(&mut h, at)?;
        let u32_at = |o: usize| u32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
        let mut e8 = [0u8; 8];
        e8.copy_from_slice(&h[8..16]);
        let e = u64::from_le_bytes(e8);
        let n = u32_at(16) as usize;
        if u32_at(0) != MAGIC
            || n > MAX_PAYLOAD
            || at + (HEADER + n) as u64 > len
            || epoch.is_some_and(|x| x != e)
        {
            break;
        }
        let mut payload = vec![0u8; n];
        io.read_at(&mut payload, at + HEADER as u64)?;
        if crc32c::crc32c_append(crc32c::crc32c(&h[..20]), &payload) != u32_at(20) {
            break;
        }
        epoch = Some(e);
        out.push(Frame {
            kind: h[4],
            payload,
        });
        at += (HEADER + n) as u64;
    }
    Ok((out, at, epoch))
}

/// A snapshot frame's payload: the checkpoint LSN and the open transactions.
pub fn snapshot_payload(lsn: u64, trx: &[u64]) -> Vec<u8> {
    let mut p = Vec::with_capacity(12 + 8 * trx.len());
    p.extend_from_slice(&lsn.to_le_bytes());
    p.extend_from_slice(&(trx.len() as u32).to_le_bytes());
    for t in trx {
        p.extend_from_slice(&t.to_le_bytes());
    }
    p
}

/// Reads a snapshot payload back; None if malformed.
pub fn parse_snapshot(p: &[u8]) -> Option<(u64, Vec<u64>)> {
    let lsn = u64::from_le_bytes(p.get(0..8)?.try_into().ok()?);
    let n = u32::from_le_bytes(p.get(8..12)?.try_into().ok()?) as usize;
    if p.len() != 12 + 8 * n {
        return None;
    }
    let trx = (0..n)
        .map(|i| {
            let at = 12 + 8 * i;
            u64::from_le_bytes(p[at..at + 8].try_into().unwrap_or_default())
        })
        .collect();
    Some((lsn, trx))
}

/// What recovery needs from the file for checkpoint `lsn`: the logical records (undo
/// and prepare, `recovery::parse_logical`'s format) before the last snapshot for `lsn`,
/// and the transactions it names. None when no snapshot names `lsn`.
pub fn for_checkpoint(frames: &[Frame], lsn: u64) -> Option<(Vec<&[u8]>, Vec<u64>)> {
    let (at, trx) = frames.iter().enumerate().rev().find_map(|(i, f)| {
        if f.kind != KIND_SNAPSHOT {
            return None;
        }
        match parse_snapshot(&f.payload) {
            Some((l, trx)) if l == lsn => Some((i, trx)),
            _ => None,
        }
    })?;
    let records = frames[..at]
        .iter()
        .filter(|f| f.kind == KIND_UNDO)
        .map(|f| f.payload.as_slice())
        .collect();
    Some((records, trx))
}

impl UndoLog {
    /// Opens the file and finds the end of its valid frames; returns them for recovery.
    pub fn open(io: Arc<dyn FileIo>) -> io::Result<(UndoLog, Vec<Frame>)> {
        let (frames, end, epoch) = scan(io.as_ref())?;
        let log = UndoLog {
            io,
            state: Mutex::new(State {
                end,
                epoch: epoch.unwrap_or(1),
            }),
        };
        Ok((log, frames))
    }

    /// Whether anything has been appended since the file was last emptied.
    pub fn is_empty(&self) -> bool {
        self.state.lock().end == 0
    }

    /// Appends frames (not durable until [`UndoLog::sync`]). On a failed write the end
    /// stays where it was: the next append overwrites the partial frame.
    pub fn append(&self, kind: u8, payload: &[u8]) -> io::Result<()> {
        let mut s = self.state.lock();
        let f = frame(kind, s.epoch, payload);
        self.io.write_at(&f, s.end)?;
        s.end += f.len() as u64;
        Ok(())
    }

    pub fn sync(&self) -> io::Result<()> {
        self.io.sync_data()
    }

    /// Empties the file and starts epoch `epoch` (larger than every earlier one).
    pub fn truncate(&self, epoch: u64) -> io::Result<()> {
        let mut s = self.state.lock();
        self.io.set_len(0)?;
        self.io.sync_data()?;
        s.end = 0;
        s.epoch = epoch.max(s.epoch + 1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_storage::io::MemFile;

    fn reopen(b: Vec<u8>) -> (UndoLog, Vec<Frame>) {
        UndoLog::open(Arc::new(MemFile::from_bytes(b))).unwrap()
    }

    #[test]
    fn frames_round_trip_and_the_last_snapshot_for_a_checkpoint_wins() {
        let f = Arc::new(MemFile::new());
        let (log, frames) = UndoLog::open(f.clone()).unwrap();
        assert!(frames.is_empty() && log.is_empty());
        log.append(KIND_UNDO, b"aaa").unwrap();
        log.append(KIND_SNAPSHOT, &snapshot_payload(100, &[7]))
            .unwrap();
        log.append(KIND_UNDO, b"bb").unwrap();
        log.append(KIND_SNAPSHOT, &snapshot_payload(100, &[7, 8]))
            .unwrap();
        log.append(KIND_SNAPSHOT, &snapshot_payload(200, &[9]))
            .unwrap();
        log.sync().unwrap();
        let (_, frames) = reopen(f.crash_image());
        assert_eq!(frames.len(), 5);
        let (recs, trx) = for_checkpoint(&frames, 100).unwrap();
        assert_eq!(trx, vec![7, 8]);
        assert_eq!(recs, vec![&b"aaa"[..], &b"bb"[..]]);
        assert!(for_checkpoint(&frames, 150).is_none());
    }

    /// What was appended but not synced is not in the crash image; a torn frame (any
    /// byte of it wrong, or cut short) ends the read, and appends go on after the last
    /// good frame.
    #[test]
    fn torn_and_unsynced_tails_are_ignored() {
        let f = Arc::new(MemFile::new());
        let (log, _) = UndoLog::open(f.clone()).unwrap();
        log.append(KIND_UNDO, b"one").unwrap();
        log.append(KIND_SNAPSHOT, &snapshot_payload(5, &[1]))
            .unwrap();
        log.sync().unwrap();
        log.append(KIND_UNDO, b"two").unwrap();
        assert_eq!(reopen(f.crash_image()).1.len(), 2);
        let full = f.contents();
        assert_eq!(reopen(full.clone()).1.len(), 3);
        for cut in 1..HEADER + 3 {
            assert_eq!(reopen(full[..full.len() - cut].to_vec()).1.len(), 2);
        }
        for i in full.len() - (HEADER + 3)..full.len() {
            let mut b = full.clone();
            b[i] ^= 0x40;
            assert_eq!(reopen(b).1.len(), 2, "byte {i} flipped");
        }
        let mut b = full.clone();
        b.truncate(full.len() - 2);
        let (log2, frames) = reopen(b);
        assert_eq!(frames.len(), 2);
        log2.append(KIND_UNDO, b"xyz").unwrap();
    }

    /// After emptying, old frames past the new ones (a truncation that did not reach
    /// the disk) belong to another epoch and are not read.
    #[test]
    fn frames_of_an_earlier_epoch_are_not_read_after_new_ones() {
        let f = Arc::new(MemFile::new());
        let (log, _) = UndoLog::open(f.clone()).unwrap();
        log.append(KIND_UNDO, b"old-1").unwrap();
        log.append(KIND_SNAPSHOT, &snapshot_payload(5, &[1]))
            .unwrap();
        log.sync().unwrap();
        let old = f.contents();
        log.truncate(10).unwrap();
        log.append(KIND_UNDO, b"new-1").unwrap();
        // The image a lost truncation would leave: the new frame over the old bytes.
        let mut img = old.clone();
        let new = f.contents();
        img[..new.len()].copy_from_slice(&new);
        let (_, frames) = reopen(img);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].payload, b"new-1");
    }
}
