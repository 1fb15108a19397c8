//! Tests of the `R|W <page>` reader: accesses, line numbers, every error message, limits.

use super::*;
use crate::record::{Record, RecordSource};
use crate::testutil::{render, Counting};
use expect_test::{expect, Expect};
use proptest::prelude::*;
use std::io::{BufReader, Cursor, Read};
use std::sync::atomic::Ordering;
use std::sync::Arc;

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
fn errors_name_the_line() {
    let strict = OpenOptions::default();
    check(
        "# pages=4\nR 3\nR 4\n",
        strict,
        expect![[r#"
            pages Some(4)
            pid 0 tid 0 t - page 0x3 R
            error: line 3, column 3: page 4 is outside the region of 4 pages the header declares
        "#]],
    );
    check(
        "W 1\nX 2\n",
        strict,
        expect![[r#"
            pages None
            pid 0 tid 0 t - page 0x1 W
            error: line 2, column 1: expected R or W, found "X"
        "#]],
    );
    check(
        "R 68719476736\n",
        strict,
        expect![[r#"
            pages None
            error: line 1, column 3: page 68719476736 exceeds the largest supported page 68719476735 (0xfffffffff)
        "#]],
    );
    check(
        "R 12x\n",
        strict,
        expect![[r#"
            pages None
            error: line 1, column 3: expected a page number (decimal, or hexadecimal with 0x), found "12x"
        "#]],
    );
    check(
        "W\n",
        strict,
        expect![[r#"
            pages None
            error: line 1, column 2: expected a page number (decimal, or hexadecimal with 0x), found the end of the line
        "#]],
    );
    check(
        "W 3 4\n",
        strict,
        expect![[r#"
            pages None
            error: line 1, column 5: expected the end of the line after the page number, found "4"
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
            error: line 2, column 3: line is not valid UTF-8 (byte 0xff)
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

/// Reads `input` strictly, through a buffer of `capacity` bytes, to its end or first
/// error, and renders every access with the line it came from.
fn render_lines(input: &[u8], capacity: usize) -> String {
    let reader = BufReader::with_capacity(capacity, Cursor::new(input.to_vec()));
    let mut reader = match TextReader::new(Box::new(reader), OpenOptions::default()) {
        Ok(reader) => reader,
        Err(err) => return format!("error: {err}\n"),
    };
    let mut out = String::new();
    if let Some(pages) = reader.declared_pages() {
        out += &format!("pages {pages}\n");
    }
    loop {
        match reader.next_record() {
            Ok(Some(record)) => {
                let operation = if record.write { "W" } else { "R" };
                out += &format!("{}: {operation} {}\n", reader.line(), record.page);
            }
            Ok(None) => return out + &format!("end after line {}\n", reader.line()),
            Err(err) => return out + &format!("error: {err}\n"),
        }
    }
}

fn check_lines(input: &str, expect: Expect) {
    expect.assert_eq(&render_lines(input.as_bytes(), 8192));
}

/// All records of a strict reader, or the first error's message.
fn read_all(mut reader: TextReader) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    while let Some(record) = reader.next_record().map_err(|err| err.to_string())? {
        records.push(record);
    }
    Ok(records)
}

fn record(page: u64, write: bool) -> Record {
    Record { pid: 0, tid: 0, time_ns: None, page, write }
}

#[test]
fn accesses_comments_and_blank_lines_keep_their_line_numbers() {
    check_lines(
        "# size=tiny\n#   pages=8 note=\"two words\" open=\"unterminated\n\nW 0\r\nR\t7\n  # a comment\n\n  W   3  \n# trailing\nR 5",
        expect![[r#"
            pages 8
            4: W 0
            5: R 7
            8: W 3
            10: R 5
            end after line 10
        "#]],
    );
    check_lines(
        "R 1\n",
        expect![[r#"
            1: R 1
            end after line 1
        "#]],
    );
    check_lines("", expect!["end after line 0\n"]);
    check_lines("# only a header\n", expect!["end after line 1\n"]);
}

#[test]
fn malformed_lines_name_the_line() {
    check_lines(
        "r 2\n",
        expect![[r#"
            error: line 1, column 1: expected R or W, found "r"
        "#]],
    );
    check_lines(
        "W 1\n\nR 12x\n",
        expect![[r#"
            1: W 1
            error: line 3, column 3: expected a page number (decimal, or hexadecimal with 0x), found "12x"
        "#]],
    );
    check_lines(
        "R -4\n",
        expect![[r#"
            error: line 1, column 3: expected a page number (decimal, or hexadecimal with 0x), found "-4"
        "#]],
    );
    check_lines(
        "R 1152921504606846976\n",
        expect![[r#"
            error: line 1, column 3: page 1152921504606846976 exceeds the largest supported page 68719476735 (0xfffffffff)
        "#]],
    );
    check_lines(
        "R 68719476735\nR 68719476736\n",
        expect![[r#"
            1: R 68719476735
            error: line 2, column 3: page 68719476736 exceeds the largest supported page 68719476735 (0xfffffffff)
        "#]],
    );
    check_lines(
        "R 1\nW\u{b}2\n",
        expect![[r#"
            1: R 1
            error: line 2, column 1: expected R or W, found "W\u{b}2"
        "#]],
    );
}

#[test]
fn hexadecimal_pages_need_the_0x_prefix() {
    check_lines(
        "R 0x1f\nW 0X1F\nR 0xABCdef\nW 0x0\nR 0xfffffffff\n",
        expect![[r#"
            1: R 31
            2: W 31
            3: R 11259375
            4: W 0
            5: R 68719476735
            end after line 5
        "#]],
    );
    check_lines(
        "R 1\nW 1f\n",
        expect![[r#"
            1: R 1
            error: line 2, column 3: expected a page number (decimal, or hexadecimal with 0x), found "1f" (hexadecimal needs the 0x prefix)
        "#]],
    );
    check_lines(
        "R  0x\n",
        expect![[r#"
            error: line 1, column 4: expected a page number (decimal, or hexadecimal with 0x), found "0x"
        "#]],
    );
    check_lines(
        "\tW 0xzz\n",
        expect![[r#"
            error: line 1, column 4: expected a page number (decimal, or hexadecimal with 0x), found "0xzz"
        "#]],
    );
    check_lines(
        "R x1f\n",
        expect![[r#"
            error: line 1, column 3: expected a page number (decimal, or hexadecimal with 0x), found "x1f"
        "#]],
    );
    check_lines(
        "R 0x1000000000\n",
        expect![[r#"
            error: line 1, column 3: page 0x1000000000 exceeds the largest supported page 68719476735 (0xfffffffff)
        "#]],
    );
    check_lines(
        "R 0x10000000000000000\n",
        expect![[r#"
            error: line 1, column 3: page 0x10000000000000000 exceeds the largest supported page 68719476735 (0xfffffffff)
        "#]],
    );
    check_lines(
        "# pages=16\nR 0xf\nW 0x10\n",
        expect![[r#"
            pages 16
            2: R 15
            error: line 3, column 3: page 0x10 is outside the region of 16 pages the header declares
        "#]],
    );
}

/// Detection goes by a line's shape, so a text trace with a bad page number gets this
/// reader's error, not "unrecognised trace format".
#[test]
fn detection_hands_a_bad_page_to_this_reader() {
    let detect =
        |input: &[u8]| match crate::open(Box::new(Cursor::new(input.to_vec())), OpenOptions::default()) {
            Ok(source) => format!("format {}\n{}", source.format().name(), render(source)),
            Err(err) => format!("open error: {err}\n"),
        };
    expect![[r#"
        format text
        pid 0 tid 0 t - page 0x1f R
        pid 0 tid 0 t - page 0xa W
        end
    "#]]
    .assert_eq(&detect(b"# pages=64\nR 0x1f\nW 10\n"));
    expect![[r#"
        format text
        error: line 1, column 3: expected a page number (decimal, or hexadecimal with 0x), found "1f" (hexadecimal needs the 0x prefix)
    "#]]
    .assert_eq(&detect(b"R 1f\nR 20\n"));
    expect![[r#"
        format text
        error: line 1, column 3: expected a page number (decimal, or hexadecimal with 0x), found "zz"
    "#]]
    .assert_eq(&detect(b"W zz\n"));
}

#[test]
fn non_utf8_is_an_error() {
    expect![[r#"
        error: line 2, column 3: line is not valid UTF-8 (byte 0xc3)
    "#]]
    .assert_eq(&render_lines(b"\n# \xc3(\nR 1\n", 64));
    expect![[r#"
        error: line 1: header line is not valid UTF-8 (byte 0xfe at column 2)
    "#]]
    .assert_eq(&render_lines(b"#\xfe\nR 1\n", 64));
}

#[test]
fn long_lines() {
    let longest = format!("R {}\n", "0".repeat(crate::lines::LINE_BYTES_MAX - 3) + "7");
    assert_eq!(render_lines(longest.as_bytes(), 64), "1: R 7\nend after line 1\n");
    let too_long = format!("R 1\nR {}\n", "0".repeat(crate::lines::LINE_BYTES_MAX - 2) + "7");
    expect![[r#"
        1: R 1
        error: line 2: line is longer than 4096 bytes
    "#]]
    .assert_eq(&render_lines(too_long.as_bytes(), 64));
    // The same line read in one piece from a large buffer.
    assert_eq!(render_lines(too_long.as_bytes(), 1 << 16), render_lines(too_long.as_bytes(), 64));
}

#[test]
fn a_huge_line_fails_without_being_buffered() {
    let bytes_read = Arc::default();
    let huge = b"W 1\nR ".chain(std::io::repeat(b'1').take(64 << 20));
    let reader = BufReader::new(Counting::new(huge, Arc::clone(&bytes_read)));
    let mut reader = TextReader::new(Box::new(reader), OpenOptions::default()).expect("no header to fail on");
    assert!(matches!(reader.next_record(), Ok(Some(_))));
    let err = reader.next_record().expect_err("the second line is 64 MiB long");
    assert_eq!(err.to_string(), "line 2: line is longer than 4096 bytes");
    let n_bytes = bytes_read.load(Ordering::Relaxed);
    assert!(n_bytes < 64 << 10, "read {n_bytes} bytes");
    // The reader stays stopped.
    let again = reader.next_record().expect_err("stopped");
    assert_eq!(again.to_string(), "line 2: reading stopped at an earlier error");
}

/// Fails with an I/O error after its data runs out.
struct Failing {
    data: &'static [u8],
}

impl Read for Failing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.data.is_empty() {
            return Err(std::io::Error::other("disk on fire"));
        }
        self.data.read(buf)
    }
}

fn open_failing(data: &'static [u8]) -> Result<TextReader, FormatError> {
    TextReader::new(Box::new(BufReader::new(Failing { data })), OpenOptions::default())
}

#[test]
fn io_errors_name_the_line_being_read() {
    let reader = open_failing(b"# pages=9\nW 1\nR 2").expect("the header is read before the failure");
    assert_eq!(reader.declared_pages(), Some(9));
    assert_eq!(read_all(reader), Err("line 3: read error: disk on fire".to_string()));

    let err = open_failing(b"").err().expect("fails at once");
    assert_eq!(err.to_string(), "line 1: read error: disk on fire");
    let reader = open_failing(b"R 1\n").expect("no header");
    assert_eq!(read_all(reader), Err("line 2: read error: disk on fire".to_string()));
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
            if decoration == 3 {
                text += &format!("{operation} {page:#x}{newline}");
            } else {
                text += &format!("{operation} {page}{newline}");
            }
        }
        let buffered = BufReader::with_capacity(capacity, Cursor::new(text.into_bytes()));
        let reader = TextReader::new(Box::new(buffered), OpenOptions::default()).expect("valid header");
        prop_assert_eq!(reader.declared_pages(), Some(PAGE_MAX + 1));
        let expected: Vec<Record> = accesses.iter().map(|&(write, page, _)| record(page, write)).collect();
        prop_assert_eq!(read_all(reader), Ok(expected));
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
        let n_lines = bytes.iter().filter(|&&byte| byte == b'\n').count() as u64 + 1;
        let buffered = BufReader::with_capacity(capacity, Cursor::new(bytes));
        let Ok(mut reader) = TextReader::new(Box::new(buffered), OpenOptions::default()) else {
            return Ok(());
        };
        loop {
            match reader.next_record() {
                Ok(Some(record)) => {
                    prop_assert!(record.page <= PAGE_MAX);
                    prop_assert!(reader.line() <= n_lines);
                }
                Ok(None) => break,
                Err(FormatError::Line { line, .. }) => {
                    prop_assert!((1..=n_lines).contains(&line));
                    prop_assert!(reader.next_record().is_err());
                    break;
                }
                Err(err) => prop_assert!(false, "unexpected error {}", err),
            }
        }
    }
}

proptest! {
    /// The quick reading of plain lines agrees with the field-by-field one wherever it
    /// answers.
    #[test]
    fn plain_lines_read_as_any_line_does(
        // Noise, and lines shaped like plain ones, near misses included.
        line in "[RW#x0-9 \t]{0,3}[0-9]{0,13}[ x\t]{0,1}|[RW#r][ \t]{1,2}[0-9x]{0,13}[ \t]{0,1}",
        declared in proptest::option::of(0u64..100_000_000_000),
    ) {
        let format = TextLines { declared_pages: declared, ..TextLines::default() };
        if let Some(quick) = format.plain_access(line.as_bytes()) {
            prop_assert_eq!(format!("{:?}", Step::Access(quick)), format!("{:?}", format.any_line(line.as_bytes())));
        }
    }
}

#[test]
fn plain_lines_take_the_quick_path() {
    let format = TextLines { declared_pages: Some(100), ..TextLines::default() };
    for (line, quick) in
        [("R 7", true), ("W 99", true), ("W 100", false), ("R  7", false), ("R 0x7", false), ("r 7", false)]
    {
        assert_eq!(format.plain_access(line.as_bytes()).is_some(), quick, "{line}");
    }
}

/// Reads `input` through a buffer of `capacity` bytes, a record at a time or, with `batch`,
/// that many at a time, and renders the records, the error that ends them, the last line
/// read and the skip counts.
fn drained(input: &str, capacity: usize, lenient: bool, batch: Option<usize>) -> String {
    let reader = BufReader::with_capacity(capacity, Cursor::new(input.as_bytes().to_vec()));
    let options = OpenOptions { lenient, ..OpenOptions::default() };
    let mut reader = match TextReader::new(Box::new(reader), options) {
        Ok(reader) => reader,
        Err(err) => return format!("error: {err}"),
    };
    let mut records: Vec<Record> = Vec::new();
    let end = loop {
        let before = records.len();
        let step = match batch {
            Some(n) => reader.next_records(&mut records, n).map(|()| records.len() - before == n),
            None => reader.next_record().map(|record| record.map(|r| records.push(r)).is_some()),
        };
        match step {
            Ok(true) => {}
            Ok(false) => break "end".to_string(),
            Err(err) => break format!("error: {err}"),
        }
    };
    format!("{records:?}\n{end}\nline {}\n{:?}", reader.line(), reader.skipped())
}

/// Issue 35: a cut trace read as a whole one. A header that says `end=marked` promises the
/// last line `# end lines=N`; without it, or with another count, reading fails, lenient or
/// not.
#[test]
fn an_end_marked_trace_must_end_with_its_marker() {
    let whole = "# swapsim end=marked\nR 1\nW 2\n# end lines=4\n";
    check(
        whole,
        OpenOptions::default(),
        expect![[r#"
            pages None
            pid 0 tid 0 t - page 0x1 R
            pid 0 tid 0 t - page 0x2 W
            end
        "#]],
    );
    for lenient in [false, true] {
        let options = OpenOptions { lenient, ..OpenOptions::default() };
        check(
            "# swapsim end=marked\nR 1\nW 2\n",
            options,
            expect![[r##"
                pages None
                pid 0 tid 0 t - page 0x1 R
                pid 0 tid 0 t - page 0x2 W
                error: line 3: the trace is cut: its header says end=marked, and it ends without the end marker "# end lines=3"
            "##]],
        );
        check(
            "# swapsim end=marked\nR 1\nW 2\n# end lin",
            options,
            expect![[r##"
                pages None
                pid 0 tid 0 t - page 0x1 R
                pid 0 tid 0 t - page 0x2 W
                error: line 4: the trace is cut: its header says end=marked, and it ends without the end marker "# end lines=4"
            "##]],
        );
        check(
            "# swapsim end=marked\nR 1\n# end lines=3\nW 2\n",
            options,
            expect![[r#"
                pages None
                pid 0 tid 0 t - page 0x1 R
                pid 0 tid 0 t - page 0x2 W
                error: line 4: the trace is cut or was added to: its end marker says 3 lines, and it has 4
            "#]],
        );
    }
    // Without the token an end marker is a comment like any other.
    check(
        "R 1\n# end lines=9\n",
        OpenOptions::default(),
        expect![[r#"
            pages None
            pid 0 tid 0 t - page 0x1 R
            end
        "#]],
    );
    // Other `end` tokens mean nothing, as other header tokens do.
    check(
        "# start=0 end=9\nR 1\n",
        OpenOptions::default(),
        expect![[r#"
            pages None
            pid 0 tid 0 t - page 0x1 R
            end
        "#]],
    );
    // A trace without records ends within its header.
    check(
        "# swapsim end=marked\n# end lines=2\n",
        OpenOptions::default(),
        expect![[r#"
            pages None
            end
        "#]],
    );
    check(
        "# swapsim end=marked\n# end lines=3\n",
        OpenOptions::default(),
        expect![[r#"
            pages None
            error: line 2: the trace is cut or was added to: its end marker says 3 lines, and it has 2
        "#]],
    );
}

proptest! {
    /// Records read in batches, plain lines taken straight from the reader's buffer, are
    /// the records read one at a time, up to the same error, whatever the buffer's size.
    #[test]
    fn batches_read_as_single_records_do(
        lines in proptest::collection::vec(
            "R [0-9]{1,4}|W [0-9]{1,4}|W [0-9]{1,3}\r|# c|R 0x1f|R  4|X 9|W 12 3|W 999999999999|",
            0..40,
        ),
        header in proptest::bool::ANY,
        last_newline in proptest::bool::ANY,
        capacity in 1usize..24,
        batch in 1usize..9,
        lenient in proptest::bool::ANY,
    ) {
        let mut input = if header { "# gen pages=500\n".to_string() } else { String::new() };
        input.push_str(&lines.join("\n"));
        if last_newline {
            input.push('\n');
        }
        prop_assert_eq!(
            drained(&input, capacity, lenient, Some(batch)),
            drained(&input, capacity, lenient, None)
        );
    }
}
