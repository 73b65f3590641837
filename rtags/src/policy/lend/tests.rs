//! Tests of the `lend` policy.

use super::LEND_RESERVE;
use crate::host::testing::take;
use crate::host::HostTags;
use crate::policy::{fair_share, Policy};
use crate::queue::QueueTags;
use crate::sync::AtomicU32;
use std::vec::Vec;

#[test]
fn lend_moves_tags_to_the_refused_queue() {
    let h = HostTags::new(64, Policy::Lend).unwrap();
    let q0 = QueueTags::new(0);
    let q1 = QueueTags::new(1);
    let all = [&q0, &q1];
    let hint = AtomicU32::new(0);
    let t = h.get(&q0, &hint, 0).unwrap();
    let mut held = take(&h, &q1, 32, 0);
    // First tick establishes the fair baseline.
    h.tick(&all, 1);
    assert_eq!(h.limit(&q0, 1), 32);
    assert_eq!(h.limit(&q1, 1), 32);
    let mut expected_q0: u32 = 32;
    for round in 0..10 {
        // q1 is refused (at its limit) each round.
        assert!(h.get(&q1, &hint, 2).is_err());
        h.tick(&all, 2);
        expected_q0 = expected_q0.saturating_sub(8).max(LEND_RESERVE);
        assert_eq!(h.limit(&q0, 2), expected_q0, "round {round}");
        assert_eq!(h.limit(&q1, 2), 64 - expected_q0);
        while let Ok(t) = h.get(&q1, &hint, 2) {
            held.push(t);
        }
    }
    assert_eq!(h.limit(&q0, 3), 4);
    assert_eq!(held.len(), 60);
    // q1 still waits (its last get was refused), which counts as
    // refused at every tick: a put hands it out, its wait ends with a
    // tag.
    assert!(q1.is_waiting());
    h.tick(&all, 3);
    assert_eq!(h.limit(&q0, 3), 4, "a waiting queue borrows");
    assert_eq!(h.put(&q1, held.pop().unwrap(), &all, 3), 0b10);
    held.push(h.get(&q1, &hint, 3).unwrap());
    assert!(!q1.is_waiting());
    // Nobody fails or waits any more: limits drift back to fair.
    for _ in 0..5 {
        h.tick(&all, 4);
    }
    assert_eq!(h.limit(&q0, 4), 32);
    assert_eq!(h.limit(&q1, 4), 32);
    // Switching policy drops the lend limits.
    h.set_policy(Policy::None);
    assert_eq!(h.limit(&q0, 5), 64);
    h.put(&q0, t, &[&q0, &q1], 0);
    for t in held {
        h.put(&q1, t, &[&q0, &q1], 0);
    }
    assert_eq!(h.in_use(), 0);
}

/// Queues refused alike share alike: neither is lent the other's tags
/// (lending to the queue refused most would lend the first of them all
/// but the other's reserve, tick after tick); a queue not refused lends to
/// them.
#[test]
fn lend_splits_between_the_refused_queues() {
    let h = HostTags::new(64, Policy::Lend).unwrap();
    let qs: Vec<QueueTags> = (0..3).map(QueueTags::new).collect();
    let hint = AtomicU32::new(0);
    let mut held: Vec<Vec<u32>> = qs.iter().map(|q| take(&h, q, 1, 0)).collect();
    h.tick(&qs, 1);
    h.tick(&qs, 2);
    assert_eq!(
        qs.iter().map(|q| h.limit(q, 2)).collect::<Vec<_>>(),
        [22; 3]
    );
    for round in 0..8 {
        // Queues 0 and 1 fill their limits and are refused, queue 2 is
        // not (it holds its one tag).
        for (q, mine) in qs.iter().zip(&mut held).take(2) {
            while let Ok(t) = h.get(q, &hint, 3) {
                mine.push(t);
            }
        }
        h.tick(&qs, 3);
        let limits: Vec<u32> = qs.iter().map(|q| h.limit(q, 3)).collect();
        // Queue 2 lends 5 a tick down to its reserve; queues 0 and 1
        // split the rest, ceil((64 - lent) / 2).
        let lent = 22u32.saturating_sub(5 * (round + 1)).max(LEND_RESERVE);
        assert_eq!(
            limits,
            [(64 - lent).div_ceil(2), (64 - lent).div_ceil(2), lent],
            "round {round}"
        );
        // Give back what is over the new limits.
        for (q, mine) in qs.iter().zip(&mut held) {
            while q.in_flight() > h.limit(q, 3) {
                h.put(q, mine.pop().unwrap(), &qs, 0);
            }
        }
    }
    assert_eq!(h.limit(&qs[0], 4), 30);
    // Queue 1 stops asking (its wait ends with a tag): queue 0 alone is
    // refused and lent queue 1's tags, stepwise.
    for (q, mine) in qs.iter().zip(&mut held).skip(1) {
        while mine.len() > 1 {
            h.put(q, mine.pop().unwrap(), &qs, 0);
        }
    }
    held[1].push(h.get(&qs[1], &hint, 4).unwrap());
    assert!(!qs[1].is_waiting());
    let mut expected_q1 = 30u32;
    for round in 0..8 {
        while let Ok(t) = h.get(&qs[0], &hint, 5) {
            held[0].push(t);
        }
        h.tick(&qs, 5);
        expected_q1 = expected_q1.saturating_sub(5).max(LEND_RESERVE);
        assert_eq!(h.limit(&qs[1], 5), expected_q1, "round {round}");
        assert_eq!(h.limit(&qs[0], 5), 64 - expected_q1 - LEND_RESERVE);
    }
    assert_eq!(h.limit(&qs[0], 6), 56);
    for (q, mine) in qs.iter().zip(held) {
        for t in mine {
            h.put(q, t, &qs, 0);
        }
    }
    assert_eq!(h.in_use(), 0);
}

/// A borrower is a borrower wherever it stands in the tick's slice,
/// also past the 64th queue (the waiter mask's width).
#[test]
fn lend_sees_refusals_beyond_64_queues() {
    let h = HostTags::new(1024, Policy::Lend).unwrap();
    let qs: Vec<QueueTags> = (0..70).map(QueueTags::new).collect();
    let hint = AtomicU32::new(0);
    let mut held: Vec<Vec<u32>> = qs.iter().map(|q| take(&h, q, 1, 0)).collect();
    h.tick(&qs, 1);
    h.tick(&qs, 2);
    let fair = fair_share(1024, 70);
    assert_eq!(h.limit(&qs[69], 2), fair);
    while let Ok(t) = h.get(&qs[69], &hint, 3) {
        held[69].push(t);
    }
    h.tick(&qs, 3);
    // The 69 others lend a step each (fair - fair / 4), queue 69 is
    // lent the rest.
    let lent = 69 * (fair - fair / 4);
    assert_eq!(h.limit(&qs[69], 3), 1024 - lent);
    assert_eq!(h.limit(&qs[0], 3), fair - fair / 4);
    for (q, mine) in qs.iter().zip(held) {
        for t in mine {
            h.put(q, t, &qs, 3);
        }
    }
}

/// A lender refused climbs back by a step, not to the borrowers' even
/// split; a lender keeps what it holds.
#[test]
fn lend_a_refused_lender_climbs_back_stepwise() {
    let h = HostTags::new(32, Policy::Lend).unwrap();
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let all = [&q0, &q1];
    let hint = AtomicU32::new(0);
    let mut mine = take(&h, &q1, 1, 0);
    let mut theirs = take(&h, &q0, 1, 0);
    h.tick(&all, 1);
    h.tick(&all, 2);
    // q0 is refused every tick, q1 lends down to its reserve (4).
    for now in 3..6 {
        while let Ok(t) = h.get(&q0, &hint, now) {
            theirs.push(t);
        }
        h.tick(&all, now);
    }
    assert_eq!((h.limit(&q0, 6), h.limit(&q1, 6)), (28, 4));
    // q1 wants 6: refused at 4, it gets a step more (8), not half the
    // budget; q0, refused too, the rest.
    while theirs.len() > 24 {
        h.put(&q0, theirs.pop().unwrap(), &all, 6);
    }
    while let Ok(t) = h.get(&q1, &hint, 7) {
        mine.push(t);
    }
    assert_eq!(mine.len(), 4);
    while let Ok(t) = h.get(&q0, &hint, 7) {
        theirs.push(t);
    }
    h.tick(&all, 7);
    assert_eq!((h.limit(&q0, 7), h.limit(&q1, 7)), (24, 8));
    while theirs.len() > 24 {
        h.put(&q0, theirs.pop().unwrap(), &all, 7);
    }
    // q1 holds 6 and is not refused: it lends, but not what it holds.
    mine.extend(take(&h, &q1, 2, 8));
    while let Ok(t) = h.get(&q0, &hint, 8) {
        theirs.push(t);
    }
    h.tick(&all, 8);
    assert_eq!((h.limit(&q0, 8), h.limit(&q1, 8)), (26, 6));
    for t in mine {
        h.put(&q1, t, &all, 8);
    }
    for t in theirs {
        h.put(&q0, t, &all, 8);
    }
}
