//! Compression and format detection, and the entry point that opens a trace.

use crate::error::FormatError;
use crate::record::RecordSource;
use std::io::Read;

/// A trace format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// `perf script` text of `exceptions:page_fault_user`.
    PerfScript,
    /// ftrace text (trace, trace_pipe) of `page_fault_user`.
    Ftrace,
    /// valgrind lackey `--trace-mem=yes` output.
    Lackey,
    /// The `R|W <page>` access-trace text format.
    Text,
    /// swapsim's native binary format.
    Native,
}

impl Format {
    /// Stable name used on the command line and in reports: "perf", "ftrace", "lackey",
    /// "text", "native".
    pub fn name(self) -> &'static str {
        match self {
            Format::PerfScript => "perf",
            Format::Ftrace => "ftrace",
            Format::Lackey => "lackey",
            Format::Text => "text",
            Format::Native => "native",
        }
    }

    /// Parses a name as given by [`Format::name`].
    pub fn from_name(name: &str) -> Option<Format> {
        [Format::PerfScript, Format::Ftrace, Format::Lackey, Format::Text, Format::Native]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// How to open a trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Read as this format instead of detecting it.
    pub format: Option<Format>,
    /// Skip malformed lines and count them instead of failing.
    pub lenient: bool,
    /// lackey: count instruction fetches (`I` lines) as reads of their pages.
    pub instructions: bool,
}

/// Opens a trace: undoes gzip or zstd compression (detected by magic bytes), detects the
/// format from the first bytes unless `options.format` names it, and returns a streaming
/// reader.
pub fn open(reader: Box<dyn Read + Send>, options: OpenOptions) -> Result<Box<dyn RecordSource>, FormatError> {
    let _ = (reader, options);
    Err(FormatError::Unknown("not implemented yet".into()))
}
