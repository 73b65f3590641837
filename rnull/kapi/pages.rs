// SPDX-License-Identifier: GPL-2.0

//! Memory backing: an XArray of pages indexed by device page number.
//!
//! An XArray rather than a list or an rbtree because lookups dominate (every
//! read and every write to an already written page), and the XArray's radix
//! layout makes those a few dependent loads (the nvme namespace series in
//! the seeds measured the same trade-off).
//!
//! Locking: every lookup, insertion, removal and data copy runs under the
//! XArray's own `xa_lock`, so a discard cannot free a page another request is
//! copying. The lock is only taken from `queue_rq` (process context), never
//! from interrupts, and no other lock nests inside or around it.

use super::{lock_class::LockClass, request::Request, tagset::Operations};
use core::{
    ffi::c_void,
    pin::Pin,
    sync::atomic::{AtomicU64, Ordering},
};
use kernel::{bindings, c_str, init::PinInit, pin_init, prelude::*, types::Opaque};

const PAGE_SIZE: u64 = bindings::PAGE_SIZE as u64;
const SECTOR_SHIFT: u32 = 9;
const SECTORS_PER_PAGE: u64 = PAGE_SIZE >> SECTOR_SHIFT;
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

// SAFETY: all access to the XArray and its pages is serialised by `xa_lock`.
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
    _p: core::marker::PhantomData<&'a PageStore>,
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
            _p: core::marker::PhantomData,
        }
    }

    /// The page at `index`, allocating a zeroed one if `create`.
    fn page(&self, _g: &XaGuard<'_>, index: u64, create: bool) -> Result<*mut bindings::page> {
        let xa = self.xa.get();
        // SAFETY: the XArray is initialised; we hold its lock.
        let found = unsafe { bindings::xa_load(xa, index as usize) }.cast::<bindings::page>();
        if !found.is_null() || !create {
            return Ok(found);
        }
        // SAFETY: plain page allocation; atomic because we hold a spinlock.
        let page = unsafe {
            bindings::alloc_pages(
                bindings::GFP_ATOMIC | bindings::__GFP_ZERO | bindings::__GFP_NOWARN,
                0,
            )
        };
        if page.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: we hold `xa_lock`; GFP_ATOMIC keeps `__xa_store` from dropping it.
        let old =
            unsafe { bindings::__xa_store(xa, index as usize, page.cast(), bindings::GFP_ATOMIC) };
        if is_xa_err(old) {
            // SAFETY: the page was not stored, so it is still ours.
            unsafe { bindings::__free_pages(page, 0) };
            return Err(ENOMEM);
        }
        // Relaxed: statistic only.
        self.pages.fetch_add(1, Ordering::Relaxed);
        Ok(page)
    }

    /// Copies a read or write request's data from or to the store.
    pub(crate) fn transfer<T: Operations>(&self, rq: &Request<T>, write: bool) -> Result {
        let dir = if write {
            Dir::ToDevice
        } else {
            Dir::FromDevice
        };
        let raw = rq.as_raw();
        let guard = self.lock();
        // SAFETY: `rq` is a started request we own, so its bio chain and
        // bvecs are stable until we end it.
        let mut sector = unsafe { (*raw).__sector };
        // SAFETY: as above.
        let mut bio = unsafe { (*raw).bio };
        while !bio.is_null() {
            // SAFETY: `bio` is a live bio of the request.
            let (vecs, iter, next) = unsafe { ((*bio).bi_io_vec, (*bio).bi_iter, (*bio).bi_next) };
            let (mut idx, mut done, mut remaining) =
                (iter.bi_idx as usize, iter.bi_bvec_done, iter.bi_size);
            while remaining > 0 {
                // SAFETY: `idx` stays below the bio's vector count while
                // `remaining` bytes are left, as the block layer guarantees.
                let bv = unsafe { *vecs.add(idx) };
                let len = (bv.bv_len - done).min(remaining);
                self.copy_segment(&guard, &bv, bv.bv_offset + done, len, &mut sector, dir)?;
                remaining -= len;
                done += len;
                if done == bv.bv_len {
                    idx += 1;
                    done = 0;
                }
            }
            bio = next;
        }
        Ok(())
    }

    /// Copies `len` bytes at byte `offset` of the (possibly multi-page)
    /// segment `bv`, advancing `sector`.
    fn copy_segment(
        &self,
        guard: &XaGuard<'_>,
        bv: &bindings::bio_vec,
        mut offset: u32,
        mut len: u32,
        sector: &mut u64,
        dir: Dir,
    ) -> Result {
        while len > 0 {
            let in_page = u64::from(offset) % PAGE_SIZE;
            let store_off = (*sector % SECTORS_PER_PAGE) << SECTOR_SHIFT;
            let chunk = u64::from(len)
                .min(PAGE_SIZE - in_page)
                .min(PAGE_SIZE - store_off);
            let store = self.page(guard, *sector / SECTORS_PER_PAGE, dir == Dir::ToDevice)?;
            // Multi-page bvecs cover physically contiguous pages, so the page
            // at `offset / PAGE_SIZE` is part of this segment; both mappings
            // cover whole pages and `in_page + chunk`, `store_off + chunk`
            // stay within them.
            // SAFETY: as above.
            unsafe {
                let page = bv.bv_page.add((u64::from(offset) / PAGE_SIZE) as usize);
                let io = bindings::kmap_local_page(page)
                    .cast::<u8>()
                    .add(in_page as usize);
                if store.is_null() {
                    core::ptr::write_bytes(io, 0, chunk as usize);
                } else {
                    let mem = bindings::kmap_local_page(store)
                        .cast::<u8>()
                        .add(store_off as usize);
                    match dir {
                        Dir::ToDevice => core::ptr::copy_nonoverlapping(io, mem, chunk as usize),
                        Dir::FromDevice => core::ptr::copy_nonoverlapping(mem, io, chunk as usize),
                    }
                    bindings::kunmap_local(mem.cast::<c_void>());
                }
                bindings::kunmap_local(io.cast::<c_void>());
            }
            *sector += chunk >> SECTOR_SHIFT;
            offset += chunk as u32;
            len -= chunk as u32;
        }
        Ok(())
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
                    // SAFETY: the page came from `alloc_pages` and left the array.
                    unsafe { bindings::__free_pages(old, 0) };
                    // Relaxed: statistic only.
                    self.pages.fetch_sub(1, Ordering::Relaxed);
                }
            } else if let Ok(page) = self.page(&guard, index, false) {
                if !page.is_null() {
                    // SAFETY: the page is ours and stays in the array while we
                    // hold the lock; the range is within the page.
                    unsafe {
                        let mem = bindings::kmap_local_page(page).cast::<u8>();
                        core::ptr::write_bytes(mem.add(in_page as usize), 0, chunk as usize);
                        bindings::kunmap_local(mem.cast::<c_void>());
                    }
                }
            }
            pos += chunk;
        }
        drop(guard);
    }
}

/// `xa_is_err()`: internal entries encoding an errno.
fn is_xa_err(entry: *mut c_void) -> bool {
    let v = entry as usize;
    v & 3 == 2 && (v as isize) < 0 && (v as isize) >= -(4096 << 2)
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
    }
}
