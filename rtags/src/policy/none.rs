//! `none`: first come, first served. No queue has a limit: the budget
//! alone refuses.

use super::super::clock::Clock;
use super::super::host::HostTags;
use super::super::queue::QueueTags;
use super::Rule;

/// The `none` policy.
pub struct NoLimit;

impl Rule for NoLimit {
    const NAME: &'static str = "none";
    type State = ();

    fn share(host: &HostTags, _state: &()) -> u32 {
        host.depth()
    }

    #[inline(always)]
    fn limited<C: Clock>(_: &HostTags, _state: &(), _: &QueueTags, _: u32, _: &C) -> bool {
        false
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
    fn none_is_first_come_first_served() {
        let h = HostTags::new(16, Policy::None).unwrap();
        let q0 = QueueTags::new(0);
        let q1 = QueueTags::new(1);
        let hint = AtomicU32::new(0);
        h.get(&q1, &hint, 0).unwrap();
        h.put(&q1, 0, &[&q0, &q1], 0);
        let _ = take(&h, &q0, 16, 0);
        assert_eq!(h.active_queues(), 2);
        assert_eq!(h.limit(&q1, 0), 16);
        assert_eq!(h.get(&q1, &hint, 0), Err(Refusal::Exhausted));
    }
}
