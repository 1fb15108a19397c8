//! The native format's decoder: [`NativeReader`] decompresses the body in chunks into a
//! fixed-size buffer and decodes its items, checking every field, with a hot path that
//! never checks for the buffer's end (the buffer is padded).
//!
//! What it does not do: read the summary frame (zstd passes over it) or seek.

use super::varint::{read_varint, unzigzag};
use super::{
    DELTA_INLINE_LIMIT, HEADER_BYTES, ITEM_BYTES_MAX, MAGIC, TAG_DECLARE, TAG_DELTA_MASK, TAG_END, TAG_TASK,
    TAG_TIME, TAG_WRITE, TASKS_MAX, VERSION,
};
use crate::error::FormatError;
use crate::format::Format;
use crate::record::{Record, RecordSource, SkipCounts};
use std::io::{self, BufReader, Read};

/// The reader decompresses in chunks of this size.
pub(super) const CHUNK_BYTES: usize = 256 * 1024;

/// Readable bytes kept after the data in the buffer (see [`ITEM_BYTES_MAX`]).
const PAD_BYTES: usize = 32;

pub(super) const TRUNCATED: &str = "stream ends before its end marker (truncated file?)";

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
