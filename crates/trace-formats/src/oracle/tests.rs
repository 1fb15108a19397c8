use super::*;
use crate::detect::open;
use crate::testutil::render;
use expect_test::{expect, Expect};
use proptest::prelude::*;
use std::io::Cursor;

/// One oracleGeneral record.
fn record(clock_time: u32, obj_id: u64, obj_size: u32, vtime: i64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(RECORD_BYTES);
    bytes.extend_from_slice(&clock_time.to_le_bytes());
    bytes.extend_from_slice(&obj_id.to_le_bytes());
    bytes.extend_from_slice(&obj_size.to_le_bytes());
    bytes.extend_from_slice(&vtime.to_le_bytes());
    bytes
}

/// A small trace: objects 7, 1 << 40, 7, 9 at seconds 10, 10, 11, 12.
fn sample() -> Vec<u8> {
    [
        record(10, 7, 4096, 2),
        record(10, 1 << 40, 512, -1),
        record(11, 7, 4096, i64::MAX),
        record(12, 9, 100, -1),
    ]
    .concat()
}

/// An lcs header of `version`.
fn lcs_header(version: u64) -> Vec<u8> {
    let mut header = vec![0u8; LCS_HEADER_BYTES];
    header[..8].copy_from_slice(&LCS_MAGIC.to_le_bytes());
    header[8..16].copy_from_slice(&version.to_le_bytes());
    header[LCS_HEADER_BYTES - 8..].copy_from_slice(&LCS_MAGIC.to_le_bytes());
    header
}

/// Opens `input` with `options`, compressed by zstd and plain (both must read the same),
/// and renders the records with their next accesses.
fn check(input: &[u8], options: OpenOptions, expect: Expect) {
    let read = |bytes: Vec<u8>| match open(Box::new(Cursor::new(bytes)), options) {
        Ok(mut source) => {
            let mut out = format!("format {}\n", source.format().name());
            loop {
                match source.next_record() {
                    Ok(Some(record)) => {
                        let time_s = record.time_ns.expect("timed") / 1_000_000_000;
                        out +=
                            &format!("t {time_s} page {:#x} next {:?}\n", record.page, source.next_access());
                    }
                    Ok(None) => {
                        out += "end\n";
                        break;
                    }
                    Err(err) => {
                        out += &format!("error: {err}\n");
                        let again = source.next_record().expect_err("stays stopped");
                        assert!(matches!(again, FormatError::Offset { .. }), "{again}");
                        break;
                    }
                }
            }
            out
        }
        Err(err) => format!("open error: {err}\n"),
    };
    let plain = read(input.to_vec());
    let compressed = zstd::stream::encode_all(input, 1).expect("compressing in memory");
    assert_eq!(read(compressed), plain, "zstd");
    expect.assert_eq(&plain);
}

#[test]
fn detects_and_reads_oracle_general_with_the_modulo_mapping() {
    check(
        &sample(),
        OpenOptions::default(),
        expect![[r#"
            format oracle-general
            t 10 page 0x7 next Some(At(2))
            t 10 page 0x0 next Some(Never)
            t 11 page 0x7 next Some(Never)
            t 12 page 0x9 next Some(Never)
            end
        "#]],
    );
    check(
        &sample(),
        OpenOptions { object_map: ObjectMap::Modulo { region_pages: 8 }, ..OpenOptions::default() },
        expect![[r#"
            format oracle-general
            t 10 page 0x7 next Some(At(2))
            t 10 page 0x0 next Some(Never)
            t 11 page 0x7 next Some(Never)
            t 12 page 0x1 next Some(Never)
            end
        "#]],
    );
}

#[test]
fn the_dense_mapping_numbers_objects_by_first_request() {
    check(
        &sample(),
        OpenOptions { object_map: ObjectMap::Dense, ..OpenOptions::default() },
        expect![[r#"
            format oracle-general
            t 10 page 0x0 next Some(At(2))
            t 10 page 0x1 next Some(Never)
            t 11 page 0x0 next Some(Never)
            t 12 page 0x2 next Some(Never)
            end
        "#]],
    );
}

#[test]
fn errors_name_the_byte_offset_and_field() {
    let mut truncated = sample();
    truncated.truncate(RECORD_BYTES * 3 + 10);
    let forced = OpenOptions { format: Some(Format::OracleGeneral), ..OpenOptions::default() };
    check(
        &truncated,
        forced,
        expect![[r#"
            format oracle-general
            t 10 page 0x7 next Some(At(2))
            t 10 page 0x0 next Some(Never)
            t 11 page 0x7 next Some(Never)
            error: byte offset 72: last record is truncated: 10 of 24 bytes (request 3)
        "#]],
    );
    let backwards = [record(1, 7, 4096, 1), record(1, 7, 4096, 1)].concat();
    check(
        &backwards,
        forced,
        expect![[r#"
            format oracle-general
            t 1 page 0x7 next Some(At(1))
            error: byte offset 40: next_access_vtime 1 of request 1 does not point forward (expected -1 or an index above 1)
        "#]],
    );
    let negative = record(1, 7, 4096, -5);
    check(
        &negative,
        forced,
        expect![[r#"
            format oracle-general
            error: byte offset 16: next_access_vtime -5 of request 0 does not point forward (expected -1 or an index above 0)
        "#]],
    );
}

#[test]
fn detection_wants_plausible_whole_records() {
    // A length that is not a multiple of 24.
    let mut odd = sample();
    odd.pop();
    check(
        &odd,
        OpenOptions::default(),
        expect![[r#"
            open error: unrecognised trace format: binary data that is not libCacheSim oracleGeneral: its length, 95 bytes, is not a multiple of 24
        "#]],
    );
    // A zero size, and a next access beyond the end of a whole trace.
    check(
        &record(1, 7, 0, -1),
        OpenOptions::default(),
        expect![[r#"
            open error: unrecognised trace format: binary data that is not libCacheSim oracleGeneral: record 0 (byte offset 0) has obj_size 0
        "#]],
    );
    check(
        &[record(1, 7, 4096, -1), record(1, 7, 4096, 2)].concat(),
        OpenOptions::default(),
        expect![[r#"
            open error: unrecognised trace format: binary data that is not libCacheSim oracleGeneral: record 1 (byte offset 24) has next_access_vtime 2, not -1 or an index in 2..2
        "#]],
    );
    let guess = |prefix: &[u8], at_end| guess_oracle_general(prefix, at_end, 1 << 16);
    assert_eq!(guess(&sample()[..30], false), Guess::NeedMore);
    assert_eq!(guess(&sample(), true), Guess::Yes);
    assert!(matches!(guess(b"R 1\nR 2\nW 3\nR 1\nR 2\nW 3\n", true), Guess::No(_)));
    assert!(matches!(guess(&[], true), Guess::No(_)));
}

#[test]
fn reads_lcs_versions() {
    let v1 = [lcs_header(1), sample()].concat();
    check(
        &v1,
        OpenOptions::default(),
        expect![[r#"
            format lcs
            t 10 page 0x7 next Some(At(2))
            t 10 page 0x0 next Some(Never)
            t 11 page 0x7 next Some(Never)
            t 12 page 0x9 next Some(Never)
            end
        "#]],
    );
    // Version 2: operation and tenant before next_access_vtime.
    let mut v2 = lcs_header(2);
    for (clock_time, obj_id, vtime) in [(5u32, 3u64, 1i64), (6, 3, -1)] {
        v2.extend_from_slice(&clock_time.to_le_bytes());
        v2.extend_from_slice(&obj_id.to_le_bytes());
        v2.extend_from_slice(&4096u32.to_le_bytes());
        v2.extend_from_slice(&(2u32 | 5 << 8).to_le_bytes());
        v2.extend_from_slice(&vtime.to_le_bytes());
    }
    check(
        &v2,
        OpenOptions::default(),
        expect![[r#"
            format lcs
            t 5 page 0x3 next Some(At(1))
            t 6 page 0x3 next Some(Never)
            end
        "#]],
    );
    // Version 5: version 3's 36 bytes and two features.
    let mut v5 = lcs_header(5);
    v5.extend_from_slice(&8u32.to_le_bytes());
    v5.extend_from_slice(&11u64.to_le_bytes());
    v5.extend_from_slice(&4096i64.to_le_bytes());
    v5.extend_from_slice(&[0; 8]);
    v5.extend_from_slice(&(-1i64).to_le_bytes());
    v5.extend_from_slice(&[0xee; 8]);
    v5.extend_from_slice(&[0; 7]);
    check(
        &v5,
        OpenOptions::default(),
        expect![[r#"
            format lcs
            t 8 page 0xb next Some(Never)
            error: byte offset 8236: last record is truncated: 7 of 44 bytes (request 1)
        "#]],
    );
}

#[test]
fn bad_lcs_headers_are_offset_errors() {
    let mut bad_version = lcs_header(9);
    bad_version.extend_from_slice(&sample());
    check(
        &bad_version,
        OpenOptions::default(),
        expect![[r#"
            open error: byte offset 8: unsupported lcs version 9 (this reader knows 1 to 8)
        "#]],
    );
    let mut bad_end = lcs_header(1);
    bad_end[LCS_HEADER_BYTES - 1] = 0;
    check(
        &bad_end,
        OpenOptions::default(),
        expect![[r#"
            open error: byte offset 8184: lcs header end magic 0x3456789abcdef0, expected 0x123456789abcdef0
        "#]],
    );
    check(
        &lcs_header(1)[..100],
        OpenOptions::default(),
        expect![[r#"
            open error: byte offset 100: lcs header is truncated (100 of 8192 bytes)
        "#]],
    );
}

#[test]
fn the_writer_computes_next_accesses_backwards() {
    let pages = [3u64, 5, 3, 3, 8, 5];
    let mut writer = OracleGeneralWriter::new(Vec::new());
    for (idx, &page) in pages.iter().enumerate() {
        let record = Record { pid: 0, tid: 0, time_ns: Some(idx as u64 * 700_000_000), page, write: true };
        writer.write(&record).expect("the time fits");
    }
    let bytes = writer.finish().expect("writing to memory");
    check(
        &bytes,
        OpenOptions::default(),
        expect![[r#"
            format oracle-general
            t 0 page 0x3 next Some(At(2))
            t 0 page 0x5 next Some(At(5))
            t 1 page 0x3 next Some(At(3))
            t 2 page 0x3 next Some(Never)
            t 2 page 0x8 next Some(Never)
            t 3 page 0x5 next Some(Never)
            end
        "#]],
    );
    let late = Record { pid: 0, tid: 0, time_ns: Some(1 << 63), page: 0, write: false };
    let err = OracleGeneralWriter::new(Vec::new()).write(&late).expect_err("too late");
    expect!["record 1: time 9223372036 s does not fit oracleGeneral's u32 clock_time"]
        .assert_eq(&err.to_string());
}

#[test]
fn the_rendered_records_are_untimed_reads_of_task_zero() {
    let source = open(Box::new(Cursor::new(sample())), OpenOptions::default()).expect("oracleGeneral");
    expect![[r#"
        pid 0 tid 0 t 10.000000000 page 0x7 R
        pid 0 tid 0 t 10.000000000 page 0x0 R
        pid 0 tid 0 t 11.000000000 page 0x7 R
        pid 0 tid 0 t 12.000000000 page 0x9 R
        end
    "#]]
    .assert_eq(&render(source));
}

proptest! {
    /// Pages written are read back unchanged under both mappings when they lie below the
    /// region, and dense numbering keeps the order of first appearance.
    #[test]
    fn written_pages_read_back(pages in proptest::collection::vec(0..64u64, 1..200)) {
        let mut writer = OracleGeneralWriter::new(Vec::new());
        for &page in &pages {
            writer.write(&Record { pid: 0, tid: 0, time_ns: None, page, write: false }).expect("time 0");
        }
        let bytes = writer.finish().expect("writing to memory");
        let fail = |err: FormatError| TestCaseError::fail(err.to_string());
        let read = |object_map| -> Result<Vec<(u64, Option<NextAccess>)>, TestCaseError> {
            let options = OpenOptions { object_map, ..OpenOptions::default() };
            let mut source = open(Box::new(Cursor::new(bytes.clone())), options).map_err(fail)?;
            prop_assert_eq!(source.format(), Format::OracleGeneral);
            let mut out = Vec::new();
            while let Some(record) = source.next_record().map_err(fail)? {
                out.push((record.page, source.next_access()));
            }
            Ok(out)
        };
        let modulo = read(ObjectMap::Modulo { region_pages: 64 })?;
        prop_assert_eq!(modulo.iter().map(|&(page, _)| page).collect::<Vec<_>>(), pages.clone());
        for (idx, &(page, next)) in modulo.iter().enumerate() {
            let expected = pages[idx + 1..].iter().position(|&later| later == page);
            let expected = expected.map_or(NextAccess::Never, |n| NextAccess::At((idx + 1 + n) as u64));
            prop_assert_eq!(next, Some(expected));
        }
        let dense = read(ObjectMap::Dense)?;
        let mut first_seen = Vec::new();
        for &page in &pages {
            if !first_seen.contains(&page) {
                first_seen.push(page);
            }
        }
        let renumbered: Vec<u64> =
            pages.iter().map(|page| first_seen.iter().position(|seen| seen == page).expect("seen") as u64).collect();
        prop_assert_eq!(dense.iter().map(|&(page, _)| page).collect::<Vec<_>>(), renumbered);
    }
}
