// SPDX-License-Identifier: GPL-2.0

//! A volatile write cache in front of a [`PageStore`] (null_blk's
//! `cache_size`): writes land in the cache, a flush writes it back to the
//! store, a FUA write goes to the store at once (and keeps a cached copy
//! of the page current), reads see the cache first. When the cache is
//! full a write first writes a page back (round robin over the cache).
//! Dropping the cache loses what it holds, as a power loss would.
//!
//! # Locking
//!
//! The cache holds whole page images: a page enters it as a copy of the
//! store's page (or zeroes) with the write applied, and leaves it by a
//! copy into the store. Moving pages between the two cannot be made atomic
//! for the lock-free readers of [`PageStore`], so every transfer, flush and
//! discard of a cached device runs under the cache's spinlock (null_blk
//! serialises all of its memory-backed I/O the same way). Lock order: the
//! cache lock, then either store's `xa_lock`; nothing else nests.
//!
//! Pages are allocated under that lock, so they never sleep
//! (`GFP_NOWAIT`, for blocking tag sets too); a failed allocation makes
//! the transfer or flush fail with `ENOMEM`, for the driver to retry the
//! request (a write repeated, or a flush resumed, changes nothing done
//! before). A page removed from either store is freed after an RCU
//! grace period; the lock keeps any page we use alive meanwhile: held, it
//! is an RCU read-side critical section ([`ReadSide::held_by`]), whose
//! borrow every page found under it is tied to.

use super::{
    chunks::walk,
    operations::Operations,
    pages::{
        free_page_after_grace_period, PageStore, StorePage, ALLOC_UNDER_RCU, PAGE_SIZE,
        SECTORS_PER_PAGE, SECTOR_SHIFT,
    },
    rcu::ReadSide,
    request::Request,
};
use core::{cell::Cell, ffi::c_void};
use kernel::{bindings, init::PinInit, new_spinlock, pin_init, prelude::*, sync::SpinLock};

/// Where the next write-back of a full cache starts looking (a `Cell`:
/// the lock's guard is borrowed shared, by the [`ReadSide`] it proves).
struct Cursor {
    next: Cell<u64>,
}

/// A write cache of up to `limit` pages.
#[pin_data]
pub(crate) struct WriteCache {
    /// Serialises every use of the cache and of the store behind it.
    #[pin]
    lock: SpinLock<Cursor>,
    /// The cached pages, by device page number.
    #[pin]
    pages: PageStore,
    /// Most pages held.
    limit: u64,
}

/// Which way a transfer moves data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read from the cache or the store.
    Read,
    /// Write into the cache.
    Write,
    /// Write to the store (forced unit access), and into a cached copy.
    WriteFua,
}

impl WriteCache {
    /// An empty cache of `mib` MiB (at least one page).
    pub(crate) fn new(mib: u64) -> impl PinInit<Self> {
        let limit = (mib.saturating_mul(1 << 20) / PAGE_SIZE).max(1);
        pin_init!(Self {
            lock <- new_spinlock!(Cursor { next: Cell::new(0) }, "rnull_write_cache"),
            pages <- PageStore::new(),
            limit,
        })
    }

    /// Pages the cache holds.
    pub(crate) fn pages(&self) -> u64 {
        self.pages.pages()
    }

    /// Moves the first `limit` bytes of `rq`'s data between the request and
    /// the cache or `store` as `access` says.
    pub(crate) fn transfer<T: Operations>(
        &self,
        store: &PageStore,
        rq: &Request<T>,
        access: Access,
        limit: u32,
    ) -> Result {
        let cursor = self.lock.lock();
        let rcu = ReadSide::held_by(&cursor);
        walk(rq, limit, |io, sector, len| {
            let index = sector / SECTORS_PER_PAGE;
            let off = ((sector % SECTORS_PER_PAGE) << SECTOR_SHIFT) as usize;
            match access {
                Access::Read => {
                    let page = self
                        .pages
                        .lookup(index, &rcu)
                        .or_else(|| store.lookup(index, &rcu));
                    // A found page is valid while `rcu` is borrowed, and
                    // `off + len` stays within it.
                    // SAFETY: `io` is mapped for `len` bytes (`walk`).
                    unsafe { copy(io, page, off, len, false) };
                }
                Access::WriteFua => {
                    let page = page_of(store, index, len, &rcu)?;
                    // SAFETY: as above; `page` is the store's.
                    unsafe { copy(io, Some(page), off, len, true) };
                    if let Some(cached) = self.pages.lookup(index, &rcu) {
                        // SAFETY: as above.
                        unsafe { copy(io, Some(cached), off, len, true) };
                    }
                }
                Access::Write => {
                    let page = match self.pages.lookup(index, &rcu) {
                        Some(page) => page,
                        None => {
                            if self.pages.pages() >= self.limit {
                                self.write_back(store, &cursor.next, &rcu)?;
                            }
                            self.cache_page(store, index, len, &rcu)?
                        }
                    };
                    // SAFETY: as above; `page` is the cache's.
                    unsafe { copy(io, Some(page), off, len, true) };
                }
            }
            Ok(())
        })
    }

    /// Writes back to `store` every page cached at index `*from` or later
    /// when the flush begins (and any cached meanwhile at a later index),
    /// in index order and in batches of [`FLUSH_BATCH`], the lock dropped
    /// between batches (and the CPU yielded if `may_sleep`), so that a
    /// large cache does not hold other transfers off for the whole
    /// write-back. Leaves in `*from` where to resume, whatever it returns.
    ///
    /// Unless `may_sleep`, the caller runs with preemption off (blk-mq's
    /// RCU read side), so at most [`FLUSH_BATCHES_ATOMIC`] batches are
    /// written back before it returns [`Flushed::Partly`], for the caller
    /// to call it again later from `*from`. Resuming is idempotent: a page
    /// cached below `*from` after the flush began is not owed to it.
    pub(crate) fn flush(
        &self,
        store: &PageStore,
        may_sleep: bool,
        from: &mut u64,
    ) -> Result<Flushed> {
        let mut batches = 0;
        loop {
            {
                let cursor = self.lock.lock();
                let rcu = ReadSide::held_by(&cursor);
                for _ in 0..FLUSH_BATCH {
                    let Some(index) = self.pages.first_from(*from) else {
                        return Ok(Flushed::Done);
                    };
                    self.write_back_page(store, index, &rcu)?;
                    let Some(next) = index.checked_add(1) else {
                        return Ok(Flushed::Done);
                    };
                    *from = next;
                }
            }
            if may_sleep {
                cond_resched();
            } else {
                batches += 1;
                if batches >= FLUSH_BATCHES_ATOMIC {
                    return Ok(Flushed::Partly);
                }
            }
        }
    }

    /// Drops the data of `bytes` bytes from `sector` from the cache and
    /// from `store` (see [`PageStore::discard`]).
    pub(crate) fn discard(&self, store: &PageStore, sector: u64, bytes: u32) {
        let _cursor = self.lock.lock();
        self.pages.discard(sector, bytes);
        store.discard(sector, bytes);
    }

    /// Makes the cache page of device page `index`: a copy of the store's
    /// page, or zeroes (not needed if a write of `len` bytes covers it).
    /// The caller holds the lock (`rcu`) and found no cache page there.
    fn cache_page<'a>(
        &'a self,
        store: &PageStore,
        index: u64,
        len: usize,
        rcu: &ReadSide<'a>,
    ) -> Result<StorePage<'a>> {
        let stored = store.lookup(index, rcu);
        let whole = len as u64 == PAGE_SIZE;
        let page = PageStore::alloc_page(ALLOC_UNDER_RCU, stored.is_none() && !whole)?;
        if let (Some(stored), false) = (stored, whole) {
            // SAFETY: `page` is new and ours; `stored` is valid while `rcu`
            // is borrowed.
            unsafe { copy_page(page, stored.as_ptr()) };
        }
        // The lock keeps other writers away: the page is published as is.
        self.pages.publish(index, page, ALLOC_UNDER_RCU, rcu)
    }

    /// Writes the first cached page at or after `next` (wrapping around)
    /// back to `store`, removes it from the cache and moves `next` past
    /// it. The caller holds the lock (`rcu`).
    fn write_back(&self, store: &PageStore, next: &Cell<u64>, rcu: &ReadSide<'_>) -> Result {
        let Some(index) = self
            .pages
            .first_from(next.get())
            .or_else(|| self.pages.first_from(0))
        else {
            return Ok(());
        };
        self.write_back_page(store, index, rcu)?;
        next.set(index + 1);
        Ok(())
    }

    /// Writes the cached page `index` back to `store` and removes it from
    /// the cache. The caller holds the lock (`rcu`).
    fn write_back_page(&self, store: &PageStore, index: u64, rcu: &ReadSide<'_>) -> Result {
        let Some(cached) = self.pages.lookup(index, rcu) else {
            return Ok(());
        };
        match store.lookup(index, rcu) {
            // SAFETY: both pages are valid while `rcu` is borrowed; the lock
            // keeps other writers away.
            Some(stored) => unsafe { copy_page(stored.as_ptr(), cached.as_ptr()) },
            None => {
                // A new page, published only once it holds the data.
                let page = PageStore::alloc_page(ALLOC_UNDER_RCU, false)?;
                // SAFETY: `page` is new and ours; `cached` is valid while
                // `rcu` is borrowed.
                unsafe { copy_page(page, cached.as_ptr()) };
                let stored = store.publish(index, page, ALLOC_UNDER_RCU, rcu)?;
                if stored.as_ptr() != page {
                    // SAFETY: as above; another user of the store published
                    // this page meanwhile.
                    unsafe { copy_page(stored.as_ptr(), cached.as_ptr()) };
                }
            }
        }
        let taken = self.pages.take(index);
        if !taken.is_null() {
            // SAFETY: `take` handed us the page; nobody finds it any more.
            unsafe { free_page_after_grace_period(taken) };
        }
        Ok(())
    }
}

/// Pages a flush writes back per hold of the cache's lock: 256 KiB of
/// copying with 4 KiB pages.
const FLUSH_BATCH: usize = 64;

/// Batches a flush writes back per call where it may not sleep: 1 MiB of
/// copying with 4 KiB pages before the CPU is given back to blk-mq.
const FLUSH_BATCHES_ATOMIC: u32 = 4;

/// How far a [`WriteCache::flush`] got.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flushed {
    /// Every page owed to the flush is written back.
    Done,
    /// Pages are left from the resume index on: call again later.
    Partly,
}

/// Lets the scheduler run something else if it wants to (`cond_resched()`).
fn cond_resched() {
    // A fully preemptible kernel without dynamic preemption has no
    // `__cond_resched` (its `cond_resched()` does nothing): preemption
    // already happens where it is enabled.
    #[cfg(any(not(CONFIG_PREEMPTION), CONFIG_PREEMPT_DYNAMIC))]
    // SAFETY: called where the caller may sleep (a blocking tag set's
    // `queue_rq`), with no lock held.
    unsafe {
        bindings::__cond_resched();
    }
}

/// The store's page `index`, made (zeroed unless a write of `len` bytes
/// covers it) if missing. The caller holds the cache lock (`rcu`).
fn page_of<'a>(
    store: &'a PageStore,
    index: u64,
    len: usize,
    rcu: &ReadSide<'a>,
) -> Result<StorePage<'a>> {
    if let Some(page) = store.lookup(index, rcu) {
        return Ok(page);
    }
    let page = PageStore::alloc_page(ALLOC_UNDER_RCU, len as u64 != PAGE_SIZE)?;
    store.publish(index, page, ALLOC_UNDER_RCU, rcu)
}

/// Copies `len` bytes between `io` and `page` at `off`: into the page if
/// `to_page`, else out of it, and out of no page as zeroes.
///
/// # Safety
///
/// `io` must be valid for `len` bytes; `off + len <= PAGE_SIZE`.
unsafe fn copy(io: *mut u8, page: Option<StorePage<'_>>, off: usize, len: usize, to_page: bool) {
    let Some(page) = page else {
        if !to_page {
            // C's memset: the request's memory may be shared with other
            // I/O (see `PageStore`'s copies).
            // SAFETY: `io` is valid for `len` bytes (caller).
            unsafe { bindings::memset(io.cast(), 0, len) };
        }
        return;
    };
    // C's memcpy, as `PageStore`'s copies, since overlapping requests may
    // race on the bytes.
    // SAFETY: the page is valid while its `ReadSide` is borrowed, which its
    // lifetime ties to this call; the range is within it (caller).
    unsafe {
        let mem = bindings::kmap_local_page(page.as_ptr())
            .cast::<u8>()
            .add(off);
        let (to, from) = if to_page { (mem, io) } else { (io, mem) };
        bindings::memcpy(to.cast(), from.cast(), len);
        bindings::kunmap_local(mem.cast::<c_void>());
    }
}

/// Copies the whole page `src` into `dst`.
///
/// # Safety
///
/// Both pages must be live; nobody else may write `dst` meanwhile.
unsafe fn copy_page(dst: *mut bindings::page, src: *mut bindings::page) {
    // SAFETY: both pages are live (caller) and mapped whole.
    unsafe {
        let d = bindings::kmap_local_page(dst);
        let s = bindings::kmap_local_page(src);
        bindings::memcpy(d, s, PAGE_SIZE as usize);
        bindings::kunmap_local(s);
        bindings::kunmap_local(d);
    }
}
