//! `lend`, after Yu Kuai's later tag-borrowing series: the periodic host
//! tick moves tags stepwise from the active queues not refused since the
//! previous tick (the lenders, each keeping what it holds and at least a
//! reserve of [`LEND_RESERVE`] tags) to those refused (the borrowers: one
//! below its fair share climbs back a step, the others share the rest
//! evenly); when nobody fails, the limits drift back towards the fair
//! share. A queue without a limit of its own has the fair share.
//!
//! With `n` active queues and `fair = fair_share(depth, n)`: the
//! *borrowers* are the active queues refused since the last tick or
//! still waiting (a queue waiting at its limit is not re-run, hence not
//! refused again, until it may allocate: see "A put, and the hand-off"
//! in [`super::super::design`]), the *lenders* the other active queues;
//! `step = max(fair / 4, 1)`. When someone was refused, every lender's
//! limit drops by `step` but not below what it holds at the tick, nor
//! below `min(LEND_RESERVE, fair)`; a borrower below the fair share (a lender until now) climbs
//! back by `step`, at most to `fair`; the borrowers at or above the fair
//! share share the rest evenly: each gets `max(ceil((depth - sum(the
//! others' limits)) / their number), fair)`. When nobody was refused,
//! every limit moves back towards `fair` by `step`. When the set of
//! active queues changed, all limits restart at fair.
//!
//! Why every refused queue and not the one refused most: a queue is
//! refused more the more it holds (it completes more, so it asks more),
//! so lending to the queue refused most feeds itself, and of two equally
//! busy queues the first one lent to would keep all but the other's
//! reserve. Queues that all want more split evenly; a busy queue next to
//! nearly idle ones is the only borrower and is lent all but their
//! reserves.
//!
//! Why a lender that is refused climbs back stepwise rather than
//! joining the even split: its demand lies somewhere between its limit
//! and the fair share, and the split would hand it the fair share (or
//! more) at once, which it would not use and lend again, step by step,
//! until refused again: both its limit and the borrowers' would swing
//! over the whole range, tick after tick. And why a lender keeps what
//! it holds: it was not refused, so its demand stayed within its limit;
//! if it holds all of it, a lower limit only gets it refused, and it
//! climbs back a tick later. What it holds is a sample of the moment
//! (nothing is counted per I/O for it): a lender caught between two
//! requests lends one tag too many, and is refused and climbs back.
//!
//! A borrower is marked in its own flags word (`BORROWER`), so that
//! any number of queues, and any indexes, can borrow; after the tick
//! the mark is left on the borrowers that share the rest.

use super::super::clock::Clock;
use super::super::host::HostTags;
use super::super::queue::{QueueTags, BORROWER};
use super::super::sync::{AtomicBool, AtomicU32, Ordering};
use super::fair::{fair_share, fair_share_reached};
use super::{Rule, State, Wake};

#[cfg(all(test, not(loom)))]
mod tests;

/// Tags kept back for every active queue that lends.
pub const LEND_RESERVE: u32 = 4;

/// The `lend` policy.
pub struct Lend;

/// The `lend` policy's state in a host.
pub struct LendState {
    /// Number of active queues seen by the previous tick.
    active: AtomicU32,
    /// The per-queue limits were computed since the switch to `lend`.
    valid: AtomicBool,
    /// The smallest non-zero per-queue limit set by the last tick
    /// (`u32::MAX`: none).
    min: AtomicU32,
}

impl State for LendState {
    fn new() -> LendState {
        LendState {
            active: AtomicU32::new(0),
            valid: AtomicBool::new(false),
            min: AtomicU32::new(u32::MAX),
        }
    }
}

impl LendState {
    /// Whether the per-queue limits are valid.
    fn valid(&self) -> bool {
        // Relaxed: advisory; a stale value only delays the switch. Published
        // to the limit cache by its refresh.
        self.valid.load(Ordering::Relaxed)
    }
}

impl Rule for Lend {
    const NAME: &'static str = "lend";
    type State = LendState;

    /// The fair share, and while the limits are valid at most the
    /// smallest of them.
    fn share(host: &HostTags, state: &LendState) -> u32 {
        let fair = fair_share(host.depth(), host.active_queues());
        if state.valid() {
            // Relaxed: published by the cache refresh.
            fair.min(state.min.load(Ordering::Relaxed))
        } else {
            fair
        }
    }

    fn limit<C: Clock>(host: &HostTags, state: &LendState, q: &QueueTags, _: &C) -> u32 {
        let (depth, lent) = (host.depth(), q.lend_limit());
        if lent == 0 || !state.valid() {
            fair_share(depth, host.active_queues())
        } else {
            lent.min(depth)
        }
    }

    #[inline(always)]
    fn limited<C: Clock>(
        host: &HostTags,
        state: &LendState,
        q: &QueueTags,
        depth: u32,
        _: &C,
    ) -> bool {
        let lent = q.lend_limit();
        if lent == 0 || !state.valid() {
            fair_share_reached(depth, host.active_queues(), q)
        } else {
            // The limit check is approximate by design: see
            // `fair_share_reached`.
            lent < depth && q.in_flight() >= lent
        }
    }

    /// Stale limits are ignored (the fair share is used) until the next
    /// tick computes them.
    fn select(_: &HostTags, state: &LendState) {
        // Relaxed: published by the switch's refresh of the limit cache.
        state.valid.store(false, Ordering::Relaxed);
    }

    fn tick<Q: AsRef<QueueTags>>(host: &HostTags, state: &LendState, queues: &[Q]) -> Wake {
        state.tick(host, queues);
        // The limits moved: hand off the waiters that may now allocate.
        Wake::MayAllocate
    }
}

impl LendState {
    /// The tick: moves tags stepwise from the queues that were not refused
    /// to those that were (see the module docs).
    fn tick<Q: AsRef<QueueTags>>(&self, host: &HostTags, queues: &[Q]) {
        let depth = host.depth();
        let n = u32::try_from(queues.iter().filter(|q| q.as_ref().is_active()).count())
            .unwrap_or(u32::MAX);
        let borrowers = borrowers(host, queues);
        // Relaxed: the tick is serialised by the driver's timer.
        let prev_n = self.active.swap(n, Ordering::Relaxed);
        let lending = n > 1 && prev_n == n && self.valid();
        self.set_limits(host, queues, &Setting::new(depth, n, lending, borrowers));
    }

    /// The second half of the tick: sets every queue's limit (see the
    /// module docs), then the limit cache's inputs.
    fn set_limits<Q: AsRef<QueueTags>>(&self, host: &HostTags, queues: &[Q], lend: &Setting) {
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
        self.min.store(lend_min, Ordering::Relaxed);
        // Relaxed: published by the cache refresh.
        self.valid.store(true, Ordering::Relaxed);
        host.refresh_limit_cache();
    }
}

/// One tick's setting: what [`LendState::set_limits`] decides each
/// queue's next limit from.
struct Setting {
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

/// A queue's next limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LendStep {
    /// This limit (0: none, the fair share applies).
    Limit(u32),
    /// A share of what the others leave (a borrower at or above the fair
    /// share).
    Share,
}

impl Setting {
    /// The setting for `n` active queues of `depth`, `borrowers` of them
    /// refused since the last tick.
    fn new(depth: u32, n: u32, lending: bool, borrowers: u32) -> Setting {
        let fair = fair_share(depth, n);
        Setting {
            depth,
            fair,
            step: (fair / 4).max(1),
            reserve: LEND_RESERVE.min(fair).max(1),
            lending,
            refused: borrowers != 0,
        }
    }

    /// `q`'s next limit (see the module docs).
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
            // Not below what it holds now (see the module docs): a
            // sample; see `fair_share_reached`.
            let held = q.in_flight().min(cur);
            cur.saturating_sub(self.step).max(held).max(self.reserve)
        } else if cur > self.fair {
            cur.saturating_sub(self.step).max(self.fair)
        } else {
            cur.saturating_add(self.step).min(self.fair)
        })
    }
}

/// The first half of the tick: finds the borrowers, the active
/// queues refused since the last tick (their failure count moved)
/// or still waiting, marks them [`BORROWER`] and the others not, and
/// counts them.
fn borrowers<Q: AsRef<QueueTags>>(host: &HostTags, queues: &[Q]) -> u32 {
    // The mask more than the queue's WAITING flag: the flag outlives
    // the wait (a woken queue held back by its bandwidth limit asks for
    // no tag), and one hardware queue's tag clears it while another of
    // the same device still waits at the limit with its bit kept. With
    // more than 64 queues a bit is shared: the flag tells its owners
    // apart.
    let waiters = host.waiter_mask();
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
