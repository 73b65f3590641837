// SPDX-License-Identifier: GPL-2.0

//! The rotational model's drive and its dispatcher.
//!
//! Requests are started in `queue_rq` and staged in arrival order, each
//! marked with its software queue (the submitting CPU's `blk_mq_ctx`).
//! rtags' [`Disk`] is the drive: a mechanism and a segmented read cache
//! behind a command queue (NCQ). Whenever a request arrives or one
//! completes, the spindle offers the drive the staged requests it may
//! have, in arrival order, and starts each one the drive picks
//! ([`Disk::pick`], [`Disk::start`]) until it picks none. The drive has at
//! most two in service (a cache hit on the controller and a miss or write
//! on the mechanism); an hrtimer fires at the earliest completion. Which
//! staged requests the drive is offered is the dispatcher's choice:
//!
//! * `time_slice_us == 0`: all of them (plain blk-mq sends the drive
//!   whatever it has, and NCQ reorders);
//! * `time_slice_us > 0`: rtags' [`SliceSched`] chooses, whenever the drive
//!   is idle, one software queue for the slice, extended up to 3x while it
//!   keeps being served, waiting for its next request while the slice
//!   lasts, then the next one round robin; only that queue's requests are
//!   offered, and only while the drive is idle (a slice's service is its
//!   queue's alone). Software queues whose requests are mostly seeks take
//!   one turn together (rtags' seek history, CFQ's rule): their requests
//!   go to the drive as without slices, also while it works, and NCQ
//!   reorders them. The slice clock starts when the queue's first request
//!   completes (`time_slice_start=completion`, CFQ's rule, the default),
//!   so a seek longer than the slice does not use it up, or at selection
//!   (`time_slice_start=selection`, Herrmann's RFC).
//!
//! The drive's clock is `CLOCK_MONOTONIC`: on a guest run on virtual time
//! (instructions counted, idle skipped) a fio job comes back in tens of
//! microseconds, as on bare metal, so the model needs no time scaling.
//!
//! All state is under one interrupt-disabling lock, taken by `queue_rq`
//! (process context) and the timer (hard interrupt); nothing else nests
//! inside it. Requests are ended after the lock is dropped.
//!
//! The spindle works for any tag set type `T` whose per-request data is a
//! [`SpindleRequest`]: it keeps the software queue and the arrival time,
//! and the status to end with.

use crate::{
    kapi::{
        irq_lock::IrqSpinLock,
        operations::Operations,
        request::{Expired, Info, Op, Request, Status},
        rq_fifo::RqFifo,
        time::now_ns,
        timer::{Fire, Timer},
    },
    rdisk::{
        disk::{Command, Disk, DiskParams, DiskStats, ParamError},
        slice::{SliceSched, SliceStart, MAX_CTX},
    },
};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{init::PinInit, prelude::*};

/// What the spindle needs from a request's driver data.
pub(crate) trait SpindleRequest {
    /// Records the request's slot (software queue) and arrival time
    /// (under the dispatcher's lock).
    fn set_arrival(&self, slot: u32, now_ns: u64);

    /// The slot recorded by [`Self::set_arrival`].
    fn slot(&self) -> u32;

    /// The arrival time recorded by [`Self::set_arrival`].
    fn arrival_ns(&self) -> u64;

    /// The status to end the request with once it is served (stored by
    /// `queue_rq` before [`Spindle::submit`]).
    fn status(&self) -> Status;

    /// Records when the drive is done with the request (under the
    /// dispatcher's lock).
    fn set_done_ns(&self, done_ns: u64);

    /// The time recorded by [`Self::set_done_ns`].
    fn done_ns(&self) -> u64;

    /// Counts one more expiry of blk-mq's timeout while the spindle holds
    /// the request (from 0 at [`Self::set_arrival`]); returns the count.
    fn note_timeout(&self) -> u32;
}

/// Software queues the dispatcher tells apart (the slice scheduler's);
/// more share slots.
const SLOTS: usize = MAX_CTX as usize;

/// Requests the drive serves at once: a hit and a miss or write.
const IN_SERVICE: usize = 2;

/// Expiries of blk-mq's request timeout after which the spindle gives a
/// request it holds up, to be timed out (the first ones only reset the
/// timer, as for a slow disk): a wedged model or a drive too slow for the
/// timeout fails its requests rather than holding them for ever.
const TIMEOUTS_KEPT: u32 = 2;

/// The drive's command for a staged request.
fn command(info: &Info, queued_ns: u64) -> Command {
    Command {
        sector: info.sector,
        bytes: info.bytes,
        // Discard and write-zeroes change the media as writes do.
        write: info.op != Op::Read,
        queued_ns,
    }
}

/// Dispatcher state, under the spindle's lock.
struct Dispatch<T: Operations> {
    /// Started requests not yet in the drive's service, in arrival order.
    staged: RqFifo<T>,
    /// Staged requests per slot.
    counts: [u32; SLOTS],
    /// `blk_mq_ctx` identity owning each slot (0: free).
    owners: [usize; SLOTS],
    /// Bit `i` set when slot `i` has staged requests.
    pending: u64,
    sched: SliceSched,
    /// Bit `i` set when the drive is offered slot `i`'s requests: every
    /// slot without slices; with them the active slot's, or the seeky
    /// slots' while they share the slice.
    offer: u64,
    /// When the slice scheduler wants to choose again (a wait for the
    /// active slot's next request).
    wake_ns: Option<u64>,
    /// The requests in the drive's service (at most [`IN_SERVICE`]), each
    /// done at its [`SpindleRequest::done_ns`]. Every request the spindle
    /// holds is in `staged` or here, so none is dropped with the spindle
    /// (an `RqFifo` does not end its requests: see its `Drop`).
    serving: RqFifo<T>,
    /// The drive, 2.3 KiB: boxed when the device is created.
    disk: KBox<Disk>,
}

impl<T: Operations> Dispatch<T>
where
    T::RequestData: SpindleRequest,
{
    fn new(disk: KBox<Disk>, start: SliceStart) -> Self {
        let mut sched = SliceSched::new();
        sched.set_start(start);
        Self {
            staged: RqFifo::default(),
            counts: [0; SLOTS],
            owners: [0; SLOTS],
            pending: 0,
            sched,
            offer: u64::MAX,
            wake_ns: None,
            serving: RqFifo::default(),
            disk,
        }
    }

    /// The slot of software queue `id`, claiming a free one the first time.
    fn slot_of(&mut self, id: usize) -> usize {
        if let Some(i) = self.owners.iter().position(|&o| o == id) {
            return i;
        }
        if let Some(i) = self.owners.iter().position(|&o| o == 0) {
            self.owners[i] = id;
            return i;
        }
        // More software queues than slots: share by hash.
        (id / 64) % SLOTS
    }

    /// Offers the drive the staged requests it may have and starts what it
    /// picks, until it picks none or has [`IN_SERVICE`] requests.
    fn feed(&mut self, now: u64) {
        let mask = self.offer;
        let offer = |d: &T::RequestData| mask & 1u64.wrapping_shl(d.slot()) != 0;
        while self.serving.len() < IN_SERVICE {
            let offered = self
                .staged
                .iter()
                .filter(|(_, d)| offer(d))
                .map(|(info, d)| command(&info, d.arrival_ns()));
            let Some(k) = self.disk.pick(now, offered) else {
                return;
            };
            // The drive's index counts offered requests only.
            let index = self
                .staged
                .iter()
                .enumerate()
                .filter(|(_, (_, d))| offer(d))
                .nth(k)
                .map(|(i, _)| i);
            let Some(rq) = index.and_then(|i| self.staged.remove(i)) else {
                return;
            };
            let cmd = command(&rq.info(), rq.data().arrival_ns());
            self.unstaged(rq.data().slot());
            rq.data().set_done_ns(self.disk.start(now, cmd).done_ns);
            self.serving.push_back(rq);
        }
    }

    /// Counts a request of `slot` out of the staged ones.
    fn unstaged(&mut self, slot: u32) {
        if let Some(n) = self.counts.get_mut(slot as usize) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.pending &= !(1u64 << slot);
            }
        }
    }

    /// Whether the drive has nothing in service.
    fn idle(&self) -> bool {
        self.serving.len() == 0
    }

    /// Takes the requests in service that are done at `now` (at most
    /// [`IN_SERVICE`]).
    fn take_done(&mut self, now: u64) -> [Option<Request<T>>; IN_SERVICE] {
        let mut done = [None, None];
        let mut out = done.iter_mut();
        let mut i = 0;
        while let Some(due) = self.serving.iter().nth(i).map(|(_, d)| d.done_ns() <= now) {
            if !due {
                i += 1;
                continue;
            }
            match (self.serving.remove(i), out.next()) {
                (Some(rq), Some(slot)) => *slot = Some(rq),
                // More in service than `IN_SERVICE` (never): back to stay.
                (Some(rq), None) => {
                    self.serving.push_back(rq);
                    break;
                }
                (None, _) => break,
            }
        }
        done
    }

    /// The next time the timer must fire: a completion or a slice's wait.
    fn next_event(&self) -> Option<u64> {
        let done = self.serving.iter().map(|(_, d)| d.done_ns()).min();
        match (done, self.wake_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// A modelled single-actuator disk serving requests of tag set type `T`.
#[pin_data]
pub(crate) struct Spindle<T: Operations> {
    #[pin]
    state: IrqSpinLock<Dispatch<T>>,
    /// `time_slice_us` of the (single) hardware queue, in ns.
    slice_ns: AtomicU64,
}

impl<T: Operations> Spindle<T>
where
    T::RequestData: SpindleRequest,
{
    /// A new idle spindle with an idle drive of `params`.
    pub(crate) fn new(
        params: &DiskParams,
        slice_ns: u64,
        start: SliceStart,
    ) -> Result<impl PinInit<Self, Error>> {
        // The drive is built here, in process context, and boxed: it is too
        // large to move through the stacks of the paths that use it.
        let disk = KBox::new(
            Disk::new(params).map_err(|_: ParamError| EINVAL)?,
            GFP_KERNEL,
        )?;
        Ok(try_pin_init!(Self {
            state <- IrqSpinLock::new(Dispatch::new(disk, start)),
            slice_ns: AtomicU64::new(slice_ns),
        }))
    }

    /// Changes the time slice; the dispatcher picks it up at its next choice.
    pub(crate) fn set_slice_ns(&self, ns: u64) {
        // Relaxed: a tunable; the next dispatch under the lock reads it.
        self.slice_ns.store(ns, Ordering::Relaxed);
    }

    /// The drive's counters.
    pub(crate) fn stats(&self) -> DiskStats {
        self.state.lock().disk.stats()
    }

    /// Stages a started request and gives the drive what it may take.
    pub(crate) fn submit(timer: &Timer<Self>, rq: Request<T>) {
        let this = timer.target();
        let info = rq.info();
        if info.bytes == 0 {
            // A flush: a write-through drive has nothing cached to write.
            let status = rq.data().status();
            rq.end(status);
            return;
        }
        let mut st = this.state.lock();
        // Read under the lock, so the dispatcher never sees time go back
        // behind a completion that took the lock first.
        let now = now_ns();
        let slot = st.slot_of(info.sw_queue);
        rq.data().set_arrival(slot as u32, now);
        // Kept with slices off too, for when they are turned on.
        st.sched
            .arrived(slot as u32, info.sector, u64::from(info.bytes >> 9));
        st.staged.push_back(rq);
        if let Some(n) = st.counts.get_mut(slot) {
            *n += 1;
        }
        st.pending |= 1 << slot;
        this.dispatch(&mut st, now, timer);
    }

    /// blk-mq's timeout fired for `rq`: if the spindle holds it (staged or
    /// in service), it is given up and returned, to be timed out, once its
    /// timeout has expired more than [`TIMEOUTS_KEPT`] times or when the
    /// queue is draining (a removal waits for it); until then the timer is
    /// reset (`None`, also for a request the spindle does not have).
    pub(crate) fn reclaim(timer: &Timer<Self>, rq: &Expired<'_>) -> Option<Request<T>> {
        let this = timer.target();
        let mut st = this.state.lock();
        let give_up = |d: &T::RequestData| d.note_timeout() > TIMEOUTS_KEPT || rq.draining();
        let taken = if let Some((i, d)) = st.staged.find(rq) {
            if !give_up(d) {
                return None;
            }
            let taken = st.staged.remove(i)?;
            st.unstaged(taken.data().slot());
            taken
        } else {
            let (i, d) = st.serving.find(rq)?;
            if !give_up(d) {
                return None;
            }
            // The drive's model keeps its timing; the slot is free for the
            // next request.
            st.serving.remove(i)?
        };
        // Under the lock: see `submit`.
        let now = now_ns();
        this.dispatch(&mut st, now, timer);
        Some(taken)
    }

    /// Asks the slice scheduler what the drive may be offered, feeds it,
    /// and arms the timer for the next completion or wait.
    fn dispatch(&self, st: &mut Dispatch<T>, now: u64, timer: &Timer<Self>) {
        // Relaxed: a tunable, applied from the next choice on.
        let slice = self.slice_ns.load(Ordering::Relaxed);
        if st.sched.slice_ns() != slice {
            st.sched.set_slice_ns(slice);
            // Wait for the active queue's next request while its slice lasts.
            st.sched.set_idle_ns(slice);
        }
        let idle = st.idle();
        let offer = st.sched.offer(now, st.pending, idle);
        st.offer = offer.mask;
        st.wake_ns = offer.wake_ns;
        // Nothing offered is staged: no walk of the staged requests (under
        // the lock, interrupts off).
        if st.offer & st.pending != 0 {
            st.feed(now);
        }
        if let Some(at) = st.next_event() {
            // Also covers a racing re-arm: the timer fires for the earliest.
            timer.arm_at(at);
        }
    }
}

impl<T: Operations> Fire for Spindle<T>
where
    T::RequestData: SpindleRequest,
{
    fn fire(timer: &Timer<Self>) {
        let this = timer.target();
        let done = {
            let mut st = this.state.lock();
            // Under the lock: see `submit`.
            let now = now_ns();
            let done = st.take_done(now);
            if st.sched.is_enabled() {
                for rq in done.iter().flatten() {
                    st.sched.serviced(rq.data().slot(), now);
                }
            }
            if st.wake_ns.is_some_and(|t| t <= now) {
                st.wake_ns = None;
            }
            this.dispatch(&mut st, now, timer);
            done
        };
        for rq in done.into_iter().flatten() {
            let status = rq.data().status();
            // `end` calls `Operations::release` first: the driver gives
            // back what it holds for the request (rnull: its host tag).
            rq.end(status);
        }
    }
}
