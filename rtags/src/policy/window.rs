//! The `window` policy: a reserved window of the bitmap per active queue,
//! plus a shared part, after Keith Busch's RFC "sbitmap enforced fairness
//! for blk-mq" (2026).
//!
//! # Layout
//!
//! With `D` the host depth, `s` the shared percentage
//! ([`HostTags::set_shared_pct`](super::super::host::HostTags::set_shared_pct),
//! default [`DEFAULT_SHARED_PCT`]) and `P` windows:
//!
//! ```text
//! shared = floor(D * s / 100)     reserved R = D - shared     W = floor(R / P)
//!
//! tags:  [0, W)     [W, 2W)    ...  [(P-1)W, PW)    [PW, D)
//!        window 0   window 1        window P-1      shared part
//! ```
//!
//! The shared part is the shared percentage plus the `R mod P` tags left
//! over by the division. When `W` would be 0 (more windows than reserved
//! tags) there are no windows and every tag is shared; so are they with
//! `s = 100`, or before the first tick.
//!
//! A queue that owns window `k` allocates in its window first, then in its
//! *slice* of the shared part (below), and nowhere else: its limit is
//! `W + ceil(S / P)` with `S = D - PW` shared tags, and no other queue can
//! take a tag of its window. A queue without a window (one that became
//! active since the last tick) may use the whole shared part. It is the
//! *place* of a tag, not a count, that limits a queue: the bitmap is the
//! only shared state an allocation writes (the queue's own `in_flight` is
//! on its own line), as in the RFC, which adds no per-I/O shared atomic. A
//! lone active queue owns `[0, R)` and the whole shared part: everything.
//!
//! # Shared slices
//!
//! Window `k`'s slice is `ceil(S / P)` shared tags from
//! `PW + floor(k S / P)` on (clipped to the depth): the slices cover the
//! shared part in order, each overlapping the next by at most one tag
//! (when `P` does not divide `S`), and every window has at least one
//! shared tag when `S > 0` (several windows then share one).
//!
//! Why slices and not the whole shared part for everyone: two equally busy
//! queues each fill their window and then compete for the shared part,
//! and a shared part open to all goes to whoever asks first whenever a
//! shared tag comes back. That is not a coin toss: the driver re-runs the
//! woken queues in a fixed order (rnull: by device index), so the queue
//! re-run first keeps every shared tag it once took, and equally busy
//! queues do not get equal parts (`tests/policy_sim.rs`, Axboe's b, checks
//! the split). A per-queue count of shared tags held would need `put` to
//! look at the freed tag and keep a second counter for every policy; a
//! slice keeps the policy one of places, and keeps the hand-off exact (a
//! put wakes only the queues that can use a free tag). The cost: a busy
//! queue next to an idle one that has a window does not get the idle
//! one's slice (nor its window) until the tick retires it, which `fair`
//! does not give either.
//!
//! # Who lays the windows out: the tick, only
//!
//! `P` is the number of active queues (all of them get a window, or, beyond
//! [`MAX_WINDOWS`], none does), counting a waiting queue as active: a `get`
//! racing with the tick that deactivates its queue may leave it inactive
//! and refused, and without a window it might have nothing any put could
//! hand it. A window is a *slot* `k < P`, kept by its queue across ticks
//! while `k < P`; a queue that became active gets the lowest free slot, and
//! the slot of a queue neither active nor waiting is freed.
//! All of that is done by [`HostTags::tick`](super::super::host::HostTags::tick),
//! serialised by its caller, and nowhere else: when `P` changes, every
//! window moves (`W = R / P`), and a queue refused under the old layout may
//! wait for tags that now lie in another queue's window, whose puts wake
//! that window's owner and not it. The tick can hand the whole waiter mask
//! back after a change (its return value); a `get` that activates a queue
//! cannot (it returns a tag). The price: a queue that becomes active uses
//! the shared part only, until the next tick (rnull ticks every 10 ms). This
//! is why the default shared percentage is 10 and not 0: with 0, such a
//! queue may have nothing to allocate from until then (and with few tags,
//! no shared part at all); 10% leaves 90% of the depth reserved. Depth and
//! shared-percentage changes move the windows too: their caller hands the
//! waiters back with
//! [`HostTags::take_waiters`](super::super::host::HostTags::take_waiters), as after
//! switching to `window` (which starts with every tag shared until the
//! first tick).
//!
//! # Hand-off
//!
//! When a `put` finds waiters (its mask load after (P) is non-zero), it
//! wakes, under `window`, the waiting queues that can allocate *now* (the
//! other policies look at each waiter's limit instead, see "A put, and the
//! hand-off" in [`super::super::design`]):
//!
//! * without windows (every tag shared), if a tag is free, every waiter
//!   can: the whole mask is taken;
//! * otherwise a waiting queue is woken if its window or its shared slice
//!   has a free tag, and a waiting queue without a window if the shared
//!   part has one: the bits of those queues alone are taken
//!   (`fetch_and`), and the other waiters keep theirs for a tag they can
//!   use.
//!
//! A bit stands for every queue whose index is equal modulo 64: the tick
//! records the windows of each bit and, for the hand-off above, which
//! bits belong to a queue without a window (every queue that can be
//! active or waiting is given to the tick; one not given has no window; a bit is "without a window" when any
//! of its queues is).
//!
//! So a tag freed in a queue's window goes to that queue if it waits, and
//! to nobody else, and a tag of a slice to the queues of that slice and
//! those without a window; the wake-up is passed on to the queues that can
//! use a free tag, and only to them. A woken queue that still finds nothing
//! (another queue took the tag first) fails its re-check, which sets its
//! bit again before (W), and the put of the tag's taker passes the wake-up
//! on. The RFC passes a wake-up on from the woken waiter itself, one
//! waiter at a time, which relies on that waiter retrying. A queue re-run
//! by blk-mq may not call `get` at all (a bit can be stale: a successful
//! re-check leaves it, and queues whose indexes are equal modulo 64 share
//! it), so a shared tag's wake-up handed to a single queue could stop there
//! while the tag is free and others wait: a free shared tag wakes every
//! waiter that may use it. (A bit shared by several queues with windows
//! wakes them all.)
//!
//! The put looks at the state after its free, not at the tag it freed: the
//! tag is then not needed after the bitmap's free, which keeps `put`'s code
//! the same under every policy (keeping the tag alive across the free
//! costs every policy a register copy on x86-64). Where exactly one queue
//! may use the freed tag, this wakes the same queue: the tag is free in its
//! window, unless someone took it again (see below).
//!
//! # Why no wake-up is lost
//!
//! The argument of [`super::super::design`] ("Why no wake-up is lost"), with the
//! layout. A refused queue X set its bit, then ran (W), then read the
//! layout (windows count, its slot, shared percentage, depth) and found
//! every tag of its *region* (its window and its shared slice; without a
//! window, the shared part) held. Each of
//! those bits is cleared later by a `put` whose (P) follows (W) and whose
//! mask load sees X's bit (or its hand-out by another put). After (P) that
//! put reads the freed tag's word and sees the tag free (its own clear), or
//! taken again by a later `get`, whose queue frees it later by a put that
//! also follows (W) (the free comes after X's read of the bit in the
//! word's modification order), for which the argument repeats. If the put
//! reads the layout X read, the free tag is in X's window or slice (it
//! takes X's bit), or, X without a window, in the shared part (it takes
//! the bits of the queues without a window, X's among them: the tick that
//! laid this layout out saw X without a window, or X's bit has none). If
//! it reads another
//! layout, a layout change C lies between the two reads. C was made by the
//! tick (or by a depth, shared percentage or policy change, whose caller
//! takes the waiters in the same way): its writes, then fence (T), then
//! `swap(0)` of the mask. If (W) precedes (T) in the SeqCst order, that swap
//! sees X's bit and returns it. If (T) precedes (W), X's reads after (W)
//! see C's writes, and so do the putter's after (P), since (T) precedes
//! (W) precedes (P): C is not between them. So **a refused queue's bit is
//! returned by a later put that leaves a tag it may use free, or by the
//! hand-out after the next layout change, or its re-check succeeded**. A
//! queue whose region is empty (no window yet, no shared part) is handed
//! out by the tick that gives it its window, the next one.
//!
//! A read of the layout that races with a change may mix old and new
//! values (the fields are separate atomics): such a get may place a tag
//! outside its region, and such a put may wake the wrong queue; the change's
//! hand-out covers the waiters, and the bitmap still hands every tag out
//! once. This is the looseness of the other policies' `Relaxed` limit
//! checks, which a racing `get` may also see before or after a change.
//!
//! # Orderings
//!
//! Every access here is `Relaxed`: the layout and the hand-off's reads of
//! the bitmap are ordered against the waiter mask by the fences (W), (P)
//! and (T) of [`super::super::design`] as above, tag ownership by the bitmap's
//! `Acquire`/`Release` pair, and the tick, the only writer of the windows
//! count, the slots, the windows of each bit and the bits without a
//! window, is serialised by its caller.
//!
//! # Cost
//!
//! Under `window` the limit cache's bound is 0, so every `get` takes the
//! out-of-line path, where it reads the layout (a division for `W`), then
//! searches its window's words, then its slice's (two more divisions): a
//! few times the instructions of the other policies' fast path. A get
//! that reaches its slice computes it, one that finds a tag in its window
//! does not. A `put` that finds waiters reads, per waiting queue, its
//! window's and its slice's words (at most 16 each), and the shared
//! part's once if a queue without a window waits. The inline fast path of
//! the other policies is unchanged, and so is `put` without waiters.
//!
use super::super::bitmap::{Error, TagBitmap};
use super::super::clock::Clock;
use super::super::host::{HostTags, Refusal};
use super::super::queue::{QueueTags, NO_WINDOW};
use super::super::sync::{AtomicU32, AtomicU64, Ordering};
use super::{Admit, Rule, State, Wake};
use core::ops::Range;

#[cfg(all(test, not(loom)))]
mod tests;

/// Most windows a layout has: with more active queues than this, no queue
/// gets a window and every tag is shared (the waiter mask has 64 bits).
pub const MAX_WINDOWS: u32 = 64;

/// Default shared percentage (see "Who lays the windows out").
pub const DEFAULT_SHARED_PCT: u32 = 10;

/// Where the windows and the shared part are: a snapshot of the inputs of
/// one moment (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The host depth `D`.
    pub depth: u32,
    /// The number of windows `P` (0: every tag is shared).
    pub windows: u32,
    /// Tags per window `W` (0 when there are no windows).
    pub size: u32,
}

impl Layout {
    /// The layout of `windows` windows over `depth` tags of which
    /// `shared_pct` percent (at most 100) are shared.
    pub fn new(depth: u32, shared_pct: u32, windows: u32) -> Layout {
        let shared = u64::from(depth) * u64::from(shared_pct.min(100)) / 100;
        // At most `depth`: the percentage is at most 100.
        let reserved = depth.saturating_sub(u32::try_from(shared).unwrap_or(depth));
        let size = reserved.checked_div(windows).unwrap_or(0);
        Layout {
            depth,
            // No window can be formed: everything is shared.
            windows: if size == 0 { 0 } else { windows },
            size,
        }
    }

    /// The first tag of the shared part, where the windows end.
    pub fn shared_start(&self) -> u32 {
        // At most the reserved tags: size = reserved / windows.
        self.windows.saturating_mul(self.size)
    }

    /// The shared part: the windows' slices cover it, and a queue without
    /// a window may allocate anywhere in it.
    pub fn shared(&self) -> Range<u32> {
        self.shared_start()..self.depth
    }

    /// The tags of window `slot`, if there is such a window.
    pub fn window(&self, slot: u32) -> Option<Range<u32>> {
        if slot >= self.windows {
            return None;
        }
        // No overflow: (slot + 1) * size <= shared_start() <= depth.
        let lo = slot * self.size;
        Some(lo..lo + self.size)
    }

    /// The window that holds `tag`, if any (`None`: shared, or beyond the
    /// depth).
    pub fn slot_of(&self, tag: u32) -> Option<u32> {
        if tag < self.shared_start() {
            // size > 0: there are windows.
            tag.checked_div(self.size)
        } else {
            None
        }
    }

    /// The shared tags a queue owning window `slot` may use (see "Shared
    /// slices"): with `S` shared tags and `P` windows, `ceil(S / P)` of
    /// them from the `floor(slot * S / P)`-th on, clipped to the depth.
    /// A queue without a window (`None`, or a slot out of range) may use
    /// the whole shared part.
    pub fn shared_slice(&self, slot: Option<u32>) -> Range<u32> {
        let shared = self.shared();
        let Some(slot) = slot.filter(|&s| s < self.windows) else {
            return shared;
        };
        let n = shared.end - shared.start;
        // No overflow: slot < windows and n <= depth, in u64; the offset
        // is below n. windows > 0: there is a window.
        let offset = u64::from(slot) * u64::from(n) / u64::from(self.windows);
        let lo = shared.start + u32::try_from(offset).unwrap_or(n);
        let len = n.div_ceil(self.windows);
        lo..lo.saturating_add(len).min(shared.end)
    }

    /// How many tags a queue owning window `slot` (or none) may hold: its
    /// window and its slice of the shared part (without a window: the
    /// whole shared part).
    pub fn limit(&self, slot: Option<u32>) -> u32 {
        let window = if slot.is_some_and(|s| s < self.windows) {
            self.size
        } else {
            0
        };
        let shared = self.shared_slice(slot);
        // No overflow: the window and the slice lie in 0..depth.
        window + (shared.end - shared.start)
    }
}

/// How [`HostTags::put`](super::super::host::HostTags::put) hands a freed tag on
/// (see "Hand-off").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HandOff {
    /// Every waiter may allocate: take the whole mask.
    All,
    /// Only the waiters of these bits may (0: none).
    Only(u64),
}

/// The window state of a host: the shared percentage (a setting), and the
/// layout's windows count and slots (written by the tick).
pub struct Windows {
    /// Percentage of the depth shared by all queues (`0..=100`).
    shared_pct: AtomicU32,
    /// `P`, the number of windows (see [`Layout`]).
    count: AtomicU32,
    /// For each waiter bit (`index % 64`), the windows of the queues with
    /// that bit (bit `k`: window `k`; several when indexes are equal modulo
    /// 64).
    windows_of_bit: [AtomicU64; 64],
    /// The waiter bits of the queues the tick saw without a window (they
    /// may use the whole shared part): a bit both here and in
    /// `windows_of_bit` is shared by queues with and without a window.
    loose_bits: AtomicU64,
}

impl Windows {
    /// No windows yet (every tag shared), the default shared percentage.
    pub(super) fn new() -> Windows {
        Windows {
            shared_pct: AtomicU32::new(DEFAULT_SHARED_PCT),
            count: AtomicU32::new(0),
            windows_of_bit: core::array::from_fn(|_| AtomicU64::new(0)),
            loose_bits: AtomicU64::new(0),
        }
    }

    /// The shared percentage.
    pub(super) fn shared_pct(&self) -> u32 {
        // Relaxed: a layout input, read after (W) or (P), written before
        // (T) (see "Orderings").
        self.shared_pct.load(Ordering::Relaxed)
    }

    /// Sets the shared percentage; `false` (and nothing changed) if it is
    /// above 100. The caller hands the waiters back (module docs).
    pub(super) fn set_shared_pct(&self, pct: u32) -> bool {
        if pct > 100 {
            return false;
        }
        // Relaxed: a layout input, ordered before the caller's (T)
        // (`take_waiters`) against (W) and (P) (see "Orderings").
        self.shared_pct.store(pct, Ordering::Relaxed);
        true
    }

    /// Drops every window (every tag shared until the next tick), e.g. when
    /// the policy becomes `window`: the slots of that time may be stale.
    pub(super) fn reset(&self) {
        // Relaxed: as in `set_shared_pct`: the caller hands the waiters
        // back after (T).
        self.count.store(0, Ordering::Relaxed);
    }

    /// The current layout over `depth` tags.
    pub(super) fn layout(&self, depth: u32) -> Layout {
        // Relaxed: read after (W) (a get's re-check) or (P) (a put's
        // hand-off), written by the tick before (T) (see "Orderings").
        Layout::new(depth, self.shared_pct(), self.count.load(Ordering::Relaxed))
    }

    /// The window of `q` in `layout`, if it has one.
    pub(super) fn slot(&self, q: &QueueTags, layout: &Layout) -> Option<u32> {
        // Relaxed: as the count in `layout`. A slot of an older layout may
        // be out of range: no window.
        let slot = q.window_slot.load(Ordering::Relaxed);
        (slot < layout.windows).then_some(slot)
    }

    /// Allocates a tag for the owner of window `slot` (or a queue without
    /// one): in the window first, then in its slice of the shared part
    /// (without a window: the whole shared part).
    pub(super) fn get(
        &self,
        bitmap: &TagBitmap,
        layout: &Layout,
        slot: Option<u32>,
        hint: &AtomicU32,
    ) -> Option<u32> {
        if let Some(w) = slot.and_then(|s| layout.window(s)) {
            if let Some(tag) = bitmap.get_in_range(w.start, w.end, hint) {
                return Some(tag);
            }
        }
        let shared = layout.shared_slice(slot);
        bitmap.get_in_range(shared.start, shared.end, hint)
    }

    /// Which of the waiters in `waiters` may allocate now, in the layout
    /// over `depth` tags (see "Hand-off"): without windows, all if the
    /// shared part has a free tag; else a waiter whose window or shared
    /// slice has one (for a bit shared by several queues: one of their
    /// windows or slices), and a waiter without a window if the shared
    /// part has one.
    pub(super) fn hand_off(&self, bitmap: &TagBitmap, depth: u32, waiters: u64) -> HandOff {
        let layout = self.layout(depth);
        let shared = layout.shared();
        let free = |r: Range<u32>| bitmap.has_free_in_range(r.start, r.end);
        if layout.windows == 0 {
            // Everything is shared.
            return if free(shared) {
                HandOff::All
            } else {
                HandOff::Only(0)
            };
        }
        // Relaxed: as the count in `layout` (read after (P), written by
        // the tick before (T)).
        let loose = self.loose_bits.load(Ordering::Relaxed);
        // Whether the shared part has a free tag, looked at once, and only
        // for a waiter without a window.
        let mut shared_free = None;
        let mut wake = 0u64;
        let mut rest = waiters;
        while rest != 0 {
            let bit = rest.trailing_zeros();
            rest &= rest - 1;
            // Relaxed: as `loose`. In range: bit < 64.
            let mut windows = self
                .windows_of_bit
                .get(bit as usize)
                .map_or(0, |w| w.load(Ordering::Relaxed));
            if windows == 0 || loose & (1u64 << bit) != 0 {
                // A queue without a window (or one the tick has not seen):
                // the whole shared part is its.
                if *shared_free.get_or_insert_with(|| free(shared.clone())) {
                    wake |= 1u64 << bit;
                    continue;
                }
            }
            while windows != 0 {
                let slot = windows.trailing_zeros();
                windows &= windows - 1;
                let Some(w) = layout.window(slot) else {
                    continue;
                };
                if free(w) || free(layout.shared_slice(Some(slot))) {
                    wake |= 1u64 << bit;
                    break;
                }
            }
        }
        HandOff::Only(wake)
    }

    /// Lays the windows out over `depth` tags for the queues among `queues`
    /// (all the host's) that are active or waiting (their bit is in
    /// `waiting`): the tick's part of the policy, serialised by its caller.
    /// Returns whether the windows moved (anything a `get` or a `put` reads
    /// changed): the caller must then hand every waiter back ("Why no
    /// wake-up is lost").
    ///
    /// A waiting queue gets a window even if it is not active: a `get`
    /// racing with the tick that deactivates its queue may leave it
    /// inactive and refused; without a window (and with nothing shared) no
    /// put could ever hand it a tag.
    pub(super) fn tick<Q: AsRef<QueueTags>>(&self, queues: &[Q], depth: u32, waiting: u64) -> bool {
        let before = self.layout(depth);
        let wants = |q: &QueueTags| q.is_active() || waiting & q.waiter_bit() != 0;
        let active = queues.iter().filter(|q| wants(q.as_ref())).count();
        let count = match u32::try_from(active) {
            Ok(n) if n <= MAX_WINDOWS => n,
            // Too many for the waiter mask's bits: nobody gets a window.
            _ => 0,
        };
        // Relaxed (all): the tick is the only writer of the count and the
        // slots, and is serialised; its caller's (T), after these writes,
        // orders them against the readers' (W) and (P) ("Orderings").
        let mut changed = false;
        // Keep the slots that are still valid (each once), free the others.
        let mut used = 0u64;
        for q in queues.iter().map(AsRef::as_ref) {
            let slot = q.window_slot.load(Ordering::Relaxed);
            let bit = 1u64.wrapping_shl(slot);
            if wants(q) && slot < count && used & bit == 0 {
                used |= bit;
            } else if slot != NO_WINDOW {
                q.window_slot.store(NO_WINDOW, Ordering::Relaxed);
                changed = true;
            }
        }
        // The lowest free slot for every active queue without one. A queue
        // activated since the count above may find none: next tick.
        for q in queues.iter().map(AsRef::as_ref) {
            if wants(q) && q.window_slot.load(Ordering::Relaxed) == NO_WINDOW {
                let slot = (!used).trailing_zeros();
                if slot < count {
                    used |= 1u64 << slot;
                    q.window_slot.store(slot, Ordering::Relaxed);
                    changed = true;
                }
            }
        }
        // Which windows each waiter bit stands for.
        let mut by_bit = [0u64; 64];
        for q in queues.iter().map(AsRef::as_ref) {
            let slot = q.window_slot.load(Ordering::Relaxed);
            if let Some(b) = by_bit.get_mut((q.index() % 64) as usize) {
                if slot < count {
                    *b |= 1u64 << slot;
                }
            }
        }
        for (stored, windows) in self.windows_of_bit.iter().zip(by_bit) {
            if stored.load(Ordering::Relaxed) != windows {
                stored.store(windows, Ordering::Relaxed);
                changed = true;
            }
        }
        // The bits of the queues left without a window (inactive ones
        // included: one may be refused right now).
        let loose = queues
            .iter()
            .map(AsRef::as_ref)
            .filter(|q| q.window_slot.load(Ordering::Relaxed) >= count)
            .fold(0u64, |m, q| m | q.waiter_bit());
        if self.loose_bits.load(Ordering::Relaxed) != loose {
            self.loose_bits.store(loose, Ordering::Relaxed);
            changed = true;
        }
        self.count.store(count, Ordering::Relaxed);
        let after = self.layout(depth);
        // Without windows before and after (too few tags), nobody reads the
        // slots: nothing moved.
        after != before || (changed && after.windows != 0)
    }
}

impl State for Windows {
    fn new() -> Windows {
        Windows::new()
    }
}

/// The `window` policy.
pub struct Window;

impl Rule for Window {
    const NAME: &'static str = "window";
    type State = Windows;

    /// 0: not a count but the place of a tag limits a queue (its window
    /// and its slice of the shared part, or the whole shared part without
    /// a window), so no allocation may take the fast path's hinted word:
    /// every one asks [`Rule::admit`].
    fn share(_: &HostTags, _: &Windows) -> u32 {
        0
    }

    /// Its window and its slice of the shared part (without a window: the
    /// shared part).
    fn limit<C: Clock>(host: &HostTags, windows: &Windows, q: &QueueTags, _: &C) -> u32 {
        let layout = windows.layout(host.depth());
        layout.limit(windows.slot(q, &layout))
    }

    /// A tag of `q`'s window, else of its slice of the shared part (without
    /// a window: of the whole shared part); not a count (the count of a
    /// queue that holds tags of another window, from an older layout, may
    /// be below its limit while its window and its slice are full). A
    /// refusal is `Limited` when other queues' windows exist (the queue's
    /// part of the budget is full), `Exhausted` when its part is the whole
    /// depth.
    #[inline(always)]
    fn admit<C: Clock>(
        host: &HostTags,
        windows: &Windows,
        q: &QueueTags,
        hint: &AtomicU32,
        depth: u32,
        _: &C,
    ) -> Admit {
        match windows.admit(host.bitmap(), q, hint, depth) {
            Ok(tag) => Admit::Tag(tag),
            Err(refusal) => Admit::Refuse(refusal),
        }
    }

    /// The waiters whose region has a free tag (see "Hand-off").
    fn hand_off<Q: AsRef<QueueTags>, C: Clock>(
        host: &HostTags,
        windows: &Windows,
        waiters: u64,
        _: &[Q],
        depth: u32,
        _: &C,
    ) -> u64 {
        match windows.hand_off(host.bitmap(), depth, waiters) {
            HandOff::All => waiters,
            HandOff::Only(bits) => bits,
        }
    }

    /// `window` starts without windows (every tag shared) until the next
    /// tick: the slots of an earlier `window` period may be stale.
    fn select(_: &HostTags, windows: &Windows) {
        windows.reset();
    }

    /// Lays the windows out for the active queues; when they moved, every
    /// waiter is handed back (a queue refused under the old layout may
    /// wait for tags that now lie in another queue's window).
    fn tick<Q: AsRef<QueueTags>>(host: &HostTags, windows: &Windows, queues: &[Q]) -> Wake {
        if windows.tick(queues, host.depth(), host.waiter_mask()) {
            Wake::All
        } else {
            Wake::Nobody
        }
    }
}

impl Windows {
    /// [`Window::admit`]'s allocation, out of line.
    #[inline(never)]
    fn admit(
        &self,
        bitmap: &TagBitmap,
        q: &QueueTags,
        hint: &AtomicU32,
        depth: u32,
    ) -> Result<u32, Refusal> {
        let layout = self.layout(depth);
        let slot = self.slot(q, &layout);
        match self.get(bitmap, &layout, slot, hint) {
            Some(tag) => {
                // Relaxed: accounting; tag ownership is carried by the
                // bitmap bit.
                q.in_flight.fetch_add(1, Ordering::Relaxed);
                Ok(tag)
            }
            None if layout.limit(slot) < layout.depth => Err(Refusal::Limited),
            None => Err(Refusal::Exhausted),
        }
    }
}

/// The settings and the layout of `window`, whatever the policy.
impl HostTags {
    /// The `window` state of this host.
    fn windows(&self) -> &Windows {
        &self.states().window
    }

    /// The percentage of the depth that every queue may use under
    /// `window` (the rest is divided into windows).
    pub fn shared_pct(&self) -> u32 {
        self.windows().shared_pct()
    }

    /// Sets the shared percentage of `window` (`0..=100`; default
    /// [`DEFAULT_SHARED_PCT`]). Out of range: an error, and nothing
    /// changed. Under `window` this moves the windows: re-run the waiting
    /// queues afterwards ([`HostTags::take_waiters`]).
    pub fn set_shared_pct(&self, pct: u32) -> Result<(), Error> {
        if self.windows().set_shared_pct(pct) {
            Ok(())
        } else {
            Err(Error::InvalidPercent)
        }
    }

    /// The `window` layout of the moment (a snapshot, whatever the policy).
    pub fn window_layout(&self) -> Layout {
        self.windows().layout(self.depth())
    }

    /// The tags of `q`'s window in the current layout, if it has one (a
    /// snapshot).
    pub fn window(&self, q: &QueueTags) -> Option<Range<u32>> {
        let layout = self.window_layout();
        layout.window(self.windows().slot(q, &layout)?)
    }

    /// The shared tags `q` may use in the current layout: its slice of
    /// the shared part, or all of it without a window (a snapshot; see
    /// [`Layout::shared_slice`]).
    pub fn shared_slice(&self, q: &QueueTags) -> Range<u32> {
        let layout = self.window_layout();
        layout.shared_slice(self.windows().slot(q, &layout))
    }
}
