// SPDX-License-Identifier: GPL-2.0

//! The lifetime of rnull devices: creating the tag sets, registering each
//! disk with its data and sysfs files, and tearing them down in order.

use crate::{
    config::Config,
    device_data::{DeviceData, RNullOps},
    host_budget::Host,
    kapi::{
        disk::{Disk, DiskBuilder},
        tagset::{TagSet, TagSetConfig},
    },
};
use kernel::{prelude::*, sync::Arc};

/// A registered device, with its sysfs files (`disk_sysfs`); dropping it
/// removes them and the disk, after which no request runs.
pub(crate) struct Device {
    _disk: Disk<RNullOps>,
}

impl Device {
    /// Creates and registers `rnullb<index>` on `tagset`.
    fn new(
        index: u32,
        config: &Config,
        tagset: Arc<TagSet<RNullOps>>,
        host: Option<Arc<Host>>,
    ) -> Result<Self> {
        let data = DeviceData::new(index, config, host.clone())?;
        let mut builder = DiskBuilder::new()
            .capacity_sectors(config.capacity_sectors())
            .block_size(config.block_size)?
            .max_sectors(config.max_sectors)
            .rotational(config.rotational)
            .discard(config.memory_backed)
            .write_cache(config.memory_backed);
        if let Some(host) = host {
            builder = builder.waker(host.waker.clone(), index as usize);
        }
        let disk = builder.build(format_args!("rnullb{index}"), tagset, data)?;
        Ok(Self { _disk: disk })
    }
}

/// Creates every device of the configuration, sharing one tag set if asked.
pub(crate) fn create_all(config: &Config, host: Option<&Arc<Host>>) -> Result<KVec<Device>> {
    let tagset_config = TagSetConfig {
        nr_hw_queues: config.submit_queues,
        queue_depth: config.hw_queue_depth,
        blocking: config.blocking,
        timeout_ms: config.rq_timeout_ms,
    };
    let new_tagset = || Arc::pin_init(TagSet::new(&tagset_config), GFP_KERNEL);
    let shared = if config.shared_tags {
        Some(new_tagset()?)
    } else {
        None
    };
    let mut devices = KVec::with_capacity(config.nr_devices as usize, GFP_KERNEL)?;
    for index in 0..config.nr_devices {
        let tagset = match &shared {
            Some(t) => t.clone(),
            None => new_tagset()?,
        };
        devices.push(
            Device::new(index, config, tagset, host.cloned())?,
            GFP_KERNEL,
        )?;
    }
    Ok(devices)
}
