// SPDX-License-Identifier: GPL-2.0

//! What a dispatching callback knows about the call it runs in
//! ([`Dispatch`]), and the plug lists of `queue_rqs` ([`RqList`]).

use super::{
    batch::CompletionBatch,
    operations::{Operations, OperationsVTable},
    rcu::ReadSide,
    request::{Pending, Request, Status},
};
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{bindings, types::ForeignOwnable};

/// `BLK_MQ_F_TAG_QUEUE_SHARED`: the context's tags are shared with other queues.
const TAG_QUEUE_SHARED: usize = bindings::BLK_MQ_F_TAG_QUEUE_SHARED as usize;

/// What blk-mq guarantees the code of one `queue_rq` call.
///
/// Only the `queue_rq` and `queue_rqs` callbacks make one, and lend it for
/// one request's dispatch, so holding a `&Dispatch` proves the code runs
/// inside that call.
///
/// # Invariants
///
/// `rcu` is set exactly when the tag set is not `BLK_MQ_F_BLOCKING`; then
/// the call runs inside blk-mq's `rcu_read_lock()` section (which
/// `blk_mq_quiesce_queue` relies on) for as long as the value lives.
pub(crate) struct Dispatch<'a> {
    rcu: Option<ReadSide<'a>>,
    /// The hardware queue is a poll queue (`HCTX_TYPE_POLL`).
    polled: bool,
    /// Where successful completions go when blk-mq dispatches a batch.
    batch: Option<&'a CompletionBatch>,
    /// Not `Send`: the guarantee holds on the dispatching CPU only.
    _p: PhantomData<*mut ()>,
}

impl<'a> Dispatch<'a> {
    /// The context of a dispatch to `hctx`.
    ///
    /// # Safety
    ///
    /// `hctx` must be live, the caller must run inside blk-mq's dispatch
    /// section for it (`blk_mq_run_dispatch_ops`: under `rcu_read_lock()`
    /// unless the set is blocking), and the value must not outlive that.
    pub(super) unsafe fn new(
        hctx: *mut bindings::blk_mq_hw_ctx,
        batch: Option<&'a CompletionBatch>,
    ) -> Self {
        // blk-mq sets the type when it maps the queues, which it does with
        // the queue frozen, so not while we dispatch.
        // SAFETY: the caller guarantees `hctx` is live; see above.
        let (flags, ty) = unsafe { ((*hctx).flags, (*hctx).type_) };
        let blocking = flags & bindings::BLK_MQ_F_BLOCKING as usize != 0;
        // INVARIANT: guaranteed by the caller.
        Self {
            // SAFETY: a non-blocking set's dispatch holds `rcu_read_lock()`
            // (guaranteed by the caller) while `self` lives on this frame.
            rcu: (!blocking).then(|| unsafe { ReadSide::new() }),
            polled: u32::from(ty) == bindings::hctx_type_HCTX_TYPE_POLL,
            batch,
            _p: PhantomData,
        }
    }

    /// Ends `rq`, which the driver completes within this dispatch, with
    /// `status`. In a batch dispatch (`queue_rqs`) successful requests are
    /// ended together when the batch is done; otherwise at once.
    pub(crate) fn end<T: Operations>(&self, rq: Request<T>, status: Status) {
        match self.batch {
            Some(batch) => batch.end(rq, status),
            None => rq.end(status),
        }
    }

    /// The request goes to a poll queue: nothing will interrupt for it,
    /// its submitter polls (`Operations::poll`) until it is ended.
    pub(crate) fn polled(&self) -> bool {
        self.polled
    }

    /// The RCU read-side critical section the dispatch runs in (a
    /// non-blocking tag set), for lookups whose results it keeps valid;
    /// `None` on a blocking set.
    pub(crate) fn rcu(&self) -> Option<&ReadSide<'_>> {
        self.rcu.as_ref()
    }

    /// The caller may sleep (a blocking tag set).
    pub(crate) fn may_sleep(&self) -> bool {
        self.rcu.is_none()
    }
}

/// A plug list handed to `queue_rqs`: requests of one queue, possibly of
/// several hardware queues, that blk-mq submits together.
///
/// # Invariants
///
/// `list` is the list of the current `queue_rqs` call, inside blk-mq's
/// dispatch section; its requests are being dispatched to `T`.
pub(crate) struct RqList<'a, T: Operations> {
    list: *mut bindings::rq_list,
    _p: PhantomData<(&'a mut bindings::rq_list, T)>,
}

impl<T: Operations> RqList<'_, T> {
    /// Wraps `queue_rqs`' list.
    ///
    /// # Safety
    ///
    /// `list` must be the list of the current `queue_rqs` call, made of
    /// requests of one queue of a disk made by [`super::disk::DiskBuilder`].
    pub(super) unsafe fn new(list: *mut bindings::rq_list) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self {
            list,
            _p: PhantomData,
        }
    }

    /// Dispatches each request as `queue_rq` would, with blk-mq's `last` per
    /// hardware queue, and ends the requests completed on the way in one
    /// batch.
    ///
    /// The list is taken over first: a completion ending a request inline
    /// may submit a new bio from the plug's task, which blk-mq then adds to
    /// the (now empty) plug list. At the first refusal the refused request
    /// and the rest are handed back, after whatever was added meanwhile,
    /// for blk-mq to issue one by one (as `blk_mq_plug_issue_direct` does;
    /// retrying the rest here would refuse them again).
    pub(crate) fn queue_each(self) {
        let rqlist = self.list;
        // SAFETY: the list is ours for this call (type invariant); so are its
        // requests until we start them or give them back.
        let mut rq = unsafe { core::mem::take(&mut (*rqlist).head) };
        // SAFETY: as above.
        let tail = unsafe { core::mem::take(&mut (*rqlist).tail) };
        let batch = CompletionBatch::new();
        // A batch of one ends no cheaper than the request alone. On a tag
        // set shared by several queues the batch's tags would stay taken
        // until the whole list is dispatched, while the other queues wait
        // for them: there each request ends as it completes, as null_blk's.
        let batched = rq != tail
            // SAFETY: a non-null `rq` is a request of the list we own; its
            // `mq_hctx` is a live context of this queue.
            && (rq.is_null() || unsafe { (*(*rq).mq_hctx).flags } & TAG_QUEUE_SHARED == 0);
        // The context whose requests were queued with `last == false` and
        // not yet committed.
        let mut uncommitted: *mut bindings::blk_mq_hw_ctx = core::ptr::null_mut();
        while let Some(this) = NonNull::new(rq) {
            // SAFETY: `rq` is a request of the list we own; its `mq_hctx` is
            // a live, initialised context of this queue.
            let (next, hctx) = unsafe {
                let next = (*rq).__bindgen_anon_1.rq_next;
                (*rq).__bindgen_anon_1.rq_next = core::ptr::null_mut();
                (next, (*rq).mq_hctx)
            };
            // The last request of this context in the list: blk-mq's
            // `last` is per hardware queue.
            // SAFETY: `next` is the rest of the list we own.
            let last = next.is_null() || unsafe { (*next).mq_hctx } != hctx;
            // SAFETY: see above; the disk's `queuedata` holds a `T::QueueData`.
            let (hw, queue) = unsafe {
                (
                    OperationsVTable::<T>::hw_data(hctx),
                    T::QueueData::borrow((*(*hctx).queue).queuedata),
                )
            };
            // SAFETY: `rq` is a request blk-mq dispatches to us now.
            let pending = unsafe { Pending::<T>::new(this) };
            // SAFETY: blk-mq flushes the plug list inside its dispatch
            // section (type invariant); `ctx` lives for this request only.
            let ctx = unsafe { Dispatch::new(hctx, batched.then_some(&batch)) };
            if T::queue_rq(&ctx, &hw, queue, pending, last).is_err() {
                if uncommitted == hctx {
                    // Requests queued before this one expected a later
                    // `last`; kick them as blk-mq would.
                    // SAFETY: `hctx` is live and initialised.
                    unsafe { OperationsVTable::<T>::commit(hctx) };
                }
                // SAFETY: blk-mq keeps a refused request; `rq` and `next` (the rest) go back on the
                // list, after anything a completion plugged meanwhile.
                unsafe {
                    (*rq).__bindgen_anon_1.rq_next = next;
                    let rest_tail = if next.is_null() { rq } else { tail };
                    if (*rqlist).tail.is_null() {
                        (*rqlist).head = rq;
                    } else {
                        (*(*rqlist).tail).__bindgen_anon_1.rq_next = rq;
                    }
                    (*rqlist).tail = rest_tail;
                }
                break;
            }
            uncommitted = if last { core::ptr::null_mut() } else { hctx };
            rq = next;
        }
        drop(batch);
    }
}
