//! The periodic maintenance: idle detection, the starved marks, Borrow's
//! drain stamps and the policy's own tick (see "Idle detection" in
//! [`super::super::design`]).

use super::super::policy::Wake;
use super::super::queue::{QueueTags, ACTIVE, BUSY, STARVED, WAITING};
use super::super::sync::{fence, Ordering};
use super::counted::clear_counted;
use super::HostTags;

#[cfg(all(test, not(loom)))]
mod tests;

impl HostTags {
    /// Periodic maintenance, called from the driver's timer (serialised,
    /// every few ms) with every queue that can be active or waiting (a queue
    /// not passed counts as idle and without a window) and the current
    /// time.
    ///
    /// Turns the queues' busy flags into time (see "Idle detection" in the
    /// design notes), deactivates queues not found busy for
    /// [`Self::idle_ns`], holding no tags and with no pending wake-up bit
    /// (also clearing their starved and waiting marks), clears the starved
    /// mark of a queue that holds its fair share and was not refused below
    /// it since the last tick, starts the Borrow window of a starved queue
    /// that drained since the last tick (or lost its mark in this one),
    /// then runs the policy's own tick ([`Rule::tick`](super::super::policy::Rule::tick): `lend` recomputes
    /// the per-queue limits, `window` lays the windows out for the active
    /// queues).
    ///
    /// Returns the waiter mask to wake, as [`Self::put`] does: the waiters
    /// that may allocate now, or every waiter when the policy's tick moved
    /// what decides it (`window`'s windows: a queue refused under the old
    /// layout may be stranded, see [`super::super::policy::window`]). A limit rises without a put (a queue retired, `lend`
    /// re-balanced, `borrow`'s contention over): a queue left waiting at
    /// its old limit would otherwise wait for the next put of any queue,
    /// which may be its own, a slow device's completion later.
    pub fn tick<Q: AsRef<QueueTags>>(&self, queues: &[Q], now_ns: u64) -> u64 {
        let idle = self.idle_ns();
        // Relaxed: snapshot; a bit set concurrently belongs to a queue that
        // is refused right now, i.e. busy, and is skipped by the next tick.
        let waiters = self.waiter_mask();
        for q in queues.iter().map(AsRef::as_ref) {
            // Relaxed (flags, in_flight): idle heuristic. A get racing with
            // this tick may be missed; see "Counters" in the design notes.
            let flags = q.state.load(Ordering::Relaxed);
            self.tick_starved(q, flags);
            if q.in_flight() != 0 {
                // Busy now, and until the tick after the put of the tags
                // held: keep the flag (puts do not set it).
                if flags & BUSY == 0 {
                    q.set_flags(BUSY);
                }
                q.note_busy_at(now_ns);
                continue;
            }
            if flags & BUSY != 0 {
                q.clear_flags(BUSY);
                q.note_busy_at(now_ns);
                continue;
            }
            if waiters & q.waiter_bit() != 0 {
                continue;
            }
            if now_ns.saturating_sub(q.last_active_ns()) < idle {
                continue;
            }
            let active = clear_counted(q, ACTIVE, &self.active_queues);
            if clear_counted(q, STARVED, &self.starved) || active {
                self.refresh_limit_cache();
            }
            // Its bit was already handed to a put.
            q.clear_flags(WAITING);
        }
        self.start_drain_window(now_ns);
        match self.policy().tick(self, queues) {
            Wake::MayAllocate => {
                // (K) SeqCst: pairs with (W) in `get`, as (P) does: either
                // a refused queue's re-check after (W) sees the limits this
                // tick raised, or the mask read below sees its bit.
                fence(Ordering::SeqCst);
                // Relaxed: as in `put`.
                if self.waiters.load(Ordering::Relaxed) == 0 {
                    return 0;
                }
                self.hand_off(queues, now_ns)
            }
            Wake::All => self.take_waiters(),
            Wake::Nobody => 0,
        }
    }
}
