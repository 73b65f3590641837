// SPDX-License-Identifier: GPL-2.0

//! blk-mq tag sets.

use super::{
    operations::{Operations, OperationsVTable},
    request::Pdu,
};
use core::{marker::PhantomData, pin::Pin};
use kernel::{
    bindings,
    error::{self, Error},
    init::PinInit,
    prelude::*,
    try_pin_init,
    types::Opaque,
};

/// Options of a tag set.
pub(crate) struct TagSetConfig {
    /// Number of hardware queues.
    pub(crate) nr_hw_queues: u32,
    /// Tags per hardware queue.
    pub(crate) queue_depth: u32,
    /// `queue_rq` may sleep (`BLK_MQ_F_BLOCKING`).
    pub(crate) blocking: bool,
    /// No I/O scheduler may be set on its queues (`BLK_MQ_F_NO_SCHED`).
    pub(crate) no_sched: bool,
    /// Request timeout in milliseconds (0: blk-mq's default of 30 s).
    pub(crate) timeout_ms: u32,
}

/// A `struct blk_mq_tag_set` whose callbacks go to `T`.
///
/// # Invariants
///
/// `inner` was set up by `blk_mq_alloc_tag_set` with `OperationsVTable::<T>`
/// and a PDU size of `Pdu<T>`, and is freed on drop.
#[pin_data(PinnedDrop)]
pub(crate) struct TagSet<T: Operations> {
    #[pin]
    inner: Opaque<bindings::blk_mq_tag_set>,
    _p: PhantomData<T>,
}

// SAFETY: blk-mq serialises its own use of the tag set; Rust only hands out
// the raw pointer.
unsafe impl<T: Operations> Send for TagSet<T> {}
// SAFETY: as above.
unsafe impl<T: Operations> Sync for TagSet<T> {}

impl<T: Operations> TagSet<T> {
    /// Allocates a tag set; use with `Arc::pin_init`.
    pub(crate) fn new(config: &TagSetConfig) -> impl PinInit<Self, Error> {
        // blk-mq places the PDU right after the request (`rq + 1`).
        const { assert!(core::mem::align_of::<Pdu<T>>() <= core::mem::align_of::<bindings::request>()) };
        let cmd_size = u32::try_from(core::mem::size_of::<Pdu<T>>());
        let mut flags = bindings::BLK_MQ_F_SHOULD_MERGE;
        if config.blocking {
            flags |= bindings::BLK_MQ_F_BLOCKING;
        }
        if config.no_sched {
            flags |= bindings::BLK_MQ_F_NO_SCHED;
        }
        let (nr_hw_queues, queue_depth) = (config.nr_hw_queues, config.queue_depth);
        // 0 keeps blk-mq's default (30 s).
        let timeout =
            u32::try_from(kernel::time::msecs_to_jiffies(config.timeout_ms)).unwrap_or(u32::MAX);
        try_pin_init!(TagSet {
            inner <- PinInit::<_, Error>::pin_chain(Opaque::uninit(), move |inner| {
                let cmd_size = cmd_size.map_err(|_| EINVAL)?;
                let raw: *mut bindings::blk_mq_tag_set = inner.get();
                // A zeroed tag set is the starting point `blk_mq_alloc_tag_set`
                // expects; we fill in what it reads.
                // SAFETY: `raw` is valid for writes.
                error::to_result(unsafe {
                    raw.write(core::mem::zeroed());
                    (*raw).ops = OperationsVTable::<T>::build();
                    (*raw).nr_hw_queues = nr_hw_queues;
                    (*raw).queue_depth = queue_depth;
                    (*raw).cmd_size = cmd_size;
                    (*raw).numa_node = bindings::NUMA_NO_NODE;
                    (*raw).timeout = timeout;
                    (*raw).flags = flags;
                    (*raw).nr_maps = 1;
                    bindings::blk_mq_alloc_tag_set(raw)
                })
            }),
            _p: PhantomData,
        })
    }

    /// The raw tag set, for allocating disks on it.
    pub(crate) fn as_raw(&self) -> *mut bindings::blk_mq_tag_set {
        self.inner.get()
    }
}

#[pinned_drop]
impl<T: Operations> PinnedDrop for TagSet<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: by the type invariant the set was allocated; every disk on
        // it holds an `Arc` to it, so none is left.
        unsafe { bindings::blk_mq_free_tag_set(self.inner.get()) };
    }
}
