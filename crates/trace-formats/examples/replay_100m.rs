//! Shows that the native format streams in flat memory: writes a 100M-record trace to a
//! temporary file, reads it back record by record, and prints the process's peak resident
//! memory (VmHWM) before and after each phase, with sizes and timings.
//!
//! The trace has one task whose pages cycle over a 1 GiB region, mostly sequentially with
//! an occasional random jump, and timestamps a few hundred nanoseconds apart. The file is
//! written to the system's temporary directory and deleted afterwards.
//!
//! Run with `cargo run --release --example replay_100m [-- N_RECORDS]`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::time::Instant;
use swapsim_trace_formats::native::{NativeReader, NativeWriter};
use swapsim_trace_formats::{Record, RecordSource};

const N_RECORDS_DEFAULT: u64 = 100_000_000;
/// 1 GiB of 4 KiB pages.
const REGION_PAGES: u64 = 1 << 18;
const SEED: u64 = 100;

/// Removes the temporary trace however the program ends.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A line of /proc/self/status in KiB, such as "VmHWM" (peak resident set size) or "VmRSS"
/// (current resident set size).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line =
        status.lines().find(|line| line.strip_prefix(field).is_some_and(|rest| rest.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn show_peak(when: &str) -> u64 {
    let peak_kib = status_kib("VmHWM").unwrap_or(0);
    let current_kib = status_kib("VmRSS").unwrap_or(0);
    println!("VmHWM {when}: {peak_kib} kB (VmRSS {current_kib} kB)");
    peak_kib
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n_records: u64 = match std::env::args().nth(1) {
        Some(arg) => arg.parse().map_err(|e| format!("N_RECORDS {arg:?}: {e}"))?,
        None => N_RECORDS_DEFAULT,
    };
    let temp = TempFile(std::env::temp_dir().join(format!("swapsim-replay-{}.native", std::process::id())));
    println!("seed {SEED}, {n_records} records, trace file {}", temp.0.display());
    let peak_start_kib = show_peak("at start");

    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut writer = NativeWriter::new(BufWriter::new(File::create(&temp.0)?))?;
    let (mut page, mut time_ns) = (0u64, 0u64);
    let mut page_sum_written = 0u64;
    for _ in 0..n_records {
        page = if rng.random_ratio(1, 64) {
            rng.random_range(0..REGION_PAGES)
        } else {
            (page + 1) % REGION_PAGES
        };
        time_ns += rng.random_range(100..1000);
        page_sum_written = page_sum_written.wrapping_add(page);
        let write = rng.random_ratio(1, 3);
        writer.write(&Record { pid: 1, tid: 1, time_ns: Some(time_ns), page, write })?;
    }
    writer.finish()?.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    let write_secs = started.elapsed().as_secs_f64();
    let size_bytes = std::fs::metadata(&temp.0)?.len();
    println!(
        "wrote {size_bytes} bytes ({:.3} bytes per record) in {write_secs:.2} s ({:.1}M records/s)",
        size_bytes as f64 / n_records as f64,
        n_records as f64 / write_secs / 1e6
    );
    let peak_written_kib = show_peak("after writing");

    let started = Instant::now();
    let mut reader = NativeReader::new(Box::new(BufReader::new(File::open(&temp.0)?)))?;
    let (mut n_read, mut page_sum_read, mut time_ns_last) = (0u64, 0u64, 0u64);
    // The writer's peak hides the reader's, so also sample the current size while reading.
    let mut rss_reading_kib_max = 0;
    while let Some(r) = reader.next_record()? {
        n_read += 1;
        if n_read & ((1 << 24) - 1) == 0 {
            rss_reading_kib_max = rss_reading_kib_max.max(status_kib("VmRSS").unwrap_or(0));
        }
        page_sum_read = page_sum_read.wrapping_add(r.page);
        time_ns_last = r.time_ns.unwrap_or(time_ns_last);
    }
    let read_secs = started.elapsed().as_secs_f64();
    println!(
        "read {n_read} records (page sum {page_sum_read}, last time {time_ns_last} ns) in {read_secs:.2} s \
         ({:.1}M records/s)",
        n_read as f64 / read_secs / 1e6
    );
    let peak_read_kib = show_peak("after reading");
    println!("VmRSS while reading, largest sample: {rss_reading_kib_max} kB");
    if (n_read, page_sum_read, time_ns_last) != (n_records, page_sum_written, time_ns) {
        return Err(format!(
            "read back {n_read} records, page sum {page_sum_read}, last time {time_ns_last} ns; \
             wrote {n_records}, {page_sum_written}, {time_ns} ns"
        )
        .into());
    }
    println!(
        "peak growth: writing {} kB, reading {} kB",
        peak_written_kib.saturating_sub(peak_start_kib),
        peak_read_kib.saturating_sub(peak_written_kib)
    );
    Ok(())
}
