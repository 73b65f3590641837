// SPDX-License-Identifier: GPL-2.0

//! A disk's sysfs files: `/sys/block/rnullbN/rnull/` (the device's
//! effective configuration, its counters and, with a host budget, its share
//! of it) and `/sys/block/rnullbN/mq/<n>/time_slice_us`.

use crate::{
    device_data::{DeviceData, RNullOps},
    kapi::{
        disk::Disk,
        fmt::BufWriter,
        sysfs::{Attr, AttrOps, Dir},
        time::now_ns,
    },
    params::{self, IRQMODE_NAMES},
};
use core::{fmt::Write, sync::atomic::Ordering};
use kernel::{c_str, prelude::*, str::CStr, sync::Arc};

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
    TagsInFlight,
    TagsLimit,
    TagsFailures,
    TagsActive,
    TagsWaiting,
}

/// Files of the device directory; only `completion_nsec` is writable.
const FIELDS: [(&CStr, Field); 15] = [
    (c_str!("index"), Field::Index),
    (c_str!("submit_queues"), Field::SubmitQueues),
    (c_str!("hw_queue_depth"), Field::HwQueueDepth),
    (c_str!("bs"), Field::BlockSize),
    (c_str!("gb"), Field::SizeGb),
    (c_str!("irqmode"), Field::Irqmode),
    (c_str!("completion_nsec"), Field::CompletionNsec),
    (c_str!("memory_backed"), Field::MemoryBacked),
    (c_str!("shared_tags"), Field::SharedTags),
    (c_str!("blocking"), Field::Blocking),
    (c_str!("rotational"), Field::Rotational),
    (c_str!("max_sectors"), Field::MaxSectors),
    (c_str!("pages"), Field::Pages),
    (c_str!("injected_timeouts"), Field::InjectedTimeouts),
    (c_str!("injected_requeues"), Field::InjectedRequeues),
];

/// Counters of the device's share of the host tag budget, present when
/// `host_queue_depth` is set.
const TAG_FIELDS: [(&CStr, Field); 5] = [
    (c_str!("tags_in_flight"), Field::TagsInFlight),
    (c_str!("tags_limit"), Field::TagsLimit),
    (c_str!("tags_failures"), Field::TagsFailures),
    (c_str!("tags_active"), Field::TagsActive),
    (c_str!("tags_waiting"), Field::TagsWaiting),
];

/// A file of the `rnull/` directory showing one field of a device; read-only
/// except `completion_nsec` (mode 0644, see [`DeviceAttrs::new`]).
pub(crate) struct ConfigFile {
    dev: Arc<DeviceData>,
    field: Field,
}

impl AttrOps for ConfigFile {
    fn store(&self, input: &[u8]) -> Result {
        if !matches!(self.field, Field::CompletionNsec) {
            return Err(EPERM);
        }
        let v = params::COMPLETION_NSEC.range().parse_u64(
            &format_args!("rnullb{}/rnull/completion_nsec", self.dev.index),
            input,
        )?;
        // Relaxed: a tunable, see `DeviceData::completion_nsec`.
        self.dev.completion_nsec.store(v, Ordering::Relaxed);
        Ok(())
    }

    fn show(&self, out: &mut BufWriter<'_>) -> Result {
        let c = &self.dev.config;
        let r = match self.field {
            Field::Index => writeln!(out, "{}", self.dev.index),
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
                writeln!(out, "{}", self.dev.completion_nsec.load(Ordering::Relaxed))
            }
            Field::MemoryBacked => writeln!(out, "{}", u8::from(c.memory_backed)),
            Field::SharedTags => writeln!(out, "{}", u8::from(c.shared_tags)),
            Field::Blocking => writeln!(out, "{}", u8::from(c.blocking)),
            Field::Rotational => writeln!(out, "{}", u8::from(c.rotational)),
            Field::MaxSectors => writeln!(out, "{}", c.max_sectors),
            Field::Pages => writeln!(out, "{}", self.dev.store.as_ref().map_or(0, |s| s.pages())),
            Field::InjectedTimeouts => {
                writeln!(
                    out,
                    "{}",
                    self.dev.injected_timeouts.load(Ordering::Relaxed)
                )
            }
            Field::InjectedRequeues => {
                writeln!(
                    out,
                    "{}",
                    self.dev.injected_requeues.load(Ordering::Relaxed)
                )
            }
            Field::TagsInFlight
            | Field::TagsLimit
            | Field::TagsFailures
            | Field::TagsActive
            | Field::TagsWaiting => {
                let host = self.dev.host.as_ref().ok_or(ENODEV)?;
                let q = host.queue(self.dev.index).ok_or(ENODEV)?;
                match self.field {
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
}

/// `/sys/block/rnullbN/mq/<n>/time_slice_us`: Andreas Herrmann's per
/// hardware queue time slice, read-write while I/O runs.
pub(crate) struct SliceFile {
    dev: Arc<DeviceData>,
    hctx: usize,
}

impl AttrOps for SliceFile {
    fn show(&self, out: &mut BufWriter<'_>) -> Result {
        let ns = self.dev.time_slice_ns(self.hctx).ok_or(ENODEV)?;
        writeln!(out, "{}", ns / 1000).map_err(|_| EINVAL)
    }

    fn store(&self, input: &[u8]) -> Result {
        // The parameter sets every queue's initial slice; the range is its.
        let us = params::TIME_SLICE_US.range().parse_u64(
            &format_args!("rnullb{}/mq/{}/time_slice_us", self.dev.index, self.hctx),
            input,
        )?;
        self.dev.set_time_slice_ns(self.hctx, us * 1000)
    }
}

/// The `rnull/` directory of a disk and its files, and the `time_slice_us`
/// files of its hardware queues. Files drop before their directories, and
/// all of them before the disk.
pub(crate) struct DeviceAttrs {
    _slices: KVec<Attr<SliceFile>>,
    _files: KVec<Attr<ConfigFile>>,
    _dir: Dir,
}

impl DeviceAttrs {
    /// Creates `/sys/block/rnullbN/rnull/*`.
    pub(crate) fn new(disk: &Disk<RNullOps>, dev: Arc<DeviceData>) -> Result<Self> {
        let dir = Dir::new(&disk.kobject(), c_str!("rnull"))?;
        let mut files = KVec::with_capacity(FIELDS.len() + TAG_FIELDS.len(), GFP_KERNEL)?;
        let tag_fields = if dev.host.is_some() {
            &TAG_FIELDS[..]
        } else {
            &[]
        };
        for &(name, field) in Iterator::chain(FIELDS.iter(), tag_fields.iter()) {
            let file = ConfigFile {
                dev: dev.clone(),
                field,
            };
            let mode = if matches!(field, Field::CompletionNsec) {
                0o644
            } else {
                0o444
            };
            files.push(Attr::new(&dir.kobject(), name, mode, file)?, GFP_KERNEL)?;
        }
        let mut slices = KVec::new();
        disk.for_each_hctx_kobject(|hctx, kobj| {
            let file = SliceFile {
                dev: dev.clone(),
                hctx: hctx as usize,
            };
            slices.push(
                Attr::new(&kobj, c_str!("time_slice_us"), 0o644, file)?,
                GFP_KERNEL,
            )?;
            Ok(())
        })?;
        Ok(Self {
            _slices: slices,
            _files: files,
            _dir: dir,
        })
    }
}
