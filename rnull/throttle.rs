// SPDX-License-Identifier: GPL-2.0

//! Bandwidth links as the driver holds them ([`Throttle`]), and the one
//! check every request makes: is any link in the module limited at all?
//!
//! Without a limit (the common case) a request must not pay for the
//! feature: [`any_limited`] is one load of a module-wide counter of limited
//! links, instead of a load per link through the device and the host.

use crate::rtags::link::Link;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::prelude::*;

/// Limited links in the module.
static LIMITED_LINKS: AtomicUsize = AtomicUsize::new(0);

/// Whether any link in the module has a limit.
#[inline]
pub(crate) fn any_limited() -> bool {
    // Relaxed: a request racing with a rate change may see either; the
    // link's own rate, read under it, decides what happens.
    LIMITED_LINKS.load(Ordering::Relaxed) != 0
}

/// A bandwidth link counted in [`any_limited`] while it has a limit.
pub(crate) struct Throttle {
    link: Link,
}

impl Throttle {
    /// A link limited to `mib_per_s` (0: unlimited).
    pub(crate) fn new(mib_per_s: u64) -> Result<Self> {
        let t = Self { link: Link::new() };
        t.set_mib_per_s(mib_per_s)?;
        Ok(t)
    }

    /// The link.
    pub(crate) fn link(&self) -> &Link {
        &self.link
    }

    /// Sets the rate (0: unlimited), keeping the module's count.
    pub(crate) fn set_mib_per_s(&self, rate: u64) -> Result {
        let old = self.link.set_mib_per_s(rate).map_err(|_| EINVAL)?;
        // The swap inside `set_mib_per_s` orders concurrent setters: each
        // sees the rate the previous one left, so transitions pair up.
        match (old == 0, rate == 0) {
            (true, false) => {
                LIMITED_LINKS.fetch_add(1, Ordering::Relaxed);
            }
            (false, true) => {
                LIMITED_LINKS.fetch_sub(1, Ordering::Relaxed);
            }
            _ => {}
        }
        Ok(())
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        if self.link.is_limited() {
            // Relaxed: see `any_limited`.
            LIMITED_LINKS.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
