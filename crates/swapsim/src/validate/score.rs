//! The targets the verdict holds figures to, and the error of every figure across cases.
//!
//! A figure's error on one case is zero inside the kernel's run-to-run range and otherwise
//! its distance from the kernel's median, relative to it (see [`case_error`]). Across cases
//! a figure is summarised by the median and the largest of those errors. A scored figure
//! has a target for the largest error, and for some figures one for the median too; a
//! target may cover one group of cases only ([`CaseGroup`]), in which case the figure is
//! summarised once per group it is scored for.

use serde::Serialize;
use serde_json::Value;

use super::{lookup, round4, seeds, CaseResult};

/// Which kind of machine set-up a case has, for targets that differ between kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum CaseGroup {
    /// A swap file, every folio order 0: the cases the model was first built against.
    #[serde(rename = "swapfile-order0")]
    SwapFileOrder0,
    /// Large folios (mTHP sizes set to "always") or zram, or both.
    #[serde(rename = "mthp-or-zram")]
    MthpOrZram,
    /// zswap enabled.
    #[serde(rename = "zswap")]
    Zswap,
    /// A queue of processes (`kind: "jobs"`), whatever its device.
    #[serde(rename = "queue")]
    Queue,
}

impl CaseGroup {
    /// The name reports use, e.g. "mthp-or-zram".
    pub fn name(self) -> &'static str {
        match self {
            CaseGroup::SwapFileOrder0 => "swapfile-order0",
            CaseGroup::MthpOrZram => "mthp-or-zram",
            CaseGroup::Zswap => "zswap",
            CaseGroup::Queue => "queue",
        }
    }
}

/// What the verdict holds one figure to.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Target {
    /// The figure, as a dotted path into a case's `measured` shape.
    pub figure: &'static str,
    /// The largest error allowed on any case.
    pub worst: f64,
    /// The largest median error over cases allowed, when there is one.
    pub median: Option<f64>,
    /// The cases the target covers; `None` for every case.
    pub group: Option<CaseGroup>,
    /// Held to the model's range over the seeds rather than to its median: the error is
    /// zero when the kernel's median lies within the model's range (see `case_error`).
    pub range: bool,
}

impl Target {
    const fn worst(figure: &'static str, worst: f64) -> Target {
        Target { figure, worst, median: None, group: None, range: false }
    }

    /// A figure that swings between modes from run to run: the kernel's median must lie
    /// within the model's range over the seeds, to within [`RANGE_TOLERANCE`].
    const fn range(figure: &'static str) -> Target {
        Target { figure, worst: RANGE_TOLERANCE, median: None, group: None, range: true }
    }

    const fn median(self, median: f64) -> Target {
        Target { median: Some(median), ..self }
    }

    const fn only(self, group: CaseGroup) -> Target {
        Target { group: Some(group), ..self }
    }
}

/// How far, relative to the kernel's median, the median may lie outside the model's range
/// over the seeds for a figure held to that range: six seeds sample a spread, and a median
/// a little beyond the largest of six is no other mode. The tolerance of the median error
/// of the counters a kernel developer reads first.
pub const RANGE_TOLERANCE: f64 = 0.15;

/// The figures the verdict scores, each with the largest error across cases the model is
/// held to. Every other figure that both a case and the simulation have is still
/// summarised, marked unscored.
///
/// - Event counts the swap path is built around: 35%; the four a kernel developer reads
///   first also 15% on the median case.
/// - The classic LRU's aging counters: 35% (the kernel's own runs spread wider than that
///   on some cases, which is why an error is zero inside its run-to-run range). The three
///   that swing between modes from run to run with where the statistics flusher's grid
///   falls, `pgdeactivate`, `workingset_activate_anon` and `workingset_restore_anon`, are
///   held to the model's range over the seeds instead: the kernel's median must lie
///   within it, to within 15% ([`RANGE_TOLERANCE`]).
/// - Device service times as the block tracepoints measure them, issue to completion:
///   50%.
/// - Wall-clock times: 20%; the run time of the cases with large folios or zram, 25%.
/// - zswap: stores, loads and writebacks, and the pool's size and page count when the
///   pattern finished: 35%, and 15% on the median case; the run time of zswap cases, 25%.
/// - Queues of processes: the makespan, 25%; and each job's end time, as the median over
///   the case's jobs of each one's error (`jobs_timing.end_s`), 25%. Every target for all
///   cases holds the queue cases too, summarised apart from the single-process cases
///   under the group `queue`.
/// - Large folios: per size, the `hugepages-<size>kB/stats` counters the cases measure
///   (faults that allocated a large folio or fell back, large folios swapped out whole or
///   split, swapped in whole or fallen back to order 0), and the PMD-size
///   `thp_swpout`/`thp_swpout_fallback` of /proc/vmstat: 35%, and 15% on the median case.
pub const SCORED: &[Target] = &[
    Target::worst("vmstat.pswpin", 0.35).median(0.15),
    Target::worst("vmstat.pswpout", 0.35).median(0.15),
    Target::worst("vmstat.pgmajfault", 0.35).median(0.15),
    Target::worst("vmstat.workingset_refault_anon", 0.35).median(0.15),
    Target::worst("vmstat.swap_ra", 0.35),
    Target::worst("vmstat.swap_ra_hit", 0.35),
    Target::worst("block.read_requests", 0.35),
    Target::worst("swapoff.vmstat.pswpin", 0.35),
    Target::worst("swapoff.block.read_requests", 0.35),
    Target::worst("vmstat.pgactivate", 0.35),
    Target::range("vmstat.pgdeactivate"),
    Target::range("vmstat.workingset_activate_anon"),
    Target::range("vmstat.workingset_restore_anon"),
    Target::worst("block.read_service_us_mean", 0.5),
    Target::worst("block.read_service_us_p50", 0.5),
    Target::worst("block.read_service_us_p99", 0.5),
    Target::worst("block.write_service_us_mean", 0.5),
    Target::worst("swapoff.block.read_service_us_mean", 0.5),
    Target::worst("timing.swapoff_s", 0.2),
    Target::worst("timing.total_s", 0.2).only(CaseGroup::SwapFileOrder0),
    Target::worst("timing.total_s", 0.25).only(CaseGroup::MthpOrZram),
    Target::worst("timing.total_s", 0.25).only(CaseGroup::Zswap),
    Target::worst("timing.total_s", 0.25).only(CaseGroup::Queue),
    Target::worst(JOBS_END_S, 0.25).only(CaseGroup::Queue),
    Target::worst("vmstat.zswpout", 0.35).median(0.15),
    Target::worst("vmstat.zswpin", 0.35).median(0.15),
    Target::worst("vmstat.zswpwb", 0.35).median(0.15),
    Target::worst("zswap_at_end.pool_total_size", 0.35).median(0.15),
    Target::worst("zswap_at_end.stored_pages", 0.35).median(0.15),
    Target::worst("vmstat.thp_swpout", 0.35).median(0.15),
    Target::worst("vmstat.thp_swpout_fallback", 0.35).median(0.15),
    Target::worst("mthp.16kB.anon_fault_alloc", 0.35).median(0.15),
    Target::worst("mthp.16kB.anon_fault_fallback", 0.35).median(0.15),
    Target::worst("mthp.16kB.swpout", 0.35).median(0.15),
    Target::worst("mthp.16kB.swpout_fallback", 0.35).median(0.15),
    Target::worst("mthp.16kB.swpin", 0.35).median(0.15),
    Target::worst("mthp.16kB.swpin_fallback", 0.35).median(0.15),
    Target::worst("mthp.64kB.anon_fault_alloc", 0.35).median(0.15),
    Target::worst("mthp.64kB.anon_fault_fallback", 0.35).median(0.15),
    Target::worst("mthp.64kB.swpout", 0.35).median(0.15),
    Target::worst("mthp.64kB.swpout_fallback", 0.35).median(0.15),
    Target::worst("mthp.64kB.swpin", 0.35).median(0.15),
    Target::worst("mthp.64kB.swpin_fallback", 0.35).median(0.15),
];

/// The figure a queue case's job end times are scored as: its error on a case is the
/// median over the case's jobs of each job's end-time error ([`super::JobsTiming`]).
pub const JOBS_END_S: &str = "jobs_timing.end_s";

/// Errors across cases for one figure.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct CounterSummary {
    /// The figure, as a dotted path into the `measured` shape.
    pub counter: String,
    /// The cases summarised, when the figure is scored for one group of cases only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<CaseGroup>,
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
    /// For a scored figure with one, the largest median error the model is held to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_target: Option<f64>,
    /// The figure is held to the model's range over the seeds: its error on a case is the
    /// distance from the kernel's median to that range.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub range: bool,
}

impl CounterSummary {
    /// Whether a scored figure's worst error, and its median error where it has a median
    /// target, are within their targets (`None` if unscored).
    pub fn within_target(&self) -> Option<bool> {
        self.target.map(|t| self.worst_abs_error <= t && self.median_within_target())
    }

    /// Whether the median error is within the median target (true without one).
    pub fn median_within_target(&self) -> bool {
        self.median_target.is_none_or(|m| self.median_abs_error <= m)
    }

    /// The figure with its group of cases when it has one: `timing.total_s [mthp-or-zram]`.
    /// Unique within a summary; bounds.json is keyed by it.
    pub fn label(&self) -> String {
        match self.scope {
            Some(group) => format!("{} [{}]", self.counter, group.name()),
            None => self.counter.clone(),
        }
    }
}

/// Every figure that at least one case and its simulation both have: the scored ones in
/// the order of [`SCORED`], then the others by name. A scored figure is summarised over
/// the cases its target covers.
pub(super) fn summarize(cases: &[CaseResult]) -> Vec<CounterSummary> {
    let mut others = std::collections::BTreeSet::new();
    for c in cases.iter().filter(|c| c.skipped.is_none()) {
        let mut paths = Vec::new();
        leaf_paths("", &c.real, &mut paths);
        for path in paths {
            if lookup(&c.sim, &path).and_then(Value::as_f64).is_some()
                && !SCORED.iter().any(|t| t.figure == path)
            {
                others.insert(path);
            }
        }
    }
    // A target for every case is summarised over the single-process cases, and again over
    // the queue cases under their group: a queue's wider run-to-run spread then leaves the
    // single-process cases' figures, and their bounds, as they are.
    let scored = SCORED.iter().flat_map(|t| {
        let queue = (t.group.is_none()
            && !SCORED.iter().any(|u| u.figure == t.figure && u.group == Some(CaseGroup::Queue)))
        .then_some(Target { group: Some(CaseGroup::Queue), ..*t });
        [Some(*t), queue].into_iter().flatten().map(|t| (t.figure.to_string(), Some(t)))
    });
    let paths = scored.chain(others.into_iter().map(|p| (p, None)));
    let mut out = Vec::new();
    for (path, target) in paths {
        let group = target.and_then(|t| t.group);
        let range = target.is_some_and(|t| t.range);
        let mut errors: Vec<(f64, &str)> = cases
            .iter()
            .filter(|c| match group {
                Some(g) => c.group == g,
                // Unscored figures are listed over every case; scored ones for every case
                // leave the queue cases to their own row.
                None => target.is_none() || c.group != CaseGroup::Queue,
            })
            .filter_map(|c| {
                let error = if range { range_error(c, &path) } else { case_error(c, &path) };
                error.map(|e| (e, c.id.as_str()))
            })
            .collect();
        if errors.is_empty() {
            continue;
        }
        errors.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = errors.len();
        let median = seeds::median(&mut errors.iter().map(|e| e.0).collect::<Vec<_>>()).unwrap_or(0.0);
        let (worst, worst_case) = errors[n - 1];
        out.push(CounterSummary {
            counter: path,
            scope: group,
            cases: n,
            median_abs_error: round4(median),
            worst_abs_error: round4(worst),
            worst_case: worst_case.to_string(),
            scored: target.is_some(),
            target: target.map(|t| t.worst),
            median_target: target.and_then(|t| t.median),
            range,
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

/// The error of a figure held to the model's range over the seeds: zero when the kernel's
/// median lies within the range (widened by the floor of near-zero counts, as
/// [`case_error`] has it), otherwise the distance from it to the nearer end, relative to
/// the median.
pub(super) fn range_error(c: &CaseResult, path: &str) -> Option<f64> {
    let real = lookup(&c.real, path)?.as_f64()?;
    let lo = lookup(&c.sim_min, path)?.as_f64()?;
    let hi = lookup(&c.sim_max, path)?.as_f64()?;
    let floor = count_floor(c, path);
    let distance = if real < lo - floor {
        lo - real
    } else if real > hi + floor {
        real - hi
    } else {
        return Some(0.0);
    };
    Some(round4(distance / real.max(floor).max(f64::MIN_POSITIVE)))
}

/// The floor a count's median is raised to before an error is taken relative to it: 0.1%
/// of the case's swap-ins (`pswpin` plus `zswpin`, of the same phase for a phase's
/// figures); no floor for times and sizes.
fn count_floor(c: &CaseResult, path: &str) -> f64 {
    let phase = path.split('.').next().filter(|p| *p == "fill" || *p == "swapoff");
    let swapins = |counter: &str| {
        let path = match phase {
            Some(p) => format!("{p}.vmstat.{counter}"),
            None => format!("vmstat.{counter}"),
        };
        lookup(&c.real, &path).and_then(Value::as_f64).unwrap_or(0.0)
    };
    let is_count = path.contains("vmstat.")
        || path.starts_with("mthp.")
        || path.ends_with("_requests")
        || path.ends_with("_all");
    if is_count {
        (swapins("pswpin") + swapins("zswpin")) * 0.001
    } else {
        0.0
    }
}

/// The error of one figure of one case, as the summary counts it: zero when the simulated
/// value lies within the kernel's own run-to-run range (min..max); otherwise
/// |sim / median - 1|, where a median below 0.1% of the case's swap-ins (`pswpin` plus
/// `zswpin`) is raised to that floor, so that a counter that is almost zero on both sides
/// (a few readahead pages in a random workload) is not reported as hundreds of percent off.
pub(super) fn case_error(c: &CaseResult, path: &str) -> Option<f64> {
    if path == JOBS_END_S {
        return c.jobs_timing.as_ref().map(|t| t.end_error_median);
    }
    let real = lookup(&c.real, path)?.as_f64()?;
    let sim = lookup(&c.sim, path)?.as_f64()?;
    let lo = lookup(&c.real_min, path).and_then(Value::as_f64).unwrap_or(real);
    let hi = lookup(&c.real_max, path).and_then(Value::as_f64).unwrap_or(real);
    if (lo..=hi).contains(&sim) {
        return Some(0.0);
    }
    let base = real.max(count_floor(c, path));
    if base == 0.0 {
        return Some(if sim == 0.0 { 0.0 } else { 1.0 });
    }
    Some(round4((sim - real).abs() / base))
}
