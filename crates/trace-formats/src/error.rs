//! Errors of trace readers.

/// A trace could not be read. Messages are lowercase and name the place and what was
/// expected; the caller adds the file name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// A text line did not parse.
    #[error("{}: {message}", place(*line, *column))]
    Line {
        /// 1-based line number.
        line: u64,
        /// 1-based column (in characters) of the offending text, when one place is to
        /// blame.
        column: Option<u64>,
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
    /// The trace parameters do not suit the trace's format (see [`crate::TraceParams`]).
    #[error("trace parameters: {0}")]
    Params(String),
    /// A record cannot be written in the format asked for.
    #[error("{0}")]
    Unwritable(String),
    /// A later pass over a trace disagrees with what was counted before it (by a first
    /// pass, or a native trace's summary frame): the trace changed, or its summary is wrong.
    #[error("{0}")]
    Changed(String),
    /// Reading failed. The I/O error's text is part of this error's own and it is not
    /// given as the source, so that a chain of causes does not print it twice.
    #[error("read error: {0}")]
    Io(std::io::Error),
}

impl From<std::io::Error> for FormatError {
    fn from(err: std::io::Error) -> FormatError {
        FormatError::Io(err)
    }
}

/// `line 12` or `line 12, column 3`: where in a text trace an error is.
pub fn place(line: u64, column: Option<u64>) -> String {
    match column {
        Some(column) => format!("line {line}, column {column}"),
        None => format!("line {line}"),
    }
}

impl FormatError {
    /// The same error, as another value: what it says is the same, word for word (an I/O
    /// error keeps its kind and message, not its source).
    pub(crate) fn duplicate(&self) -> FormatError {
        match self {
            FormatError::Line { line, column, message } => {
                FormatError::Line { line: *line, column: *column, message: message.clone() }
            }
            FormatError::Offset { offset, message } => {
                FormatError::Offset { offset: *offset, message: message.clone() }
            }
            FormatError::Unknown(message) => FormatError::Unknown(message.clone()),
            FormatError::Unwritable(message) => FormatError::Unwritable(message.clone()),
            FormatError::Changed(message) => FormatError::Changed(message.clone()),
            FormatError::Params(message) => FormatError::Params(message.clone()),
            FormatError::Io(err) => FormatError::Io(std::io::Error::new(err.kind(), err.to_string())),
        }
    }

    /// An error about a whole line.
    pub(crate) fn line(line: u64, message: String) -> FormatError {
        FormatError::Line { line, column: None, message }
    }
}
