//! `borrow`, after Yu Kuai's tag-borrowing series: no per-queue limit
//! while nobody fails to get a tag. Once a queue below its fair share finds
//! no free tag (it is *starved*), the fair share applies to every queue for
//! as long as the host is *contended*: while any queue is starved, and for
//! `borrow_expiry_ns` (default 5 ms) after a starved queue's last refusal
//! or its drain (from the next tick). With an expiry of 0 the fair share
//! lasts until the starved queues drain. The starved marks and the window
//! are the host's (see "Borrow's contention" in [`super::super::design`]).

use super::super::clock::Clock;
use super::super::host::{Contention, HostTags};
use super::super::queue::QueueTags;
use super::fair::{fair_share, fair_share_reached};
use super::Rule;

/// The `borrow` policy.
pub struct Borrow;

impl Rule for Borrow {
    const NAME: &'static str = "borrow";
    type State = ();

    /// The fair share while the host may be contended (the exact check
    /// decides, with the clock), the depth otherwise.
    fn share(host: &HostTags, _state: &()) -> u32 {
        if host.may_be_contended() {
            fair_share(host.depth(), host.active_queues())
        } else {
            host.depth()
        }
    }

    /// A read: a window found over is not forgotten (the next allocation's
    /// check does that), so that statistics do not steer the policy.
    fn limit<C: Clock>(host: &HostTags, _state: &(), _: &QueueTags, clock: &C) -> u32 {
        // The fair share of a single active queue is the depth: no need to
        // look at contention (nor at the clock).
        let (depth, active) = (host.depth(), host.active_queues());
        if active > 1 && host.contention(clock) == Contention::Yes {
            fair_share(depth, active)
        } else {
            depth
        }
    }

    #[inline(always)]
    fn limited<C: Clock>(
        host: &HostTags,
        _state: &(),
        q: &QueueTags,
        depth: u32,
        clock: &C,
    ) -> bool {
        // As in `limit`, and the check forgets a window found over.
        let active = host.active_queues();
        active > 1 && host.contended(clock) && fair_share_reached(depth, active, q)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::Policy;
    use crate::host::testing::take;
    use crate::host::{HostTags, Refusal};
    use crate::queue::QueueTags;
    use crate::sync::AtomicU32;

    #[test]
    fn borrow_falls_back_to_fair_and_lifts() {
        let h = HostTags::new(64, Policy::Borrow).unwrap();
        // Without an expiry first: the fair share lasts until the starved
        // queue drains.
        h.set_borrow_expiry_ns(0);
        let q0 = QueueTags::new(0);
        let q1 = QueueTags::new(1);
        let hint = AtomicU32::new(0);
        let t0 = h.get(&q0, &hint, 0).unwrap();
        assert_eq!(h.put(&q0, t0, &[&q0, &q1], 0), 0);
        assert_eq!(h.active_queues(), 1);
        // No contention: q1 may borrow everything although q0 is active.
        let mut held = take(&h, &q1, 64, 10);
        assert_eq!(h.active_queues(), 2);
        assert!(!h.is_contended(10));
        assert_eq!(h.limit(&q1, 10), 64);
        // q0 fails: contention on, fair share applies to q1.
        assert_eq!(h.get(&q0, &hint, 20), Err(Refusal::Exhausted));
        assert!(h.is_contended(20));
        assert_eq!(h.limit(&q1, 20), 32);
        assert_eq!(h.put(&q1, held.pop().unwrap(), &[&q0, &q1], 30), 1);
        assert_eq!(h.get(&q1, &hint, 31), Err(Refusal::Limited));
        // q0 gets the freed tag; contention lasts while it is starved.
        let t = h.get(&q0, &hint, 32).unwrap();
        assert!(h.is_contended(1_000));
        // Drains to zero: with expiry 0 contention ends at once.
        h.put(&q0, t, &[&q0, &q1], 35);
        assert!(!h.is_contended(40));
        assert_eq!(h.limit(&q1, 40), 64);

        // With an expiry, contention also lasts expiry ns after the last
        // failure, and after the starved queue drained (from the tick after
        // the drain: the drain reads no clock), even though nobody is starved
        // any more.
        let all = [&q0, &q1];
        held.push(h.get(&q1, &hint, 45).unwrap());
        h.set_borrow_expiry_ns(1_000);
        assert_eq!(h.get(&q0, &hint, 50), Err(Refusal::Exhausted));
        let t = loop {
            let freed = held.pop().unwrap();
            h.put(&q1, freed, &[&q0, &q1], 60);
            if let Ok(t) = h.get(&q0, &hint, 60) {
                break t;
            }
        };
        assert!(h.is_contended(2_000), "starved");
        h.put(&q0, t, &[&q0, &q1], 2_100);
        assert_eq!(h.starved_queues(), 0);
        // Until the next tick the drain's window has not started, whatever
        // the time.
        assert!(h.is_contended(2_100));
        assert!(h.is_contended(1_000_000));
        assert_eq!(h.limit(&q1, 1_000_000), 32);
        h.tick(&all, 2_100);
        assert!(h.is_contended(2_100), "the drain's window starts");
        assert!(h.is_contended(3_099));
        assert_eq!(h.limit(&q1, 3_099), 32);
        assert!(!h.is_contended(3_100));
        assert_eq!(h.limit(&q1, 3_100), 64);
        // The window after a drain starts later than the refusal's: it is
        // the one that counts. (q1 takes everything back first; its own
        // refusal at the end of the budget, above its fair share, does not
        // mark it.)
        while let Ok(t) = h.get(&q1, &hint, 3_900) {
            held.push(t);
        }
        assert!(!q1.is_starved() && !h.is_contended(3_950));
        assert_eq!(h.get(&q0, &hint, 4_000), Err(Refusal::Exhausted));
        assert!(h.is_contended(4_500), "starved");
        let t = loop {
            let freed = held.pop().unwrap();
            h.put(&q1, freed, &[&q0, &q1], 4_600);
            if let Ok(t) = h.get(&q0, &hint, 4_600) {
                break t;
            }
        };
        h.put(&q0, t, &all, 5_200);
        h.tick(&all, 5_200);
        assert!(h.is_contended(5_200), "the drain's window");
        assert!(h.is_contended(6_199));
        assert!(!h.is_contended(6_200));
    }
}
