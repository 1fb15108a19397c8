//! A case's `setup` and `workload`, read into the scenario they describe.
//!
//! Every field is read with the case file and the field's path in its error, so that a
//! malformed case names what is wrong with it. How each field maps:
//!
//! - `setup.swap.kind` "file": a swap file (`backing = "file"`) on the `this-vm` device,
//!   with `setup.swap.rotational`; "zram": a whole device (`backing = "block"`) on the
//!   `this-vm-zram` preset, the validation machine's zram fitted on top of its CPU costs.
//! - `setup.mthp_always_kib` (sizes in KiB, as strings or numbers): each size set to
//!   "always" in `[thp] hugepages`, keyed as the kernel names it ("16kB").
//! - `workload.thp` "off": `[thp] enabled = "never"`; "default": "madvise", the default.
//! - `setup.zswap`: `[zswap]` (`enabled`, `compressor`, `shrinker_enabled`,
//!   `max_pool_percent`, `accept_threshold_percent`; `ever_enabled` absent means false, a
//!   boot in which zswap's parameter was never written); the protection is the 6.18
//!   kernel's, second chance.
//! - `workload.page_contents` (words): `[workload] contents`, by the class its words name,
//!   in this order: "half" (as in "half random, half constant"), "random" or
//!   "incompressible", "text", "zero"; absent means random, as the case format says.
//! - The memory cgroup, the machine, `page_cluster` and `vma_ra_enabled` as named; the CPU
//!   costs are `CpuCosts::this_vm`, and the readahead policy is the kernel's own choice.
//! - `kernel`: the session the case was measured in; a session measured slower than the
//!   fitted speed scales the CPU costs and the device (`validate/sessions.rs`).

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use swapsim_core::config::{CpuCosts, MachineConfig, MemcgConfig};
use swapsim_core::contents::{Compressor, Contents};
use swapsim_core::thp::{order_of, ThpEnabled, ThpSizeEnabled};
use swapsim_core::{ByteSize, SwapBacking};
use swapsim_devices::DeviceConfig;
use swapsim_policies::ReadaheadConfig;

use super::{Case, CaseGroup, KernelOomKills};
use crate::scenario::queue::{JobEntry, QueueSection};
use crate::scenario::{DeviceSection, ScenarioFile, ThpSection, WorkloadSection, ZswapSection};
use crate::timeline::{TimelineEntry, TimelineOp, When};

/// Field `path` (dotted) of a case, with the case file named in the error.
pub(super) fn field<'a>(case: &'a Case, path: &str) -> Result<&'a Value> {
    let mut v = &case.doc;
    for part in path.split('.') {
        v = v.get(part).ok_or_else(|| anyhow!("{}: {path} missing", case.file.display()))?;
    }
    Ok(v)
}

/// Field `path` of a case, or `None` when it is absent.
fn optional<'a>(case: &'a Case, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(&case.doc, |v, part| v.get(part))
}

fn num(case: &Case, path: &str) -> Result<u64> {
    field(case, path)?
        .as_u64()
        .ok_or_else(|| anyhow!("{}: {path} is not a whole number", case.file.display()))
}

fn text<'a>(case: &'a Case, path: &str) -> Result<&'a str> {
    field(case, path)?.as_str().ok_or_else(|| anyhow!("{}: {path} is not a string", case.file.display()))
}

fn flag(case: &Case, path: &str) -> Result<bool> {
    field(case, path)?
        .as_bool()
        .ok_or_else(|| anyhow!("{}: {path} is not true or false", case.file.display()))
}

/// Field `path` of a case as a number that fits `T`.
fn small<T: TryFrom<u64>>(case: &Case, path: &str) -> Result<T> {
    let n = num(case, path)?;
    T::try_from(n).map_err(|_| anyhow!("{}: {path} {n} is out of range", case.file.display()))
}

/// The kind of swap device a case ran on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SwapKind {
    /// A swap file on ext4 on the virtio disk.
    File,
    /// A disk's partition (or a whole disk) used as the swap area.
    Partition,
    /// A zram device.
    Zram,
}

pub(super) fn swap_kind(case: &Case) -> Result<SwapKind> {
    match text(case, "setup.swap.kind")? {
        "file" => Ok(SwapKind::File),
        "partition" => Ok(SwapKind::Partition),
        "zram" => Ok(SwapKind::Zram),
        other => bail!(
            "{}: setup.swap.kind \"{other}\" is not \"file\", \"partition\" or \"zram\"",
            case.file.display()
        ),
    }
}

/// The mTHP sizes set to "always", keyed as `[thp] hugepages` keys them ("16kB").
pub(super) fn mthp_sizes(case: &Case) -> Result<Vec<String>> {
    let path = "setup.mthp_always_kib";
    let list = field(case, path)?
        .as_array()
        .ok_or_else(|| anyhow!("{}: {path} is not a list", case.file.display()))?;
    let mut sizes = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let kib = match item {
            Value::String(s) => s.trim().parse::<u64>().ok(),
            other => other.as_u64(),
        };
        let key = kib.map(|k| format!("{k}kB")).filter(|key| order_of(key).is_some()).ok_or_else(|| {
            anyhow!(
                "{}: {path}[{i}]: {item} is not an mTHP size in KiB (16, 32, 64, ..., 2048)",
                case.file.display()
            )
        })?;
        sizes.push(key);
    }
    Ok(sizes)
}

/// Which group of targets a case is held to.
pub(super) fn case_group(case: &Case) -> Result<CaseGroup> {
    if text(case, "kind")? == "jobs" {
        return Ok(CaseGroup::Queue);
    }
    let zram = swap_kind(case)? == SwapKind::Zram;
    if optional(case, "setup.zswap.enabled") == Some(&Value::Bool(true)) {
        return Ok(CaseGroup::Zswap);
    }
    Ok(if zram || !mthp_sizes(case)?.is_empty() { CaseGroup::MthpOrZram } else { CaseGroup::SwapFileOrder0 })
}

/// Why a case cannot be replayed by this model, if it cannot.
pub(super) fn unsupported(_case: &Case) -> Option<String> {
    None
}

/// The kernel's `measured.oom_kills`, if the case records it.
pub(super) fn kernel_oom_kills(case: &Case) -> Result<Option<KernelOomKills>> {
    if optional(case, "measured.oom_kills").is_none() {
        return Ok(None);
    }
    let runs_started = num(case, "measured.oom_kills.runs_started")?;
    let runs_oom_killed = num(case, "measured.oom_kills.runs_oom_killed")?;
    if runs_started == 0 {
        bail!("{}: measured.oom_kills.runs_started is 0, expected at least 1", case.file.display());
    }
    if runs_oom_killed > runs_started {
        bail!(
            "{}: measured.oom_kills.runs_oom_killed {runs_oom_killed} is more than runs_started {runs_started}",
            case.file.display()
        );
    }
    let note = match optional(case, "measured.oom_kills.note") {
        None => None,
        Some(_) => Some(text(case, "measured.oom_kills.note")?.to_string()),
    };
    Ok(Some(KernelOomKills { runs_started, runs_oom_killed, note }))
}

/// `[thp]` for a case: its mTHP sizes "always", the top-level setting from `workload.thp`.
fn thp_section(case: &Case) -> Result<ThpSection> {
    let enabled = match text(case, "workload.thp")? {
        "off" => ThpEnabled::Never,
        "default" => ThpEnabled::Madvise,
        other => bail!("{}: workload.thp \"{other}\" is not \"off\" or \"default\"", case.file.display()),
    };
    let hugepages: BTreeMap<String, ThpSizeEnabled> =
        mthp_sizes(case)?.into_iter().map(|size| (size, ThpSizeEnabled::Always)).collect();
    Ok(ThpSection { enabled, hugepages, ..ThpSection::default() })
}

/// `[zswap]` for a case.
fn zswap_section(case: &Case) -> Result<ZswapSection> {
    let bool_or = |path: &str, default: bool| -> Result<bool> {
        match optional(case, path) {
            None => Ok(default),
            Some(_) => flag(case, path),
        }
    };
    let percent = |path: &str| -> Result<Option<u32>> {
        match optional(case, path) {
            None => Ok(None),
            Some(_) => Ok(Some(small(case, path)?)),
        }
    };
    let enabled = bool_or("setup.zswap.enabled", false)?;
    let compressor = match optional(case, "setup.zswap.compressor") {
        None => Compressor::default(),
        Some(_) => {
            let name = text(case, "setup.zswap.compressor")?;
            serde_json::from_value(Value::String(name.to_string())).map_err(|_| {
                anyhow!(
                    "{}: setup.zswap.compressor \"{name}\" is not one of lzo, lzo-rle, lz4, zstd, deflate",
                    case.file.display()
                )
            })?
        }
    };
    Ok(ZswapSection {
        enabled,
        ever_enabled: bool_or("setup.zswap.ever_enabled", false)?,
        compressor,
        shrinker_enabled: bool_or("setup.zswap.shrinker_enabled", false)?,
        max_pool_percent: percent("setup.zswap.max_pool_percent")?,
        accept_threshold_percent: percent("setup.zswap.accept_threshold_percent")?,
        ..ZswapSection::default()
    })
}

/// `[workload] contents` from the case's words for its pages.
fn page_contents(case: &Case) -> Result<Option<Contents>> {
    if optional(case, "workload.page_contents").is_none() {
        return Ok(None);
    }
    let words = text(case, "workload.page_contents")?.to_ascii_lowercase();
    let contents = if words.contains("half") {
        Contents::Half
    } else if words.contains("random") || words.contains("incompressible") {
        Contents::Random
    } else if words.contains("text") {
        Contents::Text
    } else if words.contains("zero") {
        Contents::Zero
    } else {
        bail!(
            "{}: workload.page_contents \"{words}\" names no known class (random, half, zero, text)",
            case.file.display()
        );
    };
    Ok(Some(contents))
}

/// The swap device a case describes: its name in the scenario and its section.
fn device(case: &Case) -> Result<DeviceSection> {
    let rotational = flag(case, "setup.swap.rotational")?;
    let size = ByteSize(num(case, "setup.swap.size_bytes")?);
    let (name, backing, preset) = match swap_kind(case)? {
        SwapKind::File => ("vda", SwapBacking::File, "this-vm"),
        SwapKind::Partition => ("disk", SwapBacking::Block, "this-vm"),
        SwapKind::Zram => ("zram0", SwapBacking::Block, "this-vm-zram"),
    };
    Ok(DeviceSection {
        backing: Some(backing),
        name: name.into(),
        size,
        priority: None,
        model: DeviceConfig { rotational: Some(rotational), ..DeviceConfig::preset(preset) },
    })
}

/// The fitted disk of the case folder `dir` ([`super::DEVICE_PROFILE`]), when it has one.
pub(super) fn fitted_disk(dir: &Path) -> Result<Option<DeviceConfig>> {
    let path = dir.join(super::DEVICE_PROFILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => bail!("cannot read {}: {err}", path.display()),
    };
    let model: DeviceConfig = toml::from_str(&text).map_err(|err| anyhow!("{}: {err}", path.display()))?;
    model.resolve().map_err(|err| anyhow!("{}: {err}", path.display()))?;
    Ok(Some(model))
}

/// The scheduler's base slice on the validation machine: 750 µs scaled for its 2 CPUs
/// online (the kernel scales by the CPUs online, not by the one the workload is pinned to).
const BASE_SLICE_NS: u64 = 1_500_000;

/// The validation machine's vCPUs (`../reference/measuring-the-kernel.md`: the workload
/// pinned to one, the measuring tools to the other, mostly idle).
const MACHINE_VCPUS: u32 = 2;

/// Kernel memory each of the cases' processes charges to the memory cgroup beside its PTE
/// pages (`memcg.process_kmem`): 2 pages, as `memory.kmem.usage_in_bytes` read through
/// `D2-mthp16-64-seq768-p3-zram`'s passes (386 pages with the region's 384 PTE pages),
/// the upper page-table level and slab of the region's mapping (docs/mthp-seq-lockstep.md).
/// The queue cases read about 61 pages with three jobs running, about 4 per job beyond
/// their PTE pages; they get the same 2, not fitted apart.
const PROCESS_KMEM_BYTES: u64 = 2 * swapsim_core::PAGE_SIZE;

/// The launcher's delays for a queue case, fitted to the visible queue cases' job start
/// times (`measured.jobs_timing`, medians over runs): the launcher, on the other CPU,
/// starts the first job 19.5 ms after the queue's start and each further first job 7.5
/// ms after the one before (it starts them one after another); a later job starts 18.5 ms
/// after a running job's exit frees its slot (medians of 16.0 to 19.9 ms over the four
/// visible cases).
const FIRST_JOB_DELAY_NS: u64 = 19_500_000;
const NEXT_FIRST_JOB_NS: u64 = 7_500_000;
const SLOT_JOB_DELAY_NS: u64 = 18_500_000;

/// How far a launch delay strays from its fitted value, either way: the spread of the
/// visible cases' launch gaps between runs (their middle half lies within about 3 ms of
/// the median).
const LAUNCH_JITTER_NS: u64 = 3_000_000;

/// Gives each job of a queue case's scenario a launch delay drawn for `seed`: its fitted
/// delay ± [`LAUNCH_JITTER_NS`], uniformly. The kernel's runs of a queue differ in which
/// jobs overlap; the launcher's timing is one cause the model can replay, so each seed
/// replays the queue as one run of the launcher.
pub(super) fn jitter_launches(file: &mut ScenarioFile, seed: u64) {
    use rand::Rng;
    let Some(queue) = &mut file.workload.queue else { return };
    let mut rng = swapsim_core::rng::SimRng::derive(seed, "validate.launches");
    for entry in &mut queue.jobs {
        if let JobEntry::Job { delay: Some(delay), .. } = entry {
            let Some(ns) = delay.strip_suffix("ns").and_then(|n| n.parse::<u64>().ok()) else { continue };
            let jittered = ns - LAUNCH_JITTER_NS + rng.random_range(0..=2 * LAUNCH_JITTER_NS);
            *delay = format!("{jittered}ns");
        }
    }
}

/// `[workload]` for a queue case: each job's trace with its launch delay.
fn queue_workload(case: &Case) -> Result<WorkloadSection> {
    let concurrency: u32 = small(case, "workload.queue.concurrency")?;
    let jobs = field(case, "workload.queue.jobs")?
        .as_array()
        .ok_or_else(|| anyhow!("{}: workload.queue.jobs is not a list", case.file.display()))?;
    let mut entries = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        let trace = job["trace"].as_str().ok_or_else(|| {
            anyhow!("{}: workload.queue.jobs[{i}].trace is missing or not a string", case.file.display())
        })?;
        let delay_ns = match u64::try_from(i).ok().filter(|&i| i < u64::from(concurrency)) {
            Some(k) => FIRST_JOB_DELAY_NS + k * NEXT_FIRST_JOB_NS,
            None => SLOT_JOB_DELAY_NS,
        };
        entries.push(JobEntry::Job { trace: PathBuf::from(trace), delay: Some(format!("{delay_ns}ns")) });
    }
    Ok(WorkloadSection {
        queue: Some(QueueSection {
            concurrency,
            jobs: entries,
            traces: None,
            delay: None,
            embedded: Vec::new(),
        }),
        contents: page_contents(case)?,
        ..WorkloadSection::default()
    })
}

/// The scenario a case describes.
pub(super) fn scenario_file(case: &Case, dir: &Path) -> Result<ScenarioFile> {
    let kind = text(case, "kind")?;
    let version = num(case, "setup.memcg_version")?;
    let workload = match kind {
        "jobs" => queue_workload(case)?,
        // Relative to the case directory, which the scenario is loaded from.
        _ => WorkloadSection {
            trace: Some(PathBuf::from(text(case, "workload.trace")?)),
            contents: page_contents(case)?,
            ..WorkloadSection::default()
        },
    };
    let mut file = ScenarioFile {
        seed: 1,
        machine: MachineConfig {
            memory: ByteSize(num(case, "setup.machine_ram_bytes")?),
            cpus: small(case, "setup.cpus")?,
            base_slice_ns: Some(BASE_SLICE_NS),
            // The workload is pinned to `setup.cpus` of the machine's 2 vCPUs; unbound
            // kernel work (zswap's pool-limit worker) runs on the other one.
            housekeeping_cpus: MACHINE_VCPUS.saturating_sub(small(case, "setup.cpus")?),
            ..MachineConfig::default()
        },
        memcg: MemcgConfig {
            limit: Some(ByteSize(num(case, "setup.memcg_limit_bytes")?)),
            swappiness: small(case, "setup.swappiness")?,
            version: u8::try_from(version).map_err(|_| {
                anyhow!("{}: setup.memcg_version {version} is out of range", case.file.display())
            })?,
            process_kmem: ByteSize(PROCESS_KMEM_BYTES),
            ..MemcgConfig::default()
        },
        thp: thp_section(case)?,
        zswap: zswap_section(case)?,
        cpu: CpuCosts::this_vm(),
        workload,
        ..ScenarioFile::default()
    };
    file.swap.page_cluster = small(case, "setup.page_cluster")?;
    file.swap.vma_ra_enabled = flag(case, "setup.vma_ra_enabled")?;
    file.swap.readahead = ReadaheadConfig::Kernel.into();
    let mut device = device(case)?;
    let kernel = match optional(case, "kernel") {
        Some(_) => Some(text(case, "kernel")?),
        None => None,
    };
    if let Some(session) = kernel.and_then(super::sessions::session) {
        let contents = page_contents(case)?.unwrap_or(Contents::Random);
        file.cpu = session.cpu_costs(&contents, file.zswap.enabled.then_some(file.zswap.compressor));
        device.model = session.device(device.model);
    }
    if swap_kind(case)? != SwapKind::Zram {
        if let Some(model) = fitted_disk(dir)? {
            // Measured in the session the case was: no session's scaling applies to it.
            device.model = DeviceConfig { rotational: device.model.rotational, ..model };
        }
    }
    let device_name = device.name.clone();
    file.swap.devices = vec![device];
    match kind {
        "jobs" => {}
        "live" => {
            // Mark where the fill ends: the trace header says how many accesses it has;
            // without one, the fill writes every page of the region once.
            let trace = text(case, "workload.trace")?;
            let region_pages = num(case, "workload.region_bytes")? / 4096;
            let fill = fill_accesses(&dir.join(trace)).unwrap_or(region_pages);
            let when = When { after_accesses: Some(fill), ..When::default() };
            file.timeline.push(TimelineEntry::new(when, TimelineOp::Mark { label: "fill-end".into() }));
        }
        "swapoff" => {
            let ops = field(case, "operations")?
                .as_array()
                .ok_or_else(|| anyhow!("{}: operations is not a list", case.file.display()))?;
            for (i, op) in ops.iter().enumerate() {
                match op["op"].as_str() {
                    Some("run_trace") => {}
                    Some("set_memcg_limit") => {
                        let bytes = op["bytes"].as_u64().with_context(|| {
                            format!("{}: operations[{i}].bytes is not a whole number", case.file.display())
                        })?;
                        let when = When { at: Some("workload-end".into()), ..When::default() };
                        let op = TimelineOp::SetMemcgLimit { limit: bytes.to_string() };
                        file.timeline.push(TimelineEntry::new(when, op));
                    }
                    Some("swapoff") => file.timeline.push(TimelineEntry::new(
                        When::default(),
                        TimelineOp::Swapoff { device: device_name.clone() },
                    )),
                    other => {
                        bail!("{}: operations[{i}].op {other:?} is not known", case.file.display())
                    }
                }
            }
        }
        other => bail!("{}: kind \"{other}\" is not \"live\", \"swapoff\" or \"jobs\"", case.file.display()),
    }
    Ok(file)
}

/// `fill_accesses=N` from a validation trace's `#` header line, if present.
fn fill_accesses(trace: &Path) -> Option<u64> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(trace).ok()?;
    let reader: Box<dyn Read> = if trace.extension().is_some_and(|e| e == "zst") {
        Box::new(zstd::stream::read::Decoder::new(file).ok()?)
    } else {
        Box::new(file)
    };
    let mut first = String::new();
    std::io::BufReader::new(reader.take(64 * 1024)).read_line(&mut first).ok()?;
    swapsim_trace_formats::text::header_value(&first, "fill_accesses").ok()??.parse().ok()
}
