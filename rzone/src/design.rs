//! Design of the zone state machine: how the lock-free operations stay
//! within null_blk's rules, and why their orderings suffice. This module
//! holds no code.
//!
//! # State
//!
//! Each zone is one `AtomicU64` ([`word`](super::word)): condition, write
//! pointer, writes in flight, a lock bit. Every change of a zone is one
//! compare-exchange of its whole word against the value its checks were
//! made on, so a zone's conditions and write pointers form one history
//! (the word's modification order), and two writes can never both be
//! given the same sectors: each moves the write pointer from the value
//! the other's CAS would have to compare.
//!
//! The open and active limits are counts in one more word
//! ([`res`](super::res)), kept only when a limit is set (null_blk's
//! `need_zone_res_mgmt`); without limits a write is one load and one CAS.
//!
//! # Counted transitions
//!
//! A zone transition that changes the counts (opening, closing, filling,
//! finishing, resetting an open or closed zone) takes three steps:
//!
//! 1. [`Res::begin`](super::res::Res::begin): one CAS on the counts word
//!    that makes null_blk's check, reserves the increments and adds one
//!    to *pending*;
//! 2. the zone's CAS;
//! 3. [`Res::end`](super::res::Res::end): one `fetch_add` that applies the
//!    decrements (or, if step 2 lost, undoes step 1) and takes one from
//!    pending.
//!
//! Increments come before the zone enters a counted condition and
//! decrements after it leaves one, so the counts are never below the
//! zones in those conditions: the limits, checked on the counts in step
//! 1, are never exceeded. While pending is nonzero the counts may be
//! larger than the truth; with pending zero no transition is between its
//! steps, and the counts are exact. So step 1 decides a refusal
//! (`ZoneOpenResource`, `ZoneActiveResource`) or an implicit close only
//! on counts with nothing pending, and answers [`Busy`] otherwise: no
//! resource error is ever caused by another thread's half-done
//! transition. A reservation within the limits needs no such care.
//!
//! # Implicit close
//!
//! At the open limit with an implicitly open zone (and room under the
//! active limit, as null_blk checks), step 1 reserves only the active
//! increment and the caller closes an implicitly open zone (a CAS on that
//! zone, round robin from null_blk's cursor): the victim's open and
//! implicitly open counts pass to the caller, which step 3 settles. No
//! other thread can take them in between, and the open limit holds
//! throughout. Two differences from null_blk's lock remain, both only
//! with concurrent operations at the open limit: a thread may see the
//! victim closed and the caller's zone not yet open; and if the caller's
//! own zone changes before its CAS (another write took its write
//! pointer), the caller's operation is retried or fails with the victim
//! closed. A scan that finds no implicitly open zone (one closed or
//! filled meanwhile) answers [`Busy`].
//!
//! # Reset and data
//!
//! A write reserves its sectors (moves the write pointer and counts
//! itself in flight, one CAS) before the driver copies its data, and
//! [`write_done`](super::zones::Zones::write_done) ends it. A reset
//! needs no write in flight and sets the lock bit in its CAS, discards
//! the zone's data, then unlocks: writes and management operations that
//! meet the lock answer [`Busy`]. So a write that a reset overtook can
//! neither land its data after the discard nor under a later write.
//!
//! # Memory model
//!
//! The code uses Rust's atomics (the C++ memory model), which the loom
//! models in `rzone/tests/loom.rs` check. In the terms of the
//! Linux-kernel memory model (as in `rtags`' design: Relaxed is
//! `READ_ONCE()`/`WRITE_ONCE()`, Acquire `smp_load_acquire()` or an
//! `_acquire` RMW, Release `smp_store_release()` or a `_release` RMW),
//! these are the pairs; no fence and no `SeqCst` is needed, as every
//! argument above is about one location's modification order (a zone
//! word, the counts word) or one of these pairs:
//!
//! | Release | Acquire | what it orders |
//! | --- | --- | --- |
//! | `write_done`'s `fetch_sub` | the reset's CAS that reads no write in flight | the data copy before the discard |
//! | the reset's unlock store | a later write's load and CAS of the zone | the discard before that write's data copy |
//! | `Res::end` | a later `Res::begin`'s load or CAS | the ended transitions' zone CASes (before `end` in program order) visible to the implicit close scan, so a scan on exact counts finds the implicitly open zone they count unless it changed since (without it the scan could miss it and answer `Busy`: a liveness matter, not a safety one) |
//! | a zone CAS (AcqRel) | the next CAS or Acquire load of that zone | keeps the above pairs' release sequences unbroken through the zone's RMWs |
//!
//! Relaxed is enough for a report and a read's write pointer (no data is
//! published through them: a read's data is ordered by the write's
//! completion, which the block layer orders), for the implicit close
//! cursor (a hint: any implicitly open zone may be closed), and for the
//! scan's loads (the CAS validates them).
//!
//! [`Busy`]: super::cond::Status::Busy
