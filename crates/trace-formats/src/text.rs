//! The `R|W <page>` access-trace text format as a [`RecordSource`].
//!
//! The format and its header are those of `swapsim_core::trace::TextTrace`: optional
//! leading `#` header lines of `key=value` tokens (`pages=N` declares the region size),
//! then one access per line, `R <page>` or `W <page>`, where `<page>` is a decimal page
//! index below 2^36. The header is read by `TextTrace` itself, so both readers agree on it;
//! the access lines are read here with the shared line machinery, which adds lenient mode
//! (swapsim-core's reader is strict only) and the same messages.
//!
//! The format has neither process nor time: every record has pid 0, tid 0 and no time, and
//! its page is the index as written.

use crate::error::FormatError;
use crate::format::Format;
use crate::lines::{quote, LineAccess, LineFormat, LineSource, Step, OUT_OF_RANGE};
use crate::options::OpenOptions;
use std::io::BufRead;
use swapsim_core::trace::TextTrace;
use swapsim_core::TraceError;

/// Largest page index accepted, as in swapsim-core's reader: 2^36 - 1.
const PAGE_MAX: u64 = (1 << 36) - 1;

/// A streaming reader of the `R|W <page>` format.
pub struct TextReader {
    source: LineSource<TextLines>,
}

impl TextReader {
    /// Reads the header lines of `reader` (already decompressed), then stands before the
    /// first access. A bad header is an error even in lenient mode.
    pub fn new(reader: Box<dyn BufRead + Send>, options: OpenOptions) -> Result<TextReader, FormatError> {
        let mut reader = reader;
        let (declared_pages, lines_before) = {
            let header = TextTrace::new(&mut reader).map_err(from_trace_error)?;
            (header.declared_pages(), header.line())
        };
        let lines = TextLines { declared_pages };
        Ok(TextReader { source: LineSource::new(reader, lines, options.lenient, lines_before) })
    }

    /// The region size the header declares with `pages=N`, if it does.
    pub fn declared_pages(&self) -> Option<u64> {
        self.source.format().declared_pages
    }
}

crate::lines::line_reader!(TextReader, Format::Text);

fn from_trace_error(err: TraceError) -> FormatError {
    match err {
        TraceError::Malformed { line, message } => FormatError::Line { line, message },
        TraceError::Io { line, source } => {
            FormatError::Line { line, message: format!("read error: {source}") }
        }
        other => FormatError::Line { line: 0, message: other.to_string() },
    }
}

/// The line syntax.
#[derive(Default)]
pub(crate) struct TextLines {
    declared_pages: Option<u64>,
}

impl LineFormat for TextLines {
    fn parse_line(&mut self, line: &[u8]) -> Step {
        let mut fields = line.split(|&byte| byte == b' ' || byte == b'\t').filter(|field| !field.is_empty());
        let Some(operation) = fields.next() else {
            return Step::Blank;
        };
        if operation[0] == b'#' {
            return Step::Blank;
        }
        let write = match operation {
            b"R" => false,
            b"W" => true,
            _ => return Step::malformed(format!("unknown operation {} (expected R or W)", quote(operation))),
        };
        let Some(page_text) = fields.next() else {
            return Step::malformed("missing page index".into());
        };
        if !page_text.iter().all(u8::is_ascii_digit) {
            return Step::malformed(format!("page {} is not a decimal page index", quote(page_text)));
        }
        let page = match crate::lines::parse_decimal(page_text) {
            Some(page) if page <= PAGE_MAX => page,
            _ => {
                return Step::Bad {
                    reason: OUT_OF_RANGE,
                    message: format!(
                        "page {} exceeds the largest supported page {PAGE_MAX}",
                        String::from_utf8_lossy(&page_text[..page_text.len().min(40)])
                    ),
                }
            }
        };
        if let Some(extra) = fields.next() {
            return Step::malformed(format!("unexpected {} after the page index", quote(extra)));
        }
        if let Some(pages) = self.declared_pages {
            if page >= pages {
                return Step::Bad {
                    reason: OUT_OF_RANGE,
                    message: format!(
                        "page {page} is outside the region of {pages} pages the header declares"
                    ),
                };
            }
        }
        Step::Access(LineAccess { pid: 0, tid: 0, time_ns: None, first_page: page, last_page: page, write })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::render;
    use expect_test::{expect, Expect};

    fn check(input: impl AsRef<[u8]>, options: OpenOptions, expect: Expect) {
        let reader = std::io::Cursor::new(input.as_ref().to_vec());
        let rendered = match TextReader::new(Box::new(reader), options) {
            Ok(reader) => format!("pages {:?}\n{}", reader.declared_pages(), render(Box::new(reader))),
            Err(err) => format!("error: {err}\n"),
        };
        expect.assert_eq(&rendered);
    }

    #[test]
    fn header_and_accesses() {
        check(
            "# gen pages=8 seed=1\n# note\nW 0\r\n\n  R\t7  \n# comment\nR 5",
            OpenOptions::default(),
            expect![[r#"
                pages Some(8)
                pid 0 tid 0 t - page 0x0 W
                pid 0 tid 0 t - page 0x7 R
                pid 0 tid 0 t - page 0x5 R
                end
            "#]],
        );
    }

    #[test]
    fn errors_match_the_core_reader() {
        let strict = OpenOptions::default();
        check(
            "# pages=4\nR 3\nR 4\n",
            strict,
            expect![[r#"
                pages Some(4)
                pid 0 tid 0 t - page 0x3 R
                error: line 3: page 4 is outside the region of 4 pages the header declares
            "#]],
        );
        check(
            "W 1\nX 2\n",
            strict,
            expect![[r#"
                pages None
                pid 0 tid 0 t - page 0x1 W
                error: line 2: unknown operation "X" (expected R or W)
            "#]],
        );
        check(
            "R 68719476736\n",
            strict,
            expect![[r#"
                pages None
                error: line 1: page 68719476736 exceeds the largest supported page 68719476735
            "#]],
        );
        check(
            "R 12x\n",
            strict,
            expect![[r#"
                pages None
                error: line 1: page "12x" is not a decimal page index
            "#]],
        );
        check(
            "W\n",
            strict,
            expect![[r#"
                pages None
                error: line 1: missing page index
            "#]],
        );
        check(
            "W 3 4\n",
            strict,
            expect![[r#"
                pages None
                error: line 1: unexpected "4" after the page index
            "#]],
        );
        check(
            "# pages=x\n",
            strict,
            expect![[r#"
                error: line 1: header: pages "x" is not a decimal page count
            "#]],
        );
        check(
            b"R 1\nR \xff\n",
            strict,
            expect![[r#"
                pages None
                pid 0 tid 0 t - page 0x1 R
                error: line 2: line is not valid UTF-8 (byte 0xff at column 3)
            "#]],
        );
    }

    #[test]
    fn lenient_and_long_lines() {
        let long = format!("R 1\nR {}\nW 2\n", "0".repeat(5000));
        check(
            &long,
            OpenOptions::default(),
            expect![[r#"
                pages None
                pid 0 tid 0 t - page 0x1 R
                error: line 2: line is longer than 4096 bytes
            "#]],
        );
        check(
            format!("{long}X\nR 99999999999\n\u{e9}\n"),
            OpenOptions { lenient: true, ..OpenOptions::default() },
            expect![[r#"
                pages None
                pid 0 tid 0 t - page 0x1 R
                pid 0 tid 0 t - page 0x2 W
                end
                skipped address out of range 1
                skipped line too long 1
                skipped malformed line 2
            "#]],
        );
    }
}
