// SPDX-License-Identifier: GPL-2.0

//! The `rdisk` library (`../rdisk/src`), compiled into the module.
//!
//! The same files are a `no_std` crate tested in userspace with cargo; here
//! they are plain modules, which is why they only refer to each other
//! through `super::`.

#[path = "../rdisk/src/disk.rs"]
pub mod disk;
#[path = "../rdisk/src/seek.rs"]
pub mod seek;
#[path = "../rdisk/src/segcache.rs"]
pub mod segcache;
#[path = "../rdisk/src/slice.rs"]
pub mod slice;
