//! Helpers of the host's unit tests.

use super::super::clock::Clock;
use super::super::queue::QueueTags;
use super::super::sync::AtomicU32;
use super::{HostTags, Refusal};
use core::cell::Cell;
use std::vec::Vec;

pub(crate) fn take(h: &HostTags, q: &QueueTags, n: u32, now: u64) -> Vec<u32> {
    let hint = AtomicU32::new(0);
    (0..n).map(|_| h.get(q, &hint, now).unwrap()).collect()
}

/// Puts `tags` of `q` back at `now` and checks that none is left held.
pub(crate) fn give_back(h: &HostTags, q: &QueueTags, tags: Vec<u32>, qs: &[&QueueTags], now: u64) {
    for t in tags {
        h.put(q, t, qs, now);
    }
    assert_eq!(h.in_use(), 0);
}

/// On a 64-tag host: `q1` active, then refused at time 10 while `q0`
/// holds every tag (taken at 0), which starves it under `Borrow`.
/// Returns `q0`'s tags.
pub(crate) fn starve_q1(
    h: &HostTags,
    q0: &QueueTags,
    q1: &QueueTags,
    hint: &AtomicU32,
) -> Vec<u32> {
    let t = h.get(q1, hint, 0).unwrap();
    h.put(q1, t, &[q0, q1], 0);
    let held = take(h, q0, 64, 0);
    assert_eq!(h.get(q1, hint, 10), Err(Refusal::Exhausted));
    held
}

/// A clock that counts how often it is read.
pub(crate) struct Counting {
    pub(crate) now: Cell<u64>,
    reads: Cell<u32>,
}

impl Counting {
    pub(crate) fn new(now: u64) -> Self {
        Self {
            now: Cell::new(now),
            reads: Cell::new(0),
        }
    }

    /// Reads since the last call.
    pub(crate) fn take_reads(&self) -> u32 {
        self.reads.replace(0)
    }
}

impl Clock for &Counting {
    fn now_ns(&self) -> u64 {
        self.reads.set(self.reads.get() + 1);
        self.now.get()
    }
}
