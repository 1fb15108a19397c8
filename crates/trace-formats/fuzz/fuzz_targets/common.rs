//! The body every fuzz target runs: open the input (the first byte chooses lenient mode,
//! instruction fetches, a summary pass, and, for libCacheSim's text formats, string ids,
//! the dense mapping and the csv columns), read every record, and check what must always
//! hold.

use std::io::Cursor;
use swapsim_trace_formats::{open, summarize, Format, FormatError, ObjectMap, OpenOptions, TraceParams};

/// Records read per input at most, so that one input cannot run for long.
const RECORDS_MAX: u32 = 100_000;

pub fn run(data: &[u8], format: Option<Format>) {
    let Some((&flags, bytes)) = data.split_first() else {
        return;
    };
    let params = match format {
        Some(Format::LibCacheSimTxt) => {
            TraceParams { obj_id_is_num: Some(flags & 8 == 0), ..TraceParams::default() }
        }
        Some(Format::LibCacheSimCsv) => {
            let columns =
                ["obj-id-col=1", "obj-id-col=2,time-col=1,obj-size-col=3", "obj-id-col=3,delimiter=\\t"];
            let mut params =
                TraceParams::parse(columns[usize::from(flags >> 5) % columns.len()]).expect("valid");
            params.obj_id_is_num = Some(flags & 8 == 0);
            params
        }
        _ => TraceParams::default(),
    };
    let options = OpenOptions {
        format,
        lenient: flags & 1 != 0,
        instructions: flags & 2 != 0,
        object_map: if flags & 16 != 0 { ObjectMap::Dense } else { ObjectMap::default() },
        params,
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
