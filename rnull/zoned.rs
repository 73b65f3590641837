// SPDX-License-Identifier: GPL-2.0

//! Zoned mode (`zoned=1`, `CONFIG_BLK_DEV_ZONED`): rzone's zones on the
//! request path and in `report_zones`, with null_blk's rules
//! (`drivers/block/null_blk/zoned.c`).

use crate::{
    blk_ops::DISPATCH_AGAIN,
    device_data::{DevZones, DeviceData, RNullOps},
    kapi::{
        dispatch::Dispatch,
        operations::ForeignBorrowed,
        request::{Op, Request, Status},
        zoned::{ReportZones, Reporter, ZoneLimits, ZoneReport},
    },
    rzone::{
        cond::{Cond, Status as ZoneStatus},
        config::Geometry,
        zones::CondError,
    },
};
use kernel::prelude::*;

/// How often an operation that met another's half-done step (rzone's
/// `Busy`) is retried at once before the request is given back to blk-mq
/// to be dispatched again.
const BUSY_SPINS: u32 = 64;

/// The queue limits of `geo`.
pub(crate) fn limits(geo: &Geometry) -> Result<ZoneLimits> {
    Ok(ZoneLimits {
        zone_sectors: u32::try_from(geo.zone_sectors).map_err(|_| EINVAL)?,
        max_open: geo.max_open,
        max_active: geo.max_active,
        max_append: geo.append_max_sectors,
    })
}

/// The `blk_status_t` of an rzone refusal; `Busy` has the request
/// dispatched again at once, on its own path (not counted as short of
/// memory, never ended for it).
fn status(s: ZoneStatus) -> Status {
    match s {
        ZoneStatus::IoErr => Status::IO_ERROR,
        ZoneStatus::ZoneOpenResource => Status::ZONE_OPEN_RESOURCE,
        ZoneStatus::ZoneActiveResource => Status::ZONE_ACTIVE_RESOURCE,
        ZoneStatus::Busy => DISPATCH_AGAIN,
    }
}

/// Runs `f` until it is not `Busy`, [`BUSY_SPINS`] times at most: the
/// other thread is a few instructions from its next step.
fn retry<T>(f: impl FnMut() -> Result<T, ZoneStatus>) -> Result<T, ZoneStatus> {
    retry_busy(ZoneStatus::Busy, f)
}

/// Runs `f` until its error is not `busy`, [`BUSY_SPINS`] times at most.
fn retry_busy<T, E: PartialEq>(busy: E, mut f: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let mut r = f();
    for _ in 0..BUSY_SPINS {
        if !matches!(&r, Err(e) if *e == busy) {
            break;
        }
        core::hint::spin_loop();
        r = f();
    }
    r
}

impl DeviceData {
    /// Carries out a started request on a zoned device: the zone state
    /// machine first, then the data as on any device.
    pub(crate) fn execute_zoned(
        &self,
        zones: &DevZones,
        ctx: &Dispatch<'_>,
        rq: &Request<RNullOps>,
    ) -> Status {
        let info = rq.info();
        let nr = u64::from(info.bytes >> 9);
        let done = match info.op {
            Op::Write | Op::ZoneAppend => {
                let append = info.op == Op::ZoneAppend;
                // As null_blk's: a write that touches a bad block fails
                // before its zone's write pointer moves.
                if self.hits_bad_block(zones, info.sector, info.bytes >> 9, append) {
                    return Status::IO_ERROR;
                }
                let written = match retry(|| zones.write(info.sector, nr, append)) {
                    Ok(w) => w,
                    Err(e) => return status(e),
                };
                if append {
                    rq.set_sector(written.sector);
                }
                let st = self.execute_data(ctx, rq, info.op);
                zones.write_done(written);
                // The write pointer has moved: a retry of the request
                // would be off it (a write) or land twice (an append).
                if st == Status::RESOURCE {
                    return Status::IO_ERROR;
                }
                return st;
            }
            Op::Read => match zones.read(info.sector, nr) {
                Ok(_) => return self.execute_data(ctx, rq, info.op),
                Err(e) => Err(e),
            },
            Op::ZoneOpen => retry(|| zones.open(info.sector)),
            Op::ZoneClose => retry(|| zones.close(info.sector)),
            Op::ZoneFinish => retry(|| zones.finish(info.sector)),
            Op::ZoneReset => retry(|| zones.reset(info.sector, |s, l| self.discard_zone(s, l))),
            Op::ZoneResetAll => retry(|| zones.reset_all(|s, l| self.discard_zone(s, l))),
            _ => return self.execute_data(ctx, rq, info.op),
        };
        match done {
            Ok(()) => Status::OK,
            Err(e) => status(e),
        }
    }

    /// Whether a write of `sectors` at `sector` (an append: at its zone's
    /// write pointer, as it is now; a racing append to the same zone may
    /// move it) touches a bad block, which `badblocks_once` then forgets.
    fn hits_bad_block(&self, zones: &DevZones, sector: u64, sectors: u32, append: bool) -> bool {
        let Some(bb) = &self.badblocks else {
            return false;
        };
        let at = if append {
            let zno = zones.geometry().zone_no(sector);
            match u32::try_from(zno).ok().and_then(|z| zones.report(z)) {
                Some(z) => z.wp,
                None => return false,
            }
        } else {
            sector
        };
        let Some(bad) = bb.check(at, sectors) else {
            return false;
        };
        if self.config.badblocks_once {
            bb.forget(bad);
        }
        true
    }

    /// `zone_readonly` or `zone_offline` (`cond`) for the zone of
    /// `sector` (null_blk's `zone_cond_store()`), retried as a request
    /// is while another operation holds the zone.
    /// `None` if the device is not zoned.
    pub(crate) fn set_zone_cond(&self, sector: u64, cond: Cond) -> Option<Result<(), CondError>> {
        let zones = self.zones.as_ref()?;
        Some(retry_busy(CondError::Busy, || {
            zones.set_cond(sector, cond, |s, l| self.discard_zone(s, l))
        }))
    }

    /// Drops the data of `len` sectors from `start` (a reset zone's),
    /// write cache included.
    pub(crate) fn discard_zone(&self, start: u64, len: u64) {
        let Some(store) = &self.store else {
            return;
        };
        // The page store counts bytes in a `u32`.
        const CHUNK: u64 = 1 << 22;
        let mut sector = start;
        while sector < start + len {
            let n = CHUNK.min(start + len - sector);
            let bytes = (n << 9) as u32;
            match &self.cache {
                Some(cache) => cache.discard(store, sector, bytes),
                None => store.discard(sector, bytes),
            }
            sector += n;
        }
    }
}

impl ReportZones for RNullOps {
    fn report_zones(
        queue: ForeignBorrowed<'_, Self::QueueData>,
        sector: u64,
        nr_zones: u32,
        reporter: &mut Reporter,
    ) -> Result {
        let Some(zones) = &queue.zones else {
            return Err(EINVAL);
        };
        let geo = zones.geometry();
        let first = geo.zone_no(sector);
        let end = first
            .saturating_add(u64::from(nr_zones))
            .min(u64::from(geo.nr_zones));
        for zno in first..end {
            let Some(z) = zones.report(zno as u32) else {
                break;
            };
            reporter.emit(&ZoneReport {
                start: z.start,
                len: z.len,
                capacity: z.capacity,
                wp: z.wp,
                ty: z.ty as u8,
                cond: z.cond as u8,
            })?;
        }
        Ok(())
    }
}
