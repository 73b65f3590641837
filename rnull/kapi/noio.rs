// SPDX-License-Identifier: GPL-2.0

//! Allocation contexts of a block driver: `GFP_NOIO` and the scope that
//! makes every allocation of a task `GFP_NOIO` ([`NoIoScope`],
//! `memalloc_noio_save()`/`memalloc_noio_restore()`).
//!
//! A driver must not let an allocation it makes recurse into I/O that
//! waits for the driver: while its queue is frozen, reclaim writing pages
//! back to the device would wait for the freeze, which waits for the
//! allocation. blk-mq allocates with `GFP_NOIO` there; code it calls that
//! allocates with `GFP_KERNEL` (kobjects, sysfs files) is covered by a
//! scope.

use core::marker::PhantomData;
use kernel::bindings;

/// `GFP_NOIO` (`__GFP_RECLAIM`), which bindgen cannot evaluate: may sleep
/// and reclaim, but starts no I/O, so a block driver cannot recurse into
/// itself.
pub(crate) const GFP_NOIO: bindings::gfp_t =
    (1 << bindings::___GFP_DIRECT_RECLAIM_BIT) | (1 << bindings::___GFP_KSWAPD_RECLAIM_BIT);

/// While it lives, every allocation of the current task behaves as
/// `GFP_NOIO` (`PF_MEMALLOC_NOIO`); scopes nest.
///
/// Not `Send`: the flag is the task's that made the scope.
pub(crate) struct NoIoScope {
    /// `PF_MEMALLOC_NOIO` if this scope set it, 0 if an outer one had.
    set: u32,
    _not_send: PhantomData<*mut ()>,
}

impl NoIoScope {
    /// Starts a scope (`memalloc_noio_save()`).
    pub(crate) fn new() -> Self {
        let flag = bindings::PF_MEMALLOC_NOIO;
        // `memalloc_flags_save()`, an inline function: a task changes its
        // own `flags`, and only it does (other CPUs only read them).
        // SAFETY: `get_current` returns the running task, live while it
        // runs this.
        let set = unsafe {
            let task = bindings::get_current();
            let old = (*task).flags;
            (*task).flags = old | flag;
            !old & flag
        };
        Self {
            set,
            _not_send: PhantomData,
        }
    }
}

impl Drop for NoIoScope {
    /// Ends the scope (`memalloc_noio_restore()`): clears the flag if this
    /// scope set it.
    fn drop(&mut self) {
        // SAFETY: as in `new`; the scope is dropped by the task that made
        // it (not `Send`).
        unsafe {
            let task = bindings::get_current();
            (*task).flags &= !self.set;
        }
    }
}
