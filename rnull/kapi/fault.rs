// SPDX-License-Identifier: GPL-2.0

//! The kernel's fault injection as null_blk uses it: a `struct fault_attr`
//! per kind of fault and device, started from a module parameter in the
//! kernel's `<interval>,<probability>,<space>,<times>` form (parsed by
//! `setup_fault_attr()`), shown and changed in a configfs group of the
//! kernel's (`fault_config_init()`, `CONFIG_FAULT_INJECTION_CONFIGFS`),
//! and consulted with `should_fail()` (see
//! Documentation/fault-injection/fault-injection.rst).
//!
//! Built only with `CONFIG_FAULT_INJECTION` and
//! `CONFIG_FAULT_INJECTION_CONFIGFS`, as null_blk's
//! `CONFIG_BLK_DEV_NULL_BLK_FAULT_INJECTION` needs both.
//!
//! 6.12's `bindings` do not include `linux/fault-inject.h`: the structures
//! are declared in [`raw`] after the header of the kernel this builds
//! against, the ratelimit state inside with bindgen's type (its size is
//! configuration-dependent); `scripts/check-configfs-layout.py` (`make
//! test`) compares them, field by field, and the prototypes with bindgen's.

use super::{
    configfs::{raw::config_group, DefaultGroup},
    fmt::BufWriter,
    lock_class::LockClass,
    modinfo::ConstText,
    param::{Bytes, ParamValue},
    parse::trim_newline,
    ratelimit::RateLimit,
};
use core::{
    fmt::Write,
    ptr::addr_of_mut,
    sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, AtomicUsize, Ordering},
};
use kernel::{bindings, c_str, prelude::*, str::CStr, types::Opaque};

/// The C side of `include/linux/fault-inject.h`.
#[allow(non_camel_case_types)]
mod raw {
    use super::config_group;
    use core::ffi::{c_int, c_ulong};
    use kernel::{bindings, ffi::c_char};

    #[repr(C)]
    pub(super) struct fault_attr {
        pub(super) probability: c_ulong,
        pub(super) interval: c_ulong,
        pub(super) times: bindings::atomic_t,
        pub(super) space: bindings::atomic_t,
        pub(super) verbose: c_ulong,
        pub(super) task_filter: bool,
        pub(super) stacktrace_depth: c_ulong,
        pub(super) require_start: c_ulong,
        pub(super) require_end: c_ulong,
        pub(super) reject_start: c_ulong,
        pub(super) reject_end: c_ulong,
        pub(super) count: c_ulong,
        pub(super) ratelimit_state: bindings::ratelimit_state,
        // `FAULT_ATTR_DNAME_LEN`.
        pub(super) dname: [c_char; 64],
    }

    #[repr(C)]
    pub(super) struct fault_config {
        pub(super) attr: fault_attr,
        pub(super) group: config_group,
    }

    // `config_group` reaches `struct module`, whose bindgen type holds an
    // empty arch struct the lint flags; C only receives pointers.
    #[allow(improper_ctypes)]
    extern "C" {
        /// 1 on success, 0 if `str_` does not parse (and a warning logged).
        pub(super) fn setup_fault_attr(attr: *mut fault_attr, str_: *mut c_char) -> c_int;
        pub(super) fn should_fail(attr: *mut fault_attr, size: isize) -> bool;
        pub(super) fn fault_config_init(config: *mut fault_config, name: *const c_char);
    }
}

/// The form of a fault injection parameter, as null_blk's help says it.
pub(crate) const FORM: &str = "<interval>,<probability>,<space>,<times>";

/// `module_param_string()`'s buffer in null_blk: 80 bytes, the NUL included.
const STR_LEN: usize = 80;

/// A fault injection module parameter (`timeout`, `requeue`,
/// `init_hctx`): empty (no faults) or `<interval>,<probability>,<space>,
/// <times>`, parsed by `setup_fault_attr()` when it is set, so that a value
/// it refuses fails the load with `EINVAL` (null_blk's load fails so too,
/// from its init), and one that does not fit null_blk's string with
/// `ENOSPC`, as `param_set_copystring()`'s. Shown as given, as null_blk's
/// `module_param_string()` (`param_get_string()`).
pub(crate) struct FaultParam {
    set: AtomicBool,
    /// The value as given, `text_len` bytes of it.
    text: [AtomicU8; STR_LEN],
    text_len: AtomicUsize,
    interval: AtomicU64,
    probability: AtomicU64,
    space: AtomicI32,
    times: AtomicI32,
    /// The rate limit of the log lines of refused values.
    log: RateLimit,
}

/// The values a [`FaultParam`] gives each device's attribute.
#[derive(Clone, Copy)]
struct FaultValues {
    interval: u64,
    probability: u64,
    space: i32,
    times: i32,
}

impl FaultParam {
    /// Not set: no faults.
    pub(crate) const fn new() -> Self {
        Self {
            set: AtomicBool::new(false),
            text: [const { AtomicU8::new(0) }; STR_LEN],
            text_len: AtomicUsize::new(0),
            interval: AtomicU64::new(0),
            probability: AtomicU64::new(0),
            space: AtomicI32::new(0),
            times: AtomicI32::new(0),
            log: RateLimit::new(),
        }
    }

    /// `help (<interval>,<probability>,<space>,<times>; default none)`,
    /// the parameter's `.modinfo` description.
    pub(crate) const fn describe(&self, help: &str) -> ConstText {
        ConstText::new()
            .str(help)
            .str(" (")
            .str(FORM)
            .str("; default none)")
    }

    /// The parsed values, if the parameter was set.
    fn values(&self) -> Option<FaultValues> {
        // Relaxed: set while the module loads, read after (see `IntParam`).
        self.set.load(Ordering::Relaxed).then(|| FaultValues {
            interval: self.interval.load(Ordering::Relaxed),
            probability: self.probability.load(Ordering::Relaxed),
            space: self.space.load(Ordering::Relaxed),
            times: self.times.load(Ordering::Relaxed),
        })
    }
}

impl ParamValue for FaultParam {
    fn set(&self, name: &CStr, input: &[u8]) -> Result {
        if input.is_empty() {
            self.set.store(false, Ordering::Relaxed);
            self.text_len.store(0, Ordering::Relaxed);
            return Ok(());
        }
        if input.len() >= STR_LEN {
            if self.log.allow(&name) {
                pr_err!(
                    "invalid value for parameter {name}: string doesn't fit in {} chars; must be {FORM}\n",
                    STR_LEN - 1
                );
            }
            return Err(ENOSPC);
        }
        let mut text = [0u8; STR_LEN];
        text[..input.len()].copy_from_slice(input);
        // SAFETY: all-zero is a valid `fault_attr` for `setup_fault_attr`,
        // which only stores the four numbers into it.
        let mut attr: raw::fault_attr = unsafe { core::mem::zeroed() };
        // SAFETY: `attr` is valid for writes; `text` is NUL-terminated (it
        // is longer than the input) and writable.
        let parsed = unsafe { raw::setup_fault_attr(&mut attr, text.as_mut_ptr().cast()) };
        if parsed == 0 {
            if self.log.allow(&name) {
                pr_err!(
                    "invalid value '{}' for parameter {name}: must be {FORM}\n",
                    Bytes(trim_newline(input))
                );
            }
            return Err(EINVAL);
        }
        // Relaxed: see `values`.
        self.interval.store(attr.interval as u64, Ordering::Relaxed);
        self.probability
            .store(attr.probability as u64, Ordering::Relaxed);
        self.space.store(attr.space.counter, Ordering::Relaxed);
        self.times.store(attr.times.counter, Ordering::Relaxed);
        for (dst, &src) in self.text.iter().zip(input) {
            dst.store(src, Ordering::Relaxed);
        }
        self.text_len.store(input.len(), Ordering::Relaxed);
        self.set.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// The string as given and a newline (`"%s\n"`); bytes, as
    /// null_blk's, not necessarily UTF-8.
    fn show(&self, out: &mut BufWriter<'_>) -> core::fmt::Result {
        // Relaxed: see `values`.
        let len = self.text_len.load(Ordering::Relaxed).min(STR_LEN);
        let mut text = [0u8; STR_LEN];
        for (dst, src) in text.iter_mut().zip(&self.text[..len]) {
            *dst = src.load(Ordering::Relaxed);
        }
        out.write_bytes(&text[..len])?;
        writeln!(out)
    }
}

/// The lockdep class of the ratelimit locks of the fault attributes.
static RATELIMIT_CLASS: LockClass = LockClass::new();

/// One kind of fault of one device: a `struct fault_config`, the
/// attribute `should_fail()` reads and the configfs group `<name>/` that
/// shows and changes it (probability, interval, times, space, verbose,
/// ...).
///
/// # Invariants
///
/// `inner.attr` is initialised as `FAULT_ATTR_INITIALIZER` makes it (its
/// ratelimit lock initialised), then given the parameter's values;
/// `inner.group` by `fault_config_init()`, whose reference this value
/// owns and puts on drop. The group is handed out at most once
/// (`shown`), so at most one directory links it; that directory keeps
/// this value alive (see [`DefaultGroup`]) and has unlinked it by the time
/// it goes.
#[pin_data(PinnedDrop)]
pub(crate) struct FaultConfig {
    #[pin]
    inner: Opaque<raw::fault_config>,
    /// Whether [`Self::take_group`] has given the group out.
    shown: AtomicBool,
}

// SAFETY: C reads and changes the attribute from any context, as for
// null_blk's (the configfs files and `should_fail()` use atomics for
// `times` and `space`; `count` is racy in C, by design); Rust only passes
// its address.
unsafe impl Send for FaultConfig {}
// SAFETY: as above.
unsafe impl Sync for FaultConfig {}

impl FaultConfig {
    /// The faults `param` asks for, in the group `name` (at most one
    /// directory may show it, as a default group).
    pub(crate) fn new(name: &'static CStr, param: &FaultParam) -> impl PinInit<Self> {
        let values = param.values();
        pin_init!(Self {
            shown: AtomicBool::new(false),
            inner <- Opaque::ffi_init(move |raw: *mut raw::fault_config| {
                // `spinlock_t` is a `raw_spinlock_t` without PREEMPT_RT
                // (which `irq_lock` refuses to build on).
                const {
                    assert!(
                        core::mem::size_of::<bindings::spinlock_t>()
                            == core::mem::size_of::<bindings::raw_spinlock_t>()
                    )
                };
                // All-zero, then `FAULT_ATTR_INITIALIZER`'s fields. The raw
                // lock goes through the `spin_lock_init()` helper (same
                // layout, asserted above); its lockdep wait type is then a
                // `spinlock_t`'s, which never matters: the rate limit stays
                // disabled (interval 0), so `___ratelimit()` never takes it.
                // SAFETY: `raw` is valid for writes and pinned;
                // `fault_config_init()` copies `name` (a static anyway).
                unsafe {
                    raw.write(core::mem::zeroed());
                    let attr = addr_of_mut!((*raw).attr);
                    (*attr).interval = 1;
                    (*attr).times.counter = 1;
                    (*attr).require_end = core::ffi::c_ulong::MAX;
                    (*attr).stacktrace_depth = 32;
                    (*attr).verbose = 2;
                    (*attr).ratelimit_state.burst = bindings::DEFAULT_RATELIMIT_BURST as _;
                    bindings::__spin_lock_init(
                        addr_of_mut!((*attr).ratelimit_state.lock).cast(),
                        c_str!("fault_attr::ratelimit_state.lock").as_char_ptr(),
                        RATELIMIT_CLASS.as_ptr(),
                    );
                    // null_blk's `__null_setup_fault()`: quiet.
                    if let Some(v) = values {
                        (*attr).interval = v.interval as _;
                        (*attr).probability = v.probability as _;
                        (*attr).space.counter = v.space;
                        (*attr).times.counter = v.times;
                        (*attr).verbose = 0;
                    }
                    // INVARIANT: the attribute and the group are set up.
                    raw::fault_config_init(raw, name.as_char_ptr());
                }
            }),
        })
    }

    /// Whether to inject the fault now (`should_fail(attr, 1)`, as
    /// null_blk's calls).
    #[inline]
    pub(crate) fn should_fail(&self) -> bool {
        let raw = self.inner.get();
        // `should_fail()` neither sleeps nor allocates: any context, as
        // null_blk's `queue_rq`, concurrently with the configfs files.
        // SAFETY: the attribute is initialised (type invariant) and lives
        // as long as `self`.
        unsafe { raw::should_fail(addr_of_mut!((*raw).attr), 1) }
    }

    /// The configfs group, for the one directory that shows it: the first
    /// call gives it, later ones `None` (a group is on one directory's
    /// list of default groups only).
    pub(crate) fn take_group(&self) -> Option<&DefaultGroup> {
        // Relaxed: only the swap's atomicity matters; the group's fields
        // were written before `self` was shared.
        if self.shown.swap(true, Ordering::Relaxed) {
            return None;
        }
        let raw = self.inner.get();
        // The swap above gives the group out once.
        // SAFETY: the group is initialised (type invariant) and lives as
        // long as `self`, which the borrow ties the result to.
        Some(unsafe { DefaultGroup::from_raw(addr_of_mut!((*raw).group)) })
    }
}

#[pinned_drop]
impl PinnedDrop for FaultConfig {
    fn drop(self: Pin<&mut Self>) {
        let raw = self.inner.get();
        // The last reference: it frees the item's name, if allocated, and
        // calls no release (the type has none).
        // SAFETY: the reference `fault_config_init()` made is ours (type
        // invariant); configfs has unlinked the group.
        unsafe { super::configfs::raw::config_item_put(addr_of_mut!((*raw).group.cg_item)) };
    }
}
