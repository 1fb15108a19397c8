//! The metrics a sweep compares its variants on, read out of run documents.
//!
//! A metric is any `/proc/vmstat` counter of a report (`pswpin`, `pgmajfault`, ...) or one
//! of [`DERIVED_METRICS`], figures drawn from several report fields. [`metric`] reads one
//! out of a report as JSON (a [`RunDocument`](crate::RunDocument) serialised, or read back
//! from a sweep or shard document), so that a sweep that just ran, a merged one and a
//! caller in another language all get the same numbers. [`SUMMARY_METRICS`] are the ones
//! a sweep's table, CSV file and summary show, in order.

use serde_json::Value;

/// Metrics derived from several report fields; any vmstat counter is a metric too.
/// `jobs_wall_s` is a job queue's wall time, undefined for other workloads.
pub const DERIVED_METRICS: [&str; 6] =
    ["read_dispatches", "reads_per_dispatch", "major_p50_us", "major_p99_us", "sim_time_s", "jobs_wall_s"];

/// The metrics a sweep's summary shows, in order: the columns of `swapsim sweep`'s table.
pub const SUMMARY_METRICS: [&str; 10] = [
    "pgmajfault",
    "pswpin",
    "pswpout",
    "swap_ra",
    "swap_ra_hit",
    "read_dispatches",
    "reads_per_dispatch",
    "major_p50_us",
    "major_p99_us",
    "sim_time_s",
];

/// The value of metric `name` in `report` (a run document as JSON), or `None` where it is
/// undefined (reads per dispatch with nothing dispatched, a job queue's wall time without
/// one) or where the report has no such counter.
pub fn metric(report: &Value, name: &str) -> Option<f64> {
    let sum_reads = |field: &str| -> f64 {
        let block = report["block"].as_array().map(Vec::as_slice).unwrap_or_default();
        block.iter().filter_map(|device| device["reads"][field].as_f64()).sum()
    };
    match name {
        "read_dispatches" => Some(sum_reads("dispatches")),
        "reads_per_dispatch" => {
            let dispatches = sum_reads("dispatches");
            (dispatches > 0.0).then(|| sum_reads("queued") / dispatches)
        }
        "major_p50_us" => report["fault_latency"]["major"]["p50_us"].as_f64(),
        "major_p99_us" => report["fault_latency"]["major"]["p99_us"].as_f64(),
        "sim_time_s" => report["sim_time_s"].as_f64(),
        "jobs_wall_s" => report["jobs"]["wall_s"].as_f64(),
        counter => report["vmstat"][counter].as_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_per_dispatch_is_undefined_without_dispatches() {
        let report = serde_json::json!({"block": [{"reads": {"queued": 6, "dispatches": 2}},
                                                   {"reads": {"queued": 2, "dispatches": 2}}]});
        assert_eq!(metric(&report, "reads_per_dispatch"), Some(2.0));
        assert_eq!(metric(&report, "read_dispatches"), Some(4.0));
        assert_eq!(metric(&serde_json::json!({"block": []}), "reads_per_dispatch"), None);
        assert_eq!(metric(&serde_json::json!({"jobs": {"wall_s": 2.5}}), "jobs_wall_s"), Some(2.5));
        assert_eq!(metric(&serde_json::json!({"sim_time_s": 1.0}), "jobs_wall_s"), None);
        assert_eq!(metric(&serde_json::json!({"vmstat": {"pswpin": 7}}), "pswpin"), Some(7.0));
    }
}
