//! Comparing the variants of a sweep: means over seeds with a 95 % interval, and ratios to
//! a baseline variant.
//!
//! With `--seeds N` every variant runs N times (see [`Plan::with_seeds`](super::Plan::with_seeds)
//! for the seeds). [`Estimate`] is the mean of a metric over those runs with a Student t
//! interval, `mean ± t(0.975, N-1) · s / √N` where `s` is the sample standard deviation
//! (divided by N-1): how far the mean over these seeds may lie from the mean over all seeds,
//! if the metric varies from seed to seed like a normal variable. One seed gives no
//! interval. Two variants whose intervals do not overlap differ by more than seed noise.
//!
//! With `--baseline KEY=VALUE` each variant is compared with its [`Baseline`] variant: the
//! one with the same values on the other axes and VALUE on KEY. The ratio is of the means.
//!
//! Nothing here knows what a metric is. The caller reads the numbers out of the reports,
//! so that a sweep that just ran and one merged from shard documents are compared by the
//! same code.

use anyhow::{anyhow, bail, Result};
use serde_json::Value;

use crate::overrides::Override;

/// The mean of a metric over a variant's seeds, and its 95 % confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Estimate {
    /// Samples the estimate is made of (seeds where the metric is defined).
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Half the width of the 95 % interval around the mean; `None` for one sample.
    pub ci95: Option<f64>,
}

impl Estimate {
    /// The estimate from `samples`, or `None` when there are none. Equal samples give
    /// that value and an interval of exactly 0 (summing them could leave rounding noise,
    /// such as a 1e-14 interval around a constant 0.1).
    pub fn of(samples: &[f64]) -> Option<Estimate> {
        let n = samples.len();
        let first = *samples.first()?;
        if samples.iter().all(|&x| x == first) {
            return Some(Estimate { n, mean: first, ci95: (n > 1).then_some(0.0) });
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let ci95 = (n > 1).then(|| {
            let variance = samples.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
            t_975(n - 1) * (variance / n as f64).sqrt()
        });
        Some(Estimate { n, mean, ci95 })
    }
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom (`df >= 1`):
/// a table to six decimals up to 30, then the Cornish–Fisher expansion around the normal
/// quantile (Abramowitz and Stegun 26.7.5), whose error there is below 1e-7.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
        2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
        2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
    ];
    assert!(df >= 1, "a t quantile needs at least one degree of freedom");
    if df <= TABLE.len() {
        return TABLE[df - 1];
    }
    let z = 1.959_963_984_540_054_f64;
    let n = df as f64;
    let g1 = (z.powi(3) + z) / 4.0;
    let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
    let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
    let g4 = (79.0 * z.powi(9) + 776.0 * z.powi(7) + 1482.0 * z.powi(5) - 1920.0 * z.powi(3) - 945.0 * z)
        / 92160.0;
    z + g1 / n + g2 / n.powi(2) + g3 / n.powi(3) + g4 / n.powi(4)
}

/// `value / base`: exactly 1 when the two are equal (a baseline against itself, or two
/// zeros), and `None` when `base` is zero and `value` is not.
pub fn ratio(value: f64, base: f64) -> Option<f64> {
    if value == base {
        Some(1.0)
    } else if base == 0.0 {
        None
    } else {
        Some(value / base)
    }
}

/// `--baseline KEY=VALUE`, checked against a sweep's axes.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Baseline {
    /// The varied key.
    pub key: String,
    /// The value, as the sweep's axis lists it.
    pub value: Value,
    axis_idx: usize,
    value_idx: usize,
    /// Values on each axis, to take variant indices apart.
    axis_sizes: Vec<usize>,
}

impl Baseline {
    /// Parses `arg` against `axes` (each axis's key and values, first varying slowest):
    /// KEY must be a varied key and VALUE one of its values, written as for `--vary`.
    pub fn parse(arg: &str, axes: &[(&str, &[Value])]) -> Result<Baseline> {
        let keys: Vec<&str> = axes.iter().map(|(key, _)| *key).collect();
        let Some((key, text)) = arg.split_once('=') else {
            bail!(
                "--baseline {arg}: expected KEY=VALUE with KEY one of the varied keys ({})",
                keys.join(", ")
            );
        };
        let key = key.trim();
        let Some(axis_idx) = keys.iter().position(|varied| *varied == key) else {
            bail!("--baseline {arg}: {key} is not varied; the varied keys are {}", keys.join(", "));
        };
        let edit = Override::parse(&format!("{key}={}", text.trim()))
            .map_err(|message| anyhow!("--baseline {arg}: {message}"))?;
        let value = serde_json::to_value(edit.value()).map_err(|err| anyhow!("--baseline {arg}: {err}"))?;
        let values = axes[axis_idx].1;
        let Some(value_idx) = values.iter().position(|candidate| *candidate == value) else {
            let listed: Vec<String> = values.iter().map(value_text).collect();
            bail!(
                "--baseline {arg}: {} is not a value of {key}; it takes {}",
                text.trim(),
                listed.join(", ")
            );
        };
        Ok(Baseline {
            key: key.to_string(),
            value,
            axis_idx,
            value_idx,
            axis_sizes: axes.iter().map(|(_, values)| values.len()).collect(),
        })
    }

    /// The index of the variant that variant `index` is compared with: the same values on
    /// the other axes, the baseline's value on its own.
    pub fn variant_of(&self, index: usize) -> usize {
        let mut stride = 1;
        for size in &self.axis_sizes[self.axis_idx + 1..] {
            stride *= size;
        }
        let size = self.axis_sizes[self.axis_idx];
        let own_value_idx = (index / stride) % size;
        index - own_value_idx * stride + self.value_idx * stride
    }
}

/// A setting as a person would type it: strings without quotes, anything else as JSON.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One variant's samples: per metric, the value at each seed where it is defined.
#[derive(Clone, Debug)]
pub struct VariantSamples {
    /// The variant's index in the sweep.
    pub index: usize,
    /// Per metric, in the caller's order, the defined values in seed order.
    pub metrics: Vec<Vec<f64>>,
}

impl VariantSamples {
    /// Variant `index`'s samples of each of `metrics` (names [`super::metric`] knows) in
    /// `reports`, its run documents in seed order as JSON.
    pub fn of<'a>(
        index: usize,
        reports: &[serde_json::Value],
        metrics: impl IntoIterator<Item = &'a str>,
    ) -> VariantSamples {
        let metrics = metrics
            .into_iter()
            .map(|name| reports.iter().filter_map(|report| super::metric(report, name)).collect())
            .collect();
        VariantSamples { index, metrics }
    }
}

/// One cell of a comparison: a variant's estimate of one metric and its ratio to the
/// baseline variant's mean.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Compared {
    /// `None` where the metric is undefined at every seed.
    pub estimate: Option<Estimate>,
    /// `None` without a baseline, or where either mean is undefined or the baseline's is
    /// zero and this one is not.
    pub ratio: Option<f64>,
}

/// Compares `variants`, each against its baseline variant when there is a baseline (a
/// baseline variant missing from `variants` leaves the ratios undefined). Returns, per
/// variant in the order given, one cell per metric.
pub fn compare(variants: &[VariantSamples], baseline: Option<&Baseline>) -> Vec<Vec<Compared>> {
    let estimates: Vec<Vec<Option<Estimate>>> = variants
        .iter()
        .map(|variant| variant.metrics.iter().map(|samples| Estimate::of(samples)).collect())
        .collect();
    variants
        .iter()
        .zip(&estimates)
        .map(|(variant, own)| {
            let base: Option<&Vec<Option<Estimate>>> = baseline.and_then(|baseline| {
                let base_index = baseline.variant_of(variant.index);
                let position = variants.iter().position(|other| other.index == base_index)?;
                Some(&estimates[position])
            });
            own.iter()
                .enumerate()
                .map(|(metric_idx, estimate)| {
                    let base_mean = base.and_then(|base| base[metric_idx]).map(|base| base.mean);
                    let ratio = match (estimate, base_mean) {
                        (Some(estimate), Some(base_mean)) => ratio(estimate.mean, base_mean),
                        _ => None,
                    };
                    Compared { estimate: *estimate, ratio }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_interval_is_students_t() {
        assert_eq!(Estimate::of(&[]), None);
        assert_eq!(Estimate::of(&[4.0]), Some(Estimate { n: 1, mean: 4.0, ci95: None }));
        // Mean 2, s = 1, t(0.975, 2) = 4.302653: half-width 4.302653 / √3.
        let estimate = Estimate::of(&[1.0, 2.0, 3.0]).expect("three samples");
        assert_eq!(estimate.mean, 2.0);
        let half_width = estimate.ci95.expect("an interval");
        assert!((half_width - 4.302653 / 3f64.sqrt()).abs() < 1e-12, "{half_width}");
        let same = Estimate::of(&[5.0, 5.0]).expect("two samples");
        assert_eq!(same.ci95, Some(0.0));
        // A constant that sums with rounding: no noise in the mean or the interval.
        assert_eq!(Estimate::of(&[0.1, 0.1, 0.1]), Some(Estimate { n: 3, mean: 0.1, ci95: Some(0.0) }));
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        for (df, published) in [
            (1, 12.706),
            (2, 4.303),
            (9, 2.262),
            (30, 2.042),
            (31, 2.040),
            (40, 2.021),
            (60, 2.000),
            (120, 1.980),
        ] {
            assert!((t_975(df) - published).abs() < 5e-4, "df {df}: {}", t_975(df));
        }
        assert!((t_975(1000) - 1.962_339).abs() < 1e-6);
        // The expansion continues the table smoothly.
        assert!(t_975(30) > t_975(31) && t_975(31) > t_975(32));
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(3.0, 2.0), Some(1.5));
        assert_eq!(ratio(0.0, 0.0), Some(1.0));
        assert_eq!(ratio(1.0, 0.0), None);
        assert_eq!(ratio(0.1 + 0.2, 0.1 + 0.2), Some(1.0));
    }

    fn axes() -> Vec<(String, Vec<Value>)> {
        vec![
            ("swap.page_cluster".to_string(), vec![json!(0), json!(3), json!(5)]),
            ("swap.readahead".to_string(), vec![json!("cluster"), json!("none")]),
        ]
    }

    fn parse(arg: &str) -> Result<Baseline> {
        let axes = axes();
        let borrowed: Vec<(&str, &[Value])> =
            axes.iter().map(|(key, values)| (key.as_str(), values.as_slice())).collect();
        Baseline::parse(arg, &borrowed)
    }

    #[test]
    fn a_baseline_keeps_the_other_axes() {
        // Variants: 0 (0, cluster), 1 (0, none), 2 (3, cluster), 3 (3, none), 4 (5, cluster), 5 (5, none).
        let by_readahead = parse("swap.readahead=none").expect("a varied key and value");
        let bases: Vec<usize> = (0..6).map(|idx| by_readahead.variant_of(idx)).collect();
        assert_eq!(bases, [1, 1, 3, 3, 5, 5]);
        let by_cluster = parse("swap.page_cluster=3").expect("a varied key and value");
        let bases: Vec<usize> = (0..6).map(|idx| by_cluster.variant_of(idx)).collect();
        assert_eq!(bases, [2, 3, 2, 3, 2, 3]);
        assert_eq!(by_cluster.value, json!(3));
    }

    #[test]
    fn a_baseline_must_name_a_varied_key_and_one_of_its_values() {
        let message = |arg: &str| format!("{:#}", parse(arg).expect_err(arg));
        assert_eq!(
            message("swap.page_cluster"),
            "--baseline swap.page_cluster: expected KEY=VALUE with KEY one of the varied keys \
             (swap.page_cluster, swap.readahead)"
        );
        assert_eq!(
            message("memcg.limit=1MiB"),
            "--baseline memcg.limit=1MiB: memcg.limit is not varied; the varied keys are \
             swap.page_cluster, swap.readahead"
        );
        assert_eq!(
            message("swap.page_cluster=4"),
            "--baseline swap.page_cluster=4: 4 is not a value of swap.page_cluster; it takes 0, 3, 5"
        );
        assert_eq!(
            message("swap.readahead=vma"),
            "--baseline swap.readahead=vma: vma is not a value of swap.readahead; it takes cluster, none"
        );
    }

    #[test]
    fn compare_gives_means_intervals_and_ratios_of_means() {
        let baseline = parse("swap.readahead=cluster").expect("valid");
        let variants = vec![
            VariantSamples { index: 0, metrics: vec![vec![10.0, 12.0], vec![]] },
            VariantSamples { index: 1, metrics: vec![vec![22.0, 22.0], vec![1.0, 1.0]] },
        ];
        let cells = compare(&variants, Some(&baseline));
        assert_eq!(cells[0][0].estimate.map(|e| e.mean), Some(11.0));
        assert_eq!(cells[0][0].ratio, Some(1.0));
        assert_eq!(cells[1][0].ratio, Some(2.0));
        assert_eq!(cells[0][1].estimate, None);
        assert_eq!(cells[1][1].ratio, None, "the baseline's metric is undefined");
        // Without its baseline variant (another shard's), a variant has no ratios.
        let cells = compare(&variants[1..], Some(&baseline));
        assert_eq!(cells[0][0].ratio, None);
        assert!(compare(&variants, None).iter().flatten().all(|cell| cell.ratio.is_none()));
    }
}
