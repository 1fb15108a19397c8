//! The varint and zigzag codec of the native format (layout in the parent module's
//! documentation): unsigned LEB128 of at most 10 bytes, and signed values zigzag-mapped to
//! unsigned ones.
//!
//! The decoder reads from a buffer the caller pads, so it never checks for the buffer's
//! end; it checks only the varint's own bounds (10 bytes, 64 bits).

#[inline]
pub(super) fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

#[inline]
pub(super) fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// Appends `value` as a varint to `out` at `len`, returning the new length. `out` must have
/// room for 10 more bytes.
#[inline]
pub(super) fn put_varint(out: &mut [u8], mut len: usize, mut value: u64) -> usize {
    while value >= 0x80 {
        out[len] = (value as u8) | 0x80;
        value >>= 7;
        len += 1;
    }
    out[len] = value as u8;
    len + 1
}

/// Reads a varint at `bytes[*at..]`, advancing `at`, or `None` if it is longer than 10
/// bytes or above `u64::MAX`. The caller guarantees 10 readable bytes from `at`.
///
/// One- and two-byte varints, the common lengths, take a branch each. Longer ones up to
/// eight bytes are decoded from one 64-bit load without a loop: the first byte with its
/// high bit clear ends the varint, and the 7-bit groups below it are packed together in
/// three shift-and-mask steps.
#[inline(always)]
pub(super) fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let idx = *at;
    let first = bytes[idx];
    if first < 0x80 {
        *at = idx + 1;
        return Some(u64::from(first));
    }
    let second = bytes[idx + 1];
    if second < 0x80 {
        *at = idx + 2;
        return Some(u64::from(first & 0x7f) | (u64::from(second) << 7));
    }
    let word = u64::from_le_bytes(bytes[idx..idx + 8].try_into().expect("the range has 8 bytes"));
    let stops = !word & 0x8080_8080_8080_8080;
    if stops == 0 {
        return read_varint_long(bytes, at);
    }
    // The stop bit is bit 7 of the last byte, so `n_bits` is a multiple of 8, at least 16.
    let n_bits = stops.trailing_zeros() + 1;
    let groups = word & (u64::MAX >> (64 - n_bits)) & 0x7f7f_7f7f_7f7f_7f7f;
    let pairs = ((groups & 0x7f00_7f00_7f00_7f00) >> 1) | (groups & 0x007f_007f_007f_007f);
    let quads = ((pairs & 0x3fff_0000_3fff_0000) >> 2) | (pairs & 0x0000_3fff_0000_3fff);
    let value = ((quads & 0x0fff_ffff_0000_0000) >> 4) | (quads & 0x0000_0000_0fff_ffff);
    *at = idx + n_bits as usize / 8;
    Some(value)
}

/// Reads a varint byte by byte; the general case of [`read_varint`].
#[inline(never)]
fn read_varint_long(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let bytes = &bytes[*at..*at + 10];
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            if i == 9 && byte > 1 {
                return None;
            }
            *at += i + 1;
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Decodes `bytes`, padded with `pad` to 32 bytes, as one varint.
    fn varint_of(bytes: &[u8], pad: u8) -> Option<(u64, usize)> {
        let mut padded = [pad; 32];
        padded[..bytes.len()].copy_from_slice(bytes);
        let mut at = 0;
        read_varint(&padded, &mut at).map(|value| (value, at))
    }

    #[test]
    fn varint_edges() {
        assert_eq!(varint_of(&[0x7f], 0xff), Some((0x7f, 1)));
        assert_eq!(varint_of(&[0x80, 0x01], 0xff), Some((0x80, 2)));
        assert_eq!(varint_of(&[0x80, 0x00], 0xff), Some((0, 2)));
        let eight = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert_eq!(varint_of(&eight, 0xff), Some(((1 << 56) - 1, 8)));
        let nine = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert_eq!(varint_of(&nine, 0xff), Some(((1 << 63) - 1, 9)));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(varint_of(&max, 0xff), Some((u64::MAX, 10)));
        assert_eq!(varint_of(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], 0), None);
        assert_eq!(varint_of(&[0x80; 10], 0), None);
    }

    proptest! {
        #[test]
        fn varints_round_trip(value in prop_oneof![any::<u64>(), 0u64..1 << 14, (0u32..64).prop_map(|bit| 1u64 << bit)], pad in any::<u8>()) {
            let mut bytes = [0u8; 10];
            let len = put_varint(&mut bytes, 0, value);
            prop_assert_eq!(varint_of(&bytes[..len], pad), Some((value, len)));
        }
    }
}
