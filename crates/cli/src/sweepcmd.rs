//! `swapsim sweep` and `swapsim merge`: their arguments, and the glue from arguments to the
//! library's sweep and to the outputs drawn from its document.
//!
//! A variant whose simulated system failed (an OOM kill, a failed timeline operation) is a
//! result: its `status` says so in every output and the sweep still succeeds. Only bad
//! arguments and bad input make these commands fail.

use anyhow::{anyhow, bail, Result};
use clap::ValueEnum;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use swapsim::sweep::{Axis, Plan, Shard, SweepOptions};
use swapsim::{Registry, Scenario};

use crate::sweep_doc::{self, BaselineEntry};
use crate::{merge, output, progress, sweep_output};

/// How a sweep is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SweepFormat {
    /// One row per variant, aligned for reading.
    Table,
    /// One JSON document holding every variant's full report.
    Json,
    /// The table's columns as CSV, with a header row and plain numbers.
    Csv,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SweepArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// A setting to vary, with the key syntax of `--set`: a comma list
    /// (`swap.readahead=cluster,fixed`) or an inclusive integer range
    /// (`swap.page_cluster=1..8`). Repeat for a cross product, in which the first key varies
    /// slowest. At most 10000 variants.
    #[arg(long = "vary", value_name = "KEY=VALUES", required = true)]
    varies: Vec<String>,
    /// Edit the scenario before every variant, as for `run`. May be repeated; applied in
    /// order, before the varied edits.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Root seed of every variant; overrides the scenario's `seed`.
    #[arg(long)]
    seed: Option<u64>,
    /// Run every variant N times, with the seeds SEED, SEED+1, ..., SEED+N-1 (SEED being
    /// --seed or the scenario's), and show each metric as its mean ± the half-width of its
    /// 95 % confidence interval (Student t). 1..=1000, and at most 10000 runs in all. Works
    /// with --shard: a variant's seeds all run in its shard.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seeds: u32,
    /// Compare every variant with the one that has VALUE on KEY (a --vary key and one of
    /// its values) and the same values on the other keys: adds, after each metric, its
    /// ratio to that variant's (of the means, with --seeds). Not with --shard: give it to
    /// `swapsim merge`.
    #[arg(long, value_name = "KEY=VALUE")]
    baseline: Option<String>,
    /// Variants run at once [default: the number of available cores]. The results do not
    /// depend on it.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,
    /// Output format [default: table, or json with --shard].
    #[arg(long, value_enum)]
    format: Option<SweepFormat>,
    /// Also write DIR/sweep.json, DIR/sweep.csv and DIR/sweep.svg (a plot of --metric),
    /// creating DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// What the plot shows on its y axis: any vmstat counter, or read_dispatches,
    /// reads_per_dispatch, major_p50_us, major_p99_us, sim_time_s, jobs_wall_s (a job
    /// queue's wall time).
    #[arg(long, default_value = "pgmajfault")]
    metric: String,
    /// Run only the variants whose index is K-1 modulo N, and print them as a JSON shard
    /// document for `swapsim merge`. For array jobs: one shard per task; `auto` reads the
    /// task from a Slurm job array (SLURM_ARRAY_TASK_ID, _MIN, _COUNT) or a Kubernetes
    /// Indexed Job (JOB_COMPLETION_INDEX, with --shard-count).
    #[arg(long, value_name = "K/N|auto")]
    shard: Option<String>,
    /// With `--shard auto`: how many tasks the array has (an Indexed Job's completions;
    /// overrides SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "N")]
    shard_count: Option<usize>,
    /// Widest line of the table, in characters: wider rows are wrapped into blocks of
    /// metrics, each repeating the varied settings. 0 keeps each variant on one line.
    #[arg(long, value_name = "CHARS", default_value_t = 120)]
    width: usize,
}

#[derive(Debug, clap::Args)]
pub(crate) struct MergeArgs {
    /// The shard documents, each printed by `swapsim sweep --shard K/N`; any order.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
    /// Compare every variant with a baseline variant, as `sweep --baseline` does.
    #[arg(long, value_name = "KEY=VALUE")]
    baseline: Option<String>,
    /// Output format; `json` is byte-identical to the unsharded sweep's apart from `host`.
    #[arg(long, value_enum, default_value_t = SweepFormat::Table)]
    format: SweepFormat,
    /// Also write DIR/sweep.json, DIR/sweep.csv and DIR/sweep.svg, creating DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// What the plot in --out shows on its y axis, as for `sweep`.
    #[arg(long, default_value = "pgmajfault")]
    metric: String,
    /// Widest line of the table, in characters: wider rows are wrapped into blocks of
    /// metrics, each repeating the varied settings. 0 keeps each variant on one line.
    #[arg(long, value_name = "CHARS", default_value_t = 120)]
    width: usize,
}

/// `swapsim sweep`.
pub(crate) fn run_sweep(out: &mut impl Write, args: &SweepArgs, registry: &Arc<Registry>) -> Result<()> {
    sweep_doc::check_metric(&args.metric)?;
    let axes = args
        .varies
        .iter()
        .map(|arg| Axis::parse(arg).map_err(|message| anyhow!(message)))
        .collect::<Result<Vec<_>>>()?;
    let plan = Plan::new(axes, args.sets.clone())?.with_seeds(args.seeds)?;
    let shard = match &args.shard {
        Some(text) if text == "auto" => Some(
            Shard::from_env(|name| std::env::var(name).ok(), args.shard_count)
                .map_err(|message| anyhow!("--shard {message}"))?,
        ),
        Some(text) => Some(Shard::parse(text).map_err(|message| anyhow!("--shard {message}"))?),
        None => None,
    };
    if args.shard_count.is_some() && args.shard.as_deref() != Some("auto") {
        bail!("--shard-count goes with --shard auto");
    }
    let format = match (shard, args.format) {
        (Some(_), None | Some(SweepFormat::Json)) => SweepFormat::Json,
        (Some(_), Some(_)) => bail!("--shard prints a JSON document for `swapsim merge`; use --format json"),
        (None, format) => format.unwrap_or(SweepFormat::Table),
    };
    if shard.is_some() && args.out.is_some() {
        bail!("--shard and --out: write the files from the merged result, `swapsim merge ... --out DIR`");
    }
    if shard.is_some() && args.baseline.is_some() {
        bail!(
            "--shard and --baseline: a variant's baseline may be in another shard; \
             give --baseline to `swapsim merge`"
        );
    }
    let axes: Vec<(String, Vec<serde_json::Value>)> =
        plan.axes().iter().map(|axis| (axis.key.clone(), axis.values.clone())).collect();
    let baseline = args.baseline.as_deref().map(|arg| sweep_doc::baseline(arg, &axes)).transpose()?;
    let jobs = match args.jobs {
        Some(jobs) => usize::from(jobs),
        None => std::thread::available_parallelism().map(std::num::NonZeroUsize::get).unwrap_or(1),
    };
    let mut scenario = Scenario::load_with(&args.scenario, Arc::clone(registry))?;
    if let Some(seed) = args.seed {
        scenario = scenario.with_seed(seed);
    }
    progress::install_reproduce_hint();
    let n_variants = (0..plan.n_variants()).filter(|&idx| shard.is_none_or(|shard| shard.holds(idx))).count();
    let n_runs = n_variants * plan.n_seeds() as usize;
    let progress = progress::SweepProgress::new(scenario.name(), n_runs);
    let started = std::time::Instant::now();
    let run = swapsim::sweep(&scenario, &plan, SweepOptions { shard, jobs, progress: &progress });
    progress.finish();
    let run = run?;
    let wall_s = (started.elapsed().as_secs_f64() * 1e6).round() / 1e6;
    let host = sweep_doc::SweepHost { wall_s, jobs, shards: None };
    let shard_info =
        shard.map(|shard| sweep_doc::ShardInfo { k: shard.k, n: shard.n, total: plan.n_variants() });
    let mut doc = sweep_doc::document(scenario.name(), &plan, &run, shard_info, host);
    doc.baseline = baseline.as_ref().map(BaselineEntry::of);
    let view = sweep_doc::SweepView::of(&doc, axes, plan.fixed().to_vec(), baseline)?;
    // A shard's summary would compare only its own variants; the merged document has one.
    if shard.is_none() {
        doc.summary = view.summary();
    }
    emit_sweep(out, format, &doc, &view, args.out.as_deref(), (&args.metric, args.width))
}

/// `swapsim merge`.
pub(crate) fn run_merge(out: &mut impl Write, args: &MergeArgs) -> Result<()> {
    sweep_doc::check_metric(&args.metric)?;
    let merged = merge::merge(&args.shards, args.baseline.as_deref())?;
    emit_sweep(out, args.format, &merged.doc, &merged.view, args.out.as_deref(), (&args.metric, args.width))
}

/// Prints a sweep (or merged) document in `format`, after writing the `--out` files.
fn emit_sweep(
    out: &mut impl Write,
    format: SweepFormat,
    doc: &impl serde::Serialize,
    view: &sweep_doc::SweepView,
    dir: Option<&Path>,
    (metric, width): (&str, usize),
) -> Result<()> {
    if let Some(dir) = dir {
        sweep_output::write_dir(dir, doc, view, metric)?;
    }
    match format {
        SweepFormat::Json => output::write_json(out, doc),
        SweepFormat::Table => sweep_output::write_table(out, view, width),
        SweepFormat::Csv => sweep_output::write_csv(out, view),
    }
}
