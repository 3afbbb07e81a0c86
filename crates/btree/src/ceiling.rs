//! The transaction-id ceiling file, `btree-trxid` in the data directory: the id below
//! which every transaction id ever handed out lies, raised ahead of the ids (see
//! `docs/format/btree.md`). It is one 4 KiB block written in place, two slots used
//! alternately, so raising the ceiling never needs a new disk block: a server whose
//! disk is full still starts, and its transactions still get ids. A torn write can
//! damage only the slot being written; the other one still holds the previous value.

use std::io;
use std::path::Path;
use std::sync::Arc;
use strata_storage::io::{FileIo, StdFile};

pub const FILE: &str = "btree-trxid";
const MAGIC: &[u8; 8] = b"STRTRXID";
const BLOCK: u64 = 4096;
/// Each slot starts a 512-byte sector of its own.
const SLOT_OFFSETS: [u64; 2] = [0, 512];
const SLOT_LEN: usize = 28;

pub struct CeilingFile {
    io: Arc<dyn FileIo>,
    /// Sequence number of the newest slot written.
    seq: u64,
}

fn encode(seq: u64, ceiling: u64) -> [u8; SLOT_LEN] {
    let mut b = [0u8; SLOT_LEN];
    b[0..8].copy_from_slice(MAGIC);
    b[8..16].copy_from_slice(&seq.to_le_bytes());
    b[16..24].copy_from_slice(&ceiling.to_le_bytes());
    let crc = crc32c::crc32c(&b[..24]);
    b[24..28].copy_from_slice(&crc.to_le_bytes());
    b
}

/// (sequence, ceiling) of a slot that passes its checks.
fn decode(b: &[u8]) -> Option<(u64, u64)> {
    if b.len() < SLOT_LEN || &b[0..8] != MAGIC {
        return None;
    }
    let crc = u32::from_le_bytes(b[24..28].try_into().ok()?);
    if crc32c::crc32c(&b[..24]) != crc {
        return None;
    }
    let seq = u64::from_le_bytes(b[8..16].try_into().ok()?);
    let ceiling = u64::from_le_bytes(b[16..24].try_into().ok()?);
    Some((seq, ceiling))
}

impl CeilingFile {
    /// Opens the file in `datadir`, creating it (with `initial` as its ceiling) when it
    /// is absent. Returns the file and the ceiling it holds (None when just created).
    pub fn open(datadir: &Path, initial: u64) -> io::Result<(CeilingFile, Option<u64>)> {
        let path = datadir.join(FILE);
        let exists = path.exists();
        let io: Arc<dyn FileIo> = Arc::new(StdFile::open(&path, true)?);
        if !exists || io.len()? < BLOCK {
            io.set_len(BLOCK)?;
            io.reserve(0, BLOCK)?;
            let mut f = CeilingFile { io, seq: 0 };
            f.write(initial)?;
            std::fs::File::open(datadir)?.sync_all()?;
            return Ok((f, None));
        }
        let mut block = vec![0u8; BLOCK as usize];
        io.read_at(&mut block, 0)?;
        let best = SLOT_OFFSETS
            .iter()
            .filter_map(|&at| decode(&block[at as usize..]))
            .max_by_key(|&(seq, _)| seq);
        let Some((seq, ceiling)) = best else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{FILE}: neither slot passes its checksum"),
            ));
        };
        Ok((CeilingFile { io, seq }, Some(ceiling)))
    }

    /// Makes `ceiling` durable in the slot not holding the newest value.
    pub fn write(&mut self, ceiling: u64) -> io::Result<()> {
        let seq = self.seq + 1;
        let at = SLOT_OFFSETS[(seq % 2) as usize];
        self.io.write_at(&encode(seq, ceiling), at)?;
        self.io.sync_data()?;
        self.seq = seq;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn survives_reopen_and_a_torn_newest_slot() {
        let d = tempfile::tempdir().unwrap();
        let (mut f, held) = CeilingFile::open(d.path(), 100).unwrap();
        assert_eq!(held, None);
        f.write(200).unwrap();
        f.write(300).unwrap();
        drop(f);
        let (_, held) = CeilingFile::open(d.path(), 1).unwrap();
        assert_eq!(held, Some(300));
        // Tear the newest slot (seq 3 lives in slot 1): the previous value remains.
        let io = StdFile::open(&d.path().join(FILE), false).unwrap();
        io.write_at(&[0xff; 8], SLOT_OFFSETS[1] + 16).unwrap();
        let (_, held) = CeilingFile::open(d.path(), 1).unwrap();
        assert_eq!(held, Some(200));
    }
}
