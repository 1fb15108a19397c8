//! Errors of trace readers.

/// A trace could not be read. Messages are lowercase and name the place and what was
/// expected; the caller adds the file name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// A text line did not parse.
    #[error("line {line}: {message}")]
    Line {
        /// 1-based line number.
        line: u64,
        /// What was found and what was expected.
        message: String,
    },
    /// Binary data did not decode.
    #[error("byte offset {offset}: {message}")]
    Offset {
        /// Offset in the decompressed stream.
        offset: u64,
        /// What was found and what was expected.
        message: String,
    },
    /// The format could not be recognised.
    #[error("unrecognised trace format: {0}")]
    Unknown(String),
    /// Reading failed.
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
}
