// SPDX-License-Identifier: GPL-2.0

//! The blk-mq callbacks of every rnull device ([`RNullOps`]): dispatch
//! (host tag, fault injection, data transfer, then completion as
//! `irqmode` or the rotational model says), and the ways a request comes
//! back to be ended.

use crate::{
    config::IrqMode,
    device_data::{start_holding, Command, DeviceData, HwQueue, RNullOps},
    host_budget::HostTag,
    kapi::{
        dispatch::Dispatch,
        dispatch::RqList,
        fmt::Errno,
        operations::{ForeignBorrowed, Operations, Released},
        pages::PageStore,
        poll::{PollBatch, PollList},
        random::chance_percent,
        request::{Expired, Info, Op, Pending, Refused, Request, Started, Status},
        tagset::{HctxType, QueueMaps},
        time::now_ns,
        write_cache::{Access, Flushed, WriteCache},
    },
    rtags::{bitmap::initial_hint, host::PutRest},
    spindle::Spindle,
    throttle,
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    init::PinInit,
    prelude::*,
    sync::{Arc, ArcBorrow},
};

impl DeviceData {
    /// Carries out a started request: moves its data, if the device keeps
    /// any, and fails it if it touches a bad block (as null_blk's, every
    /// operation but a flush). A request that touches one fails whole; with
    /// `badblocks_partial_io` it first moves its data before the bad
    /// block's first logical block, as null_blk's does.
    #[inline(always)]
    fn execute(&self, ctx: &Dispatch<'_>, rq: &Request<RNullOps>, op: Op) -> Status {
        #[cfg(CONFIG_BLK_DEV_ZONED)]
        if let Some(zones) = &self.zones {
            return self.execute_zoned(zones, ctx, rq);
        }
        self.execute_data(ctx, rq, op)
    }

    /// [`Self::execute`] but for the zones: the data and the bad blocks.
    #[inline(always)]
    pub(crate) fn execute_data(
        &self,
        ctx: &Dispatch<'_>,
        rq: &Request<RNullOps>,
        op: Op,
    ) -> Status {
        // Inline: a device that keeps no data and has no bad blocks (the
        // peak benchmark's) decides here, without a call.
        if self.store.is_none() && self.badblocks.is_none() {
            return without_data(op);
        }
        self.execute_stored(ctx, rq)
    }

    /// [`Self::execute`] for a device with data or bad blocks. Reads the
    /// request's fields itself: passed in, they would be stored for every
    /// request, this path or not.
    #[inline(never)]
    fn execute_stored(&self, ctx: &Dispatch<'_>, rq: &Request<RNullOps>) -> Status {
        let info = rq.info();
        let hit = match &self.badblocks {
            Some(bb) if !matches!(info.op, Op::Flush | Op::Other) && !info.op.is_zone_mgmt() => {
                bb.check(info.sector, info.bytes >> 9).map(|bad| (bb, bad))
            }
            _ => None,
        };
        let Some((bb, bad)) = hit else {
            return self.move_data(ctx, rq, info, info.bytes);
        };
        if self.config.badblocks_partial_io {
            let block = u64::from(self.config.block_size >> 9).max(1);
            let first = bad.first - bad.first % block;
            let good = u32::try_from(first.saturating_sub(info.sector) << 9)
                .unwrap_or(u32::MAX)
                .min(info.bytes);
            // The request fails whatever the move does, unless it is to
            // be retried whole.
            if good > 0 && self.move_data(ctx, rq, info, good) == NO_MEMORY {
                return NO_MEMORY;
            }
        }
        if self.config.badblocks_once {
            bb.forget(bad);
        }
        Status::IO_ERROR
    }

    /// Moves the first `limit` bytes of the request's data, if the device
    /// keeps any: through the write cache if it has one. [`NO_MEMORY`] if
    /// a page it needed could not be had at once: the request is to be
    /// retried, not failed (null_blk never fails a write for want of a
    /// page; its allocations sleep).
    fn move_data(
        &self,
        ctx: &Dispatch<'_>,
        rq: &Request<RNullOps>,
        info: Info,
        limit: u32,
    ) -> Status {
        let Some(store) = &self.store else {
            return without_data(info.op);
        };
        let done = match (&self.cache, info.op) {
            (_, Op::Other) => return Status::NOT_SUPPORTED,
            // The zones are the zone operations' only state.
            (
                _,
                Op::ZoneOpen | Op::ZoneClose | Op::ZoneFinish | Op::ZoneReset | Op::ZoneResetAll,
            ) => return Status::OK,
            (None, Op::Read) => store.transfer(ctx, rq, false, limit),
            (None, Op::Write | Op::ZoneAppend) => store.transfer(ctx, rq, true, limit),
            (None, Op::Discard | Op::WriteZeroes) => {
                store.discard(info.sector, limit);
                Ok(())
            }
            // Without a cache there is nothing to write back.
            (None, Op::Flush) => Ok(()),
            (Some(cache), Op::Read) => cache.transfer(store, rq, Access::Read, limit),
            (Some(cache), Op::Write | Op::ZoneAppend) => {
                let access = if info.fua {
                    Access::WriteFua
                } else {
                    Access::Write
                };
                cache.transfer(store, rq, access, limit)
            }
            (Some(cache), Op::Discard | Op::WriteZeroes) => {
                cache.discard(store, info.sector, limit);
                Ok(())
            }
            (Some(cache), Op::Flush) => return flush(cache, store, ctx, rq),
        };
        match done {
            Ok(()) => Status::OK,
            Err(e) if e == ENOMEM => NO_MEMORY,
            Err(_) => Status::IO_ERROR,
        }
    }
}

/// Writes `cache` back to `store` for the flush `rq`, from where its last
/// dispatch left off; [`DISPATCH_AGAIN`] if pages are left for a later one.
#[cold]
fn flush(
    cache: &WriteCache,
    store: &PageStore,
    ctx: &Dispatch<'_>,
    rq: &Request<RNullOps>,
) -> Status {
    let mut from = rq.data().flush_from();
    let done = cache.flush(store, ctx.may_sleep(), &mut from);
    match done {
        Ok(Flushed::Partly) => {
            rq.data().set_flush_from(from);
            DISPATCH_AGAIN
        }
        Ok(Flushed::Done) => {
            rq.data().set_flush_from(0);
            Status::OK
        }
        Err(e) if e == ENOMEM => {
            // Retried from here: what is written back stays so.
            rq.data().set_flush_from(from);
            NO_MEMORY
        }
        Err(_) => {
            rq.data().set_flush_from(0);
            Status::IO_ERROR
        }
    }
}

/// What [`DeviceData::execute`] returns for a request to be dispatched
/// again at once, not counted as short of memory: a flush that wrote back
/// its share of pages for one dispatch where it may not sleep (to go on
/// from where it stopped), or a zoned request that met another
/// operation's half-done step on its zone (`zoned`). Never an end status.
pub(crate) const DISPATCH_AGAIN: Status = Status::DEV_RESOURCE;

/// What [`DeviceData::execute`] returns for a request that needed memory
/// it could not have at once (a page allocated without sleeping, under
/// RCU or the write cache's spinlock): `queue_rq` gives it back to blk-mq
/// to be dispatched again after [`NO_MEMORY_RETRY_MS`], when reclaim
/// (kswapd, woken by the failed allocation) has had time to free some.
/// Never an end status.
const NO_MEMORY: Status = Status::RESOURCE;

/// How long a request short of memory waits before it is dispatched again:
/// blk-mq's own delay for `BLK_STS_RESOURCE` (`BLK_MQ_RESOURCE_DELAY`).
const NO_MEMORY_RETRY_MS: u32 = 3;

/// How a request ends that stayed short of memory for about the request
/// timeout: `BLK_STS_RESOURCE`, which the submitter sees as `-ENOMEM`.
const NO_MEMORY_END: Status = Status::RESOURCE;

/// How often in a row a request may be requeued for want of memory
/// before it fails: about the request timeout's worth of retries.
fn no_memory_retries(dev: &DeviceData) -> u32 {
    (dev.config.rq_timeout_ms / NO_MEMORY_RETRY_MS).max(1)
}

/// Least time between two log lines of a device about requests failed for
/// want of memory.
const NO_MEMORY_LOG_NS: u64 = 5_000_000_000;

/// Requeues `rq`, short of memory, to be dispatched again after
/// [`NO_MEMORY_RETRY_MS`]; gives it back, to be ended with
/// [`NO_MEMORY_END`], once it has been requeued so for too long.
#[cold]
fn short_of_memory(dev: &DeviceData, rq: Request<RNullOps>) -> Option<Request<RNullOps>> {
    // Relaxed counters: statistics, and a rate limit.
    let n = rq.data().note_nomem();
    if n <= no_memory_retries(dev) {
        dev.nomem_retries.fetch_add(1, Ordering::Relaxed);
        rq.requeue_after(NO_MEMORY_RETRY_MS);
        return None;
    }
    rq.data().clear_nomem();
    rq.data().set_flush_from(0);
    let now = now_ns();
    let last = dev.nomem_logged_ns.load(Ordering::Relaxed);
    let due = last == 0 || now.saturating_sub(last) >= NO_MEMORY_LOG_NS;
    if due
        && dev
            .nomem_logged_ns
            .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        pr_err!(
            "{}: request failed with {} after {} retries short of memory\n",
            &*dev.name,
            Errno(ENOMEM),
            n - 1
        );
    }
    Some(rq)
}

/// The status of an operation on a device that keeps no data: every one
/// succeeds but an unknown operation (as null_blk's).
#[inline(always)]
fn without_data(op: Op) -> Status {
    match op {
        Op::Other => Status::NOT_SUPPORTED,
        _ => Status::OK,
    }
}

#[vtable]
impl Operations for RNullOps {
    type QueueData = Arc<DeviceData>;
    type HwData = HwQueue;
    type RequestData = Command;

    fn new_request_data() -> Command {
        Command::new()
    }

    // The alias (not `ArcBorrow`) keeps the lifetime early-bound, as in the
    // trait, which the returned initialiser captures.
    fn init_hctx(
        queue: ForeignBorrowed<'_, Arc<DeviceData>>,
        index: u32,
    ) -> impl PinInit<HwQueue, kernel::error::Error> {
        // Spread every device's queues' first searches over the budget's
        // words (sbitmap's per-CPU hints do the same).
        let slot = queue
            .index
            .wrapping_mul(queue.config.submit_queues)
            .wrapping_add(index);
        // null_blk's `init_hctx` fault: the queue's setup fails.
        let fail = queue.faults.init_hctx();
        let hw = HwQueue {
            hint: AtomicU32::new(initial_hint(slot)),
            host: queue.host.clone(),
            polled: PollList::new(),
            requeues: AtomicU32::new(0),
        };
        PinInit::<HwQueue, kernel::error::Error>::pin_chain(hw, move |_| {
            if fail {
                Err(EFAULT)
            } else {
                Ok(())
            }
        })
    }

    fn queue_rq(
        ctx: &Dispatch<'_>,
        hw: &HwQueue,
        dev: ArcBorrow<'_, DeviceData>,
        rq: Pending<'_, Self>,
        _last: bool,
    ) -> Result<Started, Refused> {
        // null_blk's order: the timeout is drawn first (the device's
        // fault, then the block layer's `io-timeout-fail`), a requeue then
        // takes the request back before anything else.
        let mut lose = false;
        if dev.faults.may_fail() {
            // A polled request is not lost: the poller ends it, as
            // null_blk ignores the fault on its poll queues. The draw
            // still counts.
            lose = (dev.faults.timeout() || rq.should_fake_timeout()) && !ctx.polled();
            if dev.faults.requeue() {
                return inject_requeue(&dev, hw, rq);
            }
        }
        // Throttle before starting: a started request counts against the
        // request timeout, a refused one does not (blk-mq retries it after
        // its 3 ms delay, as null_blk's `mbps` stops its queues).
        // Read once: a second read would be a second load after the calls
        // below.
        let limited = throttle::any_limited();
        if limited && dev.bandwidth().is_some_and(|b| b.backlogged()) {
            if let Some(host) = &dev.host {
                host.note_throttled();
            }
            return Err(rq.refuse(Status::RESOURCE));
        }
        // The tag goes into the request as it starts (a refused request
        // cannot hold one: see `start_holding`).
        let tag = match &hw.host {
            Some(host) => match HostTag::get(host, &hw.hint) {
                Ok(tag) => Some(tag),
                // blk-mq keeps the request and, told DEV_RESOURCE, arms no
                // delayed re-run: the put that frees a tag restarts the queue
                // (see `host_budget` and `kapi::wake`).
                Err(_) => return Err(rq.refuse(Status::DEV_RESOURCE)),
            },
            None => None,
        };
        let (mut rq, started) = start_holding(rq, tag);
        // Read after the start: what is not needed is not loaded, and
        // nothing is kept across the call.
        let info = rq.info();
        let status = if dev.plain {
            // One test for fault injection, data, bad blocks and the model.
            without_data(info.op)
        } else {
            if lose {
                // Relaxed: a statistic.
                dev.injected_timeouts.fetch_add(1, Ordering::Relaxed);
                rq.lose();
                return Ok(started);
            }
            if dev.config.injects_faults() {
                match inject_fault(&dev, rq) {
                    Some(kept) => rq = kept,
                    None => return Ok(started),
                }
            }
            let mut status = dev.execute(ctx, &rq, info.op);
            if status == NO_MEMORY {
                match short_of_memory(&dev, rq) {
                    Some(kept) => {
                        rq = kept;
                        status = NO_MEMORY_END;
                    }
                    None => return Ok(started),
                }
            } else {
                rq.data().clear_nomem();
            }
            if status == DISPATCH_AGAIN {
                // The smallest delay: the kick runs from kblockd, after
                // this dispatch has left blk-mq's RCU read side.
                rq.requeue_after(0);
                return Ok(started);
            }
            if let Some(spindle) = &dev.spindle {
                rq.data().set_status(status);
                Spindle::submit(spindle, rq);
                return Ok(started);
            }
            status
        };
        // With a bandwidth limit a request completes once its bytes have
        // crossed the links, or as `irqmode` says, whichever is later.
        // Only data crosses the link; a flush or discard waits for what is
        // queued ahead of it but adds nothing.
        let delay = if limited {
            let bytes = match info.op {
                Op::Read | Op::Write | Op::ZoneAppend => info.bytes,
                _ => 0,
            };
            dev.bandwidth().map(|b| b.reserve(bytes))
        } else {
            None
        };
        if ctx.polled() {
            // A poll queue raises no interrupt whatever `irqmode` says (as
            // null_blk's): the request waits on its queue until its
            // submitter polls, and with a bandwidth limit until its bytes
            // have crossed the links too.
            rq.data().set_status(status);
            rq.data()
                .set_due_ns(delay.map_or(0, |d| now_ns().saturating_add(d).max(1)));
            hw.polled.push(rq);
            return Ok(started);
        }
        match (dev.config.irqmode, delay) {
            (IrqMode::None, None) => ctx.end(rq, status),
            (IrqMode::Softirq, None) => {
                rq.data().set_status(status);
                rq.complete();
            }
            (IrqMode::Timer, _) => {
                rq.data().set_status(status);
                // Relaxed: a tunable; any recent value will do.
                let irq = dev.completion_nsec.load(Ordering::Relaxed);
                rq.complete_after(delay.unwrap_or(0).max(irq));
            }
            (_, Some(delay)) => {
                rq.data().set_status(status);
                rq.complete_after(delay);
            }
        }
        Ok(started)
    }

    /// io_uring plugs even single submissions, so this is the common path;
    /// a plug list of two or more ends its inline completions in one batch.
    fn queue_rqs(list: RqList<'_, Self>) {
        list.queue_each();
    }

    /// The default queues take every CPU's I/O, the poll queues after them
    /// its polled I/O; reads have no queues of their own (as null_blk's).
    fn map_queues(maps: &mut QueueMaps<'_>) {
        let counts = maps.counts();
        let default = maps.map(HctxType::Default, counts.default);
        let poll = maps.map(HctxType::Poll, counts.poll);
        if default.is_err() || poll.is_err() {
            // kapi's counts always fit its set; kapi falls back to the
            // default queues alone if the default map is missing.
            pr_err!(
                "map_queues: cannot map {} default and {} poll queues\n",
                counts.default,
                counts.poll
            );
        }
    }

    /// Ends every parked request whose bandwidth delay, if any, is over.
    fn poll(hw: &HwQueue, dev: ArcBorrow<'_, DeviceData>, batch: &PollBatch<'_>) -> u32 {
        if hw.polled.is_empty() {
            return 0;
        }
        let mut ended = 0;
        // The clock is read only for a request with a delay.
        let mut now = 0;
        for rq in hw.polled.take_all() {
            let due = rq.data().due_ns();
            if due != 0 {
                if now == 0 {
                    now = now_ns();
                }
                if due > now {
                    hw.polled.push(rq);
                    continue;
                }
            }
            let status = rq.data().status();
            batch.end(rq, status);
            ended += 1;
        }
        // Relaxed: a statistic.
        dev.polled.fetch_add(u64::from(ended), Ordering::Relaxed);
        ended
    }

    /// blk-mq's timeout takes a request off it when its poller stopped.
    fn poll_list(hw: &HwQueue) -> Option<&PollList<Self>> {
        Some(&hw.polled)
    }

    /// Gives back the request's host tag, if it holds one. kapi calls it
    /// only when [`Self::holds`] says so; inline, since `Request::end` already puts
    /// it out of line. The rare part of the put (a starved device drained,
    /// or devices wait) is left to [`Self::release_rest`], so that this
    /// calls nothing.
    #[inline(always)]
    fn release(rq: &Request<Self>) -> Released {
        let Some(tag) = rq.data().take_held() else {
            return Released::All;
        };
        let hw = rq.hw_data();
        // Only a device in a budget takes host tags, and it stays in it.
        debug_assert!(hw.host.is_some());
        let Some(host) = &hw.host else {
            return Released::All;
        };
        match host.put_begin(tag) {
            PutRest::Done => Released::All,
            rest => {
                rq.data().set_put_rest(rest);
                Released::Partly
            }
        }
    }

    /// Finishes the put that [`Self::release`] began.
    fn release_rest(rq: &Request<Self>) {
        let rest = rq.data().take_put_rest();
        if let Some(host) = &rq.hw_data().host {
            host.put_finish(rest);
        }
    }

    /// A request holds something only with a host budget: one load tells.
    #[inline(always)]
    fn holds(rq: &Request<Self>) -> bool {
        rq.data().holds_anything()
    }

    // Each end below gives the host tag back first: kapi calls `release`.

    fn complete(rq: Request<Self>) {
        let status = rq.data().status();
        rq.end(status);
    }

    fn timer_expired(rq: Request<Self>) {
        let status = rq.data().status();
        rq.end(status);
    }

    fn timed_out(rq: Request<Self>) {
        // A flush or a retry dropped part way (fault injection) leaves
        // nothing for the slot's next request to resume.
        rq.data().set_flush_from(0);
        rq.data().clear_nomem();
        rq.end(Status::TIMEOUT);
    }

    /// The rotational model holds its requests until the drive serves
    /// them, and gives them up after a few timeouts, or when the queue
    /// drains (see [`Spindle::reclaim`]).
    fn reclaim(dev: ArcBorrow<'_, DeviceData>, rq: &Expired<'_>) -> Option<Request<Self>> {
        Spindle::reclaim(dev.spindle.as_ref()?, rq)
    }
}

/// null_blk's `requeue` fault: by turns, refuses `rq` busy (blk-mq's own
/// requeue, `BLK_STS_RESOURCE`) and starts and requeues it (the driver's,
/// `blk_mq_requeue_request`), as null_blk's `queue_rq`.
#[cold]
fn inject_requeue(
    dev: &DeviceData,
    hw: &HwQueue,
    rq: Pending<'_, RNullOps>,
) -> Result<Started, Refused> {
    // Relaxed: the parity of a per-queue count; statistics.
    dev.injected_requeues.fetch_add(1, Ordering::Relaxed);
    if hw.requeues.fetch_add(1, Ordering::Relaxed) % 2 == 0 {
        return Err(rq.refuse(Status::RESOURCE));
    }
    let (rq, started) = start_holding(rq, None);
    rq.requeue();
    Ok(started)
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
    // Relaxed counters: statistics (for the slot, see
    // `Command::take_requeued`).
    let data = rq.data_identity();
    let requeued = rq.data().take_requeued() == data;
    if !requeued && chance_percent(c.inject_requeue_percent) {
        rq.data().set_requeued(data);
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
