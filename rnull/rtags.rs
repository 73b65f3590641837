// SPDX-License-Identifier: GPL-2.0

//! The `rtags` library (`../rtags/src`), compiled into the module.
//!
//! The same files are a `no_std` crate tested in userspace with cargo and
//! loom; here they are plain modules, which is why they only refer to each
//! other through `super::`.

#[path = "../rtags/src/bitmap.rs"]
pub mod bitmap;
#[path = "../rtags/src/clock.rs"]
pub mod clock;
#[path = "../rtags/src/design.rs"]
pub mod design;
#[path = "../rtags/src/host/mod.rs"]
pub mod host;
#[path = "../rtags/src/link.rs"]
pub mod link;
#[path = "../rtags/src/policy/mod.rs"]
pub mod policy;
#[path = "../rtags/src/queue.rs"]
pub mod queue;
#[path = "../rtags/src/sync.rs"]
pub mod sync;
