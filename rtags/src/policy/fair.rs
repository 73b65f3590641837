//! `fair`: blk-mq's fair share (`hctx_may_queue()`). When more than one
//! queue is active, a queue may hold at most `max(ceil(D / A), 4)` tags
//! (`D` the depth, `A` the active queues, clamped to `D`); a single active
//! queue is unlimited ([`fair_share`]).

use super::super::clock::Clock;
use super::super::host::HostTags;
use super::super::queue::QueueTags;
use super::Rule;

/// Minimum fair share ("allow at least some tags" in `hctx_may_queue`).
pub const MIN_FAIR_SHARE: u32 = 4;

/// The `fair` policy.
pub struct Fair;

impl Rule for Fair {
    const NAME: &'static str = "fair";
    type State = ();

    fn share(host: &HostTags, _state: &()) -> u32 {
        fair_share(host.depth(), host.active_queues())
    }

    #[inline(always)]
    fn limited<C: Clock>(host: &HostTags, _state: &(), q: &QueueTags, depth: u32, _: &C) -> bool {
        fair_share_reached(depth, host.active_queues(), q)
    }
}

/// blk-mq fair share of `depth` tags among `active_queues` queues.
///
/// `depth` (unlimited) when at most one queue is active, otherwise
/// `max(ceil(depth / active_queues), MIN_FAIR_SHARE)`, clamped to `depth`
/// (the clamp does not change any decision: more than `depth` tags can
/// never be held anyway).
pub fn fair_share(depth: u32, active_queues: u32) -> u32 {
    match core::num::NonZeroU32::new(active_queues) {
        Some(users) if active_queues > 1 => {
            let share = depth.saturating_add(active_queues.saturating_sub(1)) / users;
            share.max(MIN_FAIR_SHARE).min(depth)
        }
        _ => depth,
    }
}

/// Whether `q` holds at least its fair share of `depth` among `active`
/// queues, that share being below `depth`: `f >= l && l < depth` with
/// `l = fair_share(depth, active)` and `f` = `q`'s in-flight count.
///
/// Without the division: for `active > 1`,
/// `l = min(max(ceil(depth / active), 4), depth)`, and
/// `ceil(depth / active) < depth` whenever `depth >= 2`, so `l < depth` iff
/// `depth > 4`, and then `l = max(ceil(depth / active), 4)`;
/// `f >= ceil(depth / active)` iff `f * active >= depth`. (Checked against
/// [`fair_share`] in the tests.)
#[inline(always)]
pub(crate) fn fair_share_reached(depth: u32, active: u32, q: &QueueTags) -> bool {
    if active <= 1 || depth <= MIN_FAIR_SHARE {
        return false;
    }
    // The limit check is approximate by design (as in hctx_may_queue):
    // racing gets of one queue may overshoot it by the number of racing
    // CPUs. On the re-check this load follows (W).
    let f = q.in_flight();
    // No overflow: both factors are below 2^32.
    f >= MIN_FAIR_SHARE && u64::from(f).wrapping_mul(u64::from(active)) >= u64::from(depth)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::Policy;
    use super::*;
    use crate::host::testing::take;
    use crate::host::Refusal;
    use crate::sync::{AtomicU32, Ordering};
    use proptest::prelude::*;

    #[test]
    fn fair_share_examples() {
        assert_eq!(fair_share(64, 0), 64);
        assert_eq!(fair_share(64, 1), 64);
        assert_eq!(fair_share(64, 2), 32);
        assert_eq!(fair_share(64, 3), 22);
        assert_eq!(fair_share(64, 32), 4);
        assert_eq!(fair_share(2, 2), 2);
        assert_eq!(fair_share(1024, u32::MAX), 4);
    }

    /// blk-mq `hctx_may_queue()` (shared tag set, queue active).
    #[expect(
        clippy::manual_div_ceil,
        reason = "mirrors the C expression in hctx_may_queue"
    )]
    fn reference_may_queue(depth: u32, users: u32, active_requests: u32) -> bool {
        if users == 0 {
            return true;
        }
        let d = std::cmp::max((depth + users - 1) / users, 4);
        active_requests < d
    }

    proptest! {
        #[test]
        fn fair_share_matches_blk_mq(depth in 1u32..=1024, users in 1u32..200, busy in 0u32..1024) {
            // Only states where a tag could actually be free matter.
            prop_assume!(busy < depth);
            let limit = fair_share(depth, users);
            prop_assert_eq!(busy < limit, reference_may_queue(depth, users, busy));
            prop_assert!(limit >= 1 && limit <= depth);
        }
    }

    #[test]
    fn fair_share_reached_matches_limit() {
        let q = QueueTags::new(0);
        let actives = [
            0,
            1,
            2,
            3,
            4,
            5,
            7,
            8,
            16,
            17,
            100,
            256,
            257,
            1024,
            1025,
            u32::MAX,
        ];
        for depth in 1..=crate::bitmap::MAX_TAGS {
            for active in actives {
                let l = fair_share(depth, active);
                let fs = [
                    0,
                    1,
                    3,
                    4,
                    5,
                    l - 1,
                    l,
                    l + 1,
                    depth - 1,
                    depth,
                    depth + 1,
                    u32::MAX,
                ];
                for f in fs {
                    q.in_flight.store(f, Ordering::Relaxed);
                    assert_eq!(
                        fair_share_reached(depth, active, &q),
                        l < depth && f >= l,
                        "depth {depth} active {active} in_flight {f}"
                    );
                }
            }
        }
    }

    #[test]
    fn fair_limits_active_queues() {
        let h = HostTags::new(64, Policy::Fair).unwrap();
        let q0 = QueueTags::new(0);
        let q1 = QueueTags::new(1);
        // A single active queue is unlimited.
        let t0 = take(&h, &q0, 40, 0);
        assert_eq!(h.active_queues(), 1);
        assert_eq!(h.limit(&q0, 0), 64);
        // Second queue becomes active on first get: both get 32.
        let mut t1 = take(&h, &q1, 20, 0);
        assert_eq!(h.active_queues(), 2);
        assert_eq!(h.limit(&q0, 0), 32);
        assert_eq!(h.limit(&q1, 0), 32);
        let hint = AtomicU32::new(0);
        assert_eq!(h.get(&q0, &hint, 1), Err(Refusal::Limited));
        assert_eq!(q0.failures(), 1);
        assert!(q0.is_waiting());
        // Refused at (above) its fair share: not starved.
        assert!(!q0.is_starved());
        assert_eq!(h.waiter_mask(), 1);
        assert_eq!(h.waiting_queues(), 1);
        // q1 still below its share.
        t1.push(h.get(&q1, &hint, 1).unwrap());
        assert_eq!(q1.in_flight(), 21);
        // q1's puts leave q0's bit: q0 still holds more than its share.
        assert_eq!(h.put(&q1, t1.pop().unwrap(), &[&q0, &q1], 0), 0);
        assert_eq!(h.waiting_queues(), 1);
        // q0's own puts hand it out once it is below its share (40 held,
        // share 32: the ninth put), once.
        for (i, t) in t0.into_iter().enumerate() {
            let woken = if i == 8 { 1 } else { 0 };
            assert_eq!(h.put(&q0, t, &[&q0, &q1], 0), woken, "put {i}");
        }
        assert_eq!(h.waiting_queues(), 0);
        for t in t1 {
            assert_eq!(h.put(&q1, t, &[&q0, &q1], 0), 0);
        }
        assert_eq!((q0.in_flight(), q1.in_flight(), h.in_use()), (0, 0, 0));
    }
}
