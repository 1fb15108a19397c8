//! Tests of the native format: layout, round trips, every error the decoder reports,
//! truncation and corruption; the summary frame's in `summary_frame.rs`, the varint
//! codec's next to it.

mod summary_frame;

use super::reader::{CHUNK_BYTES, TRUNCATED};
use super::*;
use crate::error::FormatError;
use crate::record::{Record, RecordSource};
use expect_test::{expect, Expect};
use proptest::prelude::*;
use std::io::{self, Read};

/// Decoding stops after this many records, so a decoder bug cannot hang a test.
const RECORDS_MAX: usize = 10_000_000;

fn encode(records: &[Record]) -> Vec<u8> {
    let mut writer = NativeWriter::new(Vec::new()).expect("writing to a Vec cannot fail");
    for r in records {
        writer.write(r).expect("test records are valid");
    }
    writer.finish().expect("writing to a Vec cannot fail")
}

/// Decodes `file` record by record, and checks that batches of several sizes decode the
/// same records and end with the same error.
fn decode(file: &[u8]) -> Result<Vec<Record>, FormatError> {
    let mut reader = NativeReader::new(Box::new(io::Cursor::new(file.to_vec())))?;
    let mut records = Vec::new();
    let res = loop {
        match reader.next_record() {
            Ok(Some(r)) => records.push(r),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
        assert!(records.len() <= RECORDS_MAX, "decoder does not stop");
    };
    let expected = (records.clone(), res.as_ref().map_err(|e| e.to_string()).err());
    for n_max in [1, 7, 1000] {
        assert_eq!(decode_batched(file, n_max), expected, "batches of {n_max}");
    }
    res?;
    // A finished reader stays finished.
    assert_eq!(reader.next_record().map_err(|e| e.to_string()).map(|r| r.is_none()), Ok(true));
    Ok(records)
}

/// Decodes `file` in batches of `n_max` records: the records, and the error after them.
fn decode_batched(file: &[u8], n_max: usize) -> (Vec<Record>, Option<String>) {
    let mut reader = match NativeReader::new(Box::new(io::Cursor::new(file.to_vec()))) {
        Ok(reader) => reader,
        Err(e) => return (Vec::new(), Some(e.to_string())),
    };
    let mut records = Vec::new();
    loop {
        let n_before = records.len();
        if let Err(e) = reader.next_records(&mut records, n_max) {
            return (records, Some(e.to_string()));
        }
        assert!(records.len() <= n_before + n_max, "a batch holds at most n_max records");
        if records.len() < n_before + n_max {
            return (records, None);
        }
        assert!(records.len() <= RECORDS_MAX, "decoder does not stop");
    }
}

/// A file whose body is `body`, however malformed.
fn file_from_body(body: &[u8]) -> Vec<u8> {
    let mut file = b"SWAPSIMT\x01\x00\x00\x00".to_vec();
    file.extend(zstd::encode_all(body, 1).expect("compressing a slice cannot fail"));
    file
}

fn body_of(file: &[u8]) -> Vec<u8> {
    assert_eq!(&file[..12], b"SWAPSIMT\x01\x00\x00\x00");
    zstd::decode_all(&file[12..]).expect("test files are valid zstd")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
}

fn unhex(text: &str) -> Vec<u8> {
    text.split_whitespace().map(|b| u8::from_str_radix(b, 16).expect("test hex is valid")).collect()
}

fn render(res: Result<Vec<Record>, FormatError>) -> String {
    match res {
        Ok(records) => records
            .iter()
            .map(|r| {
                let time = r.time_ns.map_or("-".to_string(), |t| t.to_string());
                let op = if r.write { 'W' } else { 'R' };
                format!("{}/{} {time} {op} {:#x}\n", r.pid, r.tid, r.page)
            })
            .collect(),
        Err(e) => format!("error: {e}\n"),
    }
}

/// Decodes a body given in hex and compares the records or the error with `expect`.
fn check(body_hex: &str, expect: Expect) {
    expect.assert_eq(&render(decode(&file_from_body(&unhex(body_hex)))));
}

fn rec(pid: u32, tid: u32, time_ns: Option<u64>, page: u64, write: bool) -> Record {
    Record { pid, tid, time_ns, page, write }
}

#[test]
fn layout_of_a_tiny_trace() {
    let records = [
        rec(7, 7, Some(100), 0x1000, false),
        rec(7, 7, Some(150), 0x1001, false),
        rec(7, 8, None, 0x7fff_ffff_f000, true),
        rec(7, 7, Some(150), 0x1000, true),
        rec(300, 70000, Some(1 << 40), 0, false),
    ];
    let file = encode(&records);
    expect!["3f 07 07 7e 00 80 40 64 42 32 3f 07 08 be 01 80 c0 ff ff ff ff 3f e1 00 00 3f ac 02 f0 a2 04 60 02 ea fe ff ff ff 1f 1f 05"]
    .assert_eq(&hex(&body_of(&file)));
    assert_eq!(decode(&file).expect("the trace is valid"), records);
}

#[test]
fn module_doc_example() {
    check(
        "3f 07 07 7e 00 80 40 64 42 32 1f 02",
        expect![[r#"
            7/7 100 R 0x1000
            7/7 150 R 0x1001
        "#]],
    );
}

#[test]
fn empty_trace() {
    let file = encode(&[]);
    assert_eq!(hex(&body_of(&file)), "1f 00");
    assert_eq!(decode(&file).expect("the trace is valid"), []);
}

#[test]
fn inline_deltas_and_varint_deltas() {
    // Codes 28 and 29 are +14 and -15, the ends of the inline range; code 30 takes a
    // varint (here zigzag 60 = +30, then zigzag 30 = +15).
    check(
        "3f 01 02 3e 00 3c 1d 1c 1e 1e 1f 04",
        expect![[r#"
            1/2 - R 0x1e
            1/2 - R 0xf
            1/2 - R 0x1d
            1/2 - R 0x2c
        "#]],
    );
    check(
        "3f 01 02 3c 00 1d 1f 02",
        expect![[r#"
        error: byte offset 17: page delta -15 from page 0xe leaves the range 0..2^63
    "#]],
    );
}

#[test]
fn body_errors() {
    check("", expect!["error: byte offset 12: stream ends before its end marker (truncated file?)\n"]);
    check(
        "3f 01 02 20",
        expect!["error: byte offset 16: stream ends before its end marker (truncated file?)\n"],
    );
    check(
        "3f 01 02 20 00",
        expect!["error: byte offset 17: stream ends before its end marker (truncated file?)\n"],
    );
    check("00 1f 01", expect!["error: byte offset 12: record before any record selects a task\n"]);
    check(
        "3f 01 02 20 01 1f 01",
        expect!["error: byte offset 16: task index 1 is out of range (1 tasks declared)\n"],
    );
    check(
        "3f 01 02 20 80 80 80 80 80 80 80 80 80 80 00 1f 01",
        expect!["error: byte offset 16: task index: varint longer than 10 bytes\n"],
    );
    check(
        "3f 01 02 20 00 1e 80 80 80 80 80 80 80 80 80 02 1f 02",
        expect![[r#"
        error: byte offset 18: page delta: varint does not fit 64 bits (10th byte 0x02, expected 0 or 1)
    "#]],
    );
    check(
        "3f 01 02 22 00 1e fe ff ff ff ff ff ff ff ff 01 1f 02",
        expect![[r#"
        error: byte offset 17: page delta 9223372036854775807 from page 0x1 leaves the range 0..2^63
    "#]],
    );
    check(
        "3f 01 02 21 00 1f 01",
        expect![[r#"
        error: byte offset 15: page delta -1 from page 0x0 leaves the range 0..2^63
    "#]],
    );
    check(
        "3f 01 02 60 00 ff ff ff ff ff ff ff ff ff 01 40 01 1f 02",
        expect![[r#"
        error: byte offset 28: time delta 1 ns from 18446744073709551615 ns overflows 64 bits
    "#]],
    );
    check(
        "3f 01 02 60 00 ff ff ff ff ff ff ff ff ff 01 1f 01",
        expect![[r#"
        1/2 18446744073709551615 R 0x0
    "#]],
    );
    check(
        "3f 80 80 80 80 10 00 1f 00",
        expect!["error: byte offset 13: task declaration pid 4294967296 does not fit 32 bits\n"],
    );
    check("5f", expect!["error: byte offset 12: unknown item tag 0x5f\n"]);
    check(
        "3f 01 02 20 00 1f 02",
        expect!["error: byte offset 18: end marker counts 2 records but the stream holds 1\n"],
    );
    check("1f 00 00", expect!["error: byte offset 14: unexpected bytes after the end marker\n"]);
    check("1f 80", expect!["error: byte offset 14: stream ends before its end marker (truncated file?)\n"]);
}

#[test]
fn header_errors() {
    let check_file = |file: &[u8], expect: Expect| expect.assert_eq(&render(decode(file)));
    check_file(b"", expect!["error: byte offset 0: stream ends before its end marker (truncated file?)\n"]);
    check_file(
        b"SWAP",
        expect!["error: byte offset 4: stream ends before its end marker (truncated file?)\n"],
    );
    check_file(
        b"R W 0x1000\n",
        expect![[r#"
            error: byte offset 0: not a swapsim native trace (magic b"R W 0x10", expected b"SWAPSIMT")
        "#]],
    );
    check_file(
        b"\x28\xb5\x2f\xfd",
        expect![[r#"
            error: byte offset 0: not a swapsim native trace (magic b"(\xb5/\xfd", expected b"SWAPSIMT")
        "#]],
    );
    check_file(
        b"SWAPSIMT\x02\x00\x00\x00",
        expect!["error: byte offset 8: unsupported native trace version 2 (this reader knows version 1)\n"],
    );
    check_file(
        b"SWAPSIMT\x01\x00\x04\x00",
        expect!["error: byte offset 10: unknown flags 0x0004 (version 1 defines none)\n"],
    );
    let mut file = encode(&[rec(1, 1, None, 5, false)]);
    file.extend_from_slice(b"junk");
    check_file(
        &file,
        expect![[r#"
        error: byte offset 19: corrupt zstd data (Unknown frame descriptor)
    "#]],
    );
}

#[test]
fn source_errors_are_io_errors() {
    struct Failing(io::Cursor<Vec<u8>>);
    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(io::Error::other("disk on fire")),
                n => Ok(n),
            }
        }
    }
    let file = encode(&[rec(1, 1, None, 5, false)]);
    let truncated = file[..file.len() - 3].to_vec();
    let mut reader =
        NativeReader::new(Box::new(Failing(io::Cursor::new(truncated)))).expect("the header is intact");
    let err = reader.next_record().expect_err("the source fails");
    assert!(matches!(err, FormatError::Io(_)), "{err:?}");
    assert_eq!(err.to_string(), "read error: disk on fire");
    // The reader is spent and says so again.
    let again = reader.next_record().expect_err("the reader is spent");
    assert_eq!(again.to_string(), "byte offset 19: read error: disk on fire (earlier)");
}

#[test]
fn writer_refuses_bad_records_and_goes_on() {
    let mut writer = NativeWriter::new(Vec::new()).expect("writing to a Vec cannot fail");
    writer.write(&rec(1, 1, Some(10), 3, false)).expect("valid record");
    let err = writer.write(&rec(1, 1, Some(9), 4, false)).expect_err("time goes back");
    expect!["byte offset 18: record 2: time 9 ns is before the previous record's 10 ns (native traces need times that never decrease)"]
        .assert_eq(&err.to_string());
    let err = writer.write(&rec(2, 2, None, 1 << 63, false)).expect_err("page too large");
    expect!["byte offset 18: record 2: page 0x8000000000000000 is not below 2^63, the native format's limit"]
        .assert_eq(&err.to_string());
    writer.write(&rec(2, 2, Some(10), (1 << 63) - 1, true)).expect("valid record");
    let file = writer.finish().expect("writing to a Vec cannot fail");
    assert_eq!(
        decode(&file).expect("the trace is valid"),
        [rec(1, 1, Some(10), 3, false), rec(2, 2, Some(10), (1 << 63) - 1, true)]
    );
}

/// The length of `file`'s summary frame, from its last four bytes.
fn frame_len(file: &[u8]) -> usize {
    u32::from_le_bytes(file[file.len() - 4..].try_into().expect("four bytes")) as usize
}

/// A deterministic generator for test inputs (SplitMix64).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn mixed_records(n_records: usize, seed: u64) -> Vec<Record> {
    let mut rng = SplitMix64(seed);
    let mut time_ns = 0u64;
    let mut pages = [0u64; 5];
    (0..n_records)
        .map(|_| {
            let bits = rng.next();
            let task = (bits % 5) as usize;
            pages[task] = match (bits >> 8) % 4 {
                0 => rng.next() >> 11,
                1 => pages[task].saturating_sub(bits >> 60),
                _ => pages[task] + 1,
            };
            time_ns += (bits >> 12) % 5000;
            let time = if (bits >> 40) & 7 == 0 { None } else { Some(time_ns) };
            rec(task as u32 * 10, task as u32 * 10 + 1, time, pages[task], bits >> 63 == 1)
        })
        .collect()
}

#[test]
fn round_trip_across_many_buffer_refills() {
    let records = mixed_records(200_000, 1);
    let file = encode(&records);
    assert!(body_of(&file).len() > 4 * CHUNK_BYTES, "the body spans several chunks");
    assert_eq!(decode(&file).expect("the trace is valid"), records);
}

#[test]
fn every_truncation_is_an_error() {
    let records = mixed_records(40, 2);
    let file = encode(&records);
    let body_end = file.len() - frame_len(&file);
    for len in 0..body_end {
        assert!(decode(&file[..len]).is_err(), "file cut to {len} of {} bytes decodes", file.len());
    }
    // A file cut inside its summary frame keeps its whole body: it reads whole, as a
    // file without the frame (which `stored_summary` then does not find), or zstd
    // reports the cut frame; never a part of the records.
    for len in body_end..file.len() {
        if let Ok(decoded) = decode(&file[..len]) {
            assert_eq!(decoded, records, "cut to {len}");
        }
    }
    // Also cut the decompressed body, which zstd cannot notice.
    let body = body_of(&file);
    for len in 0..body.len() {
        let err = decode(&file_from_body(&body[..len])).expect_err("a cut body decodes");
        assert!(err.to_string().ends_with(TRUNCATED), "body cut to {len}: {err}");
    }
}

#[test]
fn corrupting_any_byte_errors_or_changes_nothing() {
    let records = mixed_records(30, 3);
    let file = encode(&records);
    let mut n_errors = 0;
    for idx in 0..file.len() {
        for value in [0x00, 0x01, 0x1f, 0x3f, 0x7f, 0x80, 0xfe, 0xff, file[idx] ^ 0x10] {
            let mut corrupt = file.clone();
            if corrupt[idx] == value {
                continue;
            }
            corrupt[idx] = value;
            match decode(&corrupt) {
                Ok(decoded) => assert_eq!(decoded, records, "byte {idx} set to {value:#04x}"),
                Err(_) => n_errors += 1,
            }
        }
    }
    assert!(n_errors > 0);
    // Corrupt bodies get past zstd's checksum, so they test the decoder itself. Any
    // outcome but a panic or a hang is fine.
    let body = body_of(&file);
    for idx in 0..body.len() {
        for value in 0..=255u8 {
            let mut corrupt = body.clone();
            corrupt[idx] = value;
            let _ = decode(&file_from_body(&corrupt));
        }
    }
}

fn page_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1u64 << 52),
        Just((1u64 << 63) - 1),
        0u64..64,
        (1u64 << 52) - 64..(1u64 << 52) + 64,
        0u64..1 << 63,
    ]
}

fn records_strategy() -> impl Strategy<Value = Vec<Record>> {
    let step = (
        prop_oneof![0u32..3, any::<u32>()],
        prop_oneof![0u32..3, any::<u32>()],
        prop_oneof![Just(None), (0u64..10_000).prop_map(Some), any::<u64>().prop_map(Some)],
        page_strategy(),
        any::<bool>(),
    );
    (any::<u64>(), prop::collection::vec(step, 0..200)).prop_map(|(time_start_ns, steps)| {
        let mut time_ns = time_start_ns;
        steps
            .into_iter()
            .map(|(pid, tid, time_delta_ns, page, write)| {
                let time = time_delta_ns.map(|delta| {
                    time_ns = time_ns.saturating_add(delta);
                    time_ns
                });
                rec(pid, tid, time, page, write)
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn round_trip(records in records_strategy()) {
        let file = encode(&records);
        prop_assert_eq!(decode(&file).map_err(|e| e.to_string()), Ok(records));
    }

    #[test]
    fn arbitrary_bodies_never_panic(body in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode(&file_from_body(&body));
    }
}
