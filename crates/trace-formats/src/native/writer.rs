//! The native format's encoder: [`NativeWriter`] turns records into the body's items as
//! they come, compresses the body in chunks and ends the file with its summary frame.
//!
//! It holds a small buffer plus one entry per task, whatever the number of records.

use super::summary::FrameTally;
use super::varint::{put_varint, zigzag};
use super::{
    DELTA_INLINE_LIMIT, DELTA_VARINT, HEADER_BYTES, ITEM_BYTES_MAX, MAGIC, PAGE_LIMIT, TAG_DECLARE, TAG_END,
    TAG_TASK, TAG_TIME, TAG_WRITE, TASKS_MAX, VERSION,
};
use crate::error::FormatError;
use crate::record::Record;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Write;

/// zstd level used by the writer: fast, and within a few percent of the slower levels on
/// these bodies.
const ZSTD_LEVEL: i32 = 3;

/// The writer hands its pending body to the compressor in chunks of about this size.
const WRITE_CHUNK_BYTES: usize = 128 * 1024;

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
    tally: FrameTally,
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
            tally: FrameTally::default(),
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
                        self.tally.declare(r.pid, r.tid);
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
        self.tally.count(task_idx, r.page, r.time_ns, r.write);
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
        let frame = self.tally.frame();
        let mut out = self.encoder.finish()?;
        out.write_all(&frame)?;
        out.flush()?;
        Ok(out)
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
