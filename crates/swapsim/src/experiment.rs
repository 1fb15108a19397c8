//! Named experiments: published kernel studies that motivated swapsim's models, rebuilt
//! as scenarios and compared with their published numbers.
//!
//! Each experiment builds its scenarios as typed values and runs them through the same
//! validation path as a scenario file, so every figure it reports can be reproduced by
//! hand with `swapsim run`. Variants run in parallel; results are collected in variant
//! order, so the result does not depend on the number of threads. `scale` shrinks memory
//! and swap sizes for quick runs (tests use it); the published comparison is meaningful
//! at scale 1.
//!
//! The verdict (`experiment/verdict.rs`) says whether the simulation moves the way the
//! publication did, then checks each published figure it can within a stated tolerance;
//! only a figure within it is called reproduced.

use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use swapsim_core::config::{BlockConfig, CpuCosts, LruModel, MachineConfig, MemcgConfig, SwapoffHits};
use swapsim_core::contents::{Compressor, Contents};
use swapsim_core::gen::{GeneratorConfig, JobsConfig, Pattern};
use swapsim_core::report::Outcome as RunOutcome;
use swapsim_core::thp::ThpSizeEnabled;
use swapsim_core::{ByteSize, SimReport};
use swapsim_devices::DeviceConfig;
use swapsim_policies::{ReadaheadConfig, SwapinConfig, ZswapProtectionConfig};

use crate::progress::Progress;
use crate::scenario::{
    DeviceSection, Prepared, Scenario, ScenarioFile, ThpSection, WorkloadSection, ZswapSection,
};
use crate::shared_start::SharedStart;
use crate::timeline::{TimelineEntry, TimelineOp, When};

mod verdict;

/// An experiment's name, title and what was published.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Info {
    /// The name `run` takes, e.g. "swapoff-readahead".
    pub name: &'static str,
    /// What the experiment compares, and whose study it is.
    pub title: &'static str,
    /// The published setup and figures.
    pub published: &'static str,
}

/// Every experiment, in the order `swapsim experiment list` prints them.
pub fn list() -> &'static [Info] {
    &EXPERIMENTS
}

/// All experiments, in the order `experiment list` prints them.
const EXPERIMENTS: [Info; 5] = [
    Info {
        name: "swapoff-readahead",
        title: "swapoff time against page-cluster under four readahead policies (Andrea Righi, 2020)",
        published: SWAPOFF_PUBLISHED,
    },
    Info {
        name: "plug-merge",
        title: "plugging around swap readahead on a shared SAN (Christian Ehrhardt, 2012)",
        published: "KVM host overcommitted 1.5x, swapping over 16 SAN disks. One disk without plug: 560,888 reads \
                    queued, 544,701 dispatches, 16,187 merges, 2,243 MiB; with plug: 734,315 queued, 214,972 \
                    dispatches, 519,343 merges, 2,937 MiB; swap-in throughput +10% to +40%.",
    },
    Info {
        name: "mthp-swapin",
        title: "large folio (16 kB mTHP) swap-in on zram, with and without refault throttling (Barry Song, 2025)",
        published: "arm64 kernel build -j10 in a 1 GiB memcg, 16 kB mTHP always, other sizes off, zram. Classic \
                    LRU, no throttle: 6m27.9s, pswpin 474,036, pswpout 1,434,853, 16kB swpout 331,755, 16kB swpin \
                    106,333. Classic, throttle: 6m27.2s, pswpin 294,050, pswpout 1,265,556, 16kB swpout 288,163, \
                    16kB swpin 22,899 (4.6x fewer large swap-ins, 38% fewer pages swapped in). MGLRU, no \
                    throttle: 6m44.6s, pswpin 1,286,081, pswpout 3,147,936, 16kB swpout 714,580, 16kB swpin \
                    286,881 (2.7x classic's swap-ins).",
    },
    Info {
        name: "zswap-second-chance",
        title: "zswap shrinker protection, decaying protected count against second chance, in a kernel build \
                (Nhat Pham, 2024)",
        published: "Kernel build in a 2 GiB memory cgroup (cgroup v2), swap on a disk, zswap with the \
                    memory-pressure shrinker on, before and after the 6.12 rework of its protection. Decay: \
                    pswpin 227,300, real time 263.89 s; second chance: pswpin 94,663 (-58%), real time 244.85 s \
                    (-7.2%), each the average of 5 runs. The series' cover letter, from another run: 64.12% fewer \
                    swap-ins, 10.32% less build time.",
    },
    Info {
        name: "hibernate-reclaim",
        title: "hibernation and resume with and without opportunistic reclaim beforehand (Andrea Righi, 2020)",
        published: "8 GB KVM guest, 100 MB/s disk, 8 GB swap file, 85% of memory allocated, then 60 s almost \
                    idle, then hibernate and resume; mean of 10 runs. Linux 5.7 vanilla / with the mm_reclaim \
                    RFC: image_size default: hibernate 51.56 s / 4.19 s, resume 26.34 s / 5.01 s; \
                    image_size=0: hibernate 73.22 s / 5.36 s, resume 5.32 s / 5.26 s.",
    },
];

/// What the swapoff-readahead study published (both starting states compare with it).
const SWAPOFF_PUBLISHED: &str =
    "8 GiB guest, 16 GiB swap file on virtio, 85% of memory allocated and forced out \
    to swap, then swapoff timed. Scaling readahead (pre-5.8 accounting): 21.5-28.3 s at every page-cluster \
    (22.09 s at 3). Fixed: 21.25, 12.66, 8.77, 7.60, 7.75, 8.32, 9.40, 8.93 s at page-cluster 1..8. \
    After commit ebc5951eea49 credited swapoff's readahead hits, scaling at page-cluster 3 took 12.19 s.";

/// One row of an experiment's table.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Row {
    /// A row of `swapoff-readahead`.
    Swapoff(SwapoffRow),
    /// A row of `plug-merge`.
    Plug(PlugRow),
    /// A row of `mthp-swapin`.
    Mthp(MthpRow),
    /// A row of `zswap-second-chance`.
    Zswap(ZswapRow),
    /// A row of `hibernate-reclaim`.
    Hibernate(HibernateRow),
}

/// A hibernate-reclaim row: one kernel and one `image_size`.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct HibernateRow {
    /// "vanilla", or "mm_reclaim" (mm-reclaim-run 0 while idle before hibernating).
    pub kernel: &'static str,
    /// `/sys/power/image_size`: "default" (2/5 of RAM) or "0".
    pub image_size: &'static str,
    /// Simulated hibernate time, in seconds: freeze to power-off.
    pub hibernate_s: f64,
    /// Simulated resume time, in seconds: power-on to thawed tasks.
    pub resume_s: f64,
    /// Of the hibernate time, the part spent shrinking memory.
    pub shrink_s: f64,
    /// Pages hibernation reclaimed to make the image fit.
    pub reclaimed_pages: u64,
    /// Pages in the image.
    pub image_pages: u64,
    /// MiB the image took on the device (compressed, map pages included).
    pub image_mib: f64,
    /// The opportunistic reclaim before hibernation, in seconds (0 for vanilla).
    pub pre_reclaim_s: f64,
    /// Pages it reclaimed.
    pub pre_reclaimed_pages: u64,
    /// After resume, `mm-reclaim-release 0` pulling everything back in, in seconds (0 for
    /// vanilla, which faults pages back on demand).
    pub release_s: f64,
}

/// A swapoff-readahead row.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct SwapoffRow {
    /// The column: "scaling-pre-5.8", "scaling", "fixed" or "vma".
    pub policy: &'static str,
    /// `vm.page-cluster`.
    pub page_cluster: u32,
    /// Simulated swapoff time, in seconds.
    pub swapoff_s: f64,
    /// Pages swapoff read in.
    pub pswpin: u64,
    /// Read requests swapoff issued.
    pub read_requests: u64,
    /// Readahead pages read during swapoff.
    pub swap_ra: u64,
    /// Readahead pages swapoff found already read.
    pub swap_ra_hit: u64,
}

/// A plug-merge row: one device, plug on or off.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct PlugRow {
    /// Whether plugging was on.
    pub plug: bool,
    /// The device the row describes (the first of the 16).
    pub device: String,
    /// Read bios queued.
    pub reads_queued: u64,
    /// Read requests dispatched.
    pub read_dispatches: u64,
    /// Read bios merged into requests.
    pub read_merges: u64,
    /// Read requests completed.
    pub reads_completed: u64,
    /// Plug flushes that dispatched something.
    pub io_unplugs: u64,
    /// MiB read.
    pub read_mib: f64,
    /// Read dispatches per MiB read.
    pub dispatches_per_mib: f64,
    /// MiB read per simulated second.
    pub throughput_mib_s: f64,
}

/// An mthp-swapin row: one swap-in size policy.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct MthpRow {
    /// The LRU: "classic" or "mglru".
    pub lru: &'static str,
    /// The swap-in size policy: "order0", "kernel" or "throttled".
    pub swapin: &'static str,
    /// Pages swapped in (`pswpin`).
    pub pswpin: u64,
    /// Pages swapped out (`pswpout`).
    pub pswpout: u64,
    /// 16 kB folios swapped out whole (`hugepages-16kB/stats/swpout`).
    pub swpout_16k: u64,
    /// 16 kB folios swapped in whole (`hugepages-16kB/stats/swpin`).
    pub swpin_16k: u64,
    /// 16 kB swap-ins that fell back to single pages because the charge was refused
    /// (`hugepages-16kB/stats/swpin_fallback_charge`).
    pub swpin_fallback_charge_16k: u64,
    /// The build's wall time: first job's start to last job's end, in simulated seconds.
    pub wall_s: f64,
    /// Jobs that ran to their end.
    pub jobs_exited: u64,
    /// Jobs the OOM killer took.
    pub jobs_oom_killed: u64,
    /// How the run ended: "completed", or "oom-killed <task> at <t> s", ...
    pub outcome: String,
}

/// A zswap-second-chance row: one zswap setting, averaged over its builds.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ZswapRow {
    /// The setting: "off" (no zswap), "no-shrinker" (zswap, shrinker off), "decay" or
    /// "second-chance" (zswap with the shrinker and that protection).
    pub zswap: &'static str,
    /// Means over the builds that finished; OOM kills summed over all builds.
    #[serde(flatten)]
    pub figures: ZswapFigures,
    /// Builds whose run finished, and so count in the means.
    pub builds_finished: u64,
    /// "completed" when every build ran to its end, else how each other one ended.
    pub outcome: String,
    /// Each build's own figures, in seed order.
    pub builds: Vec<ZswapBuild>,
}

/// One build (one seed) of a zswap-second-chance row.
#[derive(Clone, Debug, Default, Serialize)]
#[non_exhaustive]
pub struct ZswapBuild {
    /// The run's root seed.
    pub seed: u64,
    /// Whether the run finished (an OOM kill is a finished run); the figures of one that
    /// did not are 0.
    pub finished: bool,
    /// The run's figures.
    #[serde(flatten)]
    pub figures: ZswapFigures,
    /// How the run ended: "completed", "oom-killed <task> at <t> s", "simulator panic: ...".
    pub outcome: String,
}

/// What a zswap-second-chance build measures.
#[derive(Clone, Copy, Debug, Default, Serialize)]
#[non_exhaustive]
pub struct ZswapFigures {
    /// Pages read from the swap device (`pswpin`).
    pub pswpin: u64,
    /// Pages loaded from zswap (`zswpin`).
    pub zswpin: u64,
    /// Pages stored in zswap (`zswpout`).
    pub zswpout: u64,
    /// Pages zswap wrote back to the swap device (`zswpwb`).
    pub zswpwb: u64,
    /// Pages written to the swap device (`pswpout`, writebacks included).
    pub pswpout: u64,
    /// Entries zswap's writers visited (rotated or written back).
    pub shrinker_scanned: u64,
    /// The build's wall time, first job's start to last job's end, in simulated seconds.
    pub wall_s: f64,
    /// Jobs the OOM killer took.
    pub jobs_oom_killed: u64,
}

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

/// A finished experiment.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The experiment's name.
    pub experiment: &'static str,
    /// Its title.
    pub title: &'static str,
    /// The simulated setup, in words.
    pub setup: String,
    /// The published setup and figures.
    pub published: &'static str,
    /// The scale it ran at.
    pub scale: f64,
    /// The table, laid out like the publication's.
    pub rows: Vec<Row>,
    /// The comparison with the publication.
    pub verdict: Verdict,
}

/// Runs experiment `name` at `scale` (0 < scale <= 1; 1 is as published).
pub fn run(name: &str, scale: f64) -> Result<Outcome> {
    run_with_progress(name, scale, &())
}

/// [`run`], telling `progress` how many of the experiment's runs have finished.
pub fn run_with_progress(name: &str, scale: f64, progress: &dyn Progress) -> Result<Outcome> {
    if !(scale > 0.0 && scale <= 1.0) {
        bail!("--scale: {scale} is outside (0, 1]");
    }
    match name {
        "swapoff-readahead" => swapoff_readahead(scale, progress),
        "plug-merge" => plug_merge(scale, progress),
        "mthp-swapin" => mthp_swapin(scale, progress),
        "zswap-second-chance" => zswap_second_chance(scale, progress),
        "hibernate-reclaim" => hibernate_reclaim(scale, progress),
        other => {
            let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
            bail!("unknown experiment \"{other}\" (expected one of {})", names.join(", "))
        }
    }
}

/// Counts an experiment's finished runs for its [`Progress`].
struct Runs<'a> {
    progress: &'a dyn Progress,
    n_done: AtomicU64,
    n_total: u64,
}

impl<'a> Runs<'a> {
    fn new(progress: &'a dyn Progress, n_total: u64) -> Runs<'a> {
        progress.advanced(0, Some(n_total));
        Runs { progress, n_done: AtomicU64::new(0), n_total }
    }

    /// Counts one more run finished.
    fn one_done(&self) {
        let n_done = self.n_done.fetch_add(1, Ordering::Relaxed) + 1;
        self.progress.advanced(n_done, Some(self.n_total));
    }
}

/// Validates a scenario built as a typed value and runs it ([`guarded`]).
fn run_file(label: &str, file: ScenarioFile, runs: &Runs<'_>) -> Result<SimReport> {
    let prepared = Scenario::from_file(file, label, "").prepare()?;
    let res = guarded(label, || prepared.run());
    runs.one_done();
    res
}

/// Runs scenarios that differ only in their swap-in knobs (page-cluster, swapoff's hit
/// accounting, the readahead and swap-in size policies) and swap nothing in before their
/// timeline operation `op`: the first is simulated until that operation is due, then
/// forked once per scenario and given its knobs ([`Simulation::retune_swapin`], which
/// refuses if anything was swapped in or the configurations differ otherwise). Each report
/// is the one a run of its scenario alone gives; a test holds the two equal.
fn run_forked(
    labels: &[String],
    files: Vec<ScenarioFile>,
    op: usize,
    runs: &Runs<'_>,
) -> Result<Vec<SimReport>> {
    let prepared: Vec<Prepared> = files
        .into_iter()
        .zip(labels)
        .map(|(file, label)| Scenario::from_file(file, label.as_str(), "").prepare())
        .collect::<Result<_>>()?;
    let first = prepared.first().context("no scenario to run")?;
    let start = guarded(&labels[0], || {
        SharedStart::run(first, op)?.with_context(|| {
            format!("the run ended or swapped a page in before its timeline operation {}", op + 1)
        })
    })?;
    prepared
        .par_iter()
        .zip(labels)
        .map(|(prepared, label)| {
            let res = guarded(label, || start.finish(prepared));
            runs.one_done();
            res
        })
        .collect()
}

/// Runs `f` for the scenario `label`. A panic inside the simulator comes back as a
/// [`SimulatorPanic`] error naming the scenario, rather than ending the whole experiment;
/// the default panic hook has already printed it.
fn guarded<T>(label: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(res) => res.with_context(|| format!("experiment scenario {label}")),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(anyhow::Error::new(SimulatorPanic(message)).context(format!("experiment scenario {label}")))
        }
    }
}

/// The simulator panicked: an internal error of the model, not of the scenario.
#[derive(Debug)]
struct SimulatorPanic(String);

impl std::fmt::Display for SimulatorPanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "simulator panic: {}", self.0)
    }
}

impl std::error::Error for SimulatorPanic {}

/// A size of `mib` MiB.
fn mib_size(mib: u64) -> ByteSize {
    ByteSize(mib << 20)
}

/// Sizes in MiB scaled down, at least `min`, rounded to whole MiB.
fn mib(full: f64, scale: f64, min: f64) -> u64 {
    (full * scale).max(min).round() as u64
}

fn swapoff_readahead(scale: f64, progress: &dyn Progress) -> Result<Outcome> {
    let ram = mib(8192.0, scale, 64.0);
    let swap = mib(16384.0, scale, 128.0);
    // 85% of memory, held by four processes that wrote their memory at the same time, so
    // that their pages interleave on the LRU and in swap as a real guest's do.
    let n_procs = 4u64;
    let per_proc = (ram as f64 * 0.85 / n_procs as f64).round() as u64;
    let filled = per_proc * n_procs;
    // (column name, readahead policy, swapoff hit accounting)
    let policies: [(&'static str, ReadaheadConfig, SwapoffHits); 4] = [
        ("scaling-pre-5.8", ReadaheadConfig::Cluster, SwapoffHits::Ignored),
        ("scaling", ReadaheadConfig::Cluster, SwapoffHits::Credited),
        ("fixed", ReadaheadConfig::Fixed, SwapoffHits::Credited),
        ("vma", ReadaheadConfig::Vma, SwapoffHits::Credited),
    ];
    let variants: Vec<(usize, u32)> =
        (1..=8).flat_map(|pc| (0..policies.len()).map(move |p| (p, pc))).collect();
    let runs = Runs::new(progress, variants.len() as u64);
    let info = &EXPERIMENTS[0];
    // Every variant fills, hibernates and resumes alike (none swaps a page in before
    // swapoff, so the knobs that differ are not read until then): that beginning is
    // simulated once and forked at the swapoff.
    let labels: Vec<String> = variants
        .iter()
        .map(|&(p, pc)| format!("{}/{}/page_cluster={pc}", info.name, policies[p].0))
        .collect();
    let files: Vec<ScenarioFile> = variants
        .iter()
        .map(|&(p, pc)| {
            swapoff_file(Shape { ram, swap, per_proc, n_procs }, policies[p].1, policies[p].2, pc)
        })
        .collect();
    let reports = run_forked(&labels, files, SWAPOFF_OP, &runs)?;
    let rows: Vec<Result<SwapoffRow>> = variants
        .iter()
        .zip(reports)
        .map(|(&(p, pc), report)| {
            let column = policies[p].0;
            let op = report.operations.iter().find(|o| o.op == "swapoff").context("swapoff did not run")?;
            Ok(SwapoffRow {
                policy: column,
                page_cluster: pc,
                swapoff_s: round3(op.duration_s.context("swapoff did not finish")?),
                pswpin: op.pswpin,
                read_requests: op.read_requests,
                swap_ra: op.swap_ra,
                swap_ra_hit: op.swap_ra_hit,
            })
        })
        .collect();
    let rows: Vec<SwapoffRow> = rows.into_iter().collect::<Result<_>>()?;
    let verdict = verdict::swapoff(&rows);
    Ok(Outcome {
        experiment: info.name,
        title: info.title,
        setup: format!(
            "{ram} MiB guest, 2 CPUs, {swap} MiB swap on the virtio preset; {n_procs} processes write \
             {per_proc} MiB each at the same time ({filled} MiB, 85% of memory), the guest hibernates \
             (default image_size, 2/5 of memory: the rest is reclaimed to swap) and resumes, then swapoff is \
             timed; page-cluster 1..8 under scaling readahead \
             with swapoff hits ignored (pre-5.8, and 6.18) or credited (5.8-6.17), fixed, and VMA readahead"
        ),
        published: info.published,
        scale,
        rows: rows.into_iter().map(Row::Swapoff).collect(),
        verdict,
    })
}

fn hibernate_reclaim(scale: f64, progress: &dyn Progress) -> Result<Outcome> {
    let ram = mib(8192.0, scale, 256.0);
    let swap = mib(8192.0, scale, 256.0);
    // 85% of memory, written by four processes at once, as in swapoff-readahead.
    let n_procs = 4u64;
    let per_proc = (ram as f64 * 0.85 / n_procs as f64).round() as u64;
    // What the RFC's test program wrote is not published; its pages here compress about
    // 2:1 under LZO, as ordinary program data does.
    let contents = Contents::Half;
    let variants: [(&'static str, &'static str); 4] =
        [("vanilla", "default"), ("mm_reclaim", "default"), ("vanilla", "0"), ("mm_reclaim", "0")];
    let runs = Runs::new(progress, variants.len() as u64);
    let rows: Vec<Result<HibernateRow>> = variants
        .par_iter()
        .map(|&(kernel, image_size)| {
            let mut generator = GeneratorConfig::new(Pattern::Seq, mib_size(per_proc));
            generator.passes = 0;
            generator.tasks = n_procs as u32;
            let mm_reclaim = kernel == "mm_reclaim";
            let mut timeline = vec![TimelineEntry::new(
                When { at: Some("workload-end".into()), ..When::default() },
                mark("filled"),
            )];
            if mm_reclaim {
                // The RFC's use: reclaim everything while the guest sits idle.
                timeline.push(TimelineEntry::new(
                    When::default(),
                    TimelineOp::MmReclaimRun { pages: 0, timeout: None },
                ));
            }
            // The guest idles for a minute after its fill (at least until the reclaim is
            // over), then hibernates.
            timeline.push(TimelineEntry::new(
                When { at: Some(format!("{}s", IDLE_S)), ..When::default() },
                TimelineOp::Hibernate {
                    image_size: (image_size == "0").then(|| "0".to_string()),
                    compress: None,
                    device: None,
                },
            ));
            timeline.push(TimelineEntry::new(When::default(), TimelineOp::Resume { boot: None }));
            if mm_reclaim {
                timeline.push(TimelineEntry::new(When::default(), TimelineOp::MmReclaimRelease { pages: 0 }));
            }
            let mut file = ScenarioFile {
                machine: MachineConfig { memory: mib_size(ram), cpus: 2, ..MachineConfig::default() },
                workload: WorkloadSection {
                    contents: Some(contents.clone()),
                    ..WorkloadSection::generator(generator)
                },
                timeline,
                ..ScenarioFile::default()
            };
            file.swap.devices = vec![DeviceSection {
                backing: None,
                name: "vda".into(),
                size: mib_size(swap),
                priority: None,
                model: DeviceConfig::preset("disk-100mbs"),
            }];
            let report =
                run_file(&format!("hibernate-reclaim/{kernel}/image_size={image_size}"), file, &runs)?;
            let op = |name: &str| {
                report.operations.iter().find(|o| o.op == name).with_context(|| format!("{name} did not run"))
            };
            let finished = |o: &swapsim_core::OpReport| -> Result<f64> {
                if o.result != "completed" {
                    bail!("{} did not complete: {}", o.op, o.result);
                }
                o.duration_s.with_context(|| format!("{} did not finish", o.op))
            };
            let filled_at = op("mark")?.start_s;
            if filled_at > IDLE_S as f64 {
                bail!("the fill took {filled_at:.1} s, longer than the {IDLE_S} s before hibernation");
            }
            let hibernate = op("hibernate")?;
            let image = hibernate.hibernation.as_ref().context("hibernate reported no image")?;
            let (pre_reclaim_s, pre_reclaimed_pages, release_s) = if mm_reclaim {
                let run = op("mm-reclaim-run")?;
                (finished(run)?, run.reclaimed_pages.unwrap_or(0), finished(op("mm-reclaim-release")?)?)
            } else {
                (0.0, 0, 0.0)
            };
            Ok(HibernateRow {
                kernel,
                image_size,
                hibernate_s: round3(finished(hibernate)?),
                resume_s: round3(finished(op("resume")?)?),
                shrink_s: round3(image.shrink_s),
                reclaimed_pages: image.reclaimed_pages,
                image_pages: image.image_pages,
                image_mib: round3(image.image_bytes as f64 / (1u64 << 20) as f64),
                pre_reclaim_s: round3(pre_reclaim_s),
                pre_reclaimed_pages,
                release_s: round3(release_s),
            })
        })
        .collect();
    let rows: Vec<HibernateRow> = rows.into_iter().collect::<Result<_>>()?;
    let verdict = verdict::hibernate(&rows);
    let boot = crate::timeline::DEFAULT_BOOT.as_secs_f64();
    Ok(Outcome {
        experiment: "hibernate-reclaim",
        title: EXPERIMENTS[4].title,
        setup: format!(
            "{ram} MiB guest, 2 CPUs, {swap} MiB swap on the disk-100mbs preset; {n_procs} processes write \
             {per_proc} MiB each at once (85% of memory; pages compress about 2:1), the guest idles until \
             {IDLE_S} s, hibernates (compressed image, image_size 2/5 of RAM or 0) and resumes ({boot:.0} s boot). \
             mm_reclaim runs mm-reclaim-run 0 right after the fill and mm-reclaim-release 0 after resume"
        ),
        published: EXPERIMENTS[4].published,
        scale,
        rows: rows.into_iter().map(Row::Hibernate).collect(),
        verdict,
    })
}

/// When hibernate-reclaim's guest hibernates: a minute after boot, the fill being over in
/// a few seconds.
const IDLE_S: u64 = 60;

/// A `mark` operation.
fn mark(label: &str) -> TimelineOp {
    TimelineOp::Mark { label: label.to_string() }
}

/// The swapoff study's timeline after the fill: hibernate with the default image_size and
/// resume, as the study's guest did, then swapoff of "vda". The resumed guest holds what
/// its image held (2/5 of memory, mapped); the rest was reclaimed to swap by hibernation's
/// shrink, in LRU order.
/// The guest of `swapoff-readahead`: sizes in MiB.
#[derive(Clone, Copy)]
struct Shape {
    ram: u64,
    swap: u64,
    per_proc: u64,
    n_procs: u64,
}

/// One `swapoff-readahead` run: `n_procs` processes write `per_proc` MiB each, the guest
/// hibernates and resumes, then swaps off under `policy`, `hits` and page-cluster `pc`.
fn swapoff_file(shape: Shape, policy: ReadaheadConfig, hits: SwapoffHits, pc: u32) -> ScenarioFile {
    let Shape { ram, swap, per_proc, n_procs } = shape;
    let mut generator = GeneratorConfig::new(Pattern::Seq, mib_size(per_proc));
    generator.passes = 0;
    generator.tasks = n_procs as u32;
    let mut file = ScenarioFile {
        machine: MachineConfig { memory: mib_size(ram), cpus: 2, ..MachineConfig::default() },
        workload: WorkloadSection::generator(generator),
        timeline: swapoff_timeline(),
        ..ScenarioFile::default()
    };
    file.swap.page_cluster = pc;
    file.swap.readahead = policy;
    file.swap.swapoff_readahead_hits = hits;
    file.swap.devices = vec![DeviceSection {
        backing: None,
        name: "vda".into(),
        size: mib_size(swap),
        priority: None,
        model: DeviceConfig::preset("virtio"),
    }];
    file
}

/// The position of the swapoff in [`swapoff_timeline`].
const SWAPOFF_OP: usize = 2;

fn swapoff_timeline() -> Vec<TimelineEntry> {
    vec![
        TimelineEntry::new(
            When { at: Some("workload-end".into()), ..When::default() },
            TimelineOp::Hibernate { image_size: None, compress: None, device: None },
        ),
        TimelineEntry::new(When::default(), TimelineOp::Resume { boot: None }),
        TimelineEntry::new(When::default(), TimelineOp::Swapoff { device: "vda".into() }),
    ]
}

fn plug_merge(scale: f64, progress: &dyn Progress) -> Result<Outcome> {
    let ram = mib(2048.0, scale, 64.0);
    let n_guests = 4u64;
    // Guests together touch 1.5x the host's memory.
    let guest = (ram * 3 / 2) / n_guests;
    let disk = mib(1024.0, scale, 64.0);
    let names: Vec<String> = (0..16).map(|i| format!("sd{}", (b'b' + i as u8) as char)).collect();
    let devices: Vec<DeviceSection> = names
        .iter()
        .map(|name| DeviceSection {
            backing: None,
            name: name.clone(),
            size: mib_size(disk),
            priority: Some(0),
            model: DeviceConfig { channels: Some(4), ..DeviceConfig::preset("san") },
        })
        .collect();
    let plugs = [false, true];
    let runs = Runs::new(progress, plugs.len() as u64);
    let reports: Vec<Result<(bool, SimReport)>> = plugs
        .par_iter()
        .map(|&plug| {
            // The 2012 kernel read a fixed 2^page-cluster window around each fault.
            let mut generator = GeneratorConfig::new(Pattern::Zipf, mib_size(guest));
            generator.zipf_exponent = 0.6;
            generator.passes = 3;
            generator.tasks = n_guests as u32;
            let mut file = ScenarioFile {
                machine: MachineConfig {
                    memory: mib_size(ram),
                    cpus: n_guests as u32,
                    ..MachineConfig::default()
                },
                block: BlockConfig { plugging: plug, ..BlockConfig::default() },
                workload: WorkloadSection::generator(generator),
                ..ScenarioFile::default()
            };
            file.swap.page_cluster = 3;
            file.swap.readahead = ReadaheadConfig::Fixed;
            file.swap.devices = devices.clone();
            Ok((plug, run_file(&format!("plug-merge/plug={plug}"), file, &runs)?))
        })
        .collect();
    let runs: Vec<(bool, SimReport)> = reports.into_iter().collect::<Result<_>>()?;
    let mut rows = Vec::new();
    let mut per_mib = [0.0; 2];
    let mut throughput = [0.0; 2];
    for (plug, report) in &runs {
        let b = &report.block[0];
        let read_mib = b.reads.completed_kib as f64 / 1024.0;
        let all_mib: f64 = report.block.iter().map(|d| d.reads.completed_kib as f64 / 1024.0).sum();
        let all_dispatches: u64 = report.block.iter().map(|d| d.reads.dispatches).sum();
        let i = usize::from(*plug);
        per_mib[i] = all_dispatches as f64 / all_mib.max(f64::MIN_POSITIVE);
        throughput[i] = all_mib / report.sim_time_s.max(f64::MIN_POSITIVE);
        rows.push(Row::Plug(PlugRow {
            plug: *plug,
            device: b.device.clone(),
            reads_queued: b.reads.queued,
            read_dispatches: b.reads.dispatches,
            read_merges: b.reads.merges,
            reads_completed: b.reads.completed,
            io_unplugs: b.io_unplugs,
            read_mib: round3(read_mib),
            dispatches_per_mib: round3(b.reads.dispatches as f64 / read_mib.max(f64::MIN_POSITIVE)),
            throughput_mib_s: round3(read_mib / report.sim_time_s.max(f64::MIN_POSITIVE)),
        }));
    }
    let verdict = verdict::plug(per_mib, throughput);
    Ok(Outcome {
        experiment: "plug-merge",
        title: EXPERIMENTS[1].title,
        setup: format!(
            "{ram} MiB host, {n_guests} guests (tasks) of {guest} MiB each on their own CPU (1.5x overcommit), \
             zipf(0.6) accesses, fixed readahead of 8 pages, 16 SAN-preset swap disks of {disk} MiB at equal \
             priority with 4 requests in service per LUN (the array's concurrency shared by 16 LUNs), global \
             reclaim (kswapd and direct); plugging off and on. The dispatch reduction does not depend on the \
             per-LUN concurrency; the throughput gain does (it comes from fewer requests on a busy array: with \
             8 per LUN the array is never busy and plugging only adds transfer time)"
        ),
        published: EXPERIMENTS[1].published,
        scale,
        rows,
        verdict,
    })
}

/// The mthp-swapin job queue and memory cgroup.
///
/// Shaped on the publication: ten jobs at once (`-j10`), one memory cgroup around the
/// build, 16 kB mTHP "always" with every other size "never" (2048 kB, whose kernel default
/// is "inherit", is written out as "never" so that no other size can appear), zram
/// (`this-vm-zram`, block backing, so large folios swap out whole) and the default
/// page-cluster; the classic LRU with the three swap-in size policies of the comparison,
/// and MGLRU with the kernel's policy, the publication's third build.
///
/// Scaled down, so that the four runs take seconds rather than the published 6.5
/// minutes each: 60 jobs (a real build runs thousands) of the generator's default sizes
/// (compile jobs with a 60 MiB median, a few 400 MiB link jobs), in a 256 MiB cgroup
/// instead of 1 GiB. Ten default jobs at full size hold about 770 MiB, three times the
/// limit, so every slot swaps, as the published build did (its 1 GiB cgroup swapped out
/// 5.5 GiB). The published build's pressure cannot be matched exactly, since the sizes
/// of its processes were not published; this shape was chosen once, before looking at the
/// result, and swaps harder relative to the limit than the publication (pswpout is 18 to
/// 25 times the limit here, against 5.5 times there). Costs are this machine's
/// ([`CpuCosts::this_vm`]), as its zram preset is; absolute times are therefore not
/// comparable with the arm64 build's and are not judged.
///
/// `scale` shrinks the job sizes, the cgroup and the zram device together, keeping the
/// ratio of job memory to the limit. The job count stays at 60: with fewer jobs than a
/// few rounds of the ten slots, the small jobs end early, the queue does not refill them
/// and the cgroup hardly swaps.
struct MthpShape {
    jobs: JobsConfig,
    memcg_mib: u64,
    zram_mib: u64,
}

impl MthpShape {
    fn new(scale: f64) -> MthpShape {
        let defaults = JobsConfig::default();
        let concurrency = 10;
        let scaled = |size: ByteSize| ByteSize(((size.0 as f64 * scale) as u64).max(1 << 20) & !0xfff);
        let jobs = JobsConfig {
            jobs: 60,
            concurrency,
            size_median: scaled(defaults.size_median),
            link_size_median: scaled(defaults.link_size_median),
            ..defaults
        };
        MthpShape { jobs, memcg_mib: mib(256.0, scale, 8.0), zram_mib: mib(4096.0, scale, 64.0) }
    }
}

fn mthp_swapin(scale: f64, progress: &dyn Progress) -> Result<Outcome> {
    let shape = MthpShape::new(scale);
    let policies: [(LruModel, &'static str, SwapinConfig); 4] = [
        (LruModel::Classic, "order0", SwapinConfig::Order0),
        (LruModel::Classic, "kernel", SwapinConfig::Kernel),
        (LruModel::Classic, "throttled", SwapinConfig::Throttled),
        (LruModel::Mglru, "kernel", SwapinConfig::Kernel),
    ];
    let runs = Runs::new(progress, policies.len() as u64);
    let rows: Vec<Result<MthpRow>> = policies
        .par_iter()
        .map(|&(lru, name, swapin)| {
            let lru_name = if lru == LruModel::Mglru { "mglru" } else { "classic" };
            let hugepages = [("16kB", ThpSizeEnabled::Always), ("2048kB", ThpSizeEnabled::Never)]
                .into_iter()
                .map(|(size, enabled)| (size.to_string(), enabled))
                .collect();
            let mut file = ScenarioFile {
                machine: MachineConfig { memory: mib_size(24 * 1024), cpus: 10, ..MachineConfig::default() },
                memcg: MemcgConfig { limit: Some(mib_size(shape.memcg_mib)), ..MemcgConfig::default() },
                lru,
                thp: ThpSection { hugepages, swapin, ..ThpSection::default() },
                cpu: CpuCosts::this_vm(),
                workload: WorkloadSection { jobs: Some(shape.jobs.clone()), ..WorkloadSection::default() },
                ..ScenarioFile::default()
            };
            file.swap.devices = vec![DeviceSection {
                backing: None,
                name: "zram0".into(),
                size: mib_size(shape.zram_mib),
                priority: None,
                model: DeviceConfig::preset("this-vm-zram"),
            }];
            let report = run_file(&format!("mthp-swapin/lru={lru_name},swapin={name}"), file, &runs)?;
            let m = report.mthp.get("16kB").cloned().unwrap_or_default();
            let jobs = report.jobs.as_ref().context("the job queue has no summary")?;
            let outcome = outcome_text(&report.outcome);
            Ok(MthpRow {
                lru: lru_name,
                swapin: name,
                pswpin: report.vmstat.pswpin,
                pswpout: report.vmstat.pswpout,
                swpout_16k: m.swpout,
                swpin_16k: m.swpin,
                swpin_fallback_charge_16k: m.swpin_fallback_charge,
                wall_s: round3(jobs.wall_s),
                jobs_exited: jobs.exited,
                jobs_oom_killed: jobs.oom_killed,
                outcome,
            })
        })
        .collect();
    let rows: Vec<MthpRow> = rows.into_iter().collect::<Result<_>>()?;
    let verdict = verdict::mthp(&rows);
    let j = &shape.jobs;
    Ok(Outcome {
        experiment: "mthp-swapin",
        title: EXPERIMENTS[2].title,
        setup: format!(
            "kernel-build-like job queue: {} jobs, -j{}, compile jobs of median {} MiB and link jobs ({:.0}%) \
             of median {} MiB, in a {} MiB memcg on a 10-CPU machine; {} MiB zram (this-vm-zram), 16 kB mTHP \
             always, other sizes never, page-cluster 3, this machine's CPU costs; classic LRU with swap-in size \
             policy order0, kernel and throttled (refault-throttled large swap-in), and MGLRU with kernel",
            j.jobs,
            j.concurrency,
            j.size_median.0 >> 20,
            j.link_fraction * 100.0,
            j.link_size_median.0 >> 20,
            shape.memcg_mib,
            shape.zram_mib,
        ),
        published: EXPERIMENTS[2].published,
        scale,
        rows: rows.into_iter().map(Row::Mthp).collect(),
        verdict,
    })
}

/// A zswap-second-chance row from its builds: means over the builds that finished.
fn zswap_row(name: &'static str, builds: Vec<ZswapBuild>) -> ZswapRow {
    let finished: Vec<&ZswapBuild> = builds.iter().filter(|b| b.finished).collect();
    let n = finished.len().max(1) as f64;
    let mean =
        |f: fn(&ZswapBuild) -> u64| (finished.iter().map(|b| f(b)).sum::<u64>() as f64 / n).round() as u64;
    let other: Vec<String> = builds
        .iter()
        .filter(|b| b.outcome != "completed")
        .map(|b| format!("seed {}: {}", b.seed, b.outcome))
        .collect();
    let figures = ZswapFigures {
        pswpin: mean(|b| b.figures.pswpin),
        zswpin: mean(|b| b.figures.zswpin),
        zswpout: mean(|b| b.figures.zswpout),
        zswpwb: mean(|b| b.figures.zswpwb),
        pswpout: mean(|b| b.figures.pswpout),
        shrinker_scanned: mean(|b| b.figures.shrinker_scanned),
        wall_s: round3(finished.iter().map(|b| b.figures.wall_s).sum::<f64>() / n),
        jobs_oom_killed: builds.iter().map(|b| b.figures.jobs_oom_killed).sum(),
    };
    ZswapRow {
        zswap: name,
        figures,
        builds_finished: finished.len() as u64,
        outcome: if other.is_empty() { "completed".to_string() } else { other.join("; ") },
        builds,
    }
}

/// How a run ended, in words: "completed", "oom-killed <task> at <t> s", ...
fn outcome_text(outcome: &RunOutcome) -> String {
    match outcome {
        RunOutcome::Completed => "completed".to_string(),
        RunOutcome::OomKilled { task, at_s } => format!("oom-killed {task} at {at_s:.3} s"),
        RunOutcome::EventLimit => "event limit".to_string(),
        RunOutcome::TimeLimit => "time limit".to_string(),
    }
}

/// The zswap-second-chance job queue, memory cgroup and machine.
///
/// The publication gives the build's memory cgroup (2 GiB, cgroup v2) but not its `-j`
/// or its job sizes, so the queue is the one `mthp-swapin` already uses for "kernel build
/// -j10 in 1 GiB" ([`MthpShape`]: 60 jobs of the generator's default sizes, ten at a
/// time on ten CPUs), and the limit is scaled by the ratio of the two publications'
/// limits: 2 GiB is twice 1 GiB, so 512 MiB where mthp-swapin has 256 MiB. Ten default
/// jobs at full size hold about 770 MiB, 1.5 times the limit: every build reclaims, and
/// the 400 MiB link jobs swap hard. How this was arrived at, for the record: one trial
/// at mthp-swapin's own 256 MiB (seed 1) came first; it OOM-killed 37 jobs in the row
/// without the shrinker and gave second chance 0.92 of decay's disk swap-ins. The limit
/// was then set by the ratio above and has not been changed since. cgroup v2 matters: on
/// v1 zswap charges nothing to the group and the memory-pressure shrinker never writes
/// back, as on a kernel without kmem accounting.
///
/// The machine has 24 GiB, as the other experiments' machines: the published one was a
/// server, on which zswap's pool limit (`max_pool_percent`, default 20 %) is far beyond
/// what a 2 GiB cgroup can hold, and 20 % of 24 GiB (4.8 GiB) is as far beyond 512 MiB.
/// The cgroup, not the pool limit, bounds the pool, so only the memory-pressure shrinker
/// writes back.
///
/// Pages hold text: a kernel build's anonymous memory compresses about 3:1 with zstd,
/// close to text under zstd (about 3.2:1 in the measured compressor tables), while "half"
/// pages compress 2:1 under every compressor. The compressor is zstd rather than the
/// Kconfig default lzo for the same reason: that 3:1 figure is zstd's, and lzo leaves text
/// at about 2.3:1. (The stand-in tables in use until the measured ones land give text
/// 2.7:1 and the same costs under every compressor, so for now the choice changes no
/// number.) Swap is the validation machine's virtio disk (`this-vm`), with its CPU costs
/// ([`CpuCosts::this_vm`]).
///
/// The publication averages five runs of one build. The simulation is deterministic, so
/// five runs of one seed would be five equal runs; instead each row is the mean of five
/// builds, seeds 1 to 5, whose job sizes and link jobs differ. Single builds were looked
/// at first: second chance's share of decay's disk swap-ins ranged from 0.72 to 1.09
/// between seeds, too wide for one seed to stand for the comparison. The per-build
/// figures are kept in the result, and the verdict compares builds seed by seed.
///
/// `scale` shrinks the job sizes, the cgroup and the swap device together, keeping their
/// ratios, and the number of builds to `5 × scale` rounded (at least one). The job count
/// stays at 60, for the reason given on [`MthpShape`].
struct ZswapShape {
    jobs: JobsConfig,
    memcg_mib: u64,
    swap_mib: u64,
    seeds: Vec<u64>,
}

impl ZswapShape {
    /// Builds averaged at scale 1, as the publication's runs.
    const BUILDS: u64 = 5;

    fn new(scale: f64) -> ZswapShape {
        let mthp = MthpShape::new(scale);
        let builds = ((Self::BUILDS as f64 * scale).round() as u64).max(1);
        ZswapShape {
            jobs: mthp.jobs,
            memcg_mib: mib(512.0, scale, 16.0),
            swap_mib: mib(4096.0, scale, 64.0),
            seeds: (1..=builds).collect(),
        }
    }
}

fn zswap_second_chance(scale: f64, progress: &dyn Progress) -> Result<Outcome> {
    let shape = ZswapShape::new(scale);
    // (row name, zswap on, shrinker on, protection)
    let settings: [(&'static str, bool, bool, ZswapProtectionConfig); 4] = [
        ("off", false, false, ZswapProtectionConfig::SecondChance),
        ("no-shrinker", true, false, ZswapProtectionConfig::SecondChance),
        ("decay", true, true, ZswapProtectionConfig::Decay),
        ("second-chance", true, true, ZswapProtectionConfig::SecondChance),
    ];
    let variants: Vec<(usize, u64)> =
        (0..settings.len()).flat_map(|s| shape.seeds.iter().map(move |&seed| (s, seed))).collect();
    let runs = Runs::new(progress, variants.len() as u64);
    let builds: Vec<Result<(usize, ZswapBuild)>> = variants
        .par_iter()
        .map(|&(s, seed)| {
            let (name, enabled, shrinker_enabled, protection) = settings[s];
            let zswap = ZswapSection {
                enabled,
                compressor: Compressor::Zstd,
                shrinker_enabled,
                protection,
                ..ZswapSection::default()
            };
            let mut file = ScenarioFile {
                seed,
                machine: MachineConfig { memory: mib_size(24 * 1024), cpus: 10, ..MachineConfig::default() },
                memcg: MemcgConfig {
                    limit: Some(mib_size(shape.memcg_mib)),
                    version: 2,
                    ..MemcgConfig::default()
                },
                zswap,
                cpu: CpuCosts::this_vm(),
                workload: WorkloadSection {
                    jobs: Some(shape.jobs.clone()),
                    contents: Some(Contents::Text),
                    ..WorkloadSection::default()
                },
                ..ScenarioFile::default()
            };
            file.swap.devices = vec![DeviceSection {
                backing: None,
                name: "vda".into(),
                size: mib_size(shape.swap_mib),
                priority: None,
                model: DeviceConfig::preset("this-vm"),
            }];
            let report = match run_file(&format!("zswap-second-chance/{name}/seed={seed}"), file, &runs) {
                Ok(report) => report,
                // A model error in one build is reported with the build; the others stand.
                Err(e) => match e.downcast_ref::<SimulatorPanic>() {
                    Some(panic) => {
                        let outcome = panic.to_string();
                        return Ok((s, ZswapBuild { seed, outcome, ..ZswapBuild::default() }));
                    }
                    None => return Err(e),
                },
            };
            let jobs = report.jobs.as_ref().context("the job queue has no summary")?;
            let v = &report.vmstat;
            Ok((
                s,
                ZswapBuild {
                    seed,
                    finished: true,
                    figures: ZswapFigures {
                        pswpin: v.pswpin,
                        zswpin: v.zswpin,
                        zswpout: v.zswpout,
                        zswpwb: v.zswpwb,
                        pswpout: v.pswpout,
                        shrinker_scanned: report.zswap.as_ref().map_or(0, |z| z.shrinker_scanned),
                        wall_s: round3(jobs.wall_s),
                        jobs_oom_killed: jobs.oom_killed,
                    },
                    outcome: outcome_text(&report.outcome),
                },
            ))
        })
        .collect();
    let builds: Vec<(usize, ZswapBuild)> = builds.into_iter().collect::<Result<_>>()?;
    let rows: Vec<ZswapRow> = settings
        .iter()
        .enumerate()
        .map(|(s, &(name, ..))| {
            let mine: Vec<ZswapBuild> = builds.iter().filter(|b| b.0 == s).map(|b| b.1.clone()).collect();
            zswap_row(name, mine)
        })
        .collect();
    let verdict = verdict::zswap(&rows);
    let j = &shape.jobs;
    Ok(Outcome {
        experiment: "zswap-second-chance",
        title: EXPERIMENTS[3].title,
        setup: format!(
            "kernel-build-like job queue: {} jobs, -j{}, compile jobs of median {} MiB and link jobs ({:.0}%) \
             of median {} MiB, pages holding text, in a {} MiB cgroup v2 memcg on a 10-CPU machine of 24 GiB; \
             {} MiB swap on the this-vm disk, page-cluster 3, this machine's CPU costs; zswap with zstd, \
             max_pool_percent 20, accept_threshold_percent 90. Rows: no zswap, zswap without the shrinker, \
             zswap with the shrinker under the decaying protected count (6.8-6.11) and under second chance \
             (6.12+); each the mean of {} builds (seeds {}) that finished",
            j.jobs,
            j.concurrency,
            j.size_median.0 >> 20,
            j.link_fraction * 100.0,
            j.link_size_median.0 >> 20,
            shape.memcg_mib,
            shape.swap_mib,
            shape.seeds.len(),
            shape.seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
        ),
        published: EXPERIMENTS[3].published,
        scale,
        rows: rows.into_iter().map(Row::Zswap).collect(),
        verdict,
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forked runs of `swapoff-readahead` give, report for report, what separate runs
    /// of the same scenarios give.
    #[test]
    fn forked_swapoff_runs_equal_separate_runs() {
        let shape = Shape { ram: 64, swap: 128, per_proc: 14, n_procs: 4 };
        let variants = [
            (ReadaheadConfig::Cluster, SwapoffHits::Ignored, 1),
            (ReadaheadConfig::Fixed, SwapoffHits::Credited, 8),
            (ReadaheadConfig::Vma, SwapoffHits::Credited, 3),
        ];
        let files = || variants.iter().map(|&(ra, hits, pc)| swapoff_file(shape, ra, hits, pc));
        let labels: Vec<String> = (0..variants.len()).map(|i| format!("variant {i}")).collect();
        let runs = Runs::new(&(), 2 * variants.len() as u64);
        let forked = run_forked(&labels, files().collect(), SWAPOFF_OP, &runs).unwrap();
        let json = |r: &SimReport| serde_json::to_value(r).unwrap();
        let mut seen = Vec::new();
        for ((file, label), forked) in files().zip(&labels).zip(&forked) {
            let alone = run_file(label, file, &runs).unwrap();
            assert!(
                alone.operations.iter().any(|o| o.op == "swapoff" && o.pswpin > 0),
                "{label} swapped off"
            );
            assert_eq!(json(forked), json(&alone), "{label}");
            seen.push(json(&alone));
        }
        assert!(seen[0] != seen[1] && seen[1] != seen[2], "the variants differ");
    }

    #[test]
    fn forking_refuses_variants_that_differ_beyond_swap_in() {
        let shape = Shape { ram: 64, swap: 128, per_proc: 14, n_procs: 4 };
        let mut other = swapoff_file(shape, ReadaheadConfig::Fixed, SwapoffHits::Credited, 3);
        other.machine.cpus = 1;
        let files = vec![swapoff_file(shape, ReadaheadConfig::Cluster, SwapoffHits::Ignored, 3), other];
        let labels = vec!["a".to_string(), "b".to_string()];
        let runs = Runs::new(&(), 2);
        let err = run_forked(&labels, files, SWAPOFF_OP, &runs).unwrap_err();
        assert!(format!("{err:#}").contains("differs in more than its swap-in knobs"), "{err:#}");
    }
}
