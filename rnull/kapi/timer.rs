// SPDX-License-Identifier: GPL-2.0

//! hrtimers that call into driver code.

use core::{marker::PhantomPinned, pin::Pin};
use kernel::{bindings, init::PinInit, prelude::*, types::Opaque};

/// What a [`Timer`] does when it fires. Runs in hard interrupt context: it
/// must not sleep, and locks it takes must disable interrupts.
pub(crate) trait Fire: Send + Sync + Sized + 'static {
    /// Called on expiry; may re-arm `timer`.
    fn fire(timer: &Timer<Self>);
}

/// An hrtimer (`CLOCK_MONOTONIC`) owning its target.
///
/// # Invariants
///
/// `raw` is initialised with [`callback::<T>`] from construction until
/// drop, and is cancelled (and its callback finished) before `target` is
/// dropped.
#[pin_data(PinnedDrop)]
pub(crate) struct Timer<T: Fire> {
    #[pin]
    raw: Opaque<bindings::hrtimer>,
    #[pin]
    target: T,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: the hrtimer core synchronises the timer; `T` is `Send + Sync`.
unsafe impl<T: Fire> Send for Timer<T> {}
// SAFETY: as above.
unsafe impl<T: Fire> Sync for Timer<T> {}

impl<T: Fire> Timer<T> {
    /// A stopped timer.
    pub(crate) fn new(target: impl PinInit<T, Error>) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            raw <- Opaque::ffi_init(|t: *mut bindings::hrtimer| {
                // SAFETY: `t` is valid for writes and pinned; it is
                // initialised before the callback is set.
                unsafe {
                    bindings::hrtimer_init(
                        t,
                        bindings::CLOCK_MONOTONIC as _,
                        bindings::hrtimer_mode_HRTIMER_MODE_ABS,
                    );
                    (*t).function = Some(callback::<T>);
                }
            }),
            target <- target,
            _pin: PhantomPinned,
        })
    }

    /// The timer's target.
    pub(crate) fn target(&self) -> &T {
        &self.target
    }

    /// (Re-)arms the timer to fire at `at_ns` on `CLOCK_MONOTONIC`.
    pub(crate) fn arm_at(&self, at_ns: u64) {
        // SAFETY: the timer is initialised and pinned (type invariant);
        // re-arming an armed or running timer is allowed.
        unsafe {
            bindings::hrtimer_start_range_ns(
                self.raw.get(),
                i64::try_from(at_ns).unwrap_or(i64::MAX),
                0,
                bindings::hrtimer_mode_HRTIMER_MODE_ABS,
            )
        };
    }
}

#[pinned_drop]
impl<T: Fire> PinnedDrop for Timer<T> {
    fn drop(self: Pin<&mut Self>) {
        // `hrtimer_cancel` waits for a running callback, and retries if
        // `fire` re-armed the timer meanwhile.
        // SAFETY: the timer is initialised (type invariant).
        unsafe { bindings::hrtimer_cancel(self.raw.get()) };
    }
}

/// # Safety
///
/// Called by the hrtimer core for the timer of a live `Timer<T>`.
unsafe extern "C" fn callback<T: Fire>(raw: *mut bindings::hrtimer) -> bindings::hrtimer_restart {
    // SAFETY: `raw` is the `raw` field of a pinned, live `Timer<T>` (drop
    // cancels the timer before the memory goes away).
    let timer = unsafe { &*kernel::container_of!(raw, Timer<T>, raw) };
    T::fire(timer);
    bindings::hrtimer_restart_HRTIMER_NORESTART
}
