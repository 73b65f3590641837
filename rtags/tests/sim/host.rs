//! A userspace stand-in for rnull's host tag budget under fio: devices whose
//! jobs keep a queue depth of requests outstanding, dispatched the way
//! blk-mq and rnull do, on a simulated clock, through rtags' `HostTags` and
//! `Link`, the very code the module runs.
//!
//! What it models, after rnull's `queue_rq` and completion path:
//!
//! * A job submits a request; the device's queue is run: the requests not
//!   yet started are dispatched in order, each asking `HostTags::get` for a
//!   tag, until one is refused (it stays at the head of the queue, as a
//!   request refused with `BLK_STS_DEV_RESOURCE` stays on
//!   `hctx->dispatch`). A new submission runs the queue again.
//! * A started request completes after the device's fixed completion time
//!   or once its bytes have crossed the device's and the host's links
//!   (`mbps`, `host_mbps`), whichever is later.
//! * The completion puts the tag back and re-runs the devices in the mask
//!   `put` returns, in index order (`Host::wake` walks the devices that
//!   way), `wake_ns` later; the job submits its next request `turnaround`
//!   later (plus a seeded jitter), or at its next rate slot (`rate_iops`).
//! * The host tick runs every `tick_ns` (rnull: 10 ms) and its mask is
//!   woken the same way.
//!
//! It does not model CPUs: every event happens at its time. Simultaneous
//! events run in the order they were scheduled, so a wake (scheduled by a
//! put) runs before the completing job's next submission when
//! `wake_ns <= turnaround`.
#[path = "rng.rs"]
mod rng;

use rtags::bitmap::initial_hint;
use rtags::host::HostTags;
use rtags::link::Link;
use rtags::policy::Policy;
use rtags::queue::QueueTags;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::atomic::AtomicU32;

/// One device and its fio job.
#[derive(Clone, Debug)]
pub struct Device {
    /// The job's iodepth.
    pub qd: u32,
    /// Bytes per request.
    pub bytes: u64,
    /// Completion time after the start (`irqmode=2`'s `completion_nsec`).
    pub completion_ns: u64,
    /// The device's bandwidth limit in MiB/s (`rnull/mbps`), 0 = none.
    pub mbps: u64,
    /// `rate_iops`: at most one submission per this many ns (0: none).
    pub interval_ns: u64,
    /// Mean time from a completion to the job's next submission.
    pub turnaround_ns: u64,
}

impl Device {
    /// A job of `qd` requests of `bytes` completing after `completion_ns`.
    pub fn new(qd: u32, bytes: u64, completion_ns: u64) -> Self {
        Self {
            qd,
            bytes,
            completion_ns,
            mbps: 0,
            interval_ns: 0,
            turnaround_ns: 5_000,
        }
    }

    /// The same behind a device link of `mbps` MiB/s.
    pub fn mbps(mut self, mbps: u64) -> Self {
        self.mbps = mbps;
        self
    }

    /// The same at most `iops` submissions a second.
    pub fn rate_iops(mut self, iops: u64) -> Self {
        self.interval_ns = 1_000_000_000 / iops;
        self
    }
}

/// One run's setting.
#[derive(Clone, Debug)]
pub struct HostSim {
    /// `host_queue_depth`.
    pub depth: u32,
    /// `tag_policy`.
    pub policy: Policy,
    /// `host_mbps`, 0 = none.
    pub host_mbps: u64,
    /// The devices, index `i` running `devices[i]`.
    pub devices: Vec<Device>,
    /// `host/borrow_expiry_us` in ns; `None`: rtags' default.
    pub borrow_expiry_ns: Option<u64>,
    /// `host/idle_ms` in ns.
    pub idle_ns: u64,
    /// The driver's tick period.
    pub tick_ns: u64,
    /// From a put to the re-run of the devices it woke.
    pub wake_ns: u64,
    /// Each turnaround is off its mean by up to this much, either way.
    pub jitter_ns: u64,
    /// Simulated time, warm-up included.
    pub run_ns: u64,
    /// Completions before this are not counted.
    pub warmup_ns: u64,
}

/// What a run did, per device.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Requests completed after the warm-up.
    pub ios: Vec<u64>,
    /// Refused `get`s over the whole run.
    pub refusals: Vec<u64>,
    /// Latency (submitted to completed) of each counted request.
    pub latency_ns: Vec<Vec<u64>>,
    /// Time counted.
    pub run_ns: u64,
    /// Bytes per request, per device.
    pub bytes: Vec<u64>,
    /// How often a tick found each device marked starved.
    pub starved_ticks: Vec<u64>,
    /// Each device's limit right after each tick past the warm-up.
    pub limits: Vec<Vec<u32>>,
}

impl Outcome {
    /// IOPS of device `d`.
    pub fn iops(&self, d: usize) -> f64 {
        self.ios[d] as f64 * 1e9 / self.run_ns as f64
    }

    /// Bandwidth of device `d` in MiB/s.
    pub fn mib_per_s(&self, d: usize) -> f64 {
        self.iops(d) * self.bytes[d] as f64 / f64::from(1u32 << 20)
    }

    /// The smaller bandwidth of devices 0 and 1 over the larger (1: even).
    pub fn split(&self) -> f64 {
        let (a, b) = (self.mib_per_s(0), self.mib_per_s(1));
        a.min(b) / a.max(b).max(f64::MIN_POSITIVE)
    }

    /// How often device `d`'s limit changed from one tick to the next.
    pub fn limit_changes(&self, d: usize) -> usize {
        self.limits[d].windows(2).filter(|w| w[0] != w[1]).count()
    }

    /// Mean latency of device `d` in ns.
    pub fn mean_latency_ns(&self, d: usize) -> f64 {
        let l = &self.latency_ns[d];
        l.iter().sum::<u64>() as f64 / l.len().max(1) as f64
    }
}

/// What happens at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The device's job submits a request.
    Submit(usize),
    /// The device's queue is run (a wake-up).
    Run(usize),
    /// A request of the device completes: (device, tag, submitted at).
    Complete(usize, u32, u64),
    /// The host tick.
    Tick,
}

/// A device's state.
struct Dev {
    /// Submitted, not started: submission times, in order.
    pending: VecDeque<u64>,
    /// Earliest next submission under `rate_iops`.
    next_slot: u64,
    /// The device's link.
    link: Link,
    /// Allocation hint.
    hint: AtomicU32,
    /// Jitter generator (splitmix64), seeded by the index.
    rng: u64,
}

impl Dev {
    fn random(&mut self) -> u64 {
        rng::splitmix64(&mut self.rng)
    }
}

impl HostSim {
    /// `devices` on a budget of `depth` tags under `policy`, with rnull's
    /// tick and the bench's settings otherwise (2 s, 0.2 s of warm-up).
    pub fn new(depth: u32, policy: Policy, devices: Vec<Device>) -> Self {
        Self {
            depth,
            policy,
            host_mbps: 0,
            devices,
            borrow_expiry_ns: None,
            idle_ns: 100_000_000,
            tick_ns: 10_000_000,
            wake_ns: 2_000,
            jitter_ns: 1_000,
            run_ns: 2_200_000_000,
            warmup_ns: 200_000_000,
        }
    }

    /// Runs the simulation.
    pub fn run(&self) -> Outcome {
        let host = HostTags::new(self.depth, self.policy).expect("valid depth");
        if let Some(ns) = self.borrow_expiry_ns {
            host.set_borrow_expiry_ns(ns);
        }
        host.set_idle_ns(self.idle_ns);
        let host_link = Link::new();
        host_link.set_mib_per_s(self.host_mbps).expect("valid rate");
        let n = self.devices.len();
        let queues: Vec<QueueTags> = (0..n as u32).map(QueueTags::new).collect();
        let mut devs: Vec<Dev> = (0..n)
            .map(|i| {
                let link = Link::new();
                link.set_mib_per_s(self.devices[i].mbps)
                    .expect("valid rate");
                Dev {
                    pending: VecDeque::new(),
                    next_slot: 0,
                    link,
                    hint: AtomicU32::new(initial_hint(i as u32)),
                    rng: i as u64,
                }
            })
            .collect();
        let mut out = Outcome {
            ios: vec![0; n],
            refusals: vec![0; n],
            latency_ns: vec![Vec::new(); n],
            run_ns: self.run_ns - self.warmup_ns,
            bytes: self.devices.iter().map(|d| d.bytes).collect(),
            starved_ticks: vec![0; n],
            limits: vec![Vec::new(); n],
        };
        let mut events: BinaryHeap<Reverse<(u64, u64, Event)>> = BinaryHeap::new();
        let mut seq = 0u64;
        let mut push = |events: &mut BinaryHeap<_>, t: u64, e: Event| {
            seq += 1;
            events.push(Reverse((t, seq, e)));
        };
        for (i, d) in self.devices.iter().enumerate() {
            for _ in 0..d.qd {
                push(&mut events, 0, Event::Submit(i));
            }
        }
        push(&mut events, self.tick_ns, Event::Tick);
        while let Some(Reverse((now, _, event))) = events.pop() {
            if now >= self.run_ns {
                break;
            }
            let run = match event {
                Event::Submit(i) => {
                    let d = &self.devices[i];
                    if d.interval_ns != 0 && now < devs[i].next_slot {
                        // Not yet: fio waits for the rate slot.
                        let at = devs[i].next_slot;
                        push(&mut events, at, Event::Submit(i));
                        continue;
                    }
                    devs[i].next_slot = now + d.interval_ns;
                    devs[i].pending.push_back(now);
                    Some(i)
                }
                Event::Run(i) => Some(i),
                Event::Complete(i, tag, submitted) => {
                    let woken = host.put(&queues[i], tag, &queues, now);
                    for w in (0..n).filter(|&w| queues[w].waiter_bit() & woken != 0) {
                        push(&mut events, now + self.wake_ns, Event::Run(w));
                    }
                    if now >= self.warmup_ns {
                        out.ios[i] += 1;
                        out.latency_ns[i].push(now - submitted);
                    }
                    let dev = &mut devs[i];
                    let jitter = dev.random() % (2 * self.jitter_ns + 1);
                    let d = &self.devices[i];
                    let at = (now + d.turnaround_ns + jitter).saturating_sub(self.jitter_ns);
                    push(&mut events, at, Event::Submit(i));
                    None
                }
                Event::Tick => {
                    let woken = host.tick(&queues, now);
                    for w in (0..n).filter(|&w| queues[w].waiter_bit() & woken != 0) {
                        push(&mut events, now + self.wake_ns, Event::Run(w));
                    }
                    for (i, q) in queues.iter().enumerate() {
                        out.starved_ticks[i] += u64::from(q.is_starved());
                        if now >= self.warmup_ns {
                            out.limits[i].push(host.limit(q, now));
                        }
                    }
                    push(&mut events, now + self.tick_ns, Event::Tick);
                    None
                }
            };
            // A queue run: start the pending requests in order until one
            // is refused.
            if let Some(i) = run {
                let d = &self.devices[i];
                while let Some(&submitted) = devs[i].pending.front() {
                    let tag = match host.get(&queues[i], &devs[i].hint, now) {
                        Ok(tag) => tag,
                        Err(_) => {
                            out.refusals[i] += 1;
                            break;
                        }
                    };
                    devs[i].pending.pop_front();
                    let crossed = [&devs[i].link, &host_link]
                        .into_iter()
                        .filter_map(|l| l.reserve(now, d.bytes))
                        .max()
                        .unwrap_or(now);
                    let done = crossed.max(now + d.completion_ns);
                    push(&mut events, done, Event::Complete(i, tag, submitted));
                }
            }
        }
        out
    }
}
