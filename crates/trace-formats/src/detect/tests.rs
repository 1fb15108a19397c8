//! Tests of compression and format detection, and of reading every format through [`open`].

use super::*;
use crate::record::Record;
use crate::testutil::{render, Counting};
use crate::{ObjectMap, TraceParams};
use expect_test::{expect, Expect};
use proptest::prelude::*;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const PERF: &str = "# ========\n# cmdline : /usr/bin/perf record -e exceptions:page_fault_user\n# ========\n#\n         python3 14561/14563 [001]  2364.742742: exceptions:page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6\n";
const FTRACE: &str = "# tracer: nop\n#\n         python3-14561   [001] d....  2364.742742: page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6\n";
const FTRACE_PIPE: &str = "         python3-14561   [001] ....  2364.742742: page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6\n";
const LACKEY: &str = "==14561== Lackey, an example Valgrind tool\nI  0401c40,3\n L 1ffefffd10,8\n";
const LACKEY_BARE: &str = " S 0401ffe,4\n";
const TEXT: &str = "# gen pages=16\nW 15\nR 3\n";

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(bytes, 1).expect("compressing in memory")
}

fn open_bytes(bytes: Vec<u8>, options: OpenOptions) -> Result<Box<dyn RecordSource>, FormatError> {
    open(Box::new(Cursor::new(bytes)), options)
}

/// Opens `input` plain, gzipped and zstd-compressed; all three must read the same.
fn check(input: &[u8], options: OpenOptions, expect: Expect) {
    let read = |bytes: Vec<u8>| match open_bytes(bytes, options) {
        Ok(source) => format!("format {}\n{}", source.format().name(), render(source)),
        Err(err) => format!("open error: {err}\n"),
    };
    let plain = read(input.to_vec());
    assert_eq!(read(gzip(input)), plain, "gzip");
    assert_eq!(read(zstd(input)), plain, "zstd");
    expect.assert_eq(&plain);
}

#[test]
fn detects_each_format() {
    let options = OpenOptions::default();
    check(
        PERF.as_bytes(),
        options,
        expect![[r#"
            format perf
            pid 14561 tid 14563 t 2364.742742000 page 0x7f1f04a24 W
            end
        "#]],
    );
    // A tracefs `trace` file and its `trace_pipe` stream read the same.
    for ftrace in [FTRACE, FTRACE_PIPE] {
        check(
            ftrace.as_bytes(),
            options,
            expect![[r#"
                format ftrace
                pid 14561 tid 14561 t 2364.742742000 page 0x7f1f04a24 W
                end
            "#]],
        );
    }
    check(
        LACKEY.as_bytes(),
        options,
        expect![[r#"
            format lackey
            pid 0 tid 0 t - page 0x1ffefff R
            end
            skipped instruction fetch 1
            skipped valgrind message 1
        "#]],
    );
    check(
        LACKEY_BARE.as_bytes(),
        options,
        expect![[r#"
            format lackey
            pid 0 tid 0 t - page 0x401 W
            pid 0 tid 0 t - page 0x402 W
            end
        "#]],
    );
    check(
        TEXT.as_bytes(),
        options,
        expect![[r#"
            format text
            pid 0 tid 0 t - page 0xf W
            pid 0 tid 0 t - page 0x3 R
            end
        "#]],
    );
}

#[test]
fn unknown_formats_say_what_they_saw() {
    let options = OpenOptions::default();
    check(
        b"",
        options,
        expect![[r#"
            open error: unrecognised trace format: the trace is empty
        "#]],
    );
    check(
        b"# only\n\n#comments\n",
        options,
        expect![[r#"
            open error: unrecognised trace format: the trace holds only 3 blank or comment lines
        "#]],
    );
    check(
        b"# header\nhello, world\nR 1\n",
        options,
        expect![[r#"
            open error: unrecognised trace format: first data line "hello, world" is not perf script, ftrace, lackey or R|W text
        "#]],
    );
    check(
        b"\xff\xfe\x00garbage",
        options,
        expect![[r#"
            open error: unrecognised trace format: first data line "��\0garbage" is not perf script, ftrace, lackey or R|W text
        "#]],
    );
    check(
        b"SWAPSIMT\x01\x00",
        options,
        expect![[r#"
            open error: byte offset 10: stream ends before its end marker (truncated file?)
        "#]],
    );
    let no_line = vec![b'#'; PEEK_BYTES + 10];
    let err = open_bytes(no_line, options).err().expect("no data line");
    assert_eq!(err.to_string(), "unrecognised trace format: no data line in the first 65536 bytes");
}

#[test]
fn a_forced_format_is_not_detected() {
    check(
        TEXT.as_bytes(),
        OpenOptions { format: Some(Format::Lackey), ..OpenOptions::default() },
        expect![[r##"
            format lackey
            error: line 1: not a lackey line: "# gen pages=16" (expected "I  <hex>,<size>" or " L|S|M <hex>,<size>")
        "##]],
    );
    check(
        b"",
        OpenOptions { format: Some(Format::PerfScript), ..OpenOptions::default() },
        expect![[r#"
            format perf
            end
        "#]],
    );
}

#[test]
fn truncated_compressed_streams_are_line_errors() {
    let text: String = (0..200_000).map(|page| format!("R {page}\n")).collect();
    for (what, mut compressed) in [("gzip", gzip(text.as_bytes())), ("zstd", zstd(text.as_bytes()))] {
        compressed.truncate(compressed.len() / 2);
        let mut source = open_bytes(compressed, OpenOptions::default()).expect("the start is intact");
        let err = loop {
            match source.next_record() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("{what}: a truncated stream must not end cleanly"),
                Err(err) => break err,
            }
        };
        let FormatError::Line { line, message, .. } = err else { panic!("{what}: {err:?}") };
        assert!(line > 1000, "{what}: line {line}");
        assert_eq!(message, format!("read error: {what} stream is truncated"));
    }
    // Truncated within the first bytes: detection itself cannot read.
    let mut compressed = gzip(PERF.as_bytes());
    compressed.truncate(12);
    let err = open_bytes(compressed, OpenOptions::default()).err().expect("nothing to detect");
    assert_eq!(err.to_string(), "byte offset 0: read error: gzip stream is truncated");
}

#[test]
fn a_huge_line_fails_without_being_buffered() {
    let bytes_read = Arc::new(AtomicU64::new(0));
    let huge = b" L 1000,4\n L ".chain(std::io::repeat(b'1').take(64 << 20));
    let reader = Counting::new(huge, Arc::clone(&bytes_read));
    let mut source = open(Box::new(reader), OpenOptions::default()).expect("lackey");
    assert!(matches!(source.next_record(), Ok(Some(_))));
    let err = source.next_record().expect_err("the second line is 64 MiB long");
    assert_eq!(err.to_string(), "line 2: line is longer than 4096 bytes");
    let n_bytes = bytes_read.load(Ordering::Relaxed);
    assert!(n_bytes < 256 << 10, "read {n_bytes} bytes");
    let again = source.next_record().expect_err("stopped");
    assert_eq!(again.to_string(), "line 2: reading stopped at an earlier error");
}

#[test]
fn lenient_mode_skips_a_huge_line_and_goes_on() {
    let input = b" L 1000,4\n L ".chain(std::io::repeat(b'1').take(1 << 20)).chain(&b"\n S 2000,4\n"[..]);
    let source =
        open(Box::new(input), OpenOptions { lenient: true, ..OpenOptions::default() }).expect("lackey");
    expect![[r#"
        pid 0 tid 0 t - page 0x1 R
        pid 0 tid 0 t - page 0x2 W
        end
        skipped line too long 1
    "#]]
    .assert_eq(&render(source));
}

/// Fails with an I/O error after its data runs out.
struct FailingAfter(Cursor<Vec<u8>>);

impl Read for FailingAfter {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.0.read(buf)? {
            0 => Err(std::io::Error::other("disk on fire")),
            n => Ok(n),
        }
    }
}

#[test]
fn read_errors_name_the_line_being_read() {
    let reader = FailingAfter(Cursor::new(b"R 1\nR 2\nR".to_vec()));
    let source = open(Box::new(reader), OpenOptions::default()).expect("text");
    expect![[r#"
        pid 0 tid 0 t - page 0x1 R
        pid 0 tid 0 t - page 0x2 R
        error: line 3: read error: disk on fire
    "#]]
    .assert_eq(&render(source));
}

/// Every record the given format can express, written in that format.
fn write_records(format: Format, records: &[Record]) -> String {
    let mut out = String::new();
    for record in records {
        let address = record.page << 12 | 0x123;
        let error_code = if record.write { 0x6 } else { 0x4 };
        let time = crate::lines::seconds(record.time_ns.unwrap_or(0));
        out += &match format {
            Format::PerfScript => format!(
                " a b {}/{} [001] {time}: exceptions:page_fault_user: address={address:#x} ip=0x0 error_code={error_code:#x}\n",
                record.pid, record.tid
            ),
            Format::Ftrace => format!(
                " a-b c-{} ({}) [001] d.... {time}: page_fault_user: address={address:#x} ip=0x0 error_code={error_code:#x}\n",
                record.tid, record.pid
            ),
            Format::Lackey => format!(" {} {:x},4\n", if record.write { "S" } else { "L" }, address),
            Format::Text => format!("{} {}\n", if record.write { "W" } else { "R" }, record.page),
            Format::LibCacheSimTxt => format!("{}\n", record.page),
            Format::Native | Format::OracleGeneral | Format::Lcs | Format::LibCacheSimCsv => {
                unreachable!("not a format this test writes")
            }
        };
    }
    out
}

fn read_all(source: &mut dyn RecordSource) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    while let Some(record) = source.next_record().map_err(|err| err.to_string())? {
        records.push(record);
    }
    Ok(records)
}

fn arbitrary_records(format: Format) -> impl Strategy<Value = Vec<Record>> {
    let timed = matches!(format, Format::PerfScript | Format::Ftrace);
    // libCacheSim's ids are pages under the default mapping below its region, and reads.
    let objects = format == Format::LibCacheSimTxt;
    let page_max: u64 = match format {
        Format::Text => (1 << 36) - 1,
        Format::LibCacheSimTxt => crate::oracle::REGION_PAGES_DEFAULT - 1,
        _ => (1 << 45) - 1,
    };
    let record =
        (1..=crate::lines::PID_MAX, 1..=crate::lines::PID_MAX, 0..=page_max, any::<bool>(), 0..1_000_000u64)
            .prop_map(move |(pid, tid, page, write, step_ns)| Record {
                pid: if timed { pid } else { 0 },
                tid: if timed { tid } else { 0 },
                time_ns: timed.then_some(step_ns),
                page,
                write: write && !objects,
            });
    proptest::collection::vec(record, 1..60).prop_map(move |mut records| {
        // Times only grow, as a trace's do.
        let mut now_ns = 0;
        for record in &mut records {
            if let Some(step_ns) = record.time_ns {
                now_ns += step_ns;
                // perf prints microseconds by default.
                record.time_ns = Some(now_ns / 1000 * 1000);
            }
        }
        records
    })
}

proptest! {
    #[test]
    fn written_records_read_back(
        (format, records) in prop_oneof![
            Just(Format::PerfScript), Just(Format::Ftrace), Just(Format::Lackey), Just(Format::Text),
            Just(Format::LibCacheSimTxt)
        ].prop_flat_map(|format| (Just(format), arbitrary_records(format))),
        compression in 0..3u8,
    ) {
        let text = write_records(format, &records);
        let bytes = match compression {
            0 => text.into_bytes(),
            1 => gzip(text.as_bytes()),
            _ => zstd(text.as_bytes()),
        };
        let mut source = open_bytes(bytes, OpenOptions::default()).map_err(|err| TestCaseError::fail(err.to_string()))?;
        prop_assert_eq!(source.format(), format);
        prop_assert_eq!(read_all(&mut *source), Ok(records));
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(
            prop_oneof![
                proptest::sample::select(b"RWILSM=#[]-:./, 0123456789abcdefx\n\r\tpagesaddress=error_code=".to_vec()),
                any::<u8>(),
            ],
            0..600,
        ),
        forced in proptest::option::of(proptest::sample::select(vec![
            Format::PerfScript, Format::Ftrace, Format::Lackey, Format::Text, Format::Native,
            Format::OracleGeneral, Format::Lcs, Format::LibCacheSimTxt, Format::LibCacheSimCsv,
        ])),
        lenient in any::<bool>(),
        instructions in any::<bool>(),
        params in proptest::option::of(proptest::sample::select(vec![
            "obj-id-col=1", "obj-id-col=2,time-col=1,obj-size-col=3", "obj-id-is-num=false",
            "obj-id-col=1,delimiter=\\t,has-header=false,obj-id-is-num=0",
        ])),
        dense in any::<bool>(),
    ) {
        let params = params.map_or_else(TraceParams::default, |text| TraceParams::parse(text).expect("valid"));
        let object_map = if dense { ObjectMap::Dense } else { ObjectMap::default() };
        let options = OpenOptions { format: forced, lenient, instructions, object_map, params };
        let n_lines = bytes.iter().filter(|&&byte| byte == b'\n').count() as u64 + 1;
        let n_bytes = bytes.len() as u64;
        let Ok(mut source) = open_bytes(bytes, options) else { return Ok(()) };
        for _ in 0..10_000 {
            match source.next_record() {
                Ok(Some(record)) => prop_assert!(record.page < 1 << 45),
                Ok(None) => break,
                Err(FormatError::Line { line, .. }) => {
                    prop_assert!((1..=n_lines).contains(&line), "line {} of {}", line, n_lines);
                    prop_assert!(!lenient || line > 0);
                    prop_assert!(source.next_record().is_err());
                    break;
                }
                // The binary formats: libCacheSim's records are 24 bytes or more.
                Err(FormatError::Offset { offset, .. }) => {
                    prop_assert!(matches!(source.format(), Format::OracleGeneral | Format::Lcs | Format::Native));
                    prop_assert!(offset <= n_bytes, "offset {} of {}", offset, n_bytes);
                    prop_assert!(source.next_record().is_err());
                    break;
                }
                Err(err) => prop_assert!(false, "unexpected error {}", err),
            }
        }
    }
}

/// Issue 35: a read error while the format was being detected (within the first
/// [`PEEK_BYTES`] decompressed bytes) had no position, and a chain of causes printed its
/// text twice ("X: X"). It now names the offset, and its text is its own.
#[test]
fn a_corrupt_start_names_its_offset_once() {
    let text: String = (0..20_000).map(|page| format!("R {page}\n")).collect();
    for (what, mut compressed, at) in
        [("gzip", gzip(text.as_bytes()), 20), ("zstd", zstd(text.as_bytes()), 10)]
    {
        compressed[at] ^= 0xff;
        let err = open_bytes(compressed, OpenOptions::default()).err().expect("nothing to detect");
        assert!(std::error::Error::source(&err).is_none(), "{what}: {err:?}");
        let message = err.to_string();
        let expected = format!("byte offset 0: read error: {what} stream is corrupt: ");
        assert!(message.starts_with(&expected), "{what}: {message}");
        let cause = &message[expected.len()..];
        assert!(!cause.contains(": "), "{what}: the cause is said once: {message}");
    }
}

/// A text trace without records, as swapsim writes it, is still text.
#[test]
fn an_empty_end_marked_text_trace_is_text() {
    check(
        b"# swapsim end=marked\n# end lines=2\n",
        OpenOptions::default(),
        expect![[r#"
            format text
            end
        "#]],
    );
}
