// SPDX-License-Identifier: GPL-2.0

//! Walking a request's data in chunks that lie within one page of the
//! request's memory and one page of a device stored page by page: what
//! the page store and the write cache copy at a time.

use super::{
    operations::Operations,
    pages::{PAGE_SIZE, SECTORS_PER_PAGE, SECTOR_SHIFT},
    request::Request,
};
use core::ffi::c_void;
use kernel::{bindings, prelude::*};

/// Calls `f(io, sector, len)` for the first `limit` bytes of `rq`'s data,
/// in chunks within one page of the request's memory and one device page;
/// `io` points to the chunk, mapped for the call. Inline: the memory-backed
/// hot path.
#[inline(always)]
pub(super) fn walk<T: Operations>(
    rq: &Request<T>,
    limit: u32,
    mut f: impl FnMut(*mut u8, u64, usize) -> Result,
) -> Result {
    let raw = rq.as_raw();
    // SAFETY: `rq` is a started request we own: its fields, bio chain and
    // bvecs are stable until we end it.
    let (mut sector, bytes, mut bio) = unsafe { ((*raw).__sector, (*raw).__data_len, (*raw).bio) };
    let mut left = bytes.min(limit);
    while !bio.is_null() && left > 0 {
        // SAFETY: `bio` is a live bio of the request.
        let (vecs, iter, next) = unsafe { ((*bio).bi_io_vec, (*bio).bi_iter, (*bio).bi_next) };
        let (mut idx, mut done, mut remaining) = (
            iter.bi_idx as usize,
            iter.bi_bvec_done,
            iter.bi_size.min(left),
        );
        left -= remaining;
        while remaining > 0 {
            // SAFETY: `idx` stays below the bio's vector count while
            // `remaining` bytes are left, as the block layer guarantees.
            let bv = unsafe { *vecs.add(idx) };
            let seg = (bv.bv_len - done).min(remaining);
            let (mut off, mut len) = (u64::from(bv.bv_offset + done), u64::from(seg));
            while len > 0 {
                let in_page = off % PAGE_SIZE;
                let dev_off = (sector % SECTORS_PER_PAGE) << SECTOR_SHIFT;
                let chunk = len.min(PAGE_SIZE - in_page).min(PAGE_SIZE - dev_off);
                // A multi-page bvec covers physically contiguous pages, so
                // the page at `off / PAGE_SIZE` is part of the segment; the
                // mapping covers the page, and `in_page + chunk` stays in it.
                // SAFETY: as above.
                let io = unsafe {
                    let page = bv.bv_page.add((off / PAGE_SIZE) as usize);
                    bindings::kmap_local_page(page)
                        .cast::<u8>()
                        .add(in_page as usize)
                };
                let r = f(io, sector, chunk as usize);
                // SAFETY: mapped above, on this CPU, and nothing mapped since.
                unsafe { bindings::kunmap_local(io.cast::<c_void>()) };
                r?;
                sector += chunk >> SECTOR_SHIFT;
                off += chunk;
                len -= chunk;
            }
            remaining -= seg;
            done += seg;
            if done == bv.bv_len {
                idx += 1;
                done = 0;
            }
        }
        bio = next;
    }
    Ok(())
}
