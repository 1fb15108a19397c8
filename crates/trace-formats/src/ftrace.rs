//! ftrace text (the `trace` and `trace_pipe` files) of the `page_fault_user` tracepoint.
//!
//! Captured by enabling `events/exceptions/page_fault_user` in tracefs:
//!
//! ```text
//! # tracer: nop
//! #           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
//!          python3-14561   [001] d....  2364.742742: page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6
//! ```
//!
//! A line is anchored on its `[cpu]` field followed by an optional flags column (`d....`
//! on recent kernels, `....` on older ones, absent on the oldest) and the
//! `seconds.fraction:` timestamp. The task column before it is `comm-pid`, split at the
//! last `-`, since the command name may hold dashes and spaces. ftrace's "pid" is the
//! kernel's, which is the thread id; without the `record-tgid` option there is no process
//! id, so the record's pid and tid are both that number. With `record-tgid` the column
//! `(tgid)` follows the task and becomes the pid.
//!
//! `#` header lines and blank lines are ignored, `CPU:N [LOST n EVENTS]` notices are skipped
//! and counted, and lines of other events are skipped and counted as "other event: `<name>`".
//! The page is `address >> 12`; bit 1 of `error_code` marks a write fault.

use crate::format::Format;
use crate::lines::{
    is_blank, offset_in, parse_pid, parse_time, quote, skip_blanks, split_token, token_is, trim_end,
    trim_start, usual_cpu, usual_pid, usual_time, BadLines, LineFormat, LineSource, Step,
};
use crate::options::OpenOptions;
use crate::perf::{cpu_and_time, fault_step};
use std::io::BufRead;

/// A streaming reader of ftrace page-fault text.
pub struct FtraceReader {
    source: LineSource<FtraceLines>,
}

impl FtraceReader {
    /// Reads `reader` (already decompressed). `options.lenient` skips bad lines.
    pub fn new(reader: Box<dyn BufRead + Send>, options: OpenOptions) -> FtraceReader {
        FtraceReader { source: LineSource::new(reader, FtraceLines, BadLines::of(&options)) }
    }
}

crate::lines::line_reader!(FtraceReader, Format::Ftrace);

/// The line syntax.
pub(crate) struct FtraceLines;

const EVENT: &[u8] = b"page_fault_user";

/// Where the fields of a line's head lie.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Head<'a> {
    pub(crate) pid: &'a [u8],
    pub(crate) tgid: Option<&'a [u8]>,
    pub(crate) time: &'a [u8],
    /// Offset of what follows the timestamp's colon.
    pub(crate) rest: usize,
}

impl LineFormat for FtraceLines {
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
    if trimmed.starts_with(b"CPU:") && memchr::memmem::find(trimmed, b"[LOST ").is_some() {
        return Step::Skip("lost events notice");
    }
    let Some(head) = parse_head(line) else {
        return Step::malformed(format!(
            "not an ftrace line: {} (expected \"<comm>-<pid> [<cpu>] <flags> <seconds>.<fraction>: <event>: ...\")",
            quote(trimmed)
        ));
    };
    let thread = match parse_pid(head.pid, "pid") {
        Ok(thread) => thread,
        Err(message) => return Step::malformed_at(offset_in(line, head.pid), message),
    };
    let pid = match head.tgid.map(|tgid| (tgid, parse_pid(tgid, "tgid"))) {
        None => thread,
        Some((_, Ok(tgid))) => tgid,
        Some((tgid, Err(message))) => return Step::malformed_at(offset_in(line, tgid), message),
    };
    let time_ns = match parse_time(head.time) {
        Ok(time_ns) => time_ns,
        Err(message) => return Step::malformed_at(offset_in(line, head.time), message),
    };
    let (event, args) = split_token(&line[head.rest..]);
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
    fault_step(pid, thread, time_ns, args)
}

/// One pass over a line of the usual layout,
/// `<comm>-<pid> [<cpu>] [<flags>] <seconds>.<fraction>: page_fault_user: <args>`, without
/// a tgid column, with the head taken at the line's first `[`. `None` for anything else
/// (including headers, notices, other events, and out-of-range pids or times), which the
/// general parser then reads; when it answers, the general parser would answer the same.
#[inline]
fn parse_usual_line(line: &[u8]) -> Option<Step> {
    let first = skip_blanks(line, 0);
    if line.get(first) == Some(&b'#') || line[first..].starts_with(b"CPU:") {
        return None;
    }
    let open = memchr::memchr(b'[', line)?;
    // The pid: the digits after the last '-' of the task, right before the blanks.
    if open == 0 || !is_blank(line[open - 1]) {
        return None;
    }
    let mut end = open - 1;
    while end > 0 && is_blank(line[end - 1]) {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && line[start - 1].is_ascii_digit() {
        start -= 1;
    }
    if start == 0 || line[start - 1] != b'-' {
        return None;
    }
    let (thread, after_pid) = usual_pid(line, start)?;
    if after_pid != end {
        return None;
    }
    let after_cpu = usual_cpu(line, open)?;
    let mut time_start = skip_blanks(line, after_cpu);
    let token_end = time_start
        + line[time_start..].iter().position(|&byte| is_blank(byte)).unwrap_or(line.len() - time_start);
    if line[token_end - 1] != b':' {
        // The flags column, as the general parser tells it from the timestamp.
        if token_end == time_start || token_end - time_start > 8 {
            return None;
        }
        time_start = skip_blanks(line, token_end);
    }
    let (time_ns, after_time) = usual_time(line, time_start)?;
    let after_event = token_is(line, skip_blanks(line, after_time), EVENT_TOKEN)?;
    Some(fault_step(thread, thread, time_ns, &line[after_event..]))
}

/// [`EVENT`] as its token appears, with the colon.
const EVENT_TOKEN: &[u8] = b"page_fault_user:";

/// Finds the head of an ftrace line: the first `[` that opens a `[cpu]` field followed by
/// a timestamp and preceded by `comm-pid` and an optional `(tgid)`.
pub(crate) fn parse_head(line: &[u8]) -> Option<Head<'_>> {
    let is_number = |text: &[u8]| !text.is_empty() && text.iter().all(u8::is_ascii_digit);
    for open in memchr::memchr_iter(b'[', line) {
        let Some((time, rest)) = cpu_and_time(line, open, true) else {
            continue;
        };
        let before = &line[..open];
        if !before.last().is_some_and(|&byte| is_blank(byte)) {
            continue;
        }
        let mut task = trim_end(before);
        let mut tgid = None;
        if let Some(inside) = task.strip_suffix(b")") {
            let Some(paren) = inside.iter().rposition(|&byte| byte == b'(') else {
                continue;
            };
            let text = trim_start(&inside[paren + 1..]);
            if is_number(text) {
                tgid = Some(text);
            } else if text.is_empty() || !text.iter().all(|&byte| byte == b'-') {
                continue;
            }
            task = trim_end(&inside[..paren]);
        }
        let Some(dash) = task.iter().rposition(|&byte| byte == b'-') else {
            continue;
        };
        let pid = &task[dash + 1..];
        if !is_number(pid) {
            continue;
        }
        return Some(Head { pid, tgid, time, rest });
    }
    None
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
        let reader = FtraceReader::new(Box::new(std::io::Cursor::new(input.as_bytes().to_vec())), options);
        expect.assert_eq(&render(Box::new(reader)));
    }

    #[test]
    fn trace_file_with_flags_column() {
        check(
            "# tracer: nop
#
# entries-in-buffer/entries-written: 3/3   #P:4
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
         python3-14561   [001] d....  2364.742742: page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6
  Web Content-x-2-17     [000] d..1.  2364.742743: page_fault_user: address=0x1000 ip=0x0 error_code=0x4
           <...>-18      [002] d....  2364.742744: page_fault_kernel: address=0x1000 ip=0x0 error_code=0x0
",
            expect![[r#"
                pid 14561 tid 14561 t 2364.742742000 page 0x7f1f04a24 W
                pid 17 tid 17 t 2364.742743000 page 0x1 R
                end
                skipped other event: page_fault_kernel 1
            "#]],
        );
    }

    #[test]
    fn older_layouts_and_tgid_column() {
        check(
            "bash-1234  [000]  1.000001: page_fault_user: address=0x2000 ip=0x0 error_code=0x2
bash-1234  [000] ....  1.000002: page_fault_user: address=0x3000 ip=0x0 error_code=0x2
bash-1235  (   1234) [003] d.... 1.000003: page_fault_user: address=0x4000 ip=0x0 error_code=0x0
bash-1236  (-------) [003] d.... 1.000004: page_fault_user: address=0x5000 ip=0x0 error_code=0x0
CPU:3 [LOST 17 EVENTS]
",
            expect![[r#"
                pid 1234 tid 1234 t 1.000001000 page 0x2 W
                pid 1234 tid 1234 t 1.000002000 page 0x3 W
                pid 1234 tid 1235 t 1.000003000 page 0x4 R
                pid 1236 tid 1236 t 1.000004000 page 0x5 R
                end
                skipped lost events notice 1
            "#]],
        );
    }

    #[test]
    fn errors_and_lenient_counts() {
        let input = "a-1 [000] d.... 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6
a 1 [000] d.... 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6
a-1 [000] d.... 0.5: page_fault_user: address=0x1000 ip=0x0 error_code=0x6
a-1 [000] d.... 2.0: page_fault_user: address=0xffffffffffffffff ip=0x0 error_code=0x6
a-1 [000] d.... 2.0: page_fault_user: address=0x1000 error_code=0xz
a-\u{e9}-1 [000] d.... 3.0: page_fault_user: address=0x9000 error_code=0x0
";
        check(
            input,
            expect![[r#"
                pid 1 tid 1 t 1.000000000 page 0x1 W
                error: line 2: not an ftrace line: "a 1 [000] d.... 1.0: page_fault_user: ad"... (expected "<comm>-<pid> [<cpu>] <flags> <seconds>.<fraction>: <event>: ...")
            "#]],
        );
        check_with(
            input,
            OpenOptions { lenient: true, ..OpenOptions::default() },
            expect![[r#"
                pid 1 tid 1 t 1.000000000 page 0x1 W
                pid 1 tid 1 t 3.000000000 page 0x9 R
                end
                skipped address out of range 1
                skipped malformed line 2
                skipped time went backwards 1
            "#]],
        );
    }

    #[test]
    fn heads() {
        let head = parse_head(b" a-b-12 (  7) [001] d.... 5.25: e:").expect("a head");
        assert_eq!(head, Head { pid: b"12", tgid: Some(b"7"), time: b"5.25", rest: 31 });
        assert_eq!(parse_head(b"a-12 [001] dddddddddd 5.25: e:"), None);
        assert_eq!(parse_head(b"a12 [001] 5.25: e:"), None);
        assert_eq!(parse_head(b"a-12 (x) [001] 5.25: e:"), None);
    }

    #[test]
    fn usual_layout_reads_as_the_general_parser_does() {
        let lines: &[&str] = &[
            "         python3-14561   [001] d....  2364.742742: page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6",
            "bash-1234  [000]  1.000001: page_fault_user: address=0x2000 ip=0x0 error_code=0x2",
            "bash-1235  (   1234) [003] d.... 1.000003: page_fault_user: address=0x4000 ip=0x0 error_code=0x0",
            "CPU:3 [LOST 17 EVENTS]",
            "CPU:3-1 [000] d.... 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "#a-1 [000] d.... 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a 1 [000] d.... 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "-1 [000] d.... 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a- [000] d.... 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a-4194305 [000] d.... 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a-1 [000] dddddddd 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a-1 [000] ddddddddd 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a-1 [000] d...: 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0x6",
            "a-1 [000] d.... 1.0: page_fault_kernel: address=0x1000 ip=0x0 error_code=0x6",
            "a-1 [000] d.... 1.0: page_fault_user: address=0x1000 error_code=0x6",
            "a-1 [000] d.... 1.0: page_fault_user: address=0x1000 ip=0x0 error_code=0xz",
            "a-1 [000] d.... 18446744073.709551616: page_fault_user: address=0x1000 ip=0x0 error_code=0x2",
            "a-1 [000] d....",
            "a-1 [000] d.... ",
            "a-1 [000] ",
            "a [1] b-2 [000] 1.5: page_fault_user: address=0x1000 ip=0x0 error_code=0x2",
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
