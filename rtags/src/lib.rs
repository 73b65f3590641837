//! `rtags`: host-wide shared tag budget for the rnull block driver.
//!
//! This crate is 100% safe, `no_std`, allocation-free Rust. The same module
//! files are compiled into the kernel module through `#[path]` module
//! declarations (where they live under `crate::rtags::`), which is why the
//! modules refer to each other through `super::` and why only this file
//! carries crate-level attributes.
//!
//! * [`sync`]: atomics facade (`core` normally, `loom` under `--cfg loom`).
//! * [`clock`]: the [`Clock`] trait: time sources read only when needed.
//! * [`bitmap`]: sbitmap-like lock-free tag allocator.
//! * [`queue`]: per request-queue accounting.
//! * [`policy`]: the tag sharing policies, one file each.
//! * [`host`]: the host-wide budget shared by all queues.
//! * [`design`]: how the budget works, and why it is correct (documentation
//!   only).
//! * [`link`]: a link of limited bandwidth requests queue behind.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bitmap;
pub mod clock;
pub mod design;
pub mod host;
pub mod link;
pub mod policy;
pub mod queue;
pub mod sync;

pub use clock::Clock;
