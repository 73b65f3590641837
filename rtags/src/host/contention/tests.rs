//! Tests of Borrow's contention: starved queues and the expiry window.

use super::{stamp, DRAINED};
use crate::host::testing::{starve_q1, take, Counting};
use crate::host::{HostTags, Refusal};
use crate::policy::Policy;
use crate::queue::QueueTags;
use crate::sync::AtomicU32;
use std::vec::Vec;

#[test]
fn put_hands_off_a_borrow_waiter_when_contention_ends() {
    // Borrow, 8 tags, expiry 1000: q1 starves (refused with no tag
    // while below its share), the fair share applies to q0, which is
    // refused at it; q1 drains at 2_000.
    let h = HostTags::new(8, Policy::Borrow).unwrap();
    h.set_borrow_expiry_ns(1_000);
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let qs = [&q0, &q1];
    let hint = AtomicU32::new(0);
    let t1 = h.get(&q1, &hint, 0).unwrap();
    h.put(&q1, t1, &qs, 0);
    let mut t0 = take(&h, &q0, 8, 0);
    assert_eq!(h.get(&q1, &hint, 100), Err(Refusal::Exhausted));
    assert!(q1.is_starved());
    let t1 = loop {
        h.put(&q0, t0.pop().unwrap(), &qs, 200);
        if let Ok(t) = h.get(&q1, &hint, 200) {
            break t;
        }
    };
    assert_eq!(h.get(&q0, &hint, 300), Err(Refusal::Limited));
    // The drain's put leaves q0's bit: until the next tick starts the
    // drain's window, and then for the window (2_000..3_000), q0 is
    // still limited to its share, which it holds.
    assert_eq!(h.put(&q1, t1, &qs, 2_000), 0);
    assert_eq!(h.waiter_mask(), 0b01);
    h.tick(&qs, 2_000);
    let t = h.get(&q1, &hint, 2_500).unwrap();
    assert_eq!(h.put(&q1, t, &qs, 2_500), 0, "the drain's window");
    assert_eq!(h.waiter_mask(), 0b01);
    // After the window the limit is the depth: the next put hands q0
    // out although it still holds its share.
    let t = h.get(&q1, &hint, 3_500).unwrap();
    assert_eq!(h.put(&q1, t, &qs, 3_500), 0b01);
    for t in t0 {
        h.put(&q0, t, &qs, 4_000);
    }
    assert_eq!(h.in_use(), 0);
}

/// A starved queue that gets its fair share and keeps it, without
/// draining, is no longer starved after a tick period without another
/// refusal below its share: the fair share then lasts the window, not
/// for as long as that queue does I/O.
#[test]
fn tick_unstarves_a_queue_that_holds_its_share() {
    let h = HostTags::new(64, Policy::Borrow).unwrap();
    h.set_borrow_expiry_ns(100);
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let all = [&q0, &q1];
    let hint = AtomicU32::new(0);
    let mut theirs = starve_q1(&h, &q0, &q1, &hint);
    assert!(q1.is_starved());
    // q1 gets 31 tags, one short of its share (32).
    let mut mine = Vec::new();
    for _ in 0..31 {
        h.put(&q0, theirs.pop().unwrap(), &all, 10);
        mine.push(h.get(&q1, &hint, 20).unwrap());
    }
    // Refused below its share in this period: still starved.
    h.tick(&all, 1_000);
    assert!(q1.is_starved());
    // Below its share: still starved.
    h.tick(&all, 2_000);
    assert!(q1.is_starved());
    // At its share, not refused below it since the last tick: no
    // longer starved, and the window starts.
    h.put(&q0, theirs.pop().unwrap(), &all, 2_000);
    mine.push(h.get(&q1, &hint, 2_500).unwrap());
    assert_eq!(h.get(&q1, &hint, 2_500), Err(Refusal::Limited));
    assert!(q1.is_starved(), "a refusal at its limit");
    h.tick(&all, 3_000);
    assert!(!q1.is_starved());
    assert_eq!(h.starved_queues(), 0);
    assert!(h.is_contended(3_099));
    assert!(!h.is_contended(3_100));
    assert_eq!(h.limit(&q1, 3_100), 64);
    // Refused below its share again (q0 took everything back): a tick
    // in the same period keeps the mark.
    for t in mine.drain(..) {
        h.put(&q1, t, &all, 3_100);
    }
    while let Ok(t) = h.get(&q0, &hint, 3_200) {
        theirs.push(t);
    }
    mine.push({
        h.put(&q0, theirs.pop().unwrap(), &all, 3_200);
        h.get(&q1, &hint, 3_300).unwrap()
    });
    assert_eq!(h.get(&q1, &hint, 3_300), Err(Refusal::Exhausted));
    while q1.in_flight() < 32 {
        h.put(&q0, theirs.pop().unwrap(), &all, 3_300);
        mine.push(h.get(&q1, &hint, 3_400).unwrap());
    }
    h.tick(&all, 4_000);
    assert!(q1.is_starved(), "refused below its share in this period");
    h.tick(&all, 5_000);
    assert!(!q1.is_starved());
    for t in mine {
        h.put(&q1, t, &all, 5_000);
    }
    for t in theirs {
        h.put(&q0, t, &all, 5_000);
    }
}

#[test]
fn borrow_reads_clock_only_in_expiry_window() {
    let h = HostTags::new(8, Policy::Borrow).unwrap();
    h.set_borrow_expiry_ns(1_000);
    let clock = Counting::new(0);
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let hint = AtomicU32::new(0);
    // A single active queue: no contention check at all.
    let held = take(&h, &q0, 8, 0);
    assert_eq!(h.limit(&q0, &clock), 8);
    assert_eq!(clock.take_reads(), 0);
    // q1 refused below its share at 1_000: recorded.
    clock.now.set(1_000);
    assert_eq!(h.get(&q1, &hint, &clock), Err(Refusal::Exhausted));
    assert_eq!(clock.take_reads(), 1);
    // q1 is handed out by these puts without a clock read: starved, it
    // keeps the host contended without one.
    for t in held {
        h.put(&q0, t, &[&q0, &q1], &clock);
    }
    assert_eq!(h.waiting_queues(), 0);
    assert_eq!(clock.take_reads(), 0);
    // Starved: contended without a clock read.
    let t = h.get(&q1, &hint, &clock).unwrap();
    assert!(h.is_contended(&clock));
    assert_eq!(clock.take_reads(), 0);
    // q1 drains: no longer starved, and its put reads no clock; until
    // the next tick starts the drain's window, a check needs none
    // either (q0 is refused at its share: not starved).
    h.put(&q1, t, &[&q0, &q1], &clock);
    assert_eq!(h.starved_queues(), 0);
    let mut held = take(&h, &q0, 4, 1_500);
    assert_eq!(h.get(&q0, &hint, &clock), Err(Refusal::Limited));
    assert_eq!(clock.take_reads(), 0);
    // In the window, from the tick on: the clock decides. A refusal
    // reads it at most twice: in the first attempt, and once in the
    // slow path (for its re-check here).
    h.tick(&[&q0, &q1], 1_500);
    clock.now.set(1_500);
    assert_eq!(h.get(&q0, &hint, &clock), Err(Refusal::Limited));
    assert_eq!(clock.take_reads(), 2);
    // A put that finds q0 waiting inside the window reads the clock
    // once, for its hand-off: q0 is below its share again.
    clock.now.set(1_600);
    let t = held.pop().unwrap();
    assert_eq!(h.put(&q0, t, &[&q0, &q1], &clock), 1);
    assert_eq!(clock.take_reads(), 1);
    held.push(h.get(&q0, &hint, 1_600).unwrap());
    clock.now.set(2_499);
    assert_eq!(h.limit(&q0, &clock), 4);
    assert_eq!(clock.take_reads(), 1);
    // After the window the first check forgets the refusal; later
    // checks need no clock.
    clock.now.set(2_500);
    held.push(h.get(&q0, &hint, &clock).unwrap());
    assert_eq!(clock.take_reads(), 1);
    for _ in 0..3 {
        held.push(h.get(&q0, &hint, &clock).unwrap());
    }
    assert!(!h.is_contended(&clock));
    assert_eq!(h.limit(&q0, &clock), 8);
    assert_eq!(clock.take_reads(), 0);
    for t in held {
        h.put(&q0, t, &[&q0, &q1], 0);
    }
}

/// A refusal at the end of time records a stamp, never the drain
/// marker: a check finds its window over instead of waiting for a tick.
#[test]
fn a_stamp_is_never_the_drain_marker() {
    assert_eq!(stamp(0), 1);
    assert_eq!(stamp(DRAINED - 2), DRAINED - 1);
    assert_eq!(stamp(DRAINED - 1), DRAINED - 1);
    assert_eq!(stamp(u64::MAX), DRAINED - 1);
    let h = HostTags::new(8, Policy::Borrow).unwrap();
    h.set_idle_ns(0);
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let all = [&q0, &q1];
    let hint = AtomicU32::new(0);
    let t = h.get(&q1, &hint, 0).unwrap();
    h.put(&q1, t, &all, 0);
    let mut held = take(&h, &q0, 8, 0);
    let end = u64::MAX - 1;
    assert_eq!(h.get(&q1, &hint, end), Err(Refusal::Exhausted));
    // q1's bit is handed out, then it goes idle: no longer starved,
    // without a drain.
    assert_eq!(h.put(&q0, held.pop().unwrap(), &all, 0), 0b10);
    h.tick(&all, end);
    h.tick(&all, end);
    assert!(!q1.is_active() && h.starved_queues() == 0);
    assert!(!h.is_contended(u64::MAX), "the refusal's window is over");
}

/// `limit` is a read: a window found over is not forgotten (the limit
/// cache keeps the fair share), a drain's marker is not stamped.
#[test]
fn limit_reads_without_changing_anything() {
    let h = HostTags::new(64, Policy::Borrow).unwrap();
    h.set_borrow_expiry_ns(100);
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let all = [&q0, &q1];
    let hint = AtomicU32::new(0);
    let mut held = starve_q1(&h, &q0, &q1, &hint);
    h.put(&q0, held.pop().unwrap(), &all, 10);
    let t = h.get(&q1, &hint, 10).unwrap();
    h.put(&q1, t, &all, 10);
    // The drain awaits its tick, whatever the time of the read.
    assert_eq!(h.limit(&q0, 1_000), 32);
    h.tick(&all, 20);
    // From the tick on, for 100 ns.
    assert_eq!(h.limit(&q0, 119), 32);
    assert_eq!(h.limit(&q0, 120), 64);
    assert_eq!(h.limit_bound(), 32, "a read lifted the limit cache");
    assert_eq!(h.limit(&q0, 119), 32, "a read forgot the window");
    assert!(!h.is_contended(120));
    assert_eq!(h.limit_bound(), u32::MAX);
    for t in held {
        h.put(&q0, t, &all, 120);
    }
}
