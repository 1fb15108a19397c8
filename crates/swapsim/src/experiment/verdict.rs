//! The one verdict mechanism every experiment uses: simulated figures checked, one
//! published figure at a time, against a tolerance stated with the check.
//!
//! A check is "reproduced" only when the simulated figure is within its tolerance; the
//! verdict as a whole is reproduced only when every check is. Absolute times are not
//! judged unless a publication describes its disk well enough to model it (only the
//! hibernation study does): otherwise only shapes and ratios, which the disk's speed
//! largely cancels out of, are compared.
//!
//! The tolerances an experiment may state: within a fraction of the published figure
//! (a ratio of two published times within ±25 %, [`RATIO_TOLERANCE`], since the swapoff
//! study's own times for one setting vary that much), within a distance of it (a curve's
//! minimum within one page-cluster), at most it, within a published range, or within a
//! published range widened at both ends. Which figures an experiment checks, and why
//! those tolerances, is said beside its checks, in the experiment's own file.

use serde::Serialize;

use super::support::round3;

/// How far a ratio may be from the published one, relative to it: the swapoff study's
/// own times for one setting vary that much (pre-5.8 scaling runs the same window at
/// every page-cluster and took 21.5 to 28.3 s).
pub(super) const RATIO_TOLERANCE: f64 = 0.25;

/// The simulated direction and ratio against the published ones, and each published
/// figure checked within a stated tolerance.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Verdict {
    /// What is compared.
    pub metric: String,
    /// The simulated ratio.
    pub simulated: f64,
    /// The published ratio.
    pub published: f64,
    /// Whether the simulation moves the way the publication did.
    pub direction_matches: bool,
    /// Whether every check is reproduced within its tolerance.
    pub reproduced: bool,
    /// Each published figure against the simulated one.
    pub checks: Vec<Check>,
    /// One sentence comparing the two.
    pub text: String,
    /// Further figures, by name.
    pub details: Vec<(String, f64)>,
}

/// One published figure of one curve against the simulated figure, within a tolerance.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Check {
    /// The curve (a table column such as "fixed") or quantity the figure belongs to.
    pub curve: String,
    /// What is compared, e.g. "minimum at page-cluster".
    pub criterion: String,
    /// The simulated figure.
    pub simulated: f64,
    /// The published figure, or the low end of a published range.
    pub published: f64,
    /// The high end of a published range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_max: Option<f64>,
    /// The tolerance, in words: "tolerance ±25 %", "tolerance ±1 page-cluster".
    pub tolerance: String,
    /// Whether the simulated figure is within the tolerance of the published one.
    pub reproduced: bool,
    /// One sentence: "fixed: not reproduced: minimum at page-cluster 8, published 4
    /// (tolerance ±1 page-cluster)".
    pub text: String,
}

/// What a check accepts.
pub(super) enum Tolerance {
    /// Within this fraction of the published value, either way.
    Relative(f64),
    /// Within this distance of the published value, either way.
    Absolute(f64, &'static str),
    /// At most the published value.
    AtMost,
    /// Within the published range of fractions (shown as percentages).
    PercentRange(f64, f64),
    /// Within a published range widened by a fraction of its ends, `low × (1 − rel)` to
    /// `high × (1 + rel)`; shown as percentages when `percent` is set.
    RelativeRange { low: f64, high: f64, rel: f64, percent: bool },
}

/// Checks `simulated` against `published` and words the result as
/// "{curve}: reproduced|not reproduced: {what} {simulated}, published {published} ({tolerance})".
pub(super) fn check(curve: &str, what: &str, simulated: f64, published: f64, tolerance: Tolerance) -> Check {
    let mut simulated_text = format!("{simulated:.2}");
    let (reproduced, published_text, tolerance_text, published_max) = match tolerance {
        Tolerance::Relative(rel) => (
            (simulated / published - 1.0).abs() <= rel,
            format!("{published:.2}"),
            format!("tolerance ±{:.0} %", rel * 100.0),
            None,
        ),
        Tolerance::Absolute(dist, unit) => {
            // A position, such as a page-cluster, is a whole number; a share is not.
            simulated_text =
                if simulated.fract() == 0.0 { format!("{simulated}") } else { format!("{simulated:.2}") };
            (
                (simulated - published).abs() <= dist,
                format!("{published}"),
                format!("tolerance ±{dist} {unit}"),
                None,
            )
        }
        Tolerance::AtMost => (
            simulated <= published,
            format!("{published:.2}"),
            "tolerance: at most the published".to_string(),
            None,
        ),
        Tolerance::PercentRange(low, high) => {
            simulated_text = format!("{:+.0} %", simulated * 100.0);
            (
                (low..=high).contains(&simulated),
                format!("{:+.0} % to {:+.0} %", low * 100.0, high * 100.0),
                "tolerance: the published range".to_string(),
                Some(high),
            )
        }
        Tolerance::RelativeRange { low, high, rel, percent } => {
            let published_text = if percent {
                simulated_text = format!("{:.1} %", simulated * 100.0);
                format!("{:.1} % to {:.1} %", low * 100.0, high * 100.0)
            } else {
                format!("{low:.2} to {high:.2}")
            };
            (
                (low * (1.0 - rel)..=high * (1.0 + rel)).contains(&simulated),
                published_text,
                format!("tolerance ±{:.0} %", rel * 100.0),
                Some(high),
            )
        }
    };
    let status = if reproduced { "reproduced" } else { "not reproduced" };
    Check {
        curve: curve.to_string(),
        criterion: what.to_string(),
        simulated: round3(simulated),
        published: round3(match tolerance {
            Tolerance::PercentRange(low, _) | Tolerance::RelativeRange { low, .. } => low,
            _ => published,
        }),
        published_max: published_max.map(round3),
        tolerance: tolerance_text.clone(),
        reproduced,
        text: format!(
            "{curve}: {status}: {what} {simulated_text}, published {published_text} ({tolerance_text})"
        ),
    }
}

/// `c`, judged over several runs by their pooled figure, held to the runs' own noise: a
/// check the pooled figure reproduces is not reproduced when `against` of the `of` runs
/// moved the other way from the published direction, since the pooled figure's side of
/// no change is then within the spread between runs. The sentence says so.
pub(super) fn beyond_run_noise(mut c: Check, against: usize, of: usize) -> Check {
    if c.reproduced && against > 0 {
        c.reproduced = false;
        c.text = c.text.replacen(": reproduced: ", ": not reproduced: ", 1);
        c.text.push_str(&format!("; within the noise: {against} of {of} runs moved the other way"));
    }
    c
}

/// One verdict from the same judgement on two workloads: `first`'s, with `second`'s checks
/// after its own under `second_name` (each check's curve and text prefixed with it). It is
/// reproduced when every check of both is, and moves the published way when both do; its
/// metric and ratio are the first workload's.
pub(super) fn on_two_workloads(first: Verdict, second: Verdict, second_name: &str) -> Verdict {
    let renamed = second.checks.into_iter().map(|c| Check {
        curve: format!("{second_name} {}", c.curve),
        text: format!("{second_name} {}", c.text),
        ..c
    });
    let checks: Vec<Check> = first.checks.into_iter().chain(renamed).collect();
    let details = first
        .details
        .into_iter()
        .chain(
            second
                .details
                .into_iter()
                .map(|(name, x)| (format!("{}_{name}", second_name.replace(' ', "_")), x)),
        )
        .collect();
    Verdict {
        metric: first.metric,
        simulated: first.simulated,
        published: first.published,
        direction_matches: first.direction_matches && second.direction_matches,
        reproduced: checks.iter().all(|c| c.reproduced),
        checks,
        text: format!("{}; on the {second_name}: {}", first.text, second.text),
        details,
    }
}

/// Renders a verdict's checks one per line, then whether it is reproduced.
#[cfg(test)]
pub(super) fn check_verdict(verdict: &Verdict, expect: expect_test::Expect) {
    let mut actual: String = verdict.checks.iter().map(|c| format!("{}\n", c.text)).collect();
    actual.push_str(&format!("reproduced: {}\n", verdict.reproduced));
    expect.assert_eq(&actual);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(simulated: f64, direction_matches: bool) -> Verdict {
        let checks = vec![check("throttled", "cut by", simulated, 4.0, Tolerance::Relative(RATIO_TOLERANCE))];
        Verdict {
            metric: "cut".into(),
            simulated,
            published: 4.0,
            direction_matches,
            reproduced: checks.iter().all(|c| c.reproduced),
            checks,
            text: format!("cut {simulated}"),
            details: vec![("ratio".into(), simulated)],
        }
    }

    #[test]
    fn two_workloads_are_reproduced_only_together() {
        let both = on_two_workloads(one(4.1, true), one(1.0, false), "queue of traces");
        check_verdict(
            &both,
            expect_test::expect![[r#"
                throttled: reproduced: cut by 4.10, published 4.00 (tolerance ±25 %)
                queue of traces throttled: not reproduced: cut by 1.00, published 4.00 (tolerance ±25 %)
                reproduced: false
            "#]],
        );
        assert!(!both.direction_matches);
        assert_eq!((both.simulated, both.checks[1].curve.as_str()), (4.1, "queue of traces throttled"));
        assert_eq!(both.details[1], ("queue_of_traces_ratio".to_string(), 1.0));
        assert_eq!(both.text, "cut 4.1; on the queue of traces: cut 1");
        assert!(on_two_workloads(one(4.1, true), one(3.9, true), "q").reproduced);
    }

    #[test]
    fn a_pooled_figure_that_a_run_contradicts_is_not_reproduced() {
        let within = || check("throttled", "cut by", 4.1, 4.0, Tolerance::Relative(RATIO_TOLERANCE));
        let held = beyond_run_noise(within(), 1, 5);
        assert!(!held.reproduced);
        assert_eq!(
            held.text,
            "throttled: not reproduced: cut by 4.10, published 4.00 (tolerance ±25 %); within the noise: 1 of 5 \
             runs moved the other way"
        );
        assert!(beyond_run_noise(within(), 0, 5).reproduced);
        let outside = check("throttled", "cut by", 1.0, 4.0, Tolerance::Relative(RATIO_TOLERANCE));
        assert_eq!(beyond_run_noise(outside.clone(), 2, 5).text, outside.text);
    }
}
