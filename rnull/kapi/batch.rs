// SPDX-License-Identifier: GPL-2.0

//! Batched completion of requests ended during one `queue_rqs` call.
//!
//! blk-mq's `queue_rqs` hands a driver a whole plug list at once. A driver
//! that ends requests right away (null_blk's `irqmode=0`) can then end the
//! successful ones together with `blk_mq_end_request_batch()`, which frees
//! their tags and drops their queue references once per hardware queue
//! instead of once per request, and reads the clock once for the batch.
//! That is the same path polled completions take (`blk_mq_add_to_batch()`).

use super::operations::Operations;
use super::request::{Request, Status};
use core::cell::UnsafeCell;
use kernel::bindings;

/// `RQF_SCHED_TAGS`: the request came from a scheduler's tags.
const RQF_SCHED_TAGS: u32 = 1 << bindings::__RQF_SCHED_TAGS;
/// The flags that make `blk_mq_need_time_stamp()` true.
const RQF_NEED_TS: u32 = (1 << bindings::__RQF_IO_STAT)
    | (1 << bindings::__RQF_STATS)
    | (1 << bindings::__RQF_USE_SCHED);

/// An `io_comp_batch` filled during one dispatch and ended by its owner.
///
/// # Invariants
///
/// Every request on `iob.req_list` was started, was owned by the driver when
/// it was added, passed `blk_mq_add_to_batch()`'s checks, and is ended when
/// the batch is dropped (by its owner, the `queue_rqs` callback, before it
/// returns).
pub(crate) struct CompletionBatch {
    iob: UnsafeCell<bindings::io_comp_batch>,
}

impl CompletionBatch {
    /// An empty batch.
    pub(super) fn new() -> Self {
        Self {
            iob: UnsafeCell::new(bindings::io_comp_batch {
                req_list: bindings::rq_list {
                    head: core::ptr::null_mut(),
                    tail: core::ptr::null_mut(),
                },
                need_ts: false,
                complete: None,
            }),
        }
    }

    /// Ends `rq` with `status`: a successful, batchable request joins the
    /// batch, anything else is ended at once (`blk_mq_add_to_batch()`).
    pub(super) fn end<T: Operations>(&self, rq: Request<T>, status: Status) {
        // The batch is neither `Send` nor `Sync`: only the dispatching CPU
        // touches it, and it is ended by its owner (type invariant).
        // SAFETY: as above.
        if let Some(rq) = unsafe { add_to_batch(self.iob.get(), rq, status) } {
            rq.end(status);
        }
    }
}

/// Moves `rq`, to be ended with `status`, onto the batch `iob` if blk-mq's
/// batch completion can take it (what `blk_mq_add_to_batch()` checks, and
/// not a passthrough request); gives it back otherwise.
///
/// A batch whose `complete` is someone else's (io_uring may have collected
/// another driver's requests in it) takes nothing.
///
/// Out of line: a dispatch ends one request per `queue_rq`, which is large
/// already; `poll`, which ends a whole poll list in a loop, inlines
/// [`add_to_batch_inline`].
///
/// # Safety
///
/// `iob` must be valid, used by nobody else during the call, and completed
/// by its owner (`iob->complete(iob)`) after it.
#[inline(never)]
pub(super) unsafe fn add_to_batch<T: Operations>(
    iob: *mut bindings::io_comp_batch,
    rq: Request<T>,
    status: Status,
) -> Option<Request<T>> {
    // SAFETY: guaranteed by the caller.
    unsafe { add_to_batch_inline(iob, rq, status) }
}

/// [`add_to_batch`], inline.
///
/// # Safety
///
/// As for [`add_to_batch`].
#[inline(always)]
pub(super) unsafe fn add_to_batch_inline<T: Operations>(
    iob: *mut bindings::io_comp_batch,
    rq: Request<T>,
    status: Status,
) -> Option<Request<T>> {
    let raw = rq.as_raw();
    // SAFETY: we own the started request, so its fields are stable.
    let (flags, op, end_io) = unsafe {
        (
            (*raw).rq_flags,
            (*raw).cmd_flags & super::request::OP_MASK,
            (*raw).end_io,
        )
    };
    let passthrough = op == bindings::req_op_REQ_OP_DRV_IN || op == bindings::req_op_REQ_OP_DRV_OUT;
    if status != Status::OK || flags & RQF_SCHED_TAGS != 0 || passthrough || end_io.is_some() {
        return Some(rq);
    }
    let ours: unsafe extern "C" fn(*mut bindings::io_comp_batch) =
        bindings::blk_mq_end_request_batch;
    // SAFETY: `iob` is valid and ours for the call (see above).
    match unsafe { (*iob).complete } {
        None => {}
        // By address, as C compares them.
        Some(f) if f as usize == ours as usize => {}
        Some(_) => return Some(rq),
    }
    // The request leaves the driver here, as in `Request::end`.
    rq.release();
    let raw = rq.into_raw();
    // SAFETY: `iob` is ours for the call (see above); `raw` is a started
    // request whose ownership moves to the batch, which its owner ends.
    unsafe {
        (*iob).complete = Some(ours);
        (*iob).need_ts |= flags & RQF_NEED_TS != 0;
        (*raw).__bindgen_anon_1.rq_next = (*iob).req_list.head;
        (*iob).req_list.head = raw;
        if (*iob).req_list.tail.is_null() {
            (*iob).req_list.tail = raw;
        }
    }
    None
}

impl Drop for CompletionBatch {
    /// Ends every request in the batch.
    fn drop(&mut self) {
        let iob = self.iob.get();
        // SAFETY: see `end`; every request on the list is owned by the batch
        // (type invariant) and ended here exactly once.
        unsafe {
            if !(*iob).req_list.head.is_null() {
                bindings::blk_mq_end_request_batch(iob);
            }
        }
    }
}
