// SPDX-License-Identifier: GPL-2.0

//! `/sys/module/rnull/host/`: tuning and counters of the host tag budget.
//!
//! | file | mode | meaning |
//! |---|---|---|
//! | `policy` | rw | `fair`, `borrow`, `none` or `lend`; reads show all, the active one in brackets |
//! | `depth` | rw | the budget, 1..=1024, resizable while I/O runs |
//! | `borrow_expiry_us` | rw | `borrow`: fair share lasts this long after the last failure (0..=10000000) |
//! | `idle_ms` | rw | a queue without I/O for this long stops counting as active (1..=100000) |
//! | `active_queues` | ro | queues counted by the fair share |
//! | `waiting_queues` | ro | queues refused and not yet re-run |
//! | `starved_queues` | ro | queues refused below their fair share, not yet drained |
//! | `in_use` | ro | tags held |
//! | `mbps` | rw | bandwidth shared by all devices in MiB/s, 0 = unlimited (`host_mbps`) |
//! | `slow_handoffs` | ro | refused queues that got a tag 1 ms or more after being woken for one |
//!
//! Writes are root-only (mode 0644); a bad value gives `-EINVAL` and
//! changes nothing.

use crate::{
    host_budget::Host,
    kapi::{
        fmt::BufWriter,
        parse::parse_i64,
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
    IdleMs,
    ActiveQueues,
    WaitingQueues,
    StarvedQueues,
    InUse,
    SlowHandoffs,
    Mbps,
}

const FIELDS: [(&CStr, Field, u16); 10] = [
    (c_str!("policy"), Field::Policy, 0o644),
    (c_str!("depth"), Field::Depth, 0o644),
    (c_str!("borrow_expiry_us"), Field::BorrowExpiryUs, 0o644),
    (c_str!("idle_ms"), Field::IdleMs, 0o644),
    (c_str!("active_queues"), Field::ActiveQueues, 0o444),
    (c_str!("waiting_queues"), Field::WaitingQueues, 0o444),
    (c_str!("starved_queues"), Field::StarvedQueues, 0o444),
    (c_str!("in_use"), Field::InUse, 0o444),
    (c_str!("slow_handoffs"), Field::SlowHandoffs, 0o444),
    (c_str!("mbps"), Field::Mbps, 0o644),
];

/// One file of the host directory.
pub(crate) struct HostFile {
    host: Arc<Host>,
    field: Field,
}

/// Parses `input` as an integer in `min..=max`.
fn parse_in(input: &[u8], min: i64, max: i64) -> Result<u64> {
    match parse_i64(input) {
        Some(v) if (min..=max).contains(&v) => u64::try_from(v).map_err(|_| EINVAL),
        _ => Err(EINVAL),
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
            Field::IdleMs => writeln!(out, "{}", t.idle_ns() / 1_000_000),
            Field::ActiveQueues => writeln!(out, "{}", t.active_queues()),
            Field::WaitingQueues => writeln!(out, "{}", t.waiting_queues()),
            Field::StarvedQueues => writeln!(out, "{}", t.starved_queues()),
            Field::InUse => writeln!(out, "{}", t.in_use()),
            Field::SlowHandoffs => writeln!(out, "{}", self.host.slow_handoffs()),
            Field::Mbps => writeln!(out, "{}", self.host.link.mib_per_s()),
        };
        r.map_err(|_| EINVAL)
    }

    fn store(&self, input: &[u8]) -> Result {
        let t = &self.host.tags;
        match self.field {
            Field::Policy => t.set_policy(Policy::from_name(input).ok_or(EINVAL)?),
            Field::Depth => {
                let depth = u32::try_from(parse_in(input, 1, 1024)?).map_err(|_| EINVAL)?;
                t.set_depth(depth).map_err(|_| EINVAL)?;
                // A larger budget may unblock waiting queues right away.
                self.host.wake(u64::MAX);
            }
            Field::BorrowExpiryUs => t.set_borrow_expiry_ns(parse_in(input, 0, 10_000_000)? * 1000),
            Field::IdleMs => t.set_idle_ns(parse_in(input, 1, 100_000)? * 1_000_000),
            Field::Mbps => {
                let v = params::HOST_MBPS.range().parse_u64(&"host/mbps", input)?;
                self.host.link.set_mib_per_s(v).map_err(|_| EINVAL)?;
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
    /// Creates `/sys/module/rnull/host/*`.
    pub(crate) fn new(host: &Arc<Host>) -> Result<Self> {
        let mut dir = Dir::new(&module_kobject(), c_str!("host"))?;
        for (name, field, mode) in FIELDS {
            let file = HostFile {
                host: host.clone(),
                field,
            };
            dir.add(name, mode, file)?;
        }
        Ok(Self { _dir: dir })
    }
}
