//! The summary frame of a native trace (layout in the parent module's documentation):
//! the figures [`super::NativeWriter`] gathers as it writes records and appends after the
//! body, and [`stored_summary`], which finds them from the file's end without decoding the
//! body.
//!
//! What it deliberately does not do: check the frame against the body. A replay that
//! relies on the frame counts what it reads and fails if the two disagree.

use super::{HEADER_BYTES, MAGIC, PAGE_LIMIT, TASKS_MAX};
use crate::error::FormatError;
use std::io::{Read, Seek, SeekFrom};

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

/// The figures of a summary frame, gathered by the writer as it writes records.
pub(super) struct FrameTally {
    /// `(pid, tid)` and records of each declared task, by task index.
    tasks: Vec<(u32, u32, u64)>,
    records: u64,
    reads: u64,
    first_page: u64,
    last_page: u64,
    /// The first and latest time written, once a record had one.
    times: Option<(u64, u64)>,
}

impl Default for FrameTally {
    fn default() -> FrameTally {
        FrameTally {
            tasks: Vec::new(),
            records: 0,
            reads: 0,
            first_page: u64::MAX,
            last_page: 0,
            times: None,
        }
    }
}

impl FrameTally {
    /// Counts a task declared with the next task index.
    pub(super) fn declare(&mut self, pid: u32, tid: u32) {
        self.tasks.push((pid, tid, 0));
    }

    /// Counts a record of the task of index `task_idx`, already declared.
    #[inline]
    pub(super) fn count(&mut self, task_idx: u32, page: u64, time_ns: Option<u64>, write: bool) {
        self.tasks[task_idx as usize].2 += 1;
        self.records += 1;
        self.reads += u64::from(!write);
        self.first_page = self.first_page.min(page);
        self.last_page = self.last_page.max(page);
        if let Some(time_ns) = time_ns {
            let first = self.times.map_or(time_ns, |(first, _)| first);
            self.times = Some((first, time_ns));
        }
    }

    /// The summary frame of the records counted.
    pub(super) fn frame(&self) -> Vec<u8> {
        let frame_bytes = SUMMARY_FIXED_BYTES + SUMMARY_TASK_BYTES * self.tasks.len();
        let mut f = Vec::with_capacity(frame_bytes);
        f.extend_from_slice(&SKIPPABLE_MAGIC.to_le_bytes());
        f.extend_from_slice(&((frame_bytes - 8) as u32).to_le_bytes());
        f.extend_from_slice(SUMMARY_TAG);
        let (first_page, last_page) =
            if self.records > 0 { (self.first_page, self.last_page) } else { (0, 0) };
        let (first_time, last_time) = self.times.unwrap_or((NO_TIME, 0));
        for value in [self.records, self.reads, first_page, last_page, first_time, last_time] {
            f.extend_from_slice(&value.to_le_bytes());
        }
        f.extend_from_slice(&(self.tasks.len() as u32).to_le_bytes());
        for &(pid, tid, records) in &self.tasks {
            f.extend_from_slice(&pid.to_le_bytes());
            f.extend_from_slice(&tid.to_le_bytes());
            f.extend_from_slice(&records.to_le_bytes());
        }
        f.extend_from_slice(&(frame_bytes as u32).to_le_bytes());
        debug_assert_eq!(f.len(), frame_bytes);
        f
    }
}
