//! `perf script` text of the `exceptions:page_fault_user` tracepoint.
//!
//! Captured with `perf record -e exceptions:page_fault_user` and printed with `perf script`,
//! in its default form or with `-F comm,pid,tid,cpu,time,event,trace`:
//!
//! ```text
//!          python3 14561 [001]  2364.742742: exceptions:page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6
//!          python3 14561/14563 [001]  2364.742742: exceptions:page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6
//! ```
//!
//! The command name may hold spaces (or anything else), so a line is anchored on its
//! `[cpu]` field followed by the `seconds.fraction:` timestamp, and the pid (or
//! `pid/tid`) is the token just before the `[`. The timestamp becomes nanoseconds by exact
//! integer arithmetic. The page is `address >> 12`, and bit 1 of `error_code` (the x86
//! `X86_PF_WRITE` bit) marks a write fault. Without a tid, the tid is the pid.
//!
//! Lines of other events are skipped and counted as "other event: `<name>`", so a recording
//! of several events replays its page faults; blank lines and `#` header lines are
//! ignored. The `[cpu]` field is required (perf prints it for per-CPU recordings, the
//! default); the instruction pointer and any trailing fields are ignored.

use crate::format::Format;
use crate::lines::{
    check_address, is_blank, offset_in, parse_hex, parse_pid, parse_time, quote, skip_blanks, split_token,
    token_is, trim_end, trim_start, usual_cpu, usual_pid, usual_time, BadLines, LineAccess, LineFormat,
    LineSource, Step,
};
use crate::options::OpenOptions;
use std::io::BufRead;

/// A streaming reader of `perf script` page-fault text.
pub struct PerfScriptReader {
    source: LineSource<PerfScriptLines>,
}

impl PerfScriptReader {
    /// Reads `reader` (already decompressed). `options.lenient` skips bad lines.
    pub fn new(reader: Box<dyn BufRead + Send>, options: OpenOptions) -> PerfScriptReader {
        PerfScriptReader { source: LineSource::new(reader, PerfScriptLines, BadLines::of(&options)) }
    }
}

crate::lines::line_reader!(PerfScriptReader, Format::PerfScript);

/// The line syntax.
pub(crate) struct PerfScriptLines;

/// The event whose lines become records.
const EVENT: &[u8] = b"exceptions:page_fault_user";

/// Where the fields of a line's head lie.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Head<'a> {
    pub(crate) pid: &'a [u8],
    pub(crate) tid: Option<&'a [u8]>,
    pub(crate) time: &'a [u8],
    /// Offset of what follows the timestamp's colon.
    pub(crate) rest: usize,
}

impl LineFormat for PerfScriptLines {
    fn parse_line(&mut self, line: &[u8]) -> Step {
        if let Some(step) = parse_usual_line(line) {
            return step;
        }
        parse_any_line(line)
    }
}

/// The general parser, for any layout.
fn parse_any_line(line: &[u8]) -> Step {
    let trimmed = trim_start(line);
    if trimmed.is_empty() || trimmed[0] == b'#' {
        return Step::Blank;
    }
    let Some(head) = parse_head(line) else {
        return Step::malformed(format!(
            "not a perf script line: {} (expected \"<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...\")",
            quote(trimmed)
        ));
    };
    let pid = match parse_pid(head.pid, "pid") {
        Ok(pid) => pid,
        Err(message) => return Step::malformed_at(offset_in(line, head.pid), message),
    };
    let tid = match head.tid.map(|tid| (tid, parse_pid(tid, "tid"))) {
        None => pid,
        Some((_, Ok(tid))) => tid,
        Some((tid, Err(message))) => return Step::malformed_at(offset_in(line, tid), message),
    };
    let time_ns = match parse_time(head.time) {
        Ok(time_ns) => time_ns,
        Err(message) => return Step::malformed_at(offset_in(line, head.time), message),
    };
    let (mut event, mut args) = split_token(&line[head.rest..]);
    if !event.is_empty() && event.iter().all(u8::is_ascii_digit) {
        // A sampling event prints its period before its name.
        (event, args) = split_token(args);
    }
    let Some(name) = event.strip_suffix(b":") else {
        return Step::malformed_at(
            offset_in(line, event),
            format!("expected an event name ending in ':' after the timestamp, found {}", quote(event)),
        );
    };
    if name != EVENT {
        let start = offset_in(line, name);
        return Step::OtherEvent(start..start + name.len());
    }
    fault_step(pid, tid, time_ns, args)
}

/// One pass over a line of the usual layout,
/// `<comm> <pid>[/<tid>] [<cpu>]  <seconds>.<fraction>: exceptions:page_fault_user: <args>`,
/// with the head taken at the line's first `[`. `None` for anything else (including
/// headers, other events, periods, and out-of-range pids or times), which the general
/// parser then reads; when it answers, the general parser would answer the same.
#[inline]
fn parse_usual_line(line: &[u8]) -> Option<Step> {
    let first = skip_blanks(line, 0);
    if line.get(first) == Some(&b'#') {
        return None;
    }
    let open = memchr::memchr(b'[', line)?;
    // The pid token: digits and at most one '/', right before the blanks before the '['.
    if open == 0 || !is_blank(line[open - 1]) {
        return None;
    }
    let mut end = open - 1;
    while end > 0 && is_blank(line[end - 1]) {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && (line[start - 1].is_ascii_digit() || line[start - 1] == b'/') {
        start -= 1;
    }
    if start > 0 && !is_blank(line[start - 1]) {
        return None;
    }
    let (pid, after_pid) = usual_pid(line, start)?;
    let tid = if after_pid == end {
        pid
    } else {
        let (tid, after_tid) = usual_pid(line, after_pid + 1)?;
        if line[after_pid] != b'/' || after_tid != end {
            return None;
        }
        tid
    };
    let after_cpu = usual_cpu(line, open)?;
    let (time_ns, after_time) = usual_time(line, skip_blanks(line, after_cpu))?;
    let after_event = token_is(line, skip_blanks(line, after_time), EVENT_TOKEN)?;
    Some(fault_step(pid, tid, time_ns, &line[after_event..]))
}

/// [`EVENT`] as its token appears, with the colon.
const EVENT_TOKEN: &[u8] = b"exceptions:page_fault_user:";

/// Finds the head of a perf line: the first `[` that opens a `[cpu]` field followed by a
/// timestamp and preceded by a pid token.
#[inline]
pub(crate) fn parse_head(line: &[u8]) -> Option<Head<'_>> {
    for open in memchr::memchr_iter(b'[', line) {
        let Some((time, rest)) = cpu_and_time(line, open, false) else {
            continue;
        };
        let before = &line[..open];
        if !before.last().is_some_and(|&byte| is_blank(byte)) {
            continue;
        }
        let before = trim_end(before);
        let token_start = before.iter().rposition(|&byte| is_blank(byte)).map_or(0, |blank| blank + 1);
        let token = &before[token_start..];
        let (pid, tid) = match memchr::memchr(b'/', token) {
            Some(slash) => (&token[..slash], Some(&token[slash + 1..])),
            None => (token, None),
        };
        let is_number = |text: &[u8]| !text.is_empty() && text.iter().all(u8::is_ascii_digit);
        if !is_number(pid) || tid.is_some_and(|tid| !is_number(tid)) {
            continue;
        }
        return Some(Head { pid, tid, time, rest });
    }
    None
}

/// Matches `[<digits>]`, blanks, an optional flags column (when `flags` is allowed), and a
/// `<digits>.<digits>:` timestamp followed by a blank or the end, starting at `open`.
/// Returns the timestamp's text and the offset after its colon.
#[inline]
pub(crate) fn cpu_and_time(line: &[u8], open: usize, flags: bool) -> Option<(&[u8], usize)> {
    let after_open = &line[open + 1..];
    let close = after_open.iter().position(|&byte| !byte.is_ascii_digit())?;
    if close == 0 || after_open[close] != b']' {
        return None;
    }
    let after_cpu = open + 1 + close + 1;
    if !line.get(after_cpu).is_some_and(|&byte| is_blank(byte)) {
        return None;
    }
    let (mut token, mut rest) = split_token(&line[after_cpu..]);
    if flags && !token.ends_with(b":") && !token.is_empty() && token.len() <= 8 {
        (token, rest) = split_token(rest);
    }
    let time = token.strip_suffix(b":")?;
    let dot = memchr::memchr(b'.', time)?;
    let is_number = |text: &[u8]| !text.is_empty() && text.iter().all(u8::is_ascii_digit);
    if !is_number(&time[..dot]) || !is_number(&time[dot + 1..]) {
        return None;
    }
    Some((time, line.len() - rest.len()))
}

/// The step for a page-fault line whose head parsed: the access its arguments describe,
/// or why they are malformed.
#[inline]
pub(crate) fn fault_step(pid: u32, tid: u32, time_ns: u64, args: &[u8]) -> Step {
    match parse_fault_args(args) {
        Ok((address, write)) => {
            let page = address >> 12;
            Step::Access(LineAccess {
                pid,
                tid,
                time_ns: Some(time_ns),
                first_page: page,
                last_page: page,
                write,
            })
        }
        Err(step) => step,
    }
}

/// Parses the tracepoint's `address=0x.. ip=0x.. error_code=0x..` fields: the address and
/// whether the fault was a write.
#[inline]
pub(crate) fn parse_fault_args(args: &[u8]) -> Result<(u64, bool), Step> {
    if let Some(fields) = parse_fault_args_fast(args) {
        let address = check_address(fields.0)?;
        return Ok((address, fields.1 & 0x2 != 0));
    }
    let mut address = None;
    let mut error_code = None;
    let mut rest = args;
    loop {
        let (token, after) = split_token(rest);
        if token.is_empty() {
            break;
        }
        rest = after;
        if let Some(value) = token.strip_prefix(b"address=") {
            address = Some(parse_field_hex(value, "address")?);
        } else if let Some(value) = token.strip_prefix(b"error_code=") {
            error_code = Some(parse_field_hex(value, "error_code")?);
        }
    }
    let Some(address) = address else {
        return Err(Step::malformed("missing address=0x... field".into()));
    };
    let Some(error_code) = error_code else {
        return Err(Step::malformed("missing error_code=0x... field".into()));
    };
    let address = check_address(address)?;
    Ok((address, error_code & 0x2 != 0))
}

/// The common layout, exactly as the kernel prints it: ` address=0x.. ip=0x..
/// error_code=0x..` and nothing after. `None` for anything else, which the general parser
/// then reads (or explains).
#[inline]
fn parse_fault_args_fast(args: &[u8]) -> Option<(u64, u64)> {
    let rest = args.strip_prefix(b" address=0x")?;
    let (digits, address) = crate::lines::hex_prefix(rest);
    let rest = rest[digits..].strip_prefix(b" ip=0x").filter(|_| digits > 0)?;
    let (digits, _) = crate::lines::hex_prefix(rest);
    let rest = rest[digits..].strip_prefix(b" error_code=0x").filter(|_| digits > 0)?;
    let (digits, error_code) = crate::lines::hex_prefix(rest);
    if digits == 0 || !trim_start(&rest[digits..]).is_empty() {
        return None;
    }
    Some((address?, error_code?))
}

fn parse_field_hex(value: &[u8], field: &str) -> Result<u64, Step> {
    value.strip_prefix(b"0x").and_then(parse_hex).ok_or_else(|| {
        Step::malformed(format!("{field} {} is not a 0x-prefixed 64-bit hex number", quote(value)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::render;
    use expect_test::{expect, Expect};

    fn check(input: &str, expect: Expect) {
        check_with(input, OpenOptions::default(), expect);
    }

    fn check_with(input: &str, options: OpenOptions, expect: Expect) {
        let reader =
            PerfScriptReader::new(Box::new(std::io::Cursor::new(input.as_bytes().to_vec())), options);
        expect.assert_eq(&render(Box::new(reader)));
    }

    #[test]
    fn default_and_tid_forms() {
        check(
            "         python3 14561 [001]  2364.742742: exceptions:page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6
         python3 14561/14563 [003]  2364.742800: exceptions:page_fault_user: address=0x7f1f04a25000 ip=0x7f1f04a0c7ad error_code=0x4
",
            expect![[r#"
                pid 14561 tid 14561 t 2364.742742000 page 0x7f1f04a24 W
                pid 14561 tid 14563 t 2364.742800000 page 0x7f1f04a25 R
                end
            "#]],
        );
    }

    #[test]
    fn comm_with_spaces_brackets_and_digits() {
        check(
            "Web Content 1 [2] 3 14561 [001] 2364.742742: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x2
 4242 [000] 1.000000001: exceptions:page_fault_user: error_code=0x0 address=0x2fff
",
            expect![[r#"
                pid 14561 tid 14561 t 2364.742742000 page 0x1 W
                pid 4242 tid 4242 t 1.000000001 page 0x2 R
                end
            "#]],
        );
    }

    #[test]
    fn other_events_comments_and_blank_lines_are_skipped() {
        check(
            "# ========
# captured on: Thu Jan  1 00:00:00 2026
# ========
#

 python3 14561 [001]  2364.742742: sched:sched_switch: prev_comm=python3 prev_pid=14561 [x] ==> next_comm=swapper/1
 python3 14561 [001]  2364.742743:     250000 cycles:u:  7f1f04a0c7ad [unknown] (/usr/bin/python3)
 python3 14561 [001]  2364.742744: exceptions:page_fault_kernel: address=0x1000 ip=0x0 error_code=0x0
 python3 14561 [001]  2364.742745: exceptions:page_fault_user: address=0x5000 ip=0x0 error_code=0x7
 python3 14561 [001]  2364.742746: sched:sched_switch: prev_comm=python3
",
            expect![[r#"
                pid 14561 tid 14561 t 2364.742745000 page 0x5 W
                end
                skipped other event: cycles:u 1
                skipped other event: exceptions:page_fault_kernel 1
                skipped other event: sched:sched_switch 2
            "#]],
        );
    }

    #[test]
    fn errors_name_the_line() {
        check(
            "python3 14561 [001] 1.0: exceptions:page_fault_user: address=0x1000 error_code=0x6\nhello world\n",
            expect![[r#"
                pid 14561 tid 14561 t 1.000000000 page 0x1 W
                error: line 2: not a perf script line: "hello world" (expected "<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...")
            "#]],
        );
        check(
            "p 1 [0] 1.0: exceptions:page_fault_user: ip=0x0 error_code=0x6\n",
            expect![[r#"
                error: line 1: missing address=0x... field
            "#]],
        );
        check(
            "p 1 [0] 1.0: exceptions:page_fault_user: address=0x1000\n",
            expect![[r#"
                error: line 1: missing error_code=0x... field
            "#]],
        );
        check(
            "p 1 [0] 1.0: exceptions:page_fault_user: address=4096 error_code=0x0\n",
            expect![[r#"
                error: line 1: address "4096" is not a 0x-prefixed 64-bit hex number
            "#]],
        );
        check(
            "p 1 [0] 1.0: exceptions:page_fault_user: address=0x200000000000000 error_code=0x0\n",
            expect![[r#"
                error: line 1: address 0x200000000000000 is beyond the 57-bit virtual address space
            "#]],
        );
        check(
            "p 9999999 [0] 1.0: exceptions:page_fault_user: address=0x0 error_code=0x0\n",
            expect![[r#"
                error: line 1, column 3: pid "9999999" exceeds the kernel's largest pid 4194304
            "#]],
        );
        check(
            "p 1/99999999999 [0] 1.0: exceptions:page_fault_user: address=0x0 error_code=0x0\n",
            expect![[r#"
                error: line 1, column 5: tid "99999999999" exceeds the kernel's largest pid 4194304
            "#]],
        );
        check(
            "p 1 [0] 1.0123456789: exceptions:page_fault_user: address=0x0 error_code=0x0\n",
            expect![[r#"
                error: line 1, column 9: timestamp "1.0123456789" is not seconds.fraction
            "#]],
        );
        check(
            "p 1 [0] 1.0: page_fault_user\n",
            expect![[r#"
                error: line 1, column 14: expected an event name ending in ':' after the timestamp, found "page_fault_user"
            "#]],
        );
    }

    #[test]
    fn time_must_not_go_backwards_within_a_thread() {
        let input = "p 1/2 [0] 2.0: exceptions:page_fault_user: address=0x1000 error_code=0x0
p 1/3 [0] 1.0: exceptions:page_fault_user: address=0x2000 error_code=0x0
p 1/2 [0] 1.5: exceptions:page_fault_user: address=0x3000 error_code=0x0
p 1/2 [0] 2.0: exceptions:page_fault_user: address=0x4000 error_code=0x0
";
        check(
            input,
            expect![[r#"
                pid 1 tid 2 t 2.000000000 page 0x1 R
                pid 1 tid 3 t 1.000000000 page 0x2 R
                error: line 3: time 1.500000000 of thread 2 is before its previous record at 2.000000000
            "#]],
        );
        check_with(
            input,
            OpenOptions { lenient: true, ..OpenOptions::default() },
            expect![[r#"
                pid 1 tid 2 t 2.000000000 page 0x1 R
                pid 1 tid 3 t 1.000000000 page 0x2 R
                pid 1 tid 2 t 2.000000000 page 0x4 R
                end
                skipped time went backwards 1
            "#]],
        );
    }

    #[test]
    fn head_is_found_from_the_cpu_field() {
        let head = parse_head(b"a [1] b 12/13 [002]  5.25: x: y").expect("a head");
        assert_eq!(head, Head { pid: b"12", tid: Some(b"13"), time: b"5.25", rest: 26 });
        assert_eq!(parse_head(b"12 [x] 5.25: e:"), None);
        assert_eq!(parse_head(b"12[1] 5.25: e:"), None);
        assert_eq!(parse_head(b"12 [1] 5.25 e:"), None);
    }

    #[test]
    fn usual_layout_reads_as_the_general_parser_does() {
        let lines: &[&str] = &[
            "         python3 14561/14563 [001]  2364.742742: exceptions:page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6",
            "python3 14561 [001] 2364.742742: exceptions:page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x4",
            "#a 1 [0] 1.0: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a 1/2/3 [0] 1.0: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a 1//3 [0] 1.0: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a /3 [0] 1.0: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a 4194305 [0] 1.0: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a 00000001 [0] 1.0: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a x1 [0] 1.0: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a 1 [0] 18446744073.709551615: exceptions:page_fault_user: address=0x1000 error_code=0x6",
            "a 1 [0] 1.0000000001: exceptions:page_fault_user: address=0x1000 error_code=0x6",
            "a 1 [0] 1.5:: exceptions:page_fault_user: address=0x1000 error_code=0x6",
            "a 1 [0] 1.5: 7 exceptions:page_fault_user: address=0x1000 error_code=0x6",
            "a 1 [0] 1.5: exceptions:page_fault_user:x address=0x1000 error_code=0x6",
            "a 1 [0] 1.5: exceptions:page_fault_user: address=0xffffffffffffffff ip=0x0 error_code=0x6",
            "a 1 [0] 1.5: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0xz",
            "a 1 [0] 1.5: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x2 extra",
            "a 1 [0] 1.5: exceptions:page_fault_user:",
            "a 1 [0] 1.5:",
            "a 1 [0]",
            "a 1 [] 1.5: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x2",
            "a 1 [0]1.5: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x2",
            "a 2 [x] b 1 [0] 1.5: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x2",
            "a 1\t[0]\t1.5:\texceptions:page_fault_user:\taddress=0x1000 ip=0x0 error_code=0x2",
            "[0] 1.5: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x2",
            " 1 [0] 1.5: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x2",
        ];
        let mut fast_lines = 0;
        for line in lines {
            if let Some(fast) = parse_usual_line(line.as_bytes()) {
                fast_lines += 1;
                assert_eq!(format!("{fast:?}"), format!("{:?}", parse_any_line(line.as_bytes())), "{line}");
            }
        }
        assert!(fast_lines >= 4, "{fast_lines}");
    }
}
