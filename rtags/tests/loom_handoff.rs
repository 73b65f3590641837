//! loom model of the hand-off from a freed host tag to a refused queue,
//! against blk-mq's dispatch path (`blk_mq_dispatch_rq_list()` in 6.12).
//!
//! Dispatcher D, on the starved queue (its `SCHED_RESTART` already set, as
//! when it dispatches from `hctx->dispatch`):
//!   get a host tag (rtags) -> refused; splice the request onto
//!   `hctx->dispatch`; `smp_mb()`; if `SCHED_RESTART` is clear, re-run the
//!   queue (take the request back and dispatch it), else arm the 3 ms
//!   delayed run.
//! Waker W, completing the request that held the only tag:
//!   put the tag (rtags, returns the waiters); for a waiter, the restart
//!   protocol (`rnull/kapi/wake.rs`): clear `SCHED_RESTART`, `smp_mb()`, run
//!   the queue if it has work (`blk_mq_hw_queue_need_run()`).
//!
//! The restart protocol must never leave the request to the 3 ms delayed
//! run; a plain run (what rnull did before) can, which the second model
//! shows by finding that interleaving.
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
    /// The request got a tag and was dispatched.
    dispatched: AtomicBool,
}

impl Hctx {
    /// A queue run: takes the request off `hctx->dispatch` (under
    /// `hctx->lock` in blk-mq; a swap here) and dispatches it if a tag is
    /// free. A refusal here would loop again through the same protocol;
    /// with one tag freed and one request waiting it does not happen.
    fn run(&self) {
        if self.on_dispatch_list.swap(false, Ordering::AcqRel) {
            let hint = AtomicU32::new(0);
            match self.host.get(&self.q[1], &hint, 2) {
                Ok(_) => self.dispatched.store(true, Ordering::Relaxed),
                // Put back for the next run.
                Err(_) => self.on_dispatch_list.store(true, Ordering::Release),
            }
        }
    }
}

/// Outcome of one execution: dispatched without the delayed run, or not.
fn handoff(restart_protocol: bool) -> bool {
    let host = HostTags::new(1, Policy::None).unwrap();
    host.set_idle_ns(0);
    let h = Arc::new(Hctx {
        host,
        q: [QueueTags::new(0), QueueTags::new(1)],
        on_dispatch_list: AtomicBool::new(false),
        restart: AtomicBool::new(true),
        dispatched: AtomicBool::new(false),
    });
    let hint = AtomicU32::new(0);
    let held = h.host.get(&h.q[0], &hint, 0).unwrap();

    let d = h.clone();
    let dispatcher = thread::spawn(move || {
        let hint = AtomicU32::new(0);
        match d.host.get(&d.q[1], &hint, 1) {
            Ok(_) => {
                d.dispatched.store(true, Ordering::Relaxed);
                false
            }
            Err(_) => {
                // list_splice_tail_init() under hctx->lock, then smp_mb().
                d.on_dispatch_list.store(true, Ordering::Release);
                fence(Ordering::SeqCst);
                if !d.restart.load(Ordering::Relaxed) {
                    d.run();
                    false
                } else {
                    // blk_mq_delay_run_hw_queue(hctx, BLK_MQ_RESOURCE_DELAY)
                    true
                }
            }
        }
    });

    let waiters = h.host.put(&h.q[0], held);
    if waiters & h.q[1].waiter_bit() != 0 {
        if restart_protocol {
            h.restart.store(false, Ordering::Relaxed);
            fence(Ordering::SeqCst);
        }
        // blk_mq_run_hw_queue(): runs only if it sees work.
        h.run();
    }
    let armed_delay = dispatcher.join().unwrap();
    let dispatched = h.dispatched.load(Ordering::Relaxed);
    // Whoever dispatched it, a request left on the list with the delayed
    // run armed waits 3 ms after a tag it could use was freed.
    dispatched || !armed_delay
}

#[test]
fn restart_protocol_never_waits_for_the_delayed_run() {
    loom::model(|| {
        assert!(
            handoff(true),
            "refused request left to blk-mq's 3 ms delayed run"
        );
    });
}

#[test]
fn plain_run_can_leave_the_request_to_the_delayed_run() {
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
