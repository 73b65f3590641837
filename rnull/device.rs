// SPDX-License-Identifier: GPL-2.0

//! One rnull device: its request handling and its lifetime.

use crate::{
    attrs::DeviceAttrs,
    config::{Config, IrqMode},
    kapi::{
        disk::{Disk, DiskConfig},
        pages::PageStore,
        request::{Op, Pending, Refused, Request, Started, Status},
        tagset::{Operations, TagSet, TagSetConfig},
    },
};
use core::{
    pin::Pin,
    sync::atomic::{AtomicU8, Ordering},
};
use kernel::{init::PinInit, prelude::*, sync::Arc};

/// The blk-mq callbacks of every rnull device.
pub(crate) struct RNullOps;

/// State of one device shared by its queues, requests and sysfs files.
pub(crate) struct DeviceData {
    /// The `N` of `rnullbN`.
    pub(crate) index: u32,
    /// The load's configuration.
    pub(crate) config: Config,
    /// Written data, when memory backed.
    pub(crate) store: Option<Pin<KBox<PageStore>>>,
}

/// Per hardware queue state.
pub(crate) struct HwQueue {
    /// Index of the hardware queue within its device.
    #[expect(dead_code, reason = "the slice scheduler keys its state by it")]
    pub(crate) index: u32,
}

/// Per request state.
pub(crate) struct Command {
    /// The status to end with, carried from `queue_rq` to the completion.
    status: AtomicU8,
}

impl Command {
    fn set_status(&self, status: Status) {
        // Relaxed: the completion path is ordered after `queue_rq` by
        // blk_mq_complete_request's IPI/softirq or the hrtimer start.
        self.status.store(status.raw(), Ordering::Relaxed);
    }

    fn status(&self) -> Status {
        Status::from_raw(self.status.load(Ordering::Relaxed))
    }
}

impl DeviceData {
    /// Moves the request's data, if the device keeps any.
    fn execute(&self, rq: &Request<RNullOps>, op: Op, sector: u64, bytes: u32) -> Status {
        let Some(store) = &self.store else {
            return match op {
                Op::Other => Status::NOT_SUPPORTED,
                _ => Status::OK,
            };
        };
        let done = match op {
            Op::Read => store.transfer(rq, false),
            Op::Write => store.transfer(rq, true),
            Op::Discard | Op::WriteZeroes => {
                store.discard(sector, bytes);
                Ok(())
            }
            Op::Flush => Ok(()),
            Op::Other => return Status::NOT_SUPPORTED,
        };
        match done {
            Ok(()) => Status::OK,
            Err(_) => Status::IO_ERROR,
        }
    }
}

impl Operations for RNullOps {
    type QueueData = DeviceData;
    type HwData = HwQueue;
    type RequestData = Command;

    fn new_request_data() -> Command {
        Command {
            status: AtomicU8::new(Status::OK.raw()),
        }
    }

    fn init_hctx(_queue: &DeviceData, index: u32) -> impl PinInit<HwQueue, kernel::error::Error> {
        HwQueue { index }
    }

    fn queue_rq(
        _hw: &HwQueue,
        dev: &DeviceData,
        rq: Pending<'_, Self>,
        _last: bool,
    ) -> Result<Started, Refused> {
        let info = rq.info();
        let (rq, started) = rq.start();
        let status = dev.execute(&rq, info.op, info.sector, info.bytes);
        match dev.config.irqmode {
            IrqMode::None => rq.end(status),
            IrqMode::Softirq => {
                rq.data().set_status(status);
                rq.complete();
            }
            IrqMode::Timer => {
                rq.data().set_status(status);
                rq.complete_after(dev.config.completion_nsec);
            }
        }
        Ok(started)
    }

    fn complete(rq: Request<Self>) {
        let status = rq.data().status();
        rq.end(status);
    }

    fn timer_expired(rq: Request<Self>) {
        let status = rq.data().status();
        rq.end(status);
    }

    fn timed_out(rq: Request<Self>) {
        rq.end(Status::TIMEOUT);
    }
}

/// A registered device. Fields drop in order: sysfs files first, then the
/// disk (after which no request runs), then the shared data.
pub(crate) struct Device {
    _attrs: DeviceAttrs,
    _disk: Disk<RNullOps>,
}

impl Device {
    /// Creates and registers `rnullb<index>` on `tagset`.
    fn new(index: u32, config: &Config, tagset: Arc<TagSet<RNullOps>>) -> Result<Self> {
        let store = if config.memory_backed {
            Some(KBox::pin_init(PageStore::new(), GFP_KERNEL)?)
        } else {
            None
        };
        let data = Arc::new(
            DeviceData {
                index,
                config: *config,
                store,
            },
            GFP_KERNEL,
        )?;
        let disk = Disk::new(
            tagset,
            data.clone(),
            &DiskConfig {
                index,
                capacity_sectors: config.capacity_sectors(),
                block_size: config.block_size,
                max_sectors: config.max_sectors,
                rotational: config.rotational,
                discard: config.memory_backed,
                write_cache: config.memory_backed,
            },
        )?;
        let attrs = DeviceAttrs::new(&disk, data)?;
        Ok(Self {
            _attrs: attrs,
            _disk: disk,
        })
    }
}

/// Creates every device of the configuration, sharing one tag set if asked.
pub(crate) fn create_all(config: &Config) -> Result<KVec<Device>> {
    let tagset_config = TagSetConfig {
        nr_hw_queues: config.submit_queues,
        queue_depth: config.hw_queue_depth,
        blocking: config.blocking,
        timeout_ms: 0,
    };
    let new_tagset = || Arc::pin_init(TagSet::new(&tagset_config), GFP_KERNEL);
    let shared = if config.shared_tags {
        Some(new_tagset()?)
    } else {
        None
    };
    let mut devices = KVec::with_capacity(config.nr_devices as usize, GFP_KERNEL)?;
    for index in 0..config.nr_devices {
        let tagset = match &shared {
            Some(t) => t.clone(),
            None => new_tagset()?,
        };
        devices.push(Device::new(index, config, tagset)?, GFP_KERNEL)?;
    }
    Ok(devices)
}
