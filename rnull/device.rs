// SPDX-License-Identifier: GPL-2.0

//! One rnull device: its request handling and its lifetime.

use crate::{
    attrs::DeviceAttrs,
    config::{Config, IrqMode},
    host::Host,
    kapi::{
        disk::{Disk, DiskConfig},
        pages::PageStore,
        random::chance_percent,
        request::{Op, Pending, Refused, Request, Started, Status},
        tagset::{Dispatch, Operations, TagSet, TagSetConfig},
        time::now_ns,
        timer::Timer,
    },
    rtags::bitmap::initial_hint,
    spindle::Spindle,
};
use core::{
    pin::Pin,
    sync::atomic::{AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering},
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
    /// The host-wide tag budget, when `host_queue_depth` is set.
    pub(crate) host: Option<Arc<Host>>,
    /// The rotational model's actuator, when enabled.
    pub(crate) spindle: Option<Pin<KBox<Timer<Spindle>>>>,
    /// `time_slice_us` of each hardware queue, in ns.
    pub(crate) slices: KVec<AtomicU64>,
    /// Timer completion delay, per device and writable through sysfs (so
    /// devices on one tag set can differ, as blktests block/035 needs).
    pub(crate) completion_nsec: AtomicU64,
    /// Requests dropped by fault injection (ended by blk-mq's timeout).
    pub(crate) injected_timeouts: AtomicU64,
    /// Requests requeued by fault injection.
    pub(crate) injected_requeues: AtomicU64,
}

impl DeviceData {
    /// Sets hardware queue `hctx`'s time slice.
    pub(crate) fn set_time_slice_ns(&self, hctx: usize, ns: u64) -> Result {
        let slot = self.slices.get(hctx).ok_or(EINVAL)?;
        // Relaxed: a tunable, read back by sysfs and applied by the
        // dispatcher at its next choice.
        slot.store(ns, Ordering::Relaxed);
        // The model's single hardware queue drives its dispatcher.
        if let (0, Some(spindle)) = (hctx, &self.spindle) {
            spindle.target().set_slice_ns(ns);
        }
        Ok(())
    }

    /// Hardware queue `hctx`'s time slice in ns.
    pub(crate) fn time_slice_ns(&self, hctx: usize) -> Option<u64> {
        // Relaxed: see `set_time_slice_ns`.
        self.slices.get(hctx).map(|s| s.load(Ordering::Relaxed))
    }
}

/// Per hardware queue state.
pub(crate) struct HwQueue {
    /// Where this queue's next host tag search starts (sbitmap's alloc hint).
    hint: AtomicU32,
}

/// Per request state.
pub(crate) struct Command {
    /// The status to end with, carried from `queue_rq` to the completion.
    status: AtomicU8,
    /// The host tag held, or [`NO_TAG`].
    host_tag: AtomicU32,
    /// Arrival order at the rotational model's dispatcher.
    seq: AtomicU64,
    /// Fault injection: the data identity ([`Request::data_identity`]) of
    /// the request this slot requeued, or 0.
    requeued: AtomicUsize,
}

/// No host tag held.
const NO_TAG: u32 = u32::MAX;

impl Command {
    fn set_status(&self, status: Status) {
        // Relaxed: the completion path is ordered after `queue_rq` by
        // blk_mq_complete_request's IPI/softirq or the hrtimer start.
        self.status.store(status.raw(), Ordering::Relaxed);
    }

    /// The status stored by `queue_rq`.
    pub(crate) fn status(&self) -> Status {
        Status::from_raw(self.status.load(Ordering::Relaxed))
    }

    /// Records the arrival number (under the dispatcher's lock).
    pub(crate) fn set_seq(&self, seq: u64) {
        // Relaxed: only read under the same lock.
        self.seq.store(seq, Ordering::Relaxed);
    }

    /// The arrival number.
    pub(crate) fn seq(&self) -> u64 {
        // Relaxed: see `set_seq`.
        self.seq.load(Ordering::Relaxed)
    }
}

impl DeviceData {
    /// Moves the request's data, if the device keeps any.
    fn execute(
        &self,
        ctx: &Dispatch<'_>,
        rq: &Request<RNullOps>,
        op: Op,
        sector: u64,
        bytes: u32,
    ) -> Status {
        let Some(store) = &self.store else {
            return match op {
                Op::Other => Status::NOT_SUPPORTED,
                _ => Status::OK,
            };
        };
        let done = match op {
            Op::Read => store.transfer(ctx, rq, false),
            Op::Write => store.transfer(ctx, rq, true),
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
            host_tag: AtomicU32::new(NO_TAG),
            seq: AtomicU64::new(0),
            requeued: AtomicUsize::new(0),
        }
    }

    fn init_hctx(queue: &DeviceData, index: u32) -> impl PinInit<HwQueue, kernel::error::Error> {
        // Spread every device's queues' first searches over the budget's
        // words (sbitmap's per-CPU hints do the same).
        let slot = queue
            .index
            .wrapping_mul(queue.config.submit_queues)
            .wrapping_add(index);
        HwQueue {
            hint: AtomicU32::new(initial_hint(slot)),
        }
    }

    fn queue_rq(
        ctx: &Dispatch<'_>,
        hw: &HwQueue,
        dev: &DeviceData,
        rq: Pending<'_, Self>,
        _last: bool,
    ) -> Result<Started, Refused> {
        if let Some(host) = &dev.host {
            let Some(q) = host.queue(dev.index) else {
                return Err(rq.refuse(Status::IO_ERROR));
            };
            // The clock is read only if the policy needs the time (a
            // refusal, or `borrow`'s expiry window).
            match host.tags.get(q, &hw.hint, now_ns) {
                // Relaxed: read back by the completion of this same request,
                // which blk-mq orders after `queue_rq`.
                Ok(tag) => rq.data().host_tag.store(tag, Ordering::Relaxed),
                // blk-mq keeps the request; a freed tag re-runs the queue
                // (see `host`), blk-mq's delayed re-run backs that up.
                Err(_) => return Err(rq.refuse(Status::RESOURCE)),
            }
        }
        let info = rq.info();
        let (mut rq, started) = rq.start();
        if dev.config.injects_faults() {
            match inject_fault(dev, rq) {
                Some(kept) => rq = kept,
                None => return Ok(started),
            }
        }
        let status = dev.execute(ctx, &rq, info.op, info.sector, info.bytes);
        if let Some(spindle) = &dev.spindle {
            rq.data().set_status(status);
            Spindle::submit(spindle, rq, info.sw_queue);
            return Ok(started);
        }
        match dev.config.irqmode {
            IrqMode::None => ctx.end(rq, status),
            IrqMode::Softirq => {
                rq.data().set_status(status);
                rq.complete();
            }
            IrqMode::Timer => {
                rq.data().set_status(status);
                // Relaxed: a tunable; any recent value will do.
                rq.complete_after(dev.completion_nsec.load(Ordering::Relaxed));
            }
        }
        Ok(started)
    }

    fn release(rq: &Request<Self>) {
        release_host_tag(rq);
    }

    fn complete(rq: Request<Self>) {
        let status = rq.data().status();
        finish(rq, status);
    }

    fn timer_expired(rq: Request<Self>) {
        let status = rq.data().status();
        finish(rq, status);
    }

    fn timed_out(rq: Request<Self>) {
        finish(rq, Status::TIMEOUT);
    }
}

/// Fault injection: requeues or drops `rq` if the dice say so; gives it
/// back otherwise.
#[cold]
fn inject_fault(dev: &DeviceData, rq: Request<RNullOps>) -> Option<Request<RNullOps>> {
    let c = &dev.config;
    // A request is requeued at most once: the slot remembers the data
    // (first bio) it requeued, and a dispatch of the same data is its
    // return. Any other dispatch is a new request in the slot, even if the
    // requeued one never came back (a scheduler may merge it away).
    // Relaxed (slot and counters): only this slot's own dispatches touch it;
    // the counters are statistics.
    let data = rq.data_identity();
    let requeued = rq.data().requeued.swap(0, Ordering::Relaxed) == data;
    if !requeued && chance_percent(c.inject_requeue_percent) {
        rq.data().requeued.store(data, Ordering::Relaxed);
        dev.injected_requeues.fetch_add(1, Ordering::Relaxed);
        rq.requeue();
        return None;
    }
    if chance_percent(c.inject_timeout_percent) {
        dev.injected_timeouts.fetch_add(1, Ordering::Relaxed);
        rq.lose();
        return None;
    }
    Some(rq)
}

/// Ends a request (kapi gives its host tag back first, see
/// [`Operations::release`]).
pub(crate) fn finish(rq: Request<RNullOps>, status: Status) {
    rq.end(status);
}

/// Gives back the request's host tag, if it holds one, and re-runs the
/// queues that waited for one.
#[inline]
fn release_host_tag(rq: &Request<RNullOps>) {
    let dev = rq.queue_data();
    if let Some(host) = &dev.host {
        // Relaxed: written by `queue_rq` of this request, ordered before
        // its completion by blk-mq.
        let tag = rq.data().host_tag.swap(NO_TAG, Ordering::Relaxed);
        if let Some(q) = host.queue(dev.index).filter(|_| tag != NO_TAG) {
            let waiters = host.tags.put(q, tag);
            host.wake(waiters);
        }
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
    fn new(
        index: u32,
        config: &Config,
        tagset: Arc<TagSet<RNullOps>>,
        host: Option<Arc<Host>>,
    ) -> Result<Self> {
        let store = if config.memory_backed {
            Some(KBox::pin_init(PageStore::new(), GFP_KERNEL)?)
        } else {
            None
        };
        let slice_ns = config.time_slice_us * 1000;
        let spindle = match config.model {
            Some(model) => Some(KBox::pin_init(
                Timer::new(Spindle::new(model, slice_ns, config.time_slice_start)),
                GFP_KERNEL,
            )?),
            None => None,
        };
        let mut slices = KVec::with_capacity(config.submit_queues as usize, GFP_KERNEL)?;
        for _ in 0..config.submit_queues {
            slices.push(AtomicU64::new(slice_ns), GFP_KERNEL)?;
        }
        let data = Arc::new(
            DeviceData {
                index,
                config: *config,
                store,
                host: host.clone(),
                spindle,
                slices,
                completion_nsec: AtomicU64::new(config.completion_nsec),
                injected_timeouts: AtomicU64::new(0),
                injected_requeues: AtomicU64::new(0),
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
            host.map(|h| h.waker.clone()),
        )?;
        let attrs = DeviceAttrs::new(&disk, data)?;
        Ok(Self {
            _attrs: attrs,
            _disk: disk,
        })
    }
}

/// Creates every device of the configuration, sharing one tag set if asked.
pub(crate) fn create_all(config: &Config, host: Option<&Arc<Host>>) -> Result<KVec<Device>> {
    let tagset_config = TagSetConfig {
        nr_hw_queues: config.submit_queues,
        queue_depth: config.hw_queue_depth,
        blocking: config.blocking,
        timeout_ms: config.rq_timeout_ms,
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
        devices.push(
            Device::new(index, config, tagset, host.cloned())?,
            GFP_KERNEL,
        )?;
    }
    Ok(devices)
}
