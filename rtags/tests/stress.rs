//! Multi-threaded stress test (std threads): no tag is ever held twice,
//! counters settle exactly, and no refused worker waits forever (a lost
//! wake-up would hang a worker and trip the timeout).
#![cfg(not(loom))]

use rtags::bitmap::initial_hint;
use rtags::host::HostTags;
use rtags::policy::Policy;
use rtags::queue::QueueTags;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const THREADS: usize = 6;
const ITERS: usize = 30_000;

fn kick_all(kicks: &[AtomicBool], mask: u64) {
    for (i, k) in kicks.iter().enumerate() {
        if mask & (1 << i) != 0 {
            k.store(true, Ordering::SeqCst);
        }
    }
}

/// Sets the flag when dropped, also when unwinding from a failed check, so
/// that the maintenance thread stops and the test fails instead of hanging.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn run(policy: Policy, depth: u32) {
    run_with(policy, depth, true);
}

/// [`run`]; without `churn`, queues are never deactivated, nothing is
/// resized and nothing is shared, so that under `window` the windows stop
/// moving once every queue has one: only puts can then hand out the
/// waiters, of the tags of their windows.
fn run_with(policy: Policy, depth: u32, churn: bool) {
    let host = HostTags::new(depth, policy).unwrap();
    host.set_idle_ns(if churn { 0 } else { u64::MAX });
    if !churn {
        host.set_shared_pct(0).unwrap();
    }
    host.set_borrow_expiry_ns(1_000);
    let queues: Vec<QueueTags> = (0..THREADS as u32).map(QueueTags::new).collect();
    let owner: Vec<AtomicU32> = (0..1024).map(|_| AtomicU32::new(u32::MAX)).collect();
    let kicks: Vec<AtomicBool> = (0..64).map(|_| AtomicBool::new(false)).collect();
    let clock = AtomicU64::new(0);
    let refusals = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // Maintenance thread: ticks and resizes (and, under `window`,
        // shared percentage changes), handing back the waiters as a driver
        // must: those the tick returns, and under `window` every waiter
        // after a change that moves the windows.
        s.spawn(|| {
            let refs: Vec<&QueueTags> = queues.iter().collect();
            let mut i = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let now = clock.fetch_add(1, Ordering::Relaxed);
                kick_all(&kicks, host.tick(&refs, now));
                i = i.wrapping_add(1);
                if churn && i % 64 == 0 {
                    host.set_depth(depth - (i / 64) % 2).unwrap();
                    if policy == Policy::Window {
                        host.set_shared_pct((i / 128) % 3 * 20).unwrap();
                        kick_all(&kicks, host.take_waiters());
                    }
                }
                std::thread::yield_now();
            }
        });
        let _stop = SetOnDrop(&stop);
        let mut workers = Vec::new();
        for (id, q) in queues.iter().enumerate() {
            let (host, owner, kicks, clock, refusals, queues) =
                (&host, &owner, &kicks, &clock, &refusals, &queues);
            workers.push(s.spawn(move || {
                let hint = AtomicU32::new(initial_hint(id as u32));
                let mut held: Vec<u32> = Vec::new();
                let mut rng = id as u64 * 0x9e37_79b9 + 1;
                for _ in 0..ITERS {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    // Time moves on per operation; `get` reads it only when
                    // it needs it.
                    clock.fetch_add(1, Ordering::Relaxed);
                    if held.len() < 6 && rng % 3 != 0 {
                        kicks[id].store(false, Ordering::SeqCst);
                        match host.get(q, &hint, || clock.load(Ordering::Relaxed)) {
                            Ok(t) => {
                                let prev = owner[t as usize].swap(id as u32, Ordering::SeqCst);
                                assert_eq!(prev, u32::MAX, "tag {t} held by {prev} and {id}");
                                held.push(t);
                            }
                            Err(_) => {
                                refusals.fetch_add(1, Ordering::Relaxed);
                                // Give back our own tags (their puts may kick us).
                                for t in held.drain(..) {
                                    owner[t as usize].store(u32::MAX, Ordering::SeqCst);
                                    kick_all(
                                        kicks,
                                        host.put(q, t, queues, || clock.load(Ordering::Relaxed)),
                                    );
                                }
                                let start = Instant::now();
                                while !kicks[id].load(Ordering::SeqCst) {
                                    assert!(
                                        start.elapsed() < Duration::from_secs(20),
                                        "lost wake-up for queue {id}"
                                    );
                                    std::thread::yield_now();
                                }
                            }
                        }
                    } else if let Some(t) = held.pop() {
                        owner[t as usize].store(u32::MAX, Ordering::SeqCst);
                        kick_all(
                            kicks,
                            host.put(q, t, queues, || clock.load(Ordering::Relaxed)),
                        );
                    }
                }
                for t in held.drain(..) {
                    owner[t as usize].store(u32::MAX, Ordering::SeqCst);
                    kick_all(
                        kicks,
                        host.put(q, t, queues, || clock.load(Ordering::Relaxed)),
                    );
                }
            }));
        }
        for w in workers {
            w.join().unwrap();
        }
    });
    assert_eq!(host.in_use(), 0);
    assert!(queues.iter().all(|q| q.in_flight() == 0));
    assert_eq!(
        host.active_queues() as usize,
        queues.iter().filter(|q| q.is_active()).count()
    );
    assert_eq!(
        host.starved_queues() as usize,
        queues.iter().filter(|q| q.is_starved()).count()
    );
    let refs: Vec<&QueueTags> = queues.iter().collect();
    // Hand out any leftover waiter bits, then everything is idle.
    let leftover = host.waiter_mask();
    // The first tick consumes the busy flags, the second deactivates.
    host.set_idle_ns(0);
    host.tick(&refs, u64::MAX - 1);
    host.tick(&refs, u64::MAX);
    if leftover == 0 {
        assert_eq!(host.active_queues(), 0);
        assert_eq!(host.starved_queues(), 0);
    }
    eprintln!("{policy:?}: {} refusals", refusals.load(Ordering::Relaxed));
    let failures: u64 = queues.iter().map(|q| q.failures()).sum();
    assert_eq!(failures, refusals.load(Ordering::Relaxed));
}

/// Every registered policy, with room to share (12 tags for 6 queues) and
/// with fewer tags than queues.
#[test]
fn stress_every_policy() {
    for policy in Policy::ALL {
        for depth in [12, 5] {
            run(policy, depth);
        }
    }
}

/// `window` with stable windows of two tags and nothing shared: a put that
/// did not hand a waiting queue the tag of its window would leave it
/// waiting (no tick hands it out once every queue has its window).
#[test]
fn stress_window_stable() {
    run_with(Policy::Window, 12, false);
}

/// `window` with 7 tags for 6 queues: windows of one tag and a shared part
/// of one or two, or no windows at all, as the shared percentage changes.
#[test]
fn stress_window_tight() {
    run(Policy::Window, 7);
}
