// SPDX-License-Identifier: GPL-2.0

//! The host-wide tag budget shared by every hardware queue of every device.
//!
//! `host_queue_depth` tags are shared by all devices; the sharing policy
//! (one of rtags' `policy` module: `fair`, `borrow`, ...) decides how many
//! one device may hold (under `window`: which ones). The budget is separate
//! from, and smaller than, blk-mq's own tags, so the policy is what binds. A
//! request the policy refuses goes back to blk-mq with
//! `BLK_STS_DEV_RESOURCE` (no delayed re-run); the completion that frees a tag
//! restarts the queues that were refused and may use it (rtags hands each
//! waiting queue out once per waiting episode, and only when it is below its
//! policy limit with a tag free: a queue at its limit is left waiting for a
//! put that lowers its count, or for the put or tick after its limit rose).
//! A plain re-run could miss
//! a refused request that blk-mq had not yet put back on `hctx->dispatch`,
//! leaving it to blk-mq's 3 ms delayed run; the restart protocol in
//! `kapi::wake` cannot.
//!
//! [`Host::slow_handoffs`] counts the refused devices that waited 1 ms or
//! more after a tag they could use was freed: the wait starts when a put
//! hands the device out (which rtags does only for a tag it may use) and
//! ends at its next tag, or at its next request held back by its bandwidth
//! limit (it ran; what it then waits for is bandwidth, which blk-mq's delayed
//! run retries). A refusal in between starts a new wait. Benchmarks show it
//! at zero, fio's start and exit included: the re-run is `kapi::wake`'s
//! real-time restart thread, not kblockd's work, which waited 1 to 7 ms
//! behind fio's start and exit (see the README, "Tag policies on the
//! maintainers' scenarios").
//!
//! The allocator and the policies are rtags' `host` module ([`HostTags`]);
//! this module wires them into the driver: one [`QueueTags`] per device,
//! the waker that re-runs refused devices, and the periodic tick (which,
//! under `window`, lays the windows out and re-runs the waiting devices
//! when they moved).

use crate::{
    config::Config,
    kapi::{
        time::now_ns,
        timer::{Fire, Timer},
        wake::QueueWaker,
    },
    params::MAX_DEVICES,
    rtags::{
        host::{HostTags, PutRest, Refusal},
        queue::QueueTags,
    },
    throttle::Throttle,
};
use core::{
    mem::ManuallyDrop,
    sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering},
};
use kernel::{prelude::*, sync::Arc};

/// A hand-off slower than this is counted in [`Host::slow_handoffs`].
pub(crate) const SLOW_HANDOFF_NS: u64 = 1_000_000;

/// `woken_at`: the device has no refused request.
const NOT_WAITING: u64 = 0;
/// `woken_at`: the device was refused and not woken since. Only a device
/// in this state is stamped by a wake: a waiter bit can outlive its wait
/// (rtags' re-check after setting it may succeed), and stamping a device
/// that no longer waits would count its next, unrelated request.
const REFUSED: u64 = 1;

/// How often idle queues are retired, `lend` re-balances and `window` lays
/// its windows out.
pub(crate) const TICK_NS: u64 = 10_000_000;

/// The shared budget and the queues that draw from it.
pub(crate) struct Host {
    /// Tags, policy and waiters.
    pub(crate) tags: HostTags,
    /// One record per device index (`0..MAX_DEVICES`); a record outside
    /// the budget's devices stays idle. A device made on an index used
    /// before continues its record (its counters, and its active mark
    /// until the tick retires it).
    queues: KVec<Entry>,
    /// One more than the highest index a device joined with: the records
    /// a waiter can be in, which rtags' hand-off and the wake-ups walk
    /// (the others are idle).
    span: AtomicUsize,
    /// Re-runs a device's queues when a tag it waits for comes back.
    pub(crate) waker: Arc<QueueWaker>,
    /// Hand-offs that took [`SLOW_HANDOFF_NS`] or more.
    slow_handoffs: AtomicU64,
    /// The bandwidth every device shares (`host_mbps`).
    pub(crate) link: Throttle,
}

/// One device index's record in the budget. A device holds its own
/// ([`HostMember`]), so that a request reaches it in one load, with no
/// index into the host's table.
pub(crate) struct HostQueue {
    /// rtags' accounting of the device.
    tags: QueueTags,
    /// The hand-off being measured: [`NOT_WAITING`], [`REFUSED`] (refused,
    /// not woken since), or when it was woken.
    woken_at: AtomicU64,
}

/// An entry of the host's table: what the tick walks as rtags' queues.
struct Entry(Arc<HostQueue>);

impl AsRef<QueueTags> for Entry {
    fn as_ref(&self) -> &QueueTags {
        &self.0.tags
    }
}

/// A device as a member of the host budget: the budget and the device's
/// own record in it.
#[derive(Clone)]
pub(crate) struct HostMember {
    /// The budget.
    pub(crate) host: Arc<Host>,
    /// The device's record in `host`.
    queue: Arc<HostQueue>,
}

/// A host tag taken for a request that is not started yet: given back if
/// dropped, so a request refused after taking one leaks nothing. Only
/// [`HostTag::get`] makes one, and only `device_data::start_holding`
/// records one in a request (which it starts: see
/// [`crate::kapi::request::Pending::start_with`]).
#[must_use]
pub(crate) struct HostTag<'a> {
    host: &'a HostMember,
    tag: u32,
}

impl<'a> HostTag<'a> {
    /// Takes a tag of `host` for one request ([`HostMember::get`]).
    #[inline(always)]
    pub(crate) fn get(host: &'a HostMember, hint: &AtomicU32) -> Result<Self, Refusal> {
        host.get(hint).map(|tag| Self { host, tag })
    }

    /// The tag, kept from here on by the request it is recorded in (whose
    /// end gives it back), no longer by the token.
    #[inline(always)]
    pub(crate) fn keep(self) -> u32 {
        ManuallyDrop::new(self).tag
    }
}

impl Drop for HostTag<'_> {
    #[cold]
    fn drop(&mut self) {
        match self.host.put_begin(self.tag) {
            PutRest::Done => {}
            rest => self.host.put_finish(rest),
        }
    }
}

impl HostMember {
    /// Device `index`'s place in `host`.
    pub(crate) fn new(host: Arc<Host>, index: u32) -> Result<Self> {
        let queue = host.queues.get(index as usize).ok_or(EINVAL)?.0.clone();
        // Relaxed: a put that reads an older span hands the new device's
        // bit out unexamined (rtags' `put`), `Host::wake_waiters` looks at
        // every record, and a tick that reads an older span sees the
        // device at the next tick.
        host.span.fetch_max(index as usize + 1, Ordering::Relaxed);
        Ok(Self { host, queue })
    }

    /// rtags' accounting of the device (its sysfs counters).
    pub(crate) fn queue_tags(&self) -> &QueueTags {
        &self.queue.tags
    }

    /// Takes a tag for one request of the device, or records the refusal
    /// (for [`HostTag::get`] alone, so that every tag taken is one).
    #[inline(always)]
    fn get(&self, hint: &AtomicU32) -> Result<u32, Refusal> {
        // The clock is read only if the policy needs the time (a refusal,
        // or `borrow`'s expiry window). A hand-off being measured ends at
        // the device's next tag, which rtags reports from its slow path
        // (a refused device is watched): nothing here for it.
        let me = self;
        let got = self
            .host
            .tags
            .get_watching(&self.queue.tags, hint, now_ns, move || me.granted());
        if got.is_err() {
            self.note_refused();
        }
        got
    }

    /// Gives `tag` back. What is left ([`PutRest`], rare: the device
    /// drained while starved, or devices wait) is for [`Self::put_finish`]:
    /// the common put calls nothing, so that the completion it is inlined
    /// into needs no stack frame and ends the request with a tail call.
    #[inline(always)]
    pub(crate) fn put_begin(&self, tag: u32) -> PutRest {
        self.host.tags.put_begin(&self.queue.tags, tag)
    }

    /// The rest of a put that [`Self::put_begin`] left, and the re-runs of
    /// the devices that waited for a tag they may use (rtags hands out only
    /// those; the clock is read only for `borrow`'s contention).
    #[cold]
    #[inline(never)]
    pub(crate) fn put_finish(&self, rest: PutRest) {
        let host = &self.host;
        let waiters = host
            .tags
            .put_finish(&self.queue.tags, rest, || host.members(), now_ns);
        host.wake(waiters);
    }

    /// The device was refused a tag: a wait for a tag it may use starts at
    /// the next wake, and ends at the device's next tag, which rtags
    /// reports (the watch). A wake between the refusal in rtags and the
    /// store is not measured, nor is the episode if a tag of the device's
    /// other queue raced with the watch (its report finds the refusal and
    /// ends it unwoken); neither is counted as slow.
    #[cold]
    fn note_refused(&self) {
        // Relaxed: a measurement; the watch is set after it, so that the
        // report that ends the episode finds it.
        self.queue.woken_at.store(REFUSED, Ordering::Relaxed);
        self.queue.tags.watch_next_grant();
    }

    /// The device got its first tag since it was watched: if it had been
    /// woken, the hand-off is over.
    #[cold]
    fn granted(&self) {
        // Relaxed: a measurement.
        if self.queue.woken_at.load(Ordering::Relaxed) != NOT_WAITING {
            self.host.end_handoff(&self.queue.woken_at);
        }
    }

    /// A request of the device was held back by its bandwidth limit before
    /// it asked for a tag. If the device had been woken, its hand-off is
    /// over: it ran, and what it waits for now is bandwidth (blk-mq's
    /// delayed run retries it), not a tag it could use. A device refused
    /// and not woken yet keeps waiting for its tag.
    #[cold]
    pub(crate) fn note_throttled(&self) {
        // Relaxed: a measurement.
        if self.queue.woken_at.load(Ordering::Relaxed) > REFUSED {
            self.host.end_handoff(&self.queue.woken_at);
        }
    }
}

impl Host {
    /// The budget for `config`, or `None` when `host_queue_depth` is 0.
    #[inline(never)] // Keeps the allocator's setup off module init's frame.
    pub(crate) fn new(config: &Config) -> Result<Option<Arc<Self>>> {
        if config.host_queue_depth == 0 {
            return Ok(None);
        }
        let tags = HostTags::new(config.host_queue_depth, config.tag_policy).map_err(|e| {
            pr_err!(
                "host_queue_depth={}: {}\n",
                config.host_queue_depth,
                e.as_str()
            );
            EINVAL
        })?;
        tags.set_borrow_expiry_ns(config.borrow_expiry_us.saturating_mul(1000));
        let link = Throttle::new(config.host_mbps)?;
        // A record for every index a device can have, load-time or
        // configfs: a device joins by using its index's record.
        let n = MAX_DEVICES as usize;
        let mut queues = KVec::with_capacity(n, GFP_KERNEL)?;
        for i in 0..MAX_DEVICES {
            let queue = HostQueue {
                tags: QueueTags::new(i),
                woken_at: AtomicU64::new(NOT_WAITING),
            };
            queues.push(Entry(Arc::new(queue, GFP_KERNEL)?), GFP_KERNEL)?;
        }
        let waker = Arc::pin_init(QueueWaker::new(queues.len())?, GFP_KERNEL)?;
        Ok(Some(Arc::new(
            Self {
                tags,
                queues,
                span: AtomicUsize::new(0),
                waker,
                slow_handoffs: AtomicU64::new(0),
                link,
            },
            GFP_KERNEL,
        )?))
    }

    /// The records of the devices that joined (and of the indexes below
    /// theirs): rtags' queues for its hand-off and its tick.
    fn members(&self) -> &[Entry] {
        // Relaxed: see `HostMember::new`.
        let span = self.span.load(Ordering::Relaxed);
        self.queues.get(..span).unwrap_or(&self.queues)
    }

    /// Re-runs every device whose waiter bit is in `mask` (a device's bit
    /// is its index: [`MAX_DEVICES`] is at most 64).
    #[inline]
    pub(crate) fn wake(&self, mask: u64) {
        // Almost always 0: keep the call off the completion path.
        if mask != 0 {
            self.wake_waiters(mask);
        }
    }

    /// The re-runs behind [`Host::wake`].
    #[cold]
    fn wake_waiters(&self, mask: u64) {
        const { assert!(MAX_DEVICES <= u64::BITS) };
        let now = now_ns();
        // Every record, not `members()`: a device that just joined may be
        // refused and its bit taken by a put that read the span before
        // the join (nothing orders the two), and its only wake-up would
        // be lost. A bit is a record's index.
        for (i, Entry(q)) in self.queues.iter().enumerate() {
            if q.tags.waiter_bit() & mask != 0 {
                // Relaxed: a measurement. rtags hands a device out when it
                // may use a free tag, so the hand-off starts here; the first
                // wake after a refusal counts, a later refusal starts a new
                // episode.
                let _ = q.woken_at.compare_exchange(
                    REFUSED,
                    now.max(REFUSED + 1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                self.waker.run(i);
            }
        }
    }

    /// A woken device got its tag: counts the hand-off if it was slow.
    #[cold]
    fn end_handoff(&self, woken_at: &AtomicU64) {
        let t = woken_at.swap(NOT_WAITING, Ordering::Relaxed);
        if t > REFUSED && now_ns().saturating_sub(t) >= SLOW_HANDOFF_NS {
            self.slow_handoffs.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Refused queues that got a tag (or ran into their bandwidth limit)
    /// 1 ms or more after a tag they could use was freed (see the module
    /// documentation).
    pub(crate) fn slow_handoffs(&self) -> u64 {
        self.slow_handoffs.load(Ordering::Relaxed)
    }
}

/// The periodic maintenance: retire idle queues, re-balance `lend`, lay
/// `window`'s windows out.
pub(crate) struct HostTick(pub(crate) Arc<Host>);

impl Fire for HostTick {
    fn fire(timer: &Timer<Self>) {
        let host = &timer.target().0;
        let now = now_ns();
        // Non-zero when `window`'s windows moved: waiting devices may now
        // have tags no put would hand them. Only the records of the devices
        // that joined: the others are idle, and walking all 64 on every
        // tick costs the I/O path measurably (about 1.5 instructions per
        // I/O at 150k IOPS). A device joining during the tick may be seen
        // by the next one only (its busy mark and its share lag a tick).
        host.wake(host.tags.tick(host.members(), now));
        timer.arm_at(now + TICK_NS);
    }
}
