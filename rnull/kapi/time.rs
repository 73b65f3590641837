// SPDX-License-Identifier: GPL-2.0

//! The monotonic clock.

use kernel::bindings;

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub(crate) fn now_ns() -> u64 {
    // SAFETY: `ktime_get` has no preconditions and may be called from any context.
    let t = unsafe { bindings::ktime_get() };
    u64::try_from(t).unwrap_or(0)
}
