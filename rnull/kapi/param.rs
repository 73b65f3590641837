// SPDX-License-Identifier: GPL-2.0

//! Module parameters on top of the kernel's `kernel_param` machinery.
//!
//! 6.12's `module!` macro has no parameters, so each parameter is a
//! `struct kernel_param` placed in the `__param` section by [`module_param!`],
//! exactly where the C `module_param()` macro puts it. The load path
//! (`parse_args()`) and `/sys/module/<module>/parameters/` then find it like any
//! C parameter. The `set` callback validates the value and reports a bad one
//! by name and range; the kernel turns its `-EINVAL` into a failed load.

use super::{
    fmt::BufWriter,
    modinfo::ConstText,
    parse::{parse_i64, parse_i64_decimal, trim_newline},
    ratelimit::RateLimit,
};
use core::{
    ffi::{c_int, c_void},
    fmt::Write,
    sync::atomic::{AtomicI64, Ordering},
};
use kernel::{bindings, error::code::EINVAL, ffi::c_char, prelude::*, str::CStr};

/// What a parameter's value type must provide.
pub(crate) trait ParamValue: Sync {
    /// Parses and stores `input`; on error nothing changes.
    fn set(&self, name: &CStr, input: &[u8]) -> Result;
    /// Writes the current value.
    fn show(&self, out: &mut BufWriter<'_>) -> core::fmt::Result;
}

/// The values an integer setting accepts, and how to say so.
///
/// One range serves a module parameter, the sysfs file that changes the same
/// setting at run time and (through `.modinfo`) the README's table, so each
/// range is written once.
#[derive(Clone, Copy)]
pub(crate) struct IntRange {
    min: i64,
    max: i64,
    power_of_two: bool,
}

impl IntRange {
    /// `min..=max`.
    pub(crate) const fn new(min: i64, max: i64) -> Self {
        Self {
            min,
            max,
            power_of_two: false,
        }
    }

    /// Powers of two in `min..=max`.
    pub(crate) const fn power_of_two(min: i64, max: i64) -> Self {
        Self {
            min,
            max,
            power_of_two: true,
        }
    }

    /// Whether `v` is in the range.
    pub(crate) const fn accepts(&self, v: i64) -> bool {
        v >= self.min && v <= self.max && (!self.power_of_two || (v > 0 && v & (v - 1) == 0))
    }

    /// Parses `input` as C's `kstrtoint(s, 0)` would and checks the range.
    /// On error logs a line naming `what` (the parameter or file) and the
    /// range, if `log` (the rate limit of `what`'s refusals) allows it, and
    /// returns `EINVAL`.
    pub(crate) fn parse(
        &self,
        what: &dyn core::fmt::Display,
        log: &RateLimit,
        input: &[u8],
    ) -> Result<i64> {
        self.parse_in(what, log, input, false)
    }

    /// [`Self::parse`], in decimal (`kstrtoint(s, 10)`) if `decimal`.
    fn parse_in(
        &self,
        what: &dyn core::fmt::Display,
        log: &RateLimit,
        input: &[u8],
        decimal: bool,
    ) -> Result<i64> {
        let v = if decimal {
            parse_i64_decimal(input)
        } else {
            parse_i64(input)
        };
        match v {
            Some(v) if self.accepts(v) => Ok(v),
            _ => {
                if log.allow(what) {
                    pr_err!(
                        "invalid value '{}' for {}: must be {}{} in {}..={}\n",
                        Bytes(trim_newline(input)),
                        what,
                        if self.power_of_two {
                            "a power of two and "
                        } else {
                            ""
                        },
                        if decimal {
                            "a decimal integer"
                        } else {
                            "an integer"
                        },
                        self.min,
                        self.max
                    );
                }
                Err(EINVAL)
            }
        }
    }

    /// Like [`Self::parse`], for settings kept as unsigned numbers.
    pub(crate) fn parse_u64(
        &self,
        what: &dyn core::fmt::Display,
        log: &RateLimit,
        input: &[u8],
    ) -> Result<u64> {
        u64::try_from(self.parse(what, log, input)?).map_err(|_| EINVAL)
    }

    /// Appends `min..=max[, power of two]` to `text`.
    const fn describe(&self, text: ConstText) -> ConstText {
        let text = text.int(self.min).str("..=").int(self.max);
        if self.power_of_two {
            text.str(", power of two")
        } else {
            text
        }
    }
}

/// An integer module parameter restricted to an [`IntRange`].
///
/// Parameters are set while the module loads, before `init` runs, and read by
/// `init`; a relaxed atomic is enough since module loading orders the two.
pub(crate) struct IntParam {
    value: AtomicI64,
    default: i64,
    range: IntRange,
    /// Read in decimal only, as null_blk's `null_param_store_val()`
    /// (`kstrtoint(s, 10)`) reads `queue_mode` and `irqmode`.
    decimal: bool,
    /// The rate limit of the log lines of refused values.
    log: RateLimit,
}

impl IntParam {
    /// A parameter with a default and the values it accepts.
    pub(crate) const fn new(default: i64, range: IntRange) -> Self {
        assert!(range.accepts(default));
        Self {
            value: AtomicI64::new(default),
            default,
            range,
            decimal: false,
            log: RateLimit::new(),
        }
    }

    /// The same parameter, read in decimal only (`kstrtoint(s, 10)`).
    pub(crate) const fn decimal(self) -> Self {
        Self {
            decimal: true,
            ..self
        }
    }

    /// The current value, always within the range.
    pub(crate) fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }

    /// Replaces the value with `v`, what the load settled on instead of
    /// the value given (null_blk's `home_node`, shown as -1 once
    /// refused); `v` must be in the range.
    pub(crate) fn settle(&self, v: i64) {
        debug_assert!(self.range.accepts(v));
        if self.range.accepts(v) {
            self.value.store(v, Ordering::Relaxed);
        }
    }

    /// The values the parameter accepts.
    pub(crate) const fn range(&self) -> &IntRange {
        &self.range
    }

    /// `help (range; default D)`, the parameter's `.modinfo` description.
    pub(crate) const fn describe(&self, help: &str) -> ConstText {
        let text = self.range.describe(ConstText::new().str(help).str(" ("));
        let text = if self.decimal {
            text.str(", decimal")
        } else {
            text
        };
        text.str("; default ").int(self.default).str(")")
    }
}

/// The name of a parameter in error messages.
struct ParamName<'a>(&'a CStr);

impl core::fmt::Display for ParamName<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "parameter {}", self.0)
    }
}

impl ParamValue for IntParam {
    fn set(&self, name: &CStr, input: &[u8]) -> Result {
        let v = self
            .range
            .parse_in(&ParamName(name), &self.log, input, self.decimal)?;
        self.value.store(v, Ordering::Relaxed);
        Ok(())
    }

    fn show(&self, out: &mut BufWriter<'_>) -> core::fmt::Result {
        writeln!(out, "{}", self.get())
    }
}

/// A parameter whose value is one name out of a fixed list.
pub(crate) struct ChoiceParam {
    index: AtomicI64,
    default: usize,
    names: &'static [&'static str],
    /// The rate limit of the log lines of refused values.
    log: RateLimit,
}

impl ChoiceParam {
    /// `names[default]` is the default.
    pub(crate) const fn new(default: usize, names: &'static [&'static str]) -> Self {
        Self {
            index: AtomicI64::new(default as i64),
            default,
            names,
            log: RateLimit::new(),
        }
    }

    /// Index of the chosen name.
    pub(crate) fn get(&self) -> usize {
        usize::try_from(self.index.load(Ordering::Relaxed)).unwrap_or(0)
    }

    /// `help (a, b, c; default a)`, the parameter's `.modinfo` description.
    pub(crate) const fn describe(&self, help: &str) -> ConstText {
        let mut text = ConstText::new().str(help).str(" (");
        let mut i = 0;
        while i < self.names.len() {
            if i > 0 {
                text = text.str(", ");
            }
            text = text.str(self.names[i]);
            i += 1;
        }
        // An out of range default is a build error: this runs in a `const`.
        text.str("; default ")
            .str(self.names[self.default])
            .str(")")
    }
}

impl ParamValue for ChoiceParam {
    fn set(&self, name: &CStr, input: &[u8]) -> Result {
        let wanted = trim_newline(input);
        match self.names.iter().position(|n| n.as_bytes() == wanted) {
            Some(i) => {
                self.index.store(i as i64, Ordering::Relaxed);
                Ok(())
            }
            None => {
                if self.log.allow(&ParamName(name)) {
                    pr_err!(
                        "invalid value '{}' for parameter {}: must be one of {:?}\n",
                        Bytes(trim_newline(input)),
                        name,
                        self.names
                    );
                }
                Err(EINVAL)
            }
        }
    }

    fn show(&self, out: &mut BufWriter<'_>) -> core::fmt::Result {
        writeln!(
            out,
            "{}",
            self.names.get(self.get()).copied().unwrap_or("?")
        )
    }
}

/// Prints user input without trusting it to be UTF-8 or printable.
pub(crate) struct Bytes<'a>(pub(crate) &'a [u8]);

impl core::fmt::Display for Bytes<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for &b in self.0.iter().take(64) {
            if b.is_ascii_graphic() || b == b' ' {
                f.write_char(b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

/// Ties a parameter's name to its value; `kernel_param.arg` points here.
pub(crate) struct ParamDesc {
    name: &'static CStr,
    value: &'static dyn ParamValue,
}

impl ParamDesc {
    /// Describes the parameter `name` stored in `value`.
    pub(crate) const fn new(name: &'static CStr, value: &'static dyn ParamValue) -> Self {
        Self { name, value }
    }
}

/// One entry of the `__param` section.
///
/// # Invariants
///
/// `0.__bindgen_anon_1.arg` points to a `'static` [`ParamDesc`] and `0.ops`
/// to [`OPS`].
#[repr(transparent)]
pub(crate) struct ParamEntry(bindings::kernel_param);

// SAFETY: the entry is immutable after link time; the pointers it holds refer
// to `'static` data that is itself `Sync`.
unsafe impl Sync for ParamEntry {}

impl ParamEntry {
    /// Builds the entry; `module` is `__this_module`.
    pub(crate) const fn new(
        desc: &'static ParamDesc,
        perm: u16,
        module: *mut bindings::module,
    ) -> Self {
        // INVARIANT: `arg` is `desc`, `ops` is `OPS`.
        Self(bindings::kernel_param {
            name: desc.name.as_char_ptr(),
            mod_: module,
            ops: &OPS,
            perm,
            level: -1,
            flags: 0,
            __bindgen_anon_1: bindings::kernel_param__bindgen_ty_1 {
                arg: desc as *const ParamDesc as *mut c_void,
            },
        })
    }
}

static OPS: bindings::kernel_param_ops = bindings::kernel_param_ops {
    flags: 0,
    set: Some(set_callback),
    get: Some(get_callback),
    free: None,
};

/// # Safety
///
/// `kp` must be one of this module's [`ParamEntry`]s and `val` a NUL-terminated
/// string or null, as `parse_args()` and sysfs writes guarantee.
unsafe extern "C" fn set_callback(val: *const c_char, kp: *const bindings::kernel_param) -> c_int {
    // SAFETY: by the type invariant of `ParamEntry`, `arg` points to a `'static ParamDesc`.
    let desc = unsafe { &*((*kp).__bindgen_anon_1.arg as *const ParamDesc) };
    let input = if val.is_null() {
        &b""[..]
    } else {
        // SAFETY: the caller guarantees a NUL-terminated string that outlives this call.
        unsafe { CStr::from_char_ptr(val) }.as_bytes()
    };
    match desc.value.set(desc.name, input) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// `kp` must be one of this module's [`ParamEntry`]s and `buffer` a writable
/// buffer of `PAGE_SIZE` bytes, as the sysfs read path guarantees.
unsafe extern "C" fn get_callback(buffer: *mut c_char, kp: *const bindings::kernel_param) -> c_int {
    // SAFETY: by the type invariant of `ParamEntry`, `arg` points to a `'static ParamDesc`.
    let desc = unsafe { &*((*kp).__bindgen_anon_1.arg as *const ParamDesc) };
    // SAFETY: the caller hands us `PAGE_SIZE` writable bytes, used only during this call.
    let buf = unsafe { core::slice::from_raw_parts_mut(buffer.cast::<u8>(), bindings::PAGE_SIZE) };
    let mut out = BufWriter::new(buf);
    match desc.value.show(&mut out) {
        Ok(()) => out.len() as c_int,
        Err(_) => EINVAL.to_errno(),
    }
}

/// Declares a module parameter.
///
/// `module_param!(STATIC: Type = init, name, perm, "type", "help")`
/// defines `STATIC`, its `__param` entry and its `modinfo` lines. `name` is
/// a `&str` constant (a literal, or a name kept with the setting elsewhere,
/// such as an rtags `Limit`'s). The description in `.modinfo` is `help`
/// followed by the range and default that `init` enforces
/// (`Type::describe`).
macro_rules! module_param {
    ($static:ident : $ty:ty = $init:expr, $name:expr, $perm:expr, $kind:literal, $help:literal) => {
        /// The value of the module parameter of the same name.
        pub(crate) static $static: $ty = $init;

        const _: () = {
            use $crate::kapi::{
                modinfo::ConstText,
                param::{ParamDesc, ParamEntry},
            };

            const NAME: &str = $name;
            const NAME_Z: ConstText = ConstText::new().str(NAME).str("\0");
            static NAME_BYTES: [u8; NAME_Z.len()] = {
                // A NUL inside the name would cut it short: a build error.
                let mut i = 0;
                while i < NAME.len() {
                    assert!(NAME.as_bytes()[i] != 0);
                    i += 1;
                }
                NAME_Z.bytes()
            };

            static DESC: ParamDesc = ParamDesc::new(
                // SAFETY: `NAME_BYTES` ends with its only NUL (checked above).
                unsafe { ::kernel::str::CStr::from_bytes_with_nul_unchecked(&NAME_BYTES) },
                &$static,
            );

            #[link_section = "__param"]
            #[used(compiler)]
            static ENTRY: ParamEntry = ParamEntry::new(
                &DESC,
                $perm,
                // SAFETY: `__this_module` is the module's own `struct module`,
                // defined by modpost and alive as long as the module.
                unsafe { $crate::kapi::param::__this_module.get() },
            );

            const PARM: ConstText = {
                let init: $ty = $init;
                ConstText::new()
                    .str("parm=")
                    .str(NAME)
                    .str(":")
                    .append(&init.describe($help))
                    .str("\0")
            };
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static PARM_INFO: [u8; PARM.len()] = PARM.bytes();

            const PARMTYPE: ConstText = ConstText::new()
                .str("parmtype=")
                .str(NAME)
                .str(concat!(":", $kind, "\0"));
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static PARMTYPE_INFO: [u8; PARMTYPE.len()] = PARMTYPE.bytes();
        };
    };
}
pub(crate) use module_param;

// `allow`, not `expect`: whether rustc finds `struct module` FFI-unsafe
// depends on the kernel config (the base kernel's layout trips the lint, the
// debug kernel's does not), and an unfulfilled expectation is a warning.
#[allow(
    improper_ctypes,
    reason = "only the address of the opaque struct is used"
)]
extern "C" {
    /// The module's `struct module`, emitted by modpost into `rnull.mod.c`.
    pub(crate) static __this_module: kernel::types::Opaque<bindings::module>;
}
