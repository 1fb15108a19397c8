//! What the text formats share: a bounded line reader and the driver that turns parsed
//! lines into [`Record`]s.
//!
//! Each text format only says what one line means (a [`Step`]); this module does the rest
//! the same way for all of them: it keeps one line buffer of at most [`LINE_BYTES_MAX`]
//! bytes and borrows lines straight from the reader's buffer when they do not straddle two
//! fills of it, rejects lines that are not UTF-8, checks that time never goes backwards
//! within one thread (in the formats that want it checked), expands an access that spans
//! several pages into one record per page, and either stops at the first bad line (strict mode) or skips it and counts it by
//! reason (lenient mode). It allocates nothing per line on the common path.
//!
//! What it does not do: decompress or detect formats (see `detect`), or know the syntax of
//! any one format.
//!
//! The line reader is `reader.rs`, the byte-level syntax every format's parser shares
//! (numbers, times, pids, blanks and tokens, quoting) is `syntax.rs`; this file is the
//! driver and the vocabulary a format's parser answers in.

mod reader;
mod syntax;
#[cfg(test)]
mod tests;

use crate::error::FormatError;
use crate::options::OpenOptions;
use crate::record::{Record, SkipCounts};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{BufRead, ErrorKind};
use std::ops::Range;

pub(crate) use reader::{LineError, LineReader};
use syntax::column_of;
pub(crate) use syntax::{
    check_address, hex_prefix, is_blank, offset_in, parse_decimal, parse_hex, parse_pid, parse_time, quote,
    seconds, skip_blanks, split_token, token_is, trim_end, trim_start, usual_cpu, usual_pid, usual_time,
    utf8_error,
};

/// Longest line accepted, in bytes, line terminator excluded. An `R|W` access line needs at
/// most 14 bytes, the rest is room for its header lines and comments, and it is far above
/// any real perf, ftrace or lackey line.
pub(crate) const LINE_BYTES_MAX: usize = 4096;
const _: () = assert!(
    crate::params::COLUMN_MAX as usize == LINE_BYTES_MAX + 1,
    "a line holds one more field than bytes"
);

/// Virtual addresses must lie below 2^57, the top of 5-level paging's address space.
pub(crate) const ADDRESS_LIMIT: u64 = 1 << 57;

/// The kernel's largest pid (`PID_MAX_LIMIT` on 64-bit kernels); larger pids or tids are
/// corrupt, and the cap bounds the per-thread state a reader keeps.
pub(crate) const PID_MAX: u32 = 4 * 1024 * 1024;

/// Distinct "other event" names counted one by one; names beyond these share one count, so
/// a corrupt trace cannot grow the skip counts without bound.
const EVENT_NAMES_MAX: usize = 256;

/// Longest excerpt of offending text quoted in an error message, in characters.
pub(crate) const QUOTE_CHARS_MAX: usize = 40;

/// A reason for skipping a line, as counted in [`SkipCounts`].
pub(crate) const MALFORMED: &str = "malformed line";
pub(crate) const NOT_UTF8: &str = "non-UTF-8 line";
pub(crate) const TOO_LONG: &str = "line too long";
pub(crate) const OUT_OF_RANGE: &str = "address out of range";
pub(crate) const BACKWARDS: &str = "time went backwards";

/// What a line that does not parse, or goes back in time, does to the reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BadLines {
    /// The reading stops at it with an error naming the line (strict mode).
    Fail,
    /// It is skipped and counted by reason ([`SkipCounts`], lenient mode).
    Skip,
}

impl BadLines {
    /// What `options` ask for: skipping when lenient.
    pub(crate) fn of(options: &OpenOptions) -> BadLines {
        if options.lenient {
            BadLines::Skip
        } else {
            BadLines::Fail
        }
    }
}

/// What one line means.
#[derive(Debug)]
pub(crate) enum Step {
    /// An access to the pages `first_page..=last_page`.
    Access(LineAccess),
    /// A blank or comment line: carries nothing and is not counted.
    Blank,
    /// A line deliberately skipped (for instance a valgrind message), counted by reason.
    Skip(&'static str),
    /// A line of another event, counted as "other event: <name>"; the range is the name's
    /// place in the line.
    OtherEvent(Range<usize>),
    /// A line that does not parse: an error, or in lenient mode a skip counted by reason.
    Bad {
        /// The skip reason in lenient mode.
        reason: &'static str,
        /// Byte offset in the line of the offending text, when one place is to blame; the
        /// error names its column.
        at: Option<usize>,
        /// What was found and what was expected.
        message: String,
    },
}

impl Step {
    pub(crate) fn malformed(message: String) -> Step {
        Step::Bad { reason: MALFORMED, at: None, message }
    }

    /// A malformed line whose offending text starts at byte `at`.
    pub(crate) fn malformed_at(at: usize, message: String) -> Step {
        Step::Bad { reason: MALFORMED, at: Some(at), message }
    }
}

/// An access a line describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineAccess {
    pub(crate) pid: u32,
    pub(crate) tid: u32,
    pub(crate) time_ns: Option<u64>,
    pub(crate) first_page: u64,
    pub(crate) last_page: u64,
    pub(crate) write: bool,
}

/// The syntax of one text format.
pub(crate) trait LineFormat: Send {
    /// What `line` (terminator and a trailing `\r` excluded, valid UTF-8) means.
    fn parse_line(&mut self, line: &[u8]) -> Step;
    /// Pages the format's header declared, if it has such a header.
    fn declared_pages(&self) -> Option<u64> {
        None
    }
    /// The access of `line` (terminator excluded, not yet checked for UTF-8) when it has
    /// the format's plainest shape: one page, no time, nothing to skip or count, and what
    /// [`LineFormat::parse_line`] would make of it too. `None` sends the line through
    /// `parse_line`. [`LineSource`] reads runs of such lines straight from the reader's
    /// buffer. The default recognises none.
    fn plain_access(&self, _line: &[u8]) -> Option<LineAccess> {
        None
    }
    /// Whether a record timed before its thread's previous one is an error (or, in lenient
    /// mode, a skip). The default says yes: a captured event stream never goes back in
    /// time. A format whose times are request times taken as they come (libCacheSim's
    /// csv, like its oracleGeneral) says no.
    fn checks_time_order(&self) -> bool {
        true
    }
    /// Checks, at the end of the input after `n_lines` lines, that the trace is whole: an
    /// error says why it is not (a format whose header promised an end marker that never
    /// came). The default finds every end fine.
    fn check_end(&self, _n_lines: u64) -> Result<(), String> {
        Ok(())
    }
}

/// The last time seen per thread.
#[derive(Default)]
struct ThreadTimes {
    last_ns: HashMap<u64, u64, BuildHasherDefault<IdHasher>>,
}

impl ThreadTimes {
    /// Records `time_ns` for the thread, or returns the thread's later previous time.
    fn advance(&mut self, pid: u32, tid: u32, time_ns: u64) -> Result<(), u64> {
        let key = (u64::from(pid) << 32) | u64::from(tid);
        let last_ns = self.last_ns.entry(key).or_insert(0);
        if time_ns < *last_ns {
            return Err(*last_ns);
        }
        *last_ns = time_ns;
        Ok(())
    }
}

/// A fast hasher for integer ids (pids, tids). Not resistant to chosen collisions; the ids
/// are capped by [`PID_MAX`], which bounds the harm.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// Pages still to be emitted of an access that spans several.
#[derive(Clone, Copy, Debug)]
struct PageRun {
    record: Record,
    last_page: u64,
}

/// A [`crate::RecordSource`] over any [`LineFormat`].
pub(crate) struct LineSource<F> {
    lines: LineReader,
    format: F,
    skipped: SkipCounts,
    /// The "other event: <name>" key being built, kept to avoid an allocation per line.
    event_key: String,
    bad_lines: BadLines,
    times: ThreadTimes,
    run: Option<PageRun>,
    failed: bool,
}

/// What the driver makes of one line.
enum Outcome {
    Access(LineAccess),
    Next,
    Bad { reason: &'static str, column: Option<u64>, message: String },
}

impl<F: LineFormat> LineSource<F> {
    /// A source reading `reader` from its first line.
    pub(crate) fn new(reader: Box<dyn BufRead + Send>, format: F, bad_lines: BadLines) -> Self {
        LineSource::with_lines(LineReader::new(reader), format, bad_lines)
    }

    /// A source that goes on from the lines `lines` has already read (a format's header),
    /// numbering lines on from there.
    pub(crate) fn with_lines(lines: LineReader, format: F, bad_lines: BadLines) -> Self {
        LineSource {
            lines,
            format,
            skipped: SkipCounts::default(),
            event_key: String::new(),
            bad_lines,
            times: ThreadTimes::default(),
            run: None,
            failed: false,
        }
    }

    /// The number of the last line read.
    pub(crate) fn line(&self) -> u64 {
        self.lines.line()
    }

    pub(crate) fn format(&self) -> &F {
        &self.format
    }

    pub(crate) fn skipped(&self) -> &SkipCounts {
        &self.skipped
    }

    pub(crate) fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
        if let Some(run) = &mut self.run {
            let record = run.record;
            if record.page == run.last_page {
                self.run = None;
            } else {
                run.record.page += 1;
            }
            return Ok(Some(record));
        }
        if self.failed {
            return Err(FormatError::line(self.lines.line(), "reading stopped at an earlier error".into()));
        }
        loop {
            let format = &mut self.format;
            let skipped = &mut self.skipped;
            let event_key = &mut self.event_key;
            let outcome = match self.lines.next_line(|line| classify(format, line, skipped, event_key)) {
                Ok(None) => {
                    let n_lines = self.lines.line();
                    return match self.format.check_end(n_lines) {
                        Ok(()) => Ok(None),
                        Err(message) => {
                            self.failed = true;
                            Err(FormatError::line(n_lines, message))
                        }
                    };
                }
                Ok(Some(outcome)) => outcome,
                Err(LineError::TooLong) => Outcome::Bad {
                    reason: TOO_LONG,
                    column: None,
                    message: format!("line is longer than {LINE_BYTES_MAX} bytes"),
                },
                Err(LineError::Io(err)) => return Err(self.read_error(err)),
            };
            let access = match outcome {
                Outcome::Next => continue,
                Outcome::Access(access) => access,
                Outcome::Bad { reason, column, message } => {
                    if self.bad_lines == BadLines::Skip {
                        self.skipped.add(reason);
                        continue;
                    }
                    self.failed = true;
                    return Err(FormatError::Line { line: self.lines.line(), column, message });
                }
            };
            if let Some(time_ns) = access.time_ns.filter(|_| self.format.checks_time_order()) {
                if let Err(last_ns) = self.times.advance(access.pid, access.tid, time_ns) {
                    if self.bad_lines == BadLines::Skip {
                        self.skipped.add(BACKWARDS);
                        continue;
                    }
                    self.failed = true;
                    return Err(FormatError::Line {
                        line: self.lines.line(),
                        column: None,
                        message: format!(
                            "time {} of thread {} is before its previous record at {}",
                            seconds(time_ns),
                            access.tid,
                            seconds(last_ns)
                        ),
                    });
                }
            }
            let record = Record {
                pid: access.pid,
                tid: access.tid,
                time_ns: access.time_ns,
                page: access.first_page,
                write: access.write,
            };
            if access.last_page > access.first_page {
                self.run = Some(PageRun {
                    record: Record { page: access.first_page + 1, ..record },
                    last_page: access.last_page,
                });
            }
            return Ok(Some(record));
        }
    }
}

impl<F: LineFormat> LineSource<F> {
    /// Stops the reader on a read error, reporting the line being read.
    fn read_error(&mut self, err: std::io::Error) -> FormatError {
        self.failed = true;
        let line = self.lines.count_unread_line();
        FormatError::line(line, format!("read error: {err}"))
    }

    /// Appends up to `n_max` records, as [`LineSource::next_record`] would give them.
    pub(crate) fn next_records(&mut self, out: &mut Vec<Record>, n_max: usize) -> Result<(), FormatError> {
        let mut wanted = n_max;
        while wanted > 0 {
            if self.run.is_none() && !self.failed && !self.lines.is_discarding() {
                let n = self.plain_records(out, wanted)?;
                if n > 0 {
                    wanted -= n;
                    continue;
                }
            }
            match self.next_record()? {
                Some(record) => out.push(record),
                None => break,
            }
            wanted -= 1;
        }
        Ok(())
    }

    /// Appends the records of the plain lines ([`LineFormat::plain_access`]) that start
    /// the reader's buffer, whole lines only, at most `n_max`; returns how many. Such a
    /// line goes through no other step of [`LineSource::next_record`]: it is ASCII, has no
    /// time and names one page.
    fn plain_records(&mut self, out: &mut Vec<Record>, n_max: usize) -> Result<usize, FormatError> {
        let available = match self.lines.buffer() {
            Ok(available) => available,
            Err(err) if err.kind() == ErrorKind::Interrupted => return Ok(0),
            Err(err) => return Err(self.read_error(err)),
        };
        let (mut taken, mut n) = (0, 0);
        for end in memchr::memchr_iter(b'\n', available) {
            let Some(access) = self.format.plain_access(&available[taken..end]) else { break };
            debug_assert!(access.time_ns.is_none() && access.first_page == access.last_page);
            out.push(Record {
                pid: access.pid,
                tid: access.tid,
                time_ns: None,
                page: access.first_page,
                write: access.write,
            });
            taken = end + 1;
            n += 1;
            if n == n_max {
                break;
            }
        }
        self.lines.consume_lines(taken, n as u64);
        Ok(n)
    }
}

/// Classifies one line: non-UTF-8 lines are bad whatever they hold, skips are counted here.
fn classify<F: LineFormat>(
    format: &mut F,
    line: &[u8],
    skipped: &mut SkipCounts,
    event_key: &mut String,
) -> Outcome {
    if let Some(at) = utf8_error(line) {
        let message = format!("line is not valid UTF-8 (byte 0x{:02x})", line[at]);
        return Outcome::Bad { reason: NOT_UTF8, column: Some(column_of(line, at)), message };
    }
    match format.parse_line(line) {
        Step::Access(access) => Outcome::Access(access),
        Step::Blank => Outcome::Next,
        Step::Skip(reason) => {
            skipped.add(reason);
            Outcome::Next
        }
        Step::OtherEvent(range) => {
            count_other_event(skipped, event_key, &line[range]);
            Outcome::Next
        }
        Step::Bad { reason, at, message } => {
            Outcome::Bad { reason, column: at.map(|at| column_of(line, at)), message }
        }
    }
}

fn count_other_event(skipped: &mut SkipCounts, event_key: &mut String, name: &[u8]) {
    event_key.clear();
    event_key.push_str("other event: ");
    event_key.push_str(&String::from_utf8_lossy(name));
    if let Some(count) = skipped.0.get_mut(event_key.as_str()) {
        *count += 1;
        return;
    }
    if skipped.0.len() >= EVENT_NAMES_MAX {
        skipped.add("other event: (names beyond the first 256)");
        return;
    }
    skipped.0.insert(event_key.clone(), 1);
}

/// Gives a reader that wraps a [`LineSource`] in a `source` field its `line()` accessor and
/// its [`crate::record::RecordSource`] implementation, which are the same for every
/// line-based format but the format's name.
macro_rules! line_reader {
    ($reader:ident, $format:expr) => {
        impl $reader {
            /// The 1-based number of the last line read.
            pub fn line(&self) -> u64 {
                self.source.line()
            }
        }

        impl crate::record::RecordSource for $reader {
            fn next_record(&mut self) -> Result<Option<crate::record::Record>, crate::error::FormatError> {
                self.source.next_record()
            }
            fn next_records(
                &mut self,
                out: &mut Vec<crate::record::Record>,
                n_max: usize,
            ) -> Result<(), crate::error::FormatError> {
                self.source.next_records(out, n_max)
            }
            fn skipped(&self) -> &crate::record::SkipCounts {
                self.source.skipped()
            }
            fn format(&self) -> crate::format::Format {
                $format
            }
            fn declared_pages(&self) -> Option<u64> {
                crate::lines::LineFormat::declared_pages(self.source.format())
            }
        }
    };
}
pub(crate) use line_reader;
