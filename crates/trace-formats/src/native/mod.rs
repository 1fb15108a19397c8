//! swapsim's native binary trace format: a compact, streaming, zstd-compressed encoding of
//! [`Record`](crate::Record)s, written by [`NativeWriter`] and read by [`NativeReader`].
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
//! | 7    | write | the record is a store or write fault ([`Record::write`](crate::Record::write))          |
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
//!   have no time ([`Record::time_ns`](crate::Record::time_ns) is `None`) and leave the latest time unchanged. So,
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
//!
//! # Code map
//!
//! `writer.rs` encodes ([`NativeWriter`]), `reader.rs` decodes ([`NativeReader`]),
//! `summary.rs` writes and finds the summary frame ([`stored_summary`]), and `varint.rs` is
//! the varint and zigzag codec both directions share. The constants of the layout above
//! live here.

mod reader;
mod summary;
#[cfg(test)]
mod tests;
mod varint;
mod writer;

pub use reader::NativeReader;
pub use summary::{stored_summary, StoredSummary};
pub use writer::NativeWriter;

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

/// The longest item: a record tag plus three varints of at most 10 bytes. The reader keeps
/// at least this many readable bytes past the current position, padding with zeros at the
/// end of the body, so the hot path never checks for the end of the buffer.
const ITEM_BYTES_MAX: usize = 31;

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
