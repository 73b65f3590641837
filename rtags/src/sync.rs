//! Atomics facade.
//!
//! Every other module imports its atomics from here, so that the whole
//! library can be model-checked with `loom` by building with
//! `RUSTFLAGS="--cfg loom"`. Note that loom atomics cannot be built in a
//! `const` context, so the types in this crate only offer plain `fn new`.

#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

#[cfg(not(loom))]
pub use core::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
