// SPDX-License-Identifier: GPL-2.0

//! rnull: a null block device driver in Rust, with shared-tag fairness
//! policies and per-hardware-queue time slices.
//!
//! The driver logic (this file, [`device`], [`host`], [`config`], the sysfs
//! files) is safe Rust; everything that touches C lives in [`kapi`].

use kernel::prelude::*;

mod attrs;
mod blk_ops;
mod config;
mod device;
mod device_data;
mod disk_model;
mod host;
mod host_attrs;
mod kapi;
mod params;
pub mod rtags;
mod spindle;

module! {
    type: RNull,
    name: "rnull",
    author: "rnull developers",
    description: "Null block device with shared-tag fairness and time slices",
    license: "GPL v2",
}

/// The loaded module. Fields drop in order: the host's sysfs files and
/// periodic tick go before the devices, the devices before the budget.
struct RNull {
    _host_attrs: Option<host_attrs::HostAttrs>,
    _tick: Option<Pin<KBox<kapi::timer::Timer<host::HostTick>>>>,
    _devices: KVec<device::Device>,
}

impl kernel::Module for RNull {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let config = config::Config::from_params()?;
        let host = host::Host::new(&config)?;
        let devices = device::create_all(&config, host.as_ref())?;
        let (tick, host_attrs) = match &host {
            Some(h) => {
                let tick = KBox::pin_init(
                    kapi::timer::Timer::new(host::HostTick(h.clone())),
                    GFP_KERNEL,
                )?;
                tick.arm_at(kapi::time::now_ns() + host::TICK_NS);
                (Some(tick), Some(host_attrs::HostAttrs::new(h)?))
            }
            None => (None, None),
        };
        pr_info!(
            "{} device(s), {} queue(s) of depth {}, irqmode {:?}, memory_backed {}, host tags {} ({:?})\n",
            config.nr_devices,
            config.submit_queues,
            config.hw_queue_depth,
            config.irqmode,
            u8::from(config.memory_backed),
            config.host_queue_depth,
            config.tag_policy,
        );
        Ok(Self {
            _host_attrs: host_attrs,
            _tick: tick,
            _devices: devices,
        })
    }
}
