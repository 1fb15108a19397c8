//! The disk a swap file lies on, timed for a device profile (`swapsim probe disk`, and
//! `probe run` before its first repeat when the output folder has no profile yet).
//!
//! The job set is the one behind the bundled `this-vm` preset, made small: random reads at
//! queue depth 1 of 4, 16, 64 and 128 KiB (the read line), random writes at depth 1 of 4
//! and 64 KiB (the write line), random 4 KiB reads at depth 32 (how many requests the disk
//! serves at once) and sequential 512 KiB reads (its bandwidth), every one with direct
//! I/O on a scratch file beside the swap file. With fio installed, fio runs them and its
//! JSON is kept; without it the probe times the same jobs itself (`pread`/`pwrite` with
//! `O_DIRECT`, one thread per request in flight) and writes its figures in the shape of
//! fio's JSON, so `swapsim profile fit` reads either.
//!
//! The fit subtracts the latency a request sees above the block layer (system call,
//! completion, wake-up). With tracefs and the disk's name (`--block-device`), it is
//! measured: the 4 KiB depth-1 read job runs once more under the block tracepoints, and the
//! difference between the mean the job saw and the mean service time the tracepoints saw
//! is the overhead. Otherwise the validation machine's 7.7 µs is assumed, and the profile's
//! description says so.

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::blocktrace::BlockTrace;
use super::host::Host;

/// The file a profile is written to, in an output folder; `swapsim validate` reads it.
pub(crate) const PROFILE: &str = swapsim::validate::DEVICE_PROFILE;

/// The latency above the block layer assumed when it cannot be measured, µs: the
/// validation machine's (fio saw 25.7 µs for what the tracepoints saw as 18 µs).
const ASSUMED_OVERHEAD_US: f64 = 7.7;

/// One timing job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Job {
    pub(crate) name: &'static str,
    /// fio's `rw`: randread, randwrite or read.
    pub(crate) rw: &'static str,
    pub(crate) kib: u64,
    pub(crate) depth: usize,
}

/// The job set, in the order it runs.
pub(crate) const JOBS: &[Job] = &[
    Job { name: "randread-4k-qd1", rw: "randread", kib: 4, depth: 1 },
    Job { name: "randread-16k-qd1", rw: "randread", kib: 16, depth: 1 },
    Job { name: "randread-64k-qd1", rw: "randread", kib: 64, depth: 1 },
    Job { name: "randread-128k-qd1", rw: "randread", kib: 128, depth: 1 },
    Job { name: "randwrite-4k-qd1", rw: "randwrite", kib: 4, depth: 1 },
    Job { name: "randwrite-64k-qd1", rw: "randwrite", kib: 64, depth: 1 },
    Job { name: "randread-4k-qd32", rw: "randread", kib: 4, depth: 32 },
    Job { name: "seqread-512k-qd1", rw: "read", kib: 512, depth: 1 },
];

/// What times the jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    Fio,
    Own,
}

/// How the disk is timed.
#[derive(Clone, Debug)]
pub(crate) struct DiskTiming {
    /// The scratch file, on the swap file's file system; removed afterwards.
    pub(crate) scratch: PathBuf,
    pub(crate) size_bytes: u64,
    pub(crate) seconds: f64,
    pub(crate) timer: Timer,
    /// The disk's block device name, for measuring the overhead with tracepoints.
    pub(crate) block_device: Option<String>,
}

/// Times the disk into `out/device/` (each job's JSON, then `profile.toml`) and returns the
/// profile's path. `say` hears progress.
pub(crate) fn time_disk(
    host: &Host,
    timing: &DiskTiming,
    out: &Path,
    say: &mut dyn FnMut(&str),
) -> Result<PathBuf> {
    let dir = out.join("device");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let scratch = Scratch::make(&timing.scratch, timing.size_bytes)?;
    let mut files = Vec::new();
    for job in JOBS {
        let by = if timing.timer == Timer::Fio { "fio" } else { "direct I/O" };
        say(&format!("timing the disk: {} ({by}, {} s)", job.name, timing.seconds));
        let doc = run_job(timing, job)?;
        let file = dir.join(format!("{}.json", job.name));
        let text = serde_json::to_string_pretty(&doc).expect("JSON serialises") + "\n";
        crate::outfile::write_atomically(&file, text.as_bytes())?;
        files.push(file);
    }
    let overhead = match &timing.block_device {
        Some(dev) => measured_overhead(host, timing, dev, say)?,
        None => None,
    };
    drop(scratch);
    let (overhead_us, how) = match overhead {
        Some(us) => (us, format!("{us:.1} µs above the block layer, measured with the block tracepoints")),
        None => (
            ASSUMED_OVERHEAD_US,
            format!("{ASSUMED_OVERHEAD_US} µs above the block layer assumed (the validation machine's; give --block-device with tracefs to measure it)"),
        ),
    };
    let fitted = swapsim::profile::fit(&files, "probed-disk", overhead_us)?;
    let timer = match timing.timer {
        Timer::Fio => "fio",
        Timer::Own => "the probe's own direct-I/O timer",
    };
    let text = format!(
        "# The swap file's disk, timed by {timer} on {}: {how}.\n# {}\n{}",
        host.value("/proc/sys/kernel/osrelease").unwrap_or_else(|_| "unknown".into()),
        fitted.description,
        toml::to_string(&fitted.profile).context("serialising the profile")?
    );
    let profile = out.join(PROFILE);
    crate::outfile::write_atomically(&profile, text.as_bytes())?;
    Ok(profile)
}

/// The scratch file, removed when dropped; or a block device the user gave up for swap,
/// timed in place and left (the probe formats it next).
struct Scratch {
    path: PathBuf,
    device: bool,
}

impl Scratch {
    /// Writes `size` bytes of incompressible data to `path` with direct I/O (so every
    /// block the jobs read holds data: a never-written block of a thin or sparse disk reads
    /// faster than the swap area's will) and syncs it. A block device (a path under /dev)
    /// is written in place, not made.
    fn make(path: &Path, size: u64) -> Result<Scratch> {
        let device = path.starts_with("/dev");
        let file = crate::outfile::open_direct(path, !device).with_context(|| {
                if device {
                    format!("cannot open {} for direct I/O", path.display())
                } else {
                    format!(
                        "cannot make the scratch file {} with direct I/O (a probe that was killed leaves it: remove it)",
                        path.display()
                    )
                }
            })?;
        let scratch = Scratch { path: path.to_path_buf(), device };
        let mut buf = Aligned::new(1 << 20);
        fill(buf.slice(), 0x9e37_79b9_7f4a_7c15);
        let mut at = 0;
        while at < size {
            file.write_all_at(buf.slice(), at).with_context(|| format!("writing {}", path.display()))?;
            at += 1 << 20;
        }
        file.sync_all().with_context(|| format!("syncing {}", path.display()))?;
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.device {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A buffer aligned to 4 KiB, as direct I/O requires.
struct Aligned {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let bytes = vec![0u8; len + 4096];
        let start = bytes.as_ptr().align_offset(4096);
        Aligned { bytes, start, len }
    }

    fn slice(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..self.start + self.len]
    }
}

/// Fills `buf` with incompressible bytes from `seed`.
fn fill(buf: &mut [u8], seed: u64) {
    let mut state = seed;
    for word in buf.chunks_exact_mut(8) {
        state = next(state);
        word.copy_from_slice(&state.to_le_bytes());
    }
}

/// A step of a 64-bit xorshift, for offsets and data.
fn next(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// One job, as fio's JSON (fio's own output, or the same shape from the own timer).
fn run_job(timing: &DiskTiming, job: &Job) -> Result<Value> {
    match timing.timer {
        Timer::Fio => run_fio(timing, job),
        Timer::Own => {
            let figures = time_job(&timing.scratch, timing.size_bytes, job, timing.seconds)?;
            Ok(figures.fio_json(job))
        }
    }
}

/// fio running `job` on the scratch file.
fn run_fio(timing: &DiskTiming, job: &Job) -> Result<Value> {
    let engine = if job.depth > 1 { "libaio" } else { "psync" };
    let output = std::process::Command::new("fio")
        .arg(format!("--name={}", job.name))
        .arg(format!("--filename={}", timing.scratch.display()))
        .arg(format!("--size={}", timing.size_bytes))
        .arg(format!("--rw={}", job.rw))
        .arg(format!("--bs={}k", job.kib))
        .arg(format!("--iodepth={}", job.depth))
        .arg(format!("--ioengine={engine}"))
        .arg("--direct=1")
        .arg("--time_based")
        .arg(format!("--runtime={}", timing.seconds.ceil().max(1.0) as u64))
        .arg("--randrepeat=1")
        .arg("--output-format=json")
        .output()
        .context("cannot run fio")?;
    if !output.status.success() {
        bail!(
            "fio {} failed ({}): {}",
            job.name,
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&output.stdout);
    // fio may print notes before its JSON.
    let json = text.find('{').map(|at| &text[at..]).unwrap_or(&text);
    serde_json::from_str(json).with_context(|| format!("fio {}: its output is not JSON", job.name))
}

/// What the own timer saw of one job.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Figures {
    pub(crate) requests: u64,
    /// Sum of every request's latency, ns.
    pub(crate) latency_ns: u128,
    pub(crate) elapsed: Duration,
}

impl Figures {
    /// The figures in fio's JSON shape: the fields `swapsim profile fit` reads.
    pub(crate) fn fio_json(&self, job: &Job) -> Value {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let iops = self.requests as f64 / secs;
        let mean_ns = self.latency_ns as f64 / self.requests.max(1) as f64;
        let figures = json!({
            "iops": iops,
            "bw_bytes": iops * (job.kib * 1024) as f64,
            "clat_ns": { "mean": mean_ns },
            "total_ios": self.requests,
            "runtime": self.elapsed.as_millis() as u64,
        });
        let idle = json!({ "iops": 0.0, "bw_bytes": 0.0, "clat_ns": { "mean": 0.0 } });
        let write = job.rw.contains("write");
        json!({
            "fio version": format!("swapsim probe {} (direct-I/O timer)", env!("CARGO_PKG_VERSION")),
            "jobs": [{
                "jobname": job.name,
                "job options": {
                    "rw": job.rw,
                    "bs": format!("{}k", job.kib),
                    "iodepth": job.depth.to_string(),
                    "direct": "1",
                },
                "read": if write { idle.clone() } else { figures.clone() },
                "write": if write { figures } else { idle },
            }],
        })
    }
}

/// Times `job` on `path` (`size` bytes) for about `seconds`: `job.depth` threads, each
/// issuing one request after another, random offsets aligned to the block size (or in
/// order for a sequential job).
pub(crate) fn time_job(path: &Path, size: u64, job: &Job, seconds: f64) -> Result<Figures> {
    let bytes = job.kib * 1024;
    let blocks = size / bytes;
    if blocks == 0 {
        bail!("the scratch file of {size} bytes is smaller than one {} KiB block", job.kib);
    }
    let file = crate::outfile::open_direct(path, false)
        .with_context(|| format!("cannot open {} with direct I/O", path.display()))?;
    let until = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let per_thread = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..job.depth)
            .map(|thread| {
                let file = &file;
                scope.spawn(move || one_thread(file, job, bytes, blocks, thread as u64, start, until))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a timing thread does not panic")).collect::<Vec<_>>()
    });
    let elapsed = start.elapsed();
    let mut total = Figures { elapsed, ..Figures::default() };
    for figures in per_thread {
        let figures = figures.with_context(|| format!("{}: {}", job.name, path.display()))?;
        total.requests += figures.requests;
        total.latency_ns += figures.latency_ns;
    }
    Ok(total)
}

/// One thread of a job: requests one after another until `until` has passed since `start`.
fn one_thread(
    file: &File,
    job: &Job,
    bytes: u64,
    blocks: u64,
    thread: u64,
    start: Instant,
    until: Duration,
) -> std::io::Result<Figures> {
    let mut buf = Aligned::new(bytes as usize);
    fill(buf.slice(), thread + 7);
    let mut state = 0x2545_f491_4f6c_dd1d ^ (thread + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut sequential = thread * blocks / job.depth as u64;
    let mut figures = Figures::default();
    let write = job.rw.contains("write");
    while start.elapsed() < until {
        let block = if job.rw.starts_with("rand") {
            state = next(state);
            state % blocks
        } else {
            sequential = (sequential + 1) % blocks;
            sequential
        };
        let at = block * bytes;
        let t = Instant::now();
        let done = if write { file.write_at(buf.slice(), at)? } else { file.read_at(buf.slice(), at)? };
        figures.latency_ns += t.elapsed().as_nanos();
        if done != bytes as usize {
            return Err(std::io::Error::other(format!("a {bytes}-byte request at {at} moved {done} bytes")));
        }
        figures.requests += 1;
    }
    Ok(figures)
}

/// The latency above the block layer: the 4 KiB depth-1 read job run again under the
/// block tracepoints of `dev`, its mean latency minus the traced mean service time. `None`
/// without tracefs or traced reads.
fn measured_overhead(
    host: &Host,
    timing: &DiskTiming,
    dev: &str,
    say: &mut dyn FnMut(&str),
) -> Result<Option<f64>> {
    let job = &JOBS[0];
    let Some(trace) = BlockTrace::start(host, dev)? else {
        say("no tracefs at /sys/kernel/tracing: the latency above the block layer is assumed");
        return Ok(None);
    };
    say(&format!("timing the disk: {} under the block tracepoints of {dev}", job.name));
    // A short run: every request is an event pair in the trace buffer.
    let seen = match timing.timer {
        Timer::Own => {
            time_job(&timing.scratch, timing.size_bytes, job, timing.seconds.min(1.0))?.fio_json(job)
        }
        Timer::Fio => run_fio(&DiskTiming { seconds: 1.0, ..timing.clone() }, job)?,
    };
    let traced = trace.finish(say)?;
    let job_us = seen["jobs"][0]["read"]["clat_ns"]["mean"].as_f64().unwrap_or(0.0) / 1000.0;
    match traced.get("block.read_service_us_mean") {
        Some(&service_us) if service_us > 0.0 && job_us > 0.0 => Ok(Some((job_us - service_us).max(0.0))),
        _ => {
            say(&format!("the block tracepoints of {dev} saw no reads of the scratch file: is it on {dev}?"));
            Ok(None)
        }
    }
}

/// Whether fio is on the PATH.
pub(crate) fn fio_installed() -> bool {
    std::process::Command::new("fio")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The own timer's figures, written as fio's JSON, are what `swapsim profile fit`
    /// reads: a disk whose requests take 10 µs plus 0.5 µs per KiB (writes 12 µs plus 0.25)
    /// fits to that line, less the overhead.
    #[test]
    fn the_own_timers_json_is_what_the_fit_reads() {
        let dir = std::env::temp_dir().join(format!("swapsim-disk-fit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let mut files = Vec::new();
        for job in JOBS {
            let write = job.rw.contains("write");
            let us = if write { 12.0 + 0.25 * job.kib as f64 } else { 10.0 + 0.5 * job.kib as f64 };
            let requests = 1000 * job.depth as u64;
            let figures = Figures {
                requests,
                latency_ns: (us * 1000.0) as u128 * requests as u128,
                elapsed: Duration::from_micros((us * 1000.0) as u64),
            };
            let file = dir.join(format!("{}.json", job.name));
            std::fs::write(&file, figures.fio_json(job).to_string()).expect("written");
            files.push(file);
        }
        let fitted = swapsim::profile::fit(&files, "t", 2.0).expect("a fit");
        let p = fitted.profile;
        assert_eq!((p.read_base_us, p.read_us_per_kib), (8.0, 0.5));
        assert_eq!((p.write_base_us, p.write_us_per_kib), (10.0, 0.25));
        // 32 in flight, each taking 12 µs: 2.67 M reads/s, each 10 µs of service at the
        // block layer, so about 27 in service at once.
        assert_eq!(p.channels, 27);
        // The highest throughput of any job: those 4 KiB reads, 2.67 M/s.
        assert!((p.bandwidth_mib_s - 32.0 / 12e-6 * 4.0 / 1024.0).abs() < 0.01, "{}", p.bandwidth_mib_s);
        // One write stream moves 1 MiB in 256 µs, 4096 MiB/s: below that peak, so writes
        // share it.
        assert_eq!(p.write_bandwidth_mib_s, None);
        // Without the deep reads the peak is the 512 KiB reads' 1879 MiB/s, and writes
        // stream faster than that: they get their own bandwidth.
        let shallow: Vec<_> =
            files.iter().filter(|f| !f.to_string_lossy().contains("qd32")).cloned().collect();
        let fitted = swapsim::profile::fit(&shallow, "t", 2.0).expect("a fit");
        assert_eq!(fitted.profile.write_bandwidth_mib_s, Some(4096.0));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The own timer really moves the bytes: a small file, read and written at depth 1
    /// and 4, counts whole requests. Skipped (passes) where the file system refuses direct
    /// I/O, as some temporary file systems do.
    #[test]
    fn the_own_timer_counts_whole_requests() {
        let path = std::env::temp_dir().join(format!("swapsim-disk-timer-{}", std::process::id()));
        let scratch = match Scratch::make(&path, 1 << 20) {
            Ok(scratch) => scratch,
            Err(err) => {
                eprintln!("no direct I/O here: {err:#}");
                return;
            }
        };
        for job in [JOBS[0], JOBS[5], JOBS[6]] {
            let figures = time_job(&path, 1 << 20, &job, 0.02).expect("timed");
            assert!(figures.requests > 0 && figures.latency_ns > 0, "{job:?}: {figures:?}");
        }
        drop(scratch);
        assert!(!path.exists());
        let err = time_job(&path, 1 << 20, &JOBS[0], 0.01).expect_err("no file");
        assert!(format!("{err:#}").contains("swapsim-disk-timer"), "{err:#}");
    }
}
