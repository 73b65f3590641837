// SPDX-License-Identifier: GPL-2.0

//! rnull: a null block device driver in Rust, with shared-tag fairness
//! policies and per-hardware-queue time slices.
//!
//! The driver logic (this file, [`device`], [`config`], [`attrs`]) is safe
//! Rust; everything that touches C lives in [`kapi`].

use kernel::prelude::*;

mod attrs;
mod config;
mod device;
mod kapi;
mod params;

module! {
    type: RNull,
    name: "rnull",
    author: "rnull developers",
    description: "Null block device with shared-tag fairness and time slices",
    license: "GPL v2",
}

/// The loaded module: its devices, removed on unload.
struct RNull {
    _devices: KVec<device::Device>,
}

impl kernel::Module for RNull {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let config = config::Config::from_params()?;
        let devices = device::create_all(&config)?;
        pr_info!(
            "{} device(s), {} queue(s) of depth {}, irqmode {:?}, memory_backed {}\n",
            config.nr_devices,
            config.submit_queues,
            config.hw_queue_depth,
            config.irqmode,
            u8::from(config.memory_backed)
        );
        Ok(Self { _devices: devices })
    }
}
