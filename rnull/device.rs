// SPDX-License-Identifier: GPL-2.0

//! The lifetime of rnull devices: the [`Registry`] of the indexes in use
//! and of the module-wide tag set, creating the tag sets, registering each
//! disk with its data and sysfs files, and tearing them down in order.
//!
//! Load-time devices (`nr_devices`) and configfs devices are made the same
//! way, by [`Registry::create`], and share one index space
//! (`0..MAX_DEVICES`), so no two devices share a name ([`face::DiskName`]).

use crate::{
    config::Config,
    device_data::{Backing, DeviceData, RNullOps},
    face,
    host_budget::{Host, HostMember},
    kapi::{
        disk::{Disk, DiskBuilder},
        fmt::Errno,
        tagset::{QueueCounts, TagSet, TagSetConfig},
    },
    params::MAX_DEVICES,
};
use kernel::{
    new_mutex,
    prelude::*,
    str::CStr,
    sync::{Arc, Mutex},
};

/// The devices of the module: which indexes are taken, the tag set every
/// `shared_tags` device uses, and the load's configuration, which the
/// load-time devices use and every configfs directory starts from.
#[pin_data]
pub(crate) struct Registry {
    /// The load's configuration (the module parameters).
    pub(crate) config: Config,
    /// The host budget, when `host_queue_depth` is set.
    pub(crate) host: Option<Arc<Host>>,
    #[pin]
    state: Mutex<RegistryState>,
}

struct RegistryState {
    /// Bit `i`: index `i` is taken.
    used: u64,
    /// The disk name of each taken index (see `used`), by index; on the
    /// heap (2.5 KiB), off module init's stack.
    names: KVec<face::DiskNameBuf>,
    /// The module-wide tag set, made from the module parameters when the
    /// first `shared_tags` device needs it, kept until the module goes
    /// (as null_blk's).
    shared: Option<Arc<TagSet<RNullOps>>>,
}

/// The tag set of a device configured as `config`.
fn tagset_config(config: &Config) -> TagSetConfig {
    TagSetConfig {
        nr_hw_queues: config.submit_queues,
        poll_queues: config.poll_queues,
        queue_depth: config.hw_queue_depth,
        blocking: config.blocking,
        no_sched: config.no_sched,
        timeout_ms: config.rq_timeout_ms,
        shared_tag_bitmap: config.shared_tag_bitmap,
        numa_node: config.home_node,
    }
}

/// Why [`Registry::create`] made no device, for the caller's log line.
pub(crate) enum CreateError {
    /// The index asked for is another device's, whose disk has the name.
    IndexTaken(u32, face::DiskNameBuf),
    /// Another device's disk has the name (null_blk face: a configfs
    /// directory's name cut to `DISK_NAME_LEN`).
    NameTaken(face::DiskNameBuf),
    /// Every index is taken.
    NoFreeIndex,
    /// `shared_tags=1` with a queue shape other than the module-wide tag
    /// set's: the device's, then the set's.
    SharedShape(Shape, Shape),
    /// Allocating or registering the device failed.
    Failed(Error),
}

impl From<Error> for CreateError {
    fn from(e: Error) -> Self {
        Self::Failed(e)
    }
}

impl CreateError {
    /// The errno the caller returns.
    pub(crate) fn errno(&self) -> Error {
        match self {
            Self::IndexTaken(..) | Self::NameTaken(_) => EEXIST,
            Self::NoFreeIndex => ENOSPC,
            Self::SharedShape(..) => EINVAL,
            Self::Failed(e) => *e,
        }
    }
}

/// The cause, then the errno: `index 5 is taken: <disk> exists (-EEXIST)`.
impl core::fmt::Display for CreateError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::IndexTaken(i, name) => write!(f, "index {i} is taken: {name} exists ")?,
            Self::NameTaken(name) => write!(f, "disk {name} exists ")?,
            Self::NoFreeIndex => write!(f, "no free index: {MAX_DEVICES} devices exist ")?,
            Self::SharedShape(wanted, shared) => write!(
                f,
                "shared_tags=1 uses the module-wide tag set ({shared}, from the module parameters); this device has {wanted} "
            )?,
            // No cause of rnull's own: the errno says it.
            Self::Failed(e) => return write!(f, "{}", Errno(*e)),
        }
        write!(f, "({})", Errno(self.errno()))
    }
}

/// The disk name of load-time device `index` (the name index `index` has
/// outside configfs).
fn load_time_name(index: u32) -> face::DiskName<'static> {
    face::DiskName { index, dir: None }
}

/// What a device's tag set must share with the module-wide one to use it.
#[derive(PartialEq, Eq)]
pub(crate) struct Shape {
    submit_queues: u32,
    poll_queues: u32,
    hw_queue_depth: u32,
    blocking: bool,
    no_sched: bool,
    shared_tag_bitmap: bool,
    home_node: i32,
}

impl Shape {
    /// The shape of a tag set configured as `t`.
    fn of(t: &TagSetConfig) -> Self {
        Self {
            submit_queues: t.nr_hw_queues,
            poll_queues: t.poll_queues,
            hw_queue_depth: t.queue_depth,
            blocking: t.blocking,
            no_sched: t.no_sched,
            shared_tag_bitmap: t.shared_tag_bitmap,
            home_node: t.numa_node,
        }
    }
}

/// As the parameters are spelled: `submit_queues=1 poll_queues=1 ...`.
impl core::fmt::Display for Shape {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "submit_queues={} poll_queues={} hw_queue_depth={} blocking={} no_sched={} shared_tag_bitmap={} home_node={}",
            self.submit_queues,
            self.poll_queues,
            self.hw_queue_depth,
            u8::from(self.blocking),
            u8::from(self.no_sched),
            u8::from(self.shared_tag_bitmap),
            self.home_node
        )
    }
}

impl Registry {
    /// No device yet.
    pub(crate) fn new(config: &Config, host: Option<Arc<Host>>) -> Result<Arc<Self>> {
        let unused = face::DiskName {
            index: 0,
            dir: None,
        }
        .bytes();
        let mut names = KVec::with_capacity(MAX_DEVICES as usize, GFP_KERNEL)?;
        for _ in 0..MAX_DEVICES {
            names.push(unused, GFP_KERNEL)?;
        }
        Arc::pin_init(
            pin_init!(Self {
                config: *config,
                host,
                state <- new_mutex!(RegistryState {
                    used: 0,
                    names,
                    shared: None,
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// Creates the load-time devices `0..nr_devices-1`, all in the
    /// host budget if there is one.
    pub(crate) fn create_all(self: &Arc<Self>) -> Result<KVec<Device>> {
        let n = self.config.nr_devices;
        let mut devices = KVec::with_capacity(n as usize, GFP_KERNEL)?;
        for index in 0..n {
            // null_add_dev()'s check of each device (the load refused 1).
            crate::config::queue_mode(
                u32::try_from(crate::params::QUEUE_MODE.get()).map_err(|_| EINVAL)?,
            )?;
            let device = self
                .create(Some(index), None, &self.config, true, Backing::default())
                .map_err(|e| {
                    pr_err!("{}: {e}\n", load_time_name(index));
                    e.errno()
                })?;
            devices.push(device, GFP_KERNEL)?;
        }
        Ok(devices)
    }

    /// Creates and registers a device configured as `config`, named
    /// after `index` (or the lowest free one) and the configfs directory
    /// `dir` if any ([`face::DiskName`]), in the host budget if `host_tags`
    /// and there is one, on `backing`'s bad blocks and data.
    pub(crate) fn create(
        self: &Arc<Self>,
        index: Option<u32>,
        dir: Option<&CStr>,
        config: &Config,
        host_tags: bool,
        backing: Backing,
    ) -> Result<Device, CreateError> {
        let slot = self.take_index(index, dir)?;
        let tagset = if config.shared_tags {
            self.shared_tagset(config)?
        } else {
            Arc::pin_init(TagSet::new(&tagset_config(config)), GFP_KERNEL)?
        };
        let host = if host_tags { self.host.clone() } else { None };
        let name = face::DiskName {
            index: slot.index,
            dir,
        };
        let (disk, data) = build_disk(&name, slot.index, config, tagset, host, backing)?;
        Ok(Device {
            index: slot.index,
            disk,
            data,
            _slot: slot,
        })
    }

    /// Whether a disk named `name` exists.
    pub(crate) fn name_taken(&self, name: &[u8]) -> bool {
        self.state.lock().name_taken(name)
    }

    /// Reserves `index`, or the lowest free index, and the name of its
    /// disk, made from the configfs directory `dir` if any: another
    /// device's disk may have it (the null_blk face's long directory
    /// names cut to one, or a directory named as a load-time disk) and
    /// registering it would fail, after sysfs's warning; refused here.
    fn take_index(
        self: &Arc<Self>,
        index: Option<u32>,
        dir: Option<&CStr>,
    ) -> Result<IndexSlot, CreateError> {
        let mut state = self.state.lock();
        let index = match index {
            Some(i) if i >= MAX_DEVICES => return Err(EINVAL.into()),
            Some(i) if state.used & (1 << i) != 0 => {
                let name = state.names.get(i as usize).copied().ok_or(EINVAL)?;
                return Err(CreateError::IndexTaken(i, name));
            }
            Some(i) => i,
            None => {
                let i = (!state.used).trailing_zeros();
                if i >= MAX_DEVICES {
                    return Err(CreateError::NoFreeIndex);
                }
                i
            }
        };
        let name = face::DiskName { index, dir }.bytes();
        if state.name_taken(name.as_bytes()) {
            return Err(CreateError::NameTaken(name));
        }
        *state.names.get_mut(index as usize).ok_or(EINVAL)? = name;
        state.used |= 1 << index;
        Ok(IndexSlot {
            registry: self.clone(),
            index,
        })
    }

    /// The module-wide tag set, made from the module parameters on first
    /// use. `config` must agree with it.
    fn shared_tagset(&self, config: &Config) -> Result<Arc<TagSet<RNullOps>>, CreateError> {
        let shared = tagset_config(&self.config);
        let (wanted, module) = (Shape::of(&tagset_config(config)), Shape::of(&shared));
        if wanted != module {
            return Err(CreateError::SharedShape(wanted, module));
        }
        let mut state = self.state.lock();
        if let Some(t) = &state.shared {
            return Ok(t.clone());
        }
        let t = Arc::pin_init(TagSet::new(&shared), GFP_KERNEL)?;
        state.shared = Some(t.clone());
        Ok(t)
    }
}

impl RegistryState {
    /// Whether the disk of a taken index is named `name`.
    fn name_taken(&self, name: &[u8]) -> bool {
        self.names
            .iter()
            .enumerate()
            .any(|(i, n)| self.used & (1 << i) != 0 && n.as_bytes() == name)
    }
}

/// An index taken in the [`Registry`], given back on drop.
struct IndexSlot {
    registry: Arc<Registry>,
    index: u32,
}

impl Drop for IndexSlot {
    fn drop(&mut self) {
        self.registry.state.lock().used &= !(1 << self.index);
    }
}

/// A registered device, with its sysfs files (`disk_sysfs`); dropping it
/// removes them and the disk, after which no request runs, then frees its
/// index.
pub(crate) struct Device {
    index: u32,
    // Fields drop in order: the disk before the index it is named after.
    disk: Disk<RNullOps>,
    /// The disk's queue data.
    data: Arc<DeviceData>,
    _slot: IndexSlot,
}

impl Device {
    /// The device's index (its disk is named after it, see [`face::DiskName`]).
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// The hardware queues the device was made with (its tag set has a
    /// poll map only if it had poll queues then).
    pub(crate) fn initial_queues(&self) -> (u32, u32) {
        (self.data.config.submit_queues, self.data.config.poll_queues)
    }

    /// `zone_readonly` or `zone_offline` (`cond`) for the zone of `sector`;
    /// `None` if the device is not zoned.
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    pub(crate) fn set_zone_cond(
        &self,
        sector: u64,
        cond: crate::rzone::cond::Cond,
    ) -> Option<Result<(), crate::rzone::zones::CondError>> {
        self.data.set_zone_cond(sector, cond)
    }

    /// The device's zones, if zoned.
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    pub(crate) fn zones(&self) -> Option<Arc<crate::device_data::DevZones>> {
        self.data.zones.clone()
    }

    /// Changes the device's hardware queues while it runs
    /// (`blk_mq_update_nr_hw_queues`); its own tag set only.
    pub(crate) fn update_queues(&mut self, submit: u32, poll: u32) -> Result {
        self.disk.update_hw_queues(QueueCounts {
            default: submit,
            poll,
        })?;
        self.data.set_queue_counts(submit, poll);
        Ok(())
    }
}

/// Creates and registers the disk `name` of device `index` on `tagset`.
fn build_disk(
    name: &face::DiskName<'_>,
    index: u32,
    config: &Config,
    tagset: Arc<TagSet<RNullOps>>,
    host: Option<Arc<Host>>,
    backing: Backing,
) -> Result<(Disk<RNullOps>, Arc<DeviceData>)> {
    let link = match &host {
        Some(host) => Some(HostMember::new(host.clone(), index)?),
        None => None,
    };
    let data = DeviceData::new(index, name, config, link, backing)?;
    let mut builder = DiskBuilder::new()
        .capacity_sectors(config.capacity_sectors())
        .block_size(config.block_size)?
        .max_sectors(config.max_sectors)
        .rotational(config.rotational)
        // null_blk ignores discard in zoned mode.
        .discard(config.discard && config.zoned.is_none())
        // A write of zeroes would bypass the zones' write pointers.
        .write_zeroes(config.memory_backed && config.zoned.is_none())
        .write_cache(config.write_cache_mib() > 0)
        .fua(config.fua)
        .virt_boundary(config.virt_boundary);
    if let Some(host) = host {
        builder = builder.waker(host.waker.clone(), index as usize);
    }
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    if let Some(zones) = &data.zones {
        builder = builder.zoned::<RNullOps>(crate::zoned::limits(zones.geometry())?);
    }
    let disk = builder.build(name.bytes().as_bytes(), tagset, data.clone())?;
    Ok((disk, data))
}
