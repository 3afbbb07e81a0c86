//! The narrow I/O trait under every file access (positioned reads and writes, length,
//! sync), with the real backend over `std::fs::File` (pread/pwrite) and an in-memory
//! backend for tests that keeps what was written apart from what was made durable, so
//! a test can build the image a power cut would leave.

use crate::sync::Mutex;
use std::io;
use std::os::unix::fs::FileExt;

#[allow(clippy::len_without_is_empty)] // a file length, not a collection
pub trait FileIo: Send + Sync {
    fn len(&self) -> io::Result<u64>;
    /// Fills `buf` from `offset`; reading past the end is `UnexpectedEof`.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()>;
    fn set_len(&self, len: u64) -> io::Result<()>;
    fn sync_data(&self) -> io::Result<()>;
    /// Reserves disk blocks for `offset..offset + len` without changing the length, so
    /// that later writes there cannot fail for want of space: a full disk is then met
    /// where an error can still be returned to a client (a statement growing a table,
    /// creating the redo log), not by a background write of something already
    /// committed. Backends without a disk, and filesystems that cannot reserve, do
    /// nothing.
    fn reserve(&self, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }
    /// The OS file descriptor, for callers that map the file into memory; None for a
    /// backend that has no file (tests), which is then read with `read_at` only.
    fn raw_fd(&self) -> Option<std::os::unix::io::RawFd> {
        None
    }
    /// Whether [`FileIo::map`] can map the file.
    fn can_map(&self) -> bool {
        self.raw_fd().is_some()
    }
    /// Maps the first `len` bytes of the file (None: this backend has no file to map).
    /// The descriptor is used only inside the call, so a backend that closes and
    /// reopens descriptors (the file cache) can keep it open for the call's length.
    fn map(&self, len: usize) -> Option<io::Result<crate::mmap::Mapping>> {
        self.raw_fd().map(|fd| crate::mmap::Mapping::map(fd, len))
    }
}

/// `fallocate(FALLOC_FL_KEEP_SIZE)` for [`FileIo::reserve`]; a filesystem that cannot
/// reserve is not an error (writes stay best effort there).
pub fn fallocate_keep_size(f: &std::fs::File, offset: u64, len: u64) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let fd = std::os::unix::io::AsRawFd::as_raw_fd(f);
        let (Ok(off), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        };
        loop {
            // SAFETY: fallocate only reads its integer arguments; fd is open for the
            // life of `f`.
            let rc = unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, off, len) };
            if rc == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => return Ok(()),
                _ => return Err(e),
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (f, offset, len);
        Ok(())
    }
}

/// Grows a reservation made with [`FileIo::reserve`] from `have` bytes to `want`, or, on
/// a full disk, to exactly `need` (the caller's immediate use, `need <= want`), so the
/// last free blocks still serve. Returns the new reserved length.
pub fn reserve_ahead(io: &dyn FileIo, have: u64, need: u64, want: u64) -> io::Result<u64> {
    match io.reserve(have, want - have) {
        Ok(()) => Ok(want),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
            ) =>
        {
            io.reserve(have, need - have)?;
            Ok(need)
        }
        Err(e) => Err(e),
    }
}

pub struct StdFile(pub std::fs::File);

impl StdFile {
    pub fn open(path: &std::path::Path, create: bool) -> io::Result<StdFile> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)?;
        Ok(StdFile(f))
    }

    /// Creates a file that must not exist yet (AlreadyExists otherwise): a new table's
    /// files never overwrite existing ones, even files no table owns any more.
    pub fn create_new(path: &std::path::Path) -> io::Result<StdFile> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        Ok(StdFile(f))
    }

    /// Opens with O_DIRECT, bypassing the OS page cache (the buffer pool is the cache).
    /// Buffers, offsets and lengths must then be aligned to the device's logical block
    /// size (4096 covers every common one); the buffer pool's pages are. Filesystems
    /// without O_DIRECT (tmpfs) refuse the open with EINVAL.
    pub fn open_direct(path: &std::path::Path, create: bool) -> io::Result<StdFile> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true).create(create).truncate(false);
        #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
        o.custom_flags(libc::O_DIRECT);
        Ok(StdFile(o.open(path)?))
    }
}

impl FileIo for StdFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.0.read_exact_at(buf, offset)
    }
    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        self.0.write_all_at(data, offset)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
    fn reserve(&self, offset: u64, len: u64) -> io::Result<()> {
        fallocate_keep_size(&self.0, offset, len)
    }
    fn raw_fd(&self) -> Option<std::os::unix::io::RawFd> {
        Some(std::os::unix::io::AsRawFd::as_raw_fd(&self.0))
    }
}

/// An in-memory file: `written` is what reads see, `durable` what survived the last
/// `sync_data`. [`MemFile::set_full`] makes writes fail as on a full disk.
#[derive(Default)]
pub struct MemFile {
    written: Mutex<Vec<u8>>,
    durable: Mutex<Vec<u8>>,
    full: std::sync::atomic::AtomicBool,
}

impl MemFile {
    pub fn new() -> MemFile {
        MemFile::default()
    }

    pub fn from_bytes(b: Vec<u8>) -> MemFile {
        MemFile {
            written: Mutex::new(b.clone()),
            durable: Mutex::new(b),
            full: Default::default(),
        }
    }

    /// While `full`, every write fails with `StorageFull` (ENOSPC) and changes nothing.
    pub fn set_full(&self, full: bool) {
        self.full.store(full, std::sync::atomic::Ordering::SeqCst);
    }

    /// What a crash would leave: the bytes as of the last sync.
    pub fn crash_image(&self) -> Vec<u8> {
        self.durable.lock().clone()
    }

    pub fn contents(&self) -> Vec<u8> {
        self.written.lock().clone()
    }
}

impl FileIo for MemFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.written.lock().len() as u64)
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let w = self.written.lock();
        let start = offset as usize;
        let end = start
            .checked_add(buf.len())
            .ok_or(io::ErrorKind::InvalidInput)?;
        if end > w.len() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.copy_from_slice(&w[start..end]);
        Ok(())
    }
    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        if self.full.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(io::ErrorKind::StorageFull.into());
        }
        let mut w = self.written.lock();
        let end = offset as usize + data.len();
        if w.len() < end {
            w.resize(end, 0);
        }
        w[offset as usize..end].copy_from_slice(data);
        Ok(())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.written.lock().resize(len as usize, 0);
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        *self.durable.lock() = self.written.lock().clone();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_file_keeps_written_and_durable_apart() {
        let f = MemFile::new();
        f.write_at(b"abc", 0).unwrap();
        f.sync_data().unwrap();
        f.write_at(b"Z", 1).unwrap();
        assert_eq!(f.contents(), b"aZc");
        assert_eq!(f.crash_image(), b"abc");
        let mut b = [0u8; 4];
        assert_eq!(
            f.read_at(&mut b, 0).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }
}
