//! The one lock policy: how a std lock is taken (here) and in what order the locks are
//! taken ([`order`], checked by its test against the source).
//!
//! A lock is taken whatever became of its last holder. A panic while one of these locks
//! is held is a bug, but serving the data as it stands beats taking the whole session
//! down with it. Locks are held for a few lines, never across `.await` (clippy's
//! `await_holding_lock` is denied). Nothing takes a std lock but through these functions.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub(crate) mod order;

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits on `condvar` for at most `timeout`, the lock taken again as [`lock`] takes it.
#[cfg(feature = "model")]
pub(crate) fn wait_timeout<'a, T>(
    condvar: &std::sync::Condvar,
    guard: MutexGuard<'a, T>,
    timeout: std::time::Duration,
) -> MutexGuard<'a, T> {
    match condvar.wait_timeout(guard, timeout) {
        Ok((guard, _)) => guard,
        Err(poisoned) => poisoned.into_inner().0,
    }
}
