// SPDX-License-Identifier: GPL-2.0

//! A disk's sysfs files: `/sys/block/<disk>/rnull/` (the device's
//! effective configuration, its counters, with a host budget its share of
//! it, and with the rotational model its drive's counters) and `/sys/block/<disk>/mq/<n>/time_slice_us`. kapi registers
//! them ([`DiskFiles`]); this file says what they hold.

use crate::{
    device_data::{DeviceData, RNullOps},
    face,
    kapi::{
        disk_files::{DiskFiles, FileSpec},
        fmt::BufWriter,
        ratelimit::RateLimit,
        time::now_ns,
    },
    params::{self, IRQMODE_NAMES},
};
use core::{fmt::Write, sync::atomic::Ordering};
use kernel::{c_str, prelude::*, str::CStr, sync::ArcBorrow};

/// Which value a file shows.
#[derive(Clone, Copy)]
enum Field {
    Index,
    SubmitQueues,
    PollQueues,
    HwQueueDepth,
    BlockSize,
    SizeGb,
    SizeMib,
    Irqmode,
    CompletionNsec,
    MemoryBacked,
    CacheSize,
    SharedTags,
    Blocking,
    Rotational,
    MaxSectors,
    Pages,
    CachePages,
    InjectedTimeouts,
    InjectedRequeues,
    NomemRetries,
    Polled,
    Mbps,
    TagsInFlight,
    TagsLimit,
    TagsFailures,
    TagsActive,
    TagsWaiting,
    ModelStats,
}

/// The files of `rnull/` and what each shows; `completion_nsec` and `mbps`
/// are writable.
const TABLE: [(FileSpec, Field); 28] = [
    (FileSpec::new(c_str!("index"), 0o444), Field::Index),
    (
        FileSpec::new(c_str!("submit_queues"), 0o444),
        Field::SubmitQueues,
    ),
    (
        FileSpec::new(c_str!("poll_queues"), 0o444),
        Field::PollQueues,
    ),
    (
        FileSpec::new(c_str!("hw_queue_depth"), 0o444),
        Field::HwQueueDepth,
    ),
    (FileSpec::new(c_str!("bs"), 0o444), Field::BlockSize),
    (FileSpec::new(c_str!("gb"), 0o444), Field::SizeGb),
    (FileSpec::new(c_str!("size"), 0o444), Field::SizeMib),
    (FileSpec::new(c_str!("irqmode"), 0o444), Field::Irqmode),
    (
        FileSpec::new(c_str!("completion_nsec"), 0o644),
        Field::CompletionNsec,
    ),
    (
        FileSpec::new(c_str!("memory_backed"), 0o444),
        Field::MemoryBacked,
    ),
    (FileSpec::new(c_str!("cache_size"), 0o444), Field::CacheSize),
    (
        FileSpec::new(c_str!("shared_tags"), 0o444),
        Field::SharedTags,
    ),
    (FileSpec::new(c_str!("blocking"), 0o444), Field::Blocking),
    (
        FileSpec::new(c_str!("rotational"), 0o444),
        Field::Rotational,
    ),
    (
        FileSpec::new(c_str!("max_sectors"), 0o444),
        Field::MaxSectors,
    ),
    (FileSpec::new(c_str!("pages"), 0o444), Field::Pages),
    (
        FileSpec::new(c_str!("cache_pages"), 0o444),
        Field::CachePages,
    ),
    (
        FileSpec::new(c_str!("injected_timeouts"), 0o444),
        Field::InjectedTimeouts,
    ),
    (
        FileSpec::new(c_str!("injected_requeues"), 0o444),
        Field::InjectedRequeues,
    ),
    (
        FileSpec::new(c_str!("nomem_retries"), 0o444),
        Field::NomemRetries,
    ),
    (FileSpec::new(c_str!("polled"), 0o444), Field::Polled),
    (FileSpec::new(c_str!("mbps"), 0o644), Field::Mbps),
    (
        FileSpec::new(c_str!("tags_in_flight"), 0o444),
        Field::TagsInFlight,
    ),
    (FileSpec::new(c_str!("tags_limit"), 0o444), Field::TagsLimit),
    (
        FileSpec::new(c_str!("tags_failures"), 0o444),
        Field::TagsFailures,
    ),
    (
        FileSpec::new(c_str!("tags_active"), 0o444),
        Field::TagsActive,
    ),
    (
        FileSpec::new(c_str!("tags_waiting"), 0o444),
        Field::TagsWaiting,
    ),
    (
        FileSpec::new(c_str!("model_stats"), 0o444),
        Field::ModelStats,
    ),
];

/// The file specs of [`TABLE`], for [`DiskFiles::FILES`].
const FILES: [FileSpec; TABLE.len()] = {
    let mut files = [FileSpec::new(c_str!(""), 0); TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        files[i] = TABLE[i].0;
        i += 1;
    }
    files
};

impl Field {
    /// The share of the host budget: present only when there is one.
    fn is_host_tag(self) -> bool {
        matches!(
            self,
            Field::TagsInFlight
                | Field::TagsLimit
                | Field::TagsFailures
                | Field::TagsActive
                | Field::TagsWaiting
        )
    }
}

/// Files of each hardware queue directory.
const HCTX_FILES: [FileSpec; 1] = [FileSpec::new(c_str!("time_slice_us"), 0o644)];

impl DiskFiles for RNullOps {
    const GROUP: &'static CStr = face::SYSFS_GROUP;
    const FILES: &'static [FileSpec] = &FILES;
    const HCTX_FILES: &'static [FileSpec] = &HCTX_FILES;

    fn has_file(dev: ArcBorrow<'_, DeviceData>, id: usize) -> bool {
        TABLE.get(id).is_some_and(|(_, f)| match f {
            Field::ModelStats => dev.spindle.is_some(),
            f => !f.is_host_tag() || dev.host.is_some(),
        })
    }

    fn show(dev: ArcBorrow<'_, DeviceData>, id: usize, out: &mut BufWriter<'_>) -> Result {
        show_field(&dev, TABLE.get(id).ok_or(EINVAL)?.1, out)
    }

    fn store(dev: ArcBorrow<'_, DeviceData>, id: usize, log: &RateLimit, input: &[u8]) -> Result {
        match TABLE.get(id).map(|(_, f)| f) {
            Some(Field::CompletionNsec) => {
                let v = params::COMPLETION_NSEC.range().parse_u64(
                    &format_args!("{}/{}/completion_nsec", &*dev.name, face::SYSFS_GROUP),
                    log,
                    input,
                )?;
                // Relaxed: a tunable, see `DeviceData::completion_nsec`.
                dev.completion_nsec.store(v, Ordering::Relaxed);
                Ok(())
            }
            Some(Field::Mbps) => {
                let v = params::MBPS.range().parse_u64(
                    &format_args!("{}/{}/mbps", &*dev.name, face::SYSFS_GROUP),
                    log,
                    input,
                )?;
                dev.link.set_mib_per_s(v)
            }
            _ => Err(EPERM),
        }
    }

    /// `time_slice_us`: Andreas Herrmann's per hardware queue time slice,
    /// read-write while I/O runs.
    fn show_hctx(
        dev: ArcBorrow<'_, DeviceData>,
        hctx: u32,
        _id: usize,
        out: &mut BufWriter<'_>,
    ) -> Result {
        let ns = dev.time_slice_ns(hctx as usize).ok_or(ENODEV)?;
        writeln!(out, "{}", ns / 1000).map_err(|_| EINVAL)
    }

    fn store_hctx(
        dev: ArcBorrow<'_, DeviceData>,
        hctx: u32,
        _id: usize,
        log: &RateLimit,
        input: &[u8],
    ) -> Result {
        // The parameter sets every queue's initial slice; the range is its.
        let us = params::TIME_SLICE_US.range().parse_u64(
            &format_args!("{}/mq/{}/time_slice_us", &*dev.name, hctx),
            log,
            input,
        )?;
        dev.set_time_slice_ns(hctx as usize, us * 1000)
    }
}

/// Writes the value of `field` of `dev`.
fn show_field(dev: &DeviceData, field: Field, out: &mut BufWriter<'_>) -> Result {
    let c = &dev.config;
    let r = match field {
        Field::Index => writeln!(out, "{}", dev.index),
        Field::SubmitQueues => writeln!(out, "{}", dev.submit_queues.load(Ordering::Relaxed)),
        Field::PollQueues => writeln!(out, "{}", dev.poll_queues.load(Ordering::Relaxed)),
        Field::HwQueueDepth => writeln!(out, "{}", c.hw_queue_depth),
        Field::BlockSize => writeln!(out, "{}", c.block_size),
        // Whole GiB, rounded down (configfs sizes are in MiB).
        Field::SizeGb => writeln!(out, "{}", c.size_mib >> 10),
        Field::SizeMib => writeln!(out, "{}", c.size_mib),
        Field::Irqmode => {
            let i = c.irqmode as usize;
            writeln!(
                out,
                "{} ({})",
                i,
                IRQMODE_NAMES.get(i).copied().unwrap_or("?")
            )
        }
        Field::CompletionNsec => {
            writeln!(out, "{}", dev.completion_nsec.load(Ordering::Relaxed))
        }
        Field::MemoryBacked => writeln!(out, "{}", u8::from(c.memory_backed)),
        Field::CacheSize => writeln!(out, "{}", c.write_cache_mib()),
        Field::SharedTags => writeln!(out, "{}", u8::from(c.shared_tags)),
        Field::Blocking => writeln!(out, "{}", u8::from(c.blocking)),
        Field::Rotational => writeln!(out, "{}", u8::from(c.rotational)),
        Field::MaxSectors => writeln!(out, "{}", c.max_sectors),
        Field::Pages => writeln!(out, "{}", dev.store.as_ref().map_or(0, |s| s.pages())),
        Field::CachePages => writeln!(out, "{}", dev.cache.as_ref().map_or(0, |c| c.pages())),
        Field::InjectedTimeouts => {
            writeln!(out, "{}", dev.injected_timeouts.load(Ordering::Relaxed))
        }
        Field::Mbps => writeln!(out, "{}", dev.link.link().mib_per_s()),
        Field::Polled => writeln!(out, "{}", dev.polled.load(Ordering::Relaxed)),
        Field::InjectedRequeues => {
            writeln!(out, "{}", dev.injected_requeues.load(Ordering::Relaxed))
        }
        Field::NomemRetries => writeln!(out, "{}", dev.nomem_retries.load(Ordering::Relaxed)),
        Field::ModelStats => {
            // How the drive served the device's requests so far: what a
            // scheduler's order did to its cache shows here. With the time
            // of reading, two readings give the drive's rate between them.
            let s = dev.spindle.as_ref().ok_or(ENODEV)?.target().stats();
            writeln!(
                out,
                "hits {}\nreadahead_hits {}\nmisses {}\nwrites {}\nnow_ns {}",
                s.hits,
                s.readahead_hits,
                s.misses,
                s.writes,
                now_ns()
            )
        }
        Field::TagsInFlight
        | Field::TagsLimit
        | Field::TagsFailures
        | Field::TagsActive
        | Field::TagsWaiting => {
            let link = dev.host.as_ref().ok_or(ENODEV)?;
            let q = link.queue_tags();
            match field {
                Field::TagsInFlight => writeln!(out, "{}", q.in_flight()),
                Field::TagsLimit => writeln!(out, "{}", link.host.tags.limit(q, now_ns)),
                Field::TagsFailures => writeln!(out, "{}", q.failures()),
                Field::TagsActive => writeln!(out, "{}", u8::from(q.is_active())),
                _ => writeln!(out, "{}", u8::from(q.is_waiting())),
            }
        }
    };
    r.map_err(|_| EINVAL)
}
