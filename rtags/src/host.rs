//! The host-wide tag budget shared by all request queues of all disks.
//!
//! # Design
//!
//! [`HostTags`] combines a [`TagBitmap`] (the budget), a sharing
//! [`Policy`] (per-queue limits) and a *waiter mask*: an `AtomicU64` in which
//! a refused queue sets bit `index % 64`. Everything is lock-free; the only
//! lock in the picture is the driver's own per-hardware-queue lock.
//!
//! `get` (fast path, inlined): the queue is active, busy since the last
//! tick, neither waiting nor watched (one load and compare of its flags word); it holds
//! fewer tags than the *limit cache*'s bound (see "The limit cache": a
//! per-host lower bound of every policy limit that binds, `u32::MAX` when
//! none does), so its policy limit cannot be reached; a free tag in the
//! hinted bitmap word (`TagBitmap::get_fast`); bump the queue's
//! `in_flight`. Anything else goes to one out-of-line function, which
//! activates the queue on its first use (so that it counts in
//! `active_queues`) and marks it busy for idle detection, checks the
//! policy limit exactly when the bound says it may bind, searches the
//! whole bitmap when the hinted word has nothing (or lost a race), clears
//! the waiting mark after a success, and takes the slow path on a refusal.
//!
//! `get` (slow path, after a refusal):
//!
//! 1. mark the queue waiting and `fetch_or` its bit into the waiter mask,
//! 2. mark contention if the first attempt found no free tag while the
//!    queue held less than its fair share (the queue becomes *starved*,
//!    the failure time is recorded; both are used by [`Policy::Borrow`];
//!    a refusal at the queue's own limit never marks it),
//! 3. `fence(SeqCst)`  — call it **(W)**,
//! 4. re-check once: limit (bound, and exact check if needed) and bitmap
//!    again, with depth and policy read afresh. If that
//!    succeeds the tag is returned; the waiter bit may stay set, which at
//!    worst costs one spurious queue re-run. Otherwise a refusal is
//!    returned (and counted in the queue's `failures`).
//!
//! `put`: clear the tag's bit (`Release`), decrement `in_flight` (clearing
//! the starved mark when it reaches zero), `fence(SeqCst)` — **(P)** — then
//! read the waiter mask and, if it is non-zero, take (`fetch_and`) the bits
//! of the waiters that may allocate now and return them: the caller re-runs
//! exactly those queues (see "Hand-off"; under [`Policy::Window`] see
//! [`super::window`], which also holds that policy's layout, laid out by
//! [`HostTags::tick`]).
//!
//! # Hand-off
//!
//! A put that finds waiters hands out only those that may allocate after
//! its free: under every policy but [`Policy::Window`], none if every tag
//! is held again (a racing `get` took the freed one: its put hands off
//! later), else every waiter whose queue is below its policy limit, each
//! limit read afresh after (P) (the caller passes the host's queues; a bit
//! that none of them has is handed out unexamined). A waiter at its limit
//! keeps its bit: it could not use the tag, and a re-run would only refuse
//! it again. Its own puts (a completion lowers its `in_flight`) and the
//! puts of others read it again; so does every [`HostTags::tick`], since
//! a limit also rises without a put (a tick deactivated a queue or moved
//! the Lend limits, Borrow's contention ended) and the next put may be
//! the waiter's own, a slow device's completion later. Nothing is lost
//! without the tick (a waiter at its limit holds tags, so its own puts
//! come), but its wait would not be bounded by the tick period.
//! Configuration changes take every waiter ([`HostTags::take_waiters`]).
//!
//! Before, every put took the whole mask, and under `fair`, `borrow` and
//! `lend` about two wake-ups in three re-ran a queue at its limit (rnull's
//! three-latencies benchmark: 70k of 110k in 2 s under `fair`): each cost
//! a queue run, and the driver's measurement of the hand-off (the time
//! from a wake-up to the woken queue's tag) started at a wake-up for a tag
//! the queue could not use. Now a wake-up means that a tag the queue may
//! use is free.
//!
//! # Time: read only when a decision needs it
//!
//! [`HostTags::get`], [`HostTags::limit`] and [`HostTags::is_contended`]
//! take a [`Clock`] (the driver passes its clock function, tests a fixed
//! `u64`), read lazily, only:
//!
//! * when a refusal marks the queue starved (`note_failure` records the
//!   failure time for Borrow's expiry window), and
//! * in Borrow's contention check when more than one queue is active, no
//!   queue is starved, `borrow_expiry_ns != 0` and a stamp is recorded
//!   (a refusal's, or the one the tick gave a drain; a drain awaiting its
//!   tick counts as contended without the clock). The first check that
//!   finds the stamp's window over forgets it, so later checks need no
//!   clock again until the next refusal or drain (see "Borrow's
//!   contention").
//!
//! A `get` reads the clock at most twice: at most once in its first
//! attempt, and at most once in the slow path (one reading shared by the
//! failure time and the re-check). The first attempt uses the caller's
//! clock directly: a lazy cache there would cost every call for the sake
//! of refusals inside a Borrow expiry window. [`HostTags::put`] reads the
//! clock at most once, only when it hands off waiters under `borrow`
//! inside an expiry window (the contention check of a waiter's limit), and
//! a `get` whose limit does not bind never reads the clock under `none`,
//! `fair` and `lend`, nor under `borrow` outside an expiry window; this is
//! tested with a clock that counts its readings.
//! [`HostTags::tick`] takes the time as a plain `u64`: the timer that
//! calls it reads the clock anyway.
//!
//! # Borrow's contention
//!
//! Under [`Policy::Borrow`] every queue may take the whole depth until a
//! queue is *starved*: refused for want of a free tag while it held less
//! than its fair share (a refusal at its own limit never marks it). Then
//! the fair share applies to everyone while the host is *contended*: while
//! a queue is starved, and for `borrow_expiry_ns` after the last refusal
//! of a starved queue or after a starved queue drained, whichever is
//! later. A queue stops being starved when it drains to zero, when it
//! goes idle, or when a tick finds that it holds at least its fair share
//! and was not refused below it since the previous tick (a *drain* too,
//! below): it has its share, and a mark kept until a busy queue drains to
//! zero would hold every other queue at the fair share for as long as it
//! does I/O.
//!
//! Why the fair share outlives the drain: a queue at queue depth 1
//! drains after every request. If the fair share ended at the drain, a
//! borrower would take every free tag before that queue's next request,
//! which would then wait for one of the borrower's completions, every
//! time. The window must therefore be longer than such a queue's time
//! between two requests, and than a borrower's way down from the depth to
//! its share; and it must be short against the gaps of a nearly idle
//! queue, each of whose requests holds the busy queues at their share for
//! the request's time plus the window. [`DEFAULT_BORROW_EXPIRY_NS`] is
//! chosen between the two; an expiry of 0 ends the fair share when the
//! starved queues drain. A queue at queue depth 1 that is never refused
//! again still loses the fair share one window after its first drain, and
//! is then refused once, which opens the next window.
//!
//! The drain reads no clock (a `put` reads one only to hand off a
//! waiter): it stores the marker `DRAINED` (later than any stamp, so that a refusal's `fetch_max` leaves it in place) before
//! it decrements the starved count (see "Counters"), and the next
//! [`HostTags::tick`] replaces it with its time. The window thus starts
//! at most one tick period after the drain: the fair share lasts from the
//! drain for between `borrow_expiry_ns` and that plus a tick period. Only
//! the tick replaces the marker, and ticks are serialised: a contention
//! check that read the clock, then was delayed, could otherwise stamp the
//! marker of a later drain with its old reading and end that drain's
//! window at once (the marker's value does not tell one drain from the
//! next). A check that finds the marker counts the host as contended,
//! without the clock. A change of the policy or of the expiry forgets what
//! was recorded: it was recorded under the old setting.
//!
//! # Cost of the fast path
//!
//! A `get` that is not refused, of a queue already active and busy since
//! the last tick (the steady state), holding fewer tags than the limit
//! cache's bound, with a free tag in its hinted word, plus its `put` — the
//! same code under every policy (`window` never takes it: its bound is 0;
//! see [`super::window`] for its cost):
//!
//! | | atomic RMWs | fences | loads | stores | clock reads | x86-64 instructions |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | `get` | 2: bitmap `fetch_and` (`lock btr`, the free bit), `in_flight` `fetch_add` | 0 | 5: queue flags, `in_flight`, limit cache, hint, bitmap word and its valid mask (one line) | 0 | 0 | 24 |
//! | `put` (`put_begin`) | 2: bitmap `fetch_or` (`lock bts`), `in_flight` `fetch_sub` | 1: (P) | 1: waiter mask (+1: queue flags, when `in_flight` drops to 0) | 0 | 0 | 17 (18 when `in_flight` drops to 0) |
//!
//! The instruction counts are those of this code as inlined into rnull's
//! `queue_rq` and request end (x86-64 kernel build, overflow checks on),
//! read off `llvm-objdump` at rnull commit 6bf6421: from the queue's flags
//! to the `in_flight` increment, and from the tag's decode to the waiter
//! mask's test; the driver's glue around them (its budget check, the
//! tag's store in the request and its range check, the path to the
//! device's record, the end's own entry and tail call) adds 7 and 14. `put_begin` leaves the rare work (a
//! starved queue drained, waiters) to `put_finish`, out of line, so that
//! its caller's common path calls nothing.
//!
//! No policy is evaluated and neither the depth nor the policy is read:
//! the limit cache's bound stands for all of them (the lines it reads are
//! only written by configuration changes, activations, refusals and
//! ticks). The bitmap word's valid mask is precomputed by `set_depth`, and
//! the hint is only written when the search moves it to another word. In
//! the steady state the lines read are the queue's own (which the
//! `in_flight` updates write anyway), host lines that are only read, the
//! hint and the hinted word's line. No statistics are counted per I/O:
//! `failures` is only incremented on a refusal, and the tags in use are
//! counted from the bitmap ([`TagBitmap::in_use`]) when asked for.
//! Everything on the fast path is inlined into the caller; the rest of
//! `get` (activation, exact limit check, bitmap search, refusal), the
//! cache refresh and `put`'s rare cases are out-of-line `#[cold]`
//! functions.
//!
//! Cost outside the fast path: a queue whose limit may bind (its
//! `in_flight` is at least the bound) checks its limit exactly, as before
//! the cache (no division; `borrow` reads the clock inside an expiry
//! window), in the out-of-line function. Under `lend`, the bound is the
//! smallest lend limit, so while tags are lent the borrowers take that
//! path above the lenders' limits; when nobody is refused the limits
//! return to the fair share and so does the bound.
//!
//! # Idle detection
//!
//! A queue that has been idle for [`HostTags::idle_ns`] is deactivated by
//! the periodic [`HostTags::tick`] (so that it no longer counts in the fair
//! share), without any timestamp per I/O: every `get` sets the queue's
//! *busy* flag (a load, and an RMW only if the flag was clear: once per
//! tick period), and each tick turns the flag into time: a queue found busy
//! (the flag set, or tags held) gets `last_active_ns = now` and its flag
//! cleared, except that a queue holding tags keeps (or gets) the flag, so
//! that the tick after the put of those tags (which does not touch the
//! flag) still finds it busy. A queue that did I/O since the last tick is
//! therefore never deactivated by that tick; one found neither busy, nor
//! holding tags, nor waiting for `idle_ns` after the last tick that found it
//! busy is. `last_active_ns` is thus the time of the first tick after the
//! queue's last get or put: idle detection is precise to one tick period,
//! and never early (a queue is idle for at least `idle_ns` when it is
//! deactivated, and for at most `idle_ns` plus one period).
//!
//! # The limit cache
//!
//! `limit_cache` packs a *bound* (low half) and a refresh *epoch* (high
//! half) in one `AtomicU64`. The bound is the smallest limit below the
//! depth that any queue may have under the current state, or `u32::MAX`
//! if no limit binds ([`HostTags::limit_bound`]):
//!
//! * `none`: `u32::MAX`;
//! * `fair`: the fair share if it is below the depth (more than one queue
//!   active and a depth above [`MIN_FAIR_SHARE`]), else `u32::MAX`;
//! * `borrow`: `fair`'s while the host *may* be contended (a queue is
//!   starved, or a refusal is recorded with a non-zero expiry: the clock
//!   is not read here, the exact check decides), else `u32::MAX`;
//! * `lend`: `fair`'s, and while the lend limits are valid, at most the
//!   smallest non-zero lend limit (recorded by the lend tick);
//! * `window`: 0. Not a count but the place of a tag limits a queue (its
//!   window and its slice of the shared part, or the whole shared part
//!   without a window), so no allocation may take the fast path's hinted
//!   word: every `get` takes the out-of-line path.
//!
//! So a queue holding fewer tags than the bound is not at its limit, and
//! the fast path only compares `in_flight` with it; a queue holding at
//! least the bound takes the exact check ([`HostTags::limit`]'s formulas,
//! without division).
//! A bound that is too low only costs the exact check; one that is too
//! high would let a queue exceed its limit.
//!
//! Every change of an input of the bound is followed, by the thread that
//! made it, by a *refresh*: `set_policy`, `set_depth`,
//! `set_borrow_expiry_ns`; a queue's activation (`get`) and deactivation
//! (`tick`); a queue becoming starved (refusal) or not (drain to zero,
//! `tick`); the first refusal time recorded and its forgetting (Borrow's
//! window found over); the lend tick. A refresh loads the cache
//! (`Acquire`), computes the bound from the current inputs and
//! `compare_exchange`s (`AcqRel`) the word it loaded for the new bound with
//! the next epoch, recomputing from the value found until the CAS succeeds.
//! Racing refreshes cannot leave a stale bound behind: all writes of the
//! cache are these RMWs, so consider the last one in its modification
//! order. It replaced the value its refresh had read, just before, with
//! `Acquire`; that value was written by the previous CAS, which is in the
//! release sequence of every earlier CAS: every refresh that completed
//! before happens-before the last one's computation, and so do the input
//! changes that preceded them. A refresh that has not completed yet will
//! CAS again. (The epoch makes every CAS unique: without it, a refresh
//! that computed from old inputs could succeed after the value it read
//! was replaced and then written again.) Once every input change has been
//! followed by its refresh, the bound is therefore the one of the current
//! inputs; in between, a `get` may use the old bound: the same looseness
//! as reading the inputs themselves with `Relaxed` loads, which the limit
//! check always did (as `hctx_may_queue` does). This is model-checked
//! with loom (a policy switch racing with an activation).
//!
//! Counters that over-count transiently (see "Counters": a setter's undone
//! increment) can only make the bound lower for a moment, and the undo is
//! followed by a refresh too.
//!
//! # Why no wake-up is lost
//!
//! This is the classic store-buffering pattern, closed with two `SeqCst`
//! fences (like `sbitmap_queue_clear()` / `sbitmap_prepare_to_wait()` with
//! their `smp_mb()` pairs). The waiter *writes* its bit then *reads* the
//! tag state; the putter *writes* the tag state then *reads* the mask. The
//! fences (W) and (P) are totally ordered:
//!
//! * if (P) comes first, the waiter's re-check (after (W)) observes the
//!   putter's bit clear / `in_flight` decrement (C++ `[atomics.fences]`:
//!   a write before one SC fence is visible to reads after a later SC
//!   fence), so the re-check can take the freed tag — unless another CPU
//!   took it first, in which case that CPU's own later put is, by the
//!   same rule, ordered after (W) and falls into the next case;
//! * if (W) comes first, the putter's mask read (after (P)) sees the
//!   waiter's bit (or a later value: another putter's `fetch_and`, in
//!   which case *that* putter returned the bit).
//!
//! More precisely: when the re-check fails with `Exhausted`, every word it
//! scanned was full, and each of those bits is cleared later (in the
//! word's modification order) by some `put`; such a put's fence cannot
//! precede (W) (else the re-check would have seen the clear), so its mask
//! read sees the bit, and after (P) it reads its own free and the waiter's
//! `in_flight` and limit. When it fails with `Limited`, the queue itself
//! holds `in_flight >= limit >= 1` tags and the decrement of one of them is
//! such a later put, which reads the decrement (its own).
//!
//! Seeing the bit, the put takes it if the waiter may allocate (see
//! "Hand-off"). If it does not, either every tag is held again (a `get`
//! took the freed one after the re-check read its word: that tag's put
//! follows (W) in turn, and the argument repeats), or the waiter is at its
//! limit as the put reads it: it holds tags, each freed by a put of its own
//! that follows (W) (the decrement comes after the re-check's reading of
//! `in_flight`) and reads its `in_flight` one lower; by its last tag at the
//! latest, `0 < limit`. Hence: **a refused queue's bit is returned by a
//! later put that finds it below its limit with a tag free (at the latest,
//! one of its own puts or the put of a tag it may use), or its re-check
//! succeeds.** A limit that rises meanwhile (a tick, Borrow's contention
//! ending) only lets an earlier put take the bit. The argument holds
//! whatever depth, policy and time the re-check and the put use (it only
//! relies on what they read after their fences), so the lazy clock does
//! not affect it; neither does idle detection, since `put` writes nothing
//! but the bitmap word, `in_flight` (and the starved mark, its count and
//! the drain marker) before (P). The
//! loom models `no_lost_wakeup_limited`,
//! `limited_waiter_skipped_by_others_is_not_lost` and
//! `put_keeps_a_waiter_at_its_limit` check both sides.
//!
//! Handing out bits with an RMW means each waiting queue is re-run once
//! per *waiting episode* (a refusal sets the bit again), never once per
//! freed tag, so completions do not cause re-run storms. The cheap `load`
//! before the RMW keeps the mask's cache line clean when nobody waits.
//! `fetch_or` (an RMW, not load-then-store) is used by waiters so that a
//! concurrent hand-off cannot erase a freshly set bit.
//!
//! Under [`Policy::Window`] a put hands out only the bits of the waiters
//! that may allocate, and the layout that decides it can move: the
//! argument is extended in [`super::window`] ("Why no wake-up is lost"),
//! with a third fence, (T), after every layout change
//! ([`HostTags::take_waiters`], which the tick calls after it moved the
//! windows).
//!
//! Plain `SeqCst` loads/stores would also be sound in the C++ model, but
//! `loom` (used to check this protocol) does not model `SeqCst` accesses,
//! only `SeqCst` fences, so the fences are explicit.
//!
//! # Counters
//!
//! `active_queues` and the starved count are paired with a per-queue flag
//! (a bit of the queue's flags word, which is only ever modified by RMWs).
//! Setting: increment the counter *first*, then `fetch_or` the flag (undo
//! the increment if the flag was already set). Clearing: `fetch_and` the
//! flag off, then decrement if it was set. The flag RMWs are `AcqRel`; as
//! every modification of the word is an RMW, the clearer's `Acquire` reads
//! from the release sequence of the `Release` RMW that set the flag, so a
//! decrement always happens-after its matching increment: the counters
//! never underflow, never drift, and may only transiently over-count by
//! the number of setters in flight.
//!
//! A decrement is `Release`, and Borrow's contention check loads the
//! starved count with `Acquire`: a drain stores its marker (see "Borrow's
//! contention") *before* it clears the starved mark, so a check that reads
//! the count without that queue also reads the marker (or a later stamp),
//! and the host is never found uncontended between the two. (In the other
//! order, a check in between forgot the last refusal, lifted the limit
//! cache and let a borrower take a tag above its fair share right at the
//! drain: the loom model `borrow_drain_window_vs_limit_check`.)
//!
//! Setters and clearers first load the word and skip the RMW when there is
//! nothing to do, which keeps the fast paths (already active; drained
//! without having been starved) load-only. A clearer's `Relaxed` load may
//! miss a mark set concurrently by another CPU; the mark then stays set
//! (and counted) until the next clear: the next drain to zero, the tick
//! that finds the queue holding its share, or idle deactivation. The
//! counters stay exact because only an RMW that actually clears the flag
//! decrements.
//!
//! Deactivation (in [`HostTags::tick`]) of a queue racing with a `get` of
//! the same queue may leave that queue inactive while it holds a tag; it is
//! re-activated by its next `get`. This only makes the fair share slightly
//! generous for a moment, as in blk-mq.

pub use super::bitmap::Error;
use super::bitmap::TagBitmap;
pub use super::clock::Clock;
use super::clock::LazyNow;
use super::policy::{fair_share, Policy, LEND_RESERVE, MIN_FAIR_SHARE};
use super::queue::{
    QueueTags, ACTIVE, BORROWER, BUSY, DENIED, FAST_PATH_FLAGS, STARVED, WAITING, WATCHED,
};
use super::sync::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use super::window::{HandOff, Layout, Windows};
use core::ops::Range;

/// Default idle window after which an idle queue is deactivated (100 ms).
pub const DEFAULT_IDLE_NS: u64 = 100_000_000;

/// Default borrow expiry: the fair share lasts 5 ms after a starved queue
/// was last refused, and after its drain from the tick that follows (see
/// "Borrow's contention" in the module docs for why this long; 0 = it ends
/// when the starved queues drain).
pub const DEFAULT_BORROW_EXPIRY_NS: u64 = 5_000_000;

/// `last_failure` after a starved queue drained, until the next tick
/// stamps it with its time (see "Borrow's contention"): later than any
/// stamp, so that a refusal's `fetch_max` leaves it in place.
const DRAINED: u64 = u64::MAX;

/// The `last_failure` stamp of the time `now_ns`: `now_ns + 1` (0 means
/// none), below [`DRAINED`] even at the end of time.
fn stamp(now_ns: u64) -> u64 {
    now_ns.saturating_add(1).min(DRAINED - 1)
}

/// Borrow's contention at some time, as read (see [`HostTags::contention`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contention {
    /// Contended: a queue is starved, or a drain awaits its stamp, or a
    /// recorded stamp's window is open.
    Yes,
    /// Not contended, nothing recorded.
    No,
    /// Not contended: the window of this recorded stamp is over.
    Over(u64),
}

/// Why [`HostTags::get`] did not return a tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The policy limit of this queue is reached.
    Limited,
    /// No free tag in the host budget.
    Exhausted,
}

impl Refusal {
    /// Short description, e.g. for debug output.
    pub fn as_str(&self) -> &'static str {
        match self {
            Refusal::Limited => "limited",
            Refusal::Exhausted => "exhausted",
        }
    }
}

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

/// An allocation attempt that failed: the [`Refusal`], and the queue's
/// `in_flight` as the attempt read it (see `HostTags::get_slow`).
#[derive(Clone, Copy, Debug)]
struct FailedAttempt {
    /// Why the attempt failed.
    refusal: Refusal,
    /// Tags the queue held, read before the attempt's policy check.
    held: u32,
}

/// Sets the counted flag `flag` of `q`, together with the uncounted flags
/// `also`: counter first, then flag (see "Counters" in the module docs).
/// Returns whether the counter was modified (the caller then refreshes the
/// limit cache, even after an undo: a refresh may have seen the transient
/// value).
fn set_counted(q: &QueueTags, flag: u32, also: u32, count: &AtomicU32) -> bool {
    // Relaxed: fast path (already set, e.g. already active: no RMW on the
    // counter's line); the fetch_or below decides.
    if q.state.load(Ordering::Relaxed) & flag != 0 {
        q.set_flags(also);
        return false;
    }
    // Relaxed: ordered before the flag by the Release half of the fetch_or.
    count.fetch_add(1, Ordering::Relaxed);
    // AcqRel: Release publishes our increment to the clearer (its Acquire
    // fetch_and reads this value, directly or via the release sequence of
    // RMWs that follows it), so its decrement is ordered after our
    // increment.
    if q.state.fetch_or(flag | also, Ordering::AcqRel) & flag != 0 {
        // Already set: undo our own speculative increment.
        count.fetch_sub(1, Ordering::Relaxed);
    }
    true
}

/// Clears the counted flag `flag` of `q`: flag first, then counter (see
/// "Counters" in the module docs). Returns whether the counter was
/// decremented (the caller then refreshes the limit cache).
fn clear_counted(q: &QueueTags, flag: u32, count: &AtomicU32) -> bool {
    // Relaxed: fast path (nothing to clear); may miss a concurrent set,
    // which then stays counted until the next clear (module docs).
    if q.state.load(Ordering::Relaxed) & flag == 0 {
        return false;
    }
    // AcqRel: Acquire pairs with the Release fetch_or in `set_counted`, so
    // the matching increment happens-before the decrement below.
    if q.state.fetch_and(!flag, Ordering::AcqRel) & flag != 0 {
        // Release: pairs with the Acquire load of the starved count in
        // `contention`: a check that reads the count without this queue
        // (this value, or a later one of the count's RMWs, which continue
        // its release sequence) also sees what the clearer wrote before,
        // Borrow's drain marker (`clear_starved`, `tick`). The active count
        // needs no such pairing (its readers only divide by it). The order
        // against the matching increment comes from the flag's RMWs.
        count.fetch_sub(1, Ordering::Release);
        return true;
    }
    false
}

/// The fair share of `depth` among `active` queues when it binds (is below
/// the depth), `u32::MAX` when it does not: the limit cache's bound for
/// queues under the fair share. `in_flight < fair_bound(d, a)` implies
/// `!fair_share_reached(d, a, q)`, and conversely.
fn fair_bound(depth: u32, active: u32) -> u32 {
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
fn fair_share_reached(depth: u32, active: u32, q: &QueueTags) -> bool {
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
/// the low half (see "The limit cache" in the module docs).
fn pack(epoch: u32, bound: u32) -> u64 {
    (u64::from(epoch) << 32) | u64::from(bound)
}

/// The bound of a limit cache word (its low half).
#[inline(always)]
fn bound_of(cache: u64) -> u32 {
    // Truncation intended: the low half.
    cache as u32
}

/// The epoch of a limit cache word (its high half).
fn epoch_of(cache: u64) -> u32 {
    // No truncation: the high half of a u64 fits.
    (cache >> 32) as u32
}

/// The tag budget of one host, shared by all queues of all its disks.
pub struct HostTags {
    bitmap: TagBitmap,
    policy: AtomicU32,
    active_queues: AtomicU32,
    waiters: AtomicU64,
    starved: AtomicU32,
    /// Where Borrow's expiry window starts, plus one ([`stamp`]): the time
    /// of the last refusal that marked a queue starved, or of the first
    /// tick after a starved queue drained; [`DRAINED`] from such a drain
    /// until that tick; 0 when nothing is recorded (or the window was found
    /// over, or the policy or the expiry changed since).
    last_failure: AtomicU64,
    borrow_expiry_ns: AtomicU64,
    idle_ns: AtomicU64,
    /// Number of active queues seen by the previous `Lend` tick.
    lend_active: AtomicU32,
    /// The per-queue `Lend` limits were computed under the current policy.
    lend_valid: AtomicBool,
    /// The smallest non-zero per-queue `Lend` limit set by the last `Lend`
    /// tick (`u32::MAX`: none).
    lend_min: AtomicU32,
    /// The limit cache, `pack(epoch, bound)`: no queue holding fewer than
    /// `bound` tags is at its policy limit; `epoch` counts the refreshes
    /// (see "The limit cache").
    limit_cache: AtomicU64,
    /// The `Window` policy's shared percentage and layout.
    windows: Windows,
}

impl HostTags {
    /// Creates a budget of `depth` tags (`1..=MAX_TAGS`) under `policy`.
    pub fn new(depth: u32, policy: Policy) -> Result<HostTags, Error> {
        let host = HostTags {
            bitmap: TagBitmap::new(depth)?,
            policy: AtomicU32::new(policy.as_u32()),
            active_queues: AtomicU32::new(0),
            waiters: AtomicU64::new(0),
            starved: AtomicU32::new(0),
            last_failure: AtomicU64::new(0),
            borrow_expiry_ns: AtomicU64::new(DEFAULT_BORROW_EXPIRY_NS),
            idle_ns: AtomicU64::new(DEFAULT_IDLE_NS),
            lend_active: AtomicU32::new(0),
            lend_valid: AtomicBool::new(false),
            lend_min: AtomicU32::new(u32::MAX),
            // Recomputed right below (no queue is active yet: no limit
            // binds).
            limit_cache: AtomicU64::new(pack(0, u32::MAX)),
            windows: Windows::new(),
        };
        host.refresh_limit_cache();
        Ok(host)
    }

    /// The underlying tag bitmap (read-only use, e.g. statistics).
    pub fn bitmap(&self) -> &TagBitmap {
        &self.bitmap
    }

    /// Host depth (total tag budget).
    pub fn depth(&self) -> u32 {
        self.bitmap.depth()
    }

    /// Changes the host depth at runtime (see [`TagBitmap::set_depth`]).
    ///
    /// Under [`Policy::Window`] this moves the windows: re-run the waiting
    /// queues afterwards ([`Self::take_waiters`]).
    pub fn set_depth(&self, depth: u32) -> Result<(), Error> {
        self.bitmap.set_depth(depth)?;
        self.refresh_limit_cache();
        Ok(())
    }

    /// Tags currently held (approximate, see [`TagBitmap::in_use`]).
    pub fn in_use(&self) -> u32 {
        self.bitmap.in_use()
    }

    /// The active sharing policy.
    pub fn policy(&self) -> Policy {
        // Relaxed: the policy only selects a limit formula; a get racing
        // with set_policy may use either policy.
        Policy::from_u32(self.policy.load(Ordering::Relaxed)).unwrap_or_default()
    }

    /// Switches the sharing policy at runtime.
    ///
    /// A queue refused under the old policy may wait for what the new one
    /// does not provide: under [`Policy::Window`] a put hands a tag only to
    /// the queues that may use it, and a queue without a window waits for
    /// the tick that gives it one, which other policies do not hand out.
    /// Re-run the waiting queues afterwards ([`Self::take_waiters`]).
    /// `window` starts without windows (every tag shared) until the next
    /// [`Self::tick`].
    pub fn set_policy(&self, policy: Policy) {
        // Relaxed: invalidates stale Lend limits; they are ignored (fair
        // share is used) until the next tick recomputes them.
        self.lend_valid.store(false, Ordering::Relaxed);
        self.forget_window();
        if policy == Policy::Window {
            // The slots of an earlier `window` period may be stale.
            self.windows.reset();
        }
        // Relaxed: see `policy()`.
        self.policy.store(policy.as_u32(), Ordering::Relaxed);
        self.refresh_limit_cache();
    }

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
    fn forget_window(&self) {
        // Relaxed: configuration change; published to the limit cache by
        // the caller's refresh. A refusal or drain racing with it may be
        // lost: the same looseness as the policy switch itself.
        self.last_failure.store(0, Ordering::Relaxed);
    }

    /// The percentage of the depth that every queue may use under
    /// [`Policy::Window`] (the rest is divided into windows).
    pub fn shared_pct(&self) -> u32 {
        self.windows.shared_pct()
    }

    /// Sets the shared percentage of [`Policy::Window`] (`0..=100`; default
    /// [`super::window::DEFAULT_SHARED_PCT`]). Out of range: an error, and
    /// nothing changed. Under `window` this moves the windows: re-run the
    /// waiting queues afterwards ([`Self::take_waiters`]).
    pub fn set_shared_pct(&self, pct: u32) -> Result<(), Error> {
        if self.windows.set_shared_pct(pct) {
            Ok(())
        } else {
            Err(Error::InvalidPercent)
        }
    }

    /// The [`Policy::Window`] layout of the moment (a snapshot, whatever the
    /// policy).
    pub fn window_layout(&self) -> Layout {
        self.windows.layout(self.depth())
    }

    /// The tags of `q`'s window in the current layout, if it has one (a
    /// snapshot).
    pub fn window(&self, q: &QueueTags) -> Option<Range<u32>> {
        let layout = self.window_layout();
        layout.window(self.windows.slot(q, &layout)?)
    }

    /// The shared tags `q` may use in the current layout: its slice of
    /// the shared part, or all of it without a window (a snapshot; see
    /// [`Layout::shared_slice`]).
    pub fn shared_slice(&self, q: &QueueTags) -> Range<u32> {
        let layout = self.window_layout();
        layout.shared_slice(self.windows.slot(q, &layout))
    }

    /// Takes every bit of the waiter mask, for the caller to re-run those
    /// queues: after a change that moves [`Policy::Window`]'s windows (its
    /// policy, depth or shared percentage), when a waiting queue may no
    /// longer be handed out by a put (see [`super::window`], "Why no
    /// wake-up is lost").
    pub fn take_waiters(&self) -> u64 {
        // (T) SeqCst: pairs with (W) in `get`. Either a waiter's re-check
        // reads the change made before this fence, or our swap below sees
        // its bit (set before (W)).
        fence(Ordering::SeqCst);
        // Relaxed: ordered after (T); avoids dirtying the line when idle.
        if self.waiters.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        // Relaxed: the RMW alone returns each bit once (see `put`).
        self.waiters.swap(0, Ordering::Relaxed)
    }

    /// Idle window after which [`Self::tick`] deactivates a queue, in ns.
    pub fn idle_ns(&self) -> u64 {
        // Relaxed: configuration value.
        self.idle_ns.load(Ordering::Relaxed)
    }

    /// Sets the idle window used by [`Self::tick`] (precise to one tick
    /// period, see "Idle detection" in the module docs).
    pub fn set_idle_ns(&self, ns: u64) {
        // Relaxed: configuration value.
        self.idle_ns.store(ns, Ordering::Relaxed);
    }

    /// Number of active queues (may transiently over-count by the number
    /// of activations in progress, never under-counts a settled state).
    pub fn active_queues(&self) -> u32 {
        // Relaxed: used as a share divisor and for statistics only.
        self.active_queues.load(Ordering::Relaxed)
    }

    /// Current waiter mask (bit `index % 64` per refused queue).
    pub fn waiter_mask(&self) -> u64 {
        // Relaxed: statistics; wake-ups are handed out by `put`.
        self.waiters.load(Ordering::Relaxed)
    }

    /// Number of bits set in the waiter mask.
    pub fn waiting_queues(&self) -> u32 {
        self.waiter_mask().count_ones()
    }

    /// Number of starved queues (failed, not yet drained to zero).
    pub fn starved_queues(&self) -> u32 {
        // Relaxed: contention heuristic / statistics.
        self.starved.load(Ordering::Relaxed)
    }

    /// Whether the host counts as contended at `clock`'s time (Borrow
    /// policy): some queue is starved, or a starved queue drained since the
    /// last tick, or the last refusal of a starved queue, or the first tick
    /// after a starved queue drained, is less than `borrow_expiry_ns` ago
    /// (see "Borrow's contention" in the module docs). The clock is only
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
    fn contention<C: Clock>(&self, clock: &C) -> Contention {
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
    fn contended<C: Clock>(&self, clock: &C) -> bool {
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

    /// The cached bound below which no queue is at its policy limit
    /// (`u32::MAX`: no limit binds), see "The limit cache" in the module
    /// docs. A snapshot, for statistics and tests.
    pub fn limit_bound(&self) -> u32 {
        // Relaxed: a snapshot.
        bound_of(self.limit_cache.load(Ordering::Relaxed))
    }

    /// The limit cache's bound for the current state: the smallest limit
    /// below the depth that any queue may have, or `u32::MAX`. Reads no
    /// clock: under Borrow, a recorded refusal with a non-zero expiry
    /// counts as contention (the exact check decides, with the clock, and
    /// forgets the refusal once its window is over).
    fn current_bound(&self) -> u32 {
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
    fn refresh_limit_cache(&self) {
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
    fn window_limit(&self, q: &QueueTags, depth: u32) -> u32 {
        let layout = self.windows.layout(depth);
        layout.limit(self.windows.slot(q, &layout))
    }

    /// Whether `q` is at its limit, which is below the depth: the policy
    /// check of an allocation, equivalent to
    /// `limit < depth && in_flight >= limit` with `limit` as computed by
    /// [`Self::limit`], but without computing the limit (no division).
    /// Reads `in_flight` only when the limit can bind.
    #[inline(always)]
    fn limited<C: Clock>(&self, q: &QueueTags, depth: u32, policy: Policy, clock: &C) -> bool {
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

    /// Allocates a tag for queue `q`.
    ///
    /// `hint` is the caller's per-CPU / per-hardware-queue allocation hint
    /// (seed it with [`super::bitmap::initial_hint`]). `clock` is only read
    /// when a decision needs the time (see the module docs): pass the clock
    /// function, not its value. On `Err`, bit `q.index() % 64` has been set
    /// in the waiter mask and is guaranteed to be returned by a later
    /// [`Self::put`] or [`Self::put_finish`] (see the module docs): the
    /// caller should stop its queue and re-run it when one returns a mask
    /// containing that bit.
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
        // The fast path (module docs): active, busy since the last tick,
        // neither waiting nor watched (one load), below the limit cache's
        // bound, a free tag in the hinted word.
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

    /// The bound of the limit cache, as read by the fast path.
    #[inline(always)]
    fn cached_bound(&self) -> u32 {
        // Relaxed: see `get`.
        bound_of(self.limit_cache.load(Ordering::Relaxed))
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

    /// Activates `q` and marks it busy (first get since the last tick).
    #[cold]
    fn mark_busy(&self, q: &QueueTags) {
        // BUSY rides along with the counted ACTIVE flag's RMW, if any.
        if set_counted(q, ACTIVE, BUSY, &self.active_queues) {
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
        // Relaxed: ordered before the re-check by fence (W); an RMW so that
        // a putter's concurrent hand-off (`fetch_and`) cannot erase it.
        self.waiters.fetch_or(q.waiter_bit(), Ordering::Relaxed);
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

    /// One allocation attempt outside the fast path: the exact policy
    /// check (only when the limit cache says the limit may bind), then the
    /// bitmap (the hinted word, then the search); under [`Policy::Window`]
    /// (whose bound is 0), the window and its slice instead. Depth, policy
    /// and layout are read afresh (on the re-check: after (W)).
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
            match self.policy() {
                Policy::Window => return self.try_get_window(q, hint).map_err(failed),
                policy => {
                    if self.limited(q, self.depth(), policy, clock) {
                        return Err(failed(Refusal::Limited));
                    }
                }
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

    /// [`Self::try_get`] under [`Policy::Window`]: a tag of `q`'s window,
    /// else of its slice of the shared part (without a window: of the whole
    /// shared part; see [`super::window`]). A refusal is `Limited` when
    /// other queues' windows exist (the queue's part of the budget is
    /// full), `Exhausted` when its part is the whole depth.
    #[inline(never)]
    fn try_get_window(&self, q: &QueueTags, hint: &AtomicU32) -> Result<u32, Refusal> {
        let layout = self.windows.layout(self.depth());
        let slot = self.windows.slot(q, &layout);
        match self.windows.get(&self.bitmap, &layout, slot, hint) {
            Some(tag) => {
                // Relaxed: accounting; tag ownership is carried by the
                // bitmap bit.
                q.in_flight.fetch_add(1, Ordering::Relaxed);
                Ok(tag)
            }
            None if layout.limit(slot) < layout.depth => Err(Refusal::Limited),
            None => Err(Refusal::Exhausted),
        }
    }

    /// Records a refusal time for Borrow's contention window. Returns
    /// whether none was recorded before (the limit cache only looks at
    /// whether one is).
    fn note_failure(&self, now_ns: u64) -> bool {
        let stamp = stamp(now_ns);
        // Relaxed: heuristic timestamp; fetch_max keeps it monotonic and
        // leaves a drain's marker in place (its window starts later).
        if self.last_failure.load(Ordering::Relaxed) < stamp {
            return self.last_failure.fetch_max(stamp, Ordering::Relaxed) == 0;
        }
        false
    }

    /// Frees `tag` held by queue `q` and returns the waiter mask to wake.
    ///
    /// The returned mask (bit `index % 64` per queue) has been atomically
    /// taken from the waiter mask: the caller must re-run every queue whose
    /// bit is set (a bit may stand for several queues whose indexes collide
    /// modulo 64: re-run them all). Only the bits of the waiters that may
    /// allocate now are taken (see "Hand-off" in the module docs); the
    /// others keep theirs until a later put (or [`Self::tick`], or
    /// [`Self::take_waiters`]) finds that they may. `queues` are the queues
    /// of this host, as [`Self::tick`] takes them (a waiter's bit that no
    /// queue in `queues` has is handed out unexamined; only a put that
    /// finds waiters looks at them). `clock` is read at most once, and
    /// only to hand off waiters under [`Policy::Borrow`] inside an expiry
    /// window (see "Time" in the module docs). A bogus or double free of a
    /// tag that is not held is ignored and returns 0.
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
        // in `clear_counted`, whose own load this repeats.
        // Matched, not `prev <= 1` then `prev == 0`: LLVM then tests `1`
        // first (`cmp $1; je`), which costs a put that drains its device
        // two instructions less and a deeper one two more; with completions
        // inside `queue_rq` (rnull's irqmode 0) every put drains. The order
        // is the compiler's, not the source's.
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
    /// allocate now (after (P)), see "Hand-off" in the module docs. Out of
    /// line and without the freed tag, so that `put` costs the same under
    /// every policy until it finds waiters. The clock comes by value (the
    /// driver's is a function item, of no size): a reference would give
    /// the inlined `put` a stack slot whose address escapes, and a function
    /// with one makes no tail calls (the driver's completion ends the
    /// request with one after the put).
    #[cold]
    #[inline(never)]
    fn hand_off<Q: AsRef<QueueTags>, C: Clock>(&self, queues: &[Q], clock: C) -> u64 {
        let clock = &clock;
        // Relaxed: ordered after (P), as the load in `put`.
        let waiters = self.waiters.load(Ordering::Relaxed);
        let depth = self.depth();
        let bits = match self.policy() {
            Policy::Window => match self.windows.hand_off(&self.bitmap, depth, waiters) {
                HandOff::All => waiters,
                HandOff::Only(bits) => bits,
            },
            policy => self.unlimited_waiters(waiters, queues, depth, policy, clock),
        };
        if bits == 0 {
            return 0;
        }
        // Relaxed: the RMW alone returns each bit once (a bit set after our
        // load belongs to a waiter whose re-check follows (P): see "Why no
        // wake-up is lost"); the caller's queue re-run does its own locking.
        self.waiters.fetch_and(!bits, Ordering::Relaxed) & bits
    }

    /// The bits of `waiters` whose queues may allocate now under `policy`
    /// (not [`Policy::Window`]): none if every tag is held (the freed one
    /// was taken again, and its taker's put hands off later), else those
    /// with a queue below its policy limit, each limit read afresh (after
    /// (P)), and the bits that no queue of `queues` has (they cannot be
    /// examined). The clock is read only by Borrow's contention check
    /// inside an expiry window, once for all the waiters.
    fn unlimited_waiters<Q: AsRef<QueueTags>, C: Clock>(
        &self,
        waiters: u64,
        queues: &[Q],
        depth: u32,
        policy: Policy,
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
            if !self.limited(q, depth, policy, &now) {
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

    /// A starved queue drained to zero (or holds its fair share, see
    /// `tick_starved`): no longer starved, and with a non-zero expiry the
    /// host stays contended for that long after the drain (see "Borrow's
    /// contention" in the module docs). The drain reads no clock: it
    /// stores [`DRAINED`], which the next tick turns into its time.
    #[cold]
    #[inline(never)]
    fn clear_starved(&self, q: &QueueTags) {
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

    /// Periodic maintenance, called from the driver's timer (serialised,
    /// every few ms) with every queue that can be active or waiting (a queue
    /// not passed counts as idle and without a window) and the current
    /// time.
    ///
    /// Turns the queues' busy flags into time (see "Idle detection" in the
    /// module docs), deactivates queues not found busy for
    /// [`Self::idle_ns`], holding no tags and with no pending wake-up bit
    /// (also clearing their starved and waiting marks), clears the starved
    /// mark of a queue that holds its fair share and was not refused below
    /// it since the last tick, starts the Borrow window of a starved queue
    /// that drained since the last tick (or lost its mark in this one),
    /// then, under [`Policy::Lend`], recomputes the per-queue lending
    /// limits, and under [`Policy::Window`] lays the windows out for the
    /// active queues.
    ///
    /// Returns the waiter mask to wake, as [`Self::put`] does: under
    /// [`Policy::Window`] every waiter when the windows moved, which may
    /// strand queues refused under the old layout (see
    /// [`super::window`]); under the other policies the waiters that may
    /// allocate now. A limit rises without a put (a queue retired, `lend`
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
            // this tick may be missed; see "Counters" in the module docs.
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
        // A starved queue drained since the last tick, or lost its mark in
        // this one: its window starts now, at most one tick period after
        // the drain (see "Borrow's contention"). Relaxed: heuristic, as
        // `note_failure`; the tick is the only writer that replaces the
        // marker, and it is serialised, so no stale reading of the clock
        // can stamp a later drain's marker. No refresh: the bound only
        // depends on whether a stamp is recorded.
        let _ = self.last_failure.compare_exchange(
            DRAINED,
            stamp(now_ns),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        match self.policy() {
            // The windows moved: hand every waiter back.
            Policy::Window if self.windows.tick(queues, self.depth(), self.waiter_mask()) => {
                self.take_waiters()
            }
            Policy::Window => 0,
            policy => {
                if policy == Policy::Lend {
                    self.lend_tick(queues);
                }
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
        }
    }

    /// The tick's look at `q`'s starved mark (`flags` as the tick read
    /// them): a starved queue that was not refused below its fair share
    /// since the last tick and holds at least its fair share is no longer
    /// starved, and its window starts as after a drain (see "Borrow's
    /// contention"). Without this, only a drain to zero or idleness cleared
    /// the mark, and a busy queue (at queue depth 32, say) that once was
    /// starved kept the host contended for as long as it did I/O, long
    /// after it had its share: every other queue was held at the fair share
    /// for good. A refusal at its limit says nothing here, as it marks no
    /// queue starved: the contention it would prolong is its own.
    ///
    /// Takes the queue's [`DENIED`] mark for the next period whatever the
    /// outcome. A refusal racing with this tick counts for this period or
    /// for the next (and re-marks the queue starved if this tick cleared
    /// it): the decision is a heuristic, as the refusal's own reading.
    fn tick_starved(&self, q: &QueueTags, flags: u32) {
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

    /// Lend policy: move tags stepwise from the queues that were not
    /// refused to those that were.
    ///
    /// With `n` active queues and `fair = fair_share(depth, n)`: the
    /// *borrowers* are the active queues refused since the last tick or
    /// still waiting (a queue waiting at its limit is not re-run, hence not
    /// refused again, until it may allocate: see "Hand-off"), the
    /// *lenders* the other active queues; `step = max(fair / 4, 1)`. When
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
    fn lend_tick<Q: AsRef<QueueTags>>(&self, queues: &[Q]) {
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use core::cell::Cell;
    use std::vec::Vec;

    fn take(h: &HostTags, q: &QueueTags, n: u32, now: u64) -> Vec<u32> {
        let hint = AtomicU32::new(0);
        (0..n).map(|_| h.get(q, &hint, now).unwrap()).collect()
    }

    /// Puts `tags` of `q` back at `now` and checks that none is left held.
    fn give_back(h: &HostTags, q: &QueueTags, tags: Vec<u32>, qs: &[&QueueTags], now: u64) {
        for t in tags {
            h.put(q, t, qs, now);
        }
        assert_eq!(h.in_use(), 0);
    }

    /// On a 64-tag host: `q1` active, then refused at time 10 while `q0`
    /// holds every tag (taken at 0), which starves it under `Borrow`.
    /// Returns `q0`'s tags.
    fn starve_q1(h: &HostTags, q0: &QueueTags, q1: &QueueTags, hint: &AtomicU32) -> Vec<u32> {
        let t = h.get(q1, hint, 0).unwrap();
        h.put(q1, t, &[q0, q1], 0);
        let held = take(h, q0, 64, 0);
        assert_eq!(h.get(q1, hint, 10), Err(Refusal::Exhausted));
        held
    }

    #[test]
    fn new_and_config() {
        assert_eq!(
            HostTags::new(0, Policy::Fair).err(),
            Some(Error::InvalidDepth)
        );
        assert_eq!(
            HostTags::new(1025, Policy::Fair).err(),
            Some(Error::InvalidDepth)
        );
        let h = HostTags::new(64, Policy::Borrow).unwrap();
        assert_eq!(h.depth(), 64);
        assert_eq!(h.policy(), Policy::Borrow);
        assert_eq!(h.borrow_expiry_ns(), DEFAULT_BORROW_EXPIRY_NS);
        assert_eq!(h.idle_ns(), DEFAULT_IDLE_NS);
        h.set_policy(Policy::None);
        h.set_borrow_expiry_ns(5);
        h.set_idle_ns(7);
        assert_eq!(h.set_depth(0), Err(Error::InvalidDepth));
        h.set_depth(32).unwrap();
        assert_eq!(
            (h.policy(), h.borrow_expiry_ns(), h.idle_ns(), h.depth()),
            (Policy::None, 5, 7, 32)
        );
        assert_eq!(h.active_queues(), 0);
        assert_eq!(h.waiting_queues(), 0);
        assert!(!h.is_contended(0));
        assert_eq!(Refusal::Limited.as_str(), "limited");
        assert_eq!(Refusal::Exhausted.as_str(), "exhausted");
    }

    #[test]
    fn fair_limits_active_queues() {
        let h = HostTags::new(64, Policy::Fair).unwrap();
        let q0 = QueueTags::new(0);
        let q1 = QueueTags::new(1);
        // A single active queue is unlimited.
        let t0 = take(&h, &q0, 40, 0);
        assert_eq!(h.active_queues(), 1);
        assert_eq!(h.limit(&q0, 0), 64);
        // Second queue becomes active on first get: both get 32.
        let mut t1 = take(&h, &q1, 20, 0);
        assert_eq!(h.active_queues(), 2);
        assert_eq!(h.limit(&q0, 0), 32);
        assert_eq!(h.limit(&q1, 0), 32);
        let hint = AtomicU32::new(0);
        assert_eq!(h.get(&q0, &hint, 1), Err(Refusal::Limited));
        assert_eq!(q0.failures(), 1);
        assert!(q0.is_waiting());
        // Refused at (above) its fair share: not starved.
        assert!(!q0.is_starved());
        assert_eq!(h.waiter_mask(), 1);
        assert_eq!(h.waiting_queues(), 1);
        // q1 still below its share.
        t1.push(h.get(&q1, &hint, 1).unwrap());
        assert_eq!(q1.in_flight(), 21);
        // q1's puts leave q0's bit: q0 still holds more than its share.
        assert_eq!(h.put(&q1, t1.pop().unwrap(), &[&q0, &q1], 0), 0);
        assert_eq!(h.waiting_queues(), 1);
        // q0's own puts hand it out once it is below its share (40 held,
        // share 32: the ninth put), once.
        for (i, t) in t0.into_iter().enumerate() {
            let woken = if i == 8 { 1 } else { 0 };
            assert_eq!(h.put(&q0, t, &[&q0, &q1], 0), woken, "put {i}");
        }
        assert_eq!(h.waiting_queues(), 0);
        for t in t1 {
            assert_eq!(h.put(&q1, t, &[&q0, &q1], 0), 0);
        }
        assert_eq!((q0.in_flight(), q1.in_flight(), h.in_use()), (0, 0, 0));
    }

    #[test]
    fn put_begin_leaves_only_drains_of_starved_queues_and_waiters() {
        // Fair, 4 tags, one queue: nothing left for the rest while the
        // queue holds tags, is not starved and nobody waits.
        let h = HostTags::new(4, Policy::Fair).unwrap();
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let qs = [&q0, &q1];
        let mut t0 = take(&h, &q0, 4, 0);
        assert_eq!(h.put_begin(&q0, t0.pop().unwrap()), PutRest::Done);
        // A bogus put (a tag not held) does nothing.
        assert_eq!(h.put_begin(&q0, 1000), PutRest::Done);
        // q1 refused below its share (starved), then a put of q0: waiters.
        t0.push(h.get(&q0, &AtomicU32::new(0), 1).unwrap());
        let hint = AtomicU32::new(0);
        assert_eq!(h.get(&q1, &hint, 1), Err(Refusal::Exhausted));
        assert_eq!(h.starved_queues(), 1);
        let rest = h.put_begin(&q0, t0.pop().unwrap());
        assert_eq!(rest, PutRest::Waiters);
        assert_eq!(PutRest::from_raw(rest as u8), rest);
        assert_eq!(h.put_finish(&q0, rest, || &qs[..], 2), 0b10);
        // q1 takes the tag and drains it while starved: the rest clears
        // the mark.
        let t1 = h.get(&q1, &hint, 3).unwrap();
        let rest = h.put_begin(&q1, t1);
        assert_eq!(rest, PutRest::Drained);
        assert_eq!(h.put_finish(&q1, rest, || &qs[..], 4), 0);
        assert_eq!(h.starved_queues(), 0);
        // A tag put through the wrong queue: the rest undoes the wrap.
        let t = t0.pop().unwrap();
        let rest = h.put_begin(&q1, t);
        assert_eq!(rest, PutRest::Wrapped);
        assert_eq!(h.put_finish(&q1, rest, || &qs[..], 5), 0);
        assert_eq!(q1.in_flight(), 0);
    }

    #[test]
    fn a_watched_grant_is_reported_once_from_the_slow_path() {
        let h = HostTags::new(2, Policy::None).unwrap();
        let q = QueueTags::new(0);
        let hint = AtomicU32::new(0);
        let seen = Cell::new(0);
        let get = |now| h.get_watching(&q, &hint, now, || seen.set(seen.get() + 1));
        let a = get(0).unwrap();
        let b = get(0).unwrap();
        assert_eq!(seen.get(), 0, "nothing watched");
        // Refused, then watched (as rnull does after a refusal): the
        // refusal itself reports nothing, the next tag does, once.
        assert!(get(1).is_err());
        q.watch_next_grant();
        assert!(get(1).is_err());
        assert_eq!(seen.get(), 0);
        h.put(&q, a, &[&q], 2);
        let a = get(3).unwrap();
        assert_eq!(seen.get(), 1);
        h.put(&q, a, &[&q], 4);
        let _ = get(5).unwrap();
        assert_eq!(seen.get(), 1, "reported once");
        h.put(&q, b, &[&q], 6);
    }

    #[test]
    fn put_hands_off_only_waiters_below_their_limit() {
        // Fair, 16 tags, two queues: shares of 8. q0 holds 8 and is
        // refused at its share; q1 holds 8 and is refused for want of a
        // tag (the budget is full).
        let h = HostTags::new(16, Policy::Fair).unwrap();
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let qs = [&q0, &q1];
        let mut t0 = take(&h, &q0, 8, 0);
        let mut t1 = take(&h, &q1, 8, 0);
        let hint = AtomicU32::new(0);
        assert_eq!(h.get(&q0, &hint, 1), Err(Refusal::Limited));
        assert_eq!(h.get(&q1, &hint, 1), Err(Refusal::Limited));
        assert_eq!(h.waiter_mask(), 0b11);
        // q1's put: q1 is below its share again, q0 is not.
        assert_eq!(h.put(&q1, t1.pop().unwrap(), &qs, 2), 0b10);
        assert_eq!(h.waiter_mask(), 0b01);
        // The freed tag taken again (here by q1): nobody is handed out,
        // q0's bit waits for the taker's put.
        t1.push(h.get(&q1, &hint, 3).unwrap());
        assert_eq!(h.put(&q0, t0.pop().unwrap(), &qs, 4), 0b01);
        // Limits moved by a tick or a policy switch are read by the next
        // put: q0 refused at its share again, then `none`.
        t0.push(h.get(&q0, &hint, 5).unwrap());
        assert_eq!(h.get(&q0, &hint, 5), Err(Refusal::Limited));
        assert_eq!(h.put(&q1, t1.pop().unwrap(), &qs, 6), 0);
        h.set_policy(Policy::None);
        assert_eq!(h.put(&q1, t1.pop().unwrap(), &qs, 7), 0b01);
        // A bit whose queue is not in `queues` is handed out unexamined:
        // q0 refused again under `fair`, then a put that does not show q0.
        h.set_policy(Policy::Fair);
        assert_eq!(h.get(&q0, &hint, 8), Err(Refusal::Limited));
        assert_eq!(h.put(&q1, t1.pop().unwrap(), &[&q1], 9), 0b01);
        for t in t0 {
            h.put(&q0, t, &qs, 10);
        }
        for t in t1 {
            h.put(&q1, t, &qs, 10);
        }
        assert_eq!((h.in_use(), h.waiter_mask()), (0, 0));
    }

    #[test]
    fn put_reads_the_queues_only_when_it_finds_waiters() {
        // q0 holds the whole budget; a put without waiters does not ask
        // for the list, one with q1 waiting asks once and hands q1 out.
        let h = HostTags::new(8, Policy::Fair).unwrap();
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let qs = [&q0, &q1];
        let asked = core::cell::Cell::new(0);
        let list = || {
            asked.set(asked.get() + 1);
            &qs[..]
        };
        let mut t0 = take(&h, &q0, 8, 0);
        assert_eq!(h.put_with(&q0, t0.pop().unwrap(), list, 1), 0);
        assert_eq!(asked.get(), 0);
        t0.push(h.get(&q0, &AtomicU32::new(0), 2).unwrap());
        assert_eq!(h.get(&q1, &AtomicU32::new(0), 3), Err(Refusal::Exhausted));
        assert_eq!(h.put_with(&q0, t0.pop().unwrap(), list, 4), 0b10);
        assert_eq!(asked.get(), 1);
        give_back(&h, &q0, t0, &qs, 5);
    }

    #[test]
    fn tick_hands_off_a_waiter_whose_limit_rose() {
        // Fair, 8 tags: q1 is refused at its share of 4 while q0 holds a
        // tag, which q0's put cannot hand to q1 (still at its share).
        // The tick that retires the idle q0 raises q1's limit to 8: it
        // hands q1 out, without waiting for a put.
        let h = HostTags::new(8, Policy::Fair).unwrap();
        h.set_idle_ns(0);
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let qs = [&q0, &q1];
        let t0 = take(&h, &q0, 1, 0);
        let t1 = take(&h, &q1, 4, 0);
        let hint = AtomicU32::new(0);
        assert_eq!(h.get(&q1, &hint, 1), Err(Refusal::Limited));
        assert_eq!(h.put(&q0, t0[0], &qs, 2), 0);
        assert_eq!(h.waiter_mask(), 0b10);
        // The first tick clears q0's busy mark, the second retires it.
        assert_eq!(h.tick(&qs, 3), 0);
        assert_eq!(h.tick(&qs, 4), 0b10);
        assert_eq!((h.active_queues(), h.waiter_mask()), (1, 0));
        give_back(&h, &q1, t1, &qs, 5);
    }

    #[test]
    fn put_hands_off_a_borrow_waiter_when_contention_ends() {
        // Borrow, 8 tags, expiry 1000: q1 starves (refused with no tag
        // while below its share), the fair share applies to q0, which is
        // refused at it; q1 drains at 2_000.
        let h = HostTags::new(8, Policy::Borrow).unwrap();
        h.set_borrow_expiry_ns(1_000);
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let qs = [&q0, &q1];
        let hint = AtomicU32::new(0);
        let t1 = h.get(&q1, &hint, 0).unwrap();
        h.put(&q1, t1, &qs, 0);
        let mut t0 = take(&h, &q0, 8, 0);
        assert_eq!(h.get(&q1, &hint, 100), Err(Refusal::Exhausted));
        assert!(q1.is_starved());
        let t1 = loop {
            h.put(&q0, t0.pop().unwrap(), &qs, 200);
            if let Ok(t) = h.get(&q1, &hint, 200) {
                break t;
            }
        };
        assert_eq!(h.get(&q0, &hint, 300), Err(Refusal::Limited));
        // The drain's put leaves q0's bit: until the next tick starts the
        // drain's window, and then for the window (2_000..3_000), q0 is
        // still limited to its share, which it holds.
        assert_eq!(h.put(&q1, t1, &qs, 2_000), 0);
        assert_eq!(h.waiter_mask(), 0b01);
        h.tick(&qs, 2_000);
        let t = h.get(&q1, &hint, 2_500).unwrap();
        assert_eq!(h.put(&q1, t, &qs, 2_500), 0, "the drain's window");
        assert_eq!(h.waiter_mask(), 0b01);
        // After the window the limit is the depth: the next put hands q0
        // out although it still holds its share.
        let t = h.get(&q1, &hint, 3_500).unwrap();
        assert_eq!(h.put(&q1, t, &qs, 3_500), 0b01);
        for t in t0 {
            h.put(&q0, t, &qs, 4_000);
        }
        assert_eq!(h.in_use(), 0);
    }

    #[test]
    fn exhausted_and_wakeup_once_per_episode() {
        let h = HostTags::new(4, Policy::Fair).unwrap();
        let q0 = QueueTags::new(0);
        let q1 = QueueTags::new(65);
        let held = take(&h, &q1, 4, 0);
        let hint = AtomicU32::new(0);
        // Fair share is max(2, 4) = 4 = depth: the refusal is Exhausted.
        assert_eq!(h.get(&q0, &hint, 1), Err(Refusal::Exhausted));
        assert_eq!(h.get(&q1, &hint, 1), Err(Refusal::Exhausted));
        // Bits 0 and 65 % 64 = 1.
        assert_eq!(h.waiter_mask(), 0b11);
        assert_eq!(h.put(&q1, held[0], &[&q0, &q1], 0), 0b11);
        assert_eq!(h.put(&q1, held[1], &[&q0, &q1], 0), 0);
        let t = h.get(&q0, &hint, 3).unwrap();
        assert!(!q0.is_waiting());
        assert_eq!(q0.in_flight(), 1);
        // q0 drained to zero: no longer starved.
        assert!(q0.is_starved());
        assert_eq!(h.put(&q0, t, &[&q0, &q1], 0), 0);
        assert!(!q0.is_starved());
        // q1 was refused while holding its full fair share: not starved.
        assert!(!q1.is_starved());
        assert_eq!(h.starved_queues(), 0);
        assert_eq!(h.put(&q1, held[2], &[&q0, &q1], 0), 0);
        assert_eq!(h.put(&q1, held[3], &[&q0, &q1], 0), 0);
        assert_eq!(h.in_use(), 0);
    }

    #[test]
    fn bogus_puts_do_not_corrupt_counters() {
        let h = HostTags::new(8, Policy::Fair).unwrap();
        let q0 = QueueTags::new(0);
        let q1 = QueueTags::new(1);
        let t = take(&h, &q0, 1, 0);
        assert_eq!(h.put(&q0, 7, &[&q0, &q1], 0), 0, "tag not held");
        assert_eq!(h.put(&q0, 5000, &[&q0, &q1], 0), 0, "tag out of range");
        assert_eq!(q0.in_flight(), 1);
        // Put through the wrong queue: q1 must not wrap around.
        assert_eq!(h.put(&q1, t[0], &[&q0, &q1], 0), 0);
        assert_eq!(q1.in_flight(), 0);
        assert_eq!(h.put(&q0, t[0], &[&q0, &q1], 0), 0, "double put");
    }

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

    #[test]
    fn borrow_falls_back_to_fair_and_lifts() {
        let h = HostTags::new(64, Policy::Borrow).unwrap();
        // Without an expiry first: the fair share lasts until the starved
        // queue drains.
        h.set_borrow_expiry_ns(0);
        let q0 = QueueTags::new(0);
        let q1 = QueueTags::new(1);
        let hint = AtomicU32::new(0);
        let t0 = h.get(&q0, &hint, 0).unwrap();
        assert_eq!(h.put(&q0, t0, &[&q0, &q1], 0), 0);
        assert_eq!(h.active_queues(), 1);
        // No contention: q1 may borrow everything although q0 is active.
        let mut held = take(&h, &q1, 64, 10);
        assert_eq!(h.active_queues(), 2);
        assert!(!h.is_contended(10));
        assert_eq!(h.limit(&q1, 10), 64);
        // q0 fails: contention on, fair share applies to q1.
        assert_eq!(h.get(&q0, &hint, 20), Err(Refusal::Exhausted));
        assert!(h.is_contended(20));
        assert_eq!(h.limit(&q1, 20), 32);
        assert_eq!(h.put(&q1, held.pop().unwrap(), &[&q0, &q1], 30), 1);
        assert_eq!(h.get(&q1, &hint, 31), Err(Refusal::Limited));
        // q0 gets the freed tag; contention lasts while it is starved.
        let t = h.get(&q0, &hint, 32).unwrap();
        assert!(h.is_contended(1_000));
        // Drains to zero: with expiry 0 contention ends at once.
        h.put(&q0, t, &[&q0, &q1], 35);
        assert!(!h.is_contended(40));
        assert_eq!(h.limit(&q1, 40), 64);

        // With an expiry, contention also lasts expiry ns after the last
        // failure, and after the starved queue drained (from the tick after
        // the drain: the drain reads no clock), even though nobody is starved
        // any more.
        let all = [&q0, &q1];
        held.push(h.get(&q1, &hint, 45).unwrap());
        h.set_borrow_expiry_ns(1_000);
        assert_eq!(h.get(&q0, &hint, 50), Err(Refusal::Exhausted));
        let t = loop {
            let freed = held.pop().unwrap();
            h.put(&q1, freed, &[&q0, &q1], 60);
            if let Ok(t) = h.get(&q0, &hint, 60) {
                break t;
            }
        };
        assert!(h.is_contended(2_000), "starved");
        h.put(&q0, t, &[&q0, &q1], 2_100);
        assert_eq!(h.starved_queues(), 0);
        // Until the next tick the drain's window has not started, whatever
        // the time.
        assert!(h.is_contended(2_100));
        assert!(h.is_contended(1_000_000));
        assert_eq!(h.limit(&q1, 1_000_000), 32);
        h.tick(&all, 2_100);
        assert!(h.is_contended(2_100), "the drain's window starts");
        assert!(h.is_contended(3_099));
        assert_eq!(h.limit(&q1, 3_099), 32);
        assert!(!h.is_contended(3_100));
        assert_eq!(h.limit(&q1, 3_100), 64);
        // The window after a drain starts later than the refusal's: it is
        // the one that counts. (q1 takes everything back first; its own
        // refusal at the end of the budget, above its fair share, does not
        // mark it.)
        while let Ok(t) = h.get(&q1, &hint, 3_900) {
            held.push(t);
        }
        assert!(!q1.is_starved() && !h.is_contended(3_950));
        assert_eq!(h.get(&q0, &hint, 4_000), Err(Refusal::Exhausted));
        assert!(h.is_contended(4_500), "starved");
        let t = loop {
            let freed = held.pop().unwrap();
            h.put(&q1, freed, &[&q0, &q1], 4_600);
            if let Ok(t) = h.get(&q0, &hint, 4_600) {
                break t;
            }
        };
        h.put(&q0, t, &all, 5_200);
        h.tick(&all, 5_200);
        assert!(h.is_contended(5_200), "the drain's window");
        assert!(h.is_contended(6_199));
        assert!(!h.is_contended(6_200));
    }

    /// A starved queue that gets its fair share and keeps it, without
    /// draining, is no longer starved after a tick period without another
    /// refusal below its share: the fair share then lasts the window, not
    /// for as long as that queue does I/O.
    #[test]
    fn tick_unstarves_a_queue_that_holds_its_share() {
        let h = HostTags::new(64, Policy::Borrow).unwrap();
        h.set_borrow_expiry_ns(100);
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let all = [&q0, &q1];
        let hint = AtomicU32::new(0);
        let mut theirs = starve_q1(&h, &q0, &q1, &hint);
        assert!(q1.is_starved());
        // q1 gets 31 tags, one short of its share (32).
        let mut mine = Vec::new();
        for _ in 0..31 {
            h.put(&q0, theirs.pop().unwrap(), &all, 10);
            mine.push(h.get(&q1, &hint, 20).unwrap());
        }
        // Refused below its share in this period: still starved.
        h.tick(&all, 1_000);
        assert!(q1.is_starved());
        // Below its share: still starved.
        h.tick(&all, 2_000);
        assert!(q1.is_starved());
        // At its share, not refused below it since the last tick: no
        // longer starved, and the window starts.
        h.put(&q0, theirs.pop().unwrap(), &all, 2_000);
        mine.push(h.get(&q1, &hint, 2_500).unwrap());
        assert_eq!(h.get(&q1, &hint, 2_500), Err(Refusal::Limited));
        assert!(q1.is_starved(), "a refusal at its limit");
        h.tick(&all, 3_000);
        assert!(!q1.is_starved());
        assert_eq!(h.starved_queues(), 0);
        assert!(h.is_contended(3_099));
        assert!(!h.is_contended(3_100));
        assert_eq!(h.limit(&q1, 3_100), 64);
        // Refused below its share again (q0 took everything back): a tick
        // in the same period keeps the mark.
        for t in mine.drain(..) {
            h.put(&q1, t, &all, 3_100);
        }
        while let Ok(t) = h.get(&q0, &hint, 3_200) {
            theirs.push(t);
        }
        mine.push({
            h.put(&q0, theirs.pop().unwrap(), &all, 3_200);
            h.get(&q1, &hint, 3_300).unwrap()
        });
        assert_eq!(h.get(&q1, &hint, 3_300), Err(Refusal::Exhausted));
        while q1.in_flight() < 32 {
            h.put(&q0, theirs.pop().unwrap(), &all, 3_300);
            mine.push(h.get(&q1, &hint, 3_400).unwrap());
        }
        h.tick(&all, 4_000);
        assert!(q1.is_starved(), "refused below its share in this period");
        h.tick(&all, 5_000);
        assert!(!q1.is_starved());
        for t in mine {
            h.put(&q1, t, &all, 5_000);
        }
        for t in theirs {
            h.put(&q0, t, &all, 5_000);
        }
    }

    #[test]
    fn tick_deactivates_idle_queues_only() {
        let h = HostTags::new(8, Policy::None).unwrap();
        h.set_idle_ns(100);
        let q0 = QueueTags::new(0);
        let q1 = QueueTags::new(1);
        let q2 = QueueTags::new(2);
        let hint = AtomicU32::new(0);
        let all = [&q0, &q1, &q2];
        // q0 holds a tag throughout; q1 does one I/O.
        let t0 = h.get(&q0, &hint, 0).unwrap();
        let t1 = h.get(&q1, &hint, 0).unwrap();
        h.put(&q1, t1, &[&q0, &q1, &q2], 0);
        assert!(q0.is_busy() && q1.is_busy() && !q2.is_busy());
        // The tick turns the flag into time and clears it, except for a
        // queue holding tags (its put does not mark it).
        h.tick(&all, 10);
        assert_eq!((q0.last_active_ns(), q1.last_active_ns()), (10, 10));
        assert!(q0.is_busy() && !q1.is_busy());
        // q1 is deactivated by the first tick idle_ns after the last tick
        // that found it busy, not earlier.
        for now in (20..=100).step_by(10) {
            h.tick(&all, now);
            assert!(q1.is_active(), "deactivated early at {now}");
        }
        h.tick(&all, 110);
        assert!(q0.is_active() && !q1.is_active() && !q2.is_active());
        assert_eq!(h.active_queues(), 1);
        assert_eq!(q0.last_active_ns(), 110);

        // A queue that did I/O since the last tick is never deactivated by
        // that tick, even with an idle window of 0; the next tick does.
        h.set_idle_ns(0);
        let t1 = h.get(&q1, &hint, 999).unwrap();
        assert_eq!(h.active_queues(), 2, "re-activated by its next get");
        h.put(&q1, t1, &[&q0, &q1, &q2], 0);
        h.tick(&all, 1_000);
        assert!(q1.is_active());
        h.tick(&all, 1_000);
        assert!(!q1.is_active());

        // The put of a tag held across ticks: the tick after the put still
        // counts the queue as busy, so the idle time starts there.
        h.set_idle_ns(100);
        h.put(&q0, t0, &[&q0, &q1, &q2], 0);
        h.tick(&all, 1_010);
        assert_eq!(q0.last_active_ns(), 1_010);
        h.tick(&all, 1_100);
        assert!(q0.is_active(), "idle for less than idle_ns since its put");
        h.tick(&all, 1_110);
        assert!(!q0.is_active());
        assert_eq!(h.active_queues(), 0);

        // A waiting queue (bit pending) is not deactivated even when idle.
        let mut rest = take(&h, &q0, 8, 2_000);
        assert_eq!(h.get(&q2, &hint, 2_000), Err(Refusal::Exhausted));
        assert!(q2.is_starved() && q2.is_busy());
        h.tick(&all, 2_010);
        h.tick(&all, 10_000);
        assert!(q2.is_active() && q2.is_starved());
        assert_eq!(q2.last_active_ns(), 2_010);
        assert_eq!(h.active_queues(), 2);
        // Its bit is handed out by a put; then idleness deactivates it and
        // clears its starved and waiting marks.
        assert_eq!(h.put(&q0, rest.pop().unwrap(), &[&q0, &q1, &q2], 0), 0b100);
        h.tick(&all, 20_000);
        assert!(!q2.is_active() && !q2.is_starved() && !q2.is_waiting());
        assert_eq!(h.starved_queues(), 0);
        assert_eq!(h.active_queues(), 1);
        for t in rest {
            h.put(&q0, t, &[&q0, &q1, &q2], 0);
        }
        h.tick(&all, 40_000);
        assert_eq!(h.active_queues(), 1, "q0 held tags at the last tick");
        h.tick(&all, 40_100);
        assert_eq!(h.active_queues(), 0);
    }

    #[test]
    fn fair_share_reached_matches_limit() {
        let q = QueueTags::new(0);
        let actives = [
            0,
            1,
            2,
            3,
            4,
            5,
            7,
            8,
            16,
            17,
            100,
            256,
            257,
            1024,
            1025,
            u32::MAX,
        ];
        for depth in 1..=crate::bitmap::MAX_TAGS {
            for active in actives {
                let l = fair_share(depth, active);
                let fs = [
                    0,
                    1,
                    3,
                    4,
                    5,
                    l - 1,
                    l,
                    l + 1,
                    depth - 1,
                    depth,
                    depth + 1,
                    u32::MAX,
                ];
                for f in fs {
                    q.in_flight.store(f, Ordering::Relaxed);
                    assert_eq!(
                        fair_share_reached(depth, active, &q),
                        l < depth && f >= l,
                        "depth {depth} active {active} in_flight {f}"
                    );
                }
            }
        }
    }

    /// A clock that counts how often it is read.
    struct Counting {
        now: Cell<u64>,
        reads: Cell<u32>,
    }

    impl Counting {
        fn new(now: u64) -> Self {
            Self {
                now: Cell::new(now),
                reads: Cell::new(0),
            }
        }

        /// Reads since the last call.
        fn take_reads(&self) -> u32 {
            self.reads.replace(0)
        }
    }

    impl Clock for &Counting {
        fn now_ns(&self) -> u64 {
            self.reads.set(self.reads.get() + 1);
            self.now.get()
        }
    }

    #[test]
    fn clock_is_read_only_when_needed() {
        for policy in Policy::ALL {
            for expiry in [0, 1_000_000] {
                let h = HostTags::new(1024, policy).unwrap();
                h.set_borrow_expiry_ns(expiry);
                let clock = Counting::new(1_000);
                let qs = [QueueTags::new(0), QueueTags::new(1), QueueTags::new(2)];
                let hints = [AtomicU32::new(0), AtomicU32::new(16), AtomicU32::new(32)];
                // Uncounted setup: the Lend limits exist after two ticks.
                for (q, hint) in qs.iter().zip(&hints) {
                    let t = h.get(q, hint, 0).unwrap();
                    h.put(q, t, &qs, 0);
                }
                h.tick(&qs, 1);
                h.tick(&qs, 2);
                // Non-binding gets and puts, several queues active: the
                // budget (1024) never binds, nor does the fair share (342).
                let mut held = Vec::new();
                for round in 0..300 {
                    for (q, hint) in qs.iter().zip(&hints) {
                        held.push((h.get(q, hint, &clock).unwrap(), q));
                    }
                    if round % 3 == 2 {
                        for (t, q) in held.drain(..) {
                            assert_eq!(h.put(q, t, &qs, &clock), 0);
                        }
                    }
                    if round % 50 == 0 {
                        h.tick(&qs, 3 + round);
                    }
                }
                assert_eq!(h.active_queues(), 3);
                assert_eq!(h.limit(&qs[0], &clock), h.limit(&qs[0], 0));
                assert!(!h.is_contended(&clock));
                assert_eq!(
                    clock.take_reads(),
                    0,
                    "{policy:?} expiry {expiry}: fast path"
                );
                for (t, q) in held.drain(..) {
                    h.put(q, t, &qs, 0);
                }
                // Slow path: q1 is refused while below its fair share (the
                // budget is exhausted by q0 under `none`): the failure time
                // is recorded, the clock is read, once.
                h.set_policy(Policy::None);
                let all = take(&h, &qs[0], 1024, 0);
                h.set_policy(policy);
                assert_eq!(h.get(&qs[1], &hints[1], &clock), Err(Refusal::Exhausted));
                assert!(qs[1].is_starved());
                assert_eq!(
                    clock.take_reads(),
                    1,
                    "{policy:?} expiry {expiry}: slow path"
                );
                for t in all {
                    h.put(&qs[0], t, &qs, 0);
                }
            }
        }
    }

    #[test]
    fn borrow_reads_clock_only_in_expiry_window() {
        let h = HostTags::new(8, Policy::Borrow).unwrap();
        h.set_borrow_expiry_ns(1_000);
        let clock = Counting::new(0);
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let hint = AtomicU32::new(0);
        // A single active queue: no contention check at all.
        let held = take(&h, &q0, 8, 0);
        assert_eq!(h.limit(&q0, &clock), 8);
        assert_eq!(clock.take_reads(), 0);
        // q1 refused below its share at 1_000: recorded.
        clock.now.set(1_000);
        assert_eq!(h.get(&q1, &hint, &clock), Err(Refusal::Exhausted));
        assert_eq!(clock.take_reads(), 1);
        // q1 is handed out by these puts without a clock read: starved, it
        // keeps the host contended without one.
        for t in held {
            h.put(&q0, t, &[&q0, &q1], &clock);
        }
        assert_eq!(h.waiting_queues(), 0);
        assert_eq!(clock.take_reads(), 0);
        // Starved: contended without a clock read.
        let t = h.get(&q1, &hint, &clock).unwrap();
        assert!(h.is_contended(&clock));
        assert_eq!(clock.take_reads(), 0);
        // q1 drains: no longer starved, and its put reads no clock; until
        // the next tick starts the drain's window, a check needs none
        // either (q0 is refused at its share: not starved).
        h.put(&q1, t, &[&q0, &q1], &clock);
        assert_eq!(h.starved_queues(), 0);
        let mut held = take(&h, &q0, 4, 1_500);
        assert_eq!(h.get(&q0, &hint, &clock), Err(Refusal::Limited));
        assert_eq!(clock.take_reads(), 0);
        // In the window, from the tick on: the clock decides. A refusal
        // reads it at most twice: in the first attempt, and once in the
        // slow path (for its re-check here).
        h.tick(&[&q0, &q1], 1_500);
        clock.now.set(1_500);
        assert_eq!(h.get(&q0, &hint, &clock), Err(Refusal::Limited));
        assert_eq!(clock.take_reads(), 2);
        // A put that finds q0 waiting inside the window reads the clock
        // once, for its hand-off: q0 is below its share again.
        clock.now.set(1_600);
        let t = held.pop().unwrap();
        assert_eq!(h.put(&q0, t, &[&q0, &q1], &clock), 1);
        assert_eq!(clock.take_reads(), 1);
        held.push(h.get(&q0, &hint, 1_600).unwrap());
        clock.now.set(2_499);
        assert_eq!(h.limit(&q0, &clock), 4);
        assert_eq!(clock.take_reads(), 1);
        // After the window the first check forgets the refusal; later
        // checks need no clock.
        clock.now.set(2_500);
        held.push(h.get(&q0, &hint, &clock).unwrap());
        assert_eq!(clock.take_reads(), 1);
        for _ in 0..3 {
            held.push(h.get(&q0, &hint, &clock).unwrap());
        }
        assert!(!h.is_contended(&clock));
        assert_eq!(h.limit(&q0, &clock), 8);
        assert_eq!(clock.take_reads(), 0);
        for t in held {
            h.put(&q0, t, &[&q0, &q1], 0);
        }
    }

    /// A refusal at the end of time records a stamp, never the drain
    /// marker: a check finds its window over instead of waiting for a tick.
    #[test]
    fn a_stamp_is_never_the_drain_marker() {
        assert_eq!(stamp(0), 1);
        assert_eq!(stamp(DRAINED - 2), DRAINED - 1);
        assert_eq!(stamp(DRAINED - 1), DRAINED - 1);
        assert_eq!(stamp(u64::MAX), DRAINED - 1);
        let h = HostTags::new(8, Policy::Borrow).unwrap();
        h.set_idle_ns(0);
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let all = [&q0, &q1];
        let hint = AtomicU32::new(0);
        let t = h.get(&q1, &hint, 0).unwrap();
        h.put(&q1, t, &all, 0);
        let mut held = take(&h, &q0, 8, 0);
        let end = u64::MAX - 1;
        assert_eq!(h.get(&q1, &hint, end), Err(Refusal::Exhausted));
        // q1's bit is handed out, then it goes idle: no longer starved,
        // without a drain.
        assert_eq!(h.put(&q0, held.pop().unwrap(), &all, 0), 0b10);
        h.tick(&all, end);
        h.tick(&all, end);
        assert!(!q1.is_active() && h.starved_queues() == 0);
        assert!(!h.is_contended(u64::MAX), "the refusal's window is over");
    }

    /// `limit` is a read: a window found over is not forgotten (the limit
    /// cache keeps the fair share), a drain's marker is not stamped.
    #[test]
    fn limit_reads_without_changing_anything() {
        let h = HostTags::new(64, Policy::Borrow).unwrap();
        h.set_borrow_expiry_ns(100);
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let all = [&q0, &q1];
        let hint = AtomicU32::new(0);
        let mut held = starve_q1(&h, &q0, &q1, &hint);
        h.put(&q0, held.pop().unwrap(), &all, 10);
        let t = h.get(&q1, &hint, 10).unwrap();
        h.put(&q1, t, &all, 10);
        // The drain awaits its tick, whatever the time of the read.
        assert_eq!(h.limit(&q0, 1_000), 32);
        h.tick(&all, 20);
        // From the tick on, for 100 ns.
        assert_eq!(h.limit(&q0, 119), 32);
        assert_eq!(h.limit(&q0, 120), 64);
        assert_eq!(h.limit_bound(), 32, "a read lifted the limit cache");
        assert_eq!(h.limit(&q0, 119), 32, "a read forgot the window");
        assert!(!h.is_contended(120));
        assert_eq!(h.limit_bound(), u32::MAX);
        for t in held {
            h.put(&q0, t, &all, 120);
        }
    }

    /// A `Window` host of `depth` tags with `queues` queues, all active and
    /// laid out by a tick (busy, so that the tick keeps them).
    fn windowed(depth: u32, pct: u32, queues: u32) -> (HostTags, Vec<QueueTags>) {
        let h = HostTags::new(depth, Policy::Window).unwrap();
        h.set_shared_pct(pct).unwrap();
        let qs: Vec<QueueTags> = (0..queues).map(QueueTags::new).collect();
        let hint = AtomicU32::new(0);
        for q in &qs {
            let t = h.get(q, &hint, 0).unwrap();
            h.put(q, t, &qs, 0);
        }
        h.tick(&qs, 1);
        (h, qs)
    }

    #[test]
    fn window_places_tags_in_window_then_shared_part() {
        // 64 tags, 25% shared: 16 shared, windows of 24, each with a slice
        // of 8 shared tags.
        let (h, qs) = windowed(64, 25, 2);
        assert_eq!(h.window(&qs[0]), Some(0..24));
        assert_eq!(h.window(&qs[1]), Some(24..48));
        assert_eq!(h.window_layout().shared(), 48..64);
        assert_eq!(h.shared_slice(&qs[0]), 48..56);
        assert_eq!(h.shared_slice(&qs[1]), 56..64);
        assert_eq!(h.limit(&qs[0], 0), 32);
        assert_eq!(h.limit_bound(), 0, "no fast path under window");
        let hint = AtomicU32::new(5);
        let mut mine = Vec::new();
        for i in 0..32 {
            let t = h.get(&qs[0], &hint, 0).unwrap();
            let expected = if i < 24 { 0..24 } else { 48..56 };
            assert!(expected.contains(&t), "allocation {i}: tag {t}");
            mine.push(t);
        }
        // Its part is full: refused although queue 1's window and slice
        // are free.
        assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Limited));
        assert_eq!(h.in_use(), 32);
        // Queue 1 has its whole window and slice, and nothing else.
        let theirs = take(&h, &qs[1], 32, 0);
        assert!(theirs
            .iter()
            .all(|t| (24..48).contains(t) || (56..64).contains(t)));
        assert_eq!(h.get(&qs[1], &hint, 0), Err(Refusal::Limited));
        assert_eq!(h.waiter_mask(), 0b11);
        for t in theirs {
            h.put(&qs[1], t, &qs, 0);
        }
        for t in mine {
            h.put(&qs[0], t, &qs, 0);
        }
        assert_eq!(h.in_use(), 0);
    }

    #[test]
    fn window_hands_a_tag_to_the_queues_that_can_use_it() {
        let (h, qs) = windowed(64, 25, 3);
        let w: Vec<Range<u32>> = qs.iter().map(|q| h.window(q).unwrap()).collect();
        assert_eq!(w, [0..16, 16..32, 32..48]);
        let s: Vec<Range<u32>> = qs.iter().map(|q| h.shared_slice(q)).collect();
        assert_eq!(s, [48..54, 53..59, 58..64]);
        let hint = AtomicU32::new(0);
        // Every queue fills its part (tags 53 and 58 go to whoever asks
        // first: queue 0 takes 53, queue 1 takes 58).
        let q0 = take(&h, &qs[0], 22, 0);
        let q1 = take(&h, &qs[1], 21, 0);
        let q2 = take(&h, &qs[2], 21, 0);
        assert!(q0[16..].iter().all(|t| (48..54).contains(t)));
        assert!(q1[16..].iter().all(|t| (53..59).contains(t)));
        assert!(q1.contains(&58) && !q1.contains(&53));
        assert_eq!(h.in_use(), 64);
        assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Limited));
        assert_eq!(h.waiter_mask(), 0b001);
        // A tag of queue 1's window: nobody else may use it, queue 0 keeps
        // waiting (its bit stays for a tag it can use).
        assert_eq!(h.put(&qs[1], q1[0], &qs, 0), 0);
        assert_eq!(h.waiter_mask(), 0b001);
        // Queue 1 refused too (taking its own tag back first).
        assert_eq!(h.get(&qs[1], &hint, 0), Ok(q1[0]));
        assert_eq!(h.get(&qs[1], &hint, 0), Err(Refusal::Limited));
        assert_eq!(h.waiter_mask(), 0b011);
        // A tag of queue 0's window goes to queue 0 alone.
        assert_eq!(h.put(&qs[0], q0[3], &qs, 0), 0b001);
        assert_eq!(h.waiter_mask(), 0b010);
        assert_eq!(h.get(&qs[0], &hint, 0), Ok(q0[3]));
        assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Limited));
        // A shared tag goes to the queues whose slice holds it: 53 to
        // queues 0 and 1, 50 to queue 0 alone.
        assert_eq!(h.put(&qs[0], 53, &qs, 0), 0b011);
        assert_eq!(h.get(&qs[1], &hint, 0), Ok(53));
        assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Limited));
        assert_eq!(h.get(&qs[1], &hint, 0), Err(Refusal::Limited));
        assert_eq!(h.put(&qs[0], 50, &qs, 0), 0b001);
        assert_eq!(h.waiter_mask(), 0b010);
        // Queue 2's window tag with queue 2 not waiting: nobody to wake.
        assert_eq!(h.put(&qs[2], q2[0], &qs, 0), 0);
        assert_eq!(h.waiter_mask(), 0b010);
    }

    #[test]
    fn window_lone_queue_uses_everything() {
        for pct in [0, 10, 100] {
            let (h, qs) = windowed(40, pct, 1);
            assert_eq!(h.limit(&qs[0], 0), 40);
            let all = take(&h, &qs[0], 40, 0);
            let hint = AtomicU32::new(0);
            assert_eq!(h.get(&qs[0], &hint, 0), Err(Refusal::Exhausted));
            for t in all {
                h.put(&qs[0], t, &qs, 0);
            }
        }
    }

    #[test]
    fn window_ticks_hand_back_the_waiters_when_windows_move() {
        let (h, mut qs) = windowed(32, 0, 1);
        h.set_idle_ns(100);
        assert_eq!(h.window(&qs[0]), Some(0..32));
        let hint = AtomicU32::new(0);
        let held = take(&h, &qs[0], 32, 2);
        // A new queue has no window until the next tick, and with nothing
        // shared no tag at all: it waits for the tick.
        qs.push(QueueTags::new(1));
        assert_eq!(h.get(&qs[1], &hint, 3), Err(Refusal::Limited));
        assert_eq!(h.window(&qs[1]), None);
        assert_eq!(h.limit(&qs[1], 3), 0);
        assert_eq!(h.waiter_mask(), 0b10);
        assert_eq!(h.tick(&qs, 4), 0b10, "the windows moved");
        assert_eq!(h.window(&qs[1]), Some(16..32));
        // Its window's tags, held by queue 0, are handed to it.
        assert_eq!(h.get(&qs[1], &hint, 5), Err(Refusal::Limited));
        let theirs = *held.iter().find(|t| (16..32).contains(*t)).unwrap();
        assert_eq!(h.put(&qs[0], theirs, &qs, 0), 0b10);
        assert_eq!(h.get(&qs[1], &hint, 6), Ok(theirs));
        // A stable layout hands nothing back.
        assert_eq!(h.get(&qs[1], &hint, 6), Err(Refusal::Limited));
        assert_eq!(h.tick(&qs, 7), 0);
        assert_eq!(h.waiter_mask(), 0b10);
        // Queue 1 idles out: the windows move again.
        h.put(&qs[1], theirs, &qs, 0);
        for &t in &held {
            if t != theirs {
                h.put(&qs[0], t, &qs, 0);
            }
        }
        assert_eq!(h.waiter_mask(), 0, "queue 1 was handed out by a put");
        assert_eq!(h.tick(&qs, 8), 0);
        assert_eq!(h.tick(&qs, 200), 0, "nobody waits: nothing to hand out");
        assert!(!qs[1].is_active() && !qs[0].is_active());
        assert_eq!(h.window_layout().windows, 0);
        // Other policies' ticks never hand out.
        h.set_policy(Policy::Fair);
        assert_eq!(h.get(&qs[0], &hint, 300).map(|_| ()), Ok(()));
        assert_eq!(h.tick(&qs, 301), 0);
    }

    #[test]
    fn window_settings() {
        let h = HostTags::new(64, Policy::Fair).unwrap();
        assert_eq!(h.shared_pct(), crate::window::DEFAULT_SHARED_PCT);
        assert_eq!(h.set_shared_pct(101), Err(Error::InvalidPercent));
        assert_eq!(h.shared_pct(), crate::window::DEFAULT_SHARED_PCT);
        h.set_shared_pct(0).unwrap();
        h.set_shared_pct(100).unwrap();
        assert_eq!(h.shared_pct(), 100);
        // take_waiters takes every bit, once.
        let q = QueueTags::new(3);
        let all = take(&h, &q, 64, 0);
        assert_eq!(h.get(&q, &AtomicU32::new(0), 0), Err(Refusal::Exhausted));
        assert_eq!(h.take_waiters(), 0b1000);
        assert_eq!(h.take_waiters(), 0);
        for t in all {
            assert_eq!(h.put(&q, t, &[&q], 0), 0);
        }
        // Switching to window starts without windows.
        let (h, qs) = windowed(64, 10, 2);
        assert_eq!(h.window_layout().windows, 2);
        h.set_policy(Policy::None);
        h.set_policy(Policy::Window);
        assert_eq!(h.window_layout().windows, 0);
        assert_eq!(h.limit(&qs[0], 0), 64);
        h.tick(&qs, 2);
        assert_eq!(h.window_layout().windows, 2);
    }

    #[test]
    fn lend_moves_tags_to_the_refused_queue() {
        let h = HostTags::new(64, Policy::Lend).unwrap();
        let q0 = QueueTags::new(0);
        let q1 = QueueTags::new(1);
        let all = [&q0, &q1];
        let hint = AtomicU32::new(0);
        let t = h.get(&q0, &hint, 0).unwrap();
        let mut held = take(&h, &q1, 32, 0);
        // First tick establishes the fair baseline.
        h.tick(&all, 1);
        assert_eq!(h.limit(&q0, 1), 32);
        assert_eq!(h.limit(&q1, 1), 32);
        let mut expected_q0: u32 = 32;
        for round in 0..10 {
            // q1 is refused (at its limit) each round.
            assert!(h.get(&q1, &hint, 2).is_err());
            h.tick(&all, 2);
            expected_q0 = expected_q0.saturating_sub(8).max(LEND_RESERVE);
            assert_eq!(h.limit(&q0, 2), expected_q0, "round {round}");
            assert_eq!(h.limit(&q1, 2), 64 - expected_q0);
            while let Ok(t) = h.get(&q1, &hint, 2) {
                held.push(t);
            }
        }
        assert_eq!(h.limit(&q0, 3), 4);
        assert_eq!(held.len(), 60);
        // q1 still waits (its last get was refused), which counts as
        // refused at every tick: a put hands it out, its wait ends with a
        // tag.
        assert!(q1.is_waiting());
        h.tick(&all, 3);
        assert_eq!(h.limit(&q0, 3), 4, "a waiting queue borrows");
        assert_eq!(h.put(&q1, held.pop().unwrap(), &all, 3), 0b10);
        held.push(h.get(&q1, &hint, 3).unwrap());
        assert!(!q1.is_waiting());
        // Nobody fails or waits any more: limits drift back to fair.
        for _ in 0..5 {
            h.tick(&all, 4);
        }
        assert_eq!(h.limit(&q0, 4), 32);
        assert_eq!(h.limit(&q1, 4), 32);
        // Switching policy drops the lend limits.
        h.set_policy(Policy::None);
        assert_eq!(h.limit(&q0, 5), 64);
        h.put(&q0, t, &[&q0, &q1], 0);
        for t in held {
            h.put(&q1, t, &[&q0, &q1], 0);
        }
        assert_eq!(h.in_use(), 0);
    }

    /// Queues refused alike share alike: neither is lent the other's tags
    /// (the old "busiest" rule lent the first of them all but the other's
    /// reserve, tick after tick); a queue not refused lends to them.
    #[test]
    fn lend_splits_between_the_refused_queues() {
        let h = HostTags::new(64, Policy::Lend).unwrap();
        let qs: Vec<QueueTags> = (0..3).map(QueueTags::new).collect();
        let hint = AtomicU32::new(0);
        let mut held: Vec<Vec<u32>> = qs.iter().map(|q| take(&h, q, 1, 0)).collect();
        h.tick(&qs, 1);
        h.tick(&qs, 2);
        assert_eq!(
            qs.iter().map(|q| h.limit(q, 2)).collect::<Vec<_>>(),
            [22; 3]
        );
        for round in 0..8 {
            // Queues 0 and 1 fill their limits and are refused, queue 2 is
            // not (it holds its one tag).
            for (q, mine) in qs.iter().zip(&mut held).take(2) {
                while let Ok(t) = h.get(q, &hint, 3) {
                    mine.push(t);
                }
            }
            h.tick(&qs, 3);
            let limits: Vec<u32> = qs.iter().map(|q| h.limit(q, 3)).collect();
            // Queue 2 lends 5 a tick down to its reserve; queues 0 and 1
            // split the rest, ceil((64 - lent) / 2).
            let lent = 22u32.saturating_sub(5 * (round + 1)).max(LEND_RESERVE);
            assert_eq!(
                limits,
                [(64 - lent).div_ceil(2), (64 - lent).div_ceil(2), lent],
                "round {round}"
            );
            // Give back what is over the new limits.
            for (q, mine) in qs.iter().zip(&mut held) {
                while q.in_flight() > h.limit(q, 3) {
                    h.put(q, mine.pop().unwrap(), &qs, 0);
                }
            }
        }
        assert_eq!(h.limit(&qs[0], 4), 30);
        // Queue 1 stops asking (its wait ends with a tag): queue 0 alone is
        // refused and lent queue 1's tags, stepwise.
        for (q, mine) in qs.iter().zip(&mut held).skip(1) {
            while mine.len() > 1 {
                h.put(q, mine.pop().unwrap(), &qs, 0);
            }
        }
        held[1].push(h.get(&qs[1], &hint, 4).unwrap());
        assert!(!qs[1].is_waiting());
        let mut expected_q1 = 30u32;
        for round in 0..8 {
            while let Ok(t) = h.get(&qs[0], &hint, 5) {
                held[0].push(t);
            }
            h.tick(&qs, 5);
            expected_q1 = expected_q1.saturating_sub(5).max(LEND_RESERVE);
            assert_eq!(h.limit(&qs[1], 5), expected_q1, "round {round}");
            assert_eq!(h.limit(&qs[0], 5), 64 - expected_q1 - LEND_RESERVE);
        }
        assert_eq!(h.limit(&qs[0], 6), 56);
        for (q, mine) in qs.iter().zip(held) {
            for t in mine {
                h.put(q, t, &qs, 0);
            }
        }
        assert_eq!(h.in_use(), 0);
    }

    /// A borrower is a borrower wherever it stands in the tick's slice,
    /// also past the 64th queue (the waiter mask's width).
    #[test]
    fn lend_sees_refusals_beyond_64_queues() {
        let h = HostTags::new(1024, Policy::Lend).unwrap();
        let qs: Vec<QueueTags> = (0..70).map(QueueTags::new).collect();
        let hint = AtomicU32::new(0);
        let mut held: Vec<Vec<u32>> = qs.iter().map(|q| take(&h, q, 1, 0)).collect();
        h.tick(&qs, 1);
        h.tick(&qs, 2);
        let fair = fair_share(1024, 70);
        assert_eq!(h.limit(&qs[69], 2), fair);
        while let Ok(t) = h.get(&qs[69], &hint, 3) {
            held[69].push(t);
        }
        h.tick(&qs, 3);
        // The 69 others lend a step each (fair - fair / 4), queue 69 is
        // lent the rest.
        let lent = 69 * (fair - fair / 4);
        assert_eq!(h.limit(&qs[69], 3), 1024 - lent);
        assert_eq!(h.limit(&qs[0], 3), fair - fair / 4);
        for (q, mine) in qs.iter().zip(held) {
            for t in mine {
                h.put(q, t, &qs, 3);
            }
        }
    }

    /// A lender refused climbs back by a step, not to the borrowers' even
    /// split; a lender keeps what it holds.
    #[test]
    fn lend_a_refused_lender_climbs_back_stepwise() {
        let h = HostTags::new(32, Policy::Lend).unwrap();
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let all = [&q0, &q1];
        let hint = AtomicU32::new(0);
        let mut mine = take(&h, &q1, 1, 0);
        let mut theirs = take(&h, &q0, 1, 0);
        h.tick(&all, 1);
        h.tick(&all, 2);
        // q0 is refused every tick, q1 lends down to its reserve (4).
        for now in 3..6 {
            while let Ok(t) = h.get(&q0, &hint, now) {
                theirs.push(t);
            }
            h.tick(&all, now);
        }
        assert_eq!((h.limit(&q0, 6), h.limit(&q1, 6)), (28, 4));
        // q1 wants 6: refused at 4, it gets a step more (8), not half the
        // budget; q0, refused too, the rest.
        while theirs.len() > 24 {
            h.put(&q0, theirs.pop().unwrap(), &all, 6);
        }
        while let Ok(t) = h.get(&q1, &hint, 7) {
            mine.push(t);
        }
        assert_eq!(mine.len(), 4);
        while let Ok(t) = h.get(&q0, &hint, 7) {
            theirs.push(t);
        }
        h.tick(&all, 7);
        assert_eq!((h.limit(&q0, 7), h.limit(&q1, 7)), (24, 8));
        while theirs.len() > 24 {
            h.put(&q0, theirs.pop().unwrap(), &all, 7);
        }
        // q1 holds 6 and is not refused: it lends, but not what it holds.
        mine.extend(take(&h, &q1, 2, 8));
        while let Ok(t) = h.get(&q0, &hint, 8) {
            theirs.push(t);
        }
        h.tick(&all, 8);
        assert_eq!((h.limit(&q0, 8), h.limit(&q1, 8)), (26, 6));
        for t in mine {
            h.put(&q1, t, &all, 8);
        }
        for t in theirs {
            h.put(&q0, t, &all, 8);
        }
    }

    /// The limit cache holds the bound of the current state.
    fn assert_fresh(h: &HostTags) {
        assert_eq!(h.limit_bound(), h.current_bound(), "stale limit cache");
    }

    /// Every change of an input of the bound refreshes it.
    #[test]
    fn limit_cache_follows_changes() {
        let h = HostTags::new(64, Policy::None).unwrap();
        h.set_idle_ns(0);
        let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
        let all = [&q0, &q1];
        let hint = AtomicU32::new(0);
        assert_eq!(h.limit_bound(), u32::MAX);
        let t0 = h.get(&q0, &hint, 0).unwrap();
        let t1 = h.get(&q1, &hint, 0).unwrap();
        assert_eq!(h.limit_bound(), u32::MAX, "none: no limit");
        // Policy switch.
        h.set_policy(Policy::Fair);
        assert_eq!(h.limit_bound(), 32);
        // Resize.
        h.set_depth(16).unwrap();
        assert_eq!(h.limit_bound(), 8);
        h.set_depth(4).unwrap();
        assert_eq!(h.limit_bound(), u32::MAX, "fair share = depth");
        h.set_depth(64).unwrap();
        assert_eq!(h.limit_bound(), 32);
        // Deactivation by the tick (after the tick that consumes the busy
        // flag), then activation by a get.
        h.put(&q1, t1, &[&q0, &q1], 0);
        h.tick(&all, 1);
        assert_eq!(h.limit_bound(), 32);
        h.tick(&all, 2);
        assert!(!q1.is_active() && q0.is_active());
        assert_eq!(h.limit_bound(), u32::MAX, "one active queue");
        let t1 = h.get(&q1, &hint, 3).unwrap();
        assert_eq!(h.limit_bound(), 32, "activation");
        assert_fresh(&h);

        // Borrow: contention starts with a refusal below the fair share
        // and, without an expiry, ends with the drain of the starved queue.
        h.set_borrow_expiry_ns(0);
        h.set_policy(Policy::Borrow);
        assert_eq!(h.limit_bound(), u32::MAX, "not contended");
        h.put(&q1, t1, &[&q0, &q1], 0);
        let held = take(&h, &q0, 63, 4);
        assert_eq!(h.get(&q1, &hint, 5), Err(Refusal::Exhausted));
        assert!(q1.is_starved());
        assert_eq!(h.limit_bound(), 32, "contended");
        h.put(&q0, held[0], &[&q0, &q1], 0);
        let t1 = h.get(&q1, &hint, 6).unwrap();
        h.put(&q1, t1, &[&q0, &q1], 0);
        assert!(!q1.is_starved());
        assert_eq!(h.limit_bound(), u32::MAX, "drained");
        // A change of the expiry forgets the refusal at 5.
        h.set_borrow_expiry_ns(100);
        assert_eq!(h.limit_bound(), u32::MAX, "expiry set: nothing recorded");
        // A refusal with an expiry counts until an exact check finds its
        // window over; the starved queue's drain counts until the next
        // tick (150) starts a window of its own.
        let t = h.get(&q0, &hint, 107).unwrap();
        assert_eq!(h.get(&q1, &hint, 110), Err(Refusal::Exhausted));
        h.put(&q0, t, &[&q0, &q1], 0);
        let t1 = h.get(&q1, &hint, 111).unwrap();
        h.put(&q1, t1, &[&q0, &q1], 0);
        assert_eq!(h.limit_bound(), 32, "in the window");
        assert!(h.is_contended(1_000), "the drain awaits its tick");
        h.tick(&all, 150);
        assert_eq!(h.limit_bound(), 32);
        assert!(h.is_contended(249));
        assert!(!h.is_contended(250));
        assert_eq!(h.limit_bound(), u32::MAX, "window over");
        // A refusal recorded with an expiry of 0 does not count, nor after
        // an expiry is set.
        h.set_borrow_expiry_ns(0);
        let t = h.get(&q0, &hint, 220).unwrap();
        assert_eq!(h.get(&q1, &hint, 220), Err(Refusal::Exhausted));
        h.put(&q0, t, &[&q0, &q1], 0);
        let t1 = h.get(&q1, &hint, 221).unwrap();
        h.put(&q1, t1, &[&q0, &q1], 0);
        assert_eq!(h.limit_bound(), u32::MAX);
        h.set_borrow_expiry_ns(1_000);
        assert_eq!(h.limit_bound(), u32::MAX, "expiry set: forgotten");
        // A policy change forgets a drain's marker.
        let t = h.get(&q0, &hint, 230).unwrap();
        assert_eq!(h.get(&q1, &hint, 230), Err(Refusal::Exhausted));
        h.put(&q0, t, &all, 230);
        let t1 = h.get(&q1, &hint, 231).unwrap();
        h.put(&q1, t1, &all, 231);
        assert_eq!(h.limit_bound(), 32, "the drain's marker");
        h.set_policy(Policy::Borrow);
        assert_eq!(h.limit_bound(), u32::MAX, "policy set: forgotten");
        h.set_borrow_expiry_ns(0);
        assert_fresh(&h);

        // Lend: the fair share until the limits exist, then at most the
        // smallest lend limit; a switch away drops them.
        for &t in &held[1..] {
            h.put(&q0, t, &[&q0, &q1], 0);
        }
        h.set_idle_ns(1_000_000);
        h.set_policy(Policy::Lend);
        assert_eq!(h.limit_bound(), 32);
        h.tick(&all, 200);
        h.tick(&all, 201);
        assert_eq!((q0.lend_limit(), q1.lend_limit()), (32, 32));
        assert_eq!(h.limit_bound(), 32);
        // q1 is refused at its limit; the next tick lends it 8 of q0's.
        let mut mine = take(&h, &q1, 32, 202);
        assert_eq!(h.get(&q1, &hint, 202), Err(Refusal::Limited));
        h.tick(&all, 203);
        assert_eq!((q0.lend_limit(), q1.lend_limit()), (24, 40));
        assert_eq!(h.limit_bound(), 24, "smallest lend limit");
        assert_fresh(&h);
        // q1 above the bound: the exact check lets it use its lend limit.
        for _ in 0..8 {
            mine.push(h.get(&q1, &hint, 204).unwrap());
        }
        assert_eq!(h.get(&q1, &hint, 204), Err(Refusal::Limited));
        h.set_policy(Policy::Fair);
        assert_eq!(h.limit_bound(), 32);
        h.set_policy(Policy::None);
        assert_eq!(h.limit_bound(), u32::MAX);
        for t in mine {
            h.put(&q1, t, &[&q0, &q1], 0);
        }
        h.put(&q0, t0, &[&q0, &q1], 0);
        assert_eq!(h.in_use(), 0);
        assert_fresh(&h);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Get(usize),
        Put(usize),
        Tick(u64),
        Depth(u32),
        Policy(u32),
        Expiry(u64),
        Contended(u64),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            8 => (0usize..3).prop_map(Op::Get),
            6 => any::<usize>().prop_map(Op::Put),
            2 => (0u64..50).prop_map(Op::Tick),
            1 => (1u32..=40).prop_map(Op::Depth),
            1 => (0u32..5).prop_map(Op::Policy),
            1 => prop_oneof![Just(0u64), 1u64..100].prop_map(Op::Expiry),
            1 => (0u64..100).prop_map(Op::Contended),
        ]
    }

    proptest::proptest! {
        /// After every operation the limit cache holds the bound of the
        /// current state, and a queue below the bound is not limited.
        #[test]
        fn limit_cache_is_fresh_and_sound(ops in proptest::collection::vec(op(), 1..200)) {
            let h = HostTags::new(24, Policy::Fair).unwrap();
            h.set_idle_ns(20);
            let qs = [QueueTags::new(0), QueueTags::new(1), QueueTags::new(2)];
            let refs = [&qs[0], &qs[1], &qs[2]];
            let hints = [AtomicU32::new(0), AtomicU32::new(1), AtomicU32::new(2)];
            let mut held: Vec<(u32, usize)> = Vec::new();
            let mut now = 0u64;
            for op in ops {
                now += 1;
                match op {
                    Op::Get(i) => {
                        if let Ok(t) = h.get(&qs[i], &hints[i], now) {
                            held.push((t, i));
                        }
                    }
                    Op::Put(i) => {
                        if !held.is_empty() {
                            let (t, qi) = held.swap_remove(i % held.len());
                            h.put(&qs[qi], t, &qs, 0);
                        }
                    }
                    Op::Tick(dt) => {
                        now += dt;
                        h.tick(&refs, now);
                    }
                    Op::Depth(d) => h.set_depth(d).unwrap(),
                    Op::Policy(p) => h.set_policy(Policy::from_u32(p).unwrap()),
                    Op::Expiry(e) => h.set_borrow_expiry_ns(e),
                    Op::Contended(dt) => {
                        h.is_contended(now + dt);
                    }
                }
                proptest::prop_assert_eq!(h.limit_bound(), h.current_bound(), "stale after {:?}", op);
                let depth = h.depth();
                for q in &qs {
                    let f = q.in_flight();
                    if f < h.limit_bound() {
                        proptest::prop_assert!(
                            !h.limited(q, depth, h.policy(), &now),
                            "below the bound {} but limited ({:?})", h.limit_bound(), op
                        );
                    }
                }
            }
        }
    }
}
