//! How much of the calling thread's stack is left, so recursive code (the binder, the
//! evaluator, planning walks) can stop with MySQL's error 1436 "Thread stack overrun"
//! instead of overflowing the stack, which aborts the whole process for every client.
//!
//! MySQL does the same (`check_stack_overrun`): it compares the current stack address
//! with the thread's stack bounds before descending further. The bounds come from
//! `pthread_getattr_np` once per thread and are kept in a thread-local.

use crate::{Error, Result};
use std::cell::Cell;

/// Stack that must remain free after a check passes: room for the deepest non-recursive
/// work that follows (sqlparser's own formatting and dropping of an expression level,
/// the engine call under an evaluation) and for the unwinding of the error itself.
pub const RED_ZONE: usize = 256 * 1024;

thread_local! {
    /// (lowest usable stack address, stack size); (0, 0) until first asked.
    static BOUNDS: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// The current stack pointer, approximately (the address of a local).
#[inline(always)]
fn stack_pointer() -> usize {
    let marker = 0u8;
    std::ptr::addr_of!(marker) as usize
}

#[cfg(target_os = "linux")]
fn thread_bounds() -> (usize, usize) {
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread; it is destroyed
    // after the stack address and size are read from it.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return (0, 0);
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            (addr as usize, size)
        } else {
            (0, 0)
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn thread_bounds() -> (usize, usize) {
    (0, 0)
}

fn bounds() -> (usize, usize) {
    BOUNDS.with(|b| {
        if b.get().1 == 0 {
            b.set(thread_bounds());
        }
        b.get()
    })
}

/// Bytes of stack left below the current frame; None where the bounds are unknown.
pub fn remaining() -> Option<usize> {
    let (low, size) = bounds();
    if size == 0 {
        return None;
    }
    Some(stack_pointer().saturating_sub(low))
}

/// Ok while more than [`RED_ZONE`] bytes of stack are left; otherwise 1436.
#[inline]
pub fn check() -> Result<()> {
    let (low, size) = bounds();
    if size == 0 {
        return Ok(());
    }
    let sp = stack_pointer();
    let left = sp.saturating_sub(low);
    if left > RED_ZONE {
        return Ok(());
    }
    Err(Error::StackOverrun {
        used: (low + size).saturating_sub(sp),
        size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recurse(depth: usize) -> Result<usize> {
        check()?;
        // A frame of real size, so the stack is used as a binder's would be.
        let pad = std::hint::black_box([depth as u8; 512]);
        let below = recurse(depth + 1)?;
        Ok(below + usize::from(pad[depth % 512] == 0))
    }

    #[test]
    fn deep_recursion_stops_with_1436_instead_of_overflowing() {
        let handle = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| recurse(0))
            .unwrap();
        let err = handle.join().unwrap().unwrap_err();
        assert_eq!(err.code(), 1436);
        assert!(err.to_string().contains("Thread stack overrun"), "{err}");
    }

    #[test]
    fn the_remaining_stack_is_known_and_shrinks_deeper() {
        let outer = remaining().unwrap();
        let inner = {
            let pad = [0u8; 4096];
            std::hint::black_box(&pad);
            remaining().unwrap()
        };
        assert!(inner <= outer);
        assert!(outer > RED_ZONE);
    }
}
