//! loom model of the bandwidth link: concurrent reservations never
//! overlap on the link's timeline.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use rtags::link::Link;

#[test]
fn concurrent_reservations_serialise() {
    loom::model(|| {
        let link = Arc::new(Link::new());
        link.set_mib_per_s(1).unwrap();
        let l2 = link.clone();
        // 1 MiB at 1 MiB/s: one second each.
        let t = thread::spawn(move || l2.reserve(0, 1 << 20).unwrap());
        let a = link.reserve(0, 1 << 20).unwrap();
        let b = t.join().unwrap();
        let (first, second) = (a.min(b), a.max(b));
        assert_eq!(first, 1_000_000_000, "one reservation starts at once");
        assert_eq!(second, 2_000_000_000, "the other waits for it");
        // The link is busy until both are through.
        assert_eq!(link.reserve(0, 0), Some(2_000_000_000));
    });
}
