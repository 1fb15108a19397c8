//! `[workload]` and the trace options that replace its own: which workload a scenario
//! runs, and where its trace is.
//!
//! A relative trace path written in the scenario file resolves against the file's
//! directory; one given on the command line (`--trace`, or `--set workload.trace=`)
//! resolves against the current directory. A trace that cannot be opened is reported with
//! the path as resolved and where it was given.

use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use swapsim_core::gen::{GeneratorConfig, JobsConfig};
use swapsim_core::ByteSize;
use swapsim_trace_formats::oracle::{REGION_PAGES_DEFAULT, REGION_PAGES_MAX};
use swapsim_trace_formats::{Format, ObjectMap, Pace, TraceParams};

use super::queue::QueueSection;
use super::{ResolvedWorkload, Scenario, Workload};
use crate::trace::{self, PathOrigin, TraceInput, TraceSource};

/// `[workload]`: a trace file, a generator or a job queue, exactly one of them.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkloadSection {
    /// A trace in any supported format, plain, gzip- or zstd-compressed. Relative to the
    /// scenario file's directory when written in the file, to the current directory when
    /// given by `--set`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) trace: Option<PathBuf>,
    /// The trace's format: "perf", "ftrace", "lackey", "text", "native", "oracle-general",
    /// "lcs", "libcachesim-txt" or "libcachesim-csv". Default: detected from the first
    /// bytes (never libcachesim-csv, which must be named).
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
    /// libCacheSim traces (oracle-general, lcs, libcachesim-txt, libcachesim-csv): how
    /// object ids become pages, "modulo"
    /// (the id modulo `object_region`) or "dense" (0, 1, 2, ... in order of first
    /// request). Default "modulo".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) object_map: Option<String>,
    /// libCacheSim traces with `object_map = "modulo"`: the region object ids wrap around,
    /// a whole number of 4 KiB pages up to 128 TiB. Default 1GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) object_region: Option<ByteSize>,
    /// libCacheSim's txt and csv traces: the trace parameters in libCacheSim's own syntax,
    /// e.g. "obj-id-col=2,time-col=1,delimiter=\\t" (see traces/README.md). libcachesim-csv
    /// needs obj-id-col; libcachesim-txt takes obj-id-is-num only; other formats take none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) trace_params: Option<String>,
    /// A synthetic workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) generator: Option<GeneratorConfig>,
    /// A trace's regions' madvise hint for transparent huge pages: "default", "hugepage"
    /// (`MADV_HUGEPAGE`) or "nohugepage", for the regions it declares and those it maps on
    /// first touch. Default "default". A generator sets its own (`generator.madvise`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) madvise: Option<swapsim_core::thp::ThpHint>,
    /// What the workload's pages hold, which decides how they compress: "random"
    /// (default), "half", "text", "zero", or `{ sizes = [[bytes, weight], ...] }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) contents: Option<swapsim_core::contents::Contents>,
    /// A queue of short-lived processes run `-j N` at a time, shaped like a kernel build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) jobs: Option<JobsConfig>,
    /// A queue of traces, each replayed as a process of its own, `-j N` at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) queue: Option<QueueSection>,
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
            ("object_map", self.object_map.is_some()),
            ("object_region", self.object_region.is_some()),
            ("trace_params", self.trace_params.is_some()),
            ("madvise", self.madvise.is_some()),
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
    /// libCacheSim traces: how object ids become pages; `None` keeps the scenario's.
    pub object_map: Option<ObjectMap>,
    /// libCacheSim's txt and csv traces: the trace parameters; `None` keeps the
    /// scenario's.
    pub params: Option<TraceParams>,
}

impl TraceFlags {
    fn given(&self) -> Option<&'static str> {
        [
            ("--trace-format", self.format.is_some()),
            ("--lenient", self.lenient),
            ("--pace", self.pace.is_some()),
            ("--repeat", self.repeat.is_some()),
            ("--instructions", self.instructions),
            ("--object-map or --object-region", self.object_map.is_some()),
            ("--trace-params", self.params.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given)
        .map(|(flag, _)| flag)
    }
}

/// Resolves `[workload]` and the replacing trace options into the workload to run.
pub(super) fn resolve(section: WorkloadSection, scenario: &Scenario) -> Result<(Workload, ResolvedWorkload)> {
    let flags = scenario.trace_flags;
    let given: Vec<&str> = [
        ("trace", section.trace.is_some()),
        ("[workload.generator]", section.generator.is_some()),
        ("[workload.jobs]", section.jobs.is_some()),
        ("[workload.queue]", section.queue.is_some()),
    ]
    .into_iter()
    .filter(|(_, given)| *given)
    .map(|(name, _)| name)
    .collect();
    if scenario.trace.is_none() && given.len() > 1 {
        bail!(
            "workload: give one of trace, [workload.generator], [workload.jobs] or [workload.queue], not {}",
            given.join(" and ")
        );
    }
    if let (None, Some(queue)) = (&scenario.trace, &section.queue) {
        if let Some(flag) = [("--repeat", flags.repeat.is_some()), ("--instructions", flags.instructions)]
            .into_iter()
            .find(|(_, given)| *given)
            .map(|(flag, _)| flag)
        {
            bail!("{flag}: does not apply to a queue of traces");
        }
        if section.repeat.is_some() {
            bail!("workload.repeat: does not apply to a queue of traces");
        }
        let template = trace_options(
            &section,
            flags,
            TraceSource::Embedded { name: "", bytes: &[] },
            PathOrigin::TraceFlag,
        )?;
        let (input, resolved_queue) = queue.resolve(&scenario.base_dir, &template)?;
        let mut resolved = ResolvedWorkload::of_trace(String::new(), &template);
        resolved.trace = None;
        resolved.queue = Some(resolved_queue);
        return Ok((Workload::Queue(input), resolved));
    }
    let (trace, written, origin) = match (&scenario.trace, &section) {
        (Some(trace), _) => (trace.clone(), trace.name(), PathOrigin::TraceFlag),
        (None, WorkloadSection { trace: None, generator: None, jobs: None, .. }) => {
            bail!(
                "workload: missing; give [workload] trace = \"FILE\", a [workload.generator], [workload.jobs] \
                 or [workload.queue] section, or --trace"
            )
        }
        (None, WorkloadSection { jobs: Some(jobs), .. }) => {
            check_no_trace_options(&section, flags)?;
            jobs.validate()?;
            let resolved = ResolvedWorkload { jobs: Some(jobs.clone()), ..Default::default() };
            return Ok((Workload::Jobs(jobs.clone()), resolved));
        }
        (None, WorkloadSection { trace: Some(path), .. }) => {
            let (origin, resolved) = if scenario.edited_paths.contains(&"workload.trace") {
                (PathOrigin::Edit("workload.trace"), path.clone())
            } else {
                let origin = PathOrigin::ScenarioFile { key: "workload.trace", relative: path.is_relative() };
                (origin, scenario.base_dir.join(path))
            };
            (TraceSource::File(resolved), path.display().to_string(), origin)
        }
        (None, WorkloadSection { generator: Some(generator), .. }) => {
            check_no_trace_options(&section, flags)?;
            generator.validate()?;
            let resolved = ResolvedWorkload { generator: Some(generator.clone()), ..Default::default() };
            return Ok((Workload::Generator(generator.clone()), resolved));
        }
    };
    let input = trace_options(&section, flags, trace, origin)?;
    let resolved = ResolvedWorkload::of_trace(written, &input);
    Ok((Workload::Trace(input), resolved))
}

/// The trace options of `[workload]` and the replacing flags, for a trace at `source`.
fn trace_options(
    section: &WorkloadSection,
    flags: TraceFlags,
    source: TraceSource,
    origin: PathOrigin,
) -> Result<TraceInput> {
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
    let object_map = match flags.object_map {
        Some(object_map) => object_map,
        None => object_map_of(section)?,
    };
    let params = match (flags.params, &section.trace_params) {
        (Some(params), _) => params,
        (None, Some(text)) => TraceParams::parse(text).map_err(|e| anyhow!("workload.trace_params: {e}"))?,
        (None, None) => TraceParams::default(),
    };
    Ok(TraceInput {
        source,
        origin,
        format,
        lenient: flags.lenient || section.lenient.unwrap_or(false),
        instructions: flags.instructions || section.instructions.unwrap_or(false),
        object_map,
        params,
        madvise: section.madvise.unwrap_or_default(),
        pace,
        repeat,
        cache: None,
    })
}

/// `workload.object_map` and `workload.object_region`, checked.
fn object_map_of(section: &WorkloadSection) -> Result<ObjectMap> {
    let region_pages = match section.object_region {
        None => None,
        Some(size) => {
            let bytes = size.0;
            if bytes == 0 || !bytes.is_multiple_of(4096) || bytes / 4096 > REGION_PAGES_MAX {
                bail!("workload.object_region: {size} is not a whole number of 4 KiB pages in 4KiB..=128TiB");
            }
            Some(bytes / 4096)
        }
    };
    Ok(match (section.object_map.as_deref(), region_pages) {
        (Some("dense"), Some(_)) => bail!("workload.object_region: only applies to object_map = \"modulo\""),
        (Some("dense"), None) => ObjectMap::Dense,
        (Some("modulo") | None, region_pages) => {
            ObjectMap::Modulo { region_pages: region_pages.unwrap_or(REGION_PAGES_DEFAULT) }
        }
        (Some(other), _) => {
            bail!("workload.object_map: \"{other}\" is not an object mapping (expected modulo or dense)")
        }
    })
}

/// A generated workload (generator or job queue) takes none of the trace options.
fn check_no_trace_options(section: &WorkloadSection, flags: TraceFlags) -> Result<()> {
    if let Some(key) = section.trace_keys().first() {
        bail!("workload.{key}: only applies to a trace workload");
    }
    if let Some(flag) = flags.given() {
        bail!("{flag}: only applies to a trace workload (give --trace FILE)");
    }
    Ok(())
}
