//! `rzone`: the zone state machine of the rnull block driver's zoned mode,
//! with the rules of C null_blk's (`drivers/block/null_blk/zoned.c`).
//!
//! This crate is 100% safe, `no_std`, allocation-free Rust. The same module
//! files are compiled into the kernel module through `#[path]` module
//! declarations (`rnull/rzone.rs`, where they live under `crate::rzone::`),
//! which is why the modules refer to each other through `super::` and why
//! only this file carries crate-level attributes.
//!
//! * [`config`]: the zoned parameters, their validation and null_blk's
//!   adjustments (or their refusal), and the resulting
//!   [`Geometry`](config::Geometry).
//! * [`cond`]: zone conditions and types (`blk_zone_cond`,
//!   `blk_zone_type` values) and the [`Status`](cond::Status) of an
//!   operation, which the driver maps to `blk_status_t`.
//! * [`word`]: one zone's state packed in a 64-bit word.
//! * [`res`]: the open and active zone counters, reserved by CAS.
//! * [`zones`]: the zones of a device and their operations: write, zone
//!   append, open, close, finish, reset, reset all, report, read limits,
//!   the read-only and offline conditions.
//! * [`design`]: why the lock-free protocol is correct (documentation
//!   only).
//! * [`sync`]: atomics facade (`core` normally, `loom` under `--cfg loom`).
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cond;
pub mod config;
pub mod design;
pub mod res;
pub mod sync;
pub mod word;
pub mod zones;
