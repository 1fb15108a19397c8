//! Profile fitting: a device profile from fio's JSON output (`swapsim profile fit`).
//!
//! The fit is the one behind the `virtio` preset, so a user can repeat it for
//! their own disk:
//!
//! - Reads: a least-squares line through the mean completion latency of the read jobs run
//!   at queue depth 1, against the block size: the slope is `read_us_per_kib`; the
//!   intercept minus the latency fio sees above the block layer (`--overhead-us`, system
//!   call and completion path; 7.7 µs on the validation machine, where block tracepoints
//!   measured 18 µs for what fio saw as 25.7 µs) is `read_base_us`.
//! - Writes: the same with the write jobs at depth 1; with a single write size the read
//!   slope is reused.
//! - `channels`: random 4 KiB reads completed per second at the deepest queue, times the
//!   block-level service time of one such read (Little's law): how many the device
//!   serves at once.
//! - `bandwidth_mib_s`: the highest throughput of any job.
//! - `write_bandwidth_mib_s`: with writes at two sizes or more, the rate one stream of
//!   writes moves data, 1 MiB over the write line's slope, when it is higher than
//!   `bandwidth_mib_s` (a virtual disk's host takes writes into its cache faster than it
//!   reads). The validation machine's `this-vm` preset is fitted otherwise, to the
//!   kernel's block tracepoints per request while swapping, as a host serving passes
//!   (`pass_signal_us`), which fio's figures alone do not show.
//!   Otherwise reads and writes share `bandwidth_mib_s`.
//!
//! Jobs are recognised by their `rw`, `bs` and `iodepth` options (per job or global).

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::path::Path;
use swapsim_devices::DeviceProfile;

/// One fio job's figures.
#[derive(Debug, Clone)]
struct Job {
    name: String,
    read: bool,
    random: bool,
    kib: f64,
    depth: u32,
    clat_us: f64,
    iops: f64,
    mib_s: f64,
}

/// Reads fio's `bs` option in KiB. fio's own unit rules differ from swapsim's (with its
/// default `kb_base=1024`, fio reads `4kB` as 4096 bytes), so the sizes where the two
/// agree are accepted: bytes and the kernel-style `k`, `m`, `g` suffixes that fio job
/// files use, and `KiB`-style units; decimal units are rejected rather than misread.
fn parse_size_kib(text: &str) -> Result<f64, String> {
    let unit = text.trim().trim_start_matches(|c: char| c.is_ascii_digit() || c == '.').trim();
    if unit.len() == 2 && unit.to_ascii_lowercase().ends_with('b') {
        return Err(format!(
            "\"{text}\": fio reads {unit} by its kb_base setting; give the block size as e.g. 4k or 4KiB"
        ));
    }
    let size = swapsim_core::ByteSize::parse(text).map_err(|err| err.to_string())?;
    Ok(size.0 as f64 / 1024.0)
}

fn jobs_of(doc: &Value, file: &Path) -> Result<Vec<Job>> {
    let global = doc.get("global options").cloned().unwrap_or(Value::Null);
    let mut out = Vec::new();
    for job in doc["jobs"]
        .as_array()
        .with_context(|| format!("{}: no \"jobs\" array (not fio JSON?)", file.display()))?
    {
        let opt = |key: &str| job["job options"].get(key).or_else(|| global.get(key)).and_then(Value::as_str);
        let name = job["jobname"].as_str().unwrap_or("?").to_string();
        let Some(rw) = opt("rw") else { continue };
        let bs = opt("bs").with_context(|| format!("{}: job {name}: bs missing", file.display()))?;
        let kib =
            parse_size_kib(bs).map_err(|message| anyhow!("{}: job {name}: bs: {message}", file.display()))?;
        let depth: u32 = opt("iodepth").unwrap_or("1").parse().unwrap_or(1);
        let random = rw.contains("rand");
        for (dir, is_read) in [("read", true), ("write", false)] {
            let d = &job[dir];
            let iops = d["iops"].as_f64().unwrap_or(0.0);
            if iops <= 0.0 {
                continue;
            }
            let clat_us = d["clat_ns"]["mean"].as_f64().unwrap_or(0.0) / 1000.0;
            let mib_s = d["bw_bytes"].as_f64().unwrap_or(0.0) / 1_048_576.0;
            out.push(Job { name: name.clone(), read: is_read, random, kib, depth, clat_us, iops, mib_s });
        }
    }
    Ok(out)
}

/// Least-squares line y = a + b·x; `None` with fewer than two distinct x.
fn line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = sxy / sxx;
    Some((my - b * mx, b))
}

/// A fitted device profile and how it was fitted.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Fitted {
    /// The profile; every field not fitted is the `virtio` preset's.
    pub profile: DeviceProfile,
    /// The fitted lines and figures, in one sentence.
    pub description: String,
    /// Files skipped because they hold JSON that is not fio's output (no `jobs` array),
    /// such as a folder's own summary.
    pub skipped: Vec<std::path::PathBuf>,
}

/// Fits a profile named `name` from fio JSON files. `overhead_us` is the latency fio sees
/// above the block layer, subtracted from the fitted bases.
pub fn fit(files: &[std::path::PathBuf], name: &str, overhead_us: f64) -> Result<Fitted> {
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
        let doc: Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", f.display()))?;
        if doc.get("jobs").is_none() {
            skipped.push(f.clone());
            continue;
        }
        jobs.extend(jobs_of(&doc, f)?);
    }
    if jobs.is_empty() && !skipped.is_empty() {
        bail!("none of the files is fio JSON output (no \"jobs\" array in {})", skipped[0].display());
    }
    let qd1 = |read: bool| -> Vec<(f64, f64)> {
        jobs.iter()
            .filter(|j| j.read == read && j.depth == 1 && j.random)
            .map(|j| (j.kib, j.clat_us))
            .collect()
    };
    let reads = qd1(true);
    let Some((read_icpt, read_slope)) = line(&reads) else {
        bail!("need random-read jobs at iodepth 1 with at least two block sizes (found {})", reads.len());
    };
    let writes = qd1(false);
    let (write_icpt, write_slope, write_line) = match line(&writes) {
        Some((icpt, slope)) => (icpt, slope, true),
        None => match writes.first() {
            Some(&(kib, us)) => (us - read_slope * kib, read_slope, false),
            None => bail!("need at least one random-write job at iodepth 1"),
        },
    };
    let read_base = (read_icpt - overhead_us).max(1.0);
    let write_base = (write_icpt - overhead_us).max(1.0);
    let service_4k = read_base + read_slope * 4.0;
    let deep =
        jobs.iter().filter(|j| j.read && j.random && j.kib <= 4.0 && j.depth > 1).max_by_key(|j| j.depth);
    let channels = deep.map(|j| (j.iops * service_4k / 1e6).round().max(1.0) as u32).unwrap_or(1);
    let bandwidth = jobs.iter().map(|j| j.mib_s).fold(0.0, f64::max);
    let write_stream = if write_line && write_slope > 0.0 { 1024.0 / write_slope } else { 0.0 };
    let write_bandwidth = (write_stream > bandwidth).then(|| round2(write_stream.min(1_048_576.0)));
    let profile = DeviceProfile {
        name: name.to_string(),
        read_base_us: round2(read_base),
        read_us_per_kib: round2(read_slope.max(0.0)),
        write_base_us: round2(write_base),
        write_us_per_kib: round2(write_slope.max(0.0)),
        channels,
        bandwidth_mib_s: round2(bandwidth),
        write_bandwidth_mib_s: write_bandwidth,
        source: format!(
            "fitted by swapsim profile fit from {} fio jobs ({} read and {} write points at depth 1, \
             {overhead_us:.1} us above the block layer subtracted)",
            jobs.len(),
            reads.len(),
            writes.len()
        ),
        ..DeviceProfile::virtio()
    };
    profile.validate().context("the fitted profile is out of range")?;
    let mut how = format!(
        "reads at depth 1: latency ≈ {read_icpt:.1} + {read_slope:.3} µs/KiB over {} points; writes: {write_icpt:.1} + {write_slope:.3} µs/KiB",
        reads.len()
    );
    if let Some(j) = deep {
        how.push_str(&format!(
            "; {} at depth {}: {:.0} IOPS × {service_4k:.1} µs ≈ {channels} in service",
            j.name, j.depth, j.iops
        ));
    }
    how.push_str(&format!("; peak throughput {bandwidth:.0} MiB/s"));
    if let Some(w) = write_bandwidth {
        how.push_str(&format!("; writes stream at {w:.0} MiB/s (the write slope)"));
    }
    Ok(Fitted { profile, description: how, skipped })
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_squares_recovers_a_line() {
        let (a, b) = line(&[(4.0, 18.0), (8.0, 21.6), (32.0, 43.2)]).unwrap();
        assert!((a - 14.4).abs() < 1e-9 && (b - 0.9).abs() < 1e-9, "{a} {b}");
        assert!(line(&[(4.0, 1.0), (4.0, 2.0)]).is_none());
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size_kib("4k"), Ok(4.0));
        assert_eq!(parse_size_kib("1M"), Ok(1024.0));
        assert_eq!(parse_size_kib("1m"), Ok(1024.0));
        assert_eq!(parse_size_kib("16KiB"), Ok(16.0));
        assert_eq!(parse_size_kib("8192"), Ok(8.0));
        assert!(parse_size_kib("x").unwrap_err().contains("is not a size"));
        assert!(parse_size_kib("4kB").unwrap_err().contains("kb_base"));
        assert!(parse_size_kib("4KB").unwrap_err().contains("kb_base"));
    }
}
