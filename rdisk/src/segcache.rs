//! The segments of a modelled disk's read cache ([`disk`](super::disk)).
//!
//! A segment holds one contiguous run of sectors, at most a segment's
//! worth, and remembers how far the host has read in it (read-ahead into a
//! segment stops a segment beyond that). A read miss takes, in this order:
//! the segment its data continues or overlaps (a sequential stream keeps
//! its segment), a free one, or the least recently used one.

/// Most segments a cache can have.
pub const MAX_SEGMENTS: usize = 64;

/// One segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Segment {
    /// First sector held.
    start: u64,
    /// Sector after the last one held.
    end: u64,
    /// Sector after the last one the host read from the segment.
    used: u64,
    /// Last use, for LRU replacement; 0: the segment holds nothing.
    stamp: u64,
}

/// A segmented read cache: which sectors each segment holds.
#[derive(Clone, Debug)]
pub struct SegCache {
    segs: [Segment; MAX_SEGMENTS],
    count: usize,
    /// Sectors per segment.
    size: u64,
    /// Last stamp handed out.
    clock: u64,
}

impl SegCache {
    /// An empty cache of `count` segments (at most [`MAX_SEGMENTS`]) of
    /// `size` sectors.
    pub fn new(count: usize, size: u64) -> Self {
        Self {
            segs: [Segment::default(); MAX_SEGMENTS],
            count: count.clamp(1, MAX_SEGMENTS),
            size: size.max(1),
            clock: 0,
        }
    }

    /// The segments holding data.
    pub fn valid(&self) -> impl Iterator<Item = usize> + '_ {
        self.segs
            .iter()
            .take(self.count)
            .enumerate()
            .filter(|(_, s)| s.stamp != 0)
            .map(|(i, _)| i)
    }

    /// The sectors `[start, end)` segment `seg` holds.
    pub fn bounds(&self, seg: usize) -> (u64, u64) {
        self.segs.get(seg).map_or((0, 0), |s| (s.start, s.end))
    }

    /// Sector after the last one the host read from `seg`.
    pub fn used(&self, seg: usize) -> u64 {
        self.segs.get(seg).map_or(0, |s| s.used)
    }

    /// The host read from `seg` up to `end`: it is the most recently used.
    pub fn touch(&mut self, seg: usize, end: u64) {
        self.clock += 1;
        if let Some(s) = self.segs.get_mut(seg) {
            s.used = s.used.max(end);
            s.stamp = self.clock;
        }
    }

    /// Read-ahead filled `seg` up to `end`; what falls more than a segment
    /// behind it is gone.
    pub fn set_end(&mut self, seg: usize, end: u64) {
        if let Some(s) = self.segs.get_mut(seg) {
            s.end = end;
            s.start = s.start.max(end.saturating_sub(self.size));
        }
    }

    /// A segment for a read miss of `[start, end)`, now holding it and
    /// marked as read up to `end`; `true` if the miss continues the
    /// segment's data (a sequential stream).
    pub fn claim(&mut self, start: u64, end: u64) -> (usize, bool) {
        let live = &self.segs[..self.count];
        let seg = live
            .iter()
            .position(|s| s.stamp != 0 && s.end == start)
            .map(|i| (i, true))
            .or_else(|| {
                live.iter()
                    .position(|s| s.stamp != 0 && s.start < end && start < s.end)
                    .map(|i| (i, false))
            })
            .or_else(|| live.iter().position(|s| s.stamp == 0).map(|i| (i, false)))
            .unwrap_or_else(|| {
                let lru = live
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, s)| s.stamp)
                    .map_or(0, |(i, _)| i);
                (lru, false)
            });
        let (i, continues) = seg;
        if let Some(s) = self.segs.get_mut(i) {
            if !continues {
                s.start = start;
            }
            s.used = end;
        }
        self.set_end(i, end);
        self.touch(i, end);
        (i, continues)
    }

    /// A write of `[start, end)` went to the media: segments holding any of
    /// it are dropped.
    pub fn invalidate(&mut self, start: u64, end: u64) {
        for s in self.segs.iter_mut().take(self.count) {
            if s.stamp != 0 && s.start < end && start < s.end {
                *s = Segment::default();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_prefers_continuation_then_overlap_then_free_then_lru() {
        let mut c = SegCache::new(3, 100);
        let (a, _) = c.claim(0, 8);
        let (b, _) = c.claim(1000, 1008);
        assert_ne!(a, b);
        // Continues a's data: a keeps what it held.
        assert_eq!(c.claim(8, 16), (a, true));
        assert_eq!(c.bounds(a), (0, 16));
        // Overlaps b: b starts over.
        assert_eq!(c.claim(1004, 1012), (b, false));
        assert_eq!(c.bounds(b), (1004, 1012));
        let (third, _) = c.claim(5000, 5008);
        assert!(third != a && third != b);
        // All taken: a was used longest ago.
        c.touch(b, 1012);
        c.touch(third, 5008);
        assert_eq!(c.claim(9000, 9008), (a, false));
        assert_eq!(c.valid().count(), 3);
    }

    #[test]
    fn a_segment_holds_at_most_its_size() {
        let mut c = SegCache::new(1, 100);
        let (s, _) = c.claim(0, 8);
        c.set_end(s, 150);
        assert_eq!(c.bounds(s), (50, 150));
        assert_eq!(c.claim(150, 158), (s, true));
        assert_eq!(c.bounds(s), (58, 158));
        assert_eq!(c.used(s), 158);
    }

    #[test]
    fn invalidate_drops_overlapping_segments() {
        let mut c = SegCache::new(4, 100);
        let (a, _) = c.claim(0, 8);
        let (b, _) = c.claim(100, 108);
        c.invalidate(4, 5);
        assert_eq!(c.valid().collect::<std::vec::Vec<_>>(), [b]);
        assert_eq!(c.claim(200, 208), (a, false), "the dropped segment is free");
    }
}
