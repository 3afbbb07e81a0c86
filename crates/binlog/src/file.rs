//! The binary log's files on disk: names (`binlog.000001`), the index file, and reading
//! events back (startup scan, SHOW BINLOG EVENTS, the replication dump). The layout is
//! docs/format/binlog.md.

use crate::event::{self, Header, CHECKSUM_LEN, HEADER_LEN, MAGIC};
use crate::gtid::GtidSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use strata_types::{Error, Result};

/// Where the files live and what they are called.
#[derive(Clone, Debug)]
pub struct Naming {
    /// The directory of the files and of the index.
    pub dir: PathBuf,
    /// The file-name stem, e.g. `binlog`.
    pub stem: String,
    /// Whether the index lists names as `./name` (a basename relative to the data
    /// directory) or as absolute paths.
    pub relative: bool,
}

impl Naming {
    /// `basename` as `--log-bin` gave it: a bare name or a path relative to the data
    /// directory, or an absolute path.
    pub fn new(datadir: &Path, basename: &str) -> Naming {
        let p = Path::new(basename);
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            datadir.join(p)
        };
        let dir = full
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| datadir.to_path_buf());
        let stem = full
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "binlog".into());
        Naming {
            dir,
            stem,
            relative: !p.is_absolute(),
        }
    }

    pub fn file_name(&self, n: u32) -> String {
        format!("{}.{n:06}", self.stem)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The number of a file name of this log, if it is one.
    pub fn number(&self, name: &str) -> Option<u32> {
        let rest = name.strip_prefix(&self.stem)?.strip_prefix('.')?;
        (rest.len() >= 6 && rest.bytes().all(|b| b.is_ascii_digit()))
            .then(|| rest.parse().ok())
            .flatten()
    }

    pub fn index_path(&self) -> PathBuf {
        self.dir.join(format!("{}.index", self.stem))
    }

    /// The file names the index lists, oldest first (none when there is no index).
    pub fn read_index(&self) -> Result<Vec<String>> {
        let path = self.index_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(path.display(), e)),
        };
        Ok(text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                Path::new(l.trim())
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect())
    }

    /// Rewrites the index whole: a temporary file, fsynced, renamed over it.
    pub fn write_index(&self, names: &[String]) -> Result<()> {
        let path = self.index_path();
        let tmp = self.dir.join(format!("{}.index.tmp", self.stem));
        let mut text = String::new();
        for n in names {
            if self.relative {
                text.push_str("./");
                text.push_str(n);
            } else {
                text.push_str(&self.path(n).display().to_string());
            }
            text.push('\n');
        }
        let io = |e| Error::io(tmp.display(), e);
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(path.display(), e))?;
        sync_dir(&self.dir)
    }
}

/// Makes a directory's entries (a new or renamed file) durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let d = std::fs::File::open(dir).map_err(|e| Error::io(dir.display(), e))?;
    d.sync_all().map_err(|e| Error::io(dir.display(), e))
}

/// One event read back: where it starts and its bytes (header to checksum).
#[derive(Clone, Debug)]
pub struct RawEvent {
    pub pos: u64,
    pub bytes: Vec<u8>,
}

impl RawEvent {
    pub fn header(&self) -> Option<Header> {
        Header::parse(&self.bytes)
    }

    /// The post-header and body, without the checksum.
    pub fn data(&self, crc: bool) -> &[u8] {
        let end = self.bytes.len() - if crc { CHECKSUM_LEN } else { 0 };
        &self.bytes[HEADER_LEN.min(end)..end]
    }
}

/// Reads the events of a file from `from` (4: the first). Stops quietly at the end or
/// at an incomplete last event (a crash's torn tail); an event whose checksum fails is
/// an error. Returns the events and whether the file's checksums are CRC32.
pub fn read_events(path: &Path, from: u64, limit: Option<usize>) -> Result<(Vec<RawEvent>, bool)> {
    let io = |e| Error::io(path.display(), e);
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() < 4 || bytes[..4] != MAGIC {
        return Err(Error::corrupt(
            path.display().to_string(),
            "not a binary log",
        ));
    }
    let mut crc = false;
    let mut out = Vec::new();
    let mut pos = 4usize;
    while pos + HEADER_LEN <= bytes.len() {
        let Some(h) = Header::parse(&bytes[pos..]) else {
            break;
        };
        let size = h.size as usize;
        if size < HEADER_LEN || pos + size > bytes.len() {
            break;
        }
        let ev = &bytes[pos..pos + size];
        if h.type_code == event::FORMAT_DESCRIPTION && size >= HEADER_LEN + 57 + CHECKSUM_LEN {
            crc = ev[size - CHECKSUM_LEN - 1] == 1;
        }
        let checked = crc || h.type_code == event::FORMAT_DESCRIPTION;
        if checked {
            let stored = u32::from_le_bytes(ev[size - 4..].try_into().unwrap_or([0; 4]));
            if event::checksum(&ev[..size - 4]) != stored {
                return Err(Error::corrupt(
                    path.display().to_string(),
                    format!("event at {pos} fails its checksum"),
                ));
            }
        }
        if pos as u64 >= from {
            out.push(RawEvent {
                pos: pos as u64,
                bytes: ev.to_vec(),
            });
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
        }
        pos += size;
    }
    Ok((out, crc))
}

/// What a scan of a file at startup learned.
pub struct Scan {
    /// The PREVIOUS_GTIDS of the file plus every whole transaction's GTID in it.
    pub gtids: GtidSet,
    /// The file's PREVIOUS_GTIDS alone.
    pub previous: GtidSet,
    /// The offset just past the last whole transaction (or the header events).
    pub boundary: u64,
    /// The file's length.
    pub len: u64,
    /// Whether its FORMAT_DESCRIPTION still says "in use" (not closed cleanly).
    pub in_use: bool,
}

/// Scans a file: the GTIDs it holds and where its last whole transaction ends. A
/// transaction is whole once its XID, its COMMIT query, (DDL) its one query or (an XA
/// prepare group) its XA_PREPARE event is there.
pub fn scan(path: &Path) -> Result<Scan> {
    let (events, crc) = read_events(path, 4, None)?;
    let len = std::fs::metadata(path)
        .map_err(|e| Error::io(path.display(), e))?
        .len();
    let mut s = Scan {
        gtids: GtidSet::default(),
        previous: GtidSet::default(),
        boundary: 4,
        len,
        in_use: false,
    };
    let mut pending: Option<([u8; 16], u64)> = None;
    for ev in &events {
        let Some(h) = ev.header() else { break };
        let end = ev.pos + h.size as u64;
        let data = ev.data(crc || h.type_code == event::FORMAT_DESCRIPTION);
        match h.type_code {
            event::FORMAT_DESCRIPTION => {
                s.in_use = h.flags & event::FLAG_IN_USE != 0;
                s.boundary = end;
            }
            event::PREVIOUS_GTIDS => {
                s.previous = crate::gtid::decode(data).unwrap_or_default();
                s.gtids.union(&s.previous);
                s.boundary = end;
            }
            event::GTID if data.len() >= 25 => {
                let uuid: [u8; 16] = data[1..17].try_into().unwrap_or([0; 16]);
                let gno = u64::from_le_bytes(data[17..25].try_into().unwrap_or([0; 8]));
                pending = Some((uuid, gno));
            }
            event::XID | event::XA_PREPARE => {
                if let Some((u, g)) = pending.take() {
                    s.gtids.add(&u, g);
                }
                s.boundary = end;
            }
            event::QUERY => {
                let text = query_text(data);
                // An XA transaction's prepare group opens with `XA START` and goes on
                // past `XA END` to its XA_PREPARE event.
                let opens = text == b"BEGIN"
                    || matches!(
                        crate::event::parse_xa_text(text),
                        Some((crate::event::XaVerb::Start | crate::event::XaVerb::End, _))
                    );
                if !opens {
                    if let Some((u, g)) = pending.take() {
                        s.gtids.add(&u, g);
                    }
                    s.boundary = end;
                }
            }
            event::ROTATE | event::STOP => s.boundary = end,
            _ => {}
        }
    }
    Ok(s)
}

/// The statement text of a QUERY event's data (post-header onward).
pub fn query_text(data: &[u8]) -> &[u8] {
    if data.len() < 13 {
        return &[];
    }
    let db_len = data[8] as usize;
    let status_len = u16::from_le_bytes([data[11], data[12]]) as usize;
    let start = 13 + status_len + db_len + 1;
    data.get(start..).unwrap_or(&[])
}

/// Cuts a crashed file back to its last whole transaction (`boundary`; `u64::MAX`
/// leaves its length) and, when `close`, marks it closed.
pub fn repair(path: &Path, boundary: u64, close: bool) -> Result<()> {
    let io = |e| Error::io(path.display(), e);
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io)?;
    if boundary != u64::MAX {
        f.set_len(boundary).map_err(io)?;
    }
    if close {
        clear_in_use(&f).map_err(io)?;
    }
    f.sync_all().map_err(io)
}

/// Clears LOG_EVENT_BINLOG_IN_USE_F in the file's FORMAT_DESCRIPTION event (its
/// checksum is computed with the flag clear, so it stays right).
pub fn clear_in_use(mut f: &std::fs::File) -> std::io::Result<()> {
    let flags_at = 4 + 17;
    f.seek(SeekFrom::Start(flags_at))?;
    let mut b = [0u8; 2];
    f.read_exact(&mut b)?;
    let flags = u16::from_le_bytes(b) & !event::FLAG_IN_USE;
    f.seek(SeekFrom::Start(flags_at))?;
    f.write_all(&flags.to_le_bytes())?;
    f.seek(SeekFrom::End(0))?;
    Ok(())
}
