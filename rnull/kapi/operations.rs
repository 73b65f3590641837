// SPDX-License-Identifier: GPL-2.0

//! The driver callbacks of a tag set ([`Operations`]) and the C table that
//! routes blk-mq to them.
//!
//! Shaped after upstream `kernel::block::mq::Operations`: a `#[vtable]`
//! trait whose optional callbacks are left out of `blk_mq_ops` when the
//! driver does not implement them, queue data stored as a
//! [`ForeignOwnable`] in `request_queue.queuedata` and borrowed per call.
//! What kapi adds (per-hctx data, the dispatch context, `release`) is
//! described in `kapi/README.md`.

use super::{
    dispatch::{Dispatch, RqList},
    noio::NoIoScope,
    poll::{PollBatch, PollList},
    request::{reclaim_from_timer, Expired, Pdu, Pending, Refused, Request, Started, Status},
    tagset::QueueMaps,
};
use core::{ffi::c_void, marker::PhantomData, pin::Pin, ptr::NonNull};
use kernel::{bindings, error::Error, init::PinInit, prelude::*, types::ForeignOwnable};

/// What a [`ForeignOwnable`] lends out per call.
pub(crate) type ForeignBorrowed<'a, T> = <T as ForeignOwnable>::Borrowed<'a>;

/// How much of a request's release [`Operations::release`] did.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Released {
    /// All of it.
    All,
    /// Not all: [`Operations::release_rest`] finishes it.
    Partly,
}

/// The driver side of a tag set.
///
/// `QueueData` belongs to one request queue (disk) and is lent to every
/// callback of that queue; `HwData` belongs to one hardware context;
/// `RequestData` lives in each request's PDU.
///
/// Callbacks with a default body are optional: `#[vtable]` records which
/// ones the driver implements (`HAS_*`), and only those are put in
/// `blk_mq_ops`. Using a path that needs one the driver left out
/// ([`Request::complete`] without `complete`, [`Request::complete_after`]
/// without `timer_expired`) fails the build.
#[vtable]
pub(crate) trait Operations: Sized + 'static {
    /// Per request queue data, owned by the queue while it exists.
    type QueueData: ForeignOwnable + Send + Sync;
    /// Per hardware context data.
    type HwData: Send + Sync + 'static;
    /// Per request data.
    type RequestData: Send + Sync + 'static;

    /// Makes the data of one request when the tag set allocates it.
    fn new_request_data() -> Self::RequestData;

    /// Makes the data of hardware context `index` of `queue`.
    fn init_hctx(
        queue: ForeignBorrowed<'_, Self::QueueData>,
        index: u32,
    ) -> impl PinInit<Self::HwData, Error>;

    /// Dispatches one request. `last` is false when more follow for the same
    /// hardware queue, and [`Self::commit_rqs`] or a later `last` will come.
    fn queue_rq(
        ctx: &Dispatch<'_>,
        hw: &Self::HwData,
        queue: ForeignBorrowed<'_, Self::QueueData>,
        rq: Pending<'_, Self>,
        last: bool,
    ) -> Result<Started, Refused>;

    /// Dispatches a plug list at once. Implementing it opts in to blk-mq's
    /// batch submission; [`RqList::queue_each`] gives each request to
    /// [`Self::queue_rq`] and ends the completed ones in one batch.
    fn queue_rqs(_list: RqList<'_, Self>) {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Kicks the hardware for requests queued with `last == false` when
    /// blk-mq stops dispatching before the `last` one (a refusal, or no
    /// budget or driver tag for the next request).
    fn commit_rqs(_hw: &Self::HwData, _queue: ForeignBorrowed<'_, Self::QueueData>) {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Gives back what the driver holds for `rq` (a budget tag, ...): called
    /// once each time the request leaves the driver, however it does
    /// (ended, batched, requeued or dropped), right before it goes, if
    /// [`Self::holds`] says it holds something. Not a blk-mq callback; the
    /// default holds nothing. What it leaves ([`Released::Partly`]) is
    /// finished by [`Self::release_rest`].
    fn release(_rq: &Request<Self>) -> Released {
        Released::All
    }

    /// Finishes the release that [`Self::release`] left partly done: kapi
    /// calls it right after `release`, before the request goes, out of
    /// line. A `release` whose common case calls nothing, leaving its rare
    /// work here, lets [`Request::end`] end a request that held something
    /// with a tail call into blk-mq, without a stack frame of its own.
    fn release_rest(_rq: &Request<Self>) {}

    /// Whether `rq` holds anything [`Self::release`] gives back: it must
    /// say yes whenever `release` would do anything (a no skips `release`
    /// at every exit). Inlined into every exit: a driver that can tell
    /// cheaply (one load) lets a request that holds nothing end with a
    /// tail call into blk-mq, and `Request::end` runs `release` out of
    /// line. The default says yes exactly when the driver has a `release`.
    #[inline(always)]
    fn holds(_rq: &Request<Self>) -> bool {
        Self::HAS_RELEASE
    }

    /// A request handed to [`Request::complete`] comes back here.
    fn complete(_rq: Request<Self>) {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// A request handed to [`Request::complete_after`] comes back here.
    fn timer_expired(_rq: Request<Self>) {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Maps the CPUs to the hardware queues of each kind
    /// ([`QueueMaps::map`]): when the tag set is allocated and whenever its
    /// number of hardware queues changes. A tag set with poll queues needs
    /// it (and [`Self::poll`]); without it, blk-mq spreads the CPUs over
    /// the default queues. kapi gives the default kind every queue if the
    /// driver left it none.
    fn map_queues(_maps: &mut QueueMaps<'_>) {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// Ends what is done among the requests of the poll queue `hw`
    /// ([`super::tagset::HctxType::Poll`]), through `batch`; returns how
    /// many it ended. blk-mq calls it from the task waiting for a polled
    /// request, again and again (until something ends, a signal or
    /// `need_resched`), so it should be cheap when nothing is ready.
    fn poll(
        _hw: &Self::HwData,
        _queue: ForeignBorrowed<'_, Self::QueueData>,
        _batch: &PollBatch<'_>,
    ) -> u32 {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// The list on which the poll queue `hw` parks its started requests
    /// until [`Self::poll`] ends them, if it has one. blk-mq's timeout
    /// handler takes a request it finds there off it and gives it to
    /// [`Self::timed_out`] (see [`super::poll`]); a request parked on a
    /// list kapi does not know of is never timed out.
    fn poll_list(_hw: &Self::HwData) -> Option<&PollList<Self>> {
        None
    }

    /// blk-mq's timeout fired for `rq`, which kapi does not hold (not on
    /// its hrtimer, lost or on a poll list): the driver keeps it in a
    /// structure of its own. Return it, taken out of that structure, to
    /// have it timed out ([`Self::timed_out`], or `BLK_STS_TIMEOUT`), or
    /// `None` to give it another timeout period (and for a request the
    /// driver does not have: it is completing). A driver that keeps
    /// requests must bound how long: a request kept for ever keeps
    /// `del_gendisk`, and so module unload, waiting; [`Expired::draining`]
    /// says someone waits for the queue.
    fn reclaim(
        _queue: ForeignBorrowed<'_, Self::QueueData>,
        _rq: &Expired<'_>,
    ) -> Option<Request<Self>> {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// blk-mq's timeout fired for a request the driver had given up (an
    /// armed hrtimer, [`Request::lose`], a list of [`Self::poll_list`]) or
    /// gives back ([`Self::reclaim`]). Without it kapi ends such a request
    /// with `BLK_STS_TIMEOUT`.
    fn timed_out(_rq: Request<Self>) {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
}

/// The `blk_mq_ops` table for `T`.
pub(super) struct OperationsVTable<T: Operations>(PhantomData<T>);

impl<T: Operations> OperationsVTable<T> {
    const VTABLE: bindings::blk_mq_ops = bindings::blk_mq_ops {
        queue_rq: Some(Self::queue_rq_callback),
        commit_rqs: if T::HAS_COMMIT_RQS {
            Some(Self::commit_rqs_callback)
        } else {
            None
        },
        queue_rqs: if T::HAS_QUEUE_RQS {
            Some(Self::queue_rqs_callback)
        } else {
            None
        },
        get_budget: None,
        put_budget: None,
        set_rq_budget_token: None,
        get_rq_budget_token: None,
        // A lost request is reclaimed here even without `timed_out`: see
        // `timeout_callback`.
        timeout: Some(Self::timeout_callback),
        poll: if T::HAS_POLL {
            Some(Self::poll_callback)
        } else {
            None
        },
        complete: if T::HAS_COMPLETE {
            Some(Self::complete_callback)
        } else {
            None
        },
        init_hctx: Some(Self::init_hctx_callback),
        exit_hctx: Some(Self::exit_hctx_callback),
        init_request: Some(Self::init_request_callback),
        exit_request: Some(Self::exit_request_callback),
        cleanup_rq: None,
        busy: None,
        map_queues: if T::HAS_MAP_QUEUES {
            Some(Self::map_queues_callback)
        } else {
            None
        },
        #[cfg(CONFIG_BLK_DEBUG_FS)]
        show_rq: None,
    };

    /// The table, for `blk_mq_tag_set.ops`.
    pub(super) fn build() -> &'static bindings::blk_mq_ops {
        &Self::VTABLE
    }

    /// The queue data of the queue `hctx` belongs to.
    ///
    /// # Safety
    ///
    /// `hctx` must be a live hardware context of a disk made by
    /// [`super::disk::DiskBuilder`], whose `queuedata` holds a
    /// `T::QueueData` for as long as the queue exists.
    unsafe fn queue_data<'a>(
        hctx: *mut bindings::blk_mq_hw_ctx,
    ) -> ForeignBorrowed<'a, T::QueueData> {
        // SAFETY: guaranteed by the caller: `queuedata` came from
        // `into_foreign` and outlives the borrow.
        unsafe { T::QueueData::borrow((*(*hctx).queue).queuedata) }
    }

    /// The driver data of `hctx`.
    ///
    /// # Safety
    ///
    /// `hctx` must be live and initialised by `init_hctx_callback`.
    pub(super) unsafe fn hw_data<'a>(hctx: *mut bindings::blk_mq_hw_ctx) -> Pin<&'a T::HwData> {
        // SAFETY: `driver_data` holds a `Pin<KBox<T::HwData>>` from
        // `init_hctx_callback` until `exit_hctx_callback`.
        unsafe { <Pin<KBox<T::HwData>>>::borrow((*hctx).driver_data) }
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
                NonNull::new((*bd).rq),
                (*bd).last,
            )
        };
        let Some(rq) = rq else {
            return Status::IO_ERROR.raw();
        };
        // SAFETY: `rq` is the request blk-mq dispatches in this call.
        let rq = unsafe { Pending::<T>::new(rq) };
        // SAFETY: blk-mq runs `queue_rq` inside its dispatch section
        // (`blk_mq_run_dispatch_ops`) and `ctx` lives on this frame only.
        let ctx = unsafe { Dispatch::new(hctx, None) };
        match T::queue_rq(&ctx, &hw, queue, rq, last) {
            Ok(_started) => bindings::BLK_STS_OK as _,
            Err(refused) => refused.status().raw(),
        }
    }

    /// # Safety
    ///
    /// Called by blk-mq (`blk_mq_flush_plug_list`) inside its dispatch
    /// section with a list of requests of one queue made by
    /// [`super::disk::DiskBuilder`].
    unsafe extern "C" fn queue_rqs_callback(rqlist: *mut bindings::rq_list) {
        // SAFETY: guaranteed by the caller.
        T::queue_rqs(unsafe { RqList::new(rqlist) });
    }

    /// # Safety
    ///
    /// Called by blk-mq with a live `hctx`.
    unsafe extern "C" fn commit_rqs_callback(hctx: *mut bindings::blk_mq_hw_ctx) {
        // SAFETY: blk-mq passes a live, initialised `hctx`.
        let (hw, queue) = unsafe { (Self::hw_data(hctx), Self::queue_data(hctx)) };
        T::commit_rqs(&hw, queue);
    }

    /// `commit_rqs` for [`RqList`], which has the context at hand.
    ///
    /// # Safety
    ///
    /// `hctx` must be live and initialised.
    pub(super) unsafe fn commit(hctx: *mut bindings::blk_mq_hw_ctx) {
        if T::HAS_COMMIT_RQS {
            // SAFETY: guaranteed by the caller.
            unsafe { Self::commit_rqs_callback(hctx) };
        }
    }

    /// # Safety
    ///
    /// Called by blk-mq (`blk_mq_update_queue_map`) with a tag set made by
    /// [`super::tagset::TagSet::new`] whose maps it is rebuilding.
    unsafe extern "C" fn map_queues_callback(set: *mut bindings::blk_mq_tag_set) {
        // SAFETY: guaranteed by the caller; `maps` lives for this call only.
        let mut maps = unsafe { QueueMaps::new(set) };
        T::map_queues(&mut maps);
        maps.finish();
    }

    /// # Safety
    ///
    /// Called by blk-mq (`blk_hctx_poll`) with a live poll `hctx` of a disk
    /// made by [`super::disk::DiskBuilder`] (the polling task holds a
    /// reference on its queue) and `iob` null or its completion batch.
    unsafe extern "C" fn poll_callback(
        hctx: *mut bindings::blk_mq_hw_ctx,
        iob: *mut bindings::io_comp_batch,
    ) -> core::ffi::c_int {
        // SAFETY: blk-mq passes a live, initialised `hctx`.
        let (hw, queue) = unsafe { (Self::hw_data(hctx), Self::queue_data(hctx)) };
        // SAFETY: `iob` is null or the caller's batch, which it completes
        // after this call; `batch` lives for this call only.
        let batch = unsafe { PollBatch::new(iob) };
        let done = T::poll(&hw, queue, &batch);
        core::ffi::c_int::try_from(done).unwrap_or(core::ffi::c_int::MAX)
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
        let reclaimed = match unsafe { reclaim_from_timer::<T>(rq) } {
            Some(rq) => Some(rq),
            // blk-mq's timeout work holds a queue reference (so the
            // hardware contexts live) and one on `rq` (so its tag is not
            // reused meanwhile).
            // SAFETY: as above.
            None => match unsafe { Self::reclaim_from_poll_list(rq) } {
                Some(rq) => Some(rq),
                // SAFETY: as above.
                None => unsafe { Self::reclaim_from_driver(rq) },
            },
        };
        match reclaimed {
            Some(rq) if T::HAS_TIMED_OUT => {
                T::timed_out(rq);
                bindings::blk_eh_timer_return_BLK_EH_DONE
            }
            Some(rq) => {
                rq.end(Status::TIMEOUT);
                bindings::blk_eh_timer_return_BLK_EH_DONE
            }
            // The request is completing right now, or is owned by code that
            // will end it: give it more time.
            None => bindings::blk_eh_timer_return_BLK_EH_RESET_TIMER,
        }
    }

    /// Takes `rq` off its poll queue's list ([`Operations::poll_list`]) if
    /// it is parked there.
    ///
    /// # Safety
    ///
    /// `rq` must be a started request of this tag set, of a queue whose
    /// hardware contexts stay alive during the call.
    unsafe fn reclaim_from_poll_list(rq: *mut bindings::request) -> Option<Request<T>> {
        if !T::HAS_POLL_LIST {
            return None;
        }
        // SAFETY: a started request's `mq_hctx` is set, and the caller
        // keeps its hardware context alive.
        let hctx = unsafe { (*rq).mq_hctx };
        if hctx.is_null() {
            return None;
        }
        // SAFETY: as above; `type_` is fixed once the context is mapped.
        let ty = unsafe { (*hctx).type_ };
        if u32::from(ty) != bindings::hctx_type_HCTX_TYPE_POLL {
            return None;
        }
        // SAFETY: `hctx` is live and initialised (see above).
        let hw = unsafe { Self::hw_data(hctx) };
        T::poll_list(&hw)?.take_one(rq)
    }

    /// Asks the driver for `rq` back ([`Operations::reclaim`]).
    ///
    /// # Safety
    ///
    /// `rq` must be a started request of this tag set, of a disk made by
    /// [`super::disk::DiskBuilder`] whose queue stays alive during the call.
    unsafe fn reclaim_from_driver(rq: *mut bindings::request) -> Option<Request<T>> {
        if !T::HAS_RECLAIM {
            return None;
        }
        let rq = NonNull::new(rq)?;
        // `expired` lives for this call only.
        // SAFETY: the queue is live (caller), its `queuedata` a `T::QueueData`.
        let (queue, expired) = unsafe {
            (
                T::QueueData::borrow((*(*rq.as_ptr()).q).queuedata),
                Expired::new(rq),
            )
        };
        T::reclaim(queue, &expired)
    }

    /// # Safety
    ///
    /// Called by blk-mq while setting up a hardware context of a queue made
    /// by [`super::disk::DiskBuilder`].
    unsafe extern "C" fn init_hctx_callback(
        hctx: *mut bindings::blk_mq_hw_ctx,
        _tagset_data: *mut c_void,
        index: u32,
    ) -> i32 {
        // SAFETY: `queuedata` is set before blk-mq initialises hardware contexts.
        let queue = unsafe { Self::queue_data(hctx) };
        // `GFP_NOIO`, as blk-mq's own allocation of the context: a change
        // of the queue count runs this with the queue frozen. (6.12's
        // allocation flags have no `GFP_NOIO`: a scope makes `GFP_KERNEL`
        // that.)
        let noio = NoIoScope::new();
        let data = KBox::pin_init(T::init_hctx(queue, index), GFP_KERNEL);
        drop(noio);
        match data {
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
    /// [`super::tagset::TagSet::new`].
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
