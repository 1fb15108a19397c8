//! swapsim-trace-formats: the trace formats people capture page faults and memory accesses
//! in, read as one stream of [`Record`]s, and swapsim's own compact binary format.
//!
//! Readers take any `Read`; the caller opens files. Compression (gzip, zstd) and the format
//! are detected from the first bytes unless the caller names the format. Every reader
//! streams with bounded memory, whatever the trace's length, and reports bad input as a
//! [`FormatError`] naming the line (text) or byte offset (binary); in lenient mode bad lines
//! are skipped and counted by reason instead.
//!
//! ```
//! use swapsim_trace_formats::{open, summarize, Format, OpenOptions};
//!
//! let perf = "\
//!  python3 14561/14563 [001] 2364.742742: exceptions:page_fault_user: address=0x7f1f04a24e06 ip=0x7f1f04a0c7ad error_code=0x6
//!  python3 14561 [000] 2364.742801: exceptions:page_fault_user: address=0x7f1f04a25000 ip=0x7f1f04a0c7ad error_code=0x4
//! ";
//! let mut source = open(Box::new(std::io::Cursor::new(perf)), OpenOptions::default())?;
//! assert_eq!(source.format(), Format::PerfScript);
//! let record = source.next_record()?.expect("a first record");
//! assert_eq!((record.pid, record.tid, record.page, record.write), (14561, 14563, 0x7f1f04a24, true));
//! assert_eq!(record.time_ns, Some(2_364_742_742_000));
//!
//! // A summary pass, as `swapsim trace info` prints it.
//! let mut source = open(Box::new(std::io::Cursor::new(perf)), OpenOptions::default())?;
//! let summary = summarize(&mut *source)?;
//! assert_eq!(summary.tasks, [(14561, 14561, 1), (14561, 14563, 1)]);
//! assert_eq!(summary.time_span_ns, Some(59_000));
//! # Ok::<(), swapsim_trace_formats::FormatError>(())
//! ```
//!
//! libCacheSim's traces of object requests are read too, each request as a read of the page
//! its object maps to: its binary `oracleGeneral` and `lcs` ([`oracle`]), and its
//! plain-text `txt` ([`cachesim_txt`]) and `csv` ([`cachesim_csv`], with columns named by
//! [`TraceParams`] in libCacheSim's own syntax).
//!
//! A [`ReplayBuilder`] turns a trace into one engine task per thread, the threads of a
//! process sharing an address space.

mod access_ahead;
pub mod cachesim_csv;
pub mod cachesim_txt;
pub mod demux;
pub mod detect;
pub mod error;
mod format;
pub mod ftrace;
pub mod lackey;
mod lines;
pub mod native;
pub mod objects;
mod options;
pub mod oracle;
mod pace;
mod params;
pub mod perf;
mod pipe;
pub mod readahead;
pub mod record;
#[cfg(test)]
mod testutil;
pub mod text;

pub use demux::{
    summarize, CountingPass, FirstPass, FirstPassSource, KeepRecords, Replay, ReplayBuilder, StoredRounds,
    TraceCount, TraceSummary,
};
pub use detect::open;
pub use error::FormatError;
pub use format::Format;
pub use options::OpenOptions;
pub use oracle::ObjectMap;
pub use pace::Pace;
pub use params::TraceParams;
pub use readahead::read_ahead;
pub use record::{NextAccess, Record, RecordSource, SkipCounts};
