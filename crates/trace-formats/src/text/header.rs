//! The `#` header of the `R|W <page>` text format.
//!
//! Header lines are the `#` lines before the first other line; a `#` line after that is a
//! comment. Their tokens are `key=value` pairs (a value may be double-quoted to hold
//! spaces; an unterminated quote runs to the end of the line) or bare words. Two tokens
//! have a meaning: `pages=N` declares the region size, a decimal count of 1..=2^36 pages,
//! and every access must then lie below it; `end=marked` promises that the trace ends with
//! the end marker line `# end lines=N` (see `text`).
//!
//! The header has a syntax of its own, and its errors stop reading even in lenient mode
//! (a region nobody could trust would make every later line suspect), so it is read here,
//! apart from the access lines. It is read with the same bounded line reader as they are,
//! so line numbers and the line-length limit carry on unchanged into the body. This module
//! imports nothing from its parent: `text` imports the header, not the other way round.

use crate::error::FormatError;
use crate::lines::{quote, LineError, LineReader, LINE_BYTES_MAX, QUOTE_CHARS_MAX};

/// Largest page index accepted, here and in the access lines: 2^36 - 1, so a header may
/// declare at most 2^36 pages. Page indexes below 2^36 address 256 TiB, the whole 48-bit
/// virtual address space of 4-level paging, which no real region exceeds; the cap keeps
/// every later `page * PAGE_SIZE` far from overflow. Whoever writes text traces must refuse
/// higher pages (a perf capture of 5-level paging has them), or the tool could not read back
/// what it wrote.
pub const PAGE_MAX: u64 = (1 << 36) - 1;

/// The header token that promises an end marker.
pub const END_MARKED: &str = "end=marked";

/// What a header says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Header {
    /// The region size declared with `pages=N`, if any.
    pub(super) declared_pages: Option<u64>,
    /// Whether the header holds `end=marked`: the trace's last line is then the end marker
    /// `# end lines=N`, N being that line's own number, so that a cut trace is told from a
    /// whole one.
    pub(super) end_marked: bool,
    /// The line count of an end marker among the header lines: a trace without records.
    pub(super) end_lines: Option<u64>,
}

/// One header line.
enum HeaderLine {
    Tokens(Vec<(String, String)>),
    /// `# end lines=N`.
    EndMarker(u64),
}

/// The end marker's text before its line count.
pub const END_MARKER_PREFIX: &str = "# end lines=";

/// The line count of an end marker line, `# end lines=N`; `None` for any other line.
pub(super) fn end_marker(line: &[u8]) -> Option<u64> {
    let digits = line.strip_prefix(END_MARKER_PREFIX.as_bytes())?;
    if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &digit| n.checked_mul(10)?.checked_add(u64::from(digit - b'0')))
}

/// Reads the header lines (if any) without consuming the first line after them.
pub(super) fn read_header(lines: &mut LineReader) -> Result<Header, FormatError> {
    let mut header = Header::default();
    loop {
        if !lines.next_line_starts_with(b'#').map_err(|err| line_error(lines, err))? {
            return Ok(header);
        }
        let parse = |bytes: &[u8]| match end_marker(bytes) {
            Some(n_lines) => Ok(HeaderLine::EndMarker(n_lines)),
            None => parse_header_line(bytes).map(HeaderLine::Tokens),
        };
        let Some(parsed) = lines.next_line(parse).map_err(|err| line_error(lines, err))? else {
            return Ok(header);
        };
        let tokens = match parsed.map_err(|message| FormatError::line(lines.line(), message))? {
            // A trace without records ends within its header.
            HeaderLine::EndMarker(n_lines) => {
                header.end_lines = Some(n_lines);
                continue;
            }
            HeaderLine::Tokens(tokens) => tokens,
        };
        for (key, value) in tokens {
            if key == "pages" {
                let pages = parse_declared_pages(&value, header.declared_pages)
                    .map_err(|message| FormatError::line(lines.line(), message))?;
                header.declared_pages = Some(pages);
            } else if format!("{key}={value}") == END_MARKED {
                header.end_marked = true;
            }
        }
    }
}

/// The error for a header line that could not be read, naming the line being read.
fn line_error(lines: &LineReader, err: LineError) -> FormatError {
    match err {
        // A read error comes before the line is counted.
        LineError::Io(err) => FormatError::line(lines.line() + 1, format!("read error: {err}")),
        LineError::TooLong => {
            FormatError::line(lines.line(), format!("line is longer than {LINE_BYTES_MAX} bytes"))
        }
    }
}

/// The tokens of one `#` header line (terminator and a trailing `\r` already removed), as
/// key/value pairs; bare words have an empty value.
fn parse_header_line(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    let text = std::str::from_utf8(bytes).map_err(|err| {
        let offset = err.valid_up_to();
        format!("header line is not valid UTF-8 (byte 0x{:02x} at column {})", bytes[offset], offset + 1)
    })?;
    let mut rest = text.strip_prefix('#').unwrap_or(text);
    let mut tokens = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        if rest.is_empty() {
            return Ok(tokens);
        }
        let word_end = rest.find([' ', '\t', '=']).unwrap_or(rest.len());
        let key = &rest[..word_end];
        rest = &rest[word_end..];
        let Some(after_equals) = rest.strip_prefix('=') else {
            tokens.push((key.to_string(), String::new()));
            continue;
        };
        let (value, after_value) = match after_equals.strip_prefix('"') {
            Some(quoted) => match quoted.find('"') {
                Some(close) => (&quoted[..close], &quoted[close + 1..]),
                None => (quoted, ""),
            },
            None => {
                let value_end = after_equals.find([' ', '\t']).unwrap_or(after_equals.len());
                after_equals.split_at(value_end)
            }
        };
        tokens.push((key.to_string(), value.to_string()));
        rest = after_value;
    }
}

/// The value of token `key` in one `#` header line (`None` when the line is not a header
/// line or has no such token), tokenised as the reader tokenises headers: a quoted value
/// keeps its spaces. For the generator's parameters (`fill_accesses=N`) that readers of a
/// trace other than the access reader want.
pub fn header_value(line: &str, key: &str) -> Result<Option<String>, String> {
    if !line.starts_with('#') {
        return Ok(None);
    }
    let tokens = parse_header_line(line.trim_end_matches(['\r', '\n']).as_bytes())?;
    Ok(tokens.into_iter().find(|(k, _)| k == key).map(|(_, v)| v))
}

/// The value of a `pages=` header token.
fn parse_declared_pages(value: &str, earlier: Option<u64>) -> Result<u64, String> {
    if value.is_empty() || !value.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!("header: pages {} is not a decimal page count", quote(value.as_bytes())));
    }
    let pages = match value.parse::<u64>() {
        Ok(pages) if pages <= PAGE_MAX + 1 => pages,
        _ => {
            // The value is all ASCII digits, so any byte offset is a character boundary.
            return Err(format!(
                "header: pages={} exceeds the largest supported region of {} pages",
                &value[..value.len().min(QUOTE_CHARS_MAX)],
                PAGE_MAX + 1
            ));
        }
    };
    if pages == 0 {
        return Err("header: pages=0 declares an empty region".into());
    }
    if let Some(earlier) = earlier {
        if earlier != pages {
            return Err(format!("header: pages={pages} contradicts the earlier pages={earlier}"));
        }
    }
    Ok(pages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};
    use std::io::Cursor;

    /// Renders the tokens of one header line, or its error.
    fn check_tokens(line: &str, expect: Expect) {
        let rendered = match parse_header_line(line.as_bytes()) {
            Ok(tokens) => tokens.iter().map(|(key, value)| format!("{key}={value:?}\n")).collect(),
            Err(message) => format!("error: {message}\n"),
        };
        expect.assert_eq(&rendered);
    }

    /// Reads the header of `input` and renders the declared region, where the body starts,
    /// or the error.
    fn check(input: &[u8], expect: Expect) {
        let mut lines = LineReader::new(Box::new(Cursor::new(input.to_vec())));
        let rendered = match read_header(&mut lines) {
            Ok(Header { declared_pages: pages, end_marked: false, end_lines: None }) => {
                format!("pages {pages:?}, body after line {}\n", lines.line())
            }
            Ok(header) => format!("{header:?}, body after line {}\n", lines.line()),
            Err(err) => format!("error: {err}\n"),
        };
        expect.assert_eq(&rendered);
    }

    #[test]
    fn one_value_is_looked_up_as_the_reader_tokenises() {
        let line = r#"# gtwork pages=4 format="<R|W> <page_index>" fill_accesses=4"#;
        assert_eq!(header_value(line, "fill_accesses"), Ok(Some("4".to_string())));
        assert_eq!(header_value(line, "format"), Ok(Some("<R|W> <page_index>".to_string())));
        assert_eq!(header_value(line, "seed"), Ok(None));
        assert_eq!(header_value("R 1", "pages"), Ok(None));
    }

    #[test]
    fn header_of_a_validation_trace() {
        let line = r#"# gtwork size_mib=512 pages=131072 pattern=rand passes=3 pass_accesses=131072 fill_accesses=131072 fill=random write_frac=0.2 seed=1 thp=nohugepage scatter=1 page_size=4096 format="<R|W> <page_index>" order=fill_pass_then_passes"#;
        check_tokens(
            line,
            expect![[r#"
                gtwork=""
                size_mib="512"
                pages="131072"
                pattern="rand"
                passes="3"
                pass_accesses="131072"
                fill_accesses="131072"
                fill="random"
                write_frac="0.2"
                seed="1"
                thp="nohugepage"
                scatter="1"
                page_size="4096"
                format="<R|W> <page_index>"
                order="fill_pass_then_passes"
            "#]],
        );
        check(format!("{line}\nW 0\nW 1\n").as_bytes(), expect!["pages Some(131072), body after line 1\n"]);
    }

    #[test]
    fn tokens() {
        check_tokens(
            "#   pages=8 note=\"two words\" open=\"unterminated",
            expect![[r#"
                pages="8"
                note="two words"
                open="unterminated"
            "#]],
        );
        check_tokens(
            "# only a header",
            expect![[r#"
                only=""
                a=""
                header=""
            "#]],
        );
        check_tokens("#", expect![""]);
        check_tokens(
            "#\tk=v\u{b}w",
            expect![[r#"
            k="v\u{b}w"
        "#]],
        );
    }

    #[test]
    fn header_ends_at_the_first_other_line() {
        check(b"# size=tiny\n#   pages=8\n\n# pages=9\nW 0\n", expect!["pages Some(8), body after line 2\n"]);
        check(b"R 1\n# pages=4\n", expect!["pages None, body after line 0\n"]);
        check(b" # pages=4\n", expect!["pages None, body after line 0\n"]);
        check(b"", expect!["pages None, body after line 0\n"]);
        check(b"# pages=4", expect!["pages Some(4), body after line 1\n"]);
        check(b"# pages=4\r\n# pages=4\r\nR 1\r\n", expect!["pages Some(4), body after line 2\n"]);
    }

    #[test]
    fn bad_declared_pages() {
        check(
            b"# pages=12k\n",
            expect![[r#"
            error: line 1: header: pages "12k" is not a decimal page count
        "#]],
        );
        check(
            b"# pages=\n",
            expect![[r#"
            error: line 1: header: pages "" is not a decimal page count
        "#]],
        );
        check(
            b"# pages=0\n",
            expect![[r#"
            error: line 1: header: pages=0 declares an empty region
        "#]],
        );
        check(b"# pages=68719476736\n", expect!["pages Some(68719476736), body after line 1\n"]);
        check(
            b"# pages=68719476737\n",
            expect![[r#"
            error: line 1: header: pages=68719476737 exceeds the largest supported region of 68719476736 pages
        "#]],
        );
        check(
            b"# pages=4\n# pages=5\n",
            expect![[r#"
            error: line 2: header: pages=5 contradicts the earlier pages=4
        "#]],
        );
    }

    #[test]
    fn unreadable_header_lines() {
        check(
            b"#\xfe\nR 1\n",
            expect![[r#"
            error: line 1: header line is not valid UTF-8 (byte 0xfe at column 2)
        "#]],
        );
        let long = format!("# ok\n#{}\n", "x".repeat(LINE_BYTES_MAX));
        check(
            long.as_bytes(),
            expect![[r#"
            error: line 2: line is longer than 4096 bytes
        "#]],
        );
    }
}
