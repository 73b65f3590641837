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
        1 => (0..Policy::ALL.len() as u32).prop_map(Op::SetPolicy),
        1 => (0u64..300).prop_map(Op::Tick),
        1 => (0u32..2000).prop_map(Op::BogusPut),
    ]
}

/// The tags `q` may allocate under `window` now: its window, then its
/// slice of the shared part (without a window: the whole shared part).
fn region(h: &HostTags, q: &QueueTags) -> Vec<u32> {
    h.window(q)
        .into_iter()
        .flatten()
        .chain(h.shared_slice(q))
        .collect()
}

/// Whether `q` has a free tag in its region.
fn can_allocate(h: &HostTags, q: &QueueTags) -> bool {
    region(h, q).into_iter().any(|t| !h.bitmap().is_held(t))
}

/// After a `window` put that woke `woken` and left `waiting`: every woken
/// queue may allocate (no wake-up for nothing), and no queue left waiting
/// may (no lost wake-up).
/// The waiters in `mask` that a put or a tick hands out under every policy
/// but `window`: those below their limit, if a tag is free (`held`: tags
/// and their queues); the others wait.
fn may_allocate(h: &HostTags, qs: &[QueueTags], held: &[(u32, usize)], mask: u64, now: u64) -> u64 {
    let d = h.depth();
    let free = held.iter().filter(|&&(u, _)| u < d).count() < d as usize;
    let below = |q: &QueueTags| {
        let l = h.limit(q, now);
        free && (l >= d || q.in_flight() < l)
    };
    qs.iter()
        .filter(|q| mask & q.waiter_bit() != 0 && below(q))
        .fold(0, |m, q| m | q.waiter_bit())
}

fn check_hand_off(
    h: &HostTags,
    qs: &[QueueTags],
    woken: u64,
    waiting: u64,
) -> Result<(), TestCaseError> {
    for q in qs {
        let bit = q.waiter_bit();
        // A bit shared by several queues (indexes equal modulo 64) wakes
        // them all: any of them may be the one that can allocate.
        let any = qs
            .iter()
            .filter(|o| o.waiter_bit() == bit)
            .any(|o| can_allocate(h, o));
        if woken & bit != 0 {
            prop_assert!(
                any,
                "queue {} woken for nothing: layout {:?} window {:?} slot {:?} held {:?}",
                q.index(),
                h.window_layout(),
                h.window(q),
                q.window_slot(),
                (0..h.depth())
                    .filter(|&t| h.bitmap().is_held(t))
                    .collect::<Vec<_>>()
            );
        }
        if waiting & bit != 0 {
            prop_assert!(
                !can_allocate(h, q),
                "queue {} left waiting with a free tag",
                q.index()
            );
        }
    }
    Ok(())
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
    /// a put hands out exactly the waiters below their limit, if a tag is
    /// free (under `window`: those whose window or slice has one, and every
    /// waiter after the windows moved), so that none is left once every tag
    /// is free.
    #[test]
    fn host_model(depth in 1u32..=48, policy in 0..Policy::ALL.len(), expiry in 0u64..200, idle in 0u64..60, ops in prop::collection::vec(op(), 1..300)) {
        let h = HostTags::new(depth, Policy::ALL[policy]).unwrap();
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
        // Queues ever activated (joined).
        let mut joined = [false; 3];
        for op in ops {
            now += 1;
            if let Op::Get(qi) = op {
                busy[qi] = true;
                active[qi] = true;
                joined[qi] = true;
            }
            match op {
                Op::Get(qi) => match h.get(&qs[qi], &hints[qi], now) {
                    Ok(t) => {
                        prop_assert!(t < h.depth());
                        if h.policy() == Policy::Window {
                            prop_assert!(region(&h, &qs[qi]).contains(&t), "tag {} outside the region", t);
                        }
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
                            Refusal::Limited if h.policy() == Policy::Window => {
                                let mine = region(&h, &qs[qi]);
                                prop_assert!((mine.len() as u32) < h.depth());
                                prop_assert!(mine.iter().all(|&t| h.bitmap().is_held(t)));
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
                        let woken = h.put(&qs[qi], t, &qs, now);
                        prop_assert_eq!(woken & !mask, 0);
                        mask &= !woken;
                        if h.policy() == Policy::Window {
                            check_hand_off(&h, &qs, woken, mask)?;
                        } else {
                            prop_assert_eq!(woken, may_allocate(&h, &qs, &held, woken | mask, now));
                        }
                    }
                }
                Op::BogusPut(t) => {
                    if held.iter().all(|&(u, _)| u != t) {
                        prop_assert_eq!(h.put(&qs[0], t, &qs, now), 0);
                    }
                }
                Op::SetDepth(d) | Op::SetPolicy(d) => {
                    let switch = match op {
                        Op::SetDepth(_) => {
                            h.set_depth(d).unwrap();
                            false
                        }
                        _ => {
                            h.set_policy(Policy::from_u32(d).unwrap());
                            true
                        }
                    };
                    // A policy switch, or `window`'s windows moving: the
                    // caller hands the waiters back.
                    if switch || h.policy() == Policy::Window {
                        prop_assert_eq!(h.take_waiters(), mask);
                        mask = 0;
                    }
                }
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
                    let woken = h.tick(&refs, now);
                    prop_assert_eq!(woken & !mask, 0);
                    if h.policy() != Policy::Window {
                        // A limit may rise without a put: the tick hands
                        // out who may use it, as a put does.
                        prop_assert_eq!(woken, may_allocate(&h, &qs, &held, mask, now));
                    }
                    mask &= !woken;
                    for q in &qs {
                        if q.is_active() && h.policy() != Policy::Window {
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
            prop_assert_eq!(h.joined_queues() as usize, joined.iter().filter(|&&j| j).count());
            for (qi, q) in qs.iter().enumerate() {
                prop_assert_eq!((q.is_busy(), q.last_active_ns(), q.is_active()), (busy[qi], last[qi], active[qi]), "queue {}", qi);
            }
            prop_assert_eq!(h.starved_queues() as usize, qs.iter().filter(|q| q.is_starved()).count());
        }
        for (t, qi) in held {
            h.put(&qs[qi], t, &qs, now);
        }
        // Every tag free: the last put found every waiter below its limit
        // (under `window`, one without a region waits for the tick).
        if h.policy() != Policy::Window {
            prop_assert_eq!(h.waiter_mask(), 0, "a waiter left behind with every tag free");
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
    /// drained and the expiry has passed since the tick after the drain.
    #[test]
    fn borrow_contention_window(depth in 8u32..=64, expiry in 0u64..1000, t_fail in 0u64..1000) {
        let h = HostTags::new(depth, Policy::Borrow).unwrap();
        h.set_borrow_expiry_ns(expiry);
        let light = QueueTags::new(0);
        let heavy = QueueTags::new(1);
        let hint = AtomicU32::new(0);
        let qs = [&light, &heavy];
        let t = h.get(&light, &hint, 0).unwrap();
        h.put(&light, t, &qs, 0);
        let mut held: Vec<u32> = (0..depth).map(|_| h.get(&heavy, &hint, 0).unwrap()).collect();
        prop_assert_eq!(h.limit(&heavy, 0), depth);
        prop_assert_eq!(h.get(&light, &hint, t_fail), Err(Refusal::Exhausted));
        let fair = rtags::policy::fair_share(depth, 2);
        prop_assert_eq!(h.limit(&heavy, t_fail), fair);
        h.put(&heavy, held.pop().unwrap(), &qs, t_fail);
        let t = h.get(&light, &hint, t_fail).unwrap();
        // Starved until it drains, whatever the expiry.
        prop_assert_eq!(h.limit(&heavy, t_fail + expiry + 1), fair);
        h.put(&light, t, &qs, t_fail);
        // With an expiry, the drain's window starts at the next tick.
        prop_assert_eq!(h.is_contended(u64::MAX), expiry > 0);
        h.tick(&[&light, &heavy], t_fail);
        prop_assert_eq!(h.is_contended(t_fail), expiry > 0);
        if expiry > 0 {
            prop_assert_eq!(h.limit(&heavy, t_fail + expiry - 1), fair);
        }
        prop_assert_eq!(h.limit(&heavy, t_fail + expiry), depth);
    }
}

#[derive(Clone, Debug)]
enum WindowOp {
    Get(usize),
    Put(usize),
    Tick(u64),
}

fn window_op() -> impl Strategy<Value = WindowOp> {
    prop_oneof![
        8 => (0usize..4).prop_map(WindowOp::Get),
        6 => any::<usize>().prop_map(WindowOp::Put),
        1 => (0u64..40).prop_map(WindowOp::Tick),
    ]
}

/// The windows of the moment: the layout and every queue's window.
fn windows_of(
    h: &HostTags,
    qs: &[QueueTags],
) -> (
    rtags::policy::window::Layout,
    Vec<Option<std::ops::Range<u32>>>,
) {
    (h.window_layout(), qs.iter().map(|q| h.window(q)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `window`: every tag a queue gets is in its window or its slice of the
    /// shared part (without a window: anywhere in the shared part), so
    /// that, since the windows last moved, no queue holds more than its
    /// window and its slice while others are active; a refusal means that
    /// part is full; the tick gives every active (or waiting) queue a
    /// window of its own; a put wakes exactly the waiting queues that may
    /// allocate, and the tick hands every waiter back when windows move.
    #[test]
    fn window_model(depth in 1u32..=64, pct in 0u32..=100, n in 1usize..=4, ops in prop::collection::vec(window_op(), 1..300)) {
        let h = HostTags::new(depth, Policy::Window).unwrap();
        h.set_shared_pct(pct).unwrap();
        h.set_idle_ns(30);
        // Queues 1 and 65 share a waiter bit.
        let qs: Vec<QueueTags> = [0, 1, 2, 65].into_iter().take(n).map(QueueTags::new).collect();
        let refs: Vec<&QueueTags> = qs.iter().collect();
        let hints: Vec<AtomicU32> = (0..n as u32).map(|i| AtomicU32::new(i * 5)).collect();
        // (tag, queue, windows' epoch when it was allocated)
        let mut held: Vec<(u32, usize, u32)> = Vec::new();
        let mut epoch = 0u32;
        let mut now = 0u64;
        let mut layout = windows_of(&h, &qs);
        for op in ops {
            now += 1;
            match op {
                WindowOp::Get(qi) => {
                    let qi = qi % n;
                    let q = &qs[qi];
                    let mine = region(&h, q);
                    match h.get(q, &hints[qi], now) {
                        Ok(t) => {
                            prop_assert!(mine.contains(&t), "tag {} outside {:?}", t, mine);
                            prop_assert!(held.iter().all(|&(u, _, _)| u != t));
                            held.push((t, qi, epoch));
                        }
                        Err(r) => {
                            prop_assert!(mine.iter().all(|&t| h.bitmap().is_held(t)), "refused with a free tag");
                            prop_assert_eq!(r == Refusal::Exhausted, mine.len() as u32 == depth);
                            prop_assert_ne!(h.waiter_mask() & q.waiter_bit(), 0);
                        }
                    }
                }
                WindowOp::Put(i) => {
                    if !held.is_empty() {
                        let (t, qi, _) = held.swap_remove(i % held.len());
                        let before = h.waiter_mask();
                        let woken = h.put(&qs[qi], t, &qs, now);
                        prop_assert_eq!(woken & !before, 0);
                        prop_assert_eq!(h.waiter_mask(), before & !woken);
                        check_hand_off(&h, &qs, woken, before & !woken)?;
                    }
                }
                WindowOp::Tick(dt) => {
                    now += dt;
                    let before = h.waiter_mask();
                    let woken = h.tick(&refs, now);
                    let after = windows_of(&h, &qs);
                    if after != layout {
                        epoch += 1;
                        layout = after;
                        prop_assert_eq!(woken, before, "windows moved: every waiter handed back");
                    } else {
                        prop_assert_eq!(woken, 0);
                    }
                    // Every active or waiting queue owns a window of its
                    // own (as long as windows can be formed), the others
                    // none.
                    let wants = |q: &QueueTags| q.is_active() || before & q.waiter_bit() != 0;
                    let active: Vec<&QueueTags> = qs.iter().filter(|q| wants(q)).collect();
                    prop_assert_eq!(h.window_layout().windows, if h.window_layout().size == 0 { 0 } else { active.len() as u32 });
                    if h.window_layout().windows > 0 {
                        let mut seen: Vec<u32> = active.iter().map(|q| h.window(q).unwrap().start).collect();
                        seen.sort_unstable();
                        seen.dedup();
                        prop_assert_eq!(seen.len(), active.len());
                    }
                    prop_assert!(qs.iter().filter(|q| !wants(q)).all(|q| h.window(q).is_none()));
                }
            }
            prop_assert_eq!(h.in_use() as usize, held.len());
            for (qi, q) in qs.iter().enumerate() {
                let mine = region(&h, q);
                let recent: Vec<u32> = held.iter().filter(|&&(_, o, e)| o == qi && e == epoch).map(|&(t, _, _)| t).collect();
                prop_assert!(recent.iter().all(|t| mine.contains(t)));
                prop_assert!(recent.len() as u32 <= h.limit(q, now), "queue {} holds {} > limit {}", qi, recent.len(), h.limit(q, now));
                prop_assert_eq!(q.in_flight() as usize, held.iter().filter(|&&(_, o, _)| o == qi).count());
            }
        }
    }

    /// `window`: a lone active queue can use every tag, whatever the
    /// shared percentage.
    #[test]
    fn window_lone_queue_uses_everything(depth in 1u32..=1024, pct in 0u32..=100) {
        let h = HostTags::new(depth, Policy::Window).unwrap();
        h.set_shared_pct(pct).unwrap();
        let q = QueueTags::new(7);
        let hint = AtomicU32::new(3);
        let t = h.get(&q, &hint, 0).unwrap();
        h.put(&q, t, &[&q], 0);
        h.tick(&[&q], 1);
        prop_assert_eq!(h.limit(&q, 1), depth);
        let mut got = HashSet::new();
        for _ in 0..depth {
            prop_assert!(got.insert(h.get(&q, &hint, 2).unwrap()));
        }
        prop_assert_eq!(h.get(&q, &hint, 2), Err(Refusal::Exhausted));
    }

    /// Out-of-range shared percentages are refused and change nothing.
    #[test]
    fn shared_pct_out_of_range_changes_nothing(good in 0u32..=100, bad in 101u32..) {
        let h = HostTags::new(64, Policy::Window).unwrap();
        h.set_shared_pct(good).unwrap();
        prop_assert!(h.set_shared_pct(bad).is_err());
        prop_assert_eq!(h.shared_pct(), good);
    }
}
