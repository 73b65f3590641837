//! Tests of the put and the hand-off.

use crate::host::testing::{give_back, take};
use crate::host::PutRest;
use crate::host::{HostTags, Refusal};
use crate::policy::Policy;
use crate::queue::QueueTags;
use crate::sync::AtomicU32;

#[test]
fn put_begin_leaves_only_drains_of_starved_queues_and_waiters() {
    // Fair, 4 tags, one queue: nothing left for the rest while the
    // queue holds tags, is not starved and nobody waits.
    let h = HostTags::new(4, Policy::Fair).unwrap();
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let qs = [&q0, &q1];
    let mut t0 = take(&h, &q0, 4, 0);
    assert_eq!(h.put_begin(&q0, t0.pop().unwrap()), PutRest::Done);
    // A bogus put (a tag not held) does nothing.
    assert_eq!(h.put_begin(&q0, 1000), PutRest::Done);
    // q1 refused below its share (starved), then a put of q0: waiters.
    t0.push(h.get(&q0, &AtomicU32::new(0), 1).unwrap());
    let hint = AtomicU32::new(0);
    assert_eq!(h.get(&q1, &hint, 1), Err(Refusal::Exhausted));
    assert_eq!(h.starved_queues(), 1);
    let rest = h.put_begin(&q0, t0.pop().unwrap());
    assert_eq!(rest, PutRest::Waiters);
    assert_eq!(PutRest::from_raw(rest as u8), rest);
    assert_eq!(h.put_finish(&q0, rest, || &qs[..], 2), 0b10);
    // q1 takes the tag and drains it while starved: the rest clears
    // the mark.
    let t1 = h.get(&q1, &hint, 3).unwrap();
    let rest = h.put_begin(&q1, t1);
    assert_eq!(rest, PutRest::Drained);
    assert_eq!(h.put_finish(&q1, rest, || &qs[..], 4), 0);
    assert_eq!(h.starved_queues(), 0);
    // A tag put through the wrong queue: the rest undoes the wrap.
    let t = t0.pop().unwrap();
    let rest = h.put_begin(&q1, t);
    assert_eq!(rest, PutRest::Wrapped);
    assert_eq!(h.put_finish(&q1, rest, || &qs[..], 5), 0);
    assert_eq!(q1.in_flight(), 0);
}

#[test]
fn put_hands_off_only_waiters_below_their_limit() {
    // Fair, 16 tags, two queues: shares of 8. q0 holds 8 and is
    // refused at its share; q1 holds 8 and is refused for want of a
    // tag (the budget is full).
    let h = HostTags::new(16, Policy::Fair).unwrap();
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let qs = [&q0, &q1];
    let mut t0 = take(&h, &q0, 8, 0);
    let mut t1 = take(&h, &q1, 8, 0);
    let hint = AtomicU32::new(0);
    assert_eq!(h.get(&q0, &hint, 1), Err(Refusal::Limited));
    assert_eq!(h.get(&q1, &hint, 1), Err(Refusal::Limited));
    assert_eq!(h.waiter_mask(), 0b11);
    // q1's put: q1 is below its share again, q0 is not.
    assert_eq!(h.put(&q1, t1.pop().unwrap(), &qs, 2), 0b10);
    assert_eq!(h.waiter_mask(), 0b01);
    // The freed tag taken again (here by q1): nobody is handed out,
    // q0's bit waits for the taker's put.
    t1.push(h.get(&q1, &hint, 3).unwrap());
    assert_eq!(h.put(&q0, t0.pop().unwrap(), &qs, 4), 0b01);
    // Limits moved by a tick or a policy switch are read by the next
    // put: q0 refused at its share again, then `none`.
    t0.push(h.get(&q0, &hint, 5).unwrap());
    assert_eq!(h.get(&q0, &hint, 5), Err(Refusal::Limited));
    assert_eq!(h.put(&q1, t1.pop().unwrap(), &qs, 6), 0);
    h.set_policy(Policy::None);
    assert_eq!(h.put(&q1, t1.pop().unwrap(), &qs, 7), 0b01);
    // A bit whose queue is not in `queues` is handed out unexamined:
    // q0 refused again under `fair`, then a put that does not show q0.
    h.set_policy(Policy::Fair);
    assert_eq!(h.get(&q0, &hint, 8), Err(Refusal::Limited));
    assert_eq!(h.put(&q1, t1.pop().unwrap(), &[&q1], 9), 0b01);
    for t in t0 {
        h.put(&q0, t, &qs, 10);
    }
    for t in t1 {
        h.put(&q1, t, &qs, 10);
    }
    assert_eq!((h.in_use(), h.waiter_mask()), (0, 0));
}

#[test]
fn put_reads_the_queues_only_when_it_finds_waiters() {
    // q0 holds the whole budget; a put without waiters does not ask
    // for the list, one with q1 waiting asks once and hands q1 out.
    let h = HostTags::new(8, Policy::Fair).unwrap();
    let (q0, q1) = (QueueTags::new(0), QueueTags::new(1));
    let qs = [&q0, &q1];
    let asked = core::cell::Cell::new(0);
    let list = || {
        asked.set(asked.get() + 1);
        &qs[..]
    };
    let mut t0 = take(&h, &q0, 8, 0);
    assert_eq!(h.put_with(&q0, t0.pop().unwrap(), list, 1), 0);
    assert_eq!(asked.get(), 0);
    t0.push(h.get(&q0, &AtomicU32::new(0), 2).unwrap());
    assert_eq!(h.get(&q1, &AtomicU32::new(0), 3), Err(Refusal::Exhausted));
    assert_eq!(h.put_with(&q0, t0.pop().unwrap(), list, 4), 0b10);
    assert_eq!(asked.get(), 1);
    give_back(&h, &q0, t0, &qs, 5);
}

#[test]
fn bogus_puts_do_not_corrupt_counters() {
    let h = HostTags::new(8, Policy::Fair).unwrap();
    let q0 = QueueTags::new(0);
    let q1 = QueueTags::new(1);
    let t = take(&h, &q0, 1, 0);
    assert_eq!(h.put(&q0, 7, &[&q0, &q1], 0), 0, "tag not held");
    assert_eq!(h.put(&q0, 5000, &[&q0, &q1], 0), 0, "tag out of range");
    assert_eq!(q0.in_flight(), 1);
    // Put through the wrong queue: q1 must not wrap around.
    assert_eq!(h.put(&q1, t[0], &[&q0, &q1], 0), 0);
    assert_eq!(q1.in_flight(), 0);
    assert_eq!(h.put(&q0, t[0], &[&q0, &q1], 0), 0, "double put");
}
