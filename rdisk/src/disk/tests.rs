//! Unit tests of the disk model: parameter checks, the mechanism's
//! timing, the segment cache and read-ahead, and the command queue.

use super::*;

/// 16 GiB.
const CAP: u64 = 16 << 21;

fn disk() -> Disk {
    Disk::new(&DiskParams::new(CAP)).unwrap()
}

fn read(sector: u64, t: u64) -> Command {
    Command {
        sector,
        bytes: 4096,
        write: false,
        queued_ns: t,
    }
}

#[test]
fn defaults_are_valid_and_each_limit_is_checked() {
    assert!(Disk::new(&DiskParams::new(CAP)).is_ok());
    for limit in [
        RPM,
        SEEK_MIN_US,
        SEEK_MAX_US,
        MEDIA_MBPS,
        BUS_MBPS,
        SEGMENTS,
        SEGMENT_KIB,
        READAHEAD_MIN_KIB,
        HIT_OVERHEAD_NS,
        NCQ_DEPTH,
        NCQ_MAX_WAIT_MS,
    ] {
        assert!(limit.contains(limit.default), "{limit:?}");
        assert!(limit.min <= limit.max, "{limit:?}");
    }
    let mut p = DiskParams::new(CAP);
    p.rpm = 20_000;
    assert_eq!(
        Disk::new(&p).unwrap_err(),
        ParamError::OutOfRange {
            limit: RPM,
            value: 20_000
        }
    );
    let mut p = DiskParams::new(CAP);
    p.segments = 0;
    assert!(matches!(
        Disk::new(&p),
        Err(ParamError::OutOfRange {
            limit: SEGMENTS,
            ..
        })
    ));
    let mut p = DiskParams::new(CAP);
    p.seek_max_us = 100;
    assert_eq!(Disk::new(&p).unwrap_err(), ParamError::SeekOrder);
    // The driver checks its parameters with `validate` before it builds.
    assert_eq!(p.validate(), Err(ParamError::SeekOrder));
    assert_eq!(DiskParams::new(CAP).validate(), Ok(()));
    let mut p = DiskParams::new(CAP);
    p.segment_kib = 6;
    assert_eq!(Disk::new(&p).unwrap_err(), ParamError::SegmentAlign);
    let mut p = DiskParams::new(CAP);
    p.segment_kib = 64;
    p.readahead_min_kib = 128;
    assert_eq!(Disk::new(&p).unwrap_err(), ParamError::ReadaheadOverSegment);
    assert_eq!(
        Disk::new(&DiskParams::new(0)).unwrap_err(),
        ParamError::Capacity(0)
    );
    let e = ParamError::OutOfRange {
        limit: NCQ_DEPTH,
        value: 40,
    };
    assert_eq!(std::format!("{e}"), "ncq_depth = 40 is outside 1..=32");
}

#[test]
fn seek_curve() {
    let d = disk();
    assert_eq!(d.seek_ns(0, 100), 0, "same track");
    assert_eq!(d.seek_ns(0, CAP), 15_200_000, "full stroke");
    let quarter = d.seek_ns(0, CAP / 4);
    assert_eq!(quarter, 800_000 + 14_400_000 / 2);
    assert!(d.seek_ns(0, d.track_sectors) >= 800_000);
}

#[test]
fn miss_pays_seek_rotation_and_transfer() {
    let mut d = disk();
    let far = CAP / 4;
    let s = d.start(0, read(far, 0));
    assert_eq!(s.outcome, Outcome::Miss);
    let arrive = d.seek_ns(0, far);
    let expect = d.next_pass(far, arrive) + d.media_ns(8);
    assert_eq!(s.done_ns, expect);
    assert!(s.done_ns - arrive < d.revolution_ns + d.media_ns(8));
}

#[test]
fn sequential_reads_hit_the_readahead() {
    let mut d = disk();
    let first = d.start(0, read(0, 0));
    assert_eq!(first.outcome, Outcome::Miss);
    // The host comes back 30 us later; read-ahead ran meanwhile.
    let mut t = first.done_ns + 30_000;
    for i in 1..1000u64 {
        let s = d.start(t, read(8 * i, t));
        assert_eq!(s.outcome, Outcome::Hit, "request {i}");
        assert_eq!(s.done_ns - t, d.hit_ns(&read(0, 0)));
        t = s.done_ns + 30_000;
    }
    assert_eq!(d.stats().misses, 1);
}

#[test]
fn a_host_faster_than_the_media_waits_for_readahead() {
    let mut d = disk();
    let first = d.start(0, read(0, 0));
    // Back at once: the next 4 KiB is still being read.
    let s = d.start(first.done_ns, read(8, first.done_ns));
    assert_eq!(s.outcome, Outcome::ReadAheadHit);
    assert_eq!(s.done_ns, first.done_ns + d.media_ns(8));
}

#[test]
fn a_full_segment_stops_readahead_until_the_host_reads() {
    let mut p = DiskParams::new(CAP);
    p.segment_kib = 64;
    p.readahead_min_kib = 0;
    let mut d = Disk::new(&p).unwrap();
    let first = d.start(0, read(0, 0));
    // Long idle: read-ahead stops 64 KiB past the host.
    let t = first.done_ns + 100_000_000;
    assert_eq!(d.bounds(0, t), (8, 8 + 128), "what the host read is gone");
    // Reading the first block moves the limit, but the next sector only
    // comes round a revolution after read-ahead stopped.
    let s = d.start(t, read(8, t));
    assert_eq!(s.outcome, Outcome::Hit);
    let resume = d.next_lap(first.done_ns + d.media_ns(128), t);
    assert!(resume > t && resume <= t + d.revolution_ns);
    assert_eq!(d.bounds(0, resume - 1).1, 136);
    assert_eq!(d.bounds(0, resume + d.media_ns(8)).1, 144);
}

#[test]
fn minimum_readahead_holds_the_head_for_streams_only() {
    let mut d = disk();
    let (far, other) = (CAP / 2, CAP / 4);
    // A first read is not a stream yet: the next miss takes the head
    // at once.
    let t = d.start(0, read(0, 0)).done_ns;
    let s = d.start(t, read(far, t));
    let expect = d.next_pass(far, t + d.seek_ns(8, far)) + d.media_ns(8);
    assert_eq!(s.done_ns, expect);
    // Its stream goes on where its segment ends: now the drive reads
    // ahead at least `readahead_min_kib` before the next miss.
    let t = s.done_ns;
    let seq = d.start(t, read(8, t));
    assert_eq!(seq.outcome, Outcome::Miss);
    let t = seq.done_ns;
    let s = d.start(t, read(other, t));
    let min_end = 16 + d.readahead_min_sectors;
    let free = t + d.media_ns(min_end - 16);
    let expect = d.next_pass(other, free + d.seek_ns(min_end, other)) + d.media_ns(8);
    assert_eq!(s.done_ns, expect);
    // What was read ahead stays cached.
    let back = s.done_ns;
    assert_eq!(d.start(back, read(16, back)).outcome, Outcome::Hit);
    let last = min_end - 8;
    assert_eq!(d.start(back, read(last, back)).outcome, Outcome::Hit);
    assert_eq!(
        d.start(back, read(min_end + 8, back)).outcome,
        Outcome::Miss
    );
}

#[test]
fn lru_replacement() {
    let mut p = DiskParams::new(CAP);
    p.segments = 2;
    p.readahead_min_kib = 0;
    let mut d = Disk::new(&p).unwrap();
    let regions = [0, 1 << 21, 2 << 21];
    let mut t = 0;
    for &r in &regions[..2] {
        t = d.start(t, read(r, t)).done_ns;
    }
    // Region 0 used last: region 1's segment is replaced by region 2's.
    t = d.start(t, read(0, t)).done_ns;
    t = d.start(t, read(regions[2], t)).done_ns;
    assert_eq!(d.start(t, read(0, t)).outcome, Outcome::Hit);
    assert_eq!(d.start(t, read(regions[1], t)).outcome, Outcome::Miss);
}

#[test]
fn writes_go_to_the_media_and_drop_cached_data() {
    let mut d = disk();
    let r = d.start(0, read(0, 0));
    let t = r.done_ns + 10_000_000;
    let w = Command {
        write: true,
        ..read(64, t)
    };
    let s = d.start(t, w);
    assert_eq!(s.outcome, Outcome::Write);
    // Same track: no seek, but the sector has to come round.
    assert_eq!(s.done_ns, d.next_pass(64, t) + d.media_ns(8));
    let t = s.done_ns;
    let r = d.start(t, read(8, t));
    assert_eq!(r.outcome, Outcome::Miss);
    // The next write, 30 us after the first, has just missed its
    // sector: a revolution each.
    let t = r.done_ns;
    let a = d.start(
        t,
        Command {
            write: true,
            ..read(1000, t)
        },
    );
    let t = a.done_ns + 30_000;
    let b = d.start(
        t,
        Command {
            write: true,
            ..read(1008, t)
        },
    );
    let lap = b.done_ns - a.done_ns;
    assert!(lap.abs_diff(d.revolution_ns + d.media_ns(8)) <= 1, "{lap}");
}

/// Time from `t` until a miss of `cmd` starts transferring.
fn access(d: &Disk, t: u64, cmd: &Command) -> u64 {
    let (free, head) = d.head_free(t);
    d.next_pass(cmd.sector, free + d.seek_ns(head, cmd.sector)) - t
}

#[test]
fn ncq_prefers_hits_then_the_shortest_access() {
    let mut d = disk();
    let t = d.start(0, read(0, 0)).done_ns + 50_000;
    let queued = [read(CAP - 8, 0), read(CAP / 64, 1), read(8, 2)];
    assert_eq!(d.pick(t, queued), Some(2), "the hit");
    let misses = [read(CAP - 8, 0), read(CAP / 64, 1)];
    let near = access(&d, t, &misses[1]);
    let far = access(&d, t, &misses[0]);
    assert_ne!(near, far);
    assert_eq!(d.pick(t, misses), Some(usize::from(near < far)));
    // Depth 1: arrival order.
    let mut p = DiskParams::new(CAP);
    p.ncq_depth = 1;
    let d1 = Disk::new(&p).unwrap();
    assert_eq!(d1.pick(t, queued), Some(0));
    assert_eq!(d1.pick(t, []), None);
}

#[test]
fn ncq_ages_commands() {
    let mut d = disk();
    let t = d.start(0, read(0, 0)).done_ns + 200_000_000;
    let old = t - 100_000_000;
    let (near, far) = (read(CAP / 64, t), read(CAP - 8, old));
    assert!(access(&d, t, &far) > access(&d, t, &near));
    assert_eq!(d.pick(t, [near, far]), Some(1), "aged");
    let far = Command {
        queued_ns: old + 1,
        ..far
    };
    assert_eq!(d.pick(t, [near, far]), Some(0));
}

#[test]
fn hits_are_served_during_a_seek() {
    let mut d = disk();
    let first = d.start(0, read(0, 0));
    let t = first.done_ns + 1_000_000;
    let miss = d.start(t, read(CAP / 2, t));
    assert_eq!(miss.outcome, Outcome::Miss);
    assert_eq!(d.in_flight(t), 1);
    // The mechanism is busy, the controller is not.
    assert_eq!(d.pick(t, [read(CAP / 4, t)]), None);
    assert_eq!(d.pick(t, [read(CAP / 4, t), read(8, t)]), Some(1));
    let hit = d.start(t, read(8, t));
    assert_eq!(hit.outcome, Outcome::Hit);
    assert_eq!(hit.done_ns, t + d.hit_ns(&read(8, t)));
    assert!(hit.done_ns < miss.done_ns);
    assert_eq!(d.in_flight(t), 2);
    // The read-ahead of sector 0 was cut when the head left.
    let (cut, back) = (d.bounds(0, miss.done_ns).1, miss.done_ns);
    assert_eq!(d.start(back, read(cut, back)).outcome, Outcome::Miss);
    // With one command in the drive at a time, nothing overlaps.
    let mut p = DiskParams::new(CAP);
    p.ncq_depth = 1;
    let mut d1 = Disk::new(&p).unwrap();
    let t = d1.start(0, read(0, 0)).done_ns + 1_000_000;
    d1.start(t, read(CAP / 2, t));
    assert_eq!(d1.pick(t, [read(8, t)]), None);
}

#[test]
fn commands_past_the_end_are_clipped() {
    let mut d = disk();
    let mut t = 0;
    for (sector, bytes) in [(CAP - 1, 4096), (CAP, 4096), (u64::MAX, u32::MAX), (0, 0)] {
        t += 100_000_000;
        let cmd = Command {
            bytes,
            ..read(sector, t)
        };
        assert_eq!(d.pick(t, [cmd]), Some(0));
        assert!(d.start(t, cmd).done_ns > t);
    }
}

#[test]
fn the_same_calls_give_the_same_times() {
    let run = || {
        let mut d = disk();
        let mut t = 0;
        let mut x = 1u64;
        for _ in 0..1000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let sector = (x >> 20) % (CAP - 8) / 8 * 8;
            t = d.start(t, read(sector, t)).done_ns + (x >> 58) * 1000;
        }
        (t, d.stats())
    };
    assert_eq!(run(), run());
}
