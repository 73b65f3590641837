//! A userspace stand-in for rnull's spindle: fio jobs at iodepth 1 on a
//! simulated clock, dispatched the way the spindle does (arrival order into
//! the drive's queue, or the slice scheduler), served by the disk
//! model, the very code the module runs.
//!
//! Each job is a ctx of its own (a job pinned to its CPU) and issues its
//! next request `turnaround` after the previous one completed: what a fio
//! job does between `io_getevents` and `io_submit`.

// The seeded generator of rtags' host simulation too: one splitmix64 for
// the simulations of both crates.
#[path = "../../../rtags/tests/sim/rng.rs"]
mod rng;

// Each test crate and the example use a part of it.
#[allow(
    dead_code,
    reason = "shared by tests/disk_sim.rs and examples/herrmann_table.rs"
)]
pub mod herrmann;

use rdisk::disk::{Command, Disk, DiskParams, DiskStats};
use rdisk::slice::{SliceSched, SliceStart};

/// Bytes per request.
pub const BS: u32 = 4096;
/// Sectors per request.
const BS_SECTORS: u64 = BS as u64 / 512;
/// Distance between the regions of sequential jobs: 1 GiB.
pub const REGION_SECTORS: u64 = 1 << 21;

/// What a job does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Reads its region from the start, 4 KiB at a time.
    SeqRead,
    /// Writes its region from the start, 4 KiB at a time.
    SeqWrite,
    /// Reads 4 KiB at uniformly random places over the whole disk.
    RandRead,
}

/// One run's setting.
#[derive(Clone, Debug)]
pub struct Sim {
    /// The modelled disk.
    pub disk: DiskParams,
    /// The jobs, ctx `i` running `jobs[i]`.
    pub jobs: Vec<Pattern>,
    /// Mean time from a completion to the job's next request.
    pub turnaround_ns: u64,
    /// Each turnaround is off the mean by up to this much, either way
    /// (drawn from the job's seeded generator): a real host's timing
    /// varies, and an exact one locks the simulation into resonances
    /// between the requests' timing and the rotation.
    pub jitter_ns: u64,
    /// `time_slice_us` in ns; 0: arrival order, no scheduler.
    pub slice_ns: u64,
    /// When a slice's clock starts (rnull's default: first completion).
    pub start: SliceStart,
    /// Simulated time, warm-up included.
    pub run_ns: u64,
    /// What completes before this is not counted (fio's `ramp_time`): the
    /// cache starts empty and takes about a second to settle.
    pub warmup_ns: u64,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Requests completed by each job.
    pub ios: Vec<u64>,
    /// Latency (queued to completed) of each completed request, by job.
    pub latency_ns: Vec<Vec<u64>>,
    /// The drive's counters after the warm-up.
    pub stats: DiskStats,
    /// Simulated time counted.
    pub run_ns: u64,
}

impl Outcome {
    /// IOPS of all jobs.
    pub fn iops(&self) -> u64 {
        self.ios.iter().sum::<u64>() * 1_000_000_000 / self.run_ns
    }

    /// IOPS of job `j`.
    pub fn job_iops(&self, j: usize) -> u64 {
        self.ios[j] * 1_000_000_000 / self.run_ns
    }

    /// The `pct`th percentile latency of job `j` in ns.
    #[allow(dead_code, reason = "only examples/herrmann_table.rs prints latencies")]
    pub fn percentile_ns(&self, j: usize, pct: u64) -> u64 {
        let mut l = self.latency_ns[j].clone();
        l.sort_unstable();
        let i = (l.len() as u64 * pct / 100).min(l.len().saturating_sub(1) as u64);
        l.get(i as usize).copied().unwrap_or(0)
    }
}

/// A job's state.
struct Job {
    pattern: Pattern,
    /// Next sequential sector.
    next: u64,
    /// Random state (splitmix64), seeded by the job's index.
    rng: u64,
    /// When its next request arrives (None: one is queued or in flight).
    arrival: Option<u64>,
    /// Its queued request.
    queued: Option<Command>,
}

impl Job {
    /// The next number of the job's generator (splitmix64).
    fn random(&mut self) -> u64 {
        rng::splitmix64(&mut self.rng)
    }

    fn command(&mut self, capacity: u64, now: u64) -> Command {
        let sector = match self.pattern {
            Pattern::SeqRead | Pattern::SeqWrite => {
                let s = self.next;
                self.next += BS_SECTORS;
                s
            }
            Pattern::RandRead => self.random() % (capacity / BS_SECTORS) * BS_SECTORS,
        };
        Command {
            sector,
            bytes: BS,
            write: self.pattern == Pattern::SeqWrite,
            queued_ns: now,
        }
    }
}

impl Sim {
    /// `jobs` jobs of `pattern` on the default disk of `capacity_sectors`.
    pub fn new(capacity_sectors: u64, pattern: Pattern, jobs: usize) -> Self {
        Self {
            disk: DiskParams::new(capacity_sectors),
            jobs: vec![pattern; jobs],
            turnaround_ns: 25_000,
            jitter_ns: 5_000,
            slice_ns: 0,
            start: SliceStart::FirstCompletion,
            run_ns: 5_000_000_000,
            warmup_ns: 1_000_000_000,
        }
    }

    /// The same with `time_slice_us = slice_us`.
    pub fn slice_us(mut self, slice_us: u64) -> Self {
        self.slice_ns = slice_us * 1000;
        self
    }

    /// Runs the simulation.
    pub fn run(&self) -> Outcome {
        let mut disk = Disk::new(&self.disk).expect("valid disk parameters");
        let capacity = self.disk.capacity_sectors;
        let mut sched = SliceSched::new();
        sched.set_start(self.start);
        sched.set_slice_ns(self.slice_ns);
        sched.set_idle_ns(self.slice_ns);
        let mut jobs: Vec<Job> = (0..self.jobs.len())
            .map(|j| Job {
                pattern: self.jobs[j],
                next: j as u64 * REGION_SECTORS,
                rng: j as u64,
                arrival: Some(0),
                queued: None,
            })
            .collect();
        let mut out = Outcome {
            ios: vec![0; jobs.len()],
            latency_ns: vec![Vec::new(); jobs.len()],
            run_ns: self.run_ns - self.warmup_ns,
            ..Outcome::default()
        };
        // Requests in the drive: (job, its command, done).
        let mut serving: Vec<(usize, Command, u64)> = Vec::new();
        let mut warm: Option<DiskStats> = None;
        let mut now = 0;
        while now < self.run_ns {
            if warm.is_none() && now >= self.warmup_ns {
                warm = Some(disk.stats());
            }
            for (i, job) in jobs.iter_mut().enumerate() {
                if job.arrival.is_some_and(|t| t <= now) {
                    let t = job.arrival.take().unwrap_or(now);
                    let cmd = job.command(capacity, t);
                    // As the spindle: kept with slices off too.
                    sched.arrived(i as u32, cmd.sector, BS_SECTORS);
                    job.queued = Some(cmd);
                }
            }
            serving.retain(|&(j, cmd, done)| {
                if done > now {
                    return true;
                }
                if done >= self.warmup_ns {
                    out.ios[j] += 1;
                    out.latency_ns[j].push(done - cmd.queued_ns);
                }
                if sched.is_enabled() {
                    sched.serviced(j as u32, now);
                }
                let jitter = jobs[j].random() % (2 * self.jitter_ns + 1);
                jobs[j].arrival = Some(now + self.turnaround_ns - self.jitter_ns + jitter);
                false
            });
            // Which ctxs may send the drive requests (a mask): the very
            // rule the spindle follows.
            let pending = jobs
                .iter()
                .enumerate()
                .filter(|(_, j)| j.queued.is_some())
                .fold(0u64, |m, (i, _)| m | 1 << i);
            let offer = sched.offer(now, pending, serving.is_empty());
            let wake_at = offer.wake_ns;
            let allowed = Some(offer.mask).filter(|m| m & pending != 0);
            if let Some(mask) = allowed {
                loop {
                    let mut queue: Vec<(usize, Command)> = jobs
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask & 1 << i != 0)
                        .filter_map(|(i, j)| j.queued.map(|c| (i, c)))
                        .collect();
                    queue.sort_by_key(|(i, c)| (c.queued_ns, *i));
                    let Some(k) = disk.pick(now, queue.iter().map(|(_, c)| *c)) else {
                        break;
                    };
                    let (j, cmd) = queue[k];
                    jobs[j].queued = None;
                    serving.push((j, cmd, disk.start(now, cmd).done_ns));
                }
            }
            let next = jobs
                .iter()
                .filter_map(|j| j.arrival)
                .chain(serving.iter().map(|&(_, _, t)| t))
                .chain(wake_at)
                .filter(|&t| t > now)
                .min();
            match next {
                Some(t) => now = t,
                None => break,
            }
        }
        let (end, start) = (disk.stats(), warm.unwrap_or_default());
        out.stats = DiskStats {
            hits: end.hits - start.hits,
            readahead_hits: end.readahead_hits - start.readahead_hits,
            misses: end.misses - start.misses,
            writes: end.writes - start.writes,
        };
        out
    }
}
