// SPDX-License-Identifier: GPL-2.0

//! The rotational model's actuator and its dispatcher.
//!
//! Requests are started in `queue_rq` and staged per software queue (the
//! submitting CPU's `blk_mq_ctx`). The actuator serves one at a time, for
//! the time the [`DiskModel`] gives, and completes it from an hrtimer. What
//! it serves next is the dispatcher's choice:
//!
//! * `time_slice_us == 0`: the oldest staged request (arrival order, as
//!   plain blk-mq would send them);
//! * `time_slice_us > 0`: rtags' [`SliceSched`]: one software queue for the
//!   slice, extended up to 3x while it keeps being served, waiting for its
//!   next request while the slice lasts, then the next one round robin.
//!   The slice clock starts when the queue's first request completes
//!   (`time_slice_start=completion`, CFQ's rule, the default), so a seek
//!   longer than the slice does not use it up, or at selection
//!   (`time_slice_start=selection`, Herrmann's RFC).
//!
//! **Time dilation** (`model_time_dilation=K`): the actuator and the slice
//! scheduler live on a clock K times slower than the wall clock; service
//! times, slices and the waits for the active queue are all stretched by K.
//! To the model, the submitting CPUs look K times faster. That is what lets
//! an emulated guest, whose fio job needs hundreds of microseconds between
//! a completion and its next request, stand in for a host that needs tens:
//! the ratio of that turnaround to the slice decides whether a slice keeps
//! a stream's locality. Ratios between runs at the same K are the result;
//! modelled IOPS are K times fio's.
//!
//! All state is under one interrupt-disabling lock, taken by `queue_rq`
//! (process context) and the timer (hard interrupt); nothing else nests
//! inside it. Requests are ended after the lock is dropped.
//!
//! The spindle works for any tag set type `T` whose per-request data is a
//! [`SpindleRequest`]: it keeps the arrival number and the status to end
//! with.

use crate::{
    disk_model::DiskModel,
    kapi::{
        irq_lock::IrqSpinLock,
        operations::Operations,
        request::{Request, Status},
        rq_fifo::RqFifo,
        time::now_ns,
        timer::{Fire, Timer},
    },
    rtags::slice::{Pick, SliceSched, SliceStart},
};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{init::PinInit, prelude::*};

/// What the spindle needs from a request's driver data.
pub(crate) trait SpindleRequest {
    /// Records the arrival number (under the dispatcher's lock).
    fn set_seq(&self, seq: u64);

    /// The arrival number.
    fn seq(&self) -> u64;

    /// The status to end the request with once it is served (stored by
    /// `queue_rq` before [`Spindle::submit`]).
    fn status(&self) -> Status;
}

/// Software queues the dispatcher tells apart; more share slots.
const SLOTS: usize = 32;

/// The request being served, its software queue and when it is done.
struct Serving<T: Operations> {
    rq: Request<T>,
    slot: u32,
    done_ns: u64,
}

/// Dispatcher state, under the spindle's lock.
struct Dispatch<T: Operations> {
    staged: [RqFifo<T>; SLOTS],
    /// `blk_mq_ctx` identity owning each slot (0: free).
    owners: [usize; SLOTS],
    /// Bit `i` set when `staged[i]` is not empty.
    pending: u64,
    sched: SliceSched,
    current: Option<Serving<T>>,
    /// Sector after the last one served.
    head: u64,
    /// Arrival counter, for arrival order without slices.
    seq: u64,
}

impl<T: Operations> Dispatch<T>
where
    T::RequestData: SpindleRequest,
{
    fn new(start: SliceStart) -> Self {
        let mut sched = SliceSched::new();
        sched.set_start(start);
        Self {
            staged: core::array::from_fn(|_| RqFifo::default()),
            owners: [0; SLOTS],
            pending: 0,
            sched,
            current: None,
            head: 0,
            seq: 0,
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

    /// The slot whose first request arrived first.
    fn oldest(&self) -> Option<usize> {
        let mut best: Option<(usize, u64)> = None;
        let mut bits = self.pending;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let seq = self.staged.get(i).and_then(|f| f.front()).map(|c| c.seq());
            if let Some(seq) = seq {
                if best.map_or(true, |(_, s)| seq < s) {
                    best = Some((i, seq));
                }
            }
        }
        best.map(|(i, _)| i)
    }
}

/// A modelled single-actuator disk serving requests of tag set type `T`.
#[pin_data]
pub(crate) struct Spindle<T: Operations> {
    #[pin]
    state: IrqSpinLock<Dispatch<T>>,
    model: DiskModel,
    /// `time_slice_us` of the (single) hardware queue, in modelled ns.
    slice_ns: AtomicU64,
}

impl<T: Operations> Spindle<T>
where
    T::RequestData: SpindleRequest,
{
    /// A new idle spindle.
    pub(crate) fn new(
        model: DiskModel,
        slice_ns: u64,
        start: SliceStart,
    ) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            state <- IrqSpinLock::new(Dispatch::new(start)),
            model,
            slice_ns: AtomicU64::new(slice_ns),
        })
    }

    /// Changes the time slice; the dispatcher picks it up at its next choice.
    pub(crate) fn set_slice_ns(&self, ns: u64) {
        // Relaxed: a tunable; the next dispatch under the lock reads it.
        self.slice_ns.store(ns, Ordering::Relaxed);
    }

    /// Stages a started request from software queue `sw_queue` and serves
    /// it if the actuator is free.
    pub(crate) fn submit(timer: &Timer<Self>, rq: Request<T>, sw_queue: usize) {
        let this = timer.target();
        let mut st = this.state.lock();
        // Read under the lock, so the dispatcher never sees time go back
        // behind a completion that took the lock first.
        let now = now_ns();
        let slot = st.slot_of(sw_queue);
        let seq = st.seq;
        st.seq = seq.wrapping_add(1);
        rq.data().set_seq(seq);
        if let Some(fifo) = st.staged.get_mut(slot) {
            fifo.push_back(rq);
            st.pending |= 1 << slot;
        }
        this.dispatch(&mut st, now, timer);
    }

    /// Starts serving the next request, if the actuator is idle and the
    /// dispatcher has one to give; arms the timer for its end (or for the
    /// end of a slice's wait).
    fn dispatch(&self, st: &mut Dispatch<T>, now: u64, timer: &Timer<Self>) {
        if let Some(cur) = &st.current {
            // Covers a racing re-arm: the timer must fire for this request.
            timer.arm_at(cur.done_ns);
            return;
        }
        // Relaxed: a tunable, applied from the next choice on.
        let slice = self.model.wall_ns(self.slice_ns.load(Ordering::Relaxed));
        if st.sched.slice_ns() != slice {
            st.sched.set_slice_ns(slice);
            // Wait for the active queue's next request while its slice lasts.
            st.sched.set_idle_ns(slice);
        }
        for _ in 0..SLOTS {
            let slot = if st.sched.is_enabled() {
                match st.sched.pick(now, st.pending) {
                    Pick::Serve(s) => s as usize,
                    Pick::Wait { until_ns } => {
                        timer.arm_at(until_ns);
                        return;
                    }
                    Pick::Idle => return,
                }
            } else {
                match st.oldest() {
                    Some(s) => s,
                    None => return,
                }
            };
            let Some(fifo) = st.staged.get_mut(slot) else {
                return;
            };
            let next = fifo.pop_front();
            if fifo.is_empty() {
                st.pending &= !(1u64 << slot);
            }
            if let Some(rq) = next {
                let info = rq.info();
                let service = self.model.service_ns(st.head, info.sector, info.bytes);
                let done_ns = now + self.model.wall_ns(service);
                st.head = info.sector + u64::from(info.bytes >> 9);
                st.current = Some(Serving {
                    rq,
                    slot: slot as u32,
                    done_ns,
                });
                timer.arm_at(done_ns);
                return;
            }
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
            let finished = matches!(&st.current, Some(cur) if cur.done_ns <= now);
            let done = if finished { st.current.take() } else { None };
            if let Some(d) = &done {
                if st.sched.is_enabled() {
                    st.sched.serviced(d.slot, now);
                }
            }
            this.dispatch(&mut st, now, timer);
            done
        };
        if let Some(d) = done {
            let status = d.rq.data().status();
            // `end` calls `Operations::release` first: the driver gives
            // back what it holds for the request (rnull: its host tag).
            d.rq.end(status);
        }
    }
}
