// SPDX-License-Identifier: GPL-2.0

//! rnull: a null block device driver in Rust, with shared-tag fairness
//! policies and per-hardware-queue time slices.
//!
//! The driver logic is safe Rust; everything that touches C lives in
//! [`kapi`]. One job per module:
//!
//! * [`face`]: the names the module is known by, rnull's own or C
//!   null_blk's (`null_blk.ko`, the same crate built with
//!   `--cfg null_blk_face`); the paths below are rnull's;
//! * [`config`], [`params`]: the module parameters and what a load reads
//!   from them;
//! * [`host_budget`]: the host-wide tag budget (rtags' `HostTags`) and its
//!   periodic tick; [`host_budget_sysfs`]: `/sys/module/<module>/host/`;
//! * [`device`]: creating, registering and tearing down the devices, the
//!   registry of their indexes; [`configfs`]: `/sys/kernel/config/<subsystem>/`,
//!   devices made at run time; [`device_data`]: per device, per hardware queue and per request
//!   state; [`blk_ops`]: the blk-mq callbacks; [`disk_sysfs`]:
//!   `/sys/block/<disk>/rnull/` and `mq/<n>/time_slice_us`;
//! * [`spindle`]: the rotational model's dispatcher, driving rdisk's disk
//!   model;
//! * [`rtags`]: the tag library (tag allocator, policies, bandwidth link);
//!   [`rdisk`]: the rotational model's library (disk model, slice
//!   scheduler).

use kernel::prelude::*;

mod blk_ops;
mod config;
mod configfs;
mod device;
mod device_data;
mod disk_sysfs;
mod face;
mod faults;
mod host_budget;
mod host_budget_sysfs;
mod kapi;
mod params;
pub mod rdisk;
pub mod rtags;
pub mod rzone;
mod spindle;
mod throttle;
#[cfg(CONFIG_BLK_DEV_ZONED)]
mod zoned;

face::module! {
    type: RNull,
    author: "rnull developers",
    description: "Null block device with shared-tag fairness and time slices",
    license: "GPL v2",
}

/// The loaded module. Fields drop in order: configfs first (no directory
/// exists by then: each pins the module), then the host's sysfs files and
/// periodic tick, then the load-time devices, the budget last.
struct RNull {
    _configfs: Pin<KBox<kapi::configfs::Subsystem<configfs::Devices>>>,
    _host_attrs: Option<host_budget_sysfs::HostAttrs>,
    _tick: Option<Pin<KBox<kapi::timer::Timer<host_budget::HostTick>>>>,
    _devices: KVec<device::Device>,
}

impl kernel::Module for RNull {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let config = config::Config::from_params()?;
        let host = host_budget::Host::new(&config)?;
        let registry = device::Registry::new(&config, host.clone())?;
        let devices = registry.create_all()?;
        let (tick, host_attrs) = match &host {
            Some(h) => {
                let tick = KBox::pin_init(
                    kapi::timer::Timer::new(host_budget::HostTick(h.clone())),
                    GFP_KERNEL,
                )?;
                tick.arm_at(kapi::time::now_ns() + host_budget::TICK_NS);
                (Some(tick), Some(host_budget_sysfs::HostAttrs::new(h)?))
            }
            None => (None, None),
        };
        // Last: a directory made from here on pins the module, which must
        // then load (see `kapi::configfs`).
        let configfs =
            kapi::configfs::Subsystem::new(face::CONFIGFS, configfs::Devices::new(registry))
                .inspect_err(|e| {
                    pr_err!(
                        "configfs subsystem {} not registered: {}\n",
                        face::CONFIGFS,
                        kapi::fmt::Errno(*e)
                    )
                })?;
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
            _configfs: configfs,
            _host_attrs: host_attrs,
            _tick: tick,
            _devices: devices,
        })
    }
}
