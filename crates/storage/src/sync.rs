//! The one place storage code takes its locks and atomics from, so a model checker
//! (shuttle, loom) can be swapped in here without touching the engines.

pub use parking_lot::{
    ArcRwLockReadGuard, ArcRwLockWriteGuard, Condvar, Mutex, MutexGuard, RawRwLock, RwLock,
    RwLockReadGuard, RwLockWriteGuard,
};
pub use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
pub use std::sync::{Arc, Weak};
