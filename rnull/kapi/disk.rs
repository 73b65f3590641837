// SPDX-License-Identifier: GPL-2.0

//! Disks (`struct gendisk`) on a [`TagSet`].

use super::{
    fmt::BufWriter,
    lock_class::LockClass,
    tagset::{Operations, TagSet},
    wake::QueueWaker,
};
use core::{ffi::c_void, fmt::Write, ptr::NonNull};
use kernel::{
    bindings,
    error::{from_err_ptr, to_result},
    prelude::*,
    sync::Arc,
    types::ForeignOwnable,
};

/// The geometry and features of a disk.
pub(crate) struct DiskConfig {
    /// The `N` of `rnullbN`.
    pub(crate) index: u32,
    /// Size in 512-byte sectors.
    pub(crate) capacity_sectors: u64,
    /// Logical (and physical) block size in bytes.
    pub(crate) block_size: u32,
    /// Largest request in 512-byte sectors.
    pub(crate) max_sectors: u32,
    /// Report a rotational device.
    pub(crate) rotational: bool,
    /// Accept discard and write-zeroes requests.
    pub(crate) discard: bool,
    /// Report a volatile write cache, so flushes reach the driver.
    pub(crate) write_cache: bool,
}

/// `block_device_operations` with the owner set, which 6.12's Rust `GenDisk`
/// leaves NULL: with it, opening the disk pins the module, so `rmmod` of an
/// open device fails with EBUSY instead of freeing code still in use.
struct Fops(bindings::block_device_operations);

// SAFETY: the table is immutable and only read by the block layer.
unsafe impl Sync for Fops {}

static FOPS: Fops = Fops(bindings::block_device_operations {
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
    report_zones: None,
    devnode: None,
    alternative_gpt_sector: None,
    get_unique_id: None,
    // SAFETY: `__this_module` is this module's `struct module`.
    owner: unsafe { super::param::__this_module.get() },
    pr_ops: core::ptr::null_mut(),
    free_disk: None,
    poll_bio: None,
});

static DISK_LOCK_CLASS: LockClass = LockClass::new();

/// A registered disk whose queue carries an `Arc<T::QueueData>`.
///
/// # Invariants
///
/// `gendisk` was added with `device_add_disk` and its queue's `queuedata` is
/// `queue_data`, a pointer from `Arc::into_foreign`; both are released on drop.
pub(crate) struct Disk<T: Operations> {
    gendisk: NonNull<bindings::gendisk>,
    queue_data: *const c_void,
    waker: Option<(Arc<QueueWaker>, usize)>,
    _tagset: Arc<TagSet<T>>,
}

// SAFETY: the block layer synchronises access to the gendisk; the queue data
// is `Send + Sync`.
unsafe impl<T: Operations> Send for Disk<T> {}
// SAFETY: as above; shared references only read the raw pointers.
unsafe impl<T: Operations> Sync for Disk<T> {}

impl<T: Operations> Disk<T> {
    /// Allocates and registers `rnullb<index>` on `tagset`.
    pub(crate) fn new(
        tagset: Arc<TagSet<T>>,
        queue: Arc<T::QueueData>,
        config: &DiskConfig,
        waker: Option<Arc<QueueWaker>>,
    ) -> Result<Self> {
        // SAFETY: all-zero is a valid `queue_limits`: zero means "default" for
        // every field `blk_mq_alloc_disk` validates.
        let mut lim: bindings::queue_limits = unsafe { core::mem::zeroed() };
        lim.logical_block_size = config.block_size;
        lim.physical_block_size = config.block_size;
        lim.max_hw_sectors = config.max_sectors;
        if config.rotational {
            lim.features |= bindings::BLK_FEAT_ROTATIONAL;
        }
        if config.write_cache {
            // BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA, not exported to bindings.
            lim.features |= 1 | 2;
        }
        if config.discard {
            lim.max_hw_discard_sectors = u32::MAX >> 9;
            lim.max_write_zeroes_sectors = u32::MAX >> 9;
        }

        let queue_data = queue.into_foreign();
        // Gives the queue data back if we fail before the disk owns it.
        let release_queue_data = |ptr: *const c_void| {
            // SAFETY: `ptr` came from `into_foreign` above and nothing uses it anymore.
            drop(unsafe { <Arc<T::QueueData>>::from_foreign(ptr) });
        };

        // The tag set outlives the disk (we keep an `Arc`) and `queue_data`
        // stays valid until we release it after `put_disk`.
        // SAFETY: as above; `lim` is valid for the call.
        let gendisk = match from_err_ptr(unsafe {
            bindings::__blk_mq_alloc_disk(
                tagset.as_raw(),
                &mut lim,
                queue_data as *mut c_void,
                DISK_LOCK_CLASS.as_ptr(),
            )
        }) {
            Ok(g) => g,
            Err(e) => {
                release_queue_data(queue_data);
                return Err(e);
            }
        };

        let mut name = [0u8; 32];
        let mut w = BufWriter::new(&mut name[..31]);
        let named = write!(w, "rnullb{}", config.index);

        let added = named.map_err(|_| EINVAL).and_then(|()| {
            // SAFETY: `gendisk` is a freshly allocated, unregistered disk;
            // `FOPS` is static and `name` NUL-terminated within 32 bytes.
            to_result(unsafe {
                (*gendisk).fops = &FOPS.0;
                for (dst, src) in (*gendisk).disk_name.iter_mut().zip(name.iter()) {
                    *dst = *src as _;
                }
                bindings::set_capacity(gendisk, config.capacity_sectors);
                bindings::device_add_disk(core::ptr::null_mut(), gendisk, core::ptr::null_mut())
            })
        });
        if let Err(e) = added {
            // SAFETY: the disk was never added; dropping our reference frees
            // it and its queue, after which the queue data is unused.
            unsafe { bindings::put_disk(gendisk) };
            release_queue_data(queue_data);
            return Err(e);
        }

        let index = config.index as usize;
        if let Some(w) = &waker {
            // SAFETY: the queue lives until `del_gendisk` in our drop, which
            // unregisters it first.
            unsafe { w.register(index, (*gendisk).queue) };
        }
        // INVARIANT: the disk is added and carries `queue_data`.
        Ok(Self {
            // SAFETY: `from_err_ptr` succeeded, so the pointer is not null.
            gendisk: unsafe { NonNull::new_unchecked(gendisk) },
            queue_data,
            waker: waker.map(|w| (w, index)),
            _tagset: tagset,
        })
    }

    /// The disk's device kobject (`/sys/block/rnullbN`).
    pub(crate) fn kobject(&self) -> super::sysfs::KobjRef<'_> {
        // SAFETY: the disk is registered (type invariant), so `part0` and its
        // device are live as long as `self`.
        unsafe {
            super::sysfs::KobjRef::from_raw(core::ptr::addr_of_mut!(
                (*(*self.gendisk.as_ptr()).part0).bd_device.kobj
            ))
        }
    }

    /// The kobjects of the hardware contexts (`/sys/block/rnullbN/mq/<n>`),
    /// passed to `f` with their index.
    pub(crate) fn for_each_hctx_kobject(
        &self,
        mut f: impl FnMut(u32, super::sysfs::KobjRef<'_>) -> Result,
    ) -> Result {
        // SAFETY: the disk is registered, so its queue and the queue's
        // hardware context table are live as long as `self`.
        let (q, nr) = unsafe {
            let q = (*self.gendisk.as_ptr()).queue;
            (q, (*q).nr_hw_queues)
        };
        for i in 0..nr {
            // SAFETY: `hctx_table` holds the contexts 0..nr_hw_queues while registered.
            let hctx =
                unsafe { bindings::xa_load(core::ptr::addr_of_mut!((*q).hctx_table), i as usize) }
                    .cast::<bindings::blk_mq_hw_ctx>();
            if hctx.is_null() {
                continue;
            }
            // SAFETY: `hctx` is live while the disk is registered.
            let kobj =
                unsafe { super::sysfs::KobjRef::from_raw(core::ptr::addr_of_mut!((*hctx).kobj)) };
            f(i, kobj)?;
        }
        Ok(())
    }
}

impl<T: Operations> Drop for Disk<T> {
    fn drop(&mut self) {
        // Completions of other disks must not re-run this queue any more.
        if let Some((waker, index)) = &self.waker {
            waker.unregister(*index);
        }
        // After `del_gendisk` no request reaches the driver and `put_disk`
        // drops our reference; the queue data is then unused and released.
        // SAFETY: as above; the disk is added (type invariant).
        unsafe {
            bindings::del_gendisk(self.gendisk.as_ptr());
            bindings::put_disk(self.gendisk.as_ptr());
            drop(<Arc<T::QueueData>>::from_foreign(self.queue_data));
        }
    }
}
