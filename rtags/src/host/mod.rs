//! The host-wide tag budget shared by all request queues of all disks.
//!
//! [`HostTags`] holds the tags, the sharing [`Policy`] and the waiter mask;
//! its operations are split by concern:
//!
//! * `get`: allocation, its fast path and its refusal;
//! * `put`: the free, and the hand-off to the waiters;
//! * `tick`: the periodic maintenance (idle queues, the policies' ticks);
//! * `limit`: the limit cache, the fast path's bound of every limit;
//! * `contention`: Borrow's contention (starved queues, the expiry
//!   window);
//! * `counted`: the flags paired with the host's counters.
//!
//! The policies are in [`super::policy`], one file each. How it all works
//! together, and why no wake-up is lost: [`super::design`].

mod contention;
mod counted;
mod get;
mod limit;
mod put;
mod tick;

#[cfg(all(test, not(loom)))]
pub(crate) mod testing;
#[cfg(all(test, not(loom)))]
mod tests;

pub use super::bitmap::Error;
use super::bitmap::TagBitmap;
pub use super::clock::Clock;
use super::policy::{Policy, State, States};
use super::sync::{fence, AtomicU32, AtomicU64, Ordering};
pub(crate) use contention::Contention;
pub use contention::DEFAULT_BORROW_EXPIRY_NS;
pub use put::PutRest;

/// Default idle window after which an idle queue is deactivated (100 ms).
pub const DEFAULT_IDLE_NS: u64 = 100_000_000;

/// Why [`HostTags::get`] did not return a tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The policy limit of this queue is reached.
    Limited,
    /// No free tag in the host budget.
    Exhausted,
}

impl Refusal {
    /// Short description, e.g. for debug output.
    pub fn as_str(&self) -> &'static str {
        match self {
            Refusal::Limited => "limited",
            Refusal::Exhausted => "exhausted",
        }
    }
}

/// The tag budget of one host, shared by all queues of all its disks.
pub struct HostTags {
    bitmap: TagBitmap,
    policy: AtomicU32,
    active_queues: AtomicU32,
    /// Queues ever activated (never decremented).
    joined_queues: AtomicU32,
    waiters: AtomicU64,
    starved: AtomicU32,
    /// Where Borrow's expiry window starts, plus one (`contention::stamp`):
    /// the time of the last refusal that marked a queue starved, or of the
    /// first tick after a starved queue drained; `DRAINED` from such a drain
    /// until that tick; 0 when nothing is recorded (or the window was found
    /// over, or the policy or the expiry changed since).
    last_failure: AtomicU64,
    borrow_expiry_ns: AtomicU64,
    idle_ns: AtomicU64,
    /// The limit cache, `pack(epoch, bound)`: no queue holding fewer than
    /// `bound` tags is at its policy limit; `epoch` counts the refreshes
    /// (see "The limit cache" in [`super::design`]).
    limit_cache: AtomicU64,
    /// Every policy's own state.
    policies: States,
}

impl HostTags {
    /// Creates a budget of `depth` tags (`1..=MAX_TAGS`) under `policy`.
    pub fn new(depth: u32, policy: Policy) -> Result<HostTags, Error> {
        let host = HostTags {
            bitmap: TagBitmap::new(depth)?,
            policy: AtomicU32::new(policy.as_u32()),
            active_queues: AtomicU32::new(0),
            joined_queues: AtomicU32::new(0),
            waiters: AtomicU64::new(0),
            starved: AtomicU32::new(0),
            last_failure: AtomicU64::new(0),
            borrow_expiry_ns: AtomicU64::new(DEFAULT_BORROW_EXPIRY_NS),
            idle_ns: AtomicU64::new(DEFAULT_IDLE_NS),
            // Recomputed right below (no queue is active yet: no limit
            // binds).
            limit_cache: AtomicU64::new(limit::pack(0, u32::MAX)),
            policies: States::new(),
        };
        host.refresh_limit_cache();
        Ok(host)
    }

    /// The underlying tag bitmap (read-only use, e.g. statistics).
    pub fn bitmap(&self) -> &TagBitmap {
        &self.bitmap
    }

    /// Host depth (total tag budget).
    pub fn depth(&self) -> u32 {
        self.bitmap.depth()
    }

    /// Changes the host depth at runtime (see [`TagBitmap::set_depth`]).
    ///
    /// Under `window` this moves the windows: re-run the waiting queues
    /// afterwards ([`Self::take_waiters`]).
    pub fn set_depth(&self, depth: u32) -> Result<(), Error> {
        self.bitmap.set_depth(depth)?;
        self.refresh_limit_cache();
        Ok(())
    }

    /// Tags currently held (approximate, see [`TagBitmap::in_use`]).
    pub fn in_use(&self) -> u32 {
        self.bitmap.in_use()
    }

    /// The active sharing policy.
    pub fn policy(&self) -> Policy {
        // Relaxed: the policy only selects a limit formula; a get racing
        // with set_policy may use either policy.
        Policy::from_u32(self.policy.load(Ordering::Relaxed)).unwrap_or_default()
    }

    /// Switches the sharing policy at runtime.
    ///
    /// A queue refused under the old policy may wait for what the new one
    /// does not provide: under `window` a put hands a tag only to the
    /// queues that may use it, and a queue without a window waits for the
    /// tick that gives it one, which other policies do not hand out.
    /// Re-run the waiting queues afterwards ([`Self::take_waiters`]).
    pub fn set_policy(&self, policy: Policy) {
        self.forget_window();
        // The policy's own state, published by the refresh below.
        policy.select(self);
        // Relaxed: see `policy()`.
        self.policy.store(policy.as_u32(), Ordering::Relaxed);
        self.refresh_limit_cache();
    }

    /// Takes every bit of the waiter mask, for the caller to re-run those
    /// queues: after a change of the configuration (under `window`, one
    /// that moves the windows: its policy, depth or shared percentage),
    /// when a waiting queue may no longer be handed out by a put (see
    /// [`super::policy::window`], "Why no wake-up is lost").
    pub fn take_waiters(&self) -> u64 {
        // (T) SeqCst: pairs with (W) in `get`. Either a waiter's re-check
        // reads the change made before this fence, or our swap below sees
        // its bit (set before (W)).
        fence(Ordering::SeqCst);
        // Relaxed: ordered after (T); avoids dirtying the line when idle.
        if self.waiters.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        // The RMW alone returns each bit once (see `put`). Acquire: pairs
        // with the refusal's Release `fetch_or`, as the hand-off does.
        self.waiters.swap(0, Ordering::Acquire)
    }

    /// Idle window after which [`Self::tick`] deactivates a queue, in ns.
    pub fn idle_ns(&self) -> u64 {
        // Relaxed: configuration value.
        self.idle_ns.load(Ordering::Relaxed)
    }

    /// Sets the idle window used by [`Self::tick`] (precise to one tick
    /// period, see "Idle detection" in [`super::design`]).
    pub fn set_idle_ns(&self, ns: u64) {
        // Relaxed: configuration value.
        self.idle_ns.store(ns, Ordering::Relaxed);
    }

    /// Number of active queues (may transiently over-count by the number
    /// of activations in progress, never under-counts a settled state).
    pub fn active_queues(&self) -> u32 {
        // Relaxed: used as a share divisor and for statistics only.
        self.active_queues.load(Ordering::Relaxed)
    }

    /// Number of queues ever activated: queues that joined the budget
    /// (a queue counts once, whatever its later idle periods).
    pub fn joined_queues(&self) -> u32 {
        // Relaxed: a limit input, as `active_queues`.
        self.joined_queues.load(Ordering::Relaxed)
    }

    /// Every policy's own state in this host.
    pub(crate) fn states(&self) -> &States {
        &self.policies
    }

    /// Current waiter mask (bit `index % 64` per refused queue).
    pub fn waiter_mask(&self) -> u64 {
        // Relaxed: statistics; wake-ups are handed out by `put`.
        self.waiters.load(Ordering::Relaxed)
    }

    /// Number of bits set in the waiter mask.
    pub fn waiting_queues(&self) -> u32 {
        self.waiter_mask().count_ones()
    }

    /// Number of starved queues (failed, not yet drained to zero).
    pub fn starved_queues(&self) -> u32 {
        // Relaxed: contention heuristic / statistics.
        self.starved.load(Ordering::Relaxed)
    }
}
