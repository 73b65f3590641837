// SPDX-License-Identifier: GPL-2.0

//! Polled completion: the requests a poll queue holds until blk-mq polls
//! it ([`PollList`]), and the completion batch of one `poll` call
//! ([`PollBatch`]).
//!
//! A request of a hardware context of type `HCTX_TYPE_POLL` (io_uring with
//! `IORING_SETUP_IOPOLL`, `preadv2(RWF_HIPRI)`) raises no interrupt: its
//! submitter calls the driver's `poll` until the request is done. The
//! driver parks a started request on its hardware queue's [`PollList`] in
//! `queue_rq`, and `poll` takes the list and ends what is done.
//!
//! # Timeouts
//!
//! A request on a list is owned by the list, and nothing ends it there
//! unless its submitter polls. When blk-mq's timeout handler comes for a
//! request of a poll queue, kapi takes it off the list
//! ([`PollList::take_one`]) and ends it with `BLK_STS_TIMEOUT`, as
//! null_blk's `null_timeout_rq` does under its poll lock: a poller that
//! stopped (an `IORING_SETUP_IOPOLL` ring never reaped) would otherwise
//! hold its requests forever, and with them a queue freeze,
//! `del_gendisk` and module unload. A request that is not on the list is
//! in the hands of a concurrent `poll`, which ends it: the handler gives
//! it more time.

use super::{
    batch::add_to_batch_inline,
    operations::Operations,
    request::{Pdu, Request, Status},
};
use core::{
    marker::PhantomData,
    ptr::null_mut,
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{bindings, prelude::*};

/// Started requests waiting for `poll`: a lock-free stack (the kernel's
/// `llist`: push one, take all) linked through each request's PDU.
///
/// Only whole-list removal exists, so there is no ABA problem: a pushed
/// request can only come back after a `take_all` handed it out.
///
/// # Invariants
///
/// Every request reachable from `head` through the PDU links is a started
/// request of a [`super::tagset::TagSet<T>`] owned by the list.
pub(crate) struct PollList<T: Operations> {
    head: AtomicPtr<bindings::request>,
    _p: PhantomData<T>,
}

// SAFETY: the list moves whole `Request<T>`s, which are `Send`, between
// CPUs; its only shared state is the atomic head.
unsafe impl<T: Operations> Send for PollList<T> {}
// SAFETY: as above; `&self` methods only use the head atomically.
unsafe impl<T: Operations> Sync for PollList<T> {}

impl<T: Operations> Default for PollList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Operations> PollList<T> {
    /// An empty list.
    pub(crate) const fn new() -> Self {
        // INVARIANT: nothing is on it.
        Self {
            head: AtomicPtr::new(null_mut()),
            _p: PhantomData,
        }
    }

    /// Parks `rq` until a [`Self::take_all`] hands it out again.
    pub(crate) fn push(&self, rq: Request<T>) {
        // Not released: the request stays in the driver.
        let raw = rq.into_raw();
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `raw` is a request of a `TagSet<T>` that we own until
            // the exchange below publishes it.
            unsafe { Pdu::<T>::set_link(raw, head) };
            // Release: the `take_all` that gets the request sees its link
            // and everything done to it before (data copied, status set).
            match self
                .head
                .compare_exchange_weak(head, raw, Ordering::Release, Ordering::Relaxed)
            {
                // INVARIANT: the list owns `raw` now; its link leads to the
                // requests it owned before.
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// Whether nothing is parked (a hint: a push may come right after).
    pub(crate) fn is_empty(&self) -> bool {
        // Relaxed: only a hint; `take_all` synchronises.
        self.head.load(Ordering::Relaxed).is_null()
    }

    /// Takes every parked request, oldest first.
    pub(crate) fn take_all(&self) -> Parked<T> {
        // Acquire: pairs with the Release of every `push` of what we take.
        let mut rq = self.head.swap(null_mut(), Ordering::Acquire);
        // The stack is newest first: reverse the links for arrival order.
        let mut prev = null_mut();
        while !rq.is_null() {
            // SAFETY: the swap made us the owner of every request on the
            // old list (type invariant), so their links are ours to change.
            let next = unsafe { Pdu::<T>::link(rq) };
            // SAFETY: as above.
            unsafe { Pdu::<T>::set_link(rq, prev) };
            prev = rq;
            rq = next;
        }
        // INVARIANT: the taken requests are handed to `Parked`.
        Parked {
            next: prev,
            _p: PhantomData,
        }
    }
}

impl<T: Operations> PollList<T> {
    /// Takes `rq` off the list if it is parked here, and parks the others
    /// again; `None` if it is not here (a concurrent [`Self::take_all`],
    /// `poll`'s, took it and will end it).
    ///
    /// The list has no unlink, so this takes the whole list (an Acquire
    /// swap, pairing with the Release of every `push`: we see each taken
    /// request's link and state) and pushes the rest back oldest first
    /// (Release CAS each, for the next taker). Their order among
    /// themselves is kept; requests pushed meanwhile end up ahead of them,
    /// which only matters to no one: `poll` ends every due request it
    /// takes. A `poll` running meanwhile finds fewer (or no) requests and
    /// its caller polls again.
    pub(crate) fn take_one(&self, rq: *mut bindings::request) -> Option<Request<T>> {
        let mut found = None;
        for parked in self.take_all() {
            if found.is_none() && parked.as_raw() == rq {
                found = Some(parked);
            } else {
                self.push(parked);
            }
        }
        found
    }
}

impl<T: Operations> Drop for PollList<T> {
    /// blk-mq tears a hardware context down (`exit_hctx`, which drops the
    /// list with the context's data) only once none of its requests is in
    /// the driver, and the timeout handler takes a parked request whose
    /// poller stopped off the list, so the list is empty by then. A request
    /// still here could not be ended soundly: [`Operations::release`] reads
    /// its hardware context's data, which is being dropped. So it is left
    /// alone (never touched again) and reported, rather than ended.
    fn drop(&mut self) {
        if !self.head.get_mut().is_null() {
            pr_err!("requests left on a dropped poll list, not ended (a driver bug)\n");
        }
    }
}

/// The requests one [`PollList::take_all`] took, oldest first; dropping it
/// ends those not yet taken out with an I/O error.
///
/// # Invariants
///
/// The requests reachable from `next` through the PDU links are started
/// requests of a `TagSet<T>` owned by this value.
pub(crate) struct Parked<T: Operations> {
    next: *mut bindings::request,
    _p: PhantomData<T>,
}

// SAFETY: it owns whole requests, which are `Send`.
unsafe impl<T: Operations> Send for Parked<T> {}

impl<T: Operations> Iterator for Parked<T> {
    type Item = Request<T>;

    fn next(&mut self) -> Option<Request<T>> {
        let rq = self.next;
        if rq.is_null() {
            return None;
        }
        // SAFETY: we own `rq` (type invariant), so its link is ours to read.
        self.next = unsafe { Pdu::<T>::link(rq) };
        // SAFETY: `rq` is a started request of a `TagSet<T>` we owned; its
        // ownership moves to the returned value.
        unsafe { Request::from_raw(rq) }
    }
}

impl<T: Operations> Drop for Parked<T> {
    fn drop(&mut self) {
        // Each dropped `Request` ends with an I/O error.
        for rq in self.by_ref() {
            drop(rq);
        }
    }
}

/// The completion batch of one `poll` call: blk-mq's caller (io_uring)
/// ends the requests on it after `poll` returns, in one go.
///
/// # Invariants
///
/// `iob` is null or the `io_comp_batch` of the current `poll` call, which
/// its owner completes after the call; only this CPU touches it meanwhile.
pub(crate) struct PollBatch<'a> {
    iob: *mut bindings::io_comp_batch,
    /// Not `Send` or `Sync`: the batch belongs to the polling task.
    _p: PhantomData<(&'a mut bindings::io_comp_batch, *mut ())>,
}

impl PollBatch<'_> {
    /// Wraps `poll`'s batch.
    ///
    /// # Safety
    ///
    /// `iob` must be null or the batch of the current `poll` call, and the
    /// value must not outlive that call.
    pub(super) unsafe fn new(iob: *mut bindings::io_comp_batch) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self {
            iob,
            _p: PhantomData,
        }
    }

    /// Ends `rq` with `status`: on the batch if it can take it, else now.
    /// Inline, with the batch's checks: `poll` ends every request it takes
    /// here, in one loop.
    #[inline(always)]
    pub(crate) fn end<T: Operations>(&self, rq: Request<T>, status: Status) {
        if self.iob.is_null() {
            rq.end(status);
            return;
        }
        // SAFETY: a non-null `iob` is this call's batch, ours alone during
        // it and completed by its owner afterwards (type invariant).
        if let Some(rq) = unsafe { add_to_batch_inline(self.iob, rq, status) } {
            rq.end(status);
        }
    }
}
