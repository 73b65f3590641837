//! Herrmann's table on the model: the device, the slices and job counts of
//! the table, and one run of it, shared by `tests/disk_sim.rs` and
//! `examples/herrmann_table.rs`.

use super::{Outcome, Pattern, Sim};

/// The device: 16 GiB.
pub const CAPACITY: u64 = 16 << 21;
/// The slices of the table, in microseconds (0: arrival order).
pub const SLICES_US: [u64; 7] = [0, 50, 250, 500, 1000, 5000, 20_000];
/// The job counts of the table.
pub const JOBS: [usize; 4] = [1, 2, 4, 8];

/// Herrmann: one sequential reader.
pub const HERRMANN_ONE: u64 = 20_324;

/// A run of `jobs` jobs of `pattern` at `slice_us`.
pub fn run(pattern: Pattern, jobs: usize, slice_us: u64) -> Outcome {
    Sim::new(CAPACITY, pattern, jobs).slice_us(slice_us).run()
}

/// IOPS of `jobs` jobs of `pattern` at `slice_us`.
pub fn iops(pattern: Pattern, jobs: usize, slice_us: u64) -> u64 {
    run(pattern, jobs, slice_us).iops()
}

/// One random reader (job 3) among seven sequential readers.
pub fn mix(slice_us: u64) -> Outcome {
    let mut s = Sim::new(CAPACITY, Pattern::SeqRead, 8).slice_us(slice_us);
    s.jobs[3] = Pattern::RandRead;
    s.run()
}

/// `a / b` in hundredths.
pub fn pct(a: u64, b: u64) -> u64 {
    a * 100 / b.max(1)
}
