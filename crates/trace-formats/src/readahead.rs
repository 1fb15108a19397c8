//! Decoding a trace on a thread of its own, ahead of the records' use.
//!
//! Decompressing and decoding a trace costs the replay a fifth of its time when done
//! between accesses. [`read_ahead`] moves an opened [`RecordSource`] to a decoding thread
//! that hands records back in batches over a bounded channel, so that on a machine with a
//! spare core the decoding overlaps the simulation.
//!
//! Nothing observable changes: the records, their next-access fields, the error that ends
//! a stream (delivered after every record before it) and the skip counts read at the end
//! are those of the wrapped source. Memory stays bounded: at most [`BATCHES_IN_FLIGHT`]
//! batches of [`BATCH_RECORDS`] records are decoded ahead, and their vectors are reused.
//! Dropping the reader early stops the thread at its next batch.
//!
//! Simplified: [`RecordSource::skipped`] is up to date at batch boundaries and at the end,
//! not after every record; every caller reads it once the stream has ended.

use crate::error::FormatError;
use crate::format::Format;
use crate::pipe::Pipe;
use crate::record::{NextAccess, Record, RecordSource, SkipCounts};

/// Records decoded per batch (1.25 MiB). Each batch handed over may wake the other thread,
/// which in a virtual machine costs tens of microseconds: batches of 4,096 spent 5–10% of
/// a 20-million-access replay waking threads.
pub const BATCH_RECORDS: usize = 32768;
/// Batches decoded ahead of the reader, besides the one being read.
pub const BATCHES_IN_FLIGHT: usize = 2;

/// Records decoded together, with what the source said about them.
#[derive(Default)]
struct Batch {
    records: Vec<Record>,
    /// The next-access field of each record, or empty when no record of the batch had one.
    next: Vec<Option<NextAccess>>,
    /// The skip counts after the batch's last record, when they changed.
    skipped: Option<SkipCounts>,
    /// Set on the last batch: the end of the stream, or the error that ended it.
    end: Option<Result<(), FormatError>>,
}

/// Decodes `source` on a thread of its own and returns a source yielding the same records.
///
/// An error is returned only when the thread cannot be started.
pub fn read_ahead(mut source: Box<dyn RecordSource>) -> Result<Box<dyn RecordSource>, FormatError> {
    let format = source.format();
    let declared_pages = source.declared_pages();
    let skipped = source.skipped().clone();
    let mut state = DecodeState { skipped_total: skipped.total(), per_record: None };
    let pipe = Pipe::spawn("trace-decoder", BATCHES_IN_FLIGHT, move |batch: &mut Batch| {
        decode(&mut *source, &mut state, batch)
    })
    .map_err(FormatError::Io)?;
    Ok(Box::new(ReadAhead {
        pipe,
        batch: Batch::default(),
        at: 0,
        last_next: None,
        skipped,
        format,
        declared_pages,
        ended: false,
    }))
}

/// What the decoding thread keeps from one batch to the next.
struct DecodeState {
    /// The source's skip count after the last batch.
    skipped_total: u64,
    /// Whether records are read one at a time, for their next-access field; `None` before
    /// the first record.
    per_record: Option<bool>,
}

/// The decoding thread's step: fills `batch` (a spent one, emptied here); false once it
/// ends the stream. Records come a batch at a time from the source
/// ([`RecordSource::next_records`]) unless its first record carries a next-access field,
/// which is then kept record by record.
fn decode(source: &mut dyn RecordSource, state: &mut DecodeState, batch: &mut Batch) -> bool {
    let DecodeState { skipped_total, per_record } = state;
    batch.records.clear();
    batch.next.clear();
    batch.skipped = None;
    batch.end = None;
    while batch.records.len() < BATCH_RECORDS && batch.end.is_none() {
        if *per_record == Some(false) {
            let before = batch.records.len();
            let want = BATCH_RECORDS - before;
            match source.next_records(&mut batch.records, want) {
                Ok(()) if batch.records.len() - before < want => batch.end = Some(Ok(())),
                Ok(()) => {}
                Err(err) => batch.end = Some(Err(err)),
            }
            continue;
        }
        match source.next_record() {
            Ok(Some(record)) => {
                batch.records.push(record);
                let next = source.next_access();
                per_record.get_or_insert(next.is_some());
                if let Some(next) = next {
                    batch.next.resize(batch.records.len() - 1, None);
                    batch.next.push(Some(next));
                }
            }
            Ok(None) => batch.end = Some(Ok(())),
            Err(err) => batch.end = Some(Err(err)),
        }
    }
    if !batch.next.is_empty() {
        batch.next.resize(batch.records.len(), None);
    }
    let total = source.skipped().total();
    if total != *skipped_total || batch.end.is_some() {
        *skipped_total = total;
        batch.skipped = Some(source.skipped().clone());
    }
    batch.end.is_none()
}

/// The reading end: records of the current batch, then the next batch.
struct ReadAhead {
    pipe: Pipe<Batch>,
    batch: Batch,
    /// Index in `batch.records` of the next record to return.
    at: usize,
    last_next: Option<NextAccess>,
    skipped: SkipCounts,
    format: Format,
    declared_pages: Option<u64>,
    ended: bool,
}

impl ReadAhead {
    /// Takes the next batch; false at the end of the stream.
    fn next_batch(&mut self) -> Result<bool, FormatError> {
        if let Some(end) = self.batch.end.take() {
            self.ended = true;
            return end.map(|()| false);
        }
        if !self.pipe.next(&mut self.batch) {
            // The thread ended without a last batch: it panicked.
            self.ended = true;
            return Err(FormatError::Unknown("the trace decoder stopped unexpectedly".into()));
        }
        self.at = 0;
        if let Some(skipped) = self.batch.skipped.take() {
            self.skipped = skipped;
        }
        Ok(true)
    }
}

impl RecordSource for ReadAhead {
    #[inline]
    fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
        loop {
            if let Some(&record) = self.batch.records.get(self.at) {
                self.last_next = self.batch.next.get(self.at).copied().flatten();
                self.at += 1;
                return Ok(Some(record));
            }
            self.last_next = None;
            if self.ended || !self.next_batch()? {
                return Ok(None);
            }
        }
    }

    fn next_records(&mut self, out: &mut Vec<Record>, n_max: usize) -> Result<(), FormatError> {
        if out.is_empty() && self.at == 0 && !self.ended {
            // A whole batch asked for is handed over without copying: the vectors swap,
            // and the caller's goes back to the decoding thread with the spent batch.
            if self.batch.records.is_empty() && !self.next_batch()? {
                self.last_next = None;
                return Ok(());
            }
            let len = self.batch.records.len();
            if len == n_max || (len < n_max && self.batch.end.is_some()) {
                self.last_next = self.batch.next.last().copied().flatten();
                std::mem::swap(out, &mut self.batch.records);
                self.batch.next.clear();
                if self.batch.end.is_some() {
                    // The last batch: its error, if any, comes with its records.
                    self.next_batch()?;
                }
                return Ok(());
            }
        }
        let mut n = 0;
        while n < n_max {
            let rest = &self.batch.records[self.at..];
            if !rest.is_empty() {
                let k = rest.len().min(n_max - n);
                out.extend_from_slice(&rest[..k]);
                self.at += k;
                n += k;
                self.last_next = self.batch.next.get(self.at - 1).copied().flatten();
                continue;
            }
            if self.ended || !self.next_batch()? {
                self.last_next = None;
                break;
            }
        }
        Ok(())
    }

    fn skipped(&self) -> &SkipCounts {
        &self.skipped
    }

    fn format(&self) -> Format {
        self.format
    }

    fn declared_pages(&self) -> Option<u64> {
        self.declared_pages
    }

    fn next_access(&self) -> Option<NextAccess> {
        self.last_next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::OpenOptions;
    use std::io::Cursor;

    fn open(bytes: Vec<u8>) -> Box<dyn RecordSource> {
        crate::open(Box::new(Cursor::new(bytes)), OpenOptions::default()).expect("opens")
    }

    /// Every record, the next-access fields and the final outcome, as a string.
    fn drain(source: &mut dyn RecordSource) -> String {
        let mut out = String::new();
        loop {
            match source.next_record() {
                Ok(Some(r)) => out.push_str(&format!("{r:?} {:?}\n", source.next_access())),
                Ok(None) => {
                    out.push_str(&format!("end, skipped {:?}\n", source.skipped()));
                    // The end stays the end.
                    assert!(matches!(source.next_record(), Ok(None)));
                    return out;
                }
                Err(err) => return out + &format!("error: {err}\n"),
            }
        }
    }

    #[test]
    fn yields_what_the_source_yields_across_batches() {
        let n = BATCH_RECORDS * 2 + 17;
        let mut text = String::from("# pages=100000\n");
        for i in 0..n {
            text.push_str(if i % 3 == 0 { "W " } else { "R " });
            text.push_str(&(i * 7 % 100_000).to_string());
            text.push('\n');
        }
        let direct = drain(&mut *open(text.clone().into_bytes()));
        let mut ahead = read_ahead(open(text.into_bytes())).expect("starts");
        assert_eq!(ahead.declared_pages(), Some(100_000));
        assert_eq!(ahead.format(), Format::Text);
        assert_eq!(drain(&mut *ahead), direct);
    }

    #[test]
    fn an_error_comes_after_the_records_before_it() {
        let mut text = String::new();
        for i in 0..BATCH_RECORDS + 5 {
            text.push_str(&format!("R {i}\n"));
        }
        text.push_str("X 1\nR 2\n");
        let direct = drain(&mut *open(text.clone().into_bytes()));
        let line = BATCH_RECORDS + 6;
        let expected = format!("error: line {line}, column 1: expected R or W, found \"X\"\n");
        assert!(direct.ends_with(&expected), "{direct}");
        assert_eq!(drain(&mut *read_ahead(open(text.into_bytes())).expect("starts")), direct);
    }

    #[test]
    fn keeps_next_access_fields_and_skip_counts() {
        // An oracleGeneral trace: (time u32, id u64, size u32, next vtime i64) per request.
        let mut bytes = Vec::new();
        let ids = [5u64, 6, 5, 7, 6, 5];
        for (i, &id) in ids.iter().enumerate() {
            let next = ids[i + 1..].iter().position(|&o| o == id).map_or(-1i64, |k| (i + 1 + k) as i64);
            bytes.extend_from_slice(&(i as u32 + 1).to_le_bytes());
            bytes.extend_from_slice(&id.to_le_bytes());
            bytes.extend_from_slice(&4096u32.to_le_bytes());
            bytes.extend_from_slice(&next.to_le_bytes());
        }
        let direct = drain(&mut *open(bytes.clone()));
        assert!(direct.contains("At(2)") && direct.contains("Never"), "{direct}");
        assert_eq!(drain(&mut *read_ahead(open(bytes)).expect("starts")), direct);

        let text = "R 1\nsomething else\nW 2\n".to_string();
        let lenient = || {
            crate::open(
                Box::new(Cursor::new(text.clone().into_bytes())),
                OpenOptions { lenient: true, ..OpenOptions::default() },
            )
            .expect("opens")
        };
        let direct = drain(&mut *lenient());
        assert!(direct.contains("end, skipped SkipCounts({\""), "{direct}");
        assert_eq!(drain(&mut *read_ahead(lenient()).expect("starts")), direct);
    }

    /// Every record taken `n` at a time, then the final outcome, as a string.
    fn drain_batches(source: &mut dyn RecordSource, n: usize) -> String {
        let mut out = String::new();
        let mut records = Vec::new();
        loop {
            records.clear();
            let result = source.next_records(&mut records, n);
            for r in &records {
                out.push_str(&format!("{r:?}\n"));
            }
            match result {
                Err(err) => return out + &format!("error: {err}\n"),
                Ok(()) if records.len() < n => {
                    return out + &format!("end, skipped {:?}\n", source.skipped())
                }
                Ok(()) => {}
            }
        }
    }

    #[test]
    fn batches_yield_what_single_records_do() {
        let mut text = String::new();
        for i in 0..BATCH_RECORDS * 2 + 3 {
            text.push_str(&format!("{} {}\n", if i % 5 == 0 { "W" } else { "R" }, i % 777));
        }
        let bad = format!("{text}X 1\n");
        for bytes in [text.into_bytes(), bad.into_bytes()] {
            let direct = drain_batches(&mut *open(bytes.clone()), 1);
            // BATCH_RECORDS takes the decoder's batches whole, without copying them.
            for n in [1, 3, 1000, BATCH_RECORDS, BATCH_RECORDS + 1] {
                assert_eq!(
                    drain_batches(&mut *read_ahead(open(bytes.clone())).expect("starts"), n),
                    direct,
                    "n {n}"
                );
            }
        }
    }

    /// A source of endless records that says when it is dropped.
    struct Endless {
        dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
        skipped: SkipCounts,
    }

    impl RecordSource for Endless {
        fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
            Ok(Some(Record { pid: 0, tid: 0, time_ns: None, page: 1, write: false }))
        }
        fn skipped(&self) -> &SkipCounts {
            &self.skipped
        }
        fn format(&self) -> Format {
            Format::Text
        }
    }

    impl Drop for Endless {
        fn drop(&mut self) {
            self.dropped.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn dropping_the_reader_early_stops_the_thread() {
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let source = Endless { dropped: std::sync::Arc::clone(&dropped), skipped: SkipCounts::default() };
        let mut ahead = read_ahead(Box::new(source)).expect("starts");
        assert!(matches!(ahead.next_record(), Ok(Some(_))));
        drop(ahead);
        // The thread notices at its next batch, returns and drops the source.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !dropped.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(std::time::Instant::now() < deadline, "the decoding thread still runs");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
