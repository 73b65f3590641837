//! Tests of allocation.

use crate::host::testing::{take, Counting};
use crate::host::{HostTags, Refusal};
use crate::policy::Policy;
use crate::queue::QueueTags;
use crate::sync::AtomicU32;
use core::cell::Cell;
use std::vec::Vec;

#[test]
fn a_watched_grant_is_reported_once_from_the_slow_path() {
    let h = HostTags::new(2, Policy::None).unwrap();
    let q = QueueTags::new(0);
    let hint = AtomicU32::new(0);
    let seen = Cell::new(0);
    let get = |now| h.get_watching(&q, &hint, now, || seen.set(seen.get() + 1));
    let a = get(0).unwrap();
    let b = get(0).unwrap();
    assert_eq!(seen.get(), 0, "nothing watched");
    // Refused, then watched (as rnull does after a refusal): the
    // refusal itself reports nothing, the next tag does, once.
    assert!(get(1).is_err());
    q.watch_next_grant();
    assert!(get(1).is_err());
    assert_eq!(seen.get(), 0);
    h.put(&q, a, &[&q], 2);
    let a = get(3).unwrap();
    assert_eq!(seen.get(), 1);
    h.put(&q, a, &[&q], 4);
    let _ = get(5).unwrap();
    assert_eq!(seen.get(), 1, "reported once");
    h.put(&q, b, &[&q], 6);
}
#[test]
fn exhausted_and_wakeup_once_per_episode() {
    let h = HostTags::new(4, Policy::Fair).unwrap();
    let q0 = QueueTags::new(0);
    let q1 = QueueTags::new(65);
    let held = take(&h, &q1, 4, 0);
    let hint = AtomicU32::new(0);
    // Fair share is max(2, 4) = 4 = depth: the refusal is Exhausted.
    assert_eq!(h.get(&q0, &hint, 1), Err(Refusal::Exhausted));
    assert_eq!(h.get(&q1, &hint, 1), Err(Refusal::Exhausted));
    // Bits 0 and 65 % 64 = 1.
    assert_eq!(h.waiter_mask(), 0b11);
    assert_eq!(h.put(&q1, held[0], &[&q0, &q1], 0), 0b11);
    assert_eq!(h.put(&q1, held[1], &[&q0, &q1], 0), 0);
    let t = h.get(&q0, &hint, 3).unwrap();
    assert!(!q0.is_waiting());
    assert_eq!(q0.in_flight(), 1);
    // q0 drained to zero: no longer starved.
    assert!(q0.is_starved());
    assert_eq!(h.put(&q0, t, &[&q0, &q1], 0), 0);
    assert!(!q0.is_starved());
    // q1 was refused while holding its full fair share: not starved.
    assert!(!q1.is_starved());
    assert_eq!(h.starved_queues(), 0);
    assert_eq!(h.put(&q1, held[2], &[&q0, &q1], 0), 0);
    assert_eq!(h.put(&q1, held[3], &[&q0, &q1], 0), 0);
    assert_eq!(h.in_use(), 0);
}

#[test]
fn clock_is_read_only_when_needed() {
    for policy in Policy::ALL {
        for expiry in [0, 1_000_000] {
            let h = HostTags::new(1024, policy).unwrap();
            h.set_borrow_expiry_ns(expiry);
            let clock = Counting::new(1_000);
            let qs = [QueueTags::new(0), QueueTags::new(1), QueueTags::new(2)];
            let hints = [AtomicU32::new(0), AtomicU32::new(16), AtomicU32::new(32)];
            // Uncounted setup: the Lend limits exist after two ticks.
            for (q, hint) in qs.iter().zip(&hints) {
                let t = h.get(q, hint, 0).unwrap();
                h.put(q, t, &qs, 0);
            }
            h.tick(&qs, 1);
            h.tick(&qs, 2);
            // Non-binding gets and puts, several queues active: the
            // budget (1024) never binds, nor does the fair share (342).
            let mut held = Vec::new();
            for round in 0..300 {
                for (q, hint) in qs.iter().zip(&hints) {
                    held.push((h.get(q, hint, &clock).unwrap(), q));
                }
                if round % 3 == 2 {
                    for (t, q) in held.drain(..) {
                        assert_eq!(h.put(q, t, &qs, &clock), 0);
                    }
                }
                if round % 50 == 0 {
                    h.tick(&qs, 3 + round);
                }
            }
            assert_eq!(h.active_queues(), 3);
            assert_eq!(h.limit(&qs[0], &clock), h.limit(&qs[0], 0));
            assert!(!h.is_contended(&clock));
            assert_eq!(
                clock.take_reads(),
                0,
                "{policy:?} expiry {expiry}: fast path"
            );
            for (t, q) in held.drain(..) {
                h.put(q, t, &qs, 0);
            }
            // Slow path: q1 is refused while below its fair share (the
            // budget is exhausted by q0 under `none`): the failure time
            // is recorded, the clock is read, once.
            h.set_policy(Policy::None);
            let all = take(&h, &qs[0], 1024, 0);
            h.set_policy(policy);
            assert_eq!(h.get(&qs[1], &hints[1], &clock), Err(Refusal::Exhausted));
            assert!(qs[1].is_starved());
            assert_eq!(
                clock.take_reads(),
                1,
                "{policy:?} expiry {expiry}: slow path"
            );
            for t in all {
                h.put(&qs[0], t, &qs, 0);
            }
        }
    }
}
