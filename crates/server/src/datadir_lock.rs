//! One server per data directory: an exclusive `flock` on `<datadir>/strata.lock`, held
//! for the life of the process, as InnoDB locks its system tablespace ("Unable to lock
//! ./ibdata1, error: 11").
//!
//! Two servers on one directory would each keep their own buffer pool, redo log tail and
//! catalog in memory and overwrite each other's pages: silent corruption. A second
//! server now stops at startup, naming the process that holds the directory. The lock
//! is the kernel's, so it goes with the process however it ends (a SIGKILL included)
//! and a stale file from a crash never blocks a restart. The file holds the holder's
//! pid, for the message only.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

const LOCK_FILE: &str = "strata.lock";

/// Takes the data directory's lock (creating the directory if needed); the returned file
/// must live as long as the server.
pub fn acquire(datadir: &Path) -> Result<File, String> {
    std::fs::create_dir_all(datadir)
        .map_err(|e| format!("creating the data directory {}: {e}", datadir.display()))?;
    let path = datadir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("opening {}: {e}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns; no memory is involved.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let who = if holder.is_empty() {
                "another process".to_string()
            } else {
                format!("the process with pid {holder}")
            };
            return Err(format!(
                "the data directory {} is in use by {who} (it holds {}); stop that server \
                 first, or start this one with another --datadir",
                datadir.display(),
                path.display()
            ));
        }
        return Err(format!("locking {}: {err}", path.display()));
    }
    let pid = std::process::id().to_string();
    let written = file
        .set_len(0)
        .and_then(|_| file.rewind())
        .and_then(|_| file.write_all(pid.as_bytes()));
    written.map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_the_lock_goes_with_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(dir.path()).unwrap();
        // flock locks belong to the open file description: a second open in the same
        // process conflicts like another process's would.
        let err = acquire(dir.path()).unwrap_err();
        assert!(err.contains("is in use by the process with pid"), "{err}");
        assert!(err.contains(&std::process::id().to_string()), "{err}");
        drop(first);
        let again = acquire(dir.path()).unwrap();
        drop(again);
    }
}
