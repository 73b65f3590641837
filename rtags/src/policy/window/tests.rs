//! Tests of the `window` policy: its layout and hand-off, and through the
//! host.

use super::*;
use crate::bitmap::Error;
use crate::host::testing::take;
use crate::policy::Policy;
use crate::queue::ACTIVE;
use std::vec::Vec;

#[test]
fn layout_examples() {
    // Busch's 63 tags, two queues, 10% shared: 6 shared, 57 reserved,
    // windows of 28, the leftover tag shared too.
    let l = Layout::new(63, 10, 2);
    assert_eq!((l.windows, l.size, l.shared_start()), (2, 28, 56));
    assert_eq!(l.window(0), Some(0..28));
    assert_eq!(l.window(1), Some(28..56));
    assert_eq!(l.window(2), None);
    assert_eq!(l.shared(), 56..63);
    // Each window's slice of the shared part: ceil(7 / 2) = 4 tags,
    // the second from floor(7 / 2) = 3 on (one tag in both).
    assert_eq!(l.shared_slice(Some(0)), 56..60);
    assert_eq!(l.shared_slice(Some(1)), 59..63);
    assert_eq!(l.shared_slice(Some(2)), 56..63, "no such window");
    assert_eq!(l.shared_slice(None), 56..63);
    assert_eq!(l.limit(Some(1)), 32);
    assert_eq!(l.limit(None), 7);
    assert_eq!(l.slot_of(0), Some(0));
    assert_eq!(l.slot_of(27), Some(0));
    assert_eq!(l.slot_of(28), Some(1));
    assert_eq!(l.slot_of(56), None);
    assert_eq!(l.slot_of(1000), None);
    // Axboe's 32 tags: 4 shared (3 and the leftover), 2 each.
    let l = Layout::new(32, 10, 2);
    assert_eq!((l.size, l.shared()), (14, 28..32));
    assert_eq!(l.shared_slice(Some(0)), 28..30);
    assert_eq!(l.shared_slice(Some(1)), 30..32);
    assert_eq!(l.limit(Some(0)), 16);
    assert_eq!(l.limit(Some(1)), 16);
    // Three latencies' 12 tags: one shared tag each.
    let l = Layout::new(12, 10, 3);
    assert_eq!((l.size, l.shared()), (3, 9..12));
    let slices: Vec<Range<u32>> = (0..3).map(|s| l.shared_slice(Some(s))).collect();
    assert_eq!(slices, [9..10, 10..11, 11..12]);
    // Fewer shared tags than windows: one each, several sharing one.
    let l = Layout::new(13, 10, 5);
    assert_eq!((l.size, l.shared()), (2, 10..13));
    let slices: Vec<Range<u32>> = (0..5).map(|s| l.shared_slice(Some(s))).collect();
    assert_eq!(slices, [10..11, 10..11, 11..12, 11..12, 12..13]);
    // A lone queue: its window and the shared part are everything.
    let l = Layout::new(64, 10, 1);
    assert_eq!((l.window(0), l.shared()), (Some(0..58), 58..64));
    assert_eq!(l.shared_slice(Some(0)), 58..64);
    assert_eq!(l.limit(Some(0)), 64);
    // No windows (before the first tick, everything shared, or more
    // windows than reserved tags).
    for l in [
        Layout::new(64, 0, 0),
        Layout::new(64, 100, 3),
        Layout::new(4, 0, 5),
    ] {
        assert_eq!((l.windows, l.size, l.shared()), (0, 0, 0..l.depth));
        assert_eq!(l.shared_slice(Some(0)), 0..l.depth);
        assert_eq!(l.limit(Some(0)), l.depth);
        assert_eq!(l.slot_of(0), None);
    }
    // Percentages above 100 count as 100.
    assert_eq!(Layout::new(64, 1000, 2), Layout::new(64, 100, 2));
    assert_eq!(Layout::new(u32::MAX, 50, u32::MAX).limit(Some(0)), u32::MAX);
}

/// Windows and shared part partition the depth, in every layout.
#[test]
fn layouts_partition_the_depth() {
    for depth in (1..=70).chain([100, 255, 256, 1000, 1024]) {
        for pct in [0, 1, 10, 33, 50, 99, 100] {
            for windows in 0..=70 {
                let l = Layout::new(depth, pct, windows);
                let mut owner = vec![None; depth as usize];
                for s in 0..l.windows {
                    for t in l.window(s).unwrap() {
                        assert!(owner[t as usize].replace(s).is_none());
                    }
                }
                for t in 0..depth {
                    assert_eq!(l.slot_of(t), owner[t as usize]);
                    assert_eq!(owner[t as usize].is_none(), l.shared().contains(&t));
                }
                let shared = depth * pct / 100;
                assert!(l.shared().len() as u32 >= shared);
                if l.windows > 0 {
                    assert_eq!(l.windows, windows);
                    // The leftover of the division is less than a
                    // window per window.
                    assert!((l.shared().len() as u32) < shared + windows);
                    // The slices cover the shared part, in order, each
                    // ceil(S / P) tags but where the depth clips the
                    // last ones, overlapping by at most one tag.
                    let s = l.shared().len() as u32;
                    let mut covered = l.shared().start;
                    for k in 0..l.windows {
                        let r = l.shared_slice(Some(k));
                        assert!(r.start >= l.shared().start && r.end <= depth);
                        assert!(r.start <= covered, "gap before slice {k}");
                        assert!(
                            covered <= r.start + 1 || s == 0,
                            "slice {k} overlaps by more than one"
                        );
                        assert!(r.len() as u32 == s.div_ceil(l.windows) || r.end == depth);
                        covered = covered.max(r.end);
                        assert_eq!(l.limit(Some(k)), l.size + r.len() as u32);
                    }
                    assert_eq!(covered, depth, "shared tags in no slice");
                    assert_eq!(l.shared_slice(None), l.shared());
                    assert_eq!(l.limit(None), s);
                }
            }
        }
    }
}

fn activate(qs: &[QueueTags], which: &[usize]) {
    for (i, q) in qs.iter().enumerate() {
        if which.contains(&i) {
            q.set_flags(ACTIVE);
        } else {
            q.clear_flags(ACTIVE);
        }
    }
}

fn slots(qs: &[QueueTags]) -> Vec<Option<u32>> {
    qs.iter().map(QueueTags::window_slot).collect()
}

/// The (waiter bit, windows) pairs the hand-off sees.
fn bits(w: &Windows) -> Vec<(u32, u64)> {
    (0..64)
        .zip(&w.windows_of_bit)
        .map(|(b, s)| (b, s.load(Ordering::Relaxed)))
        .filter(|&(_, s)| s != 0)
        .collect()
}

#[test]
fn tick_assigns_windows_to_active_queues() {
    let w = Windows::new();
    let qs: Vec<QueueTags> = (0..4).map(|i| QueueTags::new(i + 64)).collect();
    assert!(!w.tick(&qs, 64, 0), "nothing active, nothing to do");
    activate(&qs, &[1, 3]);
    assert!(w.tick(&qs, 64, 0));
    assert_eq!(slots(&qs), [None, Some(0), None, Some(1)]);
    assert_eq!(w.layout(64).windows, 2);
    assert_eq!(
        bits(&w),
        [(1, 0b1), (3, 0b10)],
        "by waiter bit (index % 64)"
    );
    assert!(!w.tick(&qs, 64, 0), "stable");
    // A third queue: the others keep their windows, which shrink.
    activate(&qs, &[0, 1, 3]);
    assert!(w.tick(&qs, 64, 0));
    assert_eq!(slots(&qs), [Some(2), Some(0), None, Some(1)]);
    // Queue 1 leaves: queue 0's slot is out of range and moves.
    activate(&qs, &[0, 3]);
    assert!(w.tick(&qs, 64, 0));
    assert_eq!(slots(&qs), [Some(0), None, None, Some(1)]);
    assert_eq!(bits(&w), [(0, 0b1), (3, 0b10)]);
    // Nobody: no windows.
    activate(&qs, &[]);
    assert!(w.tick(&qs, 64, 0));
    assert_eq!(slots(&qs), [None; 4]);
    assert_eq!(w.layout(64).windows, 0);
    // Reset drops the windows until the next tick.
    activate(&qs, &[2]);
    assert!(w.tick(&qs, 64, 0));
    w.reset();
    assert_eq!(w.layout(64).windows, 0);
    assert!(w.tick(&qs, 64, 0));
    assert_eq!(w.layout(64).windows, 1);
}

#[test]
fn waiting_queues_get_windows_too() {
    let w = Windows::new();
    let qs: Vec<QueueTags> = (0..3).map(QueueTags::new).collect();
    activate(&qs, &[0]);
    // Queue 2 waits but was deactivated (a get racing with the tick).
    assert!(w.tick(&qs, 64, 0b100));
    assert_eq!(slots(&qs), [Some(0), None, Some(1)]);
    // Once it no longer waits (and is still inactive), it loses it.
    assert!(w.tick(&qs, 64, 0));
    assert_eq!(slots(&qs), [Some(0), None, None]);
}

#[test]
fn without_room_for_windows_nothing_moves() {
    let w = Windows::new();
    let qs: Vec<QueueTags> = (0..2).map(QueueTags::new).collect();
    activate(&qs, &[0, 1]);
    // One tag: no window can be formed for two queues.
    assert!(!w.tick(&qs, 1, 0));
    assert_eq!(w.layout(1).windows, 0);
    activate(&qs, &[0]);
    assert!(w.tick(&qs, 1, 0), "one window of one tag");
    assert_eq!(w.layout(1).window(0), Some(0..1));
}

#[test]
fn beyond_max_windows_nobody_has_one() {
    let w = Windows::new();
    let qs: Vec<QueueTags> = (0..MAX_WINDOWS + 1).map(QueueTags::new).collect();
    let all: Vec<usize> = (0..qs.len()).collect();
    activate(&qs, &all[..MAX_WINDOWS as usize]);
    assert!(w.tick(&qs, 1024, 0));
    assert_eq!(w.layout(1024).windows, MAX_WINDOWS);
    let mut seen: Vec<u32> = slots(&qs).into_iter().flatten().collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..MAX_WINDOWS).collect::<Vec<_>>());
    activate(&qs, &all);
    assert!(w.tick(&qs, 1024, 0));
    assert_eq!(w.layout(1024).windows, 0);
    assert!(slots(&qs).iter().all(Option::is_none));
}

#[test]
fn hand_off_wakes_the_waiters_that_may_allocate() {
    let w = Windows::new();
    w.set_shared_pct(25);
    let qs: Vec<QueueTags> = (0..4).map(QueueTags::new).collect();
    activate(&qs, &[0, 1, 2]);
    assert!(w.tick(&qs, 64, 0));
    // 64 tags: windows of 16, shared part 48..64 in slices of 6:
    // 48..54, 53..59, 58..64. Queue 3 has no window. Everything held.
    let l = w.layout(64);
    assert_eq!(l.shared_slice(Some(1)), 53..59);
    assert_eq!(l.shared_slice(Some(2)), 58..64);
    let map = TagBitmap::new(64).unwrap();
    let hint = AtomicU32::new(0);
    let all: Vec<u32> = (0..64).map(|_| map.get(&hint).unwrap()).collect();
    assert_eq!(all.len(), 64);
    assert_eq!(w.hand_off(&map, 64, 0b1111), HandOff::Only(0));
    // A tag of window 1 wakes its queue only, if it waits.
    assert!(map.put(20));
    assert_eq!(w.hand_off(&map, 64, 0b1111), HandOff::Only(0b0010));
    assert_eq!(w.hand_off(&map, 64, 0b1101), HandOff::Only(0));
    assert_eq!(map.get_in_range(16, 32, &hint), Some(20));
    // A tag of window 0's slice alone: queue 0, and queue 3, which
    // may use the whole shared part.
    assert!(map.put(50));
    assert_eq!(w.hand_off(&map, 64, 0b1111), HandOff::Only(0b1001));
    assert_eq!(w.hand_off(&map, 64, 0b0110), HandOff::Only(0));
    assert_eq!(map.get_in_range(48, 64, &hint), Some(50));
    // A tag in two slices wakes both owners.
    assert!(map.put(53));
    assert_eq!(w.hand_off(&map, 64, 0b0111), HandOff::Only(0b0011));
    // Without windows every tag is shared: a free one wakes everyone.
    w.reset();
    assert_eq!(w.hand_off(&map, 64, 0b0110), HandOff::All);
    assert_eq!(map.get_in_range(48, 64, &hint), Some(53));
    assert_eq!(w.hand_off(&map, 64, 0b0110), HandOff::Only(0));
    // Queues 1 and 65 share bit 1: both windows (and both slices)
    // count for it.
    let qs: Vec<QueueTags> = [0, 1, 65].into_iter().map(QueueTags::new).collect();
    activate(&qs, &[0, 1, 2]);
    assert!(w.tick(&qs, 64, 0));
    assert_eq!(bits(&w), [(0, 0b1), (1, 0b110)]);
    assert!(map.put(20));
    assert_eq!(w.hand_off(&map, 64, 0b11), HandOff::Only(0b10));
    assert_eq!(map.get_in_range(16, 32, &hint), Some(20));
    assert_eq!(w.hand_off(&map, 64, 0b11), HandOff::Only(0));
    assert!(map.put(40));
    assert_eq!(w.hand_off(&map, 64, 0b11), HandOff::Only(0b10), "window 2");
    assert_eq!(map.get_in_range(32, 48, &hint), Some(40));
    assert!(map.put(60));
    assert_eq!(w.hand_off(&map, 64, 0b11), HandOff::Only(0b10), "slice 2");
    assert_eq!(map.get_in_range(48, 64, &hint), Some(60));
    // Queue 65 without a window: bit 1 may use the whole shared part.
    activate(&qs, &[0, 1]);
    assert!(w.tick(&qs, 64, 0));
    assert_eq!(bits(&w), [(0, 0b1), (1, 0b10)]);
    assert_eq!(w.layout(64).shared_slice(Some(0)), 48..56);
    assert!(map.put(50));
    assert_eq!(w.hand_off(&map, 64, 0b11), HandOff::Only(0b11));
}

#[test]
fn shared_pct_is_validated() {
    let w = Windows::new();
    assert_eq!(w.shared_pct(), DEFAULT_SHARED_PCT);
    assert!(w.set_shared_pct(0));
    assert!(w.set_shared_pct(100));
    assert!(!w.set_shared_pct(101));
    assert!(!w.set_shared_pct(u32::MAX));
    assert_eq!(w.shared_pct(), 100);
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
    assert_eq!(h.shared_pct(), DEFAULT_SHARED_PCT);
    assert_eq!(h.set_shared_pct(101), Err(Error::InvalidPercent));
    assert_eq!(h.shared_pct(), DEFAULT_SHARED_PCT);
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
