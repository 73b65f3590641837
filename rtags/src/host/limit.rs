//! The limit cache: a bound below which no queue is at its policy limit,
//! so that the fast path compares `in_flight` with one cached word instead
//! of evaluating the policy (see "The limit cache" in
//! [`super::super::design`]); and the exact limit check behind it.

use super::super::clock::Clock;
use super::super::policy::{fair_share, Policy, MIN_FAIR_SHARE};
use super::super::queue::QueueTags;
use super::super::sync::Ordering;
use super::contention::Contention;
use super::HostTags;

#[cfg(all(test, not(loom)))]
mod tests;

/// The fair share of `depth` among `active` queues when it binds (is below
/// the depth), `u32::MAX` when it does not: the limit cache's bound for
/// queues under the fair share. `in_flight < fair_bound(d, a)` implies
/// `!fair_share_reached(d, a, q)`, and conversely.
pub(super) fn fair_bound(depth: u32, active: u32) -> u32 {
    let share = fair_share(depth, active);
    if share < depth {
        share
    } else {
        u32::MAX
    }
}

/// Whether `q` holds at least its fair share of `depth` among `active`
/// queues, that share being below `depth`: `f >= l && l < depth` with
/// `l = fair_share(depth, active)` and `f` = `q`'s in-flight count.
///
/// Without the division: for `active > 1`, `l = min(max(ceil(depth /
/// active), 4), depth)`, and `ceil(depth / active) < depth` whenever
/// `depth >= 2`, so `l < depth` iff `depth > 4`, and then `l = max(ceil(depth
/// / active), 4)`; `f >= ceil(depth / active)` iff `f * active >= depth`.
/// (Checked against [`fair_share`] in the tests.)
#[inline(always)]
pub(super) fn fair_share_reached(depth: u32, active: u32, q: &QueueTags) -> bool {
    if active <= 1 || depth <= MIN_FAIR_SHARE {
        return false;
    }
    // Relaxed: the limit check is approximate by design (as in
    // hctx_may_queue): racing gets of one queue may overshoot it by the
    // number of racing CPUs. On the re-check this load follows (W).
    let f = q.in_flight.load(Ordering::Relaxed);
    // No overflow: both factors are below 2^32.
    f >= MIN_FAIR_SHARE && u64::from(f).wrapping_mul(u64::from(active)) >= u64::from(depth)
}

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

    /// The limit cache's bound for the current state: the smallest limit
    /// below the depth that any queue may have, or `u32::MAX`. Reads no
    /// clock: under Borrow, a recorded refusal with a non-zero expiry
    /// counts as contention (the exact check decides, with the clock, and
    /// forgets the refusal once its window is over).
    pub(super) fn current_bound(&self) -> u32 {
        // Only the policy's inputs are read. Relaxed (all): they are
        // published by the cache's RMWs (see "The limit cache").
        let fair = || fair_bound(self.depth(), self.active_queues());
        match self.policy() {
            Policy::None => u32::MAX,
            Policy::Fair => fair(),
            Policy::Borrow => {
                let maybe_contended = self.starved_queues() != 0
                    || (self.borrow_expiry_ns() != 0
                        && self.last_failure.load(Ordering::Relaxed) != 0);
                if maybe_contended {
                    fair()
                } else {
                    u32::MAX
                }
            }
            Policy::Lend => {
                // A queue without a lend limit (0) is under the fair share,
                // the others under theirs.
                if self.lend_valid.load(Ordering::Relaxed) {
                    fair().min(self.lend_min.load(Ordering::Relaxed))
                } else {
                    fair()
                }
            }
            // Every allocation places its tag in the queue's window or its
            // slice: none may take the fast path's hinted word.
            Policy::Window => 0,
        }
    }

    /// Recomputes the limit cache after a change of one of its inputs
    /// (policy, depth, active count, starved count, Borrow expiry or
    /// refusal time, Lend limits). Called by whoever changed the input,
    /// after the change; see "The limit cache" for why racing refreshes
    /// cannot leave a stale bound behind.
    #[cold]
    #[inline(never)]
    pub(super) fn refresh_limit_cache(&self) {
        // Acquire: synchronizes with the CAS of the refresh that wrote this
        // value, and through the release sequence of the cache's RMWs with
        // every earlier one: the input changes made before those refreshes
        // are visible to `current_bound` below.
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
    /// unlimited). `clock` is read only under [`Policy::Borrow`], see
    /// [`Self::is_contended`]. A read: it changes nothing (a Borrow window
    /// found over is forgotten by the next limit check of a `get`), so
    /// that statistics (sysfs) do not steer the policy.
    pub fn limit<C: Clock>(&self, q: &QueueTags, clock: C) -> u32 {
        let depth = self.depth();
        match self.policy() {
            Policy::None => depth,
            Policy::Fair => fair_share(depth, self.active_queues()),
            Policy::Borrow => {
                // The fair share of a single active queue is the depth:
                // no need to look at contention (nor at the clock).
                let active = self.active_queues();
                if active > 1 && self.contention(&clock) == Contention::Yes {
                    fair_share(depth, active)
                } else {
                    depth
                }
            }
            Policy::Lend => {
                let lent = q.lend_limit();
                // Relaxed: advisory; a stale value only delays the switch.
                if lent == 0 || !self.lend_valid.load(Ordering::Relaxed) {
                    fair_share(depth, self.active_queues())
                } else {
                    lent.min(depth)
                }
            }
            Policy::Window => self.window_limit(q, depth),
        }
    }

    /// [`Policy::Window`]'s limit of `q`: its window and its slice of the
    /// shared part (without a window: the shared part).
    pub(super) fn window_limit(&self, q: &QueueTags, depth: u32) -> u32 {
        let layout = self.windows.layout(depth);
        layout.limit(self.windows.slot(q, &layout))
    }

    /// Whether `q` is at its limit, which is below the depth: the policy
    /// check of an allocation, equivalent to
    /// `limit < depth && in_flight >= limit` with `limit` as computed by
    /// [`Self::limit`], but without computing the limit (no division).
    /// Reads `in_flight` only when the limit can bind.
    #[inline(always)]
    pub(super) fn limited<C: Clock>(
        &self,
        q: &QueueTags,
        depth: u32,
        policy: Policy,
        clock: &C,
    ) -> bool {
        match policy {
            Policy::None => false,
            Policy::Fair => fair_share_reached(depth, self.active_queues(), q),
            Policy::Borrow => {
                // A single active queue's fair share is the depth: no need
                // to look at contention (nor at the clock).
                let active = self.active_queues();
                active > 1 && self.contended(clock) && fair_share_reached(depth, active, q)
            }
            Policy::Lend => {
                let lent = q.lend_limit();
                // Relaxed: advisory; a stale value only delays the switch.
                if lent == 0 || !self.lend_valid.load(Ordering::Relaxed) {
                    fair_share_reached(depth, self.active_queues(), q)
                } else {
                    // Relaxed: see `fair_share_reached`.
                    lent < depth && q.in_flight.load(Ordering::Relaxed) >= lent
                }
            }
            Policy::Window => {
                // Not used by `get`, which places the tag instead (see
                // `try_get`): the count of a queue that holds tags of
                // another window (from an older layout) may be below its
                // limit while its window and its slice are full.
                let limit = self.window_limit(q, depth);
                // Relaxed: see `fair_share_reached`.
                limit < depth && q.in_flight.load(Ordering::Relaxed) >= limit
            }
        }
    }

    /// The bound of the limit cache, as read by the fast path.
    #[inline(always)]
    pub(super) fn cached_bound(&self) -> u32 {
        // Relaxed: see `get`.
        bound_of(self.limit_cache.load(Ordering::Relaxed))
    }
}
