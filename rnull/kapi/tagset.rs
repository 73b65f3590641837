// SPDX-License-Identifier: GPL-2.0

//! blk-mq tag sets and the driver callbacks behind them.

use super::batch::CompletionBatch;
use super::request::{reclaim_from_timer, Pdu, Pending, Refused, Request, Started, Status};
use core::{ffi::c_void, marker::PhantomData, pin::Pin};
use kernel::{
    bindings,
    error::{self, Error},
    init::PinInit,
    prelude::*,
    sync::{Arc, ArcBorrow},
    try_pin_init,
    types::{ForeignOwnable, Opaque},
};

/// The driver side of a tag set.
///
/// `QueueData` belongs to one request queue (disk) and is reached through
/// `request_queue.queuedata`; `HwData` belongs to one hardware context and is
/// reached through `blk_mq_hw_ctx.driver_data`; `RequestData` lives in each
/// request's PDU.
pub(crate) trait Operations: Sized + 'static {
    /// Per request queue data.
    type QueueData: Send + Sync + 'static;
    /// Per hardware context data.
    type HwData: Send + Sync + 'static;
    /// Per request data.
    type RequestData: Send + Sync + 'static;

    /// Makes the data of one request when the tag set allocates it.
    fn new_request_data() -> Self::RequestData;

    /// Makes the data of hardware context `index` of `queue`.
    fn init_hctx(queue: &Self::QueueData, index: u32) -> impl PinInit<Self::HwData, Error>;

    /// Dispatches one request. `last` is false when more follow in this batch.
    fn queue_rq(
        ctx: &Dispatch<'_>,
        hw: &Self::HwData,
        queue: &Self::QueueData,
        rq: Pending<'_, Self>,
        last: bool,
    ) -> Result<Started, Refused>;

    /// Ends a batch whose last request was refused.
    fn commit_rqs(_hw: &Self::HwData, _queue: &Self::QueueData) {}

    /// Gives back what the driver holds for `rq` (a budget tag, ...): called
    /// once each time the request leaves the driver, however it does
    /// (ended, batched, requeued or dropped), right before it goes.
    fn release(_rq: &Request<Self>) {}

    /// A request handed to [`Request::complete`] comes back here.
    fn complete(rq: Request<Self>);

    /// A request handed to [`Request::complete_after`] comes back here.
    fn timer_expired(rq: Request<Self>);

    /// blk-mq's timeout fired for a request whose hrtimer was still pending.
    fn timed_out(rq: Request<Self>);
}

/// What blk-mq guarantees the code of one `queue_rq` call.
///
/// Only the `queue_rq` and `queue_rqs` callbacks make one, and lend it for
/// one request's dispatch, so holding a `&Dispatch` proves the code runs
/// inside that call.
///
/// # Invariants
///
/// If `blocking` is false, the tag set is not `BLK_MQ_F_BLOCKING` and the
/// call runs inside blk-mq's `rcu_read_lock()` section (which
/// `blk_mq_quiesce_queue` relies on), for as long as the value lives.
pub(crate) struct Dispatch<'a> {
    blocking: bool,
    /// Where successful completions go when blk-mq dispatches a batch.
    batch: Option<&'a CompletionBatch>,
    /// Not `Send`: the guarantee holds on the dispatching CPU only.
    _p: PhantomData<*mut ()>,
}

impl Dispatch<'_> {
    /// Ends `rq`, which the driver completes within this dispatch, with
    /// `status`. In a batch dispatch (`queue_rqs`) successful requests are
    /// ended together when the batch is done; otherwise at once.
    pub(crate) fn end<T: Operations>(&self, rq: Request<T>, status: Status) {
        match self.batch {
            Some(batch) => batch.end(rq, status),
            None => rq.end(status),
        }
    }

    /// The caller holds the RCU read lock (a non-blocking tag set).
    pub(crate) fn rcu_held(&self) -> bool {
        !self.blocking
    }
}

/// Options of a tag set.
pub(crate) struct TagSetConfig {
    /// Number of hardware queues.
    pub(crate) nr_hw_queues: u32,
    /// Tags per hardware queue.
    pub(crate) queue_depth: u32,
    /// `queue_rq` may sleep (`BLK_MQ_F_BLOCKING`).
    pub(crate) blocking: bool,
    /// Request timeout in milliseconds (0: blk-mq's default of 30 s).
    pub(crate) timeout_ms: u32,
}

/// A `struct blk_mq_tag_set` whose callbacks go to `T`.
///
/// # Invariants
///
/// `inner` was set up by `blk_mq_alloc_tag_set` with `OperationsVTable::<T>`
/// and a PDU size of `Pdu<T>`, and is freed on drop.
#[pin_data(PinnedDrop)]
pub(crate) struct TagSet<T: Operations> {
    #[pin]
    inner: Opaque<bindings::blk_mq_tag_set>,
    _p: PhantomData<T>,
}

// SAFETY: blk-mq serialises its own use of the tag set; Rust only hands out
// the raw pointer.
unsafe impl<T: Operations> Send for TagSet<T> {}
// SAFETY: as above.
unsafe impl<T: Operations> Sync for TagSet<T> {}

impl<T: Operations> TagSet<T> {
    /// Allocates a tag set; use with `Arc::pin_init`.
    pub(crate) fn new(config: &TagSetConfig) -> impl PinInit<Self, Error> {
        // blk-mq places the PDU right after the request (`rq + 1`).
        const { assert!(core::mem::align_of::<Pdu<T>>() <= core::mem::align_of::<bindings::request>()) };
        let cmd_size = u32::try_from(core::mem::size_of::<Pdu<T>>());
        let mut flags = bindings::BLK_MQ_F_SHOULD_MERGE;
        if config.blocking {
            flags |= bindings::BLK_MQ_F_BLOCKING;
        }
        let (nr_hw_queues, queue_depth) = (config.nr_hw_queues, config.queue_depth);
        // 0 keeps blk-mq's default (30 s).
        let timeout =
            u32::try_from(kernel::time::msecs_to_jiffies(config.timeout_ms)).unwrap_or(u32::MAX);
        try_pin_init!(TagSet {
            inner <- PinInit::<_, Error>::pin_chain(Opaque::uninit(), move |inner| {
                let cmd_size = cmd_size.map_err(|_| EINVAL)?;
                let raw: *mut bindings::blk_mq_tag_set = inner.get();
                // A zeroed tag set is the starting point `blk_mq_alloc_tag_set`
                // expects; we fill in what it reads.
                // SAFETY: `raw` is valid for writes.
                error::to_result(unsafe {
                    raw.write(core::mem::zeroed());
                    (*raw).ops = OperationsVTable::<T>::build();
                    (*raw).nr_hw_queues = nr_hw_queues;
                    (*raw).queue_depth = queue_depth;
                    (*raw).cmd_size = cmd_size;
                    (*raw).numa_node = bindings::NUMA_NO_NODE;
                    (*raw).timeout = timeout;
                    (*raw).flags = flags;
                    (*raw).nr_maps = 1;
                    bindings::blk_mq_alloc_tag_set(raw)
                })
            }),
            _p: PhantomData,
        })
    }

    /// The raw tag set, for allocating disks on it.
    pub(crate) fn as_raw(&self) -> *mut bindings::blk_mq_tag_set {
        self.inner.get()
    }
}

#[pinned_drop]
impl<T: Operations> PinnedDrop for TagSet<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: by the type invariant the set was allocated; every disk on
        // it holds an `Arc` to it, so none is left.
        unsafe { bindings::blk_mq_free_tag_set(self.inner.get()) };
    }
}

/// The `blk_mq_ops` table for `T`.
struct OperationsVTable<T: Operations>(PhantomData<T>);

impl<T: Operations> OperationsVTable<T> {
    const VTABLE: bindings::blk_mq_ops = bindings::blk_mq_ops {
        queue_rq: Some(Self::queue_rq_callback),
        commit_rqs: Some(Self::commit_rqs_callback),
        queue_rqs: Some(Self::queue_rqs_callback),
        get_budget: None,
        put_budget: None,
        set_rq_budget_token: None,
        get_rq_budget_token: None,
        timeout: Some(Self::timeout_callback),
        poll: None,
        complete: Some(Self::complete_callback),
        init_hctx: Some(Self::init_hctx_callback),
        exit_hctx: Some(Self::exit_hctx_callback),
        init_request: Some(Self::init_request_callback),
        exit_request: Some(Self::exit_request_callback),
        cleanup_rq: None,
        busy: None,
        map_queues: None,
        #[cfg(CONFIG_BLK_DEBUG_FS)]
        show_rq: None,
    };

    fn build() -> &'static bindings::blk_mq_ops {
        &Self::VTABLE
    }

    /// The queue data of the queue `hctx` belongs to.
    ///
    /// # Safety
    ///
    /// `hctx` must be a live hardware context of a disk made by
    /// [`super::disk::Disk`], whose `queuedata` holds an `Arc<T::QueueData>`
    /// for as long as the queue exists.
    unsafe fn queue_data<'a>(hctx: *mut bindings::blk_mq_hw_ctx) -> ArcBorrow<'a, T::QueueData> {
        // SAFETY: guaranteed by the caller: `queuedata` came from
        // `Arc::into_foreign` and outlives the borrow.
        unsafe { <Arc<T::QueueData>>::borrow((*(*hctx).queue).queuedata) }
    }

    /// The driver data of `hctx`.
    ///
    /// # Safety
    ///
    /// `hctx` must be live and initialised by `init_hctx_callback`.
    unsafe fn hw_data<'a>(hctx: *mut bindings::blk_mq_hw_ctx) -> Pin<&'a T::HwData> {
        // SAFETY: `driver_data` holds a `Pin<KBox<T::HwData>>` from
        // `init_hctx_callback` until `exit_hctx_callback`.
        unsafe { <Pin<KBox<T::HwData>>>::borrow((*hctx).driver_data) }
    }

    /// Whether `hctx`'s tag set is `BLK_MQ_F_BLOCKING`.
    ///
    /// # Safety
    ///
    /// `hctx` must be live.
    unsafe fn is_blocking(hctx: *mut bindings::blk_mq_hw_ctx) -> bool {
        // SAFETY: guaranteed by the caller.
        unsafe { (*hctx).flags & bindings::BLK_MQ_F_BLOCKING as usize != 0 }
    }

    /// # Safety
    ///
    /// Called by blk-mq with a live `hctx` and the request it dispatches.
    unsafe extern "C" fn queue_rq_callback(
        hctx: *mut bindings::blk_mq_hw_ctx,
        bd: *const bindings::blk_mq_queue_data,
    ) -> bindings::blk_status_t {
        // SAFETY: blk-mq passes valid `hctx` and `bd` for this call.
        let (hw, queue, rq, last) = unsafe {
            (
                Self::hw_data(hctx),
                Self::queue_data(hctx),
                Pending::<T>::new((*bd).rq),
                (*bd).last,
            )
        };
        let Some(rq) = rq else {
            return super::request::Status::IO_ERROR.raw();
        };
        // INVARIANT: blk-mq runs `queue_rq` of a non-blocking set under
        // `rcu_read_lock()` (`blk_mq_run_dispatch_ops`); `ctx` lives on this
        // stack frame only.
        let ctx = Dispatch {
            // SAFETY: `hctx` is live for this call.
            blocking: unsafe { Self::is_blocking(hctx) },
            batch: None,
            _p: PhantomData,
        };
        match T::queue_rq(&ctx, &hw, &queue, rq, last) {
            Ok(_started) => bindings::BLK_STS_OK as _,
            Err(refused) => refused.status().raw(),
        }
    }

    /// Dispatches a plug list, as `queue_rq` would each request, and ends
    /// the requests completed on the way in one batch.
    ///
    /// The list is taken over first: a completion ending a request inline
    /// may submit a new bio from the plug's task, which blk-mq then adds to
    /// the (now empty) plug list. At the first refusal the refused request
    /// and the rest are handed back, after whatever was added meanwhile,
    /// for blk-mq to issue one by one (as `blk_mq_plug_issue_direct` does;
    /// retrying the rest here would refuse them again).
    ///
    /// # Safety
    ///
    /// Called by blk-mq (`blk_mq_flush_plug_list`) inside its dispatch
    /// section with a list of requests of one queue made by
    /// [`super::disk::Disk`].
    unsafe extern "C" fn queue_rqs_callback(rqlist: *mut bindings::rq_list) {
        // SAFETY: blk-mq hands us the list for this call; we own its requests (being dispatched to
        // us, `Pending`'s invariant) until we start them or give them back.
        let mut rq = unsafe { core::mem::take(&mut (*rqlist).head) };
        // SAFETY: as above.
        let tail = unsafe { core::mem::take(&mut (*rqlist).tail) };
        let batch = CompletionBatch::new();
        // A batch of one ends no cheaper than the request alone.
        let batched = rq != tail;
        // The context whose requests were queued with `last == false` and
        // not yet committed.
        let mut uncommitted: *mut bindings::blk_mq_hw_ctx = core::ptr::null_mut();
        while !rq.is_null() {
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
            // SAFETY: see above.
            let (hw, queue) = unsafe { (Self::hw_data(hctx), Self::queue_data(hctx)) };
            // SAFETY: `rq` is a request blk-mq dispatches to us now.
            let Some(pending) = (unsafe { Pending::<T>::new(rq) }) else {
                break;
            };
            // INVARIANT: as in `queue_rq_callback`: blk-mq flushes the plug
            // list inside `blk_mq_run_dispatch_ops`.
            let ctx = Dispatch {
                // SAFETY: `hctx` is live.
                blocking: unsafe { Self::is_blocking(hctx) },
                batch: if batched { Some(&batch) } else { None },
                _p: PhantomData,
            };
            if T::queue_rq(&ctx, &hw, &queue, pending, last).is_err() {
                if uncommitted == hctx {
                    // Requests queued before this one expected a later
                    // `last`; kick them as blk-mq would.
                    T::commit_rqs(&hw, &queue);
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

    /// # Safety
    ///
    /// Called by blk-mq with a live `hctx`.
    unsafe extern "C" fn commit_rqs_callback(hctx: *mut bindings::blk_mq_hw_ctx) {
        // SAFETY: blk-mq passes a live, initialised `hctx`.
        let (hw, queue) = unsafe { (Self::hw_data(hctx), Self::queue_data(hctx)) };
        T::commit_rqs(&hw, &queue);
    }

    /// # Safety
    ///
    /// Called by blk-mq for a request passed to `blk_mq_complete_request`.
    unsafe extern "C" fn complete_callback(rq: *mut bindings::request) {
        // SAFETY: `Request::complete` gave ownership to blk-mq, which hands it
        // on to this callback exactly once.
        if let Some(rq) = unsafe { Request::<T>::from_raw(rq) } {
            T::complete(rq);
        }
    }

    /// # Safety
    ///
    /// Called by blk-mq's timeout handler for a started request.
    unsafe extern "C" fn timeout_callback(
        rq: *mut bindings::request,
    ) -> bindings::blk_eh_timer_return {
        // SAFETY: `rq` is a started request of this tag set.
        match unsafe { reclaim_from_timer::<T>(rq) } {
            Some(rq) => {
                T::timed_out(rq);
                bindings::blk_eh_timer_return_BLK_EH_DONE
            }
            // The request is completing right now, or is owned by code that
            // will end it: give it more time.
            None => bindings::blk_eh_timer_return_BLK_EH_RESET_TIMER,
        }
    }

    /// # Safety
    ///
    /// Called by blk-mq while setting up a hardware context of a queue made
    /// by [`super::disk::Disk`].
    unsafe extern "C" fn init_hctx_callback(
        hctx: *mut bindings::blk_mq_hw_ctx,
        _tagset_data: *mut c_void,
        index: u32,
    ) -> i32 {
        // SAFETY: `queuedata` is set before blk-mq initialises hardware contexts.
        let queue = unsafe { Self::queue_data(hctx) };
        match KBox::pin_init(T::init_hctx(&queue, index), GFP_KERNEL) {
            Ok(data) => {
                // SAFETY: `hctx` is live; `exit_hctx_callback` takes the box back.
                unsafe { (*hctx).driver_data = data.into_foreign() as *mut c_void };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by blk-mq when tearing down a context set up by
    /// `init_hctx_callback`.
    unsafe extern "C" fn exit_hctx_callback(hctx: *mut bindings::blk_mq_hw_ctx, _index: u32) {
        // SAFETY: `driver_data` came from `into_foreign` in `init_hctx_callback`
        // and is not used after this.
        unsafe {
            let data = (*hctx).driver_data;
            (*hctx).driver_data = core::ptr::null_mut();
            drop(<Pin<KBox<T::HwData>>>::from_foreign(data));
        }
    }

    /// # Safety
    ///
    /// Called by blk-mq for every request it allocates in a tag set made by
    /// [`TagSet::new`].
    unsafe extern "C" fn init_request_callback(
        _set: *mut bindings::blk_mq_tag_set,
        rq: *mut bindings::request,
        _hctx_index: u32,
        _numa_node: u32,
    ) -> i32 {
        // SAFETY: the PDU of a new request is ours to initialise; `cmd_size`
        // is the size of `Pdu<T>`.
        unsafe { Pdu::<T>::init(Pdu::<T>::of(rq)) };
        0
    }

    /// # Safety
    ///
    /// Called by blk-mq before freeing a request set up by
    /// `init_request_callback`.
    unsafe extern "C" fn exit_request_callback(
        _set: *mut bindings::blk_mq_tag_set,
        rq: *mut bindings::request,
        _hctx_index: u32,
    ) {
        // SAFETY: the PDU was initialised and the request is idle.
        unsafe { Pdu::<T>::drop_in_place(Pdu::<T>::of(rq)) };
    }
}
