// SPDX-License-Identifier: GPL-2.0

//! Static lockdep class keys for the locks this layer initialises itself.

use core::{cell::UnsafeCell, mem::MaybeUninit};
use kernel::bindings;

/// A statically allocated `struct lock_class_key`.
///
/// `kernel::sync::LockClassKey::as_ptr` is crate-private in 6.12, so modules
/// outside the tree need their own.
pub(crate) struct LockClass(UnsafeCell<MaybeUninit<bindings::lock_class_key>>);

// SAFETY: lockdep only reads and writes the key through its own locking; Rust
// code never touches the contents.
unsafe impl Sync for LockClass {}

impl LockClass {
    /// An uninitialised key: lockdep expects static keys to start that way.
    pub(crate) const fn new() -> Self {
        Self(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// The raw pointer lockdep takes.
    pub(crate) fn as_ptr(&'static self) -> *mut bindings::lock_class_key {
        self.0.get().cast()
    }
}
