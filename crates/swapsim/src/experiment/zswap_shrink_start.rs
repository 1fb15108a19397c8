//! `zswap-shrink-start`: zswap's pool-limit worker before 6.12, in 6.12 to 6.18, and as
//! Takero Funaki's 2024 series proposed it (shrinking from the accept threshold plus 1 %,
//! pausing during disk paging), under `apt update` after a background fill.

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use swapsim_core::config::{CpuCosts, MachineConfig, MemcgConfig};
use swapsim_core::contents::{Compressor, Contents, SizeTable};
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::SimReport;
use swapsim_devices::DeviceConfig;
use swapsim_policies::ZswapWritebackConfig;

use super::support::{
    build_page_cache, mib, mib_size, one_device, outcome_text, round3, run_file, seeds_outcome, Runs,
};
use super::table::{columns, Table};
use super::verdict::{check, Tolerance, Verdict, RATIO_TOLERANCE};
use super::{Experiment, Findings, Info, Row};
use crate::progress::Progress;
use crate::scenario::{ScenarioFile, WorkloadSection, ZswapSection};
use crate::timeline::{TimelineEntry, TimelineOp, When};

pub(super) const EXPERIMENT: Experiment = Experiment {
    info: Info {
        name: "zswap-shrink-start",
        title: "zswap's pool-limit worker before 6.12, in 6.12-6.18, and shrinking from the accept threshold \
                (Takero Funaki, 2024)",
        published: "2 vCPU, 1 GiB VM, 4 GiB swap, zswap lz4, max_pool_percent 20, accept_threshold_percent 50; \
                    apt update ten times in a 60 MiB memory cgroup after about 1.5 GiB of background fill. \
                    6.10-rc4 against the series (global shrinker fixes, shrinking from the accept threshold \
                    plus 1%, writeback paused during page-in/out): elapsed 8.473 -> 4.525 s, pswpin 32,025 -> \
                    3,242. Of the series, 6.12 merged the two fixes only.",
    },
    run,
};

/// A zswap-shrink-start row: one writeback trigger, means over its seeds.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ShrinkRow {
    /// "pre-6.12", "kernel" (6.12 to 6.18) or "proactive" (the posted series).
    pub writeback: &'static str,
    /// Means over the seeds.
    #[serde(flatten)]
    pub figures: ShrinkFigures,
    /// "completed" when every run ran to its end, else how each other one ended.
    pub outcome: String,
    /// Each seed's own figures.
    pub runs: Vec<ShrinkRun>,
}

/// One seed of a row.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ShrinkRun {
    /// The run's root seed.
    pub seed: u64,
    /// The run's figures.
    #[serde(flatten)]
    pub figures: ShrinkFigures,
    /// How the run ended.
    pub outcome: String,
}

/// What the measured `apt update` runs do (the second to the tenth).
#[derive(Clone, Copy, Debug, Default, Serialize)]
#[non_exhaustive]
pub struct ShrinkFigures {
    /// Their elapsed time, simulated seconds.
    pub elapsed_s: f64,
    /// Pages read from the swap device (`pswpin`).
    pub pswpin: u64,
    /// Pages written to the swap device (`pswpout`, writebacks included).
    pub pswpout: u64,
    /// Pages loaded from zswap (`zswpin`).
    pub zswpin: u64,
    /// Pages stored in zswap (`zswpout`).
    pub zswpout: u64,
    /// Pages zswap wrote back (`zswpwb`).
    pub zswpwb: u64,
}

/// The rows' triggers, the baseline first.
const TRIGGERS: [(&str, ZswapWritebackConfig); 3] = [
    ("pre-6.12", ZswapWritebackConfig::Pre612),
    ("kernel", ZswapWritebackConfig::Kernel),
    ("proactive", ZswapWritebackConfig::Proactive),
];

/// Seeds per row.
const SEEDS: [u64; 3] = [1, 2, 3];

/// The shape, and why so.
///
/// The machine is the published one: 1 GiB of RAM, two CPUs, 4 GiB of swap (the
/// validation machine's virtio disk and CPU costs), zswap with lz4, `max_pool_percent` 20
/// and `accept_threshold_percent` 50, its memory-pressure shrinker off (the default). Pages
/// compress to 3,200 bytes, the published pool's own ratio (201,539,584 bytes for 63,138
/// pages before the series; 3,160 bytes a page after it).
///
/// The model has one memory cgroup, so the background fill and `apt` share the 60 MiB
/// cgroup, and one process plays both: a hot/cold generator over 1,636 MiB whose first
/// 100 MiB are apt's data (hot, every pass's accesses go there) and whose rest, 1.5 GiB,
/// is the fill, written once and never touched again. Ten passes of twice the hot pages'
/// number of random accesses stand for the ten `apt update` runs; apt's own memory was
/// not published, and 100 MiB (one and two-thirds the limit) is what the published
/// post-series zswap-ins (296,151 pages, 116 MiB a run) suggest. The cgroup is v1, so
/// that zswap's pool is charged to no group: in the published set-up most of the pool
/// held the background's pages, charged to other cgroups than apt's 60 MiB.
///
/// Because apt's data is written before the fill, the fill pushes it out, and the first
/// pass reads it back from wherever the fill left it; a real `apt update` starts with fresh
/// memory. So the first pass is set aside: elapsed time runs from the end of the first
/// pass to the end, and the counters are those of the whole run less those of the same
/// seed's run of the fill and one pass. The ten runs' figures are thus compared through
/// ratios to the baseline's, over nine passes.
///
/// `scale` shrinks the machine, cgroup, region and swap together.
struct ShrinkShape {
    machine_mib: u64,
    memcg_mib: u64,
    region_mib: u64,
    hot_mib: u64,
    swap_mib: u64,
}

impl ShrinkShape {
    fn new(scale: f64) -> ShrinkShape {
        ShrinkShape {
            machine_mib: mib(1024.0, scale, 64.0),
            memcg_mib: mib(60.0, scale, 4.0),
            region_mib: mib(1636.0, scale, 96.0),
            hot_mib: mib(100.0, scale, 6.0),
            swap_mib: mib(4096.0, scale, 256.0),
        }
    }

    fn region_pages(&self) -> u64 {
        self.region_mib * 256
    }

    fn pass_accesses(&self) -> u64 {
        2 * self.hot_mib * 256
    }

    /// The scenario: `passes` apt runs after the fill, with marks at the end of the first
    /// pass and at the end of the workload.
    fn file(&self, trigger: ZswapWritebackConfig, seed: u64, passes: u32) -> ScenarioFile {
        let mut file = ScenarioFile {
            seed,
            machine: MachineConfig {
                memory: mib_size(self.machine_mib),
                cpus: 2,
                ..MachineConfig::default()
            },
            memcg: MemcgConfig {
                limit: Some(mib_size(self.memcg_mib)),
                version: 1,
                page_cache: build_page_cache(),
                ..MemcgConfig::default()
            },
            zswap: ZswapSection {
                enabled: true,
                compressor: Compressor::Lz4,
                max_pool_percent: Some(20),
                accept_threshold_percent: Some(50),
                writeback: trigger.into(),
                ..ZswapSection::default()
            },
            cpu: CpuCosts::this_vm(),
            workload: WorkloadSection {
                generator: Some(GeneratorConfig {
                    passes,
                    pass_accesses: Some(self.pass_accesses()),
                    hot_fraction: self.hot_mib as f64 / self.region_mib as f64,
                    hot_access_fraction: 1.0,
                    scatter: false,
                    write_fraction: 0.3,
                    ..GeneratorConfig::new(Pattern::Hotcold, mib_size(self.region_mib))
                }),
                contents: Some(Contents::Sizes(SizeTable::new(vec![(3200, 1)]))),
                ..WorkloadSection::default()
            },
            ..ScenarioFile::default()
        };
        file.swap.devices = one_device("vda", self.swap_mib, DeviceConfig::preset("this-vm"));
        let first_pass_end = self.region_pages() + self.pass_accesses();
        file.timeline = vec![
            TimelineEntry::new(
                When { after_accesses: Some(first_pass_end), ..When::default() },
                TimelineOp::Mark { label: "first-pass-end".into() },
            ),
            TimelineEntry::new(
                When { at: Some("workload-end".into()), ..When::default() },
                TimelineOp::Mark { label: "end".into() },
            ),
        ];
        file
    }
}

fn run(scale: f64, progress: &dyn Progress) -> Result<Findings> {
    let shape = ShrinkShape::new(scale);
    let variants: Vec<(usize, u64, u32)> = (0..TRIGGERS.len())
        .flat_map(|t| SEEDS.iter().flat_map(move |&seed| [(t, seed, 10), (t, seed, 1)]))
        .collect();
    let runs = Runs::new(progress, variants.len() as u64);
    let reports: Vec<Result<SimReport>> = variants
        .par_iter()
        .map(|&(t, seed, passes)| {
            let (name, trigger) = TRIGGERS[t];
            let label = format!("zswap-shrink-start/{name}/passes={passes}/seed={seed}");
            run_file(&label, shape.file(trigger, seed, passes), &runs)
        })
        .collect();
    let reports: Vec<SimReport> = reports.into_iter().collect::<Result<_>>()?;
    let rows: Vec<ShrinkRow> = TRIGGERS
        .iter()
        .enumerate()
        .map(|(t, &(name, _))| {
            let mine: Vec<ShrinkRun> = SEEDS
                .iter()
                .map(|&seed| {
                    let find = |passes: u32| {
                        let i = variants.iter().position(|&v| v == (t, seed, passes)).expect("a variant ran");
                        &reports[i]
                    };
                    shrink_run(seed, find(10), find(1))
                })
                .collect::<Result<_>>()?;
            Ok(shrink_row(name, mine))
        })
        .collect::<Result<_>>()?;
    Ok(Findings {
        setup: format!(
            "a {} MiB machine with 2 CPUs, {} MiB swap on the this-vm disk and this machine's CPU costs; zswap \
             with lz4, max_pool_percent 20, accept_threshold_percent 50, shrinker off, pages compressing to \
             3,200 bytes; one process in a {} MiB cgroup v1 memcg writes {} MiB (the first {} MiB apt's data, \
             the rest the background fill), then makes ten passes of {} random accesses over apt's data (the \
             ten apt updates). Measured: passes 2 to 10; rows the mean of seeds {}",
            shape.machine_mib,
            shape.swap_mib,
            shape.memcg_mib,
            shape.region_mib,
            shape.hot_mib,
            shape.pass_accesses(),
            SEEDS.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
        ),
        table: table(&rows),
        verdict: verdict(&rows),
        rows: rows.into_iter().map(Row::Shrink).collect(),
    })
}

/// One seed's figures: the full run's, less the fill-and-one-pass run's counters; the time
/// between the full run's two marks.
fn shrink_run(seed: u64, full: &SimReport, one_pass: &SimReport) -> Result<ShrinkRun> {
    let mark = |label: &str| {
        full.operations
            .iter()
            .find(|op| op.label.as_deref() == Some(label))
            .map(|op| op.start_s)
            .with_context(|| format!("the run has no mark {label}"))
    };
    let elapsed_s = mark("end")? - mark("first-pass-end")?;
    let (a, b) = (&full.vmstat, &one_pass.vmstat);
    let figures = ShrinkFigures {
        elapsed_s: round3(elapsed_s),
        pswpin: a.pswpin.saturating_sub(b.pswpin),
        pswpout: a.pswpout.saturating_sub(b.pswpout),
        zswpin: a.zswpin.saturating_sub(b.zswpin),
        zswpout: a.zswpout.saturating_sub(b.zswpout),
        zswpwb: a.zswpwb.saturating_sub(b.zswpwb),
    };
    Ok(ShrinkRun { seed, figures, outcome: outcome_text(&full.outcome) })
}

/// A row from its seeds: means.
fn shrink_row(writeback: &'static str, runs: Vec<ShrinkRun>) -> ShrinkRow {
    let n = runs.len().max(1) as f64;
    let mean = |f: fn(&ShrinkFigures) -> u64| {
        (runs.iter().map(|r| f(&r.figures)).sum::<u64>() as f64 / n).round() as u64
    };
    let figures = ShrinkFigures {
        elapsed_s: round3(runs.iter().map(|r| r.figures.elapsed_s).sum::<f64>() / n),
        pswpin: mean(|f| f.pswpin),
        pswpout: mean(|f| f.pswpout),
        zswpin: mean(|f| f.zswpin),
        zswpout: mean(|f| f.zswpout),
        zswpwb: mean(|f| f.zswpwb),
    };
    let outcome = seeds_outcome(runs.iter().map(|r| (r.seed, r.outcome.as_str())));
    ShrinkRow { writeback, figures, outcome, runs }
}

fn table(rows: &[ShrinkRow]) -> Table {
    let cells = rows
        .iter()
        .map(|r| {
            let f = &r.figures;
            vec![
                r.writeback.to_string(),
                format!("{:.3}", f.elapsed_s),
                f.pswpin.to_string(),
                f.pswpout.to_string(),
                f.zswpin.to_string(),
                f.zswpout.to_string(),
                f.zswpwb.to_string(),
                r.outcome.clone(),
            ]
        })
        .collect();
    Table {
        columns: columns(&[
            ("writeback", 10),
            ("elapsed (s)", 11),
            ("pswpin", 9),
            ("pswpout", 9),
            ("zswpin", 9),
            ("zswpout", 9),
            ("zswpwb", 9),
        ]),
        remark: Some("outcome"),
        rows: cells,
        note: Some("(passes 2 to 10 of the ten apt updates; means over the seeds)".to_string()),
        ..Table::default()
    }
}

/// Published: before and after the series.
const PUBLISHED_ELAPSED_S: (f64, f64) = (8.473, 4.525);
const PUBLISHED_PSWPIN: (f64, f64) = (32_025.0, 3_242.0);

/// The verdict: the posted series ("proactive") against the kernel before 6.12, the
/// comparison that was published: elapsed time and disk swap-ins as fractions of the
/// baseline's, each within ±25 % of the published fraction ([`RATIO_TOLERANCE`]). The
/// fractions are of sums over the seeds. The direction asks for a shorter elapsed time and
/// fewer disk swap-ins, every run completed.
///
/// 6.12 to 6.18 ("kernel") merged only the series' two fixes, and the series' author
/// expected them alone to bring little; nothing was published for them, so they are not
/// judged: their fractions are reported, with the per-seed ratio of their elapsed time to
/// the series', called not distinguishable when those ratios fall on both sides of 1.
fn verdict(rows: &[ShrinkRow]) -> Verdict {
    let row = |name: &str| rows.iter().find(|r| r.writeback == name).expect("every trigger ran");
    let sum =
        |name: &str, f: fn(&ShrinkFigures) -> f64| row(name).runs.iter().map(|r| f(&r.figures)).sum::<f64>();
    let fraction = |name: &str, f: fn(&ShrinkFigures) -> f64| sum(name, f) / sum("pre-6.12", f);
    let elapsed = fraction("proactive", |f| f.elapsed_s);
    let pswpin = fraction("proactive", |f| f.pswpin as f64);
    let kernel_elapsed = fraction("kernel", |f| f.elapsed_s);
    let kernel_pswpin = fraction("kernel", |f| f.pswpin as f64);
    let per_seed: Vec<f64> = row("kernel")
        .runs
        .iter()
        .zip(&row("proactive").runs)
        .map(|(k, p)| k.figures.elapsed_s / p.figures.elapsed_s)
        .collect();
    let (lo, hi) =
        per_seed.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let distinguishable = (lo < 1.0 && hi < 1.0) || (lo > 1.0 && hi > 1.0);
    let published_elapsed = PUBLISHED_ELAPSED_S.1 / PUBLISHED_ELAPSED_S.0;
    let published_pswpin = PUBLISHED_PSWPIN.1 / PUBLISHED_PSWPIN.0;
    let checks = vec![
        check(
            "proactive",
            "elapsed time as a fraction of pre-6.12's",
            elapsed,
            published_elapsed,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
        check(
            "proactive",
            "pswpin as a fraction of pre-6.12's",
            pswpin,
            published_pswpin,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
    ];
    let completed = rows.iter().all(|r| r.outcome == "completed");
    let direction_matches = elapsed < 1.0 && pswpin < 1.0 && completed;
    let pre = &row("pre-6.12").figures;
    let text = format!(
        "the series leaves {elapsed:.2} of the pre-6.12 elapsed time (published {published_elapsed:.2}) and \
         {pswpin:.3} of its disk swap-ins (published {published_pswpin:.3}); before 6.12 zswap wrote back {} \
         pages and stored {} in the measured passes, its pool held full by the hysteresis; not judged, 6.12-6.18 \
         (the two merged fixes) leaves {kernel_elapsed:.2} of the elapsed time and {kernel_pswpin:.3} of the \
         disk swap-ins, its elapsed time {lo:.3}-{hi:.3} of the series' seed by seed ({}); {}",
        pre.zswpwb,
        pre.zswpout,
        if distinguishable { "distinguishable" } else { "not distinguishable" },
        if completed { "every run completed".to_string() } else { "not every run completed".to_string() },
    );
    let details = vec![
        ("elapsed_kernel_over_pre".into(), round3(kernel_elapsed)),
        ("pswpin_kernel_over_pre".into(), round3(kernel_pswpin)),
        ("elapsed_kernel_over_proactive_min".into(), round3(lo)),
        ("elapsed_kernel_over_proactive_max".into(), round3(hi)),
    ];
    Verdict {
        metric: "elapsed time, proactive / pre-6.12".into(),
        simulated: round3(elapsed),
        published: round3(published_elapsed),
        direction_matches,
        reproduced: checks.iter().all(|c| c.reproduced),
        checks,
        text,
        details,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::verdict::check_verdict;
    use expect_test::expect;

    /// A row of one seed with this elapsed time and these disk swap-ins.
    fn row(writeback: &'static str, elapsed_s: f64, pswpin: u64) -> ShrinkRow {
        let figures = ShrinkFigures { elapsed_s, pswpin, ..ShrinkFigures::default() };
        shrink_row(writeback, vec![ShrinkRun { seed: 1, figures, outcome: "completed".into() }])
    }

    #[test]
    fn the_published_figures_pass_and_the_merged_fixes_are_reported_not_judged() {
        let rows =
            vec![row("pre-6.12", 8.473, 32_025), row("kernel", 8.0, 30_000), row("proactive", 4.525, 3_242)];
        let verdict = super::verdict(&rows);
        check_verdict(
            &verdict,
            expect![[r#"
                proactive: reproduced: elapsed time as a fraction of pre-6.12's 0.53, published 0.53 (tolerance ±25 %)
                proactive: reproduced: pswpin as a fraction of pre-6.12's 0.10, published 0.10 (tolerance ±25 %)
                reproduced: true
            "#]],
        );
        assert!(verdict.direction_matches);
        assert!(verdict.text.contains("(distinguishable)"), "{}", verdict.text);
        // A series no faster than the baseline moves the other way.
        let rows =
            vec![row("pre-6.12", 4.0, 32_025), row("kernel", 4.0, 30_000), row("proactive", 4.4, 3_242)];
        assert!(!super::verdict(&rows).direction_matches);
    }
}
