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
//! the tag <-> (word, bit) mapping never changes, so resizing is trivial:
//!
//! * [`TagBitmap::get`] only considers bits whose tag is `< depth`;
//! * [`TagBitmap::put`] clears the bit of any tag `< MAX_TAGS`, so tags that
//!   were handed out under a larger depth are released normally and are
//!   never handed out again while the depth is smaller.
//!
//! # Protocol
//!
//! Allocation is sbitmap's `test_and_set_bit_lock` scheme: read a word,
//! pick a zero bit (starting at the caller's hint), claim it with an
//! `Acquire` `fetch_or`; if the bit was already set someone else won the
//! race, so retry with the freshly returned word value. Freeing is a
//! `Release` `fetch_and` (`clear_bit_unlock`). The Release/Acquire pair makes
//! everything the previous owner did with a tag happen-before the next
//! owner's use of it.
//!
//! The "no lost wake-up" part of the protocol (a failed allocator versus a
//! concurrent free) is *not* handled here but in [`super::host`], which
//! brackets the bitmap operations with `SeqCst` fences.
//!
//! # Hints
//!
//! Like sbitmap's per-cpu `alloc_hint`, the caller owns one hint per CPU or
//! hardware queue. A search starts at the hinted word and bit; after a
//! success the hint is moved to the *next bit of the same word*
//! (`tag + NR_WORDS`, wrapping to the first bit of that word), so a CPU keeps
//! allocating from "its" cache line until that word is full.

use super::sync::{AtomicU32, AtomicU64, Ordering};

/// Fixed capacity of a [`TagBitmap`]: the largest depth that can be set.
pub const MAX_TAGS: u32 = 1024;

/// Number of 64-bit words (each in its own cache line) backing the map.
pub const NR_WORDS: usize = 16;

/// `log2(NR_WORDS)`: `tag >> WORD_SHIFT` is the bit inside the word.
const WORD_SHIFT: u32 = 4;

/// `NR_WORDS - 1`: `tag & WORD_MASK` is the word index.
const WORD_MASK: u32 = 15;

/// Errors reported when configuring tag maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The requested depth is 0 or larger than [`MAX_TAGS`].
    InvalidDepth,
}

impl Error {
    /// Human readable description (no `Display` to keep `core::fmt` out).
    pub fn as_str(&self) -> &'static str {
        match self {
            Error::InvalidDepth => "invalid depth: must be in 1..=1024",
        }
    }
}

/// One bitmap word, alone in its cache line.
#[repr(align(64))]
struct Word {
    bits: AtomicU64,
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
    let n = depth.saturating_sub(w).saturating_add(WORD_MASK) >> WORD_SHIFT;
    if n >= 64 {
        u64::MAX
    } else {
        1u64.wrapping_shl(n).wrapping_sub(1)
    }
}

/// Claims a zero bit of `word` inside `mask`, preferring bits `>= start_bit`.
fn get_in_word(word: &AtomicU64, mask: u64, start_bit: u32) -> Option<u32> {
    // Relaxed: only a snapshot to choose a candidate bit; the fetch_or below
    // is what claims it (and returns the up-to-date value on a lost race).
    let mut val = word.load(Ordering::Relaxed);
    loop {
        let free = !val & mask;
        if free == 0 {
            return None;
        }
        let above = free & u64::MAX.checked_shl(start_bit).unwrap_or(0);
        let bit = if above != 0 {
            above.trailing_zeros()
        } else {
            free.trailing_zeros()
        };
        let bitmask = 1u64.wrapping_shl(bit);
        // Acquire: pairs with the Release fetch_and in `TagBitmap::put` (the
        // previous owner's free), like test_and_set_bit_lock/clear_bit_unlock.
        let prev = word.fetch_or(bitmask, Ordering::Acquire);
        if prev & bitmask == 0 {
            return Some(bit);
        }
        val = prev;
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
            words: core::array::from_fn(|_| Word {
                bits: AtomicU64::new(0),
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
    /// the old depth (as with `sbitmap_resize`).
    pub fn set_depth(&self, depth: u32) -> Result<(), Error> {
        if !depth_is_valid(depth) {
            return Err(Error::InvalidDepth);
        }
        // Relaxed: see `depth()`; the word bits themselves carry the
        // ownership information, the depth only restricts the search.
        self.depth.store(depth, Ordering::Relaxed);
        Ok(())
    }

    /// Allocates a free tag `< depth()`, or `None` if all are in use.
    ///
    /// The search starts at `hint` (one hint per CPU / hardware queue,
    /// initially 0) and the hint is advanced after a success, like
    /// sbitmap's per-cpu `alloc_hint`.
    pub fn get(&self, hint: &AtomicU32) -> Option<u32> {
        let depth = self.depth();
        let nwords = depth.min(NR_WORDS as u32);
        // Relaxed: the hint is a pure performance heuristic.
        let mut h = hint.load(Ordering::Relaxed);
        if h >= depth {
            h = 0;
        }
        // h < depth, so the word is < nwords (if depth < 16 then h < 16).
        let mut w = h & WORD_MASK;
        let mut start_bit = h >> WORD_SHIFT;
        for _ in 0..nwords {
            if let Some(word) = self.words.get(w as usize) {
                if let Some(bit) = get_in_word(&word.bits, word_mask(depth, w), start_bit) {
                    let tag = (bit << WORD_SHIFT) | w;
                    let next = tag.saturating_add(NR_WORDS as u32);
                    let next = if next >= depth { w } else { next };
                    // Relaxed: heuristic only (see above).
                    hint.store(next, Ordering::Relaxed);
                    return Some(tag);
                }
            }
            start_bit = 0;
            w = w.saturating_add(1);
            if w >= nwords {
                w = 0;
            }
        }
        None
    }

    /// Frees `tag`. Returns `false` (and does nothing) if the tag was not
    /// held or is `>= MAX_TAGS`, i.e. on a double or bogus free.
    pub fn put(&self, tag: u32) -> bool {
        if tag >= MAX_TAGS {
            return false;
        }
        let Some(word) = self.words.get((tag & WORD_MASK) as usize) else {
            return false;
        };
        let bit = 1u64.wrapping_shl(tag >> WORD_SHIFT);
        // Release: pairs with the Acquire fetch_or in `get_in_word` of the
        // next owner of this tag (clear_bit_unlock).
        let prev = word.bits.fetch_and(!bit, Ordering::Release);
        prev & bit != 0
    }

    /// Returns `true` if `tag` is currently allocated (racy snapshot).
    pub fn is_held(&self, tag: u32) -> bool {
        if tag >= MAX_TAGS {
            return false;
        }
        self.words.get((tag & WORD_MASK) as usize).is_some_and(|w| {
            // Relaxed: statistics / assertions only.
            w.bits.load(Ordering::Relaxed) & 1u64.wrapping_shl(tag >> WORD_SHIFT) != 0
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
            .map(|w| w.bits.load(Ordering::Relaxed).count_ones())
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
    fn hint_is_followed_and_advanced() {
        let m = TagBitmap::new(64).unwrap();
        let hint = AtomicU32::new(5);
        assert_eq!(m.get(&hint), Some(5));
        assert_eq!(hint.load(Ordering::Relaxed), 21);
        assert_eq!(m.get(&hint), Some(21));
        assert_eq!(m.get(&hint), Some(37));
        assert_eq!(m.get(&hint), Some(53));
        // 69 >= depth: wrap to the first bit of word 5, which is held, so
        // the search moves on to the next word.
        assert_eq!(hint.load(Ordering::Relaxed), 5);
        assert_eq!(m.get(&hint), Some(6));
        // A hint beyond the depth is treated as 0.
        let h2 = AtomicU32::new(999);
        assert_eq!(m.get(&h2), Some(0));
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
