//! A seeded fuzz loop for the native trace reader: feeds it mutated native traces and
//! checks that it never panics, never hangs, and that whatever it accepts is a valid trace.
//!
//! Inputs start from a few valid traces and are mutated by bit flips, byte overwrites with
//! interesting values, truncations, insertions, deletions, duplications and splices of two
//! traces. Half of the mutations hit the decompressed body, which is then compressed
//! again, so that they reach the record decoder instead of stopping at zstd's checksum; the
//! rest hit the file as stored, header and compressed bytes included.
//!
//! When the reader accepts an input, its records are written and read again, and must come
//! back unchanged: the reader must only accept what the writer can produce. Every input also
//! goes through the summary frame's reader (`stored_summary`), which must not panic either.
//!
//! Run with `cargo run --release --example fuzz_native [-- ITERATIONS [SEED]]`. A failure
//! prints the iteration, the seed and the input.

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;
use swapsim_trace_formats::native::{stored_summary, NativeReader, NativeWriter};
use swapsim_trace_formats::{Record, RecordSource};

const ITERATIONS_DEFAULT: u64 = 1_000_000;
const SEED_DEFAULT: u64 = 1;
/// Any decode stopping later than this counts as a hang. Every record takes at least one
/// byte of body, and inputs are at most a few KiB, so valid decodes stop far earlier.
const RECORDS_MAX: usize = 1 << 20;
const HEADER_BYTES: usize = 12;

fn encode(records: &[Record]) -> Vec<u8> {
    let mut writer = NativeWriter::new(Vec::new()).expect("writing to a Vec cannot fail");
    for r in records {
        writer.write(r).expect("seed records are valid");
    }
    writer.finish().expect("writing to a Vec cannot fail")
}

/// Valid traces to mutate: empty, one record, interleaved tasks, large and small jumps,
/// missing times, extreme values.
fn seed_traces(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let mut traces = vec![
        encode(&[]),
        encode(&[Record { pid: 1, tid: 1, time_ns: Some(5), page: 0x1000, write: true }]),
        encode(&[
            Record { pid: u32::MAX, tid: 0, time_ns: Some(u64::MAX - 1), page: (1 << 63) - 1, write: false },
            Record { pid: 0, tid: u32::MAX, time_ns: Some(u64::MAX), page: 0, write: true },
            Record { pid: u32::MAX, tid: 0, time_ns: None, page: 1 << 52, write: false },
        ]),
    ];
    for n_tasks in [1u32, 3, 40] {
        let mut time_ns = 0u64;
        let mut pages = vec![0u64; n_tasks as usize];
        let records: Vec<Record> = (0..rng.random_range(20..120))
            .map(|_| {
                let task = rng.random_range(0..n_tasks);
                let page = &mut pages[task as usize];
                *page = match rng.random_range(0..4) {
                    0 => rng.random_range(0..1u64 << 52),
                    1 => page.saturating_sub(rng.random_range(0..20)),
                    _ => *page + 1,
                };
                time_ns += rng.random_range(0..100_000);
                let time_ns = if rng.random_ratio(1, 5) { None } else { Some(time_ns) };
                Record { pid: 100 + task, tid: 200 + task, time_ns, page: *page, write: rng.random() }
            })
            .collect();
        traces.push(encode(&records));
    }
    traces
}

const INTERESTING: [u8; 12] = [0x00, 0x01, 0x02, 0x1e, 0x1f, 0x20, 0x3f, 0x5f, 0x7f, 0x80, 0xfe, 0xff];

/// Applies one to four random mutations to `input`, using `other` for splices.
fn mutate(rng: &mut ChaCha8Rng, input: &mut Vec<u8>, other: &[u8]) {
    for _ in 0..rng.random_range(1..=4) {
        let len = input.len();
        match rng.random_range(0..8) {
            0 if len > 0 => {
                let idx = rng.random_range(0..len);
                input[idx] ^= 1 << rng.random_range(0..8);
            }
            1 if len > 0 => {
                let idx = rng.random_range(0..len);
                input[idx] = INTERESTING[rng.random_range(0..INTERESTING.len())];
            }
            2 => input.truncate(rng.random_range(0..=len)),
            3 => {
                let idx = rng.random_range(0..=len);
                let n_bytes = rng.random_range(1..12);
                let bytes: Vec<u8> = (0..n_bytes)
                    .map(|_| if rng.random() { rng.random() } else { INTERESTING[rng.random_range(0..12)] })
                    .collect();
                input.splice(idx..idx, bytes);
            }
            4 if len > 0 => {
                let start = rng.random_range(0..len);
                let end = rng.random_range(start..=len.min(start + 16));
                input.drain(start..end);
            }
            5 if len > 0 => {
                let start = rng.random_range(0..len);
                let end = rng.random_range(start..=len.min(start + 16));
                let copy = input[start..end].to_vec();
                let at = rng.random_range(0..=input.len());
                input.splice(at..at, copy);
            }
            6 => {
                let keep = rng.random_range(0..=len);
                let from = rng.random_range(0..=other.len());
                input.truncate(keep);
                input.extend_from_slice(&other[from..]);
            }
            _ => {
                let idx = rng.random_range(0..=len);
                let byte = INTERESTING[rng.random_range(0..INTERESTING.len())];
                input.insert(idx, byte);
            }
        }
    }
}

/// Decodes `file` record by record: the records before the end or the first error, and the
/// error's message.
fn decode(file: Vec<u8>) -> (Vec<Record>, Option<String>) {
    let mut reader = match NativeReader::new(Box::new(Cursor::new(file))) {
        Ok(reader) => reader,
        Err(e) => return (Vec::new(), Some(e.to_string())),
    };
    let mut records = Vec::new();
    loop {
        match reader.next_record() {
            Ok(Some(r)) => records.push(r),
            Ok(None) => return (records, None),
            Err(e) => return (records, Some(e.to_string())),
        }
        assert!(records.len() <= RECORDS_MAX, "the reader does not stop");
    }
}

/// Decodes `file` in batches of `n_max` records, as [`decode`] returns it.
fn decode_batched(file: Vec<u8>, n_max: usize) -> (Vec<Record>, Option<String>) {
    let mut reader = match NativeReader::new(Box::new(Cursor::new(file))) {
        Ok(reader) => reader,
        Err(e) => return (Vec::new(), Some(e.to_string())),
    };
    let mut records = Vec::new();
    loop {
        let n_before = records.len();
        if let Err(e) = reader.next_records(&mut records, n_max) {
            return (records, Some(e.to_string()));
        }
        if records.len() < n_before + n_max {
            return (records, None);
        }
        assert!(records.len() <= RECORDS_MAX, "the reader does not stop");
    }
}

/// Runs one input; panics on a broken property.
fn check(file: Vec<u8>) -> bool {
    // The summary frame's reader takes the same bytes: it finds a frame, finds none, or
    // names the offset of a contradiction, and never panics.
    if let Err(err) = stored_summary(&mut Cursor::new(&file)) {
        let message = err.to_string();
        assert!(message.starts_with("byte offset "), "unexpected kind of summary error: {message}");
    }
    let decoded = decode(file.clone());
    for n_max in [3, 256] {
        assert_eq!(decode_batched(file.clone(), n_max), decoded, "batches of {n_max} decode differently");
    }
    match decoded {
        (records, None) => {
            let again = decode(encode(&records));
            assert_eq!(again, (records, None), "an accepted trace does not survive a round trip");
            true
        }
        (_, Some(message)) => {
            assert!(message.starts_with("byte offset "), "unexpected kind of error: {message}");
            false
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let iterations: u64 = match args.next() {
        Some(arg) => arg.parse().map_err(|e| format!("ITERATIONS {arg:?}: {e}"))?,
        None => ITERATIONS_DEFAULT,
    };
    let seed: u64 = match args.next() {
        Some(arg) => arg.parse().map_err(|e| format!("SEED {arg:?}: {e}"))?,
        None => SEED_DEFAULT,
    };
    println!("fuzz_native: {iterations} iterations, seed {seed}");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let files = seed_traces(&mut rng);
    let bodies: Vec<Vec<u8>> =
        files.iter().map(|f| zstd::decode_all(&f[HEADER_BYTES..]).expect("seed traces are valid")).collect();
    let mut compressor = zstd::bulk::Compressor::new(1)?;
    let (mut n_accepted, mut n_body, mut n_file, mut n_garbage) = (0u64, 0u64, 0u64, 0u64);
    let started = Instant::now();
    // Panics are caught and reported with the input; keep the default hook quiet.
    std::panic::set_hook(Box::new(|_| {}));
    for iteration in 0..iterations {
        let pick = rng.random_range(0..files.len());
        let other = rng.random_range(0..files.len());
        let input = match rng.random_range(0..20) {
            0 => {
                n_garbage += 1;
                let mut garbage = vec![0u8; rng.random_range(0..200)];
                rng.fill_bytes(&mut garbage);
                if rng.random() {
                    garbage.splice(0..0, files[0][..HEADER_BYTES].iter().copied());
                }
                garbage
            }
            1..=10 => {
                n_body += 1;
                let mut body = bodies[pick].clone();
                mutate(&mut rng, &mut body, &bodies[other]);
                let mut file = files[0][..HEADER_BYTES].to_vec();
                file.extend(compressor.compress(&body)?);
                file
            }
            _ => {
                n_file += 1;
                let mut file = files[pick].clone();
                mutate(&mut rng, &mut file, &files[other]);
                file
            }
        };
        match catch_unwind(AssertUnwindSafe(|| check(input.clone()))) {
            Ok(accepted) => n_accepted += u64::from(accepted),
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                let hex: Vec<String> = input.iter().map(|b| format!("{b:02x}")).collect();
                return Err(format!(
                    "iteration {iteration} (seed {seed}) panicked: {message}\ninput: {}",
                    hex.join(" ")
                )
                .into());
            }
        }
    }
    println!(
        "{iterations} inputs ({n_body} body mutations, {n_file} file mutations, {n_garbage} random) \
         in {:.1} s: {n_accepted} accepted, {} rejected with an error, no panic",
        started.elapsed().as_secs_f64(),
        iterations - n_accepted
    );
    Ok(())
}
