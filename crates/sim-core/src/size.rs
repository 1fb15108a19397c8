//! Sizes in bytes: the one parser of the sizes people write, and how sizes are printed.
//!
//! Every size a user writes goes through [`ByteSize::parse`]: scenario fields (through
//! serde), `--set` edits, timeline operations and command-line flags. The rule:
//!
//! * A size is a number, optional blanks, then an optional unit: `4096`, `256MiB`,
//!   `256 MB`, `1.5GiB`. A fraction is allowed when the result is a whole number of bytes.
//! * No unit, or `B`: bytes.
//! * `kB`, `MB`, `GB`, `TB`: powers of 1000 (SI).
//! * `KiB`, `MiB`, `GiB`, `TiB`: powers of 1024 (IEC).
//! * `K`, `M`, `G`, `T`, and `k`, `m`, `g`, `t`: powers of 1024, the suffixes the kernel's
//!   `memparse` reads (`mem=`, `crashkernel=` and the other sizes of the kernel command line).
//!
//! Units are case-sensitive, so anything else is an error that lists the accepted units.
//! `KB`, `kb`, `mb` and the like are rejected rather than guessed: `KB` means 1000 bytes
//! on a disk's datasheet and 1024 in many memory specifications, so the message asks for
//! `kB` or `KiB`. Sizes above 2^60 bytes are an error.
//!
//! Printing goes the other way, always in binary units: [`fmt::Display`] gives
//! `256MiB` or `1.5GiB` when that is exact and `244.14MiB (256000000 bytes)` when it is
//! not, and serialisation writes the exact form that parses back to the same bytes.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A size in bytes that accepts `"256MiB"`-style strings or plain integers in TOML.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(pub u64);

/// The largest size accepted: 2^60 bytes (1048576TiB).
pub const BYTES_MAX: u64 = 1 << 60;

/// Most digits accepted after the decimal point.
const FRACTION_DIGITS_MAX: usize = 18;

/// The accepted units, as error messages list them.
pub const UNITS_ACCEPTED: &str = "B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024); \
     K, M, G, T or k, m, g, t (powers of 1024, as the kernel's memparse reads them)";

/// Binary units for printing, largest first.
const BINARY_UNITS: [(u32, &str); 4] = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")];

/// A size could not be parsed. The message quotes the text and says what was expected;
/// the caller names the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("\"{text}\" {problem}")]
pub struct SizeError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it and what was expected.
    pub problem: String,
}

impl ByteSize {
    /// `n` mebibytes.
    pub const fn mib(n: u64) -> ByteSize {
        ByteSize(n << 20)
    }
    /// `n` gibibytes.
    pub const fn gib(n: u64) -> ByteSize {
        ByteSize(n << 30)
    }
    /// Whole 4 KiB pages, rounding down.
    pub fn pages(self) -> u64 {
        self.0 / crate::ids::PAGE_SIZE
    }

    /// Parses a size by the rule in the [module documentation](self): `"4096"`,
    /// `"256MiB"`, `"256 MB"` (256 000 000 bytes), `"1.5GiB"`, `"64k"`, `"2G"`.
    pub fn parse(text: &str) -> Result<ByteSize, SizeError> {
        let fail = |problem: String| SizeError { text: text.to_string(), problem };
        let trimmed = text.trim();
        let number_end = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(number_end);
        let unit = unit.trim_start();
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() || (number.contains('.') && fraction.is_empty()) || fraction.contains('.') {
            let problem = if trimmed.starts_with('-') {
                "is negative; a size is a number of bytes of at least 0".to_string()
            } else {
                "is not a size: expected a number and an optional unit, e.g. \"256MiB\"".to_string()
            };
            return Err(fail(problem));
        }
        let Some(multiplier) = unit_multiplier(unit) else {
            return Err(fail(unit_problem(whole, fraction, unit)));
        };
        let fraction = fraction.trim_end_matches('0');
        if fraction.len() > FRACTION_DIGITS_MAX {
            return Err(fail(format!("has more than {FRACTION_DIGITS_MAX} digits after the decimal point")));
        }
        let too_large = || fail(format!("is too large (the largest size is {})", ByteSize(BYTES_MAX)));
        // Exact integer arithmetic: whole * multiplier + fraction * multiplier / 10^digits.
        let whole: u128 = whole.parse().map_err(|_| too_large())?;
        let scale = 10u128.pow(fraction.len() as u32);
        let fraction_value: u128 =
            if fraction.is_empty() { 0 } else { fraction.parse().map_err(|_| too_large())? };
        let whole_bytes = whole.checked_mul(multiplier).ok_or_else(too_large)?;
        let fraction_scaled = fraction_value * multiplier;
        if !fraction_scaled.is_multiple_of(scale) {
            return Err(fail("is not a whole number of bytes".to_string()));
        }
        let bytes = whole_bytes.checked_add(fraction_scaled / scale).ok_or_else(too_large)?;
        if bytes > u128::from(BYTES_MAX) {
            return Err(too_large());
        }
        Ok(ByteSize(bytes as u64))
    }

    /// The exact form: a whole number of the largest binary unit that divides the size,
    /// or a number of bytes (`1536MiB`, `4096000`). Parses back to the same size.
    pub fn exact(self) -> String {
        let bytes = self.0;
        for (shift, unit) in BINARY_UNITS {
            if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
                return format!("{}{unit}", bytes >> shift);
            }
        }
        bytes.to_string()
    }
}

/// Bytes per unit, or `None` for a unit that is not accepted.
fn unit_multiplier(unit: &str) -> Option<u128> {
    let power = |base: u128, exponent: u32| Some(base.pow(exponent));
    match unit {
        "" | "B" => Some(1),
        "kB" => power(1000, 1),
        "MB" => power(1000, 2),
        "GB" => power(1000, 3),
        "TB" => power(1000, 4),
        "KiB" | "K" | "k" => power(1024, 1),
        "MiB" | "M" | "m" => power(1024, 2),
        "GiB" | "G" | "g" => power(1024, 3),
        "TiB" | "T" | "t" => power(1024, 4),
        _ => None,
    }
}

/// What is wrong with a unit that is not accepted, with a suggestion when the intent is
/// clear from the letters.
fn unit_problem(whole: &str, fraction: &str, unit: &str) -> String {
    let number = if fraction.is_empty() { whole.to_string() } else { format!("{whole}.{fraction}") };
    let lower = unit.to_ascii_lowercase();
    let prefix = match lower.as_bytes().first() {
        Some(b'k') => Some(("k", "K")),
        Some(b'm') => Some(("M", "M")),
        Some(b'g') => Some(("G", "G")),
        Some(b't') => Some(("T", "T")),
        _ => None,
    };
    let hint = match (prefix, lower.get(1..)) {
        (Some((decimal, binary)), Some("b")) => format!(
            "; \"{unit}\" is ambiguous: write {number}{decimal}B for powers of 1000 or {number}{binary}iB for powers of 1024"
        ),
        (Some((_, binary)), Some("ib")) => format!("; did you mean {number}{binary}iB?"),
        _ if lower == "b" || lower == "bytes" || lower == "byte" => format!("; did you mean {number}B?"),
        _ => String::new(),
    };
    format!("has an unknown unit \"{unit}\"{hint} (accepted units: {UNITS_ACCEPTED})")
}

impl fmt::Display for ByteSize {
    /// Binary units: `256MiB` or `1.5GiB` when exact to two decimal places, otherwise
    /// `244.14MiB (256000000 bytes)`; sizes below 1 KiB as `100B`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0;
        let Some(&(shift, unit)) = BINARY_UNITS.iter().find(|(shift, _)| bytes >= 1 << shift) else {
            return write!(f, "{bytes}B");
        };
        let unit_bytes = 1u128 << shift;
        let hundredths = u128::from(bytes) * 100;
        let whole = bytes >> shift;
        if !hundredths.is_multiple_of(unit_bytes) {
            let value = bytes as f64 / unit_bytes as f64;
            return write!(f, "{value:.2}{unit} ({bytes} bytes)");
        }
        match (hundredths / unit_bytes) % 100 {
            0 => write!(f, "{whole}{unit}"),
            cents if cents.is_multiple_of(10) => write!(f, "{whole}.{}{unit}", cents / 10),
            cents => write!(f, "{whole}.{cents:02}{unit}"),
        }
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.exact())
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ByteSize, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size such as \"256MiB\" or a number of bytes")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ByteSize, E> {
                if v > BYTES_MAX {
                    return Err(E::custom(format!(
                        "size {v} is too large (the largest size is {})",
                        ByteSize(BYTES_MAX)
                    )));
                }
                Ok(ByteSize(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ByteSize, E> {
                let v = u64::try_from(v).map_err(|_| E::custom(format!("size {v} is negative")))?;
                self.visit_u64(v)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ByteSize, E> {
                ByteSize::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// Parses `text` and renders the bytes, or the error.
    fn check(text: &str, expect: Expect) {
        let rendered = match ByteSize::parse(text) {
            Ok(size) => format!("{} bytes", size.0),
            Err(err) => format!("error: {err}"),
        };
        expect.assert_eq(&rendered);
    }

    #[test]
    fn binary_decimal_and_kernel_units() {
        check("4096", expect!["4096 bytes"]);
        check("4096B", expect!["4096 bytes"]);
        check("256MiB", expect!["268435456 bytes"]);
        check("256 MiB", expect!["268435456 bytes"]);
        check(" 2 TiB ", expect!["2199023255552 bytes"]);
        check("256MB", expect!["256000000 bytes"]);
        check("256 MB", expect!["256000000 bytes"]);
        check("4kB", expect!["4000 bytes"]);
        check("1GB", expect!["1000000000 bytes"]);
        check("1TB", expect!["1000000000000 bytes"]);
        check("64k", expect!["65536 bytes"]);
        check("64K", expect!["65536 bytes"]);
        check("2G", expect!["2147483648 bytes"]);
        check("3m", expect!["3145728 bytes"]);
        check("1t", expect!["1099511627776 bytes"]);
        check("0", expect!["0 bytes"]);
    }

    #[test]
    fn fractions_must_come_to_whole_bytes() {
        check("1.5GiB", expect!["1610612736 bytes"]);
        check("1.5 GB", expect!["1500000000 bytes"]);
        check("0.5k", expect!["512 bytes"]);
        check("2.50MiB", expect!["2621440 bytes"]);
        check("0.1KiB", expect![[r#"error: "0.1KiB" is not a whole number of bytes"#]]);
        check("1.5", expect![[r#"error: "1.5" is not a whole number of bytes"#]]);
        check(
            "1.",
            expect![[r#"error: "1." is not a size: expected a number and an optional unit, e.g. "256MiB""#]],
        );
        check(
            ".5G",
            expect![[r#"error: ".5G" is not a size: expected a number and an optional unit, e.g. "256MiB""#]],
        );
        check(
            "1.2.3M",
            expect![[
                r#"error: "1.2.3M" is not a size: expected a number and an optional unit, e.g. "256MiB""#
            ]],
        );
    }

    #[test]
    fn unknown_units_list_the_accepted_ones() {
        check(
            "12 parsecs",
            expect![[
                r#"error: "12 parsecs" has an unknown unit "parsecs" (accepted units: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024); K, M, G, T or k, m, g, t (powers of 1024, as the kernel's memparse reads them))"#
            ]],
        );
        check(
            "256KB",
            expect![[
                r#"error: "256KB" has an unknown unit "KB"; "KB" is ambiguous: write 256kB for powers of 1000 or 256KiB for powers of 1024 (accepted units: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024); K, M, G, T or k, m, g, t (powers of 1024, as the kernel's memparse reads them))"#
            ]],
        );
        check(
            "8 mb",
            expect![[
                r#"error: "8 mb" has an unknown unit "mb"; "mb" is ambiguous: write 8MB for powers of 1000 or 8MiB for powers of 1024 (accepted units: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024); K, M, G, T or k, m, g, t (powers of 1024, as the kernel's memparse reads them))"#
            ]],
        );
        check(
            "1.5gib",
            expect![[
                r#"error: "1.5gib" has an unknown unit "gib"; did you mean 1.5GiB? (accepted units: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024); K, M, G, T or k, m, g, t (powers of 1024, as the kernel's memparse reads them))"#
            ]],
        );
        check(
            "4 bytes",
            expect![[
                r#"error: "4 bytes" has an unknown unit "bytes"; did you mean 4B? (accepted units: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024); K, M, G, T or k, m, g, t (powers of 1024, as the kernel's memparse reads them))"#
            ]],
        );
        assert!(ByteSize::parse("1P").unwrap_err().problem.contains("unknown unit \"P\""));
    }

    #[test]
    fn no_number_negative_and_too_large() {
        check(
            "MiB",
            expect![[r#"error: "MiB" is not a size: expected a number and an optional unit, e.g. "256MiB""#]],
        );
        check(
            "",
            expect![[r#"error: "" is not a size: expected a number and an optional unit, e.g. "256MiB""#]],
        );
        check("-1MiB", expect![[r#"error: "-1MiB" is negative; a size is a number of bytes of at least 0"#]]);
        check("1048576TiB", expect!["1152921504606846976 bytes"]);
        check(
            "1048577TiB",
            expect![[r#"error: "1048577TiB" is too large (the largest size is 1048576TiB)"#]],
        );
        check(
            "99999999999999999999999999999999999999999G",
            expect![[
                r#"error: "99999999999999999999999999999999999999999G" is too large (the largest size is 1048576TiB)"#
            ]],
        );
        check(
            "1.0000000000000000001K",
            expect![[r#"error: "1.0000000000000000001K" has more than 18 digits after the decimal point"#]],
        );
    }

    #[test]
    fn display_is_binary_and_says_when_it_rounds() {
        let show = |bytes: u64| ByteSize(bytes).to_string();
        assert_eq!(show(0), "0B");
        assert_eq!(show(100), "100B");
        assert_eq!(show(4096), "4KiB");
        assert_eq!(show(256 << 20), "256MiB");
        assert_eq!(show(3 << 29), "1.5GiB");
        assert_eq!(show((5 << 30) / 4), "1.25GiB");
        assert_eq!(show(6000), "5.86KiB (6000 bytes)");
        assert_eq!(show(256_000_000), "244.14MiB (256000000 bytes)");
        assert_eq!(show(2 << 40), "2TiB");
    }

    #[test]
    fn serialisation_is_exact_and_parses_back() {
        for bytes in [0, 100, 4096, 3 << 29, 256_000_000, 1_000_000_007, BYTES_MAX] {
            let exact = ByteSize(bytes).exact();
            assert_eq!(ByteSize::parse(&exact), Ok(ByteSize(bytes)), "{exact}");
        }
        assert_eq!(ByteSize(3 << 29).exact(), "1536MiB");
        assert_eq!(ByteSize(256_000_000).exact(), "250000KiB");
    }

    #[test]
    fn toml_integers_are_bytes() {
        #[derive(Deserialize)]
        struct Holder {
            size: ByteSize,
        }
        let read =
            |text: &str| serde_json::from_str::<Holder>(text).map(|h| h.size.0).map_err(|e| e.to_string());
        assert_eq!(read(r#"{"size": 4096}"#), Ok(4096));
        assert_eq!(read(r#"{"size": "4 kB"}"#), Ok(4000));
        assert!(read(r#"{"size": -1}"#).unwrap_err().contains("size -1 is negative"));
        assert!(read(r#"{"size": 1152921504606846977}"#).unwrap_err().contains("too large"));
    }
}
