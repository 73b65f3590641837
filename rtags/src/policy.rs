//! Tag sharing policies.
//!
//! A policy decides how many tags of the host-wide budget one request queue
//! may hold at a time (its *limit*); [`super::host::HostTags::limit`]
//! evaluates it. With `D` the host depth and `A` the number of active
//! queues:
//!
//! * [`Policy::Fair`]: blk-mq's `hctx_may_queue()`: when `A > 1` a queue may
//!   hold at most `max(ceil(D / A), 4)` tags (clamped to `D`); a single
//!   active queue is unlimited ([`fair_share`]).
//! * [`Policy::Borrow`] (Yu Kuai's first tag-borrowing series): no per-queue
//!   limit while nobody fails to get a tag. Once a queue below its fair
//!   share finds no free tag, the fair share applies for as long as the
//!   host is *contended*: while any queue is starved (failed below its
//!   share and has not since drained to zero in flight), and for
//!   `borrow_expiry_ns` (default 5 ms) after a starved queue's last refusal
//!   or its drain (from the next tick). With an expiry of 0 this is the v1
//!   behaviour "fair until the waiting queue drains" (see "Borrow's
//!   contention" in [`super::host`]).
//! * [`Policy::None`]: first come, first served: no per-queue limit.
//! * [`Policy::Lend`] (Kuai's later version): the periodic host tick moves
//!   tags stepwise from the active queues not refused since the previous
//!   tick (the lenders, each keeping what it holds and at least a reserve
//!   of [`LEND_RESERVE`] tags) to those refused (the borrowers: one below
//!   its fair share climbs back a step, the others share the rest evenly);
//!   when nobody fails, the limits drift back towards the fair share.
//! * [`Policy::Window`] (after Keith Busch's RFC "sbitmap enforced fairness
//!   for blk-mq"): every active queue owns a *window* of the bitmap, its
//!   reserved share of the depth, and allocates there first, then in the
//!   *shared part* that anyone may use; a freed tag wakes only the queues
//!   that can use it. Not a count but the place of a tag limits a queue:
//!   see [`super::window`].

/// Minimum fair share ("allow at least some tags" in `hctx_may_queue`).
pub const MIN_FAIR_SHARE: u32 = 4;

/// Tags kept back for every active queue that lends under [`Policy::Lend`].
pub const LEND_RESERVE: u32 = 4;

/// How the host tag budget is shared between request queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Policy {
    /// First come, first served: no per-queue limit.
    None,
    /// blk-mq fair share whenever more than one queue is active.
    #[default]
    Fair,
    /// Unlimited until contention, then fair share until contention ends.
    Borrow,
    /// Periodic stepwise lending to the refused queues (see module docs).
    Lend,
    /// A reserved window of the bitmap per active queue, plus a shared part
    /// (see [`super::window`]).
    Window,
}

impl Policy {
    /// All policies, in `as_u32` order.
    pub const ALL: [Policy; 5] = [
        Policy::None,
        Policy::Fair,
        Policy::Borrow,
        Policy::Lend,
        Policy::Window,
    ];

    /// Parses a sysfs-style name (`fair`, `borrow`, `none`, `lend`,
    /// `window`), with an optional single trailing newline.
    pub fn from_name(name: &[u8]) -> Option<Policy> {
        let name = name.strip_suffix(b"\n").unwrap_or(name);
        Policy::ALL
            .into_iter()
            .find(|p| p.name().as_bytes() == name)
    }

    /// The name accepted by [`Self::from_name`].
    pub fn name(&self) -> &'static str {
        match self {
            Policy::None => "none",
            Policy::Fair => "fair",
            Policy::Borrow => "borrow",
            Policy::Lend => "lend",
            Policy::Window => "window",
        }
    }

    /// Encoding for storage in an atomic.
    pub fn as_u32(self) -> u32 {
        match self {
            Policy::None => 0,
            Policy::Fair => 1,
            Policy::Borrow => 2,
            Policy::Lend => 3,
            Policy::Window => 4,
        }
    }

    /// Decodes [`Self::as_u32`]; `None` for unknown values.
    pub fn from_u32(v: u32) -> Option<Policy> {
        // A plain match (not a search of `ALL`): read on every allocation.
        match v {
            0 => Some(Policy::None),
            1 => Some(Policy::Fair),
            2 => Some(Policy::Borrow),
            3 => Some(Policy::Lend),
            4 => Some(Policy::Window),
            _ => None,
        }
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_round_trip() {
        for p in Policy::ALL {
            assert_eq!(Policy::from_name(p.name().as_bytes()), Some(p));
            let mut with_nl = std::vec::Vec::from(p.name().as_bytes());
            with_nl.push(b'\n');
            assert_eq!(Policy::from_name(&with_nl), Some(p));
            assert_eq!(Policy::from_u32(p.as_u32()), Some(p));
        }
        assert_eq!(Policy::from_name(b"fair\n\n"), None);
        assert_eq!(Policy::from_name(b"Fair"), None);
        assert_eq!(Policy::from_name(b""), None);
        assert_eq!(Policy::from_name(b" fair"), None);
        assert_eq!(Policy::from_u32(5), None);
        assert_eq!(Policy::from_name(b"window"), Some(Policy::Window));
        assert_eq!(Policy::from_name(b"windows"), None);
        assert_eq!(Policy::default(), Policy::Fair);
    }

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
}
