// SPDX-License-Identifier: GPL-2.0

//! `.modinfo` strings built at compile time.
//!
//! A parameter's description (`modinfo -F parm`) is made from its help text,
//! its range and its default, the same values the parameter enforces, so the
//! range is never written out by hand. `concat!` cannot do this: it takes
//! only literals, and the range lives in a `const` value.

/// Room for one description; a longer one is a build error.
const CAPACITY: usize = 512;

/// A string assembled in a `const` context.
///
/// # Invariants
///
/// `buf[..len]` is valid UTF-8 (only `&str` pieces and ASCII digits are
/// appended).
#[derive(Clone, Copy)]
pub(crate) struct ConstText {
    buf: [u8; CAPACITY],
    len: usize,
}

impl ConstText {
    /// The empty string.
    pub(crate) const fn new() -> Self {
        // INVARIANT: the empty string is valid UTF-8.
        Self {
            buf: [0; CAPACITY],
            len: 0,
        }
    }

    /// Appends `s`.
    pub(crate) const fn str(mut self, s: &str) -> Self {
        let s = s.as_bytes();
        let mut i = 0;
        while i < s.len() {
            // Indexing past `CAPACITY` fails the build, which is the intent.
            self.buf[self.len] = s[i];
            self.len += 1;
            i += 1;
        }
        // INVARIANT: whole `&str`s keep the text valid UTF-8.
        self
    }

    /// Appends `v` in decimal.
    pub(crate) const fn int(mut self, v: i64) -> Self {
        if v < 0 {
            self = self.str("-");
        }
        let mut digits = [0u8; 20];
        let mut n = v.unsigned_abs();
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            self.buf[self.len] = digits[count];
            self.len += 1;
        }
        // INVARIANT: ASCII digits keep the text valid UTF-8.
        self
    }

    /// Appends `other`.
    pub(crate) const fn append(mut self, other: &ConstText) -> Self {
        let mut i = 0;
        while i < other.len {
            self.buf[self.len] = other.buf[i];
            self.len += 1;
            i += 1;
        }
        // INVARIANT: `other`'s text is valid UTF-8 (its invariant).
        self
    }

    /// Length in bytes.
    pub(crate) const fn len(&self) -> usize {
        self.len
    }

    /// The first `N` bytes, for a `static` of exactly the text's length.
    pub(crate) const fn bytes<const N: usize>(&self) -> [u8; N] {
        let mut out = [0u8; N];
        let mut i = 0;
        while i < N && i < self.len {
            out[i] = self.buf[i];
            i += 1;
        }
        out
    }
}
