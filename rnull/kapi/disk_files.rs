// SPDX-License-Identifier: GPL-2.0

//! A disk's sysfs files, routed to its queue data.
//!
//! The files of `/sys/block/<disk>/<group>/` are an attribute group handed
//! to `device_add_disk`, so they exist before the disk's "add" uevent (udev
//! rules may read them) and are removed by `del_gendisk`, before the queue
//! data they read goes away. The files in the hardware queue directories
//! (`/sys/block/<disk>/mq/<n>/`) cannot be: those kobjects are blk-mq's and
//! appear only once the disk is added; they are `bin_attribute`s the
//! [`super::disk::Disk`] owns and removes before `del_gendisk`.

use super::{
    fmt::BufWriter,
    operations::{ForeignBorrowed, Operations},
    ratelimit::RateLimit,
    sysfs::AttrOps,
};
use core::{ffi::c_void, marker::PhantomData, ptr::NonNull};
use kernel::{bindings, ffi::c_char, prelude::*, str::CStr, types::ForeignOwnable, types::Opaque};

/// The name and permissions (0444 or 0644) of a file.
#[derive(Clone, Copy)]
pub(crate) struct FileSpec {
    /// File name.
    pub(crate) name: &'static CStr,
    /// Permissions.
    pub(crate) mode: u16,
}

impl FileSpec {
    /// The file `name` with permissions `mode`.
    pub(crate) const fn new(name: &'static CStr, mode: u16) -> Self {
        Self { name, mode }
    }
}

/// The sysfs files of a disk. `id` is a file's index in [`Self::FILES`] or
/// [`Self::HCTX_FILES`].
pub(crate) trait DiskFiles: Operations {
    /// The directory under `/sys/block/<disk>/`.
    const GROUP: &'static CStr;
    /// Its files.
    const FILES: &'static [FileSpec];
    /// The files of each hardware queue directory.
    const HCTX_FILES: &'static [FileSpec];

    /// Whether this disk has file `id` (asked once, when the disk is built).
    fn has_file(_queue: ForeignBorrowed<'_, Self::QueueData>, _id: usize) -> bool {
        true
    }

    /// Writes the contents of file `id`.
    fn show(
        queue: ForeignBorrowed<'_, Self::QueueData>,
        id: usize,
        out: &mut BufWriter<'_>,
    ) -> Result;

    /// Applies a write to file `id`; on error nothing may change. `log`
    /// is the file's own rate limit for the log lines of refused writes.
    fn store(
        _queue: ForeignBorrowed<'_, Self::QueueData>,
        _id: usize,
        _log: &RateLimit,
        _input: &[u8],
    ) -> Result {
        Err(EPERM)
    }

    /// Writes the contents of file `id` of hardware queue `hctx`.
    fn show_hctx(
        queue: ForeignBorrowed<'_, Self::QueueData>,
        hctx: u32,
        id: usize,
        out: &mut BufWriter<'_>,
    ) -> Result;

    /// Applies a write to file `id` of hardware queue `hctx`; on error
    /// nothing may change. `log` is as for [`Self::store`].
    fn store_hctx(
        _queue: ForeignBorrowed<'_, Self::QueueData>,
        _hctx: u32,
        _id: usize,
        _log: &RateLimit,
        _input: &[u8],
    ) -> Result {
        Err(EPERM)
    }
}

/// The lockdep class of the disk groups' attributes (what C's
/// `sysfs_attr_init` gives a dynamically allocated attribute); its own, so
/// that a store removing another rnull file would not look recursive.
#[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
static DISK_ATTR_LOCK_CLASS: super::lock_class::LockClass = super::lock_class::LockClass::new();

/// One file of the group: a `device_attribute`, which file it is and the
/// rate limit of its refusals' log lines.
#[repr(C)]
struct Slot {
    raw: Opaque<bindings::device_attribute>,
    id: usize,
    log: RateLimit,
}

/// The attribute group of one disk, for `device_add_disk`.
///
/// # Invariants
///
/// `groups` is `[_group, NULL]`; `_group` names `T::GROUP` and points to
/// `_attrs`, a NULL-terminated array of the `attr` fields of `_slots`, each
/// with `show_callback::<T>` (and `store_callback::<T>` if writable). The
/// heap buffers never move, nor change but for the slots' rate limits,
/// while the value exists.
pub(super) struct DiskGroup<T: DiskFiles> {
    // Owned for the pointers into them.
    _slots: KVec<Slot>,
    _attrs: KVec<*mut bindings::attribute>,
    _group: KBox<Opaque<bindings::attribute_group>>,
    groups: KBox<[*const bindings::attribute_group; 2]>,
    _p: PhantomData<T>,
}

impl<T: DiskFiles> DiskGroup<T> {
    /// The group of the files `has_file` keeps.
    pub(super) fn new(has_file: impl Fn(usize) -> bool) -> Result<Self> {
        let mut slots = KVec::with_capacity(T::FILES.len(), GFP_KERNEL)?;
        for (id, spec) in T::FILES.iter().enumerate() {
            if !has_file(id) {
                continue;
            }
            // SAFETY: all-zero is a valid `device_attribute`: no name, no
            // callbacks; the fields sysfs reads are set below.
            let mut raw: bindings::device_attribute = unsafe { core::mem::zeroed() };
            raw.attr.name = spec.name.as_char_ptr();
            raw.attr.mode = spec.mode;
            #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
            {
                raw.attr.key = DISK_ATTR_LOCK_CLASS.as_ptr();
            }
            raw.show = Some(show_callback::<T>);
            if spec.mode & 0o222 != 0 {
                raw.store = Some(store_callback::<T>);
            }
            slots.push(
                Slot {
                    raw: Opaque::new(raw),
                    id,
                    log: RateLimit::new(),
                },
                GFP_KERNEL,
            )?;
        }
        let mut attrs = KVec::with_capacity(slots.len() + 1, GFP_KERNEL)?;
        for slot in slots.iter() {
            // SAFETY: `raw.get()` points to the slot's initialised attribute;
            // only the field's address is taken.
            let attr = unsafe { core::ptr::addr_of_mut!((*slot.raw.get()).attr) };
            attrs.push(attr, GFP_KERNEL)?;
        }
        attrs.push(core::ptr::null_mut(), GFP_KERNEL)?;
        // SAFETY: all-zero is a valid `attribute_group` (no files, no
        // visibility callbacks).
        let mut group: bindings::attribute_group = unsafe { core::mem::zeroed() };
        group.name = T::GROUP.as_char_ptr();
        group.attrs = attrs.as_mut_ptr();
        let group = KBox::new(Opaque::new(group), GFP_KERNEL)?;
        let groups = KBox::new([group.get().cast_const(), core::ptr::null()], GFP_KERNEL)?;
        // INVARIANT: built as described; nothing is pushed afterwards.
        Ok(Self {
            _slots: slots,
            _attrs: attrs,
            _group: group,
            groups,
            _p: PhantomData,
        })
    }

    /// The NULL-terminated group list for `device_add_disk`.
    pub(super) fn as_groups(&self) -> *mut *const bindings::attribute_group {
        self.groups.as_ptr().cast_mut()
    }
}

// SAFETY: the raw pointers point into the value's own heap buffers, which
// are only read (by sysfs) after construction, but for the slots' rate
// limits, which are atomic.
unsafe impl<T: DiskFiles> Send for DiskGroup<T> {}
// SAFETY: as above.
unsafe impl<T: DiskFiles> Sync for DiskGroup<T> {}

/// The queue data of the disk whose device is `dev`.
///
/// # Safety
///
/// `dev` must be the device of a live disk made by
/// [`super::disk::DiskBuilder`] (whose `queuedata` holds a `T::QueueData`).
unsafe fn queue_data_of<'a, T: Operations>(
    dev: *mut bindings::device,
) -> ForeignBorrowed<'a, T::QueueData> {
    // `dev_to_disk()`: the group is attached to the whole-disk device only
    // (never to partitions), which is the `bd_device` of the disk's
    // `block_device`, and that points back to the disk.
    // SAFETY: guaranteed by the caller; the queue and its data live while
    // the disk's sysfs files do (they are removed by `del_gendisk`).
    unsafe {
        let bdev = kernel::container_of!(dev, bindings::block_device, bd_device);
        T::QueueData::borrow((*(*(*bdev).bd_disk).queue).queuedata)
    }
}

/// # Safety
///
/// Called by sysfs for an attribute of a [`DiskGroup<T>`] on a live disk,
/// with `buf` holding `PAGE_SIZE` writable bytes.
unsafe extern "C" fn show_callback<T: DiskFiles>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: `attr` is the first field of a `#[repr(C)]` `Slot`, which
    // lives as long as the file (type invariant of `DiskGroup`).
    let id = unsafe { (*attr.cast::<Slot>()).id };
    // SAFETY: guaranteed by the caller.
    let queue = unsafe { queue_data_of::<T>(dev) };
    // SAFETY: sysfs hands us `PAGE_SIZE` writable bytes for this call.
    let out = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), bindings::PAGE_SIZE) };
    let mut w = BufWriter::new(out);
    match T::show(queue, id, &mut w) {
        Ok(()) => w.len() as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// # Safety
///
/// Called by sysfs for a writable attribute of a [`DiskGroup<T>`] on a live
/// disk, with `buf` holding `count` readable bytes.
unsafe extern "C" fn store_callback<T: DiskFiles>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: as in `show_callback`.
    let slot = unsafe { &*attr.cast::<Slot>() };
    // SAFETY: guaranteed by the caller.
    let queue = unsafe { queue_data_of::<T>(dev) };
    // SAFETY: sysfs hands us `count` readable bytes for this call.
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
    match T::store(queue, slot.id, &slot.log, input) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// A file of a hardware queue directory.
///
/// # Invariants
///
/// `queue_data` is the disk's `queuedata` (a `T::QueueData` from
/// `into_foreign`), which outlives the file: the [`super::disk::Disk`]
/// removes its hardware queue files before it releases the queue data.
pub(super) struct HctxFile<T: DiskFiles> {
    queue_data: NonNull<c_void>,
    hctx: u32,
    id: usize,
    /// The rate limit of the log lines of refused writes.
    log: RateLimit,
    _p: PhantomData<T>,
}

impl<T: DiskFiles> HctxFile<T> {
    /// File `id` of hardware queue `hctx`.
    ///
    /// # Safety
    ///
    /// `queue_data` must be the disk's `queuedata`, live for as long as the
    /// file is registered.
    pub(super) unsafe fn new(queue_data: NonNull<c_void>, hctx: u32, id: usize) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self {
            queue_data,
            hctx,
            id,
            log: RateLimit::new(),
            _p: PhantomData,
        }
    }

    fn queue(&self) -> ForeignBorrowed<'_, T::QueueData> {
        // SAFETY: by the type invariant the queue data outlives `self`.
        unsafe { T::QueueData::borrow(self.queue_data.as_ptr()) }
    }
}

// SAFETY: the queue data is `Send + Sync` (`Operations::QueueData`); the file
// only borrows it.
unsafe impl<T: DiskFiles> Send for HctxFile<T> {}
// SAFETY: as above.
unsafe impl<T: DiskFiles> Sync for HctxFile<T> {}

impl<T: DiskFiles> AttrOps for HctxFile<T> {
    fn show(&self, out: &mut BufWriter<'_>) -> Result {
        T::show_hctx(self.queue(), self.hctx, self.id, out)
    }

    fn store(&self, input: &[u8]) -> Result {
        T::store_hctx(self.queue(), self.hctx, self.id, &self.log, input)
    }
}
