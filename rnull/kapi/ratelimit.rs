// SPDX-License-Identifier: GPL-2.0

//! Rate limits of log lines, one per file: the kernel's default printk
//! rate limit (`DEFAULT_RATELIMIT_INTERVAL`, `DEFAULT_RATELIMIT_BURST`)
//! with `___ratelimit()`'s rules, so that a flood of bad writes to one
//! file cannot flood the log, nor hide the first refusal of another.
//!
//! Not `struct ratelimit_state`: its `raw_spinlock_t` needs
//! `RATELIMIT_STATE_INIT` or `ratelimit_state_init()` (a macro and an
//! inline function bindgen does not give), whose fields and lockdep key
//! depend on the kernel configuration, and the limits live in allocated
//! files as well as in statics. One atomic word needs neither, and makes
//! a limit a `const` value.

use super::time::now_ns;
use core::{
    fmt::Display,
    sync::atomic::{AtomicU64, Ordering},
};
use kernel::prelude::*;

/// `DEFAULT_RATELIMIT_INTERVAL` (5 * HZ), in ms.
const INTERVAL_MS: u64 = 5000;
/// `DEFAULT_RATELIMIT_BURST`: lines per interval.
const BURST: u64 = 10;
/// The low bits of the state count the calls of the interval.
const CALL_BITS: u32 = 24;
/// The most calls counted (saturating).
const CALLS_MAX: u64 = (1 << CALL_BITS) - 1;
/// The high bits hold the interval's start, in ms of the monotonic clock
/// (wrapping every 34 years).
const START_MASK: u64 = u64::MAX >> CALL_BITS;

/// At most [`BURST`] log lines per [`INTERVAL_MS`]: an interval starts at
/// the first call after the previous one ended.
///
/// The state is the interval's start (above [`CALL_BITS`]) and the calls
/// in it (below); no calls yet means no interval yet.
pub(crate) struct RateLimit(AtomicU64);

impl RateLimit {
    /// A limit that has allowed nothing yet.
    pub(crate) const fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// Whether a line about `what` may be logged now. The first call of an
    /// interval that follows suppressed lines first logs how many were
    /// suppressed, as `___ratelimit()` does.
    pub(crate) fn allow(&self, what: &dyn Display) -> bool {
        let now = (now_ns() / 1_000_000) & START_MASK;
        let next = |state: u64| {
            let (start, calls) = (state >> CALL_BITS, state & CALLS_MAX);
            if calls == 0 || (now.wrapping_sub(start) & START_MASK) > INTERVAL_MS {
                (now << CALL_BITS) | 1
            } else {
                (start << CALL_BITS) | (calls + 1).min(CALLS_MAX)
            }
        };
        // Relaxed: the word orders nothing but itself. The update cannot
        // fail: `next` always gives a value.
        let prev = match self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| Some(next(s)))
        {
            Ok(prev) | Err(prev) => prev,
        };
        let calls = prev & CALLS_MAX;
        if (next(prev) & CALLS_MAX) == 1 {
            if calls > BURST {
                pr_warn!("{} log lines about {what} suppressed\n", calls - BURST);
            }
            true
        } else {
            calls < BURST
        }
    }
}
