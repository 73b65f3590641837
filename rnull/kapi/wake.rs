// SPDX-License-Identifier: GPL-2.0

//! Re-running the queues of other disks from a completion.
//!
//! With a host-wide tag budget, a tag freed by one disk may be what another
//! disk is waiting for, so completions must be able to re-run any disk's
//! queues. A completion only sets the disk's bit and queues the restart
//! thread's work (below); the thread runs the queues. A restart can race
//! with a disk being deleted; the slot protocol makes that safe without a
//! lock in the completion path:
//!
//! * register: store the queue in the disk's slot (Release);
//! * runner (the restart thread's work): load the slot (Acquire), run the
//!   queue if non-null;
//! * unregister: store null in the slot, then flush the worker
//!   (`kthread_flush_worker`, which sleeps).
//!
//! The flush queues a work item of its own under the worker's lock, after
//! the null store, and waits for it: the instance of our work that is
//! running or queued ahead of it has finished when it returns, and a later
//! instance is taken off the worker's list under that lock after the flush
//! took it, so it reads null. (`kthread_flush_work` would not do: it
//! returns at once, without the lock, for a work never queued before, and
//! a first queueing racing with it would then be ordered by nothing.)
//! After `unregister` returns no runner can touch the queue. `Disk`
//! unregisters only after `del_gendisk`, which drains the queue: a request
//! refused for want of a host tag is dispatched again only by a wake-up
//! (`BLK_STS_DEV_RESOURCE` arms no delayed run), so the waker must stay
//! until the queue is empty; a restart of the drained queue finds nothing
//! to run and queues no kblockd work. The queue itself lives until
//! `put_disk`, which comes after.
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
//! for it. blk-mq runs a hardware queue synchronously only on one of its
//! CPUs (`blk_mq_run_hw_queue` queues the run on kblockd otherwise), so
//! with several hardware queues (each with its share of the CPUs) the
//! thread first moves onto the CPUs of a queue that has a request waiting
//! on its dispatch list (`set_cpus_allowed_ptr`, which migrates it at
//! once), runs it there, and goes back to the CPUs it had before (its
//! own, or an administrator's choice) when the restart is done; a queue
//! with nothing waiting is left to blk-mq (no move for a run that finds
//! nothing). The thread's
//! synchronous runs are bounded: it starts one only while it has spent
//! less than [`SYNC_BUDGET_NS`] of the current [`SYNC_WINDOW_NS`] in them
//! (so about that, plus the one run that crosses it), and leaves the
//! window's other restarts to kblockd, so that its priority buys the
//! hand-off's latency rather than the host's dispatch throughput.
//!
//! A wake-up sets the disk's bit in `pending` and queues the one work
//! item; `kthread_queue_work` does nothing if it is already queued. The
//! bit is still seen: the worker takes the item off its list under the
//! worker's lock, which the queueing side also takes, before the item
//! swaps `pending` to 0; a wake-up while the item runs queues it again.

use super::time::now_ns;
use core::{
    ptr::NonNull,
    sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicUsize, Ordering},
};
use kernel::{bindings, c_str, error::from_err_ptr, prelude::*, types::Opaque};

/// A disk's slot: its request queue while it is registered, else null.
type Slot = AtomicPtr<bindings::request_queue>;

/// The restart thread runs queues synchronously for at most
/// [`SYNC_BUDGET_NS`] of every window of this length; past it, a window's
/// restarts are blk-mq's async runs (kblockd's fair-class work). Each
/// synchronous run dispatches whatever the queue holds, which a busy host
/// with inline completions (whose puts wake disks again) could keep
/// feeding: the bound keeps the thread's real-time priority to the
/// hand-off's latency, not its throughput.
const SYNC_WINDOW_NS: u64 = 1_000_000;
/// See [`SYNC_WINDOW_NS`]: a quarter of a CPU.
const SYNC_BUDGET_NS: u64 = 250_000;

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
        // `kthread_create_worker` sets the worker's `task` (created and
        // woken) before it returns the worker.
        // SAFETY: as above; the worker is live until we destroy it.
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

// SAFETY: the kthread worker API may be used from any thread; dropping a
// worker sleeps, which `QueueWaker`'s users do in process context (the last
// reference goes with a disk or the host budget).
unsafe impl Send for Worker {}
// SAFETY: queueing and flushing work may be done from any thread, and
// queueing from any context.
unsafe impl Sync for Worker {}

/// The restart thread and one slot per disk that may need re-running (at
/// most 64: a bit each in `pending`). Dropped in process context (the
/// worker's destruction sleeps).
///
/// # Invariants
///
/// A non-null slot is the request queue of a disk that has not been put
/// (`put_disk`), live until the slot is unregistered. `work` is initialised with [`restart_work`]
/// and is only ever queued on `worker`. `worker` is declared first, so that
/// it is destroyed (its work flushed) before the other fields go: a
/// running [`restart_work`] uses `slots`, `pending`, `home` and the window
/// fields.
#[pin_data]
pub(crate) struct QueueWaker {
    worker: Worker,
    /// The restart thread's CPUs before it moved to run a queue on others,
    /// to which it returns (touched by the restart thread only).
    home: KBox<Opaque<bindings::cpumask>>,
    slots: KVec<Slot>,
    /// The slots to restart: bit `index`.
    pending: AtomicU64,
    /// When the restart thread's current [`SYNC_WINDOW_NS`] window began
    /// (touched by the restart thread only).
    window_start_ns: AtomicU64,
    /// The time it spent in synchronous runs in that window (restart
    /// thread only).
    window_used_ns: AtomicU64,
    #[pin]
    work: Opaque<bindings::kthread_work>,
}

// SAFETY: the slots, `pending` and the window are atomics, the worker may
// be used from any thread (see `Worker`), and `work` is only handed to the
// worker's functions, which serialise it under the worker's lock.
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
            slots.push(AtomicPtr::new(core::ptr::null_mut()), GFP_KERNEL)?;
        }
        let worker = Worker::new(c_str!("rnull_restart"))?;
        let home = KBox::new(Opaque::uninit(), GFP_KERNEL)?;
        // INVARIANT: all slots start empty; `work` is initialised with
        // `restart_work` below, and `run` queues it on `worker` only.
        Ok(try_pin_init!(Self {
            worker,
            home,
            slots,
            pending: AtomicU64::new(0),
            window_start_ns: AtomicU64::new(0),
            window_used_ns: AtomicU64::new(0),
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
            // Release: pairs with the runner's Acquire load (the queue is
            // initialised before a runner can use it).
            slot.store(queue, Ordering::Release);
        }
    }

    /// Withdraws disk `index`'s queue and waits for the restart thread to
    /// be done with it (see the module documentation). Sleeps: process
    /// context only, not the restart thread.
    pub(crate) fn unregister(&self, index: usize) {
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        // Relaxed: ordered before the next instance's load by the worker's
        // lock, which the flush takes (see the module documentation).
        slot.store(core::ptr::null_mut(), Ordering::Relaxed);
        // SAFETY: the worker is live (type invariant); we are not its thread.
        unsafe { bindings::kthread_flush_worker(self.worker.0.as_ptr()) };
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
        // `kthread_queue_work` takes the worker's lock with interrupts
        // saved, in any context.
        let (worker, work) = (self.worker.0.as_ptr(), self.work.get());
        // SAFETY: the worker is live, `work` initialised, pinned and only queued on it (invariants).
        unsafe { bindings::kthread_queue_work(worker, work) };
    }
}

/// The restart thread's work: restarts the queues of every disk woken
/// since it last ran, synchronously while the window's budget lasts.
///
/// # Safety
///
/// `work` must be the `work` of a live [`QueueWaker`], run by its worker.
unsafe extern "C" fn restart_work(work: *mut bindings::kthread_work) {
    // `Opaque<T>` has `T`'s layout, so the field's address is `work`.
    // SAFETY: `work` is the `work` field of a `QueueWaker` (guaranteed by
    // the caller).
    let this = unsafe {
        kernel::container_of!(
            work.cast::<Opaque<bindings::kthread_work>>(),
            QueueWaker,
            work
        )
    };
    // Only the fields this work uses, never the whole waker: its drop may
    // be flushing this work, holding `&mut` to the worker.
    // SAFETY: the waker is live and these fields are not dropped before
    // the worker is destroyed, which waits for this call (type invariant).
    let (slots, pending, start, used, home) = unsafe {
        (
            &*core::ptr::addr_of!((*this).slots),
            &*core::ptr::addr_of!((*this).pending),
            &*core::ptr::addr_of!((*this).window_start_ns),
            &*core::ptr::addr_of!((*this).window_used_ns),
            &*core::ptr::addr_of!((*this).home),
        )
    };
    // Acquire: pairs with `run`'s Release.
    let mut mask = pending.swap(0, Ordering::Acquire);
    // Relaxed (window): only this thread touches it.
    let now = now_ns();
    if now.saturating_sub(start.load(Ordering::Relaxed)) >= SYNC_WINDOW_NS {
        start.store(now, Ordering::Relaxed);
        used.store(0, Ordering::Relaxed);
    }
    let mut moved = false;
    while mask != 0 {
        let index = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        let Some(slot) = slots.get(index) else {
            continue;
        };
        // Acquire: pairs with `register`'s Release.
        let queue = slot.load(Ordering::Acquire);
        if queue.is_null() {
            continue;
        }
        let sync = used.load(Ordering::Relaxed) < SYNC_BUDGET_NS;
        let t0 = if sync { now_ns() } else { 0 };
        // A non-null slot is a live queue until `unregister`, which waits
        // for this call (type invariant, module documentation); this is the
        // restart thread, which may sleep.
        // SAFETY: as above; only this thread touches `home`.
        unsafe { restart_queue(queue, sync, home.get(), &mut moved) };
        if sync {
            used.fetch_add(now_ns().saturating_sub(t0), Ordering::Relaxed);
        }
    }
    if moved {
        // Back to the CPUs it had. A failure (none of them active, after a
        // CPU went down) leaves the thread where it is, which is harmless.
        // SAFETY: the current task is live; `home` holds the mask saved
        // before the first move.
        let _ = unsafe { bindings::set_cpus_allowed_ptr(bindings::get_current(), home.get()) };
    }
}

/// `__blk_mq_sched_restart()` (not exported) for every hardware queue of
/// `q`, each run synchronously (`sync`: on one of its CPUs, the thread
/// moving there first if the queue has a request waiting) or queued for
/// kblockd. Before the thread's first move (`*moved` false), it saves its
/// CPUs in `home`, and sets `*moved`.
///
/// # Safety
///
/// `q` must be the request queue of a disk that has not been put, the
/// caller a process context that may sleep (the restart thread), and
/// `home` valid for writes and the caller's alone.
unsafe fn restart_queue(
    q: *mut bindings::request_queue,
    sync: bool,
    home: *mut bindings::cpumask,
    moved: &mut bool,
) {
    // The table and its contexts stay valid: the number of hardware queues changes only while the
    // disk is out of the waker (an invariant of `Disk`); `del_gendisk` exits the contexts (erases
    // them from the table) only after draining the queue, so a restart then finds nothing to run
    // and queues nothing; blk-mq frees them only when the queue is released, after `put_disk`,
    // which `Disk` calls after `unregister`. `xa_load` takes the RCU read lock itself.
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
        // Relaxed, as `clear_bit()`. That blk-mq's mark (`set_bit` before
        // `queue_rq`) precedes this clear follows from the refusal's Release
        // of its waiter bit, the putter's Acquire hand-off, `QueueWaker::run`'s
        // Release of `pending` and this thread's Acquire swap of it
        // (rtags' `design` module, "The restart"); the fence below orders
        // the clear before the queue is run again.
        state.fetch_and(!(1 << bindings::BLK_MQ_S_SCHED_RESTART), Ordering::Relaxed);
        // `smp_mb()`: pairs with the one between the splice onto
        // `hctx->dispatch` and the `SCHED_RESTART` test in
        // `blk_mq_dispatch_rq_list()`.
        fence(Ordering::SeqCst);
        // SAFETY: `hctx` is live; we are the restart thread, and `home`
        // is ours (guaranteed by the caller).
        if sync && unsafe { move_to_cpus_of(hctx, (!*moved).then_some(home)) } {
            *moved = true;
        }
        // A synchronous run dispatches here, on this CPU if the context's
        // CPUs include it (else blk-mq queues an async run), and may sleep
        // for a blocking set.
        // SAFETY: `hctx` is live; we may sleep (guaranteed by the caller).
        unsafe { bindings::blk_mq_run_hw_queue(hctx, !sync) };
    }
}

/// Moves the calling thread onto `hctx`'s CPUs if it is on none of them
/// and the context has a request waiting on its dispatch list (a refused
/// one), so that blk-mq runs the context here rather than on kblockd;
/// first saves the thread's CPUs in `save`, if given. Returns whether it
/// moved; `set_cpus_allowed_ptr` migrates it before it returns.
///
/// # Safety
///
/// `hctx` must be a live hardware context whose CPU mask is fixed while
/// it is used (the disk is registered with the waker: see
/// `restart_queue`), the caller a thread that may sleep and whose CPUs
/// may be changed (the restart thread), and `save` valid for writes.
unsafe fn move_to_cpus_of(
    hctx: *mut bindings::blk_mq_hw_ctx,
    save: Option<*mut bindings::cpumask>,
) -> bool {
    // SAFETY: `hctx` is live (guaranteed by the caller).
    let (mask, dispatch) = unsafe {
        (
            hctx_cpumask(hctx),
            core::ptr::addr_of_mut!((*hctx).__bindgen_anon_1.dispatch),
        )
    };
    // `list_empty()` without `hctx->lock`, as blk-mq's own
    // `blk_mq_hctx_has_pending()`: a request spliced back meanwhile is one
    // this run sees anyway (see the restart protocol above), and one taken
    // meanwhile only makes the move needless.
    // SAFETY: `dispatch` is the live context's list head; `next` is a
    // pointer read as C's `READ_ONCE`.
    let waiting = unsafe { core::ptr::addr_of!((*dispatch).next).read_volatile() } != dispatch;
    // SAFETY: `mask` is the live context's fixed mask (guaranteed by the
    // caller).
    if !waiting || unsafe { cpumask_has(mask, current_cpu()) } {
        return false;
    }
    // SAFETY: `get_current` has no preconditions.
    let task = unsafe { bindings::get_current() };
    if let Some(save) = save {
        // Our own mask: others change it only under the scheduler's locks
        // (`sched_setaffinity`, CPU hotplug), a racy read for C's readers
        // too, and a mask changed meanwhile is one we may overwrite.
        // SAFETY: the current task is live; `save` is valid for writes.
        unsafe { save.write(core::ptr::addr_of!((*task).cpus_mask).read()) };
    }
    // SAFETY: the current task is live and ours to move; `mask` is valid
    // during the call.
    unsafe { bindings::set_cpus_allowed_ptr(task, mask) == 0 }
}

/// `hctx->cpumask`.
///
/// # Safety
///
/// `hctx` must be live.
unsafe fn hctx_cpumask(hctx: *mut bindings::blk_mq_hw_ctx) -> *const bindings::cpumask {
    // A `cpumask_var_t` is the mask itself (an array of one), or a
    // pointer to it with CONFIG_CPUMASK_OFFSTACK.
    #[cfg(not(CONFIG_CPUMASK_OFFSTACK))]
    // SAFETY: `hctx` is live (guaranteed by the caller).
    let mask = unsafe { core::ptr::addr_of!((*hctx).cpumask).cast::<bindings::cpumask>() };
    #[cfg(CONFIG_CPUMASK_OFFSTACK)]
    // SAFETY: as above.
    let mask = unsafe { (*hctx).cpumask }.cast_const();
    mask
}

/// The CPU the current task runs on (`raw_smp_processor_id()`, a macro):
/// stale as soon as it may be migrated, a hint for a choice that a
/// stale answer only makes needless.
fn current_cpu() -> u32 {
    // `task_cpu(current)`: the task's `thread_info.cpu` with
    // CONFIG_THREAD_INFO_IN_TASK, which every architecture with Rust
    // support has.
    // SAFETY: the current task is live; the field is read as C's
    // `READ_ONCE`.
    unsafe { core::ptr::addr_of!((*bindings::get_current()).thread_info.cpu).read_volatile() }
}

/// `cpumask_test_cpu(cpu, mask)`.
///
/// # Safety
///
/// `mask` must point to a valid mask.
unsafe fn cpumask_has(mask: *const bindings::cpumask, cpu: u32) -> bool {
    let bits = core::ffi::c_ulong::BITS;
    // SAFETY: `mask` is valid (guaranteed by the caller); a CPU number
    // beyond its words is in none of them.
    let word = unsafe { (*mask).bits.get((cpu / bits) as usize) };
    word.is_some_and(|w| w >> (cpu % bits) & 1 != 0)
}
