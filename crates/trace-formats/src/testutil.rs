//! Helpers shared by the unit tests.

use crate::lines::seconds;
use crate::record::RecordSource;
use std::fmt::Write;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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

/// Opens `bytes` with `options` and reads them through as libCacheSim object requests:
/// every record is a read of a page below the largest region, and an error (only in strict
/// mode) names a line that exists and a column, and is returned again if asked again.
pub(crate) fn read_object_requests(
    bytes: Vec<u8>,
    options: crate::OpenOptions,
) -> Result<(), proptest::test_runner::TestCaseError> {
    use crate::FormatError;
    use proptest::{prop_assert, test_runner::TestCaseError};
    let n_lines = bytes.iter().filter(|&&byte| byte == b'\n').count() as u64 + 1;
    let mut source = crate::detect::open(Box::new(std::io::Cursor::new(bytes)), options)
        .map_err(|err| TestCaseError::fail(err.to_string()))?;
    loop {
        match source.next_record() {
            Ok(Some(record)) => prop_assert!(record.page < crate::oracle::REGION_PAGES_MAX && !record.write),
            Ok(None) => return Ok(()),
            Err(FormatError::Line { line, column, .. }) => {
                prop_assert!(!options.lenient);
                prop_assert!((1..=n_lines).contains(&line), "line {} of {}", line, n_lines);
                prop_assert!(column.is_some_and(|column| column >= 1));
                prop_assert!(source.next_record().is_err());
                return Ok(());
            }
            Err(err) => prop_assert!(false, "unexpected error {}", err),
        }
    }
}

/// A reader that counts the bytes its inner reader hands out, to show that a parser stops
/// reading early.
pub(crate) struct Counting<R> {
    inner: R,
    bytes_read: Arc<AtomicU64>,
}

impl<R> Counting<R> {
    pub(crate) fn new(inner: R, bytes_read: Arc<AtomicU64>) -> Counting<R> {
        Counting { inner, bytes_read }
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
