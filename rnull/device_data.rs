// SPDX-License-Identifier: GPL-2.0

//! The state the blk-mq callbacks work on: per device ([`DeviceData`]), per
//! hardware queue ([`HwQueue`]) and per request ([`Command`]), and
//! [`RNullOps`], the tag set type that ties them together (its callbacks
//! are in `blk_ops`).

#[cfg(CONFIG_BLK_DEV_ZONED)]
use crate::rzone::{
    config::ZonedParams,
    zones::{Zone, Zones},
};
use crate::{
    config::Config,
    face::DiskName,
    faults::Faults,
    host_budget::{HostMember, HostTag},
    kapi::cpu::possible_cpus,
    kapi::{
        badblocks::BadBlocks,
        pages::PageStore,
        poll::PollList,
        request::{Pending, Request, Started, Status},
        time::now_ns,
        timer::Timer,
        write_cache::WriteCache,
    },
    rtags::{bitmap::MAX_TAGS, host::PutRest, link::Link},
    spindle::{Spindle, SpindleRequest},
    throttle::Throttle,
};
use core::{
    pin::Pin,
    sync::atomic::{AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering},
};
use kernel::{fmt, prelude::*, str::CString, sync::Arc};

/// The blk-mq callbacks of every rnull device: `QueueData` is
/// [`DeviceData`], `HwData` [`HwQueue`], `RequestData` [`Command`]. The
/// `Operations` implementation is in `blk_ops`.
pub(crate) struct RNullOps;

/// State of one device shared by its queues, requests and sysfs files.
pub(crate) struct DeviceData {
    /// The device's index.
    pub(crate) index: u32,
    /// The disk's name ([`DiskName`]), for log lines.
    pub(crate) name: CString,
    /// The load's configuration.
    pub(crate) config: Config,
    /// Written data, when memory backed (a configfs device's outlives it,
    /// as null_blk's).
    pub(crate) store: Option<Arc<PageStore>>,
    /// The volatile write cache in front of `store` (`cache_size`), lost
    /// with the device.
    pub(crate) cache: Option<Pin<KBox<WriteCache>>>,
    /// The host-wide tag budget and the device's record in it, when
    /// `host_queue_depth` is set and the device shares it.
    pub(crate) host: Option<HostMember>,
    /// The rotational model's actuator, when enabled.
    pub(crate) spindle: Option<Pin<KBox<Timer<Spindle<RNullOps>>>>>,
    /// `time_slice_us` of each hardware queue, in ns.
    pub(crate) slices: KVec<AtomicU64>,
    /// Timer completion delay, per device and writable through sysfs (so
    /// devices on one tag set can differ, as blktests block/035 needs).
    pub(crate) completion_nsec: AtomicU64,
    /// Requests dropped by fault injection (ended by blk-mq's timeout).
    pub(crate) injected_timeouts: AtomicU64,
    /// Requests requeued by fault injection.
    pub(crate) injected_requeues: AtomicU64,
    /// Dispatches requeued for want of memory (`nomem_retries` in sysfs).
    pub(crate) nomem_retries: AtomicU64,
    /// When a request last ended for want of memory was logged (`now_ns`),
    /// to rate limit the log lines.
    pub(crate) nomem_logged_ns: AtomicU64,
    /// Requests ended by polling (`poll` of a poll queue).
    pub(crate) polled: AtomicU64,
    /// Hardware queues for ordinary I/O now (`config.submit_queues` until
    /// a live change).
    pub(crate) submit_queues: AtomicU32,
    /// Poll queues now (`config.poll_queues` until a live change).
    pub(crate) poll_queues: AtomicU32,
    /// The device's bandwidth limit (`mbps`).
    pub(crate) link: Throttle,
    /// The bad blocks of its configfs directory (which keeps them across
    /// power cycles).
    pub(crate) badblocks: Option<Arc<BadBlocks>>,
    /// null_blk's fault injection (`timeout`, `requeue`, `init_hctx`).
    pub(crate) faults: Arc<Faults>,
    /// No fault injection, no data kept, no bad blocks, no rotational
    /// model: `queue_rq` ends or completes a started request with one test
    /// of all four (fixed for the device's life). A configfs device always
    /// has a bad block table (writable while it is on), so only devices of
    /// the module parameters are plain.
    pub(crate) plain: bool,
    /// The zones of a zoned device (`zoned=1`); a memory-backed configfs
    /// device's outlive it with its data.
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    pub(crate) zones: Option<Arc<DevZones>>,
}

/// The zones of a zoned device.
#[cfg(CONFIG_BLK_DEV_ZONED)]
pub(crate) type DevZones = Zones<KVec<Zone>>;

/// The zones of a zoned device of parameters `p` (checked at load): `kept`
/// as they are if they have its geometry (the zones of the data the device
/// is made on), else new ones in their initial state.
#[cfg(CONFIG_BLK_DEV_ZONED)]
fn new_zones(p: &ZonedParams, kept: Option<Arc<DevZones>>) -> Result<Arc<DevZones>> {
    // Already checked, and adjusted if the face adjusts: nothing changes.
    let geo = p.validate(|_| {}).map_err(|_| EINVAL)?;
    if let Some(kept) = kept.filter(|z| *z.geometry() == geo) {
        return Ok(kept);
    }
    let mut zones = KVec::with_capacity(geo.nr_zones as usize, GFP_KERNEL)?;
    for _ in 0..geo.nr_zones {
        zones.push(Zone::new(), GFP_KERNEL)?;
    }
    Ok(Arc::new(
        Zones::new(geo, zones).map_err(|_| EINVAL)?,
        GFP_KERNEL,
    )?)
}

impl DeviceData {
    /// The data of device `index`: its page store, its rotational model
    /// and every hardware queue's time slice as `config` says.
    // Not inlined: the disk model is built here (kilobytes of stack), and
    // the caller goes on to add the disk, whose partition scan runs deep
    // in the block layer on the same stack.
    #[inline(never)]
    pub(crate) fn new(
        index: u32,
        name: &DiskName<'_>,
        config: &Config,
        host: Option<HostMember>,
        backing: Backing,
    ) -> Result<Arc<Self>> {
        let store = match (config.memory_backed, backing.store) {
            (false, _) => None,
            (true, Some(store)) => Some(store),
            (true, None) => Some(Arc::pin_init(PageStore::new(), GFP_KERNEL)?),
        };
        let cache = match config.write_cache_mib() {
            0 => None,
            mib => Some(KBox::pin_init(WriteCache::new(mib), GFP_KERNEL)?),
        };
        let slice_ns = config.time_slice_us * 1000;
        let spindle = match &config.model {
            Some(params) => Some(KBox::pin_init(
                Timer::new(Spindle::new(params, slice_ns, config.time_slice_start)?),
                GFP_KERNEL,
            )?),
            None => None,
        };
        let link = Throttle::new(config.mbps)?;
        // One per hardware queue, poll queues included (they have the
        // file too; without the model it changes nothing), for as many as
        // a live change may make: each kind is at most the possible CPUs.
        let queues = (config.submit_queues + config.poll_queues).max(2 * possible_cpus());
        let mut slices = KVec::with_capacity(queues as usize, GFP_KERNEL)?;
        for _ in 0..queues {
            slices.push(AtomicU64::new(slice_ns), GFP_KERNEL)?;
        }
        let faults = match backing.faults {
            Some(faults) => faults,
            None => Faults::new()?,
        };
        #[cfg(not(CONFIG_BLK_DEV_ZONED))]
        if config.zoned.is_some() {
            pr_err!("{name}: zoned=1 needs a kernel with CONFIG_BLK_DEV_ZONED\n");
            return Err(EINVAL);
        }
        // The zones go with the data: without a store nothing is kept.
        #[cfg(CONFIG_BLK_DEV_ZONED)]
        let zones = match &config.zoned {
            Some(p) => Some(new_zones(p, backing.zones.filter(|_| store.is_some()))?),
            None => None,
        };
        let plain = !config.injects_faults()
            && !faults.may_fail()
            && store.is_none()
            && backing.badblocks.is_none()
            && spindle.is_none()
            && config.zoned.is_none();
        Ok(Arc::new(
            DeviceData {
                index,
                name: CString::try_from_fmt(fmt!("{name}"))?,
                config: *config,
                store,
                cache,
                host,
                spindle,
                slices,
                completion_nsec: AtomicU64::new(config.completion_nsec),
                injected_timeouts: AtomicU64::new(0),
                injected_requeues: AtomicU64::new(0),
                nomem_retries: AtomicU64::new(0),
                nomem_logged_ns: AtomicU64::new(0),
                polled: AtomicU64::new(0),
                submit_queues: AtomicU32::new(config.submit_queues),
                poll_queues: AtomicU32::new(config.poll_queues),
                link,
                badblocks: backing.badblocks,
                faults,
                plain,
                #[cfg(CONFIG_BLK_DEV_ZONED)]
                zones,
            },
            GFP_KERNEL,
        )?)
    }

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

    /// The device's and the host's bandwidth links, if either has a limit.
    /// Out of line: callers check [`crate::throttle::any_limited`] first, so that a
    /// request pays one load when no link in the module is limited.
    #[inline(never)]
    pub(crate) fn bandwidth(&self) -> Option<Bandwidth<'_>> {
        let dev = Some(self.link.link()).filter(|l| l.is_limited());
        let host = self
            .host
            .as_ref()
            .map(|h| h.host.link.link())
            .filter(|l| l.is_limited());
        if dev.is_none() && host.is_none() {
            return None;
        }
        Some(Bandwidth {
            dev,
            host,
            now: now_ns(),
            // Half the blk-mq request timeout.
            horizon_ns: u64::from(self.config.rq_timeout_ms).saturating_mul(500_000),
        })
    }

    /// Records a live change of the hardware queues.
    pub(crate) fn set_queue_counts(&self, submit: u32, poll: u32) {
        // Relaxed: shown by sysfs; the change itself is ordered by blk-mq.
        self.submit_queues.store(submit, Ordering::Relaxed);
        self.poll_queues.store(poll, Ordering::Relaxed);
    }

    /// Hardware queue `hctx`'s time slice in ns.
    pub(crate) fn time_slice_ns(&self, hctx: usize) -> Option<u64> {
        // Relaxed: see `set_time_slice_ns`.
        self.slices.get(hctx).map(|s| s.load(Ordering::Relaxed))
    }
}

/// The limited bandwidth links of one request, read at one time.
pub(crate) struct Bandwidth<'a> {
    dev: Option<&'a Link>,
    host: Option<&'a Link>,
    now: u64,
    horizon_ns: u64,
}

impl Bandwidth<'_> {
    /// Whether a link's backlog reaches past half the request timeout: a
    /// request started now could time out waiting, so it is not started.
    pub(crate) fn backlogged(&self) -> bool {
        let horizon = self.now.saturating_add(self.horizon_ns);
        let behind = |l: Option<&Link>| l.is_some_and(|l| l.busy_until() > horizon);
        behind(self.dev) || behind(self.host)
    }

    /// How long until `bytes` have crossed the links, reserving them.
    ///
    /// The two links are reserved at the same time, as if in parallel: a
    /// request waits for the busier one. (In series, a device throttled by
    /// its own link would book the host's later; the difference only shows
    /// when both are limited and the device's is the narrower.)
    pub(crate) fn reserve(&self, bytes: u32) -> u64 {
        let bytes = u64::from(bytes);
        let dev = self.dev.and_then(|l| l.reserve(self.now, bytes));
        let host = self.host.and_then(|l| l.reserve(self.now, bytes));
        dev.max(host)
            .map_or(0, |done| done.saturating_sub(self.now))
    }
}

/// What a configfs directory keeps across power cycles and lends each
/// device it makes (load-time devices have none of it).
#[derive(Default)]
pub(crate) struct Backing {
    /// The bad block table.
    pub(crate) badblocks: Option<Arc<BadBlocks>>,
    /// The data of a memory-backed device (a new store if `None`).
    pub(crate) store: Option<Arc<PageStore>>,
    /// The fault attributes its directory shows (new ones if `None`).
    pub(crate) faults: Option<Arc<Faults>>,
    /// The zones of the data in `store`, as its last device left them
    /// (used if the geometry is the same, else new ones).
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    pub(crate) zones: Option<Arc<DevZones>>,
}

/// Per hardware queue state.
// C layout, the hint first: the host tag's fast path addresses it with no
// offset.
#[repr(C)]
pub(crate) struct HwQueue {
    /// Where this queue's next host tag search starts (sbitmap's alloc hint).
    pub(crate) hint: AtomicU32,
    /// The device's place in the host budget, if it has one (the device's
    /// own, held here too: a request's end reaches it from the request's
    /// hardware queue in two loads).
    pub(crate) host: Option<HostMember>,
    /// A poll queue's started requests, until `poll` ends them (empty on
    /// the other queues).
    pub(crate) polled: PollList<RNullOps>,
    /// Fault injection: the requeues this queue injected, whose parity
    /// picks how the next is done (as null_blk's `requeue_selection`).
    pub(crate) requeues: AtomicU32,
}

/// Starts `rq`, recording `tag` (if any) in its data first, where every
/// way the request leaves the driver gives it back (`RNullOps::release`).
#[inline(always)]
pub(crate) fn start_holding(
    rq: Pending<'_, RNullOps>,
    tag: Option<HostTag<'_>>,
) -> (Request<RNullOps>, Started) {
    rq.start_with(|cmd| {
        if let Some(tag) = tag {
            // Kept by the request from here on, not put back.
            cmd.set_host_tag(tag.keep());
        }
    })
}

/// Per request state.
pub(crate) struct Command {
    /// The status to end with, carried from `queue_rq` to the completion.
    status: AtomicU8,
    /// The host tag the request holds until it leaves the driver, plus
    /// one (0: none), so that the end of a request that holds nothing (no
    /// host budget) costs one compare with zero. 0 again when the request
    /// leaves (`RNullOps::release`).
    held: AtomicU32,
    /// Arrival time at the rotational model's dispatcher.
    arrival_ns: AtomicU64,
    /// Software queue slot at the rotational model's dispatcher.
    slot: AtomicU32,
    /// Fault injection: the data identity (`Request::data_identity`) of
    /// the request this slot requeued, or 0.
    requeued: AtomicUsize,
    /// Dispatches of the request requeued in a row for want of memory.
    nomem_retries: AtomicU32,
    /// A flush of the write cache requeued part way: the page index it
    /// resumes from (0 for a flush not begun).
    flush_from: AtomicU64,
    /// When the request is due (`now_ns`): on a poll queue, the time
    /// before which `poll` leaves it alone (a bandwidth limit's delay), or
    /// 0; in the rotational model, when the drive is done with it (the
    /// model has no poll queues).
    due_ns: AtomicU64,
    /// What the put of the host tag left (`PutRest as u8`), from
    /// `RNullOps::release` to `release_rest`.
    put_rest: AtomicU8,
    /// Expiries of blk-mq's timeout while the rotational model holds the
    /// request.
    timeouts: AtomicU8,
}

impl Command {
    /// The data of a request slot the tag set has just allocated.
    pub(crate) fn new() -> Self {
        Self {
            status: AtomicU8::new(Status::OK.raw()),
            held: AtomicU32::new(0),
            arrival_ns: AtomicU64::new(0),
            slot: AtomicU32::new(0),
            requeued: AtomicUsize::new(0),
            flush_from: AtomicU64::new(0),
            nomem_retries: AtomicU32::new(0),
            due_ns: AtomicU64::new(0),
            put_rest: AtomicU8::new(PutRest::Done as u8),
            timeouts: AtomicU8::new(0),
        }
    }

    /// On a poll queue: `poll` ends the request from `ns` on (0: at once).
    pub(crate) fn set_due_ns(&self, ns: u64) {
        // Relaxed: `PollList::push` publishes it (Release) to the `poll`
        // that takes the request (Acquire).
        self.due_ns.store(ns, Ordering::Relaxed);
    }

    /// What [`Self::set_due_ns`] stored.
    pub(crate) fn due_ns(&self) -> u64 {
        // Relaxed: see `set_due_ns`.
        self.due_ns.load(Ordering::Relaxed)
    }

    /// Stores the status to end with (in `queue_rq`).
    pub(crate) fn set_status(&self, status: Status) {
        // Relaxed: the completion path is ordered after `queue_rq` by
        // blk_mq_complete_request's IPI/softirq or the hrtimer start.
        self.status.store(status.raw(), Ordering::Relaxed);
    }

    /// The status stored by `queue_rq`.
    pub(crate) fn status(&self) -> Status {
        Status::from_raw(self.status.load(Ordering::Relaxed))
    }

    /// Records the host tag taken by `queue_rq` ([`start_holding`] only).
    fn set_host_tag(&self, tag: u32) {
        // A tag and its `+ 1` fit.
        const { assert!(MAX_TAGS < u32::MAX) };
        // Relaxed (every access to `held`): only the request's owner
        // touches it, `queue_rq` and then whoever ends it, ordered after
        // `queue_rq` by the hand-off between them: blk_mq_complete_request's
        // IPI or softirq, the hrtimer's start, the poll list's
        // Release/Acquire, the rotational model's lock, `lose`'s Release to
        // the timeout handler's Acquire, or the timer base lock behind a
        // timeout's `hrtimer_try_to_cancel`. The previous use's clearing is
        // ordered before the slot's next `queue_rq` by blk-mq's tag free
        // and allocation (or the requeue list's lock after `requeue`).
        debug_assert_eq!(self.held.load(Ordering::Relaxed), 0);
        // Wrapping: no overflow check, which the assertion above makes moot.
        self.held.store(tag.wrapping_add(1), Ordering::Relaxed);
    }

    /// Whether the request holds a host tag.
    #[inline(always)]
    pub(crate) fn holds_anything(&self) -> bool {
        // Relaxed: see `set_host_tag`.
        self.held.load(Ordering::Relaxed) != 0
    }

    /// Takes the host tag held, if any, leaving none held for the slot's
    /// next request.
    pub(crate) fn take_held(&self) -> Option<u32> {
        // Relaxed: see `set_host_tag`.
        let held = self.held.load(Ordering::Relaxed);
        self.held.store(0, Ordering::Relaxed);
        // One compare for "none" (0 wraps) and the tag's range, which
        // rtags' put then need not check again (both inline).
        let tag = held.wrapping_sub(1);
        (tag < MAX_TAGS).then_some(tag)
    }

    /// Keeps what the put of the host tag left, for `release_rest`.
    pub(crate) fn set_put_rest(&self, rest: PutRest) {
        // Relaxed: see `set_host_tag`.
        self.put_rest.store(rest as u8, Ordering::Relaxed);
    }

    /// Takes what the put of the host tag left.
    pub(crate) fn take_put_rest(&self) -> PutRest {
        // Relaxed: see `set_host_tag`.
        PutRest::from_raw(self.put_rest.swap(PutRest::Done as u8, Ordering::Relaxed))
    }

    /// Where the request's write-back flush resumes (0: from the start).
    pub(crate) fn flush_from(&self) -> u64 {
        // Relaxed: only the slot's own dispatches touch it, ordered by
        // blk-mq's requeue list lock (see `set_host_tag`).
        self.flush_from.load(Ordering::Relaxed)
    }

    /// Records where the request's flush resumes (0 once it is over).
    pub(crate) fn set_flush_from(&self, from: u64) {
        // Relaxed: see `flush_from`.
        self.flush_from.store(from, Ordering::Relaxed);
    }

    /// Counts one more dispatch of the request short of memory; returns
    /// how many in a row.
    pub(crate) fn note_nomem(&self) -> u32 {
        // Relaxed: see `flush_from`.
        let n = self.nomem_retries.load(Ordering::Relaxed).saturating_add(1);
        self.nomem_retries.store(n, Ordering::Relaxed);
        n
    }

    /// Forgets the dispatches short of memory (the request got what it
    /// needed, or ends without it).
    pub(crate) fn clear_nomem(&self) {
        // Relaxed: see `flush_from`. Stored only if set: no store on the
        // usual path.
        if self.nomem_retries.load(Ordering::Relaxed) != 0 {
            self.nomem_retries.store(0, Ordering::Relaxed);
        }
    }

    /// Fault injection: takes the data identity this slot last requeued
    /// (0 if none), leaving 0.
    pub(crate) fn take_requeued(&self) -> usize {
        // Relaxed: only this slot's own dispatches touch it.
        self.requeued.swap(0, Ordering::Relaxed)
    }

    /// Fault injection: remembers that this slot requeued the data `data`.
    pub(crate) fn set_requeued(&self, data: usize) {
        // Relaxed: see `take_requeued`.
        self.requeued.store(data, Ordering::Relaxed);
    }
}

impl SpindleRequest for Command {
    fn set_arrival(&self, slot: u32, now_ns: u64) {
        // Relaxed: only read under the same lock.
        self.slot.store(slot, Ordering::Relaxed);
        self.arrival_ns.store(now_ns, Ordering::Relaxed);
        self.timeouts.store(0, Ordering::Relaxed);
    }

    fn slot(&self) -> u32 {
        // Relaxed: see `set_arrival`.
        self.slot.load(Ordering::Relaxed)
    }

    fn arrival_ns(&self) -> u64 {
        // Relaxed: see `set_arrival`.
        self.arrival_ns.load(Ordering::Relaxed)
    }

    fn status(&self) -> Status {
        Command::status(self)
    }

    fn set_done_ns(&self, done_ns: u64) {
        // Relaxed: only read under the same lock.
        self.due_ns.store(done_ns, Ordering::Relaxed);
    }

    fn done_ns(&self) -> u64 {
        // Relaxed: see `set_done_ns`.
        self.due_ns.load(Ordering::Relaxed)
    }

    fn note_timeout(&self) -> u32 {
        // Relaxed: see `set_arrival`. Saturating: no wrap to 0 however
        // long the request is kept.
        let n = self.timeouts.load(Ordering::Relaxed).saturating_add(1);
        self.timeouts.store(n, Ordering::Relaxed);
        u32::from(n)
    }
}
