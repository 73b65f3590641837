//! Atomics facade.
//!
//! The other modules import their atomics from here, so that the crate can
//! be model-checked with `loom` by building with `RUSTFLAGS="--cfg loom"`.
//! loom atomics cannot be built in a `const` context, so [`Zone`] only has
//! a plain `fn new`.
//!
//! [`Zone`]: super::zones::Zone

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};

#[cfg(not(loom))]
pub use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
