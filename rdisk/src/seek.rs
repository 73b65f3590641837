//! Which software queues seek: a seek history per ctx, as CFQ kept one
//! per queue (`cfq_update_io_seektime()`, `CFQQ_SEEKY()`).
//!
//! The slice scheduler gives a ctx the disk to itself, and waits for its
//! next request, because its next request is near the head. For a ctx
//! whose requests land anywhere that buys nothing and costs what the
//! drive's command queue (NCQ) would have saved by choosing the nearest of
//! several ctxs' requests. So the scheduler asks this history which ctxs
//! are seeky and serves those together, the drive reordering them, as
//! CFQ served seeky queues on its "sync-noidle" tree without idling.

use super::slice::MAX_CTX;

/// A request that starts further than this from where its ctx's previous
/// request ended is a seek: 4 MiB (CFQ's `CFQQ_SEEK_THR`, 8 * 1024
/// sectors).
pub const SEEK_SECTORS: u64 = 8 * 1024;

/// A ctx is seeky when more than this many of its last 32 requests were
/// seeks (CFQ's `CFQQ_SEEKY`: more than 32/8).
pub const SEEKY_OF_32: u32 = 32 / 8;

/// One ctx's seek history.
#[derive(Clone, Copy, Debug, Default)]
struct History {
    /// Where its last request ended (its next sequential sector).
    next: u64,
    /// One bit per request, newest lowest, set for a seek.
    seeks: u32,
}

/// The seek history of every ctx of one hardware queue.
#[derive(Clone, Debug)]
pub struct Seeks {
    ctx: [History; MAX_CTX as usize],
    /// Bit `i` set when ctx `i` is seeky (kept with `ctx`).
    seeky: u64,
}

impl Default for Seeks {
    fn default() -> Self {
        Self::new()
    }
}

impl Seeks {
    /// No history: no ctx is seeky.
    pub const fn new() -> Self {
        Self {
            ctx: [History { next: 0, seeks: 0 }; MAX_CTX as usize],
            seeky: 0,
        }
    }

    /// Records a request of `ctx` for `sectors` sectors at `sector`. A
    /// ctx outside `0..MAX_CTX` is not tracked.
    pub fn note(&mut self, ctx: u32, sector: u64, sectors: u64) {
        let Some(h) = self.ctx.get_mut(ctx as usize) else {
            return;
        };
        let seek = sector.abs_diff(h.next) > SEEK_SECTORS;
        h.next = sector.saturating_add(sectors);
        h.seeks = (h.seeks << 1) | u32::from(seek);
        let bit = 1u64.wrapping_shl(ctx);
        if h.seeks.count_ones() > SEEKY_OF_32 {
            self.seeky |= bit;
        } else {
            self.seeky &= !bit;
        }
    }

    /// Bit `i` set when ctx `i` is seeky.
    pub fn mask(&self) -> u64 {
        self.seeky
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_ctx_is_not_seeky() {
        let mut s = Seeks::new();
        for i in 0..100 {
            s.note(3, 1_000_000 + i * 8, 8);
        }
        assert_eq!(s.mask(), 0);
    }

    #[test]
    fn random_ctx_turns_seeky_at_five_seeks_of_32() {
        let mut s = Seeks::new();
        // The first request is a seek from sector 0.
        for i in 1..=4u64 {
            s.note(5, i * 1_000_000, 8);
            assert_eq!(s.mask(), 0, "{i} seeks");
        }
        s.note(5, 9_000_000, 8);
        assert_eq!(s.mask(), 1 << 5);
        // Near requests push the seeks out of the 32-request history.
        let mut at = 9_000_008;
        for i in 0..27 {
            s.note(5, at, 8);
            at += 8;
            assert_eq!(s.mask(), 1 << 5, "{i} near");
        }
        s.note(5, at, 8);
        assert_eq!(s.mask(), 0);
    }

    #[test]
    fn a_seek_is_beyond_4_mib_either_way() {
        let mut s = Seeks::new();
        s.note(0, SEEK_SECTORS, 8);
        // Exactly the threshold away, either way: not a seek.
        for _ in 0..10 {
            let next = s.ctx[0].next;
            s.note(0, next + SEEK_SECTORS, 8);
            let next = s.ctx[0].next;
            s.note(0, next - SEEK_SECTORS, 8);
        }
        assert_eq!(s.ctx[0].seeks, 0);
        let next = s.ctx[0].next;
        s.note(0, next + SEEK_SECTORS + 1, 8);
        assert_eq!(s.ctx[0].seeks, 1);
    }

    #[test]
    fn ctxs_are_independent_and_out_of_range_is_ignored() {
        let mut s = Seeks::new();
        for i in 0..10u64 {
            s.note(63, i * 10_000_000, 8);
            s.note(0, i * 8, 8);
            s.note(64, i * 10_000_000, 8);
        }
        assert_eq!(s.mask(), 1 << 63);
    }
}
