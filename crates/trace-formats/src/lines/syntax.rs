//! The byte-level syntax the text formats share: decimal and hexadecimal numbers, the
//! usual shapes of times, pids and cpu fields, blanks and tokens, and the quoting of
//! offending text in messages.
//!
//! Every function works on a line's bytes and allocates only for a message. None knows a
//! format: each format's parser combines them.

use super::{Step, ADDRESS_LIMIT, OUT_OF_RANGE, PID_MAX, QUOTE_CHARS_MAX};

/// The byte offset of `part` within `line`, of which it must be a subslice.
pub(crate) fn offset_in(line: &[u8], part: &[u8]) -> usize {
    let offset = (part.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
    debug_assert!(offset <= line.len(), "not a part of the line");
    offset.min(line.len())
}

/// The 1-based column, in characters, of byte offset `at` of a UTF-8 line.
pub(super) fn column_of(line: &[u8], at: usize) -> u64 {
    // Every character starts with a byte that is not a continuation byte (0b10xx_xxxx).
    let n_chars = line[..at.min(line.len())].iter().filter(|&&byte| byte & 0xc0 != 0x80).count();
    n_chars as u64 + 1
}

/// Whether every byte is ASCII: ORs the line together sixteen bytes at a time, without
/// branching per chunk, and tests the high bits once.
#[inline]
pub(super) fn is_ascii(line: &[u8]) -> bool {
    let mut chunks = line.chunks_exact(16);
    let mut high = 0u64;
    for chunk in &mut chunks {
        let (low_half, high_half) = chunk.split_at(8);
        high |= u64::from_le_bytes(low_half.try_into().unwrap_or_default())
            | u64::from_le_bytes(high_half.try_into().unwrap_or_default());
    }
    let tail = chunks.remainder().iter().fold(0u8, |acc, &byte| acc | byte);
    high & 0x8080_8080_8080_8080 == 0 && tail < 0x80
}

/// The offset of the first byte that makes a line invalid UTF-8, or `None` when it is valid.
#[inline]
pub(crate) fn utf8_error(line: &[u8]) -> Option<usize> {
    // Nearly every line is plain ASCII, which is cheaper to confirm than UTF-8 in general.
    if is_ascii(line) {
        return None;
    }
    let err = std::str::from_utf8(line).err()?;
    Some(err.valid_up_to())
}

/// Index of the first byte at or after `at` that is not a blank (or the line's length).
#[inline]
pub(crate) fn skip_blanks(line: &[u8], mut at: usize) -> usize {
    while at < line.len() && is_blank(line[at]) {
        at += 1;
    }
    at
}

/// Reads the decimal digits starting at `at`, at most `max` of them (`max` <= 19): their
/// value and the index after the last one. `None` if there is no digit or more than `max`.
#[inline]
fn digits_at(line: &[u8], at: usize, max: usize) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    let mut end = at;
    while let Some(&byte) = line.get(end) {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value * 10 + u64::from(digit);
        end += 1;
        if end - at > max {
            return None;
        }
    }
    (end > at).then_some((value, end))
}

/// Powers of ten that scale a fraction of `n` decimals to nanoseconds, indexed by `n`.
const FRACTION_SCALE: [u64; 10] = [0, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];

/// The usual shape of a timestamp token, starting at `at`: `<digits>.<digits>:` followed by
/// a blank or the end of the line, with at most ten whole digits (so no overflow) and one
/// to nine decimals. Returns the time in nanoseconds and the index after the colon, or
/// `None` for anything else, which the general parser then handles.
#[inline]
pub(crate) fn usual_time(line: &[u8], at: usize) -> Option<(u64, usize)> {
    let (whole, dot) = digits_at(line, at, 10)?;
    if line.get(dot) != Some(&b'.') {
        return None;
    }
    let (fraction, colon) = digits_at(line, dot + 1, 9)?;
    if line.get(colon) != Some(&b':') || line.get(colon + 1).is_some_and(|&byte| !is_blank(byte)) {
        return None;
    }
    Some((whole * 1_000_000_000 + fraction * FRACTION_SCALE[colon - dot - 1], colon + 1))
}

/// Parses a pid or tid of at most seven digits within the kernel's limit, or `None`.
#[inline]
pub(crate) fn usual_pid(line: &[u8], at: usize) -> Option<(u32, usize)> {
    let (value, end) = digits_at(line, at, 7)?;
    (value <= u64::from(PID_MAX)).then_some((value as u32, end))
}

/// Matches `[<digits>]` at `open` followed by a blank; returns the index of that blank.
#[inline]
pub(crate) fn usual_cpu(line: &[u8], open: usize) -> Option<usize> {
    let mut at = open + 1;
    while line.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    if at == open + 1 || line.get(at) != Some(&b']') || !line.get(at + 1).is_some_and(|&byte| is_blank(byte))
    {
        return None;
    }
    Some(at + 1)
}

/// Matches `event` as a whole blank-separated token at `at`; returns the index after it.
#[inline]
pub(crate) fn token_is(line: &[u8], at: usize, event: &[u8]) -> Option<usize> {
    let end = at + event.len();
    if line.get(at..end)? != event || line.get(end).is_some_and(|&byte| !is_blank(byte)) {
        return None;
    }
    Some(end)
}

/// Quotes offending text for a message, cut to [`QUOTE_CHARS_MAX`] characters.
pub(crate) fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(QUOTE_CHARS_MAX) {
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// Renders nanoseconds as seconds with nine decimals, for messages.
pub(crate) fn seconds(time_ns: u64) -> String {
    format!("{}.{:09}", time_ns / 1_000_000_000, time_ns % 1_000_000_000)
}

/// Parses `seconds.fraction` (1 to 9 decimals) exactly into nanoseconds.
#[inline]
pub(crate) fn parse_time(text: &[u8]) -> Result<u64, String> {
    let bad = || format!("timestamp {} is not seconds.fraction", quote(text));
    let dot = memchr::memchr(b'.', text).ok_or_else(bad)?;
    let (whole, fraction) = (&text[..dot], &text[dot + 1..]);
    if whole.is_empty() || fraction.is_empty() || fraction.len() > 9 {
        return Err(bad());
    }
    let whole = parse_decimal(whole).ok_or_else(bad)?;
    let mut fraction_ns = parse_decimal(fraction).ok_or_else(bad)?;
    for _ in fraction.len()..9 {
        fraction_ns *= 10;
    }
    whole
        .checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(fraction_ns))
        .ok_or_else(|| format!("timestamp {} is too large", quote(text)))
}

/// Parses ASCII decimal digits; `None` if empty, not digits, or above `u64::MAX`.
#[inline]
pub(crate) fn parse_decimal(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    let mut value: u64 = 0;
    if text.len() <= 19 {
        // Nineteen digits cannot overflow.
        for &byte in text {
            let digit = byte.wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            value = value * 10 + u64::from(digit);
        }
        return Some(value);
    }
    for &byte in text {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(digit))?;
    }
    Some(value)
}

/// The value of each byte as a hex digit, or 0xff.
const HEX_VALUES: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = match byte as u8 {
            digit @ b'0'..=b'9' => digit - b'0',
            digit @ b'a'..=b'f' => digit - b'a' + 10,
            digit @ b'A'..=b'F' => digit - b'A' + 10,
            _ => 0xff,
        };
        byte += 1;
    }
    table
};

/// Parses ASCII hex digits; `None` if empty, not hex, or above `u64::MAX`.
#[inline]
pub(crate) fn parse_hex(text: &[u8]) -> Option<u64> {
    let (digits, value) = hex_prefix(text);
    if digits != text.len() || digits == 0 {
        return None;
    }
    value
}

/// Parses the hex digits that start `text`: how many there are, and their value (`None`
/// above `u64::MAX`).
#[inline]
pub(crate) fn hex_prefix(text: &[u8]) -> (usize, Option<u64>) {
    let mut value: u64 = 0;
    let mut digits = 0;
    let mut overflow = false;
    for &byte in text {
        let digit = HEX_VALUES[usize::from(byte)];
        if digit == 0xff {
            break;
        }
        overflow |= value >> 60 != 0;
        value = (value << 4) | u64::from(digit);
        digits += 1;
    }
    (digits, (!overflow).then_some(value))
}

/// Parses a pid or tid, checking the kernel's limit.
#[inline]
pub(crate) fn parse_pid(text: &[u8], what: &str) -> Result<u32, String> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return Err(format!("{what} {} is not a decimal number", quote(text)));
    }
    match parse_decimal(text) {
        Some(pid) if pid <= u64::from(PID_MAX) => Ok(pid as u32),
        _ => Err(format!("{what} {} exceeds the kernel's largest pid {PID_MAX}", quote(text))),
    }
}

/// Checks a virtual address against [`ADDRESS_LIMIT`].
pub(crate) fn check_address(address: u64) -> Result<u64, Step> {
    if address >= ADDRESS_LIMIT {
        return Err(Step::Bad {
            reason: OUT_OF_RANGE,
            at: None,
            message: format!("address 0x{address:x} is beyond the 57-bit virtual address space"),
        });
    }
    Ok(address)
}

/// Whether a byte is a space or a tab.
#[inline]
pub(crate) fn is_blank(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

#[inline]
pub(crate) fn trim_start(mut bytes: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = bytes {
        if !is_blank(*first) {
            break;
        }
        bytes = rest;
    }
    bytes
}

#[inline]
pub(crate) fn trim_end(mut bytes: &[u8]) -> &[u8] {
    while let [rest @ .., last] = bytes {
        if !is_blank(*last) {
            break;
        }
        bytes = rest;
    }
    bytes
}

/// Splits off the first blank-separated token: `(token, rest)` with `rest` starting at the
/// blank after the token (or empty).
#[inline]
pub(crate) fn split_token(bytes: &[u8]) -> (&[u8], &[u8]) {
    let bytes = trim_start(bytes);
    let end = bytes.iter().position(|&byte| is_blank(byte)).unwrap_or(bytes.len());
    bytes.split_at(end)
}
