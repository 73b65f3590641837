// SPDX-License-Identifier: GPL-2.0

//! Re-running the queues of other disks from a completion.
//!
//! With a host-wide tag budget, a tag freed by one disk may be what another
//! disk is waiting for, so completions must be able to re-run any disk's
//! queues. A completion can race with a disk being deleted; the slot
//! protocol below makes that safe without a lock in the completion path:
//!
//! * runner (the restart thread, see below): `busy += 1` (SeqCst), load
//!   `queue` (SeqCst), run it if non-null, `busy -= 1` (Release);
//! * unregister: store null in `queue` (SeqCst), then wait until `busy`
//!   reads 0 (Acquire, pairs with the runner's decrement).
//!
//! The two SeqCst pairs form the store-buffering pattern: either the
//! runner's increment is visible to the unregistering side (which then
//! waits for it), or the runner's load sees null. After `unregister`
//! returns no runner can touch the queue, so the disk may be deleted: the
//! runner's synchronous dispatch is over, and any async run it left to
//! kblockd is cancelled by `del_gendisk`.
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
//!
//! # The restart thread
//!
//! The restart runs the queues synchronously, in a kthread worker of the
//! waker's own at the lowest `SCHED_FIFO` priority (`sched_set_fifo_low`),
//! not as blk-mq's async run on kblockd. A wake-up comes from a completion
//! (often a hard interrupt), where a queue cannot be run inline, and
//! kblockd's work is a fair-class task (nice -20) queued on a CPU that
//! blk-mq picks: it waits there for the running task, which the scheduler
//! lets finish its slice (EEVDF's run-to-parity) and a kernel without
//! preemption lets finish its kernel path. Measured at fio's start and
//! exit, that is 1 to 7 ms of a woken queue's wait, longer than the
//! hand-off it completes. A real-time thread preempts any fair-class task
//! at the next preemption point, on whichever CPU the scheduler finds
//! for it. blk-mq still runs a hardware queue whose CPUs do not include
//! the thread's current one asynchronously (`blk_mq_run_hw_queue`); a disk
//! with one hardware queue (every CPU) is always run here.
//!
//! A wake-up sets the disk's bit in `pending` and queues the one work
//! item; `kthread_queue_work` does nothing if it is already queued. The
//! bit is still seen: the worker takes the item off its list under the
//! worker's lock, which the queueing side also takes, before the item
//! swaps `pending` to 0; a wake-up while the item runs queues it again.

use core::{
    ptr::NonNull,
    sync::atomic::{fence, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering},
};
use kernel::{bindings, c_str, error::from_err_ptr, prelude::*, types::Opaque};

struct Slot {
    queue: AtomicPtr<bindings::request_queue>,
    busy: AtomicU32,
}

/// A kthread worker at the lowest `SCHED_FIFO` priority.
///
/// # Invariants
///
/// `0` is a live worker made by `kthread_create_worker`, destroyed (after
/// running every work queued on it) on drop.
struct Worker(NonNull<bindings::kthread_worker>);

impl Worker {
    /// A worker thread named `name` (no conversion specifiers).
    fn new(name: &CStr) -> Result<Self> {
        // SAFETY: both strings are NUL-terminated and only read during the
        // call; "%s" takes the one string argument passed.
        let raw = from_err_ptr(unsafe {
            bindings::kthread_create_worker(0, c_str!("%s").as_char_ptr(), name.as_char_ptr())
        })?;
        let worker = NonNull::new(raw).ok_or(ENOMEM)?;
        // A worker made by `kthread_create_worker` has its task, started.
        // SAFETY: as above.
        unsafe { bindings::sched_set_fifo_low((*worker.as_ptr()).task) };
        // INVARIANT: made by `kthread_create_worker` above.
        Ok(Self(worker))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Flushes the worker (its queued work runs to the end), then stops
        // its thread and frees it.
        // SAFETY: the worker is live (type invariant) and dropped once.
        unsafe { bindings::kthread_destroy_worker(self.0.as_ptr()) };
    }
}

// SAFETY: the kthread worker API may be used from any thread and context.
unsafe impl Send for Worker {}
// SAFETY: as above.
unsafe impl Sync for Worker {}

/// One slot per disk that may need re-running (at most 64: a bit each in
/// `pending`).
///
/// # Invariants
///
/// A non-null `queue` in a slot is the request queue of a registered disk,
/// live until the slot is unregistered. `work` is initialised with
/// [`restart_work`] and is only ever queued on `worker`. `worker` is
/// declared first, so that it is destroyed (its work flushed) before the
/// other fields go: a running [`restart_work`] may use all of them.
#[pin_data]
pub(crate) struct QueueWaker {
    worker: Worker,
    slots: KVec<Slot>,
    /// The slots to restart: bit `index`.
    pending: AtomicU64,
    #[pin]
    work: Opaque<bindings::kthread_work>,
}

// SAFETY: the slots and `pending` are atomics, the worker may be used from
// any thread (see `Worker`), and `work` is only handed to the worker's
// functions, which serialise it under the worker's lock.
unsafe impl Send for QueueWaker {}
// SAFETY: as above.
unsafe impl Sync for QueueWaker {}

impl QueueWaker {
    /// A waker for disks `0..n` (`n` at most 64), with its restart thread.
    pub(crate) fn new(n: usize) -> Result<impl PinInit<Self, Error>> {
        if n > u64::BITS as usize {
            return Err(EINVAL);
        }
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
        let worker = Worker::new(c_str!("rnull_restart"))?;
        // INVARIANT: all slots start empty; `work` is initialised with
        // `restart_work` below, and `run` queues it on `worker` only.
        Ok(try_pin_init!(Self {
            worker,
            slots,
            pending: AtomicU64::new(0),
            work <- Opaque::ffi_init(|work: *mut bindings::kthread_work| {
                // `kthread_init_work()`, a macro: zeroed, an empty list node,
                // the function.
                // SAFETY: `work` is valid for writes and pinned; all-zero is a
                // valid start for the C structure.
                unsafe {
                    work.write_bytes(0, 1);
                    let node = core::ptr::addr_of_mut!((*work).node);
                    (*node).next = node;
                    (*node).prev = node;
                    (*work).func = Some(restart_work);
                }
            }),
        }? Error))
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
        // the queue happens before we return. The runner is the restart
        // thread, real-time: it is not kept off its CPU by this wait.
        while slot.busy.load(Ordering::Acquire) != 0 {
            core::hint::spin_loop();
        }
    }

    /// Has the restart thread restart every hardware queue of disk
    /// `index`, if it is registered then: a refused request there is
    /// dispatched again (see the module documentation). Callable from any
    /// context.
    pub(crate) fn run(&self, index: usize) {
        if index >= self.slots.len() {
            return;
        }
        // Release: the thread's Acquire swap sees what came before the
        // wake-up (the freed tag), whichever queueing ran it.
        self.pending.fetch_or(1 << index, Ordering::Release);
        // Queueing a work that is queued already does nothing; see the
        // module documentation for why the bit is seen anyway.
        // SAFETY: the worker is live and `work` is initialised, pinned and
        // only queued on it (type invariants); `kthread_queue_work` takes
        // the worker's lock with interrupts saved, in any context.
        unsafe { bindings::kthread_queue_work(self.worker.0.as_ptr(), self.work.get()) };
    }

    /// Restarts disk `index`'s queues, if it is registered (the restart
    /// thread).
    fn restart(&self, index: usize) {
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        // SeqCst: see the module documentation.
        slot.busy.fetch_add(1, Ordering::SeqCst);
        let queue = slot.queue.load(Ordering::SeqCst);
        if !queue.is_null() {
            // A non-null queue is live while `busy` is raised (type invariant
            // and the unregister protocol); this is the restart thread.
            // SAFETY: as above.
            unsafe { restart_queue(queue) };
        }
        // Release: orders our use of the queue before unregister's wait ends.
        slot.busy.fetch_sub(1, Ordering::Release);
    }
}

/// The restart thread's work: restarts the queues of every disk woken
/// since it last ran.
///
/// # Safety
///
/// `work` must be the `work` of a live [`QueueWaker`], run by its worker.
unsafe extern "C" fn restart_work(work: *mut bindings::kthread_work) {
    // `Opaque<T>` has `T`'s layout, so the field's address is `work`.
    // SAFETY: `work` is the `work` field of a live `QueueWaker` (guaranteed
    // by the caller), which its own worker outlives no further than this
    // call (type invariant).
    let waker = unsafe {
        &*kernel::container_of!(
            work.cast::<Opaque<bindings::kthread_work>>(),
            QueueWaker,
            work
        )
    };
    // Acquire: pairs with `run`'s Release.
    let mut mask = waker.pending.swap(0, Ordering::Acquire);
    while mask != 0 {
        let index = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        waker.restart(index);
    }
}

/// `__blk_mq_sched_restart()` (not exported) for every hardware queue of
/// `q`, each run synchronously where blk-mq allows it.
///
/// # Safety
///
/// `q` must be the live request queue of a registered disk, and the caller
/// a process context that may sleep (the restart thread).
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
        // A synchronous run dispatches here, on this CPU if the context's
        // CPUs include it (else blk-mq queues an async run), and may sleep
        // for a blocking set.
        // SAFETY: `hctx` is live; we may sleep (guaranteed by the caller).
        unsafe { bindings::blk_mq_run_hw_queue(hctx, false) };
    }
}
