// SPDX-License-Identifier: GPL-2.0

//! The names the driver is known by, chosen at build time.
//!
//! The same sources build two modules (see `rnull/Kbuild`): `rnull.ko`,
//! with rnull's own names, and `null_blk.ko`, built with
//! `--cfg null_blk_face`, which takes C null_blk's names so that tools
//! written for null_blk (blktests' `common/null_blk`) find it where they
//! look: module `null_blk` (`/sys/module/null_blk/parameters/`, log lines
//! prefixed `null_blk:`), configfs subsystem `nullb`, disks `nullbN`.
//! Every other name follows from these; no other file spells them.
//!
//! The null_blk face and C null_blk cannot be loaded together: the module
//! loader refuses a second module named `null_blk` (`-EEXIST`) before its
//! init runs, whichever came first. Were a `nullb` configfs subsystem there
//! anyway, registering it fails (`-EEXIST`) and init logs that. rnull's
//! own face shares no name with either and loads beside both.

use core::fmt;
use kernel::{c_str, str::CStr};

/// The configfs subsystem: `/sys/kernel/config/<CONFIGFS>/`.
#[cfg(not(null_blk_face))]
pub(crate) const CONFIGFS: &CStr = c_str!("rnull");
/// The configfs subsystem: `/sys/kernel/config/<CONFIGFS>/`.
#[cfg(null_blk_face)]
pub(crate) const CONFIGFS: &CStr = c_str!("nullb");

/// A disk is `<DISK_PREFIX><index>`.
#[cfg(not(null_blk_face))]
pub(crate) const DISK_PREFIX: &str = "rnullb";
/// A disk is `<DISK_PREFIX><index>`.
#[cfg(null_blk_face)]
pub(crate) const DISK_PREFIX: &str = "nullb";

/// Whether a configfs device's disk takes its directory's name, as C
/// null_blk's do (blktests makes `/sys/kernel/config/nullb/nullb_zbd_011_1`
/// and uses `/dev/nullb_zbd_011_1`). rnull's own disks are all
/// `<DISK_PREFIX><index>`.
#[cfg(not(null_blk_face))]
const NAMED_BY_DIR: bool = false;
/// Whether a configfs device's disk takes its directory's name, as C
/// null_blk's do (blktests makes `/sys/kernel/config/nullb/nullb_zbd_011_1`
/// and uses `/dev/nullb_zbd_011_1`). rnull's own disks are all
/// `<DISK_PREFIX><index>`.
#[cfg(null_blk_face)]
const NAMED_BY_DIR: bool = true;

/// Whether zoned settings null_blk adjusts at power on (`zone_nr_conv` at
/// or above the zone count, `zone_max_open` or `zone_max_active` not below
/// the sequential zones, `zone_max_open` above `zone_max_active`) are
/// adjusted with null_blk's message, as blktests expects of null_blk, or
/// refused with `EINVAL`, rnull's rule for a bad value.
#[cfg(not(null_blk_face))]
pub(crate) const ADJUSTS_ZONE_LIMITS: bool = false;
/// Whether zoned settings null_blk adjusts at power on (`zone_nr_conv` at
/// or above the zone count, `zone_max_open` or `zone_max_active` not below
/// the sequential zones, `zone_max_open` above `zone_max_active`) are
/// adjusted with null_blk's message, as blktests expects of null_blk, or
/// refused with `EINVAL`, rnull's rule for a bad value.
#[cfg(null_blk_face)]
pub(crate) const ADJUSTS_ZONE_LIMITS: bool = true;

/// A disk's name: that of device `index`, made from the configfs
/// directory `dir` if any.
pub(crate) struct DiskName<'a> {
    /// The device's index.
    pub(crate) index: u32,
    /// The configfs directory it is made from, if any.
    pub(crate) dir: Option<&'a CStr>,
}

impl fmt::Display for DiskName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.dir {
            Some(dir) if NAMED_BY_DIR => write!(f, "{dir}"),
            _ => write!(f, "{DISK_PREFIX}{}", self.index),
        }
    }
}

/// The index `N` if a disk made from the configfs directory `dir` would
/// be named `<DISK_PREFIX>N`, the name of load-time device `N`.
pub(crate) fn index_named(dir: &CStr) -> Option<u32> {
    let digits = dir.as_bytes().strip_prefix(DISK_PREFIX.as_bytes())?;
    // `nullb01` and `nullb+1` are not `nullb1`'s name (`parse` takes both).
    if !NAMED_BY_DIR
        || !digits.iter().all(u8::is_ascii_digit)
        || digits.first() == Some(&b'0') && digits.len() > 1
    {
        return None;
    }
    core::str::from_utf8(digits).ok()?.parse().ok()
}

/// The group of rnull's own per-disk files, `/sys/block/<disk>/<SYSFS_GROUP>/`.
/// The same in both faces: the files are rnull's extensions, which C
/// null_blk does not have, so no null_blk tool looks for them, and a script
/// that reads them works against either face.
pub(crate) const SYSFS_GROUP: &CStr = c_str!("rnull");

/// `kernel::module!` with the face's module name, which is also the log
/// prefix; the object's name (`rnull.o`, `null_blk.o`) gives the same name
/// to modpost's `struct module`.
#[cfg(not(null_blk_face))]
macro_rules! module {
    (type: $ty:ident, $($rest:tt)*) => {
        ::kernel::prelude::module! { type: $ty, name: "rnull", $($rest)* }
    };
}
/// `kernel::module!` with the face's module name, which is also the log
/// prefix; the object's name (`rnull.o`, `null_blk.o`) gives the same name
/// to modpost's `struct module`.
#[cfg(null_blk_face)]
macro_rules! module {
    (type: $ty:ident, $($rest:tt)*) => {
        ::kernel::prelude::module! { type: $ty, name: "null_blk", $($rest)* }
    };
}
pub(crate) use module;
