//! Per request-queue (per disk) accounting for the shared host tag budget.
//!
//! A [`QueueTags`] is owned by the driver next to each request queue and is
//! passed to every [`super::host::HostTags`] call made on behalf of that
//! queue. All fields are atomics updated by the host; the driver only reads
//! them (for sysfs) through the getters below.

use super::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Tag accounting of one request queue.
pub struct QueueTags {
    /// Caller-assigned index; bit `index % 64` in the host waiter mask.
    pub(super) index: AtomicU32,
    /// Counted in the host's `active_queues`.
    pub(super) active: AtomicBool,
    /// Tags currently held by this queue.
    pub(super) in_flight: AtomicU32,
    /// Number of `get` calls that returned a refusal.
    pub(super) failures: AtomicU64,
    /// Failure count seen by the previous `Lend` tick.
    pub(super) failures_seen: AtomicU64,
    /// Refused and not yet successful since (informational).
    pub(super) waiting: AtomicBool,
    /// Failed and not yet drained to zero in flight; counted in the host's
    /// starved count.
    pub(super) starved: AtomicBool,
    /// Last get/put activity, caller's monotonic clock (ns).
    pub(super) last_active_ns: AtomicU64,
    /// Per-queue limit computed by the `Lend` policy tick (0 = not set).
    pub(super) lend_limit: AtomicU32,
}

impl QueueTags {
    /// Creates the accounting for queue number `index` (inactive, idle).
    pub fn new(index: u32) -> Self {
        Self {
            index: AtomicU32::new(index),
            active: AtomicBool::new(false),
            in_flight: AtomicU32::new(0),
            failures: AtomicU64::new(0),
            failures_seen: AtomicU64::new(0),
            waiting: AtomicBool::new(false),
            starved: AtomicBool::new(false),
            last_active_ns: AtomicU64::new(0),
            lend_limit: AtomicU32::new(0),
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

    /// Whether this queue is counted in the host's active queues.
    pub fn is_active(&self) -> bool {
        // Relaxed: statistics only.
        self.active.load(Ordering::Relaxed)
    }

    /// Whether this queue was refused and has not allocated since.
    pub fn is_waiting(&self) -> bool {
        // Relaxed: statistics only; wake-ups use the host waiter mask.
        self.waiting.load(Ordering::Relaxed)
    }

    /// Whether this queue failed and has not drained to zero in flight.
    pub fn is_starved(&self) -> bool {
        // Relaxed: statistics only.
        self.starved.load(Ordering::Relaxed)
    }

    /// Time (caller's clock, ns) of the last get or put of this queue.
    pub fn last_active_ns(&self) -> u64 {
        // Relaxed: idle detection heuristic only.
        self.last_active_ns.load(Ordering::Relaxed)
    }

    /// Limit assigned by the last `Lend` tick (0 = none, fair share used).
    pub fn lend_limit(&self) -> u32 {
        // Relaxed: advisory limit.
        self.lend_limit.load(Ordering::Relaxed)
    }

    /// Records activity at `now_ns` (monotonic; never moves backwards).
    pub(super) fn touch(&self, now_ns: u64) {
        // Relaxed: idle heuristic; fetch_max keeps it monotonic when CPUs
        // report slightly different clocks.
        if self.last_active_ns.load(Ordering::Relaxed) < now_ns {
            self.last_active_ns.fetch_max(now_ns, Ordering::Relaxed);
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
        assert!(!q.is_waiting());
        assert!(!q.is_starved());
        assert_eq!(q.lend_limit(), 0);
        q.touch(10);
        q.touch(5);
        assert_eq!(q.last_active_ns(), 10);
    }
}

impl AsRef<QueueTags> for QueueTags {
    fn as_ref(&self) -> &QueueTags {
        self
    }
}
