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
//!
//! # Why a run alone can be lost, and the restart protocol
//!
//! A request refused with `BLK_STS_RESOURCE` sits on the dispatcher's local
//! list until `blk_mq_dispatch_rq_list()` splices it onto `hctx->dispatch`.
//! A run that starts before the splice finds nothing pending
//! (`blk_mq_hw_queue_need_run()`) and returns; the dispatcher then sees
//! `BLK_MQ_S_SCHED_RESTART` and only arms blk-mq's 3 ms delayed run. So a
//! wake-up does what blk-mq's own `__blk_mq_sched_restart()` does for a
//! freed driver tag: clear `SCHED_RESTART`, `smp_mb()`, then run. The
//! barrier pairs with the `smp_mb()` between the splice and the
//! `SCHED_RESTART` test in `blk_mq_dispatch_rq_list()` (store buffering):
//! either the run sees the spliced request, or the dispatcher sees the bit
//! cleared and re-runs the queue itself at once. `rtags/tests/loom_handoff.rs`
//! checks that argument. The refusal is `BLK_STS_DEV_RESOURCE`, so the
//! dispatcher never arms the 3 ms delayed run either (with
//! `BLK_STS_RESOURCE` its `mod_delayed_work` could push back a run this
//! wake had just queued).
//!
//! Drivers upstream would call an exported `__blk_mq_sched_restart()` (or
//! use `.get_budget`/`.put_budget`); 6.12 exports neither for this use, so
//! kapi writes `SCHED_RESTART` itself. It restarts every hardware queue of
//! the woken disk: the waker does not know which one was refused, and the
//! walk happens only when a queue waited.

use core::sync::atomic::{fence, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
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

    /// Restarts every hardware queue of disk `index`, if it is registered:
    /// a refused request there is dispatched again at once (see the module
    /// documentation). Callable from any context.
    pub(crate) fn run(&self, index: usize) {
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        // SeqCst: see the module documentation.
        slot.busy.fetch_add(1, Ordering::SeqCst);
        let queue = slot.queue.load(Ordering::SeqCst);
        if !queue.is_null() {
            // A non-null queue is live while `busy` is raised (type invariant
            // and the unregister protocol).
            // SAFETY: as above.
            unsafe { restart_queue(queue) };
        }
        // Release: orders our use of the queue before unregister's wait ends.
        slot.busy.fetch_sub(1, Ordering::Release);
    }
}

/// `__blk_mq_sched_restart()` (not exported) for every hardware queue of
/// `q`.
///
/// # Safety
///
/// `q` must be the live request queue of a registered disk.
unsafe fn restart_queue(q: *mut bindings::request_queue) {
    // The table and its contexts stay valid: the number of hardware queues changes only while the
    // disk is out of the waker (an invariant of `Disk`), and blk-mq frees contexts only when the
    // queue is released (which waits for `unregister`); `xa_load` is safe under RCU or without
    // concurrent stores.
    // SAFETY: `q` is live (guaranteed by the caller); its table stays valid (above).
    let (table, nr) = unsafe { (core::ptr::addr_of_mut!((*q).hctx_table), (*q).nr_hw_queues) };
    for i in 0..nr as usize {
        // SAFETY: `table` is the live queue's context table.
        let hctx = unsafe { bindings::xa_load(table, i) }.cast::<bindings::blk_mq_hw_ctx>();
        if hctx.is_null() {
            continue;
        }
        // blk-mq changes `state` only with atomic bitops (and reads it with `test_bit`); an atomic
        // RMW from Rust is the same operation under the kernel's memory model (`clear_bit` is a
        // `lock and` on x86, an LSE/LL-SC RMW on arm64).
        // SAFETY: `hctx` is a live context whose `state` is only accessed atomically (above).
        let state = unsafe {
            AtomicUsize::from_ptr(core::ptr::addr_of_mut!((*hctx).__bindgen_anon_1.state))
        };
        // Relaxed, as `clear_bit()`: the fence orders it.
        state.fetch_and(!(1 << bindings::BLK_MQ_S_SCHED_RESTART), Ordering::Relaxed);
        // `smp_mb()`: pairs with the one between the splice onto
        // `hctx->dispatch` and the `SCHED_RESTART` test in
        // `blk_mq_dispatch_rq_list()`.
        fence(Ordering::SeqCst);
        // SAFETY: `hctx` is live; an async run only queues work and may be
        // called from any context.
        unsafe { bindings::blk_mq_run_hw_queue(hctx, true) };
    }
}
