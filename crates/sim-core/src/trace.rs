//! The access-trace text format: one access per line, `R <page>` or `W <page>`.
//!
//! This is the format of the validation traces (see the validation README): optional
//! leading `#` header lines of `key=value` tokens, then one access per line, where
//! `<page>` is the decimal index of a 4 KiB page within the task's region. Traces run to
//! billions of lines, so the reader streams: it keeps one bounded line buffer, parses
//! bytes without building strings, and borrows lines straight from the reader's buffer
//! whenever a line does not straddle two fills of it.
//!
//! The reader is strict. Blank lines and `#` comment lines carry nothing and are skipped;
//! every other line must be a well-formed access, and anything else is an error naming the
//! line, never a silent skip. A line longer than 4096 bytes is an error as soon as
//! the limit is passed, so a corrupt file cannot make the reader buffer without bound.
//!
//! What this module does not do: it opens no files and does not decompress (the CLI hands
//! it a decompressed `BufRead`), and it carries no timing (every access has
//! `think_ns: None`).

use crate::error::TraceError;
use crate::ids::VirtPage;
use crate::workload::{Access, AccessSource, RegionSpec, TaskSpec};
use std::io::{BufRead, ErrorKind};

/// Longest line accepted, in bytes, line terminator excluded. An access line needs at most
/// 14 bytes; the rest is room for header lines and comments.
pub(crate) const LINE_BYTES_MAX: usize = 4096;

/// Largest page index accepted: 2^36 - 1. Page indexes below 2^36 address 256 TiB, the
/// whole 48-bit virtual address space of 4-level paging, which no real region exceeds;
/// the cap keeps every later `page * PAGE_SIZE` far from overflow.
pub(crate) const PAGE_MAX: u64 = (1 << 36) - 1;

/// Longest excerpt of offending text quoted in an error message, in characters.
const QUOTE_CHARS_MAX: usize = 40;

/// A streaming reader of the text trace format.
///
/// After an error the reader stops: later calls to
/// [`next_access`](AccessSource::next_access) return an error again rather than resume
/// after a line that was never understood.
#[derive(Debug)]
pub struct TextTrace<R: BufRead> {
    reader: R,
    /// A line that straddles fills of the reader's buffer, gathered here; at most
    /// [`LINE_BYTES_MAX`] bytes.
    partial: Vec<u8>,
    /// Number of the last line read, 0 before the first.
    line: u64,
    header: Vec<(String, String)>,
    declared_pages: Option<u64>,
    failed: bool,
}

impl<R: BufRead> TextTrace<R> {
    /// Reads the leading header lines (if any) without consuming the first access.
    ///
    /// Header lines are the `#` lines before the first other line. Their tokens are
    /// `key=value` pairs (a value may be double-quoted to hold spaces; an unterminated quote
    /// runs to the end of the line) or bare words, kept with an empty value. `pages=N`
    /// declares the region size: it must be a decimal count of 1..=2^36 pages, and every
    /// access must then lie below it.
    pub fn new(reader: R) -> Result<TextTrace<R>, TraceError> {
        let mut trace = TextTrace {
            reader,
            partial: Vec::new(),
            line: 0,
            header: Vec::new(),
            declared_pages: None,
            failed: false,
        };
        loop {
            let starts_header = loop {
                match trace.reader.fill_buf() {
                    Ok(available) => break available.first() == Some(&b'#'),
                    Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                    Err(source) => return Err(TraceError::Io { line: trace.line + 1, source }),
                }
            };
            if !starts_header {
                return Ok(trace);
            }
            let Some(tokens) = trace.with_next_line(parse_header_line)? else {
                return Ok(trace);
            };
            let tokens = tokens.map_err(|message| TraceError::Malformed { line: trace.line, message })?;
            for (key, value) in tokens {
                if key == "pages" {
                    let pages = parse_declared_pages(&value, trace.declared_pages)
                        .map_err(|message| TraceError::Malformed { line: trace.line, message })?;
                    trace.declared_pages = Some(pages);
                }
                trace.header.push((key, value));
            }
        }
    }

    /// The region size the header declares with `pages=N`, if it does.
    pub fn declared_pages(&self) -> Option<u64> {
        self.declared_pages
    }

    /// The header's tokens in order, as key/value pairs; bare words have an empty value.
    pub fn header(&self) -> &[(String, String)] {
        &self.header
    }

    /// The 1-based number of the last line read (0 before any line was read): after an
    /// access, its line; after an error, the offending line.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Reads the next line and hands its bytes, terminator excluded, to `parse`. `Ok(None)`
    /// at the end of the input.
    fn with_next_line<T>(&mut self, parse: impl FnOnce(&[u8]) -> T) -> Result<Option<T>, TraceError> {
        self.partial.clear();
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(source) => return Err(TraceError::Io { line: self.line + 1, source }),
            };
            if available.is_empty() {
                if self.partial.is_empty() {
                    return Ok(None);
                }
                // A last line without a terminator.
                self.line += 1;
                return Ok(Some(parse(&self.partial)));
            }
            let newline = available.iter().position(|&byte| byte == b'\n');
            let taken = newline.unwrap_or(available.len());
            if self.partial.len() + taken > LINE_BYTES_MAX {
                return Err(TraceError::Malformed {
                    line: self.line + 1,
                    message: format!("line is longer than {LINE_BYTES_MAX} bytes"),
                });
            }
            match newline {
                Some(end) if self.partial.is_empty() => {
                    // The common case: the whole line sits in the reader's buffer.
                    self.line += 1;
                    let res = parse(&available[..end]);
                    self.reader.consume(end + 1);
                    return Ok(Some(res));
                }
                Some(end) => {
                    self.partial.extend_from_slice(&available[..end]);
                    self.reader.consume(end + 1);
                    self.line += 1;
                    return Ok(Some(parse(&self.partial)));
                }
                None => {
                    self.partial.extend_from_slice(available);
                    self.reader.consume(taken);
                }
            }
        }
    }
}

impl<R: BufRead + Send> AccessSource for TextTrace<R> {
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        if self.failed {
            return Err(TraceError::Malformed {
                line: self.line,
                message: "reading stopped at an earlier error".into(),
            });
        }
        let declared_pages = self.declared_pages;
        loop {
            match self.with_next_line(|bytes| parse_access_line(bytes, declared_pages)) {
                Ok(None) => return Ok(None),
                Ok(Some(Ok(Some(access)))) => return Ok(Some(access)),
                // A blank or comment line.
                Ok(Some(Ok(None))) => continue,
                Ok(Some(Err(message))) => {
                    self.failed = true;
                    return Err(TraceError::Malformed { line: self.line, message });
                }
                Err(err) => {
                    self.failed = true;
                    if let TraceError::Malformed { line, .. } = &err {
                        self.line = *line;
                    }
                    return Err(err);
                }
            }
        }
    }
}

/// A task replaying a text trace. Its region is `[0, pages)` when the header declares
/// `pages=N`; otherwise it declares none and the engine maps implicit regions on first
/// touch.
pub fn text_trace_task<R: BufRead + Send + 'static>(name: String, reader: R) -> Result<TaskSpec, TraceError> {
    let trace = TextTrace::new(reader)?;
    let regions =
        trace.declared_pages().map(|pages| RegionSpec { start: VirtPage(0), pages }).into_iter().collect();
    Ok(TaskSpec { name, address_space: None, regions, accesses: Box::new(trace) })
}

/// One access line: `Ok(None)` for a blank or comment line, or a message saying what is
/// wrong.
fn parse_access_line(bytes: &[u8], declared_pages: Option<u64>) -> Result<Option<Access>, String> {
    let res = parse_access_fields(bytes, declared_pages);
    if let Ok(Some(_)) = res {
        // A well-formed access line is ASCII, hence UTF-8.
        return res;
    }
    // Blank, comment and malformed lines may hold anything; non-UTF-8 takes precedence so
    // that the message never quotes mangled text.
    if let Err(err) = std::str::from_utf8(bytes) {
        let offset = err.valid_up_to();
        return Err(format!(
            "line is not valid UTF-8 (byte 0x{:02x} at column {})",
            bytes[offset],
            offset + 1
        ));
    }
    res
}

fn parse_access_fields(bytes: &[u8], declared_pages: Option<u64>) -> Result<Option<Access>, String> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let mut fields = bytes.split(|&byte| byte == b' ' || byte == b'\t').filter(|field| !field.is_empty());
    let Some(operation) = fields.next() else {
        return Ok(None);
    };
    if operation[0] == b'#' {
        return Ok(None);
    }
    let write = match operation {
        b"R" => false,
        b"W" => true,
        _ => return Err(format!("unknown operation {} (expected R or W)", quote(operation))),
    };
    let Some(page_text) = fields.next() else {
        return Err("missing page index".into());
    };
    let page = parse_page(page_text)?;
    if let Some(extra) = fields.next() {
        return Err(format!("unexpected {} after the page index", quote(extra)));
    }
    if let Some(pages) = declared_pages {
        if page >= pages {
            return Err(format!("page {page} is outside the region of {pages} pages the header declares"));
        }
    }
    Ok(Some(Access { vpage: VirtPage(page), write, think_ns: None }))
}

fn parse_page(text: &[u8]) -> Result<u64, String> {
    if !text.iter().all(u8::is_ascii_digit) {
        return Err(format!("page {} is not a decimal page index", quote(text)));
    }
    let mut page: u64 = 0;
    for &digit in text {
        page = page * 10 + u64::from(digit - b'0');
        if page > PAGE_MAX {
            return Err(format!(
                "page {} exceeds the largest supported page {PAGE_MAX}",
                String::from_utf8_lossy(&text[..text.len().min(QUOTE_CHARS_MAX)])
            ));
        }
    }
    Ok(page)
}

/// Quotes offending text for a message, cut to [`QUOTE_CHARS_MAX`] characters.
fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(QUOTE_CHARS_MAX) {
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// The tokens of one `#` header line.
fn parse_header_line(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
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

/// The value of a `pages=` header token.
fn parse_declared_pages(value: &str, earlier: Option<u64>) -> Result<u64, String> {
    if value.is_empty() || !value.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!("header: pages {} is not a decimal page count", quote(value.as_bytes())));
    }
    let pages = match value.parse::<u64>() {
        Ok(pages) if pages <= PAGE_MAX + 1 => pages,
        _ => {
            return Err(format!(
                "header: pages={} exceeds the largest supported region of {} pages",
                &value[..value.len().min(QUOTE_CHARS_MAX)],
                PAGE_MAX + 1
            ))
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
    use proptest::prelude::*;
    use std::io::{BufReader, Read};

    /// Reads `input` to its end or first error and renders what came out.
    fn check(input: &str, expect: Expect) {
        expect.assert_eq(&render(input.as_bytes(), 8192));
    }

    fn render(input: &[u8], capacity: usize) -> String {
        let mut out = String::new();
        let mut trace = match TextTrace::new(BufReader::with_capacity(capacity, input)) {
            Ok(trace) => trace,
            Err(err) => return format!("error: {err}\n"),
        };
        for (key, value) in trace.header() {
            out += &format!("header {key}={value:?}\n");
        }
        if let Some(pages) = trace.declared_pages() {
            out += &format!("pages {pages}\n");
        }
        loop {
            match trace.next_access() {
                Ok(Some(access)) => {
                    let operation = if access.write { "W" } else { "R" };
                    out += &format!("{}: {operation} {}\n", trace.line(), access.vpage.0);
                }
                Ok(None) => {
                    out += &format!("end after line {}\n", trace.line());
                    return out;
                }
                Err(err) => {
                    out += &format!("error: {err}\n");
                    return out;
                }
            }
        }
    }

    /// All accesses, or the first error's message.
    fn read_all<R: BufRead + Send>(mut trace: TextTrace<R>) -> Result<Vec<Access>, String> {
        let mut accesses = Vec::new();
        while let Some(access) = trace.next_access().map_err(|err| err.to_string())? {
            accesses.push(access);
        }
        Ok(accesses)
    }

    #[test]
    fn header_of_a_validation_trace() {
        let input = r#"# gtwork size_mib=512 pages=131072 pattern=rand passes=3 pass_accesses=131072 fill_accesses=131072 fill=random write_frac=0.2 seed=1 thp=nohugepage scatter=1 page_size=4096 format="<R|W> <page_index>" order=fill_pass_then_passes
W 0
W 1
"#;
        check(
            input,
            expect![[r#"
                header gtwork=""
                header size_mib="512"
                header pages="131072"
                header pattern="rand"
                header passes="3"
                header pass_accesses="131072"
                header fill_accesses="131072"
                header fill="random"
                header write_frac="0.2"
                header seed="1"
                header thp="nohugepage"
                header scatter="1"
                header page_size="4096"
                header format="<R|W> <page_index>"
                header order="fill_pass_then_passes"
                pages 131072
                2: W 0
                3: W 1
                end after line 3
            "#]],
        );
    }

    #[test]
    fn accesses_comments_and_blank_lines() {
        check(
            "# size=tiny\n#   pages=8 note=\"two words\" open=\"unterminated\n\nW 0\r\nR\t7\n  # a comment\n\n  W   3  \n# trailing\nR 5",
            expect![[r#"
                header size="tiny"
                header pages="8"
                header note="two words"
                header open="unterminated"
                pages 8
                4: W 0
                5: R 7
                8: W 3
                10: R 5
                end after line 10
            "#]],
        );
    }

    #[test]
    fn no_header_and_empty_input() {
        check(
            "R 1\n",
            expect![[r#"
            1: R 1
            end after line 1
        "#]],
        );
        check(
            "",
            expect![[r#"
            end after line 0
        "#]],
        );
        check(
            "# only a header\n",
            expect![[r#"
            header only=""
            header a=""
            header header=""
            end after line 1
        "#]],
        );
    }

    #[test]
    fn malformed_lines_name_the_line() {
        check(
            "W 1\nX 2\n",
            expect![[r#"
            1: W 1
            error: line 2: unknown operation "X" (expected R or W)
        "#]],
        );
        check(
            "r 2\n",
            expect![[r#"
            error: line 1: unknown operation "r" (expected R or W)
        "#]],
        );
        check(
            "W 1\n\nR 12x\n",
            expect![[r#"
            1: W 1
            error: line 3: page "12x" is not a decimal page index
        "#]],
        );
        check(
            "R -4\n",
            expect![[r#"
            error: line 1: page "-4" is not a decimal page index
        "#]],
        );
        check(
            "W\n",
            expect![[r#"
            error: line 1: missing page index
        "#]],
        );
        check(
            "W 3 4\n",
            expect![[r#"
            error: line 1: unexpected "4" after the page index
        "#]],
        );
        check(
            "R 1152921504606846976\n",
            expect![[r#"
            error: line 1: page 1152921504606846976 exceeds the largest supported page 68719476735
        "#]],
        );
        check(
            "R 68719476735\nR 68719476736\n",
            expect![[r#"
            1: R 68719476735
            error: line 2: page 68719476736 exceeds the largest supported page 68719476735
        "#]],
        );
        check(
            "# pages=4\nR 3\nR 4\n",
            expect![[r#"
            header pages="4"
            pages 4
            2: R 3
            error: line 3: page 4 is outside the region of 4 pages the header declares
        "#]],
        );
        check(
            "R 1\nW\u{b}2\n",
            expect![[r#"
            1: R 1
            error: line 2: unknown operation "W\u{b}2" (expected R or W)
        "#]],
        );
    }

    #[test]
    fn non_utf8_is_an_error() {
        expect![[r#"
            1: R 1
            error: line 2: line is not valid UTF-8 (byte 0xff at column 3)
        "#]]
        .assert_eq(&render(b"R 1\nR \xff\n", 64));
        expect![[r#"
            error: line 2: line is not valid UTF-8 (byte 0xc3 at column 3)
        "#]]
        .assert_eq(&render(b"\n# \xc3(\nR 1\n", 64));
        expect![[r#"
            error: line 1: header line is not valid UTF-8 (byte 0xfe at column 2)
        "#]]
        .assert_eq(&render(b"#\xfe\nR 1\n", 64));
    }

    #[test]
    fn bad_declared_pages() {
        check(
            "# pages=12k\n",
            expect![[r#"
            error: line 1: header: pages "12k" is not a decimal page count
        "#]],
        );
        check(
            "# pages=0\n",
            expect![[r#"
            error: line 1: header: pages=0 declares an empty region
        "#]],
        );
        check(
            "# pages=68719476737\n",
            expect![[r#"
            error: line 1: header: pages=68719476737 exceeds the largest supported region of 68719476736 pages
        "#]],
        );
        check(
            "# pages=4\n# pages=5\n",
            expect![[r#"
            error: line 2: header: pages=5 contradicts the earlier pages=4
        "#]],
        );
    }

    #[test]
    fn long_lines() {
        let longest = format!("R {}\n", "0".repeat(LINE_BYTES_MAX - 3) + "7");
        assert_eq!(render(longest.as_bytes(), 64), "1: R 7\nend after line 1\n");
        let too_long = format!("R 1\nR {}\n", "0".repeat(LINE_BYTES_MAX - 2) + "7");
        expect![[r#"
            1: R 1
            error: line 2: line is longer than 4096 bytes
        "#]]
        .assert_eq(&render(too_long.as_bytes(), 64));
        // The same line read in one piece from a large buffer.
        assert_eq!(render(too_long.as_bytes(), 1 << 16), render(too_long.as_bytes(), 64));
    }

    /// Counts the bytes handed out by the inner reader.
    struct Counting<R> {
        inner: R,
        bytes_read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    }

    impl<R: Read> Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.bytes_read.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(n)
        }
    }

    #[test]
    fn a_huge_line_fails_without_being_buffered() {
        let bytes_read = std::sync::Arc::default();
        let huge = b"W 1\nR ".chain(std::io::repeat(b'1').take(64 << 20));
        let reader = BufReader::new(Counting { inner: huge, bytes_read: std::sync::Arc::clone(&bytes_read) });
        let mut trace = TextTrace::new(reader).expect("no header to fail on");
        assert!(matches!(trace.next_access(), Ok(Some(_))));
        let err = trace.next_access().expect_err("the second line is 64 MiB long");
        assert_eq!(err.to_string(), "line 2: line is longer than 4096 bytes");
        let n_bytes = bytes_read.load(std::sync::atomic::Ordering::Relaxed);
        assert!(n_bytes < 64 << 10, "read {n_bytes} bytes");
        // The reader stays stopped.
        let again = trace.next_access().expect_err("stopped");
        assert_eq!(again.to_string(), "line 2: reading stopped at an earlier error");
    }

    /// Fails with an I/O error after its data runs out.
    #[derive(Debug)]
    struct Failing<'a> {
        data: &'a [u8],
    }

    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.data.is_empty() {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = self.data.read(buf)?;
            Ok(n)
        }
    }

    #[test]
    fn io_errors_name_the_line_being_read() {
        let mut trace = TextTrace::new(BufReader::new(Failing { data: b"# pages=9\nW 1\nR 2" }))
            .expect("the header is read before the failure");
        assert_eq!(trace.declared_pages(), Some(9));
        let res = read_all(trace);
        assert_eq!(res, Err("line 3: read error: disk on fire".to_string()));

        let err = TextTrace::new(BufReader::new(Failing { data: b"" })).expect_err("fails at once");
        assert!(matches!(err, TraceError::Io { line: 1, .. }), "{err:?}");
        trace = TextTrace::new(BufReader::new(Failing { data: b"R 1\n" })).expect("no header");
        assert_eq!(read_all(trace), Err("line 2: read error: disk on fire".to_string()));
    }

    #[test]
    fn text_trace_task_declares_the_region() {
        let mut task = text_trace_task("t.trace".into(), &b"# pages=16\nW 15\n"[..]).expect("valid");
        assert_eq!(task.name, "t.trace");
        assert_eq!(task.regions, [RegionSpec { start: VirtPage(0), pages: 16 }]);
        let first = task.accesses.next_access().expect("valid");
        assert_eq!(first, Some(Access { vpage: VirtPage(15), write: true, think_ns: None }));
        let task = text_trace_task("t.trace".into(), &b"W 15\n"[..]).expect("valid");
        assert!(task.regions.is_empty());
        let err = text_trace_task("t.trace".into(), &b"# pages=x\n"[..]).expect_err("bad header");
        assert_eq!(err.to_string(), "line 1: header: pages \"x\" is not a decimal page count");
    }

    proptest! {
        #[test]
        fn written_accesses_parse_back(
            accesses in proptest::collection::vec((any::<bool>(), 0..=PAGE_MAX, 0u8..8), 0..200),
            crlf in any::<bool>(),
            capacity in 1usize..64,
        ) {
            let newline = if crlf { "\r\n" } else { "\n" };
            let mut text = format!("# generated pages={}{newline}", PAGE_MAX + 1);
            for &(write, page, decoration) in &accesses {
                // Sprinkle the blank and comment lines the format allows.
                match decoration {
                    0 => text += newline,
                    1 => text += &format!("# note {page}{newline}"),
                    _ => {}
                }
                let operation = if write { "W" } else { "R" };
                text += &format!("{operation} {page}{newline}");
            }
            let trace = TextTrace::new(BufReader::with_capacity(capacity, text.as_bytes())).expect("valid header");
            prop_assert_eq!(trace.declared_pages(), Some(PAGE_MAX + 1));
            let expected: Vec<Access> = accesses
                .iter()
                .map(|&(write, page, _)| Access { vpage: VirtPage(page), write, think_ns: None })
                .collect();
            prop_assert_eq!(read_all(trace), Ok(expected));
        }

        #[test]
        fn arbitrary_bytes_parse_or_fail_cleanly(
            bytes in proptest::collection::vec(
                prop_oneof![
                    proptest::sample::select(b"RW #=\"0123456789\n\r\tpages".to_vec()),
                    any::<u8>(),
                ],
                0..400,
            ),
            capacity in 1usize..32,
        ) {
            let Ok(mut trace) = TextTrace::new(BufReader::with_capacity(capacity, &bytes[..])) else {
                return Ok(());
            };
            let n_lines = bytes.iter().filter(|&&byte| byte == b'\n').count() as u64 + 1;
            loop {
                match trace.next_access() {
                    Ok(Some(access)) => {
                        prop_assert!(access.vpage.0 <= PAGE_MAX);
                        prop_assert!(trace.line() <= n_lines);
                    }
                    Ok(None) => break,
                    Err(TraceError::Malformed { line, .. }) => {
                        prop_assert!((1..=n_lines).contains(&line));
                        prop_assert!(trace.next_access().is_err());
                        break;
                    }
                    Err(err) => prop_assert!(false, "unexpected error {}", err),
                }
            }
        }
    }
}
