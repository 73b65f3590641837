// SPDX-License-Identifier: GPL-2.0

//! Re-running the queues of other disks from a completion.
//!
//! With a host-wide tag budget, a tag freed by one disk may be what another
//! disk is waiting for, so completions must be able to re-run any disk's
//! queues. A completion can race with a disk being deleted; the slot
//! protocol below makes that safe without a lock in the completion path:
//!
//! * runner: `busy += 1` (SeqCst), load `queue` (SeqCst), run it if
//!   non-null, `busy -= 1` (Release);
//! * unregister: store null in `queue` (SeqCst), then wait until `busy`
//!   reads 0 (Acquire, pairs with the runner's decrement).
//!
//! The two SeqCst pairs form the store-buffering pattern: either the
//! runner's increment is visible to the unregistering side (which then
//! waits for it), or the runner's load sees null. After `unregister`
//! returns no runner can touch the queue, so the disk may be deleted.
//! Running a queue only schedules kblockd work, which `del_gendisk` cancels.

use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use kernel::{bindings, prelude::*};

struct Slot {
    queue: AtomicPtr<bindings::request_queue>,
    busy: AtomicU32,
}

/// One slot per disk that may need re-running.
///
/// # Invariants
///
/// A non-null `queue` in a slot is the request queue of a registered disk,
/// live until the slot is unregistered.
pub(crate) struct QueueWaker {
    slots: KVec<Slot>,
}

impl QueueWaker {
    /// A waker for disks `0..n`.
    pub(crate) fn new(n: usize) -> Result<Self> {
        let mut slots = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            slots.push(
                Slot {
                    queue: AtomicPtr::new(core::ptr::null_mut()),
                    busy: AtomicU32::new(0),
                },
                GFP_KERNEL,
            )?;
        }
        // INVARIANT: all slots start empty.
        Ok(Self { slots })
    }

    /// Publishes disk `index`'s queue.
    ///
    /// # Safety
    ///
    /// `queue` must stay live until [`QueueWaker::unregister`] of `index`
    /// returns.
    pub(crate) unsafe fn register(&self, index: usize, queue: *mut bindings::request_queue) {
        if let Some(slot) = self.slots.get(index) {
            // SeqCst: see the module documentation.
            slot.queue.store(queue, Ordering::SeqCst);
        }
    }

    /// Withdraws disk `index`'s queue and waits for runners still using it.
    pub(crate) fn unregister(&self, index: usize) {
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        // SeqCst: pairs with the runner's increment and load.
        slot.queue.store(core::ptr::null_mut(), Ordering::SeqCst);
        // Acquire: pairs with the runner's Release decrement, so its use of
        // the queue happens before we return.
        while slot.busy.load(Ordering::Acquire) != 0 {
            core::hint::spin_loop();
        }
    }

    /// Schedules a run of every hardware queue of disk `index`, if it is
    /// registered. Callable from any context.
    pub(crate) fn run(&self, index: usize) {
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        // SeqCst: see the module documentation.
        slot.busy.fetch_add(1, Ordering::SeqCst);
        let queue = slot.queue.load(Ordering::SeqCst);
        if !queue.is_null() {
            // A non-null queue is live while `busy` is raised (type invariant
            // and the unregister protocol); an async run only queues work.
            // SAFETY: as above; callable from any context.
            unsafe { bindings::blk_mq_run_hw_queues(queue, true) };
        }
        // Release: orders our use of the queue before unregister's wait ends.
        slot.busy.fetch_sub(1, Ordering::Release);
    }
}
