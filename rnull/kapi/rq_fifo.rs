// SPDX-License-Identifier: GPL-2.0

//! A FIFO of owned requests, linked through their PDUs: no allocation, so it
//! can be used under a spinlock in any context.

use super::{
    operations::Operations,
    request::{Pdu, Request},
};
use core::ptr;
use kernel::bindings;

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
    /// True when no request is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first request, without taking it.
    pub(crate) fn front(&self) -> Option<&T::RequestData> {
        if self.head.is_null() {
            return None;
        }
        // SAFETY: `head` is an owned, live request (type invariant); the
        // borrow ends before it can be popped.
        Some(unsafe { Pdu::<T>::data_of(self.head) })
    }

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

impl<T: Operations> Drop for RqFifo<T> {
    fn drop(&mut self) {
        // Dropping an owned request fails it; nothing may be lost silently.
        while self.pop_front().is_some() {}
    }
}
