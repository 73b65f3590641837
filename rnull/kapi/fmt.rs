// SPDX-License-Identifier: GPL-2.0

//! Formatting into fixed buffers handed to us by sysfs and the parameter code.

use core::fmt;

/// A `fmt::Write` sink over a byte buffer that refuses to overflow.
///
/// # Invariants
///
/// `pos <= buf.len()`.
pub(crate) struct BufWriter<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> BufWriter<'a> {
    /// Creates a writer that fills `buf` from its start.
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        // INVARIANT: `0 <= buf.len()`.
        Self { buf, pos: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn len(&self) -> usize {
        self.pos
    }
}

impl BufWriter<'_> {
    /// Appends `bytes`, UTF-8 or not; nothing if they do not fit.
    pub(crate) fn write_bytes(&mut self, bytes: &[u8]) -> fmt::Result {
        let end = self.pos.checked_add(bytes.len()).ok_or(fmt::Error)?;
        let dst = self.buf.get_mut(self.pos..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(bytes);
        // INVARIANT: `end <= buf.len()`, checked by `get_mut` above.
        self.pos = end;
        Ok(())
    }
}

impl fmt::Write for BufWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.write_bytes(s.as_bytes())
    }
}

/// An error shown as the C constant (`-EEXIST`), for kernel log lines:
/// `Error`'s `Debug` gives the name only with CONFIG_SYMBOLIC_ERRNAME and
/// `Error(17)` without it. The names of the errnos rnull's paths can meet;
/// any other shows as its number (`-N`).
pub(crate) struct Errno(pub(crate) kernel::error::Error);

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(i32, &str); 24] = [
            (1, "EPERM"),
            (2, "ENOENT"),
            (4, "EINTR"),
            (5, "EIO"),
            (6, "ENXIO"),
            (7, "E2BIG"),
            (9, "EBADF"),
            (11, "EAGAIN"),
            (12, "ENOMEM"),
            (13, "EACCES"),
            (14, "EFAULT"),
            (16, "EBUSY"),
            (17, "EEXIST"),
            (19, "ENODEV"),
            (22, "EINVAL"),
            (24, "EMFILE"),
            (28, "ENOSPC"),
            (34, "ERANGE"),
            (38, "ENOSYS"),
            (75, "EOVERFLOW"),
            (95, "EOPNOTSUPP"),
            (110, "ETIMEDOUT"),
            (512, "ERESTARTSYS"),
            (524, "ENOTSUPP"),
        ];
        let errno = -self.0.to_errno();
        match NAMES.iter().find(|(n, _)| *n == errno) {
            Some((_, name)) => write!(f, "-{name}"),
            None => write!(f, "-{errno}"),
        }
    }
}
