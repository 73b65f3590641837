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
//! race, so re-read the word and retry. Only the claimed bit of the
//! `fetch_or` result is looked at, so that it compiles to a single
//! `lock bts` (as `test_and_set_bit_lock` does) rather than a CAS loop.
//! Freeing is a `Release` `fetch_and` (`clear_bit_unlock`, a `lock btr`).
//! The Release/Acquire pair makes everything the previous owner did with a
//! tag happen-before the next owner's use of it.
//!
//! The common case, a free bit at or above the hint in the hinted word, is
//! inlined into the caller (one load of the word, one `lock bts`, the hint
//! update); everything else is an out-of-line search of all words.
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
//!
//! Hints are seeded with [`initial_hint`]: hardware queue (slot) `n` starts
//! in word `n % NR_WORDS`, so 16 consecutive slots start on 16 different
//! cache lines. (A seed of `n * 16` would be tag `n * 16`, i.e. word 0 for
//! every slot.) A hint `>= depth` (a seed for a small depth, or a hint left
//! over from before a shrink) keeps its word if that word holds valid tags
//! (`word < depth`), and otherwise falls back to word `word % depth`, bit 0,
//! so small depths still spread their slots over all their words.

use super::sync::{AtomicU32, AtomicU64, Ordering};

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
/// different devices also start on different words. The hint is bit 0 of
/// word `slot % NR_WORDS`, i.e. tag `slot % NR_WORDS`; it is valid for any
/// depth (see the module docs for hints `>= depth`).
pub fn initial_hint(slot: u32) -> u32 {
    slot & WORD_MASK
}

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
#[inline(always)]
fn word_mask(depth: u32, w: u32) -> u64 {
    if w >= depth {
        return 0;
    }
    // 1..=64 bits: depth > w, and depth <= MAX_TAGS (so no wrap-around).
    let n = depth.wrapping_sub(w).wrapping_add(WORD_MASK) >> WORD_SHIFT;
    u64::MAX.wrapping_shr(64u32.wrapping_sub(n))
}

/// Claims bit `bit` (`< 64`) of `word`; `false` if it was already set.
#[inline(always)]
fn claim(word: &AtomicU64, bit: u32) -> bool {
    let bitmask = 1u64.wrapping_shl(bit);
    // Acquire: pairs with the Release fetch_and in `TagBitmap::put` (the
    // previous owner's free), like test_and_set_bit_lock/clear_bit_unlock.
    // Only the claimed bit of the old value is used, which lets the
    // compiler emit a single `lock bts` rather than a CAS loop.
    word.fetch_or(bitmask, Ordering::Acquire) & bitmask == 0
}

/// Claims a zero bit of `word` inside `mask`, preferring bits `>= start_bit`.
fn get_in_word(word: &AtomicU64, mask: u64, start_bit: u32) -> Option<u32> {
    loop {
        // Relaxed: only a snapshot to choose a candidate bit; `claim` is
        // what claims it (and we re-read the word after a lost race).
        let free = !word.load(Ordering::Relaxed) & mask;
        if free == 0 {
            return None;
        }
        let above = free & u64::MAX.checked_shl(start_bit).unwrap_or(0);
        let bit = if above != 0 {
            above.trailing_zeros()
        } else {
            free.trailing_zeros()
        };
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
    /// seeded with [`initial_hint`]) and the hint is advanced after a
    /// success, like sbitmap's per-cpu `alloc_hint`.
    pub fn get(&self, hint: &AtomicU32) -> Option<u32> {
        self.get_below(hint, self.depth())
    }

    /// [`Self::get`] with a depth the caller has already read (so that one
    /// allocation reads the depth once). `depth` must be `1..=MAX_TAGS`.
    ///
    /// Fast path (inlined): the first free bit at or above the hint in the
    /// hinted word: one load and one `lock bts`-style RMW. Anything else
    /// (hint out of range, nothing free above the hint, a lost race) goes
    /// to the full search, which starts over from the hint.
    #[inline(always)]
    pub(super) fn get_below(&self, hint: &AtomicU32, depth: u32) -> Option<u32> {
        // Relaxed: the hint is a pure performance heuristic.
        let h = hint.load(Ordering::Relaxed);
        if h < depth {
            let w = h & WORD_MASK;
            if let Some(word) = self.words.get(w as usize) {
                // Relaxed: a snapshot to choose a candidate bit (as in
                // `get_in_word`). The shift is < 64 since h < MAX_TAGS.
                let above = u64::MAX.wrapping_shl(h >> WORD_SHIFT);
                let free = !word.bits.load(Ordering::Relaxed) & word_mask(depth, w) & above;
                if free != 0 {
                    let bit = free.trailing_zeros();
                    if claim(&word.bits, bit) {
                        let tag = (bit << WORD_SHIFT) | w;
                        let next = tag.wrapping_add(NR_WORDS as u32);
                        let next = if next >= depth { w } else { next };
                        // Relaxed: heuristic only (see above).
                        hint.store(next, Ordering::Relaxed);
                        return Some(tag);
                    }
                }
            }
        }
        self.search(hint, depth)
    }

    /// The full search of [`Self::get_below`]: every word, from the hint.
    #[cold]
    #[inline(never)]
    fn search(&self, hint: &AtomicU32, depth: u32) -> Option<u32> {
        let nwords = depth.min(NR_WORDS as u32);
        // Relaxed: the hint is a pure performance heuristic.
        let mut h = hint.load(Ordering::Relaxed);
        if h >= depth {
            // Keep the hinted word if it has valid tags, else spread over
            // the words that have (see the module docs). Cold: hints are
            // stored `< depth`, so only seeds and shrinks get here.
            h &= WORD_MASK;
            if h >= depth {
                h %= depth.max(1);
            }
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
        // A hint beyond the depth keeps its word (bit 0): 999 = 62 * 16 + 7.
        let h2 = AtomicU32::new(999);
        assert_eq!(m.get(&h2), Some(7));
        // ... unless that word has no valid tag: word 7 % 4 = 3 at depth 4.
        let m4 = TagBitmap::new(4).unwrap();
        assert_eq!(m4.get(&AtomicU32::new(999)), Some(3));
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
