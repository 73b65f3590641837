//! Per request-queue (per disk) accounting for the shared host tag budget.
//!
//! A [`QueueTags`] is owned by the driver next to each request queue and is
//! passed to every [`super::host::HostTags`] call made on behalf of that
//! queue. All fields are atomics updated by the host; the driver only reads
//! them (for sysfs) through the getters below.
//!
//! The per-queue flags (active, busy, waiting, watched, starved) share one atomic
//! word, so that the allocation fast path checks the ones it cares about
//! with a single load and compare: those are in the low byte
//! (`FAST_PATH_FLAGS`), the marks that do not matter to it (starved,
//! denied, borrower) above. The word is only ever modified by RMWs (`fetch_or` / `fetch_and`),
//! never by plain stores, so that concurrent updates of different flags
//! cannot erase each other, and so that every modification continues the
//! release sequence of the `Release` RMW that set a counted flag (see
//! "Counters" in [`super::design`]). The structure is cache-line aligned:
//! each queue's hot fields (`state`, `in_flight`) sit in a line of their
//! own, so queues stored side by side (e.g. in a vector) do not bounce
//! lines between their CPUs.

use super::sync::{AtomicU32, AtomicU64, Ordering};

/// Flag: counted in the host's `active_queues`.
pub(super) const ACTIVE: u32 = 1;
/// Flag: allocated since the last host tick, or held tags at that tick.
pub(super) const BUSY: u32 = 1 << 1;
/// Flag: refused and not yet successful since (informational).
pub(super) const WAITING: u32 = 1 << 2;
/// Flag: the caller watches the queue's next tag
/// ([`QueueTags::watch_next_grant`]): in [`FAST_PATH_FLAGS`], so that the
/// allocation that takes it leaves the fast path and tells the caller.
pub(super) const WATCHED: u32 = 1 << 3;
/// Flag: refused below its fair share and since then neither drained to
/// zero in flight, nor idle, nor found by a tick holding its fair share
/// without such a refusal in the tick's period; counted in the host's
/// starved count. Outside [`FAST_PATH_FLAGS`].
pub(super) const STARVED: u32 = 1 << 8;
/// Flag: refused below its fair share (the refusal that marks
/// [`STARVED`]) since the last host tick, which takes it. Outside
/// [`FAST_PATH_FLAGS`].
pub(super) const DENIED: u32 = 1 << 9;
/// Flag: a borrower of the last `Lend` tick (refused in the period before
/// it) that shares what the others leave, rather than climbing back from
/// below its fair share (see [`super::policy::lend`]); written by that
/// tick only. Outside [`FAST_PATH_FLAGS`].
pub(super) const BORROWER: u32 = 1 << 10;
/// Flag: activated at least once; counted in the host's joined queues and
/// never cleared. Outside [`FAST_PATH_FLAGS`].
pub(super) const JOINED: u32 = 1 << 11;

/// [`QueueTags::window_slot`] of a queue without a window.
pub(super) const NO_WINDOW: u32 = u32::MAX;

/// The flags that decide whether an allocation can take the fast path
/// (active, busy, neither waiting nor watched): the low byte, so that the check is one
/// byte compare (`state & FAST_PATH_FLAGS == ACTIVE | BUSY`).
pub(super) const FAST_PATH_FLAGS: u32 = 0xff;

/// Tag accounting of one request queue.
#[repr(align(64))]
pub struct QueueTags {
    /// Caller-assigned index; bit `index % 64` in the host waiter mask.
    pub(super) index: AtomicU32,
    /// Flags: [`ACTIVE`], [`BUSY`], [`WAITING`], [`WATCHED`], [`STARVED`],
    /// [`DENIED`], [`BORROWER`], [`JOINED`] (RMW only).
    pub(super) state: AtomicU32,
    /// Tags currently held by this queue.
    pub(super) in_flight: AtomicU32,
    /// Limit computed by the `Lend` policy tick (0 = not set).
    pub(super) lend_limit: AtomicU32,
    /// The window this queue owns under the `Window` policy ([`NO_WINDOW`]:
    /// none). Written by the host tick only (see [`super::policy::window`]).
    pub(super) window_slot: AtomicU32,
    /// Number of `get` calls that returned a refusal.
    pub(super) failures: AtomicU64,
    /// Failure count seen by the previous `Lend` tick.
    pub(super) failures_seen: AtomicU64,
    /// Time of the last host tick that found the queue busy (caller's
    /// monotonic clock, ns). Written by the tick only.
    pub(super) last_active_ns: AtomicU64,
}

impl QueueTags {
    /// Creates the accounting for queue number `index` (inactive, idle).
    pub fn new(index: u32) -> Self {
        Self {
            index: AtomicU32::new(index),
            state: AtomicU32::new(0),
            in_flight: AtomicU32::new(0),
            lend_limit: AtomicU32::new(0),
            window_slot: AtomicU32::new(NO_WINDOW),
            failures: AtomicU64::new(0),
            failures_seen: AtomicU64::new(0),
            last_active_ns: AtomicU64::new(0),
        }
    }

    /// The caller-assigned index of this queue.
    pub fn index(&self) -> u32 {
        // Relaxed: set once at creation, never changed.
        self.index.load(Ordering::Relaxed)
    }

    /// This queue's bit in the host waiter mask: `1 << (index % 64)`.
    pub fn waiter_bit(&self) -> u64 {
        1u64.wrapping_shl(self.index() % 64)
    }

    /// Number of tags currently held by this queue.
    pub fn in_flight(&self) -> u32 {
        // Relaxed: statistics (the policy check uses its own reads).
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Total number of `get` calls of this queue that were refused.
    pub fn failures(&self) -> u64 {
        // Relaxed: statistics only.
        self.failures.load(Ordering::Relaxed)
    }

    /// Current flags (a snapshot).
    fn flags(&self) -> u32 {
        // Relaxed: statistics only.
        self.state.load(Ordering::Relaxed)
    }

    /// Whether this queue is counted in the host's active queues.
    pub fn is_active(&self) -> bool {
        self.flags() & ACTIVE != 0
    }

    /// Whether this queue allocated since the last host tick, or held tags
    /// at that tick (then it counts as busy until the next tick too).
    pub fn is_busy(&self) -> bool {
        self.flags() & BUSY != 0
    }

    /// Whether this queue was refused and has not allocated since.
    pub fn is_waiting(&self) -> bool {
        // Wake-ups use the host waiter mask, not this flag.
        self.flags() & WAITING != 0
    }

    /// Whether this queue is starved: refused below its fair share, and
    /// since then neither drained, nor idle, nor found by a tick holding its
    /// fair share without another such refusal.
    pub fn is_starved(&self) -> bool {
        self.flags() & STARVED != 0
    }

    /// Time (caller's clock, ns) of the last host tick that found this
    /// queue busy: the queue's last get or put is at most one tick period
    /// earlier (and never later).
    pub fn last_active_ns(&self) -> u64 {
        // Relaxed: idle detection heuristic only.
        self.last_active_ns.load(Ordering::Relaxed)
    }

    /// Limit assigned by the last `Lend` tick (0 = none, fair share used).
    pub fn lend_limit(&self) -> u32 {
        // Relaxed: advisory limit.
        self.lend_limit.load(Ordering::Relaxed)
    }

    /// The window assigned to this queue by the last `Window` tick, if any
    /// (a snapshot; the host's layout says which tags it covers).
    pub fn window_slot(&self) -> Option<u32> {
        // Relaxed: statistics; the policy uses its own reads.
        match self.window_slot.load(Ordering::Relaxed) {
            NO_WINDOW => None,
            slot => Some(slot),
        }
    }

    /// Makes the queue's next successful [`super::host::HostTags::get_watching`]
    /// call its `on_watched` (once). A caller that measures something up to
    /// the queue's next tag (rnull: how long a refused queue waits) watches
    /// for it without a check of its own on every allocation: the flag
    /// keeps that allocation off the fast path. The next tag is the first
    /// one that an allocation starting after this call takes; one that
    /// raced with it may take a tag without reporting it.
    pub fn watch_next_grant(&self) {
        // Release, and an RMW even if the flag is set (unlike `set_flags`):
        // the allocation that takes the flag (Acquire) sees what the caller
        // wrote before the watch, or the flag stays set for the next one. A
        // skipped RMW could let a taker of the old watch miss the new
        // write, and leave nothing watching for it.
        self.state.fetch_or(WATCHED, Ordering::Release);
    }

    /// Sets the uncounted `flags` (BUSY, WAITING, ...) unless all are set
    /// already: a load first keeps the line clean in the common case.
    pub(super) fn set_flags(&self, flags: u32) {
        // Relaxed (both): heuristic / informational flags; an RMW so that
        // concurrent updates of other flags in the word are not erased.
        if self.state.load(Ordering::Relaxed) & flags != flags {
            self.state.fetch_or(flags, Ordering::Relaxed);
        }
    }

    /// Clears the uncounted `flags` (BUSY, WAITING, ...) unless none is set.
    pub(super) fn clear_flags(&self, flags: u32) {
        self.take_flags(flags);
    }

    /// Clears the uncounted `flags` unless none is set; returns whether
    /// one was set (as the RMW found it).
    pub(super) fn take_flags(&self, flags: u32) -> bool {
        // Relaxed (both): see `set_flags`.
        self.state.load(Ordering::Relaxed) & flags != 0
            && self.state.fetch_and(!flags, Ordering::Relaxed) & flags != 0
    }

    /// Records that a tick at `now_ns` found the queue busy (monotonic:
    /// never moves backwards).
    pub(super) fn note_busy_at(&self, now_ns: u64) {
        // Relaxed: idle heuristic; only the (serialised) tick writes it.
        if self.last_active_ns.load(Ordering::Relaxed) < now_ns {
            self.last_active_ns.store(now_ns, Ordering::Relaxed);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn new_queue_is_idle() {
        let q = QueueTags::new(70);
        assert_eq!(q.index(), 70);
        assert_eq!(q.waiter_bit(), 1 << 6);
        assert_eq!(q.in_flight(), 0);
        assert_eq!(q.failures(), 0);
        assert!(!q.is_active());
        assert!(!q.is_busy());
        assert!(!q.is_waiting());
        assert!(!q.is_starved());
        assert_eq!(q.lend_limit(), 0);
        assert_eq!(q.window_slot(), None);
        assert_eq!(q.last_active_ns(), 0);
        q.note_busy_at(10);
        q.note_busy_at(5);
        assert_eq!(q.last_active_ns(), 10);
    }

    #[test]
    fn flags_are_independent() {
        let q = QueueTags::new(0);
        q.set_flags(BUSY);
        q.set_flags(WAITING);
        q.set_flags(BUSY);
        assert!(q.is_busy() && q.is_waiting() && !q.is_active() && !q.is_starved());
        q.clear_flags(BUSY);
        assert!(!q.is_busy() && q.is_waiting());
        q.clear_flags(BUSY);
        q.clear_flags(WAITING);
        assert_eq!(q.flags(), 0);
        assert_eq!(core::mem::align_of::<QueueTags>(), 64);
        assert_eq!(core::mem::size_of::<QueueTags>(), 64);
    }
}

impl AsRef<QueueTags> for QueueTags {
    fn as_ref(&self) -> &QueueTags {
        self
    }
}
