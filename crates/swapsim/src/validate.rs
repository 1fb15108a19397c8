//! Validation: replay cases measured on a real kernel and compare (`swapsim validate`).
//!
//! A case (format `swapsim-validation/1`, see validation/README.md) names the machine, the
//! memory cgroup, the swap device and knobs, the exact access trace, and the kernel's
//! counters, block figures and timings (median, min, max of repeated runs). Each case is
//! turned into a scenario (a typed value, validated as a scenario file is; `validate/setup.rs`
//! says how each field maps), replayed over several seeds (`validate/seeds.rs`, run by
//! `validate/replay.rs`), and its simulated figures are laid out with the same shape and names
//! as the case's `measured` object, so that the two can be compared figure by figure: the
//! median over the seeds, and the range. `validate/score.rs` holds the targets and the error
//! summary.
//!
//! Replayed: cases on a swap file or on zram, with or without mTHP sizes, with or without
//! zswap. A case the model cannot replay would be skipped with a reason; none is today.
//!
//! What is compared, beyond the counters and block figures of the swap-file cases:
//!
//! - mTHP: each `measured.mthp.<size>.<counter>` is the figure `mthp.<size>.<counter>`,
//!   compared with the report's `mthp` counters of that size (zero when the report does not
//!   list the size: it lists only sizes with a non-zero counter).
//! - zswap: `measured.zswap_at_end` (`pool_total_size`, `stored_pages`, zswap's debugfs
//!   gauges when the pattern finished) against the report's `zswap` gauges at the end of
//!   the run (zero when zswap is off).
//! - zram builds no block requests: it handles each bio as it is submitted. The kernel's
//!   request-level figures on it are zero or come from other I/O, so for zram only the
//!   bio-level figures are compared ([`ZRAM_BLOCK_FIGURES`]).
//! - OOM kills: a case may say in how many of its runs the kernel's memory cgroup OOM killer
//!   ended the workload (`measured.oom_kills`). Each case's result holds that record next to
//!   how many of the simulated seeds were killed, and flags a mismatch (`validate/seeds.rs`):
//!   a kill where the kernel never killed, or kills in fewer than a third of the seeds where
//!   the kernel killed in at least a third of its runs.
//! - Queues of processes (`validate/jobs.rs`): the jobs' start and end times too.
//!
//! The kernel the cases were measured on ran the classic LRU. [`run_lru`] replays them
//! under MGLRU instead, and says in its result that this is no validation;
//! [`run_compared`] replays every case under both, for the side-by-side sanity check of
//! `validate/lru.rs` (no OOM kill, swap-ins of the same order).

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use swapsim_core::config::LruModel;
use swapsim_core::stats::{BlockTotals, DirStats, Vmstat};
use swapsim_core::{OpResult, Outcome, SimReport};

use crate::progress::Progress;

mod jobs;
mod lru;
mod replay;
mod score;
mod seeds;
mod sessions;
mod setup;
#[cfg(test)]
mod tests;

pub use jobs::{JobTiming, JobsTiming};
pub use lru::{LruCase, LruComparison, LruFigure, SWAP_IN_RATIO};
pub use score::{CaseGroup, CounterSummary, Target, JOBS_END_S, RANGE_TOLERANCE, SCORED};
pub(crate) use seeds::median;
pub use seeds::{SeedOutcomes, SEEDS};
pub use sessions::{Session, SESSIONS};

/// A case folder's fitted disk, relative to the folder: when present, every swap-file case
/// of the folder is replayed on it instead of the validation machine's `this-vm` preset
/// (`swapsim probe disk` writes it; the format is a `[swap.devices.model]` table).
pub const DEVICE_PROFILE: &str = "device/profile.toml";

/// The block figures compared on zram: the bio-level ones. zram is a bio-based device
/// that compresses or decompresses each bio in the submitting task, so the kernel's block
/// tracepoints see every bio queued (`bios_queued_all`) and never a merge, but no request:
/// `requests_issued_all`, `read_requests`, `write_requests` and the sector counts are zero
/// in the cases, and there are no service times. The simulation's block layer counts each
/// synchronous bio as a completed one-page request, so those figures would only repeat the
/// bio count. The few `plugs_all`/`unplugs_all` the kernel recorded (0 to 412 per run)
/// cannot come from zram, which builds no requests to plug, so they are not compared
/// either.
pub const ZRAM_BLOCK_FIGURES: &[&str] = &["bios_queued_all", "bio_backmerges_all", "bio_frontmerges_all"];

/// One case file.
struct Case {
    id: String,
    file: PathBuf,
    doc: Value,
}

/// The kernel's record of how many of a case's runs its memory cgroup OOM killer ended
/// (`measured.oom_kills`). The case's figures come from the runs that completed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct KernelOomKills {
    /// Runs started.
    pub runs_started: u64,
    /// Runs the OOM killer ended.
    pub runs_oom_killed: u64,
    /// What the case says about them, e.g. when the kills happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl KernelOomKills {
    /// The fraction of runs killed, 0..=1.
    pub fn rate(&self) -> f64 {
        self.runs_oom_killed as f64 / self.runs_started as f64
    }

    /// Whether the kernel killed every run.
    pub fn always(&self) -> bool {
        self.runs_oom_killed == self.runs_started
    }
}

/// A case's outcome.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct CaseResult {
    /// The case's id.
    pub id: String,
    /// "live", "swapoff" or "jobs".
    pub kind: String,
    /// The group of targets the case is held to.
    pub group: CaseGroup,
    /// Why the case was not replayed, if it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// How the simulated run ended, as its report says (absent when skipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The kernel's OOM kills, when the case records them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_oom_kills: Option<KernelOomKills>,
    /// The session the case was measured in, when it ran slower than the speed the costs
    /// were fitted to, and the case was replayed at its speed (`validate/sessions.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<Session>,
    /// The case's replays over its seeds ([`SEEDS`]): how many the OOM killer cut short.
    /// `outcome` is the first seed's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seeds: Option<SeedOutcomes>,
    /// The model's OOM kills over its seeds contradict the kernel's (`validate/seeds.rs`).
    pub oom_mismatch: bool,
    /// A queue case's job start and end times, the kernel's against the model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs_timing: Option<JobsTiming>,
    /// The simulated figures, shaped like `real`: medians over the seeds compared.
    pub sim: Value,
    /// The least of each simulated figure over the seeds compared.
    pub sim_min: Value,
    /// The largest of each simulated figure over the seeds compared.
    pub sim_max: Value,
    /// The kernel's medians of the figures both sides have.
    pub real: Value,
    /// The kernel's minimum of each figure.
    pub real_min: Value,
    /// The kernel's maximum of each figure.
    pub real_max: Value,
    /// Simulated over real, per figure (null when real is zero and simulated is not).
    pub ratio: Value,
    /// Every simulated figure in the shape of the case's `measured` object, whether the
    /// kernel measured it or not (for the LRU comparison).
    #[serde(skip)]
    pub(crate) sim_all: Value,
}

impl CaseResult {
    /// Whether the simulated run was OOM-killed.
    pub fn sim_oom_killed(&self) -> bool {
        matches!(self.outcome, Some(Outcome::OomKilled { .. }))
    }
}

/// Everything a validation found.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct Validation {
    /// The LRU model the cases were replayed with. The kernel ran the classic LRU: only a
    /// classic replay is a validation.
    pub lru: LruModel,
    /// Why these figures are not a validation, when they are not (a replay under MGLRU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_validated: Option<String>,
    /// How many seeds each case was replayed with.
    pub seeds: u64,
    /// The fitted disk the folder's swap-file cases were replayed on ([`DEVICE_PROFILE`]),
    /// in words, when the folder has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    /// Per case, in file-name order.
    pub cases: Vec<CaseResult>,
    /// Per counter, the error across cases.
    pub summary: Vec<CounterSummary>,
}

impl Validation {
    /// The cases whose simulated OOM kills contradict the kernel's.
    pub fn oom_mismatches(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases.iter().filter(|c| c.oom_mismatch)
    }

    /// Whether these figures validate the model: the cases were replayed with the LRU the
    /// kernel ran, the classic one.
    pub fn is_validation(&self) -> bool {
        self.lru == LruModel::Classic
    }

    fn new(lru: LruModel, seeds: u64, cases: Vec<CaseResult>, dir: &Path) -> Result<Validation> {
        let not_validated = (lru != LruModel::Classic).then(|| {
            format!(
                "replayed with lru = \"{}\"; the kernel ran the classic LRU, so these figures are not a validation",
                lru_name(lru)
            )
        });
        let disk = setup::fitted_disk(dir)?.map(|model| {
            format!(
                "swap-file cases replayed on the fitted disk {} ({})",
                dir.join(DEVICE_PROFILE).display(),
                model.source.unwrap_or_else(|| "no source given".into())
            )
        });
        Ok(Validation { lru, seeds, not_validated, disk, summary: score::summarize(&cases), cases })
    }
}

/// The LRU's name as a scenario file writes it.
pub fn lru_name(lru: LruModel) -> &'static str {
    match lru {
        LruModel::Classic => "classic",
        LruModel::Exact => "exact",
        LruModel::Opt => "opt",
        LruModel::Mglru => "mglru",
    }
}

/// At least one seed, and no more than a validation can use.
fn check_seeds(seeds: u64) -> Result<()> {
    if !(1..=64).contains(&seeds) {
        bail!("seeds is {seeds}: each case is replayed with 1 to 64 seeds");
    }
    Ok(())
}

/// The LRU models a case can be replayed with: the kernel's two, not the textbook one.
fn check_lru(lru: LruModel) -> Result<()> {
    if matches!(lru, LruModel::Exact | LruModel::Opt) {
        bail!("validate replays cases with the classic LRU or MGLRU, not \"{}\"", lru_name(lru));
    }
    Ok(())
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

/// Block figures named as the cases name them; on zram only [`ZRAM_BLOCK_FIGURES`].
fn block_figures(reads: &DirStats, writes: &DirStats, unplugs: u64, zram: bool) -> Map<String, Value> {
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
    if zram {
        m.retain(|k, _| ZRAM_BLOCK_FIGURES.contains(&k.as_str()));
    }
    m
}

fn vmstat_figures(v: &Vmstat) -> Map<String, Value> {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// The report's mTHP counters by size, plus every size the case measured, at zero when
/// the report does not list it (it lists only sizes with a non-zero counter).
fn mthp_figures(measured: &Value, report: &SimReport) -> Map<String, Value> {
    let mut sizes: Vec<&str> = report.mthp.keys().map(String::as_str).collect();
    if let Some(m) = measured.get("mthp").and_then(Value::as_object) {
        sizes.extend(m.keys().map(String::as_str));
    }
    sizes
        .into_iter()
        .map(|size| {
            let stats = report.mthp.get(size).copied().unwrap_or_default();
            (size.to_string(), serde_json::to_value(stats).unwrap_or(Value::Null))
        })
        .collect()
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
    let zram = setup::swap_kind(case)? == setup::SwapKind::Zram;
    let live_block = || {
        let mut block = block_figures(&totals.reads, &totals.writes, totals.unplugs, zram);
        if let (Some(d), false) = (report.block.first(), zram) {
            block.insert("read_service_us_p50".into(), json!(d.read_service.p50_us));
            block.insert("read_service_us_p99".into(), json!(d.read_service.p99_us));
        }
        block
    };
    match case.doc["kind"].as_str() {
        Some("jobs") => Ok(json!({
            "vmstat": vmstat_figures(&report.vmstat),
            "mthp": mthp_figures(&case.doc["measured"], report),
            "block": live_block(),
            "timing": { "total_s": jobs::makespan_s(report) },
        })),
        Some("live") => {
            let block = live_block();
            let fill_s =
                report.operations.iter().find(|o| o.op == "mark").map(|o| o.start_s).unwrap_or(total_s);
            Ok(json!({
                "vmstat": vmstat_figures(&report.vmstat),
                "mthp": mthp_figures(&case.doc["measured"], report),
                "block": block,
                "timing": { "fill_s": fill_s, "passes_s": total_s - fill_s, "total_s": total_s },
                "at_end": {
                    "VmRSS_kib": report.at_end.rss_pages * 4,
                    "VmSwap_kib": report.at_end.swap_pages * 4,
                },
                "zswap_at_end": {
                    "pool_total_size": report.zswap.as_ref().map_or(0, |z| z.pool_total_size),
                    "stored_pages": report.zswap.as_ref().map_or(0, |z| z.stored_pages),
                },
            }))
        }
        _ => {
            let swapoff =
                report.operations.iter().find(|o| o.op == "swapoff").context("swapoff did not run")?;
            if swapoff.result != OpResult::Completed {
                bail!("swapoff {}", swapoff.result);
            }
            let fill_vm = report.vmstat.since(&swapoff.vmstat);
            let fill_block = totals.since(&swapoff.block);
            let fill_s = report.operations.first().map(|o| o.start_s).unwrap_or(0.0);
            let b = &swapoff.block;
            Ok(json!({
                "fill": {
                    "vmstat": vmstat_figures(&fill_vm),
                    "block": block_figures(&fill_block.reads, &fill_block.writes, fill_block.unplugs, zram),
                },
                "swapoff": {
                    "vmstat": vmstat_figures(&swapoff.vmstat),
                    "block": block_figures(&b.reads, &b.writes, b.unplugs, zram),
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
    run_lru(dir, only, LruModel::Classic, SEEDS, progress)
}

/// [`run_with_progress`] with the cases replayed under `lru` (classic or MGLRU). Only a
/// classic replay is a validation: the kernel the cases were measured on ran the classic
/// LRU ([`Validation::not_validated`] says so otherwise). Each case is replayed with seeds
/// 1..=`seeds` ([`SEEDS`] is what the bounds were measured with; fewer is quicker and
/// coarser).
pub fn run_lru(
    dir: &Path,
    only: &[String],
    lru: LruModel,
    seeds: u64,
    progress: &dyn Progress,
) -> Result<Validation> {
    check_lru(lru)?;
    check_seeds(seeds)?;
    let cases = read_cases(dir, only)?;
    let mut results = replay::replay_all(&cases, dir, &[lru], seeds, progress)?;
    Validation::new(lru, seeds, results.remove(0), dir)
}

/// The scenario file (TOML) that case `id` of `dir` is replayed with under `lru` at
/// `seed`: `swapsim run` on it gives that seed's replay, with its time series and every
/// option of `run`. Trace paths in it are absolute.
pub fn case_scenario(dir: &Path, id: &str, lru: LruModel, seed: u64) -> Result<String> {
    check_lru(lru)?;
    if seed == 0 {
        bail!("seed 0: seeds start at 1");
    }
    let cases = read_cases(dir, &[id.to_string()])?;
    let file = replay::case_scenario(&cases[0], dir, lru, seed)?;
    toml::to_string(&file).with_context(|| format!("case {id}: cannot write its scenario as TOML"))
}

/// [`run_lru`], and every case replayed under both the classic LRU and MGLRU, side by
/// side ([`LruComparison`]). The two replays of each case run in one parallel batch.
pub fn run_compared(
    dir: &Path,
    only: &[String],
    lru: LruModel,
    seeds: u64,
    progress: &dyn Progress,
) -> Result<(Validation, LruComparison)> {
    check_lru(lru)?;
    check_seeds(seeds)?;
    let cases = read_cases(dir, only)?;
    let mut results =
        replay::replay_all(&cases, dir, &[LruModel::Classic, LruModel::Mglru], seeds, progress)?;
    let mglru = results.pop().context("an MGLRU replay")?;
    let classic = results.pop().context("a classic replay")?;
    let comparison = LruComparison::new(&classic, &mglru);
    let scored = if lru == LruModel::Mglru { mglru } else { classic };
    Ok((Validation::new(lru, seeds, scored, dir)?, comparison))
}
