//! Per hardware queue time-slice scheduler (Andreas Herrmann's
//! `time_slice_us`).
//!
//! A hardware queue is fed by up to 64 software queues (*ctx*, one per CPU
//! group, numbered `0..64`). Without a time slice (`slice_ns == 0`,
//! the default) the driver dispatches in arrival order and should not call
//! into this scheduler at all (check [`SliceSched::is_enabled`]).
//!
//! With a positive slice only one ctx (the *active* one) is served until
//! its slice expires or it runs empty; then the next ctx with pending
//! requests in round-robin order after the active one is selected and gets
//! a fresh slice.
//!
//! **Extension rule**: when the slice expires and at least one request of
//! the active ctx was serviced ([`SliceSched::serviced`]) during the period
//! that just ended, the slice is extended by one initial slice length,
//! at most twice, so a busy ctx gets at most 3x the initial value (Herrmann:
//! "extended (up to 3 times the initial value) when there was actually a
//! request to be serviced for the software queue").
//!
//! **When the slice clock starts** ([`SliceStart`]): Herrmann's patch
//! starts it when the ctx is selected ([`SliceStart::Selection`]). On a
//! disk whose switch costs a seek longer than the slice, that clock runs
//! out during the very first request, so every slice serves one request
//! and the slice changes nothing. CFQ starts a queue's slice when its first
//! request completes (`cfq_completed_request()` -> `cfq_set_prio_slice()`);
//! [`SliceStart::FirstCompletion`] does the same: the switch cost is not
//! charged to the slice, the slice measures service of the ctx itself.
//!
//! **Anticipation**: with `idle_ns > 0`, when the active ctx is empty but
//! its slice lasts and it was serviced less than `idle_ns` ago, other
//! ctxs are *not* served yet: [`Pick::Wait`] tells the driver to come back
//! at `until_ns` (the driver arms a timer or simply re-runs on the next
//! request). This keeps the locality of a sequential reader on a
//! rotational disk. `idle_ns == 0` switches as soon as the ctx is empty.
//!
//! **Seeky ctxs share** (CFQ's "sync-noidle" service tree): a ctx whose
//! recent requests are mostly seeks ([`super::seek`]) gains nothing from
//! having the disk to itself, and loses what the drive's command queue
//! would gain by choosing the nearest of several ctxs' requests. When the
//! round robin comes to a seeky ctx, the slice goes to every seeky ctx
//! together ([`Pick::ServeSeeky`]): the driver dispatches all their
//! requests, as without slices, for one slice (extended as above), and
//! does not wait for any of them when they run empty. An active ctx that
//! turns seeky is not waited for either. Callers report each request with
//! [`SliceSched::arrived`].
//!
//! The scheduler is single threaded: the driver protects each instance with
//! a lock (rnull: its spindle's `IrqSpinLock`). Time is passed in by the caller.

/// Number of software queues (ctx) a scheduler can arbitrate.
pub const MAX_CTX: u32 = 64;

/// Maximum number of extensions: a slice lasts at most 3x its initial value.
pub const MAX_EXTENSIONS: u32 = 2;

use super::seek::Seeks;

/// Decision returned by [`SliceSched::pick`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Dispatch (one or more) requests of this ctx.
    Serve(u32),
    /// Dispatch the requests of every seeky ctx ([`SliceSched::seeky_mask`],
    /// read when dispatching), in any order: the drive's queue reorders
    /// them. Call `pick` again when a request completes, even if others
    /// are still in the drive, so that the slice can end.
    ServeSeeky,
    /// Dispatch nothing now; call `pick` again at `until_ns` (or earlier
    /// when new requests arrive).
    Wait {
        /// When the anticipation window or the slice ends.
        until_ns: u64,
    },
    /// Nothing is pending.
    Idle,
}

/// When a ctx's slice clock starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SliceStart {
    /// When the ctx is selected (Herrmann's RFC).
    #[default]
    Selection,
    /// When the first request of the ctx completes after its selection
    /// (CFQ); until then the slice does not run out.
    FirstCompletion,
}

/// Time-slice scheduler state of one hardware queue.
#[derive(Clone, Debug, Default)]
pub struct SliceSched {
    slice_ns: u64,
    idle_ns: u64,
    start: SliceStart,
    active: Option<u32>,
    /// The slice belongs to every seeky ctx (`active` is the one the round
    /// robin came to).
    shared: bool,
    /// Every ctx's seek history.
    seeks: Seeks,
    /// Whether the active ctx's slice clock runs (see [`SliceStart`]).
    started: bool,
    slice_start_ns: u64,
    slice_end_ns: u64,
    extensions: u32,
    serviced_in_period: bool,
    last_service_ns: Option<u64>,
    /// Round-robin position: the ctx that got the last slice.
    last_ctx: u32,
}

/// First ctx set in `mask` strictly after `last`, wrapping (`mask != 0`).
fn next_after(last: u32, mask: u64) -> u32 {
    let start = last.wrapping_add(1) & (MAX_CTX - 1);
    let off = mask.rotate_right(start).trailing_zeros();
    start.wrapping_add(off) & (MAX_CTX - 1)
}

impl SliceSched {
    /// A disabled scheduler (slice 0, no anticipation).
    pub fn new() -> Self {
        Self {
            // Start round robin at ctx 0.
            last_ctx: MAX_CTX - 1,
            ..Self::default()
        }
    }

    /// Whether time slicing is enabled (`slice_ns() > 0`).
    pub fn is_enabled(&self) -> bool {
        self.slice_ns != 0
    }

    /// The initial slice length in ns (0 = disabled).
    pub fn slice_ns(&self) -> u64 {
        self.slice_ns
    }

    /// When slice clocks start; applies from the next selection on.
    pub fn set_start(&mut self, start: SliceStart) {
        self.start = start;
    }

    /// When slice clocks start.
    pub fn start(&self) -> SliceStart {
        self.start
    }

    /// Changes the slice length at runtime.
    ///
    /// 0 disables slicing and forgets the active ctx. Otherwise the new
    /// length applies to the next slice; a running slice is cut short to
    /// `start + new` if that is earlier than its current end (it is never
    /// lengthened). Extensions granted later in a running slice add the new
    /// length, so a slice changed in flight is capped by a mix of both.
    pub fn set_slice_ns(&mut self, ns: u64) {
        self.slice_ns = ns;
        if ns == 0 {
            self.active = None;
            self.shared = false;
        } else if self.active.is_some() && self.started {
            self.slice_end_ns = self
                .slice_end_ns
                .min(self.slice_start_ns.saturating_add(ns));
        }
    }

    /// The anticipation window in ns (0 = switch when empty).
    pub fn idle_ns(&self) -> u64 {
        self.idle_ns
    }

    /// Sets the anticipation window.
    pub fn set_idle_ns(&mut self, ns: u64) {
        self.idle_ns = ns;
    }

    /// The ctx owning the current slice, if any.
    pub fn active_ctx(&self) -> Option<u32> {
        self.active
    }

    /// Records a request of `ctx` for `sectors` sectors at `sector` (for
    /// its seek history), when it arrives.
    pub fn arrived(&mut self, ctx: u32, sector: u64, sectors: u64) {
        self.seeks.note(ctx, sector, sectors);
    }

    /// Bit `i` set when ctx `i` is seeky: the ctxs [`Pick::ServeSeeky`]
    /// serves.
    pub fn seeky_mask(&self) -> u64 {
        self.seeks.mask()
    }

    /// Whether the current slice belongs to the seeky ctxs together.
    pub fn is_shared(&self) -> bool {
        self.active.is_some() && self.shared
    }

    /// End of the current slice (including extensions so far), if there
    /// is an active ctx and its slice clock runs.
    pub fn slice_end_ns(&self) -> Option<u64> {
        self.active
            .filter(|_| self.started)
            .map(|_| self.slice_end_ns)
    }

    /// Chooses what to dispatch at `now_ns`; bit `i` of `pending_mask` is
    /// set when ctx `i` has requests waiting.
    ///
    /// When disabled this returns the lowest pending ctx (callers should
    /// bypass the scheduler instead, see [`Self::is_enabled`]).
    pub fn pick(&mut self, now_ns: u64, pending_mask: u64) -> Pick {
        if self.slice_ns == 0 {
            return if pending_mask == 0 {
                Pick::Idle
            } else {
                Pick::Serve(pending_mask.trailing_zeros())
            };
        }
        if let Some(cur) = self.active {
            // Expiry, with at most MAX_EXTENSIONS extensions in total.
            while now_ns >= self.slice_end_ns {
                if self.serviced_in_period && self.extensions < MAX_EXTENSIONS {
                    self.extensions = self.extensions.saturating_add(1);
                    self.slice_end_ns = self.slice_end_ns.saturating_add(self.slice_ns);
                    self.serviced_in_period = false;
                } else {
                    self.active = None;
                    break;
                }
            }
            if self.active.is_some() {
                let seeky = self.seeks.mask();
                if self.shared {
                    if pending_mask & seeky != 0 {
                        return Pick::ServeSeeky;
                    }
                } else if pending_mask & 1u64.wrapping_shl(cur) != 0 {
                    return Pick::Serve(cur);
                }
                if pending_mask == 0 {
                    // Nothing to serve anyway: keep the slice.
                    return Pick::Idle;
                }
                // Anticipation is for a ctx whose next request is near the
                // head: not for seeky ones.
                let near = !self.shared && seeky & 1u64.wrapping_shl(cur) == 0;
                if near && self.idle_ns != 0 {
                    if let Some(last) = self.last_service_ns {
                        let until = last.saturating_add(self.idle_ns).min(self.slice_end_ns);
                        if now_ns < until {
                            return Pick::Wait { until_ns: until };
                        }
                    }
                }
                self.active = None;
            }
        }
        if pending_mask == 0 {
            return Pick::Idle;
        }
        // After a shared slice every seeky ctx has had its turn: the next
        // slice goes to a ctx that is not seeky, if one is pending.
        let others = pending_mask & !self.seeks.mask();
        let candidates = if self.shared && others != 0 {
            others
        } else {
            pending_mask
        };
        let next = next_after(self.last_ctx, candidates);
        self.active = Some(next);
        self.shared = self.seeks.mask() & 1u64.wrapping_shl(next) != 0;
        self.last_ctx = next;
        match self.start {
            SliceStart::Selection => self.start_clock(now_ns),
            SliceStart::FirstCompletion => {
                self.started = false;
                // Never expires before the clock starts.
                self.slice_end_ns = u64::MAX;
            }
        }
        self.extensions = 0;
        self.serviced_in_period = false;
        self.last_service_ns = None;
        if self.shared {
            Pick::ServeSeeky
        } else {
            Pick::Serve(next)
        }
    }

    /// Starts the active ctx's slice clock at `now_ns`.
    fn start_clock(&mut self, now_ns: u64) {
        self.started = true;
        self.slice_start_ns = now_ns;
        self.slice_end_ns = now_ns.saturating_add(self.slice_ns);
    }

    /// Reports that a request of `ctx` was serviced (completed) at `now_ns`.
    ///
    /// Only service of the active ctx (of a seeky ctx, when the slice is
    /// shared) counts (for extension and
    /// anticipation); other calls are ignored. With
    /// [`SliceStart::FirstCompletion`] the first such report starts the
    /// slice clock and does not count towards an extension: it ends the
    /// switch, not a period of the slice.
    pub fn serviced(&mut self, ctx: u32, now_ns: u64) {
        let ours = if self.shared {
            self.active.is_some() && self.seeks.mask() & 1u64.wrapping_shl(ctx) != 0
        } else {
            self.active == Some(ctx)
        };
        if !ours {
            return;
        }
        if self.started {
            self.serviced_in_period = true;
        } else {
            self.start_clock(now_ns);
        }
        self.last_service_ns = Some(now_ns);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const S: u64 = 100;

    fn enabled(slice: u64, idle: u64) -> SliceSched {
        let mut s = SliceSched::new();
        s.set_slice_ns(slice);
        s.set_idle_ns(idle);
        assert!(s.is_enabled());
        s
    }

    #[test]
    fn disabled_is_arrival_order_passthrough() {
        let mut s = SliceSched::new();
        assert!(!s.is_enabled());
        assert_eq!(s.slice_ns(), 0);
        assert_eq!(s.pick(0, 0), Pick::Idle);
        assert_eq!(s.pick(0, 0b1010), Pick::Serve(1));
        s.serviced(1, 0);
        assert_eq!(s.active_ctx(), None);
        assert_eq!(s.pick(1_000_000, 0b1000), Pick::Serve(3));
    }

    #[test]
    fn serves_one_ctx_until_expiry() {
        let mut s = enabled(S, 0);
        assert_eq!(s.pick(0, 0b11), Pick::Serve(0));
        assert_eq!(s.slice_end_ns(), Some(S));
        assert_eq!(s.pick(50, 0b11), Pick::Serve(0));
        assert_eq!(s.pick(99, 0b11), Pick::Serve(0));
        // Not serviced during the slice: no extension.
        assert_eq!(s.pick(100, 0b11), Pick::Serve(1));
        assert_eq!(s.slice_end_ns(), Some(200));
    }

    #[test]
    fn empty_ctx_switches_immediately_without_idle_wait() {
        let mut s = enabled(S, 0);
        assert_eq!(s.pick(0, 0b01), Pick::Serve(0));
        s.serviced(0, 1);
        assert_eq!(s.pick(2, 0b10), Pick::Serve(1));
        assert_eq!(s.active_ctx(), Some(1));
    }

    #[test]
    fn nothing_pending_keeps_slice() {
        let mut s = enabled(S, 0);
        assert_eq!(s.pick(0, 0b01), Pick::Serve(0));
        assert_eq!(s.pick(10, 0), Pick::Idle);
        assert_eq!(s.active_ctx(), Some(0));
        assert_eq!(s.pick(20, 0b11), Pick::Serve(0));
        // Expired while nothing was pending.
        assert_eq!(s.pick(200, 0), Pick::Idle);
        assert_eq!(s.active_ctx(), None);
    }

    #[test]
    fn extension_capped_at_three_times() {
        let mut s = enabled(S, 0);
        let mut t = 0;
        let mut served0 = 0;
        loop {
            match s.pick(t, 0b11) {
                Pick::Serve(0) => {
                    s.serviced(0, t);
                    served0 += 1;
                }
                Pick::Serve(1) => break,
                other => panic!("unexpected {other:?}"),
            }
            t += 10;
        }
        assert_eq!(t, 3 * S, "a busy ctx keeps exactly 3 slices");
        assert_eq!(served0, 30);
    }

    #[test]
    fn extension_needs_service_in_each_period() {
        let mut s = enabled(S, 0);
        assert_eq!(s.pick(0, 0b11), Pick::Serve(0));
        s.serviced(0, 10);
        // Serviced in the first period: extended to 200.
        assert_eq!(s.pick(100, 0b11), Pick::Serve(0));
        assert_eq!(s.slice_end_ns(), Some(200));
        // Not serviced in the second period: expires at 200.
        assert_eq!(s.pick(200, 0b11), Pick::Serve(1));
        // A late pick only grants the extensions that were earned.
        s.serviced(1, 210);
        assert_eq!(s.pick(1000, 0b11), Pick::Serve(0));
    }

    #[test]
    fn round_robin_order() {
        let mut s = enabled(S, 0);
        let mask = (1 << 1) | (1 << 3) | (1 << 63);
        let mut order = std::vec::Vec::new();
        for i in 0..6 {
            match s.pick(i * S, mask) {
                Pick::Serve(c) => order.push(c),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(order, [1, 3, 63, 1, 3, 63]);
        // Only one ctx pending: it gets a fresh slice after expiry.
        assert_eq!(s.pick(6 * S, 1 << 3), Pick::Serve(3));
        assert_eq!(s.slice_end_ns(), Some(7 * S));
    }

    #[test]
    fn next_after_wraps() {
        assert_eq!(next_after(63, 1), 0);
        assert_eq!(next_after(0, 1), 0);
        assert_eq!(next_after(5, 0b100001), 0);
        assert_eq!(next_after(62, 1 << 63), 63);
        assert_eq!(next_after(63, 1 << 63), 63);
    }

    #[test]
    fn anticipation_waits_then_switches() {
        let mut s = enabled(S, 20);
        assert_eq!(s.pick(0, 0b01), Pick::Serve(0));
        s.serviced(0, 10);
        // ctx 0 empty, serviced 5 ns ago: wait for it until 30.
        assert_eq!(s.pick(15, 0b10), Pick::Wait { until_ns: 30 });
        // The sequential reader comes back in time: served, locality kept.
        assert_eq!(s.pick(25, 0b11), Pick::Serve(0));
        s.serviced(0, 25);
        assert_eq!(s.pick(30, 0b10), Pick::Wait { until_ns: 45 });
        // It does not come back: switch.
        assert_eq!(s.pick(45, 0b10), Pick::Serve(1));
    }

    #[test]
    fn anticipation_needs_recent_service_and_is_capped_by_slice() {
        let mut s = enabled(S, 50);
        assert_eq!(s.pick(0, 0b01), Pick::Serve(0));
        // Never serviced in this slice: no reason to wait.
        assert_eq!(s.pick(5, 0b10), Pick::Serve(1));
        s.serviced(1, 90);
        // ctx 1's slice runs 5..105: the wait is capped at 105, not 140.
        assert_eq!(s.pick(95, 0b01), Pick::Wait { until_ns: 105 });
        // At 105 the slice is extended (serviced), but the idle window
        // ends at 140: still waiting for ctx 1.
        assert_eq!(s.pick(105, 0b01), Pick::Wait { until_ns: 140 });
        assert_eq!(s.slice_end_ns(), Some(205));
        assert_eq!(s.pick(140, 0b01), Pick::Serve(0));
    }

    #[test]
    fn selection_clock_runs_during_the_switch() {
        let mut s = enabled(S, 0);
        assert_eq!(s.start(), SliceStart::Selection);
        assert_eq!(s.pick(0, 0b11), Pick::Serve(0));
        // The first request takes longer than the slice (a seek).
        s.serviced(0, 5 * S);
        // One extension was earned, but both periods are long gone.
        assert_eq!(s.pick(5 * S, 0b11), Pick::Serve(1));
    }

    #[test]
    fn first_completion_starts_the_clock() {
        let mut s = enabled(S, 0);
        s.set_start(SliceStart::FirstCompletion);
        assert_eq!(s.pick(0, 0b11), Pick::Serve(0));
        assert_eq!(s.active_ctx(), Some(0));
        assert_eq!(
            s.slice_end_ns(),
            None,
            "no clock before the first completion"
        );
        // However long the switch takes, the slice has not run.
        assert_eq!(s.pick(4 * S, 0b11), Pick::Serve(0));
        s.serviced(0, 5 * S);
        assert_eq!(s.slice_end_ns(), Some(6 * S));
        // The completion that started the clock earns no extension.
        assert_eq!(s.pick(6 * S, 0b11), Pick::Serve(1));
        assert_eq!(s.slice_end_ns(), None);
    }

    #[test]
    fn first_completion_keeps_extensions_and_cap() {
        let mut s = enabled(S, 0);
        s.set_start(SliceStart::FirstCompletion);
        assert_eq!(s.pick(0, 0b11), Pick::Serve(0));
        s.serviced(0, 1000);
        let mut t = 1000;
        loop {
            match s.pick(t, 0b11) {
                Pick::Serve(0) => s.serviced(0, t),
                Pick::Serve(1) => break,
                other => panic!("unexpected {other:?}"),
            }
            t += 10;
        }
        assert_eq!(
            t,
            1000 + 3 * S,
            "3x the slice, counted from the first completion"
        );
    }

    #[test]
    fn first_completion_switches_from_a_ctx_that_never_completed() {
        let mut s = enabled(S, 50);
        s.set_start(SliceStart::FirstCompletion);
        assert_eq!(s.pick(0, 0b01), Pick::Serve(0));
        // ctx 0 ran empty before anything completed: nothing to anticipate.
        assert_eq!(s.pick(10, 0b10), Pick::Serve(1));
        // A late completion of the old ctx does not start the new one's clock.
        s.serviced(0, 20);
        assert_eq!(s.slice_end_ns(), None);
        s.serviced(1, 30);
        assert_eq!(s.slice_end_ns(), Some(30 + S));
    }

    #[test]
    fn first_completion_slice_changed_before_the_clock_starts() {
        let mut s = enabled(1000, 0);
        s.set_start(SliceStart::FirstCompletion);
        assert_eq!(s.pick(0, 0b11), Pick::Serve(0));
        s.serviced(0, 10);
        // ctx 0's slice runs 10..1010, then ctx 1 is selected at 1010.
        assert_eq!(s.pick(1010, 0b11), Pick::Serve(1));
        // Shrunk before ctx 1 completed anything: still no clock, and the
        // old selection's start must not cut ctx 1 short.
        s.set_slice_ns(S);
        assert_eq!(s.slice_end_ns(), None);
        assert_eq!(s.pick(5000, 0b11), Pick::Serve(1));
        s.serviced(1, 6000);
        assert_eq!(s.slice_end_ns(), Some(6000 + S));
    }

    #[test]
    fn slice_changed_at_runtime() {
        let mut s = enabled(1000, 0);
        assert_eq!(s.pick(0, 0b11), Pick::Serve(0));
        // Shrinking cuts the running slice short.
        s.set_slice_ns(S);
        assert_eq!(s.slice_ns(), S);
        assert_eq!(s.slice_end_ns(), Some(S));
        assert_eq!(s.pick(S, 0b11), Pick::Serve(1));
        // Growing applies to the next slice only.
        s.set_slice_ns(500);
        assert_eq!(s.slice_end_ns(), Some(2 * S));
        assert_eq!(s.pick(2 * S, 0b11), Pick::Serve(0));
        assert_eq!(s.slice_end_ns(), Some(2 * S + 500));
        // Disabling forgets the slice and falls back to arrival order.
        s.set_slice_ns(0);
        assert!(!s.is_enabled());
        assert_eq!(s.active_ctx(), None);
        assert_eq!(s.pick(2 * S + 1, 0b10), Pick::Serve(1));
        // Re-enabling starts fresh.
        s.set_slice_ns(S);
        assert_eq!(s.pick(1000, 0b11), Pick::Serve(1));
    }

    /// Makes `ctx` seeky: five requests far apart.
    fn make_seeky(s: &mut SliceSched, ctx: u32) {
        for i in 1..=5u64 {
            s.arrived(ctx, i * 1_000_000, 8);
        }
        assert_ne!(s.seeky_mask() & 1 << ctx, 0);
    }

    #[test]
    fn seeky_ctxs_share_a_slice_in_the_round_robin() {
        let mut s = enabled(S, S);
        make_seeky(&mut s, 1);
        make_seeky(&mut s, 2);
        assert_eq!(s.pick(0, 0b111), Pick::Serve(0));
        // ctx 0's slice ends; the round robin comes to ctx 1, seeky: the
        // slice is every seeky ctx's.
        assert_eq!(s.pick(S, 0b111), Pick::ServeSeeky);
        assert!(s.is_shared());
        // Service of any seeky ctx counts for the extension.
        s.serviced(2, S + 10);
        assert_eq!(s.pick(2 * S, 0b111), Pick::ServeSeeky);
        assert_eq!(s.slice_end_ns(), Some(3 * S));
        // Expired: ctx 2 had its turn in the shared slice; ctx 0 is next.
        assert_eq!(s.pick(3 * S, 0b111), Pick::Serve(0));
        assert!(!s.is_shared());
        assert_eq!(s.pick(4 * S, 0b111), Pick::ServeSeeky);
        // Only seeky ctxs pending: the shared slice follows itself.
        assert_eq!(s.pick(5 * S, 0b110), Pick::ServeSeeky);
    }

    #[test]
    fn a_shared_slice_is_not_waited_for() {
        let mut s = enabled(S, S);
        make_seeky(&mut s, 1);
        assert_eq!(s.pick(0, 0b10), Pick::ServeSeeky);
        s.serviced(1, 10);
        // The seeky ctxs ran empty: ctx 0 at once, no anticipation.
        assert_eq!(s.pick(11, 0b01), Pick::Serve(0));
    }

    #[test]
    fn an_active_ctx_that_turns_seeky_is_not_waited_for() {
        let mut s = enabled(S, S);
        assert_eq!(s.pick(0, 0b01), Pick::Serve(0));
        s.serviced(0, 10);
        // Sequential: waited for.
        assert_eq!(s.pick(11, 0b10), Pick::Wait { until_ns: 100 });
        make_seeky(&mut s, 0);
        assert_eq!(s.pick(12, 0b10), Pick::Serve(1));
    }

    #[test]
    fn sequential_ctxs_never_share() {
        let mut s = enabled(S, 0);
        for i in 0..40u64 {
            s.arrived(0, i * 8, 8);
            s.arrived(1, (1 << 30) + i * 8, 8);
        }
        assert_eq!(s.seeky_mask(), 0);
        assert_eq!(s.pick(0, 0b11), Pick::Serve(0));
        assert_eq!(s.pick(S, 0b11), Pick::Serve(1));
    }
}
