//! The zones of a device and their operations, with null_blk's rules
//! (`drivers/block/null_blk/zoned.c`), lock-free: see
//! [`design`](super::design) for the protocol and its orderings.

use super::cond::{Cond, Status, ZoneType};
use super::config::Geometry;
use super::res::{Check, Delta, Plan, Res};
use super::sync::{AtomicU32, AtomicU64, Ordering};
use super::word::{Word, INFLIGHT_MAX, ONE_INFLIGHT, WP_INVALID};
use core::fmt;
use core::ops::Deref;

/// One zone's state word (see [`word`](super::word)). The driver
/// allocates `nr_zones` of them and hands them to [`Zones::new`].
pub struct Zone(AtomicU64);

impl Zone {
    /// A zone word; [`Zones::new`] sets its initial state.
    pub fn new() -> Zone {
        Zone(AtomicU64::new(0))
    }

    fn load(&self, order: Ordering) -> Word {
        Word(self.0.load(order))
    }

    /// Moves the zone from `s` to `t` if it is still in `s`.
    ///
    /// Ordering: AcqRel. The Acquire pairs with the Release of the
    /// [`Zones::write_done`] and unlock (in reset) it reads from, or that
    /// heads the release sequence it reads from; the Release makes this
    /// transition the head of one for the next.
    fn cas(&self, s: Word, t: Word) -> bool {
        self.0
            .compare_exchange(s.0, t.0, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

impl fmt::Debug for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.load(Ordering::Relaxed);
        write!(
            f,
            "Zone({:?}, wp {}, in flight {})",
            w.cond(),
            w.wp(),
            w.inflight()
        )
    }
}

impl Default for Zone {
    fn default() -> Self {
        Zone::new()
    }
}

/// A write or zone append the state machine accepted: the data goes to
/// `sector`, then the driver calls [`Zones::write_done`].
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a write in flight blocks the zone's reset until write_done"]
pub struct Written {
    /// Where the data goes: for a zone append, the sector to return in
    /// the request.
    pub sector: u64,
    zone: u32,
    counted: bool,
}

/// One zone as `report_zones` gives it (a `struct blk_zone`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneInfo {
    /// First sector.
    pub start: u64,
    /// Length in sectors.
    pub len: u64,
    /// Writable sectors.
    pub capacity: u64,
    /// Write pointer, a sector: the zone's end if conventional,
    /// `u64::MAX` if read-only or offline.
    pub wp: u64,
    /// Type.
    pub ty: ZoneType,
    /// Condition.
    pub cond: Cond,
}

/// Why a `zone_readonly` or `zone_offline` store is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CondError {
    /// The sector is past the last zone.
    OutOfRange,
    /// The zone is conventional.
    Conventional,
    /// The condition asked for is neither read-only nor offline.
    NotACondition,
    /// The zone is busy (a reset's discard, or writes in flight before
    /// the discard of a zone leaving the condition): try again.
    Busy,
}

impl fmt::Display for CondError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CondError::OutOfRange => "Sector out of range",
            CondError::Conventional => "Can not change condition of conventional zones",
            CondError::NotACondition => "only read-only and offline can be set",
            CondError::Busy => "zone busy, try again",
        })
    }
}

/// The zones of one device: their states in `S` (a `KVec<Zone>` in the
/// driver, a `Vec<Zone>` in the tests), the open and active counters,
/// and the implicit close cursor.
pub struct Zones<S: Deref<Target = [Zone]>> {
    geo: Geometry,
    zones: S,
    res: Res,
    /// null_blk's `imp_close_zone_no`: where the search for a zone to
    /// close implicitly starts. Only a hint of where to look (Relaxed):
    /// any implicitly open zone is a correct choice.
    cursor: AtomicU32,
}

impl<S: Deref<Target = [Zone]>> Zones<S> {
    /// The zones of geometry `geo` in `zones`, which must hold
    /// `geo.nr_zones` of them (else `zones` comes back), set to their
    /// initial state: conventional, then empty (full with `zone_full`).
    ///
    /// The stores are Relaxed: the driver publishes the device (a lock or
    /// a Release store) before any other thread uses it.
    pub fn new(geo: Geometry, zones: S) -> Result<Self, S> {
        if zones.len() != geo.nr_zones as usize {
            return Err(zones);
        }
        for (zno, z) in zones.iter().enumerate() {
            let zno = zno as u32;
            let w = if zno < geo.nr_conv {
                Word::new(Cond::NotWp, geo.zone_len(zno))
            } else if geo.full {
                Word::new(Cond::Full, geo.zone_capacity(zno))
            } else {
                Word::new(Cond::Empty, 0)
            };
            z.0.store(w.0, Ordering::Relaxed);
        }
        Ok(Zones {
            res: Res::new(geo.max_open, geo.max_active),
            cursor: AtomicU32::new(geo.nr_conv),
            geo,
            zones,
        })
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// The counters (diagnostics and tests).
    pub fn res(&self) -> &Res {
        &self.res
    }

    /// The zone of `sector`, if on the device.
    fn zone_of(&self, sector: u64) -> Option<u32> {
        let zno = self.geo.zone_no(sector);
        (zno < u64::from(self.geo.nr_zones)).then_some(zno as u32)
    }

    /// The sequential zone of `sector`: else `IoErr`.
    fn seq_zone_of(&self, sector: u64) -> Result<u32, Status> {
        match self.zone_of(sector) {
            Some(zno) if zno >= self.geo.nr_conv => Ok(zno),
            _ => Err(Status::IoErr),
        }
    }

    fn zone(&self, zno: u32) -> &Zone {
        &self.zones[zno as usize]
    }

    /// Zone `zno` as `report_zones` gives it; `None` past the end.
    ///
    /// Ordering: Relaxed. A report gives the condition and write pointer
    /// at one time and reads no data: nothing to pair with.
    pub fn report(&self, zno: u32) -> Option<ZoneInfo> {
        let z = self.zones.get(zno as usize)?;
        let w = z.load(Ordering::Relaxed);
        let start = self.geo.zone_start(zno);
        let len = self.geo.zone_len(zno);
        let (ty, wp) = if zno < self.geo.nr_conv {
            (ZoneType::Conventional, start + len)
        } else if w.wp() == WP_INVALID {
            (ZoneType::SeqWriteReq, u64::MAX)
        } else {
            (ZoneType::SeqWriteReq, start + w.wp())
        };
        Some(ZoneInfo {
            start,
            len,
            capacity: self.geo.zone_capacity(zno),
            wp,
            ty,
            cond: w.cond(),
        })
    }

    /// A read of `nr` sectors at `sector`: how many of them hold data
    /// (those below the write pointer; the rest read as the fill
    /// pattern, null_blk's `null_zone_valid_read_len()`), or `IoErr` for
    /// an offline zone.
    ///
    /// Ordering: Relaxed. The data a read returns is ordered by the
    /// write's completion, which the block layer orders before any read
    /// that depends on it, not by the write pointer.
    pub fn read(&self, sector: u64, nr: u64) -> Result<u64, Status> {
        let zno = self.zone_of(sector).ok_or(Status::IoErr)?;
        if zno < self.geo.nr_conv {
            return Ok(nr);
        }
        let w = self.zone(zno).load(Ordering::Relaxed);
        if w.cond() == Cond::Offline {
            return Err(Status::IoErr);
        }
        let off = sector - self.geo.zone_start(zno);
        let wp = w.wp();
        Ok(if wp == WP_INVALID || off.saturating_add(nr) <= wp {
            nr
        } else {
            wp.saturating_sub(off)
        })
    }

    /// A write (`append == false`) of `nr` sectors at `sector`, or a zone
    /// append (`append`) to the zone of `sector`: null_blk's
    /// `null_zone_write()`. A sequential zone takes the write at its
    /// write pointer only and within its capacity (else `IoErr`); an
    /// empty or closed zone opens implicitly, within the open and active
    /// limits, closing an implicitly open zone if the open limit is
    /// reached; the zone is full at its capacity. A conventional zone
    /// takes any write, no zone append.
    ///
    /// The write pointer moves at once: the driver then copies the data
    /// (a failure to copy leaves those sectors undefined: check bad
    /// blocks before) and calls [`write_done`](Self::write_done).
    pub fn write(&self, sector: u64, nr: u64, append: bool) -> Result<Written, Status> {
        let zno = self.zone_of(sector).ok_or(Status::IoErr)?;
        if zno < self.geo.nr_conv {
            if append {
                return Err(Status::IoErr);
            }
            return Ok(Written {
                sector,
                zone: zno,
                counted: false,
            });
        }
        let start = self.geo.zone_start(zno);
        let cap = self.geo.zone_capacity(zno);
        loop {
            // Acquire: pairs with a reset's unlock (Release), so that
            // its discard is before this write's data copy.
            let s = self.zone(zno).load(Ordering::Acquire);
            if s.locked() {
                return Err(Status::Busy);
            }
            let wp = s.wp();
            if append && (self.geo.append_max_sectors == 0 || wp == WP_INVALID) {
                return Err(Status::IoErr);
            }
            let off = if append { wp } else { sector - start };
            // Full, read-only and offline zones fail here: their write
            // pointer is at or past the capacity, or invalid.
            if wp == WP_INVALID || off != wp || wp > cap || nr > cap - wp {
                return Err(Status::IoErr);
            }
            if s.inflight() == INFLIGHT_MAX {
                return Err(Status::Busy);
            }
            let opens = matches!(s.cond(), Cond::Empty | Cond::Closed);
            let new_wp = wp + nr;
            let cond = if new_wp == cap {
                Cond::Full
            } else if opens {
                Cond::ImpOpen
            } else {
                s.cond()
            };
            let t = s.with_cond(cond).with_wp(new_wp).plus_inflight();
            let check = if opens { Check::Required } else { Check::None };
            if self.transit(zno, s, t, check)? {
                return Ok(Written {
                    sector: start + wp,
                    zone: zno,
                    counted: true,
                });
            }
        }
    }

    /// The data of `w` is copied (or the copy failed): the zone may be
    /// reset.
    ///
    /// Ordering: Release, pairing with the Acquire of the reset that
    /// finds no write in flight: the data copy is before the discard.
    pub fn write_done(&self, w: Written) {
        if w.counted {
            self.zone(w.zone)
                .0
                .fetch_sub(ONE_INFLIGHT, Ordering::Release);
        }
    }

    /// Zone open (`REQ_OP_ZONE_OPEN`) of the zone of `sector`:
    /// null_blk's `null_open_zone()`.
    pub fn open(&self, sector: u64) -> Result<(), Status> {
        let zno = self.seq_zone_of(sector)?;
        loop {
            let s = self.mgmt_load(zno)?;
            let check = match s.cond() {
                Cond::ExpOpen => return Ok(()),
                Cond::Empty | Cond::Closed => Check::Required,
                Cond::ImpOpen => Check::None,
                _ => return Err(Status::IoErr),
            };
            if self.transit(zno, s, s.with_cond(Cond::ExpOpen), check)? {
                return Ok(());
            }
        }
    }

    /// Zone close (`REQ_OP_ZONE_CLOSE`): null_blk's `null_close_zone()`.
    pub fn close(&self, sector: u64) -> Result<(), Status> {
        let zno = self.seq_zone_of(sector)?;
        loop {
            let s = self.mgmt_load(zno)?;
            match s.cond() {
                Cond::Closed => return Ok(()),
                Cond::ImpOpen | Cond::ExpOpen => {}
                _ => return Err(Status::IoErr),
            }
            if self.transit(zno, s, close_target(s), Check::None)? {
                return Ok(());
            }
        }
    }

    /// Zone finish (`REQ_OP_ZONE_FINISH`): null_blk's
    /// `null_finish_zone()`. The write pointer goes to the zone's end
    /// (its length, not its capacity, as null_blk's does).
    pub fn finish(&self, sector: u64) -> Result<(), Status> {
        let zno = self.seq_zone_of(sector)?;
        let len = self.geo.zone_len(zno);
        loop {
            let s = self.mgmt_load(zno)?;
            let check = if self.res.enabled() {
                match s.cond() {
                    Cond::Full => return Ok(()),
                    Cond::Empty | Cond::Closed => Check::Required,
                    Cond::ImpOpen | Cond::ExpOpen => Check::None,
                    _ => return Err(Status::IoErr),
                }
            } else {
                Check::None
            };
            let t = s.with_cond(Cond::Full).with_wp(len);
            if self.transit(zno, s, t, check)? {
                return Ok(());
            }
        }
    }

    /// Zone reset (`REQ_OP_ZONE_RESET`): null_blk's `null_reset_zone()`.
    /// `discard(start, len)` drops the zone's data (memory-backed; else
    /// it does nothing) while the zone is locked: writes get `Busy`
    /// meanwhile. With writes in flight (data not yet copied) the reset
    /// is `Busy`.
    pub fn reset(&self, sector: u64, discard: impl FnOnce(u64, u64)) -> Result<(), Status> {
        let zno = self.seq_zone_of(sector)?;
        loop {
            let s = self.mgmt_load(zno)?;
            match self.reset_zone(zno, s, false)? {
                Some(t) => {
                    self.discard_unlock(zno, t, discard);
                    return Ok(());
                }
                None => continue,
            }
        }
    }

    /// Reset all (`REQ_OP_ZONE_RESET_ALL`): every sequential zone not
    /// empty, read-only or offline is reset, as by [`reset`](Self::reset).
    /// `Busy` if a zone was: the others are reset, the driver retries.
    pub fn reset_all(&self, mut discard: impl FnMut(u64, u64)) -> Result<(), Status> {
        let mut busy = false;
        for zno in self.geo.nr_conv..self.geo.nr_zones {
            loop {
                let s = self.zone(zno).load(Ordering::Acquire);
                if matches!(s.cond(), Cond::Empty | Cond::ReadOnly | Cond::Offline) {
                    break;
                }
                match self.reset_zone(zno, s, true) {
                    Ok(Some(t)) => self.discard_unlock(zno, t, &mut discard),
                    Ok(None) => continue,
                    Err(_) => busy = true,
                }
                break;
            }
        }
        if busy {
            Err(Status::Busy)
        } else {
            Ok(())
        }
    }

    /// `zone_readonly` (`cond` [`Cond::ReadOnly`]) or `zone_offline`
    /// ([`Cond::Offline`]) for the zone of `sector`: null_blk's
    /// `null_set_zone_cond()`. A zone in `cond` already goes back to
    /// empty (its data discarded, as by [`reset`](Self::reset)); any
    /// other is finished (giving back its open and active counts) and set
    /// to `cond`, its write pointer invalid.
    ///
    /// null_blk sets the condition even when the finish fails for want
    /// of resources, and then leaves a closed zone counted as closed;
    /// here the zone's counts always go.
    pub fn set_cond(
        &self,
        sector: u64,
        cond: Cond,
        discard: impl FnOnce(u64, u64),
    ) -> Result<(), CondError> {
        if !matches!(cond, Cond::ReadOnly | Cond::Offline) {
            return Err(CondError::NotACondition);
        }
        let zno = self.zone_of(sector).ok_or(CondError::OutOfRange)?;
        if zno < self.geo.nr_conv {
            return Err(CondError::Conventional);
        }
        loop {
            let s = self.zone(zno).load(Ordering::Acquire);
            if s.locked() {
                return Err(CondError::Busy);
            }
            if s.cond() == cond {
                if s.inflight() != 0 {
                    return Err(CondError::Busy);
                }
                // Read-only and offline zones hold no counts.
                let t = Word::new(Cond::Empty, 0).lock();
                if self.zone(zno).cas(s, t) {
                    self.discard_unlock(zno, t, discard);
                    return Ok(());
                }
                continue;
            }
            let check = match s.cond() {
                Cond::Empty | Cond::Closed => Check::BestEffort,
                _ => Check::None,
            };
            let t = s.with_cond(cond).with_wp(WP_INVALID);
            match self.transit(zno, s, t, check) {
                Ok(true) => return Ok(()),
                Ok(false) => continue,
                Err(_) => return Err(CondError::Busy),
            }
        }
    }

    /// The state of zone `zno` for a management operation: `IoErr` if
    /// read-only or offline, `Busy` if a reset holds it.
    fn mgmt_load(&self, zno: u32) -> Result<Word, Status> {
        let s = self.zone(zno).load(Ordering::Acquire);
        if s.locked() {
            return Err(Status::Busy);
        }
        if matches!(s.cond(), Cond::ReadOnly | Cond::Offline) {
            return Err(Status::IoErr);
        }
        Ok(s)
    }

    /// Moves zone `zno` from `s` to empty and locked: `Some(new word)`,
    /// `None` if the zone changed (look again). `Busy` with writes in
    /// flight. With `skip` (reset all), a zone that has become empty,
    /// read-only or offline is left alone.
    fn reset_zone(&self, zno: u32, s: Word, skip: bool) -> Result<Option<Word>, Status> {
        if skip && matches!(s.cond(), Cond::Empty | Cond::ReadOnly | Cond::Offline) {
            return Ok(None);
        }
        if s.locked() || s.inflight() != 0 {
            return Err(Status::Busy);
        }
        let t = Word::new(Cond::Empty, 0).lock();
        // Acquire (in the CAS): pairs with the Release of every
        // write_done this word's value includes, so their data copies are
        // before the discard.
        Ok(self.transit(zno, s, t, Check::None)?.then_some(t))
    }

    /// Discards locked zone `zno` (word `t`) and unlocks it.
    ///
    /// Ordering: the unlock is a Release store, pairing with the Acquire
    /// load of the next write (or management operation) on the zone: the
    /// discard is before its data copy. A store, not an RMW, suffices:
    /// while the lock bit is set no other thread changes the word (every
    /// CAS compares the whole word, and every path that sees the bit
    /// backs off; `write_done` needs a write in flight, and the lock is
    /// taken with none).
    fn discard_unlock(&self, zno: u32, t: Word, discard: impl FnOnce(u64, u64)) {
        discard(self.geo.zone_start(zno), self.geo.zone_len(zno));
        self.zone(zno)
            .0
            .store(Word::new(t.cond(), t.wp()).0, Ordering::Release);
    }

    /// Moves zone `zno` from `s` to `t` with the counters: `Ok(true)` if
    /// done, `Ok(false)` if the zone changed first (look again), or why
    /// not. `check` is null_blk's resource check for an empty or closed
    /// `s`. See [`design`](super::design).
    fn transit(&self, zno: u32, s: Word, t: Word, check: Check) -> Result<bool, Status> {
        let zone = self.zone(zno);
        if !self.res.enabled() {
            return Ok(zone.cas(s, t));
        }
        let d = self.res.mask(Delta::transition(s.cond(), t.cond()));
        if check == Check::None && d.is_zero() {
            return Ok(zone.cas(s, t));
        }
        let inc = d.pos();
        match self.res.begin(check, s.cond() == Cond::Empty, inc)? {
            Plan::Direct => {
                if zone.cas(s, t) {
                    self.res.end(d - inc);
                    Ok(true)
                } else {
                    self.res.end(-inc);
                    Ok(false)
                }
            }
            Plan::Victim => {
                let taken = Delta {
                    active: inc.active,
                    ..Delta::default()
                };
                let Some(victim) = self.close_imp_open(zno) else {
                    self.res.end(-taken);
                    return Err(Status::Busy);
                };
                if zone.cas(s, t) {
                    self.res.end(d + victim - taken);
                    Ok(true)
                } else {
                    self.res.end(victim - taken);
                    Ok(false)
                }
            }
        }
    }

    /// null_blk's `null_close_imp_open_zone()`: closes the first
    /// implicitly open zone from the cursor on (round robin over the
    /// sequential zones, skipping `own`) and returns the change to the
    /// counts, `None` if there is none.
    ///
    /// Ordering: the loads are Relaxed, the CAS validates what they read.
    /// The caller's Acquire in [`Res::begin`] makes every committed
    /// transition its counts include visible here (coherence: this load
    /// reads that CAS's value or a later one).
    fn close_imp_open(&self, own: u32) -> Option<Delta> {
        let (conv, nr) = (self.geo.nr_conv, self.geo.nr_zones);
        let mut zno = self.cursor.load(Ordering::Relaxed);
        if zno >= nr || zno < conv {
            zno = conv;
        }
        for _ in conv..nr {
            let z = zno;
            zno += 1;
            if zno >= nr {
                zno = conv;
            }
            if z == own {
                continue;
            }
            let zone = self.zone(z);
            let mut w = zone.load(Ordering::Relaxed);
            while w.cond() == Cond::ImpOpen {
                let t = close_target(w);
                if zone.cas(w, t) {
                    self.cursor.store(zno, Ordering::Relaxed);
                    return Some(self.res.mask(Delta::transition(Cond::ImpOpen, t.cond())));
                }
                w = zone.load(Ordering::Relaxed);
            }
        }
        None
    }
}

/// An open zone closed: empty if nothing is written, else closed.
fn close_target(s: Word) -> Word {
    s.with_cond(if s.wp() == 0 {
        Cond::Empty
    } else {
        Cond::Closed
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ZonedParams;

    /// 4 zones of 1 MiB (2048 sectors): `conv` conventional, limits
    /// `open` and `active`.
    fn zones(conv: u32, open: u32, active: u32) -> Zones<Vec<Zone>> {
        let p = ZonedParams {
            zone_size: 1,
            zone_nr_conv: conv,
            zone_max_open: open,
            zone_max_active: active,
            ..ZonedParams::new(4, 512)
        };
        let g = p.validate(|_| {}).unwrap();
        Zones::new(g, (0..4).map(|_| Zone::new()).collect()).unwrap()
    }

    fn cond(z: &Zones<Vec<Zone>>, zno: u32) -> Cond {
        z.report(zno).unwrap().cond
    }

    fn write(z: &Zones<Vec<Zone>>, sector: u64, nr: u64, append: bool) -> Result<u64, Status> {
        z.write(sector, nr, append).map(|w| {
            let s = w.sector;
            z.write_done(w);
            s
        })
    }

    #[test]
    fn write_at_the_write_pointer_only() {
        let z = zones(1, 0, 0);
        // Conventional: anywhere, no append.
        assert_eq!(write(&z, 100, 8, false), Ok(100));
        assert_eq!(write(&z, 100, 8, true), Err(Status::IoErr));
        assert_eq!(write(&z, 2048 + 8, 8, false), Err(Status::IoErr));
        assert_eq!(write(&z, 2048, 8, false), Ok(2048));
        assert_eq!(cond(&z, 1), Cond::ImpOpen);
        assert_eq!(write(&z, 2048, 8, false), Err(Status::IoErr));
        // Append: anywhere in the zone, lands at the write pointer.
        assert_eq!(write(&z, 2048 + 1000, 8, true), Ok(2056));
        assert_eq!(z.report(1).unwrap().wp, 2064);
        // Past the capacity: refused; up to it: full.
        assert_eq!(write(&z, 2064, 2048, false), Err(Status::IoErr));
        assert_eq!(write(&z, 2064, 2048 - 16, false), Ok(2064));
        assert_eq!(cond(&z, 1), Cond::Full);
        assert_eq!(write(&z, 2048, 8, true), Err(Status::IoErr));
    }

    #[test]
    fn implicit_close_round_robin() {
        let z = zones(0, 2, 0);
        write(&z, 0, 8, false).unwrap();
        write(&z, 2048, 8, false).unwrap();
        // Zone 2 closes zone 0 (the cursor starts at the first
        // sequential zone), zone 3 then closes zone 1.
        write(&z, 4096, 8, false).unwrap();
        assert_eq!(cond(&z, 0), Cond::Closed);
        write(&z, 6144, 8, false).unwrap();
        assert_eq!(cond(&z, 1), Cond::Closed);
        assert_eq!(cond(&z, 2), Cond::ImpOpen);
        // Explicitly open zones are not closed: the limit holds.
        z.open(4096).unwrap();
        z.open(6144).unwrap();
        assert_eq!(write(&z, 8, 8, false), Err(Status::ZoneOpenResource));
        assert_eq!(z.open(0), Err(Status::ZoneOpenResource));
        z.close(4096).unwrap();
        assert_eq!(write(&z, 8, 8, false), Ok(8));
    }

    #[test]
    fn active_limit() {
        let z = zones(0, 0, 2);
        write(&z, 0, 8, false).unwrap();
        z.open(2048).unwrap();
        assert_eq!(write(&z, 4096, 8, false), Err(Status::ZoneActiveResource));
        // Closing keeps a written zone active; an empty one is not.
        z.close(0).unwrap();
        z.close(2048).unwrap();
        assert_eq!(cond(&z, 1), Cond::Empty);
        assert_eq!(write(&z, 4096, 8, false), Ok(4096));
        z.finish(0).unwrap();
        assert_eq!(z.report(0).unwrap().wp, 2048);
        assert_eq!(z.res().counts().active, 1);
    }

    #[test]
    fn reset_waits_for_data_and_holds_writes() {
        let z = zones(0, 0, 0);
        let w = z.write(0, 8, false).unwrap();
        assert_eq!(z.reset(0, |_, _| {}), Err(Status::Busy));
        z.write_done(w);
        let mut seen = None;
        z.reset(0, |s, l| {
            // The zone is locked while its data goes.
            seen = Some((s, l, z.write(0, 8, false), z.open(0)));
        })
        .unwrap();
        assert_eq!(seen, Some((0, 2048, Err(Status::Busy), Err(Status::Busy))));
        assert_eq!(write(&z, 0, 8, false), Ok(0));
    }

    #[test]
    fn offline_and_read_only() {
        let z = zones(1, 0, 0);
        write(&z, 2048, 16, false).unwrap();
        assert_eq!(z.read(2048, 32), Ok(16));
        assert_eq!(z.read(2048 + 20, 4), Ok(0));
        assert_eq!(
            z.set_cond(100, Cond::Offline, |_, _| {}),
            Err(CondError::Conventional)
        );
        assert_eq!(
            z.set_cond(1 << 20, Cond::Offline, |_, _| {}),
            Err(CondError::OutOfRange)
        );
        z.set_cond(2048 + 5, Cond::Offline, |_, _| {}).unwrap();
        let r = z.report(1).unwrap();
        assert_eq!((r.cond, r.wp), (Cond::Offline, u64::MAX));
        assert_eq!(z.read(2048, 8), Err(Status::IoErr));
        assert_eq!(write(&z, 2048, 8, true), Err(Status::IoErr));
        assert_eq!(z.reset(2048, |_, _| {}), Err(Status::IoErr));
        // Offline again: back to empty, its data discarded.
        let mut d = None;
        z.set_cond(2048, Cond::Offline, |s, l| d = Some((s, l)))
            .unwrap();
        assert_eq!((cond(&z, 1), d), (Cond::Empty, Some((2048, 2048))));
        z.set_cond(4096, Cond::ReadOnly, |_, _| {}).unwrap();
        assert_eq!(z.read(4096, 8), Ok(8));
        assert_eq!(write(&z, 4096, 8, false), Err(Status::IoErr));
        // Reset all leaves it alone.
        z.reset_all(|_, _| {}).unwrap();
        assert_eq!(cond(&z, 2), Cond::ReadOnly);
    }
}
