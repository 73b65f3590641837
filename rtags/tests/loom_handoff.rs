//! loom model of the hand-off from a freed host tag to a refused queue,
//! against blk-mq's dispatch path (`blk_mq_dispatch_rq_list()` in 6.12).
//!
//! Dispatcher D, on the starved queue, dispatching from `hctx->dispatch`:
//!   mark `SCHED_RESTART` (`blk_mq_sched_mark_restart_hctx()`: `set_bit()`,
//!   no barrier of its own); get a host tag (rtags) -> refused with
//!   `BLK_STS_DEV_RESOURCE`; splice the request back onto `hctx->dispatch`;
//!   `smp_mb()`; if `SCHED_RESTART` is clear, queue a run, else nothing
//!   (DEV_RESOURCE arms no delayed run: the driver promised to restart the
//!   queue).
//! Putter P, completing the request that held the only tag: put the tag
//!   (rtags, returns the waiters) and hand a waiter to the restart thread
//!   (rnull's `kapi::wake`: a `Release` `fetch_or` of its pending mask,
//!   which the thread takes with an `Acquire` swap; here the thread's
//!   spawn, which orders the same way). Then P takes the tag again for a
//!   request of its own and frees it once more, so that D's re-check may
//!   fail after P's first hand-off took D's bit.
//! Restart thread R, on a third CPU: the restart protocol
//!   (`blk_mq_sched_restart()`): if `SCHED_RESTART` is set, clear it,
//!   `smp_mb()`, then `blk_mq_run_hw_queue(hctx, true)`: if it sees work
//!   (`blk_mq_hw_queue_need_run()`, a plain read of the list), queue a run.
//! A queued run is kblockd work: it runs later and dispatches what is on
//! the list then (or is refused again, which starts a new episode).
//!
//! The property: the request is dispatched at once or a run is queued;
//! nothing is left waiting for a run nobody queued. It needs the mark ordered before
//! everything R does for the waiter bit that D's refusal set: the
//! refusal's `fetch_or` of the bit is `Release` and the hand-off's
//! `fetch_and` `Acquire` (see "The restart" in rtags' design notes). With
//! weaker orderings R may not see the mark: it then neither clears it nor
//! runs the queue, and D, seeing its own mark, queues nothing. (On weakly
//! ordered CPUs the same missing order lets an unconditional clear, as
//! rnull's, land before the mark; loom orders the writes of a location as
//! it runs them, so the model checks it through R's test of the mark.)
//! The second model shows that a plain run (no `SCHED_RESTART` clear) can
//! leave the request.
#![cfg(loom)]

use loom::sync::atomic::{fence, AtomicBool, AtomicU32, Ordering};
use loom::sync::Arc;
use loom::thread;
use rtags::host::HostTags;
use rtags::policy::Policy;
use rtags::queue::QueueTags;

struct Hctx {
    host: HostTags,
    /// [holder of the tag, starved queue]
    q: [QueueTags; 2],
    /// The refused request is on `hctx->dispatch`.
    on_dispatch_list: AtomicBool,
    /// `BLK_MQ_S_SCHED_RESTART` of the starved queue's hctx.
    restart: AtomicBool,
    /// A run of the hctx is queued (kblockd work).
    run_queued: AtomicBool,
}

/// The restart of the starved queue's hctx after a hand-off, on the
/// thread that runs it: with `restart_protocol`, `blk_mq_sched_restart()`
/// (test_bit, then clear_bit and smp_mb(): `__blk_mq_sched_restart()`),
/// then `blk_mq_run_hw_queue(hctx, true)`; without, the run alone.
fn restart(h: &Hctx, restart_protocol: bool) {
    if restart_protocol {
        if !h.restart.load(Ordering::Relaxed) {
            return;
        }
        h.restart.fetch_and(false, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }
    // blk_mq_hw_queue_need_run(): list_empty_careful(), a plain read.
    if h.on_dispatch_list.load(Ordering::Relaxed) {
        h.run_queued.store(true, Ordering::Relaxed);
    }
}

/// Outcome of one execution: the request was dispatched at once, or a run
/// of its hctx was queued (which dispatches it, or is refused again and
/// starts a new episode).
fn handoff(restart_protocol: bool) -> bool {
    let host = HostTags::new(1, Policy::None).unwrap();
    host.set_idle_ns(0);
    let h = Arc::new(Hctx {
        host,
        q: [QueueTags::new(0), QueueTags::new(1)],
        on_dispatch_list: AtomicBool::new(false),
        restart: AtomicBool::new(false),
        run_queued: AtomicBool::new(false),
    });
    let hint = AtomicU32::new(0);
    let held = h.host.get(&h.q[0], &hint, 0).unwrap();

    let d = h.clone();
    let dispatcher = thread::spawn(move || {
        // blk_mq_sched_mark_restart_hctx(): set_bit, no barrier of its own.
        d.restart.fetch_or(true, Ordering::Relaxed);
        let hint = AtomicU32::new(0);
        if d.host.get(&d.q[1], &hint, 1).is_ok() {
            return true;
        }
        // list_splice_tail_init() under hctx->lock, then smp_mb().
        d.on_dispatch_list.store(true, Ordering::Release);
        fence(Ordering::SeqCst);
        if !d.restart.load(Ordering::Relaxed) {
            d.run_queued.store(true, Ordering::Relaxed);
        }
        false
    });

    // The holder frees its tag; a waiter it hands out is restarted by the
    // restart thread (its spawn orders it after the put, as the waker's
    // Release/Acquire pair does). Then the holder takes the tag again (a
    // new request), so that the refused queue's re-check may fail after
    // that hand-off, and frees it once more.
    let waiters = h.host.put(&h.q[0], held, &h.q, 1);
    let restarter = (waiters & h.q[1].waiter_bit() != 0).then(|| {
        let r = h.clone();
        thread::spawn(move || restart(&r, restart_protocol))
    });
    if let Ok(again) = h.host.get(&h.q[0], &hint, 2) {
        if h.host.put(&h.q[0], again, &h.q, 2) & h.q[1].waiter_bit() != 0 {
            restart(&h, restart_protocol);
        }
    }
    let dispatched_at_once = dispatcher.join().unwrap();
    if let Some(r) = restarter {
        r.join().unwrap();
    }
    dispatched_at_once || h.run_queued.load(Ordering::Relaxed)
}

#[test]
fn restart_protocol_always_dispatches_the_refused_request() {
    loom::model(|| {
        assert!(
            handoff(true),
            "refused request left with no run queued after its tag was freed"
        );
    });
}

#[test]
fn plain_run_can_leave_the_refused_request() {
    static LOST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    loom::model(|| {
        if !handoff(false) {
            LOST.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    assert!(
        LOST.load(std::sync::atomic::Ordering::Relaxed),
        "the model no longer finds the race a plain run has"
    );
}
