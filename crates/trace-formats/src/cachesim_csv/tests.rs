use super::*;
use crate::detect::open;
use crate::testutil::render;
use crate::{ObjectMap, TraceParams};
use expect_test::{expect, Expect};
use proptest::prelude::*;
use std::io::Cursor;

fn options(params: &str) -> OpenOptions {
    OpenOptions {
        format: Some(Format::LibCacheSimCsv),
        object_map: ObjectMap::Dense,
        params: TraceParams::parse(params).expect("valid parameters"),
        ..OpenOptions::default()
    }
}

/// Opens `input` as libcachesim-csv with `params` and the dense mapping, and renders what
/// it reads.
fn check(input: &str, params: &str, expect: Expect) {
    check_with(input, options(params), expect);
}

fn check_with(input: &str, options: OpenOptions, expect: Expect) {
    let shown = match open(Box::new(Cursor::new(input.as_bytes().to_vec())), options) {
        Ok(source) => render(source),
        Err(err) => format!("open error: {err}\n"),
    };
    expect.assert_eq(&shown);
}

#[test]
fn columns_header_and_delimiter_are_detected_as_libcachesim_does() {
    // Commas outnumber the rest; the first line has more letters than digits: a header.
    check(
        "time,id,size\n100,42,4096\n100.9,7,512\n101,42,4096\n",
        "time-col=1,obj-id-col=2,obj-size-col=3",
        expect![[r#"
            pid 0 tid 0 t 100.000000000 page 0x0 R
            pid 0 tid 0 t 100.000000000 page 0x1 R
            pid 0 tid 0 t 101.000000000 page 0x0 R
            end
        "#]],
    );
    // Tabs weigh 4 against the comma's 3: one tab beats one comma. No header: more digits
    // than letters.
    check(
        "5\t1,2\n6\t3,4\n",
        "obj-id-col=2",
        expect![[r#"
            error: line 1, column 4: obj-id-col=2: expected an object id (decimal, 0x hexadecimal or 0-prefixed octal), found "1,2"
        "#]],
    );
    // Two colons weigh 2, as does one |: a tie goes to the earlier in the list, |.
    check(
        "1:2|34\n9:9|88\n",
        "obj-id-col=2",
        expect![[r#"
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x1 R
            end
        "#]],
    );
    // No candidate in the first line: each line is one field.
    check(
        "17\n18\n17\n",
        "obj-id-col=1",
        expect![[r#"
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x1 R
            pid 0 tid 0 t - page 0x0 R
            end
        "#]],
    );
}

#[test]
fn given_parameters_override_detection() {
    // A data first line that detection would call a header (ids are letters).
    check(
        "a;x\nb;y\na;z\n",
        "obj-id-col=1,delimiter=;,has-header=false,obj-id-is-num=false",
        expect![[r#"
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x1 R
            pid 0 tid 0 t - page 0x0 R
            end
        "#]],
    );
    // A header that detection would call data.
    check(
        "1,2\n3,4\n5,4\n",
        "obj-id-col=2,has-header=yes,delimiter=,",
        expect![[r#"
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x0 R
            end
        "#]],
    );
    check(
        "1 2\n3 4\n",
        "obj-id-col=2,delimiter= ",
        expect![[r#"
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x1 R
            end
        "#]],
    );
}

#[test]
fn fields_may_be_quoted_and_are_trimmed() {
    check(
        "\"id\",\"name\"\n 1 , \"a,b\" \n2,\"say \"\"hi\"\"\"\n3,\"a,b\"\n4,say \"hi\"\n",
        "obj-id-col=2,obj-id-is-num=false",
        expect![[r#"
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x1 R
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x1 R
            end
        "#]],
    );
    check(
        "1,\"42\"\n2, 0x2a \n",
        "obj-id-col=2,has-header=0",
        expect![[r#"
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x0 R
            end
        "#]],
    );
}

#[test]
fn times_truncate_to_whole_seconds_and_may_go_back() {
    check(
        "t,id\n12.99,1\n1.2e1,2\n11,3\n0.5,1\n",
        "time-col=1,obj-id-col=2",
        expect![[r#"
            pid 0 tid 0 t 12.000000000 page 0x0 R
            pid 0 tid 0 t 12.000000000 page 0x1 R
            pid 0 tid 0 t 11.000000000 page 0x2 R
            pid 0 tid 0 t 0.000000000 page 0x0 R
            end
        "#]],
    );
}

#[test]
fn bad_lines_name_the_line_column_and_key() {
    let params = "time-col=1,obj-id-col=2,obj-size-col=3,has-header=false";
    check(
        "1,2,3\n1,2\n",
        params,
        expect![[r#"
            pid 0 tid 0 t 1.000000000 page 0x0 R
            error: line 2, column 4: obj-size-col=3: the line has 2 fields separated by ',', expected at least 3
        "#]],
    );
    check(
        "1,x,3\n",
        params,
        expect![[r#"
            error: line 1, column 3: obj-id-col=2: expected an object id (decimal, 0x hexadecimal or 0-prefixed octal), found "x"
        "#]],
    );
    check(
        "-1,2,3\n",
        params,
        expect![[r#"
            error: line 1, column 1: time-col=1: expected a time in seconds (such as 12, 12.75 or 1.2e3), found "-1"
        "#]],
    );
    check(
        "4294967296,2,3\n",
        params,
        expect![[r#"
            error: line 1, column 1: time-col=1: time "4294967296" is beyond the largest, 2^32 - 1 seconds (libCacheSim keeps 32-bit seconds)
        "#]],
    );
    check(
        "1e400,2,3\n",
        params,
        expect![[r#"
            error: line 1, column 1: time-col=1: time "1e400" is beyond the largest, 2^32 - 1 seconds (libCacheSim keeps 32-bit seconds)
        "#]],
    );
    check(
        "1,2,3.5\n",
        params,
        expect![[r#"
            error: line 1, column 6: obj-size-col=3: expected an object size (a whole number of bytes), found "3.5"
        "#]],
    );
    check(
        "1,\"2,3\n",
        params,
        expect![[r#"
            error: line 1, column 3: a quoted field has no closing quote (a field cannot span lines)
        "#]],
    );
    check(
        "1,\"2\"x,3\n",
        params,
        expect![[r#"
            error: line 1, column 6: expected the delimiter or the end of the line after a quoted field, found "x,3"
        "#]],
    );
    check(
        "12\n13 14\n",
        "obj-id-col=2",
        expect![[r#"
            error: line 1, column 3: obj-id-col=2: the line has 1 field (the first line holds no tab, comma, | or :, so no delimiter was detected; give delimiter=), expected at least 2
        "#]],
    );
    check_with(
        "1,2,3\n1,2\nx,2,3\n5,6,7\n",
        OpenOptions { lenient: true, ..options(params) },
        expect![[r#"
            pid 0 tid 0 t 1.000000000 page 0x0 R
            pid 0 tid 0 t 5.000000000 page 0x1 R
            end
            skipped malformed line 2
        "#]],
    );
}

#[test]
fn the_format_is_never_detected_and_needs_obj_id_col() {
    let err = open(Box::new(Cursor::new(b"1,2\n3,4\n".to_vec())), OpenOptions::default()).err();
    assert!(matches!(err, Some(FormatError::Unknown(_))), "{err:?}");
    check(
        "1,2\n",
        "time-col=1",
        expect![[r#"
            open error: trace parameters: libcachesim-csv needs obj-id-col, the 1-based column of object ids (e.g. obj-id-col=2)
        "#]],
    );
}

/// One request as a csv line: time, a padded id in one of C's bases or as a string,
/// size, with `delimiter`, optionally quoted.
fn line_of(time_s: u32, id: u64, base: u8, delimiter: char, quoted: bool) -> String {
    let id = match base {
        0 => format!("{id}"),
        1 => format!("{id:#x}"),
        _ => format!("0{id:o}"),
    };
    let id = if quoted { format!("\"{id}\"") } else { id };
    format!("{time_s}.5{delimiter} {id}{delimiter}4096\n")
}

proptest! {
    /// Requests written in any delimiter, base and quoting, with a header, read back.
    #[test]
    fn written_requests_read_back(
        requests in proptest::collection::vec((0..1000u32, 0..1_000_000u64, 0..3u8, any::<bool>()), 1..100),
        delimiter in proptest::sample::select(vec!['\t', ',', '|', ':']),
        name_delimiter in any::<bool>(),
    ) {
        let mut text = format!("time{delimiter}id{delimiter}size\n");
        for &(time_s, id, base, quoted) in &requests {
            text += &line_of(time_s, id, base, delimiter, quoted);
        }
        let mut params = "time-col=1,obj-id-col=2,obj-size-col=3".to_string();
        if name_delimiter {
            params += &format!(",delimiter={}", if delimiter == '\t' { "\\t".to_string() } else { delimiter.to_string() });
        }
        let options = OpenOptions { object_map: ObjectMap::Modulo { region_pages: 1 << 20 }, ..options(&params) };
        let mut source = open(Box::new(Cursor::new(text.into_bytes())), options)
            .map_err(|err| TestCaseError::fail(err.to_string()))?;
        let mut read = Vec::new();
        while let Some(record) = source.next_record().map_err(|err| TestCaseError::fail(err.to_string()))? {
            read.push((record.time_ns.map(|ns| ns / 1_000_000_000), record.page));
        }
        let expected: Vec<(Option<u64>, u64)> =
            requests.iter().map(|&(time_s, id, _, _)| (Some(u64::from(time_s)), id)).collect();
        prop_assert_eq!(read, expected);
    }

    /// Any bytes, under any parameters, read as records or fail naming a line that exists
    /// and a column.
    #[test]
    fn arbitrary_bytes_parse_or_fail_cleanly(
        bytes in proptest::collection::vec(
            prop_oneof![proptest::sample::select(b"0123456789.eExabc,\t|: \"\r\n-".to_vec()), any::<u8>()],
            0..400,
        ),
        params in proptest::sample::select(vec![
            "obj-id-col=1", "obj-id-col=2,time-col=1,obj-size-col=3", "obj-id-col=3,obj-id-is-num=false",
            "obj-id-col=1,delimiter=\\t,has-header=false", "obj-id-col=2,delimiter=\",has-header=true",
            "obj-id-col=1,time-col=1,obj-size-col=1",
        ]),
        lenient in any::<bool>(),
        dense in any::<bool>(),
    ) {
        let Ok(params) = TraceParams::parse(params) else { return Ok(()) };
        let object_map = if dense { ObjectMap::Dense } else { ObjectMap::default() };
        let options = OpenOptions { lenient, object_map, params, ..options("") };
        crate::testutil::read_object_requests(bytes, options)?;
    }
}
