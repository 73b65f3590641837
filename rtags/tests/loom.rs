//! loom models of the lock-free protocols. Run with `./run-loom.sh`
//! (`RUSTFLAGS="--cfg loom" cargo test --release --test loom`).
#![cfg(loom)]

use loom::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use loom::sync::Arc;
use loom::thread;
use rtags::host::{HostTags, Refusal};
use rtags::policy::Policy;
use rtags::queue::QueueTags;

struct World {
    host: HostTags,
    q: [QueueTags; 2],
    owned: [AtomicBool; 2],
}

fn world(depth: u32, policy: Policy) -> Arc<World> {
    let host = HostTags::new(depth, policy).unwrap();
    host.set_idle_ns(0);
    Arc::new(World {
        host,
        q: [QueueTags::new(0), QueueTags::new(1)],
        owned: [AtomicBool::new(false), AtomicBool::new(false)],
    })
}

/// Runs the model `f` with at most `preemptions` preemptions per
/// execution (loom's default is unbounded), unless `LOOM_MAX_PREEMPTIONS`
/// says otherwise. Used by the models whose threads run several limit
/// cache refreshes (load, inputs, CAS each) or a resize (16 mask swaps):
/// unbounded, their state space takes hours; the bugs they look for need
/// one or two preemptions.
fn bounded<F: Fn() + Sync + Send + 'static>(preemptions: usize, f: F) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(preemptions);
    }
    b.check(f);
}

/// Gets a tag for queue `qi`, checks exclusive ownership, puts it back.
fn get_put(w: &World, qi: usize) -> Result<u64, Refusal> {
    let hint = AtomicU32::new(0);
    let tag = w.host.get(&w.q[qi], &hint, 1)?;
    assert!(
        !w.owned[tag as usize].swap(true, Ordering::AcqRel),
        "tag {tag} handed out twice"
    );
    w.owned[tag as usize].store(false, Ordering::Release);
    Ok(w.host.put(&w.q[qi], tag, &w.q, 1))
}

/// (a) Two threads allocate and free concurrently: never the same tag.
#[test]
fn no_duplicate_tag() {
    loom::model(|| {
        let w = world(2, Policy::None);
        let w2 = w.clone();
        let t = thread::spawn(move || get_put(&w2, 1).is_ok());
        let a = get_put(&w, 0).is_ok();
        let b = t.join().unwrap();
        // Depth 2: nobody can be refused.
        assert!(a && b);
        assert_eq!(w.host.in_use(), 0);
        assert_eq!(w.host.waiter_mask(), 0);
    });
}

/// (a') Depth 1: at most one holder at a time; a refused thread's bit is
/// handed out by the other thread's put.
#[test]
fn no_duplicate_tag_depth1() {
    loom::model(|| {
        let w = world(1, Policy::None);
        let w2 = w.clone();
        let t = thread::spawn(move || get_put(&w2, 1));
        let a = get_put(&w, 0);
        let b = t.join().unwrap();
        match (a, b) {
            (Ok(_), Ok(_)) => {}
            (Ok(mask), Err(_)) => assert_ne!(mask & 0b10, 0, "lost wake-up of q1"),
            (Err(_), Ok(mask)) => assert_ne!(mask & 0b01, 0, "lost wake-up of q0"),
            (Err(_), Err(_)) => panic!("both refused with a free tag"),
        }
        assert_eq!(w.host.in_use(), 0);
    });
}

/// (b) Lost wake-up, Exhausted: A holds the only tag and frees it while B
/// fails. Either B's re-check succeeds or A's put returns B's bit.
#[test]
fn no_lost_wakeup_exhausted() {
    loom::model(|| {
        let w = world(1, Policy::Fair);
        let hint = AtomicU32::new(0);
        let tag = w.host.get(&w.q[0], &hint, 0).unwrap();
        let w2 = w.clone();
        let b = thread::spawn(move || {
            let hint = AtomicU32::new(0);
            w2.host.get(&w2.q[1], &hint, 1)
        });
        let mask = w.host.put(&w.q[0], tag, &w.q, 1);
        match b.join().unwrap() {
            Ok(t) => {
                w.host.put(&w.q[1], t, &w.q, 1);
            }
            Err(r) => {
                assert_eq!(r, Refusal::Exhausted);
                assert_ne!(mask & 0b10, 0, "B refused but its bit was not returned");
            }
        }
    });
}

/// Queue 0 holds one tag of 8 under `fair`, queue 1 its fair share of
/// 4 (two active queues), and a thread asks for a fifth for queue 1
/// (the hint `hint`): the refusal at the limit the hand-off models race
/// with. Returns the world, queue 0's tag, queue 1's tags and the thread.
fn queue1_at_its_share(
    hint: u32,
) -> (
    Arc<World>,
    u32,
    Vec<u32>,
    thread::JoinHandle<Result<u32, Refusal>>,
) {
    let w = world(8, Policy::Fair);
    let h = AtomicU32::new(0);
    let t0 = w.host.get(&w.q[0], &h, 0).unwrap();
    let held: Vec<u32> = (0..4)
        .map(|_| w.host.get(&w.q[1], &h, 0).unwrap())
        .collect();
    assert_eq!(w.host.limit(&w.q[1], 0), 4);
    let w2 = w.clone();
    let b = thread::spawn(move || {
        let hint = AtomicU32::new(hint);
        w2.host.get(&w2.q[1], &hint, 1)
    });
    (w, t0, held, b)
}

/// (b') Lost wake-up, Limited: queue 1 is at its fair share (4 of 8 with
/// two active queues); one of its tags is freed while it asks for another.
#[test]
fn no_lost_wakeup_limited() {
    loom::model(|| {
        let (w, t0, held, b) = queue1_at_its_share(0);
        let mask = w.host.put(&w.q[1], held[0], &w.q, 1);
        match b.join().unwrap() {
            Ok(t) => assert!(t < 8),
            Err(r) => {
                assert_eq!(r, Refusal::Limited);
                assert_ne!(mask & 0b10, 0, "B refused but its bit was not returned");
            }
        }
        let _ = t0;
    });
}

/// (b'') A waiter at its limit is not handed out by the puts of others
/// (it could not use their tags) and is not lost: queue 1 is at its fair
/// share (4 of 8) and asks for a fifth while queue 0 frees its tag and
/// queue 1 frees one of its own. If queue 1 is refused, one of the two
/// puts returns its bit (its own, which leaves it below its share; queue
/// 0's only if it read queue 1 below its share, after queue 1's put). A
/// put that never hands out its own queue leaves the bit behind, with
/// queue 1 below its share and tags free: the model fails. (Reading the
/// limits before fence (P) does not make it fail: a put sees its own
/// decrement in program order.)
#[test]
fn limited_waiter_skipped_by_others_is_not_lost() {
    bounded(3, || {
        let (w, t0, held, b) = queue1_at_its_share(1);
        let w3 = w.clone();
        let own = held[0];
        let c = thread::spawn(move || w3.host.put(&w3.q[1], own, &w3.q, 1));
        let other = w.host.put(&w.q[0], t0, &w.q, 1);
        let own = c.join().unwrap();
        match b.join().unwrap() {
            Ok(t) => assert!(t < 8),
            Err(r) => {
                assert_eq!(r, Refusal::Limited);
                assert_ne!((own | other) & 0b10, 0, "queue 1 refused, its bit kept");
            }
        }
    });
}

/// (b''') The other side: a put never hands out a waiter that stays at its
/// limit. Queue 1 at its share is refused; queue 0's put, racing with the
/// refusal, leaves its bit (queue 1 still holds its share), which queue
/// 1's own put then returns. Queue 1 is at its share in every
/// interleaving: what the model explores is the put racing with the
/// refusal's bit and re-check.
#[test]
fn put_keeps_a_waiter_at_its_limit() {
    loom::model(|| {
        let (w, t0, held, b) = queue1_at_its_share(1);
        let other = w.host.put(&w.q[0], t0, &w.q, 1);
        assert_eq!(b.join().unwrap(), Err(Refusal::Limited));
        assert_eq!(other & 0b10, 0, "queue 1 handed out at its limit");
        assert_ne!(w.host.put(&w.q[1], held[0], &w.q, 1) & 0b10, 0);
    });
}

/// (c) Policy switch and resize concurrent with get/put.
#[test]
fn policy_switch_concurrent_with_get() {
    bounded(4, || {
        let w = world(2, Policy::Borrow);
        let hint = AtomicU32::new(0);
        let held = w.host.get(&w.q[0], &hint, 0).unwrap();
        let w2 = w.clone();
        let t = thread::spawn(move || {
            w2.host.set_policy(Policy::Fair);
            w2.host.set_depth(1).unwrap();
        });
        let r = get_put(&w, 1);
        t.join().unwrap();
        if r.is_err() {
            // Only possible once the depth shrank under the held tag.
            assert_eq!(w.host.depth(), 1);
            assert_ne!(w.host.put(&w.q[0], held, &w.q, 1) & 0b10, 0);
        } else {
            w.host.put(&w.q[0], held, &w.q, 1);
        }
        assert_eq!(w.host.policy(), Policy::Fair);
        assert_eq!(w.host.in_use(), 0);
        assert_eq!(w.q[0].in_flight() + w.q[1].in_flight(), 0);
    });
}

fn counters_consistent(w: &World) {
    let active = w.q.iter().filter(|q| q.is_active()).count() as u32;
    let starved = w.q.iter().filter(|q| q.is_starved()).count() as u32;
    assert_eq!(w.host.active_queues(), active, "active_queues drifted");
    assert_eq!(w.host.starved_queues(), starved, "starved count drifted");
}

/// (d) Activation (get) racing with deactivation (tick): the active count
/// never underflows (a wrap would make it huge) and settles exactly.
#[test]
fn activation_vs_tick() {
    loom::model(|| {
        let w = world(2, Policy::Fair);
        let w2 = w.clone();
        let t = thread::spawn(move || {
            w2.host.tick(&[&w2.q[0], &w2.q[1]], 10);
            assert!(w2.host.active_queues() <= 2);
        });
        get_put(&w, 0).unwrap();
        assert!(w.host.active_queues() <= 2);
        t.join().unwrap();
        counters_consistent(&w);
    });
}

/// (d') Starved marking racing with tick and the drain that clears it.
#[test]
fn starved_vs_tick_and_drain() {
    bounded(4, || {
        let w = world(1, Policy::Borrow);
        let hint = AtomicU32::new(0);
        let tag = w.host.get(&w.q[1], &hint, 0).unwrap();
        let w2 = w.clone();
        let t = thread::spawn(move || {
            w2.host.tick(&[&w2.q[0], &w2.q[1]], 10);
            w2.host.put(&w2.q[1], tag, &w2.q, 10)
        });
        let r = {
            let hint = AtomicU32::new(0);
            w.host.get(&w.q[0], &hint, 5)
        };
        assert!(w.host.starved_queues() <= 2);
        let mask = t.join().unwrap();
        match r {
            Ok(t0) => {
                w.host.put(&w.q[0], t0, &w.q, 11);
            }
            Err(_) => assert_ne!(mask & 1, 0),
        }
        counters_consistent(&w);
        // Everything drained: the first tick consumes the busy flags, the
        // second clears every mark.
        w.host.tick(&[&w.q[0], &w.q[1]], 1000);
        counters_consistent(&w);
        w.host.tick(&[&w.q[0], &w.q[1]], 1001);
        counters_consistent(&w);
        assert_eq!(w.host.active_queues(), 0);
        assert_eq!(w.host.starved_queues(), 0);
    });
}

/// (d'') `borrow`: a borrower refused at its fair share while one of its
/// own tags is freed is not marked starved. Queue 0 is starved (refused
/// with nothing held) and holds one tag, so the host is contended and
/// queue 1's limit is the fair share, 4 of 8; queue 1 holds 4 and asks for
/// a fifth while another of its CPUs frees one. A starved borrower would
/// keep the host contended, and itself at the fair share, for as long as
/// it keeps asking (each such refusal would mark it again). The refusal
/// path must decide from the attempt's own reading of `in_flight`: a new
/// one, after the put, is below the fair share.
#[test]
fn borrower_refused_at_its_limit_is_not_starved() {
    bounded(3, || {
        let w = world(8, Policy::Borrow);
        let hint = AtomicU32::new(0);
        get_put(&w, 0).unwrap();
        // Not contended: queue 1 borrows everything.
        let mut mine: Vec<u32> = (0..8)
            .map(|_| w.host.get(&w.q[1], &hint, 1).unwrap())
            .collect();
        assert_eq!(w.host.get(&w.q[0], &hint, 2), Err(Refusal::Exhausted));
        assert!(w.q[0].is_starved() && !w.q[1].is_starved());
        for _ in 0..4 {
            w.host.put(&w.q[1], mine.pop().unwrap(), &w.q, 2);
        }
        let t0 = w.host.get(&w.q[0], &hint, 3).unwrap();
        assert_eq!(w.host.limit(&w.q[1], 3), 4);
        let w2 = w.clone();
        let b = thread::spawn(move || {
            let hint = AtomicU32::new(1);
            w2.host.get(&w2.q[1], &hint, 4)
        });
        w.host.put(&w.q[1], mine.pop().unwrap(), &w.q, 4);
        if let Ok(t) = b.join().unwrap() {
            mine.push(t);
        }
        assert!(!w.q[1].is_starved(), "the borrower was marked starved");
        assert_eq!(w.host.starved_queues(), 1);
        for t in mine {
            w.host.put(&w.q[1], t, &w.q, 5);
        }
        w.host.put(&w.q[0], t0, &w.q, 5);
        assert_eq!(w.host.starved_queues(), 0);
    });
}

/// (d''') `borrow` with an expiry: the starved queue's drain (a put: it
/// leaves a marker, which only a tick stamps) races with the borrower's limit check
/// at the fair share, when the last refusal's window is long over. Whatever
/// the order, the host stays contended: the borrower is refused at its fair
/// share (a check between the starved count's decrement and the marker
/// would find neither, forget the old refusal, lift the limit cache and
/// hand the borrower a tag above its share right at the drain). The limit
/// cache keeps the fair share until a check finds the drain's window over,
/// and then lifts it.
#[test]
fn borrow_drain_window_vs_limit_check() {
    bounded(3, || {
        let w = world(8, Policy::Borrow);
        w.host.set_borrow_expiry_ns(1_000);
        let hint = AtomicU32::new(0);
        get_put(&w, 0).unwrap();
        let mut mine: Vec<u32> = (0..8)
            .map(|_| w.host.get(&w.q[1], &hint, 1).unwrap())
            .collect();
        assert_eq!(w.host.get(&w.q[0], &hint, 2), Err(Refusal::Exhausted));
        for _ in 0..4 {
            w.host.put(&w.q[1], mine.pop().unwrap(), &w.q, 2);
        }
        let t0 = w.host.get(&w.q[0], &hint, 3).unwrap();
        // The refusal's window (from 2) is over by 2_000: only the starved
        // queue, then its drain, keep the host contended.
        let w2 = w.clone();
        let b = thread::spawn(move || {
            let hint = AtomicU32::new(1);
            w2.host.get(&w2.q[1], &hint, 2_000)
        });
        w.host.put(&w.q[0], t0, &w.q, 2_000);
        assert_eq!(
            b.join().unwrap(),
            Err(Refusal::Limited),
            "the borrower got a tag above its fair share at the drain"
        );
        assert_eq!(w.host.starved_queues(), 0);
        assert_eq!(w.host.limit_bound(), 4, "the drain's window dropped");
        // The drain's window starts at the next tick.
        w.host.tick(&[&w.q[0], &w.q[1]], 2_500);
        assert!(
            w.host.is_contended(3_499),
            "the drain's window is over early"
        );
        assert!(!w.host.is_contended(3_500));
        assert_eq!(w.host.limit_bound(), u32::MAX, "stale after the window");
        for t in mine {
            w.host.put(&w.q[1], t, &w.q, 4_000);
        }
    });
}

/// (e) The flags word: a tick clearing the busy flag (`fetch_and`) races
/// with gets that set it and (re-)activate queues (`fetch_or`), and with a
/// put that drains a queue: no flag update is lost (q1's I/O is recorded
/// by this tick or the next), and the counters match the flags. (q1 may
/// still be deactivated by the racing tick: the documented race, undone by
/// its next get.)
#[test]
fn busy_flag_vs_tick() {
    loom::model(|| {
        let w = world(2, Policy::Fair);
        // q0 active and busy, holding a tag; q1 active, not busy any more.
        let hint = AtomicU32::new(0);
        let held = w.host.get(&w.q[0], &hint, 0).unwrap();
        let t1 = w.host.get(&w.q[1], &hint, 0).unwrap();
        w.host.put(&w.q[1], t1, &w.q, 1);
        w.host.tick(&[&w.q[0], &w.q[1]], 1);
        assert!(w.q[0].is_busy() && !w.q[1].is_busy());
        let w2 = w.clone();
        let t = thread::spawn(move || {
            w2.host.tick(&[&w2.q[0], &w2.q[1]], 10);
        });
        w.host.put(&w.q[0], held, &w.q, 1);
        get_put(&w, 1).unwrap();
        t.join().unwrap();
        counters_consistent(&w);
        // Whatever the interleaving, q1's I/O (and q0's put) is seen by
        // the racing tick or the next one.
        w.host.tick(&[&w.q[0], &w.q[1]], 11);
        assert!(w.q[0].last_active_ns() >= 10, "q0's put lost");
        assert!(w.q[1].last_active_ns() >= 10, "q1's I/O lost");
        assert!(!w.q[1].is_busy());
        counters_consistent(&w);
        // Idle from now on (idle window 0): two ticks deactivate both.
        w.host.tick(&[&w.q[0], &w.q[1]], 12);
        w.host.tick(&[&w.q[0], &w.q[1]], 13);
        assert_eq!(w.host.active_queues(), 0);
        counters_consistent(&w);
    });
}

/// (e') The tick clearing the busy flag races with the put that drains a
/// starved queue and clears its starved flag in the same word: neither
/// update may erase the other (the counters would drift).
#[test]
fn busy_clear_vs_starved_drain() {
    loom::model(|| {
        let w = world(1, Policy::Fair);
        let hint = AtomicU32::new(0);
        // q1 is refused below its share (starved), then gets the tag.
        let t0 = w.host.get(&w.q[0], &hint, 0).unwrap();
        assert!(w.host.get(&w.q[1], &hint, 0).is_err());
        assert!(w.q[1].is_starved());
        w.host.put(&w.q[0], t0, &w.q, 1);
        let t1 = w.host.get(&w.q[1], &hint, 0).unwrap();
        // Held at this tick: q1 stays busy until the next one.
        w.host.tick(&[&w.q[0], &w.q[1]], 1);
        assert!(w.q[1].is_busy() && w.q[1].is_starved());
        let w2 = w.clone();
        let t = thread::spawn(move || {
            w2.host.tick(&[&w2.q[0], &w2.q[1]], 10);
        });
        w.host.put(&w.q[1], t1, &w.q, 1);
        t.join().unwrap();
        counters_consistent(&w);
        assert!(!w.q[1].is_starved(), "drained to zero: not starved");
    });
}

/// (f) The limit cache: a policy switch races with the activation of a
/// second queue. Each refresh may read the other's input stale (a
/// store-buffering pattern); the CAS protocol makes the later refresh see
/// both, so the bound ends as the fair share of two queues. (A plain store
/// of each refresh's computation can leave `u32::MAX` behind.)
#[test]
fn limit_cache_policy_switch_vs_activation() {
    loom::model(|| {
        let w = world(8, Policy::None);
        get_put(&w, 0).unwrap();
        assert_eq!(w.host.limit_bound(), u32::MAX);
        let w2 = w.clone();
        let t = thread::spawn(move || w2.host.set_policy(Policy::Fair));
        get_put(&w, 1).unwrap();
        t.join().unwrap();
        assert_eq!(w.host.active_queues(), 2);
        assert_eq!(w.host.limit_bound(), 4, "stale limit cache");
    });
}

/// (g) Two resizes race: the valid masks end as those of the depth stored
/// last (a resizer that wrote its masks over newer ones re-reads the
/// depth and rewrites them), and so does the limit cache.
#[test]
fn concurrent_resizes_leave_consistent_masks() {
    bounded(3, || {
        let w = world(64, Policy::Fair);
        get_put(&w, 0).unwrap();
        get_put(&w, 1).unwrap();
        let w2 = w.clone();
        let t = thread::spawn(move || w2.host.set_depth(1).unwrap());
        w.host.set_depth(40).unwrap();
        t.join().unwrap();
        let depth = w.host.depth();
        assert!(depth == 1 || depth == 40);
        for word in 0..16u32 {
            let expected = (0..64u32)
                .filter(|b| b * 16 + word < depth)
                .fold(0u64, |m, b| m | 1 << b);
            assert_eq!(
                w.host.bitmap().valid_mask(word as usize),
                expected,
                "depth {depth}, word {word}"
            );
        }
        let bound = if depth == 40 { 20 } else { u32::MAX };
        assert_eq!(w.host.limit_bound(), bound);
    });
}

/// A `window` world of `depth` tags, `pct` percent shared, both queues
/// active and laid out by a tick: queue `i` owns window `i`.
fn windowed(depth: u32, pct: u32) -> Arc<World> {
    let w = world(depth, Policy::Window);
    w.host.set_shared_pct(pct).unwrap();
    get_put(&w, 0).unwrap();
    get_put(&w, 1).unwrap();
    w.host.tick(&[&w.q[0], &w.q[1]], 1);
    w
}

/// (h) `window`, two queues racing get/put: queue 1's only tag (its window
/// is one tag, nothing is shared) is freed by one of its CPUs while another
/// asks for one, and queue 0 allocates and frees in its own window
/// meanwhile. Either the get succeeds or the put of queue 1's tag returns
/// its bit; queue 0's puts never wake queue 1 (it cannot use their tags).
#[test]
fn window_no_lost_wakeup() {
    bounded(3, || {
        let w = windowed(2, 0);
        assert_eq!(w.host.window(&w.q[1]), Some(1..2));
        let hint = AtomicU32::new(0);
        let t1 = w.host.get(&w.q[1], &hint, 2).unwrap();
        assert_eq!(t1, 1);
        let w2 = w.clone();
        let b = thread::spawn(move || {
            let hint = AtomicU32::new(1);
            w2.host.get(&w2.q[1], &hint, 3)
        });
        let noise = get_put(&w, 0).unwrap();
        let mask = w.host.put(&w.q[1], t1, &w.q, 1);
        assert_eq!(noise & 0b10, 0, "queue 1 woken by a tag of queue 0");
        match b.join().unwrap() {
            Ok(t) => {
                assert_eq!(t, 1);
                w.host.put(&w.q[1], t, &w.q, 1);
            }
            Err(r) => {
                assert_eq!(r, Refusal::Limited);
                assert_ne!(
                    mask & 0b10,
                    0,
                    "queue 1 refused but its bit was not returned"
                );
            }
        }
        assert_eq!(w.host.in_use(), 0);
    });
}

/// (h') `window`, a shared tag: queue 1's window (one tag) is full and
/// queue 0 frees the only shared tag while queue 1 asks: either queue 1
/// gets the shared tag or the put returns its bit.
#[test]
fn window_no_lost_wakeup_shared() {
    bounded(3, || {
        // 3 tags, 34% shared: windows [0, 1) and [1, 2), shared [2, 3).
        let w = windowed(3, 34);
        assert_eq!(w.host.window_layout().shared(), 2..3);
        let hint = AtomicU32::new(0);
        let t1 = w.host.get(&w.q[1], &hint, 2).unwrap();
        let t0 = w.host.get(&w.q[0], &hint, 2).unwrap();
        let shared = w.host.get(&w.q[0], &hint, 2).unwrap();
        assert_eq!((t0, t1, shared), (0, 1, 2));
        let w2 = w.clone();
        let b = thread::spawn(move || {
            let hint = AtomicU32::new(1);
            w2.host.get(&w2.q[1], &hint, 3)
        });
        let mask = w.host.put(&w.q[0], shared, &w.q, 1);
        match b.join().unwrap() {
            Ok(t) => assert_eq!(t, 2),
            Err(_) => assert_ne!(
                mask & 0b10,
                0,
                "queue 1 refused but its bit was not returned"
            ),
        }
    });
}

/// (h'') `window`, shared slices: 4 tags, half shared, windows [0, 1) and
/// [1, 2), queue 0's slice of the shared part [2, 3), queue 1's [3, 4).
/// Queue 1's part is full and it asks while queue 0 frees its slice's tag,
/// then queue 1 frees one of its own: queue 0's tag is never handed to
/// queue 1 (neither as a tag nor as a wake-up), and queue 1 either gets
/// its own tag back or the put of it returns its bit.
#[test]
fn window_slices_no_lost_wakeup() {
    bounded(3, || {
        let w = windowed(4, 50);
        assert_eq!(w.host.shared_slice(&w.q[0]), 2..3);
        assert_eq!(w.host.shared_slice(&w.q[1]), 3..4);
        let hint = AtomicU32::new(0);
        let mine = [
            w.host.get(&w.q[0], &hint, 2).unwrap(),
            w.host.get(&w.q[0], &hint, 2).unwrap(),
        ];
        let theirs = [
            w.host.get(&w.q[1], &hint, 2).unwrap(),
            w.host.get(&w.q[1], &hint, 2).unwrap(),
        ];
        assert_eq!((mine, theirs), ([0, 2], [1, 3]));
        let w2 = w.clone();
        let b = thread::spawn(move || {
            let hint = AtomicU32::new(1);
            w2.host.get(&w2.q[1], &hint, 3)
        });
        let other = w.host.put(&w.q[0], 2, &w.q, 1);
        assert_eq!(other & 0b10, 0, "queue 1 woken by a tag of queue 0's slice");
        let own = w.host.put(&w.q[1], 3, &w.q, 1);
        match b.join().unwrap() {
            Ok(t) => assert_eq!(t, 3, "queue 1 got a tag outside its part"),
            Err(r) => {
                assert_eq!(r, Refusal::Limited);
                assert_ne!(own & 0b10, 0, "queue 1 refused, its bit not returned");
            }
        }
    });
}

/// (i) `window`: both queues allocate at once, each at most its window and
/// its slice of the shared part, and the slices overlap: 5 tags, 40%
/// shared, windows [0, 1) and [1, 2), shared part [2, 5), queue 0's slice
/// [2, 4) and queue 1's [3, 5), so tag 3 is contested. Each queue asks for
/// three tags, its whole part: every tag lands in the allocating queue's
/// part, none twice, and one queue is refused (the contested tag went to
/// the other), at its limit, with its part full when it looks.
#[test]
fn window_parts_hold_under_races() {
    // Which queue was refused, over all executions: both must be seen, or
    // the model contested nothing. (std atomics: outside the model.)
    static REFUSED: [std::sync::atomic::AtomicBool; 2] = [
        std::sync::atomic::AtomicBool::new(false),
        std::sync::atomic::AtomicBool::new(false),
    ];
    bounded(3, || {
        let w = windowed(5, 40);
        let part = |qi: usize| -> Vec<u32> {
            let mut p = vec![qi as u32];
            p.extend(w.host.shared_slice(&w.q[qi]));
            p
        };
        let (p0, p1) = (part(0), part(1));
        assert_eq!((p0.clone(), p1.clone()), (vec![0, 2, 3], vec![1, 3, 4]));
        // Three gets of queue `qi`; after a refusal, its part is full.
        let asks = |w: &World, qi: usize, hint: u32, part: &[u32]| {
            let hint = AtomicU32::new(hint);
            let got: Vec<Result<u32, Refusal>> =
                (0..3).map(|_| w.host.get(&w.q[qi], &hint, 2)).collect();
            if got.iter().any(Result::is_err) {
                for &t in part {
                    assert!(
                        w.host.bitmap().is_held(t),
                        "queue {qi} refused, tag {t} free"
                    );
                }
            }
            got
        };
        let (w2, p1b) = (w.clone(), p1.clone());
        let b = thread::spawn(move || asks(&w2, 1, 4, &p1b));
        let mine = asks(&w, 0, 2, &p0);
        let theirs = b.join().unwrap();
        let mut all = Vec::new();
        let mut refused = 0;
        for (qi, (tags, part)) in [(mine, &p0), (theirs, &p1)].into_iter().enumerate() {
            for t in tags {
                match t {
                    Ok(t) => {
                        assert!(part.contains(&t), "tag {t} outside {part:?}");
                        assert!(!all.contains(&t), "tag {t} twice");
                        all.push(t);
                    }
                    Err(r) => {
                        assert_eq!(r, Refusal::Limited);
                        REFUSED[qi].store(true, std::sync::atomic::Ordering::Relaxed);
                        refused += 1;
                    }
                }
            }
        }
        assert_eq!((all.len(), refused), (5, 1));
        assert!(w.q.iter().all(|q| q.in_flight() <= w.host.limit(q, 2)));
    });
    let seen = REFUSED
        .each_ref()
        .map(|r| r.load(std::sync::atomic::Ordering::Relaxed));
    assert_eq!(seen, [true, true], "the contested tag always went one way");
}

/// (j) `window`: the tick moving the windows races with a queue that is
/// refused. Queue 0 alone owns both tags (one window of two); queue 1
/// becomes active and is refused (no window yet, nothing shared) while the
/// tick gives it window [1, 2) and queue 0 then frees tag 1. Queue 1's bit
/// is returned by the tick's hand-out, by the put, or by the next tick,
/// also when the racing tick deactivated queue 1 during its get (a waiting
/// queue gets a window whether active or not).
#[test]
fn window_tick_vs_refusal() {
    bounded(3, || {
        let w = world(2, Policy::Window);
        w.host.set_shared_pct(0).unwrap();
        get_put(&w, 0).unwrap();
        w.host.tick(&[&w.q[0], &w.q[1]], 1);
        assert_eq!(w.host.window(&w.q[0]), Some(0..2));
        let hint = AtomicU32::new(0);
        let held = [
            w.host.get(&w.q[0], &hint, 2).unwrap(),
            w.host.get(&w.q[0], &hint, 2).unwrap(),
        ];
        let w2 = w.clone();
        let b = thread::spawn(move || {
            let hint = AtomicU32::new(1);
            w2.host.get(&w2.q[1], &hint, 3)
        });
        let ticked = w.host.tick(&[&w.q[0], &w.q[1]], 3);
        let one = if held[0] == 1 { held[0] } else { held[1] };
        let put = w.host.put(&w.q[0], one, &w.q, 1);
        let r = b.join().unwrap();
        let next = w.host.tick(&[&w.q[0], &w.q[1]], 4);
        if r.is_err() {
            assert_ne!(
                (ticked | put | next) & 0b10,
                0,
                "queue 1 refused, its bit never returned"
            );
        }
        // Queue 1 has its window, unless the racing tick deactivated it
        // (its get then re-activates it) and it waits no longer.
        if w.q[1].is_active() || w.host.waiter_mask() & 0b10 != 0 {
            assert_eq!(w.host.window(&w.q[1]), Some(1..2));
        }
    });
}

/// (j') `window`: the tick's hand-out is all that can save a refused queue
/// here. Queue 0 alone owns both tags but holds one; queue 1 is refused (no
/// window yet, nothing shared) while the tick gives it window [1, 2), whose
/// tag is free: no put will come. Either queue 1's re-check sees its
/// window, or the tick (fence (T), then the mask) returns its bit, or the
/// next tick does. (Without (T), the re-check may read the old layout and
/// the tick miss the bit.)
#[test]
fn window_tick_hands_out_free_window() {
    bounded(3, || {
        let w = world(2, Policy::Window);
        w.host.set_shared_pct(0).unwrap();
        get_put(&w, 0).unwrap();
        w.host.tick(&[&w.q[0], &w.q[1]], 1);
        let hint = AtomicU32::new(0);
        let t0 = w.host.get(&w.q[0], &hint, 2).unwrap();
        assert_eq!(t0, 0);
        let w2 = w.clone();
        let b = thread::spawn(move || {
            let hint = AtomicU32::new(1);
            w2.host.get(&w2.q[1], &hint, 3)
        });
        let ticked = w.host.tick(&[&w.q[0], &w.q[1]], 3);
        let r = b.join().unwrap();
        let next = w.host.tick(&[&w.q[0], &w.q[1]], 4);
        match r {
            Ok(t) => assert_eq!(t, 1),
            Err(_) => assert_ne!(
                (ticked | next) & 0b10,
                0,
                "queue 1 refused, its bit never returned"
            ),
        }
    });
}
