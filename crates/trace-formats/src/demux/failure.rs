//! The errors a replay's feed finds, and how an error that ended a stream is kept to be
//! handed out again.

use crate::error::FormatError;
use crate::record::Record;
use swapsim_core::TraceError;

/// The error that ended a stream, kept to be handed out again.
#[derive(Clone, Debug)]
pub(super) struct Failure {
    line: u64,
    column: Option<u64>,
    message: String,
}

impl Failure {
    pub(super) fn of(err: FormatError) -> Failure {
        match err {
            FormatError::Line { line, column, message } => Failure { line, column, message },
            // Errors without a line get line 0 and say where they are in the message.
            other => Failure { line: 0, column: None, message: other.to_string() },
        }
    }

    pub(super) fn to_error(&self) -> TraceError {
        TraceError::Malformed { line: self.line, column: self.column, message: self.message.clone() }
    }
}

/// The earlier of `earliest` and the times of `records`.
pub(super) fn earliest_time(earliest: Option<u64>, records: &[Record]) -> Option<u64> {
    earliest.into_iter().chain(records.iter().filter_map(|r| r.time_ns)).min()
}

/// The error for a timed trace whose earliest record is not at the first time counted.
pub(super) fn first_time_differs(earliest_ns: Option<u64>, origin_ns: u64) -> FormatError {
    let found = earliest_ns.map_or("none".to_string(), |t| format!("{t} ns"));
    disagrees(format!("the trace's first time is {found}, where {origin_ns} ns was counted"))
}

/// The error for a record of a thread the first pass did not see.
pub(super) fn changed_trace(record: &Record) -> FormatError {
    FormatError::Changed(format!(
        "thread {}/{} was not in the first pass over the trace: the trace changed between passes",
        record.pid, record.tid
    ))
}

/// The error for a replay that disagrees with what was counted before it: `what` is
/// what the replay found, up to the words "before the replay".
pub(super) fn disagrees(what: String) -> FormatError {
    FormatError::Changed(format!(
        "{what} before the replay (by the first pass, or a native trace's summary frame): the trace \
         changed, or its summary is wrong"
    ))
}
