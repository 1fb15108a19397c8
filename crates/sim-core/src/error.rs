//! Typed errors of the core. Messages are lowercase, carry no trailing period, and name
//! the place, the value and what was expected.

/// A configuration value is out of range or inconsistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A field failed validation.
    #[error("{field}: {message}")]
    Invalid {
        /// Dotted path of the field, e.g. `memcg.swappiness`.
        field: String,
        /// What is wrong and what was expected.
        message: String,
    },
}

/// An access trace could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A line did not parse.
    #[error("{}{message}", place(*line, *column))]
    Malformed {
        /// 1-based line number; 0 when the error is not about a line (the message then says
        /// where it is, a byte offset for instance), and the line is not printed.
        line: u64,
        /// 1-based column, in characters, of the offending text, when one place is to blame.
        column: Option<u64>,
        /// What was found and what was expected.
        message: String,
    },
    /// The underlying reader failed.
    #[error("line {line}: read error: {source}")]
    Io {
        /// 1-based line number being read.
        line: u64,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// `line 12: `, `line 12, column 3: `, or nothing for line 0: the start of a
/// [`TraceError::Malformed`] message.
fn place(line: u64, column: Option<u64>) -> String {
    match (line, column) {
        (0, _) => String::new(),
        (_, Some(column)) => format!("line {line}, column {column}: "),
        (_, None) => format!("line {line}: "),
    }
}

/// A run could not be set up or carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A task's access stream failed.
    #[error("task {task}: {source}")]
    Trace {
        /// The task's name.
        task: String,
        /// The trace error.
        source: TraceError,
    },
    /// The setup does not match the configuration (for example a device model missing).
    #[error("setup: {0}")]
    Setup(String),
}
