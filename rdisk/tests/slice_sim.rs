//! The slice scheduler driving a simulated single-actuator disk, on a
//! simulated clock: `JOBS` streams at iodepth 1, each issuing its next
//! request a fixed turnaround after the previous one completed (what a fio
//! job does), the way rnull's spindle uses the scheduler.
//!
//! These are the claims made for time slices, checked deterministically:
//! slices win on interleaved sequential streams, cost a single stream
//! nothing and cost random streams little.

use rdisk::slice::{Pick, SliceSched, SliceStart};

/// A switch: average seek plus half a revolution at 7200 rpm.
const SEEK_NS: u64 = 8_000_000 + 4_166_667;
/// 4 KiB at 150 MB/s.
const TRANSFER_NS: u64 = 27_307;
/// Simulated time per run.
const RUN_NS: u64 = 4_000_000_000;

#[derive(Clone, Copy, PartialEq)]
enum Pattern {
    Sequential,
    Random,
}

struct Sim {
    jobs: usize,
    turnaround_ns: u64,
    pattern: Pattern,
    /// 0: arrival order (the scheduler bypassed).
    slice_ns: u64,
    start: SliceStart,
}

impl Sim {
    /// Requests completed in `RUN_NS`.
    fn run(&self) -> u64 {
        let mut sched = SliceSched::new();
        sched.set_start(self.start);
        sched.set_slice_ns(self.slice_ns);
        sched.set_idle_ns(self.slice_ns);
        // When each job's next request arrives (None: one is in flight).
        let mut arrival: Vec<Option<u64>> = vec![Some(0); self.jobs];
        // Arrival time of each job's pending request, for arrival order.
        let mut pending: Vec<Option<u64>> = vec![None; self.jobs];
        // Where the head is: (job, its next sequential position).
        let mut head: Option<usize> = None;
        let mut busy_until: Option<(u64, usize)> = None;
        let mut wake_at: Option<u64> = None;
        let mut now = 0;
        let mut done = 0;
        while now < RUN_NS {
            // Requests that have arrived are pending.
            for j in 0..self.jobs {
                if let Some(t) = arrival[j] {
                    if t <= now {
                        pending[j] = Some(t);
                        arrival[j] = None;
                    }
                }
            }
            if let Some((t, j)) = busy_until {
                if t <= now {
                    busy_until = None;
                    done += 1;
                    if self.slice_ns != 0 {
                        sched.serviced(j as u32, now);
                    }
                    arrival[j] = Some(now + self.turnaround_ns);
                }
            }
            if wake_at.is_some_and(|t| t <= now) {
                wake_at = None;
            }
            if busy_until.is_none() {
                let mask = pending
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.is_some())
                    .fold(0u64, |m, (j, _)| m | 1 << j);
                let choice = if self.slice_ns == 0 {
                    (0..self.jobs)
                        .filter(|&j| pending[j].is_some())
                        .min_by_key(|&j| pending[j])
                } else {
                    match sched.pick(now, mask) {
                        Pick::Serve(c) => Some(c as usize),
                        Pick::Wait { until_ns } => {
                            wake_at = Some(until_ns);
                            None
                        }
                        Pick::Idle => None,
                        // No positions are reported (`arrived`): no ctx is
                        // seeky.
                        Pick::ServeSeeky => unreachable!("no ctx is seeky"),
                    }
                };
                if let Some(j) = choice {
                    pending[j] = None;
                    let local = self.pattern == Pattern::Sequential && head == Some(j);
                    let cost = if local {
                        TRANSFER_NS
                    } else {
                        SEEK_NS + TRANSFER_NS
                    };
                    head = Some(j);
                    busy_until = Some((now + cost, j));
                }
            }
            // Advance to the next event.
            let next = arrival
                .iter()
                .flatten()
                .copied()
                .chain(busy_until.map(|(t, _)| t))
                .chain(wake_at)
                .filter(|&t| t > now)
                .min();
            match next {
                Some(t) => now = t,
                None => break,
            }
        }
        done
    }
}

fn iops(
    jobs: usize,
    turnaround_us: u64,
    pattern: Pattern,
    slice_us: u64,
    start: SliceStart,
) -> u64 {
    Sim {
        jobs,
        turnaround_ns: turnaround_us * 1000,
        pattern,
        slice_ns: slice_us * 1000,
        start,
    }
    .run()
}

use Pattern::*;
use SliceStart::*;

#[test]
fn interleaved_sequential_streams_gain() {
    // Turnarounds of a fast host (20 us) and of a TCG guest (150 us).
    for turnaround in [20, 150] {
        let base = iops(8, turnaround, Sequential, 0, FirstCompletion);
        let sliced = iops(8, turnaround, Sequential, 250, FirstCompletion);
        assert!(
            sliced * 100 >= base * 145,
            "turnaround {turnaround} us: 250 us slices {sliced} vs arrival order {base}"
        );
    }
}

#[test]
fn selection_clock_loses_the_gain_when_a_switch_outlasts_the_slice() {
    let base = iops(8, 150, Sequential, 0, Selection);
    let selection = iops(8, 150, Sequential, 250, Selection);
    let completion = iops(8, 150, Sequential, 250, FirstCompletion);
    // The clock ran out during the seek: about one request per slice.
    assert!(selection * 100 <= base * 110, "{selection} vs {base}");
    assert!(completion > 2 * selection, "{completion} vs {selection}");
}

#[test]
fn long_slices_keep_most_of_a_single_stream() {
    let single = iops(1, 150, Sequential, 0, FirstCompletion);
    let eight = iops(8, 150, Sequential, 20_000, FirstCompletion);
    assert!(
        eight * 100 >= single * 70,
        "8 streams {eight} vs one {single}"
    );
}

#[test]
fn a_single_stream_loses_nothing() {
    // Nothing else is pending, so the scheduler never waits and an expired
    // slice goes straight back to the same ctx: not a request less.
    let base = iops(1, 150, Sequential, 0, FirstCompletion);
    for slice in [50, 250, 1000, 20_000] {
        for start in [Selection, FirstCompletion] {
            let sliced = iops(1, 150, Sequential, slice, start);
            assert_eq!(sliced, base, "slice {slice} us {start:?}");
        }
    }
}

#[test]
fn random_streams_lose_little() {
    for jobs in [2, 8] {
        let base = iops(jobs, 150, Random, 0, FirstCompletion);
        for slice in [50, 250, 1000] {
            let sliced = iops(jobs, 150, Random, slice, FirstCompletion);
            assert!(
                sliced * 100 >= base * 97,
                "{jobs} jobs, slice {slice} us: {sliced} vs {base}"
            );
        }
    }
}
