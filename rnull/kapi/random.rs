// SPDX-License-Identifier: GPL-2.0

//! Random numbers for fault injection.

use kernel::bindings;

/// True with probability `percent`/100.
pub(crate) fn chance_percent(percent: u32) -> bool {
    if percent == 0 {
        return false;
    }
    // SAFETY: `get_random_u32` has no preconditions and may be called from
    // any context.
    let r = unsafe { bindings::get_random_u32() };
    r % 100 < percent
}
