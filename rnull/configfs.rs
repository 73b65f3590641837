// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/config/<subsystem>/` (`rnull`, or `nullb` for the null_blk
//! face, see [`face`](crate::face)): devices made and configured through
//! configfs, with null_blk's attribute names and units.
//!
//! `mkdir /sys/kernel/config/<subsystem>/<name>` makes a directory whose
//! attributes start from the module parameters; `power=1` creates the disk
//! (named as [`DiskName`](crate::face::DiskName) says) from them (the same
//! way the load-time devices are made, [`Registry::create`]), `power=0`
//! removes it, and `rmdir` removes it too.
//! While the disk exists its settings are fixed: writes fail with `EBUSY`
//! (null_blk's rule), except, as in null_blk, `submit_queues` and
//! `poll_queues`, which change the running device's hardware queues
//! (`blk_mq_update_nr_hw_queues`).
//! A bad value fails with `EINVAL` and a log line naming the attribute and
//! its range, which is the module parameter's; each file's lines are
//! rate-limited on their own (printk's default limit).
//!
//! The subsystem's `features` lists the attributes that work: all of them.
//!
//! The data of a memory-backed device belongs to the directory too, as in
//! null_blk: it lasts across power cycles (what the write cache of
//! `cache_size` held and no flush wrote back does not) and goes with
//! `rmdir`.
//!
//! `badblocks` is the exception to the rule above, as in null_blk: its
//! table belongs to the directory, lasts across power cycles and changes
//! at any time (`+first-last` marks sectors bad, `-first-last` good; a read
//! lists `first count` per range); a running device fails the requests
//! that touch a bad range.

use crate::{
    config::{
        check_zoned, clamp_poll_queues, disk_params, home_node, model_poll_queues, per_node_queues,
        queue_mode, Config, IrqMode, Who,
    },
    device::{Device, Registry},
    device_data::Backing,
    face,
    faults::Faults,
    kapi::{
        badblocks::{BadBlocks, MAX_RANGES},
        configfs::{AttributeOperations, DefaultGroup, GroupOperations},
        cpu::possible_cpus,
        disk_files::FileSpec,
        fmt::{BufWriter, Errno},
        pages::PageStore,
        param::{Bytes, IntRange},
        parse::{parse_i64, strstrip, trim_newline},
        ratelimit::RateLimit,
    },
    params,
    rzone::config::ZonedParams,
};
#[cfg(CONFIG_BLK_DEV_ZONED)]
use crate::{
    device_data::DevZones,
    rzone::{cond::Cond, zones::CondError},
};
use core::fmt::Write;
use kernel::{
    c_str,
    error::Error,
    new_mutex,
    prelude::*,
    str::{CStr, CString},
    sync::{Arc, Mutex},
};

/// The data of the configfs subsystem's directory itself.
pub(crate) struct Devices {
    registry: Arc<Registry>,
}

impl Devices {
    /// The subsystem's data: every device goes through `registry`.
    pub(crate) fn new(registry: Arc<Registry>) -> Self {
        Self { registry }
    }
}

/// The subsystem's own files.
const ROOT_ATTRS: [FileSpec; 1] = [FileSpec {
    name: c_str!("features"),
    mode: 0o444,
}];

impl AttributeOperations for Devices {
    const ATTRS: &'static [FileSpec] = &ROOT_ATTRS;

    /// `features`: the device attributes, comma-separated (every one of
    /// them works; what does not exist is not an attribute).
    fn show(&self, _id: usize, out: &mut BufWriter<'_>) -> Result {
        let mut sep = "";
        for attr in TABLE.iter() {
            write!(out, "{sep}{}", attr.name).map_err(|_| EINVAL)?;
            sep = ",";
        }
        writeln!(out).map_err(|_| EINVAL)
    }
}

impl GroupOperations for Devices {
    type Child = DeviceDir;

    fn make_group(&self, name: &CStr) -> Result<impl PinInit<DeviceDir, Error>> {
        // The name of an existing disk, as null_blk's (`EEXIST`).
        if face::claimed_by_dir(name).is_some_and(|n| self.registry.name_taken(n)) {
            return Err(EEXIST);
        }
        // As given, not escaped: the null_blk face's disk takes it.
        let name = name.to_cstring()?;
        let settings = Settings::new(&self.registry);
        let badblocks = Arc::pin_init(BadBlocks::new(), GFP_KERNEL)?;
        let faults = Faults::new()?;
        Ok(try_pin_init!(DeviceDir {
            name,
            registry: self.registry.clone(),
            badblocks,
            faults,
            logs: [const { RateLimit::new() }; TABLE.len()],
            state <- new_mutex!(DirState {
                settings,
                device: None,
                store: None,
                #[cfg(CONFIG_BLK_DEV_ZONED)]
                zones: None,
            }),
        }? Error))
    }

    /// `rmdir` powers the device off.
    fn drop_item(&self, child: &DeviceDir) {
        child.state.lock().device = None;
    }

    /// The fault injection groups, where the kernel has them.
    fn default_groups<'a>(child: &'a DeviceDir, add: &mut dyn FnMut(&'a DefaultGroup)) {
        child.faults.groups(add);
    }
}

/// One device directory.
#[pin_data]
pub(crate) struct DeviceDir {
    /// The directory's name, for log lines.
    name: CString,
    registry: Arc<Registry>,
    /// `badblocks`: kept across power cycles, shared with the device.
    badblocks: Arc<BadBlocks>,
    /// `timeout_inject/`, `requeue_inject/`, `init_hctx_fault_inject/`:
    /// kept across power cycles, shared with the device (as null_blk's).
    faults: Arc<Faults>,
    /// The rate limit of each attribute's refused writes' log lines, by id.
    logs: [RateLimit; TABLE.len()],
    /// Serialises the writers of `badblocks` and the power and settings.
    #[pin]
    state: Mutex<DirState>,
}

/// The settings and, while `power=1`, the device made from them.
struct DirState {
    settings: Settings,
    device: Option<Device>,
    /// The data of a memory-backed device, made at its first power on.
    store: Option<Arc<PageStore>>,
    /// The zones of `store`'s data, as a zoned device left them: its next
    /// device of the same zone geometry takes them on.
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    zones: Option<Arc<DevZones>>,
}

/// One attribute of a device directory.
struct Attribute {
    name: &'static CStr,
    kind: Kind,
}

/// How an attribute is read and written.
enum Kind {
    /// A number kept in [`Settings`].
    Setting(Setting),
    /// `power`: 1 creates the device from the settings, 0 removes it.
    Power,
    /// `badblocks`: a table of bad ranges, changed at any time.
    BadBlocks,
    /// `zone_readonly`, `zone_offline`: write-only, a sector whose zone
    /// takes the condition; only while powered on and zoned.
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    ZoneCond(Cond),
}

/// A setting: its values, how it is shown and set, and what a write does
/// while the device is powered on.
struct Setting {
    /// The values a write may give: the module parameter's range.
    range: fn() -> &'static IntRange,
    /// The value shown.
    get: fn(&DirState) -> i64,
    /// Takes a value `range` accepted.
    set: fn(&mut Settings, i64) -> Result,
    /// While powered on: fixed (`EBUSY`, null_blk's rule), or the live
    /// hardware queue counts.
    powered: Powered,
    /// Why the load refuses a value its range accepts, if it does.
    refuse: Option<fn(&Registry, i64) -> Option<&'static str>>,
}

/// What a write to a setting does while the device is powered on.
#[derive(Clone, Copy)]
enum Powered {
    /// Refused with `EBUSY`.
    Busy,
    /// Changes the device's hardware queues ([`DeviceDir::update_queues`]).
    Queues,
}

/// A flag (0 or 1) kept in `Settings::$field`, fixed while powered on.
macro_rules! flag {
    ($field:ident) => {
        Setting {
            range: || &params::BOOL,
            get: |s| i64::from(s.settings.$field),
            set: |s, v| {
                s.$field = v != 0;
                Ok(())
            },
            powered: Powered::Busy,
            refuse: None,
        }
    };
}

/// A number in `$range` kept in `Settings::$field` (of the field's type),
/// fixed while powered on.
macro_rules! number {
    ($field:ident, $range:expr) => {
        Setting {
            range: || $range,
            get: |s| s.settings.$field as i64,
            set: |s, v| {
                s.$field = v.try_into().map_err(|_| EINVAL)?;
                Ok(())
            },
            powered: Powered::Busy,
            refuse: None,
        }
    };
}

/// The attribute `name` holding `setting`.
const fn setting(name: &'static CStr, setting: Setting) -> Attribute {
    Attribute {
        name,
        kind: Kind::Setting(setting),
    }
}

/// `host_tags=1` needs the load's host budget.
fn needs_host(registry: &Registry, v: i64) -> Option<&'static str> {
    (v != 0 && registry.host.is_none())
        .then_some("there is no host budget (load rnull with host_queue_depth)")
}

/// The zoned attributes: only where the kernel has zoned devices.
const ZONED_ATTRS: usize = if cfg!(CONFIG_BLK_DEV_ZONED) { 10 } else { 0 };

/// The attributes of a device directory, alphabetical (as `features`
/// lists them); an attribute's index here is its id.
const TABLE: [Attribute; 30 + ZONED_ATTRS] = [
    Attribute {
        name: c_str!("badblocks"),
        kind: Kind::BadBlocks,
    },
    setting(c_str!("badblocks_once"), flag!(badblocks_once)),
    setting(c_str!("badblocks_partial_io"), flag!(badblocks_partial_io)),
    setting(c_str!("blocking"), flag!(blocking)),
    setting(c_str!("blocksize"), number!(blocksize, params::BS.range())),
    setting(
        c_str!("cache_size"),
        number!(cache_size_mib, params::CACHE_SIZE.range()),
    ),
    setting(
        c_str!("completion_nsec"),
        number!(completion_nsec, params::COMPLETION_NSEC.range()),
    ),
    setting(c_str!("discard"), flag!(discard)),
    setting(c_str!("fua"), flag!(fua)),
    setting(
        c_str!("home_node"),
        number!(home_node, &params::HOME_NODE_ATTR),
    ),
    setting(
        c_str!("host_tags"),
        Setting {
            refuse: Some(needs_host),
            ..flag!(host_tags)
        },
    ),
    setting(
        c_str!("hw_queue_depth"),
        number!(hw_queue_depth, params::HW_QUEUE_DEPTH.range()),
    ),
    // -1: the lowest free index at power on; a running device shows its own.
    setting(
        c_str!("index"),
        Setting {
            range: || &params::INDEX,
            get: |s| match &s.device {
                Some(d) => d.index().into(),
                None => s.settings.index.map_or(-1, i64::from),
            },
            set: |s, v| {
                s.index = u32::try_from(v).ok();
                Ok(())
            },
            powered: Powered::Busy,
            refuse: None,
        },
    ),
    setting(
        c_str!("irqmode"),
        Setting {
            range: || params::IRQMODE.range(),
            get: |s| s.settings.irqmode as i64,
            set: |s, v| {
                s.irqmode = match v {
                    0 => IrqMode::None,
                    1 => IrqMode::Softirq,
                    _ => IrqMode::Timer,
                };
                Ok(())
            },
            powered: Powered::Busy,
            refuse: None,
        },
    ),
    setting(
        c_str!("max_sectors"),
        number!(max_sectors, params::MAX_SECTORS.range()),
    ),
    setting(c_str!("mbps"), number!(mbps, params::MBPS.range())),
    setting(c_str!("memory_backed"), flag!(memory_backed)),
    setting(c_str!("no_sched"), flag!(no_sched)),
    setting(
        c_str!("poll_queues"),
        Setting {
            powered: Powered::Queues,
            ..number!(poll_queues, params::POLL_QUEUES.range())
        },
    ),
    Attribute {
        name: c_str!("power"),
        kind: Kind::Power,
    },
    setting(
        c_str!("queue_mode"),
        number!(queue_mode, &params::QUEUE_MODE_ATTR),
    ),
    setting(c_str!("rotational"), flag!(rotational)),
    setting(c_str!("rotational_model"), flag!(rotational_model)),
    setting(c_str!("shared_tag_bitmap"), flag!(shared_tag_bitmap)),
    setting(c_str!("shared_tags"), flag!(shared_tags)),
    setting(c_str!("size"), number!(size_mib, &params::SIZE_MIB)),
    setting(
        c_str!("submit_queues"),
        Setting {
            powered: Powered::Queues,
            ..number!(submit_queues, params::SUBMIT_QUEUES.range())
        },
    ),
    setting(
        c_str!("time_slice_us"),
        number!(time_slice_us, params::TIME_SLICE_US.range()),
    ),
    setting(c_str!("use_per_node_hctx"), flag!(use_per_node_hctx)),
    setting(c_str!("virt_boundary"), flag!(virt_boundary)),
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    setting(
        c_str!("zone_append_max_sectors"),
        number!(
            zone_append_max_sectors,
            params::ZONE_APPEND_MAX_SECTORS.range()
        ),
    ),
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    setting(
        c_str!("zone_capacity"),
        number!(zone_capacity, params::ZONE_CAPACITY.range()),
    ),
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    setting(c_str!("zone_full"), flag!(zone_full)),
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    setting(
        c_str!("zone_max_active"),
        number!(zone_max_active, params::ZONE_MAX_ACTIVE.range()),
    ),
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    setting(
        c_str!("zone_max_open"),
        number!(zone_max_open, params::ZONE_MAX_OPEN.range()),
    ),
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    setting(
        c_str!("zone_nr_conv"),
        number!(zone_nr_conv, params::ZONE_NR_CONV.range()),
    ),
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    Attribute {
        name: c_str!("zone_offline"),
        kind: Kind::ZoneCond(Cond::Offline),
    },
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    Attribute {
        name: c_str!("zone_readonly"),
        kind: Kind::ZoneCond(Cond::ReadOnly),
    },
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    setting(
        c_str!("zone_size"),
        number!(zone_size, params::ZONE_SIZE.range()),
    ),
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    setting(c_str!("zoned"), flag!(zoned)),
];

/// The file specs of [`TABLE`], for [`AttributeOperations::ATTRS`]: every
/// attribute is read-write but the zone conditions, write-only.
const ATTRS: [FileSpec; TABLE.len()] = {
    let mut files = [FileSpec::new(c_str!(""), 0); TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        let mode = match TABLE[i].kind {
            #[cfg(CONFIG_BLK_DEV_ZONED)]
            Kind::ZoneCond(_) => 0o200,
            _ => 0o644,
        };
        files[i] = FileSpec::new(TABLE[i].name, mode);
        i += 1;
    }
    files
};

/// `configfs <subsystem>/<dir>/<attribute>`, in log lines.
struct AttrName<'a>(&'a CStr, &'a CStr);

impl core::fmt::Display for AttrName<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "configfs {}/{}/{}",
            crate::face::CONFIGFS,
            self.0,
            self.1
        )
    }
}

/// What a directory's attributes hold, as written (null_blk's units:
/// `size` in MiB, `blocksize` in bytes).
#[derive(Clone, Copy)]
struct Settings {
    /// `None`: the lowest free index at power on.
    index: Option<u32>,
    size_mib: u64,
    blocksize: u32,
    submit_queues: u32,
    poll_queues: u32,
    hw_queue_depth: u32,
    irqmode: IrqMode,
    completion_nsec: u64,
    memory_backed: bool,
    cache_size_mib: u64,
    discard: bool,
    fua: bool,
    rotational: bool,
    blocking: bool,
    shared_tags: bool,
    max_sectors: u32,
    no_sched: bool,
    badblocks_once: bool,
    badblocks_partial_io: bool,
    mbps: u64,
    host_tags: bool,
    rotational_model: bool,
    time_slice_us: u64,
    queue_mode: u32,
    /// As null_blk's: unsigned, `u32::MAX` for `NUMA_NO_NODE`.
    home_node: u32,
    use_per_node_hctx: bool,
    virt_boundary: bool,
    shared_tag_bitmap: bool,
    zoned: bool,
    zone_size: u64,
    zone_capacity: u64,
    zone_nr_conv: u32,
    zone_max_open: u32,
    zone_max_active: u32,
    zone_append_max_sectors: u32,
    zone_full: bool,
}

impl Settings {
    /// A new directory's: the module parameters', in the host budget if
    /// there is one (as the load-time devices).
    fn new(registry: &Registry) -> Self {
        let c = &registry.config;
        Self {
            index: None,
            size_mib: c.size_mib,
            blocksize: c.block_size,
            submit_queues: c.submit_queues,
            poll_queues: c.poll_queues,
            hw_queue_depth: c.hw_queue_depth,
            irqmode: c.irqmode,
            completion_nsec: c.completion_nsec,
            memory_backed: c.memory_backed,
            cache_size_mib: c.cache_size_mib,
            discard: c.discard,
            fua: c.fua,
            rotational: c.rotational,
            blocking: c.blocking,
            shared_tags: c.shared_tags,
            max_sectors: c.max_sectors,
            no_sched: c.no_sched,
            badblocks_once: c.badblocks_once,
            badblocks_partial_io: c.badblocks_partial_io,
            mbps: c.mbps,
            host_tags: registry.host.is_some(),
            rotational_model: c.model.is_some(),
            time_slice_us: c.time_slice_us,
            queue_mode: u32::try_from(params::QUEUE_MODE.get()).unwrap_or(params::QUEUE_MODE_MQ),
            // -1 is `u32::MAX`, as null_blk's `dev->home_node = g_home_node`.
            home_node: c.home_node as u32,
            use_per_node_hctx: c.use_per_node_hctx,
            virt_boundary: c.virt_boundary,
            shared_tag_bitmap: c.shared_tag_bitmap,
            zoned: params::ZONED.get() != 0,
            zone_size: u64::try_from(params::ZONE_SIZE.get()).unwrap_or(256),
            zone_capacity: u64::try_from(params::ZONE_CAPACITY.get()).unwrap_or(0),
            zone_nr_conv: u32::try_from(params::ZONE_NR_CONV.get()).unwrap_or(0),
            zone_max_open: u32::try_from(params::ZONE_MAX_OPEN.get()).unwrap_or(0),
            zone_max_active: u32::try_from(params::ZONE_MAX_ACTIVE.get()).unwrap_or(0),
            zone_append_max_sectors: u32::try_from(params::ZONE_APPEND_MAX_SECTORS.get())
                .unwrap_or(i32::MAX as u32),
            zone_full: params::ZONE_FULL.get() != 0,
        }
    }

    /// The configuration of the device these settings make, on top of the
    /// load's `base` (request timeout, fault injection, slice start and
    /// the model's parameters come from the module parameters). Clamps
    /// `submit_queues` and `poll_queues` as the module parameters are
    /// clamped, with a warning; refuses model parameters that do not fit
    /// together.
    fn make_config(&mut self, base: &Config, dir: &CStr) -> Result<Config> {
        self.queue_mode = queue_mode(self.queue_mode)?;
        let cpus = possible_cpus();
        if self.use_per_node_hctx {
            self.submit_queues = per_node_queues(self.submit_queues, Who(Some(dir)));
        } else if self.submit_queues > cpus {
            pr_warn!(
                "{}/{dir}: submit_queues={} is more than the {cpus} possible CPUs, using {cpus}\n",
                crate::face::CONFIGFS,
                self.submit_queues
            );
            self.submit_queues = cpus;
        }
        self.poll_queues = clamp_poll_queues(self.poll_queues, cpus, Who(Some(dir)));
        let capacity_sectors = self.size_mib << 11;
        let model = if self.rotational_model {
            if self.submit_queues != 1 {
                pr_warn!(
                    "{}/{dir}: rotational_model has one actuator: using submit_queues=1, not {}\n",
                    crate::face::CONFIGFS,
                    self.submit_queues
                );
                self.submit_queues = 1;
            }
            self.poll_queues = model_poll_queues(self.poll_queues, Who(Some(dir)));
            Some(disk_params(capacity_sectors, Who(Some(dir)))?)
        } else {
            None
        };
        let mut c = *base;
        c.submit_queues = self.submit_queues;
        c.poll_queues = self.poll_queues;
        c.hw_queue_depth = self.hw_queue_depth;
        c.block_size = self.blocksize;
        c.size_mib = self.size_mib;
        c.irqmode = self.irqmode;
        c.completion_nsec = self.completion_nsec;
        c.memory_backed = self.memory_backed;
        c.cache_size_mib = self.cache_size_mib;
        c.shared_tags = self.shared_tags;
        c.blocking = self.blocking;
        c.rotational = self.rotational || model.is_some();
        c.discard = self.discard;
        c.fua = self.fua;
        c.no_sched = self.no_sched;
        c.badblocks_once = self.badblocks_once;
        c.badblocks_partial_io = self.badblocks_partial_io;
        c.max_sectors = self.max_sectors;
        c.mbps = self.mbps;
        c.model = model;
        c.time_slice_us = self.time_slice_us;
        // An `int` to the allocators, as null_blk's; null_blk does not
        // check the directory's node, which the module parameter's check
        // keeps off allocators that would index per-node data by it.
        c.home_node = home_node(self.home_node as i32);
        self.home_node = c.home_node as u32;
        c.use_per_node_hctx = self.use_per_node_hctx;
        c.virt_boundary = self.virt_boundary;
        c.shared_tag_bitmap = self.shared_tag_bitmap;
        c.zoned = if self.zoned {
            let p = check_zoned(
                ZonedParams {
                    size_mib: self.size_mib,
                    blocksize: self.blocksize,
                    zone_size: self.zone_size,
                    zone_capacity: self.zone_capacity,
                    zone_nr_conv: self.zone_nr_conv,
                    zone_max_open: self.zone_max_open,
                    zone_max_active: self.zone_max_active,
                    zone_append_max_sectors: self.zone_append_max_sectors,
                    zone_full: self.zone_full,
                },
                Who(Some(dir)),
            )?;
            // The null_blk face shows them after power on as null_blk
            // does, adjusted (a 0 capacity becomes the zone size); rnull
            // keeps what was written, so that a later `zone_size` applies
            // to a 0 capacity too.
            if crate::face::ADJUSTS_ZONE_LIMITS {
                self.zone_capacity = p.zone_capacity;
                self.zone_nr_conv = p.zone_nr_conv;
                self.zone_max_open = p.zone_max_open;
                self.zone_max_active = p.zone_max_active;
                self.zone_append_max_sectors = p.zone_append_max_sectors;
            }
            Some(p)
        } else {
            None
        };
        // As for the module parameters' devices (`Config::from_params`).
        c.blocking = self.blocking || (self.memory_backed && self.zoned);
        Ok(c)
    }
}

impl DeviceDir {
    /// `power`: creates the device from the settings, or removes it.
    fn set_power(&self, state: &mut DirState, on: bool) -> Result {
        if on == state.device.is_some() {
            return Ok(());
        }
        if !on {
            state.device = None;
            return Ok(());
        }
        let mut settings = state.settings;
        let config = settings.make_config(&self.registry.config, &self.name)?;
        let store = match (&state.store, config.memory_backed) {
            (Some(store), _) => Some(store.clone()),
            (None, true) => Some(Arc::pin_init(PageStore::new(), GFP_KERNEL)?),
            (None, false) => None,
        };
        let backing = Backing {
            badblocks: Some(self.badblocks.clone()),
            store: store.clone(),
            faults: Some(self.faults.clone()),
            #[cfg(CONFIG_BLK_DEV_ZONED)]
            zones: state.zones.clone(),
        };
        let device = self
            .registry
            .create(
                settings.index,
                Some(&self.name),
                &config,
                settings.host_tags,
                backing,
            )
            .map_err(|e| {
                pr_err!(
                    "{}/{}: power on failed: {e}\n",
                    crate::face::CONFIGFS,
                    &*self.name
                );
                e.errno()
            })?;
        // The clamped values, as null_blk shows them.
        state.settings = settings;
        #[cfg(CONFIG_BLK_DEV_ZONED)]
        if config.memory_backed {
            state.zones = device.zones();
        }
        state.device = Some(device);
        state.store = store;
        Ok(())
    }
}

/// The last sector a bad range may name: that of the largest device.
const MAX_BAD_SECTOR: u64 = params::MAX_SECTOR;

/// What a `badblocks` write asks for.
enum BadBlocksOp {
    /// `+first-last`.
    Set(u64, u64),
    /// `-first-last`.
    Clear(u64, u64),
}

/// Parses null_blk's `badblocks` syntax: `+first-last` or `-first-last`,
/// surrounding white space ignored (`strstrip()`), each number read as
/// `kstrtoull(s, 0)`.
fn parse_badblocks(input: &[u8]) -> Option<BadBlocksOp> {
    let (&sign, rest) = strstrip(input).split_first()?;
    let dash = rest.iter().position(|&c| c == b'-')?;
    let (first, last) = (&rest[..dash], &rest[dash + 1..]);
    // No sign of their own: the range's `-` must not make one negative.
    if first.first() == Some(&b'-') || last.first() == Some(&b'-') {
        return None;
    }
    let first = u64::try_from(parse_i64(first)?).ok()?;
    let last = u64::try_from(parse_i64(last)?).ok()?;
    if first > last || last > MAX_BAD_SECTOR {
        return None;
    }
    match sign {
        b'+' => Some(BadBlocksOp::Set(first, last)),
        b'-' => Some(BadBlocksOp::Clear(first, last)),
        _ => None,
    }
}

impl DeviceDir {
    /// A write of `v` to `setting` (`submit_queues` or `poll_queues`)
    /// while powered on: changes the device's hardware queues, as
    /// null_blk's, on the device's own tag set only; a value over the
    /// possible CPUs is refused (not clamped, as null_blk).
    fn update_queues(
        &self,
        state: &mut DirState,
        setting: &Setting,
        v: i64,
        what: &AttrName<'_>,
        log: &RateLimit,
    ) -> Result {
        let mut next = state.settings;
        (setting.set)(&mut next, v)?;
        let (submit, poll) = (next.submit_queues, next.poll_queues);
        let v = u32::try_from(v).map_err(|_| EINVAL)?;
        let s = &state.settings;
        let device = state.device.as_mut().ok_or(EINVAL)?;
        let cpus = possible_cpus();
        let refused = if s.shared_tags {
            Some("the device is on the module-wide tag set (shared_tags=1)")
        } else if s.rotational_model {
            Some("rotational_model has one actuator")
        } else if v > cpus {
            Some("more than the possible CPUs")
        } else if poll > 0 && device.initial_queues().1 == 0 {
            Some("the device was made without poll queues (its tag set has no poll map)")
        } else {
            None
        };
        if let Some(why) = refused {
            // The range's low end: 1 for submit_queues, 0 for poll_queues.
            let min = u8::from(!(setting.range)().accepts(0));
            if log.allow(what) {
                pr_err!("invalid value '{v}' for {what} while powered on: {why}; must be an integer in {min}..={cpus}\n");
            }
            return Err(EINVAL);
        }
        device.update_queues(submit, poll).inspect_err(|e| {
            pr_err!(
                "{what}: changing the hardware queues to {submit} submit and {poll} poll queues failed ({})\n",
                Errno(*e)
            )
        })?;
        state.settings = next;
        Ok(())
    }

    /// A write to `badblocks`: allowed while the device runs (null_blk's
    /// way to make sectors go bad under I/O).
    fn store_badblocks(&self, what: &AttrName<'_>, log: &RateLimit, input: &[u8]) -> Result {
        let Some(op) = parse_badblocks(input) else {
            if log.allow(what) {
                pr_err!(
                    "invalid value '{}' for {what}: must be +first-last (mark bad) or -first-last (mark good), sectors with first <= last in 0..={MAX_BAD_SECTOR}\n",
                    Bytes(trim_newline(input))
                );
            }
            return Err(EINVAL);
        };
        // Writers one at a time, so a refused change restores what the
        // table had before it.
        let _state = self.state.lock();
        let done = match op {
            BadBlocksOp::Set(first, last) => self.badblocks.set(first, last),
            BadBlocksOp::Clear(first, last) => self.badblocks.clear(first, last),
        };
        done.inspect_err(|_| {
            if log.allow(what) {
                pr_err!(
                    "{what}: '{}' refused: the table is full (it holds {} ranges of at most 512 sectors); nothing changed\n",
                    Bytes(trim_newline(input)),
                    MAX_RANGES
                )
            }
        })
    }
}

impl DeviceDir {
    /// A write to `zone_readonly` or `zone_offline` (`cond`): a sector
    /// whose zone takes the condition, as null_blk's `zone_cond_store()`;
    /// refused unless the device is zoned and powered on.
    #[cfg(CONFIG_BLK_DEV_ZONED)]
    fn store_zone_cond(
        &self,
        what: &AttrName<'_>,
        log: &RateLimit,
        input: &[u8],
        cond: Cond,
    ) -> Result {
        let state = self.state.lock();
        let refuse = |why: &dyn core::fmt::Display| {
            if log.allow(what) {
                pr_err!(
                    "invalid value '{}' for {what}: {why}; nothing changed\n",
                    Bytes(trim_newline(input))
                );
            }
            Err(EINVAL)
        };
        let device = match &state.device {
            _ if !state.settings.zoned => return refuse(&"the device is not zoned"),
            None => return refuse(&"the device is not yet powered"),
            Some(device) => device,
        };
        let Some(sector) = parse_i64(strstrip(input)).and_then(|v| u64::try_from(v).ok()) else {
            return refuse(&"must be a sector, an integer from 0");
        };
        let size = state.settings.size_mib << 11;
        match device.set_zone_cond(sector, cond) {
            None => refuse(&"the device is not zoned"),
            Some(Ok(())) => Ok(()),
            Some(Err(CondError::Busy)) => Err(EBUSY),
            Some(Err(e @ CondError::OutOfRange)) => refuse(&format_args!(
                "{e}: must be a sector of the device, 0..={}",
                size - 1
            )),
            Some(Err(e @ CondError::Conventional)) => refuse(&format_args!(
                "{e}: must be a sector of a sequential zone, {}..={}",
                state.settings.zone_nr_conv as u64 * (state.settings.zone_size << 11),
                size - 1
            )),
            Some(Err(e)) => refuse(&e),
        }
    }
}

impl AttributeOperations for DeviceDir {
    const ATTRS: &'static [FileSpec] = &ATTRS;

    fn show(&self, id: usize, out: &mut BufWriter<'_>) -> Result {
        let v = match &TABLE.get(id).ok_or(EINVAL)?.kind {
            Kind::BadBlocks => return self.badblocks.show(out),
            Kind::Power => i64::from(self.state.lock().device.is_some()),
            Kind::Setting(setting) => (setting.get)(&self.state.lock()),
            #[cfg(CONFIG_BLK_DEV_ZONED)]
            Kind::ZoneCond(_) => return Err(EINVAL),
        };
        writeln!(out, "{v}").map_err(|_| EINVAL)
    }

    fn store(&self, id: usize, input: &[u8]) -> Result {
        let attr = TABLE.get(id).ok_or(EINVAL)?;
        let log = self.logs.get(id).ok_or(EINVAL)?;
        let what = AttrName(&self.name, attr.name);
        let setting = match &attr.kind {
            Kind::BadBlocks => return self.store_badblocks(&what, log, input),
            Kind::Power => {
                let on = params::BOOL.parse(&what, log, input)? != 0;
                return self.set_power(&mut self.state.lock(), on);
            }
            Kind::Setting(setting) => setting,
            #[cfg(CONFIG_BLK_DEV_ZONED)]
            Kind::ZoneCond(cond) => return self.store_zone_cond(&what, log, input, *cond),
        };
        let v = (setting.range)().parse(&what, log, input)?;
        let mut state = self.state.lock();
        if state.device.is_some() {
            return match setting.powered {
                Powered::Busy => Err(EBUSY),
                Powered::Queues => self.update_queues(&mut state, setting, v, &what, log),
            };
        }
        if let Some(why) = setting.refuse.and_then(|refuse| refuse(&self.registry, v)) {
            if log.allow(&what) {
                pr_err!("invalid value {v} for {what}: {why}\n");
            }
            return Err(EINVAL);
        }
        (setting.set)(&mut state.settings, v)
    }
}
