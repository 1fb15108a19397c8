//! The options a trace is opened with.
//!
//! Detection reads `format`, and the line-based readers read `lenient` and `instructions`,
//! so the options live in a leaf module that both import without importing each other.

use crate::format::Format;

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
