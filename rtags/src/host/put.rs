//! The free of a tag: [`HostTags::put`]'s inline common part
//! ([`HostTags::put_begin`], up to the fence (P) and the waiter mask's
//! load) and the out-of-line rest: a starved queue's drain, and the
//! hand-off to the waiters that may allocate now (see "A put, and the
//! hand-off" in [`super::super::design`]).

use super::super::clock::{Clock, LazyNow};
use super::super::policy::Rule;
use super::super::queue::{QueueTags, STARVED};
use super::super::sync::{fence, Ordering};
use super::HostTags;

#[cfg(all(test, not(loom)))]
mod tests;

/// What [`HostTags::put_begin`] left of a put for
/// [`HostTags::put_finish`]. One byte ([`PutRest::from_raw`] takes it
/// back), so that a caller can keep it with the request until it finishes
/// the put.
#[must_use]
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PutRest {
    /// Nothing: the put is complete.
    Done = 0,
    /// The queue drained to zero while starved: it is no longer starved;
    /// then (P) and the waiters.
    Drained = 1,
    /// A tag put through the wrong queue (`in_flight` wrapped below zero):
    /// undo the wrap; then (P) and the waiters.
    Wrapped = 2,
    /// Past (P), a queue waits: the hand-off.
    Waiters = 3,
}

impl PutRest {
    /// The rest whose `as u8` is `raw` ([`PutRest::Done`] for any other
    /// value).
    pub fn from_raw(raw: u8) -> PutRest {
        match raw {
            1 => PutRest::Drained,
            2 => PutRest::Wrapped,
            3 => PutRest::Waiters,
            _ => {
                debug_assert!(raw == 0, "not a PutRest: {raw}");
                PutRest::Done
            }
        }
    }
}

impl HostTags {
    /// Frees `tag` held by queue `q` and returns the waiter mask to wake.
    ///
    /// The returned mask (bit `index % 64` per queue) has been atomically
    /// taken from the waiter mask: the caller must re-run every queue whose
    /// bit is set (a bit may stand for several queues whose indexes collide
    /// modulo 64: re-run them all). Only the bits of the waiters that may
    /// allocate now are taken (see "A put, and the hand-off" in the design notes); the
    /// others keep theirs until a later put (or [`Self::tick`], or
    /// [`Self::take_waiters`]) finds that they may. `queues` are the queues
    /// of this host, as [`Self::tick`] takes them (a waiter's bit that no
    /// queue in `queues` has is handed out unexamined; only a put that
    /// finds waiters looks at them). `clock` is read at most once, and
    /// only to hand off waiters under `borrow` inside an expiry window (see
    /// "Time" in the design notes). The mask is taken with an acquire: a
    /// caller that passes it to another thread with a release-acquire pair
    /// re-runs the queues there after what their refused callers did before
    /// the refusal (see "The restart" in the design notes). A bogus or
    /// double free of a tag that is not held is ignored and returns 0.
    #[inline]
    pub fn put<Q: AsRef<QueueTags>, C: Clock>(
        &self,
        q: &QueueTags,
        tag: u32,
        queues: &[Q],
        clock: C,
    ) -> u64 {
        self.put_with(q, tag, || queues, clock)
    }

    /// [`Self::put`] with the queues given by `queues`, called only when
    /// the put finds waiters: a caller that has to compute the list (a
    /// load and a bounds check) keeps that off the common put.
    #[inline(always)]
    pub fn put_with<'q, Q: AsRef<QueueTags> + 'q, C: Clock>(
        &self,
        q: &QueueTags,
        tag: u32,
        queues: impl FnOnce() -> &'q [Q],
        clock: C,
    ) -> u64 {
        match self.put_begin(q, tag) {
            PutRest::Done => 0,
            rest => self.put_finish(q, rest, queues, clock),
        }
    }

    /// The common part of [`Self::put`]: frees `tag` and, unless the
    /// queue drained while starved or a queue waits, is all the put does.
    /// Anything else is left to [`Self::put_finish`], which the caller
    /// must call with the result unless it is [`PutRest::Done`]. Split so
    /// that a caller can keep the rest out of line: its common path then
    /// calls nothing, needs no stack frame, and can end with a tail call.
    #[inline(always)]
    pub fn put_begin(&self, q: &QueueTags, tag: u32) -> PutRest {
        if !self.bitmap.put(tag) {
            return PutRest::Done;
        }
        // Relaxed: accounting; ordered before the mask read by (P).
        let prev = q.in_flight.fetch_sub(1, Ordering::Relaxed);
        // Drained to zero while starved, or a tag put through the wrong
        // queue (never done by a correct caller): the rest does the
        // bookkeeping before (P). One load of the flags when the queue
        // drained unstarved (e.g. every put at queue depth 1). Relaxed: as
        // in `clear_counted`, whose own load this repeats. A `match`, not
        // `prev <= 1` then `prev == 0`: with the match LLVM tests `1`
        // first, which shortens the put that drains its queue (with
        // completions inside `queue_rq`, every put drains).
        match prev {
            0 => return PutRest::Wrapped,
            1 if q.state.load(Ordering::Relaxed) & STARVED != 0 => return PutRest::Drained,
            _ => {}
        }
        // (P) SeqCst: pairs with (W) in `get`: our bit clear and in_flight
        // decrement are seen by any re-check after (W), or our mask read
        // below sees the waiter's bit (set before (W)).
        fence(Ordering::SeqCst);
        // Relaxed: ordered after (P); avoids dirtying the line when idle.
        if self.waiters.load(Ordering::Relaxed) == 0 {
            return PutRest::Done;
        }
        PutRest::Waiters
    }

    /// The rest of a put that [`Self::put_begin`] left (`rest`): the
    /// drain's bookkeeping and (P) if it had not passed it, then the
    /// hand-off. Returns the waiter mask to wake, as [`Self::put`].
    #[cold]
    #[inline(never)]
    pub fn put_finish<'q, Q: AsRef<QueueTags> + 'q, C: Clock>(
        &self,
        q: &QueueTags,
        rest: PutRest,
        queues: impl FnOnce() -> &'q [Q],
        clock: C,
    ) -> u64 {
        match rest {
            PutRest::Done => return 0,
            PutRest::Waiters => {}
            PutRest::Drained | PutRest::Wrapped => {
                if rest == PutRest::Wrapped {
                    self.undo_wrap(q);
                } else {
                    self.clear_starved(q);
                }
                // (P), as in `put_begin`.
                fence(Ordering::SeqCst);
                // Relaxed: as in `put_begin`.
                if self.waiters.load(Ordering::Relaxed) == 0 {
                    return 0;
                }
            }
        }
        self.hand_off(queues(), clock)
    }

    /// [`Self::put`] found waiters: takes the bits of those that may
    /// allocate now (after (P)), see "A put, and the hand-off" in the
    /// design notes. Out of line and without the freed tag, so that `put`
    /// costs the same under every policy until it finds waiters. The clock comes by value (the
    /// driver's is a function item, of no size): a reference would give
    /// the inlined `put` a stack slot whose address escapes, and a function
    /// with one makes no tail calls (the driver's completion ends the
    /// request with one after the put).
    #[cold]
    #[inline(never)]
    pub(super) fn hand_off<Q: AsRef<QueueTags>, C: Clock>(&self, queues: &[Q], clock: C) -> u64 {
        let clock = &clock;
        // Relaxed: ordered after (P), as the load in `put`.
        let waiters = self.waiters.load(Ordering::Relaxed);
        let depth = self.depth();
        let bits = self.policy().hand_off(self, waiters, queues, depth, clock);
        if bits == 0 {
            return 0;
        }
        // The RMW alone returns each bit once (a bit set after our load
        // belongs to a waiter whose re-check follows (P): see "Why no
        // wake-up is lost"). Acquire: pairs with the refusal's Release
        // `fetch_or`, so that the caller's re-run of a queue we return
        // (on whatever thread it hands it to, by a release-acquire pair)
        // comes after everything the refused caller did before its
        // allocation, blk-mq's mark of `SCHED_RESTART` (see "The restart"
        // in the design notes).
        self.waiters.fetch_and(!bits, Ordering::Acquire) & bits
    }

    /// The bits of `waiters` whose queues may allocate now under `P`, the
    /// hand-off of the policies that limit a count ([`Rule::hand_off`]'s
    /// default): none if every tag is held (the freed one was taken again,
    /// and its taker's put hands off later), else those with a queue below
    /// its limit ([`Rule::limited`], each limit read afresh after (P)), and
    /// the bits that no queue of `queues` has (they cannot be examined).
    /// The clock is read only by a limit that depends on the time, once
    /// for all the waiters.
    pub(crate) fn waiters_below_limit<P: Rule, Q: AsRef<QueueTags>, C: Clock>(
        &self,
        state: &P::State,
        waiters: u64,
        queues: &[Q],
        depth: u32,
        clock: &C,
    ) -> u64 {
        if !self.bitmap.has_free_in_range(0, depth) {
            return 0;
        }
        let now = LazyNow::new(clock);
        let mut wake = 0u64;
        let mut seen = 0u64;
        for q in queues.iter().map(AsRef::as_ref) {
            let bit = q.waiter_bit();
            if waiters & bit == 0 || wake & bit != 0 {
                continue;
            }
            seen |= bit;
            if !P::limited(self, state, q, depth, &now) {
                wake |= bit;
                if wake == waiters {
                    break;
                }
            }
        }
        wake | (waiters & !seen)
    }

    /// A tag was put through the wrong queue: undo `in_flight`'s wrap.
    #[cold]
    #[inline(never)]
    fn undo_wrap(&self, q: &QueueTags) {
        // Relaxed: accounting.
        q.in_flight.fetch_add(1, Ordering::Relaxed);
    }
}
