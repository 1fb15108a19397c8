//! The `R|W <page>` access-trace text format as a [`RecordSource`](crate::RecordSource): the one reader of it.
//!
//! This is the format of the validation traces (see the validation README): optional
//! leading `#` header lines of `key=value` tokens (`pages=N` declares the region size; see
//! `header`), then one access per line, `R <page>` or `W <page>`, where `<page>` is the
//! index of a 4 KiB page within the task's region, below 2^36, written in decimal (`31`) or
//! in hexadecimal with a `0x` prefix (`0x1f`, digits in either case). Traces run to
//! billions of lines, so the reader streams with the shared bounded line reader: it parses
//! bytes without building strings and allocates nothing per line.
//!
//! Blank lines and `#` comment lines carry nothing and are skipped. In strict mode every
//! other line must be a well-formed access, and anything else is an error naming the line,
//! the column of the offending text and what was expected there, never a silent skip (hex
//! digits without the `0x` prefix are rejected with that reason, since `10` would be
//! ambiguous); a line longer than 4096 bytes is an error as soon as the limit is
//! passed, so a corrupt file cannot make the reader buffer without bound. In lenient mode
//! bad access lines are skipped and counted by reason instead; a bad header is an error
//! in both modes.
//!
//! A header token `end=marked` promises an end marker: a last line `# end lines=N`, where
//! N is the number of lines in the whole trace, the marker's own line included. A trace
//! whose header promises it and that ends without it, or with another count, is an error in
//! both modes: it was cut (or added to), and reading it as whole would be wrong. swapsim
//! writes text traces this way; traces without the token are read as before.
//!
//! The format has neither process nor time: every record has pid 0, tid 0 and no time, and
//! its page is the index as written. What this module does not do: open files or
//! decompress (see `detect`).

mod header;
pub use header::header_value;

use self::header::end_marker;
pub use self::header::{END_MARKED, END_MARKER_PREFIX, PAGE_MAX};
use crate::error::FormatError;
use crate::format::Format;
use crate::lines::{
    offset_in, quote, BadLines, LineAccess, LineFormat, LineReader, LineSource, Step, OUT_OF_RANGE,
    QUOTE_CHARS_MAX,
};
use crate::options::OpenOptions;
use std::io::BufRead;

/// A streaming reader of the `R|W <page>` format.
pub struct TextReader {
    source: LineSource<TextLines>,
}

impl TextReader {
    /// Reads the header lines of `reader` (already decompressed), then stands before the
    /// first access. A bad header is an error even in lenient mode.
    pub fn new(reader: Box<dyn BufRead + Send>, options: OpenOptions) -> Result<TextReader, FormatError> {
        let mut lines = LineReader::new(reader);
        let header = header::read_header(&mut lines)?;
        let format = TextLines {
            declared_pages: header.declared_pages,
            end_marked: header.end_marked,
            end_lines: header.end_lines,
        };
        let lines = LineSource::with_lines(lines, format, BadLines::of(&options));
        Ok(TextReader { source: lines })
    }
}

crate::lines::line_reader!(TextReader, Format::Text);

/// The line syntax.
#[derive(Default)]
pub(crate) struct TextLines {
    declared_pages: Option<u64>,
    /// Whether the header promised the end marker.
    end_marked: bool,
    /// The line count the last end marker read states.
    end_lines: Option<u64>,
}

impl LineFormat for TextLines {
    fn declared_pages(&self) -> Option<u64> {
        self.declared_pages
    }

    fn parse_line(&mut self, line: &[u8]) -> Step {
        if let Some(access) = self.plain_access(line) {
            return Step::Access(access);
        }
        if self.end_marked {
            if let Some(n_lines) = end_marker(line) {
                self.end_lines = Some(n_lines);
                return Step::Blank;
            }
        }
        self.any_line(line)
    }

    fn check_end(&self, n_lines: u64) -> Result<(), String> {
        match self.end_lines {
            _ if !self.end_marked => Ok(()),
            None => Err(format!(
                "the trace is cut: its header says end=marked, and it ends without the end marker \
                 \"{END_MARKER_PREFIX}{n_lines}\""
            )),
            Some(end_lines) if end_lines != n_lines => Err(format!(
                "the trace is cut or was added to: its end marker says {end_lines} lines, and it has {n_lines}"
            )),
            Some(_) => Ok(()),
        }
    }

    /// The common line, `R` or `W`, one space and a decimal page within bounds, read
    /// without splitting it into fields; `None` for any other line, which the general
    /// path reads (and words the errors of).
    #[inline]
    fn plain_access(&self, line: &[u8]) -> Option<LineAccess> {
        let [op @ (b'R' | b'W'), b' ', digits @ ..] = line else { return None };
        // Eleven digits cover every page up to PAGE_MAX.
        if digits.len() > 11 {
            return None;
        }
        let page = crate::lines::parse_decimal(digits)?;
        if page > PAGE_MAX || self.declared_pages.is_some_and(|pages| page >= pages) {
            return None;
        }
        let write = *op == b'W';
        Some(LineAccess { pid: 0, tid: 0, time_ns: None, first_page: page, last_page: page, write })
    }
}

impl TextLines {
    /// Any line, field by field.
    fn any_line(&self, line: &[u8]) -> Step {
        let mut fields = fields(line);
        let Some((operation_at, operation)) = fields.next() else {
            return Step::Blank;
        };
        if operation[0] == b'#' {
            return Step::Blank;
        }
        let write = match operation {
            b"R" => false,
            b"W" => true,
            _ => {
                return Step::malformed_at(
                    operation_at,
                    format!("expected R or W, found {}", quote(operation)),
                )
            }
        };
        let Some((page_at, page_text)) = fields.next() else {
            return Step::malformed_at(
                line.len(),
                format!("expected {PAGE_EXPECTED}, found the end of the line"),
            );
        };
        let page = match parse_page(page_text) {
            Ok(page) => page,
            Err(PageError::Syntax) => {
                let hint = if looks_hex(page_text) { " (hexadecimal needs the 0x prefix)" } else { "" };
                return Step::malformed_at(
                    page_at,
                    format!("expected {PAGE_EXPECTED}, found {}{hint}", quote(page_text)),
                );
            }
            Err(PageError::TooLarge) => {
                return Step::Bad {
                    reason: OUT_OF_RANGE,
                    at: Some(page_at),
                    message: format!(
                        "page {} exceeds the largest supported page {PAGE_MAX} (0x{PAGE_MAX:x})",
                        String::from_utf8_lossy(&page_text[..page_text.len().min(QUOTE_CHARS_MAX)])
                    ),
                };
            }
        };
        if let Some((extra_at, extra)) = fields.next() {
            return Step::malformed_at(
                extra_at,
                format!("expected the end of the line after the page number, found {}", quote(extra)),
            );
        }
        if let Some(pages) = self.declared_pages {
            if page >= pages {
                return Step::Bad {
                    reason: OUT_OF_RANGE,
                    at: Some(page_at),
                    message: format!(
                        "page {} is outside the region of {pages} pages the header declares",
                        String::from_utf8_lossy(page_text)
                    ),
                };
            }
        }
        Step::Access(LineAccess { pid: 0, tid: 0, time_ns: None, first_page: page, last_page: page, write })
    }
}

/// Whether `line` is an end marker, `# end lines=N`.
pub(crate) fn is_end_marker(line: &[u8]) -> bool {
    end_marker(line).is_some()
}

/// What a page number is, for messages.
const PAGE_EXPECTED: &str = "a page number (decimal, or hexadecimal with 0x)";

/// The blank-separated fields of a line, each with its byte offset.
fn fields(line: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    line.split(|&byte| byte == b' ' || byte == b'\t')
        .filter(|field| !field.is_empty())
        .map(move |field| (offset_in(line, field), field))
}

/// Why a page number did not parse.
enum PageError {
    /// Not decimal digits, nor `0x` and hex digits.
    Syntax,
    /// Above [`PAGE_MAX`].
    TooLarge,
}

/// Parses `31` or `0x1f` (or `0X1F`).
fn parse_page(text: &[u8]) -> Result<u64, PageError> {
    let value = match text {
        [b'0', b'x' | b'X', digits @ ..] => {
            let (n_digits, value) = crate::lines::hex_prefix(digits);
            if n_digits == 0 || n_digits != digits.len() {
                return Err(PageError::Syntax);
            }
            value
        }
        _ if text.iter().all(u8::is_ascii_digit) => crate::lines::parse_decimal(text),
        _ => return Err(PageError::Syntax),
    };
    match value {
        Some(page) if page <= PAGE_MAX => Ok(page),
        _ => Err(PageError::TooLarge),
    }
}

/// Whether `text` would be a hexadecimal number if it had the `0x` prefix: hex digits, at
/// least one of them a letter.
fn looks_hex(text: &[u8]) -> bool {
    text.iter().all(u8::is_ascii_hexdigit) && text.iter().any(u8::is_ascii_alphabetic)
}

/// Whether `line` has the shape of an access line, `R` or `W` and one more field, whatever
/// that field holds: format detection uses it, so that a malformed page number is reported
/// by this reader rather than as an unrecognised format.
pub(crate) fn is_access_shaped(line: &[u8]) -> bool {
    let mut fields = fields(line);
    matches!(fields.next(), Some((_, b"R" | b"W"))) && fields.next().is_some() && fields.next().is_none()
}

#[cfg(test)]
mod tests;
