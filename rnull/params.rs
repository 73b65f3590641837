// SPDX-License-Identifier: GPL-2.0

//! rnull's module parameters: names and defaults follow C `null_blk`.
//!
//! Each value is range-checked when it is set, so a bad value fails
//! `insmod`/`modprobe` with `-EINVAL` and a log line naming the parameter and
//! its range. The only clamp is `submit_queues`, which (like null_blk) is
//! lowered to the number of possible CPUs with a warning.

use crate::kapi::param::{module_param, ChoiceParam, IntParam};

module_param!(NR_DEVICES: IntParam = IntParam::new(1, 1, 64),
    "nr_devices", 0o444, "int", "Number of devices rnullb0..N-1 (1..=64, default 1)");
module_param!(SUBMIT_QUEUES: IntParam = IntParam::new(1, 1, 256),
    "submit_queues", 0o444, "int",
    "Hardware queues per device (1..=256, clamped to possible CPUs, default 1)");
module_param!(HW_QUEUE_DEPTH: IntParam = IntParam::new(64, 1, 4096),
    "hw_queue_depth", 0o444, "int", "Tags per hardware queue (1..=4096, default 64)");
module_param!(BS: IntParam = IntParam::power_of_two(512, 512, 4096),
    "bs", 0o444, "int", "Logical block size in bytes (power of two, 512..=4096, default 512)");
module_param!(GB: IntParam = IntParam::new(250, 1, 16384),
    "gb", 0o444, "int", "Device size in GiB (1..=16384, default 250)");
module_param!(IRQMODE: IntParam = IntParam::new(1, 0, 2),
    "irqmode", 0o444, "int", "Completion: 0 none, 1 softirq, 2 timer (default 1)");
module_param!(COMPLETION_NSEC: IntParam = IntParam::new(10_000, 0, 1_000_000_000),
    "completion_nsec", 0o444, "ulong",
    "Timer completion delay in ns for irqmode=2 (0..=1000000000, default 10000)");
module_param!(MEMORY_BACKED: IntParam = IntParam::new(0, 0, 1),
    "memory_backed", 0o444, "int", "Keep written data in memory (0 or 1, default 0)");
module_param!(SHARED_TAGS: IntParam = IntParam::new(0, 0, 1),
    "shared_tags", 0o444, "int", "One blk-mq tag set for all devices (0 or 1, default 0)");
module_param!(BLOCKING: IntParam = IntParam::new(0, 0, 1),
    "blocking", 0o444, "int", "Register as blocking, queue_rq may sleep (0 or 1, default 0)");
module_param!(ROTATIONAL: IntParam = IntParam::new(0, 0, 1),
    "rotational", 0o444, "int", "Report a rotational device (0 or 1, default 0)");
module_param!(MAX_SECTORS: IntParam = IntParam::new(2560, 8, 65535),
    "max_sectors", 0o444, "int", "Largest request in 512-byte sectors (8..=65535, default 2560)");

/// Names of the `irqmode` values, indexed by value.
pub(crate) const IRQMODE_NAMES: [&str; 3] = ["none", "softirq", "timer"];
module_param!(HOST_QUEUE_DEPTH: IntParam = IntParam::new(0, 0, 1024),
    "host_queue_depth", 0o444, "int",
    "Host-wide tag budget shared by all devices, 0 = off (0..=1024, default 0)");
module_param!(TAG_POLICY: ChoiceParam = ChoiceParam::new(0, &POLICY_NAMES),
    "tag_policy", 0o444, "charp", "Sharing policy of the host budget: fair, borrow, none, lend, window (default fair)");
module_param!(BORROW_EXPIRY_US: IntParam = IntParam::new(0, 0, 10_000_000),
    "borrow_expiry_us", 0o444, "int",
    "borrow: keep fair share this long after the last failure, in us (0..=10000000, default 0)");

/// Names of the `tag_policy` values, in `rtags::policy::Policy` spelling.
pub(crate) const POLICY_NAMES: [&str; 5] = ["fair", "borrow", "none", "lend", "window"];
module_param!(ROTATIONAL_MODEL: IntParam = IntParam::new(0, 0, 1),
    "rotational_model", 0o444, "int",
    "Model a single-actuator rotational disk (implies rotational=1, submit_queues=1; 0 or 1, default 0)");
module_param!(SEEK_MIN_US: IntParam = IntParam::new(500, 0, 100_000),
    "seek_min_us", 0o444, "int", "Model: track-to-track seek in us (0..=100000, default 500)");
module_param!(SEEK_MAX_US: IntParam = IntParam::new(12_000, 0, 1_000_000),
    "seek_max_us", 0o444, "int", "Model: full-stroke seek in us (0..=1000000, default 12000)");
module_param!(RPM: IntParam = IntParam::new(7200, 0, 20_000),
    "rpm", 0o444, "int", "Model: spindle speed, 0 = no rotational latency (0..=20000, default 7200)");
module_param!(MEDIA_MBPS: IntParam = IntParam::new(150, 1, 100_000),
    "media_mbps", 0o444, "int", "Model: media transfer rate in MB/s (1..=100000, default 150)");
module_param!(MODEL_TIME_DILATION: IntParam = IntParam::new(1, 1, 64),
    "model_time_dilation", 0o444, "int",
    "Model: wall ns per modelled ns for service times, slices and their waits (1..=64, default 1)");
module_param!(TIME_SLICE_US: IntParam = IntParam::new(0, 0, 100_000),
    "time_slice_us", 0o444, "int",
    "Initial time_slice_us of every hardware queue (0..=100000, default 0 = arrival order)");
module_param!(TIME_SLICE_START: ChoiceParam = ChoiceParam::new(0, &SLICE_START_NAMES),
    "time_slice_start", 0o444, "charp",
    "When a software queue's slice clock starts: completion (its first request done, as CFQ) or selection (as Herrmann's RFC); default completion");

/// Names of the `time_slice_start` values; `Config` maps them to `SliceStart` by name.
pub(crate) const SLICE_START_NAMES: [&str; 2] = ["completion", "selection"];
module_param!(INJECT_TIMEOUT_PERCENT: IntParam = IntParam::new(0, 0, 100),
    "inject_timeout_percent", 0o444, "int",
    "Fault injection: percent of requests never completed, ended by blk-mq's timeout (0..=100, default 0)");
module_param!(INJECT_REQUEUE_PERCENT: IntParam = IntParam::new(0, 0, 100),
    "inject_requeue_percent", 0o444, "int",
    "Fault injection: percent of requests requeued once before being served (0..=100, default 0)");
module_param!(RQ_TIMEOUT_MS: IntParam = IntParam::new(30_000, 100, 600_000),
    "rq_timeout_ms", 0o444, "int", "blk-mq request timeout in ms (100..=600000, default 30000)");
