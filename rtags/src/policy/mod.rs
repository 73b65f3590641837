//! Tag sharing policies.
//!
//! A policy decides how many tags of the host budget one request queue may
//! hold at a time (its *limit*), or, under `window`, which ones. With `D`
//! the host depth and `A` the number of active queues:
//!
//! | policy | limit of a queue |
//! | --- | --- |
//! | [`fair`] | blk-mq's `hctx_may_queue()`: `max(ceil(D / A), 4)` when `A > 1` |
//! | [`borrow`] | `D` until a queue is starved, then `fair`'s while the host is contended |
//! | [`none`] | `D`: first come, first served |
//! | [`lend`] | `fair`'s, moved stepwise by the tick from the queues not refused to the refused |
//! | [`window`] | a window of the bitmap per active queue, plus a slice of a shared part |
//!
//! Each policy is a unit type implementing [`Rule`] in a file of its own,
//! with its tests, and is registered by one line in the list at the end of
//! this file. The list generates [`Policy`], the enum that names the
//! policies (`host/policy`, the `tag_policy` parameter, the property tests
//! all take their names from [`Policy::ALL`]), every policy's state in a
//! host ([`States`]), and the dispatch from a [`Policy`] to its rule: a
//! `match`, so that every call is static and inlined where it is small.
//! The allocation fast path calls no rule at all: it compares the queue's
//! count with the limit cache's bound, which the host derives from the
//! policy's [`Rule::share`] (see "The limit cache" in [`super::design`]).
//!
//! # Adding a policy
//!
//! Write `policy/<name>.rs`: module docs saying what the policy does, a
//! unit type, its `impl Rule` and its tests. [`Rule::NAME`], a
//! [`Rule::State`] (`()` for none) and [`Rule::share`] are all a policy
//! whose limit is the same for every queue needs; a limit of the queue's
//! own ([`Rule::limit`]), a tick, or tags placed rather than counted are
//! optional. The inputs a limit may read are the host's
//! ([`HostTags::depth`], [`HostTags::active_queues`],
//! [`HostTags::joined_queues`], ...) and the queue's own counts
//! ([`QueueTags::in_flight`], [`QueueTags::failures`], ...). Then add its
//! line to the list below: `Variant => module::Type,`.

use super::clock::Clock;
use super::host::{HostTags, Refusal};
use super::queue::QueueTags;
use super::sync::AtomicU32;

pub use fair::{fair_share, MIN_FAIR_SHARE};

/// A policy's own state in every host: built with the host.
pub trait State {
    /// The state of a new host.
    fn new() -> Self;
}

impl State for () {
    fn new() {}
}

/// What an allocation of a queue holding at least the share may do
/// ([`Rule::admit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Take any free tag of the budget.
    Any,
    /// The rule placed the tag itself (and counted it in the queue's
    /// `in_flight`).
    Tag(u32),
    /// Refuse the allocation.
    Refuse(Refusal),
}

/// Whom a tick wakes ([`Rule::tick`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The waiters that may allocate now, as a put hands them out: limits
    /// may have risen without a put (a queue retired, limits moved).
    MayAllocate,
    /// Every waiter: what decides who may allocate moved, and a waiting
    /// queue may have nothing a put would hand it.
    All,
    /// Nobody.
    Nobody,
}

/// One tag sharing policy: its name and how many tags (or which) a queue
/// may hold.
///
/// Every method gets the host and the policy's own state in it, and reads
/// what it needs when it needs it (the loads are `Relaxed`: a limit is
/// approximate by design, as `hctx_may_queue()` is). The host calls them
/// out of line only: on an allocation whose queue holds at least the
/// share, on a put or tick that finds waiters, on a switch to the policy,
/// and on the tick.
pub trait Rule: Sized {
    /// The policy's name in `host/policy` and the `tag_policy` parameter.
    const NAME: &'static str;

    /// The policy's own state in every host (`()`: none).
    type State: State;

    /// The fewest tags any queue may hold now: every queue's limit is at
    /// least this (the depth or more: no limit binds). The host derives
    /// the fast path's bound from it: a queue holding fewer tags is below
    /// its limit and allocates without asking the policy. For a policy
    /// whose limit is the same for every queue, this is the limit. It
    /// reads no clock: a limit that depends on the time counts the lowest
    /// it may be. A share of 0 makes every allocation ask [`Rule::admit`].
    ///
    /// Every input it reads must be followed, when it changes, by a
    /// refresh of the limit cache (the host's own inputs are; a policy
    /// that changes its state calls `HostTags::refresh_limit_cache`).
    fn share(host: &HostTags, state: &Self::State) -> u32;

    /// `q`'s limit now (the depth or more: none). `clock` is read only
    /// if the limit depends on the time. Default: the share.
    #[inline(always)]
    fn limit<C: Clock>(host: &HostTags, state: &Self::State, q: &QueueTags, clock: &C) -> u32 {
        let _ = (q, clock);
        Self::share(host, state)
    }

    /// Whether `q` holds its limit, that limit being below `depth`: the
    /// exact check of an allocation whose queue holds at least the share,
    /// and of a hand-off. Default: from [`Rule::limit`]; a policy may give
    /// an equivalent that is cheaper (no division).
    #[inline(always)]
    fn limited<C: Clock>(
        host: &HostTags,
        state: &Self::State,
        q: &QueueTags,
        depth: u32,
        clock: &C,
    ) -> bool {
        let limit = Self::limit(host, state, q, clock);
        limit < depth && q.in_flight() >= limit
    }

    /// An allocation of `q`, which holds at least the share, with `hint`
    /// and `depth` as the allocation read them. Default: refused if `q`
    /// is at its limit ([`Rule::limited`]), else any free tag. A policy
    /// that places tags rather than counting them takes the tag here.
    #[inline(always)]
    fn admit<C: Clock>(
        host: &HostTags,
        state: &Self::State,
        q: &QueueTags,
        hint: &AtomicU32,
        depth: u32,
        clock: &C,
    ) -> Admit {
        let _ = hint;
        if Self::limited(host, state, q, depth, clock) {
            Admit::Refuse(Refusal::Limited)
        } else {
            Admit::Any
        }
    }

    /// The bits of `waiters` (the waiter mask, read after the put's or the
    /// tick's fence) whose queues may allocate now: the hand-off. `queues`
    /// are the host's queues, `depth` as read after the fence. Default:
    /// none if every tag is held, else the waiters below their limit
    /// (`HostTags::waiters_below_limit`).
    fn hand_off<Q: AsRef<QueueTags>, C: Clock>(
        host: &HostTags,
        state: &Self::State,
        waiters: u64,
        queues: &[Q],
        depth: u32,
        clock: &C,
    ) -> u64 {
        host.waiters_below_limit::<Self, Q, C>(state, waiters, queues, depth, clock)
    }

    /// The host switches to this policy (called before the switch is
    /// visible). Default: nothing.
    fn select(host: &HostTags, state: &Self::State) {
        let _ = (host, state);
    }

    /// The policy's part of the host's periodic tick, after idle queues
    /// were retired, with every queue that can be active or waiting.
    /// Returns whom the tick wakes. Default: [`Wake::MayAllocate`].
    fn tick<Q: AsRef<QueueTags>>(host: &HostTags, state: &Self::State, queues: &[Q]) -> Wake {
        let _ = (host, state, queues);
        Wake::MayAllocate
    }
}

/// Generates [`Policy`], [`States`] and the dispatch from the list of
/// policies; see the list below.
macro_rules! policies {
    ($($variant:ident => $module:ident :: $rule:ident,)+) => {
        $(pub mod $module;)+

        /// How the host tag budget is shared between request queues: one
        /// variant per registered policy, in the order of the list (the
        /// first is the default).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum Policy {
            $(
                #[doc = concat!("[`", stringify!($rule), "`](", stringify!($module), "::",
                    stringify!($rule), ").")]
                $variant,
            )+
        }

        impl Policy {
            /// Every policy, in the order of the list (`as_u32` order).
            pub const ALL: [Policy; COUNT] = [$(Policy::$variant),+];

            /// Every policy's name, in the order of [`Self::ALL`].
            pub const NAMES: [&'static str; COUNT] = [$(<$module::$rule as Rule>::NAME),+];

            /// The policy's name, as [`Self::from_name`] parses it.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Policy::$variant => <$module::$rule as Rule>::NAME,)+
                }
            }

            /// Decodes [`Self::as_u32`]; `None` for unknown values.
            pub fn from_u32(v: u32) -> Option<Policy> {
                match v {
                    $(v if v == Policy::$variant as u32 => Some(Policy::$variant),)+
                    _ => None,
                }
            }

            /// [`Rule::share`] of the policy.
            #[inline(always)]
            pub(crate) fn share(self, host: &HostTags) -> u32 {
                let states = host.states();
                match self {
                    $(Policy::$variant => <$module::$rule as Rule>::share(host, &states.$module),)+
                }
            }

            /// [`Rule::limit`] of the policy.
            #[inline(always)]
            pub(crate) fn limit<C: Clock>(self, host: &HostTags, q: &QueueTags, clock: &C) -> u32 {
                let states = host.states();
                match self {
                    $(Policy::$variant =>
                        <$module::$rule as Rule>::limit(host, &states.$module, q, clock),)+
                }
            }

            /// [`Rule::limited`] of the policy.
            #[cfg(all(test, not(loom)))]
            pub(crate) fn limited<C: Clock>(
                self,
                host: &HostTags,
                q: &QueueTags,
                depth: u32,
                clock: &C,
            ) -> bool {
                let states = host.states();
                match self {
                    $(Policy::$variant =>
                        <$module::$rule as Rule>::limited(host, &states.$module, q, depth, clock),)+
                }
            }

            /// [`Rule::admit`] of the policy.
            #[inline(always)]
            pub(crate) fn admit<C: Clock>(
                self,
                host: &HostTags,
                q: &QueueTags,
                hint: &AtomicU32,
                depth: u32,
                clock: &C,
            ) -> Admit {
                let states = host.states();
                match self {
                    $(Policy::$variant => <$module::$rule as Rule>::admit(
                        host, &states.$module, q, hint, depth, clock),)+
                }
            }

            /// [`Rule::hand_off`] of the policy.
            pub(crate) fn hand_off<Q: AsRef<QueueTags>, C: Clock>(
                self,
                host: &HostTags,
                waiters: u64,
                queues: &[Q],
                depth: u32,
                clock: &C,
            ) -> u64 {
                let states = host.states();
                match self {
                    $(Policy::$variant => <$module::$rule as Rule>::hand_off(
                        host, &states.$module, waiters, queues, depth, clock),)+
                }
            }

            /// [`Rule::select`] of the policy.
            pub(crate) fn select(self, host: &HostTags) {
                let states = host.states();
                match self {
                    $(Policy::$variant => <$module::$rule as Rule>::select(host, &states.$module),)+
                }
            }

            /// [`Rule::tick`] of the policy.
            pub(crate) fn tick<Q: AsRef<QueueTags>>(self, host: &HostTags, queues: &[Q]) -> Wake {
                let states = host.states();
                match self {
                    $(Policy::$variant =>
                        <$module::$rule as Rule>::tick(host, &states.$module, queues),)+
                }
            }
        }

        /// The number of registered policies.
        const COUNT: usize = [$(stringify!($variant)),+].len();

        /// Every policy's own state in one host.
        pub struct States {
            $(
                #[doc = concat!("[`", stringify!($rule), "`](", stringify!($module), "::",
                    stringify!($rule), ")'s.")]
                pub(crate) $module: <$module::$rule as Rule>::State,
            )+
        }

        impl State for States {
            fn new() -> States {
                States {
                    $($module: State::new(),)+
                }
            }
        }
    };
}

// The policies: `Variant => module::Type,`, one line each, in the order
// `host/policy` and the parameter's description list them.
policies! {
    Fair => fair::Fair,
    Borrow => borrow::Borrow,
    None => none::NoLimit,
    Lend => lend::Lend,
    Window => window::Window,
}

impl Policy {
    /// The default policy, blk-mq's own sharing.
    pub const DEFAULT: Policy = Policy::Fair;

    /// Parses a name as `host/policy` takes it, with an optional single
    /// trailing newline.
    pub fn from_name(name: &[u8]) -> Option<Policy> {
        let name = name.strip_suffix(b"\n").unwrap_or(name);
        Policy::ALL
            .into_iter()
            .find(|p| p.name().as_bytes() == name)
    }

    /// Encoding for storage in an atomic.
    pub fn as_u32(self) -> u32 {
        self as u32
    }
}

impl Default for Policy {
    fn default() -> Policy {
        Policy::DEFAULT
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn names_round_trip() {
        for p in Policy::ALL {
            assert_eq!(Policy::from_name(p.name().as_bytes()), Some(p));
            let mut with_nl = Vec::from(p.name().as_bytes());
            with_nl.push(b'\n');
            assert_eq!(Policy::from_name(&with_nl), Some(p));
            assert_eq!(
                Policy::from_name(&[p.name().as_bytes(), b"\n\n"].concat()),
                None
            );
            assert_eq!(Policy::from_u32(p.as_u32()), Some(p));
            assert_eq!(Policy::NAMES[p.as_u32() as usize], p.name());
            assert!(!p.name().is_empty() && p.name().bytes().all(|b| b.is_ascii_lowercase()));
        }
        for (i, p) in Policy::ALL.iter().enumerate() {
            assert_eq!(p.as_u32() as usize, i);
            assert!(
                Policy::ALL[..i].iter().all(|o| o.name() != p.name()),
                "{p:?} twice"
            );
        }
        assert_eq!(Policy::from_u32(Policy::ALL.len() as u32), None);
        assert_eq!(Policy::from_name(b"Fair"), None);
        assert_eq!(Policy::from_name(b""), None);
        assert_eq!(Policy::from_name(b" fair"), None);
        assert_eq!(Policy::from_name(b"windows"), None);
        assert_eq!(Policy::default(), Policy::ALL[0]);
        assert_eq!(Policy::default(), Policy::Fair);
    }
}
