// SPDX-License-Identifier: GPL-2.0

//! NUMA nodes, for null_blk's `home_node` and `use_per_node_hctx`.

use kernel::bindings;

/// `NUMA_NO_NODE`: no node preferred.
pub(crate) const NO_NODE: i32 = bindings::NUMA_NO_NODE;

/// `MAX_NUMNODES`: node numbers are below it (1 without `CONFIG_NUMA`).
pub(crate) const MAX_NODES: u32 = bindings::MAX_NUMNODES;

/// A copy of the online node mask, `node_states[N_ONLINE]`.
fn online_mask() -> bindings::nodemask_t {
    // Read without the writers' lock, as `node_online()` does: a racy
    // answer is as good as theirs.
    // SAFETY: `node_states` is an exported static array of the kernel's.
    unsafe {
        core::ptr::addr_of!(bindings::node_states[bindings::node_states_N_ONLINE as usize])
            .read_volatile()
    }
}

/// `num_online_nodes()`: the nodes online now (the same count as
/// `nr_online_nodes`, an exported variable with `CONFIG_NUMA` and the
/// constant 1 without, where the mask holds node 0 alone).
pub(crate) fn online_nodes() -> u32 {
    online_mask().bits.iter().map(|w| w.count_ones()).sum()
}

/// `node_online(node)`, for any `node` (false outside `0..MAX_NUMNODES`).
fn is_online(node: i32) -> bool {
    let Ok(n) = usize::try_from(node) else {
        return false;
    };
    let bits = core::ffi::c_ulong::BITS as usize;
    n < MAX_NODES as usize && online_mask().bits[n / bits] & (1 << (n % bits)) != 0
}

/// Whether `node` may be a tag set's home node: `NUMA_NO_NODE`, or a node
/// below the online count (null_blk's test) that is online (so that the
/// allocations made on it are never given a node the kernel has no data
/// for).
pub(crate) fn is_home_node(node: i32) -> bool {
    node == NO_NODE || u32::try_from(node).is_ok_and(|n| n < online_nodes()) && is_online(node)
}
