//! How libCacheSim's object ids become pages, shared by its binary and text readers, and
//! the number syntax its text readers take ids in.
//!
//! An object id is a u64 (oracleGeneral, lcs, and numeric ids of txt and csv traces) or,
//! for txt and csv traces read with `obj-id-is-num=false`, a string. The [`ObjectMap`]
//! decides the page:
//!
//! - `modulo`: a numeric id modulo the region; a string is first hashed to a u64 with
//!   64-bit FNV-1a ([`fnv1a_64`]) over its bytes, a fixed, documented hash, so the same
//!   string lands on the same page in every run and every version.
//! - `dense`: pages 0, 1, 2, ... in order of each object's first request. Strings are kept
//!   whole (one copy per distinct string), so distinct strings never share a page.
//!
//! What this module does not do: read any trace.

use crate::lines::quote;
use crate::options::{ObjectMap, REGION_PAGES_MAX};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Maps keyed by object id or page, for lookups only (never iterated), with a fixed hasher
/// so that no run depends on a random seed.
pub(crate) type ObjectMapTable = HashMap<u64, u64, BuildHasherDefault<DefaultHasher>>;

/// String ids and their pages, for lookups only, with a fixed hasher.
type NameTable = HashMap<Box<[u8]>, u64, BuildHasherDefault<DefaultHasher>>;

/// The pages of the objects of one trace.
#[derive(Default)]
pub(crate) struct ObjectPages {
    map: ObjectMap,
    /// Dense mapping: the page of every numeric id seen.
    ids: ObjectMapTable,
    /// Dense mapping: the page of every string id seen.
    names: NameTable,
}

impl ObjectPages {
    /// No object seen yet.
    pub(crate) fn new(map: ObjectMap) -> ObjectPages {
        ObjectPages { map, ..ObjectPages::default() }
    }

    /// The page of numeric id `obj_id`; fails when the dense mapping would need more than
    /// [`REGION_PAGES_MAX`] pages.
    pub(crate) fn page_of_id(&mut self, obj_id: u64) -> Result<u64, String> {
        if let Some(page) = self.modulo_page(obj_id) {
            return Ok(page);
        }
        let n_pages = self.n_pages();
        if n_pages >= REGION_PAGES_MAX && !self.ids.contains_key(&obj_id) {
            return Err(format!("obj_id {obj_id}: more than {REGION_PAGES_MAX} distinct objects"));
        }
        Ok(*self.ids.entry(obj_id).or_insert(n_pages))
    }

    /// The page of numeric id `obj_id` under the modulo mapping, which needs no state;
    /// `None` under the dense one.
    #[inline]
    pub(crate) fn modulo_page(&self, obj_id: u64) -> Option<u64> {
        match self.map {
            ObjectMap::Modulo { region_pages } => Some(obj_id % region_pages.clamp(1, REGION_PAGES_MAX)),
            ObjectMap::Dense => None,
        }
    }

    /// The page of string id `name`. Under the dense mapping a new name is copied once.
    pub(crate) fn page_of_name(&mut self, name: &[u8]) -> Result<u64, String> {
        match self.map {
            ObjectMap::Modulo { .. } => self.page_of_id(fnv1a_64(name)),
            ObjectMap::Dense => {
                if let Some(&page) = self.names.get(name) {
                    return Ok(page);
                }
                let n_pages = self.n_pages();
                if n_pages >= REGION_PAGES_MAX {
                    return Err(format!(
                        "object {}: more than {REGION_PAGES_MAX} distinct objects",
                        quote(name)
                    ));
                }
                self.names.insert(name.into(), n_pages);
                Ok(n_pages)
            }
        }
    }

    /// Pages handed out by the dense mapping.
    fn n_pages(&self) -> u64 {
        (self.ids.len() + self.names.len()) as u64
    }
}

/// 64-bit FNV-1a: how a string id becomes a number under the modulo mapping (the hash that
/// names random streams, too).
pub use swapsim_core::rng::fnv1a_64;

/// What a numeric object id is, for messages.
pub(crate) const ID_EXPECTED: &str = "an object id (decimal, 0x hexadecimal or 0-prefixed octal)";

/// Parses an unsigned integer as C's `strtoull(text, &end, 0)` reads one, but whole: `0x`
/// or `0X` and hex digits, a `0` and octal digits, or decimal digits, and nothing else (no
/// sign, no blanks, no trailing text, which strtoull would stop at silently). On failure
/// returns the byte offset in `text` to blame and what was wrong; `what` names the value
/// in messages.
pub(crate) fn parse_c_integer(text: &[u8], what: &str) -> Result<u64, (usize, String)> {
    let (digits_at, radix) = match text {
        [b'0', b'x' | b'X', ..] => (2, 16),
        [b'0', _, ..] => (1, 8),
        _ => (0, 10),
    };
    let digits = &text[digits_at..];
    if digits.is_empty() {
        let found = if text.is_empty() { "nothing".to_string() } else { quote(text) };
        return Err((digits_at.min(text.len()), format!("expected {what}, found {found}")));
    }
    let mut value: u64 = 0;
    for (idx, &byte) in digits.iter().enumerate() {
        let digit = match char::from(byte).to_digit(radix) {
            Some(digit) => digit,
            None => {
                let at = digits_at + idx;
                let message = match radix {
                    8 if byte.is_ascii_digit() => format!(
                        "{} is not an octal number: {} is not an octal digit (a leading 0 makes a number octal, as in C)",
                        quote(text),
                        char::from(byte)
                    ),
                    _ => format!("expected {what}, found {}", quote(text)),
                };
                return Err((at, message));
            }
        };
        value =
            match value.checked_mul(u64::from(radix)).and_then(|value| value.checked_add(u64::from(digit))) {
                Some(value) => value,
                None => return Err((0, format!("{} is above the largest id, 2^64 - 1", quote(text)))),
            };
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_integers() {
        let parse = |text: &str| parse_c_integer(text.as_bytes(), ID_EXPECTED);
        assert_eq!(parse("0"), Ok(0));
        assert_eq!(parse("42"), Ok(42));
        assert_eq!(parse("0x2a"), Ok(42));
        assert_eq!(parse("0X2A"), Ok(42));
        assert_eq!(parse("052"), Ok(42));
        assert_eq!(parse("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse("0xffffffffffffffff"), Ok(u64::MAX));
        assert_eq!(parse("01777777777777777777777"), Ok(u64::MAX));
        assert_eq!(
            parse("18446744073709551616"),
            Err((0, "\"18446744073709551616\" is above the largest id, 2^64 - 1".into()))
        );
        assert_eq!(
            parse("09"),
            Err((1, "\"09\" is not an octal number: 9 is not an octal digit (a leading 0 makes a number octal, as in C)".into()))
        );
        assert_eq!(
            parse("0x"),
            Err((
                2,
                "expected an object id (decimal, 0x hexadecimal or 0-prefixed octal), found \"0x\"".into()
            ))
        );
        assert_eq!(
            parse("12a"),
            Err((
                2,
                "expected an object id (decimal, 0x hexadecimal or 0-prefixed octal), found \"12a\"".into()
            ))
        );
        assert_eq!(
            parse(""),
            Err((
                0,
                "expected an object id (decimal, 0x hexadecimal or 0-prefixed octal), found nothing".into()
            ))
        );
        assert!(parse("-1").is_err());
        assert!(parse("+1").is_err());
        assert!(parse(" 1").is_err());
    }

    #[test]
    fn fnv1a_matches_the_published_vectors() {
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn dense_names_and_ids_number_pages_in_first_request_order() {
        let mut pages = ObjectPages::new(ObjectMap::Dense);
        assert_eq!(pages.page_of_name(b"b"), Ok(0));
        assert_eq!(pages.page_of_name(b"a"), Ok(1));
        assert_eq!(pages.page_of_name(b"b"), Ok(0));
        assert_eq!(pages.page_of_id(7), Ok(2));
        let mut modulo = ObjectPages::new(ObjectMap::Modulo { region_pages: 1000 });
        assert_eq!(modulo.page_of_name(b"a"), Ok(fnv1a_64(b"a") % 1000));
        assert_eq!(modulo.page_of_id(1234), Ok(234));
    }
}
