// SPDX-License-Identifier: GPL-2.0

//! Parsing what users write to module parameters and sysfs files, with the
//! C kernel's rules so that rnull reads a value as null_blk would.

/// Strips one trailing newline, as `echo` appends one to every sysfs write.
pub(crate) fn trim_newline(input: &[u8]) -> &[u8] {
    input.strip_suffix(b"\n").unwrap_or(input)
}

/// Whether C's `isspace()` (`lib/ctype.c`) counts `c` as white space:
/// `\t`, `\n`, `\v`, `\f`, `\r`, the space and Latin-1's no-break space
/// (0xa0).
fn is_space(c: u8) -> bool {
    matches!(c, b'\t'..=b'\r' | b' ' | 0xa0)
}

/// Strips leading and trailing white space as C's `strstrip()` does.
pub(crate) fn strstrip(input: &[u8]) -> &[u8] {
    let start = input
        .iter()
        .position(|&c| !is_space(c))
        .unwrap_or(input.len());
    let end = input
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(start, |e| e + 1);
    &input[start..end]
}

/// Parses an integer as `kstrtoll(s, 0, ...)` does (the base of C module
/// parameters and of null_blk's sysfs and configfs files): an optional sign,
/// then `0x`/`0X` and hexadecimal, `0` and octal, or decimal. Refuses empty
/// input, trailing garbage and overflow.
pub(crate) fn parse_i64(input: &[u8]) -> Option<i64> {
    parse_i64_radix(input, 0)
}

/// Parses an integer as `kstrtoll(s, 10, ...)` does (null_blk's
/// `null_param_store_val()`): an optional sign and decimal digits, no
/// prefix; otherwise as [`parse_i64`].
pub(crate) fn parse_i64_decimal(input: &[u8]) -> Option<i64> {
    parse_i64_radix(input, 10)
}

/// `kstrtoll(s, base)` for `base` 0 (from the prefix) or 10.
fn parse_i64_radix(input: &[u8], base: u32) -> Option<i64> {
    let input = trim_newline(input);
    let (negative, digits) = match input.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, input),
    };
    let (radix, digits) = match digits {
        _ if base == 10 => (10, digits),
        [b'0', b'x' | b'X', rest @ ..] => (16, rest),
        // "0" alone is octal zero: its digits are the lone 0.
        [b'0', rest @ ..] if !rest.is_empty() => (8, rest),
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
