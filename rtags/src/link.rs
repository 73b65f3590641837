//! A transfer link of limited bandwidth: requests cross it one after
//! another, so a request's latency grows with the bytes queued ahead of it.
//!
//! rnull puts one in front of each device (`mbps`) and one in front of the
//! host (`host_mbps`): a request completes when its bytes have crossed the
//! links it uses. That is what lets a heavy writer's queue of large requests
//! delay a light reader behind it (Keith Busch's NVMe case), which fixed
//! completion times cannot show.
//!
//! # Design
//!
//! The link is a FIFO server on a virtual timeline: `busy_until` is when it
//! finishes the bytes reserved so far. A reservation at `now` starts at
//! `max(now, busy_until)` and moves `busy_until` past its own transfer, in
//! one compare-and-swap, so concurrent reservations serialise without a
//! lock and the link is never double-booked (`tests/loom_link.rs`). An idle link
//! starts the next request at once: idle time is not banked.
//!
//! The rate is read on every reservation (Relaxed: a tunable; any recent
//! value will do), so changing it takes effect for the next request without
//! touching reservations already made.

use super::sync::{AtomicU64, Ordering};

/// Largest rate in MiB/s (about 1 TiB/s): far beyond any device, and small
/// enough that a transfer's cost cannot overflow (see `Link::cost_ns`).
pub const MAX_MIB_PER_S: u64 = 1 << 20;

/// Bytes in a MiB, the unit of `mbps` as in null_blk.
const MIB: u64 = 1 << 20;

/// An out of range rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateError;

/// A link of limited bandwidth; see the module documentation.
pub struct Link {
    /// End of the last reservation (ns on the caller's clock).
    busy_until: AtomicU64,
    /// Rate in MiB/s; 0 is unlimited.
    mib_per_s: AtomicU64,
}

impl Default for Link {
    fn default() -> Self {
        Self::new()
    }
}

impl Link {
    /// An unlimited link.
    pub fn new() -> Self {
        Self {
            busy_until: AtomicU64::new(0),
            mib_per_s: AtomicU64::new(0),
        }
    }

    /// Sets the rate in MiB/s, 0 for unlimited, and returns the previous
    /// one; refuses more than [`MAX_MIB_PER_S`] and changes nothing then.
    /// Turning the limit on or off forgets the backlog: reservations made
    /// before are not waited for by requests made after (an old backlog
    /// would otherwise delay them).
    pub fn set_mib_per_s(&self, rate: u64) -> Result<u64, RateError> {
        if rate > MAX_MIB_PER_S {
            return Err(RateError);
        }
        // Relaxed: a tunable (module docs).
        let old = self.mib_per_s.swap(rate, Ordering::Relaxed);
        if (old == 0) != (rate == 0) {
            // Relaxed: a reservation racing with this may keep its own
            // finish time; the next one starts from whichever value wins.
            self.busy_until.store(0, Ordering::Relaxed);
        }
        Ok(old)
    }

    /// When the bytes reserved so far will have crossed the link.
    pub fn busy_until(&self) -> u64 {
        // Relaxed: an estimate for throttling; `reserve` decides.
        self.busy_until.load(Ordering::Relaxed)
    }

    /// Whether a rate is set (one Relaxed load: the per-request check).
    #[inline]
    pub fn is_limited(&self) -> bool {
        self.mib_per_s() != 0
    }

    /// The rate in MiB/s (0: unlimited).
    pub fn mib_per_s(&self) -> u64 {
        // Relaxed: a tunable.
        self.mib_per_s.load(Ordering::Relaxed)
    }

    /// Time to move `bytes` at `rate` MiB/s (non-zero), in ns.
    fn cost_ns(bytes: u64, rate: u64) -> u64 {
        // bytes * 1e9 / (rate * MiB), split so that no product overflows:
        // ns per MiB is at most 1e9, and a request is far below 2^34 bytes.
        let ns_per_mib = 1_000_000_000 / rate.max(1);
        let whole = (bytes / MIB).saturating_mul(ns_per_mib);
        let part = (bytes % MIB).saturating_mul(1_000_000_000) / MIB / rate.max(1);
        whole.saturating_add(part)
    }

    /// Reserves the link for `bytes` at `now`; returns when they have
    /// crossed it, or `None` if the link is unlimited (nothing reserved).
    pub fn reserve(&self, now: u64, bytes: u64) -> Option<u64> {
        let rate = self.mib_per_s();
        if rate == 0 {
            return None;
        }
        let cost = Self::cost_ns(bytes, rate);
        // Relaxed: the CAS below decides; the value only seeds it.
        let mut busy = self.busy_until.load(Ordering::Relaxed);
        loop {
            let finish = busy.max(now).saturating_add(cost);
            // Relaxed: the link's timeline is the only data; each
            // successful CAS extends it by exactly one reservation, and
            // RMWs on one location are totally ordered.
            match self.busy_until.compare_exchange_weak(
                busy,
                finish,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(finish),
                Err(seen) => busy = seen,
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn unlimited_reserves_nothing() {
        let l = Link::new();
        assert_eq!(l.reserve(5, 1 << 20), None);
    }

    #[test]
    fn one_mib_at_one_mib_per_s_takes_a_second() {
        let l = Link::new();
        l.set_mib_per_s(1).unwrap();
        assert_eq!(l.reserve(0, MIB), Some(1_000_000_000));
        // 512 bytes at 100 MiB/s: 4882 ns (rounded down).
        let l = Link::new();
        l.set_mib_per_s(100).unwrap();
        assert_eq!(l.reserve(10, 512), Some(10 + 4_882));
    }

    #[test]
    fn requests_queue_behind_the_bytes_ahead() {
        let l = Link::new();
        l.set_mib_per_s(128).unwrap();
        // 128 KiB at 128 MiB/s: 976,562 ns each.
        let a = l.reserve(0, 128 << 10).unwrap();
        let b = l.reserve(0, 128 << 10).unwrap();
        let c = l.reserve(0, 512).unwrap();
        assert_eq!(a, 976_562);
        assert_eq!(b, 2 * 976_562);
        assert_eq!(c, 2 * 976_562 + 3_814);
        // An idle gap is not banked.
        let d = l.reserve(10_000_000, 512).unwrap();
        assert_eq!(d, 10_000_000 + 3_814);
    }

    #[test]
    fn turning_the_limit_off_and_on_forgets_the_backlog() {
        let l = Link::new();
        l.set_mib_per_s(1).unwrap();
        l.reserve(0, 64 * MIB).unwrap();
        l.set_mib_per_s(0).unwrap();
        l.set_mib_per_s(100).unwrap();
        // 1 MiB at 100 MiB/s from now, not behind 64 s of old backlog.
        assert_eq!(l.reserve(5, MIB), Some(5 + 10_000_000));
        // Changing a set rate keeps the backlog.
        l.set_mib_per_s(50).unwrap();
        assert_eq!(l.reserve(5, MIB), Some(5 + 10_000_000 + 20_000_000));
    }

    #[test]
    fn bad_rate_changes_nothing() {
        let l = Link::new();
        l.set_mib_per_s(7).unwrap();
        assert_eq!(l.set_mib_per_s(MAX_MIB_PER_S + 1), Err(RateError));
        assert_eq!(l.mib_per_s(), 7);
        assert_eq!(l.set_mib_per_s(MAX_MIB_PER_S), Ok(7));
        // The largest rate and a huge request do not overflow.
        assert!(l.reserve(u64::MAX / 2, u32::MAX as u64).is_some());
    }
}
