//! Tests of the host's configuration and of the `window` policy through it.

use super::testing::take;
use super::*;
use std::vec::Vec;

#[test]
fn new_and_config() {
    assert_eq!(
        HostTags::new(0, Policy::Fair).err(),
        Some(Error::InvalidDepth)
    );
    assert_eq!(
        HostTags::new(1025, Policy::Fair).err(),
        Some(Error::InvalidDepth)
    );
    let h = HostTags::new(64, Policy::Borrow).unwrap();
    assert_eq!(h.depth(), 64);
    assert_eq!(h.policy(), Policy::Borrow);
    assert_eq!(h.borrow_expiry_ns(), DEFAULT_BORROW_EXPIRY_NS);
    assert_eq!(h.idle_ns(), DEFAULT_IDLE_NS);
    h.set_policy(Policy::None);
    h.set_borrow_expiry_ns(5);
    h.set_idle_ns(7);
    assert_eq!(h.set_depth(0), Err(Error::InvalidDepth));
    h.set_depth(32).unwrap();
    assert_eq!(
        (h.policy(), h.borrow_expiry_ns(), h.idle_ns(), h.depth()),
        (Policy::None, 5, 7, 32)
    );
    assert_eq!(h.active_queues(), 0);
    assert_eq!(h.waiting_queues(), 0);
    assert!(!h.is_contended(0));
    assert_eq!(Refusal::Limited.as_str(), "limited");
    assert_eq!(Refusal::Exhausted.as_str(), "exhausted");
}

/// A `Window` host of `depth` tags with `queues` queues, all active and
/// laid out by a tick (busy, so that the tick keeps them).
fn windowed(depth: u32, pct: u32, queues: u32) -> (HostTags, Vec<QueueTags>) {
    let h = HostTags::new(depth, Policy::Window).unwrap();
    h.set_shared_pct(pct).unwrap();
    let qs: Vec<QueueTags> = (0..queues).map(QueueTags::new).collect();
    let hint = AtomicU32::new(0);
    for q in &qs {
        let t = h.get(q, &hint, 0).unwrap();
        h.put(q, t, &qs, 0);
    }
    h.tick(&qs, 1);
    (h, qs)
}

#[test]
fn window_places_tags_in_window_then_shared_part() {
    // 64 tags, 25% shared: 16 shared, windows of 24, each with a slice
    // of 8 shared tags.
    let (h, qs) = windowed(64, 25, 2);
    assert_eq!(h.window(&qs[0]), Some(0..24));
    assert_eq!(h.window(&qs[1]), Some(24..48));
    assert_eq!(h.window_layout().shared(), 48..64);
    assert_eq!(h.shared_slice(&qs[0]), 48..56);
    assert_eq!(h.shared_slice(&qs[1]), 56..64);
    assert_eq!(h.limit(&qs[0], 0), 32);
    assert_eq!(h.limit_bound(), 0, "no fast path under window");
    let hint = AtomicU32::new(5);
    let mut mine = Vec::new();
    for i in 0..32 {
        let t = h.get(&qs[0], &hint, 0).unwrap();
        let expected = if i < 24 { 0..24 } else { 48..56 };
        assert!(expected.contains(&t), "allocation {i}: tag {t}");
        mine.push(t);
    }
    // Its part is full: refused although queue 1's window and slice
    // are free.
    assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Limited));
    assert_eq!(h.in_use(), 32);
    // Queue 1 has its whole window and slice, and nothing else.
    let theirs = take(&h, &qs[1], 32, 0);
    assert!(theirs
        .iter()
        .all(|t| (24..48).contains(t) || (56..64).contains(t)));
    assert_eq!(h.get(&qs[1], &hint, 0), Err(Refusal::Limited));
    assert_eq!(h.waiter_mask(), 0b11);
    for t in theirs {
        h.put(&qs[1], t, &qs, 0);
    }
    for t in mine {
        h.put(&qs[0], t, &qs, 0);
    }
    assert_eq!(h.in_use(), 0);
}

#[test]
fn window_hands_a_tag_to_the_queues_that_can_use_it() {
    let (h, qs) = windowed(64, 25, 3);
    let w: Vec<Range<u32>> = qs.iter().map(|q| h.window(q).unwrap()).collect();
    assert_eq!(w, [0..16, 16..32, 32..48]);
    let s: Vec<Range<u32>> = qs.iter().map(|q| h.shared_slice(q)).collect();
    assert_eq!(s, [48..54, 53..59, 58..64]);
    let hint = AtomicU32::new(0);
    // Every queue fills its part (tags 53 and 58 go to whoever asks
    // first: queue 0 takes 53, queue 1 takes 58).
    let q0 = take(&h, &qs[0], 22, 0);
    let q1 = take(&h, &qs[1], 21, 0);
    let q2 = take(&h, &qs[2], 21, 0);
    assert!(q0[16..].iter().all(|t| (48..54).contains(t)));
    assert!(q1[16..].iter().all(|t| (53..59).contains(t)));
    assert!(q1.contains(&58) && !q1.contains(&53));
    assert_eq!(h.in_use(), 64);
    assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Limited));
    assert_eq!(h.waiter_mask(), 0b001);
    // A tag of queue 1's window: nobody else may use it, queue 0 keeps
    // waiting (its bit stays for a tag it can use).
    assert_eq!(h.put(&qs[1], q1[0], &qs, 0), 0);
    assert_eq!(h.waiter_mask(), 0b001);
    // Queue 1 refused too (taking its own tag back first).
    assert_eq!(h.get(&qs[1], &hint, 0), Ok(q1[0]));
    assert_eq!(h.get(&qs[1], &hint, 0), Err(Refusal::Limited));
    assert_eq!(h.waiter_mask(), 0b011);
    // A tag of queue 0's window goes to queue 0 alone.
    assert_eq!(h.put(&qs[0], q0[3], &qs, 0), 0b001);
    assert_eq!(h.waiter_mask(), 0b010);
    assert_eq!(h.get(&qs[0], &hint, 0), Ok(q0[3]));
    assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Limited));
    // A shared tag goes to the queues whose slice holds it: 53 to
    // queues 0 and 1, 50 to queue 0 alone.
    assert_eq!(h.put(&qs[0], 53, &qs, 0), 0b011);
    assert_eq!(h.get(&qs[1], &hint, 0), Ok(53));
    assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Limited));
    assert_eq!(h.get(&qs[1], &hint, 0), Err(Refusal::Limited));
    assert_eq!(h.put(&qs[0], 50, &qs, 0), 0b001);
    assert_eq!(h.waiter_mask(), 0b010);
    // Queue 2's window tag with queue 2 not waiting: nobody to wake.
    assert_eq!(h.put(&qs[2], q2[0], &qs, 0), 0);
    assert_eq!(h.waiter_mask(), 0b010);
}

#[test]
fn window_lone_queue_uses_everything() {
    for pct in [0, 10, 100] {
        let (h, qs) = windowed(40, pct, 1);
        assert_eq!(h.limit(&qs[0], 0), 40);
        let all = take(&h, &qs[0], 40, 0);
        let hint = AtomicU32::new(0);
        assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Exhausted));
        for t in all {
            h.put(&qs[0], t, &qs, 0);
        }
    }
}

#[test]
fn window_ticks_hand_back_the_waiters_when_windows_move() {
    let (h, mut qs) = windowed(32, 0, 1);
    h.set_idle_ns(100);
    assert_eq!(h.window(&qs[0]), Some(0..32));
    let hint = AtomicU32::new(0);
    let held = take(&h, &qs[0], 32, 2);
    // A new queue has no window until the next tick, and with nothing
    // shared no tag at all: it waits for the tick.
    qs.push(QueueTags::new(1));
    assert_eq!(h.get(&qs[1], &hint, 3), Err(Refusal::Limited));
    assert_eq!(h.window(&qs[1]), None);
    assert_eq!(h.limit(&qs[1], 3), 0);
    assert_eq!(h.waiter_mask(), 0b10);
    assert_eq!(h.tick(&qs, 4), 0b10, "the windows moved");
    assert_eq!(h.window(&qs[1]), Some(16..32));
    // Its window's tags, held by queue 0, are handed to it.
    assert_eq!(h.get(&qs[1], &hint, 5), Err(Refusal::Limited));
    let theirs = *held.iter().find(|t| (16..32).contains(*t)).unwrap();
    assert_eq!(h.put(&qs[0], theirs, &qs, 0), 0b10);
    assert_eq!(h.get(&qs[1], &hint, 6), Ok(theirs));
    // A stable layout hands nothing back.
    assert_eq!(h.get(&qs[1], &hint, 6), Err(Refusal::Limited));
    assert_eq!(h.tick(&qs, 7), 0);
    assert_eq!(h.waiter_mask(), 0b10);
    // Queue 1 idles out: the windows move again.
    h.put(&qs[1], theirs, &qs, 0);
    for &t in &held {
        if t != theirs {
            h.put(&qs[0], t, &qs, 0);
        }
    }
    assert_eq!(h.waiter_mask(), 0, "queue 1 was handed out by a put");
    assert_eq!(h.tick(&qs, 8), 0);
    assert_eq!(h.tick(&qs, 200), 0, "nobody waits: nothing to hand out");
    assert!(!qs[1].is_active() && !qs[0].is_active());
    assert_eq!(h.window_layout().windows, 0);
    // Other policies' ticks never hand out.
    h.set_policy(Policy::Fair);
    assert_eq!(h.get(&qs[0], &hint, 300).map(|_| ()), Ok(()));
    assert_eq!(h.tick(&qs, 301), 0);
}

#[test]
fn window_settings() {
    let h = HostTags::new(64, Policy::Fair).unwrap();
    assert_eq!(h.shared_pct(), crate::window::DEFAULT_SHARED_PCT);
    assert_eq!(h.set_shared_pct(101), Err(Error::InvalidPercent));
    assert_eq!(h.shared_pct(), crate::window::DEFAULT_SHARED_PCT);
    h.set_shared_pct(0).unwrap();
    h.set_shared_pct(100).unwrap();
    assert_eq!(h.shared_pct(), 100);
    // take_waiters takes every bit, once.
    let q = QueueTags::new(3);
    let all = take(&h, &q, 64, 0);
    assert_eq!(h.get(&q, &AtomicU32::new(0), 0), Err(Refusal::Exhausted));
    assert_eq!(h.take_waiters(), 0b1000);
    assert_eq!(h.take_waiters(), 0);
    for t in all {
        assert_eq!(h.put(&q, t, &[&q], 0), 0);
    }
    // Switching to window starts without windows.
    let (h, qs) = windowed(64, 10, 2);
    assert_eq!(h.window_layout().windows, 2);
    h.set_policy(Policy::None);
    h.set_policy(Policy::Window);
    assert_eq!(h.window_layout().windows, 0);
    assert_eq!(h.limit(&qs[0], 0), 64);
    h.tick(&qs, 2);
    assert_eq!(h.window_layout().windows, 2);
}
