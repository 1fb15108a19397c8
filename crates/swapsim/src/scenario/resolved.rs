//! The effective scenario, as a report echoes it: every default filled in, every device
//! model expanded to its full profile, the readahead choice resolved.

use crate::registry::{
    AllocatorChoice, ReadaheadChoice, SwapinChoice, ZswapProtectionChoice, ZswapWritebackChoice,
};
use serde::Serialize;
use swapsim_core::config::{
    BlockConfig, CpuCosts, HibernationConfig, LimitsConfig, LruGenConfig, LruModel, MachineConfig,
    MemcgConfig, SwapoffHits,
};
use swapsim_core::gen::{GeneratorConfig, JobsConfig};
use swapsim_core::thp::ThpHint;
use swapsim_core::ByteSize;
use swapsim_devices::DeviceProfile;
use swapsim_trace_formats::{Format, ObjectMap, Pace};

use crate::timeline::TimelineEntry;
use crate::trace::TraceInput;

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
    /// `[lru_gen]`.
    pub lru_gen: LruGenConfig,
    /// `[hibernation]`, echoed only when it differs from the defaults (the hibernation
    /// operations read it; reports of runs without them stay as they were).
    #[serde(skip_serializing_if = "is_default_hibernation")]
    pub hibernation: HibernationConfig,
    /// `[thp]`.
    pub thp: ThpSection,
    /// `[zswap]`.
    pub zswap: ZswapSection,
    /// `[block]`.
    pub block: BlockConfig,
    /// `[cpu]`.
    pub cpu: CpuCosts,
    /// `[limits]`.
    pub limits: LimitsConfig,
    /// `[workload]`.
    pub workload: ResolvedWorkload,
    /// `[report]`, present only when the run is sampled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<super::ResolvedReport>,
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
    pub readahead: ReadaheadChoice,
    /// The policy that runs, e.g. "cluster".
    pub readahead_resolved: ReadaheadChoice,
    /// Whether swapoff credits readahead hits.
    pub swapoff_readahead_hits: SwapoffHits,
    /// The slot allocator, echoed only when it is not the default ("kernel").
    #[serde(skip_serializing_if = "AllocatorChoice::is_default")]
    pub allocator: AllocatorChoice,
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
    /// The trace as named in the scenario or by [`Scenario::with_trace`](crate::Scenario::with_trace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The trace's format, when it was given rather than detected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_format: Option<&'static str>,
    /// Whether malformed lines are skipped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lenient: bool,
    /// Where think time comes from, when not from the timestamps, by its name
    /// ([`Pace::name`]).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "pace_name")]
    pub pace: Option<Pace>,
    /// How many times the trace is replayed, when more than once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// lackey: whether instruction fetches count as reads.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub instructions: bool,
    /// libCacheSim traces: the object mapping, when not the default modulo 1GiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_map: Option<&'static str>,
    /// libCacheSim traces: the modulo mapping's region, when not the default 1GiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_region: Option<ByteSize>,
    /// libCacheSim's txt and csv traces: the trace parameters, when any are given, in the
    /// syntax `trace_params` takes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_params: Option<String>,
    /// The generator with every default filled in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator: Option<GeneratorConfig>,
    /// A trace's regions' madvise hint, when not "default".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub madvise: Option<ThpHint>,
    /// What the workload's pages hold, when not random bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contents: Option<swapsim_core::contents::Contents>,
    /// The job queue with every default filled in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<JobsConfig>,
    /// The queue of traces: its concurrency and each job's trace and delay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<super::queue::ResolvedQueue>,
}

impl ResolvedWorkload {
    pub(super) fn of_trace(name: String, input: &TraceInput) -> ResolvedWorkload {
        ResolvedWorkload {
            trace: Some(name),
            trace_format: input.format.map(Format::name),
            lenient: input.lenient,
            pace: (input.pace != Pace::default()).then_some(input.pace),
            repeat: (input.repeat != 1).then_some(input.repeat),
            instructions: input.instructions,
            object_map: (input.object_map != ObjectMap::default()).then_some(input.object_map.name()),
            object_region: match input.object_map {
                ObjectMap::Modulo { region_pages } if input.object_map != ObjectMap::default() => {
                    Some(ByteSize(region_pages * 4096))
                }
                _ => None,
            },
            trace_params: (!input.params.is_empty()).then(|| input.params.to_string()),
            madvise: (input.madvise != ThpHint::Default).then_some(input.madvise),
            contents: None,
            generator: None,
            jobs: None,
            queue: None,
        }
    }
}

/// `[zswap]`: zswap's parameters (`/sys/module/zswap/parameters/`) and the shrinkers'
/// protection policy.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ZswapSection {
    /// `enabled`. Default false.
    pub enabled: bool,
    /// The pool was created earlier in this boot (any write of `enabled`), which turns
    /// large swap-in off. Implied by `enabled`. Default false.
    pub ever_enabled: bool,
    /// `compressor`: "lzo" (default), "lzo-rle", "lz4", "zstd" or "deflate".
    pub compressor: swapsim_core::contents::Compressor,
    /// `max_pool_percent`, 0..=100. Default 20.
    pub max_pool_percent: Option<u32>,
    /// `accept_threshold_percent`, 0..=100. Default 90.
    pub accept_threshold_percent: Option<u32>,
    /// `shrinker_enabled`. Default false.
    pub shrinker_enabled: bool,
    /// Pages that do not compress below a page: "store" (6.18, default) or "reject".
    pub incompressible: swapsim_core::zswap::Incompressible,
    /// The shrinkers' protection: "second-chance" (6.12+, default) or "decay" (6.8–6.11).
    pub protection: ZswapProtectionChoice,
    /// The pool-limit worker's trigger: "kernel" (6.12 to 6.18, default), "pre-6.12" or
    /// "proactive" (an unmerged 2024 series). Echoed only when not the default.
    #[serde(skip_serializing_if = "ZswapWritebackChoice::is_default")]
    pub writeback: ZswapWritebackChoice,
}

impl ZswapSection {
    /// The core's form of the parameters.
    pub(crate) fn core(&self) -> swapsim_core::zswap::ZswapConfig {
        let d = swapsim_core::zswap::ZswapConfig::default();
        swapsim_core::zswap::ZswapConfig {
            enabled: self.enabled,
            ever_enabled: self.ever_enabled,
            compressor: self.compressor,
            max_pool_percent: self.max_pool_percent.unwrap_or(d.max_pool_percent),
            accept_threshold_percent: self.accept_threshold_percent.unwrap_or(d.accept_threshold_percent),
            shrinker_enabled: self.shrinker_enabled,
            incompressible: self.incompressible,
        }
    }
}

/// `[thp]`: the kernel's transparent huge page knobs and the swap-in size policy.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ThpSection {
    /// Top-level `enabled`: "always", "madvise" (default) or "never".
    pub enabled: swapsim_core::thp::ThpEnabled,
    /// Per size, `hugepages-<size>kB/enabled` ("always", "inherit", "madvise", "never"),
    /// keyed "16kB" .. "2048kB". Unlisted sizes keep the kernel default: 2048kB
    /// "inherit", the others "never".
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub hugepages: std::collections::BTreeMap<String, swapsim_core::thp::ThpSizeEnabled>,
    /// Swap-in size policy: "kernel" (default), "order0" or "throttled".
    pub swapin: SwapinChoice,
}

fn is_default_hibernation(h: &HibernationConfig) -> bool {
    *h == HibernationConfig::default()
}

/// Serialises a pace by its stable name: the pace type belongs to trace-formats, which
/// knows no serialisation library.
fn pace_name<S: serde::Serializer>(pace: &Option<Pace>, serializer: S) -> Result<S::Ok, S::Error> {
    match pace {
        Some(pace) => serializer.serialize_some(pace.name()),
        None => serializer.serialize_none(),
    }
}
