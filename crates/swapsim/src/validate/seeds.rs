//! Every case is replayed with several seeds ([`SEEDS`] unless told otherwise) and compared the way the kernel's runs were
//! summarised. What a seed changes: the device's service-time jitter, the phase of the
//! memory cgroup statistics flusher against the run (the classic LRU's aging decisions
//! read the statistics as last flushed), and a queue's launch delays.
//!
//! - The figures (counters, block figures, mTHP counters, times) are the median, figure by
//!   figure, over the seeds in which the OOM killer took nothing (over every seed when each
//!   had a kill), as a case's figures are medians over the runs that completed; the
//!   smallest and largest value over the same seeds are kept as the model's range.
//! - OOM kills: where the kernel killed in at least a third of its runs, the model must
//!   kill in at least a third of its seeds; where the kernel never killed, in none.

use serde::Serialize;
use serde_json::{Map, Value};
use swapsim_core::{Outcome, SimReport};

use super::KernelOomKills;

/// The seeds a case is replayed with unless told otherwise (`validate --seeds`): 1 to 6.
/// The bounds in bounds.json were recorded with them.
pub const SEEDS: u64 = 6;

/// How the replays of a case ended, over its seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SeedOutcomes {
    /// Seeds replayed.
    pub runs: u64,
    /// Seeds in which the OOM killer took a task.
    pub runs_oom_killed: u64,
}

/// Whether the model's kills over its seeds contradict the kernel's: the kernel killed in
/// at least a third of its runs and the model in fewer than a third of its seeds, or the
/// kernel never killed and the model did. Without a record, nothing contradicts.
pub(super) fn oom_mismatch(kernel: Option<&KernelOomKills>, sim: &SeedOutcomes) -> bool {
    let Some(kernel) = kernel else { return false };
    if kernel.runs_oom_killed == 0 {
        return sim.runs_oom_killed > 0;
    }
    let kernel_often = 3 * kernel.runs_oom_killed >= kernel.runs_started;
    kernel_often && 3 * sim.runs_oom_killed < sim.runs
}

/// The seeds' reports a case's figures come from: those in which the OOM killer took
/// nothing, or all of them when every one had a kill.
pub(super) fn compared_runs(reports: &[SimReport]) -> Vec<&SimReport> {
    let alive: Vec<&SimReport> = reports.iter().filter(|r| !killed(r)).collect();
    if alive.is_empty() {
        reports.iter().collect()
    } else {
        alive
    }
}

/// Whether a replay lost a task to the OOM killer.
pub(super) fn killed(report: &SimReport) -> bool {
    matches!(report.outcome, Outcome::OomKilled { .. })
        || report.jobs.as_ref().is_some_and(|jobs| jobs.oom_killed > 0)
}

/// How [`fold_tree`] combines one number's values over the trees.
#[derive(Clone, Copy)]
pub(super) enum Fold {
    Median,
    Min,
    Max,
}

/// The trees' numbers folded number by number (their median, least or largest), in the
/// shape of the first tree; a number missing from some trees is folded over those that
/// have it.
pub(super) fn fold_tree(trees: &[Value], fold: Fold) -> Value {
    let Some(first) = trees.first() else { return Value::Null };
    match first {
        Value::Object(m) => {
            let mut out = Map::new();
            for key in m.keys() {
                let children: Vec<Value> = trees.iter().filter_map(|t| t.get(key).cloned()).collect();
                out.insert(key.clone(), fold_tree(&children, fold));
            }
            Value::Object(out)
        }
        Value::Number(_) => {
            let mut xs: Vec<f64> = trees.iter().filter_map(Value::as_f64).collect();
            let x = match fold {
                Fold::Median => median(&mut xs),
                Fold::Min => xs.iter().copied().reduce(f64::min),
                Fold::Max => xs.iter().copied().reduce(f64::max),
            };
            x.map_or(Value::Null, |x| serde_json::json!(x))
        }
        other => other.clone(),
    }
}

/// The median of `xs` (the mean of the middle two for an even count); it sorts `xs`.
pub(crate) fn median(xs: &mut [f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn trees_fold_number_by_number() {
        let trees =
            [json!({"a": 1, "b": {"c": 10}}), json!({"a": 3, "b": {"c": 30}}), json!({"a": 2, "b": {}})];
        assert_eq!(fold_tree(&trees, Fold::Median), json!({"a": 2.0, "b": {"c": 20.0}}));
        assert_eq!(fold_tree(&trees, Fold::Min), json!({"a": 1.0, "b": {"c": 10.0}}));
        assert_eq!(fold_tree(&trees, Fold::Max), json!({"a": 3.0, "b": {"c": 30.0}}));
    }

    #[test]
    fn oom_rule_follows_the_kernel_rate() {
        let kernel = |killed| KernelOomKills { runs_started: 5, runs_oom_killed: killed, note: None };
        let sim = |killed| SeedOutcomes { runs: 6, runs_oom_killed: killed };
        assert!(!oom_mismatch(Some(&kernel(0)), &sim(0)));
        assert!(oom_mismatch(Some(&kernel(0)), &sim(1)));
        // 2 of 5 is at least a third: the model must kill in 2 of 6.
        assert!(oom_mismatch(Some(&kernel(2)), &sim(1)));
        assert!(!oom_mismatch(Some(&kernel(2)), &sim(2)));
        // 1 of 5 is under a third: either outcome agrees.
        assert!(!oom_mismatch(Some(&kernel(1)), &sim(0)));
        assert!(!oom_mismatch(Some(&kernel(1)), &sim(6)));
        // Always killed: the model must kill in at least a third of its seeds.
        assert!(oom_mismatch(Some(&kernel(5)), &sim(1)));
        assert!(!oom_mismatch(Some(&kernel(5)), &sim(2)));
        assert!(!oom_mismatch(None, &sim(6)));
    }
}
