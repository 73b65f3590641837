//! Property tests: random operation sequences on random zoned
//! configurations, run on `Zones` and on the reference model
//! (`sim/model.rs`, null_blk transcribed); every result, every zone's
//! report, the counters and the discards must agree after every step.
#![cfg(not(loom))]

#[path = "sim/model.rs"]
mod model;
#[path = "sim/rng.rs"]
mod rng;

use model::Model;
use rng::splitmix64;
use rzone::cond::{Cond, Status};
use rzone::config::{Geometry, ZonedParams};
use rzone::zones::{Zone, Zones};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        splitmix64(&mut self.0) % n
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
}

/// A random valid configuration, small enough that zones fill: MiB
/// zones with tiny write sizes would never reach their capacity, so
/// writes are sized from what is left.
fn config(r: &mut Rng) -> Geometry {
    loop {
        let zone_size = r.pick(&[1u64, 2, 4]);
        let p = ZonedParams {
            size_mib: zone_size * (1 + r.below(8)) + r.pick(&[0, 0, 1]),
            blocksize: r.pick(&[512, 4096]),
            zone_size,
            zone_capacity: r.pick(&[0, 0, 1, zone_size]),
            zone_nr_conv: r.pick(&[0, 0, 1, 2, 9]),
            zone_max_open: r.pick(&[0, 1, 2, 3, 5]),
            zone_max_active: r.pick(&[0, 0, 1, 2, 3, 4, 6]),
            zone_append_max_sectors: r.pick(&[0, 8, i32::MAX as u32]),
            zone_full: r.below(6) == 0,
        };
        if let Ok(g) = p.validate(|_| {}) {
            return g;
        }
    }
}

/// A write size for a zone whose write pointer is `wp` and capacity
/// `cap` (sectors from its start): often exactly what is left.
fn size(r: &mut Rng, wp: u64, cap: u64) -> u64 {
    let left = cap.saturating_sub(wp);
    match r.below(6) {
        0 => left,
        1 => left + 1,
        2 => 0,
        3 => 1 + r.below(cap.max(1)),
        _ => (1 + r.below(8)) * 8,
    }
}

fn check_same(z: &Zones<Vec<Zone>>, m: &Model, g: &Geometry, step: &str) {
    for zno in 0..m.nr_zones() {
        assert_eq!(
            z.report(zno as u32).unwrap(),
            m.report(zno),
            "{step}: zone {zno}"
        );
    }
    let c = z.res().counts();
    let (imp, open, active) = m.counts();
    assert_eq!(c.pending, 0, "{step}");
    if g.max_open != 0 {
        assert_eq!((c.imp as u32, c.open as u32), (imp, open), "{step}");
        assert!(open <= g.max_open, "{step}");
    }
    if g.max_active != 0 {
        assert_eq!(c.active as u32, active, "{step}");
        assert!(active <= g.max_active, "{step}");
    }
}

fn run(seed: u64, steps: usize) -> [u64; 4] {
    let mut r = Rng(seed);
    let g = config(&mut r);
    let z = Zones::new(g, (0..g.nr_zones).map(|_| Zone::new()).collect::<Vec<_>>()).unwrap();
    let mut m = Model::new(&g);
    check_same(&z, &m, &g, "init");
    // Ok writes, refusals, resource errors, implicit closes seen.
    let mut seen = [0u64; 4];
    for step in 0..steps {
        let zno = r.below(u64::from(g.nr_zones)) as u32;
        let start = g.zone_start(zno);
        let cap = g.zone_capacity(zno);
        let wp = m.report(zno as usize).wp.wrapping_sub(start);
        let (mut dz, mut dm) = (Vec::new(), Vec::new());
        let op = r.below(16);
        let what = format!("seed {seed} step {step} op {op} zone {zno}");
        let before = m.counts();
        let (a, b) = match op {
            0..=5 => {
                let sector = match r.below(4) {
                    0 => start + r.below(g.zone_len(zno)),
                    1 => start,
                    _ => start + wp.min(g.zone_len(zno) - 1),
                };
                let nr = size(&mut r, wp, cap);
                let a = z.write(sector, nr, false).map(|w| {
                    let s = w.sector;
                    z.write_done(w);
                    s
                });
                (a, m.write(sector, nr, false))
            }
            6 | 7 => {
                let nr = size(&mut r, wp, cap);
                let sector = start + r.below(g.zone_len(zno));
                let a = z.write(sector, nr, true).map(|w| {
                    let s = w.sector;
                    z.write_done(w);
                    s
                });
                (a, m.write(sector, nr, true))
            }
            8 => (
                z.open(start).map(|_| 0),
                m.mgmt("open", start, &mut dm).map(|_| 0),
            ),
            9 => (
                z.close(start).map(|_| 0),
                m.mgmt("close", start, &mut dm).map(|_| 0),
            ),
            10 => (
                z.finish(start).map(|_| 0),
                m.mgmt("finish", start, &mut dm).map(|_| 0),
            ),
            11 => (
                z.reset(start, |s, l| dz.push((s, l))).map(|_| 0),
                m.mgmt("reset", start, &mut dm).map(|_| 0),
            ),
            12 if r.below(4) == 0 => (
                z.reset_all(|s, l| dz.push((s, l))).map(|_| 0),
                m.mgmt("reset_all", 0, &mut dm).map(|_| 0),
            ),
            12 | 13 => {
                let cond = if op == 12 {
                    Cond::ReadOnly
                } else {
                    Cond::Offline
                };
                // Sometimes a sector past the end.
                let sector = if r.below(8) == 0 {
                    g.dev_sectors + r.below(3 * g.zone_sectors)
                } else {
                    start + r.below(g.zone_len(zno))
                };
                let a = z.set_cond(sector, cond, |s, l| dz.push((s, l)));
                let b = m.set_cond(sector, cond, &mut dm);
                assert_eq!(a, b, "{what}");
                (Ok(0), Ok(0))
            }
            _ => {
                let off = r.below(g.zone_len(zno));
                let nr = 1 + r.below(2 * g.zone_len(zno) - off);
                let nr = nr.min(g.zone_len(zno) - off);
                (z.read(start + off, nr), m.read(start + off, nr))
            }
        };
        assert_eq!(a, b, "{what}");
        assert_ne!(a, Err(Status::Busy), "{what}: busy with one thread");
        assert_eq!(dz, dm, "{what}: discards");
        check_same(&z, &m, &g, &what);
        match a {
            Ok(_) if op <= 7 => seen[0] += 1,
            Err(Status::IoErr) => seen[1] += 1,
            Err(_) => seen[2] += 1,
            _ => {}
        }
        let after = m.counts();
        if before.0 > 0 && after.0 == before.0 - 1 && after.1 == before.1 && op <= 8 {
            seen[3] += 1;
        }
    }
    seen
}

/// Many configurations, many steps: every operation agrees with the
/// model, and the interesting cases all happen.
#[test]
fn zones_follow_null_blk() {
    let mut seen = [0u64; 4];
    for seed in 0..3000u64 {
        let s = run(seed.wrapping_mul(0x9e37_79b9), 400);
        for i in 0..4 {
            seen[i] += s[i];
        }
    }
    eprintln!("ok, IoErr, resource errors, implicit closes: {seen:?}");
    let [ok, ioerr, resource, imp_close] = seen;
    assert!(ok > 10_000 && ioerr > 10_000, "{seen:?}");
    assert!(resource > 500, "{seen:?}");
    assert!(imp_close > 500, "{seen:?}");
}

#[test]
fn wrong_zone_count_is_refused() {
    let g = ZonedParams::new(1024, 512).validate(|_| {}).unwrap();
    assert!(Zones::new(g, vec![Zone::new()]).is_err());
}
