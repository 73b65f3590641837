//! Tests of the tick: idle detection, and hand-offs of risen limits.

use crate::host::testing::{give_back, take};
use crate::host::{HostTags, Refusal};
use crate::policy::Policy;
use crate::queue::QueueTags;
use crate::sync::AtomicU32;

#[test]
fn tick_hands_off_a_waiter_whose_limit_rose() {
    // Fair, 8 tags: q1 is refused at its share of 4 while q0 holds a
    // tag, which q0's put cannot hand to q1 (still at its share).
    // The tick that retires the idle q0 raises q1's limit to 8: it
    // hands q1 out, without waiting for a put.
    let h = HostTags::new(8, Policy::Fair).unwrap();
    h.set_idle_ns(0);
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let qs = [&q0, &q1];
    let t0 = take(&h, &q0, 1, 0);
    let t1 = take(&h, &q1, 4, 0);
    let hint = AtomicU32::new(0);
    assert_eq!(h.get(&q1, &hint, 1), Err(Refusal::Limited));
    assert_eq!(h.put(&q0, t0[0], &qs, 2), 0);
    assert_eq!(h.waiter_mask(), 0b10);
    // The first tick clears q0's busy mark, the second retires it.
    assert_eq!(h.tick(&qs, 3), 0);
    assert_eq!(h.tick(&qs, 4), 0b10);
    assert_eq!((h.active_queues(), h.waiter_mask()), (1, 0));
    give_back(&h, &q1, t1, &qs, 5);
}

#[test]
fn tick_deactivates_idle_queues_only() {
    let h = HostTags::new(8, Policy::None).unwrap();
    h.set_idle_ns(100);
    let q0 = QueueTags::new(0);
    let q1 = QueueTags::new(1);
    let q2 = QueueTags::new(2);
    let hint = AtomicU32::new(0);
    let all = [&q0, &q1, &q2];
    // q0 holds a tag throughout; q1 does one I/O.
    let t0 = h.get(&q0, &hint, 0).unwrap();
    let t1 = h.get(&q1, &hint, 0).unwrap();
    h.put(&q1, t1, &[&q0, &q1, &q2], 0);
    assert!(q0.is_busy() && q1.is_busy() && !q2.is_busy());
    // The tick turns the flag into time and clears it, except for a
    // queue holding tags (its put does not mark it).
    h.tick(&all, 10);
    assert_eq!((q0.last_active_ns(), q1.last_active_ns()), (10, 10));
    assert!(q0.is_busy() && !q1.is_busy());
    // q1 is deactivated by the first tick idle_ns after the last tick
    // that found it busy, not earlier.
    for now in (20..=100).step_by(10) {
        h.tick(&all, now);
        assert!(q1.is_active(), "deactivated early at {now}");
    }
    h.tick(&all, 110);
    assert!(q0.is_active() && !q1.is_active() && !q2.is_active());
    assert_eq!(h.active_queues(), 1);
    assert_eq!(q0.last_active_ns(), 110);

    // A queue that did I/O since the last tick is never deactivated by
    // that tick, even with an idle window of 0; the next tick does.
    h.set_idle_ns(0);
    let t1 = h.get(&q1, &hint, 999).unwrap();
    assert_eq!(h.active_queues(), 2, "re-activated by its next get");
    h.put(&q1, t1, &[&q0, &q1, &q2], 0);
    h.tick(&all, 1_000);
    assert!(q1.is_active());
    h.tick(&all, 1_000);
    assert!(!q1.is_active());

    // The put of a tag held across ticks: the tick after the put still
    // counts the queue as busy, so the idle time starts there.
    h.set_idle_ns(100);
    h.put(&q0, t0, &[&q0, &q1, &q2], 0);
    h.tick(&all, 1_010);
    assert_eq!(q0.last_active_ns(), 1_010);
    h.tick(&all, 1_100);
    assert!(q0.is_active(), "idle for less than idle_ns since its put");
    h.tick(&all, 1_110);
    assert!(!q0.is_active());
    assert_eq!(h.active_queues(), 0);

    // A waiting queue (bit pending) is not deactivated even when idle.
    let mut rest = take(&h, &q0, 8, 2_000);
    assert_eq!(h.get(&q2, &hint, 2_000), Err(Refusal::Exhausted));
    assert!(q2.is_starved() && q2.is_busy());
    h.tick(&all, 2_010);
    h.tick(&all, 10_000);
    assert!(q2.is_active() && q2.is_starved());
    assert_eq!(q2.last_active_ns(), 2_010);
    assert_eq!(h.active_queues(), 2);
    // Its bit is handed out by a put; then idleness deactivates it and
    // clears its starved and waiting marks.
    assert_eq!(h.put(&q0, rest.pop().unwrap(), &[&q0, &q1, &q2], 0), 0b100);
    h.tick(&all, 20_000);
    assert!(!q2.is_active() && !q2.is_starved() && !q2.is_waiting());
    assert_eq!(h.starved_queues(), 0);
    assert_eq!(h.active_queues(), 1);
    for t in rest {
        h.put(&q0, t, &[&q0, &q1, &q2], 0);
    }
    h.tick(&all, 40_000);
    assert_eq!(h.active_queues(), 1, "q0 held tags at the last tick");
    h.tick(&all, 40_100);
    assert_eq!(h.active_queues(), 0);
}
