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
//!   model to a full [`DeviceProfile`], checks the generator's or the job queue's ranges,
//!   the timeline and "exactly one workload", and returns a [`Prepared`] scenario.
//! * Build: [`Prepared::setup`] makes fresh device models (each on its own random stream,
//!   derived from the seed and the device name), the readahead policy and the tasks. It can
//!   be called again for another run of the same scenario.
//!
//! Scenarios built inside this crate (experiments, validation cases) are typed values
//! ([`ScenarioFile`]) that take the same validation path as a file.

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use swapsim_core::config::{
    BlockConfig, CpuCosts, HibernationConfig, LimitsConfig, LruGenConfig, LruModel, MachineConfig,
    MemcgConfig, SwapConfig, SwapoffHits,
};
use swapsim_core::gen::{GeneratorConfig, JobsConfig};
use swapsim_core::thp::ThpConfig;
use swapsim_core::{
    ByteSize, CoreConfig, Policies, Setup, SimReport, SimRng, SwapBacking, SwapDeviceSpec, ValidatedConfig,
};
use swapsim_devices::{DeviceConfig, DeviceProfile};
use swapsim_policies::ReadaheadContext;

use crate::next_use::NextUses;
use crate::overrides::Override;
use crate::registry::{self, AllocatorChoice, Family, PolicyContext, ReadaheadChoice, Registry};
use crate::timeline::{self, CheckedEntry, TimelineEntry};
use crate::trace::{TraceCache, TraceInput, TraceReport, TraceSource, TraceTally};

mod host;
mod keys;
mod prepare;
pub(crate) mod queue;
use prepare::{check_policies, validate};
mod report;
mod resolved;
mod workload;

pub use report::{parse_sample_every, ResolvedReport};
pub use resolved::{
    ResolvedDevice, ResolvedScenario, ResolvedSwap, ResolvedWorkload, ThpSection, ZswapSection,
};
pub use workload::TraceFlags;
pub(crate) use workload::WorkloadSection;

/// The seed a scenario runs with when it names none.
const DEFAULT_SEED: u64 = 1;

/// How a scenario given as text with no name is named in messages.
const INLINE_NAME: &str = "<inline>";

/// The keys whose values are file paths. A relative path written in the scenario file is
/// relative to the file's directory; one given by an edit (`--set`) is relative to the
/// current directory, as every path typed on a command line is.
const PATH_KEYS: [&str; 1] = ["workload.trace"];

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
    /// LRU model: "classic" (the kernel's two lists, default), "mglru" (the
    /// multi-generational LRU), "exact" (a strict LRU cache) or "opt" (Belady's optimal
    /// policy; a trace workload only).
    #[serde(default)]
    pub(crate) lru: LruModel,
    /// MGLRU's knobs (`enabled`, `min_ttl_ms`), read with `lru = "mglru"`.
    #[serde(default)]
    pub(crate) lru_gen: LruGenConfig,
    /// Hibernation's settings (`kernel_image`, `freeze_ms`, `poweroff_ms`), read by the
    /// `hibernate` and `resume` operations.
    #[serde(default)]
    pub(crate) hibernation: HibernationConfig,
    /// Transparent huge pages, mTHP sizes and the swap-in size policy.
    #[serde(default)]
    pub(crate) thp: ThpSection,
    /// zswap's parameters and protection policy.
    #[serde(default)]
    pub(crate) zswap: ZswapSection,
    #[serde(default)]
    pub(crate) block: BlockConfig,
    #[serde(default)]
    pub(crate) cpu: CpuCosts,
    #[serde(default)]
    pub(crate) limits: LimitsConfig,
    #[serde(default)]
    pub(crate) workload: WorkloadSection,
    /// What the report holds besides its totals (`sample_every`).
    #[serde(default, skip_serializing_if = "report::ReportSection::is_default")]
    pub(crate) report: report::ReportSection,
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
            lru_gen: LruGenConfig::default(),
            hibernation: HibernationConfig::default(),
            thp: ThpSection::default(),
            zswap: ZswapSection::default(),
            block: BlockConfig::default(),
            cpu: CpuCosts::default(),
            limits: LimitsConfig::default(),
            workload: WorkloadSection::default(),
            report: report::ReportSection::default(),
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
    pub(crate) readahead: ReadaheadChoice,
    /// Whether swapoff credits readahead hits: "ignored" (6.18, and before 5.8; default)
    /// or "credited" (5.8 to 6.17).
    pub(crate) swapoff_readahead_hits: SwapoffHits,
    /// Slot allocator: "kernel" (6.18; default), "free-list-scan" (before 6.12) or
    /// "hibernate-slow-path" (hibernation's slots as 6.15 to 6.19 took them).
    #[serde(skip_serializing_if = "AllocatorChoice::is_default")]
    pub(crate) allocator: AllocatorChoice,
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
            readahead: ReadaheadChoice::default(),
            swapoff_readahead_hits: core.swapoff_readahead_hits,
            allocator: AllocatorChoice::default(),
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
    /// "file" (a swap file: large folios are split at swap-out) or "block" (a partition
    /// or zram). Default "block" for a synchronous device, "file" otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) backing: Option<SwapBacking>,
    /// Latency model: a preset plus overrides. Default the `virtio` preset.
    #[serde(default)]
    pub(crate) model: DeviceConfig,
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
    /// Directory that relative paths written in the scenario resolve against.
    base_dir: PathBuf,
    /// The path keys (of [`PATH_KEYS`]) set by an edit rather than by the file: their
    /// relative paths resolve against the current directory.
    edited_paths: Vec<&'static str>,
    seed: Option<u64>,
    trace: Option<TraceSource>,
    trace_flags: TraceFlags,
    /// The policies the scenario may name beyond the built-in ones.
    registry: Arc<Registry>,
    /// The sampling interval given apart from the file (`swapsim run --sample-every`).
    sample_every: Option<swapsim_core::SimDuration>,
}

impl Scenario {
    /// Parses a scenario from TOML text. Relative paths in it resolve against the current
    /// directory.
    pub fn from_toml(text: &str) -> Result<Scenario> {
        Scenario::from_toml_named(text, INLINE_NAME, PathBuf::new())
    }

    /// Parses a scenario from TOML text, naming it `name` in messages and resolving
    /// relative paths written in it against `base_dir`.
    pub fn from_toml_named(
        text: &str,
        name: impl Into<String>,
        base_dir: impl Into<PathBuf>,
    ) -> Result<Scenario> {
        Scenario::parse(text, name.into(), base_dir.into(), Arc::default())
    }

    /// Parses a scenario from TOML text that may name the policies `registry` holds.
    /// Relative paths in it resolve against the current directory.
    pub fn from_toml_with(text: &str, registry: Arc<Registry>) -> Result<Scenario> {
        Scenario::parse(text, INLINE_NAME.to_owned(), PathBuf::new(), registry)
    }

    /// Reads and parses a scenario file that may name the policies `registry` holds.
    pub fn load_with(path: impl AsRef<Path>, registry: Arc<Registry>) -> Result<Scenario> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read scenario {name}"))?;
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Scenario::parse(&text, name, base_dir, registry)
    }

    /// Replaces the policies the scenario may name, and checks the names it has.
    pub fn with_registry(self, registry: Arc<Registry>) -> Result<Scenario> {
        check_policies(&self.file, &registry)
            .map_err(|(key, message)| anyhow!("{key}: {message}"))
            .with_context(|| format!("scenario {}", self.name))?;
        Ok(Scenario { registry, ..self })
    }

    /// The policies the scenario may name beyond the built-in ones.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    fn parse(text: &str, name: String, base_dir: PathBuf, registry: Arc<Registry>) -> Result<Scenario> {
        let parsed: Result<(ScenarioFile, toml::Table)> = (|| {
            // The untouched text first, so that errors point at its lines; a bad value is
            // also named by its key.
            let file: ScenarioFile = toml::from_str(text).map_err(|err| {
                match err.span().and_then(|span| keys::key_at(text, span)) {
                    Some(key) => anyhow!("{key}: {err}"),
                    None => anyhow!("{err}"),
                }
            })?;
            let tree: toml::Table = text.parse().map_err(|err| anyhow!("{err}"))?;
            check_policies(&file, &registry).map_err(|(key, message)| match keys::place_of(text, &key) {
                Some((line, column)) => anyhow!("{key}: line {line}, column {column}: {message}"),
                None => anyhow!("{key}: {message}"),
            })?;
            Ok((file, tree))
        })();
        let (file, tree) = parsed.with_context(|| format!("scenario {name}"))?;
        Ok(Scenario {
            file,
            tree: Some(tree),
            name,
            base_dir,
            edited_paths: Vec::new(),
            seed: None,
            trace: None,
            trace_flags: TraceFlags::default(),
            registry,
            sample_every: None,
        })
    }

    /// Reads and parses a scenario file; relative paths in it are relative to its directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario> {
        Scenario::load_with(path, Arc::default())
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
            edited_paths: Vec::new(),
            seed: None,
            trace: None,
            trace_flags: TraceFlags::default(),
            registry: Arc::default(),
            sample_every: None,
        }
    }

    /// Sets the dotted `key` (`memcg.limit`, `swap.devices.0.model.preset`) to `value`,
    /// as `swapsim run --set key=value` does: `value` is read as a TOML value when it is
    /// one (`0`, `true`, `{ preset = "nvme" }`) and as a string otherwise (`128MiB`).
    /// A relative path set this way (`workload.trace`) is relative to the current
    /// directory, like the path of [`Scenario::with_trace`], not to the scenario file's.
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
        check_policies(&self.file, &self.registry)
            .map_err(|(key, message)| anyhow!("--set {}: {key}: {message}", edit.text))?;
        let key = edit.key();
        for path_key in PATH_KEYS {
            let covered = path_key == key
                || path_key.strip_prefix(key.as_str()).is_some_and(|rest| rest.starts_with('.'));
            if covered && !self.edited_paths.contains(&path_key) {
                self.edited_paths.push(path_key);
            }
        }
        Ok(())
    }

    /// Replaces the scenario's seed (`swapsim run --seed`).
    pub fn with_seed(self, seed: u64) -> Scenario {
        Scenario { seed: Some(seed), ..self }
    }

    /// Samples the run every `every` of simulated time into the report's `series`,
    /// whatever `[report] sample_every` says (`swapsim run --sample-every`).
    pub fn with_sample_every(self, every: swapsim_core::SimDuration) -> Scenario {
        Scenario { sample_every: Some(every), ..self }
    }

    /// Replays `trace` instead of the scenario's workload (`swapsim run --trace`). A
    /// relative path is relative to the current directory.
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
    Jobs(JobsConfig),
    Queue(queue::QueueInput),
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
    registry: Arc<Registry>,
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
            Workload::Trace(_) | Workload::Jobs(_) | Workload::Queue(_) => None,
        }
    }

    /// Reads the scenario's traces, if it has any (a trace or a queue's), through `cache`, shared with other
    /// scenarios replaying the same trace, and announces `setups` calls of
    /// [`Prepared::setup`] to come, after which the cache lets the trace go.
    pub(crate) fn share_trace_reads(&mut self, cache: &Arc<TraceCache>, setups: usize) {
        let inputs: Vec<&mut TraceInput> = match &mut self.workload {
            Workload::Trace(input) => vec![input],
            Workload::Queue(queue) => queue.jobs.iter_mut().map(|job| &mut job.input).collect(),
            Workload::Generator(_) | Workload::Jobs(_) => Vec::new(),
        };
        for input in inputs {
            input.cache = Some(Arc::clone(cache));
            for _ in 0..setups {
                cache.expect(&input.cache_key());
            }
        }
    }

    /// Builds the device models, the readahead policy and the tasks of one run, and says
    /// what was found in the trace when the workload is one.
    pub fn setup(&self) -> Result<(Setup, Option<TraceReport>)> {
        let (setup, tally, _) = self.setup_with(TraceInput::tasks)?;
        Ok((setup, tally))
    }

    /// [`Prepared::setup`] for a run of its own: the trace may be counted while the run
    /// reads it ([`TraceInput::tasks_for_run`]), its report given after the run; a queue's
    /// jobs' traces likewise, each with its own tally, third.
    pub(crate) fn setup_for_run(&self) -> Result<(Setup, Option<TraceTally>, Vec<TraceTally>)> {
        self.setup_with(TraceInput::tasks_for_run)
    }

    /// [`Prepared::setup`], with `tasks` building a trace's tasks; also what `tasks` said of
    /// each of a queue's traces.
    fn setup_with<T>(
        &self,
        tasks: impl Fn(&TraceInput, NextUses) -> Result<(Vec<swapsim_core::TaskSpec>, T)>,
    ) -> Result<(Setup, Option<T>, Vec<T>)> {
        let seed = self.seed;
        let mut devices = Vec::with_capacity(self.profiles.len());
        for (profile, spec) in self.profiles.iter().zip(&self.core.get().devices) {
            let rng = SimRng::derive(seed, &format!("devices.{}", spec.name));
            devices.push(profile.build(rng).with_context(|| format!("swap device {}", spec.name))?);
        }
        let ctx = PolicyContext {
            seed,
            readahead: self.readahead_ctx,
            page_cluster: self.resolved.swap.page_cluster,
            family: Family::Readahead,
            name: "",
        };
        let registry = &self.registry;
        let readahead = registry.readahead(&self.resolved.swap.readahead, &ctx)?;
        let mut queue_tallies = Vec::new();
        let (tasks, trace_report) = match &self.workload {
            Workload::Trace(trace) => {
                let next_uses = match self.core.get().lru {
                    LruModel::Opt => NextUses::Carried,
                    _ => NextUses::Omitted,
                };
                let (tasks, report) = tasks(trace, next_uses)?;
                (tasks, Some(report))
            }
            Workload::Generator(generator) => (generator.tasks(seed), None),
            Workload::Jobs(jobs) => (jobs.tasks(seed), None),
            Workload::Queue(queue) => {
                let (tasks, tallies) = queue.tasks(&tasks)?;
                queue_tallies = tallies;
                (tasks, None)
            }
        };
        let timeline = timeline::operations(&self.timeline, &self.resolved.swap.readahead, registry, ctx)?;
        let (mut tasks, trace_report) = (tasks, trace_report);
        if let Some(contents) = &self.resolved.workload.contents {
            for task in &mut tasks {
                for region in &mut task.regions {
                    region.contents = contents.clone();
                }
            }
        }
        let policies = Policies::default()
            .with_readahead(readahead)
            .with_swapin(registry.swapin(&self.resolved.thp.swapin, &ctx)?)
            .with_zswap(registry.zswap_protection(&self.resolved.zswap.protection, &ctx)?)
            .with_zswap_writeback(registry.zswap_writeback(&self.resolved.zswap.writeback, &ctx)?)
            .with_allocator(registry.allocator(&self.resolved.swap.allocator, &ctx)?);
        Ok((
            Setup { config: self.core.clone(), seed, devices, policies, tasks, timeline },
            trace_report,
            queue_tallies,
        ))
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

/// A small scenario that swaps, for the crate's tests: a sequential pass twice over 4 MiB
/// under a 2 MiB limit.
#[cfg(test)]
pub(crate) const SMALL_SWAPPING: &str = r#"
[memcg]
limit = "2MiB"
[[swap.devices]]
name = "vda"
size = "16MiB"
[workload.generator]
pattern = "seq"
region = "4MiB"
passes = 2
"#;

#[cfg(test)]
mod tests;
mod watch;
