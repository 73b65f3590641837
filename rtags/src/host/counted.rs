//! The host's counters of flagged queues: `active_queues` and the starved
//! count, each paired with a flag of the queue's flags word (see
//! "Counters" in [`super::super::design`]).

use super::super::queue::QueueTags;
use super::super::sync::{AtomicU32, Ordering};

/// Sets the counted flag `flag` of `q`, together with the uncounted flags
/// `also`: counter first, then flag (see "Counters" in the design notes).
/// Returns whether the counter was modified (the caller then refreshes the
/// limit cache, even after an undo: a refresh may have seen the transient
/// value).
pub(super) fn set_counted(q: &QueueTags, flag: u32, also: u32, count: &AtomicU32) -> bool {
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
/// "Counters" in the design notes). Returns whether the counter was
/// decremented (the caller then refreshes the limit cache).
pub(super) fn clear_counted(q: &QueueTags, flag: u32, count: &AtomicU32) -> bool {
    // Relaxed: fast path (nothing to clear); may miss a concurrent set,
    // which then stays counted until the next clear (design notes).
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
