//! libCacheSim's binary traces: `oracleGeneral` and `lcs`, read as page accesses, and an
//! `oracleGeneral` writer.
//!
//! libCacheSim (<https://github.com/1a1a11a/libCacheSim>) shares most public cache traces
//! as `oracleGeneral`: packed little-endian 24-byte records and no header
//! (`libCacheSim/traceReader/customizedReader/oracle/oracleGeneralBin.h`):
//!
//! | offset | size | field               | meaning                                              |
//! |--------|------|---------------------|------------------------------------------------------|
//! | 0      | 4    | `clock_time`        | u32, seconds                                         |
//! | 4      | 8    | `obj_id`            | u64, the object requested                            |
//! | 12     | 4    | `obj_size`          | u32, bytes                                           |
//! | 16     | 8    | `next_access_vtime` | i64, index of the next request of the same object, counted from the trace's first request; `-1` (or `i64::MAX`) for none |
//!
//! The newer `lcs` format (`libCacheSim/traceReader/customizedReader/lcs.h`) starts with
//! an 8192-byte header: u64 start magic `0x123456789abcdef0` at offset 0, u64 version at
//! offset 8, trace statistics, and the same magic again as the header's last 8 bytes. The
//! version fixes the record layout that follows: version 1 is oracleGeneral's; version 2
//! (28 bytes) adds a u32 of operation and tenant before `next_access_vtime`; version 3
//! (36 bytes) widens `obj_size` to an i64 and adds a u32 time-to-live; versions 4 to 8 are
//! version 3 followed by 1, 2, 4, 8 or 16 u32 features.
//!
//! Every request is read as a read access of one page by task 0/0; the operation of lcs
//! version 2 and later and the object size are not used. An object becomes a page by the
//! [`ObjectMap`] in [`OpenOptions::object_map`]. `clock_time` becomes the record's time
//! (whole seconds, so with timestamp pacing the requests of one second run back to back).
//! `next_access_vtime` is kept for callers through [`RecordSource::next_access`]: it
//! names the next request of the same *object*, which is the next access of the same page
//! under the dense mapping, and may not be under the modulo one (two objects can share a
//! page). Unlike libCacheSim's readers, requests of size 0 are kept: they are still
//! requests, and `next_access_vtime` indices count them.
//!
//! Reading streams with a fixed buffer, plus, under the dense mapping, one hash map entry
//! per distinct object. A `next_access_vtime` that does not point forward is an error; one
//! that points beyond the trace's end cannot be told while streaming and is passed on.
//!
//! [`OracleGeneralWriter`] writes oracleGeneral. It must know each request's next access
//! before writing it, so it keeps the whole trace in memory (12 bytes per request, then
//! 8 more per request and one hash map entry per distinct page while it finishes) and
//! writes everything in [`OracleGeneralWriter::finish`].

use crate::error::FormatError;
use crate::format::Format;
use crate::objects::{ObjectMapTable, ObjectPages};
use crate::options::OpenOptions;
pub use crate::options::{ObjectMap, REGION_PAGES_DEFAULT, REGION_PAGES_MAX};
use crate::record::{NextAccess, Record, RecordSource, SkipCounts};
use std::io::{ErrorKind, Read, Write};

/// Bytes in one oracleGeneral record (and one lcs version 1 record).
pub const RECORD_BYTES: usize = 24;
/// Bytes in an lcs header.
pub const LCS_HEADER_BYTES: usize = 8192;
/// The u64 that starts and ends an lcs header, little-endian on disk.
pub const LCS_MAGIC: u64 = 0x1234_5678_9abc_def0;
/// lcs versions this reader knows.
const LCS_VERSION_MAX: u64 = 8;
/// Records read at a time.
const CHUNK_RECORDS: usize = 4096;
/// Below this, a `next_access_vtime` is plausible when detecting: 2^40 requests.
const VTIME_PLAUSIBLE_MAX: i64 = 1 << 40;

/// Where the fields of one record lie. Every layout starts with `clock_time` at offset 0
/// and `obj_id` at offset 4; the reader uses no other field but `next_access_vtime`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    record_bytes: usize,
    vtime_at: usize,
}

/// Offset of oracleGeneral's u32 `obj_size`, which detection checks.
const OBJ_SIZE_AT: usize = 12;

const ORACLE_GENERAL: Layout = Layout { record_bytes: RECORD_BYTES, vtime_at: 16 };

/// The record layout of an lcs version, if known.
fn lcs_layout(version: u64) -> Option<Layout> {
    match version {
        1 => Some(ORACLE_GENERAL),
        2 => Some(Layout { record_bytes: 28, vtime_at: 20 }),
        3..=LCS_VERSION_MAX => {
            let n_features = [0, 0, 0, 0, 1, 2, 4, 8, 16][version as usize];
            Some(Layout { record_bytes: 36 + 4 * n_features, vtime_at: 28 })
        }
        _ => None,
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

fn i64_at(bytes: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Decodes `next_access_vtime` of request `idx`, or says why it is wrong.
fn next_access(vtime: i64, idx: u64) -> Result<NextAccess, String> {
    if vtime == -1 || vtime == i64::MAX {
        return Ok(NextAccess::Never);
    }
    match u64::try_from(vtime) {
        Ok(next_idx) if next_idx > idx => Ok(NextAccess::At(next_idx)),
        _ => Err(format!(
            "next_access_vtime {vtime} of request {idx} does not point forward (expected -1 or an index above {idx})"
        )),
    }
}

/// Reads oracleGeneral or lcs records.
pub struct OracleReader {
    input: Box<dyn Read + Send>,
    format: Format,
    layout: Layout,
    /// The page of every object.
    pages: ObjectPages,
    /// Records read but not yet returned: `buf[pos..end]`.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Offset in the stream of `buf[0]`.
    buf_offset: u64,
    /// Index of the next request.
    idx: u64,
    next_access: Option<NextAccess>,
    /// An error stopped reading; later calls fail too.
    failed: bool,
    skipped: SkipCounts,
}

impl OracleReader {
    /// A reader of headerless oracleGeneral records.
    pub fn oracle_general(input: Box<dyn Read + Send>, options: OpenOptions) -> OracleReader {
        OracleReader::with_layout(input, Format::OracleGeneral, ORACLE_GENERAL, 0, options)
    }

    /// A reader of an lcs trace: reads and checks the header (magics and version).
    pub fn lcs(mut input: Box<dyn Read + Send>, options: OpenOptions) -> Result<OracleReader, FormatError> {
        let mut header = vec![0u8; LCS_HEADER_BYTES];
        let n_read = read_full(&mut input, &mut header)?;
        let n_magic = n_read.min(8);
        if header[..n_magic] != LCS_MAGIC.to_le_bytes()[..n_magic] {
            return Err(FormatError::Offset {
                offset: 0,
                message: format!("not an lcs trace (start magic is not {LCS_MAGIC:#x})"),
            });
        }
        if n_read < LCS_HEADER_BYTES {
            return Err(FormatError::Offset {
                offset: n_read as u64,
                message: format!("lcs header is truncated ({n_read} of {LCS_HEADER_BYTES} bytes)"),
            });
        }
        let end_magic = u64_at(&header, LCS_HEADER_BYTES - 8);
        if end_magic != LCS_MAGIC {
            return Err(FormatError::Offset {
                offset: (LCS_HEADER_BYTES - 8) as u64,
                message: format!("lcs header end magic {end_magic:#x}, expected {LCS_MAGIC:#x}"),
            });
        }
        let version = u64_at(&header, 8);
        let Some(layout) = lcs_layout(version) else {
            return Err(FormatError::Offset {
                offset: 8,
                message: format!(
                    "unsupported lcs version {version} (this reader knows 1 to {LCS_VERSION_MAX})"
                ),
            });
        };
        Ok(OracleReader::with_layout(input, Format::Lcs, layout, LCS_HEADER_BYTES as u64, options))
    }

    fn with_layout(
        input: Box<dyn Read + Send>,
        format: Format,
        layout: Layout,
        start_offset: u64,
        options: OpenOptions,
    ) -> OracleReader {
        OracleReader {
            input,
            format,
            layout,
            pages: ObjectPages::new(options.object_map),
            buf: vec![0; layout.record_bytes * CHUNK_RECORDS],
            pos: 0,
            end: 0,
            buf_offset: start_offset,
            idx: 0,
            next_access: None,
            failed: false,
            skipped: SkipCounts::default(),
        }
    }

    /// Moves the unread bytes to the front and reads more; returns the bytes available.
    fn refill(&mut self) -> Result<usize, FormatError> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.buf_offset += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        let n_read =
            read_full(&mut self.input, &mut self.buf[self.end..]).map_err(|err| FormatError::Offset {
                offset: self.buf_offset + self.end as u64,
                message: format!("read error: {err}"),
            })?;
        self.end += n_read;
        Ok(self.end)
    }

    fn fail(&mut self, offset: u64, message: String) -> FormatError {
        self.failed = true;
        FormatError::Offset { offset, message }
    }

    fn page(&mut self, obj_id: u64, offset: u64) -> Result<u64, FormatError> {
        self.pages.page_of_id(obj_id).map_err(|message| self.fail(offset, message))
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n_read = 0;
    while n_read < buf.len() {
        match input.read(&mut buf[n_read..]) {
            Ok(0) => break,
            Ok(n) => n_read += n,
            Err(err) if err.kind() == ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(n_read)
}

impl RecordSource for OracleReader {
    fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
        if self.failed {
            return Err(FormatError::Offset {
                offset: self.buf_offset + self.pos as u64,
                message: "reading stopped at an earlier error".to_string(),
            });
        }
        let record_bytes = self.layout.record_bytes;
        if self.end - self.pos < record_bytes {
            let read = self.refill();
            let n_bytes = read.inspect_err(|_| self.failed = true)?;
            if n_bytes == 0 {
                self.next_access = None;
                return Ok(None);
            }
            if n_bytes < record_bytes {
                let offset = self.buf_offset;
                let message = format!(
                    "last record is truncated: {n_bytes} of {record_bytes} bytes (request {})",
                    self.idx
                );
                return Err(self.fail(offset, message));
            }
        }
        let offset = self.buf_offset + self.pos as u64;
        let bytes = &self.buf[self.pos..self.pos + record_bytes];
        let clock_time = u32_at(bytes, 0);
        let obj_id = u64_at(bytes, 4);
        let vtime = i64_at(bytes, self.layout.vtime_at);
        let next = match next_access(vtime, self.idx) {
            Ok(next) => next,
            Err(message) => return Err(self.fail(offset + self.layout.vtime_at as u64, message)),
        };
        let page = self.page(obj_id, offset + 4)?;
        self.pos += record_bytes;
        self.idx += 1;
        self.next_access = Some(next);
        Ok(Some(Record {
            pid: 0,
            tid: 0,
            time_ns: Some(u64::from(clock_time) * 1_000_000_000),
            page,
            write: false,
        }))
    }

    fn skipped(&self) -> &SkipCounts {
        &self.skipped
    }

    fn format(&self) -> Format {
        self.format
    }

    fn next_access(&self) -> Option<NextAccess> {
        self.next_access
    }
}

/// What detection makes of the start of a headerless stream as oracleGeneral.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Guess {
    Yes,
    /// Not oracleGeneral, and why.
    No(String),
    /// Plausible so far; more bytes (or the knowledge that there are none) are needed.
    NeedMore,
}

/// Guesses whether `prefix` starts an oracleGeneral trace: every whole record in it has a
/// nonzero size and a `next_access_vtime` of -1, `i64::MAX` or above its own index (and
/// below 2^40, or below the number of records when `prefix` is the whole trace). When
/// `prefix` is the whole trace (`at_end` before `peek_bytes`), its length must be a
/// multiple of 24; a longer trace's length is not known here, and a truncated last record
/// is the reader's error.
pub(crate) fn guess_oracle_general(prefix: &[u8], at_end: bool, peek_bytes: usize) -> Guess {
    let whole = at_end && prefix.len() < peek_bytes;
    let n_records = prefix.len() / RECORD_BYTES;
    let vtime_max = if whole { n_records as i64 } else { VTIME_PLAUSIBLE_MAX };
    for (idx, bytes) in prefix.chunks_exact(RECORD_BYTES).enumerate() {
        let offset = idx * RECORD_BYTES;
        let size = u32_at(bytes, OBJ_SIZE_AT);
        if size == 0 {
            return Guess::No(format!("record {idx} (byte offset {offset}) has obj_size 0"));
        }
        let vtime = i64_at(bytes, ORACLE_GENERAL.vtime_at);
        if !(vtime == -1 || vtime == i64::MAX || (vtime > idx as i64 && vtime < vtime_max)) {
            return Guess::No(format!(
                "record {idx} (byte offset {offset}) has next_access_vtime {vtime}, not -1 or an index in {}..{vtime_max}",
                idx + 1
            ));
        }
    }
    if !at_end {
        return Guess::NeedMore;
    }
    if n_records == 0 {
        return Guess::No(format!("{} bytes hold no whole {RECORD_BYTES}-byte record", prefix.len()));
    }
    if whole && !prefix.len().is_multiple_of(RECORD_BYTES) {
        return Guess::No(format!("its length, {} bytes, is not a multiple of {RECORD_BYTES}", prefix.len()));
    }
    Guess::Yes
}

/// Writes oracleGeneral: collects every request, then computes each one's
/// `next_access_vtime` with one backward pass and writes the records in
/// [`OracleGeneralWriter::finish`]. Each record is a request of object `page` of 4096
/// bytes at `time_ns` in whole seconds (0 without a time); pid, tid and the write flag are
/// not kept.
pub struct OracleGeneralWriter<W: Write> {
    out: W,
    /// `clock_time` and `obj_id` of every request so far, in two vectors so that a
    /// request takes 12 bytes rather than a padded 16.
    clock_times: Vec<u32>,
    obj_ids: Vec<u64>,
}

/// The `obj_size` the writer gives every request: one page.
pub const OBJECT_BYTES: u32 = 4096;

impl<W: Write> OracleGeneralWriter<W> {
    /// A writer into `out`; nothing is written before [`OracleGeneralWriter::finish`].
    pub fn new(out: W) -> OracleGeneralWriter<W> {
        OracleGeneralWriter { out, clock_times: Vec::new(), obj_ids: Vec::new() }
    }

    /// Adds one request. Fails when its time does not fit a u32 of seconds.
    pub fn write(&mut self, record: &Record) -> Result<(), FormatError> {
        let seconds = record.time_ns.unwrap_or(0) / 1_000_000_000;
        let Ok(clock_time) = u32::try_from(seconds) else {
            return Err(FormatError::Unwritable(format!(
                "record {}: time {seconds} s does not fit oracleGeneral's u32 clock_time",
                self.obj_ids.len() + 1
            )));
        };
        self.clock_times.push(clock_time);
        self.obj_ids.push(record.page);
        Ok(())
    }

    /// Computes the next accesses, writes every record and returns the output.
    pub fn finish(mut self) -> Result<W, FormatError> {
        let mut next_idx = vec![-1i64; self.obj_ids.len()];
        let mut seen = ObjectMapTable::default();
        for (idx, &obj_id) in self.obj_ids.iter().enumerate().rev() {
            if let Some(later_idx) = seen.insert(obj_id, idx as u64) {
                next_idx[idx] = later_idx as i64;
            }
        }
        drop(seen);
        let mut bytes = [0u8; RECORD_BYTES];
        for ((&clock_time, &obj_id), vtime) in self.clock_times.iter().zip(&self.obj_ids).zip(next_idx) {
            bytes[0..4].copy_from_slice(&clock_time.to_le_bytes());
            bytes[4..12].copy_from_slice(&obj_id.to_le_bytes());
            bytes[12..16].copy_from_slice(&OBJECT_BYTES.to_le_bytes());
            bytes[16..24].copy_from_slice(&vtime.to_le_bytes());
            self.out.write_all(&bytes)?;
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests;
