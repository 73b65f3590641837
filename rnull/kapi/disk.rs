// SPDX-License-Identifier: GPL-2.0

//! Disks (`struct gendisk`) on a [`TagSet`], made by a [`DiskBuilder`].

#[cfg(CONFIG_BLK_DEV_ZONED)]
use super::zoned::{self, Hook, HookFor, ReportZones, ZoneLimits};
use super::{
    disk_files::{DiskFiles, DiskGroup, HctxFile},
    fmt::Errno,
    lock_class::LockClass,
    noio::NoIoScope,
    operations::Operations,
    sysfs::Attr,
    tagset::{QueueCounts, TagSet},
    wake::QueueWaker,
};
use core::{ffi::c_void, ptr::NonNull};
use kernel::{
    bindings,
    error::{from_err_ptr, to_result},
    prelude::*,
    sync::Arc,
    types::ForeignOwnable,
};

/// `block_device_operations` with the owner set, which 6.12's Rust `GenDisk`
/// leaves NULL: with it, opening the disk pins the module, so `rmmod` of an
/// open device fails with EBUSY instead of freeing code still in use.
struct Fops(bindings::block_device_operations);

// SAFETY: the table is immutable and only read by the block layer.
unsafe impl Sync for Fops {}

/// The table with `report_zones` (zoned disks) or without, owned by the
/// module `owner`.
const fn fops(
    report_zones: Option<
        unsafe extern "C" fn(
            *mut bindings::gendisk,
            bindings::sector_t,
            u32,
            bindings::report_zones_cb,
            *mut c_void,
        ) -> i32,
    >,
    owner: *mut bindings::module,
) -> Fops {
    Fops(bindings::block_device_operations {
        submit_bio: None,
        open: None,
        release: None,
        ioctl: None,
        compat_ioctl: None,
        check_events: None,
        unlock_native_capacity: None,
        getgeo: None,
        set_read_only: None,
        swap_slot_free_notify: None,
        report_zones,
        devnode: None,
        alternative_gpt_sector: None,
        get_unique_id: None,
        owner,
        pr_ops: core::ptr::null_mut(),
        free_disk: None,
        poll_bio: None,
    })
}

// A static needs a constant: `THIS_MODULE.as_ptr()` is not a `const fn`.
static FOPS: Fops = fops(
    None,
    // SAFETY: `__this_module` is this module's `struct module`.
    unsafe { super::param::__this_module.get() },
);

/// The table of zoned disks.
#[cfg(CONFIG_BLK_DEV_ZONED)]
static ZONED_FOPS: Fops = fops(
    Some(zoned::report_zones_callback),
    // SAFETY: as for `FOPS`.
    unsafe { super::param::__this_module.get() },
);

static DISK_LOCK_CLASS: LockClass = LockClass::new();

// `blk_features_t` bits that bindgen does not export (`BLK_FEAT_*` are
// `(__force blk_features_t)(1u << n)` in include/linux/blkdev.h).
/// `BLK_FEAT_WRITE_CACHE`: a volatile write cache, so flushes reach the driver.
const BLK_FEAT_WRITE_CACHE: u32 = 1 << 0;
/// `BLK_FEAT_FUA`: forced unit access writes.
const BLK_FEAT_FUA: u32 = 1 << 1;

/// The longest disk name: `DISK_NAME_LEN` less its NUL.
pub(crate) const DISK_NAME_MAX: usize = bindings::DISK_NAME_LEN as usize - 1;

/// The limits and features of a disk, set before it is built (upstream's
/// `GenDiskBuilder`).
pub(crate) struct DiskBuilder {
    capacity_sectors: u64,
    block_size: u32,
    max_sectors: u32,
    rotational: bool,
    discard: bool,
    write_zeroes: bool,
    write_cache: bool,
    fua: bool,
    virt_boundary: bool,
    waker: Option<(Arc<QueueWaker>, usize)>,
    /// A zoned disk's limits and `report_zones` hook, with the type of
    /// the hook's driver.
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    zoned: Option<(ZoneLimits, &'static Hook, core::any::TypeId)>,
}

impl Default for DiskBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl DiskBuilder {
    /// A 0-sector disk with 512-byte blocks and the block layer's defaults.
    pub(crate) fn new() -> Self {
        Self {
            capacity_sectors: 0,
            block_size: 512,
            max_sectors: 0,
            rotational: false,
            discard: false,
            write_zeroes: false,
            write_cache: false,
            fua: false,
            virt_boundary: false,
            waker: None,
            #[cfg(CONFIG_BLK_DEV_ZONED)]
            zoned: None,
        }
    }

    /// A host-managed zoned disk with `limits`, whose zones `T` reports;
    /// [`build`](Self::build) must then be for the same `T`.
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    pub(crate) fn zoned<T: ReportZones>(mut self, limits: ZoneLimits) -> Self {
        self.zoned = Some((limits, HookFor::<T>::get(), core::any::TypeId::of::<T>()));
        self
    }

    /// Size in 512-byte sectors.
    pub(crate) fn capacity_sectors(mut self, sectors: u64) -> Self {
        self.capacity_sectors = sectors;
        self
    }

    /// Logical and physical block size: a power of two from 512 bytes to a
    /// page, as `blk_validate_limits` requires.
    pub(crate) fn block_size(mut self, bytes: u32) -> Result<Self> {
        if !bytes.is_power_of_two() || !(512..=bindings::PAGE_SIZE as u32).contains(&bytes) {
            return Err(EINVAL);
        }
        self.block_size = bytes;
        Ok(self)
    }

    /// Largest request in 512-byte sectors (0: the block layer's default).
    pub(crate) fn max_sectors(mut self, sectors: u32) -> Self {
        self.max_sectors = sectors;
        self
    }

    /// Report a rotational device.
    pub(crate) fn rotational(mut self, rotational: bool) -> Self {
        self.rotational = rotational;
        self
    }

    /// Accept discard requests.
    pub(crate) fn discard(mut self, discard: bool) -> Self {
        self.discard = discard;
        self
    }

    /// Accept write-zeroes requests.
    pub(crate) fn write_zeroes(mut self, write_zeroes: bool) -> Self {
        self.write_zeroes = write_zeroes;
        self
    }

    /// Report a volatile write cache, so flushes reach the driver.
    pub(crate) fn write_cache(mut self, write_cache: bool) -> Self {
        self.write_cache = write_cache;
        self
    }

    /// With a write cache, report FUA too (without it the block layer
    /// turns a FUA write into a write and a flush).
    pub(crate) fn fua(mut self, fua: bool) -> Self {
        self.fua = fua;
        self
    }

    /// Require a virtual boundary of a page: no gap inside a page between
    /// a request's segments (`virt_boundary_mask = PAGE_SIZE - 1`, as
    /// null_blk's `virt_boundary`).
    pub(crate) fn virt_boundary(mut self, virt_boundary: bool) -> Self {
        self.virt_boundary = virt_boundary;
        self
    }

    /// Let `waker` re-run the disk's hardware queues under `index`.
    pub(crate) fn waker(mut self, waker: Arc<QueueWaker>, index: usize) -> Self {
        self.waker = Some((waker, index));
        self
    }

    fn limits(&self) -> bindings::queue_limits {
        // SAFETY: all-zero is a valid `queue_limits`: zero means "default" for
        // every field `blk_mq_alloc_disk` validates.
        let mut lim: bindings::queue_limits = unsafe { core::mem::zeroed() };
        lim.logical_block_size = self.block_size;
        lim.physical_block_size = self.block_size;
        lim.max_hw_sectors = self.max_sectors;
        if self.rotational {
            lim.features |= bindings::BLK_FEAT_ROTATIONAL;
        }
        // BLK_FEAT_WRITE_CACHE and BLK_FEAT_FUA, not exported to bindings.
        if self.write_cache {
            lim.features |= BLK_FEAT_WRITE_CACHE;
            if self.fua {
                lim.features |= BLK_FEAT_FUA;
            }
        }
        if self.discard {
            lim.max_hw_discard_sectors = u32::MAX >> 9;
        }
        if self.write_zeroes {
            lim.max_write_zeroes_sectors = u32::MAX >> 9;
        }
        if self.virt_boundary {
            lim.virt_boundary_mask = (bindings::PAGE_SIZE - 1) as _;
        }
        #[cfg(CONFIG_BLK_DEV_ZONED)]
        if let Some((limits, _, _)) = &self.zoned {
            limits.apply(&mut lim);
        }
        lim
    }

    /// Allocates and registers the disk `name` on `tagset`, with
    /// `queue_data` lent to every callback of its queue and the sysfs files
    /// of [`DiskFiles`]. `name` is the disk's name as is (any bytes but
    /// NUL, as C's `disk_name`), at most [`DISK_NAME_MAX`] of them: a
    /// longer or empty one is refused with `EINVAL` (the caller shortens
    /// it if it wants to).
    pub(crate) fn build<T: DiskFiles>(
        self,
        name: &[u8],
        tagset: Arc<TagSet<T>>,
        queue_data: T::QueueData,
    ) -> Result<Disk<T>> {
        if name.is_empty() || name.len() > DISK_NAME_MAX || name.contains(&0) {
            return Err(EINVAL);
        }
        let mut disk_name = [0u8; bindings::DISK_NAME_LEN as usize];
        disk_name[..name.len()].copy_from_slice(name);
        // The hook reads the queue data as a `T::QueueData`.
        #[cfg(CONFIG_BLK_DEV_ZONED)]
        if let Some((_, _, ty)) = &self.zoned {
            if *ty != core::any::TypeId::of::<T>() {
                return Err(EINVAL);
            }
        }
        let mut lim = self.limits();
        // Held until the disk is counted: no change of the set's hardware
        // queues meets a disk half made.
        let mut disks = tagset.disks();

        // Owns the queue data until the `Disk` does.
        struct QueueDataGuard<T: Operations>(*const c_void, core::marker::PhantomData<T>);
        impl<T: Operations> Drop for QueueDataGuard<T> {
            fn drop(&mut self) {
                // SAFETY: the pointer came from `into_foreign` below and
                // nothing uses it any more.
                drop(unsafe { T::QueueData::from_foreign(self.0) });
            }
        }
        let queue_data = QueueDataGuard::<T>(queue_data.into_foreign(), core::marker::PhantomData);
        let ptr = queue_data.0;

        // SAFETY: `ptr` is the queue data, live until `queue_data` drops.
        let group =
            DiskGroup::<T>::new(|id| T::has_file(unsafe { T::QueueData::borrow(ptr) }, id))?;

        // The tag set outlives the disk (`Disk` keeps an `Arc`) and the queue
        // data stays valid until it is released after `put_disk`.
        // SAFETY: as above; `lim` is valid for the call.
        let gendisk = from_err_ptr(unsafe {
            bindings::__blk_mq_alloc_disk(
                tagset.as_raw(),
                &mut lim,
                ptr.cast_mut(),
                DISK_LOCK_CLASS.as_ptr(),
            )
        })?;
        // SAFETY: `from_err_ptr` succeeded, so the pointer is not null.
        let gendisk = unsafe { NonNull::new_unchecked(gendisk) };
        let g = gendisk.as_ptr();

        // Registered before the disk is added: adding it already scans
        // partitions, whose reads may be refused a host tag and need the
        // wake-up.
        if let Some((waker, index)) = &self.waker {
            // SAFETY: the queue lives until `put_disk`; every path below
            // unregisters it before that (`Disk::drop`, or the failure path).
            unsafe { waker.register(*index, (*g).queue) };
        }
        let unregister = |waker: &Option<(Arc<QueueWaker>, usize)>| {
            if let Some((waker, index)) = waker {
                waker.unregister(*index);
            }
        };

        // SAFETY: `g` is a freshly allocated, unregistered disk that nothing
        // else uses yet; `FOPS` is static.
        unsafe { (*g).fops = &FOPS.0 };
        // SAFETY: as above; `disk_name` fits and is NUL-terminated.
        let dst = unsafe { &mut (*g).disk_name };
        for (dst, src) in dst.iter_mut().zip(disk_name.iter()) {
            *dst = *src as _;
        }
        // SAFETY: `g` is live.
        unsafe { bindings::set_capacity(g, self.capacity_sectors) };
        #[cfg(CONFIG_BLK_DEV_ZONED)]
        if let Some((_, hook, _)) = &self.zoned {
            // The hook is `T`'s (checked above), whose queue data `g` carries.
            // SAFETY: `g` is not added yet, nothing else uses it; the
            // hook and the table are static.
            let revalidated = unsafe {
                (*g).fops = &ZONED_FOPS.0;
                (*g).private_data = core::ptr::from_ref::<Hook>(hook).cast_mut().cast();
                zoned::revalidate(g)
            };
            if let Err(e) = revalidated {
                unregister(&self.waker);
                // SAFETY: as for a failed add below.
                unsafe { bindings::put_disk(g) };
                return Err(e);
            }
        }
        // SAFETY: `g` is ready to be added; the group outlives the registration (`Disk` drops it
        // after `del_gendisk`, and a failed add removes what it created before returning).
        let added = to_result(unsafe {
            bindings::device_add_disk(core::ptr::null_mut(), g, group.as_groups())
        });
        if let Err(e) = added {
            unregister(&self.waker);
            // SAFETY: the disk was never added; dropping our reference frees it and its queue,
            // after which the queue data (dropped on return) is unused.
            unsafe { bindings::put_disk(g) };
            return Err(e);
        }

        *disks += 1;
        drop(disks);
        // INVARIANT: the disk is added and carries the queue data, whose
        // ownership moves to the `Disk`; the waker slot, if any, is ours;
        // the set counts the disk.
        let mut disk = Disk {
            hctx_files: KVec::new(),
            gendisk,
            queue_data: core::mem::ManuallyDrop::new(queue_data).0,
            _group: group,
            waker: self.waker,
            tagset,
        };
        disk.add_hctx_files()?;
        Ok(disk)
    }
}

/// A registered disk whose queue carries a `T::QueueData`.
///
/// # Invariants
///
/// `gendisk` was added with `device_add_disk` with `_group`'s files, and its
/// queue's `queuedata` is `queue_data`, a pointer from `into_foreign`; both
/// are released on drop. The number of hardware queues changes only in
/// [`Disk::update_hw_queues`], with the queue frozen and out of the waker,
/// and the hctx files removed first, so the hctx kobjects and the waker's
/// walk of `hctx_table` stay valid while used. `hctx_files` are on the
/// disk's hardware queue directories and read `queue_data`. `tagset`
/// counts the disk in its `disks`.
pub(crate) struct Disk<T: DiskFiles> {
    hctx_files: KVec<Attr<HctxFile<T>>>,
    gendisk: NonNull<bindings::gendisk>,
    queue_data: *const c_void,
    _group: DiskGroup<T>,
    waker: Option<(Arc<QueueWaker>, usize)>,
    tagset: Arc<TagSet<T>>,
}

// SAFETY: the block layer synchronises access to the gendisk; the queue data
// is `Send + Sync`.
unsafe impl<T: DiskFiles> Send for Disk<T> {}
// SAFETY: as above; shared references only read the raw pointers.
unsafe impl<T: DiskFiles> Sync for Disk<T> {}

impl<T: DiskFiles> Disk<T> {
    /// Changes the disk's hardware queues to `counts`
    /// (`blk_mq_update_nr_hw_queues`): new contexts get `init_hctx`, gone
    /// ones `exit_hctx`, `map_queues` maps them. The disk must be its tag
    /// set's only one (`EINVAL` otherwise). The queue is frozen first (every
    /// request in flight ends; a request waiting for another disk's tag is
    /// still woken), then taken out of the waker and its hctx files removed
    /// while blk-mq replaces the hardware queue directories; both come back
    /// after, all allocations of the frozen section being `GFP_NOIO`.
    /// `EINVAL`/`ENOMEM` as [`TagSet::update_counts`], with the old
    /// queues kept. Files that cannot be made again (no memory) are logged
    /// and left out; the change stands.
    pub(crate) fn update_hw_queues(&mut self, counts: QueueCounts) -> Result {
        let tagset = self.tagset.clone();
        let disks = tagset.disks();
        if *disks != 1 {
            return Err(EINVAL);
        }
        // Nothing to change: no freeze (a write of the current value must
        // not wait for the queue's requests).
        if tagset.has_counts(counts) {
            return Ok(());
        }
        // SAFETY: the disk is registered (type invariant), so is its queue.
        let q = unsafe { (*self.gendisk.as_ptr()).queue };
        // SAFETY: `q` is live; freezing waits for its requests and may
        // sleep, which this process context allows. Unfrozen below.
        unsafe { bindings::blk_mq_freeze_queue(q) };
        // Until unfrozen, no allocation may start I/O: reclaim writing back
        // to this disk would wait for the freeze. `init_hctx` allocates
        // with `GFP_NOIO`, but blk-mq's hardware queue directories and our
        // files in them are made with `GFP_KERNEL`.
        let noio = NoIoScope::new();
        if let Some((waker, index)) = &self.waker {
            waker.unregister(*index);
        }
        // Before blk-mq deletes their directories.
        drop(core::mem::take(&mut self.hctx_files));
        // `disks` is this set's own guard (taken above); the disk, the
        // set's only one, is out of the waker, its hctx files gone.
        // SAFETY: as above.
        let updated = unsafe { tagset.update_counts(&disks, counts) };
        let files = self.add_hctx_files();
        if let Some((waker, index)) = &self.waker {
            // SAFETY: the queue lives until `put_disk`; `drop` unregisters
            // before that.
            unsafe { waker.register(*index, q) };
        }
        drop(noio);
        // SAFETY: frozen above.
        unsafe { bindings::blk_mq_unfreeze_queue(q) };
        if let Err(e) = files {
            pr_err!(
                "{}: some hardware queue files could not be made again after changing the queues ({}); the change stands without them\n",
                self.name(),
                Errno(e)
            );
        }
        updated
    }

    /// The disk's name, as the driver gave it.
    fn name(&self) -> &str {
        // SAFETY: the disk is registered (type invariant): its name is
        // fixed, NUL-terminated within the array, and lives with `self`.
        let name = unsafe { &(*self.gendisk.as_ptr()).disk_name };
        // SAFETY: `c_char` and `u8` have the same size and alignment.
        let bytes = unsafe { core::slice::from_raw_parts(name.as_ptr().cast::<u8>(), name.len()) };
        let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        core::str::from_utf8(&bytes[..len]).unwrap_or("?")
    }

    /// Adds `T::HCTX_FILES` to every hardware queue directory
    /// (`/sys/block/<disk>/mq/<n>/`).
    fn add_hctx_files(&mut self) -> Result {
        // SAFETY: the disk is registered, so its queue and the queue's
        // hardware context table are live as long as `self`.
        let (q, nr) = unsafe {
            let q = (*self.gendisk.as_ptr()).queue;
            (q, (*q).nr_hw_queues)
        };
        let queue_data = NonNull::new(self.queue_data.cast_mut()).ok_or(EINVAL)?;
        self.hctx_files
            .reserve(nr as usize * T::HCTX_FILES.len(), GFP_KERNEL)?;
        for i in 0..nr {
            // SAFETY: `hctx_table` holds the contexts 0..nr_hw_queues while registered.
            let hctx =
                unsafe { bindings::xa_load(core::ptr::addr_of_mut!((*q).hctx_table), i as usize) }
                    .cast::<bindings::blk_mq_hw_ctx>();
            let Some(hctx) = NonNull::new(hctx) else {
                continue;
            };
            // SAFETY: `hctx` is live while the disk is registered.
            let kobj =
                unsafe { NonNull::new_unchecked(core::ptr::addr_of_mut!((*hctx.as_ptr()).kobj)) };
            for (id, spec) in T::HCTX_FILES.iter().enumerate() {
                // SAFETY: the queue data outlives the file: `drop` removes
                // the files before releasing it.
                let ops = unsafe { HctxFile::new(queue_data, i, id) };
                // SAFETY: the hardware queue's kobject lives until
                // `del_gendisk`; `drop` removes the files before that.
                let file = unsafe { Attr::new(kobj, spec.name, spec.mode, ops) }?;
                self.hctx_files.push(file, GFP_KERNEL)?;
            }
        }
        Ok(())
    }
}

impl<T: DiskFiles> Drop for Disk<T> {
    fn drop(&mut self) {
        // Before their kobjects and the queue data they read go away.
        drop(core::mem::take(&mut self.hctx_files));
        // After `del_gendisk` no request reaches the driver and no sysfs
        // callback runs. It drains the queue with the waker still on: a
        // request refused a host tag is dispatched again only by a wake-up
        // (see `wake`). Then completions of other disks must not re-run
        // this queue any more; `put_disk` drops our reference, the queue
        // data is then unused and released. The group's storage drops
        // after this.
        // SAFETY: as above; the disk is added (type invariant).
        unsafe { bindings::del_gendisk(self.gendisk.as_ptr()) };
        if let Some((waker, index)) = &self.waker {
            waker.unregister(*index);
        }
        // SAFETY: as above.
        unsafe {
            bindings::put_disk(self.gendisk.as_ptr());
            drop(T::QueueData::from_foreign(self.queue_data));
        }
        // The set counts the disk (type invariant).
        *self.tagset.disks() -= 1;
    }
}
