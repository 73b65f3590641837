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
//! would gain by choosing the nearest of several ctxs' requests. The seeky
//! ctxs take one turn of the round robin together, at the position of the
//! lowest seeky ctx: the slice goes to the group ([`Pick::ServeSeeky`],
//! [`SliceSched::shared_mask`]), whose requests the driver dispatches as
//! without slices, the drive reordering them, for one slice (extended as
//! above). The group is waited for as a whole (CFQ idled on the last queue
//! of its sync-noidle tree): when none of its ctxs has a request, the slice
//! waits as for a single ctx, so that a lone random reader at queue depth 1
//! gets more than one request per round. A ctx that turns seeky while it
//! has the disk to itself is not waited for. The group's members are taken
//! when its slice starts and only grow during it: a ctx that turns
//! sequential keeps its requests in the slice it is part of. Callers report
//! each request with [`SliceSched::arrived`].
//!
//! **While the drive works**: an exclusive choice must wait until the
//! drive is idle (its clock must not run while another ctx's requests hold
//! the drive), so a caller chooses with [`SliceSched::pick`] only when the
//! drive is idle, except that a shared slice's requests keep flowing while
//! the drive works, checked by [`SliceSched::pick_busy`], which ends the
//! slice without choosing the next. [`SliceSched::offer`] does both for
//! the caller.
//!
//! The scheduler is single threaded: the driver protects each instance with
//! a lock (rnull: its spindle's `IrqSpinLock`). Time is passed in by the caller.

use super::seek::Seeks;

/// Number of software queues (ctx) a scheduler can arbitrate.
pub const MAX_CTX: u32 = 64;

/// Maximum number of extensions: a slice lasts at most 3x its initial value.
pub const MAX_EXTENSIONS: u32 = 2;

/// Decision returned by [`SliceSched::pick`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Dispatch (one or more) requests of this ctx, once the drive is
    /// idle.
    Serve(u32),
    /// Dispatch the requests of the shared slice's ctxs
    /// ([`SliceSched::shared_mask`]), in any order: the drive's queue
    /// reorders them. While the drive works, ask [`SliceSched::pick_busy`]
    /// whether the slice goes on.
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
    /// The ctx whose turn it is (for a shared slice: the group's position
    /// in the round robin, its lowest seeky ctx).
    active: Option<u32>,
    /// The ctxs of a shared slice (0: the slice is `active`'s alone).
    members: u64,
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

/// The mask bit of `ctx` (0 for a ctx outside `0..MAX_CTX`).
fn bit(ctx: u32) -> u64 {
    1u64.checked_shl(ctx).unwrap_or(0)
}

/// What a driver may give the drive now ([`SliceSched::offer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Bit `i` set when ctx `i`'s requests may be dispatched.
    pub mask: u64,
    /// When to ask again if nothing arrives or completes before (an
    /// anticipation wait).
    pub wake_ns: Option<u64>,
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
            self.members = 0;
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

    /// Bit `i` set when ctx `i` is seeky now.
    pub fn seeky_mask(&self) -> u64 {
        self.seeks.mask()
    }

    /// Whether the current slice belongs to the seeky ctxs together.
    pub fn is_shared(&self) -> bool {
        self.active.is_some() && self.members != 0
    }

    /// The ctxs of the current shared slice (0 if there is none): what
    /// [`Pick::ServeSeeky`] serves.
    pub fn shared_mask(&self) -> u64 {
        if self.active.is_some() {
            self.members
        } else {
            0
        }
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
            self.expire(now_ns);
            if self.active.is_some() {
                let seeky = self.seeks.mask();
                if self.members != 0 {
                    // A ctx that turned seeky joins; none leaves.
                    self.members |= seeky;
                    if pending_mask & self.members != 0 {
                        return Pick::ServeSeeky;
                    }
                } else if pending_mask & bit(cur) != 0 {
                    return Pick::Serve(cur);
                }
                if pending_mask == 0 {
                    // Nothing to serve anyway: keep the slice.
                    return Pick::Idle;
                }
                // Anticipation is for requests near the head, and for the
                // group as a whole; not for a ctx that turned seeky.
                let wait = self.members != 0 || seeky & bit(cur) == 0;
                if wait && self.idle_ns != 0 {
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
        // One turn for the seeky ctxs together, at the lowest one's place.
        let seeky = self.seeks.mask();
        let group = if pending_mask & seeky != 0 {
            seeky & seeky.wrapping_neg()
        } else {
            0
        };
        let next = next_after(self.last_ctx, (pending_mask & !seeky) | group);
        self.active = Some(next);
        self.members = if bit(next) == group { seeky } else { 0 };
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
        if self.members != 0 {
            Pick::ServeSeeky
        } else {
            Pick::Serve(next)
        }
    }

    /// While the drive works: whether the shared slice goes on
    /// ([`Pick::ServeSeeky`]: dispatch its ctxs' requests) or not
    /// ([`Pick::Idle`]: dispatch nothing until the drive is idle, then
    /// [`Self::pick`]). Never chooses: an exclusive slice must not start,
    /// nor its clock run, while the group's requests hold the drive.
    pub fn pick_busy(&mut self, now_ns: u64, pending_mask: u64) -> Pick {
        if !self.is_shared() {
            return Pick::Idle;
        }
        self.expire(now_ns);
        if self.active.is_none() {
            return Pick::Idle;
        }
        self.members |= self.seeks.mask();
        if pending_mask & self.members != 0 {
            Pick::ServeSeeky
        } else {
            Pick::Idle
        }
    }

    /// What the drive may be offered at `now_ns`, given the ctxs with
    /// requests waiting (`pending_mask`) and whether the drive is idle:
    /// [`Self::pick`] when it is idle, [`Self::pick_busy`] when it works.
    /// Without slices every ctx, as in arrival order.
    pub fn offer(&mut self, now_ns: u64, pending_mask: u64, drive_idle: bool) -> Offer {
        if !self.is_enabled() {
            return Offer {
                mask: u64::MAX,
                wake_ns: None,
            };
        }
        let pick = if drive_idle {
            self.pick(now_ns, pending_mask)
        } else {
            self.pick_busy(now_ns, pending_mask)
        };
        match pick {
            Pick::Serve(ctx) => Offer {
                mask: bit(ctx),
                wake_ns: None,
            },
            Pick::ServeSeeky => Offer {
                mask: self.shared_mask(),
                wake_ns: None,
            },
            Pick::Wait { until_ns } => Offer {
                mask: 0,
                wake_ns: Some(until_ns),
            },
            Pick::Idle => Offer {
                mask: 0,
                wake_ns: None,
            },
        }
    }

    /// Ends or extends the active slice if its time is up, with at most
    /// [`MAX_EXTENSIONS`] extensions in total.
    fn expire(&mut self, now_ns: u64) {
        while self.active.is_some() && now_ns >= self.slice_end_ns {
            if self.serviced_in_period && self.extensions < MAX_EXTENSIONS {
                self.extensions = self.extensions.saturating_add(1);
                self.slice_end_ns = self.slice_end_ns.saturating_add(self.slice_ns);
                self.serviced_in_period = false;
            } else {
                self.active = None;
            }
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
    /// Only service of the active ctx (of a member, when the slice is
    /// shared) counts, for extension and anticipation; other calls are
    /// ignored. With
    /// [`SliceStart::FirstCompletion`] the first such report starts the
    /// slice clock and does not count towards an extension: it ends the
    /// switch, not a period of the slice.
    pub fn serviced(&mut self, ctx: u32, now_ns: u64) {
        let ours = if self.members != 0 {
            self.active.is_some() && self.members & bit(ctx) != 0
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

#[cfg(test)]
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

    /// Makes a seeky `ctx` sequential again: 32 requests in a row.
    fn make_sequential(s: &mut SliceSched, ctx: u32) {
        for i in 0..32u64 {
            s.arrived(ctx, (1 << 40) + i * 8, 8);
        }
        assert_eq!(s.seeky_mask() & 1 << ctx, 0);
    }

    #[test]
    fn seeky_ctxs_share_one_turn_of_the_round_robin() {
        let mut s = enabled(S, 0);
        make_seeky(&mut s, 1);
        make_seeky(&mut s, 2);
        assert_eq!(s.pick(0, 0b111), Pick::Serve(0));
        // ctx 0's slice ends; the round robin comes to the group (at ctx 1).
        assert_eq!(s.pick(S, 0b111), Pick::ServeSeeky);
        assert_eq!(s.shared_mask(), 0b110);
        // Service of any member counts for the extension.
        s.serviced(2, S + 10);
        assert_eq!(s.pick(2 * S, 0b111), Pick::ServeSeeky);
        assert_eq!(s.slice_end_ns(), Some(3 * S));
        // ctx 2 had its turn in the group's: ctx 0 is next.
        assert_eq!(s.pick(3 * S, 0b111), Pick::Serve(0));
        assert_eq!(s.shared_mask(), 0);
        assert_eq!(s.pick(4 * S, 0b111), Pick::ServeSeeky);
        // Only members pending: the group's slice follows itself.
        assert_eq!(s.pick(5 * S, 0b110), Pick::ServeSeeky);
    }

    #[test]
    fn the_groups_share_does_not_depend_on_numbering() {
        // Seeky 0 and 2, sequential 1 and 3: one turn each per round.
        let mut s = enabled(S, 0);
        make_seeky(&mut s, 0);
        make_seeky(&mut s, 2);
        let mut turns = std::vec::Vec::new();
        for i in 0..6 {
            turns.push(s.pick(i * S, 0b1111));
        }
        use Pick::*;
        assert_eq!(
            turns,
            [
                ServeSeeky,
                Serve(1),
                Serve(3),
                ServeSeeky,
                Serve(1),
                Serve(3)
            ]
        );
    }

    #[test]
    fn the_group_is_waited_for_as_a_whole() {
        let mut s = enabled(S, 20);
        make_seeky(&mut s, 1);
        assert_eq!(s.pick(0, 0b10), Pick::ServeSeeky);
        s.serviced(1, 10);
        // The group is empty, serviced 1 ns ago: wait for it, as for a ctx.
        assert_eq!(s.pick(11, 0b01), Pick::Wait { until_ns: 30 });
        assert_eq!(s.pick(12, 0b11), Pick::ServeSeeky);
        assert_eq!(s.pick(30, 0b01), Pick::Serve(0));
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
    fn a_member_that_turns_sequential_stays_for_the_slice() {
        let mut s = enabled(S, 0);
        make_seeky(&mut s, 1);
        make_seeky(&mut s, 2);
        assert_eq!(s.pick(0, 0b110), Pick::ServeSeeky);
        make_sequential(&mut s, 2);
        assert_eq!(s.pick(10, 0b100), Pick::ServeSeeky);
        assert_eq!(s.shared_mask(), 0b110);
        s.serviced(2, 20);
        // A ctx that turns seeky joins the running slice.
        make_seeky(&mut s, 3);
        assert_eq!(s.pick(30, 0b1000), Pick::ServeSeeky);
        assert_eq!(s.shared_mask(), 0b1110);
    }

    #[test]
    fn a_busy_drive_ends_a_shared_slice_without_choosing() {
        // Herrmann's clock: an exclusive choice made while the group's
        // request still held the drive would spend its slice waiting.
        let mut s = enabled(S, 0);
        s.set_start(SliceStart::Selection);
        make_seeky(&mut s, 1);
        assert_eq!(s.pick(0, 0b010), Pick::ServeSeeky);
        // Slice over while a member's request is still in the drive.
        assert_eq!(s.pick_busy(S + 10, 0b101), Pick::Idle);
        assert_eq!(s.active_ctx(), None);
        // The drive is idle at 1000: ctx 2 comes next, with a fresh clock.
        s.serviced(1, 1000);
        assert_eq!(s.pick(1000, 0b101), Pick::Serve(2));
        assert_eq!(s.slice_end_ns(), Some(1000 + S));
        // An exclusive slice is never continued while the drive works.
        assert_eq!(s.pick_busy(1010, 0b101), Pick::Idle);
        assert_eq!(s.active_ctx(), Some(2));
    }

    #[test]
    fn offer_is_pick_when_idle_and_pick_busy_when_not() {
        let mut s = SliceSched::new();
        assert_eq!(s.offer(0, 0b1, false).mask, u64::MAX);
        s.set_slice_ns(S);
        s.set_idle_ns(S);
        make_seeky(&mut s, 1);
        assert_eq!(s.offer(0, 0b11, true).mask, 0b01);
        // Exclusive: nothing while the drive works.
        assert_eq!(s.offer(1, 0b11, false).mask, 0);
        s.serviced(0, 5);
        // Anticipation: ctx 0 is waited for until its slice ends (and is
        // extended: it was served), then until 5 + S.
        let wait = |until| Offer {
            mask: 0,
            wake_ns: Some(until),
        };
        assert_eq!(s.offer(6, 0b10, true), wait(S));
        assert_eq!(s.offer(S, 0b10, true), wait(5 + S));
        assert_eq!(s.offer(5 + S, 0b10, true).mask, 0b10);
        // Shared: its requests flow while the drive works.
        assert_eq!(s.offer(6 + S, 0b10, false).mask, 0b10);
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
