// SPDX-License-Identifier: GPL-2.0

//! Bad block tables: the block layer's `struct badblocks`
//! (`block/badblocks.c`), a sorted table of bad sector ranges in one page,
//! read under a seqlock (any context) and changed under its write side.
//! 6.12's `badblocks_set` and `badblocks_clear` take that with
//! `write_seqlock_irq`, whose unlock enables interrupts unconditionally:
//! changing the table needs interrupts enabled on entry (process context,
//! or `queue_rq` as blk-mq calls it, where null_blk's `badblocks_once`
//! clears too), never a hard interrupt or a section with them disabled.
//!
//! 6.12's `bindings` have the type only as an opaque name and none of the
//! functions (`linux/badblocks.h` is not in `bindings_helper.h`), so they
//! are declared in [`raw`]. The structure embeds a `seqlock_t`, whose size
//! depends on the kernel's configuration (lockdep); the declaration uses
//! `bindings::seqlock_t`, generated for the kernel rnull is built against,
//! so it is right for every configuration. The offsets before the lock
//! (which do not depend on it) are asserted here. `badblocks_abi.c`,
//! compiled with the module (and linked into nothing), asserts that the
//! kernel's header has this structure, field for field, and these
//! prototypes, so a kernel that changed them fails `make modules`;
//! `scripts/check-configfs-layout.py` (`make test`) also compares both with
//! bindgen's output for the header.

use super::fmt::BufWriter;
use core::{
    fmt::Write,
    pin::Pin,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{
    bindings,
    error::{to_result, Error},
    ffi::{c_char, c_int},
    init::PinInit,
    prelude::*,
    try_pin_init,
    types::Opaque,
};

/// The C side (`include/linux/badblocks.h` of 6.12).
pub(super) mod raw {
    use kernel::{
        bindings,
        ffi::{c_char, c_int},
    };

    /// `struct badblocks` (spelt in C in `badblocks_abi.c`, which checks
    /// it against the header: change both together).
    #[repr(C)]
    pub(crate) struct badblocks {
        pub(crate) dev: *mut bindings::device,
        pub(crate) count: c_int,
        pub(crate) unacked_exist: c_int,
        pub(crate) shift: c_int,
        pub(crate) page: *mut u64,
        pub(crate) changed: c_int,
        pub(crate) lock: bindings::seqlock_t,
        pub(crate) sector: bindings::sector_t,
        pub(crate) size: bindings::sector_t,
    }

    // The offsets before the lock, whose size and alignment depend on the
    // configuration, as bindgen computes them for 6.12's header on x86_64.
    #[cfg(target_pointer_width = "64")]
    const _: () = {
        use core::mem::offset_of;
        assert!(offset_of!(badblocks, count) == 8);
        assert!(offset_of!(badblocks, unacked_exist) == 12);
        assert!(offset_of!(badblocks, shift) == 16);
        assert!(offset_of!(badblocks, page) == 24);
        assert!(offset_of!(badblocks, changed) == 32);
    };

    #[expect(
        improper_ctypes,
        reason = "`badblocks` reaches `struct module` through `struct device`, whose bindgen type holds an empty arch struct; C only receives pointers"
    )]
    extern "C" {
        pub(crate) fn badblocks_init(bb: *mut badblocks, enable: c_int) -> c_int;
        pub(crate) fn badblocks_exit(bb: *mut badblocks);
        pub(crate) fn badblocks_check(
            bb: *mut badblocks,
            s: bindings::sector_t,
            sectors: c_int,
            first_bad: *mut bindings::sector_t,
            bad_sectors: *mut c_int,
        ) -> c_int;
        pub(crate) fn badblocks_set(
            bb: *mut badblocks,
            s: bindings::sector_t,
            sectors: c_int,
            acknowledged: c_int,
        ) -> c_int;
        pub(crate) fn badblocks_clear(
            bb: *mut badblocks,
            s: bindings::sector_t,
            sectors: c_int,
        ) -> c_int;
        pub(crate) fn badblocks_show(bb: *mut badblocks, page: *mut c_char, unack: c_int) -> isize;
    }
}

/// How many ranges a table holds (`MAX_BADBLOCKS`: a page of 8-byte
/// entries), each of at most 512 sectors.
pub(crate) const MAX_RANGES: usize = bindings::PAGE_SIZE / 8;

/// The most sectors one C call takes (its count is an `int`).
const CHUNK: u64 = 1 << 30;

/// A bad range found by [`BadBlocks::check`]: the table's whole entry,
/// which may start before and end after the range asked about.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BadRange {
    /// First bad sector.
    pub(crate) first: u64,
    /// Number of bad sectors (1..=512, a table entry's most).
    pub(crate) sectors: u32,
}

/// A table of bad sector ranges.
///
/// Changes are atomic for the caller: [`BadBlocks::set`] and
/// [`BadBlocks::clear`] either apply fully or leave the table covering
/// what it covered (a full table can refuse an addition, or a removal
/// that splits an entry). Writers that want that guarantee against each
/// other must be serialised by the caller; readers ([`BadBlocks::check`])
/// and [`BadBlocks::forget`] need nothing.
///
/// # Invariants
///
/// `bb` was initialised by `badblocks_init` with accounting enabled
/// (`shift == 0`: one entry unit per sector) and is freed by
/// `badblocks_exit` on drop.
#[pin_data(PinnedDrop)]
pub(crate) struct BadBlocks {
    #[pin]
    bb: Opaque<raw::badblocks>,
    /// Whether a range was ever set: until then I/O does not look.
    used: AtomicBool,
}

// SAFETY: the C table serialises itself (a seqlock); the flag is atomic.
unsafe impl Send for BadBlocks {}
// SAFETY: as above.
unsafe impl Sync for BadBlocks {}

impl BadBlocks {
    /// An empty table. Its page comes from `badblocks_init`, which
    /// allocates with `GFP_KERNEL`: call it where that may sleep.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            bb <- PinInit::<_, Error>::pin_chain(Opaque::uninit(), |bb| {
                let raw: *mut raw::badblocks = bb.get();
                // `badblocks_init` sets what it uses; the rest (`changed`,
                // `unacked_exist`, ...) must start at zero, as in a
                // `kzalloc`ed structure.
                // SAFETY: `raw` is valid for writes and pinned; all-zero is
                // a valid starting point for the C structure.
                to_result(unsafe {
                    raw.write_bytes(0, 1);
                    raw::badblocks_init(raw, 1)
                })
            }),
            used: AtomicBool::new(false),
        }? Error)
    }

    /// The first bad range overlapping the `sectors` sectors from `sector`,
    /// if any.
    pub(crate) fn check(&self, sector: u64, sectors: u32) -> Option<BadRange> {
        // Relaxed: the table's own seqlock orders what `badblocks_check`
        // reads; an I/O that misses a range being set is one that came
        // before it.
        if sectors == 0 || !self.used.load(Ordering::Relaxed) {
            return None;
        }
        let sectors = c_int::try_from(sectors).unwrap_or(c_int::MAX);
        let (mut first, mut len): (bindings::sector_t, c_int) = (0, 0);
        // The out pointers are valid for the call; `sectors` is not 0,
        // which the function warns about.
        // SAFETY: the table is initialised (type invariant), the rest above.
        let found =
            unsafe { raw::badblocks_check(self.bb.get(), sector, sectors, &mut first, &mut len) };
        if found == 0 {
            return None;
        }
        Some(BadRange {
            first,
            sectors: u32::try_from(len).unwrap_or(0),
        })
    }

    /// Removes the entry `range` that [`Self::check`] returned (a bad block
    /// that heals after failing once). Never allocates or sleeps. An entry
    /// removed whole needs no room, so this only fails to apply if another
    /// writer changed the entry meanwhile; then the rest stays bad.
    ///
    /// Interrupts must be enabled when it is called (see the module
    /// documentation): `queue_rq` is fine, a hard interrupt (an hrtimer
    /// callback) or a spinlock taken with interrupts off is not.
    pub(crate) fn forget(&self, range: BadRange) {
        let sectors = c_int::try_from(range.sectors).unwrap_or(c_int::MAX);
        if sectors == 0 {
            return;
        }
        // The write side (`write_seqlock_irq`) re-enables interrupts on
        // unlock, which is sound only with them enabled on entry: the
        // caller's duty above.
        // SAFETY: the table is initialised (type invariant); see above.
        unsafe { raw::badblocks_clear(self.bb.get(), range.first, sectors) };
    }

    /// Marks sectors `first..=last` bad. On failure (`ENOSPC`: the table
    /// is full) it covers what it covered before.
    pub(crate) fn set(&self, first: u64, last: u64) -> Result {
        let before = self.bad_within(first, last)?;
        // Relaxed: see `check`; set before the ranges, so I/O starts
        // looking no later than they exist.
        self.used.store(true, Ordering::Relaxed);
        if self.apply(first, last, Self::set_chunk) {
            return Ok(());
        }
        self.restore(first, last, &before);
        Err(ENOSPC)
    }

    /// Marks sectors `first..=last` good. On failure (`ENOSPC`: removing
    /// the middle of an entry needs a new one and the table is full) it
    /// covers what it covered before.
    pub(crate) fn clear(&self, first: u64, last: u64) -> Result {
        let before = self.bad_within(first, last)?;
        if self.apply(first, last, Self::clear_chunk) {
            return Ok(());
        }
        self.restore(first, last, &before);
        Err(ENOSPC)
    }

    /// Writes the table as `badblocks_show` does: one `first count` line
    /// per entry, in sector order, up to a page.
    pub(crate) fn show(&self, out: &mut BufWriter<'_>) -> Result {
        const PAGE: usize = bindings::PAGE_SIZE;
        let mut page = KVec::from_elem(0u8, PAGE, GFP_KERNEL)?;
        // `page` has `PAGE_SIZE` writable bytes, all the function writes.
        // SAFETY: the table is initialised (type invariant); see above.
        let len =
            unsafe { raw::badblocks_show(self.bb.get(), page.as_mut_ptr().cast::<c_char>(), 0) };
        let len = usize::try_from(len).map_err(|_| EINVAL)?.min(PAGE - 1);
        // `badblocks_show` truncates a full page mid-line: keep whole lines.
        let text = &page[..len];
        let whole = text.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
        let text = core::str::from_utf8(&text[..whole]).map_err(|_| EINVAL)?;
        out.write_str(text).map_err(|_| EINVAL)
    }

    /// The bad parts of `first..=last`, clipped to it, in order.
    fn bad_within(&self, first: u64, last: u64) -> Result<KVec<(u64, u64)>> {
        let mut bad = KVec::new();
        let mut pos = first;
        while pos <= last {
            let n = (last - pos + 1).min(CHUNK) as u32;
            match self.check_any(pos, n) {
                Some(r) => {
                    let end = r.first.saturating_add(u64::from(r.sectors));
                    bad.push((r.first.max(pos), (end - 1).min(last)), GFP_KERNEL)?;
                    pos = end.max(pos + 1);
                }
                None => pos += u64::from(n),
            }
        }
        Ok(bad)
    }

    /// [`Self::check`] without the "never set" shortcut.
    fn check_any(&self, sector: u64, sectors: u32) -> Option<BadRange> {
        let (mut first, mut len): (bindings::sector_t, c_int) = (0, 0);
        let sectors = c_int::try_from(sectors).unwrap_or(c_int::MAX);
        // `sectors` is not 0: the callers' ranges are not empty.
        // SAFETY: as in `check`.
        let found =
            unsafe { raw::badblocks_check(self.bb.get(), sector, sectors, &mut first, &mut len) };
        (found != 0).then(|| BadRange {
            first,
            sectors: u32::try_from(len).unwrap_or(0),
        })
    }

    /// Applies `f` to `first..=last` in chunks the C functions take; false
    /// at the first chunk it refuses.
    fn apply(&self, first: u64, last: u64, f: fn(&Self, u64, c_int) -> c_int) -> bool {
        let mut pos = first;
        while pos <= last {
            let n = (last - pos + 1).min(CHUNK);
            if f(self, pos, n as c_int) != 0 {
                return false;
            }
            pos += n;
        }
        true
    }

    fn set_chunk(&self, sector: u64, sectors: c_int) -> c_int {
        // SAFETY: the table is initialised (type invariant); `sectors` is
        // in `1..=CHUNK`.
        unsafe { raw::badblocks_set(self.bb.get(), sector, sectors, 1) }
    }

    fn clear_chunk(&self, sector: u64, sectors: c_int) -> c_int {
        // SAFETY: as in `set_chunk`.
        unsafe { raw::badblocks_clear(self.bb.get(), sector, sectors) }
    }

    /// After a refused change of `first..=last`: makes the range good, then
    /// bad where it was (`before`). Clearing a whole range and setting
    /// ranges that fitted before need no more entries than there were.
    fn restore(&self, first: u64, last: u64, before: &[(u64, u64)]) {
        self.apply(first, last, Self::clear_chunk);
        for &(s, e) in before {
            self.apply(s, e, Self::set_chunk);
        }
    }
}

#[pinned_drop]
impl PinnedDrop for BadBlocks {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: initialised (type invariant) and no longer used.
        unsafe { raw::badblocks_exit(self.bb.get()) };
    }
}
