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

use crate::kapi::{disk::DISK_NAME_MAX, fmt::BufWriter};
use core::fmt::{self, Write};
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

impl DiskName<'_> {
    /// The name's bytes. A directory's name is copied as is, and, as
    /// null_blk's `snprintf()` into its `disk_name[DISK_NAME_LEN]`, cut to
    /// its first [`DISK_NAME_MAX`] bytes (so two long names may give one
    /// disk name: the second power on is refused, `EEXIST`). A
    /// `<DISK_PREFIX><index>` name is at most 8 bytes (`rnullb63`), never
    /// cut.
    pub(crate) fn bytes(&self) -> DiskNameBuf {
        let mut name = DiskNameBuf {
            buf: [0; DISK_NAME_MAX],
            len: 0,
        };
        match self.dir {
            Some(dir) if NAMED_BY_DIR => {
                let src = dir.as_bytes();
                let len = src.len().min(DISK_NAME_MAX);
                name.buf[..len].copy_from_slice(&src[..len]);
                name.len = len;
            }
            _ => {
                let mut w = BufWriter::new(&mut name.buf);
                // Cannot fail: at most 8 bytes (see above).
                let _ = write!(w, "{DISK_PREFIX}{}", self.index);
                name.len = w.len();
            }
        }
        name
    }
}

/// Escaped as the kernel's `CStr` prints: log lines only.
impl fmt::Display for DiskName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.bytes().fmt(f)
    }
}

/// A disk's name, at most [`DISK_NAME_MAX`] bytes, none of them NUL.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct DiskNameBuf {
    buf: [u8; DISK_NAME_MAX],
    len: usize,
}

impl DiskNameBuf {
    /// The name's bytes.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Printable ASCII as is, the rest escaped (`\xNN`), as `CStr`'s.
impl fmt::Display for DiskNameBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &c in self.as_bytes() {
            if (0x20..0x7f).contains(&c) {
                f.write_char(c as char)?;
            } else {
                write!(f, "\\x{c:02x}")?;
            }
        }
        Ok(())
    }
}

/// The name of the disk a configfs directory `dir` is to make, if its
/// disks take their directory's name: `mkdir` refuses it while a disk of
/// that name exists (null_blk's `nullb_group_make_group()`). Compared
/// whole, as null_blk's `strcmp()` with `disk_name`.
pub(crate) fn claimed_by_dir(dir: &CStr) -> Option<&[u8]> {
    NAMED_BY_DIR.then(|| dir.as_bytes())
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
