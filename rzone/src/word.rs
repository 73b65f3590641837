//! One zone's state in a 64-bit word, so that a single compare-exchange
//! moves its condition and write pointer together.
//!
//! | bits | field |
//! | --- | --- |
//! | 0..48 | write pointer, sectors from the zone start ([`WP_INVALID`] for read-only and offline zones) |
//! | 48..59 | writes in flight: reserved, data not yet copied ([`INFLIGHT_MAX`] at most) |
//! | 59 | locked: a reset is discarding the zone's data |
//! | 60..64 | condition, its `blk_zone_cond` value |

use super::cond::Cond;

const WP_BITS: u32 = 48;
const WP_MASK: u64 = (1 << WP_BITS) - 1;
const INFLIGHT_SHIFT: u32 = WP_BITS;
const INFLIGHT_BITS: u32 = 11;
const LOCK_BIT: u64 = 1 << (INFLIGHT_SHIFT + INFLIGHT_BITS);
const COND_SHIFT: u32 = 60;

/// The write pointer of a read-only or offline zone (null_blk's
/// `NULL_ZONE_INVALID_WP`); a report gives `u64::MAX`.
pub const WP_INVALID: u64 = WP_MASK;

/// The most writes in flight on one zone; one more is [`Busy`].
///
/// [`Busy`]: super::cond::Status::Busy
pub const INFLIGHT_MAX: u64 = (1 << INFLIGHT_BITS) - 1;

/// The amount to add to a word for one more write in flight.
pub const ONE_INFLIGHT: u64 = 1 << INFLIGHT_SHIFT;

/// A zone's state: condition, write pointer, writes in flight, lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word(pub u64);

impl Word {
    /// Condition `cond`, write pointer `wp` (an offset in the zone, or
    /// [`WP_INVALID`]), nothing in flight, unlocked.
    pub fn new(cond: Cond, wp: u64) -> Word {
        debug_assert!(wp <= WP_MASK);
        Word((u64::from(cond as u8) << COND_SHIFT) | (wp & WP_MASK))
    }

    /// The condition.
    pub fn cond(self) -> Cond {
        // Every word is built from a `Cond`: the fallback is never taken.
        Cond::from_raw((self.0 >> COND_SHIFT) as u8).unwrap_or(Cond::Offline)
    }

    /// The write pointer, an offset in the zone, or [`WP_INVALID`].
    pub fn wp(self) -> u64 {
        self.0 & WP_MASK
    }

    /// Writes reserved whose data is not yet copied.
    pub fn inflight(self) -> u64 {
        (self.0 >> INFLIGHT_SHIFT) & INFLIGHT_MAX
    }

    /// Whether a reset holds the zone while it discards its data.
    pub fn locked(self) -> bool {
        self.0 & LOCK_BIT != 0
    }

    /// The same word with condition `cond`.
    pub fn with_cond(self, cond: Cond) -> Word {
        Word((self.0 & !(0xf << COND_SHIFT)) | (u64::from(cond as u8) << COND_SHIFT))
    }

    /// The same word with write pointer `wp`.
    pub fn with_wp(self, wp: u64) -> Word {
        debug_assert!(wp <= WP_MASK);
        Word((self.0 & !WP_MASK) | (wp & WP_MASK))
    }

    /// The same word with one more write in flight; the caller checked
    /// `inflight() < INFLIGHT_MAX`.
    pub fn plus_inflight(self) -> Word {
        debug_assert!(self.inflight() < INFLIGHT_MAX);
        Word(self.0 + ONE_INFLIGHT)
    }

    /// The same word, locked.
    pub fn lock(self) -> Word {
        Word(self.0 | LOCK_BIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_independent() {
        let w = Word::new(Cond::ImpOpen, 12345);
        assert_eq!(
            (w.cond(), w.wp(), w.inflight(), w.locked()),
            (Cond::ImpOpen, 12345, 0, false)
        );
        let w = w
            .plus_inflight()
            .plus_inflight()
            .with_cond(Cond::Full)
            .with_wp(WP_INVALID);
        assert_eq!(
            (w.cond(), w.wp(), w.inflight()),
            (Cond::Full, WP_INVALID, 2)
        );
        let w = w.lock();
        assert!(w.locked());
        assert_eq!(
            (w.cond(), w.wp(), w.inflight()),
            (Cond::Full, WP_INVALID, 2)
        );
        let w = Word(w.0 - 2 * ONE_INFLIGHT);
        assert_eq!((w.cond(), w.inflight(), w.locked()), (Cond::Full, 0, true));
        for c in [
            Cond::NotWp,
            Cond::Empty,
            Cond::ExpOpen,
            Cond::Closed,
            Cond::ReadOnly,
            Cond::Offline,
        ] {
            assert_eq!(Word::new(c, 0).with_wp(7).cond(), c);
        }
    }
}
