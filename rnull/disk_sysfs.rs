// SPDX-License-Identifier: GPL-2.0

//! A disk's sysfs files: `/sys/block/rnullbN/rnull/` (the device's
//! effective configuration, its counters, with a host budget its share of
//! it, and with the rotational model its drive's counters) and `/sys/block/rnullbN/mq/<n>/time_slice_us`. kapi registers
//! them ([`DiskFiles`]); this file says what they hold.

use crate::{
    device_data::{DeviceData, RNullOps},
    kapi::{
        disk_files::{DiskFiles, FileSpec},
        fmt::BufWriter,
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
    HwQueueDepth,
    BlockSize,
    SizeGb,
    Irqmode,
    CompletionNsec,
    MemoryBacked,
    SharedTags,
    Blocking,
    Rotational,
    MaxSectors,
    Pages,
    InjectedTimeouts,
    InjectedRequeues,
    Mbps,
    TagsInFlight,
    TagsLimit,
    TagsFailures,
    TagsActive,
    TagsWaiting,
    ModelStats,
}

/// The files of `rnull/`, in `Field` order; `completion_nsec` and `mbps` are writable.
const FILES: [FileSpec; 22] = [
    FileSpec {
        name: c_str!("index"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("submit_queues"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("hw_queue_depth"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("bs"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("gb"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("irqmode"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("completion_nsec"),
        mode: 0o644,
    },
    FileSpec {
        name: c_str!("memory_backed"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("shared_tags"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("blocking"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("rotational"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("max_sectors"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("pages"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("injected_timeouts"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("injected_requeues"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("mbps"),
        mode: 0o644,
    },
    FileSpec {
        name: c_str!("tags_in_flight"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("tags_limit"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("tags_failures"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("tags_active"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("tags_waiting"),
        mode: 0o444,
    },
    FileSpec {
        name: c_str!("model_stats"),
        mode: 0o444,
    },
];

/// `Field` by index in [`FILES`].
const FIELDS: [Field; 22] = [
    Field::Index,
    Field::SubmitQueues,
    Field::HwQueueDepth,
    Field::BlockSize,
    Field::SizeGb,
    Field::Irqmode,
    Field::CompletionNsec,
    Field::MemoryBacked,
    Field::SharedTags,
    Field::Blocking,
    Field::Rotational,
    Field::MaxSectors,
    Field::Pages,
    Field::InjectedTimeouts,
    Field::InjectedRequeues,
    Field::Mbps,
    Field::TagsInFlight,
    Field::TagsLimit,
    Field::TagsFailures,
    Field::TagsActive,
    Field::TagsWaiting,
    Field::ModelStats,
];

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
const HCTX_FILES: [FileSpec; 1] = [FileSpec {
    name: c_str!("time_slice_us"),
    mode: 0o644,
}];

impl DiskFiles for RNullOps {
    const GROUP: &'static CStr = c_str!("rnull");
    const FILES: &'static [FileSpec] = &FILES;
    const HCTX_FILES: &'static [FileSpec] = &HCTX_FILES;

    fn has_file(dev: ArcBorrow<'_, DeviceData>, id: usize) -> bool {
        FIELDS.get(id).is_some_and(|f| match f {
            Field::ModelStats => dev.spindle.is_some(),
            f => !f.is_host_tag() || dev.host.is_some(),
        })
    }

    fn show(dev: ArcBorrow<'_, DeviceData>, id: usize, out: &mut BufWriter<'_>) -> Result {
        show_field(&dev, *FIELDS.get(id).ok_or(EINVAL)?, out)
    }

    fn store(dev: ArcBorrow<'_, DeviceData>, id: usize, input: &[u8]) -> Result {
        match FIELDS.get(id) {
            Some(Field::CompletionNsec) => {
                let v = params::COMPLETION_NSEC.range().parse_u64(
                    &format_args!("rnullb{}/rnull/completion_nsec", dev.index),
                    input,
                )?;
                // Relaxed: a tunable, see `DeviceData::completion_nsec`.
                dev.completion_nsec.store(v, Ordering::Relaxed);
                Ok(())
            }
            Some(Field::Mbps) => {
                let v = params::MBPS
                    .range()
                    .parse_u64(&format_args!("rnullb{}/rnull/mbps", dev.index), input)?;
                dev.link.set_mib_per_s(v).map_err(|_| EINVAL)
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

    fn store_hctx(dev: ArcBorrow<'_, DeviceData>, hctx: u32, _id: usize, input: &[u8]) -> Result {
        // The parameter sets every queue's initial slice; the range is its.
        let us = params::TIME_SLICE_US.range().parse_u64(
            &format_args!("rnullb{}/mq/{}/time_slice_us", dev.index, hctx),
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
        Field::SubmitQueues => writeln!(out, "{}", c.submit_queues),
        Field::HwQueueDepth => writeln!(out, "{}", c.hw_queue_depth),
        Field::BlockSize => writeln!(out, "{}", c.block_size),
        Field::SizeGb => writeln!(out, "{}", c.size_gb),
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
        Field::SharedTags => writeln!(out, "{}", u8::from(c.shared_tags)),
        Field::Blocking => writeln!(out, "{}", u8::from(c.blocking)),
        Field::Rotational => writeln!(out, "{}", u8::from(c.rotational)),
        Field::MaxSectors => writeln!(out, "{}", c.max_sectors),
        Field::Pages => writeln!(out, "{}", dev.store.as_ref().map_or(0, |s| s.pages())),
        Field::InjectedTimeouts => {
            writeln!(out, "{}", dev.injected_timeouts.load(Ordering::Relaxed))
        }
        Field::Mbps => writeln!(out, "{}", dev.link.mib_per_s()),
        Field::InjectedRequeues => {
            writeln!(out, "{}", dev.injected_requeues.load(Ordering::Relaxed))
        }
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
            let host = dev.host.as_ref().ok_or(ENODEV)?;
            let q = host.queue(dev.index).ok_or(ENODEV)?;
            match field {
                Field::TagsInFlight => writeln!(out, "{}", q.in_flight()),
                Field::TagsLimit => writeln!(out, "{}", host.tags.limit(q, now_ns)),
                Field::TagsFailures => writeln!(out, "{}", q.failures()),
                Field::TagsActive => writeln!(out, "{}", u8::from(q.is_active())),
                _ => writeln!(out, "{}", u8::from(q.is_waiting())),
            }
        }
    };
    r.map_err(|_| EINVAL)
}
