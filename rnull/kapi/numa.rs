// SPDX-License-Identifier: GPL-2.0

//! NUMA nodes, for null_blk's `home_node` and `use_per_node_hctx`.

use kernel::bindings;

/// `NUMA_NO_NODE`: no node preferred.
pub(crate) const NO_NODE: i32 = bindings::NUMA_NO_NODE;

/// `MAX_NUMNODES`: node numbers are below it (1 without `CONFIG_NUMA`).
pub(crate) const MAX_NODES: u32 = bindings::MAX_NUMNODES;

/// `nr_online_nodes`: the nodes online now. The kernel's macro, which
/// bindgen does not give, counts the same mask (without `CONFIG_NUMA` the
/// mask holds node 0 alone, and the macro is 1).
pub(crate) fn online_nodes() -> u32 {
    // SAFETY: `node_states` is a static array of the kernel's, exported;
    // reading the online mask's words without its writers' lock is what
    // `num_node_state()` does (a racy count is as good as its).
    let words = unsafe {
        core::ptr::addr_of!(bindings::node_states[bindings::node_states_N_ONLINE as usize].bits)
            .read_volatile()
    };
    words.iter().map(|w| w.count_ones()).sum()
}

/// Whether `node` may be a tag set's home node: `NUMA_NO_NODE` or an
/// online node.
pub(crate) fn is_home_node(node: i32) -> bool {
    node == NO_NODE || u32::try_from(node).is_ok_and(|n| n < online_nodes())
}
