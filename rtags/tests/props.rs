//! Property tests: random sequential get/put/resize/policy/tick sequences
//! against a simple model.
#![cfg(not(loom))]

use proptest::prelude::*;
use rtags::bitmap::{TagBitmap, MAX_TAGS};
use rtags::host::{HostTags, Refusal};
use rtags::policy::Policy;
use rtags::queue::QueueTags;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};

#[derive(Clone, Debug)]
enum Op {
    Get(usize),
    Put(usize),
    SetDepth(u32),
    SetPolicy(u32),
    Tick(u64),
    BogusPut(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0usize..3).prop_map(Op::Get),
        5 => any::<usize>().prop_map(Op::Put),
        1 => (1u32..=48).prop_map(Op::SetDepth),
        1 => (0u32..4).prop_map(Op::SetPolicy),
        1 => (0u64..300).prop_map(Op::Tick),
        1 => (0u32..2000).prop_map(Op::BogusPut),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The raw bitmap never hands out a tag twice, never a tag >= depth,
    /// and finds a free tag whenever one exists.
    #[test]
    fn bitmap_model(depth in 1u32..=MAX_TAGS, ops in prop::collection::vec((any::<bool>(), any::<u16>()), 1..400)) {
        let map = TagBitmap::new(depth).unwrap();
        let hints: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
        let mut held: Vec<u32> = Vec::new();
        let mut depth = depth;
        for (i, (is_get, x)) in ops.into_iter().enumerate() {
            if i % 50 == 49 {
                depth = u32::from(x) % MAX_TAGS + 1;
                map.set_depth(depth).unwrap();
            }
            if is_get || held.is_empty() {
                let hint = &hints[usize::from(x) % 4];
                match map.get(hint) {
                    Some(t) => {
                        prop_assert!(t < depth);
                        prop_assert!(!held.contains(&t), "tag {} handed out twice", t);
                        held.push(t);
                    }
                    None => {
                        let below = held.iter().filter(|&&t| t < depth).count();
                        prop_assert_eq!(below, depth as usize, "refused with free tags");
                    }
                }
            } else {
                let t = held.swap_remove(usize::from(x) % held.len());
                prop_assert!(map.put(t));
            }
            prop_assert_eq!(map.in_use() as usize, held.len());
        }
    }

    /// Host: no double allocation, tags below depth, exact counters, and
    /// every refusal's waiter bit is handed out by the next put.
    #[test]
    fn host_model(depth in 1u32..=48, policy in 0u32..4, expiry in 0u64..200, idle in 0u64..60, ops in prop::collection::vec(op(), 1..300)) {
        let h = HostTags::new(depth, Policy::from_u32(policy).unwrap()).unwrap();
        h.set_borrow_expiry_ns(expiry);
        h.set_idle_ns(idle);
        let qs = [QueueTags::new(0), QueueTags::new(1), QueueTags::new(65)];
        let refs = [&qs[0], &qs[1], &qs[2]];
        let hints = [AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)];
        let mut held: Vec<(u32, usize)> = Vec::new();
        let mut mask = 0u64;
        let mut now = 0u64;
        // Idle detection model: busy flag, last busy tick, active.
        let mut busy = [false; 3];
        let mut last = [0u64; 3];
        let mut active = [false; 3];
        for op in ops {
            now += 1;
            if let Op::Get(qi) = op {
                busy[qi] = true;
                active[qi] = true;
            }
            match op {
                Op::Get(qi) => match h.get(&qs[qi], &hints[qi], now) {
                    Ok(t) => {
                        prop_assert!(t < h.depth());
                        prop_assert!(held.iter().all(|&(u, _)| u != t), "tag {} twice", t);
                        held.push((t, qi));
                        prop_assert!(qs[qi].is_active());
                    }
                    Err(r) => {
                        mask |= qs[qi].waiter_bit();
                        prop_assert!(qs[qi].is_waiting());
                        match r {
                            Refusal::Exhausted => {
                                let d = h.depth();
                                let below: HashSet<u32> = held.iter().map(|&(t, _)| t).filter(|&t| t < d).collect();
                                prop_assert_eq!(below.len(), d as usize);
                            }
                            Refusal::Limited => {
                                prop_assert!(qs[qi].in_flight() >= h.limit(&qs[qi], now));
                            }
                        }
                    }
                },
                Op::Put(i) => {
                    if !held.is_empty() {
                        let (t, qi) = held.swap_remove(i % held.len());
                        prop_assert_eq!(h.put(&qs[qi], t), mask);
                        mask = 0;
                    }
                }
                Op::BogusPut(t) => {
                    if held.iter().all(|&(u, _)| u != t) {
                        prop_assert_eq!(h.put(&qs[0], t), 0);
                    }
                }
                Op::SetDepth(d) => h.set_depth(d).unwrap(),
                Op::SetPolicy(p) => h.set_policy(Policy::from_u32(p).unwrap()),
                Op::Tick(dt) => {
                    now += dt;
                    for qi in 0..3 {
                        if qs[qi].in_flight() != 0 {
                            busy[qi] = true;
                            last[qi] = now;
                        } else if busy[qi] {
                            busy[qi] = false;
                            last[qi] = now;
                        } else if mask & qs[qi].waiter_bit() == 0 && now - last[qi] >= idle {
                            active[qi] = false;
                        }
                    }
                    h.tick(&refs, now);
                    for q in &qs {
                        if q.is_active() {
                            prop_assert!(h.limit(q, now) >= 1);
                        }
                    }
                }
            }
            prop_assert_eq!(h.in_use() as usize, held.len());
            prop_assert_eq!(h.waiter_mask(), mask);
            for (qi, q) in qs.iter().enumerate() {
                prop_assert_eq!(q.in_flight() as usize, held.iter().filter(|&&(_, o)| o == qi).count());
            }
            prop_assert_eq!(h.active_queues() as usize, qs.iter().filter(|q| q.is_active()).count());
            for (qi, q) in qs.iter().enumerate() {
                prop_assert_eq!((q.is_busy(), q.last_active_ns(), q.is_active()), (busy[qi], last[qi], active[qi]), "queue {}", qi);
            }
            prop_assert_eq!(h.starved_queues() as usize, qs.iter().filter(|q| q.is_starved()).count());
        }
        for (t, qi) in held {
            h.put(&qs[qi], t);
        }
        // The first tick finds the queues busy (I/O since the previous
        // tick), the next one, an idle window later, deactivates them.
        now += 1;
        h.tick(&refs, now);
        now += idle;
        h.tick(&refs, now);
        prop_assert_eq!(h.active_queues(), 0);
        prop_assert_eq!(h.starved_queues(), 0);
        prop_assert_eq!(h.in_use(), 0);
        prop_assert_eq!(hints[0].load(Ordering::Relaxed) < 1024, true);
    }

    /// Borrow: unlimited without contention; fair share right after a
    /// queue is denied its share; unlimited again once starved queues have
    /// drained and the expiry has passed.
    #[test]
    fn borrow_contention_window(depth in 8u32..=64, expiry in 0u64..1000, t_fail in 0u64..1000) {
        let h = HostTags::new(depth, Policy::Borrow).unwrap();
        h.set_borrow_expiry_ns(expiry);
        let light = QueueTags::new(0);
        let heavy = QueueTags::new(1);
        let hint = AtomicU32::new(0);
        let t = h.get(&light, &hint, 0).unwrap();
        h.put(&light, t);
        let mut held: Vec<u32> = (0..depth).map(|_| h.get(&heavy, &hint, 0).unwrap()).collect();
        prop_assert_eq!(h.limit(&heavy, 0), depth);
        prop_assert_eq!(h.get(&light, &hint, t_fail), Err(Refusal::Exhausted));
        let fair = rtags::policy::fair_share(depth, 2);
        prop_assert_eq!(h.limit(&heavy, t_fail), fair);
        h.put(&heavy, held.pop().unwrap());
        let t = h.get(&light, &hint, t_fail).unwrap();
        // Starved until it drains, whatever the expiry.
        prop_assert_eq!(h.limit(&heavy, t_fail + expiry + 1), fair);
        h.put(&light, t);
        prop_assert_eq!(h.is_contended(t_fail), expiry > 0);
        if expiry > 0 {
            prop_assert_eq!(h.limit(&heavy, t_fail + expiry - 1), fair);
        }
        prop_assert_eq!(h.limit(&heavy, t_fail + expiry), depth);
    }
}
