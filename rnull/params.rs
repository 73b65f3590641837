// SPDX-License-Identifier: GPL-2.0

//! rnull's module parameters: names and defaults follow C `null_blk`.
//!
//! Each value is range-checked when it is set, so a bad value fails
//! `insmod`/`modprobe` with `-EINVAL` and a log line naming the parameter and
//! its range. The only clamp is `submit_queues`, which (like null_blk) is
//! lowered to the number of possible CPUs with a warning.
//!
//! Each parameter's name, range, default and help are written here once:
//! the sysfs files that change a setting at run time check the parameter's
//! range, and the README's table is generated from the module's `.modinfo`
//! (`scripts/param-table.py`), which `module_param!` builds from these.

use crate::{
    kapi::{
        numa,
        param::{module_param, ChoiceParam, IntParam, IntRange},
    },
    rdisk::disk::{self, Limit},
    rtags::{host, link::MAX_MIB_PER_S, policy::Policy},
};

/// A switch.
pub(crate) const BOOL: IntRange = IntRange::new(0, 1);

/// Devices at most, load-time and configfs ones together: indexes are
/// `0..MAX_DEVICES`, one bit each in the host budget's waiter mask.
pub(crate) const MAX_DEVICES: u32 = 64;

/// A configfs device's `index`: -1 takes the lowest free one.
pub(crate) const INDEX: IntRange = IntRange::new(-1, MAX_DEVICES as i64 - 1);

/// The largest device, in GiB.
const MAX_GB: i64 = 16384;

/// The last 512-byte sector of the largest device.
pub(crate) const MAX_SECTOR: u64 = ((MAX_GB as u64) << 21) - 1;

/// A configfs device's `size` in MiB (null_blk's unit), up to `gb`'s bound.
pub(crate) const SIZE_MIB: IntRange = IntRange::new(1, MAX_GB * 1024);

module_param!(NR_DEVICES: IntParam = IntParam::new(1, IntRange::new(0, MAX_DEVICES as i64)),
    "nr_devices", 0o444, "int",
    "devices numbered `0..N-1` made at load time; more through configfs");
module_param!(SUBMIT_QUEUES: IntParam = IntParam::new(1, IntRange::new(1, 256)),
    "submit_queues", 0o444, "int",
    "hardware queues per device, blk-mq's default CPU mapping; clamped to the possible CPUs");
module_param!(POLL_QUEUES: IntParam = IntParam::new(1, IntRange::new(0, 256)),
    "poll_queues", 0o444, "int",
    "hardware queues for polled I/O (io_uring `IOPOLL`, `RWF_HIPRI`) after the submit queues, completed only by polling; clamped to the possible CPUs");
module_param!(HW_QUEUE_DEPTH: IntParam = IntParam::new(64, IntRange::new(1, 4096)),
    "hw_queue_depth", 0o444, "int", "blk-mq tags per hardware queue (`queue/nr_requests`)");
module_param!(BS: IntParam = IntParam::new(512, IntRange::power_of_two(512, 4096)),
    "bs", 0o444, "int", "logical and physical block size in bytes");
module_param!(GB: IntParam = IntParam::new(250, IntRange::new(1, MAX_GB)),
    "gb", 0o444, "int", "size in GiB");
module_param!(IRQMODE: IntParam = IntParam::new(1, IntRange::new(0, 2)).decimal(),
    "irqmode", 0o444, "int",
    "0: complete in `queue_rq`; 1: softirq via `blk_mq_complete_request`; 2: per-request hrtimer");
module_param!(COMPLETION_NSEC: IntParam = IntParam::new(10_000, IntRange::new(0, i64::MAX)),
    "completion_nsec", 0o444, "ulong",
    "timer completion delay in ns for `irqmode=2`; per device in sysfs");
module_param!(MEMORY_BACKED: IntParam = IntParam::new(0, BOOL),
    "memory_backed", 0o444, "int",
    "keep data in an XArray of pages; enables write-zeroes (write-through unless `cache_size`)");
module_param!(CACHE_SIZE: IntParam = IntParam::new(0, IntRange::new(0, MAX_GB * 1024)),
    "cache_size", 0o444, "ulong",
    "volatile write cache of `memory_backed` devices in MiB, 0 = none (write-through): writes land in it, a flush writes it back, FUA bypasses it");
module_param!(SHARED_TAGS: IntParam = IntParam::new(0, BOOL),
    "shared_tags", 0o444, "int", "one blk-mq tag set for all devices");
module_param!(BLOCKING: IntParam = IntParam::new(0, BOOL),
    "blocking", 0o444, "int", "register as `BLK_MQ_F_BLOCKING` (`queue_rq` may sleep)");
module_param!(ROTATIONAL: IntParam = IntParam::new(0, BOOL),
    "rotational", 0o444, "int", "report a rotational device");
module_param!(NO_SCHED: IntParam = IntParam::new(0, BOOL),
    "no_sched", 0o444, "int", "no I/O scheduler (`BLK_MQ_F_NO_SCHED`)");
module_param!(DISCARD: IntParam = IntParam::new(0, BOOL),
    "discard", 0o444, "int",
    "accept discards: a memory-backed device frees the pages (a no-op without memory backing)");
module_param!(FUA: IntParam = IntParam::new(1, BOOL),
    "fua", 0o444, "int",
    "with a write cache (`cache_size`), report FUA; without, the block layer turns a FUA write into a write and a flush");
module_param!(MAX_SECTORS: IntParam = IntParam::new(2560, IntRange::new(0, u32::MAX as i64)),
    "max_sectors", 0o444, "int",
    "largest request, in 512-byte sectors; 0 = the block layer's default; the block layer caps it, as null_blk's");

module_param!(QUEUE_MODE: IntParam = IntParam::new(2, IntRange::new(0, 2)).decimal(),
    "queue_mode", 0o444, "int",
    "block interface, as null_blk's: 2 = blk-mq; 0 (bio) makes each device on blk-mq with a message; 1 (the legacy request path) fails the load");

/// A configfs directory's `queue_mode`: any `unsigned int`, as null_blk's
/// attribute (`kstrtouint(s, 0)`); power on refuses 1, makes 0 2 and
/// takes the rest as blk-mq (`null_validate_conf()`).
pub(crate) const QUEUE_MODE_ATTR: IntRange = IntRange::new(0, u32::MAX as i64);
// Any int, as null_blk's: a node that is not online is replaced at load.
module_param!(HOME_NODE: IntParam = IntParam::new(
        numa::NO_NODE as i64,
        IntRange::new(i32::MIN as i64, i32::MAX as i64),
    ),
    "home_node", 0o444, "int",
    "NUMA node of the tag set and the queues, -1 = none; any other node that is not online becomes -1, with null_blk's message");

/// A configfs directory's `home_node`: null_blk's attribute is an
/// `unsigned int` (`kstrtouint()`), which its allocators take as an `int`,
/// so `4294967295` is `NUMA_NO_NODE` and is what a new directory shows
/// when the parameter is -1.
pub(crate) const HOME_NODE_ATTR: IntRange = IntRange::new(0, u32::MAX as i64);
module_param!(USE_PER_NODE_HCTX: IntParam = IntParam::new(0, BOOL),
    "use_per_node_hctx", 0o444, "int",
    "one hardware queue per online NUMA node: `submit_queues` becomes the number of online nodes");
module_param!(VIRT_BOUNDARY: IntParam = IntParam::new(0, BOOL),
    "virt_boundary", 0o444, "int",
    "require a virtual boundary: `queue/virt_boundary_mask` is the page size minus 1");
module_param!(SHARED_TAG_BITMAP: IntParam = IntParam::new(0, BOOL),
    "shared_tag_bitmap", 0o444, "int",
    "one tag bitmap for all hardware queues of a tag set (`BLK_MQ_F_TAG_HCTX_SHARED`)");

/// `queue_mode`'s value for blk-mq, the only one a device runs with.
pub(crate) const QUEUE_MODE_MQ: u32 = 2;

/// Names of the `irqmode` values, indexed by value.
pub(crate) const IRQMODE_NAMES: [&str; 3] = ["none", "softirq", "timer"];
module_param!(HOST_QUEUE_DEPTH: IntParam = IntParam::new(0, IntRange::new(0, 1024)),
    "host_queue_depth", 0o444, "int",
    "host-wide tag budget shared by all devices, 0 = off; `host/depth` resizes it (from 1)");
module_param!(TAG_POLICY: ChoiceParam = ChoiceParam::new(Policy::DEFAULT as usize, &Policy::NAMES),
    "tag_policy", 0o444, "charp", "initial sharing policy of the host budget");
module_param!(BORROW_EXPIRY_US: IntParam = IntParam::new(
        (host::DEFAULT_BORROW_EXPIRY_NS / 1000) as i64,
        IntRange::new(0, 10_000_000),
    ),
    "borrow_expiry_us", 0o444, "int",
    "`borrow`: the fair share lasts this long after a starved device's last refusal, and after its drain (from the next 10 ms tick), in us (0: until the starved devices drain)");

module_param!(MBPS: IntParam = IntParam::new(0, IntRange::new(0, MAX_MIB_PER_S as i64)),
    "mbps", 0o444, "int",
    "bandwidth limit of every device in MiB/s, 0 = off; a request completes once its bytes crossed it (`rnull/mbps` per device)");
module_param!(HOST_MBPS: IntParam = IntParam::new(0, IntRange::new(0, MAX_MIB_PER_S as i64)),
    "host_mbps", 0o444, "int",
    "bandwidth limit shared by all devices in MiB/s, 0 = off; needs `host_queue_depth` (`host/mbps`)");

module_param!(ROTATIONAL_MODEL: IntParam = IntParam::new(0, BOOL),
    "rotational_model", 0o444, "int",
    "model a single-actuator rotational disk; implies `rotational=1`, `submit_queues=1` (clamped with a warning) and `poll_queues=0`");

/// An rtags disk model parameter: its name, range and default are the
/// model's [`Limit`]; only the help text is written here.
macro_rules! model_param {
    ($static:ident = $limit:expr, $help:literal) => {
        module_param!($static: IntParam = from_limit(&$limit), $limit.name, 0o444, "int",
            $help);
    };
}

/// The module parameter of a disk model [`Limit`].
const fn from_limit(limit: &Limit) -> IntParam {
    IntParam::new(
        limit.default as i64,
        IntRange::new(limit.min as i64, limit.max as i64),
    )
}

model_param!(
    RPM = disk::RPM,
    "model: spindle speed in revolutions per minute"
);
model_param!(
    SEEK_MIN_US = disk::SEEK_MIN_US,
    "model: track-to-track seek in us"
);
model_param!(SEEK_MAX_US = disk::SEEK_MAX_US,
    "model: full-stroke seek in us, at least `seek_min_us`; a seek grows with the square root of the distance");
model_param!(
    MEDIA_MBPS = disk::MEDIA_MBPS,
    "model: sustained media transfer rate in MB/s"
);
model_param!(
    BUS_MBPS = disk::BUS_MBPS,
    "model: host interface rate in MB/s, what a cache hit's data costs"
);
model_param!(
    CACHE_SEGMENTS = disk::SEGMENTS,
    "model: read cache segments (streams the cache keeps apart)"
);
model_param!(
    SEGMENT_KIB = disk::SEGMENT_KIB,
    "model: size of a cache segment in KiB, a multiple of 4"
);
model_param!(READAHEAD_MIN_KIB = disk::READAHEAD_MIN_KIB,
    "model: read-ahead done after a sequential read miss before the head leaves, in KiB, at most `segment_kib`");
model_param!(
    HIT_OVERHEAD_NS = disk::HIT_OVERHEAD_NS,
    "model: controller time of a cache hit in ns, on top of its transfer"
);
model_param!(
    NCQ_DEPTH = disk::NCQ_DEPTH,
    "model: commands the drive queues (NCQ), 1 = one at a time in arrival order"
);
model_param!(
    NCQ_MAX_WAIT_MS = disk::NCQ_MAX_WAIT_MS,
    "model: age in ms after which a queued command is served first, whatever its position"
);
module_param!(TIME_SLICE_US: IntParam = IntParam::new(0, IntRange::new(0, 100_000)),
    "time_slice_us", 0o444, "int",
    "initial `mq/<n>/time_slice_us` of every hardware queue, 0 = arrival order");
module_param!(TIME_SLICE_START: ChoiceParam = ChoiceParam::new(0, &SLICE_START_NAMES),
    "time_slice_start", 0o444, "charp",
    "when a software queue's slice clock starts: its first completion (as CFQ) or its selection (as Herrmann's RFC)");

/// Names of the `time_slice_start` values; `Config` maps them to `SliceStart` by name.
pub(crate) const SLICE_START_NAMES: [&str; 2] = ["completion", "selection"];
module_param!(INJECT_TIMEOUT_PERCENT: IntParam = IntParam::new(0, IntRange::new(0, 100)),
    "inject_timeout_percent", 0o444, "int",
    "fault injection: percent of requests never completed; blk-mq's timeout ends them with `BLK_STS_TIMEOUT`");
module_param!(INJECT_REQUEUE_PERCENT: IntParam = IntParam::new(0, IntRange::new(0, 100)),
    "inject_requeue_percent", 0o444, "int",
    "fault injection: percent of requests requeued once (`blk_mq_requeue_request`)");
// null_blk's 5 s in its face, for blktests' timeout tests; rnull's own
// leaves a loaded TCG guest room.
module_param!(RQ_TIMEOUT_MS: IntParam = IntParam::new(if cfg!(null_blk_face) { 5_000 } else { 30_000 }, IntRange::new(100, 600_000)),
    "rq_timeout_ms", 0o444, "int", "blk-mq request timeout in ms");

// Zoned mode: null_blk's names, units and defaults (`zoned.c`'s rules
// are rzone's, checked at load: `rzone::config`; what null_blk adjusts
// rnull refuses, its null_blk face adjusts: `face::ADJUSTS_ZONE_LIMITS`).
module_param!(ZONED: IntParam = IntParam::new(0, BOOL),
    "zoned", 0o444, "int",
    "host-managed zoned device (needs a kernel with `CONFIG_BLK_DEV_ZONED`)");
module_param!(ZONE_SIZE: IntParam = IntParam::new(256, IntRange::new(1, MAX_GB * 1024)),
    "zone_size", 0o444, "ulong", "zone size in MiB, a power of two, at most the device size");
module_param!(ZONE_CAPACITY: IntParam = IntParam::new(0, IntRange::new(0, MAX_GB * 1024)),
    "zone_capacity", 0o444, "ulong",
    "writable part of a zone in MiB, at most `zone_size`; 0 = `zone_size`");
module_param!(ZONE_NR_CONV: IntParam = IntParam::new(0, IntRange::new(0, u32::MAX as i64)),
    "zone_nr_conv", 0o444, "uint",
    "conventional zones at the start of the device, fewer than the zones");
module_param!(ZONE_MAX_OPEN: IntParam = IntParam::new(0, IntRange::new(0, u32::MAX as i64)),
    "zone_max_open", 0o444, "uint",
    "most open zones, 0 = no limit; below the sequential zones, at most `zone_max_active`");
module_param!(ZONE_MAX_ACTIVE: IntParam = IntParam::new(0, IntRange::new(0, u32::MAX as i64)),
    "zone_max_active", 0o444, "uint",
    "most active (open or closed) zones, 0 = no limit; below the sequential zones");
module_param!(ZONE_APPEND_MAX_SECTORS: IntParam = IntParam::new(i32::MAX as i64, IntRange::new(0, i32::MAX as i64)),
    "zone_append_max_sectors", 0o444, "int",
    "largest zone append in 512-byte sectors (at most a zone's capacity); 0 = the block layer emulates zone append");
module_param!(ZONE_FULL: IntParam = IntParam::new(0, BOOL),
    "zone_full", 0o444, "int", "sequential zones start full");

/// null_blk's fault injection parameters, where the kernel has fault
/// injection (null_blk's need `CONFIG_BLK_DEV_NULL_BLK_FAULT_INJECTION`,
/// which selects both options): each device starts its fault attribute of
/// the same kind from them.
#[cfg(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS))]
pub(crate) mod fault {
    use crate::kapi::{fault::FaultParam, param::module_param};

    module_param!(TIMEOUT: FaultParam = FaultParam::new(),
        "timeout", 0o444, "string",
        "fault injection: requests left unfinished for blk-mq's timeout to end (`BLK_STS_TIMEOUT`); per device in `timeout_inject/`");
    module_param!(REQUEUE: FaultParam = FaultParam::new(),
        "requeue", 0o444, "string",
        "fault injection: requests requeued, by turns refused busy (`BLK_STS_RESOURCE`) and requeued by the driver; per device in `requeue_inject/`");
    module_param!(INIT_HCTX: FaultParam = FaultParam::new(),
        "init_hctx", 0o444, "string",
        "fault injection: hardware queue setups (`init_hctx`) failed with `EFAULT`; per device in `init_hctx_fault_inject/`");
}
