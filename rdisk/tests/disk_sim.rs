//! Herrmann's fio table on the disk model with its defaults (a 7200 rpm
//! SATA disk of 2009-2010), through the slice scheduler, on a simulated
//! clock (see `sim/mod.rs`).
//!
//! The disk is 16 GiB (null_blk's `gb=16`), each sequential job in its own
//! region, 1 GiB apart: a switch between two jobs costs a seek over 1/16 of
//! the stroke (4.4 ms) and a rotational wait. fio's turnaround is 25 us (+-5).
//!
//! Herrmann's figures (Samsung HD155UI, fio 4 KiB `direct=1 iodepth=1`
//! libaio, blk-mq): one sequential reader 20,324 IOPS; eight at
//! `time_slice_us=0` 6,010 (0.296 of one), at 250 us 8,908.5 (1.48x);
//! CFQ 12,651 (0.62 of one). The tests below check the model lands there;
//! `cargo run --example herrmann_table` prints the whole table.

mod sim;

use rdisk::slice::SliceStart;

use sim::herrmann::{iops, mix, pct, CAPACITY, HERRMANN_ONE, SLICES_US};
use sim::{Pattern, Sim};

#[test]
fn one_sequential_reader_matches_herrmann() {
    let one = iops(Pattern::SeqRead, 1, 0);
    assert!(
        one.abs_diff(HERRMANN_ONE) * 100 <= HERRMANN_ONE * 3,
        "{one} IOPS, Herrmann {HERRMANN_ONE}"
    );
}

#[test]
fn eight_readers_without_slices_keep_a_fifth_to_two_fifths() {
    let one = iops(Pattern::SeqRead, 1, 0);
    let eight = iops(Pattern::SeqRead, 8, 0);
    assert!(
        (20..=40).contains(&pct(eight, one)),
        "8 jobs {eight} vs one {one} (Herrmann 0.296)"
    );
}

#[test]
fn slices_of_250us_gain_at_least_1_45x() {
    let base = iops(Pattern::SeqRead, 8, 0);
    let sliced = iops(Pattern::SeqRead, 8, 250);
    assert!(
        pct(sliced, base) >= 145,
        "250 us {sliced} vs 0 {base} (Herrmann 1.48x)"
    );
}

#[test]
fn the_best_slice_keeps_cfqs_share() {
    let one = iops(Pattern::SeqRead, 1, 0);
    let best = SLICES_US
        .iter()
        .map(|&s| iops(Pattern::SeqRead, 8, s))
        .max()
        .unwrap_or(0);
    assert!(
        pct(best, one) >= 62,
        "best of 8 jobs {best} vs one {one} (CFQ 0.62)"
    );
}

#[test]
fn one_sequential_reader_loses_nothing_to_slices() {
    let base = iops(Pattern::SeqRead, 1, 0);
    for slice in SLICES_US {
        let sliced = iops(Pattern::SeqRead, 1, slice);
        assert!(sliced * 100 >= base * 99, "{slice} us: {sliced} vs {base}");
    }
}

#[test]
fn a_random_read_costs_a_seek_and_half_a_revolution() {
    // 8.5 ms average seek + 4.17 ms: 79 IOPS.
    let one = iops(Pattern::RandRead, 1, 0);
    assert!((72..=86).contains(&one), "{one}");
}

#[test]
fn ncq_reorders_random_reads_and_seeky_ctxs_keep_it_under_slices() {
    let one = iops(Pattern::RandRead, 1, 0);
    let eight = iops(Pattern::RandRead, 8, 0);
    assert!(pct(eight, one) >= 125, "NCQ: 8 jobs {eight} vs one {one}");
    // Seeky ctxs share their slices: the drive still sees every job's
    // request and picks the nearest (a loss of 3% at most).
    for slice in SLICES_US {
        let sliced = iops(Pattern::RandRead, 8, slice);
        assert!(
            sliced * 100 >= eight * 97,
            "{slice} us: 8 jobs {sliced} vs {eight} without slices"
        );
    }
}

#[test]
fn in_the_mix_no_job_starves_under_either_clock() {
    // One random reader (job 3, seeky) among seven sequential ones: the
    // seeky group takes its turn like a ctx, and an exclusive slice never
    // starts while the group's request still holds the drive.
    let base = mix(0).job_iops(3);
    for start in [SliceStart::FirstCompletion, SliceStart::Selection] {
        for slice in SLICES_US.into_iter().filter(|&s| s != 0) {
            let mut sim = Sim::new(CAPACITY, Pattern::SeqRead, 8).slice_us(slice);
            sim.jobs[3] = Pattern::RandRead;
            sim.start = start;
            let o = sim.run();
            for j in 0..8 {
                assert!(o.job_iops(j) > 0, "{start:?} {slice} us: job {j} starved");
            }
            // With the default clock the group's slice does not run out
            // during its seek, and the random reader does at least as
            // well as without slices.
            assert!(
                start == SliceStart::Selection || o.job_iops(3) >= base,
                "{start:?} {slice} us: the random reader {} < {base} without slices",
                o.job_iops(3)
            );
        }
    }
}

#[test]
fn a_write_through_sequential_write_waits_a_revolution() {
    // The next sector has just passed: 120 writes a second at 7200 rpm.
    let one = iops(Pattern::SeqWrite, 1, 0);
    assert!((110..=130).contains(&one), "{one}");
}

#[test]
fn runs_repeat_exactly() {
    let a = mix(250);
    let b = mix(250);
    assert_eq!(a.ios, b.ios);
    assert_eq!(a.latency_ns, b.latency_ns);
}
