//! valgrind lackey `--trace-mem=yes` output.
//!
//! ```text
//! ==14561== Lackey, an example Valgrind tool
//! I  0401c40,3
//!  L 1ffefffd10,8
//!  S 1ffefffd18,8
//!  M 0620e20,4
//! ```
//!
//! Each line is an instruction fetch (`I`), load (`L`), store (`S`) or modify (`M`, a load
//! and a store of the same bytes by one instruction) of `size` bytes at a hex address. A
//! load becomes a read record; a store or a modify becomes one write record per page, since
//! the modify's load never faults on its own: the page must be present for the store that
//! follows at once. An access whose bytes straddle a page boundary touches both pages and
//! yields one record for each, in address order. Instruction fetches are read records when
//! `OpenOptions::instructions` is set; otherwise they are skipped and counted as
//! "instruction fetch", once their line has parsed: a cut `I` line is an error either way.
//!
//! Lines starting `==` are valgrind's own messages, skipped and counted as "valgrind
//! message". Lackey traces one process and records neither pid nor time, so every record
//! has pid 0, tid 0 and no time.

use crate::format::Format;
use crate::lines::{
    check_address, offset_in, parse_decimal, parse_hex, quote, trim_end, trim_start, BadLines, LineAccess,
    LineFormat, LineSource, Step,
};
use crate::options::OpenOptions;
use std::io::BufRead;

/// Largest access size accepted, in bytes: far above any instruction's (an `xsave` area is
/// a few KiB), and small enough that one line yields at most 17 records.
const ACCESS_BYTES_MAX: u64 = 64 * 1024;

/// A streaming reader of lackey output.
pub struct LackeyReader {
    source: LineSource<LackeyLines>,
}

impl LackeyReader {
    /// Reads `reader` (already decompressed). `options.lenient` skips bad lines;
    /// `options.instructions` turns instruction fetches into read records.
    pub fn new(reader: Box<dyn BufRead + Send>, options: OpenOptions) -> LackeyReader {
        let lines = LackeyLines { instructions: options.instructions };
        LackeyReader { source: LineSource::new(reader, lines, BadLines::of(&options)) }
    }
}

crate::lines::line_reader!(LackeyReader, Format::Lackey);

/// The line syntax.
pub(crate) struct LackeyLines {
    pub(crate) instructions: bool,
}

impl LineFormat for LackeyLines {
    fn parse_line(&mut self, line: &[u8]) -> Step {
        if line.starts_with(b"==") {
            return Step::Skip("valgrind message");
        }
        // An instruction fetch is parsed even when it is to be skipped: a cut or garbled
        // `I` line is an error whatever the options, not a fetch to count.
        let (fetch, write, fields) = match line {
            [b'I', b' ' | b'\t', rest @ ..] => (true, false, rest),
            [b' ', b'L', b' ' | b'\t', rest @ ..] => (false, false, rest),
            [b' ', b'S' | b'M', b' ' | b'\t', rest @ ..] => (false, true, rest),
            _ if trim_start(line).is_empty() => return Step::Blank,
            _ => {
                return Step::malformed(format!(
                    "not a lackey line: {} (expected \"I  <hex>,<size>\" or \" L|S|M <hex>,<size>\")",
                    quote(line)
                ))
            }
        };
        let fields = trim_end(trim_start(fields));
        let Some(comma) = memchr::memchr(b',', fields) else {
            return Step::malformed_at(
                offset_in(line, fields),
                format!("expected <hex address>,<size>, found {}", quote(fields)),
            );
        };
        let (address_text, size_text) = (&fields[..comma], &fields[comma + 1..]);
        let Some(address) = parse_hex(address_text) else {
            return Step::malformed_at(
                offset_in(line, address_text),
                format!("address {} is not a 64-bit hex number", quote(address_text)),
            );
        };
        let size = match parse_decimal(size_text) {
            Some(size) if (1..=ACCESS_BYTES_MAX).contains(&size) => size,
            _ => {
                return Step::malformed_at(
                    offset_in(line, size_text),
                    format!(
                        "size {} is not a decimal byte count of 1..={ACCESS_BYTES_MAX}",
                        quote(size_text)
                    ),
                )
            }
        };
        // The last byte touched must lie in the address space too.
        let last_byte = match check_address(address.saturating_add(size - 1)) {
            Ok(last_byte) => last_byte,
            Err(step) => return step,
        };
        if fetch && !self.instructions {
            return Step::Skip("instruction fetch");
        }
        Step::Access(LineAccess {
            pid: 0,
            tid: 0,
            time_ns: None,
            first_page: address >> 12,
            last_page: last_byte >> 12,
            write,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::render;
    use expect_test::{expect, Expect};

    fn check(input: impl AsRef<[u8]>, options: OpenOptions, expect: Expect) {
        let reader = LackeyReader::new(Box::new(std::io::Cursor::new(input.as_ref().to_vec())), options);
        expect.assert_eq(&render(Box::new(reader)));
    }

    const SAMPLE: &str = "==14561== Lackey, an example Valgrind tool
==14561== Command: ./a.out
==14561==
I  0401c40,3
 L 1ffefffd10,8
I  0401c43,4
 S 0620ffc,8
 M 0620e20,4

==14561== Counted 1 call to main()
";

    #[test]
    fn instructions_off() {
        check(
            SAMPLE,
            OpenOptions::default(),
            expect![[r#"
                pid 0 tid 0 t - page 0x1ffefff R
                pid 0 tid 0 t - page 0x620 W
                pid 0 tid 0 t - page 0x621 W
                pid 0 tid 0 t - page 0x620 W
                end
                skipped instruction fetch 2
                skipped valgrind message 4
            "#]],
        );
    }

    #[test]
    fn instructions_on() {
        check(
            SAMPLE,
            OpenOptions { instructions: true, ..OpenOptions::default() },
            expect![[r#"
                pid 0 tid 0 t - page 0x401 R
                pid 0 tid 0 t - page 0x1ffefff R
                pid 0 tid 0 t - page 0x401 R
                pid 0 tid 0 t - page 0x620 W
                pid 0 tid 0 t - page 0x621 W
                pid 0 tid 0 t - page 0x620 W
                end
                skipped valgrind message 4
            "#]],
        );
    }

    #[test]
    fn errors() {
        let check_error = |input: &[u8], expect: Expect| check(input, OpenOptions::default(), expect);
        check_error(
            b" X 1000,4\n",
            expect![[r#"
                error: line 1: not a lackey line: " X 1000,4" (expected "I  <hex>,<size>" or " L|S|M <hex>,<size>")
            "#]],
        );
        check_error(
            b" L 1000\n",
            expect![[r#"
                error: line 1, column 4: expected <hex address>,<size>, found "1000"
            "#]],
        );
        check_error(
            b" L 10g0,4\n",
            expect![[r#"
                error: line 1, column 4: address "10g0" is not a 64-bit hex number
            "#]],
        );
        check_error(
            b" L 1000,0\n",
            expect![[r#"
                error: line 1, column 9: size "0" is not a decimal byte count of 1..=65536
            "#]],
        );
        check_error(
            b" S 1ffffffffffffff,2\n",
            expect![[r#"
                error: line 1: address 0x200000000000000 is beyond the 57-bit virtual address space
            "#]],
        );
        check_error(
            b" L 1000,4\n L 2000,4\xff\n",
            expect![[r#"
                pid 0 tid 0 t - page 0x1 R
                error: line 2, column 10: line is not valid UTF-8 (byte 0xff)
            "#]],
        );
    }

    /// Issue 35: a cut `I` line was counted as a skipped instruction fetch unless
    /// `--instructions` was given. It is an error either way, and lenient mode counts it as
    /// malformed, not as a fetch.
    #[test]
    fn a_cut_instruction_line_is_an_error_whatever_the_options() {
        for instructions in [false, true] {
            let options = OpenOptions { instructions, ..OpenOptions::default() };
            check(
                " L 1000,4\nI  0401c4",
                options,
                expect![[r#"
                    pid 0 tid 0 t - page 0x1 R
                    error: line 2, column 4: expected <hex address>,<size>, found "0401c4"
                "#]],
            );
            check(
                "I  0401c40,\n L 1000,4\n",
                OpenOptions { lenient: true, ..options },
                expect![[r#"
                    pid 0 tid 0 t - page 0x1 R
                    end
                    skipped malformed line 1
                "#]],
            );
        }
    }

    #[test]
    fn lenient_skips_and_counts() {
        check(
            " L 1000,4\n junk\n L 2000,99999999\n S 3000,1\n",
            OpenOptions { lenient: true, ..OpenOptions::default() },
            expect![[r#"
                pid 0 tid 0 t - page 0x1 R
                pid 0 tid 0 t - page 0x3 W
                end
                skipped malformed line 2
            "#]],
        );
    }
}
