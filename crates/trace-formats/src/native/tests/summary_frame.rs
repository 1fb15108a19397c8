//! Tests of the summary frame: its layout, its absence, contradictions and truncations.

use super::*;

/// The summary frame that `records` should get, computed from the records themselves.
fn summary_of(records: &[Record]) -> StoredSummary {
    let mut tasks: Vec<(u32, u32, u64)> = Vec::new();
    for r in records {
        match tasks.iter_mut().find(|t| (t.0, t.1) == (r.pid, r.tid)) {
            Some(t) => t.2 += 1,
            None => tasks.push((r.pid, r.tid, 1)),
        }
    }
    let times: Vec<u64> = records.iter().filter_map(|r| r.time_ns).collect();
    let pages = records.iter().map(|r| r.page);
    StoredSummary {
        records: records.len() as u64,
        reads: records.iter().filter(|r| !r.write).count() as u64,
        page_range: (pages.clone().min().unwrap_or(0), pages.max().unwrap_or(0)),
        time_range: times.first().map(|&first| (first, times[times.len() - 1])),
        tasks,
    }
}

fn stored(file: &[u8]) -> Result<Option<StoredSummary>, FormatError> {
    stored_summary(&mut io::Cursor::new(file))
}

#[test]
fn summary_frame_layout() {
    let records = [rec(7, 7, Some(100), 0x1000, false), rec(7, 8, Some(150), 0x1001, true)];
    let file = encode(&records);
    let frame = &file[file.len() - frame_len(&file)..];
    expect![[r#"
        5e 2a 4d 18 60 00 00 00 53 57 41 50 53 55 4d 31 02 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 10 00 00 00 00 00 00 01 10 00 00 00 00 00 00 64 00 00 00 00 00 00 00 96 00 00 00 00 00 00 00 02 00 00 00 07 00 00 00 07 00 00 00 01 00 00 00 00 00 00 00 07 00 00 00 08 00 00 00 01 00 00 00 00 00 00 00 68 00 00 00"#]]
    .assert_eq(&hex(frame));
    assert_eq!(stored(&file).expect("a valid frame"), Some(summary_of(&records)));
    // zstd passes over the frame: the body reads as before.
    assert_eq!(decode(&file).expect("the trace is valid"), records);
}

#[test]
fn a_file_without_the_frame_has_no_summary_and_reads_the_same() {
    let records = mixed_records(50, 4);
    let file = encode(&records);
    let bare = &file[..file.len() - frame_len(&file)];
    assert_eq!(stored(bare).expect("no frame is no error"), None);
    assert_eq!(decode(bare).expect("the trace is valid"), records);
    assert_eq!(stored(b"SWAPSIMT").expect("too short"), None);
    assert_eq!(stored(&[0u8; 200]).expect("not a native trace"), None);
}

#[test]
fn a_contradictory_summary_frame_is_an_error() {
    let file = encode(&mixed_records(30, 3));
    let frame_at = file.len() - frame_len(&file);
    let set = |field: usize, value: u64| {
        let mut bad = file.clone();
        bad[frame_at + field..frame_at + field + 8].copy_from_slice(&value.to_le_bytes());
        stored(&bad).expect_err("a contradictory frame").to_string()
    };
    let err = set(16, 31);
    assert!(err.contains("summary frame: 31 records, but its tasks' counts add up to"), "{err}");
    assert!(err.starts_with(&format!("byte offset {}", frame_at + 16)), "{err}");
    assert!(set(24, 31).contains("31 reads out of 30 records"));
    assert!(set(32, u64::MAX - 1).contains("page range"));
}

#[test]
fn every_truncation_of_the_frame_reads_as_no_summary_or_an_error() {
    let file = encode(&mixed_records(20, 5));
    for len in 0..file.len() {
        // Never a panic, and never a summary from a cut frame.
        if let Ok(Some(found)) = stored(&file[..len]) {
            panic!("cut to {len} of {} bytes, the file has a summary: {found:?}", file.len());
        }
    }
}

proptest! {
    #[test]
    fn the_summary_frame_says_what_the_records_hold(records in records_strategy()) {
        let file = encode(&records);
        prop_assert_eq!(stored(&file).map_err(|e| e.to_string()), Ok(Some(summary_of(&records))));
    }

    #[test]
    fn arbitrary_tails_never_panic(
        tail in prop::collection::vec(any::<u8>(), 0..160),
        frame_len in 0u32..200,
    ) {
        let mut file = encode(&mixed_records(5, 6));
        file.extend_from_slice(&tail);
        let _ = stored(&file);
        file.extend_from_slice(&frame_len.to_le_bytes());
        let _ = stored(&file);
    }
}
