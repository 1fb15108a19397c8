//! swapsim-trace-formats: the trace formats people capture page faults and memory accesses
//! in, read as one stream of [`Record`]s, and swapsim's own compact binary format.
//!
//! Readers take any `Read`; the caller opens files. Compression (gzip, zstd) and the format
//! are detected from the first bytes unless the caller names the format. Every reader
//! streams with bounded memory, whatever the trace's length, and reports bad input as a
//! [`FormatError`] naming the line (text) or byte offset (binary); in lenient mode bad lines
//! are skipped and counted by reason instead.

pub mod demux;
pub mod detect;
pub mod error;
pub mod ftrace;
pub mod lackey;
mod lines;
pub mod native;
pub mod perf;
pub mod record;
#[cfg(test)]
mod testutil;
pub mod text;

pub use demux::{summarize, tasks, Pace, TraceSummary};
pub use detect::{open, Format, OpenOptions};
pub use error::FormatError;
pub use record::{Record, RecordSource, SkipCounts};
