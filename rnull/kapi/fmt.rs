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

impl fmt::Write for BufWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.pos.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.buf.get_mut(self.pos..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        // INVARIANT: `end <= buf.len()`, checked by `get_mut` above.
        self.pos = end;
        Ok(())
    }
}
