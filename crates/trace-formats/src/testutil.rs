//! Helpers shared by the unit tests.

use crate::lines::seconds;
use crate::record::RecordSource;
use std::fmt::Write;

/// Reads a source to its end or first error and renders every record, the end or the
/// error, and the skip counts.
pub(crate) fn render(mut source: Box<dyn RecordSource>) -> String {
    let mut out = String::new();
    loop {
        match source.next_record() {
            Ok(Some(record)) => {
                let time = record.time_ns.map_or_else(|| "-".to_string(), seconds);
                let operation = if record.write { "W" } else { "R" };
                writeln!(
                    out,
                    "pid {} tid {} t {time} page {:#x} {operation}",
                    record.pid, record.tid, record.page
                )
                .expect("writing to a string");
            }
            Ok(None) => {
                out += "end\n";
                break;
            }
            Err(err) => {
                writeln!(out, "error: {err}").expect("writing to a string");
                break;
            }
        }
    }
    for (reason, count) in &source.skipped().0 {
        writeln!(out, "skipped {reason} {count}").expect("writing to a string");
    }
    out
}
