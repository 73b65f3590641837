// SPDX-License-Identifier: GPL-2.0

//! Proof of an RCU read-side critical section ([`ReadSide`]), for the
//! lookups whose results live only as long as one (see `pages`).
//!
//! 6.12's `kernel` crate has no RCU abstraction (later kernels have
//! `kernel::sync::rcu::Guard`), and `rcu_read_lock()` is inline C without
//! a Rust helper, so kapi cannot take the read lock itself. It makes a
//! [`ReadSide`] only where it knows the CPU is in a critical section: in
//! blk-mq's dispatch of a non-blocking tag set (which holds
//! `rcu_read_lock()`, [`super::dispatch::Dispatch::rcu`]) and under a held
//! spinlock ([`ReadSide::held_by`]): a spinlock disables preemption on the
//! kernels rnull builds for (not `PREEMPT_RT`, see `irq_lock`), and a
//! section with preemption disabled holds off grace periods as
//! `rcu_read_lock()` does.

use core::marker::PhantomData;
use kernel::sync::lock::{spinlock::SpinLockBackend, Guard};

/// While a `ReadSide<'a>` is borrowed, the current CPU is in an RCU
/// read-side critical section: whatever an RCU reader found stays valid
/// (objects freed after a grace period, `call_rcu`) at least as long as
/// the borrow, which is what a lookup returning a reference ties its
/// result to.
///
/// Not `Send`: the section is the current CPU's.
///
/// # Invariants
///
/// The CPU that made the value is in an RCU read-side critical section
/// for `'a`.
pub(crate) struct ReadSide<'a> {
    _p: PhantomData<(&'a (), *mut ())>,
}

impl<'a> ReadSide<'a> {
    /// The section the caller is in.
    ///
    /// # Safety
    ///
    /// The current CPU must be in an RCU read-side critical section for as
    /// long as the value lives (`'a`), and the value must stay on it (it is
    /// not `Send`).
    pub(super) unsafe fn new() -> Self {
        // INVARIANT: guaranteed by the caller.
        Self { _p: PhantomData }
    }

    /// The section that holding `guard`'s spinlock is.
    pub(crate) fn held_by<T: ?Sized>(_guard: &'a Guard<'_, T, SpinLockBackend>) -> Self {
        // A held `spinlock_t` disables preemption (not PREEMPT_RT, which
        // `irq_lock` refuses to build for), an RCU read-side critical
        // section until it is released, which `guard`'s borrow outlives;
        // the guard is not `Send` either.
        // SAFETY: as above.
        unsafe { Self::new() }
    }
}
