//! Design of the host tag budget: how the pieces fit, and why they are
//! correct. This module holds no code.
//!
//! [`HostTags`] is the budget of one host: a [`TagBitmap`] (the tags), a
//! sharing [policy](super::policy) (how many tags, or which, one request
//! queue may hold) and a *waiter mask*, an `AtomicU64` in which a refused
//! queue sets bit `index % 64`. Every queue has a [`QueueTags`] of its own:
//! a flags word, its `in_flight` count and the policies' per-queue state.
//! Everything is lock-free; the only lock in the picture is the driver's
//! own per-hardware-queue lock, which rtags never sees.
//!
//! A policy is a [`Rule`](super::policy::Rule) in a file of its own: its
//! name, its *share* (the fewest tags any queue may hold now, from which
//! the host derives the fast path's bound), and where it needs them a
//! limit of the queue's own, a tick, tags placed rather than counted. The
//! host dispatches to the rules with a `match` (static calls) and only out
//! of line: the fast path reads a cached bound instead.
//!
//! The sections below follow an allocation: the fast path, a refusal, the
//! put that hands a tag on, and why that hand-off never loses a waiter;
//! then the state that feeds the limits (the limit cache, Borrow's
//! contention, idle detection, the counters) and the clock.
//!
//! # Memory model
//!
//! The code uses Rust's atomics (the C++ memory model), which is what the
//! loom models in `rtags/tests/loom*.rs` check. The arguments below are
//! written in the terms of the Linux-kernel memory model (LKMM,
//! `tools/memory-model/Documentation/explanation.txt`), reading the Rust
//! orderings as their kernel counterparts:
//!
//! | Rust | kernel |
//! | --- | --- |
//! | `Relaxed` load / store | `READ_ONCE()` / `WRITE_ONCE()` |
//! | `Relaxed` RMW | `atomic_fetch_or_relaxed()` and friends |
//! | `Acquire` load or RMW | `smp_load_acquire()`, `atomic_fetch_*_acquire()` |
//! | `Release` store or RMW | `smp_store_release()`, `atomic_fetch_*_release()` |
//! | `AcqRel` RMW | an acquire read and a release write |
//! | `fence(SeqCst)` | `smp_mb()` |
//!
//! The last line is the one the wake-up arguments rest on. LLVM emits a
//! full barrier for a `SeqCst` fence (`mfence` on x86-64, `dmb ish` on
//! arm64), the same strength as the kernel's `smp_mb()`, so the LKMM's
//! guarantees for strong fences hold for it. Plain `SeqCst` loads and
//! stores would not do: loom does not model them, and they are not
//! `smp_mb()` either; the fences are explicit.
//!
//! # The fast path
//!
//! A `get` takes the fast path when the queue is active, busy since the
//! last tick, neither waiting nor watched (one load and compare of its
//! flags word), holds fewer tags than the *limit cache*'s bound (below:
//! then no policy limit can bind) and its hinted bitmap word has a free
//! tag. It then claims the tag (one `fetch_and` on the bitmap word) and
//! increments the queue's `in_flight` (one `fetch_add`). Its `put`
//! (`put_begin`) frees the tag (`fetch_or`), decrements `in_flight`
//! (`fetch_sub`), passes the fence (P) and loads the waiter mask.
//!
//! What this touches: the queue's own cache line (its flags and
//! `in_flight`, which the counts write anyway), the limit cache's word and
//! the bitmap's valid masks (host lines that only configuration changes,
//! activations, refusals and ticks write), the hint (written only when a
//! search moves it) and the hinted bitmap word. It evaluates no policy,
//! divides nothing, reads neither the depth nor the policy nor the clock,
//! and counts no statistics: `failures` only counts refusals, and the tags
//! in use are counted from the bitmap when asked for
//! ([`TagBitmap::in_use`]). The code is the same under every policy (under
//! `window` the bound is 0, so its allocations never take it).
//!
//! Everything else is out of line (`#[cold]`): activation and the busy
//! mark, the exact limit check (a queue holding at least the bound), the
//! bitmap search, the refusal; and on the put side `put_finish`: a starved
//! queue's drain, a tag put through the wrong queue, the hand-off.
//! `put_begin` returns what is left ([`PutRest`]), so that the driver's
//! completion calls nothing in the common case, needs no stack frame and
//! ends the request with a tail call.
//!
//! # A refusal
//!
//! When the first attempt fails (the queue is at its limit: `Limited`; or
//! no tag is free: `Exhausted`), `get` takes its slow path:
//!
//! 1. it marks the queue waiting and `fetch_or`s the queue's bit into the
//!    waiter mask (an RMW, so that a putter's concurrent `fetch_and` cannot
//!    erase it; `Release`, for the restart below);
//! 2. if the first attempt found no free tag while the queue held less
//!    than its fair share, it marks the queue *starved* and records the
//!    refusal's time (Borrow's contention, below; a refusal at the
//!    queue's own limit never marks it);
//! 3. `fence(SeqCst)`: **(W)**;
//! 4. it tries once more, reading the depth, the policy and the limit
//!    afresh. A success returns the tag (the waiter bit may stay set:
//!    at worst one spurious re-run of the queue); otherwise the refusal
//!    is returned and counted in the queue's `failures`.
//!
//! The caller then stops the queue, and re-runs it when a later put (or
//! tick, or configuration change) returns a mask with its bit.
//!
//! # A put, and the hand-off
//!
//! `put` frees the tag (`Release`), decrements `in_flight` (a drain to zero
//! also clears the starved mark), runs `fence(SeqCst)`, **(P)**, and loads
//! the waiter mask. Only if it is non-zero does it look further
//! (`hand_off`): it takes (`fetch_and`, `Acquire`) the bits of the waiters
//! that may allocate now and returns them, and the caller re-runs exactly
//! those queues.
//!
//! Which waiters may allocate is the policy's to say. Under the policies
//! that limit a count, none may if every tag is held again (a racing `get`
//! took the freed one: its own put hands off later), else every waiter
//! whose queue is below its limit, each limit read after (P). A bit that
//! none of the queues passed by the caller has is handed out unexamined.
//! Under `window` the place of the free tags decides
//! ([`super::policy::window`], "Hand-off").
//!
//! A waiter at its limit keeps its bit: it could not use the tag, and a
//! re-run would only refuse it again. Its own puts (each lowers its
//! `in_flight`) and the puts of others look at it again; so does every
//! tick, because a limit also rises without a put (a queue retired, Lend
//! re-balanced, Borrow's contention ended), and the next put may be the
//! waiter's own, a slow device's completion later. The tick passes a
//! fence of its own, **(K)**, before it reads the mask, and pairs with
//! (W) as (P) does. A change of the configuration hands every waiter out
//! ([`HostTags::take_waiters`], whose fence is **(T)**).
//!
//! Bits are handed out by an RMW, so each waiting queue is re-run once per
//! *waiting episode* (a refusal sets the bit again), never once per freed
//! tag: completions cause no re-run storms. The plain load before the RMW
//! keeps the mask's cache line clean while nobody waits.
//!
//! # Why no wake-up is lost
//!
//! The waiter writes its bit, then reads the tag state; the putter writes
//! the tag state, then reads the mask. With `smp_mb()` on both sides,
//! (W) and (P), this is the LKMM's store-buffering pattern
//! (`SB+fencembonceonces`), as in `sbitmap_queue_clear()` against
//! `sbitmap_prepare_to_wait()`: at least one of the two reads sees the
//! other side's write. In event terms: let `S` be the waiter's write of
//! its bit and `R` a read of its re-check, `X` a putter's write and `M`
//! its read of the mask. If `R` does not see `X` (`R ->fr X`) and `M` does
//! not see `S` (`M ->fr S`), then `S ->mb R ->fr X ->mb M ->fr S` is a
//! cycle through two strong fences, which the LKMM's propagation axiom
//! forbids.
//!
//! Apply it to a refused re-check. If it failed with `Exhausted`, every
//! bitmap word it scanned was full; each of those bits is freed later in
//! its word's coherence order (`R ->fr X`) by some put, so that put's mask
//! read sees the waiter's bit (or a later value of the mask: another
//! putter's `fetch_and`, in which case *that* putter returned the bit).
//! If it failed with `Limited`, the queue itself held
//! `in_flight >= limit >= 1` tags, and the decrement of one of them is
//! such a later write, by the queue's own put.
//!
//! A put that sees the bit takes it if the waiter may allocate. If it does
//! not, either every tag is held again (a `get` took the freed one after
//! the re-check read its word: that tag's put is again a write the
//! re-check did not see, and the argument repeats), or the waiter is at
//! its limit as the put reads it: it holds tags, each freed by a put of
//! its own that follows the re-check's read of `in_flight`, and by its
//! last tag at the latest `0 < limit`. Hence **a refused queue's bit is
//! returned by a later put that finds it below its limit with a tag free
//! (at the latest one of its own puts, or the put of a tag it may use),
//! or its re-check succeeds.** A limit that rises meanwhile (a tick,
//! Borrow's contention ending) only lets an earlier put or the tick take
//! the bit.
//!
//! The argument holds whatever depth, policy and time the re-check and the
//! put use: it only relies on what they read after their fences. So the
//! lazy clock does not affect it, and neither does idle detection: before
//! (P) a put writes nothing but the bitmap word, `in_flight` and the
//! drain's marks. Under `window` the layout a put reads may have moved
//! since the re-check; the argument is extended with (T) in
//! [`super::policy::window`] ("Why no wake-up is lost"). The loom models
//! `no_lost_wakeup_limited`, `limited_waiter_skipped_by_others_is_not_lost`
//! and `put_keeps_a_waiter_at_its_limit` check both sides.
//!
//! # The restart: blk-mq's `SCHED_RESTART`
//!
//! The driver re-runs a refused queue with blk-mq's restart protocol, on
//! its restart thread (rnull's `kapi::wake`): a refusal returns
//! `BLK_STS_DEV_RESOURCE`, for which blk-mq arms no delayed run, so the
//! restart must not be lost either. Three CPUs take part: D, which
//! dispatches on the refused queue; P, whose put hands D's bit out (or the
//! tick, or a configuration change's [`HostTags::take_waiters`]); and R,
//! the restart thread. Step by step (block/blk-mq.c, blk-mq-sched.c):
//!
//! 1. D marks the hardware queue: `blk_mq_sched_mark_restart_hctx()` tests
//!    `SCHED_RESTART` and, if clear, sets it with `set_bit()`, which has no
//!    barrier. Call `S` the mark as D's test saw it or its `set_bit()` wrote
//!    it.
//! 2. D calls `queue_rq()`; rtags refuses the tag, `fetch_or`s the waiter
//!    bit with `Release` (`B`), runs (W) and its re-check fails.
//! 3. P's hand-off takes the bit with an `Acquire` `fetch_and` (`A`), which
//!    reads `B` or a later write of the mask (an rmw sequence after `B`, so
//!    still `B`'s release: explanation.txt, "rmw sequences"). The driver
//!    passes the bit to R with a release (`pending.fetch_or()` in
//!    `QueueWaker::run`) that R's `Acquire` swap of the pending mask reads.
//! 4. R runs `__blk_mq_sched_restart()`: `clear_bit()` (`C`), `smp_mb()`,
//!    `blk_mq_run_hw_queue()`, which queues a run if it sees a request on
//!    `hctx->dispatch` (`blk_mq_hw_queue_need_run()`).
//! 5. D's `queue_rq()` returns; `blk_mq_dispatch_rq_list()` splices the
//!    request onto `hctx->dispatch` (`L`), runs `smp_mb()` and tests
//!    `SCHED_RESTART` (`T`); if it is clear, D queues the run itself.
//!
//! Steps 1 to 4 form a chain of release-acquire pairs: `S ->po B` with `B`
//! a release, `B ->rf A` (through the rmw sequence) with `A` an acquire,
//! `A ->po` the driver's release, read by R's acquire, `->po C`. So
//! `S ->hb C`, and by coherence `C` comes after `S` in the bit's coherence
//! order: R clears the mark D saw or set, not an older state of the bit.
//! Steps 4 and 5 are then blk-mq's own pairing, the store-buffering pattern
//! with `smp_mb()` on both sides (`__blk_mq_sched_restart()` against
//! `blk_mq_dispatch_rq_list()`): either `T` reads `C` (or a later write),
//! so the bit is clear and D queues the run, or R's list read sees `L` and
//! R queues it. (A later write that sets the bit again is another
//! dispatch's mark, whose own refusal and hand-off continue the chain.)
//!
//! Both halves of the pair are needed. With a `Relaxed` `fetch_or` the
//! mark and the waiter bit are two unordered RMWs on D, and on a weakly
//! ordered CPU (arm64) P may see the bit before the mark reached it; with a
//! `Relaxed` `fetch_and` nothing orders what P passes on after the mark. In
//! either case `C` may precede `S` in the coherence order: `T` then reads
//! D's own mark and D queues nothing, R's list read may precede `L`, and
//! the refused device, with nothing in flight, stalls. x86 cannot show it
//! (its RMWs are fully ordered). The loom model `loom_handoff` runs the
//! restart on a thread of its own, in the order blk-mq's
//! `blk_mq_sched_restart()` does it (test the bit, then clear it), and
//! fails with either half relaxed: R's test misses the mark (loom orders a
//! location's writes as it runs them, so the missing order shows there
//! rather than as a clear before the mark).
//!
//! # The limit cache
//!
//! `limit_cache` packs a *bound* (low half) and a refresh *epoch* (high
//! half) in one `AtomicU64`. The bound is the smallest limit below the
//! depth that any queue may have in the current state, or `u32::MAX` if
//! no limit binds ([`HostTags::limit_bound`]); each policy says what it
//! is (the policy's share, [`super::policy`]). A queue holding fewer
//! tags than the bound is not at its limit, so the fast path only compares
//! `in_flight` with it; a queue holding at least the bound takes the
//! exact check. A bound that is too low only costs the exact check; one
//! that is too high would let a queue exceed its limit, so the cache must
//! never keep a bound of an older state.
//!
//! Every change of an input of the bound (the policy, the depth, Borrow's
//! expiry, a queue's activation and deactivation, a queue becoming starved
//! or not, Borrow's refusal time recorded or forgotten, the Lend limits)
//! is followed, on the thread that made it, by a *refresh*: load the cache
//! (`Acquire`), compute the bound from the current inputs, and
//! `compare_exchange` (`AcqRel`) the word loaded for the new bound with the
//! next epoch, recomputing from the value found until the exchange
//! succeeds.
//!
//! Why racing refreshes cannot leave a stale bound: all writes of the
//! cache are these exchanges, and the epoch makes every value written
//! unique. Take the last successful exchange `Cn` in the cache's
//! coherence order. Its refresh computed from inputs read after an
//! acquire read of the value `Cn` replaced, and that value, being unique,
//! was written by the previous exchange `Cn-1`: a release write read by an
//! acquire (a release-acquire pair, as in the LKMM's message-passing
//! pattern `MP+pooncerelease+poacquireonce`). `Cn-1`'s refresh in turn
//! read `Cn-2`'s write, and so on: every completed refresh, and every
//! input change that preceded one, happens before `Cn`'s computation. A
//! refresh that has not completed will exchange again. Once every input
//! change has been followed by its refresh, the bound is therefore the
//! one of the current inputs. (Without the epoch, a refresh that computed
//! from old inputs could succeed after the value it read was replaced and
//! then written again.) In between, a `get` may use the old bound: the
//! same looseness as reading the inputs with `Relaxed` loads, which the
//! limit check always does (as `hctx_may_queue()` does). The loom model
//! `limit_cache_policy_switch_vs_activation` checks a policy switch
//! racing with an activation.
//!
//! Counters that over-count for a moment (below: a setter's undone
//! increment) can only make the bound lower for that moment, and the undo
//! is followed by a refresh too.
//!
//! # Borrow's contention
//!
//! Under `borrow` every queue may take the whole depth until a queue is
//! *starved*: refused for want of a free tag while it held less than its
//! fair share (a refusal at its own limit never marks it). Then the fair
//! share applies to every queue while the host is *contended*: while a
//! queue is starved, and for `borrow_expiry_ns` after the last refusal of
//! a starved queue or after a starved queue drained, whichever is later.
//! A queue stops being starved when it drains to zero, when it goes idle,
//! or when a tick finds that it holds at least its fair share and was not
//! refused below it since the previous tick (a *drain* too): it has its
//! share, and a mark kept until a busy queue drains to zero would hold
//! every other queue at the fair share for as long as it does I/O.
//!
//! Why the fair share outlives the drain: a queue at queue depth 1
//! drains after every request. If the fair share ended at the drain, a
//! borrower would take every free tag before that queue's next request,
//! which would then wait for one of the borrower's completions, every
//! time. The window must therefore be longer than such a queue's time
//! between two requests, and than a borrower's way down from the depth to
//! its share; and it must be short against the gaps of a nearly idle
//! queue, each of whose requests holds the busy queues at their share for
//! the request's time plus the window.
//! [`DEFAULT_BORROW_EXPIRY_NS`](super::host::DEFAULT_BORROW_EXPIRY_NS)
//! lies between the two; an expiry of 0 ends the fair share when the
//! starved queues drain. A queue at queue depth 1 that is never refused
//! again still loses the fair share one window after its first drain, and
//! is then refused once, which opens the next window.
//!
//! The drain reads no clock (a put reads one only to hand off a waiter): it
//! stores the marker `DRAINED` (later than any stamp, so that a refusal's
//! `fetch_max` leaves it in place) before it decrements the starved count,
//! and the next tick replaces it with its time. The window thus starts at
//! most one tick period after the drain: the fair share lasts from the
//! drain for between `borrow_expiry_ns` and that plus a tick period. Only
//! the tick replaces the marker, and ticks are serialised: a contention
//! check that read the clock, then was delayed, could otherwise stamp the
//! marker of a later drain with its old reading and end that drain's
//! window at once (the marker does not tell one drain from the next). A
//! check that finds the marker counts the host as contended, without the
//! clock. The first check that finds a stamp's window over forgets the
//! stamp, so that later checks need no clock until the next refusal or
//! drain. A change of the policy or of the expiry forgets what was
//! recorded: it was recorded under the old setting.
//!
//! The marker and the count are ordered by a release-acquire pair: the
//! drain's decrement of the starved count is `Release`, the contention
//! check's load of the count `Acquire`. A check that reads the count
//! without the drained queue therefore also reads the marker (or a later
//! stamp), and the host is never found uncontended between the two;
//! otherwise such a check would forget the last refusal, lift the limit
//! cache and let a borrower take a tag above its fair share right at the
//! drain (the loom model `borrow_drain_window_vs_limit_check`).
//!
//! # Idle detection
//!
//! A queue idle for [`HostTags::idle_ns`] is deactivated by the periodic
//! [`HostTags::tick`], so that it no longer counts in the fair share,
//! without a timestamp per I/O: every `get` sets the queue's *busy* flag
//! (a load, and an RMW only if the flag was clear: once per tick period),
//! and each tick turns the flag into time. A queue found busy (the flag
//! set, or tags held) gets `last_active_ns = now` and its flag cleared,
//! except that a queue holding tags keeps (or gets) the flag, so that the
//! tick after the put of those tags (which does not touch the flag) still
//! finds it busy. A queue that did I/O since the last tick is therefore
//! never deactivated by that tick; one found neither busy, nor holding
//! tags, nor waiting for `idle_ns` after the last tick that found it busy
//! is. Idle detection is thus precise to one tick period and never early.
//!
//! Deactivation of a queue racing with a `get` of the same queue may leave
//! the queue inactive while it holds a tag; its next `get` activates it
//! again. This only makes the fair share slightly generous for a moment,
//! as in blk-mq.
//!
//! # Counters
//!
//! `active_queues` and the starved count are each paired with a flag of
//! the queue's flags word, a word only ever modified by RMWs. Setting:
//! increment the counter *first*, then `fetch_or` the flag (`AcqRel`), and
//! undo the increment if the flag was already set. Clearing: `fetch_and`
//! the flag off (`AcqRel`), then decrement if it was set. The clearer's
//! acquire read sees the flag set, so it reads from the setter's release
//! write or from a later RMW of the word: an LKMM *rmw sequence*, which
//! carries the release's ordering along (explanation.txt, "rmw
//! sequences"). Every decrement therefore follows its matching increment:
//! the counters never underflow, never drift, and over-count only for a
//! moment, by the number of setters in flight.
//!
//! Setters and clearers first load the word and skip the RMW when there
//! is nothing to do, which keeps the common paths (already active; drained
//! without having been starved) load-only. A clearer's `Relaxed` load may
//! miss a mark set concurrently on another CPU; the mark then stays set
//! (and counted) until the next clear: the next drain to zero, the tick
//! that finds the queue holding its share, or idle deactivation. The
//! counters stay exact because only an RMW that actually clears the flag
//! decrements.
//!
//! # Time: read only when a decision needs it
//!
//! [`HostTags::get`], [`HostTags::limit`] and [`HostTags::is_contended`]
//! take a [`Clock`](super::clock::Clock) (the driver passes its clock
//! function, tests a fixed `u64`) and read it only:
//!
//! * when a refusal marks the queue starved (the refusal's time, for
//!   Borrow's window), and
//! * in Borrow's contention check when more than one queue is active, no
//!   queue is starved, the expiry is not 0 and a stamp is recorded.
//!
//! A `get` reads the clock at most twice: at most once in its first
//! attempt, and at most once in the slow path (one reading shared by the
//! refusal's time and the re-check). A `put` reads it at most once, only
//! when it hands off waiters under `borrow` inside an expiry window. A
//! `get` whose limit does not bind never reads it under `none`, `fair`
//! and `lend`, nor under `borrow` outside an expiry window; a test counts
//! the readings. [`HostTags::tick`] takes the time as a plain `u64`: the
//! timer that calls it reads the clock anyway.
//!
//! [`HostTags`]: super::host::HostTags
//! [`HostTags::take_waiters`]: super::host::HostTags::take_waiters
//! [`HostTags::limit_bound`]: super::host::HostTags::limit_bound
//! [`HostTags::idle_ns`]: super::host::HostTags::idle_ns
//! [`HostTags::tick`]: super::host::HostTags::tick
//! [`HostTags::get`]: super::host::HostTags::get
//! [`HostTags::limit`]: super::host::HostTags::limit
//! [`HostTags::is_contended`]: super::host::HostTags::is_contended
//! [`PutRest`]: super::host::PutRest
//! [`QueueTags`]: super::queue::QueueTags
//! [`TagBitmap`]: super::bitmap::TagBitmap
//! [`TagBitmap::in_use`]: super::bitmap::TagBitmap::in_use
