// SPDX-License-Identifier: GPL-2.0

//! `/sys/module/<module>/host/`: tuning and counters of the host tag budget.
//!
//! | file | mode | meaning |
//! |---|---|---|
//! | `policy` | rw | one of rtags' policies (`rtags::policy::Policy::ALL`); reads show all, the active one in brackets |
//! | `depth` | rw | the budget, 1..=1024, resizable while I/O runs |
//! | `borrow_expiry_us` | rw | `borrow`: the fair share lasts this long after a starved device's last refusal, and after its drain (from the next 10 ms tick) (0..=10000000, default 5000); a write, like a `policy` write, forgets both |
//! | `window_shared_pct` | rw | `window`: percent of the budget shared; the rest is one window per active device, and each window has an equal slice of the shared part (a device without a window yet may use all of it) (0..=100, default 10) |
//! | `idle_ms` | rw | a queue without I/O for this long stops counting as active (1..=100000) |
//! | `active_queues` | ro | queues counted by the fair share |
//! | `waiting_queues` | ro | queues refused and not yet re-run |
//! | `starved_queues` | ro | queues refused below their fair share, not yet drained, idle or found by a tick holding their share |
//! | `in_use` | ro | tags held |
//! | `mbps` | rw | bandwidth shared by all devices in MiB/s, 0 = unlimited (`host_mbps`) |
//! | `slow_handoffs` | ro | refused queues that waited 1 ms or more after a tag they could use was freed |
//!
//! Writes are root-only (mode 0644); a bad value gives `-EINVAL`, changes
//! nothing and logs a warning naming the file and what it accepts (each
//! file's warnings rate-limited as printk's default, 10 per 5 s). A change
//! of `policy`, `depth` or `window_shared_pct` re-runs the waiting devices:
//! under `window` it moves the windows, and a device refused before may
//! wait for a tag that no completion would hand it.

use crate::{
    host_budget::Host,
    kapi::{
        fmt::BufWriter,
        param::{Bytes, IntRange},
        ratelimit::RateLimit,
        sysfs::{module_kobject, AttrOps, Dir},
    },
    params,
    rtags::policy::Policy,
};
use core::fmt::Write;
use kernel::{c_str, prelude::*, str::CStr, sync::Arc};

#[derive(Clone, Copy)]
enum Field {
    Policy,
    Depth,
    BorrowExpiryUs,
    WindowSharedPct,
    IdleMs,
    ActiveQueues,
    WaitingQueues,
    StarvedQueues,
    InUse,
    SlowHandoffs,
    Mbps,
}

const FIELDS: [(&CStr, Field, u16); 11] = [
    (c_str!("policy"), Field::Policy, 0o644),
    (c_str!("depth"), Field::Depth, 0o644),
    (c_str!("borrow_expiry_us"), Field::BorrowExpiryUs, 0o644),
    (c_str!("window_shared_pct"), Field::WindowSharedPct, 0o644),
    (c_str!("idle_ms"), Field::IdleMs, 0o644),
    (c_str!("active_queues"), Field::ActiveQueues, 0o444),
    (c_str!("waiting_queues"), Field::WaitingQueues, 0o444),
    (c_str!("starved_queues"), Field::StarvedQueues, 0o444),
    (c_str!("in_use"), Field::InUse, 0o444),
    (c_str!("slow_handoffs"), Field::SlowHandoffs, 0o444),
    (c_str!("mbps"), Field::Mbps, 0o644),
];

/// `depth`: as `host_queue_depth`, but a budget cannot be switched off
/// while devices use it.
const DEPTH: IntRange = IntRange::new(1, 1024);
/// `window_shared_pct`: percent of the budget outside the windows.
const WINDOW_SHARED_PCT: IntRange = IntRange::new(0, 100);
/// `idle_ms`: how long without I/O before a queue stops counting as active.
const IDLE_MS: IntRange = IntRange::new(1, 100_000);

/// One file of the host directory.
pub(crate) struct HostFile {
    host: Arc<Host>,
    field: Field,
    /// The file's name, for the log line of a refused write.
    name: &'static CStr,
    /// The rate limit of the log lines of refused writes.
    log: RateLimit,
}

/// The policy names, comma-separated, for log lines.
struct PolicyNames;

impl core::fmt::Display for PolicyNames {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, p) in Policy::ALL.iter().enumerate() {
            if i != 0 {
                f.write_str(", ")?;
            }
            f.write_str(p.name())?;
        }
        Ok(())
    }
}

impl HostFile {
    /// Parses `input` as an integer in `range`; anything else is refused
    /// with a log line naming the file and the range.
    fn parse_in(&self, input: &[u8], range: &IntRange) -> Result<u64> {
        range.parse_u64(&format_args!("host/{}", self.name), &self.log, input)
    }

    /// Parses `input` as a policy name; anything else is refused with a
    /// warning naming the file and the names.
    fn parse_policy(&self, input: &[u8]) -> Result<Policy> {
        Policy::from_name(input).ok_or_else(|| {
            if self.log.allow(&format_args!("host/{}", self.name)) {
                pr_warn!(
                    "host/{}: '{}' refused: must be one of {}\n",
                    self.name,
                    Bytes(input.strip_suffix(b"\n").unwrap_or(input)),
                    PolicyNames
                );
            }
            EINVAL
        })
    }
}

impl AttrOps for HostFile {
    fn show(&self, out: &mut BufWriter<'_>) -> Result {
        let t = &self.host.tags;
        let r = match self.field {
            Field::Policy => {
                let active = t.policy();
                for (i, p) in Policy::ALL.iter().enumerate() {
                    let sep = if i == 0 { "" } else { " " };
                    if *p == active {
                        write!(out, "{sep}[{}]", p.name()).map_err(|_| EINVAL)?;
                    } else {
                        write!(out, "{sep}{}", p.name()).map_err(|_| EINVAL)?;
                    }
                }
                writeln!(out)
            }
            Field::Depth => writeln!(out, "{}", t.depth()),
            Field::BorrowExpiryUs => writeln!(out, "{}", t.borrow_expiry_ns() / 1000),
            Field::WindowSharedPct => writeln!(out, "{}", t.shared_pct()),
            Field::IdleMs => writeln!(out, "{}", t.idle_ns() / 1_000_000),
            Field::ActiveQueues => writeln!(out, "{}", t.active_queues()),
            Field::WaitingQueues => writeln!(out, "{}", t.waiting_queues()),
            Field::StarvedQueues => writeln!(out, "{}", t.starved_queues()),
            Field::InUse => writeln!(out, "{}", t.in_use()),
            Field::SlowHandoffs => writeln!(out, "{}", self.host.slow_handoffs()),
            Field::Mbps => writeln!(out, "{}", self.host.link.link().mib_per_s()),
        };
        r.map_err(|_| EINVAL)
    }

    fn store(&self, input: &[u8]) -> Result {
        let t = &self.host.tags;
        match self.field {
            Field::Policy => {
                t.set_policy(self.parse_policy(input)?);
                // Under `window`, a device refused under the old policy
                // may wait for a tag no completion would hand it.
                self.host.wake(t.take_waiters());
            }
            Field::Depth => {
                let depth = u32::try_from(self.parse_in(input, &DEPTH)?).map_err(|_| EINVAL)?;
                t.set_depth(depth).map_err(|_| EINVAL)?;
                // A larger budget may unblock waiting queues right away
                // (and `window`'s windows moved). Only the queues that wait:
                // waking the others would stamp hand-offs that never were.
                self.host.wake(t.take_waiters());
            }
            Field::BorrowExpiryUs => {
                t.set_borrow_expiry_ns(
                    self.parse_in(input, params::BORROW_EXPIRY_US.range())? * 1000,
                );
                // A shorter expiry may end `borrow`'s contention, and with it
                // the fair share a waiting device was refused at.
                self.host.wake(t.take_waiters());
            }
            Field::WindowSharedPct => {
                let pct =
                    u32::try_from(self.parse_in(input, &WINDOW_SHARED_PCT)?).map_err(|_| EINVAL)?;
                t.set_shared_pct(pct).map_err(|_| EINVAL)?;
                // `window`'s windows moved.
                self.host.wake(t.take_waiters());
            }
            Field::IdleMs => t.set_idle_ns(self.parse_in(input, &IDLE_MS)? * 1_000_000),
            Field::Mbps => {
                let v = params::HOST_MBPS
                    .range()
                    .parse_u64(&"host/mbps", &self.log, input)?;
                self.host.link.set_mib_per_s(v)?;
            }
            _ => return Err(EPERM),
        }
        Ok(())
    }
}

/// The host directory and its files; files drop before the directory.
pub(crate) struct HostAttrs {
    _dir: Dir<HostFile>,
}

impl HostAttrs {
    /// Creates `/sys/module/<module>/host/*`.
    pub(crate) fn new(host: &Arc<Host>) -> Result<Self> {
        let mut dir = Dir::new(&module_kobject(), c_str!("host"))?;
        for (name, field, mode) in FIELDS {
            let file = HostFile {
                host: host.clone(),
                field,
                name,
                log: RateLimit::new(),
            };
            dir.add(name, mode, file)?;
        }
        Ok(Self { _dir: dir })
    }
}
