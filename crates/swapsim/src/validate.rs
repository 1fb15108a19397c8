//! Validation: replay cases measured on a real kernel and compare (`swapsim validate`).
//!
//! A case (format `swapsim-validation/1`, see validation/README.md) names the machine, the
//! memory cgroup, the swap device and knobs, the exact access trace, and the kernel's
//! counters, block figures and timings (median, min, max of repeated runs). Each case is
//! turned into a scenario (a typed value, validated as a scenario file is), replayed, and
//! its simulated figures are laid out with the same shape and names as the case's
//! `measured` object, so that the two can be compared figure by figure.
//!
//! Not modelled, so such cases are skipped with a reason: zswap, zram, large folios.

use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use swapsim_core::config::{CpuCosts, MachineConfig, MemcgConfig};
use swapsim_core::stats::{BlockTotals, DirStats, Vmstat};
use swapsim_core::{ByteSize, SimReport};
use swapsim_devices::DeviceConfig;
use swapsim_policies::ReadaheadConfig;

use crate::progress::Progress;
use crate::scenario::{DeviceSection, Scenario, ScenarioFile, WorkloadSection};
use crate::timeline::{TimelineEntry, TimelineOp, When};

/// The figures the verdict scores, as paths into a case's `measured` shape, each with the
/// largest error across cases the model is held to. Every other figure that both a case
/// and the simulation have is still summarised, marked unscored.
///
/// - Event counts the swap path is built around: 35%.
/// - The classic LRU's aging counters: 35% (the kernel's own runs spread wider than that
///   on some cases, which is why an error is zero inside its run-to-run range).
/// - Device service times as the block tracepoints measure them, issue to completion:
///   50%.
/// - Wall-clock times: 20%.
pub const SCORED: &[(&str, f64)] = &[
    ("vmstat.pswpin", 0.35),
    ("vmstat.pswpout", 0.35),
    ("vmstat.pgmajfault", 0.35),
    ("vmstat.workingset_refault_anon", 0.35),
    ("vmstat.swap_ra", 0.35),
    ("vmstat.swap_ra_hit", 0.35),
    ("block.read_requests", 0.35),
    ("swapoff.vmstat.pswpin", 0.35),
    ("swapoff.block.read_requests", 0.35),
    ("vmstat.pgactivate", 0.35),
    ("vmstat.pgdeactivate", 0.35),
    ("vmstat.workingset_activate_anon", 0.35),
    ("vmstat.workingset_restore_anon", 0.35),
    ("block.read_service_us_mean", 0.5),
    ("block.read_service_us_p50", 0.5),
    ("block.read_service_us_p99", 0.5),
    ("block.write_service_us_mean", 0.5),
    ("swapoff.block.read_service_us_mean", 0.5),
    ("timing.swapoff_s", 0.2),
    ("timing.total_s", 0.2),
];

/// One case file.
struct Case {
    id: String,
    file: PathBuf,
    doc: Value,
}

/// A case's outcome.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct CaseResult {
    /// The case's id.
    pub id: String,
    /// "live" or "swapoff".
    pub kind: String,
    /// Why the case was not replayed, if it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The simulated figures, shaped like `real`.
    pub sim: Value,
    /// The kernel's medians of the figures both sides have.
    pub real: Value,
    /// The kernel's minimum of each figure.
    pub real_min: Value,
    /// The kernel's maximum of each figure.
    pub real_max: Value,
    /// Simulated over real, per figure (null when real is zero and simulated is not).
    pub ratio: Value,
}

/// Errors across cases for one counter.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct CounterSummary {
    /// The figure, as a dotted path into the `measured` shape.
    pub counter: String,
    /// Cases that have it.
    pub cases: usize,
    /// Median over cases of |sim / real - 1|.
    pub median_abs_error: f64,
    /// The largest |sim / real - 1|.
    pub worst_abs_error: f64,
    /// The case the largest error occurs in.
    pub worst_case: String,
    /// Whether the verdict scores this figure (see [`SCORED`]).
    pub scored: bool,
    /// For a scored figure, the largest error the model is held to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
}

impl CounterSummary {
    /// Whether a scored figure's worst error is within its target (`None` if unscored).
    pub fn within_target(&self) -> Option<bool> {
        self.target.map(|t| self.worst_abs_error <= t)
    }
}

/// Everything a validation found.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct Validation {
    /// Per case, in file-name order.
    pub cases: Vec<CaseResult>,
    /// Per counter, the error across cases.
    pub summary: Vec<CounterSummary>,
}

fn read_cases(dir: &Path, only: &[String]) -> Result<Vec<Case>> {
    let cases_dir = dir.join("cases");
    let entries =
        std::fs::read_dir(&cases_dir).with_context(|| format!("cannot read {}", cases_dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("listing {}", cases_dir.display()))?;
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
        let doc: Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", file.display()))?;
        if doc["format"] != "swapsim-validation/1" {
            bail!("{}: format is {}, expected \"swapsim-validation/1\"", file.display(), doc["format"]);
        }
        let id = doc["id"].as_str().with_context(|| format!("{}: id missing", file.display()))?.to_string();
        if only.is_empty() || only.contains(&id) {
            cases.push(Case { id, file, doc });
        }
    }
    for want in only {
        if !cases.iter().any(|c| &c.id == want) {
            bail!("--case {want}: no such case in {}", cases_dir.display());
        }
    }
    if cases.is_empty() {
        bail!("{}: no case files", cases_dir.display());
    }
    Ok(cases)
}

/// Field `path` (dotted) of a case, with the case file named in the error.
fn field<'a>(case: &'a Case, path: &str) -> Result<&'a Value> {
    let mut v = &case.doc;
    for part in path.split('.') {
        v = v.get(part).ok_or_else(|| anyhow!("{}: {path} missing", case.file.display()))?;
    }
    Ok(v)
}

fn num(case: &Case, path: &str) -> Result<u64> {
    field(case, path)?
        .as_u64()
        .ok_or_else(|| anyhow!("{}: {path} is not a whole number", case.file.display()))
}

/// Why a case cannot be replayed by this model, if it cannot.
fn unsupported(case: &Case) -> Option<String> {
    if case.doc["setup"]["zswap"]["enabled"] == true {
        return Some("zswap is not modelled yet".into());
    }
    if case.doc["setup"]["swap"]["kind"] != "file" {
        return Some(format!("swap kind {} is not modelled yet", case.doc["setup"]["swap"]["kind"]));
    }
    if case.doc["setup"]["mthp_always_kib"].as_array().is_some_and(|a| !a.is_empty()) {
        return Some("large folios (mTHP) are not modelled yet".into());
    }
    None
}

/// The scenario a case describes.
fn scenario_file(case: &Case, dir: &Path) -> Result<ScenarioFile> {
    // Relative to the case directory, which the scenario is loaded from.
    let trace = field(case, "workload.trace")?.as_str().context("workload.trace is not a string")?;
    let region_pages = num(case, "workload.region_bytes")? / 4096;
    let rotational = field(case, "setup.swap.rotational")?.as_bool().context("setup.swap.rotational")?;
    let version = num(case, "setup.memcg_version")?;
    let mut file = ScenarioFile {
        seed: 1,
        machine: MachineConfig {
            memory: ByteSize(num(case, "setup.machine_ram_bytes")?),
            cpus: small(case, "setup.cpus")?,
            ..MachineConfig::default()
        },
        memcg: MemcgConfig {
            limit: Some(ByteSize(num(case, "setup.memcg_limit_bytes")?)),
            swappiness: small(case, "setup.swappiness")?,
            version: u8::try_from(version).map_err(|_| {
                anyhow!("{}: setup.memcg_version {version} is out of range", case.file.display())
            })?,
        },
        cpu: CpuCosts::this_vm(),
        workload: WorkloadSection { trace: Some(PathBuf::from(trace)), ..WorkloadSection::default() },
        ..ScenarioFile::default()
    };
    file.swap.page_cluster = small(case, "setup.page_cluster")?;
    file.swap.vma_ra_enabled =
        field(case, "setup.vma_ra_enabled")?.as_bool().context("setup.vma_ra_enabled")?;
    file.swap.readahead = ReadaheadConfig::Kernel;
    file.swap.devices = vec![DeviceSection {
        backing: None,
        name: "vda".into(),
        size: ByteSize(num(case, "setup.swap.size_bytes")?),
        priority: None,
        model: DeviceConfig { rotational: Some(rotational), ..DeviceConfig::preset("this-vm") },
    }];
    match field(case, "kind")?.as_str() {
        Some("live") => {
            // Mark where the fill ends: the trace header says how many accesses it has;
            // without one, the fill writes every page of the region once.
            let fill = fill_accesses(&dir.join(trace)).unwrap_or(region_pages);
            let when = When { after_accesses: Some(fill), ..When::default() };
            file.timeline.push(TimelineEntry::new(when, TimelineOp::Mark { label: "fill-end".into() }));
        }
        Some("swapoff") => {
            for op in field(case, "operations")?.as_array().context("operations")? {
                match op["op"].as_str() {
                    Some("run_trace") => {}
                    Some("set_memcg_limit") => {
                        let bytes = op["bytes"].as_u64().context("set_memcg_limit.bytes")?;
                        let when = When { at: Some("workload-end".into()), ..When::default() };
                        let op = TimelineOp::SetMemcgLimit { limit: bytes.to_string() };
                        file.timeline.push(TimelineEntry::new(when, op));
                    }
                    Some("swapoff") => file.timeline.push(TimelineEntry::new(
                        When::default(),
                        TimelineOp::Swapoff { device: "vda".into() },
                    )),
                    other => bail!("{}: operation {other:?} is not known", case.file.display()),
                }
            }
        }
        other => bail!("{}: kind {other:?} is not live or swapoff", case.file.display()),
    }
    Ok(file)
}

/// Field `path` of a case as a number that fits a `u32`.
fn small<T: TryFrom<u64>>(case: &Case, path: &str) -> Result<T> {
    let n = num(case, path)?;
    T::try_from(n).map_err(|_| anyhow!("{}: {path} {n} is out of range", case.file.display()))
}

/// `fill_accesses=N` from a validation trace's `#` header line, if present.
fn fill_accesses(trace: &Path) -> Option<u64> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(trace).ok()?;
    let reader: Box<dyn Read> = if trace.extension().is_some_and(|e| e == "zst") {
        Box::new(zstd::stream::read::Decoder::new(file).ok()?)
    } else {
        Box::new(file)
    };
    let mut first = String::new();
    std::io::BufReader::new(reader.take(64 * 1024)).read_line(&mut first).ok()?;
    first
        .strip_prefix('#')?
        .split_whitespace()
        .find_map(|tok| tok.strip_prefix("fill_accesses="))
        .and_then(|n| n.parse().ok())
}

/// Block figures named as the cases name them.
fn block_figures(reads: &DirStats, writes: &DirStats, unplugs: u64) -> Map<String, Value> {
    let mut m = Map::new();
    let mean = |total: u64, n: u64| if n == 0 { 0.0 } else { total as f64 / n as f64 };
    m.insert("bios_queued_all".into(), json!(reads.queued + writes.queued));
    m.insert(
        "bio_backmerges_all".into(),
        json!(reads.merges - reads.front_merges + writes.merges - writes.front_merges),
    );
    m.insert("bio_frontmerges_all".into(), json!(reads.front_merges + writes.front_merges));
    // A plug shows in the block tracepoints when its first request is added, and is
    // unplugged once: both count the flushes that dispatched something.
    m.insert("plugs_all".into(), json!(unplugs));
    m.insert("unplugs_all".into(), json!(unplugs));
    m.insert("requests_issued_all".into(), json!(reads.dispatches + writes.dispatches));
    m.insert("read_requests".into(), json!(reads.completed));
    m.insert("read_sectors".into(), json!(reads.completed_kib * 2));
    m.insert("read_request_kib_mean".into(), json!(mean(reads.completed_kib, reads.completed)));
    m.insert("read_service_us_mean".into(), json!(mean(reads.service_ns_total, reads.completed) / 1000.0));
    m.insert("write_requests".into(), json!(writes.completed));
    m.insert("write_sectors".into(), json!(writes.completed_kib * 2));
    m.insert("write_request_kib_mean".into(), json!(mean(writes.completed_kib, writes.completed)));
    m.insert("write_service_us_mean".into(), json!(mean(writes.service_ns_total, writes.completed) / 1000.0));
    m
}

fn vmstat_figures(v: &Vmstat) -> Map<String, Value> {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn run_totals(report: &SimReport) -> BlockTotals {
    let mut t = BlockTotals::default();
    for d in &report.block {
        t.reads.add(&d.reads);
        t.writes.add(&d.writes);
        t.unplugs += d.io_unplugs + d.timer_unplugs;
    }
    t
}

/// The simulated figures in the shape of the case's `measured` object.
fn sim_shape(case: &Case, report: &SimReport) -> Result<Value> {
    let totals = run_totals(report);
    let total_s = report.tasks.first().map(|t| t.end_s).unwrap_or(report.sim_time_s);
    match case.doc["kind"].as_str() {
        Some("live") => {
            let mut block = block_figures(&totals.reads, &totals.writes, totals.unplugs);
            if let Some(d) = report.block.first() {
                block.insert("read_service_us_p50".into(), json!(d.read_service.p50_us));
                block.insert("read_service_us_p99".into(), json!(d.read_service.p99_us));
            }
            let fill_s =
                report.operations.iter().find(|o| o.op == "mark").map(|o| o.start_s).unwrap_or(total_s);
            Ok(json!({
                "vmstat": vmstat_figures(&report.vmstat),
                "block": block,
                "timing": { "fill_s": fill_s, "passes_s": total_s - fill_s, "total_s": total_s },
                "at_end": {
                    "VmRSS_kib": report.at_end.rss_pages * 4,
                    "VmSwap_kib": report.at_end.swap_pages * 4,
                },
            }))
        }
        _ => {
            let swapoff =
                report.operations.iter().find(|o| o.op == "swapoff").context("swapoff did not run")?;
            if swapoff.result != "completed" {
                bail!("swapoff {}", swapoff.result);
            }
            let fill_vm = report.vmstat.since(&swapoff.vmstat);
            let fill_block = totals.since(&swapoff.block);
            let fill_s = report.operations.first().map(|o| o.start_s).unwrap_or(0.0);
            Ok(json!({
                "fill": {
                    "vmstat": vmstat_figures(&fill_vm),
                    "block": block_figures(&fill_block.reads, &fill_block.writes, fill_block.unplugs),
                },
                "swapoff": {
                    "vmstat": vmstat_figures(&swapoff.vmstat),
                    "block": block_figures(&swapoff.block.reads, &swapoff.block.writes, swapoff.block.unplugs),
                },
                "timing": { "fill_s": fill_s, "swapoff_s": swapoff.duration_s.unwrap_or(f64::NAN) },
            }))
        }
    }
}

/// Walks `measured` and builds the matching real (median, min, max), simulated and ratio
/// trees, keeping only figures both sides have.
fn compare(measured: &Value, sim: &Value) -> (Value, Value, Value, Value, Value) {
    let (mut real, mut lo, mut hi, mut s, mut ratio) =
        (Map::new(), Map::new(), Map::new(), Map::new(), Map::new());
    if let Value::Object(m) = measured {
        for (key, value) in m {
            let Some(sim_value) = sim.get(key) else { continue };
            if let Some(median) = value.get("median").and_then(Value::as_f64) {
                let Some(x) = sim_value.as_f64() else { continue };
                real.insert(key.clone(), json!(median));
                lo.insert(key.clone(), value["min"].clone());
                hi.insert(key.clone(), value["max"].clone());
                s.insert(key.clone(), json!(round4(x)));
                let r = if median == 0.0 {
                    if x == 0.0 {
                        json!(1.0)
                    } else {
                        Value::Null
                    }
                } else {
                    json!(round4(x / median))
                };
                ratio.insert(key.clone(), r);
            } else if value.is_object() {
                let (a, b, c, d, e) = compare(value, sim_value);
                if a.as_object().is_some_and(|o| !o.is_empty()) {
                    real.insert(key.clone(), a);
                    lo.insert(key.clone(), b);
                    hi.insert(key.clone(), c);
                    s.insert(key.clone(), d);
                    ratio.insert(key.clone(), e);
                }
            }
        }
    }
    (Value::Object(real), Value::Object(lo), Value::Object(hi), Value::Object(s), Value::Object(ratio))
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The figure at dotted `path` in a tree shaped like `measured`.
pub fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, part| v.get(part))
}

/// Runs every case in `dir` (or only those whose ids are in `only`, when it is not
/// empty) and compares.
pub fn run(dir: &Path, only: &[String]) -> Result<Validation> {
    run_with_progress(dir, only, &())
}

/// [`run`], telling `progress` how many of the cases have been replayed (or skipped).
pub fn run_with_progress(dir: &Path, only: &[String], progress: &dyn Progress) -> Result<Validation> {
    let cases = read_cases(dir, only)?;
    let n_total = cases.len() as u64;
    progress.advanced(0, Some(n_total));
    let n_done = std::sync::atomic::AtomicU64::new(0);
    let done = || {
        let n = n_done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress.advanced(n, Some(n_total));
    };
    let results: Vec<Result<CaseResult>> = cases
        .par_iter()
        .map(|case| {
            let kind = case.doc["kind"].as_str().unwrap_or("?").to_string();
            if let Some(why) = unsupported(case) {
                return Ok(CaseResult {
                    id: case.id.clone(),
                    kind,
                    skipped: Some(why),
                    sim: json!({}),
                    real: json!({}),
                    real_min: json!({}),
                    real_max: json!({}),
                    ratio: json!({}),
                });
            }
            let file = scenario_file(case, dir)?;
            let report = Scenario::from_file(file, format!("case {}", case.id), dir).prepare()?.run()?;
            let sim = sim_shape(case, &report).with_context(|| format!("case {}", case.id))?;
            let (real, real_min, real_max, sim, ratio) = compare(&case.doc["measured"], &sim);
            Ok(CaseResult { id: case.id.clone(), kind, skipped: None, sim, real, real_min, real_max, ratio })
        })
        .inspect(|_| done())
        .collect();
    let cases: Vec<CaseResult> = results.into_iter().collect::<Result<_>>()?;
    Ok(Validation { summary: summarize(&cases), cases })
}

/// Every figure that at least one case and its simulation both have: the scored ones in
/// the order of [`SCORED`], then the others by name.
fn summarize(cases: &[CaseResult]) -> Vec<CounterSummary> {
    let mut others = std::collections::BTreeSet::new();
    for c in cases.iter().filter(|c| c.skipped.is_none()) {
        let mut paths = Vec::new();
        leaf_paths("", &c.real, &mut paths);
        for path in paths {
            if lookup(&c.sim, &path).and_then(Value::as_f64).is_some()
                && !SCORED.iter().any(|(p, _)| *p == path)
            {
                others.insert(path);
            }
        }
    }
    let scored = SCORED.iter().map(|&(p, target)| (p.to_string(), Some(target)));
    let paths = scored.chain(others.into_iter().map(|p| (p, None)));
    let mut out = Vec::new();
    for (path, target) in paths {
        let mut errors: Vec<(f64, &str)> =
            cases.iter().filter_map(|c| case_error(c, &path).map(|e| (e, c.id.as_str()))).collect();
        if errors.is_empty() {
            continue;
        }
        errors.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = errors.len();
        let median = if n % 2 == 1 { errors[n / 2].0 } else { (errors[n / 2 - 1].0 + errors[n / 2].0) / 2.0 };
        let (worst, worst_case) = errors[n - 1];
        out.push(CounterSummary {
            counter: path,
            cases: n,
            median_abs_error: round4(median),
            worst_abs_error: round4(worst),
            worst_case: worst_case.to_string(),
            scored: target.is_some(),
            target,
        });
    }
    out
}

/// The dotted paths of every number in `tree`.
fn leaf_paths(prefix: &str, tree: &Value, out: &mut Vec<String>) {
    if let Value::Object(m) = tree {
        for (k, v) in m {
            let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            if v.is_number() {
                out.push(path);
            } else {
                leaf_paths(&path, v, out);
            }
        }
    }
}

/// The error of one figure of one case, as the summary counts it: zero when the simulated
/// value lies within the kernel's own run-to-run range (min..max); otherwise
/// |sim / median - 1|, where a median below 0.1% of the case's swap-ins is raised to that
/// floor, so that a counter that is almost zero on both sides (a few readahead pages in a
/// random workload) is not reported as hundreds of percent off.
fn case_error(c: &CaseResult, path: &str) -> Option<f64> {
    let real = lookup(&c.real, path)?.as_f64()?;
    let sim = lookup(&c.sim, path)?.as_f64()?;
    let lo = lookup(&c.real_min, path).and_then(Value::as_f64).unwrap_or(real);
    let hi = lookup(&c.real_max, path).and_then(Value::as_f64).unwrap_or(real);
    if (lo..=hi).contains(&sim) {
        return Some(0.0);
    }
    let phase = path.split('.').next().filter(|p| *p == "fill" || *p == "swapoff");
    let pswpin_path = match phase {
        Some(p) => format!("{p}.vmstat.pswpin"),
        None => "vmstat.pswpin".to_string(),
    };
    // The floor applies to event counts only, never to times or sizes.
    let is_count = path.contains("vmstat.") || path.ends_with("_requests") || path.ends_with("_all");
    let floor = if is_count {
        lookup(&c.real, &pswpin_path).and_then(Value::as_f64).unwrap_or(0.0) * 0.001
    } else {
        0.0
    };
    let base = real.max(floor);
    if base == 0.0 {
        return Some(if sim == 0.0 { 0.0 } else { 1.0 });
    }
    Some(round4((sim - real).abs() / base))
}
