// SPDX-License-Identifier: GPL-2.0

//! The abstraction layer: safe wrappers over the parts of the kernel that
//! 6.12's `kernel` crate does not cover (blk-mq beyond `queue_rq`, request
//! accessors, per-request hrtimers, module parameters, sysfs attributes,
//! XArray page storage).
//!
//! Every `unsafe` block of rnull lives under this module; the driver logic
//! above it is safe Rust.

pub(crate) mod badblocks;
pub(crate) mod batch;
pub(crate) mod chunks;
pub(crate) mod configfs;
pub(crate) mod cpu;
pub(crate) mod disk;
pub(crate) mod disk_files;
pub(crate) mod dispatch;
#[cfg(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS))]
pub(crate) mod fault;
pub(crate) mod fmt;
pub(crate) mod irq_lock;
pub(crate) mod lock_class;
pub(crate) mod modinfo;
pub(crate) mod noio;
pub(crate) mod numa;
pub(crate) mod operations;
pub(crate) mod pages;
pub(crate) mod param;
pub(crate) mod parse;
pub(crate) mod poll;
pub(crate) mod random;
pub(crate) mod ratelimit;
pub(crate) mod rcu;
pub(crate) mod request;
pub(crate) mod rq_fifo;
pub(crate) mod sysfs;
pub(crate) mod tagset;
pub(crate) mod time;
pub(crate) mod timer;
pub(crate) mod wake;
pub(crate) mod write_cache;
#[cfg(CONFIG_BLK_DEV_ZONED)]
pub(crate) mod zoned;
