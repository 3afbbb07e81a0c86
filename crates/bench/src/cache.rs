//! The OS page cache, for seed 004: dropping a table's files from it between runs
//! (fsync, then `posix_fadvise(POSIX_FADV_DONTNEED)`: only clean pages can be dropped)
//! and telling whether a directory is on tmpfs, where there is nothing to drop because
//! the cache is the storage.

use std::path::{Path, PathBuf};

/// The files of table `table` in database `db` under `datadir`: every `<table>.<ext>`
/// (heap's `.hdat`/`.hidx`, btree's `.ibd`, MariaDB's `.MYD`/`.MYI`/`.ibd`).
pub fn table_files(datadir: &Path, db: &str, table: &str) -> Result<Vec<PathBuf>, String> {
    let dir = datadir.join(db);
    let prefix = format!("{table}.");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            files.push(entry.path());
        }
    }
    if files.is_empty() {
        return Err(format!(
            "no files of table {db}.{table} under {}",
            dir.display()
        ));
    }
    Ok(files)
}

/// Writes back and drops the cached pages of `files`.
pub fn drop_files(files: &[PathBuf]) -> Result<(), String> {
    use std::os::unix::io::AsRawFd;
    for f in files {
        let file = std::fs::File::open(f).map_err(|e| format!("{}: {e}", f.display()))?;
        // Dirty pages are not dropped: write them first (a read-only descriptor may
        // fsync on Linux).
        file.sync_all()
            .map_err(|e| format!("fsync {}: {e}", f.display()))?;
        // SAFETY: the descriptor is open for the duration of the call; the advice
        // only affects the kernel's cache of this file.
        let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(format!(
                "posix_fadvise(DONTNEED) on {}: {}",
                f.display(),
                std::io::Error::from_raw_os_error(rc)
            ));
        }
    }
    Ok(())
}

/// Whether `dir` is on a tmpfs (or ramfs) file system.
pub fn is_tmpfs(dir: &Path) -> Result<bool, String> {
    use std::os::unix::ffi::OsStrExt;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| format!("{}: path contains a NUL byte", dir.display()))?;
    // SAFETY: statfs writes into the zeroed struct we pass; the path is a valid C
    // string for the duration of the call.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(format!(
            "statfs {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        ));
    }
    #[allow(clippy::unnecessary_cast)]
    let kind = st.f_type as i64;
    Ok(kind == TMPFS_MAGIC || kind == RAMFS_MAGIC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_drops_table_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("d/t.hdat"), b"x").unwrap();
        std::fs::write(dir.path().join("d/t.hidx"), b"y").unwrap();
        std::fs::write(dir.path().join("d/t2.hdat"), b"z").unwrap();
        let files = table_files(dir.path(), "d", "t").unwrap();
        assert_eq!(files.len(), 2);
        drop_files(&files).unwrap();
        assert!(table_files(dir.path(), "d", "u").is_err());
    }

    #[test]
    fn shm_is_tmpfs_when_present() {
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            assert!(is_tmpfs(shm).unwrap());
        }
    }
}
