//! The body every fuzz target runs: open the input (the first byte chooses lenient mode
//! and instruction fetches), read every record, and check what must always hold.

use std::io::Cursor;
use swapsim_trace_formats::{open, summarize, Format, FormatError, OpenOptions};

/// Records read per input at most, so that one input cannot run for long.
const RECORDS_MAX: u32 = 100_000;

pub fn run(data: &[u8], format: Option<Format>) {
    let Some((&flags, bytes)) = data.split_first() else {
        return;
    };
    let options = OpenOptions {
        format,
        lenient: flags & 1 != 0,
        instructions: flags & 2 != 0,
        ..OpenOptions::default()
    };
    let n_lines = bytes.iter().filter(|&&byte| byte == b'\n').count() as u64 + 1;
    let Ok(mut source) = open(Box::new(Cursor::new(bytes.to_vec())), options) else {
        return;
    };
    if flags & 4 != 0 {
        // The summary pass reads the same records.
        let _ = summarize(&mut *source);
        return;
    }
    for _ in 0..RECORDS_MAX {
        match source.next_record() {
            Ok(Some(record)) => {
                assert!(record.page < 1 << 45, "page {:#x} beyond 57-bit addresses", record.page)
            }
            Ok(None) => break,
            Err(err) => {
                let compressed =
                    bytes.starts_with(&[0x1f, 0x8b]) || bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
                if let (FormatError::Line { line, .. }, false) = (&err, compressed) {
                    assert!((1..=n_lines).contains(line), "line {line} of {n_lines}");
                }
                assert!(source.next_record().is_err(), "a reader must stay stopped after an error");
                break;
            }
        }
    }
}
