// SPDX-License-Identifier: GPL-2.0

//! Memory backing: an XArray of pages indexed by device page number.
//!
//! An XArray rather than a list or an rbtree because lookups dominate (every
//! read and every write to an already written page), and the XArray's radix
//! layout makes those a few dependent loads (the nvme namespace series in
//! the seeds measured the same trade-off).
//!
//! # Locking and lifetime
//!
//! A write to a missing page allocates it *outside* any lock and publishes
//! it with a compare-and-exchange under `xa_lock`, so racing writers agree
//! on one page. On a non-blocking tag set the copy itself takes no lock:
//! lookups are `xa_load`s, and the only thing that removes pages, a
//! discard, erases them under `xa_lock` and frees them after an RCU grace
//! period (`call_rcu` on the page's own `rcu_head`), while
//! blk-mq runs every `queue_rq` of a non-blocking set inside
//! `rcu_read_lock()` (that is how `blk_mq_quiesce_queue` waits for it).
//! There a write allocates (`GFP_NOWAIT`: RCU readers must not sleep, and a
//! null device has no business in the emergency reserves) as it
//! copies and publishes each new page with its data already in it, so only
//! a partly written page is zeroed; a page it cannot have at once makes
//! the transfer fail with `ENOMEM`, for the driver to retry the request
//! (the copy is idempotent: a retry writes the same bytes again). A
//! blocking set's `queue_rq` runs under SRCU instead, which does not hold
//! off `call_rcu`, so there the copy runs under `xa_lock`, and the pages a
//! write needs are made first (`GFP_NOIO`, zeroed, outside the lock).
//!
//! Either way the copy runs in an RCU read-side critical section (blk-mq's,
//! or the spinlock's: a held spinlock disables preemption), and takes it
//! as a [`ReadSide`]: a [`Dispatch`] lends blk-mq's ([`Dispatch::rcu`]),
//! the held `xa_lock` makes one. [`PageStore::lookup`] needs one and ties
//! the page it finds to its borrow, so no page can be used outside the
//! section that keeps it from being freed.
//!
//! A discard racing with a write to the same page may remove the page between
//! the write's two steps; the write then skips it, as if the discard had come
//! after it (the block layer gives overlapping in-flight requests no order).
//!
//! `xa_lock` is a plain spinlock taken from `queue_rq` only, never from
//! interrupts; nothing nests inside it, and only a
//! [`super::write_cache::WriteCache`]'s lock around it (a cached device
//! runs every transfer under that lock instead of locklessly).

use super::{
    chunks::walk, dispatch::Dispatch, lock_class::LockClass, noio::GFP_NOIO,
    operations::Operations, rcu::ReadSide, request::Request,
};
use core::{
    ffi::c_void,
    marker::PhantomData,
    pin::Pin,
    ptr::NonNull,
    sync::atomic::{AtomicU64, Ordering},
};
use kernel::{bindings, c_str, init::PinInit, pin_init, prelude::*, types::Opaque};

pub(super) const PAGE_SIZE: u64 = bindings::PAGE_SIZE as u64;
/// Allocations made inside an RCU read-side section must not sleep; a
/// failure is `ENOMEM`, for the driver to retry the request (`blocking=1`
/// devices allocate with `GFP_NOIO`).
pub(super) const ALLOC_UNDER_RCU: bindings::gfp_t = bindings::GFP_NOWAIT | bindings::__GFP_NOWARN;
pub(super) const SECTOR_SHIFT: u32 = 9;
pub(super) const SECTORS_PER_PAGE: u64 = PAGE_SIZE >> SECTOR_SHIFT;
/// `XA_PRESENT`: matches any present entry in `xa_find`.
const XA_PRESENT: bindings::xa_mark_t = 8;

static XA_LOCK_CLASS: LockClass = LockClass::new();

/// Pages holding a device's data.
///
/// # Invariants
///
/// `xa` is an initialised XArray whose entries are pages from `alloc_pages`
/// of order 0, each owned by the store and freed exactly once (on removal
/// or drop).
#[pin_data(PinnedDrop)]
pub(crate) struct PageStore {
    #[pin]
    xa: Opaque<bindings::xarray>,
    pages: AtomicU64,
}

// SAFETY: the XArray is changed under `xa_lock` only; pages are freed only
// after an RCU grace period or with the store itself (see the module docs).
unsafe impl Send for PageStore {}
// SAFETY: as above.
unsafe impl Sync for PageStore {}

/// Which way data moves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    ToDevice,
    FromDevice,
}

/// Held `xa_lock` of a store.
struct XaGuard<'a> {
    xa: *mut bindings::xarray,
    _p: PhantomData<&'a PageStore>,
}

impl XaGuard<'_> {
    /// The RCU read-side critical section that holding the lock is (a
    /// spinlock: see [`ReadSide::held_by`]).
    fn read_side(&self) -> ReadSide<'_> {
        // Not PREEMPT_RT (see `ReadSide`); the guard holds a raw pointer, so
        // it is not `Send` and stays on this CPU.
        // SAFETY: `xa_lock`, a `spinlock_t`, is held while `self` lives:
        // preemption is disabled.
        unsafe { ReadSide::new() }
    }
}

/// A page of a [`PageStore`] found during an RCU read-side critical
/// section, valid while the section's [`ReadSide`] is borrowed (`'a`):
/// a page leaves the store only to be freed after a grace period (or
/// with the store, which `'a` also borrows).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct StorePage<'a> {
    page: NonNull<bindings::page>,
    _p: PhantomData<&'a bindings::page>,
}

impl StorePage<'_> {
    /// The page, for mapping it (valid as said above).
    pub(super) fn as_ptr(self) -> *mut bindings::page {
        self.page.as_ptr()
    }
}

impl Drop for XaGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the guard exists only while we hold the lock.
        unsafe { bindings::spin_unlock(core::ptr::addr_of_mut!((*self.xa).xa_lock)) };
    }
}

impl PageStore {
    /// An empty store.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            xa <- Opaque::ffi_init(|xa: *mut bindings::xarray| {
                // SAFETY: `xa` is valid for writes; this is what the inline
                // `xa_init_flags(xa, 0)` does, with our own lockdep class.
                unsafe {
                    (*xa).xa_flags = 0;
                    (*xa).xa_head = core::ptr::null_mut();
                    bindings::__spin_lock_init(
                        core::ptr::addr_of_mut!((*xa).xa_lock),
                        c_str!("rnull_pages").as_char_ptr(),
                        XA_LOCK_CLASS.as_ptr(),
                    );
                }
            }),
            pages: AtomicU64::new(0),
        })
    }

    /// Number of pages allocated.
    pub(crate) fn pages(&self) -> u64 {
        // Relaxed: a statistic; readers need no ordering with the data.
        self.pages.load(Ordering::Relaxed)
    }

    fn lock(&self) -> XaGuard<'_> {
        let xa = self.xa.get();
        // SAFETY: the XArray is initialised (type invariant).
        unsafe { bindings::spin_lock(core::ptr::addr_of_mut!((*xa).xa_lock)) };
        XaGuard {
            xa,
            _p: PhantomData,
        }
    }

    /// The page at `index`, if any, valid while `rcu` is borrowed.
    #[inline(always)]
    pub(super) fn lookup<'a>(&'a self, index: u64, _rcu: &ReadSide<'a>) -> Option<StorePage<'a>> {
        // A page leaves the array only to be freed after a grace period,
        // or with the store (borrowed for `'a`): it lives as long as the
        // critical section the borrow of `rcu` proves.
        NonNull::new(self.load(index)).map(|page| StorePage {
            page,
            _p: PhantomData,
        })
    }

    /// Whether there is a page at `index` (now: a hint, it may go).
    fn contains(&self, index: u64) -> bool {
        !self.load(index).is_null()
    }

    /// `xa_load` of `index`: the page there, or null; not to be used
    /// beyond a comparison without a read-side section ([`Self::lookup`]).
    fn load(&self, index: u64) -> *mut bindings::page {
        // SAFETY: the XArray is initialised; `xa_load` takes the RCU read lock itself.
        unsafe { bindings::xa_load(self.xa.get(), index as usize) }.cast::<bindings::page>()
    }

    /// Allocates an order-0 page; zeroed if `zero`.
    pub(super) fn alloc_page(gfp: bindings::gfp_t, zero: bool) -> Result<*mut bindings::page> {
        let gfp = if zero {
            gfp | bindings::__GFP_ZERO
        } else {
            gfp
        };
        // SAFETY: plain order-0 page allocation; `gfp` fits the caller's
        // context (sleeping only where `Dispatch::may_sleep`).
        let page = unsafe { bindings::alloc_pages(gfp, 0) };
        if page.is_null() {
            Err(ENOMEM)
        } else {
            Ok(page)
        }
    }

    /// Publishes `page` (new, ours), whose contents are final, at `index`
    /// unless another writer got there first. Returns the page now at
    /// `index`, valid while `rcu` is borrowed: `page`, or the other
    /// writer's (then `page` is freed). `gfp` must not sleep: the caller
    /// is in a read-side critical section.
    pub(super) fn publish<'a>(
        &'a self,
        index: u64,
        page: *mut bindings::page,
        gfp: bindings::gfp_t,
        _rcu: &ReadSide<'a>,
    ) -> Result<StorePage<'a>> {
        let now = self.publish_raw(index, page, gfp)?;
        // `publish_raw` returns a page (not null) or fails; see `lookup`
        // for why it stays valid for `'a`.
        NonNull::new(now)
            .map(|page| StorePage {
                page,
                _p: PhantomData,
            })
            .ok_or(ENOMEM)
    }

    /// [`Self::publish`] without a read-side section (the page it returns
    /// is only for comparing); `gfp` may sleep.
    fn publish_raw(
        &self,
        index: u64,
        page: *mut bindings::page,
        gfp: bindings::gfp_t,
    ) -> Result<*mut bindings::page> {
        let xa = self.xa.get();
        let old = {
            let _guard = self.lock();
            // SAFETY: we hold `xa_lock`, which `__xa_cmpxchg` expects; with a
            // sleeping `gfp` it may drop and retake it to allocate nodes.
            unsafe {
                bindings::__xa_cmpxchg(xa, index as usize, core::ptr::null_mut(), page.cast(), gfp)
            }
        };
        if old.is_null() {
            // Relaxed: statistic only.
            self.pages.fetch_add(1, Ordering::Relaxed);
            return Ok(page);
        }
        // SAFETY: the page was not stored (an error, or another writer's
        // page is there), so it is still ours and nobody has seen it.
        unsafe { bindings::__free_pages(page, 0) };
        if is_xa_err(old) {
            Err(ENOMEM)
        } else {
            Ok(old.cast())
        }
    }

    /// Removes the page at `index` from the store and hands it to the
    /// caller, or null if there is none. Readers under RCU may still hold
    /// it: free it with [`free_page_after_grace_period`].
    pub(super) fn take(&self, index: u64) -> *mut bindings::page {
        let _guard = self.lock();
        // A removed page is ours.
        // SAFETY: we hold `xa_lock`, which `__xa_erase` expects.
        let old =
            unsafe { bindings::__xa_erase(self.xa.get(), index as usize) }.cast::<bindings::page>();
        if !old.is_null() {
            // Relaxed: statistic only.
            self.pages.fetch_sub(1, Ordering::Relaxed);
        }
        old
    }

    /// The index of the first page at or after `from`, if any.
    pub(super) fn first_from(&self, from: u64) -> Option<u64> {
        let mut index = from as usize;
        // SAFETY: the XArray is initialised; `xa_find` takes the RCU read
        // lock itself and only reads.
        let found = unsafe { bindings::xa_find(self.xa.get(), &mut index, usize::MAX, XA_PRESENT) };
        (!found.is_null()).then_some(index as u64)
    }

    /// Makes sure the page at `index` exists (zeroed if new).
    fn populate(&self, index: u64, gfp: bindings::gfp_t) -> Result {
        if !self.contains(index) {
            self.publish_raw(index, Self::alloc_page(gfp, true)?, gfp)?;
        }
        Ok(())
    }

    /// Copies a read or write request's first `limit` bytes (all of them
    /// if it has fewer) from or to the store. `ENOMEM` if a page could not
    /// be had (only where allocations must not sleep): part of the data
    /// may have been copied, and copying it all again is the retry.
    pub(crate) fn transfer<T: Operations>(
        &self,
        ctx: &Dispatch<'_>,
        rq: &Request<T>,
        write: bool,
        limit: u32,
    ) -> Result {
        let dir = if write {
            Dir::ToDevice
        } else {
            Dir::FromDevice
        };
        let raw = rq.as_raw();
        let (sector, bytes) =
            // SAFETY: `rq` is a started request we own: its fields are
            // stable until we end it.
            unsafe { ((*raw).__sector, (*raw).__data_len) };
        let bytes = bytes.min(limit);
        // Under RCU a write allocates a missing page as it copies, and
        // publishes it with its data (so only a partly written page needs
        // zeroing). Under `xa_lock` (a blocking set) nothing can be
        // allocated while copying: the pages are made, zeroed, first.
        // See the module docs: RCU (held by blk-mq) or `xa_lock`, both
        // read-side critical sections, keep the pages we copy from being
        // freed. One copy loop for both (the memory-backed hot path is
        // the RCU one; the lock is released when the guard drops, after
        // it).
        let mut locked: Option<XaGuard<'_>> = None;
        let lock_side: ReadSide<'_>;
        let (rcu, fill) = match ctx.rcu() {
            Some(rcu) => (rcu, write),
            None => {
                if write && bytes > 0 {
                    let first = sector / SECTORS_PER_PAGE;
                    let last = ((sector << SECTOR_SHIFT) + u64::from(bytes) - 1) / PAGE_SIZE;
                    for index in first..=last {
                        self.populate(index, GFP_NOIO)?;
                    }
                }
                lock_side = locked.insert(self.lock()).read_side();
                (&lock_side, false)
            }
        };
        let copied = walk(rq, bytes, |io, sector, len| {
            self.copy_chunk(io, sector, len, dir, fill, rcu)
        });
        drop(locked);
        copied
    }

    /// Copies the `len` bytes at `io` (mapped by [`walk`], within one page
    /// of the request's memory) to or from the store at `sector` (within
    /// one store page).
    ///
    /// The caller is in the read-side critical section `rcu` (blk-mq's
    /// RCU, or `xa_lock`: see the module docs); with `fill` (RCU only, no
    /// `xa_lock` held) a write allocates and publishes the page it misses.
    #[inline(always)]
    fn copy_chunk(
        &self,
        io: *mut u8,
        sector: u64,
        len: usize,
        dir: Dir,
        fill: bool,
        rcu: &ReadSide<'_>,
    ) -> Result {
        let store_off = ((sector % SECTORS_PER_PAGE) << SECTOR_SHIFT) as usize;
        let index = sector / SECTORS_PER_PAGE;
        loop {
            let mut store = self
                .lookup(index, rcu)
                .map_or(core::ptr::null_mut(), StorePage::as_ptr);
            let mut fresh = core::ptr::null_mut();
            if store.is_null() && fill {
                // Not zeroed if the chunk covers it: nobody sees the page
                // before it holds our data.
                fresh = Self::alloc_page(ALLOC_UNDER_RCU, len as u64 != PAGE_SIZE)?;
                store = fresh;
            }
            // A write finds no page only when a racing discard removed it:
            // skip it, as if the discard came after the write. A found
            // store page stays valid while `rcu` is borrowed (`lookup`), a
            // fresh one is ours; its mapping covers the page, and
            // `store_off + len` stays within it; `io` is mapped for `len`
            // bytes (`walk`).
            // SAFETY: as above.
            unsafe {
                if store.is_null() {
                    if dir == Dir::FromDevice {
                        core::ptr::write_bytes(io, 0, len);
                    }
                } else {
                    let mem = bindings::kmap_local_page(store).cast::<u8>().add(store_off);
                    // C's memcpy, not `copy_nonoverlapping`: overlapping
                    // requests may copy to and from one store page at once
                    // (the block layer gives them no order), a race on the
                    // data that Rust's memory model does not allow.
                    let (to, from) = match dir {
                        Dir::ToDevice => (mem, io),
                        Dir::FromDevice => (io, mem),
                    };
                    bindings::memcpy(to.cast(), from.cast(), len);
                    bindings::kunmap_local(mem.cast::<c_void>());
                }
            }
            if !fresh.is_null()
                && self.publish(index, fresh, ALLOC_UNDER_RCU, rcu)?.as_ptr() != fresh
            {
                // Another writer published the page first; ours is gone,
                // write into theirs (same offsets).
                continue;
            }
            return Ok(());
        }
    }

    /// Drops the data of `bytes` bytes from `sector`: whole pages are freed,
    /// partial ones zeroed, so later reads return zeroes.
    pub(crate) fn discard(&self, sector: u64, bytes: u32) {
        let guard = self.lock();
        let mut pos = sector << SECTOR_SHIFT;
        let end = pos + u64::from(bytes);
        while pos < end {
            let index = pos / PAGE_SIZE;
            let in_page = pos % PAGE_SIZE;
            let chunk = (PAGE_SIZE - in_page).min(end - pos);
            let xa = self.xa.get();
            if chunk == PAGE_SIZE {
                // SAFETY: we hold `xa_lock`; a removed page is ours to free.
                let old =
                    unsafe { bindings::__xa_erase(xa, index as usize) }.cast::<bindings::page>();
                if !old.is_null() {
                    // SAFETY: the page came from `alloc_pages` and left the array; copies that
                    // found it before may still run under RCU, so it is freed after a grace period.
                    unsafe { free_page_after_grace_period(old) };
                    // Relaxed: statistic only.
                    self.pages.fetch_sub(1, Ordering::Relaxed);
                }
            } else if let Some(page) = self.lookup(index, &guard.read_side()) {
                // Only we remove pages, under the lock.
                // SAFETY: the page stays while we hold the lock; the range is
                // within the page.
                unsafe {
                    let mem = bindings::kmap_local_page(page.as_ptr()).cast::<u8>();
                    // C's memset: see the copy in `copy_chunk`.
                    bindings::memset(mem.add(in_page as usize).cast(), 0, chunk as usize);
                    bindings::kunmap_local(mem.cast::<c_void>());
                }
            }
            pos += chunk;
        }
        drop(guard);
    }
}

/// Frees `page` once every RCU reader that may have found it is done.
///
/// # Safety
///
/// `page` is an order-0 page from `alloc_pages` that the caller owns and that
/// no new reader can find any more.
pub(super) unsafe fn free_page_after_grace_period(page: *mut bindings::page) {
    // SAFETY: a page we own is not on any list, so its `callback_head` (in the union that also
    // holds the LRU links) is ours to use until the callback frees the page.
    unsafe {
        let head = core::ptr::addr_of_mut!((*page).__bindgen_anon_1.callback_head);
        bindings::call_rcu(head, Some(free_page_rcu));
    }
}

/// # Safety
///
/// Called by RCU for a head queued by [`free_page_after_grace_period`].
unsafe extern "C" fn free_page_rcu(head: *mut bindings::callback_head) {
    // SAFETY: `head` is the `callback_head` inside the `__bindgen_anon_1` union of a page we own,
    // so stepping back by the union's offset gives the page.
    unsafe {
        let page = head
            .cast::<u8>()
            .sub(core::mem::offset_of!(bindings::page, __bindgen_anon_1))
            .cast::<bindings::page>();
        bindings::__free_pages(page, 0);
    }
}

/// `xa_is_err()`: an internal entry encoding an errno, i.e. at or above
/// `xa_mk_internal(-MAX_ERRNO)`.
fn is_xa_err(entry: *mut c_void) -> bool {
    const MAX_ERRNO: isize = 4095;
    let v = entry as isize;
    v & 3 == 2 && ((-MAX_ERRNO << 2) | 2..0).contains(&v)
}

#[pinned_drop]
impl PinnedDrop for PageStore {
    fn drop(self: Pin<&mut Self>) {
        let xa = self.xa.get();
        let mut index: usize = 0;
        loop {
            // SAFETY: the store is being dropped, so nobody else uses the
            // XArray; `xa_find` takes the RCU read lock itself.
            let page = unsafe { bindings::xa_find(xa, &mut index, usize::MAX, XA_PRESENT) };
            if page.is_null() {
                break;
            }
            // SAFETY: every entry is a page we own (type invariant); the
            // array is destroyed below without touching entries again.
            unsafe { bindings::__free_pages(page.cast(), 0) };
            index = match index.checked_add(1) {
                Some(i) => i,
                None => break,
            };
        }
        // SAFETY: frees the XArray's nodes; the entries were freed above.
        unsafe { bindings::xa_destroy(xa) };
        // Pages discarded earlier may still wait for their grace period;
        // their callback is this module's code, which must outlive them.
        // SAFETY: `rcu_barrier` has no preconditions beyond process context,
        // which dropping a device runs in.
        unsafe { bindings::rcu_barrier() };
    }
}
