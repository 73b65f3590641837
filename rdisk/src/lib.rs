//! `rdisk`: the rnull block driver's rotational model, a modelled disk and
//! the time-slice scheduler that dispatches to it.
//!
//! This crate is 100% safe, `no_std`, allocation-free Rust. The same module
//! files are compiled into the kernel module through `#[path]` module
//! declarations (`rnull/rdisk.rs`, where they live under `crate::rdisk::`),
//! which is why the modules refer to each other through `super::` and why
//! only this file carries crate-level attributes. Time is the caller's, in
//! `u64` nanoseconds: nothing here reads a clock or shares state between
//! threads (the driver holds each disk and scheduler under its lock).
//!
//! * [`disk`]: a modelled rotational disk with a segmented read cache and
//!   a command queue (NCQ).
//! * [`segcache`]: the segments of the disk's read cache.
//! * [`slice`](mod@slice): per hardware queue time-slice scheduler.
//! * [`seek`]: which software queues seek (the slice scheduler's seek
//!   history).
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod disk;
pub mod seek;
pub mod segcache;
pub mod slice;
