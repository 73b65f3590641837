// SPDX-License-Identifier: GPL-2.0

//! The `rzone` library (`../rzone/src`), compiled into the module.
//!
//! The same files are a `no_std` crate tested in userspace with cargo and
//! loom; here they are plain modules, which is why they only refer to each
//! other through `super::`.

#[path = "../rzone/src/cond.rs"]
pub mod cond;
#[path = "../rzone/src/config.rs"]
pub mod config;
#[path = "../rzone/src/design.rs"]
pub mod design;
#[path = "../rzone/src/res.rs"]
pub mod res;
#[path = "../rzone/src/sync.rs"]
pub mod sync;
#[path = "../rzone/src/word.rs"]
pub mod word;
#[path = "../rzone/src/zones.rs"]
pub mod zones;
