//! Tests of the host's configuration.

use super::*;

#[test]
fn new_and_config() {
    assert_eq!(
        HostTags::new(0, Policy::Fair).err(),
        Some(Error::InvalidDepth)
    );
    assert_eq!(
        HostTags::new(1025, Policy::Fair).err(),
        Some(Error::InvalidDepth)
    );
    let h = HostTags::new(64, Policy::Borrow).unwrap();
    assert_eq!(h.depth(), 64);
    assert_eq!(h.policy(), Policy::Borrow);
    assert_eq!(h.borrow_expiry_ns(), DEFAULT_BORROW_EXPIRY_NS);
    assert_eq!(h.idle_ns(), DEFAULT_IDLE_NS);
    h.set_policy(Policy::None);
    h.set_borrow_expiry_ns(5);
    h.set_idle_ns(7);
    assert_eq!(h.set_depth(0), Err(Error::InvalidDepth));
    h.set_depth(32).unwrap();
    assert_eq!(
        (h.policy(), h.borrow_expiry_ns(), h.idle_ns(), h.depth()),
        (Policy::None, 5, 7, 32)
    );
    assert_eq!(h.active_queues(), 0);
    assert_eq!(h.waiting_queues(), 0);
    assert!(!h.is_contended(0));
    assert_eq!(Refusal::Limited.as_str(), "limited");
    assert_eq!(Refusal::Exhausted.as_str(), "exhausted");
}
