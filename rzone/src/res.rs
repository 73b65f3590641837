//! The open and active zone counters, in one word reserved by
//! compare-exchange (null_blk's `nr_zones_imp_open`, `nr_zones_exp_open`
//! and `nr_zones_closed` under its `zone_res_lock`).
//!
//! The word holds four 16-bit counts: implicitly open zones, open zones
//! (implicitly or explicitly), active zones (open or closed) and
//! *pending*, the threads between the first and the last step of a
//! counted transition (see [`design`](super::design)). A count is kept
//! only if its limit is set: open and implicitly open with
//! `zone_max_open`, active with `zone_max_active`, so each stays below
//! its limit, at most [`MAX_ZONE_LIMIT`](super::config::MAX_ZONE_LIMIT).

use super::cond::{Cond, Status};
use super::sync::{AtomicU64, Ordering};
use core::ops::{Add, Neg, Sub};

/// A change to the counts (or, from [`Delta::of`], one zone's share).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delta {
    /// Implicitly open zones.
    pub imp: i64,
    /// Open zones.
    pub open: i64,
    /// Active zones.
    pub active: i64,
}

impl Delta {
    /// The counts one zone in condition `cond` contributes.
    pub fn of(cond: Cond) -> Delta {
        Delta {
            imp: i64::from(cond == Cond::ImpOpen),
            open: i64::from(cond.is_open()),
            active: i64::from(cond.is_active()),
        }
    }

    /// The change from a zone moving from `from` to `to`.
    pub fn transition(from: Cond, to: Cond) -> Delta {
        Delta::of(to) - Delta::of(from)
    }

    /// The increments of the change.
    pub fn pos(self) -> Delta {
        Delta {
            imp: self.imp.max(0),
            open: self.open.max(0),
            active: self.active.max(0),
        }
    }

    /// Whether nothing changes.
    pub fn is_zero(self) -> bool {
        self == Delta::default()
    }

    /// The word to add for this change and `pending` more pending.
    fn packed(self, pending: i64) -> u64 {
        (self.imp + (self.open << 16) + (self.active << 32) + (pending << 48)) as u64
    }
}

impl Add for Delta {
    type Output = Delta;
    fn add(self, o: Delta) -> Delta {
        Delta {
            imp: self.imp + o.imp,
            open: self.open + o.open,
            active: self.active + o.active,
        }
    }
}

impl Sub for Delta {
    type Output = Delta;
    fn sub(self, o: Delta) -> Delta {
        self + -o
    }
}

impl Neg for Delta {
    type Output = Delta;
    fn neg(self) -> Delta {
        Delta {
            imp: -self.imp,
            open: -self.open,
            active: -self.active,
        }
    }
}

/// The counts at one time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Implicitly open zones (kept with `zone_max_open`).
    pub imp: u16,
    /// Open zones (kept with `zone_max_open`).
    pub open: u16,
    /// Active zones (kept with `zone_max_active`).
    pub active: u16,
    /// Threads inside a counted transition.
    pub pending: u16,
}

impl Counts {
    fn unpack(w: u64) -> Counts {
        Counts {
            imp: w as u16,
            open: (w >> 16) as u16,
            active: (w >> 32) as u16,
            pending: (w >> 48) as u16,
        }
    }
}

/// How a reservation proceeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// The increments are reserved: go on with the zone's transition.
    Direct,
    /// At the open limit with an implicitly open zone: close one (its
    /// open slot becomes the caller's), then go on. Only the active
    /// increment is reserved.
    Victim,
}

/// Which of null_blk's resource checks a transition makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// None: the transition releases, or changes nothing.
    None,
    /// `null_check_zone_resources()`: its failure fails the operation.
    Required,
    /// The same check, its failure ignored (a zone finished on its way
    /// to read-only or offline); an implicit close it calls for is made.
    BestEffort,
}

/// The counters of one device and its limits.
pub struct Res {
    word: AtomicU64,
    max_open: u32,
    max_active: u32,
}

impl Res {
    /// Counters for the limits `max_open` and `max_active` (0: none),
    /// each at most [`MAX_ZONE_LIMIT`](super::config::MAX_ZONE_LIMIT).
    /// All counts start at zero: zones start empty or full.
    pub fn new(max_open: u32, max_active: u32) -> Res {
        Res {
            word: AtomicU64::new(0),
            max_open,
            max_active,
        }
    }

    /// Whether any count is kept (null_blk's `need_zone_res_mgmt`).
    pub fn enabled(&self) -> bool {
        self.max_open != 0 || self.max_active != 0
    }

    /// `d` without the counts that are not kept.
    pub fn mask(&self, d: Delta) -> Delta {
        let (imp, open) = if self.max_open != 0 {
            (d.imp, d.open)
        } else {
            (0, 0)
        };
        let active = if self.max_active != 0 { d.active } else { 0 };
        Delta { imp, open, active }
    }

    /// The counts now (diagnostics and tests: another thread may change
    /// them at once).
    pub fn counts(&self) -> Counts {
        Counts::unpack(self.word.load(Ordering::Acquire))
    }

    /// null_blk's `null_check_zone_resources()` on counts `c`, for a
    /// zone that is empty (`own_empty`) or closed.
    fn decide(&self, c: Counts, own_empty: bool) -> Result<Plan, Status> {
        let active_ok = self.max_active == 0 || u32::from(c.active) < self.max_active;
        if own_empty && !active_ok {
            return Err(Status::ZoneActiveResource);
        }
        if self.max_open != 0 && u32::from(c.open) >= self.max_open {
            if c.imp > 0 && active_ok {
                return Ok(Plan::Victim);
            }
            return Err(Status::ZoneOpenResource);
        }
        Ok(Plan::Direct)
    }

    /// The first step of a counted transition: makes `check` for a zone
    /// that is empty (`own_empty`) or closed, reserves the increments
    /// `inc` (under [`Plan::Victim`] only the active one) and counts the
    /// caller as pending. Every `Ok` must be followed by one
    /// [`end`](Self::end).
    ///
    /// A refusal, or an implicit close, is decided only on counts with
    /// nothing pending, which are exact; with a transition pending the
    /// answer is [`Status::Busy`]. A reservation within the limits needs
    /// no such care: pending transitions only make the counts larger.
    ///
    /// Ordering: the load and the CAS are Acquire, pairing with the
    /// Release of every earlier [`end`](Self::end) they read from (the
    /// RMWs on this word form one release sequence): the zone words of
    /// the transitions those counts include are visible to the caller's
    /// scan for an implicitly open zone.
    pub fn begin(&self, check: Check, own_empty: bool, inc: Delta) -> Result<Plan, Status> {
        let inc = self.mask(inc);
        let mut cur = self.word.load(Ordering::Acquire);
        loop {
            let c = Counts::unpack(cur);
            if c.pending == u16::MAX {
                return Err(Status::Busy);
            }
            let plan = match check {
                Check::None => Ok(Plan::Direct),
                Check::Required | Check::BestEffort => self.decide(c, own_empty),
            };
            let plan = match plan {
                Ok(Plan::Direct) => Plan::Direct,
                _ if c.pending > 0 => return Err(Status::Busy),
                Ok(Plan::Victim) => Plan::Victim,
                Err(_) if check == Check::BestEffort => Plan::Direct,
                Err(e) => return Err(e),
            };
            let add = match plan {
                Plan::Direct => inc,
                Plan::Victim => Delta {
                    active: inc.active,
                    ..Delta::default()
                },
            };
            match self.word.compare_exchange(
                cur,
                cur.wrapping_add(add.packed(1)),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(plan),
                Err(v) => cur = v,
            }
        }
    }

    /// The last step of a counted transition: applies `d` (the rest of
    /// the transition's change, or the undoing of what
    /// [`begin`](Self::begin) reserved) and leaves pending. No count goes
    /// below zero or above what `begin` reserved, so the packed addition
    /// carries into no other count.
    ///
    /// Ordering: Release, pairing with the Acquire of a later `begin`
    /// (see there); the caller's zone CAS is before it in program order.
    pub fn end(&self, d: Delta) {
        self.word
            .fetch_add(self.mask(d).packed(-1), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas() {
        let d = Delta::transition(Cond::Empty, Cond::ImpOpen);
        assert_eq!(
            d,
            Delta {
                imp: 1,
                open: 1,
                active: 1
            }
        );
        assert_eq!(
            Delta::transition(Cond::ImpOpen, Cond::ExpOpen).pos(),
            Delta::default()
        );
        assert!(Delta::transition(Cond::Full, Cond::Empty).is_zero());
    }

    #[test]
    fn packed_arithmetic_carries_nothing() {
        let r = Res::new(3, 5);
        assert_eq!(
            r.begin(Check::Required, true, Delta::of(Cond::ImpOpen)),
            Ok(Plan::Direct)
        );
        r.end(Delta::default());
        assert_eq!(
            r.counts(),
            Counts {
                imp: 1,
                open: 1,
                active: 1,
                pending: 0
            }
        );
        assert_eq!(
            r.begin(Check::None, false, Delta::default()),
            Ok(Plan::Direct)
        );
        r.end(Delta::transition(Cond::ImpOpen, Cond::Closed));
        assert_eq!(
            r.counts(),
            Counts {
                imp: 0,
                open: 0,
                active: 1,
                pending: 0
            }
        );
    }

    #[test]
    fn limits() {
        let r = Res::new(1, 2);
        let open = Delta::of(Cond::ImpOpen);
        assert_eq!(r.begin(Check::Required, true, open), Ok(Plan::Direct));
        r.end(Delta::default());
        // At the open limit with an implicitly open zone.
        assert_eq!(r.begin(Check::Required, true, open), Ok(Plan::Victim));
        // Pending: no decision at the limit.
        assert_eq!(r.begin(Check::Required, true, open), Err(Status::Busy));
        // The victim closed (its open slot is the caller's), caller open.
        r.end(Delta {
            imp: 0,
            open: 0,
            active: 0,
        });
        assert_eq!(
            r.counts(),
            Counts {
                imp: 1,
                open: 1,
                active: 2,
                pending: 0
            }
        );
        // Active limit reached.
        assert_eq!(
            r.begin(Check::Required, true, open),
            Err(Status::ZoneActiveResource)
        );
        // A closed zone may not open either: the victim's close would
        // keep the active count (null_blk's check).
        assert_eq!(
            r.begin(
                Check::Required,
                false,
                Delta::transition(Cond::Closed, Cond::ImpOpen)
            ),
            Err(Status::ZoneOpenResource)
        );
        assert_eq!(
            r.begin(Check::BestEffort, true, Delta::default()),
            Ok(Plan::Direct)
        );
        r.end(Delta::default());
    }
}
