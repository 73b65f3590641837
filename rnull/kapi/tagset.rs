// SPDX-License-Identifier: GPL-2.0

//! blk-mq tag sets.

use super::{
    operations::{Operations, OperationsVTable},
    request::Pdu,
};
use core::{
    marker::PhantomData,
    pin::Pin,
    sync::atomic::{AtomicU64, Ordering},
};
use kernel::{
    bindings,
    error::{self, Error},
    init::PinInit,
    new_mutex,
    prelude::*,
    sync::{
        lock::{mutex::MutexBackend, Guard},
        Mutex,
    },
    try_pin_init,
    types::Opaque,
};

/// A held lock of a tag set's disk count.
pub(crate) type DisksGuard<'a> = Guard<'a, u32, MutexBackend>;

/// Options of a tag set.
pub(crate) struct TagSetConfig {
    /// Hardware queues for ordinary I/O (`HCTX_TYPE_DEFAULT`).
    pub(crate) nr_hw_queues: u32,
    /// Hardware queues for polled I/O (`HCTX_TYPE_POLL`), after the others.
    /// More than 0 needs [`Operations::map_queues`] and
    /// [`Operations::poll`]; the set then has all three queue maps, which
    /// makes blk-mq report `BLK_FEAT_POLL` on its disks.
    pub(crate) poll_queues: u32,
    /// Tags per hardware queue.
    pub(crate) queue_depth: u32,
    /// `queue_rq` may sleep (`BLK_MQ_F_BLOCKING`).
    pub(crate) blocking: bool,
    /// No I/O scheduler may be set on its queues (`BLK_MQ_F_NO_SCHED`).
    pub(crate) no_sched: bool,
    /// Request timeout in milliseconds (0: blk-mq's default of 30 s).
    pub(crate) timeout_ms: u32,
    /// One tag bitmap for all hardware queues (`BLK_MQ_F_TAG_HCTX_SHARED`).
    pub(crate) shared_tag_bitmap: bool,
    /// NUMA node of the set's allocations and its disks' queues
    /// (`NUMA_NO_NODE`, [`super::numa::NO_NODE`]: none).
    pub(crate) numa_node: i32,
}

/// The kinds of hardware queue (`enum hctx_type`) kapi offers, each with
/// its own map of CPUs to queues. blk-mq's third, `HCTX_TYPE_READ`, is
/// left without queues: reads go to the default ones.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub(crate) enum HctxType {
    /// Everything not sent to another kind.
    Default = bindings::hctx_type_HCTX_TYPE_DEFAULT,
    /// Polled I/O (`REQ_POLLED`).
    Poll = bindings::hctx_type_HCTX_TYPE_POLL,
}

/// How many hardware queues of a tag set serve each kind of I/O.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct QueueCounts {
    /// `HCTX_TYPE_DEFAULT` queues, the first ones.
    pub(crate) default: u32,
    /// `HCTX_TYPE_POLL` queues, after them.
    pub(crate) poll: u32,
}

impl QueueCounts {
    /// All hardware queues, or `None` on overflow.
    pub(crate) fn total(&self) -> Option<u32> {
        self.default.checked_add(self.poll)
    }

    fn pack(self) -> u64 {
        (u64::from(self.default) << 32) | u64::from(self.poll)
    }

    fn unpack(v: u64) -> Self {
        Self {
            default: (v >> 32) as u32,
            poll: v as u32,
        }
    }
}

/// The split of a tag set's hardware queues that kapi last asked blk-mq
/// for (`cur`) and the one before (`prev`), packed as
/// [`QueueCounts::pack`]. `map_queues` finds out which of the two blk-mq
/// applied from the number of hardware queues it has (blk-mq keeps the
/// old number when it cannot allocate a new one).
///
/// Relaxed orderings: both are written by the task that then calls into
/// blk-mq (`blk_mq_alloc_tag_set`, `blk_mq_update_nr_hw_queues`, the
/// latter under the set's `disks` lock), which calls `map_queues` on that
/// same task.
struct Split {
    cur: AtomicU64,
    prev: AtomicU64,
}

impl Split {
    /// The split whose total is `nr_hw_queues`; all default queues if
    /// neither is (which kapi never asks for).
    fn for_total(&self, nr_hw_queues: u32) -> QueueCounts {
        for v in [&self.cur, &self.prev] {
            let counts = QueueCounts::unpack(v.load(Ordering::Relaxed));
            if counts.total() == Some(nr_hw_queues) {
                return counts;
            }
        }
        QueueCounts {
            default: nr_hw_queues,
            poll: 0,
        }
    }
}

/// The number of queue maps a set with poll queues has (one per
/// `hctx_type`: default, read, poll): the length of `blk_mq_tag_set.map`.
const MAX_MAPS: u32 = bindings::hctx_type_HCTX_MAX_TYPES;

/// A `struct blk_mq_tag_set` whose callbacks go to `T`.
///
/// # Invariants
///
/// `inner` was set up by `blk_mq_alloc_tag_set` with `OperationsVTable::<T>`
/// and a PDU size of `Pdu<T>`, and is freed on drop. Its `driver_data`
/// points to `split`, initialised before it; its `nr_maps` is [`MAX_MAPS`] if
/// `split` has poll queues (and `T` implements `map_queues` and `poll`),
/// else 1. `disks` counts the disks built on it.
#[pin_data(PinnedDrop)]
pub(crate) struct TagSet<T: Operations> {
    split: Split,
    /// The disks registered on the set. Held while a disk is added or
    /// removed and while the number of hardware queues changes, so that a
    /// change never meets a disk it did not prepare (see
    /// [`super::disk::Disk::update_hw_queues`]).
    #[pin]
    disks: Mutex<u32>,
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
        if config.shared_tag_bitmap {
            flags |= bindings::BLK_MQ_F_TAG_HCTX_SHARED;
        }
        let numa_node = config.numa_node;
        let counts = QueueCounts {
            default: config.nr_hw_queues,
            poll: config.poll_queues,
        };
        let nr_hw_queues = counts.total();
        let polled = counts.poll > 0;
        let queue_depth = config.queue_depth;
        // 0 keeps blk-mq's default (30 s).
        let timeout =
            u32::try_from(kernel::time::msecs_to_jiffies(config.timeout_ms)).unwrap_or(u32::MAX);
        try_pin_init!(&this in TagSet {
            split: Split {
                cur: AtomicU64::new(counts.pack()),
                prev: AtomicU64::new(counts.pack()),
            },
            disks <- new_mutex!(0, "rnull_tagset_disks"),
            inner <- PinInit::<_, Error>::pin_chain(Opaque::uninit(), move |inner| {
                let cmd_size = cmd_size.map_err(|_| EINVAL)?;
                let nr_hw_queues = nr_hw_queues.ok_or(EINVAL)?;
                // blk-mq maps polled I/O only through the driver's
                // `map_queues`, and only `poll` completes it.
                if polled && !(T::HAS_MAP_QUEUES && T::HAS_POLL) {
                    return Err(EINVAL);
                }
                let raw: *mut bindings::blk_mq_tag_set = inner.get();
                // SAFETY: `this` is the tag set being initialised; `split`
                // was initialised above and stays put (pinned) as long as it.
                let split = unsafe { core::ptr::addr_of!((*this.as_ptr()).split) };
                // A zeroed tag set is the starting point `blk_mq_alloc_tag_set`
                // expects; we fill in what it reads.
                // SAFETY: `raw` is valid for writes.
                error::to_result(unsafe {
                    raw.write(core::mem::zeroed());
                    (*raw).ops = OperationsVTable::<T>::build();
                    (*raw).nr_hw_queues = nr_hw_queues;
                    (*raw).queue_depth = queue_depth;
                    (*raw).cmd_size = cmd_size;
                    (*raw).numa_node = numa_node;
                    (*raw).timeout = timeout;
                    (*raw).flags = flags;
                    // `map_queues` reads the split through it.
                    (*raw).driver_data = split.cast_mut().cast();
                    // HCTX_TYPE_DEFAULT, _READ and _POLL; blk-mq then sets
                    // BLK_FEAT_POLL on the set's queues.
                    (*raw).nr_maps = if polled { MAX_MAPS } else { 1 };
                    bindings::blk_mq_alloc_tag_set(raw)
                })
            }),
            _p: PhantomData,
        })
    }

    /// The count of disks on the set, locked (see `disks`).
    pub(super) fn disks(&self) -> DisksGuard<'_> {
        self.disks.lock()
    }

    /// Whether the set's queues are split as `counts` already.
    pub(super) fn has_counts(&self, counts: QueueCounts) -> bool {
        // Relaxed: see `Split`; the caller holds the `disks` lock, which
        // orders updates.
        self.split.cur.load(Ordering::Relaxed) == counts.pack()
    }

    /// Gives the set `counts` hardware queues (`blk_mq_update_nr_hw_queues`,
    /// which calls `map_queues` with them). `disks` is the caller's lock of
    /// [`Self::disks`], which must count one disk. `EINVAL` for no default
    /// queue or poll queues on a set made without them (it has one map);
    /// `ENOMEM` if blk-mq kept the old number.
    ///
    /// # Safety
    ///
    /// `disks` must guard this set's own count ([`Self::disks`]), and the
    /// set's one disk must be prepared for its hardware contexts and their
    /// sysfs directories to be replaced: no file of the driver's in those
    /// directories, no waker that could run its queue meanwhile (see
    /// `Disk::update_hw_queues`).
    pub(super) unsafe fn update_counts(
        &self,
        disks: &DisksGuard<'_>,
        counts: QueueCounts,
    ) -> Result {
        if **disks != 1 {
            return Err(EINVAL);
        }
        let total = counts.total().ok_or(EINVAL)?;
        let raw = self.inner.get();
        // SAFETY: the set is allocated (type invariant); `nr_maps` never
        // changes after that.
        let nr_maps = unsafe { (*raw).nr_maps };
        if counts.default == 0 || (counts.poll > 0 && nr_maps < MAX_MAPS) {
            return Err(EINVAL);
        }
        let before = self.split.cur.load(Ordering::Relaxed);
        if before == counts.pack() {
            return Ok(());
        }
        // Relaxed: see `Split`; the `disks` lock orders updates.
        self.split.prev.store(before, Ordering::Relaxed);
        self.split.cur.store(counts.pack(), Ordering::Relaxed);
        let nr = core::ffi::c_int::try_from(total).map_err(|_| EINVAL)?;
        // blk-mq serialises with its own users (`tag_list_lock`, queue
        // freezing), and the set's one disk is prepared (the caller's
        // guarantee).
        // SAFETY: the set is allocated; see above.
        let now = unsafe {
            bindings::blk_mq_update_nr_hw_queues(raw, nr);
            (*raw).nr_hw_queues
        };
        if now != total {
            // blk-mq fell back to the old number and mapped it as `prev`.
            self.split.cur.store(before, Ordering::Relaxed);
            return Err(ENOMEM);
        }
        Ok(())
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

/// The CPU-to-hardware-queue maps of a tag set, handed to
/// [`Operations::map_queues`]: each kind of I/O gets the next hardware
/// queues in turn ([`QueueMaps::map`]).
///
/// # Invariants
///
/// `set` is a tag set made by [`TagSet::new`] whose maps blk-mq is
/// (re)building in the current `map_queues` call, with its queues frozen
/// (or none yet); every map below `nr_maps` has its `mq_map` array.
/// `next` is the first hardware queue no kind has been given yet.
pub(crate) struct QueueMaps<'a> {
    set: *mut bindings::blk_mq_tag_set,
    counts: QueueCounts,
    next: u32,
    _p: PhantomData<&'a mut bindings::blk_mq_tag_set>,
}

impl QueueMaps<'_> {
    /// Wraps the set of a `map_queues` call, with no kind mapped yet.
    ///
    /// # Safety
    ///
    /// `set` must be a tag set made by [`TagSet::new`] that blk-mq passes
    /// to `map_queues`, and the value must not outlive that call.
    pub(super) unsafe fn new(set: *mut bindings::blk_mq_tag_set) -> Self {
        // SAFETY: `driver_data` points to the set's `Split` (type invariant
        // of `TagSet`), which lives as long as the set.
        let split = unsafe { &*((*set).driver_data as *const Split) };
        // SAFETY: blk-mq hands us the set for this call.
        let (nr_hw_queues, nr_maps) = unsafe { ((*set).nr_hw_queues, (*set).nr_maps) };
        for i in 0..nr_maps.min(MAX_MAPS) as usize {
            // blk-mq cleared `mq_map` but keeps the old counts and offsets.
            // SAFETY: as above; `i` is below `nr_maps`.
            unsafe {
                (*set).map[i].nr_queues = 0;
                (*set).map[i].queue_offset = 0;
            }
        }
        // INVARIANT: nothing is given to any kind yet.
        Self {
            set,
            counts: split.for_total(nr_hw_queues),
            next: 0,
            _p: PhantomData,
        }
    }

    /// How many queues kapi made for each kind: what blk-mq has now.
    pub(crate) fn counts(&self) -> QueueCounts {
        self.counts
    }

    /// Gives the next `nr_queues` hardware queues to `ty` and spreads the
    /// possible CPUs over them (`blk_mq_map_queues`). 0 leaves `ty`
    /// without queues of its own (blk-mq sends its I/O to the default
    /// queues). Fails with `EINVAL`, changing nothing, if `ty` has queues
    /// already, the set has no map for `ty`, or too few queues are left.
    pub(crate) fn map(&mut self, ty: HctxType, nr_queues: u32) -> Result {
        if nr_queues == 0 {
            return Ok(());
        }
        let i = ty as usize;
        // SAFETY: the set is blk-mq's for this call (type invariant).
        let (nr_hw_queues, nr_maps) = unsafe { ((*self.set).nr_hw_queues, (*self.set).nr_maps) };
        let end = self.next.checked_add(nr_queues).ok_or(EINVAL)?;
        if i >= nr_maps as usize || end > nr_hw_queues {
            return Err(EINVAL);
        }
        // SAFETY: as above; map `i` exists (`i < nr_maps`).
        if unsafe { (*self.set).map[i].nr_queues } != 0 {
            return Err(EINVAL);
        }
        // SAFETY: as above; map `i` exists and has its `mq_map`, and its
        // queues `next..end` exist, so every entry written is a valid queue.
        unsafe {
            let map = core::ptr::addr_of_mut!((*self.set).map[i]);
            (*map).nr_queues = nr_queues;
            (*map).queue_offset = self.next;
            bindings::blk_mq_map_queues(map);
        }
        // INVARIANT: queues up to `end` are given.
        self.next = end;
        Ok(())
    }

    /// After the driver's `map_queues`: if it gave the default kind no
    /// queue, every CPU goes to the default queues over all hardware
    /// queues and the other kinds get none, so that blk-mq always has a
    /// queue for ordinary I/O.
    pub(super) fn finish(self) {
        // SAFETY: the set is blk-mq's for this call (type invariant).
        let (nr_hw_queues, nr_maps) = unsafe { ((*self.set).nr_hw_queues, (*self.set).nr_maps) };
        // SAFETY: as above; map 0 always exists.
        if unsafe { (*self.set).map[0].nr_queues } != 0 {
            return;
        }
        pr_err!("map_queues gave the default queues nothing: all {nr_hw_queues} hardware queues serve every kind of I/O\n");
        // SAFETY: as above; the maps below `nr_maps` exist, and every CPU
        // goes to one of the set's `nr_hw_queues` queues.
        unsafe {
            for i in 1..nr_maps.min(MAX_MAPS) as usize {
                (*self.set).map[i].nr_queues = 0;
            }
            let map = core::ptr::addr_of_mut!((*self.set).map[0]);
            (*map).nr_queues = nr_hw_queues;
            (*map).queue_offset = 0;
            bindings::blk_mq_map_queues(map);
        }
    }
}
