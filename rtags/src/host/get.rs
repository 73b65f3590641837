//! Allocation: [`HostTags::get`]'s inline fast path, the out-of-line rest
//! (activation, the exact limit check, the bitmap search) and the refusal
//! with its fence (W) (see "The fast path" and "A refusal" in
//! [`super::super::design`]).

use super::super::clock::{Clock, LazyNow};
use super::super::policy::{fair_share, Admit};
use super::super::queue::{
    QueueTags, ACTIVE, BUSY, DENIED, FAST_PATH_FLAGS, JOINED, STARVED, WAITING, WATCHED,
};
use super::super::sync::{fence, AtomicU32, Ordering};
use super::counted::set_counted;
use super::{HostTags, Refusal};

#[cfg(all(test, not(loom)))]
mod tests;

/// An allocation attempt that failed: the [`Refusal`], and the queue's
/// `in_flight` as the attempt read it (see `HostTags::get_slow`).
#[derive(Clone, Copy, Debug)]
pub(super) struct FailedAttempt {
    /// Why the attempt failed.
    refusal: Refusal,
    /// Tags the queue held, read before the attempt's policy check.
    held: u32,
}

impl HostTags {
    /// Allocates a tag for queue `q`.
    ///
    /// `hint` is the caller's per-CPU / per-hardware-queue allocation hint
    /// (seed it with [`initial_hint`](super::super::bitmap::initial_hint)).
    /// `clock` is only read when a decision needs the time (see "Time" in
    /// the design notes): pass the clock function, not its value. On `Err`,
    /// bit `q.index() % 64` has been set in the waiter mask and is
    /// guaranteed to be returned by a later [`Self::put`] or
    /// [`Self::put_finish`] (see "Why no wake-up is lost" in the design
    /// notes): the caller should stop its queue and re-run it when one
    /// returns a mask containing that bit. What the caller wrote before
    /// this call (blk-mq: its `SCHED_RESTART` mark) happens before whatever
    /// the taker of the bit does after it: the bit is set with a release
    /// and taken with an acquire (see "The restart" in the design notes).
    #[inline(always)]
    pub fn get<C: Clock>(&self, q: &QueueTags, hint: &AtomicU32, clock: C) -> Result<u32, Refusal> {
        self.get_watching(q, hint, clock, || {})
    }

    /// [`Self::get`], calling `on_watched` when it takes the queue's next
    /// tag after [`QueueTags::watch_next_grant`] (before returning it).
    /// `on_watched` runs out of line, on the slow path only.
    #[inline(always)]
    pub fn get_watching<C: Clock, W: FnOnce()>(
        &self,
        q: &QueueTags,
        hint: &AtomicU32,
        clock: C,
        on_watched: W,
    ) -> Result<u32, Refusal> {
        // The fast path (see the design notes): active, busy since the last
        // tick, neither waiting nor watched (one load), below the limit
        // cache's bound, a free tag in the hinted word.
        //
        // Relaxed (flags, in_flight, cache): the flags are heuristics
        // (busy, waiting, watched) or decided by the RMWs in `set_counted`
        // (active); the limit check is approximate by design (as in
        // hctx_may_queue): racing gets of one queue may overshoot it by
        // the number of racing CPUs, and a get racing with a change of the
        // limit may use the old one.
        if q.state.load(Ordering::Relaxed) & FAST_PATH_FLAGS == ACTIVE | BUSY
            && q.in_flight.load(Ordering::Relaxed) < self.cached_bound()
        {
            if let Some(tag) = self.bitmap.get_fast(hint) {
                // Relaxed: accounting; tag ownership is carried by the
                // bitmap bit.
                q.in_flight.fetch_add(1, Ordering::Relaxed);
                return Ok(tag);
            }
        }
        self.get_other(q, hint, &clock, on_watched)
    }

    /// Everything [`Self::get`] does not do inline: activation and the
    /// busy flag, the exact limit check, the bitmap search, the waiting
    /// flag, and the refusal path.
    #[cold]
    #[inline(never)]
    fn get_other<C: Clock, W: FnOnce()>(
        &self,
        q: &QueueTags,
        hint: &AtomicU32,
        clock: &C,
        on_watched: W,
    ) -> Result<u32, Refusal> {
        // Relaxed: see `get`.
        let flags = q.state.load(Ordering::Relaxed);
        if flags & (ACTIVE | BUSY) != ACTIVE | BUSY {
            self.mark_busy(q);
        }
        // The first attempt uses the clock itself (not a `LazyNow`): it is
        // read at most once here, and at most once more by the slow path.
        let got = match self.try_get(q, hint, clock) {
            Ok(tag) => {
                if flags & WAITING != 0 {
                    q.clear_flags(WAITING);
                }
                Ok(tag)
            }
            Err(first) => self.get_slow(q, hint, clock, first),
        };
        // The flag as read before the attempt: a watch set during it is
        // for a later tag. Acquire: pairs with `watch_next_grant`'s Release,
        // so that `on_watched` sees what its caller wrote before the watch.
        if got.is_ok()
            && flags & WATCHED != 0
            && q.state.fetch_and(!WATCHED, Ordering::Acquire) & WATCHED != 0
        {
            on_watched();
        }
        got
    }

    /// Activates `q` and marks it busy (first get since the last tick);
    /// its first activation joins it to the host for good.
    #[cold]
    fn mark_busy(&self, q: &QueueTags) {
        // BUSY rides along with the counted ACTIVE flag's RMW, if any.
        if set_counted(q, ACTIVE, BUSY, &self.active_queues) {
            set_counted(q, JOINED, 0, &self.joined_queues);
            self.refresh_limit_cache();
        }
    }

    /// The refusal path of [`Self::get`], after the `first` attempt
    /// failed: waiter bit, contention, (W), re-check.
    #[cold]
    #[inline(never)]
    fn get_slow<C: Clock>(
        &self,
        q: &QueueTags,
        hint: &AtomicU32,
        clock: &C,
        first: FailedAttempt,
    ) -> Result<u32, Refusal> {
        // One reading for the failure time and the re-check.
        let now = LazyNow::new(clock);
        q.set_flags(WAITING);
        // An RMW, so that a putter's concurrent hand-off (`fetch_and`)
        // cannot erase it; ordered before the re-check by fence (W).
        // Release: whoever takes the bit (an Acquire `fetch_and` or swap)
        // also sees what the caller did before this allocation, blk-mq's
        // mark of `SCHED_RESTART` above all: the restart that the bit
        // leads to, on any CPU, then clears the mark after it was set (see
        // "The restart" in the design notes).
        self.waiters.fetch_or(q.waiter_bit(), Ordering::Release);
        // Contention (Borrow) means "a queue was denied its fair share": it
        // found no free tag while it held less than its fair share. A queue
        // refused at its limit (a borrower at the fair share, or a queue at
        // any policy limit), or with no free tag while it held at least its
        // fair share (a borrower at the end of the budget) does not turn
        // contention on: otherwise a busy borrower would keep the fair limit
        // applied to itself for as long as it does I/O. The decision uses
        // the failed attempt's own reading of `in_flight`, not a new one:
        // the queue's own puts may lower it meanwhile, and a borrower
        // refused at its fair share would be read below it and marked
        // starved (the loom model
        // `borrower_refused_at_its_limit_is_not_starved`). The fair share
        // (a division) is only computed for a refusal that may mark.
        if first.refusal == Refusal::Exhausted
            && first.held < fair_share(self.depth(), self.active_queues())
        {
            // DENIED tells the tick that the queue is still denied its share
            // (see `tick`).
            let starved = set_counted(q, STARVED, DENIED, &self.starved);
            if self.note_failure(now.now_ns()) || starved {
                self.refresh_limit_cache();
            }
        }
        // (W) SeqCst: pairs with (P) in `put`: either the re-check below
        // sees the putter's free, or the putter's mask read sees our bit.
        // And with (T) in `take_waiters` (a layout change under `window`):
        // either the re-check reads the new layout, or that swap sees our
        // bit.
        fence(Ordering::SeqCst);
        match self.try_get(q, hint, &now) {
            Ok(tag) => {
                q.clear_flags(WAITING);
                Ok(tag)
            }
            Err(again) => {
                // Relaxed: statistics counter (read by the Lend tick).
                q.failures.fetch_add(1, Ordering::Relaxed);
                Err(again.refusal)
            }
        }
    }

    /// One allocation attempt outside the fast path: the policy's say
    /// (only when the limit cache says the limit may bind: [`Rule::admit`],
    /// which may also place the tag itself), then the bitmap (the hinted
    /// word, then the search). Depth, policy and limits are read afresh (on
    /// the re-check: after (W)).
    ///
    /// [`Rule::admit`]: super::super::policy::Rule::admit
    #[inline(always)]
    fn try_get<C: Clock>(
        &self,
        q: &QueueTags,
        hint: &AtomicU32,
        clock: &C,
    ) -> Result<u32, FailedAttempt> {
        // Relaxed: see `get`.
        let held = q.in_flight.load(Ordering::Relaxed);
        let failed = |refusal| FailedAttempt { refusal, held };
        if held >= self.cached_bound() {
            match self.policy().admit(self, q, hint, self.depth(), clock) {
                Admit::Any => {}
                Admit::Tag(tag) => return Ok(tag),
                Admit::Refuse(refusal) => return Err(failed(refusal)),
            }
        }
        let tag = match self.bitmap.get_fast(hint) {
            Some(tag) => tag,
            None => self.bitmap.search(hint).ok_or(failed(Refusal::Exhausted))?,
        };
        // Relaxed: accounting; tag ownership is carried by the bitmap bit.
        q.in_flight.fetch_add(1, Ordering::Relaxed);
        Ok(tag)
    }
}
