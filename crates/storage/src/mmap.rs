//! Shared memory maps of files, and the SIGBUS guard that turns a fault inside one into
//! an error instead of a crash.
//!
//! A read through a file mapping whose page lies past the end of the file (another
//! process truncated it after we mapped it) raises SIGBUS, whose default action kills
//! the whole server. pread would just return a short read. So every [`Mapping`] is
//! registered in a fixed table the signal handler can search without locks or
//! allocation; for a fault inside a registered mapping the handler maps an anonymous
//! zero page over the faulting page (`MAP_FIXED`), counts the fault and returns, so the
//! faulting copy finishes (with zeros). [`Mapping::read`] and [`Mapping::write`] look at
//! the fault counters after every copy and report [`MapFault`], and the caller answers
//! from the file instead (pread), which tells the truth: the bytes, or end of file.
//! Faults outside every registered mapping go to the handler that was installed before
//! ours (Rust's stack-overflow reporter, or the default action).
//!
//! This module knows no engine: the heap engine decides what to map and when to remap.

use crate::sync::{AtomicU64, AtomicUsize, Ordering};
use std::cell::UnsafeCell;
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::io::RawFd;
use std::sync::Once;

/// How many mappings may exist at once (one per open mapped data file). A mapping that
/// finds no free slot is refused, and its file is read with pread instead.
const SLOTS: usize = 4096;

/// A slot being filled in: taken, not yet searchable.
const CLAIMED: usize = 1;

/// One registered mapping. `start == 0` means free.
struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    faults: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)] // only used to build the static table
const FREE_SLOT: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    faults: AtomicU64::new(0),
};

static REGISTRY: [Slot; SLOTS] = [FREE_SLOT; SLOTS];

/// Every fault the handler absorbed, in any mapping. A copy that sees this change while
/// it ran cannot trust its bytes even if its own slot's counter did not move (the
/// handler may have attributed the fault to a slot being reused at that instant).
static ALL_FAULTS: AtomicU64 = AtomicU64::new(0);

static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);

/// The action that was installed for SIGBUS before ours, written once by `sigaction`.
struct OldAction(UnsafeCell<MaybeUninit<libc::sigaction>>);
// SAFETY: written once inside `INSTALL` before our handler can run, then only read.
unsafe impl Sync for OldAction {}
static OLD_ACTION: OldAction = OldAction(UnsafeCell::new(MaybeUninit::zeroed()));
static INSTALL: Once = Once::new();

/// The SIGBUS handler. Only async-signal-safe work: atomics, `mmap`, `sigaction`.
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE_SIZE.load(Ordering::Relaxed);
    for slot in REGISTRY.iter() {
        let start = slot.start.load(Ordering::Acquire);
        if start == 0
            || start == CLAIMED
            || addr < start
            || addr - start >= slot.len.load(Ordering::Acquire)
        {
            continue;
        }
        let at = addr & !(page - 1);
        // SAFETY: the page lies inside a live mapping we own (registered slots are
        // unregistered before munmap); replacing it keeps the address range ours.
        let p = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            break;
        }
        slot.faults.fetch_add(1, Ordering::SeqCst);
        ALL_FAULTS.fetch_add(1, Ordering::SeqCst);
        return;
    }
    // Not ours: behave as if we were never installed.
    // SAFETY: OLD_ACTION was filled by sigaction before this handler was installed.
    unsafe {
        let old = &*(*OLD_ACTION.0.get()).as_ptr();
        let h = old.sa_sigaction;
        if h == libc::SIG_DFL || h == libc::SIG_IGN {
            // Restore the default and return: the faulting instruction runs again and
            // the fault kills the process as it would have without us.
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
        } else if old.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(h);
            f(sig, info, ctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
            f(sig);
        }
    }
}

/// Installs the SIGBUS handler once per process (first mapping made).
fn install_handler() -> io::Result<()> {
    let mut result = Ok(());
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction with valid arguments; OLD_ACTION is written
        // only here, before the handler can run.
        unsafe {
            let ps = libc::sysconf(libc::_SC_PAGESIZE);
            if ps > 0 {
                PAGE_SIZE.store(ps as usize, Ordering::Relaxed);
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            // SA_ONSTACK: run on the alternate stack Rust sets up for its threads,
            // like the handler we chain to.
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            let old = (*OLD_ACTION.0.get()).as_mut_ptr();
            if libc::sigaction(libc::SIGBUS, &sa, old) != 0 {
                result = Err(io::Error::last_os_error());
            }
        }
    });
    result
}

/// The OS page size.
pub fn page_size() -> usize {
    // The handler install (first map) reads it; before that ask directly.
    // SAFETY: sysconf has no preconditions.
    let ps = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if ps > 0 {
        ps as usize
    } else {
        4096
    }
}

/// A copy through a mapping hit a page the file no longer backs (or may have: a fault
/// happened somewhere while it ran). The bytes copied are not to be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapFault {
    /// True when the fault was in this mapping: it now holds zero pages and should be
    /// dropped.
    pub own: bool,
}

/// Access-pattern hints (`madvise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    Normal,
    Random,
    Sequential,
}

/// A shared, read-write mapping of the first `len` bytes of a file (which may extend
/// past the file's end: those pages become usable as the file grows).
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
    slot: usize,
}

// SAFETY: the mapping is plain shared memory; every access copies through raw pointers
// with bounds checked against `len`, and the pointer stays valid until Drop.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of the open file `fd` (MAP_SHARED, read and write).
    pub fn map(fd: RawFd, len: usize) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty mapping"));
        }
        install_handler()?;
        // SAFETY: a fresh mapping chosen by the kernel; the fd is open.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = p as *mut u8;
        // Register after mapping (a fault needs both to be handled): write the length
        // first so the handler never pairs a new start with an old length.
        for (i, slot) in REGISTRY.iter().enumerate() {
            // Claim the slot with the CLAIMED marker (the handler skips it), fill it,
            // then publish the start.
            if slot
                .start
                .compare_exchange(0, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            slot.len.store(len, Ordering::Release);
            slot.faults.store(0, Ordering::Release);
            slot.start.store(ptr as usize, Ordering::Release);
            return Ok(Mapping { ptr, len, slot: i });
        }
        // SAFETY: unmapping what we just mapped.
        unsafe { libc::munmap(p, len) };
        Err(io::Error::other("too many memory-mapped files"))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True once a fault was absorbed in this mapping.
    pub fn faulted(&self) -> bool {
        REGISTRY[self.slot].faults.load(Ordering::Acquire) != 0
    }

    fn check(&self, before: u64) -> Result<(), MapFault> {
        if ALL_FAULTS.load(Ordering::SeqCst) == before {
            Ok(())
        } else {
            Err(MapFault {
                own: self.faulted(),
            })
        }
    }

    fn range_ok(&self, off: usize, n: usize) -> bool {
        off.checked_add(n).is_some_and(|end| end <= self.len)
    }

    /// Copies `buf.len()` bytes from offset `off`. The caller keeps the range inside
    /// the mapping (checked: out of range is an own fault, never a wild read).
    pub fn read(&self, buf: &mut [u8], off: usize) -> Result<(), MapFault> {
        if self.faulted() || !self.range_ok(off, buf.len()) {
            return Err(MapFault { own: true });
        }
        let before = ALL_FAULTS.load(Ordering::SeqCst);
        // SAFETY: in bounds (checked above); the source is shared file memory that a
        // concurrent writer may change, which is why callers serialize writers of the
        // same bytes (the table lock) exactly as they would with pread/pwrite.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(off), buf.as_mut_ptr(), buf.len()) };
        self.check(before)
    }

    /// Copies `data` into the mapping at `off` (the file's page cache: the kernel writes
    /// it back, and fsync of the file covers it).
    pub fn write(&self, data: &[u8], off: usize) -> Result<(), MapFault> {
        if self.faulted() || !self.range_ok(off, data.len()) {
            return Err(MapFault { own: true });
        }
        let before = ALL_FAULTS.load(Ordering::SeqCst);
        // SAFETY: in bounds (checked above); see `read` about concurrent access.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(off), data.len()) };
        self.check(before)
    }

    /// Hints the kernel about the access pattern of the whole mapping.
    pub fn advise(&self, advice: Advice) -> io::Result<()> {
        let a = match advice {
            Advice::Normal => libc::MADV_NORMAL,
            Advice::Random => libc::MADV_RANDOM,
            Advice::Sequential => libc::MADV_SEQUENTIAL,
        };
        // SAFETY: the whole range is our mapping.
        if unsafe { libc::madvise(self.ptr as *mut libc::c_void, self.len, a) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Writes back the first `len` bytes' dirty pages and waits (msync MS_SYNC).
    pub fn sync(&self, len: usize) -> io::Result<()> {
        let len = len.min(self.len);
        if len == 0 {
            return Ok(());
        }
        // SAFETY: a prefix of our mapping; the start is page aligned.
        if unsafe { libc::msync(self.ptr as *mut libc::c_void, len, libc::MS_SYNC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unregister before unmapping: once the range is unmapped the kernel may hand it
        // to someone else, and the handler must not paper over their faults.
        REGISTRY[self.slot].start.store(0, Ordering::Release);
        // SAFETY: our mapping, unmapped once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::io::AsRawFd;

    #[test]
    fn reads_and_writes_go_through_the_file() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 10000]).unwrap();
        let m = Mapping::map(f.as_raw_fd(), 10000).unwrap();
        m.advise(Advice::Random).unwrap();
        let mut b = [0u8; 4];
        m.read(&mut b, 9996).unwrap();
        assert_eq!(b, [7; 4]);
        m.write(b"abcd", 5000).unwrap();
        m.sync(10000).unwrap();
        let mut back = [0u8; 4];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut back, 5000).unwrap();
        assert_eq!(&back, b"abcd");
        assert!(m.read(&mut b, 9998).is_err(), "past the mapping");
    }

    #[test]
    fn a_truncated_file_is_a_fault_not_a_crash() {
        let mut f = tempfile::tempfile().unwrap();
        let page = page_size();
        f.write_all(&vec![1u8; page * 4]).unwrap();
        let m = Mapping::map(f.as_raw_fd(), page * 4).unwrap();
        let mut b = vec![0u8; 16];
        m.read(&mut b, page * 3).unwrap();
        f.set_len(page as u64).unwrap();
        let e = m.read(&mut b, page * 3).unwrap_err();
        // The bytes must be used, or the compiler drops the copy (and the fault).
        assert_eq!(b, vec![0u8; 16], "the handler's zero page");
        assert!(e.own);
        assert!(m.faulted());
        // Pages still backed read fine, but the mapping stays marked.
        assert!(m.read(&mut b, 0).is_err());
    }

    #[test]
    fn a_mapping_past_the_end_is_usable_as_the_file_grows() {
        let f = tempfile::tempfile().unwrap();
        let page = page_size();
        f.set_len(page as u64).unwrap();
        let m = Mapping::map(f.as_raw_fd(), page * 8).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, b"grown", (page * 5) as u64).unwrap();
        let mut b = [0u8; 5];
        m.read(&mut b, page * 5).unwrap();
        assert_eq!(&b, b"grown");
    }
}
