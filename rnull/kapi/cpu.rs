// SPDX-License-Identifier: GPL-2.0

//! CPU topology facts the driver sizes itself by.

use kernel::bindings;

/// The number of possible CPU ids (`nr_cpu_ids`).
pub(crate) fn possible_cpus() -> u32 {
    // SAFETY: `nr_cpu_ids` is set during early boot and never changes after,
    // so reading it races with nothing.
    unsafe { bindings::nr_cpu_ids }
}
