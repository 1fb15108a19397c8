//! Trace parameters for libCacheSim's plain-text readers, written the way libCacheSim's
//! `cachesim` takes them (`--trace-type-params`), so that a parameter string that works
//! there can be pasted here.
//!
//! The syntax: `key=value` pairs separated by commas, blanks after a comma ignored, keys
//! case-insensitive and spelled with `-` or `_`:
//!
//! | key                        | value                                                    |
//! |----------------------------|----------------------------------------------------------|
//! | `obj-id-col`               | 1-based column of the object id (libcachesim-csv, required) |
//! | `time-col`                 | 1-based column of the time in seconds                    |
//! | `obj-size-col`, `size-col` | 1-based column of the object size (checked, not used)    |
//! | `delimiter`                | one character; `\t` is a tab; `,`, `\,` and an empty value are a comma |
//! | `has-header`, `header`     | `true`/`false`, `yes`/`no`, `y`/`n`, `1`/`0`             |
//! | `obj-id-is-num`            | the same booleans; `false` reads ids as strings          |
//!
//! A comma ends a value, so `delimiter=,` leaves an empty value, which libCacheSim (and
//! this parser) reads as a comma. Any other key is an error: libCacheSim's `op-col`,
//! `ttl-col`, `tenant-col`, `cnt-col`, `feature-cols`, `block-size` and `format` name
//! fields that swapsim does not read, and are refused by name rather than ignored.
//!
//! What this module does not do: check that the parameters suit a format (`detect` does,
//! when the format is known), or read any trace.

use std::fmt;
use std::num::NonZeroU32;

/// The largest column index accepted: a line holds at most 4096 bytes (the line reader's
/// `LINE_BYTES_MAX`, which checks this), so at most 4097 fields.
pub(crate) const COLUMN_MAX: u32 = 4097;

/// Parameters of libCacheSim's `txt` and `csv` traces; every field `None` when not given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TraceParams {
    /// `obj-id-col`: the 1-based column of object ids (csv).
    pub obj_id_col: Option<NonZeroU32>,
    /// `time-col`: the 1-based column of times in seconds (csv).
    pub time_col: Option<NonZeroU32>,
    /// `obj-size-col`: the 1-based column of object sizes (csv), checked to be numbers.
    pub size_col: Option<NonZeroU32>,
    /// `delimiter`: the field separator (csv); detected from the first line when `None`.
    pub delimiter: Option<u8>,
    /// `has-header`: whether the first line is a header (csv); detected when `None`.
    pub has_header: Option<bool>,
    /// `obj-id-is-num`: whether object ids are numbers (txt and csv); `None` means yes.
    pub obj_id_is_num: Option<bool>,
}

impl TraceParams {
    /// Parses libCacheSim's `key=value,key=value` syntax. The error names the key and the
    /// value at fault.
    pub fn parse(text: &str) -> Result<TraceParams, String> {
        let mut params = TraceParams::default();
        let mut rest = text.trim_start_matches([' ', ',']);
        while !rest.is_empty() {
            let Some((key, after_key)) = rest.split_once('=') else {
                return Err(format!("\"{}\" is not key=value", rest.trim()));
            };
            let (value, after_value) = after_key.split_once(',').unwrap_or((after_key, ""));
            rest = after_value.trim_start_matches([' ', ',']);
            let key = key.trim();
            // A delimiter may be a blank, so its value is taken as written.
            let raw_value = value;
            let value = value.trim();
            let canonical = key.to_ascii_lowercase().replace('_', "-");
            let slot_taken = match canonical.as_str() {
                "obj-id-col" => params.obj_id_col.replace(column(key, value)?).is_some(),
                "time-col" => params.time_col.replace(column(key, value)?).is_some(),
                "obj-size-col" | "size-col" => params.size_col.replace(column(key, value)?).is_some(),
                "delimiter" => params.delimiter.replace(delimiter(key, raw_value)?).is_some(),
                "has-header" | "header" => params.has_header.replace(boolean(key, value)?).is_some(),
                "obj-id-is-num" => params.obj_id_is_num.replace(boolean(key, value)?).is_some(),
                "op-col"
                | "ttl-col"
                | "tenant-col"
                | "cnt-col"
                | "feature-cols"
                | "block-size"
                | "format"
                | "next-access-vtime-col" => {
                    return Err(format!(
                        "{key}: swapsim does not read this libCacheSim parameter (it reads obj-id-col, \
                         time-col, obj-size-col, delimiter, has-header and obj-id-is-num)"
                    ))
                }
                _ => {
                    return Err(format!(
                        "{key}: unknown parameter (expected obj-id-col, time-col, obj-size-col, delimiter, \
                         has-header or obj-id-is-num)"
                    ))
                }
            };
            if slot_taken {
                return Err(format!("{key}: given twice"));
            }
        }
        Ok(params)
    }

    /// Whether no parameter is given.
    pub fn is_empty(&self) -> bool {
        *self == TraceParams::default()
    }

    /// Whether object ids are numbers: `obj-id-is-num`, true unless given as false.
    pub fn obj_id_is_num(&self) -> bool {
        self.obj_id_is_num.unwrap_or(true)
    }

    /// The names of the parameters given, in the order [`TraceParams`] lists them.
    pub fn given(&self) -> Vec<&'static str> {
        [
            ("obj-id-col", self.obj_id_col.is_some()),
            ("time-col", self.time_col.is_some()),
            ("obj-size-col", self.size_col.is_some()),
            ("delimiter", self.delimiter.is_some()),
            ("has-header", self.has_header.is_some()),
            ("obj-id-is-num", self.obj_id_is_num.is_some()),
        ]
        .into_iter()
        .filter(|(_, given)| *given)
        .map(|(key, _)| key)
        .collect()
    }
}

impl fmt::Display for TraceParams {
    /// The parameters given, in the syntax [`TraceParams::parse`] reads back: keys in a
    /// fixed order, a tab delimiter as `\t`, a comma one as `\,` (unambiguous mid-string).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut pairs: Vec<String> = Vec::new();
        let columns =
            [("obj-id-col", self.obj_id_col), ("time-col", self.time_col), ("obj-size-col", self.size_col)];
        for (key, col) in columns {
            if let Some(col) = col {
                pairs.push(format!("{key}={col}"));
            }
        }
        if let Some(delimiter) = self.delimiter {
            let shown = match delimiter {
                b'\t' => "\\t".to_string(),
                b',' => "\\,".to_string(),
                other => char::from(other).to_string(),
            };
            pairs.push(format!("delimiter={shown}"));
        }
        if let Some(has_header) = self.has_header {
            pairs.push(format!("has-header={has_header}"));
        }
        if let Some(is_num) = self.obj_id_is_num {
            pairs.push(format!("obj-id-is-num={is_num}"));
        }
        f.write_str(&pairs.join(","))
    }
}

/// A 1-based column index in `1..=COLUMN_MAX`.
fn column(key: &str, value: &str) -> Result<NonZeroU32, String> {
    let bad = || format!("{key}={value}: expected a column number, 1 to {COLUMN_MAX} (columns count from 1)");
    if value.is_empty() || !value.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(bad());
    }
    match value.parse::<u32>() {
        Ok(col) if col <= COLUMN_MAX => NonZeroU32::new(col).ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// One delimiter byte, as libCacheSim reads the value: empty, `,` or `\,` is a comma,
/// `\t` a tab, any other single printable ASCII character or a space itself, except a
/// double quote (which starts a quoted field) and `=`.
fn delimiter(key: &str, value: &str) -> Result<u8, String> {
    match value.as_bytes() {
        [] | [b','] | [b'\\', b','] | [b'\\'] => Ok(b','),
        [b'\\', b't'] | [b'\t'] => Ok(b'\t'),
        [byte] if (byte.is_ascii_graphic() || *byte == b' ') && !matches!(byte, b'"' | b'=') => Ok(*byte),
        _ => Err(format!("{key}={value}: expected one character (\\t for a tab; not a double quote or =)")),
    }
}

/// libCacheSim's booleans: true/yes/y/1 or false/no/n/0, in any case.
fn boolean(key: &str, value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "y" | "1" => Ok(true),
        "false" | "no" | "n" | "0" => Ok(false),
        _ => Err(format!("{key}={value}: expected true or false (also yes/no, y/n, 1/0)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    fn check(text: &str, expect: Expect) {
        let shown = match TraceParams::parse(text) {
            Ok(params) => {
                // What is shown parses back to the same parameters.
                assert_eq!(TraceParams::parse(&params.to_string()), Ok(params), "{params}");
                format!("{params:?}\n{params}")
            }
            Err(err) => format!("error: {err}"),
        };
        expect.assert_eq(&shown);
    }

    #[test]
    fn libcachesim_strings_parse() {
        check(
            "time-col=1,obj-id-col=2,obj-size-col=3,delimiter=,,obj-id-is-num=1",
            expect![[r#"
                TraceParams { obj_id_col: Some(2), time_col: Some(1), size_col: Some(3), delimiter: Some(44), has_header: None, obj_id_is_num: Some(true) }
                obj-id-col=2,time-col=1,obj-size-col=3,delimiter=\,,obj-id-is-num=true"#]],
        );
        check(
            "time-col=2, obj-id-col=5, obj-size-col=4, obj-id-is-num=true",
            expect![[r#"
                TraceParams { obj_id_col: Some(5), time_col: Some(2), size_col: Some(4), delimiter: None, has_header: None, obj_id_is_num: Some(true) }
                obj-id-col=5,time-col=2,obj-size-col=4,obj-id-is-num=true"#]],
        );
        check(
            "obj_id_col=2,Has_Header=YES,delimiter=\\t,size-col=6",
            expect![[r#"
                TraceParams { obj_id_col: Some(2), time_col: None, size_col: Some(6), delimiter: Some(9), has_header: Some(true), obj_id_is_num: None }
                obj-id-col=2,obj-size-col=6,delimiter=\t,has-header=true"#]],
        );
        check(
            "obj-id-col=1,delimiter=",
            expect![[r#"
                TraceParams { obj_id_col: Some(1), time_col: None, size_col: None, delimiter: Some(44), has_header: None, obj_id_is_num: None }
                obj-id-col=1,delimiter=\,"#]],
        );
        check(
            "delimiter=|,header=n,obj-id-is-num=0,obj-id-col=3",
            expect![[r#"
                TraceParams { obj_id_col: Some(3), time_col: None, size_col: None, delimiter: Some(124), has_header: Some(false), obj_id_is_num: Some(false) }
                obj-id-col=3,delimiter=|,has-header=false,obj-id-is-num=false"#]],
        );
        check(
            "",
            expect![[r#"
                TraceParams { obj_id_col: None, time_col: None, size_col: None, delimiter: None, has_header: None, obj_id_is_num: None }
            "#]],
        );
    }

    #[test]
    fn bad_strings_name_the_key_and_value() {
        check(
            "obj-id-col=0",
            expect!["error: obj-id-col=0: expected a column number, 1 to 4097 (columns count from 1)"],
        );
        check(
            "time-col=x",
            expect!["error: time-col=x: expected a column number, 1 to 4097 (columns count from 1)"],
        );
        check(
            "obj-id-col=-1",
            expect!["error: obj-id-col=-1: expected a column number, 1 to 4097 (columns count from 1)"],
        );
        check(
            "obj-id-col=99999999999",
            expect![
                "error: obj-id-col=99999999999: expected a column number, 1 to 4097 (columns count from 1)"
            ],
        );
        check("obj-id-col", expect![[r#"error: "obj-id-col" is not key=value"#]]);
        check("obj-id-col=1,colour=red", expect!["error: colour: unknown parameter (expected obj-id-col, time-col, obj-size-col, delimiter, has-header or obj-id-is-num)"]);
        check("op-col=4", expect!["error: op-col: swapsim does not read this libCacheSim parameter (it reads obj-id-col, time-col, obj-size-col, delimiter, has-header and obj-id-is-num)"]);
        check(
            "has-header=maybe",
            expect!["error: has-header=maybe: expected true or false (also yes/no, y/n, 1/0)"],
        );
        check(
            "delimiter=ab",
            expect![[
                r#"error: delimiter=ab: expected one character (\t for a tab; not a double quote or =)"#
            ]],
        );
        check(
            "delimiter=\"",
            expect![[
                r#"error: delimiter=": expected one character (\t for a tab; not a double quote or =)"#
            ]],
        );
        check("obj-id-col=1,obj_id_col=2", expect!["error: obj_id_col: given twice"]);
    }
}
