//! `[report]`: what a run's report holds besides its totals, today the time series'
//! sampling interval (`sample_every`), and the duration syntax it shares with the command
//! line's `--sample-every`.

use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use swapsim_core::SimDuration;

/// `[report]` as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ReportSection {
    /// Sample the machine every this much simulated time ("100ms", "20us", "1s", "500ns")
    /// into the report's `series`. Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sample_every: Option<String>,
}

impl ReportSection {
    pub(crate) fn is_default(&self) -> bool {
        *self == ReportSection::default()
    }

    /// The sampling interval the section asks for, checked.
    pub(crate) fn sample_every(&self) -> Result<Option<SimDuration>> {
        self.sample_every
            .as_deref()
            .map(|text| parse_sample_every(text).map_err(|e| anyhow!("report.sample_every: {e}")))
            .transpose()
    }
}

/// `[report]` in the effective scenario a report echoes, present only when sampling.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ResolvedReport {
    /// The sampling interval, in the largest unit that writes it exactly ("100ms").
    pub sample_every: String,
}

impl ResolvedReport {
    pub(crate) fn new(every: SimDuration) -> ResolvedReport {
        ResolvedReport { sample_every: duration_text(every) }
    }
}

/// Parses a sampling interval: a number and a unit of `ns`, `us`, `ms` or `s`, as the
/// timeline's times are written ("100ms", "2.5s"); 0 is refused.
pub fn parse_sample_every(text: &str) -> Result<SimDuration> {
    let every = crate::timeline::duration(text).map_err(|e| anyhow!("{e}"))?;
    if every.0 == 0 {
        return Err(anyhow!("\"{text}\" is not a sampling interval: it must be longer than 0"));
    }
    Ok(every)
}

/// `every` in the largest of `s`, `ms`, `us`, `ns` that writes it as a whole number.
pub(crate) fn duration_text(every: SimDuration) -> String {
    let ns = every.0;
    for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns.is_multiple_of(scale) {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_parse_in_every_unit_and_print_back() {
        for (text, ns, back) in [
            ("100ms", 100_000_000, "100ms"),
            ("2.5s", 2_500_000_000, "2500ms"),
            ("20us", 20_000, "20us"),
            ("750ns", 750, "750ns"),
            ("1s", 1_000_000_000, "1s"),
        ] {
            let every = parse_sample_every(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(every, SimDuration(ns), "{text}");
            assert_eq!(duration_text(every), back);
        }
    }

    use crate::scenario::SMALL_SWAPPING as SCENARIO;

    fn scenario() -> crate::Scenario {
        crate::Scenario::from_toml(SCENARIO).expect("the scenario parses")
    }

    #[test]
    fn the_file_the_edit_and_the_builder_all_sample() {
        let plain = scenario().prepare().expect("valid").run().expect("runs");
        assert!(plain.series.is_none());
        let by_file = crate::Scenario::from_toml(&format!("{SCENARIO}\n[report]\nsample_every = \"2ms\"\n"))
            .and_then(|s| s.prepare())
            .expect("valid");
        let by_edit = scenario().set("report.sample_every", "2ms").and_then(|s| s.prepare()).expect("valid");
        let by_builder = scenario().with_sample_every(SimDuration(2_000_000)).prepare().expect("valid");
        let reports: Vec<_> = [&by_file, &by_edit, &by_builder].map(|p| p.run().expect("runs")).into();
        for (prepared, report) in [&by_file, &by_edit, &by_builder].iter().zip(&reports) {
            assert_eq!(prepared.resolved().report, Some(ResolvedReport { sample_every: "2ms".into() }));
            let series = report.series.as_ref().expect("sampled");
            assert_eq!(series.interval_ns, 2_000_000);
            assert_eq!(series.vmstat_total(), report.vmstat);
            assert_eq!(report.vmstat, plain.vmstat, "sampling changes no count");
        }
        assert_eq!(reports[0].series, reports[2].series);
        // The builder's interval wins over the file's.
        let both = crate::Scenario::from_toml(&format!("{SCENARIO}\n[report]\nsample_every = \"2ms\"\n"))
            .expect("parses")
            .with_sample_every(SimDuration(5_000_000));
        assert_eq!(both.run().expect("runs").series.expect("sampled").interval_ns, 5_000_000);
    }

    #[test]
    fn a_bad_interval_in_the_file_is_named() {
        for (value, says) in [("\"0s\"", "longer than 0"), ("\"soon\"", "not a duration")] {
            let text = format!("{SCENARIO}\n[report]\nsample_every = {value}\n");
            let err = crate::Scenario::from_toml(&text).and_then(|s| s.prepare()).expect_err(value);
            let err = format!("{err:#}");
            assert!(err.contains("report.sample_every") && err.contains(says), "{value}: {err}");
        }
        let err = crate::Scenario::from_toml(&format!("{SCENARIO}\n[report]\nsample_evry = \"1s\"\n"))
            .expect_err("a misspelled key is refused");
        assert!(format!("{err:#}").contains("sample_evry"), "{err:#}");
    }

    #[test]
    fn zero_and_garbage_are_refused_by_name() {
        for (text, says) in [
            ("0ms", "longer than 0"),
            ("0", "not a duration"),
            ("fast", "not a duration"),
            ("10", "not a duration"),
            ("-5ms", "out of range"),
            ("10MiB", "not a duration"),
        ] {
            let err = parse_sample_every(text).expect_err(text).to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
