//! A run watched by a [`Progress`]: the accesses replayed against the accesses the
//! workload holds.
//!
//! The engine counts accesses anyway; it tells the count at coarse intervals
//! ([`swapsim_core::PROGRESS_ACCESSES`]), so watching costs the access path one compare.

use anyhow::{anyhow, Context, Result};
use swapsim_core::SimReport;

use super::{Prepared, Workload};
use crate::progress::Progress;
use crate::trace::{TraceReport, TraceTally};

impl Prepared {
    /// Builds and runs the scenario once, telling `progress` the accesses replayed of the
    /// accesses the workload holds; also says what was found in the trace.
    ///
    /// The total is known for a generator and a job queue and, once its first pass has
    /// counted the records, for a trace. A run that ends early (an OOM kill of every task, a limit) reports
    /// fewer accesses than the total.
    pub fn run_with_progress(&self, progress: &dyn Progress) -> Result<(SimReport, Option<TraceReport>)> {
        let (setup, trace, jobs) = self.setup_for_run()?;
        let fixed_total = match &self.workload {
            Workload::Generator(generator) => {
                Some(generator.total_accesses().saturating_mul(u64::from(generator.tasks)))
            }
            Workload::Jobs(jobs) => Some(jobs.total_accesses(self.seed)),
            Workload::Trace(_) | Workload::Queue(_) => None,
        };
        // A trace counted while the run reads it has its total once the reading has ended;
        // a queue's, once every job's trace has been counted.
        let queue_total = || jobs.iter().map(TraceTally::records).sum::<Option<u64>>();
        let total = || {
            fixed_total.or_else(|| match &self.workload {
                Workload::Queue(_) => queue_total(),
                _ => trace.as_ref().and_then(|trace| trace.records()),
            })
        };
        progress.advanced(0, total());
        // The core's message already includes its cause; formatting it once keeps the
        // `{:#}` chain from printing the cause twice.
        let run = swapsim_core::run_with_progress(setup, &mut |done| progress.advanced(done, total()))
            .map_err(|err| anyhow!("{err}"));
        // An error of the trace is the run's error, as when a first pass found it before the run.
        let trace = trace.map(|trace| trace.finish()).transpose()?;
        let jobs: Vec<TraceReport> = jobs
            .into_iter()
            .enumerate()
            .map(|(j, tally)| tally.finish().with_context(|| format!("workload.queue job {j}")))
            .collect::<Result<_>>()?;
        let report = run?;
        let queue_total = (!jobs.is_empty()).then(|| jobs.iter().map(|job| job.records).sum::<u64>());
        let total = fixed_total
            .or(queue_total)
            .or_else(|| trace.as_ref().map(|trace| trace.records.saturating_mul(u64::from(trace.repeat))));
        progress.advanced(report.accesses, total);
        Ok((report, trace))
    }
}

#[cfg(test)]
mod tests {
    use crate::progress::Progress;
    use crate::{Scenario, TraceFlags, TraceSource};
    use std::sync::Mutex;

    /// Every call's `(done, total)`, in order.
    #[derive(Default)]
    struct Calls(Mutex<Vec<(u64, Option<u64>)>>);

    impl Progress for Calls {
        fn advanced(&self, done: u64, total: Option<u64>) {
            self.0.lock().expect("no test thread panicked").push((done, total));
        }
    }

    /// Runs `toml` watched, checks that the counts start at 0, grow and end at the run's
    /// accesses, and that the total is the workload's; returns the counts.
    fn check(toml: &str) -> Vec<u64> {
        let prepared = Scenario::from_toml(toml).and_then(|s| s.prepare()).expect("a valid scenario");
        let calls = Calls::default();
        let (report, _) = prepared.run_with_progress(&calls).expect("the run completes");
        let calls = calls.0.into_inner().expect("no test thread panicked");
        let done: Vec<u64> = calls.iter().map(|&(done, _)| done).collect();
        assert_eq!(done.first(), Some(&0));
        assert!(done.windows(2).all(|pair| pair[0] < pair[1]), "counts grow: {done:?}");
        assert_eq!(done.last(), Some(&report.accesses));
        assert!(calls.iter().all(|&(_, total)| total == Some(report.accesses)), "{calls:?}");
        // Watching changes nothing.
        assert_eq!(format!("{report:?}"), format!("{:?}", prepared.run().expect("the run completes")));
        done
    }

    #[test]
    fn a_generated_run_counts_its_accesses_up_to_the_total() {
        // Two tasks, each filling 2 MiB (512 pages) and making 300 passes over it: 308,224
        // accesses, four multiples of the reporting interval.
        let done = check(
            r#"
            [memcg]
            limit = "1MiB"
            [[swap.devices]]
            name = "vda"
            size = "16MiB"
            [workload.generator]
            pattern = "zipf"
            region = "2MiB"
            passes = 300
            tasks = 2
            "#,
        );
        assert_eq!(done.len(), 6, "{done:?}");
        assert_eq!(done[1], swapsim_core::PROGRESS_ACCESSES);
    }

    #[test]
    fn a_job_queue_counts_its_accesses_up_to_the_total() {
        // Twenty jobs of a few hundred pages each, eight accesses per page on median.
        let done = check(
            r#"
            [memcg]
            limit = "2MiB"
            [[swap.devices]]
            name = "vda"
            size = "64MiB"
            [workload.jobs]
            jobs = 20
            size_median = "2MiB"
            link_size_median = "4MiB"
            "#,
        );
        assert!(done.len() >= 2, "{done:?}");
    }

    #[test]
    fn a_trace_run_counts_its_records_times_the_repeats() {
        let prepared = Scenario::from_toml("[[swap.devices]]\nname = \"vda\"\nsize = \"16MiB\"\n")
            .expect("a valid scenario")
            .with_trace(TraceSource::Embedded { name: "forty.trace", bytes: FORTY_RECORDS.as_bytes() })
            .with_trace_flags(TraceFlags { repeat: Some(3), ..TraceFlags::default() });
        let calls = Calls::default();
        let (report, trace) = prepared.prepare().and_then(|p| p.run_with_progress(&calls)).expect("it runs");
        let trace = trace.expect("a trace workload");
        assert_eq!((trace.records, trace.repeat, report.accesses), (40, 3, 120));
        let calls = calls.0.into_inner().expect("no test thread panicked");
        assert_eq!(calls, [(0, Some(120)), (120, Some(120))]);
    }

    /// Forty accesses to nine pages, one in four a write.
    const FORTY_RECORDS: &str = "W 0\nR 1\nR 2\nR 3\nW 4\nR 5\nR 6\nR 7\nW 8\nR 0\n\
        R 1\nR 2\nW 3\nR 4\nR 5\nR 6\nW 7\nR 8\nR 0\nR 1\n\
        W 2\nR 3\nR 4\nR 5\nW 6\nR 7\nR 8\nR 0\nW 1\nR 2\n\
        R 3\nR 4\nW 5\nR 6\nR 7\nR 8\nW 0\nR 1\nR 2\nR 3\n";
}
