//! swapsim's native binary trace format: a compact, streaming, zstd-compressed encoding of
//! [`Record`]s, written by [`NativeWriter`] and read by [`NativeReader`].
//!
//! Text traces are large and slow to parse. This format stores a record in one to a few
//! bytes before compression (a tag byte plus varint deltas) and decodes at memory speed, so
//! a long capture can be converted once and replayed many times. A writer streams: it does
//! not need to know the number of records or the set of tasks in advance, and it holds only
//! a small buffer plus one entry per task. A reader streams too, with a fixed-size buffer.
//!
//! The format deliberately carries nothing but records and, after them, a summary of them
//! (their count per task, for a replay that would otherwise read the trace once just to
//! find its threads): no capture metadata, no index and no random access. A trace is
//! replayed from the start.
//!
//! # Layout (version 1)
//!
//! A file is a 12-byte header followed by the *body*, compressed as zstd data (one zstd
//! frame as written by [`NativeWriter`], at level 3 with a content checksum; readers accept
//! any number of concatenated frames, as zstd does). All integers in the header are
//! little-endian.
//!
//! | offset | size | field   | value                                                       |
//! |--------|------|---------|-------------------------------------------------------------|
//! | 0      | 8    | magic   | the ASCII bytes `SWAPSIMT`                                  |
//! | 8      | 2    | version | `1`, as a u16; readers refuse other versions               |
//! | 10     | 2    | flags   | u16, `0`; version 1 defines no flag, readers refuse set bits |
//! | 12     | ..   | body    | zstd-compressed sequence of items, described below          |
//!
//! Error messages give a *byte offset* into the header followed by the decompressed body,
//! that is the position the byte would have if the body were stored uncompressed: offset 12
//! is the body's first byte.
//!
//! A *varint* is an unsigned LEB128 integer of at most 64 bits: seven bits per byte, least
//! significant group first, the high bit set on every byte but the last. It has at most 10
//! bytes, and the tenth byte may only be `0` or `1`. Non-minimal encodings (such as
//! `80 00` for zero) are accepted by readers but never written. A *zigzag* varint encodes a
//! signed `i64` `n` as the unsigned `(n << 1) ^ (n >> 63)`, so that `0, -1, 1, -2, 2, ...`
//! become `0, 1, 2, 3, 4, ...`.
//!
//! The body is a sequence of items. Each item starts with a tag byte. The low five bits of
//! the tag (`tag & 0x1f`) tell records from control items: `0x1f` marks a control item,
//! any other value is a record.
//!
//! | tag                  | item             | followed by                                  |
//! |----------------------|------------------|----------------------------------------------|
//! | `0x3f`               | task declaration | varint pid, varint tid (each at most u32::MAX) |
//! | `0x1f`               | end marker       | varint number of records in the body         |
//! | other `tag & 0x1f == 0x1f` | reserved   | nothing; readers refuse the item             |
//! | `tag & 0x1f != 0x1f` | record           | the fields listed next                       |
//!
//! The tag of a record holds these bits:
//!
//! | bits | name  | meaning                                                            |
//! |------|-------|--------------------------------------------------------------------|
//! | 7    | write | the record is a store or write fault ([`Record::write`])          |
//! | 6    | time  | the record has a time; a time-delta varint follows                 |
//! | 5    | task  | the record changes the current task; a task-index varint follows   |
//! | 0..5 | delta | `0..=29`: the zigzag page delta itself (so deltas `-15..=14`); `30`: a zigzag page-delta varint follows |
//!
//! After the tag, a record's varints come in this order, each present only when its bit or
//! code says so:
//!
//! | field       | encoding       | meaning                                                     |
//! |-------------|----------------|-------------------------------------------------------------|
//! | task index  | varint         | index into the task table; becomes the current task         |
//! | page delta  | zigzag varint  | the record's page minus the previous page of the same task  |
//! | time delta  | varint         | the record's time minus the time of the latest timed record |
//!
//! Decoding state, all of which starts empty or zero:
//!
//! - The *task table*: task declarations append `(pid, tid)` in order, so the first
//!   declared task has index 0. A writer declares a task just before the first record that
//!   needs it. At most [`TASKS_MAX`] tasks may be declared.
//! - The *current task*: set by a record whose task bit is set and kept by the following
//!   records. A record without the task bit before any record has set it is an error.
//! - Each task's *previous page*, starting at 0. A record's page is the previous page of its
//!   task plus the delta, and must lie in `0..2^63`; it becomes the task's previous page.
//! - The *latest time*, starting at 0. A timed record's time is the latest time plus its
//!   delta and must fit a u64; it becomes the latest time. Records without the time bit
//!   have no time ([`Record::time_ns`] is `None`) and leave the latest time unchanged. So,
//!   by construction, times never decrease, and a writer refuses records whose time does.
//!
//! The end marker must be the last item, its count must equal the number of records before
//! it, and the decompressed body must end right after it. A body that ends earlier is
//! reported as a truncated file.
//!
//! # Summary frame
//!
//! After the body, [`NativeWriter`] appends a *summary frame*: a zstd skippable frame
//! (magic `0x184D2A5E`), which decoders pass over, so readers that do not look for it read
//! the file as if it were not there. [`stored_summary`] finds it from the end of a file
//! without decoding the body. Integers are little-endian; offsets are from the frame's
//! first byte:
//!
//! | offset | size | field                                                              |
//! |--------|------|--------------------------------------------------------------------|
//! | 0      | 4    | `0x184D2A5E`, the skippable-frame magic                            |
//! | 4      | 4    | the frame's length less 8 (zstd's skippable-frame size field)      |
//! | 8      | 8    | the ASCII bytes `SWAPSUM1`                                         |
//! | 16     | 8    | records in the body                                                |
//! | 24     | 8    | read records among them                                            |
//! | 32     | 8    | lowest page (0 without records)                                    |
//! | 40     | 8    | highest page (0 without records)                                   |
//! | 48     | 8    | first record's time in ns, or `u64::MAX` when no record has a time |
//! | 56     | 8    | last timed record's time in ns (0 when none has)                   |
//! | 64     | 4    | number of tasks *n*                                                |
//! | 68     | 16×n | per task, in declaration order: pid u32, tid u32, its records u64  |
//! | 68+16n | 4    | the frame's whole length, 72 + 16n, so that it can be found from the end |
//!
//! A file whose last bytes do not lead to a frame of this shape simply has no summary (files
//! written before the frame existed); a frame of this shape whose figures contradict each
//! other (tasks' counts not adding up to the records, a task listed twice, more reads than
//! records, an inverted range) is an error. The frame is a shortcut, not a second source of
//! truth: whoever replays a trace on its word counts each task's records as they come, and
//! checks the times against the first time, and fails if the body disagrees.
//!
//! # Example
//!
//! Two reads of pages 0x1000 and 0x1001 by task (pid 7, tid 7) at 100 and 150 ns decode
//! from this body: `3f 07 07` (declare task 0), `7e 00 80 40 64` (time and task bits,
//! delta varint 0x2000 = +0x1000, task 0, time +100), `42 32` (time bit, inline delta code
//! 2 = +1, time +50), `1f 02` (end, 2 records).

use crate::error::FormatError;
use crate::format::Format;
use crate::record::{Record, RecordSource, SkipCounts};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};

/// The first eight bytes of every native trace.
pub const MAGIC: &[u8; 8] = b"SWAPSIMT";

/// The format version this module reads and writes.
pub const VERSION: u16 = 1;

/// The most tasks one trace may declare. Matches Linux's `PID_MAX_LIMIT` (2^22), and bounds
/// the memory a reader spends on its task table whatever the input.
pub const TASKS_MAX: usize = 1 << 22;

/// Pages are below this bound, so any page delta fits an `i64`. Virtual page numbers on
/// Linux have at most 45 significant bits, so the bound costs nothing.
const PAGE_LIMIT: u64 = 1 << 63;

/// Bytes of the uncompressed header (magic, version, flags).
const HEADER_BYTES: usize = 12;

/// zstd level used by the writer: fast, and within a few percent of the slower levels on
/// these bodies.
const ZSTD_LEVEL: i32 = 3;

/// The reader decompresses in chunks of this size.
const CHUNK_BYTES: usize = 256 * 1024;

/// The longest item: a record tag plus three varints of at most 10 bytes. The reader keeps
/// at least this many readable bytes past the current position, padding with zeros at the
/// end of the body, so the hot path never checks for the end of the buffer.
const ITEM_BYTES_MAX: usize = 31;

/// Readable bytes kept after the data in the buffer (see [`ITEM_BYTES_MAX`]).
const PAD_BYTES: usize = 32;

/// The writer hands its pending body to the compressor in chunks of about this size.
const WRITE_CHUNK_BYTES: usize = 128 * 1024;

const TAG_WRITE: u8 = 0x80;
const TAG_TIME: u8 = 0x40;
const TAG_TASK: u8 = 0x20;
const TAG_DELTA_MASK: u8 = 0x1f;
/// Delta codes below this value are the zigzag page delta itself.
const DELTA_INLINE_LIMIT: u8 = 30;
/// Delta code saying that a zigzag page-delta varint follows.
const DELTA_VARINT: u8 = 30;
const TAG_END: u8 = 0x1f;
const TAG_DECLARE: u8 = 0x3f;

const TRUNCATED: &str = "stream ends before its end marker (truncated file?)";

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// Appends `value` as a varint to `out` at `len`, returning the new length. `out` must have
/// room for 10 more bytes.
fn put_varint(out: &mut [u8], mut len: usize, mut value: u64) -> usize {
    while value >= 0x80 {
        out[len] = (value as u8) | 0x80;
        value >>= 7;
        len += 1;
    }
    out[len] = value as u8;
    len + 1
}

/// The magic number of the zstd skippable frame that holds the summary (one of the sixteen
/// zstd reserves for skippable frames, which every zstd decoder passes over).
const SKIPPABLE_MAGIC: u32 = 0x184D_2A5E;

/// The tag that opens a summary frame's content.
const SUMMARY_TAG: &[u8; 8] = b"SWAPSUM1";

/// Bytes of a summary frame without its tasks: frame header 8, tag 8, six u64 figures 48,
/// task count 4, trailing frame length 4.
const SUMMARY_FIXED_BYTES: usize = 72;

/// Bytes of one task in a summary frame: pid, tid, records.
const SUMMARY_TASK_BYTES: usize = 16;

/// The first-time field of a summary whose records carry no time.
const NO_TIME: u64 = u64::MAX;

/// What a native trace's summary frame says about its records (see the module
/// documentation), read without decoding the body ([`stored_summary`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredSummary {
    /// Records in the body.
    pub records: u64,
    /// Read records.
    pub reads: u64,
    /// The lowest and highest page (0 and 0 without records).
    pub page_range: (u64, u64),
    /// The first and last record's time, when records carry time.
    pub time_range: Option<(u64, u64)>,
    /// `(pid, tid, records)` of each task, in the order the body declares them.
    pub tasks: Vec<(u32, u32, u64)>,
}

/// The summary frame at the end of the native trace `file`, if it has one: `Ok(None)` for
/// a file that is not a native trace, or whose end is not a summary frame (files written
/// before the frame existed). A frame that is there but contradicts itself is an error
/// naming its offset in the file. Nothing here checks the frame against the body; a replay
/// that relies on it counts each task's records and fails at the end if they differ.
pub fn stored_summary<F: Read + Seek>(file: &mut F) -> Result<Option<StoredSummary>, FormatError> {
    let len = file.seek(SeekFrom::End(0))?;
    if len < (HEADER_BYTES + SUMMARY_FIXED_BYTES) as u64 {
        return Ok(None);
    }
    let mut header = [0u8; HEADER_BYTES];
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut header)?;
    if &header[..8] != MAGIC {
        return Ok(None);
    }
    let mut tail = [0u8; 4];
    file.seek(SeekFrom::End(-4))?;
    file.read_exact(&mut tail)?;
    let frame_bytes = u64::from(u32::from_le_bytes(tail));
    if frame_bytes < SUMMARY_FIXED_BYTES as u64
        || !(frame_bytes - SUMMARY_FIXED_BYTES as u64).is_multiple_of(SUMMARY_TASK_BYTES as u64)
        || frame_bytes > len - HEADER_BYTES as u64
    {
        return Ok(None);
    }
    let start = len - frame_bytes;
    let mut f = vec![0u8; frame_bytes as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut f)?;
    let u32_at = |at: usize| u32::from_le_bytes(f[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(f[at..at + 8].try_into().expect("8 bytes"));
    if u32_at(0) != SKIPPABLE_MAGIC || u64::from(u32_at(4)) != frame_bytes - 8 || &f[8..16] != SUMMARY_TAG {
        return Ok(None);
    }
    let n_tasks = (frame_bytes as usize - SUMMARY_FIXED_BYTES) / SUMMARY_TASK_BYTES;
    let bad = |at: usize, message: String| FormatError::Offset {
        offset: start + at as u64,
        message: format!("summary frame: {message}"),
    };
    if u32_at(64) as usize != n_tasks {
        return Err(bad(64, format!("{} tasks announced, {n_tasks} stored", u32_at(64))));
    }
    if n_tasks > TASKS_MAX {
        return Err(bad(64, format!("{n_tasks} tasks, above the limit of {TASKS_MAX}")));
    }
    let (records, reads, first_page, last_page, first_time, last_time) =
        (u64_at(16), u64_at(24), u64_at(32), u64_at(40), u64_at(48), u64_at(56));
    let tasks: Vec<(u32, u32, u64)> = (0..n_tasks)
        .map(|i| {
            let at = 68 + i * SUMMARY_TASK_BYTES;
            (u32_at(at), u32_at(at + 4), u64_at(at + 8))
        })
        .collect();
    let sum = tasks.iter().try_fold(0u64, |sum, t| sum.checked_add(t.2));
    if sum != Some(records) {
        return Err(bad(16, format!("{records} records, but its tasks' counts add up to {sum:?}")));
    }
    if tasks.iter().any(|t| t.2 == 0) {
        return Err(bad(68, "a task without records".to_string()));
    }
    let mut keys: Vec<(u32, u32)> = tasks.iter().map(|&(pid, tid, _)| (pid, tid)).collect();
    keys.sort_unstable();
    if keys.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad(68, "a task listed twice".to_string()));
    }
    if reads > records {
        return Err(bad(24, format!("{reads} reads out of {records} records")));
    }
    if first_page > last_page || last_page >= PAGE_LIMIT || (records == 0 && last_page != 0) {
        return Err(bad(32, format!("page range {first_page:#x}..={last_page:#x}")));
    }
    let time_range = match (first_time, last_time) {
        (NO_TIME, 0) => None,
        (first, last) if first <= last && records > 0 => Some((first, last)),
        _ => return Err(bad(48, format!("time range {first_time}..={last_time} ns"))),
    };
    Ok(Some(StoredSummary { records, reads, page_range: (first_page, last_page), time_range, tasks }))
}

/// Writes a native trace. Records are encoded as they come and compressed in chunks, so
/// memory stays small whatever the length of the trace.
///
/// Call [`NativeWriter::finish`] at the end: it writes the end marker, without which readers
/// report the file as truncated, and the summary frame. Dropping the writer instead leaves
/// a truncated file.
pub struct NativeWriter<W: Write> {
    encoder: zstd::stream::write::Encoder<'static, W>,
    /// Encoded body not yet handed to the compressor.
    pending: Vec<u8>,
    /// Body bytes already handed to the compressor.
    n_body_bytes_flushed: u64,
    /// Task index by `(pid, tid)`.
    task_indices: HashMap<u64, u32, BuildHasherDefault<TaskKeyHasher>>,
    /// Previous page of each declared task, by task index.
    task_pages: Vec<u64>,
    /// `(pid, tid)` and index of the current task, once a record has set one.
    current_task: Option<((u32, u32), u32)>,
    time_ns_latest: u64,
    n_records: u64,
    /// What the summary frame says, gathered as records are written.
    tally: Tally,
}

/// The figures of a summary frame (see the module documentation), gathered by the writer.
#[derive(Default)]
struct Tally {
    /// `(pid, tid)` and records of each declared task, by task index.
    tasks: Vec<(u32, u32, u64)>,
    reads: u64,
    first_page: u64,
    last_page: u64,
    /// The first and latest time written, once a record had one.
    times: Option<(u64, u64)>,
}

impl<W: Write> NativeWriter<W> {
    /// Writes the header to `out` and starts the compressed body.
    pub fn new(mut out: W) -> Result<Self, FormatError> {
        let mut header = [0u8; HEADER_BYTES];
        header[..8].copy_from_slice(MAGIC);
        header[8..10].copy_from_slice(&VERSION.to_le_bytes());
        header[10..12].copy_from_slice(&0u16.to_le_bytes());
        out.write_all(&header)?;
        let mut encoder = zstd::stream::write::Encoder::new(out, ZSTD_LEVEL)?;
        encoder.include_checksum(true)?;
        Ok(NativeWriter {
            encoder,
            pending: Vec::with_capacity(WRITE_CHUNK_BYTES + 64),
            n_body_bytes_flushed: 0,
            task_indices: HashMap::default(),
            task_pages: Vec::new(),
            current_task: None,
            time_ns_latest: 0,
            n_records: 0,
            tally: Tally { first_page: u64::MAX, ..Tally::default() },
        })
    }

    /// Appends one record. Refuses, leaving the trace unchanged, a page of 2^63 or more, a
    /// time earlier than the latest time written, and a task beyond [`TASKS_MAX`].
    pub fn write(&mut self, r: &Record) -> Result<(), FormatError> {
        if r.page >= PAGE_LIMIT {
            return Err(
                self.refuse(format!("page {:#x} is not below 2^63, the native format's limit", r.page))
            );
        }
        let time_delta_ns = match r.time_ns {
            Some(time_ns) if time_ns < self.time_ns_latest => {
                return Err(self.refuse(format!(
                    "time {time_ns} ns is before the previous record's {} ns \
                     (native traces need times that never decrease)",
                    self.time_ns_latest
                )));
            }
            Some(time_ns) => Some(time_ns - self.time_ns_latest),
            None => None,
        };
        let key = (r.pid, r.tid);
        let mut item = [0u8; 2 * ITEM_BYTES_MAX];
        let mut len = 1;
        let mut tag = 0u8;
        let task_idx = match self.current_task {
            Some((current_key, idx)) if current_key == key => idx,
            _ => {
                let key_packed = (u64::from(r.pid) << 32) | u64::from(r.tid);
                let idx = match self.task_indices.get(&key_packed) {
                    Some(&idx) => idx,
                    None => {
                        if self.task_pages.len() >= TASKS_MAX {
                            return Err(self.refuse(format!(
                                "task (pid {}, tid {}) would be task number {}, above the \
                                 limit of {TASKS_MAX}",
                                r.pid,
                                r.tid,
                                self.task_pages.len() + 1
                            )));
                        }
                        let idx = self.task_pages.len() as u32;
                        self.task_indices.insert(key_packed, idx);
                        self.task_pages.push(0);
                        self.tally.tasks.push((r.pid, r.tid, 0));
                        // The declaration goes first, as its own item.
                        item[0] = TAG_DECLARE;
                        let declare_len = put_varint(&mut item, 1, u64::from(r.pid));
                        let declare_len = put_varint(&mut item, declare_len, u64::from(r.tid));
                        self.pending.extend_from_slice(&item[..declare_len]);
                        idx
                    }
                };
                self.current_task = Some((key, idx));
                tag |= TAG_TASK;
                len = put_varint(&mut item, len, u64::from(idx));
                idx
            }
        };
        let prev_page = &mut self.task_pages[task_idx as usize];
        // Both pages are below 2^63, so the difference fits an i64.
        let delta = r.page.wrapping_sub(*prev_page) as i64;
        *prev_page = r.page;
        let delta_zigzag = zigzag(delta);
        if delta_zigzag < u64::from(DELTA_INLINE_LIMIT) {
            tag |= delta_zigzag as u8;
        } else {
            tag |= DELTA_VARINT;
            len = put_varint(&mut item, len, delta_zigzag);
        }
        if let Some(time_delta_ns) = time_delta_ns {
            tag |= TAG_TIME;
            len = put_varint(&mut item, len, time_delta_ns);
            self.time_ns_latest += time_delta_ns;
        }
        if r.write {
            tag |= TAG_WRITE;
        }
        item[0] = tag;
        self.pending.extend_from_slice(&item[..len]);
        self.n_records += 1;
        let tally = &mut self.tally;
        tally.tasks[task_idx as usize].2 += 1;
        tally.reads += u64::from(!r.write);
        tally.first_page = tally.first_page.min(r.page);
        tally.last_page = tally.last_page.max(r.page);
        if let Some(time_ns) = r.time_ns {
            let first = tally.times.map_or(time_ns, |(first, _)| first);
            tally.times = Some((first, time_ns));
        }
        if self.pending.len() >= WRITE_CHUNK_BYTES {
            self.flush_pending()?;
        }
        Ok(())
    }

    /// Writes the end marker and the record count, ends the compressed body, appends the
    /// summary frame and returns the output, flushed.
    pub fn finish(mut self) -> Result<W, FormatError> {
        let mut item = [0u8; 16];
        item[0] = TAG_END;
        let len = put_varint(&mut item, 1, self.n_records);
        self.pending.extend_from_slice(&item[..len]);
        self.flush_pending()?;
        let frame = self.summary_frame();
        let mut out = self.encoder.finish()?;
        out.write_all(&frame)?;
        out.flush()?;
        Ok(out)
    }

    /// The summary frame of the records written (layout in the module documentation).
    fn summary_frame(&self) -> Vec<u8> {
        let t = &self.tally;
        let frame_bytes = SUMMARY_FIXED_BYTES + SUMMARY_TASK_BYTES * t.tasks.len();
        let mut f = Vec::with_capacity(frame_bytes);
        f.extend_from_slice(&SKIPPABLE_MAGIC.to_le_bytes());
        f.extend_from_slice(&((frame_bytes - 8) as u32).to_le_bytes());
        f.extend_from_slice(SUMMARY_TAG);
        let (first_page, last_page) = if self.n_records > 0 { (t.first_page, t.last_page) } else { (0, 0) };
        let (first_time, last_time) = t.times.unwrap_or((NO_TIME, 0));
        for value in [self.n_records, t.reads, first_page, last_page, first_time, last_time] {
            f.extend_from_slice(&value.to_le_bytes());
        }
        f.extend_from_slice(&(t.tasks.len() as u32).to_le_bytes());
        for &(pid, tid, records) in &t.tasks {
            f.extend_from_slice(&pid.to_le_bytes());
            f.extend_from_slice(&tid.to_le_bytes());
            f.extend_from_slice(&records.to_le_bytes());
        }
        f.extend_from_slice(&(frame_bytes as u32).to_le_bytes());
        debug_assert_eq!(f.len(), frame_bytes);
        f
    }

    fn flush_pending(&mut self) -> Result<(), FormatError> {
        self.encoder.write_all(&self.pending)?;
        self.n_body_bytes_flushed += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// An error about the record that would have been written next, at the offset it would
    /// have had.
    #[cold]
    fn refuse(&self, message: String) -> FormatError {
        FormatError::Offset {
            offset: HEADER_BYTES as u64 + self.n_body_bytes_flushed + self.pending.len() as u64,
            message: format!("record {}: {message}", self.n_records + 1),
        }
    }
}

/// Hashes a packed `(pid, tid)` with one multiplication. The writer looks a task up on
/// every task switch, which in an interleaved trace is most records, and the standard
/// hasher costs more than the rest of the encoding. Its resistance to chosen keys is not
/// needed: the worst case is a slow conversion of one's own trace.
#[derive(Default)]
struct TaskKeyHasher(u64);

impl Hasher for TaskKeyHasher {
    fn finish(&self) -> u64 {
        let product = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        product ^ (product >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 ^= value;
    }
}

/// The underlying reader, remembering whether it failed, so that a failure of the source
/// (an I/O error) can be told from corrupt zstd data, which the decompressor reports as an
/// I/O error too.
struct Source {
    inner: Box<dyn Read + Send>,
    failed: bool,
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let res = self.inner.read(buf);
        if let Err(e) = &res {
            if e.kind() != io::ErrorKind::Interrupted {
                self.failed = true;
            }
        }
        res
    }
}

/// The state the decoder keeps per declared task.
#[derive(Clone, Copy)]
struct Task {
    pid: u32,
    tid: u32,
    prev_page: u64,
}

/// Where a reader stands.
enum Progress {
    /// Items remain to be decoded.
    Reading,
    /// The end marker was read and checked.
    Done,
    /// An error was returned; it is returned again by every later call.
    Failed { offset: u64, message: String },
}

/// The current task before any record has set one.
const NO_TASK: usize = usize::MAX;

/// Reads a native trace as a stream of records, with a fixed-size buffer.
///
/// Errors name the byte offset of the offending item or field in the header plus
/// decompressed body.
/// After an error the reader is spent: every later call returns the same error.
pub struct NativeReader {
    decoder: zstd::stream::read::Decoder<'static, BufReader<Source>>,
    /// Decompressed body: data in `buf[pos..end]`, then `PAD_BYTES` zeros.
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// While `pos` is below this, a whole item is readable without refilling: it is
    /// `end - ITEM_BYTES_MAX` before the body ends and `end` after.
    safe_end: usize,
    /// Body bytes discarded before `buf[0]`.
    n_bytes_before_buf: u64,
    /// The decompressor reported the end of its data.
    eof: bool,
    tasks: Vec<Task>,
    /// Index into `tasks`, or [`NO_TASK`].
    current_task: usize,
    time_ns_latest: u64,
    n_records: u64,
    progress: Progress,
    skipped: SkipCounts,
}

impl NativeReader {
    /// Reads and checks the header from `reader`, positioned at the magic, and prepares to
    /// decode the body. Fails on a bad magic, an unknown version or unknown flags.
    pub fn new(reader: Box<dyn Read + Send>) -> Result<NativeReader, FormatError> {
        let mut source = Source { inner: reader, failed: false };
        let mut header = [0u8; HEADER_BYTES];
        let mut n_read = 0;
        while n_read < HEADER_BYTES {
            match source.read(&mut header[n_read..]) {
                Ok(0) => break,
                Ok(n) => n_read += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FormatError::Io(e)),
            }
        }
        let n_magic = n_read.min(MAGIC.len());
        if header[..n_magic] != MAGIC[..n_magic] {
            return Err(FormatError::Offset {
                offset: 0,
                message: format!(
                    "not a swapsim native trace (magic b\"{}\", expected b\"{}\")",
                    header[..n_magic].escape_ascii(),
                    MAGIC.escape_ascii()
                ),
            });
        }
        if n_read < HEADER_BYTES {
            return Err(FormatError::Offset { offset: n_read as u64, message: TRUNCATED.to_string() });
        }
        let version = u16::from_le_bytes([header[8], header[9]]);
        if version != VERSION {
            return Err(FormatError::Offset {
                offset: 8,
                message: format!(
                    "unsupported native trace version {version} (this reader knows version {VERSION})"
                ),
            });
        }
        let flags = u16::from_le_bytes([header[10], header[11]]);
        if flags != 0 {
            return Err(FormatError::Offset {
                offset: 10,
                message: format!("unknown flags {flags:#06x} (version {VERSION} defines none)"),
            });
        }
        let decoder = zstd::stream::read::Decoder::new(source)?;
        Ok(NativeReader {
            decoder,
            buf: vec![0u8; CHUNK_BYTES + PAD_BYTES].into_boxed_slice(),
            pos: 0,
            end: 0,
            safe_end: 0,
            n_bytes_before_buf: 0,
            eof: false,
            tasks: Vec::new(),
            current_task: NO_TASK,
            time_ns_latest: 0,
            n_records: 0,
            progress: Progress::Reading,
            skipped: SkipCounts::default(),
        })
    }

    /// The offset, as reported in errors, of `buf[idx]`.
    fn offset_of(&self, idx: usize) -> u64 {
        HEADER_BYTES as u64 + self.n_bytes_before_buf + idx as u64
    }

    /// Moves the unread bytes to the front of the buffer and decompresses more, until more
    /// than `ITEM_BYTES_MAX` bytes are readable or the body ends.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) -> Result<(), FormatError> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.n_bytes_before_buf += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        while self.end <= ITEM_BYTES_MAX && !self.eof {
            match self.decoder.read(&mut self.buf[self.end..CHUNK_BYTES]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let offset = self.offset_of(self.end);
                    let err = if self.decoder.get_ref().get_ref().failed {
                        FormatError::Io(e)
                    } else if e.kind() == io::ErrorKind::UnexpectedEof {
                        FormatError::Offset { offset, message: TRUNCATED.to_string() }
                    } else {
                        FormatError::Offset { offset, message: format!("corrupt zstd data ({e})") }
                    };
                    return Err(self.fail(err));
                }
            }
        }
        self.buf[self.end..self.end + PAD_BYTES].fill(0);
        self.safe_end = if self.eof { self.end } else { self.end - ITEM_BYTES_MAX };
        Ok(())
    }

    /// Marks the reader spent and returns `err`.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, err: FormatError) -> FormatError {
        if let FormatError::Offset { offset, message } = &err {
            self.progress = Progress::Failed { offset: *offset, message: message.clone() };
        } else {
            self.progress =
                Progress::Failed { offset: self.offset_of(self.end), message: format!("{err} (earlier)") };
        }
        self.pos = 0;
        self.end = 0;
        self.safe_end = 0;
        self.eof = true;
        err
    }

    /// Fails with `message` about the field at `buf[start..field_end]`, or with the
    /// truncation error if that field runs past the end of the body (its bytes past the end
    /// are padding, so the value is not the file's).
    #[cold]
    #[inline(never)]
    fn fail_field(&mut self, start: usize, field_end: usize, message: String) -> FormatError {
        let err = if self.eof && field_end > self.end {
            FormatError::Offset { offset: self.offset_of(self.end), message: TRUNCATED.to_string() }
        } else {
            FormatError::Offset { offset: self.offset_of(start), message }
        };
        self.fail(err)
    }

    /// Fails on the bad varint at `buf[start..]`, saying whether it is too long or too large.
    #[cold]
    #[inline(never)]
    fn fail_varint(&mut self, start: usize, what: &str) -> FormatError {
        let bytes = &self.buf[start..start + 10];
        let message = if bytes.iter().all(|b| b & 0x80 != 0) {
            format!("{what}: varint longer than 10 bytes")
        } else {
            format!("{what}: varint does not fit 64 bits (10th byte {:#04x}, expected 0 or 1)", bytes[9])
        };
        self.fail_field(start, start + 10, message)
    }

    /// What to return once no bytes are left.
    #[cold]
    #[inline(never)]
    fn at_end(&mut self) -> Result<(), FormatError> {
        match &self.progress {
            Progress::Done => Ok(()),
            Progress::Failed { offset, message } => {
                Err(FormatError::Offset { offset: *offset, message: message.clone() })
            }
            Progress::Reading => {
                let err =
                    FormatError::Offset { offset: self.offset_of(self.end), message: TRUNCATED.to_string() };
                Err(self.fail(err))
            }
        }
    }

    /// Decodes the control item at `buf[pos]`: a task declaration or the end marker.
    #[cold]
    #[inline(never)]
    fn control_item(&mut self, tag: u8) -> Result<(), FormatError> {
        let start = self.pos;
        let mut at = start + 1;
        match tag {
            TAG_DECLARE => {
                let mut ids = [0u32; 2];
                for (id, what) in ids.iter_mut().zip(["task declaration pid", "task declaration tid"]) {
                    let field_start = at;
                    let Some(value) = read_varint(&self.buf, &mut at) else {
                        return Err(self.fail_varint(field_start, what));
                    };
                    *id = match u32::try_from(value) {
                        Ok(id) => id,
                        Err(_) => {
                            let message = format!("{what} {value} does not fit 32 bits");
                            return Err(self.fail_field(field_start, at, message));
                        }
                    };
                }
                if at > self.end {
                    return Err(self.fail_field(start, at, String::new()));
                }
                if self.tasks.len() >= TASKS_MAX {
                    let message = format!("more than {TASKS_MAX} tasks declared");
                    return Err(self.fail_field(start, at, message));
                }
                self.tasks.push(Task { pid: ids[0], tid: ids[1], prev_page: 0 });
                self.pos = at;
                Ok(())
            }
            TAG_END => {
                let Some(n_records) = read_varint(&self.buf, &mut at) else {
                    return Err(self.fail_varint(start + 1, "end marker record count"));
                };
                if at > self.end {
                    return Err(self.fail_field(start, at, String::new()));
                }
                if n_records != self.n_records {
                    let message = format!(
                        "end marker counts {n_records} records but the stream holds {}",
                        self.n_records
                    );
                    return Err(self.fail_field(start + 1, at, message));
                }
                self.pos = at;
                // The body must end here: read on until the decompressor says so.
                while self.pos == self.end && !self.eof {
                    self.refill()?;
                }
                if self.pos < self.end {
                    let offset = self.offset_of(self.pos);
                    let message = "unexpected bytes after the end marker".to_string();
                    return Err(self.fail(FormatError::Offset { offset, message }));
                }
                self.progress = Progress::Done;
                Ok(())
            }
            _ => {
                let message = format!("unknown item tag {tag:#04x}");
                Err(self.fail_field(start, start + 1, message))
            }
        }
    }
}

/// Reads a varint at `bytes[*at..]`, advancing `at`, or `None` if it is longer than 10
/// bytes or above `u64::MAX`. The caller guarantees 10 readable bytes from `at`.
///
/// One- and two-byte varints, the common lengths, take a branch each. Longer ones up to
/// eight bytes are decoded from one 64-bit load without a loop: the first byte with its high bit clear ends the varint,
/// and the 7-bit groups below it are packed together in three shift-and-mask steps.
#[inline(always)]
fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let idx = *at;
    let first = bytes[idx];
    if first < 0x80 {
        *at = idx + 1;
        return Some(u64::from(first));
    }
    let second = bytes[idx + 1];
    if second < 0x80 {
        *at = idx + 2;
        return Some(u64::from(first & 0x7f) | (u64::from(second) << 7));
    }
    let word = u64::from_le_bytes(bytes[idx..idx + 8].try_into().expect("the range has 8 bytes"));
    let stops = !word & 0x8080_8080_8080_8080;
    if stops == 0 {
        return read_varint_long(bytes, at);
    }
    // The stop bit is bit 7 of the last byte, so `n_bits` is a multiple of 8, at least 16.
    let n_bits = stops.trailing_zeros() + 1;
    let groups = word & (u64::MAX >> (64 - n_bits)) & 0x7f7f_7f7f_7f7f_7f7f;
    let pairs = ((groups & 0x7f00_7f00_7f00_7f00) >> 1) | (groups & 0x007f_007f_007f_007f);
    let quads = ((pairs & 0x3fff_0000_3fff_0000) >> 2) | (pairs & 0x0000_3fff_0000_3fff);
    let value = ((quads & 0x0fff_ffff_0000_0000) >> 4) | (quads & 0x0000_0000_0fff_ffff);
    *at = idx + n_bits as usize / 8;
    Some(value)
}

/// Reads a varint byte by byte; the general case of [`read_varint`].
#[inline(never)]
fn read_varint_long(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let bytes = &bytes[*at..*at + 10];
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            if i == 9 && byte > 1 {
                return None;
            }
            *at += i + 1;
            return Some(value);
        }
    }
    None
}

impl RecordSource for NativeReader {
    fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
        let mut next = None;
        self.decode(|record| next = Some(record))?;
        Ok(next)
    }

    fn next_records(&mut self, out: &mut Vec<Record>, n_max: usize) -> Result<(), FormatError> {
        out.reserve(n_max);
        for _ in 0..n_max {
            if !self.decode(|record| out.push(record))? {
                break;
            }
        }
        Ok(())
    }

    fn skipped(&self) -> &SkipCounts {
        &self.skipped
    }

    fn format(&self) -> Format {
        Format::Native
    }
}

impl NativeReader {
    /// Decodes the next record and hands it to `emit`, returning whether there was one.
    /// Inlined into both [`RecordSource::next_record`] and the batched
    /// [`RecordSource::next_records`]; handing the record over, rather than returning it in
    /// a `Result`, lets the batch loop write it straight into its vector.
    #[inline(always)]
    fn decode(&mut self, emit: impl FnOnce(Record)) -> Result<bool, FormatError> {
        loop {
            if self.pos >= self.safe_end {
                if !self.eof {
                    self.refill()?;
                }
                if self.pos >= self.end {
                    return self.at_end().map(|()| false);
                }
            }
            let start = self.pos;
            // At least ITEM_BYTES_MAX bytes are readable from `start`: data, then zeros.
            let bytes: &[u8; PAD_BYTES] =
                self.buf[start..start + PAD_BYTES].try_into().expect("the range has PAD_BYTES bytes");
            let tag = bytes[0];
            let delta_code = tag & TAG_DELTA_MASK;
            if delta_code == TAG_DELTA_MASK {
                self.control_item(tag)?;
                continue;
            }
            let mut at = 1;
            if tag & TAG_TASK != 0 {
                let Some(idx) = read_varint(bytes, &mut at) else {
                    return Err(self.fail_varint(start + 1, "task index"));
                };
                if idx >= self.tasks.len() as u64 {
                    let message =
                        format!("task index {idx} is out of range ({} tasks declared)", self.tasks.len());
                    return Err(self.fail_field(start + 1, start + at, message));
                }
                self.current_task = idx as usize;
            }
            let delta = if delta_code < DELTA_INLINE_LIMIT {
                unzigzag(u64::from(delta_code))
            } else {
                let field_start = at;
                let Some(delta_zigzag) = read_varint(bytes, &mut at) else {
                    return Err(self.fail_varint(start + field_start, "page delta"));
                };
                unzigzag(delta_zigzag)
            };
            let time_ns = if tag & TAG_TIME != 0 {
                let field_start = at;
                let Some(time_delta_ns) = read_varint(bytes, &mut at) else {
                    return Err(self.fail_varint(start + field_start, "time delta"));
                };
                match self.time_ns_latest.checked_add(time_delta_ns) {
                    Some(time_ns) => Some(time_ns),
                    None => {
                        let message = format!(
                            "time delta {time_delta_ns} ns from {} ns overflows 64 bits",
                            self.time_ns_latest
                        );
                        return Err(self.fail_field(start + field_start, start + at, message));
                    }
                }
            } else {
                None
            };
            let Some(task) = self.tasks.get_mut(self.current_task) else {
                let message = "record before any record selects a task".to_string();
                return Err(self.fail_field(start, start + 1, message));
            };
            // Pages are kept below 2^63, so the previous page fits an i64.
            let page = match (task.prev_page as i64).checked_add(delta) {
                Some(page) if page >= 0 => page as u64,
                _ => {
                    let message = format!(
                        "page delta {delta} from page {:#x} leaves the range 0..2^63",
                        task.prev_page
                    );
                    return Err(self.fail_field(start, start + at, message));
                }
            };
            if start + at > self.end {
                return Err(self.fail_field(start, start + at, String::new()));
            }
            task.prev_page = page;
            if let Some(time_ns) = time_ns {
                self.time_ns_latest = time_ns;
            }
            self.pos = start + at;
            self.n_records += 1;
            emit(Record { pid: task.pid, tid: task.tid, time_ns, page, write: tag & TAG_WRITE != 0 });
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};
    use proptest::prelude::*;

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
        check(
            "1f 80",
            expect!["error: byte offset 14: stream ends before its end marker (truncated file?)\n"],
        );
    }

    #[test]
    fn header_errors() {
        let check_file = |file: &[u8], expect: Expect| expect.assert_eq(&render(decode(file)));
        check_file(
            b"",
            expect!["error: byte offset 0: stream ends before its end marker (truncated file?)\n"],
        );
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
            expect![
                "error: byte offset 8: unsupported native trace version 2 (this reader knows version 1)\n"
            ],
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
        expect![
            "byte offset 18: record 2: page 0x8000000000000000 is not below 2^63, the native format's limit"
        ]
        .assert_eq(&err.to_string());
        writer.write(&rec(2, 2, Some(10), (1 << 63) - 1, true)).expect("valid record");
        let file = writer.finish().expect("writing to a Vec cannot fail");
        assert_eq!(
            decode(&file).expect("the trace is valid"),
            [rec(1, 1, Some(10), 3, false), rec(2, 2, Some(10), (1 << 63) - 1, true)]
        );
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

    /// The summary frame that `records` should get, computed from the records themselves.
    fn summary_of(records: &[Record]) -> StoredSummary {
        let mut tasks: Vec<(u32, u32, u64)> = Vec::new();
        for r in records {
            match tasks.iter_mut().find(|t| (t.0, t.1) == (r.pid, r.tid)) {
                Some(t) => t.2 += 1,
                None => tasks.push((r.pid, r.tid, 1)),
            }
        }
        let times: Vec<u64> = records.iter().filter_map(|r| r.time_ns).collect();
        let pages = records.iter().map(|r| r.page);
        StoredSummary {
            records: records.len() as u64,
            reads: records.iter().filter(|r| !r.write).count() as u64,
            page_range: (pages.clone().min().unwrap_or(0), pages.max().unwrap_or(0)),
            time_range: times.first().map(|&first| (first, times[times.len() - 1])),
            tasks,
        }
    }

    fn stored(file: &[u8]) -> Result<Option<StoredSummary>, FormatError> {
        stored_summary(&mut io::Cursor::new(file))
    }

    /// The length of `file`'s summary frame, from its last four bytes.
    fn frame_len(file: &[u8]) -> usize {
        u32::from_le_bytes(file[file.len() - 4..].try_into().expect("four bytes")) as usize
    }

    #[test]
    fn summary_frame_layout() {
        let records = [rec(7, 7, Some(100), 0x1000, false), rec(7, 8, Some(150), 0x1001, true)];
        let file = encode(&records);
        let frame = &file[file.len() - frame_len(&file)..];
        expect![[r#"
            5e 2a 4d 18 60 00 00 00 53 57 41 50 53 55 4d 31 02 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 10 00 00 00 00 00 00 01 10 00 00 00 00 00 00 64 00 00 00 00 00 00 00 96 00 00 00 00 00 00 00 02 00 00 00 07 00 00 00 07 00 00 00 01 00 00 00 00 00 00 00 07 00 00 00 08 00 00 00 01 00 00 00 00 00 00 00 68 00 00 00"#]]
        .assert_eq(&hex(frame));
        assert_eq!(stored(&file).expect("a valid frame"), Some(summary_of(&records)));
        // zstd passes over the frame: the body reads as before.
        assert_eq!(decode(&file).expect("the trace is valid"), records);
    }

    #[test]
    fn a_file_without_the_frame_has_no_summary_and_reads_the_same() {
        let records = mixed_records(50, 4);
        let file = encode(&records);
        let bare = &file[..file.len() - frame_len(&file)];
        assert_eq!(stored(bare).expect("no frame is no error"), None);
        assert_eq!(decode(bare).expect("the trace is valid"), records);
        assert_eq!(stored(b"SWAPSIMT").expect("too short"), None);
        assert_eq!(stored(&[0u8; 200]).expect("not a native trace"), None);
    }

    #[test]
    fn a_contradictory_summary_frame_is_an_error() {
        let file = encode(&mixed_records(30, 3));
        let frame_at = file.len() - frame_len(&file);
        let set = |field: usize, value: u64| {
            let mut bad = file.clone();
            bad[frame_at + field..frame_at + field + 8].copy_from_slice(&value.to_le_bytes());
            stored(&bad).expect_err("a contradictory frame").to_string()
        };
        let err = set(16, 31);
        assert!(err.contains("summary frame: 31 records, but its tasks' counts add up to"), "{err}");
        assert!(err.starts_with(&format!("byte offset {}", frame_at + 16)), "{err}");
        assert!(set(24, 31).contains("31 reads out of 30 records"));
        assert!(set(32, u64::MAX - 1).contains("page range"));
    }

    #[test]
    fn every_truncation_of_the_frame_reads_as_no_summary_or_an_error() {
        let file = encode(&mixed_records(20, 5));
        for len in 0..file.len() {
            // Never a panic, and never a summary from a cut frame.
            if let Ok(Some(found)) = stored(&file[..len]) {
                panic!("cut to {len} of {} bytes, the file has a summary: {found:?}", file.len());
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

    /// Decodes `bytes`, padded with `pad` to 32 bytes, as one varint.
    fn varint_of(bytes: &[u8], pad: u8) -> Option<(u64, usize)> {
        let mut padded = [pad; 32];
        padded[..bytes.len()].copy_from_slice(bytes);
        let mut at = 0;
        read_varint(&padded, &mut at).map(|value| (value, at))
    }

    #[test]
    fn varint_edges() {
        assert_eq!(varint_of(&[0x7f], 0xff), Some((0x7f, 1)));
        assert_eq!(varint_of(&[0x80, 0x01], 0xff), Some((0x80, 2)));
        assert_eq!(varint_of(&[0x80, 0x00], 0xff), Some((0, 2)));
        let eight = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert_eq!(varint_of(&eight, 0xff), Some(((1 << 56) - 1, 8)));
        let nine = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert_eq!(varint_of(&nine, 0xff), Some(((1 << 63) - 1, 9)));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(varint_of(&max, 0xff), Some((u64::MAX, 10)));
        assert_eq!(varint_of(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], 0), None);
        assert_eq!(varint_of(&[0x80; 10], 0), None);
    }

    proptest! {
        #[test]
        fn varints_round_trip(value in prop_oneof![any::<u64>(), 0u64..1 << 14, (0u32..64).prop_map(|bit| 1u64 << bit)], pad in any::<u8>()) {
            let mut bytes = [0u8; 10];
            let len = put_varint(&mut bytes, 0, value);
            prop_assert_eq!(varint_of(&bytes[..len], pad), Some((value, len)));
        }

        #[test]
        fn round_trip(records in records_strategy()) {
            let file = encode(&records);
            prop_assert_eq!(decode(&file).map_err(|e| e.to_string()), Ok(records));
        }

        #[test]
        fn arbitrary_bodies_never_panic(body in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode(&file_from_body(&body));
        }

        #[test]
        fn the_summary_frame_says_what_the_records_hold(records in records_strategy()) {
            let file = encode(&records);
            prop_assert_eq!(stored(&file).map_err(|e| e.to_string()), Ok(Some(summary_of(&records))));
        }

        #[test]
        fn arbitrary_tails_never_panic(
            tail in prop::collection::vec(any::<u8>(), 0..160),
            frame_len in 0u32..200,
        ) {
            let mut file = encode(&mixed_records(5, 6));
            file.extend_from_slice(&tail);
            let _ = stored(&file);
            file.extend_from_slice(&frame_len.to_le_bytes());
            let _ = stored(&file);
        }
    }
}
