//! Lock-free tag allocator, modelled on the kernel's `lib/sbitmap.c`.
//!
//! # Layout
//!
//! The map has a fixed capacity of [`MAX_TAGS`] (1024) bits stored in
//! [`NR_WORDS`] (16) `AtomicU64` words, each padded to its own 64-byte cache
//! line so that CPUs allocating from different words do not bounce lines.
//!
//! sbitmap spreads a small depth over several words by shrinking the number
//! of bits used per word (`sbitmap_calculate_shift`). That layout depends on
//! the depth, which would make a *runtime* resize while tags are held
//! ambiguous (a held tag would map to a different word/bit after the
//! resize). Instead this map uses a depth-independent **interleaved** layout:
//!
//! ```text
//! tag = bit * NR_WORDS + word        word = tag % 16, bit = tag / 16
//! ```
//!
//! For a depth `d` the valid tags `0..d` therefore always occupy
//! `min(d, 16)` words (a depth of 16 uses 16 cache lines with one bit each,
//! a depth of 64 uses 16 lines with 4 bits each, ...), which is at least as
//! much spreading as sbitmap's "at least 4 words once depth >= 4" rule, and
//! the tag <-> (word, bit) mapping never changes, so resizing is simple:
//!
//! * [`TagBitmap::get`] only considers bits whose tag is `< depth` (the
//!   word's valid mask, see below);
//! * [`TagBitmap::put`] frees (sets the free bit of) any tag `< MAX_TAGS`, so tags that
//!   were handed out under a larger depth are released normally and are
//!   never handed out again while the depth is smaller.
//!
//! # Valid masks
//!
//! Next to its bits, each word's cache line holds the word's *valid mask*:
//! the bits whose tags are `< depth` (`word_mask`). The allocation fast
//! path reads it from the line it reads anyway instead of computing it from
//! the depth, and never reads the depth itself.
//!
//! [`TagBitmap::set_depth`] stores the depth, then rewrites all 16 masks
//! from the depth it reads back, and repeats while the depth it reads after
//! the rewrite differs, so that concurrent resizes cannot leave a mix of
//! two depths' masks behind: every mask update is a `swap` (an RMW, `AcqRel`),
//! so a resizer whose swap comes after another's (in the word's
//! modification order) synchronizes with it and re-reads at least that
//! resizer's depth; once the resizes have returned, the last mask written
//! to each word is the one of the last depth stored. (Masks are a function of the depth alone, so an
//! A-B-A of the depth is harmless.) A `get` racing with a resize may see a
//! mix of old and new masks, i.e. hand out a tag below the old or the new
//! depth, as with `sbitmap_resize`.
//!
//! # Protocol
//!
//! Allocation is sbitmap's `test_and_set_bit_lock` scheme with the bits
//! inverted: a word holds its *free* tags (a set bit is free), so that the
//! fast path finds the candidates with one AND of the word and its valid
//! mask, without a complement. Read a word, pick its lowest set valid bit,
//! claim it with an `Acquire` `fetch_and` that clears it; if the bit was
//! already clear someone else won the race, so re-read the word and retry.
//! Only the claimed bit of the `fetch_and` result is looked at, so that it
//! compiles to a single `lock btr` rather than a CAS loop. Freeing is a
//! `Release` `fetch_or` (`clear_bit_unlock`'s counterpart, a `lock bts`).
//! The Release/Acquire pair makes everything the previous owner did with a
//! tag happen-before the next owner's use of it.
//!
//! The common case, a free valid bit in the hinted word, is inlined into the
//! caller (`TagBitmap::get_fast`: the hint, the word and its mask are
//! loaded, one `lock btr`, no store); everything else (the word is full,
//! has no valid bit, or the claim lost a race) is the out-of-line search of
//! all words (`TagBitmap::search`).
//!
//! The "no lost wake-up" part of the protocol (a failed allocator versus a
//! concurrent free) is *not* handled here but in [`super::host`], which
//! brackets the bitmap operations with `SeqCst` fences.
//!
//! # Hints
//!
//! Like sbitmap's per-cpu `alloc_hint`, the caller owns one hint per CPU or
//! hardware queue. The hint is a *word*: only `hint % NR_WORDS` is used
//! (any `u32` is a valid hint). An allocation takes the lowest free valid
//! bit of the hinted word, so a CPU keeps allocating from "its" cache line
//! until that word is full; only the search moves the hint, to the word it
//! allocated from (and stores it only when the word changes). Like
//! sbitmap, which only moves a hint that it used, the fast path never
//! writes the hint. Taking the lowest free bit, rather than the next one
//! after the previous allocation, needs no per-allocation state: with
//! `trailing_zeros` it is as cheap as any other bit.
//!
//! Hints are seeded with [`initial_hint`]: hardware queue (slot) `n` starts
//! in word `n % NR_WORDS`, so 16 consecutive slots start on 16 different
//! cache lines. A hint whose word holds no valid tag (`word >= depth`: a
//! seed for a small depth, or a hint left over from before a shrink) is
//! replaced by word `word % depth` on the first search, so small depths
//! still spread their slots over all their words.

use super::sync::{AtomicU32, AtomicU64, Ordering};
use core::num::NonZeroU64;

/// Fixed capacity of a [`TagBitmap`]: the largest depth that can be set.
pub const MAX_TAGS: u32 = 1024;

/// Number of 64-bit words (each in its own cache line) backing the map.
pub const NR_WORDS: usize = 16;

/// `log2(NR_WORDS)`: `tag >> WORD_SHIFT` is the bit inside the word.
const WORD_SHIFT: u32 = 4;

/// `NR_WORDS - 1`: `tag & WORD_MASK` is the word index.
const WORD_MASK: u32 = 15;

/// The first allocation hint of hardware queue number `slot`.
///
/// `slot` should be a host-wide hardware-queue number (e.g. device index
/// times queues per device plus the queue's index), so that the queues of
/// different devices also start on different words. The hint is word
/// `slot % NR_WORDS`; it is valid for any depth (see the module docs for
/// words without valid tags).
pub fn initial_hint(slot: u32) -> u32 {
    slot & WORD_MASK
}

/// Errors reported when configuring tag maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The requested depth is 0 or larger than [`MAX_TAGS`].
    InvalidDepth,
    /// The requested percentage is larger than 100.
    InvalidPercent,
}

impl Error {
    /// Human readable description (no `Display` to keep `core::fmt` out).
    pub fn as_str(&self) -> &'static str {
        match self {
            Error::InvalidDepth => "invalid depth: must be in 1..=1024",
            Error::InvalidPercent => "invalid percentage: must be in 0..=100",
        }
    }
}

/// One bitmap word and its valid mask, alone in their cache line.
#[repr(align(64))]
struct Word {
    /// Free tags (bit `b` is tag `b * NR_WORDS + word`; set: free).
    free: AtomicU64,
    /// The bits whose tags are `< depth` (see "Valid masks").
    valid: AtomicU64,
}

/// Returns `true` if `depth` is a valid map depth (`1..=MAX_TAGS`).
fn depth_is_valid(depth: u32) -> bool {
    (1..=MAX_TAGS).contains(&depth)
}

/// Mask of the bits of word `w` whose tags are `< depth`.
///
/// Word `w` holds the tags `w, w + 16, w + 32, ...`, so it has
/// `ceil((depth - w) / 16)` valid bits (at most 64 since depth <= 1024).
fn word_mask(depth: u32, w: u32) -> u64 {
    if w >= depth {
        return 0;
    }
    // 1..=64 bits: depth > w, and depth <= MAX_TAGS (so no wrap-around).
    let n = depth.wrapping_sub(w).wrapping_add(WORD_MASK) >> WORD_SHIFT;
    u64::MAX.wrapping_shr(64u32.wrapping_sub(n))
}

/// Mask of the bits of word `w` whose tags are in `lo..hi`
/// (`lo <= hi <= MAX_TAGS`): a run of contiguous bits, since the tags of a
/// word are `w, w + 16, w + 32, ...`.
fn range_mask(lo: u32, hi: u32, w: u32) -> u64 {
    word_mask(hi, w) & !word_mask(lo, w)
}

/// Claims bit `bit` (`< 64`) of the free-tag word `word`; `false` if it
/// was already taken (clear).
#[inline(always)]
fn claim(word: &AtomicU64, bit: u32) -> bool {
    let bitmask = 1u64.wrapping_shl(bit);
    // Acquire: pairs with the Release fetch_or in `TagBitmap::put` (the
    // previous owner's free), like test_and_set_bit_lock/clear_bit_unlock.
    // Only the claimed bit of the old value is used, which lets the
    // compiler emit a single `lock btr` rather than a CAS loop.
    word.fetch_and(!bitmask, Ordering::Acquire) & bitmask != 0
}

/// Claims the lowest set (free) bit of the free-tag word `word` inside
/// `mask`.
fn get_in_word(word: &AtomicU64, mask: u64) -> Option<u32> {
    loop {
        // Relaxed: only a snapshot to choose a candidate bit; `claim` is
        // what claims it (and we re-read the word after a lost race).
        let free = word.load(Ordering::Relaxed) & mask;
        if free == 0 {
            return None;
        }
        let bit = free.trailing_zeros();
        if claim(word, bit) {
            return Some(bit);
        }
    }
}

/// sbitmap-like lock-free tag allocator with a runtime-settable depth.
pub struct TagBitmap {
    words: [Word; NR_WORDS],
    depth: AtomicU32,
}

impl TagBitmap {
    /// Creates an empty map of the given depth (`1..=MAX_TAGS`).
    pub fn new(depth: u32) -> Result<Self, Error> {
        if !depth_is_valid(depth) {
            return Err(Error::InvalidDepth);
        }
        Ok(Self {
            words: core::array::from_fn(|w| Word {
                free: AtomicU64::new(u64::MAX),
                // w < NR_WORDS: no truncation.
                valid: AtomicU64::new(word_mask(depth, w as u32)),
            }),
            depth: AtomicU32::new(depth),
        })
    }

    /// Fixed capacity: the largest depth that [`Self::set_depth`] accepts.
    pub fn capacity(&self) -> u32 {
        MAX_TAGS
    }

    /// Current depth: tags handed out from now on are `< depth()`.
    pub fn depth(&self) -> u32 {
        // Relaxed: the depth is a limit, not a publication flag; no data is
        // read on the strength of having seen a particular depth.
        self.depth.load(Ordering::Relaxed)
    }

    /// Changes the depth (`1..=MAX_TAGS`), also while tags are held.
    ///
    /// Held tags `>= depth` stay valid and are released with [`Self::put`]
    /// as usual; they are not handed out again while the depth is smaller.
    /// A [`Self::get`] running concurrently with this call may still use
    /// the old depth (as with `sbitmap_resize`). Concurrent calls leave
    /// the masks of the depth stored last (see "Valid masks").
    pub fn set_depth(&self, depth: u32) -> Result<(), Error> {
        if !depth_is_valid(depth) {
            return Err(Error::InvalidDepth);
        }
        // Relaxed: published to other resizers by the Release half of the
        // mask swaps below; gets only read the masks.
        self.depth.store(depth, Ordering::Relaxed);
        // Relaxed: our own store or a later one (coherence).
        let mut depth = self.depth.load(Ordering::Relaxed);
        loop {
            for (w, word) in (0u32..).zip(&self.words) {
                // AcqRel: Release publishes the depth stored before; Acquire
                // makes the depth stored by a resizer whose swap we follow
                // visible to the re-read below (see "Valid masks").
                word.valid.swap(word_mask(depth, w), Ordering::AcqRel);
            }
            // Relaxed: ordered after the swaps' Acquire.
            let now = self.depth.load(Ordering::Relaxed);
            if now == depth {
                return Ok(());
            }
            depth = now;
        }
    }

    /// The valid mask of word `w` (see "Valid masks"); 0 for `w >= 16`.
    pub fn valid_mask(&self, w: usize) -> u64 {
        // Relaxed: a snapshot, as read by `get`.
        self.words
            .get(w)
            .map_or(0, |word| word.valid.load(Ordering::Relaxed))
    }

    /// Allocates a free tag `< depth()`, or `None` if all are in use.
    ///
    /// The search starts in the word of `hint` (one hint per CPU /
    /// hardware queue, seeded with [`initial_hint`]), which moves to the
    /// word that had a free tag, like sbitmap's per-cpu `alloc_hint`.
    pub fn get(&self, hint: &AtomicU32) -> Option<u32> {
        match self.get_fast(hint) {
            Some(tag) => Some(tag),
            None => self.search(hint),
        }
    }

    /// The inlined fast path of [`Self::get`]: the lowest free valid bit of
    /// the hinted word, one load of the hint, the word and its mask (one
    /// cache line), one `lock btr`-style RMW, no store. `None` when the
    /// word is full, has no valid bit, or the claim lost a race: the
    /// caller then calls [`Self::search`].
    #[inline(always)]
    pub(super) fn get_fast(&self, hint: &AtomicU32) -> Option<u32> {
        // Relaxed: the hint is a pure performance heuristic.
        let w = hint.load(Ordering::Relaxed) & WORD_MASK;
        // Always in range (w < 16): the check compiles away.
        let word = self.words.get(w as usize)?;
        // Relaxed (both): a snapshot to choose a candidate bit (as in
        // `get_in_word`), and a mask that may be stale during a resize.
        let free = word.free.load(Ordering::Relaxed) & word.valid.load(Ordering::Relaxed);
        // Non-zero, so that the compiler knows the bit index is below 64.
        let bit = NonZeroU64::new(free)?.trailing_zeros();
        if !claim(&word.free, bit) {
            return None;
        }
        Some((bit << WORD_SHIFT) | w)
    }

    /// The full search behind [`Self::get_fast`]: every word holding valid
    /// tags, from the hinted one; moves the hint to the word it allocates
    /// from.
    #[cold]
    #[inline(never)]
    pub(super) fn search(&self, hint: &AtomicU32) -> Option<u32> {
        // Words holding valid tags: 0..nwords (nwords >= 1).
        let nwords = self.depth().clamp(1, NR_WORDS as u32);
        // Relaxed: the hint is a pure performance heuristic.
        let h = hint.load(Ordering::Relaxed);
        let mut w = h & WORD_MASK;
        if w >= nwords {
            // A word without valid tags: spread over the words that have
            // (see the module docs).
            w %= nwords;
        }
        for _ in 0..nwords {
            if let Some(word) = self.words.get(w as usize) {
                // Relaxed: see `get_fast`.
                if let Some(bit) = get_in_word(&word.free, word.valid.load(Ordering::Relaxed)) {
                    if h != w {
                        // Relaxed: heuristic only (see above).
                        hint.store(w, Ordering::Relaxed);
                    }
                    return Some((bit << WORD_SHIFT) | w);
                }
            }
            w = w.saturating_add(1);
            if w >= nwords {
                w = 0;
            }
        }
        None
    }

    /// Allocates a free tag in `lo..hi` that is also below the depth, or
    /// `None` if there is none (for [`super::policy::window`]'s windows and shared
    /// part).
    ///
    /// The tags of the range are spread over `min(hi - lo, 16)` consecutive
    /// words (wrapping around after word 15); only those are searched,
    /// from the hinted word if it is one of them, else from the range's
    /// first word, and the hint moves to the word allocated from, as in
    /// [`Self::search`].
    pub(super) fn get_in_range(&self, lo: u32, hi: u32, hint: &AtomicU32) -> Option<u32> {
        let hi = hi.min(MAX_TAGS);
        if lo >= hi {
            return None;
        }
        // 1..=16 words: hi > lo.
        let n = (hi - lo).min(NR_WORDS as u32);
        let first = lo & WORD_MASK;
        // Relaxed: the hint is a pure performance heuristic.
        let h = hint.load(Ordering::Relaxed);
        // The hinted word's position among the range's words, if it is one.
        let mut i = (h & WORD_MASK).wrapping_sub(first) & WORD_MASK;
        if i >= n {
            i = 0;
        }
        for _ in 0..n {
            // No overflow: first, i < 16.
            let w = (first + i) & WORD_MASK;
            if let Some(word) = self.words.get(w as usize) {
                // Relaxed: see `get_fast`.
                let mask = range_mask(lo, hi, w) & word.valid.load(Ordering::Relaxed);
                if let Some(bit) = get_in_word(&word.free, mask) {
                    if h != w {
                        // Relaxed: heuristic only.
                        hint.store(w, Ordering::Relaxed);
                    }
                    return Some((bit << WORD_SHIFT) | w);
                }
            }
            i += 1;
            if i >= n {
                i = 0;
            }
        }
        None
    }

    /// Whether a tag in `lo..hi` below the depth is free (a racy snapshot,
    /// for [`super::policy::window`]'s hand-off): the range's words, as in
    /// [`Self::get_in_range`].
    pub(super) fn has_free_in_range(&self, lo: u32, hi: u32) -> bool {
        let hi = hi.min(MAX_TAGS);
        if lo >= hi {
            return false;
        }
        // 1..=16 words: hi > lo.
        let n = (hi - lo).min(NR_WORDS as u32);
        (lo..lo + n).any(|t| {
            let w = t & WORD_MASK;
            self.words.get(w as usize).is_some_and(|word| {
                // Relaxed (both): a snapshot, ordered by the caller (after
                // its fence); see `get_fast` for the mask.
                word.free.load(Ordering::Relaxed)
                    & word.valid.load(Ordering::Relaxed)
                    & range_mask(lo, hi, w)
                    != 0
            })
        })
    }

    /// Frees `tag`. Returns `false` (and does nothing) if the tag was not
    /// held or is `>= MAX_TAGS`, i.e. on a double or bogus free.
    #[inline(always)]
    pub fn put(&self, tag: u32) -> bool {
        if tag >= MAX_TAGS {
            return false;
        }
        let Some(word) = self.words.get((tag & WORD_MASK) as usize) else {
            return false;
        };
        let bit = 1u64.wrapping_shl(tag >> WORD_SHIFT);
        // Release: pairs with the Acquire fetch_and in `claim` of the next
        // owner of this tag (the counterpart of clear_bit_unlock).
        let prev = word.free.fetch_or(bit, Ordering::Release);
        prev & bit == 0
    }

    /// Returns `true` if `tag` is currently allocated (racy snapshot).
    pub fn is_held(&self, tag: u32) -> bool {
        if tag >= MAX_TAGS {
            return false;
        }
        self.words.get((tag & WORD_MASK) as usize).is_some_and(|w| {
            // Relaxed: statistics / assertions only.
            w.free.load(Ordering::Relaxed) & 1u64.wrapping_shl(tag >> WORD_SHIFT) == 0
        })
    }

    /// Number of tags currently held, including held tags `>= depth()`.
    ///
    /// This is an approximate snapshot: the words are read one after the
    /// other without any lock, so concurrent gets and puts may or may not
    /// be counted. It is exact when nothing runs concurrently.
    pub fn in_use(&self) -> u32 {
        self.words
            .iter()
            // Relaxed: statistics only.
            .map(|w| (!w.free.load(Ordering::Relaxed)).count_ones())
            .fold(0u32, u32::saturating_add)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::vec::Vec;

    fn drain(map: &TagBitmap, hint: &AtomicU32) -> Vec<u32> {
        let mut v = Vec::new();
        while let Some(t) = map.get(hint) {
            v.push(t);
            assert!(v.len() <= MAX_TAGS as usize);
        }
        v
    }

    #[test]
    fn invalid_depth() {
        assert_eq!(TagBitmap::new(0).err(), Some(Error::InvalidDepth));
        assert_eq!(TagBitmap::new(1025).err(), Some(Error::InvalidDepth));
        let m = TagBitmap::new(1024).unwrap();
        assert_eq!(m.set_depth(0), Err(Error::InvalidDepth));
        assert_eq!(m.set_depth(2000), Err(Error::InvalidDepth));
        assert_eq!(m.depth(), 1024);
        assert_eq!(m.capacity(), MAX_TAGS);
        assert!(!Error::InvalidDepth.as_str().is_empty());
        assert!(!Error::InvalidPercent.as_str().is_empty());
    }

    #[test]
    fn range_masks_cover_ranges_exactly() {
        let bounds = [0, 1, 5, 15, 16, 17, 31, 32, 100, 1000, 1023, 1024];
        for lo in bounds {
            for hi in bounds.into_iter().filter(|&hi| hi >= lo) {
                let total: u32 = (0..NR_WORDS as u32)
                    .map(|w| range_mask(lo, hi, w).count_ones())
                    .sum();
                assert_eq!(total, hi - lo, "{lo}..{hi}");
                for w in 0..NR_WORDS as u32 {
                    let m = range_mask(lo, hi, w);
                    for b in 0..64 {
                        let tag = b * NR_WORDS as u32 + w;
                        assert_eq!(
                            m & (1 << b) != 0,
                            (lo..hi).contains(&tag),
                            "{lo}..{hi} tag {tag}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn get_in_range_takes_every_tag_of_the_range_once() {
        for (depth, lo, hi) in [
            (64, 0, 64),
            (64, 10, 13),
            (64, 20, 40),
            (40, 30, 64),
            (1024, 500, 1024),
            (8, 8, 8),
            (8, 9, 3),
        ] {
            let m = TagBitmap::new(depth).unwrap();
            // Tags outside the range stay free (and unseen below).
            let others: Vec<u32> = (0..depth).filter(|t| !(lo..hi).contains(t)).collect();
            let hint = AtomicU32::new(7);
            let mut got = HashSet::new();
            while let Some(t) = m.get_in_range(lo, hi, &hint) {
                assert!(
                    (lo..hi).contains(&t) && t < depth,
                    "{lo}..{hi} depth {depth}: tag {t}"
                );
                assert!(got.insert(t), "tag {t} twice");
                // The hint follows the word allocated from.
                assert_eq!(hint.load(Ordering::Relaxed), t % NR_WORDS as u32);
            }
            let expected = (lo..hi.min(depth)).count();
            assert_eq!(got.len(), expected, "{lo}..{hi} depth {depth}");
            assert!(others.iter().all(|&t| !m.is_held(t)));
            assert!(!m.has_free_in_range(lo, hi));
            // A freed tag of the range is seen and found again from any
            // hint; tags outside the range are not seen.
            if let Some(&t) = got.iter().next() {
                assert!(m.put(t));
                assert!(m.has_free_in_range(lo, hi));
                assert!(!m.has_free_in_range(lo, t) && !m.has_free_in_range(t + 1, hi));
                assert_eq!(m.get_in_range(lo, hi, &AtomicU32::new(3)), Some(t));
            }
        }
        // The search starts in the hinted word when it holds range tags.
        let m = TagBitmap::new(64).unwrap();
        assert_eq!(m.get_in_range(16, 48, &AtomicU32::new(5)), Some(21));
        assert_eq!(m.get_in_range(16, 20, &AtomicU32::new(9)), Some(16));
    }

    #[test]
    fn word_masks_cover_depth_exactly() {
        for depth in 1..=MAX_TAGS {
            let total: u32 = (0..NR_WORDS as u32)
                .map(|w| word_mask(depth, w).count_ones())
                .sum();
            assert_eq!(total, depth);
            for w in 0..NR_WORDS as u32 {
                let m = word_mask(depth, w);
                for b in 0..64 {
                    let tag = b * NR_WORDS as u32 + w;
                    assert_eq!(m & (1 << b) != 0, tag < depth, "depth {depth} w {w} b {b}");
                }
            }
        }
    }

    #[test]
    fn allocates_every_tag_once() {
        for depth in [1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 100, 1000, 1024] {
            let m = TagBitmap::new(depth).unwrap();
            let hint = AtomicU32::new(0);
            let tags = drain(&m, &hint);
            assert_eq!(tags.len(), depth as usize);
            let set: HashSet<u32> = tags.iter().copied().collect();
            assert_eq!(set.len(), depth as usize);
            assert!(tags.iter().all(|&t| t < depth));
            assert_eq!(m.in_use(), depth);
            for &t in &tags {
                assert!(m.is_held(t));
                assert!(m.put(t));
                assert!(!m.put(t), "double put must be reported");
            }
            assert_eq!(m.in_use(), 0);
        }
    }

    #[test]
    fn small_depth_is_spread_over_words() {
        let m = TagBitmap::new(16).unwrap();
        let hints: Vec<AtomicU32> = (0..4).map(|i| AtomicU32::new(i * 4)).collect();
        // Four "CPUs" with different hints land in four different words.
        let tags: Vec<u32> = hints.iter().map(|h| m.get(h).unwrap()).collect();
        let words: HashSet<u32> = tags.iter().map(|t| t % NR_WORDS as u32).collect();
        assert_eq!(words.len(), 4);
    }

    #[test]
    fn hint_word_is_used_and_moved_by_the_search() {
        let m = TagBitmap::new(64).unwrap();
        let hint = AtomicU32::new(5);
        // Word 5 holds tags 5, 21, 37, 53 at depth 64: lowest free first,
        // and the fast path does not write the hint.
        assert_eq!(m.get(&hint), Some(5));
        assert_eq!(hint.load(Ordering::Relaxed), 5);
        assert_eq!(m.get(&hint), Some(21));
        assert_eq!(m.get(&hint), Some(37));
        // A freed lower bit is taken first.
        assert!(m.put(21));
        assert_eq!(m.get(&hint), Some(21));
        assert_eq!(m.get(&hint), Some(53));
        assert_eq!(hint.load(Ordering::Relaxed), 5);
        // Word 5 is full: the search moves on to word 6, and the hint too.
        assert_eq!(m.get(&hint), Some(6));
        assert_eq!(hint.load(Ordering::Relaxed), 6);
        assert_eq!(m.get(&hint), Some(22));
        // Only the word of a hint counts: 999 = 62 * 16 + 7 is word 7.
        let h2 = AtomicU32::new(999);
        assert_eq!(m.get(&h2), Some(7));
        assert_eq!(m.get(&h2), Some(23));
        // ... unless that word has no valid tag: word 7 % 4 = 3 at depth 4,
        // where the hint then stays.
        let m4 = TagBitmap::new(4).unwrap();
        let h4 = AtomicU32::new(999);
        assert_eq!(m4.get(&h4), Some(3));
        assert_eq!(h4.load(Ordering::Relaxed), 3);
        assert!(m4.put(3));
        assert_eq!(m4.get_fast(&h4), Some(3), "fast path in the new word");
    }

    /// The masks of a map of `depth`, as `set_depth` must leave them.
    fn assert_masks(m: &TagBitmap, depth: u32) {
        assert_eq!(m.depth(), depth);
        for w in 0..NR_WORDS {
            assert_eq!(
                m.valid_mask(w),
                word_mask(depth, w as u32),
                "depth {depth} word {w}"
            );
        }
        assert_eq!(m.valid_mask(NR_WORDS), 0);
    }

    #[test]
    fn valid_masks_follow_the_depth() {
        let m = TagBitmap::new(1024).unwrap();
        assert_masks(&m, 1024);
        for depth in [1, 2, 15, 16, 17, 100, 1024, 1023, 64, 3, 1000, 1] {
            m.set_depth(depth).unwrap();
            assert_masks(&m, depth);
            // The fast path never hands out a tag >= depth, whatever the
            // hint's word.
            for w in 0..NR_WORDS as u32 {
                if let Some(t) = m.get_fast(&AtomicU32::new(w)) {
                    assert!(t < depth, "depth {depth}: tag {t}");
                    assert!(m.put(t));
                }
            }
        }
        // A refused resize changes nothing.
        assert_eq!(m.set_depth(0), Err(Error::InvalidDepth));
        assert_masks(&m, 1);
        for depth in [1, 5, 16, 17, 1024] {
            assert_masks(&TagBitmap::new(depth).unwrap(), depth);
        }
    }

    #[test]
    fn initial_hints_start_in_different_words() {
        for base in [0, 5, 16, 1000] {
            let slots = base..base + NR_WORDS as u32;
            let start: HashSet<u32> = slots.clone().map(|s| initial_hint(s) & WORD_MASK).collect();
            assert_eq!(start.len(), NR_WORDS, "slots {base}..: start words");
            // The first allocations of the 16 slots land in 16 words.
            let m = TagBitmap::new(MAX_TAGS).unwrap();
            let words: HashSet<u32> = slots
                .map(|s| m.get(&AtomicU32::new(initial_hint(s))).unwrap() & WORD_MASK)
                .collect();
            assert_eq!(words.len(), NR_WORDS, "slots {base}..: first tags");
        }
        assert_eq!(initial_hint(3), 3);
        assert_eq!(initial_hint(19), 3);
    }

    #[test]
    fn initial_hints_are_valid_for_small_depths() {
        for depth in [1, 2, 3, 4, 5, 15, 16, 17] {
            let m = TagBitmap::new(depth).unwrap();
            let hints: Vec<AtomicU32> = (0..64).map(|s| AtomicU32::new(initial_hint(s))).collect();
            // Every slot finds a tag while there are free ones, and the
            // budget is used up exactly.
            let mut held = HashSet::new();
            for (i, h) in hints.iter().cycle().take(depth as usize).enumerate() {
                let t = m
                    .get(h)
                    .unwrap_or_else(|| panic!("depth {depth}: slot {i} found nothing"));
                assert!(t < depth && held.insert(t));
                assert!(h.load(Ordering::Relaxed) < depth);
            }
            assert!(hints.iter().all(|h| m.get(h).is_none()));
            // With a single free tag, any slot's hint finds it.
            for (i, h) in (0..16).map(|s| (s, AtomicU32::new(initial_hint(s)))) {
                let free = *held.iter().nth(i as usize % held.len()).unwrap();
                assert!(m.put(free));
                assert_eq!(m.get(&h), Some(free), "depth {depth} slot {i}");
            }
        }
        // Depth 4: on an empty map slot s starts in word s % 4 (not all
        // slots in word 0).
        for s in 0..32 {
            let m = TagBitmap::new(4).unwrap();
            assert_eq!(m.get(&AtomicU32::new(initial_hint(s))), Some(s % 4));
        }
    }

    #[test]
    fn shrink_with_held_tags() {
        let m = TagBitmap::new(64).unwrap();
        let hint = AtomicU32::new(0);
        let tags = drain(&m, &hint);
        assert_eq!(tags.len(), 64);
        m.set_depth(8).unwrap();
        // Free everything >= 8 except one: none of them is handed out again.
        for &t in tags.iter().filter(|&&t| t >= 8) {
            assert!(m.put(t));
        }
        assert_eq!(m.get(&hint), None);
        for &t in tags.iter().filter(|&&t| t < 8) {
            assert!(m.put(t));
        }
        let again = drain(&m, &hint);
        assert_eq!(again.len(), 8);
        assert!(again.iter().all(|&t| t < 8));
        // Grow again: old high tags become available.
        m.set_depth(64).unwrap();
        assert_eq!(drain(&m, &hint).len(), 56);
    }

    #[test]
    fn bogus_put_is_ignored() {
        let m = TagBitmap::new(4).unwrap();
        assert!(!m.put(5000));
        assert!(!m.put(3));
        assert!(!m.is_held(5000));
        assert_eq!(m.in_use(), 0);
    }
}
