//! The options a trace is opened with.
//!
//! Detection reads `format`, the line-based readers read `lenient` and `instructions`, and
//! libCacheSim's readers read `object_map` (and its text readers `params`), so the options
//! live in a leaf module that all import without importing each other.

use crate::format::Format;
use crate::params::TraceParams;

/// How to open a trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Read as this format instead of detecting it.
    pub format: Option<Format>,
    /// Skip malformed lines and count them instead of failing.
    pub lenient: bool,
    /// lackey: count instruction fetches (`I` lines) as reads of their pages.
    pub instructions: bool,
    /// libCacheSim's traces (oracleGeneral, lcs, txt, csv): how object ids become pages
    /// (default: modulo a 1 GiB region).
    pub object_map: ObjectMap,
    /// libCacheSim's txt and csv traces: the trace parameters (columns, delimiter, header,
    /// string ids). Giving any for another format is an error when the trace is opened.
    pub params: TraceParams,
}

/// The default region of the modulo mapping: 1 GiB of 4 KiB pages.
pub const REGION_PAGES_DEFAULT: u64 = 1 << 18;
/// The largest region, and the bound of every page libCacheSim's readers produce: 57-bit
/// addresses.
pub const REGION_PAGES_MAX: u64 = 1 << 45;

/// How object ids become pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectMap {
    /// Page `obj_id % region_pages`: streams with no memory, and is the identity for ids
    /// below the region. Different objects may share a page. Regions outside
    /// `1..=REGION_PAGES_MAX` are clamped into it.
    Modulo {
        /// Pages in the region.
        region_pages: u64,
    },
    /// Pages `0, 1, 2, ...` in order of each object's first request: no two objects share
    /// a page, at the cost of one hash map entry per distinct object.
    Dense,
}

impl Default for ObjectMap {
    /// Modulo a 1 GiB region ([`REGION_PAGES_DEFAULT`]).
    fn default() -> ObjectMap {
        ObjectMap::Modulo { region_pages: REGION_PAGES_DEFAULT }
    }
}

impl ObjectMap {
    /// Stable name, as on the command line: "modulo" or "dense".
    pub fn name(self) -> &'static str {
        match self {
            ObjectMap::Modulo { .. } => "modulo",
            ObjectMap::Dense => "dense",
        }
    }
}
