//! The events a replica's dump (COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID) receives, in
//! order: a made-up ROTATE naming the file, that file's FORMAT_DESCRIPTION, then every
//! event from the requested position on, into later files as the log rotates, waiting
//! for new ones at the end of the file being written. Reads each file incrementally
//! from its position, so a long-running dump costs what it sends.

use crate::event::{self, Header, HEADER_LEN};
use crate::gtid::GtidSet;
use crate::Binlog;
use std::collections::VecDeque;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;
use std::time::Duration;
use strata_types::{Error, Result};

pub struct Dump {
    log: Arc<Binlog>,
    file: String,
    pos: u64,
    reader: Option<std::fs::File>,
    queued: VecDeque<Vec<u8>>,
    /// COM_BINLOG_DUMP_GTID: transactions the replica has, left out.
    skip: Option<GtidSet>,
    skipping: bool,
}

impl Dump {
    /// A dump from `file` at `pos` (an empty name: the first file; a position below
    /// 4: the file's first event).
    pub fn from_position(log: Arc<Binlog>, file: &str, pos: u64) -> Result<Dump> {
        let file = if file.is_empty() {
            log.files().first().map(|f| f.0.clone()).unwrap_or_default()
        } else {
            file.to_string()
        };
        if !log.has_file(&file) {
            return Err(Error::MasterFatalReadingBinlog(
                "Could not find first log file name in binary log index file".into(),
            ));
        }
        let mut d = Dump {
            log,
            file,
            pos: pos.max(4),
            reader: None,
            queued: VecDeque::new(),
            skip: None,
            skipping: false,
        };
        d.start()?;
        Ok(d)
    }

    /// A dump of every transaction not in `have`: from the oldest file, skipping the
    /// transactions the replica has. Refused (1236) when the replica lacks transactions
    /// that were purged.
    pub fn from_gtids(log: Arc<Binlog>, have: GtidSet) -> Result<Dump> {
        let purged = log.purged_set();
        let mut missing = purged.clone();
        missing.union(&have);
        if missing != have {
            return Err(Error::MasterFatalReadingBinlog(
                "Cannot replicate because the source purged required binary logs".into(),
            ));
        }
        let first = log.files().first().map(|f| f.0.clone()).unwrap_or_default();
        let mut d = Dump::from_position(log, &first, 4)?;
        d.skip = Some(have);
        Ok(d)
    }

    fn path(&self) -> std::path::PathBuf {
        self.log.naming.path(&self.file)
    }

    /// The made-up ROTATE, then the file's FORMAT_DESCRIPTION (with log_pos 0 when the
    /// dump starts past it, so the replica does not take its position from it).
    fn start(&mut self) -> Result<()> {
        let crc = self.log.checksum();
        let mut rotate = Vec::new();
        event::frame(
            &mut rotate,
            &event::rotate(0, &self.file, self.pos, event::FLAG_ARTIFICIAL),
            self.log.server_id(),
            None,
            crc,
        );
        self.queued.push_back(rotate);
        if self.pos > 4 {
            let mut f = self.open()?;
            let fde = read_one(&mut f, 4)?.ok_or_else(|| {
                Error::MasterFatalReadingBinlog("binary log file has no format event".into())
            })?;
            let mut fde = fde;
            fde[13..17].copy_from_slice(&0u32.to_le_bytes());
            let n = fde.len();
            let c = event::checksum(&fde[..n - 4]);
            fde[n - 4..].copy_from_slice(&c.to_le_bytes());
            self.queued.push_back(fde);
        }
        Ok(())
    }

    fn open(&self) -> Result<std::fs::File> {
        let p = self.path();
        std::fs::File::open(&p).map_err(|e| Error::io(p.display(), e))
    }

    /// The next event to send, waiting up to `wait` for one; None when nothing new came
    /// (the caller sends a heartbeat).
    pub fn next(&mut self, wait: Duration) -> Result<Option<Vec<u8>>> {
        loop {
            if let Some(e) = self.queued.pop_front() {
                return Ok(Some(e));
            }
            let seen = self.log.generation();
            if self.reader.is_none() {
                self.reader = Some(self.open()?);
            }
            let got = match self.reader.as_mut() {
                Some(f) => read_one(f, self.pos)?,
                None => None,
            };
            match got {
                Some(ev) => {
                    self.pos += ev.len() as u64;
                    let Some(h) = Header::parse(&ev) else {
                        continue;
                    };
                    if self.filtered(&h, &ev) {
                        continue;
                    }
                    return Ok(Some(ev));
                }
                None => {
                    // The end of this file: move on when it was rotated out, else wait.
                    let (current, _) = self.log.current();
                    if current != self.file {
                        if let Some(next) = self.log.next_file(&self.file) {
                            // As at the dump's start, a made-up ROTATE names the new
                            // file: a file closed by a shutdown ends with STOP, not with
                            // a ROTATE the replica would follow.
                            self.file = next;
                            self.pos = 4;
                            self.reader = None;
                            self.start()?;
                            continue;
                        }
                    }
                    if self.log.wait_for_write(seen, wait) == seen {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Whether the event belongs to a transaction the replica already has.
    fn filtered(&mut self, h: &Header, ev: &[u8]) -> bool {
        let Some(skip) = &self.skip else {
            return false;
        };
        match h.type_code {
            event::GTID => {
                let d = &ev[HEADER_LEN..];
                self.skipping = d.len() >= 25 && {
                    let u: [u8; 16] = d[1..17].try_into().unwrap_or([0; 16]);
                    let g = u64::from_le_bytes(d[17..25].try_into().unwrap_or([0; 8]));
                    skip.contains(&u, g)
                };
                self.skipping
            }
            event::FORMAT_DESCRIPTION | event::ROTATE | event::PREVIOUS_GTIDS | event::STOP => {
                false
            }
            _ => self.skipping,
        }
    }

    /// A heartbeat: the file and position the dump has reached.
    pub fn heartbeat(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let crc = self.log.checksum();
        event::frame(
            &mut out,
            &event::heartbeat(&self.file),
            self.log.server_id(),
            None,
            crc,
        );
        // log_pos: where the dump is in the file, not past this (unwritten) event.
        out[13..17].copy_from_slice(&(self.pos as u32).to_le_bytes());
        if crc {
            let n = out.len();
            let c = event::checksum(&out[..n - 4]);
            out[n - 4..].copy_from_slice(&c.to_le_bytes());
        }
        out
    }
}

/// Reads the whole event at `pos`, or None when none is there yet (the end of the
/// file, or an event still being appended).
fn read_one(f: &mut std::fs::File, pos: u64) -> Result<Option<Vec<u8>>> {
    let io = |e| Error::io("reading the binary log", e);
    f.seek(SeekFrom::Start(pos)).map_err(io)?;
    let mut head = [0u8; HEADER_LEN];
    if !read_full(f, &mut head).map_err(io)? {
        return Ok(None);
    }
    let Some(h) = Header::parse(&head) else {
        return Ok(None);
    };
    let size = h.size as usize;
    if size < HEADER_LEN {
        return Err(Error::MasterFatalReadingBinlog(format!(
            "bad event size {size} at {pos}"
        )));
    }
    let mut ev = vec![0u8; size];
    ev[..HEADER_LEN].copy_from_slice(&head);
    if !read_full(f, &mut ev[HEADER_LEN..]).map_err(io)? {
        return Ok(None);
    }
    Ok(Some(ev))
}

/// Fills `buf`; false when the file ends first.
fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut at = 0;
    while at < buf.len() {
        match f.read(&mut buf[at..])? {
            0 => return Ok(false),
            n => at += n,
        }
    }
    Ok(true)
}
