//! Whether the simulated system failed during a run.
//!
//! A run can end normally and still record a failure of the system it simulates: a task
//! OOM-killed, a timeline operation that could not be carried out (a swapoff that ran
//! out of memory, a swapoff of a device not in use), or tasks left unfinished when
//! nothing more could happen (paused and never resumed). Both are legitimate simulated
//! outcomes, not errors of the simulator, and the report already holds them (`outcome`,
//! and `operations[i].result`, which is "completed", "running" or why the operation
//! failed). This module reads them back as one verdict, so that the command can choose its
//! exit status and a sweep can mark the variant.
//!
//! What it deliberately does not count as a failure: stopping at the event limit or the
//! simulated-time limit (limits of the simulation, which the report's `outcome` names), and
//! an operation still running when the run ended (`result = "running"`).

use std::fmt;
use swapsim_core::{OpResult, Outcome, SimReport};

/// One failure of the simulated system.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Failure {
    /// A task was OOM-killed (the report records the first kill).
    OomKill {
        /// The killed task.
        task: String,
        /// Simulated time of the kill, in seconds.
        at_s: f64,
    },
    /// A timeline operation failed.
    Operation {
        /// Its index in the scenario's `[[timeline]]`.
        index: usize,
        /// Its name, such as "swapoff".
        op: String,
        /// The device it named, for swapoff and swapon.
        device: Option<String>,
        /// Why it failed, as the report says (without a leading "failed: ").
        reason: String,
    },
    /// The run ran out of things to do with tasks unfinished (paused and never resumed,
    /// or waiting to start on a condition that never held).
    Unfinished {
        /// How many tasks had not finished.
        tasks: u64,
        /// Why, as the report says.
        reason: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::OomKill { task, at_s } => write!(f, "task {task} OOM-killed at {at_s:.6} s"),
            Failure::Unfinished { tasks, reason } => write!(f, "{tasks} tasks unfinished: {reason}"),
            Failure::Operation { index, op, device, reason } => {
                write!(f, "timeline[{index}] {op}")?;
                if let Some(device) = device {
                    write!(f, " {device}")?;
                }
                write!(f, ": {reason}")
            }
        }
    }
}

/// The failures of one run, in the order the report lists them: the OOM kill first, then
/// the failed operations by index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStatus {
    failures: Vec<Failure>,
}

impl RunStatus {
    /// Reads the failures out of `report`.
    pub fn of(report: &SimReport) -> RunStatus {
        let mut failures = Vec::new();
        match &report.outcome {
            Outcome::OomKilled { task, at_s } => {
                failures.push(Failure::OomKill { task: task.clone(), at_s: *at_s })
            }
            Outcome::Unfinished { tasks, reason } => {
                failures.push(Failure::Unfinished { tasks: *tasks, reason: reason.clone() })
            }
            _ => {}
        }
        for (index, op) in report.operations.iter().enumerate() {
            let OpResult::Failed(why) = &op.result else { continue };
            let reason = why.strip_prefix("failed: ").unwrap_or(why).to_string();
            failures.push(Failure::Operation { index, op: op.op.clone(), device: op.device.clone(), reason });
        }
        RunStatus { failures }
    }

    /// Whether anything failed.
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }

    /// What failed.
    pub fn failures(&self) -> &[Failure] {
        &self.failures
    }

    /// A short marker for a table cell: "ok", "oom", "failed: swapoff", or both kinds
    /// joined, such as "oom, failed: swapoff" (each operation name once).
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if self.failures.iter().any(|failure| matches!(failure, Failure::OomKill { .. })) {
            parts.push("oom".to_string());
        }
        if self.failures.iter().any(|failure| matches!(failure, Failure::Unfinished { .. })) {
            parts.push("unfinished".to_string());
        }
        let mut ops: Vec<&str> = Vec::new();
        for failure in &self.failures {
            if let Failure::Operation { op, .. } = failure {
                if !ops.contains(&op.as_str()) {
                    ops.push(op);
                }
            }
        }
        if !ops.is_empty() {
            parts.push(format!("failed: {}", ops.join(", ")));
        }
        if parts.is_empty() {
            "ok".to_string()
        } else {
            parts.join(", ")
        }
    }

    /// The marker of a variant run once per seed: the one run's label, "ok" when no seed
    /// failed, and otherwise the failing runs' labels followed by how many seeds failed,
    /// such as "failed: swapoff in 2 of 3 seeds".
    pub fn label_over_seeds(statuses: &[RunStatus]) -> String {
        if let [only] = statuses {
            return only.label();
        }
        let mut labels: Vec<String> = Vec::new();
        for status in statuses.iter().filter(|status| status.failed()) {
            let label = status.label();
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
        if labels.is_empty() {
            return "ok".to_string();
        }
        let n_failed = statuses.iter().filter(|status| status.failed()).count();
        format!("{} in {n_failed} of {} seeds", labels.join("; "), statuses.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swapsim_core::OpReport;

    fn report(outcome: Outcome, results: &[(&str, &str)]) -> SimReport {
        let scenario = crate::Scenario::from_toml(
            "[workload.generator]\npattern = \"seq\"\nregion = \"64KiB\"\npasses = 0\n",
        )
        .expect("a valid scenario");
        let mut report = scenario.run().expect("a tiny run");
        report.outcome = outcome;
        report.operations = results
            .iter()
            .map(|(op, result)| OpReport {
                op: op.to_string(),
                device: (*op == "swapoff").then(|| "vda".to_string()),
                result: match *result {
                    "completed" => OpResult::Completed,
                    "running" => OpResult::Running,
                    why => OpResult::Failed(why.to_string()),
                },
                ..OpReport::default()
            })
            .collect();
        report
    }

    fn check(report: &SimReport, label: &str, messages: &[&str]) {
        let status = RunStatus::of(report);
        assert_eq!(status.label(), label);
        assert_eq!(status.failed(), !messages.is_empty());
        let actual: Vec<String> = status.failures().iter().map(ToString::to_string).collect();
        assert_eq!(actual, messages);
    }

    #[test]
    fn completed_and_running_operations_and_limits_are_not_failures() {
        check(&report(Outcome::Completed, &[]), "ok", &[]);
        check(&report(Outcome::TimeLimit, &[("mark", "completed"), ("swapoff", "running")]), "ok", &[]);
        check(&report(Outcome::EventLimit, &[]), "ok", &[]);
    }

    #[test]
    fn an_oom_kill_and_failed_operations_are_failures() {
        let oom = Outcome::OomKilled { task: "gen:seq#0".into(), at_s: 0.5 };
        check(&report(oom.clone(), &[]), "oom", &["task gen:seq#0 OOM-killed at 0.500000 s"]);
        check(
            &report(Outcome::Completed, &[("mark", "completed"), ("swapoff", "failed: out of memory")]),
            "failed: swapoff",
            &["timeline[1] swapoff vda: out of memory"],
        );
        check(
            &report(
                oom,
                &[("swapoff", "device \"vda\" is not in use"), ("swapon", "no swap device named \"x\"")],
            ),
            "oom, failed: swapoff, swapon",
            &[
                "task gen:seq#0 OOM-killed at 0.500000 s",
                "timeline[0] swapoff vda: device \"vda\" is not in use",
                "timeline[1] swapon: no swap device named \"x\"",
            ],
        );
    }

    #[test]
    fn seeds_are_summed_up_by_their_failures() {
        let ok = RunStatus::default();
        let swapoff = RunStatus::of(&report(Outcome::Completed, &[("swapoff", "failed: out of memory")]));
        assert_eq!(RunStatus::label_over_seeds(std::slice::from_ref(&swapoff)), "failed: swapoff");
        assert_eq!(RunStatus::label_over_seeds(&[ok.clone(), ok.clone()]), "ok");
        assert_eq!(
            RunStatus::label_over_seeds(&[swapoff.clone(), ok, swapoff]),
            "failed: swapoff in 2 of 3 seeds"
        );
    }
}
