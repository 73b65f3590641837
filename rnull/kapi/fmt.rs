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

/// Strips one trailing newline, as `echo` appends one to every sysfs write.
pub(crate) fn trim_newline(input: &[u8]) -> &[u8] {
    input.strip_suffix(b"\n").unwrap_or(input)
}

/// Parses a decimal (or `0x` hexadecimal) integer, refusing empty input,
/// signs where `signed` is false, trailing garbage and overflow.
pub(crate) fn parse_i64(input: &[u8]) -> Option<i64> {
    let input = trim_newline(input);
    let (negative, digits) = match input.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, input),
    };
    let (radix, digits) = match digits {
        [b'0', b'x' | b'X', rest @ ..] => (16, rest),
        _ => (10, digits),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    for &c in digits {
        let d = (c as char).to_digit(radix)?;
        value = value.checked_mul(i64::from(radix))?;
        value = if negative {
            value.checked_sub(i64::from(d))?
        } else {
            value.checked_add(i64::from(d))?
        };
    }
    Some(value)
}
