//! loom models of the lock-free zone protocol. Run with `./run-loom.sh`
//! (`RUSTFLAGS="--cfg loom" cargo test --release --test loom`).
#![cfg(loom)]

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use rzone::cond::{Cond, Status};
use rzone::config::ZonedParams;
use rzone::zones::{Zone, Zones};

type Dev = Arc<Zones<Vec<Zone>>>;

/// `nr` zones of 1 MiB (2048 sectors), limits `open` and `active`.
fn dev(nr: u64, open: u32, active: u32) -> Dev {
    let p = ZonedParams {
        zone_size: 1,
        zone_max_open: open,
        zone_max_active: active,
        ..ZonedParams::new(nr, 512)
    };
    let g = p.validate(|_| {}).unwrap();
    Arc::new(Zones::new(g, (0..nr).map(|_| Zone::new()).collect()).unwrap())
}

/// Retries an operation while it is `Busy` (another thread between two
/// steps), yielding so that loom runs that thread.
fn retry<T>(mut f: impl FnMut() -> Result<T, Status>) -> Result<T, Status> {
    loop {
        match f() {
            Err(Status::Busy) => thread::yield_now(),
            r => return r,
        }
    }
}

fn write(d: &Zones<Vec<Zone>>, sector: u64, nr: u64, append: bool) -> Result<u64, Status> {
    retry(|| d.write(sector, nr, append)).map(|w| {
        let s = w.sector;
        d.write_done(w);
        s
    })
}

/// Checks that `ranges` (sector, length) tile zone 0 from its start up
/// to its write pointer, and that its condition and the counts (open
/// limit 1) agree with that write pointer.
fn check_tiled(d: &Zones<Vec<Zone>>, mut ranges: Vec<(u64, u64)>) {
    ranges.sort();
    let mut next = 0;
    for (s, n) in &ranges {
        assert_eq!(*s, next, "{ranges:?}");
        next += n;
    }
    let r = d.report(0).unwrap();
    assert_eq!(r.wp, next);
    let c = d.res().counts();
    assert_eq!(c.pending, 0);
    if next == 2048 {
        assert_eq!((r.cond, c.open, c.imp), (Cond::Full, 0, 0));
    } else {
        assert_eq!((r.cond, c.open, c.imp), (Cond::ImpOpen, 1, 1));
    }
}

/// Two zone appends race on one zone and fill it: they get disjoint
/// sectors that tile the zone, which ends full with its open count
/// given back.
#[test]
fn appends_on_one_zone() {
    loom::model(|| {
        let d = dev(2, 1, 0);
        let d1 = d.clone();
        let a = thread::spawn(move || write(&d1, 0, 1024, true));
        let b = write(&d, 0, 1024, true).unwrap();
        let a = a.join().unwrap().unwrap();
        check_tiled(&d, vec![(a, 1024), (b, 1024)]);
    });
}

/// A zone append races a write at the zone's start: the write succeeds
/// only if it came first, and the append lands after it if so.
#[test]
fn append_against_write() {
    loom::model(|| {
        let d = dev(2, 1, 0);
        let d1 = d.clone();
        let a = thread::spawn(move || write(&d1, 0, 512, true));
        let w = write(&d, 0, 512, false);
        let a = a.join().unwrap().unwrap();
        let mut ranges = vec![(a, 512)];
        match w {
            Ok(s) => ranges.push((s, 512)),
            Err(e) => assert_eq!((e, a), (Status::IoErr, 0)),
        }
        check_tiled(&d, ranges);
    });
}

/// The open limit (1, of 3 zones) reservation race: two threads open
/// zones 0 and 1 implicitly by writing. Both writes succeed (the later
/// closes the earlier, as null_blk would); the counts end exact, at most
/// one zone is open, and the counters never pass the limit.
#[test]
fn open_limit_reservation_race() {
    loom::model(|| {
        let d = dev(3, 1, 0);
        let d1 = d.clone();
        let t = thread::spawn(move || {
            let r = write(&d1, 0, 8, false);
            assert!(d1.res().counts().open <= 1);
            r
        });
        let b = write(&d, 2048, 8, false);
        assert!(d.res().counts().open <= 1);
        assert_eq!(t.join().unwrap(), Ok(0));
        assert_eq!(b, Ok(2048));
        let conds = [d.report(0).unwrap().cond, d.report(1).unwrap().cond];
        let open = conds.iter().filter(|c| c.is_open()).count();
        assert_eq!(open, 1, "{conds:?}");
        assert!(conds.contains(&Cond::Closed), "{conds:?}");
        let c = d.res().counts();
        assert_eq!((c.open, c.imp, c.pending), (1, 1, 0));
    });
}

/// An explicit open races an implicit one at the open limit 1: whichever
/// comes second finds the first's zone open. An explicitly open zone is
/// never closed to make room, so the write fails if the open came first;
/// the open closes the written zone if the write came first.
#[test]
fn explicit_open_against_implicit() {
    loom::model(|| {
        let d = dev(3, 1, 0);
        let d1 = d.clone();
        let t = thread::spawn(move || retry(|| d1.open(0)));
        let w = write(&d, 2048, 8, false);
        let o = t.join().unwrap();
        assert_eq!(o, Ok(()));
        let (c0, c1) = (d.report(0).unwrap().cond, d.report(1).unwrap().cond);
        assert_eq!(c0, Cond::ExpOpen);
        match w {
            Ok(_) => assert_eq!(c1, Cond::Closed),
            Err(e) => assert_eq!((e, c1), (Status::ZoneOpenResource, Cond::Empty)),
        }
        let c = d.res().counts();
        assert_eq!((c.open, c.imp, c.pending), (1, 0, 0));
    });
}

/// A reset races a write and its data copy: the copy (a Relaxed store)
/// never lands after the discard (another), so the data is there exactly
/// when the zone's write pointer says the write came after the reset.
#[test]
fn reset_against_write_data() {
    loom::model(|| {
        let d = dev(2, 0, 0);
        let data = Arc::new(AtomicU64::new(0));
        let (d1, data1) = (d.clone(), data.clone());
        let t = thread::spawn(move || {
            if let Ok(w) = retry(|| d1.write(0, 8, false)) {
                data1.store(1, Ordering::Relaxed);
                d1.write_done(w);
            }
        });
        retry(|| d.reset(0, |_, _| data.store(0, Ordering::Relaxed))).unwrap();
        t.join().unwrap();
        let wp = d.report(0).unwrap().wp;
        assert_eq!(data.load(Ordering::Relaxed), u64::from(wp == 8), "wp {wp}");
    });
}
