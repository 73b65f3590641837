//! Prints Herrmann's table on the disk model (`cargo run --example
//! herrmann_table`): IOPS per job count and slice for sequential reads,
//! write-through sequential writes and random reads, then the mix of one
//! random reader among seven sequential ones. `tests/disk_sim.rs` asserts
//! the figures the README quotes; this only prints them.

#[path = "../tests/sim/mod.rs"]
mod sim;

use sim::herrmann::{iops, mix, pct, JOBS, SLICES_US};
use sim::Pattern;

fn main() {
    for (name, pattern) in [
        ("sequential read", Pattern::SeqRead),
        ("sequential write (write-through)", Pattern::SeqWrite),
        ("random read", Pattern::RandRead),
    ] {
        println!("\n{name}, 4 KiB, iodepth 1 per job: IOPS (share of one job)");
        print!("| jobs |");
        for s in SLICES_US {
            print!(" {s} us |");
        }
        println!("\n|---|{}", "---|".repeat(SLICES_US.len()));
        let one = iops(pattern, 1, 0);
        for jobs in JOBS {
            print!("| {jobs} |");
            for s in SLICES_US {
                let n = iops(pattern, jobs, s);
                print!(" {n} ({}.{:02}) |", pct(n, one) / 100, pct(n, one) % 100);
            }
            println!();
        }
    }
    println!("\nHerrmann, sequential read: 1 job 20,324; 8 jobs at 0 us 6,010 (0.30), at 250 us 8,908.5 (0.44); CFQ 12,651 (0.62)");
    println!("\nmix: one random reader among seven sequential readers");
    println!("| slice | random IOPS | random p99 ms | sequential IOPS |");
    println!("|---|---|---|---|");
    for s in SLICES_US {
        let o = mix(s);
        let p99 = o.percentile_ns(3, 99);
        println!(
            "| {s} us | {} | {}.{} | {} |",
            o.job_iops(3),
            p99 / 1_000_000,
            p99 / 100_000 % 10,
            o.iops() - o.job_iops(3)
        );
    }
}
