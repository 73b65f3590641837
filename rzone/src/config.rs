//! The zoned parameters, with null_blk's names, units, defaults and rules
//! (`null_init_zoned_dev()` in `drivers/block/null_blk/zoned.c`).

use core::fmt;

/// The largest zone, in MiB: a write pointer offset must fit in the
/// [`word`](super::word)'s 48 bits, short of its invalid value.
pub const MAX_ZONE_SIZE_MIB: u64 = 1 << 36;

/// The largest `zone_max_open` and `zone_max_active` (after null_blk's
/// adjustments): the [`res`](super::res) counters are 16 bits wide.
pub const MAX_ZONE_LIMIT: u32 = u16::MAX as u32;

/// The zoned parameters of one device, as the module parameters and the
/// configfs attributes give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZonedParams {
    /// The device's size in MiB (null_blk's `size`).
    pub size_mib: u64,
    /// The device's logical block size in bytes (`blocksize`).
    pub blocksize: u32,
    /// `zone_size`: MiB, a power of two, at most the device size.
    pub zone_size: u64,
    /// `zone_capacity`: MiB, at most `zone_size`; 0 means `zone_size`.
    pub zone_capacity: u64,
    /// `zone_nr_conv`: conventional zones at the start of the device;
    /// at least one sequential zone is kept.
    pub zone_nr_conv: u32,
    /// `zone_max_open`: 0 is no limit.
    pub zone_max_open: u32,
    /// `zone_max_active`: 0 is no limit.
    pub zone_max_active: u32,
    /// `zone_append_max_sectors`: 512-byte sectors, 0 to have the block
    /// layer emulate zone append with writes.
    pub zone_append_max_sectors: u32,
    /// `zone_full`: sequential zones start full.
    pub zone_full: bool,
}

impl ZonedParams {
    /// null_blk's defaults for a device of `size_mib` MiB with blocks of
    /// `blocksize` bytes (`zone_size=256`, `zone_append_max_sectors` its
    /// `INT_MAX`).
    pub fn new(size_mib: u64, blocksize: u32) -> Self {
        ZonedParams {
            size_mib,
            blocksize,
            zone_size: 256,
            zone_capacity: 0,
            zone_nr_conv: 0,
            zone_max_open: 0,
            zone_max_active: 0,
            zone_append_max_sectors: i32::MAX as u32,
            zone_full: false,
        }
    }

    /// Checks the parameters and derives the geometry, with null_blk's
    /// rules in its order. A value null_blk adjusts (rather than refuses)
    /// is adjusted and reported to `note`, whose [`Adjustment`] prints
    /// null_blk's message. An error names the parameter and says why.
    pub fn validate(&self, note: impl FnMut(Adjustment)) -> Result<Geometry, ConfigError> {
        self.check(Some(note))
    }

    /// As [`validate`](Self::validate), but a value null_blk would adjust
    /// is refused: [`ConfigError::OutOfRange`] names the parameter, its
    /// range and the value.
    pub fn validate_strict(&self) -> Result<Geometry, ConfigError> {
        self.check(None::<fn(Adjustment)>)
    }

    /// The rules: null_blk's adjustments are made and reported to `note`,
    /// or refused without one.
    fn check(&self, mut note: Option<impl FnMut(Adjustment)>) -> Result<Geometry, ConfigError> {
        if self.zone_size == 0 || !self.zone_size.is_power_of_two() {
            return Err(ConfigError::ZoneSizeNotPowerOfTwo {
                zone_size: self.zone_size,
                size: self.size_mib,
            });
        }
        if self.zone_size > self.size_mib {
            return Err(ConfigError::ZoneSizeAboveDevice {
                zone_size: self.zone_size,
                size: self.size_mib,
            });
        }
        let zone_capacity = if self.zone_capacity == 0 {
            self.zone_size
        } else {
            self.zone_capacity
        };
        if zone_capacity > self.zone_size {
            return Err(ConfigError::CapacityAboveSize {
                zone_capacity,
                zone_size: self.zone_size,
            });
        }
        if zone_capacity != self.zone_size && self.size_mib & (self.zone_size - 1) != 0 {
            return Err(ConfigError::SmallerLastZone {
                zone_capacity,
                zone_size: self.zone_size,
                size: self.size_mib,
            });
        }
        if self.zone_size > MAX_ZONE_SIZE_MIB {
            return Err(ConfigError::ZoneSizeTooLarge(self.zone_size));
        }
        let dev_sectors = self
            .size_mib
            .checked_mul(MIB_SECTORS)
            .ok_or(ConfigError::SizeTooLarge(self.size_mib))?;
        let zone_sectors = self.zone_size * MIB_SECTORS;
        let capacity_sectors = zone_capacity * MIB_SECTORS;
        let nr_zones = dev_sectors.div_ceil(zone_sectors);
        let nr_zones = u32::try_from(nr_zones).map_err(|_| ConfigError::TooManyZones(nr_zones))?;

        // A value null_blk adjusts: adjusted with a note, or refused.
        let mut adjust = |a: Adjustment, refusal: ConfigError| match &mut note {
            Some(note) => {
                note(a);
                Ok(())
            }
            None => Err(refusal),
        };
        let mut nr_conv = self.zone_nr_conv;
        if nr_conv >= nr_zones {
            adjust(
                Adjustment::NrConv(nr_zones - 1),
                ConfigError::OutOfRange {
                    param: "zone_nr_conv",
                    value: nr_conv,
                    max: nr_zones - 1,
                    bound: Bound::Zones(nr_zones),
                },
            )?;
            nr_conv = nr_zones - 1;
        }
        let block_sectors = u64::from((self.blocksize >> 9).max(1));
        let append = u64::from(self.zone_append_max_sectors) / block_sectors * block_sectors;
        // At most the zone capacity, which is at least one block here.
        let append_max_sectors = append.min(capacity_sectors) as u32;

        let nr_seq = nr_zones - nr_conv;
        let mut max_active = self.zone_max_active;
        if max_active >= nr_seq {
            adjust(
                Adjustment::MaxActiveDisabled,
                ConfigError::OutOfRange {
                    param: "zone_max_active",
                    value: max_active,
                    max: nr_seq - 1,
                    bound: Bound::SeqZones(nr_seq),
                },
            )?;
            max_active = 0;
        }
        let mut max_open = self.zone_max_open;
        if max_active != 0 && max_open > max_active {
            adjust(
                Adjustment::MaxOpenToActive(max_active),
                ConfigError::OutOfRange {
                    param: "zone_max_open",
                    value: max_open,
                    max: max_active,
                    bound: Bound::MaxActive,
                },
            )?;
            max_open = max_active;
        } else if max_open >= nr_seq {
            adjust(
                Adjustment::MaxOpenDisabled,
                ConfigError::OutOfRange {
                    param: "zone_max_open",
                    value: max_open,
                    max: nr_seq - 1,
                    bound: Bound::SeqZones(nr_seq),
                },
            )?;
            max_open = 0;
        }
        if max_open > MAX_ZONE_LIMIT {
            return Err(ConfigError::LimitTooLarge("zone_max_open", max_open));
        }
        if max_active > MAX_ZONE_LIMIT {
            return Err(ConfigError::LimitTooLarge("zone_max_active", max_active));
        }
        Ok(Geometry {
            dev_sectors,
            zone_sectors,
            zone_shift: zone_sectors.trailing_zeros(),
            capacity_sectors,
            nr_zones,
            nr_conv,
            max_open,
            max_active,
            append_max_sectors,
            full: self.zone_full,
        })
    }
}

/// Sectors in a MiB.
const MIB_SECTORS: u64 = (1 << 20) >> 9;

/// A value null_blk adjusts at power-on rather than refuses. `Display`
/// prints null_blk's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adjustment {
    /// `zone_nr_conv` was at least the number of zones: one sequential
    /// zone is kept.
    NrConv(u32),
    /// `zone_max_active` was at least the number of sequential zones.
    MaxActiveDisabled,
    /// `zone_max_open` was above `zone_max_active`.
    MaxOpenToActive(u32),
    /// `zone_max_open` was at least the number of sequential zones.
    MaxOpenDisabled,
}

impl fmt::Display for Adjustment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Adjustment::NrConv(n) => write!(f, "changed the number of conventional zones to {n}"),
            Adjustment::MaxActiveDisabled => {
                f.write_str("zone_max_active limit disabled, limit >= zone count")
            }
            Adjustment::MaxOpenToActive(n) => {
                write!(f, "changed the maximum number of open zones to {n}")
            }
            Adjustment::MaxOpenDisabled => {
                f.write_str("zone_max_open limit disabled, limit >= zone count")
            }
        }
    }
}

/// What bounds a zone count or limit: the upper end of its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Below the device's zones (`zone_nr_conv`: one stays sequential).
    Zones(u32),
    /// Below the device's sequential zones (a limit that can bind).
    SeqZones(u32),
    /// At most `zone_max_active`.
    MaxActive,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Zones(n) => write!(f, "fewer than the device's {n} zones, one stays sequential"),
            Bound::SeqZones(n) => {
                write!(f, "0 = no limit, else below the {n} sequential zones")
            }
            Bound::MaxActive => f.write_str("0 = no limit, else at most zone_max_active"),
        }
    }
}

/// Why a zoned configuration is refused. `Display` names the parameter
/// and, where null_blk has one, starts with null_blk's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `zone_size` is 0 or not a power of two.
    ZoneSizeNotPowerOfTwo {
        /// `zone_size`, MiB.
        zone_size: u64,
        /// The device size, MiB.
        size: u64,
    },
    /// `zone_size` is larger than the device.
    ZoneSizeAboveDevice {
        /// `zone_size`, MiB.
        zone_size: u64,
        /// The device size, MiB.
        size: u64,
    },
    /// `zone_capacity` is larger than `zone_size`.
    CapacityAboveSize {
        /// `zone_capacity`, MiB.
        zone_capacity: u64,
        /// `zone_size`, MiB.
        zone_size: u64,
    },
    /// A zone capacity below the zone size with a smaller last zone, which
    /// no real device has.
    SmallerLastZone {
        /// `zone_capacity`, MiB.
        zone_capacity: u64,
        /// `zone_size`, MiB.
        zone_size: u64,
        /// The device size, MiB.
        size: u64,
    },
    /// `zone_size` above [`MAX_ZONE_SIZE_MIB`].
    ZoneSizeTooLarge(u64),
    /// The device size does not fit in sectors.
    SizeTooLarge(u64),
    /// More zones than a `u32` counts.
    TooManyZones(u64),
    /// A zone limit above [`MAX_ZONE_LIMIT`]: its name and value.
    LimitTooLarge(&'static str, u32),
    /// A value null_blk adjusts, refused
    /// ([`ZonedParams::validate_strict`]): `param` is `value`, not in
    /// `0..=max`.
    OutOfRange {
        /// The parameter's name.
        param: &'static str,
        /// Its value.
        value: u32,
        /// The top of its range.
        max: u32,
        /// What sets `max`.
        bound: Bound,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ConfigError::ZoneSizeNotPowerOfTwo { zone_size, size } => write!(
                f,
                "zone_size must be non-zero power-of-two: zone_size={zone_size} MB, must be a power of two in 1..={size} (MB, the device size)"
            ),
            ConfigError::ZoneSizeAboveDevice { zone_size, size } => write!(
                f,
                "zone_size ({zone_size} MB) larger than device capacity ({size} MB): zone_size must be a power of two in 1..={size} (MB)"
            ),
            ConfigError::CapacityAboveSize {
                zone_capacity,
                zone_size,
            } => write!(
                f,
                "zone capacity ({zone_capacity} MB) larger than zone size ({zone_size} MB): zone_capacity must be in 0..={zone_size} (MB, 0 = zone_size)"
            ),
            ConfigError::SmallerLastZone {
                zone_capacity,
                zone_size,
                size,
            } => write!(
                f,
                "A smaller last zone is not allowed with zone capacity smaller than zone size: zone_capacity={zone_capacity} MB below zone_size={zone_size} MB needs a size that is a multiple of zone_size, not {size} MB"
            ),
            ConfigError::ZoneSizeTooLarge(v) => write!(
                f,
                "zone_size ({v} MB) above the supported {MAX_ZONE_SIZE_MIB} MB"
            ),
            ConfigError::SizeTooLarge(v) => write!(f, "size ({v} MB) too large in sectors"),
            ConfigError::TooManyZones(n) => {
                write!(f, "zone_size too small: {n} zones, at most {}", u32::MAX)
            }
            ConfigError::LimitTooLarge(name, v) => {
                write!(f, "{name} ({v}) above the supported {MAX_ZONE_LIMIT}")
            }
            ConfigError::OutOfRange {
                param,
                value,
                max,
                bound,
            } => write!(f, "{param}={value} out of range 0..={max} ({bound})"),
        }
    }
}

/// A validated zoned configuration, in sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// The device's capacity.
    pub dev_sectors: u64,
    /// Zone size (a power of two): the queue's `chunk_sectors`.
    pub zone_sectors: u64,
    /// `log2(zone_sectors)`.
    pub zone_shift: u32,
    /// Capacity of a full-sized sequential zone.
    pub capacity_sectors: u64,
    /// Zones on the device; the last may be smaller.
    pub nr_zones: u32,
    /// Conventional zones, the first ones; fewer than `nr_zones`.
    pub nr_conv: u32,
    /// `max_open_zones`, 0 for no limit.
    pub max_open: u32,
    /// `max_active_zones`, 0 for no limit.
    pub max_active: u32,
    /// `max_zone_append_sectors`, 0 to have zone append emulated.
    pub append_max_sectors: u32,
    /// Sequential zones start full.
    pub full: bool,
}

impl Geometry {
    /// The zone `sector` is in (maybe `nr_zones` or above: past the end).
    pub fn zone_no(&self, sector: u64) -> u64 {
        sector >> self.zone_shift
    }

    /// The first sector of zone `zno`.
    pub fn zone_start(&self, zno: u32) -> u64 {
        u64::from(zno) << self.zone_shift
    }

    /// The length of zone `zno`: the zone size, less for a smaller last
    /// zone.
    pub fn zone_len(&self, zno: u32) -> u64 {
        let start = self.zone_start(zno);
        self.zone_sectors.min(self.dev_sectors - start)
    }

    /// The capacity of zone `zno`: its length if conventional.
    pub fn zone_capacity(&self, zno: u32) -> u64 {
        let len = self.zone_len(zno);
        if zno < self.nr_conv {
            len
        } else {
            len.min(self.capacity_sectors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(p: &ZonedParams) -> Result<(Geometry, Vec<Adjustment>), ConfigError> {
        let mut notes = Vec::new();
        p.validate(|a| notes.push(a)).map(|g| (g, notes))
    }

    #[test]
    fn defaults() {
        let (g, notes) = geo(&ZonedParams::new(1024, 512)).unwrap();
        assert!(notes.is_empty());
        assert_eq!(g.nr_zones, 4);
        assert_eq!(g.zone_sectors, 256 * 2048);
        assert_eq!(g.zone_shift, 19);
        assert_eq!(g.capacity_sectors, g.zone_sectors);
        assert_eq!(g.append_max_sectors as u64, g.zone_sectors);
        assert_eq!((g.max_open, g.max_active, g.nr_conv), (0, 0, 0));
    }

    #[test]
    fn refusals_name_the_parameter() {
        let base = ZonedParams::new(1024, 512);
        let cases = [
            (
                ZonedParams {
                    zone_size: 3,
                    ..base
                },
                "zone_size",
            ),
            (
                ZonedParams {
                    zone_size: 0,
                    ..base
                },
                "zone_size",
            ),
            (
                ZonedParams {
                    zone_size: 2048,
                    ..base
                },
                "zone_size",
            ),
            (
                ZonedParams {
                    zone_capacity: 512,
                    ..base
                },
                "zone capacity",
            ),
            (
                ZonedParams {
                    size_mib: 1000,
                    zone_capacity: 128,
                    ..base
                },
                "smaller last zone",
            ),
        ];
        for (p, word) in cases {
            let e = geo(&p).unwrap_err();
            let msg = format!("{e}");
            assert!(msg.contains(word), "{p:?}: {msg}");
        }
    }

    #[test]
    fn smaller_last_zone() {
        let p = ZonedParams {
            size_mib: 1000,
            ..ZonedParams::new(1000, 512)
        };
        let (g, _) = geo(&p).unwrap();
        assert_eq!(g.nr_zones, 4);
        assert_eq!(g.zone_len(3), (1000 - 768) * 2048);
        assert_eq!(g.zone_capacity(3), g.zone_len(3));
        assert_eq!(g.zone_len(0), g.zone_sectors);
    }

    #[test]
    fn null_blk_adjustments() {
        let base = ZonedParams::new(1024, 4096);
        let (g, n) = geo(&ZonedParams {
            zone_nr_conv: 9,
            ..base
        })
        .unwrap();
        assert_eq!(g.nr_conv, 3);
        assert_eq!(n, [Adjustment::NrConv(3)]);
        assert_eq!(
            format!("{}", n[0]),
            "changed the number of conventional zones to 3"
        );

        let (g, n) = geo(&ZonedParams {
            zone_size: 64,
            zone_max_active: 4,
            zone_max_open: 6,
            ..base
        })
        .unwrap();
        assert_eq!((g.max_open, g.max_active), (4, 4));
        assert_eq!(n, [Adjustment::MaxOpenToActive(4)]);

        let (g, n) = geo(&ZonedParams {
            zone_size: 64,
            zone_nr_conv: 2,
            zone_max_active: 14,
            zone_max_open: 14,
            ..base
        })
        .unwrap();
        assert_eq!((g.max_open, g.max_active), (0, 0));
        assert_eq!(
            n,
            [Adjustment::MaxActiveDisabled, Adjustment::MaxOpenDisabled]
        );

        // Append limit: blocks, then at most the capacity.
        let (g, _) = geo(&ZonedParams {
            zone_append_max_sectors: 13,
            ..base
        })
        .unwrap();
        assert_eq!(g.append_max_sectors, 8);
        let (g, _) = geo(&ZonedParams {
            zone_capacity: 1,
            ..base
        })
        .unwrap();
        assert_eq!(g.append_max_sectors, 2048);
    }

    #[test]
    fn strict_refuses_what_null_blk_adjusts() {
        let base = ZonedParams {
            zone_size: 64,
            ..ZonedParams::new(1024, 512)
        };
        // 16 zones; 2 conventional leave 14 sequential.
        let cases = [
            (
                ZonedParams {
                    zone_nr_conv: 100,
                    ..base
                },
                "zone_nr_conv=100 out of range 0..=15 (fewer than the device's 16 zones",
            ),
            (
                ZonedParams {
                    zone_nr_conv: 2,
                    zone_max_active: 14,
                    ..base
                },
                "zone_max_active=14 out of range 0..=13 (0 = no limit, else below the 14 sequential zones)",
            ),
            (
                ZonedParams {
                    zone_nr_conv: 2,
                    zone_max_open: 100,
                    ..base
                },
                "zone_max_open=100 out of range 0..=13 (",
            ),
            (
                ZonedParams {
                    zone_max_active: 4,
                    zone_max_open: 6,
                    ..base
                },
                "zone_max_open=6 out of range 0..=4 (0 = no limit, else at most zone_max_active)",
            ),
        ];
        for (p, want) in cases {
            let msg = format!("{}", p.validate_strict().unwrap_err());
            assert!(msg.starts_with(want), "{p:?}: {msg}");
            // null_blk's rules take the same values, adjusted.
            assert_eq!(geo(&p).unwrap().1.len(), 1, "{p:?}");
        }
        // In range: the same geometry either way, nothing adjusted.
        let ok = ZonedParams {
            zone_nr_conv: 15,
            ..base
        };
        let (g, notes) = geo(&ok).unwrap();
        assert!(notes.is_empty());
        assert_eq!(ok.validate_strict().unwrap(), g);
        let ok = ZonedParams {
            zone_nr_conv: 2,
            zone_max_active: 13,
            zone_max_open: 13,
            ..base
        };
        assert_eq!(ok.validate_strict().unwrap(), geo(&ok).unwrap().0);
        // Refusals null_blk makes too are the same.
        let bad = ZonedParams {
            zone_size: 48,
            ..base
        };
        assert_eq!(bad.validate_strict(), bad.validate(|_| {}));
    }

    #[test]
    fn limits_past_the_counters() {
        // 2^17 zones of 1 MiB, limits above 16 bits.
        let p = ZonedParams {
            size_mib: 1 << 17,
            zone_size: 1,
            zone_max_open: 70000,
            ..ZonedParams::new(1 << 17, 512)
        };
        let msg = format!("{}", geo(&p).unwrap_err());
        assert!(msg.starts_with("zone_max_open (70000)"), "{msg}");
    }
}
