//! What an idle connection gives back to the OS: the pages of its thread's stack that
//! its statements touched. A connection thread's stack is 16 MiB of address space
//! (`CONNECTION_STACK`), of which only touched pages are resident — but parsing and
//! running even `SELECT 1` touches about 80 KiB, and those pages stay resident while the
//! connection idles (measured: 88 KiB of stack per idle connection, more than all of
//! an idle MariaDB connection; docs/memory.md). When a connection has waited
//! [`RELEASE_AFTER`] for its next command, [`release_unused_stack`] discards the pages
//! below the current frame (`MADV_DONTNEED`: the next statement finds them zeroed, as
//! a fresh stack). Connections that are busy never reach it: it costs nothing per
//! statement.

use std::time::Duration;

/// How long a connection waits for its next command before giving back its stack pages.
pub const RELEASE_AFTER: Duration = Duration::from_secs(1);

/// Bytes below the current frame that are left alone: the frames of the calls made from
/// here (the `madvise` call itself).
const MARGIN: usize = 16 << 10;

/// Discards the resident pages of the calling thread's stack below the current frame.
/// Nothing lives there while the thread waits in a shallow frame (the command loop's
/// read); a signal handler or a later call faults zeroed pages back in.
pub fn release_unused_stack() {
    #[cfg(target_os = "linux")]
    {
        let here = 0u8;
        let here = std::ptr::addr_of!(here) as usize;
        // SAFETY: pthread_getattr_np fills `attr` for the calling thread, which is then
        // destroyed; madvise(MADV_DONTNEED) is given only whole pages of this thread's
        // own stack strictly below the live frames (below `here` less MARGIN) and above
        // its guard area, which hold no data anyone reads.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
                return;
            }
            let mut addr: *mut libc::c_void = std::ptr::null_mut();
            let mut size: libc::size_t = 0;
            let mut guard: libc::size_t = 0;
            let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0
                && libc::pthread_attr_getguardsize(&attr, &mut guard) == 0;
            libc::pthread_attr_destroy(&mut attr);
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if !ok || page <= 0 {
                return;
            }
            let page = page as usize;
            let low = (addr as usize + guard).next_multiple_of(page);
            let high = here.saturating_sub(MARGIN) & !(page - 1);
            if high > low && here < addr as usize + size {
                libc::madvise(low as *mut libc::c_void, high - low, libc::MADV_DONTNEED);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that touched a deep stack gives those pages back and still runs.
    #[test]
    fn a_deep_stack_is_given_back_and_the_thread_goes_on() {
        fn resident_kib() -> u64 {
            let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        }
        #[inline(never)]
        fn touch(depth: usize) -> u64 {
            let buf = [depth as u8; 4096];
            let b = std::hint::black_box(&buf);
            if depth == 0 {
                b[7] as u64
            } else {
                touch(depth - 1) + b[9] as u64
            }
        }
        let t = std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(|| {
                std::hint::black_box(touch(2048)); // about 8 MiB of stack
                let deep = resident_kib();
                release_unused_stack();
                let after = resident_kib();
                // The thread still works, and can use its stack again.
                std::hint::black_box(touch(1024));
                (deep, after)
            })
            .unwrap();
        let (deep, after) = t.join().unwrap();
        assert!(
            deep >= after + 6 * 1024,
            "RSS {deep} KiB before, {after} KiB after"
        );
    }
}
