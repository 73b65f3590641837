//! The `lend` policy's tick: it moves tags stepwise from the queues that
//! were not refused to those that were (see [`HostTags::lend_tick`]).

use super::super::policy::{fair_share, LEND_RESERVE};
use super::super::queue::{QueueTags, BORROWER};
use super::super::sync::Ordering;
use super::HostTags;

#[cfg(all(test, not(loom)))]
mod tests;

impl HostTags {
    /// Lend policy: move tags stepwise from the queues that were not
    /// refused to those that were.
    ///
    /// With `n` active queues and `fair = fair_share(depth, n)`: the
    /// *borrowers* are the active queues refused since the last tick or
    /// still waiting (a queue waiting at its limit is not re-run, hence not
    /// refused again, until it may allocate: see "A put, and the hand-off"
    /// in the design notes), the *lenders* the other active queues; `step = max(fair / 4, 1)`. When
    /// someone was refused, every lender's limit drops by `step` but not
    /// below what it holds at the tick, nor below `min(LEND_RESERVE,
    /// fair)`; a borrower below the fair share (a lender until now) climbs
    /// back by `step`, at most to `fair`; the borrowers at or above the fair
    /// share share the rest evenly: each gets `max(ceil((depth - sum(the
    /// others' limits)) / their number), fair)`. When nobody was refused,
    /// every limit moves back towards `fair` by `step`. When the set of
    /// active queues changed, all limits restart at fair.
    ///
    /// Why every refused queue and not the one refused most: a queue is
    /// refused more the more it holds (it completes more, so it asks more),
    /// so lending to the queue refused most feeds itself, and of two equally
    /// busy queues the first one lent to would keep all but the other's
    /// reserve. Queues that all want more split evenly; a busy queue next to
    /// nearly idle ones is the only borrower and is lent all but their
    /// reserves.
    ///
    /// Why a lender that is refused climbs back stepwise rather than
    /// joining the even split: its demand lies somewhere between its limit
    /// and the fair share, and the split would hand it the fair share (or
    /// more) at once, which it would not use and lend again, step by step,
    /// until refused again: both its limit and the borrowers' would swing
    /// over the whole range, tick after tick. And why a lender keeps what
    /// it holds: it was not refused, so its demand stayed within its limit;
    /// if it holds all of it, a lower limit only gets it refused, and it
    /// climbs back a tick later. What it holds is a sample of the moment
    /// (nothing is counted per I/O for it): a lender caught between two
    /// requests lends one tag too many, and is refused and climbs back.
    ///
    /// A borrower is marked in its own flags word ([`BORROWER`]), so that
    /// any number of queues, and any indexes, can borrow; after the tick
    /// the mark is left on the borrowers that share the rest.
    pub(super) fn lend_tick<Q: AsRef<QueueTags>>(&self, queues: &[Q]) {
        let depth = self.depth();
        let n = u32::try_from(queues.iter().filter(|q| q.as_ref().is_active()).count())
            .unwrap_or(u32::MAX);
        let borrowers = self.lend_borrowers(queues);
        // Relaxed: the tick is serialised by the driver's timer.
        let prev_n = self.lend_active.swap(n, Ordering::Relaxed);
        // Relaxed: see `set_policy`.
        let valid = self.lend_valid.load(Ordering::Relaxed);
        let lend = Lend::new(depth, n, n > 1 && prev_n == n && valid, borrowers);
        self.set_lend_limits(queues, &lend);
    }

    /// The first half of the Lend tick: finds the borrowers, the active
    /// queues refused since the last Lend tick (their failure count moved)
    /// or still waiting, marks them [`BORROWER`] and the others not, and
    /// counts them.
    fn lend_borrowers<Q: AsRef<QueueTags>>(&self, queues: &[Q]) -> u32 {
        // The mask more than the queue's WAITING flag: the flag outlives
        // the wait (a woken queue held back by its bandwidth limit asks for
        // no tag), and one hardware queue's tag clears it while another of
        // the same device still waits at the limit with its bit kept. With
        // more than 64 queues a bit is shared: the flag tells its owners
        // apart.
        let waiters = self.waiter_mask();
        let exact = queues.len() <= 64;
        let mut borrowers = 0u32;
        for q in queues.iter().map(AsRef::as_ref) {
            let failures = q.failures();
            // Relaxed: only this (serialised, timer) tick uses it.
            let seen = q.failures_seen.swap(failures, Ordering::Relaxed);
            // A queue refused at its limit is not re-run by the puts of
            // others (it could not use their tags), so it is not refused
            // again while it waits: its waiting mark counts.
            let waiting = waiters & q.waiter_bit() != 0 && (exact || q.is_waiting());
            if q.is_active() && (failures > seen || waiting) {
                q.set_flags(BORROWER);
                borrowers = borrowers.saturating_add(1);
            } else {
                q.clear_flags(BORROWER);
            }
        }
        borrowers
    }

    /// The second half of the Lend tick: sets every queue's limit (see
    /// [`Self::lend_tick`]), then the limit cache's inputs.
    fn set_lend_limits<Q: AsRef<QueueTags>>(&self, queues: &[Q], lend: &Lend) {
        // Everyone but the sharing borrowers first: what they leave is
        // shared. A borrower that climbs back loses its BORROWER mark, so
        // that the mark is left on the sharing ones alone, each queue's
        // limit decided once (a lender's depends on what it holds now).
        let (mut others, mut sharing) = (0u32, 0u32);
        for q in queues.iter().map(AsRef::as_ref) {
            match lend.next(q) {
                LendStep::Limit(l) => {
                    q.clear_flags(BORROWER);
                    // Relaxed: advisory limit read by `limit()`.
                    q.lend_limit.store(l, Ordering::Relaxed);
                    others = others.saturating_add(l);
                }
                LendStep::Share => sharing = sharing.saturating_add(1),
            }
        }
        // Each sharing borrower's part: at least the fair share.
        let each = match sharing {
            0 => lend.fair,
            k => lend.depth.saturating_sub(others).div_ceil(k),
        }
        .max(lend.fair)
        .min(lend.depth);
        for q in queues.iter().map(AsRef::as_ref) {
            // Relaxed: a flag of this (serialised) tick's own.
            if q.state.load(Ordering::Relaxed) & BORROWER != 0 {
                // Relaxed: advisory limit read by `limit()`.
                q.lend_limit.store(each, Ordering::Relaxed);
            }
        }
        // The limit cache's bound for queues with a lend limit. Relaxed:
        // published by the cache refresh.
        let lend_min = queues
            .iter()
            .map(|q| q.as_ref().lend_limit())
            .filter(|&l| l != 0)
            .fold(u32::MAX, u32::min);
        self.lend_min.store(lend_min, Ordering::Relaxed);
        // Relaxed: see `set_policy`.
        self.lend_valid.store(true, Ordering::Relaxed);
        self.refresh_limit_cache();
    }
}

/// One Lend tick's setting: what [`HostTags::set_lend_limits`] decides
/// each queue's next limit from.
struct Lend {
    /// The host depth.
    depth: u32,
    /// The fair share of the active queues.
    fair: u32,
    /// How far a limit moves in one tick.
    step: u32,
    /// The least a lender keeps.
    reserve: u32,
    /// The limits carry on from the last tick (more than one queue active,
    /// the same number as then, the limits valid); else they restart.
    lending: bool,
    /// Someone was refused since the last tick.
    refused: bool,
}

/// A queue's next Lend limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LendStep {
    /// This limit (0: none, the fair share applies).
    Limit(u32),
    /// A share of what the others leave (a borrower at or above the fair
    /// share).
    Share,
}

impl Lend {
    /// The setting for `n` active queues of `depth`, `borrowers` of them
    /// refused since the last tick.
    fn new(depth: u32, n: u32, lending: bool, borrowers: u32) -> Lend {
        let fair = fair_share(depth, n);
        Lend {
            depth,
            fair,
            step: (fair / 4).max(1),
            reserve: LEND_RESERVE.min(fair).max(1),
            lending,
            refused: borrowers != 0,
        }
    }

    /// `q`'s next limit (see [`HostTags::lend_tick`]).
    fn next(&self, q: &QueueTags) -> LendStep {
        if !self.lending || !q.is_active() {
            return LendStep::Limit(0);
        }
        let cur = match q.lend_limit() {
            0 => self.fair,
            l => l,
        };
        // Relaxed: a flag of this (serialised) tick's own.
        let borrower = q.state.load(Ordering::Relaxed) & BORROWER != 0;
        LendStep::Limit(if borrower {
            if cur >= self.fair {
                return LendStep::Share;
            }
            // A lender refused: it climbs back.
            cur.saturating_add(self.step).min(self.fair)
        } else if self.refused {
            // Not below what it holds now (see `lend_tick`). Relaxed: a
            // sample; see `fair_share_reached`.
            let held = q.in_flight.load(Ordering::Relaxed).min(cur);
            cur.saturating_sub(self.step).max(held).max(self.reserve)
        } else if cur > self.fair {
            cur.saturating_sub(self.step).max(self.fair)
        } else {
            cur.saturating_add(self.step).min(self.fair)
        })
    }
}
