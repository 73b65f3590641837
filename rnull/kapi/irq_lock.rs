// SPDX-License-Identifier: GPL-2.0

//! A spinlock that disables interrupts, for state shared with hrtimer
//! callbacks (hard interrupt context). 6.12's `kernel::sync::SpinLock` only
//! has the plain `spin_lock`, which would deadlock if the timer fired on a
//! CPU holding it.

use super::lock_class::LockClass;
use core::{
    cell::UnsafeCell,
    marker::{PhantomData, PhantomPinned},
    ops::{Deref, DerefMut},
};
use kernel::{bindings, c_str, ffi::c_ulong, init::PinInit, pin_init, prelude::*, types::Opaque};

// The lock is a `spinlock_t` taken through its `raw_spinlock_t`, which is
// what a `spinlock_t` is on every configuration but PREEMPT_RT (there it is
// an rt_mutex, and a sleeping lock cannot be taken in hard interrupt
// context). 6.12 has no Rust helper to initialise a bare `raw_spinlock_t`
// with its lockdep class, so rather than be silently wrong there, refuse.
#[cfg(CONFIG_PREEMPT_RT)]
compile_error!("rnull's IrqSpinLock needs a raw_spinlock_t on PREEMPT_RT; not supported");

static IRQ_LOCK_CLASS: LockClass = LockClass::new();

/// Data protected by an interrupt-disabling spinlock.
///
/// # Invariants
///
/// `lock` is initialised; `data` is only accessed through an [`IrqGuard`],
/// which exists only while `lock` is held.
#[pin_data]
pub(crate) struct IrqSpinLock<T> {
    #[pin]
    lock: Opaque<bindings::spinlock_t>,
    data: UnsafeCell<T>,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: the lock serialises all access to `data`, which may move between
// CPUs (`T: Send`).
unsafe impl<T: Send> Send for IrqSpinLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for IrqSpinLock<T> {}

impl<T> IrqSpinLock<T> {
    /// A new, unlocked lock around `data`.
    pub(crate) fn new(data: T) -> impl PinInit<Self> {
        pin_init!(Self {
            lock <- Opaque::ffi_init(|l: *mut bindings::spinlock_t| {
                // SAFETY: `l` is valid for writes and pinned.
                unsafe {
                    bindings::__spin_lock_init(
                        l,
                        c_str!("rnull_irq_lock").as_char_ptr(),
                        IRQ_LOCK_CLASS.as_ptr(),
                    )
                }
            }),
            data: UnsafeCell::new(data),
            _pin: PhantomPinned,
        })
    }

    /// Takes the lock with local interrupts disabled.
    pub(crate) fn lock(&self) -> IrqGuard<'_, T> {
        // A `spinlock_t` starts with its `raw_spinlock_t` on non-RT kernels, the only ones this
        // file builds on (see the `compile_error!` above).
        // SAFETY: the lock is initialised (type invariant) and is a `raw_spinlock_t` (above).
        let flags = unsafe { bindings::_raw_spin_lock_irqsave(self.lock.get().cast()) };
        IrqGuard {
            lock: self,
            flags,
            _not_send: PhantomData,
        }
    }
}

/// Proof that the lock is held; unlocks on drop.
///
/// Not `Send`: the lock was taken with this CPU's interrupts disabled,
/// and the unlock restores `flags` into the CPU it runs on, so it must
/// run on the one that locked (as the kernel crate's `Guard`).
pub(crate) struct IrqGuard<'a, T> {
    lock: &'a IrqSpinLock<T>,
    flags: c_ulong,
    _not_send: PhantomData<*mut ()>,
}

// SAFETY: a shared guard only lends `&T`, which other threads may use when
// `T: Sync`; the guard itself stays on its CPU (not `Send`).
unsafe impl<T: Sync> Sync for IrqGuard<'_, T> {}

// The guard must not be `Send`: the build fails if it becomes so (two
// applicable impls make the path ambiguous, as `static_assertions`'
// `assert_not_impl_any!`).
const _: fn() = || {
    trait AmbiguousIfSend<A> {
        fn check() {}
    }
    impl<X: ?Sized> AmbiguousIfSend<()> for X {}
    impl<X: ?Sized + Send> AmbiguousIfSend<u8> for X {}
    <IrqGuard<'static, u64> as AmbiguousIfSend<_>>::check();
};

impl<T> Deref for IrqGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock (type invariant of `IrqSpinLock`).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for IrqGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, and `&mut self` makes the access unique.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for IrqGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: we hold the lock, taken with these flags.
        unsafe { bindings::_raw_spin_unlock_irqrestore(self.lock.lock.get().cast(), self.flags) };
    }
}
