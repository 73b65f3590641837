// SPDX-License-Identifier: GPL-2.0

//! A periodic hrtimer calling into driver code.

use core::{marker::PhantomPinned, pin::Pin};
use kernel::{bindings, init::PinInit, pin_init, prelude::*, types::Opaque};

/// Work done on every period. Runs in hard interrupt context: it must not
/// sleep or take locks that are not irq-safe.
pub(crate) trait Tick: Send + Sync + 'static {
    /// Called once per period.
    fn tick(&self);
}

/// An hrtimer that calls `target.tick()` every `period_ns`.
///
/// # Invariants
///
/// `timer` is initialised with [`callback::<T>`] from construction until
/// drop, and is cancelled (and its callback finished) before `target` is
/// dropped.
#[pin_data(PinnedDrop)]
pub(crate) struct Periodic<T: Tick> {
    #[pin]
    timer: Opaque<bindings::hrtimer>,
    period_ns: i64,
    target: T,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: the hrtimer core synchronises the timer; `T` is `Send + Sync`.
unsafe impl<T: Tick> Send for Periodic<T> {}
// SAFETY: as above.
unsafe impl<T: Tick> Sync for Periodic<T> {}

impl<T: Tick> Periodic<T> {
    /// A stopped timer; use [`Periodic::start`].
    pub(crate) fn new(period_ns: u64, target: T) -> impl PinInit<Self> {
        pin_init!(Self {
            timer <- Opaque::ffi_init(|t: *mut bindings::hrtimer| {
                // SAFETY: `t` is valid for writes and pinned; it is
                // initialised before the callback is set.
                unsafe {
                    bindings::hrtimer_init(
                        t,
                        bindings::CLOCK_MONOTONIC as _,
                        bindings::hrtimer_mode_HRTIMER_MODE_REL,
                    );
                    (*t).function = Some(callback::<T>);
                }
            }),
            period_ns: i64::try_from(period_ns).unwrap_or(i64::MAX),
            target,
            _pin: PhantomPinned,
        })
    }

    /// Arms the timer for the first period.
    pub(crate) fn start(self: Pin<&Self>) {
        // SAFETY: the timer is initialised and pinned (type invariant).
        unsafe {
            bindings::hrtimer_start_range_ns(
                self.timer.get(),
                self.period_ns,
                0,
                bindings::hrtimer_mode_HRTIMER_MODE_REL,
            )
        };
    }
}

#[pinned_drop]
impl<T: Tick> PinnedDrop for Periodic<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: the timer is initialised; `hrtimer_cancel` waits for a
        // running callback, so `target` is unused once it returns.
        unsafe { bindings::hrtimer_cancel(self.timer.get()) };
    }
}

/// # Safety
///
/// Called by the hrtimer core for the timer of a live `Periodic<T>`.
unsafe extern "C" fn callback<T: Tick>(timer: *mut bindings::hrtimer) -> bindings::hrtimer_restart {
    // SAFETY: `timer` is the `timer` field of a pinned, live `Periodic<T>`
    // (the drop cancels the timer before the memory goes away).
    let this = unsafe { &*kernel::container_of!(timer, Periodic<T>, timer) };
    this.target.tick();
    // SAFETY: forwarding the timer from its own callback is allowed.
    unsafe {
        bindings::hrtimer_forward(timer, bindings::ktime_get(), this.period_ns);
    }
    bindings::hrtimer_restart_HRTIMER_RESTART
}
