//! The scenario: parse, then edit, then validate, then build.
//!
//! A scenario is TOML composed from the section types the other crates own
//! ([`MachineConfig`], [`MemcgConfig`], [`DeviceConfig`], [`ReadaheadConfig`],
//! [`GeneratorConfig`], ...). Only `[swap]`, `[workload]` and `[[timeline]]` are shaped
//! here, because they gather fields from several crates. Every table rejects unknown keys.
//! The file format is an API boundary: people write these files by hand.
//!
//! * Parse: [`Scenario::from_toml`] deserialises the text as written, so shape errors
//!   carry its line and column. [`Scenario::set`] applies a `--set` edit to the TOML tree
//!   and deserialises the tree again, so an edit that names no real key is rejected with
//!   the edit quoted.
//! * Validate: [`Scenario::prepare`] runs [`CoreConfig::validate`], resolves every device
//!   model to a full [`DeviceProfile`], checks the generator's ranges, the timeline and
//!   "exactly one workload", and returns a [`Prepared`] scenario.
//! * Build: [`Prepared::setup`] makes fresh device models (each on its own random stream,
//!   derived from the seed and the device name), the readahead policy and the tasks. It can
//!   be called again for another run of the same scenario.
//!
//! Scenarios built inside this crate (experiments, validation cases) are typed values
//! ([`ScenarioFile`]) that take the same validation path as a file.

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
use swapsim_devices::{DeviceConfig, DeviceProfile};
use swapsim_policies::{ReadaheadConfig, ReadaheadContext};
use swapsim_trace_formats::Format;

use crate::overrides::Override;
use crate::timeline::{self, CheckedEntry, TimelineEntry};
use crate::trace::{self, Pace, TraceInput, TraceReport, TraceSource};

/// The seed a scenario runs with when it names none.
const DEFAULT_SEED: u64 = 1;

/// How a scenario given as text with no name is named in messages.
const INLINE_NAME: &str = "<inline>";

/// A scenario file as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScenarioFile {
    /// Root seed of every random stream. Default 1.
    #[serde(default = "default_seed")]
    pub(crate) seed: u64,
    #[serde(default)]
    pub(crate) machine: MachineConfig,
    #[serde(default)]
    pub(crate) memcg: MemcgConfig,
    #[serde(default)]
    pub(crate) swap: SwapSection,
    /// LRU model: "classic" (the kernel's two lists, default) or "exact".
    #[serde(default)]
    pub(crate) lru: LruModel,
    #[serde(default)]
    pub(crate) block: BlockConfig,
    #[serde(default)]
    pub(crate) cpu: CpuCosts,
    #[serde(default)]
    pub(crate) limits: LimitsConfig,
    #[serde(default)]
    pub(crate) workload: WorkloadSection,
    /// Operations applied during the run, in order.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "timeline::deserialize_entries"
    )]
    pub(crate) timeline: Vec<TimelineEntry>,
}

impl Default for ScenarioFile {
    /// An empty file: every section at its default, no devices, no workload.
    fn default() -> ScenarioFile {
        ScenarioFile {
            seed: DEFAULT_SEED,
            machine: MachineConfig::default(),
            memcg: MemcgConfig::default(),
            swap: SwapSection::default(),
            lru: LruModel::default(),
            block: BlockConfig::default(),
            cpu: CpuCosts::default(),
            limits: LimitsConfig::default(),
            workload: WorkloadSection::default(),
            timeline: Vec::new(),
        }
    }
}

fn default_seed() -> u64 {
    DEFAULT_SEED
}

/// `[swap]`: the core's swap knobs, the readahead policy and the devices.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct SwapSection {
    /// `vm.page-cluster`. Default 3.
    pub(crate) page_cluster: u32,
    /// `/sys/kernel/mm/swap/vma_ra_enabled`. Default true.
    pub(crate) vma_ra_enabled: bool,
    /// Slots per allocation cluster. Default 512.
    pub(crate) cluster_slots: u32,
    /// Readahead policy. Default "kernel": what the kernel would pick on this machine.
    pub(crate) readahead: ReadaheadConfig,
    /// Whether swapoff credits readahead hits: "ignored" (6.18, and before 5.8; default)
    /// or "credited" (5.8 to 6.17).
    pub(crate) swapoff_readahead_hits: SwapoffHits,
    /// Swap devices in swapon order.
    pub(crate) devices: Vec<DeviceSection>,
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
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeviceSection {
    /// Name used in reports, e.g. "vda".
    pub(crate) name: String,
    /// Size of the swap area.
    pub(crate) size: ByteSize,
    /// `swapon -p`; absent gives the kernel's descending negative priorities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) priority: Option<i16>,
    /// Latency model: a preset plus overrides. Default the `virtio` preset.
    #[serde(default)]
    pub(crate) model: DeviceConfig,
}

/// `[workload]`: a trace file or a generator, exactly one of them.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkloadSection {
    /// A trace in any supported format, plain, gzip- or zstd-compressed; relative to the
    /// scenario file's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) trace: Option<PathBuf>,
    /// The trace's format: "perf", "ftrace", "lackey", "text" or "native". Default:
    /// detected from the first bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) trace_format: Option<String>,
    /// Skip malformed trace lines, counting them by reason, instead of failing. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lenient: Option<bool>,
    /// "timestamps" (default): the trace's timestamps give each task's think time;
    /// "cpu": every access costs the CPU cost profile's `access_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pace: Option<String>,
    /// Replay the whole trace this many times in a row, 1..=1000. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) repeat: Option<u32>,
    /// lackey: count instruction fetches as reads of their pages. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<bool>,
    /// A synthetic workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) generator: Option<GeneratorConfig>,
}

impl WorkloadSection {
    /// A workload of generated accesses.
    pub(crate) fn generator(generator: GeneratorConfig) -> WorkloadSection {
        WorkloadSection { generator: Some(generator), ..WorkloadSection::default() }
    }

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

/// Trace options that replace the scenario's own (`swapsim run --trace-format`,
/// `--lenient`, ...). They apply to a trace workload only.
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceFlags {
    /// The trace's format; `None` keeps the scenario's (or detects it).
    pub format: Option<Format>,
    /// Skip malformed lines, counting them, instead of failing.
    pub lenient: bool,
    /// Where think time comes from; `None` keeps the scenario's.
    pub pace: Option<Pace>,
    /// Replay the whole trace this many times in a row; `None` keeps the scenario's.
    pub repeat: Option<u32>,
    /// lackey: count instruction fetches as reads of their pages.
    pub instructions: bool,
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

/// A scenario as written, with any edits applied: not yet validated.
///
/// Build one from TOML text or a file, edit it with [`Scenario::set`] (the key syntax of
/// `swapsim run --set`), then [`run`](Scenario::run) it, or [`prepare`](Scenario::prepare)
/// it once and run the result as often as needed.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file as last deserialised.
    file: ScenarioFile,
    /// The TOML tree edits are applied to; made from `file` on the first edit when the
    /// scenario was built as a typed value.
    tree: Option<toml::Table>,
    /// How messages and reports name the scenario (its path as given).
    name: String,
    /// Directory that relative trace paths resolve against.
    base_dir: PathBuf,
    seed: Option<u64>,
    trace: Option<TraceSource>,
    trace_flags: TraceFlags,
}

impl Scenario {
    /// Parses a scenario from TOML text. Relative trace paths resolve against the current
    /// directory.
    pub fn from_toml(text: &str) -> Result<Scenario> {
        Scenario::from_toml_named(text, INLINE_NAME, PathBuf::new())
    }

    /// Parses a scenario from TOML text, naming it `name` in messages and resolving
    /// relative trace paths against `base_dir`.
    pub fn from_toml_named(
        text: &str,
        name: impl Into<String>,
        base_dir: impl Into<PathBuf>,
    ) -> Result<Scenario> {
        let name = name.into();
        let parsed: Result<(ScenarioFile, toml::Table)> = (|| {
            // The untouched text first, so that errors point at its lines.
            let file: ScenarioFile = toml::from_str(text).map_err(|err| anyhow!("{err}"))?;
            let tree: toml::Table = text.parse().map_err(|err| anyhow!("{err}"))?;
            Ok((file, tree))
        })();
        let (file, tree) = parsed.with_context(|| format!("scenario {name}"))?;
        Ok(Scenario {
            file,
            tree: Some(tree),
            name,
            base_dir: base_dir.into(),
            seed: None,
            trace: None,
            trace_flags: TraceFlags::default(),
        })
    }

    /// Reads and parses a scenario file; trace paths in it are relative to its directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read scenario {name}"))?;
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Scenario::from_toml_named(&text, name, base_dir)
    }

    /// A scenario built as a typed value inside this crate.
    pub(crate) fn from_file(
        file: ScenarioFile,
        name: impl Into<String>,
        base_dir: impl Into<PathBuf>,
    ) -> Scenario {
        Scenario {
            file,
            tree: None,
            name: name.into(),
            base_dir: base_dir.into(),
            seed: None,
            trace: None,
            trace_flags: TraceFlags::default(),
        }
    }

    /// Sets the dotted `key` (`memcg.limit`, `swap.devices.0.model.preset`) to `value`,
    /// as `swapsim run --set key=value` does: `value` is read as a TOML value when it is
    /// one (`0`, `true`, `{ preset = "nvme" }`) and as a string otherwise (`128MiB`).
    pub fn set(self, key: &str, value: &str) -> Result<Scenario> {
        self.edit(&format!("{key}={value}"))
    }

    /// Applies one `key=value` edit, the argument of `--set` as typed.
    pub fn edit(mut self, edit: &str) -> Result<Scenario> {
        let name = self.name.clone();
        self.apply(edit).with_context(|| format!("scenario {name}"))?;
        Ok(self)
    }

    /// Applies `edits` in order, as repeated `--set` arguments.
    pub fn edits<S: AsRef<str>>(self, edits: &[S]) -> Result<Scenario> {
        edits.iter().try_fold(self, |scenario, edit| scenario.edit(edit.as_ref()))
    }

    fn apply(&mut self, text: &str) -> Result<()> {
        let edit = Override::parse(text).map_err(|message| anyhow!(message))?;
        let tree = match &mut self.tree {
            Some(tree) => tree,
            None => self.tree.insert(
                toml::Table::try_from(&self.file).map_err(|err| anyhow!("--set {}: {err}", edit.text))?,
            ),
        };
        edit.apply(tree).map_err(|message| anyhow!(message))?;
        // Deserialise after every edit so an error is attributed to the edit that caused it.
        self.file = toml::Value::Table(tree.clone())
            .try_into()
            .map_err(|err: toml::de::Error| anyhow!("--set {}: {}", edit.text, err.message()))?;
        Ok(())
    }

    /// Replaces the scenario's seed (`swapsim run --seed`).
    pub fn with_seed(self, seed: u64) -> Scenario {
        Scenario { seed: Some(seed), ..self }
    }

    /// Replays `trace` instead of the scenario's workload (`swapsim run --trace`).
    pub fn with_trace(self, trace: TraceSource) -> Scenario {
        Scenario { trace: Some(trace), ..self }
    }

    /// Replaces the scenario's trace options.
    pub fn with_trace_flags(self, trace_flags: TraceFlags) -> Scenario {
        Scenario { trace_flags, ..self }
    }

    /// How messages and reports name the scenario: its path as given, or `<inline>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Validates the scenario and opens its trace, if it has one, to check it.
    pub fn prepare(&self) -> Result<Prepared> {
        validate(self).with_context(|| format!("scenario {}", self.name))
    }

    /// Validates, builds and runs the scenario once.
    pub fn run(&self) -> Result<SimReport> {
        self.prepare()?.run()
    }
}

/// The workload of a validated scenario.
#[derive(Clone, Debug)]
enum Workload {
    Trace(TraceInput),
    Generator(GeneratorConfig),
}

/// A validated scenario, ready to build runs from.
#[derive(Clone, Debug)]
pub struct Prepared {
    seed: u64,
    resolved: ResolvedScenario,
    workload: Workload,
    core: ValidatedConfig,
    profiles: Vec<DeviceProfile>,
    readahead_ctx: ReadaheadContext,
    timeline: Vec<CheckedEntry>,
}

/// The effective scenario, as a report echoes it: every section with its defaults filled
/// in and every device model expanded to its full profile.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ResolvedScenario {
    /// `[machine]`.
    pub machine: MachineConfig,
    /// `[memcg]`.
    pub memcg: MemcgConfig,
    /// `[swap]`.
    pub swap: ResolvedSwap,
    /// `lru`.
    pub lru: LruModel,
    /// `[block]`.
    pub block: BlockConfig,
    /// `[cpu]`.
    pub cpu: CpuCosts,
    /// `[limits]`.
    pub limits: LimitsConfig,
    /// `[workload]`.
    pub workload: ResolvedWorkload,
    /// `[[timeline]]`, as written.
    pub timeline: Vec<TimelineEntry>,
}

/// `[swap]` with the readahead choice resolved and every device model in full.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ResolvedSwap {
    /// `vm.page-cluster`.
    pub page_cluster: u32,
    /// `vma_ra_enabled`.
    pub vma_ra_enabled: bool,
    /// Slots per allocation cluster.
    pub cluster_slots: u32,
    /// The policy as configured, e.g. "kernel".
    pub readahead: ReadaheadConfig,
    /// The policy that runs, e.g. "cluster".
    pub readahead_resolved: ReadaheadConfig,
    /// Whether swapoff credits readahead hits.
    pub swapoff_readahead_hits: SwapoffHits,
    /// The swap devices in swapon order.
    pub devices: Vec<ResolvedDevice>,
}

/// One swap device with its complete latency profile.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ResolvedDevice {
    /// The device's name.
    pub name: String,
    /// Size of the swap area.
    pub size: ByteSize,
    /// `swapon -p`, if given.
    pub priority: Option<i16>,
    /// The latency profile, every field resolved.
    pub model: DeviceProfile,
}

/// The workload as the report names it, shaped like the `[workload]` section. Trace
/// options at their defaults are left out.
#[derive(Clone, Debug, Default, Serialize)]
#[non_exhaustive]
pub struct ResolvedWorkload {
    /// The trace as named in the scenario or by [`Scenario::with_trace`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The trace's format, when it was given rather than detected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_format: Option<&'static str>,
    /// Whether malformed lines are skipped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lenient: bool,
    /// Where think time comes from, when not from the timestamps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pace: Option<Pace>,
    /// How many times the trace is replayed, when more than once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// lackey: whether instruction fetches count as reads.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub instructions: bool,
    /// The generator with every default filled in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator: Option<GeneratorConfig>,
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

fn validate(scenario: &Scenario) -> Result<Prepared> {
    let file = scenario.file.clone();
    let swap = file.swap;
    let core = CoreConfig {
        machine: file.machine.clone(),
        memcg: file.memcg.clone(),
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
        lru: file.lru,
        block: file.block.clone(),
        cpu: file.cpu.clone(),
        limits: file.limits.clone(),
    };
    let core = core.validate()?;
    let device_names: Vec<&str> = swap.devices.iter().map(|d| d.name.as_str()).collect();
    let timeline = file
        .timeline
        .iter()
        .enumerate()
        .map(|(idx, entry)| entry.check(idx, &device_names))
        .collect::<Result<Vec<CheckedEntry>>>()?;
    let mut profiles = Vec::with_capacity(swap.devices.len());
    for (idx, device) in swap.devices.iter().enumerate() {
        let profile = device.model.resolve().with_context(|| format!("swap.devices[{idx}].model"))?;
        profiles.push(profile);
    }
    let readahead_ctx = ReadaheadContext {
        vma_ra_enabled: swap.vma_ra_enabled,
        any_rotational: profiles.iter().any(|p| p.rotational),
    };

    let (workload, resolved_workload) = workload(file.workload, scenario)?;
    if let Workload::Trace(trace) = &workload {
        trace.check()?;
    }

    let resolved = ResolvedScenario {
        machine: file.machine,
        memcg: file.memcg,
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
        lru: file.lru,
        block: file.block,
        cpu: file.cpu,
        limits: file.limits,
        workload: resolved_workload,
        timeline: file.timeline,
    };
    Ok(Prepared {
        seed: scenario.seed.unwrap_or(file.seed),
        resolved,
        workload,
        core,
        profiles,
        readahead_ctx,
        timeline,
    })
}

/// Resolves `[workload]` and the replacing trace options into the workload to run.
fn workload(section: WorkloadSection, scenario: &Scenario) -> Result<(Workload, ResolvedWorkload)> {
    let flags = scenario.trace_flags;
    let (trace, written) = match (&scenario.trace, &section) {
        (Some(trace), _) => (trace.clone(), trace.name()),
        (None, WorkloadSection { trace: Some(_), generator: Some(_), .. }) => {
            bail!("workload: give either trace or [workload.generator], not both")
        }
        (None, WorkloadSection { trace: None, generator: None, .. }) => {
            bail!("workload: missing; give [workload] trace = \"FILE\", a [workload.generator] section or --trace")
        }
        (None, WorkloadSection { trace: Some(path), generator: None, .. }) => {
            (TraceSource::File(scenario.base_dir.join(path)), path.display().to_string())
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
            Some(trace::parse_format(name).map_err(|e| anyhow!("workload.trace_format: {e}"))?)
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
    if !(1..=trace::REPEAT_MAX).contains(&repeat) {
        let key = if flags.repeat.is_some() { "--repeat" } else { "workload.repeat" };
        bail!("{key}: {repeat} is outside 1..={}", trace::REPEAT_MAX);
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
    /// The root seed of every run.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The effective scenario, as reports echo it.
    pub fn resolved(&self) -> &ResolvedScenario {
        &self.resolved
    }

    /// The generator, when the workload is generated rather than a trace.
    pub fn generator(&self) -> Option<&GeneratorConfig> {
        match &self.workload {
            Workload::Generator(generator) => Some(generator),
            Workload::Trace(_) => None,
        }
    }

    /// Builds the device models, the readahead policy and the tasks of one run, and says
    /// what was found in the trace when the workload is one.
    pub fn setup(&self) -> Result<(Setup, Option<TraceReport>)> {
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
        let timeline = timeline::operations(&self.timeline, self.resolved.swap.readahead, self.readahead_ctx);
        let policies = Policies::default().with_readahead(readahead);
        Ok((Setup { config: self.core.clone(), seed, devices, policies, tasks, timeline }, trace_report))
    }

    /// Builds and runs the scenario once.
    pub fn run(&self) -> Result<SimReport> {
        self.run_traced().map(|(report, _)| report)
    }

    /// Builds and runs the scenario once; also says what was found in the trace.
    pub fn run_traced(&self) -> Result<(SimReport, Option<TraceReport>)> {
        self.run_with_progress(&())
    }
}

#[cfg(test)]
mod tests;
mod watch;
