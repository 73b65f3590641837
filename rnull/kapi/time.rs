// SPDX-License-Identifier: GPL-2.0

//! The monotonic clock, as the nanosecond count the driver computes with.

use kernel::time::Ktime;

/// Nanoseconds on `CLOCK_MONOTONIC` (`ktime_get()`).
pub(crate) fn now_ns() -> u64 {
    // The monotonic clock starts at boot and never goes below zero.
    u64::try_from(Ktime::ktime_get().to_ns()).unwrap_or(0)
}
