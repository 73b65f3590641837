//! The limit cache: a bound below which no queue is at its policy limit,
//! so that the fast path compares `in_flight` with one cached word instead
//! of evaluating the policy (see "The limit cache" in
//! [`super::super::design`]); and a queue's limit.

use super::super::clock::Clock;
use super::super::queue::QueueTags;
use super::super::sync::Ordering;
use super::HostTags;

#[cfg(all(test, not(loom)))]
mod tests;

/// The limit cache word: the refresh epoch in the high half, the bound in
/// the low half (see "The limit cache" in the design notes).
pub(super) fn pack(epoch: u32, bound: u32) -> u64 {
    (u64::from(epoch) << 32) | u64::from(bound)
}

/// The bound of a limit cache word (its low half).
#[inline(always)]
pub(super) fn bound_of(cache: u64) -> u32 {
    // Truncation intended: the low half.
    cache as u32
}

/// The epoch of a limit cache word (its high half).
pub(super) fn epoch_of(cache: u64) -> u32 {
    // No truncation: the high half of a u64 fits.
    (cache >> 32) as u32
}

impl HostTags {
    /// The cached bound below which no queue is at its policy limit
    /// (`u32::MAX`: no limit binds), see "The limit cache" in the design
    /// notes. A snapshot, for statistics and tests.
    pub fn limit_bound(&self) -> u32 {
        // Relaxed: a snapshot.
        bound_of(self.limit_cache.load(Ordering::Relaxed))
    }

    /// The limit cache's bound for the current state: the policy's share
    /// if it is below the depth (the smallest limit a queue may have),
    /// else `u32::MAX` (no limit binds). Reads no clock.
    pub(super) fn current_bound(&self) -> u32 {
        // Relaxed (all inputs): they are published by the cache's RMWs (see
        // "The limit cache" in the design notes).
        let share = self.policy().share(self);
        if share < self.depth() {
            share
        } else {
            u32::MAX
        }
    }

    /// Recomputes the limit cache after a change of one of its inputs
    /// (policy, depth, active and joined counts, starved count, Borrow
    /// expiry or refusal time, a policy's own state). Called by whoever
    /// changed the input, after the change; see "The limit cache" in the
    /// design notes for why racing refreshes cannot leave a stale bound
    /// behind.
    #[cold]
    #[inline(never)]
    pub(crate) fn refresh_limit_cache(&self) {
        // Acquire: synchronizes with the CAS that wrote this value (the
        // epoch makes every value unique), the last of a chain of such
        // pairs back to every earlier refresh: the input changes made
        // before those refreshes are visible to `current_bound` below.
        let mut cur = self.limit_cache.load(Ordering::Acquire);
        loop {
            let new = pack(epoch_of(cur).wrapping_add(1), self.current_bound());
            // AcqRel: Release publishes our caller's input change to later
            // refreshes; Acquire on failure as for the load above. A
            // failure means that another refresh completed since our load,
            // maybe after an input change that we did not see: recompute.
            match self
                .limit_cache
                .compare_exchange(cur, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(seen) => cur = seen,
            }
        }
    }

    /// Current limit of `q` under the active policy (host depth when
    /// unlimited). `clock` is read only by a policy whose limit depends on
    /// the time (`borrow`, see [`Self::is_contended`]). A read: it changes
    /// nothing (a Borrow window found over is forgotten by the next limit
    /// check of a `get`), so that statistics (sysfs) do not steer the
    /// policy.
    pub fn limit<C: Clock>(&self, q: &QueueTags, clock: C) -> u32 {
        self.policy().limit(self, q, &clock)
    }

    /// The bound of the limit cache, as read by the fast path.
    #[inline(always)]
    pub(super) fn cached_bound(&self) -> u32 {
        // Relaxed: see `get`.
        bound_of(self.limit_cache.load(Ordering::Relaxed))
    }
}
