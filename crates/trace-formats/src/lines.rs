//! What the text formats share: a bounded line reader and the driver that turns parsed
//! lines into [`Record`]s.
//!
//! Each text format only says what one line means (a [`Step`]); this module does the rest
//! the same way for all of them: it keeps one line buffer of at most [`LINE_BYTES_MAX`]
//! bytes and borrows lines straight from the reader's buffer when they do not straddle two
//! fills of it, rejects lines that are not UTF-8, checks that time never goes backwards
//! within one thread (in the formats that want it checked), expands an access that spans several pages into one record per
//! page, and either stops at the first bad line (strict mode) or skips it and counts it by
//! reason (lenient mode). It allocates nothing per line on the common path.
//!
//! What it does not do: decompress or detect formats (see `detect`), or know any format's
//! syntax.

use crate::error::FormatError;
use crate::record::{Record, SkipCounts};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{BufRead, ErrorKind};
use std::ops::Range;

/// Longest line accepted, in bytes, line terminator excluded. An `R|W` access line needs at
/// most 14 bytes, the rest is room for its header lines and comments, and it is far above
/// any real perf, ftrace or lackey line.
pub(crate) const LINE_BYTES_MAX: usize = 4096;

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

/// The byte offset of `part` within `line`, of which it must be a subslice.
pub(crate) fn offset_in(line: &[u8], part: &[u8]) -> usize {
    let offset = (part.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
    debug_assert!(offset <= line.len(), "not a part of the line");
    offset.min(line.len())
}

/// The 1-based column, in characters, of byte offset `at` of a UTF-8 line.
fn column_of(line: &[u8], at: usize) -> u64 {
    // Every character starts with a byte that is not a continuation byte (0b10xx_xxxx).
    let n_chars = line[..at.min(line.len())].iter().filter(|&&byte| byte & 0xc0 != 0x80).count();
    n_chars as u64 + 1
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
}

/// Why a line could not be read.
#[derive(Debug)]
pub(crate) enum LineError {
    Io(std::io::Error),
    TooLong,
}

/// Reads lines of at most [`LINE_BYTES_MAX`] bytes.
pub(crate) struct LineReader {
    reader: Box<dyn BufRead + Send>,
    /// A line that straddles fills of the reader's buffer, gathered here.
    partial: Vec<u8>,
    /// Number of the last line read, 0 before the first.
    line: u64,
    /// The last line was too long: its rest is still to be skipped.
    discarding: bool,
}

impl LineReader {
    /// A reader whose next line is line 1.
    pub(crate) fn new(reader: Box<dyn BufRead + Send>) -> LineReader {
        LineReader { reader, partial: Vec::new(), line: 0, discarding: false }
    }

    /// The number of the last line read.
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// Reads the next line and hands its bytes, without the terminator and a trailing
    /// `\r`, to `parse`. `Ok(None)` at the end of the input. A line longer than the limit is
    /// an error as soon as the limit is passed; its rest is skipped, without buffering, on
    /// the next call.
    pub(crate) fn next_line<T>(&mut self, parse: impl FnOnce(&[u8]) -> T) -> Result<Option<T>, LineError> {
        if self.discarding {
            self.discard_rest_of_line()?;
        }
        self.partial.clear();
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(err) => return Err(LineError::Io(err)),
            };
            if available.is_empty() {
                if self.partial.is_empty() {
                    return Ok(None);
                }
                // A last line without a terminator.
                self.line += 1;
                return Ok(Some(parse(strip_cr(&self.partial))));
            }
            let newline = memchr::memchr(b'\n', available);
            let taken = newline.unwrap_or(available.len());
            if self.partial.len() + taken > LINE_BYTES_MAX {
                self.line += 1;
                self.discarding = true;
                return Err(LineError::TooLong);
            }
            match newline {
                Some(end) if self.partial.is_empty() => {
                    // The common case: the whole line sits in the reader's buffer.
                    self.line += 1;
                    let res = parse(strip_cr(&available[..end]));
                    self.reader.consume(end + 1);
                    return Ok(Some(res));
                }
                Some(end) => {
                    self.partial.extend_from_slice(&available[..end]);
                    self.reader.consume(end + 1);
                    self.line += 1;
                    return Ok(Some(parse(strip_cr(&self.partial))));
                }
                None => {
                    self.partial.extend_from_slice(available);
                    self.reader.consume(taken);
                }
            }
        }
    }

    /// Whether the next line starts with `byte`, looked at without consuming anything;
    /// `false` at the end of the input. The `R|W` text format tells its header lines apart
    /// this way.
    pub(crate) fn next_line_starts_with(&mut self, byte: u8) -> Result<bool, LineError> {
        if self.discarding {
            self.discard_rest_of_line()?;
        }
        loop {
            match self.reader.fill_buf() {
                Ok(available) => return Ok(available.first() == Some(&byte)),
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(err) => return Err(LineError::Io(err)),
            }
        }
    }

    /// Consumes input up to and including the next newline.
    fn discard_rest_of_line(&mut self) -> Result<(), LineError> {
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(err) => return Err(LineError::Io(err)),
            };
            if available.is_empty() {
                self.discarding = false;
                return Ok(());
            }
            match memchr::memchr(b'\n', available) {
                Some(end) => {
                    self.reader.consume(end + 1);
                    self.discarding = false;
                    return Ok(());
                }
                None => {
                    let n = available.len();
                    self.reader.consume(n);
                }
            }
        }
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
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
    lenient: bool,
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
    pub(crate) fn new(reader: Box<dyn BufRead + Send>, format: F, lenient: bool) -> Self {
        LineSource::with_lines(LineReader::new(reader), format, lenient)
    }

    /// A source that goes on from the lines `lines` has already read (a format's header),
    /// numbering lines on from there.
    pub(crate) fn with_lines(lines: LineReader, format: F, lenient: bool) -> Self {
        LineSource {
            lines,
            format,
            skipped: SkipCounts::default(),
            event_key: String::new(),
            lenient,
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
                Ok(None) => return Ok(None),
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
                    if self.lenient {
                        self.skipped.add(reason);
                        continue;
                    }
                    self.failed = true;
                    return Err(FormatError::Line { line: self.lines.line(), column, message });
                }
            };
            if let Some(time_ns) = access.time_ns.filter(|_| self.format.checks_time_order()) {
                if let Err(last_ns) = self.times.advance(access.pid, access.tid, time_ns) {
                    if self.lenient {
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
        self.lines.line += 1;
        FormatError::line(self.lines.line(), format!("read error: {err}"))
    }

    /// Appends up to `n_max` records, as [`LineSource::next_record`] would give them.
    pub(crate) fn next_records(&mut self, out: &mut Vec<Record>, n_max: usize) -> Result<(), FormatError> {
        let mut wanted = n_max;
        while wanted > 0 {
            if self.run.is_none() && !self.failed && !self.lines.discarding {
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
        let available = match self.lines.reader.fill_buf() {
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
        self.lines.reader.consume(taken);
        self.lines.line += n as u64;
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

/// Whether every byte is ASCII: ORs the line together sixteen bytes at a time, without
/// branching per chunk, and tests the high bits once.
#[inline]
fn is_ascii(line: &[u8]) -> bool {
    let mut chunks = line.chunks_exact(16);
    let mut high = 0u64;
    for chunk in &mut chunks {
        let (low_half, high_half) = chunk.split_at(8);
        high |= u64::from_le_bytes(low_half.try_into().unwrap_or_default())
            | u64::from_le_bytes(high_half.try_into().unwrap_or_default());
    }
    let tail = chunks.remainder().iter().fold(0u8, |acc, &byte| acc | byte);
    high & 0x8080_8080_8080_8080 == 0 && tail < 0x80
}

/// The offset of the first byte that makes a line invalid UTF-8, or `None` when it is valid.
#[inline]
pub(crate) fn utf8_error(line: &[u8]) -> Option<usize> {
    // Nearly every line is plain ASCII, which is cheaper to confirm than UTF-8 in general.
    if is_ascii(line) {
        return None;
    }
    let err = std::str::from_utf8(line).err()?;
    Some(err.valid_up_to())
}

/// Index of the first byte at or after `at` that is not a blank (or the line's length).
#[inline]
pub(crate) fn skip_blanks(line: &[u8], mut at: usize) -> usize {
    while at < line.len() && is_blank(line[at]) {
        at += 1;
    }
    at
}

/// Reads the decimal digits starting at `at`, at most `max` of them (`max` <= 19): their
/// value and the index after the last one. `None` if there is no digit or more than `max`.
#[inline]
pub(crate) fn digits_at(line: &[u8], at: usize, max: usize) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    let mut end = at;
    while let Some(&byte) = line.get(end) {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value * 10 + u64::from(digit);
        end += 1;
        if end - at > max {
            return None;
        }
    }
    (end > at).then_some((value, end))
}

/// Powers of ten that scale a fraction of `n` decimals to nanoseconds, indexed by `n`.
const FRACTION_SCALE: [u64; 10] = [0, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];

/// The usual shape of a timestamp token, starting at `at`: `<digits>.<digits>:` followed by
/// a blank or the end of the line, with at most ten whole digits (so no overflow) and one
/// to nine decimals. Returns the time in nanoseconds and the index after the colon, or
/// `None` for anything else, which the general parser then handles.
#[inline]
pub(crate) fn usual_time(line: &[u8], at: usize) -> Option<(u64, usize)> {
    let (whole, dot) = digits_at(line, at, 10)?;
    if line.get(dot) != Some(&b'.') {
        return None;
    }
    let (fraction, colon) = digits_at(line, dot + 1, 9)?;
    if line.get(colon) != Some(&b':') || line.get(colon + 1).is_some_and(|&byte| !is_blank(byte)) {
        return None;
    }
    Some((whole * 1_000_000_000 + fraction * FRACTION_SCALE[colon - dot - 1], colon + 1))
}

/// Parses a pid or tid of at most seven digits within the kernel's limit, or `None`.
#[inline]
pub(crate) fn usual_pid(line: &[u8], at: usize) -> Option<(u32, usize)> {
    let (value, end) = digits_at(line, at, 7)?;
    (value <= u64::from(PID_MAX)).then_some((value as u32, end))
}

/// Matches `[<digits>]` at `open` followed by a blank; returns the index of that blank.
#[inline]
pub(crate) fn usual_cpu(line: &[u8], open: usize) -> Option<usize> {
    let mut at = open + 1;
    while line.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    if at == open + 1 || line.get(at) != Some(&b']') || !line.get(at + 1).is_some_and(|&byte| is_blank(byte))
    {
        return None;
    }
    Some(at + 1)
}

/// Matches `event` as a whole blank-separated token at `at`; returns the index after it.
#[inline]
pub(crate) fn token_is(line: &[u8], at: usize, event: &[u8]) -> Option<usize> {
    let end = at + event.len();
    if line.get(at..end)? != event || line.get(end).is_some_and(|&byte| !is_blank(byte)) {
        return None;
    }
    Some(end)
}

/// Quotes offending text for a message, cut to [`QUOTE_CHARS_MAX`] characters.
pub(crate) fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(QUOTE_CHARS_MAX) {
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// Renders nanoseconds as seconds with nine decimals, for messages.
pub(crate) fn seconds(time_ns: u64) -> String {
    format!("{}.{:09}", time_ns / 1_000_000_000, time_ns % 1_000_000_000)
}

/// Parses `seconds.fraction` (1 to 9 decimals) exactly into nanoseconds.
#[inline]
pub(crate) fn parse_time(text: &[u8]) -> Result<u64, String> {
    let bad = || format!("timestamp {} is not seconds.fraction", quote(text));
    let dot = memchr::memchr(b'.', text).ok_or_else(bad)?;
    let (whole, fraction) = (&text[..dot], &text[dot + 1..]);
    if whole.is_empty() || fraction.is_empty() || fraction.len() > 9 {
        return Err(bad());
    }
    let whole = parse_decimal(whole).ok_or_else(bad)?;
    let mut fraction_ns = parse_decimal(fraction).ok_or_else(bad)?;
    for _ in fraction.len()..9 {
        fraction_ns *= 10;
    }
    whole
        .checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(fraction_ns))
        .ok_or_else(|| format!("timestamp {} is too large", quote(text)))
}

/// Parses ASCII decimal digits; `None` if empty, not digits, or above `u64::MAX`.
#[inline]
pub(crate) fn parse_decimal(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    let mut value: u64 = 0;
    if text.len() <= 19 {
        // Nineteen digits cannot overflow.
        for &byte in text {
            let digit = byte.wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            value = value * 10 + u64::from(digit);
        }
        return Some(value);
    }
    for &byte in text {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(digit))?;
    }
    Some(value)
}

/// The value of each byte as a hex digit, or 0xff.
const HEX_VALUES: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = match byte as u8 {
            digit @ b'0'..=b'9' => digit - b'0',
            digit @ b'a'..=b'f' => digit - b'a' + 10,
            digit @ b'A'..=b'F' => digit - b'A' + 10,
            _ => 0xff,
        };
        byte += 1;
    }
    table
};

/// Parses ASCII hex digits; `None` if empty, not hex, or above `u64::MAX`.
#[inline]
pub(crate) fn parse_hex(text: &[u8]) -> Option<u64> {
    let (digits, value) = hex_prefix(text);
    if digits != text.len() || digits == 0 {
        return None;
    }
    value
}

/// Parses the hex digits that start `text`: how many there are, and their value (`None`
/// above `u64::MAX`).
#[inline]
pub(crate) fn hex_prefix(text: &[u8]) -> (usize, Option<u64>) {
    let mut value: u64 = 0;
    let mut digits = 0;
    let mut overflow = false;
    for &byte in text {
        let digit = HEX_VALUES[usize::from(byte)];
        if digit == 0xff {
            break;
        }
        overflow |= value >> 60 != 0;
        value = (value << 4) | u64::from(digit);
        digits += 1;
    }
    (digits, (!overflow).then_some(value))
}

/// Parses a pid or tid, checking the kernel's limit.
#[inline]
pub(crate) fn parse_pid(text: &[u8], what: &str) -> Result<u32, String> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return Err(format!("{what} {} is not a decimal number", quote(text)));
    }
    match parse_decimal(text) {
        Some(pid) if pid <= u64::from(PID_MAX) => Ok(pid as u32),
        _ => Err(format!("{what} {} exceeds the kernel's largest pid {PID_MAX}", quote(text))),
    }
}

/// Checks a virtual address against [`ADDRESS_LIMIT`].
pub(crate) fn check_address(address: u64) -> Result<u64, Step> {
    if address >= ADDRESS_LIMIT {
        return Err(Step::Bad {
            reason: OUT_OF_RANGE,
            at: None,
            message: format!("address 0x{address:x} is beyond the 57-bit virtual address space"),
        });
    }
    Ok(address)
}

/// Whether a byte is a space or a tab.
#[inline]
pub(crate) fn is_blank(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

#[inline]
pub(crate) fn trim_start(mut bytes: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = bytes {
        if !is_blank(*first) {
            break;
        }
        bytes = rest;
    }
    bytes
}

#[inline]
pub(crate) fn trim_end(mut bytes: &[u8]) -> &[u8] {
    while let [rest @ .., last] = bytes {
        if !is_blank(*last) {
            break;
        }
        bytes = rest;
    }
    bytes
}

/// Splits off the first blank-separated token: `(token, rest)` with `rest` starting at the
/// blank after the token (or empty).
#[inline]
pub(crate) fn split_token(bytes: &[u8]) -> (&[u8], &[u8]) {
    let bytes = trim_start(bytes);
    let end = bytes.iter().position(|&byte| is_blank(byte)).unwrap_or(bytes.len());
    bytes.split_at(end)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_exactly() {
        assert_eq!(parse_time(b"2364.742742"), Ok(2_364_742_742_000));
        assert_eq!(parse_time(b"0.000000001"), Ok(1));
        assert_eq!(parse_time(b"1.5"), Ok(1_500_000_000));
        assert_eq!(parse_time(b"18446744073.709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_time(b"18446744073.709551616"),
            Err("timestamp \"18446744073.709551616\" is too large".to_string())
        );
        assert_eq!(
            parse_time(b"1.0000000001"),
            Err("timestamp \"1.0000000001\" is not seconds.fraction".to_string())
        );
        assert!(parse_time(b"12").is_err());
        assert!(parse_time(b".5").is_err());
        assert!(parse_time(b"5.").is_err());
        assert!(parse_time(b"5.-1").is_err());
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let line = "p\u{e9}\u{e9} 12".as_bytes();
        let digits = &line[6..];
        assert_eq!(offset_in(line, digits), 6);
        assert_eq!(column_of(line, offset_in(line, digits)), 5);
        assert_eq!(column_of(line, 0), 1);
        assert_eq!(column_of(line, line.len()), 7);
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_hex(b"ffffffffffffffff"), Some(u64::MAX));
        assert_eq!(parse_hex(b"10000000000000000"), None);
        assert_eq!(parse_hex(b"0000000000000000001"), Some(1));
        assert_eq!(parse_hex(b"x"), None);
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
        assert_eq!(parse_pid(b"4194304", "pid"), Ok(4_194_304));
        assert_eq!(
            parse_pid(b"4194305", "pid"),
            Err("pid \"4194305\" exceeds the kernel's largest pid 4194304".into())
        );
        assert_eq!(parse_pid(b"12a", "tid"), Err("tid \"12a\" is not a decimal number".into()));
    }

    #[test]
    fn ascii_check_sees_every_byte() {
        for len in 0..40 {
            let mut line = vec![b'a'; len];
            assert!(is_ascii(&line));
            for at in 0..len {
                line[at] = 0xc3;
                assert!(!is_ascii(&line), "{len} {at}");
                assert!(utf8_error(&line).is_some());
                line[at] = b'a';
            }
        }
    }

    #[test]
    fn ids_hash_apart() {
        let hash = |n: u64| {
            let mut hasher = IdHasher::default();
            hasher.write_u64(n);
            hasher.finish()
        };
        assert_ne!(hash(1), hash(2));
        assert_ne!(hash(1 << 32), hash(1));
    }
}
