// SPDX-License-Identifier: GPL-2.0

//! Errno names for log lines.
//!
//! `Error`'s `Debug` asks `errname()`, which has names only with
//! `CONFIG_SYMBOLIC_ERRNAME` (`Error(17)` otherwise); a log line should say
//! `-EEXIST` on any kernel, so the names of the codes rnull meets are here.

use kernel::prelude::*;

/// `$name` for each code, spelled as the C constant.
macro_rules! names {
    ($($name:ident)*) => {
        [$(($name, stringify!($name))),*]
    };
}

/// The codes rnull returns or gets from the block layer and allocators.
const NAMES: [(Error, &str); 16] = names!(
    EPERM ENOENT EINTR EIO ENXIO E2BIG EAGAIN ENOMEM EFAULT EBUSY EEXIST ENODEV EINVAL ENOSPC
    ERANGE ENOTSUPP
);

/// Shows an [`Error`] as `-ENAME` (`-N` for a code without a name here).
pub(crate) struct Errno(pub(crate) Error);

impl core::fmt::Display for Errno {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match NAMES.iter().find(|(e, _)| *e == self.0) {
            Some((_, name)) => write!(f, "-{name}"),
            None => write!(f, "{}", self.0.to_errno()),
        }
    }
}
