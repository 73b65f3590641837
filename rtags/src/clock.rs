//! Time sources, read only when a decision needs the time.
//!
//! [`super::host::HostTags::get`] and [`super::host::HostTags::limit`] take
//! a [`Clock`] instead of a timestamp: the common (non-refused) path never
//! needs the time, and reading a clock (`ktime_get()` in the kernel) is one
//! of the most expensive things on the per-I/O path. The driver passes its
//! clock function (`get(q, &hint, now_ns)`), tests and simulations pass a
//! plain `u64` (a fixed time).

use core::cell::Cell;

/// A monotonic time source in nanoseconds.
pub trait Clock {
    /// The current time (ns, monotonic, caller-defined epoch).
    fn now_ns(&self) -> u64;
}

/// A fixed time: the value itself.
impl Clock for u64 {
    fn now_ns(&self) -> u64 {
        *self
    }
}

/// A clock function or closure, called on every read.
impl<F: Fn() -> u64> Clock for F {
    fn now_ns(&self) -> u64 {
        self()
    }
}

/// Reads `clock` at most once, on first use (one call of a host
/// operation; not shared between threads).
pub(super) struct LazyNow<'a, C> {
    clock: &'a C,
    now: Cell<Option<u64>>,
}

impl<'a, C: Clock> LazyNow<'a, C> {
    /// A lazy reading of `clock`; nothing is read yet.
    pub(super) fn new(clock: &'a C) -> Self {
        Self {
            clock,
            now: Cell::new(None),
        }
    }
}

impl<C: Clock> Clock for LazyNow<'_, C> {
    fn now_ns(&self) -> u64 {
        if let Some(now) = self.now.get() {
            return now;
        }
        let now = self.clock.now_ns();
        self.now.set(Some(now));
        now
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fixed_function_and_lazy() {
        assert_eq!(42u64.now_ns(), 42);
        let calls = Cell::new(0u32);
        let f = || {
            calls.set(calls.get() + 1);
            u64::from(calls.get()) * 10
        };
        fn read<C: Clock>(clock: C) -> u64 {
            clock.now_ns()
        }
        assert_eq!(read(f), 10);
        assert_eq!(read(f), 20);
        let lazy = LazyNow::new(&f);
        assert_eq!(calls.get(), 2, "creating a LazyNow reads nothing");
        assert_eq!(lazy.now_ns(), 30);
        assert_eq!(lazy.now_ns(), 30);
        assert_eq!(calls.get(), 3, "read once");
    }
}
