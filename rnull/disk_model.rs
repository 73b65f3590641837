// SPDX-License-Identifier: GPL-2.0

//! Service time of a modelled rotational disk with one actuator.
//!
//! A request that starts where the previous one ended costs only the media
//! transfer. Any other request pays a seek, growing with the square root of
//! the distance from track-to-track (`seek_min`) to full stroke
//! (`seek_max`), plus the average rotational latency (half a revolution),
//! plus the transfer. The model is deterministic so that runs compare.

/// Parameters of the model, in nanoseconds and bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DiskModel {
    /// Device size in sectors.
    pub(crate) capacity_sectors: u64,
    /// Track-to-track seek.
    pub(crate) seek_min_ns: u64,
    /// Full-stroke seek.
    pub(crate) seek_max_ns: u64,
    /// Half a revolution (0 for no rotational latency).
    pub(crate) half_rotation_ns: u64,
    /// Media rate in bytes per microsecond (= MB/s).
    pub(crate) bytes_per_us: u64,
    /// Wall-clock ns per modelled ns (`model_time_dilation`, >= 1).
    pub(crate) dilation: u64,
}

impl DiskModel {
    /// The model for `rpm`, seeks in microseconds and a rate in MB/s.
    pub(crate) fn new(
        capacity_sectors: u64,
        seek_min_us: u64,
        seek_max_us: u64,
        rpm: u64,
        mbps: u64,
        dilation: u64,
    ) -> Self {
        Self {
            capacity_sectors: capacity_sectors.max(1),
            seek_min_ns: seek_min_us * 1000,
            seek_max_ns: seek_max_us.max(seek_min_us) * 1000,
            half_rotation_ns: 30_000_000_000u64.checked_div(rpm).unwrap_or(0),
            bytes_per_us: mbps.max(1),
            dilation: dilation.max(1),
        }
    }

    /// Wall-clock duration of `model_ns` of modelled time.
    pub(crate) fn wall_ns(&self, model_ns: u64) -> u64 {
        model_ns.saturating_mul(self.dilation)
    }

    /// Modelled time to serve `bytes` at `sector` with the head after `head`.
    pub(crate) fn service_ns(&self, head: u64, sector: u64, bytes: u32) -> u64 {
        let transfer = u64::from(bytes) * 1000 / self.bytes_per_us;
        if sector == head {
            return transfer;
        }
        let distance = sector.abs_diff(head).min(self.capacity_sectors);
        // sqrt(distance / capacity) in 1/1024ths.
        let frac = isqrt((distance << 20) / self.capacity_sectors);
        let seek = self.seek_min_ns + (self.seek_max_ns - self.seek_min_ns) * frac / 1024;
        seek + self.half_rotation_ns + transfer
    }
}

/// Integer square root (floor).
fn isqrt(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let mut x = n;
    let mut y = x.div_ceil(2);
    while y < x {
        x = y;
        y = (x + n / x) / 2;
    }
    x
}
