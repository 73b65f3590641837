//! Tests of the limit cache and of the exact limit check.

use crate::host::testing::take;
use crate::host::{HostTags, Refusal};
use crate::policy::Policy;
use crate::queue::QueueTags;
use crate::sync::AtomicU32;
use std::vec::Vec;

/// The limit cache holds the bound of the current state.
fn assert_fresh(h: &HostTags) {
    assert_eq!(h.limit_bound(), h.current_bound(), "stale limit cache");
}

/// Every change of an input of the bound refreshes it.
#[test]
fn limit_cache_follows_changes() {
    let h = HostTags::new(64, Policy::None).unwrap();
    h.set_idle_ns(0);
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let all = [&q0, &q1];
    let hint = AtomicU32::new(0);
    assert_eq!(h.limit_bound(), u32::MAX);
    let t0 = h.get(&q0, &hint, 0).unwrap();
    let t1 = h.get(&q1, &hint, 0).unwrap();
    assert_eq!(h.limit_bound(), u32::MAX, "none: no limit");
    // Policy switch.
    h.set_policy(Policy::Fair);
    assert_eq!(h.limit_bound(), 32);
    // Resize.
    h.set_depth(16).unwrap();
    assert_eq!(h.limit_bound(), 8);
    h.set_depth(4).unwrap();
    assert_eq!(h.limit_bound(), u32::MAX, "fair share = depth");
    h.set_depth(64).unwrap();
    assert_eq!(h.limit_bound(), 32);
    // Deactivation by the tick (after the tick that consumes the busy
    // flag), then activation by a get.
    h.put(&q1, t1, &[&q0, &q1], 0);
    h.tick(&all, 1);
    assert_eq!(h.limit_bound(), 32);
    h.tick(&all, 2);
    assert!(!q1.is_active() && q0.is_active());
    assert_eq!(h.limit_bound(), u32::MAX, "one active queue");
    let t1 = h.get(&q1, &hint, 3).unwrap();
    assert_eq!(h.limit_bound(), 32, "activation");
    assert_fresh(&h);

    // Borrow: contention starts with a refusal below the fair share
    // and, without an expiry, ends with the drain of the starved queue.
    h.set_borrow_expiry_ns(0);
    h.set_policy(Policy::Borrow);
    assert_eq!(h.limit_bound(), u32::MAX, "not contended");
    h.put(&q1, t1, &[&q0, &q1], 0);
    let held = take(&h, &q0, 63, 4);
    assert_eq!(h.get(&q1, &hint, 5), Err(Refusal::Exhausted));
    assert!(q1.is_starved());
    assert_eq!(h.limit_bound(), 32, "contended");
    h.put(&q0, held[0], &[&q0, &q1], 0);
    let t1 = h.get(&q1, &hint, 6).unwrap();
    h.put(&q1, t1, &[&q0, &q1], 0);
    assert!(!q1.is_starved());
    assert_eq!(h.limit_bound(), u32::MAX, "drained");
    // A change of the expiry forgets the refusal at 5.
    h.set_borrow_expiry_ns(100);
    assert_eq!(h.limit_bound(), u32::MAX, "expiry set: nothing recorded");
    // A refusal with an expiry counts until an exact check finds its
    // window over; the starved queue's drain counts until the next
    // tick (150) starts a window of its own.
    let t = h.get(&q0, &hint, 107).unwrap();
    assert_eq!(h.get(&q1, &hint, 110), Err(Refusal::Exhausted));
    h.put(&q0, t, &[&q0, &q1], 0);
    let t1 = h.get(&q1, &hint, 111).unwrap();
    h.put(&q1, t1, &[&q0, &q1], 0);
    assert_eq!(h.limit_bound(), 32, "in the window");
    assert!(h.is_contended(1_000), "the drain awaits its tick");
    h.tick(&all, 150);
    assert_eq!(h.limit_bound(), 32);
    assert!(h.is_contended(249));
    assert!(!h.is_contended(250));
    assert_eq!(h.limit_bound(), u32::MAX, "window over");
    // A refusal recorded with an expiry of 0 does not count, nor after
    // an expiry is set.
    h.set_borrow_expiry_ns(0);
    let t = h.get(&q0, &hint, 220).unwrap();
    assert_eq!(h.get(&q1, &hint, 220), Err(Refusal::Exhausted));
    h.put(&q0, t, &[&q0, &q1], 0);
    let t1 = h.get(&q1, &hint, 221).unwrap();
    h.put(&q1, t1, &[&q0, &q1], 0);
    assert_eq!(h.limit_bound(), u32::MAX);
    h.set_borrow_expiry_ns(1_000);
    assert_eq!(h.limit_bound(), u32::MAX, "expiry set: forgotten");
    // A policy change forgets a drain's marker.
    let t = h.get(&q0, &hint, 230).unwrap();
    assert_eq!(h.get(&q1, &hint, 230), Err(Refusal::Exhausted));
    h.put(&q0, t, &all, 230);
    let t1 = h.get(&q1, &hint, 231).unwrap();
    h.put(&q1, t1, &all, 231);
    assert_eq!(h.limit_bound(), 32, "the drain's marker");
    h.set_policy(Policy::Borrow);
    assert_eq!(h.limit_bound(), u32::MAX, "policy set: forgotten");
    h.set_borrow_expiry_ns(0);
    assert_fresh(&h);

    // Lend: the fair share until the limits exist, then at most the
    // smallest lend limit; a switch away drops them.
    for &t in &held[1..] {
        h.put(&q0, t, &[&q0, &q1], 0);
    }
    h.set_idle_ns(1_000_000);
    h.set_policy(Policy::Lend);
    assert_eq!(h.limit_bound(), 32);
    h.tick(&all, 200);
    h.tick(&all, 201);
    assert_eq!((q0.lend_limit(), q1.lend_limit()), (32, 32));
    assert_eq!(h.limit_bound(), 32);
    // q1 is refused at its limit; the next tick lends it 8 of q0's.
    let mut mine = take(&h, &q1, 32, 202);
    assert_eq!(h.get(&q1, &hint, 202), Err(Refusal::Limited));
    h.tick(&all, 203);
    assert_eq!((q0.lend_limit(), q1.lend_limit()), (24, 40));
    assert_eq!(h.limit_bound(), 24, "smallest lend limit");
    assert_fresh(&h);
    // q1 above the bound: the exact check lets it use its lend limit.
    for _ in 0..8 {
        mine.push(h.get(&q1, &hint, 204).unwrap());
    }
    assert_eq!(h.get(&q1, &hint, 204), Err(Refusal::Limited));
    h.set_policy(Policy::Fair);
    assert_eq!(h.limit_bound(), 32);
    h.set_policy(Policy::None);
    assert_eq!(h.limit_bound(), u32::MAX);
    for t in mine {
        h.put(&q1, t, &[&q0, &q1], 0);
    }
    h.put(&q0, t0, &[&q0, &q1], 0);
    assert_eq!(h.in_use(), 0);
    assert_fresh(&h);
}

#[derive(Clone, Debug)]
enum Op {
    Get(usize),
    Put(usize),
    Tick(u64),
    Depth(u32),
    Policy(u32),
    Expiry(u64),
    Contended(u64),
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        8 => (0usize..3).prop_map(Op::Get),
        6 => any::<usize>().prop_map(Op::Put),
        2 => (0u64..50).prop_map(Op::Tick),
        1 => (1u32..=40).prop_map(Op::Depth),
        1 => (0..Policy::ALL.len() as u32).prop_map(Op::Policy),
        1 => prop_oneof![Just(0u64), 1u64..100].prop_map(Op::Expiry),
        1 => (0u64..100).prop_map(Op::Contended),
    ]
}

proptest::proptest! {
    /// After every operation the limit cache holds the bound of the
    /// current state, and a queue below the bound is not limited.
    #[test]
    fn limit_cache_is_fresh_and_sound(ops in proptest::collection::vec(op(), 1..200)) {
        let h = HostTags::new(24, Policy::Fair).unwrap();
        h.set_idle_ns(20);
        let qs = [QueueTags::new(0), QueueTags::new(1), QueueTags::new(2)];
        let refs = [&qs[0], &qs[1], &qs[2]];
        let hints = [AtomicU32::new(0), AtomicU32::new(1), AtomicU32::new(2)];
        let mut held: Vec<(u32, usize)> = Vec::new();
        let mut now = 0u64;
        for op in ops {
            now += 1;
            match op {
                Op::Get(i) => {
                    if let Ok(t) = h.get(&qs[i], &hints[i], now) {
                        held.push((t, i));
                    }
                }
                Op::Put(i) => {
                    if !held.is_empty() {
                        let (t, qi) = held.swap_remove(i % held.len());
                        h.put(&qs[qi], t, &qs, 0);
                    }
                }
                Op::Tick(dt) => {
                    now += dt;
                    h.tick(&refs, now);
                }
                Op::Depth(d) => h.set_depth(d).unwrap(),
                Op::Policy(p) => h.set_policy(Policy::from_u32(p).unwrap()),
                Op::Expiry(e) => h.set_borrow_expiry_ns(e),
                Op::Contended(dt) => {
                    h.is_contended(now + dt);
                }
            }
            proptest::prop_assert_eq!(h.limit_bound(), h.current_bound(), "stale after {:?}", op);
            let depth = h.depth();
            for q in &qs {
                let f = q.in_flight();
                if f < h.limit_bound() {
                    proptest::prop_assert!(
                        !h.policy().limited(&h, q, depth, &now),
                        "below the bound {} but limited ({:?})", h.limit_bound(), op
                    );
                }
            }
        }
    }
}
