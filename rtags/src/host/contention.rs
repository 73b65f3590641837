//! Borrow's contention: which queues are starved, and the expiry window
//! after a starved queue's last refusal or its drain (see "Borrow's
//! contention" in [`super::super::design`]). The marks are kept under every
//! policy (`host/starved_queues` counts them); only `borrow` limits by
//! them.

use super::super::clock::Clock;
use super::super::policy::fair_share;
use super::super::queue::{QueueTags, DENIED, STARVED};
use super::super::sync::Ordering;
use super::counted::clear_counted;
use super::HostTags;

#[cfg(all(test, not(loom)))]
mod tests;

/// Default borrow expiry: the fair share lasts 5 ms after a starved queue
/// was last refused, and after its drain from the tick that follows (see
/// "Borrow's contention" in the design notes for why this long; 0 = it ends
/// when the starved queues drain).
pub const DEFAULT_BORROW_EXPIRY_NS: u64 = 5_000_000;

/// `last_failure` after a starved queue drained, until the next tick
/// stamps it with its time (see "Borrow's contention"): later than any
/// stamp, so that a refusal's `fetch_max` leaves it in place.
pub(super) const DRAINED: u64 = u64::MAX;

/// The `last_failure` stamp of the time `now_ns`: `now_ns + 1` (0 means
/// none), below [`DRAINED`] even at the end of time.
pub(super) fn stamp(now_ns: u64) -> u64 {
    now_ns.saturating_add(1).min(DRAINED - 1)
}

/// Borrow's contention at some time, as read (see [`HostTags::contention`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Contention {
    /// Contended: a queue is starved, or a drain awaits its stamp, or a
    /// recorded stamp's window is open.
    Yes,
    /// Not contended, nothing recorded.
    No,
    /// Not contended: the window of this recorded stamp is over.
    Over(u64),
}

impl HostTags {
    /// How long contention lasts after the last refusal (Borrow), in ns.
    pub fn borrow_expiry_ns(&self) -> u64 {
        // Relaxed: configuration value.
        self.borrow_expiry_ns.load(Ordering::Relaxed)
    }

    /// Sets the Borrow expiry (0 = only starved queues keep contention on;
    /// default [`DEFAULT_BORROW_EXPIRY_NS`]).
    pub fn set_borrow_expiry_ns(&self, ns: u64) {
        // Relaxed: configuration value.
        self.borrow_expiry_ns.store(ns, Ordering::Relaxed);
        self.forget_window();
        self.refresh_limit_cache();
    }

    /// Drops Borrow's recorded refusal or drain after a change of the
    /// policy or the expiry: it was recorded under the old setting (a
    /// drain's marker, stored only with a non-zero expiry, would otherwise
    /// start a window long after its drain). Contention starts afresh from
    /// the starved queues. The caller refreshes the limit cache.
    pub(super) fn forget_window(&self) {
        // Relaxed: configuration change; published to the limit cache by
        // the caller's refresh. A refusal or drain racing with it may be
        // lost: the same looseness as the policy switch itself.
        self.last_failure.store(0, Ordering::Relaxed);
    }

    /// Whether the host counts as contended at `clock`'s time (Borrow
    /// policy): some queue is starved, or a starved queue drained since the
    /// last tick, or the last refusal of a starved queue, or the first tick
    /// after a starved queue drained, is less than `borrow_expiry_ns` ago
    /// (see "Borrow's contention" in the design notes). The clock is only
    /// read in the last case, with a non-zero expiry.
    ///
    /// This is the check a `get` makes: a window found over is forgotten
    /// (and the limit cache lifted), so that later checks need no clock.
    /// [`Self::limit`] reads the same state without changing it.
    pub fn is_contended<C: Clock>(&self, clock: C) -> bool {
        self.contended(&clock)
    }

    /// Borrow's contention at `clock`'s time, read without changing
    /// anything; the clock is read only when a stamp's window decides.
    pub(crate) fn contention<C: Clock>(&self, clock: &C) -> Contention {
        // Acquire: pairs with the Release decrement in `clear_counted`: a
        // check that finds a starved queue's clear also finds the drain
        // marker stored before it (see `clear_starved`), so that the host
        // is never found uncontended between the two. Out of line: the fast
        // path never reads the count.
        if self.starved.load(Ordering::Acquire) != 0 {
            return Contention::Yes;
        }
        if self.borrow_expiry_ns() == 0 {
            return Contention::No;
        }
        // Relaxed: ordered after the count's load above where it matters
        // (a drain); otherwise a heuristic, as `note_failure`.
        match self.last_failure.load(Ordering::Relaxed) {
            0 => Contention::No,
            // The drain's window has not started: it starts at the tick.
            DRAINED => Contention::Yes,
            stamp => {
                let end = (stamp - 1).saturating_add(self.borrow_expiry_ns());
                if clock.now_ns() < end {
                    Contention::Yes
                } else {
                    Contention::Over(stamp)
                }
            }
        }
    }

    /// [`Self::is_contended`] for a clock the caller already borrowed.
    pub(crate) fn contended<C: Clock>(&self, clock: &C) -> bool {
        match self.contention(clock) {
            Contention::Yes => true,
            Contention::No => false,
            Contention::Over(stamp) => {
                // Forget the stamp so that later checks need no clock.
                // Relaxed: heuristic; the CAS keeps a newer refusal, and the
                // drain marker. It may find `stamp` written again since
                // (replaced by the marker, then stamped by a tick at the
                // same time): that is the same window, over at our reading
                // too, since that tick read the clock before we did (else
                // its stamp would be later than our end of the window).
                if self
                    .last_failure
                    .compare_exchange(stamp, 0, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    // Borrow's bound may be lifted.
                    self.refresh_limit_cache();
                }
                false
            }
        }
    }

    /// Records a refusal time for Borrow's contention window. Returns
    /// whether none was recorded before (the limit cache only looks at
    /// whether one is).
    pub(super) fn note_failure(&self, now_ns: u64) -> bool {
        let stamp = stamp(now_ns);
        // Relaxed: heuristic timestamp; fetch_max keeps it monotonic and
        // leaves a drain's marker in place (its window starts later).
        if self.last_failure.load(Ordering::Relaxed) < stamp {
            return self.last_failure.fetch_max(stamp, Ordering::Relaxed) == 0;
        }
        false
    }

    /// A starved queue drained to zero (or holds its fair share, see
    /// `tick_starved`): no longer starved, and with a non-zero expiry the
    /// host stays contended for that long after the drain (see "Borrow's
    /// contention" in the design notes). The drain reads no clock: it
    /// stores [`DRAINED`], which the next tick turns into its time.
    #[cold]
    #[inline(never)]
    pub(super) fn clear_starved(&self, q: &QueueTags) {
        // The marker before the count: a contention check between the two
        // would otherwise find neither a starved queue nor the drain, forget
        // an old refusal and lift the fair share right at the drain. The
        // Release decrement in `clear_counted` publishes the marker to the
        // check that reads the count without this queue (Acquire).
        //
        // Relaxed: ordered by that pair, published to the limit cache by the
        // refresh below; `fetch_max`, as `note_failure`, so that the stamp
        // never moves back. (If the clear below loses to another clearer,
        // the marker stays: a window for a queue that drained anyway.)
        let marked = self.borrow_expiry_ns() != 0
            && self.last_failure.fetch_max(DRAINED, Ordering::Relaxed) == 0;
        if clear_counted(q, STARVED, &self.starved) || marked {
            self.refresh_limit_cache();
        }
    }

    /// The tick's look at `q`'s starved mark (`flags` as the tick read
    /// them): a starved queue that was not refused below its fair share
    /// since the last tick and holds at least its fair share is no longer
    /// starved, and its window starts as after a drain (see "Borrow's
    /// contention" in the design notes). If only a drain to zero or
    /// idleness cleared the mark, a busy queue (at queue depth 32, say) that
    /// once was starved would keep the host contended for as long as it does
    /// I/O, long after it has its share, and every other queue would be held
    /// at the fair share for good. A refusal at its limit says nothing here, as it marks no
    /// queue starved: the contention it would prolong is its own.
    ///
    /// Takes the queue's [`DENIED`] mark for the next period whatever the
    /// outcome. A refusal racing with this tick counts for this period or
    /// for the next (and re-marks the queue starved if this tick cleared
    /// it): the decision is a heuristic, as the refusal's own reading.
    pub(super) fn tick_starved(&self, q: &QueueTags, flags: u32) {
        let denied = flags & DENIED != 0 && q.take_flags(DENIED);
        if flags & STARVED == 0 || denied {
            return;
        }
        // Relaxed (in_flight, active count): see `fair_share_reached`.
        if q.in_flight() >= fair_share(self.depth(), self.active_queues()) {
            // As a drain: the marker, then the mark (the stamp comes at the
            // end of this tick).
            self.clear_starved(q);
        }
    }

    /// The tick's look at Borrow's drain marker: a starved queue drained
    /// since the last tick, or lost its mark in this one, so its window
    /// starts now, at most one tick period after the drain (see "Borrow's
    /// contention" in the design notes).
    pub(super) fn start_drain_window(&self, now_ns: u64) {
        // Relaxed: heuristic, as `note_failure`; the tick is the only writer
        // that replaces the marker, and it is serialised, so no stale
        // reading of the clock can stamp a later drain's marker. No
        // refresh: the bound only depends on whether a stamp is recorded.
        let _ = self.last_failure.compare_exchange(
            DRAINED,
            stamp(now_ns),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Whether the host may be contended, as far as it can be told without
    /// the clock: a queue is starved, or a refusal or drain is recorded
    /// with a non-zero expiry (Borrow's share; the exact check decides with
    /// the clock, and forgets a stamp once its window is over).
    pub(crate) fn may_be_contended(&self) -> bool {
        // Relaxed: limit cache inputs, published by the cache's RMWs.
        self.starved_queues() != 0
            || (self.borrow_expiry_ns() != 0 && self.last_failure.load(Ordering::Relaxed) != 0)
    }
}
