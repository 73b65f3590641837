// SPDX-License-Identifier: GPL-2.0

//! A FIFO of owned requests, linked through their PDUs: no allocation, so it
//! can be used under a spinlock in any context.

use super::{
    operations::Operations,
    request::{info_of, Expired, Info, Pdu, Request},
};
use core::ptr;
use kernel::{bindings, prelude::*};

/// Owned, started requests in arrival order.
///
/// # Invariants
///
/// `head..tail` is a chain of started requests of a `TagSet<T>`, linked
/// through their PDU's `link`, each owned by this FIFO (no `Request<T>`
/// exists for them elsewhere); `len` is the chain's length.
pub(crate) struct RqFifo<T: Operations> {
    head: *mut bindings::request,
    tail: *mut bindings::request,
    len: usize,
    _p: core::marker::PhantomData<Request<T>>,
}

// SAFETY: the FIFO owns its requests, which are `Send`.
unsafe impl<T: Operations> Send for RqFifo<T> {}

impl<T: Operations> Default for RqFifo<T> {
    fn default() -> Self {
        // INVARIANT: the empty chain.
        Self {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            len: 0,
            _p: core::marker::PhantomData,
        }
    }
}

impl<T: Operations> RqFifo<T> {
    /// Appends `rq`.
    pub(crate) fn push_back(&mut self, rq: Request<T>) {
        let raw = rq.into_raw();
        // SAFETY: we own `raw` now; its PDU link is ours to write, and the
        // old tail is an owned member of the chain.
        unsafe {
            Pdu::<T>::set_link(raw, ptr::null_mut());
            if self.tail.is_null() {
                self.head = raw;
            } else {
                Pdu::<T>::set_link(self.tail, raw);
            }
        }
        self.tail = raw;
        // INVARIANT: `raw` is linked at the tail and counted.
        self.len += 1;
    }

    /// How many requests it holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The requests' fields and driver data, first to last.
    pub(crate) fn iter(&self) -> Iter<'_, T> {
        Iter {
            next: self.head,
            _p: core::marker::PhantomData,
        }
    }

    /// Where `rq` is in the FIFO (0: first), and its driver data, if it is
    /// here.
    pub(crate) fn find(&self, rq: &Expired<'_>) -> Option<(usize, &T::RequestData)> {
        let mut raw = self.head;
        let mut n = 0;
        while !raw.is_null() {
            if rq.is(raw) {
                // SAFETY: `raw` is an owned member of the chain (type
                // invariant), whose PDU is readable while `self` is borrowed.
                return Some((n, unsafe { Pdu::<T>::data_of(raw) }));
            }
            // SAFETY: as above.
            raw = unsafe { Pdu::<T>::link(raw) };
            n += 1;
        }
        None
    }

    /// Takes the `n`th request (0: the first), if there are that many.
    pub(crate) fn remove(&mut self, n: usize) -> Option<Request<T>> {
        if n >= self.len {
            return None;
        }
        if n == 0 {
            return self.pop_front();
        }
        let mut prev = self.head;
        for _ in 1..n {
            // SAFETY: `n < len`, so the first `n` members exist; each is an
            // owned member of the chain (type invariant).
            prev = unsafe { Pdu::<T>::link(prev) };
        }
        // SAFETY: as above; `prev` is member `n - 1`, so it has a successor.
        let raw = unsafe { Pdu::<T>::link(prev) };
        // SAFETY: `raw` and `prev` are owned members of the chain; `raw`'s
        // successor takes its place after `prev`.
        unsafe { Pdu::<T>::set_link(prev, Pdu::<T>::link(raw)) };
        if self.tail == raw {
            self.tail = prev;
        }
        self.len -= 1;
        // SAFETY: unlinked above, so ownership passes to the caller.
        unsafe { Request::from_raw(raw) }
    }

    /// Takes the first request.
    pub(crate) fn pop_front(&mut self) -> Option<Request<T>> {
        if self.head.is_null() {
            return None;
        }
        let raw = self.head;
        // SAFETY: `raw` is an owned member of the chain (type invariant).
        self.head = unsafe { Pdu::<T>::link(raw) };
        if self.head.is_null() {
            self.tail = ptr::null_mut();
        }
        self.len -= 1;
        // SAFETY: unlinked above, so ownership passes to the caller.
        unsafe { Request::from_raw(raw) }
    }
}

/// The requests of an [`RqFifo`], first to last ([`RqFifo::iter`]).
///
/// # Invariants
///
/// `next` is null or a member of the chain of an `RqFifo<T>` that is
/// borrowed for `'a` (so no member can be taken or ended meanwhile).
pub(crate) struct Iter<'a, T: Operations> {
    next: *mut bindings::request,
    _p: core::marker::PhantomData<&'a RqFifo<T>>,
}

impl<'a, T: Operations> Iterator for Iter<'a, T> {
    type Item = (Info, &'a T::RequestData);

    fn next(&mut self) -> Option<Self::Item> {
        if self.next.is_null() {
            return None;
        }
        let raw = self.next;
        // No one else writes a member's link while the FIFO is borrowed.
        // SAFETY: `raw` is a live, started member of the borrowed chain (type invariant): its
        // fields and PDU are readable for `'a`.
        let item = unsafe { (info_of(raw), Pdu::<T>::data_of(raw)) };
        // SAFETY: as above.
        // INVARIANT: the successor is null or a member of the same chain.
        self.next = unsafe { Pdu::<T>::link(raw) };
        Some(item)
    }
}

impl<T: Operations> Drop for RqFifo<T> {
    /// The FIFO's owner takes every request out before it drops it: blk-mq
    /// releases a queue (its hardware contexts, then its driver data) only
    /// once none of its requests is in the driver, which `del_gendisk`
    /// waits for, and the timeout handler takes back from the driver what
    /// it keeps too long ([`Operations::reclaim`]). A request still here
    /// could not be ended soundly: its hardware context, which
    /// [`Operations::release`] reads, may be gone. So it is left alone
    /// (never touched again) and reported, rather than ended.
    fn drop(&mut self) {
        if self.len != 0 {
            pr_err!(
                "{} requests left in a dropped FIFO, not ended (a driver bug)\n",
                self.len
            );
        }
    }
}
