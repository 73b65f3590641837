// SPDX-License-Identifier: GPL-2.0

//! Zoned block devices (`CONFIG_BLK_DEV_ZONED`): the queue limits of a
//! host-managed zoned disk, the `report_zones` callback and
//! `blk_revalidate_disk_zones`.
//!
//! The zone state machine itself is safe Rust (`crate::rzone`); this
//! module only carries its reports across the C boundary.

use super::operations::{ForeignBorrowed, Operations};
use core::{ffi::c_void, marker::PhantomData};
use kernel::{bindings, error::to_result, prelude::*, types::ForeignOwnable};

/// `BLK_FEAT_ZONED` (`include/linux/blkdev.h`), not exported to bindings.
const BLK_FEAT_ZONED: u32 = 1 << 10;

/// The queue limits of a zoned disk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ZoneLimits {
    /// Zone size in sectors (a power of two): `chunk_sectors`.
    pub(crate) zone_sectors: u32,
    /// `max_open_zones`, 0 for no limit.
    pub(crate) max_open: u32,
    /// `max_active_zones`, 0 for no limit.
    pub(crate) max_active: u32,
    /// `max_zone_append_sectors`, 0 to have the block layer emulate zone
    /// append.
    pub(crate) max_append: u32,
}

impl ZoneLimits {
    /// Sets the limits of a host-managed zoned disk in `lim`.
    pub(super) fn apply(&self, lim: &mut bindings::queue_limits) {
        lim.features |= BLK_FEAT_ZONED;
        lim.chunk_sectors = self.zone_sectors;
        lim.max_open_zones = self.max_open;
        lim.max_active_zones = self.max_active;
        lim.max_zone_append_sectors = self.max_append;
    }
}

/// One zone of a report (a `struct blk_zone`); `ty` and `cond` are the
/// `blk_zone_type` and `blk_zone_cond` values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ZoneReport {
    pub(crate) start: u64,
    pub(crate) len: u64,
    pub(crate) capacity: u64,
    pub(crate) wp: u64,
    pub(crate) ty: u8,
    pub(crate) cond: u8,
}

/// Hands the zones of a `report_zones` call to the block layer's callback.
///
/// # Invariants
///
/// `cb` and `data` are the callback and its data of the `report_zones`
/// call this reporter lives in.
pub(crate) struct Reporter {
    cb: unsafe extern "C" fn(*mut bindings::blk_zone, u32, *mut c_void) -> i32,
    data: *mut c_void,
    idx: u32,
}

impl Reporter {
    /// Reports `z` as the next zone; the callback's error ends the report.
    pub(crate) fn emit(&mut self, z: &ZoneReport) -> Result {
        // A local copy: stacked targets (dm) rewrite what they are given.
        let mut blkz = bindings::blk_zone {
            start: z.start,
            len: z.len,
            wp: z.wp,
            type_: z.ty,
            cond: z.cond,
            capacity: z.capacity,
            ..Default::default()
        };
        // SAFETY: `cb` and `data` are those of the running `report_zones`
        // call (type invariant); `blkz` is valid for the call.
        let ret = unsafe { (self.cb)(&mut blkz, self.idx, self.data) };
        to_result(ret)?;
        self.idx += 1;
        Ok(())
    }

    /// Zones reported so far.
    pub(crate) fn count(&self) -> u32 {
        self.idx
    }
}

/// What a driver of zoned disks implements.
pub(crate) trait ReportZones: Operations {
    /// Reports at most `nr_zones` zones from the one holding `sector`
    /// through `reporter` (nothing past the last zone).
    fn report_zones(
        queue: ForeignBorrowed<'_, Self::QueueData>,
        sector: u64,
        nr_zones: u32,
        reporter: &mut Reporter,
    ) -> Result;
}

/// How the zoned disks' one `report_zones` callback finds its driver:
/// the disk's `private_data` points to the [`Hook`] of its `T`.
pub(super) struct Hook {
    /// [`ReportZones::report_zones`] of `T`, on the queue data of a disk.
    ///
    /// # Safety
    ///
    /// The disk must be live with its queue data set, a `T::QueueData`.
    report: unsafe fn(*mut bindings::gendisk, u64, u32, &mut Reporter) -> Result,
}

/// The [`Hook`] of `T`.
pub(super) struct HookFor<T: ReportZones>(PhantomData<T>);

impl<T: ReportZones> HookFor<T> {
    const HOOK: Hook = Hook {
        report: Self::report,
    };

    /// The hook, for the disk's `private_data`.
    pub(super) fn get() -> &'static Hook {
        &Self::HOOK
    }

    /// # Safety
    ///
    /// `disk` must be live, its queue's `queuedata` a `T::QueueData` from
    /// `into_foreign` that outlives the call.
    unsafe fn report(
        disk: *mut bindings::gendisk,
        sector: u64,
        nr_zones: u32,
        reporter: &mut Reporter,
    ) -> Result {
        // SAFETY: guaranteed by the caller.
        let queue = unsafe { T::QueueData::borrow((*(*disk).queue).queuedata) };
        T::report_zones(queue, sector, nr_zones, reporter)
    }
}

/// `block_device_operations.report_zones` of every zoned disk.
///
/// # Safety
///
/// Called by the block layer with a live disk made by
/// [`super::disk::DiskBuilder`] with zone limits (its `private_data` a
/// [`Hook`], its queue data set until the disk is released) and the
/// callback and data of this report.
pub(super) unsafe extern "C" fn report_zones_callback(
    disk: *mut bindings::gendisk,
    sector: bindings::sector_t,
    nr_zones: u32,
    cb: bindings::report_zones_cb,
    data: *mut c_void,
) -> i32 {
    let Some(cb) = cb else {
        return EINVAL.to_errno();
    };
    // SAFETY: guaranteed by the caller: `private_data` is a `&'static
    // Hook`.
    let hook = unsafe { &*(*disk).private_data.cast::<Hook>() };
    // INVARIANT: `cb` and `data` are this call's.
    let mut reporter = Reporter { cb, data, idx: 0 };
    // SAFETY: the disk is live with its queue data (caller), of the type
    // the hook was made for.
    match unsafe { (hook.report)(disk, sector, nr_zones, &mut reporter) } {
        Ok(()) => reporter.count() as i32,
        Err(e) => e.to_errno(),
    }
}

/// `blk_revalidate_disk_zones`: the block layer reads the zones (through
/// `report_zones`) and sets up its zone resources.
///
/// # Safety
///
/// `disk` must be a live disk with zoned limits, the zoned fops and its
/// [`Hook`], whose queue data is set.
pub(super) unsafe fn revalidate(disk: *mut bindings::gendisk) -> Result {
    // SAFETY: guaranteed by the caller.
    to_result(unsafe { bindings::blk_revalidate_disk_zones(disk) })
}
