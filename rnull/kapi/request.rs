// SPDX-License-Identifier: GPL-2.0

//! Requests: who owns a request at each step, and what can be read from it.
//!
//! blk-mq hands a request to `queue_rq` as a [`Pending`]. The driver either
//! refuses it ([`Pending::refuse`], blk-mq keeps it) or starts it
//! ([`Pending::start_with`]), which yields the owned
//! [`Request`] and the [`Started`] proof `queue_rq` must return. Both
//! consume the `Pending`, so a request can never be both started and
//! refused, and a `Pending` lends out nothing of the request's data but to
//! [`Pending::start_with`], so a refused request cannot have recorded
//! anything the driver would have to give back.
//!
//! A [`Request`] is ended exactly once: directly ([`Request::end`]), through
//! blk-mq's completion path ([`Request::complete`], which gives it back in
//! [`Operations::complete`]) or through its own hrtimer
//! ([`Request::complete_after`], given back in
//! [`Operations::timer_expired`]). Dropping one ends it with an I/O error.

use super::operations::{Operations, OperationsVTable, Released};
use core::{
    marker::PhantomData,
    mem::ManuallyDrop,
    pin::Pin,
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{bindings, types::Opaque};

/// A block-layer completion status (`blk_status_t`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Status(u8);

impl Status {
    /// Success.
    pub(crate) const OK: Status = Status(bindings::BLK_STS_OK as u8);
    /// Operation not supported (`BLK_STS_NOTSUPP`).
    pub(crate) const NOT_SUPPORTED: Status = Status(1);
    /// The request timed out (`BLK_STS_TIMEOUT`).
    pub(crate) const TIMEOUT: Status = Status(2);
    /// Out of a resource; blk-mq retries later (`BLK_STS_RESOURCE`): it
    /// arms a delayed re-run (3 ms) if nothing else restarts the queue.
    pub(crate) const RESOURCE: Status = Status(9);
    /// Out of a resource the driver restarts the queue for when it comes
    /// back (`BLK_STS_DEV_RESOURCE`): blk-mq arms no delayed re-run.
    pub(crate) const DEV_RESOURCE: Status = Status(13);
    /// Generic I/O error (`BLK_STS_IOERR`).
    pub(crate) const IO_ERROR: Status = Status(10);
    /// Too many open zones (`BLK_STS_ZONE_OPEN_RESOURCE`).
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    pub(crate) const ZONE_OPEN_RESOURCE: Status = Status(14);
    /// Too many active zones (`BLK_STS_ZONE_ACTIVE_RESOURCE`).
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    pub(crate) const ZONE_ACTIVE_RESOURCE: Status = Status(15);

    /// The raw value.
    pub(crate) fn raw(self) -> u8 {
        self.0
    }

    /// Rebuilds a status stored with [`Status::raw`].
    pub(crate) fn from_raw(raw: u8) -> Self {
        Status(raw)
    }
}

/// What a request asks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Op {
    /// Read data.
    Read,
    /// Write data.
    Write,
    /// Flush the volatile cache.
    Flush,
    /// Discard a range.
    Discard,
    /// Write zeroes over a range.
    WriteZeroes,
    /// Zone append: write at the zone's write pointer, which the request's
    /// sector then reports.
    ZoneAppend,
    /// Open a zone explicitly.
    ZoneOpen,
    /// Close a zone.
    ZoneClose,
    /// Finish a zone (make it full).
    ZoneFinish,
    /// Reset a zone's write pointer.
    ZoneReset,
    /// Reset every zone.
    ZoneResetAll,
    /// Anything else (driver private, ...).
    Other,
}

impl Op {
    /// Whether this is a zone management operation (no data).
    pub(crate) fn is_zone_mgmt(self) -> bool {
        matches!(
            self,
            Op::ZoneOpen | Op::ZoneClose | Op::ZoneFinish | Op::ZoneReset | Op::ZoneResetAll
        )
    }
}

/// A snapshot of the fields of a request the driver looks at.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Info {
    /// The operation.
    pub(crate) op: Op,
    /// First sector (512 bytes each).
    pub(crate) sector: u64,
    /// Length in bytes.
    pub(crate) bytes: u32,
    /// A write that must reach stable media before it completes (`REQ_FUA`).
    pub(crate) fua: bool,
    /// Identity of the software queue (submitting CPU's `blk_mq_ctx`) the
    /// request came from; only compared, never dereferenced.
    pub(crate) sw_queue: usize,
}

/// The operation bits of `cmd_flags`.
pub(super) const OP_MASK: u32 = (1 << bindings::REQ_OP_BITS) - 1;

/// [`Op`] of every `REQ_OP_*` value: a load per request instead of a chain
/// of compares (the request path is measured in instructions).
static OPS: [Op; 1 << bindings::REQ_OP_BITS] = {
    let mut ops = [Op::Other; 1 << bindings::REQ_OP_BITS];
    ops[bindings::req_op_REQ_OP_READ as usize] = Op::Read;
    ops[bindings::req_op_REQ_OP_WRITE as usize] = Op::Write;
    ops[bindings::req_op_REQ_OP_FLUSH as usize] = Op::Flush;
    ops[bindings::req_op_REQ_OP_DISCARD as usize] = Op::Discard;
    ops[bindings::req_op_REQ_OP_WRITE_ZEROES as usize] = Op::WriteZeroes;
    ops[bindings::req_op_REQ_OP_ZONE_APPEND as usize] = Op::ZoneAppend;
    ops[bindings::req_op_REQ_OP_ZONE_OPEN as usize] = Op::ZoneOpen;
    ops[bindings::req_op_REQ_OP_ZONE_CLOSE as usize] = Op::ZoneClose;
    ops[bindings::req_op_REQ_OP_ZONE_FINISH as usize] = Op::ZoneFinish;
    ops[bindings::req_op_REQ_OP_ZONE_RESET as usize] = Op::ZoneReset;
    ops[bindings::req_op_REQ_OP_ZONE_RESET_ALL as usize] = Op::ZoneResetAll;
    ops
};

const _: () = assert!(OPS.len() == OP_MASK as usize + 1);

/// Reads the fields of `rq`.
///
/// # Safety
///
/// `rq` must point to a request that blk-mq has handed to the driver and that
/// has not been ended yet.
pub(super) unsafe fn info_of(rq: *mut bindings::request) -> Info {
    // SAFETY: the caller guarantees `rq` is live.
    let (flags, sector, bytes, sw_queue) = unsafe {
        (
            (*rq).cmd_flags,
            (*rq).__sector,
            (*rq).__data_len,
            (*rq).mq_ctx as usize,
        )
    };
    // `flags & OP_MASK` is below `OPS.len()` (asserted at build time): the
    // fallback is never taken, and the compiler drops the check.
    let op = OPS
        .get((flags & OP_MASK) as usize)
        .copied()
        .unwrap_or(Op::Other);
    Info {
        op,
        sector,
        bytes,
        fua: flags & (1 << bindings::req_flag_bits___REQ_FUA) != 0,
        sw_queue,
    }
}

/// The per-request area blk-mq allocates after each `struct request`.
///
/// # Invariants
///
/// `timer` was initialised by `hrtimer_init` with [`timer_callback`] as its
/// function, and `data` is initialised, from `init_request` until
/// `exit_request`.
#[repr(C)]
pub(crate) struct Pdu<T: Operations> {
    timer: Opaque<bindings::hrtimer>,
    /// Next request in an [`super::rq_fifo::RqFifo`] or a
    /// [`super::poll::PollList`] (a request is on one at most); only touched
    /// by the request's owner.
    link: core::cell::Cell<*mut bindings::request>,
    /// Set by [`Request::lose`]: nobody owns the request until blk-mq's
    /// timeout handler takes it back.
    lost: AtomicBool,
    data: T::RequestData,
}

impl<T: Operations> Pdu<T> {
    /// Initialises the PDU of a freshly allocated request.
    ///
    /// # Safety
    ///
    /// `pdu` must point to writable, uninitialised memory of `cmd_size` bytes
    /// that blk-mq will not use until [`Pdu::drop_in_place`].
    pub(crate) unsafe fn init(pdu: *mut Self) {
        // SAFETY: the caller guarantees `pdu` is valid for writes.
        unsafe {
            let timer = Opaque::raw_get(core::ptr::addr_of!((*pdu).timer));
            bindings::hrtimer_init(
                timer,
                bindings::CLOCK_MONOTONIC as _,
                bindings::hrtimer_mode_HRTIMER_MODE_REL,
            );
            (*timer).function = Some(timer_callback::<T>);
            core::ptr::addr_of_mut!((*pdu).link)
                .write(core::cell::Cell::new(core::ptr::null_mut()));
            core::ptr::addr_of_mut!((*pdu).lost).write(AtomicBool::new(false));
            core::ptr::addr_of_mut!((*pdu).data).write(T::new_request_data());
        }
        // INVARIANT: all fields are initialised above.
    }

    /// Tears the PDU down before blk-mq frees it.
    ///
    /// # Safety
    ///
    /// `pdu` must have been initialised by [`Pdu::init`] and no request may be
    /// in flight on it.
    pub(crate) unsafe fn drop_in_place(pdu: *mut Self) {
        // SAFETY: `data` is initialised per the type invariant and not used again.
        unsafe { core::ptr::drop_in_place(core::ptr::addr_of_mut!((*pdu).data)) };
    }

    /// The driver data of `rq`.
    ///
    /// # Safety
    ///
    /// `rq` must be a live request of a `TagSet<T>`; the borrow must end
    /// before the request is freed.
    pub(crate) unsafe fn data_of<'a>(rq: *mut bindings::request) -> &'a T::RequestData {
        // SAFETY: the PDU is initialised while the request exists.
        unsafe { &(*Self::of(rq)).data }
    }

    /// The FIFO link of `rq`.
    ///
    /// # Safety
    ///
    /// `rq` must be a live request of a `TagSet<T>` owned by the caller.
    pub(crate) unsafe fn link(rq: *mut bindings::request) -> *mut bindings::request {
        // SAFETY: the PDU is initialised; the owner is the only user of `link`.
        unsafe { (*Self::of(rq)).link.get() }
    }

    /// Sets the FIFO link of `rq`.
    ///
    /// # Safety
    ///
    /// As for [`Pdu::link`].
    pub(crate) unsafe fn set_link(rq: *mut bindings::request, next: *mut bindings::request) {
        // SAFETY: as for `link`.
        unsafe { (*Self::of(rq)).link.set(next) }
    }

    /// The PDU of `rq`.
    ///
    /// # Safety
    ///
    /// `rq` must belong to a tag set created by [`super::tagset::TagSet<T>`].
    pub(crate) unsafe fn of(rq: *mut bindings::request) -> *mut Self {
        // `blk_mq_rq_to_pdu()` is `rq + 1`; written out here because the
        // kernel crate's helper for it is an out-of-line call on every use.
        // SAFETY: the PDU directly follows the request in the same
        // allocation; the tag set sized it for `Pdu<T>`.
        unsafe { rq.add(1).cast() }
    }

    /// The request a PDU belongs to (`blk_mq_rq_from_pdu()`).
    ///
    /// # Safety
    ///
    /// `pdu` must be the PDU of a request of a `TagSet<T>`.
    unsafe fn request_of(pdu: *mut Self) -> *mut bindings::request {
        // SAFETY: the request directly precedes its PDU.
        unsafe { pdu.cast::<bindings::request>().sub(1) }
    }
}

/// A request offered to `queue_rq` that the driver has not started.
///
/// # Invariants
///
/// `rq` is a request blk-mq is dispatching to this driver right now; it is
/// valid for `'a`.
pub(crate) struct Pending<'a, T: Operations> {
    rq: NonNull<bindings::request>,
    _p: PhantomData<(&'a bindings::request, T)>,
}

/// Proof that `queue_rq` started the request it was given.
pub(crate) struct Started(());

/// A refusal from `queue_rq`: blk-mq keeps the request and acts on the status.
///
/// Only [`Pending::refuse`] makes one, which consumes the request, so a
/// request that was started can never be refused as well.
pub(crate) struct Refused(Status);

impl Refused {
    /// The status blk-mq acts on (never OK).
    pub(super) fn status(&self) -> Status {
        self.0
    }
}

impl<'a, T: Operations> Pending<'a, T> {
    /// Wraps the request blk-mq dispatches.
    ///
    /// # Safety
    ///
    /// `rq` must be the request of the current `queue_rq` call, valid for `'a`.
    pub(crate) unsafe fn new(rq: NonNull<bindings::request>) -> Self {
        // INVARIANT: the caller guarantees validity for `'a`.
        Self {
            rq,
            _p: PhantomData,
        }
    }

    /// Starts the request, after `record` has stored in its data what the
    /// driver holds for it (a host tag), which every way the request leaves
    /// gives back ([`Operations::release`]); the driver now owns it until
    /// it ends it.
    ///
    /// The only access to the data of a request not yet started: a
    /// `Pending` lends none, and this consumes it, so a request whose data
    /// records something held is always started, never refused (a refused
    /// request does not leave through the driver, and nothing would give
    /// it back). The data is written before `blk_mq_start_request`, so
    /// nothing has to be kept across that call.
    #[inline(always)]
    pub(crate) fn start_with(self, record: impl FnOnce(&T::RequestData)) -> (Request<T>, Started) {
        // We are the PDU's only user until we start the request.
        // SAFETY: the PDU is initialised while blk-mq dispatches the
        // request (type invariant of `Pdu`).
        record(unsafe { &(*Pdu::<T>::of(self.rq.as_ptr())).data });
        // SAFETY: by the type invariant the request is being dispatched and
        // has not been started.
        unsafe { bindings::blk_mq_start_request(self.rq.as_ptr()) };
        // INVARIANT: the request is started and owned by nobody else; `self`
        // is consumed so no second `Request` can be made from it.
        (
            Request {
                rq: self.rq,
                _p: PhantomData,
            },
            Started(()),
        )
    }

    /// Whether the block layer's own timeout fault picks the request,
    /// `blk_should_fake_timeout()` (null_blk asks it in `queue_rq`): only
    /// if the disk's `io-timeout-fail` is 1, then as
    /// `/sys/kernel/debug/fail_io_timeout/` says. Never without
    /// `CONFIG_FAIL_IO_TIMEOUT`.
    #[inline(always)]
    pub(crate) fn should_fake_timeout(&self) -> bool {
        #[cfg(CONFIG_FAIL_IO_TIMEOUT)]
        {
            use core::{ptr::addr_of_mut, sync::atomic::AtomicUsize};
            // SAFETY: by the type invariant the request is live, and so is
            // the queue it belongs to.
            let q = unsafe { (*self.rq.as_ptr()).q };
            // `test_bit()`: the flags change by atomic bit operations on
            // other CPUs, so they are read atomically; Relaxed, as
            // `test_bit()`: any recent value will do.
            // SAFETY: `q` is live (above); `queue_flags` is an aligned
            // `unsigned long` (a `usize`), changed only atomically.
            let flags = unsafe { AtomicUsize::from_ptr(addr_of_mut!((*q).queue_flags).cast()) };
            let flags = flags.load(Ordering::Relaxed);
            let fail_io: usize = 1 << bindings::QUEUE_FLAG_FAIL_IO;
            if flags & fail_io != 0 {
                // SAFETY: `q` is live; the call draws from the kernel's
                // `fail_io_timeout` attribute, from any context.
                return unsafe { bindings::__blk_should_fake_timeout(q) };
            }
        }
        false
    }

    /// Gives the request back to blk-mq with `status`, which must not be OK.
    /// Nothing the driver holds can be recorded in the request by then
    /// (see [`Self::start_with`]).
    pub(crate) fn refuse(self, status: Status) -> Refused {
        if status == Status::OK {
            Refused(Status::IO_ERROR)
        } else {
            Refused(status)
        }
    }
}

/// A started request owned by the driver.
///
/// # Invariants
///
/// `rq` points to a started request of a [`super::tagset::TagSet<T>`] that
/// no other code will end while this value exists.
pub(crate) struct Request<T: Operations> {
    rq: NonNull<bindings::request>,
    _p: PhantomData<T>,
}

// SAFETY: a started request may be completed from any CPU and context.
unsafe impl<T: Operations> Send for Request<T> {}

impl<T: Operations> Request<T> {
    /// Takes ownership of a started request.
    ///
    /// # Safety
    ///
    /// `rq` must be started, belong to a `TagSet<T>`, and ownership must have
    /// been given up by whoever held it (see the module documentation).
    pub(crate) unsafe fn from_raw(rq: *mut bindings::request) -> Option<Self> {
        // INVARIANT: guaranteed by the caller.
        NonNull::new(rq).map(|rq| Self {
            rq,
            _p: PhantomData,
        })
    }

    /// The raw request, for the page store's data copy.
    pub(crate) fn as_raw(&self) -> *mut bindings::request {
        self.rq.as_ptr()
    }

    /// Gives up ownership without ending the request.
    pub(crate) fn into_raw(self) -> *mut bindings::request {
        ManuallyDrop::new(self).rq.as_ptr()
    }

    /// Sets the request's first sector: a zone append reports where its
    /// data went this way, as null_blk's does, before it ends.
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    pub(crate) fn set_sector(&self, sector: u64) {
        // SAFETY: we own the started request (type invariant): nothing
        // else reads or writes its fields until we end it.
        unsafe { (*self.rq.as_ptr()).__sector = sector };
    }

    /// The request's fields.
    pub(crate) fn info(&self) -> Info {
        // SAFETY: by the type invariant the request is live.
        unsafe { info_of(self.rq.as_ptr()) }
    }

    /// An identity of the data the request carries (its first bio), to
    /// tell a requeued request's return from a new request in the same
    /// slot; only compared, never dereferenced. 0 for a request without data.
    pub(crate) fn data_identity(&self) -> usize {
        // SAFETY: by the type invariant the request is live and ours.
        unsafe { (*self.rq.as_ptr()).bio as usize }
    }

    /// The driver's per-request data.
    pub(crate) fn data(&self) -> &T::RequestData {
        // SAFETY: the PDU is initialised while the request exists (type
        // invariant of `Pdu`), and it lives as long as `self` borrows it.
        unsafe { &(*Pdu::<T>::of(self.rq.as_ptr())).data }
    }

    /// The data of the hardware queue the request was dispatched on.
    pub(crate) fn hw_data(&self) -> Pin<&T::HwData> {
        // A request in the driver has its `mq_hctx` (set at allocation; a
        // flush request's at each flush), and blk-mq exits a hardware
        // context (dropping its data) only with no request of the queue in
        // the driver: in `del_gendisk` after draining, or in
        // `blk_mq_update_nr_hw_queues` under a freeze. The context was
        // initialised by `init_hctx_callback` before it could dispatch the
        // request.
        // SAFETY: as above.
        unsafe { OperationsVTable::<T>::hw_data((*self.rq.as_ptr()).mq_hctx) }
    }

    /// Gives back what the driver holds for the request, if anything
    /// ([`Operations::holds`], [`Operations::release`]): the request is
    /// about to leave the driver.
    #[inline(always)]
    pub(super) fn release(&self) {
        if T::holds(self) && T::release(self) == Released::Partly {
            T::release_rest(self);
        }
    }

    /// Ends the request with `status`.
    #[inline]
    pub(crate) fn end(self, status: Status) {
        // Two tails, so that the common one (nothing held) needs no frame
        // to keep `self` and `status` across a call.
        if T::holds(&self) {
            return self.end_held(status);
        }
        let rq = self.into_raw();
        // SAFETY: we owned the started request; ownership ends here.
        unsafe { bindings::blk_mq_end_request(rq, status.raw()) };
    }

    /// [`Self::end`] for a request that holds something. The common
    /// release (all of it in [`Operations::release`]) ends with a tail
    /// call, the rest with another. Inlined: that common path calls
    /// nothing (no frame to keep), so its caller's own tail call stays, and
    /// the request is ended without a jump into a function of its own.
    #[inline(always)]
    fn end_held(self, status: Status) {
        if T::release(&self) == Released::Partly {
            return self.end_released_partly(status);
        }
        let rq = self.into_raw();
        // SAFETY: we owned the started request; ownership ends here.
        unsafe { bindings::blk_mq_end_request(rq, status.raw()) };
    }

    /// [`Self::end_held`] for a request whose release is not complete.
    #[cold]
    #[inline(never)]
    fn end_released_partly(self, status: Status) {
        T::release_rest(&self);
        let rq = self.into_raw();
        // SAFETY: we owned the started request; ownership ends here.
        unsafe { bindings::blk_mq_end_request(rq, status.raw()) };
    }

    /// Gives the request back to blk-mq to be dispatched again later
    /// (fault injection: a requeue).
    pub(crate) fn requeue(self) {
        self.release();
        let rq = self.into_raw();
        // SAFETY: we owned the started request; blk-mq takes it back and
        // will dispatch it again through `queue_rq`.
        unsafe { bindings::blk_mq_requeue_request(rq, true) };
    }

    /// Gives the request back to blk-mq to be dispatched again in `msecs`
    /// ms (or when something else kicks the queue's requeue list first):
    /// what a driver short of a resource it will have soon does with a
    /// started request, as a refusal (`BLK_STS_RESOURCE`) does with one
    /// not started.
    pub(crate) fn requeue_after(self, msecs: u32) {
        self.release();
        let rq = self.into_raw();
        // blk-mq takes the request back and dispatches it again through
        // `queue_rq` after the kick.
        // SAFETY: we owned the started request: its queue is live, and is
        // read before the request goes back.
        unsafe {
            let q = (*rq).q;
            bindings::blk_mq_requeue_request(rq, false);
            // Lossless: a `c_ulong` has at least 32 bits.
            bindings::blk_mq_delay_kick_requeue_list(q, msecs as kernel::ffi::c_ulong);
        }
    }

    /// Drops the request on the floor (fault injection: a lost command).
    /// blk-mq's timeout handler finds it and hands it to
    /// [`Operations::timed_out`].
    pub(crate) fn lose(self) {
        let rq = self.into_raw();
        // SAFETY: the PDU is initialised. Release: the timeout handler's
        // Acquire swap sees everything done to the request before.
        unsafe { (*Pdu::<T>::of(rq)).lost.store(true, Ordering::Release) };
    }

    /// Completes through blk-mq's completion path (the submitting CPU's
    /// softirq, or an IPI); ownership comes back in [`Operations::complete`].
    pub(crate) fn complete(self) {
        kernel::build_assert!(
            T::HAS_COMPLETE,
            "Request::complete needs Operations::complete"
        );
        let rq = self.into_raw();
        // SAFETY: we owned the started request and hand it to blk-mq, which
        // calls `complete` exactly once.
        unsafe { bindings::blk_mq_complete_request(rq) };
    }

    /// Completes after `nsec` nanoseconds from the request's own hrtimer;
    /// ownership comes back in [`Operations::timer_expired`].
    pub(crate) fn complete_after(self, nsec: u64) {
        kernel::build_assert!(
            T::HAS_TIMER_EXPIRED,
            "Request::complete_after needs Operations::timer_expired"
        );
        let rq = self.into_raw();
        let delay = i64::try_from(nsec).unwrap_or(i64::MAX);
        // SAFETY: the PDU's timer is initialised (type invariant of `Pdu`)
        // and idle: only the owner arms it, and we owned the request.
        unsafe {
            let pdu = Pdu::<T>::of(rq);
            bindings::hrtimer_start_range_ns(
                Opaque::raw_get(core::ptr::addr_of!((*pdu).timer)),
                delay,
                0,
                bindings::hrtimer_mode_HRTIMER_MODE_REL,
            );
        }
    }
}

impl<T: Operations> Drop for Request<T> {
    fn drop(&mut self) {
        self.release();
        // SAFETY: we own the started request; a forgotten request would hang
        // until blk-mq's timeout, so fail it instead.
        unsafe { bindings::blk_mq_end_request(self.rq.as_ptr(), Status::IO_ERROR.raw()) };
    }
}

/// # Safety
///
/// Called by the hrtimer core for a timer armed by [`Request::complete_after`].
unsafe extern "C" fn timer_callback<T: Operations>(
    timer: *mut bindings::hrtimer,
) -> bindings::hrtimer_restart {
    // SAFETY: the timer is the first field of a `#[repr(C)]` `Pdu<T>`, so the
    // PDU starts at the same address; the request precedes its PDU.
    let rq = unsafe { Pdu::<T>::request_of(timer.cast()) };
    // SAFETY: `complete_after` gave up ownership to this timer.
    if let Some(rq) = unsafe { Request::<T>::from_raw(rq) } {
        // Only `complete_after` arms the timer, and it asserts this.
        kernel::build_assert!(T::HAS_TIMER_EXPIRED);
        T::timer_expired(rq);
    }
    bindings::hrtimer_restart_HRTIMER_NORESTART
}

/// A started request whose timeout fired while the driver keeps it in a
/// structure of its own ([`Operations::reclaim`]): a name for it, not
/// ownership, valid for the timeout handler's call.
pub(crate) struct Expired<'a> {
    rq: NonNull<bindings::request>,
    draining: bool,
    _p: PhantomData<&'a bindings::request>,
}

impl Expired<'_> {
    /// Names `rq` for the driver.
    ///
    /// # Safety
    ///
    /// `rq` must be a started request of a live queue (blk-mq's timeout
    /// handler guarantees both), and the value must not outlive the call.
    pub(super) unsafe fn new(rq: NonNull<bindings::request>) -> Self {
        // `mq_freeze_depth` is changed under `mq_freeze_lock`, which we do
        // not hold: a racy read, as C's `READ_ONCE`.
        // SAFETY: `rq` and its queue are live (guaranteed by the caller).
        let depth =
            unsafe { core::ptr::addr_of!((*(*rq.as_ptr()).q).mq_freeze_depth).read_volatile() };
        Self {
            rq,
            draining: depth > 0,
            _p: PhantomData,
        }
    }

    /// Whether the request is `rq` (the raw request a FIFO or list holds).
    pub(super) fn is(&self, rq: *mut bindings::request) -> bool {
        self.rq.as_ptr() == rq
    }

    /// Whether the queue is being frozen: someone (a removal, a change of
    /// its hardware queues or scheduler) waits for every request of it to
    /// end, so one kept back keeps them waiting.
    pub(crate) fn draining(&self) -> bool {
        self.draining
    }
}

/// Takes a request back from its hrtimer if the timer had not fired yet, or
/// from [`Request::lose`].
///
/// # Safety
///
/// `rq` must be a started request of a `TagSet<T>` (blk-mq's timeout handler
/// guarantees this).
pub(crate) unsafe fn reclaim_from_timer<T: Operations>(
    rq: *mut bindings::request,
) -> Option<Request<T>> {
    // SAFETY: the PDU's timer is initialised (type invariant of `Pdu`).
    let cancelled = unsafe {
        let pdu = Pdu::<T>::of(rq);
        bindings::hrtimer_try_to_cancel(Opaque::raw_get(core::ptr::addr_of!((*pdu).timer)))
    };
    if cancelled == 1 {
        // SAFETY: the timer was armed, so it owned the request, and it can no
        // longer run: ownership passes to us.
        return unsafe { Request::from_raw(rq) };
    }
    // SAFETY: the PDU is initialised. Acquire pairs with `lose`.
    let lost = unsafe { (*Pdu::<T>::of(rq)).lost.swap(false, Ordering::Acquire) };
    if lost {
        // SAFETY: `lose` gave up ownership and nobody else took it.
        unsafe { Request::from_raw(rq) }
    } else {
        None
    }
}
