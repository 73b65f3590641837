//! A modelled single-actuator rotational disk with a segmented read cache
//! and a command queue (NCQ), as disk simulators model one (Ruemmler &
//! Wilkes, "An introduction to disk drive modeling", 1994; DiskSim's disk
//! cache).
//!
//! The caller sends commands to the drive and, whenever one arrives or
//! completes, asks which one the drive starts ([`Disk::pick`]) and starts
//! it ([`Disk::start`], which says when it completes). Time is the
//! caller's, in nanoseconds; the model reads no clock, draws no random
//! number and uses no floating point: the same calls give the same times.
//!
//! # Mechanism
//!
//! Moving the head to another track costs
//! `seek_min + (seek_max - seek_min) * sqrt(distance / capacity)`; then the
//! head waits for the first sector to come round, exactly (from the time,
//! not an average), and transfers at the media rate, the sustained one
//! (track and head switches included). A track holds a revolution's worth
//! of sectors.
//!
//! # Segment cache
//!
//! The cache is `cache_segments` segments of `segment_kib` each
//! ([`segcache`](super::segcache)). A read that finds all its data in a
//! segment is a *hit*: it costs the controller's `hit_overhead_ns` plus the
//! transfer over the host interface (`bus_mbps`), and leaves the head
//! alone. Any other read is a *miss*: it takes the segment whose data it
//! continues, or else the least recently used one, reads its data from the
//! media, and then the drive **reads ahead** into that segment at the media
//! rate while the head is not needed elsewhere: while the drive is idle or
//! serves hits. Read-ahead stops when the segment holds `segment_kib` past
//! what the host has read from it, and goes on when the host reads more, a
//! revolution later at worst (its sector has to come round again).
//!
//! Read-ahead is cut off when a command needs the head; after a miss that
//! continued a segment's data (the drive has seen a sequential stream) not
//! before it has read `readahead_min_kib` past the miss (DiskSim's "minimum
//! read-ahead"). That is what keeps several interleaved sequential streams
//! going at a fraction of one stream's rate: each switch between them
//! brings a stream that much data. Cut at once, every request of every
//! stream would be a seek; held for random reads, each random read would
//! pay for read-ahead nobody uses. A read that starts in a segment being
//! read ahead into and ends beyond what is there waits for the read-ahead
//! to bring the rest.
//!
//! # Controller and mechanism
//!
//! Hits use the controller; misses and writes use the mechanism. NCQ lets
//! a drive complete commands out of order: it serves a hit while the head
//! seeks for a miss, at most one of each at a time.
//!
//! # Command queue (NCQ)
//!
//! The drive holds up to `ncq_depth` commands, those in service included.
//! When the controller is free it starts the oldest hit; when the
//! mechanism is free, the miss or write that can start transferring first
//! (after the minimum read-ahead, its seek and its rotational wait, all
//! exact in the model: shortest positioning time first), unless one has
//! waited `ncq_max_wait_ms`: then the oldest, as firmware ages commands so
//! that none starves. With `ncq_depth = 1` the drive serves one command at
//! a time, in arrival order.
//!
//! # Writes
//!
//! Write caching is off (write-through, `WCE=0`): a write goes to the media
//! as a read miss does, is done when its data is on the media, starts no
//! read-ahead, and drops the cached data it overlaps. Drives ship with
//! write-back caching on, which needs a destage policy to model; without
//! it a sequential write at queue depth 1 costs a revolution.
//!
//! # Defaults
//!
//! A 7200 rpm SATA disk of 2009-2010 (Herrmann's era): 8.5 ms average
//! seek, 150 MB/s, SATA 3 Gb/s, 16 MiB of cache in 16 segments, NCQ 31.
//! `readahead_min_kib` and `hit_overhead_ns` are calibrated against
//! Herrmann's fio figures (`tests/disk_sim.rs`, where the table is).

use super::segcache::{SegCache, MAX_SEGMENTS};
use core::fmt;

/// Bytes per sector.
pub const SECTOR_BYTES: u64 = 512;

/// Largest capacity the model takes, in sectors (32 TiB): keeps the integer
/// arithmetic on positions within `u64`.
pub const MAX_CAPACITY_SECTORS: u64 = 1 << 36;

/// Sectors in a run laid out from one angle (64 KiB; see
/// [`Disk::next_pass`]).
const RUN_SECTORS: u64 = 128;

/// The valid values of a model parameter and its default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The parameter's name (the driver's module parameter).
    pub name: &'static str,
    /// Smallest valid value.
    pub min: u32,
    /// Largest valid value.
    pub max: u32,
    /// Default value.
    pub default: u32,
}

impl Limit {
    /// Whether `value` is valid.
    pub const fn contains(&self, value: u32) -> bool {
        value >= self.min && value <= self.max
    }

    /// `value` if valid, else the error naming this parameter.
    fn check(&self, value: u32) -> Result<u32, ParamError> {
        if self.contains(value) {
            Ok(value)
        } else {
            Err(ParamError::OutOfRange {
                limit: *self,
                value,
            })
        }
    }
}

/// Spindle speed in revolutions per minute. The head's angle is part of
/// the model (read-ahead, rotational waits), so there is no 0.
pub const RPM: Limit = Limit {
    name: "rpm",
    min: 3600,
    max: 15_000,
    default: 7200,
};

/// Track-to-track seek in microseconds (0.8 ms: desktop 7200 rpm disks
/// of 2009-2010 state 0.8-1 ms).
pub const SEEK_MIN_US: Limit = Limit {
    name: "seek_min_us",
    min: 0,
    max: 100_000,
    default: 800,
};

/// Full-stroke seek in microseconds (at least `seek_min_us`). With the
/// square-root curve the average seek over the disk is
/// `seek_min + 8/15 * (seek_max - seek_min)`: 8.5 ms by default.
pub const SEEK_MAX_US: Limit = Limit {
    name: "seek_max_us",
    min: 0,
    max: 1_000_000,
    default: 15_200,
};

/// Sustained media rate in MB/s (bytes per microsecond): 150 is the outer
/// zone of a 1-1.5 TB 7200 rpm disk of 2009-2010 (one zone is modelled).
pub const MEDIA_MBPS: Limit = Limit {
    name: "media_mbps",
    min: 1,
    max: 10_000,
    default: 150,
};

/// Host interface rate in MB/s: what a hit's data costs to transfer
/// (SATA 3 Gb/s carries 300 MB/s).
pub const BUS_MBPS: Limit = Limit {
    name: "bus_mbps",
    min: 1,
    max: 100_000,
    default: 300,
};

/// Number of cache segments: how many streams the cache keeps apart.
pub const SEGMENTS: Limit = Limit {
    name: "cache_segments",
    min: 1,
    max: MAX_SEGMENTS as u32,
    default: 16,
};

/// Size of a cache segment in KiB, a multiple of 4: 16 segments of
/// 1 MiB make the 16 MiB cache of the era. A segment that holds less than
/// a host drains in a revolution lets one sequential reader catch up with
/// read-ahead each time it stops on a full segment.
pub const SEGMENT_KIB: Limit = Limit {
    name: "segment_kib",
    min: 4,
    max: 65_536,
    default: 1024,
};

/// Read-ahead after a sequential read miss that the drive completes
/// before it moves the head for another command, in KiB (at most
/// `segment_kib`; 0 cuts read-ahead off at once). Calibrated against
/// Herrmann's eight interleaved sequential readers, which kept 0.296 of one
/// reader's IOPS (`tests/disk_sim.rs`); with nothing held every request of
/// every stream is a seek.
pub const READAHEAD_MIN_KIB: Limit = Limit {
    name: "readahead_min_kib",
    min: 0,
    max: 65_536,
    default: 256,
};

/// Controller time of a cache hit, in ns, on top of the data's transfer
/// over the host interface. Calibrated: with a host that sends the next
/// request 25 us after a completion and 13.7 us for 4 KiB over SATA,
/// 10.5 us brings one sequential reader to Herrmann's 20,324 IOPS
/// (`tests/disk_sim.rs`).
/// The 0.1-0.2 ms DiskSim extracted from SCSI disks of the 1990s and 2000s
/// would cap a reader at queue depth 1 below 7k IOPS.
pub const HIT_OVERHEAD_NS: Limit = Limit {
    name: "hit_overhead_ns",
    min: 0,
    max: 10_000_000,
    default: 10_500,
};

/// Commands the drive accepts (SATA NCQ: at most 32; Linux uses 31).
pub const NCQ_DEPTH: Limit = Limit {
    name: "ncq_depth",
    min: 1,
    max: 32,
    default: 31,
};

/// Age in milliseconds after which a queued command is served before any
/// other (oldest first), whatever its positioning time. Firmware does not
/// publish its ageing; 100 ms is a guess, and it bounds the latency of a
/// command that shortest-positioning-first keeps passing over.
pub const NCQ_MAX_WAIT_MS: Limit = Limit {
    name: "ncq_max_wait_ms",
    min: 1,
    max: 10_000,
    default: 100,
};

/// Why [`Disk::new`] refused a set of parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// A parameter outside its [`Limit`].
    OutOfRange {
        /// The parameter's limit.
        limit: Limit,
        /// The value given.
        value: u32,
    },
    /// `capacity_sectors` is 0 or above [`MAX_CAPACITY_SECTORS`].
    Capacity(u64),
    /// `seek_max_us` is below `seek_min_us`.
    SeekOrder,
    /// `segment_kib` is not a multiple of 4 KiB.
    SegmentAlign,
    /// `readahead_min_kib` is above `segment_kib`.
    ReadaheadOverSegment,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { limit, value } => write!(
                f,
                "{} = {} is outside {}..={}",
                limit.name, value, limit.min, limit.max
            ),
            Self::Capacity(c) => write!(
                f,
                "capacity of {c} sectors is outside 1..={MAX_CAPACITY_SECTORS}"
            ),
            Self::SeekOrder => write!(f, "seek_max_us is below seek_min_us"),
            Self::SegmentAlign => write!(f, "segment_kib is not a multiple of 4"),
            Self::ReadaheadOverSegment => write!(f, "readahead_min_kib is above segment_kib"),
        }
    }
}

/// The parameters of a modelled disk (see the [`Limit`] of each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskParams {
    /// Capacity in sectors; seeks scale with the fraction of it crossed.
    pub capacity_sectors: u64,
    /// See [`RPM`].
    pub rpm: u32,
    /// See [`SEEK_MIN_US`].
    pub seek_min_us: u32,
    /// See [`SEEK_MAX_US`].
    pub seek_max_us: u32,
    /// See [`MEDIA_MBPS`].
    pub media_mbps: u32,
    /// See [`BUS_MBPS`].
    pub bus_mbps: u32,
    /// See [`SEGMENTS`].
    pub segments: u32,
    /// See [`SEGMENT_KIB`].
    pub segment_kib: u32,
    /// See [`READAHEAD_MIN_KIB`].
    pub readahead_min_kib: u32,
    /// See [`HIT_OVERHEAD_NS`].
    pub hit_overhead_ns: u32,
    /// See [`NCQ_DEPTH`].
    pub ncq_depth: u32,
    /// See [`NCQ_MAX_WAIT_MS`].
    pub ncq_max_wait_ms: u32,
}

impl DiskParams {
    /// The defaults, for a disk of `capacity_sectors`.
    pub const fn new(capacity_sectors: u64) -> Self {
        Self {
            capacity_sectors,
            rpm: RPM.default,
            seek_min_us: SEEK_MIN_US.default,
            seek_max_us: SEEK_MAX_US.default,
            media_mbps: MEDIA_MBPS.default,
            bus_mbps: BUS_MBPS.default,
            segments: SEGMENTS.default,
            segment_kib: SEGMENT_KIB.default,
            readahead_min_kib: READAHEAD_MIN_KIB.default,
            hit_overhead_ns: HIT_OVERHEAD_NS.default,
            ncq_depth: NCQ_DEPTH.default,
            ncq_max_wait_ms: NCQ_MAX_WAIT_MS.default,
        }
    }
}

impl DiskParams {
    /// The first parameter found invalid: each against its [`Limit`], in
    /// the order of the fields, then the constraints between them. The
    /// driver checks its module parameters with this at load, before it
    /// builds a [`Disk`].
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.capacity_sectors == 0 || self.capacity_sectors > MAX_CAPACITY_SECTORS {
            return Err(ParamError::Capacity(self.capacity_sectors));
        }
        RPM.check(self.rpm)?;
        let seek_min = SEEK_MIN_US.check(self.seek_min_us)?;
        let seek_max = SEEK_MAX_US.check(self.seek_max_us)?;
        MEDIA_MBPS.check(self.media_mbps)?;
        BUS_MBPS.check(self.bus_mbps)?;
        SEGMENTS.check(self.segments)?;
        let segment_kib = SEGMENT_KIB.check(self.segment_kib)?;
        let readahead_kib = READAHEAD_MIN_KIB.check(self.readahead_min_kib)?;
        HIT_OVERHEAD_NS.check(self.hit_overhead_ns)?;
        NCQ_DEPTH.check(self.ncq_depth)?;
        NCQ_MAX_WAIT_MS.check(self.ncq_max_wait_ms)?;
        if seek_max < seek_min {
            return Err(ParamError::SeekOrder);
        }
        if segment_kib % 4 != 0 {
            return Err(ParamError::SegmentAlign);
        }
        if readahead_kib > segment_kib {
            return Err(ParamError::ReadaheadOverSegment);
        }
        Ok(())
    }
}

/// A command for the drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// First sector.
    pub sector: u64,
    /// Length in bytes (rounded up to whole sectors).
    pub bytes: u32,
    /// A write (else a read).
    pub write: bool,
    /// When the command was queued at the drive (for [`Disk::pick`]'s
    /// ageing and ties).
    pub queued_ns: u64,
}

impl Command {
    /// The sectors `[first, end)` of the command on a disk of `capacity`
    /// sectors: at least one, clipped to the disk (the block layer sends
    /// nothing beyond it; the model does not rely on that).
    fn span(&self, capacity: u64) -> (u64, u64) {
        let sectors = u64::from(self.bytes).div_ceil(SECTOR_BYTES).max(1);
        let first = self.sector.min(capacity - 1);
        (first, first.saturating_add(sectors).min(capacity))
    }
}

/// How the drive served a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A read found all its data in the cache.
    Hit,
    /// A read waited for the read-ahead to bring the rest of its data.
    ReadAheadHit,
    /// A read went to the media.
    Miss,
    /// A write went to the media.
    Write,
}

/// A served command: when it completes and how it was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Service {
    /// Completion time.
    pub done_ns: u64,
    /// How the drive served it.
    pub outcome: Outcome,
}

/// Commands served so far, by [`Outcome`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// [`Outcome::Hit`]s.
    pub hits: u64,
    /// [`Outcome::ReadAheadHit`]s.
    pub readahead_hits: u64,
    /// [`Outcome::Miss`]es.
    pub misses: u64,
    /// [`Outcome::Write`]s.
    pub writes: u64,
}

/// Read-ahead: the head reads into segment `seg` from sector `from`, which
/// passes under it at `at_ns`, on at the media rate until the segment is
/// full or until `until_ns` (when a miss takes the head away).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fill {
    seg: usize,
    from: u64,
    at_ns: u64,
    until_ns: u64,
    /// The head does not leave before it has read up to here.
    min_end: u64,
}

/// Where a read's data is, at a given time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    /// All of it is in segment `.0`.
    Hit(usize),
    /// It starts in segment `.0` and read-ahead brings the rest at `.1`.
    Coming(usize, u64),
    /// The head has to go and get it.
    Miss,
}

/// A modelled disk: its parameters and its state.
#[derive(Clone, Debug)]
pub struct Disk {
    params: DiskParams,
    capacity: u64,
    revolution_ns: u64,
    track_sectors: u64,
    seek_min_ns: u64,
    seek_max_ns: u64,
    segment_sectors: u64,
    readahead_min_sectors: u64,
    max_wait_ns: u64,
    cache: SegCache,
    /// The read-ahead after the last read miss, running until a command
    /// needs the head (it starts when that miss is done).
    fill: Option<Fill>,
    /// The read-ahead the last miss cut off, finishing its minimum.
    tail: Option<Fill>,
    /// Where the head is after the last write, when there is no `fill`.
    parked: u64,
    /// When the mechanism is done with the last miss or write.
    mech_until: u64,
    /// When the controller is done with the last hit.
    ctrl_until: u64,
    stats: DiskStats,
}

impl Disk {
    /// An idle disk with an empty cache and the head over sector 0, or the
    /// first parameter found invalid (see [`DiskParams::validate`]).
    pub fn new(p: &DiskParams) -> Result<Self, ParamError> {
        p.validate()?;
        let revolution_ns = 60_000_000_000 / u64::from(p.rpm);
        let kib_sectors = 1024 / SECTOR_BYTES;
        let segment_sectors = u64::from(p.segment_kib) * kib_sectors;
        Ok(Self {
            params: *p,
            capacity: p.capacity_sectors,
            revolution_ns,
            track_sectors: (revolution_ns * u64::from(p.media_mbps) / (SECTOR_BYTES * 1000)).max(1),
            seek_min_ns: u64::from(p.seek_min_us) * 1000,
            seek_max_ns: u64::from(p.seek_max_us) * 1000,
            segment_sectors,
            readahead_min_sectors: u64::from(p.readahead_min_kib) * kib_sectors,
            max_wait_ns: u64::from(p.ncq_max_wait_ms) * 1_000_000,
            cache: SegCache::new(p.segments as usize, segment_sectors),
            fill: None,
            tail: None,
            parked: 0,
            mech_until: 0,
            ctrl_until: 0,
            stats: DiskStats::default(),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &DiskParams {
        &self.params
    }

    /// How many commands the drive holds at most, queued and in service.
    pub fn ncq_depth(&self) -> usize {
        self.params.ncq_depth as usize
    }

    /// Commands in service at `now_ns` (at most one hit and one miss or
    /// write).
    pub fn in_flight(&self, now_ns: u64) -> usize {
        usize::from(self.mech_until > now_ns) + usize::from(self.ctrl_until > now_ns)
    }

    /// Commands served so far.
    pub fn stats(&self) -> DiskStats {
        self.stats
    }

    /// Which of `queued` (the commands sent to the drive and not started,
    /// in arrival order) the drive starts at `now_ns`: an index into
    /// `queued`, or `None` if it starts none now (call again when a
    /// command completes or arrives).
    ///
    /// The drive holds [`Self::ncq_depth`] commands: only the first
    /// `ncq_depth - in_flight` of `queued` are in it. A hit starts if the
    /// controller is free, oldest first; a miss or write if the mechanism
    /// is free: the one waiting longest if it has waited `ncq_max_wait_ms`,
    /// else the one that can start transferring first.
    pub fn pick<I>(&self, now_ns: u64, queued: I) -> Option<usize>
    where
        I: IntoIterator<Item = Command>,
    {
        let room = self.ncq_depth().saturating_sub(self.in_flight(now_ns));
        let mech_free = self.mech_until <= now_ns;
        let ctrl_free = self.ctrl_until <= now_ns;
        // (is a miss, not aged, time to transfer, age order, index)
        let mut best: Option<(bool, bool, u64, u64, usize)> = None;
        for (i, cmd) in queued.into_iter().take(room).enumerate() {
            let key = match self.find(now_ns, &cmd) {
                Found::Hit(_) if ctrl_free => (false, true, 0, cmd.queued_ns, i),
                Found::Coming(_, at) if ctrl_free => {
                    (false, true, at.saturating_sub(now_ns), cmd.queued_ns, i)
                }
                Found::Miss if mech_free => {
                    if now_ns.saturating_sub(cmd.queued_ns) >= self.max_wait_ns {
                        (true, false, 0, cmd.queued_ns, i)
                    } else {
                        let (first, _) = cmd.span(self.capacity);
                        let (free, head) = self.head_free(now_ns);
                        let arrive = free + self.seek_ns(head, first);
                        let start = self.next_pass(first, arrive);
                        (true, true, start - now_ns, cmd.queued_ns, i)
                    }
                }
                _ => continue,
            };
            if best.map_or(true, |b| key < b) {
                best = Some(key);
            }
        }
        best.map(|(.., i)| i)
    }

    /// Starts `cmd` at `now_ns` and returns when it is done. A command
    /// that needs a busy part of the drive (see [`Self::pick`]) starts
    /// when that part is free.
    pub fn start(&mut self, now_ns: u64, cmd: Command) -> Service {
        let (first, end) = cmd.span(self.capacity);
        let (done_ns, outcome) = match self.find(now_ns, &cmd) {
            Found::Hit(seg) => {
                let t = now_ns.max(self.ctrl_until);
                self.consume(seg, end, t);
                self.ctrl_until = t + self.hit_ns(&cmd);
                (self.ctrl_until, Outcome::Hit)
            }
            Found::Coming(seg, _) => {
                let t = now_ns.max(self.ctrl_until);
                self.consume(seg, end, t);
                // After `consume`: a stalled read-ahead has been restarted.
                let arrival = self.arrival(seg, end).unwrap_or(t);
                self.ctrl_until = arrival.max(t + self.hit_ns(&cmd));
                (self.ctrl_until, Outcome::ReadAheadHit)
            }
            Found::Miss => {
                let t = now_ns.max(self.mech_until);
                let done = self.media_access(t, first, end);
                self.mech_until = done;
                if cmd.write {
                    self.cache.invalidate(first, end);
                    self.parked = end;
                    (done, Outcome::Write)
                } else {
                    let (seg, sequential) = self.cache.claim(first, end);
                    if self.tail.is_some_and(|f| f.seg == seg) {
                        self.tail = None;
                    }
                    // Only a stream's read-ahead is worth holding the head.
                    let min = if sequential {
                        self.readahead_min_sectors
                    } else {
                        0
                    };
                    self.fill = Some(Fill {
                        seg,
                        from: end,
                        at_ns: done,
                        until_ns: u64::MAX,
                        min_end: end.saturating_add(min).min(self.capacity),
                    });
                    (done, Outcome::Miss)
                }
            }
        };
        let counter = match outcome {
            Outcome::Hit => &mut self.stats.hits,
            Outcome::ReadAheadHit => &mut self.stats.readahead_hits,
            Outcome::Miss => &mut self.stats.misses,
            Outcome::Write => &mut self.stats.writes,
        };
        *counter += 1;
        Service { done_ns, outcome }
    }

    /// Time to serve a hit: controller overhead and interface transfer.
    fn hit_ns(&self, cmd: &Command) -> u64 {
        u64::from(self.params.hit_overhead_ns)
            + u64::from(cmd.bytes) * 1000 / u64::from(self.params.bus_mbps)
    }

    /// Time the media takes to pass `sectors` under the head (rounded up,
    /// so that [`Self::media_sectors`] of it is `sectors` again).
    fn media_ns(&self, sectors: u64) -> u64 {
        sectors
            .saturating_mul(SECTOR_BYTES * 1000)
            .div_ceil(u64::from(self.params.media_mbps))
    }

    /// Sectors passing under the head in `ns`.
    fn media_sectors(&self, ns: u64) -> u64 {
        ns.saturating_mul(u64::from(self.params.media_mbps)) / (SECTOR_BYTES * 1000)
    }

    /// The first time at or after `t` that `sector` passes under the head.
    ///
    /// Sectors lie in order along the track in runs of [`RUN_SECTORS`],
    /// each run from an angle fixed but irregular (a hash of the run's
    /// number). A regular layout would lock streams that advance in step
    /// into the same rotational wait at every switch between them, for as
    /// long as they stay on their tracks: the simulated host's timing is
    /// exact, a real one's is not. Read-ahead streams on from a run to
    /// the next without waiting.
    fn next_pass(&self, sector: u64, t: u64) -> u64 {
        let rev = self.revolution_ns;
        let run = sector / RUN_SECTORS;
        let phase = (self.media_ns(sector % RUN_SECTORS) + scramble(run) % rev) % rev;
        t + (phase + rev - t % rev) % rev
    }

    /// Seek time from the track of `from` to the track of `to`.
    fn seek_ns(&self, from: u64, to: u64) -> u64 {
        if from / self.track_sectors == to / self.track_sectors {
            return 0;
        }
        let distance = from.abs_diff(to).min(self.capacity);
        // sqrt(distance / capacity) in 1/1024ths.
        let frac = isqrt((distance << 20) / self.capacity);
        self.seek_min_ns + (self.seek_max_ns - self.seek_min_ns) * frac / 1024
    }

    /// Where read-ahead into `seg` stops: a segment beyond what the host
    /// has read from it, or the end of the disk.
    fn limit(&self, seg: usize) -> u64 {
        self.cache
            .used(seg)
            .saturating_add(self.segment_sectors)
            .min(self.capacity)
    }

    /// Where `f` has got to at `t`, and whether it has stopped on a full
    /// segment.
    fn pos(&self, f: &Fill, t: u64) -> (u64, bool) {
        let limit = self.limit(f.seg);
        let t = t.min(f.until_ns);
        let reach = f
            .from
            .saturating_add(self.media_sectors(t.saturating_sub(f.at_ns)));
        (reach.min(limit), reach >= limit && limit > f.from)
    }

    /// When `f` passes `sector`.
    fn passes(&self, f: &Fill, sector: u64) -> u64 {
        f.at_ns + self.media_ns(sector.saturating_sub(f.from))
    }

    /// The read-ahead filling `seg`, if any.
    fn filling(&self, seg: usize) -> Option<Fill> {
        [self.fill, self.tail]
            .into_iter()
            .flatten()
            .find(|f| f.seg == seg)
    }

    /// The bounds of segment `seg`'s data at `t` (a segment being read
    /// ahead into grows, and drops what lies more than a segment behind).
    fn bounds(&self, seg: usize, t: u64) -> (u64, u64) {
        let (start, end) = self.cache.bounds(seg);
        match self.filling(seg) {
            Some(f) => {
                let (pos, _) = self.pos(&f, t);
                (start.max(pos.saturating_sub(self.segment_sectors)), pos)
            }
            None => (start, end),
        }
    }

    /// When the data of `seg` up to `end` is in, as read-ahead stands;
    /// `None` if read-ahead does not get there.
    fn arrival(&self, seg: usize, end: u64) -> Option<u64> {
        let f = self.filling(seg)?;
        let last = if f.until_ns == u64::MAX {
            // Still running: the host reading up to `end` lets it get there.
            end
        } else {
            self.pos(&f, f.until_ns).0
        };
        (end <= last).then(|| self.passes(&f, end))
    }

    /// Where `cmd`'s data is at `t`.
    fn find(&self, t: u64, cmd: &Command) -> Found {
        if cmd.write {
            return Found::Miss;
        }
        let (first, end) = cmd.span(self.capacity);
        let mut coming = Found::Miss;
        for seg in self.cache.valid() {
            let (start, held) = self.bounds(seg, t);
            if start <= first && end <= held {
                return Found::Hit(seg);
            }
            if start <= first && first <= held && end - first <= self.segment_sectors {
                if let Some(at) = self.arrival_at(seg, end, t) {
                    coming = Found::Coming(seg, at);
                }
            }
        }
        coming
    }

    /// [`Self::arrival`] if the host reads up to `end` from `seg` at `t`:
    /// read-ahead stopped on a full segment restarts when the sector it
    /// stopped at comes round again.
    fn arrival_at(&self, seg: usize, end: u64, t: u64) -> Option<u64> {
        match self.fill {
            Some(f) if f.seg == seg => match self.pos(&f, t) {
                (pos, true) if end > self.cache.used(seg) => {
                    let restart = self.next_lap(self.passes(&f, pos), t);
                    Some(restart + self.media_ns(end.saturating_sub(pos)))
                }
                _ => Some(self.passes(&f, end)),
            },
            _ => self.arrival(seg, end),
        }
    }

    /// The first time at or after `t` a whole number of revolutions after
    /// `passed` (when a sector under the head comes round again).
    fn next_lap(&self, passed: u64, t: u64) -> u64 {
        let laps = t.saturating_sub(passed).div_ceil(self.revolution_ns);
        passed + laps * self.revolution_ns
    }

    /// The host reads up to `end` from `seg` at `t`: moves the segment's
    /// read-ahead limit on, and restarts read-ahead that had stopped on it
    /// (see [`Self::arrival_at`]).
    fn consume(&mut self, seg: usize, end: u64, t: u64) {
        if let Some(f) = self.fill.filter(|f| f.seg == seg) {
            if let (pos, true) = self.pos(&f, t) {
                if end > self.cache.used(seg) {
                    self.fill = Some(Fill {
                        from: pos,
                        at_ns: self.next_lap(self.passes(&f, pos), t),
                        ..f
                    });
                }
            }
        }
        self.cache.touch(seg, end);
    }

    /// When the head can leave for another command from `t` (once the
    /// minimum read-ahead is done), and where it is then.
    fn head_free(&self, t: u64) -> (u64, u64) {
        match self.fill {
            None => (t, self.parked),
            Some(f) => {
                let free = self.passes(&f, f.min_end).max(t);
                (free, self.pos(&f, free).0)
            }
        }
    }

    /// Takes the head to `first` from `t` (cutting read-ahead off once its
    /// minimum is done) and transfers up to `end`; returns when the data is
    /// on the media (write) or read (read).
    fn media_access(&mut self, t: u64, first: u64, end: u64) -> u64 {
        let (free, head) = self.head_free(t);
        self.tail = self.fill.take().map(|f| Fill {
            until_ns: free,
            ..f
        });
        if let Some(f) = self.tail {
            self.cache.set_end(f.seg, self.pos(&f, free).0);
        }
        let arrive = free + self.seek_ns(head, first);
        self.next_pass(first, arrive) + self.media_ns(end - first)
    }
}

/// A fixed pseudo-random value for `x` (splitmix64's finaliser).
fn scramble(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Integer square root (floor).
fn isqrt(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let mut x = n;
    let mut y = x.div_ceil(2);
    while y < x {
        x = y;
        y = (x + n / x) / 2;
    }
    x
}

// The path is explicit because `rnull/rdisk.rs` loads this file through
// `#[path]`, from where a plain `mod tests;` names `src/tests.rs` (rustfmt
// and rust-analyzer follow it there).
#[cfg(test)]
#[path = "disk/tests.rs"]
mod tests;
