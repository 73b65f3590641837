//! loom model of the hand-off from a freed host tag to a refused queue,
//! against blk-mq's dispatch path (`blk_mq_dispatch_rq_list()` in 6.12).
//!
//! Dispatcher D, on the starved queue, dispatching from `hctx->dispatch`:
//!   mark `SCHED_RESTART` (`blk_mq_sched_mark_restart_hctx`); get a host tag
//!   (rtags) -> refused with `BLK_STS_DEV_RESOURCE`; splice the request
//!   back onto `hctx->dispatch`; `smp_mb()`; if `SCHED_RESTART` is clear,
//!   queue a run, else nothing (DEV_RESOURCE arms no delayed run: the
//!   driver promised to restart the queue).
//! Waker W, completing the request that held the only tag:
//!   put the tag (rtags, returns the waiters); for a waiter, the restart
//!   protocol (`rnull/kapi/wake.rs`): clear `SCHED_RESTART`, `smp_mb()`,
//!   then `blk_mq_run_hw_queue(hctx, true)`: if it sees work
//!   (`blk_mq_hw_queue_need_run()`, a plain read of the list), queue a run.
//! A queued run is kblockd work: it runs later, after both, and dispatches
//! what is on the list then.
//!
//! The property: the request is dispatched by a queued run; nothing is left
//! waiting for a run nobody queued. The second model shows that a plain
//! run (no `SCHED_RESTART` clear, what rnull did before) can leave it.
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

/// Outcome of one execution: the request was dispatched.
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
        d.restart.store(true, Ordering::Relaxed);
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

    let waiters = h.host.put(&h.q[0], held, &h.q, 1);
    if waiters & h.q[1].waiter_bit() != 0 {
        if restart_protocol {
            h.restart.store(false, Ordering::Relaxed);
            fence(Ordering::SeqCst);
        }
        // blk_mq_hw_queue_need_run(): list_empty_careful(), a plain read.
        if h.on_dispatch_list.load(Ordering::Relaxed) {
            h.run_queued.store(true, Ordering::Relaxed);
        }
    }
    let dispatched_at_once = dispatcher.join().unwrap();
    if dispatched_at_once {
        return true;
    }
    // The queued run (kblockd), after both: the freed tag is there for it.
    if h.run_queued.load(Ordering::Relaxed) && h.on_dispatch_list.load(Ordering::Acquire) {
        let hint = AtomicU32::new(0);
        return h.host.get(&h.q[1], &hint, 2).is_ok();
    }
    false
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
