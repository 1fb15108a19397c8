//! `[[timeline]]` in a scenario: operations run one after another during a run.
//!
//! An entry is a trigger (`at`, or `after_accesses` with `task`) and one operation, chosen
//! by `op`. Each operation is a variant of [`TimelineOp`] carrying exactly its own fields,
//! so deserialising rejects a field that belongs to another operation, and building the
//! core's [`Operation`] needs no "was this field given" checks.
//!
//! The trigger and the operation share one TOML table. serde cannot combine
//! `deny_unknown_fields` with `flatten`, so [`TimelineEntry`] deserialises by hand: it
//! takes the trigger keys out of the table and hands the rest to [`TimelineOp`], whose
//! variants reject anything else.
//!
//! Shape errors name the entry's line and its index (`timeline[2]: unknown field ...`);
//! the checks of names and ranges, which need the whole scenario ([`TimelineEntry::check`]),
//! name the field as `timeline[2].device`.

use crate::registry::{PolicyContext, ReadaheadChoice, Registry};
use anyhow::{anyhow, bail, Result};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use swapsim_core::{ByteSize, HibernateOp, Operation, SimDuration, SimTime, TaskId, Trigger};

/// One `[[timeline]]` entry: when it runs and what it does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimelineEntry {
    /// When the operation starts.
    #[serde(flatten)]
    pub when: When,
    /// The operation.
    #[serde(flatten)]
    pub op: TimelineOp,
}

/// When a timeline operation starts. `at` is "after-previous" (the default),
/// "workload-end" or a simulated time such as "2.5s" or "150ms"; instead,
/// `after_accesses = N` (with `task`, default 0) fires when that task has completed N
/// accesses.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// "after-previous", "workload-end" or a time such as "2.5s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Fire when task `task` has completed this many accesses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_accesses: Option<u64>,
    /// The task `after_accesses` counts; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<usize>,
}

/// The operations a timeline can hold, each with exactly its own fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum TimelineOp {
    /// Disable a swap device, reading every page on it back in.
    Swapoff {
        /// The device's name.
        device: String,
    },
    /// Enable a swap device again.
    Swapon {
        /// The device's name.
        device: String,
    },
    /// Set `vm.page-cluster`, 0..=31.
    SetPageCluster {
        /// The new value.
        page_cluster: u32,
    },
    /// Switch the readahead policy.
    SetReadahead {
        /// The new policy.
        readahead: ReadaheadChoice,
    },
    /// Set `vma_ra_enabled`, which matters through the kernel's choice of policy.
    SetVmaRa {
        /// The new value.
        vma_ra_enabled: bool,
    },
    /// Set `memory.max`.
    SetMemcgLimit {
        /// A size such as "4GiB", or "max" for no limit.
        limit: String,
    },
    // The three operations without fields are empty struct variants, not unit variants:
    // serde ignores unknown keys next to the tag of a unit variant.
    /// Stop the workload's tasks.
    PauseTasks {},
    /// Let the workload's tasks run again.
    ResumeTasks {},
    /// Reclaim every anonymous page to swap.
    SwapOutAll {},
    /// Hibernate: shrink memory until the image fits `image_size`, write the image to a
    /// swap device, power off.
    Hibernate {
        /// `/sys/power/image_size` as a size ("3GiB"; "0" = as small as possible); default
        /// 2/5 of RAM, as the kernel sets it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        image_size: Option<String>,
        /// Compress the image (default true, as the kernel does; false = nocompress).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        compress: Option<bool>,
        /// The resume device; default the swap device with the highest priority.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
    },
    /// Resume from the hibernation image.
    Resume {
        /// Time from power-on to reading the image, such as "3s" (the default).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        boot: Option<String>,
    },
    /// `/sys/power/mm_reclaim/run`: reclaim `pages` pages, 0 = as many as possible.
    MmReclaimRun {
        /// Pages to reclaim, 0 = as many as possible.
        pages: i64,
        /// Give up after this long, such as "30s".
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<String>,
    },
    /// `/sys/power/mm_reclaim/release`: swap `pages` pages back in, 0 = all.
    MmReclaimRelease {
        /// Pages to bring back, 0 = all.
        pages: i64,
    },
    /// Record a named point in the report.
    Mark {
        /// The point's name.
        label: String,
    },
}

impl<'de> Deserialize<'de> for TimelineEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TimelineEntry, D::Error> {
        let mut table = toml::Table::deserialize(deserializer)?;
        let mut trigger = toml::Table::new();
        for key in ["at", "after_accesses", "task"] {
            if let Some(value) = table.remove(key) {
                trigger.insert(key.to_string(), value);
            }
        }
        let when =
            When::deserialize(toml::Value::Table(trigger)).map_err(|err| D::Error::custom(err.message()))?;
        let op = TimelineOp::deserialize(toml::Value::Table(table)).map_err(|err| {
            let message = err.message();
            // The operation sees only its own keys; say that the trigger keys exist too.
            if message.starts_with("unknown field") {
                D::Error::custom(format!("{message} (besides the trigger keys at, after_accesses and task)"))
            } else {
                D::Error::custom(message)
            }
        })?;
        Ok(TimelineEntry { when, op })
    }
}

/// Deserialises `[[timeline]]`, naming a bad entry by its index: `timeline[2]: ...`.
pub(crate) fn deserialize_entries<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<TimelineEntry>, D::Error> {
    struct Entries;
    impl<'de> serde::de::Visitor<'de> for Entries {
        type Value = Vec<TimelineEntry>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an array of [[timeline]] tables")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::new();
            loop {
                let idx = entries.len();
                match seq.next_element::<TimelineEntry>() {
                    Ok(Some(entry)) => entries.push(entry),
                    Ok(None) => return Ok(entries),
                    Err(err) => {
                        // The span stays with the element; only the message gains the index.
                        return Err(A::Error::custom(format!(
                            "timeline[{idx}]: {}",
                            err.to_string().trim_end()
                        )));
                    }
                }
            }
        }
    }
    deserializer.deserialize_seq(Entries)
}

/// A timeline entry after its checks: the trigger parsed and the limit in pages.
#[derive(Clone, Debug)]
pub(crate) struct CheckedEntry {
    trigger: Trigger,
    op: CheckedOp,
}

/// A [`TimelineOp`] with its values parsed; readahead policies are built per run.
#[derive(Clone, Debug)]
enum CheckedOp {
    Swapoff(String),
    Swapon(String),
    SetPageCluster(u32),
    SetReadahead(ReadaheadChoice),
    SetVmaRa(bool),
    SetMemcgLimit(Option<u64>),
    PauseTasks,
    ResumeTasks,
    SwapOutAll,
    Hibernate(HibernateOp),
    Resume(SimDuration),
    MmReclaimRun(u64, Option<SimDuration>),
    MmReclaimRelease(u64),
    Mark(String),
}

impl TimelineEntry {
    /// The readahead policy a `set-readahead` entry names.
    pub(crate) fn readahead(&self) -> Option<&ReadaheadChoice> {
        match &self.op {
            TimelineOp::SetReadahead { readahead } => Some(readahead),
            _ => None,
        }
    }

    /// An entry that runs `op` when `when` says.
    pub fn new(when: When, op: TimelineOp) -> TimelineEntry {
        TimelineEntry { when, op }
    }

    /// Checks the trigger and the operation's values against the scenario's devices,
    /// naming the field as `timeline[idx].field`.
    pub(crate) fn check(&self, idx: usize, device_names: &[&str]) -> Result<CheckedEntry> {
        let field = |name: &str| format!("timeline[{idx}].{name}");
        let when = &self.when;
        if when.at.is_some() && when.after_accesses.is_some() {
            bail!("{}: give either at or after_accesses, not both", field("at"));
        }
        let trigger = match (when.after_accesses, when.at.as_deref()) {
            (Some(accesses), _) => {
                Trigger::AfterAccesses { task: TaskId::from_index(when.task.unwrap_or(0)), accesses }
            }
            (None, None | Some("after-previous")) => Trigger::AfterPrevious,
            (None, Some("workload-end")) => Trigger::WorkloadEnd,
            (None, Some(at)) => Trigger::At(parse_time(at).map_err(|e| anyhow!("{}: {e}", field("at")))?),
        };
        if when.task.is_some() && when.after_accesses.is_none() {
            bail!("{}: only used with after_accesses", field("task"));
        }
        let device = |name: &String| -> Result<String> {
            if !device_names.contains(&name.as_str()) {
                bail!("{}: no swap device named \"{name}\"", field("device"));
            }
            Ok(name.clone())
        };
        let op = match &self.op {
            TimelineOp::Swapoff { device: name } => CheckedOp::Swapoff(device(name)?),
            TimelineOp::Swapon { device: name } => CheckedOp::Swapon(device(name)?),
            &TimelineOp::SetPageCluster { page_cluster } => {
                if page_cluster > 31 {
                    bail!("{}: {page_cluster} is outside 0..=31", field("page_cluster"));
                }
                CheckedOp::SetPageCluster(page_cluster)
            }
            TimelineOp::SetReadahead { readahead } => CheckedOp::SetReadahead(readahead.clone()),
            &TimelineOp::SetVmaRa { vma_ra_enabled } => CheckedOp::SetVmaRa(vma_ra_enabled),
            TimelineOp::SetMemcgLimit { limit } => CheckedOp::SetMemcgLimit(match limit.as_str() {
                "max" => None,
                size => Some(ByteSize::parse(size).map_err(|e| anyhow!("{}: {e}", field("limit")))?.pages()),
            }),
            TimelineOp::PauseTasks {} => CheckedOp::PauseTasks,
            TimelineOp::ResumeTasks {} => CheckedOp::ResumeTasks,
            TimelineOp::SwapOutAll {} => CheckedOp::SwapOutAll,
            TimelineOp::Hibernate { image_size, compress, device: name } => {
                let image_size = match image_size {
                    None => None,
                    Some(size) => Some(
                        ByteSize::parse(size).map_err(|e| anyhow!("{}: {e}", field("image_size")))?.pages(),
                    ),
                };
                let device = name.as_ref().map(device).transpose()?;
                CheckedOp::Hibernate(HibernateOp { image_size, compress: compress.unwrap_or(true), device })
            }
            TimelineOp::Resume { boot } => CheckedOp::Resume(match boot {
                None => DEFAULT_BOOT,
                Some(text) => duration(text).map_err(|e| anyhow!("{}: {e}", field("boot")))?,
            }),
            TimelineOp::MmReclaimRun { pages, timeout } => CheckedOp::MmReclaimRun(
                page_count(*pages).map_err(|e| anyhow!("{}: {e}", field("pages")))?,
                timeout
                    .as_ref()
                    .map(|text| duration(text).map_err(|e| anyhow!("{}: {e}", field("timeout"))))
                    .transpose()?,
            ),
            TimelineOp::MmReclaimRelease { pages } => CheckedOp::MmReclaimRelease(
                page_count(*pages).map_err(|e| anyhow!("{}: {e}", field("pages")))?,
            ),
            TimelineOp::Mark { label } => CheckedOp::Mark(label.clone()),
        };
        Ok(CheckedEntry { trigger, op })
    }
}

/// The timeline as core operations, with readahead policies built for the settings in
/// force when each operation runs, starting from `policy` and `ctx`.
pub(crate) fn operations(
    entries: &[CheckedEntry],
    policy: &ReadaheadChoice,
    registry: &Registry,
    mut ctx: PolicyContext<'_>,
) -> anyhow::Result<Vec<swapsim_core::TimelineOp>> {
    let mut policy = policy.clone();
    entries
        .iter()
        .map(|entry| {
            let op = match &entry.op {
                CheckedOp::Swapoff(device) => Operation::Swapoff { device: device.clone() },
                CheckedOp::Swapon(device) => Operation::Swapon { device: device.clone() },
                &CheckedOp::SetPageCluster(page_cluster) => Operation::SetPageCluster(page_cluster),
                CheckedOp::SetReadahead(readahead) => {
                    policy = readahead.clone();
                    Operation::SetReadahead(registry.readahead(&policy, &ctx)?)
                }
                &CheckedOp::SetVmaRa(enabled) => {
                    // The knob matters through the kernel's choice of policy.
                    ctx.readahead.vma_ra_enabled = enabled;
                    Operation::SetReadahead(registry.readahead(&policy, &ctx)?)
                }
                &CheckedOp::SetMemcgLimit(pages) => Operation::SetMemcgLimit(pages),
                CheckedOp::PauseTasks => Operation::PauseTasks,
                CheckedOp::ResumeTasks => Operation::ResumeTasks,
                CheckedOp::SwapOutAll => Operation::SwapOutAll,
                CheckedOp::Hibernate(op) => Operation::Hibernate(op.clone()),
                &CheckedOp::Resume(boot) => Operation::Resume { boot },
                &CheckedOp::MmReclaimRun(pages, timeout) => Operation::MmReclaimRun { pages, timeout },
                &CheckedOp::MmReclaimRelease(pages) => Operation::MmReclaimRelease { pages },
                CheckedOp::Mark(label) => Operation::Mark(label.clone()),
            };
            Ok(swapsim_core::TimelineOp { trigger: entry.trigger, op })
        })
        .collect()
}

/// How long a resumed machine takes from power-on to reading its image when the scenario
/// does not say: firmware, boot loader and the boot kernel's start on a small VM.
pub(crate) const DEFAULT_BOOT: SimDuration = SimDuration(3_000_000_000);

/// A duration such as "3s" or "500ms".
pub(crate) fn duration(text: &str) -> Result<SimDuration, String> {
    parse_time(text).map(|t| SimDuration(t.0)).map_err(|err| {
        if err.ends_with("out of range") {
            err
        } else {
            format!("\"{text}\" is not a duration (expected e.g. \"3s\", \"500ms\")")
        }
    })
}

/// A page count written to an mm_reclaim file: 0 or more.
fn page_count(pages: i64) -> Result<u64, String> {
    u64::try_from(pages).map_err(|_| format!("{pages} is negative; give a number of pages, 0 for all"))
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
