//! The trace formats this crate reads, and their stable names.
//!
//! This is a leaf module: every reader names the format it reads, and detection names the
//! format it recognised, so the enum lives apart from both and imports nothing from them.

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
    /// libCacheSim's `oracleGeneral` binary records.
    OracleGeneral,
    /// libCacheSim's `lcs` binary format (a header, then versioned records).
    Lcs,
    /// libCacheSim's `txt` traces: one object id per line.
    LibCacheSimTxt,
    /// libCacheSim's `csv` traces: delimited lines, columns named by trace parameters.
    LibCacheSimCsv,
}

impl Format {
    /// Whether the format records requests for objects (libCacheSim's formats), not page
    /// faults or memory accesses: every request is a read, and the data it reads exists
    /// before it, so a replay creates a page on its first read (`TaskSpec::reads_create`)
    /// rather than mapping the zero page, which would never take memory.
    pub fn requests_objects(self) -> bool {
        matches!(self, Format::OracleGeneral | Format::Lcs | Format::LibCacheSimTxt | Format::LibCacheSimCsv)
    }

    /// Stable name used on the command line and in reports: "perf", "ftrace", "lackey",
    /// "text", "native", "oracle-general", "lcs", "libcachesim-txt", "libcachesim-csv".
    pub fn name(self) -> &'static str {
        match self {
            Format::PerfScript => "perf",
            Format::Ftrace => "ftrace",
            Format::Lackey => "lackey",
            Format::Text => "text",
            Format::Native => "native",
            Format::OracleGeneral => "oracle-general",
            Format::Lcs => "lcs",
            Format::LibCacheSimTxt => "libcachesim-txt",
            Format::LibCacheSimCsv => "libcachesim-csv",
        }
    }

    /// Parses a name as given by [`Format::name`].
    pub fn from_name(name: &str) -> Option<Format> {
        [
            Format::PerfScript,
            Format::Ftrace,
            Format::Lackey,
            Format::Text,
            Format::Native,
            Format::OracleGeneral,
            Format::Lcs,
            Format::LibCacheSimTxt,
            Format::LibCacheSimCsv,
        ]
        .into_iter()
        .find(|f| f.name() == name)
    }
}
