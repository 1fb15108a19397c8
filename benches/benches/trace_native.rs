//! Encode and decode speed of the native trace format.
//!
//! The workloads are 10M records from a fixed seed: four tasks, each alternating runs of
//! sequential pages (16 on average) with jumps to random pages in a 16 GiB region, with
//! timestamps a few hundred nanoseconds apart and one access in four a write. In
//! `interleaved` every record picks a random task, the worst case for the format (most
//! records carry a task switch); in `bursty` a task keeps running for 32 records on average,
//! as threads do between context switches. The encoded trace is kept in memory, so the
//! numbers measure the codec and zstd, not the disk.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use swapsim_trace_formats::native::{NativeReader, NativeWriter};
use swapsim_trace_formats::{Record, RecordSource};

const N_RECORDS: usize = 10_000_000;
const N_TASKS: u32 = 4;
/// 16 GiB of 4 KiB pages.
const REGION_PAGES: u64 = 1 << 22;

/// Records over four tasks; a record switches to a random task with probability
/// 1 / `switch_one_in`.
fn workload(n_records: usize, switch_one_in: u32, seed: u64) -> Vec<Record> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pages = [0u64; N_TASKS as usize];
    let mut time_ns = 0u64;
    let mut task = 0;
    (0..n_records)
        .map(|_| {
            if rng.random_ratio(1, switch_one_in) {
                task = rng.random_range(0..N_TASKS);
            }
            let page = &mut pages[task as usize];
            // Runs of sequential pages average 16 pages.
            *page = if rng.random_ratio(1, 16) { rng.random_range(0..REGION_PAGES) } else { *page + 1 };
            time_ns += rng.random_range(50..700);
            Record {
                pid: 1000 + task,
                tid: 1000 + task,
                time_ns: Some(time_ns),
                page: *page,
                write: rng.random_ratio(1, 4),
            }
        })
        .collect()
}

fn encode(records: &[Record]) -> Vec<u8> {
    let mut writer = NativeWriter::new(Vec::new()).expect("writing to a Vec cannot fail");
    for r in records {
        writer.write(r).expect("workload records are valid");
    }
    writer.finish().expect("writing to a Vec cannot fail")
}

/// Decodes `file`, returning the number of records and a checksum of their pages and times.
fn decode(file: &Arc<[u8]>) -> (u64, u64) {
    let mut reader =
        NativeReader::new(Box::new(std::io::Cursor::new(Arc::clone(file)))).expect("the trace is valid");
    let mut n_records = 0u64;
    let mut checksum = 0u64;
    while let Some(r) = reader.next_record().expect("the trace is valid") {
        n_records += 1;
        checksum = checksum.wrapping_add(r.page ^ r.time_ns.unwrap_or(0));
    }
    (n_records, checksum)
}

fn bench_native(c: &mut Criterion) {
    let mut group = c.benchmark_group("native");
    group.sample_size(10);
    group.throughput(Throughput::Elements(N_RECORDS as u64));
    for (name, switch_one_in) in [("interleaved", 1), ("bursty", 32)] {
        let records = workload(N_RECORDS, switch_one_in, 1);
        let file: Arc<[u8]> = encode(&records).into();
        let expected_checksum =
            records.iter().fold(0u64, |sum, r| sum.wrapping_add(r.page ^ r.time_ns.unwrap_or(0)));
        // Check once that the timed code decodes what was written.
        assert_eq!(decode(&file), (N_RECORDS as u64, expected_checksum));
        eprintln!(
            "native/{name}: {N_RECORDS} records in {} bytes, {:.3} bytes per record",
            file.len(),
            file.len() as f64 / N_RECORDS as f64
        );
        group.bench_function(format!("decode/{name}/tasks={N_TASKS}"), |b| {
            b.iter(|| decode(black_box(&file)))
        });
        group.bench_function(format!("encode/{name}/tasks={N_TASKS}"), |b| {
            b.iter(|| encode(black_box(&records)).len())
        });
    }
    group.finish();
}

criterion_group!(benches, bench_native);
criterion_main!(benches);
