//! Zone conditions, zone types and the status of a zone operation.

/// A zone's condition, with the values of the kernel's `enum
/// blk_zone_cond` (`include/uapi/linux/blkzoned.h`), so that a report can
/// pass them on unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cond {
    /// A conventional zone: no write pointer.
    NotWp = 0x0,
    /// Nothing written since the last reset.
    Empty = 0x1,
    /// Opened by a write.
    ImpOpen = 0x2,
    /// Opened by a zone open command.
    ExpOpen = 0x3,
    /// Partly written, closed (still active).
    Closed = 0x4,
    /// Read-only (`zone_readonly`).
    ReadOnly = 0xd,
    /// Written up to its capacity, or finished.
    Full = 0xe,
    /// Offline (`zone_offline`): no read, no write.
    Offline = 0xf,
}

impl Cond {
    /// The condition whose `blk_zone_cond` value is `v`.
    pub fn from_raw(v: u8) -> Option<Cond> {
        Some(match v {
            0x0 => Cond::NotWp,
            0x1 => Cond::Empty,
            0x2 => Cond::ImpOpen,
            0x3 => Cond::ExpOpen,
            0x4 => Cond::Closed,
            0xd => Cond::ReadOnly,
            0xe => Cond::Full,
            0xf => Cond::Offline,
            _ => return None,
        })
    }

    /// Whether the zone counts against `zone_max_open`.
    pub fn is_open(self) -> bool {
        matches!(self, Cond::ImpOpen | Cond::ExpOpen)
    }

    /// Whether the zone counts against `zone_max_active`.
    pub fn is_active(self) -> bool {
        matches!(self, Cond::ImpOpen | Cond::ExpOpen | Cond::Closed)
    }
}

/// A zone's type, with the values of the kernel's `enum blk_zone_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ZoneType {
    /// Written anywhere, no write pointer (`zone_nr_conv` of them first).
    Conventional = 0x1,
    /// Sequential write required: written at the write pointer only.
    SeqWriteReq = 0x2,
}

/// Why a zone operation failed. The driver maps each to a
/// `blk_status_t`; the names say which.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// `BLK_STS_IOERR`: what null_blk and real devices give for a write
    /// off the write pointer or past the zone capacity, a zone append to
    /// a conventional zone, a zone management operation on a conventional,
    /// read-only or offline zone, an invalid transition (closing an empty
    /// zone, opening a full one), a read of an offline zone.
    IoErr,
    /// `BLK_STS_ZONE_OPEN_RESOURCE`: `zone_max_open` zones are open and
    /// none of them is implicitly open, or closing one would exceed
    /// `zone_max_active`.
    ZoneOpenResource,
    /// `BLK_STS_ZONE_ACTIVE_RESOURCE`: `zone_max_active` zones are active.
    ZoneActiveResource,
    /// Transient: another thread is in the middle of an operation this one
    /// must not overlap (a reset's discard, a write's data copy before a
    /// reset, a counter reservation when the limits are reached). Nothing
    /// changed except, at the open limit, possibly an implicit close (see
    /// [`design`](super::design)); the driver retries (`BLK_STS_RESOURCE`
    /// requeues the request, or it spins).
    Busy,
}
