//! The one place storage code takes its locks and atomics from, so a model checker
//! (shuttle, loom) can be swapped in here without touching the engines.

pub use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
pub use std::sync::Arc;
