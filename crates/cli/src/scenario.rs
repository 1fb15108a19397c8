//! The scenario file: parse, then validate, then build.
//!
//! A scenario is TOML composed from the section types the other crates own
//! ([`MachineConfig`], [`MemcgConfig`], [`DeviceConfig`], [`ReadaheadConfig`],
//! [`GeneratorConfig`], ...). Only `[swap]` and `[workload]` are shaped here, because they
//! gather fields from several crates. Every table rejects unknown keys.
//!
//! * Parse: the file is deserialised as written, so shape errors carry its line and
//!   column; then each `--set` edit is applied to the TOML tree and the tree deserialised
//!   again, so an edit that names no real key is rejected with the edit quoted.
//! * Validate: [`CoreConfig::validate`], every device model resolved to a full
//!   [`DeviceProfile`], the generator's ranges, and "exactly one workload".
//! * Build: [`Prepared::setup`] makes fresh device models (each on its own random stream,
//!   derived from the seed and the device name), the readahead policy and the tasks. It can
//!   be called again for another run of the same scenario.

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use swapsim_core::config::{
    BlockConfig, CpuCosts, LimitsConfig, LruModel, MachineConfig, MemcgConfig, SwapConfig, SwapoffHits,
};
use swapsim_core::gen::GeneratorConfig;
use swapsim_core::{
    ByteSize, CoreConfig, Policies, Setup, SimReport, SimRng, SwapDeviceSpec, ValidatedConfig,
};
use swapsim_core::{Operation, SimTime, TimelineOp, Trigger};
use swapsim_devices::{DeviceConfig, DeviceProfile};
use swapsim_policies::{ReadaheadConfig, ReadaheadContext};

use crate::overrides::Override;
use crate::tracefile::{self, Pace, TraceInput, TraceReport, TraceSource};
use swapsim_trace_formats::Format;

/// The seed a scenario runs with when it names none.
const DEFAULT_SEED: u64 = 1;

/// A scenario file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scenario {
    /// Root seed of every random stream. Default 1.
    #[serde(default = "default_seed")]
    seed: u64,
    #[serde(default)]
    machine: MachineConfig,
    #[serde(default)]
    memcg: MemcgConfig,
    #[serde(default)]
    swap: SwapSection,
    /// LRU model: "classic" (the kernel's two lists, default) or "exact".
    #[serde(default)]
    lru: LruModel,
    #[serde(default)]
    block: BlockConfig,
    #[serde(default)]
    cpu: CpuCosts,
    #[serde(default)]
    limits: LimitsConfig,
    #[serde(default)]
    workload: WorkloadSection,
    /// Operations applied during the run, in order.
    #[serde(default)]
    timeline: Vec<TimelineEntry>,
}

/// `[[timeline]]`: one operation. `at` is "after-previous" (the default), "workload-end"
/// or a simulated time such as "2.5s" or "150ms"; instead, `after_accesses = N` (with
/// `task`, default 0) fires when that task has completed N accesses. The other fields
/// belong to one `op` each.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TimelineEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    after_accesses: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task: Option<usize>,
    op: OpName,
    /// mark: a name for the point in the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    /// swapoff, swapon: the device's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    device: Option<String>,
    /// set-page-cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    page_cluster: Option<u32>,
    /// set-readahead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    readahead: Option<ReadaheadConfig>,
    /// set-vma-ra.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vma_ra_enabled: Option<bool>,
    /// set-memcg-limit: a size, or "max" for no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit: Option<String>,
}

/// The operations a timeline can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
enum OpName {
    Swapoff,
    Swapon,
    SetPageCluster,
    SetReadahead,
    SetVmaRa,
    SetMemcgLimit,
    PauseTasks,
    ResumeTasks,
    SwapOutAll,
    Mark,
}

/// Parses "2.5s", "150ms", "20us" or "500ns" into simulated time.
fn parse_time(text: &str) -> Result<SimTime, String> {
    let t = text.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        return Err(format!(
            "\"{text}\" is not a time (expected e.g. \"2.5s\", \"150ms\", \"workload-end\")"
        ));
    };
    let value: f64 = num.trim().parse().map_err(|_| format!("\"{text}\" is not a time"))?;
    let ns = value * scale;
    if !ns.is_finite() || !(0.0..=1e18).contains(&ns) {
        return Err(format!("\"{text}\" is out of range"));
    }
    Ok(SimTime(ns.round() as u64))
}

impl TimelineEntry {
    /// Checks that the entry carries exactly the fields its operation needs.
    fn validate(&self, idx: usize, devices: &[DeviceSection]) -> Result<()> {
        let field = |name: &str| format!("timeline[{idx}].{name}");
        if let Some(at) = &self.at {
            if self.after_accesses.is_some() {
                bail!("{}: give either at or after_accesses, not both", field("at"));
            }
            if at != "after-previous" && at != "workload-end" {
                parse_time(at).map_err(|e| anyhow!("{}: {e}", field("at")))?;
            }
        }
        if self.task.is_some() && self.after_accesses.is_none() {
            bail!("{}: only used with after_accesses", field("task"));
        }
        let given: Vec<&str> = [
            ("device", self.device.is_some()),
            ("page_cluster", self.page_cluster.is_some()),
            ("readahead", self.readahead.is_some()),
            ("vma_ra_enabled", self.vma_ra_enabled.is_some()),
            ("limit", self.limit.is_some()),
            ("label", self.label.is_some()),
        ]
        .into_iter()
        .filter(|(_, present)| *present)
        .map(|(name, _)| name)
        .collect();
        let needs: &[&str] = match self.op {
            OpName::Swapoff | OpName::Swapon => &["device"],
            OpName::SetPageCluster => &["page_cluster"],
            OpName::SetReadahead => &["readahead"],
            OpName::SetVmaRa => &["vma_ra_enabled"],
            OpName::SetMemcgLimit => &["limit"],
            OpName::Mark => &["label"],
            OpName::PauseTasks | OpName::ResumeTasks | OpName::SwapOutAll => &[],
        };
        let op = serde_json::to_value(self.op).expect("op names serialise");
        let op = op.as_str().unwrap_or("?");
        for name in needs {
            if !given.contains(name) {
                bail!("{}: missing for op \"{op}\"", field(name));
            }
        }
        if let Some(extra) = given.iter().find(|g| !needs.contains(g)) {
            bail!("{}: not used by op \"{op}\"", field(extra));
        }
        if let Some(name) = &self.device {
            if !devices.iter().any(|d| &d.name == name) {
                bail!("{}: no swap device named \"{name}\"", field("device"));
            }
        }
        if let Some(pc) = self.page_cluster {
            if pc > 31 {
                bail!("{}: {pc} is outside 0..=31", field("page_cluster"));
            }
        }
        if let Some(limit) = &self.limit {
            if limit != "max" {
                ByteSize::parse(limit).map_err(|e| anyhow!("{}: {e}", field("limit")))?;
            }
        }
        Ok(())
    }

    fn trigger(&self) -> Trigger {
        if let Some(accesses) = self.after_accesses {
            return Trigger::AfterAccesses { task: self.task.unwrap_or(0), accesses };
        }
        match self.at.as_deref() {
            None | Some("after-previous") => Trigger::AfterPrevious,
            Some("workload-end") => Trigger::WorkloadEnd,
            Some(t) => Trigger::At(parse_time(t).expect("validated")),
        }
    }
}

fn default_seed() -> u64 {
    DEFAULT_SEED
}

/// `[swap]`: the core's swap knobs, the readahead policy and the devices.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct SwapSection {
    /// `vm.page-cluster`. Default 3.
    page_cluster: u32,
    /// `/sys/kernel/mm/swap/vma_ra_enabled`. Default true.
    vma_ra_enabled: bool,
    /// Slots per allocation cluster. Default 512.
    cluster_slots: u32,
    /// Readahead policy. Default "kernel": what the kernel would pick on this machine.
    readahead: ReadaheadConfig,
    /// Whether swapoff credits readahead hits: "ignored" (6.18, and before 5.8; default)
    /// or "credited" (5.8 to 6.17).
    swapoff_readahead_hits: SwapoffHits,
    /// Swap devices in swapon order.
    devices: Vec<DeviceSection>,
}

impl Default for SwapSection {
    fn default() -> SwapSection {
        let core = SwapConfig::default();
        SwapSection {
            page_cluster: core.page_cluster,
            vma_ra_enabled: core.vma_ra_enabled,
            cluster_slots: core.cluster_slots,
            readahead: ReadaheadConfig::default(),
            swapoff_readahead_hits: core.swapoff_readahead_hits,
            devices: Vec::new(),
        }
    }
}

/// `[[swap.devices]]`: one swap area and the latency model of the device under it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceSection {
    /// Name used in reports, e.g. "vda".
    name: String,
    /// Size of the swap area.
    size: ByteSize,
    /// `swapon -p`; absent gives the kernel's descending negative priorities.
    #[serde(default)]
    priority: Option<i16>,
    /// Latency model: a preset plus overrides. Default the `virtio` preset.
    #[serde(default)]
    model: DeviceConfig,
}

/// `[workload]`: a trace file or a generator, exactly one of them.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadSection {
    /// A trace in any supported format, plain, gzip- or zstd-compressed; relative to the
    /// scenario file's directory.
    #[serde(default)]
    trace: Option<PathBuf>,
    /// The trace's format: "perf", "ftrace", "lackey", "text" or "native". Default:
    /// detected from the first bytes.
    #[serde(default)]
    trace_format: Option<String>,
    /// Skip malformed trace lines, counting them by reason, instead of failing. Default false.
    #[serde(default)]
    lenient: Option<bool>,
    /// "timestamps" (default): the trace's timestamps give each task's think time;
    /// "cpu": every access costs the CPU cost profile's `access_ns`.
    #[serde(default)]
    pace: Option<String>,
    /// Replay the whole trace this many times in a row, 1..=1000. Default 1.
    #[serde(default)]
    repeat: Option<u32>,
    /// lackey: count instruction fetches as reads of their pages. Default false.
    #[serde(default)]
    instructions: Option<bool>,
    /// A synthetic workload.
    #[serde(default)]
    generator: Option<GeneratorConfig>,
}

impl WorkloadSection {
    /// The trace options that were written, by their key names.
    fn trace_keys(&self) -> Vec<&'static str> {
        [
            ("trace_format", self.trace_format.is_some()),
            ("lenient", self.lenient.is_some()),
            ("pace", self.pace.is_some()),
            ("repeat", self.repeat.is_some()),
            ("instructions", self.instructions.is_some()),
        ]
        .into_iter()
        .filter(|(_, given)| *given)
        .map(|(key, _)| key)
        .collect()
    }
}

/// Trace options given on the command line; each replaces the scenario's value.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TraceFlags {
    /// `--trace-format`.
    pub(crate) format: Option<Format>,
    /// `--lenient`.
    pub(crate) lenient: bool,
    /// `--pace`.
    pub(crate) pace: Option<Pace>,
    /// `--repeat`.
    pub(crate) repeat: Option<u32>,
    /// `--instructions`.
    pub(crate) instructions: bool,
}

impl TraceFlags {
    fn given(&self) -> Option<&'static str> {
        [
            ("--trace-format", self.format.is_some()),
            ("--lenient", self.lenient),
            ("--pace", self.pace.is_some()),
            ("--repeat", self.repeat.is_some()),
            ("--instructions", self.instructions),
        ]
        .into_iter()
        .find(|(_, given)| *given)
        .map(|(flag, _)| flag)
    }
}

/// The text of a scenario and where it came from.
#[derive(Clone, Debug)]
pub(crate) struct ScenarioSource {
    /// How error messages and reports name the scenario (its path as given).
    pub(crate) display: String,
    /// The TOML text.
    pub(crate) text: String,
    /// Directory that relative trace paths resolve against.
    pub(crate) base_dir: PathBuf,
}

impl ScenarioSource {
    /// Reads a scenario file.
    pub(crate) fn read(path: &Path) -> Result<ScenarioSource> {
        let display = path.display().to_string();
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read scenario {display}"))?;
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(ScenarioSource { display, text, base_dir })
    }
}

/// Command-line changes applied on top of the file.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoadOptions<'a> {
    /// `--set key=value` edits, in order.
    pub(crate) sets: &'a [String],
    /// `--trace`: replaces the scenario's workload.
    pub(crate) trace: Option<TraceSource>,
    /// `--seed`: replaces the scenario's seed.
    pub(crate) seed: Option<u64>,
    /// `--trace-format`, `--lenient`, ...: replace the scenario's trace options.
    pub(crate) trace_flags: TraceFlags,
}

/// The workload of a validated scenario.
#[derive(Clone, Debug)]
pub(crate) enum Workload {
    Trace(TraceInput),
    Generator(GeneratorConfig),
}

/// A validated scenario, ready to build runs from.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    /// Root seed of the run.
    pub(crate) seed: u64,
    /// What the report echoes: every section with defaults filled in.
    pub(crate) resolved: ResolvedScenario,
    /// The workload to build tasks from.
    pub(crate) workload: Workload,
    core: ValidatedConfig,
    profiles: Vec<DeviceProfile>,
    readahead_ctx: ReadaheadContext,
}

/// The effective scenario, as a report echoes it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ResolvedScenario {
    pub(crate) machine: MachineConfig,
    pub(crate) memcg: MemcgConfig,
    pub(crate) swap: ResolvedSwap,
    pub(crate) lru: LruModel,
    pub(crate) block: BlockConfig,
    pub(crate) cpu: CpuCosts,
    pub(crate) limits: LimitsConfig,
    pub(crate) workload: ResolvedWorkload,
    pub(crate) timeline: Vec<TimelineEntry>,
}

/// `[swap]` with the readahead choice resolved and every device model in full.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ResolvedSwap {
    pub(crate) page_cluster: u32,
    pub(crate) vma_ra_enabled: bool,
    pub(crate) cluster_slots: u32,
    /// The policy as configured, e.g. "kernel".
    pub(crate) readahead: ReadaheadConfig,
    /// The policy that runs, e.g. "cluster".
    pub(crate) readahead_resolved: ReadaheadConfig,
    pub(crate) swapoff_readahead_hits: SwapoffHits,
    pub(crate) devices: Vec<ResolvedDevice>,
}

/// One swap device with its complete latency profile.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ResolvedDevice {
    pub(crate) name: String,
    pub(crate) size: ByteSize,
    pub(crate) priority: Option<i16>,
    pub(crate) model: DeviceProfile,
}

/// The workload as the report names it, shaped like the `[workload]` section. Trace
/// options at their defaults are left out.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct ResolvedWorkload {
    /// The trace as named in the scenario or on the command line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) trace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) trace_format: Option<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) lenient: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pace: Option<Pace>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) repeat: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) instructions: bool,
    /// The generator with every default filled in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) generator: Option<GeneratorConfig>,
}

impl ResolvedWorkload {
    fn of_trace(name: String, input: &TraceInput) -> ResolvedWorkload {
        ResolvedWorkload {
            trace: Some(name),
            trace_format: input.format.map(Format::name),
            lenient: input.lenient,
            pace: (input.pace != Pace::default()).then_some(input.pace),
            repeat: (input.repeat != 1).then_some(input.repeat),
            instructions: input.instructions,
            generator: None,
        }
    }
}

/// Parses, edits and validates a scenario.
pub(crate) fn load(source: &ScenarioSource, options: LoadOptions<'_>) -> Result<Prepared> {
    let file = &source.display;
    let scenario = parse(source, options.sets).with_context(|| format!("scenario {file}"))?;
    validate(scenario, source, options).with_context(|| format!("scenario {file}"))
}

fn parse(source: &ScenarioSource, sets: &[String]) -> Result<Scenario> {
    // The untouched text first, so that errors point at its lines.
    let mut scenario: Scenario = toml::from_str(&source.text).map_err(|err| anyhow!("{err}"))?;
    if sets.is_empty() {
        return Ok(scenario);
    }
    let mut tree: toml::Table = source.text.parse().map_err(|err| anyhow!("{err}"))?;
    for text in sets {
        let edit = Override::parse(text).map_err(|message| anyhow!(message))?;
        edit.apply(&mut tree).map_err(|message| anyhow!(message))?;
        // Deserialise after every edit so an error is attributed to the edit that caused it.
        scenario = toml::Value::Table(tree.clone())
            .try_into()
            .map_err(|err: toml::de::Error| anyhow!("--set {}: {}", edit.text, err.message()))?;
    }
    Ok(scenario)
}

fn validate(scenario: Scenario, source: &ScenarioSource, options: LoadOptions<'_>) -> Result<Prepared> {
    let swap = scenario.swap;
    let core = CoreConfig {
        machine: scenario.machine.clone(),
        memcg: scenario.memcg.clone(),
        swap: SwapConfig {
            page_cluster: swap.page_cluster,
            vma_ra_enabled: swap.vma_ra_enabled,
            cluster_slots: swap.cluster_slots,
            swapoff_readahead_hits: swap.swapoff_readahead_hits,
        },
        devices: swap
            .devices
            .iter()
            .map(|d| SwapDeviceSpec { name: d.name.clone(), size: d.size, priority: d.priority })
            .collect(),
        lru: scenario.lru,
        block: scenario.block.clone(),
        cpu: scenario.cpu.clone(),
        limits: scenario.limits.clone(),
    };
    let core = core.validate()?;
    for (idx, entry) in scenario.timeline.iter().enumerate() {
        entry.validate(idx, &swap.devices)?;
    }
    let mut profiles = Vec::with_capacity(swap.devices.len());
    for (idx, device) in swap.devices.iter().enumerate() {
        let profile = device.model.resolve().with_context(|| format!("swap.devices[{idx}].model"))?;
        profiles.push(profile);
    }
    let readahead_ctx = ReadaheadContext {
        vma_ra_enabled: swap.vma_ra_enabled,
        any_rotational: profiles.iter().any(|p| p.rotational),
    };

    let (workload, resolved_workload) = workload(scenario.workload, source, &options)?;
    if let Workload::Trace(trace) = &workload {
        trace.check()?;
    }

    let resolved = ResolvedScenario {
        machine: scenario.machine,
        memcg: scenario.memcg,
        swap: ResolvedSwap {
            page_cluster: swap.page_cluster,
            vma_ra_enabled: swap.vma_ra_enabled,
            cluster_slots: swap.cluster_slots,
            readahead: swap.readahead,
            readahead_resolved: swap.readahead.resolve(&readahead_ctx),
            swapoff_readahead_hits: swap.swapoff_readahead_hits,
            devices: swap
                .devices
                .iter()
                .zip(&profiles)
                .map(|(d, profile)| ResolvedDevice {
                    name: d.name.clone(),
                    size: d.size,
                    priority: d.priority,
                    model: profile.clone(),
                })
                .collect(),
        },
        lru: scenario.lru,
        block: scenario.block,
        cpu: scenario.cpu,
        limits: scenario.limits,
        workload: resolved_workload,
        timeline: scenario.timeline,
    };
    Ok(Prepared {
        seed: options.seed.unwrap_or(scenario.seed),
        resolved,
        workload,
        core,
        profiles,
        readahead_ctx,
    })
}

/// Resolves `[workload]` and the command line's trace options into the workload to run.
fn workload(
    section: WorkloadSection,
    source: &ScenarioSource,
    options: &LoadOptions<'_>,
) -> Result<(Workload, ResolvedWorkload)> {
    let flags = options.trace_flags;
    let (trace, written) = match (&options.trace, &section) {
        (Some(trace), _) => (trace.clone(), trace.name()),
        (None, WorkloadSection { trace: Some(_), generator: Some(_), .. }) => {
            bail!("workload: give either trace or [workload.generator], not both")
        }
        (None, WorkloadSection { trace: None, generator: None, .. }) => {
            bail!("workload: missing; give [workload] trace = \"FILE\", a [workload.generator] section or --trace")
        }
        (None, WorkloadSection { trace: Some(path), generator: None, .. }) => {
            (TraceSource::File(source.base_dir.join(path)), path.display().to_string())
        }
        (None, WorkloadSection { trace: None, generator: Some(generator), .. }) => {
            if let Some(key) = section.trace_keys().first() {
                bail!("workload.{key}: only applies to a trace workload");
            }
            if let Some(flag) = flags.given() {
                bail!("{flag}: only applies to a trace workload (give --trace FILE)");
            }
            generator.validate()?;
            let resolved = ResolvedWorkload { generator: Some(generator.clone()), ..Default::default() };
            return Ok((Workload::Generator(generator.clone()), resolved));
        }
    };
    let format = match (flags.format, &section.trace_format) {
        (Some(format), _) => Some(format),
        (None, Some(name)) => {
            Some(tracefile::parse_format(name).map_err(|e| anyhow!("workload.trace_format: {e}"))?)
        }
        (None, None) => None,
    };
    let pace = match (flags.pace, &section.pace) {
        (Some(pace), _) => pace,
        (None, Some(name)) => Pace::from_name(name)
            .ok_or_else(|| anyhow!("workload.pace: \"{name}\" is not a pace (expected timestamps or cpu)"))?,
        (None, None) => Pace::default(),
    };
    let repeat = flags.repeat.or(section.repeat).unwrap_or(1);
    if !(1..=tracefile::REPEAT_MAX).contains(&repeat) {
        let key = if flags.repeat.is_some() { "--repeat" } else { "workload.repeat" };
        bail!("{key}: {repeat} is outside 1..={}", tracefile::REPEAT_MAX);
    }
    let input = TraceInput {
        source: trace,
        format,
        lenient: flags.lenient || section.lenient.unwrap_or(false),
        instructions: flags.instructions || section.instructions.unwrap_or(false),
        pace,
        repeat,
    };
    let resolved = ResolvedWorkload::of_trace(written, &input);
    Ok((Workload::Trace(input), resolved))
}

impl Prepared {
    /// Builds the device models, the readahead policy and the tasks of one run, and says
    /// what was found in the trace when the workload is one.
    pub(crate) fn setup(&self) -> Result<(Setup, Option<TraceReport>)> {
        let seed = self.seed;
        let mut devices = Vec::with_capacity(self.profiles.len());
        for (profile, spec) in self.profiles.iter().zip(&self.core.get().devices) {
            let rng = SimRng::derive(seed, &format!("devices.{}", spec.name));
            devices.push(profile.build(rng).with_context(|| format!("swap device {}", spec.name))?);
        }
        let readahead = self.resolved.swap.readahead.build(&self.readahead_ctx);
        let (tasks, trace_report) = match &self.workload {
            Workload::Trace(trace) => {
                let (tasks, report) = trace.tasks()?;
                (tasks, Some(report))
            }
            Workload::Generator(generator) => (generator.tasks(seed), None),
        };
        let timeline = self.timeline();
        let policies = Policies::default().with_readahead(readahead);
        Ok((Setup { config: self.core.clone(), seed, devices, policies, tasks, timeline }, trace_report))
    }

    /// The timeline as core operations, with readahead policies built for the settings in
    /// force when each operation runs.
    fn timeline(&self) -> Vec<TimelineOp> {
        let mut ctx = self.readahead_ctx;
        let mut policy = self.resolved.swap.readahead;
        self.resolved
            .timeline
            .iter()
            .map(|e| {
                let op = match e.op {
                    OpName::Swapoff => Operation::Swapoff { device: e.device.clone().expect("validated") },
                    OpName::Swapon => Operation::Swapon { device: e.device.clone().expect("validated") },
                    OpName::SetPageCluster => Operation::SetPageCluster(e.page_cluster.expect("validated")),
                    OpName::SetReadahead => {
                        policy = e.readahead.expect("validated");
                        Operation::SetReadahead(policy.build(&ctx))
                    }
                    OpName::SetVmaRa => {
                        // The knob matters through the kernel's choice of policy.
                        ctx.vma_ra_enabled = e.vma_ra_enabled.expect("validated");
                        Operation::SetReadahead(policy.build(&ctx))
                    }
                    OpName::SetMemcgLimit => Operation::SetMemcgLimit(match e.limit.as_deref() {
                        Some("max") | None => None,
                        Some(size) => Some(ByteSize::parse(size).expect("validated").pages()),
                    }),
                    OpName::PauseTasks => Operation::PauseTasks,
                    OpName::ResumeTasks => Operation::ResumeTasks,
                    OpName::SwapOutAll => Operation::SwapOutAll,
                    OpName::Mark => Operation::Mark(e.label.clone().expect("validated")),
                };
                TimelineOp { trigger: e.trigger(), op }
            })
            .collect()
    }

    /// Builds and runs the scenario once.
    pub(crate) fn run(&self) -> Result<SimReport> {
        self.run_traced().map(|(report, _)| report)
    }

    /// Builds and runs the scenario once; also says what was found in the trace.
    pub(crate) fn run_traced(&self) -> Result<(SimReport, Option<TraceReport>)> {
        let (setup, trace) = self.setup()?;
        // The core's message already includes its cause; formatting it once keeps the
        // `{:#}` chain from printing the cause twice.
        let report = swapsim_core::run(setup).map_err(|err| anyhow!("{err}"))?;
        Ok((report, trace))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// Loads `text` with `sets` applied and renders the summary line or the error chain.
    fn check(text: &str, sets: &[&str], expect: Expect) {
        let source = ScenarioSource { display: "s.toml".into(), text: text.into(), base_dir: PathBuf::new() };
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let options = LoadOptions { sets: &sets, ..Default::default() };
        let actual = match load(&source, options) {
            Ok(prepared) => crate::output::summary_line(prepared.seed, &prepared.resolved),
            Err(err) => format!("error: {err:#}"),
        };
        expect.assert_eq(&actual);
    }

    const BASE: &str = r#"
        [memcg]
        limit = "64MiB"
        [[swap.devices]]
        name = "vda"
        size = "1GiB"
        [workload.generator]
        pattern = "seq"
        region = "128MiB"
    "#;

    #[test]
    fn defaults_and_the_kernel_readahead_choice() {
        check(
            BASE,
            &[],
            expect!["seed 1 · 4GiB RAM · memcg 64MiB · swap vda 1GiB virtio · page-cluster 3 · readahead cluster (kernel)"],
        );
        // No rotational device: the kernel's choice is VMA readahead, unless it is disabled.
        check(
            BASE,
            &["swap.devices.0.model.preset=nvme", "seed=9"],
            expect!["seed 9 · 4GiB RAM · memcg 64MiB · swap vda 1GiB nvme · page-cluster 3 · readahead vma (kernel)"],
        );
        check(
            BASE,
            &["swap.devices.0.model.preset=nvme", "swap.vma_ra_enabled=false"],
            expect!["seed 1 · 4GiB RAM · memcg 64MiB · swap vda 1GiB nvme · page-cluster 3 · readahead cluster (kernel)"],
        );
        check(
            BASE,
            &["swap.readahead=none", "memcg.limit={}"],
            expect![[
                r#"error: scenario s.toml: --set memcg.limit={}: invalid type: map, expected a size such as "256MiB" or a number of bytes"#
            ]],
        );
    }

    #[test]
    fn validation_errors_name_the_field() {
        check(
            BASE,
            &["swap.page_cluster=40"],
            expect!["error: scenario s.toml: swap.page_cluster: 40 is outside 0..=31"],
        );
        check(
            BASE,
            &["swap.devices.0.model.queue_depth=0"],
            expect!["error: scenario s.toml: swap.devices[0].model: queue_depth: 0 is below 1"],
        );
        check(
            BASE,
            &["workload.generator.region=100"],
            expect!["error: scenario s.toml: workload.generator.region: 100 is smaller than one page (4096 bytes)"],
        );
    }
}
