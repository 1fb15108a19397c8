use super::*;
use crate::detect::open;
use crate::testutil::render;
use crate::{ObjectMap, TraceParams};
use expect_test::{expect, Expect};
use proptest::prelude::*;
use std::io::Cursor;

/// Opens `input` with `options` (the format detected unless named) and renders what it
/// reads, prefixed by the format.
fn check(input: &str, options: OpenOptions, expect: Expect) {
    let shown = match open(Box::new(Cursor::new(input.as_bytes().to_vec())), options) {
        Ok(source) => format!("format {}\n{}", source.format().name(), render(source)),
        Err(err) => format!("open error: {err}\n"),
    };
    expect.assert_eq(&shown);
}

fn named(params: &str, object_map: ObjectMap) -> OpenOptions {
    OpenOptions {
        format: Some(Format::LibCacheSimTxt),
        object_map,
        params: TraceParams::parse(params).expect("valid parameters"),
        ..OpenOptions::default()
    }
}

#[test]
fn numeric_ids_in_c_syntax_become_pages() {
    // 0x10 is 16 and 020 is octal 16; 1 << 40 wraps to page 0 modulo 1 GiB of pages.
    check(
        "5\n0x10\n\n020\n1099511627776\n 7\t\n",
        OpenOptions::default(),
        expect![[r#"
            open error: unrecognised trace format: first data line "5" is not perf script, ftrace, lackey or R|W text
        "#]],
    );
    check(
        "42\n7\n42\n9\n7\n",
        named("", ObjectMap::Dense),
        expect![[r#"
            format libcachesim-txt
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x1 R
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x2 R
            pid 0 tid 0 t - page 0x1 R
            end
        "#]],
    );
}

#[test]
fn string_ids_are_whole_lines() {
    check(
        "/a.jpg\n/b.jpg\n/a.jpg\n/a.jpg \n\n/b.jpg\n",
        named("obj-id-is-num=false", ObjectMap::Dense),
        expect![[r#"
            format libcachesim-txt
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x1 R
            pid 0 tid 0 t - page 0x0 R
            pid 0 tid 0 t - page 0x2 R
            pid 0 tid 0 t - page 0x1 R
            end
        "#]],
    );
    // Modulo: FNV-1a 64 of the bytes, modulo the region.
    let region_pages = 1000;
    let source = open(
        Box::new(Cursor::new(b"/a.jpg\n".to_vec())),
        named("obj-id-is-num=no", ObjectMap::Modulo { region_pages }),
    );
    let record = source.expect("opens").next_record().expect("reads").expect("a record");
    assert_eq!(record.page, crate::objects::fnv1a_64(b"/a.jpg") % region_pages);
}

#[test]
fn bad_lines_name_the_line_and_column() {
    let strict = named("", ObjectMap::default());
    check(
        "1\n2\n  12abc\n",
        strict,
        expect![[r#"
            format libcachesim-txt
            pid 0 tid 0 t - page 0x1 R
            pid 0 tid 0 t - page 0x2 R
            error: line 3, column 5: expected an object id (decimal, 0x hexadecimal or 0-prefixed octal), found "12abc"
        "#]],
    );
    check(
        "1\n08\n",
        strict,
        expect![[r#"
            format libcachesim-txt
            pid 0 tid 0 t - page 0x1 R
            error: line 2, column 2: "08" is not an octal number: 8 is not an octal digit (a leading 0 makes a number octal, as in C)
        "#]],
    );
    check(
        "1 2\n",
        strict,
        expect![[r#"
            format libcachesim-txt
            error: line 1, column 2: expected an object id (decimal, 0x hexadecimal or 0-prefixed octal), found "1 2"
        "#]],
    );
    check(
        "-1\n",
        strict,
        expect![[r#"
            format libcachesim-txt
            error: line 1, column 1: expected an object id (decimal, 0x hexadecimal or 0-prefixed octal), found "-1"
        "#]],
    );
    check(
        "  \n",
        strict,
        expect![[r#"
            format libcachesim-txt
            error: line 1, column 1: expected an object id (decimal, 0x hexadecimal or 0-prefixed octal), found a line of blanks
        "#]],
    );
    check(
        "18446744073709551616\n",
        strict,
        expect![[r#"
            format libcachesim-txt
            error: line 1, column 1: "18446744073709551616" is above the largest id, 2^64 - 1
        "#]],
    );
    check(
        "1\n# comment\n2\nx\n\u{e9}\n3\n",
        OpenOptions { lenient: true, ..strict },
        expect![[r#"
            format libcachesim-txt
            pid 0 tid 0 t - page 0x1 R
            pid 0 tid 0 t - page 0x2 R
            pid 0 tid 0 t - page 0x3 R
            end
            skipped malformed line 3
        "#]],
    );
}

#[test]
fn detection_takes_only_lines_of_bare_numbers() {
    let options = OpenOptions::default();
    check(
        "12\n0x1f\n\n3\r\n",
        options,
        expect![[r#"
            format libcachesim-txt
            pid 0 tid 0 t - page 0xc R
            pid 0 tid 0 t - page 0x1f R
            pid 0 tid 0 t - page 0x3 R
            end
        "#]],
    );
    check(
        "7",
        options,
        expect![[r#"
            format libcachesim-txt
            pid 0 tid 0 t - page 0x7 R
            end
        "#]],
    );
    // Near misses: a comment, a blank around a number, two numbers, a second column, a
    // sign, a bare 0x, a text-format line after numbers.
    for near_miss in
        ["# ids\n1\n2\n", " 1\n2\n", "1\n2 3\n", "1,2\n", "1\n-2\n", "1\n0x\n", "1\nR 2\n", "\n\n"]
    {
        let err = open(Box::new(Cursor::new(near_miss.as_bytes().to_vec())), options).err();
        let err = err.unwrap_or_else(|| panic!("{near_miss:?} must not be detected"));
        assert!(matches!(err, FormatError::Unknown(_)), "{near_miss:?}: {err}");
    }
    // A number after the peek limit cannot change the verdict; a bad line within it does.
    let mut long: String = (0..20_000).map(|idx| format!("{idx}\n")).collect();
    long.push_str("not a number\n");
    let source =
        open(Box::new(Cursor::new(long.into_bytes())), options).expect("detected on the first 64 KiB");
    assert_eq!(source.format(), Format::LibCacheSimTxt);
    let mut cut: String = (0..2_000).map(|idx| format!("{idx}\n")).collect();
    cut.push_str("x\n");
    assert!(open(Box::new(Cursor::new(cut.into_bytes())), options).is_err());
}

#[test]
fn parameters_other_than_obj_id_is_num_are_refused() {
    check(
        "1\n",
        named("obj-id-col=1", ObjectMap::default()),
        expect![[r#"
            open error: trace parameters: obj-id-col only applies to libcachesim-csv; libcachesim-txt takes obj-id-is-num only
        "#]],
    );
    check(
        "R 1\n",
        OpenOptions {
            params: TraceParams::parse("obj-id-is-num=0").expect("valid"),
            ..OpenOptions::default()
        },
        expect![[r#"
            open error: trace parameters: obj-id-is-num given, but text traces take none (only libcachesim-txt and libcachesim-csv do)
        "#]],
    );
}

proptest! {
    /// Ids written in any of C's three bases read back as their pages, plain or in
    /// batches.
    #[test]
    fn written_ids_read_back(
        ids in proptest::collection::vec((0..crate::oracle::REGION_PAGES_DEFAULT, 0..3u8), 1..200),
        batch in proptest::option::of(1..50usize),
    ) {
        let text: String = ids.iter().map(|&(id, base)| match base {
            0 => format!("{id}\n"),
            1 => format!("{id:#x}\n"),
            _ => format!("0{id:o}\n"),
        }).collect();
        let mut source = open(Box::new(Cursor::new(text.into_bytes())), named("", ObjectMap::default()))
            .map_err(|err| TestCaseError::fail(err.to_string()))?;
        let mut pages = Vec::new();
        match batch {
            Some(n_max) => loop {
                let mut records = Vec::new();
                source.next_records(&mut records, n_max).map_err(|err| TestCaseError::fail(err.to_string()))?;
                if records.is_empty() {
                    break;
                }
                pages.extend(records.iter().map(|record| record.page));
            },
            None => while let Some(record) = source.next_record().map_err(|err| TestCaseError::fail(err.to_string()))? {
                pages.push(record.page);
            },
        }
        let expected: Vec<u64> = ids.iter().map(|&(id, _)| id).collect();
        prop_assert_eq!(pages, expected);
    }

    /// The quick path for plain lines reads what the general one does.
    #[test]
    fn plain_lines_read_as_any_line_does(line in "[0-9]{0,21}|0x[0-9a-f]{1,3}", region_pages in 1..5000u64) {
        let map = ObjectMap::Modulo { region_pages };
        let mut lines = TxtLines { obj_id_is_num: true, pages: ObjectPages::new(map) };
        if let Some(access) = lines.plain_access(line.as_bytes()) {
            let general = lines.parse_line(line.as_bytes());
            prop_assert!(matches!(general, Step::Access(parsed) if parsed == access), "{:?}", general);
        }
    }

    /// Any bytes read as records or fail naming a line that exists, in both modes and
    /// with string ids too.
    #[test]
    fn arbitrary_bytes_parse_or_fail_cleanly(
        bytes in proptest::collection::vec(
            prop_oneof![proptest::sample::select(b"0123456789abcdefxX \t\r\n#-+".to_vec()), any::<u8>()],
            0..400,
        ),
        lenient in any::<bool>(),
        string_ids in any::<bool>(),
        dense in any::<bool>(),
    ) {
        let object_map = if dense { ObjectMap::Dense } else { ObjectMap::default() };
        let params = if string_ids { "obj-id-is-num=false" } else { "" };
        let options = OpenOptions { lenient, ..named(params, object_map) };
        crate::testutil::read_object_requests(bytes, options)?;
    }
}
