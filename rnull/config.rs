// SPDX-License-Identifier: GPL-2.0

//! The configuration of one load, read once from the module parameters.

use crate::{
    kapi::{fmt::Errno, numa, param::IntParam},
    params,
    rdisk::{disk::DiskParams, slice::SliceStart},
    rtags::policy::Policy,
    rzone::config::ZonedParams,
};
use kernel::{prelude::*, str::CStr};

/// How requests complete.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum IrqMode {
    /// In `queue_rq` itself.
    None,
    /// Through `blk_mq_complete_request` and the `complete` callback.
    Softirq,
    /// From a per-request hrtimer after `completion_nsec`.
    Timer,
}

/// Everything a device needs to know about its setup.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Config {
    pub(crate) nr_devices: u32,
    pub(crate) submit_queues: u32,
    /// Hardware queues for polled I/O, after the submit queues.
    pub(crate) poll_queues: u32,
    pub(crate) hw_queue_depth: u32,
    pub(crate) block_size: u32,
    /// Size in MiB (the module parameter is in GiB, configfs in MiB).
    pub(crate) size_mib: u64,
    pub(crate) irqmode: IrqMode,
    pub(crate) completion_nsec: u64,
    pub(crate) memory_backed: bool,
    /// Write cache in MiB (0: none); only with `memory_backed`.
    pub(crate) cache_size_mib: u64,
    pub(crate) shared_tags: bool,
    pub(crate) blocking: bool,
    pub(crate) rotational: bool,
    /// Accept discard requests (a no-op without memory backing).
    pub(crate) discard: bool,
    /// With a write cache (`memory_backed`), report FUA too.
    pub(crate) fua: bool,
    /// No I/O scheduler (`BLK_MQ_F_NO_SCHED`).
    pub(crate) no_sched: bool,
    /// A bad block heals after failing one request (configfs only).
    pub(crate) badblocks_once: bool,
    /// A request hitting a bad block moves and completes its part before
    /// the block's first sector, then fails (configfs only).
    pub(crate) badblocks_partial_io: bool,
    pub(crate) max_sectors: u32,
    pub(crate) host_queue_depth: u32,
    /// Per device bandwidth limit in MiB/s (0: none).
    pub(crate) mbps: u64,
    /// Host bandwidth limit in MiB/s (0: none).
    pub(crate) host_mbps: u64,
    pub(crate) tag_policy: Policy,
    pub(crate) borrow_expiry_us: u64,
    /// The rotational model's drive, when enabled.
    pub(crate) model: Option<DiskParams>,
    pub(crate) time_slice_us: u64,
    /// When a slice's clock starts.
    pub(crate) time_slice_start: SliceStart,
    pub(crate) inject_timeout_percent: u32,
    pub(crate) inject_requeue_percent: u32,
    pub(crate) rq_timeout_ms: u32,
    /// NUMA node of the tag set (`numa::NO_NODE`: none).
    pub(crate) home_node: i32,
    /// One hardware queue per online node (`submit_queues` is their count).
    pub(crate) use_per_node_hctx: bool,
    /// `virt_boundary_mask` of a page (`PAGE_SIZE - 1`).
    pub(crate) virt_boundary: bool,
    /// One tag bitmap for all hardware queues (`BLK_MQ_F_TAG_HCTX_SHARED`).
    pub(crate) shared_tag_bitmap: bool,
    /// The zoned parameters of a zoned device (`zoned=1`), checked.
    pub(crate) zoned: Option<ZonedParams>,
}

/// Converts a parameter already range-checked at set time.
fn param_u32(v: i64) -> Result<u32> {
    u32::try_from(v).map_err(|_| EINVAL)
}

/// The drive's parameters, each range-checked when it was set; the
/// constraints between them are checked here, when `who` makes a model.
pub(crate) fn disk_params(capacity_sectors: u64, who: Who<'_>) -> Result<DiskParams> {
    let v = |p: &IntParam| u32::try_from(p.get()).map_err(|_| EINVAL);
    let p = DiskParams {
        capacity_sectors,
        rpm: v(&params::RPM)?,
        seek_min_us: v(&params::SEEK_MIN_US)?,
        seek_max_us: v(&params::SEEK_MAX_US)?,
        media_mbps: v(&params::MEDIA_MBPS)?,
        bus_mbps: v(&params::BUS_MBPS)?,
        segments: v(&params::CACHE_SEGMENTS)?,
        segment_kib: v(&params::SEGMENT_KIB)?,
        readahead_min_kib: v(&params::READAHEAD_MIN_KIB)?,
        hit_overhead_ns: v(&params::HIT_OVERHEAD_NS)?,
        ncq_depth: v(&params::NCQ_DEPTH)?,
        ncq_max_wait_ms: v(&params::NCQ_MAX_WAIT_MS)?,
    };
    if let Err(e) = p.validate() {
        pr_err!(
            "{who}rotational_model: {e} (seek_min_us={}, seek_max_us={}, segment_kib={}, readahead_min_kib={}) ({})\n",
            p.seek_min_us,
            p.seek_max_us,
            p.segment_kib,
            p.readahead_min_kib,
            Errno(EINVAL)
        );
        return Err(EINVAL);
    }
    Ok(p)
}

/// Whose setting a log line is about: a configfs directory's
/// (`<subsystem>/<dir>: `) or, for `None`, the module parameter's (nothing).
pub(crate) struct Who<'a>(pub(crate) Option<&'a CStr>);

impl core::fmt::Display for Who<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Some(dir) => write!(f, "{}/{dir}: ", crate::face::CONFIGFS),
            None => Ok(()),
        }
    }
}

/// `poll_queues`, clamped to the `cpus` possible CPUs as `submit_queues`
/// is, with a warning: blk-mq spreads the CPUs over the poll queues, so
/// more would stay unused.
pub(crate) fn clamp_poll_queues(poll_queues: u32, cpus: u32, who: Who<'_>) -> u32 {
    if poll_queues > cpus {
        pr_warn!(
            "{who}poll_queues={poll_queues} is more than the {cpus} possible CPUs, using {cpus}\n"
        );
        return cpus;
    }
    poll_queues
}

/// The rotational model has no poll queues: its one actuator serves every
/// request of the device in the model's order, which polled requests
/// would bypass. Says so if `poll_queues` asked for some.
pub(crate) fn model_poll_queues(poll_queues: u32, who: Who<'_>) -> u32 {
    if poll_queues != 0 {
        pr_info!("{who}rotational_model has one actuator and no poll queues: using poll_queues=0, not {poll_queues}\n");
    }
    0
}

/// `queue_mode` 1, the legacy request path.
const QUEUE_MODE_RQ: u32 = 1;

/// A device's `queue_mode`, as null_blk's `null_validate_conf()` takes it,
/// with its messages: blk-mq is the only interface left, bio (0) becomes
/// blk-mq (2), the legacy request path (1) is refused with `EINVAL`, and
/// any other value is kept, the device on blk-mq.
pub(crate) fn queue_mode(mode: u32) -> Result<u32> {
    match mode {
        QUEUE_MODE_RQ => {
            legacy_refused();
            Err(EINVAL)
        }
        0 => {
            pr_err!("BIO-based IO path is no longer available, using blk-mq instead.\n");
            Ok(params::QUEUE_MODE_MQ)
        }
        m => Ok(m),
    }
}

/// null_blk's refusal of `queue_mode=1`.
fn legacy_refused() {
    pr_err!("legacy IO path is no longer available\n");
}

/// The node a tag set is given for `home_node`: `node` itself if it may be
/// a home node, else `NUMA_NO_NODE`, with null_blk's message (its check,
/// `home_node` below the online count, and the node online).
pub(crate) fn home_node(node: i32) -> i32 {
    if numa::is_home_node(node) {
        return node;
    }
    pr_err!("invalid home_node value\n");
    numa::NO_NODE
}

/// `submit_queues` with `use_per_node_hctx`: one per online node, with a
/// warning if that changes it (null_blk's).
pub(crate) fn per_node_queues(submit_queues: u32, who: Who<'_>) -> u32 {
    let nodes = numa::online_nodes().max(1);
    if submit_queues != nodes {
        pr_warn!("{who}use_per_node_hctx: submit_queues param is set to {nodes}.\n");
    }
    nodes
}

/// The zoned module parameters of a device of `size_mib` MiB and blocks of
/// `block_size` bytes, if `zoned=1`, checked ([`check_zoned`]).
fn zoned_params(size_mib: u64, block_size: u32) -> Result<Option<ZonedParams>> {
    if params::ZONED.get() == 0 {
        return Ok(None);
    }
    let v = |p: &IntParam| u64::try_from(p.get()).map_err(|_| EINVAL);
    let n = |p: &IntParam| u32::try_from(p.get()).map_err(|_| EINVAL);
    let p = ZonedParams {
        size_mib,
        blocksize: block_size,
        zone_size: v(&params::ZONE_SIZE)?,
        zone_capacity: v(&params::ZONE_CAPACITY)?,
        zone_nr_conv: n(&params::ZONE_NR_CONV)?,
        zone_max_open: n(&params::ZONE_MAX_OPEN)?,
        zone_max_active: n(&params::ZONE_MAX_ACTIVE)?,
        zone_append_max_sectors: n(&params::ZONE_APPEND_MAX_SECTORS)?,
        zone_full: params::ZONE_FULL.get() != 0,
    };
    check_zoned(p, Who(None)).map(Some)
}

/// The zoned parameters `p` checked with null_blk's rules, a refusal
/// naming the parameter. What null_blk adjusts is adjusted as it does (its
/// messages logged) by the null_blk face, refused with its range by rnull
/// ([`crate::face::ADJUSTS_ZONE_LIMITS`]). A kernel without
/// `CONFIG_BLK_DEV_ZONED` refuses the device, not the load or the settings
/// (as null_blk's).
pub(crate) fn check_zoned(mut p: ZonedParams, who: Who<'_>) -> Result<ZonedParams> {
    let checked = if crate::face::ADJUSTS_ZONE_LIMITS {
        p.validate(|a| pr_info!("{who}{a}\n"))
    } else {
        p.validate_strict()
    };
    match checked {
        Ok(geo) => {
            // What null_blk's device holds after its adjustments; checked
            // again, they are kept as they are.
            p.zone_capacity = geo.capacity_sectors >> 11;
            p.zone_nr_conv = geo.nr_conv;
            p.zone_max_open = geo.max_open;
            p.zone_max_active = geo.max_active;
            p.zone_append_max_sectors = geo.append_max_sectors;
            Ok(p)
        }
        Err(e) => {
            pr_err!("{who}{e} ({})\n", Errno(EINVAL));
            Err(EINVAL)
        }
    }
}

impl Config {
    /// Whether fault injection is on (kept off the request path otherwise).
    pub(crate) fn injects_faults(&self) -> bool {
        self.inject_requeue_percent != 0 || self.inject_timeout_percent != 0
    }

    /// Reads the parameters. Ranges were enforced when they were set; only
    /// the CPU clamp of `submit_queues` is left to do.
    #[inline(never)] // Keeps its temporaries off module init's frame.
    pub(crate) fn from_params() -> Result<Self> {
        let irqmode = match params::IRQMODE.get() {
            0 => IrqMode::None,
            1 => IrqMode::Softirq,
            _ => IrqMode::Timer,
        };
        let cpus = crate::kapi::cpu::possible_cpus();
        let home_node = home_node(i32::try_from(params::HOME_NODE.get()).map_err(|_| EINVAL)?);
        // null_blk shows the node it uses.
        params::HOME_NODE.settle(i64::from(home_node));
        // null_init()'s check; a 0 is taken per device, as it is made.
        if param_u32(params::QUEUE_MODE.get())? == QUEUE_MODE_RQ {
            legacy_refused();
            return Err(EINVAL);
        }
        let use_per_node_hctx = params::USE_PER_NODE_HCTX.get() != 0;
        let mut submit_queues = param_u32(params::SUBMIT_QUEUES.get())?;
        if use_per_node_hctx {
            submit_queues = per_node_queues(submit_queues, Who(None));
        } else if submit_queues > cpus {
            pr_warn!("submit_queues={submit_queues} is more than the {cpus} possible CPUs, using {cpus}\n");
            submit_queues = cpus;
        }
        let poll_queues = clamp_poll_queues(param_u32(params::POLL_QUEUES.get())?, cpus, Who(None));
        let size_mib = u64::try_from(params::GB.get()).map_err(|_| EINVAL)? << 10;
        let (model, poll_queues) = if params::ROTATIONAL_MODEL.get() != 0 {
            if submit_queues != 1 {
                pr_warn!("rotational_model has one actuator: using submit_queues=1, not {submit_queues}\n");
                submit_queues = 1;
            }
            (
                Some(disk_params(size_mib << 11, Who(None))?),
                model_poll_queues(poll_queues, Who(None)),
            )
        } else {
            (None, poll_queues)
        };
        let memory_backed = params::MEMORY_BACKED.get() != 0;
        let time_slice_us = u64::try_from(params::TIME_SLICE_US.get()).map_err(|_| EINVAL)?;
        if model.is_some() && (params::MBPS.get() != 0 || params::HOST_MBPS.get() != 0) {
            pr_warn!("mbps and host_mbps do not apply to the rotational model, which has its own media rate (media_mbps)\n");
        }
        if time_slice_us != 0 && model.is_none() {
            pr_info!("time_slice_us orders the rotational model's dispatch; without rotational_model=1 it is kept but changes nothing\n");
        }
        let host_queue_depth = param_u32(params::HOST_QUEUE_DEPTH.get())?;
        let host_mbps = u64::try_from(params::HOST_MBPS.get()).map_err(|_| EINVAL)?;
        if host_mbps != 0 && host_queue_depth == 0 {
            pr_err!("host_mbps={host_mbps} needs host_queue_depth (1..=1024): the host link belongs to the host budget\n");
            return Err(EINVAL);
        }
        let block_size = param_u32(params::BS.get())?;
        let zoned = zoned_params(size_mib, block_size)?;
        Ok(Self {
            nr_devices: param_u32(params::NR_DEVICES.get())?,
            submit_queues,
            poll_queues,
            hw_queue_depth: param_u32(params::HW_QUEUE_DEPTH.get())?,
            block_size,
            size_mib,
            irqmode,
            completion_nsec: u64::try_from(params::COMPLETION_NSEC.get()).map_err(|_| EINVAL)?,
            memory_backed,
            cache_size_mib: u64::try_from(params::CACHE_SIZE.get()).map_err(|_| EINVAL)?,
            shared_tags: params::SHARED_TAGS.get() != 0,
            // A zoned memory-backed device allocates its pages sleeping
            // (as null_blk's memory-backed devices): a write whose page
            // cannot be had at once cannot be retried, its zone's write
            // pointer having moved.
            blocking: params::BLOCKING.get() != 0 || (memory_backed && zoned.is_some()),
            rotational: params::ROTATIONAL.get() != 0 || model.is_some(),
            discard: params::DISCARD.get() != 0,
            fua: params::FUA.get() != 0,
            no_sched: params::NO_SCHED.get() != 0,
            badblocks_once: false,
            badblocks_partial_io: false,
            max_sectors: param_u32(params::MAX_SECTORS.get())?,
            host_queue_depth,
            mbps: u64::try_from(params::MBPS.get()).map_err(|_| EINVAL)?,
            host_mbps,
            tag_policy: Policy::ALL
                .get(params::TAG_POLICY.get())
                .copied()
                .ok_or(EINVAL)?,
            borrow_expiry_us: u64::try_from(params::BORROW_EXPIRY_US.get()).map_err(|_| EINVAL)?,
            model,
            time_slice_us,
            time_slice_start: match params::SLICE_START_NAMES.get(params::TIME_SLICE_START.get()) {
                Some(&"completion") => SliceStart::FirstCompletion,
                Some(&"selection") => SliceStart::Selection,
                _ => return Err(EINVAL),
            },
            inject_timeout_percent: param_u32(params::INJECT_TIMEOUT_PERCENT.get())?,
            inject_requeue_percent: param_u32(params::INJECT_REQUEUE_PERCENT.get())?,
            rq_timeout_ms: param_u32(params::RQ_TIMEOUT_MS.get())?,
            home_node,
            use_per_node_hctx,
            virt_boundary: params::VIRT_BOUNDARY.get() != 0,
            shared_tag_bitmap: params::SHARED_TAG_BITMAP.get() != 0,
            zoned,
        })
    }

    /// The write cache in MiB the device has: `cache_size`, which only a
    /// memory-backed device uses (null_blk's rule).
    pub(crate) fn write_cache_mib(&self) -> u64 {
        if self.memory_backed {
            self.cache_size_mib
        } else {
            0
        }
    }

    /// Device size in 512-byte sectors.
    pub(crate) fn capacity_sectors(&self) -> u64 {
        self.size_mib << 11
    }
}
